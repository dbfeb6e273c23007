//! A room or tournament command as the client's node checked and resolved
//! it (its scopes; the account an API token given for a seat stands for;
//! who registers): handed to the room or tournament here, or, for one
//! another node owns, sent there over the bus (`bus.rs`) and handed over by
//! that node. One path either way.

use grundy_protocol::wire::{ClientMsg, ErrorCode, RequestId, Scope, ServerMsg};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::Instant;

use super::tournament::to_tournament;
use super::{to_room, Conn, Shared};
use crate::outbox::{Follow, Kick, Outbox};
use crate::player::{AccountId, Player};
use crate::room::RoomCmd;
use crate::tournament::actor::TournamentCmd;

/// A command for a room or for a tournament.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "for", content = "request", rename_all = "snake_case")]
pub enum Request {
    Room(RoomRequest),
    Tournament(TournamentRequest),
}

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
    /// Not a client's: its node sends it on when the room moved (`bus.rs`).
    Follow(Follow),
    /// Not a client's: a tournament resigns for a player who withdrew.
    ResignSeat {
        room: String,
        seat: u8,
    },
}

/// A tournament command, its entrant resolved (`register`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TournamentRequest {
    Register {
        id: Option<RequestId>,
        tournament: String,
        entrant: Player,
    },
    Rejoin {
        id: Option<RequestId>,
        tournament: String,
        token: String,
    },
    Withdraw {
        id: Option<RequestId>,
        tournament: String,
        token: String,
    },
    Start {
        id: Option<RequestId>,
        tournament: String,
        token: String,
    },
    Watch {
        id: Option<RequestId>,
        tournament: String,
        since: Option<u64>,
    },
}

impl Request {
    /// The room (or tournament: true) it is for.
    pub(crate) fn key(&self) -> (&str, bool) {
        match self {
            Request::Room(request) => (request.room(), false),
            Request::Tournament(request) => (request.tournament(), true),
        }
    }

    /// The request a client waits for an answer to (its id, if it gave
    /// one); None for what a node sends on its own (a follow, a
    /// resignation for a withdrawn player), which nobody answers.
    pub(crate) fn answers_to(&self) -> Option<Option<&RequestId>> {
        match self {
            Request::Room(
                RoomRequest::Join { id, .. }
                | RoomRequest::Watch { id, .. }
                | RoomRequest::Resume { id, .. }
                | RoomRequest::Move { id, .. }
                | RoomRequest::Resign { id, .. }
                | RoomRequest::Abort { id, .. }
                | RoomRequest::Leave { id, .. },
            )
            | Request::Tournament(
                TournamentRequest::Register { id, .. }
                | TournamentRequest::Rejoin { id, .. }
                | TournamentRequest::Withdraw { id, .. }
                | TournamentRequest::Start { id, .. }
                | TournamentRequest::Watch { id, .. },
            ) => Some(id.as_ref()),
            Request::Room(RoomRequest::Follow(_) | RoomRequest::ResignSeat { .. }) => None,
        }
    }

    /// Whether it acts in a room the client plays or watches already (a
    /// move, resign, abort or leave), whose events it must be getting.
    pub(crate) fn acts_in_room(&self) -> bool {
        matches!(
            self,
            Request::Room(
                RoomRequest::Move { .. }
                    | RoomRequest::Resign { .. }
                    | RoomRequest::Abort { .. }
                    | RoomRequest::Leave { .. }
            )
        )
    }

    /// Whether this node holds the room or tournament it is for.
    pub(crate) fn held_by(&self, shared: &Shared) -> bool {
        match self {
            Request::Room(request) => shared.lobby.holds(request.room()),
            Request::Tournament(request) => shared.tournaments.find(request.tournament()).is_some(),
        }
    }
}

impl RoomRequest {
    fn room(&self) -> &str {
        match self {
            RoomRequest::Join { room, .. }
            | RoomRequest::Watch { room, .. }
            | RoomRequest::Resume { room, .. }
            | RoomRequest::Move { room, .. }
            | RoomRequest::Resign { room, .. }
            | RoomRequest::Abort { room, .. }
            | RoomRequest::Leave { room, .. }
            | RoomRequest::Follow(Follow { room, .. })
            | RoomRequest::ResignSeat { room, .. } => room,
        }
    }
}

impl TournamentRequest {
    fn tournament(&self) -> &str {
        match self {
            TournamentRequest::Register { tournament, .. }
            | TournamentRequest::Rejoin { tournament, .. }
            | TournamentRequest::Withdraw { tournament, .. }
            | TournamentRequest::Start { tournament, .. }
            | TournamentRequest::Watch { tournament, .. } => tournament,
        }
    }
}

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
pub(crate) fn deliver(shared: &Shared, outbox: &Outbox, request: Request, received: Instant) {
    match request {
        Request::Room(request) => deliver_to_room(shared, outbox, request, received),
        Request::Tournament(request) => deliver_to_tournament(shared, outbox, request),
    }
}

fn deliver_to_tournament(shared: &Shared, outbox: &Outbox, request: TournamentRequest) {
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

fn deliver_to_room(shared: &Shared, outbox: &Outbox, request: RoomRequest, received: Instant) {
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
