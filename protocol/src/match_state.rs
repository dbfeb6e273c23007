//! A match as its event log builds it: the position, the moves, the seats, the
//! clocks and the result. The server's room keeps one (and rebuilds it after a
//! restart by replaying the stored log through [`MatchState::apply`]); every
//! client follows a match with one, from a snapshot and the events after it.
//! So the server, the bot and the terminal client read a log the same way.
//!
//! Nothing here reads a clock: an event takes effect at the instant its holder
//! gives, and the running bank is a function of an instant.

use std::time::Instant;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::SpecError;
use crate::wire::{Clock, Event, EventBody, MatchResult, SeatInfo, Snapshot};
use crate::{Position, Rules, Status};

#[derive(Debug, Clone)]
pub struct MatchState {
    /// The start position's spec.
    pub spec: Value,
    /// The position now.
    pub position: Position,
    /// Each move as the JSON text it came in (a `Value` tree would take about
    /// ten times the memory; a snapshot sends the text as it is).
    moves: Vec<Box<RawValue>>,
    moves_bytes: usize,
    /// The sequence number of the last event applied.
    pub seq: u64,
    /// Both seats were taken: the first player's clock runs.
    pub started: bool,
    /// The seats' names, and their presence as the events tell it.
    pub seats: [SeatInfo; 2],
    pub clock: Option<Clock>,
    /// Both banks (ms) as of `turn_started` (after the end: as of the end).
    pub banks: [u64; 2],
    /// When the turn now running began, as the holder of this state saw it.
    pub turn_started: Option<Instant>,
    pub result: Option<MatchResult>,
}

/// A log this state cannot follow: the match it describes is not the one
/// this state holds.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FollowError {
    #[error("the room's spec is refused: {0}")]
    Spec(#[from] SpecError),
    #[error("move {mv} unreadable: {why}")]
    Unreadable { mv: String, why: String },
    #[error("move {mv} illegal here: {why}")]
    Illegal { mv: String, why: String },
    #[error("missed events: got {got} after {last}")]
    Gap { got: u64, last: u64 },
}

impl MatchState {
    /// A match about to begin: nobody seated, full banks.
    pub fn new(spec: Value, start: Position, clock: Option<Clock>) -> MatchState {
        let bank = clock.map_or(0, |c| c.initial_ms);
        MatchState {
            spec,
            position: start,
            moves: Vec::new(),
            moves_bytes: 0,
            seq: 0,
            started: false,
            seats: [empty_seat(), empty_seat()],
            clock,
            banks: [bank, bank],
            turn_started: None,
            result: None,
        }
    }

    /// The match a snapshot describes, as of `now` (when it arrived).
    pub fn from_snapshot(s: &Snapshot, now: Instant) -> Result<MatchState, FollowError> {
        let start = Position::from_spec(&s.spec)?;
        let mut state = MatchState::new(s.spec.clone(), start, s.clock);
        for mv in &s.moves {
            state.play(mv)?;
        }
        state.seq = s.seq;
        state.started = s.to_move.is_some() || !s.moves.is_empty() || s.result.is_some();
        state.seats = s.seats.clone();
        state.banks = s.clocks_ms;
        state.turn_started = state.started.then_some(now);
        state.result = s.result;
        Ok(state)
    }

    /// Applies the next event, which took effect at `at`. An event already
    /// applied (a snapshot covered it) changes nothing: returns false. One that
    /// skips a number, or a move the position refuses, is an error.
    pub fn apply(&mut self, event: &Event, at: Instant) -> Result<bool, FollowError> {
        if !self.is_next(event.seq)? {
            return Ok(false);
        }
        match &event.body {
            EventBody::Seated {
                seat,
                name,
                player_kind,
            } => {
                if let Some(s) = self.seats.get_mut(*seat as usize) {
                    s.name = name.clone();
                    s.player_kind = *player_kind;
                    s.connected = true;
                }
            }
            EventBody::Started => {
                self.started = true;
                self.turn_started = Some(at);
            }
            EventBody::Moved { mv, clocks_ms, .. } => {
                self.play(mv)?;
                self.banks = *clocks_ms;
                self.turn_started = Some(at);
            }
            EventBody::Presence { seat, connected } => {
                if let Some(s) = self.seats.get_mut(*seat as usize) {
                    s.connected = *connected;
                }
            }
            EventBody::Ended { result } => {
                self.banks = self.clocks_at(at);
                self.result = Some(*result);
            }
        }
        self.seq = event.seq;
        Ok(true)
    }

    /// Applies a `moved` event (number `seq`) whose move the caller checked
    /// and played from this very position: `next` is where it led, `mv` its
    /// JSON text, `clocks_ms` both banks after it. The same as [`apply`]
    /// with that event, without reading and playing the move again (the
    /// server's room, which has just done so to decide it).
    ///
    /// [`apply`]: MatchState::apply
    pub fn apply_played(
        &mut self,
        seq: u64,
        next: &Position,
        mv: &RawValue,
        clocks_ms: [u64; 2],
        at: Instant,
    ) -> Result<bool, FollowError> {
        if !self.is_next(seq)? {
            return Ok(false);
        }
        self.position.clone_from(next);
        self.push_move(mv.to_owned());
        self.banks = clocks_ms;
        self.turn_started = Some(at);
        self.seq = seq;
        Ok(true)
    }

