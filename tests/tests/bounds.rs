//! Every answer fits and every room is bounded: random starts held to the size
//! of a spec a client could send, a lobby of names and descriptions (paged)
//! rather than specs, catch-up too large for one message answered with a
//! snapshot, older events read from the store, the move limit, and a full room
//! queue that never stops a connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use grundy_protocol::wire::MatchRecord;
use grundy_server::store::{HookedWrites, MatchStore, SqliteStore, StoreError, WriteOp};
use grundy_server::{Config, Server};
use grundy_tests::{two_players, Client, TestServer};
use serde_json::{json, Value};
use tokio::sync::oneshot;

/// A graph spec of `n` vertices in a path, one token at the start: about
/// 14 bytes of JSON a vertex.
fn path_graph(n: u64) -> Value {
    let edges: Vec<[u64; 2]> = (0..n - 1).map(|v| [v, v + 1]).collect();
    json!({"game": "graph", "vertices": n, "edges": edges, "tokens": [0]})
}

#[tokio::test]
async fn a_random_start_larger_than_a_client_could_send_is_refused() {
    let server = TestServer::start().await;
    let mut c = Client::connect(&server.url(), "alice").await;
    let answer = c
        .request(json!({"type": "create_room",
            "random": {"family": "graph", "seed": 1, "size": 100_000}}))
        .await;
    assert_eq!(answer["type"], "error", "{answer}");
    assert_eq!(answer["code"], "bad_spec", "{answer}");
    let message = answer["message"].as_str().unwrap();
    assert!(
        message.contains("random.size") && message.contains("1000"),
        "{message}"
    );
    // The request's own field names, not the engine's (`family`, not `game`).
    let answer = c
        .request(json!({"type": "create_room", "random": {"family": "chess", "seed": 1}}))
        .await;
    assert_eq!(answer["code"], "bad_spec", "{answer}");
    let message = answer["message"].as_str().unwrap();
    assert!(
        message.starts_with("random.family: unknown game"),
        "{message}"
    );
    // The largest random graph allowed is answered whole, within the bound.
    let text = {
        c.send(json!({"type": "create_room", "id": "big",
            "random": {"family": "graph", "seed": 1, "size": 1_000}}))
            .await;
        loop {
            match c.frame().await {
                Some(tokio_tungstenite::tungstenite::Message::Text(t)) => break t,
                Some(_) => continue,
                None => panic!("closed"),
            }
        }
    };
    let seated: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(seated["type"], "seated", "{seated}");
    assert!(text.len() <= server.config.limits.max_message_bytes);
}

