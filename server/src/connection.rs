//! One WebSocket connection: the handshake, then one task that parses and
//! dispatches commands and writes what the connection's bounded outbox holds
//! (`socket.rs`). Errors are answered with a coded message; only a broken transport,
//! a slow reader, an idle peer or abuse closes the connection, with a close
//! code and a reason.

use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use grundy_protocol::wire::{
    ClientBody, ClientMsg, Clock, ErrorCode, Play, RequestId, Scope, ServerBody, ServerMsg,
    MAX_LISTED_ROOMS, PROTOCOL_VERSION,
};
use grundy_protocol::{Level, Position};
use serde_json::Value;
use tokio::time::{sleep_until, Instant};
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;
use tokio_util::sync::CancellationToken;

use crate::accounts::{Accounts, Session};
use crate::cluster::bus::{self, Bus};
use crate::config::Config;
use crate::flag::{Alarm, Flag};
use crate::frame_log;
use crate::house::HouseSeat;
use crate::lobby::{Lobby, RoomSetup};
use crate::names;
use crate::node::Node;
use crate::outbox::{ConnId, Kick, Outbox};
use crate::player::Player;
use crate::ratings::Ratings;
use crate::room::RoomCmd;
use crate::stream::Stream;
use crate::tcp::drain;
use crate::tournament::actor::TournamentCmd;
use crate::tournament::registry::Tournaments;
use grundy_protocol::time_control::check_clock;

mod account;
mod place;
mod read;
mod rematch;
mod remote;
mod request;
mod socket;
mod tournament;

pub use crate::command::{Request, RoomRequest, Unsent};
use read::{Malformed, Unread};
use socket::{Io, Socket};

impl bus::Inbound for Node {
    fn lobby(&self) -> &Arc<Lobby> {
        &self.lobby
    }
    fn tournaments(&self) -> &Arc<Tournaments> {
        &self.tournaments
    }
    fn accounts(&self) -> &Arc<Accounts> {
        &self.accounts
    }
    fn ratings(&self) -> &Arc<Ratings> {
        &self.ratings
    }
    fn config(&self) -> &Config {
        &self.config
    }
    fn next_conn(&self) -> ConnId {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }
    fn deliver(&self, outbox: &Outbox, request: Request, received: Instant) {
        request::deliver(self, outbox, request, received);
    }
    fn route(
        self: Arc<Self>,
        bus: Arc<Bus>,
        outbox: Outbox,
        what: Request,
    ) -> BoxFuture<'static, Result<(), Unsent>> {
        Box::pin(async move {
            remote::route(&self, &bus, &outbox, what, Instant::now(), &mut None).await
        })
    }
}

/// What `create_room` asks for.
struct NewRoom {
    spec: Option<Value>,
    random: Option<grundy_protocol::wire::RandomStart>,
    clock: Option<Clock>,
    listed: bool,
    seat: Option<u8>,
    bot: Option<String>,
    hints: bool,
    rated: bool,
}

/// Refuses a rated room that could not be rated: a guest's, one against the
/// house bot (whose perfect play has no rating to find), one with hints.
fn check_rated(
    rated: bool,
    creator: &Player,
    house_bot: bool,
    hints: bool,
) -> Result<(), (ErrorCode, &'static str)> {
    if !rated {
        return Ok(());
    }
    if creator.account.is_none() {
        return Err((
            ErrorCode::AccountRequired,
            "rated: only an account plays a rated game (say hello with a token)",
        ));
    }
    if house_bot {
        return Err((
            ErrorCode::BadRequest,
            "rated: a game against the house bot is never rated; leave out bot, or rated",
        ));
    }
    if hints {
        return Err((
            ErrorCode::BadRequest,
            "rated: a rated game allows no hints; leave out hints, or rated",
        ));
    }
    Ok(())
}

