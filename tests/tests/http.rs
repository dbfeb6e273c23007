//! HTTP beside the WebSocket on one port (docs/http.md): the page, the JSON
//! API with good and bad input, the health check and the metrics, as a tool
//! or a browser would ask for them.

use std::time::Duration;

use grundy_protocol::{Analysis, Position, Rules};
use grundy_tests::{http, http_with, two_players, Client, TestServer};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn query(value: &Value) -> String {
    // The few characters a spec uses that a query must escape.
    value
        .to_string()
        .replace('%', "%25")
        .replace(' ', "%20")
        .replace('"', "%22")
        .replace('{', "%7B")
        .replace('}', "%7D")
        .replace('[', "%5B")
        .replace(']', "%5D")
        .replace(',', "%2C")
        .replace(':', "%3A")
        .replace('+', "%2B")
}

/// Every refusal is a 4xx (or 503) with `{code, message}`, never a 500.
fn refused(answer: &grundy_tests::HttpAnswer, status: u16, code: &str) -> String {
    assert_eq!(answer.status, status, "{answer:?}");
    assert_eq!(
        answer.header("content-type"),
        Some("application/json"),
        "{answer:?}"
    );
    let body = answer.json();
    assert_eq!(body["code"], code, "{body}");
    body["message"].as_str().expect("message").to_string()
}

#[tokio::test]
async fn the_page_is_served_with_its_modules() {
    let server = TestServer::start().await;
    let page = http(server.addr, "GET", "/").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("text/html"));
    assert!(page
        .body
        .contains("<script type=\"module\" src=\"/app.js\">"));
    let csp = page.header("content-security-policy").expect("a policy");
    assert!(csp.contains("default-src 'self'"), "{csp}");
    for module in [
        "/app.js",
        "/net.js",
        "/boards.js",
        "/words.js",
        "/dom.js",
        "/account.js",
    ] {
        let js = http(server.addr, "GET", module).await;
        assert_eq!(js.status, 200, "{module}");
        assert_eq!(
            js.header("content-type"),
            Some("text/javascript"),
            "{module}"
        );
    }
    // Asked again with its tag: not sent again.
    let etag = page.header("etag").expect("etag").to_string();
    let again = http_with(server.addr, "GET", "/", &[("if-none-match", &etag)]).await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    // Nothing outside the page's own files.
    let msg = refused(
        &http(server.addr, "GET", "/../Cargo.toml").await,
        404,
        "not_found",
    );
    assert!(msg.contains("no such page"), "{msg}");
    refused(
        &http(server.addr, "GET", "/style.css.bak").await,
        404,
        "not_found",
    );
    let posted = http(server.addr, "POST", "/").await;
    let msg = refused(&posted, 405, "method_not_allowed");
    assert!(msg.contains("GET"), "{msg}");
    assert_eq!(posted.header("allow"), Some("GET,HEAD"));
}

#[tokio::test]
async fn a_websocket_on_any_path_still_speaks_the_protocol() {
    let server = TestServer::start().await;
    for path in ["/", "/play", "/api/rooms"] {
        let url = format!("ws://{}{path}", server.addr);
        let mut c = Client::connect(&url, "alice").await;
        let pong = c.request(json!({"type": "ping"})).await;
        assert_eq!(pong["type"], "pong", "{path}");
    }
}

