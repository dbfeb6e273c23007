//! Tournaments seen from a client: a tournament's state, watching its events,
//! and the export of its games (JSON and CSV).

use std::time::Duration;

use grundy_protocol::wire::{
    ClientBody, ClientMsg, ErrorCode, MatchResult, ServerBody, ServerMsg, TournamentEvent,
    TournamentState,
};
use serde::Serialize;
use serde_json::Value;

use crate::client::{Client, ClientError};

/// A tournament's state (`get_tournament`: by id or code, finished ones
/// too).
pub async fn tournament_state(
    client: &mut Client,
    tournament: &str,
) -> Result<TournamentState, ClientError> {
    let answer = client
        .request(|id| ClientMsg {
            id,
            body: ClientBody::GetTournament {
                tournament: tournament.to_string(),
                round: None,
            },
        })
        .await?;
    match answer {
        ServerMsg {
            body: ServerBody::Tournament { state, .. },
            ..
        } => Ok(state),
        other => Err(ClientError::Unexpected(format!("{other:?}"))),
    }
}

/// `watch_tournament`: the tournament's id, and its state or the events after
/// `since`; the connection then hears its events.
pub async fn watch_tournament(
    client: &mut Client,
    key: &str,
    since: Option<u64>,
) -> Result<(String, Option<TournamentState>, Vec<TournamentEvent>), ClientError> {
    match client
        .request(|id| ClientMsg {
            id,
            body: ClientBody::WatchTournament {
                tournament: key.to_string(),
                since,
            },
        })
        .await?
    {
        ServerMsg {
            body:
                ServerBody::TournamentWatching {
                    tournament,
                    state,
                    events,
                    ..
                },
            ..
        } => Ok((tournament, state, events)),
        other => Err(ClientError::Unexpected(format!("{other:?}"))),
    }
}

/// One game of a tournament, as exported.
#[derive(Debug, Clone, Serialize)]
pub struct ExportedGame {
    pub round: u32,
    /// Null for a game forfeited without being played.
    pub room: Option<String>,
    /// The players on seat 0 and seat 1.
    pub players: [String; 2],
    /// The start position.
    pub spec: Value,
    pub moves: Vec<Value>,
    pub result: Option<MatchResult>,
    pub winner: Option<String>,
}

/// Every game of a tournament with its start and moves (one `get_match` per
/// game).
pub async fn export_games(
    client: &mut Client,
    state: &TournamentState,
) -> Result<Vec<ExportedGame>, ClientError> {
    let name = |p: u32| {
        state
            .players
            .get(p as usize)
            .map_or_else(|| format!("player {p}"), |x| x.name.clone())
    };
    let mut out = Vec::with_capacity(state.games.len());
    for g in &state.games {
        let (spec, moves) = match &g.room {
            Some(room) => match fetch_record(client, room).await? {
                ServerMsg {
                    body: ServerBody::Match { record, .. },
                    ..
                } => (
                    record.spec,
                    record.moves.into_iter().map(|m| m.mv).collect(),
                ),
                other => return Err(ClientError::Unexpected(format!("{other:?}"))),
            },
            None => (pairing_spec(state, g.round, g.players), Vec::new()),
        };
        out.push(ExportedGame {
            round: g.round,
            room: g.room.clone(),
            players: g.players.map(name),
            spec,
            moves,
            result: g.result,
            winner: g.winner.map(name),
        });
    }
    Ok(out)
}

/// `get_match`, waiting out the rate limit.
async fn fetch_record(client: &mut Client, room: &str) -> Result<ServerMsg, ClientError> {
    loop {
        let answer = client
            .request(|id| ClientMsg {
                id,
                body: ClientBody::GetMatch {
                    room: room.to_string(),
                },
            })
            .await;
        match answer {
            Err(ClientError::Refused {
                code: ErrorCode::RateLimited,
                ..
            }) => tokio::time::sleep(Duration::from_millis(100)).await,
            other => return other,
        }
    }
}

fn pairing_spec(state: &TournamentState, round: u32, players: [u32; 2]) -> Value {
    state
        .pairings
        .iter()
        .find(|p| {
            p.round == round && (p.players == players || p.players == [players[1], players[0]])
        })
        .map_or(Value::Null, |p| p.spec.clone())
}