    /// Whether event `seq` comes next: false for one applied already, an
    /// error for one past a gap.
    fn is_next(&self, seq: u64) -> Result<bool, FollowError> {
        if seq <= self.seq {
            return Ok(false);
        }
        if seq != self.seq + 1 {
            return Err(FollowError::Gap {
                got: seq,
                last: self.seq,
            });
        }
        Ok(true)
    }

    fn play(&mut self, mv: &Value) -> Result<(), FollowError> {
        let m = self
            .position
            .parse_move(mv)
            .map_err(|e| FollowError::Unreadable {
                mv: mv.to_string(),
                why: e.to_string(),
            })?;
        self.position.play(&m).map_err(|e| FollowError::Illegal {
            mv: mv.to_string(),
            why: e.to_string(),
        })?;
        // Written by serde_json itself: taken as it is, not parsed again.
        let text = serde_json::value::to_raw_value(mv).expect("a Value prints as JSON");
        self.push_move(text);
        Ok(())
    }

    /// Keeps a move played, as its JSON text.
    fn push_move(&mut self, text: Box<RawValue>) {
        self.moves_bytes += text.get().len();
        self.moves.push(text);
    }

    /// How many moves have been played.
    pub fn plies(&self) -> usize {
        self.moves.len()
    }

    /// The moves' JSON text in all, in bytes.
    pub fn moves_bytes(&self) -> usize {
        self.moves_bytes
    }

    /// Every move so far, as the text it came in.
    pub fn moves(&self) -> &[Box<RawValue>] {
        &self.moves
    }

    /// The last move: its seat and its JSON.
    pub fn last_move(&self) -> Option<(u8, Value)> {
        let mv = self.moves.last()?;
        let value = serde_json::from_str(mv.get()).ok()?;
        Some((((self.moves.len() - 1) % 2) as u8, value))
    }

    /// The seat whose turn it is by the count of moves (whether or not the
    /// match runs).
    pub fn next_seat(&self) -> u8 {
        (self.moves.len() % 2) as u8
    }

    /// The seat to move: none before the start and after the end (nor once
    /// the position is over and the end not yet heard of).
    pub fn to_move(&self) -> Option<u8> {
        (self.started && self.result.is_none() && self.position.status() == Status::Ongoing)
            .then(|| self.next_seat())
    }

    /// Both banks as of `at`: the running one charged from its turn's start
    /// (nothing for an instant before it).
    pub fn clocks_at(&self, at: Instant) -> [u64; 2] {
        let mut banks = self.banks;
        if let (Some(t), None, Some(_)) = (self.turn_started, self.result, self.clock) {
            let s = self.next_seat() as usize;
            let spent = at.saturating_duration_since(t).as_millis() as u64;
            banks[s] = banks[s].saturating_sub(spent);
        }
        banks
    }

    /// The seat's name, or what to call an empty one.
    pub fn name(&self, seat: u8) -> String {
        self.seats
            .get(seat as usize)
            .and_then(|s| s.name.clone())
            .unwrap_or_else(|| format!("seat {seat} (empty)"))
    }
}

