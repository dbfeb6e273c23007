//! The generator random starts are drawn with, and the drawing helpers the
//! families share (each family draws its own starts: its `Entry::random`).
//! A leaf: it knows no game, so every family and [`crate::random`] can use it.
//!
//! **Changing the generator, or the order or way in which numbers are drawn,
//! changes every start** (see [`crate::random`]).

/// Largest amount in a random `upto` bound or subtraction set.
pub(crate) const SMALL_TAKE: u64 = 6;

/// `count` in `lo..=hi` heaps of `1..=s`, at least one of them big enough for a
/// move (`min_take(i)` for heap i) when `s` allows.
pub(crate) fn heap_sizes(
    rng: &mut SplitMix64,
    lo: u64,
    hi: u64,
    s: u64,
    min_take: impl Fn(usize) -> u64,
) -> Vec<u64> {
    let count = rng.range(lo, hi) as usize;
    let mins: Vec<u64> = (0..count).map(min_take).collect();
    sizes_for(rng, s, &mins)
}

/// One heap of `1..=s` per entry of `mins`; if no heap reaches its minimum
/// move, one heap that can be made to (if any) is redrawn from its minimum up.
pub(crate) fn sizes_for(rng: &mut SplitMix64, s: u64, mins: &[u64]) -> Vec<u64> {
    let mut sizes: Vec<u64> = mins.iter().map(|_| rng.range(1, s)).collect();
    if !sizes.iter().zip(mins).any(|(&h, &m)| h >= m) {
        let fixable: Vec<usize> = (0..mins.len()).filter(|&i| mins[i] <= s).collect();
        if !fixable.is_empty() {
            let i = fixable[rng.below(fixable.len() as u64) as usize];
            sizes[i] = rng.range(mins[i], s);
        }
    }
    sizes
}

/// 1 to 3 distinct amounts of `1..=min(s, SMALL_TAKE)`, ascending.
pub(crate) fn small_set(rng: &mut SplitMix64, s: u64) -> Vec<u64> {
    let top = s.min(SMALL_TAKE);
    let want = rng.range(1, 3.min(top)) as usize;
    let mut set = distinct(rng, want, 1, top);
    set.sort_unstable();
    set
}

/// `count` distinct numbers of `lo..=hi` (`count <= hi - lo + 1`), in the
/// order drawn.
pub(crate) fn distinct(rng: &mut SplitMix64, count: usize, lo: u64, hi: u64) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::with_capacity(count);
    while out.len() < count {
        let x = rng.range(lo, hi);
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// SplitMix64 (Steele, Lea and Flood; constants of Vigna's reference code): tiny,
/// fast, and the same everywhere. Do not change it: every start depends on it.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n >= 1), without modulo bias.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        // Values under `2^64 mod n` would make the low residues likelier.
        let reject = n.wrapping_neg() % n;
        loop {
            let x = self.next();
            if x >= reject {
                return x % n;
            }
        }
    }

    /// Uniform in `lo..=hi`; `lo` when `hi < lo`.
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        match (hi - lo).checked_add(1) {
            Some(span) => lo + self.below(span),
            None => self.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // Vigna's splitmix64.c from state 0.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(r.next(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn range_stays_inside() {
        let mut r = SplitMix64::new(7);
        for _ in 0..1000 {
            let x = r.range(3, 5);
            assert!((3..=5).contains(&x));
        }
        assert_eq!(r.range(4, 4), 4);
        let _ = r.range(0, u64::MAX);
    }
}
