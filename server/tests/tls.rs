//! The server's own TLS as a person runs it (`--tls-cert`, `--tls-key`,
//! `--http-redirect-port`), with a CA made for the test: a match goes on
//! through a certificate reload, a bad certificate stops the server at start
//! with its file named, and every client that is wrong about TLS is told what.

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use grundy_client::connect;
use grundy_client::tls::Trust;
use grundy_testkit::client::{two_players_trusting, PATIENCE};
use grundy_testkit::tls::{write_pair, TestCa};
use serde_json::json;
use support::Process;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// The server's address by name (its certificates are for `localhost`).
fn by_name(url: &str) -> String {
    url.replace("127.0.0.1", "localhost")
}

fn trusting(ca: &TestCa, dir: &Path, name: &str) -> Trust {
    Trust::with_ca_file(&ca.write(dir, name)).expect("the CA file")
}

async fn start_tls(dir: &Path, cert: &Path, key: &Path, more: &[&str]) -> Process {
    let mut args = vec![
        "--tls-cert",
        cert.to_str().expect("path"),
        "--tls-key",
        key.to_str().expect("path"),
    ];
    args.extend_from_slice(more);
    Process::start_with(dir.join("g.db"), &args).await
}

#[tokio::test]
async fn a_match_goes_on_through_a_certificate_reload() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (TestCa::new("first CA"), TestCa::new("second CA"));
    let files = first.write_server(dir.path(), "server");
    let both = dir.path().join("both.pem");
    std::fs::write(&both, first.pem() + &second.pem()).unwrap();
    let trust_both = Trust::with_ca_file(&both).unwrap();
    let trust_first = trusting(&first, dir.path(), "first.pem");
    let trust_second = trusting(&second, dir.path(), "second.pem");
    let server = start_tls(dir.path(), &files.cert, &files.key, &[]).await;
    assert!(server.url.starts_with("wss://"), "{}", server.url);
    let url = by_name(&server.url);

    let (room, _, t0, t1, mut a, mut b) = two_players_trusting(
        &url,
        json!({"game": "nim", "heaps": [3, 4, 5]}),
        None,
        &trust_both,
    )
    .await;
    let ack = a
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");

    // A certificate from the second CA, and SIGHUP, as a renewal would.
    let (cert, key) = second.issue(&["localhost"], -1..30);
    write_pair(dir.path(), "server", &cert, &key);
    server.signal("HUP").await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while connect::open(&url, None, &trust_second).await.is_err() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "new connections still get the old certificate"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let old = connect::open(&url, None, &trust_first)
        .await
        .expect_err("the old CA's trust meets the new certificate");
    assert!(old.message.contains("not trusted"), "{old}");

    // The match goes on on the connections made before the reload.
    let moves = [
        (1, json!({"heap": 1, "take": 4})),
        (0, json!({"heap": 2, "take": 5})),
        (1, json!({"heap": 0, "take": 2})),
    ];
    for (seat, mv) in moves {
        let (mover, token) = if seat == 0 {
            (&mut a, &t0)
        } else {
            (&mut b, &t1)
        };
        let ack = mover
            .request(json!({"type": "move", "room": room, "token": token, "move": mv}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
    }
    let ended = a.until("ended").await;
    assert_eq!(ended["result"], json!({"winner": 1, "reason": "rules"}));
    assert_eq!(server.logged("TLS certificate reloaded"), 1);
}

/// Runs the server with `args` and waits for it to stop by itself; its
/// exit success and standard error.
async fn refused_start(dir: &Path, args: &[&str]) -> (bool, String) {
    let db = dir.join("g.db");
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_grundy-server"))
        .args(["--listen", "127.0.0.1:0", "--db"])
        .arg(&db)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the server starts");
    let out = timeout(PATIENCE, child.wait_with_output())
        .await
        .expect("the server stops by itself")
        .expect("its output");
    assert!(!db.exists(), "a database was made before the refusal");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_bad_certificate_stops_the_server_at_start_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("start CA");
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();

    let (cert, key) = ca.issue(&["localhost"], -30..-1);
    write_pair(dir.path(), "expired", &cert, &key);
    let (ok, err) = refused_start(
        dir.path(),
        &[
            "--tls-cert",
            &path("expired.pem"),
            "--tls-key",
            &path("expired-key.pem"),
        ],
    )
    .await;
    assert!(!ok);
    assert!(
        err.contains("expired.pem") && err.contains("expired on"),
        "{err}"
    );

    let good = ca.write_server(dir.path(), "good");
    let (_, other_key) = ca.issue(&["localhost"], -1..30);
    std::fs::write(dir.path().join("other-key.pem"), other_key).unwrap();
    let (ok, err) = refused_start(
        dir.path(),
        &[
            "--tls-cert",
            good.cert.to_str().unwrap(),
            "--tls-key",
            &path("other-key.pem"),
        ],
    )
    .await;
    assert!(!ok);
    assert!(
        err.contains("does not match the key") && err.contains("other-key.pem"),
        "{err}"
    );

    let (ok, err) = refused_start(
        dir.path(),
        &[
            "--tls-cert",
            &path("missing.pem"),
            "--tls-key",
            good.key.to_str().unwrap(),
        ],
    )
    .await;
    assert!(!ok);
    assert!(err.contains("missing.pem"), "{err}");
}

/// A port free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// `request` sent over `stream` as it is, and everything answered until the
/// server closes (within PATIENCE).
async fn exchange(
    mut stream: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    request: &str,
) -> String {
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    let _ = timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("the answer within PATIENCE");
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn clients_wrong_about_tls_are_told_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("names CA");
    let trust = trusting(&ca, dir.path(), "ca.pem");
    // For `localhost` alone: 127.0.0.1 is another name.
    let (cert, key) = ca.issue(&["localhost"], -1..30);
    let files = write_pair(dir.path(), "server", &cert, &key);
    let redirect_port = free_port().to_string();
    let server = start_tls(
        dir.path(),
        &files.cert,
        &files.key,
        &["--http-redirect-port", &redirect_port],
    )
    .await;
    let url = by_name(&server.url);
    let port = url.rsplit(':').next().unwrap().to_string();

    connect::open(&url, None, &trust)
        .await
        .expect("the CA's trust gets through");
    let untrusted = connect::open(&url, None, &Trust::public())
        .await
        .expect_err("no trust in the test CA");
    assert!(untrusted.message.contains("not trusted"), "{untrusted}");
    assert!(untrusted.message.contains("--ca-cert"), "{untrusted}");
    assert!(!untrusted.retry_may_help);
    let by_ip = connect::open(&server.url, None, &trust)
        .await
        .expect_err("127.0.0.1 is not a name of the certificate");
    assert!(by_ip.message.contains("another name"), "{by_ip}");
    assert!(by_ip.message.contains("localhost"), "{by_ip}");

    // Plain to the TLS port.
    let plain = connect::open(&format!("ws://localhost:{port}"), None, &trust)
        .await
        .expect_err("ws:// to the TLS port");
    assert!(plain.message.contains("400"), "{plain}");
    assert!(plain.message.contains("speaks TLS"), "{plain}");
    assert!(!plain.retry_may_help);

    // TLS to a plain port: the redirect port.
    let tls_to_plain = connect::open(&format!("wss://localhost:{redirect_port}"), None, &trust)
        .await
        .expect_err("wss:// to a plain port");
    assert!(
        tls_to_plain.message.contains("does not speak TLS"),
        "{tls_to_plain}"
    );

    // HTTP over TLS carries HSTS.
    let tcp = TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .unwrap();
    let tls = tokio_rustls::TlsConnector::from(trust.config())
        .connect("localhost".try_into().unwrap(), tcp)
        .await
        .expect("TLS");
    let answer = exchange(
        tls,
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("strict-transport-security: max-age=31536000"),
        "{answer}"
    );

    // The redirect port sends browsers to https:// on the TLS port.
    let tcp = TcpStream::connect(format!("127.0.0.1:{redirect_port}"))
        .await
        .unwrap();
    let answer = exchange(
        tcp,
        "GET /api/rooms?x=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 308"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains(&format!("location: https://localhost:{port}/api/rooms?x=1")),
        "{answer}"
    );
}
