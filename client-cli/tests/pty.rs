//! The real `grundy` binary driven through a pseudo-terminal, against a real
//! server started here on port 0 (or its own `--local` one).

mod common;

use std::time::Duration;

use common::{expect, grundy_pty, grundy_pty_in, TestServer};

#[test]
fn a_person_loses_to_the_perfect_bot_from_a_p_position_then_replays() {
    let server = TestServer::start();
    let url = server.url();
    let mut p = grundy_pty(&[
        "play", "--server", &url, "--game", "nim 2 2", "--bot", "perfect", "--name", "ann",
    ]);
    expect(&mut p, "house-bot (perfect) sat down");
    expect(&mut p, "your move> ");
    // Garbage gets help; arrow keys' escape sequences (a terminal without
    // the line editor) are not part of what was typed.
    p.send_line("\x1b[A\x1b[Dbanana").expect("send");
    expect(&mut p, "\"banana\" is not a move or a command");
    // One line, not the whole help: `help` gives that.
    let said = expect(&mut p, "your move> ");
    assert!(!said.contains("Commands:"), "{said}");
    p.send_line("help").expect("send");
    expect(&mut p, "take 3 stones from heap 2");
    // An illegal move is refused locally, with the engine's reason.
    p.send_line("0 5").expect("send");
    expect(
        &mut p,
        "illegal move: heap 0 has only 2 stones, cannot take 5",
    );
    p.send_line("7 1").expect("send");
    expect(&mut p, "illegal move: no heap 7");
    // The hint explains why the position is lost.
    p.send_line("hint").expect("send");
    expect(&mut p, "The player to move loses against perfect play");
    expect(&mut p, "nim-sum");
    p.send_line("0 1").expect("send");
    expect(&mut p, "You played: take 1 from heap 0 (of 2).");
    expect(
        &mut p,
        "house-bot (perfect) played: take 1 from heap 1 (of 2).",
    );
    expect(&mut p, "took 1");
    expect(&mut p, "your move> ");
    p.send_line("1 1").expect("send");
    expect(
        &mut p,
        "house-bot (perfect) played: take 1 from heap 0 (of 1).",
    );
    expect(
        &mut p,
        "The match is over: you lost: house-bot (perfect) made the last move.",
    );
    let _ = expect(&mut p, "Replay it with `grundy replay ");
    let room = expect(&mut p, " --server");
    // After the end: the moves, each that threw a win away marked (none:
    // the start was lost), then leave.
    expect(&mut p, "after the match> ");
    p.send_line("moves").expect("send");
    expect(&mut p, "   1. ann: take 1 from heap 0 (of 2)");
    expect(
        &mut p,
        "   4. house-bot (perfect): take 1 from heap 0 (of 1)",
    );
    p.send_line("").expect("send");
    p.exp_eof().expect("play exits after the match");

    let mut r = grundy_pty(&["replay", &room, "--server", &url, "--all"]);
    expect(
        &mut r,
        "ann (guest) (seat 0) vs house-bot (perfect) (seat 1), 4 moves.",
    );
    expect(&mut r, "move 4 of 4 at");
    expect(
        &mut r,
        "house-bot (perfect) won (by the rules). 0 moves threw a win away.",
    );

    // Step by step with Enter, and stop with q.
    let mut r = grundy_pty(&["replay", &room, "--server", &url]);
    expect(&mut r, "Enter or n: next move, b: back");
    r.send_line("").expect("send");
    expect(&mut r, "ann (guest) played: take 1 from heap 0 (of 2)");
    r.send_line("3").expect("send");
    expect(&mut r, "move 3 of 4");
    r.send_line("b").expect("send");
    expect(&mut r, "move 2 of 4");
    r.send_line("q").expect("send");
    r.exp_eof().expect("replay stops");
}

