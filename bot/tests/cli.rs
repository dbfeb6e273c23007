//! `grundy-bot` as a person runs it: a failure is one line on standard
//! error and exit status 1, whatever `RUST_BACKTRACE` says; a match over
//! `wss://` on a server with a private CA.

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

/// A server on port 0 on a runtime of its own (serving TLS itself with the
/// certificate files if given), the runtime and its port.
fn serve(
    config: grundy_server::Config,
    dir: &std::path::Path,
    certificate: Option<&grundy_testkit::tls::ServerFiles>,
) -> (tokio::runtime::Runtime, grundy_server::Server) {
    use grundy_server::net::tls::{CertificateFiles, Tls};
    use grundy_server::server::Listener;
    use std::sync::Arc;

    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let tls = certificate.map(|files| {
        let certificates = CertificateFiles::open(&files.cert, &files.key).expect("certificate");
        Tls::new(certificates.current())
    });
    let store = grundy_server::store::SqliteStore::open(&dir.join("g.db")).expect("store");
    let server = rt.block_on(async {
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let listener = match tls {
            Some(tls) => Listener::with_tls(tcp, tls),
            None => Listener::from(tcp),
        };
        grundy_server::Server::start_on(listener, Arc::new(store), config)
            .await
            .expect("server starts")
    });
    (rt, server)
}

/// `grundy-bot match` of two Nim games at `url`, trusting `ca` if given.
fn play_match(url: &str, ca: Option<&std::path::Path>) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_grundy-bot"));
    command.args(["--server", url]);
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
}

#[test]
fn a_match_is_played_over_wss_given_the_private_ca() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = grundy_testkit::tls::TestCa::new("grundy-bot test CA");
    let files = ca.write_server(dir.path(), "server");
    let ca_file = ca.write(dir.path(), "ca.pem");
    let (rt, server) = serve(Default::default(), dir.path(), Some(&files));
    let url = format!("wss://localhost:{}", server.local_addr().port());
    let out = play_match(&url, Some(&ca_file));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(text.matches("winner seat").count(), 2, "{text}");

    let out = play_match(&url, None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(err.contains("not trusted"), "{err}");
    rt.block_on(server.shutdown());
}

/// As a deployment runs it: nginx terminates TLS in front of a plain server
/// (docs/deploy.md, "Behind a proxy"), and a match is played through it.
#[test]
fn a_match_is_played_through_nginx_over_wss() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = grundy_server::Config {
        trusted_proxies: vec!["127.0.0.1/32".parse().expect("range")],
        ..Default::default()
    };
    let (rt, server) = serve(config, dir.path(), None);
    let Some(nginx) = grundy_testkit::nginx::TestNginx::start_or_skip(server.local_addr()) else {
        return;
    };
    let out = play_match(&nginx.url(), Some(nginx.ca_file()));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{out:?}\nnginx logged: {}",
        nginx.error_log()
    );
    assert_eq!(text.matches("winner seat").count(), 2, "{text}");
    rt.block_on(server.shutdown());
}
