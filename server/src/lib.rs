//! The Grundy match server: rooms, seats, spectators, clocks, resume and
//! persistence, over WebSocket (protocol v1, docs/protocol.md).
//!
//! - [`server`]: the listener and graceful shutdown;
//! - [`caps`]: the connection caps, in all and per client address;
//! - [`bus`]: the bus between a cluster's nodes (NATS): forwarded commands, answers;
//! - [`cluster`]: a cluster's node: its lease, taking over rooms of nodes gone;
//! - [`http`]: HTTP beside the WebSocket on one port: the web page, the
//!   JSON API, `/healthz`, `/metrics`; a WebSocket upgrade becomes a
//!   [`connection`];
//! - [`connection`]: one task per socket (reader) plus a writer task;
//! - [`metrics`]: the Prometheus metrics;
//! - [`lobby`]: the room registry;
//! - [`room`]: one task per room, owning its match (its rules: `room::core`);
//! - [`refusal`]: a refused command's code and message;
//! - [`secret`]: seat and tournament tokens, made and compared; URLs' passwords masked;
//! - [`settings`]: the configuration file, environment variables and flags, layered;
//! - [`house`]: the server's own house bots, tracked tasks;
//! - [`drain`]: closing a socket so the peer reads the close frame;
//! - [`stream`]: a connection's stream, plain TCP or TLS;
//! - [`tls`]: TLS on the server's port: certificates from files, reloaded;
//! - [`outbox`]: the bounded per-connection outbound queue;
//! - [`frame_log`]: `--log-frames`, frames logged with their secrets masked;
//! - [`player`]: who holds a seat: a name, a kind, an account;
//! - [`accounts`]: accounts, passwords, API tokens and their abuse limits;
//! - [`store`]: persistence (SQLite, group commit) behind a trait;
//! - [`text`]: what text others are shown (names, titles) may hold;
//! - [`tournament`]: tournaments (round robin, Swiss), one task each;
//! - [`ratings`]: Glicko-2 ratings per player and game family;
//! - [`task`]: what every actor task shares (exit guard, deadlines, commits);
//! - [`work`]: bounded pools for work kept off the reactor (spec builds, store reads).

pub mod accounts;
pub mod cluster;
pub mod command;
pub mod config;
pub mod connection;
pub mod directory;
pub mod flag;
pub mod frame_log;
pub mod house;
pub mod lobby;
pub mod metrics;
pub mod names;
pub mod net;
pub mod node;
pub mod outbox;
pub mod player;
pub mod rating_key;
pub mod ratings;
pub mod refusal;
pub mod room;
pub mod secret;
pub mod server;
pub mod settings;
pub mod store;
pub mod stream;
pub mod task;
pub mod tcp;
pub mod text;
pub mod tournament;
pub mod work;

pub use config::Config;
pub use server::Server;
