//! Secrets stay out of what the server writes (issue 43): no password (a
//! new one included) or token in its log at any level, `RUST_LOG=trace` included; with
//! `--log-frames` the frames are logged, their secrets masked; the database
//! file is its owner's alone; `--log-format json` writes JSON lines.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use grundy_testkit::client::Client;
use serde_json::{json, Value};
use support::Process;

const PASSWORD: &str = "Tr0ub4dor-and-3-secretive";

/// Every secret one session of a person makes and uses: an account's
/// password, the token of its login, an API token it creates, the seat
/// tokens of a room, one of them resumed.
async fn a_session_with_secrets(url: &str) -> Vec<String> {
    let mut c = Client::raw(url).await;
    c.request(json!({"type": "hello", "version": 1})).await;
    let created = c
        .request(json!({"type": "create_account", "username": "secretive",
                        "password": PASSWORD}))
        .await;
    assert_eq!(created["type"], "account_created", "{created}");
    let login = c
        .request(json!({"type": "login", "username": "secretive", "password": PASSWORD}))
        .await;
    assert_eq!(login["type"], "token", "{login}");
    let login_token = login["token"].as_str().expect("token").to_string();

    let mut account = Client::connect_token(url, &login_token).await;
    let api = account
        .request(json!({"type": "create_token", "name": "ci", "scopes": ["play"]}))
        .await;
    assert_eq!(api["type"], "token", "{api}");
    let api_token = api["token"].as_str().expect("token").to_string();

    let mut player = Client::connect_token(url, &api_token).await;
    let seated = player
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [3, 4]}}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].as_str().expect("room").to_string();
    let seat_token = seated["token"].as_str().expect("token").to_string();
    let mut guest = Client::connect(url, "guest").await;
    let joined = guest.request(json!({"type": "join", "room": room})).await;
    assert_eq!(joined["type"], "seated", "{joined}");
    let other_seat = joined["token"].as_str().expect("token").to_string();

    // The seat again, from a new connection.
    let mut again = Client::connect(url, "again").await;
    let resumed = again
        .request(json!({"type": "resume", "room": room, "token": seat_token, "since": 0}))
        .await;
    assert_eq!(resumed["type"], "watching", "{resumed}");
    assert_eq!(resumed["seat"], 0, "{resumed}");
    let moved = again
        .request(json!({"type": "move", "room": room, "token": seat_token,
                        "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(moved["type"], "ack", "{moved}");
    // A new password, and the token the change gives.
    let new_password = "Correct-h0rse-and-a-new-one";
    let changed = account
        .request(json!({"type": "change_password", "password": PASSWORD,
                        "new_password": new_password}))
        .await;
    assert_eq!(changed["type"], "token", "{changed}");
    let changed_token = changed["token"].as_str().expect("token").to_string();
    vec![
        PASSWORD.to_string(),
        login_token,
        api_token,
        seat_token,
        other_seat,
        new_password.to_string(),
        changed_token,
    ]
}

/// The tokens a tournament hands out: its owner's, its two players', and
/// the seat tokens of their game.
async fn a_tournament_with_secrets(url: &str) -> Vec<String> {
    let mut director = Client::connect(url, "director").await;
    let created = director
        .request(
            json!({"type": "create_tournament", "spec": {"game": "nim", "heaps": [3, 4]},
                   "format": "round_robin"}),
        )
        .await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let code = created["code"].as_str().expect("code").to_owned();
    let owner = created["owner_token"].as_str().expect("token").to_owned();
    let mut secrets = vec![owner.clone()];
    let mut players = Vec::new();
    for name in ["ann", "bo"] {
        let mut player = Client::connect(url, name).await;
        let registered = player
            .request(json!({"type": "register", "tournament": code}))
            .await;
        assert_eq!(registered["type"], "registered", "{registered}");
        secrets.push(registered["token"].as_str().expect("token").to_owned());
        players.push(player);
    }
    let started = director
        .request(json!({"type": "start_tournament", "tournament": code, "token": owner}))
        .await;
    assert_eq!(started["type"], "ack", "{started}");
    for player in &mut players {
        // `read` waits at most the test kit's patience for each message.
        let game = loop {
            let m = player.read().await.expect("the server is up");
            if m["type"] == "your_game" {
                break m;
            }
        };
        secrets.push(game["token"].as_str().expect("token").to_owned());
    }
    secrets
}

/// Whether any file of `dir` (the database, its `-wal` and `-shm`) holds
/// any of `secrets`; each is asked not to be found.
fn assert_no_file_holds(dir: &Path, secrets: &[String]) {
    let mut files = 0;
    for entry in std::fs::read_dir(dir).expect("the database's directory") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).expect("readable");
        files += 1;
        for secret in secrets {
            assert!(!secret.is_empty());
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{} holds the token {secret:?} in clear",
                path.display()
            );
        }
    }
    assert!(files > 0);
}

