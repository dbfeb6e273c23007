//! `staircase`: Georgia and Bob (POJ 1704). Pieces sit on distinct cells of a
//! 1×M strip (cells numbered from 1); a move slides one piece left, never onto
//! or past another piece.
//!
//! Strategy: sort the pieces and pair them from the right (the leftmost piece
//! pairs with cell 0 when the count is odd). The empty cells inside each pair
//! are a Nim heap: moving a pair's right piece shrinks its heap, moving a
//! pair's left piece grows it (a reversible move that changes no other heap,
//! since the cells between pairs count for nothing). Every move changes exactly
//! one heap, so the Grundy value is the xor of the pairs' gaps.

use serde::Serialize;
use serde_json::{json, Value};

use crate::draw::{distinct, SplitMix64};
use crate::error::{MoveError, SpecError};
use crate::game::{Collector, MoveList, Outcome, Rules, Status, Strategy, Summand};
use crate::games::{Entry, GameId};
use crate::json::{fail, index, u64_at, Fail, Obj};
use crate::limits::{MAX_CELL, MAX_SMALL_HEAPS};

use super::nim::malformed;

/// The game ids of this family (with its presets, if any), for the
/// catalogue ([`crate::games::catalogue`]).
pub const GAMES: &[GameId] = &[GameId::new("staircase", "Staircase Nim", 15, MAX_CELL)
    .in_mix(MAX_CELL)
    .over_at_1()];

/// The pieces' cells, sorted ascending, distinct, each at least 1.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Staircase {
    pub pieces: Vec<u64>,
}

/// `{"from": c, "to": d}`: slide the piece on cell `c` left to cell `d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct SlideMove {
    pub from: u64,
    pub to: u64,
}

impl SlideMove {
    pub fn parse(v: &Value) -> Result<Self, Fail> {
        let mut o = Obj::new(v, "move")?;
        let from = o.req_u64("from", u64::MAX)?;
        let to = o.req_u64("to", u64::MAX)?;
        Ok(SlideMove { from, to })
    }
}

/// One pair of the strategy: `lo` is cell 0, not a piece, for the leftmost
/// piece's partner when the count is odd.
struct Pair {
    lo: u64,
    lo_is_piece: bool,
    hi: u64,
    /// The cell just left of which `lo` may move: the piece before it, or 0.
    floor: u64,
}

impl Pair {
    fn gap(&self) -> u64 {
        self.hi - self.lo - 1
    }
}

impl Staircase {
    pub fn from_spec(o: &mut Obj) -> Result<Self, Fail> {
        let path = o.path("pieces");
        let raw = o.req("pieces")?;
        let items = crate::json::array_at(raw, &path, MAX_SMALL_HEAPS)?;
        let mut cells = Vec::with_capacity(items.len());
        for (i, v) in items.iter().enumerate() {
            let at = index(&path, i);
            let c = u64_at(v, &at, MAX_CELL)?;
            if c == 0 {
                return fail(&at, "cell 0 is off the strip; cells are numbered from 1");
            }
            cells.push((c, i));
        }
        cells.sort_unstable();
        for w in cells.windows(2) {
            if w[0].0 == w[1].0 {
                let (first, second) = (w[0].1.min(w[1].1), w[0].1.max(w[1].1));
                return fail(
                    &index(&path, second),
                    format!(
                        "cell {} already holds a piece ({}); pieces must be on distinct cells",
                        w[0].0,
                        index(&path, first)
                    ),
                );
            }
        }
        Ok(Staircase {
            pieces: cells.into_iter().map(|(c, _)| c).collect(),
        })
    }

    /// The pairs, from the right.
    fn pairs(&self) -> Vec<Pair> {
        let p = &self.pieces;
        let mut out = Vec::with_capacity(p.len() / 2 + 1);
        let mut hi = p.len();
        while hi >= 2 {
            let lo = hi - 2;
            out.push(Pair {
                lo: p[lo],
                lo_is_piece: true,
                hi: p[hi - 1],
                floor: if lo == 0 { 0 } else { p[lo - 1] },
            });
            hi -= 2;
        }
        if hi == 1 {
            out.push(Pair {
                lo: 0,
                lo_is_piece: false,
                hi: p[0],
                floor: 0,
            });
        }
        out
    }

    /// The pairs as (left cell, right cell, gap), rightmost pair first; the left
    /// cell of an odd leftmost piece's pair is 0 (the wall).
    pub fn pair_gaps(&self) -> Vec<(u64, u64, u64)> {
        self.pairs().iter().map(|p| (p.lo, p.hi, p.gap())).collect()
    }

    pub fn nim_sum(&self) -> u64 {
        self.pairs().iter().fold(0, |acc, pair| acc ^ pair.gap())
    }

    /// The cell left of piece `i`'s leftmost landing cell (the previous piece, or 0).
    fn floor_of(&self, i: usize) -> u64 {
        if i == 0 {
            0
        } else {
            self.pieces[i - 1]
        }
    }
}

impl Rules for Staircase {
    type Move = SlideMove;

    fn parse_move(&self, v: &Value) -> Result<SlideMove, MoveError> {
        SlideMove::parse(v).map_err(malformed)
    }

