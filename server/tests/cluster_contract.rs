//! The client's contract across a cluster's failures: every command a node
//! took gets exactly one answer, an `ack` is never left without its event,
//! and a connection the cluster must drop is closed with a reason that
//! says what happened, whatever happens to the room's node (killed with
//! SIGKILL, paused with SIGSTOP, its database stalled); and a node stops
//! within its bound with the bus gone. Real `grundy-server` processes on
//! PostgreSQL and NATS, as in `server/tests/cluster.rs`.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use grundy_testkit::client::Client;
use support::{signal_pid, Process};

/// A match across two nodes: alice plays on the room's node, bob through
/// another node (his commands and its events cross the bus).
struct Across {
    room: String,
    alice: Client,
    bob: Client,
    t1: String,
}

/// Alice creates a room on `owner`, bob joins it from `other`, alice makes
/// the first move and bob sees it (his stream of the room's events comes
/// through the bus): bob is to move.
async fn across(owner: &Process, other: &Process) -> Across {
    let mut alice = Client::connect(&owner.url, "alice").await;
    let seated = alice
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [3, 4, 5]}}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].as_str().expect("room").to_owned();
    let t0 = seated["token"].as_str().expect("token").to_owned();
    let mut bob = Client::connect(&other.url, "bob").await;
    let seated = bob.request(json!({"type": "join", "room": room})).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let t1 = seated["token"].as_str().expect("token").to_owned();
    let ack = alice
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    assert_eq!(bob.until("moved").await["seq"], ack["seq"]);
    Across {
        room,
        alice,
        bob,
        t1,
    }
}

/// Nodes on one fresh database and a bus, each started with `args` too.
async fn nodes<const N: usize>(bus: &str, args: &[&str]) -> Option<[Process; N]> {
    let postgres = grundy_testkit::postgres::or_skip()?;
    let db = postgres.fresh_database();
    let mut all = vec!["--cluster", "--bus", bus];
    all.extend_from_slice(args);
    let mut started = Vec::with_capacity(N);
    for _ in 0..N {
        started.push(Process::start_with(&db, &all).await);
    }
    started.try_into().ok()
}

