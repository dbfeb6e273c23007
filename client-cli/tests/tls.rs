//! `grundy` against a server that serves TLS itself, with a CA made for the
//! test: it plays and lists rooms over `wss://` given the CA (`--ca-cert` or
//! `GRUNDY_CA_CERT`), and without it says the certificate is not trusted.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use common::{grundy, grundy_command, grundy_piped, open_room, shared_config};
use grundy_client::client::{Client, Hello};
use grundy_client::tls::Trust;
use grundy_server::net::tls::{CertificateFiles, Tls};
use grundy_server::server::Listener;
use grundy_server::store::SqliteStore;
use grundy_server::{Config, Server};
use grundy_testkit::tls::TestCa;
use serde_json::json;

/// A server on port 0 (serving TLS itself if given `tls`), on a runtime of
/// its own, shut down when dropped.
struct Served {
    rt: tokio::runtime::Runtime,
    server: Option<Server>,
    dir: tempfile::TempDir,
}

impl Served {
    fn start(config: Config, tls: impl FnOnce(&std::path::Path) -> Option<Arc<Tls>>) -> Served {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let dir = tempfile::tempdir().expect("temp dir");
        let tls = tls(dir.path());
        let store = SqliteStore::open(&dir.path().join("grundy.db")).expect("store");
        let server = rt.block_on(async {
            let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let listener = match tls {
                Some(tls) => Listener::with_tls(tcp, tls),
                None => Listener::from(tcp),
            };
            Server::start_on(listener, Arc::new(store), config)
                .await
                .expect("server starts")
        });
        Served {
            rt,
            server: Some(server),
            dir,
        }
    }

    fn port(&self) -> u16 {
        self.server.as_ref().expect("serving").local_addr().port()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            self.rt.block_on(s.shutdown());
        }
    }
}

/// A server with TLS on port 0, its certificate for `localhost` from a test CA.
struct TlsServer {
    served: Served,
    url: String,
    ca: PathBuf,
}

impl TlsServer {
    fn start() -> TlsServer {
        let ca = TestCa::new("grundy CLI test CA");
        let served = Served::start(Config::default(), |dir| {
            let files = ca.write_server(dir, "server");
            let certificates =
                CertificateFiles::open(&files.cert, &files.key).expect("certificate");
            Some(Tls::new(certificates.current()))
        });
        TlsServer {
            url: format!("wss://localhost:{}", served.port()),
            ca: ca.write(served.dir.path(), "ca.pem"),
            served,
        }
    }
}

#[test]
fn grundy_plays_the_house_bot_and_lists_rooms_over_wss_with_a_private_ca() {
    let server = TlsServer::start();
    let ca = server.ca.to_str().expect("path");
    // The house bot sits down through the server's own plain loopback port.
    let out = grundy_piped(
        &[
            "play",
            "--server",
            &server.url,
            "--ca-cert",
            ca,
            "--game",
            "subtraction --set 1 3",
            "--bot",
            "perfect",
        ],
        "0 1\n0 1\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(text.contains("you won: you made the last move"), "{text}");

    let trust = Trust::with_ca_file(&server.ca).expect("CA");
    let _host = server.served.rt.block_on(async {
        let mut c = Client::connect_trusting(&server.url, &Hello::guest("host"), &trust)
            .await
            .expect("connect over wss");
        open_room(&mut c, json!({"game": "nim", "heaps": [3, 4, 5]})).await;
        c
    });
    let out = grundy_command(shared_config(), &["lobby", "--server", &server.url])
        .env("GRUNDY_CA_CERT", ca)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run grundy");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(text.contains("host") && text.contains("  open "), "{text}");
}

#[test]
fn grundy_says_a_certificate_is_not_trusted_without_its_ca() {
    let server = TlsServer::start();
    let out = grundy(&["lobby", "--server", &server.url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    assert!(err.contains("not trusted"), "{err}");
    assert!(err.contains("--ca-cert"), "{err}");
    assert!(!err.contains("trying again"), "{err}");

    let missing = server.ca.with_file_name("missing.pem");
    let out = grundy(&[
        "lobby",
        "--server",
        &server.url,
        "--ca-cert",
        missing.to_str().expect("path"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    assert!(err.contains("missing.pem"), "{err}");
}

/// As a deployment runs it: nginx terminates TLS in front of a plain server
/// (docs/deploy.md, "Behind a proxy"), and `grundy play` plays through it
/// over `wss://`, trusting the proxy's CA.
#[test]
fn grundy_plays_through_nginx_over_wss() {
    let config = Config {
        trusted_proxies: vec!["127.0.0.1/32".parse().expect("range")],
        ..Config::default()
    };
    let served = Served::start(config, |_| None);
    let upstream = std::net::SocketAddr::from(([127, 0, 0, 1], served.port()));
    let Some(nginx) = grundy_testkit::nginx::TestNginx::start_or_skip(upstream) else {
        return;
    };
    let out = grundy_piped(
        &[
            "play",
            "--server",
            &nginx.url(),
            "--ca-cert",
            nginx.ca_file().to_str().expect("path"),
            "--game",
            "subtraction --set 1 3",
            "--bot",
            "perfect",
        ],
        "0 1\n0 1\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{out:?}\nnginx logged: {}",
        nginx.error_log()
    );
    assert!(text.contains("you won: you made the last move"), "{text}");
}
