//! Tournaments from the bot's side: a registered player that plays every game
//! the server gives it, a whole field of bots run from one call, and the export
//! of a tournament's games (JSON and CSV).

use std::collections::HashSet;
use std::time::Duration;

use grundy_protocol::wire::{
    ClientMsg, ErrorCode, MatchResult, ServerMsg, TournamentEvent, TournamentEventBody,
    TournamentSettings, TournamentState, TournamentStatus,
};
use grundy_protocol::Level;
use serde::Serialize;
use serde_json::Value;

use crate::client::{Client, ClientError};
use crate::seat::{play_seat, PlayError, SeatPlan};

/// How many times in a row a player tries to reconnect to its tournament.
const RECONNECT_ATTEMPTS: u32 = 30;

/// A player registered in a tournament: its connection and secret token.
pub struct Entrant {
    pub url: String,
    pub tournament: String,
    pub name: String,
    pub level: Level,
    pub seed: u64,
    pub player: u32,
    pub token: String,
    client: Client,
}

/// Connects as `name` and registers in `tournament` (id or code).
pub async fn register(
    url: &str,
    tournament: &str,
    name: &str,
    level: Level,
    seed: u64,
) -> Result<Entrant, PlayError> {
    let mut client = Client::connect(url, name).await?;
    let answer = client
        .request(|id| ClientMsg::Register {
            id,
            tournament: tournament.to_string(),
            name: Some(name.to_string()),
        })
        .await?;
    match answer {
        ServerMsg::Registered {
            tournament,
            player,
            token,
            ..
        } => Ok(Entrant {
            url: url.to_string(),
            tournament,
            name: name.to_string(),
            level,
            seed,
            player,
            token,
            client,
        }),
        other => Err(ClientError::Unexpected(format!("{other:?}")).into()),
    }
}

