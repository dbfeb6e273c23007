//! Who may read the database: its owner only. It holds accounts' password
//! hashes and tokens' hashes (API, seat and tournament tokens), so the file, its `-wal` and
//! `-shm` are 0600, and a directory the server makes for it 0700, whatever
//! the umask. A file found looser (from an older build, or copied in) is
//! tightened to its owner's bits, with a warning; one the server may not
//! change is left as it is, with a warning too (the store still opens).

use std::path::{Path, PathBuf};

/// The database's files besides itself, which SQLite makes in WAL mode
/// (with the database's mode).
const COMPANIONS: [&str; 2] = ["-wal", "-shm"];

/// Makes `db`'s missing directories, each 0700 (before the lock beside
/// the file is taken: a directory that was missing is nobody's yet).
pub(super) fn make_dir(db: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
        make_dirs(dir)?;
    }
    #[cfg(not(unix))]
    let _ = db;
    Ok(())
}

/// Creates `db` (0600, empty: SQLite takes an empty file for a new
/// database) if it is not there, and tightens its files that are. Before
/// SQLite opens it.
pub(super) fn prepare(db: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        create(db)?;
        for file in files(db) {
            tighten(&file);
        }
    }
    #[cfg(not(unix))]
    let _ = db;
    Ok(())
}

/// The database's files: itself, `-wal`, `-shm`.
fn files(db: &Path) -> impl Iterator<Item = PathBuf> + '_ {
    std::iter::once(db.to_owned()).chain(COMPANIONS.iter().map(|suffix| {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    }))
}

/// Creates `dir` and its missing parents, each 0700.
#[cfg(unix)]
fn make_dirs(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if dir.exists() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|d| !d.as_os_str().is_empty()) {
        make_dirs(parent)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        // Made meanwhile by someone else: theirs, left as it is.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => return Err(e),
    }
    // The umask may have taken bits away; the mode is exactly 0700.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// Creates `db` empty with mode 0600, if it is not there.
#[cfg(unix)]
fn create(db: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(db);
    match made {
        Ok(file) => file.set_permissions(std::fs::Permissions::from_mode(0o600)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Takes the group's and others' bits off `file`, if it exists and has any.
#[cfg(unix)]
fn tighten(file: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::metadata(file) else {
        return;
    };
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 == 0 {
        return;
    }
    let tight = mode & 0o700;
    match std::fs::set_permissions(file, std::fs::Permissions::from_mode(tight)) {
        Ok(()) => tracing::warn!(
            "the database file {} was readable by others (mode {mode:04o}); now {tight:04o}",
            file.display()
        ),
        Err(e) => tracing::warn!(
            "the database file {} is readable by others (mode {mode:04o}) \
             and cannot be changed: {e}",
            file.display()
        ),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_new_file_and_its_directories_are_the_owners_alone() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a/b/g.db");
        make_dir(&db).unwrap();
        prepare(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        assert_eq!(mode(&dir.path().join("a/b")), 0o700);
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        assert_eq!(std::fs::metadata(&db).unwrap().len(), 0);
    }

    #[test]
    fn looser_files_are_tightened_and_their_contents_kept() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("g.db");
        std::fs::write(&db, b"kept").unwrap();
        let wal = dir.path().join("g.db-wal");
        std::fs::write(&wal, b"").unwrap();
        for file in [&db, &wal] {
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o664)).unwrap();
        }
        prepare(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        assert_eq!(mode(&wal), 0o600);
        assert_eq!(std::fs::read(&db).unwrap(), b"kept");
    }

    #[test]
    fn a_file_in_the_current_directory() {
        let names: Vec<_> = files(Path::new("g.db")).collect();
        assert_eq!(
            names,
            [
                PathBuf::from("g.db"),
                PathBuf::from("g.db-wal"),
                PathBuf::from("g.db-shm")
            ]
        );
    }
}
