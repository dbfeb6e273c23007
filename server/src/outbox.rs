//! A connection's outbound queue. Rooms and the connection itself push
//! ready-serialised frames into it; the connection's task drains it into the
//! socket (`connection/socket.rs`). The
//! queue is bounded in frames and in bytes: a reader too slow to keep up is
//! disconnected (it may come back and resume) rather than allowed to stall a
//! match or grow memory. Every queue's bytes are also counted together
//! against one server-wide budget ([`BUDGET`], `max_queued_bytes`): many
//! connections each under their own bound cannot together take the
//! machine's memory.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::task::{Context, Poll};

use grundy_protocol::wire::{ErrorCode, RequestId, ServerBody, ServerMsg};

use crate::flag::Flag;
use crate::metrics::METRICS;
use crate::tcp::{Direct, Wire};
use futures_util::task::AtomicWaker;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// Identifies a connection inside this server process.
pub type ConnId = u64;

/// What the writer task takes off the queue: one frame, or up to
/// [`MAX_FRAMES`] that leave together (a request's `ack` and the events its
/// decision made), written with one flush.
#[derive(Debug)]
pub enum Frames {
    One(Utf8Bytes),
    /// Two to [`MAX_FRAMES`]. Boxed: every slot of a connection's queue is as
    /// large as the largest variant, and idle connections should stay small.
    Many(Box<[Utf8Bytes]>),
}

pub use crate::tcp::MAX_FRAMES;

impl Frames {
    /// `first` (if any), then `rest`, as one write; `None` when empty. More
    /// than [`MAX_FRAMES`] are never written directly: the connection's task
    /// writes them.
    pub fn of(first: Option<Utf8Bytes>, rest: &[Utf8Bytes]) -> Option<Frames> {
        match (first, rest) {
            (None, []) => None,
            (Some(a), []) => Some(Frames::One(a)),
            (None, [a]) => Some(Frames::One(a.clone())),
            (first, rest) => Some(Frames::Many(
                first.into_iter().chain(rest.iter().cloned()).collect(),
            )),
        }
    }

    /// How many frames.
    pub fn count(&self) -> usize {
        match self {
            Frames::One(_) => 1,
            Frames::Many(many) => many.len(),
        }
    }

    /// Their texts, in order; None for more than one write takes.
    fn texts(&self) -> Option<([&[u8]; MAX_FRAMES], usize)> {
        let mut texts: [&[u8]; MAX_FRAMES] = [&[]; MAX_FRAMES];
        match self {
            Frames::One(a) => {
                texts[0] = a.as_bytes();
                Some((texts, 1))
            }
            Frames::Many(many) if many.len() <= MAX_FRAMES => {
                for (text, frame) in texts.iter_mut().zip(many.iter()) {
                    *text = frame.as_bytes();
                }
                Some((texts, many.len()))
            }
            Frames::Many(_) => None,
        }
    }

    /// Logs them (`--log-frames`), secrets masked.
    #[cold]
    fn log(&self, conn: ConnId) {
        match self {
            Frames::One(a) => crate::frame_log::outbound(conn, a),
            Frames::Many(many) => many
                .iter()
                .for_each(|f| crate::frame_log::outbound(conn, f)),
        }
    }

    /// The bytes of text they hold.
    pub fn bytes(&self) -> usize {
        match self {
            Frames::One(a) => a.len(),
            Frames::Many(many) => many.iter().map(|f| f.len()).sum(),
        }
    }
}

impl IntoIterator for Frames {
    type Item = Utf8Bytes;
    type IntoIter =
        std::iter::Chain<std::option::IntoIter<Utf8Bytes>, std::vec::IntoIter<Utf8Bytes>>;

    fn into_iter(self) -> Self::IntoIter {
        match self {
            Frames::One(a) => Some(a).into_iter().chain(Vec::new()),
            Frames::Many(many) => None.into_iter().chain(many.into_vec()),
        }
    }
}

/// Why the server drops a connection that its client may resume: each has
/// its own close reason (docs/protocol.md, "Close codes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kick {
    /// It read too slowly: its outbound queue overflowed.
    SlowReader = 1,
    /// A room it is in moved to another node of the cluster without taking
    /// it along (its node died, was paused past its lease, or let it go).
    RoomMoved = 2,
    /// A node of the cluster that served its rooms stopped answering.
    NodeLost = 3,
    /// Messages between the cluster's nodes may have been lost.
    BusLost = 4,
    /// A tournament it follows moved to another node of the cluster.
    TournamentMoved = 5,
    /// The server's queues together passed `max_queued_bytes`, and its queue
    /// was among the largest.
    Overloaded = 6,
    /// Its account's password was changed (by another connection): the
    /// token it said hello with is revoked.
    PasswordChanged = 7,
}

