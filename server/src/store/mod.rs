//! Persistence of matches: rooms, seats, event logs and results.
//!
//! The server talks to a [`MatchStore`], a small trait with two
//! implementations: the embedded [`SqliteStore`], which keeps everything in one
//! SQLite file (WAL mode, `synchronous=FULL`: a commit survives a power loss;
//! group commit spreads the fsync over many writes), created with its schema on
//! first open; and [`PgStore`] (`postgres/`), the same tables on a
//! PostgreSQL database. Every statement is written once against `sql::Sql`:
//! the group commit and the writes (`writer.rs`) and the reads (`reads.rs`)
//! serve both. Tournaments and ratings (`tournaments.rs`), accounts
//! (`accounts.rs`) and a cluster's leases (`cluster.rs`) have their own
//! writes and reads; an account's profile (`players.rs`) is reads only.
//!
//! Reads use a connection of their own and block: call them from
//! `spawn_blocking`. Bad data in the file never panics: it becomes a
//! [`StoreError::Corrupt`] naming the room (and the event's sequence number).
//!
//! The schema is numbered migrations, one file per version, that say what
//! each version adds and why: `server/migrations/sqlite` (`sqlite/migrate.rs`)
//! and `server/migrations/postgres` (`postgres/migrate.rs`). Today's tables:
//!
//! ```sql
//! rooms  (no INT PK, id TEXT UNIQUE, code TEXT UNIQUE, spec TEXT json,
//!         clock TEXT json NULL, listed INT, bot TEXT NULL, hints INT 0|1, rated INT 0|1,
//!         created_at_ms INT,
//!         result TEXT json NULL, finished_at_ms INT NULL, tournament TEXT NULL)
//! seats  (room_no -> rooms.no, seat INT 0|1, name TEXT NULL, token TEXT, house INT 0|1,
//!         kind TEXT NULL, account INT NULL, player_token TEXT NULL, PK (room_no, seat))
//! ```
//!
//! No secret handed out is kept in clear: `seats.token`, `seats.player_token`,
//! `tournaments.owner_token` and `tournament_players.token` hold the tokens'
//! SHA-256 as 64 hex digits (`secret::hash`), like `api_tokens` holds its
//! secrets'. `seats.player_token` is, for a tournament game's seat, its
//! player's tournament token's hash (that token acts for the seat too).
//!
//! ```sql
//! events (room_no -> rooms.no, seq INT, at_ms INT, body TEXT json Event, PK (room_no, seq))
//! ```
//!
//! A room is unfinished while its `result` is NULL (partial index `rooms_unfinished`).
//! `rooms.tournament` names the tournament a room's game belongs to; the
//! tournament and rating tables are in [`tournaments`], the accounts in
//! [`accounts`]. Seats and events are keyed by the room's number `no`, given
//! in creation order, so that new events land in the last pages of their
//! index. `seats.house` marks the seats the server reserved for its own
//! house bot: only those get a bot back after a restart (a name proves
//! nothing).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use grundy_protocol::wire::{
    Clock, Event, EventBody, MatchRecord, MatchResult, PlayerKind, RecordedMove, TournamentEvent,
    TournamentEventBody,
};
use rusqlite::Connection;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::metrics::METRICS;
use crate::player::Player;

mod accounts;
mod cluster;
mod db_lock;
mod players;
mod postgres;
mod reads;
mod sql;
mod sqlite;
mod tournaments;
mod writer;
pub use accounts::{AccountRow, AccountWrite, AccountsOf, TokenRow};
pub use db_lock::lock_path;
pub use players::{PlayerGame, PlayerHistory, PlayerTournament};
pub use postgres::PgStore;
use reads::*;
use sql::{args, in_read, Arg, Dialect, Fault, Sql};
pub use sqlite::{backup, SqliteStore};
pub use tournaments::{RatingRow, StoredPlayer, StoredTournament};
use writer::*;

/// The most ops the writer commits in one transaction.
pub const MAX_BATCH: usize = 1024;

