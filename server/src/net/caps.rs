//! Connection caps: how many WebSocket connections the server holds in all
//! (`max_connections`) and from one client address (`connections_per_ip`).
//!
//! The accept loop asks [`Caps::admit`] for a [`Place`] before it starts a
//! connection's task; the place is a guard that gives itself back when the
//! task ends, however it ends (a panic or an abort drops it too). A
//! connection over a cap is turned away in a way a client can read: the
//! WebSocket handshake is completed, then the connection is closed at once
//! with a close code and a reason naming the limit, and nothing it sends is
//! read as a message. Refusals cost little and are capped themselves: at most
//! [`Config::refusals_in_flight`] at once, each done within a few seconds;
//! past that a connection is dropped without a handshake.
//!
//! The client's address is the peer's, except behind a trusted proxy
//! (`Config::trusted_proxies`): a connection from one is counted in all at
//! once, and against its client's address only when that is known, at the
//! WebSocket upgrade ([`Place::claim`], the forwarded header read by
//! `net/forwarded.rs`). A plain HTTP connection from a proxy carries many
//! clients' requests in turn, so it is not counted per address.
//! Addresses in `Config::unlimited_from`, and the house bots' own listener,
//! are not counted per address at all.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ipnet::IpNet;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::metrics::METRICS;
use crate::net::forwarded::{self, BadForwarded};

/// The longest a refused connection may take over its WebSocket handshake
/// (`hello_timeout_ms` if that is shorter): a refusal must not hold a socket
/// as long as a welcome connection may.
pub const REFUSAL_HANDSHAKE: Duration = Duration::from_secs(2);

/// How often at most the log says the server is full (a flood of refusals
/// must not become a flood of log lines).
const FULL_WARNING_EVERY: Duration = Duration::from_secs(60);

/// Why a connection is turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnedAway {
    /// `max_connections` are open.
    Full { limit: usize },
    /// `connections_per_ip` are open from the peer's address.
    PerAddress { limit: usize },
}

impl TurnedAway {
    /// 1013 (try again later) when the server is full: it is nobody's fault
    /// and passes; 1008 (policy) when this address holds its share.
    pub fn close_code(self) -> CloseCode {
        match self {
            TurnedAway::Full { .. } => CloseCode::Again,
            TurnedAway::PerAddress { .. } => CloseCode::Policy,
        }
    }

    /// The close frame's reason (at most 123 bytes, as RFC 6455 allows).
    pub fn reason(self) -> String {
        match self {
            TurnedAway::Full { limit } => {
                format!("server full: {limit} connections open (max_connections); try again later")
            }
            TurnedAway::PerAddress { limit } => {
                format!("too many connections from your address: {limit} open (connections_per_ip)")
            }
        }
    }
}

/// The open connections, counted against the caps.
pub struct Caps {
    max_connections: usize,
    connections_per_ip: usize,
    unlimited_from: Vec<IpNet>,
    trusted_proxies: Arc<[IpNet]>,
    counts: Mutex<Counts>,
    refusals: Arc<Semaphore>,
    refusal_handshake: Duration,
}

#[derive(Default)]
struct Counts {
    total: usize,
    /// Only addresses with a connection open have an entry: the map cannot
    /// grow with the number of addresses ever seen.
    by_address: HashMap<IpAddr, usize>,
    warned_full_at: Option<Instant>,
}

/// Which listener a connection came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// `--listen`: everyone.
    Public,
    /// The house bots' own port on loopback: not counted per address.
    House,
}

/// How a place counts against `connections_per_ip`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Share {
    /// Under this key.
    Counted(IpAddr),
    /// Not at all (`unlimited_from`, the house bots' door).
    Unlimited,
    /// A trusted proxy's connection: once its client is known.
    Pending,
}

/// A connection's peer, and the proxies whose word on the client is believed.
#[derive(Clone)]
pub struct Forwarding {
    peer: IpAddr,
    trusted: Arc<[IpNet]>,
}

