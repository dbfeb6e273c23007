//! The PostgreSQL schema: refinery's numbered migrations
//! (`server/migrations/postgres`), run when the store opens, one node of a
//! cluster at a time; a database a newer build migrated further is refused.

use std::path::Path;

use crate::store::sql::{pg_error, PgConn};
use crate::store::{accounts, in_words, StoreError};

mod embedded {
    refinery::embed_migrations!("migrations/postgres");
}

/// The advisory lock that makes nodes starting together migrate one at a time
/// (one more than the lock that keeps a database to one server).
const MIGRATION_KEY: i64 = super::LOCK_KEY + 1;

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
        .map_err(|e| StoreError::from(pg_error(e)))?
        .get(0);
    let applied = if migrated {
        runner
            .get_last_applied_migration(&mut conn.client)
            .map_err(|e| open_error(format!("reading the schema's version: {}", in_words(&e))))?
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
        .map_err(|e| open_error(format!("migrating the schema: {}", in_words(&e))))?;
    accounts::fill_looks(conn)
}

/// The migrations up to `version` only (for tests of databases an older
/// build wrote).
#[cfg(test)]
pub(super) fn migrate_to(url: &str, version: i32) {
    let mut client = postgres::Client::connect(url, postgres::NoTls).expect("connects");
    embedded::migrations::runner()
        .set_target(refinery::Target::Version(version))
        .run(&mut client)
        .expect("migrated");
}

/// [`migrate`], one node at a time: a cluster's nodes may start together.
pub(super) fn migrate_alone(conn: &mut PgConn, shown: &Path) -> Result<(), StoreError> {
    let pg = |e| StoreError::from(pg_error(e));
    conn.client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_KEY])
        .map_err(pg)?;
    let migrated = migrate(conn, shown);
    conn.client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_KEY])
        .map_err(pg)?;
    migrated
}
