mod common;

use common::{check_against_oracle, parse, rule_strategy};
use grundy_engine::games::rule::{Rule, RuleKind};
use grundy_engine::{Analysis, Outcome, Position, Rules, Strategy as _};
use proptest::prelude::*;
use serde_json::{json, Value};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(96)))]
    #[test]
    fn heaps_match_oracle(
        heaps in prop::collection::vec((0u64..7, rule_strategy(5)), 1..4)
    ) {
        let heaps: Vec<Value> = heaps
            .into_iter()
            .map(|(size, rule)| json!({"size": size, "rule": rule}))
            .collect();
        check_against_oracle(&json!({"game": "heaps", "heaps": heaps}), true);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(96)))]
    /// Misère, any mix of rules: genus when every rule is tame, the quotient
    /// for one wild rule, search for a wild mix.
    #[test]
    fn misere_heaps_match_oracle(
        heaps in prop::collection::vec((0u64..7, rule_strategy(5)), 1..4)
    ) {
        let heaps: Vec<Value> = heaps
            .into_iter()
            .map(|(size, rule)| json!({"size": size, "rule": rule}))
            .collect();
        check_against_oracle(&json!({"game": "heaps", "heaps": heaps, "misere": true}), false);
    }

}

fn sequence_of(code: &str) -> std::sync::Arc<grundy_engine::games::sequence::Sequence> {
    Rule::new(RuleKind::Octal(code.into()))
        .expect("rule")
        .sequence()
        .expect("table")
        .clone()
}

fn values(rule: &Rule, n: u64) -> Vec<u64> {
    (0..n).map(|i| rule.grundy(i)).collect()
}

#[test]
fn kayles_table_and_period() {
    let kayles = Rule::new(RuleKind::Octal("0.77".into())).unwrap();
    assert_eq!(
        values(&kayles, 34),
        [
            0, 1, 2, 3, 1, 4, 3, 2, 1, 4, 2, 6, 4, 1, 2, 7, 1, 4, 3, 2, 1, 4, 6, 7, 4, 1, 2, 8, 5,
            4, 7, 2, 1, 8
        ]
    );
    assert_eq!(sequence_of("0.77").period(), Some((71, 12)));
}

#[test]
fn dawson_table_and_period() {
    let dawson = Rule::new(RuleKind::Octal("0.07".into())).unwrap();
    assert_eq!(
        values(&dawson, 20),
        [0, 0, 1, 1, 2, 0, 3, 1, 1, 0, 3, 3, 2, 2, 4, 0, 5, 2, 2, 3]
    );
    let (_, q) = sequence_of("0.07").period().expect("proven periodic");
    assert_eq!(q, 34);
}

#[test]
fn closed_form_rules() {
    let r = |k| Rule::new(k).unwrap();
    assert_eq!(values(&r(RuleKind::Half), 9), [0, 1, 2, 2, 3, 3, 3, 3, 4]);
    assert_eq!(values(&r(RuleKind::Lasker), 9), [0, 1, 2, 4, 3, 5, 6, 8, 7]);
    assert_eq!(
        values(&r(RuleKind::UpTo(3)), 9),
        [0, 1, 2, 3, 0, 1, 2, 3, 0]
    );
    assert_eq!(values(&r(RuleKind::Odd), 4), [0, 1, 0, 1]);
}

#[test]
fn subtraction_1_3_4_is_p_iff_n_mod_7_in_0_2() {
    let rule = Rule::new(RuleKind::Set(vec![1, 3, 4])).unwrap();
    for n in (0..2000).chain([10u64.pow(15), 10u64.pow(15) + 2, (1 << 63) - 5]) {
        assert_eq!(rule.grundy(n) == 0, [0, 2].contains(&(n % 7)), "n = {n}");
    }
}

#[test]
fn pas_strip_game() {
    // Pieces of lengths 1, 5, 1: octal digit 7 at positions 1 and 5.
    let rule = Rule::new(RuleKind::Octal("0.70007".into())).unwrap();
    assert_ne!(rule.grundy(1), 0, "strip 1 is N");
    assert_ne!(rule.grundy(5), 0, "strip 5 is N");
    assert_eq!(rule.grundy(6), 0, "strip 6 is P");
}

#[test]
fn periodic_lookup_agrees_with_the_computed_prefix() {
    for code in ["0.77", "0.07", "0.137", "4.7", "0.6", "0.73", "0.15"] {
        let seq = sequence_of(code);
        let Some((p, q)) = seq.period() else { continue };
        for (n, &v) in seq.prefix().iter().enumerate().skip(p as usize) {
            assert_eq!(
                seq.prefix()[p as usize + (n - p as usize) % q as usize],
                v,
                "{code} at {n}"
            );
        }
    }
}

