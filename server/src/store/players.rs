//! An account's history as its profile shows it: its latest finished games
//! and the tournaments it registered in, with the rating it had after each
//! round of the rated ones. Read once against `sql::Sql` for both stores.
//!
//! The rating history is not a table of its own: a rated tournament's log
//! already holds it, since every `round_ended` event's standings carry each
//! player's rating after the round, written in the same op as the rating
//! rows themselves. Reading it from there gives the history of every rated
//! round since ratings began, with nothing written twice.

use grundy_protocol::wire::{MatchResult, PlayerKind, TournamentEvent, TournamentEventBody};
use serde_json::Value;

use super::reads::{corrupt, parse_json, unsigned};
use super::sql::{args, Sql};
use super::writer::kind_from_text;
use super::StoreError;

/// A finished game an account played, from its seat's side.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerGame {
    pub room: String,
    pub code: String,
    pub spec: Value,
    pub seat: u8,
    pub opponent: Option<String>,
    pub opponent_kind: Option<PlayerKind>,
    pub result: MatchResult,
    pub finished_at_ms: u64,
    pub tournament: Option<String>,
}

/// A tournament an account registered in.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerTournament {
    pub tournament: String,
    pub code: String,
    /// Its settings with every default filled in (a `TournamentSettings`).
    pub settings: Value,
    pub created_at_ms: u64,
    pub finished_at_ms: Option<u64>,
    /// In a rated tournament, the account's rating after each round that
    /// ended, in order: (when, round, rating). Empty for an unrated one.
    pub ratings: Vec<(u64, u32, f64)>,
}

/// What [`read`] found, newest first in each list.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlayerHistory {
    pub games: Vec<PlayerGame>,
    pub tournaments: Vec<PlayerTournament>,
}

/// The `games` latest finished games of `account` and its `tournaments`
/// latest tournaments, newest first.
pub(super) fn read<C: Sql>(
    conn: &mut C,
    account: u64,
    games: usize,
    tournaments: usize,
) -> Result<PlayerHistory, StoreError> {
    let account = i64::try_from(account).map_err(|_| corrupt("?", None, "account id too large"))?;
    let (games, tournaments) = (games as i64, tournaments as i64);
    let rows = conn.query(
        "SELECT r.id, r.code, r.spec, s.seat, o.name, o.kind, r.result, r.finished_at_ms,
                r.tournament
         FROM seats s JOIN rooms r ON r.no = s.room_no
         LEFT JOIN seats o ON o.room_no = s.room_no AND o.seat <> s.seat
         WHERE s.account = ?1 AND r.result IS NOT NULL
         ORDER BY r.finished_at_ms DESC, r.no DESC LIMIT ?2",
        args![account, games],
    )?;
    let mut history = PlayerHistory::default();
    for mut row in rows {
        let room = row.text(0).map_err(|e| corrupt("?", None, e))?;
        let bad = |e: String| corrupt(&room, None, e);
        let code = row.text(1).map_err(bad)?;
        let spec = parse_json(&room, "spec", &row.text(2).map_err(bad)?)?;
        let seat = row.int(3).map_err(bad)?;
        let opponent = row.opt_text(4).map_err(bad)?;
        let opponent_kind = row
            .opt_text(5)
            .map_err(bad)?
            .and_then(|k| kind_from_text(&k));
        let result = parse_json(&room, "result", &row.text(6).map_err(bad)?)?;
        let finished = row.opt_int(7).map_err(bad)?.unwrap_or(0);
        let tournament = row.opt_text(8).map_err(bad)?;
        history.games.push(PlayerGame {
            code,
            spec,
            seat: u8::try_from(seat).map_err(|_| corrupt(&room, None, "seat out of range"))?,
            opponent,
            opponent_kind,
            result,
            finished_at_ms: unsigned(&room, None, "finished_at_ms", finished)?,
            tournament,
            room,
        });
    }
    let rows = conn.query(
        "SELECT t.id, t.code, t.settings, t.created_at_ms, t.finished_at_ms, p.player
         FROM tournament_players p JOIN tournaments t ON t.id = p.tournament
         WHERE p.account = ?1
         ORDER BY t.created_at_ms DESC, t.id LIMIT ?2",
        args![account, tournaments],
    )?;
    let mut numbers = Vec::with_capacity(rows.len());
    for mut row in rows {
        let id = row.text(0).map_err(|e| corrupt("?", None, e))?;
        let bad = |e: String| corrupt(&id, None, e);
        let code = row.text(1).map_err(bad)?;
        let settings: Value = parse_json(&id, "settings", &row.text(2).map_err(bad)?)?;
        let created = row.int(3).map_err(bad)?;
        let finished = row.opt_int(4).map_err(bad)?;
        numbers.push(row.int(5).map_err(bad)?);
        history.tournaments.push(PlayerTournament {
            code,
            settings,
            created_at_ms: unsigned(&id, None, "created_at_ms", created)?,
            finished_at_ms: finished
                .map(|f| unsigned(&id, None, "finished_at_ms", f))
                .transpose()?,
            ratings: Vec::new(),
            tournament: id,
        });
    }
    for (t, number) in history.tournaments.iter_mut().zip(numbers) {
        if t.settings.get("rated").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let rows = conn.query(
            "SELECT at_ms, body FROM tournament_events WHERE tournament = ?1 ORDER BY seq",
            args![t.tournament.as_str()],
        )?;
        for mut row in rows {
            let bad = |e: String| corrupt(&t.tournament, None, e);
            let at = row.int(0).map_err(bad)?;
            let body = row.text(1).map_err(bad)?;
            let event: TournamentEvent = parse_json(&t.tournament, "event", &body)?;
            let TournamentEventBody::RoundEnded { round, standings } = event.body else {
                continue;
            };
            let rating = standings
                .iter()
                .find(|s| i64::from(s.player) == number)
                .and_then(|s| s.rating);
            if let Some(rating) = rating {
                let at = unsigned(&t.tournament, None, "at_ms", at)?;
                t.ratings.push((at, round, rating));
            }
        }
    }
    Ok(history)
}
