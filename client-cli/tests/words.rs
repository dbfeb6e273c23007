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
