//! `grundy tournament`: the real binary against a real server started here on
//! port 0. A person plays a round robin against the perfect bot through a
//! pseudo-terminal; a finished tournament is exported.

mod common;

use std::process::Output;

use common::{expect, grundy, grundy_pty, TestServer};
use grundy_bot::tournament::{register, run_field, Field};
use grundy_client::account::{create_account, login};
use grundy_client::client::Client;
use grundy_protocol::wire::{
    AccountKind, Clock, NewToken, TournamentFormat, TournamentSettings, TournamentState,
};
use grundy_protocol::Level;
use rexpect::process::WaitStatus;
use serde_json::{json, Value};

const SPEC: &str = r#"{"game":"nim","heaps":[1,2]}"#;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The word after `marker` in `text`.
fn word_after<'a>(text: &'a str, marker: &str) -> &'a str {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?} in:\n{text}"));
    text[at + marker.len()..]
        .split_whitespace()
        .next()
        .expect("a word")
}

#[test]
fn a_person_plays_a_round_robin_against_the_perfect_bot_at_the_prompt() {
    let server = TestServer::start();
    let url = server.url();

    // Created with the command itself; it prints the code and the way to start.
    let created = grundy(&[
        "tournament",
        "create",
        "--spec",
        SPEC,
        "--format",
        "round-robin",
        "--clock",
        "1+1",
        "--name",
        "Tiny cup",
        "--server",
        &url,
    ]);
    let text = stdout(&created);
    assert!(created.status.success(), "{created:?}");
    let code = word_after(&text, "grundy tournament join ").to_string();
    let token = word_after(&text, &format!("grundy tournament start {code} --token ")).to_string();
    assert!(text.contains(&format!("--server {url}")), "{text}");

    let listed = stdout(&grundy(&["tournament", "list", "--server", &url]));
    assert!(listed.contains(&code), "{listed}");
    assert!(listed.contains("Tiny cup"), "{listed}");
    assert!(listed.contains("registering"), "{listed}");
    // The server named as for every other command: a bare host:port, in
    // the flag or in GRUNDY_SERVER.
    let bare = url.trim_start_matches("ws://");
    let listed = stdout(&grundy(&["tournament", "list", "--server", bare]));
    assert!(listed.contains(&code), "{listed}");
    let from_env = common::grundy_command(common::shared_config(), &["tournament", "show", &code])
        .env("GRUNDY_SERVER", bare)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run grundy");
    assert!(from_env.status.success(), "{from_env:?}");
    assert!(stdout(&from_env).contains("Tiny cup"), "{from_env:?}");

    // The perfect bot registers first (player 0) and plays on its own.
    let entrant = server
        .rt
        .block_on(register(
            &url,
            &code,
            &grundy_client::client::Hello::guest("perfect-bot"),
            Level::Perfect,
            1,
        ))
        .expect("the bot registers");
    let bot = server.rt.spawn(entrant.play());

    let mut p = grundy_pty(&[
        "tournament",
        "join",
        &code,
        "--name",
        "alice",
        "--server",
        &url,
    ]);
    expect(
        &mut p,
        &format!("Registered in {code} as player 1 (alice). The tournament's id: "),
    );
    expect(&mut p, "Your player token: ");
    expect(&mut p, &format!("grundy tournament join {code} --token "));
    expect(&mut p, "Players: perfect-bot, alice.");
    p.send_line("standings").expect("send");
    expect(&mut p, "No standings yet");
    let mut w = grundy_pty(&["tournament", "watch", &code, "--server", &url]);
    expect(&mut w, &format!("Watching tournament {code}."));
    expect(&mut w, "Registering: 2 players");

    let started = grundy(&[
        "tournament",
        "start",
        &code,
        "--token",
        &token,
        "--server",
        &url,
    ]);
    assert!(started.status.success(), "{started:?}");
    assert!(
        stdout(&started).contains(&format!("Tournament {code} started: 2 players, 1 round.")),
        "{}",
        stdout(&started)
    );

    expect(&mut p, "The tournament starts: 1 round.");
    expect(&mut p, "Round 1 paired:");
    p.exp_regex(r"(perfect-bot vs alice|alice vs perfect-bot), from Nim, heaps \[1,2\]")
        .expect("the pairing");
    // Two games from 1 and 2 stones, seats swapped. Whichever seat alice has,
    // taking the stone of heap 0 is legal at her first turn, and loses: the
    // bot takes the last stones.
    let mut seats = Vec::new();
    for _ in 0..2 {
        expect(&mut p, "Round 1: your game against perfect-bot starts.");
        let (_, seat) = p.exp_regex("you are seat [01]").expect("seat");
        seats.push(seat);
        expect(&mut p, "your move (you ");
        p.send_line("0 1").expect("send");
        expect(&mut p, "You played: take 1 from heap 0 (of 1).");
        expect(&mut p, "perfect-bot played: take");
        expect(
            &mut p,
            "The match is over: you lost: perfect-bot (guest) made the last move.",
        );
        expect(&mut p, "Replay it with `grundy replay ");
    }
    assert_ne!(seats[0], seats[1], "the second game swaps the seats");
    expect(&mut p, "Round 1: perfect-bot beat alice (by the rules).");
    expect(&mut p, "Round 1 is over. Standings:");
    expect(&mut p, "The tournament is over. Final standings:");
    expect(
        &mut p,
        "rank  player       score  W-L  byes  Buchholz  S-B  rating",
    );
    let (_, first) = p
        .exp_regex(r"1  perfect-bot      2  2-0     0         0    0       -")
        .expect("the bot's line");
    assert!(first.contains("perfect-bot"));
    // Guests in an unrated tournament (the default): no ratings.
    p.exp_regex(r"2  alice            0  0-2     0         2    0       -")
        .expect("alice's line");
    p.exp_eof().expect("join ends with the tournament");
    match p.process().wait() {
        Ok(WaitStatus::Exited(_, 0)) => {}
        other => panic!("grundy tournament join should exit 0: {other:?}"),
    }
    // The spectator saw the same, and stops with the tournament.
    expect(&mut w, "Round 1: perfect-bot beat alice (by the rules).");
    expect(&mut w, "The tournament is over. Final standings:");
    expect(&mut w, "2  alice            0  0-2");
    w.exp_eof().expect("watch ends with the tournament");
    server
        .rt
        .block_on(bot)
        .expect("bot task")
        .expect("the bot plays to the end");

    // Guests in an unrated tournament: nobody's rating moved.
    let ratings = stdout(&grundy(&[
        "tournament",
        "ratings",
        "--family",
        "nim",
        "--server",
        &url,
    ]));
    assert!(ratings.contains("No rated Nim players yet."), "{ratings}");
}

