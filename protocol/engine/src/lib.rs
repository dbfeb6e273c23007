//! The Grundy rule engine, shared byte for byte by the server (which validates
//! with it), the bot (which plans with it) and the clients.
//!
//! The engine knows nothing of the wire: it depends on no other Grundy crate.
//! `grundy-protocol` (the wire messages) depends on it and re-exports every
//! module here under the same path (`grundy_protocol::games::nim` is
//! `grundy_engine::games::nim`); the edge is one-way.
//!
//! - [`game`]: the [`Rules`] and [`Strategy`] interfaces every family implements;
//! - [`games`]: one module per game family of docs/games.md, each with its
//!   rules, strategy and catalogue entry (game ids, spec reader, random
//!   starts); the one list of families (`families!`), which makes [`Family`],
//!   [`Position`] and [`Move`], the families behind one type, and the
//!   catalogue of their game ids ([`games::catalogue`]);
//! - [`position`] (`games/position.rs`): [`Position::from_spec`], which reads
//!   a JSON spec;
//! - [`level`]: playing strength ([`Level`]) and the move a bot of that level
//!   chooses;
//! - [`analysis`]: the report `grundy analyze` prints;
//! - [`random`]: random start specs, deterministic in a seed;
//! - [`names`]: the games' names and short descriptions of specs;
//! - [`limits`]: the largest specs accepted;
//! - [`misere`] (`games/misere/`): exact misère play of `heaps` and `graph`
//!   (genus, quotient, search), beside the families it plays;
//! - [`short`]: the short forms people type for positions and moves, read
//!   and written (`nim 3 5 + kayles 7`, `0 2`);
//! - [`count`]: `1 stone`, `3 stones`, for every message;
//! - [`sums`]: xor of values, shared by every sum of components;
//! - [`nimber`]: nim-addition and nim-multiplication (Turning Corners' values);
//! - [`json`]: spec field readers whose refusals name the field;
//! - [`error`]: [`SpecError`] and [`MoveError`];
//! - [`oracle`]: a generic exhaustive solver that knows no theory, the test oracle
//!   for every family's strategy.

pub mod analysis;
pub mod count;
pub mod draw;
pub mod error;
pub mod game;
pub mod games;
pub mod json;
pub mod level;
pub mod limits;
pub mod names;
pub mod nimber;
pub mod oracle;
pub mod random;
pub mod short;
pub mod sums;

pub use games::{misere, position};

pub use analysis::{components, Analysis, Component};
pub use error::{MoveError, SpecError};
pub use game::{MoveList, Outcome, Rules, Status, Strategy, Summand};
pub use level::Level;
pub use position::{Family, Move, Position};
