//! Sessions that can be taken back (issue 43): `change_password` revokes
//! every token of the account and ends its other connections, the changing
//! connection carrying on with a new token; the old password is refused
//! after, across a restart too.

mod support;

use grundy_testkit::client::{account, Client, PASSWORD};
use serde_json::{json, Value};
use support::Process;

const NEW_PASSWORD: &str = "a new and longer passphrase";

fn code(answer: &Value) -> &str {
    answer["code"].as_str().unwrap_or("")
}

async fn guest(url: &str) -> Client {
    let mut c = Client::raw(url).await;
    let welcome = c.request(json!({"type": "hello", "version": 1})).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    c
}

async fn login(url: &str, username: &str, password: &str) -> Value {
    guest(url)
        .await
        .request(json!({"type": "login", "username": username, "password": password}))
        .await
}

/// What `hello` with `token` is answered.
async fn hello_with(url: &str, token: &str) -> Value {
    let mut c = Client::raw(url).await;
    c.request(json!({"type": "hello", "version": 1, "token": token}))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_password_revokes_every_token_and_ends_the_other_connections() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("grundy.db");
    let mut server = Process::start(&db).await;
    let url = server.url.clone();

    let first = account(&url, "Sam").await;
    let second = login(&url, "Sam", PASSWORD).await["token"]
        .as_str()
        .expect("a second token")
        .to_string();
    let mut changer = Client::connect_token(&url, &first).await;
    let mut other = Client::connect_token(&url, &second).await;
    let mut same_token = Client::connect_token(&url, &first).await;

    // A guest has no password to change.
    let refused = guest(&url)
        .await
        .request(json!({"type": "change_password", "password": PASSWORD,
                        "new_password": NEW_PASSWORD}))
        .await;
    assert_eq!(code(&refused), "account_required", "{refused}");
    // A token without scope `account` may not.
    let play_only = changer
        .request(json!({"type": "create_token", "scopes": ["play"]}))
        .await;
    let play_only = play_only["token"]
        .as_str()
        .expect("a play token")
        .to_string();
    let refused = Client::connect_token(&url, &play_only)
        .await
        .request(json!({"type": "change_password", "password": PASSWORD,
                        "new_password": NEW_PASSWORD}))
        .await;
    assert_eq!(code(&refused), "forbidden", "{refused}");
    // The current password must be right, the new one fit.
    let wrong = changer
        .request(
            json!({"type": "change_password", "password": "not the password",
                        "new_password": NEW_PASSWORD}),
        )
        .await;
    assert_eq!(code(&wrong), "unauthorized", "{wrong}");
    assert!(
        wrong["message"]
            .as_str()
            .unwrap()
            .contains("current password"),
        "{wrong}"
    );
    let short = changer
        .request(json!({"type": "change_password", "password": PASSWORD,
                        "new_password": "short"}))
        .await;
    assert_eq!(code(&short), "bad_request", "{short}");
    assert!(
        short["message"]
            .as_str()
            .unwrap()
            .starts_with("new_password: "),
        "{short}"
    );
    // Nothing changed so far.
    assert_eq!(hello_with(&url, &second).await["type"], "welcome");

    let changed = changer
        .request(json!({"type": "change_password", "password": PASSWORD,
                        "new_password": NEW_PASSWORD}))
        .await;
    assert_eq!(changed["type"], "token", "{changed}");
    assert_eq!(changed["account"]["username"], "Sam", "{changed}");
    let fresh = changed["token"].as_str().expect("a new token").to_string();

    // The account's other connections end, whichever token they hold.
    for c in [&mut other, &mut same_token] {
        let (_, close) = c.until_closed().await;
        let (close_code, reason) = close.expect("a close frame");
        assert_eq!(close_code, 1008, "{reason}");
        assert!(reason.contains("password was changed"), "{reason}");
    }
    // The changing connection carries on as the account, with the new
    // token alone live.
    let listed = changer.request(json!({"type": "list_tokens"})).await;
    assert_eq!(listed["type"], "tokens", "{listed}");
    let ids: Vec<&str> = listed["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [changed["info"]["id"].as_str().unwrap()], "{listed}");

    for old in [&first, &second, &play_only] {
        let refused = hello_with(&url, old).await;
        assert_eq!(code(&refused), "unauthorized", "{refused}");
    }
    let refused = login(&url, "Sam", PASSWORD).await;
    assert_eq!(code(&refused), "unauthorized", "{refused}");
    assert_eq!(hello_with(&url, &fresh).await["type"], "welcome");

    // A restart keeps it all.
    drop((changer, other, same_token));
    server.terminate().await;
    let server = Process::start(&db).await;
    let url = server.url.clone();
    for old in [&first, &second] {
        assert_eq!(code(&hello_with(&url, old).await), "unauthorized");
    }
    assert_eq!(code(&login(&url, "Sam", PASSWORD).await), "unauthorized");
    assert_eq!(login(&url, "Sam", NEW_PASSWORD).await["type"], "token");
    assert_eq!(hello_with(&url, &fresh).await["type"], "welcome");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_current_passwords_lock_the_account_as_wrong_logins_do() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Process::start(dir.path().join("grundy.db")).await;
    let url = server.url.clone();
    let token = account(&url, "Lee").await;
    let mut c = Client::connect_token(&url, &token).await;
    let mut locked = false;
    for i in 0..20 {
        let wrong = c
            .request(
                json!({"type": "change_password", "password": format!("wrong {i} and more"),
                            "new_password": NEW_PASSWORD}),
            )
            .await;
        match code(&wrong) {
            "unauthorized" => {}
            "rate_limited" => {
                assert_eq!(wrong["limit"], "login_failures_before_lockout", "{wrong}");
                locked = true;
            }
            _ => panic!("{wrong}"),
        }
    }
    assert!(locked, "20 wrong current passwords lock the account");
    // The lock is the account's: a login with the right password waits too.
    let refused = login(&url, "Lee", PASSWORD).await;
    assert_eq!(code(&refused), "rate_limited", "{refused}");
}

const DAY_MS: u64 = 86_400_000;

fn expires(answer: &Value) -> u64 {
    answer["info"]["expires_at_ms"]
        .as_u64()
        .unwrap_or_else(|| panic!("an expiry: {answer}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_mints_none_broader_than_itself_and_every_new_token_expires() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Process::start(dir.path().join("grundy.db")).await;
    let url = server.url.clone();
    let welcome = hello_with(&url, &account(&url, "Kim").await).await;
    assert_eq!(welcome["limits"]["token_default_days"], 90, "{welcome}");
    assert_eq!(welcome["limits"]["token_max_days"], 365, "{welcome}");
    // A login's token has every scope and the default life.
    let now = welcome["token"]["created_at_ms"].as_u64().unwrap();
    let life = welcome["token"]["expires_at_ms"].as_u64().unwrap() - now;
    assert_eq!(life, 90 * DAY_MS, "{welcome}");

    let full_token = login(&url, "Kim", PASSWORD).await["token"]
        .as_str()
        .expect("a token")
        .to_string();
    let mut full = Client::connect_token(&url, &full_token).await;
    let too_long = full
        .request(json!({"type": "create_token", "expires_in_days": 366}))
        .await;
    assert_eq!(code(&too_long), "bad_request", "{too_long}");
    assert!(
        too_long["message"]
            .as_str()
            .unwrap()
            .contains("token_max_days"),
        "{too_long}"
    );
    let narrow = full
        .request(
            json!({"type": "create_token", "scopes": ["account", "play"],
                        "expires_in_days": 10}),
        )
        .await;
    assert_eq!(narrow["type"], "token", "{narrow}");
    let narrow_ends = expires(&narrow);
    let mut narrow = Client::connect_token(&url, narrow["token"].as_str().unwrap()).await;

    // No scope the creating token lacks: the refusal names the broader ones.
    let broader = narrow
        .request(json!({"type": "create_token", "scopes": ["play", "tournaments"]}))
        .await;
    assert_eq!(code(&broader), "forbidden", "{broader}");
    let said = broader["message"].as_str().unwrap();
    assert!(said.contains("not [tournaments]"), "{broader}");
    // No later expiry.
    let longer = narrow
        .request(json!({"type": "create_token", "expires_in_days": 11}))
        .await;
    assert_eq!(code(&longer), "forbidden", "{longer}");
    assert!(
        longer["message"]
            .as_str()
            .unwrap()
            .starts_with("expires_in_days: "),
        "{longer}"
    );
    // Left out, the scopes are the creating token's and the life ends with
    // it.
    let defaults = narrow.request(json!({"type": "create_token"})).await;
    assert_eq!(defaults["type"], "token", "{defaults}");
    assert_eq!(
        defaults["info"]["scopes"],
        json!(["play", "account"]),
        "{defaults}"
    );
    assert_eq!(expires(&defaults), narrow_ends, "{defaults}");
    let within = narrow
        .request(json!({"type": "create_token", "scopes": ["play"], "expires_in_days": 9}))
        .await;
    assert_eq!(within["type"], "token", "{within}");
    assert!(expires(&within) < narrow_ends, "{within}");
}

/// `Client::connect_token` for an account (`token`) that opens a nim room
/// (heaps 5 and 5, seat 0) which a guest, bob, joins: (room, the account's
/// seat token, bob's seat token, the account's client, bob).
async fn account_against_guest(url: &str, token: &str) -> (String, String, String, Client, Client) {
    let mut owner = Client::connect_token(url, token).await;
    let seated = owner
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [5, 5]}}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].as_str().unwrap().to_string();
    let code = seated["snapshot"]["code"].as_str().unwrap().to_string();
    let seat_token = seated["token"].as_str().unwrap().to_string();
    let mut bob = Client::connect(url, "bob").await;
    let joined = bob.request(json!({"type": "join", "room": code})).await;
    assert_eq!(joined["type"], "seated", "{joined}");
    let bob_token = joined["token"].as_str().unwrap().to_string();
    (room, seat_token, bob_token, owner, bob)
}

