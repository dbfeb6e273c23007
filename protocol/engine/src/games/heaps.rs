//! `heaps`: a sum of heap games, one rule per heap (subtraction games, the Bash
//! game, Kayles and other octal games, Lasker's Nim, Grundy's game, ...), and
//! the lobby presets `bash`, `subtraction`, `kayles`, `dawson`, `lasker` and
//! `grundy`.
//!
//! Strategy: the Sprague–Grundy theorem. Each heap's value comes from its rule
//! ([`Rule::grundy`]); the position is lost for the player to move iff their xor
//! is 0, and a winning move turns one heap's value `g` into `g ^ xor`.
//!
//! With `"misere": true` whoever cannot move wins; [`crate::games::misere`] decides
//! those positions (genus, quotient or search, chosen when the spec is read).

use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};

use super::nim::malformed;
use super::rule::{parse_set, HeapStep, Rule, RuleKind};
use crate::draw::{heap_sizes, sizes_for, small_set, SplitMix64, SMALL_TAKE};
use crate::error::{MoveError, SpecError};
use crate::game::{Collector, MoveList, Outcome, Rules, Status, Strategy, Summand};
use crate::games::grundys_game::MAX_GRUNDYS_GAME_HEAP;
use crate::games::misere::heaps::Solver;
use crate::games::misere::Method;
use crate::games::{Entry, GameId};
use crate::json::{array_at, fail, index, join, u64_array_at, u64_at, Fail, Obj};
use crate::limits::{MAX_HEAPS, MAX_HEAP_SIZE};
use crate::sums::nim_sum;

/// The game ids of this family (with its presets, if any), for the
/// catalogue ([`crate::games::catalogue`]).
pub const GAMES: &[GameId] = &[
    heap_game("heaps", "Heap game"),
    heap_game("bash", "Bash"),
    heap_game("subtraction", "Subtraction game"),
    heap_game("kayles", "Kayles"),
    // Dawson's Kayles takes exactly 2: a heap of 1 has no move.
    heap_game("dawson", "Dawson's Kayles").over_at_1(),
    heap_game("lasker", "Lasker's Nim"),
    // Heaps of 1 and 2 cannot be split unequally. Not drawn in a `mix`: the
    // catalogue's order is part of every stored `mix` seed, and a new game
    // drawn there would change what old seeds start.
    GameId::new("grundy", "Grundy's game", 10, MAX_GRUNDYS_GAME_HEAP)
        .builds_tables()
        .over_at_1()
        .misere(),
];

/// A heap game: its rules may have Grundy tables; random starts of 10, up to
/// the largest heap, in a `mix` too; misère play offered.
const fn heap_game(id: &'static str, name: &'static str) -> GameId {
    GameId::new(id, name, 10, MAX_HEAP_SIZE)
        .builds_tables()
        .in_mix(MAX_HEAP_SIZE)
        .misere()
}

pub use super::rule::Heap;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Heaps {
    pub heaps: Vec<Heap>,
    /// Misère play, and how its positions are decided; None in normal play.
    pub misere: Option<Solver>,
}

/// `{"heap": i, "take": k}`, or with a split `{"heap": i, "take": k, "leave": [a, b]}`:
/// take `k` from heap `i` (from 0); the rest stays as one heap, or is split into
/// heaps `a` and `b` (which take the places `i` and `i + 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct HeapMove {
    pub heap: usize,
    pub take: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leave: Option<[u64; 2]>,
}

impl HeapMove {
    fn step(&self) -> HeapStep {
        HeapStep {
            take: self.take,
            split: self.leave,
        }
    }

    fn from_step(heap: usize, s: HeapStep) -> Self {
        HeapMove {
            heap,
            take: s.take,
            leave: s.split,
        }
    }
}

