//! The report on a position that `grundy analyze` prints and hints show.

use serde::Serialize;

use crate::game::{Outcome, Strategy};
use crate::games::misere::Method;
use crate::games::position::{Move, Position};
use crate::games::twist::Twist;

/// Outcome, Grundy value, winning moves and the perfect player's move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Analysis {
    /// "N": the player to move wins; "P": the player to move loses.
    pub outcome: Outcome,
    /// The Grundy value where the theory gives it cheaply, else null.
    pub grundy: Option<u64>,
    /// Moves to positions the opponent loses (at most the requested limit).
    /// Twist's splits are listed once per set of heap sizes, largest first:
    /// `[5, 4, 1]` stands for `[1, 4, 5]` and every other order too.
    pub winning_moves: Vec<Move>,
    /// How many winning moves there are, when `winning_moves` lists them all;
    /// null when the listing was cut short.
    pub winning_move_count: Option<usize>,
    /// The move the perfect player makes here (null when the game is over).
    pub best_move: Option<Move>,
    /// How a misère position was decided (`genus`, `quotient` or `search`,
    /// docs/games.md "Misère play"); absent in normal play.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
}

impl Analysis {
    /// Analyses `position`, listing at most `limit` winning moves.
    pub fn of(position: &Position, limit: usize) -> Analysis {
        let winning = match position {
            // The order of the heaps of a split changes nothing: one of each.
            Position::Twist(t) => t.distinct_winning_moves(limit).map(Move::Twist),
            _ => position.winning_moves(limit),
        };
        Analysis {
            outcome: position.outcome(),
            grundy: position.grundy(),
            winning_move_count: winning.complete.then_some(winning.moves.len()),
            winning_moves: winning.moves,
            best_move: position.best_move(),
            method: misere_method(position),
        }
    }
}

/// Which method decides a misère position; None in normal play. Misère Nim
/// is the tame game itself (genus theory at its simplest: Bouton's rule).
pub fn misere_method(position: &Position) -> Option<Method> {
    match position {
        Position::Nim(n) if n.misere => Some(Method::Genus),
        Position::Heaps(h) => h.misere_method(),
        Position::Graph(g) => g.misere_method(),
        Position::Sum(s) => s.misere_method(),
        _ => None,
    }
}

/// One independent part of a position that is a sum of games, with its Grundy
/// value: the rows of the binary table that shows why a position is won.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Component {
    pub label: String,
    pub value: u64,
}

/// The parts whose values xor to the position's value, for the families that are
/// visibly sums (Nim heaps, heaps under rules, staircase pairs, graph tokens,
/// twist after the split, the heads of a coin-turning game, sums of games:
/// one row per part). Misère Nim lists
/// its heaps too: the table guides play until only heaps of 1 remain. None for
/// the other families, and for misère `heaps` and `graph`, whose outcome no xor
/// of values gives.
pub fn components(position: &Position) -> Option<Vec<Component>> {
    match position {
        Position::Heaps(h) if h.misere.is_some() => return None,
        Position::Graph(g) if g.misere_method().is_some() => return None,
        Position::Sum(s) if s.misere.is_some() => return None,
        _ => {}
    }
    let part = |label: String, value: u64| Component { label, value };
    let heaps = |sizes: &[u64]| {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &h)| part(format!("heap {i}"), h))
            .collect()
    };
    Some(match position {
        Position::Nim(n) => heaps(&n.heaps),
        Position::Twist(Twist::Split(h)) => heaps(h),
        Position::Heaps(h) => h
            .heaps
            .iter()
            .zip(h.values())
            .enumerate()
            .map(|(i, (heap, g))| {
                part(
                    format!("heap {i} ({} under {})", heap.size, heap.rule.kind),
                    g,
                )
            })
            .collect(),
        Position::Staircase(s) => s
            .pair_gaps()
            .into_iter()
            .map(|(lo, hi, gap)| part(format!("pair {lo}..{hi}"), gap))
            .collect(),
        Position::Graph(g) => g
            .tokens
            .iter()
            .enumerate()
            .map(|(t, &v)| {
                part(
                    format!("token {t} at {v}"),
                    g.vertex_value(v).unwrap_or(0) as u64,
                )
            })
            .collect(),
        Position::Sum(s) => s
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| part(format!("part {i}: {}", p.label()), p.value()))
            .collect(),
        Position::Coins(c) => c
            .head_values()
            .into_iter()
            .map(|(coin, v)| part(format!("heads at {coin}"), v))
            .collect(),
        _ => return None,
    })
}