/// Waits until some node other than the dead one serves `room` (a fresh
/// connection to `url` watches it).
async fn taken_over(url: &str, room: &str) -> Duration {
    let asked = Instant::now();
    loop {
        assert!(
            asked.elapsed() < Duration::from_secs(15),
            "not taken over within 15 s"
        );
        let mut peer = Client::connect(url, "carol").await;
        let back = peer
            .try_request(json!({"type": "watch", "room": room}))
            .await;
        if back.is_some_and(|back| back["type"] == "watching") {
            return asked.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The moves of `room` as the store has them (asked on `url`).
async fn moves_of(url: &str, room: &str) -> Vec<Value> {
    let mut peer = Client::connect(url, "dave").await;
    let record = peer
        .request(json!({"type": "get_match", "room": room}))
        .await;
    record["record"]["moves"]
        .as_array()
        .unwrap_or_else(|| panic!("no record: {record}"))
        .iter()
        .map(|m| m["move"].clone())
        .collect()
}

/// Sends `msg` and reads up to the close: the one answer to it (asserted
/// to be the only one), how long it took, the close's code and reason.
async fn answered_then_closed(peer: &mut Client, msg: Value) -> (Value, Duration, (u16, String)) {
    let sent = Instant::now();
    let id = peer.send_request(msg).await;
    let mut answer = None;
    let mut took = Duration::ZERO;
    let (seen, close) = loop {
        // Timed from the send: the answer, then the close.
        match tokio::time::timeout(Duration::from_secs(10), peer.read()).await {
            Ok(Some(m)) if m["id"] == json!(id) => {
                assert!(answer.is_none(), "a second answer: {m}");
                took = sent.elapsed();
                answer = Some(m);
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break peer.until_closed().await,
        }
        if answer.is_some() {
            break peer.until_closed().await;
        }
    };
    assert!(
        seen.iter().all(|m| m["id"] != json!(id)),
        "a second answer: {seen:?}"
    );
    let answer = answer.unwrap_or_else(|| panic!("no answer before the close; read {seen:?}"));
    (answer, took, close.expect("a close frame"))
}

/// The held-out crash test's second failure: with a short lease, a move sent
/// through a live node after the room's node was killed (and another node
/// took the room over) was acknowledged by the new owner, and its event
/// never came. Now the client's node sees that the node its stream came
/// from stopped without handing the room over: the move is refused (not
/// carried out), and the connection closed at once to resume; after the
/// resume, the move's ack is followed by its event.
#[tokio::test]
async fn a_move_after_the_rooms_node_was_killed_is_refused_and_its_client_resumes() {
    let Some(nats) = grundy_testkit::nats::or_skip() else {
        return;
    };
    let Some([mut owner, other, third]) = nodes(&nats.url(), &["--lease-ms", "1000"]).await else {
        return;
    };
    let Across {
        room, mut bob, t1, ..
    } = across(&owner, &other).await;
    owner.kill_hard().await;
    let took = taken_over(&third.url, &room).await;
    eprintln!("taken over {took:?} after the kill");

    let mv = json!({"type": "move", "room": room, "token": t1, "move": {"heap": 1, "take": 1}});
    let (answer, answered_in, (code, reason)) = answered_then_closed(&mut bob, mv.clone()).await;
    assert_eq!(
        answer["type"], "error",
        "no ack without its event: {answer}"
    );
    assert_eq!(answer["code"], "internal", "{answer}");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(message.contains("not carried out"), "{message}");
    assert!(answered_in < Duration::from_secs(2), "{answered_in:?}");
    assert_eq!(code, 1012, "{reason}");
    assert!(reason.contains("moved to another node"), "{reason}");
    assert_eq!(
        moves_of(&third.url, &room).await.len(),
        1,
        "not carried out"
    );

    // Resumed on the same node, bob moves: the ack, then its event.
    let mut bob = Client::connect(&other.url, "bob").await;
    let back = bob
        .request(json!({"type": "resume", "room": room, "token": t1, "since": 1}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    let ack = bob.request(mv).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let moved = bob.until("moved").await;
    assert_eq!(moved["seq"], ack["seq"], "{moved}");
}

/// The held-out crash test's first failure: a move that the room's node
/// took, and that it was still making durable when it was killed, was
/// never answered, and its connection was closed 5 s later as a slow
/// reader. Now its client's node answers it within 3 s (it may or may not
/// have been carried out) and closes the connection saying why. The room's
/// node is held in its write by pausing its database sessions.
#[tokio::test]
async fn a_move_taken_by_a_node_killed_before_answering_is_answered_within_3_s() {
    let Some(nats) = grundy_testkit::nats::or_skip() else {
        return;
    };
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    let Some([mut owner, other]) = nodes(&nats.url(), &["--lease-ms", "1000"]).await else {
        return;
    };
    let Across {
        room, mut bob, t1, ..
    } = across(&owner, &other).await;
    let owner_pid = owner.child.id().expect("running");
    let db = owner_db(&owner);
    let sessions = postgres.sessions_named(&db, &format!("grundy-server {owner_pid}"));
    assert!(!sessions.is_empty(), "the owner's database sessions");
    for &pid in &sessions {
        signal_pid(pid, "STOP").await;
    }
    let mv = json!({"type": "move", "room": room, "token": t1, "move": {"heap": 1, "take": 1}});
    let id = bob.send_request(mv).await;
    let sent = Instant::now();
    // The owner takes it and waits for its database; then it dies.
    tokio::time::sleep(Duration::from_millis(300)).await;
    owner.kill_hard().await;
    for &pid in &sessions {
        signal_pid(pid, "CONT").await;
    }
    let (seen, close) = bob.until_closed().await;
    let answers: Vec<&Value> = seen.iter().filter(|m| m["id"] == json!(id)).collect();
    assert_eq!(answers.len(), 1, "exactly one answer: {seen:?}");
    let answer = answers[0];
    assert_eq!(answer["type"], "error", "{answer}");
    assert_eq!(answer["code"], "internal", "{answer}");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(message.contains("may or may not"), "{message}");
    let closed_in = sent.elapsed();
    assert!(closed_in < Duration::from_millis(4500), "{closed_in:?}");
    let (code, reason) = close.expect("a close frame");
    assert_eq!(code, 1012, "{reason}");
    assert!(reason.contains("stopped answering"), "{reason}");
    // It was never made durable: the room goes on from alice's move.
    taken_over(&other.url, &room).await;
    assert_eq!(moves_of(&other.url, &room).await.len(), 1);
}

/// The database URL a node was started with (its `--db` argument, as the
/// tests pass it).
fn owner_db(node: &Process) -> String {
    node.db.clone()
}

/// A move sent through a live node to the room's node while that node is
/// paused (SIGSTOP; its lease, long, still holds) is answered within 3 s
/// and its connection closed saying why; when the paused node goes on, it
/// drops the move, which came after its deadline: the move never runs
/// after its client was told it may not have.
#[tokio::test]
async fn a_move_sent_to_a_paused_node_is_answered_in_time_and_never_runs_later() {
    let Some(nats) = grundy_testkit::nats::or_skip() else {
        return;
    };
    let Some([paused, other]) = nodes(&nats.url(), &["--lease-ms", "60000"]).await else {
        return;
    };
    let Across {
        room,
        mut alice,
        mut bob,
        t1,
    } = across(&paused, &other).await;
    paused.signal("STOP").await;
    let mv = json!({"type": "move", "room": room, "token": t1, "move": {"heap": 1, "take": 1}});
    let answered = answered_then_closed(&mut bob, mv).await;
    paused.signal("CONT").await;
    let (answer, took, (code, reason)) = answered;
    // What each node did, should it have carried the move out after all.
    assert_eq!(
        answer["type"],
        "error",
        "{answer}\n--- the paused node:\n{}\n--- the other node:\n{}",
        paused.log(),
        other.log()
    );
    assert_eq!(answer["code"], "internal", "{answer}");
    assert!(took < Duration::from_millis(3800), "{took:?}");
    assert_eq!(code, 1012, "{reason}");
    assert!(reason.contains("stopped answering"), "{reason}");

    // The paused node read the move late and dropped it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while paused.logged("came after its deadline") == 0 {
        assert!(Instant::now() < deadline, "no late command dropped");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let record = alice
        .request(json!({"type": "get_match", "room": room}))
        .await;
    let moves = record["record"]["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 1, "only alice's move: {record}");
}

/// The held-out crash test's fourth failure: a node stopped with SIGTERM
/// while the bus was down hung until the bus came back. Now it exits
/// within its bound, and says what it could not hand over.
#[tokio::test]
async fn a_node_stopped_while_the_bus_is_down_exits_in_time() {
    let Some(mut nats) = grundy_testkit::nats::own_or_skip() else {
        return;
    };
    let Some([mut owner, other]) = nodes(&nats.url(), &["--lease-ms", "1000"]).await else {
        return;
    };
    // A client of the other node plays in the owner's room: the owner has
    // something to hand over.
    let _match = across(&owner, &other).await;
    nats.kill();
    let asked = Instant::now();
    let status = owner.terminate().await;
    let took = asked.elapsed();
    eprintln!("stopped in {took:?} with the bus down");
    assert!(status.success(), "{status:?}");
    assert!(owner.logged("not connected at shutdown") > 0);
}

/// `GET path` on the node at `url` (its `ws://` address): the status and
/// the body.
async fn get(url: &str, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = url.trim_start_matches("ws://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_string(&mut answer))
        .await
        .expect("an answer within 10 s")
        .expect("read");
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{answer}"));
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or_default();
    (status, body.to_owned())
}

/// A node says which node it is (its log, /metrics, /healthz), and whether
/// it holds its lease: a node whose database sessions stall loses it, and
/// its health check says so.
#[tokio::test]
async fn a_node_says_its_id_and_whether_it_holds_its_lease() {
    let Some(nats) = grundy_testkit::nats::or_skip() else {
        return;
    };
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    let Some([node]) = nodes(&nats.url(), &["--lease-ms", "1000"]).await else {
        return;
    };
    let (status, body) = get(&node.url, "/healthz").await;
    assert_eq!(status, 200, "{body}");
    let health: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(health["lease"], true, "{health}");
    let id = health["node"].as_str().expect("the node's id").to_owned();
    assert_eq!(id.len(), 32, "{health}");
    assert_eq!(node.logged(&format!("joined the cluster as node {id}")), 1);
    let (_, metrics) = get(&node.url, "/metrics").await;
    assert!(
        metrics.contains(&format!("grundy_node_info{{node=\"{id}\"}} 1")),
        "{metrics}"
    );
    assert!(metrics.contains("grundy_node_lease_held 1"), "{metrics}");

    let pid = node.child.id().expect("running");
    let sessions = postgres.sessions_named(&node.db, &format!("grundy-server {pid}"));
    for &session in &sessions {
        signal_pid(session, "STOP").await;
    }
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let (status, body) = get(&node.url, "/healthz").await;
    let (_, metrics) = get(&node.url, "/metrics").await;
    for &session in &sessions {
        signal_pid(session, "CONT").await;
    }
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("does not hold its cluster lease"), "{body}");
    assert!(body.contains("\"lease\":false"), "{body}");
    assert!(metrics.contains("grundy_node_lease_held 0"), "{metrics}");
}