#[derive(Debug, Clone, PartialEq)]
pub enum WriteOp {
    /// A new room. Its id and its code must both be new.
    CreateRoom {
        room: String,
        code: String,
        spec: Value,
        clock: Option<Clock>,
        listed: bool,
        /// The house bot level the creator asked for.
        bot: Option<String>,
        /// Both players may see hints.
        hints: bool,
        /// A rated casual game (its `Finish` carries the ratings).
        rated: bool,
        /// The tournament whose game this room plays.
        tournament: Option<String>,
        created_at_ms: u64,
    },
    /// A player took seat `seat` (0 or 1). Writing a seat again replaces it.
    Seat {
        room: String,
        seat: u8,
        player: Player,
        /// The seat token's hash (`secret::hash`).
        token: String,
        /// The server reserved it for its own house bot.
        house: bool,
        /// A tournament game's seat: its player's tournament token's hash.
        player_token: Option<String>,
        /// The account token id the seat is tied to (`seats.account_token`):
        /// the seat token acts only while that account token does.
        tie: Option<String>,
    },
    /// An event of the room's log; its `seq` must be new for the room.
    /// `json` is the event as serialized once by the room (the same text goes
    /// to the store, stays in the room's log, and goes, inside an `event`
    /// message, to every subscriber).
    Event {
        room: String,
        seq: u64,
        json: Arc<str>,
        /// Unix epoch milliseconds when it happened.
        at_ms: u64,
    },
    /// The match is over. Idempotent: a room keeps its first result (and
    /// `ratings`, a rated game's new ratings, are written only with it).
    Finish {
        room: String,
        result: MatchResult,
        finished_at_ms: u64,
        ratings: Vec<RatingRow>,
    },
    /// A new tournament (`settings`: a `TournamentSettings` with defaults filled).
    CreateTournament {
        tournament: String,
        code: String,
        settings: Value,
        owner_token: String,
        created_at_ms: u64,
    },
    /// An event of a tournament's log, with what it brings: for `registered`,
    /// the player's secret token (numbers and names are unique per tournament);
    /// for a rated round's end (a rated game's end in tournaments begun
    /// before schema version 7), the new ratings. All or nothing.
    TournamentEvent {
        tournament: String,
        event: TournamentEvent,
        at_ms: u64,
        player_token: Option<String>,
        /// For `registered`: the account that registered, if any.
        player_account: Option<u64>,
        ratings: Vec<RatingRow>,
    },
    /// Ops that stand or fall together: what one decision of a room records
    /// (a seat with its events; a move with the end it causes, and the
    /// result). Committed in one transaction, or not at all.
    All(Vec<WriteOp>),
    /// A write that records nothing of a match (one row, overwritten): the
    /// health check's proof that the store still commits.
    Probe { at_ms: u64 },
    /// An account, a token, a revocation.
    Account(AccountWrite),
    /// A room's write under the lease of the node that owns it (a cluster,
    /// PostgreSQL only): refused by the database, with
    /// [`StoreError::LeaseLost`], once the room's owner is at another epoch.
    /// A fenced `CreateRoom` makes the node the new room's owner.
    Fenced { lease: Lease, op: Box<WriteOp> },
}

/// A node's ownership of a room: the node, and the epoch the database gave
/// it (every takeover raises the epoch; a write of an older one is refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub node: Arc<str>,
    pub epoch: u64,
}

/// Where a room or a tournament is, as the database says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// Its id, and the live node that owns it.
    Live(String, Arc<str>),
    /// Unfinished, but its owner's lease ran out or it drains: a node takes
    /// it over at its next claim round.
    Between,
    /// No unfinished room (or tournament) has that id or code.
    Unknown,
}

/// What a node took over in one claim (see [`Cluster::claim`]).
#[derive(Debug, Default)]
pub struct Claimed {
    pub tournaments: Vec<(StoredTournament, Lease)>,
    pub rooms: Vec<(StoredRoom, Lease)>,
}

impl Claimed {
    pub fn is_empty(&self) -> bool {
        self.tournaments.is_empty() && self.rooms.is_empty()
    }
}

impl WriteOp {
    /// The op itself, or the ops an `All` holds (for hooks that look at kinds).
    pub fn ops(&self) -> Box<dyn Iterator<Item = &WriteOp> + '_> {
        match self {
            WriteOp::All(ops) => Box::new(ops.iter().flat_map(|op| op.ops())),
            WriteOp::Fenced { op, .. } => op.ops(),
            op => Box::new(std::iter::once(op)),
        }
    }

    /// The op under `lease`, when there is one (see [`WriteOp::Fenced`]).
    pub fn fenced(self, lease: Option<&Lease>) -> WriteOp {
        match lease {
            Some(lease) => WriteOp::Fenced {
                lease: lease.clone(),
                op: Box::new(self),
            },
            None => self,
        }
    }

    /// The op that appends `event` to a room's log.
    pub fn event(room: &str, event: &Event, at_ms: u64) -> Result<WriteOp, StoreError> {
        Ok(WriteOp::Event {
            room: room.to_owned(),
            seq: event.seq,
            json: encode(room, "event", event)?.into(),
            at_ms,
        })
    }

    /// The room or tournament the op writes to (for logs).
    pub fn key(&self) -> &str {
        match self {
            WriteOp::CreateRoom { room, .. }
            | WriteOp::Seat { room, .. }
            | WriteOp::Event { room, .. }
            | WriteOp::Finish { room, .. } => room,
            WriteOp::CreateTournament { tournament, .. }
            | WriteOp::TournamentEvent { tournament, .. } => tournament,
            WriteOp::All(ops) => ops.first().map_or("", |op| op.key()),
            WriteOp::Fenced { op, .. } => op.key(),
            WriteOp::Probe { .. } | WriteOp::Account(_) => "",
        }
    }
}

