//! One module per game family of docs/games.md.

pub mod heaps;
pub mod nim;
pub mod rule;
pub mod sequence;