    fn check(&self, mv: &SlideMove) -> Result<(), MoveError> {
        if self.status() != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        let i = self
            .pieces
            .binary_search(&mv.from)
            .map_err(|_| MoveError::forbidden(format!("there is no piece on cell {}", mv.from)))?;
        if mv.to == 0 {
            return Err(MoveError::forbidden(
                "cell 0 is off the strip; cells are numbered from 1",
            ));
        }
        if mv.to >= mv.from {
            return Err(MoveError::forbidden(format!(
                "pieces move left: the piece on cell {} can only go to a lower cell, not {}",
                mv.from, mv.to
            )));
        }
        let floor = self.floor_of(i);
        if mv.to <= floor {
            return Err(MoveError::forbidden(format!(
                "the piece on cell {floor} is in the way: a piece may not land on or pass another piece"
            )));
        }
        Ok(())
    }

    fn apply_checked(&mut self, mv: &SlideMove) {
        // Sliding between its neighbours keeps the list sorted.
        if let Ok(i) = self.pieces.binary_search(&mv.from) {
            self.pieces[i] = mv.to;
        }
    }

    fn status(&self) -> Status {
        // Over when the pieces fill cells 1..=n (distinct cells from 1, so the
        // last one tells).
        let packed = self.pieces.last().copied().unwrap_or(0) == self.pieces.len() as u64;
        if packed {
            Status::Over {
                to_move_wins: false,
            }
        } else {
            Status::Ongoing
        }
    }

    fn legal_moves(&self, limit: usize) -> MoveList<SlideMove> {
        let mut out = Collector::new(limit);
        for (i, &from) in self.pieces.iter().enumerate() {
            for to in (self.floor_of(i) + 1..from).rev() {
                if !out.push(SlideMove { from, to }) {
                    return out.finish();
                }
            }
        }
        out.finish()
    }

    fn to_json(&self) -> Value {
        json!({"game": "staircase", "pieces": self.pieces})
    }
}

impl Summand for Staircase {
    fn value(&self) -> u64 {
        self.nim_sum()
    }

    fn moves_to(&self, target: u64, limit: usize) -> MoveList<SlideMove> {
        let mut out = Collector::new(limit);
        let pairs = self.pairs();
        let x = pairs.iter().fold(target, |acc, pair| acc ^ pair.gap());
        if x == 0 {
            return out.finish();
        }
        for pair in &pairs {
            let (g, t) = (pair.gap(), pair.gap() ^ x);
            let mv = if t < g {
                // Shrink the gap: the right piece moves to lo + 1 + t.
                Some(SlideMove {
                    from: pair.hi,
                    to: pair.lo + 1 + t,
                })
            } else {
                // Grow the gap: the left piece (if it is a piece, and has room)
                // moves to hi - 1 - t.
                pair.hi
                    .checked_sub(1 + t)
                    .filter(|_| pair.lo_is_piece)
                    .filter(|&to| to > pair.floor)
                    .map(|to| SlideMove { from: pair.lo, to })
            };
            if let Some(mv) = mv {
                if !out.push(mv) {
                    return out.finish();
                }
            }
        }
        out.finish()
    }
}

impl Strategy for Staircase {
    fn outcome(&self) -> Outcome {
        Outcome::from_to_move_wins(self.nim_sum() != 0)
    }

    fn grundy(&self) -> Option<u64> {
        Some(self.nim_sum())
    }

    fn winning_moves(&self, limit: usize) -> MoveList<SlideMove> {
        self.moves_to(0, limit)
    }

    fn best_move(&self) -> Option<SlideMove> {
        if let Some(mv) = self.winning_moves(1).moves.into_iter().next() {
            return Some(mv);
        }
        // Lost: one cell left with the rightmost piece that can move. Every
        // one-cell move shortens the longest possible game by just one.
        (0..self.pieces.len())
            .rev()
            .find(|&i| self.pieces[i] - 1 > self.floor_of(i))
            .map(|i| SlideMove {
                from: self.pieces[i],
                to: self.pieces[i] - 1,
            })
    }
}

impl Entry for Staircase {
    const GAMES: &'static [GameId] = GAMES;

    fn read(o: &mut Obj, _id: &str) -> Result<Self, Fail> {
        Staircase::from_spec(o)
    }

    fn random(id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError> {
        Ok(json!({"game": id, "pieces": random_pieces(rng, s)}))
    }
}

/// 2 to 5 pieces (at most s - 1 when s >= 2) on distinct cells of `1..=s`,
/// ascending, not all packed at the left end when `s` leaves room.
fn random_pieces(rng: &mut SplitMix64, s: u64) -> Vec<u64> {
    let cap = if s >= 2 { s - 1 } else { 1 };
    let count = rng.range(2, 5).min(cap) as usize;
    let mut pieces = distinct(rng, count, 1, s);
    pieces.sort_unstable();
    let n = count as u64;
    if pieces[count - 1] == n && s > n {
        // Cells 1..=n, nobody can move: the top piece goes further right.
        pieces[count - 1] = rng.range(n + 1, s);
    }
    pieces
}
