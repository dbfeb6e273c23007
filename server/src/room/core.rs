//! A match's rules, apart from sockets, clocks and the store.
//!
//! [`Core`] is the state a room's records build (its seats with their secret
//! tokens' hashes, and the [`MatchState`] its events build). [`Core::decide`] turns
//! what someone asks (an [`Intent`]) into the records that would make it
//! happen, or a refusal, without changing anything; [`Core::apply`] is the
//! only way the state changes. The room's task (`room/mod.rs`) decides,
//! makes the records durable, applies them, and tells everyone; a restart
//! replays the stored records through the same `apply`, a move as the event
//! it was stored as (live, a [`Played`] move's position is taken as decided,
//! not played again).

use std::fmt::Write as _;
use std::time::Instant;

use grundy_protocol::match_state::{FollowError, MatchState};
use grundy_protocol::wire::{EndReason, ErrorCode, Event, EventBody, MatchResult, WithdrawReason};
use grundy_protocol::{Outcome, Position, Rules, Status, Strategy};
use serde_json::value::RawValue;
use serde_json::Value;

use super::clock::{self, Timing};
use crate::config::Config;
use crate::player::{AccountId, Player};
use crate::refusal::{refuse, Refusal};
use crate::secret::{constant_time_eq, matches_hash};

/// What a room's log is made of: the seats given out (with their secret
/// tokens' hashes, kept apart from the events anyone can read) and the
/// events. A seat written again (a fresh token) replaces the first.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Seat {
        seat: u8,
        player: Player,
        /// The seat token's hash (`secret::hash`): the token itself is given
        /// to its holder only, and kept nowhere.
        token: String,
        /// Reserved for the server's house bot.
        house: bool,
        /// A tournament game's seat: the hash of its player's tournament
        /// token, which acts for the seat too (a tournament that restarted,
        /// or whose game another node holds, tells a returning player that
        /// token rather than a seat token it no longer knows).
        player_token: Option<String>,
        /// The account token (its id) the seat was taken or last resumed
        /// with by account, if any: the seat's token acts only while that
        /// account token lives (the room asks `accounts`), so that revoking
        /// it, or a new password, also takes back the seats it took.
        tie: Option<String>,
    },
    Event(Event),
    /// A move decided here, written as its `moved` event.
    Moved(Played),
}

/// A move decided here, with where it leads: the room writes its `moved`
/// event from it without a `Value` tree, and [`Core::apply`] takes the
/// position from it rather than reading and playing the move again. Stored
/// and sent as that event, and read back as one.
#[derive(Debug, Clone)]
pub struct Played {
    pub seq: u64,
    pub seat: u8,
    /// The move's JSON text (`Move::to_json_text`).
    pub mv: Box<RawValue>,
    /// Both banks after it.
    pub clocks_ms: [u64; 2],
    /// The position after it as JSON text (`Rules::write_json`), unless it
    /// is larger than a `moved` event may carry.
    pub position: Option<String>,
    /// The position after it.
    pub next: Position,
}

impl Played {
    /// The `moved` event's JSON text: what `serde_json` makes of
    /// [`Played::event`] (a test holds them equal).
    pub fn json(&self) -> String {
        let (mv, position) = (self.mv.get(), self.position.as_deref().unwrap_or("null"));
        let mut out = String::with_capacity(96 + mv.len() + position.len());
        let [a, b] = self.clocks_ms;
        // Writing to a `String` cannot fail.
        let _ = write!(
            out,
            r#"{{"seq":{},"kind":"moved","seat":{},"move":{mv},"clocks_ms":[{a},{b}],"position":{position}}}"#,
            self.seq, self.seat,
        );
        out
    }

    /// The event, as a client or a restart reads it (tests compare it with
    /// the text; the server only ever writes the text).
    #[cfg(test)]
    pub fn event(&self) -> Event {
        let value = |text: &str| serde_json::from_str(text).unwrap_or(Value::Null);
        Event {
            seq: self.seq,
            body: EventBody::Moved {
                seat: self.seat,
                mv: value(self.mv.get()),
                clocks_ms: self.clocks_ms,
                position: self.position.as_deref().map_or(Value::Null, value),
            },
        }
    }
}

impl PartialEq for Played {
    fn eq(&self, other: &Played) -> bool {
        self.seq == other.seq
            && self.seat == other.seat
            && self.mv.get() == other.mv.get()
            && self.clocks_ms == other.clocks_ms
            && self.position == other.position
            && self.next == other.next
    }
}

/// What someone asks of a match.
#[derive(Debug, Clone)]
pub enum Intent<'a> {
    /// A player asks for a seat (any free one when `seat` is None). `token`
    /// is the hash of the fresh secret the seat gets.
    Join {
        player: Player,
        seat: Option<u8>,
        token: String,
        /// The joining connection's account token id (None for a guest).
        tie: Option<String>,
    },
    /// The server seats a player with no connection yet: a tournament's
    /// (with the hash of its tournament token, `player_token`), or its house
    /// bot (`house`). `token`: the hash of the seat's fresh secret.
    Reserve {
        player: Player,
        seat: u8,
        house: bool,
        token: String,
        player_token: Option<String>,
    },
    /// A seat's holder comes (back) as `by` says; `here`: the seats someone
    /// holds now. `fresh`: the hash of a new secret, the seat's token from
    /// now on when resumed by account (the old one is known to nobody).
    /// `tie`: the resuming connection's account token id, which the seat is
    /// tied to from now on when resumed by account.
    Resume {
        by: Resumer<'a>,
        here: [bool; 2],
        fresh: String,
        tie: Option<String>,
    },
    /// A move, read from its connection at `received`.
    Move {
        token: &'a str,
        mv: &'a Value,
        received: Instant,
    },
    Resign {
        token: &'a str,
    },
    Abort {
        token: &'a str,
    },
    /// The server's house bot, back after a restart, gets a fresh token for
    /// its reserved seat (`fresh`: its hash): only hashes were kept.
    Rekey {
        seat: u8,
        fresh: String,
    },
    /// A tournament resigns for a player who withdrew.
    ResignSeat {
        seat: u8,
    },
    /// The last connection holding `seat` went.
    Left {
        seat: u8,
    },
    /// A deadline may have come: nobody here since `abandoned_since`, or a
    /// clock ran out.
    Deadline {
        abandoned_since: Option<Instant>,
    },
}

/// How a seat's holder proves it holds it.
#[derive(Debug, Clone, Copy)]
pub enum Resumer<'a> {
    /// The seat token (or a tournament game's player token).
    Token(&'a str),
    /// The account that took the seat.
    Account(AccountId),
    /// The seat token's hash, as a room moving to another node of the
    /// cluster hands over its seated clients (between nodes only).
    Kept(&'a str),
}

/// What a player asks of a rematch (`offer_rematch`, `accept_rematch`,
/// `decline_rematch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RematchAsk {
    Offer,
    Accept,
    Decline,
}

/// What a rematch command comes to ([`Core::decide_rematch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RematchStep {
    /// The seat offers: everyone is told.
    Offered,
    /// The seat's offer stands already: nothing changes.
    AlreadyOffered,
    /// Both agree (or the house bot, which accepts at once): the new room is
    /// made, counted against the address of `offerer`'s offer.
    Agreed { offerer: u8 },
    /// The offer of `offerer` is void.
    Withdrawn { offerer: u8, reason: WithdrawReason },
}

/// What a decision records, and for whom.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decision {
    /// The seat the command acts for (a join's new seat, a resume's seat).
    pub seat: Option<u8>,
    /// To make durable, then apply, in order.
    pub records: Vec<Record>,
    /// The command itself is refused although its records stand: a move read
    /// after its flag fell ends the match on time.
    pub refused: Option<Refusal>,
}

impl Decision {
    /// The sequence number of the first event, the one a command's `ack` names.
    pub fn first_seq(&self) -> Option<u64> {
        self.records.iter().find_map(|r| match r {
            Record::Event(e) => Some(e.seq),
            Record::Moved(p) => Some(p.seq),
            Record::Seat { .. } => None,
        })
    }
}

/// The limits a match is played under (from the server's configuration).
#[derive(Debug, Clone, Copy)]
pub struct MatchRules {
    /// A tournament's game: its players are seated by the tournament, a
    /// no-show loses rather than calling it off, and nobody may abort.
    pub tournament: bool,
    /// A rated casual game: only accounts take its seats (two different
    /// ones), and every end with a winner is rated, so a no-show loses, and
    /// so does an abandoned game once each side has moved.
    pub rated: bool,
    pub max_moves: usize,
    pub max_record_bytes: usize,
    /// A `moved` event carries the position only up to this size.
    pub max_event_position_bytes: usize,
    pub timing: Timing,
}