/// A finished round robin of three perfect bots (one sits out each round).
fn finished_tournament(server: &TestServer) -> (String, String) {
    let outcome = server
        .rt
        .block_on(run_field(
            Field {
                url: server.url(),
                join: None,
                settings: TournamentSettings {
                    name: Some("export test".into()),
                    spec: Some(serde_json::from_str(SPEC).expect("spec")),
                    family: None,
                    size: None,
                    seed: None,
                    format: TournamentFormat::RoundRobin,
                    rounds: None,
                    clock: Some(Clock {
                        initial_ms: 60_000,
                        increment_ms: 1_000,
                    }),
                    max_players: None,
                    rated: false,
                },
                players: 3,
                levels: vec![Level::Perfect],
                seed: 3,
                tokens: Vec::new(),
            },
            |_| {},
        ))
        .expect("the tournament runs to the end");
    let state = outcome.state;
    // Three players: three rounds, one pairing (two games) each.
    assert_eq!(state.games.len(), 6);
    (state.tournament, state.code)
}

#[test]
fn export_gives_every_game_of_a_finished_tournament_as_csv_and_json() {
    let server = TestServer::start();
    let url = server.url();
    let (id, code) = finished_tournament(&server);

    let csv = grundy(&[
        "tournament",
        "export",
        &id,
        "--format",
        "csv",
        "--server",
        &url,
    ]);
    assert!(csv.status.success(), "{csv:?}");
    let text = stdout(&csv);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "tournament,round,room,seat0,seat1,start,moves,reason,winner"
    );
    assert_eq!(lines.len(), 1 + 6, "{text}");
    for line in &lines[1..] {
        assert!(line.starts_with(&format!("{id},")), "{line}");
        assert!(
            line.contains(r#""{""game"":""nim"",""heaps"":[1,2]}""#),
            "{line}"
        );
        assert!(line.contains(",rules,bot-perfect-"), "{line}");
    }

    // Watching a finished tournament shows how it ended.
    let watched = grundy(&["tournament", "watch", &id, "--server", &url]);
    assert!(watched.status.success(), "{watched:?}");
    let text = stdout(&watched);
    assert!(text.contains("Finished after 3 rounds."), "{text}");
    assert!(
        text.contains("The tournament is over. Final standings:"),
        "{text}"
    );

    // JSON by code, into a file.
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("games.json");
    let json_run = grundy(&[
        "tournament",
        "export",
        &code,
        "--format",
        "json",
        "--out",
        out.to_str().expect("path"),
        "--server",
        &url,
    ]);
    assert!(json_run.status.success(), "{json_run:?}");
    assert!(stdout(&json_run).contains("Wrote 6 games"));
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("file")).expect("JSON");
    assert_eq!(doc["tournament"]["id"], json!(id));
    assert_eq!(doc["tournament"]["status"], json!("finished"));
    assert_eq!(doc["standings"].as_array().expect("standings").len(), 3);
    let games = doc["games"].as_array().expect("games");
    assert_eq!(games.len(), 6);
    for g in games {
        assert_eq!(g["spec"], json!({"game": "nim", "heaps": [1, 2]}));
        // Perfect play from 1 and 2 stones: to 1 and 1, then two single takes.
        assert_eq!(g["moves"].as_array().expect("moves").len(), 3, "{g}");
        assert!(g["winner"].is_string(), "{g}");
    }
}

