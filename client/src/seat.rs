//! Playing one seat of one match to its end: follow the events, move when it is
//! this seat's turn, and come back (resume with the seat token) when the
//! connection drops.

use std::time::{Duration, Instant};

use grundy_protocol::level::{choose_move, Rng};
use grundy_protocol::match_state::MatchState;
use grundy_protocol::wire::{
    ClientBody, ClientMsg, ErrorCode, Event, MatchResult, Play, RequestId, ServerBody, ServerMsg,
    Snapshot,
};
use grundy_protocol::{Level, Rules};

use crate::client::{Client, ClientError, Hello};
use crate::reconnect::{Attempt, Reconnect};

/// Everything a bot needs to act for a seat.
#[derive(Debug, Clone)]
pub struct SeatPlan {
    /// The server's address; or a cluster's nodes, separated by commas:
    /// each reconnection tries the next one.
    pub url: String,
    /// Who its connections say they are.
    pub hello: Hello,
    pub room: String,
    pub seat: u8,
    pub token: String,
    pub level: Level,
    pub seed: u64,
}

/// A seat just taken: how to play it, the connection, and the room's state.
pub struct Taken {
    pub plan: SeatPlan,
    pub client: Client,
    pub snapshot: Snapshot,
}

impl Taken {
    /// Plays the seat to the end.
    pub async fn play(self) -> Result<MatchResult, PlayError> {
        play_seat(&self.plan, Some(self.client), Some(&self.snapshot)).await
    }
}

/// Connects as `hello` says and sends `command` (a `create_room` or a
/// `join`); returns the seat the server gave.
pub async fn take_seat(
    url: &str,
    hello: &Hello,
    level: Level,
    seed: u64,
    command: impl FnOnce(Option<RequestId>) -> ClientMsg,
) -> Result<Taken, PlayError> {
    let mut client = Client::connect_as(url, hello).await?;
    match client.request(command).await? {
        ServerMsg {
            body:
                ServerBody::Seated {
                    room,
                    seat,
                    token,
                    snapshot,
                    ..
                },
            ..
        } => Ok(Taken {
            plan: SeatPlan {
                url: url.to_string(),
                hello: hello.clone(),
                room,
                seat,
                token,
                level,
                seed,
            },
            client,
            snapshot,
        }),
        other => Err(ClientError::Unexpected(format!("{other:?}")).into()),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("the match could not be followed: {0}")]
    Desync(String),
    #[error("gave up reconnecting after {0} attempts")]
    GaveUp(u32),
}

/// How many times in a row the bot tries to reconnect.
const RECONNECT_ATTEMPTS: u32 = 20;

/// The match as this bot follows it: the protocol crate's `MatchState`, the
/// same reading of a room's log as the server's and the terminal client's.
fn follow(s: &Snapshot) -> Result<MatchState, PlayError> {
    MatchState::from_snapshot(s, Instant::now()).map_err(|e| PlayError::Desync(e.to_string()))
}

fn apply(f: &mut MatchState, event: &Event) -> Result<(), PlayError> {
    f.apply(event, Instant::now())
        .map(|_| ())
        .map_err(|e| PlayError::Desync(e.to_string()))
}

/// Plays the seat until the match ends and returns its result. `client` and
/// `snapshot` are the connection and state the bot already has, if any.
pub async fn play_seat(
    plan: &SeatPlan,
    client: Option<Client>,
    snapshot: Option<&Snapshot>,
) -> Result<MatchResult, PlayError> {
    let mut rng = Rng::new(plan.seed);
    let mut follow = match snapshot {
        Some(s) => Some(follow(s)?),
        None => None,
    };
    let mut client = client;
    loop {
        // (Re)connect and catch up.
        let mut c = match client.take() {
            Some(c) if follow.is_some() => c,
            _ => match reconnect(plan, follow.take()).await? {
                Reconnected::Playing(playing) => {
                    let (c, f) = *playing;
                    follow = Some(f);
                    c
                }
                Reconnected::Over(result) => return Ok(result),
            },
        };
        let f = follow.as_mut().expect("caught up above");
        match drive(plan, &mut c, f, &mut rng).await {
            Ok(result) => {
                c.close().await;
                return Ok(result);
            }
            Err(PlayError::Client(ClientError::Closed | ClientError::Timeout(_))) => {
                tracing::info!(room = %plan.room, seat = plan.seat, "connection lost; resuming");
            }
            Err(e) => return Err(e),
        }
    }
}