#[tokio::test]
async fn analyze_answers_what_grundy_analyze_json_prints() {
    let server = TestServer::start().await;
    for spec in [
        json!({"game": "nim", "heaps": [3, 4, 5]}),
        json!({"game": "kayles", "heaps": [5, 7]}),
        json!({"game": "darkraft", "grid": ["RL", "LR"]}),
        json!({"game": "twist", "stones": 10}),
    ] {
        let answer = http(
            server.addr,
            "GET",
            &format!("/api/analyze?spec={}", query(&spec)),
        )
        .await;
        assert_eq!(answer.status, 200, "{answer:?}");
        let position = Position::from_spec(&spec).expect("spec");
        let expected = serde_json::to_value(Analysis::of(&position, 1000)).expect("json");
        assert_eq!(answer.json(), expected, "{spec}");
    }
    let spec = json!({"game": "nim", "heaps": [7, 9, 12, 15]});
    let two = http(
        server.addr,
        "GET",
        &format!("/api/analyze?limit=2&spec={}", query(&spec)),
    )
    .await;
    assert_eq!(
        two.json()["winning_moves"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(two.json()["winning_move_count"], Value::Null);

    let msg = refused(
        &http(
            server.addr,
            "GET",
            &format!(
                "/api/analyze?spec={}",
                query(&json!({"game": "nim", "heaps": [1, -1]}))
            ),
        )
        .await,
        400,
        "bad_spec",
    );
    assert!(msg.contains("heaps[1]"), "{msg}");
    let msg = refused(
        &http(server.addr, "GET", "/api/analyze?spec=%7Bnope").await,
        400,
        "bad_spec",
    );
    assert!(msg.contains("not JSON"), "{msg}");
    let msg = refused(
        &http(server.addr, "GET", "/api/analyze").await,
        400,
        "bad_request",
    );
    assert!(msg.contains("spec"), "{msg}");
    let msg = refused(
        &http(server.addr, "GET", "/api/analyze?spec=1&limt=3").await,
        400,
        "bad_request",
    );
    assert!(msg.contains("limt"), "{msg}");
    let msg = refused(
        &http(
            server.addr,
            "GET",
            &format!("/api/analyze?limit=1001&spec={}", query(&spec)),
        )
        .await,
        400,
        "bad_request",
    );
    assert!(msg.contains("limit"), "{msg}");
    let msg = refused(
        &http(
            server.addr,
            "GET",
            &format!("/api/analyze?limit=-1&spec={}", query(&spec)),
        )
        .await,
        400,
        "bad_request",
    );
    assert!(msg.contains("limit"), "{msg}");
}

/// Every byte but letters and digits percent-encoded, as
/// `encodeURIComponent` would (and more).
fn escaped(text: &str) -> String {
    text.bytes()
        .map(|b| match b.is_ascii_alphanumeric() {
            true => char::from(b).to_string(),
            false => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn parse_reads_the_short_forms_grundy_analyze_reads() {
    let server = TestServer::start().await;
    let addr = server.addr;
    let ask =
        |query: String| async move { http(addr, "GET", &format!("/api/parse?{query}")).await };
    let sum = ask(format!("position={}", escaped("nim 3 5 + kayles 7"))).await;
    assert_eq!(sum.status, 200, "{sum:?}");
    assert_eq!(
        sum.json(),
        json!({"spec": {"game": "sum", "parts": [{"game": "nim", "heaps": [3, 5]},
            {"game": "kayles", "heaps": [7]}]}, "short": "nim 3 5 + kayles 7"})
    );
    let misere = ask(format!("position={}", escaped("misere nim 1 1 3"))).await;
    assert_eq!(
        misere.json(),
        json!({"spec": {"game": "nim", "heaps": [1, 1, 3], "misere": true},
            "short": "nim --misere 1 1 3"})
    );
    let pasted = ask(format!(
        "position={}",
        query(&json!({"game": "wythoff", "heaps": [3, 5]}))
    ))
    .await;
    assert_eq!(pasted.json()["short"], "wythoff 3 5", "{pasted:?}");

    let take = ask(format!(
        "position={}&move={}",
        escaped("nim 3 4 5"),
        escaped("0 2")
    ))
    .await;
    assert_eq!(
        take.json(),
        json!({"move": {"heap": 0, "take": 2}, "short": "0 2"})
    );
    let in_part = ask(format!(
        "move={}&position={}",
        escaped("1: 0 1"),
        escaped("nim 3 5 + kayles 7")
    ))
    .await;
    assert_eq!(
        in_part.json(),
        json!({"move": {"part": 1, "move": {"heap": 0, "take": 1}}, "short": "1: 0 1"})
    );

    // A room's position now, which no spec describes once a Darkraft cell is
    // picked: the move is read there.
    let grid = json!({"game": "darkraft", "grid": ["RLR", "LRL", "RRL"]});
    let mut now = Position::from_spec(&grid).expect("spec");
    let picked = now
        .parse_move(&json!({"row": 1, "col": 1}))
        .expect("a move");
    now.play(&picked).expect("legal");
    let next = now.legal_moves(1).moves.pop().expect("a move left");
    let (room, code, t0, _, mut a, _b) = two_players(&server.url(), grid, None).await;
    let pick = json!({"type": "move", "room": room, "token": t0, "move": {"row": 1, "col": 1}});
    assert_eq!(a.request(pick).await["type"], "ack");
    let Value::Object(cell) = json!(next) else {
        panic!("a cell")
    };
    let typed = format!("{} {}", cell["row"], cell["col"]);
    let at_room = ask(format!("room={code}&move={}", escaped(&typed))).await;
    assert_eq!(
        at_room.json(),
        json!({"move": cell, "short": typed}),
        "{at_room:?}"
    );
    let msg = refused(
        &ask(format!("room={code}&move={}", escaped("1 1"))).await,
        400,
        "bad_move",
    );
    assert!(msg.starts_with("move: illegal move: "), "{msg}");
    refused(&ask("room=NOSUCH&move=1".into()).await, 404, "unknown_room");
    let msg = refused(&ask(format!("room={code}")).await, 400, "bad_request");
    assert!(msg.starts_with("move: required with room"), "{msg}");
    let msg = refused(
        &ask(format!("room={code}&position=nim&move=0")).await,
        400,
        "bad_request",
    );
    assert!(msg.contains("not both"), "{msg}");

    // What is wrong is named, in the words typed.
    let said = |answer: &grundy_tests::HttpAnswer, code: &str| refused(answer, 400, code);
    let msg = said(
        &ask(format!("position={}", escaped("nim 3 x"))).await,
        "bad_spec",
    );
    assert_eq!(msg, "position: \"x\" is not a whole number ≥ 0");
    let msg = said(
        &ask(format!("position={}", escaped("chess 1"))).await,
        "bad_spec",
    );
    assert!(msg.starts_with("position: unknown game \"chess\""), "{msg}");
    let msg = said(
        &ask(format!("position={}", escaped("nim 2 + moore --k 0 3 4"))).await,
        "bad_spec",
    );
    assert!(
        msg.starts_with("position: part 1, --k: must be at least 1"),
        "{msg}"
    );
    let msg = said(
        &ask(format!(
            "position={}&move={}",
            escaped("nim 3 4 5"),
            escaped("0 9")
        ))
        .await,
        "bad_move",
    );
    assert!(msg.starts_with("move: illegal move: "), "{msg}");
    let msg = said(
        &ask(format!("position={}&move=banana", escaped("wythoff 3 5"))).await,
        "bad_move",
    );
    assert!(msg.starts_with("move: \"banana\" is not a move"), "{msg}");
    let msg = said(&ask("move=0".into()).await, "bad_request");
    assert!(msg.starts_with("position: required"), "{msg}");
    let msg = said(&ask("position=nim&moves=1".into()).await, "bad_request");
    assert!(msg.contains("moves"), "{msg}");
    // Long, yet within a request target's 65,534 bytes once encoded.
    let long = format!("nim {}", "1".repeat(33_000));
    let msg = said(
        &ask(format!("position={}", escaped(&long))).await,
        "bad_request",
    );
    assert!(
        msg.starts_with("position: at most 32768 bytes, got 33004"),
        "{msg}"
    );
}

#[tokio::test]
async fn a_match_is_read_reviewed_and_downloaded() {
    let server = TestServer::start().await;
    let url = server.url();
    // Heaps 1, 2: seat 0 is winning (take 1 from heap 1) and throws it away.
    let (room, code, t0, t1, mut a, mut b) =
        two_players(&url, json!({"game": "nim", "heaps": [1, 2]}), None).await;
    let play = |token: &str, heap: u64, take: u64| json!({"type": "move", "room": room, "token": token, "move": {"heap": heap, "take": take}});
    assert_eq!(a.request(play(&t0, 1, 2)).await["type"], "ack");
    assert_eq!(b.request(play(&t1, 0, 1)).await["type"], "ack");

    // The lobby lists nothing finished; the record has every move.
    for key in [room.as_str(), code.as_str()] {
        let record = http(server.addr, "GET", &format!("/api/matches/{key}")).await;
        assert_eq!(record.status, 200, "{record:?}");
        let record = record.json();
        assert_eq!(record["room"], room.as_str());
        assert_eq!(record["players"], json!(["alice", "bob"]));
        assert_eq!(record["moves"].as_array().map(Vec::len), Some(2));
        assert_eq!(record["result"]["winner"], 1);
    }
    let download = http(
        server.addr,
        "GET",
        &format!("/api/matches/{room}?download=true"),
    )
    .await;
    assert_eq!(
        download.header("content-disposition"),
        Some(format!("attachment; filename=\"grundy-{room}.json\"").as_str())
    );

    let review = http(server.addr, "GET", &format!("/api/matches/{room}/review")).await;
    assert_eq!(review.status, 200, "{review:?}");
    // A finished match's review is kept: the same answer again.
    let again = http(server.addr, "GET", &format!("/api/matches/{code}/review")).await;
    assert_eq!(again.body, review.body);
    let review = review.json();
    assert_eq!(review["moves"][0]["mistake"], true, "{review}");
    assert_eq!(review["moves"][1]["mistake"], false, "{review}");
    assert_eq!(review["steps"][0]["outcome"], "N");
    assert_eq!(
        review["steps"][0]["best_move"],
        json!({"heap": 1, "take": 1})
    );
    assert_eq!(review["steps"][0]["grundy"], 3);
    assert_eq!(
        review["steps"][0]["components"][1],
        json!({"label": "heap 1", "value": 2})
    );
    assert_eq!(
        review["steps"][1]["position"],
        json!({"game": "nim", "heaps": [1, 0]})
    );
    assert_eq!(
        review["steps"][2]["outcome"],
        Value::Null,
        "the game is over"
    );

    let msg = refused(
        &http(server.addr, "GET", "/api/matches/NOSUCH").await,
        404,
        "unknown_room",
    );
    assert!(msg.contains("NOSUCH"), "{msg}");
    refused(
        &http(server.addr, "GET", "/api/matches/NOSUCH/review").await,
        404,
        "unknown_room",
    );
    refused(
        &http(
            server.addr,
            "GET",
            &format!("/api/matches/{room}?download=maybe"),
        )
        .await,
        400,
        "bad_request",
    );
}

#[tokio::test]
async fn the_lobby_tournaments_and_ratings_are_read_over_http() {
    let server = TestServer::start().await;
    let mut a = Client::connect(&server.url(), "alice").await;
    for _ in 0..3 {
        let seated = a
            .request(json!({"type": "create_room", "spec": {"game": "kayles", "heaps": [4, 5]}}))
            .await;
        assert_eq!(seated["type"], "seated");
    }
    let rooms = http(server.addr, "GET", "/api/rooms?limit=2").await.json();
    assert_eq!(rooms["total"], 3);
    assert_eq!(rooms["rooms"].as_array().map(Vec::len), Some(2));
    assert_eq!(rooms["rooms"][0]["name"], "Kayles");
    // The game as a person names it, which is what its ratings are kept under.
    assert_eq!(rooms["rooms"][0]["game"], "kayles");
    let rest = http(server.addr, "GET", "/api/rooms?limit=2&offset=2")
        .await
        .json();
    assert_eq!(rest["rooms"].as_array().map(Vec::len), Some(1));
    refused(
        &http(server.addr, "GET", "/api/rooms?limit=0").await,
        400,
        "bad_request",
    );
    refused(
        &http(server.addr, "GET", "/api/rooms?limit=x").await,
        400,
        "bad_request",
    );

    let made = a
        .request(json!({"type": "create_tournament", "format": "round_robin", "family": "nim", "name": "cup"}))
        .await;
    let id = made["tournament"].as_str().expect("id");
    let list = http(server.addr, "GET", "/api/tournaments").await.json();
    assert_eq!(list["tournaments"][0]["tournament"], id);
    let state = http(server.addr, "GET", &format!("/api/tournaments/{id}"))
        .await
        .json();
    assert_eq!(state["status"], "registering");
    assert_eq!(state["settings"]["name"], "cup");
    refused(
        &http(server.addr, "GET", "/api/tournaments/TNOPE").await,
        404,
        "unknown_tournament",
    );

    // Kayles is rated apart from the other heap games; `family` is the
    // older name of `game`.
    for query in ["game=kayles", "family=kayles"] {
        let ratings = http(server.addr, "GET", &format!("/api/ratings?{query}"))
            .await
            .json();
        assert_eq!(ratings["game"], "kayles", "{query}");
        assert_eq!(ratings["name"], "Kayles", "{query}");
        assert_eq!(ratings["family"], "kayles", "{query}");
    }
    let pooled = http(server.addr, "GET", "/api/ratings?game=heaps-pooled")
        .await
        .json();
    assert_eq!(pooled["ratings"], json!([]));
    let list = http(server.addr, "GET", "/api/tournaments").await.json();
    assert_eq!(list["tournaments"][0]["game"], "nim");
    assert_eq!(list["tournaments"][0]["game_name"], "Nim");
    for query in ["family=chess", "game=chess"] {
        let msg = refused(
            &http(server.addr, "GET", &format!("/api/ratings?{query}")).await,
            400,
            "bad_request",
        );
        assert!(msg.contains("chess"), "{msg}");
    }
    refused(
        &http(server.addr, "GET", "/api/ratings").await,
        400,
        "bad_request",
    );
    for limit in [0, 1001] {
        let msg = refused(
            &http(
                server.addr,
                "GET",
                &format!("/api/ratings?game=nim&limit={limit}"),
            )
            .await,
            400,
            "bad_request",
        );
        assert!(msg.contains("limit: must be 1 to 1000"), "{msg}");
    }
    let msg = refused(
        &http(
            server.addr,
            "GET",
            &format!("/api/tournaments/{id}?round=0"),
        )
        .await,
        400,
        "bad_request",
    );
    assert!(msg.contains("round"), "{msg}");
    // Before the start no round is planned yet: any from 1 is empty.
    let ahead = http(
        server.addr,
        "GET",
        &format!("/api/tournaments/{id}?round=3"),
    )
    .await
    .json();
    assert_eq!(ahead["only_round"], 3, "{ahead}");
    assert_eq!(ahead["games"], json!([]), "{ahead}");
    let msg = refused(
        &http(server.addr, "GET", "/api/nothing").await,
        404,
        "not_found",
    );
    assert!(msg.contains("/api/nothing"), "{msg}");
    let deleted = http(server.addr, "DELETE", "/api/rooms").await;
    refused(&deleted, 405, "method_not_allowed");
    assert_eq!(deleted.header("allow"), Some("GET,HEAD"));
}

/// A profile: an account's ratings, its rating after each rated round (read
/// from its rated tournaments' logs), its finished games and tournaments;
/// an unknown name is a 404 naming it, and the lists are bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_players_profile_has_ratings_their_history_games_and_tournaments() {
    use grundy_bot::tournament::{run_field, Field};
    use grundy_protocol::wire::{TournamentFormat, TournamentSettings};
    let server = TestServer::start().await;
    let url = server.url();
    let players = ["erin".to_string(), "fay".to_string()];
    let tokens = grundy_tests::accounts(&url, &players).await;
    grundy_tests::account(&url, "gus").await;
    let settings = TournamentSettings {
        name: Some("profile cup".into()),
        spec: Some(json!({"game": "nim", "heaps": [3, 5]})),
        family: None,
        size: None,
        seed: Some(1),
        format: TournamentFormat::RoundRobin,
        rounds: None,
        clock: None,
        max_players: None,
        rated: true,
    };
    let field = Field {
        url: url.clone(),
        join: None,
        settings,
        players: 2,
        levels: vec![grundy_protocol::Level::Perfect],
        seed: 3,
        tokens,
    };
    let out = run_field(field, |_| {}).await.expect("the tournament runs");
    let tournament = out.state.tournament.clone();

    // Any case finds the account; the answer spells it as its owner did.
    let profile = http(server.addr, "GET", "/api/players/ERIN").await;
    assert_eq!(profile.status, 200, "{profile:?}");
    let profile = profile.json();
    assert_eq!(profile["account"]["username"], "erin", "{profile}");
    assert_eq!(profile["account"]["kind"], "bot", "{profile}");
    let ratings = profile["ratings"].as_array().expect("ratings");
    assert_eq!(ratings.len(), 1, "{profile}");
    assert_eq!(ratings[0]["game"], "nim");
    assert_eq!(ratings[0]["name"], "Nim");
    let played = ratings[0]["games"].as_u64().expect("games");
    assert!(played >= 1, "{profile}");
    let games = profile["games"].as_array().expect("games");
    assert_eq!(
        games.len() as u64,
        played,
        "every rated game is listed: {profile}"
    );
    for g in games {
        assert_eq!(g["opponent"], "fay", "{g}");
        assert_eq!(g["opponent_kind"], "bot", "{g}");
        assert_eq!(g["game"], "nim", "{g}");
        assert_eq!(g["tournament"], tournament.as_str(), "{g}");
        assert!(g["won"].is_boolean(), "{g}");
        // Its replay is there.
        let room = g["room"].as_str().expect("room");
        let record = http(server.addr, "GET", &format!("/api/matches/{room}")).await;
        assert_eq!(record.status, 200, "{record:?}");
    }
    let history = profile["history"].as_array().expect("history");
    assert_eq!(history.len(), 1, "{profile}");
    assert_eq!(history[0]["game"], "nim");
    let points = history[0]["points"].as_array().expect("points");
    assert!(!points.is_empty(), "{profile}");
    let rounds: Vec<u64> = points
        .iter()
        .map(|p| p["round"].as_u64().unwrap())
        .collect();
    assert!(rounds.windows(2).all(|w| w[0] < w[1]), "{rounds:?}");
    let last = points.last().unwrap()["rating"].as_f64().expect("rating");
    let now = ratings[0]["rating"].as_f64().expect("rating");
    assert!(
        (last - now).abs() < 1e-9,
        "the last round's rating is the rating now: {profile}"
    );
    let listed = profile["tournaments"].as_array().expect("tournaments");
    assert_eq!(listed.len(), 1, "{profile}");
    assert_eq!(listed[0]["tournament"], tournament.as_str());
    assert_eq!(listed[0]["name"], "profile cup");
    assert_eq!(listed[0]["rated"], true);
    assert!(listed[0]["finished_at_ms"].is_u64(), "{profile}");

    // An account that never played has an empty profile, not a refusal.
    let gus = http(server.addr, "GET", "/api/players/gus").await.json();
    assert_eq!(gus["ratings"], json!([]), "{gus}");
    assert_eq!(gus["games"], json!([]), "{gus}");
    assert_eq!(gus["history"], json!([]), "{gus}");
    // The lists are as long as asked.
    let one = http(
        server.addr,
        "GET",
        "/api/players/erin?games=1&tournaments=1",
    )
    .await
    .json();
    assert_eq!(one["games"].as_array().map(Vec::len), Some(1), "{one}");

    let msg = refused(
        &http(server.addr, "GET", "/api/players/nobody").await,
        404,
        "unknown_player",
    );
    assert!(msg.contains("\"nobody\""), "{msg}");
    for (query, named) in [
        ("games=0", "games: must be 1 to 100, got 0"),
        ("tournaments=101", "tournaments: must be 1 to 100, got 101"),
        ("limit=5", "limit"),
    ] {
        let msg = refused(
            &http(server.addr, "GET", &format!("/api/players/erin?{query}")).await,
            400,
            "bad_request",
        );
        assert!(msg.contains(named), "{query}: {msg}");
    }
}

#[tokio::test]
async fn health_and_metrics_tell_what_the_server_does() {
    let server = TestServer::start().await;
    let health = http(server.addr, "GET", "/healthz").await;
    assert_eq!(health.status, 200, "{health:?}");
    assert_eq!(health.json()["status"], "ok");

    let (room, _, t0, _, mut a, _b) =
        two_players(&server.url(), json!({"game": "nim", "heaps": [3, 4]}), None).await;
    let illegal = a
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 0, "take": 9}}))
        .await;
    assert_eq!(illegal["code"], "illegal_move");
    let ok = a
        .request(json!({"type": "move", "room": room, "token": t0, "move": {"heap": 1, "take": 1}}))
        .await;
    assert_eq!(ok["type"], "ack");

    let metrics = http(server.addr, "GET", "/metrics").await;
    assert_eq!(metrics.status, 200);
    let text = &metrics.body;
    let value = |line_start: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(line_start))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {line_start} in\n{text}"))
    };
    // Other tests of this process may add to the counters: at least ours.
    assert!(value("grundy_connections ") >= 3.0);
    assert!(value("grundy_rooms{state=\"playing\"} ") >= 1.0);
    assert!(value("grundy_moves_total ") >= 1.0);
    assert!(value("grundy_move_to_ack_seconds_count ") >= 1.0);
    assert!(value("grundy_store_commit_seconds_count ") >= 1.0);
    assert!(value("grundy_refusals_total{code=\"illegal_move\"} ") >= 1.0);
    assert!(value("grundy_house_bots ") >= 0.0);
    assert!(text.contains("grundy_move_to_ack_seconds_bucket{le=\"+Inf\"}"));
}