/// Two perfect bots with accounts of their own, `names`, play a rated round
/// robin (one round: two games, seats swapped) from `spec`.
fn rated_tournament(server: &TestServer, spec: Value, names: [&str; 2]) -> TournamentState {
    let url = server.url();
    let tokens = server.rt.block_on(async {
        let mut tokens = Vec::new();
        for name in names {
            let mut c = Client::connect(&url, "newcomer").await.expect("connect");
            create_account(&mut c, name, "a good password", AccountKind::Bot)
                .await
                .expect("an account");
            let issued = login(&mut c, name, "a good password", NewToken::default())
                .await
                .expect("a token");
            tokens.push(issued.token);
        }
        tokens
    });
    server
        .rt
        .block_on(run_field(
            Field {
                url,
                join: None,
                settings: TournamentSettings {
                    name: Some("rated cup".into()),
                    spec: Some(spec),
                    family: None,
                    size: None,
                    seed: None,
                    format: TournamentFormat::RoundRobin,
                    rounds: None,
                    clock: Some(Clock {
                        initial_ms: 60_000,
                        increment_ms: 1_000,
                    }),
                    max_players: None,
                    rated: true,
                },
                players: 2,
                levels: vec![Level::Perfect],
                seed: 5,
                tokens,
            },
            |_| {},
        ))
        .expect("the tournament runs to the end")
        .state
}

