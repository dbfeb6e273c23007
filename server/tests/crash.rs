//! The real binary, a real process: killed with SIGKILL in the middle of a
//! match, started again over the same SQLite file (or PostgreSQL database),
//! it has every acknowledged move and the match can be finished; stopped with
//! SIGTERM, it exits 0 and leaves the file intact.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grundy_server::store::{MatchStore, SqliteStore};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdout, Command};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const PATIENCE: Duration = Duration::from_secs(10);

/// A `grundy-server` process.
struct Process {
    child: Child,
    url: String,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<String>>,
}

impl Process {
    /// Starts the binary on port 0 over `db` (a file or a `postgres://` URL)
    /// and reads the address it prints.
    async fn start(db: impl AsRef<std::ffi::OsStr>) -> Process {
        let mut child = Command::new(env!("CARGO_BIN_EXE_grundy-server"))
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--db")
            .arg(db)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the server starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut pipe) = child.stderr.take() {
            let sink = stderr.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut buf).await {
                    let text = String::from_utf8_lossy(&buf[..n]);
                    sink.lock().unwrap().push_str(&text);
                }
            });
        }
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        let read = timeout(PATIENCE, stdout.read_line(&mut line)).await;
        assert!(
            matches!(read, Ok(Ok(1..))),
            "no address printed; stderr: {}",
            stderr.lock().unwrap()
        );
        let url = line
            .trim_end()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first stdout line: {line:?}"))
            .to_string();
        assert!(url.starts_with("ws://127.0.0.1:"), "{line:?}");
        Process {
            child,
            url,
            stdout,
            stderr,
        }
    }

    /// SIGKILL, as a crash or the OOM killer would.
    async fn kill_hard(&mut self) {
        self.child.kill().await.expect("kill -9");
        let status = self.child.wait().await.expect("wait");
        assert_eq!(signal_of(status), Some(9), "{status:?}");
    }

    /// SIGTERM, as a service manager would; returns the exit status.
    async fn terminate(&mut self) -> ExitStatus {
        let pid = self.child.id().expect("running").to_string();
        let sent = Command::new("kill")
            .arg("-TERM")
            .arg(&pid)
            .status()
            .await
            .expect("kill -TERM");
        assert!(sent.success());
        match timeout(Duration::from_secs(5), self.child.wait()).await {
            Ok(status) => status.expect("wait"),
            Err(_) => panic!(
                "still running 5 s after SIGTERM; stderr: {}",
                self.stderr.lock().unwrap()
            ),
        }
    }
}

