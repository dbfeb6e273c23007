//! What the client keeps between runs, in its config folder, readable by the
//! owner only: the seats of unfinished matches (so `grundy play --resume`
//! comes back after Ctrl-C, a closed terminal or a crash) and the person's
//! past games (`grundy games`).
//!
//! Files are changed under a lock and replaced whole (written beside and
//! renamed), so two `grundy` processes at once, or a crash, never leave
//! half a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// `grundy`'s folder in the person's config directory.
pub fn config_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("grundy"))
}

fn file(name: &str) -> Result<PathBuf> {
    Ok(config_dir()
        .context("no config directory (set HOME or XDG_CONFIG_HOME)")?
        .join(name))
}

/// A seat of a match not known to be over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptSeat {
    pub server: String,
    pub room: String,
    pub code: String,
    pub seat: u8,
    pub token: String,
    /// The name this seat was taken under.
    pub name: String,
    /// The game's name, e.g. "Kayles".
    pub game: String,
    /// The house bot's level played against, if any (for a rematch).
    #[serde(default)]
    pub bot: Option<String>,
    /// Milliseconds since the Unix epoch when the seat was taken.
    pub since_ms: u64,
}

/// A finished match the person played.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastGame {
    pub server: String,
    pub room: String,
    pub code: String,
    pub game: String,
    pub seat: u8,
    pub opponent: String,
    /// "won", "lost" or "no winner".
    pub result: String,
    /// How it ended, in words ("by the rules", "on time", ...).
    pub reason: String,
    pub moves: u64,
    pub ended_ms: u64,
}

/// Past games kept (the oldest are forgotten first).
const MAX_PAST: usize = 1000;

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The seats kept for `server`, newest first.
pub fn kept(server: &str) -> Result<Vec<KeptSeat>> {
    let mut seats: Vec<KeptSeat> = read(&file("seats.json")?)?;
    seats.retain(|s| s.server == server);
    seats.sort_by_key(|s| std::cmp::Reverse(s.since_ms));
    Ok(seats)
}

/// Every seat kept, newest first.
pub fn all_kept() -> Result<Vec<KeptSeat>> {
    let mut seats: Vec<KeptSeat> = read(&file("seats.json")?)?;
    seats.sort_by_key(|s| std::cmp::Reverse(s.since_ms));
    Ok(seats)
}

/// Keeps a seat (replacing one of the same room and seat).
pub fn keep(seat: KeptSeat) -> Result<()> {
    update(&file("seats.json")?, |seats: &mut Vec<KeptSeat>| {
        seats.retain(|s| !(s.server == seat.server && s.room == seat.room && s.seat == seat.seat));
        seats.push(seat);
    })
}

/// Forgets the seats of a room (its match is over, or cannot come back).
pub fn forget(server: &str, room: &str) -> Result<()> {
    update(&file("seats.json")?, |seats: &mut Vec<KeptSeat>| {
        seats.retain(|s| !(s.server == server && s.room == room));
    })
}

/// Adds a finished match to the past games (once per room and seat).
pub fn remember(game: PastGame) -> Result<()> {
    update(&file("games.json")?, |games: &mut Vec<PastGame>| {
        games.retain(|g| !(g.server == game.server && g.room == game.room && g.seat == game.seat));
        games.push(game);
        let extra = games.len().saturating_sub(MAX_PAST);
        games.drain(..extra);
    })
}

/// The past games, newest first.
pub fn past() -> Result<Vec<PastGame>> {
    let mut games: Vec<PastGame> = read(&file("games.json")?)?;
    games.reverse();
    Ok(games)
}

fn read<T: DeserializeOwned + Default>(path: &Path) -> Result<T> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .with_context(|| format!("{} is not what grundy wrote there", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Reads, changes and writes back a file under its lock.
fn update<T, F>(path: &Path, change: F) -> Result<()>
where
    T: Serialize + DeserializeOwned + Default,
    F: FnOnce(&mut T),
{
    let dir = path.parent().context("a kept file has a folder")?;
    make_private_dir(dir)?;
    let lock_path = path.with_extension("lock");
    let lock = private_options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .with_context(|| format!("cannot open {}", lock_path.display()))?;
    lock.lock()
        .with_context(|| format!("cannot lock {}", lock_path.display()))?;
    let mut value: T = read(path)?;
    change(&mut value);
    write_private(path, serde_json::to_string_pretty(&value)?.as_bytes())
    // The lock is let go when `lock` is dropped.
}

fn private_options() -> std::fs::OpenOptions {
    #[allow(unused_mut)]
    let mut options = std::fs::OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

/// Makes `dir` (and its parents), readable by its owner only.
pub fn make_private_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

/// Makes `path` if it is not there, owner-only (and makes it owner-only if it is).
pub fn touch_private(path: &Path) -> Result<()> {
    let file = private_options()
        .append(true)
        .create(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// Writes `path` whole, owner-only: beside it first, then renamed, so a crash
/// leaves the old file or the new one.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("a kept file has a folder")?;
    make_private_dir(dir)?;
    let tmp = path.with_extension("tmp");
    {
        let mut file = private_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}
