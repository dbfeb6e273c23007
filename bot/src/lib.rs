//! The Grundy bot: a protocol v1 client that plays every game of the catalogue
//! perfectly (or, at casual levels, with deliberate mistakes). It speaks the same
//! protocol as any third-party bot.
//!
//! - [`baseline`]: the echo and relay servers every load figure is compared with;
//! - [`duel`]: bot-versus-bot matches from one call;
//! - [`house`]: joining rooms that ask for a bot;
//! - [`load`]: load generation (Nim duels, echo and relay rounds, idle connections);
//! - [`tournament`]: tournament players, a field of bots.

pub mod baseline;
pub mod duel;
pub mod house;
pub mod load;
pub mod tournament;