#[test]
fn local_mode_plays_the_house_bot_in_one_command() {
    let mut p = grundy_pty(&["play", "--local", "--game", "nim 3 4 5", "--bot", "perfect"]);
    expect(&mut p, "Started a local server");
    expect(&mut p, "heap 2  5");
    expect(&mut p, "your move> ");
    p.send_line("hint").expect("send");
    expect(&mut p, "Winning move: take 2 from heap 0 (of 3)");
    p.send_line("0 2").expect("send");
    expect(&mut p, "You played: take 2 from heap 0 (of 3).");
    expect(&mut p, "house-bot (perfect) played:");
    expect(&mut p, "your move> ");
    p.send_line("quit").expect("send");
    expect(&mut p, "the local server stops");
    p.exp_eof().expect("exits");

    // A local match over: no `grundy replay` pointing at a server about to go.
    let mut p = grundy_pty(&["play", "--local", "--game", "nim 1", "--bot", "perfect"]);
    expect(&mut p, "your move> ");
    p.send_line("0 1").expect("send");
    let end = expect(&mut p, "after the match> ");
    assert!(end.contains("you won: you made the last move"), "{end}");
    assert!(!end.contains("grundy replay"), "{end}");
    // The house bot accepts the offer at once; its first move may come
    // before or after this client is back in the new room.
    p.send_line("rematch").expect("send");
    expect(&mut p, "The rematch is on: room ");
    expect(&mut p, "you are seat 1 (you move second)");
    expect(&mut p, "you lost");
    expect(&mut p, "after the match> ");
    p.send_line("quit").expect("send");
    p.exp_eof().expect("exits");
}