impl Heaps {
    /// Reads `heaps` and the presets; `id` is the game id used.
    pub fn from_spec(o: &mut Obj, id: &str) -> Result<Self, Fail> {
        let preset = match id {
            "bash" => {
                let k = o.req_u64("k", MAX_HEAP_SIZE)?;
                if k == 0 {
                    return fail(&o.path("k"), "must be at least 1");
                }
                Some(RuleKind::UpTo(k))
            }
            "subtraction" => Some(RuleKind::Set(parse_set(o.req("set")?, &o.path("set"))?)),
            "kayles" => Some(RuleKind::Octal("0.77".into())),
            "dawson" => Some(RuleKind::Octal("0.07".into())),
            "lasker" => Some(RuleKind::Lasker),
            "grundy" => Some(RuleKind::Grundy),
            _ => None,
        };
        let is_preset = preset.is_some();
        let default = match preset {
            Some(kind) => Some(Arc::new(Rule::new(kind).map_err(|e| (String::new(), e))?)),
            None => match o.opt("rule") {
                Some(v) => Some(Arc::new(Rule::parse(v, &o.path("rule"))?)),
                None => None,
            },
        };
        let path = o.path("heaps");
        let entries = array_at(o.req("heaps")?, &path, MAX_HEAPS)?;
        let mut heaps = Vec::with_capacity(entries.len());
        let mut size_paths = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let at = index(&path, i);
            let (size, size_path, rule) = match entry {
                Value::Object(_) if !is_preset => {
                    let mut h = Obj::new(entry, &at)?;
                    let size = h.req_u64("size", MAX_HEAP_SIZE)?;
                    let rule = match h.opt("rule") {
                        Some(r) => Arc::new(Rule::parse(r, &join(&at, "rule"))?),
                        None => default.clone().map_or_else(
                            || fail(&join(&at, "rule"), "is required (or give a top-level rule)"),
                            Ok,
                        )?,
                    };
                    h.finish(&[])?;
                    (size, join(&at, "size"), rule)
                }
                _ => {
                    let size = u64_at(entry, &at, MAX_HEAP_SIZE)?;
                    let rule = default
                        .clone()
                        .map_or_else(|| fail(&at, "a bare heap size needs a top-level rule"), Ok)?;
                    (size, at, rule)
                }
            };
            if size > rule.max_heap() {
                return fail(
                    &size_path,
                    format!(
                        "{size} is too large for rule {}: its Grundy sequence has no proven period, so heaps up to {} only",
                        rule.kind,
                        rule.max_heap()
                    ),
                );
            }
            rule.prepare(size);
            heaps.push(Heap { size, rule });
            size_paths.push(size_path);
        }
        let misere = match o.opt_bool("misere")? {
            Some(true) => Some(Solver::choose(&heaps, &size_paths)?),
            _ => None,
        };
        Ok(Heaps { heaps, misere })
    }

    /// Which method decides this misère position (None in normal play).
    pub fn misere_method(&self) -> Option<Method> {
        self.misere.as_ref().map(Solver::method)
    }

    /// Each heap's Grundy value.
    pub fn values(&self) -> Vec<u64> {
        self.heaps.iter().map(|h| h.rule.grundy(h.size)).collect()
    }

    fn no_such(&self, heap: usize) -> MoveError {
        MoveError::NoSuch {
            what: "heap",
            index: heap as u64,
            count: self.heaps.len() as u64,
            first: 0,
        }
    }
}

impl Rules for Heaps {
    type Move = HeapMove;

    fn parse_move(&self, v: &Value) -> Result<HeapMove, MoveError> {
        let mut o = Obj::new(v, "move").map_err(malformed)?;
        let heap = o.req_u64("heap", u32::MAX as u64).map_err(malformed)? as usize;
        let take = o.req_u64("take", u64::MAX).map_err(malformed)?;
        let leave = match o.opt("leave") {
            None => None,
            Some(l) => Some(u64_array_at(l, &o.path("leave"), 2, u64::MAX).map_err(malformed)?),
        };
        let leave = match leave.as_deref() {
            None => None,
            Some(&[a, b]) => Some([a, b]),
            // Zero or one heap left: it must be the rest of the heap.
            Some(rest) => {
                let size = self.heaps.get(heap).ok_or_else(|| self.no_such(heap))?.size;
                let left = size.saturating_sub(take);
                let said: u64 = rest.iter().sum();
                if said != left || rest == [0] {
                    return Err(MoveError::forbidden(format!(
                        "leave {rest:?} does not match the rest: {size} minus {take} leaves {left}"
                    )));
                }
                None
            }
        };
        Ok(HeapMove { heap, take, leave })
    }

