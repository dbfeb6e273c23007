//! Whole matches over real sockets: play to the end with a spectator, refusals
//! that leave the match intact, resume after a dropped connection, clocks,
//! restart, graceful shutdown.

use grundy_server::Config;
use grundy_tests::{two_players, Client, TestServer};
use serde_json::json;

#[tokio::test]
async fn full_match_with_a_spectator() {
    let server = TestServer::start().await;
    let url = server.url();
    let (room, code, t0, t1, mut a, mut b) =
        two_players(&url, json!({"game": "nim", "heaps": [1, 2]}), None).await;
    let mut s = Client::connect(&url, "sam").await;
    let watching = s.request(json!({"type": "watch", "room": code})).await;
    assert_eq!(watching["type"], "watching", "{watching}");
    let snap = &watching["snapshot"];
    assert_eq!(snap["to_move"], 0);
    assert_eq!(snap["seats"][0]["name"], "alice");
    let mut seq = snap["seq"].as_u64().unwrap();

    let moves = [
        (0, json!({"heap": 1, "take": 1})),
        (1, json!({"heap": 0, "take": 1})),
        (0, json!({"heap": 1, "take": 1})),
    ];
    for (seat, mv) in moves {
        let (mover, token) = if seat == 0 {
            (&mut a, &t0)
        } else {
            (&mut b, &t1)
        };
        let ack = mover
            .request(json!({"type": "move", "room": room, "token": token, "move": mv}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
        seq += 1;
        assert_eq!(ack["seq"], seq);
        for c in [&mut a, &mut b, &mut s] {
            let e = c.event().await;
            assert_eq!(e["kind"], "moved");
            assert_eq!(e["seq"], seq);
            assert_eq!(e["seat"], seat);
            assert_eq!(e["move"], mv);
        }
    }
    // Alice took the last stone: she wins by the rules.
    for c in [&mut a, &mut b, &mut s] {
        let e = c.event().await;
        assert_eq!(e["kind"], "ended");
        assert_eq!(e["result"], json!({"winner": 0, "reason": "rules"}));
    }
    let record = s.request(json!({"type": "get_match", "room": room})).await;
    assert_eq!(record["type"], "match", "{record}");
    let rec = &record["record"];
    assert_eq!(rec["players"], json!(["alice", "bob"]));
    assert_eq!(rec["moves"].as_array().unwrap().len(), 3);
    assert_eq!(rec["moves"][1]["move"], json!({"heap": 0, "take": 1}));
    assert_eq!(rec["result"], json!({"winner": 0, "reason": "rules"}));
    // The finished room is no longer listed.
    let rooms = s.request(json!({"type": "list_rooms"})).await;
    assert!(rooms["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["room"] != json!(room)));
}

#[tokio::test]
async fn refusals_leave_the_connection_and_the_match_intact() {
    let server = TestServer::start().await;
    let url = server.url();
    let (room, _code, t0, t1, mut a, mut b) =
        two_players(&url, json!({"game": "nim", "heaps": [3, 4, 5]}), None).await;
    let cases = [
        (
            json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 9}}),
            "illegal_move",
            "heap 0 has only 3 stones",
        ),
        (
            json!({"type": "move", "room": room, "token": t0, "move": {"heap": 7, "take": 1}}),
            "illegal_move",
            "no heap 7",
        ),
        (
            json!({"type": "move", "room": room, "token": t0, "move": {"pile": 0}}),
            "illegal_move",
            "heap: is required",
        ),
        (
            json!({"type": "move", "room": room, "token": t1, "move": {"heap": 0, "take": 1}}),
            "not_your_turn",
            "opponent's turn",
        ),
        (
            json!({"type": "move", "room": room, "move": {"heap": 0, "take": 1}}),
            "unauthorized",
            "token is required",
        ),
        (
            json!({"type": "move", "room": room, "token": "forged", "move": {"heap": 0, "take": 1}}),
            "unauthorized",
            "not valid",
        ),
        (
            json!({"type": "move", "room": "nowhere", "token": t0, "move": {"heap": 0, "take": 1}}),
            "unknown_room",
            "no room",
        ),
        (
            json!({"type": "teleport"}),
            "unknown_type",
            "unknown message type \"teleport\"",
        ),
        (json!({"type": "move", "room": room}), "bad_request", "move"),
        (
            json!({"type": "abort", "room": room, "token": t1}),
            "ack",
            "",
        ),
    ];
    for (msg, code, text) in cases.iter().take(cases.len() - 1) {
        let answer = a.request(msg.clone()).await;
        assert_eq!(answer["type"], "error", "{msg} -> {answer}");
        assert_eq!(answer["code"], *code, "{msg} -> {answer}");
        assert!(
            answer["message"].as_str().unwrap().contains(text),
            "{msg} -> {answer}"
        );
    }
    // Not JSON at all: answered (without an id), connection open.
    a.send_text("{not json").await;
    let answer = a.recv().await;
    assert_eq!(answer["code"], "bad_request", "{answer}");
    // The match goes on.
    let ack = a
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 2}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    assert_eq!(b.event().await["kind"], "moved");
    // Too late to abort once both have... bob has not moved yet: he may abort.
    let ack = b
        .request(json!({"type": "abort", "room": room, "token": t1}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let e = a.event().await;
    assert_eq!(e["kind"], "moved");
    let e = a.event().await;
    assert_eq!(e["result"], json!({"winner": null, "reason": "abort"}));
}

#[tokio::test]
async fn abort_is_refused_after_your_first_move() {
    let server = TestServer::start().await;
    let (room, _code, t0, _t1, mut a, _b) =
        two_players(&server.url(), json!({"game": "nim", "heaps": [3, 4]}), None).await;
    let ack = a
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack");
    let answer = a
        .request(json!({"type": "abort", "room": room, "token": t0}))
        .await;
    assert_eq!(answer["code"], "too_late", "{answer}");
}

#[tokio::test]
async fn a_player_resumes_without_missing_an_event() {
    let server = TestServer::start().await;
    let url = server.url();
    let (room, _code, t0, t1, mut a, b) =
        two_players(&url, json!({"game": "nim", "heaps": [5, 5, 5]}), None).await;
    // Bob saw everything up to his seat (his snapshot), then drops.
    drop(b);
    assert_eq!(a.event().await["kind"], "presence");
    let mut last_seen_by_bob = 3; // seated, seated, started
    let ack = a
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 2, "take": 5}}))
        .await;
    assert_eq!(ack["type"], "ack");
    // Bob comes back and asks for what he missed.
    let mut b = Client::connect(&url, "bob").await;
    let back = b
        .request(json!({"type": "resume", "room": room, "token": t1, "since": last_seen_by_bob}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    assert_eq!(back["seat"], 1);
    let kinds: Vec<_> = back["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        [json!("presence"), json!("moved"), json!("presence")]
    );
    for e in back["events"].as_array().unwrap() {
        last_seen_by_bob += 1;
        assert_eq!(e["seq"], last_seen_by_bob, "no gap, no repeat");
    }
    // And plays on.
    let ack = b
        .request(json!({"type": "move", "room": room, "token": t1, "move": {"heap": 1, "take": 5}}))
        .await;
    assert_eq!(ack["seq"], last_seen_by_bob + 1, "{ack}");
    // Resuming with a bad token is refused.
    let mut c = Client::connect(&url, "mallory").await;
    let no = c
        .request(json!({"type": "resume", "room": room, "token": "guess"}))
        .await;
    assert_eq!(no["code"], "unauthorized");
}

#[tokio::test]
async fn a_flag_falls_when_the_bank_runs_out() {
    let server = TestServer::start().await;
    let (room, _code, t0, _t1, mut a, mut b) = two_players(
        &server.url(),
        json!({"game": "nim", "heaps": [3, 4]}),
        Some(json!({"initial_ms": 2000, "increment_ms": 0})),
    )
    .await;
    let ack = a
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack");
    let moved = b.event().await;
    let clocks = moved["clocks_ms"].as_array().unwrap();
    assert!(
        clocks[0].as_u64().unwrap() <= 2000 && clocks[1] == 2000,
        "{moved}"
    );
    // Bob does not move: his flag falls and alice wins on time.
    let ended = b.event().await;
    assert_eq!(ended["kind"], "ended");
    assert_eq!(ended["result"], json!({"winner": 0, "reason": "flag"}));
    assert_eq!(a.event().await["kind"], "moved");
    assert_eq!(a.event().await["result"]["reason"], "flag");
}

#[tokio::test]
async fn a_restart_keeps_every_acknowledged_move() {
    let mut server = TestServer::start().await;
    let (room, code, t0, t1, mut a, _b) =
        two_players(&server.url(), json!({"game": "kayles", "heaps": [6]}), None).await;
    let ack = a
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 1, "leave": [2, 3]}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let acked = ack["seq"].as_u64().unwrap();
    server.restart().await;
    // Both players come back to the new process with their tokens.
    let mut b = Client::connect(&server.url(), "bob").await;
    let back = b
        .request(json!({"type": "resume", "room": code, "token": t1}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    let snap = &back["snapshot"];
    assert!(snap["seq"].as_u64().unwrap() >= acked);
    assert_eq!(
        snap["moves"],
        json!([{"heap": 0, "take": 1, "leave": [2, 3]}])
    );
    assert_eq!(snap["position"]["heaps"], json!([2, 3]));
    assert_eq!(snap["to_move"], 1);
    let ack = b
        .request(json!({"type": "move", "room": room, "token": t1, "move": {"heap": 1, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let mut a = Client::connect(&server.url(), "alice").await;
    let back = a
        .request(json!({"type": "resume", "room": room, "token": t0, "since": acked}))
        .await;
    let kinds: Vec<_> = back["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].clone())
        .collect();
    assert!(kinds.contains(&json!("moved")), "{back}");
}

#[tokio::test]
async fn shutdown_tells_every_client() {
    let mut server = TestServer::start().await;
    let mut c = Client::connect(&server.url(), "carol").await;
    let stop = tokio::spawn(async move {
        server.stop().await;
        server
    });
    let msg = c.recv().await;
    assert_eq!(msg["type"], "shutdown", "{msg}");
    let (code, _) = c.closed().await;
    assert_eq!(code, 1001);
    stop.await.unwrap();
}

#[tokio::test]
async fn lobby_lists_open_rooms_and_refuses_a_full_one() {
    let server = TestServer::start().await;
    let url = server.url();
    let mut a = Client::connect(&url, "alice").await;
    let seated = a
        .request(
            json!({"type": "create_room", "spec": {"game": "wythoff", "heaps": [3, 5]}, "seat": 1}),
        )
        .await;
    assert_eq!(seated["seat"], 1);
    let code = seated["snapshot"]["code"].as_str().unwrap().to_string();
    let hidden = a
        .request(
            json!({"type": "create_room", "spec": {"game": "nim", "heaps": [1]}, "listed": false}),
        )
        .await;
    assert_eq!(hidden["type"], "seated");
    let rooms = a.request(json!({"type": "list_rooms"})).await;
    let listed = rooms["rooms"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{rooms}");
    assert_eq!(listed[0]["code"], json!(code));
    assert_eq!(listed[0]["state"], "open");
    assert_eq!(listed[0]["game"], "wythoff");
    let mut b = Client::connect(&url, "bob").await;
    assert_eq!(
        b.request(json!({"type": "join", "room": code.to_lowercase()}))
            .await["seat"],
        0
    );
    let mut c = Client::connect(&url, "carol").await;
    let full = c.request(json!({"type": "join", "room": code})).await;
    assert_eq!(full["code"], "room_full", "{full}");
    let bad = c
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [-1]}}))
        .await;
    assert_eq!(bad["code"], "bad_spec");
    assert!(
        bad["message"]
            .as_str()
            .unwrap()
            .contains("heaps[0]: must not be negative"),
        "{bad}"
    );
    let over = c
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [0]}}))
        .await;
    assert_eq!(over["code"], "bad_spec", "{over}");
    let _ = grundy_tests::config();
}

