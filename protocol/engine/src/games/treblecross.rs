//! `treblecross`: Crosses and Crosses (POJ 3537). Players put an X on an empty
//! cell of a 1×n strip; whoever makes three X in a row wins at once, and a
//! player with no empty cell left loses.
//!
//! Strategy: if some empty cell completes three in a row, take it (those cells
//! are exactly the winning moves). Otherwise, on a strip of length >= 3, a move
//! within two cells of an X hands the opponent an immediate win, so only the
//! "safe" cells (at distance >= 3 from every X) matter. A maximal run of k safe
//! cells is a heap of the octal game 0.007: playing its i-th cell leaves runs of
//! i-3 and k-i-2, so g(k) = mex over i of g(i-3) ^ g(k-i-2), g(<= 0) = 0; the
//! player with no safe cell loses. The game is not normal play (a win can come
//! before the moves run out), so there is no Grundy value for the whole
//! position. Strips shorter than 3 cannot hold three in a row and are played
//! out literally.
//!
//! `to_json` gives `{"length": n}` for an empty strip and `{"board": "..X.."}`
//! otherwise; a finished board with three in a row is a state view that
//! `from_spec` refuses.

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::{json, Value};

use crate::draw::SplitMix64;
use crate::error::{MoveError, SpecError};
use crate::game::{Collector, MoveList, Outcome, Rules, Status, Strategy};
use crate::games::nim::malformed;
use crate::games::{Entry, GameId};
use crate::json::{fail, kind, Fail, Obj};
use crate::limits::MAX_STRIP;

/// The game ids of this family (with its presets, if any), for the
/// catalogue ([`crate::games::catalogue`]).
pub const GAMES: &[GameId] =
    &[GameId::new("treblecross", "Treblecross", 20, MAX_STRIP as u64).builds_tables()];

/// The strip: `true` where there is an X.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Treblecross {
    cells: Vec<bool>,
}

/// `{"cell": i}`: put an X on cell `i` (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct CellMove {
    pub cell: usize,
}

impl CellMove {
    pub fn parse(v: &Value) -> Result<Self, Fail> {
        let mut o = Obj::new(v, "move")?;
        let cell = o.req_u64("cell", u64::MAX)?;
        // Beyond usize it names no cell anyway; `check` reports it as missing.
        let cell = usize::try_from(cell).unwrap_or(usize::MAX);
        Ok(CellMove { cell })
    }
}

/// g of the octal game 0.007 for runs of 0..=MAX_STRIP safe cells.
fn grundy_table() -> &'static [u16] {
    static TABLE: OnceLock<Vec<u16>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let n = MAX_STRIP;
        let mut g = vec![0u16; n + 1];
        let at = |g: &[u16], k: isize| if k <= 0 { 0 } else { g[k as usize] };
        // Values stay far below 2^12 (mex over at most k options).
        let mut seen = vec![false; n + 2];
        for k in 1..=n {
            seen.iter_mut().for_each(|s| *s = false);
            for i in 1..=k as isize {
                let v = (at(&g, i - 3) ^ at(&g, k as isize - i - 2)) as usize;
                if v < seen.len() {
                    seen[v] = true;
                }
            }
            g[k] = seen.iter().position(|&s| !s).unwrap_or(seen.len()) as u16;
        }
        g
    })
}

fn g_of(k: usize) -> u64 {
    grundy_table().get(k).copied().unwrap_or(0) as u64
}

/// The value of a run of k safe cells after its i-th cell (1-based) is played.
fn g_after(k: usize, i: usize) -> u64 {
    g_of(i.saturating_sub(3)) ^ g_of(k.saturating_sub(i + 2))
}

impl Treblecross {
    pub fn from_spec(o: &mut Obj) -> Result<Self, Fail> {
        // Built once per process, here rather than in the first bot move.
        grundy_table();
        let length = o.opt_u64("length", MAX_STRIP as u64)?;
        let board = o.opt("board");
        match (length, board) {
            (Some(_), Some(_)) => fail(
                &o.path("board"),
                "give either length (an empty strip) or board, not both",
            ),
            (None, None) => fail(
                &o.path("length"),
                "is required (or give board, the strip as a string of '.' and 'X')",
            ),
            (Some(n), None) => Ok(Treblecross {
                cells: vec![false; n as usize],
            }),
            (None, Some(b)) => Self::read_board(b, &o.path("board")),
        }
    }