/// A script types every move at once: each waits for its turn (the house
/// bot sitting down, then its reply) instead of being refused.
#[test]
fn a_script_pipes_its_moves_ahead_of_the_match() {
    let out = common::grundy_piped(
        &[
            "play",
            "--local",
            "--game",
            "subtraction --set 1 3",
            "--bot",
            "perfect",
        ],
        "0 1\n0 1\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(!text.contains("has not started"), "{text}");
    assert!(!text.contains("not your turn"), "{text}");
    assert!(
        text.contains("house-bot (perfect) played: take 1 from heap 0 (of 2)."),
        "{text}"
    );
    assert!(text.contains("you won: you made the last move"), "{text}");
}

/// A script's line read while the match was still on, and held for a turn
/// that never came (the house bot's reply ended the match), goes to the
/// prompt after the match.
#[test]
fn a_scripts_line_held_at_the_end_goes_to_the_after_match_prompt() {
    // Heaps 1 and 1: the script's one move loses; `moves` is read while the
    // bot's reply is still to come, so it is held.
    let out = common::grundy_piped(
        &["play", "--local", "--game", "nim 1 1", "--bot", "perfect"],
        "0 1\nmoves\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(text.contains("you lost"), "{text}");
    // The move list that `moves` prints: the second and last move.
    let after = text.split("Type `moves`").nth(1).unwrap_or_default();
    assert!(after.contains("   2. "), "{text}");
}

/// A script that opens a room for a person does not wait for one: the end
/// of its input leaves at once, the seat kept.
#[test]
fn a_script_in_a_room_open_for_a_person_leaves_at_its_end() {
    let server = TestServer::start();
    let url = server.url();
    let out = common::grundy_piped(
        &[
            "play", "--server", &url, "--game", "nim 3", "--open", "--name", "sol",
        ],
        "",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(text.contains("You left; your seat is kept"), "{text}");
}

#[test]
fn two_people_with_a_spectator_and_a_server_restart() {
    let mut server = TestServer::start();
    let url = server.url();
    let mut a = grundy_pty(&[
        "play", "--server", &url, "--game", "nim 1 2", "--open", "--name", "alice",
    ]);
    // rexpect reads bytes as Latin-1: match ASCII text only.
    let (_, found) = a.exp_regex("room [A-Z0-9]{6}").expect("room code");
    let code = found.trim_start_matches("room ").to_string();
    // The command a friend joins with names this server.
    expect(
        &mut a,
        &format!("A friend joins with:  grundy play --join {code} --server {url}"),
    );
    let mut w = grundy_pty(&["watch", &code, "--server", &url]);
    expect(&mut w, "Watching room");
    let mut l = grundy_pty(&["lobby", "--server", &url]);
    expect(&mut l, "CODE    STATE");
    expect(&mut l, &format!("{code}  open"));
    let mut b = grundy_pty(&["play", "--server", &url, "--join", &code, "--name", "bob"]);
    expect(&mut b, "you are seat 1");
    expect(&mut a, "bob (guest) sat down");
    expect(&mut a, "your move> ");
    // Not bob's turn: refused before anything is sent.
    b.send_line("0 1").expect("send");
    expect(&mut b, "It is not your turn");
    a.send_line("1 1").expect("send");
    expect(&mut w, "alice played: take 1 from heap 1 (of 2)");
    expect(&mut b, "alice played: take 1 from heap 1 (of 2)");
    expect(&mut b, "your move> ");

    // The server goes away and comes back: both players resume on their own.
    server.restart_in_place(Duration::from_millis(300));
    expect(&mut b, "Connection lost");
    expect(&mut b, "Reconnected: the match goes on.");
    expect(&mut a, "Reconnected: the match goes on.");
    expect(&mut w, "Reconnected: watching again.");
    b.send_line("0 1").expect("send");
    expect(&mut a, "bob played: take 1 from heap 0 (of 1)");
    expect(&mut a, "your move> ");
    a.send_line("1 1").expect("send");
    expect(&mut a, "you won: you made the last move");
    expect(&mut b, "you lost: alice (guest) made the last move");
    expect(&mut w, "alice (guest) won by making the last move");
    w.exp_eof().expect("watch ends with the match");

    // A rematch between people is an offer and an accept: the offer is
    // told to the other, and no room opens until both agree; then both play
    // the one new room, the seats swapped.
    expect(&mut a, "after the match> ");
    expect(&mut b, "after the match> ");
    let rooms_before = listed_rooms(&url);
    a.send_line("rematch").expect("send");
    expect(&mut a, "waiting for bob");
    expect(
        &mut b,
        "alice offers a rematch: type `rematch` to accept, `quit` to decline.",
    );
    assert_eq!(
        listed_rooms(&url),
        rooms_before,
        "no room before both agree"
    );
    b.send_line("rematch").expect("send");
    let (_, found) = a
        .exp_regex("The rematch is on: room [A-Z0-9]{6}")
        .expect("code");
    let code = found.rsplit(' ').next().unwrap_or_default().to_string();
    expect(&mut b, &format!("The rematch is on: room {code}."));
    expect(&mut a, "you are seat 1");
    expect(&mut b, "you are seat 0");
    expect(&mut b, "your move> ");
    b.send_line("0 1").expect("send");
    expect(&mut a, "bob played: take 1 from heap 0 (of 1)");
}

/// How many rooms `grundy lobby` lists (its lines that name a room's state),
/// as of now: the server's list may be up to half a second old.
fn listed_rooms(url: &str) -> usize {
    std::thread::sleep(Duration::from_millis(600));
    let out = common::grundy(&["lobby", "--server", url]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(" open ") || l.contains(" playing "))
        .count()
}

/// A rematch declined: the offerer is told, and both can leave.
#[test]
fn a_rematch_offer_declined_is_told_to_the_offerer() {
    let server = TestServer::start();
    let url = server.url();
    let mut a = grundy_pty(&[
        "play", "--server", &url, "--game", "nim 1", "--open", "--name", "alice",
    ]);
    let (_, found) = a.exp_regex("room [A-Z0-9]{6}").expect("room code");
    let code = found.trim_start_matches("room ").to_string();
    let mut b = grundy_pty(&["play", "--server", &url, "--join", &code, "--name", "bob"]);
    expect(&mut a, "your move> ");
    a.send_line("0 1").expect("send");
    expect(&mut a, "after the match> ");
    expect(&mut b, "after the match> ");
    b.send_line("rematch").expect("send");
    expect(&mut a, "bob offers a rematch");
    a.send_line("quit").expect("send");
    a.exp_eof().expect("alice leaves");
    expect(&mut b, "alice declined the rematch.");
    b.send_line("quit").expect("send");
    b.exp_eof().expect("bob leaves");
}

/// What the player is shown of their own clock in a status line, in ms.
fn shown_clock(line: &str) -> u64 {
    let text = line
        .split("you ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no clock of yours in {line:?}"));
    let (m, s) = text
        .split_once(':')
        .unwrap_or_else(|| panic!("no m:ss clock in {text:?}"));
    (m.parse::<u64>().expect("minutes") * 60 + s.parse::<u64>().expect("seconds")) * 1000
}

// Issue 17, item 1: Ctrl-C, a second `--join`, a closed terminal: the seat
// is kept on disk and comes back.
#[test]
fn ctrl_c_or_a_closed_terminal_keeps_the_seat_and_resume_comes_back() {
    let server = TestServer::start();
    let url = server.url();
    let (alice_home, bob_home) = (
        tempfile::tempdir().expect("dir"),
        tempfile::tempdir().expect("dir"),
    );
    let mut a = grundy_pty_in(
        alice_home.path(),
        &[
            "play",
            "--server",
            &url,
            "--game",
            "wythoff 3 5",
            "--open",
            "--name",
            "alice",
        ],
    );
    let (_, found) = a.exp_regex("room [A-Z0-9]{6}").expect("room code");
    let code = found.trim_start_matches("room ").to_string();
    let join = ["play", "--server", &url, "--join", &code, "--name", "bob"];
    let mut b = grundy_pty_in(bob_home.path(), &join);
    expect(&mut b, "you are seat 1");
    expect(
        &mut b,
        &format!("come back with:  grundy play --resume {code} --server {url}"),
    );
    b.send_control('c').expect("ctrl-c");
    expect(&mut b, "your seat is kept");
    b.exp_eof().expect("bob's client exits");
    expect(&mut a, "bob lost their connection");

    // Joining again comes back to the kept seat instead of "both seats are taken".
    let mut b = grundy_pty_in(bob_home.path(), &join);
    expect(
        &mut b,
        &format!("You have a seat in room {code}: coming back to it."),
    );
    expect(&mut b, "you are seat 1");
    expect(&mut a, "bob is back");
    a.send_line("a 1").expect("send");
    expect(&mut b, "alice played: take 1 from heap ");
    // The terminal closes (the process is killed): the seat is still kept.
    drop(b);
    let mut b = grundy_pty_in(bob_home.path(), &["play", "--server", &url, "--resume"]);
    expect(&mut b, &format!("Coming back to Wythoff in room {code}."));
    expect(&mut b, "your move> ");
    b.send_line("quit").expect("send");
    b.exp_eof().expect("exits");

    // `grundy games` lists the unfinished seat with the command to come back.
    let mut g = grundy_pty_in(bob_home.path(), &["games"]);
    expect(&mut g, "Unfinished");
    expect(
        &mut g,
        &format!("grundy play --resume {code} --server {url}"),
    );
    g.exp_eof().expect("exits");
}

// Issue 17, item 2: no silent private server for a game others must reach.
#[test]
fn a_server_that_does_not_answer_is_an_error_not_a_private_server() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
    let dead = format!("ws://{}", free.local_addr().expect("addr"));
    drop(free);
    let run = |args: &[&str], env: Option<&str>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_grundy"));
        cmd.args(args)
            .env("NO_COLOR", "1")
            .env("XDG_CONFIG_HOME", common::shared_config())
            .env_remove("GRUNDY_SERVER")
            .stdin(std::process::Stdio::null());
        if let Some(url) = env {
            cmd.env("GRUNDY_SERVER", url);
        }
        cmd.output().expect("run grundy")
    };
    for (args, env) in [
        (
            vec![
                "play",
                "--game",
                "nim 3",
                "--open",
                "--server",
                dead.as_str(),
            ],
            None,
        ),
        (
            vec![
                "play",
                "--game",
                "nim 3",
                "--bot",
                "perfect",
                "--server",
                dead.as_str(),
            ],
            None,
        ),
        (
            vec!["play", "--game", "nim 3", "--open"],
            Some(dead.as_str()),
        ),
        (vec!["play", "--join", "ABC234"], Some(dead.as_str())),
    ] {
        let out = run(&args, env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {out:?}");
        assert!(
            stderr.contains(&format!("no server answers at {dead}")),
            "{stderr}"
        );
        assert!(stderr.contains("--local"), "{stderr}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("join"),
            "{out:?}"
        );
    }
    // An empty name, and one that reads as the house bot's, are refused.
    let out = run(
        &[
            "play", "--local", "--game", "nim 3", "--bot", "perfect", "--name", " ",
        ],
        None,
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a name cannot be empty"),
        "{out:?}"
    );
    let out = run(
        &[
            "play",
            "--local",
            "--game",
            "nim 3",
            "--bot",
            "perfect",
            "--name",
            "House_Bot",
        ],
        None,
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("reserved"),
        "{out:?}"
    );
    for args in [
        ["play", "--local", "--open", "--game", "nim 3"],
        ["play", "--local", "--join", "ABC234", "--hints"],
    ] {
        let out = run(&args, None);
        assert!(!out.status.success(), "{args:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("cannot be used with"),
            "{out:?}"
        );
    }
    // A server named without its scheme is the WebSocket on that address.
    let server = TestServer::start();
    let bare = server.url().trim_start_matches("ws://").to_string();
    let mut p = grundy_pty(&["play", "--server", &bare, "--game", "nim 3", "--open"]);
    expect(&mut p, "A friend joins with:  grundy play --join ");
    expect(&mut p, &format!(" --server {}", server.url()));
    p.send_line("quit").expect("send");
    p.exp_eof().expect("exits");
}

// Issue 17, item 4: after a restart, the player's clock is the server's,
// not the client's own count run on through the time the server was away.
#[test]
fn the_clock_after_a_reconnect_is_the_servers() {
    let mut server = TestServer::start();
    let url = server.url();
    let began = std::time::Instant::now();
    let mut p = grundy_pty(&[
        "play", "--server", &url, "--game", "nim 5 6", "--bot", "perfect", "--clock", "3+0",
    ]);
    expect(&mut p, "your move (you ");
    let down = Duration::from_secs(6);
    server.restart_in_place(down);
    expect(&mut p, "Reconnected: the match goes on.");
    let before = expect(&mut p, "your move (you ");
    let elapsed = began.elapsed();
    let line = before
        .lines()
        .find(|l| l.contains("[room"))
        .unwrap_or_else(|| panic!("no status line in {before:?}"));
    // The server charged at most the time it was up (the test's whole time
    // but the downtime); a client that counted on would show 6 s less.
    let floor = 180_000 - (elapsed - down).as_millis() as u64 - 2_000;
    assert!(
        shown_clock(line) >= floor,
        "{line:?} shows less than {floor} ms"
    );
    p.send_line("quit").expect("send");
}

// Issue 17, items 11 and 13: hints only where the room allows them, and both
// players told; resign asks first; the board drawn once at the start.
#[test]
fn hints_are_the_rooms_and_resign_asks_first() {
    let server = TestServer::start();
    let url = server.url();
    let mut a = grundy_pty(&[
        "play", "--server", &url, "--game", "nim 1 2", "--open", "--name", "alice",
    ]);
    let (_, found) = a.exp_regex("room [A-Z0-9]{6}").expect("room code");
    let code = found.trim_start_matches("room ").to_string();
    expect(&mut a, "No hints in this match.");
    let start = expect(&mut a, "waiting for a second player");
    assert_eq!(start.matches("heap 1").count(), 1, "drawn once: {start}");
    let mut b = grundy_pty(&["play", "--server", &url, "--join", &code, "--name", "bob"]);
    expect(&mut b, "No hints in this match.");
    expect(&mut a, "your move> ");
    a.send_line("hint").expect("send");
    expect(
        &mut a,
        "No hints in this match: the room was opened without them",
    );
    a.send_line("resign").expect("send");
    expect(&mut a, "Type `resign` again (or `yes`) to confirm");
    a.send_line("moves").expect("send");
    expect(&mut a, "No moves yet.");
    a.send_line("resign").expect("send");
    expect(&mut a, "Type `resign` again (or `yes`) to confirm");
    a.send_line("yes").expect("send");
    expect(&mut a, "you lost (by resignation)");
    expect(&mut b, "you won (by resignation)");

    let mut h = grundy_pty(&[
        "play", "--server", &url, "--game", "nim 1 2", "--open", "--hints", "--name", "carol",
    ]);
    let (_, found) = h.exp_regex("room [A-Z0-9]{6}").expect("room code");
    let code = found.trim_start_matches("room ").to_string();
    expect(&mut h, "Hints are on for both players");
    let mut d = grundy_pty(&["play", "--server", &url, "--join", &code, "--name", "dan"]);
    expect(&mut d, "Hints are on for both players");
    expect(&mut h, "your move> ");
    h.send_line("hint").expect("send");
    expect(&mut h, "Winning move: take 1 from heap 1 (of 2)");
    // Before any move, a player may call the match off.
    h.send_line("abort").expect("send");
    expect(&mut d, "no winner (aborted)");
}

// Issue 17, item 12: a warning of low time before the flag falls.
#[test]
fn low_time_is_told_before_the_flag_falls() {
    let server = TestServer::start();
    let url = server.url();
    let mut p = grundy_pty(&[
        "play", "--server", &url, "--game", "nim 5 6", "--bot", "perfect", "--clock", "15s+0",
    ]);
    expect(&mut p, "first move must come within 30 s");
    expect(&mut p, "your move (you ");
    expect(&mut p, "left on your clock.");
    expect(&mut p, "you lost (on time)");
}

// A person's whole path: the bot with hints,
// Ctrl-C and coming back, a move that throws the win away, the replay marking
// it, the past games; then a friend joining by the printed command.
#[test]
fn a_persons_whole_path() {
    let server = TestServer::start();
    let url = server.url();
    let home = tempfile::tempdir().expect("dir");
    let mut p = grundy_pty_in(
        home.path(),
        &[
            "play", "--server", &url, "--game", "nim 1 2", "--bot", "perfect", "--name", "eve",
        ],
    );
    expect(&mut p, "Hints are on for both players");
    expect(&mut p, "your move> ");
    p.send_line("hint").expect("send");
    expect(&mut p, "Winning move: take 1 from heap 1 (of 2)");
    p.send_control('c').expect("ctrl-c");
    expect(&mut p, "your seat is kept");
    p.exp_eof().expect("exits");
    let mut p = grundy_pty_in(home.path(), &["play", "--server", &url, "--resume"]);
    expect(&mut p, "Coming back to Nim");
    expect(&mut p, "your move> ");
    // Taking all of heap 1 leaves 1: the bot takes it and wins.
    p.send_line("1 2").expect("send");
    expect(&mut p, "you lost: house-bot (perfect) made the last move");
    let _ = expect(&mut p, "Replay it with `grundy replay ");
    let room = expect(&mut p, " --server");
    expect(&mut p, "after the match> ");
    p.send_line("moves").expect("send");
    expect(&mut p, "1. eve: take 2 from heap 1 (of 2)   ");
    expect(&mut p, " threw the win away");
    p.send_line("quit").expect("send");
    p.exp_eof().expect("exits");

    let mut r = grundy_pty_in(home.path(), &["replay", &room, "--server", &url, "--all"]);
    expect(&mut r, "move 1 of 2");
    expect(&mut r, "threw the win away");
    expect(&mut r, "1 move threw a win away.");
    let mut g = grundy_pty_in(home.path(), &["games", "--server", &url]);
    expect(&mut g, "DATE");
    expect(&mut g, "Nim");
    expect(&mut g, "house-bot (perfect)");
    expect(&mut g, "lost");
    expect(&mut g, &format!("grundy replay {room} --server {url}"));

    // A friend joins by the command printed, word for word.
    let mut host = grundy_pty_in(
        home.path(),
        &[
            "play", "--server", &url, "--game", "kayles 4", "--open", "--name", "eve",
        ],
    );
    let _ = expect(&mut host, "A friend joins with:  ");
    let command = expect(&mut host, "\r\n");
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[..2], ["grundy", "play"], "{command}");
    let mut args = words[1..].to_vec();
    args.extend(["--name", "fay"]);
    let mut friend = grundy_pty(&args);
    expect(&mut friend, "you are seat 1");
    expect(&mut host, "fay (guest) sat down");
}

