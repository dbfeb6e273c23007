//! One module per game family of GAMES.md.

pub mod graph;
pub mod nim;
pub mod staircase;
pub mod twist;