/// Ratings are kept per game as a person names it: Kayles is Kayles, apart
/// from Dawson's Kayles; `--family` is still understood; tournament lists and
/// views name the game.
#[test]
fn ratings_and_tournaments_name_the_game() {
    let server = TestServer::start();
    let url = server.url();
    rated_tournament(
        &server,
        json!({"game": "kayles", "heaps": [3, 4]}),
        ["kim", "lee"],
    );
    for flag in ["--game", "--family"] {
        let out = grundy(&["tournament", "ratings", flag, "kayles", "--server", &url]);
        assert!(out.status.success(), "{out:?}");
        let text = stdout(&out);
        assert!(
            text.starts_with("Ratings in Kayles (Glicko-2"),
            "{flag}: {text}"
        );
        assert!(text.contains("kim") && text.contains("lee"), "{text}");
        // Each won one game of the round, the rating period: level, and
        // where they began.
        let ratings: Vec<&str> = text
            .lines()
            .skip(2)
            .map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                fields[fields.len() - 3]
            })
            .collect();
        assert_eq!(ratings, ["1500", "1500"], "{text}");
    }
    let dawson = stdout(&grundy(&[
        "tournament",
        "ratings",
        "--game",
        "dawson",
        "--server",
        &url,
    ]));
    assert!(
        dawson.contains("No rated Dawson's Kayles players yet."),
        "{dawson}"
    );
    let unknown = grundy(&["tournament", "ratings", "--game", "chess", "--server", &url]);
    assert_eq!(unknown.status.code(), Some(2), "{unknown:?}");
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        err.contains("no game \"chess\"") && err.contains("kayles"),
        "{err}"
    );

    let created = stdout(&grundy(&[
        "tournament",
        "create",
        "--family",
        "lasker",
        "--format",
        "swiss",
        "--rounds",
        "2",
        "--server",
        &url,
    ]));
    assert!(created.contains("Lasker's Nim, random starts"), "{created}");
    let listed = stdout(&grundy(&["tournament", "list", "--server", &url]));
    assert!(listed.contains("Lasker's Nim"), "{listed}");
    assert!(!listed.contains("heaps"), "{listed}");
}

#[test]
fn a_bad_code_is_refused_in_words() {
    let server = TestServer::start();
    let url = server.url();
    for args in [
        vec!["tournament", "export", "NOSUCH", "--format", "csv"],
        vec!["tournament", "watch", "NOSUCH"],
        vec!["tournament", "show", "NOSUCH"],
        vec!["tournament", "show", "NOSUCH", "--json"],
        vec!["tournament", "join", "NOSUCH", "--name", "alice"],
    ] {
        let mut args = args.clone();
        args.extend(["--server", &url]);
        let out = grundy(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no tournament \"NOSUCH\" on this server, running or finished"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("get_tournament"), "no protocol words: {err}");
    }
}

/// A finished tournament's code keeps working once it has left the server's
/// memory and after a restart: watch says it is over and shows how it ended,
/// show (and --json) gives its standings, join says there is nothing to join.
/// Every view names its id.
#[test]
fn a_finished_tournament_is_shown_by_its_code_after_a_restart() {
    let mut server = TestServer::start();
    let url = server.url();
    let (id, code) = finished_tournament(&server);
    // Finished tournaments are not brought back: after the restart it is the
    // store that answers, by code.
    server.restart_in_place(std::time::Duration::from_millis(10));
    let lower = code.to_lowercase();
    for key in [code.as_str(), lower.as_str()] {
        let watched = grundy(&["tournament", "watch", key, "--server", &url]);
        assert!(watched.status.success(), "{watched:?}");
        let text = stdout(&watched);
        assert!(
            text.starts_with(&format!(
                "Tournament {code} is over: nothing more to watch. How it ended:\n"
            )),
            "{text}"
        );
        assert!(text.contains(&format!("({code}, id {id})")), "{text}");
        assert!(text.contains("Finished after 3 rounds."), "{text}");
        assert!(
            text.contains("The tournament is over. Final standings:"),
            "{text}"
        );
        assert!(!text.contains("Watching"), "{text}");
    }
    let shown = grundy(&["tournament", "show", &code, "--server", &url]);
    assert!(shown.status.success(), "{shown:?}");
    let text = stdout(&shown);
    assert!(text.contains("Final standings:"), "{text}");
    assert!(text.contains("bot-perfect-01"), "{text}");
    // `standings` is the same command.
    let same = grundy(&["tournament", "standings", &code, "--server", &url]);
    assert_eq!(stdout(&same), text);

    let json_out = grundy(&["tournament", "show", &code, "--json", "--server", &url]);
    assert!(json_out.status.success(), "{json_out:?}");
    let state: Value = serde_json::from_str(&stdout(&json_out)).expect("JSON");
    assert_eq!(state["tournament"], json!(id));
    assert_eq!(state["code"], json!(code));
    assert_eq!(state["status"], "finished");
    assert_eq!(state["standings"].as_array().map(Vec::len), Some(3));
    assert_eq!(state["games"].as_array().map(Vec::len), Some(6));

    let joined = grundy(&[
        "tournament",
        "join",
        &code,
        "--name",
        "late",
        "--server",
        &url,
    ]);
    assert_eq!(joined.status.code(), Some(2), "{joined:?}");
    let err = String::from_utf8_lossy(&joined.stderr);
    assert!(
        err.contains(&format!(
            "tournament {code} is over: there is nothing to join"
        )) && err.contains(&format!("grundy tournament show {code} --server {url}")),
        "{err}"
    );
}

