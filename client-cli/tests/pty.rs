//! The real `grundy` binary driven through a pseudo-terminal, against a real
//! server started here on port 0 (or its own `--local` one).

mod common;

use std::time::Duration;

use common::{expect, grundy_pty, TestServer};

#[test]
fn a_person_loses_to_the_perfect_bot_from_a_p_position_then_replays() {
    let server = TestServer::start();
    let url = server.url();
    let mut p = grundy_pty(&[
        "play", "--server", &url, "--game", "nim 2 2", "--bot", "perfect", "--name", "ann",
    ]);
    expect(&mut p, "house-bot (perfect) sat down");
    expect(&mut p, "your move> ");
    // Garbage gets help.
    p.send_line("banana").expect("send");
    expect(&mut p, "is not a move or a command");
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
    expect(&mut p, "The match is over: you lost (by the rules).");
    let _ = expect(&mut p, "Replay it with `grundy replay ");
    let room = expect(&mut p, "`.");
    p.exp_eof().expect("play exits after the match");

    let mut r = grundy_pty(&["replay", &room, "--server", &url, "--all"]);
    expect(
        &mut r,
        "ann (seat 0) vs house-bot (perfect) (seat 1), 4 moves.",
    );
    expect(&mut r, "move 4 at");
    expect(&mut r, "house-bot (perfect) won (rules).");

    // Step by step with Enter, and stop with q.
    let mut r = grundy_pty(&["replay", &room, "--server", &url]);
    expect(&mut r, "Enter: next move");
    r.send_line("").expect("send");
    expect(&mut r, "ann played: take 1 from heap 0 (of 2)");
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
}

#[test]
fn two_people_with_a_spectator_and_a_server_restart() {
    let mut server = TestServer::start();
    let url = server.url();
    let mut a = grundy_pty(&[
        "play", "--server", &url, "--game", "nim 1 2", "--open", "--name", "alice",
    ]);
    // rexpect reads bytes as Latin-1: match ASCII text only.
    let (_, found) = a.exp_regex("Room [A-Z0-9]{6}").expect("room code");
    let code = found.trim_start_matches("Room ").to_string();
    let mut w = grundy_pty(&["watch", &code, "--server", &url]);
    expect(&mut w, "Watching room");
    let mut l = grundy_pty(&["lobby", "--server", &url]);
    expect(&mut l, &format!("{code}  open"));
    let mut b = grundy_pty(&["play", "--server", &url, "--join", &code, "--name", "bob"]);
    expect(&mut b, "you are seat 1");
    expect(&mut a, "bob sat down");
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
    expect(&mut a, "you won (by the rules)");
    expect(&mut b, "you lost (by the rules)");
    expect(&mut w, "alice won (by the rules)");
    w.exp_eof().expect("watch ends with the match");
}
