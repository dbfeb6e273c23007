mod common;

use common::{assert_moves_refused, assert_specs_refused, check_against_oracle, parse};
use grundy_engine::games::wythoff::values_up_to;
use grundy_engine::oracle::{mex, Solver};
use grundy_engine::{components, Analysis, Outcome, Position, Rules, Status, Strategy as _};
use proptest::prelude::*;
use serde_json::{json, Value};

/// A small spec of a family that can be a part: small enough that the oracle
/// can search sums of up to four of them.
fn part() -> impl proptest::strategy::Strategy<Value = Value> {
    prop_oneof![
        prop::collection::vec(0u64..4, 1..3).prop_map(|h| json!({"game": "nim", "heaps": h})),
        (0u64..6).prop_map(|n| json!({"game": "kayles", "heaps": [n]})),
        (0u64..6).prop_map(|n| json!({"game": "dawson", "heaps": [n]})),
        (0u64..5, 1u64..3).prop_map(|(n, k)| json!({"game": "bash", "k": k, "heaps": [n]})),
        (0u64..5).prop_map(|n| json!({"game": "heaps", "rule": "odd", "heaps": [n]})),
        (0u64..5).prop_map(|n| json!({"game": "lasker", "heaps": [n]})),
        (0u64..4, 0u64..4).prop_map(|(a, b)| json!({"game": "wythoff", "heaps": [a, b]})),
        prop::collection::vec(0u64..3, 2..4)
            .prop_map(|h| json!({"game": "moore", "k": 2, "heaps": h})),
        prop::collection::vec(0u64..3, 1..3).prop_map(|h| json!({"game": "new-stone", "heaps": h})),
        prop::collection::btree_set(1u64..6, 1..3)
            .prop_map(|p| json!({"game": "staircase", "pieces": p})),
        prop_oneof![Just("RL"), Just("XR"), Just("LX"), Just("X")]
            .prop_map(|row| json!({"game": "darkraft", "grid": [row]})),
        (0u32..4).prop_map(|t| json!({"game": "graph", "vertices": 4,
            "edges": [[0, 1], [1, 2], [0, 2], [2, 3], [0, 3]], "tokens": [t]})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(64)))]
    #[test]
    fn sums_match_oracle(parts in prop::collection::vec(part(), 2..5)) {
        check_against_oracle(&json!({"game": "sum", "parts": parts}), true);
    }
}

#[test]
fn every_family_that_can_be_a_part_matches_the_oracle_alone() {
    // Each part family in a sum with one empty Nim heap: the part's own
    // values and moves_to, with nothing else around.
    for spec in [
        json!({"game": "wythoff", "heaps": [4, 6]}),
        json!({"game": "moore", "k": 2, "heaps": [2, 3, 2]}),
        json!({"game": "moore", "k": 3, "max_take": 2, "heaps": [2, 2, 3, 1]}),
        json!({"game": "new-stone", "heaps": [3, 2, 1]}),
        json!({"game": "staircase", "pieces": [2, 5, 7]}),
        json!({"game": "darkraft", "grid": ["RLX", "LRR"]}),
        json!({"game": "subtraction", "set": [1, 3, 4], "heaps": [7, 9]}),
    ] {
        check_against_oracle(
            &json!({"game": "sum", "parts": [spec, {"game": "nim", "heaps": [0]}]}),
            true,
        );
        check_against_oracle(
            &json!({"game": "sum", "parts": [spec, {"game": "nim", "heaps": [3]}]}),
            true,
        );
    }
}

#[test]
fn wythoff_table_matches_the_mex_definition() {
    let n = 40u64;
    let mut g = vec![vec![0u64; n as usize + 1]; n as usize + 1];
    for a in 0..=n as usize {
        for b in 0..=n as usize {
            let mut seen: Vec<u64> = (0..a).map(|i| g[i][b]).collect();
            seen.extend((0..b).map(|j| g[a][j]));
            seen.extend((1..=a.min(b)).map(|k| g[a - k][b - k]));
            g[a][b] = mex(&mut seen);
        }
    }
    let table = values_up_to(n);
    assert!(table.covers() >= n);
    for a in 0..=n {
        for b in 0..=n {
            assert_eq!(
                table.get(a, b),
                Some(g[a as usize][b as usize]),
                "g({a}, {b})"
            );
        }
    }
    // The zeros are Wythoff's P-positions.
    assert_eq!(table.get(3, 5), Some(0));
    assert_eq!(table.get(8, 13), Some(0));
    assert_eq!(table.get(1, 1), Some(2));
}