pub fn ws_config(config: &Config) -> WebSocketConfig {
    let max = config.limits.max_frame_bytes;
    WebSocketConfig::default()
        // Held by every connection, idle or not; a move is ~150 bytes, and a
        // larger frame is read in more than one go.
        .read_buffer_size(2048)
        // Frames fed between two flushes go out in one write: the connection
        // feeds everything queued, then flushes once.
        .write_buffer_size(64 * 1024)
        .max_write_buffer_size(max.max(1 << 20) * 4)
        .max_message_size(Some(max))
        .max_frame_size(Some(max))
}

/// Tokens for the rate limit: `rate` per second, at most `burst` saved up.
struct Bucket {
    tokens: f64,
    rate: f64,
    burst: f64,
    last: Instant,
}

impl Bucket {
    fn new(rate: u32, burst: u32) -> Bucket {
        Bucket {
            tokens: burst as f64,
            rate: rate as f64,
            burst: burst as f64,
            last: Instant::now(),
        }
    }

    /// Ok, or how long until a message would be allowed.
    fn take(&mut self) -> Result<(), u64> {
        let now = Instant::now();
        self.tokens =
            (self.tokens + now.duration_since(self.last).as_secs_f64() * self.rate).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - self.tokens) / self.rate * 1000.0).ceil() as u64)
        }
    }
}

/// Why the server closes a connection.
struct Closing(CloseCode, String);

struct Conn {
    shared: Arc<Node>,
    outbox: Outbox,
    /// Who this connection plays as: a guest, or (with `session`) an account.
    player: Box<Player>,
    /// What the token given in `hello` proved.
    session: Option<Box<Session>>,
    /// The client's address as the per-address limits count it; None for
    /// an address exempt from them (`unlimited_from`, the house bots).
    address: Option<std::net::IpAddr>,
    hello: bool,
    bucket: Bucket,
    /// Messages refused in a row for the rate limit.
    refused_in_a_row: u32,
    /// When the message being handled was read: a move's clock stops there.
    received: Instant,
    /// In a cluster: the node that owns each room this connection reached
    /// through the bus (by the key it gave), so it is looked up once. Boxed:
    /// 8 bytes in every connection's task, not a map's 48.
    #[allow(clippy::box_collection)]
    owners: remote::Owners,
}

/// How a connection that did not say `hello` in time is closed.
fn hello_timeout_closing(limit: Duration) -> Closing {
    Closing(
        CloseCode::Policy,
        format!(
            "no hello within {} ms (hello_timeout_ms)",
            limit.as_millis()
        ),
    )
}

