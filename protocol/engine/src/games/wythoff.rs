//! `wythoff`: Wythoff's game. Two heaps; take any k >= 1 from one heap, or the
//! same k >= 1 from both.
//!
//! Strategy: the P-positions are (a_n, b_n) and their mirrors, with
//! a_n = floor(n·φ) and b_n = a_n + n (= floor(n·φ²)). Every positive integer is
//! exactly one a_n or one b_n, so each heap size has exactly one P-partner and
//! each difference n exactly one P-position: from any position there are at most
//! three winning moves (one per heap, one along the diagonal), found in O(1) with
//! exact integer square roots (floating point is wrong near 10^15).

use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{json, Value};

use crate::count::count;
use crate::draw::SplitMix64;
use crate::error::{MoveError, SpecError};
use crate::game::{Collector, MoveList, Outcome, Rules, Status, Strategy};
use crate::games::nim::malformed;
use crate::games::{Entry, GameId};
use crate::json::{array_at, u64_at, Fail, Obj};
use crate::limits::{MAX_WYTHOFF, MAX_WYTHOFF_PART};

/// The game ids of this family (with its presets, if any), for the
/// catalogue ([`crate::games::catalogue`]).
pub const GAMES: &[GameId] = &[
    // A part of a sum takes its values from a table: held to its limit.
    GameId::new("wythoff", "Wythoff", 10, MAX_WYTHOFF).in_mix(MAX_WYTHOFF_PART),
];

/// What the two heaps are called in words (the board, hints, refusals): heap
/// `a` is the first (`heaps[0]`, `take[0]`), heap `b` the second.
pub const HEAP_NAMES: [&str; 2] = ["a", "b"];

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Wythoff {
    pub heaps: [u64; 2],
}

/// `{"take": [x, y]}`: take `x` from heap 0 and `y` from heap 1; one of them is 0
/// and the other >= 1, or both are equal and >= 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct WythoffMove {
    pub take: [u64; 2],
}

impl WythoffMove {
    pub fn parse(v: &Value) -> Result<Self, Fail> {
        let mut o = Obj::new(v, "move")?;
        let path = o.path("take");
        let items = array_at(o.req("take")?, &path, 2)?;
        if items.len() != 2 {
            return Err((
                path,
                format!(
                    "expected [from heap a, from heap b], got {}",
                    count(items.len() as u64, "number", "numbers")
                ),
            ));
        }
        let x = u64_at(&items[0], &format!("{path}[0]"), u64::MAX)?;
        let y = u64_at(&items[1], &format!("{path}[1]"), u64::MAX)?;
        Ok(WythoffMove { take: [x, y] })
    }
}

/// Exact floor(sqrt(n)) on u128 (Newton's method from above).
pub fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    // 2^ceil(bits/2) >= sqrt(n): a start above the root, then Newton decreases.
    let bits = 128 - n.leading_zeros();
    let mut x: u128 = 1 << bits.div_ceil(2);
    loop {
        let y = (x + n / x) / 2;
        if y >= x {
            return x;
        }
        x = y;
    }
}

/// a_n = floor(n·φ) = floor((n + sqrt(5n²)) / 2), exactly (for n < 2^62, so that
/// 5n² fits in a u128; Wythoff heaps are at most 10^15). `sqrt(5n²)` is
/// irrational for n >= 1, so flooring the root first does not change the result.
pub fn lower(n: u64) -> u64 {
    let n = n as u128;
    ((n + isqrt(5 * n * n)) / 2) as u64
}

/// floor(v / φ) = floor((sqrt(5v²) - v) / 2), exactly (v < 2^62).
fn div_phi(v: u64) -> u64 {
    let v = v as u128;
    ((isqrt(5 * v * v) - v) / 2) as u64
}

/// The unique `w` such that (v, w) is a P-position (in either order).
pub fn partner(v: u64) -> u64 {
    if v == 0 {
        return 0;
    }
    // If v = a_n then n = ceil(v/φ) = floor(v/φ) + 1 (v/φ is irrational).
    let f = div_phi(v);
    let n = f + 1;
    if lower(n) == v {
        return v + n;
    }
    // Otherwise v = b_m = a_m + m with m = ceil(v/φ²) = v - floor(v/φ).
    let m = v - f;
    lower(m)
}

/// True when (a, b) is a P-position.
pub fn is_p(a: u64, b: u64) -> bool {
    let (lo, hi) = (a.min(b), a.max(b));
    lower(hi - lo) == lo
}

