//! Server-wide bounds, on the real binary: a few client addresses that
//! fill their share of rooms (`open_rooms_per_ip`) cannot stop a new
//! address from creating one; connections that ask for large answers and
//! never read cannot take the server's memory past `max_queued_bytes`
//! (the largest queues are closed with 1013, a match goes on).
//!
//! Clients bind to addresses of 127.0.0.0/8 other than 127.0.0.1 to be
//! different client addresses (Linux routes the whole block over loopback).

mod support;

use std::net::{IpAddr, SocketAddr};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::{timeout, Instant};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::MaybeTlsStream;

use grundy_testkit::client::{two_players, Client, PATIENCE};
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

/// The server's address, from its ws:// URL.
fn address_of(url: &str) -> SocketAddr {
    url.trim_start_matches("ws://")
        .trim_end_matches('/')
        .parse()
        .expect("the server's address")
}

/// A metric's value in the server's `/metrics` text.
async fn metric(server: SocketAddr, name: &str) -> f64 {
    let mut tcp = timeout(PATIENCE, TcpStream::connect(server))
        .await
        .expect("connect in time")
        .expect("connect");
    tcp.write_all(b"GET /metrics HTTP/1.1\r\nHost: grundy\r\nConnection: close\r\n\r\n")
        .await
        .expect("request");
    let mut text = String::new();
    timeout(PATIENCE, tcp.read_to_string(&mut text))
        .await
        .expect("the metrics in time")
        .expect("read");
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in:\n{text}"))
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// The most bytes the flood test lets the server queue in all.
const BUDGET: usize = 2_000_000;
/// What the total may show over the budget for a moment: answers being
/// queued at once, each counted before the largest queue is cut.
const IN_FLIGHT: usize = 4 * 64 * 1024;
/// The bound the flood test holds the server's resident memory to: the
/// server at rest (about 40 MiB here), the budget, and what 480 reads of
/// the 56 KB record leave with the allocator (84 to 94 MiB in all, seen).
/// The four flooders ask for 27 MB of answers.
const RSS_BOUND_KIB: u64 = 128 * 1024;

#[tokio::test]
async fn a_flood_of_large_answers_never_read_stays_within_the_budget() {
    let dir = tempfile::tempdir().expect("temp dir");
    let budget = BUDGET.to_string();
    let mut server =
        Process::start_with(dir.path().join("g.db"), &["--max-queued-bytes", &budget]).await;
    let url = server.url.clone();
    let addr = address_of(&url);
    let pid = server.child.id().expect("running");

    // A match in progress, and a room whose record is about 56 KB (8,000
    // heaps): each `get_match` of it is answered with that much.
    let (room, _, t0, t1, mut a, mut b) =
        two_players(&url, json!({"game": "nim", "heaps": [5, 5, 5]}), None).await;
    let mut host = Client::connect(&url, "host").await;
    let big = host
        .request(json!({"type": "create_room",
            "spec": {"game": "nim", "heaps": vec![123_456u64; 8_000]}}))
        .await;
    assert_eq!(big["type"], "seated", "{}", &big.to_string()[..200]);
    let big_room = big["room"].as_str().expect("room").to_string();
    let rss_before = rss_kib(pid);

    // Four connections that read nothing (a receive buffer of 4 KiB: the
    // kernel holds little for them) each ask for 120 copies: about 6.7 MB
    // each, under the per-connection bound (8 MiB), each alone over the
    // budget.
    let mut flooders = Vec::new();
    for _ in 0..4 {
        let socket = TcpSocket::new_v4().expect("socket");
        socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
        let tcp = timeout(PATIENCE, socket.connect(addr))
            .await
            .expect("connect in time")
            .expect("connect");
        let (mut ws, _) = timeout(
            PATIENCE,
            tokio_tungstenite::client_async(format!("ws://{addr}/"), MaybeTlsStream::Plain(tcp)),
        )
        .await
        .expect("handshake in time")
        .expect("handshake");
        let hello = json!({"type": "hello", "id": 0, "version": 1, "name": "reader"});
        ws.send(Message::text(hello.to_string()))
            .await
            .expect("hello");
        for id in 1..=120 {
            let ask = json!({"type": "get_match", "id": id, "room": big_room});
            timeout(PATIENCE, ws.send(Message::text(ask.to_string())))
                .await
                .expect("sent in time")
                .expect("send");
        }
        flooders.push(ws);
    }

    // The flooders are cut, the largest first; the total never shows over
    // the budget; the match goes on meanwhile.
    let deadline = Instant::now() + PATIENCE;
    let mut heaps = [5u64, 5, 5];
    let mut ply = 0;
    let mut highest_queued = 0.0f64;
    loop {
        let queued = metric(addr, "grundy_queued_bytes").await;
        highest_queued = highest_queued.max(queued);
        assert!(
            queued <= (BUDGET + IN_FLIGHT) as f64,
            "{queued} bytes queued"
        );
        let (mover, token) = if ply % 2 == 0 {
            (&mut a, &t0)
        } else {
            (&mut b, &t1)
        };
        let heap = ply % 3;
        if heaps[heap] > 1 {
            heaps[heap] -= 1;
            let ack = mover
                .request(json!({"type": "move", "room": room, "token": token,
                    "move": {"heap": heap, "take": 1}}))
                .await;
            assert_eq!(ack["type"], "ack", "{ack}");
            ply += 1;
        }
        if metric(addr, "grundy_overload_disconnects_total").await >= 3.0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the flooders were not cut in time"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let rss_after = rss_kib(pid);
    eprintln!(
        "server RSS {rss_before} KiB before the flood, {rss_after} KiB after; \
         at most {highest_queued} bytes queued seen"
    );
    assert!(rss_after < RSS_BOUND_KIB, "RSS {rss_after} KiB");
    assert!(ply >= 2, "the match went on: {ply} moves");

    // A cut flooder, once it reads, finds the answers the kernel held and
    // then the close frame: 1013 and a reason naming the budget. (Read at
    // once, all together: the server waits 5 s for a close frame to go.)
    let readers: Vec<_> = flooders
        .into_iter()
        .map(|mut ws| {
            tokio::spawn(async move {
                let until = Instant::now() + PATIENCE;
                loop {
                    match tokio::time::timeout_at(until, ws.next()).await {
                        Ok(Some(Ok(Message::Close(frame)))) => {
                            break frame.map(|f| (u16::from(f.code), f.reason.to_string()));
                        }
                        Ok(Some(Ok(_))) => continue,
                        Ok(Some(Err(_)) | None) | Err(_) => break None,
                    }
                }
            })
        })
        .collect();
    let mut codes = Vec::new();
    for reader in readers {
        codes.push(reader.await.expect("the reader"));
    }
    let cut = codes
        .iter()
        .flatten()
        .filter(|(code, reason)| *code == 1013 && reason.contains("max_queued_bytes"))
        .count();
    assert!(cut >= 3, "{codes:?}");

    // The players go on; the server is well.
    let (mover, token) = if ply % 2 == 0 {
        (&mut a, &t0)
    } else {
        (&mut b, &t1)
    };
    let heap = heaps.iter().position(|&h| h > 0).expect("a heap left");
    let ack = mover
        .request(json!({"type": "move", "room": room, "token": token,
            "move": {"heap": heap, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    assert!(server.logged("dropping one of the largest") >= 3);
    server.terminate().await;
}
