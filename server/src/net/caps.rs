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

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::metrics::METRICS;

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
    exempt_this_host: bool,
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

/// One connection's place under the caps, given back when dropped.
pub struct Place {
    caps: Arc<Caps>,
    /// The key it counts under, if it counts against `connections_per_ip`.
    address: Option<IpAddr>,
}

impl Place {
    /// The client's address as the per-address limits count it (an IPv6
    /// address's /64); None for a connection exempt from them.
    pub fn address(&self) -> Option<IpAddr> {
        self.address
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        METRICS.connections.dec();
        let mut counts = self.caps.counts();
        counts.total = counts.total.saturating_sub(1);
        if let Some(address) = self.address {
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
            exempt_this_host: config.exempt_this_host,
            counts: Mutex::new(Counts::default()),
            refusals: Arc::new(Semaphore::new(config.refusals_in_flight)),
            refusal_handshake: REFUSAL_HANDSHAKE
                .min(Duration::from_millis(config.limits.hello_timeout_ms)),
        })
    }

    /// A place for a connection from `peer`, or why there is none.
    /// `local` gives the address the connection came in on; it is asked only
    /// for a peer that is not loopback, to tell whether it is this host.
    pub fn admit(
        self: &Arc<Self>,
        peer: IpAddr,
        local: impl FnOnce() -> Option<IpAddr>,
    ) -> Result<Place, TurnedAway> {
        let peer = peer.to_canonical();
        let this_host = peer.is_loopback() || local().map(|l| l.to_canonical()) == Some(peer);
        let address = (!(this_host && self.exempt_this_host)).then(|| address_key(peer));
        let mut counts = self.counts();
        if let Some(address) = address {
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
        if let Some(address) = address {
            *counts.by_address.entry(address).or_insert(0) += 1;
        }
        METRICS.connections.inc();
        Ok(Place {
            caps: self.clone(),
            address,
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

    fn remote() -> Option<IpAddr> {
        Some(ip("192.0.2.1"))
    }

    #[test]
    fn an_address_gets_its_share_and_no_more() {
        let caps = caps(10, 2);
        let a = caps.admit(ip("198.51.100.7"), remote).expect("first");
        let _b = caps.admit(ip("198.51.100.7"), remote).expect("second");
        assert_eq!(
            caps.admit(ip("198.51.100.7"), remote).err(),
            Some(TurnedAway::PerAddress { limit: 2 })
        );
        // Another address is counted apart.
        let _c = caps
            .admit(ip("198.51.100.8"), remote)
            .expect("other address");
        drop(a);
        let _d = caps
            .admit(ip("198.51.100.7"), remote)
            .expect("place given back");
        assert_eq!(caps.open(), 3);
    }

    #[test]
    fn the_total_is_capped_whatever_the_address() {
        let caps = caps(2, 5);
        let _a = caps.admit(ip("198.51.100.1"), remote).expect("first");
        let b = caps
            .admit(ip("127.0.0.1"), remote)
            .expect("loopback counts too");
        assert_eq!(
            caps.admit(ip("198.51.100.2"), remote).err(),
            Some(TurnedAway::Full { limit: 2 })
        );
        drop(b);
        assert!(caps.admit(ip("198.51.100.2"), remote).is_ok());
    }

    #[test]
    fn this_host_is_exempt_from_the_per_address_cap() {
        let caps = caps(10, 1);
        let _places: Vec<Place> = ["127.0.0.1", "127.0.0.1", "::1", "::ffff:127.0.0.1"]
            .into_iter()
            .map(|a| caps.admit(ip(a), remote).expect("loopback"))
            .collect();
        // A connection from the address it came in on is from this host.
        let own = || Some(ip("192.0.2.1"));
        let _x = caps.admit(ip("192.0.2.1"), own).expect("own address");
        let _y = caps.admit(ip("192.0.2.1"), own).expect("own address again");
        assert_eq!(caps.open(), 6);
    }

    #[test]
    fn without_the_exemption_loopback_is_capped_like_any_address() {
        let mut config = Config::default();
        config.limits.connections_per_ip = 1;
        config.exempt_this_host = false;
        let caps = Caps::new(&config);
        let _a = caps.admit(ip("127.0.0.2"), remote).expect("first");
        assert_eq!(
            caps.admit(ip("127.0.0.2"), remote).err(),
            Some(TurnedAway::PerAddress { limit: 1 })
        );
    }

    #[test]
    fn ipv6_is_counted_per_64_and_mapped_ipv4_as_ipv4() {
        let caps = caps(10, 1);
        let _a = caps.admit(ip("2001:db8:1:2::1"), remote).expect("first");
        assert!(caps.admit(ip("2001:db8:1:2:ffff::9"), remote).is_err());
        assert!(caps.admit(ip("2001:db8:1:3::1"), remote).is_ok());
        let _v4 = caps.admit(ip("198.51.100.9"), remote).expect("v4");
        assert!(caps.admit(ip("::ffff:198.51.100.9"), remote).is_err());
    }

    #[tokio::test]
    async fn a_place_is_given_back_when_its_task_panics() {
        let caps = caps(1, 1);
        let place = caps.admit(ip("198.51.100.1"), remote).expect("first");
        let outcome = tokio::spawn(async move {
            let _place = place;
            panic!("a bug in a connection task");
        })
        .await;
        assert!(outcome.is_err_and(|e| e.is_panic()));
        assert_eq!(caps.open(), 0);
        assert!(caps.admit(ip("198.51.100.1"), remote).is_ok());
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
