//! The server's Prometheus metrics (`GET /metrics`), kept with
//! `prometheus-client`.
//!
//! The counters and histograms are process-wide, like the `metrics` crate's
//! recorder: the room actors, the connections and the store's writer thread
//! record into them without a handle passed down every path. A process runs
//! one server (tests that start several read differences). The gauges are
//! read from the server's own state when `/metrics` is asked for.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::LazyLock;
use std::time::Duration;

use grundy_protocol::wire::{ErrorCode, RoomState};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CodeLabel {
    pub code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StateLabel {
    pub state: &'static str,
}

/// Everything recorded as it happens.
pub struct Metrics {
    pub moves: Counter,
    /// Seconds from reading a move off the socket to queueing its `ack`.
    pub move_to_ack: Histogram,
    /// Seconds the store's writer takes over one group commit.
    pub store_commit: Histogram,
    pub refusals: Family<CodeLabel, Counter>,
    pub http_requests: Family<CodeLabel, Counter>,
    /// Open TCP connections (kept by the caps' places).
    pub connections: Gauge,
    /// Rooms in memory by state (kept by each room's [`RoomGauge`]).
    pub rooms: Family<StateLabel, Gauge>,
    /// Connections dropped because all outbound queues together passed
    /// `max_queued_bytes`.
    pub overload_disconnects: Counter,
}

/// Read from the server when asked for.
#[derive(Default)]
pub struct Gauges {
    pub tournaments: Gauge,
    /// Bytes queued in every connection's outbox (`outbox::BUDGET`).
    pub queued_bytes: Gauge,
    pub house_bots: Gauge,
    /// A cluster's node: its id (its rooms' owner in `room_owners`), and
    /// whether it holds its lease.
    pub node: Option<(String, bool)>,
}

pub static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    let metrics = Metrics {
        moves: Counter::default(),
        // 50 µs to about 1.6 s.
        move_to_ack: Histogram::new(exponential_buckets(0.000_05, 2.0, 16)),
        // 100 µs to about 3.3 s.
        store_commit: Histogram::new(exponential_buckets(0.000_1, 2.0, 16)),
        refusals: Family::default(),
        http_requests: Family::default(),
        connections: Gauge::default(),
        rooms: Family::default(),
        overload_disconnects: Counter::default(),
    };
    // Every state is shown, at 0 too.
    for state in ROOM_STATES {
        drop(metrics.rooms.get_or_create(&StateLabel {
            state: state.as_str(),
        }));
    }
    metrics
});

impl Metrics {
    pub fn refused(&self, code: ErrorCode) {
        // The wire's own name of the code (refusals are not the hot path).
        let code = code.to_string();
        self.refusals.get_or_create(&CodeLabel { code }).inc();
    }

    pub fn observe_move(&self, from_read: Duration) {
        self.moves.inc();
        self.move_to_ack.observe(from_read.as_secs_f64());
    }
}

/// What one room adds to `grundy_rooms{state}`: moved from state to state
/// as the room's match goes on, taken off when the room leaves memory.
pub struct RoomGauge(AtomicU8);

const ROOM_STATES: [RoomState; 3] = [RoomState::Open, RoomState::Playing, RoomState::Finished];
const NO_STATE: u8 = u8::MAX;

impl RoomGauge {
    pub fn new() -> RoomGauge {
        RoomGauge(AtomicU8::new(NO_STATE))
    }

    pub fn set(&self, state: RoomState) {
        let Some(new) = ROOM_STATES.iter().position(|s| *s == state) else {
            return;
        };
        let old = self.0.swap(new as u8, Ordering::Relaxed);
        if old != new as u8 {
            room_gauge(old, -1);
            room_gauge(new as u8, 1);
        }
    }
}

impl Default for RoomGauge {
    fn default() -> Self {
        RoomGauge::new()
    }
}

impl Drop for RoomGauge {
    fn drop(&mut self) {
        room_gauge(*self.0.get_mut(), -1);
    }
}

fn room_gauge(state: u8, by: i64) {
    if let Some(&state) = ROOM_STATES.get(state as usize) {
        METRICS
            .rooms
            .get_or_create(&StateLabel {
                state: state.as_str(),
            })
            .inc_by(by);
    }
}

/// The exposition text of every metric, with `gauges` read just now.
pub fn render(gauges: Gauges) -> String {
    let m = &*METRICS;
    let mut registry = Registry::with_prefix("grundy");
    registry.register(
        "connections",
        "Open TCP connections (WebSocket and HTTP), counted against the caps",
        m.connections.clone(),
    );
    registry.register(
        "rooms",
        "Rooms in memory by state (open: a seat free; playing; finished)",
        m.rooms.clone(),
    );
    registry.register(
        "tournaments",
        "Tournaments registering or running",
        gauges.tournaments,
    );
    registry.register(
        "house_bots",
        "House bots running (one per seat they play)",
        gauges.house_bots,
    );
    if let Some((node, held)) = gauges.node {
        registry.register(
            "node",
            "This cluster node's id (its rooms' owner in room_owners)",
            Info::new(vec![("node".to_owned(), node)]),
        );
        registry.register(
            "node_lease_held",
            "1 while this cluster node holds its lease, 0 otherwise",
            {
                let gauge = Gauge::<i64>::default();
                gauge.set(i64::from(held));
                gauge
            },
        );
    }
    registry.register(
        "queued_bytes",
        "Bytes of outbound text queued for all connections (max_queued_bytes bounds it)",
        gauges.queued_bytes,
    );
    registry.register(
        "overload_disconnects",
        "Connections closed (1013) because the outbound queues together passed max_queued_bytes",
        m.overload_disconnects.clone(),
    );
    registry.register("moves", "Moves accepted", m.moves.clone());
    registry.register(
        "move_to_ack_seconds",
        "Time from reading a move to queueing its ack",
        m.move_to_ack.clone(),
    );
    registry.register(
        "store_commit_seconds",
        "Time of one group commit of the match store",
        m.store_commit.clone(),
    );
    registry.register(
        "refusals",
        "Commands refused, by error code",
        m.refusals.clone(),
    );
    registry.register(
        "http_requests",
        "HTTP requests answered, by status code",
        m.http_requests.clone(),
    );
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
    text
}
