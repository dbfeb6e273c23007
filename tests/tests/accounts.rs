//! Accounts and API tokens over real sockets: a player is who they say they
//! are. Guests keep playing casual games; rated tournaments and ratings are
//! the accounts'; tokens are shown once, kept hashed, scoped, revocable; wrong
//! passwords lock an account for a while; a restart keeps it all.

use std::time::Duration;

use grundy_protocol::wire::{TournamentFormat, TournamentSettings};
use grundy_protocol::Level;
use grundy_tests::{account, http_with, login, Client, TestServer, PASSWORD};
use serde_json::{json, Value};

async fn guest(url: &str) -> Client {
    let mut c = Client::raw(url).await;
    let welcome = c.request(json!({"type": "hello", "version": 1})).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    c
}

fn code(answer: &Value) -> &str {
    answer["code"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_plays_under_its_name_and_kind_and_a_guest_under_a_given_one() {
    let server = TestServer::start().await;
    let url = server.url();
    let mut c = guest(&url).await;
    let created = c
        .request(json!({"type": "create_account", "username": "Alice",
                        "password": PASSWORD}))
        .await;
    assert_eq!(created["type"], "account_created", "{created}");
    assert_eq!(created["account"]["username"], "Alice");
    assert_eq!(created["account"]["kind"], "person");
    // The name is Alice's whatever the case: the login and the welcome.
    let token = c
        .request(
            json!({"type": "login", "username": "aLICE", "password": PASSWORD,
                        "name": "laptop", "scopes": ["play"]}),
        )
        .await;
    assert_eq!(token["type"], "token", "{token}");
    assert_eq!(token["info"]["scopes"], json!(["play"]));
    let secret = token["token"].as_str().unwrap();
    assert!(
        secret.starts_with("grundy_") && secret.len() > 64,
        "{secret}"
    );

    let mut alice = Client::raw(&url).await;
    let welcome = alice
        .request(json!({"type": "hello", "version": 1, "token": secret}))
        .await;
    assert_eq!(welcome["name"], "Alice", "{welcome}");
    assert_eq!(welcome["account"]["username"], "Alice");
    assert_eq!(welcome["token"]["name"], "laptop");
    assert!(
        welcome["token"].get("token").is_none(),
        "no secret: {welcome}"
    );

    let seated = alice
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [1]}}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let seat = &seated["snapshot"]["seats"][0];
    assert_eq!(seat["name"], "Alice");
    assert_eq!(seat["player_kind"], "person");
    let room = seated["room"].as_str().unwrap().to_string();

    // A guest without a name is given one; it is shown as a guest.
    let mut g = guest(&url).await;
    let joined = g.request(json!({"type": "join", "room": room})).await;
    assert_eq!(joined["type"], "seated", "{joined}");
    let seat = &joined["snapshot"]["seats"][1];
    assert!(
        seat["name"].as_str().unwrap().starts_with("guest-"),
        "{seat}"
    );
    assert_eq!(seat["player_kind"], "guest");
    // A later hello without a name keeps the connection's name, given or
    // chosen; one with a name changes it.
    let given = seat["name"].clone();
    for hello in [
        json!({"type": "hello", "version": 1}),
        json!({"type": "hello", "version": 1, "name": " "}),
    ] {
        let welcome = g.request(hello).await;
        assert_eq!(welcome["name"], given, "{welcome}");
    }
    let welcome = g
        .request(json!({"type": "hello", "version": 1, "name": "Gus"}))
        .await;
    assert_eq!(welcome["name"], "Gus", "{welcome}");
    let welcome = g.request(json!({"type": "hello", "version": 1})).await;
    assert_eq!(welcome["name"], "Gus", "{welcome}");
    let token0 = seated["token"].as_str().unwrap();
    let moved = alice
        .request(json!({"type": "move", "room": room, "token": token0,
                        "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(moved["type"], "ack", "{moved}");
    let record = alice
        .request(json!({"type": "get_match", "room": room}))
        .await;
    assert_eq!(
        record["record"]["player_kinds"],
        json!(["person", "guest"]),
        "{record}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_are_unique_whatever_the_case_and_guests_cannot_take_them() {
    let server = TestServer::start().await;
    let url = server.url();
    account(&url, "Bob").await;
    let mut c = guest(&url).await;
    for (username, expected) in [
        ("bob", "name_taken"),
        ("BOB", "name_taken"),
        // Look-alikes read as Bob's name.
        ("B0b", "name_taken"),
        // Invisible and bidirectional characters are not in the alphabet.
        ("b\u{202E}ob", "bad_request"),
        ("bo\u{200B}b", "bad_request"),
        ("house-bot", "bad_request"),
        ("x", "bad_request"),
        (&"y".repeat(5000), "bad_request"),
    ] {
        let answer = c
            .request(json!({"type": "create_account", "username": username,
                            "password": PASSWORD}))
            .await;
        assert_eq!(code(&answer), expected, "{username:?}: {answer}");
    }
    // Wrong types and missing fields are named, not fatal.
    let answer = c
        .request(json!({"type": "create_account", "username": 7, "password": PASSWORD}))
        .await;
    assert_eq!(code(&answer), "bad_request", "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains("username"),
        "{answer}"
    );
    let answer = c
        .request(json!({"type": "create_account", "username": "carol", "password": "short"}))
        .await;
    assert_eq!(code(&answer), "bad_request", "{answer}");

    // A guest may not take an account's name, however written.
    for name in ["Bob", "bob", " BOB ", "B\u{043E}b"] {
        let mut c = Client::raw(&url).await;
        let answer = c
            .request(json!({"type": "hello", "version": 1, "name": name}))
            .await;
        assert_eq!(code(&answer), "name_taken", "{name:?}: {answer}");
        // The connection is as it was: a hello with a free name works.
        let answer = c
            .request(json!({"type": "hello", "version": 1, "name": "robert"}))
            .await;
        assert_eq!(answer["name"], "robert", "{answer}");
    }
    // Nor register under it in a tournament.
    let mut owner = guest(&url).await;
    let created = owner
        .request(json!({"type": "create_tournament", "family": "nim",
                        "format": "round_robin"}))
        .await;
    let tournament = created["tournament"].as_str().unwrap();
    let answer = owner
        .request(json!({"type": "register", "tournament": tournament, "name": "bob"}))
        .await;
    assert_eq!(code(&answer), "name_taken", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_passwords_lock_the_account_for_a_while_and_the_right_one_works_after() {
    let server = TestServer::start().await;
    let url = server.url();
    account(&url, "carol").await;
    let mut c = guest(&url).await;
    let mut locked = None;
    for i in 0..20 {
        let answer = c
            .request(json!({"type": "login", "username": "carol",
                            "password": format!("wrong password {i}")}))
            .await;
        match code(&answer) {
            "unauthorized" => {
                assert_eq!(answer["message"], "wrong username or password");
            }
            "rate_limited" => {
                assert_eq!(answer["limit"], "login_failures_before_lockout");
                locked = answer["retry_after_ms"].as_u64();
                assert!(locked.is_some_and(|ms| ms > 0), "{answer}");
            }
            _ => panic!("{answer}"),
        }
    }
    let wait = locked.expect("20 wrong passwords lock the account");
    // Locked: even the right password waits.
    let answer = c
        .request(json!({"type": "login", "username": "carol", "password": PASSWORD}))
        .await;
    assert_eq!(code(&answer), "rate_limited", "{answer}");
    // An unknown name reads exactly like a wrong password.
    let unknown = c
        .request(json!({"type": "login", "username": "nobody", "password": PASSWORD}))
        .await;
    assert_eq!(code(&unknown), "unauthorized");
    assert_eq!(unknown["message"], "wrong username or password");
    // After the wait, the right password works (and resets the count).
    tokio::time::sleep(Duration::from_millis(wait + 50)).await;
    let answer = c
        .request(json!({"type": "login", "username": "carol", "password": PASSWORD}))
        .await;
    assert_eq!(answer["type"], "token", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rated_tournaments_take_accounts_with_the_tournaments_scope_only() {
    let server = TestServer::start().await;
    let url = server.url();
    let rated = json!({"type": "create_tournament", "family": "nim",
                       "format": "round_robin", "rated": true});
    // A guest may not even create one.
    let mut g = guest(&url).await;
    let answer = g.request(rated.clone()).await;
    assert_eq!(code(&answer), "account_required", "{answer}");
    assert!(
        answer["message"].as_str().unwrap().starts_with("rated: "),
        "{answer}"
    );
    account(&url, "olga").await;
    let mut owner = Client::connect_token(&url, &login(&url, "olga").await).await;
    let created = owner.request(rated).await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let tournament = created["tournament"].as_str().unwrap().to_string();
    let register = json!({"type": "register", "tournament": tournament});

    let mut g = guest(&url).await;
    let answer = g.request(register.clone()).await;
    assert_eq!(code(&answer), "account_required", "{answer}");

    account(&url, "dora").await;
    let mut c = guest(&url).await;
    let play_only = c
        .request(
            json!({"type": "login", "username": "dora", "password": PASSWORD,
                        "scopes": ["play"]}),
        )
        .await;
    let mut dora = Client::connect_token(&url, play_only["token"].as_str().unwrap()).await;
    let answer = dora.request(register.clone()).await;
    assert_eq!(code(&answer), "forbidden", "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains("tournaments"),
        "{answer}"
    );

    let full = login(&url, "dora").await;
    let mut dora = Client::connect_token(&url, &full).await;
    // An account plays under its own name only.
    let answer = dora
        .request(json!({"type": "register", "tournament": tournament, "name": "someone"}))
        .await;
    assert_eq!(code(&answer), "bad_request", "{answer}");
    let answer = dora.request(register.clone()).await;
    assert_eq!(answer["type"], "registered", "{answer}");
    let me = &answer["state"]["players"][0];
    assert_eq!(me["name"], "dora");
    assert_eq!(me["player_kind"], "bot");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rating_moves_only_for_the_accounts_that_played() {
    use grundy_bot::tournament::{run_field, Field};
    let server = TestServer::start().await;
    let url = server.url();
    let players = ["erin".to_string(), "fay".to_string()];
    let tokens = grundy_tests::accounts(&url, &players).await;
    // Someone else, named like a player, and an unrelated account.
    account(&url, "gus").await;
    let settings = TournamentSettings {
        name: None,
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
    let out = run_field(
        Field {
            url: url.clone(),
            join: None,
            settings,
            players: 2,
            levels: vec![Level::Perfect],
            seed: 3,
            tokens,
        },
        |_| {},
    )
    .await
    .expect("the tournament runs");
    let names: Vec<&str> = out.state.players.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.contains(&"erin") && names.contains(&"fay"),
        "{names:?}"
    );
    let mut c = guest(&url).await;
    let ratings = c
        .request(json!({"type": "get_ratings", "family": "nim"}))
        .await;
    let rated: Vec<&str> = ratings["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["player"].as_str().unwrap())
        .collect();
    assert_eq!(rated.len(), 2, "{ratings}");
    assert!(
        rated.contains(&"erin") && rated.contains(&"fay"),
        "{ratings}"
    );
    for r in ratings["ratings"].as_array().unwrap() {
        assert_eq!(r["games"], 2, "{r}");
        assert_eq!(r["player_kind"], "bot");
        assert_eq!(r["unclaimed"], false);
    }
    // Each beat the other once in the round, its rating period: level.
    assert_eq!(
        ratings["ratings"][0]["rating"], ratings["ratings"][1]["rating"],
        "{ratings}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_scoped_listed_revoked_and_a_restart_keeps_it_all() {
    let mut server = TestServer::start().await;
    let url = server.url();
    let first = account(&url, "hana").await;
    let mut hana = Client::connect_token(&url, &first).await;
    let made = hana
        .request(
            json!({"type": "create_token", "name": "my bot", "scopes": ["play"],
                        "expires_in_days": 30}),
        )
        .await;
    assert_eq!(made["type"], "token", "{made}");
    let bot_token = made["token"].as_str().unwrap().to_string();
    let bot_id = made["info"]["id"].as_str().unwrap().to_string();
    assert!(made["info"]["expires_at_ms"].as_u64().is_some());
    let listed = hana.request(json!({"type": "list_tokens"})).await;
    let ids: Vec<&str> = listed["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{listed}");
    assert!(ids.contains(&bot_id.as_str()));
    assert!(
        !listed.to_string().contains(&bot_token),
        "no secrets listed"
    );

    // The play-only token cannot manage the account.
    let mut bot = Client::connect_token(&url, &bot_token).await;
    let answer = bot.request(json!({"type": "list_tokens"})).await;
    assert_eq!(code(&answer), "forbidden", "{answer}");
    // A guest has no tokens to list.
    let mut g = guest(&url).await;
    let answer = g.request(json!({"type": "list_tokens"})).await;
    assert_eq!(code(&answer), "account_required", "{answer}");
    // Someone else's token id is not yours to revoke.
    let other = account(&url, "ivo").await;
    let mut ivo = Client::connect_token(&url, &other).await;
    let answer = ivo
        .request(json!({"type": "revoke_token", "token_id": bot_id}))
        .await;
    assert_eq!(code(&answer), "bad_request", "{answer}");

    // Revoked: refused at hello, and on the connection that holds it.
    let revoked = hana
        .request(json!({"type": "revoke_token", "token_id": bot_id}))
        .await;
    assert_eq!(revoked["type"], "token_revoked", "{revoked}");
    let answer = bot
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [2]}}))
        .await;
    assert_eq!(code(&answer), "unauthorized", "{answer}");
    let mut again = Client::raw(&url).await;
    let answer = again
        .request(json!({"type": "hello", "version": 1, "token": bot_token}))
        .await;
    assert_eq!(code(&answer), "unauthorized", "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains("revoked"),
        "{answer}"
    );
    // Truncated, tampered and replayed-with-junk tokens prove nothing.
    for bad in [
        &first[..first.len() - 1],
        &format!("{first}0"),
        &first.replace("grundy_", "grundy-"),
        "grundy_",
        "",
    ] {
        let answer = again
            .request(json!({"type": "hello", "version": 1, "token": bad}))
            .await;
        assert_eq!(code(&answer), "unauthorized", "{bad:?}: {answer}");
    }

    server.restart().await;
    let url = server.url();
    let mut back = Client::raw(&url).await;
    let answer = back
        .request(json!({"type": "hello", "version": 1, "token": bot_token}))
        .await;
    assert_eq!(
        code(&answer),
        "unauthorized",
        "the revocation stays: {answer}"
    );
    let hana = Client::connect_token(&url, &first).await;
    drop(hana);
    login(&url, "hana").await;
    let mut g = guest(&url).await;
    let answer = g
        .request(json!({"type": "hello", "version": 1, "name": "HANA"}))
        .await;
    assert_eq!(code(&answer), "name_taken", "the account stays: {answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_resumes_its_seat_with_its_token() {
    let server = TestServer::start().await;
    let url = server.url();
    let token = account(&url, "jo").await;
    let mut jo = Client::connect_token(&url, &token).await;
    let seated = jo
        .request(
            json!({"type": "create_room", "spec": {"game": "nim", "heaps": [2, 3]},
                        "bot": "perfect"}),
        )
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].as_str().unwrap().to_string();
    let seat_token = seated["token"].as_str().unwrap().to_string();
    drop(jo);

    // On a new connection with the account's token, no seat token needed.
    let mut jo = Client::connect_token(&url, &token).await;
    let back = jo.request(json!({"type": "resume", "room": room})).await;
    assert_eq!(back["type"], "watching", "{back}");
    assert_eq!(back["seat"], 0);
    // A new seat token: the server keeps only the old one's hash, and the
    // old one stops acting.
    let fresh = back["token"].as_str().expect("a seat token").to_string();
    assert!(!fresh.is_empty() && fresh != seat_token, "{back}");
    let mut anywhere = guest(&url).await;
    let old = anywhere
        .request(json!({"type": "resume", "room": room, "token": seat_token}))
        .await;
    assert_eq!(code(&old), "unauthorized", "{old}");
    // Or the API token in place of the seat token, from any connection.
    let back = anywhere
        .request(json!({"type": "resume", "room": room, "token": token}))
        .await;
    let newest = back["token"].as_str().expect("a seat token").to_string();
    assert!(!newest.is_empty() && newest != fresh, "{back}");
    let mut elsewhere = guest(&url).await;
    let back = elsewhere
        .request(json!({"type": "resume", "room": room, "token": newest}))
        .await;
    assert_eq!(back["seat"], 0, "the newest seat token acts: {back}");
    // Another account holds no seat here.
    let other = account(&url, "kim").await;
    let mut kim = Client::connect_token(&url, &other).await;
    let answer = kim.request(json!({"type": "resume", "room": room})).await;
    assert_eq!(code(&answer), "unauthorized", "{answer}");
    let answer = anywhere
        .request(json!({"type": "resume", "room": room, "token": other}))
        .await;
    assert_eq!(code(&answer), "unauthorized", "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_keeps_no_password_or_token_in_clear() {
    let mut server = TestServer::start().await;
    let url = server.url();
    let password = "a rather memorable passphrase";
    let mut c = guest(&url).await;
    c.request(json!({"type": "create_account", "username": "lena", "password": password}))
        .await;
    let token = c
        .request(json!({"type": "login", "username": "lena", "password": password}))
        .await;
    let token = token["token"].as_str().unwrap().to_string();
    let secret = token.rsplit('_').next().unwrap().to_string();
    server.stop().await;
    let dir = server.db.parent().unwrap();
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        files += 1;
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(password), "a password in clear");
        assert!(!text.contains(&secret), "a token in clear");
        if text.contains("lena") {
            assert!(text.contains("$argon2id$"), "the hash is Argon2id");
        }
    }
    assert!(files > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_opens_so_many_accounts_an_hour() {
    // Every test client is on loopback: count it like any address.
    let mut config = grundy_server::Config::default();
    config.limits.accounts_per_ip_per_hour = 2;
    let server = TestServer::start_with(config).await;
    let url = server.url();
    let mut c = guest(&url).await;
    for (i, expected) in ["account_created", "account_created", "error"]
        .iter()
        .enumerate()
    {
        let answer = c
            .request(
                json!({"type": "create_account", "username": format!("user{i}"),
                            "password": PASSWORD}),
            )
            .await;
        assert_eq!(answer["type"], *expected, "{answer}");
        if *expected == "error" {
            assert_eq!(code(&answer), "rate_limited");
            assert_eq!(answer["limit"], "accounts_per_ip_per_hour");
            assert!(answer["retry_after_ms"].as_u64().unwrap() > 0);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_api_takes_a_bearer_token() {
    let server = TestServer::start().await;
    let token = account(&server.url(), "mo").await;
    let auth = format!("Bearer {token}");
    let answer = http_with(
        server.addr,
        "GET",
        "/api/account",
        &[("authorization", auth.as_str())],
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let body = answer.json();
    assert_eq!(body["account"]["username"], "mo");
    assert_eq!(body["account"]["kind"], "bot");
    assert_eq!(body["tokens"].as_array().map(Vec::len), Some(1));
    let answer = http_with(server.addr, "GET", "/api/account", &[]).await;
    assert_eq!(answer.status, 401);
    assert_eq!(answer.json()["code"], "unauthorized");
    // A bad token is refused whatever the endpoint.
    let answer = http_with(
        server.addr,
        "GET",
        "/api/rooms",
        &[("authorization", "Bearer grundy_00_11")],
    )
    .await;
    assert_eq!(answer.status, 401, "{}", answer.body);
    let answer = http_with(server.addr, "GET", "/api/rooms", &[]).await;
    assert_eq!(answer.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refused() {
    use grundy_server::accounts::{password, token};
    use grundy_server::store::{
        now_ms, AccountRow, AccountWrite, MatchStore, SqliteStore, TokenRow, WriteOp,
    };
    let mut server = TestServer::start().await;
    server.stop().await;
    // A token that expired a minute ago, written as the server writes one.
    let minted = token::mint().expect("a token");
    {
        let store = SqliteStore::open(&server.db).expect("open");
        let now = now_ms();
        for op in [
            AccountWrite::Create(AccountRow {
                id: 1,
                username: "nell".into(),
                username_key: "nell".into(),
                kind: grundy_protocol::wire::AccountKind::Person,
                password_hash: password::hash(PASSWORD).expect("hash"),
                created_at_ms: now - 120_000,
            }),
            AccountWrite::Token(TokenRow {
                id: minted.id.clone(),
                account: 1,
                name: "old".into(),
                scopes: grundy_protocol::wire::Scope::ALL.to_vec(),
                secret_sha256: minted.secret_sha256,
                created_at_ms: now - 120_000,
                expires_at_ms: Some(now - 60_000),
                revoked_at_ms: None,
            }),
        ] {
            store
                .write(WriteOp::Account(op))
                .await
                .expect("answered")
                .expect("written");
        }
        store.close();
    }
    server.restart().await;
    let mut c = Client::raw(&server.url()).await;
    let answer = c
        .request(json!({"type": "hello", "version": 1, "token": minted.text}))
        .await;
    assert_eq!(code(&answer), "unauthorized", "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains("expired"),
        "{answer}"
    );
    // The account itself still logs in.
    login(&server.url(), "nell").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_requests_are_checked_and_an_account_holds_so_many() {
    let mut config = grundy_tests::config();
    config.limits.tokens_per_account = 2;
    let server = TestServer::start_with(config).await;
    let url = server.url();
    let first = account(&url, "olga").await;
    let mut olga = Client::connect_token(&url, &first).await;
    for (request, names) in [
        (
            json!({"type": "create_token", "expires_in_days": 0}),
            "expires_in_days",
        ),
        (
            json!({"type": "create_token", "expires_in_days": 4000}),
            "expires_in_days",
        ),
        (json!({"type": "create_token", "scopes": []}), "scopes"),
        (
            json!({"type": "create_token", "name": "x".repeat(41)}),
            "name",
        ),
    ] {
        let answer = olga.request(request).await;
        assert_eq!(code(&answer), "bad_request", "{answer}");
        assert!(
            answer["message"].as_str().unwrap().starts_with(names),
            "{answer}"
        );
    }
    let second = olga.request(json!({"type": "create_token"})).await;
    assert_eq!(second["type"], "token", "{second}");
    // Two live tokens: a third is refused until one is revoked.
    let third = olga.request(json!({"type": "create_token"})).await;
    assert_eq!(code(&third), "limit_reached", "{third}");
    assert_eq!(third["limit"], "tokens_per_account");
    let answer = olga
        .request(json!({"type": "revoke_token", "token_id": second["info"]["id"]}))
        .await;
    assert_eq!(answer["type"], "token_revoked", "{answer}");
    let third = olga.request(json!({"type": "create_token"})).await;
    assert_eq!(third["type"], "token", "{third}");
}
