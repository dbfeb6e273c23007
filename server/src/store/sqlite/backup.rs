//! `grundy-server backup`: a copy of an SQLite database, consistent, while a
//! server serves it (docs/deploy.md, "Backup and restore").
//!
//! SQLite's online backup copies every page in one step, inside one read
//! transaction: the copy is the database as of one commit, and in WAL mode
//! the server's writer goes on meanwhile (a backup in many small steps would
//! start over at each of the server's commits, and never end under load).
//! The server's lock (`FILE.lock`, `db_lock.rs`) is not taken: it says "one
//! server per file", and a reader is no server.
//!
//! The copy is written beside its destination under a temporary name, made
//! durable, then renamed into place: a backup that fails half-way leaves no
//! file that looks like a backup.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// Why a backup was not made.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{} is already there; choose another --to, or add --overwrite", .0.display())]
    Exists(PathBuf),
    #[error("there is no database at {}", .0.display())]
    NoDatabase(PathBuf),
    #[error("cannot read the database {}: {message}", path.display())]
    Source { path: PathBuf, message: String },
    #[error("cannot write the backup {}: {message}", path.display())]
    Destination { path: PathBuf, message: String },
}

/// How long one step waits for the database to be readable, in all.
const BUSY: Duration = Duration::from_secs(10);

/// What a backup copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    pub pages: u64,
    pub bytes: u64,
}

/// Copies the SQLite database `from` to `to` (refused if `to` exists,
/// unless `overwrite`), as of one moment, while a server may be writing it.
pub fn backup(from: &Path, to: &Path, overwrite: bool) -> Result<Copied, BackupError> {
    if !overwrite && to.exists() {
        return Err(BackupError::Exists(to.to_owned()));
    }
    if !from.is_file() {
        return Err(BackupError::NoDatabase(from.to_owned()));
    }
    let source_error = |e: rusqlite::Error| BackupError::Source {
        path: from.to_owned(),
        message: e.to_string(),
    };
    // Read and write, not created: a reader of a WAL database writes its
    // share of the `-shm` index, and a missing file is no database.
    let source = Connection::open_with_flags(
        from,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(source_error)?;
    source.busy_timeout(BUSY).map_err(source_error)?;
    // A file that is not a database fails here, not as a copy of garbage.
    source
        .query_row("SELECT count(*) FROM sqlite_schema", [], |row| {
            row.get::<_, i64>(0)
        })
        .map_err(source_error)?;

    let partial = partial_name(to);
    let destination_error = |message: String| BackupError::Destination {
        path: to.to_owned(),
        message,
    };
    let _ = std::fs::remove_file(&partial);
    create_private(&partial).map_err(|e| destination_error(e.to_string()))?;
    let copied = copy(&source, &partial).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        match e {
            Failed::Source(e) => source_error(e),
            Failed::Destination(e) => destination_error(e.to_string()),
        }
    })?;
    let placed = std::fs::File::open(&partial)
        .and_then(|file| file.sync_all())
        .and_then(|()| std::fs::rename(&partial, to))
        .and_then(|()| sync_dir(to));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&partial);
        return Err(destination_error(e.to_string()));
    }
    Ok(copied)
}

enum Failed {
    Source(rusqlite::Error),
    Destination(rusqlite::Error),
}

/// Every page of `source` into the database file `to`, in one step.
fn copy(source: &Connection, to: &Path) -> Result<Copied, Failed> {
    use rusqlite::backup::{Backup, StepResult};
    let mut destination = Connection::open(to).map_err(Failed::Destination)?;
    let backup = Backup::new(source, &mut destination).map_err(Failed::Destination)?;
    let deadline = std::time::Instant::now() + BUSY;
    loop {
        match backup.step(-1).map_err(Failed::Source)? {
            StepResult::Done => break,
            // Locked or busy for a moment (a checkpoint): again, within BUSY.
            _ if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            _ => {
                return Err(Failed::Source(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                    Some(format!("still busy after {} s", BUSY.as_secs())),
                )))
            }
        }
    }
    let progress = backup.progress();
    drop(backup);
    let page_size: i64 = destination
        .query_row("PRAGMA page_size", [], |row| row.get(0))
        .map_err(Failed::Destination)?;
    // The copy is one file: its journal mode (WAL, copied from the source's
    // header) is kept, and nothing is left in a `-wal` beside it.
    destination
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .map_err(Failed::Destination)?;
    destination
        .close()
        .map_err(|(_, e)| Failed::Destination(e))?;
    let pages = u64::try_from(progress.pagecount).unwrap_or(0);
    Ok(Copied {
        pages,
        bytes: pages * u64::try_from(page_size).unwrap_or(0),
    })
}

/// `to` with `.partial` added: the name the copy has until it is complete.
fn partial_name(to: &Path) -> PathBuf {
    let mut name = to.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// An empty file only its owner may read: the copy holds what the
/// database holds (password hashes, tokens' hashes).
fn create_private(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map(drop)
}

/// The rename made durable: the directory that holds `file`, synced.
fn sync_dir(file: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let dir = match file.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        std::fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database(path: &Path, rows: i64) {
        let conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch("CREATE TABLE t (n INTEGER)").unwrap();
        for n in 0..rows {
            conn.execute("INSERT INTO t VALUES (?1)", [n]).unwrap();
        }
    }

    fn rows(path: &Path) -> i64 {
        Connection::open(path)
            .unwrap()
            .query_row("SELECT count(*) FROM t", [], |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn a_copy_holds_every_row_and_is_its_owners_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("g.db"), dir.path().join("copy.db"));
        database(&from, 100);
        // A writer holds the database open meanwhile, with rows in its WAL.
        let writer = Connection::open(&from).unwrap();
        writer.execute("INSERT INTO t VALUES (100)", []).unwrap();
        let copied = backup(&from, &to, false).unwrap();
        assert!(copied.pages > 0 && copied.bytes > 0);
        assert_eq!(rows(&to), 101);
        assert!(!partial_name(&to).exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&to).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }

    #[test]
    fn an_existing_file_is_kept_unless_overwrite_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("g.db"), dir.path().join("copy.db"));
        database(&from, 3);
        std::fs::write(&to, b"yesterday's").unwrap();
        let refused = backup(&from, &to, false).unwrap_err();
        assert!(matches!(refused, BackupError::Exists(_)), "{refused}");
        assert!(refused.to_string().contains("--overwrite"));
        assert_eq!(std::fs::read(&to).unwrap(), b"yesterday's");
        backup(&from, &to, true).unwrap();
        assert_eq!(rows(&to), 3);
    }

    #[test]
    fn no_database_no_backup() {
        let dir = tempfile::tempdir().unwrap();
        let to = dir.path().join("copy.db");
        let refused = backup(&dir.path().join("missing.db"), &to, false).unwrap_err();
        assert!(matches!(refused, BackupError::NoDatabase(_)), "{refused}");
        let text = dir.path().join("notes.txt");
        std::fs::write(
            &text,
            "not a database, and long enough to look like a header of one",
        )
        .unwrap();
        let refused = backup(&text, &to, false).unwrap_err();
        assert!(matches!(refused, BackupError::Source { .. }), "{refused}");
        assert!(!to.exists() && !partial_name(&to).exists());
    }
}
