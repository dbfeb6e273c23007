mod common;

use common::{check_against_oracle, parse};
use grundy_engine::games::moore::Moore;
use grundy_engine::oracle::Solver;
use grundy_engine::{Analysis, Outcome, Position, Rules, Status, Strategy};
use proptest::prelude::*;
use serde_json::{json, Value};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(48)))]
    #[test]
    fn moore_matches_oracle(heaps in prop::collection::vec(0u64..5, 0..5), k in 1u32..=3) {
        check_against_oracle(&json!({"game": "moore", "heaps": heaps, "k": k}), k == 1);
    }

    #[test]
    fn bounded_moore_matches_oracle(
        heaps in prop::collection::vec(0u64..6, 0..5),
        k in 1u32..=3,
        max_take in 1u64..=3,
    ) {
        let spec = json!({"game": "moore", "heaps": heaps, "k": k, "max_take": max_take});
        // Specs outside the proven cases are refused (see the test below).
        prop_assume!(Position::from_spec(&spec).is_ok());
        check_against_oracle(&spec, k == 1);
    }

    #[test]
    fn best_move_wins_on_medium_positions(
        heaps in prop::collection::vec(prop_oneof![0u64..8, 0u64..u64::MAX >> 1], 1..40),
        k in 1u32..6,
    ) {
        let p = parse(&json!({"game": "moore", "heaps": heaps, "k": k}));
        prop_assume!(p.status() == Status::Ongoing);
        let m = p.best_move().expect("a move");
        let mut q = p.clone();
        q.play(&m).unwrap();
        if p.outcome() == Outcome::N {
            prop_assert_eq!(q.outcome(), Outcome::P);
        }
    }
}

fn analyze(spec: Value) -> Analysis {
    Analysis::of(&parse(&spec), 10_000)
}

fn json_of<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

#[test]
fn moore_examples() {
    // k = 2: (1, 1, 1) has three ones in bit 0: P.
    let r = analyze(json!({"game": "moore", "heaps": [1, 1, 1], "k": 2}));
    assert_eq!(r.outcome, Outcome::P);
    assert_eq!(r.grundy, Some(0));
    // (3, 5, 6) = 011, 101, 110: two ones in every bit, so P for k = 1 (Nim)
    // but N for k = 2.
    let r = analyze(json!({"game": "moore", "heaps": [3, 5, 6], "k": 1}));
    assert_eq!(r.outcome, Outcome::P);
    let r = analyze(json!({"game": "moore", "heaps": [3, 5, 6], "k": 2}));
    assert_eq!(r.outcome, Outcome::N);
    assert_eq!(r.grundy, None);
    let count = r.winning_move_count.expect("small position: complete");
    assert!(count >= 1);
    // k at least the number of heaps: P only when everything is gone, and the
    // one winning move empties every heap.
    let r = analyze(json!({"game": "moore", "heaps": [3, 0, 5, 6], "k": 3}));
    assert_eq!(r.winning_moves.len(), 1);
    assert_eq!(
        json_of(&r.best_move),
        json!({"take": [[0, 3], [2, 5], [3, 6]]})
    );
    // k = 1 is Nim: the Grundy value is the nim-sum.
    let r = analyze(json!({"game": "moore", "heaps": [3, 4, 5], "k": 1}));
    assert_eq!(r.grundy, Some(2));
    assert_eq!(json_of(&r.best_move), json!({"take": [[0, 2]]}));
}