/// The seeds' mixed example: take 1-3 from one heap, an odd number from a
/// second, any number from the rest. As a `heaps` spec with a rule per heap
/// and as a `sum` of three different games, every position has the same
/// outcome, value and winning moves (in the sum, named by part).
#[test]
fn the_seeds_mixed_example_reads_the_same_as_heaps_and_as_a_sum() {
    for (a, b, c, d) in [
        (5, 4, 3, 6),
        (7, 2, 0, 1),
        (3, 5, 6, 5),
        (1, 1, 1, 1),
        (9, 8, 7, 6),
    ] {
        let heaps = parse(&json!({"game": "heaps", "heaps": [
            {"size": a, "rule": {"upto": 3}}, {"size": b, "rule": "odd"},
            {"size": c, "rule": "any"}, {"size": d, "rule": "any"}]}));
        let sum = parse(&json!({"game": "sum", "parts": [
            {"game": "bash", "k": 3, "heaps": [a]},
            {"game": "heaps", "rule": "odd", "heaps": [b]},
            {"game": "nim", "heaps": [c, d]}]}));
        assert_eq!(heaps.outcome(), sum.outcome(), "{a} {b} {c} {d}");
        assert_eq!(heaps.grundy(), sum.grundy(), "{a} {b} {c} {d}");
        let as_heaps = |m: &Value| -> Value {
            let part = m["part"].as_u64().unwrap();
            let inner = &m["move"];
            let heap = match part {
                0 | 1 => part,
                _ => 2 + inner["heap"].as_u64().unwrap(),
            };
            json!({"heap": heap, "take": inner["take"]})
        };
        let mut from_sum: Vec<Value> = sum
            .winning_moves(100)
            .moves
            .iter()
            .map(|m| as_heaps(&serde_json::to_value(m).unwrap()))
            .collect();
        let mut from_heaps: Vec<Value> = heaps
            .winning_moves(100)
            .moves
            .iter()
            .map(|m| serde_json::to_value(m).unwrap())
            .collect();
        from_sum.sort_by_key(Value::to_string);
        from_heaps.sort_by_key(Value::to_string);
        assert_eq!(from_sum, from_heaps, "{a} {b} {c} {d}");
    }
}

#[test]
fn a_sum_of_four_families_is_analysed_part_by_part() {
    let p = parse(&json!({"game": "sum", "parts": [
        {"game": "nim", "heaps": [3, 5]},
        {"game": "kayles", "heaps": [7]},
        {"game": "wythoff", "heaps": [3, 5]},
        {"game": "graph", "vertices": 3, "edges": [[0, 1], [1, 2], [0, 2]], "tokens": [0]}]}));
    // nim 3 ^ 5 = 6, kayles g(7) = 2, wythoff (3, 5) is P, g(vertex 0) = 2.
    let rows = components(&p).expect("a sum has parts");
    let values: Vec<u64> = rows.iter().map(|r| r.value).collect();
    assert_eq!(values, [6, 2, 0, 2]);
    assert!(rows[1].label.contains("kayles"), "{:?}", rows[1]);
    let a = Analysis::of(&p, 100);
    assert_eq!(a.grundy, Some(6));
    assert_eq!(a.outcome, Outcome::N);
    let moves: Vec<Value> = a
        .winning_moves
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect();
    // Each part must go to its value xor 6: Nim 6 -> 0 (heap 5 down to 3),
    // Kayles 2 -> 4 (7 down to 5), Wythoff 0 -> 6 ((3, 5) to (3, 3), up:
    // Wythoff has no reversible moves, but its values are not monotone), the
    // graph token 2 -> 4 (no successor has it).
    assert_eq!(
        moves,
        [
            json!({"part": 0, "move": {"heap": 1, "take": 2}}),
            json!({"part": 1, "move": {"heap": 0, "take": 2}}),
            json!({"part": 2, "move": {"take": [0, 2]}}),
        ]
    );
    assert_eq!(a.winning_move_count, Some(3));
    let best = serde_json::to_value(a.best_move.unwrap()).unwrap();
    assert_eq!(best, moves[0]);
}

