//! The one way a command reaches a room or a tournament of this node, for a
//! connection or a remote connection (`cluster/bus/remote.rs`): found by id
//! or code, the connection counted as a member when the command makes it one,
//! and the command put in the place's bounded queue, never waiting for room
//! there. A room and a tournament differ only in what [`Place`] says.

use grundy_protocol::wire::{ErrorCode, RequestId, ServerBody, ServerMsg};
use tokio::sync::mpsc::error::TrySendError;

use crate::node::Node;
use crate::outbox::{Memberships, Outbox};
use crate::room::{RoomCmd, RoomTx};
use crate::tournament::actor::TournamentCmd;

/// A kind of place a command goes to: how it is found, counted and queued,
/// and how a refusal names it.
pub(crate) trait Place {
    type Cmd;
    type Queue;

    /// The place by id or code: its id (when `joins`: a command that does
    /// not join needs only the queue) and its queue.
    fn find(shared: &Node, key: &str, joins: bool) -> Option<(String, Self::Queue)>;
    fn try_send(queue: &Self::Queue, cmd: Self::Cmd) -> Result<(), Full>;
    /// The connection's places of this kind.
    fn members(outbox: &Outbox) -> &Memberships;
    /// What `seats_per_connection` limits, `{limit}` for the number.
    const LIMITED: &'static str;
    const UNKNOWN: ErrorCode;
    /// The refusal of a key that names none.
    fn unknown(key: &str) -> String;
    /// `room`, `tournament`.
    const NAME: &'static str;
}

/// A queue refused a command: full (or else closed).
pub(crate) struct Full(bool);

fn full_or_closed<T>(e: TrySendError<T>) -> Full {
    Full(matches!(e, TrySendError::Full(_)))
}

pub(crate) struct Room;

impl Place for Room {
    type Cmd = RoomCmd;
    type Queue = RoomTx;
    const LIMITED: &'static str = "be in at most {limit} rooms with unfinished matches";
    const UNKNOWN: ErrorCode = ErrorCode::UnknownRoom;
    const NAME: &'static str = "room";

    fn find(shared: &Node, key: &str, joins: bool) -> Option<(String, RoomTx)> {
        // A move needs only the room's queue, and no copy of its id.
        if joins {
            shared.lobby.find(key)
        } else {
            shared.lobby.sender(key).map(|tx| (String::new(), tx))
        }
    }

    fn try_send(queue: &RoomTx, cmd: RoomCmd) -> Result<(), Full> {
        queue.try_send(cmd).map_err(full_or_closed)
    }

    fn members(outbox: &Outbox) -> &Memberships {
        &outbox.rooms
    }

    fn unknown(key: &str) -> String {
        format!("no room {key:?}")
    }
}

pub(crate) struct Tournament;

impl Place for Tournament {
    type Cmd = TournamentCmd;
    type Queue = tokio::sync::mpsc::Sender<TournamentCmd>;
    const LIMITED: &'static str = "follow at most {limit} unfinished tournaments";
    const UNKNOWN: ErrorCode = ErrorCode::UnknownTournament;
    const NAME: &'static str = "tournament";

    fn find(shared: &Node, key: &str, _joins: bool) -> Option<(String, Self::Queue)> {
        shared.tournaments.find(key)
    }

    fn try_send(queue: &Self::Queue, cmd: TournamentCmd) -> Result<(), Full> {
        queue.try_send(cmd).map_err(full_or_closed)
    }

    fn members(outbox: &Outbox) -> &Memberships {
        &outbox.tournaments
    }

    fn unknown(key: &str) -> String {
        format!(
            "no tournament {key:?} in play (a finished one's state and standings: \
             get_tournament)"
        )
    }
}

/// Puts `make`'s command in the queue of the place `P` that `key` names, for
/// the connection whose outbox is `outbox`; refuses it (answered to `id`)
/// when there is no such place, or its queue is full or closed. `joins`:
/// the command makes the connection a member (counted against
/// `seats_per_connection`).
pub(crate) fn reach<P: Place>(
    shared: &Node,
    outbox: &Outbox,
    id: Option<RequestId>,
    key: &str,
    joins: bool,
    make: impl FnOnce(Outbox, Option<RequestId>) -> P::Cmd,
) {
    let Some((place, queue)) = P::find(shared, key, joins) else {
        outbox.send(&ServerMsg::error(id, P::UNKNOWN, P::unknown(key)));
        return;
    };
    let members = P::members(outbox);
    let entered = joins && !members.contains(&place);
    if entered {
        if over_limit::<P>(shared, outbox, &id) {
            return;
        }
        // A member from now on, so that a `Gone` follows this command even
        // if the connection closes before the place has answered; the place
        // takes it back if it refuses.
        members.enter(&place);
    }
    // Never waits for room in the queue: a connection blocked on one busy
    // room would stop reading, answering pings and serving its other rooms.
    let refusal = match P::try_send(&queue, make(outbox.clone(), id.clone())) {
        Ok(()) => return,
        Err(Full(true)) => busy(id),
        Err(Full(false)) => {
            ServerMsg::error(id, P::UNKNOWN, format!("{} {key:?} has closed", P::NAME))
        }
    };
    if entered {
        members.exit(&place);
    }
    outbox.send(&refusal);
}

/// Refuses one more place of kind `P` past `seats_per_connection`: answers
/// request `id` and returns true when over the limit.
pub(crate) fn over_limit<P: Place>(shared: &Node, outbox: &Outbox, id: &Option<RequestId>) -> bool {
    let limit = shared.config.limits.seats_per_connection;
    if P::members(outbox).count() < limit {
        return false;
    }
    let what = P::LIMITED.replace("{limit}", &limit.to_string());
    outbox.send(&ServerMsg::answer(
        id.clone(),
        ServerBody::Error {
            code: ErrorCode::LimitReached,
            message: format!("one connection may {what} at once (seats_per_connection)"),
            retry_after_ms: None,
            limit: Some("seats_per_connection".into()),
        },
    ));
    true
}

/// The answer to a command whose room (or tournament) has a full queue.
pub(crate) fn busy(id: Option<RequestId>) -> ServerMsg {
    ServerMsg::answer(
        id,
        ServerBody::Error {
            code: ErrorCode::Busy,
            message: "this room has as many commands queued as it takes; retry shortly".into(),
            retry_after_ms: Some(100),
            limit: Some("room_queue".into()),
        },
    )
}