#[tokio::test]
async fn http_connections_are_bounded_in_time() {
    let mut config = grundy_tests::config();
    config.limits.hello_timeout_ms = 300;
    config.limits.idle_timeout_ms = 600;
    let server = TestServer::start_with(config).await;
    // Silent: closed once the head's time is up.
    let mut silent = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("tcp");
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(5), silent.read(&mut buf)).await;
    assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "{read:?}");
    // Kept alive after an answer: closed after `idle_timeout_ms`.
    let mut kept = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("tcp");
    kept.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("write");
    let mut answer = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), kept.read_to_end(&mut answer)).await;
    assert!(closed.is_ok(), "the connection stayed open");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// The status line hyper answers `request` with, on a connection of its own.
async fn status_line(addr: std::net::SocketAddr, request: &[u8]) -> String {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("tcp");
    // A refused head may be answered before all of it was written.
    let _ = tcp.write_all(request).await;
    let mut answer = vec![0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut answer))
        .await
        .expect("answered in time")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer[..n]).into_owned();
    answer.lines().next().unwrap_or_default().to_string()
}

#[tokio::test]
async fn request_heads_and_targets_are_bounded_exactly() {
    let server = TestServer::start().await;
    // A head of exactly 256 KiB is read; one byte more is a 431.
    let head = |len: usize| {
        let start = "GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ";
        let end = "\r\nconnection: close\r\n\r\n";
        let pad = "a".repeat(len - start.len() - end.len());
        format!("{start}{pad}{end}").into_bytes()
    };
    let at_limit = status_line(server.addr, &head(256 * 1024)).await;
    assert!(at_limit.starts_with("HTTP/1.1 200"), "{at_limit}");
    let over = status_line(server.addr, &head(256 * 1024 + 1)).await;
    assert!(over.starts_with("HTTP/1.1 431"), "{over}");
    // A request target over 65,534 bytes is a 414.
    let target = |len: usize| {
        let path = format!("/healthz?{}", "a".repeat(len - "/healthz?".len()));
        format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").into_bytes()
    };
    let at_limit = status_line(server.addr, &target(65_534)).await;
    assert!(at_limit.starts_with("HTTP/1.1 200"), "{at_limit}");
    let over = status_line(server.addr, &target(65_535)).await;
    assert!(over.starts_with("HTTP/1.1 414"), "{over}");
}

#[tokio::test]
async fn health_is_503_while_the_store_does_not_commit() {
    use grundy_server::store::{HookedWrites, SqliteStore, StoreError, WriteOp};
    let dir = tempfile::tempdir().expect("dir");
    let store = HookedWrites {
        store: SqliteStore::open(&dir.path().join("grundy.db")).expect("store"),
        hook: |_: &SqliteStore, _: WriteOp| {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let _ = tx.send(Err(StoreError::Sqlite("disk I/O error".into())));
            rx
        },
    };
    let server = grundy_server::Server::start(
        "127.0.0.1:0".parse().expect("addr"),
        std::sync::Arc::new(store),
        grundy_tests::config(),
    )
    .await
    .expect("server");
    let health = http(server.local_addr(), "GET", "/healthz").await;
    assert_eq!(health.status, 503, "{health:?}");
    assert_eq!(health.json()["status"], "unavailable");
    assert!(health.json()["message"]
        .as_str()
        .is_some_and(|m| m.contains("store")));
    server.shutdown().await;
}
