//! One module per game family of GAMES.md.

pub mod moore;
pub mod new_stone;
pub mod nim;
pub mod wythoff;