#[tokio::test]
async fn the_lobby_lists_names_and_descriptions_in_pages_not_specs() {
    let server = TestServer::start().await;
    let mut host = Client::connect(&server.url(), "host").await;
    // Three rooms of about 50 KB specs each, and a Kayles room.
    for _ in 0..3 {
        let seated = host
            .request(json!({"type": "create_room", "spec": path_graph(3_500)}))
            .await;
        assert_eq!(seated["type"], "seated", "{}", seated["type"]);
    }
    let seated = host
        .request(json!({"type": "create_room", "spec": {"game": "kayles", "heaps": [3, 5, 7]}}))
        .await;
    let kayles = seated["snapshot"]["code"].as_str().unwrap().to_string();

    let mut guest = Client::connect(&server.url(), "guest").await;
    guest
        .send(json!({"type": "list_rooms", "id": 1, "limit": 2}))
        .await;
    let text = loop {
        match guest.frame().await {
            Some(tokio_tungstenite::tungstenite::Message::Text(t)) => break t,
            Some(_) => continue,
            None => panic!("closed"),
        }
    };
    assert!(
        text.len() < 2_000,
        "a page of two rooms is {} bytes",
        text.len()
    );
    let first: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(first["total"], 4, "{first}");
    let second = guest
        .request(json!({"type": "list_rooms", "limit": 2, "offset": 2}))
        .await;
    let beyond = guest
        .request(json!({"type": "list_rooms", "offset": 9}))
        .await;
    assert_eq!(beyond["rooms"], json!([]), "{beyond}");
    assert_eq!(beyond["total"], 4);
    let rooms: Vec<&Value> = first["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["rooms"].as_array().unwrap())
        .collect();
    assert_eq!(rooms.len(), 4);
    let mut codes: Vec<&str> = rooms.iter().map(|r| r["code"].as_str().unwrap()).collect();
    codes.dedup();
    assert_eq!(codes.len(), 4, "the pages overlap: {codes:?}");
    for r in &rooms {
        assert!(r.get("spec").is_none(), "a summary carries no spec: {r}");
        let description = r["description"].as_str().unwrap();
        assert!(description.chars().count() <= 120, "{description}");
        if r["code"] == kayles.as_str() {
            assert_eq!(r["name"], "Kayles");
            assert_eq!(r["game"], "kayles", "the game as named, its ratings' key");
            assert_eq!(description, "heaps [3,5,7]");
        } else {
            assert_eq!(r["name"], "Graph game");
            assert!(description.ends_with('…'), "{description}");
        }
    }
}

/// Plays `moves` (each a heap and an amount) alternately from seat 0, each
/// acknowledged.
async fn play(a: &mut Client, b: &mut Client, room: &str, tokens: [&str; 2], moves: &[(u64, u64)]) {
    for (i, &(heap, take)) in moves.iter().enumerate() {
        let (mover, token) = if i % 2 == 0 {
            (&mut *a, tokens[0])
        } else {
            (&mut *b, tokens[1])
        };
        let ack = mover
            .request(json!({"type": "move", "room": room, "token": token,
                "move": {"heap": heap, "take": take}}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
    }
}

/// The events a client hears until the match ends; returns the `ended` event.
async fn until_ended(c: &mut Client) -> Value {
    loop {
        let e = c.event().await;
        if e["kind"] == "ended" {
            return e;
        }
    }
}

#[tokio::test]
async fn a_match_ends_at_the_move_limit_with_the_theorys_winner() {
    let mut config = grundy_tests::config();
    config.limits.max_moves = 4;
    let server = TestServer::start_with(config).await;
    // Nim 2 6; four moves take heap 1 down to 2: a P-position with seat 0 to
    // move, so seat 1 wins.
    let (room, _, t0, t1, mut a, mut b) =
        two_players(&server.url(), json!({"game": "nim", "heaps": [2, 6]}), None).await;
    play(&mut a, &mut b, &room, [&t0, &t1], &[(1, 1); 4]).await;
    let ended = until_ended(&mut a).await;
    assert_eq!(
        ended["result"],
        json!({"winner": 1, "reason": "move_limit"})
    );
    let refused = a
        .request(json!({"type": "move", "room": room, "token": t0,
            "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(refused["code"], "match_over", "{refused}");
    let record = a.request(json!({"type": "get_match", "room": room})).await;
    let record: MatchRecord = serde_json::from_value(record["record"].clone()).unwrap();
    assert_eq!(record.moves.len(), 4);
}

#[tokio::test]
async fn a_match_ends_when_its_moves_reach_the_record_bound() {
    let mut config = grundy_tests::config();
    // Each move here is `{"heap":1,"take":1}`: 19 bytes.
    config.limits.max_record_bytes = 38;
    let server = TestServer::start_with(config).await;
    // Nim 3 6 after two moves is 3 4: an N-position, seat 0 to move wins.
    let (room, _, t0, t1, mut a, mut b) =
        two_players(&server.url(), json!({"game": "nim", "heaps": [3, 6]}), None).await;
    play(&mut a, &mut b, &room, [&t0, &t1], &[(1, 1); 2]).await;
    let ended = until_ended(&mut b).await;
    assert_eq!(
        ended["result"],
        json!({"winner": 0, "reason": "move_limit"})
    );
}

#[tokio::test]
async fn a_catch_up_older_than_the_room_keeps_is_a_snapshot() {
    let config = Config {
        events_in_memory: 3,
        ..grundy_tests::config()
    };
    let server = TestServer::start_with(config).await;
    let (room, _, t0, t1, mut a, mut b) =
        two_players(&server.url(), json!({"game": "nim", "heaps": [9, 9]}), None).await;
    play(&mut a, &mut b, &room, [&t0, &t1], &[(0, 1); 6]).await;
    let mut watcher = Client::connect(&server.url(), "sam").await;
    // Seated, seated, started, then six moves: events 1..=9, the last three
    // at hand.
    for since in [6u64, 7, 9] {
        let answer = watcher
            .request(json!({"type": "watch", "room": room, "since": since}))
            .await;
        assert_eq!(answer["snapshot"], Value::Null, "since {since}");
        let seqs: Vec<u64> = answer["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["seq"].as_u64().unwrap())
            .collect();
        assert_eq!(seqs, (since + 1..=9).collect::<Vec<_>>(), "since {since}");
    }
    for since in [0u64, 5] {
        let answer = watcher
            .request(json!({"type": "watch", "room": room, "since": since}))
            .await;
        assert_eq!(answer["events"], json!([]), "since {since}");
        assert_eq!(answer["snapshot"]["seq"], 9, "since {since}");
        assert_eq!(answer["snapshot"]["moves"].as_array().unwrap().len(), 6);
    }
}

/// A connection that watches a room and then resumes a seat in it hears the
/// `presence` event once: in the answer, not live as well.
#[tokio::test]
async fn a_watcher_who_resumes_a_seat_hears_its_presence_once() {
    let server = TestServer::start().await;
    let (room, _, t0, _, a, _b) =
        two_players(&server.url(), json!({"game": "nim", "heaps": [3, 4]}), None).await;
    drop(a);
    let mut c = Client::connect(&server.url(), "alice-again").await;
    let watching = c
        .request(json!({"type": "watch", "room": room, "since": 3}))
        .await;
    assert_eq!(watching["type"], "watching", "{watching}");
    // Alice's connection drop is event 4, in this answer or live after it.
    if watching["events"].as_array().unwrap().is_empty() {
        assert_eq!(c.event().await["seq"], 4);
    }
    let resumed = c
        .request(json!({"type": "resume", "room": room, "token": t0, "since": 4}))
        .await;
    assert_eq!(resumed["type"], "watching", "{resumed}");
    assert_eq!(resumed["events"][0]["kind"], "presence", "{resumed}");
    assert_eq!(resumed["events"][0]["seq"], 5, "{resumed}");
    // Nothing else is pending: the next message is the ping's answer, not
    // event 5 again.
    c.send(json!({"type": "ping", "id": "last"})).await;
    let next = c.recv().await;
    assert_eq!(next["id"], "last", "heard again: {next}");
}

#[tokio::test]
async fn a_catch_up_too_large_for_one_message_is_a_snapshot() {
    let mut config = grundy_tests::config();
    config.limits.max_message_bytes = 8 * 1024;
    let server = TestServer::start_with(config).await;
    // Each `moved` event carries the position: 400 heaps, about 0.9 KB; ten
    // of them do not fit in the 4 KiB the answer leaves for events.
    let heaps: Vec<u64> = (0..400).map(|i| i % 7 + 3).collect();
    let (room, _, t0, t1, mut a, mut b) =
        two_players(&server.url(), json!({"game": "nim", "heaps": heaps}), None).await;
    play(
        &mut a,
        &mut b,
        &room,
        [&t0, &t1],
        &[
            (0, 1),
            (1, 1),
            (2, 1),
            (3, 1),
            (4, 1),
            (5, 1),
            (6, 1),
            (7, 1),
            (8, 1),
            (9, 1),
        ],
    )
    .await;
    let mut watcher = Client::connect(&server.url(), "sam").await;
    let whole = watcher
        .request(json!({"type": "watch", "room": room, "since": 0}))
        .await;
    assert_eq!(whole["type"], "watching", "{whole}");
    assert_eq!(whole["events"], json!([]));
    assert_eq!(whole["snapshot"]["seq"], 13, "{}", whole["snapshot"]["seq"]);
    assert_eq!(whole["snapshot"]["moves"].as_array().unwrap().len(), 10);
    // A short catch-up still comes as events.
    let recent = watcher
        .request(json!({"type": "watch", "room": room, "since": 11}))
        .await;
    assert_eq!(recent["snapshot"], Value::Null);
    assert_eq!(recent["events"].as_array().unwrap().len(), 2);
}

/// Where a held write's outcome goes.
type Done = oneshot::Sender<Result<(), StoreError>>;

/// Event writes held back, as a stalled disk would, so that a room waits on
/// its commit while its queue fills.
#[derive(Default)]
struct Stall {
    on: AtomicBool,
    held: Mutex<Vec<(WriteOp, Done)>>,
}

impl Stall {
    fn write(&self, store: &SqliteStore, op: WriteOp) -> oneshot::Receiver<Result<(), StoreError>> {
        if !self.on.load(Ordering::SeqCst) {
            return store.write(op);
        }
        let (done, receiver) = oneshot::channel();
        self.held.lock().unwrap().push((op, done));
        receiver
    }

    /// Lets the held writes through.
    fn release(&self, store: &SqliteStore) {
        self.on.store(false, Ordering::SeqCst);
        let held: Vec<_> = self.held.lock().unwrap().drain(..).collect();
        for (op, done) in held {
            let written = store.write(op);
            tokio::spawn(async move {
                let _ = done.send(written.await.unwrap_or(Err(StoreError::Closed)));
            });
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_room_queue_never_stops_a_connection() {
    let dir = tempfile::tempdir().unwrap();
    let stall = Arc::new(Stall::default());
    let hooked = stall.clone();
    let store = Arc::new(HookedWrites {
        store: SqliteStore::open(&dir.path().join("g.db")).unwrap(),
        hook: move |store: &SqliteStore, op: WriteOp| hooked.write(store, op),
    });
    let mut config = grundy_tests::config();
    config.limits.messages_per_second = 100_000;
    config.limits.burst = 100_000;
    let server = Server::start("127.0.0.1:0".parse().unwrap(), store.clone(), config)
        .await
        .unwrap();
    let url = format!("ws://{}", server.local_addr());
    let (room, _, t0, _, mut a, _b) =
        two_players(&url, json!({"game": "nim", "heaps": [5, 5]}), None).await;
    // Another room the watcher also follows, which must keep serving it.
    let (other, _, _, _, _c, _d) =
        two_players(&url, json!({"game": "nim", "heaps": [1, 2]}), None).await;

    // The move's commit hangs: the room waits on it while commands queue up.
    stall.on.store(true, Ordering::SeqCst);
    a.send(json!({"type": "move", "id": "m", "room": room, "token": t0,
        "move": {"heap": 0, "take": 1}}))
        .await;
    while stall.held.lock().unwrap().is_empty() {
        tokio::task::yield_now().await;
    }
    let mut watcher = Client::connect(&url, "sam").await;
    for i in 0..400 {
        watcher
            .send(json!({"type": "watch", "id": i, "room": room}))
            .await;
    }
    let pong = watcher.request(json!({"type": "ping"})).await;
    assert_eq!(pong["type"], "pong", "{pong}");
    // Past the queue's 256 places, watches were refused at once, not held.
    for _ in 0..400 - 256 {
        let m = watcher.recv().await;
        assert_eq!(m["code"], "busy", "{m}");
        assert_eq!(m["limit"], "room_queue", "{m}");
    }
    // Its other room still serves it, though the store is stalled for
    // writes: a watch needs no write.
    let watching = watcher
        .request(json!({"type": "watch", "room": other}))
        .await;
    assert_eq!(watching["type"], "watching", "{watching}");

    // Once the disk comes back, the held move is played and acknowledged.
    stall.release(&store.store);
    let ack = loop {
        let m = a.recv().await;
        if m["id"] == "m" {
            break m;
        }
    };
    assert_eq!(ack["type"], "ack", "{ack}");
    server.shutdown().await;
}

/// A refused watch of a room the connection plays in leaves it counted there:
/// refusals cannot be used to get past `seats_per_connection`.
#[tokio::test]
async fn a_refused_watch_keeps_the_connection_counted_in_its_room() {
    let mut config = grundy_tests::config();
    config.limits.seats_per_connection = 1;
    let server = TestServer::start_with(config).await;
    let mut a = Client::connect(&server.url(), "alice").await;
    let seated = a
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [3]}}))
        .await;
    let room = seated["room"].as_str().unwrap().to_string();
    let refused = a
        .request(json!({"type": "watch", "room": room, "since": 99}))
        .await;
    assert_eq!(refused["code"], "bad_request", "{refused}");
    let second = a
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [4]}}))
        .await;
    assert_eq!(second["code"], "limit_reached", "{second}");
}

/// A tournament whose round could not be announced in one message (every
/// pairing with its start) is refused at its creation, naming what to lower.
#[tokio::test]
async fn a_tournament_whose_round_would_not_fit_is_refused() {
    let server = TestServer::start().await;
    let mut c = Client::connect(&server.url(), "org").await;
    let refused = c
        .request(
            json!({"type": "create_tournament", "format": "swiss", "rounds": 3,
            "family": "graph", "size": 1000}),
        )
        .await;
    assert_eq!(refused["code"], "bad_request", "{refused}");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("max_players") && message.contains("max_message_bytes"),
        "{message}"
    );
    let created = c
        .request(
            json!({"type": "create_tournament", "format": "swiss", "rounds": 3,
            "family": "graph", "size": 1000, "max_players": 8}),
        )
        .await;
    assert_eq!(created["type"], "tournament_created", "{}", created["type"]);
}

/// A resume whose `presence` event the store refuses leaves the seat as it
/// was: not connected, so the room still knows nobody is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_the_store_refuses_leaves_the_seat_disconnected() {
    let dir = tempfile::tempdir().unwrap();
    let refuse = Arc::new(AtomicBool::new(false));
    let refusing = refuse.clone();
    let store = Arc::new(HookedWrites {
        store: SqliteStore::open(&dir.path().join("g.db")).unwrap(),
        hook: move |store: &SqliteStore, op: WriteOp| {
            let coming_back = matches!(&op, WriteOp::Event { json, .. }
                if json.contains(r#""connected":true"#));
            if refusing.load(Ordering::SeqCst) && coming_back {
                let (done, receiver) = oneshot::channel();
                let _ = done.send(Err(StoreError::Sqlite("disk I/O error (test)".into())));
                return receiver;
            }
            store.write(op)
        },
    });
    let server = Server::start(
        "127.0.0.1:0".parse().unwrap(),
        store,
        grundy_tests::config(),
    )
    .await
    .unwrap();
    let url = format!("ws://{}", server.local_addr());
    let (room, _, t0, _, a, mut b) =
        two_players(&url, json!({"game": "nim", "heaps": [3, 4]}), None).await;
    drop(a);
    let gone = b.event().await;
    assert_eq!(gone["kind"], "presence", "{gone}");
    assert_eq!(gone["connected"], false, "{gone}");

    refuse.store(true, Ordering::SeqCst);
    let mut back = Client::connect(&url, "alice").await;
    let refused = back
        .request(json!({"type": "resume", "room": room, "token": t0}))
        .await;
    assert_eq!(refused["code"], "internal", "{refused}");
    let mut watcher = Client::connect(&url, "sam").await;
    let seen = watcher
        .request(json!({"type": "watch", "room": room}))
        .await;
    assert_eq!(
        seen["snapshot"]["seats"][0]["connected"], false,
        "{}",
        seen["snapshot"]["seats"]
    );
    server.shutdown().await;
}
