//! The load tool (`grundy-load run` and `idle`) against a real server and
//! against the baselines: every mode runs without errors, and the Nim duel load
//! really plays whole matches, one after another on the same connections.
//! (How fast is for scripts/bench.sh, not for tests.)

use std::time::Duration;

use grundy_load::load::{self, LoadPlan, Mode, Target, NIM_MOVES};
use grundy_server::Config;
use grundy_tests::TestServer;

/// The server's per-connection rate limit would refuse a load's moves; a load
/// test lifts it, as scripts/bench.sh does.
fn unlimited() -> Config {
    let mut config = grundy_tests::config();
    config.limits.messages_per_second = 1_000_000;
    config.limits.burst = 1_000_000;
    config
}

fn plan(mode: Mode, matches: usize) -> LoadPlan {
    LoadPlan {
        mode,
        matches,
        duration: Duration::from_millis(800),
        warmup: Duration::from_millis(200),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nim_duel_load_plays_whole_matches_on_the_same_connections() {
    let server = TestServer::start_with(unlimited()).await;
    let target = Target::new(&server.url(), Vec::new())
        .await
        .expect("target");
    let matches = 4;
    let summary = load::run(&target, &plan(Mode::Nim, matches), None)
        .await
        .expect("run");
    assert_eq!(summary.errors, 0, "{summary:?}");
    assert_eq!(summary.matches, matches);
    assert!(summary.moves_per_s > 0.0, "{summary:?}");
    assert!(summary.p50_ms <= summary.p99_ms && summary.p99_ms <= summary.max_ms);

    // Every finished match in the store is a whole Nim duel of NIM_MOVES moves,
    // and there are more of them than pairs: finished matches were replaced.
    let db = rusqlite::Connection::open(&server.db).expect("db");
    let per_room: Vec<i64> = db
        .prepare(
            "SELECT (SELECT COUNT(*) FROM events e
                     WHERE e.room_no = r.no AND e.body LIKE '%\"kind\":\"moved\"%')
             FROM rooms r WHERE r.result IS NOT NULL",
        )
        .expect("query")
        .query_map([], |row| row.get(0))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("counts");
    assert!(
        per_room.len() > matches,
        "only {} finished matches for {matches} pairs",
        per_room.len()
    );
    assert!(
        per_room.iter().all(|&moves| moves == NIM_MOVES as i64),
        "{per_room:?}"
    );
}

async fn baseline() -> Target {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("ws://{}", listener.local_addr().expect("addr"));
    tokio::spawn(grundy_load::baseline::serve(listener));
    Target::new(&url, Vec::new()).await.expect("target")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_and_relay_rounds_run_without_errors() {
    let target = baseline().await;
    for mode in [Mode::Echo, Mode::Relay] {
        // A relay round fails (an error) unless both connections of the pair
        // get the frame back exactly as sent.
        let summary = load::run(&target, &plan(mode, 3), None).await.expect("run");
        assert_eq!(summary.errors, 0, "{mode:?}: {summary:?}");
        assert!(summary.moves_per_s > 0.0, "{mode:?}: {summary:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_held_and_measured() {
    let server = TestServer::start().await;
    let target = Target::new(&server.url(), Vec::new())
        .await
        .expect("target");
    // The server runs in this process: its RSS is this process's.
    let report = load::idle(
        &target,
        Mode::Nim,
        20,
        Duration::from_millis(300),
        Some(std::process::id()),
    )
    .await;
    assert_eq!((report.held, report.errors), (20, 0), "{report:?}");
    assert!(report.rss_after_kib.is_some() && report.rss_per_conn_bytes.is_some());
}
