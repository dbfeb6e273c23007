//! After the end: the move list, or the same game again with the seats
//! swapped. A rematch is an offer and an accept in the finished room
//! (docs/protocol.md, "Rematch"): `rematch` offers one, or accepts the
//! opponent's; the house bot accepts at once; the server makes the one new
//! room and tells each player its seat there.

use grundy_client::client::{Client, ClientError};
use grundy_protocol::wire::{ClientBody, ClientMsg, ServerBody, ServerMsg, WithdrawReason};

use super::{Seat, Where};
use crate::console::{Console, Typed};
use crate::follow::Follow;
use crate::net;
use crate::render::Paint;

pub(super) enum AfterMatch {
    Leave,
    /// Play the rematch: its room and this player's seat token there, on
    /// this connection.
    Rematch {
        room: String,
        token: String,
        client: Box<Client>,
    },
}

/// What came first after the match: a typed line or a message.
enum Got {
    Typed(Typed),
    Heard(Box<Result<ServerMsg, ClientError>>),
}

/// Who offers a rematch in the finished room, as far as this player knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Offer {
    None,
    Mine,
    Theirs,
}

/// After the end: the move list with every move that threw a win away, a
/// rematch with the seats swapped (offered, or the opponent's accepted), or
/// leave (which declines the opponent's offer, or withdraws ours).
pub(super) async fn after_the_match(
    console: &mut Console,
    f: &Follow,
    seat: &Seat,
    here: &Where,
    client: Option<Client>,
    paint: &Paint,
) -> AfterMatch {
    console.say(
        "Type `moves` to see the moves (the ones that threw a win away are marked), \
         `rematch` to play again with the seats swapped, or `quit` (or Enter) to leave.",
    );
    let mut client = client;
    let mut offer = Offer::None;
    let opponent = f.name(seat.seat ^ 1);
    loop {
        console.prompt("after the match");
        let got = match client.as_mut() {
            Some(c) => tokio::select! {
                typed = console.next() => Got::Typed(typed),
                _ = tokio::signal::ctrl_c() => Got::Typed(Typed::Interrupt),
                msg = c.next() => Got::Heard(Box::new(msg)),
            },
            None => tokio::select! {
                typed = console.next() => Got::Typed(typed),
                _ = tokio::signal::ctrl_c() => Got::Typed(Typed::Interrupt),
            },
        };
        let typed = match got {
            Got::Typed(typed) => typed,
            Got::Heard(msg) => match *msg {
                Ok(msg) => {
                    if let Some((room, token)) =
                        heard(msg, f, seat, &opponent, &mut offer, console, paint)
                    {
                        if let Some(client) = client.take() {
                            let client = Box::new(client);
                            return AfterMatch::Rematch {
                                room,
                                token,
                                client,
                            };
                        }
                    }
                    continue;
                }
                // The connection is gone, and with it any offer (the server
                // told the opponent); `rematch` comes back on a fresh one.
                Err(_) => {
                    client = None;
                    if offer != Offer::None {
                        console.say("The connection dropped: the rematch offer is void.");
                        offer = Offer::None;
                    }
                    continue;
                }
            },
        };
        match typed {
            Typed::Line(line) => match line.to_ascii_lowercase().as_str() {
                "rematch" | "r" => {
                    if client.is_none() {
                        client = back_in_the_room(f, seat, here, console, paint).await;
                    }
                    let Some(c) = client.as_mut() else { continue };
                    match ask(c, seat, Kind::Offer).await {
                        Ok(()) if offer == Offer::Theirs => console.say("Rematch accepted."),
                        Ok(()) => {
                            offer = Offer::Mine;
                            console.say(&format!(
                                "Rematch offered — waiting for {opponent} (`quit` or Ctrl-C withdraws it)."
                            ));
                        }
                        Err(e) => {
                            console.say(&paint.bad(&format!("No rematch: {}", net::words(&e))))
                        }
                    }
                }
                "moves" | "m" => console.say(&f.move_list(true, paint)),
                "" | "quit" | "q" | "exit" => {
                    leave(client, seat, offer).await;
                    return AfterMatch::Leave;
                }
                other => console.say(&paint.bad(&format!(
                    "{:?}: after the match, type `moves`, `rematch` or `quit`",
                    other
                ))),
            },
            Typed::Interrupt | Typed::End => {
                leave(client, seat, offer).await;
                return AfterMatch::Leave;
            }
        }
    }
}

