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
//!   node follows the room to its next node (`RoomRequest::Follow`), and
//!   the client sees nothing.
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
use crate::command::{Request, RoomRequest, Unsent};
use crate::config::Config;
use crate::lobby::Lobby;
use crate::outbox::{ConnId, Follow, Frames, Handover, Kick, Outbox, MAX_FRAMES};
use crate::ratings::Ratings;
use crate::room::RoomCmd;
use crate::store::RatingRow;
use crate::tournament::actor::TournamentCmd;
use crate::tournament::registry::Tournaments;

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

/// Milliseconds since the Unix epoch, now.
fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
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
    rooms: Vec<Follow>,
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
    /// follows the room to its next node (`Bus::follow`).
    Following,
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

impl Local {
    fn of(outbox: &Outbox) -> Local {
        Local {
            outbox: outbox.clone(),
            nodes: HashSet::new(),
            next: HashMap::new(),
            waiting: Vec::new(),
            streams: HashMap::new(),
        }
    }

    /// For a move (resign, abort, leave) on its way to `node`, for the room
    /// whose id is `room`: the node its events came from, if another (which
    /// stopped, or a hand-over would have said so).
    fn lost_stream(&self, what: &Request, room: &str, node: &Arc<str>) -> Option<Arc<str>> {
        if !what.acts_in_room() {
            return None;
        }
        match self.streams.get(room) {
            Some(Stream::From(from)) if from != node => Some(from.clone()),
            _ => None,
        }
    }

    /// Takes the answers among `frames` off the commands that wait; a
    /// room joined, resumed or watched sends its events from the node that
    /// answered. How many were answered.
    /// `from`: the node that sent them (None from a node that does not say).
    fn answered(&mut self, frames: &[String], from: Option<&str>) -> usize {
        let before = self.waiting.len();
        for frame in frames {
            let Some((kind, id)) = answered_id(frame) else {
                continue;
            };
            let ours = |w: &Waiting| w.id == id && from.is_none_or(|node| *w.node == *node);
            let Some(i) = self.waiting.iter().position(ours) else {
                continue;
            };
            let waiting = self.waiting.remove(i);
            if kind == "seated" || kind == "watching" {
                if let Some(room) = answered_room(frame) {
                    if self.streams.len() >= MAX_STREAMS {
                        self.streams.clear();
                    }
                    self.streams.insert(room, Stream::From(waiting.node));
                }
            }
        }
        before - self.waiting.len()
    }
}