#[test]
fn football_game() {
    // POJ 2315 with k = 1: a sum of Bash games, heaps mod (L + 1) xored.
    // L = 2: (4, 5) -> residues (1, 2): N; the Grundy value is 3.
    let r = analyze(json!({"game": "moore", "heaps": [4, 5], "k": 1, "max_take": 2}));
    assert_eq!(r.grundy, Some(3));
    // (3, 6): residues (0, 0): P.
    let r = analyze(json!({"game": "moore", "heaps": [3, 6], "k": 1, "max_take": 2}));
    assert_eq!(r.outcome, Outcome::P);
    // (5, 1) with L = 2, residues (2, 1): heap 0 to residue 1 (take 1); heap 1
    // to residue 2 would need a wrap (take 2) from a heap of 1. One move.
    let r = analyze(json!({"game": "moore", "heaps": [5, 1], "k": 1, "max_take": 2}));
    assert_eq!(
        r.winning_moves.iter().map(json_of).collect::<Vec<_>>(),
        vec![json!({"take": [[0, 1]]})]
    );
    // (5, 4), L = 2: residues (2, 1). Heap 1: 4 -> 2 (take 2, residue 2) wraps up.
    let r = analyze(json!({"game": "moore", "heaps": [5, 4], "k": 1, "max_take": 2}));
    let moves: Vec<Value> = r.winning_moves.iter().map(json_of).collect();
    assert_eq!(
        moves,
        vec![json!({"take": [[0, 1]]}), json!({"take": [[1, 2]]})]
    );
    // k = 2 with at most 3 non-empty heaps: all residues equal (nonzero) is P.
    let r = analyze(json!({"game": "moore", "heaps": [4, 7, 10], "k": 2, "max_take": 2}));
    assert_eq!(r.outcome, Outcome::P);
}

#[test]
fn max_take_reduction_is_wrong_beyond_k_plus_one_heaps() {
    // The reason such specs are refused: with k = 2, L = 1 the residues of
    // (2, 1, 1, 1) are (0, 1, 1, 1), "P" by the reduction, yet the player to
    // move wins by taking one stone from heaps 0 and 1, leaving (1, 0, 1, 1).
    let game = Moore {
        heaps: vec![2, 1, 1, 1],
        k: 2,
        max_take: Some(1),
    };
    assert!(game.is_p());
    let truth = Solver::new().solve(&game).unwrap();
    assert!(truth.to_move_wins);
    let err = Position::from_spec(
        &json!({"game": "moore", "heaps": [2, 1, 1, 1], "k": 2, "max_take": 1}),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("max_take: with k = 2, 4 non-empty heaps"),
        "{err}"
    );
    // Allowed: max_take at least the largest heap (the bound never binds).
    assert!(Position::from_spec(
        &json!({"game": "moore", "heaps": [2, 1, 1, 1], "k": 2, "max_take": 2})
    )
    .is_ok());
}

#[test]
fn large_positions() {
    // 1000 heaps near 2^63, k = 5: six copies of every value is P.
    let base: Vec<u64> = (0..1000u64).map(|i| (1 << 63) - (i / 6) * 7919).collect();
    let six = |v: &Vec<u64>| {
        v.iter()
            .take(996)
            .copied()
            .chain([3, 3, 3, 3])
            .collect::<Vec<u64>>()
    };
    let heaps = six(&base);
    let mut r = analyze(json!({"game": "moore", "heaps": heaps, "k": 5}));
    assert_eq!(r.outcome, Outcome::N, "four 3s are not a multiple of six");
    for heaps in [
        {
            let mut h = heaps.clone();
            h[996] = 0;
            h[997] = 0;
            h[998] = 0;
            h[999] = 0;
            h
        },
        {
            let mut h = heaps.clone();
            h[0] -= 12345;
            h[500] -= 1 << 40;
            h
        },
    ] {
        let spec = json!({"game": "moore", "heaps": heaps, "k": 5});
        let p = parse(&spec);
        r = Analysis::of(&p, 10);
        let best = r.best_move.clone().expect("a move");
        let mut q = p.clone();
        q.play(&best).unwrap();
        if r.outcome == Outcome::N {
            assert_eq!(q.outcome(), Outcome::P);
            assert!(
                r.winning_move_count.is_none(),
                "large: listing is marked incomplete"
            );
        }
    }
    // k = 1 with a bound at the limits: exact and complete.
    let heaps: Vec<u64> = (0..1000u64).map(|i| (1 << 63) - i * 1_000_003).collect();
    let p = parse(&json!({"game": "moore", "heaps": heaps, "k": 1, "max_take": 1_000_000}));
    let r = Analysis::of(&p, 10_000);
    assert!(r.winning_move_count.is_some());
    for m in &r.winning_moves {
        let mut q = p.clone();
        q.play(m).unwrap();
        assert_eq!(q.outcome(), Outcome::P);
    }
}

