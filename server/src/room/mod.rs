//! One task per room owns its match. Commands arrive over a channel; nothing
//! about a match sits behind a lock that the network path contends on.
//!
//! The task is thin: for each command it asks the match's pure core what it
//! would record (`core.rs`, [`Core::decide`]), makes that durable in the
//! store, applies it ([`Core::apply`]), acknowledges, and tells every
//! subscriber (`subscribers.rs`). An event is durable *before* anyone hears
//! of it, so whatever a player saw acknowledged survives a restart; a
//! restart replays the stored records through the same `apply`.

pub mod answer;
pub mod clock;
pub mod core;
pub mod subscribers;

use std::sync::{Arc, Mutex};

use grundy_protocol::wire::{
    Clock, ErrorCode, Event, EventBody, MatchResult, PlayerKind, RequestId, RoomSummary, SeatInfo,
    ServerBody, ServerMsg, WithdrawReason,
};
use grundy_protocol::wire::{RoomState, MAX_DESCRIPTION};
use grundy_protocol::{Level, Position, Rules};
use serde_json::Value;
use tokio::sync::mpsc::error::{SendError, TrySendError};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use self::answer::{ack_frame, event_frame, SnapshotView};
pub use self::core::RematchAsk;
use self::core::{Core, Decision, Intent, MatchRules, Record, RematchStep, Resumer};
use self::subscribers::Subscribers;
use crate::accounts::Accounts;
use crate::config::Config;
use crate::metrics::{RoomGauge, METRICS};
use crate::outbox::{ConnId, Handoff, Kick, Outbox};
use crate::player::{AccountId, Player};
use crate::ratings::{Rated, Ratings};
use crate::refusal::Refusal;
use crate::secret::{hash, matches_hash, new_token};
use crate::store::{now_ms, Lease, MatchStore, RatingRow, StoreError, StoredSeat, WriteOp};
use crate::task::{outcome, sleep_until, Ending, OnExit, Pending};

/// How long a room waits before it tries again to record the end of a match
/// that a deadline ended, after the store refused it.
const DEADLINE_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

/// What a connection asks of a room. Answers go straight to `outbox`, in order
/// with the room's events.
pub enum RoomCmd {
    Join {
        outbox: Outbox,
        id: Option<RequestId>,
        player: Player,
        seat: Option<u8>,
        /// The connection's account token id, which the seat is tied to
        /// (None for a guest).
        tie: Option<String>,
    },
    Watch {
        outbox: Outbox,
        id: Option<RequestId>,
        since: Option<u64>,
    },
    /// Back to a seat with its token, or (an empty token) as the account
    /// that took it.
    Resume {
        outbox: Outbox,
        id: Option<RequestId>,
        token: String,
        account: Option<AccountId>,
        /// With `account`: the account token id the connection resumes
        /// with, which the seat is tied to from now on.
        tie: Option<String>,
        since: Option<u64>,
    },
    Move {
        outbox: Outbox,
        id: Option<RequestId>,
        token: String,
        mv: Value,
        /// When the server read the move: the mover's clock stops there, not
        /// when the room gets to it.
        received: Instant,
    },
    Resign {
        outbox: Outbox,
        id: Option<RequestId>,
        token: String,
    },
    Abort {
        outbox: Outbox,
        id: Option<RequestId>,
        token: String,
    },
    Leave {
        outbox: Outbox,
        id: Option<RequestId>,
    },
    /// `offer_rematch`, `accept_rematch` or `decline_rematch`; `maker`
    /// makes the new room for an offer of this connection's (counted
    /// against its address).
    Rematch {
        outbox: Outbox,
        id: Option<RequestId>,
        token: String,
        ask: RematchAsk,
        maker: Maker,
    },
    /// The connection closed.
    Gone { conn: ConnId },
    /// A tournament seats a player who has no connection here yet, or the
    /// server its house bot (`house`); they come with `resume` and the token.
    Reserve {
        player: Player,
        seat: u8,
        /// The seat is the house bot's: recorded so, it gets a bot back after
        /// a restart.
        house: bool,
        /// A tournament's player: the hash of their tournament token, which
        /// acts for the seat too.
        player_token: Option<String>,
        reply: oneshot::Sender<Result<String, Refusal>>,
    },
    /// The house bot, back after a restart, asks for a fresh token for its
    /// reserved seat (the room keeps only the old one's hash).
    Rekey {
        seat: u8,
        reply: oneshot::Sender<Result<String, Refusal>>,
    },
    /// A tournament resigns for a player who withdrew.
    ResignSeat { seat: u8 },
    /// A client of another node whose room moved here carries on unseen:
    /// back to its seat or watching, sent the events it missed as it would
    /// have heard them; if that cannot be, its connection ends and it
    /// resumes as after a drop.
    CarryOn { outbox: Outbox, handoff: Handoff },
}

/// The sending end of a room's command queue. Commands are boxed in the
/// queue: a channel allocates its first block of 32 slots up front, and
/// every room, a lingering finished one too, would hold 32 whole commands'
/// room (5 KiB); boxed, it holds 32 pointers.
#[derive(Clone, Debug)]
pub struct RoomTx(mpsc::Sender<Box<RoomCmd>>);

/// The room's own end of its queue.
pub type RoomRx = mpsc::Receiver<Box<RoomCmd>>;

/// A room's queue of at most `bound` commands.
pub fn room_queue(bound: usize) -> (RoomTx, RoomRx) {
    let (tx, rx) = mpsc::channel(bound);
    (RoomTx(tx), rx)
}

