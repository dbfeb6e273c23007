//! Tournaments over real sockets: fields of bots play round robins and Swiss
//! tournaments to the end; the standings are what the games say, perfect bots
//! score what the engine predicts, and a restart in the middle changes nothing.

use std::collections::{HashMap, HashSet};

use grundy_bot::tournament::{bot_name, register, run_field, Field, FieldOutcome};
use grundy_client::client::Hello;
use grundy_protocol::wire::{
    Clock, EndReason, TournamentEventBody, TournamentFormat, TournamentSettings, TournamentState,
    TournamentStatus,
};
use grundy_protocol::{Level, Outcome, Position, Strategy};
use grundy_tests::{accounts, login, Client, TestServer};
use serde_json::{json, Value};

fn settings(format: TournamentFormat, rounds: Option<u32>, family: &str) -> TournamentSettings {
    TournamentSettings {
        name: Some("test".into()),
        spec: None,
        family: Some(family.into()),
        size: None,
        seed: Some(42),
        format,
        rounds,
        clock: Some(Clock {
            initial_ms: 60_000,
            increment_ms: 1_000,
        }),
        max_players: None,
        rated: false,
    }
}

async fn field(
    url: &str,
    settings: TournamentSettings,
    players: usize,
    levels: Vec<Level>,
) -> FieldOutcome {
    // A rated tournament takes accounts only: one per bot.
    let tokens = if settings.rated {
        let names: Vec<String> = (0..players)
            .map(|i| bot_name(levels[i % levels.len()], i))
            .collect();
        accounts(url, &names).await
    } else {
        Vec::new()
    };
    run_field(
        Field {
            url: url.to_string(),
            join: None,
            settings,
            players,
            levels,
            seed: 7,
            tokens,
        },
        |_| {},
    )
    .await
    .expect("the tournament runs to the end")
}

/// The standings recomputed from the games: score per player.
fn scores(state: &TournamentState) -> HashMap<u32, u32> {
    let mut score: HashMap<u32, u32> = HashMap::new();
    for g in &state.games {
        if let Some(w) = g.winner {
            *score.entry(w).or_default() += 1;
        }
    }
    for b in &state.byes {
        *score.entry(b.player).or_default() += 2;
    }
    score
}

/// Every finished tournament: each pairing played both seat orders from one
/// start, and the standings agree with the games.
fn check_consistent(state: &TournamentState) {
    assert_eq!(state.status, TournamentStatus::Finished);
    for p in &state.pairings {
        let [a, b] = p.players;
        for players in [[a, b], [b, a]] {
            let games: Vec<_> = state
                .games
                .iter()
                .filter(|g| g.round == p.round && g.players == players)
                .collect();
            assert_eq!(games.len(), 1, "round {} {players:?}", p.round);
            assert!(games[0].result.is_some());
        }
    }
    assert_eq!(state.games.len(), state.pairings.len() * 2);
    let score = scores(state);
    for s in &state.standings {
        assert_eq!(s.score, score.get(&s.player).copied().unwrap_or(0), "{s:?}");
        assert_eq!(
            s.rating.is_some(),
            state.settings.rated,
            "rated games give ratings, unrated ones none: {s:?}"
        );
    }
    let ranks: Vec<u32> = state.standings.iter().map(|s| s.score).collect();
    assert!(ranks.windows(2).all(|w| w[0] >= w[1]), "sorted: {ranks:?}");
}

