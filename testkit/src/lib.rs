//! Test support shared by the workspace's tests (the store's unit tests and
//! the process tests in `grundy-server`, the end-to-end tests in
//! `grundy-tests`): real services, started for a test run from the machine's
//! packages and stopped by PID (PostgreSQL, NATS, and nginx in front of a
//! server: [`nginx`]); one raw-JSON protocol client; a test CA and its
//! certificates ([`tls`]).

pub mod client;
pub mod nats;
pub mod nginx;
pub mod postgres;
mod process;
pub mod tls;
