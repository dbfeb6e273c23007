//! The web page in a real headless Chromium (Debian's `chromium`, driven
//! through `chromedriver` over WebDriver), against a real server on port 0:
//! people click, as they would.
//!
//! Needs `/usr/bin/chromium` and `/usr/bin/chromedriver` (or `CHROMIUM`
//! and `CHROMEDRIVER`): `apt-get install -y chromium chromium-driver`
//! (`scripts/test.sh` and `.ci/run` install them when missing). Screenshots
//! of every family's board land in `target/browser/`.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use grundy_protocol::{Position, Rules, Strategy};
use grundy_tests::{cluster_node, TestServer};
use serde_json::{json, Value};

/// How long the page may take to show what a test waits for.
const WAIT: Duration = Duration::from_secs(20);

fn program(var: &str, default: &str) -> String {
    let path = std::env::var(var).unwrap_or_else(|_| default.to_string());
    assert!(
        std::path::Path::new(&path).exists(),
        "{path} is missing: the browser tests need Debian's chromium and chromedriver \
         (`apt-get install -y chromium chromium-driver`, which scripts/test.sh does), \
         or {var} set to where they are"
    );
    path
}

/// One chromedriver for the test; each `browser()` is a fresh Chromium with
/// its own profile (its own storage: another person).
struct Driver {
    child: Child,
    url: String,
}

impl Driver {
    async fn start() -> Driver {
        let chromedriver = program("CHROMEDRIVER", "/usr/bin/chromedriver");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + WAIT;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Driver { child, url }
    }

    async fn browser(&self) -> Client {
        self.browser_as(&["--window-size=1100,900"], None).await
    }

