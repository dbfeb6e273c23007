//! A raw-JSON protocol v1 client for tests, as little of one as a test
//! needs and written from docs/protocol.md alone (no `grundy-protocol`
//! types: what goes over the wire is checked as JSON), and the helpers that
//! set up a match or an account with it. Every read waits at most
//! [`PATIENCE`].

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grundy_client::tls::Trust;
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a test waits for any one message before failing.
pub const PATIENCE: Duration = Duration::from_secs(10);

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// One connection to a server.
pub struct Client {
    pub ws: Ws,
    next_id: u64,
    /// Messages read while waiting for something else.
    pending: VecDeque<Value>,
}

/// Why no message came: the close frame, if there was one.
enum Ended {
    Closed(Option<CloseFrame>),
    Failed,
}

impl Client {
    /// Connects without saying hello.
    pub async fn raw(url: &str) -> Client {
        Client::raw_trusting(url, &Trust::public()).await
    }

    /// [`Client::raw`], verifying a `wss://` server against `trust`.
    pub async fn raw_trusting(url: &str, trust: &Trust) -> Client {
        let ws = timeout(PATIENCE, grundy_client::connect::open(url, None, trust))
            .await
            .unwrap_or_else(|_| panic!("no connection to {url} within {PATIENCE:?}"))
            .expect("connect");
        Client::over(ws)
    }

    /// A client over a WebSocket opened already (e.g. from a chosen source
    /// address, or with headers of the test's own).
    pub fn over(ws: Ws) -> Client {
        Client {
            ws,
            next_id: 1,
            pending: VecDeque::new(),
        }
    }

    /// Connects and says hello as `name`.
    pub async fn connect(url: &str, name: &str) -> Client {
        Client::connect_trusting(url, name, &Trust::public()).await
    }

    /// [`Client::connect`], verifying a `wss://` server against `trust`.
    pub async fn connect_trusting(url: &str, name: &str, trust: &Trust) -> Client {
        let mut c = Client::raw_trusting(url, trust).await;
        let welcome = c
            .request(json!({"type": "hello", "version": 1, "name": name}))
            .await;
        assert_eq!(welcome["type"], "welcome", "{welcome}");
        c
    }

    /// Connects and says hello with an account's token.
    pub async fn connect_token(url: &str, token: &str) -> Client {
        let mut c = Client::raw(url).await;
        let welcome = c
            .request(json!({"type": "hello", "version": 1, "token": token}))
            .await;
        assert_eq!(welcome["type"], "welcome", "{welcome}");
        assert!(welcome["account"].is_object(), "{welcome}");
        c
    }

    /// Connects and says hello as `name`, or None when the server is not
    /// there or does not welcome it.
    pub async fn try_connect(url: &str, name: &str) -> Option<Client> {
        let (ws, _) = timeout(PATIENCE, tokio_tungstenite::connect_async(url))
            .await
            .ok()?
            .ok()?;
        let mut c = Client::over(ws);
        let welcome = c
            .try_request(json!({"type": "hello", "version": 1, "name": name}))
            .await?;
        (welcome["type"] == "welcome").then_some(c)
    }

    /// Sends `v` as it is.
    pub async fn send(&mut self, v: Value) {
        self.ws
            .send(Message::text(v.to_string()))
            .await
            .expect("send");
    }

    /// Sends `text` as it is (JSON or not).
    pub async fn send_text(&mut self, text: &str) {
        self.ws
            .send(Message::text(text.to_string()))
            .await
            .expect("send");
    }

    /// Sends `v` with a fresh `id`, and returns the id (the answer is read
    /// later).
    pub async fn send_request(&mut self, mut v: Value) -> u64 {
        let id = self.fresh_id();
        v["id"] = json!(id);
        self.send(v).await;
        id
    }

    fn fresh_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The next frame from the socket (not the kept messages); None once the
    /// connection is closed.
    pub async fn frame(&mut self) -> Option<Message> {
        match timeout(PATIENCE, self.ws.next()).await {
            Ok(Some(Ok(m))) => Some(m),
            Ok(_) => None,
            Err(_) => panic!("no message within {PATIENCE:?}"),
        }
    }

