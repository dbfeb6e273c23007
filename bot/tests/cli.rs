//! `grundy-bot` as a person runs it: a failure is one line on standard
//! error and exit status 1, whatever `RUST_BACKTRACE` says; a match over
//! `wss://` on a server with a private CA, and through nginx in front of a
//! plain server (docs/deploy.md's recipe; skipped, with the reason, where
//! nginx is not installed).

use std::process::Command;

#[test]
fn a_failure_is_one_error_line_and_status_1() {
    // A port nothing listens on: taken, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let out = Command::new(env!("CARGO_BIN_EXE_grundy-bot"))
        .args(["--server", &format!("127.0.0.1:{port}"), "house"])
        .env("RUST_BACKTRACE", "1")
        .env_remove("RUST_LOG")
        .output()
        .expect("grundy-bot runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: cannot connect to ws://127.0.0.1:"),
        "{err}"
    );
}

#[test]
fn a_match_is_played_over_wss_given_the_private_ca() {
    use grundy_server::net::tls::{CertificateFiles, Tls};
    use grundy_server::server::Listener;
    use std::sync::Arc;

    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = grundy_testkit::tls::TestCa::new("grundy-bot test CA");
    let files = ca.write_server(dir.path(), "server");
    let ca_file = ca.write(dir.path(), "ca.pem");
    let certificates = CertificateFiles::open(&files.cert, &files.key).expect("certificate");
    let store = grundy_server::store::SqliteStore::open(&dir.path().join("g.db")).expect("store");
    let server = rt.block_on(async {
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let listener = Listener::with_tls(tcp, Tls::new(certificates.current()));
        grundy_server::Server::start_on(listener, Arc::new(store), Default::default())
            .await
            .expect("server starts")
    });
    let url = format!("wss://localhost:{}", server.local_addr().port());
    let play = |ca: Option<&std::path::Path>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_grundy-bot"));
        command.args(["--server", &url]);
        if let Some(ca) = ca {
            command.arg("--ca-cert").arg(ca);
        }
        command
            .args(["match", "--spec", "nim 3 4 5", "--games", "2"])
            .args(["--levels", "perfect,random"])
            .env_remove("GRUNDY_CA_CERT")
            .env_remove("RUST_LOG")
            .output()
            .expect("grundy-bot runs")
    };
    let out = play(Some(&ca_file));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(text.matches("winner seat").count(), 2, "{text}");

    let out = play(None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(err.contains("not trusted"), "{err}");
    rt.block_on(server.shutdown());
}

#[test]
fn a_match_is_played_over_wss_through_nginx() {
    use std::sync::Arc;

    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let store = grundy_server::store::SqliteStore::open(&dir.path().join("g.db")).expect("store");
    // Plain on loopback, believing nginx (from 127.0.0.1), as deployed.
    let config = grundy_server::Config {
        trusted_proxies: vec!["127.0.0.1/32".parse().expect("range")],
        ..Default::default()
    };
    let server = rt.block_on(async {
        grundy_server::Server::start("127.0.0.1:0".parse().unwrap(), Arc::new(store), config)
            .await
            .expect("server starts")
    });
    let Some(nginx) = grundy_testkit::nginx::TestNginx::start_or_skip(server.local_addr()) else {
        rt.block_on(server.shutdown());
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_grundy-bot"))
        .args(["--server", &nginx.url()])
        .arg("--ca-cert")
        .arg(nginx.ca_file())
        .args(["match", "--spec", "nim 3 4 5", "--games", "2"])
        .args(["--levels", "perfect,random"])
        .env_remove("GRUNDY_CA_CERT")
        .env_remove("RUST_LOG")
        .output()
        .expect("grundy-bot runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}\n{}", nginx.error_log());
    assert_eq!(text.matches("winner seat").count(), 2, "{text}");
    rt.block_on(server.shutdown());
}