/// The kind of answer a frame is and the request id it answers, or None for
/// an event or a notice: every answer is written `{"type":KIND,"id":ID,...}`
/// (the wire types' field order), and nothing else has an `id` there.
fn answered_id(frame: &str) -> Option<(&str, Option<RequestId>)> {
    let rest = frame.strip_prefix(r#"{"type":""#)?;
    let (kind, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(r#","id":"#)?;
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Option<RequestId>>();
    Some((kind, values.next()?.ok()?))
}

/// The room a `seated` or `watching` answer is for.
fn answered_room(frame: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Answer {
        room: String,
    }
    serde_json::from_str::<Answer>(frame).ok().map(|a| a.room)
}

/// The answer a client gets for a forwarded command whose own answer will
/// not come, for `why` its connection is dropped.
fn unanswered(id: Option<RequestId>, why: Kick, node: &str) -> ServerMsg {
    let what = match why {
        Kick::BusLost => "messages between the cluster's nodes were lost before it was answered".to_owned(),
        Kick::RoomMoved | Kick::TournamentMoved => format!(
            "the node that held its room ({node}) stopped before answering, and the room is moving to another node"
        ),
        Kick::NodeLost | Kick::SlowReader => format!(
            "the node that holds its room ({node}) did not answer within {} s: it may have stopped, and the room may be moving to another node",
            ANSWER_WAIT.as_secs()
        ),
    };
    ServerMsg::error(
        id,
        ErrorCode::Internal,
        format!("{what}; the command may or may not have been carried out: resume to see"),
    )
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

impl Seen {
    fn fresh(&mut self, n: u64) -> bool {
        if n + REPLAY_WINDOW <= self.highest || !self.window.insert(n) {
            return false;
        }
        if n > self.highest {
            self.highest = n;
            let floor = self.highest.saturating_sub(REPLAY_WINDOW);
            if self.window.len() as u64 > 2 * REPLAY_WINDOW {
                self.window.retain(|&k| k > floor);
            }
        }
        true
    }
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

    /// The listed rooms of every other node that answers within
    /// [`LOBBY_WAIT`] (all the nodes heard from lately, or fewer).
    async fn other_lobbies(&self) -> Vec<RoomSummary> {
        self.ask_others(false).await.0
    }

    /// The tournaments every other node runs, of those that answer within
    /// [`LOBBY_WAIT`]: asked at most twice a second (one asking at a time,
    /// the others wait for its answer), like the room list.
    pub async fn other_tournaments(&self) -> Vec<TournamentSummary> {
        let mut kept = self.tournament_list.lock().await;
        if let Some((at, list)) = &*kept {
            if at.elapsed() < LIST_FRESH {
                return list.clone();
            }
        }
        let list = self.ask_others(true).await.1;
        *kept = Some((tokio::time::Instant::now(), list.clone()));
        list
    }

    /// Asks every other node for its rooms (or its tournaments), and gathers
    /// the answers that come within [`LOBBY_WAIT`].
    async fn ask_others(&self, tournaments: bool) -> (Vec<RoomSummary>, Vec<TournamentSummary>) {
        let me = lock(&self.node).to_string();
        let expected = {
            let heard = lock(&self.heard);
            // Heartbeats name each node twice (its bus id and its store id):
            // count the store ids, which are the lease ids in `Alive`.
            lock(&self.alive_nodes)
                .iter()
                .filter(|node| {
                    **node != me && heard.get(*node).is_some_and(|at| at.elapsed() < SILENCE)
                })
                .count()
        };
        let mut rooms = Vec::new();
        let mut listed = Vec::new();
        if expected == 0 {
            return (rooms, listed);
        }
        let inbox = self.client.new_inbox();
        let Ok(mut answers) = self.client.subscribe(inbox.clone()).await else {
            return (rooms, listed);
        };
        let ask = self.seal(&LobbyAsk {
            node: me,
            tournaments,
        });
        if self
            .client
            .publish_with_reply(format!("{}.lobby", self.prefix), inbox, ask)
            .await
            .is_err()
        {
            return (rooms, listed);
        }
        let mut complete = 0;
        let deadline = tokio::time::Instant::now() + LOBBY_WAIT;
        while complete < expected {
            let Ok(Some(message)) = tokio::time::timeout_at(deadline, answers.next()).await else {
                break;
            };
            if let Some((_, part)) = self.open::<LobbyPart>(&message.payload, "lobby") {
                rooms.extend(part.rooms);
                listed.extend(part.tournaments);
                if part.last {
                    complete += 1;
                }
            }
        }
        (rooms, listed)
    }

    /// Another node asks for the lobby: this node's listed rooms, in parts.
    async fn lobby_asked(self: Arc<Self>, mut subscription: async_nats::Subscriber) {
        while let Some(message) = subscription.next().await {
            let Some(reply) = message.reply else { continue };
            let Some((_, ask)) = self.open::<LobbyAsk>(&message.payload, "lobby question") else {
                continue;
            };
            if *ask.node == **lock(&self.node) {
                continue; // our own question
            }
            let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
                continue;
            };
            if ask.tournaments {
                let part = LobbyPart {
                    rooms: Vec::new(),
                    tournaments: shared.tournaments().list(),
                    last: true,
                };
                let _ = self.client.publish(reply.clone(), self.seal(&part)).await;
                continue;
            }
            let own = shared.lobby().own_listing().await;
            let parts: Vec<&[RoomSummary]> = if own.is_empty() {
                vec![&[]]
            } else {
                own.chunks(LOBBY_PART).collect()
            };
            let count = parts.len();
            for (i, rooms) in parts.into_iter().enumerate() {
                let part = LobbyPart {
                    rooms: rooms.to_vec(),
                    tournaments: Vec::new(),
                    last: i + 1 == count,
                };
                let _ = self.client.publish(reply.clone(), self.seal(&part)).await;
            }
        }
    }

    /// Other nodes' account changes, taken into this node's accounts (its
    /// own are skipped).
    async fn account_changes(self: Arc<Self>, mut subscription: async_nats::Subscriber) {
        while let Some(message) = subscription.next().await {
            let Some((from, change)) =
                self.open::<AccountChange>(&message.payload, "account change")
            else {
                continue;
            };
            if from == self.me {
                continue;
            }
            let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
                continue;
            };
            shared.accounts().changed_elsewhere(change).await;
        }
    }

    /// Ratings other nodes computed, taken into this node's table.
    async fn ratings_computed(self: Arc<Self>, mut subscription: async_nats::Subscriber) {
        while let Some(message) = subscription.next().await {
            let Some((from, rows)) = self.open::<Vec<RatingRow>>(&message.payload, "ratings")
            else {
                continue;
            };
            if from == self.me {
                continue;
            }
            if let Some(shared) = self.shared.get().and_then(Weak::upgrade) {
                shared.ratings().absorb(rows);
            }
        }
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

    /// What the bus client says of its connection. Messages may have been
    /// lost while it was down (once it is back), or when a subscription
    /// overflowed; nothing else would tell, if no later message came.
    async fn connection_events(
        self: Arc<Self>,
        mut events: tokio::sync::mpsc::UnboundedReceiver<async_nats::Event>,
    ) {
        let mut dropped = false;
        while let Some(event) = events.recv().await {
            match event {
                async_nats::Event::Disconnected => {
                    tracing::warn!("bus: the connection dropped");
                    dropped = true;
                }
                async_nats::Event::Connected if dropped => {
                    dropped = false;
                    self.lost("the connection is back, but messages may have been lost meanwhile");
                }
                async_nats::Event::SlowConsumer(_) => {
                    self.lost("a subscription overflowed, and messages were lost");
                }
                _ => {}
            }
        }
    }

    /// Messages between this node and the others may have been lost: every
    /// client of this node whose commands went to another node resumes, and
    /// every remote connection ends (its client's node is told, and its
    /// client resumes).
    fn lost(&self, why: &str) {
        tracing::warn!("bus: {why}; the clients of rooms on other nodes resume");
        for local in lock(&self.locals).values_mut() {
            if !local.nodes.is_empty() || !local.waiting.is_empty() {
                self.abandon(local, Kick::BusLost);
            }
        }
        for remote in lock(&self.remotes).values() {
            remote.outbox.drop_for(Kick::BusLost);
        }
    }

    /// Drops client connection `local` for `why`, after answering each of
    /// its commands that still waits (their own answers, should they come,
    /// are not passed on: the connection is gone by then).
    fn abandon(&self, local: &mut Local, why: Kick) {
        let answered = local.waiting.len();
        for waiting in local.waiting.drain(..) {
            local
                .outbox
                .send(&unanswered(waiting.id, why, &waiting.node));
        }
        self.waiting
            .fetch_sub(answered, std::sync::atomic::Ordering::Relaxed);
        local.outbox.drop_for(why);
    }

    /// Forwarded commands not answered within [`ANSWER_WAIT`] (their node
    /// died or is paused after it took them): answered here, and their
    /// connections dropped, to resume.
    async fn late_answers(self: Arc<Self>) {
        let mut check = tokio::time::interval(ANSWER_CHECK);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = check.tick() => {}
            }
            if self.waiting.load(std::sync::atomic::Ordering::Relaxed) == 0 {
                continue;
            }
            for (conn, local) in lock(&self.locals).iter_mut() {
                let late = local
                    .waiting
                    .iter()
                    .find(|w| w.sent.elapsed() >= ANSWER_WAIT);
                if let Some(late) = late {
                    tracing::warn!(conn, node = %late.node, "bus: a command was not answered in time; its connection must resume");
                    self.abandon(local, Kick::NodeLost);
                }
            }
        }
    }

    /// Stops waiting for command `n` of connection `conn`: false if it was
    /// answered meanwhile (or answered here, its connection dropped).
    fn stop_waiting(&self, conn: ConnId, n: u64) -> bool {
        let mut locals = lock(&self.locals);
        let Some(local) = locals.get_mut(&conn) else {
            return false;
        };
        let Some(i) = local.waiting.iter().position(|w| w.n == n) else {
            return false;
        };
        local.waiting.remove(i);
        self.waiting
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        true
    }

    /// Whether `node`, which nobody serves any more, held rooms of client
    /// connection `conn` that it did not hand over: it died (or lost the
    /// bus), and their events will not come. (A draining node answers
    /// commands until its hand-over is out, but that may still be on its
    /// way to this node's answers task: it is given a moment.)
    async fn stopped_holding(&self, node: &Arc<str>, conn: ConnId) -> bool {
        let holds = || {
            lock(&self.locals)
                .get(&conn)
                .is_some_and(|local| local.nodes.contains(node))
        };
        if !holds() {
            return false;
        }
        tokio::time::sleep(HANDOVER_GRACE).await;
        holds()
    }

    /// This node's id in the store now (its rooms' owner).
    pub fn node(&self) -> Arc<str> {
        lock(&self.node).clone()
    }

    /// Whether the bus is connected now (`/healthz`).
    pub fn connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }

    /// Sends `what`, a command of the client connection `outbox`, to the
    /// node that owns its room; Ok once that node took it.
    ///
    /// A client's command waits for its answer from then on (see
    /// [`ANSWER_WAIT`]). One the node may have taken but did not say so in
    /// time is answered here (Ok: nothing more to answer). A move (resign,
    /// abort, leave) for a room whose events came to this connection from
    /// another node that stopped without handing it over is not sent
    /// ([`Untaken::Stopped`], the connection dropped to resume): its ack
    /// would come without its event.
    ///
    /// `room`: the id of the room (or tournament) it is for, as far as known
    /// (else what the client named it by).
    pub async fn forward(
        &self,
        node: &Arc<str>,
        outbox: &Outbox,
        what: Request,
        room: &str,
    ) -> Result<(), Untaken> {
        let n = self
            .waiting_numbers
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if outbox.kick.is_raised() {
            // Its answer would never be passed on.
            return Err(Untaken::Why("this connection is being closed".into()));
        }
        let answers_to = what.answers_to().map(|id| id.cloned());
        let waits = answers_to.is_some();
        {
            // Known before the request: the owner's answers may come first.
            let mut locals = lock(&self.locals);
            let local = locals
                .entry(outbox.conn)
                .or_insert_with(|| Local::of(outbox));
            if let Some(from) = local.lost_stream(&what, room, node) {
                tracing::info!(conn = outbox.conn, %from, to = %node, "bus: a room moved without this connection; it must resume");
                self.abandon(local, Kick::RoomMoved);
                return Err(Untaken::Stopped(from));
            }
            if let Some(id) = answers_to {
                local.waiting.push(Waiting {
                    n,
                    id,
                    node: node.clone(),
                    sent: Instant::now(),
                });
                self.waiting
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let followed = match &what {
            Request::Room(RoomRequest::Follow(follow)) => Some(follow.room.clone()),
            _ => None,
        };
        let payload = self.seal(&Command {
            conn: outbox.conn,
            what: Some(what),
            deadline: Some(unix_ms() + TAKE_WITHIN.as_millis() as u64),
        });
        let subject = format!("{}.cmd.{node}", self.prefix);
        let (taken, maybe) = match self.client.request(subject, payload).await {
            Ok(reply) if reply.payload.as_ref() == b"ok" => (Ok(()), true),
            Ok(reply) if reply.payload.as_ref() == NOT_HERE.as_bytes() => {
                (Err(Untaken::NotHere), false)
            }
            Ok(reply) => (
                Err(Untaken::Why(
                    String::from_utf8_lossy(&reply.payload).into_owned(),
                )),
                false,
            ),
            // No reply in time: the owner may have taken it all the same.
            Err(e) if e.kind() == async_nats::RequestErrorKind::TimedOut => {
                (Err(Untaken::Why(e.to_string())), true)
            }
            // Nobody serves that node any more: it stopped. If it held
            // rooms of this connection, their events are lost with it.
            Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders => {
                if self.stopped_holding(node, outbox.conn).await {
                    if waits && !self.stop_waiting(outbox.conn, n) {
                        // Answered here meanwhile (its connection dropped).
                        return Ok(());
                    }
                    tracing::info!(conn = outbox.conn, %node, "bus: a node this connection used stopped; it must resume");
                    if let Some(local) = lock(&self.locals).get_mut(&outbox.conn) {
                        self.abandon(local, Kick::RoomMoved);
                    }
                    return Err(Untaken::Stopped(node.clone()));
                }
                (Err(Untaken::NotHere), false)
            }
            Err(e) => (Err(Untaken::Why(e.to_string())), false),
        };
        if taken.is_err() && !maybe && waits && !self.stop_waiting(outbox.conn, n) {
            // Answered meanwhile, or here with the connection dropped.
            return Ok(());
        }
        // Only a node that took (or may have taken) a command holds
        // something of the connection. Known again if it went meanwhile
        // (its `gone` went out before this node was recorded): whoever
        // ends it next tells this node too (`Bus::follow`).
        if maybe {
            let mut locals = lock(&self.locals);
            let local = locals
                .entry(outbox.conn)
                .or_insert_with(|| Local::of(outbox));
            if local.nodes.insert(node.clone()) {
                // A node not heard from yet (it started a moment ago) is
                // silent only once it has had time to say it is alive.
                lock(&self.heard)
                    .entry(node.to_string())
                    .or_insert_with(Instant::now);
            }
            if let (Some(room), Ok(())) = (followed, &taken) {
                local.streams.insert(room, Stream::From(node.clone()));
            }
        }
        if taken.is_err() && maybe {
            // Its answer may still come: the client is answered here and
            // resumes, and learns what happened from the room.
            tracing::warn!(conn = outbox.conn, %node, "bus: a node did not take a command in time; the connection must resume");
            if let Some(local) = lock(&self.locals).get_mut(&outbox.conn) {
                self.abandon(local, Kick::NodeLost);
            }
            return Ok(());
        }
        taken
    }

    /// The node whose events of room `room` (its id) this client connection
    /// had, if that node stopped without handing the room over (so that a
    /// move there would be acknowledged with no event to follow): the room
    /// is here now (`lobby.holds`), and the connection is not in it. The
    /// connection is then dropped, to resume.
    pub fn lost_here(&self, outbox: &Outbox, room: &str) -> Option<Arc<str>> {
        if outbox.rooms.contains(room) {
            return None;
        }
        let mut locals = lock(&self.locals);
        let local = locals.get_mut(&outbox.conn)?;
        let Some(Stream::From(from)) = local.streams.get(room) else {
            return None;
        };
        let from = from.clone();
        tracing::info!(conn = outbox.conn, %from, "bus: a room came here without this connection; it must resume");
        local.streams.remove(room);
        self.abandon(local, Kick::RoomMoved);
        Some(from)
    }
    /// The client connection `conn` closed: its remote connections end.
    pub async fn gone(&self, conn: ConnId) {
        let Some(local) = lock(&self.locals).remove(&conn) else {
            return;
        };
        // Answered before the connection's close goes out (its own answers
        // will not be passed on any more).
        self.waiting
            .fetch_sub(local.waiting.len(), std::sync::atomic::Ordering::Relaxed);
        let why = local.outbox.dropped_for();
        for waiting in &local.waiting {
            local
                .outbox
                .send(&unanswered(waiting.id.clone(), why, &waiting.node));
        }
        for node in local.nodes {
            let payload = self.seal(&Command {
                conn,
                what: None,
                deadline: None,
            });
            let subject = format!("{}.cmd.{node}", self.prefix);
            if let Err(e) = self.client.publish(subject, payload).await {
                tracing::warn!(conn, %node, "cannot tell a node a connection closed: {e}");
            }
        }
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

    fn seal<T: Serialize>(&self, body: &T) -> Bytes {
        let n = self
            .numbers
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        seal(&self.secret, &self.me, n, body)
    }

    /// The message's sender and body, if it is signed with our secret and
    /// new; a refusal is logged.
    fn open<T: serde::de::DeserializeOwned>(
        &self,
        payload: &[u8],
        what: &str,
    ) -> Option<(String, T)> {
        match open(&self.secret, &mut lock(&self.seen), what, payload) {
            Ok(opened) => Some(opened),
            Err(why) => {
                tracing::warn!("bus: refused a {what} message: {why}");
                None
            }
        }
    }

    /// Commands for this node: each is taken into its remote connection.
    /// Once the node stops taking commands (before its rooms stop), each is
    /// answered [`NOT_HERE`] (its sender looks for the room again) until
    /// the node has handed its rooms over and unsubscribes: after that, a
    /// sender hears at once that nobody serves the node.
    async fn commands(self: Arc<Self>, mut subscription: async_nats::Subscriber) {
        let mut draining = false;
        loop {
            let message = tokio::select! {
                message = subscription.next() => message,
                _ = self.unsubscribe.cancelled(), if !draining => {
                    // The stream ends once what the bus sent before the
                    // unsubscribe has come (and been answered below).
                    draining = true;
                    if let Err(e) = subscription.drain().await {
                        tracing::warn!("bus: cannot stop taking commands: {e}");
                        return;
                    }
                    continue;
                }
            };
            let Some(message) = message else { return };
            let Some((from, command)) = self.open::<Command>(&message.payload, "command") else {
                if let Some(reply) = message.reply {
                    let _ = self
                        .client
                        .publish(reply, Bytes::from_static(b"refused"))
                        .await;
                }
                continue;
            };
            let answer = {
                let _taking = lock(&self.taking);
                if self.commands_stopped.is_cancelled() && command.what.is_some() {
                    NOT_HERE.to_owned()
                } else {
                    self.take(from, command)
                }
            };
            if let Some(reply) = message.reply {
                let _ = self.client.publish(reply, Bytes::from(answer)).await;
            }
        }
    }

    /// Takes one forwarded command into the remote connection of its client.
    fn take(self: &Arc<Self>, from: String, command: Command) -> String {
        let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
            return "this node is not serving yet".into();
        };
        let key = (from.clone(), command.conn);
        let Some(request) = command.what else {
            // The client's connection closed.
            if let Some(remote) = lock(&self.remotes).remove(&key) {
                remote.stop.cancel();
                leave_rooms(&*shared, &remote.outbox);
            }
            return "ok".into();
        };
        if command
            .deadline
            .is_some_and(|deadline| unix_ms() > deadline)
        {
            // Its sender has answered it by now, or soon will: it must not
            // run after the client was told it may not have.
            tracing::info!(
                conn = command.conn,
                "bus: dropped a command that came after its deadline"
            );
            return LATE.into();
        }
        if !request.held_by(shared.lobby(), shared.tournaments()) {
            return NOT_HERE.into();
        }
        let outbox = {
            let mut remotes = lock(&self.remotes);
            match remotes.get(&key) {
                Some(remote) => remote.outbox.clone(),
                None => {
                    let remote = self.open_remote(&shared, from, command.conn);
                    let outbox = remote.outbox.clone();
                    remotes.insert(key, remote);
                    outbox
                }
            }
        };
        shared.deliver(&outbox, request, tokio::time::Instant::now());
        "ok".into()
    }

    /// A new remote connection for client connection `conn` of node `from`,
    /// and the task that sends what its outbox receives back there.
    fn open_remote(
        self: &Arc<Self>,
        shared: &Arc<dyn Inbound>,
        from: String,
        conn: ConnId,
    ) -> Remote {
        let config = &shared.config();
        let id = shared.next_conn();
        let handover = Handover::default();
        let (outbox, mut queue) = Outbox::open(
            id,
            config.outbox_capacity,
            config.outbox_bytes,
            config.limits.max_message_bytes,
            Some(handover.clone()),
        );
        let tournaments = outbox.tournaments.clone();
        let stop = CancellationToken::new();
        let bus = self.clone();
        let kicked = outbox.kick.raised();
        let ended = stop.clone();
        let subject = format!("{}.out.{from}", self.prefix);
        let key = (from, conn);
        let task = tokio::spawn(async move {
            let mut seq = 0;
            tokio::pin!(kicked);
            loop {
                let next = tokio::select! {
                    biased;
                    _ = &mut kicked => Next::Kicked,
                    frames = queue.recv() => frames.map_or(Next::End, Next::Frames),
                    _ = handover.left() => Next::Moved,
                    _ = ended.cancelled() => Next::End,
                };
                let (frames, closed, moved) = match next {
                    Next::Frames(frames) => (Some(frames), false, None),
                    Next::Moved => {
                        let rooms = handover.take();
                        if rooms.is_empty() {
                            continue;
                        }
                        let nodes = Vec::new();
                        (None, false, Some(Moved { nodes, rooms }))
                    }
                    // A tournament it followed cannot be followed this way:
                    // the client then rejoins as after a drop.
                    Next::End => {
                        let clean = tournaments.count() == 0;
                        let moved = clean.then(|| Moved {
                            nodes: lock(&bus.serving).iter().cloned().collect(),
                            rooms: handover.take(),
                        });
                        (None, true, moved)
                    }
                    Next::Kicked => (None, true, None),
                };
                seq += 1;
                let out = Out {
                    node: Some(bus.node().to_string()),
                    conn,
                    seq,
                    frames: frames
                        .into_iter()
                        .flatten()
                        .map(|f| f.as_str().to_owned())
                        .collect(),
                    closed,
                    moved,
                };
                let sent = bus.client.publish(subject.clone(), bus.seal(&out)).await;
                let closed = match sent {
                    Ok(()) => closed,
                    Err(e) => {
                        // Too large for the bus, or the bus is gone: the
                        // client must not miss it unknowingly.
                        tracing::warn!(
                            conn,
                            "bus: cannot send a remote connection's messages: {e}"
                        );
                        let end = Out {
                            node: Some(bus.node().to_string()),
                            conn,
                            seq: seq + 1,
                            frames: Vec::new(),
                            closed: true,
                            moved: None,
                        };
                        let _ = bus.client.publish(subject.clone(), bus.seal(&end)).await;
                        true
                    }
                };
                if closed {
                    // Its rooms hear it is gone, and the entry goes.
                    let removed = lock(&bus.remotes).remove(&key);
                    let shared = bus.shared.get().and_then(Weak::upgrade);
                    if let (Some(remote), Some(shared)) = (removed, shared) {
                        leave_rooms(&*shared, &remote.outbox);
                    }
                    return;
                }
            }
        });
        Remote { outbox, stop, task }
    }

    /// Answers and events for this node's clients, from the nodes that own
    /// their rooms.
    async fn answers(self: Arc<Self>, mut subscription: async_nats::Subscriber) {
        while let Some(message) = subscription.next().await {
            let Some((from, out)) = self.open::<Out>(&message.payload, "answer") else {
                continue;
            };
            let mut locals = lock(&self.locals);
            let Some(local) = locals.get_mut(&out.conn) else {
                continue; // the connection has closed meanwhile
            };
            if local.outbox.kick.is_raised() {
                // Dropped, to resume: an answer given here already must not
                // come a second time.
                continue;
            }
            let expected = local.next.entry(from.clone()).or_insert(1);
            if out.seq != *expected {
                tracing::warn!(
                    conn = out.conn,
                    expected = *expected,
                    got = out.seq,
                    "bus: messages for a connection were lost; it must resume"
                );
                self.abandon(local, Kick::BusLost);
                continue;
            }
            *expected += 1;
            if !local.waiting.is_empty() {
                let answered = local.answered(&out.frames, out.node.as_deref());
                self.waiting
                    .fetch_sub(answered, std::sync::atomic::Ordering::Relaxed);
            }
            if out.closed && out.moved.is_none() {
                // Its last frames (an answer among them) go first.
                deliver(&local.outbox, out.frames);
                tracing::info!(
                    conn = out.conn,
                    "bus: a node this connection used ended its side; it must resume"
                );
                self.abandon(local, Kick::RoomMoved);
                continue;
            }
            deliver(&local.outbox, out.frames);
            let Some(moved) = out.moved else { continue };
            if out.closed {
                // Ended cleanly: that node holds nothing of it any more.
                local.next.remove(&from);
                local
                    .nodes
                    .retain(|node| !moved.nodes.iter().any(|n| **n == **node));
            }
            for follow in &moved.rooms {
                local.streams.insert(follow.room.clone(), Stream::Following);
            }
            let outbox = local.outbox.clone();
            drop(locals);
            for follow in moved.rooms {
                tokio::spawn(self.clone().follow(outbox.clone(), follow));
            }
        }
    }

    /// Resigns seat `seat` of room `room` on the node that holds it, for a
    /// tournament of this node whose player withdrew. Nobody reads the
    /// room's answer; its result reaches the tournament through the store.
    async fn resign_elsewhere(self: Arc<Self>, room: String, seat: u8) {
        let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
            return;
        };
        let conn = shared.next_conn();
        let (outbox, _unread) = Outbox::new(conn, 1, 1);
        let what = Request::Room(RoomRequest::ResignSeat {
            room: room.clone(),
            seat,
        });
        if let Err(unsent) = shared.route(self.clone(), outbox.clone(), what).await {
            let why = unsent.answer(None, &room, false);
            tracing::warn!(%room, seat, "could not resign a withdrawn player's seat: {why:?}");
        }
        self.gone(conn).await;
    }

    /// A client of this node goes on in a room whose node stopped it, where
    /// the room is now; if it cannot, its connection ends and it resumes.
    async fn follow(self: Arc<Self>, outbox: Outbox, follow: Follow) {
        let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
            return;
        };
        if outbox.rooms.left() {
            return; // the connection is closing: nothing to follow for
        }
        let room = follow.room.clone();
        let what = Request::Room(RoomRequest::Follow(follow));
        if let Err(unsent) = shared.route(self.clone(), outbox.clone(), what).await {
            let why = unsent.answer(None, &room, false);
            tracing::info!(conn = outbox.conn, %room, "a client could not follow its room: {why:?}");
            match lock(&self.locals).get_mut(&outbox.conn) {
                Some(local) => self.abandon(local, Kick::RoomMoved),
                None => outbox.drop_for(Kick::RoomMoved),
            }
        }
        // The connection closed while this looked for the room (up to
        // `BETWEEN_OWNERS`): its `gone` may have gone out before `forward`
        // made it known to the room's new node, which would then hold its
        // seat for good. It is told again (a second notice is harmless).
        if outbox.rooms.left() {
            self.gone(outbox.conn).await;
        }
    }

    /// Says this node is alive, and ends what depended on nodes gone silent.
    async fn liveness(self: Arc<Self>, mut subscription: async_nats::Subscriber) {
        let mut beat = tokio::time::interval(HEARTBEAT);
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = beat.tick() => {
                    let alive = Alive { node: lock(&self.node).to_string() };
                    let _ = self.client.publish(format!("{}.alive", self.prefix), self.seal(&alive)).await;
                    self.sweep();
                }
                message = subscription.next() => {
                    let Some(message) = message else { return };
                    if let Some((from, alive)) = self.open::<Alive>(&message.payload, "heartbeat") {
                        let now = Instant::now();
                        let mut heard = lock(&self.heard);
                        heard.insert(from, now);
                        heard.insert(alive.node.clone(), now);
                        lock(&self.alive_nodes).insert(alive.node);
                    }
                }
            }
        }
    }

    /// Ends the remote connections of silent nodes, and disconnects the
    /// clients whose commands went to one.
    fn sweep(&self) {
        // Nodes gone for long are forgotten.
        lock(&self.heard).retain(|_, at| at.elapsed() < 12 * SILENCE);
        let heard = lock(&self.heard).clone();
        lock(&self.alive_nodes).retain(|node| heard.contains_key(node));
        lock(&self.seen).retain(|key, _| {
            key.split('/')
                .next()
                .is_some_and(|from| heard.contains_key(from))
        });
        let silent = |id: &str| heard.get(id).is_none_or(|at| at.elapsed() > SILENCE);
        let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
            return;
        };
        let gone: Vec<Remote> = {
            let mut remotes = lock(&self.remotes);
            let keys: Vec<_> = remotes
                .keys()
                .filter(|(from, _)| silent(from))
                .cloned()
                .collect();
            keys.iter().filter_map(|k| remotes.remove(k)).collect()
        };
        for remote in gone {
            remote.stop.cancel();
            leave_rooms(&*shared, &remote.outbox);
        }
        for (conn, local) in lock(&self.locals).iter_mut() {
            if let Some(node) = local.nodes.iter().find(|node| silent(node)) {
                tracing::info!(conn, %node, "bus: a node a connection used went silent; it must resume");
                self.abandon(local, Kick::NodeLost);
            }
        }
    }
}

