//! Several nodes on one PostgreSQL database (`--cluster`): each node's own
//! lease, and each room's owner and epoch (migrations/postgres/V2__cluster.sql).
//!
//! - A node is alive while its row in `nodes` has not expired; it renews it
//!   every fraction of the lease ([`renew`]). Expiry is the database's
//!   clock, so the nodes' clocks need not agree.
//! - Every unfinished room has one owner (`room_owners`: node, epoch). A
//!   node creating a room owns it at epoch 1 (a fenced `CreateRoom`); its
//!   fenced result deletes the row. The rooms of a node that expired or
//!   drains are orphans: any node takes them ([`claim`]), raising their
//!   epoch, and restores them from their logs. A node dead for a day that
//!   owns nothing is forgotten (not sooner: one that has not noticed its
//!   lease ran out may still make a room under its id).
//! - Every write of a room carries the writer's epoch and is refused by the
//!   database (`grundy_fence`, `StoreError::LeaseLost`) once the room's epoch
//!   moved on. The fence takes a share lock on the owner's row and a claim
//!   skips rows so locked: a claim never runs beside a write of the old
//!   owner, and reads the log after every write the old owner committed.
//!
//! These run on the store's lease thread (`PgStore`), one transaction each.

use std::sync::Arc;
use std::time::Duration;

use super::sql::{args, Arg, PgConn, Sql};
use super::{
    load_unfinished_rooms_numbered, tournaments, Claimed, Lease, Owner, StoreError, StoredRoom,
    StoredTournament,
};

/// Registers a new node alive for `lease`, and gives every unfinished room
/// that has no owner (one of a single server's, before this database was a
/// cluster's) an owner no node is, so that it is an orphan to claim.
pub(super) fn register(conn: &mut PgConn, node: &str, lease: Duration) -> Result<(), StoreError> {
    conn.batch("BEGIN")?;
    let done = (|| {
        conn.exec(
            "INSERT INTO nodes (id, expires_at)
             VALUES (?1, clock_timestamp() + ?2 * INTERVAL '1 millisecond')",
            args![node, millis(lease)],
        )?;
        conn.exec(
            "INSERT INTO room_owners (room_no, node, epoch)
             SELECT no, '', 0 FROM rooms WHERE result IS NULL
             ON CONFLICT (room_no) DO NOTHING",
            args![],
        )?;
        conn.exec(
            "INSERT INTO tournament_owners (tournament, node, epoch)
             SELECT id, '', 0 FROM tournaments WHERE finished_at_ms IS NULL
             ON CONFLICT (tournament) DO NOTHING",
            args![],
        )?;
        // Nodes gone for a day that own nothing are forgotten. Not sooner: a
        // node that has not yet noticed its lease ran out may still create a
        // room under its id, and that room must stay an orphan to claim.
        conn.exec(
            "DELETE FROM nodes n
             WHERE n.expires_at < clock_timestamp() - INTERVAL '1 day'
               AND NOT EXISTS (SELECT 1 FROM room_owners o WHERE o.node = n.id)
               AND NOT EXISTS (SELECT 1 FROM tournament_owners o WHERE o.node = n.id)",
            args![],
        )?;
        Ok::<_, StoreError>(())
    })();
    finish(conn, done)
}

/// The cluster's name and secret, made by the first node to ask.
pub(super) fn identity(conn: &mut PgConn) -> Result<(String, Vec<u8>), StoreError> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| {
        StoreError::Postgres(format!("no randomness for the cluster's secret: {e}"))
    })?;
    let name = uuid::Uuid::new_v4().simple().to_string();
    conn.exec(
        "INSERT INTO cluster (id, name, secret) VALUES (1, ?1, ?2) ON CONFLICT (id) DO NOTHING",
        args![name.as_str(), &secret[..]],
    )?;
    let mut row = conn
        .query_one("SELECT name, secret FROM cluster WHERE id = 1", args![])?
        .ok_or_else(|| StoreError::Postgres("the cluster's row is missing".into()))?;
    let name = row.text(0).map_err(StoreError::Postgres)?;
    let secret = row.blob(1).map_err(StoreError::Postgres)?;
    Ok((name, secret))
}

/// Where the room `key` names (its id or its code, any case) is: the live
/// node that owns it, between owners (its owner's lease ran out, or it
/// drains), or nowhere (unknown, or finished).
pub(super) fn owner_of(conn: &mut PgConn, key: &str) -> Result<Owner, StoreError> {
    whereabouts(
        conn,
        "SELECT r.id, COALESCE(o.node, ''),
                CASE WHEN n.expires_at > clock_timestamp() AND NOT n.draining
                     THEN 1 ELSE 0 END
         FROM rooms r
         LEFT JOIN room_owners o ON o.room_no = r.no
         LEFT JOIN nodes n ON n.id = o.node
         WHERE (r.id = ?1 OR r.code = ?2) AND r.result IS NULL
         LIMIT 1",
        key,
    )
}

