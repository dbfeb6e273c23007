//! The bus between a cluster's nodes (NATS, `--bus nats://...`): a client
//! connected to one node plays in rooms another node owns.
//!
//! - **Commands.** A room command for a room this node does not hold goes,
//!   as a request, to the node that owns it (`grundy.CLUSTER.cmd.NODE`); the
//!   owner takes it into a *remote connection* of its own that stands for
//!   the client's (an outbox, a member of rooms like any connection) and
//!   replies at once. No reply within [`REQUEST_TIMEOUT`] is a coded error
//!   to the client.
//! - **Exactly one answer.** The client's node keeps each command it sent
//!   until its answer comes back. One not answered within [`ANSWER_WAIT`]
//!   (its node died or is paused), or whose node stopped or fell silent, or
//!   went through a bus that lost messages, is answered there with
//!   `internal`, and the connection is closed with a reason that says why,
//!   to resume: nothing later reaches it, so no answer comes twice. A
//!   command carries a deadline ([`TAKE_WITHIN`]): a node that reads it
//!   later (it was paused) drops it, so it never runs after its client was
//!   told it did not.
//! - **Answers and events.** What the remote connection's outbox receives
//!   (answers, acks, events, in order) goes back to the client's node
//!   (`grundy.CLUSTER.out.BUS_ID`), numbered: the client's node hands each
//!   batch to the client's own outbox, and a gap in the numbers (a message
//!   the bus dropped) closes the client's connection, which resumes with
//!   `since`, rather than letting it miss an event.
//! - **Hand-over.** When a room stops on a node (it drains, or lets its
//!   rooms go after losing its lease), each remote connection in it sends,
//!   after the room's last frames, where it was (`Moved`): the client's
//!   node carries it on in the room on its next node
//!   (`RoomRequest::CarryOn`), and the client sees nothing.
//! - **Liveness.** Every node says it is alive each second
//!   (`grundy.CLUSTER.alive`); the remote connections of a node silent for
//!   [`SILENCE`] are ended (their seats show as disconnected, as when a
//!   client drops), and a client whose commands went to a node that fell
//!   silent is disconnected, to resume where its rooms are now. After the
//!   bus connection comes back, or a subscription overflowed, messages may
//!   have been lost with nothing later to show it: the same clients resume.
//!   (A lost message is otherwise seen by the gap it leaves.)
//! - **Trust.** Every message is signed with the cluster's secret (HMAC-SHA256,
//!   from the shared database) and numbered by its sender: a message from
//!   another cluster, forged, or replayed is refused and logged.
//!
//! This file holds the bus itself (its connection, subscriptions, the
//! hand-over at a stop) and the messages' types; `forward.rs` is the
//! client's side of a command, `remote.rs` the owner's, `gossip.rs` the
//! lobby, accounts and ratings the nodes share, `liveness.rs` the
//! heartbeats, `seal.rs` the signing. The bus is handed an [`Inbound`]
//! (the node it serves) and never imports the connections above it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use grundy_protocol::wire::{ErrorCode, RequestId, RoomSummary, ServerMsg, TournamentSummary};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use tokio::sync::mpsc::error::TrySendError;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_util::sync::CancellationToken;

use crate::accounts::cluster::AccountChange;
use crate::accounts::Accounts;
use crate::command::{Ask, Request, RoomRequest, Unsent};
use crate::config::Config;
use crate::lobby::Lobby;
use crate::outbox::{ConnId, Frames, Handoff, Handover, Kick, Outbox, MAX_FRAMES};
use crate::ratings::Ratings;
use crate::room::RoomCmd;
use crate::store::RatingRow;
use crate::tournament::actor::TournamentCmd;
use crate::tournament::registry::Tournaments;

mod forward;
mod gossip;
mod liveness;
mod remote;
mod seal;

use remote::leave_rooms;
use seal::unix_ms;

/// A node's answer to a command for a room or tournament it does not hold
/// (any more): the sender looks its owner up again.
pub const NOT_HERE: &str = "not held here";

