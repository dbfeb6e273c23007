//! `grundy tournament join`: register (or come back with the player token),
//! then wait for games and play each at the prompt with `grundy play`'s
//! loop, coming back (`rejoin`) after a lost connection.

use std::collections::{HashSet, VecDeque};

use anyhow::{bail, Result};
use grundy_client::client::{Client, ClientError};
use grundy_client::reconnect::{Attempt, Reconnect};
use grundy_client::tournament::{tournament_state, watch_tournament};
use grundy_protocol::wire::{
    ClientBody, ClientMsg, ServerBody, ServerMsg, TournamentEvent, TournamentEventBody,
    TournamentState,
};

use super::words::{show_state, standings_table, Log};
use super::{connect, in_play_or_over, server_flag, Asked, JoinArgs};
use crate::console::{Console, Typed};
use crate::net;
use crate::play::{self, Finish};
use crate::render::Paint;

/// A registered player of this command.
struct Player {
    url: String,
    /// The tournament's id.
    tournament: String,
    code: String,
    /// The player's number in the tournament.
    player: u32,
    name: String,
    token: String,
}

impl Player {
    /// The command that comes back as this player.
    fn comeback(&self) -> String {
        format!(
            "grundy tournament join {} --token {}{}",
            self.code,
            self.token,
            server_flag(&self.url)
        )
    }
}

const WAITING_HELP: &str = "While you wait for your games: `standings` shows them, `withdraw` leaves the tournament (your remaining games are forfeited), `quit` stops here (you stay registered).";

/// How many times in a row the player's connection is tried again.
const REJOIN_ATTEMPTS: u32 = 20;

pub(super) async fn join(args: JoinArgs) -> Result<()> {
    let paint = Paint::detect();
    let hello_name = args.name.clone().unwrap_or_else(|| "player".to_string());
    let c = connect(&args.server, &hello_name).await?;
    let (c, me, state) = enter(c, &args, hello_name).await?;
    greet(&me, &state, args.token.is_some());
    if show_state(&state) {
        c.close().await;
        return Ok(());
    }
    println!("{WAITING_HELP}");
    wait_for_games(c, &me, Log::new(&state), &paint).await
}

/// Registers (or, with a token, comes back as a registered player): the
/// player and the tournament's state. A tournament that is over has nothing
/// to join: an error that says where its standings are.
async fn enter(
    mut c: Client,
    args: &JoinArgs,
    hello_name: String,
) -> Result<(Client, Player, TournamentState)> {
    let answer = match &args.token {
        Some(token) => {
            c.request(|id| ClientMsg {
                id,
                body: ClientBody::Rejoin {
                    tournament: args.code.clone(),
                    token: token.clone(),
                },
            })
            .await
        }
        None => {
            // An account registers under its username; a guest under its name.
            let name = c.identity().account.is_none().then(|| hello_name.clone());
            c.request(|id| ClientMsg {
                id,
                body: ClientBody::Register {
                    tournament: args.code.clone(),
                    name,
                },
            })
            .await
        }
    };
    let (c, answer) = match in_play_or_over(c, &args.code, answer).await? {
        Asked::InPlay(c, answer) => (c, answer),
        Asked::Over(state) => bail!(
            "tournament {} is over: there is nothing to join. Its final standings: \
             `grundy tournament show {}{}`",
            state.code,
            state.code,
            server_flag(&args.server)
        ),
    };
    let ServerMsg {
        body:
            ServerBody::Registered {
                tournament,
                player,
                token,
                state,
                ..
            },
        ..
    } = answer
    else {
        bail!("unexpected answer: {answer:?}");
    };
    let me = Player {
        url: args.server.clone(),
        tournament,
        code: state.code.clone(),
        player,
        name: state
            .players
            .get(player as usize)
            .map_or(hello_name, |p| p.name.clone()),
        token,
    };
    Ok((c, me, state))
}

