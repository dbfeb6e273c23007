//! One task per room owns its match: the position, the seats, the clocks and the
//! event log. Commands arrive over a channel; nothing about a match sits behind
//! a lock that the network path contends on.
//!
//! Every state change becomes an event with the next sequence number. An event
//! is made durable in the store *before* anyone hears of it, so whatever a
//! player saw acknowledged survives a restart.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use grundy_protocol::wire::MAX_DESCRIPTION;
use grundy_protocol::wire::{
    Clock, EndReason, ErrorCode, Event, EventBody, MatchResult, RequestId, RoomSummary, SeatInfo,
    ServerMsg, Snapshot,
};
use grundy_protocol::{Outcome, Position, Rules, Status, Strategy};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::config::Config;
use crate::outbox::{encode, ConnId, Frames, Outbox};
use crate::store::{MatchStore, WriteOp};
use crate::task::{committed, sleep_until, Ending, OnExit, Pending};

/// How long a room waits before it tries again to record the end of a match
/// that a deadline ended, after the store refused it.
const DEADLINE_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

/// What a connection asks of a room. Answers go straight to `outbox`, in order
/// with the room's events.
pub enum RoomCmd {
    Join {
        outbox: Outbox,
        id: Option<RequestId>,
        name: Option<String>,
        seat: Option<u8>,
    },
    Watch {
        outbox: Outbox,
        id: Option<RequestId>,
        since: Option<u64>,
    },
    Resume {
        outbox: Outbox,
        id: Option<RequestId>,
        token: String,
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
    /// The connection closed.
    Gone { conn: ConnId },
    /// A tournament seats a player who has no connection here yet, or the
    /// server its house bot (`house`); they come with `resume` and the token.
    Reserve {
        name: String,
        seat: u8,
        /// The seat is the house bot's: recorded so, it gets a bot back after
        /// a restart.
        house: bool,
        reply: oneshot::Sender<Result<String, Refusal>>,
    },
    /// A tournament asks for a seat's token (to tell its player again).
    SeatToken {
        seat: u8,
        reply: oneshot::Sender<Option<String>>,
    },
    /// A tournament resigns for a player who withdrew.
    ResignSeat { seat: u8 },
}

/// Told the result when a match ends (a tournament's games report this way).
pub type EndHook = Box<dyn Fn(&str, MatchResult) + Send + Sync>;

struct Seat {
    name: Option<String>,
    token: String,
    /// Connections acting for this seat right now.
    conns: Vec<ConnId>,
}

/// Everything needed to start (or restart) a room's task.
pub struct RoomInit {
    pub id: String,
    pub code: String,
    pub spec: Value,
    pub start: Position,
    pub clock: Option<Clock>,
    pub listed: bool,
    /// The house bot level the creator asked for.
    pub bot: Option<String>,
    /// The tournament this game belongs to: a no-show then loses the game
    /// rather than calling it off, and nobody may abort.
    pub tournament: Option<String>,
    pub on_end: Option<EndHook>,
}

pub struct Room {
    id: String,
    code: String,
    spec: Value,
    /// The game's name and the start in a few words, for the lobby.
    name: String,
    description: String,
    listed: bool,
    bot: Option<String>,
    tournament: Option<String>,
    on_end: Option<EndHook>,
    clock: Option<Clock>,
    position: Position,
    seats: [Option<Seat>; 2],
    /// Each move as JSON text (a `Value` tree would take about ten times the
    /// memory, and they are read back only for a snapshot), at most
    /// `max_moves` of them and `max_record_bytes` (plus the last) in all.
    moves: Vec<Box<str>>,
    moves_bytes: usize,
    /// The last events as the text that was stored and sent, for a quick
    /// catch-up; a client further behind gets a snapshot, so a room's memory
    /// does not grow with its event log.
    recent_events: VecDeque<Arc<str>>,
    /// The sequence number of the last event.
    seq: u64,
    subscribers: HashMap<ConnId, Outbox>,
    /// Each player's bank (ms) as of `turn_started`.
    banks: [u64; 2],
    turn_started: Option<Instant>,
    /// Since when the room has been abandoned (None while someone is here):
    /// before the start, no seat has a connection; in an untimed match, the
    /// player to move has none.
    abandoned_since: Option<Instant>,
    /// After a deadline's end could not be recorded: the next try, not sooner
    /// (a failing store is not asked again in a tight loop).
    deadline_retry: Option<Instant>,
    /// When the match ended (the room stays in memory for `linger` after).
    finished_at: Option<Instant>,
    result: Option<MatchResult>,
    store: Arc<dyn MatchStore>,
    config: Arc<Config>,
    summary: Arc<Mutex<RoomSummary>>,
}

pub type Refusal = (ErrorCode, String);

/// Where to acknowledge a command: the sender's outbox and its request id.
type Ack<'a> = (&'a Outbox, &'a Option<RequestId>);

fn refuse<T>(code: ErrorCode, message: impl Into<String>) -> Result<T, Refusal> {
    Err((code, message.into()))
}

/// Unix time in milliseconds, for the records.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Room {
    pub fn new(init: RoomInit, store: Arc<dyn MatchStore>, config: Arc<Config>) -> Room {
        let bank = init.clock.map_or(0, |c| c.initial_ms);
        let room = Room {
            id: init.id,
            code: init.code,
            name: grundy_protocol::names::spec_name(&init.spec).to_string(),
            description: grundy_protocol::names::describe_spec(&init.spec, MAX_DESCRIPTION),
            spec: init.spec,
            listed: init.listed,
            bot: init.bot,
            tournament: init.tournament,
            on_end: init.on_end,
            clock: init.clock,
            position: init.start,
            seats: [None, None],
            moves: Vec::new(),
            moves_bytes: 0,
            recent_events: VecDeque::new(),
            seq: 0,
            subscribers: HashMap::new(),
            banks: [bank, bank],
            turn_started: None,
            abandoned_since: Some(Instant::now()),
            deadline_retry: None,
            finished_at: None,
            result: None,
            store,
            config,
            summary: Arc::new(Mutex::new(RoomSummary {
                room: String::new(),
                code: String::new(),
                game: String::new(),
                name: String::new(),
                description: String::new(),
                seats: [no_seat(), no_seat()],
                state: String::new(),
                clock: None,
                bot: None,
                ratings: [None, None],
                tournament: None,
            })),
        };
        room.update_summary();
        room
    }

