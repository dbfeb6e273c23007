//! The SQLite store's schema as numbered migrations: a file that the store
//! wrote at version 8, while it recorded its version in `PRAGMA user_version`
//! alone (`fixtures/sqlite-v8.sql`, a dump of such a file), opens in place with
//! every row kept and its version recorded, its tokens now kept as their
//! hashes (and still good: a server over it lets them resume their seats);
//! a new file gets the same tables.

mod support;

use std::path::Path;

use grundy_protocol::wire::{AccountKind, EndReason, MatchResult, PlayerKind, Scope};
use grundy_server::secret::hash;
use grundy_server::store::{MatchStore, SqliteStore};
use grundy_testkit::client::Client;
use rusqlite::Connection;
use serde_json::json;
use support::Process;

/// The file as version 8 wrote it.
const VERSION_8: &str = include_str!("fixtures/sqlite-v8.sql");

/// This build's last migration (`server/migrations/sqlite`).
const LAST_MIGRATION: i64 = 10;

/// The tokens the version 8 file keeps in clear: the seats', the
/// tournament owner's and its players'.
const CLEAR_TOKENS: [&str; 8] = [
    "token-done-0",
    "token-done-1",
    "seat-running-0",
    "seat-running-1",
    "token-t1-game-0",
    "owner-t1",
    "player-Ada",
    "player-zed",
];

/// `rows` (of `every_row`) as the upgrade leaves them: each clear token in
/// its place as its hash, and the seats' new column (`player_token`): the
/// hash of the tournament token of a tournament game's player.
fn upgraded(rows: &[(String, Vec<String>)]) -> Vec<(String, Vec<String>)> {
    // As `every_row` shows a text: `ValueRef`'s `Debug`, its bytes.
    let text = |s: &str| format!("Text({:?})", s.as_bytes());
    rows.iter()
        .map(|(table, rows)| {
            let mut rows: Vec<String> = rows
                .iter()
                .map(|row| {
                    let mut row = CLEAR_TOKENS
                        .iter()
                        .fold(row.clone(), |row, t| row.replace(&text(t), &text(&hash(t))));
                    if table == "seats" {
                        let t1_ada = row.starts_with("Integer(3) | Integer(0) | ");
                        row.push_str(" | ");
                        row.push_str(&match t1_ada {
                            true => text(&hash("player-Ada")),
                            false => "Null".into(),
                        });
                        // No seat of before is tied to an account token.
                        row.push_str(" | Null");
                    }
                    if table == "rooms" {
                        // No room of before is a rated casual game.
                        row.push_str(" | Integer(0)");
                    }
                    row
                })
                .collect();
            rows.sort();
            (table.clone(), rows)
        })
        .collect()
}

/// Whether the file at `path` holds any of the clear tokens.
fn assert_no_clear_token_in(path: &Path) {
    let bytes = std::fs::read(path).expect("the file");
    for token in CLEAR_TOKENS {
        assert!(
            !bytes.windows(token.len()).any(|w| w == token.as_bytes()),
            "{} holds {token:?} in clear",
            path.display()
        );
    }
}

fn version_8_file(path: &Path) {
    let raw = Connection::open(path).expect("a new file");
    raw.execute_batch(VERSION_8).expect("the dump loads");
}

/// Every table's rows, as text, in a fixed order (refinery's own table aside).
fn every_row(conn: &Connection) -> Vec<(String, Vec<String>)> {
    tables(conn)
        .into_iter()
        .filter(|table| table != "refinery_schema_history")
        .map(|table| {
            let mut statement = conn
                .prepare(&format!("SELECT * FROM {table}"))
                .expect("select");
            let width = statement.column_count();
            let mut rows: Vec<String> = statement
                .query_map([], |row| {
                    (0..width)
                        .map(|i| row.get_ref(i).map(|v| format!("{v:?}")))
                        .collect::<Result<Vec<_>, _>>()
                        .map(|cells| cells.join(" | "))
                })
                .expect("rows")
                .collect::<Result<_, _>>()
                .expect("row");
            rows.sort();
            (table, rows)
        })
        .collect()
}