#[test]
fn nested_sums_are_flattened_and_finished_parts_stay() {
    let mut p = parse(&json!({"game": "sum", "parts": [
        {"game": "nim", "heaps": [1]},
        {"game": "sum", "parts": [{"game": "nim", "heaps": [2]}, {"game": "kayles", "heaps": [1]}]}]}));
    let Position::Sum(s) = &p else {
        panic!("a sum")
    };
    assert_eq!(s.parts.len(), 3);
    let mv = p
        .parse_move(&json!({"part": 0, "move": {"heap": 0, "take": 1}}))
        .unwrap();
    p.play(&mv).unwrap();
    assert_eq!(p.status(), Status::Ongoing);
    let Position::Sum(s) = &p else {
        panic!("a sum")
    };
    assert_eq!(s.parts.len(), 3, "a finished part stays in the position");
    assert_moves_refused(
        &p,
        &[(
            json!({"part": 0, "move": {"heap": 0, "take": 1}}),
            "part 0: this part is finished",
        )],
    );
    assert_eq!(
        p.to_json()["parts"][0],
        json!({"game": "nim", "heaps": [0]})
    );
}

#[test]
fn bad_sums_are_refused_naming_the_part_and_the_field() {
    let many: Vec<Value> = (0..10_000)
        .map(|_| json!({"game": "nim", "heaps": [1]}))
        .collect();
    let nested: Vec<Value> = (0..11)
        .map(|_| json!({"game": "sum", "parts": (0..10).map(|_| json!({"game": "nim", "heaps": [1]})).collect::<Vec<_>>()}))
        .collect();
    let nested_searches: Vec<Value> = (0..10)
        .map(
            |_| json!({"game": "sum", "parts": [{"game": "moore", "k": 2, "heaps": [6, 6, 6, 5]}]}),
        )
        .collect();
    assert_specs_refused(&[
        (
            json!({"game": "sum", "parts": []}),
            "parts: a sum needs at least one part",
        ),
        (json!({"game": "sum"}), "parts"),
        (
            json!({"game": "sum", "parts": many}),
            "parts: has 10000 entries; the limit is 100",
        ),
        (
            json!({"game": "sum", "parts": nested}),
            "parts: has more than 100 parts once nested sums are flattened",
        ),
        (
            json!({"game": "sum", "parts": [{"game": "sum", "misere": true,
                "parts": [{"game": "nim", "heaps": [1]}]}]}),
            "parts[0].misere: a misère sum cannot be a part of a sum",
        ),
        (
            json!({"game": "sum", "parts": [{"game": "sum", "parts": [
                {"game": "nim", "heaps": [1]}, {"game": "chess"}]}]}),
            "parts[0].parts[1].game: unknown game",
        ),
        // Nested sums share the outer sum's search budget.
        (
            json!({"game": "sum", "parts": nested_searches}),
            "shared by its searched parts",
        ),
        (
            json!({"game": "sum", "parts": [{"game": "nim", "heaps": [1]}, {"game": "chess"}]}),
            "parts[1].game: unknown game \"chess\"",
        ),
        (
            json!({"game": "sum", "parts": [{"game": "treblecross", "board": "....."}]}),
            "parts[0].game: treblecross cannot be a part of a sum: three in a row",
        ),
        (
            json!({"game": "sum", "parts": [{"game": "twist", "stones": 6}]}),
            "parts[0].game: twist cannot be a part of a sum",
        ),
        (
            json!({"game": "sum", "parts": [{"game": "nim", "heaps": [3], "misere": true}]}),
            "parts[0].game: nim cannot be a part of a sum: a misère part",
        ),
        (
            json!({"game": "sum", "parts": [{"game": "nim", "heaps": [1]}, {"game": "wythoff", "heaps": [3, 5000]}]}),
            "parts[1].heaps: 5000 is too large for a wythoff part",
        ),
        (
            json!({"game": "sum", "parts": [{"game": "moore", "k": 2, "heaps": [60, 60, 60, 60]}]}),
            "parts[0]: moore has no formula for its Grundy values",
        ),
        (
            json!({"game": "sum", "parts": [{"game": "nim", "heaps": [-1]}]}),
            "parts[0].heaps[0]: must not be negative",
        ),
        (json!({"game": "sum", "parts": [7]}), "parts[0]"),
        (
            json!({"game": "sum", "parts": [{"game": "nim", "heaps": [1]}], "extra": 1}),
            "extra",
        ),
        (
            json!({"game": "sum", "parts": [{"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]},
            {"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]},
            {"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]},
            {"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]},
            {"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]},
            {"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]},
            {"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]},
            {"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]},
            {"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]},
            {"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]},
            {"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]},
            {"game": "graph", "vertices": 100000, "edges": [], "tokens": [0]}]}),
            "parts[10]: the parts up to here hold",
        ),
    ]);
}

#[test]
fn bad_moves_name_the_part() {
    let p = parse(&json!({"game": "sum", "parts": [
        {"game": "nim", "heaps": [3]}, {"game": "wythoff", "heaps": [2, 4]}]}));
    assert_moves_refused(
        &p,
        &[
            (
                json!({"part": 2, "move": {"heap": 0, "take": 1}}),
                "no part 2: there are 2 (numbered from 0)",
            ),
            (
                json!({"part": 0, "move": {"heap": 1, "take": 1}}),
                "part 0: no heap 1",
            ),
            (
                json!({"part": 0, "move": {"heap": 0, "take": 4}}),
                "part 0: heap 0 has only 3 stones",
            ),
            (
                json!({"part": 1, "move": {"heap": 0, "take": 1}}),
                "part 1: malformed move",
            ),
            (json!({"part": 0}), "malformed move: move.move"),
            (json!({"heap": 0, "take": 1}), "malformed move: move.part"),
            (
                json!({"part": 0, "move": {"heap": 0, "take": 1}, "x": 1}),
                "x",
            ),
        ],
    );
    let err = p
        .parse_move(&json!({"part": 0, "move": {"heap": 0, "take": 9}}))
        .and_then(|m| p.check(&m))
        .unwrap_err();
    assert_eq!(err.kind(), "forbidden", "a part's refusal keeps its kind");
}

#[test]
fn the_perfect_player_wins_a_mixed_sum_against_random_play() {
    use grundy_engine::level::{choose_move, Rng};
    use grundy_engine::Level;
    let start = parse(&json!({"game": "sum", "parts": [
        {"game": "nim", "heaps": [4, 9]}, {"game": "kayles", "heaps": [8]},
        {"game": "wythoff", "heaps": [6, 9]}, {"game": "moore", "k": 2, "heaps": [2, 3, 3]},
        {"game": "staircase", "pieces": [3, 8, 12]}]}));
    assert_eq!(start.outcome(), Outcome::N);
    for seed in 0..20 {
        let mut rng = Rng::new(seed);
        let mut p = start.clone();
        let mut perfect_to_move = true;
        while p.status() == Status::Ongoing {
            let level = if perfect_to_move {
                Level::Perfect
            } else {
                Level::Casual(0)
            };
            let m = choose_move(&p, level, &mut rng).expect("a move");
            p.play(&m).expect("legal");
            if perfect_to_move {
                assert_eq!(
                    p.outcome(),
                    Outcome::P,
                    "the perfect player left a won position"
                );
            }
            perfect_to_move = !perfect_to_move;
        }
        assert!(
            !perfect_to_move,
            "the perfect player made the last move (seed {seed})"
        );
    }
}

#[test]
fn the_oracle_agrees_on_a_sum_solved_whole() {
    // An independent check of a sum's value by the solver on the whole game.
    let p = parse(&json!({"game": "sum", "parts": [
        {"game": "wythoff", "heaps": [2, 3]}, {"game": "new-stone", "heaps": [2, 2, 1]}]}));
    let truth = Solver::<Position>::new().solve(&p).unwrap();
    assert_eq!(p.grundy(), truth.grundy);
}

/// A heap game small enough for the oracle, for misère sums.
fn heap_part() -> impl proptest::strategy::Strategy<Value = Value> {
    prop_oneof![
        prop::collection::vec(0u64..4, 1..3).prop_map(|h| json!({"game": "nim", "heaps": h})),
        (0u64..7).prop_map(|n| json!({"game": "kayles", "heaps": [n]})),
        (0u64..7).prop_map(|n| json!({"game": "dawson", "heaps": [n]})),
        (0u64..6, 1u64..3).prop_map(|(n, k)| json!({"game": "bash", "k": k, "heaps": [n]})),
        (0u64..6).prop_map(|n| json!({"game": "lasker", "heaps": [n]})),
        (0u64..6).prop_map(|n| json!({"game": "heaps", "rule": "odd", "heaps": [n]})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(48)))]
    #[test]
    fn misere_sums_match_oracle(parts in prop::collection::vec(heap_part(), 1..4)) {
        check_against_oracle(&json!({"game": "sum", "parts": parts, "misere": true}), false);
    }
}

#[test]
fn a_misere_sum_is_decided_as_its_heaps_together() {
    let sum = parse(&json!({"game": "sum", "misere": true, "parts": [
        {"game": "nim", "heaps": [1, 1]}, {"game": "kayles", "heaps": [3, 4]}]}));
    let heaps = parse(&json!({"game": "heaps", "misere": true, "heaps": [
        {"size": 1, "rule": "any"}, {"size": 1, "rule": "any"},
        {"size": 3, "rule": {"octal": "0.77"}}, {"size": 4, "rule": {"octal": "0.77"}}]}));
    assert_eq!(sum.outcome(), heaps.outcome());
    assert_eq!(sum.grundy(), None, "misère sums have no value");
    assert_eq!(components(&sum), None, "and no xor table");
    let a = Analysis::of(&sum, 100);
    assert_eq!(a.method, Analysis::of(&heaps, 100).method);
    assert!(a.method.is_some());
    assert_eq!(
        a.winning_move_count,
        Analysis::of(&heaps, 100).winning_move_count
    );
    // The end: whoever cannot move wins.
    let mut end = parse(&json!({"game": "sum", "misere": true, "parts": [
        {"game": "nim", "heaps": [1]}, {"game": "kayles", "heaps": [0]}]}));
    let m = end
        .parse_move(&json!({"part": 0, "move": {"heap": 0, "take": 1}}))
        .unwrap();
    end.play(&m).unwrap();
    assert_eq!(end.status(), Status::Over { to_move_wins: true });
    assert_eq!(end.to_json()["misere"], json!(true));
}

#[test]
fn misere_sums_take_heap_games_only() {
    assert_specs_refused(&[
        (
            json!({"game": "sum", "misere": true, "parts": [{"game": "nim", "heaps": [2]},
            {"game": "wythoff", "heaps": [1, 2]}]}),
            "parts[1].game: wythoff cannot be a part of a misère sum",
        ),
        (
            json!({"game": "sum", "misere": true, "parts": [{"game": "graph", "vertices": 2,
            "edges": [[0, 1]], "tokens": [0]}]}),
            "parts[0].game: graph cannot be a part of a misère sum",
        ),
        (
            json!({"game": "sum", "misere": "yes", "parts": [{"game": "nim", "heaps": [2]}]}),
            "misere",
        ),
        (
            json!({"game": "sum", "misere": true, "parts": [{"game": "kayles", "heaps": [1000]}]}),
            "parts[0].heaps[0]: 1000 is too large for misère play",
        ),
    ]);
}
