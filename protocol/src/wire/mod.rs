//! The wire messages of protocol v1 (docs/protocol.md): JSON text frames, one
//! message per frame, tagged by `type`. Unknown fields are ignored; an unknown
//! `type` is answered with an error, never a dropped connection.
//!
//! Game specs and moves travel as plain JSON values here: their encodings are
//! per game (docs/protocol.md, "Game specs" and "Moves") and are read by the
//! engine ([`crate::Position::from_spec`], [`crate::Rules::parse_move`]).

use crate::Level;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod account;
mod envelope;
mod tournament;
pub use account::*;
pub use envelope::WithId;
pub use tournament::*;

/// The protocol version this build speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// A client-chosen request id, echoed in the answer: a string or a number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RequestId {
    Number(u64),
    Text(String),
}

/// Read by hand rather than as an untagged enum, so that a bad id is told
/// what an id may be (not "did not match any variant"); read alone, it is
/// not buffered either.
impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Id;
        impl serde::de::Visitor<'_> for Id {
            type Value = RequestId;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a request id: a string, or an integer from 0 to 18446744073709551615")
            }
            fn visit_u64<E>(self, n: u64) -> Result<RequestId, E> {
                Ok(RequestId::Number(n))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RequestId, E> {
                u64::try_from(n)
                    .map(RequestId::Number)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(n), &self))
            }
            fn visit_str<E>(self, s: &str) -> Result<RequestId, E> {
                Ok(RequestId::Text(s.to_owned()))
            }
            fn visit_string<E>(self, s: String) -> Result<RequestId, E> {
                Ok(RequestId::Text(s))
            }
        }
        d.deserialize_any(Id)
    }
}

/// The time control of a match: a bank per player plus an increment per move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Clock {
    /// Each player's bank at the start, in milliseconds.
    pub initial_ms: u64,
    /// Added to the mover's bank after each of their moves.
    #[serde(default)]
    pub increment_ms: u64,
}

/// How a room's start position is chosen: a spec, or a random start of a family.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RandomStart {
    /// The game id (`nim`, `kayles`, `wythoff`, ...).
    pub family: String,
    /// The seed: the same seed gives the same start.
    pub seed: u64,
    /// Size bound (largest heap, strip length, grid side ...; per family).
    #[serde(default)]
    pub size: Option<u64>,
}

/// A `move` as [`ClientMsg::from_text`] reads it: the envelope's `id`, the
/// fields of [`Play`], and its `type` (declared, so that a second one is an
/// error, as it is the general way).
#[derive(Deserialize)]
struct MoveMsg {
    #[serde(rename = "type")]
    _type: serde::de::IgnoredAny,
    id: Option<RequestId>,
    room: String,
    #[serde(default)]
    token: String,
    #[serde(rename = "move")]
    mv: Value,
}

/// A move played in a room: what a `move` message carries, and what the
/// server hands on, unchanged, to the room that checks it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct Play {
    pub room: String,
    /// The seat token (an empty or missing token is refused as unauthorized).
    #[serde(default)]
    pub token: String,
    #[serde(rename = "move")]
    pub mv: Value,
}

/// A message a client sends: `{"type": ..., "id": ..., ...}` on the wire
/// (`envelope.rs` reads and writes it).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientMsg {
    /// Echoed in the answer.
    pub id: Option<RequestId>,
    pub body: ClientBody,
}