/// Self-consistency on positions too large for the oracle: the best move from an
/// N-position is legal and leaves a nim-sum of 0.
fn best_move_wins(spec: Value) {
    let p = parse(&spec);
    let a = Analysis::of(&p, 50);
    assert_eq!(a.outcome, Outcome::N, "{spec}");
    let m = a.best_move.expect("a move");
    let mut after = p.clone();
    after
        .play(&m)
        .unwrap_or_else(|e| panic!("{spec}: best move refused: {e}"));
    assert_eq!(after.grundy(), Some(0), "{spec} after {m:?}");
    assert!(!a.winning_moves.is_empty());
    for w in &a.winning_moves {
        let mut after = p.clone();
        after.play(w).expect("winning move is legal");
        assert_eq!(after.grundy(), Some(0), "{spec} after {w:?}");
    }
}

#[test]
fn huge_heaps_under_periodic_rules() {
    let e15 = 10u64.pow(15);
    best_move_wins(json!({"game": "kayles", "heaps": [e15, 7]}));
    best_move_wins(json!({"game": "dawson", "heaps": [e15 + 3, 1u64 << 63]}));
    best_move_wins(json!({"game": "subtraction", "set": [1, 3, 4], "heaps": [e15]}));
    best_move_wins(json!({"game": "lasker", "heaps": [e15 + 3, 5]}));
    best_move_wins(json!({"game": "lasker", "heaps": [(1u64 << 63) - 1]}));
    best_move_wins(json!({"game": "bash", "k": 1u64 << 62, "heaps": [e15, 3]}));
    best_move_wins(json!({"game": "heaps", "rule": "half", "heaps": [e15, 1]}));
    best_move_wins(json!({"game": "heaps", "rule": "odd", "heaps": [e15 + 1]}));
    best_move_wins(json!({"game": "heaps", "rule": {"octal": "0.007"}, "heaps": [9999, 17]}));
}

#[test]
fn many_winning_moves_are_listed_up_to_the_limit() {
    // Every odd take from an odd heap of 10^15 + 1 wins: far too many to list.
    let p = parse(&json!({"game": "heaps", "rule": "odd", "heaps": [1_000_000_000_000_001u64]}));
    let a = Analysis::of(&p, 10);
    assert_eq!(a.winning_moves.len(), 10);
    assert_eq!(a.winning_move_count, None);
}

#[test]
fn presets_and_round_trip() {
    let p = parse(&json!({"game": "bash", "k": 3, "heaps": [5, 6]}));
    assert_eq!(p.grundy(), Some(1 ^ 2));
    assert_eq!(
        p.to_json(),
        json!({"game": "heaps", "rule": {"upto": 3}, "heaps": [5, 6]})
    );
    assert_eq!(Position::from_spec(&p.to_json()).unwrap(), p);
    let mixed = json!({"game": "heaps", "heaps": [
        {"size": 5, "rule": {"upto": 3}}, {"size": 9, "rule": "odd"}, {"size": 4, "rule": "any"}
    ]});
    let p = parse(&mixed);
    assert_eq!(p.to_json(), mixed);
    // upto 3 of 5 -> 1, odd of 9 -> 1, any of 4 -> 4.
    assert_eq!(p.grundy(), Some(4));
    let p =
        parse(&json!({"game": "heaps", "rule": "any", "heaps": [3, {"size": 2, "rule": "odd"}]}));
    assert_eq!(p.grundy(), Some(3));
}

#[test]
fn splits_insert_the_second_heap_after_the_first() {
    let mut p = parse(&json!({"game": "kayles", "heaps": [7, 2]}));
    let m = p
        .parse_move(&json!({"heap": 0, "take": 1, "leave": [2, 4]}))
        .unwrap();
    p.play(&m).unwrap();
    assert_eq!(
        p.to_json(),
        json!({"game": "heaps", "rule": {"octal": "0.77"}, "heaps": [2, 4, 2]})
    );
}

