//! The match loop: the room's events, the clock and the person's lines on
//! one connection (`session`), and on the next one after a lost connection
//! (`play_loop`), until the match is over or the person leaves.

use std::time::Duration;

use anyhow::Result;
use grundy_client::client::{Client, ClientError};
use grundy_protocol::wire::{ServerBody, ServerMsg, Snapshot};

use super::board::{first_move, intro, prompt_line, show, tell};
use super::reconnect::reconnect;
use super::typed::{typed_line, Step, Watch};
use super::{Finish, Seat, Where, NO_SHOW_MS};
use crate::console::{Console, Typed};
use crate::follow::{clock_text, Follow};
use crate::net;
use crate::render::Paint;
use crate::seats::{self, KeptSeat, PastGame};

/// Warnings of low time on the player's own clock, in milliseconds left.
const LOW_TIME_MS: [u64; 3] = [60_000, 30_000, 10_000];

/// How a match played at the prompt ended: how, the match as it stands,
/// and the connection still in its room once it is over (for a rematch;
/// None when it was lost at the very end).
pub(super) struct Played {
    pub finish: Finish,
    pub follow: Box<Follow>,
    pub client: Option<Client>,
}

/// Greets the person, draws the board and runs the match loop to the end
/// (or until the person leaves).
/// The seat is kept on disk meanwhile, and the match remembered once over.
pub(super) async fn play_match(
    client: Client,
    seat: &Seat,
    snapshot: &Snapshot,
    console: &mut Console,
    paint: &Paint,
    here: &Where,
) -> Result<Played> {
    let mut follow = Follow::from_snapshot(snapshot).map_err(anyhow::Error::msg)?;
    let game = game_name(&follow);
    if !here.local {
        keep_seat(&follow, seat, here, &game, console, paint);
    }
    console.say(&intro(&follow, seat, snapshot, here, &game));
    show(&follow, seat.seat, console, paint);
    let (finish, client) = play_loop(client, seat, &mut follow, console, paint, here).await?;
    if finish == Finish::Over && !here.local {
        let _ = seats::forget(&here.url, &seat.room);
        let _ = seats::remember(past_game(&follow, seat, here, &game));
    }
    Ok(Played {
        finish,
        follow: Box::new(follow),
        client,
    })
}

/// Keeps the seat on disk until the match is over (`grundy play --resume`
/// comes back to it); where that fails, the person is told the token.
fn keep_seat(f: &Follow, seat: &Seat, here: &Where, game: &str, console: &Console, paint: &Paint) {
    let kept = seats::keep(KeptSeat {
        server: here.url.clone(),
        room: seat.room.clone(),
        code: f.code.clone(),
        seat: seat.seat,
        token: seat.token.clone(),
        name: here.name.clone(),
        game: game.to_string(),
        bot: seat.bot.clone(),
        since_ms: seats::now_ms(),
    });
    if let Err(e) = kept {
        console.say(&paint.bad(&format!(
            "Your seat could not be kept on disk ({e:#}): write down its token to come back: {}",
            seat.token
        )));
    }
}

/// The game's own name ("Kayles"), from the start spec.
fn game_name(f: &Follow) -> String {
    grundy_protocol::names::spec_name(&f.game.spec).to_string()
}

fn past_game(f: &Follow, seat: &Seat, here: &Where, game: &str) -> PastGame {
    let (result, reason) = match f.game.result {
        Some(r) => (
            match r.winner {
                Some(w) if w == seat.seat => "won",
                Some(_) => "lost",
                None => "no winner",
            },
            crate::follow::reason_text(r.reason),
        ),
        None => ("no winner", "unknown"),
    };
    PastGame {
        server: here.url.clone(),
        room: seat.room.clone(),
        code: f.code.clone(),
        game: game.to_string(),
        seat: seat.seat,
        opponent: f.name(seat.seat ^ 1),
        result: result.to_string(),
        reason: reason.to_string(),
        moves: f.game.plies() as u64,
        ended_ms: seats::now_ms(),
    }
}

async fn play_loop(
    client: Client,
    seat: &Seat,
    f: &mut Follow,
    console: &mut Console,
    paint: &Paint,
    here: &Where,
) -> Result<(Finish, Option<Client>)> {
    let mut client = Some(client);
    let mut watch = Watch::default();
    loop {
        if f.game.result.is_some() {
            if !here.local && f.game.plies() > 0 {
                console.say(&format!(
                    "Replay it with `grundy replay {}{}`.",
                    f.code,
                    here.server_flag()
                ));
            }
            // The connection stays in the room: a rematch is offered there.
            return Ok((Finish::Over, client));
        }
        let mut c = match client.take() {
            Some(c) => c,
            None => match reconnect(seat, f, console, paint).await? {
                Some(c) => c,
                None => {
                    left(seat, console, here);
                    return Ok((Finish::Quit, None));
                }
            },
        };
        match session(&mut c, seat, f, console, paint, &mut watch).await {
            Ok(Step::Quit) => {
                left(seat, console, here);
                c.close().await;
                return Ok((Finish::Quit, None));
            }
            Ok(Step::Over) => client = Some(c),
            Err(e) => {
                console.say(&format!(
                    "\nConnection lost ({}); reconnecting…",
                    net::words(&e)
                ));
            }
        }
    }
}

