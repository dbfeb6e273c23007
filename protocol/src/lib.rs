//! The Grundy rule engine, shared byte for byte by the server (which validates
//! with it), the bot (which plans with it) and the clients.
//!
//! - [`game`]: the [`Rules`] and [`Strategy`] interfaces every family implements;
//! - [`games`]: one module per game family of docs/games.md;
//! - [`position`]: [`Position`] and [`Move`], the families behind one type, and
//!   [`Position::from_spec`], which reads a JSON spec;
//! - [`level`]: playing strength ([`Level`]) and the move a bot of that level
//!   chooses;
//! - [`analysis`]: the report `grundy analyze` prints;
//! - [`match_state`]: a match as its event log builds it, the one way the
//!   server and every client read a room's events;
//! - [`random`]: random start specs, deterministic in a seed;
//! - [`names`]: the games' names and short descriptions of specs;
//! - [`time_control`]: `--clock` texts like `5+2` (minutes + seconds);
//! - [`wire`]: the protocol v1 messages, as they travel;
//! - [`schema`]: the JSON Schema of the wire messages (docs/protocol.schema.json);
//! - [`misere`]: exact misère play of `heaps` and `graph` (genus, quotient,
//!   search);
//! - [`oracle`]: a generic exhaustive solver that knows no theory, the test oracle
//!   for every family's strategy.

pub mod analysis;
pub mod error;
pub mod game;
pub mod games;
pub mod json;
pub mod level;
pub mod limits;
pub mod match_state;
pub mod misere;
pub mod names;
pub mod oracle;
pub mod position;
pub mod random;
pub mod schema;
pub mod sums;
pub mod time_control;
pub mod wire;

pub use analysis::{components, Analysis, Component};
pub use error::{MoveError, SpecError};
pub use game::{MoveList, Outcome, Rules, Status, Strategy, Summand};
pub use level::Level;
pub use position::{Family, Move, Position};