/// Serves one WebSocket connection, which `net::http::accept` upgraded,
/// from client `address`.
pub async fn serve(
    ws: WebSocketStream<Stream>,
    shared: Arc<Node>,
    shutdown: CancellationToken,
    stopping: Flag,
    address: Option<IpAddr>,
) {
    let config = shared.config.clone();
    let hello_timeout = Duration::from_millis(config.limits.hello_timeout_ms);
    let id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
    let (outbox, queue) = Outbox::open(
        id,
        config.outbox_capacity,
        config.outbox_bytes,
        config.limits.max_message_bytes,
        None,
    );
    let mut socket = Socket::new(ws, queue);

    let mut conn = Conn {
        shared: shared.clone(),
        outbox: outbox.clone(),
        player: Box::default(),
        session: None,
        address,
        hello: false,
        bucket: Bucket::new(config.limits.messages_per_second, config.limits.burst),
        refused_in_a_row: 0,
        received: Instant::now(),
        owners: None,
    };
    let hello_deadline = Instant::now() + hello_timeout;
    let ping_every = Duration::from_millis(config.limits.ping_interval_ms);
    let idle_limit = Duration::from_millis(config.limits.idle_timeout_ms);
    // Set again after each ping: after a long read, one ping, not one per
    // period missed.
    let ping = Alarm::at(Instant::now() + ping_every);
    let mut last_seen = Instant::now();
    // Made once: a future made anew in every turn of the loop would join
    // (and leave) the signal's waiter list per message.
    let kicked = outbox.kick.raised();
    let shutting_down = stopping.raised();
    tokio::pin!(kicked, shutting_down, ping);

    let closing: Option<Closing> = loop {
        let hello_wait = async {
            if conn.hello {
                std::future::pending::<()>().await
            } else {
                sleep_until(hello_deadline).await
            }
        };
        // In this order, and no further once one is ready: the shutdown and
        // a kick (one atomic load each) before the socket, so that a peer
        // that never stops sending cannot delay them; the timers after it,
        // polled only when the socket has nothing (they only matter then).
        tokio::select! {
            biased;
            _ = &mut shutting_down => {
                // Nothing more is read. What the rooms and tournaments took
                // is answered first, its answers written as they come (a
                // `seated` holds the only copy of a seat's token).
                socket.meanwhile(conn.shared.answered.cancelled()).await;
                conn.reply(ServerMsg::notice(ServerBody::Shutdown { message: "the server is shutting down; reconnect and resume later".into() }));
                break Some(Closing(CloseCode::Away, "server shutting down".into()));
            }
            _ = &mut kicked => break Some(kick_closing(conn.outbox.dropped_for())),
            io = socket.next() => {
                last_seen = Instant::now();
                // The hello timer is not polled while the socket always has
                // something to read (a stream of control frames, which the
                // rate limit does not count): the deadline is checked here too.
                if !conn.hello && last_seen >= hello_deadline {
                    break Some(hello_timeout_closing(hello_timeout));
                }
                let msg = match io {
                    Io::Read(msg) => msg,
                    Io::WriteFailed => break None,
                };
                match msg {
                    Some(Ok(Message::Text(text))) => {
                        conn.received = last_seen;
                        if frame_log::on() {
                            frame_log::inbound(id, &text);
                        }
                        match conn.on_text(&text) {
                            Ok(None) => {}
                            // Boxed: the commands that wait (for the lobby,
                            // the store, a pool) make a large future, which
                            // would otherwise be part of every connection's
                            // task, idle ones included.
                            Ok(Some(waits)) => socket.meanwhile(Box::pin(conn.dispatch(waits))).await,
                            Err(c) => break Some(c),
                        }
                    }
                    Some(Ok(Message::Binary(bytes))) => {
                        if frame_log::on() {
                            frame_log::inbound_binary(id, bytes.len());
                        }
                        // Counted against the rate limit like any message.
                        match conn.admit(&None) {
                            Ok(true) => conn.reply(ServerMsg::error(None, ErrorCode::BadRequest,
                                "binary frames are not accepted: send JSON text frames")),
                            Ok(false) => {}
                            Err(c) => break Some(c),
                        }
                    }
                    Some(Ok(Message::Close(_))) | None => break None,
                    Some(Ok(_)) => {} // ping (answered by the library), pong, raw frame
                    Some(Err(WsError::Capacity(CapacityError::MessageTooLong { size, max_size }))) => {
                        break Some(Closing(CloseCode::Size,
                            format!("message of {size} bytes exceeds the limit of {max_size} (max_frame_bytes)")));
                    }
                    Some(Err(WsError::Utf8(_))) => {
                        break Some(Closing(CloseCode::Invalid, "text frame is not valid UTF-8".into()));
                    }
                    Some(Err(e)) => {
                        tracing::debug!(conn = id, "read error: {e}");
                        break Some(Closing(CloseCode::Protocol, format!("protocol error: {e}")));
                    }
                }
            }
            _ = &mut ping => {
                if last_seen.elapsed() > idle_limit {
                    break Some(Closing(CloseCode::Away, format!("no sign of life for {} ms (idle_timeout_ms)", idle_limit.as_millis())));
                }
                socket.ping();
                ping.as_mut().reset(Instant::now() + ping_every);
            }
            _ = hello_wait => break Some(hello_timeout_closing(hello_timeout)),
        }
    };

    drop(conn);
    // The server closes because of the peer: wait for the peer to close too.
    let linger = closing.is_some() && !shutdown.is_cancelled();
    // Boxed, like the commands that wait: it runs once, at the end.
    Box::pin(finish(&shared, outbox, socket, closing, linger)).await;
}

