//! The listener: accepts connections (over TLS when it has a certificate),
//! hands each to its own task, and shuts down gracefully — stop accepting
//! and the house bots, tell every client, let rooms finish their in-flight
//! writes, drain the store.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, HeaderValue};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::accounts::Accounts;
use crate::cluster;
use crate::cluster::bus::Bus;
use crate::config::Config;
use crate::flag::Flag;
use crate::house::{self, House, HouseBots};
use crate::lobby::Lobby;
use crate::net::caps::{Caps, Door};
use crate::net::http;
use crate::net::tls::{self, Tls};
use crate::node::Node;
use crate::ratings::Ratings;
use crate::store::MatchStore;
use crate::tournament::actor::Services;
use crate::tournament::registry::Tournaments;

/// Where a server takes its connections: a bound TCP listener, plain or
/// with TLS.
pub struct Listener {
    tcp: TcpListener,
    tls: Option<Arc<Tls>>,
}

impl Listener {
    /// Connections on `tcp` speak TLS (`https://`, `wss://`).
    pub fn with_tls(tcp: TcpListener, tls: Arc<Tls>) -> Listener {
        Listener {
            tcp,
            tls: Some(tls),
        }
    }
}

impl From<TcpListener> for Listener {
    fn from(tcp: TcpListener) -> Listener {
        Listener { tcp, tls: None }
    }
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    shutdown: CancellationToken,
    /// The connections' view of the shutdown (`flag.rs`: cheaper for them
    /// to poll at every wake-up than the token): raised when the token is
    /// cancelled, by whoever cancels it.
    stopping: Flag,
    connections: TaskTracker,
    rooms: TaskTracker,
    shared: Arc<Node>,
    house: Arc<House>,
    lobby: Arc<Lobby>,
    tournaments: Arc<Tournaments>,
    store: Arc<dyn MatchStore>,
}

impl Server {
    /// Binds `listen` (port 0 picks a free port), restores unfinished matches
    /// from `store`, and starts accepting.
    pub async fn start(
        listen: SocketAddr,
        store: Arc<dyn MatchStore>,
        config: Config,
    ) -> anyhow::Result<Server> {
        let listener = TcpListener::bind(listen)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
        Server::start_on(listener, store, config).await
    }

    /// [`Server::start`] on a listener bound already (the command binds
    /// before it opens the database, so a taken port leaves no file behind).
    pub async fn start_on(
        listener: impl Into<Listener>,
        store: Arc<dyn MatchStore>,
        config: Config,
    ) -> anyhow::Result<Server> {
        Server::start_node(listener, store, config, None).await
    }

