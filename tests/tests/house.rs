//! The server's own house bots over real sockets: a shutdown leaves none
//! running, a restart puts exactly one back on each house seat (also on one
//! reserved before a crash, before its bot ever came), only seats the server
//! reserved for the house count as the house's, nobody can take a name that
//! reads as the house bot's (or, where it has nothing to serve, as the
//! external house bot's), and an external house bot still can play.

use std::collections::VecDeque;
use std::time::Duration;

use grundy_protocol::wire::{Event, EventBody};
use grundy_protocol::Level;
use grundy_server::player::Player;
use grundy_server::store::{MatchStore, SqliteStore, WriteOp};
use grundy_tests::{Client, TestServer, PATIENCE};
use serde_json::{json, Value};
use tokio::net::TcpListener;

const START: [u64; 3] = [3, 4, 5];

/// Waits until `done` holds, checking every few milliseconds, at most PATIENCE.
async fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not within {PATIENCE:?}: {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A person in one room: their connection, and the events a `resume`
/// answer brought, read before the live ones.
struct Person {
    c: Client,
    backlog: VecDeque<Value>,
}

impl Person {
    fn new(c: Client) -> Person {
        Person {
            c,
            backlog: VecDeque::new(),
        }
    }

    /// Comes back to seat 0 of `room` after event `since`.
    async fn resume(url: &str, room: &str, since: u64) -> (Person, Value) {
        let mut c = Client::connect(url, "someone").await;
        let back = c
            .request(json!({"type": "resume", "room": room, "token": token(room), "since": since}))
            .await;
        assert_eq!(back["type"], "watching", "{back}");
        let backlog = back["events"].as_array().expect("events").clone();
        let person = Person {
            c,
            backlog: backlog.into(),
        };
        (person, back)
    }

    async fn event(&mut self) -> Value {
        match self.backlog.pop_front() {
            Some(e) => e,
            None => self.c.event().await,
        }
    }

    /// Events until one satisfies `wanted` (returned); the others are skipped.
    async fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let e = self.event().await;
            if wanted(&e) {
                return e;
            }
        }
    }
}

fn presence(seat: u8, connected: bool) -> impl Fn(&Value) -> bool {
    move |e| e["kind"] == "presence" && e["seat"] == seat && e["connected"] == connected
}

/// A person on seat 0 opens a Nim room against the perfect house bot:
/// (room, token); returns once the bot is on its seat.
async fn room_with_a_bot(url: &str, name: &str) -> (String, String, Person) {
    let mut me = Client::connect(url, name).await;
    let seated = me
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": START}, "bot": "perfect"}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    assert_eq!(seated["seat"], 0, "{seated}");
    // The level, as a fact of the room: no client reads it from a name.
    assert_eq!(seated["snapshot"]["bot"], "perfect", "{seated}");
    let room = seated["room"].as_str().expect("room").to_string();
    let token = seated["token"].as_str().expect("token").to_string();
    let mut me = Person::new(me);
    let sat = me.event().await;
    assert_eq!(sat["kind"], "seated", "{sat}");
    assert_eq!(sat["seat"], 1, "{sat}");
    assert_eq!(sat["name"], "house-bot (perfect)", "{sat}");
    assert_eq!(me.event().await["kind"], "started");
    me.until(presence(1, true)).await;
    (room, token, me)
}

