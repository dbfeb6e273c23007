//! A match as a client follows it: the position rebuilt from the spec and the
//! moves, the clocks, the seats and the result, kept up to date from events;
//! and the lines a person reads about it.

use std::time::Instant;

use grundy_protocol::wire::{Clock, EndReason, EventBody, MatchResult, SeatInfo, Snapshot};
use grundy_protocol::{Position, Rules, Status};
use serde_json::Value;

use crate::describe::describe_move;
use crate::render::{board, Paint};

pub struct Follow {
    pub room: String,
    pub code: String,
    pub position: Position,
    pub moves: usize,
    pub seq: u64,
    pub started: bool,
    pub result: Option<MatchResult>,
    pub seats: [SeatInfo; 2],
    pub clock: Option<Clock>,
    pub clocks_ms: [u64; 2],
    /// When `clocks_ms` was last set (the running clock counts down from there).
    pub clocks_at: Instant,
    /// The last move: its seat and wire JSON.
    pub last: Option<(u8, Value)>,
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
        let mut position =
            Position::from_spec(&s.spec).map_err(|e| format!("the room's spec is refused: {e}"))?;
        for mv in &s.moves {
            play(&mut position, mv)?;
        }
        let last = s
            .moves
            .last()
            .map(|m| (((s.moves.len() - 1) % 2) as u8, m.clone()));
        Ok(Follow {
            room: s.room.clone(),
            code: s.code.clone(),
            position,
            moves: s.moves.len(),
            seq: s.seq,
            started: s.to_move.is_some() || !s.moves.is_empty() || s.result.is_some(),
            result: s.result,
            seats: s.seats.clone(),
            clock: s.clock,
            clocks_ms: s.clocks_ms,
            clocks_at: Instant::now(),
            last,
        })
    }

    /// Applies the event numbered `seq` (events already seen are skipped).
    pub fn apply(&mut self, seq: u64, body: &EventBody) -> Result<Happened, String> {
        if seq <= self.seq {
            return Ok(Happened::Nothing);
        }
        if seq != self.seq + 1 {
            return Err(format!("missed events: got {seq} after {}", self.seq));
        }
        self.seq = seq;
        Ok(match body {
            EventBody::Seated { seat, name } => {
                if let Some(s) = self.seats.get_mut(*seat as usize) {
                    s.name = name.clone();
                    s.connected = true;
                }
                Happened::Seated(name.clone().unwrap_or_else(|| "someone".into()))
            }
            EventBody::Started => {
                self.started = true;
                self.clocks_at = Instant::now();
                Happened::Started
            }
            EventBody::Moved {
                seat,
                mv,
                clocks_ms,
                ..
            } => {
                let words = self
                    .position
                    .parse_move(mv)
                    .map(|m| describe_move(&self.position, &m))
                    .unwrap_or_else(|_| mv.to_string());
                play(&mut self.position, mv)?;
                self.moves += 1;
                self.clocks_ms = *clocks_ms;
                self.clocks_at = Instant::now();
                self.last = Some((*seat, mv.clone()));
                Happened::Moved(*seat, words)
            }
            EventBody::Presence { seat, connected } => {
                if let Some(s) = self.seats.get_mut(*seat as usize) {
                    s.connected = *connected;
                }
                Happened::Presence(*seat, *connected)
            }
            EventBody::Ended { result } => {
                self.result = Some(*result);
                Happened::Ended(*result)
            }
        })
    }

    /// The seat to move, None before the start and after the end.
    pub fn to_move(&self) -> Option<u8> {
        (self.started && self.result.is_none() && self.position.status() == Status::Ongoing)
            .then_some((self.moves % 2) as u8)
    }

    pub fn name(&self, seat: u8) -> String {
        self.seats
            .get(seat as usize)
            .and_then(|s| s.name.clone())
            .unwrap_or_else(|| format!("seat {seat} (empty)"))
    }

    /// A seat's bank now, with the running clock charged.
    pub fn bank_ms(&self, seat: u8) -> Option<u64> {
        self.clock?;
        let bank = *self.clocks_ms.get(seat as usize)?;
        if self.to_move() == Some(seat) {
            Some(bank.saturating_sub(self.clocks_at.elapsed().as_millis() as u64))
        } else {
            Some(bank)
        }
    }

    /// The board, with the last move marked.
    pub fn draw(&self, paint: &Paint) -> String {
        board(&self.position, self.last.as_ref().map(|(_, m)| m), paint)
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
            if !self.seats[seat as usize].connected && self.seats[seat as usize].name.is_some() {
                s.push_str(" [away]");
            }
            if self.to_move() == Some(seat) {
                s = paint.bold(&format!("▶ {s}"));
            }
            s
        };
        let turn = match (self.to_move(), self.result) {
            (_, Some(r)) => result_text(&r, me, self),
            (None, None) if !self.started => "waiting for an opponent to join".to_string(),
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

fn play(position: &mut Position, mv: &Value) -> Result<(), String> {
    let m = position
        .parse_move(mv)
        .map_err(|e| format!("move {mv} unreadable: {e}"))?;
    position
        .play(&m)
        .map_err(|e| format!("move {mv} illegal here: {e}"))
}