    /// The next JSON message from the socket (not the kept messages), within
    /// PATIENCE in all (pings and pongs do not extend the wait).
    async fn next_json(&mut self) -> Result<Value, Ended> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Err(_) => panic!("no message within {PATIENCE:?}"),
                Ok(Some(Ok(Message::Text(t)))) => {
                    return Ok(serde_json::from_str(&t).expect("server sends JSON"))
                }
                Ok(Some(Ok(Message::Close(frame)))) => return Err(Ended::Closed(frame)),
                Ok(Some(Ok(_))) => continue,
                Ok(Some(Err(_))) | Ok(None) => return Err(Ended::Failed),
            }
        }
    }

    /// The next JSON message from the socket; None once it is closed.
    pub async fn read(&mut self) -> Option<Value> {
        self.next_json().await.ok()
    }

    /// The next JSON message, kept ones first.
    pub async fn recv(&mut self) -> Value {
        if let Some(v) = self.pending.pop_front() {
            return v;
        }
        match self.next_json().await {
            Ok(v) => v,
            Err(Ended::Closed(frame)) => panic!("connection closed: {frame:?}"),
            Err(Ended::Failed) => panic!("connection closed"),
        }
    }

    /// Sends `v` with a fresh `id` and returns the answer with that id; other
    /// messages meanwhile are kept for later.
    pub async fn request(&mut self, v: Value) -> Value {
        let id = self.send_request(v).await;
        loop {
            let m = match self.next_json().await {
                Ok(m) => m,
                Err(Ended::Closed(frame)) => {
                    panic!("closed while waiting for answer {id}: {frame:?}")
                }
                Err(Ended::Failed) => panic!("closed while waiting for answer {id}"),
            };
            if m["id"] == json!(id) {
                return m;
            }
            self.pending.push_back(m);
        }
    }

    /// The answer, or None when the connection closed first. Events read
    /// meanwhile are dropped (a long match would pile them up); other
    /// messages are kept.
    pub async fn try_request(&mut self, mut v: Value) -> Option<Value> {
        let id = self.fresh_id();
        v["id"] = json!(id);
        self.ws.send(Message::text(v.to_string())).await.ok()?;
        loop {
            let m = self.read().await?;
            if m["id"] == json!(id) {
                return Some(m);
            }
            if m["type"] != "event" {
                self.pending.push_back(m);
            }
        }
    }

    /// The next event of any room (skipping nothing: non-events are an error).
    pub async fn event(&mut self) -> Value {
        let m = self.recv().await;
        assert_eq!(m["type"], "event", "expected an event, got {m}");
        m["event"].clone()
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

    /// Every message read and kept while waiting for answers and events
    /// (and none again).
    pub fn kept(&mut self) -> Vec<Value> {
        self.pending.drain(..).collect()
    }

    /// Waits for the close frame; returns its code and reason.
    pub async fn closed(&mut self) -> (u16, String) {
        loop {
            match self.frame().await {
                Some(Message::Close(Some(f))) => return (u16::from(f.code), f.reason.to_string()),
                Some(Message::Close(None)) | None => return (1005, String::new()),
                Some(_) => continue,
            }
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
                    seen.push(serde_json::from_str(&t).expect("server sends JSON"))
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
}

/// A room with two seated players, alice (seat 0, who made it) and bob:
/// (room id, code, token 0, token 1, alice, bob). Alice has heard bob sit
/// down and the start.
pub async fn two_players(
    url: &str,
    spec: Value,
    clock: Option<Value>,
) -> (String, String, String, String, Client, Client) {
    two_players_trusting(url, spec, clock, &Trust::public()).await
}

/// [`two_players`], verifying a `wss://` server against `trust`.
pub async fn two_players_trusting(
    url: &str,
    spec: Value,
    clock: Option<Value>,
    trust: &Trust,
) -> (String, String, String, String, Client, Client) {
    let mut a = Client::connect_trusting(url, "alice", trust).await;
    let mut create = json!({"type": "create_room", "spec": spec});
    if let Some(c) = clock {
        create["clock"] = c;
    }
    let seated = a.request(create).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].as_str().expect("room").to_string();
    let code = seated["snapshot"]["code"]
        .as_str()
        .expect("code")
        .to_string();
    let t0 = seated["token"].as_str().expect("token").to_string();
    let mut b = Client::connect_trusting(url, "bob", trust).await;
    let seated = b.request(json!({"type": "join", "room": code})).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    assert_eq!(seated["seat"], 1);
    let t1 = seated["token"].as_str().expect("token").to_string();
    assert_eq!(a.event().await["kind"], "seated");
    assert_eq!(a.event().await["kind"], "started");
    (room, code, t0, t1, a, b)
}

/// The heaps of a snapshot's position.
pub fn heaps_of(snapshot: &Value) -> Vec<u64> {
    snapshot["position"]["heaps"]
        .as_array()
        .unwrap_or_else(|| panic!("no heaps in {snapshot}"))
        .iter()
        .map(|h| h.as_u64().expect("heap"))
        .collect()
}

/// The password of every account the tests open.
pub const PASSWORD: &str = "correct horse battery";

/// Opens a bot account named `name` and logs in: its token (every scope).
pub async fn account(url: &str, name: &str) -> String {
    let mut c = Client::raw(url).await;
    c.request(json!({"type": "hello", "version": 1})).await;
    let created = c
        .request(json!({"type": "create_account", "username": name,
                        "password": PASSWORD, "kind": "bot"}))
        .await;
    assert_eq!(created["type"], "account_created", "{created}");
    let token = c
        .request(json!({"type": "login", "username": name, "password": PASSWORD}))
        .await;
    assert_eq!(token["type"], "token", "{token}");
    token["token"].as_str().expect("the token").to_string()
}

/// Opens an account per name: their tokens, in order.
pub async fn accounts(url: &str, names: &[String]) -> Vec<String> {
    let mut tokens = Vec::with_capacity(names.len());
    for name in names {
        tokens.push(account(url, name).await);
    }
    tokens
}

/// Logs in to the account `name` (opened by [`account`]): a new token.
pub async fn login(url: &str, name: &str) -> String {
    let mut c = Client::raw(url).await;
    c.request(json!({"type": "hello", "version": 1})).await;
    let token = c
        .request(json!({"type": "login", "username": name, "password": PASSWORD}))
        .await;
    assert_eq!(token["type"], "token", "{token}");
    token["token"].as_str().expect("the token").to_string()
}