    /// The lobby's view of this room, kept current by the room's task.
    pub fn summary(&self) -> Arc<Mutex<RoomSummary>> {
        self.summary.clone()
    }

    pub fn listed(&self) -> bool {
        self.listed
    }

    pub fn finished(&self) -> bool {
        self.result.is_some()
    }

    /// Rebuilds a room from its stored seats and event log (after a restart).
    /// Clocks resume from the banks of the last move: downtime is not charged.
    /// Returns the write that completes the record, when the log ended the
    /// match but the record did not say so: wait for it before serving.
    pub fn restore(
        &mut self,
        seats: [Option<(Option<String>, String)>; 2],
        events: Vec<Event>,
    ) -> Result<Option<Pending>, String> {
        for (i, seat) in seats.into_iter().enumerate() {
            self.seats[i] = seat.map(|(name, token)| Seat {
                name,
                token,
                conns: Vec::new(),
            });
        }
        for event in &events {
            match &event.body {
                EventBody::Started => self.turn_started = Some(Instant::now()),
                EventBody::Moved { mv, clocks_ms, .. } => {
                    let m = self
                        .position
                        .parse_move(mv)
                        .map_err(|e| format!("stored move {mv} unreadable: {e}"))?;
                    self.position
                        .play(&m)
                        .map_err(|e| format!("stored move {mv} illegal: {e}"))?;
                    self.push_move(mv.to_string());
                    self.banks = *clocks_ms;
                    self.turn_started = Some(Instant::now());
                }
                EventBody::Ended { result } => self.result = Some(*result),
                EventBody::Seated { .. } | EventBody::Presence { .. } => {}
            }
        }
        let keep = events.len().saturating_sub(self.config.events_in_memory);
        for event in &events[keep..] {
            let text = serde_json::to_string(event)
                .map_err(|e| format!("cannot encode a stored event: {e}"))?;
            self.remember(text.into());
        }
        self.seq = events.len() as u64;
        self.update_summary();
        // The log ends the match but the record does not say so (a crash
        // between the two commits): the result is written again, and the room
        // lingers like any finished one.
        Ok(self.result.map(|result| {
            self.finished_at = Some(Instant::now());
            self.store.write(WriteOp::Finish {
                room: self.id.clone(),
                result,
                finished_at_ms: now_ms(),
            })
        }))
    }

