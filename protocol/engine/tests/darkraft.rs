mod common;

use std::collections::HashMap;

use common::{check_against_oracle, parse};
use grundy_engine::{Analysis, Outcome, Position, Rules, Status, Strategy as Perfect};
use proptest::prelude::*;
use serde_json::{json, Value};

fn letters() -> impl Strategy<Value = char> {
    prop::sample::select(vec!['L', 'R', 'X'])
}

/// An n × m grid of random letters, n and m within the bounds.
fn grid(max_rows: usize, max_cols: usize) -> impl Strategy<Value = Vec<String>> {
    (1..=max_rows, 1..=max_cols).prop_flat_map(|(n, m)| {
        prop::collection::vec(
            prop::collection::vec(letters(), m).prop_map(|r| r.into_iter().collect::<String>()),
            n,
        )
    })
}

fn spec(rows: &[String]) -> Value {
    json!({"game": "darkraft", "grid": rows})
}

/// Codeforces 138D's published solution, transcribed: Grundy values of
/// rectangles of the turned board (u = i + j, v = j - i + n), uncompressed and
/// memoised. An independent check of the engine on grids too big for the oracle.
fn reference_value(rows: &[String]) -> u64 {
    let board: Vec<Vec<u8>> = rows.iter().map(|r| r.bytes().collect()).collect();
    let (n, m) = (board.len(), board[0].len());
    let mut total = 0;
    for parity in 0..2 {
        let mut memo = HashMap::new();
        total ^= reference_rect(&board, parity, (0, 0, n + m, n + m), &mut memo);
    }
    total
}

fn reference_rect(
    board: &[Vec<u8>],
    parity: usize,
    r: (usize, usize, usize, usize),
    memo: &mut HashMap<(usize, usize, usize, usize), u64>,
) -> u64 {
    if let Some(&g) = memo.get(&r) {
        return g;
    }
    let (r0, c0, r1, c1) = r;
    let n = board.len();
    let mut seen = Vec::new();
    for (i, row) in board.iter().enumerate() {
        for (j, &l) in row.iter().enumerate() {
            if (i + j) % 2 != parity {
                continue;
            }
            let (x, y) = (i + j, j + n - i);
            if !(r0 <= x && x < r1 && c0 <= y && y < c1) {
                continue;
            }
            let mut g = |a, b, c, d| reference_rect(board, parity, (a, b, c, d), memo);
            seen.push(match l {
                b'L' => g(r0, c0, x, c1) ^ g(x + 1, c0, r1, c1),
                b'R' => g(r0, c0, r1, y) ^ g(r0, y + 1, r1, c1),
                _ => {
                    g(r0, c0, x, y)
                        ^ g(r0, y + 1, x, c1)
                        ^ g(x + 1, c0, r1, y)
                        ^ g(x + 1, y + 1, r1, c1)
                }
            });
        }
    }
    let g = (0..).find(|v| !seen.contains(v)).unwrap();
    memo.insert(r, g);
    g
}

/// A reproducible pseudo-random grid.
fn lcg_grid(rows: usize, cols: usize, mut seed: u64) -> Vec<String> {
    (0..rows)
        .map(|_| {
            (0..cols)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ['L', 'R', 'X'][(seed >> 33) as usize % 3]
                })
                .collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(48)))]
    #[test]
    fn small_grids_match_oracle(rows in grid(3, 4)) {
        check_against_oracle(&spec(&rows), true);
    }

    #[test]
    fn four_by_four_grids_match_oracle(rows in grid(4, 4)) {
        check_against_oracle(&spec(&rows), true);
    }

    #[test]
    fn medium_grids_match_reference(rows in grid(8, 8)) {
        let p = parse(&spec(&rows));
        prop_assert_eq!(p.grundy(), Some(reference_value(&rows)));
    }
}

fn analyze(spec: Value) -> Analysis {
    Analysis::of(&parse(&spec), 10_000)
}

#[test]
fn codeforces_samples() {
    let a = analyze(json!({"game": "darkraft", "grid": ["RL", "LR"]}));
    assert_eq!(a.outcome, Outcome::P);
    assert_eq!(a.winning_move_count, Some(0));
    let a = analyze(json!({"game": "darkraft", "grid": ["RR", "RR"]}));
    assert_eq!(a.outcome, Outcome::N);
    assert!(a.grundy.unwrap() > 0);
}

#[test]
fn all_l_counts_diagonals() {
    // Every move kills exactly one whole diagonal: n + m - 1 moves in all.
    let row20 = "L".repeat(20);
    let a = analyze(json!({"game": "darkraft", "grid": vec![row20.clone(); 20]}));
    assert_eq!(a.outcome, Outcome::N);
    let row19 = "L".repeat(19);
    let a = analyze(json!({"game": "darkraft", "grid": vec![row19; 20]}));
    assert_eq!(a.outcome, Outcome::P);
}

#[test]
fn point_symmetric_odd_grid_is_lost() {
    // With n + m odd, turning the grid half around swaps the two colours, so a
    // grid that looks the same turned around is a sum of two equal games.
    let (n, m) = (20, 19);
    let mut rows: Vec<Vec<char>> = lcg_grid(n, m, 7)
        .iter()
        .map(|r| r.chars().collect())
        .collect();
    for i in 0..n {
        for j in 0..m {
            if (i, j) > (n - 1 - i, m - 1 - j) {
                rows[i][j] = rows[n - 1 - i][m - 1 - j];
            }
        }
    }
    let rows: Vec<String> = rows.into_iter().map(|r| r.into_iter().collect()).collect();
    let p = parse(&spec(&rows));
    assert_eq!(p.outcome(), Outcome::P);
    assert_eq!(p.grundy(), Some(0));
    assert!(p.best_move().is_some());
}