/// Sends `msg` and checks its answer: an `ack` first, then the tournament
/// event of `kind` it names (as a room's command does).
async fn acked_before_its_event(client: &mut Client, mut msg: Value, kind: &str) {
    msg["id"] = json!(900);
    client.send(msg).await;
    let first = loop {
        let m = client.recv().await;
        if m["id"] == 900 || m["event"]["kind"] == kind {
            break m;
        }
    };
    assert_eq!(first["type"], "ack", "the ack before the event: {first}");
    let event = loop {
        let m = client.recv().await;
        if m["type"] == "tournament_event" {
            break m;
        }
    };
    assert_eq!(event["event"]["kind"], kind, "{event}");
    assert_eq!(event["event"]["seq"], first["seq"], "{event}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_robin_of_perfect_bots_scores_one_game_per_pairing() {
    let server = TestServer::start().await;
    let rated = TournamentSettings {
        rated: true,
        ..settings(TournamentFormat::RoundRobin, None, "nim")
    };
    let out = field(&server.url(), rated, 5, vec![Level::Perfect]).await;
    let state = &out.state;
    check_consistent(state);
    // 5 players: 5 rounds, each pair meets once, each player sits out once.
    assert_eq!(state.rounds, 5);
    let mut met = HashSet::new();
    for p in &state.pairings {
        let [a, b] = p.players;
        assert!(met.insert((a.min(b), a.max(b))), "{a} and {b} met twice");
    }
    assert_eq!(met.len(), 10);
    assert_eq!(state.byes.len(), 5);
    // Perfect against perfect: the side the engine says wins, wins. So each
    // pairing is one game each: 4 pairings + a bye = 6 points for everyone.
    for g in &state.games {
        let pairing = state
            .pairings
            .iter()
            .find(|p| {
                p.round == g.round
                    && (p.players == g.players || p.players == [g.players[1], g.players[0]])
            })
            .expect("the game's pairing");
        let outcome = Position::from_spec(&pairing.spec).expect("start").outcome();
        let seat = if outcome == Outcome::N { 0 } else { 1 };
        assert_eq!(
            g.winner,
            Some(g.players[seat]),
            "{g:?} from {}",
            pairing.spec
        );
        assert_eq!(g.result.map(|r| r.reason), Some(EndReason::Rules));
    }
    for s in &state.standings {
        assert_eq!(s.score, 6, "{s:?}");
        assert_eq!(s.rank, 1);
    }
    // Every player has a rating now: 8 rated games each. The leaderboard and
    // the lobby show it.
    // The lobby shows the rating of the account that sits down.
    let token = login(&server.url(), "bot-perfect-01").await;
    let mut c = Client::connect_token(&server.url(), &token).await;
    let answer = c
        .request(json!({"type": "get_ratings", "family": "nim", "limit": 3}))
        .await;
    assert_eq!(answer["type"], "ratings", "{answer}");
    let ratings = answer["ratings"].as_array().expect("ratings");
    assert_eq!(ratings.len(), 3, "{answer}");
    assert!(ratings.iter().all(|r| r["games"] == 8), "{answer}");
    let values: Vec<f64> = ratings
        .iter()
        .map(|r| r["rating"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] >= w[1]), "{values:?}");
    // A rating period is a round: every pairing split its two games, so
    // everyone is where they began, whatever order the games ended in (rated
    // game by game, the last winner of each pairing came out ahead).
    for s in &state.standings {
        let rating = s.rating.expect("rated");
        assert!((rating - 1500.0).abs() < 1e-6, "{s:?}");
    }
    let mine = state
        .standings
        .iter()
        .find(|s| s.name == "bot-perfect-01")
        .and_then(|s| s.rating)
        .expect("rated");
    let seated = c
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [5, 6]}}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let rooms = c.request(json!({"type": "list_rooms"})).await;
    assert_eq!(rooms["rooms"][0]["ratings"], json!([mine, null]), "{rooms}");
}

/// Kayles is rated as Kayles, apart from Dawson's Kayles and the other heap
/// games, and the list of tournaments names the game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kayles_tournament_rates_kayles_apart_from_the_other_heap_games() {
    let server = TestServer::start().await;
    let url = server.url();
    let mut c = Client::connect(&url, "reader").await;
    let made = c
        .request(
            json!({"type": "create_tournament", "format": "swiss", "rounds": 1,
                        "family": "dawson", "name": "listed"}),
        )
        .await;
    assert_eq!(made["type"], "tournament_created", "{made}");
    let list = c.request(json!({"type": "list_tournaments"})).await;
    assert_eq!(list["tournaments"][0]["game"], "dawson", "{list}");
    assert_eq!(
        list["tournaments"][0]["game_name"], "Dawson's Kayles",
        "{list}"
    );

    let rated = TournamentSettings {
        rated: true,
        spec: Some(json!({"game": "kayles", "heaps": [3, 4]})),
        family: None,
        ..settings(TournamentFormat::RoundRobin, None, "nim")
    };
    let out = field(&url, rated, 2, vec![Level::Perfect]).await;
    check_consistent(&out.state);
    let kayles = c
        .request(json!({"type": "get_ratings", "game": "kayles"}))
        .await;
    assert_eq!(kayles["type"], "ratings", "{kayles}");
    assert_eq!(kayles["game"], "kayles");
    assert_eq!(kayles["name"], "Kayles");
    let rows = kayles["ratings"].as_array().expect("ratings");
    assert_eq!(rows.len(), 2, "{kayles}");
    assert!(rows.iter().all(|r| r["games"] == 2), "{kayles}");
    // Each won one game of the round: level.
    assert_eq!(rows[0]["rating"], rows[1]["rating"], "{kayles}");
    for other in ["heaps", "dawson", "lasker", "nim"] {
        let answer = c
            .request(json!({"type": "get_ratings", "game": other}))
            .await;
        assert_eq!(answer["ratings"], json!([]), "{other}: {answer}");
    }
    // `family`, the field's older name, still asks the same.
    let old = c
        .request(json!({"type": "get_ratings", "family": "kayles"}))
        .await;
    assert_eq!(old["ratings"], kayles["ratings"]);
    let none = c.request(json!({"type": "get_ratings"})).await;
    assert_eq!(none["code"], "bad_request", "{none}");
    assert!(none["message"].as_str().is_some_and(|m| m.contains("game")));
}

