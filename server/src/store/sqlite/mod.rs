//! The embedded store: one SQLite file (WAL, `synchronous=FULL`), one
//! writer thread doing group commit (`writer.rs`), one connection for reads.
//! Its schema is numbered migrations (`migrate.rs`), run on open. Its files
//! are the owner's alone (`files.rs`). A copy while it serves: `backup.rs`.

use super::*;

pub mod backup;
mod files;
mod migrate;
use migrate::migrate;
#[cfg(test)]
pub(super) use migrate::{known_version, schema_at};

/// How long a connection waits for a lock held by another connection.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The embedded store: one SQLite file, one writer thread doing group commit,
/// one connection for reads.
pub struct SqliteStore {
    writer: Writer,
    reader: Mutex<Connection>,
    /// Held until the store is closed: one store per file.
    lock: Mutex<Option<db_lock::DbLock>>,
}

impl SqliteStore {
    /// Opens the store at `path`, creating the file and its schema if needed.
    /// Refuses a file of a newer schema version, and a file another store
    /// holds open ([`StoreError::InUse`]; see `lock.rs`).
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let file_error = |e: std::io::Error| StoreError::Open {
            path: path.to_owned(),
            message: e.to_string(),
        };
        files::make_dir(path).map_err(file_error)?;
        // Before SQLite touches the file: a refused opener changes nothing.
        let lock = db_lock::DbLock::acquire(path)?;
        // The file is made 0600 before SQLite makes it with the umask's mode
        // (its -wal and -shm take the file's).
        files::prepare(path).map_err(file_error)?;
        let open_error = |e: rusqlite::Error| StoreError::Open {
            path: path.to_owned(),
            message: e.to_string(),
        };
        let mut writer = Connection::open(path).map_err(open_error)?;
        configure(&writer, WRITER_CACHE_KIB).map_err(open_error)?;
        let mode: String = writer
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(open_error)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Open {
                path: path.to_owned(),
                message: format!("cannot use WAL mode (journal_mode is {mode})"),
            });
        }
        migrate(&mut writer).map_err(|e| match e {
            StoreError::Sqlite(message) => StoreError::Open {
                path: path.to_owned(),
                message,
            },
            other => other,
        })?;

        let reader = Connection::open(path).map_err(open_error)?;
        configure(&reader, READER_CACHE_KIB).map_err(open_error)?;
        reader
            .pragma_update(None, "query_only", true)
            .map_err(open_error)?;

        let writer = Writer::spawn(move |queue, transactions| {
            writer_loop(&mut writer, queue, transactions, |_| Ok(()))
        })
        .map_err(|e| StoreError::Open {
            path: path.to_owned(),
            message: format!("cannot start the writer thread: {e}"),
        })?;
        Ok(SqliteStore {
            writer,
            reader: Mutex::new(reader),
            lock: Mutex::new(Some(lock)),
        })
    }

    /// How many write transactions the writer has committed so far (each holds up
    /// to [`MAX_BATCH`] ops).
    pub fn transactions(&self) -> u64 {
        self.writer.transactions()
    }

    pub(super) fn reader(&self) -> MutexGuard<'_, Connection> {
        // A panic while reading leaves the connection usable.
        self.reader.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tests only: stops the writer until the returned sender is dropped.
    #[cfg(test)]
    pub(super) fn hold(&self) -> mpsc::Sender<()> {
        self.writer.hold()
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        self.close();
    }
}

impl MatchStore for SqliteStore {
    fn write(&self, op: WriteOp) -> oneshot::Receiver<Result<(), StoreError>> {
        self.writer.write(op)
    }

    fn load_unfinished(&self) -> Result<Vec<StoredRoom>, StoreError> {
        in_read(&mut *self.reader(), load_unfinished_rooms)
    }

    fn record(&self, key: &str) -> Result<Option<MatchRecord>, StoreError> {
        in_read(&mut *self.reader(), |conn| read_record(conn, key))
    }

    fn load_unfinished_tournaments(&self) -> Result<Vec<StoredTournament>, StoreError> {
        in_read(&mut *self.reader(), tournaments::load_unfinished)
    }

    fn load_tournament(&self, tournament: &str) -> Result<Option<StoredTournament>, StoreError> {
        in_read(&mut *self.reader(), |conn| {
            tournaments::load(conn, tournament)
        })
    }

    fn load_ratings(&self) -> Result<Vec<RatingRow>, StoreError> {
        tournaments::load_ratings(&mut *self.reader())
    }

    fn load_accounts(&self) -> Result<(Vec<AccountRow>, Vec<TokenRow>), StoreError> {
        in_read(&mut *self.reader(), accounts::load)
    }

    fn player_history(
        &self,
        account: u64,
        games: usize,
        tournaments: usize,
    ) -> Result<PlayerHistory, StoreError> {
        in_read(&mut *self.reader(), |conn| {
            players::read(conn, account, games, tournaments)
        })
    }

    fn close(&self) {
        self.writer.stop();
        // Nothing more is written: another store may have the file (this
        // one's reads still work).
        drop(lock(&self.lock).take());
    }
}

/// The writer's page cache. Small on purpose: a commit after a b-tree split
/// walks the writer's whole page cache (SQLite rekeys a page to the lock
/// page's number while it balances, and the commit's truncate then scans
/// every cached page), which with 64 MiB cached was 2 % of the server's CPU
/// under load. Most of what the writer touches is the tails of its tables
/// and indexes (events, seats), and a fresh database under load reads no
/// more pages back with a smaller cache (the same `pread`s per commit,
/// measured with 2, 4 and 64 MiB). The rooms' id and code indexes are
/// random: once they outgrow the cache (about 100,000 rooms), a new or
/// finished room reads a page or two back from the OS's cache.
pub(super) const WRITER_CACHE_KIB: i64 = 4096;

/// The reader's page cache: match records and the tables loaded at start.
pub(super) const READER_CACHE_KIB: i64 = 65536;

/// Settings every connection needs (`journal_mode` is kept by the file),
/// with `cache_kib` KiB of page cache.
pub(super) fn configure(conn: &Connection, cache_kib: i64) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // Negative: a size in KiB rather than in pages.
    conn.pragma_update(None, "cache_size", -cache_kib)?;
    Ok(())
}
