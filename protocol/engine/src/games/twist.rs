//! `twist`: split, then Nim. The first move splits M stones into any number of
//! non-empty heaps (an ordered list of sizes summing to M); from then on the
//! game is Nim on those heaps.
//!
//! Strategy: a sum and a xor of the same numbers have the same parity, so an
//! odd M can only be split into an odd nim-sum (never 0: the splitter loses),
//! while an even M splits into two equal heaps (nim-sum 0: the splitter wins).
//! The unsplit game's Grundy value is the mex of the splits' nim-sums: 1 for
//! even M (0 is reachable, 1 is not), 0 for odd M. After the split, Bouton.

use serde::Serialize;
use serde_json::{json, Value};

use crate::count::count;
use crate::draw::SplitMix64;
use crate::error::{MoveError, SpecError};
use crate::game::{Collector, MoveList, Outcome, Rules, Status, Strategy};
use crate::games::{Entry, GameId};
use crate::json::{array_at, index, u64_at, Fail, Obj};
use crate::limits::{MAX_HEAPS, MAX_TWIST_STONES};
use crate::sums::nim_sum;

use super::nim::{malformed, patient_move, take_moves, TakeMove};

/// The game ids of this family (with its presets, if any), for the
/// catalogue ([`crate::games::catalogue`]).
pub const GAMES: &[GameId] = &[GameId::new("twist", "Twist", 20, MAX_TWIST_STONES)];

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Twist {
    /// M stones, not split yet.
    Unsplit(u64),
    /// Nim on the heaps of the split.
    Split(Vec<u64>),
}

/// `{"split": [sizes...]}` before the split, `{"heap": i, "take": k}` after it.
/// A split is compared as written: `[1, 2]` and `[2, 1]` are different moves.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum TwistMove {
    Split { split: Vec<u64> },
    Take(TakeMove),
}

impl TwistMove {
    pub fn parse(v: &Value) -> Result<Self, Fail> {
        let mut o = Obj::new(v, "move")?;
        if let Some(raw) = o.opt("split") {
            let path = o.path("split");
            let split = array_at(raw, &path, MAX_HEAPS)?
                .iter()
                .enumerate()
                .map(|(i, x)| u64_at(x, &index(&path, i), u64::MAX))
                .collect::<Result<Vec<u64>, Fail>>()?;
            return Ok(TwistMove::Split { split });
        }
        TakeMove::parse(v).map(TwistMove::Take)
    }
}

impl Twist {
    pub fn from_spec(o: &mut Obj) -> Result<Self, Fail> {
        let stones = o.req_u64("stones", MAX_TWIST_STONES)?;
        if stones == 0 {
            return crate::json::fail(&o.path("stones"), "must be at least 1, got 0");
        }
        Ok(Twist::Unsplit(stones))
    }

    /// The split from a lost (odd) M: two equal big heaps and a single stone,
    /// nim-sum 1, so the opponent has at most three winning moves and, after
    /// one, a long mirrored game to play without a slip.
    fn patient_split(m: u64) -> Vec<u64> {
        if m == 1 {
            vec![1]
        } else {
            vec![m / 2, m / 2, 1]
        }
    }
}

/// Enumerates splits of `m` into at most `max_parts` parts in reverse
/// lexicographic order (`[m]` first), pushing each into `out` until it is
/// full. With `zero_xor`, only splits with nim-sum 0, found without visiting
/// dead ends: every prefix kept can still be completed. With `largest_first`,
/// only splits whose sizes never grow (`[5, 4, 1]`, not `[1, 4, 5]`): each
/// set of sizes once. (A prefix kept can then still meet a dead end: the
/// completion found for it may need a part larger than the last; the search
/// backs out of it.) Iterative, so a split into thousands of parts does not
/// deepen the stack.
fn splits(
    m: u64,
    zero_xor: bool,
    largest_first: bool,
    max_parts: usize,
    out: &mut Collector<TwistMove>,
) {
    let mut parts: Vec<u64> = Vec::new();
    // next[l]: the largest size still to try for part l.
    let mut next: Vec<u64> = vec![m];
    let (mut rem, mut x) = (m, 0u64);
    loop {
        let level = parts.len();
        let Some(&cap) = next.last() else { return };
        let pick = largest_part(cap, rem, x, level + 1, max_parts, zero_xor);
        match pick {
            Some(a) => {
                if let Some(n) = next.last_mut() {
                    *n = a - 1;
                }
                parts.push(a);
                rem -= a;
                x ^= a;
                if rem == 0 {
                    if !out.push(TwistMove::Split {
                        split: parts.clone(),
                    }) {
                        return;
                    }
                    if let Some(a) = parts.pop() {
                        rem += a;
                        x ^= a;
                    }
                } else {
                    next.push(if largest_first { rem.min(a) } else { rem });
                }
            }
            None => {
                next.pop();
                match parts.pop() {
                    Some(a) => {
                        rem += a;
                        x ^= a;
                    }
                    None => return,
                }
            }
        }
    }
}