#[test]
fn bad_specs_name_the_field() {
    let cases = [
        (
            json!({"game": "heaps", "heaps": [3]}),
            "heaps[0]: a bare heap size needs a top-level rule",
        ),
        (
            json!({"game": "heaps", "heaps": [{"size": 3}]}),
            "heaps[0].rule: is required",
        ),
        (
            json!({"game": "heaps", "heaps": [{"size": 3, "rule": "all"}]}),
            "heaps[0].rule: unknown rule \"all\"",
        ),
        (
            json!({"game": "heaps", "rule": {"upto": 0}, "heaps": [1]}),
            "rule.upto: must be at least 1",
        ),
        (
            json!({"game": "heaps", "rule": {"set": []}, "heaps": [1]}),
            "rule.set: a subtraction set needs at least one amount",
        ),
        (
            json!({"game": "heaps", "rule": {"set": [2, 0]}, "heaps": [1]}),
            "rule.set[1]: amounts must be at least 1",
        ),
        (
            json!({"game": "heaps", "rule": {"octal": "0.78"}, "heaps": [1]}),
            "rule.octal: '8' is not an octal digit",
        ),
        (
            json!({"game": "heaps", "rule": {"octal": "077"}, "heaps": [1]}),
            "rule.octal: an octal code looks like",
        ),
        (
            json!({"game": "heaps", "rule": {"octal": "2.7"}, "heaps": [1]}),
            "rule.octal: the digit before the point must be 0 or 4",
        ),
        (
            json!({"game": "heaps", "rule": {"octal": 77}, "heaps": [1]}),
            "rule.octal: expected an octal code string",
        ),
        (
            json!({"game": "heaps", "rule": {"octal": "0.007"}, "heaps": [10001]}),
            "heaps[0]: 10001 is too large for rule octal 0.007",
        ),
        (
            json!({"game": "heaps", "heaps": [{"size": 1, "rule": "any", "colour": 2}]}),
            "heaps[0].colour: unknown field",
        ),
        (json!({"game": "bash", "heaps": [1]}), "k: is required"),
        (
            json!({"game": "subtraction", "heaps": [1]}),
            "set: is required",
        ),
        (
            json!({"game": "kayles", "heaps": [101, 3], "misere": true}),
            "heaps[0]: 101 is too large for misère play under rule octal 0.77: its misère quotient is built for heaps up to 100",
        ),
        (
            json!({"game": "kayles", "heaps": [1], "misere": 1}),
            "misere: expected true or false, got 1",
        ),
        (
            json!({"game": "heaps", "heaps": [{"size": 40, "rule": "lasker"}, {"size": 40, "rule": {"octal": "0.77"}}], "misere": true}),
            "misere: this position cannot be played exactly in misère: it mixes rules, and not all of them are tame, so no single quotient covers it, and it reaches more than 100000 positions for exhaustive search",
        ),
        (
            json!({"game": "kayles", "heaps": [{"size": 1}]}),
            "heaps[0]: expected a whole number",
        ),
    ];
    common::assert_specs_refused(&cases);
}

#[test]
fn bad_moves_say_why() {
    let p = parse(&json!({"game": "heaps", "heaps": [
        {"size": 5, "rule": {"upto": 2}}, {"size": 7, "rule": {"octal": "0.07"}},
        {"size": 6, "rule": "half"}, {"size": 4, "rule": "odd"}, {"size": 4, "rule": {"set": [2, 3]}},
        {"size": 5, "rule": "lasker"}
    ]}));
    let cases = [
        (
            json!({"heap": 0, "take": 3}),
            "heap 0: at most 2 may be taken at once, not 3",
        ),
        (
            json!({"heap": 0, "take": 1, "leave": [2, 2]}),
            "heap 0: rule take 1 to 2 never splits a heap",
        ),
        (
            json!({"heap": 1, "take": 1}),
            "heap 1: octal 0.07 never lets a move take 1",
        ),
        (
            json!({"heap": 1, "take": 2, "leave": [1, 3]}),
            "the heaps left must add up to 5 (7 minus 2), not 1 + 3",
        ),
        (
            json!({"heap": 1, "take": 2, "leave": [0, 5]}),
            "both heaps left by a split must be non-empty",
        ),
        (
            json!({"heap": 1, "take": 2, "leave": [4]}),
            "leave [4] does not match the rest: 7 minus 2 leaves 5",
        ),
        (
            json!({"heap": 2, "take": 2}),
            "at least half the heap (3 of 6) must be taken, not 2",
        ),
        (
            json!({"heap": 3, "take": 2}),
            "only odd amounts may be taken, not 2",
        ),
        (
            json!({"heap": 4, "take": 1}),
            "1 is not an allowed amount (take one of {2, 3})",
        ),
        (
            json!({"heap": 5, "take": 1, "leave": [2, 2]}),
            "a Lasker split takes nothing",
        ),
        (
            json!({"heap": 5, "take": 6}),
            "the heap has only 5, cannot take 6",
        ),
        (json!({"heap": 6, "take": 1}), "no heap 6: there are 6"),
        (
            json!({"heap": 0, "take": 1, "leave": [1, 1, 1]}),
            "leave: has 3 entries; the limit is 2",
        ),
    ];
    common::assert_moves_refused(&p, &cases);
}
