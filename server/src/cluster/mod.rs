//! A node of a cluster (`--cluster`: several servers on one PostgreSQL
//! database). The store keeps the leases (`store/cluster.rs`); this task
//! keeps the node's own lease alive and takes over the rooms and tournaments
//! of nodes that died or drain:
//!
//! - every quarter of the lease it renews the node's lease, then claims the
//!   orphaned tournaments and rooms, rebuilds each one from its log (as a
//!   restart does: clocks go on from the banks of the turn's start, so the
//!   time the takeover took is charged to nobody) and puts the rooms' house
//!   bots back. A tournament whose game rooms another node took reads their
//!   results from the store;
//! - a renewal that finds the lease run out (the node was paused, or cut off
//!   from the database, for longer than the lease) lets every room and
//!   tournament go, since other nodes may own them by now, and joins again
//!   under a new id: what nobody took comes back through the next claim,
//!   under a new epoch;
//! - a database that cannot be reached is logged and asked again at the next
//!   round; meanwhile the rooms' writes fail, so no move is acknowledged.

pub mod bus;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::cluster::bus::Bus;
use crate::house::{self, House, HouseSeat};
use crate::lobby::Lobby;
use crate::store::{Claimed, MatchStore, StoreError};
use crate::tournament::registry::Tournaments;

/// Rooms (and tournaments) taken in one claim (the rest at the next round, or at once while
/// claims come back full).
const CLAIM_BATCH: usize = 500;

/// How often the node looks for orphaned rooms (a cheap query: the rooms of
/// dead nodes, by index), so that a drained node's rooms move at once.
const CLAIM_ROUND: Duration = Duration::from_millis(250);

/// How often the node renews its lease, and looks for orphaned rooms.
fn rounds(lease: Duration) -> (Duration, Duration) {
    let renew = (lease / 4).max(Duration::from_millis(50));
    (renew, renew.min(CLAIM_ROUND))
}

/// Claims orphaned tournaments and rooms until none is left (or a claim
/// fails) and brings them back (the tournaments first, so that their game
/// rooms report to them); returns how many rooms, and the house seats to put
/// bots on.
pub async fn take_over(
    store: &Arc<dyn MatchStore>,
    lobby: &Arc<Lobby>,
    tournaments: &Arc<Tournaments>,
) -> Result<(usize, Vec<HouseSeat>), StoreError> {
    let mut total = 0;
    let mut house_seats = Vec::new();
    // Claims stop well within the lease: the node must renew it meanwhile.
    let budget = store.cluster().map_or(Duration::ZERO, |c| c.lease() / 2);
    let started = std::time::Instant::now();
    loop {
        let claimer = store.clone();
        let claimed = blocking(move || match claimer.cluster() {
            Some(cluster) => cluster.claim(CLAIM_BATCH),
            None => Ok(Claimed::default()),
        })
        .await?;
        let full = claimed.rooms.len() == CLAIM_BATCH || claimed.tournaments.len() == CLAIM_BATCH;
        if claimed.is_empty() {
            return Ok((total, house_seats));
        }
        if !claimed.tournaments.is_empty() {
            let count = tournaments.bring_back(claimed.tournaments);
            tracing::info!("took over {count} tournaments of nodes that are gone");
        }
        let stored = claimed
            .rooms
            .into_iter()
            .map(|(room, lease)| (room, Some(lease)))
            .collect();
        let hook = |t: &str| tournaments.hook(t);
        let (count, seats) = lobby.bring_back(stored, hook, house::house_seats).await;
        tracing::info!("took over {count} rooms of nodes that are gone");
        total += count;
        house_seats.extend(seats);
        if !full || started.elapsed() >= budget {
            return Ok((total, house_seats));
        }
    }
}

/// The node's task: renew, take over, until `shutdown`.
pub async fn run(
    store: Arc<dyn MatchStore>,
    lobby: Arc<Lobby>,
    house: Arc<House>,
    bus: Option<Arc<Bus>>,
    tournaments: Arc<Tournaments>,
    shutdown: CancellationToken,
) {
    let Some(lease) = store.cluster().map(|c| c.lease()) else {
        return;
    };
    let (renewal, claims) = rounds(lease);
    let mut ticks = tokio::time::interval(claims);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut renewed = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = shutdown.cancelled() => return,
        }
        if renewed.elapsed() >= renewal {
            renewed = tokio::time::Instant::now();
            if !renew(&store, &lobby, &tournaments, bus.as_ref()).await {
                continue;
            }
        }
        match take_over(&store, &lobby, &tournaments).await {
            Ok((_, seats)) => seats.into_iter().for_each(|seat| house.spawn(seat)),
            Err(e) => tracing::warn!("cannot take over rooms: {e}"),
        }
    }
}

/// Renews the node's lease; when it had run out, lets every room and
/// tournament go and joins again. Whether the node may claim now.
async fn renew(
    store: &Arc<dyn MatchStore>,
    lobby: &Arc<Lobby>,
    tournaments: &Tournaments,
    bus: Option<&Arc<Bus>>,
) -> bool {
    let renewer = store.clone();
    match blocking(move || cluster_of(&renewer)?.renew()).await {
        Ok(()) => true,
        Err(StoreError::LeaseLost(why)) => {
            tracing::error!("{why}: letting every room and tournament go and joining again");
            lobby.let_go();
            tournaments.let_go();
            let joiner = store.clone();
            match blocking(move || cluster_of(&joiner)?.rejoin()).await {
                Ok(node) => {
                    tracing::info!(%node, "joined the cluster again");
                    if let Some(bus) = bus {
                        if let Err(e) = bus.serve(node).await {
                            tracing::error!(
                                "cannot take commands on the bus under the new id: {e}"
                            );
                        }
                    }
                    true
                }
                Err(e) => {
                    tracing::error!("cannot join the cluster again: {e}");
                    false
                }
            }
        }
        Err(e) => {
            tracing::warn!("cannot renew this node's lease: {e}");
            false
        }
    }
}

/// The node is shutting down and its rooms have stopped: other nodes may
/// take them at once.
pub async fn drain(store: &Arc<dyn MatchStore>) {
    let drainer = store.clone();
    match blocking(move || cluster_of(&drainer)?.drain()).await {
        Ok(()) => tracing::info!("this node's rooms are free for the other nodes"),
        Err(e) => tracing::warn!("cannot hand this node's rooms over: {e}"),
    }
}

fn cluster_of(store: &Arc<dyn MatchStore>) -> Result<&dyn crate::store::Cluster, StoreError> {
    store
        .cluster()
        .ok_or_else(|| StoreError::LeaseLost("not a cluster's node".into()))
}

/// Runs a blocking store call off the reactor.
async fn blocking<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(call)
        .await
        .unwrap_or_else(|e| Err(StoreError::Postgres(format!("the store call failed: {e}"))))
}
