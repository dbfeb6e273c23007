//! What a line typed during the match does: a move (checked with the engine
//! before it is sent), `resign` (asked twice), `abort`, `hint`, `moves`,
//! `help`, `quit`. A lost connection goes up, to reconnect.

use grundy_client::client::{Client, ClientError};
use grundy_protocol::wire::{ClientBody, ClientMsg, ErrorCode, Play, RequestId};
use grundy_protocol::{Analysis, Outcome};

use super::board::{prompt, show};
use super::Seat;
use crate::console::{Console, Typed};
use crate::describe::{describe_move, nim_table};
use crate::follow::Follow;
use crate::input::{self, Input};
use crate::net;
use crate::render::Paint;

/// How a match's session ends: the person quits, or the match is over.
pub(super) enum Step {
    Quit,
    Over,
}

/// What the prompt keeps between lines: warnings already given, a resign
/// waiting for its confirmation.
#[derive(Default)]
pub(super) struct Watch {
    /// (ply, milliseconds left) warnings given.
    pub(super) warned: Vec<(usize, u64)>,
    pub(super) resign_asked: bool,
    /// A script's line (or its end) read before its turn, acted on once
    /// the turn comes: piped lines arrive faster than an opponent moves (or
    /// than a house bot sits down), and a move may name a heap the reply
    /// makes. No line is read while one waits.
    pub(super) held: Option<Typed>,
    /// A held line being acted on, with the match's plies then: kept if the
    /// connection drops meanwhile, and held again after the reconnection
    /// if the match has not moved on (the line did not reach the server).
    pub(super) acting: Option<(String, usize)>,
    /// The ply at which a move of ours was accepted, until its event moves
    /// the match on: it is not our turn any more, whatever the state says.
    pub(super) moved_at: Option<usize>,
}

/// Acts on one typed line. Transport errors go up (to reconnect).
pub(super) async fn typed_line(
    c: &mut Client,
    seat: &Seat,
    f: &mut Follow,
    line: &str,
    console: &Console,
    paint: &Paint,
    watch: &mut Watch,
) -> Result<Option<Step>, ClientError> {
    let parsed = input::parse(&f.game.position, line);
    let resign_asked = std::mem::take(&mut watch.resign_asked);
    match parsed {
        // Yes to "resign?".
        Err(_) if resign_asked && matches!(line.to_ascii_lowercase().as_str(), "y" | "yes") => {
            return resign(c, seat, console, paint).await;
        }
        // One line: the message says to type `help` for the whole of it.
        Err(reason) => console.say(&paint.bad(&reason)),
        Ok(Input::Help) => console.say(&input::help_text(&f.game.position)),
        Ok(Input::Redraw) => {
            show(f, seat.seat, console, paint);
            return Ok(None);
        }
        Ok(Input::Quit) => return Ok(Some(Step::Quit)),
        Ok(Input::Hint) => hint(f, seat.seat, console, paint),
        Ok(Input::Moves) => console.say(&f.move_list(false, paint)),
        Ok(Input::Resign) if !resign_asked => {
            console.say(
                "Resign this match? Type `resign` again (or `yes`) to confirm; anything else goes on.",
            );
            watch.resign_asked = true;
        }
        Ok(Input::Resign) => return resign(c, seat, console, paint).await,
        Ok(Input::Abort) => {
            let refused = seat_command(c, |id| ClientMsg {
                id,
                body: ClientBody::Abort {
                    room: seat.room.clone(),
                    token: seat.token.clone(),
                },
            })
            .await?;
            match refused {
                None => return Ok(None),
                Some(ClientError::Refused {
                    code: ErrorCode::TooLate,
                    ..
                }) => console.say(&paint.bad(
                    "Too late to call the match off: you have moved. Type `resign` to give up.",
                )),
                Some(e) => console.say(&paint.bad(&net::words(&e))),
            }
        }
        Ok(Input::Move(value, _)) => {
            if !f.game.started {
                console.say("The match has not started: waiting for a second player.");
            } else if f.to_move() != Some(seat.seat) {
                console.say(&format!(
                    "It is not your turn: wait for {}.",
                    f.name(seat.seat ^ 1)
                ));
            } else {
                let refused = seat_command(c, |id| ClientMsg {
                    id,
                    body: ClientBody::Move(Play {
                        room: seat.room.clone(),
                        token: seat.token.clone(),
                        mv: value.clone(),
                    }),
                })
                .await?;
                match refused {
                    // The moved event (already queued) redraws the board.
                    None => {
                        watch.moved_at = Some(f.game.plies());
                        return Ok(None);
                    }
                    Some(e) => console.say(&paint.bad(&net::words(&e))),
                }
            }
        }
    }
    prompt(f, seat.seat, console);
    Ok(None)
}

/// Resigns (confirmed): the `ended` event tells the result.
async fn resign(
    c: &mut Client,
    seat: &Seat,
    console: &Console,
    paint: &Paint,
) -> Result<Option<Step>, ClientError> {
    let refused = seat_command(c, |id| ClientMsg {
        id,
        body: ClientBody::Resign {
            room: seat.room.clone(),
            token: seat.token.clone(),
        },
    })
    .await?;
    if let Some(e) = refused {
        console.say(&paint.bad(&net::words(&e)));
    }
    Ok(None)
}

/// Sends a command of the seat: `None` once accepted, the refusal when the
/// server refuses it; a lost connection goes up (to reconnect).
async fn seat_command(
    c: &mut Client,
    build: impl FnOnce(Option<RequestId>) -> ClientMsg,
) -> Result<Option<ClientError>, ClientError> {
    match c.request(build).await {
        Ok(_) => Ok(None),
        Err(e) if e.connection_lost() => Err(e),
        Err(e) => Ok(Some(e)),
    }
}

fn hint(f: &Follow, me: u8, console: &Console, paint: &Paint) {
    if !f.hints {
        console.say(if f.game.clock.is_some() {
            "No hints in a timed match."
        } else {
            "No hints in this match: the room was opened without them (`--hints`)."
        });
        return;
    }
    if f.to_move() != Some(me) {
        console.say("Hints are for your own move: wait for your turn.");
        return;
    }
    let a = Analysis::of(&f.game.position, 5);
    let mut out = match a.outcome {
        Outcome::N => paint.good("The player to move wins with perfect play."),
        Outcome::P => paint.bad("The player to move loses against perfect play: every move loses."),
    };
    if let Some(g) = a.grundy {
        out.push_str(&format!("\nGrundy value: {g}"));
    }
    if let Some(m) = &a.best_move {
        out.push_str(&format!(
            "\n{} {}   (type {})",
            if a.outcome == Outcome::N {
                "Winning move:"
            } else {
                "Best try (keeps the game long):"
            },
            describe_move(&f.game.position, m),
            grundy_protocol::short::moves::write(m)
        ));
    }
    if let Some(table) = nim_table(&f.game.position) {
        out.push('\n');
        out.push_str(&table);
    }
    console.say(&out);
}
