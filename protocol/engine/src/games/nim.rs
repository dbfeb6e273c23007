//! `nim`: classic Nim (Bouton) and misère Nim.

use serde::Serialize;
use serde_json::{json, Value};

use crate::draw::{heap_sizes, SplitMix64};
use crate::error::{MoveError, SpecError};
use crate::game::{Collector, MoveList, Outcome, Rules, Status, Strategy, Summand};
use crate::games::{Entry, GameId};
use crate::json::{Fail, Obj};
use crate::limits::{MAX_HEAPS, MAX_HEAP_SIZE};
use crate::sums::nim_sum;

/// The game ids of this family (with its presets, if any), for the
/// catalogue ([`crate::games::catalogue`]).
pub const GAMES: &[GameId] = &[GameId::new("nim", "Nim", 10, MAX_HEAP_SIZE)
    .in_mix(MAX_HEAP_SIZE)
    .misere()];

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Nim {
    pub heaps: Vec<u64>,
    pub misere: bool,
}

/// `{"heap": i, "take": k}`: take `k >= 1` stones from heap `i` (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct TakeMove {
    pub heap: usize,
    pub take: u64,
}

impl TakeMove {
    pub fn parse(v: &Value) -> Result<Self, Fail> {
        let mut o = Obj::new(v, "move")?;
        let heap = o.req_u64("heap", u32::MAX as u64)? as usize;
        let take = o.req_u64("take", u64::MAX)?;
        Ok(TakeMove { heap, take })
    }

    /// Checks the move against a list of plain heaps (Nim, twist after the split).
    pub fn check_against(&self, heaps: &[u64]) -> Result<(), MoveError> {
        let size = *heaps.get(self.heap).ok_or(MoveError::NoSuch {
            what: "heap",
            index: self.heap as u64,
            count: heaps.len() as u64,
            first: 0,
        })?;
        if self.take == 0 {
            return Err(MoveError::forbidden("a move must take at least one stone"));
        }
        if self.take > size {
            return Err(MoveError::forbidden(format!(
                "heap {} has only {}, cannot take {}",
                self.heap,
                crate::count::count(size, "stone", "stones"),
                self.take
            )));
        }
        Ok(())
    }
}

pub(crate) fn malformed((field, problem): Fail) -> MoveError {
    MoveError::malformed(field, problem)
}

impl Nim {
    pub fn from_spec(o: &mut Obj) -> Result<Self, Fail> {
        let heaps = o.req_u64_array("heaps", MAX_HEAPS, MAX_HEAP_SIZE)?;
        let misere = o.opt_bool("misere")?.unwrap_or(false);
        Ok(Nim { heaps, misere })
    }

    pub fn nim_sum(&self) -> u64 {
        nim_sum(self.heaps.iter().copied())
    }

    fn all_small(&self) -> bool {
        self.heaps.iter().all(|&h| h <= 1)
    }

    /// Misère: with every heap at most 1, the player to move loses iff the count
    /// of 1-heaps is odd; otherwise exactly as in normal play.
    fn is_p(&self) -> bool {
        if self.misere && self.all_small() {
            self.heaps.iter().filter(|&&h| h == 1).count() % 2 == 1
        } else {
            self.nim_sum() == 0
        }
    }

    /// The sizes heap `i` may be reduced to that leave a P-position.
    fn winning_sizes(&self, i: usize, x: u64) -> Vec<u64> {
        let h = self.heaps[i];
        if !self.misere {
            let t = h ^ x;
            return if t < h { vec![t] } else { Vec::new() };
        }
        let others_big = self.heaps.iter().enumerate().any(|(j, &s)| j != i && s > 1);
        if others_big {
            // Some heap stays above 1 whatever we do here: normal-play rule.
            let t = h ^ x;
            return if t < h { vec![t] } else { Vec::new() };
        }
        // Every other heap is 0 or 1: leave 0 or 1 here so that an odd number of
        // 1-heaps remains (leaving one big heap alone is always an N-position).
        let other_ones = self
            .heaps
            .iter()
            .enumerate()
            .filter(|&(j, &s)| j != i && s == 1)
            .count() as u64;
        (0..2u64.min(h))
            .filter(|s| (other_ones + s) % 2 == 1)
            .collect()
    }
}

impl Rules for Nim {
    type Move = TakeMove;

    fn parse_move(&self, v: &Value) -> Result<TakeMove, MoveError> {
        TakeMove::parse(v).map_err(malformed)
    }