impl Forwarding {
    /// The client of a request that came with `headers`: the peer, or whom a
    /// trusted proxy's `Forwarded` / `X-Forwarded-For` names
    /// ([`forwarded::client_address`]).
    pub fn client(&self, headers: &axum::http::HeaderMap) -> Result<IpAddr, BadForwarded> {
        forwarded::client_address(self.peer, headers, &self.trusted)
    }
}

/// One connection's place under the caps, given back when dropped.
pub struct Place {
    caps: Arc<Caps>,
    /// The socket's peer.
    peer: IpAddr,
    share: Share,
}

impl Place {
    /// The client's address as the per-address limits count it (an IPv6
    /// address's /64); None for a connection exempt from them, or one from
    /// a proxy whose client is not known yet.
    pub fn address(&self) -> Option<IpAddr> {
        match self.share {
            Share::Counted(address) => Some(address),
            Share::Unlimited | Share::Pending => None,
        }
    }

    /// The socket's peer.
    pub fn peer(&self) -> IpAddr {
        self.peer
    }

    /// What finds the client of each request on this connection.
    pub fn forwarding(&self) -> Forwarding {
        Forwarding {
            peer: self.peer,
            trusted: self.caps.trusted_proxies.clone(),
        }
    }

    /// Counts a connection from a trusted proxy against its client's
    /// address, now known; any other place counts already, and is left as
    /// it is.
    pub fn claim(&mut self, client: IpAddr) -> Result<(), TurnedAway> {
        if self.share != Share::Pending {
            return Ok(());
        }
        let client = client.to_canonical();
        if forwarded::is_inside(&self.caps.unlimited_from, client) {
            self.share = Share::Unlimited;
            return Ok(());
        }
        let address = address_key(client);
        let mut counts = self.caps.counts();
        let open = counts.by_address.entry(address).or_insert(0);
        if *open >= self.caps.connections_per_ip {
            if *open == 0 {
                counts.by_address.remove(&address);
            }
            return Err(TurnedAway::PerAddress {
                limit: self.caps.connections_per_ip,
            });
        }
        *open += 1;
        self.share = Share::Counted(address);
        Ok(())
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        METRICS.connections.dec();
        let mut counts = self.caps.counts();
        counts.total = counts.total.saturating_sub(1);
        if let Share::Counted(address) = self.share {
            if let Entry::Occupied(mut open) = counts.by_address.entry(address) {
                *open.get_mut() -= 1;
                if *open.get() == 0 {
                    open.remove();
                }
            }
        }
    }
}

impl Caps {
    pub fn new(config: &Config) -> Arc<Caps> {
        Arc::new(Caps {
            max_connections: config.limits.max_connections,
            connections_per_ip: config.limits.connections_per_ip,
            unlimited_from: config.unlimited_from.clone(),
            trusted_proxies: config.trusted_proxies.clone().into(),
            counts: Mutex::new(Counts::default()),
            refusals: Arc::new(Semaphore::new(config.refusals_in_flight)),
            refusal_handshake: REFUSAL_HANDSHAKE
                .min(Duration::from_millis(config.limits.hello_timeout_ms)),
        })
    }

    /// A place for a connection from `peer` that came in at `door`, or why
    /// there is none.
    pub fn admit(self: &Arc<Self>, peer: IpAddr, door: Door) -> Result<Place, TurnedAway> {
        let peer = peer.to_canonical();
        let share = if door == Door::House {
            Share::Unlimited
        } else if forwarded::is_inside(&self.trusted_proxies, peer) {
            Share::Pending
        } else if forwarded::is_inside(&self.unlimited_from, peer) {
            Share::Unlimited
        } else {
            Share::Counted(address_key(peer))
        };
        let mut counts = self.counts();
        if let Share::Counted(address) = share {
            let open = counts.by_address.get(&address).copied().unwrap_or(0);
            if open >= self.connections_per_ip {
                return Err(TurnedAway::PerAddress {
                    limit: self.connections_per_ip,
                });
            }
        }
        if counts.total >= self.max_connections {
            let now = Instant::now();
            let quiet = matches!(counts.warned_full_at,
                Some(at) if now.duration_since(at) < FULL_WARNING_EVERY);
            if !quiet {
                counts.warned_full_at = Some(now);
                tracing::warn!(
                    "{} connections open (max_connections): turning new ones away",
                    self.max_connections
                );
            }
            return Err(TurnedAway::Full {
                limit: self.max_connections,
            });
        }
        counts.total += 1;
        if let Share::Counted(address) = share {
            *counts.by_address.entry(address).or_insert(0) += 1;
        }
        METRICS.connections.inc();
        Ok(Place {
            caps: self.clone(),
            peer,
            share,
        })
    }

