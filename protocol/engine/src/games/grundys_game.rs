//! The Grundy values of Grundy's game (split one heap into two unequal
//! non-empty heaps), by the sparse-space method.
//!
//! g(n) = mex { g(a) ^ g(n - a) : 1 <= a < n - a } asks for n / 2 options per
//! heap: 2.7 * 10^11 to reach 2^20 by the definition. The sparse-space
//! method (Gangolli and Plambeck, "A note on periodicity in some octal
//! games", 1989; Flammenkamp's tables of this game) cuts that down. Call a
//! value *rare* when the bits above its lowest have even parity (0, 1, 6, 7,
//! 10, 11, ...) and *common* otherwise; that parity is linear, so g(a) ^ g(b)
//! is common exactly when one of g(a), g(b) is rare. Few heaps have a rare
//! value (1,273 up to 2^20, the last 82,860), so every common option of a
//! heap comes from a pair with one of them: the least common value missed is
//! found from those pairs alone. The value is that, unless a rare value below
//! it is missed too: the rare values below it are looked for among all the
//! pairs, smallest heap first, in blocks, until each is found (a few thousand
//! pairs for most heaps; all of them only for the heaps whose value is rare).
//!
//! Tables are computed once, in tiers (heaps below 2^12, 2^16 and 2^20), so
//! a game of small heaps never waits for the big table: the largest takes
//! about 6 s of CPU in a release build on a slow 2-core machine
//! (`cargo bench -p grundy-engine --bench best_move -- grundys_game`).

use std::sync::OnceLock;

/// The largest heap of Grundy's game (docs/games.md "Limits").
pub const MAX_GRUNDYS_GAME_HEAP: u64 = 1 << 20;

/// The tiers' sizes: each table holds g(0) to g(size - 1).
const TIERS: [usize; 3] = [1 << 12, 1 << 16, (MAX_GRUNDYS_GAME_HEAP + 1) as usize];

/// g(n), for n <= [`MAX_GRUNDYS_GAME_HEAP`] (callers check; 0 beyond).
pub fn value(n: u64) -> u64 {
    static TABLES: [OnceLock<Vec<u32>>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let Some(tier) = TIERS.iter().position(|&size| n < size as u64) else {
        return 0;
    };
    let table = TABLES[tier].get_or_init(|| values(TIERS[tier] - 1));
    table[n as usize] as u64
}

/// Whether `v` is a rare value: the bits above the lowest have even parity.
fn rare(v: u32) -> bool {
    (v >> 1).count_ones().is_multiple_of(2)
}

/// How many pairs are looked through between two checks of what is still
/// missed.
const BLOCK: usize = 128;

/// Notes `v` as an option of the heap whose stamp is `stamp`.
fn mark(options: &mut Vec<usize>, v: u32, stamp: usize) {
    let v = v as usize;
    if v >= options.len() {
        options.resize(2 * v, 0);
    }
    options[v] = stamp;
}

/// g(0), ..., g(max).
pub fn values(max: usize) -> Vec<u32> {
    let mut g: Vec<u32> = Vec::with_capacity(max + 1);
    // Heaps of rare value, ascending.
    let mut rare_heaps: Vec<usize> = Vec::new();
    // `options[v] == n + 1`: value v is an option of heap n. Values stay
    // small (231 at most up to 2^20); the table grows if one does not.
    let mut options: Vec<usize> = vec![0; 1024];
    let mut missed: Vec<u32> = Vec::new();
    for n in 0..=max {
        let stamp = n + 1;
        for &r in rare_heaps.iter().take_while(|&&r| r < n) {
            // Both parts non-empty and unequal; r may be either part.
            if 2 * r != n {
                mark(&mut options, g[r] ^ g[n - r], stamp);
            }
        }
        let reached = |v: u32, options: &[usize]| options.get(v as usize) == Some(&stamp);
        let mut common = 0u32;
        while rare(common) || reached(common, &options) {
            common += 1;
        }
        missed.clear();
        missed.extend((0..common).filter(|&v| rare(v) && !reached(v, &options)));
        // The pairs (a, n - a), 1 <= a < n - a, in blocks, until every rare
        // value below `common` is found (or none is left to look at).
        let half = n.div_ceil(2);
        let mut a = 1;
        while !missed.is_empty() && a < half {
            let end = (a + BLOCK).min(half);
            let small = &g[a..end];
            let large = g[n + 1 - end..=n - a].iter().rev();
            for (x, y) in small.iter().zip(large) {
                mark(&mut options, x ^ y, stamp);
            }
            a = end;
            missed.retain(|&v| !reached(v, &options));
        }
        // `missed` is ascending: its first is the least value no move reaches.
        let value = missed.first().copied().unwrap_or(common);
        if rare(value) && n > 0 {
            rare_heaps.push(n);
        }
        g.push(value);
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, pair by pair.
    fn by_definition(max: usize) -> Vec<u32> {
        let mut g = vec![0u32; max + 1];
        for n in 3..=max {
            let options: Vec<u32> = (1..n.div_ceil(2)).map(|a| g[a] ^ g[n - a]).collect();
            g[n] = (0..).find(|v| !options.contains(v)).unwrap();
        }
        g
    }

    #[test]
    fn the_sparse_space_method_agrees_with_the_definition() {
        assert_eq!(values(3000), by_definition(3000));
    }

    #[test]
    fn the_tiers_agree_where_they_overlap() {
        let small = values(TIERS[0] - 1);
        for (n, &v) in small.iter().enumerate() {
            assert_eq!(value(n as u64), v as u64, "g({n})");
        }
        assert_eq!(value(TIERS[0] as u64), values(TIERS[0])[TIERS[0]] as u64);
    }

    #[test]
    fn the_first_values_are_oeis_a002188() {
        // OEIS A002188, n = 0..104.
        let a002188 = [
            0, 0, 0, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 3, 2, 1, 3, 2, 4, 3, 0, 4, 3, 0, 4, 3, 0, 4, 1,
            2, 3, 1, 2, 4, 1, 2, 4, 1, 2, 4, 1, 5, 4, 1, 5, 4, 1, 5, 4, 1, 0, 2, 1, 0, 2, 1, 5, 2,
            1, 3, 2, 1, 3, 2, 4, 3, 2, 4, 3, 2, 4, 3, 2, 4, 3, 2, 4, 3, 2, 4, 5, 2, 4, 5, 2, 4, 3,
            7, 4, 3, 7, 4, 3, 7, 4, 3, 5, 2, 3, 5, 2, 3, 5, 2, 3,
        ];
        assert_eq!(values(a002188.len() - 1), a002188);
    }
}
