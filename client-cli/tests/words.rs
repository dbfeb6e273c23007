//! The board's own words at the prompt: hints in the short form the prompt
//! reads, Wythoff's heaps named as the board names them, help that shows only
//! the moves the game allows. The real binary in a pseudo-terminal, each with
//! its own `--local` server.

mod common;

use common::{expect, grundy_pty};

#[test]
fn a_hint_says_what_to_type_in_the_short_form() {
    let mut p = grundy_pty(&["play", "--local", "--game", "nim 3 4 5", "--bot", "perfect"]);
    expect(&mut p, "your move> ");
    p.send_line("hint").expect("send");
    expect(
        &mut p,
        "Winning move: take 2 from heap 0 (of 3)   (type 0 2)",
    );
    p.send_line("0 2").expect("send");
    expect(&mut p, "You played: take 2 from heap 0 (of 3).");
    p.send_line("quit").expect("send");
    p.exp_eof().expect("exits");
}

#[test]
fn wythoff_hints_and_refusals_name_the_heaps_a_and_b_like_the_board() {
    let mut p = grundy_pty(&[
        "play",
        "--local",
        "--game",
        "wythoff 3 6",
        "--bot",
        "perfect",
    ]);
    expect(&mut p, "heap a  3");
    expect(&mut p, "heap b  6");
    expect(&mut p, "your move> ");
    p.send_line("hint").expect("send");
    // (3, 6) -> (3, 5), a P-position: one from heap b.
    expect(
        &mut p,
        "Winning move: take 1 from heap b (of 6)   (type b 1)",
    );
    p.send_line("a 4").expect("send");
    expect(
        &mut p,
        "illegal move: heap a has only 3 stones, cannot take 4",
    );
    p.send_line("quit").expect("send");
    p.exp_eof().expect("exits");
}

#[test]
fn help_at_the_prompt_shows_only_the_moves_the_rule_allows() {
    let mut p = grundy_pty(&[
        "play",
        "--local",
        "--game",
        "bash --k 3 5 6",
        "--bot",
        "perfect",
    ]);
    expect(&mut p, "your move> ");
    p.send_line("help").expect("send");
    expect(&mut p, "Moves (numbers as shown on the board):");
    let moves = expect(&mut p, "any move as raw JSON");
    assert!(
        moves.contains("2 3            take 3 from heap 2 (the rule: take 1 to 3)"),
        "{moves}"
    );
    assert!(
        !moves.contains("split"),
        "Bash never splits a heap: {moves}"
    );
    p.send_line("quit").expect("send");
    p.exp_eof().expect("exits");

    let mut p = grundy_pty(&[
        "play",
        "--local",
        "--game",
        "lasker 5 6",
        "--bot",
        "perfect",
    ]);
    expect(&mut p, "your move> ");
    p.send_line("help").expect("send");
    expect(&mut p, "Moves (numbers as shown on the board):");
    let moves = expect(&mut p, "any move as raw JSON");
    assert!(
        moves.contains("split 2 3 4    split heap 2 into heaps 3 and 4"),
        "{moves}"
    );
    assert!(!moves.contains("2 1 3 4"), "{moves}");
    p.send_line("quit").expect("send");
    p.exp_eof().expect("exits");
}

/// The bot's levels are said as the protocol and `grundy-bot` say them.
#[test]
fn play_help_says_the_levels_as_every_help_does() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_grundy"))
        .args(["play", "--help"])
        .output()
        .expect("run grundy");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("perfect, random, or 0-10"), "{help}");
    assert!(!help.contains("0-9") && !help.contains("to 9"), "{help}");
}
