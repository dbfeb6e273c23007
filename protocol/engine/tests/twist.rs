mod common;

use std::collections::HashSet;

use common::{check_against_oracle, parse};
use grundy_engine::{Analysis, Outcome, Rules, Status, Strategy};
use serde_json::{json, Value};

fn to_json<T: serde::Serialize>(m: &T) -> Value {
    serde_json::to_value(m).unwrap()
}

#[test]
fn twist_matches_oracle() {
    // Every M the oracle can take: all 2^(M-1) splits and the Nim games after them.
    for m in 1..=7u64 {
        check_against_oracle(&json!({"game": "twist", "stones": m}), true);
    }
}

/// Every composition of m, by brute force over the cut points.
fn compositions(m: u64) -> Vec<Vec<u64>> {
    (0..1u64 << (m - 1))
        .map(|cuts| {
            let mut parts = vec![1u64];
            for i in 0..m - 1 {
                if cuts >> i & 1 == 1 {
                    parts.push(1);
                } else {
                    *parts.last_mut().unwrap() += 1;
                }
            }
            parts
        })
        .collect()
}

#[test]
fn splits_are_listed_exactly() {
    for m in 1..=14u64 {
        let p = parse(&json!({"game": "twist", "stones": m}));
        let all: HashSet<Vec<u64>> = compositions(m).into_iter().collect();
        let legal = p.legal_moves(usize::MAX);
        assert!(legal.complete);
        let listed: Vec<Value> = legal.moves.iter().map(to_json).collect();
        let got: HashSet<Vec<u64>> = listed
            .iter()
            .map(|v| serde_json::from_value(v["split"].clone()).unwrap())
            .collect();
        assert_eq!(listed.len(), all.len(), "duplicates for M = {m}");
        assert_eq!(got, all, "splits of {m}");
        let zero: HashSet<Vec<u64>> = all
            .into_iter()
            .filter(|c| c.iter().fold(0, |a, &b| a ^ b) == 0)
            .collect();
        let win = p.winning_moves(usize::MAX);
        assert!(win.complete);
        let got: HashSet<Vec<u64>> = win
            .moves
            .iter()
            .map(|m| serde_json::from_value(to_json(m)["split"].clone()).unwrap())
            .collect();
        assert_eq!(
            win.moves.len(),
            zero.len(),
            "duplicate winning splits of {m}"
        );
        assert_eq!(got, zero, "winning splits of {m}");
        assert_eq!(p.outcome(), Outcome::from_to_move_wins(m % 2 == 0));
        assert_eq!(p.grundy(), Some(u64::from(m % 2 == 0)));
    }
}

/// An analysis lists each winning split once, whatever the order of its heaps.
#[test]
fn analysis_lists_each_split_once() {
    for m in [2u64, 6, 10, 16] {
        let p = parse(&json!({"game": "twist", "stones": m}));
        let a = Analysis::of(&p, usize::MAX);
        let listed: Vec<Vec<u64>> = a
            .winning_moves
            .iter()
            .map(|mv| serde_json::from_value(to_json(mv)["split"].clone()).unwrap())
            .collect();
        let mut every: Vec<Vec<u64>> = p
            .winning_moves(usize::MAX)
            .moves
            .iter()
            .map(|mv| {
                let mut s: Vec<u64> = serde_json::from_value(to_json(mv)["split"].clone()).unwrap();
                s.sort_unstable_by(|a, b| b.cmp(a));
                s
            })
            .collect();
        every.sort_unstable_by(|a, b| b.cmp(a));
        every.dedup();
        assert_eq!(listed, every, "twist {m}");
        assert_eq!(a.winning_move_count, Some(every.len()));
    }
    let a = Analysis::of(&parse(&json!({"game": "twist", "stones": 10})), 1000);
    assert_eq!(a.winning_move_count, Some(10), "not the 140 orders of them");
}

#[test]
fn seed_examples() {
    // Even M: two equal heaps; odd M: the splitter loses (3 -> (2,1) or (1,1,1)).
    let a = Analysis::of(&parse(&json!({"game": "twist", "stones": 12})), 10);
    assert_eq!(a.outcome, Outcome::N);
    assert_eq!(to_json(&a.best_move), json!({"split": [6, 6]}));
    assert_eq!(
        a.winning_move_count, None,
        "12 has more than 10 winning splits"
    );
    for m in [3u64, 5, 7] {
        let a = Analysis::of(&parse(&json!({"game": "twist", "stones": m})), 10);
        assert_eq!(a.outcome, Outcome::P);
        assert_eq!(a.winning_move_count, Some(0));
    }
    // After the split it is Nim: (3, 4, 5) -> take 2 from the 3-heap.
    let mut p = parse(&json!({"game": "twist", "stones": 12}));
    p.play(&p.parse_move(&json!({"split": [3, 4, 5]})).unwrap())
        .unwrap();
    assert_eq!(p.to_json(), json!({"game": "nim", "heaps": [3, 4, 5]}));
    assert_eq!(
        to_json(&p.best_move().unwrap()),
        json!({"heap": 0, "take": 2})
    );
    assert_eq!(p.grundy(), Some(2));
}