/// What a client's message asks for, by its `type`; its id is the
/// envelope's ([`ClientMsg`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientBody {
    /// First message on a connection: agree the version, say who you are.
    Hello {
        version: u32,
        /// A guest's name (refused with a token: the account's name is used).
        #[serde(default)]
        name: Option<String>,
        /// A personal API token: the connection then acts as its account.
        #[serde(default)]
        token: Option<String>,
    },
    /// Open an account (no token needed); answered with `account_created`.
    CreateAccount {
        username: String,
        password: String,
        #[serde(default)]
        kind: AccountKind,
    },
    /// Trade a username and password for a new token (shown once, in `token`).
    Login {
        username: String,
        password: String,
        #[serde(flatten)]
        token: NewToken,
    },
    /// A new token for this connection's account (scope `account`).
    CreateToken {
        #[serde(flatten)]
        token: NewToken,
    },
    /// The account's live tokens (scope `account`).
    ListTokens,
    /// Change the account's password (scope `account`), given its current
    /// one: every token of the account is revoked and its other connections
    /// end; answered with `token`, a new token this connection carries on
    /// with (the name, scopes and expiry of its own).
    ChangePassword {
        password: String,
        new_password: String,
    },
    /// Revoke one of the account's tokens (scope `account`), or, with no
    /// `token_id`, the token this connection said hello with (any scope).
    RevokeToken {
        #[serde(default)]
        token_id: Option<String>,
    },
    /// Open a room; the creator takes seat `seat` (default 0) and is answered
    /// with `seated`.
    CreateRoom {
        /// The start position as a game spec; or give `random`.
        #[serde(default)]
        spec: Option<Value>,
        #[serde(default)]
        random: Option<RandomStart>,
        #[serde(default)]
        clock: Option<Clock>,
        /// Shown in the lobby list (default true).
        #[serde(default = "yes")]
        listed: bool,
        /// The seat the creator takes (0 or 1; default 0).
        #[serde(default)]
        seat: Option<u8>,
        /// Ask for a house bot of this level (`perfect`, `random`, or 0 to 10)
        /// to take the other seat.
        #[serde(default)]
        bot: Option<String>,
        /// Both players may see hints (an untimed room only; whoever joins
        /// agrees). Default false.
        #[serde(default)]
        hints: bool,
        /// The game moves both players' ratings when it ends (accounts
        /// only, no house bot, no hints). Default false.
        #[serde(default)]
        rated: bool,
    },
    /// The open and running rooms: at most `limit` of them (1 to
    /// [`MAX_LISTED_ROOMS`], default that), open ones first.
    ListRooms {
        #[serde(default)]
        #[schemars(range(min = 1, max = 500))]
        limit: Option<u32>,
        /// Skip this many rooms of the list (default 0): the next page starts
        /// at the previous page's offset plus its length.
        #[serde(default)]
        offset: Option<u64>,
    },
    /// Take a free seat in a room (by room id or short code).
    Join {
        room: String,
        #[serde(default)]
        seat: Option<u8>,
    },
    /// Watch a room; with `since`, receive the events after that sequence number.
    Watch {
        room: String,
        #[serde(default)]
        since: Option<u64>,
    },
    /// Come back to a seat after a dropped connection.
    Resume {
        room: String,
        /// The seat token; for a seat an account took, the account's API token
        /// does too, or nothing when this connection's `hello` gave one.
        #[serde(default)]
        token: String,
        #[serde(default)]
        since: Option<u64>,
    },
    /// Play a move (its encoding is the game's, docs/protocol.md).
    Move(Play),
    Resign {
        room: String,
        /// The seat token (an empty or missing token is refused as unauthorized).
        #[serde(default)]
        token: String,
    },
    /// Call the match off: allowed until your own first move.
    Abort {
        room: String,
        /// The seat token (an empty or missing token is refused as unauthorized).
        #[serde(default)]
        token: String,
    },
    /// After a match of this room has ended, offer the other player a
    /// rematch (seats swapped); when the other player has offered one
    /// already, this accepts it. Answered with `ack`; everyone in the room
    /// hears `rematch_offered`, and on agreement each player gets its own
    /// `rematch_ready`. Offering again is the same one offer.
    OfferRematch {
        room: String,
        /// The seat token (an empty or missing token is refused as unauthorized).
        #[serde(default)]
        token: String,
    },
    /// Accept the other player's standing rematch offer; refused when there
    /// is none (never made, or withdrawn), and then no room is made.
    AcceptRematch {
        room: String,
        #[serde(default)]
        token: String,
    },
    /// Decline the other player's rematch offer, or withdraw your own.
    DeclineRematch {
        room: String,
        #[serde(default)]
        token: String,
    },
    /// Stop receiving a room's events (a seated player keeps the seat).
    Leave {
        room: String,
    },
    /// A match's record (finished or running) from the store: by room id, or by
    /// short code while the room is in memory.
    GetMatch {
        room: String,
    },
    Ping,
    /// Open a tournament; answered with `tournament_created` and the owner
    /// token that starts it.
    CreateTournament {
        #[serde(flatten)]
        settings: TournamentSettings,
    },
    /// The tournaments that are registering or running.
    ListTournaments,
    /// Enter a tournament as a player (by id or short code); answered with
    /// `registered`. This connection then hears the tournament's events and its
    /// player's `your_game` messages.
    Register {
        tournament: String,
        /// Default: the name given in `hello`.
        #[serde(default)]
        name: Option<String>,
    },
    /// Come back as a registered player (after a dropped connection).
    Rejoin {
        tournament: String,
        /// The player token from `registered`.
        #[serde(default)]
        token: String,
    },
    /// Leave a tournament: a running game is resigned, the games not yet played
    /// are forfeited.
    Withdraw {
        tournament: String,
        #[serde(default)]
        token: String,
    },
    /// Close registration and pair the first round (owner token only).
    StartTournament {
        tournament: String,
        #[serde(default)]
        token: String,
    },
    /// Follow a tournament; with `since`, receive the events after that number.
    WatchTournament {
        tournament: String,
        #[serde(default)]
        since: Option<u64>,
    },
    /// A tournament's state, finished ones included (by id, or by short code
    /// while it is in memory).
    GetTournament {
        tournament: String,
        /// Only this round's pairings and games (for a state too large to
        /// send whole).
        #[serde(default)]
        round: Option<u32>,
    },
    /// The best-rated players of a game.
    GetRatings {
        /// The game, by its spec's `game` id (`kayles`, `dawson`, `nim`, ...).
        /// One of `game` and `family` is required.
        #[serde(default)]
        game: Option<String>,
        /// The older name of `game`, still accepted (`game` wins when both
        /// are given).
        #[serde(default)]
        family: Option<String>,
        /// At most this many (default 100).
        #[serde(default)]
        limit: Option<u32>,
    },
}

