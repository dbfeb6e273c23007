//! A match as a client follows it: the position rebuilt from the spec and the
//! moves, the clocks, the seats and the result, kept up to date from events;
//! and the lines a person reads about it.

use std::time::Instant;

use grundy_protocol::match_state::MatchState;
use grundy_protocol::wire::{
    EndReason, Event, EventBody, MatchResult, PlayerKind, SeatInfo, Snapshot,
};
use grundy_protocol::{Outcome, Rules, Strategy};

use crate::describe::describe_move;
use crate::render::{board, Paint};

/// A match this client follows: the room's names, and the match as the
/// protocol crate's `MatchState` builds it from a snapshot and the events
/// (the same reading of a log as the server's and the bot's).
pub struct Follow {
    pub room: String,
    pub code: String,
    pub game: MatchState,
    /// The room allows hints to both players.
    pub hints: bool,
    /// Seats told to be away (only their coming back is news).
    away: [bool; 2],
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
            hints: s.hints,
            away: [false; 2],
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
            EventBody::Seated { seat, .. } => Happened::Seated(self.shown(*seat)),
            EventBody::Started => Happened::Started,
            EventBody::Moved { seat, .. } => Happened::Moved(*seat, words),
            EventBody::Presence { seat, connected } => {
                let away = &mut self.away[*seat as usize % 2];
                if *connected && !*away {
                    // A first connection (a bot sitting down) is no news.
                    return Ok(Happened::Nothing);
                }
                *away = !*connected;
                Happened::Presence(*seat, *connected)
            }
            EventBody::Ended { result } => Happened::Ended(*result),
        })
    }

    /// The seat to move, None before the start and after the end.
    pub fn to_move(&self) -> Option<u8> {
        self.game.to_move()
    }

    /// The seat's player's name; "nobody yet" for an empty seat.
    pub fn name(&self, seat: u8) -> String {
        match self.game.seats.get(seat as usize) {
            Some(SeatInfo {
                name: Some(name), ..
            }) => name.clone(),
            _ => "nobody yet".to_string(),
        }
    }

    /// The name with the player's kind when not a person (`ann (guest)`,
    /// `deep-blue (bot)`; the house bot's name says it already).
    pub fn shown(&self, seat: u8) -> String {
        match self.game.seats.get(seat as usize) {
            Some(SeatInfo {
                name: Some(name),
                player_kind,
                ..
            }) => shown_name(name, *player_kind),
            _ => self.name(seat),
        }
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
            let mut s = if me == Some(seat) {
                "you".to_string()
            } else {
                self.shown(seat)
            };
            if let Some(ms) = self.bank_ms(seat) {
                s.push_str(&format!(" {}", clock_text(ms)));
            }
            let info = &self.game.seats[seat as usize];
            if !info.connected && info.name.is_some() && me != Some(seat) {
                s.push_str(" [away]");
            }
            if self.to_move() == Some(seat) {
                s = paint.bold(&format!("▶ {s}"));
            }
            s
        };
        let turn = match (self.to_move(), self.game.result) {
            (_, Some(r)) => result_text(&r, me, self),
            (None, None) if !self.game.started => "waiting for a second player".to_string(),
            (None, None) => "the game is over".to_string(),
            (Some(s), None) if me == Some(s) => paint.good("your move"),
            (Some(s), None) => format!("{} to move", self.name(s)),
        };
        format!("[room {}]  {}  vs  {}  — {turn}", self.code, who(0), who(1))
    }

    /// The prompt's text: whose move it is and, on a clock, both banks now.
    pub fn prompt_text(&self, me: u8) -> String {
        let mut s = match (self.to_move(), self.game.result) {
            (_, Some(_)) => return "match over".to_string(),
            (None, None) => return "waiting for a second player".to_string(),
            (Some(s), None) if s == me => "your move".to_string(),
            (Some(s), None) => format!("{} to move", self.name(s)),
        };
        if let (Some(mine), Some(theirs)) = (self.bank_ms(me), self.bank_ms(me ^ 1)) {
            s.push_str(&format!(
                " (you {} · {} {})",
                clock_text(mine),
                self.name(me ^ 1),
                clock_text(theirs)
            ));
        }
        s
    }

    /// The moves so far, numbered, with who played them; with `marks` (after
    /// the end: during the match it would be a hint), each move that threw a
    /// win away is marked.
    pub fn move_list(&self, marks: bool, paint: &Paint) -> String {
        let Ok(mut position) = grundy_protocol::Position::from_spec(&self.game.spec) else {
            return "The moves cannot be read back from this match's start.\n".into();
        };
        let first = self.game.moves().len().saturating_sub(MOVE_LIST);
        let mut out = String::new();
        if first > 0 {
            out.push_str(&format!("({first} earlier moves not shown)\n"));
        }
        for (i, raw) in self.game.moves().iter().enumerate() {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(raw.get()) else {
                break;
            };
            let Ok(mv) = position.parse_move(&value) else {
                break;
            };
            let winning_before = marks && i >= first && position.outcome() == Outcome::N;
            let words = (i >= first).then(|| describe_move(&position, &mv));
            if position.play(&mv).is_err() {
                break;
            }
            if let Some(words) = words {
                let mut line = format!("{:>4}. {}: {words}", i + 1, self.name(i as u8 % 2));
                if winning_before && position.outcome() == Outcome::N {
                    line.push_str(&paint.bad("   ✗ threw the win away"));
                }
                out.push_str(&line);
                out.push('\n');
            }
        }
        if self.game.moves().is_empty() {
            out.push_str("No moves yet.\n");
        }
        out
    }
}

/// The most moves `moves` lists (the latest).
const MOVE_LIST: usize = 200;

/// A player's name with their kind when not a person (`ann (guest)`); the
/// house bot's name says it already (`house-bot (5)`).
pub fn shown_name(name: &str, kind: Option<PlayerKind>) -> String {
    if name.starts_with("house-bot") {
        name.to_string()
    } else {
        PlayerKind::show(name, kind)
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

/// The result in words, from `me`'s side when given: who won, and how.
pub fn result_text(r: &MatchResult, me: Option<u8>, f: &Follow) -> String {
    let who = |seat: u8| {
        if me == Some(seat) {
            "you".to_string()
        } else {
            f.shown(seat)
        }
    };
    let position = &f.game.position;
    let misere = grundy_protocol::analysis::misere_method(position).is_some();
    let stones = matches!(
        position,
        grundy_protocol::Position::Nim(_)
            | grundy_protocol::Position::Heaps(_)
            | grundy_protocol::Position::Sum(_)
    );
    match (r.reason, r.winner, me) {
        (reason, None, _) => format!("no winner ({})", reason_text(reason)),
        (EndReason::Rules, Some(w), None) if !misere => {
            format!("{} won by making the last move", who(w))
        }
        (EndReason::Rules, Some(w), _) => {
            let why = if misere && stones {
                format!("{} had to take the last stone", who(w ^ 1))
            } else if misere {
                format!("{} had to make the last move", who(w ^ 1))
            } else {
                format!("{} made the last move", who(w))
            };
            match me {
                Some(m) if m == w => format!("you won: {why}"),
                Some(_) => format!("you lost: {why}"),
                None => format!("{} won: {why}", who(w)),
            }
        }
        (reason, Some(w), Some(m)) if w == m => format!("you won ({})", reason_text(reason)),
        (reason, Some(_), Some(_)) => format!("you lost ({})", reason_text(reason)),
        (reason, Some(w), None) => format!("{} won ({})", who(w), reason_text(reason)),
    }
}