/// The games as CSV: a header, then one line per game; the start and the
/// moves are JSON. The round is a number; every other cell is text, written
/// by [`csv_text`] so that no spreadsheet runs it as a formula.
pub fn games_csv(tournament: &str, games: &[ExportedGame]) -> String {
    let mut out = String::from("tournament,round,room,seat0,seat1,start,moves,reason,winner\n");
    for g in games {
        let reason = g
            .result
            .map(|r| {
                serde_json::to_value(r.reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        let cells = [
            csv_text(tournament),
            g.round.to_string(),
            csv_text(g.room.as_deref().unwrap_or_default()),
            csv_text(&g.players[0]),
            csv_text(&g.players[1]),
            csv_text(&g.spec.to_string()),
            csv_text(&Value::from(g.moves.clone()).to_string()),
            csv_text(&reason),
            csv_text(g.winner.as_deref().unwrap_or_default()),
        ];
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// A text cell (a name, an id, JSON): quoted as RFC 4180 says when it holds
/// a comma, a quote or a line break. A cell that begins with `=`, `+`, `-`,
/// `@`, a tab or a carriage return would be read as a formula by a
/// spreadsheet (a player may be named `=cmd|' /C calc'!A0`): it gets a `'`
/// in front, and quotes, as OWASP recommends against CSV injection; the `'`
/// makes the spreadsheet show the cell as text. Numbers (the round) are
/// written as they are, never through here: a number's `-` is no formula.
fn csv_text(cell: &str) -> String {
    let formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula {
        format!("\"'{}\"", cell.replace('"', "\"\""))
    } else if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(csv_text("plain"), "plain");
        assert_eq!(csv_text("a,b"), "\"a,b\"");
        assert_eq!(csv_text("say \"hi\""), "\"say \"\"hi\"\"\"");
        let games = vec![ExportedGame {
            round: 1,
            room: Some("r1".into()),
            players: ["a".into(), "b, the second".into()],
            spec: serde_json::json!({"game": "nim", "heaps": [1, 2]}),
            moves: vec![serde_json::json!({"heap": 1, "take": 1})],
            result: Some(MatchResult {
                winner: Some(0),
                reason: grundy_protocol::wire::EndReason::Rules,
            }),
            winner: Some("a".into()),
        }];
        let csv = games_csv("t", &games);
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("tournament,round,room,seat0,seat1,start,moves,reason,winner")
        );
        assert_eq!(
            lines.next(),
            Some(
                "t,1,r1,a,\"b, the second\",\"{\"\"game\"\":\"\"nim\"\",\"\"heaps\"\":[1,2]}\",\
                 \"[{\"\"heap\"\":1,\"\"take\"\":1}]\",rules,a"
            )
        );
    }

    /// OWASP's CSV injection: a text cell a spreadsheet would run as a
    /// formula comes out quoted behind a `'`; numbers stay numbers.
    #[test]
    fn csv_cells_that_would_be_formulas_are_written_as_text() {
        for (cell, written) in [
            ("=cmd|' /C calc'!A0", "\"'=cmd|' /C calc'!A0\""),
            ("+1+1", "\"'+1+1\""),
            ("-2+3", "\"'-2+3\""),
            ("@SUM(A1:A9)", "\"'@SUM(A1:A9)\""),
            ("\t=1", "\"'\t=1\""),
            ("\r=1", "\"'\r=1\""),
            (
                "=HYPERLINK(\"http://x\",\"y\")",
                "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"",
            ),
            // Only the first character counts.
            ("a=b", "a=b"),
            ("bob-2", "bob-2"),
        ] {
            assert_eq!(csv_text(cell), written, "{cell:?}");
        }
        let games = vec![ExportedGame {
            round: 3,
            room: Some("r1".into()),
            players: ["=cmd|' /C calc'!A0".into(), "@bob".into()],
            spec: serde_json::json!({"game": "nim", "heaps": [1]}),
            moves: vec![serde_json::json!({"heap": 0, "take": 1})],
            result: Some(MatchResult {
                winner: Some(1),
                reason: grundy_protocol::wire::EndReason::Rules,
            }),
            winner: Some("@bob".into()),
        }];
        let csv = games_csv("-T1", &games);
        assert_eq!(
            csv.lines().nth(1),
            Some(
                "\"'-T1\",3,r1,\"'=cmd|' /C calc'!A0\",\"'@bob\",\
                 \"{\"\"game\"\":\"\"nim\"\",\"\"heaps\"\":[1]}\",\
                 \"[{\"\"heap\"\":0,\"\"take\"\":1}]\",rules,\"'@bob\""
            )
        );
    }
}
