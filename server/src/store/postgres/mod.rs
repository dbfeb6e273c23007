//! The shared store: the same tables and the same group commit as
//! [`SqliteStore`](super::SqliteStore), on PostgreSQL (`--db postgres://...`).
//!
//! Two threads of the store's own hold a blocking `postgres` client each (the
//! client runs its own small runtime, so it must not be called from the
//! server's tasks): the writer, which runs the shared group-commit loop
//! ([`super::writer_loop`]), and the reader, which runs the reads one at a
//! time in a read-only, repeatable-read transaction. A caller of a read blocks
//! on its answer, as with SQLite.
//!
//! - Schema: numbered migrations (`migrate.rs`), run when the store opens;
//!   a database migrated by a newer build is refused
//!   ([`StoreError::SchemaTooNew`]).
//! - Durability: the writer's session sets `synchronous_commit = on`, so a
//!   commit (and so an acknowledgement) waits for PostgreSQL's WAL flush,
//!   whatever the database's default.
//! - One server per database: the writer holds a session advisory lock for
//!   the store's life; a second server on the same database is refused
//!   ([`StoreError::InUse`]). The lock goes with the session, so a crashed
//!   server leaves none.
//! - A lost connection: the writer (and the reader) connect again before the
//!   next batch; until they can, every write fails with the error, and no
//!   write is acknowledged. A writer that reconnects takes the lock again, or
//!   refuses to write.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use grundy_protocol::wire::{MatchRecord, MatchResult};
use tokio::sync::oneshot;

use super::sql::{in_read, PgConn};
use super::{
    accounts, cluster, lock, players, tournaments, AccountRow, AccountsOf, Claimed, Cluster,
    MatchStore, Owner, PlayerHistory, RatingRow, StoreError, StoredRoom, StoredTournament,
    TokenRow, WriteOp, Writer,
};

mod migrate;
use migrate::migrate_alone;

/// The advisory lock's key: one grundy-server per database ("grundy" in ASCII).
const LOCK_KEY: i64 = 0x6772_756e_6479;

/// How long opening waits for a lock another session holds.
const LOCK_PATIENCE: Duration = Duration::from_secs(2);

/// A read, run on the reader thread.
type Read = Box<dyn FnOnce(&mut PgConn) + Send>;

/// The store on PostgreSQL.
pub struct PgStore {
    writer: Writer,
    reader: Worker,
    /// A node of a cluster: its lease and its claims, on a thread of their
    /// own so that a long write batch never delays a renewal.
    node: Option<Node>,
}

/// What a cluster's node keeps (see `store/cluster.rs`).
struct Node {
    worker: Worker,
    /// The cluster's name and secret (`Cluster::identity`).
    identity: (String, Vec<u8>),
    /// This node's id: a new one after its lease was lost.
    id: Mutex<Arc<str>>,
    lease: Duration,
    /// Until when this node's lease holds for sure, as last renewed (from
    /// before the renewal was sent: the database's expiry is later).
    held_until: Mutex<Option<Instant>>,
}

impl Node {
    /// Runs `renewal` (a registration or a renewal of the lease) and notes
    /// until when the lease holds (a renewal that failed for another reason
    /// than a lost lease changes nothing: it holds until it runs out).
    fn renewing(&self, renewal: impl FnOnce() -> Result<(), StoreError>) -> Result<(), StoreError> {
        let asked = Instant::now();
        let renewed = renewal();
        let mut held_until = lock(&self.held_until);
        match &renewed {
            Ok(()) => *held_until = Some(asked + self.lease),
            Err(StoreError::LeaseLost(_)) => *held_until = None,
            // Not renewed this time: it holds until it runs out.
            Err(_) => {}
        }
        drop(held_until);
        renewed
    }
}

