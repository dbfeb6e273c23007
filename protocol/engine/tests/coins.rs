//! The coin-turning games (`mock-turtles`, `ruler`, `turning-corners`, and
//! `coins` naming its rule): the engine against the exhaustive solver, which
//! knows only the rules; the values of single heads, by the solver, against
//! the published tables; refusals; the limits.

mod common;

use common::{check_against_oracle, parse};
use grundy_engine::limits::{MAX_COIN_ROW, MAX_CORNERS_SIDE};
use grundy_engine::oracle::Solver;
use grundy_engine::{Analysis, Outcome, Position, Rules, Strategy as _};
use proptest::prelude::*;
use serde_json::{json, Value};

fn row(bits: &[bool]) -> String {
    bits.iter().map(|&h| if h { 'H' } else { 'T' }).collect()
}

fn grid(rows: usize, bits: &[bool]) -> Vec<String> {
    bits.chunks(bits.len() / rows).map(row).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(64)))]
    #[test]
    fn mock_turtles_matches_the_oracle(bits in prop::collection::vec(any::<bool>(), 1..8)) {
        check_against_oracle(&json!({"game": "mock-turtles", "coins": row(&bits)}), true);
    }

    #[test]
    fn ruler_matches_the_oracle(bits in prop::collection::vec(any::<bool>(), 1..8)) {
        check_against_oracle(&json!({"game": "ruler", "coins": row(&bits)}), true);
    }

    #[test]
    fn turning_corners_matches_the_oracle(
        rows in 1usize..4, cols in 1usize..5, seed in any::<u64>()
    ) {
        let bits: Vec<bool> = (0..rows * cols).map(|i| seed >> (i % 64) & 1 == 1).collect();
        check_against_oracle(
            &json!({"game": "turning-corners", "coins": grid(rows, &bits)}),
            true,
        );
    }

    /// As parts of a `sum`, beside each other and other families.
    #[test]
    fn coin_games_in_sums_match_the_oracle(
        a in prop::collection::vec(any::<bool>(), 1..5),
        b in prop::collection::vec(any::<bool>(), 1..5),
        c in prop::collection::vec(any::<bool>(), 6..=6),
        heap in 0u64..4,
    ) {
        check_against_oracle(&json!({"game": "sum", "parts": [
            {"game": "mock-turtles", "coins": row(&a)},
            {"game": "ruler", "coins": row(&b)},
            {"game": "nim", "heaps": [heap]},
        ]}), true);
        check_against_oracle(&json!({"game": "sum", "parts": [
            {"game": "turning-corners", "coins": grid(2, &c)},
            {"game": "coins", "rule": "ruler", "coins": row(&b)},
            {"game": "kayles", "heaps": [heap]},
        ]}), true);
    }
}

/// The value of a single head, by the exhaustive solver (which knows the
/// rules, not the theory).
fn solved(spec: &Value) -> u64 {
    Solver::<Position>::new()
        .solve(&parse(spec))
        .expect("solved")
        .grundy
        .expect("normal play")
}

fn one_head(n: usize, at: usize) -> String {
    (0..n).map(|i| if i == at { 'H' } else { 'T' }).collect()
}

/// OEIS A000069, the odious numbers: Mock Turtles' coin i is worth the i-th.
#[test]
fn a_head_of_mock_turtles_is_worth_an_odious_number() {
    let a000069 = [1u64, 2, 4, 7, 8, 11, 13, 14, 16, 19];
    for (i, &want) in a000069.iter().enumerate() {
        let spec = json!({"game": "mock-turtles", "coins": one_head(i + 1, i)});
        assert_eq!(solved(&spec), want, "coin {i}");
    }
}

/// OEIS A006519 (2^(A001511(n) − 1)): Ruler's coin i is worth the largest
/// power of 2 dividing i + 1.
#[test]
fn a_head_of_ruler_is_worth_the_ruler_function() {
    let a006519 = [1u64, 2, 1, 4, 1, 2, 1, 8, 1, 2, 1, 4];
    for (i, &want) in a006519.iter().enumerate() {
        let spec = json!({"game": "ruler", "coins": one_head(i + 1, i)});
        assert_eq!(solved(&spec), want, "coin {i}");
    }
}

