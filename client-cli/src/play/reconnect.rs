//! Coming back to the seat after a lost connection (`grundy_client`'s loop),
//! telling the person each time and letting them stop it.

use std::ops::ControlFlow;

use anyhow::{bail, Result};
use grundy_client::client::{Client, ClientError};
use grundy_client::reconnect::{Attempt, Reconnect, Retrying};
use grundy_protocol::wire::{ClientBody, ClientMsg, ServerBody, ServerMsg};

use super::board::show;
use super::Seat;
use crate::console::{Console, Typed};
use crate::follow::Follow;
use crate::net;
use crate::render::Paint;

/// Reconnects and resumes, telling the person; None if they quit meanwhile.
/// There is no bound on the attempts: the person stops them.
pub(super) async fn reconnect(
    seat: &Seat,
    f: &mut Follow,
    console: &mut Console,
    paint: &Paint,
) -> Result<Option<Client>> {
    let hello = crate::net::hello(&seat.url, &seat.name);
    let mut tries = Reconnect::new(&seat.url, &hello, None);
    loop {
        match tries.attempt(|c| resume(seat, c)).await {
            Attempt::Back((c, fresh)) => {
                *f = fresh;
                console.say("Reconnected: the match goes on.");
                show(f, seat.seat, console, paint);
                return Ok(Some(c));
            }
            Attempt::Retry(r) => {
                if pause(&r, console).await.is_break() {
                    return Ok(None);
                }
            }
            Attempt::GaveUp { error, .. } => {
                bail!("cannot resume the match: {}", net::words(&error))
            }
        }
    }
}

/// Tells the person why the match cannot go on yet and waits; `quit`,
/// Ctrl-C or the end of the input stop the loop.
async fn pause(r: &Retrying, console: &mut Console) -> ControlFlow<()> {
    let why = match &r.error {
        // A cluster moving the room to another node, or a server on its way
        // down.
        ClientError::Refused { message, .. } => {
            format!("The match cannot be resumed yet ({message})")
        }
        e => format!("Cannot reach the server ({})", net::words(e)),
    };
    console.say(&format!(
        "{why}; retrying in {:.1} s (type `quit` to stop)…",
        r.wait.as_secs_f32()
    ));
    let deadline = r.sleep();
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            _ = &mut deadline => return ControlFlow::Continue(()),
            _ = tokio::signal::ctrl_c() => return ControlFlow::Break(()),
            typed = console.next() => match typed {
                Typed::Line(l) if !matches!(l.as_str(), "quit" | "q" | "exit") => {
                    console.say("Not connected yet; reconnecting…")
                }
                _ => return ControlFlow::Break(()),
            },
        }
    }
}

/// One `resume` on `c`, with a fresh snapshot: its clocks are the server's
/// now (the client's own count would have run on through the time it was
/// away).
async fn resume(seat: &Seat, mut c: Client) -> Result<(Client, Follow), ClientError> {
    let answer = c
        .request(|id| ClientMsg {
            id,
            body: ClientBody::Resume {
                room: seat.room.clone(),
                token: seat.token.clone(),
                since: None,
            },
        })
        .await?;
    match answer {
        ServerMsg {
            body: ServerBody::Watching {
                snapshot: Some(s), ..
            },
            ..
        } => {
            let fresh = Follow::from_snapshot(&s).map_err(ClientError::Unexpected)?;
            Ok((c, fresh))
        }
        other => Err(ClientError::Unexpected(format!("{other:?}"))),
    }
}
