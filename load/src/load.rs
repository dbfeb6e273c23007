//! Load generation: the "Nim duel load" against a Grundy server, the same load in
//! echo mode against a bare WebSocket echo server (the baseline every figure is
//! compared with), and idle connections (memory per connection).
//!
//! **Nim duel load.** `C` matches run at once, each on its own pair of
//! connections. One connection creates an unlisted room with [`NIM_START`], the
//! other joins it, and the players alternate: on its turn a client picks a legal
//! move with the engine (the first of `legal_moves`, i.e. one stone from the
//! first non-empty heap, so a match is always exactly [`NIM_MOVES`] moves), sends
//! it, and waits for the `moved` event that includes it. The latency of a move is
//! from the send to that event reaching the mover; the opponent moves once it
//! has seen the event too. A finished match is replaced by a new one on the same
//! pair of connections until the run ends, so room creation is part of the load.
//!
//! **Echo mode.** The same `C` pairs of connections; each round trip is one
//! ~60-byte JSON text frame and its echo, the two connections of a pair taking
//! turns, one round trip in flight per pair.
//!
//! **Relay mode.** The same again, but each frame comes back to its sender and
//! also goes to the other connection of the pair (see [`crate::baseline`]); a
//! round ends when both have it: the frame pattern of a move without the
//! server's work.
//!
//! Every refusal, error message, dropped connection or timeout counts in
//! `errors`: a run with errors is not a result.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use grundy_client::connect::{self, WebSocket};
use grundy_client::tls::{self, Trust};
use grundy_protocol::{Position, Rules, Status};
use hdrhistogram::Histogram;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::{timeout_at, Instant};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