#[test]
fn at_the_limits() {
    let m = 1_000_000_000_000u64;
    let p = parse(&json!({"game": "twist", "stones": m}));
    assert_eq!(
        to_json(&p.best_move().unwrap()),
        json!({"split": [m / 2, m / 2]})
    );
    // Winning splits are found without search: each has nim-sum 0.
    let w = p.winning_moves(1000);
    assert_eq!(w.moves.len(), 1000);
    assert!(!w.complete);
    for mv in &w.moves {
        let parts: Vec<u64> = serde_json::from_value(to_json(mv)["split"].clone()).unwrap();
        assert_eq!(parts.iter().sum::<u64>(), m);
        assert_eq!(parts.iter().fold(0, |a, &b| a ^ b), 0);
        assert!(p.check(mv).is_ok());
    }
    assert_eq!(p.legal_moves(1000).moves.len(), 1000);
    // Odd M: lost, but the bot still splits, keeping the game long.
    let p = parse(&json!({"game": "twist", "stones": m - 1}));
    assert_eq!(p.outcome(), Outcome::P);
    let best = p.best_move().unwrap();
    assert_eq!(to_json(&best), json!({"split": [m / 2 - 1, m / 2 - 1, 1]}));
    assert!(p.check(&best).is_ok());
    // A split into the most heaps allowed.
    let mut p = parse(&json!({"game": "twist", "stones": m}));
    let mut parts = vec![1u64; 9_999];
    parts.push(m - 9_999);
    p.play(&p.parse_move(&json!({"split": parts})).unwrap())
        .unwrap();
    assert_eq!(p.grundy(), Some((m - 9_999) ^ 1));
    assert_eq!(p.status(), Status::Ongoing);
}

#[test]
fn bad_specs_name_the_field() {
    let cases = [
        (json!({"game": "twist"}), "stones: is required but missing"),
        (
            json!({"game": "twist", "stones": 0}),
            "stones: must be at least 1, got 0",
        ),
        (
            json!({"game": "twist", "stones": 1_000_000_000_001u64}),
            "stones: must be at most 1000000000000",
        ),
        (
            json!({"game": "twist", "stones": -3}),
            "stones: must not be negative",
        ),
        (
            json!({"game": "twist", "stones": [3]}),
            "stones: expected a whole number",
        ),
        (
            json!({"game": "twist", "stones": 3, "heaps": [3]}),
            "heaps: unknown field",
        ),
    ];
    common::assert_specs_refused(&cases);
}

#[test]
fn bad_moves_say_why() {
    let p = parse(&json!({"game": "twist", "stones": 5}));
    let cases = [
        (
            json!({"split": [2, 2]}),
            "must add up to the 5 stones, not 4",
        ),
        (
            json!({"split": [2, 4]}),
            "must add up to the 5 stones, not 6",
        ),
        (json!({"split": [5, 0]}), "split[1] is 0"),
        (json!({"split": []}), "at least one heap"),
        (json!({"split": [u64::MAX, 6]}), "not more than 2^64"),
        (json!({"split": [2, -3]}), "split[1]: must not be negative"),
        (json!({"split": "5"}), "split: expected an array"),
        (json!({"heap": 0, "take": 1}), "must be split first"),
        (json!({"take": 1}), "heap: is required"),
    ];
    common::assert_moves_refused(&p, &cases);
    let many = vec![1u64; 10_001];
    let err = p
        .parse_move(&json!({ "split": many }))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("has 10001 entries; the limit is 10000"),
        "{err}"
    );

    let mut p = parse(&json!({"game": "twist", "stones": 5}));
    p.play(&p.parse_move(&json!({"split": [4, 1]})).unwrap())
        .unwrap();
    let cases = [
        (json!({"split": [5]}), "already split"),
        (
            json!({"heap": 2, "take": 1}),
            "no heap 2: there are 2 (numbered from 0)",
        ),
        (json!({"heap": 1, "take": 2}), "heap 1 has only 1 stone,"),
        (json!({"heap": 0, "take": 0}), "at least one stone"),
    ];
    common::assert_moves_refused(&p, &cases);
    p.play(&p.parse_move(&json!({"heap": 0, "take": 4})).unwrap())
        .unwrap();
    p.play(&p.parse_move(&json!({"heap": 1, "take": 1})).unwrap())
        .unwrap();
    let err = p
        .parse_move(&json!({"heap": 1, "take": 1}))
        .and_then(|m| p.check(&m));
    assert_eq!(err.unwrap_err().to_string(), "the game is over");
}