fn tables(conn: &Connection) -> Vec<String> {
    names(conn, "table")
}

fn names(conn: &Connection, kind: &str) -> Vec<String> {
    conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = ?1 AND name NOT LIKE 'sqlite_%'
         ORDER BY name",
    )
    .expect("prepare")
    .query_map([kind], |row| row.get(0))
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("names")
}

/// Each table with its columns (name, type, not null, default, key), in name
/// order: the schema whatever order the columns were added in.
fn columns(conn: &Connection) -> Vec<(String, Vec<String>)> {
    tables(conn)
        .into_iter()
        .map(|table| {
            let mut columns: Vec<String> = conn
                .prepare(&format!("PRAGMA table_info({table})"))
                .expect("prepare")
                .query_map([], |row| {
                    Ok(format!(
                        "{} {} notnull={} default={:?} pk={}",
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, bool>(3)?,
                        row.get::<_, Option<String>>(4)?,
                        row.get::<_, i64>(5)?,
                    ))
                })
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("columns");
            columns.sort();
            (table, columns)
        })
        .collect()
}

fn user_version(conn: &Connection) -> i64 {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
        .expect("user_version")
}

fn recorded_migrations(conn: &Connection) -> Vec<i64> {
    conn.prepare("SELECT version FROM refinery_schema_history ORDER BY version")
        .expect("refinery's table")
        .query_map([], |row| row.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("versions")
}

#[test]
fn a_version_8_file_opens_in_place_with_every_row_and_its_version_recorded() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("v8.sqlite");
    version_8_file(&path);
    let before = every_row(&Connection::open(&path).expect("raw"));
    assert!(
        before.iter().all(|(_, rows)| !rows.is_empty()),
        "{before:?}"
    );

    let store = SqliteStore::open(&path).expect("opens");
    let running = store.load_unfinished().expect("rooms");
    let ids: Vec<&str> = running.iter().map(|r| r.room.as_str()).collect();
    assert_eq!(ids, ["running", "t1-game"]);
    let house_room = &running[0];
    assert!(house_room.hints);
    assert_eq!(house_room.bot.as_deref(), Some("perfect"));
    let seats: Vec<_> = house_room
        .seats
        .iter()
        .map(|s| s.as_ref().map(|s| (s.player.kind, s.house)))
        .collect();
    assert_eq!(
        seats,
        [
            Some((Some(PlayerKind::Guest), false)),
            Some((Some(PlayerKind::Bot), true))
        ]
    );
    assert_eq!(house_room.events.len(), 2);
    let kept: Vec<_> = house_room
        .seats
        .iter()
        .map(|s| {
            s.as_ref()
                .map(|s| (s.token.clone(), s.player_token.clone()))
        })
        .collect();
    assert_eq!(
        kept,
        [
            Some((hash("seat-running-0"), None)),
            Some((hash("seat-running-1"), None))
        ]
    );
    assert_eq!(running[1].tournament.as_deref(), Some("t1"));
    let t1_seat = running[1].seats[0].as_ref().expect("Ada's seat");
    assert_eq!(t1_seat.token, hash("token-t1-game-0"));
    assert_eq!(t1_seat.player_token, Some(hash("player-Ada")));

    let done = store.record("done").expect("read").expect("kept");
    assert_eq!(done.players, [Some("Ada".into()), Some("botty".into())]);
    assert_eq!(done.moves.len(), 2);
    assert_eq!(
        done.result,
        Some(MatchResult {
            winner: Some(1),
            reason: EndReason::Resign
        })
    );

    let tournaments = store.load_unfinished_tournaments().expect("tournaments");
    assert_eq!(tournaments.len(), 1);
    let t1 = &tournaments[0];
    assert_eq!((t1.code.as_str(), t1.events.len()), ("TFIXTU", 3));
    assert!(t1.rated_by_round);
    let players: Vec<_> = t1
        .players
        .iter()
        .map(|p| (p.name.as_str(), p.account))
        .collect();
    assert_eq!(players, [("Ada", Some(1)), ("zed", None)]);

    let mut ratings: Vec<_> = store
        .load_ratings()
        .expect("ratings")
        .into_iter()
        .map(|r| (r.game, r.account, r.rating.rating, r.rating.games))
        .collect();
    ratings.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        ratings,
        [
            ("kayles".to_string(), Some(1), 1612.5, 3),
            ("nim".to_string(), None, 1400.0, 1)
        ]
    );

    let (accounts, tokens) = store.load_accounts().expect("accounts");
    let accounts: Vec<_> = accounts
        .iter()
        .map(|a| (a.id, a.username.as_str(), a.kind))
        .collect();
    assert_eq!(
        accounts,
        [
            (1, "Ada", AccountKind::Person),
            (2, "botty", AccountKind::Bot)
        ]
    );
    let tokens: Vec<_> = tokens
        .iter()
        .map(|t| (t.id.as_str(), t.scopes.len(), t.revoked_at_ms))
        .collect();
    assert_eq!(
        tokens,
        [("tok1", Scope::ALL.len(), None), ("tok2", 1, Some(3_000))]
    );
    store.close();
    drop(store);

    let after = upgraded(&before);
    let raw = Connection::open(&path).expect("raw");
    assert_eq!(
        every_row(&raw),
        after,
        "every row as it was, its tokens hashed"
    );
    assert_eq!(user_version(&raw), LAST_MIGRATION);
    assert_eq!(
        recorded_migrations(&raw),
        (1..=LAST_MIGRATION).collect::<Vec<_>>()
    );
    drop(raw);
    // Opened again, it is the same file.
    drop(SqliteStore::open(&path).expect("opens again"));
    let raw = Connection::open(&path).expect("raw");
    assert_eq!(every_row(&raw), after, "hashed once only");
    assert_eq!(recorded_migrations(&raw).len() as i64, LAST_MIGRATION);
    drop(raw);
    assert_no_clear_token_in(&path);
}