/// The close frame for a connection the server dropped: a slow reader's
/// fault, and a password changed elsewhere, are a policy close (1008); the
/// cluster's own troubles are a service restart (1012). Either way its
/// client resumes (after a password change, with a token of a new login).
fn kick_closing(why: Kick) -> Closing {
    let code = match why {
        Kick::SlowReader | Kick::PasswordChanged => CloseCode::Policy,
        Kick::Overloaded => CloseCode::Again,
        Kick::RoomMoved | Kick::NodeLost | Kick::BusLost | Kick::TournamentMoved => {
            CloseCode::Restart
        }
    };
    Closing(code, why.reason().into())
}

/// The room a room command names (id or code).
fn room_key(body: &ClientBody) -> Option<&str> {
    match body {
        ClientBody::Join { room, .. }
        | ClientBody::Watch { room, .. }
        | ClientBody::Resume { room, .. }
        | ClientBody::Move(Play { room, .. })
        | ClientBody::Resign { room, .. }
        | ClientBody::Abort { room, .. }
        | ClientBody::OfferRematch { room, .. }
        | ClientBody::AcceptRematch { room, .. }
        | ClientBody::DeclineRematch { room, .. }
        | ClientBody::Leave { room, .. } => Some(room),
        _ => None,
    }
}

/// The tournament a tournament command names (id or code), for the commands
/// its owner's node carries out (`create_tournament`, the lists and reads
/// are answered where the client is).
fn tournament_key(body: &ClientBody) -> Option<&str> {
    match body {
        ClientBody::Register { tournament, .. }
        | ClientBody::Rejoin { tournament, .. }
        | ClientBody::Withdraw { tournament, .. }
        | ClientBody::StartTournament { tournament, .. }
        | ClientBody::WatchTournament { tournament, .. } => Some(tournament),
        _ => None,
    }
}

/// Tells the connection's rooms and tournaments it is gone, then closes the
/// socket politely: what is queued, then the close frame, then (`linger`)
/// waits for the peer to close too.
async fn finish(
    shared: &Node,
    outbox: Outbox,
    socket: Socket,
    closing: Option<Closing>,
    linger: bool,
) {
    let id = outbox.conn;
    shared.accounts.signed_in(&outbox, None);
    // Marked as it is read: a room this connection is still following into
    // (`Bus::follow`, on a task of its own) either hears `Gone` below or
    // sees the mark (`Memberships::left`), and so does the bus.
    for tx in shared.lobby.senders(&outbox.rooms.leave()) {
        let _ = tx.send(RoomCmd::Gone { conn: id }).await;
    }
    if let Some(bus) = &shared.bus {
        bus.gone(id).await;
    }
    for tx in shared.tournaments.senders(&outbox.tournaments.leave()) {
        let _ = tx.send(TournamentCmd::Gone { conn: id }).await;
    }
    // Rooms that still hold this outbox drop it at their next send.
    outbox.kick.raise();
    drop(outbox);
    let frame = closing.map(|Closing(code, reason)| CloseFrame {
        code,
        reason: Utf8Bytes::from(reason),
    });
    // Whatever was queued before the close goes out first; a peer that
    // stopped reading keeps the close from finishing, so it has a limit.
    if let Some(mut stream) = socket.close(frame, Duration::from_secs(5)).await {
        if linger {
            drain(&mut stream).await;
        }
    }
}

