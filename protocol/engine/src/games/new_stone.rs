//! `new-stone`: A New Stone Game (POJ 1740). A move removes k >= 1 stones from
//! one heap (they leave the game), then may move any of that heap's remaining
//! stones onto other heaps that are non-empty, split as the player likes.
//!
//! Strategy: P iff the non-empty heaps pair up into equal pairs (so their number
//! is even). From such a position any move breaks a pair (the reduced heap
//! changes, and what it gives away cannot restore every pair); the opponent
//! mirrors. From any other position, with the non-empty heaps sorted
//! x1 <= ... <= xn:
//! - n odd: empty the largest heap, using its stones to raise x1 to x2, x3 to
//!   x4, ...; this costs at most x(n-1) - x1 < xn.
//! - n even: reduce the largest heap to x1 and raise x2 to x3, x4 to x5, ...,
//!   x(n-2) to x(n-1); this costs at most x(n-1) - x2, which is below xn - x1
//!   unless x1 = x2 and x(n-1) = xn, and then the cost is below that bound
//!   unless every gap is closed already, i.e. the position was P.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::{json, Value};

use crate::count::count;
use crate::draw::{heap_sizes, SplitMix64};
use crate::error::{MoveError, SpecError};
use crate::game::{search_or_construct, Collector, MoveList, Outcome, Rules, Status, Strategy};
use crate::games::moore::{check_pairs, parse_pairs, ENUMERATE_MOVES};
use crate::games::nim::malformed;
use crate::games::{Entry, GameId};
use crate::json::{Fail, Obj};
use crate::limits::{MAX_HEAP_SIZE, MAX_SMALL_HEAPS};

/// The game ids of this family (with its presets, if any), for the
/// catalogue ([`crate::games::catalogue`]).
pub const GAMES: &[GameId] = &[
    // A part of a sum is searched exhaustively: kept tiny.
    GameId::new("new-stone", "New Stone Game", 10, MAX_HEAP_SIZE).in_mix(3),
];

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NewStone {
    pub heaps: Vec<u64>,
}

/// `{"heap": i, "take": k, "give": [[j, amount], ...]}`: remove `k` stones from
/// heap `i`, then move `amount` of its remaining stones onto each heap `j`.
/// `give` may be omitted when empty (and is then not written); normalised with
/// the heaps in increasing order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct NewStoneMove {
    pub heap: usize,
    pub take: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub give: Vec<(usize, u64)>,
}

impl NewStoneMove {
    pub fn parse(v: &Value) -> Result<Self, Fail> {
        let mut o = Obj::new(v, "move")?;
        let heap = o.req_u64("heap", u32::MAX as u64)? as usize;
        let take = o.req_u64("take", u64::MAX)?;
        let path = o.path("give");
        let give = match o.opt("give") {
            Some(g) => parse_pairs(g, &path)?,
            None => Vec::new(),
        };
        Ok(NewStoneMove { heap, take, give })
    }

    fn given(&self) -> u64 {
        // Only called after `check`, which proved the sum fits.
        self.give.iter().map(|&(_, a)| a).sum()
    }
}

/// P iff every non-empty size occurs an even number of times.
fn paired(heaps: &[u64]) -> bool {
    odd_sizes(heaps).is_empty()
}

/// The non-empty sizes that occur an odd number of times.
fn odd_sizes(heaps: &[u64]) -> HashSet<u64> {
    let mut odd = HashSet::new();
    for &h in heaps.iter().filter(|&&h| h > 0) {
        if !odd.remove(&h) {
            odd.insert(h);
        }
    }
    odd
}

/// C(n, r), or `cap + 1` when it is larger than `cap`.
fn binomial_capped(n: u64, r: u64, cap: u64) -> u64 {
    if r > n {
        return 0;
    }
    let r = r.min(n - r);
    let mut c: u128 = 1;
    for t in 0..r as u128 {
        // c = C(n, t) on entry; exact division; increasing while t < n / 2.
        c = c * (n as u128 - t) / (t + 1);
        if c > cap as u128 {
            return cap + 1;
        }
    }
    c as u64
}

impl NewStone {
    pub fn from_spec(o: &mut Obj) -> Result<Self, Fail> {
        let heaps = o.req_u64_array("heaps", MAX_SMALL_HEAPS, MAX_HEAP_SIZE)?;
        Ok(NewStone { heaps })
    }

    pub fn is_p(&self) -> bool {
        paired(&self.heaps)
    }

