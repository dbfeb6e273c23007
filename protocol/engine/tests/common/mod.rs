//! The oracle harness shared by the engine tests: every family's strategy is
//! compared with the exhaustive solver on every position reachable from a start.

#![allow(dead_code)]

use std::collections::{HashSet, VecDeque};

use grundy_engine::oracle::Solver;
use grundy_engine::{Move, Position, Rules, Status, Strategy};
use serde_json::Value;

/// How many reachable positions one start may contribute (keeps runs
/// bounded): 400, or `ORACLE_MAX_VISITED` for a deeper run by hand.
pub fn max_visited() -> usize {
    env_number("ORACLE_MAX_VISITED").unwrap_or(400)
}

/// The property tests' case count: `default` (what CI runs), times
/// `ORACLE_CASES_TIMES` for a longer run by hand.
pub fn cases(default: u32) -> u32 {
    default.saturating_mul(env_number("ORACLE_CASES_TIMES").unwrap_or(1) as u32)
}

fn env_number(name: &str) -> Option<usize> {
    let text = std::env::var(name).ok()?;
    Some(
        text.parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a whole number")),
    )
}

pub fn parse(spec: &Value) -> Position {
    Position::from_spec(spec).unwrap_or_else(|e| panic!("spec {spec} refused: {e}"))
}

/// Compares the engine with the exhaustive solver on `spec` and on positions
/// reachable from it. `grundy_expected`: the family promises a Grundy value.
pub fn check_against_oracle(spec: &Value, grundy_expected: bool) {
    let start = parse(spec);
    let mut solver = Solver::<Position>::new();
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([start]);
    let max_visited = max_visited();
    while let Some(pos) = queue.pop_front() {
        if seen.len() >= max_visited || !seen.insert(pos.clone()) {
            continue;
        }
        check_one(&mut solver, &pos, grundy_expected);
        if pos.status() == Status::Ongoing {
            for (_, child) in solver.children(&pos).expect("children") {
                queue.push_back(child);
            }
        }
    }
}

fn check_one(solver: &mut Solver<Position>, pos: &Position, grundy_expected: bool) {
    let truth = solver.solve(pos).expect("oracle");
    assert_eq!(
        pos.outcome().to_move_wins(),
        truth.to_move_wins,
        "outcome of {pos:?}"
    );
    match (pos.grundy(), truth.grundy) {
        (Some(g), Some(t)) => assert_eq!(g, t, "grundy of {pos:?}"),
        (Some(g), None) => panic!("grundy {g} given for a game that is not normal play: {pos:?}"),
        (None, Some(_)) => assert!(!grundy_expected, "no grundy value for {pos:?}"),
        (None, None) => {}
    }
    let want: HashSet<Move> = solver
        .winning_moves(pos)
        .expect("oracle")
        .into_iter()
        .collect();
    let got = pos.winning_moves(usize::MAX);
    assert!(
        got.complete,
        "winning moves of a small position cut short: {pos:?}"
    );
    let got: HashSet<Move> = got.moves.into_iter().collect();
    assert_eq!(got, want, "winning moves of {pos:?}");
    match pos.best_move() {
        None => assert_ne!(pos.status(), Status::Ongoing, "no best move in {pos:?}"),
        Some(m) => {
            assert!(pos.check(&m).is_ok(), "best move {m:?} illegal in {pos:?}");
            if truth.to_move_wins {
                assert!(want.contains(&m), "best move {m:?} does not win in {pos:?}");
            }
        }
    }
    check_move_encoding(pos);
}

/// Every legal move survives a JSON round trip; mutated encodings are accepted
/// exactly when they name a legal move.
fn check_move_encoding(pos: &Position) {
    let legal = pos.legal_moves(100_000);
    assert!(legal.complete);
    let results: HashSet<Position> = legal
        .moves
        .iter()
        .map(|m| {
            let mut p = pos.clone();
            p.play(m).expect("generated move is legal");
            p
        })
        .collect();
    let legal_set: HashSet<&Move> = legal.moves.iter().collect();
    for m in &legal.moves {
        let json = serde_json::to_value(m).expect("serialise");
        let back = pos.parse_move(&json).expect("round trip");
        assert_eq!(&back, m, "round trip of {json}");
        for mutated in mutations(&json) {
            let Ok(candidate) = pos.parse_move(&mutated) else {
                continue;
            };
            let mut p = pos.clone();
            match p.play(&candidate) {
                Ok(()) => assert!(
                    results.contains(&p),
                    "{mutated} accepted but reaches no legal result from {pos:?}"
                ),
                Err(_) => assert!(
                    !legal_set.contains(&candidate),
                    "legal move {mutated} refused in {pos:?}"
                ),
            }
        }
    }
}

/// Small perturbations of every number in a move's JSON.
fn mutations(v: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    mutate(v, &mut |m| out.push(m));
    out
}

fn mutate(v: &Value, emit: &mut dyn FnMut(Value)) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_u64() {
                for y in [x.wrapping_sub(1), x + 1, x + 2, 0, u64::MAX] {
                    emit(Value::from(y));
                }
                emit(Value::from(-1));
            }
        }
        Value::Array(a) => {
            for i in 0..a.len() {
                mutate(&a[i], &mut |m| {
                    let mut c = a.clone();
                    c[i] = m;
                    emit(Value::Array(c));
                });
                let mut shorter = a.clone();
                shorter.remove(i);
                emit(Value::Array(shorter));
            }
            let mut longer = a.clone();
            if let Some(last) = a.last() {
                longer.push(last.clone());
                emit(Value::Array(longer));
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                mutate(x, &mut |m| {
                    let mut c = o.clone();
                    c.insert(k.clone(), m);
                    emit(Value::Object(c));
                });
                let mut without = o.clone();
                without.remove(k);
                emit(Value::Object(without));
            }
        }
        _ => {}
    }
}

/// Every spec is refused with an error containing its expected text.
pub fn assert_specs_refused(cases: &[(Value, &str)]) {
    for (spec, want) in cases {
        let err = Position::from_spec(spec)
            .expect_err("must be refused")
            .to_string();
        assert!(err.contains(want), "{spec}: got {err:?}, want {want:?}");
    }
}

/// Every move is refused in `pos` (when read or when checked) with an error
/// containing its expected text.
pub fn assert_moves_refused(pos: &Position, cases: &[(Value, &str)]) {
    for (mv, want) in cases {
        let err = pos
            .parse_move(mv)
            .and_then(|m| pos.check(&m))
            .expect_err("refused")
            .to_string();
        assert!(err.contains(want), "{mv}: got {err:?}, want {want:?}");
    }
}

/// A random heap rule for the property tests: every kind, with `set`
/// amounts in `1..max_amount`.
pub fn rule_strategy(max_amount: u64) -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    use serde_json::json;
    prop_oneof![
        Just(json!("any")),
        (1u64..4).prop_map(|k| json!({ "upto": k })),
        prop::collection::vec(1u64..max_amount, 1..4).prop_map(|s| json!({ "set": s })),
        Just(json!("odd")),
        Just(json!("half")),
        Just(json!("lasker")),
        (prop::bool::ANY, prop::collection::vec(0u32..8, 1..4)).prop_map(|(split0, digits)| {
            let d: String = digits.iter().map(|d| d.to_string()).collect();
            json!({ "octal": format!("{}.{d}", if split0 { "4" } else { "0" }) })
        }),
    ]
}
