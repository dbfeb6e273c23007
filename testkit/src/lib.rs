//! Test support shared by the workspace's tests (the store's unit tests in
//! `grundy-server`, the end-to-end tests in `grundy-tests`): real services,
//! started for a test run from the machine's packages and stopped by PID;
//! a test CA and its certificates ([`tls`]).

pub mod nats;
pub mod postgres;
mod process;
pub mod tls;