/// Plays seat 0 to the end, badly (one stone from the first heap left), from
/// `heaps` with seat 0 to move; every move of seat 0 must be this client's.
/// Returns the `ended` event.
async fn play_out(me: &mut Person, room: &str, token: &str, mut heaps: Vec<u64>) -> Value {
    let mut my_turn = true;
    let mut mine = 0;
    loop {
        if my_turn && heaps.iter().any(|&h| h > 0) {
            let i = heaps.iter().position(|&h| h > 0).expect("a heap");
            let ack = me
                .c
                .request(json!({"type": "move", "room": room, "token": token, "move": {"heap": i, "take": 1}}))
                .await;
            assert_eq!(ack["type"], "ack", "{ack}");
            mine += 1;
            my_turn = false;
        }
        let e = me.event().await;
        match e["kind"].as_str().expect("kind") {
            "moved" => {
                heaps = serde_json::from_value(e["position"]["heaps"].clone()).expect("heaps");
                if e["seat"] == 0 {
                    assert!(mine > 0, "seat 0 moved, but not by its player: {e}");
                    mine -= 1;
                } else {
                    my_turn = true;
                }
            }
            "ended" => return e,
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_leaves_no_house_bot_running() {
    let mut server = TestServer::start().await;
    let url = server.url();
    let mut people = Vec::new();
    for name in ["ann", "ben", "cat"] {
        people.push(room_with_a_bot(&url, name).await);
    }
    let bots = server.server.as_ref().expect("running").house_bots();
    assert_eq!(bots.running(), 3);
    server.stop().await;
    assert_eq!(bots.running(), 0, "every bot stopped with the server");
    // Nothing of the old server tries to come back to its address.
    let listener = TcpListener::bind(server.addr)
        .await
        .expect("the address is free");
    let knock = tokio::time::timeout(Duration::from_secs(2), listener.accept()).await;
    assert!(knock.is_err(), "a connection came: {knock:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_in_place_one_bot_plays_the_house_seat() {
    let mut server = TestServer::start().await;
    let url = server.url();
    let (room, token, mut me) = room_with_a_bot(&url, "dana").await;
    let ack =
        me.c.request(
            json!({"type": "move", "room": room, "token": token, "move": {"heap": 0, "take": 1}}),
        )
        .await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let answer = me.until(|e| e["kind"] == "moved" && e["seat"] == 1).await;
    let heaps: Vec<u64> =
        serde_json::from_value(answer["position"]["heaps"].clone()).expect("heaps");
    let seq = answer["seq"].as_u64().expect("seq");

    let before = server.server.as_ref().expect("running").house_bots();
    // Same address: a bot left over from before would find the new server.
    server.restart_in_place().await;
    assert_eq!(before.running(), 0, "the old server's bot is gone");
    let after = server.server.as_ref().expect("running").house_bots();
    assert_eq!(after.running(), 1, "one bot for the one house seat");

    let mut me = Client::connect(&url, "dana").await;
    let back = me
        .request(json!({"type": "resume", "room": room, "token": token, "since": seq}))
        .await;
    assert_eq!(back["type"], "watching", "{back}");
    let mut me = Person::new(me);
    let ended = play_out(&mut me, &room, &token, heaps).await;
    assert_eq!(ended["result"]["winner"], 1, "the bot wins: {ended}");
    eventually("the bot's task ends with the match", || {
        after.running() == 0
    })
    .await;
}

/// Writes `ops` to the store of a stopped test server.
async fn write(server: &TestServer, ops: Vec<WriteOp>) {
    let store = SqliteStore::open(&server.db).expect("open the store");
    for op in ops {
        store
            .write(op)
            .await
            .expect("the writer answers")
            .expect("written");
    }
    store.close();
}

fn event(room: &str, seq: u64, body: EventBody) -> WriteOp {
    WriteOp::event(room, &Event { seq, body }, seq).expect("encodes")
}

fn seat(room: &str, seat: u8, name: &str, house: bool) -> WriteOp {
    WriteOp::Seat {
        room: room.into(),
        seat,
        player: if house {
            Player::house(name)
        } else {
            Player::guest(name)
        },
        // The store keeps the token's hash.
        token: grundy_server::secret::hash(&format!("token-{room}-{seat}")),
        house,
        player_token: None,
        tie: None,
    }
}

/// The token of seat 0 as [`seat`] writes it.
fn token(room: &str) -> String {
    format!("token-{room}-0")
}

fn seated(room: &str, seq: u64, seat: u8, name: &str) -> WriteOp {
    event(
        room,
        seq,
        EventBody::Seated {
            seat,
            name: Some(name.into()),
            player_kind: None,
        },
    )
}

/// A room that asked for the perfect house bot, as a server left it.
fn bot_room(room: &str) -> WriteOp {
    WriteOp::CreateRoom {
        room: room.into(),
        code: format!("{room:.6}").to_uppercase(),
        spec: json!({"game": "nim", "heaps": START}),
        clock: None,
        listed: true,
        bot: Some("perfect".into()),
        hints: false,
        rated: false,
        tournament: None,
        created_at_ms: 1,
    }
}

/// A server stopped with two rooms of a person against the house bot: in
/// `reserved` the house seat was reserved but its bot never came before the
/// crash; in `unreserved` the crash came between the person's seat and the
/// reservation. Each gets one bot after the restart, and the match is played.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_house_seat_the_bot_never_reached_gets_one_after_a_restart() {
    let mut server = TestServer::start().await;
    server.stop().await;
    write(
        &server,
        vec![
            bot_room("reserved"),
            seat("reserved", 0, "erin", false),
            seated("reserved", 1, 0, "erin"),
            seat("reserved", 1, "house-bot (perfect)", true),
            seated("reserved", 2, 1, "house-bot (perfect)"),
            event("reserved", 3, EventBody::Started),
            bot_room("unreserved"),
            seat("unreserved", 0, "finn", false),
            seated("unreserved", 1, 0, "finn"),
        ],
    )
    .await;
    server.restart().await;
    let bots = server.server.as_ref().expect("running").house_bots();
    assert_eq!(bots.running(), 2);
    let url = server.url();
    for (room, since) in [("reserved", 3), ("unreserved", 1)] {
        let (mut me, _) = Person::resume(&url, room, since).await;
        if room == "unreserved" {
            // The bot's reservation, before or after the person's return.
            let sat = me.until(|e| e["kind"] == "seated").await;
            assert_eq!(sat["name"], "house-bot (perfect)", "{sat}");
            assert_eq!(sat["seat"], 1, "{sat}");
            me.until(|e| e["kind"] == "started").await;
        }
        let ended = play_out(&mut me, room, &token(room), START.to_vec()).await;
        assert_eq!(
            ended["result"]["winner"], 1,
            "{room}: the bot wins: {ended}"
        );
    }
    eventually("both bots end with their matches", || bots.running() == 0).await;
}

/// A person whose name reads like the house bot's, on a seat the server did
/// not reserve for the house (from before names were checked, say), gets no
/// bot on their seat after a restart: they play their own moves against the
/// one bot, on the house seat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_named_like_the_house_bot_gets_no_bot_on_a_restart() {
    let mut server = TestServer::start().await;
    server.stop().await;
    let room = "posing";
    write(
        &server,
        vec![
            bot_room(room),
            seat(room, 0, "house-bot (perfect)", false),
            seated(room, 1, 0, "house-bot (perfect)"),
            seat(room, 1, "house-bot (perfect)", true),
            seated(room, 2, 1, "house-bot (perfect)"),
            event(room, 3, EventBody::Started),
        ],
    )
    .await;
    server.restart().await;
    let bots = server.server.as_ref().expect("running").house_bots();
    assert_eq!(bots.running(), 1, "a bot for the house seat only");
    let (mut me, back) = Person::resume(&server.url(), room, 3).await;
    // Nobody held seat 0 before its player came back.
    assert!(
        me.backlog.iter().any(presence(0, true)),
        "the person's return is recorded: {back}"
    );
    let ended = play_out(&mut me, room, &token(room), START.to_vec()).await;
    assert_eq!(ended["result"]["winner"], 1, "the bot wins: {ended}");
}

/// Names a person might use to pass for the house bot.
const POSING: [&str; 6] = [
    "house-bot (perfect)",
    "House-Bot (perfect)",
    " house-bot (3) ",
    "HOUSE BOT",
    "h\u{043e}use-bot (perfect)",
    "house\u{200b}-bot (perfect)",
];

/// Names a person might use to pass for the external house bot
/// (`grundy-bot house`), which has no seat to take on a server whose own
/// house bots serve.
const POSING_EXTERNAL: [&str; 5] = [
    "grundy-bot (perfect)",
    "grundy-bot (3)",
    "Grundy-Bot (perfect)",
    "GRUNDY BOT",
    "grundy\u{200b}-bot (random)",
];

fn refused_as_reserved(answer: &Value) {
    assert_eq!(answer["type"], "error", "{answer}");
    assert_eq!(answer["code"], "bad_request", "{answer}");
    let message = answer["message"].as_str().expect("message");
    assert!(message.contains("reserved"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hello_refuses_a_name_that_reads_as_the_house_bot_s() {
    let server = TestServer::start().await;
    let mut c = Client::raw(&server.url()).await;
    for name in POSING.iter().chain(&POSING_EXTERNAL) {
        let answer = c
            .request(json!({"type": "hello", "version": 1, "name": name}))
            .await;
        refused_as_reserved(&answer);
    }
    // Refused, not said: still no hello, and the connection goes on.
    let early = c.request(json!({"type": "list_rooms"})).await;
    assert_eq!(early["code"], "bad_request", "{early}");
    let welcome = c
        .request(json!({"type": "hello", "version": 1, "name": "grundy"}))
        .await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    // Nor later, as a guest already.
    let answer = c
        .request(json!({"type": "hello", "version": 1, "name": "grundy-bot (perfect)"}))
        .await;
    refused_as_reserved(&answer);
    let seated = c
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": START}}))
        .await;
    assert_eq!(seated["snapshot"]["seats"][0]["name"], "grundy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_refuses_a_player_named_like_the_house_bot() {
    let server = TestServer::start().await;
    let mut c = Client::connect(&server.url(), "organiser").await;
    let created = c
        .request(
            json!({"type": "create_tournament", "spec": {"game": "nim", "heaps": [2, 3]},
            "format": "round_robin"}),
        )
        .await;
    assert_eq!(created["type"], "tournament_created", "{created}");
    let code = created["code"].as_str().expect("code");
    for name in POSING.iter().chain(&POSING_EXTERNAL) {
        let answer = c
            .request(json!({"type": "register", "tournament": code, "name": name}))
            .await;
        refused_as_reserved(&answer);
    }
    let registered = c
        .request(json!({"type": "register", "tournament": code, "name": "ida"}))
        .await;
    assert_eq!(registered["type"], "registered", "{registered}");
}

/// The names the server gives its house seats are reserved, and so are those
/// the external house bot plays under; a server that leaves its bot rooms to
/// external house bots lets a guest say hello as exactly the bot's own.
#[test]
fn the_house_seat_names_and_the_external_bot_s_are_reserved() {
    use grundy_server::names::check_guest_name;
    use grundy_server::names::{external_house_name, house_name, reserved, Reserved};
    for level in [Level::Perfect, Level::Casual(0), Level::Casual(7)] {
        assert_eq!(reserved(&house_name(level)), Some(Reserved::House));
        let external = grundy_bot::house::external_name(level);
        assert_eq!(external, external_house_name(level));
        assert_eq!(reserved(&external), Some(Reserved::External));
        assert!(check_guest_name(&external, false).is_err(), "{external}");
        assert_eq!(check_guest_name(&external, true), Ok(()));
        assert!(check_guest_name(&house_name(level), true).is_err());
    }
}

/// A server with house bots off leaves rooms that ask for a bot to external
/// `grundy-bot house` processes: their names are ones that server accepts
/// (look-alikes of them still are not), and their seat is an ordinary one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_house_bot_plays_under_a_name_the_server_accepts() {
    let config = grundy_server::Config {
        house_bots: false,
        ..Default::default()
    };
    let server = TestServer::start_with(config).await;
    let url = server.url();
    let mut me = Client::connect(&url, "hana").await;
    let seated = me
        .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": START}, "bot": "perfect"}))
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let room = seated["room"].as_str().expect("room").to_string();
    let token = seated["token"].as_str().expect("token").to_string();
    let bots = server.server.as_ref().expect("running").house_bots();
    assert_eq!(bots.running(), 0, "house bots are off");
    let mut posing = Client::raw(&url).await;
    for name in [
        "Grundy-Bot (perfect)",
        "grundy\u{200b}-bot (perfect)",
        "house-bot (perfect)",
    ] {
        let answer = posing
            .request(json!({"type": "hello", "version": 1, "name": name}))
            .await;
        refused_as_reserved(&answer);
    }
    let external = {
        let (url, room) = (url.clone(), room.clone());
        tokio::spawn(async move {
            grundy_bot::house::join_and_play(
                &url,
                &grundy_client::client::Hello::guest("grundy-bot (perfect)"),
                &room,
                Level::Perfect,
                1,
            )
            .await
        })
    };
    let mut me = Person::new(me);
    let sat = me.until(|e| e["kind"] == "seated").await;
    assert_eq!(sat["name"], "grundy-bot (perfect)", "{sat}");
    me.until(|e| e["kind"] == "started").await;
    let ended = play_out(&mut me, &room, &token, START.to_vec()).await;
    assert_eq!(ended["result"]["winner"], 1, "the bot wins: {ended}");
    let result = external.await.expect("the task").expect("the bot's match");
    assert_eq!(result.winner, Some(1));
}