pub(crate) fn yes() -> bool {
    true
}

impl ClientMsg {
    /// Reads a client's message. A `move` that starts with its `type` (as
    /// every client here writes it) is read straight into its fields: the
    /// general way, an internally tagged enum, first copies the whole message
    /// into a buffer of its own. Whatever the quick read does not take goes
    /// the general way, so the answer, and any error, is the same.
    pub fn from_text(text: &str) -> serde_json::Result<ClientMsg> {
        if text.starts_with(r#"{"type":"move","#) {
            if let Ok(m) = serde_json::from_str::<MoveMsg>(text) {
                let play = Play {
                    room: m.room,
                    token: m.token,
                    mv: m.mv,
                };
                return Ok(ClientMsg {
                    id: m.id,
                    body: ClientBody::Move(play),
                });
            }
        }
        serde_json::from_str(text)
    }

    /// Every `type` a client may send (for "unknown type" errors).
    pub const TYPES: &'static [&'static str] = &[
        "hello",
        "create_account",
        "login",
        "create_token",
        "list_tokens",
        "revoke_token",
        "change_password",
        "create_room",
        "list_rooms",
        "join",
        "watch",
        "resume",
        "move",
        "resign",
        "abort",
        "offer_rematch",
        "accept_rematch",
        "decline_rematch",
        "leave",
        "get_match",
        "ping",
        "create_tournament",
        "list_tournaments",
        "register",
        "rejoin",
        "withdraw",
        "start_tournament",
        "watch_tournament",
        "get_tournament",
        "get_ratings",
    ];
}