/// Tells a person who leaves before the end how to come back.
fn left(seat: &Seat, console: &Console, here: &Where) {
    match &seat.comeback {
        _ if here.local => console.say("You left; the local server stops, and the match with it."),
        Some(back) => console.say(&format!(
            "You left; your seat is kept (your clock, if any, runs). Come back with:\n  {back}"
        )),
        None => console.say("You left."),
    }
}

/// Follows the room, the clock and the person's input on one connection.
async fn session(
    c: &mut Client,
    seat: &Seat,
    f: &mut Follow,
    console: &mut Console,
    paint: &Paint,
    watch: &mut Watch,
) -> Result<Step, ClientError> {
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    if let Some((line, plies)) = watch.acting.take() {
        if f.game.plies() == plies {
            watch.held = Some(Typed::Line(line));
        }
    }
    loop {
        if f.game.result.is_some() {
            // A line read ahead is for what comes after the match.
            if let Some(typed) = watch.held.take() {
                console.unread(typed);
            }
            return Ok(Step::Over);
        }
        if watch.held.is_some() && my_turn(f, seat.seat, watch) {
            match watch.held.take() {
                Some(Typed::Line(line)) => {
                    watch.acting = Some((line.clone(), f.game.plies()));
                    let step = typed_line(c, seat, f, &line, console, paint, watch).await?;
                    watch.acting = None;
                    if let Some(step) = step {
                        return Ok(step);
                    }
                }
                _ => return Ok(Step::Quit),
            }
        }
        tokio::select! {
            msg = c.next() => match msg? {
                ServerMsg { body: ServerBody::Event { room, event }, .. } if room == f.room => {
                    match f.apply(&event) {
                        Ok(h) => {
                            if tell(f, seat.seat, &h, console, paint) {
                                show(f, seat.seat, console, paint);
                            }
                        }
                        // Out of step: resume gives a fresh snapshot.
                        Err(e) => {
                            console.say(&format!("{e}; catching up"));
                            return Err(ClientError::Closed);
                        }
                    }
                }
                ServerMsg { body: ServerBody::Shutdown { message }, .. } => {
                    console.say(&format!("The server is going down: {message}"));
                    return Err(ClientError::Closed);
                }
                _ => {}
            },
            typed = console.next(), if watch.held.is_none() => match typed {
                typed if console.scripted() && waits_for_turn(f, seat, watch) => {
                    watch.held = Some(typed);
                }
                Typed::Line(line) => {
                    if let Some(step) = typed_line(c, seat, f, &line, console, paint, watch).await? {
                        return Ok(step);
                    }
                }
                Typed::Interrupt | Typed::End => return Ok(Step::Quit),
            },
            _ = tokio::signal::ctrl_c() => return Ok(Step::Quit),
            _ = tick.tick() => clock_tick(f, seat.seat, console, watch),
        }
    }
}

/// Whether the match has started and `me` is to move (with no move of
/// ours accepted and not yet seen).
fn my_turn(f: &Follow, me: u8, watch: &Watch) -> bool {
    f.game.started && f.to_move() == Some(me) && watch.moved_at != Some(f.game.plies())
}

/// Whether a script's line waits for its turn: once the match is on, or
/// before it when a house bot is about to sit down (a room open for a
/// person may wait for ever: its lines, and its end, act at once).
fn waits_for_turn(f: &Follow, seat: &Seat, watch: &Watch) -> bool {
    !my_turn(f, seat.seat, watch) && (f.game.started || seat.bot.is_some())
}

/// Every half second: the live prompt's clocks, and warnings of low time.
fn clock_tick(f: &Follow, me: u8, console: &Console, watch: &mut Watch) {
    if f.game.clock.is_none() || f.to_move().is_none() {
        return;
    }
    console.refresh(&prompt_line(f, me));
    if f.to_move() != Some(me) {
        return;
    }
    let ply = f.game.plies();
    let mut warn = |left: u64, text: String| {
        if !watch.warned.contains(&(ply, left)) {
            watch.warned.push((ply, left));
            console.say(&text);
        }
    };
    if first_move(f, me) {
        if let Some(started) = f.game.turn_started {
            let spent = started.elapsed().as_millis() as u64;
            if spent + 10_000 >= NO_SHOW_MS && spent < NO_SHOW_MS {
                warn(
                    u64::MAX,
                    format!(
                        "Your first move must come within {} s, or the match is called off.",
                        (NO_SHOW_MS - spent).div_ceil(1000)
                    ),
                );
            }
        }
    }
    if let (Some(bank), Some(clock)) = (f.bank_ms(me), f.game.clock) {
        // Each limit once a turn, and none the game began under.
        let below = LOW_TIME_MS.iter().rev().filter(|&&l| l < clock.initial_ms);
        if let Some(&limit) = below.clone().find(|&&l| bank <= l) {
            warn(limit, format!("{} left on your clock.", clock_text(bank)));
        }
    }
}