/// Answers one query (`list_rooms`, `get_match`, `list_tournaments`,
/// `get_tournament`, `get_ratings`) exactly as a connection would, for the
/// HTTP API: the answer's text, or None if nobody answered in time.
pub async fn ask(shared: &Arc<Node>, msg: ClientMsg) -> Option<Utf8Bytes> {
    let id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
    let max_message = shared.config.limits.max_message_bytes;
    let (outbox, mut answers) = Outbox::open(id, 4, usize::MAX, max_message, None);
    let mut conn = Conn {
        shared: shared.clone(),
        outbox,
        player: Box::default(),
        session: None,
        address: None,
        hello: true,
        bucket: Bucket::new(1, 1),
        refused_in_a_row: 0,
        received: Instant::now(),
        owners: None,
    };
    Box::pin(conn.dispatch(msg)).await;
    drop(conn);
    // A tournament answers from its own task.
    let frames = tokio::time::timeout(Duration::from_secs(10), answers.recv()).await;
    frames.ok()??.into_iter().next()
}

impl Conn {
    fn reply(&self, msg: ServerMsg) {
        self.outbox.send(&msg);
    }

    fn error(&self, id: Option<RequestId>, code: ErrorCode, message: impl Into<String>) {
        self.reply(ServerMsg::error(id, code, message));
    }

    /// Takes a token for one incoming message: true if it may be handled; false
    /// if it was refused for the rate limit (and answered so); the connection
    /// closes when a peer keeps sending far past the limit.
    fn admit(&mut self, id: &Option<RequestId>) -> Result<bool, Closing> {
        if let Err(retry_after_ms) = self.bucket.take() {
            self.refused_in_a_row += 1;
            // Give up on the peer before the refusals alone could fill its
            // outbox: the close must name the rate, not a slow reader.
            let config = &self.shared.config;
            let patience = (config.limits.burst as usize)
                .saturating_mul(10)
                .min(config.outbox_capacity / 4);
            if self.refused_in_a_row as usize > patience {
                return Err(Closing(
                    CloseCode::Policy,
                    "message rate far above the limit (messages_per_second)".into(),
                ));
            }
            self.reply(ServerMsg::answer(
                id.clone(),
                ServerBody::Error {
                    code: ErrorCode::RateLimited,
                    message: format!(
                        "more than {} messages per second (messages_per_second)",
                        self.shared.config.limits.messages_per_second
                    ),
                    retry_after_ms: Some(retry_after_ms),
                    limit: Some("messages_per_second".into()),
                },
            ));
            return Ok(false);
        }
        self.refused_in_a_row = 0;
        Ok(true)
    }

    /// Reads and handles a text frame. A command that waits for something
    /// is given back, to be run with [`Conn::dispatch`]; every other is
    /// handled here, without waiting.
    fn on_text(&mut self, text: &str) -> Result<Option<ClientMsg>, Closing> {
        // The common case, a well-formed message, is read in one pass; any
        // other goes the long way (`read`), which can say what is wrong with it.
        let unread = match ClientMsg::from_text(text) {
            Ok(msg) => {
                if !self.admit(&msg.id)? {
                    return Ok(None);
                }
                return Ok(self.handle_msg(msg));
            }
            // Parsed before the rate check (a frame is at most max_frame_bytes),
            // so that even a rate_limited refusal echoes the request's id.
            Err(e) => Unread::new(text, &e),
        };
        if !self.admit(&unread.id)? {
            return Ok(None);
        }
        let id = unread.id.clone();
        match unread.diagnose() {
            Ok(msg) => Ok(self.handle_msg(msg)),
            Err(Malformed { code, message }) => {
                self.error(id, code, message);
                Ok(None)
            }
        }
    }

    fn handle_msg(&mut self, msg: ClientMsg) -> Option<ClientMsg> {
        if !self.hello && !matches!(msg.body, ClientBody::Hello { .. }) {
            self.error(
                msg.id,
                ErrorCode::BadRequest,
                "say hello first: {\"type\": \"hello\", \"version\": 1}",
            );
            return None;
        }
        self.dispatch_now(msg)
    }