/// What a message heard in the finished room says; the rematch's room and
/// this player's token there once it is made.
fn heard(
    msg: ServerMsg,
    f: &Follow,
    seat: &Seat,
    opponent: &str,
    offer: &mut Offer,
    console: &Console,
    paint: &Paint,
) -> Option<(String, String)> {
    match msg.body {
        ServerBody::RematchOffered { room, seat: by, .. } if room == f.room && by != seat.seat => {
            *offer = Offer::Theirs;
            console.say(&format!(
                "{opponent} offers a rematch: type `rematch` to accept, `quit` to decline."
            ));
            None
        }
        ServerBody::RematchWithdrawn {
            room,
            seat: by,
            reason,
        } if room == f.room => {
            *offer = Offer::None;
            let why = match (by == seat.seat, reason) {
                (true, WithdrawReason::Declined) => format!("{opponent} declined the rematch."),
                (false, WithdrawReason::Withdrawn) => {
                    format!("{opponent} took the rematch offer back.")
                }
                (false, WithdrawReason::Left) => {
                    format!("{opponent} left: the rematch offer is void.")
                }
                (true, WithdrawReason::Left) => {
                    "You left the room: your rematch offer is void.".to_string()
                }
                (_, WithdrawReason::Closed) => {
                    "The room has closed: the rematch offer is void.".to_string()
                }
                (_, WithdrawReason::Failed) => "The rematch room could not be made.".to_string(),
                (true, WithdrawReason::Withdrawn) | (false, WithdrawReason::Declined) => {
                    return None
                }
            };
            console.say(&paint.bad(&why));
            None
        }
        ServerBody::RematchReady {
            room,
            new_room,
            code,
            token,
            ..
        } if room == f.room => {
            console.say(&format!("The rematch is on: room {code}."));
            Some((new_room, token))
        }
        _ => None,
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Offer,
    Decline,
}

async fn ask(c: &mut Client, seat: &Seat, kind: Kind) -> Result<(), ClientError> {
    let (room, token) = (seat.room.clone(), seat.token.clone());
    c.request(|id| ClientMsg {
        id,
        body: match kind {
            Kind::Offer => ClientBody::OfferRematch { room, token },
            Kind::Decline => ClientBody::DeclineRematch { room, token },
        },
    })
    .await
    .map(|_| ())
}

/// Leaves the finished room: an offer standing (ours or the opponent's) is
/// declined first, so the opponent is told at once.
async fn leave(client: Option<Client>, seat: &Seat, offer: Offer) {
    let Some(mut c) = client else { return };
    if offer != Offer::None {
        let _ = ask(&mut c, seat, Kind::Decline).await;
    }
    c.close().await;
}

/// A fresh connection back in the finished room (the one of the match was
/// lost), to offer a rematch there.
async fn back_in_the_room(
    f: &Follow,
    seat: &Seat,
    here: &Where,
    console: &Console,
    paint: &Paint,
) -> Option<Client> {
    let resumed = async {
        let mut c = net::connect(&here.url, &here.name, 5).await?;
        let (room, token) = (seat.room.clone(), seat.token.clone());
        c.request(|id| ClientMsg {
            id,
            body: ClientBody::Resume {
                room,
                token,
                since: Some(f.game.seq),
            },
        })
        .await?;
        Ok::<Client, ClientError>(c)
    };
    match resumed.await {
        Ok(c) => Some(c),
        Err(e) => {
            console.say(&paint.bad(&format!(
                "No rematch: the room cannot be reached ({})",
                net::words(&e)
            )));
            None
        }
    }
}