/// OEIS A051775 (the nim-product table): Turning Corners' coin (x, y) is
/// worth x ⊗ y (the Tartan theorem), on boards the solver can exhaust.
#[test]
fn a_head_of_turning_corners_is_worth_a_nim_product() {
    // A051775's rows 0 to 3, columns 0 to 3.
    let a051775 = [[0u64, 0, 0, 0], [0, 1, 2, 3], [0, 2, 3, 1], [0, 3, 1, 2]];
    for (x, values) in a051775.iter().enumerate().take(3) {
        for (y, &want) in values.iter().enumerate() {
            let rows: Vec<String> = (0..=x)
                .map(|r| {
                    if r == x {
                        one_head(y + 1, y)
                    } else {
                        "T".repeat(y + 1)
                    }
                })
                .collect();
            let spec = json!({"game": "turning-corners", "coins": rows});
            assert_eq!(solved(&spec), want, "coin ({x}, {y})");
        }
    }
    // A larger board, by the engine: (4, 4) ⊗ is 6, (8, 8) is 13.
    let big = |x: usize| -> Value {
        let rows: Vec<String> = (0..=x)
            .map(|r| {
                if r == x {
                    one_head(x + 1, x)
                } else {
                    "T".repeat(x + 1)
                }
            })
            .collect();
        json!({"game": "turning-corners", "coins": rows})
    };
    assert_eq!(parse(&big(4)).grundy(), Some(6));
    assert_eq!(parse(&big(8)).grundy(), Some(13));
}

fn refused_move(spec: &Value, mv: &Value) -> String {
    let p = parse(spec);
    p.parse_move(mv)
        .and_then(|m| {
            let mut q = p.clone();
            q.play(&m).map(|_| ())
        })
        .expect_err(&format!("{mv} is not a move of {spec}"))
        .to_string()
}

#[test]
fn bad_moves_say_why() {
    let turtles = json!({"game": "mock-turtles", "coins": "THTHH"});
    for (mv, why) in [
        (
            json!({"turn": [0, 1, 2, 4]}),
            "in Mock Turtles a move turns one, two or three coins, not 4",
        ),
        (
            json!({"turn": [2]}),
            "the rightmost coin turned, 2, must go from heads to tails, but it shows tails",
        ),
        (
            json!({"turn": [7]}),
            "no coin 7: there are 5 (numbered from 0)",
        ),
        (json!({"turn": [3, 3]}), "coin 3 is named twice"),
        (json!({"turn": []}), "a move turns at least one coin"),
        (
            json!({"turn": [[0, 1]]}),
            "the coins of Mock Turtles lie in a row",
        ),
        (json!({"turn": ["x"]}), "turn[0]: expected a coin"),
    ] {
        let text = refused_move(&turtles, &mv);
        assert!(text.contains(why), "{mv}: {text}");
    }
    let ruler = json!({"game": "ruler", "coins": "HTTH"});
    let text = refused_move(&ruler, &json!({"turn": [1, 3]}));
    assert!(
        text.contains(
            "in Ruler the coins turned are a run of consecutive coins: coins 1 to 3 are 3, not 2"
        ),
        "{text}"
    );
    let corners = json!({"game": "turning-corners", "coins": ["TTT", "TTH", "HTT"]});
    for (mv, why) in [
        (
            json!({"turn": [[0, 0], [0, 1], [1, 0], [2, 1]]}),
            "the four corners of a rectangle",
        ),
        (
            json!({"turn": [[0, 0], [0, 1], [1, 0], [1, 1]]}),
            "the corner farthest from [0, 0], [1, 1], must go from heads to tails",
        ),
        (
            json!({"turn": [[0, 0], [0, 5], [1, 0], [1, 5]]}),
            "there is no coin [0, 5]: the board has 3 rows and 3 columns",
        ),
        (json!({"turn": [4]}), "name a coin as [row, column], not 4"),
    ] {
        let text = refused_move(&corners, &mv);
        assert!(text.contains(why), "{mv}: {text}");
    }
    // The order the coins are named in does not matter.
    let p = parse(&corners);
    let m = p
        .parse_move(&json!({"turn": [[1, 2], [0, 0], [1, 0], [0, 2]]}))
        .expect("reads");
    let mut q = p.clone();
    q.play(&m)
        .expect("the corners of rows 0 and 1, columns 0 and 2");
    assert_eq!(
        q.to_json(),
        json!({"game": "turning-corners", "coins": ["HTH", "HTT", "HTT"]})
    );
}

#[test]
fn bad_specs_name_the_field_and_the_limit() {
    let refused = |spec: Value| Position::from_spec(&spec).expect_err("refused").to_string();
    for (spec, why) in [
        (
            json!({"game": "ruler", "coins": "HTx"}),
            "coins: coin 2 is 'x'; only 'H' (heads) and 'T' (tails) are allowed",
        ),
        (
            json!({"game": "ruler", "coins": ""}),
            "coins: must hold at least one coin",
        ),
        (
            json!({"game": "ruler", "coins": [1]}),
            "coins: expected a string of 'H' (heads) and 'T' (tails)",
        ),
        (json!({"game": "mock-turtles"}), "coins: is required"),
        (
            json!({"game": "mock-turtles", "coins": "H".repeat(MAX_COIN_ROW + 1)}),
            &format!(
                "coins: has {} coins; the limit is {MAX_COIN_ROW}",
                MAX_COIN_ROW + 1
            ),
        ),
        (
            json!({"game": "turning-corners", "coins": "HT"}),
            "coins: expected an array of rows",
        ),
        (
            json!({"game": "turning-corners", "coins": ["HT", "H"]}),
            "coins[1]: has 1 coins but row 0 has 2",
        ),
        (
            json!({"game": "turning-corners", "coins": vec!["H"; MAX_CORNERS_SIDE + 1]}),
            &format!(
                "coins: has {} rows; the limit is {MAX_CORNERS_SIDE}",
                MAX_CORNERS_SIDE + 1
            ),
        ),
        (
            json!({"game": "turning-corners", "coins": ["H".repeat(MAX_CORNERS_SIDE + 1)]}),
            &format!(
                "coins[0]: has {} coins; the limit is {MAX_CORNERS_SIDE}",
                MAX_CORNERS_SIDE + 1
            ),
        ),
        (json!({"game": "coins", "coins": "HT"}), "rule: is required"),
        (
            json!({"game": "coins", "rule": "turtles", "coins": "HT"}),
            "rule: unknown rule \"turtles\"",
        ),
        (
            json!({"game": "ruler", "coins": "HT", "misere": true}),
            "misere: misère play is offered only for",
        ),
    ] {
        let text = refused(spec.clone());
        assert!(text.contains(why), "{spec}: {text}");
    }
}