fn empty_seat() -> SeatInfo {
    SeatInfo {
        name: None,
        connected: false,
        player_kind: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::EndReason;
    use serde_json::json;
    use std::time::Duration;

    fn event(seq: u64, body: EventBody) -> Event {
        Event { seq, body }
    }

    fn nim_with_clock() -> MatchState {
        let spec = json!({"game": "nim", "heaps": [1, 2]});
        let start = Position::from_spec(&spec).unwrap();
        let clock = Clock {
            initial_ms: 10_000,
            increment_ms: 0,
        };
        MatchState::new(spec, start, Some(clock))
    }

    #[test]
    fn events_build_the_match_and_the_running_bank_counts_down() {
        let t0 = Instant::now();
        let mut m = nim_with_clock();
        let seated = |seat| EventBody::Seated {
            seat,
            name: Some(format!("p{seat}")),
            player_kind: Some(crate::wire::PlayerKind::Guest),
        };
        assert!(m.apply(&event(1, seated(0)), t0).unwrap());
        assert!(m.apply(&event(2, seated(1)), t0).unwrap());
        assert_eq!(m.to_move(), None);
        m.apply(&event(3, EventBody::Started), t0).unwrap();
        assert_eq!(m.to_move(), Some(0));
        let later = t0 + Duration::from_millis(1_500);
        assert_eq!(m.clocks_at(later), [8_500, 10_000]);
        let moved = EventBody::Moved {
            seat: 0,
            mv: json!({"heap": 1, "take": 1}),
            clocks_ms: [8_500, 10_000],
            position: Value::Null,
        };
        m.apply(&event(4, moved), later).unwrap();
        assert_eq!(m.plies(), 1);
        assert_eq!(m.to_move(), Some(1));
        assert_eq!(m.last_move(), Some((0, json!({"heap": 1, "take": 1}))));
        assert_eq!(m.clocks_at(later + Duration::from_secs(1)), [8_500, 9_000]);
        let ended = EventBody::Ended {
            result: MatchResult {
                winner: Some(0),
                reason: EndReason::Resign,
            },
        };
        m.apply(&event(5, ended), later + Duration::from_secs(2))
            .unwrap();
        assert_eq!(m.to_move(), None);
        // The banks stop at the end.
        assert_eq!(m.clocks_at(later + Duration::from_secs(60)), [8_500, 8_000]);
    }

    #[test]
    fn a_played_move_applies_as_its_event_does() {
        let t0 = Instant::now();
        let mut by_event = nim_with_clock();
        by_event.apply(&event(1, EventBody::Started), t0).unwrap();
        let mut played = by_event.clone();
        let at = t0 + Duration::from_millis(700);
        for (seq, mv) in [
            (2, json!({"heap": 1, "take": 1})),
            (3, json!({"heap": 0, "take": 1})),
        ] {
            let clocks = [9_300, 10_000 - seq];
            let moved = EventBody::Moved {
                seat: 0,
                mv: mv.clone(),
                clocks_ms: clocks,
                position: Value::Null,
            };
            assert!(by_event.apply(&event(seq, moved), at).unwrap());
            let mut next = played.position.clone();
            next.play(&played.position.parse_move(&mv).unwrap())
                .unwrap();
            let text = serde_json::value::to_raw_value(&mv).unwrap();
            assert!(played.apply_played(seq, &next, &text, clocks, at).unwrap());
            assert_eq!(played.position, by_event.position);
            let texts = |m: &MatchState| {
                m.moves()
                    .iter()
                    .map(|t| t.get().to_string())
                    .collect::<Vec<_>>()
            };
            assert_eq!(texts(&played), texts(&by_event));
            assert_eq!(played.moves_bytes(), by_event.moves_bytes());
            assert_eq!(played.banks, by_event.banks);
            assert_eq!(played.seq, by_event.seq);
            assert_eq!(played.turn_started, by_event.turn_started);
        }
        // As with events: one applied already changes nothing, a gap is refused.
        let text = serde_json::value::to_raw_value(&json!({"heap": 1, "take": 1})).unwrap();
        let position = played.position.clone();
        assert!(!played
            .apply_played(3, &position, &text, [0, 0], at)
            .unwrap());
        assert_eq!(played.plies(), 2);
        assert_eq!(
            played.apply_played(5, &position, &text, [0, 0], at),
            Err(FollowError::Gap { got: 5, last: 3 })
        );
    }

    #[test]
    fn an_event_seen_already_is_skipped_and_a_gap_is_an_error() {
        let now = Instant::now();
        let mut m = nim_with_clock();
        m.apply(&event(1, EventBody::Started), now).unwrap();
        assert!(!m.apply(&event(1, EventBody::Started), now).unwrap());
        assert_eq!(
            m.apply(&event(3, EventBody::Started), now),
            Err(FollowError::Gap { got: 3, last: 1 })
        );
    }

    #[test]
    fn an_illegal_move_is_an_error_and_changes_nothing() {
        let now = Instant::now();
        let mut m = nim_with_clock();
        let moved = EventBody::Moved {
            seat: 0,
            mv: json!({"heap": 0, "take": 5}),
            clocks_ms: [0, 0],
            position: Value::Null,
        };
        let err = m.apply(&event(1, moved), now).unwrap_err();
        assert!(matches!(err, FollowError::Illegal { .. }), "{err}");
        assert_eq!((m.seq, m.plies()), (0, 0));
    }

    #[test]
    fn a_snapshot_rebuilds_the_same_state_as_its_events() {
        let now = Instant::now();
        let mut live = nim_with_clock();
        live.apply(&event(1, EventBody::Started), now).unwrap();
        let moved = EventBody::Moved {
            seat: 0,
            mv: json!({"heap": 0, "take": 1}),
            clocks_ms: [9_000, 10_000],
            position: Value::Null,
        };
        live.apply(&event(2, moved), now).unwrap();
        let snapshot = Snapshot {
            room: "r".into(),
            code: "C".into(),
            spec: live.spec.clone(),
            position: live.position.to_json(),
            seats: live.seats.clone(),
            moves: vec![json!({"heap": 0, "take": 1})],
            to_move: live.to_move(),
            clock: live.clock,
            clocks_ms: live.clocks_at(now),
            result: None,
            seq: 2,
            hints: false,
            rated: false,
            bot: None,
        };
        let followed = MatchState::from_snapshot(&snapshot, now).unwrap();
        assert_eq!(followed.position, live.position);
        assert_eq!(followed.to_move(), Some(1));
        assert_eq!(followed.clocks_at(now), live.clocks_at(now));
        assert_eq!(followed.seq, 2);
    }
}