    /// The constructive winning move of the module comment; None when P.
    fn constructive(&self) -> Option<NewStoneMove> {
        if self.is_p() {
            return None;
        }
        // Non-empty heaps by size (ties by index, for a deterministic choice).
        let mut order: Vec<usize> = (0..self.heaps.len())
            .filter(|&i| self.heaps[i] > 0)
            .collect();
        order.sort_by_key(|&i| (self.heaps[i], i));
        let (&big, rest) = order.split_last()?;
        let h = self.heaps[big];
        // Odd count: the largest heap vanishes, the others pair from the bottom.
        // Even count: the largest drops to the smallest's size, the others pair
        // from the second smallest.
        let (keep, pairs) = if order.len() % 2 == 1 {
            (0, rest)
        } else {
            (self.heaps[rest[0]], &rest[1..])
        };
        let mut give: Vec<(usize, u64)> = pairs
            .chunks_exact(2)
            .filter(|p| self.heaps[p[1]] > self.heaps[p[0]])
            .map(|p| (p[0], self.heaps[p[1]] - self.heaps[p[0]]))
            .collect();
        give.sort_unstable();
        let given: u64 = give.iter().map(|&(_, a)| a).sum();
        // The comment's arithmetic: keep + given < h in every N-position.
        let take = h.checked_sub(keep)?.checked_sub(given)?;
        (take >= 1).then_some(NewStoneMove {
            heap: big,
            take,
            give,
        })
    }

    /// How many legal moves there are (ignoring the heap size limit, so an upper
    /// bound), saturating at `cap + 1`. From a heap of h with m other non-empty
    /// heaps: choose m gifts and the k - 1 >= 0 extra stones removed, all
    /// summing to at most h - 1, in C(h + m, m + 1) ways.
    fn move_count(&self, cap: u64) -> u64 {
        let nonempty = self.heaps.iter().filter(|&&h| h > 0).count() as u64;
        let mut total = 0u64;
        for &h in self.heaps.iter().filter(|&&h| h > 0) {
            total = total.saturating_add(binomial_capped(
                h.saturating_add(nonempty - 1),
                nonempty,
                cap,
            ));
            if total > cap {
                return cap + 1;
            }
        }
        total
    }

    /// Every legal move from heap `i` whose gifts extend `give` with heaps after
    /// `start`; `left` = stones still in heap `i` beyond the gifts so far.
    fn extend(
        &self,
        i: usize,
        start: usize,
        give: &mut Vec<(usize, u64)>,
        left: u64,
        out: &mut Collector<NewStoneMove>,
    ) -> bool {
        for take in 1..=left {
            if !out.push(NewStoneMove {
                heap: i,
                take,
                give: give.clone(),
            }) {
                return false;
            }
        }
        // At least one stone must be removed, so at most left - 1 can be given.
        if left < 2 {
            return true;
        }
        for j in start..self.heaps.len() {
            if j == i || self.heaps[j] == 0 {
                continue;
            }
            let room = MAX_HEAP_SIZE.saturating_sub(self.heaps[j]);
            for a in 1..left.min(room.saturating_add(1)) {
                give.push((j, a));
                let more = self.extend(i, j + 1, give, left - a, out);
                give.pop();
                if !more {
                    return false;
                }
            }
        }
        true
    }
}

impl Rules for NewStone {
    type Move = NewStoneMove;

    fn parse_move(&self, v: &Value) -> Result<NewStoneMove, MoveError> {
        NewStoneMove::parse(v).map_err(malformed)
    }

    fn check(&self, mv: &NewStoneMove) -> Result<(), MoveError> {
        if self.status() != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        let h = *self.heaps.get(mv.heap).ok_or(MoveError::NoSuch {
            what: "heap",
            index: mv.heap as u64,
            count: self.heaps.len() as u64,
            first: 0,
        })?;
        if mv.take == 0 {
            return Err(MoveError::forbidden(
                "a move must remove at least one stone",
            ));
        }
        check_pairs(&mv.give, &self.heaps)?;
        let mut given = 0u64;
        for &(j, a) in &mv.give {
            if j == mv.heap {
                return Err(MoveError::forbidden(format!(
                    "stones from heap {j} cannot be moved onto heap {j} itself"
                )));
            }
            if self.heaps[j] == 0 {
                return Err(MoveError::forbidden(format!(
                    "heap {j} is empty: stones may only be moved onto non-empty heaps"
                )));
            }
            given = given.saturating_add(a);
        }
        if mv.take.saturating_add(given) > h {
            return Err(MoveError::forbidden(if mv.give.is_empty() {
                format!(
                    "heap {} has only {}, cannot take {}",
                    mv.heap,
                    count(h, "stone", "stones"),
                    mv.take
                )
            } else {
                format!(
                    "heap {} has only {}, cannot remove {} and move {given} more",
                    mv.heap,
                    count(h, "stone", "stones"),
                    mv.take
                )
            }));
        }
        // Stones only ever move between heaps, but one heap may not outgrow the
        // heap size limit (the winning moves never need that).
        for &(j, a) in &mv.give {
            if a > MAX_HEAP_SIZE.saturating_sub(self.heaps[j]) {
                return Err(MoveError::forbidden(format!(
                    "heap {j} would hold more than {MAX_HEAP_SIZE} stones, the heap size limit"
                )));
            }
        }
        Ok(())
    }