/// The start of every Nim duel: 20 stones, so exactly 20 moves when each move
/// takes one stone (10 per player).
pub const NIM_START: &str = r#"{"game":"nim","heaps":[4,5,5,6]}"#;
/// Moves in one match of the Nim duel load.
pub const NIM_MOVES: u64 = 20;
/// The echo request: about 60 bytes, like a move message.
const ECHO_PAD: &str = "abcdefghijklmnopqrstuvwxyz01";
/// Longest wait for one answer before the pair counts an error and reconnects.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections being opened at once.
const CONNECTING_AT_ONCE: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("bad server address {0:?}: {1}")]
    Url(String, String),
    #[error("bad source address range {0:?}: {1}")]
    SourceIps(String, String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The WebSocket settings of the echo server and the load clients: the
/// Grundy server's read buffer and 64 KiB frame limit (`ws_config` in
/// server/src/connection.rs), so that the comparison is fair, but no write
/// buffer (each frame is written as it is sent; the server's is 64 KiB).
pub fn ws_config() -> WebSocketConfig {
    let max = 64 * 1024;
    WebSocketConfig::default()
        .read_buffer_size(2048)
        .write_buffer_size(0)
        .max_write_buffer_size(max.max(1 << 20) * 4)
        .max_message_size(Some(max))
        .max_frame_size(Some(max))
}

/// Reads `A-B` (an inclusive range of IPv4 addresses, e.g.
/// `127.0.0.1-127.0.0.20`) or a single address.
pub fn parse_source_ips(text: &str) -> Result<Vec<IpAddr>, LoadError> {
    let bad = |why: &str| LoadError::SourceIps(text.to_string(), why.to_string());
    let (from, to) = match text.split_once('-') {
        Some((a, b)) => (a.trim(), b.trim()),
        None => (text.trim(), text.trim()),
    };
    let from: Ipv4Addr = from.parse().map_err(|_| bad("not an IPv4 address"))?;
    let to: Ipv4Addr = to.parse().map_err(|_| bad("not an IPv4 address"))?;
    let (a, b) = (u32::from(from), u32::from(to));
    if a > b {
        return Err(bad("the range ends before it starts"));
    }
    if b - a >= 65_536 {
        return Err(bad("more than 65,536 addresses"));
    }
    Ok((a..=b).map(|n| IpAddr::V4(Ipv4Addr::from(n))).collect())
}

/// Where and how to connect.
#[derive(Clone, Debug)]
pub struct Target {
    /// The servers (a cluster's nodes), each by its URL and address:
    /// connection `n` goes to server `n` modulo their number, so the two
    /// players of a pair (connections `2p` and `2p + 1`) are on different
    /// nodes whenever there are several.
    servers: Arc<Vec<(String, SocketAddr)>>,
    /// Local addresses to bind, round robin; empty: let the system choose.
    sources: Arc<Vec<IpAddr>>,
    /// What a `wss://` server is verified against (the process's trust).
    trust: Trust,
}

impl Target {
    /// `urls`: one server's WebSocket address, or several separated by commas.
    pub async fn new(urls: &str, sources: Vec<IpAddr>) -> Result<Target, LoadError> {
        let mut servers = Vec::new();
        for url in urls.split(',').map(str::trim) {
            let bad = |why: String| LoadError::Url(url.to_string(), why);
            let request = url.into_client_request().map_err(|e| bad(e.to_string()))?;
            let uri = request.uri();
            let host = uri.host().ok_or_else(|| bad("no host".into()))?;
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let tls = uri.scheme_str() == Some("wss");
            let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
            let addr = tokio::net::lookup_host((host, port))
                .await?
                .next()
                .ok_or_else(|| bad("the host has no address".into()))?;
            servers.push((url.to_string(), addr));
        }
        Ok(Target {
            servers: Arc::new(servers),
            sources: Arc::new(sources),
            trust: tls::trust(),
        })
    }

    /// Opens WebSocket number `n` (its server and its source address are
    /// chosen by `n`).
    async fn connect(&self, n: usize) -> Result<Ws, String> {
        let (url, addr) = &self.servers[n % self.servers.len()];
        let addr = *addr;
        let tcp = if self.sources.is_empty() {
            TcpStream::connect(addr).await
        } else {
            let local = SocketAddr::new(self.sources[n % self.sources.len()], 0);
            let socket = if local.is_ipv4() {
                TcpSocket::new_v4()
            } else {
                TcpSocket::new_v6()
            }
            .map_err(|e| e.to_string())?;
            socket
                .bind(local)
                .map_err(|e| format!("bind {local}: {e}"))?;
            socket.connect(addr).await
        }
        .map_err(|e| format!("connect {addr}: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let ws = connect::handshake(url, tcp, Some(ws_config()), &self.trust)
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        Ok(Ws { ws, next_id: 1 })
    }
}

/// One client connection.
struct Ws {
    ws: WebSocket,
    next_id: u64,
}

/// Why a step of a pair failed (each counts as one error).
#[derive(Debug, thiserror::Error)]
enum Fail {
    #[error("connection dropped")]
    Dropped,
    #[error("no answer within {STEP_TIMEOUT:?}")]
    Timeout,
    /// The server answered with an error, or something the client cannot use.
    #[error("{0}")]
    Refused(String),
}

impl Ws {
    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    async fn send(&mut self, text: String) -> Result<(), Fail> {
        self.ws
            .send(Message::text(text))
            .await
            .map_err(|_| Fail::Dropped)
    }

    /// The next text frame (pings are answered by the library while reading).
    async fn text(&mut self) -> Result<tokio_tungstenite::tungstenite::Utf8Bytes, Fail> {
        loop {
            match self.ws.next().await {
                Some(Ok(Message::Text(t))) => return Ok(t),
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return Err(Fail::Dropped),
                Some(Ok(_)) => {}
            }
        }
    }

    /// The next server message, read only as far as the load needs.
    async fn msg(&mut self) -> Result<Incoming, Fail> {
        let text = self.text().await?;
        let msg: Incoming = serde_json::from_str(&text)
            .map_err(|e| Fail::Refused(format!("unreadable message ({e}): {text}")))?;
        if msg.kind == "error" {
            return Err(refusal(&text, msg.code.as_deref()));
        }
        Ok(msg)
    }

    /// Sends a request and waits for the answer with its id.
    async fn request(&mut self, id: u64, text: String) -> Result<Incoming, Fail> {
        self.send(text).await?;
        loop {
            let msg = self.msg().await?;
            if msg.id == Some(id) {
                return Ok(msg);
            }
        }
    }

    async fn hello(&mut self, name: &str) -> Result<(), Fail> {
        let id = self.id();
        let msg = self
            .request(
                id,
                json!({"type": "hello", "id": id, "version": 1, "name": name}).to_string(),
            )
            .await?;
        expect(&msg, "welcome")
    }

    /// Waits for the next `moved` event of `room`; with `ack`, also for the
    /// answer to that request (in either order). The frames are read in
    /// place (borrowed fields, nothing kept): the load tool's own CPU per
    /// move is part of what a run measures, and should be the server's.
    async fn moved(&mut self, room: &str, ack: Option<u64>) -> Result<Instant, Fail> {
        let mut at = None;
        let mut acked = ack.is_none();
        loop {
            let text = self.text().await?;
            let msg: Peek<'_> = serde_json::from_str(&text)
                .map_err(|e| Fail::Refused(format!("unreadable message ({e}): {text}")))?;
            if msg.kind == "error" {
                return Err(refusal(&text, msg.code.as_deref()));
            }
            if ack.is_some() && msg.id == ack {
                if msg.kind != "ack" {
                    return Err(Fail::Refused(format!("expected ack, got {}", msg.kind)));
                }
                acked = true;
            } else if let Some(e) = &msg.event {
                if e.kind == "moved" && msg.room.as_deref() == Some(room) && at.is_none() {
                    at = Some(Instant::now());
                }
            }
            if let (Some(at), true) = (at, acked) {
                return Ok(at);
            }
        }
    }
}

/// The error for an `error` message `text` with `code`.
fn refusal(text: &str, code: Option<&str>) -> Fail {
    if code == Some("rate_limited") {
        return Fail::Refused(format!(
            "{text}: the server's messages_per_second limit is below this \
             load; start it with --messages-per-second and --burst raised"
        ));
    }
    Fail::Refused(text.to_string())
}

/// The fields of a frame the moves' loop reads, borrowed from the frame.
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    id: Option<u64>,
    #[serde(default, borrow)]
    room: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    event: Option<PeekEvent<'a>>,
    #[serde(default, borrow)]
    code: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct PeekEvent<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
}

fn expect(msg: &Incoming, kind: &str) -> Result<(), Fail> {
    if msg.kind == kind {
        Ok(())
    } else {
        Err(Fail::Refused(format!("expected {kind}, got {}", msg.kind)))
    }
}

/// The fields of a server message the load reads; the rest is skipped.
#[derive(Deserialize)]
struct Incoming {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    room: Option<String>,
    #[serde(default)]
    token: Option<String>,
    /// An error's code.
    #[serde(default)]
    code: Option<String>,
}

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Nim,
    Echo,
    Relay,
}

#[derive(Clone, Debug)]
pub struct LoadPlan {
    pub mode: Mode,
    pub matches: usize,
    pub duration: Duration,
    pub warmup: Duration,
}

/// The one-line result.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub matches: usize,
    pub moves_per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub errors: u64,
    /// CPU per move (µs) of the server (with `--server-pid`) and of the load
    /// tool itself over the measured window, and the load tool's share of
    /// one core (near 1.0 per thread it can use means it, not the server,
    /// sets the pace).
    pub server_us_per_move: Option<f64>,
    pub load_us_per_move: Option<f64>,
    pub load_cores: Option<f64>,
}

