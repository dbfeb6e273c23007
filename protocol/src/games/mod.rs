//! One module per game family of GAMES.md.

pub mod heaps;
pub mod nim;
pub mod rule;
pub mod sequence;