    fn check(&self, mv: &HeapMove) -> Result<(), MoveError> {
        if self.status() != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        let h = self
            .heaps
            .get(mv.heap)
            .ok_or_else(|| self.no_such(mv.heap))?;
        h.rule
            .check(h.size, mv.step())
            .map_err(|why| MoveError::forbidden(format!("heap {}: {why}", mv.heap)))
    }

    fn apply_checked(&mut self, mv: &HeapMove) {
        let i = mv.heap;
        match mv.leave {
            None => self.heaps[i].size -= mv.take,
            Some([a, b]) => {
                let rule = self.heaps[i].rule.clone();
                self.heaps[i].size = a;
                self.heaps.insert(i + 1, Heap { size: b, rule });
            }
        }
    }

    fn status(&self) -> Status {
        if self.heaps.iter().any(|h| h.rule.can_move(h.size)) {
            Status::Ongoing
        } else {
            Status::Over {
                to_move_wins: self.misere.is_some(),
            }
        }
    }

    fn legal_moves(&self, limit: usize) -> MoveList<HeapMove> {
        let mut out = Collector::new(limit);
        for (i, h) in self.heaps.iter().enumerate() {
            h.rule
                .steps(h.size, &mut |s| out.push(HeapMove::from_step(i, s)));
            if !out.has_room() {
                break;
            }
        }
        out.finish()
    }

    fn normal_play(&self) -> bool {
        self.misere.is_none()
    }

    fn to_json(&self) -> Value {
        let first = self.heaps.first().map(|h| &h.rule);
        let mut spec =
            if let Some(rule) = first.filter(|r| self.heaps.iter().all(|h| &h.rule == *r)) {
                let sizes: Vec<u64> = self.heaps.iter().map(|h| h.size).collect();
                json!({"game": "heaps", "rule": rule.to_json(), "heaps": sizes})
            } else {
                let heaps: Vec<Value> = self
                    .heaps
                    .iter()
                    .map(|h| json!({"size": h.size, "rule": h.rule.to_json()}))
                    .collect();
                json!({"game": "heaps", "heaps": heaps})
            };
        if self.misere.is_some() {
            spec["misere"] = json!(true);
        }
        spec
    }
}

/// Normal-play heaps as a part of a sum (a sum refuses misère parts).
impl Summand for Heaps {
    fn value(&self) -> u64 {
        nim_sum(self.values())
    }

    fn moves_to(&self, target: u64, limit: usize) -> MoveList<HeapMove> {
        let mut out = Collector::new(limit);
        let values = self.values();
        let x = nim_sum(values.iter().copied()) ^ target;
        if x == 0 {
            return out.finish();
        }
        for (i, h) in self.heaps.iter().enumerate() {
            let complete = h.rule.steps_to(h.size, values[i] ^ x, &mut |s| {
                out.push(HeapMove::from_step(i, s))
            });
            if !complete {
                out.mark_incomplete();
            }
            if !out.has_room() {
                out.mark_incomplete();
                break;
            }
        }
        out.finish()
    }
}

impl Strategy for Heaps {
    fn outcome(&self) -> Outcome {
        if let Some(m) = &self.misere {
            return Outcome::from_to_move_wins(m.to_move_wins(&self.heaps));
        }
        Outcome::from_to_move_wins(nim_sum(self.values()) != 0)
    }

    fn grundy(&self) -> Option<u64> {
        // A misère sum has no Grundy value: its parts' values do not add.
        self.misere.is_none().then(|| nim_sum(self.values()))
    }

    fn winning_moves(&self, limit: usize) -> MoveList<HeapMove> {
        let Some(m) = &self.misere else {
            return self.moves_to(0, limit);
        };
        let mut out = Collector::new(limit);
        if self.outcome() == Outcome::P {
            return out.finish();
        }
        let complete = m.winning_steps(&self.heaps, limit, &mut |i, s| {
            out.push(HeapMove::from_step(i, s))
        });
        if !complete {
            out.mark_incomplete();
        }
        out.finish()
    }