/// `body` from `from` as message number `n`, signed with `secret`: the
/// HMAC-SHA256 of the JSON, then the JSON.
fn seal<T: Serialize>(secret: &[u8], from: &str, n: u64, body: &T) -> Bytes {
    let envelope = Envelope {
        from: from.to_owned(),
        n,
        body,
    };
    let json = serde_json::to_vec(&envelope).expect("bus messages encode");
    let mut mac = HmacSha256::new_from_slice(secret).expect("any key length");
    mac.update(&json);
    let mut out = mac.finalize().into_bytes().to_vec();
    out.extend_from_slice(&json);
    Bytes::from(out)
}

/// What [`seal`] made, if `secret` signed it and `seen` has not had its
/// number from its sender on this kind of message (`what`: each kind has
/// its own task, which may lag behind the others); else why not.
fn open<T: serde::de::DeserializeOwned>(
    secret: &[u8],
    seen: &mut HashMap<String, Seen>,
    what: &str,
    payload: &[u8],
) -> Result<(String, T), String> {
    if payload.len() < 32 {
        return Err("too short to be signed".into());
    }
    let (tag, json) = payload.split_at(32);
    let mut mac = HmacSha256::new_from_slice(secret).expect("any key length");
    mac.update(json);
    if mac.verify_slice(tag).is_err() {
        return Err("not signed with this cluster's secret (another cluster's, or forged)".into());
    }
    let envelope: Envelope<T> =
        serde_json::from_slice(json).map_err(|e| format!("unreadable: {e}"))?;
    if !seen
        .entry(format!("{}/{what}", envelope.from))
        .or_default()
        .fresh(envelope.n)
    {
        return Err(format!(
            "replayed (number {} from {})",
            envelope.n, envelope.from
        ));
    }
    Ok((envelope.from, envelope.body))
}

