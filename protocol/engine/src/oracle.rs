//! A generic exhaustive solver that uses nothing but the move generator: the test
//! oracle for every family's strategy. Memoised depth-first search; meant for
//! small positions only.

use std::collections::HashMap;

use crate::game::{Rules, Status};

/// What the exhaustive search found for one position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Solved {
    pub to_move_wins: bool,
    /// The Grundy value (mex of the options' values), for normal-play games.
    pub grundy: Option<u64>,
}

pub struct Solver<G: Rules> {
    memo: HashMap<G, Solved>,
    /// Refuse positions with more moves than this (the search is exhaustive).
    pub move_limit: usize,
}

impl<G: Rules> Default for Solver<G> {
    fn default() -> Self {
        Solver {
            memo: HashMap::new(),
            move_limit: 100_000,
        }
    }
}

impl<G: Rules> Solver<G> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every child of a position, with the move leading to it.
    pub fn children(&self, g: &G) -> Result<Vec<(G::Move, G)>, String> {
        let moves = g.legal_moves(self.move_limit);
        if !moves.complete {
            return Err(format!(
                "{g:?} has more than {} moves: too large for the oracle",
                self.move_limit
            ));
        }
        moves
            .moves
            .into_iter()
            .map(|m| {
                let mut child = g.clone();
                child
                    .play(&m)
                    .map_err(|e| format!("generated move {m:?} refused in {g:?}: {e}"))?;
                Ok((m, child))
            })
            .collect()
    }

    pub fn solve(&mut self, g: &G) -> Result<Solved, String> {
        if let Some(s) = self.memo.get(g) {
            return Ok(*s);
        }
        let solved = match g.status() {
            Status::Over { to_move_wins } => Solved {
                to_move_wins,
                grundy: g.normal_play().then_some(0),
            },
            Status::Ongoing => {
                let children = self.children(g)?;
                if children.is_empty() {
                    return Err(format!("{g:?} is ongoing but has no legal move"));
                }
                let mut to_move_wins = false;
                let mut values = Vec::with_capacity(children.len());
                for (_, child) in &children {
                    let s = self.solve(child)?;
                    to_move_wins |= !s.to_move_wins;
                    values.extend(s.grundy);
                }
                Solved {
                    to_move_wins,
                    grundy: g.normal_play().then(|| mex(&mut values)),
                }
            }
        };
        self.memo.insert(g.clone(), solved);
        Ok(solved)
    }

    /// The moves after which the player to move loses.
    pub fn winning_moves(&mut self, g: &G) -> Result<Vec<G::Move>, String> {
        let mut out = Vec::new();
        if g.status() != Status::Ongoing {
            return Ok(out);
        }
        for (m, child) in self.children(g)? {
            if !self.solve(&child)?.to_move_wins {
                out.push(m);
            }
        }
        Ok(out)
    }
}

/// The least natural number not among `values`.
pub fn mex(values: &mut [u64]) -> u64 {
    values.sort_unstable();
    let mut m = 0;
    for &v in values.iter() {
        if v == m {
            m += 1;
        } else if v > m {
            break;
        }
    }
    m
}
