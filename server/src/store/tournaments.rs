//! Tournaments and ratings in the store: the tables, their writes and their
//! reads. A tournament is kept like a room: its settings, its players (with
//! their secret tokens) and its event log; its state is rebuilt by replaying
//! the log. Ratings are one row per player and game family, written in the
//! same op as the tournament event of the game that changed them, so a crash
//! can neither lose a rating change nor apply one twice.
//!
//! ```sql
//! tournaments        (id TEXT PK, code TEXT, settings TEXT json, owner_token TEXT,
//!                     created_at_ms INT, finished_at_ms INT NULL)
//! tournament_players (tournament -> tournaments.id, player INT, name TEXT, token TEXT,
//!                     PK (tournament, player), UNIQUE (tournament, name))
//! tournament_events  (tournament -> tournaments.id, seq INT, at_ms INT, body TEXT json,
//!                     PK (tournament, seq))
//! ratings            (family TEXT, player TEXT, rating REAL, deviation REAL,
//!                     volatility REAL, games INT, PK (family, player))
//! ```

use grundy_protocol::wire::{PlayerRating, TournamentEvent, TournamentEventBody};
use rusqlite::{ffi, params, Connection, OptionalExtension};
use serde_json::Value;

use super::{constraint, StoreError};

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tournaments (
    id             TEXT    NOT NULL PRIMARY KEY,
    code           TEXT    NOT NULL,
    settings       TEXT    NOT NULL,
    owner_token    TEXT    NOT NULL,
    created_at_ms  INTEGER NOT NULL,
    finished_at_ms INTEGER
);
CREATE INDEX IF NOT EXISTS tournaments_unfinished ON tournaments (created_at_ms, id)
    WHERE finished_at_ms IS NULL;
CREATE TABLE IF NOT EXISTS tournament_players (
    tournament TEXT    NOT NULL REFERENCES tournaments (id),
    player     INTEGER NOT NULL,
    name       TEXT    NOT NULL,
    token      TEXT    NOT NULL,
    PRIMARY KEY (tournament, player),
    UNIQUE (tournament, name)
);
CREATE TABLE IF NOT EXISTS tournament_events (
    tournament TEXT    NOT NULL REFERENCES tournaments (id),
    seq        INTEGER NOT NULL,
    at_ms      INTEGER NOT NULL,
    body       TEXT    NOT NULL,
    PRIMARY KEY (tournament, seq)
);
CREATE TABLE IF NOT EXISTS ratings (
    family     TEXT    NOT NULL,
    player     TEXT    NOT NULL,
    rating     REAL    NOT NULL,
    deviation  REAL    NOT NULL,
    volatility REAL    NOT NULL,
    games      INTEGER NOT NULL,
    PRIMARY KEY (family, player)
);
";

/// A player's rating in a game family, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingRow {
    pub family: String,
    pub rating: PlayerRating,
}

/// A tournament as stored, for restart recovery and for finished ones.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTournament {
    pub tournament: String,
    pub code: String,
    /// The settings with every default filled in (a `TournamentSettings`).
    pub settings: Value,
    pub owner_token: String,
    /// Players in number order: (name, token).
    pub players: Vec<(String, String)>,
    pub events: Vec<TournamentEvent>,
}

fn fail(tournament: &str, message: impl std::fmt::Display) -> StoreError {
    StoreError::Tournament {
        tournament: tournament.to_owned(),
        message: message.to_string(),
    }
}

fn unknown_or(tournament: &str, e: rusqlite::Error) -> StoreError {
    match constraint(&e) {
        Some(ffi::SQLITE_CONSTRAINT_FOREIGNKEY) => fail(tournament, "no such tournament"),
        _ => e.into(),
    }
}

fn to_i64(tournament: &str, what: &str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| fail(tournament, format!("{what} {value} is too large")))
}

pub(super) fn create(
    conn: &Connection,
    tournament: &str,
    code: &str,
    settings: &Value,
    owner_token: &str,
    created_at_ms: u64,
) -> Result<(), StoreError> {
    let created = to_i64(tournament, "created_at_ms", created_at_ms)?;
    conn.prepare_cached(
        "INSERT INTO tournaments (id, code, settings, owner_token, created_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        tournament,
        code,
        settings.to_string(),
        owner_token,
        created
    ])
    .map_err(|e| match constraint(&e) {
        Some(ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => fail(tournament, "exists already"),
        _ => e.into(),
    })?;
    Ok(())
}

fn player(
    conn: &Connection,
    tournament: &str,
    player: u32,
    name: &str,
    token: &str,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO tournament_players (tournament, player, name, token) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![tournament, player, name, token])
    .map_err(|e| match constraint(&e) {
        Some(ffi::SQLITE_CONSTRAINT_PRIMARYKEY | ffi::SQLITE_CONSTRAINT_UNIQUE) => fail(
            tournament,
            format!("player {player} or name {name:?} is registered already"),
        ),
        _ => unknown_or(tournament, e),
    })?;
    Ok(())
}