/// A sum of different games, and misère Kayles, against the perfect bot,
/// played to the end by following the hints: every hint names the move as
/// typed, and typing it wins.
#[test]
fn a_sum_of_games_and_misere_kayles_are_won_by_following_the_hints() {
    let moves = win_by_the_hints("nim 3 5 + kayles 7 + wythoff 3 5", Some("part 1: kayles 7"));
    assert!(
        moves.contains("1. player: in part 0 (nim 3 5): take 4 from heap 1 (of 5)"),
        "{moves}"
    );
    let moves = win_by_the_hints("kayles --misere 4 6 9", None);
    assert!(moves.contains("1. player: "), "{moves}");
}

/// Plays `game` against the perfect bot, typing each hint's move, until the
/// match ends with "you won"; `table_row`: a row the first hint's binary table
/// shows. Returns the moves as `moves` lists them.
fn win_by_the_hints(game: &str, table_row: Option<&str>) -> String {
    use rexpect::ReadUntil;
    let mut p = grundy_pty(&["play", "--local", "--game", game, "--bot", "perfect"]);
    expect(&mut p, "your move> ");
    for turn in 0.. {
        assert!(turn < 60, "{game}: the game never ended");
        p.send_line("hint").expect("send");
        let _ = expect(&mut p, "Winning move: ");
        let _ = expect(&mut p, "(type ");
        let typed = expect(&mut p, ")");
        let rest = expect(&mut p, "your move> ");
        if let (0, Some(row)) = (turn, table_row) {
            assert!(rest.contains(row), "{game}: {rest}");
        }
        p.send_line(&typed).expect("send");
        let (before, seen) = p
            .exp_any(vec![
                ReadUntil::String("your move> ".into()),
                ReadUntil::String("after the match> ".into()),
            ])
            .expect("the bot answers or the match ends");
        if seen.contains("after the match") {
            assert!(before.contains("you won: "), "{game}: {before}");
            break;
        }
    }
    p.send_line("moves").expect("send");
    let moves = expect(&mut p, "after the match> ");
    p.send_line("quit").expect("send");
    p.exp_eof().expect("exits");
    moves
}
