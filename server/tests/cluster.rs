//! Real `grundy-server` processes as the nodes of a cluster on one
//! PostgreSQL database (`--cluster`): a node killed with SIGKILL mid-match
//! has its match taken over by another, with every acknowledged move, and
//! the players finish it there with a `resume`; a node paused past its lease
//! has its room taken over, and its late writes are refused.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::process::Command;

use support::{heaps_of, two_players, Peer, Process};

/// Short, so the tests wait little; the takeover follows within a lease and
/// a quarter (a claim round).
const LEASE: &str = "1000";

async fn node(db: &str) -> Process {
    Process::start_with(db, &["--cluster", "--lease-ms", LEASE]).await
}

/// Resumes the seat on `peer` until the room is there (its node took it
/// over); how long that took.
async fn resume_until_taken_over(
    peer: &mut Peer,
    room: &str,
    token: &str,
    since: Option<u64>,
) -> (Value, Duration) {
    let asked = Instant::now();
    let mut resume = json!({"type": "resume", "room": room, "token": token});
    if let Some(since) = since {
        resume["since"] = json!(since);
    }
    loop {
        let back = peer.request(resume.clone()).await;
        if back["type"] == "watching" {
            return (back, asked.elapsed());
        }
        assert_eq!(back["code"], "unknown_room", "{back}");
        assert!(
            asked.elapsed() < Duration::from_secs(15),
            "not taken over within 15 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn play(peer: &mut Peer, room: &str, token: &str, mv: Value) -> Value {
    peer.request(json!({"type": "move", "room": room, "token": token, "move": mv}))
        .await
}

async fn signal(process: &Process, name: &str) {
    let pid = process.child.id().expect("running").to_string();
    let sent = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(&pid)
        .status()
        .await
        .expect("kill");
    assert!(sent.success());
}

#[tokio::test]
async fn a_match_whose_node_is_killed_goes_on_on_another_node() {
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    let db = postgres.fresh_database();
    let mut owner = node(&db).await;
    let other = node(&db).await;
    let (room, _code, t0, t1, mut a, mut b) = two_players(&owner.url, json!([3, 4, 5])).await;
    let moves = [json!({"heap": 0, "take": 1}), json!({"heap": 1, "take": 2})];
    let mut last_seq = 0;
    for (i, mv) in moves.iter().enumerate() {
        let (peer, token) = if i == 0 { (&mut a, &t0) } else { (&mut b, &t1) };
        let ack = play(peer, &room, token, mv.clone()).await;
        assert_eq!(ack["type"], "ack", "{ack}");
        last_seq = ack["seq"].as_u64().expect("seq");
    }
    owner.kill_hard().await;
    drop((a, b));

    // Both players come back on the other node with their tokens.
    let mut a = Peer::connect(&other.url, "alice").await;
    let (back, took) = resume_until_taken_over(&mut a, &room, &t0, Some(last_seq)).await;
    eprintln!("taken over {took:?} after the kill");
    let events = back["events"].as_array().expect("events");
    assert!(
        events.iter().all(|e| e["kind"] == "presence"),
        "no move was lost or made up: {back}"
    );
    let mut b = Peer::connect(&other.url, "bob").await;
    let back = b
        .request(json!({"type": "resume", "room": room, "token": t1}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    let snapshot = &back["snapshot"];
    assert_eq!(snapshot["moves"], json!(moves), "every acknowledged move");
    assert_eq!(heaps_of(snapshot), [2, 2, 5]);

    // Play it out there: alice to move takes the 5, then mirror play.
    let rest = [
        (0, json!({"heap": 2, "take": 5})),
        (1, json!({"heap": 0, "take": 2})),
        (0, json!({"heap": 1, "take": 2})),
    ];
    for (seat, mv) in rest {
        let (peer, token) = if seat == 0 {
            (&mut a, &t0)
        } else {
            (&mut b, &t1)
        };
        let ack = play(peer, &room, token, mv).await;
        assert_eq!(ack["type"], "ack", "{ack}");
    }
    let ended = b.until("ended").await;
    assert_eq!(ended["result"], json!({"winner": 0, "reason": "rules"}));
    let record = b.request(json!({"type": "get_match", "room": room})).await;
    assert_eq!(
        record["record"]["moves"].as_array().map(Vec::len),
        Some(5),
        "{record}"
    );
}

#[tokio::test]
async fn a_node_paused_past_its_lease_writes_no_more_and_lets_its_room_go() {
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    let db = postgres.fresh_database();
    let paused = node(&db).await;
    let other = node(&db).await;
    let (room, _code, t0, t1, mut a, mut b_there) = two_players(&paused.url, json!([3, 4])).await;
    let ack = play(&mut a, &room, &t0, json!({"heap": 0, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let seen = ack["seq"].as_u64().expect("seq");

    signal(&paused, "STOP").await;
    let mut b = Peer::connect(&other.url, "bob").await;
    let (_, took) = resume_until_taken_over(&mut b, &room, &t1, Some(seen)).await;
    eprintln!("taken over {took:?} after the pause");
    let ack = play(&mut b, &room, &t1, json!({"heap": 1, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "the new owner plays on: {ack}");

    signal(&paused, "CONT").await;
    // Bob's first connection, still on the paused node, moves there too (it
    // is his turn as that node knows the match): never acknowledged.
    let late = play(&mut b_there, &room, &t1, json!({"heap": 0, "take": 2})).await;
    eprintln!("the late move: {late}");
    assert_eq!(late["type"], "error", "{late}");
    let code = late["code"].as_str().unwrap_or_default();
    assert!(code == "internal" || code == "unknown_room", "{late}");

    // The room, as the new owner has it: bob's move, not alice's late one.
    let record = b.request(json!({"type": "get_match", "room": room})).await;
    let moves: Vec<Value> = record["record"]["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| m["move"].clone())
        .collect();
    assert_eq!(
        moves,
        [json!({"heap": 0, "take": 1}), json!({"heap": 1, "take": 1})]
    );
    // The paused node lets the room go: alice finds it on the other node.
    let mut a = Peer::connect(&other.url, "alice").await;
    let back = a
        .request(json!({"type": "resume", "room": room, "token": t0}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    assert_eq!(heaps_of(&back["snapshot"]), [2, 3]);
    let logs = paused.stderr.lock().unwrap().clone();
    assert!(
        logs.contains("another node owns the room now") || logs.contains("letting every room go"),
        "{logs}"
    );
}

#[tokio::test]
async fn a_draining_node_hands_its_room_over_at_once() {
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    let db = postgres.fresh_database();
    // A lease far longer than the test: only the hand-over can move the room.
    let long = ["--cluster", "--lease-ms", "120000"];
    let mut draining = Process::start_with(&db, &long).await;
    let other = Process::start_with(&db, &long).await;
    let (room, _code, t0, t1, mut a, _b) = two_players(&draining.url, json!([2, 2])).await;
    let ack = play(&mut a, &room, &t0, json!({"heap": 0, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let status = draining.terminate().await;
    assert!(status.success(), "{status:?}");

    let mut b = Peer::connect(&other.url, "bob").await;
    let (back, took) = resume_until_taken_over(&mut b, &room, &t1, None).await;
    eprintln!("taken over {took:?} after the drain");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(heaps_of(&back["snapshot"]), [1, 2]);
    let ack = play(&mut b, &room, &t1, json!({"heap": 1, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "{ack}");
}
