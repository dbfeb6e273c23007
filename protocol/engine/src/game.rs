//! The two interfaces every game family implements: [`Rules`] (what the moves
//! are and who has won) and [`Strategy`] (what perfect play is). The generic
//! exhaustive solver in [`crate::oracle`] is written against `Rules` alone, so it
//! can check every family's `Strategy`.

use std::fmt::Debug;
use std::hash::Hash;

use serde::Serialize;
use serde_json::Value;

use crate::error::MoveError;

/// Whether the game goes on, and if not, who won.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ongoing,
    /// The game is over. `to_move_wins` tells whether the player who would move
    /// next has won (misère Nim when the last stone is gone) or lost (normal play
    /// with no move left; Treblecross after the opponent's three in a row).
    Over {
        to_move_wins: bool,
    },
}

/// The outcome class of a position with perfect play on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Outcome {
    /// The player to move wins ("next").
    N,
    /// The player to move loses ("previous").
    P,
}

impl Outcome {
    pub fn from_to_move_wins(wins: bool) -> Self {
        if wins {
            Outcome::N
        } else {
            Outcome::P
        }
    }

    pub fn to_move_wins(self) -> bool {
        self == Outcome::N
    }
}

/// A list of moves that may have been cut short: move counts can be astronomical
/// (every odd amount from a heap of 2^63), so every listing takes a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveList<M> {
    pub moves: Vec<M>,
    /// True when `moves` holds every move asked for, false when the limit (or a
    /// search budget) cut the listing short.
    pub complete: bool,
}

impl<M> MoveList<M> {
    pub fn map<N>(self, f: impl FnMut(M) -> N) -> MoveList<N> {
        MoveList {
            moves: self.moves.into_iter().map(f).collect(),
            complete: self.complete,
        }
    }
}

/// Collects moves up to a limit. `push` answers false once the limit is reached,
/// so generators can stop early: `if !out.push(m) { return out.finish(); }`.
pub struct Collector<M> {
    moves: Vec<M>,
    limit: usize,
    complete: bool,
}

impl<M> Collector<M> {
    pub fn new(limit: usize) -> Self {
        Collector {
            moves: Vec::new(),
            limit,
            complete: true,
        }
    }

    /// Adds a move; false when the list is full (the move was not added).
    pub fn push(&mut self, m: M) -> bool {
        if self.moves.len() >= self.limit {
            self.complete = false;
            return false;
        }
        self.moves.push(m);
        true
    }

    /// True while more moves can be added.
    pub fn has_room(&self) -> bool {
        self.moves.len() < self.limit
    }

    /// Marks the listing as cut short for a reason other than the limit (a
    /// search budget ran out).
    pub fn mark_incomplete(&mut self) {
        self.complete = false;
    }

    pub fn finish(self) -> MoveList<M> {
        MoveList {
            moves: self.moves,
            complete: self.complete,
        }
    }
}

/// Winning moves of a family with no formula for listing them all: with `few`
/// (every legal move, when there are few enough to try) the exact list of those
/// `wins` accepts; otherwise the one move `constructive` finds, marked incomplete.
pub fn search_or_construct<M>(
    limit: usize,
    few: Option<Vec<M>>,
    mut wins: impl FnMut(&M) -> bool,
    constructive: impl FnOnce() -> Option<M>,
) -> MoveList<M> {
    let mut out = Collector::new(limit);
    match few {
        Some(moves) => {
            for m in moves {
                if wins(&m) && !out.push(m) {
                    break;
                }
            }
        }
        None => {
            if let Some(m) = constructive() {
                out.push(m);
            }
            out.mark_incomplete();
        }
    }
    out.finish()
}

/// The rules of one game family, as a position that knows its moves.
pub trait Rules: Clone + Eq + Hash + Debug {
    type Move: Clone + Eq + Hash + Debug + Serialize;

    /// Reads a move of this game from its JSON encoding (see docs/protocol.md).
    fn parse_move(&self, v: &Value) -> Result<Self::Move, MoveError>;

    /// Ok if the move is legal here, else the reason it is not.
    fn check(&self, mv: &Self::Move) -> Result<(), MoveError>;

    /// Plays a move that `check` accepted. Called with an unchecked move it may
    /// panic or corrupt the position, so only `play` calls it from outside.
    fn apply_checked(&mut self, mv: &Self::Move);

    /// Checks, then applies.
    fn play(&mut self, mv: &Self::Move) -> Result<(), MoveError> {
        self.check(mv)?;
        self.apply_checked(mv);
        Ok(())
    }

    fn status(&self) -> Status;

    /// Legal moves, at most `limit` of them. With the limit high enough the list is
    /// every legal move (the exhaustive solver relies on that on small positions).
    fn legal_moves(&self, limit: usize) -> MoveList<Self::Move>;

    /// Normal play: whoever cannot move loses, and a sum's value is the xor of
    /// its parts' Grundy values. False for misère Nim and Treblecross.
    fn normal_play(&self) -> bool {
        true
    }

    /// The position as JSON: a spec that starts here where the game has one,
    /// otherwise a description of the state.
    fn to_json(&self) -> Value;

    /// The text of [`to_json`](Rules::to_json), written to `out` (whose
    /// error, e.g. at a size limit, stops the writing). A family may write
    /// it without building the `Value` (the same text, its keys in the
    /// `Value`'s order): the server writes one for every move.
    fn write_json<W: std::io::Write>(&self, out: W) -> serde_json::Result<()> {
        serde_json::to_writer(out, &self.to_json())
    }
}

/// Perfect play. Every answer must agree with the exhaustive solver.
pub trait Strategy: Rules {
    fn outcome(&self) -> Outcome;

    /// The Grundy value, where the theory gives it cheaply.
    fn grundy(&self) -> Option<u64>;

    /// The moves to positions the player to move then loses, at most `limit`.
    fn winning_moves(&self, limit: usize) -> MoveList<Self::Move>;

    /// The move the perfect player makes: a winning move from an N-position; from
    /// a P-position a move that keeps the game long. None when the game is over.
    fn best_move(&self) -> Option<Self::Move>;
}

/// A normal-play game that can be one part of a sum: every position has a
/// Grundy value, and the moves to a position of a given value can be listed.
/// A winning move in a sum is a move in one part `i` to the value `g_i ^ total`
/// (which may be larger than `g_i` in games with reversible moves).
pub trait Summand: Rules {
    /// The position's Grundy value.
    fn value(&self) -> u64;

    /// The moves to positions of value `target`, at most `limit`.
    fn moves_to(&self, target: u64, limit: usize) -> MoveList<Self::Move>;
}
