//! The Grundy protocol client: what any program that talks to a Grundy server
//! over WebSocket needs, the bot, the `grundy` command, the server's own house
//! bots and the tests alike.
//!
//! - [`address`]: server addresses as people write them;
//! - [`tls`]: what a `wss://` connection trusts (the public roots, a
//!   private CA), and TLS failures said plainly;
//! - [`connect`]: opening a WebSocket, `ws://` or `wss://` (the one
//!   connector of every client);
//! - [`client`]: the connection: hello (as a guest or with an account's
//!   token), requests answered by id, the stream of events;
//! - [`account`]: opening an account, logging in, tokens;
//! - [`reconnect`]: coming back after a lost connection (the one loop, and
//!   its backoff);
//! - [`seat`]: taking a seat and playing it to the end at a [`Level`], resuming
//!   after dropped connections;
//! - [`tournament`]: a tournament's state, watching its events, exporting its
//!   games (JSON and CSV).
//!
//! [`Level`]: grundy_protocol::Level

pub mod account;
pub mod address;
pub mod client;
pub mod connect;
pub mod reconnect;
pub mod seat;
pub mod tls;
pub mod tournament;