/// The largest size `a` in `1..=cap` for the `used`-th part (counting it, of
/// at most `max_parts`) such that the split can still be completed from the
/// `rem` stones left and the nim-sum `x` so far (to nim-sum 0 when `zero_xor`).
fn largest_part(
    cap: u64,
    rem: u64,
    x: u64,
    used: usize,
    max_parts: usize,
    zero_xor: bool,
) -> Option<u64> {
    let cap = cap.min(rem);
    if cap == 0 || used > max_parts {
        return None;
    }
    if !zero_xor {
        // Any size works while another part may follow; the last allowed part
        // must take everything.
        return if used < max_parts {
            Some(cap)
        } else {
            (cap == rem).then_some(rem)
        };
    }
    if used + 3 <= max_parts {
        // Three more parts are always enough: the rest r' can be completed to
        // nim-sum 0 iff r' >= x' (the xor so far), and r - a >= x ^ a reads
        // (a & !x) <= (r - x) / 2 (using x ^ a = x + a - 2 (x & a)).
        let d = rem.checked_sub(x)?;
        if d % 2 == 1 {
            return None;
        }
        return largest_with_masked_at_most(cap, !x, d / 2).filter(|&a| a >= 1);
    }
    // Within three parts of the limit (never reached in practice): try sizes
    // one by one.
    (1..=cap)
        .rev()
        .find(|&a| completable(rem - a, x ^ a, max_parts - used))
}

/// Whether `r` stones can be split into at most `parts` parts with nim-sum `x`.
fn completable(r: u64, x: u64, parts: usize) -> bool {
    if r == 0 {
        return x == 0;
    }
    if r < x || (r - x) % 2 == 1 {
        return false;
    }
    let d = (r - x) / 2;
    let need = if d == 0 {
        1
    } else if d & x == 0 {
        2
    } else {
        3
    };
    need <= parts
}

/// The largest `a <= cap` with `a & mask <= d`.
fn largest_with_masked_at_most(cap: u64, mask: u64, d: u64) -> Option<u64> {
    if cap & mask <= d {
        return Some(cap);
    }
    // Keep cap's bits above some set bit i, clear bit i, then fill below: the
    // bits outside the mask freely, the masked ones as high as d allows. The
    // lowest such i that works gives the largest a.
    for i in 0..64 {
        if cap >> i & 1 == 0 {
            continue;
        }
        let high = if i == 63 {
            0
        } else {
            cap >> (i + 1) << (i + 1)
        };
        let h = high & mask;
        if h > d {
            continue;
        }
        let low = (1u64 << i) - 1;
        let mut fill = low & !mask;
        let room = d - h;
        let mut masked = 0u64;
        for b in (0..i).rev() {
            let bit = 1u64 << b;
            if mask & bit != 0 && masked + bit <= room {
                masked += bit;
            }
        }
        fill |= masked;
        return Some(high | fill);
    }
    None
}

impl Twist {
    /// The winning moves with each split listed once, whatever the order of
    /// its heaps (largest first): `[5, 4, 1]` and `[1, 4, 5]` leave the same
    /// game. After the split, as `winning_moves`.
    pub fn distinct_winning_moves(&self, limit: usize) -> MoveList<TwistMove> {
        match self {
            Twist::Unsplit(m) if m % 2 == 0 => {
                let mut out = Collector::new(limit);
                splits(*m, true, true, MAX_HEAPS, &mut out);
                out.finish()
            }
            _ => self.winning_moves(limit),
        }
    }
}