/// `--json` on the read-only commands: list, show, ratings.
#[test]
fn the_read_only_commands_speak_json() {
    let server = TestServer::start();
    let url = server.url();
    let empty = grundy(&["tournament", "list", "--json", "--server", &url]);
    assert!(empty.status.success(), "{empty:?}");
    let doc: Value = serde_json::from_str(&stdout(&empty)).expect("JSON");
    assert_eq!(doc, json!({"tournaments": []}));

    let created = stdout(&grundy(&[
        "tournament",
        "create",
        "--family",
        "kayles",
        "--format",
        "swiss",
        "--rounds",
        "3",
        "--name",
        "Friday",
        "--server",
        &url,
    ]));
    let code = word_after(&created, "grundy tournament join ").to_string();
    let id = word_after(&created, "created (id ").trim_end_matches(").");
    let listed = grundy(&["tournament", "list", "--json", "--server", &url]);
    let doc: Value = serde_json::from_str(&stdout(&listed)).expect("JSON");
    let t = &doc["tournaments"][0];
    assert_eq!(t["code"], json!(code));
    assert_eq!(t["tournament"], json!(id));
    assert_eq!(t["name"], "Friday");
    assert_eq!(t["game"], "kayles");
    assert_eq!(t["game_name"], "Kayles");
    assert_eq!(t["status"], "registering");

    let shown = grundy(&["tournament", "show", &code, "--json", "--server", &url]);
    let state: Value = serde_json::from_str(&stdout(&shown)).expect("JSON");
    assert_eq!(state["status"], "registering");
    assert_eq!(state["settings"]["family"], "kayles");
    let text = stdout(&grundy(&["tournament", "show", &code, "--server", &url]));
    assert!(
        text.contains(&format!("Friday ({code}, id {id})")),
        "{text}"
    );
    assert!(text.contains("No standings yet"), "{text}");
    assert!(
        text.contains(&format!("grundy tournament watch {code}")),
        "{text}"
    );

    rated_tournament(
        &server,
        json!({"game": "dawson", "heaps": [4, 5]}),
        ["max", "ned"],
    );
    let rated = grundy(&[
        "tournament",
        "ratings",
        "--game",
        "dawson",
        "--json",
        "--server",
        &url,
    ]);
    assert!(rated.status.success(), "{rated:?}");
    let doc: Value = serde_json::from_str(&stdout(&rated)).expect("JSON");
    assert_eq!(doc["game"], "dawson");
    assert_eq!(doc["name"], "Dawson's Kayles");
    let rows = doc["ratings"].as_array().expect("ratings");
    assert_eq!(rows.len(), 2, "{doc}");
    assert!(
        rows.iter()
            .all(|r| r["games"] == 2 && r["player_kind"] == "bot"),
        "{doc}"
    );
    let none = grundy(&[
        "tournament",
        "ratings",
        "--game",
        "nim",
        "--json",
        "--server",
        &url,
    ]);
    let doc: Value = serde_json::from_str(&stdout(&none)).expect("JSON");
    assert_eq!(doc, json!({"game": "nim", "name": "Nim", "ratings": []}));
}