/// Where the tournament `key` names (its id or its code, any case) is, as
/// [`owner_of`] says of a room.
pub(super) fn tournament_owner_of(conn: &mut PgConn, key: &str) -> Result<Owner, StoreError> {
    whereabouts(
        conn,
        "SELECT t.id, COALESCE(o.node, ''),
                CASE WHEN n.expires_at > clock_timestamp() AND NOT n.draining
                     THEN 1 ELSE 0 END
         FROM tournaments t
         LEFT JOIN tournament_owners o ON o.tournament = t.id
         LEFT JOIN nodes n ON n.id = o.node
         WHERE (t.id = ?1 OR t.code = ?2) AND t.finished_at_ms IS NULL
         LIMIT 1",
        key,
    )
}

/// What `query` finds for `key` as an id (`?1`) or a code (`?2`): the id,
/// the owner, and whether the owner is live.
fn whereabouts(conn: &mut PgConn, query: &str, key: &str) -> Result<Owner, StoreError> {
    let row = conn.query_one(query, args![key, key.to_ascii_uppercase().as_str()])?;
    let Some(mut row) = row else {
        return Ok(Owner::Unknown);
    };
    let id = row.text(0).map_err(StoreError::Postgres)?;
    let node = row.text(1).map_err(StoreError::Postgres)?;
    let live = row.flag(2).map_err(StoreError::Postgres)?;
    Ok(if live {
        Owner::Live(id, node.into())
    } else {
        Owner::Between
    })
}

/// Renews the node's lease for `lease` from now; [`StoreError::LeaseLost`]
/// when it had expired already (its rooms may be another node's by now).
pub(super) fn renew(conn: &mut PgConn, node: &str, lease: Duration) -> Result<(), StoreError> {
    let renewed = conn.exec(
        "UPDATE nodes SET expires_at = clock_timestamp() + ?2 * INTERVAL '1 millisecond'
         WHERE id = ?1 AND expires_at > clock_timestamp()",
        args![node, millis(lease)],
    )?;
    if renewed == 0 {
        return Err(StoreError::LeaseLost(format!(
            "node {node}: its lease ran out before it was renewed"
        )));
    }
    Ok(())
}

/// Takes up to `limit` orphaned rooms and up to `limit` orphaned
/// tournaments for `node` (their owner expired or drains, or never was),
/// raising each one's epoch, and reads them back with their seats, players
/// and logs: what the node needs to restore them.
pub(super) fn claim(
    conn: &mut PgConn,
    node: &Arc<str>,
    limit: usize,
) -> Result<Claimed, StoreError> {
    conn.batch("BEGIN")?;
    let done = (|| {
        // Rows a write of the old owner holds are skipped: taken next time.
        // A node whose own lease ran out claims nothing: it must rejoin.
        let alive = conn.query_one(
            "SELECT 1 FROM nodes
             WHERE id = ?1 AND expires_at > clock_timestamp() AND NOT draining",
            args![&**node],
        )?;
        if alive.is_none() {
            return Err(StoreError::LeaseLost(format!(
                "node {node}: its lease ran out; it claims nothing until it rejoins"
            )));
        }
        let tournaments = claim_tournaments(conn, node, limit)?;
        let rooms = claim_rooms(conn, node, limit)?;
        Ok(Claimed { tournaments, rooms })
    })();
    finish(conn, done)
}

/// An owners table: whose rows it holds and how to tell a finished one.
struct Owners {
    table: &'static str,
    /// Its key column (a room's number, a tournament's id).
    key: &'static str,
    /// The joined table and the condition that the row's thing is finished.
    finished: &'static str,
}

const ROOM_OWNERS: Owners = Owners {
    table: "room_owners",
    key: "room_no",
    finished: "rooms r WHERE o.room_no = r.no AND r.result IS NOT NULL",
};

const TOURNAMENT_OWNERS: Owners = Owners {
    table: "tournament_owners",
    key: "tournament",
    finished: "tournaments t WHERE o.tournament = t.id AND t.finished_at_ms IS NOT NULL",
};

