//! The real binary, a real process: killed with SIGKILL in the middle of a
//! match, started again over the same SQLite file (or PostgreSQL database),
//! it has every acknowledged move and the match can be finished; stopped with
//! SIGTERM, it exits 0 and leaves the file intact.

mod support;

use futures_util::StreamExt;
use grundy_server::store::{MatchStore, SqliteStore};
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;

use grundy_testkit::client::{heaps_of, two_players, Client, PATIENCE};
use support::Process;

#[tokio::test]
async fn sigkill_mid_match_loses_no_acknowledged_move() {
    let dir = tempfile::tempdir().expect("temp dir");
    sigkill_mid_match(dir.path().join("g.db").into_os_string()).await;
}

#[tokio::test]
async fn sigkill_mid_match_loses_no_acknowledged_move_on_postgres() {
    let Some(postgres) = grundy_testkit::postgres::or_skip() else {
        return;
    };
    sigkill_mid_match(postgres.fresh_database().into()).await;
}

async fn sigkill_mid_match(db: std::ffi::OsString) {
    let mut first = Process::start(&db).await;
    let (room, code, t0, t1, mut a, mut b) =
        two_players(&first.url, json!({"game": "nim", "heaps": [3, 4, 5]}), None).await;

    // Four moves, each acknowledged.
    let moves = [
        json!({"heap": 0, "take": 1}),
        json!({"heap": 1, "take": 1}),
        json!({"heap": 2, "take": 1}),
        json!({"heap": 0, "take": 1}),
    ];
    let mut last_seq = 0;
    for (i, mv) in moves.iter().enumerate() {
        let (mover, token) = if i % 2 == 0 {
            (&mut a, &t0)
        } else {
            (&mut b, &t1)
        };
        let ack = mover
            .request(json!({"type": "move", "room": room, "token": token, "move": mv}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
        last_seq = ack["seq"].as_u64().expect("seq");
    }
    // A fifth move in flight, never acknowledged: it may or may not survive.
    a.send_request(
        json!({"type": "move", "room": room, "token": t0, "move": {"heap": 1, "take": 1}}),
    )
    .await;
    first.kill_hard().await;
    drop((a, b));

    let second = Process::start(&db).await;
    // Bob comes back by code, with no `since`: the full snapshot.
    let mut b = Client::connect(&second.url, "bob").await;
    let back = b
        .request(json!({"type": "resume", "room": code, "token": t1}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    assert_eq!(back["seat"], 1);
    let snap = &back["snapshot"];
    let kept = snap["moves"].as_array().expect("moves").clone();
    assert!(kept.len() == 4 || kept.len() == 5, "{snap}");
    assert_eq!(kept[..4], moves[..], "every acknowledged move, in order");
    assert!(snap["seq"].as_u64().unwrap() > last_seq, "{snap}");
    assert_eq!(snap["result"], Value::Null);
    let expected = if kept.len() == 5 {
        [1, 2, 4]
    } else {
        [1, 3, 4]
    };
    assert_eq!(heaps_of(snap), expected, "{snap}");
    // Alice comes back by room id with the last number she saw: exactly what
    // she missed, without a gap or a repeat.
    let mut a = Client::connect(&second.url, "alice").await;
    let back = a
        .request(json!({"type": "resume", "room": room, "token": t0, "since": last_seq}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    assert_eq!(back["seat"], 0);
    let mut seq = last_seq;
    for e in back["events"].as_array().expect("events") {
        seq += 1;
        assert_eq!(e["seq"], seq, "{back}");
    }
    assert!(seq > last_seq, "her own return at least: {back}");

    // Play it out: whoever is to move empties the first heap left.
    let mut heaps = expected.to_vec();
    let mut to_move = kept.len() % 2;
    while let Some(h) = heaps.iter().position(|&n| n > 0) {
        let (mover, token) = if to_move == 0 {
            (&mut a, &t0)
        } else {
            (&mut b, &t1)
        };
        let ack = mover
            .request(json!({"type": "move", "room": room, "token": token, "move": {"heap": h, "take": heaps[h]}}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
        heaps[h] = 0;
        to_move = 1 - to_move;
    }
    let winner = 1 - to_move as u64;
    for p in [&mut a, &mut b] {
        let ended = p.until("ended").await;
        assert_eq!(
            ended["result"],
            json!({"winner": winner, "reason": "rules"})
        );
    }
    let record = a.request(json!({"type": "get_match", "room": room})).await;
    let rec = &record["record"];
    assert_eq!(rec["moves"][3]["move"], moves[3], "{record}");
    assert_eq!(rec["result"]["winner"], winner, "{record}");
}

#[tokio::test]
async fn sigterm_exits_cleanly_and_leaves_the_file_intact() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("g.db");
    let mut server = Process::start(&db).await;
    let (room, _code, t0, _t1, mut a, mut b) =
        two_players(&server.url, json!({"game": "nim", "heaps": [2, 2]}), None).await;
    let ack = a
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");

    let status = server.terminate().await;
    assert!(status.success(), "{status:?}");
    // The players were told, then closed with 1001 (going away).
    for p in [&mut a, &mut b] {
        let mut told = false;
        loop {
            match timeout(PATIENCE, p.ws.next())
                .await
                .expect("closed in time")
            {
                Some(Ok(Message::Text(t))) => told |= t.contains(r#""type":"shutdown""#),
                Some(Ok(Message::Close(f))) => {
                    assert_eq!(f.map(|f| u16::from(f.code)), Some(1001));
                    break;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => panic!("{e}"),
                None => panic!("no close frame"),
            }
        }
        assert!(told, "a shutdown message before the close");
    }
    // Stdout held only the address; the logs went to stderr.
    let mut rest = String::new();
    server
        .stdout
        .read_to_string(&mut rest)
        .await
        .expect("stdout");
    assert_eq!(rest, "", "stdout after the address line");
    let logs = server.stderr.lock().unwrap().clone();
    assert!(logs.contains("server stopped"), "stderr: {logs}");

    // The file: whole, and holding the unfinished match with its move.
    let conn = rusqlite::Connection::open(&db).expect("the file opens");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity check");
    assert_eq!(check, "ok");
    drop(conn);
    let store = SqliteStore::open(&db).expect("the store opens");
    let record = store.record(&room).expect("readable").expect("kept");
    assert_eq!(record.moves.len(), 1);
    assert_eq!(record.moves[0].mv, json!({"heap": 0, "take": 1}));
    assert_eq!(record.result, None);
    let unfinished = store.load_unfinished().expect("readable");
    assert!(unfinished.iter().any(|r| r.room == room));
    store.close();
}