    fn read_board(v: &Value, path: &str) -> Result<Self, Fail> {
        let Value::String(s) = v else {
            return fail(
                path,
                format!("expected a string of '.' and 'X', got {}", kind(v)),
            );
        };
        let len = s.chars().count();
        if len > MAX_STRIP {
            return fail(path, format!("has {len} cells; the limit is {MAX_STRIP}"));
        }
        let mut cells = Vec::with_capacity(len);
        for (i, ch) in s.chars().enumerate() {
            match ch {
                '.' => cells.push(false),
                'X' => cells.push(true),
                other => {
                    return fail(
                        path,
                        format!("cell {i} is {other:?}; only '.' (empty) and 'X' are allowed"),
                    )
                }
            }
        }
        let p = Treblecross { cells };
        if let Some(i) = p.three_in_a_row() {
            return fail(
                path,
                format!(
                    "cells {i}..={} already hold three X in a row: that game is over",
                    i + 2
                ),
            );
        }
        Ok(p)
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The first cell of a three-in-a-row, if any.
    fn three_in_a_row(&self) -> Option<usize> {
        self.cells.windows(3).position(|w| w.iter().all(|&x| x))
    }

    fn is_x(&self, i: isize) -> bool {
        i >= 0 && self.cells.get(i as usize).copied().unwrap_or(false)
    }

    /// Whether an X on empty cell `c` makes three in a row.
    fn completes(&self, c: usize) -> bool {
        let c = c as isize;
        (self.is_x(c - 2) && self.is_x(c - 1))
            || (self.is_x(c - 1) && self.is_x(c + 1))
            || (self.is_x(c + 1) && self.is_x(c + 2))
    }

    fn empty_cells(&self) -> impl Iterator<Item = usize> + '_ {
        self.cells
            .iter()
            .enumerate()
            .filter(|&(_, &x)| !x)
            .map(|(i, _)| i)
    }

    fn completing_cells(&self) -> impl Iterator<Item = usize> + '_ {
        self.empty_cells().filter(|&c| self.completes(c))
    }

    /// Maximal runs `(first cell, length)` of cells at distance >= 3 from every X.
    fn safe_runs(&self) -> Vec<(usize, usize)> {
        let n = self.cells.len();
        let mut safe = vec![true; n];
        for (i, _) in self.cells.iter().enumerate().filter(|&(_, &x)| x) {
            for s in &mut safe[i.saturating_sub(2)..(i + 3).min(n)] {
                *s = false;
            }
        }
        let mut runs = Vec::new();
        let mut i = 0;
        while i < n {
            if safe[i] {
                let start = i;
                while i < n && safe[i] {
                    i += 1;
                }
                runs.push((start, i - start));
            } else {
                i += 1;
            }
        }
        runs
    }

    fn after(&self, c: usize) -> Treblecross {
        let mut p = self.clone();
        p.cells[c] = true;
        p
    }

    /// Literal game-tree search, for strips shorter than 3 (at most 2 cells).
    fn tiny_to_move_wins(&self) -> bool {
        match self.status() {
            Status::Over { to_move_wins } => to_move_wins,
            Status::Ongoing => self
                .empty_cells()
                .any(|c| !self.after(c).tiny_to_move_wins()),
        }
    }

    /// True when the player to move wins (the position must be ongoing).
    fn wins(&self) -> bool {
        if self.cells.len() < 3 {
            return self.tiny_to_move_wins();
        }
        if self.completing_cells().next().is_some() {
            return true;
        }
        self.safe_runs().iter().fold(0, |x, &(_, k)| x ^ g_of(k)) != 0
    }
}

impl Rules for Treblecross {
    type Move = CellMove;

    fn parse_move(&self, v: &Value) -> Result<CellMove, MoveError> {
        CellMove::parse(v).map_err(malformed)
    }

    fn check(&self, mv: &CellMove) -> Result<(), MoveError> {
        if self.status() != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        match self.cells.get(mv.cell) {
            None => Err(MoveError::NoSuch {
                what: "cell",
                index: mv.cell as u64,
                count: self.cells.len() as u64,
                first: 0,
            }),
            Some(true) => Err(MoveError::forbidden(format!(
                "cell {} already has an X: a move must mark an empty cell",
                mv.cell
            ))),
            Some(false) => Ok(()),
        }
    }