    fn best_move(&self) -> Option<HeapMove> {
        if self.misere.is_some() {
            return self
                .winning_moves(1)
                .moves
                .into_iter()
                .next()
                .or_else(|| self.patient_move());
        }
        let values = self.values();
        let x = nim_sum(values.iter().copied());
        if x != 0 {
            // A heap whose value can drop to g ^ x has such a move (mex), and it is
            // found fast; heaps that would need a larger value are not searched.
            for (i, h) in self.heaps.iter().enumerate() {
                let target = values[i] ^ x;
                if target < values[i] {
                    let mut found = None;
                    h.rule.steps_to(h.size, target, &mut |s| {
                        found = Some(HeapMove::from_step(i, s));
                        false
                    });
                    if found.is_some() {
                        return found;
                    }
                }
            }
        }
        self.patient_move()
    }
}

impl Heaps {
    /// From a lost position: the smallest move from the largest heap that can
    /// move keeps the game long.
    fn patient_move(&self) -> Option<HeapMove> {
        patient_step(&self.heaps).map(|(i, s)| HeapMove::from_step(i, s))
    }
}

/// The smallest step from the largest heap that can move (the first such
/// heap among equals), with the heap's index: from a lost position, the move
/// that keeps the game long.
pub(crate) fn patient_step(heaps: &[Heap]) -> Option<(usize, HeapStep)> {
    let mut order: Vec<usize> = (0..heaps.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(heaps[i].size));
    order.into_iter().find_map(|i| {
        let h = &heaps[i];
        let mut first = None;
        h.rule.steps(h.size, &mut |s| {
            first = Some((i, s));
            false
        });
        first
    })
}

impl Entry for Heaps {
    const GAMES: &'static [GameId] = GAMES;

    fn read(o: &mut Obj, id: &str) -> Result<Self, Fail> {
        Heaps::from_spec(o, id)
    }

    fn random(id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError> {
        Ok(match id {
            "heaps" => {
                let count = rng.range(3, 5) as usize;
                let rules: Vec<(Value, u64)> = (0..count).map(|_| random_rule(rng, s)).collect();
                let sizes = sizes_for(rng, s, &rules.iter().map(|r| r.1).collect::<Vec<_>>());
                let heaps: Vec<Value> = sizes
                    .iter()
                    .zip(rules)
                    .map(|(&size, (rule, _))| json!({"size": size, "rule": rule}))
                    .collect();
                json!({"game": id, "heaps": heaps})
            }
            "bash" => {
                let k = rng.range(1, s.min(SMALL_TAKE));
                let heaps = heap_sizes(rng, 3, 5, s, |_| 1);
                json!({"game": id, "k": k, "heaps": heaps})
            }
            "subtraction" => {
                let set = small_set(rng, s);
                let heaps = heap_sizes(rng, 2, 4, s, |_| set[0]);
                json!({"game": id, "set": set, "heaps": heaps})
            }
            // Dawson's Kayles (0.07) takes exactly 2 from a heap.
            "dawson" => json!({"game": id, "heaps": heap_sizes(rng, 2, 4, s, |_| 2)}),
            // Grundy's game: a heap needs 3 to be split unequally.
            "grundy" => json!({"game": id, "heaps": heap_sizes(rng, 2, 4, s, |_| 3)}),
            // kayles and lasker
            _ => json!({"game": id, "heaps": heap_sizes(rng, 2, 4, s, |_| 1)}),
        })
    }
}

/// A heap rule of the `heaps` game, with the fewest tokens a move takes.
fn random_rule(rng: &mut SplitMix64, s: u64) -> (Value, u64) {
    match rng.below(8) {
        0 => (json!("any"), 1),
        1 => (json!({"upto": rng.range(1, s.min(SMALL_TAKE))}), 1),
        2 => {
            let set = small_set(rng, s);
            let least = set[0];
            (json!({ "set": set }), least)
        }
        3 => (json!("odd"), 1),
        4 => (json!("half"), 1),
        5 => (json!({"octal": "0.77"}), 1),
        6 => (json!({"octal": "0.07"}), 2),
        _ => (json!("lasker"), 1),
    }
}