impl Entrant {
    /// Plays every game the tournament gives this player, each on a
    /// connection of its own, until the tournament is over. Comes back
    /// (`rejoin`) when the connection drops, a server restart included.
    pub async fn play(self) -> Result<(), PlayError> {
        let Entrant {
            url,
            tournament,
            name,
            level,
            seed,
            token,
            client,
            ..
        } = self;
        let mut client = Some(client);
        let mut started: HashSet<String> = HashSet::new();
        let mut games = tokio::task::JoinSet::new();
        let mut attempts = 0;
        loop {
            let mut c = match client.take() {
                Some(c) => c,
                None => match rejoin(&url, &tournament, &name, &token).await {
                    // It ended while this player was away.
                    Ok((c, TournamentStatus::Finished)) => {
                        c.close().await;
                        while games.join_next().await.is_some() {}
                        return Ok(());
                    }
                    Ok((c, _)) => {
                        attempts = 0;
                        c
                    }
                    // Gone from the server's memory: over long ago, if it is
                    // finished in the store.
                    Err(ClientError::Refused {
                        code: ErrorCode::UnknownTournament,
                        ..
                    }) if is_finished(&url, &tournament).await => {
                        while games.join_next().await.is_some() {}
                        return Ok(());
                    }
                    Err(e) if attempts < RECONNECT_ATTEMPTS && retryable(&e) => {
                        attempts += 1;
                        tokio::time::sleep(Duration::from_millis(200 * attempts as u64)).await;
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                },
            };
            let over = loop {
                match c.next().await {
                    Ok(ServerMsg::YourGame {
                        room, seat, token, ..
                    }) => {
                        if !started.insert(room.clone()) {
                            continue; // told again after a rejoin: already playing
                        }
                        let plan = SeatPlan {
                            url: url.clone(),
                            name: name.clone(),
                            room,
                            seat,
                            token,
                            level,
                            seed: seed.wrapping_add(started.len() as u64),
                        };
                        games.spawn(async move {
                            if let Err(e) = play_seat(&plan, None, None).await {
                                tracing::warn!(room = %plan.room, "tournament game stopped: {e}");
                            }
                        });
                    }
                    Ok(ServerMsg::TournamentEvent { event, .. }) => {
                        if matches!(event.body, TournamentEventBody::Finished { .. }) {
                            break true;
                        }
                    }
                    Ok(ServerMsg::Shutdown { .. }) | Err(_) => break false,
                    Ok(_) => {}
                }
            };
            if over {
                c.close().await;
                while games.join_next().await.is_some() {}
                return Ok(());
            }
        }
    }
}

fn retryable(e: &ClientError) -> bool {
    match e {
        ClientError::Refused { code, .. } => {
            matches!(code, ErrorCode::ShuttingDown | ErrorCode::UnknownTournament)
        }
        _ => true,
    }
}

/// Comes back as a registered player; returns the connection and where the
/// tournament is.
async fn rejoin(
    url: &str,
    tournament: &str,
    name: &str,
    token: &str,
) -> Result<(Client, TournamentStatus), ClientError> {
    let mut c = Client::connect(url, name).await?;
    let answer = c
        .request(|id| ClientMsg::Rejoin {
            id,
            tournament: tournament.to_string(),
            token: token.to_string(),
        })
        .await?;
    match answer {
        ServerMsg::Registered { state, .. } => Ok((c, state.status)),
        other => Err(ClientError::Unexpected(format!("{other:?}"))),
    }
}

/// A tournament's state (`get_tournament`: by id, or by code while it is in
/// memory).
pub async fn tournament_state(
    client: &mut Client,
    tournament: &str,
) -> Result<TournamentState, ClientError> {
    let answer = client
        .request(|id| ClientMsg::GetTournament {
            id,
            tournament: tournament.to_string(),
            round: None,
        })
        .await?;
    match answer {
        ServerMsg::Tournament { state, .. } => Ok(state),
        other => Err(ClientError::Unexpected(format!("{other:?}"))),
    }
}

/// Whether the server has `tournament` (by id) as finished.
async fn is_finished(url: &str, tournament: &str) -> bool {
    let Ok(mut c) = Client::connect(url, "tournament-check").await else {
        return false;
    };
    let state = tournament_state(&mut c, tournament).await;
    c.close().await;
    matches!(state, Ok(s) if s.status == TournamentStatus::Finished)
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
                ServerMsg::Match { record, .. } => (
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
            .request(|id| ClientMsg::GetMatch {
                id,
                room: room.to_string(),
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
/// moves are JSON.
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
        let fields = [
            tournament.to_string(),
            g.round.to_string(),
            g.room.clone().unwrap_or_default(),
            g.players[0].clone(),
            g.players[1].clone(),
            g.spec.to_string(),
            Value::from(g.moves.clone()).to_string(),
            reason,
            g.winner.clone().unwrap_or_default(),
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// RFC 4180: quote a field that holds a comma, a quote or a line break.
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// A field of bots for one tournament.
pub struct Field {
    pub url: String,
    /// Join this tournament (id or code); None: create one with `settings`.
    pub join: Option<String>,
    pub settings: TournamentSettings,
    /// How many bot players, and their levels (player i plays
    /// `levels[i % levels.len()]`).
    pub players: usize,
    pub levels: Vec<Level>,
    pub seed: u64,
}

/// A tournament played out by a field of bots.
pub struct FieldOutcome {
    pub state: TournamentState,
    /// The bots, by player number.
    pub bots: Vec<FieldBot>,
}

/// A bot of the field: its player number, name and level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldBot {
    pub player: u32,
    pub name: String,
    pub level: Level,
}

/// A bot's name: its level and number, e.g. `bot-perfect-01`.
pub fn bot_name(level: Level, index: usize) -> String {
    format!("bot-{level}-{:02}", index + 1)
}

/// Creates (or joins) a tournament, registers the field, starts it (if it
/// created it), follows it to the end — calling `on_event` with every event —
/// and returns the final state. Survives a server restart (players rejoin,
/// the follower watches again from the last event it saw).
pub async fn run_field(
    field: Field,
    mut on_event: impl FnMut(&TournamentEventBody),
) -> Result<FieldOutcome, PlayError> {
    if field.levels.is_empty() {
        return Err(PlayError::Desync("no levels given".into()));
    }
    let mut follower = Client::connect(&field.url, "tournament-director").await?;
    let (tournament, owner_token, mut seq) = match &field.join {
        None => {
            let answer = follower
                .request(|id| ClientMsg::CreateTournament {
                    id,
                    settings: field.settings.clone(),
                })
                .await?;
            match answer {
                ServerMsg::TournamentCreated {
                    tournament,
                    owner_token,
                    state,
                    ..
                } => (tournament, Some(owner_token), state.seq),
                other => return Err(ClientError::Unexpected(format!("{other:?}")).into()),
            }
        }
        Some(key) => match watch_tournament(&mut follower, key, None).await? {
            (tournament, Some(state), _) => (tournament, None, state.seq),
            (_, None, _) => return Err(PlayError::Desync("watch answered no state".into())),
        },
    };
    let mut bots = Vec::with_capacity(field.players);
    let mut registering = tokio::task::JoinSet::new();
    for i in 0..field.players {
        let level = field.levels[i % field.levels.len()];
        let name = bot_name(level, i);
        let (url, t, seed) = (field.url.clone(), tournament.clone(), field.seed);
        registering.spawn(async move {
            register(&url, &t, &name, level, seed.wrapping_add(i as u64 * 7919)).await
        });
    }
    let mut players = tokio::task::JoinSet::new();
    while let Some(entrant) = registering.join_next().await {
        let entrant = entrant.map_err(|e| PlayError::Desync(format!("a bot failed: {e}")))??;
        bots.push(FieldBot {
            player: entrant.player,
            name: entrant.name.clone(),
            level: entrant.level,
        });
        players.spawn(entrant.play());
    }
    bots.sort_by_key(|b| b.player);
    if let Some(token) = &owner_token {
        follower
            .request(|id| ClientMsg::StartTournament {
                id,
                tournament: tournament.clone(),
                token: token.clone(),
            })
            .await?;
    }
    // Follow to the end, watching again after a dropped connection.
    let mut attempts = 0;
    loop {
        match follower.next().await {
            Ok(ServerMsg::TournamentEvent { event, .. }) if event.seq > seq => {
                seq = event.seq;
                on_event(&event.body);
                if matches!(event.body, TournamentEventBody::Finished { .. }) {
                    break;
                }
            }
            Ok(ServerMsg::Shutdown { .. }) | Err(_) => loop {
                attempts += 1;
                if attempts > RECONNECT_ATTEMPTS {
                    return Err(PlayError::GaveUp(RECONNECT_ATTEMPTS));
                }
                tokio::time::sleep(Duration::from_millis(200 * attempts as u64)).await;
                let Ok(mut c) = Client::connect(&field.url, "tournament-director").await else {
                    continue;
                };
                let watched = watch_tournament(&mut c, &tournament, Some(seq)).await;
                if let Err(ClientError::Refused {
                    code: ErrorCode::UnknownTournament,
                    ..
                }) = &watched
                {
                    // Gone from the server's memory: finished long ago?
                    if is_finished(&field.url, &tournament).await {
                        return finish(c, &tournament, bots, players).await;
                    }
                }
                match watched {
                    Ok((_, _, events)) => {
                        follower = c;
                        attempts = 0;
                        let mut finished = false;
                        for event in events {
                            if event.seq <= seq {
                                continue;
                            }
                            seq = event.seq;
                            on_event(&event.body);
                            finished |= matches!(event.body, TournamentEventBody::Finished { .. });
                        }
                        if finished {
                            return finish(follower, &tournament, bots, players).await;
                        }
                        break;
                    }
                    Err(e) if retryable(&e) => continue,
                    Err(e) => return Err(e.into()),
                }
            },
            Ok(_) => {}
        }
    }
    finish(follower, &tournament, bots, players).await
}

/// Waits for the players, then reads the final state.
async fn finish(
    mut follower: Client,
    tournament: &str,
    bots: Vec<FieldBot>,
    mut players: tokio::task::JoinSet<Result<(), PlayError>>,
) -> Result<FieldOutcome, PlayError> {
    while let Some(done) = players.join_next().await {
        if let Ok(Err(e)) = done {
            tracing::warn!("a tournament bot stopped: {e}");
        }
    }
    let state = tournament_state(&mut follower, tournament).await?;
    follower.close().await;
    Ok(FieldOutcome { state, bots })
}

/// `watch_tournament`: the tournament's id, and its state or the events after
/// `since`; the connection then hears its events.
pub async fn watch_tournament(
    client: &mut Client,
    key: &str,
    since: Option<u64>,
) -> Result<(String, Option<TournamentState>, Vec<TournamentEvent>), ClientError> {
    match client
        .request(|id| ClientMsg::WatchTournament {
            id,
            tournament: key.to_string(),
            since,
        })
        .await?
    {
        ServerMsg::TournamentWatching {
            tournament,
            state,
            events,
            ..
        } => Ok((tournament, state, events)),
        other => Err(ClientError::Unexpected(format!("{other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
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
}
