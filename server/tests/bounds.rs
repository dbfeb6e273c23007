//! Server-wide bounds, on the real binary: a few client addresses that
//! fill their share of rooms (`open_rooms_per_ip`) cannot stop a new
//! address from creating one.
//!
//! Clients bind to addresses of 127.0.0.0/8 other than 127.0.0.1 to be
//! different client addresses (Linux routes the whole block over loopback).

mod support;

use std::net::{IpAddr, SocketAddr};

use serde_json::{json, Value};
use tokio::net::TcpSocket;
use tokio::time::timeout;
use tokio_tungstenite::MaybeTlsStream;

use grundy_testkit::client::{Client, PATIENCE};
use support::Process;

/// A client from local address `from` to the server at `url` (ws://), said
/// hello as `name`.
async fn connect_from(url: &str, from: &str, name: &str) -> Client {
    let server: SocketAddr = url
        .trim_start_matches("ws://")
        .trim_end_matches('/')
        .parse()
        .expect("the server's address");
    let from: IpAddr = from.parse().expect("source address");
    let socket = TcpSocket::new_v4().expect("socket");
    socket.bind(SocketAddr::new(from, 0)).expect("bind");
    let tcp = timeout(PATIENCE, socket.connect(server))
        .await
        .expect("TCP connect in time")
        .expect("TCP connect");
    let (ws, _) = timeout(
        PATIENCE,
        tokio_tungstenite::client_async(format!("ws://{server}/"), MaybeTlsStream::Plain(tcp)),
    )
    .await
    .expect("handshake in time")
    .expect("handshake");
    let mut client = Client::over(ws);
    let welcome = client
        .request(json!({"type": "hello", "version": 1, "name": name}))
        .await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    client
}

fn create_room() -> Value {
    json!({"type": "create_room", "spec": {"game": "nim", "heaps": [3, 4]}})
}

#[tokio::test]
async fn addresses_that_fill_their_rooms_leave_room_for_a_new_address() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 127.0.0.1 stays unlimited: only the addresses below are counted.
    let server = Process::start_with(
        dir.path().join("g.db"),
        &[
            "--unlimited-from",
            "127.0.0.1/32",
            "--open-rooms-per-ip",
            "3",
        ],
    )
    .await;
    let url = &server.url;
    let mut flooders = Vec::new();
    for (n, from) in ["127.0.0.2", "127.0.0.3", "127.0.0.4"].iter().enumerate() {
        let mut flooder = connect_from(url, from, &format!("flooder{n}")).await;
        let mut seats = Vec::new();
        for _ in 0..3 {
            let seated = flooder.request(create_room()).await;
            assert_eq!(seated["type"], "seated", "{from}: {seated}");
            seats.push(seated);
        }
        let refused = flooder.request(create_room()).await;
        assert_eq!(refused["type"], "error", "{from}: {refused}");
        assert_eq!(refused["code"], "limit_reached", "{refused}");
        assert_eq!(refused["limit"], "open_rooms_per_ip", "{refused}");
        let message = refused["message"].as_str().expect("a message");
        assert!(
            message.contains("3 rooms") && message.contains("(open_rooms_per_ip)"),
            "{message}"
        );
        // Another connection from the same address shares its count.
        let mut second = connect_from(url, from, &format!("second{n}")).await;
        let refused = second.request(create_room()).await;
        assert_eq!(refused["limit"], "open_rooms_per_ip", "{refused}");
        flooders.push((flooder, seats));
    }

    // The rooms stay counted after their creator has gone.
    let (mut gone, _) = flooders.remove(0);
    gone.ws.close(None).await.expect("close");
    drop(gone);
    let mut again = connect_from(url, "127.0.0.2", "again").await;
    let refused = again.request(create_room()).await;
    assert_eq!(refused["limit"], "open_rooms_per_ip", "{refused}");

    // A new address, and an unlimited one, still create rooms.
    let mut newcomer = connect_from(url, "127.0.0.5", "newcomer").await;
    let seated = newcomer.request(create_room()).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let mut unlimited = connect_from(url, "127.0.0.1", "unlimited").await;
    for _ in 0..5 {
        let seated = unlimited.request(create_room()).await;
        assert_eq!(seated["type"], "seated", "{seated}");
    }

    // A match that ends gives its address's place back.
    let (flooder, seats) = &mut flooders[0];
    let aborted = flooder
        .request(json!({"type": "abort", "room": seats[0]["room"], "token": seats[0]["token"]}))
        .await;
    assert_eq!(aborted["type"], "ack", "{aborted}");
    let seated = flooder.request(create_room()).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let refused = flooder.request(create_room()).await;
    assert_eq!(refused["limit"], "open_rooms_per_ip", "{refused}");
}