/// A node's answer to a command that reached it after its deadline: it was
/// not carried out.
pub const LATE: &str =
    "it arrived after its deadline (the node was held up), so it was not carried out";

/// The node the bus serves, as the layer above it (the connections) hands
/// it over in [`Bus::attach`]: its services, and the way a command reaches a
/// room or tournament here. So the bus carries commands without importing
/// the connections that make them.
pub trait Inbound: Send + Sync + 'static {
    fn lobby(&self) -> &Arc<Lobby>;
    fn tournaments(&self) -> &Arc<Tournaments>;
    fn accounts(&self) -> &Arc<Accounts>;
    fn ratings(&self) -> &Arc<Ratings>;
    fn config(&self) -> &Config;
    /// A new connection id (a remote connection is one too).
    fn next_conn(&self) -> ConnId;
    /// Hands `request` to its room or tournament on this node.
    fn deliver(&self, outbox: &Outbox, request: Request, received: tokio::time::Instant);
    /// Sends a command the bus makes on its own (a follow, a resignation)
    /// where its room is now: here, or over `bus` to its node.
    fn route(
        self: Arc<Self>,
        bus: Arc<Bus>,
        outbox: Outbox,
        what: Request,
    ) -> futures_util::future::BoxFuture<'static, Result<(), Unsent>>;
}

/// Why a node did not take a forwarded command.
#[derive(Debug)]
pub enum Untaken {
    /// It does not hold the room (any more): look it up again.
    NotHere,
    /// The node this connection's events of the room came from (named)
    /// stopped without handing it over: the connection is dropped, to
    /// resume.
    Stopped(Arc<str>),
    /// Anything else, said.
    Why(String),
}

/// How long a stopping node waits for its remote connections to send their
/// last frames and where their rooms were.
const HANDOVER_WAIT: Duration = Duration::from_secs(2);

/// How long a stopping node waits for the bus to take its last messages.
const FLUSH_WAIT: Duration = Duration::from_secs(1);

/// How long a node waits for the owner to take a forwarded command.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a forwarded command may take to reach its node and be taken:
/// past it the node drops it. Shorter than [`ANSWER_WAIT`], so that one
/// taken in time leaves its room a second to decide and answer. (It is
/// the senders' wall clock against the owner's: the nodes' clocks must
/// agree to well within a second, as NTP keeps them.)
const TAKE_WITHIN: Duration = Duration::from_secs(2);

/// How long the client's node waits for a forwarded command's answer
/// before it answers it itself and closes the connection, to resume.
pub const ANSWER_WAIT: Duration = Duration::from_secs(3);

/// How often the answers waited for are looked at.
const ANSWER_CHECK: Duration = Duration::from_millis(100);

/// How long a node that finds nobody serving a node its connection has
/// rooms on waits for that node's hand-over, which may be on its way.
const HANDOVER_GRACE: Duration = Duration::from_millis(200);

/// How long a node may stay silent before the others count it gone.
pub const SILENCE: Duration = Duration::from_secs(5);

/// How often a node says it is alive.
const HEARTBEAT: Duration = Duration::from_secs(1);

/// How long a lobby list waits for the other nodes' rooms.
const LOBBY_WAIT: Duration = Duration::from_millis(300);

/// How long the other nodes' tournaments, once asked, answer
/// `list_tournaments`.
const LIST_FRESH: Duration = Duration::from_millis(500);

/// Rooms per message of a node's lobby (well under NATS's 1 MB messages).
const LOBBY_PART: usize = 500;

/// How far back a sender's message numbers are remembered (for replays).
const REPLAY_WINDOW: u64 = 4096;

type HmacSha256 = Hmac<Sha256>;

/// What travels, signed.
#[derive(Serialize, Deserialize)]
struct Envelope<T> {
    /// The sender's bus id.
    from: String,
    /// The sender's message number (each used once).
    n: u64,
    body: T,
}

/// A client connection's room or tournament request, or its end (`None`).
#[derive(Debug, Serialize, Deserialize)]
struct Command {
    conn: ConnId,
    what: Option<Request>,
    /// When it must have been taken, in milliseconds since the Unix epoch
    /// ([`TAKE_WITHIN`] after it was sent).
    #[serde(default)]
    deadline: Option<u64>,
}