impl Wythoff {
    pub fn from_spec(o: &mut Obj) -> Result<Self, Fail> {
        let path = o.path("heaps");
        let heaps = o.req_u64_array("heaps", 2, MAX_WYTHOFF)?;
        match heaps[..] {
            [a, b] => Ok(Wythoff { heaps: [a, b] }),
            _ => Err((
                path,
                format!("Wythoff's game has exactly two heaps, got {}", heaps.len()),
            )),
        }
    }

    /// Every move to a P-position: at most one per heap and one diagonal.
    fn winning(&self) -> Vec<WythoffMove> {
        let [a, b] = self.heaps;
        if is_p(a, b) {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(3);
        // Heap 0 alone: (x, b) with x the partner of b.
        let x = partner(b);
        if x < a {
            out.push(WythoffMove { take: [a - x, 0] });
        }
        // Heap 1 alone: (a, y) with y the partner of a.
        let y = partner(a);
        if y < b {
            out.push(WythoffMove { take: [0, b - y] });
        }
        // Both: the difference is kept, and one P-position has that difference.
        let lo = a.min(b);
        let target = lower(a.max(b) - lo);
        if target < lo {
            let t = lo - target;
            out.push(WythoffMove { take: [t, t] });
        }
        out
    }
}

impl Rules for Wythoff {
    type Move = WythoffMove;

    fn parse_move(&self, v: &Value) -> Result<WythoffMove, MoveError> {
        WythoffMove::parse(v).map_err(malformed)
    }

    fn check(&self, mv: &WythoffMove) -> Result<(), MoveError> {
        if self.status() != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        let [x, y] = mv.take;
        if x == 0 && y == 0 {
            return Err(MoveError::forbidden("a move must take at least one stone"));
        }
        if x != 0 && y != 0 && x != y {
            return Err(MoveError::forbidden(format!(
                "taking from both heaps must take the same amount from each, not {x} and {y}"
            )));
        }
        for (name, (&t, &h)) in HEAP_NAMES.iter().zip(mv.take.iter().zip(&self.heaps)) {
            if t > h {
                return Err(MoveError::forbidden(format!(
                    "heap {name} has only {}, cannot take {t}",
                    count(h, "stone", "stones")
                )));
            }
        }
        Ok(())
    }

    fn apply_checked(&mut self, mv: &WythoffMove) {
        self.heaps[0] -= mv.take[0];
        self.heaps[1] -= mv.take[1];
    }

    fn status(&self) -> Status {
        if self.heaps == [0, 0] {
            Status::Over {
                to_move_wins: false,
            }
        } else {
            Status::Ongoing
        }
    }

    fn legal_moves(&self, limit: usize) -> MoveList<WythoffMove> {
        let [a, b] = self.heaps;
        let mut out = Collector::new(limit);
        let takes = (1..=a)
            .map(|t| [t, 0])
            .chain((1..=b).map(|t| [0, t]))
            .chain((1..=a.min(b)).map(|t| [t, t]));
        for take in takes {
            if !out.push(WythoffMove { take }) {
                break;
            }
        }
        out.finish()
    }

    fn to_json(&self) -> Value {
        json!({"game": "wythoff", "heaps": self.heaps})
    }
}

impl Strategy for Wythoff {
    fn outcome(&self) -> Outcome {
        Outcome::from_to_move_wins(!is_p(self.heaps[0], self.heaps[1]))
    }

    fn grundy(&self) -> Option<u64> {
        // Wythoff's Grundy values have no cheap formula; only P (value 0) is known.
        is_p(self.heaps[0], self.heaps[1]).then_some(0)
    }

    fn winning_moves(&self, limit: usize) -> MoveList<WythoffMove> {
        let mut out = Collector::new(limit);
        for m in self.winning() {
            if !out.push(m) {
                break;
            }
        }
        out.finish()
    }

    fn best_move(&self) -> Option<WythoffMove> {
        if let Some(m) = self.winning().into_iter().next() {
            return Some(m);
        }
        // Lost: take one stone from the larger heap, the smallest change.
        let [a, b] = self.heaps;
        match (a, b) {
            (0, 0) => None,
            _ if a >= b => Some(WythoffMove { take: [1, 0] }),
            _ => Some(WythoffMove { take: [0, 1] }),
        }
    }
}

impl Entry for Wythoff {
    const GAMES: &'static [GameId] = GAMES;

