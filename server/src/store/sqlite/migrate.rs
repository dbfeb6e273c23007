//! The SQLite schema: refinery's numbered migrations
//! (`server/migrations/sqlite`, one file per schema version), run in one
//! transaction when the store opens. Files of the builds that kept their
//! version in `PRAGMA user_version` alone (versions 1 to 8) have no
//! refinery table: the migrations up to that version are recorded as
//! applied, and the rest run. `user_version` keeps the version too, so that
//! those builds refuse a file migrated further.

use rusqlite::{Connection, OptionalExtension};

use crate::store::{accounts, in_words, StoreError};

mod embedded {
    refinery::embed_migrations!("migrations/sqlite");
}

/// The refinery table that records the migrations applied.
const HISTORY: &str = "refinery_schema_history";

/// The schema version of the last migration this build has.
pub(in crate::store) fn known_version() -> i64 {
    embedded::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| i64::from(m.version()))
        .max()
        .unwrap_or(0)
}

/// Brings the file's schema to this build's; refuses a newer one.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let known = known_version();
    // Migration 9 rewrites the clear tokens of before: what they were must
    // not stay in the file's free space (`hash_clear_tokens`).
    conn.pragma_update(None, "secure_delete", true)?;
    let in_pragma: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let recorded = recorded_version(conn)?;
    let found = in_pragma.max(recorded.unwrap_or(0));
    if found > known {
        return Err(StoreError::SchemaTooNew {
            found,
            supported: known,
        });
    }
    let failed =
        |what: &str, e: refinery::Error| StoreError::Sqlite(format!("{what}: {}", in_words(&e)));
    if recorded.is_none() && in_pragma > 0 {
        let version = i32::try_from(in_pragma).map_err(|_| StoreError::SchemaTooNew {
            found,
            supported: known,
        })?;
        embedded::migrations::runner()
            .set_target(refinery::Target::FakeVersion(version))
            .run(conn)
            .map_err(|e| failed("recording the schema's version", e))?;
    }
    embedded::migrations::runner()
        .set_grouped(true)
        .run(conn)
        .map_err(|e| failed("migrating the schema", e))?;
    if in_pragma != known {
        conn.pragma_update(None, "user_version", known)?;
    }
    hash_clear_tokens(conn)?;
    accounts::fill_looks(conn)
}

/// The columns that keep tokens as their hash (`secret::hash`).
const TOKEN_COLUMNS: [(&str, &str); 4] = [
    ("seats", "token"),
    ("seats", "player_token"),
    ("tournaments", "owner_token"),
    ("tournament_players", "token"),
];

/// Hashes the tokens migration 9 marked `clear:` (those written before it),
/// in one transaction. SQLite has no SHA-256 of its own: doing it here
/// keeps the one hashing code (`secret::hash`) and needs no SQL function
/// registered on every connection; the mark makes it idempotent, so a crash
/// after the migration only leaves it for the next start.
fn hash_clear_tokens(conn: &mut Connection) -> Result<(), StoreError> {
    let hashed = hash_marked(conn);
    // On since the migrations began (see `migrate`): rewriting is over.
    conn.pragma_update(None, "secure_delete", false)?;
    hashed
}

fn hash_marked(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn.transaction()?;
    for (table, column) in TOKEN_COLUMNS {
        let marked: Vec<(i64, String)> = tx
            .prepare(&format!(
                "SELECT rowid, {column} FROM {table} WHERE {column} LIKE 'clear:%'"
            ))?
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let mut update = tx.prepare(&format!(
            "UPDATE {table} SET {column} = ?1 WHERE rowid = ?2"
        ))?;
        for (rowid, text) in marked {
            let clear = text.strip_prefix("clear:").unwrap_or(&text);
            update.execute(rusqlite::params![crate::secret::hash(clear), rowid])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// The last version refinery's table records; `None` without the table.
fn recorded_version(conn: &Connection) -> Result<Option<i64>, StoreError> {
    let table: Option<String> = conn
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [HISTORY],
            |row| row.get(0),
        )
        .optional()?;
    if table.is_none() {
        return Ok(None);
    }
    let last: Option<i64> =
        conn.query_row(&format!("SELECT MAX(version) FROM {HISTORY}"), [], |row| {
            row.get(0)
        })?;
    Ok(Some(last.unwrap_or(0)))
}

/// The tables as version `version` wrote them: the migrations up to it (for
/// tests of older files).
#[cfg(test)]
pub(in crate::store) fn schema_at(version: i64) -> String {
    let runner = embedded::migrations::runner();
    let mut migrations: Vec<_> = runner
        .get_migrations()
        .iter()
        .filter(|m| i64::from(m.version()) <= version)
        .collect();
    migrations.sort_by_key(|m| m.version());
    migrations
        .iter()
        .filter_map(|m| m.sql())
        .collect::<Vec<_>>()
        .join("\n")
}
