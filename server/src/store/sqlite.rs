//! The embedded store: one SQLite file (WAL, `synchronous=FULL`), one
//! writer thread doing group commit (`writer.rs`), one connection for reads;
//! its schema, and the migration of older files on open.

use super::*;

/// How long a connection waits for a lock held by another connection.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS rooms (
    no             INTEGER PRIMARY KEY,
    id             TEXT    NOT NULL UNIQUE,
    code           TEXT    NOT NULL UNIQUE,
    spec           TEXT    NOT NULL,
    clock          TEXT,
    listed         INTEGER NOT NULL,
    bot            TEXT,
    hints          INTEGER NOT NULL DEFAULT 0,
    created_at_ms  INTEGER NOT NULL,
    result         TEXT,
    finished_at_ms INTEGER,
    tournament     TEXT
);
CREATE INDEX IF NOT EXISTS rooms_unfinished ON rooms (created_at_ms, id) WHERE result IS NULL;
CREATE TABLE IF NOT EXISTS seats (
    room_no INTEGER NOT NULL REFERENCES rooms (no),
    seat    INTEGER NOT NULL CHECK (seat IN (0, 1)),
    name    TEXT,
    token   TEXT    NOT NULL,
    house   INTEGER NOT NULL DEFAULT 0,
    kind    TEXT,
    account INTEGER,
    PRIMARY KEY (room_no, seat)
);
CREATE TABLE IF NOT EXISTS events (
    room_no INTEGER NOT NULL REFERENCES rooms (no),
    seq     INTEGER NOT NULL,
    at_ms   INTEGER NOT NULL,
    body    TEXT    NOT NULL,
    PRIMARY KEY (room_no, seq)
);
CREATE TABLE IF NOT EXISTS health (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    at_ms INTEGER NOT NULL
);
";

/// Versions 1 and 2 keyed seats and events by the room's text id. Their rows are
/// set aside, the tables made again, and the rows copied back in creation order.
pub(super) const REKEY_BY_ROOM_NUMBER: &str = "
CREATE TEMP TABLE old_rooms AS SELECT * FROM rooms;
CREATE TEMP TABLE old_seats AS SELECT * FROM seats;
CREATE TEMP TABLE old_events AS SELECT * FROM events;
DROP TABLE events;
DROP TABLE seats;
DROP TABLE rooms;
";
pub(super) const COPY_BACK_BY_ROOM_NUMBER: &str = "
INSERT INTO rooms (id, code, spec, clock, listed, bot, created_at_ms, result, finished_at_ms,
                   tournament)
    SELECT id, code, spec, clock, listed, bot, created_at_ms, result, finished_at_ms, tournament
    FROM old_rooms ORDER BY created_at_ms, id;
INSERT INTO seats (room_no, seat, name, token)
    SELECT rooms.no, s.seat, s.name, s.token FROM old_seats s JOIN rooms ON rooms.id = s.room;
INSERT INTO events (room_no, seq, at_ms, body)
    SELECT rooms.no, e.seq, e.at_ms, e.body FROM old_events e JOIN rooms ON rooms.id = e.room
    ORDER BY rooms.no, e.seq;
DROP TABLE old_rooms;
DROP TABLE old_seats;
DROP TABLE old_events;
";

/// Files before version 4 did not mark house seats: the server's house bot
/// then joined like any client, under the name `house-bot (LEVEL)`. So that the
/// bots of matches unfinished at the upgrade come back, such a seat counts as
/// the house's when its room asked for a bot of exactly that level, is
/// unfinished, and no other seat of it carries the name (a person who took the
/// name as well leaves it undecided, and then no seat counts). From version 4
/// on only the server's own reservation marks a seat.
pub(super) const MARK_OLD_HOUSE_SEATS: &str = "
UPDATE seats SET house = 1
WHERE name = (SELECT 'house-bot (' || bot || ')' FROM rooms
              WHERE rooms.no = seats.room_no AND rooms.result IS NULL)
  AND NOT EXISTS (SELECT 1 FROM seats other
                  WHERE other.room_no = seats.room_no AND other.seat <> seats.seat
                    AND other.name = seats.name);
";

/// One write to the store.
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
        // Before SQLite touches the file: a refused opener changes nothing.
        let lock = db_lock::DbLock::acquire(path)?;
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

/// Creates the schema on a new file; refuses a newer one.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    // Version 1 files lack the column that ties a room to its tournament.
    if found == 1 {
        tx.execute_batch("ALTER TABLE rooms ADD COLUMN tournament TEXT")?;
    }
    // Version 3 files lack the house mark (older ones get it with the new tables).
    if found == 3 {
        tx.execute_batch("ALTER TABLE seats ADD COLUMN house INTEGER NOT NULL DEFAULT 0")?;
    }
    // Versions 3 and 4 lack the rooms' hints (older ones: as above).
    if (3..=4).contains(&found) {
        tx.execute_batch("ALTER TABLE rooms ADD COLUMN hints INTEGER NOT NULL DEFAULT 0")?;
    }
    // Versions 3 to 5 lack who holds a seat and who registered (older ones:
    // the seats as above; the tournament players below).
    if (3..=5).contains(&found) {
        tx.execute_batch(
            "ALTER TABLE seats ADD COLUMN kind TEXT; ALTER TABLE seats ADD COLUMN account INTEGER;",
        )?;
    }
    if (2..=5).contains(&found) {
        tx.execute_batch("ALTER TABLE tournament_players ADD COLUMN account INTEGER")?;
    }
    // Versions 2 to 6 lack the rating period of a tournament: theirs rated
    // each game as it ended, and go on doing so (NULL).
    if (2..=6).contains(&found) {
        tx.execute_batch("ALTER TABLE tournaments ADD COLUMN rating_period TEXT")?;
    }
    // Version 6 kept an account's ratings per engine family.
    if found == 6 {
        tx.execute_batch("ALTER TABLE account_ratings RENAME COLUMN family TO game")?;
    }
    // Versions 6 and 7 lack what account names read as (filled in after).
    if (6..=7).contains(&found) {
        tx.execute_batch("ALTER TABLE accounts ADD COLUMN username_look TEXT")?;
    }
    let rekey = (1..=2).contains(&found);
    if rekey {
        tx.execute_batch(REKEY_BY_ROOM_NUMBER)?;
    }
    tx.execute_batch(SCHEMA)?;
    if rekey {
        tx.execute_batch(COPY_BACK_BY_ROOM_NUMBER)?;
    }
    tx.execute_batch(tournaments::SCHEMA)?;
    tx.execute_batch(accounts::SCHEMA)?;
    if (1..=3).contains(&found) {
        tx.execute_batch(MARK_OLD_HOUSE_SEATS)?;
    }
    if (2..=6).contains(&found) {
        tx.execute_batch(&tournaments::pool_old_heap_ratings())?;
    }
    if found < SCHEMA_VERSION {
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    tx.commit()?;
    accounts::fill_looks(conn)
}