impl Kick {
    fn from_u8(n: u8) -> Kick {
        match n {
            2 => Kick::RoomMoved,
            3 => Kick::NodeLost,
            4 => Kick::BusLost,
            5 => Kick::TournamentMoved,
            6 => Kick::Overloaded,
            7 => Kick::PasswordChanged,
            _ => Kick::SlowReader,
        }
    }

    /// The close frame's reason: what happened, and that a `resume` goes on.
    pub fn reason(self) -> &'static str {
        match self {
            Kick::SlowReader => {
                "too slow reading: the outbound queue overflowed (resume to continue)"
            }
            Kick::RoomMoved => "the room moved to another node of the cluster (resume to continue)",
            Kick::NodeLost => {
                "a node of the cluster serving your rooms stopped answering (resume to continue)"
            }
            Kick::BusLost => "messages between the cluster's nodes were lost (resume to continue)",
            Kick::TournamentMoved => {
                "the tournament moved to another node of the cluster (rejoin to continue)"
            }
            Kick::Overloaded => {
                "the server's outbound queues are full and yours was among the largest \
                 (max_queued_bytes): read faster (resume to continue)"
            }
            Kick::PasswordChanged => {
                "the account's password was changed and its tokens revoked (log in again to continue)"
            }
        }
    }
}

/// A connection's outbound queue, as rooms, tournaments and the connection
/// hold it. A clone is one reference count (a move's command carries one to
/// the room and back), not one per part.
#[derive(Clone, Debug)]
pub struct Outbox(Arc<Sender>);

/// What every clone of an [`Outbox`] shares.
#[derive(Debug)]
pub struct Sender {
    pub conn: ConnId,
    queue: Arc<Shared>,
    /// The most frames and bytes of text that may wait.
    capacity: usize,
    max_bytes: usize,
    /// The largest message this connection is sent (`max_message_bytes`):
    /// an answer that would be larger becomes a `too_large` error.
    max_message: usize,
    /// Raised to drop the connection (slow reader, shutdown, protocol abuse);
    /// raise it with [`Sender::drop_for`], which says why.
    pub kick: Flag,
    /// Why it was first raised (a [`Kick`]; 0: not said, a slow reader).
    why: AtomicU8,
    /// The rooms with an unfinished match this connection plays or watches:
    /// rooms add themselves when they accept the connection and remove
    /// themselves when it leaves or the match ends.
    pub rooms: Memberships,
    /// The same for tournaments this connection plays in or follows (until
    /// they finish or refuse it).
    pub tournaments: Memberships,
    /// A client of another node's (`cluster/bus/`): where it goes on when this
    /// node stops its rooms, so it follows them to their next node.
    pub handover: Option<Handover>,
}

/// The queue itself: a deque under a lock, and the connection task's waker.
/// (Not a channel: a channel allocates its first block of slots up front,
/// and every idle connection would hold it; a deque allocates with its first
/// frame.)
#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    waker: AtomicWaker,
    /// Some outbox is alive: once none is, the queue ends when emptied.
    open: AtomicBool,
}

impl std::ops::Deref for Outbox {
    type Target = Sender;

    fn deref(&self) -> &Sender {
        &self.0
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        BUDGET.forget(&self.queue);
        // The last outbox is gone: a waiting receiver learns the queue has ended.
        self.queue.open.store(false, Ordering::Release);
        self.queue.waker.wake();
    }
}

#[derive(Debug, Default)]
struct State {
    items: VecDeque<Frames>,
    /// Frames in `items` (an item holds one or more).
    frames: usize,
    /// Bytes of text in `items`.
    bytes: usize,
    /// The connection's end is gone: nothing more is taken.
    closed: bool,
    /// The connection's socket, written to directly when nothing is
    /// queued and the connection's task has nothing in flight (`tcp.rs`).
    wire: Option<Arc<Wire>>,
    /// The connection's task has written (and flushed) everything it took
    /// from the queue: a frame written directly now overtakes nothing.
    idle: bool,
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // Every update leaves the state whole: a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The rooms (or tournaments) a connection is in. Shared by the connection
/// and the rooms, it backs the `seats_per_connection` limit and tells a
/// closing connection whom to tell.
#[derive(Clone, Debug, Default)]
pub struct Memberships(Arc<Mutex<Places>>);

#[derive(Debug, Default)]
struct Places {
    ids: HashSet<String>,
    /// Rooms whose match is over: not counted, but still told when the
    /// connection goes (a rematch offer is void once its player has gone).
    settled: HashSet<String>,
    /// The connection is closing: whom to tell was read ([`Memberships::leave`]).
    left: bool,
}

impl Memberships {
    fn set(&self) -> std::sync::MutexGuard<'_, Places> {
        // Each update is a single insert or remove: a poisoned set is still whole.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn enter(&self, id: &str) {
        self.set().ids.insert(id.to_string());
    }