#[derive(Serialize, Deserialize)]
struct Out {
    conn: ConnId,
    /// Numbered from 1 per remote connection: a gap is a lost message.
    seq: u64,
    frames: Vec<String>,
    /// The remote connection ended (its outbox overflowed, its rooms
    /// dropped it, or its node stops).
    closed: bool,
    /// Rooms its node stopped, every frame they sent having come before:
    /// the client follows them to their next nodes. With `closed`, the
    /// remote connection ended cleanly (nothing lost: the client stays).
    #[serde(default)]
    moved: Option<Moved>,
    /// The sending node's id in the store (what its commands were sent to):
    /// an answer is matched to its command by id and node.
    #[serde(default)]
    node: Option<String>,
}

/// What a remote connection's task does next.
enum Next {
    /// Sends its rooms' frames.
    Frames(Frames),
    /// Some of its rooms stopped here: says where they were.
    Moved,
    /// Overflowed, or its rooms dropped it: its client resumes.
    Kicked,
    /// Its client's node said it closed, or this node shuts down: after
    /// what is queued, and with where its stopped rooms were.
    End,
}

/// Rooms that stopped on a node with a remote connection in them.
#[derive(Serialize, Deserialize)]
struct Moved {
    /// With `closed`: the ids the node served under (its client's node
    /// forgets them).
    nodes: Vec<String>,
    rooms: Vec<Handoff>,
}

/// A node asks the others for their listed rooms, or their tournaments.
#[derive(Serialize, Deserialize)]
struct LobbyAsk {
    /// The asker's store id (a node does not answer itself).
    node: String,
    /// Tournaments rather than rooms.
    #[serde(default)]
    tournaments: bool,
}

/// Some of a node's listed rooms (or its tournaments, all in one part);
/// `last` on its last part.
#[derive(Serialize, Deserialize)]
struct LobbyPart {
    rooms: Vec<RoomSummary>,
    #[serde(default)]
    tournaments: Vec<TournamentSummary>,
    last: bool,
}

#[derive(Serialize, Deserialize)]
struct Alive {
    /// The node's id in the store (its rooms' owner), now.
    node: String,
}

/// A client's connection on this node, as the bus knows it.
struct Local {
    outbox: Outbox,
    /// The nodes its commands went to.
    nodes: HashSet<Arc<str>>,
    /// The next batch number expected from each remote connection (by node).
    next: HashMap<String, u64>,
    /// Its commands sent to other nodes whose answers have not come back.
    waiting: Vec<Waiting>,
    /// Where the events of each room (by id) it joined, resumed or watched
    /// through the bus come from.
    streams: HashMap<String, Stream>,
}

/// Where a client connection's events of a room come from.
enum Stream {
    /// A remote connection on that node.
    From(Arc<str>),
    /// Its node stopped the room and handed the connection over: it
    /// carries on in the room on its next node (`Bus::carry_on`).
    Moving,
}

/// At most so many rooms' streams are kept per connection (far more than
/// it may be in at once): one past it starts over.
const MAX_STREAMS: usize = 256;

/// A forwarded command that waits for its answer.
struct Waiting {
    /// Tells it from another command with the same id.
    n: u64,
    /// The request id its answer carries.
    id: Option<RequestId>,
    node: Arc<str>,
    sent: Instant,
}

/// A remote connection: a client of another node, here.
struct Remote {
    outbox: Outbox,
    stop: CancellationToken,
    /// The task that sends its outbox back.
    task: tokio::task::JoinHandle<()>,
}

/// Replay protection: per sender, the highest number seen and which of the
/// ones just below it were seen.
#[derive(Default)]
struct Seen {
    highest: u64,
    window: HashSet<u64>,
}

