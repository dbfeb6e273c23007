//! A malformed message must not cost the server much more than a well-formed
//! one of the same size. The error names the field that is wrong, and finding
//! it once took a re-read of the whole message per known field: six to ten
//! times the CPU of a good message, so one peer at the allowed message rate
//! could keep more than two cores busy.
//!
//! The measure is CPU time, not wall time, of the thread the server runs on
//! alone, so a loaded machine slows both sides alike. (Thread CPU clocks as
//! Linux has them.)
#![cfg(target_os = "linux")]

use std::os::unix::thread::JoinHandleExt;
use std::sync::Arc;
use std::thread::JoinHandle;

use futures_util::{SinkExt, StreamExt};
use grundy_server::store::SqliteStore;
use grundy_server::{Config, Server};
use grundy_tests::PATIENCE;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// The server binary's allocator (server/src/main.rs): what costs time in
/// glibc's depends on what the heap went through before, which would make one
/// kind of message look cheaper for coming after the other.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Messages per batch: one second's worth at the default rate limit.
const BATCH: usize = 300;
/// Batches of each kind; the cheapest of each counts (noise only adds).
const ROUNDS: usize = 3;
/// How much more a malformed message may cost than a good one.
const MAX_RATIO: f64 = 3.0;

/// A server on a thread of its own (a current-thread runtime), so that the
/// CPU time of that thread is the server's work and nobody else's.
struct ServerThread {
    url: String,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    clock: libc::clockid_t,
}

impl ServerThread {
    fn start(config: Config) -> ServerThread {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let dir = tempfile::tempdir().expect("temp dir");
                let store = SqliteStore::open(&dir.path().join("grundy.db")).expect("store");
                let addr = "127.0.0.1:0".parse().expect("addr");
                let server = Server::start(addr, Arc::new(store), config)
                    .await
                    .expect("server starts");
                ready_tx.send(server.local_addr()).expect("test waits");
                let _ = stopped.await;
                server.shutdown().await;
            });
        });
        let addr = ready_rx.recv().expect("server address");
        let mut clock: libc::clockid_t = 0;
        // SAFETY: the thread is alive (it waits for `stop`), and `clock` is a
        // valid place for the id.
        let rc = unsafe { libc::pthread_getcpuclockid(thread.as_pthread_t(), &mut clock) };
        assert_eq!(rc, 0, "no CPU clock for the server thread");
        ServerThread {
            url: format!("ws://{addr}"),
            stop: Some(stop),
            thread: Some(thread),
            clock,
        }
    }

    /// CPU time the server thread has used so far, in nanoseconds.
    fn cpu_ns(&self) -> u128 {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: the clock is the live server thread's; `t` is a valid timespec.
        let rc = unsafe { libc::clock_gettime(self.clock, &mut t) };
        assert_eq!(rc, 0, "reading the server thread's CPU clock");
        t.tv_sec as u128 * 1_000_000_000 + t.tv_nsec as u128
    }
}

impl Drop for ServerThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A `create_tournament` of about 53 KB (most of it the spec) with `rounds`
/// as given, placed last so that the typed read meets it after everything else.
fn create_tournament(rounds: Value) -> String {
    let heaps = vec![1_000_000_007u64; 4_800];
    let head = json!({
        "type": "create_tournament",
        "id": 1,
        "format": "swiss",
        "spec": {"game": "nim", "heaps": heaps},
    })
    .to_string();
    let text = format!(
        "{},\"rounds\":{rounds}}}",
        head.strip_suffix('}').expect("an object")
    );
    assert!(text.len() > 50_000 && text.len() < 60_000, "{}", text.len());
    text
}

/// Sends `text` BATCH times while reading the answers, each an error that
/// contains `expect`: the server thread's CPU time it took, in nanoseconds.
async fn batch(server: &ServerThread, ws: &mut Ws, text: &str, expect: &str) -> u128 {
    let before = server.cpu_ns();
    let (mut tx, mut rx) = ws.split();
    let send = async {
        for _ in 0..BATCH {
            tx.feed(Message::text(text)).await.expect("send");
        }
        tx.flush().await.expect("flush");
    };
    let answers = async {
        for _ in 0..BATCH {
            let m = loop {
                match timeout(PATIENCE, rx.next()).await {
                    Ok(Some(Ok(Message::Text(t)))) => break t,
                    Ok(Some(Ok(_))) => continue,
                    other => panic!("no answer: {other:?}"),
                }
            };
            let m: Value = serde_json::from_str(&m).expect("JSON");
            assert_eq!(m["code"], "bad_request", "{m}");
            assert_eq!(m["id"], 1, "{m}");
            let message = m["message"].as_str().unwrap_or_default();
            assert!(message.contains(expect), "{expect:?} not in {m}");
        }
    };
    tokio::join!(send, answers);
    server.cpu_ns() - before
}

#[tokio::test]
async fn a_malformed_message_costs_the_server_about_what_a_good_one_does() {
    let mut config = grundy_tests::config();
    // Every message admitted, and the connection kept without a hello: the
    // good message is refused cheaply ("say hello first") after it was read,
    // so both kinds cost their reading and a short answer, nothing more.
    config.limits.messages_per_second = 1_000_000;
    config.limits.burst = 1_000_000;
    config.limits.hello_timeout_ms = 600_000;
    config.limits.ping_interval_ms = 600_000;
    config.limits.idle_timeout_ms = 600_000;
    let server = ServerThread::start(config);
    let (mut ws, _) = tokio_tungstenite::connect_async(&server.url)
        .await
        .expect("connect");

    let good = create_tournament(json!(3));
    let bad = create_tournament(json!("x"));
    let (mut good_ns, mut bad_ns) = (u128::MAX, u128::MAX);
    for _ in 0..ROUNDS {
        good_ns = good_ns.min(batch(&server, &mut ws, &good, "hello first").await);
        bad_ns = bad_ns.min(
            batch(
                &server,
                &mut ws,
                &bad,
                r#"bad create_tournament message: field "rounds": invalid type: string "x", expected u32"#,
            )
            .await,
        );
    }
    let ratio = bad_ns as f64 / good_ns as f64;
    eprintln!(
        "{BATCH} messages of {} bytes: well-formed {:.1} ms, malformed {:.1} ms of server CPU: ratio {ratio:.2}",
        bad.len(),
        good_ns as f64 / 1e6,
        bad_ns as f64 / 1e6,
    );
    assert!(
        ratio <= MAX_RATIO,
        "a malformed message costs {ratio:.2} times a good one (at most {MAX_RATIO})"
    );
}
