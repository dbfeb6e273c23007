//! One store per database file: an exclusive advisory lock on `FILE.lock`
//! beside the database, taken before SQLite opens the file and held while the
//! store is open. Two servers on one file would both restore the same
//! unfinished matches and both write their events.
//!
//! The lock belongs to the open file description, so the OS lets go of it
//! whenever the holder does: when the store is closed or dropped, and when
//! the process dies however it dies (`kill -9` included): a crash leaves no
//! stale lock. A second store in the same process is refused like one in
//! another process (each opens the file anew). The holder writes its pid into
//! the file, so that a refused opener can say who holds it.
//!
//! The lock file is left in place when the store closes (emptied): deleting
//! it would let two openers lock two different files of the same name.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::StoreError;

/// The lock on a database file, given up when dropped.
pub(super) struct DbLock {
    file: File,
}

/// `FILE.lock` for the database `FILE`.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl DbLock {
    /// Takes the lock for the database `db`, without waiting: a file already
    /// held is [`StoreError::InUse`], with the holder's pid when it wrote one.
    pub(super) fn acquire(db: &Path) -> Result<DbLock, StoreError> {
        let path = lock_path(db);
        let failed = |what: &str, e: std::io::Error| StoreError::Open {
            path: db.to_owned(),
            message: format!("cannot {what} the lock file {}: {e}", path.display()),
        };
        // Not truncated on open: that would wipe the holder's pid.
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| failed("open", e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(StoreError::InUse {
                    path: db.to_owned(),
                    pid: holder(&mut file),
                })
            }
            Err(TryLockError::Error(e)) => return Err(failed("lock", e)),
        }
        // The pid only informs a refused opener: failing to write it does
        // not make the lock any less ours.
        if let Err(e) = file
            .set_len(0)
            .and_then(|()| (&file).write_all(format!("{}\n", std::process::id()).as_bytes()))
        {
            tracing::warn!("cannot write the pid into {}: {e}", path.display());
        }
        Ok(DbLock { file })
    }
}

impl Drop for DbLock {
    fn drop(&mut self) {
        // No stale pid for whoever reads the file next; closing the file
        // (right after) releases the lock.
        let _ = self.file.set_len(0);
    }
}

/// The pid the holder wrote, if any (it may not have written it yet).
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}