/// Takes up to `limit` orphans of `owners` for `node` (their owner expired,
/// drains, or never was), raising each one's epoch: rows of (key, epoch).
/// Rows of dead nodes' finished ones (a result written by a single server,
/// or before the row was made) own nothing and go first. Only unfinished
/// ones have owners (a fenced result deletes its row), and orphans are
/// found through the dead nodes' index; a row a write of the old owner
/// holds is skipped, taken next time.
fn take_orphans(
    conn: &mut PgConn,
    owners: &Owners,
    node: &Arc<str>,
    limit: usize,
) -> Result<Vec<super::sql::Row>, StoreError> {
    let Owners {
        table,
        key,
        finished,
    } = owners;
    conn.exec(
        &format!(
            "DELETE FROM {table} o USING {finished}
               AND (o.node = ''
                    OR o.node IN (SELECT id FROM nodes
                                  WHERE expires_at < clock_timestamp() OR draining))"
        ),
        args![],
    )?;
    Ok(conn.query(
        &format!(
            "WITH orphans AS (
                 SELECT o.{key} FROM {table} o
                 WHERE o.node = ''
                    OR o.node IN (SELECT id FROM nodes
                                  WHERE (expires_at < clock_timestamp() OR draining)
                                    AND id <> ?1)
                 ORDER BY o.{key}
                 LIMIT ?2
                 FOR UPDATE OF o SKIP LOCKED
             )
             UPDATE {table} o SET node = ?1, epoch = o.epoch + 1
             FROM orphans WHERE o.{key} = orphans.{key}
             RETURNING o.{key}, o.epoch"
        ),
        args![&**node, limit as i64],
    )?)
}

/// The rooms part of [`claim`], in its transaction.
fn claim_rooms(
    conn: &mut PgConn,
    node: &Arc<str>,
    limit: usize,
) -> Result<Vec<(StoredRoom, Lease)>, StoreError> {
    let rows = take_orphans(conn, &ROOM_OWNERS, node, limit)?;
    let mut epochs = std::collections::HashMap::with_capacity(rows.len());
    for mut row in rows {
        let no = row.int(0).map_err(StoreError::Postgres)?;
        let epoch = row.int(1).map_err(StoreError::Postgres)?;
        epochs.insert(no, epoch);
    }
    if epochs.is_empty() {
        return Ok(Vec::new());
    }
    // Read after the update (a statement of its own sees every write
    // committed before the owner's row was ours).
    let nos: Vec<i64> = epochs.keys().copied().collect();
    let numbered = conn.query(
        "SELECT id, no FROM rooms WHERE no = ANY(?1)",
        &[Arg::Ints(&nos)],
    )?;
    let mut by_id = std::collections::HashMap::with_capacity(numbered.len());
    for mut row in numbered {
        let id = row.text(0).map_err(StoreError::Postgres)?;
        let no = row.int(1).map_err(StoreError::Postgres)?;
        by_id.insert(id, epochs[&no]);
    }
    let rooms = load_unfinished_rooms_numbered(conn, &nos)?;
    Ok(rooms
        .into_iter()
        .map(|room| {
            let epoch = by_id.get(&room.room).copied().unwrap_or(0);
            (room, lease(node, epoch))
        })
        .collect())
}

/// The tournaments part of [`claim`], in its transaction: as for rooms.
fn claim_tournaments(
    conn: &mut PgConn,
    node: &Arc<str>,
    limit: usize,
) -> Result<Vec<(StoredTournament, Lease)>, StoreError> {
    let rows = take_orphans(conn, &TOURNAMENT_OWNERS, node, limit)?;
    let mut claimed = Vec::with_capacity(rows.len());
    for mut row in rows {
        let id = row.text(0).map_err(StoreError::Postgres)?;
        let epoch = row.int(1).map_err(StoreError::Postgres)?;
        claimed.push((id, epoch));
    }
    let mut out = Vec::with_capacity(claimed.len());
    for (id, epoch) in claimed {
        if let Some(stored) = tournaments::load(conn, &id)? {
            out.push((stored, lease(node, epoch)));
        }
    }
    Ok(out)
}

fn lease(node: &Arc<str>, epoch: i64) -> Lease {
    Lease {
        node: node.clone(),
        epoch: epoch as u64,
    }
}

/// Marks the node as draining: its rooms are for the taking at once (it has
/// stopped them), not when its lease runs out.
pub(super) fn drain(conn: &mut PgConn, node: &str) -> Result<(), StoreError> {
    conn.exec(
        "UPDATE nodes SET draining = TRUE WHERE id = ?1",
        args![node],
    )?;
    Ok(())
}

/// Commits what `done` did, or rolls it back and returns its error.
fn finish<T>(conn: &mut PgConn, done: Result<T, StoreError>) -> Result<T, StoreError> {
    match done {
        Ok(value) => {
            conn.batch("COMMIT")?;
            Ok(value)
        }
        Err(e) => {
            let _ = conn.batch("ROLLBACK");
            Err(e)
        }
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
