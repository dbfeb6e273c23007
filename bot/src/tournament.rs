//! Tournaments from the bot's side: a registered player that plays every game
//! the server gives it, and a whole field of bots run from one call. (Watching
//! a tournament and exporting its games are the client's:
//! [`grundy_client::tournament`].)

use std::collections::HashSet;
use std::time::Duration;

use grundy_client::client::{Client, ClientError, Hello};
use grundy_client::seat::{play_seat, PlayError, SeatPlan};
use grundy_client::tournament::{tournament_state, watch_tournament};
use grundy_protocol::wire::{
    ClientMsg, ErrorCode, ServerMsg, TournamentEventBody, TournamentSettings, TournamentState,
    TournamentStatus,
};
use grundy_protocol::Level;

/// How many times in a row a player tries to reconnect to its tournament.
const RECONNECT_ATTEMPTS: u32 = 30;

/// A player registered in a tournament: its connection and secret token.
pub struct Entrant {
    pub url: String,
    pub tournament: String,
    /// The name it plays under (the account's, with a token).
    pub name: String,
    /// Who its connections say they are.
    pub hello: Hello,
    pub level: Level,
    pub seed: u64,
    pub player: u32,
    pub token: String,
    client: Client,
}

/// Connects as `hello` says and registers in `tournament` (id or code).
pub async fn register(
    url: &str,
    tournament: &str,
    hello: &Hello,
    level: Level,
    seed: u64,
) -> Result<Entrant, PlayError> {
    let mut client = Client::connect_as(url, hello).await?;
    let name = client.identity().name.clone();
    let answer = client
        .request(|id| ClientMsg::Register {
            id,
            tournament: tournament.to_string(),
            name: None,
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
            name,
            hello: hello.clone(),
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
            hello,
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
                None => match rejoin(&url, &tournament, &hello, &token).await {
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
                            hello: hello.clone(),
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
        // `internal`: in a cluster, the tournament's node did not take the
        // command (it is being taken over); asked again, another node has it.
        ClientError::Refused { code, .. } => matches!(
            code,
            ErrorCode::ShuttingDown | ErrorCode::UnknownTournament | ErrorCode::Internal
        ),
        _ => true,
    }
}

/// Comes back as a registered player; returns the connection and where the
/// tournament is.
async fn rejoin(
    url: &str,
    tournament: &str,
    hello: &Hello,
    token: &str,
) -> Result<(Client, TournamentStatus), ClientError> {
    let mut c = Client::connect_as(url, hello).await?;
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

/// Whether the server has `tournament` (by id) as finished.
async fn is_finished(url: &str, tournament: &str) -> bool {
    let Ok(mut c) = Client::connect(url, "tournament-check").await else {
        return false;
    };
    let state = tournament_state(&mut c, tournament).await;
    c.close().await;
    matches!(state, Ok(s) if s.status == TournamentStatus::Finished)
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
    /// The bots' accounts, one token each (a rated tournament takes only
    /// accounts): bot i plays as `tokens[i]`; without, bots are guests. A
    /// rated tournament is created as the first one's account (a guest may
    /// not create one).
    pub tokens: Vec<String>,
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
    // Only an account may create a rated tournament: the first bot's.
    let director = match (&field.join, field.settings.rated, field.tokens.first()) {
        (None, true, Some(token)) => Hello::Token(token.clone()),
        _ => Hello::guest("tournament-director"),
    };
    let mut follower = Client::connect_as(&field.url, &director).await?;
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
        let hello = Hello::from_token(field.tokens.get(i).cloned(), &bot_name(level, i));
        let (url, t, seed) = (field.url.clone(), tournament.clone(), field.seed);
        registering.spawn(async move {
            register(&url, &t, &hello, level, seed.wrapping_add(i as u64 * 7919)).await
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
