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
//! - Schema: versioned migrations (`server/migrations/postgres`, refinery),
//!   run when the store opens; a database migrated by a newer build is
//!   refused ([`StoreError::SchemaTooNew`]).
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
use std::sync::{mpsc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use grundy_protocol::wire::MatchRecord;
use tokio::sync::oneshot;

use super::sql::{in_read, PgConn};
use super::{
    accounts, lock, tournaments, AccountRow, MatchStore, RatingRow, StoreError, StoredRoom,
    StoredTournament, TokenRow, WriteOp, Writer,
};

mod embedded {
    refinery::embed_migrations!("migrations/postgres");
}

/// The advisory lock's key: one grundy-server per database ("grundy" in ASCII).
const LOCK_KEY: i64 = 0x6772_756e_6479;

/// How long opening waits for a lock another session holds.
const LOCK_PATIENCE: Duration = Duration::from_secs(2);

/// A read, run on the reader thread.
type Read = Box<dyn FnOnce(&mut PgConn) + Send>;

/// The store on PostgreSQL.
pub struct PgStore {
    writer: Writer,
    reads: Mutex<Option<mpsc::Sender<Read>>>,
    reader: Mutex<Option<JoinHandle<()>>>,
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`),
    /// migrates its schema, and takes it for this server. Blocks.
    pub fn open(url: &str) -> Result<PgStore, StoreError> {
        let shown = PathBuf::from(redacted(url));
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
        let holder = uuid::Uuid::new_v4().simple().to_string();
        let writer = Writer::spawn(move |queue, transactions| {
            let conn = connect(&writer_config, &writer_shown).and_then(|mut conn| {
                take_lock(&mut conn, &writer_shown)?;
                migrate(&mut conn, &writer_shown)?;
                mark_holder(&mut conn, &holder)?;
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
                reopen(conn, &writer_config, &writer_shown, Some(&holder))
            });
            // At once, not when the server notices the session's end: a store
            // opened right after this one finds the database free.
            let _ = conn
                .client
                .execute("SELECT pg_advisory_unlock($1)", &[&LOCK_KEY]);
        })
        .map_err(|e| open_error(format!("cannot start the writer thread: {e}")))?;
        let opened = started
            .recv()
            .unwrap_or_else(|_| Err(open_error("the writer thread stopped".into())));
        if let Err(e) = opened {
            writer.stop();
            return Err(e);
        }

        let (reads, jobs) = mpsc::channel::<Read>();
        let reader_config = config.clone();
        let reader_shown = shown.clone();
        let reader = std::thread::Builder::new()
            .name("grundy-store-reader".into())
            .spawn(move || {
                let mut conn: Option<PgConn> = None;
                while let Ok(job) = jobs.recv() {
                    // Connected at the first read, and again after a loss; a
                    // read that finds no database gets the error.
                    let ready = match conn.as_mut() {
                        Some(c) => reopen(c, &reader_config, &reader_shown, None).map(|_| c),
                        None => connect(&reader_config, &reader_shown).map(|c| conn.insert(c)),
                    };
                    match ready {
                        Ok(c) => job(c),
                        Err(e) => {
                            tracing::warn!(error = %e, "match store: no connection for a read");
                            drop(job);
                        }
                    }
                }
            })
            .map_err(|e| open_error(format!("cannot start the reader thread: {e}")))?;
        Ok(PgStore {
            writer,
            reads: Mutex::new(Some(reads)),
            reader: Mutex::new(Some(reader)),
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
        let (answer, answered) = mpsc::sync_channel(1);
        let job: Read = Box::new(move |conn| {
            let _ = answer.send(in_read(conn, read));
        });
        let sent = match lock(&self.reads).as_ref() {
            Some(reads) => reads.send(job).is_ok(),
            None => false,
        };
        if !sent {
            return Err(StoreError::Closed);
        }
        answered.recv().unwrap_or_else(|_| {
            Err(StoreError::Postgres(
                "the database cannot be reached for reads".into(),
            ))
        })
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

    fn close(&self) {
        self.writer.stop();
        // The writer's session, and with it the lock, ended with its thread;
        // reads go on working until the store is dropped.
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        self.close();
        drop(lock(&self.reads).take());
        if let Some(handle) = lock(&self.reader).take() {
            let _ = handle.join();
        }
    }
}

/// The URL without its password, for messages.
fn redacted(url: &str) -> String {
    match url.parse::<postgres::Config>() {
        Ok(config) if config.get_password().is_some() => {
            // user:password@ → user:***@ (the rest as given).
            match (url.find("://"), url.rfind('@')) {
                (Some(scheme), Some(at)) if scheme < at => {
                    let userinfo = &url[scheme + 3..at];
                    let user = userinfo.split(':').next().unwrap_or("");
                    format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
                }
                _ => "a PostgreSQL URL (password hidden)".into(),
            }
        }
        _ => url.to_owned(),
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
fn take_lock(conn: &mut PgConn, shown: &Path) -> Result<(), StoreError> {
    let deadline = Instant::now() + LOCK_PATIENCE;
    loop {
        let row = conn
            .client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&LOCK_KEY])
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
    holder: Option<&str>,
) -> Result<(), StoreError> {
    let idle = conn.idle_for() > Duration::from_secs(1);
    let lost =
        conn.client.is_closed() || (idle && conn.client.is_valid(Duration::from_secs(5)).is_err());
    if !lost {
        return Ok(());
    }
    let mut fresh = connect(config, shown)?;
    if let Some(holder) = holder {
        take_lock(&mut fresh, shown)?;
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

/// An error and its causes, in words (refinery's own `Debug` would print
/// every migration's SQL).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}

/// Runs the migrations this build has; refuses a database a newer build
/// migrated further.
fn migrate(conn: &mut PgConn, shown: &Path) -> Result<(), StoreError> {
    let open_error = |message: String| StoreError::Open {
        path: shown.to_path_buf(),
        message,
    };
    let runner = embedded::migrations::runner();
    let known = runner
        .get_migrations()
        .iter()
        .map(|m| i64::from(m.version()))
        .max()
        .unwrap_or(0);
    // refinery's table (`refinery_schema_history`) exists once a build has
    // migrated the database; before that there is nothing to compare.
    let migrated: bool = conn
        .client
        .query_one(
            "SELECT to_regclass('refinery_schema_history') IS NOT NULL",
            &[],
        )
        .map_err(|e| StoreError::from(super::sql::pg_error(e)))?
        .get(0);
    let applied = if migrated {
        runner
            .get_last_applied_migration(&mut conn.client)
            .map_err(|e| open_error(format!("reading the schema's version: {}", chain(&e))))?
    } else {
        None
    };
    if let Some(applied) = applied {
        let found = i64::from(applied.version());
        if found > known {
            return Err(StoreError::SchemaTooNew {
                found,
                supported: known,
            });
        }
    }
    runner
        .run(&mut conn.client)
        .map_err(|e| open_error(format!("migrating the schema: {}", chain(&e))))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::Place;
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
}