impl Rules for Twist {
    type Move = TwistMove;

    fn parse_move(&self, v: &Value) -> Result<TwistMove, MoveError> {
        TwistMove::parse(v).map_err(malformed)
    }

    fn check(&self, mv: &TwistMove) -> Result<(), MoveError> {
        if self.status() != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        match (self, mv) {
            (Twist::Unsplit(m), TwistMove::Split { split }) => {
                if split.is_empty() {
                    return Err(MoveError::forbidden("a split needs at least one heap"));
                }
                if let Some(i) = split.iter().position(|&h| h == 0) {
                    return Err(MoveError::forbidden(format!(
                        "every heap of a split must be non-empty, but split[{i}] is 0"
                    )));
                }
                let sum = split.iter().try_fold(0u64, |acc, &h| acc.checked_add(h));
                if sum != Some(*m) {
                    return Err(MoveError::forbidden(format!(
                        "the heaps of a split must add up to the {}, not {}",
                        count(*m, "stone", "stones"),
                        sum.map_or_else(|| "more than 2^64".to_string(), |s| s.to_string())
                    )));
                }
                Ok(())
            }
            (Twist::Unsplit(m), TwistMove::Take(_)) => Err(MoveError::forbidden(format!(
                "the {} must be split first: the first move is {{\"split\": [sizes...]}}",
                count(*m, "stone", "stones")
            ))),
            (Twist::Split(_), TwistMove::Split { .. }) => Err(MoveError::forbidden(
                "the stones are already split; now take from one heap",
            )),
            (Twist::Split(heaps), TwistMove::Take(t)) => t.check_against(heaps),
        }
    }

    fn apply_checked(&mut self, mv: &TwistMove) {
        match (&mut *self, mv) {
            (Twist::Unsplit(_), TwistMove::Split { split }) => *self = Twist::Split(split.clone()),
            (Twist::Split(heaps), TwistMove::Take(t)) => heaps[t.heap] -= t.take,
            _ => {}
        }
    }

    fn status(&self) -> Status {
        match self {
            Twist::Split(heaps) if heaps.iter().all(|&h| h == 0) => Status::Over {
                to_move_wins: false,
            },
            _ => Status::Ongoing,
        }
    }

    fn legal_moves(&self, limit: usize) -> MoveList<TwistMove> {
        match self {
            Twist::Unsplit(m) => {
                let mut out = Collector::new(limit);
                splits(*m, false, false, MAX_HEAPS, &mut out);
                out.finish()
            }
            Twist::Split(heaps) => take_moves(heaps, limit).map(TwistMove::Take),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Twist::Unsplit(m) => json!({"game": "twist", "stones": m}),
            Twist::Split(heaps) => json!({"game": "nim", "heaps": heaps}),
        }
    }
}

impl Strategy for Twist {
    fn outcome(&self) -> Outcome {
        Outcome::from_to_move_wins(self.grundy().unwrap_or(0) != 0)
    }

    fn grundy(&self) -> Option<u64> {
        Some(match self {
            Twist::Unsplit(m) => u64::from(m % 2 == 0),
            Twist::Split(heaps) => nim_sum(heaps.iter().copied()),
        })
    }

    fn winning_moves(&self, limit: usize) -> MoveList<TwistMove> {
        let mut out = Collector::new(limit);
        match self {
            Twist::Unsplit(m) if m % 2 == 0 => splits(*m, true, false, MAX_HEAPS, &mut out),
            Twist::Unsplit(_) => {}
            Twist::Split(heaps) => {
                let x = nim_sum(heaps.iter().copied());
                for (heap, &h) in heaps.iter().enumerate() {
                    if h ^ x < h
                        && !out.push(TwistMove::Take(TakeMove {
                            heap,
                            take: h - (h ^ x),
                        }))
                    {
                        break;
                    }
                }
            }
        }
        out.finish()
    }

