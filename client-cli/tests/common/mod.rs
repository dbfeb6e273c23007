//! What the tests of the real `grundy` binary share: a server started here on
//! port 0, and the binary in a pseudo-terminal.

// Each test file uses part of this.
#![allow(dead_code)]

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use grundy_server::store::SqliteStore;
use grundy_server::{Config, Server};
use rexpect::session::{spawn_command, PtySession};

/// How long a pty waits for expected output before the test fails.
pub const PATIENCE_MS: u64 = 20_000;

pub struct TestServer {
    pub rt: tokio::runtime::Runtime,
    server: Option<Server>,
    addr: std::net::SocketAddr,
    db: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl TestServer {
    pub fn start() -> TestServer {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("grundy.db");
        let server = rt.block_on(boot(&db, "127.0.0.1:0".parse().expect("addr")));
        TestServer {
            addr: server.local_addr(),
            server: Some(server),
            rt,
            db,
            _dir: dir,
        }
    }

    pub fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    /// Shuts the server down, waits, and starts it again on the same address.
    pub fn restart_in_place(&mut self, down_for: Duration) {
        if let Some(s) = self.server.take() {
            self.rt.block_on(s.shutdown());
        }
        std::thread::sleep(down_for);
        self.server = Some(self.rt.block_on(boot(&self.db, self.addr)));
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            self.rt.block_on(s.shutdown());
        }
    }
}

async fn boot(db: &std::path::Path, addr: std::net::SocketAddr) -> Server {
    let store = SqliteStore::open(db).expect("store");
    // Every client of these tests is on this host: the per-address limits
    // (a lobby test opens more rooms than `open_rooms_per_ip`) count none.
    let config = Config {
        unlimited_from: vec!["127.0.0.0/8".parse().expect("range")],
        ..Config::default()
    };
    Server::start(addr, Arc::new(store), config)
        .await
        .expect("server starts")
}

/// `grundy ARGS` in a pseudo-terminal, in plain-line mode (`TERM=dumb`:
/// rexpect answers no terminal queries, which the line editor makes), with
/// this test binary's own config folder (kept seats, past games).
pub fn grundy_pty(args: &[&str]) -> PtySession {
    grundy_pty_in(shared_config(), args)
}

/// `grundy ARGS` with `config` as its config folder, no colours, and no
/// server or token from the environment.
pub fn grundy_command(config: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_grundy"));
    cmd.args(args)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", config)
        .env("HOME", config)
        .env_remove("GRUNDY_SERVER")
        .env_remove("GRUNDY_TOKEN");
    cmd
}

/// `grundy ARGS` in a pseudo-terminal with `config` as its config folder.
pub fn grundy_pty_in(config: &std::path::Path, args: &[&str]) -> PtySession {
    let mut cmd = grundy_command(config, args);
    cmd.env("TERM", "dumb");
    spawn_command(cmd, Some(PATIENCE_MS)).expect("spawn grundy")
}

/// `grundy ARGS` run to the end without a terminal, its output kept (this
/// binary's config folder, no server or token from the environment).
pub fn grundy(args: &[&str]) -> std::process::Output {
    grundy_command(shared_config(), args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run grundy")
}

/// `grundy ARGS` run to the end with `input` piped to it, as a script
/// would (this binary's config folder, no server or token from the
/// environment).
pub fn grundy_piped(args: &[&str], input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = grundy_command(shared_config(), args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run grundy");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("write");
    drop(stdin);
    child.wait_with_output().expect("grundy ends")
}

/// Opens a listed, untimed room of `spec` for a person: the room's id, the
/// seat token and the snapshot.
pub async fn open_room(
    c: &mut grundy_client::client::Client,
    spec: serde_json::Value,
) -> (String, String, grundy_protocol::wire::Snapshot) {
    use grundy_protocol::wire::{ClientBody, ClientMsg, ServerBody, ServerMsg};
    let answer = c
        .request(|id| ClientMsg {
            id,
            body: ClientBody::CreateRoom {
                spec: Some(spec),
                random: None,
                clock: None,
                listed: true,
                seat: None,
                bot: None,
                hints: false,
                rated: false,
            },
        })
        .await
        .expect("a room");
    match answer {
        ServerMsg {
            body:
                ServerBody::Seated {
                    room,
                    token,
                    snapshot,
                    ..
                },
            ..
        } => (room, token, snapshot),
        other => panic!("not seated: {other:?}"),
    }
}

/// A config folder for the tests of this binary that need none of their own.
pub fn shared_config() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

/// Waits for `text`; returns what came before it.
pub fn expect(p: &mut PtySession, text: &str) -> String {
    match p.exp_string(text) {
        Ok(before) => before,
        Err(e) => panic!("expected {text:?}: {e}"),
    }
}
