//! One module per game family of docs/games.md.

pub mod darkraft;
pub mod graph;
pub mod heaps;
pub mod moore;
pub mod new_stone;
pub mod nim;
pub mod rule;
pub mod sequence;
pub mod staircase;
pub mod sum;
pub mod treblecross;
pub mod twist;
pub mod wythoff;