impl MatchRules {
    pub fn new(config: &Config, tournament: bool, rated: bool) -> MatchRules {
        MatchRules {
            tournament,
            rated,
            max_moves: config.limits.max_moves as usize,
            max_record_bytes: config.limits.max_record_bytes,
            max_event_position_bytes: config.max_event_position_bytes,
            timing: Timing {
                no_show: config.no_show,
                abandon: config.abandon,
                idle: config.idle_room,
            },
        }
    }
}

#[derive(Debug, Clone)]
pub struct Core {
    pub game: MatchState,
    /// The seats' tokens' hashes.
    tokens: [Option<String>; 2],
    /// A tournament game's seats: the hashes of their players' tournament tokens.
    player_tokens: [Option<String>; 2],
    /// The seats the server's house bot holds.
    house: [bool; 2],
    /// The accounts that took the seats, if any.
    accounts: [Option<AccountId>; 2],
    /// The account tokens (ids) the seats are tied to (`Record::Seat::tie`).
    ties: [Option<String>; 2],
    /// When the first seat was taken (after a restart: the restore, like
    /// every instant `apply` is given): an open room's idle wait counts
    /// from it.
    opened_at: Option<Instant>,
    pub rules: MatchRules,
    /// The seat whose rematch offer stands, once the match has ended. Kept
    /// in memory only, never recorded: an offer is void as soon as either
    /// player leaves the room, and a restart (or a room moving to another
    /// node) disconnects everyone, so no offer could outlive either. What
    /// an agreement makes, the new room, is durable by the lobby's own path.
    pub rematch: Option<u8>,
}

/// A seat token that acts for no seat of the room.
fn not_a_seat_token<T>() -> Result<T, Refusal> {
    refuse(
        ErrorCode::Unauthorized,
        "that seat token is not valid in this room",
    )
}

impl Core {
    pub fn new(
        spec: Value,
        start: Position,
        clock: Option<grundy_protocol::wire::Clock>,
        rules: MatchRules,
    ) -> Core {
        Core {
            game: MatchState::new(spec, start, clock),
            tokens: [None, None],
            player_tokens: [None, None],
            house: [false; 2],
            accounts: [None, None],
            ties: [None, None],
            opened_at: None,
            rules,
            rematch: None,
        }
    }

    /// The player who holds `seat` (as its seat record said).
    pub fn player(&self, seat: u8) -> Player {
        let s = seat as usize & 1;
        Player {
            name: self.game.seats[s].name.clone(),
            kind: self.game.seats[s].player_kind,
            account: self.accounts[s],
        }
    }

    /// What a rematch command of the seat `token` names comes to, with that
    /// seat; `here`: the seats someone holds now; `house`: the other seat is
    /// the house bot's, which accepts every offer at once. Changes nothing
    /// (the room sets [`Core::rematch`] from the step).
    pub fn decide_rematch(
        &self,
        token: &str,
        ask: RematchAsk,
        here: [bool; 2],
        house: bool,
    ) -> Result<(u8, RematchStep), Refusal> {
        let seat = self.seat_of(token).map_err(|(code, message)| {
            (
                code,
                format!("{message}: only the match's players may offer or answer a rematch"),
            )
        })?;
        if self.rules.tournament {
            return refuse(
                ErrorCode::BadRequest,
                "this is a tournament game: the tournament pairs its games, so there is no rematch",
            );
        }
        if !self.finished() {
            return refuse(
                ErrorCode::BadRequest,
                "the match is not over: a rematch is offered once it has ended",
            );
        }
        let other = 1 - seat;
        let step = match (ask, self.rematch) {
            (RematchAsk::Offer | RematchAsk::Accept, Some(offerer)) if offerer == other => {
                RematchStep::Agreed { offerer }
            }
            (RematchAsk::Offer, Some(_)) => RematchStep::AlreadyOffered,
            (RematchAsk::Offer, None) if house => RematchStep::Agreed { offerer: seat },
            (RematchAsk::Offer, None) if !here[other as usize] => {
                let name = self.game.seats[other as usize].name.as_deref();
                return refuse(
                    ErrorCode::BadRequest,
                    format!(
                        "{} has left the room: there is nobody to offer a rematch to",
                        name.unwrap_or("your opponent")
                    ),
                );
            }
            (RematchAsk::Offer, None) => RematchStep::Offered,
            (RematchAsk::Accept, None) if house => RematchStep::Agreed { offerer: seat },
            (RematchAsk::Accept, Some(_)) => {
                return refuse(
                    ErrorCode::BadRequest,
                    "the rematch offer is your own: your opponent accepts it",
                )
            }
            (RematchAsk::Accept, None) => {
                return refuse(
                    ErrorCode::BadRequest,
                    "there is no rematch offer to accept: it was never made, or it was \
                     withdrawn or declined (offer one yourself with offer_rematch)",
                )
            }
            (RematchAsk::Decline, Some(offerer)) => RematchStep::Withdrawn {
                offerer,
                reason: if offerer == seat {
                    WithdrawReason::Withdrawn
                } else {
                    WithdrawReason::Declined
                },
            },
            (RematchAsk::Decline, None) => {
                return refuse(
                    ErrorCode::BadRequest,
                    "there is no rematch offer to decline",
                )
            }
        };
        Ok((seat, step))
    }

    /// Records a record made durable; `at` is when it took effect (live: now;
    /// on restore: the restore, so downtime is charged to nobody).
    pub fn apply(&mut self, record: &Record, at: Instant) -> Result<(), FollowError> {
        match record {
            Record::Seat {
                seat,
                player,
                token,
                house,
                player_token,
                tie,
            } => {
                let s = *seat as usize;
                self.opened_at.get_or_insert(at);
                if let Some(t) = self.tokens.get_mut(s) {
                    *t = Some(token.clone());
                    self.player_tokens[s] = player_token.clone();
                    self.house[s] = *house;
                    self.accounts[s] = player.account;
                    self.ties[s] = tie.clone();
                    self.game.seats[s].name = player.name.clone();
                    self.game.seats[s].player_kind = player.kind;
                }
                Ok(())
            }
            Record::Event(event) => self.game.apply(event, at).map(|_| ()),
            Record::Moved(p) => self
                .game
                .apply_played(p.seq, &p.next, &p.mv, p.clocks_ms, at)
                .map(|_| ()),
        }
    }

    pub fn finished(&self) -> bool {
        self.game.result.is_some()
    }

    pub fn seated(&self, seat: u8) -> bool {
        self.tokens.get(seat as usize).is_some_and(|t| t.is_some())
    }

    /// The accounts that took the seats.
    pub fn accounts(&self) -> [Option<AccountId>; 2] {
        self.accounts
    }

    /// The account token (its id) a seat is tied to: its seat token acts
    /// only while that one lives.
    pub fn tie(&self, seat: u8) -> Option<&str> {
        self.ties.get(seat as usize)?.as_deref()
    }

    /// The hash of a seat's token.
    pub fn kept_token(&self, seat: u8) -> Option<&str> {
        self.tokens.get(seat as usize)?.as_deref()
    }

    /// The seat a token acts for: the seat's token, or in a tournament game
    /// its player's tournament token.
    pub fn seat_of(&self, token: &str) -> Result<u8, Refusal> {
        if token.is_empty() {
            return refuse(ErrorCode::Unauthorized, "a seat token is required");
        }
        (0..2u8)
            .find(|&s| {
                let s = s as usize;
                [&self.tokens[s], &self.player_tokens[s]]
                    .into_iter()
                    .flatten()
                    .any(|kept| matches_hash(token, kept))
            })
            .map_or_else(not_a_seat_token, Ok)
    }

    /// The seat a resume acts for: by its seat token, by the account that
    /// took it, or by its token's hash.
    fn seat_resumed(&self, by: Resumer<'_>) -> Result<u8, Refusal> {
        match by {
            Resumer::Account(account) => (0..2u8)
                .find(|&s| self.accounts[s as usize] == Some(account))
                .map_or_else(
                    || {
                        refuse(
                            ErrorCode::Unauthorized,
                            "your account holds no seat in this room",
                        )
                    },
                    Ok,
                ),
            Resumer::Token(token) => self.seat_of(token),
            Resumer::Kept(kept) => (0..2u8)
                .find(|&s| {
                    self.kept_token(s)
                        .is_some_and(|t| constant_time_eq(t.as_bytes(), kept.as_bytes()))
                })
                .map_or_else(not_a_seat_token, Ok),
        }
    }

    /// When the match ends by itself unless something happens first.
    pub fn deadline(&self, abandoned_since: Option<Instant>) -> Option<(Instant, EndReason)> {
        clock::deadline(
            &self.game,
            abandoned_since,
            self.opened_at,
            &self.rules.timing,
        )
    }