impl Summary {
    /// Summarises latencies (µs) and the moves counted over `window`.
    pub fn of(matches: usize, hist: &Histogram<u64>, window: Duration, errors: u64) -> Summary {
        let ms = |us: u64| (us as f64 / 10.0).round() / 100.0;
        let secs = window.as_secs_f64();
        let moves = hist.len();
        let (p50, p99, max) = if moves == 0 {
            (0, 0, 0)
        } else {
            (
                hist.value_at_quantile(0.5),
                hist.value_at_quantile(0.99),
                hist.max(),
            )
        };
        Summary {
            matches,
            moves_per_s: if secs > 0.0 {
                (moves as f64 / secs * 10.0).round() / 10.0
            } else {
                0.0
            },
            p50_ms: ms(p50),
            p99_ms: ms(p99),
            max_ms: ms(max),
            errors,
            server_us_per_move: None,
            load_us_per_move: None,
            load_cores: None,
        }
    }

    /// Adds the CPU the server (if measured) and the load tool spent over
    /// `window` for the moves counted.
    pub fn with_cpu(
        mut self,
        server: Option<Duration>,
        load: Duration,
        window: Duration,
    ) -> Summary {
        let moves = self.moves_per_s * window.as_secs_f64();
        let per_move =
            |cpu: Duration| (moves > 0.0).then(|| round2(cpu.as_secs_f64() * 1e6 / moves));
        self.server_us_per_move = server.and_then(per_move);
        self.load_us_per_move = per_move(load);
        self.load_cores = Some(round2(load.as_secs_f64() / window.as_secs_f64().max(1e-9)));
        self
    }