#[tokio::test]
async fn the_room_limit_counts_unfinished_matches_only() {
    let mut config = grundy_tests::config();
    config.limits.seats_per_connection = 2;
    let server = TestServer::start_with(config).await;
    let mut a = Client::connect(&server.url(), "alice").await;
    let create = json!({"type": "create_room", "spec": {"game": "nim", "heaps": [2, 3]}});
    let first = a.request(create.clone()).await;
    assert_eq!(first["type"], "seated", "{first}");
    assert_eq!(a.request(create.clone()).await["type"], "seated");
    let refused = a.request(create.clone()).await;
    assert_eq!(refused["code"], "limit_reached", "{refused}");
    assert_eq!(refused["limit"], "seats_per_connection");
    // Calling the first match off frees its place.
    let (room, token) = (first["room"].clone(), first["token"].clone());
    let ack = a
        .request(json!({"type": "abort", "room": room, "token": token}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    assert_eq!(a.request(create).await["type"], "seated");
}

/// Room ids are 32 hexadecimal digits that sort in the order the rooms were
/// made (UUIDs of version 7), so the store's index of ids grows at its end.
#[tokio::test]
async fn room_ids_sort_in_creation_order() {
    let server = TestServer::start().await;
    let mut a = Client::connect(&server.url(), "alice").await;
    let create = json!({"type": "create_room", "spec": {"game": "nim", "heaps": [2, 3]}});
    let mut ids = Vec::new();
    for _ in 0..8 {
        let seated = a.request(create.clone()).await;
        let id = seated["room"].as_str().expect("a room id").to_string();
        assert_eq!(id.len(), 32, "{id}");
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
        ids.push(id);
    }
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "ids in creation order");
}

/// Under a steady stream of short matches, finished rooms neither fill the
/// server's room limit nor stay in memory without bound: past
/// `finished_rooms_in_memory` the oldest leave, and their records remain.
#[tokio::test]
async fn finished_rooms_neither_block_new_rooms_nor_pile_up() {
    let mut config = grundy_tests::config();
    config.limits.open_rooms = 2;
    config.finished_rooms_in_memory = 2;
    let mut server = TestServer::start_with(config).await;
    let mut a = Client::connect(&server.url(), "alice").await;
    let create = json!({"type": "create_room", "spec": {"game": "nim", "heaps": [2, 3]}});
    let mut rooms = Vec::new();
    for _ in 0..5 {
        let seated = a.request(create.clone()).await;
        assert_eq!(seated["type"], "seated", "{seated}");
        let (room, token) = (seated["room"].clone(), seated["token"].clone());
        let ack = a
            .request(json!({"type": "abort", "room": room, "token": token}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
        rooms.push((room, seated["snapshot"]["code"].clone()));
    }
    // Two unfinished rooms fill the limit; finished ones never counted.
    assert_eq!(a.request(create.clone()).await["type"], "seated");
    assert_eq!(a.request(create.clone()).await["type"], "seated");
    let full = a.request(create).await;
    assert_eq!(full["code"], "limit_reached", "{full}");

    // The two latest finished rooms are still in memory; the first three left
    // it, and only their records remain, found by id or by code (codes are
    // never reused), also after a restart.
    let mut w = Client::connect(&server.url(), "watcher").await;
    for (n, (room, code)) in rooms.iter().enumerate() {
        let watched = w.request(json!({"type": "watch", "room": room})).await;
        if n < 3 {
            assert_eq!(watched["code"], "unknown_room", "room {n}: {watched}");
        } else {
            assert_eq!(watched["type"], "watching", "room {n}: {watched}");
            w.request(json!({"type": "leave", "room": room})).await;
        }
        for key in [room, code] {
            let record = w.request(json!({"type": "get_match", "room": key})).await;
            assert_eq!(record["type"], "match", "room {n}: {record}");
            assert_eq!(record["record"]["room"], *room);
            assert_eq!(record["record"]["result"]["reason"], "abort");
        }
    }
    drop(w);
    server.restart().await;
    let mut w = Client::connect(&server.url(), "watcher").await;
    for (room, code) in &rooms {
        let lower = code.as_str().expect("a code").to_lowercase();
        let record = w.request(json!({"type": "get_match", "room": lower})).await;
        assert_eq!(record["record"]["room"], *room, "{record}");
    }
    let unknown = w
        .request(json!({"type": "get_match", "room": "ZZZZZZ"}))
        .await;
    assert_eq!(unknown["code"], "unknown_room", "{unknown}");
}

/// A connection's commands to a room it sent one to before (its moves)
/// find the room while it is in memory, and once it has left memory are
/// refused as for any unknown room.
#[tokio::test]
async fn commands_to_a_room_gone_from_memory_are_refused() {
    let config = Config {
        finished_rooms_in_memory: 1,
        ..grundy_tests::config()
    };
    let server = TestServer::start_with(config).await;
    let mut a = Client::connect(&server.url(), "alice").await;
    let mut b = Client::connect(&server.url(), "bob").await;
    let create = json!({"type": "create_room", "spec": {"game": "nim", "heaps": [2, 3]}});
    let seated = a.request(create.clone()).await;
    let (first, token) = (seated["room"].clone(), seated["token"].clone());
    let joined = b.request(json!({"type": "join", "room": first})).await;
    assert_eq!(joined["type"], "seated", "{joined}");
    let mv = json!({"type": "move", "room": first, "token": token, "move": {"heap": 1, "take": 3}});
    assert_eq!(a.request(mv).await["type"], "ack");
    let resign = json!({"type": "resign", "room": first, "token": token});
    assert_eq!(a.request(resign.clone()).await["type"], "ack");
    // A room counts as finished once its task has gone round again: any
    // later answer from it says so.
    assert_eq!(a.request(resign.clone()).await["code"], "match_over");
    // Another room finishes (by another connection): the first leaves memory.
    let seated = b.request(create).await;
    let (room, token) = (&seated["room"], &seated["token"]);
    let abort = json!({"type": "abort", "room": room, "token": token});
    assert_eq!(b.request(abort.clone()).await["type"], "ack");
    assert_eq!(b.request(abort).await["code"], "match_over");
    let watched = b.request(json!({"type": "watch", "room": first})).await;
    assert_eq!(watched["code"], "unknown_room", "{watched}");
    let refused = a.request(resign).await;
    assert_eq!(refused["code"], "unknown_room", "{refused}");
}

/// `list_rooms` returns at most `limit` rooms (open ones first, then by code)
/// and says how many there are in all; a limit out of range is refused.
#[tokio::test]
async fn the_lobby_list_is_cut_at_its_limit() {
    let server = TestServer::start().await;
    let mut a = Client::connect(&server.url(), "alice").await;
    let mut codes = Vec::new();
    for _ in 0..3 {
        let seated = a
            .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [2, 3]}}))
            .await;
        codes.push(seated["snapshot"]["code"].as_str().unwrap().to_string());
    }
    codes.sort();
    let all = a.request(json!({"type": "list_rooms"})).await;
    assert_eq!(all["total"], 3, "{all}");
    assert_eq!(all["rooms"].as_array().unwrap().len(), 3);
    let cut = a.request(json!({"type": "list_rooms", "limit": 2})).await;
    assert_eq!(cut["total"], 3, "{cut}");
    let shown: Vec<&str> = cut["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert_eq!(shown, [codes[0].as_str(), codes[1].as_str()]);
    for limit in [0, 501] {
        let refused = a
            .request(json!({"type": "list_rooms", "limit": limit}))
            .await;
        assert_eq!(refused["code"], "bad_request", "{refused}");
        assert!(
            refused["message"].as_str().unwrap().starts_with("limit:"),
            "{refused}"
        );
    }
}