    /// Handles a command that needs no waiting (moves and the other room
    /// and tournament commands: each is one message to a queue); gives back
    /// any other.
    fn dispatch_now(&mut self, msg: ClientMsg) -> Option<ClientMsg> {
        if room_key(&msg.body).is_some() || tournament_key(&msg.body).is_some() {
            // One another node holds: its command goes there, which waits.
            if self.is_remote(&msg.body) {
                return Some(msg);
            }
            // Only a connection that has used the bus may have lost a room
            // that came here.
            if self.owners.is_some() && self.lost_here(&msg) {
                return None;
            }
            match self.request(msg) {
                Ok(request) => request::deliver(&self.shared, &self.outbox, request, self.received),
                Err(refusal) => self.reply(*refusal),
            }
            return None;
        }
        let ClientMsg { id, body } = msg;
        match body {
            // In a cluster, the token is read again first (another node may
            // have made or revoked it), which waits.
            ClientBody::Hello { token: Some(_), .. } if self.shared.accounts.clustered() => {
                return Some(ClientMsg { id, body })
            }
            ClientBody::Hello {
                version,
                name,
                token,
            } => self.greet(id, version, name, token),
            ClientBody::Ping => self.reply(ServerMsg::answer(id, ServerBody::Pong)),
            body => return Some(ClientMsg { id, body }),
        }
        None
    }

    /// A move (resign, abort, leave) for a room held here now, whose events
    /// this connection had from another node that stopped without handing
    /// it over (`Bus::lost_here`): refused, not carried out (its ack would
    /// come with no event), and the connection dropped, to resume.
    fn lost_here(&self, msg: &ClientMsg) -> bool {
        let (ClientBody::Move(Play { room, .. })
        | ClientBody::Resign { room, .. }
        | ClientBody::Abort { room, .. }
        | ClientBody::Leave { room }) = &msg.body
        else {
            return false;
        };
        let Some(bus) = &self.shared.bus else {
            return false;
        };
        let Some((room_id, _)) = self.shared.lobby.find(room) else {
            return false;
        };
        let Some(from) = bus.lost_here(&self.outbox, &room_id) else {
            return false;
        };
        self.reply(Unsent::Stopped(from).answer(msg.id.clone(), room, false));
        true
    }

    /// Answers `hello`: `welcome`, or why not.
    fn greet(
        &mut self,
        id: Option<RequestId>,
        version: u32,
        name: Option<String>,
        token: Option<String>,
    ) {
        if version != PROTOCOL_VERSION {
            self.error(
                id,
                ErrorCode::BadVersion,
                format!("this server speaks protocol version {PROTOCOL_VERSION}, not {version}"),
            );
            return;
        }
        let (account, token) = match self.hello(name, token) {
            Ok(Some((account, token))) => (Some(account), Some(token)),
            Ok(None) => (None, None),
            Err(refused) => return self.reply(refused.answer(id)),
        };
        self.hello = true;
        self.reply(ServerMsg::answer(
            id,
            ServerBody::Welcome {
                version: PROTOCOL_VERSION,
                server: format!("grundy-server {}", env!("CARGO_PKG_VERSION")),
                limits: self.shared.config.limits.clone(),
                name: self.player.name.clone().unwrap_or_default(),
                account,
                token,
            },
        ));
    }

    /// Whether `body` is a command for a room or tournament this node does
    /// not hold, with a bus to reach the node that does.
    fn is_remote(&self, body: &ClientBody) -> bool {
        self.shared.bus.is_some()
            && (room_key(body).is_some_and(|key| !self.shared.lobby.holds(key))
                || tournament_key(body)
                    .is_some_and(|key| self.shared.tournaments.find(key).is_none()))
    }

