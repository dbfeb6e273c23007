//! Misère `heaps`: every method (genus, quotient, search) against the
//! exhaustive solver, on every small position of the wild rules and on
//! positions with many heaps.

mod common;

use std::collections::HashSet;
use std::sync::Arc;

use common::{assert_specs_refused, parse, rule_strategy};
use grundy_engine::games::heaps::HeapMove;
use grundy_engine::games::rule::{HeapStep, Rule};
use grundy_engine::misere::Method;
use grundy_engine::oracle::Solver;
use grundy_engine::{MoveError, MoveList, Outcome, Position, Rules, Status, Strategy as _};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Heaps under one rule as a sorted multiset, in misère play: a game for the
/// oracle (it knows nothing but these moves), where the order of the heaps
/// cannot multiply the positions to solve.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Canon {
    rule: Arc<Rule>,
    heaps: Vec<u64>,
}

impl Canon {
    fn new(rule: &Arc<Rule>, mut heaps: Vec<u64>) -> Canon {
        heaps.retain(|&h| rule.can_move(h));
        heaps.sort_unstable();
        Canon {
            rule: rule.clone(),
            heaps,
        }
    }
}

impl Rules for Canon {
    type Move = HeapMove;

    fn parse_move(&self, _: &Value) -> Result<HeapMove, MoveError> {
        unreachable!("the oracle never parses")
    }

    fn check(&self, mv: &HeapMove) -> Result<(), MoveError> {
        let step = HeapStep {
            take: mv.take,
            split: mv.leave,
        };
        self.rule
            .check(self.heaps[mv.heap], step)
            .map_err(MoveError::forbidden)
    }

    fn apply_checked(&mut self, mv: &HeapMove) {
        let size = self.heaps.remove(mv.heap);
        let left = match mv.leave {
            Some([a, b]) => vec![a, b],
            None => vec![size - mv.take],
        };
        self.heaps.extend(left);
        *self = Canon::new(&self.rule, std::mem::take(&mut self.heaps));
    }

    fn status(&self) -> Status {
        if self.heaps.is_empty() {
            Status::Over { to_move_wins: true }
        } else {
            Status::Ongoing
        }
    }

    /// One heap of each size is enough: the others give the same positions.
    fn legal_moves(&self, limit: usize) -> MoveList<HeapMove> {
        let mut moves = Vec::new();
        for (i, &h) in self.heaps.iter().enumerate() {
            if i > 0 && self.heaps[i - 1] == h {
                continue;
            }
            self.rule.steps(h, &mut |s| {
                moves.push(HeapMove {
                    heap: i,
                    take: s.take,
                    leave: s.split,
                });
                true
            });
        }
        MoveList {
            complete: moves.len() <= limit,
            moves,
        }
    }

    fn normal_play(&self) -> bool {
        false
    }

    fn to_json(&self) -> Value {
        json!(self.heaps)
    }
}

/// The oracle's outcome and winning moves for a misère position of one rule,
/// compared with the engine's (and its best move, and its method).
struct Checker {
    solver: Solver<Canon>,
}

impl Checker {
    fn new() -> Checker {
        let mut solver = Solver::new();
        solver.move_limit = usize::MAX;
        Checker { solver }
    }

    fn wins(&mut self, rule: &Arc<Rule>, heaps: Vec<u64>) -> bool {
        self.solver
            .solve(&Canon::new(rule, heaps))
            .expect("oracle")
            .to_move_wins
    }

    /// `method`: the one expected, or None for any.
    fn check(&mut self, spec: &Value, method: impl Into<Option<Method>>) {
        let pos = parse(spec);
        let Position::Heaps(h) = &pos else {
            panic!("{spec} is not a heap game")
        };
        if let Some(method) = method.into() {
            assert_eq!(h.misere_method(), Some(method), "method for {spec}");
        }
        let rule = h.heaps.first().expect("a heap").rule.clone();
        let sizes = |p: &Position| match p {
            Position::Heaps(h) => h.heaps.iter().map(|x| x.size).collect::<Vec<_>>(),
            _ => unreachable!(),
        };
        let wins = self.wins(&rule, sizes(&pos));
        assert_eq!(pos.outcome().to_move_wins(), wins, "outcome of {spec}");
        assert_eq!(pos.grundy(), None, "{spec}: misère has no Grundy value");
        let mut want = HashSet::new();
        for m in pos.legal_moves(usize::MAX).moves {
            let mut after = pos.clone();
            after.play(&m).expect("legal");
            if !self.wins(&rule, sizes(&after)) {
                want.insert(m);
            }
        }
        let got = pos.winning_moves(usize::MAX);
        assert!(got.complete, "{spec}: winning moves cut short");
        let got: HashSet<_> = got.moves.into_iter().collect();
        assert_eq!(got, want, "winning moves of {spec}");
        match pos.best_move() {
            None => assert_ne!(pos.status(), Status::Ongoing, "{spec}: no best move"),
            Some(m) => {
                assert!(pos.check(&m).is_ok(), "{spec}: best move illegal");
                if wins {
                    assert!(want.contains(&m), "{spec}: best move {m:?} does not win");
                }
            }
        }
    }
}