/// A crash between the commit of a match's `ended` event and that of its result
/// leaves a log that ends the match under a record without a result. The
/// restart finishes the record, and the room counts as finished.
#[tokio::test]
async fn a_restart_finishes_a_record_whose_result_was_lost() {
    let mut config = grundy_tests::config();
    config.limits.open_rooms = 1;
    let mut server = TestServer::start_with(config).await;
    let (room, _, t0, _, mut alice, _bob) =
        two_players(&server.url(), json!({"game": "nim", "heaps": [2, 3]}), None).await;
    let ack = alice
        .request(json!({"type": "resign", "room": room, "token": t0}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    server.stop().await;
    {
        let db = rusqlite::Connection::open(&server.db).expect("db");
        let changed = db
            .execute("UPDATE rooms SET result = NULL WHERE id = ?1", [&room])
            .expect("lose the result");
        assert_eq!(changed, 1);
    }
    server.restart().await;
    let mut c = Client::connect(&server.url(), "carol").await;
    let record = c.request(json!({"type": "get_match", "room": room})).await;
    assert_eq!(record["record"]["result"]["reason"], "resign", "{record}");
    // The restored room is finished: it leaves the one unfinished place free.
    let seated = c
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [1, 2]}}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
}

#[tokio::test]
async fn an_untimed_room_may_allow_hints_to_both_players() {
    let mut server = TestServer::start().await;
    let mut a = Client::connect(&server.url(), "alice").await;
    let spec = json!({"game": "nim", "heaps": [3, 4]});
    let refused = a
        .request(json!({"type": "create_room", "spec": spec, "hints": true,
                        "clock": {"initial_ms": 60000, "increment_ms": 0}}))
        .await;
    assert_eq!(refused["code"], "bad_request", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("hints")),
        "{refused}"
    );

    let seated = a
        .request(json!({"type": "create_room", "spec": spec, "hints": true}))
        .await;
    assert_eq!(seated["snapshot"]["hints"], true, "{seated}");
    let room = seated["room"].as_str().expect("room").to_string();
    let plain = a
        .request(json!({"type": "create_room", "spec": spec}))
        .await;
    assert_eq!(plain["snapshot"]["hints"], false, "{plain}");
    let listed = a.request(json!({"type": "list_rooms"})).await;
    let summary = listed["rooms"]
        .as_array()
        .and_then(|rooms| rooms.iter().find(|r| r["room"] == room.as_str()))
        .expect("listed");
    assert_eq!(summary["hints"], true);

    // Kept across a restart, like the rest of the room.
    server.restart().await;
    let mut b = Client::connect(&server.url(), "bob").await;
    let joined = b.request(json!({"type": "join", "room": room})).await;
    assert_eq!(joined["snapshot"]["hints"], true, "{joined}");
}
