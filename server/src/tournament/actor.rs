//! One task per tournament: registration, the start, pairing each round,
//! creating its games' rooms, collecting their results, the standings, and
//! telling players and watchers. Like a room, it makes every event durable
//! before anyone hears of it, and a restart rebuilds it from its event log.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use grundy_protocol::wire::{
    EndReason, ErrorCode, MatchResult, PlayerKind, RequestId, ServerBody, ServerMsg,
    TournamentEvent, TournamentEventBody, TournamentGame, TournamentStatus, TournamentSummary,
};
use grundy_protocol::Position;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::state::{Core, Registrant, Step};
use crate::config::Config;
use crate::lobby::{Lobby, RoomSetup};
use crate::outbox::{encode, ConnId, Kick, Outbox};
use crate::player::Player;
use crate::ratings::{Rated, RatedGame, Ratings};
use crate::refusal::{refuse, Refusal};
use crate::room::{EndHook, RoomCmd, RoomTx};
use crate::store::{now_ms, Lease, MatchStore, RatingRow, StoreError, WriteOp};
use crate::task::{outcome, sleep_until, Ending, OnExit, Pending};

/// Where a command's `ack` goes: its connection's outbox and its request id.
type Ack<'a> = (&'a Outbox, Option<RequestId>);

/// How long to wait before trying again after a failed step (a full server,
/// a failed write).
const RETRY: Duration = Duration::from_secs(1);

/// In a cluster, how often a tournament reads the results of its games that
/// another node's rooms play (after a takeover split them from it).
const POLL_REMOTE_GAMES: Duration = Duration::from_secs(1);

/// What a connection asks of a tournament. Answers go to `outbox`.
pub enum TournamentCmd {
    /// `entrant`: who registers (name, kind, account), as the connection
    /// proved it.
    Register {
        outbox: Outbox,
        id: Option<RequestId>,
        entrant: Player,
    },
    Rejoin {
        outbox: Outbox,
        id: Option<RequestId>,
        token: String,
    },
    Withdraw {
        outbox: Outbox,
        id: Option<RequestId>,
        token: String,
    },
    Start {
        outbox: Outbox,
        id: Option<RequestId>,
        token: String,
    },
    Watch {
        outbox: Outbox,
        id: Option<RequestId>,
        since: Option<u64>,
    },
    Get {
        outbox: Outbox,
        id: Option<RequestId>,
        /// Only this round's pairings and games.
        round: Option<u32>,
    },
    /// Hear the events from now on, without an answer (the creator).
    Subscribe { outbox: Outbox },
    /// The connection closed.
    Gone { conn: ConnId },
    /// This node lost its lease: another node may own the tournament now.
    LetGo,
}

/// A game's room reporting its result.
pub type GameEnd = (String, MatchResult);

/// Everything a tournament task shares with the server.
#[derive(Clone)]
pub struct Services {
    pub lobby: Arc<Lobby>,
    pub store: Arc<dyn MatchStore>,
    pub ratings: Arc<Ratings>,
    pub config: Arc<Config>,
    /// Game rooms on other nodes of a cluster.
    pub elsewhere: RoomsElsewhere,
}

/// How a tournament resigns a seat in a game room another node of its
/// cluster holds (set by the bus; without one, nothing is elsewhere).
#[derive(Clone, Default)]
pub struct RoomsElsewhere(Arc<OnceLock<ResignElsewhere>>);

/// Resigns seat `seat` of room `room`, wherever in the cluster it is.
pub type ResignElsewhere = Box<dyn Fn(String, u8) + Send + Sync>;

impl RoomsElsewhere {
    pub fn reach_with(&self, resign: ResignElsewhere) {
        let _ = self.0.set(resign);
    }

    fn resign(&self, room: &str, seat: u8) {
        if let Some(resign) = self.0.get() {
            resign(room.to_owned(), seat);
        }
    }
}

pub struct Tournament {
    core: Core,
    /// The owner token's hash (`secret::hash`).
    owner_token: String,
    /// Each player's connections (they hear `your_game`).
    player_conns: HashMap<u32, Vec<Outbox>>,
    watchers: HashMap<ConnId, Outbox>,
    /// Seat tokens of the games started since this task began, in memory
    /// only (the store keeps their hashes): for older games a returning
    /// player is told their own tournament token, which acts for the seat.
    seat_tokens: HashMap<String, [String; 2]>,
    results: mpsc::UnboundedSender<GameEnd>,
    services: Services,
    summary: Arc<Mutex<TournamentSummary>>,
    retry_at: Option<Instant>,
    /// Game results that could not be recorded yet, with their rating rows
    /// (tried again on retry).
    unsettled: Vec<(String, MatchResult, Vec<RatingRow>)>,
    /// A round's rating period, computed (and applied in memory) but not yet
    /// recorded: its `round_ended` write failed, and is tried again with
    /// these same rows, never rated twice.
    round_ratings: Option<(u32, Vec<RatingRow>)>,
    /// A restart's check of the running games could not read the store.
    reconcile_pending: bool,
    /// Since when nobody has followed a tournament that has not started: after
    /// `abandon` it ends, so forgotten tournaments do not pile up.
    abandoned_since: Option<Instant>,
    finished_at: Option<Instant>,
    /// This node's lease on the tournament, in a cluster: every write carries it.
    lease: Option<Lease>,
    /// A write was refused for the lease: another node owns the tournament
    /// now, and this task answers what is queued and ends.
    moved: bool,
    /// When to read again the results of games another node plays.
    poll_at: Option<Instant>,
}

