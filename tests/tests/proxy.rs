//! Behind a proxy: a real nginx or Caddy (testkit/src/nginx.rs,
//! testkit/src/caddy.rs, the recipes of docs/deploy.md) terminates TLS and
//! proxies to a server that trusts it (`--trusted-proxy 127.0.0.1/32`, the
//! proxy's own address towards the server). Clients bind sources of
//! 127.0.0.0/8 other than 127.0.0.1 to be different addresses (Linux routes
//! the whole block over loopback): the proxy puts each one's address in
//! `X-Forwarded-For`, and the server counts each by it. Skipped, with the
//! reason, where the proxy is not installed.

use std::net::{IpAddr, SocketAddr};

use grundy_client::tls::Trust;
use grundy_server::Config;
use grundy_testkit::caddy::TestCaddy;
use grundy_testkit::nginx::TestNginx;
use grundy_tests::{http_with, Client, TestServer, PATIENCE};
use serde_json::{json, Value};
use tokio::net::TcpSocket;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::Connector;

/// A server that believes 127.0.0.1 (where the proxy connects from) and lets
/// `per_ip` connections in per client address.
fn behind_proxy(per_ip: usize) -> Config {
    let mut config = Config {
        trusted_proxies: vec!["127.0.0.1/32".parse().expect("range")],
        ..Config::default()
    };
    config.limits.connections_per_ip = per_ip;
    config
}

/// A WebSocket to `url` (at `to`) from source address `from`, with an
/// `X-Forwarded-For` of the client's own if given; over TLS trusting
/// `trust` for a `wss://` url.
async fn open_from(
    to: SocketAddr,
    url: &str,
    from: &str,
    forged: Option<&str>,
    trust: &Trust,
) -> Client {
    let from: IpAddr = from.parse().expect("source address");
    let socket = TcpSocket::new_v4().expect("socket");
    socket.bind(SocketAddr::new(from, 0)).expect("bind");
    let tcp = timeout(PATIENCE, socket.connect(to))
        .await
        .expect("TCP connect in time")
        .expect("TCP connect");
    let mut request = url.into_client_request().expect("request");
    if let Some(forged) = forged {
        request
            .headers_mut()
            .insert("x-forwarded-for", forged.parse().expect("header"));
    }
    let connector = Connector::Rustls(trust.config());
    let (ws, _) = timeout(
        PATIENCE,
        tokio_tungstenite::client_async_tls_with_config(request, tcp, None, Some(connector)),
    )
    .await
    .expect("handshake in time")
    .expect("handshake");
    Client::over(ws)
}

/// Says hello: Ok if welcomed, else the close frame's code and reason.
async fn hello(mut c: Client) -> Result<Client, (u16, String)> {
    c.send(json!({"type": "hello", "id": 1, "version": 1, "name": "proxied"}))
        .await;
    match c.frame().await {
        Some(Message::Text(t)) => {
            let m: Value = serde_json::from_str(&t).expect("JSON");
            assert_eq!(m["type"], "welcome", "{m}");
            Ok(c)
        }
        Some(Message::Close(Some(f))) => Err((u16::from(f.code), f.reason.to_string())),
        other => panic!("neither a welcome nor a close frame: {other:?}"),
    }
}

