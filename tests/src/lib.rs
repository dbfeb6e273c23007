//! The end-to-end harness: a real server on 127.0.0.1:0 over a temporary
//! SQLite file, and WebSocket clients that speak protocol v1 as any third-party
//! client would.

pub use grundy_testkit::postgres;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grundy_server::cluster::bus::Bus;
use grundy_server::store::{MatchStore, PgStore, SqliteStore};
use grundy_server::{Config, Server};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a test waits for any one message before failing.
pub const PATIENCE: Duration = Duration::from_secs(10);

pub struct TestServer {
    pub server: Option<Server>,
    pub addr: SocketAddr,
    pub db: PathBuf,
    pub config: Config,
    _dir: tempfile::TempDir,
}

impl TestServer {
    pub async fn start() -> TestServer {
        Self::start_with(Config::default()).await
    }

    pub async fn start_with(config: Config) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("grundy.db");
        let server = boot(&db, config.clone()).await;
        TestServer {
            addr: server.local_addr(),
            server: Some(server),
            db,
            config,
            _dir: dir,
        }
    }

    pub fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    /// Shuts the server down gracefully and starts a new one over the same file
    /// (on a new port).
    pub async fn restart(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown().await;
        }
        let server = boot(&self.db, self.config.clone()).await;
        self.addr = server.local_addr();
        self.server = Some(server);
    }

    /// Shuts the server down gracefully and starts a new one over the same file
    /// on the same address, so clients that reconnect on their own find it.
    pub async fn restart_in_place(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown().await;
        }
        let store = SqliteStore::open(&self.db).expect("open store");
        let server = Server::start(self.addr, Arc::new(store), self.config.clone())
            .await
            .expect("server restarts on the same address");
        self.server = Some(server);
    }

    pub async fn stop(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown().await;
        }
    }
}

async fn boot(db: &std::path::Path, config: Config) -> Server {
    let store = SqliteStore::open(db).expect("open store");
    Server::start(
        "127.0.0.1:0".parse().expect("addr"),
        Arc::new(store),
        config,
    )
    .await
    .expect("server starts")
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub struct Client {
    pub ws: Ws,
    next_id: u64,
    /// Messages read while waiting for something else.
    pending: VecDeque<Value>,
}

impl Client {
    /// Connects without saying hello.
    pub async fn raw(url: &str) -> Client {
        let (ws, _) = tokio::time::timeout(PATIENCE, tokio_tungstenite::connect_async(url))
            .await
            .unwrap_or_else(|_| panic!("no connection to {url} within {PATIENCE:?}"))
            .expect("connect");
        Client {
            ws,
            next_id: 1,
            pending: VecDeque::new(),
        }
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

    /// Connects and says hello as `name`.
    pub async fn connect(url: &str, name: &str) -> Client {
        let mut c = Client::raw(url).await;
        let welcome = c
            .request(json!({"type": "hello", "version": 1, "name": name}))
            .await;
        assert_eq!(welcome["type"], "welcome", "{welcome}");
        c
    }

    pub async fn send(&mut self, v: Value) {
        self.ws
            .send(Message::text(v.to_string()))
            .await
            .expect("send");
    }

    pub async fn send_text(&mut self, text: &str) {
        self.ws
            .send(Message::text(text.to_string()))
            .await
            .expect("send");
    }

    /// The next message from the socket (not the pending queue); None once the
    /// connection is closed.
    pub async fn read(&mut self) -> Option<Message> {
        match tokio::time::timeout(PATIENCE, self.ws.next()).await {
            Ok(Some(Ok(m))) => Some(m),
            Ok(_) => None,
            Err(_) => panic!("no message within {PATIENCE:?}"),
        }
    }

    /// The next text message, within PATIENCE in all (pings and pongs do not
    /// extend the wait); None once the connection is closed.
    async fn read_text(&mut self) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Err(_) => panic!("no message within {PATIENCE:?}"),
                Ok(Some(Ok(Message::Text(t)))) => {
                    return Some(serde_json::from_str(&t).expect("server sends JSON"))
                }
                Ok(Some(Ok(Message::Close(f)))) => panic!("connection closed: {f:?}"),
                Ok(Some(Ok(_))) => continue,
                Ok(_) => return None,
            }
        }
    }

    /// The next JSON message, pending ones first.
    pub async fn recv(&mut self) -> Value {
        if let Some(v) = self.pending.pop_front() {
            return v;
        }
        self.read_text().await.expect("connection closed")
    }

    /// Sends `v` with a fresh `id` and returns the answer with that id; other
    /// messages meanwhile are kept for later.
    pub async fn request(&mut self, mut v: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        v["id"] = json!(id);
        self.send(v).await;
        let mut seen = Vec::new();
        loop {
            let m = self
                .read_text()
                .await
                .unwrap_or_else(|| panic!("closed while waiting for answer {id}"));
            if m["id"] == json!(id) {
                self.pending.extend(seen);
                return m;
            }
            seen.push(m);
        }
    }

    /// The next event of any room (skipping nothing: non-events are an error).
    pub async fn event(&mut self) -> Value {
        let m = self.recv().await;
        assert_eq!(m["type"], "event", "expected an event, got {m}");
        m["event"].clone()
    }

    /// Waits for the close frame; returns its code and reason.
    pub async fn closed(&mut self) -> (u16, String) {
        loop {
            match self.read().await {
                Some(Message::Close(Some(f))) => return (u16::from(f.code), f.reason.to_string()),
                Some(Message::Close(None)) | None => return (1005, String::new()),
                Some(_) => continue,
            }
        }
    }
}

