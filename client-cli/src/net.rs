//! Connections for the client: which server (flag, `GRUNDY_SERVER` or the
//! default), the embedded local server, connecting with retries (a server
//! that goes away gives a message and another try, never a crash; coming
//! back after a lost connection is `grundy_client::reconnect`'s).

use std::sync::Arc;

pub use grundy_client::address::parse_server;

use anyhow::{Context, Result};
use grundy_client::client::{Client, ClientError, Hello};
use grundy_client::reconnect::backoff;
use grundy_server::store::SqliteStore;
use grundy_server::{Config, Server};

pub const DEFAULT_SERVER: &str = "ws://127.0.0.1:7878";

/// A match server running inside this process, over a SQLite file in a
/// temporary folder (gone when the process ends).
pub struct Local {
    pub server: Server,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Local {
    pub async fn start() -> Result<Local> {
        let dir = tempfile::tempdir().context("cannot make a temporary folder")?;
        let store = SqliteStore::open(&dir.path().join("grundy.db"))
            .map_err(|e| anyhow::anyhow!("cannot open the local store: {e}"))?;
        let server = Server::start(
            "127.0.0.1:0".parse().context("address")?,
            Arc::new(store),
            Config::default(),
        )
        .await
        .map_err(|e| anyhow::anyhow!("cannot start the local server: {e}"))?;
        let url = format!("ws://{}", server.local_addr());
        lock(&LOCAL_URLS).push(url.clone());
        Ok(Local {
            server,
            url,
            _dir: dir,
        })
    }
}

/// The servers started in this process: they know no account, so no token
/// is offered to them.
static LOCAL_URLS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `url` is a server started in this process.
pub fn is_local(url: &str) -> bool {
    lock(&LOCAL_URLS).iter().any(|u| u == url)
}

/// The server a command talks to, and whether the person chose it: the
/// `--server` given, else `GRUNDY_SERVER`, else the default.
pub fn server_choice(flag: Option<&str>) -> (String, bool) {
    if let Some(url) = flag {
        return (url.to_string(), true);
    }
    match std::env::var("GRUNDY_SERVER") {
        Ok(v) if !v.trim().is_empty() => match parse_server(v.trim()) {
            Ok(url) => (url, true),
            Err(_) => (v.trim().to_string(), true),
        },
        _ => (DEFAULT_SERVER.to_string(), false),
    }
}

/// Connects, retrying while the server cannot be reached; gives up after
/// `attempts` tries.
pub async fn connect(url: &str, name: &str, attempts: u32) -> Result<Client, ClientError> {
    let mut n = 1;
    let hello = hello(url, name);
    loop {
        match Client::connect_as(url, &hello).await {
            Ok(c) => return Ok(c),
            Err(e) if e.connection_lost() && n < attempts => {
                eprintln!("cannot reach {url} ({e}); trying again…");
                tokio::time::sleep(backoff(n)).await;
                n += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// A refusal or failure in words for a person.
pub fn words(e: &ClientError) -> String {
    match e {
        ClientError::Refused { message, .. } => format!("the server refused: {message}"),
        ClientError::Connect { url, message } | ClientError::Unusable { url, message } => {
            format!("cannot connect to {url}: {message}")
        }
        ClientError::Closed => "the connection closed".into(),
        ClientError::Timeout(d) => format!("the server did not answer within {d:?}"),
        ClientError::Unexpected(m) => format!("unexpected answer from the server: {m}"),
    }
}

/// The token to play with on `url`: GRUNDY_TOKEN, or the one kept for it;
/// none for a server started in this process (`--local`).
pub fn token_for(url: &str) -> Result<Option<String>> {
    if is_local(url) {
        return Ok(None);
    }
    match std::env::var("GRUNDY_TOKEN") {
        Ok(t) if !t.trim().is_empty() => Ok(Some(t.trim().to_string())),
        _ => crate::tokens::kept(url),
    }
}

/// How a command that connects says hello: with the token for `url` if
/// there is one, else as a guest named `name`.
pub fn hello(url: &str, name: &str) -> Hello {
    Hello::from_token(token_for(url).ok().flatten(), name)
}