    fn apply_checked(&mut self, mv: &NewStoneMove) {
        self.heaps[mv.heap] -= mv.take + mv.given();
        for &(j, a) in &mv.give {
            self.heaps[j] += a;
        }
    }

    fn status(&self) -> Status {
        if self.heaps.iter().all(|&h| h == 0) {
            Status::Over {
                to_move_wins: false,
            }
        } else {
            Status::Ongoing
        }
    }

    fn legal_moves(&self, limit: usize) -> MoveList<NewStoneMove> {
        let mut out = Collector::new(limit);
        for (i, &h) in self.heaps.iter().enumerate() {
            if !self.extend(i, 0, &mut Vec::new(), h, &mut out) {
                break;
            }
        }
        out.finish()
    }

    fn to_json(&self) -> Value {
        json!({"game": "new-stone", "heaps": self.heaps})
    }
}

impl Strategy for NewStone {
    fn outcome(&self) -> Outcome {
        Outcome::from_to_move_wins(!self.is_p())
    }

    fn grundy(&self) -> Option<u64> {
        self.is_p().then_some(0)
    }

    fn winning_moves(&self, limit: usize) -> MoveList<NewStoneMove> {
        if self.is_p() {
            return Collector::new(limit).finish();
        }
        let few = (self.move_count(ENUMERATE_MOVES as u64) <= ENUMERATE_MOVES as u64)
            .then(|| self.legal_moves(ENUMERATE_MOVES).moves);
        // Few moves: a child is P iff the sizes the move toggles (old and new
        // sizes of the heaps it touches) are exactly the odd ones here.
        let odd = odd_sizes(&self.heaps);
        search_or_construct(
            limit,
            few,
            |m| {
                if m.give.len() * 2 + 2 < odd.len() {
                    return false;
                }
                let mut toggles: HashMap<u64, bool> = HashMap::new();
                let mut toggle = |v: u64| {
                    if v > 0 {
                        *toggles.entry(v).or_insert(false) ^= true;
                    }
                };
                let h = self.heaps[m.heap];
                toggle(h);
                toggle(h - m.take - m.given());
                for &(j, a) in &m.give {
                    toggle(self.heaps[j]);
                    toggle(self.heaps[j] + a);
                }
                let flipped: HashSet<u64> = toggles
                    .into_iter()
                    .filter_map(|(v, odd)| odd.then_some(v))
                    .collect();
                flipped == odd
            },
            || self.constructive(),
        )
    }

    fn best_move(&self) -> Option<NewStoneMove> {
        if let Some(m) = self.constructive() {
            return Some(m);
        }
        // Lost (or over): one stone from the largest heap, the smallest change.
        crate::games::nim::patient_move(&self.heaps).map(|m| NewStoneMove {
            heap: m.heap,
            take: 1,
            give: Vec::new(),
        })
    }
}

impl Entry for NewStone {
    const GAMES: &'static [GameId] = GAMES;

    fn read(o: &mut Obj, _id: &str) -> Result<Self, Fail> {
        NewStone::from_spec(o)
    }

    fn random(id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError> {
        Ok(json!({"game": id, "heaps": heap_sizes(rng, 3, 5, s, |_| 1)}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_count_matches_the_generator() {
        for code in 0..6u64.pow(4) {
            let heaps: Vec<u64> = (0..4).map(|i| (code / 6u64.pow(i)) % 6).collect();
            let g = NewStone { heaps };
            let n = g.legal_moves(usize::MAX).moves.len() as u64;
            assert_eq!(g.move_count(1_000_000), n, "{:?}", g.heaps);
            if n > 0 {
                assert_eq!(g.move_count(n - 1), n, "{:?}", g.heaps);
            }
        }
        assert_eq!(binomial_capped(10, 3, 1000), 120);
        assert_eq!(binomial_capped(10, 7, 1000), 120);
        assert_eq!(binomial_capped(1 << 62, 3, 1000), 1001);
    }

    #[test]
    fn constructive_move_always_wins() {
        for code in 0..7u64.pow(5) {
            let heaps: Vec<u64> = (0..5).map(|i| (code / 7u64.pow(i)) % 7).collect();
            let g = NewStone { heaps };
            match g.constructive() {
                None => assert!(g.is_p(), "{:?}", g.heaps),
                Some(m) => {
                    let mut c = g.clone();
                    c.play(&m).unwrap();
                    assert!(c.is_p(), "{:?} {m:?}", g.heaps);
                }
            }
        }
    }
}