/// Says who the person plays as, their token and how to come back.
fn greet(me: &Player, state: &TournamentState, back: bool) {
    println!(
        "{} {} as player {} ({}). The tournament's id: {}.",
        if back { "Back in" } else { "Registered in" },
        state.code,
        me.player,
        me.name,
        me.tournament
    );
    println!(
        "Your player token: {}\nIf you lose the connection, come back with:\n  {}",
        me.token,
        me.comeback()
    );
}

/// Between games: the tournament's news, the person's lines (`standings`,
/// `withdraw`, `quit`), and each game as it comes, until the tournament is
/// over or the person leaves.
async fn wait_for_games(mut c: Client, me: &Player, mut log: Log, paint: &Paint) -> Result<()> {
    // Plain lines: what the tournament prints comes at any time, between games too.
    let mut lines = Console::plain_lines();
    let mut input_open = true;
    // Messages that came while a game was played, to handle after it.
    let mut pending: VecDeque<ServerMsg> = VecDeque::new();
    let mut played: HashSet<String> = HashSet::new();
    loop {
        let msg = match pending.pop_front() {
            Some(m) => Ok(m),
            None => tokio::select! {
                m = c.next() => m,
                line = lines.next(), if input_open => {
                    match line {
                        Typed::End | Typed::Interrupt => input_open = false,
                        Typed::Line(line) => {
                            if typed_waiting(&mut c, me, &line).await == Waiting::Leave {
                                c.close().await;
                                return Ok(());
                            }
                        }
                    }
                    continue;
                }
            },
        };
        match msg {
            Ok(ServerMsg {
                body: ServerBody::TournamentEvent { tournament, event },
                ..
            }) if tournament == me.tournament => {
                if let Some(text) = log.apply(&event) {
                    print!("{text}");
                }
                if matches!(event.body, TournamentEventBody::Finished { .. }) {
                    c.close().await;
                    return Ok(());
                }
            }
            Ok(ServerMsg {
                body:
                    ServerBody::YourGame {
                        tournament,
                        round,
                        room,
                        token,
                        opponent,
                        ..
                    },
                ..
            }) if tournament == me.tournament => {
                if !played.insert(room.clone()) {
                    continue; // told again after a rejoin: played already
                }
                println!("\nRound {round}: your game against {opponent} starts.");
                let game = Game {
                    room: &room,
                    token: &token,
                };
                let (outcome, lost) =
                    play_game(&mut c, me, game, &mut lines, paint, &mut pending).await;
                match outcome {
                    Ok(Finish::Over) => println!(
                        "\nBack to the tournament: waiting for your next game (type `help` for what you can do)."
                    ),
                    Ok(Finish::Quit) => {
                        c.close().await;
                        return Ok(());
                    }
                    Err(e) => {
                        played.remove(&room);
                        println!(
                            "{}",
                            paint.bad(&format!("The game could not be played on: {e:#}"))
                        );
                    }
                }
                if lost {
                    c = rejoin(me, &mut log, &mut pending).await?;
                }
            }
            Ok(ServerMsg {
                body: ServerBody::Shutdown { message },
                ..
            }) => {
                println!("\nThe server is going down: {message}");
            }
            Ok(_) => {}
            Err(e) => {
                println!("\nConnection lost ({}); rejoining…", net::words(&e));
                c = rejoin(me, &mut log, &mut pending).await?;
            }
        }
    }
}

/// A game the tournament gave this player: its room and seat token.
struct Game<'a> {
    room: &'a str,
    token: &'a str,
}

/// Plays one game at the prompt on a connection of its own, reading the
/// tournament's connection `c` meanwhile (it would be closed as idle
/// otherwise): its news waits in `pending`. Returns how the game ended, and
/// whether `c` was lost meanwhile.
async fn play_game(
    c: &mut Client,
    me: &Player,
    game: Game<'_>,
    lines: &mut Console,
    paint: &Paint,
    pending: &mut VecDeque<ServerMsg>,
) -> (Result<Finish>, bool) {
    let mut lost = false;
    let played = play::play_resumed(
        &me.url,
        &me.name,
        game.room,
        game.token,
        me.comeback(),
        lines,
        paint,
    );
    tokio::pin!(played);
    loop {
        tokio::select! {
            r = &mut played => return (r, lost),
            m = c.next(), if !lost => match m {
                Ok(m) => pending.push_back(m),
                Err(_) => lost = true,
            },
        }
    }
}