impl RoomTx {
    /// Queues `cmd` unless the queue is full or closed (the error holds it).
    pub fn try_send(&self, cmd: RoomCmd) -> Result<(), TrySendError<Box<RoomCmd>>> {
        self.0.try_send(Box::new(cmd))
    }

    /// Queues `cmd`, waiting for room; an error once the room has gone.
    pub async fn send(&self, cmd: RoomCmd) -> Result<(), SendError<Box<RoomCmd>>> {
        self.0.send(Box::new(cmd)).await
    }
}

/// A room's line of the lobby list, with the accounts holding its seats
/// (the lobby adds their ratings).
#[derive(Debug, Clone)]
pub struct Listing {
    pub summary: RoomSummary,
    pub accounts: [Option<AccountId>; 2],
}

/// What a rematch's new room plays: the finished room's game, clock and
/// listing, its players with their seats swapped.
pub struct RematchPlan {
    pub spec: Value,
    pub clock: Option<Clock>,
    pub listed: bool,
    pub hints: bool,
    pub rated: bool,
    pub bot: Option<Level>,
    /// The new room's players by seat; None for the house bot's seat.
    pub players: [Option<Player>; 2],
}

/// A rematch's new room: its id, short code, and each player's seat token
/// (None for the house bot's seat).
pub struct Rematched {
    pub room: String,
    pub code: String,
    pub tokens: [Option<String>; 2],
}

/// Makes a rematch's room by the lobby's own path (durable, counted against
/// the offerer's address): a room cannot reach the lobby, which sits above
/// it, so the connection that offers hands it this.
pub trait MakeRoom: Send + Sync {
    fn make(
        &self,
        plan: RematchPlan,
    ) -> futures_util::future::BoxFuture<'static, Result<Rematched, Refusal>>;
}

/// A [`MakeRoom`] as a command carries it.
pub type Maker = Arc<dyn MakeRoom>;

/// Told the result when a match ends (a tournament's games report this way).
pub type EndHook = Box<dyn Fn(&str, MatchResult) + Send + Sync>;

/// Everything needed to start (or restart) a room's task.
pub struct RoomInit {
    pub id: String,
    pub code: String,
    pub spec: Value,
    pub start: Position,
    pub clock: Option<Clock>,
    pub listed: bool,
    /// The house bot level the creator asked for.
    pub bot: Option<Level>,
    /// Both players may see hints.
    pub hints: bool,
    /// The ratings a rated casual game moves when it ends; None: unrated
    /// (a tournament rates its own games).
    pub rated: Option<Arc<Ratings>>,
    /// The tournament this game belongs to: a no-show then loses the game
    /// rather than calling it off, and nobody may abort.
    pub tournament: Option<String>,
    pub on_end: Option<EndHook>,
    /// This node's lease on the room, in a cluster: every write carries it.
    pub lease: Option<Lease>,
    /// Whether an account token still acts: a seat tied to one that does
    /// not refuses its seat token. None: no seat token is refused so.
    pub accounts: Option<Arc<Accounts>>,
}

pub struct Room {
    id: String,
    code: String,
    /// The spec's `game` id (what ratings are kept under), the game's name
    /// and the start in a few words, for the lobby.
    game: String,
    name: String,
    description: String,
    listed: bool,
    bot: Option<Level>,
    hints: bool,
    /// See [`RoomInit::rated`].
    rated: Option<Arc<Ratings>>,
    tournament: Option<String>,
    on_end: Option<EndHook>,
    core: Core,
    /// The connections acting for each seat right now.
    holders: [Vec<ConnId>; 2],
    subscribers: Subscribers,
    /// Since when the room has been abandoned (see `Core::abandoned`), None
    /// while someone it needs is here.
    abandoned_since: Option<std::time::Instant>,
    /// After a deadline's end could not be recorded: the next try, not sooner
    /// (a failing store is not asked again in a tight loop).
    deadline_retry: Option<Instant>,
    /// When the match ended (the room stays in memory for `linger` after).
    finished_at: Option<Instant>,
    /// The standing rematch offer's maker (`Core::rematch` says whose).
    rematch_maker: Option<Maker>,
    store: Arc<dyn MatchStore>,
    /// See [`RoomInit::lease`].
    lease: Option<Lease>,
    /// See [`RoomInit::accounts`].
    accounts: Option<Arc<Accounts>>,
    /// The store refused a write because another node owns the room now:
    /// the room answers what is queued (with that refusal) and ends.
    moved: bool,
    config: Arc<Config>,
    summary: Arc<Mutex<Listing>>,
    /// This room's place in `grundy_rooms{state}`.
    counted: RoomGauge,
}

/// Where to acknowledge a command: the sender's outbox and its request id.
type Ack<'a> = (&'a Outbox, &'a Option<RequestId>);

/// Now, as the core counts time (tokio's clock, so tests can pause it).
fn now() -> std::time::Instant {
    Instant::now().into_std()
}

