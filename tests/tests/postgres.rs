//! The server on PostgreSQL over real sockets: a match played to its end while
//! the database drops the server's sessions in the middle of it. A move that
//! meets the loss is refused with a coded error (never acknowledged unstored),
//! the next one goes through, and a server started on the same database
//! afterwards has every acknowledged move.

use std::sync::Arc;

use grundy_server::store::PgStore;
use grundy_server::{Config, Server};
use grundy_tests::{postgres, two_players, Client};
use serde_json::{json, Value};

async fn start(url: &str) -> Server {
    let url = url.to_owned();
    let store = tokio::task::spawn_blocking(move || PgStore::open(&url))
        .await
        .expect("opened")
        .expect("the store opens");
    Server::start(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(store),
        Config::default(),
    )
    .await
    .expect("the server starts")
}

/// Ends the server's sessions on its database, as an administrator would.
async fn drop_sessions(url: &str) -> usize {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || postgres::shared().expect("running").end_sessions(&url))
        .await
        .expect("dropped")
}

/// Plays `mv` until it is acknowledged; refusals on the way must be the
/// store's (`internal`), at most one.
async fn play(player: &mut Client, room: &str, token: &str, mv: Value) {
    for attempt in 0..2 {
        let answer = player
            .request(json!({"type": "move", "room": room, "token": token, "move": mv}))
            .await;
        if answer["type"] == "ack" {
            return;
        }
        assert_eq!(answer["code"], "internal", "attempt {attempt}: {answer}");
        eprintln!("refused while the store connects again: {answer}");
    }
    panic!("{mv} was refused twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_goes_on_when_the_database_drops_the_server_s_sessions() {
    let Some(pg) = postgres::or_skip() else {
        return;
    };
    let db = pg.fresh_database();
    let server = start(&db).await;
    let url = format!("ws://{}", server.local_addr());
    let (room, _code, t0, t1, mut a, mut b) =
        two_players(&url, json!({"game": "nim", "heaps": [2, 3]}), None).await;
    play(&mut a, &room, &t0, json!({"heap": 0, "take": 1})).await;
    assert!(drop_sessions(&db).await >= 1, "the store's sessions");
    play(&mut b, &room, &t1, json!({"heap": 1, "take": 1})).await;
    play(&mut a, &room, &t0, json!({"heap": 1, "take": 2})).await;
    play(&mut b, &room, &t1, json!({"heap": 0, "take": 1})).await;
    server.shutdown().await;

    let server = start(&db).await;
    let mut c = Client::connect(&format!("ws://{}", server.local_addr()), "carol").await;
    let record = c.request(json!({"type": "get_match", "room": room})).await;
    let moves: Vec<&Value> = record["record"]["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| &m["move"])
        .collect();
    assert_eq!(
        moves,
        [
            &json!({"heap": 0, "take": 1}),
            &json!({"heap": 1, "take": 1}),
            &json!({"heap": 1, "take": 2}),
            &json!({"heap": 0, "take": 1}),
        ],
        "{record}"
    );
    assert_eq!(record["record"]["result"]["winner"], 1, "{record}");
    server.shutdown().await;
}