    /// Whether the room counts as abandoned with these seats held: before the
    /// start (or in a timed match) nobody holds a seat; once an untimed match
    /// runs, the player to move is gone (a house bot waiting forever for a
    /// person who left must not keep the room alive).
    pub fn abandoned(&self, here: [bool; 2]) -> bool {
        if self.game.started && self.game.clock.is_none() {
            !here[self.game.next_seat() as usize]
        } else {
            !here.iter().any(|&h| h)
        }
    }

    /// The records that would carry out `intent` at `now`, or why not.
    pub fn decide(&self, intent: Intent<'_>, now: Instant) -> Result<Decision, Refusal> {
        match intent {
            Intent::Join {
                player,
                seat,
                token,
                tie,
            } => {
                if self.rules.tournament {
                    return refuse(
                        ErrorCode::RoomFull,
                        "this is a tournament game: its players are seated by the tournament",
                    );
                }
                self.take_seat(player, seat, token, false, None, tie)
            }
            Intent::Reserve {
                player,
                seat,
                house,
                token,
                player_token,
            } => self.take_seat(player, Some(seat), token, house, player_token, None),
            Intent::Resume {
                by,
                here,
                fresh,
                tie,
            } => {
                let seat = self.seat_resumed(by)?;
                let mut decision = Decision {
                    seat: Some(seat),
                    ..Decision::default()
                };
                if let Resumer::Account(_) = by {
                    // Only the hash of the seat's token is kept: the account
                    // gets a new one, and the old one stops acting. The seat
                    // is tied to the account token it came back with (an
                    // account whose token was revoked logs in again).
                    decision.records.push(self.rekeyed(seat, fresh, tie));
                }
                if !here[seat as usize] && !self.finished() {
                    decision.records.extend(self.events([EventBody::Presence {
                        seat,
                        connected: true,
                    }]));
                }
                Ok(decision)
            }
            Intent::Move {
                token,
                mv,
                received,
            } => self.play(token, mv, received),
            Intent::Resign { token } => {
                let seat = self.seat_of(token)?;
                self.check_running()?;
                let result = if self.game.started {
                    MatchResult {
                        winner: Some(1 - seat),
                        reason: EndReason::Resign,
                    }
                } else {
                    // Nobody to lose to yet: resigning an unstarted match calls it off.
                    MatchResult {
                        winner: None,
                        reason: EndReason::Abort,
                    }
                };
                Ok(self.end(result))
            }
            Intent::Abort { token } => {
                let seat = self.seat_of(token)?;
                self.check_running()?;
                if self.rules.tournament {
                    return refuse(
                        ErrorCode::TooLate,
                        "a tournament game cannot be called off; resign instead (or withdraw from the tournament)",
                    );
                }
                // A player may call the match off until they have made their first move.
                if self.game.plies() > seat as usize {
                    return refuse(
                        ErrorCode::TooLate,
                        "a match can be aborted only before your first move; resign instead",
                    );
                }
                Ok(self.end(MatchResult {
                    winner: None,
                    reason: EndReason::Abort,
                }))
            }
            Intent::Rekey { seat, fresh } => {
                if !self.house.get(seat as usize).is_some_and(|&h| h) {
                    return refuse(
                        ErrorCode::Unauthorized,
                        format!("seat {seat} is not the house's"),
                    );
                }
                Ok(Decision {
                    seat: Some(seat),
                    records: vec![self.rekeyed(seat, fresh, self.ties[seat as usize].clone())],
                    refused: None,
                })
            }
            Intent::ResignSeat { seat } => {
                if self.finished() || seat > 1 {
                    return Ok(Decision::default());
                }
                Ok(self.end(MatchResult {
                    winner: Some(1 - seat),
                    reason: EndReason::Resign,
                }))
            }
            Intent::Left { seat } => {
                if self.finished() || seat > 1 {
                    return Ok(Decision::default());
                }
                Ok(Decision {
                    records: self.events([EventBody::Presence {
                        seat,
                        connected: false,
                    }]),
                    ..Decision::default()
                })
            }
            Intent::Deadline { abandoned_since } => match self.deadline(abandoned_since) {
                Some((at, reason)) if at <= now => Ok(self.end(self.deadline_result(reason))),
                _ => Ok(Decision::default()),
            },
        }
    }

    /// Seat `seat` (taken) again as it is, with the token whose hash is
    /// `fresh`, tied to the account token `tie`.
    fn rekeyed(&self, seat: u8, fresh: String, tie: Option<String>) -> Record {
        let s = seat as usize;
        Record::Seat {
            seat,
            player: Player {
                name: self.game.seats[s].name.clone(),
                kind: self.game.seats[s].player_kind,
                account: self.accounts[s],
            },
            token: fresh,
            house: self.house[s],
            player_token: self.player_tokens[s].clone(),
            tie,
        }
    }

    /// Seats a player and starts the match once both seats are taken.
    fn take_seat(
        &self,
        player: Player,
        seat: Option<u8>,
        token: String,
        house: bool,
        player_token: Option<String>,
        tie: Option<String>,
    ) -> Result<Decision, Refusal> {
        if self.finished() {
            return refuse(ErrorCode::MatchOver, "the match is over; watch it instead");
        }
        if self.rules.rated && !house {
            self.check_rated_player(&player)?;
        }
        let seat = match seat {
            Some(s @ (0 | 1)) if !self.seated(s) => s,
            Some(s @ (0 | 1)) => return refuse(ErrorCode::RoomFull, format!("seat {s} is taken")),
            Some(s) => {
                return refuse(
                    ErrorCode::BadRequest,
                    format!("seat must be 0 or 1, not {s}"),
                )
            }
            None => match (0..2u8).find(|&s| !self.seated(s)) {
                Some(s) => s,
                None => return refuse(ErrorCode::RoomFull, "both seats are taken"),
            },
        };
        let mut bodies = vec![EventBody::Seated {
            seat,
            name: player.name.clone(),
            player_kind: player.kind,
        }];
        if self.seated(1 - seat) {
            bodies.push(EventBody::Started);
        }
        let mut records = vec![Record::Seat {
            seat,
            player,
            token,
            house,
            player_token,
            tie,
        }];
        records.extend(self.events(bodies));
        Ok(Decision {
            seat: Some(seat),
            records,
            refused: None,
        })
    }

    /// A rated game is between two accounts: a guest, or the account that
    /// holds the other seat, is refused.
    fn check_rated_player(&self, player: &Player) -> Result<(), Refusal> {
        let Some(account) = player.account else {
            return refuse(
                ErrorCode::AccountRequired,
                "this room is rated: only an account plays a rated game (say hello with a token)",
            );
        };
        if self.accounts.contains(&Some(account)) {
            return refuse(
                ErrorCode::BadRequest,
                "this room is rated: an account cannot play a rated game against itself",
            );
        }
        Ok(())
    }

    fn play(&self, token: &str, mv: &Value, received: Instant) -> Result<Decision, Refusal> {
        let seat = self.seat_of(token)?;
        self.check_running()?;
        if !self.game.started {
            return refuse(
                ErrorCode::NotYourTurn,
                "the match has not started: waiting for an opponent",
            );
        }
        if seat != self.game.next_seat() {
            return refuse(ErrorCode::NotYourTurn, "it is your opponent's turn");
        }
        let m = self
            .game
            .position
            .parse_move(mv)
            .map_err(|e| (ErrorCode::IllegalMove, e.to_string()))?;
        let mut next = self.game.position.clone();
        next.play(&m)
            .map_err(|e| (ErrorCode::IllegalMove, e.to_string()))?;
        // A move read after the flag fell (or, for a first move, after the
        // no-show limit) loses; one read in time is charged up to its
        // arrival, however long it then waited in the room's queue.
        if let Some((at, reason)) = clock::clock_deadline(&self.game, &self.rules.timing) {
            if received >= at {
                let mut decision = self.end(self.deadline_result(reason));
                decision.refused = Some((
                    ErrorCode::MatchOver,
                    match reason {
                        EndReason::NoShow => "your first move came too late (no-show)",
                        _ => "your time ran out",
                    }
                    .to_string(),
                ));
                return Ok(decision);
            }
        }
        let mut clocks = self.game.clocks_at(received);
        if let Some(clock) = self.game.clock {
            clocks[seat as usize] += clock.increment_ms;
        }
        let canonical = m.to_json_text();
        let plies = self.game.plies() + 1;
        let moves_bytes = self.game.moves_bytes() + canonical.get().len();
        let position = position_text(&next, self.rules.max_event_position_bytes);
        let to_move = 1 - seat;
        let end = if let Status::Over { to_move_wins } = next.status() {
            let winner = if to_move_wins { to_move } else { seat };
            Some((winner, EndReason::Rules))
        } else if plies >= self.rules.max_moves || moves_bytes >= self.rules.max_record_bytes {
            // Long enough: the theory decides, as perfect play from here would.
            let winner = match next.outcome() {
                Outcome::N => to_move,
                Outcome::P => seat,
            };
            Some((winner, EndReason::MoveLimit))
        } else {
            None
        };
        let seq = self.game.seq + 1;
        let mut records = vec![Record::Moved(Played {
            seq,
            seat,
            mv: canonical,
            clocks_ms: clocks,
            position,
            next,
        })];
        if let Some((winner, reason)) = end {
            // The move and the end it causes are one decision, recorded in
            // one write (`WriteOp::All`): a crash keeps both or neither.
            records.push(Record::Event(Event {
                seq: seq + 1,
                body: EventBody::Ended {
                    result: MatchResult {
                        winner: Some(winner),
                        reason,
                    },
                },
            }));
        }
        Ok(Decision {
            seat: Some(seat),
            records,
            refused: None,
        })
    }

