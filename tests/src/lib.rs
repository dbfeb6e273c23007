//! The end-to-end harness: a real server on 127.0.0.1:0 over a temporary
//! SQLite file (or a cluster's node), HTTP requests, and the testkit's
//! WebSocket client, which speaks protocol v1 as any third-party client would.

pub use grundy_testkit::client::{
    account, accounts, login, two_players, Client, PASSWORD, PATIENCE,
};
pub use grundy_testkit::postgres;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use grundy_server::cluster::bus::Bus;
use grundy_server::store::{MatchStore, PgStore, SqliteStore};
use grundy_server::{Config, Server};
use serde_json::Value;

pub struct TestServer {
    pub server: Option<Server>,
    pub addr: SocketAddr,
    pub db: PathBuf,
    pub config: Config,
    _dir: tempfile::TempDir,
}

/// The server's defaults, but with loopback not counted against the
/// per-address limits (`unlimited_from`): every test client connects from
/// 127.0.0.1, and most tests open more connections, logins and accounts than
/// one address may. Tests of those limits start from `Config::default()`.
pub fn config() -> Config {
    Config {
        unlimited_from: vec![
            "127.0.0.0/8".parse().expect("range"),
            "::1/128".parse().expect("range"),
        ],
        ..Config::default()
    }
}

impl TestServer {
    pub async fn start() -> TestServer {
        Self::start_with(config()).await
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
