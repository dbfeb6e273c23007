//! Connection caps over real sockets: a connection past `connections_per_ip`
//! or `max_connections` completes its handshake and is closed at once with a
//! close code and a reason naming the limit, before any message of its is
//! read; a closed connection gives its place back; the house bots and
//! addresses in `unlimited_from` are exempt from the per-address cap (but
//! not from the total), and nothing else is, loopback included.
//!
//! Clients bind to addresses of 127.0.0.0/8 other than 127.0.0.1 to be
//! different client addresses (Linux routes the whole block over loopback).

use std::net::{IpAddr, SocketAddr};

use futures_util::{SinkExt, StreamExt};
use grundy_server::Config;
use grundy_tests::{Client, TestServer, PATIENCE};
use serde_json::{json, Value};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::{timeout, timeout_at, Instant};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

type Ws = WebSocketStream<TcpStream>;

/// A WebSocket connection to `server` from the local address `from`.
async fn connect_from(server: SocketAddr, from: &str) -> Result<Ws, String> {
    let from: IpAddr = from.parse().expect("source address");
    let socket = TcpSocket::new_v4().expect("socket");
    socket.bind(SocketAddr::new(from, 0)).expect("bind");
    let tcp = timeout(PATIENCE, socket.connect(server))
        .await
        .expect("TCP connect in time")
        .expect("TCP connect");
    match timeout(
        PATIENCE,
        tokio_tungstenite::client_async(format!("ws://{server}/"), tcp),
    )
    .await
    {
        Err(_) => panic!("no handshake within {PATIENCE:?}"),
        Ok(Ok((ws, _))) => Ok(ws),
        Ok(Err(e)) => Err(e.to_string()),
    }
}

/// How the server takes a connection that says hello at once.
#[derive(Debug)]
enum Outcome {
    /// Welcomed: the connection, and the limits the welcome told.
    Welcome(Box<Ws>, Value),
    /// Closed: the code and reason, with nothing before the close frame.
    Closed(u16, String),
}

async fn hello(mut ws: Ws) -> Outcome {
    let hello = json!({"type": "hello", "id": 1, "version": 1, "name": "capped"});
    ws.send(Message::text(hello.to_string()))
        .await
        .expect("send hello");
    let deadline = Instant::now() + PATIENCE;
    loop {
        match timeout_at(deadline, ws.next())
            .await
            .expect("an answer in time")
        {
            Some(Ok(Message::Text(t))) => {
                let m: Value = serde_json::from_str(&t).expect("JSON");
                assert_eq!(m["type"], "welcome", "{m}");
                let limits = m["limits"].clone();
                return Outcome::Welcome(Box::new(ws), limits);
            }
            Some(Ok(Message::Close(Some(f)))) => {
                return Outcome::Closed(u16::from(f.code), f.reason.to_string())
            }
            Some(Ok(Message::Close(None))) => return Outcome::Closed(1005, String::new()),
            Some(Ok(_)) => continue,
            Some(Err(e)) => panic!("read failed before an answer: {e}"),
            None => panic!("closed without a close frame"),
        }
    }
}

/// A connection from `from` that must be welcomed.
async fn welcomed(server: SocketAddr, from: &str) -> (Box<Ws>, Value) {
    let ws = connect_from(server, from).await.expect("handshake");
    match hello(ws).await {
        Outcome::Welcome(ws, limits) => (ws, limits),
        Outcome::Closed(code, reason) => panic!("refused from {from}: {code} {reason}"),
    }
}

/// A connection from `from` that must be refused: its close code and reason.
async fn refused(server: SocketAddr, from: &str) -> (u16, String) {
    let ws = connect_from(server, from).await.expect("handshake");
    match hello(ws).await {
        Outcome::Welcome(_, _) => panic!("welcomed from {from}, expected a refusal"),
        Outcome::Closed(code, reason) => (code, reason),
    }
}

/// Closes `ws` as a client does and waits until the server has closed too.
async fn close(ws: Box<Ws>) {
    let mut ws = *ws;
    ws.close(None).await.expect("close");
    let deadline = Instant::now() + PATIENCE;
    while let Some(Ok(_)) = timeout_at(deadline, ws.next())
        .await
        .expect("the server closes in time")
    {}
}

fn capped(total: usize, per_ip: usize) -> Config {
    let mut config = Config::default();
    config.limits.max_connections = total;
    config.limits.connections_per_ip = per_ip;
    config
}