    /// The room's task: commands, and the clock's deadline. `on_finish` runs
    /// once the match has ended, `on_exit` when the task ends.
    pub async fn run(
        mut self,
        mut commands: mpsc::Receiver<RoomCmd>,
        on_finish: impl FnOnce(),
        on_exit: impl FnOnce(),
    ) {
        let _on_exit = OnExit::new(on_exit);
        let mut ending = Ending::new(on_finish);
        loop {
            let deadline = self
                .deadline()
                .map(|(at, _)| self.deadline_retry.map_or(at, |retry| retry.max(at)));
            let linger = ending.linger_until(self.finished_at, self.config.linger);
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    Some(cmd) => self.handle(cmd).await,
                    None => break,
                },
                _ = sleep_until(deadline) => {
                    // Commands read before the deadline may still be queued (a
                    // move in time, a player coming back): they count first. A
                    // move read too late ends the match itself (`play`).
                    for _ in 0..commands.len() {
                        let Ok(cmd) = commands.try_recv() else { break };
                        self.handle(cmd).await;
                    }
                    if self.deadline().is_some_and(|(at, _)| at <= Instant::now()) {
                        self.on_deadline().await;
                    }
                }
                _ = sleep_until(linger) => ending.close(&mut commands),
            }
        }
    }

    fn to_move(&self) -> u8 {
        (self.moves.len() % 2) as u8
    }

    fn started(&self) -> bool {
        self.turn_started.is_some()
    }

    /// When the side to move runs out of time (or of patience for a first move).
    fn deadline(&self) -> Option<(Instant, EndReason)> {
        if self.result.is_some() {
            return None;
        }
        // Nobody here, and no clock that will end it: call it off in time, so
        // forgotten rooms do not pile up.
        let abandoned = self
            .abandoned_since
            .filter(|_| self.clock.is_none() || !self.started())
            .map(|since| (since + self.config.abandon, EndReason::Abort));
        let timed = self.clock_deadline();
        match (abandoned, timed) {
            (Some(a), Some(t)) => Some(if a.0 < t.0 { a } else { t }),
            (a, t) => a.or(t),
        }
    }

    /// The flag (or no-show) deadline of a timed match in progress.
    fn clock_deadline(&self) -> Option<(Instant, EndReason)> {
        self.clock?;
        let started = self.turn_started?;
        let s = self.to_move() as usize;
        let flag = started + std::time::Duration::from_millis(self.banks[s]);
        // A player's first move is the one at ply 0 or 1.
        if self.moves.len() < 2 {
            let no_show = started + self.config.no_show;
            if no_show < flag {
                return Some((no_show, EndReason::NoShow));
            }
        }
        Some((flag, EndReason::Flag))
    }

    /// Keeps `abandoned_since` current. Once an untimed match runs, only the
    /// player to move matters: a house bot waiting forever for a person who left
    /// must not keep the room alive.
    fn note_presence(&mut self) {
        let anyone = if self.started() && self.clock.is_none() {
            self.seat_connected(self.to_move())
        } else {
            (0..2).any(|s| self.seat_connected(s))
        };
        match (anyone, self.abandoned_since) {
            (true, _) => self.abandoned_since = None,
            (false, None) => self.abandoned_since = Some(Instant::now()),
            (false, Some(_)) => {}
        }
    }

    async fn on_deadline(&mut self) {
        let Some((_, reason)) = self.deadline() else {
            return;
        };
        let winner = match reason {
            // A tournament game has to produce a result: a no-show loses it.
            EndReason::NoShow if self.tournament.is_some() => Some(1 - self.to_move()),
            EndReason::NoShow | EndReason::Abort => None,
            _ => Some(1 - self.to_move()),
        };
        match self.finish(MatchResult { winner, reason }, None).await {
            Ok(_) => self.deadline_retry = None,
            Err(e) => {
                tracing::error!(room = %self.id, "could not record the end of the match: {e:?}");
                self.deadline_retry = Some(Instant::now() + DEADLINE_RETRY);
            }
        }
        self.update_summary();
    }

    /// Both banks as of now.
    fn clocks_now(&self) -> [u64; 2] {
        self.clocks_at(Instant::now())
    }

    /// Both banks as of `at`: the running one charged from its turn's start
    /// (nothing for a moment before it).
    fn clocks_at(&self, at: Instant) -> [u64; 2] {
        let mut banks = self.banks;
        if let (Some(t), None, Some(_)) = (self.turn_started, self.result, self.clock) {
            let s = self.to_move() as usize;
            let spent = at.saturating_duration_since(t).as_millis() as u64;
            banks[s] = banks[s].saturating_sub(spent);
        }
        banks
    }

    async fn handle(&mut self, cmd: RoomCmd) {
        // A move changes nothing the lobby shows, unless it ends the match.
        let shown_before = self.result.is_some();
        let is_move = matches!(cmd, RoomCmd::Move { .. });
        match cmd {
            RoomCmd::Join {
                outbox,
                id,
                name,
                seat,
            } => {
                let result = self.join(&outbox, name, seat).await;
                let ok = result.is_ok();
                self.answer(&outbox, id, result, |(seat, token, snapshot), id| {
                    ServerMsg::Seated {
                        id,
                        room: snapshot.room.clone(),
                        seat,
                        token,
                        snapshot,
                    }
                });
                self.after_joining(outbox, ok);
            }
            RoomCmd::Watch { outbox, id, since } => {
                let result = self.catch_up(since, answer_reserve(&id));
                let room = self.id.clone();
                let ok = result.is_ok();
                self.answer(&outbox, id, result, |(snapshot, events), id| {
                    ServerMsg::Watching {
                        id,
                        room,
                        seat: None,
                        snapshot,
                        events,
                    }
                });
                self.after_joining(outbox, ok);
            }
            RoomCmd::Resume {
                outbox,
                id,
                token,
                since,
            } => {
                let reserve = answer_reserve(&id);
                let result = self.resume(&outbox, &token, since, reserve).await;
                let room = self.id.clone();
                let ok = result.is_ok();
                self.answer(&outbox, id, result, |(seat, (snapshot, events)), id| {
                    ServerMsg::Watching {
                        id,
                        room,
                        seat: Some(seat),
                        snapshot,
                        events,
                    }
                });
                self.after_joining(outbox, ok);
            }
            RoomCmd::Move {
                outbox,
                id,
                token,
                mv,
                received,
            } => {
                let result = self.play(&token, mv, received, (&outbox, &id)).await;
                self.refusal(&outbox, id, result);
            }
            RoomCmd::Resign { outbox, id, token } => {
                let result = self.resign(&token, (&outbox, &id)).await;
                self.refusal(&outbox, id, result);
            }
            RoomCmd::Abort { outbox, id, token } => {
                let result = self.abort(&token, (&outbox, &id)).await;
                self.refusal(&outbox, id, result);
            }
            RoomCmd::Leave { outbox, id } => {
                self.subscribers.remove(&outbox.conn);
                outbox.rooms.exit(&self.id);
                self.drop_conn(outbox.conn).await;
                self.ack(&outbox, id, Ok(None));
            }
            RoomCmd::Gone { conn } => {
                self.subscribers.remove(&conn);
                self.drop_conn(conn).await;
            }
            RoomCmd::Reserve {
                name,
                seat,
                house,
                reply,
            } => {
                let result = self.take_seat(Some(name), Some(seat), None, house).await;
                let _ = reply.send(result.map(|(_, token)| token));
            }
            RoomCmd::SeatToken { seat, reply } => {
                let token = self
                    .seats
                    .get(seat as usize)
                    .and_then(|s| s.as_ref())
                    .map(|s| s.token.clone());
                let _ = reply.send(token);
            }
            RoomCmd::ResignSeat { seat } => {
                if self.result.is_none() && seat < 2 {
                    let result = MatchResult {
                        winner: Some(1 - seat),
                        reason: EndReason::Resign,
                    };
                    if let Err(e) = self.finish(result, None).await {
                        tracing::error!(room = %self.id, "could not record a resignation: {e:?}");
                    }
                }
            }
        }
        self.note_presence();
        if !is_move || self.result.is_some() != shown_before {
            self.update_summary();
        }
    }

    /// After a join, watch or resume: on success the connection gets this
    /// room's events; it counts as a member (entered by the connection before it
    /// sent the command, so a `Gone` always follows) only while the match runs.
    fn after_joining(&mut self, outbox: Outbox, ok: bool) {
        // A refusal takes back only a place this command took: a connection
        // already in the room (seated, watching) stays counted, and hears its
        // `Gone` when it closes.
        let refused_newcomer = !ok && !self.subscribers.contains_key(&outbox.conn);
        if refused_newcomer || self.result.is_some() || outbox.is_closed() {
            outbox.rooms.exit(&self.id);
        }
        if ok && !outbox.is_closed() {
            self.subscribers.insert(outbox.conn, outbox);
        }
    }

    fn answer<T>(
        &self,
        outbox: &Outbox,
        id: Option<RequestId>,
        result: Result<T, Refusal>,
        ok: impl FnOnce(T, Option<RequestId>) -> ServerMsg,
    ) {
        let msg = match result {
            Ok(value) => ok(value, id),
            Err((code, message)) => ServerMsg::error(id, code, message),
        };
        outbox.send(&msg);
    }

    fn ack(&self, outbox: &Outbox, id: Option<RequestId>, result: Result<Option<u64>, Refusal>) {
        let room = Some(self.id.clone());
        self.answer(outbox, id, result, |seq, id| ServerMsg::Ack {
            id,
            room,
            seq,
        });
    }

    /// Answers a command whose success was acknowledged already (before its event).
    fn refusal(&self, outbox: &Outbox, id: Option<RequestId>, result: Result<(), Refusal>) {
        if let Err((code, message)) = result {
            outbox.send(&ServerMsg::error(id, code, message));
        }
    }

    /// The seat a token acts for.
    fn seat_of(&self, token: &str) -> Result<u8, Refusal> {
        if token.is_empty() {
            return refuse(ErrorCode::Unauthorized, "a seat token is required");
        }
        (0..2u8)
            .find(|&s| {
                self.seats[s as usize]
                    .as_ref()
                    .is_some_and(|seat| constant_time_eq(seat.token.as_bytes(), token.as_bytes()))
            })
            .map_or_else(
                || {
                    refuse(
                        ErrorCode::Unauthorized,
                        "that seat token is not valid in this room",
                    )
                },
                Ok,
            )
    }

    async fn join(
        &mut self,
        outbox: &Outbox,
        name: Option<String>,
        seat: Option<u8>,
    ) -> Result<(u8, String, Snapshot), Refusal> {
        if self.tournament.is_some() {
            return refuse(
                ErrorCode::RoomFull,
                "this is a tournament game: its players are seated by the tournament",
            );
        }
        let (seat, token) = self.take_seat(name, seat, Some(outbox.conn), false).await?;
        Ok((seat, token, self.snapshot()))
    }

    /// Seats a player (connected through `conn`, if any; the house bot when
    /// `house`) and starts the match once both seats are taken; returns the
    /// seat and its new token.
    async fn take_seat(
        &mut self,
        name: Option<String>,
        seat: Option<u8>,
        conn: Option<ConnId>,
        house: bool,
    ) -> Result<(u8, String), Refusal> {
        if self.result.is_some() {
            return refuse(ErrorCode::MatchOver, "the match is over; watch it instead");
        }
        let seat = match seat {
            Some(s @ (0 | 1)) if self.seats[s as usize].is_none() => s,
            Some(s @ (0 | 1)) => return refuse(ErrorCode::RoomFull, format!("seat {s} is taken")),
            Some(s) => {
                return refuse(
                    ErrorCode::BadRequest,
                    format!("seat must be 0 or 1, not {s}"),
                )
            }
            None => match (0..2u8).find(|&s| self.seats[s as usize].is_none()) {
                Some(s) => s,
                None => return refuse(ErrorCode::RoomFull, "both seats are taken"),
            },
        };
        let token = uuid::Uuid::new_v4().simple().to_string();
        let seat_op = WriteOp::Seat {
            room: self.id.clone(),
            seat,
            name: name.clone(),
            token: token.clone(),
            house,
        };
        let mut events = vec![EventBody::Seated {
            seat,
            name: name.clone(),
        }];
        let other = self.seats[1 - seat as usize].is_some();
        if other {
            events.push(EventBody::Started);
        }
        // The seat and its events go to the store together (one group commit).
        self.append_all(vec![seat_op], events, None).await?;
        self.seats[seat as usize] = Some(Seat {
            name,
            token: token.clone(),
            conns: conn.into_iter().collect(),
        });
        if other {
            self.turn_started = Some(Instant::now());
        }
        Ok((seat, token))
    }

    /// Refuses a `since` beyond the last event.
    fn check_since(&self, since: Option<u64>) -> Result<(), Refusal> {
        match since {
            Some(s) if s > self.seq => refuse(
                ErrorCode::BadRequest,
                format!("since {s} is beyond the last event ({})", self.seq),
            ),
            _ => Ok(()),
        }
    }

    /// The events after `since`, or a snapshot when `since` is not given — or
    /// when the events are older than the room keeps (`events_in_memory`),
    /// or would not fit in one message (`max_message_bytes` less `reserve`,
    /// what the rest of the answer takes). The room never waits on the store
    /// for a catch-up: any watcher could stall a match that way.
    fn catch_up(
        &self,
        since: Option<u64>,
        reserve: usize,
    ) -> Result<(Option<Snapshot>, Vec<Event>), Refusal> {
        self.check_since(since)?;
        let snapshot = || Ok((Some(self.snapshot()), Vec::new()));
        let Some(since) = since else {
            return snapshot();
        };
        let first_in_memory = self.seq - self.recent_events.len() as u64;
        if since < first_in_memory {
            return snapshot();
        }
        let wanted = self
            .recent_events
            .range((since - first_in_memory) as usize..);
        let bytes: usize = wanted.clone().map(|t| t.len()).sum();
        if bytes > self.config.limits.max_message_bytes.saturating_sub(reserve) {
            return snapshot();
        }
        wanted
            .map(|text| serde_json::from_str(text))
            .collect::<Result<_, _>>()
            .map(|events| (None, events))
            .map_err(|e| {
                tracing::error!(room = %self.id, "cannot read back an event: {e}");
                read_failed()
            })
    }

    /// `reserve`: what the rest of the answer takes (see `catch_up`).
    async fn resume(
        &mut self,
        outbox: &Outbox,
        token: &str,
        since: Option<u64>,
        reserve: usize,
    ) -> Result<(u8, (Option<Snapshot>, Vec<Event>)), Refusal> {
        let seat = self.seat_of(token)?;
        // Check `since` before changing anything.
        self.check_since(since)?;
        let was_connected = self.seat_connected(seat);
        let added = match self.seats[seat as usize].as_mut() {
            Some(s) if !s.conns.contains(&outbox.conn) => {
                s.conns.push(outbox.conn);
                true
            }
            _ => false,
        };
        // The presence event goes into this answer: a connection that
        // watches already must not hear it live as well.
        let watching = self.subscribers.remove(&outbox.conn);
        if !was_connected && self.result.is_none() {
            let appended = self
                .append(EventBody::Presence {
                    seat,
                    connected: true,
                })
                .await;
            if let Err(refusal) = appended {
                if let (true, Some(s)) = (added, self.seats[seat as usize].as_mut()) {
                    s.conns.retain(|&c| c != outbox.conn);
                }
                if let Some(outbox) = watching {
                    self.subscribers.insert(outbox.conn, outbox);
                }
                return Err(refusal);
            }
        }
        Ok((seat, self.catch_up(since, reserve)?))
    }

    fn seat_connected(&self, seat: u8) -> bool {
        self.seats[seat as usize]
            .as_ref()
            .is_some_and(|s| !s.conns.is_empty())
    }

    async fn drop_conn(&mut self, conn: ConnId) {
        for seat in 0..2u8 {
            let Some(s) = self.seats[seat as usize].as_mut() else {
                continue;
            };
            let before = s.conns.len();
            s.conns.retain(|&c| c != conn);
            if before > 0 && s.conns.is_empty() && self.result.is_none() {
                if let Err(e) = self
                    .append(EventBody::Presence {
                        seat,
                        connected: false,
                    })
                    .await
                {
                    tracing::warn!(room = %self.id, "presence not recorded: {e:?}");
                }
            }
        }
    }

    async fn play(
        &mut self,
        token: &str,
        mv: Value,
        received: Instant,
        ack: Ack<'_>,
    ) -> Result<(), Refusal> {
        let seat = self.seat_of(token)?;
        if self.result.is_some() {
            return refuse(ErrorCode::MatchOver, "the match is over");
        }
        if !self.started() {
            return refuse(
                ErrorCode::NotYourTurn,
                "the match has not started: waiting for an opponent",
            );
        }
        if seat != self.to_move() {
            return refuse(ErrorCode::NotYourTurn, "it is your opponent's turn");
        }
        let m = self
            .position
            .parse_move(&mv)
            .map_err(|e| (ErrorCode::IllegalMove, e.to_string()))?;
        let mut next = self.position.clone();
        next.play(&m)
            .map_err(|e| (ErrorCode::IllegalMove, e.to_string()))?;
        // A move read after the flag fell (or, for a first move, after the
        // no-show limit) loses; one read in time is charged up to its
        // arrival, however long it then waited in the room's queue.
        if let Some((at, reason)) = self.clock_deadline() {
            if received >= at {
                self.on_deadline().await;
                return refuse(
                    ErrorCode::MatchOver,
                    match reason {
                        EndReason::NoShow => "your first move came too late (no-show)",
                        _ => "your time ran out",
                    },
                );
            }
        }
        let mut clocks = self.clocks_at(received);
        if let Some(clock) = self.clock {
            clocks[seat as usize] += clock.increment_ms;
        }
        let canonical = serde_json::to_value(&m).unwrap_or(mv);
        let position = next.to_json();
        let position = if json_fits(&position, self.config.max_event_position_bytes) {
            position
        } else {
            Value::Null
        };
        self.append_acked(
            EventBody::Moved {
                seat,
                mv: canonical.clone(),
                clocks_ms: clocks,
                position,
            },
            Some(ack),
        )
        .await?;
        self.position = next;
        self.push_move(canonical.to_string());
        self.banks = clocks;
        self.turn_started = Some(Instant::now());
        let to_move = self.to_move();
        let limits = &self.config.limits;
        let end = if let Status::Over { to_move_wins } = self.position.status() {
            let winner = if to_move_wins { to_move } else { 1 - to_move };
            Some((winner, EndReason::Rules))
        } else if self.moves.len() >= limits.max_moves as usize
            || self.moves_bytes >= limits.max_record_bytes
        {
            // Long enough: the theory decides, as perfect play from here would.
            let winner = match self.position.outcome() {
                Outcome::N => to_move,
                Outcome::P => 1 - to_move,
            };
            Some((winner, EndReason::MoveLimit))
        } else {
            None
        };
        if let Some((winner, reason)) = end {
            self.finish(
                MatchResult {
                    winner: Some(winner),
                    reason,
                },
                None,
            )
            .await?;
        }
        Ok(())
    }

    async fn resign(&mut self, token: &str, ack: Ack<'_>) -> Result<(), Refusal> {
        let seat = self.seat_of(token)?;
        if self.result.is_some() {
            return refuse(ErrorCode::MatchOver, "the match is over");
        }
        let result = if self.started() {
            MatchResult {
                winner: Some(1 - seat),
                reason: EndReason::Resign,
            }
        } else {
            // Nobody to lose to yet: resigning an unstarted match calls it off.
            MatchResult {
                winner: None,
                reason: EndReason::Abort,
            }
        };
        self.finish(result, Some(ack)).await
    }

    async fn abort(&mut self, token: &str, ack: Ack<'_>) -> Result<(), Refusal> {
        let seat = self.seat_of(token)?;
        if self.result.is_some() {
            return refuse(ErrorCode::MatchOver, "the match is over");
        }
        if self.tournament.is_some() {
            return refuse(
                ErrorCode::TooLate,
                "a tournament game cannot be called off; resign instead (or withdraw from the tournament)",
            );
        }
        // A player may call the match off until they have made their first move.
        if self.moves.len() > seat as usize {
            return refuse(
                ErrorCode::TooLate,
                "a match can be aborted only before your first move; resign instead",
            );
        }
        self.finish(
            MatchResult {
                winner: None,
                reason: EndReason::Abort,
            },
            Some(ack),
        )
        .await
    }

    async fn finish(&mut self, result: MatchResult, ack: Option<Ack<'_>>) -> Result<(), Refusal> {
        self.banks = self.clocks_now();
        self.append_acked(EventBody::Ended { result }, ack).await?;
        self.result = Some(result);
        self.finished_at = Some(Instant::now());
        if let Some(on_end) = &self.on_end {
            on_end(&self.id, result);
        }
        // A finished match no longer counts against anyone's room limit.
        for outbox in self.subscribers.values() {
            outbox.rooms.exit(&self.id);
        }
        Ok(())
    }

    /// Records the next event, then tells every subscriber.
    async fn append(&mut self, body: EventBody) -> Result<u64, Refusal> {
        self.append_acked(body, None).await
    }

    /// Records the next event; acknowledges the command that caused it (so its
    /// sender hears "ack" before the event), then tells every subscriber.
    async fn append_acked(
        &mut self,
        body: EventBody,
        ack: Option<Ack<'_>>,
    ) -> Result<u64, Refusal> {
        self.append_all(Vec::new(), vec![body], ack).await
    }

    /// Records `ops`, then the next events, all queued at once so that one
    /// group commit takes them; then acknowledges (with the last event's
    /// number) and tells every subscriber. Returns the last event's number.
    async fn append_all(
        &mut self,
        mut ops: Vec<WriteOp>,
        bodies: Vec<EventBody>,
        ack: Option<Ack<'_>>,
    ) -> Result<u64, Refusal> {
        let mut events: Vec<Arc<str>> = Vec::with_capacity(bodies.len());
        let mut frames = Vec::with_capacity(bodies.len());
        for body in bodies {
            let seq = self.seq + events.len() as u64 + 1;
            let event = Event { seq, body };
            // Serialized once: the store keeps this text and subscribers get it.
            let json: Arc<str> = serde_json::to_string(&event)
                .map_err(|e| {
                    tracing::error!(room = %self.id, "cannot encode an event: {e}");
                    (
                        ErrorCode::Internal,
                        "the server could not record this".to_string(),
                    )
                })?
                .into();
            frames.push(event_frame(&self.id, &json));
            ops.push(WriteOp::Event {
                room: self.id.clone(),
                seq,
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
                });
            }
            events.push(json);
        }
        let seq = self.seq + events.len() as u64;
        let pending: Vec<_> = ops.into_iter().map(|op| self.store.write(op)).collect();
        for done in pending {
            committed(done, &self.id).await?;
        }
        self.seq = seq;
        for event in events {
            self.remember(event);
        }
        // The sender of the command hears its ack first; when one event
        // follows, the two go to its connection together (one write).
        let mut acked = None;
        if let Some((outbox, id)) = ack {
            let ack = encode(&ServerMsg::Ack {
                id: id.clone(),
                room: Some(self.id.clone()),
                seq: Some(seq),
            });
            match (&frames[..], self.subscribers.contains_key(&outbox.conn)) {
                ([event], true) => {
                    if outbox.send_frames(Frames::Two(Box::new((ack, event.clone())))) {
                        acked = Some(outbox.conn);
                    }
                }
                _ => {
                    outbox.send_frame(ack);
                }
            }
        }
        for frame in frames {
            self.subscribers
                .retain(|conn, outbox| Some(*conn) == acked || outbox.send_frame(frame.clone()));
        }
        Ok(seq)
    }

    fn seat_info(&self, seat: usize) -> SeatInfo {
        match &self.seats[seat] {
            Some(s) => SeatInfo {
                name: s.name.clone(),
                connected: !s.conns.is_empty(),
            },
            None => no_seat(),
        }
    }

    pub fn snapshot(&self) -> Snapshot {
        let playing = self.started() && self.result.is_none();
        Snapshot {
            room: self.id.clone(),
            code: self.code.clone(),
            spec: self.spec.clone(),
            position: self.position.to_json(),
            seats: [self.seat_info(0), self.seat_info(1)],
            moves: self
                .moves
                .iter()
                .map(|m| {
                    serde_json::from_str(m).unwrap_or_else(|e| {
                        tracing::error!(room = %self.id, "cannot read back a move: {e}");
                        Value::Null
                    })
                })
                .collect(),
            to_move: playing.then(|| self.to_move()),
            clock: self.clock,
            clocks_ms: self.clocks_now(),
            result: self.result,
            seq: self.seq,
        }
    }

    /// Keeps an event for a quick catch-up (the oldest kept one goes).
    fn remember(&mut self, event: Arc<str>) {
        if self.recent_events.len() >= self.config.events_in_memory {
            self.recent_events.pop_front();
        }
        if self.config.events_in_memory > 0 {
            self.recent_events.push_back(event);
        }
    }

    fn push_move(&mut self, mv: String) {
        self.moves_bytes += mv.len();
        self.moves.push(mv.into());
    }

    fn update_summary(&self) {
        let state = if self.result.is_some() {
            "finished"
        } else if self.started() {
            "playing"
        } else {
            "open"
        };
        let summary = RoomSummary {
            room: self.id.clone(),
            code: self.code.clone(),
            game: self.position.family().id().to_string(),
            name: self.name.clone(),
            description: self.description.clone(),
            seats: [self.seat_info(0), self.seat_info(1)],
            state: state.to_string(),
            clock: self.clock,
            bot: self.bot.clone(),
            // Filled in by the lobby, which knows the ratings.
            ratings: [None, None],
            tournament: self.tournament.clone(),
        };
        if let Ok(mut s) = self.summary.lock() {
            *s = summary;
        }
    }
}