    fn apply_checked(&mut self, mv: &CellMove) {
        self.cells[mv.cell] = true;
    }

    fn status(&self) -> Status {
        // Three in a row was made by the player who just moved; a full strip
        // without one leaves the player to move without a move.
        if self.three_in_a_row().is_some() || self.cells.iter().all(|&x| x) {
            Status::Over {
                to_move_wins: false,
            }
        } else {
            Status::Ongoing
        }
    }

    fn legal_moves(&self, limit: usize) -> MoveList<CellMove> {
        let mut out = Collector::new(limit);
        if self.status() == Status::Ongoing {
            for cell in self.empty_cells() {
                if !out.push(CellMove { cell }) {
                    break;
                }
            }
        }
        out.finish()
    }

    fn normal_play(&self) -> bool {
        false
    }

    fn to_json(&self) -> Value {
        if self.cells.iter().all(|&x| !x) {
            json!({"game": "treblecross", "length": self.cells.len()})
        } else {
            let board: String = self
                .cells
                .iter()
                .map(|&x| if x { 'X' } else { '.' })
                .collect();
            json!({"game": "treblecross", "board": board})
        }
    }
}

impl Strategy for Treblecross {
    fn outcome(&self) -> Outcome {
        match self.status() {
            Status::Over { to_move_wins } => Outcome::from_to_move_wins(to_move_wins),
            Status::Ongoing => Outcome::from_to_move_wins(self.wins()),
        }
    }

    fn grundy(&self) -> Option<u64> {
        None
    }

    fn winning_moves(&self, limit: usize) -> MoveList<CellMove> {
        let mut out = Collector::new(limit);
        if self.status() != Status::Ongoing {
            return out.finish();
        }
        if self.cells.len() < 3 {
            for cell in self.empty_cells() {
                if !self.after(cell).tiny_to_move_wins() && !out.push(CellMove { cell }) {
                    break;
                }
            }
            return out.finish();
        }
        let mut completing = self.completing_cells().peekable();
        if completing.peek().is_some() {
            // Any other move leaves the same completion to the opponent.
            for cell in completing {
                if !out.push(CellMove { cell }) {
                    break;
                }
            }
            return out.finish();
        }
        // Unsafe moves lose at once, so only safe cells can win: those that
        // bring the xor of the runs' values to 0.
        let runs = self.safe_runs();
        let x = runs.iter().fold(0, |x, &(_, k)| x ^ g_of(k));
        if x == 0 {
            return out.finish();
        }
        for &(start, k) in &runs {
            let rest = x ^ g_of(k);
            for i in 1..=k {
                if rest == g_after(k, i)
                    && !out.push(CellMove {
                        cell: start + i - 1,
                    })
                {
                    return out.finish();
                }
            }
        }
        out.finish()
    }

    fn best_move(&self) -> Option<CellMove> {
        if let Some(m) = self.winning_moves(1).moves.into_iter().next() {
            return Some(m);
        }
        if self.status() != Status::Ongoing {
            return None;
        }
        // Lost anyway: the first cell of the longest safe run hands over no
        // immediate win and removes the fewest safe cells; with no safe cell
        // left any empty cell will do.
        let cell = self
            .safe_runs()
            .iter()
            .max_by_key(|&&(start, k)| (k, std::cmp::Reverse(start)))
            .map(|&(start, _)| start)
            .or_else(|| self.empty_cells().next())?;
        Some(CellMove { cell })
    }
}

impl Entry for Treblecross {
    const GAMES: &'static [GameId] = GAMES;

    fn read(o: &mut Obj, _id: &str) -> Result<Self, Fail> {
        Treblecross::from_spec(o)
    }

    fn random(id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError> {
        let length = rng.range((2 * s / 5).max(1), s);
        Ok(json!({"game": id, "length": length}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octal_0007_values() {
        // The start of the Grundy sequence of Treblecross (octal game 0.007).
        let g: Vec<u64> = (0..=12).map(g_of).collect();
        assert_eq!(g, [0, 1, 1, 1, 2, 2, 0, 3, 3, 1, 1, 1, 0]);
    }
}
