//! When a match ends by itself: a flag, a first move that does not come
//! (no-show), a room nobody is in, or one where nothing happens (idle). Pure functions of the match and an
//! instant; the room's task sleeps until the earliest.

use std::time::{Duration, Instant};

use grundy_protocol::match_state::MatchState;
use grundy_protocol::wire::EndReason;

/// The waits the server allows.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// For a player's first move in a timed match.
    pub no_show: Duration,
    /// For a room nobody is in (see `Core::abandoned`).
    pub abandon: Duration,
    /// For a move (or, before the start, for the second player) in a room
    /// no clock will end: past it the room is called off, whoever is there.
    pub idle: Duration,
}

/// The flag (or no-show) deadline of a timed match in progress.
pub fn clock_deadline(game: &MatchState, timing: &Timing) -> Option<(Instant, EndReason)> {
    game.clock?;
    if game.result.is_some() {
        return None;
    }
    let started = game.turn_started?;
    let s = game.next_seat() as usize;
    let flag = started + Duration::from_millis(game.banks[s]);
    // A player's first move is the one at ply 0 or 1.
    if game.plies() < 2 {
        let no_show = started + timing.no_show;
        if no_show < flag {
            return Some((no_show, EndReason::NoShow));
        }
    }
    Some((flag, EndReason::Flag))
}

/// The earliest end that comes by itself: the clock's, calling off a room
/// abandoned since `abandoned_since`, or one idle since its last move (its
/// start; before the start, `opened_at`, when its first seat was taken).
/// A timed match in progress needs neither: its clock will end it.
pub fn deadline(
    game: &MatchState,
    abandoned_since: Option<Instant>,
    opened_at: Option<Instant>,
    timing: &Timing,
) -> Option<(Instant, EndReason)> {
    if game.result.is_some() {
        return None;
    }
    let no_running_clock = game.clock.is_none() || !game.started;
    let abandoned = abandoned_since
        .filter(|_| no_running_clock)
        .map(|since| (since + timing.abandon, EndReason::Abort));
    let idle_since = if game.started {
        game.turn_started
    } else {
        opened_at
    };
    let idle = idle_since
        .filter(|_| no_running_clock)
        .map(|since| (since + timing.idle, EndReason::Abort));
    let timed = clock_deadline(game, timing);
    [abandoned, idle, timed]
        .into_iter()
        .flatten()
        .min_by_key(|(at, _)| *at)
}
