//! Test support shared by the workspace's tests (the store's unit tests and
//! the process tests in `grundy-server`, the end-to-end tests in
//! `grundy-tests`): real services, started for a test run from the machine's
//! packages and stopped by PID (PostgreSQL, NATS, nginx or Caddy in front of
//! a server: [`nginx`], [`caddy`], an ACME directory: [`pebble`]); one
//! raw-JSON protocol client; a test CA and its certificates ([`tls`]).

pub mod caddy;
pub mod client;
pub mod nats;
pub mod nginx;
pub mod pebble;
pub mod postgres;
mod process;
pub mod tls;
