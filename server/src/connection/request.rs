//! A client's room or tournament command checked and resolved for its
//! connection (a [`Request`]), and a request handed to its room or
//! tournament on this node: a client's of this node, or one another node
//! forwarded over the bus.

use grundy_protocol::wire::{ClientBody, ClientMsg, ErrorCode, Play, RequestId, Scope, ServerMsg};
use tokio::time::Instant;

use super::place::{self, reach};
use super::Conn;
use crate::command::{Ask, RematchAsk, Request, RoomRequest, TournamentRequest};
use crate::node::Node;
use crate::outbox::{Handoff, Kick, Outbox};
use crate::room::RoomCmd;
use crate::tournament::actor::TournamentCmd;

impl Conn {
    /// `msg`, a room or tournament command, checked and resolved for this
    /// connection; or the refusal to answer.
    pub(super) fn request(&self, msg: ClientMsg) -> Result<Request, Box<ServerMsg>> {
        let ClientMsg { id, body } = msg;
        let refuse = |why: ServerMsg| Err(Box::new(why));
        let body_kind = match &body {
            ClientBody::OfferRematch { .. } => "offer_rematch",
            ClientBody::AcceptRematch { .. } => "accept_rematch",
            _ => "decline_rematch",
        };
        let ask = match body {
            ClientBody::Join { room, seat } => {
                if let Err(refused) = self.may(Scope::Play, "join") {
                    return refuse(refused.answer(id));
                }
                let player = (*self.player).clone();
                let tie = self.session.as_ref().map(|s| s.token.clone());
                Ask::Room(RoomRequest::Join {
                    room,
                    seat,
                    player,
                    tie,
                })
            }
            ClientBody::Watch { room, since } => Ask::Room(RoomRequest::Watch { room, since }),
            ClientBody::Resume { room, token, since } => match self.resume_as(token) {
                Ok((token, account)) => Ask::Room(RoomRequest::Resume {
                    room,
                    token,
                    account: account.as_ref().map(|(a, _)| *a),
                    tie: account.map(|(_, tie)| tie),
                    since,
                }),
                Err(refused) => return refuse(refused.answer(id)),
            },
            ClientBody::Move(play) => Ask::Room(RoomRequest::Move(play)),
            ClientBody::Resign { room, token } => Ask::Room(RoomRequest::Resign { room, token }),
            ClientBody::Abort { room, token } => Ask::Room(RoomRequest::Abort { room, token }),
            ClientBody::Leave { room } => Ask::Room(RoomRequest::Leave { room }),
            ClientBody::OfferRematch { room, token }
            | ClientBody::AcceptRematch { room, token }
            | ClientBody::DeclineRematch { room, token } => {
                let ask = match body_kind {
                    "offer_rematch" => RematchAsk::Offer,
                    "accept_rematch" => RematchAsk::Accept,
                    _ => RematchAsk::Decline,
                };
                if ask != RematchAsk::Decline {
                    if let Err(refused) = self.may(Scope::Play, body_kind) {
                        return refuse(refused.answer(id));
                    }
                }
                Ask::Room(RoomRequest::Rematch {
                    room,
                    token,
                    ask,
                    address: self.address,
                })
            }
            ClientBody::Register { tournament, name } => {
                let entrant = self
                    .may(Scope::Tournaments, "register")
                    .and_then(|()| self.entrant(name));
                match entrant {
                    Ok(entrant) => Ask::Tournament(TournamentRequest::Register {
                        tournament,
                        entrant,
                    }),
                    Err(refused) => return refuse(refused.answer(id)),
                }
            }
            ClientBody::Rejoin { tournament, token } => {
                if let Err(refused) = self.may(Scope::Tournaments, "rejoin") {
                    return refuse(refused.answer(id));
                }
                Ask::Tournament(TournamentRequest::Rejoin { tournament, token })
            }
            ClientBody::Withdraw { tournament, token } => {
                if let Err(refused) = self.may(Scope::Tournaments, "withdraw") {
                    return refuse(refused.answer(id));
                }
                Ask::Tournament(TournamentRequest::Withdraw { tournament, token })
            }
            ClientBody::StartTournament { tournament, token } => {
                if let Err(refused) = self.may(Scope::Tournaments, "start_tournament") {
                    return refuse(refused.answer(id));
                }
                Ask::Tournament(TournamentRequest::Start { tournament, token })
            }
            ClientBody::WatchTournament { tournament, since } => {
                Ask::Tournament(TournamentRequest::Watch { tournament, since })
            }
            _ => {
                return refuse(ServerMsg::error(
                    id,
                    ErrorCode::Internal,
                    "not a room or tournament command",
                ))
            }
        };
        Ok(Request { id, ask })
    }
}