/// An unfinished room as stored, for restart recovery.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRoom {
    pub room: String,
    pub code: String,
    pub spec: Value,
    pub clock: Option<Clock>,
    pub listed: bool,
    /// The house bot level the creator asked for.
    pub bot: Option<String>,
    /// Both players may see hints.
    pub hints: bool,
    /// A rated casual game.
    pub rated: bool,
    /// The tournament whose game this room plays.
    pub tournament: Option<String>,
    pub created_at_ms: u64,
    /// Seats 0 and 1; `None` for a free seat.
    pub seats: [Option<StoredSeat>; 2],
    /// The event log in sequence order, each with its unix epoch ms.
    pub events: Vec<(Event, u64)>,
    /// Always `None` from [`MatchStore::load_unfinished`].
    pub result: Option<MatchResult>,
}

/// A taken seat as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSeat {
    pub player: Player,
    /// The seat token's hash (`secret::hash`).
    pub token: String,
    /// The server reserved it for its own house bot.
    pub house: bool,
    /// A tournament game's seat: its player's tournament token's hash.
    pub player_token: Option<String>,
    /// The account token id the seat is tied to.
    pub tie: Option<String>,
}

/// What can go wrong in the store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The database file could not be opened or set up.
    #[error("cannot open the match store {path}: {message}")]
    Open { path: PathBuf, message: String },
    /// The file was written by a newer build.
    #[error(
        "the match store has schema version {found}, newer than version {supported} \
         that this build knows; run a newer server or use another file"
    )]
    SchemaTooNew { found: i64, supported: i64 },
    /// Another store holds the file (its lock file, `FILE.lock`), in this
    /// process or another; `pid` is the holder's, when it could be read.
    #[error("the database {path} is in use by another grundy-server{}", by_pid(.pid))]
    InUse { path: PathBuf, pid: Option<u32> },
    /// SQLite failed (the text is SQLite's).
    #[error("sqlite: {0}")]
    Sqlite(String),
    /// PostgreSQL failed, or cannot be reached (the text is its own).
    #[error("postgres: {0}")]
    Postgres(String),
    /// The op names a room that was never created.
    #[error("unknown room {0}")]
    UnknownRoom(String),
    /// A room with this id or this code exists already.
    #[error("a room with id {room} or code {code} exists already")]
    DuplicateRoom { room: String, code: String },
    /// The room's log has an event with this sequence number already.
    #[error("room {room} has an event {seq} already")]
    DuplicateEvent { room: String, seq: u64 },
    /// Seats are 0 and 1.
    #[error("room {room}: no seat {seat} (seats are 0 and 1)")]
    BadSeat { room: String, seat: u8 },
    /// A number too large for SQLite's signed 64-bit integers.
    #[error("room {room}: {what} {value} is too large to store")]
    OutOfRange {
        room: String,
        what: &'static str,
        value: u64,
    },
    /// A value could not be encoded as JSON.
    #[error("room {room}: cannot encode {what} as JSON: {message}")]
    Encode {
        room: String,
        what: &'static str,
        message: String,
    },
    /// A stored row does not read back (bad JSON, wrong type, negative number).
    #[error("corrupt data in room {room}{}: {message}", at_seq(.seq))]
    Corrupt {
        room: String,
        seq: Option<u64>,
        message: String,
    },
    /// An account write or read failed (an unknown token, unreadable rows).
    #[error("accounts: {0}")]
    Account(String),
    /// A new account's name is another's (by its key).
    #[error("accounts: the name {0:?} is taken")]
    NameTaken(String),
    /// A new account's id is another's (one a cluster's other node gave).
    #[error("accounts: the account id {0} is taken")]
    AccountIdTaken(u64),
    /// A tournament write or read failed (unknown, duplicate, unreadable).
    #[error("tournament {tournament}: {message}")]
    Tournament { tournament: String, message: String },
    /// A new tournament's code is another tournament's already.
    #[error("tournament {tournament}: the code {code} is taken")]
    DuplicateTournamentCode { tournament: String, code: String },
    /// The store was closed.
    #[error("the match store is closed")]
    Closed,
    /// The room's lease moved to another node (or this store holds no
    /// leases): the write was refused (the text is the database's).
    #[error("the room is another node's now: {0}")]
    LeaseLost(String),
}