/// Follows events and moves until the match ends.
async fn drive(
    plan: &SeatPlan,
    c: &mut Client,
    f: &mut MatchState,
    rng: &mut Rng,
) -> Result<MatchResult, PlayError> {
    // The event of our last acknowledged move: until it is applied, our view
    // is from before that move, and it may still look like our turn (events
    // that came in while the move waited for its ack are read first).
    let mut wait_for = 0;
    loop {
        if let Some(result) = f.result {
            return Ok(result);
        }
        if f.to_move() == Some(plan.seat) && f.seq >= wait_for {
            let position = f.position.clone();
            let level = plan.level;
            let mut r = rng.clone();
            let (mv, r) = tokio::task::spawn_blocking(move || {
                let mv = choose_move(&position, level, &mut r);
                (mv, r)
            })
            .await
            .map_err(|e| PlayError::Desync(format!("move search failed: {e}")))?;
            *rng = r;
            let Some(mv) = mv else {
                return Err(PlayError::Desync("my turn, but the game is over".into()));
            };
            let mv = serde_json::to_value(&mv).map_err(|e| PlayError::Desync(e.to_string()))?;
            let answer = c
                .request(|id| ClientMsg {
                    id,
                    body: ClientBody::Move(Play {
                        room: plan.room.clone(),
                        token: plan.token.clone(),
                        mv: mv.clone(),
                    }),
                })
                .await;
            match answer {
                Ok(ServerMsg {
                    body: ServerBody::Ack { seq: Some(seq), .. },
                    ..
                }) => wait_for = seq,
                Ok(_) => {}
                // Over already, or another client of this seat moved first (two
                // bots on one seat after a restart): follow the events.
                Err(ClientError::Refused {
                    code: ErrorCode::MatchOver | ErrorCode::NotYourTurn,
                    ..
                }) => {}
                // Our view was stale: events we have not applied yet explain it.
                Err(ClientError::Refused { .. }) if c.has_backlog() => {}
                // Passing trouble on the server's side: try the move again soon.
                Err(ClientError::Refused {
                    code: ErrorCode::RateLimited | ErrorCode::Busy | ErrorCode::Internal,
                    ..
                }) => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
                // The server is going down, or the room is on its way to
                // another node: come back and resume.
                Err(ClientError::Refused { code, .. }) if code.is_transient() => {
                    return Err(ClientError::Closed.into())
                }
                Err(ClientError::Refused { code, message }) => {
                    // Should never happen: log the position and resign rather than loop.
                    tracing::error!(room = %plan.room, position = %f.position.to_json(), %mv,
                        "move refused ({code:?}: {message}); resigning");
                    let _ = c
                        .request(|id| ClientMsg {
                            id,
                            body: ClientBody::Resign {
                                room: plan.room.clone(),
                                token: plan.token.clone(),
                            },
                        })
                        .await;
                }
                Err(e) => return Err(e.into()),
            }
        }
        // Wait for the next event of this room (our own move comes back as one).
        match c.next().await? {
            ServerMsg {
                body: ServerBody::Event { room, event },
                ..
            } if room == plan.room => apply(f, &event)?,
            ServerMsg {
                body: ServerBody::Shutdown { .. },
                ..
            } => return Err(ClientError::Closed.into()),
            _ => {}
        }
    }
}

/// What coming back found.
enum Reconnected {
    /// The match goes on (or its end is still in the room's events).
    Playing(Box<(Client, MatchState)>),
    /// The room had left the server's memory: its stored record has the result.
    Over(MatchResult),
}

/// What one attempt at resuming got.
enum Resumed {
    /// The answer to `resume`, on the connection that asked.
    Answer(Box<(Client, ServerMsg)>),
    /// The room had left memory, and its stored record has the result.
    Over(MatchResult),
}

/// Connects again and resumes the seat, with backoff.
async fn reconnect(plan: &SeatPlan, follow: Option<MatchState>) -> Result<Reconnected, PlayError> {
    let since = follow.as_ref().map(|f| f.seq);
    let mut tries = Reconnect::new(&plan.url, &plan.hello, Some(RECONNECT_ATTEMPTS));
    let (c, answer) = loop {
        match tries.attempt(|c| resume(plan, c, since)).await {
            Attempt::Back(Resumed::Answer(answer)) => break *answer,
            Attempt::Back(Resumed::Over(result)) => return Ok(Reconnected::Over(result)),
            Attempt::Retry(r) => r.log_and_sleep("reconnect").await,
            Attempt::GaveUp { error, attempts } if error.is_transient() => {
                return Err(PlayError::GaveUp(attempts))
            }
            Attempt::GaveUp { error, .. } => return Err(error.into()),
        }
    };
    let f = match (answer, follow) {
        (
            ServerMsg {
                body:
                    ServerBody::Watching {
                        snapshot: Some(s), ..
                    },
                ..
            },
            _,
        ) => self::follow(&s)?,
        (
            ServerMsg {
                body: ServerBody::Watching { events, .. },
                ..
            },
            Some(mut f),
        ) => {
            for e in &events {
                apply(&mut f, e)?;
            }
            f
        }
        (other, _) => return Err(PlayError::Desync(format!("resume answered {other:?}"))),
    };
    Ok(Reconnected::Playing(Box::new((c, f))))
}

/// One `resume` of the seat on `c`. A finished room leaves memory after a
/// while: then only its record says how the match ended (an unfinished room
/// is unknown only while a restarting server or a cluster's node brings it
/// back, and the loop asks again).
async fn resume(
    plan: &SeatPlan,
    mut c: Client,
    since: Option<u64>,
) -> Result<Resumed, ClientError> {
    let answer = c
        .request(|id| ClientMsg {
            id,
            body: ClientBody::Resume {
                room: plan.room.clone(),
                token: plan.token.clone(),
                since,
            },
        })
        .await;
    match answer {
        Ok(answer) => Ok(Resumed::Answer(Box::new((c, answer)))),
        Err(
            unknown @ ClientError::Refused {
                code: ErrorCode::UnknownRoom,
                ..
            },
        ) => match recorded_result(plan, &mut c).await {
            Some(result) => {
                c.close().await;
                Ok(Resumed::Over(result))
            }
            None => Err(unknown),
        },
        Err(e) => Err(e),
    }
}

/// The result in the room's stored record, if the match is over.
async fn recorded_result(plan: &SeatPlan, c: &mut Client) -> Option<MatchResult> {
    let answer = c
        .request(|id| ClientMsg {
            id,
            body: ClientBody::GetMatch {
                room: plan.room.clone(),
            },
        })
        .await;
    match answer {
        Ok(ServerMsg {
            body: ServerBody::Match { record, .. },
            ..
        }) => record.result,
        _ => None,
    }
}
