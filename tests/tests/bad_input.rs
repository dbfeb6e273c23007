//! A peer may send anything. The server answers with a coded error, or closes
//! that one connection with a close code and a reason; it never panics, never
//! stalls other matches, never corrupts the database.
//!
//! Each kind of abuse is a function that asserts its own outcome; each has a
//! test of its own, and `a_barrage_leaves_the_server_and_its_database_sound`
//! runs them all at once against one server beside a real match.

use std::net::SocketAddr;

use futures_util::{SinkExt, StreamExt};
use grundy_server::store::{MatchStore, SqliteStore};
use grundy_server::Config;
use grundy_tests::{two_players, Client, TestServer, PATIENCE};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::{Bytes, Message};

/// Short timeouts, so that the timeout cases take well under a second.
fn quick() -> Config {
    let mut config = grundy_tests::config();
    config.limits.hello_timeout_ms = 300;
    config.limits.ping_interval_ms = 100;
    config.limits.idle_timeout_ms = 400;
    config
}

/// Asserts `m` is an error with `code` whose message contains `text`.
#[track_caller]
fn assert_error(m: &Value, code: &str, text: &str) {
    assert_eq!(m["type"], "error", "{m}");
    assert_eq!(m["code"], code, "{m}");
    let message = m["message"].as_str().unwrap_or_default();
    assert!(message.contains(text), "{text:?} not in {m}");
}

/// The connection still answers.
async fn still_alive(c: &mut Client) {
    let pong = c.request(json!({"type": "ping"})).await;
    assert_eq!(pong["type"], "pong", "{pong}");
}

/// A WebSocket peer written by hand on a raw TCP socket: it sends exactly the
/// frames it is told to and never answers a ping on its own.
struct RawPeer {
    tcp: TcpStream,
}

/// Opcodes (RFC 6455).
const TEXT: u8 = 0x1;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;

impl RawPeer {
    async fn handshake(addr: SocketAddr) -> RawPeer {
        let mut tcp = TcpStream::connect(addr).await.expect("connect");
        let request = format!(
            "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        tcp.write_all(request.as_bytes()).await.expect("write");
        // Byte by byte up to the blank line, so no frame is swallowed.
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let byte = timeout(PATIENCE, tcp.read_u8())
                .await
                .expect("handshake answer in time")
                .expect("handshake answer");
            head.push(byte);
        }
        let head = String::from_utf8_lossy(&head);
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        RawPeer { tcp }
    }