    fn check(&self, mv: &TakeMove) -> Result<(), MoveError> {
        if self.status() != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        mv.check_against(&self.heaps)
    }

    fn apply_checked(&mut self, mv: &TakeMove) {
        self.heaps[mv.heap] -= mv.take;
    }

    fn status(&self) -> Status {
        if self.heaps.iter().all(|&h| h == 0) {
            Status::Over {
                to_move_wins: self.misere,
            }
        } else {
            Status::Ongoing
        }
    }

    fn legal_moves(&self, limit: usize) -> MoveList<TakeMove> {
        take_moves(&self.heaps, limit)
    }

    fn normal_play(&self) -> bool {
        !self.misere
    }

    fn to_json(&self) -> Value {
        serde_json::to_value(self.view()).expect("a Nim position prints as JSON")
    }

    fn write_json<W: std::io::Write>(&self, out: W) -> serde_json::Result<()> {
        serde_json::to_writer(out, &self.view())
    }
}

/// A Nim position as JSON, `{"game": "nim", "heaps": [...]}` with
/// `"misere": true` when it is: its keys in the order a `Value` keeps them.
#[derive(Serialize)]
struct View<'a> {
    game: &'static str,
    heaps: &'a [u64],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    misere: bool,
}

impl Nim {
    fn view(&self) -> View<'_> {
        View {
            game: "nim",
            heaps: &self.heaps,
            misere: self.misere,
        }
    }
}

/// Every take from every heap, up to `limit`.
pub(crate) fn take_moves(heaps: &[u64], limit: usize) -> MoveList<TakeMove> {
    let mut out = Collector::new(limit);
    for (heap, &size) in heaps.iter().enumerate() {
        for take in 1..=size {
            if !out.push(TakeMove { heap, take }) {
                return out.finish();
            }
        }
    }
    out.finish()
}

/// Taking one stone from the largest heap: from a lost position, the move that
/// keeps the game longest and leaves the opponent the most room to err.
pub(crate) fn patient_move(heaps: &[u64]) -> Option<TakeMove> {
    let (heap, _) = heaps
        .iter()
        .enumerate()
        .filter(|&(_, &h)| h > 0)
        .max_by_key(|&(i, &h)| (h, std::cmp::Reverse(i)))?;
    Some(TakeMove { heap, take: 1 })
}

/// Normal-play Nim as a part of a sum (a sum refuses misère parts).
impl Summand for Nim {
    fn value(&self) -> u64 {
        self.nim_sum()
    }

    fn moves_to(&self, target: u64, limit: usize) -> MoveList<TakeMove> {
        let mut out = Collector::new(limit);
        let x = self.nim_sum() ^ target;
        if x == 0 {
            return out.finish();
        }
        for (heap, &h) in self.heaps.iter().enumerate() {
            if h ^ x < h
                && !out.push(TakeMove {
                    heap,
                    take: h - (h ^ x),
                })
            {
                break;
            }
        }
        out.finish()
    }
}

impl Strategy for Nim {
    fn outcome(&self) -> Outcome {
        if self.status() != Status::Ongoing {
            return Outcome::from_to_move_wins(self.misere);
        }
        Outcome::from_to_move_wins(!self.is_p())
    }

    fn grundy(&self) -> Option<u64> {
        (!self.misere).then(|| self.nim_sum())
    }

    fn winning_moves(&self, limit: usize) -> MoveList<TakeMove> {
        let mut out = Collector::new(limit);
        if self.outcome() == Outcome::P || self.status() != Status::Ongoing {
            return out.finish();
        }
        let x = self.nim_sum();
        for (i, &h) in self.heaps.iter().enumerate() {
            for s in self.winning_sizes(i, x) {
                if !out.push(TakeMove {
                    heap: i,
                    take: h - s,
                }) {
                    return out.finish();
                }
            }
        }
        out.finish()
    }

    fn best_move(&self) -> Option<TakeMove> {
        self.winning_moves(1)
            .moves
            .into_iter()
            .next()
            .or_else(|| patient_move(&self.heaps))
    }
}

impl Entry for Nim {
    const GAMES: &'static [GameId] = GAMES;

    fn read(o: &mut Obj, _id: &str) -> Result<Self, Fail> {
        Nim::from_spec(o)
    }

    fn random(id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError> {
        Ok(json!({"game": id, "heaps": heap_sizes(rng, 3, 5, s, |_| 1)}))
    }
}