async fn play(c: &mut Client, room: &str, token: &str, heap: u64) -> Value {
    c.request(json!({"type": "move", "room": room, "token": token,
                     "move": {"heap": heap, "take": 1}}))
        .await
}

/// The seat token is refused (at a move and at a resume, from any
/// connection) for the reason the account token that took the seat gave.
async fn refused_for(url: &str, room: &str, seat_token: &str, why: &str) {
    let mut anyone = guest(url).await;
    let moved = play(&mut anyone, room, seat_token, 0).await;
    let resumed = anyone
        .request(json!({"type": "resume", "room": room, "token": seat_token}))
        .await;
    for refused in [moved, resumed] {
        assert_eq!(code(&refused), "unauthorized", "{refused}");
        let said = refused["message"].as_str().unwrap();
        assert!(
            said.contains(&format!("the account token that took this seat {why}"))
                && said.contains("log in again"),
            "{refused}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_account_token_takes_back_the_seats_it_took_until_the_account_logs_in_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Process::start(dir.path().join("grundy.db")).await;
    let url = server.url.clone();
    let taker = account(&url, "Ann").await;
    let other = login(&url, "Ann", PASSWORD).await;
    assert_eq!(other["type"], "token", "{other}");
    let (room, seat_token, bob_token, mut ann, mut bob) = account_against_guest(&url, &taker).await;
    assert_eq!(play(&mut ann, &room, &seat_token, 0).await["type"], "ack");
    assert_eq!(play(&mut bob, &room, &bob_token, 0).await["type"], "ack");

    // Revoking the account's other token leaves the seat alone.
    let revoked = ann
        .request(json!({"type": "revoke_token", "token_id": other["info"]["id"]}))
        .await;
    assert_eq!(revoked["type"], "token_revoked", "{revoked}");
    let mut anyone = guest(&url).await;
    assert_eq!(
        play(&mut anyone, &room, &seat_token, 0).await["type"],
        "ack"
    );
    assert_eq!(play(&mut bob, &room, &bob_token, 0).await["type"], "ack");

    // Revoking the one that took it takes the seat token back.
    let revoked = ann.request(json!({"type": "revoke_token"})).await;
    assert_eq!(revoked["type"], "token_revoked", "{revoked}");
    refused_for(&url, &room, &seat_token, "was revoked").await;
    // The guest's seat token acts as before.
    let mut bob_again = guest(&url).await;
    let back = bob_again
        .request(json!({"type": "resume", "room": room, "token": bob_token}))
        .await;
    assert_eq!(back["seat"], 1, "{back}");

    // Logged in again, the account resumes its seat: a new seat token, tied
    // to the new account token, and the game goes on.
    let fresh = login(&url, "Ann", PASSWORD).await["token"]
        .as_str()
        .expect("a new token")
        .to_string();
    let mut ann = Client::connect_token(&url, &fresh).await;
    let back = ann.request(json!({"type": "resume", "room": room})).await;
    assert_eq!(back["seat"], 0, "{back}");
    let new_seat_token = back["token"].as_str().expect("a seat token").to_string();
    assert_ne!(new_seat_token, seat_token);
    assert_eq!(
        play(&mut ann, &room, &new_seat_token, 1).await["type"],
        "ack"
    );
    assert_eq!(play(&mut bob, &room, &bob_token, 1).await["type"], "ack");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_password_takes_back_the_seats_the_old_tokens_took() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Process::start(dir.path().join("grundy.db")).await;
    let url = server.url.clone();
    let taker = account(&url, "Cal").await;
    let (room, seat_token, bob_token, mut cal, mut bob) = account_against_guest(&url, &taker).await;
    assert_eq!(play(&mut cal, &room, &seat_token, 0).await["type"], "ack");
    assert_eq!(play(&mut bob, &room, &bob_token, 0).await["type"], "ack");

    let changed = cal
        .request(json!({"type": "change_password", "password": PASSWORD,
                        "new_password": NEW_PASSWORD}))
        .await;
    assert_eq!(changed["type"], "token", "{changed}");
    refused_for(&url, &room, &seat_token, "was revoked").await;
    // Resign and abort refuse it too (the move was refused: still cal's turn).
    for kind in ["resign", "abort"] {
        let refused = cal
            .request(json!({"type": kind, "room": room, "token": seat_token}))
            .await;
        assert_eq!(code(&refused), "unauthorized", "{kind}: {refused}");
    }

    // The changing connection carries on with its new token: resumed by
    // account, the seat is its again and the game goes on.
    let back = cal.request(json!({"type": "resume", "room": room})).await;
    assert_eq!(back["seat"], 0, "{back}");
    let new_seat_token = back["token"].as_str().expect("a seat token").to_string();
    assert_eq!(
        play(&mut cal, &room, &new_seat_token, 1).await["type"],
        "ack"
    );
    assert_eq!(play(&mut bob, &room, &bob_token, 1).await["type"], "ack");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_stays_tied_to_its_account_token_across_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("grundy.db");
    let mut server = Process::start(&db).await;
    let url = server.url.clone();
    let taker = account(&url, "Dee").await;
    let (room, seat_token, _, mut dee, bob) = account_against_guest(&url, &taker).await;
    let revoked = dee.request(json!({"type": "revoke_token"})).await;
    assert_eq!(revoked["type"], "token_revoked", "{revoked}");
    drop((dee, bob));
    server.terminate().await;

    // The restored room knows which account token took the seat.
    let server = Process::start(&db).await;
    let url = server.url.clone();
    refused_for(&url, &room, &seat_token, "was revoked").await;
    let fresh = login(&url, "Dee", PASSWORD).await["token"]
        .as_str()
        .expect("a new token")
        .to_string();
    let mut dee = Client::connect_token(&url, &fresh).await;
    let back = dee.request(json!({"type": "resume", "room": room})).await;
    assert_eq!(back["seat"], 0, "{back}");
    let new_seat_token = back["token"].as_str().expect("a seat token").to_string();
    assert_eq!(
        play(&mut dee, &room, &new_seat_token, 0).await["type"],
        "ack"
    );
}