    pub fn exit(&self, id: &str) {
        let mut places = self.set();
        places.ids.remove(id);
        places.settled.remove(id);
    }

    /// The place's match is over: it no longer counts, but still hears
    /// when the connection goes.
    pub fn settle(&self, id: &str) {
        let mut places = self.set();
        places.ids.remove(id);
        places.settled.insert(id.to_string());
    }

    pub fn contains(&self, id: &str) -> bool {
        self.set().ids.contains(id)
    }

    pub fn count(&self) -> usize {
        self.set().ids.len()
    }

    pub fn ids(&self) -> Vec<String> {
        self.set().ids.iter().cloned().collect()
    }

    /// The closing connection's places, read once to tell each it is gone;
    /// from then on [`Memberships::left`] says so. A room that a command
    /// (a follow, on a task of its own) enters afterwards hears no `Gone`:
    /// it must see `left` instead.
    pub fn leave(&self) -> Vec<String> {
        let mut places = self.set();
        places.left = true;
        places.ids.iter().chain(&places.settled).cloned().collect()
    }

    pub fn left(&self) -> bool {
        self.set().left
    }
}

/// A client of another node handed off by a room this node stopped: the
/// room, and how the client carries on in it where it goes next (its
/// seat's token's hash — the only form of it kept — None if it watched, and
/// the last event it was sent). It goes from node to node only.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Handoff {
    pub room: String,
    pub token: Option<String>,
    pub since: u64,
}

/// Where a stopping room leaves a [`Handoff`] for each client of another
/// node in it, and wakes whoever sends them on (`cluster/bus/`).
#[derive(Clone, Debug, Default)]
pub struct Handover(Arc<HandoverInner>);

#[derive(Debug, Default)]
struct HandoverInner {
    left: Mutex<Vec<Handoff>>,
    woken: tokio::sync::Notify,
}

impl Handover {
    pub fn leave(&self, handoff: Handoff) {
        self.0
            .left
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(handoff);
        self.0.woken.notify_one();
    }