fn by_pid(pid: &Option<u32>) -> String {
    pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
}

fn at_seq(seq: &Option<u64>) -> String {
    seq.map(|s| format!(" at event {s}")).unwrap_or_default()
}

/// An error and its causes, in words (refinery's own `Debug` would print
/// every migration's SQL).
fn in_words(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sqlite(e.to_string())
    }
}

/// Unix time in milliseconds, for the records.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Where matches are kept: [`SqliteStore`] or [`PgStore`].
pub trait MatchStore: Send + Sync + 'static {
    /// Queues a write without blocking; the receiver resolves once it is durable
    /// (committed), or with its error. After [`close`](MatchStore::close) it
    /// resolves at once with [`StoreError::Closed`]. A receiver whose sender was
    /// dropped (a `RecvError`) means the same as `Closed`.
    fn write(&self, op: WriteOp) -> oneshot::Receiver<Result<(), StoreError>>;

    /// Every room whose match is not finished, with its seats and its event log in
    /// sequence order (for restart recovery), oldest room first. Blocks.
    fn load_unfinished(&self) -> Result<Vec<StoredRoom>, StoreError>;

    /// A match's record (spec, players' names, moves timed from the `started`
    /// event, or from the first move when there is none, and result), finished or
    /// running, by room id or short code (any case: codes are never reused);
    /// `None` for an unknown room. Blocks.
    fn record(&self, room: &str) -> Result<Option<MatchRecord>, StoreError>;

    /// Every tournament not finished, with its players and event log. Blocks.
    fn load_unfinished_tournaments(&self) -> Result<Vec<StoredTournament>, StoreError>;

    /// One tournament, finished or not, by id or short code (any case; a code
    /// older files hold twice names the newest); `None` for an unknown one.
    /// Blocks.
    fn load_tournament(&self, tournament: &str) -> Result<Option<StoredTournament>, StoreError>;

    /// Every player's rating in every game. Blocks.
    fn load_ratings(&self) -> Result<Vec<RatingRow>, StoreError>;

    /// Every account and every token (revoked ones too). Blocks.
    fn load_accounts(&self) -> Result<(Vec<AccountRow>, Vec<TokenRow>), StoreError>;

    /// An account's `games` latest finished games and `tournaments` latest
    /// tournaments, with its rating after each round of the rated ones
    /// (`players.rs`). Blocks.
    fn player_history(
        &self,
        account: u64,
        games: usize,
        tournaments: usize,
    ) -> Result<PlayerHistory, StoreError>;

    /// Waits until every queued write is committed, then stops the writer.
    /// Idempotent. Blocks.
    fn close(&self);

    /// The store of a cluster's node (PostgreSQL, `--cluster`): its lease
    /// and its rooms' ownership. `None` for a store one server holds alone.
    fn cluster(&self) -> Option<&dyn Cluster> {
        None
    }
}

