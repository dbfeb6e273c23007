//! Certificates over ACME as a person runs them (`--acme-domain`,
//! docs/deploy.md): the server orders a certificate for its test name from
//! a real pebble (testkit/src/pebble.rs, its validation real: TLS-ALPN-01
//! on the server's own port), serves it, and serves it again from its
//! cache after a restart; a directory that cannot be reached is logged and
//! tried again, and the server lives on. The pebble test is skipped, with
//! the reason, where pebble is not installed.

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use grundy_client::connect;
use grundy_client::tls::Trust;
use grundy_testkit::client::{Client, PATIENCE};
use grundy_testkit::pebble::TestPebble;
use serde_json::json;
use support::Process;
use tokio::net::TcpStream;
use tokio::time::timeout;
use x509_cert::der::Decode;

/// The name the certificate is ordered for: pebble's DNS server answers
/// every name with 127.0.0.1, and the clients here connect there.
const NAME: &str = "grundy.test";

/// How long an order may take: account, order, validation, issue (pebble
/// answers each in milliseconds; the server's first try may find pebble
/// still starting and wait its backoff).
const ISSUE_WITHIN: Duration = Duration::from_secs(60);

/// A port free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A `wss://` WebSocket to `NAME` at `port` of 127.0.0.1, trusting `trust`.
async fn open(port: u16, trust: &Trust) -> Result<connect::WebSocket, connect::OpenError> {
    let tcp = timeout(PATIENCE, TcpStream::connect(("127.0.0.1", port)))
        .await
        .expect("TCP connect in time")
        .expect("TCP connect");
    connect::handshake(&format!("wss://{NAME}:{port}"), tcp, None, trust).await
}

/// The certificate the server at `port` presents to `NAME`, DER, verified
/// against `trust`.
async fn served_certificate(port: u16, trust: &Trust) -> Vec<u8> {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.expect("TCP");
    let tls = timeout(
        PATIENCE,
        tokio_rustls::TlsConnector::from(trust.config()).connect(NAME.try_into().unwrap(), tcp),
    )
    .await
    .expect("TLS in time")
    .expect("TLS verified against pebble's root");
    let chain = tls.get_ref().1.peer_certificates().expect("a chain");
    chain[0].to_vec()
}

async fn start(dir: &Path, port: u16, pebble: &TestPebble) -> Process {
    let cache = dir.join("acme");
    let args = [
        "--acme-domain",
        NAME,
        "--acme-contact",
        "mailto:ops@grundy.test",
        "--acme-directory",
        &pebble.directory(),
        "--acme-directory-ca",
        pebble.directory_ca().to_str().expect("path"),
        "--acme-cache",
        cache.to_str().expect("path"),
    ];
    let listen = format!("127.0.0.1:{port}");
    Process::start_listening(&listen, dir.join("g.db"), &args, "info").await
}

#[tokio::test]
async fn a_certificate_from_pebble_is_served_and_served_again_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let Some(pebble) = TestPebble::start_or_skip(port) else {
        return;
    };
    let mut server = start(dir.path(), port, &pebble).await;
    assert!(server.url.starts_with("wss://"), "{}", server.url);
    let root = dir.path().join("pebble-root.pem");
    std::fs::write(&root, pebble.issuing_root().expect("pebble's root")).unwrap();
    let trust = Trust::with_ca_file(&root).expect("pebble's root as a CA file");

    // Until the certificate is there, handshakes fail; then a client that
    // trusts pebble's root says hello over wss://.
    let deadline = tokio::time::Instant::now() + ISSUE_WITHIN;
    let ws = loop {
        match open(port, &trust).await {
            Ok(ws) => break ws,
            Err(e) => assert!(
                tokio::time::Instant::now() < deadline,
                "no certificate within {ISSUE_WITHIN:?} (last: {e}); {}",
                pebble.log()
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut client = Client::over(ws);
    let welcome = client
        .request(json!({"type": "hello", "version": 1, "name": "acme"}))
        .await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");

    // Issued by pebble, for the name (the handshake checked name and chain).
    let leaf = served_certificate(port, &trust).await;
    let cert = x509_cert::Certificate::from_der(&leaf).expect("X.509");
    let issuer = cert.tbs_certificate.issuer.to_string();
    assert!(issuer.contains("Pebble"), "issuer {issuer}");
    assert_eq!(server.logged("ACME: obtained a new certificate"), 1);
    assert!(server.logged("ACME: answered a TLS-ALPN-01 validation") >= 1);
    drop(client);

    // A restart serves the cached certificate, ordering nothing.
    assert!(server.terminate().await.success());
    let again = start(dir.path(), port, &pebble).await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while again.logged("ACME: serving the certificate from the cache") == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cached certificate not served within {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(served_certificate(port, &trust).await, leaf);
    assert_eq!(again.logged("ACME: obtained a new certificate"), 0);
}

#[tokio::test]
async fn an_unreachable_directory_is_logged_and_tried_again_and_the_server_lives_on() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens there.
    let directory = format!("https://127.0.0.1:{}/dir", free_port());
    let cache = dir.path().join("acme");
    let mut server = Process::start_with(
        dir.path().join("g.db"),
        &[
            "--acme-domain",
            NAME,
            "--acme-directory",
            &directory,
            "--acme-cache",
            cache.to_str().unwrap(),
        ],
    )
    .await;
    // The first try at once, the second after 1 s, the third after 2 s more.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while server.logged("ACME failed") < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "fewer than two tries logged within {PATIENCE:?}: {}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = server.log();
    assert!(log.contains("trying again after a backoff"), "{log}");
    assert!(log.contains("refused"), "the reason: {log}");
    assert!(server.child.try_wait().expect("wait").is_none(), "{log}");
    assert!(server.terminate().await.success());
}

/// Runs the server with `args`, which it must refuse; its standard error.
async fn refused(args: &[&str]) -> String {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_grundy-server"))
        .args(["--listen", "127.0.0.1:0", "--db", "/nonexistent/g.db"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the server starts");
    let out = timeout(PATIENCE, child.wait_with_output())
        .await
        .expect("the server stops by itself")
        .expect("its output");
    assert!(!out.status.success(), "{args:?} accepted");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn bad_acme_flags_are_refused_saying_what_is_wrong() {
    let err = refused(&[
        "--acme-domain",
        NAME,
        "--tls-cert",
        "c.pem",
        "--tls-key",
        "k.pem",
    ])
    .await;
    assert!(
        err.contains("tls_cert") && err.contains("not both"),
        "{err}"
    );
    let err = refused(&["--acme-domain", NAME, "--acme-contact", "ops@grundy.test"]).await;
    assert!(err.contains("mailto:"), "{err}");
    let err = refused(&["--acme-domain", "127.0.0.1"]).await;
    assert!(err.contains("is an address"), "{err}");
    let err = refused(&["--acme-contact", "mailto:ops@grundy.test"]).await;
    assert!(err.contains("set `acme_domain` too"), "{err}");
    let err = refused(&[
        "--acme-domain",
        NAME,
        "--acme-directory-ca",
        "/nonexistent/ca.pem",
    ])
    .await;
    assert!(err.contains("/nonexistent/ca.pem"), "{err}");
}
