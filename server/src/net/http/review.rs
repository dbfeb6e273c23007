//! A match replayed by the engine (`/api/matches/{id}/review`): every
//! position with its analysis, and the moves that gave a won position away.
//! A finished match's review never changes: the last ones asked for are kept
//! (up to [`CACHE_BYTES`] of their JSON), so asking again costs nothing.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use grundy_protocol::wire::MatchRecord;
use grundy_protocol::{components, Analysis, Position, Rules};
use serde::Serialize;
use serde_json::Value;

/// Winning moves a review shows for each mistake.
const REVIEW_MOVES: usize = 5;
/// A review leaves out the positions (the page's boards) past this many
/// bytes of them: a game for people is far below.
const REVIEW_POSITION_BYTES: usize = 512 * 1024;
/// The most bytes of finished matches' reviews kept.
pub const CACHE_BYTES: usize = 16 * 1024 * 1024;

/// What `/api/matches/{id}/review` answers (docs/http.md).
#[derive(Serialize)]
pub struct Review {
    pub room: String,
    pub spec: Value,
    pub players: [Option<String>; 2],
    pub result: Option<grundy_protocol::wire::MatchResult>,
    /// Before each move and after the last: the position and its analysis.
    pub steps: Vec<Step>,
    /// One per move.
    pub moves: Vec<ReviewedMove>,
    /// False when the positions were left out (too large): the moves are
    /// still reviewed.
    pub positions_included: bool,
}

#[derive(Serialize)]
pub struct Step {
    /// The game's JSON view of the position (null when left out).
    pub position: Option<Value>,
    /// "N" or "P" for the player to move; null once the game is over.
    pub outcome: Option<grundy_protocol::Outcome>,
    pub grundy: Option<u64>,
    /// The parts whose values xor to the position's (the binary table).
    pub components: Option<Vec<grundy_protocol::Component>>,
    /// At most five winning moves (more exist when `winning_move_count`
    /// says so, or is null).
    pub winning_moves: Vec<grundy_protocol::Move>,
    pub winning_move_count: Option<usize>,
    pub best_move: Option<grundy_protocol::Move>,
}

#[derive(Serialize)]
pub struct ReviewedMove {
    pub seat: u8,
    pub r#move: Value,
    pub at_ms: u64,
    /// The mover had a win before this move and not after it.
    pub mistake: bool,
}

impl Review {
    pub fn of(record: &MatchRecord) -> Result<Review, String> {
        let mut position =
            Position::from_spec(&record.spec).map_err(|e| format!("stored spec refused: {e}"))?;
        let mut steps = Vec::with_capacity(record.moves.len() + 1);
        let mut moves = Vec::with_capacity(record.moves.len());
        let mut position_bytes = 0usize;
        let mut positions_included = true;
        steps.push(step(
            &position,
            &mut position_bytes,
            &mut positions_included,
        ));
        for (ply, recorded) in record.moves.iter().enumerate() {
            let mv = position
                .parse_move(&recorded.mv)
                .and_then(|mv| position.play(&mv))
                .map_err(|e| format!("stored move {ply} refused: {e}"));
            mv?;
            let before = steps[ply].outcome;
            let after = step(&position, &mut position_bytes, &mut positions_included);
            moves.push(ReviewedMove {
                seat: recorded.seat,
                r#move: recorded.mv.clone(),
                at_ms: recorded.at_ms,
                mistake: before == Some(grundy_protocol::Outcome::N)
                    && after.outcome == Some(grundy_protocol::Outcome::N),
            });
            steps.push(after);
        }
        if !positions_included {
            for s in &mut steps {
                s.position = None;
            }
        }
        Ok(Review {
            room: record.room.clone(),
            spec: record.spec.clone(),
            players: record.players.clone(),
            result: record.result,
            steps,
            moves,
            positions_included,
        })
    }
}

fn step(position: &Position, bytes: &mut usize, included: &mut bool) -> Step {
    let view = position.to_json();
    *bytes += serde_json::to_string(&view).map_or(0, |t| t.len());
    if *bytes > REVIEW_POSITION_BYTES {
        *included = false;
    }
    let over = matches!(position.status(), grundy_protocol::Status::Over { .. });
    if over {
        return Step {
            position: Some(view),
            outcome: None,
            grundy: None,
            components: None,
            winning_moves: Vec::new(),
            winning_move_count: Some(0),
            best_move: None,
        };
    }
    let analysis = Analysis::of(position, REVIEW_MOVES);
    Step {
        position: Some(view),
        outcome: Some(analysis.outcome),
        grundy: analysis.grundy,
        components: components(position),
        winning_moves: analysis.winning_moves,
        winning_move_count: analysis.winning_move_count,
        best_move: analysis.best_move,
    }
}

/// Finished matches' reviews as their JSON text, the oldest asked for
/// leaving first once they pass `max_bytes` in all.
pub struct ReviewCache {
    max_bytes: usize,
    inner: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    by_room: HashMap<String, Arc<str>>,
    order: VecDeque<String>,
    bytes: usize,
}

impl ReviewCache {
    pub fn new(max_bytes: usize) -> ReviewCache {
        ReviewCache {
            max_bytes,
            inner: Mutex::default(),
        }
    }

    pub fn get(&self, room: &str) -> Option<Arc<str>> {
        self.kept().by_room.get(room).cloned()
    }

    /// Keeps `json` for `room` (one larger than the whole cache is not kept).
    pub fn put(&self, room: &str, json: Arc<str>) {
        if json.len() > self.max_bytes {
            return;
        }
        let mut kept = self.kept();
        if kept.by_room.contains_key(room) {
            return;
        }
        kept.bytes += json.len();
        kept.by_room.insert(room.to_string(), json);
        kept.order.push_back(room.to_string());
        while kept.bytes > self.max_bytes {
            let Some(oldest) = kept.order.pop_front() else {
                break;
            };
            if let Some(gone) = kept.by_room.remove(&oldest) {
                kept.bytes -= gone.len();
            }
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        // Every update leaves the maps consistent: poisoning is ignored.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_the_newest_within_its_bytes() {
        let cache = ReviewCache::new(10);
        cache.put("a", "1234".into());
        cache.put("b", "5678".into());
        assert_eq!(cache.get("a").as_deref(), Some("1234"));
        // Past 10 bytes: the oldest leaves.
        cache.put("c", "9999".into());
        assert_eq!(cache.get("a"), None);
        assert_eq!(cache.get("b").as_deref(), Some("5678"));
        assert_eq!(cache.get("c").as_deref(), Some("9999"));
        // Larger than the whole cache: not kept, nothing evicted.
        cache.put("d", "0123456789ab".into());
        assert_eq!(cache.get("d"), None);
        assert!(cache.get("b").is_some());
    }

    #[test]
    fn a_review_marks_the_move_that_gives_the_win_away() {
        let record: MatchRecord = serde_json::from_value(serde_json::json!({
            "room": "r", "spec": {"game": "nim", "heaps": [1, 2]},
            "players": ["a", "b"], "clock": null,
            "moves": [{"seat": 0, "move": {"heap": 1, "take": 2}, "at_ms": 5},
                      {"seat": 1, "move": {"heap": 0, "take": 1}, "at_ms": 9}],
            "result": {"winner": 1, "reason": "rules"}
        }))
        .expect("record");
        let review = Review::of(&record).expect("replays");
        let marks: Vec<bool> = review.moves.iter().map(|m| m.mistake).collect();
        assert_eq!(marks, [true, false]);
        assert_eq!(review.steps.len(), 3);
        assert!(review.positions_included);
    }
}