/// What a node of a cluster asks of the shared store (`store/cluster.rs`). Every
/// call blocks.
pub trait Cluster: Send + Sync {
    /// This node's id (a new one after [`rejoin`](Cluster::rejoin)).
    fn node(&self) -> Arc<str>;
    /// How long the node is alive for after a renewal.
    fn lease(&self) -> Duration;
    /// Renews the node's lease; [`StoreError::LeaseLost`] when it had run
    /// out already: the node must give its rooms up, then rejoin.
    fn renew(&self) -> Result<(), StoreError>;
    /// Whether the node's lease holds now, as its last renewal says (false
    /// once it drains, or a renewal failed).
    fn holds_lease(&self) -> bool;
    /// Registers the node again under a new id (after a lost lease).
    fn rejoin(&self) -> Result<Arc<str>, StoreError>;
    /// Takes up to `limit` rooms and up to `limit` tournaments whose owner
    /// expired, drains, or never was: each with its seats or players and its
    /// log, and this node's lease on it.
    fn claim(&self, limit: usize) -> Result<Claimed, StoreError>;
    /// The node is shutting down and has stopped its rooms: they are for the
    /// taking at once.
    fn drain(&self) -> Result<(), StoreError>;
    /// The cluster's name and the secret its nodes sign their messages with.
    fn identity(&self) -> (String, Vec<u8>);
    /// Where the room `key` (id or code) names is.
    fn owner_of(&self, key: &str) -> Result<Owner, StoreError>;
    /// Where the tournament `key` (id or code) names is.
    fn tournament_owner_of(&self, key: &str) -> Result<Owner, StoreError>;
    /// The account `of` names, as the database has it now (another node may
    /// have made or changed it), with its live tokens and the one it names.
    fn find_accounts(&self, of: AccountsOf)
        -> Result<(Vec<AccountRow>, Vec<TokenRow>), StoreError>;
    /// The result of each of `rooms` the database has (None: unfinished),
    /// in one read: how a tournament learns the results of games another
    /// node's rooms play.
    fn results_of(
        &self,
        rooms: Vec<String>,
    ) -> Result<Vec<(String, Option<MatchResult>)>, StoreError>;
    /// The next account id no node has given.
    fn next_account_id(&self) -> Result<u64, StoreError>;
}

/// A boxed store is a store (a server picks its backend when it starts).
impl<T: MatchStore + ?Sized> MatchStore for Box<T> {
    fn write(&self, op: WriteOp) -> oneshot::Receiver<Result<(), StoreError>> {
        (**self).write(op)
    }
    fn load_unfinished(&self) -> Result<Vec<StoredRoom>, StoreError> {
        (**self).load_unfinished()
    }
    fn record(&self, room: &str) -> Result<Option<MatchRecord>, StoreError> {
        (**self).record(room)
    }
    fn load_unfinished_tournaments(&self) -> Result<Vec<StoredTournament>, StoreError> {
        (**self).load_unfinished_tournaments()
    }
    fn load_tournament(&self, tournament: &str) -> Result<Option<StoredTournament>, StoreError> {
        (**self).load_tournament(tournament)
    }
    fn load_ratings(&self) -> Result<Vec<RatingRow>, StoreError> {
        (**self).load_ratings()
    }
    fn load_accounts(&self) -> Result<(Vec<AccountRow>, Vec<TokenRow>), StoreError> {
        (**self).load_accounts()
    }
    fn player_history(
        &self,
        account: u64,
        games: usize,
        tournaments: usize,
    ) -> Result<PlayerHistory, StoreError> {
        (**self).player_history(account, games, tournaments)
    }
    fn cluster(&self) -> Option<&dyn Cluster> {
        (**self).cluster()
    }
    fn close(&self) {
        (**self).close()
    }
}

/// A store whose writes pass through `hook` first, which may hand them on to
/// `store`, hold them or refuse them; reads go straight to `store`. For the
/// tests that play a failing or stalled disk under a real server.
pub struct HookedWrites<S, F> {
    pub store: S,
    pub hook: F,
}

impl<S, F> MatchStore for HookedWrites<S, F>
where
    S: MatchStore,
    F: Fn(&S, WriteOp) -> oneshot::Receiver<Result<(), StoreError>> + Send + Sync + 'static,
{
    fn write(&self, op: WriteOp) -> oneshot::Receiver<Result<(), StoreError>> {
        (self.hook)(&self.store, op)
    }
    fn load_unfinished(&self) -> Result<Vec<StoredRoom>, StoreError> {
        self.store.load_unfinished()
    }
    fn record(&self, room: &str) -> Result<Option<MatchRecord>, StoreError> {
        self.store.record(room)
    }
    fn load_unfinished_tournaments(&self) -> Result<Vec<StoredTournament>, StoreError> {
        self.store.load_unfinished_tournaments()
    }
    fn load_tournament(&self, tournament: &str) -> Result<Option<StoredTournament>, StoreError> {
        self.store.load_tournament(tournament)
    }
    fn load_ratings(&self) -> Result<Vec<RatingRow>, StoreError> {
        self.store.load_ratings()
    }
    fn load_accounts(&self) -> Result<(Vec<AccountRow>, Vec<TokenRow>), StoreError> {
        self.store.load_accounts()
    }
    fn player_history(
        &self,
        account: u64,
        games: usize,
        tournaments: usize,
    ) -> Result<PlayerHistory, StoreError> {
        self.store.player_history(account, games, tournaments)
    }
    fn close(&self) {
        self.store.close()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
