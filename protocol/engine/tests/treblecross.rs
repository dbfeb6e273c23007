mod common;

use common::{check_against_oracle, parse};
use grundy_engine::{Analysis, Outcome, Position, Rules, Status, Strategy};
use proptest::prelude::*;
use serde_json::json;

/// A board of `marks`, with any X that would make three in a row dropped.
fn board(marks: &[bool]) -> String {
    let mut cells: Vec<bool> = Vec::new();
    for &m in marks {
        let n = cells.len();
        let three = m && n >= 2 && cells[n - 1] && cells[n - 2];
        cells.push(m && !three);
    }
    cells.iter().map(|&x| if x { 'X' } else { '.' }).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(48)))]
    #[test]
    fn empty_strips_match_oracle(n in 0usize..=13) {
        check_against_oracle(&json!({"game": "treblecross", "length": n}), false);
    }

    #[test]
    fn boards_match_oracle(marks in prop::collection::vec(prop::bool::weighted(0.25), 0..=10)) {
        check_against_oracle(&json!({"game": "treblecross", "board": board(&marks)}), false);
    }
}

fn analyze(spec: serde_json::Value) -> Analysis {
    Analysis::of(&parse(&spec), 10_000)
}

fn cell(m: &Option<grundy_engine::Move>) -> serde_json::Value {
    serde_json::to_value(m).unwrap()
}

#[test]
fn short_strips_are_played_out() {
    // n = 1: the only cell fills the strip; n = 2: the second player fills it.
    assert_eq!(
        analyze(json!({"game": "treblecross", "length": 1})).outcome,
        Outcome::N
    );
    assert_eq!(
        analyze(json!({"game": "treblecross", "length": 2})).outcome,
        Outcome::P
    );
    let a = analyze(json!({"game": "treblecross", "length": 0}));
    assert_eq!((a.outcome, a.best_move), (Outcome::P, None));
    // n = 3: every first X wins, since any second X hands over the third.
    let a = analyze(json!({"game": "treblecross", "length": 3}));
    assert_eq!(a.winning_move_count, Some(3));
    // n = 7: only the centre wins (values of the runs left: 2 ^ 2 = 0).
    let a = analyze(json!({"game": "treblecross", "length": 7}));
    assert_eq!(a.winning_move_count, Some(1));
    assert_eq!(cell(&a.best_move), json!({"cell": 3}));
}

#[test]
fn poj_3537_samples() {
    // Sample input 3 and 6: the first player wins 3, loses 6.
    assert_eq!(
        analyze(json!({"game": "treblecross", "length": 3})).outcome,
        Outcome::N
    );
    assert_eq!(
        analyze(json!({"game": "treblecross", "length": 6})).outcome,
        Outcome::P
    );
}

#[test]
fn immediate_wins_are_the_only_winning_moves() {
    let a = analyze(json!({"game": "treblecross", "board": ".XX....X.X.."}));
    assert_eq!(a.outcome, Outcome::N);
    assert_eq!(
        serde_json::to_value(&a.winning_moves).unwrap(),
        json!([{"cell": 0}, {"cell": 3}, {"cell": 8}])
    );
    assert_eq!(a.grundy, None);
}

#[test]
fn odd_strips_are_first_player_wins() {
    // The centre, then mirroring, wins every odd strip: an independent check of
    // the 0.007 table up to the limit.
    for n in (1..=1999).step_by(2) {
        let p = parse(&json!({"game": "treblecross", "length": n}));
        assert_eq!(p.outcome(), Outcome::N, "length {n}");
    }
}

#[test]
fn largest_strip() {
    let p = parse(&json!({"game": "treblecross", "length": 2000}));
    let best = p.best_move().expect("a move");
    let mut q = p.clone();
    q.play(&best).unwrap();
    assert_eq!(p.outcome().to_move_wins(), q.outcome() == Outcome::P);
    // Play the whole strip out bot against bot: the game ends with the
    // predicted winner.
    let first_wins = p.outcome() == Outcome::N;
    let mut pos = p;
    let mut mover = 0;
    while pos.status() == Status::Ongoing {
        let m = pos.best_move().expect("a move while ongoing");
        pos.play(&m).unwrap();
        mover ^= 1;
    }
    // `mover` is now the player to move at the end, who lost.
    assert_eq!(mover == 1, first_wins);
}

#[test]
fn to_json_round_trips() {
    let p = parse(&json!({"game": "treblecross", "board": "X...X"}));
    assert_eq!(
        p.to_json(),
        json!({"game": "treblecross", "board": "X...X"})
    );
    assert_eq!(Position::from_spec(&p.to_json()).unwrap(), p);
    let p = parse(&json!({"game": "treblecross", "board": "....."}));
    assert_eq!(p.to_json(), json!({"game": "treblecross", "length": 5}));
}

#[test]
fn bad_specs_name_the_field() {
    let cases = [
        (
            json!({"game": "treblecross"}),
            "length: is required (or give board",
        ),
        (
            json!({"game": "treblecross", "length": 2001}),
            "length: must be at most 2000, got 2001",
        ),
        (
            json!({"game": "treblecross", "length": -1}),
            "length: must not be negative",
        ),
        (
            json!({"game": "treblecross", "length": 3, "board": "..."}),
            "board: give either length",
        ),
        (
            json!({"game": "treblecross", "board": 5}),
            "board: expected a string of '.' and 'X', got 5",
        ),
        (
            json!({"game": "treblecross", "board": "..o.."}),
            "board: cell 2 is 'o'; only '.' (empty) and 'X'",
        ),
        (
            json!({"game": "treblecross", "board": ".X.XXX"}),
            "board: cells 3..=5 already hold three X in a row",
        ),
        (
            json!({"game": "treblecross", "length": 3, "misere": true}),
            "misere: misère play is offered only for nim",
        ),
        (
            json!({"game": "treblecross", "length": 3, "size": 3}),
            "size: unknown field",
        ),
    ];
    common::assert_specs_refused(&cases);
    let long = ".".repeat(2001);
    let err = Position::from_spec(&json!({"game": "treblecross", "board": long})).unwrap_err();
    assert_eq!(err.to_string(), "board: has 2001 cells; the limit is 2000");
}

#[test]
fn bad_moves_say_why() {
    let p = parse(&json!({"game": "treblecross", "board": "X...."}));
    let cases = [
        (
            json!({"cell": 5}),
            "no cell 5: there are 5 (numbered from 0)",
        ),
        (json!({"cell": u64::MAX}), "no cell 18446744073709551615"),
        (json!({"cell": 0}), "cell 0 already has an X"),
        (json!({"cell": -1}), "cell: must not be negative"),
        (json!({}), "cell: is required"),
        (json!([3]), "expected a JSON object"),
    ];
    common::assert_moves_refused(&p, &cases);
    let over = parse(&json!({"game": "treblecross", "board": "XX"}));
    let err = over
        .parse_move(&json!({"cell": 0}))
        .and_then(|m| over.check(&m))
        .unwrap_err();
    assert_eq!(err.to_string(), "the game is over");
    let mut p = parse(&json!({"game": "treblecross", "board": "XX."}));
    p.play(&p.parse_move(&json!({"cell": 2})).unwrap()).unwrap();
    assert_eq!(
        p.status(),
        Status::Over {
            to_move_wins: false
        }
    );
}
