//! This node's services in one place ([`Node`]): the house bots, the lobby,
//! the tournaments, ratings, accounts, the store, the configuration, the
//! work pools and, in a cluster, the bus. Made once at start
//! (`server.rs`); the connections and HTTP reach everything through it.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::accounts::Accounts;
use crate::cluster::bus::Bus;
use crate::config::Config;
use crate::house::House;
use crate::lobby::Lobby;
use crate::ratings::Ratings;
use crate::store::MatchStore;
use crate::tournament::registry::Tournaments;
use crate::work::Pool;

/// This node's services: what every connection (and HTTP request) reaches
/// rooms, tournaments, accounts and the store through.
pub struct Node {
    /// The server's house bots.
    pub house: Arc<House>,
    pub lobby: Arc<Lobby>,
    pub tournaments: Arc<Tournaments>,
    pub ratings: Arc<Ratings>,
    pub accounts: Arc<Accounts>,
    pub store: Arc<dyn MatchStore>,
    pub config: Arc<Config>,
    pub next_conn: AtomicU64,
    /// Building positions from specs and drawing random starts (which may
    /// build tables).
    pub spec_builds: Pool,
    /// Store reads a client asks for (`get_match`, `get_tournament`).
    pub store_reads: Pool,
    /// A cluster's node: which node owns a room (`connection/remote.rs`).
    pub owner_lookups: Pool,
    /// Cancelled during a shutdown once the rooms and tournaments have
    /// answered every command they took: a connection, which stopped reading
    /// when the shutdown began, then sends its notice and closes.
    pub answered: CancellationToken,
    /// A cluster's bus (`--bus`): rooms other nodes own are served through it.
    pub bus: Option<Arc<Bus>>,
}

impl Node {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        house: Arc<House>,
        lobby: Arc<Lobby>,
        tournaments: Arc<Tournaments>,
        ratings: Arc<Ratings>,
        accounts: Arc<Accounts>,
        store: Arc<dyn MatchStore>,
        config: Arc<Config>,
        bus: Option<Arc<Bus>>,
    ) -> Arc<Node> {
        Arc::new(Node {
            house,
            lobby,
            tournaments,
            ratings,
            accounts,
            store,
            next_conn: AtomicU64::new(1),
            spec_builds: Pool::new("spec_builds", config.spec_builds, config.spec_builds_queued),
            store_reads: Pool::new("store_reads", config.store_reads, config.store_reads_queued),
            owner_lookups: Pool::new(
                "owner_lookups",
                config.owner_lookups,
                config.owner_lookups_queued,
            ),
            config,
            answered: CancellationToken::new(),
            bus,
        })
    }
}
