//! Grundy's game (`grundy`, the heap rule `"grundy"`): every move splits a
//! heap into two unequal heaps. The values themselves are checked against the
//! definition and OEIS A002188 in `games::grundys_game`'s unit tests; here,
//! the game as played.

mod common;

use common::{check_against_oracle, parse};
use grundy_engine::games::grundys_game::MAX_GRUNDYS_GAME_HEAP;
use grundy_engine::{Analysis, Outcome, Position, Rules, Strategy as _};
use proptest::prelude::*;
use serde_json::{json, Value};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(64)))]
    #[test]
    fn grundys_game_matches_the_oracle(heaps in prop::collection::vec(0u64..10, 1..4)) {
        check_against_oracle(&json!({"game": "grundy", "heaps": heaps}), true);
    }

    #[test]
    fn misere_grundys_game_matches_the_oracle(heaps in prop::collection::vec(0u64..11, 1..4)) {
        check_against_oracle(&json!({"game": "grundy", "heaps": heaps, "misere": true}), false);
    }

    /// Beside other rules in one `heaps`, and as a part of a `sum`.
    #[test]
    fn grundys_game_among_other_games_matches_the_oracle(
        a in 0u64..10, b in 0u64..6, c in 0u64..6
    ) {
        check_against_oracle(&json!({"game": "heaps", "heaps": [
            {"size": a, "rule": "grundy"}, {"size": b, "rule": "lasker"}, {"size": c, "rule": {"octal": "0.77"}}
        ]}), true);
        check_against_oracle(&json!({"game": "sum", "parts": [
            {"game": "grundy", "heaps": [a]}, {"game": "nim", "heaps": [b, c]}
        ]}), true);
    }
}

/// The moves of a heap are its unequal splits, and nothing else.
#[test]
fn a_heap_is_split_in_two_unequal_heaps() {
    let legal = |n: u64| -> Vec<Value> {
        let p = parse(&json!({"game": "grundy", "heaps": [n]}));
        let moves = p.legal_moves(1000);
        assert!(moves.complete);
        moves
            .moves
            .iter()
            .map(|m| serde_json::to_value(m).unwrap())
            .collect()
    };
    assert!(legal(1).is_empty());
    assert!(legal(2).is_empty());
    assert_eq!(legal(3), [json!({"heap": 0, "take": 0, "leave": [1, 2]})]);
    assert_eq!(
        legal(7),
        [
            json!({"heap": 0, "take": 0, "leave": [1, 6]}),
            json!({"heap": 0, "take": 0, "leave": [2, 5]}),
            json!({"heap": 0, "take": 0, "leave": [3, 4]}),
        ]
    );
    assert_eq!(legal(8).len(), 3, "4 + 4 is not a move");
    // A position of heaps of 1 and 2 is over: whoever is to move loses.
    let over = parse(&json!({"game": "grundy", "heaps": [1, 2, 2, 1]}));
    assert_eq!(over.outcome(), Outcome::P);
}

#[test]
fn bad_moves_say_why() {
    let p = parse(&json!({"game": "grundy", "heaps": [8, 5]}));
    for (mv, why) in [
        (
            json!({"heap": 0, "take": 0, "leave": [4, 4]}),
            "the two heaps left must be unequal: 4 and 4 are not",
        ),
        (
            json!({"heap": 0, "take": 1}),
            "in Grundy's game every move splits a heap in two unequal heaps",
        ),
        (
            json!({"heap": 0, "take": 2, "leave": [1, 5]}),
            "a split in Grundy's game takes nothing: take must be 0",
        ),
        (
            json!({"heap": 1, "take": 0, "leave": [1, 3]}),
            "the heaps left must add up to 5 (5 minus 0), not 1 + 3",
        ),
    ] {
        let refused = p
            .parse_move(&mv)
            .and_then(|m| {
                let mut q = p.clone();
                q.play(&m).map(|_| ())
            })
            .expect_err(&format!("{mv} is not a move"));
        let text = refused.to_string();
        assert!(text.contains(why), "{mv}: {text}");
    }
}

/// The table reaches 2^20, and a heap past it is refused, naming the field and
/// the limit, before anything is computed.
#[test]
fn heaps_up_to_the_table_are_played_and_larger_ones_refused() {
    let too_large = json!({"game": "grundy", "heaps": [5, MAX_GRUNDYS_GAME_HEAP + 1]});
    let refused = Position::from_spec(&too_large).expect_err("past the table");
    let text = refused.to_string();
    assert!(text.contains("heaps[1]"), "{text}");
    assert!(text.contains(&MAX_GRUNDYS_GAME_HEAP.to_string()), "{text}");

    // A large N-position: the best move is legal and leaves value 0.
    let spec = json!({"game": "grundy", "heaps": [MAX_GRUNDYS_GAME_HEAP, 100_000, 777]});
    let p = parse(&spec);
    let analysis = Analysis::of(&p, 20);
    match analysis.outcome {
        Outcome::N => {
            let m = analysis.best_move.expect("a winning move");
            let mut after = p.clone();
            after.play(&m).expect("the best move is legal");
            assert_eq!(after.grundy(), Some(0), "{spec} after {m:?}");
        }
        Outcome::P => assert_eq!(p.grundy(), Some(0)),
    }
}

/// The short form reads and writes it like the other heap games.
#[test]
fn the_short_form_names_it_grundy() {
    let p = grundy_engine::short::position::parse("grundy --misere 7 4").expect("reads");
    assert_eq!(
        p,
        json!({"game": "grundy", "misere": true, "heaps": [7, 4]})
    );
}