/// Hands a batch of frames from another node to a client's outbox.
fn deliver(outbox: &Outbox, frames: Vec<String>) {
    let frames: Vec<Utf8Bytes> = frames.into_iter().map(Utf8Bytes::from).collect();
    for write in frames
        .chunks(MAX_FRAMES)
        .filter_map(|w| Frames::of(None, w))
    {
        if !outbox.send_frames(write) {
            return;
        }
    }
}

/// A remote connection ended: its rooms and tournaments hear it is gone,
/// as from a client that dropped. A full queue gets it as soon as it has
/// room (a lost `Gone` would leave a seat connected for good).
fn leave_rooms(shared: &dyn Inbound, outbox: &Outbox) {
    let conn = outbox.conn;
    for tx in shared.lobby().senders(&outbox.rooms.leave()) {
        if let Err(TrySendError::Full(gone)) = tx.try_send(RoomCmd::Gone { conn }) {
            tokio::spawn(async move { tx.send(*gone).await });
        }
    }
    for tx in shared.tournaments().senders(&outbox.tournaments.leave()) {
        if let Err(TrySendError::Full(gone)) = tx.try_send(TournamentCmd::Gone { conn }) {
            tokio::spawn(async move { tx.send(gone).await });
        }
    }
    outbox.kick.raise();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(room: &str) -> Command {
        Command {
            conn: 7,
            what: Some(Request::Room(RoomRequest::Leave {
                id: None,
                room: room.into(),
            })),
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
        let mv = Request::Room(RoomRequest::Move {
            id: None,
            room: "r1".into(),
            token: "t".into(),
            mv: serde_json::json!({}),
        });
        assert!(
            local.lost_stream(&mv, "r1", &node).is_none(),
            "the same node"
        );
        let other: Arc<str> = Arc::from("n2");
        assert_eq!(local.lost_stream(&mv, "r1", &other).as_deref(), Some("n1"));
        local.streams.insert("r1".into(), Stream::Following);
        assert!(
            local.lost_stream(&mv, "r1", &other).is_none(),
            "handed over"
        );
        let ack = [r#"{"type":"ack","id":null}"#.to_owned()];
        assert_eq!(local.answered(&ack, Some("n2")), 0, "another node's answer");
        assert_eq!(local.answered(&ack, Some("n1")), 1);
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