    /// Handles any command, those that wait for something among them.
    async fn dispatch(&mut self, msg: ClientMsg) {
        if self.is_remote(&msg.body) {
            return self.forward(msg).await;
        }
        match msg.body {
            ClientBody::CreateAccount { .. }
            | ClientBody::Login { .. }
            | ClientBody::CreateToken { .. }
            | ClientBody::ListTokens
            | ClientBody::RevokeToken { .. }
            | ClientBody::ChangePassword { .. } => return self.dispatch_account(msg).await,
            ClientBody::CreateTournament { .. }
            | ClientBody::ListTournaments
            | ClientBody::GetTournament { .. }
            | ClientBody::GetRatings { .. } => return self.dispatch_tournament(msg).await,
            _ => {}
        }
        let ClientMsg { id, body } = msg;
        match body {
            ClientBody::Hello {
                version,
                name,
                token,
            } => {
                if let Some(token) = &token {
                    if let Err(refused) = self.shared.accounts.recall_token(token).await {
                        return self.reply(refused.answer(id));
                    }
                }
                self.greet(id, version, name, token)
            }
            ClientBody::ListRooms { limit, offset } => {
                let limit = limit.unwrap_or(MAX_LISTED_ROOMS);
                if !(1..=MAX_LISTED_ROOMS).contains(&limit) {
                    return self.error(
                        id,
                        ErrorCode::BadRequest,
                        format!("limit: must be 1 to {MAX_LISTED_ROOMS}, got {limit}"),
                    );
                }
                let list = self.shared.lobby.list(offset.unwrap_or(0), limit as usize);
                let (rooms, total) = list.await;
                self.reply(ServerMsg::answer(id, ServerBody::Rooms { rooms, total }));
            }
            ClientBody::CreateRoom {
                spec,
                random,
                clock,
                listed,
                seat,
                bot,
                hints,
                rated,
            } => {
                if let Err(refused) = self.may(Scope::Play, "create_room") {
                    return self.reply(refused.answer(id));
                }
                let request = NewRoom {
                    spec,
                    random,
                    clock,
                    listed,
                    seat,
                    bot,
                    hints,
                    rated,
                };
                self.create_room(id, request).await
            }
            ClientBody::GetMatch { room } => {
                let store = self.shared.store.clone();
                let key = self
                    .shared
                    .lobby
                    .find(&room)
                    .map_or_else(|| room.clone(), |(id, _)| id);
                let read = self.shared.store_reads.run(move || store.record(&key));
                match read.await {
                    Ok(Ok(Some(record))) => {
                        self.reply(ServerMsg::answer(id, ServerBody::Match { record }))
                    }
                    Ok(Ok(None)) => {
                        self.error(id, ErrorCode::UnknownRoom, format!("no match {room:?}"))
                    }
                    Ok(Err(e)) => {
                        tracing::error!("reading a match record failed: {e}");
                        self.error(id, ErrorCode::Internal, "could not read the match record")
                    }
                    Err(refused) => self.reply(refused.answer(id)),
                }
            }
            // The rest never waits.
            body => {
                let _ = self.dispatch_now(ClientMsg { id, body });
            }
        }
    }

