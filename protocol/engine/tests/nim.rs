mod common;

use common::{check_against_oracle, parse};
use grundy_engine::{Analysis, Outcome, Position};
use proptest::prelude::*;
use serde_json::json;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(64)))]
    #[test]
    fn nim_matches_oracle(heaps in prop::collection::vec(0u64..5, 0..4)) {
        check_against_oracle(&json!({"game": "nim", "heaps": heaps}), true);
    }

    #[test]
    fn misere_nim_matches_oracle(heaps in prop::collection::vec(0u64..5, 0..4)) {
        check_against_oracle(&json!({"game": "nim", "heaps": heaps, "misere": true}), false);
    }
}

fn analyze(spec: serde_json::Value) -> Analysis {
    Analysis::of(&parse(&spec), 10_000)
}

#[test]
fn seed_examples() {
    // 3, 4, 5: take 2 from the 3-heap, leaving 1, 4, 5.
    let a = analyze(json!({"game": "nim", "heaps": [3, 4, 5]}));
    assert_eq!(a.outcome, Outcome::N);
    assert_eq!(
        serde_json::to_value(&a.best_move).unwrap(),
        json!({"heap": 0, "take": 2})
    );
    assert_eq!(a.winning_move_count, Some(1));
    // 7, 9, 12, 15: three winning moves, one of them 12 -> 1.
    let a = analyze(json!({"game": "nim", "heaps": [7, 9, 12, 15]}));
    assert_eq!(a.winning_move_count, Some(3));
    assert!(a
        .winning_moves
        .iter()
        .any(|m| serde_json::to_value(m).unwrap() == json!({"heap": 2, "take": 11})));
    // 13, 12, 8: take 9 from the 13-heap.
    let a = analyze(json!({"game": "nim", "heaps": [13, 12, 8]}));
    assert_eq!(
        serde_json::to_value(&a.best_move).unwrap(),
        json!({"heap": 0, "take": 9})
    );
    // hihocoder 1163, sample "3 2 1": the first player (Alice) loses, Bob wins.
    let a = analyze(json!({"game": "nim", "heaps": [3, 2, 1]}));
    assert_eq!(a.outcome, Outcome::P);
    assert_eq!(a.grundy, Some(0));
}

#[test]
fn misere_endgame() {
    // Three single stones: an odd count of 1-heaps is lost for the player to move.
    let a = analyze(json!({"game": "nim", "heaps": [1, 1, 1], "misere": true}));
    assert_eq!(a.outcome, Outcome::P);
    assert_eq!(a.grundy, None);
    // One big heap beside two single stones: reduce it to 1, leaving three.
    let a = analyze(json!({"game": "nim", "heaps": [5, 1, 1], "misere": true}));
    assert_eq!(
        serde_json::to_value(&a.best_move).unwrap(),
        json!({"heap": 0, "take": 4})
    );
    // One big heap beside one single stone: empty it, leaving one.
    let a = analyze(json!({"game": "nim", "heaps": [5, 1], "misere": true}));
    assert_eq!(
        serde_json::to_value(&a.best_move).unwrap(),
        json!({"heap": 0, "take": 5})
    );
    // Over: the player to move in misère wins when the last stone is gone.
    let a = analyze(json!({"game": "nim", "heaps": [0], "misere": true}));
    assert_eq!(a.outcome, Outcome::N);
    assert_eq!(a.best_move, None);
}

#[test]
fn huge_heaps_are_fine() {
    let big = 1u64 << 63;
    let a = analyze(json!({"game": "nim", "heaps": [big, big - 1, big - 1, big]}));
    assert_eq!(a.outcome, Outcome::P);
    let a = analyze(json!({"game": "nim", "heaps": [big, 5]}));
    assert_eq!(
        serde_json::to_value(&a.best_move).unwrap(),
        json!({"heap": 0, "take": big - 5})
    );
}

#[test]
fn bad_specs_name_the_field() {
    let cases = [
        (json!({"game": "nim"}), "heaps: is required but missing"),
        (
            json!({"game": "nim", "heaps": [1, -2]}),
            "heaps[1]: must not be negative, got -2",
        ),
        (
            json!({"game": "nim", "heaps": [1, 2.5]}),
            "heaps[1]: must be a whole number, got 2.5",
        ),
        (
            json!({"game": "nim", "heaps": [u64::MAX]}),
            "heaps[0]: must be at most 9223372036854775808",
        ),
        (
            json!({"game": "nim", "heaps": "3 4 5"}),
            "heaps: expected an array, got the string",
        ),
        (
            json!({"game": "nim", "heaps": [1], "misere": "yes"}),
            "misere: expected true or false",
        ),
        (
            json!({"game": "nim", "heaps": [1], "heap": 2}),
            "heap: unknown field",
        ),
        (json!({"game": "chess"}), "game: unknown game \"chess\""),
        (json!({"heaps": [1]}), "game: is required but missing"),
        (json!([1, 2]), "expected a JSON object, got an array of 2"),
    ];
    common::assert_specs_refused(&cases);
    let many = vec![1u64; 10_001];
    let err = Position::from_spec(&json!({"game": "nim", "heaps": many})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "heaps: has 10001 entries; the limit is 10000"
    );
}

#[test]
fn bad_moves_say_why() {
    let p = parse(&json!({"game": "nim", "heaps": [3, 0]}));
    let cases = [
        (
            json!({"heap": 2, "take": 1}),
            "no heap 2: there are 2 (numbered from 0)",
        ),
        (json!({"heap": 0, "take": 0}), "at least one stone"),
        (
            json!({"heap": 0, "take": 4}),
            "heap 0 has only 3 stones, cannot take 4",
        ),
        (json!({"heap": 1, "take": 1}), "heap 1 has only 0 stones"),
        (json!({"heap": 0}), "take: is required"),
        (json!({"heap": -1, "take": 1}), "heap: must not be negative"),
        (json!("take 3"), "expected a JSON object"),
    ];
    common::assert_moves_refused(&p, &cases);
    // One of a thing is said in the singular.
    let one = parse(&json!({"game": "nim", "heaps": [1]}));
    let cases = [
        (
            json!({"heap": 0, "take": 2}),
            "heap 0 has only 1 stone, cannot take 2",
        ),
        (
            json!({"heap": 1, "take": 1}),
            "no heap 1: there is only heap 0",
        ),
    ];
    common::assert_moves_refused(&one, &cases);
}