#[cfg(unix)]
fn signal_of(status: ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[cfg(not(unix))]
fn signal_of(_: ExitStatus) -> Option<i32> {
    Some(9)
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A protocol v1 client, as little of one as these tests need.
struct Peer {
    ws: Ws,
    next_id: u64,
    pending: VecDeque<Value>,
}

impl Peer {
    async fn connect(url: &str, name: &str) -> Peer {
        let (ws, _) = timeout(PATIENCE, tokio_tungstenite::connect_async(url))
            .await
            .expect("connect in time")
            .expect("connect");
        let mut peer = Peer {
            ws,
            next_id: 1,
            pending: VecDeque::new(),
        };
        let welcome = peer
            .request(json!({"type": "hello", "version": 1, "name": name}))
            .await;
        assert_eq!(welcome["type"], "welcome", "{welcome}");
        peer
    }

    async fn send(&mut self, v: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut v = v;
        v["id"] = json!(id);
        self.ws
            .send(Message::text(v.to_string()))
            .await
            .expect("send");
        id
    }

    /// The next JSON message from the socket; None once it is closed.
    async fn read(&mut self) -> Option<Value> {
        loop {
            match timeout(PATIENCE, self.ws.next()).await {
                Err(_) => panic!("no message within {PATIENCE:?}"),
                Ok(Some(Ok(Message::Text(t)))) => {
                    return Some(serde_json::from_str(&t).expect("JSON"))
                }
                Ok(Some(Ok(Message::Close(_)))) | Ok(Some(Err(_))) | Ok(None) => return None,
                Ok(Some(Ok(_))) => {}
            }
        }
    }

    async fn request(&mut self, v: Value) -> Value {
        let id = self.send(v).await;
        loop {
            let m = self.read().await.expect("answer before the close");
            if m["id"] == json!(id) {
                return m;
            }
            self.pending.push_back(m);
        }
    }

    /// Skips messages up to the next event of `kind`.
    async fn until(&mut self, kind: &str) -> Value {
        loop {
            let m = match self.pending.pop_front() {
                Some(m) => m,
                None => self.read().await.expect("event before the close"),
            };
            if m["type"] == "event" && m["event"]["kind"] == kind {
                return m["event"].clone();
            }
        }
    }
}

/// Two players seated in a new nim room: (room, code, token 0, token 1, a, b).
async fn two_players(url: &str, heaps: Value) -> (String, String, String, String, Peer, Peer) {
    let mut a = Peer::connect(url, "alice").await;
    let seated = a
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": heaps}}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].as_str().expect("room").to_string();
    let code = seated["snapshot"]["code"]
        .as_str()
        .expect("code")
        .to_string();
    let t0 = seated["token"].as_str().expect("token").to_string();
    let mut b = Peer::connect(url, "bob").await;
    let seated = b.request(json!({"type": "join", "room": code})).await;
    assert_eq!(seated["seat"], 1, "{seated}");
    let t1 = seated["token"].as_str().expect("token").to_string();
    a.until("started").await;
    (room, code, t0, t1, a, b)
}

fn heaps_of(snapshot: &Value) -> Vec<u64> {
    snapshot["position"]["heaps"]
        .as_array()
        .unwrap_or_else(|| panic!("no heaps in {snapshot}"))
        .iter()
        .map(|h| h.as_u64().expect("heap"))
        .collect()
}

#[tokio::test]
async fn sigkill_mid_match_loses_no_acknowledged_move() {
    let dir = tempfile::tempdir().expect("temp dir");
    sigkill_mid_match(dir.path().join("g.db").into_os_string()).await;
}

#[tokio::test]
async fn sigkill_mid_match_loses_no_acknowledged_move_on_postgres() {
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    sigkill_mid_match(postgres.fresh_database().into()).await;
}

async fn sigkill_mid_match(db: std::ffi::OsString) {
    let mut first = Process::start(&db).await;
    let (room, code, t0, t1, mut a, mut b) = two_players(&first.url, json!([3, 4, 5])).await;

    // Four moves, each acknowledged.
    let moves = [
        json!({"heap": 0, "take": 1}),
        json!({"heap": 1, "take": 1}),
        json!({"heap": 2, "take": 1}),
        json!({"heap": 0, "take": 1}),
    ];
    let mut last_seq = 0;
    for (i, mv) in moves.iter().enumerate() {
        let (mover, token) = if i % 2 == 0 {
            (&mut a, &t0)
        } else {
            (&mut b, &t1)
        };
        let ack = mover
            .request(json!({"type": "move", "room": room, "token": token, "move": mv}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
        last_seq = ack["seq"].as_u64().expect("seq");
    }
    // A fifth move in flight, never acknowledged: it may or may not survive.
    a.send(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 1, "take": 1}}))
        .await;
    first.kill_hard().await;
    drop((a, b));

    let second = Process::start(&db).await;
    // Bob comes back by code, with no `since`: the full snapshot.
    let mut b = Peer::connect(&second.url, "bob").await;
    let back = b
        .request(json!({"type": "resume", "room": code, "token": t1}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    assert_eq!(back["seat"], 1);
    let snap = &back["snapshot"];
    let kept = snap["moves"].as_array().expect("moves").clone();
    assert!(kept.len() == 4 || kept.len() == 5, "{snap}");
    assert_eq!(kept[..4], moves[..], "every acknowledged move, in order");
    assert!(snap["seq"].as_u64().unwrap() > last_seq, "{snap}");
    assert_eq!(snap["result"], Value::Null);
    let expected = if kept.len() == 5 {
        [1, 2, 4]
    } else {
        [1, 3, 4]
    };
    assert_eq!(heaps_of(snap), expected, "{snap}");
    // Alice comes back by room id with the last number she saw: exactly what
    // she missed, without a gap or a repeat.
    let mut a = Peer::connect(&second.url, "alice").await;
    let back = a
        .request(json!({"type": "resume", "room": room, "token": t0, "since": last_seq}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    assert_eq!(back["seat"], 0);
    let mut seq = last_seq;
    for e in back["events"].as_array().expect("events") {
        seq += 1;
        assert_eq!(e["seq"], seq, "{back}");
    }
    assert!(seq > last_seq, "her own return at least: {back}");

    // Play it out: whoever is to move empties the first heap left.
    let mut heaps = expected.to_vec();
    let mut to_move = kept.len() % 2;
    while let Some(h) = heaps.iter().position(|&n| n > 0) {
        let (mover, token) = if to_move == 0 {
            (&mut a, &t0)
        } else {
            (&mut b, &t1)
        };
        let ack = mover
            .request(json!({"type": "move", "room": room, "token": token, "move": {"heap": h, "take": heaps[h]}}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
        heaps[h] = 0;
        to_move = 1 - to_move;
    }
    let winner = 1 - to_move as u64;
    for p in [&mut a, &mut b] {
        let ended = p.until("ended").await;
        assert_eq!(
            ended["result"],
            json!({"winner": winner, "reason": "rules"})
        );
    }
    let record = a.request(json!({"type": "get_match", "room": room})).await;
    let rec = &record["record"];
    assert_eq!(rec["moves"][3]["move"], moves[3], "{record}");
    assert_eq!(rec["result"]["winner"], winner, "{record}");
}

#[tokio::test]
async fn sigterm_exits_cleanly_and_leaves_the_file_intact() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("g.db");
    let mut server = Process::start(&db).await;
    let (room, _code, t0, _t1, mut a, mut b) = two_players(&server.url, json!([2, 2])).await;
    let ack = a
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");

    let status = server.terminate().await;
    assert!(status.success(), "{status:?}");
    // The players were told, then closed with 1001 (going away).
    for p in [&mut a, &mut b] {
        let mut told = false;
        loop {
            match timeout(PATIENCE, p.ws.next())
                .await
                .expect("closed in time")
            {
                Some(Ok(Message::Text(t))) => told |= t.contains(r#""type":"shutdown""#),
                Some(Ok(Message::Close(f))) => {
                    assert_eq!(f.map(|f| u16::from(f.code)), Some(1001));
                    break;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => panic!("{e}"),
                None => panic!("no close frame"),
            }
        }
        assert!(told, "a shutdown message before the close");
    }
    // Stdout held only the address; the logs went to stderr.
    let mut rest = String::new();
    server
        .stdout
        .read_to_string(&mut rest)
        .await
        .expect("stdout");
    assert_eq!(rest, "", "stdout after the address line");
    let logs = server.stderr.lock().unwrap().clone();
    assert!(logs.contains("server stopped"), "stderr: {logs}");

    // The file: whole, and holding the unfinished match with its move.
    let conn = rusqlite::Connection::open(&db).expect("the file opens");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity check");
    assert_eq!(check, "ok");
    drop(conn);
    let store = SqliteStore::open(&db).expect("the store opens");
    let record = store.record(&room).expect("readable").expect("kept");
    assert_eq!(record.moves.len(), 1);
    assert_eq!(record.moves[0].mv, json!({"heap": 0, "take": 1}));
    assert_eq!(record.result, None);
    let unfinished = store.load_unfinished().expect("readable");
    assert!(unfinished.iter().any(|r| r.room == room));
    store.close();
}