/// Whether a game ended this way is rated: by the rules, a resignation, a
/// flag, or a no-show (a player who does not move must not keep a rating a
/// lost game would cost); not a forfeit (a withdrawn player's game, never
/// begun).
fn played(reason: EndReason) -> bool {
    matches!(
        reason,
        EndReason::Rules | EndReason::Resign | EndReason::Flag | EndReason::NoShow
    )
}

/// Whether a game is being played in its room.
fn in_play(game: &TournamentGame) -> bool {
    game.result.is_none() && game.room.is_some()
}

/// A game whose room is gone without a result cannot be played on: nobody
/// wins it.
fn abandoned() -> MatchResult {
    MatchResult {
        winner: None,
        reason: EndReason::Abort,
    }
}

/// The hook a game's room calls with its result.
pub fn end_hook(results: mpsc::UnboundedSender<GameEnd>) -> EndHook {
    Box::new(move |room, result| {
        let _ = results.send((room.to_string(), result));
    })
}

impl Tournament {
    pub fn new(
        core: Core,
        owner_token: String,
        results: mpsc::UnboundedSender<GameEnd>,
        services: Services,
        lease: Option<Lease>,
    ) -> Tournament {
        let summary = Arc::new(Mutex::new(core.summary()));
        Tournament {
            core,
            owner_token,
            player_conns: HashMap::new(),
            watchers: HashMap::new(),
            seat_tokens: HashMap::new(),
            results,
            services,
            summary,
            retry_at: None,
            unsettled: Vec::new(),
            round_ratings: None,
            reconcile_pending: false,
            abandoned_since: None,
            finished_at: None,
            lease,
            moved: false,
            poll_at: None,
        }
    }

    pub fn id(&self) -> &str {
        &self.core.id
    }

    pub fn summary(&self) -> Arc<Mutex<TournamentSummary>> {
        self.summary.clone()
    }