    fn read(o: &mut Obj, _id: &str) -> Result<Self, Fail> {
        Wythoff::from_spec(o)
    }

    fn random(id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError> {
        let heaps = [rng.range(1, s), rng.range(1, s)];
        Ok(json!({"game": id, "heaps": heaps}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isqrt_is_exact() {
        for n in 0u128..10_000 {
            let r = isqrt(n);
            assert!(r * r <= n && (r + 1) * (r + 1) > n, "{n}");
        }
        for r in [
            1u128 << 40,
            (1 << 62) + 12345,
            (1 << 63) + 1,
            u64::MAX as u128 - 1,
        ] {
            for n in [r * r - 1, r * r, r * r + 1, r * r + 2 * r] {
                let s = isqrt(n);
                assert!(s * s <= n && (s + 1) * (s + 1) > n, "{n}");
            }
        }
        let big = u128::MAX;
        let s = isqrt(big);
        assert_eq!(s, u64::MAX as u128);
    }

    #[test]
    fn partners_match_the_sequence() {
        // a_n, b_n for n < 2000 against a mex construction.
        let mut used = std::collections::HashSet::new();
        let mut a = 0u64;
        for n in 1..2000u64 {
            a += 1;
            while used.contains(&a) {
                a += 1;
            }
            let b = a + n;
            used.insert(a);
            used.insert(b);
            assert_eq!(lower(n), a);
            assert_eq!(partner(a), b);
            assert_eq!(partner(b), a);
        }
    }
}

/// Grundy values of every Wythoff position with both heaps at most `n`, for
/// Wythoff as a part of a sum (they have no closed form). Each value is the mex
/// of its row to the left, its column above and its diagonal: one bitset per
/// row, column and diagonal makes a cell cost O(n / 64) words.
#[derive(Debug)]
pub struct WythoffValues {
    n: usize,
    /// Row-major, (n + 1) × (n + 1). A position has at most 3n options, so
    /// values stay below 3n + 1 <= u16::MAX for n <= MAX_WYTHOFF_PART.
    g: Vec<u16>,
}

impl WythoffValues {
    pub fn build(n: usize) -> WythoffValues {
        let side = n + 1;
        let words = (3 * n + 1) / 64 + 1;
        let mut g = vec![0u16; side * side];
        let mut cols = vec![0u64; side * words];
        let mut diags = vec![0u64; (2 * n + 1) * words];
        let mut row = vec![0u64; words];
        for a in 0..side {
            row.fill(0);
            for b in 0..side {
                let d = b + n - a;
                let v = if b < a {
                    // Symmetric: (b, a) is in an earlier row.
                    g[b * side + a]
                } else {
                    let (col, diag) = (&cols[b * words..][..words], &diags[d * words..][..words]);
                    let mut v = 0;
                    for w in 0..words {
                        let seen = row[w] | col[w] | diag[w];
                        if seen != u64::MAX {
                            v = (w * 64 + seen.trailing_ones() as usize) as u16;
                            break;
                        }
                    }
                    v
                };
                g[a * side + b] = v;
                let (word, bit) = (v as usize / 64, 1u64 << (v % 64));
                row[word] |= bit;
                cols[b * words + word] |= bit;
                diags[d * words + word] |= bit;
            }
        }
        WythoffValues { n, g }
    }

    /// The largest heap the table covers.
    pub fn covers(&self) -> u64 {
        self.n as u64
    }

    /// g(a, b); None outside the table.
    pub fn get(&self, a: u64, b: u64) -> Option<u64> {
        let (a, b) = (usize::try_from(a).ok()?, usize::try_from(b).ok()?);
        (a <= self.n && b <= self.n).then(|| u64::from(self.g[a * (self.n + 1) + b]))
    }
}

/// The shared table covering heaps up to at least `n` (at most
/// [`MAX_WYTHOFF_PART`]): built once to the size asked for, rebuilt larger only
/// when a larger position comes.
pub fn values_up_to(n: u64) -> Arc<WythoffValues> {
    static TABLE: Mutex<Option<Arc<WythoffValues>>> = Mutex::new(None);
    let n = n.min(MAX_WYTHOFF_PART) as usize;
    let mut table = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    match &*table {
        Some(t) if t.n >= n => t.clone(),
        _ => {
            let t = Arc::new(WythoffValues::build(n));
            *table = Some(t.clone());
            t
        }
    }
}