/// Machine-readable error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The message is not valid JSON or lacks a required field.
    BadRequest,
    /// The `type` is not one this server knows.
    UnknownType,
    /// `hello` asked for a version this server does not speak.
    BadVersion,
    /// The spec was refused (the message names the field).
    BadSpec,
    IllegalMove,
    NotYourTurn,
    /// A seat token is missing or wrong; a username and password do not
    /// match; an API token is unknown, revoked or expired.
    Unauthorized,
    /// Only an account may do this (a guest asked): say hello with a token.
    AccountRequired,
    /// The connection's token lacks the scope this needs (the message names it).
    Forbidden,
    /// That name belongs to an account (compared whatever the case).
    NameTaken,
    UnknownRoom,
    RoomFull,
    /// The match is over (a move before the start is `not_your_turn`).
    MatchOver,
    /// Abort is only possible before the first move.
    TooLate,
    /// Too many messages: retry after `retry_after_ms`.
    RateLimited,
    /// A server limit was reached; `limit` names it.
    LimitReached,
    /// The server is shutting down.
    ShuttingDown,
    /// Something went wrong on the server's side.
    Internal,
    UnknownTournament,
    /// That name (or this connection) is registered in the tournament already.
    AlreadyRegistered,
    /// The tournament has started or finished: no more registrations.
    RegistrationClosed,
    /// The tournament has as many players as it takes.
    TournamentFull,
    /// The tournament is over (or the player has withdrawn already).
    TournamentOver,
    /// The answer would exceed `max_message_bytes`; the message says how to
    /// ask for less.
    TooLarge,
    /// The server has as much of this kind of work queued as it takes (a
    /// room's command queue, spec builds, store reads): retry after
    /// `retry_after_ms`.
    Busy,
}

/// A seat as others see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SeatInfo {
    pub name: Option<String>,
    pub connected: bool,
    /// Who holds the seat: a person's or a bot's account, or a guest; null
    /// for an empty seat (and in matches recorded before accounts).
    #[serde(default)]
    pub player_kind: Option<PlayerKind>,
}

/// How a match ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Played out: the rules decided (no move left, three in a row, ...).
    Rules,
    Resign,
    /// A player's clock ran out.
    Flag,
    /// Called off before the first move by a player.
    Abort,
    /// The first move was not made in time.
    NoShow,
    /// Tournaments only: a game not played because a player withdrew.
    Forfeit,
    /// The match reached `max_moves` plies (or `max_record_bytes` of moves):
    /// the winner is the player who wins the final position with perfect play.
    MoveLimit,
}

/// Writes a unit variant by its wire name (`bad_spec`, `no_show`): what
/// people see of a code or reason is what the protocol calls it.
fn wire_name<T: Serialize + std::fmt::Debug>(
    value: &T,
    f: &mut std::fmt::Formatter,
) -> std::fmt::Result {
    match serde_json::to_value(value) {
        Ok(Value::String(name)) => f.write_str(&name),
        _ => write!(f, "{value:?}"),
    }
}

impl ErrorCode {
    /// Whether a client coming back to a room or tournament it was in (a
    /// `resume`, `rejoin` or `watch` on a fresh connection) should ask again
    /// after a wait: the one retry policy of every client.
    ///
    /// Transient: the server is going down (`shutting_down`: it restarts, or
    /// another node of a cluster has the room); its own trouble (`internal`:
    /// a cluster's node that could not reach the room's owner, which another
    /// node is taking over); a full queue or a rate limit (`busy`,
    /// `rate_limited`: both come with `retry_after_ms`); and a room or
    /// tournament the server does not know (`unknown_room`,
    /// `unknown_tournament`): one this client was in is unknown while a
    /// restarting server brings it back or a cluster's node takes it over,
    /// and for good only once it finished and left memory, so callers check
    /// its stored record first and bound their attempts.
    ///
    /// Every other code answers the command itself (a wrong token, a full
    /// room, a finished tournament) and asking again gets the same answer.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            ErrorCode::ShuttingDown
                | ErrorCode::Internal
                | ErrorCode::Busy
                | ErrorCode::RateLimited
                | ErrorCode::UnknownRoom
                | ErrorCode::UnknownTournament
        )
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        wire_name(self, f)
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        wire_name(self, f)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MatchResult {
    /// The winning seat, or null for an aborted match.
    pub winner: Option<u8>,
    pub reason: EndReason,
}