    fn check_running(&self) -> Result<(), Refusal> {
        if self.finished() {
            return refuse(ErrorCode::MatchOver, "the match is over");
        }
        Ok(())
    }

    /// How a deadline ends the match.
    fn deadline_result(&self, reason: EndReason) -> MatchResult {
        let loser = self.game.next_seat();
        let winner = match reason {
            // A tournament or rated game has to produce a result: a no-show
            // loses it (not moving must not save a rating).
            EndReason::NoShow if self.rules.tournament || self.rules.rated => Some(1 - loser),
            // A rated game that each side has moved in is lost by the player
            // who left it, to move (a lost rated game cannot be walked away from).
            EndReason::Abort if self.rules.rated && self.game.plies() >= 2 => Some(1 - loser),
            EndReason::NoShow | EndReason::Abort => None,
            _ => Some(1 - loser),
        };
        MatchResult { winner, reason }
    }

    fn end(&self, result: MatchResult) -> Decision {
        Decision {
            records: self.events([EventBody::Ended { result }]),
            ..Decision::default()
        }
    }

    /// The bodies as the next events.
    fn events(&self, bodies: impl IntoIterator<Item = EventBody>) -> Vec<Record> {
        bodies
            .into_iter()
            .zip(self.game.seq + 1..)
            .map(|(body, seq)| Record::Event(Event { seq, body }))
            .collect()
    }
}