/// A round's ratings are written with its `round_ended` event. While the
/// disk refuses that write, the round is rated once (the retry writes the
/// same rows, it does not rate again); a crash before it is recorded loses
/// nothing: the restarted server rates the round, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_round_is_rated_once_across_a_failed_write_and_a_restart() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use grundy_server::store::{HookedWrites, MatchStore, SqliteStore, StoreError, WriteOp};
    use grundy_server::Server;

    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("g.db");
    let refused = Arc::new(AtomicUsize::new(0));
    let count = refused.clone();
    let store = Arc::new(HookedWrites {
        store: SqliteStore::open(&path).expect("store"),
        hook: move |store: &SqliteStore, op: WriteOp| {
            let round_end = op.ops().any(|op| {
                matches!(op, WriteOp::TournamentEvent { event, .. }
                    if matches!(event.body, TournamentEventBody::RoundEnded { .. }))
            });
            if !round_end {
                return store.write(op);
            }
            count.fetch_add(1, Ordering::SeqCst);
            let (done, answer) = tokio::sync::oneshot::channel();
            let _ = done.send(Err(StoreError::Sqlite("disk I/O error (a test)".into())));
            answer
        },
    });
    let server = Server::start(
        "127.0.0.1:0".parse().expect("addr"),
        store,
        grundy_tests::config(),
    )
    .await
    .expect("server");
    let addr = server.local_addr();
    let url = format!("ws://{addr}");
    let names = ["ivy".to_string(), "jon".to_string()];
    let tokens = accounts(&url, &names).await;
    let rated = TournamentSettings {
        rated: true,
        spec: Some(json!({"game": "nim", "heaps": [3, 5]})),
        family: None,
        ..settings(TournamentFormat::RoundRobin, None, "nim")
    };
    let run = tokio::spawn(run_field(
        Field {
            url: url.clone(),
            join: None,
            settings: rated,
            players: 2,
            levels: vec![Level::Perfect],
            seed: 9,
            tokens,
        },
        |_| {},
    ));
    // Both games are over; the round's end was refused, then tried again.
    for _ in 0..200 {
        if refused.load(Ordering::SeqCst) >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        refused.load(Ordering::SeqCst) >= 2,
        "the round's end was tried again"
    );
    let mut c = Client::connect(&url, "reader").await;
    let answer = c
        .request(json!({"type": "get_ratings", "game": "nim"}))
        .await;
    let rows = answer["ratings"].as_array().expect("ratings");
    assert_eq!(rows.len(), 2, "{answer}");
    assert!(rows.iter().all(|r| r["games"] == 2), "rated once: {answer}");
    drop(c);
    // Down before the round's end was ever recorded.
    server.shutdown().await;
    let server = Server::start(
        addr,
        Arc::new(SqliteStore::open(&path).expect("reopen")),
        grundy_tests::config(),
    )
    .await
    .expect("restart");
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), run)
        .await
        .expect("the tournament finishes after the restart")
        .expect("the field task")
        .expect("the tournament runs to the end");
    check_consistent(&out.state);
    let mut c = Client::connect(&url, "reader").await;
    let answer = c
        .request(json!({"type": "get_ratings", "game": "nim"}))
        .await;
    let rows = answer["ratings"].as_array().expect("ratings");
    assert_eq!(rows.len(), 2, "{answer}");
    assert!(rows.iter().all(|r| r["games"] == 2), "rated once: {answer}");
    assert_eq!(rows[0]["rating"], rows[1]["rating"], "{answer}");
    let rating = out.state.standings[0].rating.expect("rated");
    assert_eq!(json!(rating), rows[0]["rating"]);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swiss_of_sixteen_bots_over_seven_rounds_finishes_with_correct_standings() {
    let server = TestServer::start().await;
    let mut events = Vec::new();
    let out = run_field(
        Field {
            url: server.url(),
            join: None,
            settings: settings(TournamentFormat::Swiss, Some(7), "nim"),
            players: 16,
            levels: vec![
                Level::Perfect,
                Level::Casual(3),
                Level::Casual(2),
                Level::Casual(1),
            ],
            seed: 11,
            tokens: Vec::new(),
        },
        |e| events.push(e.clone()),
    )
    .await
    .expect("the tournament runs to the end");
    let state = &out.state;
    check_consistent(state);
    assert_eq!(state.rounds, 7);
    assert_eq!(state.round, 7);
    assert!(state.ended_early.is_none());
    assert_eq!(state.pairings.len(), 7 * 8);
    let mut met = HashSet::new();
    for p in &state.pairings {
        let [a, b] = p.players;
        assert!(met.insert((a.min(b), a.max(b))), "{a} and {b} met twice");
    }
    assert!(state.byes.is_empty());
    // The perfect bots never lose a game they had the winning side of.
    let perfect: HashSet<u32> = out
        .bots
        .iter()
        .filter(|b| b.level == Level::Perfect)
        .map(|b| b.player)
        .collect();
    assert_eq!(perfect.len(), 4);
    for g in &state.games {
        let pairing = state
            .pairings
            .iter()
            .find(|p| {
                p.round == g.round
                    && (p.players == g.players || p.players == [g.players[1], g.players[0]])
            })
            .expect("the game's pairing");
        let outcome = Position::from_spec(&pairing.spec).expect("start").outcome();
        let winning_seat = if outcome == Outcome::N { 0 } else { 1 };
        let favoured = g.players[winning_seat];
        if perfect.contains(&favoured) {
            assert_eq!(g.winner, Some(favoured), "{g:?}");
        }
    }
    // Events told the story: 7 rounds started and ended, one finish.
    let rounds_started = events
        .iter()
        .filter(|e| matches!(e, TournamentEventBody::RoundStarted { .. }))
        .count();
    assert_eq!(rounds_started, 7);
    assert!(matches!(
        events.last(),
        Some(TournamentEventBody::Finished { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_survives_a_server_restart_between_rounds() {
    let mut server = TestServer::start().await;
    let (round_over, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let run = tokio::spawn(run_field(
        Field {
            url: server.url(),
            join: None,
            settings: settings(TournamentFormat::Swiss, Some(4), "kayles"),
            players: 8,
            levels: vec![Level::Perfect, Level::Casual(2)],
            seed: 5,
            tokens: Vec::new(),
        },
        move |e| {
            if let TournamentEventBody::RoundEnded { round, .. } = e {
                let _ = round_over.send(*round);
            }
        },
    ));
    assert_eq!(heard.recv().await, Some(1), "round 1 ends");
    server.restart_in_place().await;
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), run)
        .await
        .expect("the tournament finishes after the restart")
        .expect("the field task")
        .expect("the tournament runs to the end");
    let state = &out.state;
    check_consistent(state);
    assert_eq!(state.round, 4);
    assert!(state.ended_early.is_none());
    // Every round was reported exactly once, across the restart.
    let mut rounds = Vec::new();
    while let Ok(r) = heard.try_recv() {
        rounds.push(r);
    }
    assert_eq!(rounds, vec![2, 3, 4]);
}

/// A raw client's next message of `type`, skipping others.
async fn next_of(c: &mut Client, kind: &str) -> Value {
    loop {
        let m = c.recv().await;
        if m["type"] == kind {
            return m;
        }
    }
}

/// Sends `msg` and checks it is refused with `code`.
async fn refuses(c: &mut Client, msg: Value, code: &str) {
    refused(&c.request(msg).await, code);
}

fn refused(answer: &Value, code: &str) {
    assert_eq!(answer["type"], "error", "{answer}");
    assert_eq!(answer["code"], code, "{answer}");
    assert!(
        answer["message"].as_str().is_some_and(|m| m.len() > 10),
        "{answer}"
    );
}

/// Creates a round robin with a fixed small start; returns (id, code, owner token).
async fn create_round_robin(c: &mut Client, max_players: Option<u32>) -> (String, String, String) {
    let mut msg = json!({"type": "create_tournament", "spec": {"game": "nim", "heaps": [2, 3]},
        "format": "round_robin", "clock": {"initial_ms": 30000, "increment_ms": 0}});
    if let Some(m) = max_players {
        msg["max_players"] = json!(m);
    }
    let created = c.request(msg).await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let s = |k: &str| created[k].as_str().expect(k).to_string();
    (s("tournament"), s("code"), s("owner_token"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tournament_requests_get_clear_answers() {
    let server = TestServer::start().await;
    let url = server.url();
    let mut owner = Client::connect(&url, "owner").await;
    for (msg, code, says) in [
        (
            json!({"type": "create_tournament", "family": "nim", "format": "swiss"}),
            "bad_request",
            "rounds",
        ),
        (
            json!({"type": "create_tournament", "format": "swiss", "rounds": 3}),
            "bad_request",
            "exactly one of spec",
        ),
        (
            json!({"type": "create_tournament", "family": "chess", "format": "round_robin"}),
            "bad_spec",
            "unknown game",
        ),
        (
            json!({"type": "create_tournament", "family": "nim", "format": "round_robin", "max_players": 1}),
            "bad_request",
            "max_players",
        ),
        (
            json!({"type": "create_tournament", "spec": {"game": "nim", "heaps": [0]}, "format": "round_robin"}),
            "bad_spec",
            "already over",
        ),
        (
            json!({"type": "create_tournament", "family": "nim", "format": "round_robin", "clock": {"initial_ms": 0}}),
            "bad_request",
            "clock",
        ),
        (
            json!({"type": "register", "tournament": "TNOPE"}),
            "unknown_tournament",
            "no tournament",
        ),
        // A title is checked as a guest's name is: nothing that turns the
        // text around, draws nothing, or piles marks over the lines around.
        (
            json!({"type": "create_tournament", "family": "nim", "format": "round_robin",
                   "name": "\u{202e}Official \u{2066}house-bot\u{2069} Championship"}),
            "bad_request",
            "name (the title): character U+202E is not allowed: it changes the direction",
        ),
        (
            json!({"type": "create_tournament", "family": "nim", "format": "round_robin",
                   "name": "Spring\u{200d}Open"}),
            "bad_request",
            "name (the title): character U+200D is not allowed: an invisible",
        ),
        (
            json!({"type": "create_tournament", "family": "nim", "format": "round_robin",
                   "name": "\u{0305}\u{0305}Open"}),
            "bad_request",
            "name (the title): must not begin with a combining mark",
        ),
        (
            json!({"type": "create_tournament", "family": "nim", "format": "round_robin",
                   "name": format!("O{}pen", "\u{0305}".repeat(20))}),
            "bad_request",
            "name (the title): at most 4 combining marks",
        ),
        // A guest (the owner here) may not create a rated tournament.
        (
            json!({"type": "create_tournament", "family": "nim", "format": "round_robin",
                   "rated": true}),
            "account_required",
            "rated: only an account may create a rated tournament",
        ),
    ] {
        let answer = owner.request(msg.clone()).await;
        refused(&answer, code);
        assert!(
            answer["message"].as_str().unwrap().contains(says),
            "{msg}: {answer}"
        );
    }

    let (id, code, owner_token) = create_round_robin(&mut owner, Some(2)).await;
    let start = json!({"type": "start_tournament", "tournament": code, "token": owner_token});
    refuses(&mut owner, start, "bad_request").await; // nobody registered yet
    let mut alice = Client::connect(&url, "alice").await;
    let registered = alice
        .request(json!({"type": "register", "tournament": code}))
        .await;
    assert_eq!(registered["type"], "registered", "{registered}");
    assert_eq!(registered["player"], 0);
    let alice_token = registered["token"].as_str().unwrap().to_string();
    // The same name again, or the same connection again.
    let mut impostor = Client::connect(&url, "alice").await;
    refuses(
        &mut impostor,
        json!({"type": "register", "tournament": code}),
        "already_registered",
    )
    .await;
    refuses(
        &mut alice,
        json!({"type": "register", "tournament": code, "name": "alice2"}),
        "already_registered",
    )
    .await;
    let mut bob = Client::connect(&url, "bob").await;
    let registered = bob
        .request(json!({"type": "register", "tournament": id}))
        .await;
    assert_eq!(registered["player"], 1, "{registered}");
    let mut carol = Client::connect(&url, "carol").await;
    refuses(
        &mut carol,
        json!({"type": "register", "tournament": code}),
        "tournament_full",
    )
    .await;
    // Only the owner starts it.
    refuses(
        &mut alice,
        json!({"type": "start_tournament", "tournament": code, "token": alice_token}),
        "unauthorized",
    )
    .await;
    refuses(
        &mut alice,
        json!({"type": "rejoin", "tournament": code, "token": "nope"}),
        "unauthorized",
    )
    .await;
    acked_before_its_event(
        &mut owner,
        json!({"type": "start_tournament", "tournament": code, "token": owner_token}),
        "started",
    )
    .await;
    refuses(
        &mut owner,
        json!({"type": "start_tournament", "tournament": code, "token": owner_token}),
        "registration_closed",
    )
    .await;
    refuses(
        &mut carol,
        json!({"type": "register", "tournament": code}),
        "registration_closed",
    )
    .await;
    // Alice's game: the tournament seated her; nobody else may join, and it
    // cannot be aborted.
    let game = next_of(&mut alice, "your_game").await;
    let room = game["room"].as_str().unwrap().to_string();
    let seat_token = game["token"].as_str().unwrap().to_string();
    refuses(
        &mut carol,
        json!({"type": "join", "room": room}),
        "room_full",
    )
    .await;
    let resumed = alice
        .request(json!({"type": "resume", "room": room, "token": seat_token}))
        .await;
    assert_eq!(resumed["type"], "watching", "{resumed}");
    refuses(
        &mut alice,
        json!({"type": "abort", "room": room, "token": seat_token}),
        "too_late",
    )
    .await;
    // Withdrawing twice: the second time is refused.
    acked_before_its_event(
        &mut alice,
        json!({"type": "withdraw", "tournament": code, "token": alice_token}),
        "withdrawn",
    )
    .await;
    refuses(
        &mut alice,
        json!({"type": "withdraw", "tournament": code, "token": alice_token}),
        "tournament_over",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_mid_way_resigns_the_game_and_forfeits_the_rest() {
    let server = TestServer::start().await;
    let url = server.url();
    let mut owner = Client::connect(&url, "owner").await;
    let (id, code, owner_token) = create_round_robin(&mut owner, None).await;
    // Two bots and a person who leaves during their first game.
    let mut bots = Vec::new();
    for name in ["bot-a", "bot-b"] {
        let entrant = register(&url, &code, &Hello::guest(name), Level::Perfect, 1)
            .await
            .expect("register");
        bots.push(tokio::spawn(entrant.play()));
    }
    let mut dave = Client::connect(&url, "dave").await;
    let registered = dave
        .request(json!({"type": "register", "tournament": code}))
        .await;
    let dave_player = registered["player"].as_u64().unwrap() as u32;
    let dave_token = registered["token"].as_str().unwrap().to_string();
    let ack = owner
        .request(json!({"type": "start_tournament", "tournament": code, "token": owner_token}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    // 3 players: someone sits out each round; dave waits for his first game.
    let game = next_of(&mut dave, "your_game").await;
    let room = game["room"].as_str().unwrap().to_string();
    let ack = dave
        .request(json!({"type": "withdraw", "tournament": code, "token": dave_token}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    // Follow to the end.
    loop {
        let e = next_of(&mut owner, "tournament_event").await;
        if e["event"]["kind"] == "finished" {
            break;
        }
    }
    for b in bots {
        b.await.expect("bot task").expect("bot plays to the end");
    }
    let state = owner
        .request(json!({"type": "get_tournament", "tournament": id}))
        .await;
    let state: TournamentState = serde_json::from_value(state["state"].clone()).expect("state");
    check_consistent(&state);
    assert_eq!(state.only_round, None);
    // One round at a time, for states too large to send whole.
    let round_two = owner
        .request(json!({"type": "get_tournament", "tournament": id, "round": 2}))
        .await;
    let round_two: TournamentState =
        serde_json::from_value(round_two["state"].clone()).expect("state");
    assert_eq!(round_two.only_round, Some(2));
    assert!(round_two.games.iter().all(|g| g.round == 2));
    assert_eq!(
        round_two.games,
        state
            .games
            .iter()
            .filter(|g| g.round == 2)
            .cloned()
            .collect::<Vec<_>>()
    );
    assert!(!round_two.games.is_empty());
    // A round the tournament cannot have is named, not answered empty.
    for round in [0, state.rounds + 1] {
        let refused = owner
            .request(json!({"type": "get_tournament", "tournament": id, "round": round}))
            .await;
        assert_eq!(refused["code"], "bad_request", "{refused}");
        assert!(
            refused["message"].as_str().unwrap_or("").contains("round"),
            "{refused}"
        );
    }
    let games_of_dave: Vec<_> = state
        .games
        .iter()
        .filter(|g| g.players.contains(&dave_player))
        .collect();
    assert_eq!(games_of_dave.len(), 4, "two pairings, two games each");
    for g in &games_of_dave {
        assert_ne!(g.winner, Some(dave_player), "{g:?}");
        let reason = g.result.expect("over").reason;
        if g.room.as_deref() == Some(room.as_str()) {
            assert_eq!(
                reason,
                EndReason::Resign,
                "the game in progress is resigned"
            );
        } else {
            assert_eq!(reason, EndReason::Forfeit, "{g:?}");
            assert!(g.room.is_none(), "a forfeit is not played: {g:?}");
        }
    }
    let dave_standing = state
        .standings
        .iter()
        .find(|s| s.player == dave_player)
        .unwrap();
    assert!(dave_standing.withdrawn);
    assert_eq!(dave_standing.wins, 0);
    assert_eq!(
        dave_standing.score,
        2 * dave_standing.byes,
        "{dave_standing:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_nobody_follows_before_its_start_ends() {
    let server = TestServer::start_with(grundy_server::Config {
        abandon: std::time::Duration::from_millis(500),
        ..grundy_tests::config()
    })
    .await;
    let url = server.url();
    let mut owner = Client::connect(&url, "owner").await;
    let (id, _code, _token) = create_round_robin(&mut owner, None).await;
    // While the creator follows it, it stays open.
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let state = owner
        .request(json!({"type": "get_tournament", "tournament": id}))
        .await;
    assert_eq!(state["state"]["status"], "registering", "{state}");
    drop(owner);
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let mut later = Client::connect(&url, "later").await;
    let state = later
        .request(json!({"type": "get_tournament", "tournament": id}))
        .await;
    assert_eq!(state["state"]["status"], "finished", "{state}");
    assert!(
        state["state"]["ended_early"]
            .as_str()
            .is_some_and(|why| why.contains("abandoned")),
        "{state}"
    );
    refuses(
        &mut later,
        json!({"type": "register", "tournament": id}),
        "registration_closed",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_tournament_is_not_abandoned_after_a_restart() {
    let mut server = TestServer::start_with(grundy_server::Config {
        abandon: std::time::Duration::from_millis(300),
        ..grundy_tests::config()
    })
    .await;
    let url = server.url();
    let mut owner = Client::connect(&url, "owner").await;
    let (id, code, token) = create_round_robin(&mut owner, None).await;
    for name in ["ann", "ben"] {
        let mut c = Client::connect(&url, name).await;
        let r = c
            .request(json!({"type": "register", "tournament": code}))
            .await;
        assert_eq!(r["type"], "registered", "{r}");
    }
    let ack = owner
        .request(json!({"type": "start_tournament", "tournament": code, "token": token}))
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    server.restart_in_place().await;
    // Nobody follows it now, and its first game waits for its players.
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let mut later = Client::connect(&url, "later").await;
    let state = later
        .request(json!({"type": "get_tournament", "tournament": id}))
        .await;
    assert_eq!(state["state"]["status"], "running", "{state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_registration_does_not_use_up_the_connection_limit() {
    let mut config = grundy_tests::config();
    config.limits.seats_per_connection = 1;
    let server = TestServer::start_with(config).await;
    let url = server.url();
    let mut owner = Client::connect(&url, "owner").await;
    let (_, code, _) = create_round_robin(&mut owner, Some(2)).await;
    let mut c = Client::connect(&url, "carol").await;
    for _ in 0..3 {
        let register = json!({"type": "register", "tournament": code, "name": "x".repeat(41)});
        // Too long a name: refused before the tournament.
        refuses(&mut c, register, "bad_request").await;
    }
    let mut a = Client::connect(&url, "ann").await;
    let mut b = Client::connect(&url, "ben").await;
    for p in [&mut a, &mut b] {
        let r = p
            .request(json!({"type": "register", "tournament": code}))
            .await;
        assert_eq!(r["type"], "registered", "{r}");
    }
    // Full: refused by the tournament, three times; the slot comes back each time.
    for _ in 0..3 {
        refuses(
            &mut c,
            json!({"type": "register", "tournament": code}),
            "tournament_full",
        )
        .await;
    }
    let watching = c
        .request(json!({"type": "watch_tournament", "tournament": code}))
        .await;
    assert_eq!(watching["type"], "tournament_watching", "{watching}");
    // Now it follows one tournament: its limit.
    let mut owner2 = Client::connect(&url, "owner2").await;
    let (_, other, _) = create_round_robin(&mut owner2, None).await;
    refuses(
        &mut c,
        json!({"type": "watch_tournament", "tournament": other}),
        "limit_reached",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_tournament_gone_from_memory_is_read_from_the_store() {
    let mut server = TestServer::start_with(grundy_server::Config {
        linger: std::time::Duration::from_millis(100),
        ..grundy_tests::config()
    })
    .await;
    let url = server.url();
    let out = field(
        &url,
        settings(TournamentFormat::RoundRobin, None, "nim"),
        3,
        vec![Level::Perfect, Level::Casual(0)],
    )
    .await;
    let live = out.state;
    // Once its linger is over the task is gone (it can no longer be
    // watched): by id or by code (any case), and after a restart, it is
    // rebuilt from its stored log, the same as it was.
    let mut c = Client::connect(&url, "reader").await;
    let mut gone = false;
    for _ in 0..50 {
        let answer = c
            .request(json!({"type": "watch_tournament", "tournament": live.code}))
            .await;
        if answer["type"] == "error" {
            refused(&answer, "unknown_tournament");
            gone = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(gone, "the finished tournament left memory");
    let check = |answer: &Value| {
        let stored: TournamentState =
            serde_json::from_value(answer["state"].clone()).expect("a state");
        check_consistent(&stored);
        assert_eq!(stored.games, live.games);
        assert_eq!(stored.standings, live.standings);
        assert_eq!(stored.seq, live.seq);
    };
    let lower = live.code.to_lowercase();
    for key in [&live.tournament, &live.code, &lower] {
        check(
            &c.request(json!({"type": "get_tournament", "tournament": key}))
                .await,
        );
    }
    drop(c);
    server.restart_in_place().await;
    let mut c = Client::connect(&url, "reader").await;
    check(
        &c.request(json!({"type": "get_tournament", "tournament": live.code}))
            .await,
    );
}

/// A finished tournament lingers in memory for a while but does not take up
/// one of the server's `open_tournaments` places.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_tournament_does_not_count_against_the_limit() {
    let mut config = grundy_server::Config {
        abandon: std::time::Duration::from_millis(300),
        ..grundy_tests::config()
    };
    config.limits.open_tournaments = 1;
    let server = TestServer::start_with(config).await;
    let url = server.url();
    let mut owner = Client::connect(&url, "owner").await;
    let (id, _code, _token) = create_round_robin(&mut owner, None).await;
    let mut other = Client::connect(&url, "other").await;
    let again = json!({"type": "create_tournament", "spec": {"game": "nim", "heaps": [2, 3]},
        "format": "round_robin", "clock": {"initial_ms": 30000, "increment_ms": 0}});
    refuses(&mut other, again, "limit_reached").await;
    // Nobody follows the first one any more: it ends as abandoned.
    drop(owner);
    wait_until_finished(&mut other, &id).await;
    create_round_robin(&mut other, None).await;
}

/// Asks for a tournament's state until it is finished (5 s at most).
async fn wait_until_finished(c: &mut Client, tournament: &str) {
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let state = c
            .request(json!({"type": "get_tournament", "tournament": tournament}))
            .await;
        if state["state"]["status"] == "finished" {
            return;
        }
    }
    panic!("tournament {tournament} did not finish");
}

/// Past `finished_tournaments_in_memory`, the tournaments that finished
/// longest ago leave memory at once, long before their linger is over; their
/// records remain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_tournaments_past_the_cap_leave_memory() {
    let server = TestServer::start_with(grundy_server::Config {
        abandon: std::time::Duration::from_millis(100),
        finished_tournaments_in_memory: 1,
        ..grundy_tests::config()
    })
    .await;
    let url = server.url();
    let mut reader = Client::connect(&url, "reader").await;
    let mut made = Vec::new();
    for _ in 0..3 {
        let mut owner = Client::connect(&url, "owner").await;
        let (id, code, _token) = create_round_robin(&mut owner, None).await;
        // Nobody follows it any more: it ends as abandoned.
        drop(owner);
        wait_until_finished(&mut reader, &id).await;
        made.push((id, code));
    }
    // Only the last to finish is still in memory (it can be watched); the
    // others are read from the store, by id or by code alike.
    for (n, (id, code)) in made.iter().enumerate() {
        let watched = reader
            .request(json!({"type": "watch_tournament", "tournament": code}))
            .await;
        if n < 2 {
            refused(&watched, "unknown_tournament");
        } else {
            assert_eq!(watched["type"], "tournament_watching", "{watched}");
        }
        for key in [id, code] {
            let answer = reader
                .request(json!({"type": "get_tournament", "tournament": key}))
                .await;
            assert_eq!(answer["state"]["status"], "finished", "{answer}");
            assert_eq!(answer["state"]["tournament"], json!(id), "{answer}");
        }
    }
}

/// Plays `name`'s tournament games on `c` until the tournament finishes:
/// `moves_first` says whether the player makes a first move at all (a player
/// who never does is a no-show in every game it starts); otherwise it takes
/// one stone from the first non-empty heap of `nim [1, 1]` whenever to move.
async fn play_nim_one_one(mut c: Client, moves_first: bool) {
    let mut seats: HashMap<String, (u64, String)> = HashMap::new();
    loop {
        let m = c.recv().await;
        let room = m["room"].as_str().unwrap_or("").to_string();
        match m["type"].as_str() {
            Some("your_game") => {
                let (seat, token) = (m["seat"].as_u64().unwrap(), m["token"].as_str().unwrap());
                let resumed = c
                    .request(json!({"type": "resume", "room": room, "token": token}))
                    .await;
                assert_eq!(resumed["seat"], seat, "{resumed}");
                if seat == 0 && moves_first {
                    let ack = c
                        .request(json!({"type": "move", "room": room, "token": token,
                                        "move": {"heap": 0, "take": 1}}))
                        .await;
                    assert_eq!(ack["type"], "ack", "{ack}");
                }
                seats.insert(room, (seat, token.to_string()));
            }
            Some("event") if m["event"]["kind"] == "moved" => {
                let Some((seat, token)) = seats.get(&room) else {
                    continue;
                };
                if *seat == 1 && m["event"]["seat"] == 0 {
                    // The first mover took heap 0: the last stone is heap 1's.
                    let ack = c
                        .request(json!({"type": "move", "room": room, "token": token,
                                        "move": {"heap": 1, "take": 1}}))
                        .await;
                    assert_eq!(ack["type"], "ack", "{ack}");
                }
            }
            Some("tournament_event") if m["event"]["kind"] == "finished" => return,
            _ => {}
        }
    }
}

/// In `nim [1, 1]` whoever moves first loses. A player who never makes a
/// first move must not farm a rated round robin: its no-show is rated as the
/// loss it is, so one win each leaves both where a played 1–1 would: level.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_no_show_in_a_rated_tournament_is_rated_as_a_loss() {
    let server = TestServer::start_with(grundy_server::Config {
        no_show: std::time::Duration::from_millis(300),
        ..grundy_tests::config()
    })
    .await;
    let url = server.url();
    let tokens = accounts(&url, &["xan".to_string(), "yul".to_string()]).await;
    let mut xan = Client::connect_token(&url, &tokens[0]).await;
    let created = xan
        .request(
            json!({"type": "create_tournament", "spec": {"game": "nim", "heaps": [1, 1]},
            "format": "round_robin", "rated": true,
            "clock": {"initial_ms": 60000, "increment_ms": 0}}),
        )
        .await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let code = created["code"].as_str().unwrap().to_string();
    let owner_token = created["owner_token"].as_str().unwrap().to_string();
    let mut yul = Client::connect_token(&url, &tokens[1]).await;
    for c in [&mut xan, &mut yul] {
        let registered = c
            .request(json!({"type": "register", "tournament": code}))
            .await;
        assert_eq!(registered["type"], "registered", "{registered}");
    }
    let started = xan
        .request(json!({"type": "start_tournament", "tournament": code, "token": owner_token}))
        .await;
    assert_eq!(started["type"], "ack", "{started}");
    let plays = [
        tokio::spawn(play_nim_one_one(xan, false)),
        tokio::spawn(play_nim_one_one(yul, true)),
    ];
    for p in plays {
        p.await.expect("the player plays to the end");
    }
    let mut c = Client::connect(&url, "reader").await;
    let ratings = c
        .request(json!({"type": "get_ratings", "game": "nim"}))
        .await;
    let rows = ratings["ratings"].as_array().expect("ratings");
    assert_eq!(rows.len(), 2, "{ratings}");
    for r in rows {
        assert_eq!(r["games"], 2, "both games rated: {ratings}");
    }
    assert_eq!(rows[0]["rating"], rows[1]["rating"], "level: {ratings}");
}