#[test]
fn largest_grid_matches_reference_and_plays_out() {
    for seed in [1] {
        let rows = lcg_grid(20, 20, seed);
        let p = parse(&spec(&rows));
        let value = reference_value(&rows);
        assert_eq!(p.grundy(), Some(value), "{rows:?}");
        // Bot against bot: every move keeps the reference's verdict in step.
        let first_wins = value != 0;
        let mut pos = p;
        let mut moves = 0;
        while pos.status() == Status::Ongoing {
            let before = pos.outcome();
            let m = pos.best_move().expect("a move while ongoing");
            pos.play(&m).unwrap();
            if before == Outcome::N {
                assert_eq!(pos.outcome(), Outcome::P);
            }
            moves += 1;
        }
        assert_eq!(moves % 2 == 1, first_wins);
    }
}

#[test]
fn to_json_shows_inactive_cells() {
    let mut p = parse(&json!({"game": "darkraft", "grid": ["LRX", "XXL", "RLR"]}));
    p.play(&p.parse_move(&json!({"row": 1, "col": 1})).unwrap())
        .unwrap();
    assert_eq!(
        p.to_json(),
        json!({"game": "darkraft", "grid": [".R.", "X.L", ".L."]})
    );
    let q = parse(&json!({"game": "darkraft", "grid": ["LRX", "XXL", "RLR"]}));
    assert_eq!(
        q.to_json(),
        json!({"game": "darkraft", "grid": ["LRX", "XXL", "RLR"]})
    );
}

#[test]
fn waves_stop_at_inactive_cells() {
    // R at (0, 0) kills the main diagonal; then L at (2, 0) runs up-right to
    // (1, 1), finds it inactive and stops: (0, 2) stays active.
    let mut p = parse(&json!({"game": "darkraft", "grid": ["RRL", "RRR", "LRR"]}));
    p.play(&p.parse_move(&json!({"row": 0, "col": 0})).unwrap())
        .unwrap();
    p.play(&p.parse_move(&json!({"row": 2, "col": 0})).unwrap())
        .unwrap();
    assert_eq!(
        p.to_json(),
        json!({"game": "darkraft", "grid": [".RL", "R.R", ".R."]})
    );
}

#[test]
fn bad_specs_name_the_field() {
    let cases = [
        (json!({"game": "darkraft"}), "grid: is required but missing"),
        (
            json!({"game": "darkraft", "grid": []}),
            "grid: must have at least one row",
        ),
        (
            json!({"game": "darkraft", "grid": "RL"}),
            "grid: expected an array",
        ),
        (
            json!({"game": "darkraft", "grid": ["RL", 5]}),
            "grid[1]: expected a string of L, R and X, got 5",
        ),
        (
            json!({"game": "darkraft", "grid": [""]}),
            "grid[0]: must not be empty",
        ),
        (
            json!({"game": "darkraft", "grid": ["RL", "R"]}),
            "grid[1]: has 1 cell but row 0 has 2",
        ),
        (
            json!({"game": "darkraft", "grid": ["RL", "Rx"]}),
            "grid[1][1]: expected L, R or X, got 'x' (row 1, column 1)",
        ),
        (
            json!({"game": "darkraft", "grid": ["R."]}),
            "grid[0][1]: expected L, R or X, got '.'",
        ),
        (
            json!({"game": "darkraft", "grid": ["R"], "misere": true}),
            "misere: misère play is offered only for nim",
        ),
        (
            json!({"game": "darkraft", "grid": ["R"], "rows": 1}),
            "rows: unknown field",
        ),
    ];
    common::assert_specs_refused(&cases);
    let err = Position::from_spec(&json!({"game": "darkraft", "grid": vec!["R"; 21]})).unwrap_err();
    assert_eq!(err.to_string(), "grid: has 21 entries; the limit is 20");
    let err =
        Position::from_spec(&json!({"game": "darkraft", "grid": ["R".repeat(21)]})).unwrap_err();
    assert_eq!(err.to_string(), "grid[0]: has 21 cells; the limit is 20");
}

#[test]
fn bad_moves_say_why() {
    let mut p = parse(&json!({"game": "darkraft", "grid": ["RL", "LR"]}));
    p.play(&p.parse_move(&json!({"row": 0, "col": 0})).unwrap())
        .unwrap();
    let cases = [
        (
            json!({"row": 2, "col": 0}),
            "no row 2: there are 2 (numbered from 0)",
        ),
        (
            json!({"row": 0, "col": 7}),
            "no column 7: there are 2 (numbered from 0)",
        ),
        (
            json!({"row": u64::MAX, "col": 0}),
            "no row 18446744073709551615",
        ),
        (
            json!({"row": 1, "col": 1}),
            "cell (row 1, col 1) is inactive",
        ),
        (json!({"row": 1}), "col: is required"),
        (json!({"row": -1, "col": 0}), "row: must not be negative"),
        (json!("a1"), "expected a JSON object"),
    ];
    common::assert_moves_refused(&p, &cases);
    p.play(&p.parse_move(&json!({"row": 0, "col": 1})).unwrap())
        .unwrap();
    // The L wave from (0, 1) took (1, 0) too: two moves end the game.
    assert_eq!(
        p.status(),
        Status::Over {
            to_move_wins: false
        }
    );
    let err = p
        .parse_move(&json!({"row": 0, "col": 0}))
        .and_then(|m| p.check(&m))
        .unwrap_err();
    assert_eq!(err.to_string(), "the game is over");
    assert_eq!(p.best_move(), None);
}