    /// Sends one final frame, masked as a client must.
    async fn send(&mut self, opcode: u8, payload: &[u8]) {
        let mut frame = vec![0x80 | opcode];
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= 0xffff => {
                frame.push(0x80 | 126);
                frame.extend((n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend((n as u64).to_be_bytes());
            }
        }
        let key = [0x37, 0xfa, 0x21, 0x3d];
        frame.extend(key);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
        self.tcp.write_all(&frame).await.expect("write frame");
    }

    /// The next frame from the server (unmasked): opcode and payload; None at
    /// the end of the stream.
    async fn frame(&mut self) -> Option<(u8, Vec<u8>)> {
        let mut head = [0u8; 2];
        match timeout(PATIENCE, self.tcp.read_exact(&mut head)).await {
            Err(_) => panic!("no frame within {PATIENCE:?}"),
            Ok(Err(_)) => return None,
            Ok(Ok(_)) => {}
        }
        let len = match head[1] & 0x7f {
            126 => self.tcp.read_u16().await.ok()? as usize,
            127 => self.tcp.read_u64().await.ok()? as usize,
            n => n as usize,
        };
        let mut payload = vec![0; len];
        self.tcp.read_exact(&mut payload).await.ok()?;
        Some((head[0] & 0x0f, payload))
    }

    /// Reads up to the close frame: its code and reason, and how many pings
    /// came before it (left unanswered).
    async fn closed(&mut self) -> (u16, String, usize) {
        let mut pings = 0;
        loop {
            match self.frame().await {
                Some((CLOSE, p)) if p.len() >= 2 => {
                    let code = u16::from_be_bytes([p[0], p[1]]);
                    return (code, String::from_utf8_lossy(&p[2..]).into_owned(), pings);
                }
                Some((CLOSE, _)) | None => return (1005, String::new(), pings),
                Some((PING, _)) => pings += 1,
                Some(_) => {}
            }
        }
    }
}

/// A short match played to the end, every move acknowledged.
async fn a_match_completes(url: &str) -> String {
    let (room, _code, t0, t1, mut a, mut b) =
        two_players(url, json!({"game": "nim", "heaps": [1, 2]}), None).await;
    let moves = [
        (0, json!({"heap": 1, "take": 1})),
        (1, json!({"heap": 0, "take": 1})),
        (0, json!({"heap": 1, "take": 1})),
    ];
    for (seat, mv) in moves {
        let (mover, other, token) = if seat == 0 {
            (&mut a, &mut b, &t0)
        } else {
            (&mut b, &mut a, &t1)
        };
        let ack = mover
            .request(json!({"type": "move", "room": room, "token": token, "move": mv}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
        assert_eq!(mover.event().await["kind"], "moved");
        assert_eq!(other.event().await["kind"], "moved");
    }
    for c in [&mut a, &mut b] {
        let e = c.event().await;
        assert_eq!(e["result"], json!({"winner": 0, "reason": "rules"}), "{e}");
    }
    room
}

async fn binary_frame(url: &str) {
    let mut c = Client::connect(url, "bin").await;
    c.ws.send(Message::binary(vec![0u8, 159, 146, 150]))
        .await
        .expect("send");
    let m = c.recv().await;
    assert_error(&m, "bad_request", "binary");
    assert_eq!(m["id"], Value::Null, "{m}");
    still_alive(&mut c).await;
}

async fn oversized_text(url: &str, max: usize) {
    // Exactly at the limit: read (the padding field is ignored) and answered.
    let mut c = Client::connect(url, "big").await;
    let frame = |len: usize| {
        let head = r#"{"type":"ping","id":"big","pad":""#;
        format!("{head}{}\"}}", "x".repeat(len - head.len() - 2))
    };
    c.send_text(&frame(max)).await;
    let pong = c.recv().await;
    assert_eq!(pong["type"], "pong", "{pong}");
    assert_eq!(pong["id"], "big");
    // One byte more: the connection is closed, naming the limit.
    c.send_text(&frame(max + 1)).await;
    let (code, reason) = c.closed().await;
    assert_eq!(code, 1009, "{reason}");
    assert!(reason.contains("max_frame_bytes"), "{reason}");
    assert!(reason.contains(&max.to_string()), "{reason}");
}

async fn deep_nesting(url: &str) {
    let mut c = Client::connect(url, "deep").await;
    c.send_text(&"[".repeat(50_000)).await;
    assert_error(&c.recv().await, "bad_request", "not valid JSON");
    // Balanced, and inside an otherwise fine message.
    let deep = format!(
        r#"{{"type":"ping","x":{}{}}}"#,
        "[".repeat(20_000),
        "]".repeat(20_000)
    );
    c.send_text(&deep).await;
    assert_error(&c.recv().await, "bad_request", "not valid JSON");
    still_alive(&mut c).await;
}

async fn invalid_utf8(url: &str) {
    let mut c = Client::connect(url, "utf8").await;
    let payload = Bytes::from_static(b"{\"type\":\"ping\",\"x\":\"\xff\xfe\"}");
    let frame = Frame::message(payload, OpCode::Data(Data::Text), true);
    c.ws.send(Message::Frame(frame)).await.expect("send");
    let (code, reason) = c.closed().await;
    assert_eq!(code, 1007, "{reason}");
    assert!(reason.contains("UTF-8"), "{reason}");
}

/// The same, from a hand-written peer (no client library in between).
async fn invalid_utf8_raw(addr: SocketAddr) {
    let mut p = RawPeer::handshake(addr).await;
    p.send(TEXT, br#"{"type":"hello","version":1}"#).await;
    let (op, welcome) = p.frame().await.expect("welcome");
    assert_eq!(op, TEXT);
    assert!(String::from_utf8_lossy(&welcome).contains("welcome"));
    p.send(TEXT, b"{\"type\":\"ping\",\"x\":\"\xc3\x28\"}")
        .await;
    let (code, reason, _) = p.closed().await;
    assert_eq!(code, 1007, "{reason}");
}

/// 2,000 messages as fast as they go out; returns once every one was answered
/// or the server closed the connection.
async fn flood(url: &str) {
    const N: usize = 2_000;
    let c = Client::connect(url, "flood").await;
    let (mut tx, mut rx) = c.ws.split();
    let sender = tokio::spawn(async move {
        for i in 0..N {
            let msg = json!({"type": "ping", "id": i}).to_string();
            if tx.feed(Message::text(msg)).await.is_err() {
                return;
            }
        }
        let _ = tx.flush().await;
    });
    let (mut pongs, mut limited, mut closed) = (0, 0, None);
    while pongs + limited < N {
        let msg = match timeout(PATIENCE, rx.next()).await {
            Err(_) => panic!("flood: no answer within {PATIENCE:?}"),
            Ok(Some(Ok(m))) => m,
            Ok(_) => break,
        };
        match msg {
            Message::Text(t) => {
                let m: Value = serde_json::from_str(&t).expect("JSON");
                if m["type"] == "pong" {
                    pongs += 1;
                    continue;
                }
                assert_error(&m, "rate_limited", "messages_per_second");
                assert!(m["retry_after_ms"].as_u64().is_some_and(|ms| ms > 0), "{m}");
                assert_eq!(m["limit"], "messages_per_second", "{m}");
                limited += 1;
            }
            Message::Close(f) => {
                closed = f;
                break;
            }
            _ => {}
        }
    }
    sender.abort();
    assert!(pongs > 0, "the burst is served");
    assert!(limited > 0, "the flood is refused");
    // Either every message was answered, or the server gave up on this peer
    // for going far past the rate limit.
    if let Some(f) = closed {
        assert_eq!(u16::from(f.code), 1008, "{f:?}");
        assert!(f.reason.contains("messages_per_second"), "{f:?}");
    }
}

/// A peer that asks for large answers and does not read them: once more
/// than `outbox_bytes` wait for it (beyond what the kernel's buffers hold),
/// the server drops it with close 1008, after sending what was queued.
async fn slow_reader(url: &str) {
    const ASKED: usize = 200;
    let mut owner = Client::connect(url, "owner").await;
    // About 55 KB of spec, and as much of position, in every snapshot.
    let heaps: Vec<u64> = vec![1_000_000_007; 5_000];
    let seated = owner
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": heaps}}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].clone();
    let mut slow = Client::connect(url, "slow").await;
    for i in 0..ASKED {
        let watch = json!({"type": "watch", "room": room, "id": 1_000 + i});
        slow.ws
            .feed(Message::text(watch.to_string()))
            .await
            .expect("feed");
    }
    slow.ws.flush().await.expect("flush");
    // Not reading while the answers pile up (a debug build on a busy machine
    // takes about a second to make them all).
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let mut answers = 0;
    let closed = loop {
        match slow.frame().await {
            Some(Message::Text(t)) => {
                let m: Value = serde_json::from_str(&t).expect("JSON");
                assert_eq!(m["type"], "watching", "{m}");
                answers += 1;
            }
            Some(Message::Close(f)) => break f,
            Some(_) => {}
            None => break None,
        }
    };
    let f = closed.expect("a close frame");
    assert_eq!(u16::from(f.code), 1008, "{f:?}");
    assert!(f.reason.contains("too slow"), "{f:?}");
    assert!(answers < ASKED, "all {answers} answers were queued");
    // The room and its owner are none the worse.
    still_alive(&mut owner).await;
}

async fn never_handshakes(addr: SocketAddr) {
    // Silent, and a request that never ends: both dropped after the timeout.
    let silent = TcpStream::connect(addr).await.expect("connect");
    let mut partial = TcpStream::connect(addr).await.expect("connect");
    partial
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n")
        .await
        .expect("write");
    for mut tcp in [silent, partial] {
        let mut buf = [0u8; 512];
        match timeout(PATIENCE, tcp.read(&mut buf)).await {
            Err(_) => panic!("a peer that never completes the handshake is kept"),
            Ok(Ok(n)) => assert_eq!(n, 0, "{:?}", String::from_utf8_lossy(&buf[..n])),
            Ok(Err(_)) => {} // reset: closed as well
        }
    }
}

async fn never_says_hello(url: &str) {
    let mut c = Client::raw(url).await;
    let (code, reason) = c.closed().await;
    assert_eq!(code, 1008, "{reason}");
    assert!(reason.contains("hello_timeout_ms"), "{reason}");
}

async fn dead_peer(addr: SocketAddr) {
    let mut p = RawPeer::handshake(addr).await;
    p.send(TEXT, br#"{"type":"hello","version":1}"#).await;
    // It hears the pings but never answers them.
    let (code, reason, pings) = p.closed().await;
    assert_eq!(code, 1001, "{reason}");
    assert!(reason.contains("idle_timeout_ms"), "{reason}");
    assert!(pings > 0, "the server pinged before giving up");
}

/// A quiet peer that answers pings (the client library does) outlives the
/// idle limit many times over.
async fn quiet_peer_stays(url: &str, pings: usize) {
    let mut c = Client::connect(url, "quiet").await;
    let mut seen = 0;
    while seen < pings {
        match c.frame().await {
            Some(Message::Ping(_)) => seen += 1,
            Some(Message::Close(f)) => panic!("a live peer was closed: {f:?}"),
            None => panic!("a live peer was dropped"),
            Some(_) => {}
        }
    }
    still_alive(&mut c).await;
}

async fn before_hello(url: &str) {
    let mut c = Client::raw(url).await;
    let m = c.request(json!({"type": "ping"})).await;
    assert_error(&m, "bad_request", "hello first");
    let m = c.request(json!({"type": "list_rooms"})).await;
    assert_error(&m, "bad_request", "hello first");
    let m = c.request(json!({"type": "hello", "version": 2})).await;
    assert_error(&m, "bad_version", "not 2");
    let m = c.request(json!({"type": "hello"})).await;
    assert_error(&m, "bad_request", "version");
    // Refusals do not count as a hello, nor end the connection.
    let m = c.request(json!({"type": "ping"})).await;
    assert_error(&m, "bad_request", "hello first");
    let m = c.request(json!({"type": "hello", "version": 1})).await;
    assert_eq!(m["type"], "welcome", "{m}");
    still_alive(&mut c).await;
}

async fn nonsense_fields(url: &str) {
    let mut c = Client::connect(url, "typo").await;
    let seated = c
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [2, 3]}}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].as_str().expect("room").to_string();
    let token = seated["token"].as_str().expect("token").to_string();
    let nim = json!({"game": "nim", "heaps": [1]});
    let cases = [
        (json!({"type": "join", "room": 5}), r#"field "room""#),
        (
            json!({"type": "watch", "room": room, "since": -1}),
            r#"field "since""#,
        ),
        (
            json!({"type": "watch", "room": room, "since": "0"}),
            r#"field "since""#,
        ),
        (
            json!({"type": "join", "room": room, "seat": 7}),
            "seat must be 0 or 1",
        ),
        (
            json!({"type": "join", "room": room, "seat": 300}),
            r#"field "seat""#,
        ),
        (
            json!({"type": "join", "room": room, "seat": "one"}),
            r#"field "seat""#,
        ),
        (
            json!({"type": "create_room", "spec": nim, "seat": 7}),
            "seat must be 0 or 1",
        ),
        (
            json!({"type": "create_room", "spec": nim, "listed": "yes"}),
            r#"field "listed""#,
        ),
        (
            json!({"type": "create_room", "spec": nim, "clock": {"initial_ms": -5}}),
            r#"field "clock.initial_ms""#,
        ),
        (
            json!({"type": "create_room", "spec": nim, "clock": {"initial_ms": 0}}),
            "clock.initial_ms: must be 1 to 86400000 (24 hours), got 0",
        ),
        (
            json!({"type": "create_room", "spec": nim,
                   "clock": {"initial_ms": 1000, "increment_ms": 3_600_001}}),
            "clock.increment_ms: must be at most 3600000 (1 hour), got 3600001",
        ),
        (
            json!({"type": "create_room", "random": {"family": "nim", "seed": 1.5}}),
            r#"field "random.seed""#,
        ),
        (
            json!({"type": "move", "room": room, "token": 12, "move": {"heap": 0, "take": 1}}),
            r#"field "token""#,
        ),
        (
            json!({"type": "move", "room": room, "token": token}),
            "missing field `move`",
        ),
        (
            json!({"type": "resume", "room": [room], "token": token}),
            r#"field "room""#,
        ),
        (
            json!({"type": "hello", "version": "1"}),
            r#"field "version""#,
        ),
        (
            json!({"type": "hello", "version": 1, "name": 7}),
            r#"field "name""#,
        ),
    ];
    for (msg, text) in cases {
        let answer = c.request(msg).await;
        assert_error(&answer, "bad_request", text);
    }
    // Not an object, or a `type` that is not a string: answered, no id to echo.
    for text in ["[1, 2, 3]", "7", "null", r#"{"type": 5}"#, r#"{"id": 1}"#] {
        c.send_text(text).await;
        let m = c.recv().await;
        assert_error(&m, "bad_request", "type");
    }
    // An id that is neither a number nor a string is named too (and not echoed).
    for id in [json!({"n": 1}), json!(-1), json!(1.5)] {
        c.send(json!({"type": "ping", "id": id})).await;
        let m = c.recv().await;
        assert_error(&m, "bad_request", r#"field "id""#);
        assert_error(
            &m,
            "bad_request",
            "expected a request id: a string, or an integer",
        );
        assert_eq!(m["id"], Value::Null);
    }
    // The room is untouched: the free seat is still free.
    let mut b = Client::connect(url, "bob").await;
    let seated = b.request(json!({"type": "join", "room": room})).await;
    assert_eq!(seated["seat"], 1, "{seated}");
    still_alive(&mut c).await;
}

#[tokio::test]
async fn a_binary_frame_is_refused_and_the_connection_goes_on() {
    let server = TestServer::start().await;
    binary_frame(&server.url()).await;
}

#[tokio::test]
async fn a_message_over_the_frame_limit_closes_with_1009() {
    let server = TestServer::start().await;
    oversized_text(&server.url(), server.config.limits.max_frame_bytes).await;
}

#[tokio::test]
async fn deeply_nested_json_is_a_bad_request() {
    let server = TestServer::start().await;
    deep_nesting(&server.url()).await;
}

#[tokio::test]
async fn invalid_utf8_closes_with_1007() {
    let server = TestServer::start().await;
    invalid_utf8(&server.url()).await;
    invalid_utf8_raw(server.addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_is_rate_limited_while_other_matches_play_on() {
    let server = TestServer::start().await;
    let url = server.url();
    let (_, room) = tokio::join!(flood(&url), a_match_completes(&url));
    assert!(!room.is_empty());
    // Binary frames count against the same limit.
    let mut c = Client::connect(&url, "binflood").await;
    for _ in 0..server.config.limits.burst + 10 {
        c.ws.feed(Message::binary(vec![1u8])).await.expect("feed");
    }
    c.ws.flush().await.expect("flush");
    let mut limited = false;
    while !limited {
        let m = c.recv().await;
        limited = m["code"] == "rate_limited";
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_too_far_behind_is_dropped_while_other_matches_play_on() {
    let server = TestServer::start_with(Config {
        outbox_bytes: 256 * 1024,
        ..grundy_tests::config()
    })
    .await;
    let url = server.url();
    let (_, room) = tokio::join!(slow_reader(&url), a_match_completes(&url));
    assert!(!room.is_empty());
}

#[tokio::test]
async fn a_peer_that_never_completes_the_handshake_is_dropped() {
    let server = TestServer::start_with(quick()).await;
    never_handshakes(server.addr).await;
}

#[tokio::test]
async fn a_peer_that_never_says_hello_is_closed() {
    let server = TestServer::start_with(quick()).await;
    never_says_hello(&server.url()).await;
}

#[tokio::test]
async fn a_dead_peer_is_closed_and_a_quiet_live_one_is_not() {
    let server = TestServer::start_with(quick()).await;
    // Ten pings at 100 ms: two and a half times the idle limit.
    let url = server.url();
    tokio::join!(dead_peer(server.addr), quiet_peer_stays(&url, 10));
}

#[tokio::test]
async fn hello_comes_first_and_names_its_version() {
    let server = TestServer::start().await;
    before_hello(&server.url()).await;
}

#[tokio::test]
async fn fields_of_the_wrong_type_are_named() {
    let server = TestServer::start().await;
    nonsense_fields(&server.url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_barrage_leaves_the_server_and_its_database_sound() {
    let mut config = quick();
    // Players of the match sit unpolled while the other moves: keep the idle
    // limit well above that.
    config.limits.ping_interval_ms = 200;
    config.limits.idle_timeout_ms = 1_500;
    let mut server = TestServer::start_with(config).await;
    let (url, addr, max) = (
        server.url(),
        server.addr,
        server.config.limits.max_frame_bytes,
    );
    let (room, ..) = tokio::join!(
        a_match_completes(&url),
        binary_frame(&url),
        oversized_text(&url, max),
        deep_nesting(&url),
        invalid_utf8(&url),
        invalid_utf8_raw(addr),
        flood(&url),
        never_handshakes(addr),
        never_says_hello(&url),
        dead_peer(addr),
        before_hello(&url),
        nonsense_fields(&url),
    );
    // The match's record is whole, in the server and in the file.
    let mut c = Client::connect(&url, "auditor").await;
    let record = c.request(json!({"type": "get_match", "room": room})).await;
    assert_eq!(record["record"]["moves"].as_array().map(Vec::len), Some(3));
    drop(c);
    server.stop().await;
    {
        let db = rusqlite::Connection::open(&server.db).expect("the file opens");
        let check: String = db
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("integrity check");
        assert_eq!(check, "ok");
        let store = SqliteStore::open(&server.db).expect("the store opens");
        let rec = store.record(&room).expect("readable").expect("kept");
        assert_eq!(rec.moves.len(), 3);
        assert_eq!(rec.result.map(|r| r.winner), Some(Some(0)));
        store.close();
    }
    // And the server, back over the same file, hosts a normal match.
    server.restart().await;
    a_match_completes(&server.url()).await;
}
