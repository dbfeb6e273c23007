//! Exhaustive misère search: every position reachable from a start, solved
//! once, when the spec is read, and kept for the whole match.
//!
//! Positions are keyed by a canonical form (a sorted multiset of heaps or
//! tokens), so transpositions are solved once. The whole reachable set is
//! solved, not just enough to decide the start: every later position of the
//! match is then a lookup, and no query can run past the budget.

use std::collections::HashMap;
use std::hash::Hash;

/// The outcome of every position reachable from a start: true when the player
/// to move wins (in misère play a position with no move is such a win).
#[derive(Debug)]
pub struct Table<K> {
    wins: HashMap<K, bool>,
}

impl<K: Clone + Eq + Hash> Table<K> {
    /// Solves every position reachable from `start`; `children` lists a
    /// position's options (empty: no move, a win for the player to move), or
    /// None to give up. Err(budget) when more than `budget` positions are
    /// reachable, or `children` gave up.
    pub fn solve(
        start: K,
        mut children: impl FnMut(&K) -> Option<Vec<K>>,
        budget: usize,
    ) -> Result<Table<K>, usize> {
        let mut wins: HashMap<K, bool> = HashMap::new();
        // An explicit stack: a path in a graph of 100,000 vertices is too deep
        // for recursion. Each frame: position, options, next option, won yet.
        let mut stack: Vec<(K, Vec<K>, usize, bool)> = Vec::new();
        let first = children(&start).ok_or(budget)?;
        stack.push((start, first, 0, false));
        while let Some(top) = stack.last_mut() {
            if top.2 < top.1.len() {
                let child = top.1[top.2].clone();
                top.2 += 1;
                match wins.get(&child) {
                    Some(&child_wins) => top.3 |= !child_wins,
                    None => {
                        if wins.len() + stack.len() >= budget {
                            return Err(budget);
                        }
                        let options = children(&child).ok_or(budget)?;
                        stack.push((child, options, 0, false));
                    }
                }
            } else {
                let (key, options, _, won) = stack.pop().expect("non-empty");
                let to_move_wins = won || options.is_empty();
                wins.insert(key, to_move_wins);
                if let Some(parent) = stack.last_mut() {
                    parent.3 |= !to_move_wins;
                }
            }
        }
        Ok(Table { wins })
    }

    /// Whether the player to move wins at `key`; None for a position the
    /// search never reached (not reachable from the start).
    pub fn to_move_wins(&self, key: &K) -> Option<bool> {
        self.wins.get(key).copied()
    }

    /// How many positions were solved.
    pub fn len(&self) -> usize {
        self.wins.len()
    }

    pub fn is_empty(&self) -> bool {
        self.wins.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Misère "take 1 or 2" from one heap: P exactly when n % 3 == 1.
    #[test]
    fn one_heap_take_one_or_two() {
        let t = Table::solve(
            20u32,
            |&n| Some((1..=2).filter(|&k| k <= n).map(|k| n - k).collect()),
            1000,
        )
        .unwrap();
        for n in 0..=20 {
            assert_eq!(t.to_move_wins(&n), Some(n % 3 != 1), "n = {n}");
        }
        assert!(Table::solve(20u32, |&n| Some((0..n).collect()), 5).is_err());
        assert!(Table::solve(20u32, |_| None, 5).is_err());
    }
}
