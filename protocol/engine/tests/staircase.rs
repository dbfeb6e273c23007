mod common;

use common::{check_against_oracle, parse};
use grundy_engine::{Analysis, Outcome, Position, Rules, Strategy};
use proptest::prelude::*;
use serde_json::{json, Value};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(64)))]
    #[test]
    fn staircase_matches_oracle(cells in prop::collection::btree_set(1u64..=8, 0..=4)) {
        // The spec's order is free: give it reversed.
        let pieces: Vec<u64> = cells.into_iter().rev().collect();
        check_against_oracle(&json!({"game": "staircase", "pieces": pieces}), true);
    }
}

fn analyze(spec: Value) -> Analysis {
    Analysis::of(&parse(&spec), 10_000)
}

fn to_json<T: serde::Serialize>(m: &T) -> Value {
    serde_json::to_value(m).unwrap()
}

#[test]
fn poj_1704_samples() {
    // POJ 1704's sample: "1 2 3" -> Bob (the second player) wins.
    let a = analyze(json!({"game": "staircase", "pieces": [1, 2, 3]}));
    assert_eq!(a.outcome, Outcome::P);
    assert_eq!(a.best_move, None);
    // "1 5 6 7 9 12 14 17" -> Georgia wins: pairs (1,5) (6,7) (9,12) (14,17),
    // gaps 3, 0, 2, 2.
    let a = analyze(json!({"game": "staircase", "pieces": [1, 5, 6, 7, 9, 12, 14, 17]}));
    assert_eq!(a.outcome, Outcome::N);
    assert_eq!(a.grundy, Some(3));
}

#[test]
fn winning_moves_shrink_and_grow_gaps() {
    // Pairs (0, 3) gap 2 and (4, 6) gap 1: nim-sum 3. Shrink the (4, 6) gap?
    // 1 ^ 3 = 2 > 1, so instead move 4 left to 3 ... which is taken; gap (0,3):
    // 2 ^ 3 = 1, move 3 -> 2.
    let a = analyze(json!({"game": "staircase", "pieces": [6, 3, 4]}));
    assert_eq!(a.grundy, Some(3));
    let got: Vec<Value> = a.winning_moves.iter().map(to_json).collect();
    assert_eq!(got, vec![json!({"from": 3, "to": 2})]);
    // Pairs (2, 3) gap 0 and (9, 10) gap 0 ... plus (0, 1)? No: four pieces
    // 1, 5, 9, 10: pairs (1, 5) gap 3 and (9, 10) gap 0. Winning: 5 -> 2, or
    // grow (9, 10) to 3 by moving 9 to 6.
    let a = analyze(json!({"game": "staircase", "pieces": [1, 5, 9, 10]}));
    let mut got: Vec<Value> = a.winning_moves.iter().map(to_json).collect();
    got.sort_by_key(|v| v["from"].as_u64());
    assert_eq!(
        got,
        vec![json!({"from": 5, "to": 2}), json!({"from": 9, "to": 6})]
    );
}

#[test]
fn huge_cells_are_fine() {
    let big = 1_000_000_000_000_000u64;
    let p = parse(&json!({"game": "staircase", "pieces": [big, big - 7, 1]}));
    // Pairs (0, 1) gap 0, (big-7, big) gap 6.
    assert_eq!(p.grundy(), Some(6));
    let m = p.best_move().unwrap();
    assert_eq!(to_json(&m), json!({"from": big, "to": big - 6}));
    // A P-position still has a patient move.
    let p = parse(&json!({"game": "staircase", "pieces": [big - 1, big]}));
    assert_eq!(p.outcome(), Outcome::P);
    // The piece on `big` is blocked; the other steps one cell left.
    assert_eq!(
        to_json(&p.best_move().unwrap()),
        json!({"from": big - 1, "to": big - 2})
    );
}