/// Why a rematch offer is void.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WithdrawReason {
    /// The other player declined it.
    Declined,
    /// The offerer took it back (`decline_rematch` on their own offer).
    Withdrawn,
    /// A player left the room (disconnected, or sent `leave`).
    Left,
    /// The finished room stopped lingering.
    Closed,
    /// Both agreed, but the new room could not be made (the error said why).
    Failed,
}

/// One entry of a room's event log. Sequence numbers start at 1 and have no gaps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventBody {
    /// A player took a seat.
    Seated {
        seat: u8,
        name: Option<String>,
        #[serde(default)]
        player_kind: Option<PlayerKind>,
    },
    /// Both seats are taken: the clock of seat 0 runs.
    Started,
    /// A move was played. `clocks_ms` are both banks after it; `position` is the
    /// position after it (the game's JSON view).
    Moved {
        seat: u8,
        #[serde(rename = "move")]
        mv: Value,
        clocks_ms: [u64; 2],
        position: Value,
    },
    /// A player's connection dropped or came back.
    Presence { seat: u8, connected: bool },
    /// The match is over.
    Ended { result: MatchResult },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    pub seq: u64,
    #[serde(flatten)]
    pub body: EventBody,
}

/// A room's full state: in `seated`, and in `watching` when no `since` was
/// given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Snapshot {
    pub room: String,
    pub code: String,
    /// The start position.
    pub spec: Value,
    /// The current position (the game's JSON view).
    pub position: Value,
    pub seats: [SeatInfo; 2],
    /// Every move so far, in order.
    pub moves: Vec<Value>,
    /// The seat to move, or null before the start and after the end.
    pub to_move: Option<u8>,
    pub clock: Option<Clock>,
    pub clocks_ms: [u64; 2],
    pub result: Option<MatchResult>,
    /// The sequence number of the last event included in this state.
    pub seq: u64,
    /// The room allows hints to both players (asked for at its creation).
    #[serde(default)]
    pub hints: bool,
    /// The game moves both players' ratings when it ends.
    #[serde(default)]
    pub rated: bool,
    /// The level of the server's house bot this room asked for at its
    /// creation (`perfect`, `random`, 0 to 9); absent when none: which seat
    /// is the house bot's, its seat's `player_kind` (`bot`) and name say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub bot: Option<Level>,
}

/// Where a room's match is, as the lobby lists it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RoomState {
    /// A seat is free.
    Open,
    /// Both seats are taken and the match is under way.
    Playing,
    /// The match is over.
    Finished,
}

impl RoomState {
    /// As on the wire: `open`, `playing`, `finished`.
    pub fn as_str(self) -> &'static str {
        match self {
            RoomState::Open => "open",
            RoomState::Playing => "playing",
            RoomState::Finished => "finished",
        }
    }
}

impl std::fmt::Display for RoomState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// A line of the lobby list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoomSummary {
    pub room: String,
    pub code: String,
    /// The game played, as the spec's `game` id names it (`nim`, `kayles`,
    /// `dawson`, ...): what ratings are kept under.
    pub game: String,
    /// The game's own name, e.g. "Kayles" or "Dawson's Kayles".
    pub name: String,
    /// The start position in a few words, at most [`MAX_DESCRIPTION`]
    /// characters (`get_match` or `watch` give the whole spec).
    pub description: String,
    pub seats: [SeatInfo; 2],
    pub state: RoomState,
    pub clock: Option<Clock>,
    /// The house bot level this room asked for, if any.
    #[schemars(with = "Option<String>")]
    pub bot: Option<Level>,
    /// The room allows hints to both players.
    #[serde(default)]
    pub hints: bool,
    /// The game moves both players' ratings when it ends (a rated casual
    /// game; a tournament's games are rated as the tournament is).
    #[serde(default)]
    pub rated: bool,
    /// The seated players' Glicko-2 ratings in this game, if rated.
    pub ratings: [Option<f64>; 2],
    /// The tournament this room's game belongs to, if any.
    pub tournament: Option<String>,
}