    pub fn take(&self) -> Vec<Handoff> {
        std::mem::take(&mut *self.0.left.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Once a room has left a [`Handoff`] (at once if one did since the last
    /// call).
    pub async fn left(&self) {
        self.0.woken.notified().await;
    }
}

/// The connection's end of an [`Outbox`]; dropping it closes the outbox.
pub struct Queue(Arc<Shared>);

impl Queue {
    pub async fn recv(&mut self) -> Option<Frames> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// The next item; Pending (and the task woken when one comes) if none
    /// waits; None once it is empty and every outbox is gone.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Frames>> {
        if let Some(frames) = self.try_recv() {
            return Poll::Ready(Some(frames));
        }
        self.0.waker.register(cx.waker());
        // An item queued (or the last outbox dropped) between the look and
        // the registration.
        match self.try_recv() {
            Some(frames) => Poll::Ready(Some(frames)),
            None if !self.0.open.load(Ordering::Acquire) => Poll::Ready(None),
            None => Poll::Pending,
        }
    }

    pub fn try_recv(&mut self) -> Option<Frames> {
        let mut state = self.0.state();
        let frames = state.items.pop_front()?;
        state.idle = false;
        state.frames -= frames.count();
        let size = frames.bytes();
        state.bytes -= size;
        BUDGET.queued.fetch_sub(size, Ordering::Relaxed);
        if state.items.is_empty() && state.items.capacity() > IDLE_CAPACITY {
            // A burst is over: an idle connection keeps a small deque.
            state.items.shrink_to(IDLE_CAPACITY);
        }
        Some(frames)
    }

    /// From now on, frames may be written straight to `wire` (the socket
    /// this queue's frames go to) while the queue is empty and the
    /// connection's task has nothing in flight.
    pub fn attach(&self, wire: Arc<Wire>) {
        let mut state = self.0.state();
        state.wire = Some(wire);
        state.idle = true;
    }

    /// No more direct writes: the connection is closing.
    pub fn detach(&self) {
        self.0.state().wire = None;
    }

    /// The connection's task has written and flushed everything it took:
    /// true if the queue is still empty (direct writes may go on).
    pub fn settle(&self) -> bool {
        let mut state = self.0.state();
        state.idle = state.items.is_empty();
        state.idle
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.wire = None;
        state.closed = true;
        state.items = VecDeque::new();
        state.frames = 0;
        BUDGET.queued.fetch_sub(state.bytes, Ordering::Relaxed);
        state.bytes = 0;
    }
}

/// Bytes of text queued in every connection's outbox together, and the most
/// they may be (`max_queued_bytes`). One per process, like the metrics: a
/// process runs one server. Its count is the one shared atomic a queued
/// frame touches (a relaxed add, and a subtract when it is taken); finding
/// the largest queues when the budget is passed walks every outbox, which
/// is rare and off the move path.
pub struct Budget {
    queued: AtomicUsize,
    limit: AtomicUsize,
    /// Every open outbox, by the address of its queue.
    outboxes: Mutex<HashMap<usize, Weak<Sender>>>,
}

pub static BUDGET: LazyLock<Budget> = LazyLock::new(|| Budget {
    queued: AtomicUsize::new(0),
    limit: AtomicUsize::new(usize::MAX),
    outboxes: Mutex::default(),
});

impl Budget {
    /// The most bytes all queues may hold together (the server sets it at
    /// its start, from `max_queued_bytes`).
    pub fn set_limit(&self, bytes: usize) {
        self.limit.store(bytes, Ordering::Relaxed);
    }

    /// Bytes queued in all now.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// Counts `bytes` more; true when that passes the limit.
    fn add(&self, bytes: usize) -> bool {
        let total = self
            .queued
            .fetch_add(bytes, Ordering::Relaxed)
            .wrapping_add(bytes);
        total > self.limit.load(Ordering::Relaxed)
    }

    fn outboxes(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Weak<Sender>>> {
        // Every update is one insert or remove: poisoning is ignored.
        self.outboxes.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn remember(&self, queue: &Arc<Shared>, sender: &Arc<Sender>) {
        self.outboxes()
            .insert(Arc::as_ptr(queue) as usize, Arc::downgrade(sender));
    }

    fn forget(&self, queue: &Arc<Shared>) {
        self.outboxes().remove(&(Arc::as_ptr(queue) as usize));
    }

    /// Drops the connections with the most queued, the largest first, until
    /// the total is within the limit again.
    #[cold]
    fn shed(&self) {
        let limit = self.limit.load(Ordering::Relaxed);
        // Collected first: no queue's lock is taken under the registry's, and
        // a sender dropped here may forget itself.
        let outboxes: Vec<Weak<Sender>> = self.outboxes().values().cloned().collect();
        let mut largest: Vec<(usize, Arc<Sender>)> = outboxes
            .iter()
            .filter_map(Weak::upgrade)
            .map(|sender| {
                let bytes = sender.queue.state().bytes;
                (bytes, sender)
            })
            .filter(|(bytes, _)| *bytes > 0)
            .collect();
        largest.sort_unstable_by_key(|(bytes, _)| std::cmp::Reverse(*bytes));
        for (_, sender) in largest {
            if self.queued() <= limit {
                break;
            }
            sender.shed();
        }
    }
}

/// Slots an emptied queue keeps.
const IDLE_CAPACITY: usize = 4;

impl Sender {
    /// Drops the connection to keep the server-wide budget: what it has
    /// queued goes at once (its task may take a while to close a socket
    /// nobody reads), and nothing more is taken.
    fn shed(&self) {
        let mut state = self.queue.state();
        if state.closed {
            return;
        }
        state.closed = true;
        state.wire = None;
        state.items = VecDeque::new();
        state.frames = 0;
        let bytes = std::mem::take(&mut state.bytes);
        drop(state);
        BUDGET.queued.fetch_sub(bytes, Ordering::Relaxed);
        METRICS.overload_disconnects.inc();
        tracing::info!(
            conn = self.conn,
            bytes,
            "outbound queues over max_queued_bytes: dropping one of the largest"
        );
        self.drop_for(Kick::Overloaded);
    }

    /// Drops the connection for `why` (the first reason given is the one
    /// its client is told).
    pub fn drop_for(&self, why: Kick) {
        let _ = self
            .why
            .compare_exchange(0, why as u8, Ordering::AcqRel, Ordering::Acquire);
        self.kick.raise();
    }

    /// Why the connection was dropped (once its kick is raised).
    pub fn dropped_for(&self) -> Kick {
        Kick::from_u8(self.why.load(Ordering::Acquire))
    }
}

impl Outbox {
    /// A queue of at most `capacity` frames and `max_bytes` bytes of text
    /// (one larger item, a write's frames, passes when nothing else is
    /// queued).
    pub fn new(conn: ConnId, capacity: usize, max_bytes: usize) -> (Outbox, Queue) {
        Outbox::open(conn, capacity, max_bytes, usize::MAX, None)
    }

    /// [`Outbox::new`], with every message sent with [`Outbox::send`] held
    /// to `max_message` bytes, and a client of another node's `handover`.
    pub fn open(
        conn: ConnId,
        capacity: usize,
        max_bytes: usize,
        max_message: usize,
        handover: Option<Handover>,
    ) -> (Outbox, Queue) {
        let queue = Arc::new(Shared {
            state: Mutex::default(),
            waker: AtomicWaker::new(),
            open: AtomicBool::new(true),
        });
        let sender = Sender {
            conn,
            queue: queue.clone(),
            capacity,
            max_bytes,
            max_message,
            kick: Flag::default(),
            why: AtomicU8::new(0),
            rooms: Memberships::default(),
            tournaments: Memberships::default(),
            handover,
        };
        let sender = Arc::new(sender);
        BUDGET.remember(&queue, &sender);
        (Outbox(sender), Queue(queue))
    }

    /// Queues a frame; false (and the connection is dropped) if the queue is full
    /// or the connection is gone.
    pub fn send_frame(&self, frame: Utf8Bytes) -> bool {
        self.send_frames(Frames::One(frame))
    }

    /// Queues frames to be written together.
    pub fn send_frames(&self, frames: Frames) -> bool {
        self.push(frames, true)
    }

    /// Queues a frame for the connection's task to write, never writing it
    /// directly: for a fan-out to many, which would otherwise make every
    /// `send` call on the sender's task (a room with many watchers, a
    /// tournament) instead of spreading them over the connections' tasks.
    pub fn queue_frame(&self, frame: Utf8Bytes) -> bool {
        self.queue_frames(Frames::One(frame))
    }

    /// Queues frames for the connection's task to write together, never
    /// writing them directly (as [`Outbox::queue_frame`]).
    pub fn queue_frames(&self, frames: Frames) -> bool {
        self.push(frames, false)
    }

    /// Queues `frames`, or with `direct` writes them straight to the socket
    /// when nothing is queued and the connection's task has nothing in
    /// flight (a direct write's spill is not counted against `max_bytes`:
    /// at most one write's frames more).
    fn push(&self, frames: Frames, direct: bool) -> bool {
        if crate::frame_log::on() {
            frames.log(self.conn);
        }
        let size = frames.bytes();
        let refused = {
            let mut state = self.queue.state();
            if state.closed {
                // The connection is gone.
                return false;
            }
            let behind_nothing = state.items.is_empty() && state.idle;
            let texts = frames.texts().filter(|_| direct && behind_nothing);
            if let (Some((texts, count)), Some(wire)) = (texts, &state.wire) {
                match wire.write_frames(&texts[..count]) {
                    Direct::Written => return true,
                    Direct::Spilled => {
                        // The rest goes out before anything else the
                        // connection's task writes: it must be woken.
                        drop(state);
                        self.queue.waker.wake();
                        return true;
                    }
                    Direct::Refused => {}
                }
            }
            if state.frames + frames.count() > self.capacity {
                "frames"
            } else if state.bytes > 0 && state.bytes + size > self.max_bytes {
                "bytes"
            } else {
                state.frames += frames.count();
                state.items.push_back(frames);
                state.bytes += size;
                drop(state);
                self.queue.waker.wake();
                if BUDGET.add(size) {
                    BUDGET.shed();
                    return !self.queue.state().closed;
                }
                return true;
            }
        };
        tracing::info!(
            conn = self.conn,
            "outbound queue full ({refused}): dropping a slow reader"
        );
        self.drop_for(Kick::SlowReader);
        false
    }

    /// Queues a message; one larger than `max_message` is replaced by a
    /// `too_large` error answering the same request, so that a client never
    /// meets a frame it must refuse (and the request never goes unanswered).
    pub fn send(&self, msg: &ServerMsg) -> bool {
        if let ServerMsg {
            body: ServerBody::Error { code, .. },
            ..
        } = msg
        {
            METRICS.refused(*code);
        }
        let frame = encode(msg);
        if frame.len() <= self.max_message {
            return self.send_frame(frame);
        }
        // A tournament's state may shrink to its current round (and the
        // answer keep what it carries, e.g. a player's token).
        if let Some(cut) = current_round_only(msg) {
            let frame = encode(&cut);
            if frame.len() <= self.max_message {
                return self.send_frame(frame);
            }
        }
        self.send_too_large(&frame, msg.id.clone(), too_large_hint(msg))
    }

    /// Queues an answer to request `id` already encoded, with the same
    /// `too_large` fallback as [`Outbox::send`].
    pub fn send_answer(&self, frame: Utf8Bytes, id: Option<RequestId>) -> bool {
        if frame.len() <= self.max_message {
            return self.send_frame(frame);
        }
        self.send_too_large(&frame, id, "")
    }

    fn send_too_large(&self, frame: &Utf8Bytes, id: Option<RequestId>, hint: &str) -> bool {
        let kind = frame
            .get(9..)
            .and_then(|t| t.split('"').next())
            .unwrap_or("");
        tracing::warn!(
            conn = self.conn,
            bytes = frame.len(),
            "a {kind} message is over max_message_bytes: sent as too_large"
        );
        METRICS.refused(ErrorCode::TooLarge);
        self.send_frame(encode(&too_large(id, frame.len(), self.max_message, hint)))
    }

    pub fn is_closed(&self) -> bool {
        self.kick.is_raised() || self.queue.state().closed
    }
}

/// `msg` with its tournament state cut to the current round; None for a
/// message without a state.
fn current_round_only(msg: &ServerMsg) -> Option<ServerMsg> {
    let mut msg = msg.clone();
    let state = match &mut msg {
        ServerMsg {
            body: ServerBody::TournamentCreated { state, .. },
            ..
        }
        | ServerMsg {
            body: ServerBody::Registered { state, .. },
            ..
        }
        | ServerMsg {
            body: ServerBody::Tournament { state, .. },
            ..
        }
        | ServerMsg {
            body:
                ServerBody::TournamentWatching {
                    state: Some(state), ..
                },
            ..
        } => state,
        _ => return None,
    };
    let round = state.round;
    state.keep_round(round);
    Some(msg)
}

/// What to add to a `too_large` error for `msg`: how to ask for less.
fn too_large_hint(msg: &ServerMsg) -> &'static str {
    match msg {
        ServerMsg {
            body: ServerBody::Rooms { .. },
            ..
        } => "; ask for fewer with limit",
        _ => "",
    }
}

/// The error that stands for an answer to `id` that is `bytes` long, over `max`.
fn too_large(id: Option<RequestId>, bytes: usize, max: usize, hint: &str) -> ServerMsg {
    ServerMsg {
        id,
        body: ServerBody::Error {
            code: ErrorCode::TooLarge,
            message: format!(
                "the answer would be {bytes} bytes, more than max_message_bytes ({max}){hint}"
            ),
            retry_after_ms: None,
            limit: Some("max_message_bytes".into()),
        },
    }
}

/// Serialises a message once, to be shared by every subscriber.
pub fn encode(msg: &ServerMsg) -> Utf8Bytes {
    // Serialising these plain data types cannot fail (no maps with non-string keys).
    Utf8Bytes::from(serde_json::to_string(msg).unwrap_or_else(|e| {
        format!(r#"{{"type":"error","code":"internal","message":"encoding failed: {e}"}}"#)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(bytes: usize) -> Utf8Bytes {
        Utf8Bytes::from("x".repeat(bytes))
    }

    #[tokio::test]
    async fn a_reader_behind_by_too_many_bytes_is_dropped() {
        let (outbox, mut queue) = Outbox::new(1, 100, 1000);
        // One message larger than the bound passes an empty queue.
        assert!(outbox.send_frame(frame(5000)));
        assert_eq!(queue.recv().await.map(|f| f.bytes()), Some(5000));
        for _ in 0..4 {
            assert!(outbox.send_frame(frame(200)));
        }
        assert!(outbox.send_frames(Frames::Many(Box::new([frame(100), frame(100)]))));
        assert!(!outbox.kick.is_raised());
        // 1,000 bytes are queued: one more is one too many.
        assert!(!outbox.send_frame(frame(1)));
        assert!(outbox.kick.is_raised());
        // What was queued is still there for the writer, and counted out.
        let mut taken = 0;
        while let Some(frames) = queue.try_recv() {
            taken += frames.bytes();
        }
        assert_eq!(taken, 1000);
        assert_eq!(outbox.queue.state().bytes, 0);
    }

    #[tokio::test]
    async fn frames_go_straight_to_the_socket_only_behind_nothing() {
        use futures_util::StreamExt;
        let (tcp, mut client) = crate::tcp::tests::pair().await;
        let (outbox, mut queue) = Outbox::new(1, 8, usize::MAX);
        queue.attach(tcp.wire());
        // Nothing queued, nothing in flight: written at once.
        assert!(outbox.send_frame(Utf8Bytes::from("one")));
        assert!(queue.try_recv().is_none());
        let text = client.next().await.unwrap().unwrap().into_text().unwrap();
        assert_eq!(text, "one");
        // A queued frame (as when the socket was full) goes first: the next
        // one queues behind it.
        {
            let mut state = outbox.queue.state();
            state.items.push_back(Frames::One(frame(2)));
            state.frames += 1;
            state.bytes += 2;
            BUDGET.queued.fetch_add(2, Ordering::Relaxed);
        }
        assert!(outbox.send_frame(frame(3)));
        // The task takes them; until it has written them and settled, the
        // queue is empty and yet a frame queues behind them.
        assert_eq!(queue.try_recv().map(|f| f.bytes()), Some(2));
        assert_eq!(queue.try_recv().map(|f| f.bytes()), Some(3));
        assert!(outbox.send_frame(frame(4)));
        assert_eq!(queue.try_recv().map(|f| f.bytes()), Some(4));
        // Settled with the queue empty: straight to the socket again.
        assert!(queue.settle());
        assert!(outbox.send_frame(Utf8Bytes::from("five")));
        assert!(queue.try_recv().is_none());
        let text = client.next().await.unwrap().unwrap().into_text().unwrap();
        assert_eq!(text, "five");
        // A fan-out to many queues, behind nothing or not.
        assert!(outbox.queue_frame(frame(5)));
        assert_eq!(queue.try_recv().map(|f| f.bytes()), Some(5));
        assert!(queue.settle());
        // A closing connection's frames wait in the queue for its close.
        queue.detach();
        assert!(outbox.send_frame(frame(6)));
        assert_eq!(queue.try_recv().map(|f| f.bytes()), Some(6));
    }

    #[tokio::test]
    async fn a_reader_behind_by_too_many_frames_is_dropped() {
        let (outbox, _queue) = Outbox::new(1, 3, usize::MAX);
        for _ in 0..3 {
            assert!(outbox.send_frame(frame(1)));
        }
        assert!(!outbox.send_frame(frame(1)));
        assert!(outbox.kick.is_raised());
        assert_eq!(outbox.queue.state().bytes, 3);
    }

    #[tokio::test]
    async fn frames_written_together_count_one_by_one() {
        let (outbox, mut queue) = Outbox::new(1, 4, usize::MAX);
        assert!(outbox.send_frames(Frames::Many(Box::new([frame(1), frame(1), frame(1)]))));
        assert!(outbox.send_frame(frame(1)));
        // Four frames in two items: the queue is full.
        assert!(!outbox.send_frames(Frames::Many(Box::new([frame(1), frame(1)]))));
        assert!(outbox.kick.is_raised());
        assert_eq!(queue.try_recv().map(|f| f.count()), Some(3));
        assert_eq!(queue.try_recv().map(|f| f.count()), Some(1));
        assert_eq!(outbox.queue.state().frames, 0);
    }

    #[tokio::test]
    async fn more_frames_than_a_write_takes_go_through_the_connections_task() {
        use futures_util::StreamExt;
        let (tcp, mut client) = crate::tcp::tests::pair().await;
        let (outbox, mut queue) = Outbox::new(1, 8, usize::MAX);
        queue.attach(tcp.wire());
        let texts = |n: usize| (0..n).map(|i| Utf8Bytes::from(format!("f{i}")));
        // As many as one write takes: straight to the socket, in order.
        assert!(outbox.send_frames(Frames::Many(texts(MAX_FRAMES).collect())));
        assert!(queue.try_recv().is_none());
        for i in 0..MAX_FRAMES {
            let text = client.next().await.unwrap().unwrap().into_text().unwrap();
            assert_eq!(text, format!("f{i}"));
        }
        // One more: queued whole, none of it lost.
        assert!(outbox.send_frames(Frames::Many(texts(MAX_FRAMES + 1).collect())));
        let queued: Vec<String> = queue
            .try_recv()
            .unwrap()
            .into_iter()
            .map(|f| f.to_string())
            .collect();
        let expected: Vec<String> = texts(MAX_FRAMES + 1).map(|f| f.to_string()).collect();
        assert_eq!(queued, expected);
    }

    #[tokio::test]
    async fn an_answer_over_the_message_bound_becomes_a_too_large_error() {
        use crate::metrics::CodeLabel;
        use grundy_protocol::wire::RequestId;
        let counted = || {
            let code = "too_large".to_string();
            METRICS.refusals.get_or_create(&CodeLabel { code }).get()
        };
        let (outbox, mut queue) = Outbox::open(1, 8, usize::MAX, 200, None);
        let big = ServerMsg::answer(Some(RequestId::Text("x".repeat(300))), ServerBody::Pong);
        let before = counted();
        assert!(outbox.send(&big));
        // Counted with the refusals (other tests may add to it meanwhile).
        assert!(counted() > before, "too_large not counted");
        let Some(Frames::One(frame)) = queue.recv().await else {
            panic!("nothing sent");
        };
        let answer: ServerMsg = serde_json::from_str(&frame).unwrap();
        match answer {
            ServerMsg {
                id,
                body:
                    ServerBody::Error {
                        code,
                        message,
                        limit,
                        ..
                    },
            } => {
                assert_eq!(code, ErrorCode::TooLarge);
                assert_eq!(id, Some(RequestId::Text("x".repeat(300))));
                assert_eq!(limit.as_deref(), Some("max_message_bytes"));
                assert!(message.contains("200"), "{message}");
            }
            other => panic!("not an error: {other:?}"),
        }
        // One within the bound goes as it is.
        let small = ServerMsg::answer(None, ServerBody::Pong);
        assert!(outbox.send(&small));
        let Some(Frames::One(frame)) = queue.recv().await else {
            panic!("nothing sent");
        };
        assert_eq!(frame, encode(&small));
    }

    #[tokio::test]
    async fn a_tournament_state_too_large_is_cut_to_its_round_and_keeps_the_token() {
        let pairings: Vec<serde_json::Value> = (1..=20)
            .map(|round| {
                serde_json::json!({"round": round, "players": [0, 1],
                    "spec": {"game": "nim", "heaps": vec![7; 100]}})
            })
            .collect();
        let state = serde_json::json!({
            "tournament": "t", "code": "TABCDE",
            "settings": {"name": null, "spec": null, "family": "nim", "size": null,
                "seed": 7, "format": "round_robin", "rounds": 20,
                "clock": {"initial_ms": 60000, "increment_ms": 1000},
                "max_players": 2, "rated": true},
            "status": "running", "round": 20, "rounds": 20,
            "players": [], "pairings": pairings, "games": [], "byes": [],
            "standings": [], "ended_early": null, "seq": 40});
        let registered = ServerMsg::answer(
            None,
            ServerBody::Registered {
                tournament: "t".into(),
                player: 1,
                token: "secret".into(),
                state: serde_json::from_value(state).unwrap(),
            },
        );
        let whole = encode(&registered).len();
        let (outbox, mut queue) = Outbox::open(1, 8, usize::MAX, whole / 4, None);
        assert!(outbox.send(&registered));
        let Some(Frames::One(frame)) = queue.recv().await else {
            panic!("nothing sent");
        };
        assert!(frame.len() <= whole / 4);
        match serde_json::from_str(&frame).unwrap() {
            ServerMsg {
                body: ServerBody::Registered { token, state, .. },
                ..
            } => {
                assert_eq!(token, "secret");
                assert_eq!(state.only_round, Some(20));
                assert_eq!(state.pairings.len(), 1);
                assert_eq!(state.pairings[0].round, 20);
            }
            other => panic!("not registered: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_connection_waiting_for_frames_is_woken_by_one() {
        let (outbox, mut queue) = Outbox::new(1, 8, usize::MAX);
        let waiting = tokio::spawn(async move { queue.recv().await.map(|f| f.bytes()) });
        tokio::task::yield_now().await;
        assert!(outbox.send_frame(frame(7)));
        assert_eq!(waiting.await.unwrap(), Some(7));
    }

    #[tokio::test]
    async fn the_queue_ends_once_every_outbox_is_gone_and_it_is_empty() {
        let (outbox, mut queue) = Outbox::new(1, 8, usize::MAX);
        let copy = outbox.clone();
        assert!(outbox.send_frame(frame(3)));
        drop(outbox);
        let waiting = tokio::spawn(async move {
            let first = queue.recv().await.map(|f| f.bytes());
            (first, queue.recv().await.is_none())
        });
        tokio::task::yield_now().await;
        drop(copy);
        assert_eq!(waiting.await.unwrap(), (Some(3), true));
    }

    #[tokio::test]
    async fn nothing_is_counted_for_a_closed_connection() {
        let (outbox, queue) = Outbox::new(1, 3, 10);
        drop(queue);
        assert!(!outbox.send_frame(frame(5)));
        assert!(!outbox.kick.is_raised());
        assert_eq!(outbox.queue.state().bytes, 0);
        assert!(outbox.is_closed());
    }
}