/// Whether `value` serializes to at most `limit` bytes: counts without
/// building the text, and stops at the limit.
fn json_fits(value: &Value, limit: usize) -> bool {
    struct Count {
        left: usize,
    }
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.left = self
                .left
                .checked_sub(buf.len())
                .ok_or_else(|| std::io::Error::other("over the limit"))?;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(&mut Count { left: limit }, value).is_ok()
}

/// `{"type":"event","room":ROOM,"event":EVENT}` (as `ServerMsg::Event`
/// serializes) around an event already serialized.
fn event_frame(room: &str, event_json: &str) -> Utf8Bytes {
    let room = serde_json::Value::from(room);
    Utf8Bytes::from(format!(
        r#"{{"type":"event","room":{room},"event":{event_json}}}"#
    ))
}

/// What an answer takes besides its events: the envelope and the request id
/// (which a client may make as long as a frame allows).
fn answer_reserve(id: &Option<RequestId>) -> usize {
    4096 + id
        .as_ref()
        .and_then(|id| serde_json::to_string(id).ok())
        .map_or(0, |text| text.len())
}

fn read_failed() -> Refusal {
    (
        ErrorCode::Internal,
        "the server could not read its log".into(),
    )
}

fn no_seat() -> SeatInfo {
    SeatInfo {
        name: None,
        connected: false,
    }
}

/// Compares secrets without leaking where they differ through timing.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_event_frame_is_what_serde_writes_for_the_message() {
        let event = Event {
            seq: 7,
            body: EventBody::Moved {
                seat: 1,
                mv: json!({"heap": 0, "take": 2}),
                clocks_ms: [1, 2],
                position: json!({"game": "nim", "heaps": [1, "\"quoted\""]}),
            },
        };
        let json = serde_json::to_string(&event).unwrap();
        let expected = crate::outbox::encode(&ServerMsg::Event {
            room: "r\"1".into(),
            event,
        });
        assert_eq!(event_frame("r\"1", &json), expected);
    }

    #[test]
    fn json_fits_counts_exactly() {
        let v = json!({"heaps": [1, 2, 3]});
        let len = v.to_string().len();
        assert!(json_fits(&v, len));
        assert!(!json_fits(&v, len - 1));
        assert!(!json_fits(&v, 0));
    }
}
