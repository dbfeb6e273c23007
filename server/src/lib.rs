//! The Grundy match server (library part): see ARCHITECTURE.md.
//!
//! - [`store`]: persistence of rooms, seats, event logs and results (SQLite).

pub mod store;
