//! Grundy sequences of subtraction (`set`) and octal (`octal`) heap rules,
//! computed once per rule and shared by every match that uses it.
//!
//! Both kinds are described by the same "move shape": for each amount `k` a heap
//! may lose, whether the move may leave no heap, one heap, or two heaps. The
//! sequence is computed by dynamic programming and checked for periodicity; once
//! the Guy–Smith condition holds (preperiod `p`, period `q`, largest removal `t`:
//! the values have repeated up to `n = 2(p + q) + t` for rules that split, up to
//! `p + q + t` for those that do not) the sequence is *proven* periodic and every
//! heap size, however large, is answered from the table.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What removing `take` tokens may leave behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Removal {
    pub take: u64,
    /// The whole heap may go (only when `take` is the heap's size).
    pub none: bool,
    /// One non-empty heap may stay.
    pub one: bool,
    /// The rest may be split into two non-empty heaps.
    pub two: bool,
}

/// The removals of a rule, ascending by `take`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape {
    pub removals: Vec<Removal>,
}

impl Shape {
    /// The largest number of tokens one move removes.
    pub fn max_take(&self) -> u64 {
        self.removals.iter().map(|r| r.take).max().unwrap_or(0)
    }

    pub fn splits(&self) -> bool {
        self.removals.iter().any(|r| r.two)
    }
}

/// A computed Grundy sequence.
#[derive(Debug)]
pub struct Sequence {
    values: Vec<u32>,
    /// `(preperiod, period)` once proven.
    period: Option<(u64, u64)>,
}

impl Sequence {
    /// Values are known for heaps of this size and below (every size when proven
    /// periodic).
    pub fn known_up_to(&self) -> u64 {
        if self.period.is_some() {
            u64::MAX
        } else {
            self.values.len() as u64 - 1
        }
    }

    pub fn period(&self) -> Option<(u64, u64)> {
        self.period
    }

    /// The values computed by the dynamic programme (a prefix of the sequence).
    pub fn prefix(&self) -> &[u32] {
        &self.values
    }

    /// g(n), or None beyond the known range.
    pub fn get(&self, n: u64) -> Option<u64> {
        if let Some(&v) = self.values.get(usize::try_from(n).ok()?) {
            return Some(v as u64);
        }
        let (p, q) = self.period?;
        let i = p + (n - p) % q;
        self.values.get(i as usize).map(|&v| v as u64)
    }

    /// Computes the sequence until proven periodic or until `cap`.
    pub fn compute(shape: &Shape, cap: u64) -> Sequence {
        let mut values: Vec<u32> = Vec::new();
        let mut seen: Vec<u32> = Vec::new();
        let mut target = 64u64.min(cap);
        loop {
            extend(shape, &mut values, &mut seen, target as usize + 1);
            if let Some(period) = prove_period(shape, &values) {
                return Sequence {
                    values,
                    period: Some(period),
                };
            }
            if target >= cap {
                return Sequence {
                    values,
                    period: None,
                };
            }
            target = (target * 2).min(cap);
        }
    }
}

/// Extends `values` to `len` entries.
fn extend(shape: &Shape, values: &mut Vec<u32>, seen: &mut Vec<u32>, len: usize) {
    for n in values.len()..len {
        // `seen[v] == stamp` marks option value v as reachable from n.
        let stamp = n as u32 + 1;
        let mark = |v: u32, seen: &mut Vec<u32>| {
            let v = v as usize;
            if v >= seen.len() {
                seen.resize(v + 1, 0);
            }
            seen[v] = stamp;
        };
        for r in &shape.removals {
            let Some(rest) = (n as u64).checked_sub(r.take) else {
                break;
            };
            let rest = rest as usize;
            if r.none && rest == 0 {
                mark(0, seen);
            }
            if r.one && rest > 0 {
                mark(values[rest], seen);
            }
            if r.two {
                for a in 1..=rest / 2 {
                    mark(values[a] ^ values[rest - a], seen);
                }
            }
        }
        let mut g = 0;
        while (g as usize) < seen.len() && seen[g as usize] == stamp {
            g += 1;
        }
        values.push(g);
    }
}

/// The smallest period (with its least preperiod) that the computed values prove.
fn prove_period(shape: &Shape, values: &[u32]) -> Option<(u64, u64)> {
    let n = values.len();
    let t = shape.max_take() as usize;
    let splits = shape.splits();
    for q in 1..n / 2 {
        // Least p with values[i] == values[i + q] for every p <= i < n - q.
        let mut p = n - q;
        while p > 0 && values[p - 1] == values[p - 1 + q] {
            p -= 1;
        }
        let needed = if splits { 2 * (p + q) + t } else { p + q + t };
        // `values` holds g(0..n), so the repetition is checked up to n - 1.
        if n > needed {
            return Some((p as u64, q as u64));
        }
    }
    None
}

/// The shared cache: one sequence per shape, computed once, outside the lock.
pub fn shared(shape: &Shape, cap: u64) -> Arc<Sequence> {
    type Cell = Arc<OnceLock<Arc<Sequence>>>;
    static CACHE: OnceLock<Mutex<HashMap<(Shape, u64), Cell>>> = OnceLock::new();
    // Positions keep their own Arc of the sequence, so forgetting the cache only
    // costs a rebuild; the bound keeps a stream of distinct rules from growing
    // memory without end.
    const MAX_CACHED: usize = 256;
    let cell: Cell = {
        let mut map = CACHE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if map.len() >= MAX_CACHED && !map.contains_key(&(shape.clone(), cap)) {
            map.clear();
        }
        map.entry((shape.clone(), cap)).or_default().clone()
    };
    cell.get_or_init(|| Arc::new(Sequence::compute(shape, cap)))
        .clone()
}