    fn best_move(&self) -> Option<TwistMove> {
        match self {
            Twist::Unsplit(m) if m % 2 == 0 => Some(TwistMove::Split {
                split: vec![m / 2, m / 2],
            }),
            Twist::Unsplit(m) => Some(TwistMove::Split {
                split: Twist::patient_split(*m),
            }),
            Twist::Split(heaps) => {
                let x = nim_sum(heaps.iter().copied());
                heaps
                    .iter()
                    .enumerate()
                    .find(|&(_, &h)| h ^ x < h)
                    .map(|(heap, &h)| {
                        TwistMove::Take(TakeMove {
                            heap,
                            take: h - (h ^ x),
                        })
                    })
                    .or_else(|| patient_move(heaps).map(TwistMove::Take))
            }
        }
    }
}

impl Entry for Twist {
    const GAMES: &'static [GameId] = GAMES;

    fn read(o: &mut Obj, _id: &str) -> Result<Self, Fail> {
        Twist::from_spec(o)
    }

    fn random(id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError> {
        Ok(json!({"game": id, "stones": rng.range((s / 2).max(1), s)}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn listed(m: u64, zero_xor: bool, max_parts: usize) -> Vec<Vec<u64>> {
        listed_in(m, zero_xor, false, max_parts)
    }

    fn listed_in(m: u64, zero_xor: bool, largest_first: bool, max_parts: usize) -> Vec<Vec<u64>> {
        let mut out = Collector::new(usize::MAX);
        splits(m, zero_xor, largest_first, max_parts, &mut out);
        out.finish()
            .moves
            .into_iter()
            .filter_map(|mv| match mv {
                TwistMove::Split { split } => Some(split),
                TwistMove::Take(_) => None,
            })
            .collect()
    }

    /// Every composition of m, by brute force over the cut points.
    fn compositions(m: u64) -> Vec<Vec<u64>> {
        (0..1u64 << (m - 1))
            .map(|cuts| {
                let mut parts = vec![1u64];
                for i in 0..m - 1 {
                    if cuts >> i & 1 == 1 {
                        parts.push(1);
                    } else if let Some(last) = parts.last_mut() {
                        *last += 1;
                    }
                }
                parts
            })
            .collect()
    }

    /// The part-count limit is honoured exactly, also within three parts of
    /// it (where the search falls back to trying sizes one by one).
    #[test]
    fn splits_with_few_parts_allowed() {
        for m in 1..=12u64 {
            for max_parts in 1..=7usize {
                for zero_xor in [false, true] {
                    let want: HashSet<Vec<u64>> = compositions(m)
                        .into_iter()
                        .filter(|c| c.len() <= max_parts)
                        .filter(|c| !zero_xor || c.iter().fold(0, |a, &b| a ^ b) == 0)
                        .collect();
                    let got = listed(m, zero_xor, max_parts);
                    assert_eq!(got.len(), want.len(), "m {m} parts {max_parts} {zero_xor}");
                    assert_eq!(got.into_iter().collect::<HashSet<_>>(), want);
                }
            }
        }
    }

    /// Largest first, every set of sizes comes once: exactly the sorted
    /// compositions, in reverse lexicographic order.
    #[test]
    fn splits_largest_first_are_each_set_of_sizes_once() {
        for m in 1..=14u64 {
            for max_parts in [1usize, 2, 3, 4, 5, 7, MAX_HEAPS] {
                for zero_xor in [false, true] {
                    let mut want: Vec<Vec<u64>> = compositions(m)
                        .into_iter()
                        .filter(|c| c.len() <= max_parts)
                        .filter(|c| !zero_xor || c.iter().fold(0, |a, &b| a ^ b) == 0)
                        .filter(|c| c.windows(2).all(|w| w[0] >= w[1]))
                        .collect();
                    want.sort_unstable_by(|a, b| b.cmp(a));
                    let got = listed_in(m, zero_xor, true, max_parts);
                    assert_eq!(got, want, "m {m} parts {max_parts} {zero_xor}");
                }
            }
        }
    }

    #[test]
    fn largest_masked() {
        for cap in 0..64u64 {
            for mask in 0..64u64 {
                for d in 0..64u64 {
                    let want = (0..=cap).rev().find(|&a| a & mask <= d);
                    assert_eq!(largest_with_masked_at_most(cap, mask, d), want);
                }
            }
        }
    }
}