/// A room with two seated players: (room id, code, token 0, token 1, player 0,
/// player 1). The `started` event is consumed from both.
pub async fn two_players(
    url: &str,
    spec: Value,
    clock: Option<Value>,
) -> (String, String, String, String, Client, Client) {
    let mut a = Client::connect(url, "alice").await;
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
    let mut b = Client::connect(url, "bob").await;
    let seated = b.request(json!({"type": "join", "room": code})).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    assert_eq!(seated["seat"], 1);
    let t1 = seated["token"].as_str().expect("token").to_string();
    // Alice hears bob sit down and the start.
    assert_eq!(a.event().await["kind"], "seated");
    assert_eq!(a.event().await["kind"], "started");
    (room, code, t0, t1, a, b)
}

/// An HTTP answer, read whole.
#[derive(Debug)]
pub struct HttpAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpAnswer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
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

/// `method path` against the server at `addr` (an HTTP/1.1 client of the
/// Rust ecosystem, as any tool would use).
pub async fn http(addr: SocketAddr, method: &str, path: &str) -> HttpAnswer {
    http_with(addr, method, path, &[]).await
}

pub async fn http_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> HttpAnswer {
    use http_body_util::{BodyExt, Empty};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;

    let client: Client<_, Empty<bytes::Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(format!("http://{addr}{path}"));
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let request = builder.body(Empty::new()).expect("request");
    let response = tokio::time::timeout(PATIENCE, client.request(request))
        .await
        .unwrap_or_else(|_| panic!("no answer to {method} {path} within {PATIENCE:?}"))
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    HttpAnswer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// A cluster's node in this process, on the PostgreSQL database `db` and
/// the bus at `bus`, with a lease of one second.
pub async fn cluster_node(db: &str, bus: &str, config: Config) -> Server {
    let url = db.to_owned();
    let store = tokio::task::spawn_blocking(move || {
        PgStore::open_node(&url, Duration::from_millis(1000)).expect("a node's store")
    })
    .await
    .expect("opened");
    let store: Arc<dyn MatchStore> = Arc::new(store);
    let cluster = store.cluster().expect("a node");
    let (name, secret) = cluster.identity();
    let bus = Bus::connect(bus, &name, secret, cluster.node())
        .await
        .expect("the bus");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    Server::start_node(listener, store, config, Some(bus))
        .await
        .expect("the node starts")
}
