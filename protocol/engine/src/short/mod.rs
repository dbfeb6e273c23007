//! The short forms people type for positions (`nim 3 5 + kayles 7`,
//! `kayles --misere 4 7`) and moves (`0 2`, `a 3`, `2: 1 1`), read into the
//! engine's spec and [`Move`](crate::Move) and written back. One reading for
//! `grundy` (analyze, play, tournaments), `grundy-bot --spec`, and the
//! server's `/api/parse`, which the web app asks, so no client parses them
//! twice.
//!
//! - [`position`]: positions, read ([`position::parse`], [`position::build`]
//!   with flags given apart) and written ([`position::write`]); a refusal of
//!   the spec put in the words typed ([`position::refusal`]);
//! - [`moves`]: moves, read and checked at a position ([`moves::read`]) and
//!   written ([`moves::write`]);
//! - [`number`]: whole numbers, refused with what is wrong with them.

pub mod moves;
pub mod number;
pub mod position;

pub use moves::MoveFormError;
pub use number::{whole_number, NotANumber};
pub use position::{Flags, ShortSpecError};

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::{Position, Rules};

    fn pos(spec: Value) -> Position {
        Position::from_spec(&spec).expect("test spec")
    }

    /// Every family's position, written in the short form, reads back as the
    /// same position: the random starts of every game id at a few seeds, and
    /// positions some moves on.
    #[test]
    fn positions_written_short_read_back_as_the_same() {
        let mut written = 0;
        for game in crate::random::game_ids() {
            for seed in 0..6 {
                let spec = crate::random::random_spec(game, seed, None).expect("a start");
                let mut p = pos(spec.clone());
                for _ in 0..3 {
                    // A position whose view is no spec (Darkraft after a
                    // move) has no short form to read back either.
                    if Position::from_spec(&p.to_json()).as_ref() != Ok(&p) {
                        break;
                    }
                    let text = position::write(&p);
                    let read = position::parse(&text)
                        .unwrap_or_else(|e| panic!("{spec}: {text:?} did not read: {e}"));
                    let back = Position::from_spec(&read)
                        .unwrap_or_else(|e| panic!("{spec}: {text:?} read as {read}: {e}"));
                    assert_eq!(back, p, "{spec}: {text:?}");
                    written += 1;
                    let Some(m) = p.legal_moves(1).moves.pop() else {
                        break;
                    };
                    p.play(&m).expect("legal");
                    // Twist after its split is written as the Nim it became.
                    if matches!(p, Position::Twist(crate::games::twist::Twist::Split(_))) {
                        break;
                    }
                }
            }
        }
        assert!(written > 200, "{written}");
    }

    #[test]
    fn positions_with_a_short_form_are_written_in_it() {
        let cases = [
            (json!({"game": "nim", "heaps": [3, 5]}), "nim 3 5"),
            (
                json!({"game": "nim", "heaps": [1, 1, 3], "misere": true}),
                "nim --misere 1 1 3",
            ),
            (json!({"game": "kayles", "heaps": [4, 7]}), "kayles 4 7"),
            (
                json!({"game": "bash", "k": 3, "heaps": [5, 6], "misere": true}),
                "bash --misere --k 3 5 6",
            ),
            (
                json!({"game": "subtraction", "set": [1, 3, 4], "heaps": [10]}),
                "subtraction --set 1,3,4 10",
            ),
            (
                json!({"game": "moore", "k": 2, "max_take": 3, "heaps": [3, 4, 5]}),
                "moore --k 2 --max-take 3 3 4 5",
            ),
            (
                json!({"game": "treblecross", "board": "..X.."}),
                "treblecross ..X..",
            ),
            (json!({"game": "treblecross", "length": 7}), "treblecross 7"),
            (
                json!({"game": "darkraft", "grid": ["RL", "LR"]}),
                "darkraft RL LR",
            ),
            (json!({"game": "twist", "stones": 10}), "twist 10"),
            (
                json!({"game": "mock-turtles", "coins": "THTHH"}),
                "mock-turtles THTHH",
            ),
            (json!({"game": "ruler", "coins": "HTTH"}), "ruler HTTH"),
            (
                json!({"game": "turning-corners", "coins": ["TTT", "TTH", "HTT"]}),
                "turning-corners TTT TTH HTT",
            ),
            (
                json!({"game": "sum", "parts": [{"game": "nim", "heaps": [3, 5]}, {"game": "kayles", "heaps": [7]}]}),
                "nim 3 5 + kayles 7",
            ),
        ];
        for (spec, short) in cases {
            assert_eq!(position::write(&pos(spec.clone())), short, "{spec}");
            let back = pos(position::parse(short).expect("reads"));
            assert_eq!(back, pos(spec.clone()), "{short}");
        }
        // No short form: the compact JSON, which reads back.
        let graph = json!({"game": "graph", "vertices": 2, "edges": [[0, 1]], "tokens": [0]});
        let text = position::write(&pos(graph.clone()));
        assert!(text.starts_with('{'), "{text}");
        assert_eq!(pos(position::parse(&text).expect("reads")), pos(graph));
    }

    /// Every legal move of small positions of every family, written in the
    /// short form, reads back as the same move (and the same wire JSON).
    #[test]
    fn moves_written_short_read_back_as_the_same() {
        let specs = [
            json!({"game": "nim", "heaps": [3, 4, 0, 5]}),
            json!({"game": "nim", "misere": true, "heaps": [1, 2]}),
            json!({"game": "kayles", "heaps": [5, 7]}),
            json!({"game": "dawson", "heaps": [6]}),
            json!({"game": "lasker", "heaps": [6, 3]}),
            json!({"game": "grundy", "heaps": [7, 4]}),
            json!({"game": "grundy", "misere": true, "heaps": [6]}),
            json!({"game": "bash", "k": 3, "heaps": [5, 6]}),
            json!({"game": "subtraction", "set": [1, 3, 4], "heaps": [9]}),
            json!({"game": "heaps", "heaps": [{"size": 6, "rule": {"octal": "4.07"}}, {"size": 7, "rule": "odd"}, {"size": 5, "rule": "half"}]}),
            json!({"game": "wythoff", "heaps": [4, 6]}),
            json!({"game": "moore", "heaps": [2, 3, 1], "k": 2}),
            json!({"game": "moore", "heaps": [3, 2, 2], "k": 3, "max_take": 2}),
            json!({"game": "new-stone", "heaps": [2, 3, 1]}),
            json!({"game": "staircase", "pieces": [1, 4, 7]}),
            json!({"game": "treblecross", "board": "..X...."}),
            json!({"game": "darkraft", "grid": ["RLX", "LRR"]}),
            json!({"game": "graph", "vertices": 4, "edges": [[0, 1], [0, 2], [1, 3], [2, 3]], "tokens": [0, 1, 3]}),
            json!({"game": "twist", "stones": 7}),
            json!({"game": "mock-turtles", "coins": "THTHH"}),
            json!({"game": "ruler", "coins": "HTHTH"}),
            json!({"game": "turning-corners", "coins": ["TTT", "THH", "HTH"]}),
            json!({"game": "sum", "parts": [{"game": "ruler", "coins": "HH"},
                {"game": "turning-corners", "coins": ["TT", "TH"]}]}),
            json!({"game": "sum", "parts": [
                {"game": "nim", "heaps": [2, 1]}, {"game": "kayles", "heaps": [4]},
                {"game": "wythoff", "heaps": [2, 3]}, {"game": "moore", "heaps": [1, 2, 1], "k": 2},
                {"game": "new-stone", "heaps": [2, 1]}, {"game": "staircase", "pieces": [2, 4]},
                {"game": "darkraft", "grid": ["RL"]},
                {"game": "graph", "vertices": 3, "edges": [[0, 1], [1, 2]], "tokens": [0]}]}),
        ];
        let mut read_moves = 0;
        for spec in specs {
            let mut positions = vec![pos(spec.clone())];
            // The start, and positions one move on (Twist after its split).
            let first = positions[0].legal_moves(usize::MAX);
            assert!(first.complete, "{spec}");
            for m in first.moves.iter().take(3) {
                let mut q = positions[0].clone();
                q.play(m).expect("legal");
                positions.push(q);
            }
            for p in &positions {
                for m in p.legal_moves(usize::MAX).moves {
                    let text = moves::write(&m);
                    assert!(!text.starts_with('{'), "{spec}: {m:?} has no short form");
                    let (value, back) = moves::read(p, &text)
                        .unwrap_or_else(|e| panic!("{spec}: {text:?} for {m:?}: {e}"));
                    assert_eq!(back, m, "{spec}: {text:?}");
                    assert_eq!(value, json!(m), "{spec}: {text:?}");
                    read_moves += 1;
                }
            }
        }
        assert!(read_moves > 500, "{read_moves}");
    }

    #[test]
    fn a_move_not_read_says_what_and_where() {
        let sum = pos(json!({"game": "sum", "parts": [
            {"game": "nim", "heaps": [2, 1]}, {"game": "wythoff", "heaps": [2, 3]}]}));
        let error = |p: &Position, text: &str| moves::read(p, text).unwrap_err();
        assert_eq!(
            error(&sum, "1: c 2"),
            MoveFormError::InPart {
                part: 1,
                error: Box::new(MoveFormError::Shape("write `a 3`, `b 3` or `both 3`"))
            }
        );
        assert_eq!(
            error(&sum, "5: 1 1").to_string(),
            "there is no part 5: the parts are numbered 0 to 1"
        );
        assert_eq!(
            error(&sum, "0: 1 x").to_string(),
            "in part 0: \"x\" is not a whole number ≥ 0"
        );
        assert!(matches!(error(&sum, "0: 0 3"), MoveFormError::Illegal(_)));
        let nim = pos(json!({"game": "nim", "heaps": [3]}));
        assert!(matches!(
            error(&nim, "banana"),
            MoveFormError::NotAMove { .. }
        ));
        assert!(matches!(error(&nim, "{x"), MoveFormError::Json(_)));
        assert!(matches!(
            error(&nim, r#"{"cell": 1}"#),
            MoveFormError::NotOfThisGame(_)
        ));
        let moore = pos(json!({"game": "moore", "heaps": [3, 5], "k": 2}));
        assert_eq!(
            error(&moore, "1"),
            MoveFormError::Shape("write heap:amount pairs, e.g. `0:2 3:1`, or `HEAP AMOUNT`")
        );
        let stone = pos(json!({"game": "new-stone", "heaps": [2, 3]}));
        assert_eq!(
            error(&stone, "1 1 0"),
            MoveFormError::NotAPair { word: "0".into() }
        );
    }
}
