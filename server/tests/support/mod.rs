//! What the tests of the real binary share: a `grundy-server` process, and
//! a small protocol v1 client.

#![allow(dead_code)] // each test file uses its own part

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grundy_client::tls::Trust;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdout, Command};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub const PATIENCE: Duration = Duration::from_secs(10);

/// A `grundy-server` process.
pub struct Process {
    pub child: Child,
    pub url: String,
    /// Its `--db`.
    pub db: String,
    pub stdout: BufReader<ChildStdout>,
    pub stderr: Arc<Mutex<String>>,
    /// Copies the pipe into `stderr` until the process closes it.
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

/// A failed test shows what each of its servers logged: a rare failure in
/// CI is then read from its output, not guessed at.
impl Drop for Process {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = self.stderr.lock().map(|l| l.clone()).unwrap_or_default();
            eprintln!(
                "--- log of the server at {} ---\n{log}--- end of its log ---",
                self.url
            );
        }
    }
}

impl Process {
    /// Starts the binary on port 0 over `db` (a file or a `postgres://` URL)
    /// and reads the address it prints.
    pub async fn start(db: impl AsRef<std::ffi::OsStr>) -> Process {
        Process::start_with(db, &[]).await
    }

    /// [`Process::start`] with more arguments.
    pub async fn start_with(db: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Process {
        let db_arg = db.as_ref().to_string_lossy().into_owned();
        let mut child = Command::new(env!("CARGO_BIN_EXE_grundy-server"))
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--db")
            .arg(db)
            .args(args)
            .env(
                "RUST_LOG",
                std::env::var("GRUNDY_TEST_LOG").unwrap_or_else(|_| "info".into()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the server starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let stderr_reader = child.stderr.take().map(|mut pipe| {
            let sink = stderr.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut buf).await {
                    let text = String::from_utf8_lossy(&buf[..n]);
                    sink.lock().unwrap().push_str(&text);
                }
            })
        });
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
        assert!(
            url.starts_with("ws://127.0.0.1:") || url.starts_with("wss://127.0.0.1:"),
            "{line:?}"
        );
        Process {
            child,
            url,
            db: db_arg,
            stdout,
            stderr,
            stderr_reader,
        }
    }

    /// SIGKILL, as a crash or the OOM killer would.
    pub async fn kill_hard(&mut self) {
        self.child.kill().await.expect("kill -9");
        let status = self.child.wait().await.expect("wait");
        assert_eq!(signal_of(status), Some(9), "{status:?}");
        self.read_stderr_to_end().await;
    }

    /// SIGTERM, as a service manager would; returns the exit status.
    pub async fn terminate(&mut self) -> ExitStatus {
        let pid = self.child.id().expect("running").to_string();
        let sent = Command::new("kill")
            .arg("-TERM")
            .arg(&pid)
            .status()
            .await
            .expect("kill -TERM");
        assert!(sent.success());
        let status = match timeout(Duration::from_secs(5), self.child.wait()).await {
            Ok(status) => status.expect("wait"),
            Err(_) => panic!(
                "still running 5 s after SIGTERM; stderr: {}",
                self.stderr.lock().unwrap()
            ),
        };
        self.read_stderr_to_end().await;
        status
    }

    /// Sends it signal `name` (`STOP`, `CONT`, ...).
    pub async fn signal(&self, name: &str) {
        let pid = self.child.id().expect("running");
        signal_pid(pid, name).await;
    }

    /// How many times its log has `line` so far.
    pub fn logged(&self, line: &str) -> usize {
        self.stderr.lock().unwrap().matches(line).count()
    }

    /// Waits until the copy of stderr holds everything the exited process
    /// wrote: its last lines may still be in the pipe when `wait` returns.
    async fn read_stderr_to_end(&mut self) {
        if let Some(reader) = self.stderr_reader.take() {
            timeout(PATIENCE, reader)
                .await
                .expect("stderr closed after the exit")
                .expect("the stderr reader");
        }
    }
}

/// Sends process `pid` signal `name` (`STOP`, `CONT`, ...).
pub async fn signal_pid(pid: u32, name: &str) {
    let sent = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .await
        .expect("kill");
    assert!(sent.success(), "kill -{name} {pid}");
}

