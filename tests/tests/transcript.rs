//! Prints the example session of docs/protocol.md ("Example session") from a
//! real server: every frame of every connection, as sent and as received.
//! Ignored by default; run it to refresh the example:
//!
//! ```sh
//! cargo test -p grundy-tests --test transcript -- --ignored --nocapture
//! ```

use std::sync::{Arc, Mutex};

use futures_util::{SinkExt, StreamExt};
use grundy_tests::{TestServer, PATIENCE};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Log = Arc<Mutex<Vec<String>>>;

/// A client that logs every text frame it sends (`→`) and receives (`←`).
struct Peer {
    name: &'static str,
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    log: Log,
}

impl Peer {
    async fn connect(url: &str, name: &'static str, log: &Log) -> Peer {
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("connect");
        let p = Peer {
            name,
            ws,
            next_id: 1,
            log: log.clone(),
        };
        p.note(&format!("({name} opens a WebSocket to the server)"));
        p
    }

    fn note(&self, text: &str) {
        self.log.lock().expect("log").push(text.to_string());
    }

    async fn send(&mut self, v: Value) {
        let text = type_first(&v);
        self.note(&format!("{:<5} → {text}", self.name));
        self.ws.send(Message::text(text)).await.expect("send");
    }

    async fn recv(&mut self) -> Value {
        loop {
            let m = tokio::time::timeout(PATIENCE, self.ws.next())
                .await
                .expect("a message in time");
            match m {
                Some(Ok(Message::Text(t))) => {
                    self.note(&format!("{:<5} ← {t}", self.name));
                    return serde_json::from_str(&t).expect("JSON");
                }
                Some(Ok(Message::Close(f))) => panic!("{} closed: {f:?}", self.name),
                Some(Ok(_)) => continue,
                other => panic!("{}: {other:?}", self.name),
            }
        }
    }

    /// Sends `v` with the next id, then reads (and logs) up to its answer.
    async fn request(&mut self, mut v: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        v["id"] = json!(id);
        self.send(v).await;
        loop {
            let m = self.recv().await;
            if m["id"] == json!(id) {
                return m;
            }
        }
    }

    /// Reads `n` events (and logs them).
    async fn events(&mut self, n: usize) -> Vec<Value> {
        let mut out = Vec::new();
        for _ in 0..n {
            let m = self.recv().await;
            assert_eq!(m["type"], "event", "{m}");
            out.push(m["event"].clone());
        }
        out
    }
}

/// The message as JSON text with `type` and `id` first, as a person writes it.
fn type_first(v: &Value) -> String {
    let Value::Object(map) = v else {
        return v.to_string();
    };
    let mut parts = Vec::new();
    for key in ["type", "id"] {
        if let Some(x) = map.get(key) {
            parts.push(format!("{}:{x}", json!(key)));
        }
    }
    for (key, x) in map.iter().filter(|(k, _)| *k != "type" && *k != "id") {
        parts.push(format!("{}:{x}", json!(key)));
    }
    format!("{{{}}}", parts.join(","))
}

/// Time to think before a move, so the clocks in the example move.
async fn think(ms: u64) {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
}

#[tokio::test]
#[ignore = "prints the example session of docs/protocol.md"]
async fn example_session() {
    let server = TestServer::start().await;
    let url = server.url();
    let log: Log = Arc::new(Mutex::new(Vec::new()));

    let mut alice = Peer::connect(&url, "alice", &log).await;
    alice
        .request(json!({"type": "hello", "version": 1, "name": "alice"}))
        .await;
    let seated = alice
        .request(json!({"type": "create_room",
            "spec": {"game": "nim", "heaps": [1, 2]},
            "clock": {"initial_ms": 60000, "increment_ms": 2000}}))
        .await;
    let room = seated["room"].as_str().expect("room").to_string();
    let code = seated["snapshot"]["code"]
        .as_str()
        .expect("code")
        .to_string();
    let t0 = seated["token"].as_str().expect("token").to_string();

    let mut bob = Peer::connect(&url, "bob", &log).await;
    bob.request(json!({"type": "hello", "version": 1, "name": "bob"}))
        .await;
    bob.request(json!({"type": "list_rooms"})).await;
    let seated = bob.request(json!({"type": "join", "room": code})).await;
    let t1 = seated["token"].as_str().expect("token").to_string();
    let bob_seq = seated["snapshot"]["seq"].as_u64().expect("seq");
    alice.events(2).await;

    let mut sam = Peer::connect(&url, "sam", &log).await;
    sam.request(json!({"type": "hello", "version": 1, "name": "sam"}))
        .await;
    sam.request(json!({"type": "watch", "room": code})).await;

    // Refused moves: out of turn, then against the rules.
    think(700).await;
    bob.request(json!({"type": "move", "room": room, "token": t1,
        "move": {"heap": 0, "take": 1}}))
        .await;
    alice
        .request(json!({"type": "move", "room": room, "token": t0,
            "move": {"heap": 1, "take": 5}}))
        .await;

    // Bob's connection drops.
    bob.note("(bob's connection drops)");
    drop(bob);
    alice.events(1).await;
    sam.events(1).await;

    think(900).await;
    alice
        .request(json!({"type": "move", "room": room, "token": t0,
            "move": {"heap": 1, "take": 1}}))
        .await;
    sam.events(1).await;
    think(1500).await;

    // Bob comes back on a new connection and asks for what he missed.
    let mut bob = Peer::connect(&url, "bob", &log).await;
    bob.request(json!({"type": "hello", "version": 1, "name": "bob"}))
        .await;
    bob.request(json!({"type": "resume", "room": room, "token": t1, "since": bob_seq}))
        .await;
    alice.events(1).await;
    sam.events(1).await;

    think(2100).await;
    bob.request(json!({"type": "move", "room": room, "token": t1,
        "move": {"heap": 0, "take": 1}}))
        .await;
    alice.events(1).await;
    sam.events(1).await;

    think(1300).await;
    alice
        .request(json!({"type": "move", "room": room, "token": t0,
            "move": {"heap": 1, "take": 1}}))
        .await;
    bob.events(2).await;
    sam.events(2).await;

    sam.request(json!({"type": "get_match", "room": room}))
        .await;
    sam.request(json!({"type": "leave", "room": room})).await;
    sam.request(json!({"type": "ping"})).await;

    for line in log.lock().expect("log").iter() {
        println!("{line}");
    }
}
