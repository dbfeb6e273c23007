//! One module per game family of GAMES.md.

pub mod nim;
pub mod wythoff;
