//! A room command as the client's node checked and resolved it (its scopes;
//! the account an API token given for a seat stands for): handed to the
//! room here, or, for a room another node owns, sent there over the bus
//! (`bus.rs`) and handed to the room by that node. One path either way.

use grundy_protocol::wire::{ClientMsg, RequestId, Scope, ServerMsg};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::Instant;

use super::{to_room, Conn, Shared};
use crate::outbox::Outbox;
use crate::player::{AccountId, Player};
use crate::room::RoomCmd;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RoomRequest {
    Join {
        id: Option<RequestId>,
        room: String,
        seat: Option<u8>,
        player: Player,
    },
    Watch {
        id: Option<RequestId>,
        room: String,
        since: Option<u64>,
    },
    Resume {
        id: Option<RequestId>,
        room: String,
        token: String,
        account: Option<AccountId>,
        since: Option<u64>,
    },
    Move {
        id: Option<RequestId>,
        room: String,
        token: String,
        #[serde(rename = "move")]
        mv: Value,
    },
    Resign {
        id: Option<RequestId>,
        room: String,
        token: String,
    },
    Abort {
        id: Option<RequestId>,
        room: String,
        token: String,
    },
    Leave {
        id: Option<RequestId>,
        room: String,
    },
}

impl Conn {
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
                    grundy_protocol::wire::ErrorCode::Internal,
                    "not a room command",
                )))
            }
        })
    }
}

/// Hands `request` to its room (on this node), for the connection whose
/// outbox is `outbox`; `received`: when it was read (a move's clock stops
/// there).
pub(crate) fn deliver(shared: &Shared, outbox: &Outbox, request: RoomRequest, received: Instant) {
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
    }
}
