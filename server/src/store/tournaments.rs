//! Tournaments and ratings in the store: the tables, their writes and their
//! reads. A tournament is kept like a room: its settings, its players (with
//! their secret tokens) and its event log; its state is rebuilt by replaying
//! the log. Ratings are one row per player and game, written in the same op
//! as the tournament event that changed them (a round's end; a game's end in
//! tournaments that began before version 7), so a crash can neither lose a
//! rating change nor apply one twice.
//!
//! ```sql
//! tournaments        (id TEXT PK, code TEXT (index), settings TEXT json, owner_token TEXT,
//!                     created_at_ms INT, finished_at_ms INT NULL,
//!                     rating_period TEXT NULL (version 7))
//! tournament_players (tournament -> tournaments.id, player INT, name TEXT, token TEXT,
//!                     account INT NULL (version 6),
//!                     PK (tournament, player), UNIQUE (tournament, name))
//! tournament_events  (tournament -> tournaments.id, seq INT, at_ms INT, body TEXT json,
//!                     PK (tournament, seq))
//! ratings            (family TEXT, player TEXT, rating REAL, deviation REAL,
//!                     volatility REAL, games INT, PK (family, player))
//! ```
//!
//! From version 6 on, ratings are an account's (`account_ratings`, in
//! [`super::accounts`]); the `ratings` rows, keyed by a plain name, are read
//! back as unclaimed history and written only by tests of old files.
//!
//! Version 7 keys ratings by the game as a person names it (the spec's `game`
//! id: `kayles`, `dawson`, ...) instead of the engine's family. The rows of
//! older files keyed `heaps` pooled every heap game: they move to
//! [`crate::rating_key::POOLED_HEAPS`] (history, never moved again); the other
//! families' ids are their one game's id, so their rows keep their meaning.
//! `rating_period` says how a rated tournament rates: `round` (every game of
//! a round together, at the round's end); NULL for the tournaments created
//! before version 7, which go on rating each game as it ends. A tournament's
//! code is unique from version 7 on (checked when it is created: older files
//! may hold a code twice, and a code then names the newest).

use grundy_protocol::wire::{PlayerKind, PlayerRating, TournamentEvent, TournamentEventBody};
use serde_json::Value;

use super::sql::{args, Arg, DbError, Dialect, Fault, Sql};
use super::StoreError;

/// A player's rating in a game, as written: an account's, or (`account`
/// None) an unclaimed one kept under a plain name.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RatingRow {
    /// The game's id (`kayles`), or [`crate::rating_key::POOLED_HEAPS`].
    pub game: String,
    pub account: Option<u64>,
    pub rating: PlayerRating,
}

/// A registered player as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPlayer {
    pub name: String,
    pub token: String,
    /// The account that registered (None for a guest, and before version 6).
    pub account: Option<u64>,
}

/// A tournament as stored, for restart recovery and for finished ones.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTournament {
    pub tournament: String,
    pub code: String,
    /// The settings with every default filled in (a `TournamentSettings`).
    pub settings: Value,
    pub owner_token: String,
    /// Players in number order.
    pub players: Vec<StoredPlayer>,
    pub events: Vec<TournamentEvent>,
    /// A rating period is a round (every tournament created from version 7
    /// on); false: each rated game is its own period, as before.
    pub rated_by_round: bool,
}

fn fail(tournament: &str, message: impl std::fmt::Display) -> StoreError {
    StoreError::Tournament {
        tournament: tournament.to_owned(),
        message: message.to_string(),
    }
}

fn unknown_or(tournament: &str, e: DbError) -> StoreError {
    match e.fault {
        Fault::ForeignKey => fail(tournament, "no such tournament"),
        _ => e.into(),
    }
}

fn to_i64(tournament: &str, what: &str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| fail(tournament, format!("{what} {value} is too large")))
}