    fn rating(&self) -> impl Fn(&Registrant) -> Option<f64> + '_ {
        |p| self.services.ratings.of(&self.core.game, p.account)
    }

    /// The task: commands, game results, and retries. `on_finish` is called
    /// once, when the tournament has finished (and lingers); `on_exit` when
    /// the task ends.
    pub async fn run(
        mut self,
        mut commands: mpsc::Receiver<TournamentCmd>,
        mut results: mpsc::UnboundedReceiver<GameEnd>,
        on_finish: impl FnOnce(),
        on_exit: impl FnOnce(),
    ) {
        let _on_exit = OnExit::new(on_exit);
        let mut ending = Ending::new(on_finish);
        if self.core.status == TournamentStatus::Finished {
            self.finished_at = Some(Instant::now());
        }
        self.note_followers();
        self.reconcile().await;
        self.advance().await;
        loop {
            let linger = ending.linger_until(self.finished_at, self.services.config.linger);
            let abandon = self
                .abandoned_since
                .map(|since| since + self.services.config.abandon);
            tokio::select! {
                cmd = commands.recv() => match cmd {
                    Some(cmd) => self.handle(cmd).await,
                    None => break,
                },
                Some((room, result)) = results.recv() => self.game_ended(&room, result).await,
                _ = sleep_until(self.poll_at) => self.poll_results().await,
                _ = sleep_until(self.retry_at) => {
                    self.retry_at = None;
                    if self.reconcile_pending {
                        self.reconcile().await;
                    }
                    for (room, result, rows) in std::mem::take(&mut self.unsettled) {
                        self.settle(&room, result, rows).await;
                    }
                    self.advance().await;
                }
                _ = sleep_until(linger) => ending.close(&mut commands),
                _ = sleep_until(abandon) => self.abandon().await,
            }
            self.note_followers();
            if let Ok(mut s) = self.summary.lock() {
                *s = self.core.summary();
            }
            let playing = || self.core.games.iter().any(in_play);
            if self.lease.is_some() && self.poll_at.is_none() && !self.moved && playing() {
                self.poll_at = Some(Instant::now() + POLL_REMOTE_GAMES);
            }
            if self.moved && !commands.is_closed() {
                // What is queued still gets its answer (the same refusal),
                // then everyone following is disconnected, to rejoin where
                // the tournament is now.
                commands.close();
                self.retry_at = None;
                self.poll_at = None;
                for outbox in self.watchers.values() {
                    outbox.drop_for(Kick::TournamentMoved);
                }
            }
        }
    }

    /// Keeps `abandoned_since` current: set while a tournament that has not
    /// started has nobody following it.
    fn note_followers(&mut self) {
        self.abandoned_since = match (self.core.status, self.watchers.is_empty()) {
            (TournamentStatus::Registering, true) => {
                Some(self.abandoned_since.unwrap_or_else(Instant::now))
            }
            _ => None,
        };
    }

    /// Nobody has followed this tournament since it was opened (or since the
    /// last one left), and it never started: it ends.
    async fn abandon(&mut self) {
        if self.core.status != TournamentStatus::Registering {
            self.abandoned_since = None;
            return;
        }
        let standings = self.core.standings(self.rating());
        let body = TournamentEventBody::Finished {
            standings,
            ended_early: Some("abandoned: nobody started it or followed it".into()),
        };
        match self.record(body).await {
            Ok(_) => self.finished_at = Some(Instant::now()),
            Err((_, message)) => {
                tracing::warn!(tournament = %self.core.id, "could not end it: {message}");
                self.abandoned_since = Some(Instant::now());
            }
        }
    }

    /// After a restart: a game whose room finished while this tournament was
    /// not listening (or whose room could not be brought back) is settled
    /// from the store; a game of a player who withdrew is resigned for them
    /// again (the resignation may not have been recorded before the
    /// restart). A store that cannot be read is tried again later. In a
    /// cluster, see [`poll_results`](Self::poll_results).
    async fn reconcile(&mut self) {
        self.reconcile_pending = false;
        if self.lease.is_some() {
            return self.poll_results().await;
        }
        for game in self.running_games() {
            let Some(room) = game.room.clone() else {
                continue;
            };
            if self.resign_withdrawn(&game) {
                continue;
            }
            let store = self.services.store.clone();
            let key = room.clone();
            let read = tokio::task::spawn_blocking(move || store.record(&key)).await;
            let result = match read {
                Ok(Ok(Some(record))) => record.result.unwrap_or_else(abandoned),
                Ok(Ok(None)) => abandoned(),
                Ok(Err(e)) => {
                    tracing::warn!(tournament = %self.core.id, room, "cannot read the game: {e}");
                    self.reconcile_pending = true;
                    self.retry_at = Some(Instant::now() + RETRY);
                    continue;
                }
                Err(_) => {
                    self.reconcile_pending = true;
                    self.retry_at = Some(Instant::now() + RETRY);
                    continue;
                }
            };
            self.game_ended(&room, result).await;
        }
    }

    /// The games being played, with their rooms.
    fn running_games(&self) -> Vec<TournamentGame> {
        self.core
            .games
            .iter()
            .filter(|g| in_play(g))
            .cloned()
            .collect()
    }

    /// Resigns the seats of withdrawn players in `game`'s room, here or on
    /// the node of the cluster that holds it (again: a resignation may have
    /// been lost in a restart or a takeover; a room refuses a second one).
    /// Whether the room is here.
    fn resign_withdrawn(&self, game: &TournamentGame) -> bool {
        let Some(room) = game.room.as_deref() else {
            return false;
        };
        let here = self.services.lobby.find(room);
        for (seat, &player) in game.players.iter().enumerate() {
            if self.core.players[player as usize].withdrawn {
                self.resign_seat(room, here.as_ref().map(|(_, tx)| tx), seat as u8);
            }
        }
        here.is_some()
    }

    /// Resigns `seat` in `room`: through `here`, its queue on this node, or
    /// on the node that holds it.
    fn resign_seat(&self, room: &str, here: Option<&RoomTx>, seat: u8) {
        match here {
            Some(tx) => {
                let _ = tx.try_send(RoomCmd::ResignSeat { seat });
            }
            None if self.lease.is_some() => self.services.elsewhere.resign(room, seat),
            None => {}
        }
    }

    /// In a cluster, every [`POLL_REMOTE_GAMES`] while games are played: the
    /// results of all of them, in one read of the store. A game's room may be
    /// on another node (taken over apart from this tournament), or here
    /// without the way to report to it (brought back before the tournament
    /// was): either way its result is in the store. The seats of withdrawn
    /// players in rooms here are resigned (again: a resignation may have
    /// been lost in a takeover; a room refuses a second one).
    async fn poll_results(&mut self) {
        self.poll_at = None;
        let running = self.running_games();
        if running.is_empty() {
            return;
        }
        for game in &running {
            self.resign_withdrawn(game);
        }
        let rooms: Vec<String> = running.iter().filter_map(|g| g.room.clone()).collect();
        let store = self.services.store.clone();
        let asked = rooms.clone();
        let read = tokio::task::spawn_blocking(move || match store.cluster() {
            Some(cluster) => cluster.results_of(asked),
            None => Ok(Vec::new()),
        })
        .await;
        self.poll_at = Some(Instant::now() + POLL_REMOTE_GAMES);
        let found = match read {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => {
                return tracing::warn!(tournament = %self.core.id, "cannot read its games: {e}")
            }
            Err(_) => return,
        };
        let stored: HashSet<&str> = found.iter().map(|(room, _)| room.as_str()).collect();
        // A room the store does not have cannot be played on: nobody wins it.
        let missing: Vec<(String, MatchResult)> = rooms
            .iter()
            .filter(|room| !stored.contains(room.as_str()))
            .map(|room| (room.clone(), abandoned()))
            .collect();
        let ended = found
            .iter()
            .filter_map(|(room, result)| Some((room.clone(), (*result)?)))
            .chain(missing)
            .collect::<Vec<_>>();
        for (room, result) in ended {
            self.game_ended(&room, result).await;
        }
    }

    async fn handle(&mut self, cmd: TournamentCmd) {
        match cmd {
            TournamentCmd::Register {
                outbox,
                id,
                entrant,
            } => {
                let result = self.register(&outbox, entrant).await;
                self.answer_registered(&outbox, id, result);
            }
            TournamentCmd::Rejoin { outbox, id, token } => {
                let result = match self.core.player_of(&token) {
                    Some(player) => {
                        self.subscribe(&outbox, Some(player));
                        Ok((player, token.clone()))
                    }
                    None => refuse(
                        ErrorCode::Unauthorized,
                        "that player token is not valid in this tournament",
                    ),
                };
                let ok = result.as_ref().ok().map(|(p, _)| *p);
                self.answer_registered(&outbox, id, result);
                if let Some(player) = ok {
                    self.tell_running_game(player, token);
                }
            }
            TournamentCmd::Withdraw { outbox, id, token } => {
                if let Err((code, message)) = self.withdraw(&token, (&outbox, id.clone())).await {
                    outbox.send(&ServerMsg::error(id, code, message));
                }
                self.advance().await;
            }
            TournamentCmd::Start { outbox, id, token } => {
                if let Err((code, message)) = self.start(&token, (&outbox, id.clone())).await {
                    outbox.send(&ServerMsg::error(id, code, message));
                }
                self.advance().await;
            }
            TournamentCmd::Watch { outbox, id, since } => {
                let msg = match since {
                    None => Ok((Some(self.core.state(self.rating())), Vec::new())),
                    Some(s) if s > self.core.seq() => refuse(
                        ErrorCode::BadRequest,
                        format!("since {s} is beyond the last event ({})", self.core.seq()),
                    ),
                    Some(s) => Ok((None, self.core.events[s as usize..].to_vec())),
                };
                match msg {
                    Ok((state, events)) => {
                        outbox.send(&ServerMsg::answer(
                            id,
                            ServerBody::TournamentWatching {
                                tournament: self.core.id.clone(),
                                state,
                                events,
                            },
                        ));
                        self.subscribe(&outbox, None);
                    }
                    Err((code, message)) => {
                        self.refused(&outbox);
                        outbox.send(&ServerMsg::error(id, code, message));
                    }
                }
            }
            TournamentCmd::Get { outbox, id, round } => {
                let mut state = self.core.state(self.rating());
                let answer = match round.map(|round| state.keep_asked_round(round)) {
                    Some(Err(why)) => ServerMsg::error(id, ErrorCode::BadRequest, why),
                    _ => ServerMsg::answer(id, ServerBody::Tournament { state }),
                };
                outbox.send(&answer);
            }
            TournamentCmd::Subscribe { outbox } => self.subscribe(&outbox, None),
            TournamentCmd::Gone { conn } => {
                self.watchers.remove(&conn);
                for conns in self.player_conns.values_mut() {
                    conns.retain(|o| o.conn != conn);
                }
            }
            TournamentCmd::LetGo => {
                if !self.moved {
                    tracing::warn!(tournament = %self.core.id, "this node lost its lease; it lets the tournament go");
                    self.moved = true;
                }
            }
        }
    }

    /// A refused register, rejoin or watch: the connection does not count
    /// this tournament unless it already follows it.
    fn refused(&self, outbox: &Outbox) {
        if !self.watchers.contains_key(&outbox.conn) {
            outbox.tournaments.exit(&self.core.id);
        }
    }

    fn subscribe(&mut self, outbox: &Outbox, player: Option<u32>) {
        if self.core.status == TournamentStatus::Finished {
            // A finished tournament counts against nobody's limit.
            outbox.tournaments.exit(&self.core.id);
        }
        self.watchers.insert(outbox.conn, outbox.clone());
        if let Some(p) = player {
            let conns = self.player_conns.entry(p).or_default();
            if !conns.iter().any(|o| o.conn == outbox.conn) {
                conns.push(outbox.clone());
            }
        }
    }

    fn answer_registered(
        &self,
        outbox: &Outbox,
        id: Option<RequestId>,
        result: Result<(u32, String), Refusal>,
    ) {
        if result.is_err() {
            self.refused(outbox);
        }
        let msg = match result {
            Ok((player, token)) => ServerMsg::answer(
                id,
                ServerBody::Registered {
                    tournament: self.core.id.clone(),
                    player,
                    token,
                    state: self.core.state(self.rating()),
                },
            ),
            Err((code, message)) => ServerMsg::error(id, code, message),
        };
        outbox.send(&msg);
    }

    async fn register(
        &mut self,
        outbox: &Outbox,
        entrant: Player,
    ) -> Result<(u32, String), Refusal> {
        let name = entrant.name.clone().unwrap_or_default();
        match self.core.status {
            TournamentStatus::Registering => {}
            TournamentStatus::Running => {
                return refuse(
                    ErrorCode::RegistrationClosed,
                    "registration is closed: the tournament has started",
                )
            }
            TournamentStatus::Finished => {
                return refuse(
                    ErrorCode::RegistrationClosed,
                    "registration is closed: the tournament is over",
                )
            }
        }
        if self.core.settings.rated && entrant.account.is_none() {
            return refuse(
                ErrorCode::AccountRequired,
                "this tournament is rated: only accounts may play in it (say hello with a token)",
            );
        }
        if self.core.players.iter().any(|p| p.name == name) {
            return refuse(
                ErrorCode::AlreadyRegistered,
                format!("a player named {name:?} is registered already"),
            );
        }
        let here = self
            .player_conns
            .iter()
            .find_map(|(p, conns)| conns.iter().any(|o| o.conn == outbox.conn).then_some(*p));
        if let Some(p) = here {
            return refuse(
                ErrorCode::AlreadyRegistered,
                format!("this connection is registered already, as player {p}"),
            );
        }
        // Withdrawn players count here too: registering and withdrawing in a
        // loop must not grow the tournament without end.
        let most = self.services.config.limits.tournament_players;
        if self.core.players.len() as u32 >= most {
            return refuse(
                ErrorCode::TournamentFull,
                format!("the tournament has taken {most} registrations (tournament_players)"),
            );
        }
        let max = self.core.settings.max_players.unwrap_or(u32::MAX);
        if self.core.active().count() as u32 >= max {
            return refuse(
                ErrorCode::TournamentFull,
                format!("the tournament has its {max} players"),
            );
        }
        let player = self.core.players.len() as u32;
        let token = crate::secret::new_token();
        let body = TournamentEventBody::Registered {
            player,
            name: name.clone(),
            player_kind: entrant.kind,
        };
        let event = self.next_event(body);
        let done = self.store(WriteOp::TournamentEvent {
            tournament: self.core.id.clone(),
            event: event.clone(),
            at_ms: now_ms(),
            // Only its hash is kept: the player alone has the token.
            player_token: Some(crate::secret::hash(&token)),
            player_account: entrant.account,
            ratings: Vec::new(),
        });
        self.committed(done).await?;
        self.core.players.push(Registrant {
            name,
            token: crate::secret::hash(&token),
            withdrawn: false,
            kind: entrant.kind,
            account: entrant.account,
        });
        self.publish(event);
        self.subscribe(outbox, Some(player));
        Ok((player, token))
    }

    /// Withdraws the player of `token`; `ack` hears the command's `ack`.
    async fn withdraw(&mut self, token: &str, ack: Ack<'_>) -> Result<(), Refusal> {
        let Some(player) = self.core.player_of(token) else {
            return refuse(
                ErrorCode::Unauthorized,
                "that player token is not valid in this tournament",
            );
        };
        if self.core.status == TournamentStatus::Finished {
            return refuse(ErrorCode::TournamentOver, "the tournament is over");
        }
        if self.core.players[player as usize].withdrawn {
            return refuse(ErrorCode::TournamentOver, "you have withdrawn already");
        }
        self.record_answering(
            TournamentEventBody::Withdrawn { player },
            Vec::new(),
            Some(ack),
        )
        .await?;
        // The game in progress is lost by resignation; the room reports it.
        if let Some(game) = self.core.running_game_of(player) {
            let seat = game.players.iter().position(|&p| p == player);
            if let (Some(room), Some(seat)) = (game.room.clone(), seat) {
                match self.services.lobby.find(&room) {
                    Some((_, tx)) => {
                        let _ = tx.send(RoomCmd::ResignSeat { seat: seat as u8 }).await;
                    }
                    None => self.resign_seat(&room, None, seat as u8),
                }
            }
        }
        Ok(())
    }

    /// Starts the tournament for its owner; `ack` hears the command's `ack`.
    async fn start(&mut self, token: &str, ack: Ack<'_>) -> Result<(), Refusal> {
        if !crate::secret::matches_hash(token, &self.owner_token) {
            return refuse(
                ErrorCode::Unauthorized,
                "only the creator (with the owner token) may start the tournament",
            );
        }
        if self.core.status != TournamentStatus::Registering {
            return refuse(ErrorCode::RegistrationClosed, "the tournament has started");
        }
        let players = self.core.active().count();
        if players < 2 {
            return refuse(
                ErrorCode::BadRequest,
                format!("a tournament needs at least 2 players; it has {players}"),
            );
        }
        let most = super::pairing::round_robin_rounds(players);
        let rounds = self.core.settings.rounds.map_or(most, |r| r.min(most));
        self.record_answering(
            TournamentEventBody::Started { rounds },
            Vec::new(),
            Some(ack),
        )
        .await
        .map(|_| ())
    }

    /// Does every step that can be done now: pair, start games, forfeit,
    /// close rounds, finish. A step that fails is tried again after [`RETRY`].
    async fn advance(&mut self) {
        loop {
            let step = if self.core.pairing_due() {
                // Pairing a large Swiss is a search: off the reactor, so that
                // no match waits for it.
                let core = self.core.clone();
                match tokio::task::spawn_blocking(move || core.next_step()).await {
                    Ok(step) => step,
                    Err(e) => {
                        tracing::error!(tournament = %self.core.id, "pairing failed: {e}");
                        self.retry_at = Some(Instant::now() + RETRY);
                        return;
                    }
                }
            } else {
                self.core.next_step()
            };
            let done = match step {
                Step::Wait => return,
                Step::PairRound {
                    round,
                    pairings,
                    bye,
                } => self
                    .record(TournamentEventBody::RoundStarted {
                        round,
                        pairings,
                        bye,
                    })
                    .await
                    .map(|_| ()),
                Step::StartGame {
                    round,
                    players,
                    spec,
                } => self.start_game(round, players, spec).await,
                Step::Forfeit(game_ended) => self.record(game_ended).await.map(|_| ()),
                Step::EndRound { round } => self.end_round(round).await,
                Step::Finish { ended_early } => {
                    let standings = self.core.standings(self.rating());
                    let body = TournamentEventBody::Finished {
                        standings,
                        ended_early,
                    };
                    let done = self.record(body).await.map(|_| ());
                    if done.is_ok() {
                        self.finished_at = Some(Instant::now());
                    }
                    done
                }
            };
            if let Err((_, message)) = done {
                tracing::warn!(tournament = %self.core.id, "step failed ({message}); retrying");
                self.retry_at = Some(Instant::now() + RETRY);
                return;
            }
        }
    }

    /// Opens the game's room with both players seated, records it, and tells
    /// both players their seat.
    async fn start_game(
        &mut self,
        round: u32,
        players: [u32; 2],
        spec: Value,
    ) -> Result<(), Refusal> {
        let parsed = {
            let spec = spec.clone();
            tokio::task::spawn_blocking(move || Position::from_spec(&spec)).await
        };
        let start = match parsed {
            Ok(Ok(p)) => p,
            Ok(Err(e)) => return refuse(ErrorCode::BadSpec, format!("start refused: {e}")),
            Err(_) => return refuse(ErrorCode::Internal, "reading the start failed"),
        };
        // Each player's tournament token acts for their seat too (the room
        // gets its hash): how a player who comes back to the tournament is
        // told their game after this task forgot its seat tokens.
        let entrants = players.map(|p| {
            let p = &self.core.players[p as usize];
            let player = Player {
                name: Some(p.name.clone()),
                kind: p.kind,
                account: p.account,
            };
            (player, Some(p.token.clone()))
        });
        let setup = RoomSetup {
            spec,
            start,
            clock: self.core.settings.clock,
            listed: true,
            bot: None,
            hints: false,
            // The tournament rates its games itself (a round at a time).
            rated: false,
            tournament: Some((self.core.id.clone(), end_hook(self.results.clone()))),
            slot: None,
        };
        let (room, tokens) = self.services.lobby.create_seated(setup, entrants).await?;
        self.record(TournamentEventBody::GameStarted {
            round,
            room: room.clone(),
            players,
        })
        .await?;
        for seat in 0..2 {
            self.tell_game(
                players[seat],
                round,
                &room,
                seat as u8,
                tokens[seat].clone(),
                players[1 - seat],
            );
        }
        self.seat_tokens.insert(room, tokens);
        Ok(())
    }

    fn tell_game(
        &mut self,
        player: u32,
        round: u32,
        room: &str,
        seat: u8,
        token: String,
        opponent: u32,
    ) {
        let opponent = &self.core.players[opponent as usize];
        let msg = ServerMsg::notice(ServerBody::YourGame {
            tournament: self.core.id.clone(),
            round,
            room: room.to_string(),
            seat,
            token,
            opponent: opponent.name.clone(),
            opponent_kind: opponent.kind,
        });
        if let Some(conns) = self.player_conns.get_mut(&player) {
            conns.retain(|o| o.send(&msg));
        }
    }

    /// Tells a player who came back (with their tournament token, `token`)
    /// about their game in progress. The seat's token is known only to the
    /// task that started the game (the store keeps its hash): otherwise the
    /// player's tournament token, which acts for their seat, is theirs.
    fn tell_running_game(&mut self, player: u32, token: String) {
        let Some(game) = self.core.running_game_of(player).cloned() else {
            return;
        };
        let (Some(room), Some(seat)) = (
            game.room.clone(),
            game.players.iter().position(|&p| p == player),
        ) else {
            return;
        };
        let token = match self.seat_tokens.get(&room) {
            Some(tokens) => tokens[seat].clone(),
            None => token,
        };
        let opponent = game.players[1 - seat];
        self.tell_game(player, game.round, &room, seat as u8, token, opponent);
    }

    /// A game's room reported its result: record it and move on. A
    /// tournament from before rating periods were rounds rates the game now,
    /// if it was played out; the others rate it with its round.
    async fn game_ended(&mut self, room: &str, result: MatchResult) {
        let Some(game) = self.running_game(room) else {
            return; // reported twice (after a restart), or not ours
        };
        let event = self.next_event(self.game_end(&game, room, result));
        let rated_now = self.core.settings.rated && !self.core.rated_by_round;
        let (done, rows) = match (rated_now, played(result.reason), result.winner) {
            (true, true, Some(seat)) => {
                let rated = game.players.map(|p| {
                    let p = &self.core.players[p as usize];
                    p.account.map(|account| Rated {
                        account,
                        name: &p.name,
                        kind: p.kind.unwrap_or(PlayerKind::Person),
                    })
                });
                // The new ratings are computed once and queued for the store
                // under the ratings' lock (so a player's rows are written in
                // the order they were computed); a failed write keeps them
                // with the result, to be written again as they are.
                match rated {
                    // Only accounts register in a rated tournament; a game
                    // of one restored from before accounts rates nobody.
                    [Some(a), Some(b)] => {
                        self.services
                            .ratings
                            .rate(&self.core.game, [a, b], seat as usize, |rows| {
                                (self.write(&event, rows.clone()), rows)
                            })
                    }
                    _ => (self.write(&event, Vec::new()), Vec::new()),
                }
            }
            _ => (self.write(&event, Vec::new()), Vec::new()),
        };
        self.settled(room, result, event, done, rows).await;
    }

    /// Closes a round: records `round_ended` with the standings and, in a
    /// rated tournament, the round's rating period: every game of the round
    /// played out between two accounts, rated together against the ratings
    /// from before the round, so the order in which they ended decides
    /// nothing. The new ratings go in the same op as the event (a crash
    /// loses or repeats neither: until `round_ended` is recorded, the round
    /// is rated by nobody, and the restart rates it); a write that fails is
    /// tried again with the same rows.
    async fn end_round(&mut self, round: u32) -> Result<(), Refusal> {
        let kept = match self.round_ratings.take() {
            Some((r, rows)) if r == round => Some(rows),
            _ => None,
        };
        let (event, done, rows) = match kept {
            // Rated already (in memory): the standings read the new ratings.
            Some(rows) => {
                let standings = self.core.standings(self.rating());
                let event = self.next_event(TournamentEventBody::RoundEnded { round, standings });
                let done = self.write(&event, rows.clone());
                (event, done, rows)
            }
            None => self.rate_round(round),
        };
        match self.committed(done).await {
            Ok(()) => {
                self.services.ratings.announce(&rows);
                self.publish(event);
                Ok(())
            }
            Err(refused) => {
                if !rows.is_empty() {
                    self.round_ratings = Some((round, rows));
                }
                Err(refused)
            }
        }
    }

    /// Rates round `round` (nothing if the tournament is unrated, or rates
    /// game by game) and queues its `round_ended` event with the new rows,
    /// under the ratings' lock, so that a player's rows reach the store in
    /// the order they were computed.
    fn rate_round(&self, round: u32) -> (TournamentEvent, Pending, Vec<RatingRow>) {
        let players = &self.core.players;
        let rated = |p: u32| {
            let p = players.get(p as usize)?;
            Some(Rated {
                account: p.account?,
                name: &p.name,
                kind: p.kind.unwrap_or(PlayerKind::Person),
            })
        };
        let games: Vec<RatedGame<'_>> = if self.core.settings.rated && self.core.rated_by_round {
            self.core
                .games
                .iter()
                .filter(|g| g.round == round)
                .filter_map(|g| {
                    let result = g.result?;
                    let winner = result.winner.filter(|_| played(result.reason))?;
                    Some(RatedGame {
                        // Only accounts register in a rated tournament.
                        players: [rated(g.players[0])?, rated(g.players[1])?],
                        winner: winner as usize,
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        let ratings = &self.services.ratings;
        let game = &self.core.game;
        // Everyone's rating now: those who played take theirs from the rows.
        let before: HashMap<u64, f64> = players
            .iter()
            .filter_map(|p| {
                let account = p.account?;
                Some((account, ratings.get(game, account)?))
            })
            .collect();
        ratings.rate_period(game, &games, |rows| {
            let now = |p: &Registrant| {
                let account = p.account?;
                rows.iter()
                    .find(|r| r.account == Some(account))
                    .map(|r| r.rating.rating)
                    .or_else(|| before.get(&account).copied())
            };
            let standings = self.core.standings(now);
            let event = self.next_event(TournamentEventBody::RoundEnded { round, standings });
            let done = self.write(&event, rows.clone());
            (event, done, rows)
        })
    }

    /// Records again a game's end whose write failed, with the same ratings.
    async fn settle(&mut self, room: &str, result: MatchResult, rows: Vec<RatingRow>) {
        let Some(game) = self.running_game(room) else {
            return;
        };
        let event = self.next_event(self.game_end(&game, room, result));
        let done = self.write(&event, rows.clone());
        self.settled(room, result, event, done, rows).await;
    }

    async fn settled(
        &mut self,
        room: &str,
        result: MatchResult,
        event: TournamentEvent,
        done: Pending,
        rows: Vec<RatingRow>,
    ) {
        if let Err((_, message)) = self.committed(done).await {
            // The room is finished and will not report again: keep the
            // result and try again.
            tracing::error!(tournament = %self.core.id, room, "game result not recorded: {message}");
            self.unsettled.push((room.to_string(), result, rows));
            self.retry_at = Some(Instant::now() + RETRY);
            return;
        }
        self.services.ratings.announce(&rows);
        self.publish(event);
        self.seat_tokens.remove(room);
        self.advance().await;
    }

    fn game_end(
        &self,
        game: &TournamentGame,
        room: &str,
        result: MatchResult,
    ) -> TournamentEventBody {
        TournamentEventBody::GameEnded {
            round: game.round,
            room: Some(room.to_string()),
            players: game.players,
            result,
            winner: self.core.winner_of(game.players, &result),
        }
    }

    fn running_game(&self, room: &str) -> Option<TournamentGame> {
        self.core
            .games
            .iter()
            .find(|g| g.room.as_deref() == Some(room) && g.result.is_none())
            .cloned()
    }

    fn next_event(&self, body: TournamentEventBody) -> TournamentEvent {
        TournamentEvent {
            seq: self.core.seq() + 1,
            body,
        }
    }

    /// Makes an event durable, applies it, and tells every watcher.
    async fn record(&mut self, body: TournamentEventBody) -> Result<u64, Refusal> {
        self.record_with(body, Vec::new()).await
    }

    /// The same, with the rating rows the event brings (written in one op).
    async fn record_with(
        &mut self,
        body: TournamentEventBody,
        ratings: Vec<RatingRow>,
    ) -> Result<u64, Refusal> {
        self.record_answering(body, ratings, None).await
    }

    /// The same, and the command that caused the event gets its `ack`
    /// (naming the event) before anyone hears the event, as a room's does.
    async fn record_answering(
        &mut self,
        body: TournamentEventBody,
        ratings: Vec<RatingRow>,
        ack: Option<Ack<'_>>,
    ) -> Result<u64, Refusal> {
        let event = self.next_event(body);
        let seq = event.seq;
        let done = self.write(&event, ratings);
        self.committed(done).await?;
        if let Some((outbox, id)) = ack {
            outbox.send(&ServerMsg::answer(
                id,
                ServerBody::Ack {
                    room: None,
                    seq: Some(seq),
                },
            ));
        }
        self.publish(event);
        Ok(seq)
    }

    /// Queues a write of this tournament, under its lease when it has one.
    fn store(&self, op: WriteOp) -> Pending {
        self.services.store.write(op.fenced(self.lease.as_ref()))
    }

    /// Waits for a write; one refused for the lease marks the tournament
    /// as moved to another node.
    async fn committed(&mut self, done: Pending) -> Result<(), Refusal> {
        let answer = done.await;
        if matches!(answer, Ok(Err(StoreError::LeaseLost(_)))) && !self.moved {
            tracing::warn!(tournament = %self.core.id, "another node owns the tournament now; this one lets it go");
            self.moved = true;
        }
        outcome(answer, &self.core.id)
    }

    /// Queues an event (and the rating rows it brings) for the store.
    fn write(&self, event: &TournamentEvent, ratings: Vec<RatingRow>) -> Pending {
        self.store(WriteOp::TournamentEvent {
            tournament: self.core.id.clone(),
            event: event.clone(),
            at_ms: now_ms(),
            player_token: None,
            player_account: None,
            ratings,
        })
    }

    /// Applies a durable event and sends it to every watcher.
    fn publish(&mut self, event: TournamentEvent) {
        let frame = encode(&ServerMsg::notice(ServerBody::TournamentEvent {
            tournament: self.core.id.clone(),
            event: event.clone(),
        }));
        self.core.apply(event);
        // Queued: a tournament's watchers may be many (see
        // `Outbox::queue_frame`).
        self.watchers
            .retain(|_, outbox| outbox.queue_frame(frame.clone()));
        if self.core.status == TournamentStatus::Finished {
            // A finished tournament no longer counts against anyone's limit.
            for outbox in self.watchers.values() {
                outbox.tournaments.exit(&self.core.id);
            }
        }
    }
}