    /// Turns a connection away on a task of `tracker`, by `refuse` (given
    /// the longest its handshake may take): the close frame if fewer than
    /// `refusals_in_flight` refusals are under way, else at once, without a
    /// handshake (`refuse` and the socket it holds are dropped).
    pub fn turn_away<F>(&self, tracker: &TaskTracker, refuse: impl FnOnce(Duration) -> F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        // In a flood of refusals, the cheapest one: a closed socket.
        if let Ok(permit) = self.refusals.clone().try_acquire_owned() {
            let refusing = refuse(self.refusal_handshake);
            tracker.spawn(async move {
                let _permit = permit;
                refusing.await;
            });
        }
    }

    /// Connections open now (for tests and logs).
    pub fn open(&self) -> usize {
        self.counts().total
    }

    fn counts(&self) -> MutexGuard<'_, Counts> {
        // Nothing panics while holding it, but a count must never be lost.
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What `connections_per_ip` counts under: the address itself for IPv4, its
/// /64 prefix for IPv6 (one host is usually given a whole /64, so counting
/// single IPv6 addresses would cap nothing).
fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from_bits(v6.to_bits() & !((1u128 << 64) - 1))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(total: usize, per_ip: usize) -> Arc<Caps> {
        let mut config = Config::default();
        config.limits.max_connections = total;
        config.limits.connections_per_ip = per_ip;
        Caps::new(&config)
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("address")
    }

    #[test]
    fn an_address_gets_its_share_and_no_more() {
        let caps = caps(10, 2);
        let a = caps.admit(ip("198.51.100.7"), Door::Public).expect("first");
        let _b = caps
            .admit(ip("198.51.100.7"), Door::Public)
            .expect("second");
        assert_eq!(
            caps.admit(ip("198.51.100.7"), Door::Public).err(),
            Some(TurnedAway::PerAddress { limit: 2 })
        );
        // Another address is counted apart.
        let _c = caps
            .admit(ip("198.51.100.8"), Door::Public)
            .expect("other address");
        drop(a);
        let _d = caps
            .admit(ip("198.51.100.7"), Door::Public)
            .expect("place given back");
        assert_eq!(caps.open(), 3);
    }

    #[test]
    fn the_total_is_capped_whatever_the_address() {
        let caps = caps(2, 5);
        let _a = caps.admit(ip("198.51.100.1"), Door::Public).expect("first");
        let b = caps
            .admit(ip("127.0.0.1"), Door::Public)
            .expect("loopback counts too");
        assert_eq!(
            caps.admit(ip("198.51.100.2"), Door::Public).err(),
            Some(TurnedAway::Full { limit: 2 })
        );
        drop(b);
        assert!(caps.admit(ip("198.51.100.2"), Door::Public).is_ok());
    }

    #[test]
    fn unlimited_ranges_and_the_house_door_are_not_counted_per_address() {
        let mut config = Config::default();
        config.limits.connections_per_ip = 1;
        config.unlimited_from = vec!["127.0.0.0/8".parse().expect("range")];
        let caps = Caps::new(&config);
        let _places: Vec<Place> = ["127.0.0.1", "127.0.0.1", "::ffff:127.0.0.1"]
            .into_iter()
            .map(|a| caps.admit(ip(a), Door::Public).expect("unlimited"))
            .collect();
        let _x = caps.admit(ip("::1"), Door::Public).expect("first ::1");
        assert!(
            caps.admit(ip("::1"), Door::Public).is_err(),
            "::1 is not in 127/8"
        );
        let _h = caps.admit(ip("::1"), Door::House).expect("house door");
        assert_eq!(caps.open(), 5);
    }

