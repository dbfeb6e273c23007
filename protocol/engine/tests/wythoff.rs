mod common;

use common::{check_against_oracle, parse};
use grundy_engine::{Analysis, Outcome, Rules, Strategy};
use proptest::prelude::*;
use serde_json::{json, Value};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(48)))]
    #[test]
    fn wythoff_matches_oracle(a in 0u64..=8, b in 0u64..=8) {
        check_against_oracle(&json!({"game": "wythoff", "heaps": [a, b]}), false);
    }

    #[test]
    fn winning_moves_reach_p_on_large_heaps(a in 0u64..=1_000_000_000_000_000, b in 0u64..=1_000_000_000_000_000) {
        let p = parse(&json!({"game": "wythoff", "heaps": [a, b]}));
        let wins = p.winning_moves(10);
        prop_assert!(wins.complete);
        prop_assert_eq!(wins.moves.is_empty(), p.outcome() == Outcome::P);
        for m in &wins.moves {
            let mut q = p.clone();
            q.play(m).unwrap();
            prop_assert_eq!(q.outcome(), Outcome::P);
        }
    }
}

fn analyze(heaps: [u64; 2]) -> Analysis {
    Analysis::of(&parse(&json!({"game": "wythoff", "heaps": heaps})), 100)
}

fn moves(a: &Analysis) -> Vec<Value> {
    a.winning_moves
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect()
}

#[test]
fn known_p_positions_and_mirrors() {
    for (a, b) in [
        (0, 0),
        (1, 2),
        (3, 5),
        (4, 7),
        (6, 10),
        (8, 13),
        (9, 15),
        (11, 18),
    ] {
        for heaps in [[a, b], [b, a]] {
            let r = analyze(heaps);
            assert_eq!(r.outcome, Outcome::P, "{heaps:?}");
            assert_eq!(r.grundy, Some(0));
            assert_eq!(r.winning_move_count, Some(0));
        }
    }
    for heaps in [[1, 1], [2, 2], [1, 3], [2, 5], [5, 4], [7, 5]] {
        let r = analyze(heaps);
        assert_eq!(r.outcome, Outcome::N, "{heaps:?}");
        assert_eq!(r.grundy, None);
    }
}

#[test]
fn poj_1067_samples() {
    // "2 1" -> 0 (the first player loses), "8 4" -> 1, "4 7" -> 0.
    assert_eq!(analyze([2, 1]).outcome, Outcome::P);
    assert_eq!(analyze([8, 4]).outcome, Outcome::N);
    assert_eq!(analyze([4, 7]).outcome, Outcome::P);
}

#[test]
fn every_winning_move_is_listed() {
    // (4, 4): 4 and its partner 7 fit no single-heap move; take all from both.
    let r = analyze([4, 4]);
    assert_eq!(moves(&r), vec![json!({"take": [4, 4]})]);
    // (4, 5): heap 0 -> 3 (3,5); heap 1 -> 7? no, 7 > 5; diagonal: difference 1
    // -> (1, 2), taking 3 from both.
    let r = analyze([4, 5]);
    assert_eq!(
        moves(&r),
        vec![json!({"take": [1, 0]}), json!({"take": [3, 3]})]
    );
    // (10, 13): heap 0 to 8 (8, 13), heap 1 to 6 (10, 6), diagonal: difference
    // 3 -> (4, 7), taking 6 from both. Three winning moves.
    let r = analyze([10, 13]);
    assert_eq!(
        moves(&r),
        vec![
            json!({"take": [2, 0]}),
            json!({"take": [0, 7]}),
            json!({"take": [6, 6]})
        ]
    );
    assert_eq!(
        serde_json::to_value(&r.best_move).unwrap(),
        json!({"take": [2, 0]})
    );
}

