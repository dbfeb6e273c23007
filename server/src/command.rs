//! A room or tournament command as the client's node checked and resolved
//! it (its scopes; the account an API token given for a seat stands for;
//! who registers): what a connection hands to a room or tournament of this
//! node (`connection/request.rs`), and what the bus carries to the node that
//! holds one (`cluster/bus/`). One type either way, so a command reaches its room
//! by one path; and why one did not ([`Unsent`]).

use std::sync::Arc;

use grundy_protocol::wire::{ErrorCode, Play, RequestId, ServerMsg};
use serde::{Deserialize, Serialize};

use crate::lobby::Lobby;
use crate::outbox::Handoff;
use crate::player::{AccountId, Player};
pub use crate::room::RematchAsk;
use crate::tournament::registry::Tournaments;
use crate::work::Refused;

/// A command for a room or a tournament, with the id of the client's
/// request it answers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub id: Option<RequestId>,
    pub ask: Ask,
}

/// What a [`Request`] asks, of a room or of a tournament.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "for", content = "request", rename_all = "snake_case")]
pub enum Ask {
    Room(RoomRequest),
    Tournament(TournamentRequest),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RoomRequest {
    Join {
        room: String,
        seat: Option<u8>,
        player: Player,
        /// The connection's account token id: the seat is tied to it.
        #[serde(default)]
        tie: Option<String>,
    },
    Watch {
        room: String,
        since: Option<u64>,
    },
    Resume {
        room: String,
        token: String,
        account: Option<AccountId>,
        /// With `account`: the account token id the seat is tied to from now on.
        #[serde(default)]
        tie: Option<String>,
        since: Option<u64>,
    },
    /// The client's move, as it sent it.
    Move(Play),
    Resign {
        room: String,
        token: String,
    },
    Abort {
        room: String,
        token: String,
    },
    Leave {
        room: String,
    },
    /// `offer_rematch`, `accept_rematch`, `decline_rematch`. `address`: the
    /// client's, as the per-address limits count it; a rematch's new room is
    /// counted against its offerer's.
    Rematch {
        room: String,
        token: String,
        ask: RematchAsk,
        address: Option<std::net::IpAddr>,
    },
    /// Not a client's: its node sends it on when the room moved (`cluster/bus/`).
    CarryOn(Handoff),
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
        tournament: String,
        entrant: Player,
    },
    Rejoin {
        tournament: String,
        token: String,
    },
    Withdraw {
        tournament: String,
        token: String,
    },
    Start {
        tournament: String,
        token: String,
    },
    Watch {
        tournament: String,
        since: Option<u64>,
    },
}

impl Request {
    /// A command the node makes on its own (carrying on after a hand-over, a
    /// resignation for a withdrawn player), which nobody answers.
    pub fn unasked(room: RoomRequest) -> Request {
        Request {
            id: None,
            ask: Ask::Room(room),
        }
    }

    /// The room (or tournament: true) it is for.
    pub fn key(&self) -> (&str, bool) {
        match &self.ask {
            Ask::Room(request) => (request.room(), false),
            Ask::Tournament(request) => (request.tournament(), true),
        }
    }

    /// The request a client waits for an answer to (its id, if it gave
    /// one); None for what a node sends on its own, which nobody answers.
    pub fn answers_to(&self) -> Option<Option<&RequestId>> {
        match &self.ask {
            Ask::Room(RoomRequest::CarryOn(_) | RoomRequest::ResignSeat { .. }) => None,
            Ask::Room(_) | Ask::Tournament(_) => Some(self.id.as_ref()),
        }
    }

    /// Whether it acts in a room the client plays or watches already (a
    /// move, resign, abort or leave), whose events it must be getting.
    pub fn acts_in_room(&self) -> bool {
        matches!(
            self.ask,
            Ask::Room(
                RoomRequest::Move(_)
                    | RoomRequest::Resign { .. }
                    | RoomRequest::Abort { .. }
                    | RoomRequest::Leave { .. }
            )
        )
    }

    /// Whether this node holds the room or tournament it is for.
    pub fn held_by(&self, lobby: &Lobby, tournaments: &Tournaments) -> bool {
        match &self.ask {
            Ask::Room(request) => lobby.holds(request.room()),
            Ask::Tournament(request) => tournaments.find(request.tournament()).is_some(),
        }
    }
}

impl RoomRequest {
    pub fn room(&self) -> &str {
        match self {
            RoomRequest::Join { room, .. }
            | RoomRequest::Watch { room, .. }
            | RoomRequest::Resume { room, .. }
            | RoomRequest::Move(Play { room, .. })
            | RoomRequest::Resign { room, .. }
            | RoomRequest::Abort { room, .. }
            | RoomRequest::Leave { room, .. }
            | RoomRequest::Rematch { room, .. }
            | RoomRequest::CarryOn(Handoff { room, .. })
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
