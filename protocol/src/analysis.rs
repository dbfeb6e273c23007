//! The report on a position that `grundy analyze` prints and hints show.

use serde::Serialize;

use crate::game::{Outcome, Strategy};
use crate::position::{Move, Position};

/// Outcome, Grundy value, winning moves and the perfect player's move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Analysis {
    /// "N": the player to move wins; "P": the player to move loses.
    pub outcome: Outcome,
    /// The Grundy value where the theory gives it cheaply, else null.
    pub grundy: Option<u64>,
    /// Moves to positions the opponent loses (at most the requested limit).
    pub winning_moves: Vec<Move>,
    /// How many winning moves there are, when `winning_moves` lists them all;
    /// null when the listing was cut short.
    pub winning_move_count: Option<usize>,
    /// The move the perfect player makes here (null when the game is over).
    pub best_move: Option<Move>,
}

impl Analysis {
    /// Analyses `position`, listing at most `limit` winning moves.
    pub fn of(position: &Position, limit: usize) -> Analysis {
        let winning = position.winning_moves(limit);
        Analysis {
            outcome: position.outcome(),
            grundy: position.grundy(),
            winning_move_count: winning.complete.then_some(winning.moves.len()),
            winning_moves: winning.moves,
            best_move: position.best_move(),
        }
    }
}