/// The position's JSON text, or None past `limit` bytes (the writing
/// stops there).
fn position_text(position: &Position, limit: usize) -> Option<String> {
    /// A buffer that refuses to grow past its limit.
    struct Capped {
        text: Vec<u8>,
        limit: usize,
    }
    impl std::io::Write for Capped {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.text.len() + buf.len() > self.limit {
                return Err(std::io::Error::other("over the limit"));
            }
            self.text.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Room for most positions at once (a buffer growing from nothing
    // reallocates three or four times on the way).
    let mut out = Capped {
        text: Vec::with_capacity(limit.min(128)),
        limit,
    };
    position.write_json(&mut out).ok()?;
    String::from_utf8(out.text).ok()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use grundy_protocol::random::{game_ids, random_spec};
    use grundy_protocol::wire::Clock;
    use serde_json::json;

    use super::*;
    use crate::secret::hash;
    use grundy_protocol::wire::PlayerKind;

    const NO_SHOW: Duration = Duration::from_secs(30);
    const ABANDON: Duration = Duration::from_secs(600);
    const IDLE: Duration = Duration::from_secs(3_600);

    fn rules(tournament: bool) -> MatchRules {
        MatchRules {
            tournament,
            rated: false,
            max_moves: 1000,
            max_record_bytes: 256 * 1024,
            max_event_position_bytes: 4096,
            timing: Timing {
                no_show: NO_SHOW,
                abandon: ABANDON,
                idle: IDLE,
            },
        }
    }

    fn core(spec: Value, clock: Option<Clock>, rules: MatchRules) -> Core {
        let start = Position::from_spec(&spec).unwrap();
        Core::new(spec, start, clock, rules)
    }

    fn nim(heaps: &[u64], clock: Option<Clock>) -> Core {
        core(json!({"game": "nim", "heaps": heaps}), clock, rules(false))
    }

    fn clock(initial_ms: u64, increment_ms: u64) -> Option<Clock> {
        Some(Clock {
            initial_ms,
            increment_ms,
        })
    }

    /// Decides and applies at `now`; returns the decision.
    fn act(c: &mut Core, intent: Intent<'_>, now: Instant) -> Result<Decision, Refusal> {
        let d = c.decide(intent, now)?;
        for r in &d.records {
            c.apply(r, now).unwrap();
        }
        Ok(d)
    }

    fn join(c: &mut Core, name: &str, now: Instant) -> Decision {
        let intent = Intent::Join {
            player: Player::guest(name),
            seat: None,
            token: hash(&format!("token-{name}")),
            tie: None,
        };
        act(c, intent, now).unwrap()
    }

    /// Both seated ("a" on 0 with token-a, "b" on 1 with token-b) at `t0`.
    fn started(mut c: Core, t0: Instant) -> Core {
        join(&mut c, "a", t0);
        join(&mut c, "b", t0);
        c
    }

    fn bodies(d: &Decision) -> Vec<EventBody> {
        d.records
            .iter()
            .filter_map(|r| match r {
                Record::Event(e) => Some(e.body.clone()),
                Record::Moved(p) => Some(p.event().body),
                Record::Seat { .. } => None,
            })
            .collect()
    }

    fn ended(winner: Option<u8>, reason: EndReason) -> EventBody {
        EventBody::Ended {
            result: MatchResult { winner, reason },
        }
    }

    fn code(r: Result<Decision, Refusal>) -> (ErrorCode, String) {
        r.expect_err("refused")
    }

    fn mv<'a>(token: &'a str, m: &'a Value, at: Instant) -> Intent<'a> {
        Intent::Move {
            token,
            mv: m,
            received: at,
        }
    }

    #[test]
    fn joining_seats_in_order_and_the_second_seat_starts_the_match() {
        let t0 = Instant::now();
        let mut c = nim(&[1, 2], None);
        let first = join(&mut c, "a", t0);
        assert_eq!(first.seat, Some(0));
        assert_eq!(
            first.records[0],
            Record::Seat {
                seat: 0,
                player: Player::guest("a"),
                token: hash("token-a"),
                house: false,
                player_token: None,
                tie: None,
            }
        );
        assert_eq!(
            bodies(&first),
            [EventBody::Seated {
                seat: 0,
                name: Some("a".into()),
                player_kind: Some(PlayerKind::Guest),
            }]
        );
        assert!(!c.game.started);
        let second = join(&mut c, "b", t0);
        assert_eq!(second.seat, Some(1));
        assert_eq!(second.first_seq(), Some(2));
        assert_eq!(bodies(&second)[1], EventBody::Started);
        assert!(c.game.started);
        assert_eq!(c.game.seq, 3);
        assert_eq!(c.seat_of("token-b"), Ok(1));
    }

    #[test]
    fn every_refusal_of_a_seat() {
        let t0 = Instant::now();
        let mut c = nim(&[1, 2], None);
        join(&mut c, "a", t0);
        let ask = |seat| Intent::Join {
            player: Player::default(),
            seat: Some(seat),
            token: "t".into(),
            tie: None,
        };
        assert_eq!(
            code(c.decide(ask(0), t0)),
            (ErrorCode::RoomFull, "seat 0 is taken".into())
        );
        assert_eq!(
            code(c.decide(ask(2), t0)),
            (ErrorCode::BadRequest, "seat must be 0 or 1, not 2".into())
        );
        join(&mut c, "b", t0);
        let any = Intent::Join {
            player: Player::default(),
            seat: None,
            token: "t".into(),
            tie: None,
        };
        assert_eq!(
            code(c.decide(any, t0)),
            (ErrorCode::RoomFull, "both seats are taken".into())
        );
        act(&mut c, Intent::Resign { token: "token-a" }, t0).unwrap();
        let reserve = Intent::Reserve {
            player: Player::guest("x"),
            seat: 0,
            house: false,
            token: "t".into(),
            player_token: None,
        };
        assert_eq!(
            code(c.decide(reserve, t0)),
            (
                ErrorCode::MatchOver,
                "the match is over; watch it instead".into()
            )
        );
    }

    #[test]
    fn a_rematch_is_an_offer_and_an_accept_once_the_match_is_over() {
        let t0 = Instant::now();
        let mut c = started(nim(&[1], None), t0);
        let both = [true, true];
        let step = |c: &Core, token: &str, ask| c.decide_rematch(token, ask, both, false);
        let refused = step(&c, "token-a", RematchAsk::Offer).expect_err("running");
        assert!(refused.1.contains("not over"), "{refused:?}");
        act(
            &mut c,
            mv("token-a", &json!({"heap": 0, "take": 1}), t0),
            t0,
        )
        .unwrap();
        let spectator = step(&c, "", RematchAsk::Offer).expect_err("no seat");
        assert_eq!(spectator.0, ErrorCode::Unauthorized);
        assert!(
            spectator.1.contains("only the match's players"),
            "{spectator:?}"
        );
        let nothing = step(&c, "token-b", RematchAsk::Accept).expect_err("no offer");
        assert!(
            nothing.1.contains("no rematch offer to accept"),
            "{nothing:?}"
        );
        assert_eq!(
            step(&c, "token-a", RematchAsk::Offer),
            Ok((0, RematchStep::Offered))
        );
        // Nobody to offer it to.
        let alone = c.decide_rematch("token-a", RematchAsk::Offer, [true, false], false);
        assert!(alone.expect_err("alone").1.contains("b has left the room"));
        // Against the house bot, the offer is the agreement.
        assert_eq!(
            c.decide_rematch("token-a", RematchAsk::Offer, [true, false], true),
            Ok((0, RematchStep::Agreed { offerer: 0 }))
        );
        c.rematch = Some(0);
        assert_eq!(
            step(&c, "token-a", RematchAsk::Offer),
            Ok((0, RematchStep::AlreadyOffered))
        );
        assert!(
            step(&c, "token-a", RematchAsk::Accept).is_err(),
            "one's own"
        );
        for ask in [RematchAsk::Offer, RematchAsk::Accept] {
            assert_eq!(
                step(&c, "token-b", ask),
                Ok((1, RematchStep::Agreed { offerer: 0 }))
            );
        }
        assert_eq!(
            step(&c, "token-b", RematchAsk::Decline),
            Ok((
                1,
                RematchStep::Withdrawn {
                    offerer: 0,
                    reason: WithdrawReason::Declined
                }
            ))
        );
        assert_eq!(
            step(&c, "token-a", RematchAsk::Decline),
            Ok((
                0,
                RematchStep::Withdrawn {
                    offerer: 0,
                    reason: WithdrawReason::Withdrawn
                }
            ))
        );
        let mut tournament = core(json!({"game": "nim", "heaps": [1]}), None, rules(true));
        for (seat, name) in [(0, "a"), (1, "b")] {
            let reserve = Intent::Reserve {
                player: Player::guest(name),
                seat,
                house: false,
                token: hash(&format!("token-{name}")),
                player_token: None,
            };
            act(&mut tournament, reserve, t0).unwrap();
        }
        let refused = step(&tournament, "token-a", RematchAsk::Offer).expect_err("tournament");
        assert!(
            refused.1.contains("tournament pairs its games"),
            "{refused:?}"
        );
    }

    #[test]
    fn a_tournament_game_is_seated_by_the_tournament_only() {
        let t0 = Instant::now();
        let mut c = core(json!({"game": "nim", "heaps": [3]}), None, rules(true));
        let join = Intent::Join {
            player: Player::guest("x"),
            seat: None,
            token: "t".into(),
            tie: None,
        };
        let (code, message) = code(c.decide(join, t0));
        assert_eq!(code, ErrorCode::RoomFull);
        assert!(
            message.starts_with("this is a tournament game"),
            "{message}"
        );
        let reserve = Intent::Reserve {
            player: Player::guest("p"),
            seat: 1,
            house: true,
            token: "t1".into(),
            player_token: None,
        };
        let d = act(&mut c, reserve, t0).unwrap();
        assert_eq!(d.seat, Some(1));
        assert!(matches!(d.records[0], Record::Seat { house: true, .. }));
    }

    #[test]
    fn a_seat_keeps_the_account_token_it_was_taken_with_until_resumed_by_account() {
        let t0 = Instant::now();
        let mut c = nim(&[1, 2], None);
        let join = Intent::Join {
            player: Player::guest("a"),
            seat: None,
            token: hash("token-a"),
            tie: Some("tok-x".into()),
        };
        act(&mut c, join, t0).unwrap();
        assert_eq!(c.tie(0), Some("tok-x"));
        assert_eq!(c.tie(1), None);
        // A resume by its token changes nothing of it.
        let back = Intent::Resume {
            by: Resumer::Token("token-a"),
            here: [false, false],
            fresh: String::new(),
            tie: Some("tok-y".into()),
        };
        assert!(act(&mut c, back, t0)
            .unwrap()
            .records
            .iter()
            .all(|r| !matches!(r, Record::Seat { .. })));
        assert_eq!(c.tie(0), Some("tok-x"));
    }

    #[test]
    fn a_token_must_be_given_and_valid() {
        let t0 = Instant::now();
        let c = started(nim(&[1, 2], None), t0);
        let m = json!({"heap": 0, "take": 1});
        assert_eq!(
            code(c.decide(mv("", &m, t0), t0)),
            (ErrorCode::Unauthorized, "a seat token is required".into())
        );
        assert_eq!(
            code(c.decide(Intent::Resign { token: "nope" }, t0)),
            (
                ErrorCode::Unauthorized,
                "that seat token is not valid in this room".into()
            )
        );
    }

    #[test]
    fn seats_keep_only_hashes_and_an_account_resume_gets_a_fresh_token() {
        let t0 = Instant::now();
        let mut c = core(json!({"game": "nim", "heaps": [3]}), None, rules(true));
        let ada = Player {
            account: Some(7),
            ..Player::guest("ada")
        };
        let reserve = Intent::Reserve {
            player: ada,
            seat: 0,
            house: false,
            token: hash("seat-secret"),
            player_token: Some(hash("player-secret")),
        };
        act(&mut c, reserve, t0).unwrap();
        assert_eq!(c.kept_token(0), Some(hash("seat-secret").as_str()));
        assert_eq!(c.seat_of("seat-secret"), Ok(0));
        assert_eq!(
            c.seat_of("player-secret"),
            Ok(0),
            "a tournament's token acts too"
        );
        assert!(
            c.seat_of(&hash("seat-secret")).is_err(),
            "the hash is no token"
        );
        let by_hash = Intent::Resume {
            by: Resumer::Kept(&hash("seat-secret")),
            here: [true, false],
            fresh: String::new(),
            tie: None,
        };
        assert_eq!(c.decide(by_hash, t0).unwrap().seat, Some(0));

        let by_account = Intent::Resume {
            by: Resumer::Account(7),
            here: [true, false],
            fresh: hash("fresh-secret"),
            tie: Some("tok-7".into()),
        };
        let d = act(&mut c, by_account, t0).unwrap();
        assert_eq!(d.seat, Some(0));
        assert!(matches!(
            &d.records[..],
            [Record::Seat { seat: 0, token, player, player_token: Some(_), .. }]
                if *token == hash("fresh-secret") && player.account == Some(7)
        ));
        assert_eq!(c.seat_of("fresh-secret"), Ok(0));
        assert_eq!(
            c.tie(0),
            Some("tok-7"),
            "tied to the token it came back with"
        );
        assert!(
            c.seat_of("seat-secret").is_err(),
            "the old token stops acting"
        );
        assert_eq!(c.seat_of("player-secret"), Ok(0));
        let stranger = Intent::Resume {
            by: Resumer::Account(8),
            here: [true, false],
            fresh: hash("x"),
            tie: None,
        };
        assert!(c.decide(stranger, t0).is_err());
    }

    #[test]
    fn a_resume_records_presence_only_for_a_seat_nobody_holds() {
        let t0 = Instant::now();
        let mut c = started(nim(&[1, 2], None), t0);
        let held = c
            .decide(
                Intent::Resume {
                    by: Resumer::Token("token-b"),
                    here: [false, true],
                    fresh: String::new(),
                    tie: None,
                },
                t0,
            )
            .unwrap();
        assert_eq!((held.seat, held.records.len()), (Some(1), 0));
        let back = c
            .decide(
                Intent::Resume {
                    by: Resumer::Token("token-b"),
                    here: [true, false],
                    fresh: String::new(),
                    tie: None,
                },
                t0,
            )
            .unwrap();
        assert_eq!(
            bodies(&back),
            [EventBody::Presence {
                seat: 1,
                connected: true
            }]
        );
        let left = act(&mut c, Intent::Left { seat: 0 }, t0).unwrap();
        assert_eq!(
            bodies(&left),
            [EventBody::Presence {
                seat: 0,
                connected: false
            }]
        );
        act(&mut c, Intent::Resign { token: "token-a" }, t0).unwrap();
        let after_end = Intent::Resume {
            by: Resumer::Token("token-a"),
            here: [false, false],
            fresh: String::new(),
            tie: None,
        };
        assert!(c.decide(after_end, t0).unwrap().records.is_empty());
        assert!(c
            .decide(Intent::Left { seat: 1 }, t0)
            .unwrap()
            .records
            .is_empty());
    }

    #[test]
    fn every_refusal_of_a_move() {
        let t0 = Instant::now();
        let mut c = nim(&[1, 2], None);
        join(&mut c, "a", t0);
        let m = json!({"heap": 0, "take": 1});
        assert_eq!(
            code(c.decide(mv("token-a", &m, t0), t0)),
            (
                ErrorCode::NotYourTurn,
                "the match has not started: waiting for an opponent".into()
            )
        );
        join(&mut c, "b", t0);
        assert_eq!(
            code(c.decide(mv("token-b", &m, t0), t0)),
            (ErrorCode::NotYourTurn, "it is your opponent's turn".into())
        );
        let unreadable = json!({"heap": "x"});
        assert_eq!(
            code(c.decide(mv("token-a", &unreadable, t0), t0)).0,
            ErrorCode::IllegalMove
        );
        let too_many = json!({"heap": 0, "take": 2});
        let (code_, message) = code(c.decide(mv("token-a", &too_many, t0), t0));
        assert_eq!(code_, ErrorCode::IllegalMove);
        assert!(!message.is_empty());
        act(&mut c, Intent::Resign { token: "token-b" }, t0).unwrap();
        assert_eq!(
            code(c.decide(mv("token-a", &m, t0), t0)),
            (ErrorCode::MatchOver, "the match is over".into())
        );
    }

    #[test]
    fn a_move_is_recorded_canonically_with_both_clocks() {
        let t0 = Instant::now();
        let mut c = started(nim(&[3, 4], clock(10_000, 2_000)), t0);
        // Extra fields are dropped: the record holds the move as the engine reads it.
        let m = json!({"heap": 1, "take": 2, "note": "x"});
        let d = act(
            &mut c,
            mv("token-a", &m, t0 + Duration::from_millis(1_500)),
            t0,
        )
        .unwrap();
        assert_eq!(d.first_seq(), Some(4));
        assert_eq!(
            bodies(&d),
            [EventBody::Moved {
                seat: 0,
                mv: json!({"heap": 1, "take": 2}),
                clocks_ms: [10_500, 10_000],
                position: json!({"game": "nim", "heaps": [3, 2]}),
            }]
        );
        assert_eq!(c.game.to_move(), Some(1));
    }

    #[test]
    fn a_move_is_charged_up_to_when_it_was_read_and_the_next_turn_starts_when_it_is_played() {
        let t0 = Instant::now();
        let mut c = started(nim(&[5, 5], clock(10_000, 0)), t0);
        let m = json!({"heap": 0, "take": 1});
        // Read at 1 s, played at 5 s (it waited in the room's queue).
        let read = t0 + Duration::from_secs(1);
        let played = t0 + Duration::from_secs(5);
        let d = act(&mut c, mv("token-a", &m, read), played).unwrap();
        assert!(matches!(
            bodies(&d)[0],
            EventBody::Moved {
                clocks_ms: [9_000, 10_000],
                ..
            }
        ));
        // The opponent's clock runs from when the move was played.
        let later = played + Duration::from_secs(2);
        assert_eq!(c.game.clocks_at(later), [9_000, 8_000]);
    }

    #[test]
    fn a_position_too_large_for_the_event_is_left_out() {
        let t0 = Instant::now();
        let mut r = rules(false);
        r.max_event_position_bytes = 10;
        let mut c = started(core(json!({"game": "nim", "heaps": [3]}), None, r), t0);
        let m = json!({"heap": 0, "take": 1});
        let d = act(&mut c, mv("token-a", &m, t0), t0).unwrap();
        assert!(matches!(
            &bodies(&d)[0],
            EventBody::Moved {
                position: Value::Null,
                ..
            }
        ));
    }

    #[test]
    fn a_position_fits_an_event_up_to_the_limit_exactly() {
        let p = Position::from_spec(&json!({"game": "nim", "heaps": [3, 10]})).unwrap();
        let text = r#"{"game":"nim","heaps":[3,10]}"#;
        assert_eq!(position_text(&p, text.len()).as_deref(), Some(text));
        assert_eq!(position_text(&p, text.len() - 1), None);
        assert_eq!(position_text(&p, 0), None);
    }

    #[test]
    fn the_last_move_ends_the_match_in_the_same_write() {
        let t0 = Instant::now();
        let mut c = started(nim(&[1], None), t0);
        let m = json!({"heap": 0, "take": 1});
        let d = act(&mut c, mv("token-a", &m, t0), t0).unwrap();
        let b = bodies(&d);
        assert!(matches!(b[0], EventBody::Moved { .. }));
        assert_eq!(b[1], ended(Some(0), EndReason::Rules));
        // The ack names the move.
        assert_eq!(d.first_seq(), Some(4));
        assert!(c.finished());
    }

    #[test]
    fn at_the_move_limit_the_theory_decides() {
        let t0 = Instant::now();
        let mut r = rules(false);
        r.max_moves = 2;
        // From Nim [5, 5], one from heap 0, then from heap 1: [4, 4] with
        // seat 0 to move is a P-position (seat 1 wins); two from heap 1 leave
        // [4, 3], an N-position (the player to move, seat 0, wins).
        for (take, winner) in [(1, 1), (2, 0)] {
            let mut c = started(core(json!({"game": "nim", "heaps": [5, 5]}), None, r), t0);
            let first = json!({"heap": 0, "take": 1});
            act(&mut c, mv("token-a", &first, t0), t0).unwrap();
            let second = json!({"heap": 1, "take": take});
            let d = act(&mut c, mv("token-b", &second, t0), t0).unwrap();
            assert_eq!(bodies(&d)[1], ended(Some(winner), EndReason::MoveLimit));
        }
    }

    #[test]
    fn the_record_size_limit_ends_the_match_too() {
        let t0 = Instant::now();
        let mut r = rules(false);
        let m = json!({"heap": 0, "take": 1});
        r.max_record_bytes = m.to_string().len() * 3;
        let mut c = started(core(json!({"game": "nim", "heaps": [9]}), None, r), t0);
        for token in ["token-a", "token-b"] {
            let d = act(&mut c, mv(token, &m, t0), t0).unwrap();
            assert_eq!(d.records.len(), 1);
        }
        let d = act(&mut c, mv("token-a", &m, t0), t0).unwrap();
        // [6] with seat 1 to move is an N-position.
        assert_eq!(bodies(&d)[1], ended(Some(1), EndReason::MoveLimit));
    }

    #[test]
    fn a_move_read_after_the_flag_loses_on_time() {
        let t0 = Instant::now();
        let mut c = started(nim(&[3, 4], clock(10_000, 0)), t0);
        let m = json!({"heap": 0, "take": 1});
        // Player 0 moves at 5 s; player 1's first move would be a no-show at
        // 5 + 30 s, after its flag at 15 s.
        act(
            &mut c,
            mv("token-a", &m, t0 + Duration::from_secs(5)),
            t0 + Duration::from_secs(5),
        )
        .unwrap();
        let flag = t0 + Duration::from_secs(15);
        let just_in_time = flag - Duration::from_millis(1);
        let ok = c.decide(
            mv("token-b", &m, just_in_time),
            flag + Duration::from_secs(9),
        );
        assert!(
            ok.unwrap().refused.is_none(),
            "read in time, decided late: still in time"
        );
        let late = c.decide(mv("token-b", &m, flag), flag).unwrap();
        assert_eq!(
            late.refused,
            Some((ErrorCode::MatchOver, "your time ran out".into()))
        );
        assert_eq!(bodies(&late), [ended(Some(0), EndReason::Flag)]);
    }

    #[test]
    fn a_first_move_too_late_is_a_no_show() {
        let t0 = Instant::now();
        let m = json!({"heap": 0, "take": 1});
        for (tournament, winner) in [(false, None), (true, Some(1))] {
            let mut c = core(
                json!({"game": "nim", "heaps": [3]}),
                clock(60_000, 0),
                rules(tournament),
            );
            for (seat, name) in [(0, "a"), (1, "b")] {
                let reserve = Intent::Reserve {
                    player: Player::guest(name),
                    seat,
                    house: false,
                    token: hash(&format!("token-{name}")),
                    player_token: None,
                };
                act(&mut c, reserve, t0).unwrap();
            }
            let deadline = c.deadline(None).unwrap();
            assert_eq!(deadline, (t0 + NO_SHOW, EndReason::NoShow));
            let late = c
                .decide(mv("token-a", &m, t0 + NO_SHOW), t0 + NO_SHOW)
                .unwrap();
            assert_eq!(
                late.refused,
                Some((
                    ErrorCode::MatchOver,
                    "your first move came too late (no-show)".into()
                ))
            );
            assert_eq!(bodies(&late), [ended(winner, EndReason::NoShow)]);
        }
    }

    fn rated(spec: Value, clock: Option<Clock>) -> Core {
        core(
            spec,
            clock,
            MatchRules {
                rated: true,
                ..rules(false)
            },
        )
    }

    fn account(name: &str, account: AccountId) -> Player {
        Player {
            name: Some(name.into()),
            kind: Some(PlayerKind::Person),
            account: Some(account),
        }
    }

    fn join_as(
        c: &mut Core,
        player: Player,
        token: &str,
        now: Instant,
    ) -> Result<Decision, Refusal> {
        let intent = Intent::Join {
            player,
            seat: None,
            token: hash(token),
            tie: None,
        };
        act(c, intent, now)
    }

    #[test]
    fn a_rated_game_seats_two_different_accounts_only() {
        let t0 = Instant::now();
        let mut c = rated(json!({"game": "nim", "heaps": [3]}), None);
        let guest = join_as(&mut c, Player::guest("g"), "token-g", t0);
        assert_eq!(code(guest).0, ErrorCode::AccountRequired);
        join_as(&mut c, account("ann", 1), "token-a", t0).unwrap();
        let itself = join_as(&mut c, account("ann", 1), "token-a2", t0);
        let (code_, message) = code(itself);
        assert_eq!(code_, ErrorCode::BadRequest);
        assert!(message.contains("against itself"), "{message}");
        join_as(&mut c, account("ben", 2), "token-b", t0).unwrap();
        assert!(c.game.started);
        // The house bot's seat is the server's own: never refused here (the
        // server refuses a rated room with a house bot at creation).
        let mut house = rated(json!({"game": "nim", "heaps": [3]}), None);
        let reserve = Intent::Reserve {
            player: Player::guest("house"),
            seat: 1,
            house: true,
            token: hash("token-h"),
            player_token: None,
        };
        act(&mut house, reserve, t0).unwrap();
    }

    #[test]
    fn a_rated_no_show_loses_and_an_abandoned_rated_game_is_lost_once_each_side_moved() {
        let t0 = Instant::now();
        let m = json!({"heap": 0, "take": 1});
        // A no-show loses a rated game (casual ones are called off).
        let mut c = rated(json!({"game": "nim", "heaps": [3]}), clock(60_000, 0));
        join_as(&mut c, account("ann", 1), "token-a", t0).unwrap();
        join_as(&mut c, account("ben", 2), "token-b", t0).unwrap();
        let at = t0 + NO_SHOW;
        let late = Intent::Deadline {
            abandoned_since: None,
        };
        let late = c.decide(late, at).unwrap();
        assert_eq!(bodies(&late), [ended(Some(1), EndReason::NoShow)]);
        // Untimed, abandoned by the player to move after each side moved:
        // lost by that player.
        let abandoned = |moves: usize| {
            let mut c = rated(json!({"game": "nim", "heaps": [5, 5]}), None);
            join_as(&mut c, account("ann", 1), "token-a", t0).unwrap();
            join_as(&mut c, account("ben", 2), "token-b", t0).unwrap();
            for i in 0..moves {
                let token = ["token-a", "token-b"][i % 2];
                act(&mut c, mv(token, &m, t0), t0).unwrap();
            }
            let since = Intent::Deadline {
                abandoned_since: Some(t0),
            };
            bodies(&c.decide(since, t0 + ABANDON).unwrap())
        };
        assert_eq!(abandoned(2), [ended(Some(1), EndReason::Abort)]);
        assert_eq!(abandoned(3), [ended(Some(0), EndReason::Abort)]);
        // Before each side has moved, it is called off: nobody wins.
        assert_eq!(abandoned(1), [ended(None, EndReason::Abort)]);
        assert_eq!(abandoned(0), [ended(None, EndReason::Abort)]);
    }

    #[test]
    fn the_flag_falls_exactly_when_the_bank_is_empty() {
        let t0 = Instant::now();
        let mut c = started(nim(&[3, 4], clock(10_000, 1_000)), t0);
        let m = json!({"heap": 0, "take": 1});
        let t1 = t0 + Duration::from_secs(2);
        act(&mut c, mv("token-a", &m, t1), t1).unwrap();
        let t2 = t1 + Duration::from_secs(3);
        act(&mut c, mv("token-b", &m, t2), t2).unwrap();
        assert_eq!(c.game.banks, [9_000, 8_000]);
        // Both have moved: from now on only the flag counts.
        let flag = t2 + Duration::from_millis(9_000);
        assert_eq!(c.deadline(None), Some((flag, EndReason::Flag)));
        let early = Intent::Deadline {
            abandoned_since: None,
        };
        let before = flag - Duration::from_millis(1);
        assert!(c.decide(early.clone(), before).unwrap().records.is_empty());
        let d = act(&mut c, early, flag).unwrap();
        assert_eq!(bodies(&d), [ended(Some(1), EndReason::Flag)]);
        assert_eq!(c.game.clocks_at(flag + Duration::from_secs(5)), [0, 8_000]);
        assert_eq!(c.deadline(None), None);
    }

    #[test]
    fn an_empty_room_is_called_off_and_a_timed_match_waits_for_its_clock() {
        let t0 = Instant::now();
        let c = nim(&[3], clock(5_000, 0));
        assert_eq!(c.deadline(Some(t0)), Some((t0 + ABANDON, EndReason::Abort)));
        let d = c
            .decide(
                Intent::Deadline {
                    abandoned_since: Some(t0),
                },
                t0 + ABANDON,
            )
            .unwrap();
        assert_eq!(bodies(&d), [ended(None, EndReason::Abort)]);
        // Running with a clock: the clock ends it, not the absence, even when
        // the absence would end it sooner.
        let mut r = rules(false);
        r.timing.abandon = Duration::from_secs(1);
        let c = started(
            core(json!({"game": "nim", "heaps": [3]}), clock(5_000, 0), r),
            t0,
        );
        assert_eq!(
            c.deadline(Some(t0)),
            Some((t0 + Duration::from_secs(5), EndReason::Flag))
        );
    }

    #[test]
    fn an_untimed_match_is_abandoned_when_the_player_to_move_is_gone() {
        let t0 = Instant::now();
        let c = nim(&[3], None);
        assert!(c.abandoned([false, false]));
        assert!(
            !c.abandoned([false, true]),
            "before the start anyone counts"
        );
        let c = started(c, t0);
        assert!(c.abandoned([false, true]), "seat 0 is to move");
        assert!(!c.abandoned([true, false]));
        // With both here, only idleness ends it.
        assert_eq!(c.deadline(None), Some((t0 + IDLE, EndReason::Abort)));
        assert_eq!(c.deadline(Some(t0)), Some((t0 + ABANDON, EndReason::Abort)));
    }

    #[test]
    fn a_room_without_a_move_or_a_second_player_for_the_idle_wait_is_called_off() {
        let t0 = Instant::now();
        let early = Intent::Deadline {
            abandoned_since: None,
        };
        // Open: from the creator's seat on, whoever stays connected.
        let mut c = nim(&[3, 4], None);
        assert_eq!(c.deadline(None), None, "no seat taken: nothing to wait for");
        join(&mut c, "a", t0);
        assert_eq!(c.deadline(None), Some((t0 + IDLE, EndReason::Abort)));
        let before = t0 + IDLE - Duration::from_millis(1);
        assert!(c.decide(early.clone(), before).unwrap().records.is_empty());
        let d = act(&mut c, early.clone(), t0 + IDLE).unwrap();
        assert_eq!(bodies(&d), [ended(None, EndReason::Abort)]);
        assert_eq!(c.deadline(None), None, "over: no more deadlines");

        // Untimed, in progress: from the last move.
        let m = json!({"heap": 0, "take": 1});
        let mut c = started(nim(&[3, 4], None), t0);
        let t1 = t0 + Duration::from_secs(1_000);
        act(&mut c, mv("token-a", &m, t1), t1).unwrap();
        assert_eq!(c.deadline(None), Some((t1 + IDLE, EndReason::Abort)));
        assert!(c
            .decide(early.clone(), t0 + IDLE)
            .unwrap()
            .records
            .is_empty());
        let d = act(&mut c, early.clone(), t1 + IDLE).unwrap();
        assert_eq!(bodies(&d), [ended(None, EndReason::Abort)]);

        // Timed, waiting for its second player: the same; once started, the
        // clock ends it and idleness does not, even with a longer bank.
        let mut c = nim(&[3, 4], clock(2 * IDLE.as_millis() as u64, 0));
        join(&mut c, "a", t0);
        assert_eq!(c.deadline(None), Some((t0 + IDLE, EndReason::Abort)));
        let t2 = t0 + Duration::from_secs(10);
        join(&mut c, "b", t2);
        assert_eq!(c.deadline(None), Some((t2 + NO_SHOW, EndReason::NoShow)));
        act(&mut c, mv("token-a", &m, t2), t2).unwrap();
        act(&mut c, mv("token-b", &m, t2), t2).unwrap();
        let (_, reason) = c.deadline(None).unwrap();
        assert_eq!(reason, EndReason::Flag);

        // A restore replays the seats at the restart: the wait starts again.
        let mut first = nim(&[3, 4], None);
        let d = join(&mut first, "a", t0);
        let restart = t0 + IDLE;
        let mut restored = nim(&[3, 4], None);
        for r in &d.records {
            restored.apply(r, restart).unwrap();
        }
        assert_eq!(
            restored.deadline(None),
            Some((restart + IDLE, EndReason::Abort))
        );
    }

    #[test]
    fn resigning_loses_a_started_match_and_calls_off_an_unstarted_one() {
        let t0 = Instant::now();
        let mut c = nim(&[3], None);
        join(&mut c, "a", t0);
        let d = c.decide(Intent::Resign { token: "token-a" }, t0).unwrap();
        assert_eq!(bodies(&d), [ended(None, EndReason::Abort)]);
        join(&mut c, "b", t0);
        let d = act(&mut c, Intent::Resign { token: "token-b" }, t0).unwrap();
        assert_eq!(bodies(&d), [ended(Some(0), EndReason::Resign)]);
        assert_eq!(
            code(c.decide(Intent::Resign { token: "token-a" }, t0)),
            (ErrorCode::MatchOver, "the match is over".into())
        );
    }

    #[test]
    fn a_player_may_abort_only_before_their_first_move_and_never_in_a_tournament() {
        let t0 = Instant::now();
        let m = json!({"heap": 0, "take": 1});
        let mut c = started(nim(&[3], None), t0);
        act(&mut c, mv("token-a", &m, t0), t0).unwrap();
        let (code_, message) = code(c.decide(Intent::Abort { token: "token-a" }, t0));
        assert_eq!(code_, ErrorCode::TooLate);
        assert_eq!(
            message,
            "a match can be aborted only before your first move; resign instead"
        );
        let d = act(&mut c, Intent::Abort { token: "token-b" }, t0).unwrap();
        assert_eq!(bodies(&d), [ended(None, EndReason::Abort)]);
        let mut t = core(json!({"game": "nim", "heaps": [3]}), None, rules(true));
        let reserve = Intent::Reserve {
            player: Player::guest("a"),
            seat: 0,
            house: false,
            token: hash("token-a"),
            player_token: None,
        };
        act(&mut t, reserve, t0).unwrap();
        assert_eq!(
            code(t.decide(Intent::Abort { token: "token-a" }, t0)).0,
            ErrorCode::TooLate
        );
    }

    #[test]
    fn a_withdrawn_players_seat_resigns_once() {
        let t0 = Instant::now();
        let mut c = started(nim(&[3], None), t0);
        let d = act(&mut c, Intent::ResignSeat { seat: 1 }, t0).unwrap();
        assert_eq!(bodies(&d), [ended(Some(0), EndReason::Resign)]);
        assert!(c
            .decide(Intent::ResignSeat { seat: 0 }, t0)
            .unwrap()
            .records
            .is_empty());
        assert!(c
            .decide(Intent::ResignSeat { seat: 7 }, t0)
            .unwrap()
            .records
            .is_empty());
    }

    /// A small SplitMix64 for the random matches.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn replaying_the_log_rebuilds_the_live_state_for_every_family() {
        let t0 = Instant::now();
        for game in game_ids() {
            for seed in 0..6u64 {
                let spec = random_spec(game, seed, None).unwrap();
                let mut rng = seed ^ 0x5eed;
                let timed = seed % 2 == 0;
                let clock = timed.then_some(Clock {
                    initial_ms: 60_000,
                    increment_ms: 500,
                });
                let mut live = core(spec.clone(), clock, rules(false));
                let mut log = Vec::new();
                let at = |live: &mut Core,
                          intent: Intent<'_>,
                          now: Instant,
                          log: &mut Vec<(Record, Instant)>| {
                    let d = live.decide(intent, now).unwrap();
                    for r in &d.records {
                        live.apply(r, now).unwrap();
                        log.push((r.clone(), now));
                    }
                };
                let mut now = t0;
                for name in ["a", "b"] {
                    let intent = Intent::Join {
                        player: Player::guest(name),
                        seat: None,
                        token: hash(&format!("token-{name}")),
                        tie: None,
                    };
                    at(&mut live, intent, now, &mut log);
                }
                let mut plies = 0;
                while live.game.to_move().is_some() && plies < 60 {
                    let moves = live.game.position.legal_moves(64).moves;
                    let m = &moves[(next(&mut rng) % moves.len() as u64) as usize];
                    let m = serde_json::to_value(m).unwrap();
                    now += Duration::from_millis(next(&mut rng) % 900);
                    let token = ["token-a", "token-b"][live.game.next_seat() as usize];
                    if next(&mut rng).is_multiple_of(9) {
                        let seat = live.game.next_seat();
                        at(&mut live, Intent::Left { seat }, now, &mut log);
                        let back = Intent::Resume {
                            by: Resumer::Token(token),
                            here: [false, false],
                            fresh: String::new(),
                            tie: None,
                        };
                        at(&mut live, back, now, &mut log);
                    }
                    at(&mut live, mv(token, &m, now), now, &mut log);
                    plies += 1;
                }
                if !live.finished() {
                    at(
                        &mut live,
                        Intent::Resign { token: "token-a" },
                        now,
                        &mut log,
                    );
                }
                // The log as the store keeps it: each event as its JSON text.
                let log: Vec<(Record, Instant)> = log
                    .into_iter()
                    .map(|(r, when)| match r {
                        Record::Event(e) => {
                            let text = serde_json::to_string(&e).unwrap();
                            (Record::Event(serde_json::from_str(&text).unwrap()), when)
                        }
                        Record::Moved(p) => {
                            // Written without serde: the text serde writes.
                            let text = p.json();
                            assert_eq!(text, serde_json::to_string(&p.event()).unwrap());
                            (Record::Event(serde_json::from_str(&text).unwrap()), when)
                        }
                        seat => (seat, when),
                    })
                    .collect();
                let mut replayed = core(spec.clone(), clock, rules(false));
                for (r, when) in &log {
                    replayed.apply(r, *when).unwrap();
                }
                let what = format!("{game} seed {seed}");
                assert_eq!(replayed.game.position, live.game.position, "{what}");
                assert_eq!(replayed.game.seq, live.game.seq, "{what}");
                assert_eq!(replayed.game.result, live.game.result, "{what}");
                assert_eq!(replayed.game.banks, live.game.banks, "{what}");
                assert_eq!(replayed.game.seats, live.game.seats, "{what}");
                assert_eq!(replayed.tokens, live.tokens, "{what}");
                let texts = |c: &Core| {
                    c.game
                        .moves()
                        .iter()
                        .map(|m| m.get().to_string())
                        .collect::<Vec<_>>()
                };
                assert_eq!(texts(&replayed), texts(&live), "{what}");
                // A restart replays everything at one instant: the same match,
                // with the banks of the last move.
                let restart = t0 + Duration::from_secs(3_600);
                let mut restored = core(spec, clock, rules(false));
                for (r, _) in &log {
                    restored.apply(r, restart).unwrap();
                }
                assert_eq!(restored.game.position, live.game.position, "{what}");
                assert_eq!(texts(&restored), texts(&live), "{what}");
                assert_eq!(restored.game.result, live.game.result, "{what}");
                let last_banks = log.iter().rev().find_map(|(r, _)| match r {
                    Record::Event(Event {
                        body: EventBody::Moved { clocks_ms, .. },
                        ..
                    }) => Some(*clocks_ms),
                    _ => None,
                });
                let full = clock.map_or(0, |c| c.initial_ms);
                assert_eq!(
                    restored.game.banks,
                    last_banks.unwrap_or([full, full]),
                    "{what}"
                );
            }
        }
    }
}