#[derive(PartialEq, Eq)]
enum Waiting {
    Stay,
    Leave,
}

/// Acts on a line typed while no game is being played.
async fn typed_waiting(c: &mut Client, me: &Player, line: &str) -> Waiting {
    match line.trim() {
        "" => {}
        "withdraw" => {
            let answer = c
                .request(|id| ClientMsg {
                    id,
                    body: ClientBody::Withdraw {
                        tournament: me.tournament.clone(),
                        token: me.token.clone(),
                    },
                })
                .await;
            match answer {
                Ok(_) => {
                    println!(
                        "The server confirms: you have withdrawn from {}; your remaining games are forfeited.\nFollow the rest with `grundy tournament watch {}{}`.",
                        me.code,
                        me.code,
                        server_flag(&me.url)
                    );
                    return Waiting::Leave;
                }
                Err(e) => println!("Not withdrawn: {}", net::words(&e)),
            }
        }
        "standings" => match tournament_state(c, &me.tournament).await {
            Ok(state) if state.round == 0 => {
                println!("No standings yet: the tournament has not started.");
            }
            Ok(state) => print!("Standings:\n{}", standings_table(&state.standings)),
            Err(e) => println!("{}", net::words(&e)),
        },
        "quit" | "q" | "exit" => {
            println!(
                "You stay registered (a game you are not there for is lost on time). Come back with:\n  {}",
                me.comeback()
            );
            return Waiting::Leave;
        }
        _ => println!("{WAITING_HELP}"),
    }
    Waiting::Stay
}

/// Comes back as the player after a dropped connection; the events missed
/// meanwhile are queued in `pending`.
async fn rejoin(me: &Player, log: &mut Log, pending: &mut VecDeque<ServerMsg>) -> Result<Client> {
    let hello = crate::net::hello(&me.url, &me.name);
    let since = log.seq;
    let mut tries = Reconnect::new(&me.url, &hello, Some(REJOIN_ATTEMPTS));
    let (c, missed) = loop {
        match tries.attempt(|c| rejoin_on(c, me, since)).await {
            Attempt::Back(back) => break back,
            Attempt::Retry(r) => {
                println!(
                    "Cannot rejoin ({}); trying again in {:.1} s…",
                    net::words(&r.error),
                    r.wait.as_secs_f32()
                );
                r.sleep().await;
            }
            Attempt::GaveUp { error, .. } => {
                bail!("cannot rejoin the tournament: {}", net::words(&error))
            }
        }
    };
    println!("Back in the tournament.");
    pending.extend(missed.into_iter().map(|event| {
        ServerMsg::notice(ServerBody::TournamentEvent {
            tournament: me.tournament.clone(),
            event,
        })
    }));
    Ok(c)
}

/// One `rejoin` on `c`, and the events after `since`.
async fn rejoin_on(
    mut c: Client,
    me: &Player,
    since: u64,
) -> Result<(Client, Vec<TournamentEvent>), ClientError> {
    c.request(|id| ClientMsg {
        id,
        body: ClientBody::Rejoin {
            tournament: me.tournament.clone(),
            token: me.token.clone(),
        },
    })
    .await?;
    let missed = catch_up(&mut c, &me.tournament, since).await?;
    Ok((c, missed))
}

/// Follows the tournament on `c` and returns the events after `since`.
async fn catch_up(
    c: &mut Client,
    tournament: &str,
    since: u64,
) -> Result<Vec<TournamentEvent>, ClientError> {
    let (_, _, events) = watch_tournament(c, tournament, Some(since)).await?;
    Ok(events)
}
