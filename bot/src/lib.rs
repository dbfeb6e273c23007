//! The Grundy bot: plays every game of the catalogue perfectly (or, at casual
//! levels, with deliberate mistakes), through the protocol client
//! (`grundy-client`), like any third-party bot. Its levels and move choice are
//! the protocol crate's ([`grundy_protocol::level`]).
//!
//! - [`duel`]: bot-versus-bot matches from one call;
//! - [`house`]: the external house bot, joining rooms that ask for a bot;
//! - [`tournament`]: tournament players, a field of bots.

pub mod duel;
pub mod house;
pub mod tournament;