    /// A phone's screen, [`PHONE`] CSS pixels wide, in the dark theme. A
    /// window cannot be made that narrow (Chromium keeps it at 500 px or
    /// more), so the page is given a phone's screen as DevTools' device
    /// mode gives it.
    async fn phone_in_the_dark(&self) -> Client {
        let (width, height) = PHONE;
        self.browser_as(
            DARK,
            Some(json!({"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2.0}})),
        )
        .await
    }

    /// A desktop browser that trusts the certificate whose public key has
    /// `pin` ([`grundy_testkit::tls::spki_pin`]), as if its CA were installed.
    async fn browser_trusting(&self, pin: &str) -> Client {
        let trust = format!("--ignore-certificate-errors-spki-list={pin}");
        self.browser_as(&["--window-size=1100,900", &trust], None)
            .await
    }

    async fn browser_as(&self, extra: &[&str], mobile: Option<Value>) -> Client {
        let chromium = program("CHROMIUM", "/usr/bin/chromium");
        let mut args = vec![
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ];
        args.extend_from_slice(extra);
        let mut options = json!({
            "binary": chromium,
            // No network beyond this machine: nothing in the background.
            "args": args,
        });
        if let Some(mobile) = mobile {
            options["mobileEmulation"] = mobile;
        }
        let mut caps = serde_json::Map::new();
        caps.insert("goog:chromeOptions".into(), options);
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&self.url)
            .await
            .expect("a chromium session")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server on port 0, its page's address, and a chromedriver.
async fn start() -> (TestServer, String, Driver) {
    let server = TestServer::start().await;
    let base = format!("http://{}", server.addr);
    (server, base, Driver::start().await)
}

/// A phone's screen in CSS pixels: 360 px wide, the narrowest phones in
/// common use.
const PHONE: (u32, u32) = (360, 800);

/// Chromium's arguments for the dark theme.
const DARK: &[&str] = &[
    "--force-dark-mode",
    "--blink-settings=preferredColorScheme=0",
];

fn css(selector: &str) -> Locator<'_> {
    Locator::Css(selector)
}

async fn click(b: &Client, selector: &str) {
    let el = b
        .wait()
        .at_most(WAIT)
        .for_element(css(selector))
        .await
        .unwrap_or_else(|e| panic!("no {selector}: {e}"));
    el.click()
        .await
        .unwrap_or_else(|e| panic!("click {selector}: {e}"));
}

async fn text(b: &Client, selector: &str) -> String {
    match b.find(css(selector)).await {
        Ok(el) => el.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Waits until `selector`'s text contains `wanted`; returns the text.
async fn wait_text(b: &Client, selector: &str, wanted: &str) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let t = text(b, selector).await;
        if t.contains(wanted) {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "{selector} never said {wanted:?}; it says {t:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn count(b: &Client, selector: &str) -> usize {
    b.find_all(css(selector)).await.map_or(0, |v| v.len())
}

async fn wait_count(b: &Client, selector: &str, at_least: usize) {
    let deadline = Instant::now() + WAIT;
    while count(b, selector).await < at_least {
        assert!(
            Instant::now() < deadline,
            "fewer than {at_least} of {selector}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn set_value(b: &Client, selector: &str, value: &str) {
    let el = b
        .wait()
        .at_most(WAIT)
        .for_element(css(selector))
        .await
        .expect("field");
    el.clear().await.expect("clear");
    el.send_keys(value).await.expect("type");
}

async fn select(b: &Client, selector: &str, value: &str) {
    let el = b.find(css(selector)).await.expect("select");
    el.select_by_value(value).await.expect("option");
}

/// Opens a room from the lobby's form: a typed position, an opponent (a
/// house bot level, or "" for a person), a seat, a clock ("" untimed), and
/// whether both players may see hints.
async fn create_room(
    b: &Client,
    base: &str,
    spec: &Value,
    opponent: &str,
    seat: &str,
    clock: &str,
    hints: bool,
) {
    b.goto(&format!("{base}/#/")).await.expect("lobby");
    wait_count(b, "#status[data-state=\"connected\"]", 1).await;
    select(b, "#start", "spec").await;
    set_value(b, "#spec", &spec.to_string()).await;
    select(b, "#opponent", opponent).await;
    select(b, "#seat", seat).await;
    select(b, "#clock", clock).await;
    if hints {
        click(b, "#hints").await;
    }
    click(b, "#create-button").await;
    b.wait()
        .at_most(WAIT)
        .for_element(css("#room-code"))
        .await
        .expect("the room opens");
}

async fn room_id(b: &Client) -> String {
    let url = b.current_url().await.expect("url");
    url.fragment()
        .and_then(|f| f.strip_prefix("/room/"))
        .expect("a room's address")
        .to_string()
}

/// The stone to click to take `take` from heap `heap` of size `size`.
fn stone(heap: u64, size: u64, take: u64) -> String {
    format!(
        ".heap-row[data-heap=\"{heap}\"] .stone[data-stone=\"{}\"]",
        size - take
    )
}

fn screenshots() -> PathBuf {
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(
        |_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    );
    let dir = target.join("browser");
    std::fs::create_dir_all(&dir).expect("screenshot folder");
    dir
}

async fn screenshot(b: &Client, name: &str) {
    let png = b.screenshot().await.expect("screenshot");
    std::fs::write(screenshots().join(format!("{name}.png")), png).expect("write screenshot");
}

/// The Nim heaps the page shows now (read from its board).
async fn heaps_shown(b: &Client) -> Vec<u64> {
    let sizes = b
        .execute(
            "return [...document.querySelectorAll('.heap-row .heap-size')].map(e => Number(e.textContent))",
            vec![],
        )
        .await
        .expect("script");
    serde_json::from_value(sizes).expect("sizes")
}

/// Plays the Nim game on the page perfectly (the engine says which stone to
/// click): to its end (the result line), or None once `moves` moves are
/// played and the game goes on.
async fn play_nim(b: &Client, moves: Option<usize>) -> Option<String> {
    let mut played = 0;
    loop {
        if moves == Some(played) {
            return None;
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let t = text(b, "#turn").await;
            if t.contains("Your move") || t.contains("You win") || t.contains("You lose") {
                break;
            }
            assert!(Instant::now() < deadline, "not the person's move: {t}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let line = text(b, "#turn").await;
        if line.contains("You win") || line.contains("You lose") {
            return Some(line);
        }
        let heaps = heaps_shown(b).await;
        let position = Position::from_spec(&json!({"game": "nim", "heaps": heaps})).expect("spec");
        let best = serde_json::to_value(position.best_move().expect("a move")).expect("json");
        let (heap, take) = (
            best["heap"].as_u64().expect("heap"),
            best["take"].as_u64().expect("take"),
        );
        let plies = count(b, "#moves li").await;
        click(b, &stone(heap, heaps[heap as usize], take)).await;
        // Our move and the answer (or the end).
        let deadline = Instant::now() + WAIT;
        loop {
            let t = text(b, "#turn").await;
            if t.contains("You win") || t.contains("You lose") {
                return Some(t);
            }
            if t.contains("Your move") && count(b, "#moves li").await >= plies + 2 {
                break;
            }
            if Instant::now() > deadline {
                screenshot(b, "failed-play-nim").await;
                panic!(
                    "the game did not go on: {t}; the page says {:?}",
                    text(b, ".error").await
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        played += 1;
    }
}

#[tokio::test]
async fn a_person_plays_nim_against_the_perfect_bot_reloads_and_wins() {
    let (mut server, base, driver) = start().await;
    let b = driver.browser().await;

    create_room(
        &b,
        &base,
        &json!({"game": "nim", "heaps": [3, 4, 5]}),
        "perfect",
        "0",
        "",
        false,
    )
    .await;
    wait_text(&b, "#turn", "Your move").await;
    assert!(text(&b, ".player-box[data-seat=\"1\"]")
        .await
        .contains("house-bot (perfect)"));
    screenshot(&b, "play-nim-start").await;

    assert_eq!(
        play_nim(&b, Some(1)).await,
        None,
        "the game goes on after one move"
    );
    // A reload in the middle of the game puts the person back on the seat.
    let before = count(&b, "#moves li").await;
    b.refresh().await.expect("reload");
    wait_text(&b, "#turn", "Your move").await;
    assert_eq!(count(&b, "#moves li").await, before, "the moves are back");
    assert!(text(&b, ".player-box[data-seat=\"0\"]")
        .await
        .contains("(you)"));
    // A server restart: the page says so, comes back, and the game goes on.
    server.restart_in_place().await;
    wait_count(&b, "#status[data-state=\"connected\"]", 1).await;
    wait_text(&b, "#turn", "Your move").await;
    assert_eq!(
        count(&b, "#moves li").await,
        before,
        "nothing lost in the restart"
    );
    let result = play_nim(&b, None).await.expect("the game ends");
    assert!(result.contains("You win by the rules"), "{result}");
    screenshot(&b, "play-nim-won").await;
    // The rematch asks for the house bot at the room's level, seats swapped.
    let first = room_id(&b).await;
    click(&b, "#rematch").await;
    let deadline = Instant::now() + WAIT;
    while room_id(&b).await == first {
        assert!(Instant::now() < deadline, "no rematch room");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    wait_text(&b, ".player-box[data-seat=\"0\"]", "house-bot (perfect)").await;
    b.close().await.expect("close");
}

/// The next message of `kind` a raw client hears (skipping the rest).
async fn heard(c: &mut grundy_testkit::client::Client, kind: &str) -> Value {
    loop {
        let m = c.recv().await;
        if m["type"] == kind {
            return m;
        }
    }
}

/// Waits until the page shows a room other than `first`: its id.
async fn moved_from(b: &Client, first: &str) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let now = room_id(b).await;
        if now != first {
            return now;
        }
        assert!(Instant::now() < deadline, "the page stayed in room {first}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A rematch between the page and a raw client standing in for the
/// terminal, offered from each side in turn: the offer is shown to the
/// other, accepted, and both go to the one new room, seats swapped.
#[tokio::test]
async fn a_rematch_is_offered_and_accepted_from_either_side() {
    use grundy_testkit::client::Client as Raw;
    let (server, base, driver) = start().await;
    let b = driver.browser().await;
    let nim1 = json!({"game": "nim", "heaps": [1]});
    create_room(&b, &base, &nim1, "", "0", "", false).await;
    let code = text(&b, "#room-code").await;
    let first = room_id(&b).await;
    let mut bob = Raw::connect(&server.url(), "bob").await;
    let seated = bob.request(json!({"type": "join", "room": code})).await;
    assert_eq!(seated["seat"], 1, "{seated}");
    let t1 = seated["token"].as_str().expect("token").to_string();
    wait_text(&b, "#turn", "Your move").await;
    b.find(css(&stone(0, 1, 1)))
        .await
        .expect("stone")
        .click()
        .await
        .expect("click");
    wait_text(&b, "#turn", "You win").await;

    // The page offers; bob is told and accepts; both go to the new room.
    click(&b, "#rematch").await;
    wait_text(&b, "#rematch-note", "waiting for bob").await;
    let offered = heard(&mut bob, "rematch_offered").await;
    assert_eq!(offered["seat"], 0, "{offered}");
    let accepted = bob
        .request(json!({"type": "accept_rematch", "room": first, "token": t1}))
        .await;
    assert_eq!(accepted["type"], "ack", "{accepted}");
    let ready = heard(&mut bob, "rematch_ready").await;
    let second = moved_from(&b, &first).await;
    assert_eq!(ready["new_room"], json!(second), "{ready}");
    assert_eq!(ready["seat"], 0, "bob moves first this time: {ready}");
    wait_text(&b, ".player-box[data-seat=\"1\"]", "(you)").await;
    screenshot(&b, "rematch-accepted").await;

    // Bob plays the new room and offers; the page shows it and accepts.
    let t0 = ready["token"].as_str().expect("token").to_string();
    let resumed = bob
        .request(json!({"type": "resume", "room": second, "token": t0}))
        .await;
    assert_eq!(resumed["seat"], 0, "{resumed}");
    let moved = bob
        .request(json!({"type": "move", "room": second, "token": t0,
                        "move": {"heap": 0, "take": 1}}))
        .await;
    assert_eq!(moved["type"], "ack", "{moved}");
    wait_text(&b, "#turn", "You lose").await;
    let offered = bob
        .request(json!({"type": "offer_rematch", "room": second, "token": t0}))
        .await;
    assert_eq!(offered["type"], "ack", "{offered}");
    wait_text(&b, "#rematch-note", "bob offers a rematch").await;
    screenshot(&b, "rematch-offered").await;
    click(&b, "#rematch-accept").await;
    let ready = heard(&mut bob, "rematch_ready").await;
    let third = moved_from(&b, &second).await;
    assert_eq!(ready["new_room"], json!(third), "{ready}");
    assert_eq!(ready["seat"], 1, "{ready}");
    wait_text(&b, ".player-box[data-seat=\"0\"]", "(you)").await;

    // A decline from the page is told to bob.
    let t1 = ready["token"].as_str().expect("token").to_string();
    bob.request(json!({"type": "resume", "room": third, "token": t1}))
        .await;
    wait_text(&b, "#turn", "Your move").await;
    b.find(css(&stone(0, 1, 1)))
        .await
        .expect("stone")
        .click()
        .await
        .expect("click");
    wait_text(&b, "#turn", "You win").await;
    let offered = bob
        .request(json!({"type": "offer_rematch", "room": third, "token": t1}))
        .await;
    assert_eq!(offered["type"], "ack", "{offered}");
    click(&b, "#rematch-decline").await;
    let withdrawn = heard(&mut bob, "rematch_withdrawn").await;
    assert_eq!(withdrawn["reason"], "declined", "{withdrawn}");
    wait_text(&b, "#rematch-note", "declined").await;
    b.close().await.expect("close");
}

/// As a deployment serves it: nginx terminates TLS in front of the server
/// (docs/deploy.md, "Behind a proxy"), the page is https and its WebSocket
/// wss through the proxy, and a game is played to its end.
#[tokio::test]
async fn a_person_plays_through_nginx_over_https() {
    let server = TestServer::start_with(grundy_server::Config {
        trusted_proxies: vec!["127.0.0.1/32".parse().expect("range")],
        ..grundy_tests::config()
    })
    .await;
    let Some(nginx) = grundy_testkit::nginx::TestNginx::start_or_skip(server.addr) else {
        return;
    };
    let driver = Driver::start().await;
    let b = driver.browser_trusting(nginx.spki_pin()).await;
    let base = format!("https://localhost:{}", nginx.addr().port());
    create_room(
        &b,
        &base,
        &json!({"game": "nim", "heaps": [2, 3]}),
        "perfect",
        "0",
        "",
        false,
    )
    .await;
    let scheme = b
        .execute("return location.protocol", vec![])
        .await
        .expect("script");
    assert_eq!(scheme, "https:");
    let result = play_nim(&b, None)
        .await
        .unwrap_or_else(|| panic!("the game ends; nginx logged: {}", nginx.error_log()));
    assert!(result.contains("You win by the rules"), "{result}");
    screenshot(&b, "through-nginx-won").await;
    b.close().await.expect("close");
}

#[tokio::test]
async fn a_guest_name_that_is_an_accounts_gives_way_to_a_given_one() {
    let (server, base, driver) = start().await;
    grundy_tests::account(&server.url(), "Ivan").await;
    let b = driver.browser().await;
    b.goto(&format!("{base}/#/")).await.expect("lobby");
    wait_count(&b, "#status[data-state=\"connected\"]", 1).await;
    // Tab leaves the field: its change says hello again under the name.
    set_value(&b, "#name", "ivan\u{E004}").await;
    let status = wait_text(&b, "#status", "account").await;
    assert!(status.contains("playing as guest-"), "{status}");
    // The page plays on, as the guest the server named.
    create_room(
        &b,
        &base,
        &json!({"game": "nim", "heaps": [2]}),
        "perfect",
        "0",
        "",
        false,
    )
    .await;
    let me = wait_text(&b, ".player-box[data-seat=\"0\"] .pname", "guest").await;
    assert!(me.starts_with("guest-"), "{me}");
    screenshot(&b, "account-name-refused").await;
    b.close().await.expect("close");
}

#[tokio::test]
async fn an_illegal_click_shows_the_servers_reason() {
    let (_server, base, driver) = start().await;
    let b = driver.browser().await;
    let spec = json!({"game": "bash", "k": 2, "heaps": [5, 4]});
    create_room(&b, &base, &spec, "perfect", "0", "180000+2000", false).await;
    wait_text(&b, "#turn", "Your move").await;
    // A timed game: the mover's clock runs on the page.
    let first = wait_text(&b, ".clock.running", "2:").await;
    let deadline = Instant::now() + WAIT;
    while text(&b, ".clock.running").await == first {
        assert!(Instant::now() < deadline, "the clock stands at {first}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    screenshot(&b, "timed-bash").await;
    // Taking all 5 when at most 2 may be taken: the engine's own words.
    click(&b, &stone(0, 5, 5)).await;
    let position = Position::from_spec(&spec).expect("spec");
    let mv = position
        .parse_move(&json!({"heap": 0, "take": 5}))
        .expect("shape");
    let reason = position.check(&mv).expect_err("illegal").to_string();
    let shown = wait_text(&b, ".error", &reason).await;
    assert!(shown.contains(&reason), "{shown}");
    assert_eq!(count(&b, "#moves li").await, 0, "nothing was played");
    // The page goes on: a legal click is played.
    click(&b, &stone(0, 5, 1)).await;
    wait_count(&b, "#moves li", 1).await;
    b.close().await.expect("close");
}

#[tokio::test]
async fn two_people_play_by_code_while_a_third_watches_then_replay_the_review() {
    let (_server, base, driver) = start().await;
    let (alice, bob, sam) = (
        driver.browser().await,
        driver.browser().await,
        driver.browser().await,
    );

    // Heaps 1, 2: alice (first) can win by taking 1 from heap 1; she throws it away.
    create_room(
        &alice,
        &base,
        &json!({"game": "nim", "heaps": [1, 2]}),
        "",
        "0",
        "",
        true,
    )
    .await;
    let code = text(&alice, "#room-code").await;
    let room = room_id(&alice).await;
    wait_text(&alice, "#turn", "Waiting for a second player").await;

    bob.goto(&format!("{base}/#/")).await.expect("lobby");
    wait_count(&bob, "#status[data-state=\"connected\"]", 1).await;
    set_value(&bob, "#join-code", &code).await;
    click(&bob, "#join-code + button").await;
    wait_text(&bob, "#turn", "to move").await;

    sam.goto(&format!("{base}/#/room/{code}"))
        .await
        .expect("watch");
    wait_text(&sam, "#turn", "to move").await;
    // Both players agreed to hints (the room allows them): a casual game,
    // for whoever follows it.
    click(&bob, "#hint").await;
    wait_count(&bob, "#binary-table", 1).await;
    wait_count(&alice, "#hint", 1).await;

    wait_text(&alice, "#turn", "Your move").await;
    click(&alice, &stone(1, 2, 2)).await; // the mistake: heaps 1, 0
    wait_text(&bob, "#turn", "Your move").await;
    click(&bob, &stone(0, 1, 1)).await; // the last stone: bob wins
    wait_text(&bob, "#turn", "You win").await;
    wait_text(&alice, "#turn", "You lose").await;
    let watched = wait_text(&sam, "#turn", "wins by the rules").await;
    assert!(watched.contains("wins"), "{watched}");
    screenshot(&sam, "watch-finished").await;

    // The replay: steps back and forth, marks alice's mistake.
    alice
        .goto(&format!("{base}/#/replay/{room}"))
        .await
        .expect("replay");
    wait_text(&alice, "#ply", "move 2 of 2").await;
    assert_eq!(count(&alice, ".moves li.mistake").await, 1);
    click(&alice, "#back").await;
    wait_text(&alice, "#ply", "move 1 of 2").await;
    let note = wait_text(&alice, "#mistake-note", "gave the win away").await;
    assert!(note.contains("take 1 from heap 1 would have won"), "{note}");
    click(&alice, "#first").await;
    wait_text(&alice, "#ply", "move 0 of 2").await;
    wait_count(&alice, "#binary-table", 1).await;
    click(&alice, "#forward").await;
    wait_text(&alice, "#ply", "move 1 of 2").await;
    screenshot(&alice, "replay-review").await;
    for b in [alice, bob, sam] {
        b.close().await.expect("close");
    }
}

/// One start per family, and a click recipe that plays one legal move in it.
fn families() -> Vec<(&'static str, Value, Vec<&'static str>)> {
    vec![
        (
            "nim",
            json!({"game": "nim", "heaps": [3, 4, 5]}),
            vec![".heap-row[data-heap=\"0\"] .stone[data-stone=\"2\"]"],
        ),
        (
            "misere-nim",
            json!({"game": "nim", "heaps": [2, 3], "misere": true}),
            vec![".heap-row[data-heap=\"1\"] .stone[data-stone=\"2\"]"],
        ),
        (
            "heaps",
            json!({"game": "heaps", "rule": {"upto": 3}, "heaps": [5, {"size": 9, "rule": "odd"}]}),
            vec![".heap-row[data-heap=\"0\"] .stone[data-stone=\"4\"]"],
        ),
        (
            "bash",
            json!({"game": "bash", "k": 3, "heaps": [5, 6]}),
            vec![".heap-row[data-heap=\"1\"] .stone[data-stone=\"5\"]"],
        ),
        (
            "subtraction",
            json!({"game": "subtraction", "set": [1, 3, 4], "heaps": [10]}),
            vec![".heap-row[data-heap=\"0\"] .stone[data-stone=\"9\"]"],
        ),
        (
            "kayles",
            json!({"game": "kayles", "heaps": [4, 5]}),
            vec![
                ".heap-row[data-heap=\"0\"] .stone[data-stone=\"1\"]",
                ".heap-row[data-heap=\"0\"] .stone[data-stone=\"1\"]",
            ],
        ),
        (
            "dawson",
            json!({"game": "dawson", "heaps": [5]}),
            vec![
                ".heap-row[data-heap=\"0\"] .stone[data-stone=\"0\"]",
                ".heap-row[data-heap=\"0\"] .stone[data-stone=\"1\"]",
            ],
        ),
        (
            "lasker",
            json!({"game": "lasker", "heaps": [5, 3]}),
            vec![".heap-row[data-heap=\"0\"] .stone[data-stone=\"4\"]"],
        ),
        (
            // A click after stone 1 of 7 splits the heap into 2 and 5.
            "grundy",
            json!({"game": "grundy", "heaps": [7, 4]}),
            vec![".heap-row[data-heap=\"0\"] .stone[data-stone=\"1\"]"],
        ),
        (
            "wythoff",
            json!({"game": "wythoff", "heaps": [3, 5]}),
            vec![".square[data-x=\"2\"][data-y=\"5\"]"],
        ),
        (
            "moore",
            json!({"game": "moore", "heaps": [3, 5, 6], "k": 2}),
            vec![
                ".heap-row[data-heap=\"0\"] .stone[data-stone=\"2\"]",
                ".actions .primary",
            ],
        ),
        (
            "new-stone",
            json!({"game": "new-stone", "heaps": [2, 3]}),
            vec![
                ".heap-row[data-heap=\"1\"] .stone[data-stone=\"2\"]",
                ".actions .primary",
            ],
        ),
        (
            "staircase",
            json!({"game": "staircase", "pieces": [1, 4, 6]}),
            vec![".step[data-cell=\"6\"]", ".step[data-cell=\"5\"]"],
        ),
        (
            "treblecross",
            json!({"game": "treblecross", "length": 7}),
            vec![".cell[data-cell=\"3\"]"],
        ),
        (
            "darkraft",
            json!({"game": "darkraft", "grid": ["RLX", "LRL", "XLR"]}),
            vec![".dcell[data-row=\"0\"][data-col=\"0\"]"],
        ),
        (
            "graph",
            json!({"game": "graph", "vertices": 4, "edges": [[0, 1], [1, 2], [0, 3]], "tokens": [0, 1]}),
            vec![".token[data-token=\"0\"]", ".vertex[data-vertex=\"3\"]"],
        ),
        (
            "twist",
            json!({"game": "twist", "stones": 10}),
            vec!["split:4+6"],
        ),
        (
            // Select coins 1 and 4 (heads), then Turn.
            "mock-turtles",
            json!({"game": "mock-turtles", "coins": "THTHH"}),
            vec![
                ".coin[data-coin=\"1\"]",
                ".coin[data-coin=\"4\"]",
                ".turn-coins",
            ],
        ),
        (
            "ruler",
            json!({"game": "ruler", "coins": "HTTH"}),
            vec![
                ".coin[data-coin=\"1\"]",
                ".coin[data-coin=\"2\"]",
                ".coin[data-coin=\"3\"]",
                ".turn-coins",
            ],
        ),
        (
            // Two opposite corners, then Turn: the page adds the other two.
            "turning-corners",
            json!({"game": "turning-corners", "coins": ["TTT", "TTH", "HTT"]}),
            vec![
                ".coin[data-row=\"0\"][data-col=\"0\"]",
                ".coin[data-row=\"1\"][data-col=\"2\"]",
                ".turn-coins",
            ],
        ),
        (
            "coins-sum",
            json!({"game": "sum", "parts": [{"game": "ruler", "coins": "HTH"},
                {"game": "turning-corners", "coins": ["TTTT", "THTH", "TTHH"]}]}),
            vec![
                ".part[data-part=\"1\"] .coin[data-row=\"1\"][data-col=\"1\"]",
                ".part[data-part=\"1\"] .coin[data-row=\"0\"][data-col=\"0\"]",
                ".part[data-part=\"1\"] .turn-coins",
            ],
        ),
        (
            "sum",
            json!({"game": "sum", "parts": [{"game": "nim", "heaps": [3, 5]},
                {"game": "kayles", "heaps": [7]}, {"game": "wythoff", "heaps": [3, 5]},
                {"game": "graph", "vertices": 3, "edges": [[0, 1], [1, 2], [0, 2]], "tokens": [0]}]}),
            vec![".part[data-part=\"0\"] .heap-row[data-heap=\"1\"] .stone[data-stone=\"1\"]"],
        ),
    ]
}

#[tokio::test]
async fn every_familys_board_renders_and_takes_a_legal_click() {
    let (_server, base, driver) = start().await;
    let desktop = driver.browser().await;
    click_one_move_per_family(&desktop, &base, "").await;
    desktop.close().await.expect("close");
    let phone = driver.phone_in_the_dark().await;
    click_one_move_per_family(&phone, &base, "-phone-dark").await;
    phone.close().await.expect("close");
}

/// Every family's board: a screenshot before and after one legal move,
/// named `FAMILY{suffix}.png` and `FAMILY{suffix}-after.png`. On any screen
/// the board fits (no sideways scrolling of the page).
async fn click_one_move_per_family(b: &Client, base: &str, suffix: &str) {
    for (name, spec, clicks) in families() {
        // The bot never moves first here: our click is the first move.
        create_room(b, base, &spec, "perfect", "0", "", false).await;
        wait_text(b, "#turn", "Your move").await;
        screenshot(b, &format!("{name}{suffix}")).await;
        let fits = b
            .execute(
                "return document.documentElement.scrollWidth <= window.innerWidth",
                vec![],
            )
            .await
            .expect("script");
        assert_eq!(
            fits, true,
            "{name}{suffix}: the page is wider than the screen"
        );
        for step in clicks {
            match step.strip_prefix("split:") {
                Some(parts) => {
                    set_value(b, "input.split", parts).await;
                    click(b, ".twist button[type=submit]").await;
                }
                None => click(b, step).await,
            }
        }
        let deadline = Instant::now() + WAIT;
        while count(b, "#moves li").await < 1 {
            let problem = text(b, ".error").await;
            assert!(
                problem.is_empty(),
                "{name}{suffix}: the move was refused: {problem}"
            );
            assert!(
                Instant::now() < deadline,
                "{name}{suffix}: the move never showed"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        screenshot(b, &format!("{name}{suffix}-after")).await;
    }
}

#[tokio::test]
async fn a_person_joins_a_tournament_and_plays_each_game_as_it_comes() {
    let server = TestServer::start().await;
    let base = format!("http://{}", server.addr);
    let mut owner = grundy_tests::Client::connect(&server.url(), "organiser").await;
    let made = owner
        .request(json!({"type": "create_tournament", "format": "round_robin",
                        "spec": {"game": "nim", "heaps": [2, 3]}, "name": "browser cup",
                        "clock": {"initial_ms": 120000, "increment_ms": 2000}}))
        .await;
    let id = made["tournament"].as_str().expect("id").to_string();
    let owner_token = made["owner_token"].as_str().expect("token").to_string();
    let bot = grundy_bot::tournament::register(
        &server.url(),
        &id,
        &grundy_client::client::Hello::guest("bot-1"),
        grundy_protocol::Level::Perfect,
        1,
    )
    .await
    .expect("the bot registers");
    let bot = tokio::spawn(bot.play());

    let driver = Driver::start().await;
    let b = driver.browser().await;
    b.goto(&format!("{base}/#/tournaments"))
        .await
        .expect("list");
    click(&b, &format!("a[href=\"#/tournament/{id}\"]")).await;
    wait_text(&b, ".tournament h2", "browser cup").await;
    click(&b, ".tournament form button").await;
    wait_text(&b, ".tournament", "You play as player 1").await;
    let started = owner
        .request(json!({"type": "start_tournament", "tournament": id, "token": owner_token}))
        .await;
    assert_eq!(started["type"], "ack", "{started}");

    // Two games, seats swapped: the page goes to each as it comes.
    let mut results = Vec::new();
    for game in 0..2 {
        if game == 1 {
            // The result of the first game stays on the page; the next one
            // is a link away.
            let banner = wait_text(&b, "#banner", "round 1").await;
            assert!(banner.contains("bot-1"), "{banner}");
            click(&b, "#banner a").await;
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let url = b.current_url().await.expect("url");
            let in_new_room = url.fragment().is_some_and(|f| f.starts_with("/room/"))
                && !text(&b, "#turn").await.contains("You win")
                && !text(&b, "#turn").await.contains("You lose")
                && !text(&b, "#turn").await.is_empty();
            if in_new_room {
                break;
            }
            assert!(Instant::now() < deadline, "game {game} never came");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        results.push(play_nim(&b, None).await.expect("the game ends"));
        screenshot(&b, &format!("tournament-game-{game}")).await;
    }
    // From [2, 3] the first player wins with perfect play: one game each.
    assert!(results.iter().any(|r| r.contains("You win")), "{results:?}");
    assert!(
        results.iter().any(|r| r.contains("You lose")),
        "{results:?}"
    );
    b.goto(&format!("{base}/#/tournament/{id}"))
        .await
        .expect("standings");
    wait_text(&b, ".tournament", "finished").await;
    let standings = text(&b, "table.standings").await;
    assert!(standings.contains("bot-1"), "{standings}");
    screenshot(&b, "tournament-finished").await;
    tokio::time::timeout(WAIT, bot)
        .await
        .expect("the bot ends")
        .expect("task")
        .expect("plays");
    b.close().await.expect("close");
}

/// The page's width and the screen's, as the page now is.
async fn widths(b: &Client) -> (u64, u64) {
    let fits = b
        .execute(
            "return [document.documentElement.scrollWidth, window.innerWidth]",
            vec![],
        )
        .await
        .expect("script");
    (
        fits[0].as_u64().expect("width"),
        fits[1].as_u64().expect("width"),
    )
}

#[tokio::test]
async fn the_page_fits_a_phone_in_the_dark() {
    let (server, base, driver) = start().await;
    // Something in every list: an open room of a long position, an open
    // tournament.
    let mut other = grundy_tests::Client::connect(&server.url(), "someone-with-a-long-name").await;
    let heaps: Vec<u64> = (1..=24).collect();
    let seated = other
        .request(
            json!({"type": "create_room", "spec": {"game": "nim", "heaps": heaps},
                        "clock": {"initial_ms": 300000, "increment_ms": 3000}}),
        )
        .await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let made = other
        .request(json!({"type": "create_tournament", "format": "round_robin",
                        "spec": {"game": "kayles", "heaps": [4, 5, 6]},
                        "name": "the long-named winter round robin"}))
        .await;
    assert_eq!(made["type"], "tournament_created", "{made}");
    let b = driver.phone_in_the_dark().await;
    for (page, shown) in [
        ("#/", "table.rooms tbody tr td.code"),
        ("#/tournaments", "table.rooms tbody tr td.code"),
        ("#/analyze", "textarea, input"),
    ] {
        b.goto(&format!("{base}/{page}")).await.expect("page");
        wait_count(&b, shown, 1).await;
        // The list in the screenshot, which shows the screen only.
        b.execute(
            "const e = document.querySelector(arguments[0]); (e.closest('table') || e).scrollIntoView({block: 'center'})",
            vec![json!(shown)],
        )
        .await
        .expect("script");
        let (scroll, width) = widths(&b).await;
        assert_eq!(width, u64::from(PHONE.0), "a phone's screen");
        let name = match page.trim_start_matches("#/") {
            "" => "lobby",
            other => other,
        };
        screenshot(&b, &format!("phone-dark-{name}")).await;
        assert!(
            scroll <= width,
            "{page} is {scroll} px wide on a {width} px screen"
        );
    }
    create_room(
        &b,
        &base,
        &json!({"game": "kayles", "heaps": [6, 9]}),
        "perfect",
        "0",
        "",
        false,
    )
    .await;
    wait_text(&b, "#turn", "Your move").await;
    click(&b, "#hint").await;
    wait_count(&b, "#binary-table", 1).await;
    let (scroll, width) = widths(&b).await;
    assert!(
        scroll <= width,
        "the page is {scroll} px wide on a {width} px screen"
    );
    let dark = b
        .execute(
            "return matchMedia('(prefers-color-scheme: dark)').matches",
            vec![],
        )
        .await
        .expect("script");
    assert_eq!(dark, true, "the dark theme is asked for");
    screenshot(&b, "phone-dark-kayles-hint").await;
    b.close().await.expect("close");
}

/// A sum of different games: the hint's binary table has a row per part and
/// the winning moves name their part; a move typed as `PART: MOVE` is played.
#[tokio::test]
async fn a_sum_is_hinted_part_by_part_and_takes_a_typed_move() {
    let (_server, base, driver) = start().await;
    let b = driver.browser().await;
    let spec = json!({"game": "sum", "parts": [{"game": "nim", "heaps": [3, 5]},
        {"game": "kayles", "heaps": [7]}, {"game": "wythoff", "heaps": [3, 5]}]});
    create_room(&b, &base, &spec, "perfect", "0", "", false).await;
    wait_text(&b, "#turn", "Your move").await;
    click(&b, "#hint").await;
    wait_count(&b, "#binary-table", 1).await;
    let table = text(&b, "#binary-table").await;
    for row in [
        "part 0: nim 3 5",
        "part 1: kayles 7",
        "part 2: wythoff 3 5",
        "nim-sum",
    ] {
        assert!(table.contains(row), "{row} missing from the table: {table}");
    }
    let winning = text(&b, "ul.winning").await;
    assert!(
        winning.contains("in part 0 (Nim): take 4 from heap 1"),
        "{winning}"
    );
    screenshot(&b, "sum-hint").await;
    set_value(&b, "#typed", "1: 0 2").await;
    click(&b, ".typed button[type=submit]").await;
    wait_text(&b, "#moves", "in part 1 (Kayles): take 2 from heap 0").await;
    b.close().await.expect("close");
}

/// A position is typed as `grundy analyze` takes it, in the new-game form
/// and on the Analyze page, and read by the server (`/api/parse`); a word
/// that is wrong is named, in the form.
#[tokio::test]
async fn positions_are_typed_in_the_short_form_grundy_analyze_takes() {
    let (_server, base, driver) = start().await;
    let b = driver.browser().await;
    b.goto(&format!("{base}/#/")).await.expect("lobby");
    wait_count(&b, "#status[data-state=\"connected\"]", 1).await;
    select(&b, "#start", "spec").await;
    set_value(&b, "#spec", "kayles 5 x + wythoff 3 5").await;
    click(&b, "#create-button").await;
    wait_text(
        &b,
        "p.error",
        "position: part 0 (kayles): \"x\" is not a whole number ≥ 0",
    )
    .await;
    set_value(&b, "#spec", "kayles 5 7 + wythoff 3 5").await;
    click(&b, "#create-button").await;
    wait_text(&b, "#turn", "Your move").await;
    wait_count(&b, ".part-title", 2).await;
    let titles = text(&b, ".board").await;
    assert!(
        titles.contains("Kayles") && titles.contains("Wythoff"),
        "{titles}"
    );
    screenshot(&b, "typed-sum").await;

    b.goto(&format!("{base}/#/analyze")).await.expect("analyze");
    wait_text(&b, "#analysis", "Grundy value").await;
    set_value(&b, "#analyze-spec", "nim --misere 1 1 3").await;
    click(&b, "section form button[type=submit]").await;
    wait_text(&b, "#analysis", "take 2 from heap 2").await;
    set_value(&b, "#analyze-spec", "chess 3").await;
    click(&b, "section form button[type=submit]").await;
    wait_text(&b, "p.error", "position: unknown game \"chess\"").await;
    b.close().await.expect("close");
}

// ---- A cluster behind one address ----

/// A load balancer as small as a test needs: every connection to `listen`
/// goes to whatever node `backend` names when it is made.
async fn balancer(backend: Arc<Mutex<SocketAddr>>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let to = *backend.lock().unwrap();
            tokio::spawn(async move {
                if let Ok(mut node) = tokio::net::TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut node).await;
                }
            });
        }
    });
    addr
}

/// A person plays the house bot on a page served through a load balancer;
/// the node that holds the room shuts down mid-game: the page reconnects
/// through the same address to the other node, which took the room and its
/// bot over, and the game goes on to its end with every move kept.
#[tokio::test]
async fn a_game_goes_on_in_the_page_when_its_node_shuts_down() {
    let (Some(postgres), Some(nats)) = (
        grundy_testkit::postgres::or_skip(),
        grundy_testkit::nats::or_skip(),
    ) else {
        return;
    };
    let db = postgres.fresh_database();
    let first = cluster_node(&db, &nats.url(), grundy_tests::config()).await;
    let second = cluster_node(&db, &nats.url(), grundy_tests::config()).await;
    let backend = Arc::new(Mutex::new(first.local_addr()));
    let base = format!("http://{}", balancer(backend.clone()).await);
    let driver = Driver::start().await;
    let b = driver.browser().await;

    create_room(
        &b,
        &base,
        &json!({"game": "nim", "heaps": [3, 4, 5]}),
        "perfect",
        "0",
        "",
        false,
    )
    .await;
    wait_text(&b, "#turn", "Your move").await;
    assert_eq!(play_nim(&b, Some(1)).await, None, "the game goes on");
    let before = count(&b, "#moves li").await;

    // New connections go to the second node; the first drains.
    *backend.lock().unwrap() = second.local_addr();
    first.shutdown().await;
    wait_count(&b, "#status[data-state=\"connected\"]", 1).await;
    wait_text(&b, "#turn", "Your move").await;
    assert_eq!(count(&b, "#moves li").await, before, "every move kept");
    screenshot(&b, "cluster-after-handover").await;
    let result = play_nim(&b, None).await.expect("the game ends");
    assert!(result.contains("You win by the rules"), "{result}");
    screenshot(&b, "cluster-won").await;
    b.close().await.expect("close");
    second.shutdown().await;
}

/// The account's session this page keeps (its API token), if any.
async fn kept_token(b: &Client) -> Option<String> {
    let token = b
        .execute(
            "return (JSON.parse(localStorage.getItem('grundy') || '{}').session || {}).token || null",
            vec![],
        )
        .await
        .expect("script");
    token.as_str().map(str::to_string)
}

/// Waits until the kept token is `wanted` (None: forgotten).
async fn wait_kept(b: &Client, wanted: Option<&str>) {
    let deadline = Instant::now() + WAIT;
    loop {
        let kept = kept_token(b).await;
        if kept.as_deref() == wanted {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the page keeps {kept:?}, not {wanted:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn sign_up(b: &Client, name: &str, password: &str, again: &str) {
    set_value(b, "#signup-name", name).await;
    set_value(b, "#signup-password", password).await;
    set_value(b, "#signup-again", again).await;
    click(b, "#signup button[type=\"submit\"]").await;
}

async fn log_in(b: &Client, name: &str, password: &str) {
    set_value(b, "#login-name", name).await;
    set_value(b, "#login-password", password).await;
    click(b, "#login button[type=\"submit\"]").await;
}

/// What `GET /api/account` answers a bearer token: 200 while it works,
/// 401 once it is revoked.
async fn account_status(addr: SocketAddr, token: &str) -> u16 {
    let bearer = format!("Bearer {token}");
    grundy_tests::http_with(addr, "GET", "/api/account", &[("authorization", &bearer)])
        .await
        .status
}

/// A form's refusal is the server's reason in words, not its JSON.
async fn refused_in(b: &Client, selector: &str, reason: &str) {
    let said = wait_text(b, selector, reason).await;
    assert!(!said.contains('{'), "{selector} shows JSON: {said}");
}

const WEB_PASSWORD: &str = "a long enough password";
const NEW_PASSWORD: &str = "another long password";

/// Sign-up with its refusals shown in the form, a rated tournament played on
/// the page as the account, the profile (ratings, their graph, the games
/// with their replays, the tournament) and the leaderboard; then a password
/// changed on the page (the old token refused), a log out (the token
/// refused, and forgotten), a log in again, and an unknown profile.
#[tokio::test]
async fn a_person_signs_up_plays_rated_and_finds_profile_and_leaderboard() {
    let server = TestServer::start().await;
    let base = format!("http://{}", server.addr);
    let url = server.url();
    let rex = grundy_tests::account(&url, "rex").await;
    let mut owner = grundy_tests::Client::connect_token(&url, &rex).await;
    let made = owner
        .request(json!({"type": "create_tournament", "format": "round_robin",
                        "spec": {"game": "nim", "heaps": [2, 3]}, "name": "rated cup",
                        "rated": true, "clock": {"initial_ms": 120000, "increment_ms": 2000}}))
        .await;
    assert_eq!(made["type"], "tournament_created", "{made}");
    let id = made["tournament"].as_str().expect("id").to_string();
    let owner_token = made["owner_token"].as_str().expect("token").to_string();
    let bot = grundy_bot::tournament::register(
        &url,
        &id,
        &grundy_client::client::Hello::Token(rex.clone()),
        grundy_protocol::Level::Perfect,
        1,
    )
    .await
    .expect("rex registers");
    let bot = tokio::spawn(bot.play());

    let driver = Driver::start().await;
    let b = driver.browser().await;
    b.goto(&format!("{base}/#/account")).await.expect("account");
    wait_count(&b, "#status[data-state=\"connected\"]", 1).await;
    assert_eq!(kept_token(&b).await, None);
    // Bad input, each refused in the form in the server's words.
    sign_up(&b, "Rex", WEB_PASSWORD, WEB_PASSWORD).await;
    refused_in(&b, "#signup-error", "the name \"rex\" is taken").await;
    sign_up(&b, "ada", "short", "short").await;
    refused_in(
        &b,
        "#signup-error",
        "password: must be 8 to 128 characters, got 5",
    )
    .await;
    let long = "x".repeat(129);
    sign_up(&b, "ada", &long, &long).await;
    refused_in(&b, "#signup-error", "got 129").await;
    sign_up(&b, "a", WEB_PASSWORD, WEB_PASSWORD).await;
    refused_in(&b, "#signup-error", "username").await;
    sign_up(&b, "ada", WEB_PASSWORD, "something else").await;
    refused_in(&b, "#signup-error", "the two passwords differ").await;
    screenshot(&b, "account-sign-up-refused").await;
    assert_eq!(kept_token(&b).await, None, "nothing kept while refused");
    sign_up(&b, "ada", WEB_PASSWORD, WEB_PASSWORD).await;
    wait_text(&b, "#account-name", "ada").await;
    wait_text(&b, ".account", "Logged in as").await;
    let first = kept_token(&b).await.expect("the session is kept");
    assert_eq!(account_status(server.addr, &first).await, 200);
    screenshot(&b, "account-logged-in").await;

    // A rated tournament, played on the page as the account.
    b.goto(&format!("{base}/#/tournament/{id}"))
        .await
        .expect("tournament");
    wait_text(&b, ".tournament h2", "rated cup").await;
    wait_text(&b, ".tournament form", "as ada").await;
    click(&b, ".tournament form button").await;
    wait_text(&b, ".tournament", "You play as player 1").await;
    let standings = text(&b, "table.standings").await;
    assert!(standings.contains("ada"), "{standings}");
    let started = owner
        .request(json!({"type": "start_tournament", "tournament": id, "token": owner_token}))
        .await;
    assert_eq!(started["type"], "ack", "{started}");
    for game in 0..2 {
        if game == 1 {
            wait_text(&b, "#banner", "rex").await;
            click(&b, "#banner a").await;
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let url = b.current_url().await.expect("url");
            let turn = text(&b, "#turn").await;
            if url.fragment().is_some_and(|f| f.starts_with("/room/"))
                && !turn.is_empty()
                && !turn.contains("You win")
                && !turn.contains("You lose")
            {
                break;
            }
            assert!(Instant::now() < deadline, "game {game} never came");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The seats carry the accounts' names, rex's with its badge.
        wait_text(&b, ".players", "ada").await;
        assert!(count(&b, ".players .tag.kind-bot").await >= 1);
        play_nim(&b, None).await.expect("the game ends");
        if game == 0 {
            screenshot(&b, "account-rated-game").await;
        }
    }
    tokio::time::timeout(WAIT, bot)
        .await
        .expect("rex ends")
        .expect("task")
        .expect("plays");

    // The profile: the rating, its graph, both games with their replays,
    // the tournament.
    b.goto(&format!("{base}/#/player/ada"))
        .await
        .expect("profile");
    wait_text(&b, "#profile-ratings", "Nim").await;
    wait_count(&b, ".rating-graph svg circle.point", 1).await;
    assert_eq!(count(&b, "#profile-games a.replay-link").await, 2);
    let games = text(&b, "#profile-games").await;
    assert!(games.contains("rex") && games.contains("won"), "{games}");
    let tournaments = text(&b, "#profile-tournaments").await;
    assert!(tournaments.contains("rated cup"), "{tournaments}");
    let profile: Value = grundy_tests::http(server.addr, "GET", "/api/players/ada")
        .await
        .json();
    let rating = profile["ratings"][0]["rating"].as_f64().expect("rated");
    let shown = text(&b, "#profile-ratings").await;
    assert!(
        shown.contains(&format!("{}", rating.round())),
        "{shown} shows {rating}"
    );
    screenshot(&b, "account-profile").await;
    click(&b, "#profile-games a.replay-link").await;
    let deadline = Instant::now() + WAIT;
    while !b
        .current_url()
        .await
        .expect("url")
        .fragment()
        .is_some_and(|f| f.starts_with("/replay/"))
    {
        assert!(Instant::now() < deadline, "the replay never opened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The leaderboard: both accounts, rex marked a bot.
    b.goto(&format!("{base}/#/leaderboard/nim"))
        .await
        .expect("leaderboard");
    wait_text(&b, "#leaderboard", "ada").await;
    let board = text(&b, "#leaderboard").await;
    assert!(board.contains("rex"), "{board}");
    assert_eq!(count(&b, "#leaderboard .tag.kind-bot").await, 1, "{board}");
    screenshot(&b, "account-leaderboard").await;

    // A password changed on the page: a wrong current one is refused in
    // the form; the right one gives the page a new token, and the old one
    // is refused from then on.
    b.goto(&format!("{base}/#/account")).await.expect("account");
    set_value(&b, "#current-password", "not my password").await;
    set_value(&b, "#new-password", NEW_PASSWORD).await;
    click(&b, "#change-password button[type=\"submit\"]").await;
    refused_in(&b, "#password-error", "not the account's current password").await;
    set_value(&b, "#current-password", WEB_PASSWORD).await;
    set_value(&b, "#new-password", NEW_PASSWORD).await;
    click(&b, "#change-password button[type=\"submit\"]").await;
    wait_text(&b, "#password-done", "Password changed").await;
    let second = kept_token(&b).await.expect("a new session");
    assert_ne!(second, first);
    assert_eq!(account_status(server.addr, &first).await, 401);
    assert_eq!(account_status(server.addr, &second).await, 200);
    // The page still acts as the account with it.
    b.refresh().await.expect("reload");
    wait_text(&b, "#account-name", "ada").await;

    // Log out: the server refuses the token, and the page forgets it.
    click(&b, "#logout").await;
    wait_kept(&b, None).await;
    wait_text(&b, "#who", "log in").await;
    assert_eq!(account_status(server.addr, &second).await, 401);
    // Logging in again: the old password is refused, the new one works.
    log_in(&b, "ada", WEB_PASSWORD).await;
    refused_in(&b, "#login-error", "wrong username or password").await;
    log_in(&b, "ADA", NEW_PASSWORD).await;
    wait_text(&b, "#account-name", "ada").await;
    let third = kept_token(&b).await.expect("a session again");
    assert_eq!(account_status(server.addr, &third).await, 200);

    // An unknown player's profile says so.
    b.goto(&format!("{base}/#/player/nobody"))
        .await
        .expect("profile");
    wait_text(&b, "#profile-error", "no account named \"nobody\"").await;
    screenshot(&b, "account-unknown-profile").await;
    b.close().await.expect("close");
}

/// The account's pages on a phone: no page wider than the screen.
#[tokio::test]
async fn the_account_pages_fit_a_phone() {
    use grundy_bot::tournament::{run_field, Field};
    use grundy_protocol::wire::{TournamentFormat, TournamentSettings};
    let (server, base, driver) = start().await;
    let url = server.url();
    let players = [
        "erin-with-a-long-name".to_string(),
        "fay".to_string(),
        "gil".to_string(),
    ];
    let tokens = grundy_tests::accounts(&url, &players).await;
    let settings = TournamentSettings {
        name: Some("the long-named rated winter round robin".into()),
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
        players: 3,
        levels: vec![grundy_protocol::Level::Perfect],
        seed: 3,
        tokens,
    };
    run_field(field, |_| {}).await.expect("the tournament runs");

    let b = driver.phone_in_the_dark().await;
    b.goto(&format!("{base}/#/account")).await.expect("account");
    wait_count(&b, "#status[data-state=\"connected\"]", 1).await;
    log_in(&b, "erin-with-a-long-name", grundy_tests::PASSWORD).await;
    wait_text(&b, "#account-name", "erin-with-a-long-name").await;
    for (page, shown, name) in [
        ("#/account", "#change-password", "account"),
        (
            "#/player/erin-with-a-long-name",
            ".rating-graph svg circle.point",
            "profile",
        ),
        (
            "#/leaderboard/nim",
            "#leaderboard .tag.kind-bot",
            "leaderboard",
        ),
    ] {
        b.goto(&format!("{base}/{page}")).await.expect("page");
        wait_count(&b, shown, 1).await;
        let (scroll, width) = widths(&b).await;
        assert_eq!(width, u64::from(PHONE.0), "a phone's screen");
        screenshot(&b, &format!("phone-dark-{name}")).await;
        assert!(
            scroll <= width,
            "{page} is {scroll} px wide on a {width} px screen"
        );
    }
    // The profile's lists, further down.
    b.goto(&format!("{base}/#/player/erin-with-a-long-name"))
        .await
        .expect("profile");
    wait_count(&b, "#profile-tournaments", 1).await;
    b.execute(
        "document.querySelector('#profile-games').scrollIntoView({block: 'start'})",
        vec![],
    )
    .await
    .expect("script");
    let (scroll, width) = widths(&b).await;
    screenshot(&b, "phone-dark-profile-games").await;
    assert!(scroll <= width, "the profile is {scroll} px wide");
    // Logged out, the account page's two forms fit too.
    click(&b, "#account-link").await;
    click(&b, "#logout").await;
    wait_kept(&b, None).await;
    wait_count(&b, "#signup", 1).await;
    let (scroll, width) = widths(&b).await;
    screenshot(&b, "phone-dark-sign-up").await;
    assert!(scroll <= width, "the sign-up page is {scroll} px wide");
    b.close().await.expect("close");
}

/// A rated game from the lobby's form, between the page's account and
/// another account: the room says it is rated, the page wins, and both
/// ratings move (the page's up, the other's down). Against the house bot the
/// form refuses before sending.
#[tokio::test]
async fn a_logged_in_person_plays_a_rated_game_from_the_lobby() {
    let server = TestServer::start().await;
    let base = format!("http://{}", server.addr);
    let url = server.url();
    grundy_tests::account(&url, "ria").await;
    let sol = grundy_tests::account(&url, "sol").await;
    let driver = Driver::start().await;
    let b = driver.browser().await;
    b.goto(&format!("{base}/#/account")).await.expect("account");
    wait_count(&b, "#status[data-state=\"connected\"]", 1).await;
    log_in(&b, "ria", grundy_tests::PASSWORD).await;
    wait_text(&b, "#account-name", "ria").await;

    b.goto(&format!("{base}/#/")).await.expect("lobby");
    wait_count(&b, "#status[data-state=\"connected\"]", 1).await;
    select(&b, "#start", "spec").await;
    set_value(&b, "#spec", "nim 1 2").await;
    click(&b, "#rated").await;
    // The house bot plays no rated game: said in the form, nothing sent.
    select(&b, "#opponent", "perfect").await;
    click(&b, "#create-button").await;
    wait_text(&b, ".error", "rated games are between two accounts").await;
    select(&b, "#opponent", "").await;
    click(&b, "#create-button").await;
    b.wait()
        .at_most(WAIT)
        .for_element(css("#room-code"))
        .await
        .expect("the room opens");
    wait_text(&b, ".room-head", "rated").await;
    let room = room_id(&b).await;

    // Sol joins with his account and answers the page's first move.
    let mut c = grundy_tests::Client::connect_token(&url, &sol).await;
    let seated = c.request(json!({"type": "join", "room": room})).await;
    assert_eq!(seated["type"], "seated", "{seated}");
    let token = seated["token"].as_str().expect("token").to_string();
    let answer = tokio::spawn(async move {
        let moved = c.until("moved").await;
        assert_eq!(moved["seat"], 0, "{moved}");
        let ack = c
            .request(json!({"type": "move", "room": room, "token": token,
                            "move": {"heap": 0, "take": 1}}))
            .await;
        assert_eq!(ack["type"], "ack", "{ack}");
        c
    });
    let result = play_nim(&b, None).await.expect("the game ends");
    assert!(result.contains("You win"), "{result}");
    let mut c = answer.await.expect("sol answers");
    screenshot(&b, "rated-won").await;

    let ratings = c
        .request(json!({"type": "get_ratings", "game": "nim"}))
        .await;
    let rating = |name: &str| {
        ratings["ratings"]
            .as_array()
            .expect("ratings")
            .iter()
            .find(|r| r["player"] == name)
            .and_then(|r| r["rating"].as_f64())
            .unwrap_or_else(|| panic!("{name} unrated: {ratings}"))
    };
    assert!(
        rating("ria") > 1500.0 && rating("sol") < 1500.0,
        "{ratings}"
    );
    b.close().await.expect("close");
}