#[tokio::test]
async fn connections_past_the_per_address_cap_are_closed_with_1008() {
    let config = capped(100, 2);
    // Every test client is on loopback, counted like any address (nothing
    // is unlimited by default).
    let server = TestServer::start_with(config).await;
    let (_a, limits) = welcomed(server.addr, "127.0.0.2").await;
    assert_eq!(limits["connections_per_ip"], 2, "{limits}");
    assert_eq!(limits["max_connections"], 100, "{limits}");
    let _b = welcomed(server.addr, "127.0.0.2").await;

    // The hello sent right after the handshake is not answered: the close
    // frame comes first.
    let (code, reason) = refused(server.addr, "127.0.0.2").await;
    assert_eq!(code, 1008, "{reason}");
    assert!(reason.contains("connections_per_ip"), "{reason}");
    assert!(reason.contains('2'), "{reason}");
    // Other addresses are counted apart.
    let _c = welcomed(server.addr, "127.0.0.3").await;
    let _d = welcomed(server.addr, "127.0.0.3").await;
    assert_eq!(refused(server.addr, "127.0.0.3").await.0, 1008);
}

#[tokio::test]
async fn connections_past_the_total_cap_are_closed_with_1013() {
    let server = TestServer::start_with(capped(3, 100)).await;
    let _a = welcomed(server.addr, "127.0.0.1").await;
    let _b = welcomed(server.addr, "127.0.0.4").await;
    let _c = welcomed(server.addr, "127.0.0.5").await;
    for from in ["127.0.0.1", "127.0.0.6"] {
        let (code, reason) = refused(server.addr, from).await;
        assert_eq!(code, 1013, "{reason}");
        assert!(reason.contains("max_connections"), "{reason}");
        assert!(reason.contains("try again later"), "{reason}");
    }
}

#[tokio::test]
async fn a_closed_connection_gives_its_place_back() {
    let config = capped(2, 1);
    let server = TestServer::start_with(config).await;
    let (a, _) = welcomed(server.addr, "127.0.0.7").await;
    let _b = welcomed(server.addr, "127.0.0.8").await;
    assert_eq!(refused(server.addr, "127.0.0.9").await.0, 1013);
    assert_eq!(refused(server.addr, "127.0.0.7").await.0, 1008);
    close(a).await;

    // The server lets go of the place when its task ends, a moment after the
    // close: ask until it is free. Refusals took no place: one is free.
    let deadline = Instant::now() + PATIENCE;
    let again = loop {
        let ws = connect_from(server.addr, "127.0.0.7")
            .await
            .expect("handshake");
        match hello(ws).await {
            Outcome::Welcome(ws, _) => break ws,
            Outcome::Closed(code, reason) => {
                assert!(
                    Instant::now() < deadline,
                    "the place was not given back: {code} {reason}"
                );
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
    };
    // And only one: the caps still hold.
    assert_eq!(refused(server.addr, "127.0.0.9").await.0, 1013);
    assert_eq!(refused(server.addr, "127.0.0.7").await.0, 1008);
    drop(again);
}

#[tokio::test]
async fn house_bots_and_unlimited_addresses_are_exempt_from_the_per_address_cap_but_not_the_total()
{
    // One connection per address, four in all; 127.0.0.10 is unlimited.
    let mut config = capped(4, 1);
    config.unlimited_from = vec!["127.0.0.10/32".parse().expect("range")];
    let server = TestServer::start_with(config).await;
    // A person on loopback asks for a house bot, which connects over
    // loopback too (on its own port): both are let in, and the bot takes
    // its seat.
    let mut person = Client::connect(&server.url(), "dana").await;
    let seated = person
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [3, 4, 5]}, "bot": "perfect"}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    loop {
        let e = person.event().await;
        if e["kind"] == "started" {
            break;
        }
    }
    // The person's address holds its share.
    assert_eq!(refused(server.addr, "127.0.0.1").await.0, 1008);
    // Two from the unlimited address are welcome; a fifth is past the total.
    let _third = welcomed(server.addr, "127.0.0.10").await;
    let _fourth = welcomed(server.addr, "127.0.0.10").await;
    let (code, reason) = refused(server.addr, "127.0.0.10").await;
    assert_eq!(code, 1013, "{reason}");
}

#[tokio::test]
async fn past_refusals_in_flight_a_connection_is_dropped_without_a_handshake() {
    let mut config = capped(1, 100);
    config.refusals_in_flight = 0;
    let server = TestServer::start_with(config).await;
    let _a = welcomed(server.addr, "127.0.0.1").await;
    let second = connect_from(server.addr, "127.0.0.1").await;
    assert!(second.is_err(), "the handshake should fail");
}
