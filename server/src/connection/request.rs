//! A client's room or tournament command checked and resolved for its
//! connection (a [`Request`]), and a request handed to its room or
//! tournament on this node: a client's of this node, or one another node
//! forwarded over the bus.

use grundy_protocol::wire::{ClientMsg, ErrorCode, Scope, ServerMsg};
use tokio::time::Instant;

use super::tournament::to_tournament;
use super::{to_room, Conn};
use crate::command::{Request, RoomRequest, TournamentRequest};
use crate::node::Node;
use crate::outbox::{Follow, Kick, Outbox};
use crate::room::RoomCmd;
use crate::tournament::actor::TournamentCmd;

impl Conn {
    /// `msg`, a room or tournament command, checked and resolved for this
    /// connection; or the refusal to answer.
    pub(super) fn request(&self, msg: ClientMsg) -> Result<Request, Box<ServerMsg>> {
        if super::tournament_key(&msg).is_some() {
            self.tournament_request(msg).map(Request::Tournament)
        } else {
            self.room_request(msg).map(Request::Room)
        }
    }

    /// `msg`, a tournament command that names a tournament, checked and
    /// resolved for this connection; or the refusal to answer.
    fn tournament_request(&self, msg: ClientMsg) -> Result<TournamentRequest, Box<ServerMsg>> {
        let what = match &msg {
            ClientMsg::Register { .. } => "register",
            ClientMsg::Rejoin { .. } => "rejoin",
            ClientMsg::Withdraw { .. } => "withdraw",
            ClientMsg::StartTournament { .. } => "start_tournament",
            _ => "watch_tournament",
        };
        if what != "watch_tournament" {
            if let Err(refused) = self.may(Scope::Tournaments, what) {
                return Err(Box::new(refused.answer(msg.id().cloned())));
            }
        }
        Ok(match msg {
            ClientMsg::Register {
                id,
                tournament,
                name,
            } => {
                let entrant = self
                    .entrant(name)
                    .map_err(|refused| Box::new(refused.answer(id.clone())))?;
                TournamentRequest::Register {
                    id,
                    tournament,
                    entrant,
                }
            }
            ClientMsg::Rejoin {
                id,
                tournament,
                token,
            } => TournamentRequest::Rejoin {
                id,
                tournament,
                token,
            },
            ClientMsg::Withdraw {
                id,
                tournament,
                token,
            } => TournamentRequest::Withdraw {
                id,
                tournament,
                token,
            },
            ClientMsg::StartTournament {
                id,
                tournament,
                token,
            } => TournamentRequest::Start {
                id,
                tournament,
                token,
            },
            ClientMsg::WatchTournament {
                id,
                tournament,
                since,
            } => TournamentRequest::Watch {
                id,
                tournament,
                since,
            },
            other => {
                return Err(Box::new(ServerMsg::error(
                    other.id().cloned(),
                    ErrorCode::Internal,
                    "not a tournament command",
                )))
            }
        })
    }

    /// `msg`, a room command, checked and resolved for this connection; or
    /// the refusal to answer. Call it only for a room command.
    pub(super) fn room_request(&self, msg: ClientMsg) -> Result<RoomRequest, Box<ServerMsg>> {
        Ok(match msg {
            ClientMsg::Join { id, room, seat } => {
                if let Err(refused) = self.may(Scope::Play, "join") {
                    return Err(Box::new(refused.answer(id)));
                }
                RoomRequest::Join {
                    id,
                    room,
                    seat,
                    player: (*self.player).clone(),
                }
            }
            ClientMsg::Watch { id, room, since } => RoomRequest::Watch { id, room, since },
            ClientMsg::Resume {
                id,
                room,
                token,
                since,
            } => {
                let (token, account) = self
                    .resume_as(token)
                    .map_err(|r| Box::new(r.answer(id.clone())))?;
                RoomRequest::Resume {
                    id,
                    room,
                    token,
                    account,
                    since,
                }
            }
            ClientMsg::Move {
                id,
                room,
                token,
                mv,
            } => RoomRequest::Move {
                id,
                room,
                token,
                mv,
            },
            ClientMsg::Resign { id, room, token } => RoomRequest::Resign { id, room, token },
            ClientMsg::Abort { id, room, token } => RoomRequest::Abort { id, room, token },
            ClientMsg::Leave { id, room } => RoomRequest::Leave { id, room },
            other => {
                return Err(Box::new(ServerMsg::error(
                    other.id().cloned(),
                    ErrorCode::Internal,
                    "not a room command",
                )))
            }
        })
    }
}

