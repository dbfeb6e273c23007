//! The server on PostgreSQL over real sockets: a match played to its end while
//! the database drops the server's sessions in the middle of it. A move that
//! meets the loss is refused with a coded error (never acknowledged unstored),
//! the next one goes through, and a server started on the same database
//! afterwards has every acknowledged move.

use std::sync::Arc;

use grundy_server::store::PgStore;
use grundy_server::{Config, Server};
use grundy_tests::{cluster_node, http_with, postgres, two_players, Client};
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
        grundy_tests::config(),
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

/// A token this node has never heard of may be another node's: while the
/// node cannot read the database again (its `account_reads` are full: one
/// at a time, none waiting, and the one under way waits on a lock held
/// here), such a token is answered `busy`, over the WebSocket and over
/// HTTP, never `unauthorized`; one it knows works as before; and once the
/// read goes through, the waiting `hello` is welcomed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_of_another_node_is_not_refused_as_unknown_for_the_load() {
    let (Some(pg), Some(nats)) = (postgres::or_skip(), grundy_testkit::nats::or_skip()) else {
        return;
    };
    let db = pg.fresh_database();
    let one = cluster_node(&db, &nats.url(), grundy_tests::config()).await;
    let one_url = format!("ws://{}", one.local_addr());
    let mut ada = Client::connect(&one_url, "guest").await;
    let made = ada
        .request(
            json!({"type": "create_account", "username": "ada", "password": "analytical engine"}),
        )
        .await;
    assert_eq!(made["type"], "account_created", "{made}");
    let login = json!({"type": "login", "username": "ada", "password": "analytical engine"});
    let known = ada.request(login.clone()).await["token"].clone();

    // Node two loads the accounts and tokens there are at its start.
    let one_read = Config {
        account_reads: 1,
        account_reads_queued: 0,
        ..grundy_tests::config()
    };
    let two = cluster_node(&db, &nats.url(), one_read).await;
    let two_url = format!("ws://{}", two.local_addr());
    let unheard = ada.request(login).await["token"].clone();

    // Every read of the tokens waits.
    let lock = "LOCK TABLE api_tokens IN ACCESS EXCLUSIVE MODE";
    let release = grundy_testkit::postgres::hold_locks(&db, lock, &[]).await;
    let mut waiting = Client::connect(&two_url, "guest").await;
    waiting
        .send(json!({"type": "hello", "version": 1, "token": unheard, "id": "waits"}))
        .await;
    waits_on_a_lock(&db, "api_tokens").await;

    let mut other = Client::connect(&two_url, "guest").await;
    let busy = other
        .request(json!({"type": "hello", "version": 1, "token": unheard}))
        .await;
    assert_eq!(busy["code"], "busy", "{busy}");
    assert_eq!(busy["limit"], "account_reads", "{busy}");
    let welcome = other
        .request(json!({"type": "hello", "version": 1, "token": known}))
        .await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    let bearer = format!("Bearer {}", unheard.as_str().expect("token"));
    let http = http_with(
        two.local_addr(),
        "GET",
        "/api/account",
        &[("authorization", &bearer)],
    )
    .await;
    assert_eq!(http.status, 503, "{:?}", http.json());
    assert_eq!(http.json()["code"], "busy", "{:?}", http.json());

    release.send(()).expect("release");
    let welcome = loop {
        let m = waiting.recv().await;
        if m["id"] == "waits" {
            break m;
        }
    };
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    assert_eq!(welcome["account"]["username"], "ada", "{welcome}");
}

/// Returns once a session waits for a lock on `table` in `db`.
async fn waits_on_a_lock(db: &str, table: &str) {
    let (db, table) = (db.to_owned(), table.to_owned());
    tokio::task::spawn_blocking(move || {
        let mut client = ::postgres::Client::connect(&db, ::postgres::NoTls).expect("connect");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let waiting: i64 = client
                .query_one(
                    "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = $1::text::regclass",
                    &[&table],
                )
                .expect("pg_locks")
                .get(0);
            if waiting > 0 {
                return;
            }
            assert!(std::time::Instant::now() < deadline, "nobody waits on {table}");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    })
    .await
    .expect("watched");
}