/// A move of a match record, with the time it was played.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordedMove {
    pub seat: u8,
    #[serde(rename = "move")]
    pub mv: Value,
    /// Milliseconds since the match started.
    pub at_ms: u64,
}

/// A finished (or running) match as kept by the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MatchRecord {
    pub room: String,
    pub spec: Value,
    pub players: [Option<String>; 2],
    /// The players' kinds (null where not known: matches recorded before
    /// accounts).
    #[serde(default)]
    pub player_kinds: [Option<PlayerKind>; 2],
    pub clock: Option<Clock>,
    pub moves: Vec<RecordedMove>,
    pub result: Option<MatchResult>,
}

/// The most rooms one `rooms` answer holds (and the default `limit`).
pub const MAX_LISTED_ROOMS: u32 = 500;

/// The longest `description` of a room summary, in characters.
pub const MAX_DESCRIPTION: usize = 120;

/// The limits this server enforces (each refusal names the one it hit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Limits {
    /// Largest message a client may send (bytes); a larger one closes with 1009.
    pub max_frame_bytes: usize,
    /// Sustained rate of client messages per connection.
    pub messages_per_second: u32,
    /// Messages a connection may send at once before the rate applies.
    pub burst: u32,
    /// Rooms one connection may play or watch in at once.
    pub seats_per_connection: usize,
    /// Rooms the server holds in memory at once.
    pub open_rooms: usize,
    /// Rooms with an unfinished match that connections from one client
    /// address (IPv6: one /64) created and the server holds at once.
    pub open_rooms_per_ip: usize,
    /// Time to complete the WebSocket handshake, and then to send `hello`.
    pub hello_timeout_ms: u64,
    /// How often the server sends a WebSocket ping.
    pub ping_interval_ms: u64,
    /// A connection that sends nothing (not even a pong) this long is closed.
    pub idle_timeout_ms: u64,
    /// Tournaments the server holds in memory at once.
    pub open_tournaments: usize,
    /// Players one tournament takes at most.
    pub tournament_players: u32,
    /// Largest message the server sends (bytes): a client must accept
    /// messages up to this size. An answer that would be larger is a
    /// `too_large` error instead.
    pub max_message_bytes: usize,
    /// Plies a match may last: the match that reaches it ends (`move_limit`).
    pub max_moves: u32,
    /// Bytes of move JSON a match may record: the match that reaches it ends
    /// (`move_limit`), like one that reaches `max_moves`.
    pub max_record_bytes: usize,
    /// WebSocket connections the server holds at once; one more is closed
    /// with 1013 right after its handshake.
    pub max_connections: usize,
    /// WebSocket connections the server holds at once from one client
    /// address (IPv6: one /64); one more is closed with 1008 right after its
    /// handshake. Connections from the server's own host are not counted.
    pub connections_per_ip: usize,
    /// Wrong passwords in a row for one account before it is locked for a
    /// while (`rate_limited`, `retry_after_ms`); each further one doubles the
    /// lock, up to `login_lockout_max_ms`. The right password resets it.
    pub login_failures_before_lockout: u32,
    /// The longest an account's logins are locked.
    pub login_lockout_max_ms: u64,
    /// Logins (right or wrong) from one client address per minute.
    pub logins_per_ip_per_minute: u32,
    /// Accounts created from one client address per hour.
    pub accounts_per_ip_per_hour: u32,
    /// Live (unrevoked, unexpired) tokens one account may hold.
    pub tokens_per_account: u32,
    /// The days a new token lives when `expires_in_days` is not given
    /// (`create_token`: no longer than the creating token).
    pub token_default_days: u32,
    /// The most days a new token may live (`expires_in_days`).
    pub token_max_days: u32,
}