/// Every position of up to 4 heaps of at most 12 tokens (zeros stand for
/// fewer heaps), each by the quotient for its largest heap.
fn every_small_position(code: &str) {
    let mut c = Checker::new();
    for a in 0..=12u64 {
        for b in a..=12 {
            for x in b..=12 {
                for d in x..=12 {
                    let heaps = [d, x, b, a];
                    let spec = json!({"game": "heaps", "rule": {"octal": code}, "heaps": heaps, "misere": true});
                    c.check(&spec, Method::Quotient);
                }
            }
        }
    }
}

#[test]
fn kayles_every_position_of_four_heaps_up_to_12() {
    every_small_position("0.77");
}

#[test]
fn dawson_every_position_of_four_heaps_up_to_12() {
    every_small_position("0.07");
}

#[test]
fn octal_0_007_every_position_of_four_heaps_up_to_12() {
    every_small_position("0.007");
}

/// A position with many heaps, against the oracle on the sorted multiset
/// (which knows nothing of quotients).
fn many_heaps_case(code: &str, heaps: &[u64]) {
    let spec = json!({"game": "heaps", "rule": {"octal": code}, "heaps": heaps, "misere": true});
    Checker::new().check(&spec, Method::Quotient);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(24)))]
    #[test]
    fn ten_heaps_match_the_oracle(
        code in prop_oneof![Just("0.77"), Just("0.07"), Just("0.007"), Just("4.7"), Just("0.137")],
        heaps in prop::collection::vec(0u64..=5, 10),
    ) {
        many_heaps_case(code, &heaps);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(64)))]
    /// One random rule throughout: genus when it is tame, else its quotient.
    #[test]
    fn one_random_rule_matches_the_oracle(
        rule in rule_strategy(7),
        heaps in prop::collection::vec(0u64..10, 1..5),
    ) {
        let spec = json!({"game": "heaps", "rule": rule, "heaps": heaps, "misere": true});
        Checker::new().check(&spec, None);
    }
}

#[test]
fn thousands_of_heaps() {
    // Kayles heaps of 1 are moves that each end one heap: the last to move
    // loses, so an odd number of them is lost for the player to move.
    for (count, outcome) in [(1001, Outcome::P), (1000, Outcome::N)] {
        let p = parse(&json!({"game": "kayles", "heaps": vec![1; count], "misere": true}));
        assert_eq!(p.outcome(), outcome, "{count} heaps of 1");
    }
    // 10,000 heaps up to 20 (the floor): the bot's move leaves a lost position.
    for game in ["kayles", "dawson"] {
        let heaps: Vec<u64> = (0..10_000u64).map(|i| (i * 7919) % 21).collect();
        let p = parse(&json!({"game": game, "heaps": heaps, "misere": true}));
        let Position::Heaps(h) = &p else {
            unreachable!()
        };
        assert_eq!(h.misere_method(), Some(Method::Quotient));
        let after = |m: &grundy_engine::Move| {
            let mut q = p.clone();
            q.play(m).expect("legal");
            q.outcome()
        };
        for m in &p.winning_moves(10).moves {
            assert_eq!(after(m), Outcome::P, "{game}");
        }
        let m = p.best_move().expect("a move");
        if p.outcome() == Outcome::N {
            assert_eq!(after(&m), Outcome::P, "{game}");
        }
    }
}

/// Every subtraction set of amounts up to 6 is tame (the genus theorem's
/// hypothesis holds on its periodic table): heaps of 100 are accepted, and
/// small positions agree with the oracle.
#[test]
fn every_subtraction_set_up_to_6() {
    let mut c = Checker::new();
    for mask in 1u32..64 {
        let set: Vec<u64> = (1..=6).filter(|k| mask >> (k - 1) & 1 == 1).collect();
        let big = parse(
            &json!({"game": "subtraction", "set": set, "heaps": vec![100; 50], "misere": true}),
        );
        let Position::Heaps(h) = &big else {
            unreachable!()
        };
        assert_eq!(h.misere_method(), Some(Method::Genus), "{set:?}");
        for a in 0..=9u64 {
            for b in a..=9 {
                let spec =
                    json!({"game": "subtraction", "set": set, "heaps": [b, a, 3], "misere": true});
                c.check(&spec, Method::Genus);
            }
        }
    }
}