#[cfg(unix)]
pub fn signal_of(status: ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[cfg(not(unix))]
pub fn signal_of(_: ExitStatus) -> Option<i32> {
    Some(9)
}

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A protocol v1 client, as little of one as these tests need.
pub struct Peer {
    pub ws: Ws,
    next_id: u64,
    pending: VecDeque<Value>,
}

impl Peer {
    pub async fn connect(url: &str, name: &str) -> Peer {
        Peer::connect_trusting(url, name, &grundy_client::tls::trust()).await
    }

    /// [`Peer::connect`], verifying a `wss://` server against `trust`.
    pub async fn connect_trusting(url: &str, name: &str, trust: &Trust) -> Peer {
        let ws = timeout(PATIENCE, grundy_client::connect::open(url, None, trust))
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

    pub async fn send(&mut self, v: Value) -> u64 {
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
    /// Panics after [`PATIENCE`] (pings do not count: they come for ever).
    pub async fn read(&mut self) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Err(_) => panic!("no message within {PATIENCE:?}"),
                Ok(Some(Ok(Message::Text(t)))) => {
                    return Some(serde_json::from_str(&t).expect("JSON"))
                }
                Ok(Some(Ok(Message::Close(_)))) | Ok(Some(Err(_))) | Ok(None) => return None,
                Ok(Some(Ok(_))) => {}
            }
        }
    }

    /// Connects, or None when the server is not there.
    pub async fn try_connect(url: &str, name: &str) -> Option<Peer> {
        let (ws, _) = timeout(PATIENCE, tokio_tungstenite::connect_async(url))
            .await
            .ok()?
            .ok()?;
        let mut peer = Peer {
            ws,
            next_id: 1,
            pending: VecDeque::new(),
        };
        let welcome = peer
            .try_request(json!({"type": "hello", "version": 1, "name": name}))
            .await?;
        (welcome["type"] == "welcome").then_some(peer)
    }

    /// The answer, or None when the connection closed first.
    pub async fn try_request(&mut self, mut v: Value) -> Option<Value> {
        let id = self.next_id;
        self.next_id += 1;
        v["id"] = json!(id);
        self.ws.send(Message::text(v.to_string())).await.ok()?;
        loop {
            let m = self.read().await?;
            if m["id"] == json!(id) {
                return Some(m);
            }
            // Events are not kept: a long match would pile them up.
            if m["type"] != "event" {
                self.pending.push_back(m);
            }
        }
    }

    pub async fn request(&mut self, v: Value) -> Value {
        let id = self.send(v).await;
        loop {
            let m = self.read().await.expect("answer before the close");
            if m["id"] == json!(id) {
                return m;
            }
            self.pending.push_back(m);
        }
    }

    /// Reads up to the close (within [`PATIENCE`]): the messages before it
    /// (those kept first), and the close frame's code and reason.
    pub async fn until_closed(&mut self) -> (Vec<Value>, Option<(u16, String)>) {
        let mut seen: Vec<Value> = self.pending.drain(..).collect();
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Err(_) => panic!("not closed within {PATIENCE:?}; read {seen:?}"),
                Ok(Some(Ok(Message::Text(t)))) => {
                    seen.push(serde_json::from_str(&t).expect("JSON"))
                }
                Ok(Some(Ok(Message::Close(frame)))) => {
                    let frame = frame.map(|f| (u16::from(f.code), f.reason.to_string()));
                    return (seen, frame);
                }
                Ok(Some(Err(_))) | Ok(None) => return (seen, None),
                Ok(Some(Ok(_))) => {}
            }
        }
    }

    /// Every message read and kept while waiting for answers and events
    /// (and none again).
    pub fn kept(&mut self) -> Vec<Value> {
        self.pending.drain(..).collect()
    }

    /// Skips messages up to the next event of `kind`.
    pub async fn until(&mut self, kind: &str) -> Value {
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
pub async fn two_players(url: &str, heaps: Value) -> (String, String, String, String, Peer, Peer) {
    two_players_trusting(url, heaps, &grundy_client::tls::trust()).await
}

/// [`two_players`], verifying a `wss://` server against `trust`.
pub async fn two_players_trusting(
    url: &str,
    heaps: Value,
    trust: &Trust,
) -> (String, String, String, String, Peer, Peer) {
    let mut a = Peer::connect_trusting(url, "alice", trust).await;
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
    let mut b = Peer::connect_trusting(url, "bob", trust).await;
    let seated = b.request(json!({"type": "join", "room": code})).await;
    assert_eq!(seated["seat"], 1, "{seated}");
    let t1 = seated["token"].as_str().expect("token").to_string();
    a.until("started").await;
    (room, code, t0, t1, a, b)
}

pub fn heaps_of(snapshot: &Value) -> Vec<u64> {
    snapshot["position"]["heaps"]
        .as_array()
        .unwrap_or_else(|| panic!("no heaps in {snapshot}"))
        .iter()
        .map(|h| h.as_u64().expect("heap"))
        .collect()
}