    /// [`Server::start_on`] as a cluster's node with its bus (`store` is
    /// then a node's store: `PgStore::open_node`).
    pub async fn start_node(
        listener: impl Into<Listener>,
        store: Arc<dyn MatchStore>,
        config: Config,
        bus: Option<Arc<Bus>>,
    ) -> anyhow::Result<Server> {
        let Listener { tcp: listener, tls } = listener.into();
        let addr = listener.local_addr()?;
        // The house bots connect as any client does, but on a plain port of
        // their own on loopback: over TLS they would have to trust this
        // server's own certificate, and on `--listen` they would count
        // against `connections_per_ip` (one connection per room that asks
        // for a bot, all from one address). Connections on this port are
        // not counted per address (`Door::House`); they still count against
        // `max_connections`.
        let loopback = match addr {
            SocketAddr::V4(_) => SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, 0)),
            SocketAddr::V6(_) => SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 0)),
        };
        let house_listener = TcpListener::bind(loopback)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {loopback} for the house bots: {e}"))?;
        let house_addr = house_listener.local_addr()?;
        // One budget per process: a process runs one server.
        crate::outbox::BUDGET.set_limit(config.max_queued_bytes);
        let config = Arc::new(config);
        let rooms = TaskTracker::new();
        let ratings = Arc::new(Ratings::new(store.load_ratings()?));
        let (accounts, tokens) = store.load_accounts()?;
        let accounts = Arc::new(Accounts::new(
            store.clone(),
            config.limits.clone(),
            accounts,
            tokens,
            (config.password_checks, config.password_checks_queued),
            (config.account_reads, config.account_reads_queued),
        ));
        accounts.set_house_bots(config.house_bots);
        let lobby = Lobby::new(
            store.clone(),
            config.clone(),
            ratings.clone(),
            rooms.clone(),
        );
        lobby.tie_seats_to(accounts.clone());
        let tournaments = Tournaments::new(
            Services {
                lobby: lobby.clone(),
                store: store.clone(),
                ratings: ratings.clone(),
                config: config.clone(),
                elsewhere: Default::default(),
            },
            rooms.clone(),
        );
        let clustered = store.cluster().is_some();
        // Tournaments first, so that their games' rooms can report to them;
        // their tasks start once the rooms are back. A cluster's node takes
        // over the tournaments and rooms no living node owns.
        let restored_tournaments = if clustered {
            Vec::new()
        } else {
            tournaments.restore()?
        };
        let (restored, house_seats) = if clustered {
            cluster::take_over(&store, &lobby, &tournaments).await?
        } else {
            let hook = |t: &str| tournaments.hook(t);
            lobby.restore(hook, house::house_seats).await?
        };
        if restored > 0 {
            tracing::info!("restored {restored} unfinished matches");
        }
        if !restored_tournaments.is_empty() {
            tracing::info!(
                "restored {} unfinished tournaments",
                restored_tournaments.len()
            );
        }
        for t in restored_tournaments {
            tournaments.spawn(t);
        }
        let shutdown = CancellationToken::new();
        // A child of the shutdown token: whoever starts the shutdown stops the
        // bots at once.
        let house = House::new(
            house_addr,
            config.house_bots,
            lobby.clone(),
            shutdown.child_token(),
        );
        let shared = Node::new(
            house.clone(),
            lobby.clone(),
            tournaments.clone(),
            ratings,
            accounts,
            store.clone(),
            config,
            bus.clone(),
        );
        if let Some(bus) = &bus {
            bus.attach(&shared);
        }
        let router = http::api::router(http::api::Api::new(shared.clone(), shutdown.clone()));
        let connections = TaskTracker::new();
        let stopping = Flag::default();
        tokio::spawn({
            let (shutdown, stopping) = (shutdown.clone(), stopping.clone());
            async move {
                shutdown.cancelled().await;
                stopping.raise();
            }
        });
        let caps = Caps::new(&shared.config);
        let accepting = Accepting {
            shared: shared.clone(),
            router,
            caps,
            shutdown: shutdown.clone(),
            stopping: stopping.clone(),
            connections: connections.clone(),
        };
        tokio::spawn(accept_loop(
            house_listener,
            None,
            Door::House,
            accepting.clone(),
        ));
        tokio::spawn(accept_loop(listener, tls, Door::Public, accepting));
        // Once the server accepts: the bots connect like any client.
        for seat in house_seats {
            house.spawn(seat);
        }
        if clustered {
            tokio::spawn(cluster::run(
                store.clone(),
                lobby.clone(),
                house.clone(),
                bus.clone(),
                tournaments.clone(),
                shutdown.clone(),
            ));
        }
        Ok(Server {
            addr,
            shutdown,
            stopping,
            connections,
            rooms,
            shared,
            house,
            lobby,
            tournaments,
            store,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many house bots run: none once [`shutdown`](Server::shutdown) has
    /// returned (a bot still running 5 s after it was cancelled is logged).
    pub fn house_bots(&self) -> HouseBots {
        self.house.bots()
    }

    /// A token that, when cancelled, starts the shutdown.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Waits for the shutdown token, then shuts down gracefully.
    pub async fn run_until_shutdown(self) {
        self.shutdown.cancelled().await;
        self.shutdown().await;
    }

    /// Graceful shutdown: every command taken is answered, clients are told,
    /// the store is drained. Returns when everything has stopped.
    ///
    /// The order matters. Connections stop reading at once (no command is
    /// taken from then on) but keep writing; in a cluster, so does the bus
    /// for other nodes' clients. The rooms and tournaments then
    /// end, each answering every command in its queue first (with its store
    /// write). Only then do the connections send the `shutdown` notice and
    /// close, so no answer, and no seat token, is lost.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        // At once, not when the task that watches the token gets to run: the
        // connections stop reading before the rooms close.
        self.stopping.raise();
        // The house bots first (their token is cancelled with ours): none may
        // linger to reconnect to a server started next on this address, beside
        // the bots that one puts back.
        self.house.stop(Duration::from_secs(5)).await;
        // Other nodes' commands stop first, answered while the rooms still
        // run; later ones look for their rooms again (`Bus::stop_commands`).
        if let Some(bus) = &self.shared.bus {
            bus.stop_commands();
        }
        // Rooms end once their queues are dropped; each answers what is
        // queued and finishes its store writes first.
        self.lobby.close();
        self.tournaments.close();
        self.rooms.close();
        if tokio::time::timeout(Duration::from_secs(10), self.rooms.wait())
            .await
            .is_err()
        {
            tracing::warn!("some rooms did not stop within 10 s");
        }
        // Their rooms stopped: the other nodes take them at once, and the
        // players this node tells to go find them there.
        if self.store.cluster().is_some() {
            cluster::drain(&self.store).await;
        }
        if let Some(bus) = &self.shared.bus {
            bus.close().await;
        }
        self.shared.answered.cancel();
        self.connections.close();
        if tokio::time::timeout(Duration::from_secs(10), self.connections.wait())
            .await
            .is_err()
        {
            tracing::warn!("some connections did not stop within 10 s");
        }
        let store = self.store.clone();
        // Bounded: a database that stopped answering cannot hold the exit.
        let closed = tokio::task::spawn_blocking(move || store.close());
        if tokio::time::timeout(Duration::from_secs(30), closed)
            .await
            .is_err()
        {
            tracing::warn!("the store did not close within 30 s");
        }
        tracing::info!("server stopped");
    }
}