    async fn create_room(&mut self, id: Option<RequestId>, request: NewRoom) {
        let NewRoom {
            spec,
            random,
            clock,
            listed,
            seat,
            bot,
            hints,
            rated,
        } = request;
        let bot = match bot.as_deref().map(str::parse::<Level>) {
            None => None,
            Some(Ok(level)) => Some(level),
            Some(Err(e)) => return self.error(id, ErrorCode::BadRequest, format!("bot: {e}")),
        };
        if let Some(Err(why)) = clock.as_ref().map(check_clock) {
            return self.error(id, ErrorCode::BadRequest, why);
        }
        if hints && clock.is_some() {
            // A clock makes the game a contest: hints are for casual play.
            return self.error(
                id,
                ErrorCode::BadRequest,
                "hints: only an untimed room may allow hints",
            );
        }
        if let Err((code, why)) = check_rated(rated, &self.player, bot.is_some(), hints) {
            return self.error(id, code, why);
        }
        if place::over_limit::<place::Room>(&self.shared, &self.outbox, &id) {
            return;
        }
        // Taken before the spec is built: a refused address costs no build.
        let slot = match self.shared.lobby.open_slot(self.address) {
            Ok(slot) => slot,
            Err(limit) => {
                return self.reply(ServerMsg::answer(
                    id,
                    ServerBody::Error {
                        code: ErrorCode::LimitReached,
                        message: format!(
                            "your address holds {limit} rooms with unfinished matches, \
                             its limit (open_rooms_per_ip)"
                        ),
                        retry_after_ms: None,
                        limit: Some("open_rooms_per_ip".into()),
                    },
                ))
            }
        };
        // Drawing a random start and building a position can build a table
        // (up to a couple of seconds for the largest specs): off the reactor,
        // in the spec builds' pool.
        // A game without tables (Nim and the like) is read in time linear in
        // its spec, like the message itself: on the spot.
        let max_spec = self.shared.config.limits.max_frame_bytes;
        let build_spec = move |spec: Value| match Position::from_spec(&spec) {
            Ok(start) => Ok((spec, start)),
            Err(e) => Err(format!("spec refused: {e}")),
        };
        let built = match (spec, random) {
            (Some(spec), None)
                if !grundy_protocol::games::builds_tables(
                    spec.get("game").and_then(Value::as_str),
                ) =>
            {
                Ok(build_spec(spec))
            }
            (Some(spec), None) => self.shared.spec_builds.run(move || build_spec(spec)).await,
            (None, Some(r)) if !grundy_protocol::games::builds_tables(Some(&r.family)) => {
                Ok(random_start(&r, max_spec))
            }
            (None, Some(r)) => {
                self.shared
                    .spec_builds
                    .run(move || random_start(&r, max_spec))
                    .await
            }
            _ => {
                return self.error(
                    id,
                    ErrorCode::BadRequest,
                    "give exactly one of spec and random",
                )
            }
        };
        let (spec, start) = match built {
            Ok(Ok(built)) => built,
            Ok(Err(message)) => return self.error(id, ErrorCode::BadSpec, message),
            Err(refused) => return self.reply(refused.answer(id)),
        };
        let seat = seat.unwrap_or(0);
        if seat > 1 {
            return self.error(
                id,
                ErrorCode::BadRequest,
                format!("seat must be 0 or 1, not {seat}"),
            );
        }
        let setup = RoomSetup {
            spec,
            start,
            clock,
            listed,
            bot,
            hints,
            rated,
            tournament: None,
            slot,
        };
        match self.shared.lobby.create(setup).await {
            Ok((room_id, tx)) => {
                self.outbox.rooms.enter(&room_id);
                let cmd = RoomCmd::Join {
                    outbox: self.outbox.clone(),
                    id: id.clone(),
                    player: (*self.player).clone(),
                    seat: Some(seat),
                    tie: self.session.as_ref().map(|s| s.token.clone()),
                };
                if tx.send(cmd).await.is_err() {
                    return self.error(id, ErrorCode::Internal, "the new room closed at once");
                }
                if let Some(level) = bot {
                    // Reserved after the creator's join (queued first): the
                    // house takes the other seat.
                    self.shared.house.spawn(HouseSeat {
                        room: room_id,
                        seat: 1 - seat,
                        level,
                        reserved: false,
                    });
                }
            }
            Err((code, message)) => self.error(id, code, message),
        }
    }
}

/// A random start's spec and position, or why not (the whole message).
/// Held to the size of a spec a client could send (`max_frame_bytes`), so
/// that every answer that carries it fits.
fn random_start(
    r: &grundy_protocol::wire::RandomStart,
    max_bytes: usize,
) -> Result<(Value, Position), String> {
    use grundy_protocol::random;
    let spec = random::random_spec(&r.family, r.seed, r.size)
        .map_err(|e| format!("random.{}: {}", random::request_field(&e), e.message))?;
    let bytes = serde_json::to_string(&spec).map_or(usize::MAX, |t| t.len());
    if bytes > max_bytes {
        return Err(format!(
            "random.size: this start is {bytes} bytes of JSON, more than a client may send \
             (max_frame_bytes, {max_bytes}): ask for a smaller size"
        ));
    }
    let start = Position::from_spec(&spec).map_err(|e| format!("spec refused: {e}"))?;
    Ok((spec, start))
}