/// Hands `request` to its room or tournament (on this node), for the
/// connection whose outbox is `outbox`; `received`: when it was read (a
/// move's clock stops there).
pub(crate) fn deliver(shared: &Node, outbox: &Outbox, request: Request, received: Instant) {
    match request {
        Request::Room(request) => deliver_to_room(shared, outbox, request, received),
        Request::Tournament(request) => deliver_to_tournament(shared, outbox, request),
    }
}

fn deliver_to_tournament(shared: &Node, outbox: &Outbox, request: TournamentRequest) {
    match request {
        TournamentRequest::Register {
            id,
            tournament,
            entrant,
        } => to_tournament(shared, outbox, id, &tournament, true, |outbox, id| {
            TournamentCmd::Register {
                outbox,
                id,
                entrant,
            }
        }),
        TournamentRequest::Rejoin {
            id,
            tournament,
            token,
        } => to_tournament(shared, outbox, id, &tournament, true, |outbox, id| {
            TournamentCmd::Rejoin { outbox, id, token }
        }),
        TournamentRequest::Withdraw {
            id,
            tournament,
            token,
        } => to_tournament(shared, outbox, id, &tournament, false, |outbox, id| {
            TournamentCmd::Withdraw { outbox, id, token }
        }),
        TournamentRequest::Start {
            id,
            tournament,
            token,
        } => to_tournament(shared, outbox, id, &tournament, false, |outbox, id| {
            TournamentCmd::Start { outbox, id, token }
        }),
        TournamentRequest::Watch {
            id,
            tournament,
            since,
        } => to_tournament(shared, outbox, id, &tournament, true, |outbox, id| {
            TournamentCmd::Watch { outbox, id, since }
        }),
    }
}

fn deliver_to_room(shared: &Node, outbox: &Outbox, request: RoomRequest, received: Instant) {
    match request {
        RoomRequest::Join {
            id,
            room,
            seat,
            player,
        } => to_room(shared, outbox, id, &room, true, |outbox, id| {
            RoomCmd::Join {
                outbox,
                id,
                player,
                seat,
            }
        }),
        RoomRequest::Watch { id, room, since } => {
            to_room(shared, outbox, id, &room, true, |outbox, id| {
                RoomCmd::Watch { outbox, id, since }
            })
        }
        RoomRequest::Resume {
            id,
            room,
            token,
            account,
            since,
        } => to_room(shared, outbox, id, &room, true, |outbox, id| {
            RoomCmd::Resume {
                outbox,
                id,
                token,
                account,
                since,
            }
        }),
        RoomRequest::Move {
            id,
            room,
            token,
            mv,
        } => to_room(shared, outbox, id, &room, false, |outbox, id| {
            RoomCmd::Move {
                outbox,
                id,
                token,
                mv,
                received,
            }
        }),
        RoomRequest::Resign { id, room, token } => {
            to_room(shared, outbox, id, &room, false, |outbox, id| {
                RoomCmd::Resign { outbox, id, token }
            })
        }
        RoomRequest::Abort { id, room, token } => {
            to_room(shared, outbox, id, &room, false, |outbox, id| {
                RoomCmd::Abort { outbox, id, token }
            })
        }
        RoomRequest::Leave { id, room } => {
            to_room(shared, outbox, id, &room, false, |outbox, id| {
                RoomCmd::Leave { outbox, id }
            })
        }
        RoomRequest::Follow(Follow { room, token, since }) => {
            // Nobody asked, so nobody is answered: if it cannot follow, the
            // connection ends and its client resumes.
            let Some((room_id, tx)) = shared.lobby.find(&room) else {
                return outbox.drop_for(Kick::RoomMoved);
            };
            outbox.rooms.enter(&room_id);
            let follow = RoomCmd::Follow {
                outbox: outbox.clone(),
                token,
                since,
            };
            if tx.try_send(follow).is_err() {
                outbox.rooms.exit(&room_id);
                outbox.drop_for(Kick::RoomMoved);
            }
        }
        RoomRequest::ResignSeat { room, seat } => {
            if let Some((_, tx)) = shared.lobby.find(&room) {
                let _ = tx.try_send(RoomCmd::ResignSeat { seat });
            }
        }
    }
}