/// A thread with a connection of its own that runs jobs one at a time.
struct Worker {
    jobs: Mutex<Option<mpsc::Sender<Read>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`),
    /// migrates its schema, and takes it for this server alone. Blocks.
    pub fn open(url: &str) -> Result<PgStore, StoreError> {
        PgStore::open_as(url, None)
    }

    /// Connects to the database at `url` as a node of a cluster: other nodes
    /// share the database, each room is owned by one node at a time, and this
    /// node is alive while it renews its lease, at least once every `lease`
    /// (see [`Cluster`]). Blocks.
    pub fn open_node(url: &str, lease: Duration) -> Result<PgStore, StoreError> {
        PgStore::open_as(url, Some(lease))
    }

    fn open_as(url: &str, lease: Option<Duration>) -> Result<PgStore, StoreError> {
        let shown = PathBuf::from(crate::secret::url_without_password(url));
        let open_error = |message: String| StoreError::Open {
            path: shown.to_path_buf(),
            message,
        };
        let config: postgres::Config = url
            .parse()
            .map_err(|e| open_error(format!("not a PostgreSQL URL: {e}")))?;

        let (ready, started) = mpsc::channel();
        let writer_config = config.clone();
        let writer_shown = shown.clone();
        // One server holds the database alone, and marks it as its own; the
        // nodes of a cluster share it (and their rooms' epochs fence them).
        let holder = match lease {
            None => Some(uuid::Uuid::new_v4().simple().to_string()),
            Some(_) => None,
        };
        let shared = lease.is_some();
        let writer = Writer::spawn(move |queue, transactions| {
            let conn = connect(&writer_config, &writer_shown).and_then(|mut conn| {
                take_lock(&mut conn, &writer_shown, shared)?;
                migrate_alone(&mut conn, &writer_shown)?;
                if let Some(holder) = &holder {
                    mark_holder(&mut conn, holder)?;
                }
                Ok(conn)
            });
            let mut conn = match conn {
                Ok(conn) => {
                    let _ = ready.send(Ok(()));
                    conn
                }
                Err(e) => {
                    let _ = ready.send(Err(e));
                    return;
                }
            };
            super::writer_loop(&mut conn, queue, transactions, |conn| {
                reopen(
                    conn,
                    &writer_config,
                    &writer_shown,
                    shared,
                    holder.as_deref(),
                )
            });
            // At once, not when the server notices the session's end: a store
            // opened right after this one finds the database free.
            let unlock = if shared {
                "SELECT pg_advisory_unlock_shared($1)"
            } else {
                "SELECT pg_advisory_unlock($1)"
            };
            let _ = conn.client.execute(unlock, &[&LOCK_KEY]);
        })
        .map_err(|e| open_error(format!("cannot start the writer thread: {e}")))?;
        let opened = started
            .recv()
            .unwrap_or_else(|_| Err(open_error("the writer thread stopped".into())));
        if let Err(e) = opened {
            writer.stop();
            return Err(e);
        }
        let reader = Worker::spawn("grundy-store-reader", &config, &shown)
            .map_err(|e| open_error(format!("cannot start the reader thread: {e}")))?;
        let node = match lease {
            None => None,
            Some(lease) => {
                let worker = Worker::spawn("grundy-store-leases", &config, &shown)
                    .map_err(|e| open_error(format!("cannot start the lease thread: {e}")))?;
                let id = new_node_id();
                let registered = id.clone();
                let asked = Instant::now();
                worker.run(move |conn| cluster::register(conn, &registered, lease))?;
                let identity = worker.run(cluster::identity)?;
                Some(Node {
                    worker,
                    identity,
                    id: Mutex::new(id),
                    lease,
                    held_until: Mutex::new(Some(asked + lease)),
                })
            }
        };
        Ok(PgStore {
            writer,
            reader,
            node,
        })
    }

    /// How many write transactions the writer has committed so far.
    pub fn transactions(&self) -> u64 {
        self.writer.transactions()
    }

    /// Tests only: stops the writer until the returned sender is dropped.
    #[cfg(test)]
    pub(crate) fn hold(&self) -> mpsc::Sender<()> {
        self.writer.hold()
    }

    /// Runs `read` on the reader thread, in one read transaction, and waits
    /// for its answer.
    fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&mut PgConn) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.reader.run(move |conn| in_read(conn, read))
    }

    fn node(&self) -> Result<&Node, StoreError> {
        self.node.as_ref().ok_or_else(|| {
            StoreError::LeaseLost("this store is a single server's, not a cluster node's".into())
        })
    }
}

fn new_node_id() -> Arc<str> {
    uuid::Uuid::new_v4().simple().to_string().into()
}

impl Worker {
    /// Starts the thread; it connects at its first job, and again after a
    /// loss (a job that finds no database gets the error).
    fn spawn(name: &str, config: &postgres::Config, shown: &Path) -> std::io::Result<Worker> {
        let (jobs, queue) = mpsc::channel::<Read>();
        let config = config.clone();
        let shown = shown.to_path_buf();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut conn: Option<PgConn> = None;
                while let Ok(job) = queue.recv() {
                    let ready = match conn.as_mut() {
                        Some(c) => reopen(c, &config, &shown, false, None).map(|_| c),
                        None => connect(&config, &shown).map(|c| conn.insert(c)),
                    };
                    match ready {
                        Ok(c) => job(c),
                        Err(e) => {
                            tracing::warn!(error = %e, "match store: no connection for a job");
                            drop(job);
                        }
                    }
                }
            })?;
        Ok(Worker {
            jobs: Mutex::new(Some(jobs)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Runs `job` on the thread and waits for its answer.
    fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut PgConn) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (answer, answered) = mpsc::sync_channel(1);
        let job: Read = Box::new(move |conn| {
            let _ = answer.send(job(conn));
        });
        let sent = match lock(&self.jobs).as_ref() {
            Some(jobs) => jobs.send(job).is_ok(),
            None => false,
        };
        if !sent {
            return Err(StoreError::Closed);
        }
        answered.recv().unwrap_or_else(|_| {
            Err(StoreError::Postgres(
                "the database cannot be reached".into(),
            ))
        })
    }

    /// Ends the thread once its jobs are done.
    fn stop(&self) {
        drop(lock(&self.jobs).take());
        if let Some(handle) = lock(&self.thread).take() {
            let _ = handle.join();
        }
    }
}

impl Cluster for PgStore {
    fn node(&self) -> Arc<str> {
        match &self.node {
            Some(node) => lock(&node.id).clone(),
            None => Arc::from(""),
        }
    }

    fn lease(&self) -> Duration {
        self.node.as_ref().map_or(Duration::ZERO, |node| node.lease)
    }

    fn renew(&self) -> Result<(), StoreError> {
        let node = self.node()?;
        let (id, lease) = (lock(&node.id).clone(), node.lease);
        node.renewing(|| {
            node.worker
                .run(move |conn| cluster::renew(conn, &id, lease))
        })
    }

    fn holds_lease(&self) -> bool {
        self.node
            .as_ref()
            .is_some_and(|node| lock(&node.held_until).is_some_and(|until| Instant::now() < until))
    }

    fn rejoin(&self) -> Result<Arc<str>, StoreError> {
        let node = self.node()?;
        let (id, lease) = (new_node_id(), node.lease);
        let registered = id.clone();
        node.renewing(|| {
            node.worker
                .run(move |conn| cluster::register(conn, &registered, lease))
        })?;
        *lock(&node.id) = id.clone();
        Ok(id)
    }

    fn claim(&self, limit: usize) -> Result<Claimed, StoreError> {
        let node = self.node()?;
        let id = lock(&node.id).clone();
        node.worker
            .run(move |conn| cluster::claim(conn, &id, limit))
    }

    fn drain(&self) -> Result<(), StoreError> {
        let node = self.node()?;
        let id = lock(&node.id).clone();
        *lock(&node.held_until) = None;
        node.worker.run(move |conn| cluster::drain(conn, &id))
    }

    fn identity(&self) -> (String, Vec<u8>) {
        self.node
            .as_ref()
            .map_or_else(Default::default, |node| node.identity.clone())
    }

    fn owner_of(&self, key: &str) -> Result<Owner, StoreError> {
        let key = key.to_owned();
        self.read(move |conn| cluster::owner_of(conn, &key))
    }

    fn tournament_owner_of(&self, key: &str) -> Result<Owner, StoreError> {
        let key = key.to_owned();
        self.read(move |conn| cluster::tournament_owner_of(conn, &key))
    }

    fn find_accounts(
        &self,
        of: AccountsOf,
    ) -> Result<(Vec<AccountRow>, Vec<TokenRow>), StoreError> {
        self.read(move |conn| accounts::find(conn, &of))
    }

    fn results_of(
        &self,
        rooms: Vec<String>,
    ) -> Result<Vec<(String, Option<MatchResult>)>, StoreError> {
        self.read(move |conn| super::read_results(conn, &rooms))
    }

    fn next_account_id(&self) -> Result<u64, StoreError> {
        self.read(accounts::next_id)
    }
}

impl MatchStore for PgStore {
    fn write(&self, op: WriteOp) -> oneshot::Receiver<Result<(), StoreError>> {
        self.writer.write(op)
    }

    fn load_unfinished(&self) -> Result<Vec<StoredRoom>, StoreError> {
        self.read(super::load_unfinished_rooms)
    }

    fn record(&self, key: &str) -> Result<Option<MatchRecord>, StoreError> {
        let key = key.to_owned();
        self.read(move |conn| super::read_record(conn, &key))
    }

    fn load_unfinished_tournaments(&self) -> Result<Vec<StoredTournament>, StoreError> {
        self.read(tournaments::load_unfinished)
    }

    fn load_tournament(&self, tournament: &str) -> Result<Option<StoredTournament>, StoreError> {
        let key = tournament.to_owned();
        self.read(move |conn| tournaments::load(conn, &key))
    }

    fn load_ratings(&self) -> Result<Vec<RatingRow>, StoreError> {
        self.read(tournaments::load_ratings)
    }

    fn load_accounts(&self) -> Result<(Vec<AccountRow>, Vec<TokenRow>), StoreError> {
        self.read(accounts::load)
    }

    fn player_history(
        &self,
        account: u64,
        games: usize,
        tournaments: usize,
    ) -> Result<PlayerHistory, StoreError> {
        self.read(move |conn| players::read(conn, account, games, tournaments))
    }

    fn close(&self) {
        self.writer.stop();
        // The writer's session, and with it the lock, ended with its thread;
        // reads go on working until the store is dropped.
    }

    fn cluster(&self) -> Option<&dyn Cluster> {
        self.node.as_ref().map(|_| self as &dyn Cluster)
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        self.close();
        self.reader.stop();
        if let Some(node) = &self.node {
            node.worker.stop();
        }
    }
}

fn connect(config: &postgres::Config, shown: &Path) -> Result<PgConn, StoreError> {
    // A database that stops answering is an error within seconds, never a
    // hang: moves are refused, a shutdown ends (the URL may set its own
    // connect_timeout).
    let mut config = config.clone();
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(5));
    }
    if config.get_application_name().is_none() {
        // Which server a session is, in pg_stat_activity.
        config.application_name(&format!("grundy-server {}", std::process::id()));
    }
    config
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(10))
        .tcp_user_timeout(Duration::from_secs(15));
    let mut client = config
        .connect(postgres::NoTls)
        .map_err(|e| StoreError::Open {
            path: shown.to_path_buf(),
            message: super::sql::pg_error(e).message,
        })?;
    // An acknowledgement waits for the WAL flush, whatever the default.
    client
        .batch_execute("SET synchronous_commit = on; SET statement_timeout = '30s'")
        .map_err(|e| StoreError::from(super::sql::pg_error(e)))?;
    Ok(PgConn::new(client))
}

/// Takes the database for this server, or says it is taken. A server that
/// has just died holds it until PostgreSQL notices its session is gone: a
/// second or two of asking again covers a restart.
fn take_lock(conn: &mut PgConn, shown: &Path, shared: bool) -> Result<(), StoreError> {
    let deadline = Instant::now() + LOCK_PATIENCE;
    let try_lock = if shared {
        "SELECT pg_try_advisory_lock_shared($1)"
    } else {
        "SELECT pg_try_advisory_lock($1)"
    };
    loop {
        let row = conn
            .client
            .query_one(try_lock, &[&LOCK_KEY])
            .map_err(|e| StoreError::from(super::sql::pg_error(e)))?;
        if row.get::<_, bool>(0) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(StoreError::InUse {
                path: shown.to_path_buf(),
                pid: None,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Connects again if the connection was lost (the writer takes the lock again).
/// Connects again if the connection was lost: seen closed, or, after a
/// while unused, not answering (the client notices a session the database
/// ended only when it next talks). The writer takes the lock again, and
/// writes only if the database is still its own.
fn reopen(
    conn: &mut PgConn,
    config: &postgres::Config,
    shown: &Path,
    shared: bool,
    holder: Option<&str>,
) -> Result<(), StoreError> {
    let idle = conn.idle_for() > Duration::from_secs(1);
    let lost =
        conn.client.is_closed() || (idle && conn.client.is_valid(Duration::from_secs(5)).is_err());
    if !lost {
        return Ok(());
    }
    let mut fresh = connect(config, shown)?;
    if shared {
        take_lock(&mut fresh, shown, true)?;
    }
    if let Some(holder) = holder {
        take_lock(&mut fresh, shown, false)?;
        let row = fresh
            .client
            .query_opt("SELECT server FROM holder WHERE id = 1", &[])
            .map_err(|e| StoreError::from(super::sql::pg_error(e)))?;
        let now = row.map(|row| row.get::<_, String>(0));
        if now.as_deref() != Some(holder) {
            tracing::error!(
                "match store: another server took the database while the connection was lost; \
                 this one writes no more"
            );
            return Err(StoreError::InUse {
                path: shown.to_path_buf(),
                pid: None,
            });
        }
    }
    tracing::info!("match store: connected to the database again");
    *conn = fresh;
    Ok(())
}

/// Marks the database as this server's (`holder`), once it holds the lock:
/// a server that loses its connection writes again only if no other server
/// has marked it since.
fn mark_holder(conn: &mut PgConn, holder: &str) -> Result<(), StoreError> {
    conn.client
        .execute(
            "INSERT INTO holder (id, server, since_ms) VALUES (1, $1, $2)
             ON CONFLICT (id) DO UPDATE SET server = excluded.server, since_ms = excluded.since_ms",
            &[&holder, &(super::now_ms() as i64)],
        )
        .map_err(|e| StoreError::from(super::sql::pg_error(e)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::Place;
    use crate::store::{AccountWrite, Lease};
    use grundy_protocol::wire::{TournamentEvent, TournamentEventBody};
    use serde_json::json;

    fn create(room: &str) -> WriteOp {
        WriteOp::CreateRoom {
            room: room.into(),
            code: format!("C-{room}"),
            spec: json!({"game": "nim", "heaps": [3]}),
            clock: None,
            listed: false,
            bot: None,
            hints: false,
            rated: false,
            tournament: None,
            created_at_ms: 1,
        }
    }

    fn put(store: &dyn MatchStore, op: WriteOp) -> Result<(), StoreError> {
        store.write(op).blocking_recv().expect("the writer answers")
    }

    /// Ends the store's sessions, as an administrator (or a restarting
    /// PostgreSQL) would; how many.
    fn end_sessions(url: &str) -> usize {
        let server = grundy_testkit::postgres::shared().expect("running");
        server.end_sessions(url)
    }

    fn database() -> Option<String> {
        match Place::postgres()? {
            Place::Postgres(url) => Some(url),
            Place::Sqlite { .. } => unreachable!(),
        }
    }

    /// A database of schema version 4 kept its tokens in clear: version 5
    /// hashes them in place, and gives each seat of a tournament game its
    /// player's tournament token's hash.
    #[test]
    fn the_clear_tokens_of_a_version_4_database_are_hashed_in_place() {
        use crate::secret::hash;
        let Some(url) = database() else { return };
        migrate::migrate_to(&url, 4);
        let mut raw = postgres::Client::connect(&url, postgres::NoTls).expect("connects");
        raw.batch_execute(
            "INSERT INTO rooms (id, code, spec, listed, created_at_ms, tournament)
                 VALUES ('g', 'CODEG', '{\"game\":\"nim\",\"heaps\":[3]}', FALSE, 1, 't1');
             INSERT INTO seats (room_no, seat, name, token)
                 SELECT no, 0, 'ann', 'seat-ann' FROM rooms WHERE id = 'g';
             INSERT INTO seats (room_no, seat, name, token)
                 SELECT no, 1, 'stranger', 'seat-x' FROM rooms WHERE id = 'g';
             INSERT INTO tournaments (id, code, settings, owner_token, created_at_ms)
                 VALUES ('t1', 'TCODE', '{\"family\":\"nim\"}', 'owner-t1', 1);
             INSERT INTO tournament_players (tournament, player, name, token)
                 VALUES ('t1', 0, 'ann', 'player-ann');",
        )
        .expect("version 4 rows");
        drop(raw);
        let store = PgStore::open(&url).expect("migrates");
        drop(store);
        let mut raw = postgres::Client::connect(&url, postgres::NoTls).expect("connects");
        let seats: Vec<(i16, String, Option<String>)> = raw
            .query(
                "SELECT seat, token, player_token FROM seats ORDER BY seat",
                &[],
            )
            .expect("seats")
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        assert_eq!(
            seats,
            [
                (0, hash("seat-ann"), Some(hash("player-ann"))),
                (1, hash("seat-x"), None)
            ]
        );
        let owner: String = raw
            .query_one("SELECT owner_token FROM tournaments", &[])
            .expect("tournament")
            .get(0);
        assert_eq!(owner, hash("owner-t1"));
        let player: String = raw
            .query_one("SELECT token FROM tournament_players", &[])
            .expect("player")
            .get(0);
        assert_eq!(player, hash("player-ann"));
    }

    #[test]
    fn a_second_server_on_the_database_is_refused_until_the_first_closes() {
        let Some(url) = database() else { return };
        let first = PgStore::open(&url).expect("open");
        let refused = PgStore::open(&url)
            .err()
            .expect("a second store is refused");
        assert!(matches!(refused, StoreError::InUse { .. }), "{refused:?}");
        assert!(refused.to_string().contains(&url), "{refused}");
        put(&first, create("r")).expect("the holder still writes");
        first.close();
        let second = PgStore::open(&url).expect("open after close");
        assert_eq!(second.load_unfinished().expect("load").len(), 1);
    }

    #[test]
    fn a_database_migrated_by_a_newer_build_is_refused() {
        let Some(url) = database() else { return };
        drop(PgStore::open(&url).expect("migrates"));
        let mut raw = postgres::Client::connect(&url, postgres::NoTls).expect("raw");
        raw.batch_execute(
            "INSERT INTO refinery_schema_history (version, name, applied_on, checksum)
             VALUES (999, 'future', '2030-01-01T00:00:00Z', '0')",
        )
        .expect("a future migration");
        let refused = PgStore::open(&url).err().expect("refused");
        assert!(
            matches!(refused, StoreError::SchemaTooNew { found: 999, .. }),
            "{refused:?}"
        );
    }

    #[test]
    fn an_unreachable_or_malformed_database_is_named_without_its_password() {
        let refused = PgStore::open("postgres://ada:s3cret@127.0.0.1:1/grundy")
            .err()
            .expect("nothing listens on port 1");
        let text = refused.to_string();
        assert!(
            text.contains("postgres://ada:***@127.0.0.1:1/grundy"),
            "{text}"
        );
        assert!(!text.contains("s3cret"), "{text}");
        let text = PgStore::open("postgres://[")
            .err()
            .expect("bad")
            .to_string();
        assert!(text.contains("not a PostgreSQL URL"), "{text}");
    }

    /// Sessions the database ends while the store is quiet are noticed before
    /// the next write: it goes through at the first try.
    #[test]
    fn a_session_ended_while_quiet_costs_no_write() {
        let Some(url) = database() else { return };
        let store = PgStore::open(&url).expect("open");
        put(&store, create("before")).expect("create");
        end_sessions(&url);
        // Longer than the second after which an unused connection is checked
        // (a slow machine only makes it longer).
        std::thread::sleep(Duration::from_millis(1500));
        put(&store, create("after")).expect("the first write after the loss");
    }

    /// A server that lost its connection while another took the database
    /// writes no more, even once the lock is free again; the other goes on.
    #[test]
    fn a_server_that_lost_the_database_to_another_writes_no_more() {
        let Some(url) = database() else { return };
        let first = PgStore::open(&url).expect("open");
        put(&first, create("r1")).expect("create");
        end_sessions(&url);
        let second = PgStore::open(&url).expect("the lock went with the session");
        end_sessions(&url);
        for room in ["r2", "r3"] {
            let refused = put(&first, create(room));
            assert!(refused.is_err(), "{room}: {refused:?}");
        }
        assert!(matches!(
            put(&first, create("r4")),
            Err(StoreError::InUse { .. })
        ));
        let written = (0..2).any(|_| put(&second, create("r5")).is_ok());
        assert!(written, "the holder writes again");
        let rooms = second
            .load_unfinished()
            .or_else(|_| second.load_unfinished())
            .expect("load");
        let names: Vec<_> = rooms.iter().map(|r| r.room.as_str()).collect();
        assert_eq!(names, ["r1", "r5"]);
    }

    /// The database drops the store's sessions: a write either fails or is
    /// stored (never acknowledged and lost), and writes and reads come back
    /// once the store has connected again.
    #[test]
    fn writes_and_reads_recover_after_the_connections_are_lost() {
        let Some(url) = database() else { return };
        let store = PgStore::open(&url).expect("open");
        put(&store, create("before")).expect("create");
        assert_eq!(store.load_unfinished().expect("load").len(), 1);
        assert_eq!(
            end_sessions(&url),
            2,
            "the writer's and the reader's sessions"
        );
        let outcomes: Vec<_> = (0..3)
            .map(|i| put(&store, create(&format!("after{i}"))))
            .collect();
        assert!(outcomes.last().unwrap().is_ok(), "{outcomes:?}");
        // A failed first read is allowed; the next one reconnects.
        let rooms = store
            .load_unfinished()
            .or_else(|_| store.load_unfinished())
            .expect("reads come back");
        let stored: Vec<_> = rooms.iter().map(|r| r.room.as_str()).collect();
        for (i, outcome) in outcomes.iter().enumerate() {
            let room = format!("after{i}");
            assert_eq!(
                stored.contains(&room.as_str()),
                outcome.is_ok(),
                "{room}: {outcome:?}"
            );
        }
        // The writer took the database again: a second server is refused.
        assert!(matches!(PgStore::open(&url), Err(StoreError::InUse { .. })));
    }

    // ---- A cluster's nodes ----

    use crate::store::tests::{create as create_at, event, moved, seat};

    fn node(url: &str) -> PgStore {
        PgStore::open_node(url, Duration::from_secs(30)).expect("a node opens")
    }

    fn lease(store: &PgStore, epoch: u64) -> Lease {
        Lease {
            node: Cluster::node(store),
            epoch,
        }
    }

    fn fenced(lease: &Lease, op: WriteOp) -> WriteOp {
        WriteOp::Fenced {
            lease: lease.clone(),
            op: Box::new(op),
        }
    }

    fn raw(url: &str) -> postgres::Client {
        postgres::Client::connect(url, postgres::NoTls).expect("raw")
    }

    /// Ends a node's lease, as time would if it stopped renewing it.
    fn expire(url: &str, node: &str) {
        raw(url)
            .execute(
                "UPDATE nodes SET expires_at = clock_timestamp() - INTERVAL '1 second'
                 WHERE id = $1",
                &[&node],
            )
            .expect("expire");
    }

    fn lost(outcome: Result<(), StoreError>) -> bool {
        matches!(outcome, Err(StoreError::LeaseLost(_)))
    }

    /// The whole life of a room's ownership: made by its creator, claimed
    /// when the creator's lease runs out (its log read back whole), every
    /// later write of the old owner refused, whatever its kind, and claimed
    /// again at once when its new owner drains.
    #[test]
    fn a_room_passes_to_another_node_and_its_old_owner_writes_no_more() {
        let Some(url) = database() else { return };
        let (a, b) = (node(&url), node(&url));
        let first = lease(&a, 1);
        put(
            &a,
            fenced(
                &first,
                WriteOp::All(vec![create_at("r", 1), seat("r", 0, "ada")]),
            ),
        )
        .expect("a creates the room");
        put(&a, fenced(&first, event("r", 1, moved(0, 0), 2))).expect("a writes");
        assert!(
            b.claim(10).map(|c| c.rooms).expect("claim").is_empty(),
            "a is alive"
        );
        assert_eq!(
            b.owner_of("r").expect("read"),
            Owner::Live("r".to_owned(), Cluster::node(&a))
        );
        assert_eq!(b.owner_of("nope").expect("read"), Owner::Unknown);

        expire(&url, &Cluster::node(&a));
        assert_eq!(b.owner_of("r").expect("read"), Owner::Between);
        assert!(lost(a.renew()), "a's lease ran out");
        let claimed = b.claim(10).map(|c| c.rooms).expect("claim");
        assert_eq!(claimed.len(), 1);
        let (room, second) = &claimed[0];
        assert_eq!((room.room.as_str(), second.epoch), ("r", 2));
        assert_eq!(second.node, Cluster::node(&b));
        assert_eq!(room.events.len(), 1, "the log as a left it");
        assert!(room.seats[0].is_some());

        assert!(lost(put(&a, fenced(&first, event("r", 2, moved(1, 1), 3)))));
        assert!(lost(put(&a, fenced(&first, seat("r", 1, "bob")))));
        put(&b, fenced(second, event("r", 2, moved(1, 1), 3))).expect("b writes");

        let again = a.rejoin().expect("a rejoins");
        assert_ne!(again, first.node);
        assert!(
            a.claim(10).map(|c| c.rooms).expect("claim").is_empty(),
            "b is alive"
        );
        b.drain().expect("drain");
        assert_eq!(
            a.owner_of("r").expect("read"),
            Owner::Between,
            "a draining owner holds it no more"
        );
        let back = a.claim(10).map(|c| c.rooms).expect("claim");
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].1.epoch, 3);
        assert_eq!(back[0].0.events.len(), 2);
    }

    /// Nodes started together on a new database migrate it one at a time.
    #[test]
    fn nodes_starting_together_all_open() {
        let Some(url) = database() else { return };
        let opened: Vec<_> = (0..4)
            .map(|_| {
                let url = url.clone();
                std::thread::spawn(move || PgStore::open_node(&url, Duration::from_secs(30)))
            })
            .collect();
        for node in opened {
            node.join().expect("joins").expect("each node opens");
        }
    }

    /// A node whose own lease ran out, or that drains, claims nothing.
    #[test]
    fn a_node_without_a_lease_claims_nothing() {
        let Some(url) = database() else { return };
        let (a, b) = (node(&url), node(&url));
        put(&a, fenced(&lease(&a, 1), create_at("r", 1))).expect("create");
        a.drain().expect("drain");
        b.drain().expect("drain");
        assert!(matches!(
            b.claim(10).map(|c| c.rooms),
            Err(StoreError::LeaseLost(_))
        ));
        let c = node(&url);
        expire(&url, &Cluster::node(&c));
        assert!(matches!(
            c.claim(10).map(|c| c.rooms),
            Err(StoreError::LeaseLost(_))
        ));
        c.rejoin().expect("rejoin");
        assert_eq!(c.claim(10).map(|c| c.rooms).expect("claim").len(), 1);
    }

    /// A room's fenced result lets its owner go: nobody claims a finished
    /// room, and nothing more is written to it.
    #[test]
    fn a_finished_room_has_no_owner() {
        let Some(url) = database() else { return };
        let (a, b) = (node(&url), node(&url));
        let of_a = lease(&a, 1);
        put(&a, fenced(&of_a, create_at("r", 1))).expect("create");
        let result = grundy_protocol::wire::MatchResult {
            winner: Some(0),
            reason: grundy_protocol::wire::EndReason::Resign,
        };
        let finish = WriteOp::Finish {
            room: "r".into(),
            result,
            finished_at_ms: 5,
            ratings: Vec::new(),
        };
        put(&a, fenced(&of_a, finish.clone())).expect("finish");
        let owners: i64 = raw(&url)
            .query_one("SELECT count(*) FROM room_owners", &[])
            .expect("count")
            .get(0);
        assert_eq!(owners, 0);
        a.drain().expect("drain");
        assert!(b.claim(10).map(|c| c.rooms).expect("claim").is_empty());
        assert!(lost(put(&a, fenced(&of_a, finish))));
    }

    /// One batch holds a refused write and good ones: only the refused one
    /// fails (the batch's single insert of events is taken apart).
    #[test]
    fn a_refused_write_fails_alone_in_its_batch() {
        let Some(url) = database() else { return };
        let (a, b) = (node(&url), node(&url));
        let of_a = lease(&a, 1);
        for room in ["r1", "r2"] {
            put(&a, fenced(&of_a, create_at(room, 1))).expect("create");
        }
        expire(&url, &Cluster::node(&a));
        let claimed = b.claim(1).map(|c| c.rooms).expect("claim one");
        assert_eq!(claimed[0].0.room, "r1");
        let held = a.hold();
        let refused = a.write(fenced(&of_a, event("r1", 1, moved(0, 0), 2)));
        let kept = a.write(fenced(&of_a, event("r2", 1, moved(0, 0), 2)));
        drop(held);
        assert!(lost(refused.blocking_recv().expect("answer")));
        kept.blocking_recv()
            .expect("answer")
            .expect("r2 is still a's");
    }

    /// A claim skips a room while a write of its owner is under way, and takes
    /// it once that write has ended.
    #[test]
    fn a_claim_never_runs_beside_a_write_of_the_old_owner() {
        let Some(url) = database() else { return };
        let (a, b) = (node(&url), node(&url));
        put(&a, fenced(&lease(&a, 1), create_at("r", 1))).expect("create");
        expire(&url, &Cluster::node(&a));
        let mut writing = raw(&url);
        let mut open = writing.transaction().expect("begin");
        open.execute(
            "SELECT grundy_fence((SELECT no FROM rooms WHERE id = 'r'), 1)",
            &[],
        )
        .expect("the old owner's epoch still holds");
        assert!(
            b.claim(10).map(|c| c.rooms).expect("claim").is_empty(),
            "skipped"
        );
        open.commit().expect("commit");
        assert_eq!(b.claim(10).map(|c| c.rooms).expect("claim").len(), 1);
    }

    fn create_tournament(id: &str) -> WriteOp {
        WriteOp::CreateTournament {
            tournament: id.into(),
            code: format!("T{}", id.to_uppercase()),
            settings: json!({"format": "swiss", "family": "nim", "rounds": 1}),
            owner_token: "owner".into(),
            created_at_ms: 1,
        }
    }

    fn tournament_event(id: &str, seq: u64, body: TournamentEventBody) -> WriteOp {
        let registers = matches!(body, TournamentEventBody::Registered { .. });
        WriteOp::TournamentEvent {
            tournament: id.into(),
            event: TournamentEvent { seq, body },
            at_ms: 1000 + seq,
            // A registration carries its player's token.
            player_token: registers.then(|| format!("tok{seq}")),
            player_account: None,
            ratings: Vec::new(),
        }
    }

    fn owner_rows(url: &str, tournament: &str) -> i64 {
        raw(url)
            .query_one(
                "SELECT count(*) FROM tournament_owners WHERE tournament = $1",
                &[&tournament],
            )
            .expect("count")
            .get(0)
    }

    /// A tournament is owned as a room is: made by its creator (found
    /// through its code on any node), claimed with its whole log when the
    /// creator's lease runs out, every later write of the old owner refused;
    /// once finished it has no owner and nobody claims it.
    #[test]
    fn a_tournament_passes_to_another_node_and_its_old_owner_writes_no_more() {
        let Some(url) = database() else { return };
        let (a, b) = (node(&url), node(&url));
        let first = lease(&a, 1);
        put(&a, fenced(&first, create_tournament("t1"))).expect("a creates it");
        let registered = TournamentEventBody::Registered {
            player: 0,
            name: "ada".into(),
            player_kind: None,
        };
        put(&a, fenced(&first, tournament_event("t1", 1, registered))).expect("a writes");
        assert_eq!(
            b.tournament_owner_of("tt1").expect("read"),
            Owner::Live("t1".to_owned(), Cluster::node(&a)),
            "found by its code, any case"
        );
        assert!(b.claim(10).expect("claim").is_empty(), "a is alive");

        expire(&url, &Cluster::node(&a));
        assert_eq!(
            b.tournament_owner_of("t1").expect("read"),
            Owner::Between,
            "a is gone, and nobody took it yet"
        );
        let claimed = b.claim(10).expect("claim");
        assert_eq!(claimed.tournaments.len(), 1);
        let (stored, second) = &claimed.tournaments[0];
        assert_eq!((stored.tournament.as_str(), second.epoch), ("t1", 2));
        assert_eq!(stored.events.len(), 1, "the log as a left it");
        assert_eq!(stored.players.len(), 1);
        let started = TournamentEventBody::Started { rounds: 1 };
        assert!(lost(put(
            &a,
            fenced(&first, tournament_event("t1", 2, started.clone()))
        )));
        put(&b, fenced(second, tournament_event("t1", 2, started))).expect("b writes");

        let finished = TournamentEventBody::Finished {
            standings: Vec::new(),
            ended_early: None,
        };
        put(&b, fenced(second, tournament_event("t1", 3, finished))).expect("b finishes it");
        assert_eq!(
            owner_rows(&url, "t1"),
            0,
            "a finished tournament has no owner"
        );
        assert_eq!(b.tournament_owner_of("t1").expect("read"), Owner::Unknown);
        b.drain().expect("drain");
        let c = node(&url);
        assert!(c.claim(10).expect("claim").is_empty(), "nothing to take");
    }

    fn account(id: u64, name: &str) -> WriteOp {
        WriteOp::Account(AccountWrite::Create(AccountRow {
            id,
            username: name.into(),
            username_key: name.to_lowercase(),
            kind: grundy_protocol::wire::AccountKind::Person,
            password_hash: "hash".into(),
            created_at_ms: 1,
        }))
    }

    fn api_token(id: &str, account: u64) -> WriteOp {
        WriteOp::Account(AccountWrite::Token(TokenRow {
            id: id.into(),
            account,
            name: "login".into(),
            scopes: Vec::new(),
            secret_sha256: [7; 32],
            created_at_ms: 1,
            expires_at_ms: None,
            revoked_at_ms: None,
        }))
    }

    /// Two nodes giving accounts at once: an id the other gave first is its
    /// own refusal (the node takes the next), a name (or one that reads the
    /// same) is taken whatever the node; a node reads another's account by name or by one of its tokens,
    /// with its live tokens and the one asked for.
    #[test]
    fn accounts_of_two_nodes_never_share_an_id_or_a_name() {
        let Some(url) = database() else { return };
        let (a, b) = (node(&url), node(&url));
        put(&a, account(1, "Ada")).expect("a makes ada");
        assert!(matches!(
            put(&b, account(1, "bob")),
            Err(StoreError::AccountIdTaken(1))
        ));
        assert!(matches!(
            put(&b, account(2, "ADA")),
            Err(StoreError::NameTaken(_))
        ));
        assert!(
            matches!(
                put(&b, account(2, "\u{0410}da")),
                Err(StoreError::NameTaken(_))
            ),
            "a name that reads the same (a Cyrillic A)"
        );
        put(&b, account(2, "bob")).expect("b makes bob");
        assert_eq!(a.next_account_id().expect("read"), 3, "a learns b's id");
        put(&a, api_token("t1", 1)).expect("a token");
        put(&a, api_token("t2", 1)).expect("another");
        let revoke = |token: &str| {
            WriteOp::Account(AccountWrite::Revoke {
                token: token.into(),
                at_ms: 5,
            })
        };
        put(&a, revoke("t1")).expect("revoked");

        let (accounts, tokens) = b
            .find_accounts(AccountsOf::Name("ada".into()))
            .expect("read");
        assert_eq!(accounts.len(), 1);
        assert_eq!(accounts[0].username, "Ada");
        let ids: Vec<&str> = tokens.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["t2"], "the live tokens");
        let (accounts, tokens) = b
            .find_accounts(AccountsOf::Token("t1".into()))
            .expect("read");
        assert_eq!(accounts.len(), 1);
        let mut ids: Vec<(&str, bool)> = tokens
            .iter()
            .map(|t| (t.id.as_str(), t.revoked_at_ms.is_some()))
            .collect();
        ids.sort();
        assert_eq!(ids, [("t1", true), ("t2", false)]);
        let (accounts, tokens) = b
            .find_accounts(AccountsOf::Token("nope".into()))
            .expect("read");
        assert!(accounts.is_empty() && tokens.is_empty());
    }

    /// A tournament's node reads its games' results in one read: a finished
    /// room's result, an unfinished one's None, nothing for a room never made.
    #[test]
    fn the_results_of_several_rooms_are_read_at_once() {
        let Some(url) = database() else { return };
        let a = node(&url);
        let of_a = lease(&a, 1);
        for room in ["r1", "r2"] {
            put(&a, fenced(&of_a, create_at(room, 1))).expect("create");
        }
        let result = MatchResult {
            winner: Some(1),
            reason: grundy_protocol::wire::EndReason::Rules,
        };
        let finish = WriteOp::Finish {
            room: "r2".into(),
            result,
            finished_at_ms: 9,
            ratings: Vec::new(),
        };
        put(&a, fenced(&of_a, finish)).expect("finish");
        let mut found = a
            .results_of(vec!["r1".into(), "r2".into(), "never".into()])
            .expect("read");
        found.sort_by(|x, y| x.0.cmp(&y.0));
        assert_eq!(found, [("r1".into(), None), ("r2".into(), Some(result))]);
    }

    /// A single server's rooms and tournaments become the cluster's when its
    /// nodes start; a single server and a node never share a database.
    #[test]
    fn a_single_servers_rooms_and_tournaments_pass_to_the_cluster() {
        let Some(url) = database() else { return };
        let single = PgStore::open(&url).expect("open");
        put(&single, create_at("old", 1)).expect("create");
        put(&single, create_tournament("t-old")).expect("create a tournament");
        assert!(matches!(
            PgStore::open_node(&url, Duration::from_secs(30)),
            Err(StoreError::InUse { .. })
        ));
        single.close();
        drop(single);
        let a = node(&url);
        assert!(matches!(PgStore::open(&url), Err(StoreError::InUse { .. })));
        let Claimed { tournaments, rooms } = a.claim(10).expect("claim");
        assert_eq!(rooms.len(), 1);
        assert_eq!(rooms[0].1.epoch, 1);
        put(&a, fenced(&rooms[0].1, event("old", 1, moved(0, 0), 2))).expect("a writes");
        assert_eq!(tournaments.len(), 1);
        assert_eq!(
            (tournaments[0].0.tournament.as_str(), tournaments[0].1.epoch),
            ("t-old", 1)
        );
        let started = TournamentEventBody::Started { rounds: 1 };
        put(
            &a,
            fenced(&tournaments[0].1, tournament_event("t-old", 1, started)),
        )
        .expect("a writes the tournament");
    }
}
