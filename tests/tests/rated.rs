//! Rated casual games over real sockets: a room created with `rated: true`
//! between two accounts moves both players' ratings in its game when it
//! ends, however it ends with a winner (a no-show too); a game called off
//! before each side moved is unrated; guests, the house bot, hints and an
//! account against itself are refused by name; a restart keeps the ratings.

use std::time::Duration;

use grundy_tests::{account, config, Client, TestServer};
use serde_json::{json, Value};

fn code(answer: &Value) -> &str {
    answer["code"].as_str().unwrap_or("")
}

fn message(answer: &Value) -> &str {
    answer["message"].as_str().unwrap_or("")
}

/// The players' ratings in `game` by name: (rating, games).
async fn ratings(url: &str, game: &str) -> Vec<(String, f64, u64)> {
    let mut c = Client::connect(url, "reader").await;
    let answer = c
        .request(json!({"type": "get_ratings", "game": game}))
        .await;
    assert_eq!(answer["type"], "ratings", "{answer}");
    let mut out: Vec<(String, f64, u64)> = answer["ratings"]
        .as_array()
        .expect("ratings")
        .iter()
        .map(|r| {
            (
                r["player"].as_str().expect("player").to_string(),
                r["rating"].as_f64().expect("rating"),
                r["games"].as_u64().expect("games"),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// `creator` opens a rated room of `spec` (clock optional); its id and token.
async fn rated_room(creator: &mut Client, spec: Value, clock: Option<Value>) -> (String, String) {
    let mut create = json!({"type": "create_room", "spec": spec, "rated": true});
    if let Some(clock) = clock {
        create["clock"] = clock;
    }
    let seated = creator.request(create).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    assert_eq!(seated["snapshot"]["rated"], true, "{seated}");
    (
        seated["room"].as_str().expect("room").to_string(),
        seated["token"].as_str().expect("token").to_string(),
    )
}

async fn join(c: &mut Client, room: &str) -> String {
    let seated = c.request(json!({"type": "join", "room": room})).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    seated["token"].as_str().expect("token").to_string()
}

async fn play(c: &mut Client, room: &str, token: &str, heap: u64, take: u64) {
    let answer = c
        .request(json!({"type": "move", "room": room, "token": token,
                        "move": {"heap": heap, "take": take}}))
        .await;
    assert_eq!(answer["type"], "ack", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_game_between_accounts_moves_both_ratings_and_a_restart_keeps_them() {
    let mut server = TestServer::start().await;
    let url = server.url();
    let (ann_token, ben_token) = (account(&url, "ann").await, account(&url, "ben").await);
    let spec = json!({"game": "nim", "heaps": [1, 2]});

    // Refused, each naming why, before any room is made.
    let mut guest = Client::connect(&url, "gil").await;
    let refused = guest
        .request(json!({"type": "create_room", "spec": spec, "rated": true}))
        .await;
    assert_eq!(code(&refused), "account_required", "{refused}");
    assert!(message(&refused).starts_with("rated: "), "{refused}");
    let mut ann = Client::connect_token(&url, &ann_token).await;
    for (extra, word) in [
        (json!({"bot": "perfect"}), "house bot"),
        (json!({"hints": true}), "hints"),
    ] {
        let mut create = json!({"type": "create_room", "spec": spec, "rated": true});
        for (k, v) in extra.as_object().unwrap() {
            create[k] = v.clone();
        }
        let refused = ann.request(create).await;
        assert_eq!(code(&refused), "bad_request", "{refused}");
        assert!(message(&refused).contains(word), "{refused}");
    }

    let (room, a) = rated_room(&mut ann, spec.clone(), None).await;
    let listed = guest.request(json!({"type": "list_rooms"})).await;
    let summary = listed["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["room"] == room)
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(summary["rated"], true, "{summary}");
    // A guest, and ann's own second connection, cannot take the other seat.
    let refused = guest.request(json!({"type": "join", "room": room})).await;
    assert_eq!(code(&refused), "account_required", "{refused}");
    let mut ann_again = Client::connect_token(&url, &ann_token).await;
    let refused = ann_again
        .request(json!({"type": "join", "room": room}))
        .await;
    assert_eq!(code(&refused), "bad_request", "{refused}");
    assert!(message(&refused).contains("against itself"), "{refused}");

    let mut ben = Client::connect_token(&url, &ben_token).await;
    let b = join(&mut ben, &room).await;
    // nim 1 2: ann leaves 1 1 and wins.
    play(&mut ann, &room, &a, 1, 1).await;
    play(&mut ben, &room, &b, 0, 1).await;
    play(&mut ann, &room, &a, 1, 1).await;
    let ended = ann.until("ended").await;
    assert_eq!(ended["result"]["winner"], 0, "{ended}");

    let after = ratings(&url, "nim").await;
    assert_eq!(after.len(), 2, "{after:?}");
    let (ann_r, ben_r) = (&after[0], &after[1]);
    assert_eq!((ann_r.0.as_str(), ben_r.0.as_str()), ("ann", "ben"));
    assert!(ann_r.1 > 1500.0 && ben_r.1 < 1500.0, "{after:?}");
    assert_eq!((ann_r.2, ben_r.2), (1, 1), "{after:?}");
    // Mirror images: one game from the same start.
    assert!(
        (ann_r.1 - 1500.0 - (1500.0 - ben_r.1)).abs() < 1e-6,
        "{after:?}"
    );
    // Written with the result: a restart reads the same ratings back.
    drop((ann, ben, ann_again, guest));
    server.restart().await;
    assert_eq!(ratings(&server.url(), "nim").await, after);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_no_show_is_rated_and_a_game_called_off_before_each_side_moved_is_not() {
    let server = TestServer::start_with(grundy_server::Config {
        no_show: Duration::from_millis(300),
        ..config()
    })
    .await;
    let url = server.url();
    let (ann_token, ben_token) = (account(&url, "ann").await, account(&url, "ben").await);
    let mut ann = Client::connect_token(&url, &ann_token).await;
    let mut ben = Client::connect_token(&url, &ben_token).await;
    let spec = json!({"game": "nim", "heaps": [3, 4]});

    // Aborted by ann before her first move: unrated.
    let (room, a) = rated_room(&mut ann, spec.clone(), None).await;
    join(&mut ben, &room).await;
    let aborted = ann
        .request(json!({"type": "abort", "room": room, "token": a}))
        .await;
    assert_eq!(aborted["type"], "ack", "{aborted}");
    assert_eq!(ann.until("ended").await["result"]["winner"], Value::Null);
    assert!(ratings(&url, "nim").await.is_empty());

    // Ann never makes her first move in a timed rated game: she loses it,
    // rated (a casual game would be called off).
    let clock = json!({"initial_ms": 60_000, "increment_ms": 0});
    let (room, _) = rated_room(&mut ann, spec, Some(clock)).await;
    join(&mut ben, &room).await;
    let ended = ann.until("ended").await;
    assert_eq!(ended["result"]["reason"], "no_show", "{ended}");
    assert_eq!(ended["result"]["winner"], 1, "{ended}");
    let after = ratings(&url, "nim").await;
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(after[0].1 < 1500.0 && after[1].1 > 1500.0, "{after:?}");
}
