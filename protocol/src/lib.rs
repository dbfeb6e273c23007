//! The Grundy wire protocol: the messages as they travel, and what reads them.
//!
//! - [`wire`]: the protocol v1 messages, as they travel;
//! - [`schema`]: the JSON Schema of the wire messages (docs/protocol.schema.json);
//! - [`match_state`]: a match as its event log builds it, the one way the
//!   server and every client read a room's events;
//! - [`time_control`]: `--clock` texts like `5+2` (minutes + seconds).
//!
//! The rule engine is its own crate, `grundy-engine` (protocol/engine), which
//! never imports the wire; the edge is one-way. This crate re-exports every
//! engine module and the engine's root items under their old paths
//! (`grundy_protocol::games::nim`, `grundy_protocol::Position`), so a crate
//! that needs both the rules and the wire depends on this one alone.

pub mod match_state;
pub mod schema;
pub mod time_control;
pub mod wire;

pub use grundy_engine::{
    analysis, error, game, games, json, level, limits, misere, names, oracle, position, random,
    short, sums,
};

pub use grundy_engine::{
    components, Analysis, Component, Family, Level, Move, MoveError, MoveList, Outcome, Position,
    Rules, SpecError, Status, Strategy, Summand,
};
