//! A match as a client follows it: the position rebuilt from the spec and the
//! moves, the clocks, the seats and the result, kept up to date from events;
//! and the lines a person reads about it.

use std::time::Instant;

use grundy_protocol::match_state::MatchState;
use grundy_protocol::wire::{EndReason, Event, EventBody, MatchResult, Snapshot};
use grundy_protocol::Rules;

use crate::describe::describe_move;
use crate::render::{board, Paint};

/// A match this client follows: the room's names, and the match as the
/// protocol crate's `MatchState` builds it from a snapshot and the events
/// (the same reading of a log as the server's and the bot's).
pub struct Follow {
    pub room: String,
    pub code: String,
    pub game: MatchState,
}

/// What an event changed, in words for a person (None: nothing to say).
pub enum Happened {
    Seated(String),
    Started,
    /// Seat, the move in words.
    Moved(u8, String),
    Presence(u8, bool),
    Ended(MatchResult),
    Nothing,
}

impl Follow {
    pub fn from_snapshot(s: &Snapshot) -> Result<Follow, String> {
        Ok(Follow {
            room: s.room.clone(),
            code: s.code.clone(),
            game: MatchState::from_snapshot(s, Instant::now()).map_err(|e| e.to_string())?,
        })
    }

    /// Applies the next event (events already seen are skipped).
    pub fn apply(&mut self, event: &Event) -> Result<Happened, String> {
        // The move in words, from the position before it.
        let words = match &event.body {
            EventBody::Moved { mv, .. } if event.seq == self.game.seq + 1 => {
                let position = &self.game.position;
                position
                    .parse_move(mv)
                    .map(|m| describe_move(position, &m))
                    .unwrap_or_else(|_| mv.to_string())
            }
            _ => String::new(),
        };
        if !self
            .game
            .apply(event, Instant::now())
            .map_err(|e| e.to_string())?
        {
            return Ok(Happened::Nothing);
        }
        Ok(match &event.body {
            EventBody::Seated { name, .. } => {
                Happened::Seated(name.clone().unwrap_or_else(|| "someone".into()))
            }
            EventBody::Started => Happened::Started,
            EventBody::Moved { seat, .. } => Happened::Moved(*seat, words),
            EventBody::Presence { seat, connected } => Happened::Presence(*seat, *connected),
            EventBody::Ended { result } => Happened::Ended(*result),
        })
    }

    /// The seat to move, None before the start and after the end.
    pub fn to_move(&self) -> Option<u8> {
        self.game.to_move()
    }

    pub fn name(&self, seat: u8) -> String {
        self.game.name(seat)
    }

    /// A seat's bank now, with the running clock charged.
    pub fn bank_ms(&self, seat: u8) -> Option<u64> {
        self.game.clock?;
        self.game
            .clocks_at(Instant::now())
            .get(seat as usize)
            .copied()
    }

    /// The board, with the last move marked.
    pub fn draw(&self, paint: &Paint) -> String {
        let last = self.game.last_move();
        board(&self.game.position, last.as_ref().map(|(_, m)| m), paint)
    }

    /// The players, their clocks and whose turn it is; `me` is the viewer's seat.
    pub fn status_line(&self, me: Option<u8>, paint: &Paint) -> String {
        let who = |seat: u8| {
            let mut s = self.name(seat);
            if me == Some(seat) {
                s = format!("you ({s})");
            }
            if let Some(ms) = self.bank_ms(seat) {
                s.push_str(&format!(" {}", clock_text(ms)));
            }
            let info = &self.game.seats[seat as usize];
            if !info.connected && info.name.is_some() {
                s.push_str(" [away]");
            }
            if self.to_move() == Some(seat) {
                s = paint.bold(&format!("▶ {s}"));
            }
            s
        };
        let turn = match (self.to_move(), self.game.result) {
            (_, Some(r)) => result_text(&r, me, self),
            (None, None) if !self.game.started => "waiting for an opponent to join".to_string(),
            (None, None) => "the game is over".to_string(),
            (Some(s), None) if me == Some(s) => paint.good("your move"),
            (Some(s), None) => format!("{} to move", self.name(s)),
        };
        format!(
            "[room {}]  seat 0: {}   seat 1: {}   — {turn}",
            self.code,
            who(0),
            who(1)
        )
    }
}

pub fn clock_text(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else if s < 10 {
        format!("{}.{}s", s, ms % 1000 / 100)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Why a match ended, in words.
pub fn reason_text(reason: EndReason) -> &'static str {
    match reason {
        EndReason::Rules => "by the rules",
        EndReason::Resign => "by resignation",
        EndReason::Flag => "on time",
        EndReason::Abort => "aborted",
        EndReason::NoShow => "a first move did not come in time",
        EndReason::Forfeit => "forfeited: a player withdrew",
        EndReason::MoveLimit => "at the move limit, by who wins from there with perfect play",
    }
}

/// The result in words, from `me`'s side when given.
pub fn result_text(r: &MatchResult, me: Option<u8>, f: &Follow) -> String {
    let why = reason_text(r.reason);
    match (r.winner, me) {
        (None, _) => format!("no winner ({why})"),
        (Some(w), Some(m)) if w == m => format!("you won ({why})"),
        (Some(_), Some(_)) => format!("you lost ({why})"),
        (Some(w), None) => format!("{} won ({why})", f.name(w)),
    }
}
