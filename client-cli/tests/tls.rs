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

/// A server with TLS on port 0, its certificate for `localhost` from a test CA.
struct TlsServer {
    rt: tokio::runtime::Runtime,
    server: Option<Server>,
    url: String,
    ca: PathBuf,
    _dir: tempfile::TempDir,
}

impl TlsServer {
    fn start() -> TlsServer {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let dir = tempfile::tempdir().expect("temp dir");
        let ca = TestCa::new("grundy CLI test CA");
        let files = ca.write_server(dir.path(), "server");
        let certificates = CertificateFiles::open(&files.cert, &files.key).expect("certificate");
        let store = SqliteStore::open(&dir.path().join("grundy.db")).expect("store");
        let server = rt.block_on(async {
            let tcp = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let listener = Listener::with_tls(tcp, Tls::new(certificates.current()));
            Server::start_on(listener, Arc::new(store), Config::default())
                .await
                .expect("server starts")
        });
        TlsServer {
            url: format!("wss://localhost:{}", server.local_addr().port()),
            server: Some(server),
            rt,
            ca: ca.write(dir.path(), "ca.pem"),
            _dir: dir,
        }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            self.rt.block_on(s.shutdown());
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
    let _host = server.rt.block_on(async {
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
