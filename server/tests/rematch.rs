//! A rematch is an offer and an accept in the finished match's room: one new
//! room, seats swapped, made only once both agree (docs/protocol.md,
//! "Rematch"). Raw clients against the real binary.

mod support;

use grundy_testkit::client::{two_players, Client};
use serde_json::{json, Value};
use support::Process;

fn nim1() -> Value {
    json!({"game": "nim", "heaps": [1]})
}

/// Skips messages up to the next one of `type` (a notice or an answer).
async fn until_type(c: &mut Client, kind: &str) -> Value {
    loop {
        let m = c.recv().await;
        if m["type"] == kind {
            return m;
        }
    }
}

/// A finished match of alice (seat 0, who wins by taking the one heap) and
/// bob: (room, alice's token, bob's token, alice, bob).
async fn finished(url: &str) -> (String, String, String, Client, Client) {
    let (room, _, t0, t1, mut a, mut b) = two_players(url, nim1(), None).await;
    let moved = a
        .request(json!({"type": "move", "room": room, "token": t0,
                        "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(moved["type"], "ack", "{moved}");
    assert_eq!(a.until("ended").await["result"]["winner"], 0);
    assert_eq!(b.until("ended").await["result"]["winner"], 0);
    (room, t0, t1, a, b)
}

async fn rematch(c: &mut Client, kind: &str, room: &str, token: &str) -> Value {
    c.request(json!({"type": kind, "room": room, "token": token}))
        .await
}

/// How many rooms the lobby lists (open or playing), as of now: the lobby's
/// list may be up to half a second old, so this waits that long first.
async fn rooms(url: &str) -> u64 {
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let mut c = Client::connect(url, "lobby").await;
    let list = c.request(json!({"type": "list_rooms"})).await;
    list["total"].as_u64().expect("total")
}

fn error_says(answer: &Value, code: &str, words: &str) {
    assert_eq!(answer["type"], "error", "{answer}");
    assert_eq!(answer["code"], code, "{answer}");
    let message = answer["message"].as_str().unwrap_or("");
    assert!(message.contains(words), "{words:?} not in {answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offer_accepted_makes_one_room_with_the_seats_swapped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Process::start(dir.path().join("grundy.db")).await;
    let url = server.url.clone();
    let (room, t0, t1, mut a, mut b) = finished(&url).await;
    let mut watcher = Client::connect(&url, "carol").await;
    let watching = watcher
        .request(json!({"type": "watch", "room": room}))
        .await;
    assert_eq!(watching["type"], "watching", "{watching}");
    let before = rooms(&url).await;

    let offered = rematch(&mut a, "offer_rematch", &room, &t0).await;
    assert_eq!(offered["type"], "ack", "{offered}");
    // Offering twice is the one offer.
    let again = rematch(&mut a, "offer_rematch", &room, &t0).await;
    assert_eq!(again["type"], "ack", "{again}");
    let told = until_type(&mut b, "rematch_offered").await;
    assert_eq!(told["seat"], 0, "{told}");
    assert_eq!(told["name"], "alice", "{told}");
    assert_eq!(until_type(&mut watcher, "rematch_offered").await["seat"], 0);
    // No room yet: the offer alone makes none.
    assert_eq!(rooms(&url).await, before);

    let accepted = rematch(&mut b, "accept_rematch", &room, &t1).await;
    assert_eq!(accepted["type"], "ack", "{accepted}");
    let for_a = until_type(&mut a, "rematch_ready").await;
    let for_b = until_type(&mut b, "rematch_ready").await;
    assert_eq!(for_a["new_room"], for_b["new_room"], "{for_a} {for_b}");
    assert_ne!(for_a["new_room"], json!(room));
    assert_eq!(for_a["code"], for_b["code"]);
    assert_eq!(
        (for_a["seat"].clone(), for_b["seat"].clone()),
        (json!(1), json!(0))
    );
    assert_eq!(for_a["opponent"], "bob");
    assert_eq!(for_b["opponent"], "alice");
    assert_ne!(for_a["token"], for_b["token"]);
    assert!(!for_a.to_string().contains(for_b["token"].as_str().unwrap()));
    assert_eq!(rooms(&url).await, before + 1, "exactly one room made");

    // Both come to the new room with their own tokens; bob, now on seat 0,
    // moves first, and the move is taken.
    let new_room = for_a["new_room"].as_str().unwrap().to_string();
    let (na, nb) = (
        for_a["token"].as_str().unwrap().to_string(),
        for_b["token"].as_str().unwrap().to_string(),
    );
    let resumed = a
        .request(json!({"type": "resume", "room": new_room, "token": na}))
        .await;
    assert_eq!(resumed["seat"], 1, "{resumed}");
    let resumed = b
        .request(json!({"type": "resume", "room": new_room, "token": nb}))
        .await;
    assert_eq!(resumed["seat"], 0, "{resumed}");
    let snapshot = &resumed["snapshot"];
    assert_eq!(snapshot["spec"], nim1(), "{snapshot}");
    assert_eq!(snapshot["seats"][0]["name"], "bob");
    assert_eq!(snapshot["seats"][1]["name"], "alice");
    let wrong = a
        .request(json!({"type": "move", "room": new_room, "token": na,
                        "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(wrong["code"], "not_your_turn", "{wrong}");
    let moved = b
        .request(json!({"type": "move", "room": new_room, "token": nb,
                        "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(moved["type"], "ack", "{moved}");
    // The old room's offer is spent: accepting again is refused.
    let twice = rematch(&mut b, "accept_rematch", &room, &t1).await;
    error_says(&twice, "bad_request", "no rematch offer to accept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offers_cross_into_one_room_and_a_decline_tells_the_offerer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Process::start(dir.path().join("grundy.db")).await;
    let url = server.url.clone();

    // Declined: the offerer is told, and no room is made.
    let (room, t0, t1, mut a, mut b) = finished(&url).await;
    let before = rooms(&url).await;
    assert_eq!(
        rematch(&mut b, "offer_rematch", &room, &t1).await["type"],
        "ack"
    );
    assert_eq!(until_type(&mut a, "rematch_offered").await["seat"], 1);
    let declined = rematch(&mut a, "decline_rematch", &room, &t0).await;
    assert_eq!(declined["type"], "ack", "{declined}");
    let told = until_type(&mut b, "rematch_withdrawn").await;
    assert_eq!(
        (told["seat"].clone(), told["reason"].clone()),
        (json!(1), json!("declined"))
    );
    let late = rematch(&mut a, "accept_rematch", &room, &t0).await;
    error_says(&late, "bad_request", "no rematch offer to accept");
    assert_eq!(rooms(&url).await, before);

    // Both offer: the second offer accepts the first.
    assert_eq!(
        rematch(&mut a, "offer_rematch", &room, &t0).await["type"],
        "ack"
    );
    assert_eq!(
        rematch(&mut b, "offer_rematch", &room, &t1).await["type"],
        "ack"
    );
    let for_a = until_type(&mut a, "rematch_ready").await;
    let for_b = until_type(&mut b, "rematch_ready").await;
    assert_eq!(for_a["new_room"], for_b["new_room"]);
    assert_eq!(rooms(&url).await, before + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offer_is_void_once_its_player_leaves() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Process::start(dir.path().join("grundy.db")).await;
    let url = server.url.clone();
    let (room, t0, t1, mut a, mut b) = finished(&url).await;
    let before = rooms(&url).await;
    assert_eq!(
        rematch(&mut a, "offer_rematch", &room, &t0).await["type"],
        "ack"
    );
    assert_eq!(until_type(&mut b, "rematch_offered").await["seat"], 0);
    drop(a);
    let told = until_type(&mut b, "rematch_withdrawn").await;
    assert_eq!(
        (told["seat"].clone(), told["reason"].clone()),
        (json!(0), json!("left"))
    );
    let late = rematch(&mut b, "accept_rematch", &room, &t1).await;
    error_says(&late, "bad_request", "no rematch offer to accept");
    assert_eq!(rooms(&url).await, before, "no room made");
    // Nobody is left to offer one to.
    let alone = rematch(&mut b, "offer_rematch", &room, &t1).await;
    error_says(&alone, "bad_request", "has left the room");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectators_running_matches_and_tournament_games_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Process::start(dir.path().join("grundy.db")).await;
    let url = server.url.clone();

    let (room, _, t0, _, mut a, _b) = two_players(&url, nim1(), None).await;
    let running = rematch(&mut a, "offer_rematch", &room, &t0).await;
    error_says(&running, "bad_request", "the match is not over");
    let mut watcher = Client::connect(&url, "carol").await;
    watcher
        .request(json!({"type": "watch", "room": room}))
        .await;
    for token in ["", "not a token"] {
        let spectator = rematch(&mut watcher, "offer_rematch", &room, token).await;
        error_says(&spectator, "unauthorized", "only the match's players");
    }
    let nothing = rematch(&mut a, "decline_rematch", &room, &t0).await;
    error_says(&nothing, "bad_request", "the match is not over");

    // A tournament game: the tournament pairs its games.
    let mut director = Client::connect(&url, "director").await;
    let created = director
        .request(json!({"type": "create_tournament", "spec": nim1(),
                        "format": "round_robin"}))
        .await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let code = created["code"].as_str().unwrap().to_string();
    let mut players = Vec::new();
    for name in ["dora", "emil"] {
        let mut p = Client::connect(&url, name).await;
        let registered = p
            .request(json!({"type": "register", "tournament": code}))
            .await;
        assert_eq!(registered["type"], "registered", "{registered}");
        players.push(p);
    }
    let started = director
        .request(json!({"type": "start_tournament", "tournament": code,
                        "token": created["owner_token"]}))
        .await;
    assert_eq!(started["type"], "ack", "{started}");
    let mut p = players.remove(0);
    let game = until_type(&mut p, "your_game").await;
    let (game_room, token) = (
        game["room"].as_str().unwrap().to_string(),
        game["token"].as_str().unwrap().to_string(),
    );
    let resumed = p
        .request(json!({"type": "resume", "room": game_room, "token": token}))
        .await;
    assert_eq!(resumed["type"], "watching", "{resumed}");
    let refused = rematch(&mut p, "offer_rematch", &game_room, &token).await;
    error_says(&refused, "bad_request", "tournament pairs its games");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_house_bot_accepts_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Process::start(dir.path().join("grundy.db")).await;
    let url = server.url.clone();
    let mut a = Client::connect(&url, "alice").await;
    let seated = a
        .request(json!({"type": "create_room", "spec": nim1(), "bot": "perfect"}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].as_str().unwrap().to_string();
    let t0 = seated["token"].as_str().unwrap().to_string();
    a.until("started").await;
    let moved = a
        .request(json!({"type": "move", "room": room, "token": t0,
                        "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(moved["type"], "ack", "{moved}");
    a.until("ended").await;

    let offered = rematch(&mut a, "offer_rematch", &room, &t0).await;
    assert_eq!(offered["type"], "ack", "{offered}");
    let ready = until_type(&mut a, "rematch_ready").await;
    assert_eq!(ready["seat"], 1, "{ready}");
    let new_room = ready["new_room"].as_str().unwrap().to_string();
    let resumed = a
        .request(json!({"type": "resume", "room": new_room, "token": ready["token"]}))
        .await;
    assert_eq!(resumed["type"], "watching", "{resumed}");
    assert_eq!(resumed["snapshot"]["bot"], "perfect", "{resumed}");
    // The house bot takes seat 0 and, to move first, takes the heap (before
    // alice is back, or after).
    let result = match &resumed["snapshot"]["result"] {
        Value::Null => a.until("ended").await["result"].clone(),
        result => result.clone(),
    };
    assert_eq!(result["winner"], 0, "{result}");
    let record = a
        .request(json!({"type": "get_match", "room": new_room}))
        .await;
    assert_eq!(
        record["record"]["players"],
        json!(["house-bot (perfect)", "alice"]),
        "{record}"
    );
}
