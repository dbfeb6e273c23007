//! Taking a seat: creating a room, joining one, or coming back to one with
//! its seat token (given, or kept on disk by this client).

use anyhow::{bail, Result};
use grundy_client::client::{Client, ClientError};
use grundy_protocol::wire::{ClientBody, ClientMsg, RandomStart, ServerBody, ServerMsg, Snapshot};

use super::{parse_clock, Args, Plan, Seat, Setup, Where};
use crate::net;
use crate::seats::{self, KeptSeat};

impl Setup {
    pub(super) fn from_args(args: &Args) -> Result<Setup> {
        let (spec, random) = match (&args.game, &args.random) {
            (Some(g), _) => (Some(crate::spec::parse(g)?), None),
            (None, Some(family)) => (
                None,
                Some(RandomStart {
                    family: family.clone(),
                    seed: args.seed.unwrap_or_else(seed_from_clock),
                    size: args.size,
                }),
            ),
            (None, None) => bail!(
                "say which game: --game \"nim 3 4 5\" or --random kayles (see `grundy play --help`)"
            ),
        };
        if args.bot.is_none() && !args.open {
            bail!("say who you play: --bot perfect (or a level 0-10), --open for a person, or --join CODE");
        }
        if let Some(seat) = args.seat.filter(|s| *s > 1) {
            bail!("--seat {seat}: a match has seats 0 (moves first) and 1");
        }
        Ok(Setup {
            spec,
            random,
            clock: args.clock.as_deref().map(parse_clock).transpose()?,
            bot: args.bot.clone(),
            seat: args.seat,
            // The server allows hints in untimed rooms only.
            hints: args.hints || (args.bot.is_some() && args.clock.is_none()),
            rated: args.rated,
        })
    }
}

/// `resume`: back to a seat by its token; the seat and the room's snapshot.
pub(super) async fn resume_seat(
    client: &mut Client,
    here: &Where,
    room: &str,
    token: &str,
) -> Result<(Seat, Snapshot)> {
    let answer = client
        .request(|id| ClientMsg {
            id,
            body: ClientBody::Resume {
                room: room.to_string(),
                token: token.to_string(),
                since: None,
            },
        })
        .await;
    match answer {
        Ok(ServerMsg {
            body:
                ServerBody::Watching {
                    room,
                    seat: Some(seat),
                    snapshot: Some(s),
                    ..
                },
            ..
        }) => {
            let mut seat = Seat::new(here, room, seat, token.to_string(), &s.code);
            // A house bot's room says so (a rematch's seat is resumed).
            seat.bot = s.bot.map(|level| level.to_string());
            Ok((seat, s))
        }
        Ok(other) => bail!("unexpected answer: {other:?}"),
        Err(e) => {
            if let ClientError::Refused { .. } = e {
                // A room that is gone or over has no seat to come back to.
                let _ = seats::forget(&here.url, room);
            }
            bail!("cannot come back to room {room}: {}", net::words(&e))
        }
    }
}

impl Seat {
    pub(super) fn new(here: &Where, room: String, seat: u8, token: String, code: &str) -> Seat {
        let comeback =
            (!here.local).then(|| format!("grundy play --resume {code}{}", here.server_flag()));
        Seat {
            url: here.url.clone(),
            name: here.name.clone(),
            room,
            seat,
            token,
            comeback,
            bot: None,
        }
    }
}

/// The kept seat `--resume` (or `--join` of a room this client has a seat
/// in) comes back to: by room code or id, or the only one on this server.
pub(super) fn kept_seat(url: &str, room: &str) -> Result<Option<KeptSeat>> {
    let kept = seats::kept(url)?;
    if room.is_empty() {
        return match kept.as_slice() {
            [] => bail!(
                "no unfinished game of yours is kept for {url}; name one with --resume ROOM --token TOKEN"
            ),
            [one] => Ok(Some(one.clone())),
            many => {
                let list: Vec<String> = many
                    .iter()
                    .map(|s| format!("  grundy play --resume {}   ({}, as {})", s.code, s.game, s.name))
                    .collect();
                bail!(
                    "you have {} unfinished games on {url}; say which:\n{}",
                    many.len(),
                    list.join("\n")
                )
            }
        };
    }
    Ok(kept
        .into_iter()
        .find(|s| s.room == room || s.code.eq_ignore_ascii_case(room)))
}

pub(super) async fn take_seat(
    client: &mut Client,
    here: &Where,
    plan: &Plan,
) -> Result<(Seat, Snapshot)> {
    let answer = match plan {
        Plan::Resume(room, token) if !token.is_empty() => {
            return resume_seat(client, here, room, token).await;
        }
        Plan::Resume(room, _) => {
            let Some(kept) = kept_seat(&here.url, room)? else {
                bail!(
                    "no seat of yours is kept for room {room} on {}; give its seat token with --token",
                    here.url
                );
            };
            println!("Coming back to {} in room {}.", kept.game, kept.code);
            let (mut seat, snapshot) = resume_seat(client, here, &kept.room, &kept.token).await?;
            seat.bot = kept.bot;
            return Ok((seat, snapshot));
        }
        Plan::Join(code) => {
            // A seat this client keeps in the room, taken under this name
            // (another name is another person at the same computer).
            if let Ok(Some(kept)) = kept_seat(&here.url, code) {
                if kept.name == here.name {
                    println!("You have a seat in room {}: coming back to it.", kept.code);
                    let (mut seat, snapshot) =
                        resume_seat(client, here, &kept.room, &kept.token).await?;
                    seat.bot = kept.bot;
                    return Ok((seat, snapshot));
                }
            }
            client
                .request(|id| ClientMsg {
                    id,
                    body: ClientBody::Join {
                        room: code.clone(),
                        seat: None,
                    },
                })
                .await
        }
        Plan::Create(setup) => {
            client
                .request(|id| ClientMsg {
                    id,
                    body: ClientBody::CreateRoom {
                        spec: setup.spec.clone(),
                        random: setup.random.clone(),
                        clock: setup.clock,
                        listed: true,
                        seat: setup.seat,
                        hints: setup.hints,
                        rated: setup.rated,
                        bot: setup.bot.clone(),
                    },
                })
                .await
        }
    };
    match answer {
        Ok(ServerMsg {
            body:
                ServerBody::Seated {
                    room,
                    seat,
                    token,
                    snapshot,
                    ..
                },
            ..
        }) => {
            let mut seat = Seat::new(here, room, seat, token, &snapshot.code);
            if let Plan::Create(setup) = plan {
                seat.bot = setup.bot.clone();
            }
            Ok((seat, snapshot))
        }
        Ok(other) => bail!("unexpected answer: {other:?}"),
        Err(e) => bail!("{}", net::words(&e)),
    }
}

pub(super) fn seed_from_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}
