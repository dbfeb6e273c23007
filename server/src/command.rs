//! A room or tournament command as the client's node checked and resolved
//! it (its scopes; the account an API token given for a seat stands for;
//! who registers): what a connection hands to a room or tournament of this
//! node (`connection/request.rs`), and what the bus carries to the node that
//! holds one (`cluster/bus/`). One type either way, so a command reaches its room
//! by one path; and why one did not ([`Unsent`]).

use std::sync::Arc;

use grundy_protocol::wire::{ErrorCode, RequestId, ServerMsg};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::lobby::Lobby;
use crate::outbox::Follow;
use crate::player::{AccountId, Player};
use crate::tournament::registry::Tournaments;
use crate::work::Refused;

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
    /// Not a client's: its node sends it on when the room moved (`cluster/bus/`).
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
    pub fn key(&self) -> (&str, bool) {
        match self {
            Request::Room(request) => (request.room(), false),
            Request::Tournament(request) => (request.tournament(), true),
        }
    }

    /// The request a client waits for an answer to (its id, if it gave
    /// one); None for what a node sends on its own (a follow, a
    /// resignation for a withdrawn player), which nobody answers.
    pub fn answers_to(&self) -> Option<Option<&RequestId>> {
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
    pub fn acts_in_room(&self) -> bool {
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
    pub fn held_by(&self, lobby: &Lobby, tournaments: &Tournaments) -> bool {
        match self {
            Request::Room(request) => lobby.holds(request.room()),
            Request::Tournament(request) => tournaments.find(request.tournament()).is_some(),
        }
    }
}

impl RoomRequest {
    pub fn room(&self) -> &str {
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
    pub fn tournament(&self) -> &str {
        match self {
            TournamentRequest::Register { tournament, .. }
            | TournamentRequest::Rejoin { tournament, .. }
            | TournamentRequest::Withdraw { tournament, .. }
            | TournamentRequest::Start { tournament, .. }
            | TournamentRequest::Watch { tournament, .. } => tournament,
        }
    }
}

/// Why a command did not reach its room or tournament.
pub enum Unsent {
    /// No unfinished one has that id or code.
    Unknown,
    /// Its node did not take the command: which, and why.
    NotTaken(Arc<str>, String),
    /// Its node stopped, without handing over this connection's rooms there
    /// (the connection is dropped, to resume).
    Stopped(Arc<str>),
    /// Still between nodes when the wait ran out.
    Moving,
    /// Where it is could not be read.
    Lookup(Option<Refused>),
}

impl Unsent {
    /// The client's answer, for room (or tournament) `key`.
    pub fn answer(self, id: Option<RequestId>, key: &str, tournament: bool) -> ServerMsg {
        let kind = if tournament { "tournament" } else { "room" };
        match self {
            Unsent::Unknown if tournament => ServerMsg::error(
                id,
                ErrorCode::UnknownTournament,
                format!("no tournament {key:?}"),
            ),
            Unsent::Unknown => {
                ServerMsg::error(id, ErrorCode::UnknownRoom, format!("no room {key:?}"))
            }
            Unsent::NotTaken(node, why) => ServerMsg::error(
                id,
                ErrorCode::Internal,
                format!(
                    "the node that holds this room ({node}) did not take the command ({why}); try again"
                ),
            ),
            Unsent::Stopped(node) => ServerMsg::error(
                id,
                ErrorCode::Internal,
                format!(
                    "the node that held this {kind} ({node}) stopped, and the {kind} is moving to another node: the command was not carried out; resume, then send it again"
                ),
            ),
            Unsent::Moving => ServerMsg::error(
                id,
                ErrorCode::Internal,
                format!("the {kind} is moving to another node of the cluster; try again"),
            ),
            Unsent::Lookup(Some(refused)) => refused.answer(id),
            Unsent::Lookup(None) => ServerMsg::error(
                id,
                ErrorCode::Internal,
                format!("could not find the {kind}'s node"),
            ),
        }
    }
}