#[tokio::test]
async fn the_database_keeps_no_seat_or_tournament_token_in_clear() {
    let dir = tempfile::tempdir().unwrap();
    let server = Process::start(dir.path().join("g.db")).await;
    let mut secrets = a_session_with_secrets(&server.url).await;
    // The API and login tokens are kept as their id and hash: what is
    // asked here is the seats' (indices 3 and 4) and the tournament's.
    secrets.drain(..3);
    secrets.truncate(2);
    secrets.extend(a_tournament_with_secrets(&server.url).await);
    assert_eq!(secrets.len(), 7, "{secrets:?}");
    // Looked at while the server runs (the `-wal` holds the recent writes)
    // and once it stopped.
    assert_no_file_holds(dir.path(), &secrets);
    let _ = log_of(server).await;
    assert_no_file_holds(dir.path(), &secrets);
}

/// The server's whole log, once it has stopped.
async fn log_of(mut server: Process) -> String {
    assert!(server.terminate().await.success());
    server.log()
}

fn assert_none_in(log: &str, secrets: &[String]) {
    for secret in secrets {
        assert!(!secret.is_empty());
        assert!(
            !log.contains(secret.as_str()),
            "the secret {secret:?} is in the log"
        );
    }
}

#[tokio::test]
async fn no_secret_is_logged_at_trace() {
    let dir = tempfile::tempdir().unwrap();
    let server = Process::start_logging(dir.path().join("g.db"), &[], "trace").await;
    let secrets = a_session_with_secrets(&server.url).await;
    let log = log_of(server).await;
    // The filter let the verbose levels through.
    assert!(log.contains(" DEBUG "), "no debug lines:\n{log}");
    assert_none_in(&log, &secrets);
    assert!(
        !log.contains("frame in"),
        "frames logged without --log-frames"
    );
}

#[tokio::test]
async fn log_frames_logs_frames_with_their_secrets_masked() {
    let dir = tempfile::tempdir().unwrap();
    let server = Process::start_logging(dir.path().join("g.db"), &["--log-frames"], "trace").await;
    let secrets = a_session_with_secrets(&server.url).await;
    let log = log_of(server).await;
    assert_none_in(&log, &secrets);
    let has = |what: &str| {
        assert!(log.contains(what), "{what:?} is not in the log:\n{log}");
    };
    has(r#"frame in: {"id":2,"password":"***","type":"create_account","username":"secretive"}"#);
    has(r#""password":"***","type":"login""#);
    has(r#""token":"***","type":"resume""#);
    has(r#""token":"***","type":"hello""#);
    // The answers: the login's and the API token's, the seats'.
    has(r#"frame out: {"account""#);
    has(r#""token":"***","type":"token""#);
    has(r#""token":"***","type":"seated""#);
}

#[tokio::test]
async fn log_format_json_writes_one_json_object_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let server = Process::start_logging(
        dir.path().join("g.db"),
        &["--log-format", "json", "--log-frames"],
        "debug",
    )
    .await;
    a_session_with_secrets(&server.url).await;
    let log = log_of(server).await;
    let mut lines = 0;
    for line in log.lines() {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
        assert!(
            v["fields"]["message"].is_string() || v["message"].is_string(),
            "no message: {line}"
        );
        lines += 1;
    }
    assert!(lines > 10, "{lines} lines:\n{log}");
    assert!(log.contains("frame in: "), "{log}");
}

#[tokio::test]
async fn an_unknown_log_format_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_grundy-server"))
        .args(["--listen", "127.0.0.1:0", "--log-format", "xml", "--db"])
        .arg(dir.path().join("g.db"))
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'xml' for '--log-format"),
        "{err}"
    );
    assert!(!dir.path().join("g.db").exists());
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

#[tokio::test]
async fn the_database_is_its_owners_alone() {
    let dir = tempfile::tempdir().unwrap();
    // A directory the server makes, under a permissive umask's parent.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.path().join("data/grundy/g.db");
    let server = Process::start(&db).await;
    let _ = a_session_with_secrets(&server.url).await;
    assert_eq!(mode(&db), 0o600);
    for companion in ["g.db-wal", "g.db-shm"] {
        assert_eq!(mode(&db.with_file_name(companion)), 0o600, "{companion}");
    }
    assert_eq!(mode(&dir.path().join("data/grundy")), 0o700);
    assert_eq!(mode(&dir.path().join("data")), 0o700);
    let _ = log_of(server).await;

    // A file made looser meanwhile is tightened at the next start, said.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let server = Process::start(&db).await;
    assert_eq!(mode(&db), 0o600);
    let log = log_of(server).await;
    assert!(
        log.contains("was readable by others (mode 0644); now 0600"),
        "{log}"
    );
}