#[test]
fn huge_heaps_are_exact() {
    // (618033988749894, 999999999999999) = (a_n, b_n), n = 381966011250105.
    let (a, b) = (618_033_988_749_894u64, 999_999_999_999_999u64);
    assert_eq!(analyze([a, b]).outcome, Outcome::P);
    assert_eq!(analyze([b, a]).outcome, Outcome::P);
    assert!(moves(&analyze([a + 1, b])).contains(&json!({"take": [1, 0]})));
    // Here floor(n·φ) in f64 is off by one: a_n = 618033988426303 for
    // n = 381966011050115, while f64 says ...304.
    let (a, b) = (618_033_988_426_303u64, 999_999_999_476_418u64);
    assert_eq!(analyze([a, b]).outcome, Outcome::P);
    assert_eq!(analyze([a + 1, b]).outcome, Outcome::N);
    assert!(moves(&analyze([a + 3, b])).contains(&json!({"take": [3, 0]})));
    assert!(moves(&analyze([a, b + 5])).contains(&json!({"take": [0, 5]})));
    assert!(moves(&analyze([b + 5, a])).contains(&json!({"take": [5, 0]})));
    assert!(moves(&analyze([a + 7, b + 7])).contains(&json!({"take": [7, 7]})));
    // Every listed move reaches a P-position, and the diagonal one is there.
    let big = 1_000_000_000_000_000u64;
    for heaps in [[big, big], [big, big - 1], [1, big], [big, 0]] {
        let r = analyze(heaps);
        assert_eq!(r.outcome, Outcome::N, "{heaps:?}");
        assert!(!r.winning_moves.is_empty());
        for m in &r.winning_moves {
            let mut q = parse(&json!({"game": "wythoff", "heaps": heaps}));
            q.play(m).unwrap();
            assert_eq!(Analysis::of(&q, 10).outcome, Outcome::P, "{heaps:?} {m:?}");
        }
    }
    assert!(moves(&analyze([big, big])).contains(&json!({"take": [big, big]})));
}

#[test]
fn bad_specs_name_the_field() {
    let cases = [
        (json!({"game": "wythoff"}), "heaps: is required but missing"),
        (
            json!({"game": "wythoff", "heaps": [1]}),
            "heaps: Wythoff's game has exactly two heaps, got 1",
        ),
        (
            json!({"game": "wythoff", "heaps": [1, 2, 3]}),
            "heaps: has 3 entries; the limit is 2",
        ),
        (
            json!({"game": "wythoff", "heaps": [1, 1_000_000_000_000_001u64]}),
            "heaps[1]: must be at most 1000000000000000",
        ),
        (
            json!({"game": "wythoff", "heaps": [-1, 1]}),
            "heaps[0]: must not be negative",
        ),
        (
            json!({"game": "wythoff", "heaps": [1, 2], "k": 2}),
            "k: unknown field",
        ),
        (
            json!({"game": "wythoff", "heaps": [1, 2], "misere": true}),
            "misere: misère play is offered only for nim",
        ),
    ];
    common::assert_specs_refused(&cases);
}

#[test]
fn bad_moves_say_why() {
    let p = parse(&json!({"game": "wythoff", "heaps": [3, 5]}));
    let cases = [
        (json!({"take": [0, 0]}), "at least one stone"),
        (
            json!({"take": [1, 2]}),
            "the same amount from each, not 1 and 2",
        ),
        (
            json!({"take": [4, 0]}),
            "heap a has only 3 stones, cannot take 4",
        ),
        (
            json!({"take": [4, 4]}),
            "heap a has only 3 stones, cannot take 4",
        ),
        (
            json!({"take": [0, 6]}),
            "heap b has only 5 stones, cannot take 6",
        ),
        (
            json!({"take": [1]}),
            "take: expected [from heap a, from heap b], got 1 number",
        ),
        (
            json!({"take": [1, 1, 1]}),
            "take: has 3 entries; the limit is 2",
        ),
        (json!({"take": [-1, 0]}), "take[0]: must not be negative"),
        (json!({"take": 3}), "take: expected an array"),
        (json!({"heap": 0, "take": 1}), "take: expected an array"),
        (json!({}), "take: is required"),
    ];
    common::assert_moves_refused(&p, &cases);
    let over = parse(&json!({"game": "wythoff", "heaps": [0, 0]}));
    let m = over.parse_move(&json!({"take": [1, 0]})).unwrap();
    assert_eq!(over.check(&m).unwrap_err().to_string(), "the game is over");
    assert_eq!(Analysis::of(&over, 10).best_move, None);
}