#[test]
fn bad_specs_name_the_field() {
    let cases = [
        (
            json!({"game": "moore", "heaps": [1]}),
            "k: is required but missing",
        ),
        (
            json!({"game": "moore", "heaps": [1], "k": 0}),
            "k: must be at least 1",
        ),
        (
            json!({"game": "moore", "heaps": [1], "k": 4294967296u64}),
            "k: must be at most 4294967295",
        ),
        (
            json!({"game": "moore", "heaps": [1], "k": 1, "max_take": 0}),
            "max_take: must be at least 1",
        ),
        (
            json!({"game": "moore", "heaps": [1], "k": 1, "max_take": "2"}),
            "max_take: expected a whole number",
        ),
        (
            json!({"game": "moore", "heaps": [1, -1], "k": 1}),
            "heaps[1]: must not be negative",
        ),
        (json!({"game": "moore", "k": 1}), "heaps: is required"),
        (
            json!({"game": "moore", "heaps": [1], "k": 1, "maxtake": 2}),
            "maxtake: unknown field",
        ),
        (
            json!({"game": "moore", "heaps": [3, 3, 3, 3], "k": 2, "max_take": 2}),
            "max_take: with k = 2, 4 non-empty heaps",
        ),
    ];
    common::assert_specs_refused(&cases);
    let many = vec![1u64; 1001];
    let err = Position::from_spec(&json!({"game": "moore", "heaps": many, "k": 1})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "heaps: has 1001 entries; the limit is 1000"
    );
}

#[test]
fn bad_moves_say_why() {
    let p = parse(&json!({"game": "moore", "heaps": [3, 0, 5], "k": 2, "max_take": 4}));
    let cases = [
        (json!({"take": []}), "at least one heap"),
        (
            json!({"take": [[0, 1], [1, 1], [2, 1]]}),
            "at most k = 2 heaps, this one names 3",
        ),
        (json!({"take": [[0, 1], [0, 2]]}), "heap 0 is named twice"),
        (
            json!({"take": [[3, 1]]}),
            "no heap 3: there are 3 (numbered from 0)",
        ),
        (
            json!({"take": [[0, 0]]}),
            "the amount for heap 0 must be at least 1",
        ),
        (
            json!({"take": [[1, 1]]}),
            "heap 1 has only 0 stones, cannot take 1",
        ),
        (
            json!({"take": [[0, 4]]}),
            "heap 0 has only 3 stones, cannot take 4",
        ),
        (
            json!({"take": [[2, 5]]}),
            "at most max_take = 4 stones may be taken from a heap, not 5",
        ),
        (
            json!({"take": [[2]]}),
            "take[0]: expected [heap, amount], got 1 number",
        ),
        (
            json!({"take": [[2, 1, 1]]}),
            "take[0]: has 3 entries; the limit is 2",
        ),
        (
            json!({"take": [[2, -1]]}),
            "take[0][1]: must not be negative",
        ),
        (json!({"take": [2, 1]}), "take[0]: expected an array, got 2"),
        (json!({"heap": 0, "take": 1}), "take: expected an array"),
    ];
    common::assert_moves_refused(&p, &cases);
    // Listed in any order, a move is normalised by heap index.
    let m = p.parse_move(&json!({"take": [[2, 1], [0, 1]]})).unwrap();
    assert_eq!(json_of(&m), json!({"take": [[0, 1], [2, 1]]}));
    let over = parse(&json!({"game": "moore", "heaps": [0, 0], "k": 2}));
    let m = over.parse_move(&json!({"take": [[0, 1]]})).unwrap();
    assert_eq!(over.check(&m).unwrap_err().to_string(), "the game is over");
    // One of a thing is said in the singular.
    let one = parse(&json!({"game": "moore", "heaps": [1, 5], "k": 1, "max_take": 1}));
    let cases = [
        (
            json!({"take": [[0, 1], [1, 1]]}),
            "at most k = 1 heap, this one names 2",
        ),
        (
            json!({"take": [[0, 2]]}),
            "heap 0 has only 1 stone, cannot take 2",
        ),
        (
            json!({"take": [[1, 2]]}),
            "at most max_take = 1 stone may be taken from a heap, not 2",
        ),
    ];
    common::assert_moves_refused(&one, &cases);
}