fn trusting(nginx: &TestNginx) -> Trust {
    Trust::with_ca_file(nginx.ca_file()).expect("the test CA")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_is_played_over_wss_through_nginx() {
    let server = TestServer::start_with(behind_proxy(256)).await;
    let Some(nginx) = TestNginx::start_or_skip(server.addr) else {
        return;
    };
    let trust = trusting(&nginx);
    let (room, _, t0, t1, mut alice, mut bob) = grundy_testkit::client::two_players_trusting(
        &nginx.url(),
        json!({"game": "nim", "heaps": [1, 1]}),
        None,
        &trust,
    )
    .await;
    let ack = alice
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}\n{}", nginx.error_log());
    assert_eq!(bob.event().await["kind"], "moved");
    let ack = bob
        .request(json!({"type": "move", "room": room, "token": t1, "move": {"heap": 1, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let ended = alice.until("ended").await;
    assert_eq!(ended["kind"], "ended", "{ended}");
}

/// GET `path` over https from `nginx`, as a browser would: the status line
/// and the headers, lower-cased.
async fn https_head(nginx: &TestNginx, path: &str) -> String {
    let config = trusting(nginx).config();
    let (addr, path) = (nginx.addr(), path.to_string());
    let read = tokio::task::spawn_blocking(move || -> std::io::Result<String> {
        use std::io::{Read, Write};
        let tcp = std::net::TcpStream::connect(addr)?;
        tcp.set_read_timeout(Some(PATIENCE))?;
        let name = "localhost".try_into().expect("a server name");
        let tls = rustls::ClientConnection::new(config, name).map_err(std::io::Error::other)?;
        let mut stream = rustls::StreamOwned::new(tls, tcp);
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        )?;
        let mut answer = Vec::new();
        // nginx may close without TLS's close_notify after the body.
        let _ = stream.read_to_end(&mut answer);
        let text = String::from_utf8_lossy(&answer).to_string();
        Ok(text
            .split("\r\n\r\n")
            .next()
            .unwrap_or("")
            .to_ascii_lowercase())
    });
    timeout(PATIENCE, read)
        .await
        .expect("an answer in time")
        .expect("the request's task")
        .expect("an https answer")
}

/// The recipe's extras: HSTS on every answer, and /metrics kept from the
/// internet (the server itself still serves it to whoever reaches it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_keeps_browsers_on_https_and_the_metrics_private() {
    let server = TestServer::start_with(behind_proxy(256)).await;
    let Some(nginx) = TestNginx::start_or_skip(server.addr) else {
        return;
    };
    let page = https_head(&nginx, "/").await;
    assert!(page.starts_with("http/1.1 200"), "{page}");
    assert!(
        page.contains("strict-transport-security: max-age=31536000"),
        "{page}"
    );
    let metrics = https_head(&nginx, "/metrics").await;
    assert!(metrics.starts_with("http/1.1 404"), "{metrics}");
    assert!(metrics.contains("strict-transport-security"), "{metrics}");
    let direct = grundy_tests::http(server.addr, "GET", "/metrics").await;
    assert_eq!(direct.status, 200, "{direct:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_behind_nginx_are_counted_by_their_own_addresses() {
    let server = TestServer::start_with(behind_proxy(1)).await;
    let Some(nginx) = TestNginx::start_or_skip(server.addr) else {
        return;
    };
    let trust = trusting(&nginx);
    let (to, url) = (nginx.addr(), nginx.url());
    // Two clients, both reaching the server from nginx's 127.0.0.1: each
    // gets its own share.
    let _a = hello(open_from(to, &url, "127.0.0.2", None, &trust).await)
        .await
        .unwrap_or_else(|e| panic!("127.0.0.2 refused: {e:?}\n{}", nginx.error_log()));
    let _b = hello(open_from(to, &url, "127.0.0.3", None, &trust).await)
        .await
        .unwrap_or_else(|e| panic!("127.0.0.3 refused: {e:?}"));
    // A second from 127.0.0.2 is past its share, whatever it says it is:
    // nginx appends its real address, the right-most untrusted one.
    for forged in [None, Some("198.51.100.9"), Some("127.0.0.9, 198.51.100.9")] {
        let refused = hello(open_from(to, &url, "127.0.0.2", forged, &trust).await).await;
        let (code, reason) = refused.err().expect("a second connection from 127.0.0.2");
        assert_eq!(code, 1008, "{reason}");
        assert!(reason.contains("connections_per_ip"), "{reason}");
    }
    // What a client wrote left of its address is not looked into.
    let _c = hello(open_from(to, &url, "127.0.0.4", Some("not an address"), &trust).await)
        .await
        .unwrap_or_else(|e| panic!("127.0.0.4 refused: {e:?}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_outside_the_trusted_range_is_counted_by_its_socket_address() {
    let server = TestServer::start_with(behind_proxy(1)).await;
    let url = server.url();
    let public = Trust::public();
    // Straight to the server from 127.0.0.5, not a trusted proxy: its
    // X-Forwarded-For is not believed, so each forged address is itself.
    let _a = hello(
        open_from(
            server.addr,
            &url,
            "127.0.0.5",
            Some("198.51.100.1"),
            &public,
        )
        .await,
    )
    .await
    .expect("the first from 127.0.0.5");
    let refused = hello(
        open_from(
            server.addr,
            &url,
            "127.0.0.5",
            Some("198.51.100.2"),
            &public,
        )
        .await,
    )
    .await;
    let (code, reason) = refused.err().expect("a second from 127.0.0.5");
    assert_eq!(code, 1008, "{reason}");
    // Nor is a malformed one even read.
    let refused =
        hello(open_from(server.addr, &url, "127.0.0.5", Some("nonsense"), &public).await).await;
    assert_eq!(refused.err().expect("a third").0, 1008);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_proxys_malformed_header_is_refused_with_what_is_wrong() {
    let server = TestServer::start_with(behind_proxy(1)).await;
    // From 127.0.0.1, the trusted range: the header is read.
    let answer = http_with(
        server.addr,
        "GET",
        "/healthz",
        &[("X-Forwarded-For", "198.51.100.7, 10.0.0.1:x")],
    )
    .await;
    assert_eq!(answer.status, 400, "{answer:?}");
    assert!(answer.body.contains("bad_forwarded"), "{answer:?}");
    assert!(
        answer.body.contains("X-Forwarded-For") && answer.body.contains("entry 2"),
        "{answer:?}"
    );
    let answer = http_with(
        server.addr,
        "GET",
        "/healthz",
        &[
            ("Forwarded", "for=198.51.100.7"),
            ("X-Forwarded-For", "198.51.100.7"),
        ],
    )
    .await;
    assert_eq!(answer.status, 400, "{answer:?}");
    assert!(answer.body.contains("both"), "{answer:?}");
    // A well-formed one is served.
    let answer = http_with(
        server.addr,
        "GET",
        "/healthz",
        &[("Forwarded", "for=\"[2001:db8::1]:4711\"")],
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_is_played_over_wss_through_caddy() {
    let server = TestServer::start_with(behind_proxy(256)).await;
    let Some(caddy) = TestCaddy::start_or_skip(server.addr) else {
        return;
    };
    let trust = Trust::with_ca_file(&caddy.ca_file()).expect("Caddy's root");
    let (room, _, t0, t1, mut alice, mut bob) = grundy_testkit::client::two_players_trusting(
        &caddy.url(),
        json!({"game": "nim", "heaps": [1, 1]}),
        None,
        &trust,
    )
    .await;
    let ack = alice
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}\n{}", caddy.log());
    assert_eq!(bob.event().await["kind"], "moved");
    let ack = bob
        .request(json!({"type": "move", "room": room, "token": t1, "move": {"heap": 1, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let ended = alice.until("ended").await;
    assert_eq!(ended["kind"], "ended", "{ended}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_behind_caddy_are_counted_by_their_own_addresses() {
    let server = TestServer::start_with(behind_proxy(1)).await;
    let Some(caddy) = TestCaddy::start_or_skip(server.addr) else {
        return;
    };
    let trust = Trust::with_ca_file(&caddy.ca_file()).expect("Caddy's root");
    let (to, url) = (caddy.addr(), caddy.url());
    let _a = hello(open_from(to, &url, "127.0.0.2", None, &trust).await)
        .await
        .unwrap_or_else(|e| panic!("127.0.0.2 refused: {e:?}\n{}", caddy.log()));
    let _b = hello(open_from(to, &url, "127.0.0.3", None, &trust).await)
        .await
        .unwrap_or_else(|e| panic!("127.0.0.3 refused: {e:?}"));
    // A second from 127.0.0.2 is past its share, whatever it says it is:
    // Caddy writes its real address over what the client sent.
    for forged in [None, Some("198.51.100.9"), Some("127.0.0.9, 198.51.100.9")] {
        let refused = hello(open_from(to, &url, "127.0.0.2", forged, &trust).await).await;
        let (code, reason) = refused.err().expect("a second connection from 127.0.0.2");
        assert_eq!(code, 1008, "{reason}");
        assert!(reason.contains("connections_per_ip"), "{reason}");
    }
}
