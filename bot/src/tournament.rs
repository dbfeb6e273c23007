//! Tournaments from the bot's side: a registered player that plays every game
//! the server gives it, and a whole field of bots run from one call. (Watching
//! a tournament and exporting its games are the client's:
//! [`grundy_client::tournament`].)

use std::collections::HashSet;

use grundy_client::client::{Client, ClientError, Hello};
use grundy_client::reconnect::{Attempt, Reconnect};
use grundy_client::seat::{play_seat, PlayError, SeatPlan};
use grundy_client::tournament::{tournament_state, watch_tournament};
use grundy_protocol::wire::{
    ClientBody, ClientMsg, ErrorCode, ServerBody, ServerMsg, TournamentEvent, TournamentEventBody,
    TournamentSettings, TournamentState, TournamentStatus,
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
        .request(|id| ClientMsg {
            id,
            body: ClientBody::Register {
                tournament: tournament.to_string(),
                name: None,
            },
        })
        .await?;
    match answer {
        ServerMsg {
            body:
                ServerBody::Registered {
                    tournament,
                    player,
                    token,
                    ..
                },
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
        loop {
            let mut c = match client.take() {
                Some(c) => c,
                None => match rejoin(&url, &tournament, &hello, &token).await? {
                    Rejoined::Playing(c) => c,
                    // It ended while this player was away.
                    Rejoined::Finished(c) => {
                        if let Some(c) = c {
                            c.close().await;
                        }
                        while games.join_next().await.is_some() {}
                        return Ok(());
                    }
                },
            };
            let over = loop {
                match c.next().await {
                    Ok(ServerMsg {
                        body:
                            ServerBody::YourGame {
                                room, seat, token, ..
                            },
                        ..
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
                    Ok(ServerMsg {
                        body: ServerBody::TournamentEvent { event, .. },
                        ..
                    }) => {
                        if matches!(event.body, TournamentEventBody::Finished { .. }) {
                            break true;
                        }
                    }
                    Ok(ServerMsg {
                        body: ServerBody::Shutdown { .. },
                        ..
                    })
                    | Err(_) => break false,
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

/// What coming back as a registered player found.
enum Rejoined {
    /// The tournament goes on: the connection, registered again.
    Playing(Client),
    /// It is over (gone from the server's memory if no connection is left).
    Finished(Option<Client>),
}

/// Comes back as a registered player (`rejoin`), with backoff.
async fn rejoin(
    url: &str,
    tournament: &str,
    hello: &Hello,
    token: &str,
) -> Result<Rejoined, PlayError> {
    let mut tries = Reconnect::new(url, hello, Some(RECONNECT_ATTEMPTS));
    loop {
        match tries
            .attempt(|c| rejoin_on(c, url, tournament, token))
            .await
        {
            Attempt::Back(rejoined) => return Ok(rejoined),
            Attempt::Retry(r) => r.log_and_sleep("rejoin").await,
            Attempt::GaveUp { error, .. } => return Err(error.into()),
        }
    }
}

/// One `rejoin` on `c`.
async fn rejoin_on(
    mut c: Client,
    url: &str,
    tournament: &str,
    token: &str,
) -> Result<Rejoined, ClientError> {
    let answer = c
        .request(|id| ClientMsg {
            id,
            body: ClientBody::Rejoin {
                tournament: tournament.to_string(),
                token: token.to_string(),
            },
        })
        .await;
    match answer {
        Ok(ServerMsg {
            body: ServerBody::Registered { state, .. },
            ..
        }) if state.status == TournamentStatus::Finished => Ok(Rejoined::Finished(Some(c))),
        Ok(ServerMsg {
            body: ServerBody::Registered { .. },
            ..
        }) => Ok(Rejoined::Playing(c)),
        Ok(other) => Err(ClientError::Unexpected(format!("{other:?}"))),
        // Gone from the server's memory: over long ago, if it is finished
        // in the store.
        Err(
            e @ ClientError::Refused {
                code: ErrorCode::UnknownTournament,
                ..
            },
        ) => {
            c.close().await;
            if is_finished(url, tournament).await {
                Ok(Rejoined::Finished(None))
            } else {
                Err(e)
            }
        }
        Err(e) => Err(e),
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
                .request(|id| ClientMsg {
                    id,
                    body: ClientBody::CreateTournament {
                        settings: field.settings.clone(),
                    },
                })
                .await?;
            match answer {
                ServerMsg {
                    body:
                        ServerBody::TournamentCreated {
                            tournament,
                            owner_token,
                            state,
                            ..
                        },
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
            .request(|id| ClientMsg {
                id,
                body: ClientBody::StartTournament {
                    tournament: tournament.clone(),
                    token: token.clone(),
                },
            })
            .await?;
    }
    // Follow to the end, watching again after a dropped connection.
    loop {
        match follower.next().await {
            Ok(ServerMsg {
                body: ServerBody::TournamentEvent { event, .. },
                ..
            }) if event.seq > seq => {
                seq = event.seq;
                on_event(&event.body);
                if matches!(event.body, TournamentEventBody::Finished { .. }) {
                    break;
                }
            }
            Ok(ServerMsg {
                body: ServerBody::Shutdown { .. },
                ..
            })
            | Err(_) => {
                let (c, events) = match watch_again(&field.url, &tournament, seq).await? {
                    Watched::Events(c, events) => (c, events),
                    Watched::Finished(c) => return finish(c, &tournament, bots, players).await,
                };
                follower = c;
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
            }
            Ok(_) => {}
        }
    }
    finish(follower, &tournament, bots, players).await
}

/// What watching a tournament again found.
enum Watched {
    /// The connection that watches, and the events after the last one seen.
    Events(Client, Vec<TournamentEvent>),
    /// Gone from the server's memory, finished long ago.
    Finished(Client),
}

/// Watches `tournament` again after a dropped connection, from event `seq`.
async fn watch_again(url: &str, tournament: &str, seq: u64) -> Result<Watched, PlayError> {
    let hello = Hello::guest("tournament-director");
    let mut tries = Reconnect::new(url, &hello, Some(RECONNECT_ATTEMPTS));
    loop {
        match tries.attempt(|c| watch_on(c, url, tournament, seq)).await {
            Attempt::Back(watched) => return Ok(watched),
            Attempt::Retry(r) => r.log_and_sleep("watching the tournament").await,
            Attempt::GaveUp { error, attempts } if error.is_transient() => {
                return Err(PlayError::GaveUp(attempts))
            }
            Attempt::GaveUp { error, .. } => return Err(error.into()),
        }
    }
}

/// One `watch_tournament` on `c`, from event `seq`.
async fn watch_on(
    mut c: Client,
    url: &str,
    tournament: &str,
    seq: u64,
) -> Result<Watched, ClientError> {
    match watch_tournament(&mut c, tournament, Some(seq)).await {
        Ok((_, _, events)) => Ok(Watched::Events(c, events)),
        Err(
            e @ ClientError::Refused {
                code: ErrorCode::UnknownTournament,
                ..
            },
        ) => {
            // Gone from the server's memory: finished long ago?
            if is_finished(url, tournament).await {
                Ok(Watched::Finished(c))
            } else {
                Err(e)
            }
        }
        Err(e) => Err(e),
    }
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