/// What the server's message says, by its `type`: an answer (its id is
/// the envelope's, [`ServerMsg`]) or a notice nobody asked for, which has
/// none ([`ServerBody::is_notice`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerBody {
    Welcome {
        version: u32,
        server: String,
        limits: Limits,
        /// The name this connection's seats and registrations take: the
        /// account's, or the guest's (server-given when `hello` had none).
        name: String,
        /// The account the token proved, or null for a guest.
        account: Option<AccountInfo>,
        /// The token this connection said hello with, or null.
        token: Option<TokenInfo>,
    },
    /// The answer to `create_account`.
    AccountCreated {
        account: AccountInfo,
    },
    /// The answer to `login`, `create_token` and `change_password`: the
    /// secret, shown this once.
    Token {
        token: String,
        info: TokenInfo,
        account: AccountInfo,
    },
    /// The answer to `list_tokens`.
    Tokens {
        tokens: Vec<TokenInfo>,
    },
    /// The answer to `revoke_token`.
    TokenRevoked {
        token_id: String,
    },
    /// The answer to `create_room` and `join`: your seat and its secret token.
    Seated {
        room: String,
        seat: u8,
        token: String,
        snapshot: Snapshot,
    },
    /// The answer to `watch` and `resume`: a snapshot, or the missed events.
    Watching {
        room: String,
        /// For `resume`: your seat.
        seat: Option<u8>,
        /// For `resume` by an account's token: the seat token (for moves).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        snapshot: Option<Snapshot>,
        events: Vec<Event>,
    },
    Rooms {
        rooms: Vec<RoomSummary>,
        /// How many rooms the list has in all (more than `rooms` holds when
        /// the `limit` cut it).
        total: u64,
    },
    /// A command was carried out (`seq`: the event it produced, if any).
    Ack {
        room: Option<String>,
        seq: Option<u64>,
    },
    Match {
        record: MatchRecord,
    },
    /// An event of a room you play in or watch.
    Event {
        room: String,
        event: Event,
    },
    Error {
        code: ErrorCode,
        /// What is wrong, in words: at most 600 characters (a longer one is
        /// cut, ending in `…`), so that echoing what was sent stays short.
        #[serde(serialize_with = "short_message")]
        message: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
        /// For `limit_reached`: which limit.
        #[serde(skip_serializing_if = "Option::is_none")]
        limit: Option<String>,
    },
    Pong,
    /// The server is going down; reconnect and resume later.
    Shutdown {
        message: String,
    },
    /// The answer to `create_tournament`: keep `owner_token` to start it.
    TournamentCreated {
        tournament: String,
        code: String,
        owner_token: String,
        state: TournamentState,
    },
    /// The answer to `register` and `rejoin`: your player number and its secret
    /// token.
    Registered {
        tournament: String,
        player: u32,
        token: String,
        state: TournamentState,
    },
    /// The answer to `watch_tournament`: the state, or the missed events.
    TournamentWatching {
        tournament: String,
        state: Option<TournamentState>,
        events: Vec<TournamentEvent>,
    },
    /// The answer to `get_tournament`.
    Tournament {
        state: TournamentState,
    },
    Tournaments {
        tournaments: Vec<TournamentSummary>,
    },
    /// An event of a tournament you play in or watch.
    TournamentEvent {
        tournament: String,
        event: TournamentEvent,
    },
    /// To a registered player only: a game of yours is ready; `resume` the room
    /// with this seat token to play it. Sent again on `rejoin` while it runs.
    YourGame {
        tournament: String,
        round: u32,
        room: String,
        seat: u8,
        token: String,
        opponent: String,
        #[serde(default)]
        opponent_kind: Option<PlayerKind>,
    },
    /// To everyone in a finished match's room: the player of `seat` offers
    /// the other a rematch (seats swapped).
    RematchOffered {
        room: String,
        seat: u8,
        name: Option<String>,
    },
    /// To everyone in the room: the rematch offer of `seat` is void, for
    /// `reason`.
    RematchWithdrawn {
        room: String,
        seat: u8,
        reason: WithdrawReason,
    },
    /// To each player only, once both agreed (or the house bot accepted):
    /// the new room, your seat in it and its secret token; `resume` the new
    /// room with it to play. The finished room is `room`.
    RematchReady {
        room: String,
        new_room: String,
        code: String,
        seat: u8,
        token: String,
        opponent: Option<String>,
    },
    /// The answer to `get_ratings`.
    Ratings {
        /// The game the ratings are kept under (its spec's `game` id).
        game: String,
        /// What a person calls it ("Kayles").
        name: String,
        /// The same as `game`, for clients written when it was named so.
        family: String,
        ratings: Vec<PlayerRating>,
    },
}