/// Hands `request` to its room or tournament (on this node), for the
/// connection whose outbox is `outbox`; `received`: when it was read (a
/// move's clock stops there).
pub(crate) fn deliver(shared: &Node, outbox: &Outbox, request: Request, received: Instant) {
    let Request { id, ask } = request;
    match ask {
        Ask::Room(request) => deliver_to_room(shared, outbox, id, request, received),
        Ask::Tournament(request) => deliver_to_tournament(shared, outbox, id, request),
    }
}

fn deliver_to_tournament(
    shared: &Node,
    outbox: &Outbox,
    id: Option<RequestId>,
    request: TournamentRequest,
) {
    use place::Tournament;
    match request {
        TournamentRequest::Register {
            tournament,
            entrant,
        } => reach::<Tournament>(shared, outbox, id, &tournament, true, |outbox, id| {
            TournamentCmd::Register {
                outbox,
                id,
                entrant,
            }
        }),
        TournamentRequest::Rejoin { tournament, token } => {
            reach::<Tournament>(shared, outbox, id, &tournament, true, |outbox, id| {
                TournamentCmd::Rejoin { outbox, id, token }
            })
        }
        TournamentRequest::Withdraw { tournament, token } => {
            reach::<Tournament>(shared, outbox, id, &tournament, false, |outbox, id| {
                TournamentCmd::Withdraw { outbox, id, token }
            })
        }
        TournamentRequest::Start { tournament, token } => {
            reach::<Tournament>(shared, outbox, id, &tournament, false, |outbox, id| {
                TournamentCmd::Start { outbox, id, token }
            })
        }
        TournamentRequest::Watch { tournament, since } => {
            reach::<Tournament>(shared, outbox, id, &tournament, true, |outbox, id| {
                TournamentCmd::Watch { outbox, id, since }
            })
        }
    }
}

fn deliver_to_room(
    shared: &Node,
    outbox: &Outbox,
    id: Option<RequestId>,
    request: RoomRequest,
    received: Instant,
) {
    use place::Room;
    match request {
        RoomRequest::Join {
            room,
            seat,
            player,
            tie,
        } => reach::<Room>(shared, outbox, id, &room, true, |outbox, id| {
            RoomCmd::Join {
                outbox,
                id,
                player,
                seat,
                tie,
            }
        }),
        RoomRequest::Watch { room, since } => {
            reach::<Room>(shared, outbox, id, &room, true, |outbox, id| {
                RoomCmd::Watch { outbox, id, since }
            })
        }
        RoomRequest::Resume {
            room,
            token,
            account,
            tie,
            since,
        } => reach::<Room>(shared, outbox, id, &room, true, |outbox, id| {
            RoomCmd::Resume {
                outbox,
                id,
                token,
                account,
                tie,
                since,
            }
        }),
        // The move finds its room by its key, which the room does not need.
        RoomRequest::Move(Play { room, token, mv }) => {
            reach::<Room>(shared, outbox, id, &room, false, |outbox, id| {
                RoomCmd::Move {
                    outbox,
                    id,
                    token,
                    mv,
                    received,
                }
            })
        }
        RoomRequest::Resign { room, token } => {
            reach::<Room>(shared, outbox, id, &room, false, |outbox, id| {
                RoomCmd::Resign { outbox, id, token }
            })
        }
        RoomRequest::Abort { room, token } => {
            reach::<Room>(shared, outbox, id, &room, false, |outbox, id| {
                RoomCmd::Abort { outbox, id, token }
            })
        }
        RoomRequest::Leave { room } => {
            reach::<Room>(shared, outbox, id, &room, false, |outbox, id| {
                RoomCmd::Leave { outbox, id }
            })
        }
        RoomRequest::Rematch {
            room,
            token,
            ask,
            address,
        } => {
            // The maker is this node's: the room that agrees may run here for
            // a client of another node, and its new room is made where it is.
            let maker = super::rematch::maker(shared, address);
            reach::<Room>(shared, outbox, id, &room, false, |outbox, id| {
                RoomCmd::Rematch {
                    outbox,
                    id,
                    token,
                    ask,
                    maker,
                }
            })
        }
        RoomRequest::CarryOn(handoff) => carry_on(shared, outbox, handoff),
        RoomRequest::ResignSeat { room, seat } => {
            if let Some((_, tx)) = shared.lobby.find(&room) {
                let _ = tx.try_send(RoomCmd::ResignSeat { seat });
            }
        }
    }
}

/// A client of this node carries on in a room that moved here. Nobody
/// asked, so nobody is answered: if it cannot, the connection ends and its
/// client resumes.
fn carry_on(shared: &Node, outbox: &Outbox, handoff: Handoff) {
    let Some((room_id, tx)) = shared.lobby.find(&handoff.room) else {
        return outbox.drop_for(Kick::RoomMoved);
    };
    outbox.rooms.enter(&room_id);
    let carry_on = RoomCmd::CarryOn {
        outbox: outbox.clone(),
        handoff,
    };
    if tx.try_send(carry_on).is_err() {
        outbox.rooms.exit(&room_id);
        outbox.drop_for(Kick::RoomMoved);
    }
}