/// This node's end of the bus.
pub struct Bus {
    client: async_nats::Client,
    /// `grundy.CLUSTER`
    prefix: String,
    /// This process's id on the bus (its `out` subject).
    me: String,
    secret: Vec<u8>,
    numbers: std::sync::atomic::AtomicU64,
    shared: OnceLock<Weak<dyn Inbound>>,
    locals: Mutex<HashMap<ConnId, Local>>,
    remotes: Mutex<HashMap<(String, ConnId), Remote>>,
    seen: Mutex<HashMap<String, Seen>>,
    /// When each node (by bus id and by store id) was last heard.
    heard: Mutex<HashMap<String, Instant>>,
    /// The store ids nodes have said they run under.
    alive_nodes: Mutex<HashSet<String>>,
    /// The node ids this node serves commands under (one, or more after a rejoin).
    serving: Mutex<HashSet<String>>,
    /// This node's id in the store, now.
    node: Mutex<Arc<str>>,
    stop: CancellationToken,
    /// Cancelled when this node stops taking commands, before its rooms stop.
    commands_stopped: CancellationToken,
    /// Cancelled once the rooms are handed over: the command subscriptions
    /// are drained (what the bus sent already is answered) and end.
    unsubscribe: CancellationToken,
    /// The tasks that take commands (one per id this node served under).
    command_tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Held while a command is taken: once the stop has taken it, none
    /// reaches a room here.
    taking: Mutex<()>,
    /// How many forwarded commands wait for their answers, in all.
    waiting: std::sync::atomic::AtomicUsize,
    /// Numbers the waiting commands.
    waiting_numbers: std::sync::atomic::AtomicU64,
    /// The other nodes' tournaments as last asked, and when.
    tournament_list: tokio::sync::Mutex<Option<(tokio::time::Instant, Vec<TournamentSummary>)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Bus {
    /// Connects to the bus at `url` as a node of cluster `cluster` (its name
    /// and secret, from the store), serving commands for `node`. A bus that
    /// cannot be reached is an error naming it.
    pub async fn connect(
        url: &str,
        cluster: &str,
        secret: Vec<u8>,
        node: Arc<str>,
    ) -> anyhow::Result<Arc<Bus>> {
        let me = uuid::Uuid::new_v4().simple().to_string();
        let (told, events) = tokio::sync::mpsc::unbounded_channel();
        let client = async_nats::ConnectOptions::new()
            .event_callback(move |event| {
                let _ = told.send(event);
                async {}
            })
            .name(format!("grundy-server {me}"))
            .connection_timeout(Duration::from_secs(5))
            .request_timeout(Some(REQUEST_TIMEOUT))
            .subscription_capacity(65_536)
            .connect(url)
            .await
            .map_err(|e| anyhow::anyhow!("cannot reach the bus {url}: {e}"))?;
        let bus = Arc::new(Bus {
            client,
            prefix: format!("grundy.{cluster}"),
            me,
            secret,
            numbers: std::sync::atomic::AtomicU64::new(1),
            shared: OnceLock::new(),
            locals: Mutex::default(),
            remotes: Mutex::default(),
            seen: Mutex::default(),
            heard: Mutex::default(),
            alive_nodes: Mutex::default(),
            serving: Mutex::default(),
            node: Mutex::new(node.clone()),
            stop: CancellationToken::new(),
            commands_stopped: CancellationToken::new(),
            unsubscribe: CancellationToken::new(),
            command_tasks: Mutex::default(),
            taking: Mutex::new(()),
            waiting: std::sync::atomic::AtomicUsize::new(0),
            waiting_numbers: std::sync::atomic::AtomicU64::new(0),
            tournament_list: tokio::sync::Mutex::new(None),
        });
        tokio::spawn(bus.clone().connection_events(events));
        tokio::spawn(bus.clone().late_answers());
        let out = bus
            .client
            .subscribe(format!("{}.out.{}", bus.prefix, bus.me))
            .await?;
        tokio::spawn(bus.clone().answers(out));
        let alive = bus
            .client
            .subscribe(format!("{}.alive", bus.prefix))
            .await?;
        tokio::spawn(bus.clone().liveness(alive));
        let lobby = bus
            .client
            .subscribe(format!("{}.lobby", bus.prefix))
            .await?;
        tokio::spawn(bus.clone().lobby_asked(lobby));
        let accounts = bus
            .client
            .subscribe(format!("{}.accounts", bus.prefix))
            .await?;
        tokio::spawn(bus.clone().account_changes(accounts));
        let ratings = bus
            .client
            .subscribe(format!("{}.ratings", bus.prefix))
            .await?;
        tokio::spawn(bus.clone().ratings_computed(ratings));
        bus.serve(node).await?;
        bus.client.flush().await?;
        Ok(bus)
    }

    /// Gives the bus what it serves remote connections with (once the
    /// server's shared state exists), and the lobby the other nodes' rooms.
    pub fn attach<N: Inbound>(self: &Arc<Self>, shared: &Arc<N>) {
        let weak: Weak<dyn Inbound> = Arc::downgrade(shared) as Weak<N>;
        let _ = self.shared.set(weak);
        // One task publishes what this node tells the others, in the order
        // it happened (a later rating after an earlier one).
        let (told, mut telling) = tokio::sync::mpsc::unbounded_channel::<(&str, Bytes)>();
        let publisher = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some((subject, payload)) = telling.recv().await {
                let Some(bus) = publisher.upgrade() else {
                    return;
                };
                let to = format!("{}.{subject}", bus.prefix);
                if let Err(e) = bus.client.publish(to, payload).await {
                    tracing::warn!("bus: cannot tell the other nodes ({subject}): {e}");
                }
            }
        });
        let (bus, tx) = (Arc::downgrade(self), told.clone());
        shared.accounts().announce_with(Box::new(move |change| {
            if let Some(bus) = bus.upgrade() {
                let _ = tx.send(("accounts", bus.seal(&change)));
            }
        }));
        let bus = Arc::downgrade(self);
        shared.ratings().announce_with(Box::new(move |rows| {
            if let Some(bus) = bus.upgrade() {
                let _ = told.send(("ratings", bus.seal(&rows)));
            }
        }));
        let bus = Arc::downgrade(self);
        shared
            .tournaments()
            .reach_rooms_elsewhere_with(Box::new(move |room, seat| {
                if let Some(bus) = bus.upgrade() {
                    tokio::spawn(bus.resign_elsewhere(room, seat));
                }
            }));
        let bus = Arc::downgrade(self);
        shared.lobby().list_others(Box::new(move || {
            let bus = bus.clone();
            Box::pin(async move {
                match bus.upgrade() {
                    Some(bus) => bus.other_lobbies().await,
                    None => Vec::new(),
                }
            })
        }));
    }

    /// Serves commands sent to `node` (this node's store id; again after a
    /// rejoin under a new one).
    pub async fn serve(self: &Arc<Self>, node: Arc<str>) -> anyhow::Result<()> {
        *lock(&self.node) = node.clone();
        if !lock(&self.serving).insert(node.to_string()) {
            return Ok(());
        }
        let commands = self
            .client
            .subscribe(format!("{}.cmd.{node}", self.prefix))
            .await?;
        let task = tokio::spawn(self.clone().commands(commands));
        lock(&self.command_tasks).push(task);
        Ok(())
    }

    /// This node's id in the store now (its rooms' owner).
    pub fn node(&self) -> Arc<str> {
        lock(&self.node).clone()
    }

    /// Whether the bus is connected now (`/healthz`).
    pub fn connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }

    /// Stops taking commands: from now on each is answered [`NOT_HERE`],
    /// and its sender looks for the room again (a command being taken now
    /// reaches its room first). Done first at shutdown, while the rooms
    /// still run. The subscription stays until [`Bus::close`], so that no
    /// command routed here meanwhile goes unanswered.
    pub fn stop_commands(&self) {
        self.commands_stopped.cancel();
        drop(lock(&self.taking));
    }

    /// Stops the heartbeat and taking commands (if not stopped already), and
    /// ends the remote connections (shutdown, once the rooms have stopped):
    /// each sends what its rooms sent last, then where they were, and its
    /// client's node follows them to their next nodes. Bounded whether the
    /// bus is up or not (at most [`HANDOVER_WAIT`] and [`FLUSH_WAIT`]); what
    /// could not be handed over is logged (those clients resume).
    pub async fn close(&self) {
        self.stop_commands();
        self.stop.cancel();
        let remotes: Vec<_> = lock(&self.remotes).drain().collect();
        let count = remotes.len();
        let mut tasks = Vec::with_capacity(count);
        for (_, remote) in remotes {
            remote.stop.cancel();
            tasks.push(remote.task);
        }
        let sent = futures_util::future::join_all(tasks);
        if tokio::time::timeout(HANDOVER_WAIT, sent).await.is_err() {
            tracing::warn!(
                "bus: the remote connections ({count}) were not all handed over within {} s; their clients resume",
                HANDOVER_WAIT.as_secs()
            );
        }
        // Only now does the bus stop routing commands here: once the
        // drain is through, a sender hears at once that nobody serves this
        // node, and none is left unanswered in between.
        self.unsubscribe.cancel();
        let serving: Vec<_> = lock(&self.command_tasks).drain(..).collect();
        let drained = futures_util::future::join_all(serving);
        if tokio::time::timeout(FLUSH_WAIT, drained).await.is_err() {
            tracing::warn!("bus: could not stop taking commands in time: a command sent now may wait out its timeout");
        }
        let flushed = tokio::time::timeout(FLUSH_WAIT, self.client.flush()).await;
        if !matches!(flushed, Ok(Ok(()))) {
            tracing::warn!(
                "bus: not connected at shutdown: the hand-over of {count} remote connections, and the notices of this node's clients' ends, may not reach the other nodes (their clients resume; the rooms are free for them either way)"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::forward::{self, answered_id};
    use super::seal::{open, seal};
    use super::*;
    use grundy_protocol::wire::Play;

    fn command(room: &str) -> Command {
        Command {
            conn: 7,
            what: Some(Request::unasked(RoomRequest::Leave { room: room.into() })),
            deadline: None,
        }
    }

    #[test]
    fn a_message_opens_once_with_its_clusters_secret_only() {
        let mut seen = HashMap::new();
        let sealed = seal(b"ours", "node-a", 1, &command("r"));
        let (from, opened): (String, Command) =
            open(b"ours", &mut seen, "command", &sealed).expect("opens");
        assert_eq!((from.as_str(), opened.conn), ("node-a", 7));
        let again = open::<Command>(b"ours", &mut seen, "command", &sealed).expect_err("a replay");
        assert!(again.contains("replayed"), "{again}");
        let theirs = seal(b"theirs", "node-b", 1, &command("r"));
        let refused =
            open::<Command>(b"ours", &mut seen, "command", &theirs).expect_err("another cluster");
        assert!(refused.contains("secret"), "{refused}");
        let mut forged = seal(b"ours", "node-a", 2, &command("r")).to_vec();
        let at = forged.len() - 3;
        forged[at] ^= 1;
        assert!(
            open::<Command>(b"ours", &mut seen, "command", &forged).is_err(),
            "a changed byte"
        );
        assert!(open::<Command>(b"ours", &mut seen, "command", b"short").is_err());
    }

    #[test]
    fn answers_are_told_from_events_by_their_id_and_a_seat_names_its_room() {
        assert_eq!(
            answered_id(r#"{"type":"ack","id":7,"room":"r","seq":3}"#),
            Some(("ack", Some(RequestId::Number(7))))
        );
        assert_eq!(
            answered_id(r#"{"type":"error","id":"a\"b","code":"internal"}"#),
            Some(("error", Some(RequestId::Text("a\"b".into()))))
        );
        assert_eq!(
            answered_id(r#"{"type":"error","id":null,"code":"busy"}"#),
            Some(("error", None))
        );
        assert_eq!(
            answered_id(r#"{"type":"event","room":"r","event":{}}"#),
            None
        );
        assert_eq!(
            answered_id(r#"{"type":"your_game","tournament":"t"}"#),
            None
        );

        let (outbox, _queue) = Outbox::new(1, 8, 1 << 20);
        let mut local = Local::of(&outbox);
        let node: Arc<str> = Arc::from("n1");
        for (n, id) in [(0, Some(RequestId::Number(1))), (1, None)] {
            local.waiting.push(Waiting {
                n,
                id,
                node: node.clone(),
                sent: Instant::now(),
            });
        }
        let frames = [
            r#"{"type":"event","room":"r1","event":{"seq":1}}"#.to_owned(),
            r#"{"type":"seated","id":1,"room":"r1","seat":1,"token":"t","snapshot":{}}"#.to_owned(),
        ];
        assert_eq!(local.answered(&frames, Some("n1")), 1);
        assert_eq!(local.waiting.len(), 1, "the one without an id still waits");
        assert!(matches!(local.streams.get("r1"), Some(Stream::From(n)) if **n == *"n1"));
        let mv = Request::unasked(RoomRequest::Move(Play {
            room: "r1".into(),
            token: "t".into(),
            mv: serde_json::json!({}),
        }));
        assert!(
            local.lost_stream(&mv, "r1", &node).is_none(),
            "the same node"
        );
        let other: Arc<str> = Arc::from("n2");
        assert_eq!(local.lost_stream(&mv, "r1", &other).as_deref(), Some("n1"));
        local.streams.insert("r1".into(), Stream::Moving);
        assert!(
            local.lost_stream(&mv, "r1", &other).is_none(),
            "handed over"
        );
        let ack = [r#"{"type":"ack","id":null}"#.to_owned()];
        assert_eq!(local.answered(&ack, Some("n2")), 0, "another node's answer");
        assert_eq!(local.answered(&ack, Some("n1")), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_move_waits_the_grace_for_a_hand_over_on_its_way_and_no_longer() {
        let (outbox, _queue) = Outbox::new(1, 8, 1 << 20);
        let mut local = Local::of(&outbox);
        local
            .streams
            .insert("r1".into(), Stream::From(Arc::from("n1")));
        let locals = Arc::new(Mutex::new(HashMap::from([(outbox.conn, local)])));
        let mv = Request::unasked(RoomRequest::Move(Play {
            room: "r1".into(),
            token: "t".into(),
            mv: serde_json::json!({}),
        }));
        let to: Arc<str> = Arc::from("n2");
        let lost_now =
            |locals: &Mutex<HashMap<ConnId, Local>>| lock(locals)[&1].lost_stream(&mv, "r1", &to);
        assert_eq!(lost_now(&locals).as_deref(), Some("n1"), "lost, for now");

        // The old node's hand-over comes just inside the grace: the move goes.
        let check = tokio::spawn({
            let (locals, mv, to) = (locals.clone(), mv.clone(), to.clone());
            async move { forward::lost_without_handover(&locals, 1, &mv, "r1", &to).await }
        });
        let start = tokio::time::Instant::now();
        tokio::time::sleep(HANDOVER_GRACE - Duration::from_millis(1)).await;
        assert!(!check.is_finished(), "it waits out the grace");
        let handed_over = Stream::Moving;
        lock(&locals)
            .get_mut(&1)
            .unwrap()
            .streams
            .insert("r1".into(), handed_over);
        assert_eq!(check.await.unwrap(), None, "handed over within the grace");
        assert_eq!(start.elapsed(), HANDOVER_GRACE);

        // No hand-over comes: after the grace, the room is lost with its node.
        let back = Stream::From(Arc::from("n1"));
        lock(&locals)
            .get_mut(&1)
            .unwrap()
            .streams
            .insert("r1".into(), back);
        let start = tokio::time::Instant::now();
        let lost = forward::lost_without_handover(&locals, 1, &mv, "r1", &to).await;
        assert_eq!(lost.as_deref(), Some("n1"));
        assert_eq!(start.elapsed(), HANDOVER_GRACE);
    }

    #[test]
    fn numbers_may_come_out_of_order_but_never_twice_nor_too_late() {
        let mut seen = Seen::default();
        assert!(seen.fresh(5) && seen.fresh(3) && seen.fresh(4));
        assert!(!seen.fresh(3), "a number seen before");
        assert!(seen.fresh(5 + REPLAY_WINDOW));
        assert!(!seen.fresh(4), "older than the window");
        assert!(seen.fresh(6));
    }
}