/// A board at the limits: the perfect move is found and leaves value 0.
#[test]
fn boards_at_the_limits_are_played_perfectly() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut coin = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if x & 1 == 1 {
            'H'
        } else {
            'T'
        }
    };
    let long: String = (0..MAX_COIN_ROW).map(|_| coin()).collect();
    let side: Vec<String> = (0..MAX_CORNERS_SIDE)
        .map(|_| (0..MAX_CORNERS_SIDE).map(|_| coin()).collect())
        .collect();
    for spec in [
        json!({"game": "mock-turtles", "coins": long}),
        json!({"game": "ruler", "coins": long}),
        json!({"game": "turning-corners", "coins": side}),
    ] {
        let p = parse(&spec);
        let analysis = Analysis::of(&p, 20);
        let m = analysis.best_move.expect("a move");
        let mut after = p.clone();
        after.play(&m).expect("the best move is legal");
        match analysis.outcome {
            Outcome::N => assert_eq!(after.grundy(), Some(0), "{}", spec["game"]),
            Outcome::P => assert_eq!(p.grundy(), Some(0)),
        }
    }
}

/// The analysis shows the position as the sum of its heads, each with its
/// value.
#[test]
fn the_analysis_lists_each_head_with_its_value() {
    use grundy_engine::components;
    let rows = |spec: Value| -> Vec<(String, u64)> {
        components(&parse(&spec))
            .expect("a sum of heads")
            .into_iter()
            .map(|c| (c.label, c.value))
            .collect()
    };
    assert_eq!(
        rows(json!({"game": "mock-turtles", "coins": "THTHH"})),
        [
            ("heads at 1".to_string(), 2),
            ("heads at 3".to_string(), 7),
            ("heads at 4".to_string(), 8)
        ]
    );
    // On a rectangle: x ⊗ y, 0 on row 0.
    assert_eq!(
        rows(json!({"game": "turning-corners", "coins": ["TTH", "THH", "TTH"]})),
        [
            ("heads at [0, 2]".to_string(), 0),
            ("heads at [1, 1]".to_string(), 1),
            ("heads at [1, 2]".to_string(), 2),
            ("heads at [2, 2]".to_string(), 3)
        ]
    );
}

/// The short forms read and write them.
#[test]
fn short_forms() {
    use grundy_engine::short::{moves, position};
    for (text, spec) in [
        (
            "mock-turtles THHT",
            json!({"game": "mock-turtles", "coins": "THHT"}),
        ),
        ("ruler HTH", json!({"game": "ruler", "coins": "HTH"})),
        (
            "turning-corners TTH HTT",
            json!({"game": "turning-corners", "coins": ["TTH", "HTT"]}),
        ),
    ] {
        assert_eq!(position::parse(text).expect("reads"), spec);
        assert_eq!(position::write(&parse(&spec)), text);
    }
    assert_eq!(
        position::write(&parse(
            &json!({"game": "coins", "rule": "ruler", "coins": "HT"})
        )),
        "ruler HT"
    );
    let said = position::parse("coins HT")
        .expect_err("no short form")
        .to_string();
    assert!(said.contains("name its rule as the game"), "{said}");

    let turtles = parse(&json!({"game": "mock-turtles", "coins": "THTHH"}));
    let (value, m) = moves::read(&turtles, "4 1").expect("reads");
    assert_eq!(value, json!({"turn": [4, 1]}));
    assert_eq!(moves::write(&m), "1 4");
    let corners = parse(&json!({"game": "turning-corners", "coins": ["TTT", "TTH", "HTT"]}));
    let (value, m) = moves::read(&corners, "0:0 1:2").expect("reads");
    assert_eq!(value, json!({"turn": [[0, 0], [0, 2], [1, 0], [1, 2]]}));
    assert_eq!(moves::write(&m), "0:0 1:2");
}