/// A message the server sends: `{"type": ..., "id": ..., ...}` on the wire
/// for an answer, `{"type": ..., ...}` for a notice (`envelope.rs` reads
/// and writes it).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerMsg {
    /// The id of the request this answers; always None for a notice (an
    /// event, ...), which answers nothing and is written without one.
    pub id: Option<RequestId>,
    pub body: ServerBody,
}

impl ServerMsg {
    /// The answer to request `id`.
    pub fn answer(id: Option<RequestId>, body: ServerBody) -> Self {
        ServerMsg { id, body }
    }

    /// A message nobody asked for (an event, `shutdown`, `your_game`).
    pub fn notice(body: ServerBody) -> Self {
        ServerMsg { id: None, body }
    }

    pub fn error(id: Option<RequestId>, code: ErrorCode, message: impl Into<String>) -> Self {
        ServerMsg::answer(
            id,
            ServerBody::Error {
                code,
                message: message.into(),
                retry_after_ms: None,
                limit: None,
            },
        )
    }
}

/// The most characters of an error's `message` on the wire.
pub const MAX_ERROR_MESSAGE_CHARS: usize = 600;

/// An error's message, cut to [`MAX_ERROR_MESSAGE_CHARS`]: a refusal that
/// quotes what was sent never sends much of it back.
fn short_message<S: serde::Serializer>(message: &str, s: S) -> Result<S::Ok, S::Error> {
    // Bytes bound characters: most messages need no count.
    if message.len() <= MAX_ERROR_MESSAGE_CHARS {
        return s.serialize_str(message);
    }
    s.serialize_str(&crate::names::cut(message, MAX_ERROR_MESSAGE_CHARS))
}

impl ServerBody {
    /// The `type`s of the messages that answer nothing, and so have no id.
    pub const NOTICES: [&'static str; 7] = [
        "event",
        "shutdown",
        "tournament_event",
        "your_game",
        "rematch_offered",
        "rematch_withdrawn",
        "rematch_ready",
    ];

    /// Whether this answers nothing (one of [`Self::NOTICES`]).
    pub fn is_notice(&self) -> bool {
        matches!(
            self,
            ServerBody::Event { .. }
                | ServerBody::Shutdown { .. }
                | ServerBody::TournamentEvent { .. }
                | ServerBody::YourGame { .. }
                | ServerBody::RematchOffered { .. }
                | ServerBody::RematchWithdrawn { .. }
                | ServerBody::RematchReady { .. }
        )
    }
}

#[cfg(test)]
mod error_code_tests {
    use super::ErrorCode;

    #[test]
    fn only_passing_trouble_and_rooms_on_their_way_back_are_transient() {
        let transient = [
            ErrorCode::ShuttingDown,
            ErrorCode::Internal,
            ErrorCode::Busy,
            ErrorCode::RateLimited,
            ErrorCode::UnknownRoom,
            ErrorCode::UnknownTournament,
        ];
        for code in transient {
            assert!(code.is_transient(), "{code}");
        }
        for code in [
            ErrorCode::Unauthorized,
            ErrorCode::RoomFull,
            ErrorCode::MatchOver,
            ErrorCode::TournamentOver,
            ErrorCode::BadRequest,
            ErrorCode::NameTaken,
            ErrorCode::LimitReached,
        ] {
            assert!(!code.is_transient(), "{code}");
        }
    }
}
