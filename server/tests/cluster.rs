//! Real `grundy-server` processes as the nodes of a cluster on one
//! PostgreSQL database (`--cluster`): a node killed with SIGKILL mid-match
//! has its match taken over by another, with every acknowledged move, and
//! the players finish it there with a `resume`; a node paused past its lease
//! has its room taken over, and its late writes are refused.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::process::Command;

use grundy_bot::tournament::{run_field, Field};
use grundy_protocol::wire::{TournamentSettings, TournamentStatus};
use grundy_protocol::Level;
use grundy_testkit::client::{heaps_of, two_players, Client};
use support::Process;

/// Short, so the tests wait little; the takeover follows within a lease and
/// a quarter (a claim round).
const LEASE: &str = "1000";

async fn node(db: &str) -> Process {
    Process::start_with(db, &["--cluster", "--lease-ms", LEASE]).await
}

/// Connects to `url` as `name` and resumes the seat until the room is there
/// (its node took it over): the connection, the answer, and how long that
/// took. A connection closed meanwhile is made again: a command that went
/// to the dead node just before waits out the bus's timeout, and then the
/// client's node disconnects it, to resume.
async fn resume_until_taken_over(
    url: &str,
    name: &str,
    room: &str,
    token: &str,
    since: Option<u64>,
) -> (Client, Value, Duration) {
    let asked = Instant::now();
    let mut resume = json!({"type": "resume", "room": room, "token": token});
    if let Some(since) = since {
        resume["since"] = json!(since);
    }
    let mut peer = Client::connect(url, name).await;
    loop {
        assert!(
            asked.elapsed() < Duration::from_secs(15),
            "not taken over within 15 s"
        );
        let Some(back) = peer.try_request(resume.clone()).await else {
            peer = Client::connect(url, name).await;
            continue;
        };
        if back["type"] == "watching" {
            return (peer, back, asked.elapsed());
        }
        assert!(
            back["code"] == "unknown_room" || back["code"] == "internal",
            "{back}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn play(peer: &mut Client, room: &str, token: &str, mv: Value) -> Value {
    peer.request(json!({"type": "move", "room": room, "token": token, "move": mv}))
        .await
}

/// Plays `moves` (the seat, the move) in turn, each acknowledged; `players`:
/// seat 0's peer and token, seat 1's.
async fn play_all(players: [(&mut Client, &str); 2], room: &str, moves: &[(usize, Value)]) {
    let mut players = players;
    for (seat, mv) in moves {
        let (peer, token) = &mut players[*seat];
        let ack = play(peer, room, token, mv.clone()).await;
        assert_eq!(ack["type"], "ack", "{ack}");
    }
}

/// Three nodes on a fresh database and the bus; None (the reason printed)
/// when PostgreSQL or NATS cannot run here.
async fn three_nodes() -> Option<[Process; 3]> {
    let postgres = grundy_testkit::postgres::or_skip()?;
    let nats = grundy_testkit::nats::or_skip()?;
    let db = postgres.fresh_database();
    let bus = nats.url();
    let args = ["--cluster", "--lease-ms", LEASE, "--bus", &bus];
    Some([
        Process::start_with(&db, &args).await,
        Process::start_with(&db, &args).await,
        Process::start_with(&db, &args).await,
    ])
}

#[tokio::test]
async fn a_match_whose_node_is_killed_goes_on_on_another_node() {
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    let db = postgres.fresh_database();
    let mut owner = node(&db).await;
    let other = node(&db).await;
    let (room, _code, t0, t1, mut a, mut b) =
        two_players(&owner.url, json!({"game": "nim", "heaps": [3, 4, 5]}), None).await;
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
    let (mut a, back, took) =
        resume_until_taken_over(&other.url, "alice", &room, &t0, Some(last_seq)).await;
    eprintln!("taken over {took:?} after the kill");
    let events = back["events"].as_array().expect("events");
    assert!(
        events.iter().all(|e| e["kind"] == "presence"),
        "no move was lost or made up: {back}"
    );
    let mut b = Client::connect(&other.url, "bob").await;
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
    play_all([(&mut a, &t0), (&mut b, &t1)], &room, &rest).await;
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
    let (room, _code, t0, t1, mut a, mut b_there) =
        two_players(&paused.url, json!({"game": "nim", "heaps": [3, 4]}), None).await;
    let ack = play(&mut a, &room, &t0, json!({"heap": 0, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let seen = ack["seq"].as_u64().expect("seq");

    paused.signal("STOP").await;
    let (mut b, _, took) = resume_until_taken_over(&other.url, "bob", &room, &t1, Some(seen)).await;
    eprintln!("taken over {took:?} after the pause");
    let ack = play(&mut b, &room, &t1, json!({"heap": 1, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "the new owner plays on: {ack}");

    paused.signal("CONT").await;
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
    let mut a = Client::connect(&other.url, "alice").await;
    let back = a
        .request(json!({"type": "resume", "room": room, "token": t0}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    assert_eq!(heaps_of(&back["snapshot"]), [2, 3]);
    // The log may reach the test's copy of stderr after the answers did.
    logged_one_of(
        &[&paused],
        &[
            "another node owns the room now",
            "letting every room and tournament go",
        ],
    )
    .await;
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
    let (room, _code, t0, t1, mut a, _b) =
        two_players(&draining.url, json!({"game": "nim", "heaps": [2, 2]}), None).await;
    let ack = play(&mut a, &room, &t0, json!({"heap": 0, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let status = draining.terminate().await;
    assert!(status.success(), "{status:?}");

    let (mut b, back, took) = resume_until_taken_over(&other.url, "bob", &room, &t1, None).await;
    eprintln!("taken over {took:?} after the drain");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(heaps_of(&back["snapshot"]), [1, 2]);
    let ack = play(&mut b, &room, &t1, json!({"heap": 1, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "{ack}");
}

/// Events a spectator reads up to the end: their sequence numbers.
async fn events_until_end(peer: &mut Client) -> Vec<(u64, String)> {
    let mut seen = Vec::new();
    loop {
        let message = peer.read().await.expect("events before the close");
        if message["type"] != "event" {
            continue;
        }
        let event = &message["event"];
        let kind = event["kind"].as_str().unwrap_or_default().to_owned();
        seen.push((event["seq"].as_u64().expect("seq"), kind.clone()));
        if kind == "ended" {
            return seen;
        }
    }
}

/// Every message `peer` had kept and reads up to the match's end.
async fn messages_until_end(peer: &mut Client) -> Vec<Value> {
    messages_until(peer, |m| m["event"]["kind"] == "ended").await
}

/// Every message `peer` had kept and reads up to one that is `last`.
async fn messages_until(peer: &mut Client, last: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = peer.kept();
    while !seen.last().is_some_and(&last) {
        seen.push(peer.read().await.expect("the message before the close"));
    }
    seen
}

/// Asserts that `seen` has no error and numbers its events from `from + 1`
/// on, with no gap and no repeat.
fn no_error_and_every_event_once(who: &str, from: u64, seen: &[Value]) {
    let errors: Vec<&Value> = seen.iter().filter(|m| m["type"] == "error").collect();
    assert!(errors.is_empty(), "{who} saw {errors:?}");
    let seqs: Vec<u64> = seen
        .iter()
        .filter(|m| m["type"] == "event")
        .map(|m| m["event"]["seq"].as_u64().expect("seq"))
        .collect();
    let expected: Vec<u64> = (from + 1..=from + seqs.len() as u64).collect();
    assert_eq!(seqs, expected, "{who}: no gap, no repeat: {seen:?}");
}

/// A peer, the last event it had when it came in, and what it has read
/// since.
struct Follower {
    name: &'static str,
    peer: Client,
    from: u64,
    seen: Vec<Value>,
}

impl Follower {
    /// Reads (and keeps) up to event `seq`.
    async fn until_seq(&mut self, seq: u64) {
        let at = |m: &Value| m["type"] == "event" && m["event"]["seq"] == json!(seq);
        let read = messages_until(&mut self.peer, at).await;
        self.seen.extend(read);
    }

    /// Reads to the match's end: no error, every event once, and the end
    /// is `result`.
    async fn saw_the_end(mut self, result: Value) {
        let rest = messages_until_end(&mut self.peer).await;
        self.seen.extend(rest);
        no_error_and_every_event_once(self.name, self.from, &self.seen);
        let ended = &self.seen.last().expect("the end")["event"];
        assert_eq!(ended["result"], result);
    }
}

/// A match of `heaps` made by alice on the first node, joined by bob on
/// the second and watched by carol on the third; alice has taken one
/// from heap 0.
struct Spread {
    room: String,
    tokens: [String; 2],
    alice: Client,
    bob: Follower,
    carol: Follower,
}

impl Spread {
    /// The match goes on after its room moved: bob plays the first of
    /// `moves` on the connection he had, and both followers hear it there
    /// (they found the room on its new node; before the match goes on to
    /// its end, since a follower that finds its room only once it has
    /// finished resumes instead, docs/deploy.md); alice, whose own
    /// connection may be gone, comes back through `url`; they play the rest,
    /// and both followers saw every event once, with no error, up to
    /// `winner`'s win.
    async fn play_on(self, url: &str, moves: &[(usize, Value)], winner: u64) {
        let Spread {
            room,
            tokens: [t0, t1],
            alice: _gone,
            mut bob,
            mut carol,
        } = self;
        let ((_, first), rest) = moves.split_first().expect("a first move");
        let ack = play(&mut bob.peer, &room, &t1, first.clone()).await;
        assert_eq!(ack["type"], "ack", "bob's move waits for the room: {ack}");
        let seq = ack["seq"].as_u64().expect("seq");
        bob.until_seq(seq).await;
        carol.until_seq(seq).await;
        let mut alice = Client::connect(url, "alice").await;
        let back = alice
            .request(json!({"type": "resume", "room": room, "token": t0}))
            .await;
        assert_eq!(back["type"], "watching", "{back}");
        play_all([(&mut alice, &t0), (&mut bob.peer, &t1)], &room, rest).await;
        for follower in [bob, carol] {
            follower
                .saw_the_end(json!({"winner": winner, "reason": "rules"}))
                .await;
        }
    }
}

async fn spread(nodes: [&Process; 3], heaps: Value) -> Spread {
    let mut alice = Client::connect(&nodes[0].url, "alice").await;
    let seated = alice
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": heaps}}))
        .await;
    let room = seated["room"].as_str().expect("room").to_owned();
    let t0 = seated["token"].as_str().expect("token").to_owned();
    let mut bob = Client::connect(&nodes[1].url, "bob").await;
    let seated = bob.request(json!({"type": "join", "room": room})).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let t1 = seated["token"].as_str().expect("token").to_owned();
    let bob_from = seated["snapshot"]["seq"].as_u64().expect("seq");
    let mut carol = Client::connect(&nodes[2].url, "carol").await;
    let watching = carol.request(json!({"type": "watch", "room": room})).await;
    assert_eq!(watching["type"], "watching", "{watching}");
    let carol_from = watching["snapshot"]["seq"].as_u64().expect("seq");
    let ack = play(&mut alice, &room, &t0, json!({"heap": 0, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    Spread {
        room,
        tokens: [t0, t1],
        alice,
        bob: Follower {
            name: "bob",
            peer: bob,
            from: bob_from,
            seen: Vec::new(),
        },
        carol: Follower {
            name: "carol",
            peer: carol,
            from: carol_from,
            seen: Vec::new(),
        },
    }
}

/// The node that holds a room drains: the clients of the other nodes go on
/// on the connections they have, with nothing to do and nothing missed —
/// a move sent while the room is between nodes waits for it.
#[tokio::test]
async fn a_room_moves_unseen_by_the_clients_of_other_nodes_when_its_node_drains() {
    let Some([mut one, two, three]) = three_nodes().await else {
        return;
    };
    let game = spread([&one, &two, &three], json!([3, 3])).await;

    let status = one.terminate().await;
    assert!(status.success(), "{status:?}");
    // Bob's move waits for the room; alice's own node went away, and she
    // resumes through another.
    let moves = [
        (1, json!({"heap": 0, "take": 1})),
        (0, json!({"heap": 1, "take": 1})),
        (1, json!({"heap": 0, "take": 1})),
        (0, json!({"heap": 1, "take": 2})),
    ];
    game.play_on(&three.url, &moves, 0).await;
}

/// A node paused past its lease comes back and lets its room go (another
/// node took it meanwhile): the clients of the other nodes go on, on the
/// connections they have, with nothing missed.
#[tokio::test]
async fn a_room_moves_unseen_by_the_clients_of_other_nodes_when_its_node_lets_it_go() {
    let Some([paused, two, three]) = three_nodes().await else {
        return;
    };
    let game = spread([&paused, &two, &three], json!([3, 4])).await;

    // The nodes hear each other's heartbeats (once a second) first: a node
    // never heard from counts as gone.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    paused.signal("STOP").await;
    logged(&[&two, &three], "took over 1 rooms").await;
    paused.signal("CONT").await;
    logged(&[&paused], "letting every room and tournament go").await;
    let moves = [
        (1, json!({"heap": 1, "take": 1})),
        (0, json!({"heap": 0, "take": 2})),
        (1, json!({"heap": 1, "take": 3})),
    ];
    game.play_on(&three.url, &moves, 1).await;
}

#[tokio::test]
async fn players_on_two_nodes_play_a_match_that_a_third_node_shows() {
    let Some([one, two, three]) = three_nodes().await else {
        return;
    };

    let mut alice = Client::connect(&one.url, "alice").await;
    let seated = alice
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [2, 3]}}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].as_str().expect("room").to_owned();
    let code = seated["snapshot"]["code"]
        .as_str()
        .expect("code")
        .to_owned();
    let t0 = seated["token"].as_str().expect("token").to_owned();

    // A spectator on the third node finds it in the lobby, and watches.
    let mut carol = Client::connect(&three.url, "carol").await;
    let asked = Instant::now();
    loop {
        let list = carol.request(json!({"type": "list_rooms"})).await;
        let rooms = list["rooms"].as_array().expect("rooms");
        if rooms.iter().any(|r| r["room"] == room.as_str()) {
            assert_eq!(list["total"], 1, "{list}");
            break;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(5),
            "not listed: {list}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let watching = carol.request(json!({"type": "watch", "room": code})).await;
    assert_eq!(watching["type"], "watching", "{watching}");
    let from = watching["snapshot"]["seq"].as_u64().expect("seq");

    // Bob joins on the second node, by code.
    let mut bob = Client::connect(&two.url, "bob").await;
    let seated = bob.request(json!({"type": "join", "room": code})).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    assert_eq!(seated["seat"], 1);
    let t1 = seated["token"].as_str().expect("token").to_owned();

    let moves = [
        (0, json!({"heap": 1, "take": 1})),
        (1, json!({"heap": 0, "take": 1})),
        (0, json!({"heap": 1, "take": 1})),
        (1, json!({"heap": 0, "take": 1})),
        (0, json!({"heap": 1, "take": 1})),
    ];
    play_all([(&mut alice, &t0), (&mut bob, &t1)], &room, &moves).await;
    // Bob, on the other node, hears the end; so does the spectator, with
    // every event once, in order.
    let ended = bob.until("ended").await;
    assert_eq!(ended["result"], json!({"winner": 0, "reason": "rules"}));
    let seen = events_until_end(&mut carol).await;
    let seqs: Vec<u64> = seen.iter().map(|(seq, _)| *seq).collect();
    let expected: Vec<u64> = (from + 1..=from + seqs.len() as u64).collect();
    assert_eq!(seqs, expected, "no gap, no repeat: {seen:?}");
    let kinds: Vec<&str> = seen.iter().map(|(_, kind)| kind.as_str()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "moved").count(),
        5,
        "{kinds:?}"
    );
    assert!(kinds.contains(&"started"), "{kinds:?}");
}

#[tokio::test]
async fn a_match_across_nodes_survives_the_loss_of_its_owner() {
    let Some([mut owner, two, three]) = three_nodes().await else {
        return;
    };

    let mut alice = Client::connect(&owner.url, "alice").await;
    let seated = alice
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [3, 3]}}))
        .await;
    let room = seated["room"].as_str().expect("room").to_owned();
    let t0 = seated["token"].as_str().expect("token").to_owned();
    let mut bob = Client::connect(&two.url, "bob").await;
    let seated = bob.request(json!({"type": "join", "room": room})).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let t1 = seated["token"].as_str().expect("token").to_owned();
    let ack = play(&mut alice, &room, &t0, json!({"heap": 0, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let ack = play(&mut bob, &room, &t1, json!({"heap": 0, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let seen = ack["seq"].as_u64().expect("seq");

    owner.kill_hard().await;
    drop(alice);
    // Bob's node notices the owner is gone and closes his connection (or
    // refuses what he sends meanwhile): he comes back and resumes.
    let (mut bob, back, took) =
        resume_until_taken_over(&two.url, "bob", &room, &t1, Some(seen)).await;
    eprintln!("taken over {took:?} after the kill, resumed through another node");
    assert_eq!(back["type"], "watching", "{back}");
    let mut alice = Client::connect(&three.url, "alice").await;
    let back = alice
        .request(json!({"type": "resume", "room": room, "token": t0}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    assert_eq!(heaps_of(&back["snapshot"]), [1, 3]);
    play_all(
        [(&mut alice, &t0), (&mut bob, &t1)],
        &room,
        &[
            (0, json!({"heap": 1, "take": 1})),
            (1, json!({"heap": 0, "take": 1})),
            (0, json!({"heap": 1, "take": 2})),
        ],
    )
    .await;
    let ended = bob.until("ended").await;
    assert_eq!(ended["result"], json!({"winner": 0, "reason": "rules"}));
}

/// One match of many: alice and bob, each on some node, emptying heap 0 then
/// heap 1 of `[HEAP, HEAP]` one stone at a time (bob moves last and wins),
/// a move every [`PACE`], so that every match is still live at the kill.
struct Player {
    peer: Option<Client>,
    token: String,
}

const HEAP: u64 = 30;
const PACE: Duration = Duration::from_millis(25);

fn nth_move(i: usize) -> Value {
    json!({"heap": usize::from(i as u64 >= HEAP), "take": 1})
}

/// Comes back on one of `urls` with a `resume`, until the room is served:
/// the moves the snapshot holds.
async fn come_back(player: &mut Player, urls: &[String], room: &str, name: &str) -> Vec<Value> {
    let give_up = Instant::now() + Duration::from_secs(30);
    for attempt in 0.. {
        assert!(Instant::now() < give_up, "{name}: no node serves {room}");
        let url = &urls[attempt % urls.len()];
        if player.peer.is_none() {
            player.peer = Client::try_connect(url, name).await;
        }
        let Some(peer) = player.peer.as_mut() else {
            continue;
        };
        match peer
            .try_request(json!({"type": "resume", "room": room, "token": player.token}))
            .await
        {
            Some(back) if back["type"] == "watching" => {
                return back["snapshot"]["moves"].as_array().expect("moves").clone()
            }
            Some(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            None => player.peer = None,
        }
    }
    unreachable!()
}

#[tokio::test]
async fn the_owner_of_many_live_matches_is_killed_and_every_match_finishes() {
    const MATCHES: usize = 200;
    let Some([mut owner, two, three]) = three_nodes().await else {
        return;
    };
    let survivors = vec![two.url.clone(), three.url.clone()];

    // Matches that have made their first two moves.
    let moving = Arc::new(AtomicUsize::new(0));
    let killed: Arc<OnceLock<Instant>> = Arc::new(OnceLock::new());
    let mut matches = Vec::new();
    for i in 0..MATCHES {
        let (owner_url, bob_url) = (owner.url.clone(), two.url.clone());
        let survivors = survivors.clone();
        let (moving, killed) = (moving.clone(), killed.clone());
        matches.push(tokio::spawn(async move {
            let mut alice = Client::connect(&owner_url, "alice").await;
            let spec = json!({"game": "nim", "heaps": [HEAP, HEAP]});
            let seated = alice
                .request(json!({"type": "create_room", "spec": spec}))
                .await;
            let room = seated["room"].as_str().expect("room").to_owned();
            let t0 = seated["token"].as_str().expect("token").to_owned();
            let mut bob = Client::connect(&bob_url, "bob").await;
            let seated = bob.request(json!({"type": "join", "room": room})).await;
            assert_eq!(seated["type"], "seated", "{seated}");
            let t1 = seated["token"].as_str().expect("token").to_owned();
            let mut players = [
                Player { peer: Some(alice), token: t0 },
                Player { peer: Some(bob), token: t1 },
            ];
            let mut acked: Vec<Value> = Vec::new();
            let mut resumed_after = None;
            while acked.len() < 2 * HEAP as usize {
                let seat = acked.len() % 2;
                let mv = nth_move(acked.len());
                let player = &mut players[seat];
                let answer = match player.peer.as_mut() {
                    Some(peer) => {
                        peer.try_request(json!({"type": "move", "room": room, "token": player.token, "move": mv}))
                            .await
                    }
                    None => None,
                };
                if answer.as_ref().is_some_and(|a| a["type"] == "ack") {
                    acked.push(mv);
                    if acked.len() == 2 {
                        moving.fetch_add(1, Ordering::Relaxed);
                    }
                    tokio::time::sleep(PACE).await;
                    continue;
                }
                // The move was refused or its connection closed: both come
                // back elsewhere, and play on from what the room kept.
                for (seat, name) in [(0, "alice"), (1, "bob")] {
                    players[seat].peer = None;
                    let urls = [survivors[(i + seat) % 2].clone(), survivors[(i + seat + 1) % 2].clone()];
                    let kept = come_back(&mut players[seat], &urls, &room, name).await;
                    assert!(kept.len() >= acked.len(), "{room}: lost a move: {kept:?} {acked:?}");
                    assert_eq!(kept[..acked.len()], acked[..], "{room}: every acknowledged move, in order");
                    acked = kept;
                }
                if let (None, Some(at)) = (resumed_after, killed.get()) {
                    resumed_after = Some(at.elapsed());
                }
            }
            let peer = players[1].peer.as_mut().expect("bob is here");
            let record = peer.request(json!({"type": "get_match", "room": room})).await;
            assert_eq!(record["record"]["result"]["winner"], 1, "{record}");
            assert_eq!(record["record"]["moves"].as_array().map(Vec::len), Some(acked.len()));
            assert!(resumed_after.is_some(), "{room} finished before the kill");
            resumed_after
        }));
    }
    // Kill the owner under load: every match has begun and is moving.
    let begun = Instant::now();
    while moving.load(Ordering::Relaxed) < MATCHES {
        assert!(
            begun.elapsed() < Duration::from_secs(60),
            "the matches did not start"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    owner.kill_hard().await;
    killed.set(Instant::now()).expect("once");
    let mut waits: Vec<Duration> = Vec::new();
    for m in matches {
        if let Some(wait) = m.await.expect("a match task") {
            waits.push(wait);
        }
    }
    waits.sort();
    assert!(!waits.is_empty(), "some match had to move");
    eprintln!(
        "{MATCHES} matches, the owner killed while they moved: {} resumed on other nodes, \
         back after {:?} (median) / {:?} (slowest)",
        waits.len(),
        waits[waits.len() / 2],
        waits[waits.len() - 1]
    );
}

/// A node that cannot reach its bus, or is asked to join a cluster on an
/// SQLite file, stops at once and says why.
#[tokio::test]
async fn a_node_without_its_bus_or_on_sqlite_refuses_to_start() {
    let run = |args: Vec<String>| async move {
        let out = Command::new(env!("CARGO_BIN_EXE_grundy-server"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env("RUST_BACKTRACE", "0")
            .output()
            .await
            .expect("runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("g.db").display().to_string();
    let (ok, said) = run(vec!["--db".into(), file, "--cluster".into()]).await;
    assert!(
        !ok && said.contains("--cluster needs a PostgreSQL --db"),
        "{said}"
    );
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    let db = postgres.fresh_database();
    let args = vec![
        "--db".into(),
        db,
        "--cluster".into(),
        "--bus".into(),
        "nats://127.0.0.1:1".into(),
    ];
    let (ok, said) = run(args).await;
    assert!(
        !ok && said.contains("cannot reach the bus nats://127.0.0.1:1"),
        "{said}"
    );
}

/// A field of bots on one node: joins tournament `code` there and plays it
/// to the end; `level` keeps its names apart from another field's.
fn field_on(url: &str, code: &str, level: Level, seed: u64) -> Field {
    Field {
        url: url.to_owned(),
        join: Some(code.to_owned()),
        // Unused: the field joins.
        settings: serde_json::from_value::<TournamentSettings>(json!({"format": "round_robin"}))
            .expect("settings"),
        players: 2,
        levels: vec![level],
        seed,
        tokens: Vec::new(),
    }
}

/// Follows tournament `code` through `url` (watching again after a dropped
/// connection, with `since`) until an event of `kind`; the last seq seen.
async fn watch_until(url: &str, code: &str, since: &mut u64, kind: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "no {kind} within 60 s");
        let Some(mut peer) = Client::try_connect(url, "watcher").await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let watching = peer
            .try_request(json!({"type": "watch_tournament", "tournament": code, "since": *since}))
            .await;
        let Some(watching) = watching.filter(|w| w["type"] == "tournament_watching") else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut events: Vec<Value> = watching["events"].as_array().cloned().unwrap_or_default();
        loop {
            for event in events.drain(..) {
                let seq = event["seq"].as_u64().expect("seq");
                assert_eq!(seq, *since + 1, "no gap, no repeat: {event}");
                *since = seq;
                if event["kind"] == kind {
                    return;
                }
            }
            match peer.read().await {
                Some(m) if m["type"] == "tournament_event" => events.push(m["event"].clone()),
                Some(_) => {}
                None => break, // the node went away: watch again
            }
        }
    }
}

/// A tournament whose players are on two nodes and whose owner is a third
/// plays its games across the nodes; its node is killed mid-way, another
/// takes it (and its games' rooms) over, and every game is played to the
/// end, with the players only rejoining.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_spread_over_the_nodes_survives_the_loss_of_its_node() {
    let Some([mut owner, two, three]) = three_nodes().await else {
        return;
    };
    let mut director = Client::connect(&owner.url, "director").await;
    let created = director
        .request(
            json!({"type": "create_tournament", "spec": {"game": "nim", "heaps": [3, 4, 5]},
            "format": "round_robin", "clock": {"initial_ms": 30000, "increment_ms": 0}}),
        )
        .await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let code = created["code"].as_str().expect("code").to_owned();
    let owner_token = created["owner_token"].as_str().expect("token").to_owned();

    // Two bots register through node two, two through node three: each
    // command goes over the bus to the owner.
    let perfect = tokio::spawn(run_field(
        field_on(&two.url, &code, Level::Perfect, 1),
        |_| {},
    ));
    let casual = tokio::spawn(run_field(
        field_on(&three.url, &code, Level::Casual(5), 2),
        |_| {},
    ));
    let mut registered = 0;
    while registered < 4 {
        let m = director.read().await.expect("the director's node is up");
        if m["type"] == "tournament_event" && m["event"]["kind"] == "registered" {
            registered += 1;
        }
    }
    // Started through node three, with the owner token.
    let mut starter = Client::connect(&three.url, "director").await;
    let started = starter
        .request(json!({"type": "start_tournament", "tournament": code, "token": owner_token}))
        .await;
    assert_eq!(started["type"], "ack", "{started}");

    // The first round's games start (their rooms on the tournament's node,
    // their players on the others), and the tournament's node dies.
    let mut seen = 0;
    watch_until(&two.url, &code, &mut seen, "game_started").await;
    owner.kill_hard().await;
    let killed = Instant::now();
    watch_until(&two.url, &code, &mut seen, "finished").await;
    eprintln!("finished {:?} after the kill", killed.elapsed());

    let mut states = Vec::new();
    for field in [perfect, casual] {
        let outcome = tokio::time::timeout(Duration::from_secs(60), field)
            .await
            .expect("each field ends")
            .expect("no panic")
            .expect("each field played to the end");
        states.push(outcome.state);
    }
    let state = &states[0];
    assert_eq!(state.status, TournamentStatus::Finished);
    assert_eq!(state.players.len(), 4);
    assert_eq!(state.games.len(), 12, "every pairing of four, both ways");
    assert!(
        state.games.iter().all(|g| g.result.is_some()),
        "every game has its result: {:?}",
        state.games
    );
    let wins: u32 = state.standings.iter().map(|s| s.wins).sum();
    assert_eq!(wins, 12, "each game was won (none abandoned)");
    // Another node took the running tournament over.
    logged(&[&two, &three], "took over 1 tournaments").await;
}

/// The next message of `kind` on `peer` (kept ones first).
async fn next_of(peer: &mut Client, kind: &str) -> Value {
    let mut kept = peer.kept().into_iter();
    loop {
        let m = match kept.next() {
            Some(m) => m,
            None => peer.read().await.expect("the message before the close"),
        };
        if m["type"] == kind {
            return m;
        }
    }
}

/// Waits until one of `nodes` logs `line`; which one.
async fn logged(nodes: &[&Process], line: &str) -> usize {
    logged_one_of(nodes, &[line]).await
}

/// Waits until one of `nodes` logs one of `lines`; which node.
async fn logged_one_of(nodes: &[&Process], lines: &[&str]) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(i) = nodes.iter().position(|node| {
            let logs = node.stderr.lock().unwrap();
            lines.iter().any(|line| logs.contains(line))
        }) {
            return i;
        }
        assert!(Instant::now() < deadline, "no node logged one of {lines:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A player withdraws while the game's room is on another node than the
/// tournament (taken over apart: the room's owner row was locked while the
/// tournament was claimed, and its claimer paused while the room was): the
/// room resigns their seat all the same.
#[tokio::test]
async fn a_withdrawal_resigns_a_game_whose_room_is_on_another_node() {
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    let Some(nats) = grundy_testkit::nats::or_skip() else {
        return;
    };
    let db = postgres.fresh_database();
    let bus = nats.url();
    let args = ["--cluster", "--lease-ms", LEASE, "--bus", &bus];
    let mut one = Process::start_with(&db, &args).await;
    let two = Process::start_with(&db, &args).await;
    let three = Process::start_with(&db, &args).await;

    let mut director = Client::connect(&one.url, "director").await;
    let created = director
        .request(
            json!({"type": "create_tournament", "spec": {"game": "nim", "heaps": [3, 4, 5]},
            "format": "round_robin", "rounds": 1, "clock": {"initial_ms": 60000, "increment_ms": 0}}),
        )
        .await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let code = created["code"].as_str().expect("code").to_owned();
    let mut alice = Client::connect(&two.url, "alice").await;
    let registered = alice
        .request(json!({"type": "register", "tournament": code}))
        .await;
    assert_eq!(registered["type"], "registered", "{registered}");
    let alice_token = registered["token"].as_str().expect("token").to_owned();
    let mut bob = Client::connect(&three.url, "bob").await;
    let registered = bob
        .request(json!({"type": "register", "tournament": code}))
        .await;
    assert_eq!(registered["type"], "registered", "{registered}");
    let started = director
        .request(json!({"type": "start_tournament", "tournament": code,
            "token": created["owner_token"]}))
        .await;
    assert_eq!(started["type"], "ack", "{started}");
    let game = next_of(&mut alice, "your_game").await;
    let room = game["room"].as_str().expect("room").to_owned();
    let alice_seat = game["seat"].as_u64().expect("seat");

    // The tournament goes to one node, its game's room to the other: the
    // room's owner row stays locked, so every claim skips the room.
    let release = grundy_testkit::postgres::hold_locks(
        &db,
        "SELECT o.node FROM room_owners o JOIN rooms r ON r.no = o.room_no
         WHERE r.id = $1 FOR UPDATE OF o",
        &[&room],
    )
    .await;
    one.kill_hard().await;
    let nodes = [&two, &three];
    let taker = logged(&nodes, "took over 1 tournaments").await;
    nodes[taker].signal("STOP").await;
    release.send(()).expect("release");
    let room_taker = logged(&nodes, "took over 1 rooms").await;
    nodes[taker].signal("CONT").await;
    assert_ne!(taker, room_taker, "the room went to the other node");

    let mut carol = Client::connect(&nodes[room_taker].url, "carol").await;
    let watching = carol.request(json!({"type": "watch", "room": room})).await;
    assert_eq!(watching["type"], "watching", "{watching}");
    let mut alice = Client::connect(&nodes[room_taker].url, "alice").await;
    let withdrawn = alice
        .request(json!({"type": "withdraw", "tournament": code, "token": alice_token}))
        .await;
    assert_eq!(withdrawn["type"], "ack", "{withdrawn}");
    let ended = carol.until("ended").await;
    assert_eq!(
        ended["result"],
        json!({"winner": 1 - alice_seat, "reason": "resign"}),
        "{ended}"
    );
}

/// The bus goes away and comes back: what was on its way may be lost, and
/// no later message may come to tell, so the clients of rooms on other nodes
/// resume (and see what they missed) rather than wait for nothing.
#[tokio::test]
async fn the_clients_of_other_nodes_rooms_resume_when_the_bus_comes_back() {
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    let Some(mut nats) = grundy_testkit::nats::own_or_skip() else {
        return;
    };
    let db = postgres.fresh_database();
    let bus = nats.url();
    let args = ["--cluster", "--lease-ms", LEASE, "--bus", &bus];
    let one = Process::start_with(&db, &args).await;
    let two = Process::start_with(&db, &args).await;
    let mut alice = Client::connect(&one.url, "alice").await;
    let seated = alice
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [3, 3]}}))
        .await;
    let room = seated["room"].as_str().expect("room").to_owned();
    let t0 = seated["token"].as_str().expect("token").to_owned();
    let mut bob = Client::connect(&two.url, "bob").await;
    let seated = bob.request(json!({"type": "join", "room": room})).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let t1 = seated["token"].as_str().expect("token").to_owned();
    play_all(
        [(&mut alice, &t0), (&mut bob, &t1)],
        &room,
        &[
            (0, json!({"heap": 0, "take": 1})),
            (1, json!({"heap": 0, "take": 1})),
        ],
    )
    .await;
    let seen = bob.kept().len();
    assert!(seen > 0, "bob heard the moves");

    // Alice's move is made while the bus is away: bob's node never hears it.
    // (Blocking for a moment: the nodes are other processes.)
    nats.kill();
    let ack = play(&mut alice, &room, &t0, json!({"heap": 1, "take": 1})).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let since = ack["seq"].as_u64().expect("seq") - 1;
    nats.start_again().expect("the bus again");

    // Once the bus is back, bob's node closes his connection, and he
    // resumes where he was.
    let closes = async {
        while let Some(m) = bob.read().await {
            assert_ne!(m["type"], "error", "{m}");
        }
    };
    if tokio::time::timeout(Duration::from_secs(10), closes)
        .await
        .is_err()
    {
        panic!(
            "bob's connection is still open; bob's node said: {}",
            two.stderr.lock().unwrap()
        );
    }
    let mut bob = Client::connect(&two.url, "bob").await;
    let back = bob
        .request(json!({"type": "resume", "room": room, "token": t1, "since": since}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    let missed: Vec<&Value> = back["events"].as_array().expect("events").iter().collect();
    assert_eq!(missed[0]["kind"], "moved", "{back}");
    assert_eq!(missed[0]["seq"], json!(since + 1), "{back}");
    play_all(
        [(&mut alice, &t0), (&mut bob, &t1)],
        &room,
        &[
            (1, json!({"heap": 1, "take": 2})),
            (0, json!({"heap": 0, "take": 1})),
        ],
    )
    .await;
    let ended = bob.until("ended").await;
    assert_eq!(ended["result"], json!({"winner": 0, "reason": "rules"}));
}

/// An account is the cluster's: made on one node, it logs in on another and
/// its token opens a connection on a third; a name taken on one node is
/// taken on all; a token revoked on one node stops working on the others,
/// on connections already open too; wrong passwords on any node lock it on
/// all.
#[tokio::test]
async fn an_account_made_on_one_node_works_on_every_node() {
    let Some([one, two, three]) = three_nodes().await else {
        return;
    };
    let mut ada = Client::connect(&one.url, "guest").await;
    let created = ada
        .request(
            json!({"type": "create_account", "username": "ada", "password": "analytical engine"}),
        )
        .await;
    assert_eq!(created["type"], "account_created", "{created}");
    let mut other = Client::connect(&two.url, "guest").await;
    let taken = other
        .request(json!({"type": "create_account", "username": "ADA", "password": "another one"}))
        .await;
    assert_eq!(taken["code"], "name_taken", "{taken}");

    // Logged in on node two; the token opens a connection on node three.
    let login = other
        .request(json!({"type": "login", "username": "ada", "password": "analytical engine"}))
        .await;
    assert_eq!(login["type"], "token", "{login}");
    let token = login["token"].as_str().expect("token").to_owned();
    let mut on_three = Client::try_connect(&three.url, "x")
        .await
        .expect("connects");
    let welcome = on_three
        .request(json!({"type": "hello", "version": 1, "token": token}))
        .await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    assert_eq!(welcome["account"]["username"], "ada", "{welcome}");

    // Revoked on node two: node three's open connection may no longer play,
    // and a new one is refused.
    let mut on_two = Client::try_connect(&two.url, "x").await.expect("connects");
    let hello = on_two
        .request(json!({"type": "hello", "version": 1, "token": token}))
        .await;
    assert_eq!(hello["type"], "welcome", "{hello}");
    let revoked = on_two.request(json!({"type": "revoke_token"})).await;
    assert_eq!(revoked["type"], "token_revoked", "{revoked}");
    let asked = Instant::now();
    loop {
        let made = on_three
            .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [1]}}))
            .await;
        if made["code"] == "unauthorized" {
            assert!(
                made["message"].as_str().unwrap_or("").contains("revoked"),
                "{made}"
            );
            break;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(5),
            "still works on node three: {made}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut again = Client::try_connect(&one.url, "x").await.expect("connects");
    let refused = again
        .request(json!({"type": "hello", "version": 1, "token": token}))
        .await;
    assert_eq!(refused["code"], "unauthorized", "{refused}");

    // Wrong passwords count on every node: four on node one and one on node
    // two lock the account on node three, right password or not.
    let wrong = json!({"type": "login", "username": "ada", "password": "difference engine"});
    for (peer, times) in [(&mut ada, 4), (&mut other, 1)] {
        for _ in 0..times {
            let refused = peer.request(wrong.clone()).await;
            assert_eq!(refused["code"], "unauthorized", "{refused}");
        }
    }
    // Asked with the wrong password until the others' failures have
    // arrived (a right one would start the count again, on every node), at
    // most four times: five of node three's own would lock it anyway.
    for asked in 1.. {
        let login = on_three.request(wrong.clone()).await;
        if login["code"] == "rate_limited" {
            assert_eq!(login["limit"], "login_failures_before_lockout", "{login}");
            break;
        }
        assert_eq!(login["code"], "unauthorized", "{login}");
        assert!(asked < 4, "not locked on node three: {login}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let locked = on_three
        .request(json!({"type": "login", "username": "ada", "password": "analytical engine"}))
        .await;
    assert_eq!(
        locked["code"], "rate_limited",
        "the right password too: {locked}"
    );
}

/// A rated tournament on one node moves ratings that every node lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ratings_computed_on_one_node_are_listed_on_every_node() {
    let Some([one, two, three]) = three_nodes().await else {
        return;
    };
    // Two bot accounts, made and logged in on node one.
    let mut tokens = Vec::new();
    let mut maker = Client::connect(&one.url, "guest").await;
    for name in ["bot-perfect-01", "bot-perfect-02"] {
        let made = maker
            .request(json!({"type": "create_account", "username": name, "password": "a long password", "kind": "bot"}))
            .await;
        assert_eq!(made["type"], "account_created", "{made}");
        let login = maker
            .request(json!({"type": "login", "username": name, "password": "a long password"}))
            .await;
        tokens.push(login["token"].as_str().expect("token").to_owned());
    }
    // A rated round robin of the two, made and played through node two.
    let settings = serde_json::from_value::<TournamentSettings>(json!({
        "format": "round_robin", "spec": {"game": "nim", "heaps": [3, 4, 5]}, "rated": true,
        "clock": {"initial_ms": 30000, "increment_ms": 0}}))
    .expect("settings");
    let outcome = run_field(
        Field {
            url: two.url.clone(),
            join: None,
            settings,
            players: 2,
            levels: vec![Level::Perfect],
            seed: 3,
            tokens,
        },
        |_| {},
    )
    .await
    .expect("played to the end");
    assert_eq!(outcome.state.status, TournamentStatus::Finished);

    let mut reader = Client::connect(&three.url, "reader").await;
    let asked = Instant::now();
    loop {
        let listed = reader
            .request(json!({"type": "get_ratings", "game": "nim"}))
            .await;
        let ratings = listed["ratings"].as_array().cloned().unwrap_or_default();
        let games: Vec<u64> = ratings.iter().filter_map(|r| r["games"].as_u64()).collect();
        if games == [2, 2] {
            break;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(5),
            "node three lists {listed}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A connection that reached a room through its old node (paused past its
/// lease, then back) asks that node again: told it no longer holds the
/// room, the connection's node looks the owner up again and the command
/// reaches the room where it is now.
#[tokio::test]
async fn a_command_sent_to_a_rooms_former_node_finds_the_room_where_it_is() {
    let Some([paused, two, three]) = three_nodes().await else {
        return;
    };
    let (room, _code, _t0, _t1, _a, _b) =
        two_players(&paused.url, json!({"game": "nim", "heaps": [3, 4]}), None).await;
    // A third person on node three asks for a seat: refused (the room is
    // full), but node three now knows the room's node.
    let mut carol = Client::connect(&three.url, "carol").await;
    let full = carol.request(json!({"type": "join", "room": room})).await;
    assert_eq!(full["code"], "room_full", "{full}");

    // The nodes hear each other's heartbeats (once a second) first: a node
    // never heard from counts as gone.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    paused.signal("STOP").await;
    // Past the lease (a command for the paused node would wait out the bus
    // timeout), and well within the 5 s after which the other nodes count
    // the paused one gone and disconnect whoever used it.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let asked = Instant::now();
    let mut dave = Client::connect(&two.url, "dave").await;
    loop {
        let watched = dave.request(json!({"type": "watch", "room": room})).await;
        if watched["type"] == "watching" {
            break;
        }
        assert!(asked.elapsed() < Duration::from_secs(3), "{watched}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    paused.signal("CONT").await;
    logged(&[&paused], "letting every room and tournament go").await;
    let watched = carol
        .try_request(json!({"type": "watch", "room": room}))
        .await;
    if watched.is_none() {
        eprintln!(
            "TWO\n{}\nTHREE\n{}",
            two.stderr.lock().unwrap(),
            three.stderr.lock().unwrap()
        );
    }
    let watched = watched.expect("answered");
    assert_eq!(watched["type"], "watching", "{watched}");
}