#[test]
fn at_the_limits() {
    // 1000 pieces 10^12 apart: 500 pairs, every gap 10^12 - 1, nim-sum 0.
    let step = 1_000_000_000_000u64;
    let pieces: Vec<u64> = (1..=1000u64).map(|i| i * step).collect();
    let p = parse(&json!({"game": "staircase", "pieces": pieces}));
    assert_eq!(p.grundy(), Some(0));
    let m = p.best_move().unwrap();
    assert!(p.check(&m).is_ok());
    // Move the last pair's left piece 5 cells left: that gap is step + 4, the
    // other 499 still step - 1. Its right piece follows it to shrink it back.
    let mut pieces = pieces;
    pieces[998] -= 5;
    let p = parse(&json!({"game": "staircase", "pieces": pieces}));
    let x = (step - 1) ^ (step + 4);
    assert_eq!(p.grundy(), Some(x));
    assert_eq!(
        to_json(&p.best_move().unwrap()),
        json!({"from": 1000 * step, "to": 1000 * step - 5})
    );
    // The other 499 pairs win by growing their gap to step + 4: every left
    // piece moves 5 cells left.
    let w = p.winning_moves(10_000);
    assert!(w.complete);
    assert_eq!(w.moves.len(), 500);
    // 999 pieces: the leftmost pairs with cell 0, 500 gaps of step - 1.
    let pieces: Vec<u64> = (1..=999u64).map(|i| i * step).collect();
    assert_eq!(
        parse(&json!({"game": "staircase", "pieces": pieces})).grundy(),
        Some(0)
    );
}

#[test]
fn bad_specs_name_the_field() {
    let cases = [
        (
            json!({"game": "staircase"}),
            "pieces: is required but missing",
        ),
        (
            json!({"game": "staircase", "pieces": [3, 0]}),
            "pieces[1]: cell 0 is off the strip",
        ),
        (
            json!({"game": "staircase", "pieces": [3, 5, 3]}),
            "pieces[2]: cell 3 already holds a piece (pieces[0])",
        ),
        (
            json!({"game": "staircase", "pieces": [1_000_000_000_000_001u64]}),
            "pieces[0]: must be at most 1000000000000000",
        ),
        (
            json!({"game": "staircase", "pieces": [-1]}),
            "pieces[0]: must not be negative",
        ),
        (
            json!({"game": "staircase", "pieces": 3}),
            "pieces: expected an array",
        ),
        (
            json!({"game": "staircase", "pieces": [1], "misere": true}),
            "misere",
        ),
    ];
    common::assert_specs_refused(&cases);
    let many: Vec<u64> = (1..=1001).collect();
    let err = Position::from_spec(&json!({"game": "staircase", "pieces": many})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pieces: has 1001 entries; the limit is 1000"
    );
}

#[test]
fn bad_moves_say_why() {
    let p = parse(&json!({"game": "staircase", "pieces": [2, 5]}));
    let cases = [
        (json!({"from": 4, "to": 3}), "there is no piece on cell 4"),
        (json!({"from": 5, "to": 5}), "pieces move left"),
        (json!({"from": 5, "to": 9}), "pieces move left"),
        (
            json!({"from": 5, "to": 2}),
            "the piece on cell 2 is in the way",
        ),
        (
            json!({"from": 5, "to": 1}),
            "the piece on cell 2 is in the way",
        ),
        (json!({"from": 2, "to": 0}), "cell 0 is off the strip"),
        (json!({"from": 5}), "to: is required"),
        (json!({"from": -5, "to": 1}), "from: must not be negative"),
        (
            json!({"from": u64::MAX, "to": 1}),
            "no piece on cell 18446744073709551615",
        ),
        (json!([5, 3]), "expected a JSON object"),
    ];
    common::assert_moves_refused(&p, &cases);
    let over = parse(&json!({"game": "staircase", "pieces": [2, 1]}));
    let err = over
        .parse_move(&json!({"from": 2, "to": 1}))
        .and_then(|m| over.check(&m));
    assert_eq!(err.unwrap_err().to_string(), "the game is over");
}

#[test]
fn to_json_is_sorted_spec() {
    let mut p = parse(&json!({"game": "staircase", "pieces": [9, 4, 6]}));
    let m = p.parse_move(&json!({"from": 9, "to": 7})).unwrap();
    p.play(&m).unwrap();
    assert_eq!(
        p.to_json(),
        json!({"game": "staircase", "pieces": [4, 6, 7]})
    );
}