pub(super) fn create<C: Sql>(
    conn: &mut C,
    tournament: &str,
    code: &str,
    settings: &Value,
    owner_token: &str,
    created_at_ms: u64,
) -> Result<(), StoreError> {
    let created = to_i64(tournament, "created_at_ms", created_at_ms)?;
    // A code names one tournament for good, finished ones included.
    let taken = conn
        .query_one("SELECT 1 FROM tournaments WHERE code = ?1", args![code])?
        .is_some();
    if taken {
        return Err(StoreError::DuplicateTournamentCode {
            tournament: tournament.to_owned(),
            code: code.to_owned(),
        });
    }
    conn.exec(
        "INSERT INTO tournaments (id, code, settings, owner_token, created_at_ms, rating_period)
         VALUES (?1, ?2, ?3, ?4, ?5, 'round')",
        args![
            tournament,
            code,
            settings.to_string().as_str(),
            owner_token,
            created
        ],
    )
    .map_err(|e| match e.fault {
        Fault::Unique => fail(tournament, "exists already"),
        _ => e.into(),
    })?;
    Ok(())
}

fn player<C: Sql>(
    conn: &mut C,
    tournament: &str,
    player: u32,
    name: &str,
    token: &str,
    account: Option<u64>,
) -> Result<(), StoreError> {
    let account = account
        .map(|a| to_i64(tournament, "account", a))
        .transpose()?;
    conn.exec(
        "INSERT INTO tournament_players (tournament, player, name, token, account)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        args![tournament, player, name, token, account],
    )
    .map_err(|e| match e.fault {
        Fault::Unique => fail(
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
pub(super) fn event<C: Sql>(
    conn: &mut C,
    tournament: &str,
    event: &TournamentEvent,
    at_ms: u64,
    player_token: &Option<String>,
    player_account: Option<u64>,
    ratings: &[RatingRow],
) -> Result<(), StoreError> {
    let seq = to_i64(tournament, "seq", event.seq)?;
    let at = to_i64(tournament, "at_ms", at_ms)?;
    let body = serde_json::to_string(event).map_err(|e| fail(tournament, e))?;
    conn.exec(
        "INSERT INTO tournament_events (tournament, seq, at_ms, body) VALUES (?1, ?2, ?3, ?4)",
        args![tournament, seq, at, &body],
    )
    .map_err(|e| match e.fault {
        Fault::Unique => fail(tournament, format!("has an event {} already", event.seq)),
        _ => unknown_or(tournament, e),
    })?;
    match (&event.body, player_token) {
        (
            TournamentEventBody::Registered {
                player: p, name, ..
            },
            Some(token),
        ) => player(conn, tournament, *p, name, token, player_account)?,
        (TournamentEventBody::Registered { .. }, None) => {
            return Err(fail(tournament, "a registration needs the player's token"))
        }
        _ => {}
    }
    put_ratings(conn, tournament, ratings)?;
    if matches!(event.body, TournamentEventBody::Finished { .. }) {
        conn.exec(
            "UPDATE tournaments SET finished_at_ms = ?2 WHERE id = ?1",
            args![tournament, at],
        )?;
    }
    Ok(())
}

/// New ratings (a rated tournament round's, or a rated room's end), each row
/// replacing the holder's in its game; `key` (the tournament or room) names
/// what wrote them in errors.
pub(super) fn put_ratings<C: Sql>(
    conn: &mut C,
    key: &str,
    ratings: &[RatingRow],
) -> Result<(), StoreError> {
    for row in ratings {
        let r = &row.rating;
        let games = to_i64(key, "games", r.games)?;
        // An account's row, or (older files' tests only) a plain name's.
        let (sql, holder): (&str, Arg) = match row.account {
            Some(account) => (
                "INSERT INTO account_ratings (game, account, rating, deviation, volatility, games)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (game, account) DO UPDATE SET rating = excluded.rating,
                     deviation = excluded.deviation, volatility = excluded.volatility,
                     games = excluded.games",
                to_i64(key, "account", account)?.into(),
            ),
            None => (
                "INSERT INTO ratings (family, player, rating, deviation, volatility, games)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (family, player) DO UPDATE SET rating = excluded.rating,
                     deviation = excluded.deviation, volatility = excluded.volatility,
                     games = excluded.games",
                r.player.as_str().into(),
            ),
        };
        conn.exec(
            sql,
            &[
                Arg::from(&row.game),
                holder,
                r.rating.into(),
                r.deviation.into(),
                r.volatility.into(),
                games.into(),
            ],
        )?;
    }
    Ok(())
}

/// Every tournament not finished, oldest first.
pub(super) fn load_unfinished<C: Sql>(conn: &mut C) -> Result<Vec<StoredTournament>, StoreError> {
    let rows = conn.query(
        "SELECT id FROM tournaments WHERE finished_at_ms IS NULL ORDER BY created_at_ms, id",
        args![],
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for mut row in rows {
        let id = row.text(0).map_err(|e| fail("?", e))?;
        if let Some(t) = load(conn, &id)? {
            out.push(t);
        }
    }
    Ok(out)
}

/// One tournament, finished or not, by id or code (any case; the newest of
/// a code older files hold twice); `None` if unknown.
pub(super) fn load<C: Sql>(
    conn: &mut C,
    key: &str,
) -> Result<Option<StoredTournament>, StoreError> {
    let sql = match conn.dialect() {
        // Older files may hold a code twice: the newest, by its row.
        Dialect::Sqlite => {
            "SELECT id, code, settings, owner_token, rating_period FROM tournaments
             WHERE id = ?1 OR code = ?2 ORDER BY created_at_ms DESC, rowid DESC LIMIT 1"
        }
        // Codes are unique there.
        Dialect::Postgres => {
            "SELECT id, code, settings, owner_token, rating_period FROM tournaments
             WHERE id = ?1 OR code = ?2 LIMIT 1"
        }
    };
    let row = conn.query_one(sql, args![key, key.to_ascii_uppercase().as_str()])?;
    let Some(mut row) = row else {
        return Ok(None);
    };
    let id = row.text(0).map_err(|e| fail(key, e))?;
    let id = id.as_str();
    let bad = |e: String| fail(id, e);
    let code = row.text(1).map_err(bad)?;
    let settings = row.text(2).map_err(bad)?;
    let owner_token = row.text(3).map_err(bad)?;
    let period = row.opt_text(4).map_err(bad)?;
    let settings: Value =
        serde_json::from_str(&settings).map_err(|e| fail(id, format!("bad settings JSON: {e}")))?;
    let mut players = Vec::new();
    let rows = conn.query(
        "SELECT player, name, token, account FROM tournament_players WHERE tournament = ?1
         ORDER BY player",
        args![id],
    )?;
    for mut row in rows {
        let number = row.int(0).map_err(bad)?;
        if number != players.len() as i64 {
            return Err(fail(id, format!("player numbers skip to {number}")));
        }
        players.push(StoredPlayer {
            name: row.text(1).map_err(bad)?,
            token: row.text(2).map_err(bad)?,
            account: row.opt_int(3).map_err(bad)?.map(|a| a.max(0) as u64),
        });
    }
    let rows = conn.query(
        "SELECT seq, body FROM tournament_events WHERE tournament = ?1 ORDER BY seq",
        args![id],
    )?;
    let mut events = Vec::with_capacity(rows.len());
    for mut row in rows {
        let seq = row.int(0).map_err(bad)?;
        let body = row.text(1).map_err(bad)?;
        let event: TournamentEvent = serde_json::from_str(&body)
            .map_err(|e| fail(id, format!("bad event {seq} JSON: {e}")))?;
        if event.seq as i64 != seq || seq != events.len() as i64 + 1 {
            return Err(fail(id, format!("event log out of order at {seq}")));
        }
        events.push(event);
    }
    Ok(Some(StoredTournament {
        tournament: id.to_owned(),
        code,
        settings,
        owner_token,
        players,
        events,
        rated_by_round: period.as_deref() == Some("round"),
    }))
}

/// Every rating row: the accounts' (named and kinded by their account) and
/// the unclaimed ones of older files.
pub(super) fn load_ratings<C: Sql>(conn: &mut C) -> Result<Vec<RatingRow>, StoreError> {
    let rows = conn.query(
        "SELECT r.game, r.account, a.username, a.kind, r.rating, r.deviation, r.volatility,
                r.games
         FROM account_ratings r JOIN accounts a ON a.id = r.account
         UNION ALL
         SELECT family, NULL, player, NULL, rating, deviation, volatility, games FROM ratings",
        args![],
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for mut row in rows {
        let bad = |e: String| StoreError::Account(format!("corrupt rating: {e}"));
        let account = row.opt_int(1).map_err(bad)?;
        let kind = row.opt_text(3).map_err(bad)?;
        out.push(RatingRow {
            game: row.text(0).map_err(bad)?,
            account: account.map(|a| a.max(0) as u64),
            rating: PlayerRating {
                player: row.text(2).map_err(bad)?,
                player_kind: match kind.as_deref() {
                    Some("bot") => Some(PlayerKind::Bot),
                    Some(_) => Some(PlayerKind::Person),
                    None => None,
                },
                unclaimed: account.is_none(),
                rating: row.real(4).map_err(bad)?,
                deviation: row.real(5).map_err(bad)?,
                volatility: row.real(6).map_err(bad)?,
                games: row.int(7).map_err(bad)?.max(0) as u64,
            },
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use grundy_protocol::wire::{EndReason, MatchResult};
    use rusqlite::Connection;
    use serde_json::json;

    use super::*;
    use crate::store::tests::{on_both, Place};
    use crate::store::{MatchStore, SqliteStore, WriteOp};

    fn put(store: &dyn MatchStore, op: WriteOp) -> Result<(), StoreError> {
        let done = store.write(op);
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(done)
            .expect("answered")
    }

    fn event(tournament: &str, seq: u64, body: TournamentEventBody) -> WriteOp {
        WriteOp::TournamentEvent {
            tournament: tournament.into(),
            event: TournamentEvent { seq, body },
            at_ms: 1000 + seq,
            player_token: None,
            player_account: None,
            ratings: Vec::new(),
        }
    }

    fn registered(tournament: &str, seq: u64, player: u32, name: &str) -> WriteOp {
        WriteOp::TournamentEvent {
            tournament: tournament.into(),
            event: TournamentEvent {
                seq,
                body: TournamentEventBody::Registered {
                    player,
                    name: name.into(),
                    player_kind: None,
                },
            },
            at_ms: 1000,
            player_token: Some(format!("token-{name}")),
            player_account: (name == "bob").then_some(7),
            ratings: Vec::new(),
        }
    }

    /// An unclaimed rating (as files before accounts hold them).
    fn rating(player: &str, value: f64, games: u64) -> RatingRow {
        RatingRow {
            game: "nim".into(),
            account: None,
            rating: PlayerRating {
                player: player.into(),
                player_kind: None,
                unclaimed: true,
                rating: value,
                deviation: 200.0,
                volatility: 0.06,
                games,
            },
        }
    }

    on_both!(
        a_tournament_round_trips_and_finishing_takes_it_off_the_unfinished_list,
        |place| {
            let store = place.open().expect("open");
            let settings = json!({"format": "swiss", "family": "nim", "rounds": 3});
            put(
                &store,
                WriteOp::CreateTournament {
                    tournament: "t1".into(),
                    code: "TABCDE".into(),
                    settings: settings.clone(),
                    owner_token: "owner".into(),
                    created_at_ms: 5,
                },
            )
            .expect("create");
            put(&store, registered("t1", 1, 0, "alice")).expect("alice");
            put(&store, registered("t1", 2, 1, "bob")).expect("bob");
            // The same name twice, a number twice, a registration without its
            // token, a sequence number twice, an unknown tournament: refused alone.
            assert!(put(&store, registered("t1", 3, 2, "alice")).is_err());
            assert!(put(&store, registered("t1", 3, 1, "carol")).is_err());
            let mut tokenless = registered("t1", 3, 2, "carol");
            if let WriteOp::TournamentEvent { player_token, .. } = &mut tokenless {
                *player_token = None;
            }
            assert!(put(&store, tokenless).is_err());
            assert!(put(
                &store,
                event("t1", 2, TournamentEventBody::Started { rounds: 1 })
            )
            .is_err());
            let unknown = put(
                &store,
                event("nope", 1, TournamentEventBody::Started { rounds: 1 }),
            );
            assert!(
                matches!(&unknown, Err(StoreError::Tournament { message, .. }) if message.contains("no such tournament")),
                "{unknown:?}"
            );
            put(
                &store,
                event("t1", 3, TournamentEventBody::Started { rounds: 1 }),
            )
            .expect("start");
            // A rated game's end writes the ratings with it.
            let ended = WriteOp::TournamentEvent {
                tournament: "t1".into(),
                event: TournamentEvent {
                    seq: 4,
                    body: TournamentEventBody::GameEnded {
                        round: 1,
                        room: Some("r1".into()),
                        players: [0, 1],
                        result: MatchResult {
                            winner: Some(0),
                            reason: EndReason::Rules,
                        },
                        winner: Some(0),
                    },
                },
                at_ms: 2000,
                player_token: None,
                player_account: None,
                ratings: vec![rating("alice", 1600.0, 1), rating("bob", 1400.0, 1)],
            };
            put(&store, ended).expect("game ended");

            let unfinished = store.load_unfinished_tournaments().expect("load");
            assert_eq!(unfinished.len(), 1);
            let t = &unfinished[0];
            assert_eq!(t.code, "TABCDE");
            assert_eq!(t.settings, settings);
            assert_eq!(t.owner_token, "owner");
            assert_eq!(
                t.players,
                vec![
                    StoredPlayer {
                        name: "alice".into(),
                        token: "token-alice".into(),
                        account: None
                    },
                    StoredPlayer {
                        name: "bob".into(),
                        token: "token-bob".into(),
                        account: Some(7)
                    }
                ]
            );
            assert_eq!(
                t.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
                [1, 2, 3, 4]
            );
            let mut ratings = store.load_ratings().expect("ratings");
            ratings.sort_by(|a, b| a.rating.player.cmp(&b.rating.player));
            assert_eq!(
                ratings,
                vec![rating("alice", 1600.0, 1), rating("bob", 1400.0, 1)]
            );

            put(
                &store,
                event(
                    "t1",
                    5,
                    TournamentEventBody::Finished {
                        standings: Vec::new(),
                        ended_early: None,
                    },
                ),
            )
            .expect("finish");
            assert!(store
                .load_unfinished_tournaments()
                .expect("load")
                .is_empty());
            let finished = store.load_tournament("t1").expect("read").expect("kept");
            assert_eq!(finished.events.len(), 5);
            assert!(store.load_tournament("t2").expect("read").is_none());
        }
    );

    /// A version 6 file: ratings per engine family (the heap games pooled
    /// under `heaps`), a rated tournament running. Version 7 keeps every
    /// rating readable, moves the pooled ones aside, and lets the running
    /// tournament go on rating game by game.
    #[test]
    fn a_version_6_file_keeps_its_ratings_and_pools_the_heap_games_apart() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("v6.db");
        {
            let raw = Connection::open(&path).expect("raw");
            raw.execute_batch(&crate::store::sqlite::schema_at(6))
                .expect("v6 tables");
            raw.execute_batch(
                "INSERT INTO accounts VALUES (1, 'ann', 'ann', 'person', 'x', 0);
                 INSERT INTO account_ratings VALUES ('heaps', 1, 1650.0, 90.0, 0.06, 12),
                                                    ('nim', 1, 1550.0, 120.0, 0.06, 4);
                 INSERT INTO ratings VALUES ('heaps', 'zed', 1400.0, 200.0, 0.06, 3);
                 INSERT INTO tournaments (id, code, settings, owner_token, created_at_ms)
                     VALUES ('t-old', 'TOLDAA', '{\"format\":\"swiss\",\"family\":\"kayles\",\"rounds\":2,\"rated\":true}', 'o', 1);",
            )
            .expect("v6 rows");
            raw.pragma_update(None, "user_version", 6).expect("version");
        }
        let store = SqliteStore::open(&path).expect("migrates");
        let mut ratings: Vec<(String, Option<u64>, f64)> = store
            .load_ratings()
            .expect("ratings")
            .into_iter()
            .map(|r| (r.game, r.account, r.rating.rating))
            .collect();
        ratings.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        let pooled = crate::rating_key::POOLED_HEAPS.to_string();
        assert_eq!(
            ratings,
            [
                (pooled.clone(), None, 1400.0),
                (pooled, Some(1), 1650.0),
                ("nim".to_string(), Some(1), 1550.0),
            ]
        );
        // The running tournament rates as it did; found by id or code.
        let old = store.load_tournament("t-old").expect("read").expect("kept");
        assert!(!old.rated_by_round);
        let by_code = store
            .load_tournament("toldaa")
            .expect("read")
            .expect("kept");
        assert_eq!(by_code.tournament, "t-old");
        // A new one rates by round; a code is never given twice.
        let create = |id: &str, code: &str| WriteOp::CreateTournament {
            tournament: id.into(),
            code: code.into(),
            settings: json!({"format": "swiss", "family": "nim", "rounds": 1}),
            owner_token: "o".into(),
            created_at_ms: 2,
        };
        assert!(matches!(
            put(&store, create("t-new", "TOLDAA")),
            Err(StoreError::DuplicateTournamentCode { .. })
        ));
        put(&store, create("t-new", "TNEWAA")).expect("created");
        let new = store
            .load_tournament("TNEWAA")
            .expect("read")
            .expect("kept");
        assert!(new.rated_by_round);
        assert!(store.load_tournament("TNOPEA").expect("read").is_none());
        // And the new schema takes an account's rating per game.
        put(
            &store,
            WriteOp::TournamentEvent {
                tournament: "t-new".into(),
                event: TournamentEvent {
                    seq: 1,
                    body: TournamentEventBody::Started { rounds: 1 },
                },
                at_ms: 3,
                player_token: None,
                player_account: None,
                ratings: vec![RatingRow {
                    game: "kayles".into(),
                    account: Some(1),
                    rating: PlayerRating {
                        player: "ann".into(),
                        player_kind: Some(PlayerKind::Person),
                        unclaimed: false,
                        rating: 1510.0,
                        deviation: 300.0,
                        volatility: 0.06,
                        games: 1,
                    },
                }],
            },
        )
        .expect("rated");
        assert!(store
            .load_ratings()
            .expect("ratings")
            .iter()
            .any(|r| r.game == "kayles" && r.account == Some(1)));
    }

    /// The tables as version 1 wrote them: no tournament column, no foreign keys.
    const V1_TABLES: &str = "
        CREATE TABLE rooms (id TEXT NOT NULL PRIMARY KEY, code TEXT NOT NULL UNIQUE,
            spec TEXT NOT NULL, clock TEXT, listed INTEGER NOT NULL, bot TEXT,
            created_at_ms INTEGER NOT NULL, result TEXT, finished_at_ms INTEGER);
        CREATE TABLE seats (room TEXT NOT NULL, seat INTEGER NOT NULL, name TEXT,
            token TEXT NOT NULL, PRIMARY KEY (room, seat));
        CREATE TABLE events (room TEXT NOT NULL, seq INTEGER NOT NULL,
            at_ms INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (room, seq));";

    #[test]
    fn a_version_1_file_gains_the_tournament_tables_and_room_numbers() {
        migrates_to_the_current_schema(V1_TABLES, 1);
    }

    #[test]
    fn a_version_2_file_gains_room_numbers() {
        migrates_to_the_current_schema(&crate::store::sqlite::schema_at(2), 2);
    }

    /// A file with `tables` at `version`, holding an unfinished room with two
    /// seats and two events and a finished one, opens with every row in place.
    fn migrates_to_the_current_schema(tables: &str, version: i64) {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("old.db");
        {
            let raw = Connection::open(&path).expect("raw");
            raw.pragma_update(None, "foreign_keys", true).expect("fk");
            raw.execute_batch(tables).expect("old tables");
            raw.execute_batch(
                "INSERT INTO rooms (id, code, spec, listed, created_at_ms)
                     VALUES ('old', 'OLDOLD', '{\"game\":\"nim\",\"heaps\":[1,2]}', 1, 1);
                 INSERT INTO rooms (id, code, spec, listed, created_at_ms, result)
                     VALUES ('done', 'DONEDO', '{\"game\":\"nim\",\"heaps\":[1]}', 1, 0,
                             '{\"winner\":1,\"reason\":\"resign\"}');
                 INSERT INTO seats VALUES ('old', 0, 'ann', 'tok0'), ('old', 1, NULL, 'tok1'),
                                          ('done', 1, 'bea', 'tok2');
                 INSERT INTO events VALUES
                     ('old', 1, 5, '{\"seq\":1,\"kind\":\"started\"}'),
                     ('old', 2, 9, '{\"seq\":2,\"kind\":\"moved\",\"seat\":0,\"move\":{\"heap\":1,\"take\":2},\"clocks_ms\":[0,0],\"position\":{\"game\":\"nim\",\"heaps\":[1,0]}}');",
            )
            .expect("old rows");
            raw.pragma_update(None, "user_version", version)
                .expect("version");
        }
        let store = SqliteStore::open(&path).expect("migrates");
        let rooms = store.load_unfinished().expect("rooms");
        assert_eq!(rooms.len(), 1);
        assert_eq!(rooms[0].tournament, None);
        // Seats and events follow their room into the version 3 tables.
        let names: Vec<_> = rooms[0]
            .seats
            .iter()
            .map(|s| s.as_ref().map(|s| s.player.name.clone()))
            .collect();
        assert_eq!(names, [Some(Some("ann".to_string())), Some(None)]);
        let seqs: Vec<_> = rooms[0].events.iter().map(|(e, at)| (e.seq, *at)).collect();
        assert_eq!(seqs, [(1, 5), (2, 9)]);
        let done = store.record("done").expect("read").expect("kept");
        assert_eq!(done.players, [None, Some("bea".to_string())]);
        // A room made after the migration takes seats as before.
        store
            .write(WriteOp::CreateRoom {
                room: "new".into(),
                code: "NEWNEW".into(),
                spec: serde_json::json!({"game": "nim", "heaps": [1]}),
                clock: None,
                listed: true,
                bot: None,
                hints: false,
                rated: false,
                tournament: None,
                created_at_ms: 7,
            })
            .blocking_recv()
            .expect("answer")
            .expect("created");
        store
            .write(WriteOp::Seat {
                room: "new".into(),
                seat: 1,
                player: crate::player::Player::guest("cy"),
                token: "tok3".into(),
                house: false,
                player_token: None,
                tie: None,
            })
            .blocking_recv()
            .expect("answer")
            .expect("seated");
        let rooms = store.load_unfinished().expect("rooms");
        let ids: Vec<_> = rooms.iter().map(|r| r.room.as_str()).collect();
        assert_eq!(ids, ["old", "new"]);
        assert_eq!(
            rooms[1].seats[1].as_ref().map(|s| s.token.as_str()),
            Some("tok3")
        );
        assert!(store
            .load_unfinished_tournaments()
            .expect("table")
            .is_empty());
        assert!(store.load_ratings().expect("table").is_empty());
        drop(store);
        let raw = Connection::open(&path).expect("raw");
        let version: i64 = raw
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .expect("version");
        assert_eq!(version, crate::store::sqlite::known_version());
    }
}
