//! One module per game family of GAMES.md.

pub mod darkraft;
pub mod nim;
pub mod treblecross;
