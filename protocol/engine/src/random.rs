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
//! | `mock-turtles`, `ruler` | row length | 12 | 1,000 | a row of max(1, 2S/3)..=S coins, each heads or tails (at least one heads) |
//! | `turning-corners` | board side (rows and columns) | 5 | 64 | rows and columns each in ⌈2S/3⌉..=S, each coin heads or tails (a heads coin off row 0 and column 0 when the board has room) |
//! | `coins` | as its rule's | 12 | 1,000 (64 for Turning Corners) | a rule drawn uniformly, then a start of it as above, with `rule` |
//! | `mix` (also `sum`) | each part's S | 8 | 2^63 | a `sum` of 2–5 parts, each a random start (as above) of one of nim, heaps, bash, subtraction, kayles, dawson, lasker, wythoff, moore, new-stone, staircase, darkraft, graph, with S capped per part where a part must stay small: wythoff 2,000 (its table), moore and new-stone 3 (their exact search), darkraft 6, graph 150 (the frame) |
//!
//! Starts are never over before the first move unless S forces it (S = 1 for
//! `staircase`, `graph`, `dawson`, `turning-corners` and `coins`, whose moves
//! need room).
//!
//! [`Position::from_spec`]: crate::Position::from_spec

use crate::error::SpecError;
use crate::games::{catalogue, game as game_id};

pub use crate::games::graph::RANDOM_GRAPH_VERTICES;
/// Drawn by the catalogue (`games`), where a random sum finds its parts.
pub use crate::games::random_spec;

/// The most bytes of JSON a random start takes at any size its game allows
/// (`tests/random.rs` checks it on many seeds at every game's limit).
pub const MAX_RANDOM_SPEC_BYTES: usize = 64 * 1024;

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