/// Tame rules at any size: the winning moves (and the bot's) leave lost
/// positions, by the misère Nim rule on the values.
#[test]
fn tame_rules_with_huge_heaps() {
    let e15 = 10u64.pow(15);
    for spec in [
        json!({"game": "bash", "k": 1u64 << 62, "heaps": [e15, 3, 1]}),
        json!({"game": "subtraction", "set": [1, 3, 4], "heaps": [e15, e15 + 2, 1]}),
        json!({"game": "heaps", "rule": "any", "heaps": [1u64 << 63, 1, 1]}),
        json!({"game": "heaps", "rule": "half", "heaps": [e15, 1]}),
        json!({"game": "heaps", "rule": "odd", "heaps": [e15 + 1, 3]}),
        json!({"game": "heaps", "heaps": [{"size": e15, "rule": "any"}, {"size": 7, "rule": {"upto": 3}}]}),
    ] {
        let mut spec = spec;
        spec["misere"] = json!(true);
        let p = parse(&spec);
        let Position::Heaps(h) = &p else {
            unreachable!()
        };
        assert_eq!(h.misere_method(), Some(Method::Genus), "{spec}");
        assert_eq!(p.outcome(), Outcome::N, "{spec}");
        let wins = p.winning_moves(20);
        assert!(!wins.moves.is_empty(), "{spec}");
        for m in wins.moves.iter().chain(p.best_move().as_ref()) {
            let mut after = p.clone();
            after.play(m).expect("legal");
            assert_eq!(after.outcome(), Outcome::P, "{spec} after {m:?}");
        }
    }
    // Misère Nim by the genus agrees with the `nim` family's own rule.
    for heaps in [[1u64, 1, 1], [5, 1, 1], [5, 1, 0], [2, 2, 0], [7, 9, 12]] {
        let nim = parse(&json!({"game": "nim", "heaps": heaps, "misere": true}));
        let any = parse(&json!({"game": "heaps", "rule": "any", "heaps": heaps, "misere": true}));
        assert_eq!(nim.outcome(), any.outcome(), "{heaps:?}");
        assert_eq!(
            nim.winning_moves(100).moves.len(),
            any.winning_moves(100).moves.len(),
            "{heaps:?}"
        );
    }
}

#[test]
fn a_wild_mix_is_searched() {
    let spec = json!({"game": "heaps", "misere": true, "heaps": [
        {"size": 6, "rule": {"octal": "0.77"}}, {"size": 5, "rule": "lasker"},
        {"size": 4, "rule": "any"}, {"size": 3, "rule": {"octal": "0.77"}}
    ]});
    let p = parse(&spec);
    let Position::Heaps(h) = &p else {
        unreachable!()
    };
    assert_eq!(h.misere_method(), Some(Method::Search));
    common::check_against_oracle(&spec, false);
}

#[test]
fn misere_specs_round_trip_and_end_with_a_win() {
    let p = parse(&json!({"game": "kayles", "heaps": [3, 0, 5], "misere": true}));
    assert_eq!(
        p.to_json(),
        json!({"game": "heaps", "rule": {"octal": "0.77"}, "heaps": [3, 0, 5], "misere": true})
    );
    assert_eq!(Position::from_spec(&p.to_json()).unwrap(), p);
    assert!(!p.normal_play());
    assert_eq!(p.grundy(), None);
    // No xor table explains a misère position.
    assert_eq!(grundy_engine::components(&p), None);
    let done = parse(&json!({"game": "dawson", "heaps": [1, 1], "misere": true}));
    assert_eq!(done.status(), Status::Over { to_move_wins: true });
    assert_eq!(done.outcome(), Outcome::N);
    assert_eq!(done.best_move(), None);
    // Normal play is unchanged, and not equal to the misère position.
    let normal = parse(&json!({"game": "kayles", "heaps": [3, 0, 5]}));
    assert_ne!(normal, p);
    assert_eq!(normal.status(), Status::Ongoing);
    let Position::Heaps(h) = &normal else {
        unreachable!()
    };
    assert_eq!(h.misere_method(), None);
}

#[test]
fn beyond_every_method_the_spec_is_refused() {
    assert_specs_refused(&[
        (
            json!({"game": "dawson", "heaps": [3, {"size": 1}], "misere": true}),
            "heaps[1]: expected a whole number",
        ),
        (
            json!({"game": "kayles", "heaps": [5, 1000], "misere": true}),
            "heaps[1]: 1000 is too large for misère play under rule octal 0.77",
        ),
        (
            json!({"game": "heaps", "heaps": [{"size": 200, "rule": "lasker"}], "misere": true}),
            "heaps[0].size: 200 is too large for misère play under rule Lasker's Nim",
        ),
        (
            // The quotient of 0.07 grows past the build limit before heap 60.
            json!({"game": "dawson", "heaps": [60, 59, 58], "misere": true}),
            "misere: this position cannot be played exactly in misère: the misère quotient of rule octal 0.07 for heaps up to 60 is too large to build within the limit",
        ),
        (
            json!({"game": "heaps", "heaps": [{"size": 30, "rule": "lasker"}, {"size": 30, "rule": {"octal": "0.07"}}], "misere": true}),
            "misere: this position cannot be played exactly in misère: it mixes rules",
        ),
        (
            json!({"game": "wythoff", "heaps": [1, 2], "misere": true}),
            "misere: misère play is offered only for nim, the heap games",
        ),
    ]);
}