    #[test]
    fn by_default_loopback_is_capped_like_any_address() {
        let caps = caps(10, 1);
        let _a = caps.admit(ip("127.0.0.2"), Door::Public).expect("first");
        assert_eq!(
            caps.admit(ip("127.0.0.2"), Door::Public).err(),
            Some(TurnedAway::PerAddress { limit: 1 })
        );
    }

    #[test]
    fn a_trusted_proxys_connections_count_against_their_clients() {
        let mut config = Config::default();
        config.limits.max_connections = 10;
        config.limits.connections_per_ip = 1;
        config.trusted_proxies = vec!["10.0.0.1/32".parse().expect("range")];
        config.unlimited_from = vec!["192.0.2.0/24".parse().expect("range")];
        let caps = Caps::new(&config);
        let proxy = ip("10.0.0.1");
        let mut a = caps.admit(proxy, Door::Public).expect("proxy");
        let mut b = caps.admit(proxy, Door::Public).expect("proxy again");
        let mut c = caps.admit(proxy, Door::Public).expect("and again");
        let mut d = caps.admit(proxy, Door::Public).expect("and again");
        assert_eq!(a.address(), None, "not counted before its client is known");
        a.claim(ip("198.51.100.7")).expect("first client");
        assert_eq!(a.address(), Some(ip("198.51.100.7")));
        b.claim(ip("198.51.100.8")).expect("another client");
        assert_eq!(
            c.claim(ip("198.51.100.7")),
            Err(TurnedAway::PerAddress { limit: 1 })
        );
        d.claim(ip("192.0.2.5")).expect("an unlimited client");
        assert_eq!(d.address(), None);
        // Claiming again changes nothing; giving back frees the client's share.
        a.claim(ip("203.0.113.1")).expect("already counted");
        assert_eq!(a.address(), Some(ip("198.51.100.7")));
        drop(a);
        c.claim(ip("198.51.100.7")).expect("place given back");
        // A client directly is counted as itself, a proxy never.
        assert!(caps.admit(ip("198.51.100.8"), Door::Public).is_err());
        assert_eq!(caps.open(), 3);
    }

    #[test]
    fn ipv6_is_counted_per_64_and_mapped_ipv4_as_ipv4() {
        let caps = caps(10, 1);
        let _a = caps
            .admit(ip("2001:db8:1:2::1"), Door::Public)
            .expect("first");
        assert!(caps
            .admit(ip("2001:db8:1:2:ffff::9"), Door::Public)
            .is_err());
        assert!(caps.admit(ip("2001:db8:1:3::1"), Door::Public).is_ok());
        let _v4 = caps.admit(ip("198.51.100.9"), Door::Public).expect("v4");
        assert!(caps.admit(ip("::ffff:198.51.100.9"), Door::Public).is_err());
    }

    #[tokio::test]
    async fn a_place_is_given_back_when_its_task_panics() {
        let caps = caps(1, 1);
        let place = caps.admit(ip("198.51.100.1"), Door::Public).expect("first");
        let outcome = tokio::spawn(async move {
            let _place = place;
            panic!("a bug in a connection task");
        })
        .await;
        assert!(outcome.is_err_and(|e| e.is_panic()));
        assert_eq!(caps.open(), 0);
        assert!(caps.admit(ip("198.51.100.1"), Door::Public).is_ok());
    }

    #[test]
    fn reasons_fit_a_close_frame() {
        for refusal in [
            TurnedAway::Full { limit: usize::MAX },
            TurnedAway::PerAddress { limit: usize::MAX },
        ] {
            assert!(refusal.reason().len() <= 123, "{}", refusal.reason());
        }
    }
}