impl Room {
    pub fn new(init: RoomInit, store: Arc<dyn MatchStore>, config: Arc<Config>) -> Room {
        let rules = MatchRules::new(&config, init.tournament.is_some(), init.rated.is_some());
        let room = Room {
            id: init.id,
            code: init.code,
            game: crate::rating_key::key_of(&init.spec),
            name: grundy_protocol::names::spec_name(&init.spec).to_string(),
            description: grundy_protocol::names::describe_spec(&init.spec, MAX_DESCRIPTION),
            listed: init.listed,
            bot: init.bot,
            hints: init.hints,
            rated: init.rated,
            tournament: init.tournament,
            on_end: init.on_end,
            core: Core::new(init.spec, init.start, init.clock, rules),
            holders: [Vec::new(), Vec::new()],
            subscribers: Subscribers::new(config.events_in_memory),
            abandoned_since: Some(now()),
            deadline_retry: None,
            finished_at: None,
            rematch_maker: None,
            store,
            lease: init.lease,
            accounts: init.accounts,
            moved: false,
            config,
            summary: Arc::new(Mutex::new(Listing {
                summary: RoomSummary {
                    room: String::new(),
                    code: String::new(),
                    game: String::new(),
                    name: String::new(),
                    description: String::new(),
                    seats: [no_seat(), no_seat()],
                    state: RoomState::Open,
                    clock: None,
                    bot: None,
                    hints: false,
                    rated: false,
                    ratings: [None, None],
                    tournament: None,
                },
                accounts: [None, None],
            })),
            counted: RoomGauge::new(),
        };
        room.update_summary();
        room
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    /// The lobby's view of this room, kept current by the room's task.
    pub fn summary(&self) -> Arc<Mutex<Listing>> {
        self.summary.clone()
    }

    pub fn listed(&self) -> bool {
        self.listed
    }

    /// Queues a write of this room, under its lease when it has one.
    fn write(&self, op: WriteOp) -> Pending {
        self.store.write(op.fenced(self.lease.as_ref()))
    }

    pub fn finished(&self) -> bool {
        self.core.finished()
    }

    /// Rebuilds a room from its stored seats and event log (after a restart)
    /// by applying them as they were recorded. Clocks resume from the banks
    /// of the last move: downtime is charged to nobody. Returns the write that
    /// completes the record, when the log ended the match but the record did
    /// not say so: wait for it before serving.
    pub fn restore(
        &mut self,
        seats: [Option<StoredSeat>; 2],
        events: Vec<Event>,
    ) -> Result<Option<Pending>, String> {
        let at = now();
        let seats = seats.into_iter().zip(0u8..).filter_map(|(seat, i)| {
            seat.map(|s| Record::Seat {
                seat: i,
                player: s.player,
                token: s.token,
                house: s.house,
                player_token: s.player_token,
                tie: s.tie,
            })
        });
        let keep = events.len().saturating_sub(self.config.events_in_memory);
        for record in seats.chain(events.into_iter().map(Record::Event)) {
            self.core
                .apply(&record, at)
                .map_err(|e| format!("stored log refused: {e}"))?;
            if let Record::Event(event) = &record {
                if event.seq as usize > keep {
                    let text = serde_json::to_string(event)
                        .map_err(|e| format!("cannot encode a stored event: {e}"))?;
                    self.subscribers.remember(text.into());
                }
            }
        }
        self.update_summary();
        // The log ends the match but the record does not say so (a crash
        // between the two commits): the result is written again, and the room
        // lingers like any finished one.
        Ok(self.core.game.result.map(|result| {
            self.finished_at = Some(Instant::now());
            // Ratings are written with the result only: a rated game whose
            // result was lost stays unrated rather than rated twice.
            self.write(WriteOp::Finish {
                room: self.id.clone(),
                result,
                finished_at_ms: now_ms(),
                ratings: Vec::new(),
            })
        }))
    }

    /// The room's task: commands, and the clock's deadline. `on_finish` runs
    /// once the match has ended, `on_exit` when the task ends.
    pub async fn run(
        mut self,
        mut commands: RoomRx,
        on_finish: impl FnOnce(),
        on_exit: impl FnOnce(),
    ) {
        let _on_exit = OnExit::new(on_exit);
        let mut ending = Ending::new(on_finish);
        loop {
            let deadline = self.deadline();
            let linger = ending.linger_until(self.finished_at, self.config.linger);
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    Some(cmd) => self.handle(*cmd).await,
                    // A room another node owns now writes nothing more.
                    None if self.moved => break,
                    None => {
                        self.all_gone().await;
                        break;
                    }
                },
                _ = sleep_until(deadline) => {
                    // Commands read before the deadline may still be queued (a
                    // move in time, a player coming back): they count first. A
                    // move read too late ends the match itself (`Core::decide`).
                    for _ in 0..commands.len() {
                        let Ok(cmd) = commands.try_recv() else { break };
                        self.handle(*cmd).await;
                    }
                    self.on_deadline().await;
                }
                _ = sleep_until(linger) => {
                    self.withdraw_rematch(WithdrawReason::Closed);
                    ending.close(&mut commands);
                }
            }
            if self.moved && !commands.is_closed() {
                // What is queued still gets its answer: the same refusal.
                commands.close();
                // Everyone here (players, watchers, on this node or through
                // the bus) is disconnected once answered: they resume where
                // the room is now, rather than wait for events that will
                // not come.
                for outbox in self.subscribers.outboxes() {
                    outbox.drop_for(Kick::RoomMoved);
                }
            }
        }
        // A finished room's connections no longer need to tell it they go
        // (it is gone): a long-lived connection keeps no trace of it.
        if self.finished() {
            for outbox in self.subscribers.outboxes() {
                outbox.rooms.exit(&self.id);
            }
        }
    }

    /// When to wake for the core's deadline (not before a retry is due).
    fn deadline(&self) -> Option<Instant> {
        let (at, _) = self.core.deadline(self.abandoned_since)?;
        let at = Instant::from_std(at);
        Some(self.deadline_retry.map_or(at, |retry| retry.max(at)))
    }

    /// Which seats a connection holds now.
    fn here(&self) -> [bool; 2] {
        [!self.holders[0].is_empty(), !self.holders[1].is_empty()]
    }

    /// Keeps `abandoned_since` current.
    fn note_presence(&mut self) {
        match (self.core.abandoned(self.here()), self.abandoned_since) {
            (false, _) => self.abandoned_since = None,
            (true, None) => self.abandoned_since = Some(now()),
            (true, Some(_)) => {}
        }
    }

    async fn on_deadline(&mut self) {
        let intent = Intent::Deadline {
            abandoned_since: self.abandoned_since,
        };
        if let Ok(decision) = self.core.decide(intent, now()) {
            self.end_by_deadline(decision).await;
        }
    }

    /// Records the end a deadline decided; when the store refuses, tries
    /// again after [`DEADLINE_RETRY`].
    async fn end_by_deadline(&mut self, decision: Decision) {
        if decision.records.is_empty() {
            return;
        }
        match self.record(&decision, None).await {
            Ok(_) => self.deadline_retry = None,
            Err(e) => {
                tracing::error!(room = %self.id, "could not record the end of the match: {e:?}");
                self.deadline_retry = Some(Instant::now() + DEADLINE_RETRY);
            }
        }
        self.update_summary();
    }

    async fn handle(&mut self, cmd: RoomCmd) {
        // A move changes nothing the lobby shows, unless it ends the match.
        let shown_before = self.finished();
        let is_move = matches!(cmd, RoomCmd::Move { .. });
        match cmd {
            RoomCmd::Join {
                outbox,
                id,
                player,
                seat,
                tie,
            } => {
                let token = new_token();
                let intent = Intent::Join {
                    player,
                    seat,
                    token: hash(&token),
                    tie,
                };
                let seated = self.seat(intent, Some(outbox.conn)).await;
                let answer =
                    seated.map(|seat| answer::seated(&id, &self.id, seat, &token, self.snapshot()));
                self.answer_joining(outbox, id, answer).await;
            }
            RoomCmd::Watch { outbox, id, since } => {
                let answer = self.catch_up(None, None, since, &id);
                self.answer_joining(outbox, id, answer).await;
            }
            RoomCmd::Resume {
                outbox,
                id,
                token,
                account,
                tie,
                since,
            } => {
                let answer = match self.check_tie(&token).await {
                    Ok(()) => {
                        self.resume(&outbox, &token, (account, tie), since, &id)
                            .await
                    }
                    Err(refusal) => Err(refusal),
                };
                self.answer_joining(outbox, id, answer).await;
            }
            RoomCmd::CarryOn { outbox, handoff } => self.carry_on(outbox, handoff).await,
            RoomCmd::Move {
                outbox,
                id,
                token,
                mv,
                received,
            } => {
                if let Err(refusal) = self.check_tie(&token).await {
                    self.refuse(&outbox, id, refusal);
                    return;
                }
                let intent = Intent::Move {
                    token: &token,
                    mv: &mv,
                    received: received.into_std(),
                };
                match self.act(intent, (&outbox, &id)).await {
                    Ok(()) => METRICS.observe_move(received.elapsed()),
                    Err(refusal) => self.refuse(&outbox, id, refusal),
                }
            }
            RoomCmd::Resign { outbox, id, token } => {
                let acted = match self.check_tie(&token).await {
                    Ok(()) => {
                        self.act(Intent::Resign { token: &token }, (&outbox, &id))
                            .await
                    }
                    Err(refusal) => Err(refusal),
                };
                if let Err(refusal) = acted {
                    self.refuse(&outbox, id, refusal);
                }
            }
            RoomCmd::Abort { outbox, id, token } => {
                let acted = match self.check_tie(&token).await {
                    Ok(()) => {
                        self.act(Intent::Abort { token: &token }, (&outbox, &id))
                            .await
                    }
                    Err(refusal) => Err(refusal),
                };
                if let Err(refusal) = acted {
                    self.refuse(&outbox, id, refusal);
                }
            }
            RoomCmd::Leave { outbox, id } => {
                self.subscribers.remove(outbox.conn);
                outbox.rooms.exit(&self.id);
                self.drop_conn(outbox.conn).await;
                outbox.send(&ServerMsg::answer(
                    id,
                    ServerBody::Ack {
                        room: Some(self.id.clone()),
                        seq: None,
                    },
                ));
            }
            RoomCmd::Gone { conn } => {
                self.subscribers.remove(conn);
                self.drop_conn(conn).await;
            }
            RoomCmd::Rematch {
                outbox,
                id,
                token,
                ask,
                maker,
            } => self.rematch(outbox, id, &token, ask, maker).await,
            RoomCmd::Reserve {
                player,
                seat,
                house,
                player_token,
                reply,
            } => {
                let token = new_token();
                let intent = Intent::Reserve {
                    player,
                    seat,
                    house,
                    token: hash(&token),
                    player_token,
                };
                let result = self.seat(intent, None).await;
                let _ = reply.send(result.map(|_| token));
            }
            RoomCmd::Rekey { seat, reply } => {
                let token = new_token();
                let decided = self.core.decide(
                    Intent::Rekey {
                        seat,
                        fresh: hash(&token),
                    },
                    now(),
                );
                let result = self.carry_out(decided, None).await;
                let _ = reply.send(result.map(|()| token));
            }
            RoomCmd::ResignSeat { seat } => {
                let decided = self.core.decide(Intent::ResignSeat { seat }, now());
                if let Err(e) = self.carry_out(decided, None).await {
                    tracing::error!(room = %self.id, "could not record a resignation: {e:?}");
                }
            }
        }
        self.note_presence();
        if !is_move || self.finished() != shown_before {
            self.update_summary();
        }
    }

    /// A move, resign or abort: decided, recorded, acknowledged with its
    /// event's number (or refused).
    async fn act(&mut self, intent: Intent<'_>, ack: Ack<'_>) -> Result<(), Refusal> {
        let decision = self.core.decide(intent, now())?;
        if let Some(refusal) = decision.refused.clone() {
            // Too late: the deadline ends the match, and the command is refused.
            self.end_by_deadline(decision).await;
            return Err(refusal);
        }
        self.record(&decision, Some(ack)).await.map(|_| ())
    }

    /// Decided, then recorded without an ack.
    async fn carry_out(
        &mut self,
        decided: Result<Decision, Refusal>,
        ack: Option<Ack<'_>>,
    ) -> Result<(), Refusal> {
        self.record(&decided?, ack).await.map(|_| ())
    }

    /// Takes a seat (for connection `conn`, if any); returns it.
    async fn seat(&mut self, intent: Intent<'_>, conn: Option<ConnId>) -> Result<u8, Refusal> {
        let decision = self.core.decide(intent, now())?;
        self.record(&decision, None).await?;
        let seat = decision.seat.expect("a seat decision names its seat");
        self.holders[seat as usize].extend(conn);
        Ok(seat)
    }

    /// Answers a join, watch or resume, then counts the connection in or not.
    async fn answer_joining(
        &mut self,
        outbox: Outbox,
        id: Option<RequestId>,
        answer: Result<Utf8Bytes, Refusal>,
    ) {
        let ok = answer.is_ok();
        match answer {
            Ok(frame) => {
                outbox.send_answer(frame, id);
            }
            Err(refusal) => self.refuse(&outbox, id, refusal),
        }
        self.after_joining(outbox, ok).await;
    }

    /// After a join, watch, resume or follow: on success the connection gets
    /// this room's events; it counts as a member (entered by the connection
    /// before it sent the command, so a `Gone` always follows) only while the
    /// match runs.
    ///
    /// A connection that was dropped, or began to close, while the command
    /// waited in the queue is let go here, seat and all: once its place is
    /// taken back (or read by its closing task before the room took the
    /// seat), no `Gone` would ever tell the room, and its seat would show
    /// as connected for good.
    async fn after_joining(&mut self, outbox: Outbox, ok: bool) {
        let gone = outbox.is_closed() || outbox.rooms.left();
        // A refusal takes back only a place this command took: a connection
        // already in the room (seated, watching) stays counted, and hears its
        // `Gone` when it closes.
        let refused_newcomer = !ok && !self.subscribers.contains(outbox.conn);
        if refused_newcomer || gone {
            outbox.rooms.exit(&self.id);
        } else if self.finished() {
            outbox.rooms.settle(&self.id);
        }
        if gone {
            self.subscribers.remove(outbox.conn);
            self.drop_conn(outbox.conn).await;
        } else if ok {
            self.subscribers.insert(outbox);
        }
    }

    /// Refuses the seat token `token` when its seat is tied to an account
    /// token that no longer acts (revoked, expired, or its account's
    /// password changed): whoever holds the seat token got it through that
    /// account token. A tournament player's token acts as before, and so
    /// does a token that names no seat (the core refuses it). Untied seats
    /// cost nothing more; a tied one, a hash and a lookup.
    async fn check_tie(&self, token: &str) -> Result<(), Refusal> {
        let Some(accounts) = &self.accounts else {
            return Ok(());
        };
        if token.is_empty() || (self.core.tie(0).is_none() && self.core.tie(1).is_none()) {
            return Ok(());
        }
        let Some(tie) = (0..2u8).find_map(|s| {
            let kept = self.core.kept_token(s)?;
            matches_hash(token, kept).then(|| self.core.tie(s))?
        }) else {
            return Ok(());
        };
        match accounts.token_dead(tie).await {
            None => Ok(()),
            Some(why) => Err((
                ErrorCode::Unauthorized,
                format!(
                    "the account token that took this seat {why}; log in again and resume by account (resume with no seat token) for a new seat token"
                ),
            )),
        }
    }

    fn refuse(&self, outbox: &Outbox, id: Option<RequestId>, (code, message): Refusal) {
        outbox.send(&ServerMsg::error(id, code, message));
    }

    /// Refuses a `since` beyond the last event.
    fn check_since(&self, since: Option<u64>) -> Result<(), Refusal> {
        match since {
            Some(s) if s > self.core.game.seq => Err((
                ErrorCode::BadRequest,
                format!(
                    "since {s} is beyond the last event ({})",
                    self.core.game.seq
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The `watching` answer: the events after `since`, or a snapshot when
    /// `since` is not given — or when the events are older than the room
    /// keeps (`events_in_memory`), or would not fit in one message. The room
    /// never waits on the store for a catch-up: any watcher could stall a
    /// match that way.
    fn catch_up(
        &self,
        seat: Option<u8>,
        token: Option<&str>,
        since: Option<u64>,
        id: &Option<RequestId>,
    ) -> Result<Utf8Bytes, Refusal> {
        self.check_since(since)?;
        let budget = self
            .config
            .limits
            .max_message_bytes
            .saturating_sub(answer_reserve(id));
        let events =
            since.and_then(|since| self.subscribers.after(since, self.core.game.seq, budget));
        Ok(match events {
            Some(events) => answer::watching(id, &self.id, seat, token, None, &events),
            None => answer::watching(id, &self.id, seat, token, Some(self.snapshot()), &[]),
        })
    }

    async fn resume(
        &mut self,
        outbox: &Outbox,
        token: &str,
        (account, tie): (Option<AccountId>, Option<String>),
        since: Option<u64>,
        id: &Option<RequestId>,
    ) -> Result<Utf8Bytes, Refusal> {
        let by = match account {
            Some(account) if token.is_empty() => Resumer::Account(account),
            _ => Resumer::Token(token),
        };
        // Resumed by an account: a new seat token comes back, for the moves
        // (only the old one's hash is kept), tied to the account token the
        // connection resumes with.
        let fresh = new_token();
        let seat = self
            .seat_again(outbox, by, (hash(&fresh), tie), since)
            .await?;
        let seat_token = matches!(by, Resumer::Account(_)).then_some(fresh.as_str());
        self.catch_up(Some(seat), seat_token, since, id)
    }

    /// A client of another node whose room moved here (`RoomCmd::CarryOn`).
    /// One whose connection closed on the way takes nothing: its `Gone`
    /// may have come first, and its seat would stay connected for good.
    async fn carry_on(&mut self, outbox: Outbox, handoff: Handoff) {
        let Handoff { token, since, .. } = handoff;
        if outbox.rooms.left() || outbox.is_closed() {
            self.after_joining(outbox, false).await;
            return;
        }
        let back = match &token {
            Some(kept) => self
                .seat_again(
                    &outbox,
                    Resumer::Kept(kept),
                    (String::new(), None),
                    Some(since),
                )
                .await
                .map(|_| ()),
            None => self.check_since(Some(since)),
        };
        let budget = self.config.limits.max_message_bytes;
        let missed = back
            .ok()
            .and_then(|()| self.subscribers.after(since, self.core.game.seq, budget));
        let ok = match missed {
            Some(events) => {
                for event in events {
                    outbox.send_frame(event_frame(&self.id, &event));
                }
                true
            }
            None => {
                tracing::info!(room = %self.id, conn = outbox.conn, "a moved client could not carry on; it resumes");
                outbox.drop_for(Kick::RoomMoved);
                false
            }
        };
        self.after_joining(outbox, ok).await;
    }

    /// Gives the seat `by` names to `outbox`'s connection, `since` checked
    /// first: the seat. `fresh`: the hash of the seat's new token, when
    /// resumed by account.
    async fn seat_again(
        &mut self,
        outbox: &Outbox,
        by: Resumer<'_>,
        (fresh, tie): (String, Option<String>),
        since: Option<u64>,
    ) -> Result<u8, Refusal> {
        let here = self.here();
        let intent = Intent::Resume {
            by,
            here,
            fresh,
            tie,
        };
        let decision = self.core.decide(intent, now())?;
        // Check `since` before changing anything.
        self.check_since(since)?;
        let seat = decision.seat.expect("a resume names its seat");
        let holders = &mut self.holders[seat as usize];
        let added = !holders.contains(&outbox.conn);
        if added {
            holders.push(outbox.conn);
        }
        // The presence event goes into this answer: a connection that
        // watches already must not hear it live as well.
        let watching = self.subscribers.remove(outbox.conn);
        if let Err(refusal) = self.record(&decision, None).await {
            if added {
                self.holders[seat as usize].retain(|&c| c != outbox.conn);
            }
            if let Some(outbox) = watching {
                self.subscribers.insert(outbox);
            }
            return Err(refusal);
        }
        Ok(seat)
    }

    /// The queue closed and was answered to its end: the server is stopping
    /// (a finished room's linger ends the same way). The players still
    /// connected to a running match are recorded as gone (`presence`), as if
    /// their connections had closed; nobody is told, since every connection
    /// gets the shutdown notice next.
    ///
    /// A client of another node is not leaving: it carries on in the room
    /// on its next node (its node is told where it was, `Outbox::handover`).
    async fn all_gone(&mut self) {
        if self.finished() {
            return;
        }
        let mut moving = Vec::new();
        for outbox in self.subscribers.outboxes() {
            let Some(handover) = &outbox.handover else {
                continue;
            };
            let seat = (0..2u8).find(|&seat| self.holders[seat as usize].contains(&outbox.conn));
            handover.leave(Handoff {
                room: self.id.clone(),
                // Only the token's hash is kept: the room on the next node
                // takes that from this node (`Resumer::Kept`).
                token: seat
                    .and_then(|seat| self.core.kept_token(seat))
                    .map(str::to_owned),
                since: self.core.game.seq,
            });
            moving.push(outbox.conn);
        }
        let conns: Vec<ConnId> = self
            .holders
            .iter()
            .flatten()
            .copied()
            .filter(|conn| !moving.contains(conn))
            .collect();
        self.subscribers = Subscribers::new(self.config.events_in_memory);
        for conn in conns {
            self.drop_conn(conn).await;
        }
    }

    async fn drop_conn(&mut self, conn: ConnId) {
        for seat in 0..2u8 {
            let holders = &mut self.holders[seat as usize];
            let Some(i) = holders.iter().position(|&c| c == conn) else {
                continue;
            };
            holders.remove(i);
            if holders.is_empty() {
                self.withdraw_rematch(WithdrawReason::Left);
                let decided = self.core.decide(Intent::Left { seat }, now());
                if let Err(e) = self.carry_out(decided, None).await {
                    tracing::warn!(room = %self.id, "presence not recorded: {e:?}");
                }
            }
        }
    }

    /// A rematch command: refused, or the offer made, kept, voided, or
    /// agreed, when the new room is made and each player told its seat.
    async fn rematch(
        &mut self,
        outbox: Outbox,
        id: Option<RequestId>,
        token: &str,
        ask: RematchAsk,
        maker: Maker,
    ) {
        // In a room that asked for a house bot, the other seat is the bot's.
        let house = self.bot.is_some();
        let (seat, step) = match self.core.decide_rematch(token, ask, self.here(), house) {
            Ok(decided) => decided,
            Err(refusal) => return self.refuse(&outbox, id, refusal),
        };
        // The offer is void once its player's connections have all gone: a
        // connection that does not hold the seat would never void it.
        if !self.holders[seat as usize].contains(&outbox.conn) {
            return self.refuse(
                &outbox,
                id,
                (
                    ErrorCode::BadRequest,
                    "this connection is not in the room: resume the room first".into(),
                ),
            );
        }
        let ack = |outbox: &Outbox, id| {
            outbox.send_answer(ack_frame(&id, &self.id, None), id);
        };
        match step {
            RematchStep::AlreadyOffered => ack(&outbox, id),
            RematchStep::Offered => {
                self.core.rematch = Some(seat);
                self.rematch_maker = Some(maker);
                ack(&outbox, id);
                self.tell_all(&ServerBody::RematchOffered {
                    room: self.id.clone(),
                    seat,
                    name: self.core.game.seats[seat as usize].name.clone(),
                });
            }
            RematchStep::Withdrawn { offerer, reason } => {
                ack(&outbox, id);
                self.core.rematch = None;
                self.rematch_maker = None;
                self.tell_all(&ServerBody::RematchWithdrawn {
                    room: self.id.clone(),
                    seat: offerer,
                    reason,
                });
            }
            RematchStep::Agreed { offerer } => {
                let standing = self.rematch_maker.take();
                self.core.rematch = None;
                let maker = if offerer == seat {
                    maker
                } else {
                    standing.unwrap_or(maker)
                };
                // Seats swapped: the new seat n is the old seat 1 - n's.
                let house_seat = house.then_some(1 - seat);
                let player = |old: u8| (Some(old) != house_seat).then(|| self.core.player(old));
                let plan = RematchPlan {
                    spec: self.core.game.spec.clone(),
                    clock: self.core.game.clock,
                    listed: self.listed,
                    hints: self.hints,
                    rated: self.rated.is_some(),
                    bot: self.bot,
                    players: [player(1), player(0)],
                };
                match maker.make(plan).await {
                    Ok(made) => {
                        ack(&outbox, id);
                        self.tell_rematched(&made);
                    }
                    Err(refusal) => {
                        self.refuse(&outbox, id, refusal);
                        if offerer != seat {
                            self.tell_all(&ServerBody::RematchWithdrawn {
                                room: self.id.clone(),
                                seat: offerer,
                                reason: WithdrawReason::Failed,
                            });
                        }
                    }
                }
            }
        }
    }

    /// Tells each player of this room its seat in the rematch's room.
    fn tell_rematched(&self, made: &Rematched) {
        for old in 0..2u8 {
            let new = 1 - old;
            let Some(token) = &made.tokens[new as usize] else {
                continue;
            };
            let msg = ServerMsg::notice(ServerBody::RematchReady {
                room: self.id.clone(),
                new_room: made.room.clone(),
                code: made.code.clone(),
                seat: new,
                token: token.clone(),
                opponent: self.core.game.seats[new as usize].name.clone(),
            });
            let holders = &self.holders[old as usize];
            for outbox in self.subscribers.outboxes() {
                if holders.contains(&outbox.conn) {
                    outbox.send(&msg);
                }
            }
        }
    }

    /// Voids a standing rematch offer, and tells everyone why.
    fn withdraw_rematch(&mut self, reason: WithdrawReason) {
        let Some(offerer) = self.core.rematch.take() else {
            return;
        };
        self.rematch_maker = None;
        self.tell_all(&ServerBody::RematchWithdrawn {
            room: self.id.clone(),
            seat: offerer,
            reason,
        });
    }

    /// A notice to everyone in the room, players and spectators.
    fn tell_all(&self, body: &ServerBody) {
        let msg = ServerMsg::notice(body.clone());
        for outbox in self.subscribers.outboxes() {
            outbox.send(&msg);
        }
    }

    /// Makes a decision's records durable (one group commit), applies them,
    /// then acknowledges (`ack`, with the first event's number) and tells
    /// every subscriber. Returns the first event's number.
    async fn record(
        &mut self,
        decision: &Decision,
        ack: Option<Ack<'_>>,
    ) -> Result<Option<u64>, Refusal> {
        let mut ops = Vec::with_capacity(decision.records.len() + 1);
        let mut texts: Vec<Arc<str>> = Vec::with_capacity(decision.records.len());
        for record in &decision.records {
            match record {
                Record::Seat {
                    seat,
                    player,
                    token,
                    house,
                    player_token,
                    tie,
                } => ops.push(WriteOp::Seat {
                    room: self.id.clone(),
                    seat: *seat,
                    player: player.clone(),
                    token: token.clone(),
                    house: *house,
                    player_token: player_token.clone(),
                    tie: tie.clone(),
                }),
                // Serialized once: the store keeps this text and subscribers get it.
                Record::Event(event) => {
                    let json: Arc<str> = serde_json::to_string(event)
                        .map_err(|e| {
                            tracing::error!(room = %self.id, "cannot encode an event: {e}");
                            (
                                ErrorCode::Internal,
                                "the server could not record this".to_string(),
                            )
                        })?
                        .into();
                    ops.push(WriteOp::Event {
                        room: self.id.clone(),
                        seq: event.seq,
                        json: json.clone(),
                        at_ms: now_ms(),
                    });
                    // The result is recorded with the event that announces it, so a
                    // record fetched after the announcement always has it.
                    if let EventBody::Ended { result } = &event.body {
                        ops.push(WriteOp::Finish {
                            room: self.id.clone(),
                            result: *result,
                            finished_at_ms: now_ms(),
                            ratings: Vec::new(),
                        });
                    }
                    texts.push(json);
                }
                Record::Moved(played) => {
                    let json: Arc<str> = played.json().into();
                    ops.push(WriteOp::Event {
                        room: self.id.clone(),
                        seq: played.seq,
                        json: json.clone(),
                        at_ms: now_ms(),
                    });
                    texts.push(json);
                }
            }
        }
        // One decision, one write: all of its records are durable, or none.
        let op = match ops.len() {
            0 => return Ok(None),
            1 => ops.pop().expect("one op"),
            _ => WriteOp::All(ops),
        };
        let (pending, rated) = self.write_rated(op, decision);
        let answer = pending.await;
        if matches!(answer, Ok(Err(StoreError::LeaseLost(_)))) && !self.moved {
            tracing::warn!(room = %self.id, "another node owns the room now; this one lets it go");
            self.moved = true;
        }
        outcome(answer, &self.id)?;
        // The other nodes hear of new ratings once they are stored.
        if let (Some(ratings), false) = (&self.rated, rated.is_empty()) {
            ratings.announce(&rated);
        }
        let at = now();
        for record in &decision.records {
            if let Err(e) = self.core.apply(record, at) {
                // Decided from this very state: cannot happen.
                tracing::error!(room = %self.id, "a decided record did not apply: {e}");
            }
        }
        let frames = texts.iter().map(|t| event_frame(&self.id, t)).collect();
        for text in texts {
            self.subscribers.remember(text);
        }
        let first = decision.first_seq();
        let ack = ack.map(|(outbox, id)| (outbox, ack_frame(id, &self.id, first)));
        self.subscribers.tell(frames, ack);
        if let Some(result) = self.core.game.result.filter(|_| self.finished_at.is_none()) {
            self.on_finished(result);
        }
        Ok(first)
    }

    /// Writes `op`; when it ends a rated game with a winner, with both
    /// players' new ratings in its `Finish`, computed and queued under the
    /// ratings' lock so that a player's games are rated in the order written.
    /// Returns the write and the new ratings (none for any other write).
    fn write_rated(&self, mut op: WriteOp, decision: &Decision) -> (Pending, Vec<RatingRow>) {
        let winner = decision.records.iter().find_map(|record| match record {
            Record::Event(Event {
                body: EventBody::Ended { result },
                ..
            }) => result.winner,
            _ => None,
        });
        let (Some(ratings), Some(winner), [Some(a), Some(b)]) =
            (&self.rated, winner, self.core.accounts())
        else {
            return (self.write(op), Vec::new());
        };
        let seats = &self.core.game.seats;
        let player = |seat: usize, account| Rated {
            account,
            name: seats[seat].name.as_deref().unwrap_or(""),
            kind: seats[seat].player_kind.unwrap_or(PlayerKind::Person),
        };
        let players = [player(0, a), player(1, b)];
        ratings.rate(&self.game, players, winner as usize, |rows| {
            let parts = match &mut op {
                WriteOp::All(ops) => ops.as_mut_slice(),
                one => std::slice::from_mut(one),
            };
            for part in parts {
                if let WriteOp::Finish { ratings, .. } = part {
                    ratings.clone_from(&rows);
                    break;
                }
            }
            (self.write(op), rows)
        })
    }

    /// The match has just ended.
    fn on_finished(&mut self, result: MatchResult) {
        self.finished_at = Some(Instant::now());
        if let Some(on_end) = &self.on_end {
            on_end(&self.id, result);
        }
        // A finished match no longer counts against anyone's room limit;
        // the room still hears who goes (a rematch offer is void then).
        for outbox in self.subscribers.outboxes() {
            outbox.rooms.settle(&self.id);
        }
    }

    fn seat_info(&self, seat: usize) -> SeatInfo {
        if !self.core.seated(seat as u8) {
            return no_seat();
        }
        SeatInfo {
            name: self.core.game.seats[seat].name.clone(),
            connected: !self.holders[seat].is_empty(),
            player_kind: self.core.game.seats[seat].player_kind,
        }
    }

    fn snapshot(&self) -> SnapshotView<'_> {
        let game = &self.core.game;
        SnapshotView {
            room: &self.id,
            code: &self.code,
            spec: &game.spec,
            position: game.position.to_json(),
            seats: [self.seat_info(0), self.seat_info(1)],
            moves: game.moves(),
            to_move: game.to_move(),
            clock: game.clock,
            clocks_ms: game.clocks_at(now()),
            result: game.result,
            seq: game.seq,
            hints: self.hints,
            rated: self.rated.is_some(),
            bot: self.bot,
        }
    }

    fn update_summary(&self) {
        let game = &self.core.game;
        let state = if game.result.is_some() {
            RoomState::Finished
        } else if game.started {
            RoomState::Playing
        } else {
            RoomState::Open
        };
        let summary = RoomSummary {
            room: self.id.clone(),
            code: self.code.clone(),
            game: self.game.clone(),
            name: self.name.clone(),
            description: self.description.clone(),
            seats: [self.seat_info(0), self.seat_info(1)],
            state,
            clock: game.clock,
            bot: self.bot,
            hints: self.hints,
            rated: self.rated.is_some(),
            // Filled in by the lobby, which knows the ratings.
            ratings: [None, None],
            tournament: self.tournament.clone(),
        };
        if let Ok(mut s) = self.summary.lock() {
            *s = Listing {
                summary,
                accounts: self.core.accounts(),
            };
        }
        self.counted.set(state);
    }
}

/// What an answer takes besides its events: the envelope and the request id
/// (which a client may make as long as a frame allows).
fn answer_reserve(id: &Option<RequestId>) -> usize {
    4096 + id
        .as_ref()
        .and_then(|id| serde_json::to_string(id).ok())
        .map_or(0, |text| text.len())
}

fn no_seat() -> SeatInfo {
    SeatInfo {
        name: None,
        connected: false,
        player_kind: None,
    }
}
