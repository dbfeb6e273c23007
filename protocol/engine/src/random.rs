//! Random start positions: "a random start of game G with size bound S from
//! seed X", so rooms and tournaments can draw starts and a pairing can replay
//! the same start with the seats swapped (docs/games.md, "Random start
//! positions").
//!
//! [`random_spec`] returns a spec (docs/protocol.md) that [`Position::from_spec`]
//! accepts; each family draws its own starts (its `Entry::random`, beside its
//! rules) with the generator and the helpers here. It is a pure function of `(game, seed, size)`: the generator is a
//! self-contained SplitMix64, so the same arguments give the same spec on every
//! platform and every build. **Changing the generator, or the order or way in
//! which this module draws numbers, changes every start**: that breaks replays of
//! stored seeds and must be treated as a breaking change (a unit test pins a few
//! outputs so it cannot happen by accident).
//!
//! `size` (the bound S) means, per game, with its default (when `size` is None,
//! a start small enough for people) and its largest allowed value:
//!
//! | game | S bounds | default | limit | what is drawn |
//! | --- | --- | --- | --- | --- |
//! | `nim` | largest heap | 10 | 2^63 | 3–5 heaps of 1..=S, normal play |
//! | `heaps` | largest heap | 10 | 2^63 | 3–5 heaps of 1..=S, each with its own rule: `any`, `upto` k ≤ 6, a `set` of 1–3 amounts ≤ 6, `odd`, `half`, octal `0.77` or `0.07`, `lasker` |
//! | `bash` | largest heap | 10 | 2^63 | k in 1..=min(S, 6); 3–5 heaps of 1..=S |
//! | `subtraction` | largest heap | 10 | 2^63 | a set of 1–3 amounts in 1..=min(S, 6); 2–4 heaps of 1..=S |
//! | `kayles`, `dawson`, `lasker` | largest heap | 10 | 2^63 | 2–4 heaps of 1..=S |
//! | `wythoff` | larger heap | 10 | 10^15 | 2 heaps of 1..=S |
//! | `moore` | largest heap | 10 | 2^63 | k in 1..=3, k+1 to k+3 heaps of 1..=S; for k = 1 sometimes `max_take` in 1..=min(S, 6) |
//! | `new-stone` | largest heap | 10 | 2^63 | 3–5 heaps of 1..=S |
//! | `staircase` | largest cell (strip length) | 15 | 10^15 | 2–5 pieces (at most S − 1) on distinct cells of 1..=S |
//! | `treblecross` | strip length | 20 | 2,000 | an empty strip of length in max(1, 2S/5)..=S |
//! | `darkraft` | grid side (rows and columns) | 6 | 20 | rows and columns each in ⌈2S/3⌉..=S, letters `L`, `R`, `X` uniform |
//! | `twist` | stones | 20 | 10^12 | stones in max(1, S/2)..=S |
//! | `graph` | vertex count | 8 | 1,000 (a spec must fit in a client's frame) | n in max(2, S/2)..=S vertices (1 when S = 1); every vertex but the last has 1–3 edges to distinct vertices at most 8 above it; 1–3 tokens, not on the last vertex |
//! | `mix` (also `sum`) | each part's S | 8 | 2^63 | a `sum` of 2–5 parts, each a random start (as above) of one of nim, heaps, bash, subtraction, kayles, dawson, lasker, wythoff, moore, new-stone, staircase, darkraft, graph, with S capped per part where a part must stay small: wythoff 2,000 (its table), moore and new-stone 3 (their exact search), darkraft 6, graph 150 (the frame) |
//!
//! Starts are never over before the first move unless S forces it (S = 1 for
//! `staircase`, `graph` and `dawson`, whose moves need room).
//!
//! [`Position::from_spec`]: crate::Position::from_spec

use serde_json::Value;

use crate::error::SpecError;
use crate::games::{catalogue, game as game_id, GameId};
use crate::Family;

pub use crate::games::graph::RANDOM_GRAPH_VERTICES;

/// The most bytes of JSON a random start takes at any size its game allows
/// (`tests/random.rs` checks it on many seeds at every game's limit).
pub const MAX_RANDOM_SPEC_BYTES: usize = 64 * 1024;

/// Largest amount in a random `upto` bound or subtraction set.
pub(crate) const SMALL_TAKE: u64 = 6;

/// The game ids [`random_spec`] accepts (the families and the `heaps` presets:
/// the catalogue, [`crate::games::catalogue`]).
pub fn game_ids() -> impl Iterator<Item = &'static str> {
    catalogue().map(|g| g.id)
}

/// The size used when none is given; None for an unknown game.
pub fn default_size(id: &str) -> Option<u64> {
    game_id(id).map(|g| g.default_size)
}

/// The largest size [`random_spec`] accepts for the game `id`; None for an unknown game.
pub fn max_size(id: &str) -> Option<u64> {
    game_id(id).map(|g| g.max_size)
}

/// The field of a request for a random start that an error of
/// [`random_spec`] is about: its `game` is what requests call `family`.
pub fn request_field(error: &SpecError) -> &str {
    match error.field.as_str() {
        "game" => "family",
        field => field,
    }
}

/// A random start spec of `game` (any game id of docs/protocol.md's spec table,
/// including the presets `bash`, `subtraction`, `kayles`, `dawson`, `lasker`),
/// deterministic in `seed`; `size` bounds the position's size per game (see the
/// module doc), None = a small default for people.
///
/// Refused (the error names the field): an unknown `game`; a `size` of 0 or
/// above the game's limit.
pub fn random_spec(game: &str, seed: u64, size: Option<u64>) -> Result<Value, SpecError> {
    let Some((
        &GameId {
            id,
            default_size: default,
            max_size: limit,
            ..
        },
        family,
    )) = game_id(game).zip(Family::of_game(game))
    else {
        let ids: Vec<&str> = game_ids().collect();
        return Err(SpecError::new(
            "game",
            format!("unknown game {game:?} (known: {})", ids.join(", ")),
        ));
    };
    let s = size.unwrap_or(default);
    if s == 0 {
        return Err(SpecError::new("size", "must be at least 1, got 0"));
    }
    if s > limit {
        return Err(SpecError::new(
            "size",
            format!("must be at most {limit} for {id}, got {s}"),
        ));
    }
    family.random(id, s, &mut SplitMix64::new(seed))
}

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