/// A server over a version 8 file: the seat tokens it kept in clear still
/// resume their seats (and a tournament game's seat its player's
/// tournament token), and the file holds none of them any more.
#[tokio::test]
async fn the_tokens_of_a_version_8_file_still_resume_their_seats() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("v8.sqlite");
    version_8_file(&path);
    let mut server = Process::start(&path).await;
    let mut c = Client::connect(&server.url, "back").await;
    for (room, token, seat) in [
        ("running", "seat-running-0", 0),
        ("t1-game", "token-t1-game-0", 0),
        ("t1-game", "player-Ada", 0),
    ] {
        let back = c
            .request(json!({"type": "resume", "room": room, "token": token}))
            .await;
        assert_eq!(back["type"], "watching", "{room} with {token}: {back}");
        assert_eq!(back["seat"], seat, "{back}");
    }
    let wrong = c
        .request(json!({"type": "resume", "room": "running", "token": hash("seat-running-0")}))
        .await;
    assert_eq!(wrong["code"], "unauthorized", "a hash is no token: {wrong}");
    assert!(server.terminate().await.success());
    for file in std::fs::read_dir(dir.path()).expect("dir") {
        assert_no_clear_token_in(&file.expect("file").path());
    }
}

#[test]
fn a_new_file_gets_every_migration_and_the_tables_an_upgraded_file_has() {
    let dir = tempfile::tempdir().expect("dir");
    let fresh = dir.path().join("new.sqlite");
    let store = SqliteStore::open(&fresh).expect("creates");
    assert!(store.load_unfinished().expect("rooms").is_empty());
    assert!(store.load_accounts().expect("accounts").0.is_empty());
    drop(store);
    let old = dir.path().join("v8.sqlite");
    version_8_file(&old);
    drop(SqliteStore::open(&old).expect("upgrades"));

    let fresh = Connection::open(&fresh).expect("raw");
    let old = Connection::open(&old).expect("raw");
    assert_eq!(user_version(&fresh), LAST_MIGRATION);
    assert_eq!(
        recorded_migrations(&fresh),
        (1..=LAST_MIGRATION).collect::<Vec<_>>()
    );
    assert_eq!(columns(&fresh), columns(&old));
    assert_eq!(names(&fresh, "index"), names(&old, "index"));
}