/// What every accepted connection is handed to.
#[derive(Clone)]
struct Accepting {
    shared: Arc<Node>,
    router: axum::Router,
    caps: Arc<Caps>,
    shutdown: CancellationToken,
    stopping: Flag,
    connections: TaskTracker,
}

async fn accept_loop(listener: TcpListener, tls: Option<Arc<Tls>>, door: Door, on: Accepting) {
    // Over TLS every HTTP answer tells browsers to keep to https://.
    let router = match tls {
        Some(_) => on.router.clone().layer(
            tower_http::set_header::SetResponseHeaderLayer::if_not_present(
                header::STRICT_TRANSPORT_SECURITY,
                HeaderValue::from_static(tls::HSTS),
            ),
        ),
        None => on.router.clone(),
    };
    let Accepting {
        shared,
        caps,
        shutdown,
        stopping,
        connections,
        ..
    } = on;
    let mut backoff = Duration::from_millis(10);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    backoff = Duration::from_millis(10);
                    // Counted before anything is spent on it; the loop
                    // never waits on a connection, refused or not.
                    let admitted = caps.admit(peer.ip(), door);
                    match (admitted, &tls) {
                        // The place goes with the connection's task, given
                        // back when it ends, on any path. (Not in a wrapping
                        // `async` block: that would hold the task's future
                        // twice, and every idle connection would pay for it.)
                        (Ok(place), None) => {
                            connections.spawn(http::accept(
                                stream,
                                shared.clone(),
                                shutdown.clone(),
                                stopping.clone(),
                                place,
                                router.clone(),
                            ));
                        }
                        (Ok(place), Some(tls)) => {
                            let limit = hello_timeout(&shared);
                            let tls = tls.clone();
                            let (shared, shutdown, stopping, router) =
                                (shared.clone(), shutdown.clone(), stopping.clone(), router.clone());
                            connections.spawn(async move {
                                if let Some(stream) = tls.handshake(stream, limit).await {
                                    http::accept(stream, shared, shutdown, stopping, place, router).await;
                                }
                            });
                        }
                        (Err(refusal), None) => caps.turn_away(&connections, |handshake| {
                            http::refuse(stream, peer.ip(), refusal, handshake)
                        }),
                        (Err(refusal), Some(tls)) => {
                            let tls = tls.clone();
                            caps.turn_away(&connections, move |handshake| {
                                refuse_tls(tls, stream, peer.ip(), refusal, handshake)
                            })
                        }
                    }
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait, never die.
                    tracing::warn!("accept failed: {e}; retrying in {backoff:?}");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
            },
            _ = shutdown.cancelled() => break,
        }
    }
}

fn hello_timeout(shared: &Node) -> Duration {
    Duration::from_millis(shared.config.limits.hello_timeout_ms)
}

/// A refusal over TLS: the handshake first, within the refusal's own time.
async fn refuse_tls(
    tls: Arc<Tls>,
    stream: TcpStream,
    peer: std::net::IpAddr,
    refusal: crate::net::caps::TurnedAway,
    handshake: Duration,
) {
    if let Some(stream) = tls.handshake(stream, handshake).await {
        http::refuse(stream, peer, refusal, handshake).await;
    }
}
