//! Tournaments: round robin and Swiss, hosted by the server.
//!
//! - [`settings`]: what `create_tournament` may ask for, with the defaults;
//! - [`pairing`]: the round robin schedule and the Swiss pairer (pure);
//! - [`standings`]: scores and tie-breaks (pure);
//! - [`state`]: a tournament as its event log builds it, and its next step;
//! - [`actor`]: one task per tournament, doing those steps;
//! - [`registry`]: the tournaments of this server, restore after a restart.

pub mod actor;
pub mod pairing;
pub mod registry;
pub mod settings;
pub mod standings;
pub mod state;
