//! The bot over real sockets: it wins every match it starts from an N-position,
//! two perfect bots produce exactly the result the engine predicts, a house bot
//! answers a person and comes back after the server restarts, and one process
//! plays many matches at once.

use grundy_bot::duel::duel;
use grundy_protocol::random::{game_ids, random_spec};
use grundy_protocol::{Level, Outcome, Position, Strategy};
use grundy_tests::{Client, TestServer};
use serde_json::{json, Value};

/// Random starts of every game (all families and presets) with their outcome.
fn starts(per_game: u64) -> Vec<(Value, Outcome)> {
    let mut out = Vec::new();
    for game in game_ids() {
        for seed in 0..per_game {
            let spec = random_spec(game, seed, None).expect("random start");
            let outcome = Position::from_spec(&spec).expect("valid").outcome();
            out.push((spec, outcome));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn perfect_beats_random_from_every_n_start() {
    let server = TestServer::start().await;
    let url = server.url();
    let mut played = 0;
    for (seed, (spec, outcome)) in starts(4).into_iter().enumerate() {
        if outcome != Outcome::N {
            continue;
        }
        let game = duel(&url, &spec, [Level::Perfect, Level::Casual(0)], seed as u64)
            .await
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(
            game.winner,
            Some(0),
            "perfect must win {spec} moving first: {game:?}"
        );
        played += 1;
    }
    assert!(played >= 20, "only {played} N-starts");
}

/// A sum of four different games (Nim, Kayles, Wythoff, a graph token): the
/// perfect bot wins it from its N-position against random play, every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn perfect_wins_a_sum_of_different_games() {
    let server = TestServer::start().await;
    let url = server.url();
    let spec = json!({"game": "sum", "parts": [
        {"game": "nim", "heaps": [3, 5]}, {"game": "kayles", "heaps": [7]},
        {"game": "wythoff", "heaps": [3, 5]},
        {"game": "graph", "vertices": 3, "edges": [[0, 1], [1, 2], [0, 2]], "tokens": [0]}]});
    assert_eq!(Position::from_spec(&spec).unwrap().outcome(), Outcome::N);
    for seed in 0..8 {
        let game = duel(&url, &spec, [Level::Perfect, Level::Casual(0)], seed)
            .await
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(game.winner, Some(0), "seed {seed}: {game:?}");
    }
}

/// Misère Kayles (decided by its misère quotient) and a misère sum of heap
/// games: the perfect bot wins both from N-positions against random play.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn perfect_wins_misere_kayles_and_a_misere_sum() {
    let server = TestServer::start().await;
    let url = server.url();
    let specs = [
        json!({"game": "kayles", "misere": true, "heaps": [4, 6, 9, 13]}),
        json!({"game": "sum", "misere": true, "parts": [
            {"game": "nim", "heaps": [2, 3]}, {"game": "dawson", "heaps": [7, 9]},
            {"game": "bash", "k": 3, "heaps": [11]}]}),
    ];
    for spec in specs {
        let start = Position::from_spec(&spec).unwrap();
        assert_eq!(start.outcome(), Outcome::N, "{spec}");
        for seed in 0..6 {
            let game = duel(&url, &spec, [Level::Perfect, Level::Casual(0)], seed)
                .await
                .unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(game.winner, Some(0), "{spec} seed {seed}: {game:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_perfect_bots_reach_the_predicted_result() {
    let server = TestServer::start().await;
    let url = server.url();
    let mut seen = [0, 0];
    for (seed, (spec, outcome)) in starts(2).into_iter().enumerate() {
        let game = duel(&url, &spec, [Level::Perfect, Level::Perfect], seed as u64)
            .await
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        let expected = if outcome == Outcome::N { 0 } else { 1 };
        assert_eq!(game.winner, Some(expected), "{spec}: {game:?}");
        seen[expected as usize] += 1;
    }
    assert!(
        seen[0] > 0 && seen[1] > 0,
        "both outcomes covered: {seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_matches_at_once_in_one_process() {
    let server = TestServer::start().await;
    let url = server.url();
    let spec = json!({"game": "nim", "heaps": [7, 9, 12, 15]});
    let mut tasks = Vec::new();
    for i in 0..40u64 {
        let (url, spec) = (url.clone(), spec.clone());
        tasks.push(tokio::spawn(async move {
            duel(&url, &spec, [Level::Perfect, Level::Perfect], i).await
        }));
    }
    for t in tasks {
        let game = t.await.expect("task").expect("duel");
        assert_eq!(game.winner, Some(0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_house_bot_plays_a_person_and_survives_a_restart() {
    let mut server = TestServer::start().await;
    let url = server.url();
    // 3, 4, 5 is an N-position: the person moving first could win, but plays
    // badly; the perfect house bot then never lets go.
    let mut me = Client::connect(&url, "dana").await;
    let seated = me
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [3, 4, 5]}, "bot": "perfect"}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].as_str().unwrap().to_string();
    let token = seated["token"].as_str().unwrap().to_string();
    let mut seq;
    let mut heaps = vec![3u64, 4, 5];
    // Wait for the bot to sit down.
    loop {
        let e = me.event().await;
        seq = e["seq"].as_u64().unwrap();
        if e["kind"] == "started" {
            break;
        }
    }
    let mut restarted = false;
    // Take one stone from the first non-empty heap (a poor move, mostly).
    while let Some(i) = heaps.iter().position(|&h| h > 0) {
        let ack = me
            .request(json!({"type": "move", "room": room, "token": token, "move": {"heap": i, "take": 1}}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
        if !restarted {
            // The bot is cut off mid-match; it must come back by itself.
            server.restart_in_place().await;
            restarted = true;
            me = Client::connect(&url, "dana").await;
            let back = me
                .request(json!({"type": "resume", "room": room, "token": token, "since": seq}))
                .await;
            assert_eq!(back["type"], "watching", "{back}");
            heaps[i] -= 1;
            // The bot may have answered before we were back: then its move is
            // among the events we missed.
            let mut answered = false;
            for e in back["events"].as_array().unwrap() {
                seq = e["seq"].as_u64().unwrap();
                if e["kind"] == "moved" && e["seat"] == 1 {
                    heaps = serde_json::from_value(e["position"]["heaps"].clone()).unwrap();
                    answered = true;
                }
                assert_ne!(e["kind"], "ended", "{back}");
            }
            if answered {
                continue;
            }
        } else {
            heaps[i] -= 1;
        }
        // Events until the bot has moved (or the match ended).
        let mut ended = None;
        loop {
            let e = me.event().await;
            assert_eq!(e["seq"].as_u64().unwrap(), seq + 1, "no gap: {e}");
            seq += 1;
            match e["kind"].as_str().unwrap() {
                "moved" if e["seat"] == 1 => {
                    heaps = serde_json::from_value(e["position"]["heaps"].clone()).unwrap();
                    break;
                }
                "ended" => {
                    ended = Some(e);
                    break;
                }
                _ => {}
            }
        }
        if let Some(e) = ended {
            assert_eq!(e["result"]["winner"], 1, "the bot wins: {e}");
            return;
        }
        if heaps.iter().all(|&h| h == 0) {
            break;
        }
    }
    let e = me.event().await;
    assert_eq!(e["result"]["winner"], 1, "the bot wins: {e}");
}

/// A bot that comes back after its match ended and the room left the server's
/// memory learns the result from the stored record (instead of retrying a room
/// the server no longer holds).
#[tokio::test]
async fn a_bot_back_after_its_room_left_memory_reads_the_result() {
    let config = grundy_server::Config {
        finished_rooms_in_memory: 0,
        ..Default::default()
    };
    let server = TestServer::start_with(config).await;
    let (room, _, t0, t1, mut alice, _bob) =
        grundy_tests::two_players(&server.url(), json!({"game": "nim", "heaps": [2, 3]}), None)
            .await;
    let resigned = alice
        .request(json!({"type": "resign", "room": room, "token": t0}))
        .await;
    assert_eq!(resigned["type"], "ack", "{resigned}");
    // The room is gone from memory at once (finished_rooms_in_memory = 0).
    let gone = alice
        .request(json!({"type": "resume", "room": room, "token": t1}))
        .await;
    assert_eq!(gone["code"], "unknown_room", "{gone}");

    let plan = grundy_client::seat::SeatPlan {
        url: server.url(),
        hello: grundy_client::client::Hello::guest("bob"),
        room,
        seat: 1,
        token: t1,
        level: Level::Perfect,
        seed: 1,
    };
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        grundy_client::seat::play_seat(&plan, None, None),
    )
    .await
    .expect("answered at once, not after retries")
    .expect("the result");
    assert_eq!(result.winner, Some(1));
    assert_eq!(result.reason, grundy_protocol::wire::EndReason::Resign);
}