    pub fn line(&self) -> String {
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        format!(
            "matches={} moves_per_s={:.1} p50_ms={:.2} p99_ms={:.2} max_ms={:.2} errors={} \
             server_us_per_move={} load_us_per_move={} load_cores={}",
            self.matches,
            self.moves_per_s,
            self.p50_ms,
            self.p99_ms,
            self.max_ms,
            self.errors,
            opt(self.server_us_per_move),
            opt(self.load_us_per_move),
            opt(self.load_cores)
        )
    }

    pub fn json(&self) -> Value {
        json!(self)
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// CPU time (user + system, every thread, living or gone) a process has
/// used, from `/proc/PID/stat` (Linux); `None` for `self` reads this process.
pub fn cpu_time(pid: Option<u32>) -> Option<Duration> {
    let path = pid.map_or("/proc/self/stat".to_string(), |p| format!("/proc/{p}/stat"));
    parse_cpu_ticks(&std::fs::read_to_string(path).ok()?)
        // /proc reports clock ticks of USER_HZ, which is 100 on Linux.
        .map(|ticks| Duration::from_millis(ticks * 10))
}

/// utime + stime (fields 14 and 15) of a `/proc/PID/stat` line; the command
/// name (field 2) may hold spaces and parentheses, so fields count from the
/// last `)`.
fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

fn histogram() -> Histogram<u64> {
    // 1 µs .. 10 min, 3 significant digits.
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("constant bounds are valid")
}

/// What one pair measured.
struct Tally {
    hist: Histogram<u64>,
    errors: u64,
}

/// The clock of a run: measurements count from `start` to `end`.
#[derive(Clone, Copy)]
struct Window {
    start: Instant,
    end: Instant,
}

impl Window {
    fn record(&self, tally: &mut Tally, sent: Instant, done: Instant) {
        if sent >= self.start && done <= self.end {
            let us = done.saturating_duration_since(sent).as_micros() as u64;
            let _ = tally.hist.record(us.max(1));
        }
    }
}

fn count(tally: &mut Tally, fail: Fail, errors_shown: &AtomicU64) {
    tally.errors += 1;
    // The first few errors are shown, so a failed run says why.
    if errors_shown.fetch_add(1, Ordering::Relaxed) < 5 {
        eprintln!("load: error: {fail}");
    }
}

/// Runs the load and returns its summary. The run lasts `warmup + duration`
/// after every connection is open, then stops by itself.
pub async fn run(
    target: &Target,
    plan: &LoadPlan,
    server_pid: Option<u32>,
) -> Result<Summary, LoadError> {
    let shown = Arc::new(AtomicU64::new(0));
    // Open every connection first, a few at a time.
    let gate = Arc::new(Semaphore::new(CONNECTING_AT_ONCE));
    let mut opening = tokio::task::JoinSet::new();
    for pair in 0..plan.matches {
        let (target, gate, mode) = (target.clone(), gate.clone(), plan.mode);
        opening.spawn(async move {
            let _permit = gate.acquire_owned().await;
            open_pair(&target, pair, mode).await
        });
    }
    let mut pairs = Vec::new();
    let mut setup_errors = 0;
    while let Some(done) = opening.join_next().await {
        match done {
            Ok(Ok(pair)) => pairs.push(pair),
            Ok(Err(e)) => {
                setup_errors += 1;
                if shown.fetch_add(1, Ordering::Relaxed) < 5 {
                    eprintln!("load: error opening a pair: {e}");
                }
            }
            Err(_) => setup_errors += 1,
        }
    }
    let start = Instant::now() + plan.warmup;
    let window = Window {
        start,
        end: start + plan.duration,
    };
    // The CPU both processes spend inside the window.
    let cpu = tokio::spawn(async move {
        tokio::time::sleep_until(window.start).await;
        let before = (server_pid.map(|p| cpu_time(Some(p))), cpu_time(None));
        tokio::time::sleep_until(window.end).await;
        let after = (server_pid.map(|p| cpu_time(Some(p))), cpu_time(None));
        let spent = |a: Option<Duration>, b: Option<Duration>| Some(a?.saturating_sub(b?));
        (
            spent(after.0.flatten(), before.0.flatten()),
            spent(after.1, before.1).unwrap_or_default(),
        )
    });
    let mut running = tokio::task::JoinSet::new();
    for (n, pair) in pairs.into_iter().enumerate() {
        let (target, shown, mode) = (target.clone(), shown.clone(), plan.mode);
        running.spawn(async move { drive(target, n, pair, mode, window, shown).await });
    }
    let mut all = histogram();
    let mut errors = setup_errors;
    while let Some(done) = running.join_next().await {
        match done {
            Ok(t) => {
                let _ = all.add(&t.hist);
                errors += t.errors;
            }
            Err(_) => errors += 1,
        }
    }
    let (server_cpu, load_cpu) = cpu.await.unwrap_or_default();
    Ok(
        Summary::of(plan.matches, &all, plan.duration, errors).with_cpu(
            server_cpu,
            load_cpu,
            plan.duration,
        ),
    )
}

async fn open_pair(target: &Target, pair: usize, mode: Mode) -> Result<[Ws; 2], Fail> {
    let mut a = target.connect(2 * pair).await.map_err(Fail::Refused)?;
    let mut b = target.connect(2 * pair + 1).await.map_err(Fail::Refused)?;
    let step = async {
        match mode {
            Mode::Nim => {
                a.hello(&format!("load-{pair}a")).await?;
                b.hello(&format!("load-{pair}b")).await
            }
            Mode::Relay => {
                // Pairs of this run are told apart from another run's by the pid.
                let key = (u64::from(std::process::id()) << 32) | pair as u64;
                let text = format!(r#"{{"type":"pair","pair":{key}}}"#);
                for ws in [&mut a, &mut b] {
                    ws.send(text.clone()).await?;
                    if ws.text().await?.as_str() != text {
                        return Err(Fail::Refused("the pair frame was not echoed".into()));
                    }
                }
                Ok(())
            }
            Mode::Echo => Ok(()),
        }
    };
    tokio::time::timeout(STEP_TIMEOUT, step)
        .await
        .map_err(|_| Fail::Timeout)??;
    Ok([a, b])
}

/// Plays (or echoes) on one pair until the window closes; a failure counts an
/// error, and the pair reconnects.
async fn drive(
    target: Target,
    n: usize,
    mut pair: [Ws; 2],
    mode: Mode,
    window: Window,
    shown: Arc<AtomicU64>,
) -> Tally {
    let mut tally = Tally {
        hist: histogram(),
        errors: 0,
    };
    loop {
        let outcome = match mode {
            Mode::Nim => nim_match(&mut pair, window, &mut tally).await,
            Mode::Echo => rounds(&mut pair, n, false, window, &mut tally).await,
            Mode::Relay => rounds(&mut pair, n, true, window, &mut tally).await,
        };
        match outcome {
            Ok(true) => continue,
            Ok(false) => break,
            Err(fail) => {
                count(&mut tally, fail, &shown);
                if Instant::now() >= window.end {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                match open_pair(&target, n, mode).await {
                    Ok(p) => pair = p,
                    Err(fail) => {
                        count(&mut tally, fail, &shown);
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        if Instant::now() >= window.end {
                            break;
                        }
                    }
                }
            }
        }
    }
    for ws in &mut pair {
        let _ = ws.ws.close(None).await;
    }
    tally
}

/// One match of the Nim duel load; Ok(false) when the run ended during it.
async fn nim_match(pair: &mut [Ws; 2], window: Window, tally: &mut Tally) -> Result<bool, Fail> {
    let deadline = || Instant::now() + STEP_TIMEOUT;
    let spec: Value = serde_json::from_str(NIM_START).map_err(|e| Fail::Refused(e.to_string()))?;
    let mut position = Position::from_spec(&spec).map_err(|e| Fail::Refused(e.to_string()))?;
    if Instant::now() >= window.end {
        return Ok(false);
    }
    let [a, b] = pair;
    let id = a.id();
    let create = json!({"type": "create_room", "id": id, "spec": spec, "listed": false});
    let seated = timeout_at(deadline(), a.request(id, create.to_string()))
        .await
        .map_err(|_| Fail::Timeout)??;
    expect(&seated, "seated")?;
    let (Some(room), Some(token_a)) = (seated.room, seated.token) else {
        return Err(Fail::Refused("seated without room or token".into()));
    };
    let id = b.id();
    let join = json!({"type": "join", "id": id, "room": room});
    let seated = timeout_at(deadline(), b.request(id, join.to_string()))
        .await
        .map_err(|_| Fail::Timeout)??;
    expect(&seated, "seated")?;
    let Some(token_b) = seated.token else {
        return Err(Fail::Refused("seated without a token".into()));
    };
    // Quoted once per match, for the move frames written out below.
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let (room_json, tokens) = (quoted(&room), [quoted(&token_a), quoted(&token_b)]);
    let mut turn = 0;
    while position.status() == Status::Ongoing {
        if Instant::now() >= window.end {
            return Ok(false);
        }
        let Some(mv) = position.legal_moves(1).moves.into_iter().next() else {
            return Err(Fail::Refused("no legal move in an ongoing match".into()));
        };
        let mv_json = serde_json::to_string(&mv).map_err(|e| Fail::Refused(e.to_string()))?;
        let (mover, other) = if turn == 0 {
            (&mut *a, &mut *b)
        } else {
            (&mut *b, &mut *a)
        };
        let id = mover.id();
        // Written out, not built as a JSON tree.
        let text = format!(
            r#"{{"type":"move","id":{id},"room":{room_json},"token":{},"move":{mv_json}}}"#,
            tokens[turn]
        );
        let sent = Instant::now();
        mover.send(text).await?;
        // The first failure ends the wait (a refused move is not a timeout).
        let (done, _) = timeout_at(
            deadline(),
            futures_util::future::try_join(mover.moved(&room, Some(id)), other.moved(&room, None)),
        )
        .await
        .map_err(|_| Fail::Timeout)??;
        window.record(tally, sent, done);
        position
            .play(&mv)
            .map_err(|e| Fail::Refused(e.to_string()))?;
        turn = 1 - turn;
    }
    Ok(true)
}

/// Echo or relay rounds, the pair's connections taking turns: the sender's
/// frame must come back to it and, relayed, reach the other too; Ok(false) at
/// the end.
async fn rounds(
    pair: &mut [Ws; 2],
    n: usize,
    relay: bool,
    window: Window,
    tally: &mut Tally,
) -> Result<bool, Fail> {
    let kind = if relay { "relay" } else { "echo" };
    let mut turn = 0;
    while Instant::now() < window.end {
        let [a, b] = &mut *pair;
        let (sender, other) = if turn == 0 { (a, b) } else { (b, a) };
        let id = sender.id();
        let text = format!(r#"{{"type":"{kind}","id":{id},"pair":{n},"pad":"{ECHO_PAD}"}}"#);
        let sent = Instant::now();
        sender.send(text.clone()).await?;
        let back = async {
            let back = sender.text().await?;
            Ok::<_, Fail>((back, Instant::now()))
        };
        let relayed = async {
            if relay {
                other.text().await.map(Some)
            } else {
                Ok(None)
            }
        };
        let ((back, done), relayed) = timeout_at(
            sent + STEP_TIMEOUT,
            futures_util::future::try_join(back, relayed),
        )
        .await
        .map_err(|_| Fail::Timeout)??;
        if back.as_str() != text {
            return Err(Fail::Refused(format!("{kind} differs: {}", back.as_str())));
        }
        if let Some(relayed) = relayed.filter(|r| r.as_str() != text) {
            return Err(Fail::Refused(format!(
                "relayed differs: {}",
                relayed.as_str()
            )));
        }
        window.record(tally, sent, done);
        turn = 1 - turn;
    }
    Ok(false)
}

/// What an idle run found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct IdleReport {
    pub connections: usize,
    /// Connections still open at the end.
    pub held: usize,
    pub errors: u64,
    pub rss_before_kib: Option<u64>,
    pub rss_after_kib: Option<u64>,
    pub rss_per_conn_bytes: Option<u64>,
}

impl IdleReport {
    pub fn line(&self) -> String {
        let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        format!(
            "connections={} held={} errors={} rss_before_kib={} rss_after_kib={} rss_per_conn_bytes={}",
            self.connections,
            self.held,
            self.errors,
            opt(self.rss_before_kib),
            opt(self.rss_after_kib),
            opt(self.rss_per_conn_bytes)
        )
    }
}

/// VmRSS of a process, in KiB (Linux).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    parse_vm_rss(&status)
}

fn parse_vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Opens `n` connections that say hello, list the rooms (in echo mode: send one
/// frame and read its echo), and stay idle (reading, so pings are answered) for
/// `hold`; measures the server's RSS (`server_pid`) before and once all are open.
pub async fn idle(
    target: &Target,
    mode: Mode,
    n: usize,
    hold: Duration,
    server_pid: Option<u32>,
) -> IdleReport {
    let before = server_pid.and_then(rss_kib);
    let gate = Arc::new(Semaphore::new(CONNECTING_AT_ONCE));
    let opened = Arc::new(AtomicU64::new(0));
    let shown = Arc::new(AtomicU64::new(0));
    let all_open = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let (target, gate, opened, shown) =
            (target.clone(), gate.clone(), opened.clone(), shown.clone());
        let (all_open, release) = (all_open.clone(), release.clone());
        tasks.spawn(async move {
            let permit = gate.acquire_owned().await;
            let step = async {
                let mut ws = target.connect(i).await.map_err(Fail::Refused)?;
                if mode == Mode::Echo {
                    // The baseline: one frame and its echo.
                    let text = format!(r#"{{"type":"echo","id":{i},"pad":"{ECHO_PAD}"}}"#);
                    ws.send(text.clone()).await?;
                    if ws.text().await?.as_str() != text {
                        return Err(Fail::Refused("the echo differs".into()));
                    }
                    return Ok(ws);
                }
                ws.hello(&format!("idle-{i}")).await?;
                let id = ws.id();
                let rooms = ws
                    .request(id, json!({"type": "list_rooms", "id": id}).to_string())
                    .await?;
                expect(&rooms, "rooms")?;
                Ok::<Ws, Fail>(ws)
            };
            let opened_ws = tokio::time::timeout(STEP_TIMEOUT * 3, step)
                .await
                .unwrap_or(Err(Fail::Timeout));
            drop(permit);
            if opened.fetch_add(1, Ordering::Relaxed) + 1 == n as u64 {
                all_open.notify_one();
            }
            let mut ws = match opened_ws {
                Ok(ws) => ws,
                Err(e) => {
                    if shown.fetch_add(1, Ordering::Relaxed) < 5 {
                        eprintln!("idle: error opening connection {i}: {e}");
                    }
                    return Err(());
                }
            };
            // Idle: read (answering pings) until released.
            let released = release.notified();
            tokio::pin!(released);
            loop {
                tokio::select! {
                    _ = &mut released => break,
                    m = ws.ws.next() => match m {
                        Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return Err(()),
                        Some(Ok(_)) => {}
                    }
                }
            }
            let _ = ws.ws.close(None).await;
            Ok(())
        });
    }
    if n > 0 {
        all_open.notified().await;
    }
    eprintln!("idle: {n} connections opened; holding for {hold:?}");
    // Let the server settle (pings, allocator), then measure, then hold.
    tokio::time::sleep(hold.min(Duration::from_secs(5))).await;
    let after = server_pid.and_then(rss_kib);
    tokio::time::sleep(hold.saturating_sub(Duration::from_secs(5))).await;
    release.notify_waiters();
    let (mut held, mut errors) = (0, 0);
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(Ok(())) => held += 1,
            _ => errors += 1,
        }
    }
    let per_conn = match (before, after) {
        (Some(b), Some(a)) if n > 0 => Some(a.saturating_sub(b) * 1024 / n as u64),
        _ => None,
    };
    IdleReport {
        connections: n,
        held,
        errors,
        rss_before_kib: before,
        rss_after_kib: after,
        rss_per_conn_bytes: per_conn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_ranges() {
        let ips = parse_source_ips("127.0.0.1-127.0.0.20").unwrap();
        assert_eq!(ips.len(), 20);
        assert_eq!(ips[19], IpAddr::V4(Ipv4Addr::new(127, 0, 0, 20)));
        assert_eq!(parse_source_ips("127.0.0.5").unwrap().len(), 1);
        assert_eq!(parse_source_ips("127.0.1.250-127.0.2.4").unwrap().len(), 11);
        assert!(parse_source_ips("127.0.0.9-127.0.0.1").is_err());
        assert!(parse_source_ips("localhost").is_err());
        assert!(parse_source_ips("10.0.0.0-10.2.0.0").is_err());
    }

    #[test]
    fn summary_line_and_json() {
        let mut h = histogram();
        for us in 1..=1000u64 {
            h.record(us * 10).unwrap();
        }
        let s = Summary::of(100, &h, Duration::from_secs(2), 0);
        assert_eq!(s.moves_per_s, 500.0);
        assert!((s.p50_ms - 5.0).abs() < 0.05, "{s:?}");
        assert!((s.p99_ms - 9.9).abs() < 0.05, "{s:?}");
        assert!((s.max_ms - 10.0).abs() < 0.05, "{s:?}");
        let line = s.line();
        assert!(
            line.starts_with("matches=100 moves_per_s=500.0 p50_ms="),
            "{line}"
        );
        assert!(line.contains(" errors=0 server_us_per_move=- "), "{line}");
        let measured = s.clone().with_cpu(
            Some(Duration::from_millis(50)),
            Duration::from_millis(20),
            Duration::from_secs(2),
        );
        // 1,000 moves: 50 ms of server CPU is 50 µs a move; 20 ms over 2 s is 0.01 core.
        assert_eq!(measured.server_us_per_move, Some(50.0));
        assert_eq!(measured.load_us_per_move, Some(20.0));
        assert_eq!(measured.load_cores, Some(0.01));
        let v = s.json();
        for key in [
            "matches",
            "moves_per_s",
            "p50_ms",
            "p99_ms",
            "max_ms",
            "errors",
        ] {
            assert!(v.get(key).is_some(), "{key} missing in {v}");
        }
        let empty = Summary::of(1, &histogram(), Duration::from_secs(1), 3);
        assert_eq!(
            empty.line(),
            "matches=1 moves_per_s=0.0 p50_ms=0.00 p99_ms=0.00 max_ms=0.00 errors=3 \
             server_us_per_move=- load_us_per_move=- load_cores=-"
        );
    }

    #[test]
    fn nim_start_has_the_documented_length() {
        let spec: Value = serde_json::from_str(NIM_START).unwrap();
        let mut p = Position::from_spec(&spec).unwrap();
        let mut moves = 0;
        while p.status() == Status::Ongoing {
            let mv = p.legal_moves(1).moves.into_iter().next().unwrap();
            p.play(&mv).unwrap();
            moves += 1;
        }
        assert_eq!(moves, NIM_MOVES);
    }

    #[test]
    fn cpu_ticks() {
        let stat = "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0";
        assert_eq!(parse_cpu_ticks(stat), Some(300));
        assert_eq!(parse_cpu_ticks("42 (x) S 1"), None);
        assert!(cpu_time(None).is_some());
    }

    #[test]
    fn vm_rss() {
        let status = "Name:\tx\nVmPeak:\t  100 kB\nVmRSS:\t   2048 kB\nThreads: 3\n";
        assert_eq!(parse_vm_rss(status), Some(2048));
        assert_eq!(parse_vm_rss("Name: x\n"), None);
    }
}
