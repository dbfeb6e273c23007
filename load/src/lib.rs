//! The Grundy load tool: load generation against a Grundy server, and the
//! baselines every figure is compared with. Apart from the bot: it speaks just
//! enough of the protocol to load a server, as fast as it can.
//!
//! - [`load`]: load generation (Nim duels, echo and relay rounds, idle
//!   connections);
//! - [`baseline`]: the echo and relay servers every load figure is compared
//!   with (`grundy-echo`).
//!
//! The binaries: `grundy-load` (`run`, `idle`) and `grundy-echo`. See
//! docs/performance.md.

pub mod baseline;
pub mod load;