/// An event with what it brings (a registered player's row, the rating
/// changes of a game, for `finished` the mark that the tournament is over): one
/// op, so all or nothing.
pub(super) fn event(
    conn: &Connection,
    tournament: &str,
    event: &TournamentEvent,
    at_ms: u64,
    player_token: &Option<String>,
    ratings: &[RatingRow],
) -> Result<(), StoreError> {
    let seq = to_i64(tournament, "seq", event.seq)?;
    let at = to_i64(tournament, "at_ms", at_ms)?;
    let body = serde_json::to_string(event).map_err(|e| fail(tournament, e))?;
    conn.prepare_cached(
        "INSERT INTO tournament_events (tournament, seq, at_ms, body) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![tournament, seq, at, body])
    .map_err(|e| match constraint(&e) {
        Some(ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => {
            fail(tournament, format!("has an event {} already", event.seq))
        }
        _ => unknown_or(tournament, e),
    })?;
    match (&event.body, player_token) {
        (TournamentEventBody::Registered { player: p, name }, Some(token)) => {
            player(conn, tournament, *p, name, token)?
        }
        (TournamentEventBody::Registered { .. }, None) => {
            return Err(fail(tournament, "a registration needs the player's token"))
        }
        _ => {}
    }
    for row in ratings {
        let r = &row.rating;
        let games = to_i64(tournament, "games", r.games)?;
        conn.prepare_cached(
            "INSERT INTO ratings (family, player, rating, deviation, volatility, games)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (family, player) DO UPDATE SET rating = excluded.rating,
                 deviation = excluded.deviation, volatility = excluded.volatility,
                 games = excluded.games",
        )?
        .execute(params![
            row.family,
            r.player,
            r.rating,
            r.deviation,
            r.volatility,
            games
        ])?;
    }
    if matches!(event.body, TournamentEventBody::Finished { .. }) {
        conn.prepare_cached("UPDATE tournaments SET finished_at_ms = ?2 WHERE id = ?1")?
            .execute(params![tournament, at])?;
    }
    Ok(())
}

/// Every tournament not finished, oldest first.
pub(super) fn load_unfinished(conn: &Connection) -> Result<Vec<StoredTournament>, StoreError> {
    let ids: Vec<String> = conn
        .prepare_cached(
            "SELECT id FROM tournaments WHERE finished_at_ms IS NULL ORDER BY created_at_ms, id",
        )?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(t) = load(conn, &id)? {
            out.push(t);
        }
    }
    Ok(out)
}

/// One tournament, finished or not; `None` if unknown.
pub(super) fn load(conn: &Connection, id: &str) -> Result<Option<StoredTournament>, StoreError> {
    let row = conn
        .prepare_cached("SELECT code, settings, owner_token FROM tournaments WHERE id = ?1")?
        .query_row([id], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
            ))
        })
        .optional()?;
    let Some((code, settings, owner_token)) = row else {
        return Ok(None);
    };
    let settings: Value =
        serde_json::from_str(&settings).map_err(|e| fail(id, format!("bad settings JSON: {e}")))?;
    let mut players = Vec::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT player, name, token FROM tournament_players WHERE tournament = ?1
             ORDER BY player",
        )?;
        let mut rows = stmt.query([id])?;
        while let Some(row) = rows.next()? {
            let number: i64 = row.get(0)?;
            if number != players.len() as i64 {
                return Err(fail(id, format!("player numbers skip to {number}")));
            }
            players.push((row.get(1)?, row.get(2)?));
        }
    }
    let mut events = Vec::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT seq, body FROM tournament_events WHERE tournament = ?1 ORDER BY seq",
        )?;
        let mut rows = stmt.query([id])?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get(0)?;
            let body: String = row.get(1)?;
            let event: TournamentEvent = serde_json::from_str(&body)
                .map_err(|e| fail(id, format!("bad event {seq} JSON: {e}")))?;
            if event.seq as i64 != seq || seq != events.len() as i64 + 1 {
                return Err(fail(id, format!("event log out of order at {seq}")));
            }
            events.push(event);
        }
    }
    Ok(Some(StoredTournament {
        tournament: id.to_owned(),
        code,
        settings,
        owner_token,
        players,
        events,
    }))
}

/// Every rating row.
pub(super) fn load_ratings(conn: &Connection) -> Result<Vec<RatingRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT family, player, rating, deviation, volatility, games FROM ratings",
    )?;
    let rows = stmt.query_map([], |row| {
        Ok(RatingRow {
            family: row.get(0)?,
            rating: PlayerRating {
                player: row.get(1)?,
                rating: row.get(2)?,
                deviation: row.get(3)?,
                volatility: row.get(4)?,
                games: row.get::<_, i64>(5)?.max(0) as u64,
            },
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
