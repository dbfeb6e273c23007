//! `sum`: independent games side by side. A move is a move in one part; whoever
//! cannot move in any part loses.
//!
//! Strategy: the Sprague–Grundy theorem. The sum is lost for the player to
//! move iff the xor of its parts' Grundy values is 0, and a winning move is a
//! move in some part `i` to a position of value `g_i ^ total` (below `g_i`, or
//! above it in games with reversible moves such as the staircase).
//!
//! Every part must be a normal-play game whose every position has a Grundy
//! value: `nim`, `heaps` (and its presets), `staircase`, `darkraft`, `graph`
//! and the coin-turning games give theirs by theory ([`Summand`]); `wythoff` reads a shared table
//! ([`values_up_to`]); `moore` and `new-stone` have no formula beyond
//! P-positions, so each such part's values are found by an exact search over
//! every position it can reach, once, when the spec is read, within a budget.
//! `treblecross` (three in a row ends the whole sum at once), `twist` (its
//! first move belongs to one seat) and misère parts are refused.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};

use super::heaps::{patient_step, Heap, HeapMove};
use super::nim::{malformed, TakeMove};
use super::rule::{HeapStep, Rule};
use super::wythoff::{values_up_to, WythoffValues};
use crate::draw::SplitMix64;
use crate::error::{MoveError, SpecError};
use crate::game::{Collector, MoveList, Outcome, Rules, Status, Strategy, Summand};
use crate::games::misere::heaps::Solver;
use crate::games::misere::Method;
use crate::games::position::{Move, Position};
use crate::games::{catalogue, random_spec, Entry, GameId};
use crate::json::{array_at, fail, index, join, Fail, Obj};
use crate::limits::{
    MAX_HEAP_SIZE, MAX_SUM_ITEMS, MAX_SUM_PARTS, MAX_SUM_SEARCH_MOVES, MAX_SUM_SEARCH_POSITIONS,
    MAX_WYTHOFF_PART,
};
use crate::oracle::mex;
use crate::sums::nim_sum;

/// The game ids of this family (with its presets, if any), for the
/// catalogue ([`crate::games::catalogue`]).
pub const GAMES: &[GameId] = &[
    // A random `mix` is a `sum` of random parts; its size bounds each part.
    GameId::new("mix", "Sum of games", 8, MAX_HEAP_SIZE)
        .builds_tables()
        .random_only(),
    GameId::new("sum", "Sum of games", 8, MAX_HEAP_SIZE)
        .builds_tables()
        .misere(),
];

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sum {
    pub parts: Vec<Part>,
    /// Misère play (whoever cannot move wins), for sums of heap games only:
    /// how their heaps, all together, are decided. None in normal play.
    pub misere: Option<Solver>,
}

/// One game of a sum, with where its Grundy values come from.
#[derive(Debug, Clone)]
pub struct Part {
    /// The game id the spec gave (`kayles`, not the `heaps` it is read as).
    pub id: String,
    pub game: Position,
    values: Values,
}

impl PartialEq for Part {
    fn eq(&self, other: &Self) -> bool {
        self.game == other.game
    }
}
impl Eq for Part {}
impl std::hash::Hash for Part {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.game.hash(state)
    }
}

#[derive(Debug, Clone)]
enum Values {
    /// The family's own theory ([`Summand`]).
    Theory,
    Wythoff(Arc<WythoffValues>),
    /// Every position the part can reach, with its value.
    Searched(Arc<HashMap<Position, u64>>),
}

/// `{"part": i, "move": m}`: the move `m` (in part `i`'s own encoding) in part
/// `i` (from 0).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct PartMove {
    pub part: usize,
    #[serde(rename = "move")]
    pub inner: Box<Move>,
}

/// What the exact searches of one spec may still visit.
struct Budget {
    positions: usize,
    moves: usize,
}

impl Sum {
    /// Reads `{"game": "sum", "parts": [SPEC, ...]}`; nested sums are flattened.
    pub fn from_spec(o: &mut Obj) -> Result<Self, Fail> {
        let path = o.path("parts");
        let entries = array_at(o.req("parts")?, &path, MAX_SUM_PARTS)?;
        if entries.is_empty() {
            return fail(&path, "a sum needs at least one part");
        }
        let mut items = 0;
        let mut budget = Budget {
            positions: MAX_SUM_SEARCH_POSITIONS,
            moves: MAX_SUM_SEARCH_MOVES,
        };
        let mut parts = Vec::with_capacity(entries.len());
        // Nested sums are read as their parts, in place, with this sum's
        // budgets: a stack of the entries still to read, the next on top.
        let mut stack: Vec<(&Value, String)> = entries
            .iter()
            .enumerate()
            .rev()
            .map(|(i, e)| (e, index(&path, i)))
            .collect();
        while let Some((entry, at)) = stack.pop() {
            if entry.get("game").and_then(Value::as_str) == Some("sum") {
                let mut inner = Obj::new(entry, &at)?;
                let inner_path = inner.path("parts");
                let inner_parts = array_at(inner.req("parts")?, &inner_path, MAX_SUM_PARTS)?;
                if inner.opt_bool("misere")? == Some(true) {
                    return fail(
                        &join(&at, "misere"),
                        "a misère sum cannot be a part of a sum: a misère part would change who wins the whole sum",
                    );
                }
                inner.finish(&["game"])?;
                stack.extend(
                    inner_parts
                        .iter()
                        .enumerate()
                        .rev()
                        .map(|(j, e)| (e, index(&inner_path, j))),
                );
                continue;
            }
            if parts.len() == MAX_SUM_PARTS {
                return fail(
                    &path,
                    format!("has more than {MAX_SUM_PARTS} parts once nested sums are flattened; the limit is {MAX_SUM_PARTS}"),
                );
            }
            // Checked before the part is read, so the refusal costs no more
            // than the request.
            items += items_in(entry);
            if items > MAX_SUM_ITEMS {
                return fail(
                    &at,
                    format!(
                        "the parts up to here hold {items} numbers and cells; a sum may hold {MAX_SUM_ITEMS}"
                    ),
                );
            }
            let id = entry
                .get("game")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            // Refused by name, before a board that could never be a part is read.
            let never = match id.as_str() {
                "treblecross" => {
                    Some("three in a row ends the whole game at once, not just its part")
                }
                "twist" => Some("its first move (the split) belongs to one seat"),
                _ => None,
            };
            if let Some(why) = never {
                return fail(
                    &join(&at, "game"),
                    format!("{id} cannot be a part of a sum: {why}"),
                );
            }
            let game = Position::read_spec(entry).map_err(|(field, message)| {
                let field = if field.is_empty() {
                    at.clone()
                } else {
                    join(&at, &field)
                };
                (field, message)
            })?;
            parts.push(Part::new(id, game, &at, &mut budget)?);
        }
        let misere = match o.opt_bool("misere")? {
            Some(true) => Some(misere_solver(&parts, &path)?),
            _ => None,
        };
        Ok(Sum { parts, misere })
    }

    /// Each part's Grundy value.
    pub fn values(&self) -> Vec<u64> {
        self.parts.iter().map(Part::value).collect()
    }

    fn no_such(&self, part: usize) -> MoveError {
        MoveError::NoSuch {
            what: "part",
            index: part as u64,
            count: self.parts.len() as u64,
            first: 0,
        }
    }

    /// Which method decides this misère sum (None in normal play).
    pub fn misere_method(&self) -> Option<Method> {
        self.misere.as_ref().map(Solver::method)
    }

    /// Every heap of every part, in order, with its place: (part, index
    /// there). A misère sum is decided as one misère position of its heaps.
    fn all_heaps(&self) -> PlacedHeaps {
        heaps_of(&self.parts).unwrap_or_default()
    }

    /// The move in its part for a step of the heap at `places[k]`.
    fn heap_move(&self, (part, heap): (usize, usize), step: HeapStep) -> PartMove {
        let inner = match &self.parts[part].game {
            Position::Nim(_) => Move::Nim(TakeMove {
                heap,
                take: step.take,
            }),
            _ => Move::Heaps(HeapMove {
                heap,
                take: step.take,
                leave: step.split,
            }),
        };
        PartMove {
            part,
            inner: Box::new(inner),
        }
    }
}

/// Heaps with the place of each: (part, index in the part).
type PlacedHeaps = (Vec<Heap>, Vec<(usize, usize)>);

/// Every heap of the parts with its place, or the first part that is not a
/// heap game.
fn heaps_of(parts: &[Part]) -> Result<PlacedHeaps, usize> {
    let any = Arc::new(Rule::any());
    let mut heaps = Vec::new();
    let mut places = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let from = heaps.len();
        match &p.game {
            Position::Nim(n) => heaps.extend(n.heaps.iter().map(|&size| Heap {
                size,
                rule: any.clone(),
            })),
            Position::Heaps(h) => heaps.extend(h.heaps.iter().cloned()),
            _ => return Err(i),
        }
        places.extend((0..heaps.len() - from).map(|j| (i, j)));
    }
    Ok((heaps, places))
}

/// The solver of a misère sum: its parts must all be heap games, whose heaps
/// together are one misère `heaps` position (docs/games.md, "Misère play").
fn misere_solver(parts: &[Part], path: &str) -> Result<Solver, Fail> {
    let (heaps, places) = heaps_of(parts).map_err(|i| {
        (
            join(&index(path, i), "game"),
            format!(
                "{} cannot be a part of a misère sum: misère sums are decided as one position of heaps, so their parts are heap games (nim, heaps and its presets)",
                parts[i].id
            ),
        )
    })?;
    let paths: Vec<String> = places
        .iter()
        .map(|&(part, heap)| index(&join(&index(path, part), "heaps"), heap))
        .collect();
    Solver::choose(&heaps, &paths)
}

/// How many numbers and characters a spec holds (a graph counts its vertices
/// too): what reading it may cost.
fn items_in(v: &Value) -> usize {
    match v {
        Value::Array(a) => a.iter().map(items_in).sum::<usize>().max(1),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| match (k.as_str(), v.as_u64()) {
                ("vertices", Some(n)) => usize::try_from(n).unwrap_or(usize::MAX),
                _ => items_in(v),
            })
            .fold(0, usize::saturating_add),
        Value::String(s) => s.len(),
        _ => 1,
    }
}

impl Part {
    fn new(id: String, game: Position, at: &str, budget: &mut Budget) -> Result<Part, Fail> {
        let refuse = |why: &str| {
            fail(
                &join(at, "game"),
                format!("{id} cannot be a part of a sum: {why}"),
            )
        };
        if !game.normal_play() {
            return refuse(
                "a misère part would change who wins the whole sum; a sum is played in normal play",
            );
        }
        let values = match &game {
            // Refused by name before they are read.
            Position::Treblecross(_) | Position::Twist(_) => return refuse("it is not a normal-play game of its own"),
            Position::Nim(_)
            | Position::Heaps(_)
            | Position::Staircase(_)
            | Position::Darkraft(_)
            | Position::Graph(_)
            | Position::Coins(_) => Values::Theory,
            Position::Wythoff(w) => {
                let largest = w.heaps[0].max(w.heaps[1]);
                if largest > MAX_WYTHOFF_PART {
                    return fail(
                        &join(at, "heaps"),
                        format!(
                            "{largest} is too large for a wythoff part: its Grundy values come from a table of heaps up to {MAX_WYTHOFF_PART}"
                        ),
                    );
                }
                Values::Wythoff(values_up_to(largest))
            }
            // The caller flattens nested sums before they get here.
            Position::Sum(_) => return refuse("a nested sum is read as its parts"),
            // Moore's Nim, New Stone, and any family without a theory here.
            _ => {
                Values::Searched(Arc::new(search(&game, budget).map_err(|why| {
                    (
                        at.to_string(),
                        format!("{id} has no formula for its Grundy values, so a part is searched exhaustively: {why}"),
                    )
                })?))
            }
        };
        Ok(Part { id, game, values })
    }

    /// The same part after a move, with the same source of values.
    fn with(&self, game: Position) -> Part {
        Part {
            id: self.id.clone(),
            game,
            values: self.values.clone(),
        }
    }

    /// The part in a few words, as its short form reads: `kayles 7`,
    /// `wythoff 3 5`, `graph tokens at 0 4`, `darkraft 3×4`.
    pub fn label(&self) -> String {
        let numbers = |ns: &mut dyn Iterator<Item = u64>| {
            ns.map(|n| n.to_string()).collect::<Vec<_>>().join(" ")
        };
        let detail = match &self.game {
            Position::Nim(p) => numbers(&mut p.heaps.iter().copied()),
            Position::Heaps(p) => numbers(&mut p.heaps.iter().map(|h| h.size)),
            Position::Wythoff(p) => numbers(&mut p.heaps.iter().copied()),
            Position::Moore(p) => numbers(&mut p.heaps.iter().copied()),
            Position::NewStone(p) => numbers(&mut p.heaps.iter().copied()),
            Position::Staircase(p) => {
                format!("pieces at {}", numbers(&mut p.pieces.iter().copied()))
            }
            Position::Graph(p) => format!(
                "tokens at {}",
                numbers(&mut p.tokens.iter().map(|&t| u64::from(t)))
            ),
            Position::Darkraft(p) => format!("{}×{}", p.rows(), p.cols()),
            Position::Coins(p) => p.view().join(" "),
            _ => String::new(),
        };
        format!("{} {detail}", self.id).trim_end().to_string()
    }

    /// The part's Grundy value.
    pub fn value(&self) -> u64 {
        match (&self.values, &self.game) {
            (Values::Wythoff(t), Position::Wythoff(w)) => t.get(w.heaps[0], w.heaps[1]),
            // Every position a part can reach was searched when it was read.
            (Values::Searched(values), game) => values.get(game).copied(),
            (_, Position::Nim(p)) => Some(p.value()),
            (_, Position::Heaps(p)) => Some(p.value()),
            (_, Position::Staircase(p)) => Some(p.value()),
            (_, Position::Darkraft(p)) => Some(p.value()),
            (_, Position::Graph(p)) => Some(p.value()),
            (_, Position::Coins(p)) => Some(p.value()),
            _ => None,
        }
        .unwrap_or_else(|| {
            debug_assert!(false, "a part without a value: {:?}", self.game);
            0
        })
    }

    /// Moves in this part to positions of value `target`, at most `limit`.
    pub fn moves_to(&self, target: u64, limit: usize) -> MoveList<Move> {
        match &self.game {
            Position::Nim(p) => p.moves_to(target, limit).map(Move::Nim),
            Position::Heaps(p) => p.moves_to(target, limit).map(Move::Heaps),
            Position::Staircase(p) => p.moves_to(target, limit).map(Move::Staircase),
            Position::Darkraft(p) => p.moves_to(target, limit).map(Move::Darkraft),
            Position::Graph(p) => p.moves_to(target, limit).map(Move::Graph),
            Position::Coins(p) => p.moves_to(target, limit).map(Move::Coins),
            // Tables and searched parts are small: try every move.
            game => {
                let mut out = Collector::new(limit);
                let moves = game.legal_moves(usize::MAX);
                for m in moves.moves {
                    let mut child = game.clone();
                    child.apply_checked(&m);
                    if self.with(child).value() == target && !out.push(m) {
                        break;
                    }
                }
                out.finish()
            }
        }
    }
}

/// The Grundy value of every position `start` can reach, by a depth-first
/// search without recursion (a game can be thousands of moves long).
fn search(start: &Position, budget: &mut Budget) -> Result<HashMap<Position, u64>, String> {
    struct Frame {
        position: Position,
        children: Vec<Position>,
        next: usize,
    }
    let shared = budget.positions < MAX_SUM_SEARCH_POSITIONS || budget.moves < MAX_SUM_SEARCH_MOVES;
    let over = || {
        format!(
            "it reaches more than {MAX_SUM_SEARCH_POSITIONS} positions or {MAX_SUM_SEARCH_MOVES} moves (the budget of one sum{})",
            if shared { ", shared by its searched parts" } else { "" }
        )
    };
    let mut values: HashMap<Position, u64> = HashMap::new();
    let expand = |position: Position, budget: &mut Budget| -> Result<Frame, String> {
        let moves = position.legal_moves(budget.moves);
        if !moves.complete || budget.positions == 0 {
            return Err(over());
        }
        budget.moves -= moves.moves.len();
        budget.positions -= 1;
        let children = moves
            .moves
            .iter()
            .map(|m| {
                let mut child = position.clone();
                child.apply_checked(m);
                child
            })
            .collect();
        Ok(Frame {
            position,
            children,
            next: 0,
        })
    };
    let mut stack = vec![expand(start.clone(), budget)?];
    while let Some(top) = stack.last_mut() {
        // Skip the children already valued; descend into the next one that is not.
        while top.next < top.children.len() && values.contains_key(&top.children[top.next]) {
            top.next += 1;
        }
        if let Some(child) = top.children.get(top.next) {
            let child = child.clone();
            let frame = expand(child, budget)?;
            stack.push(frame);
            continue;
        }
        let Some(done) = stack.pop() else { break };
        let mut seen: Vec<u64> = done.children.iter().map(|c| values[c]).collect();
        values.insert(done.position, mex(&mut seen));
    }
    Ok(values)
}

impl Rules for Sum {
    type Move = PartMove;

    fn parse_move(&self, v: &Value) -> Result<PartMove, MoveError> {
        let mut o = Obj::new(v, "move").map_err(malformed)?;
        let part = o.req_u64("part", u32::MAX as u64).map_err(malformed)? as usize;
        let inner = o.req("move").map_err(malformed)?;
        o.finish(&[]).map_err(malformed)?;
        let p = self.parts.get(part).ok_or_else(|| self.no_such(part))?;
        let inner = p
            .game
            .parse_move(inner)
            .map_err(|error| MoveError::InPart {
                part,
                error: Box::new(error),
            })?;
        Ok(PartMove {
            part,
            inner: Box::new(inner),
        })
    }

    fn check(&self, mv: &PartMove) -> Result<(), MoveError> {
        if self.status() != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        let p = self
            .parts
            .get(mv.part)
            .ok_or_else(|| self.no_such(mv.part))?;
        let in_part = |error| MoveError::InPart {
            part: mv.part,
            error: Box::new(error),
        };
        if p.game.status() != Status::Ongoing {
            return Err(in_part(MoveError::forbidden(
                "this part is finished: it has no move left",
            )));
        }
        p.game.check(&mv.inner).map_err(in_part)
    }

    fn apply_checked(&mut self, mv: &PartMove) {
        self.parts[mv.part].game.apply_checked(&mv.inner);
    }

    fn status(&self) -> Status {
        if self
            .parts
            .iter()
            .any(|p| p.game.status() == Status::Ongoing)
        {
            Status::Ongoing
        } else {
            Status::Over {
                to_move_wins: self.misere.is_some(),
            }
        }
    }

    fn normal_play(&self) -> bool {
        self.misere.is_none()
    }

    /// Every part gets its share of the limit, so a part with very many moves
    /// does not hide the others from a random choice.
    fn legal_moves(&self, limit: usize) -> MoveList<PartMove> {
        let lists: Vec<MoveList<Move>> = self
            .parts
            .iter()
            .map(|p| p.game.legal_moves(limit))
            .collect();
        let total: usize = lists.iter().map(|l| l.moves.len()).sum();
        let mut complete = lists.iter().all(|l| l.complete) && total <= limit;
        // The largest share that keeps the total within the limit.
        let mut share = limit;
        if total > limit {
            let mut sizes: Vec<usize> = lists.iter().map(|l| l.moves.len()).collect();
            sizes.sort_unstable();
            let mut left = limit;
            for (k, &n) in sizes.iter().enumerate() {
                let even = left / (sizes.len() - k);
                if n > even {
                    share = even;
                    break;
                }
                left -= n;
            }
            complete = false;
        }
        let moves = lists
            .into_iter()
            .enumerate()
            .flat_map(|(part, l)| {
                l.moves.into_iter().take(share).map(move |m| PartMove {
                    part,
                    inner: Box::new(m),
                })
            })
            .collect();
        MoveList { moves, complete }
    }

    fn to_json(&self) -> Value {
        let parts: Vec<Value> = self.parts.iter().map(|p| p.game.to_json()).collect();
        if self.misere.is_some() {
            json!({"game": "sum", "parts": parts, "misere": true})
        } else {
            json!({"game": "sum", "parts": parts})
        }
    }
}

impl Strategy for Sum {
    fn outcome(&self) -> Outcome {
        if let Some(solver) = &self.misere {
            return Outcome::from_to_move_wins(solver.to_move_wins(&self.all_heaps().0));
        }
        Outcome::from_to_move_wins(nim_sum(self.values()) != 0)
    }

    fn grundy(&self) -> Option<u64> {
        // Misère sums do not add by values.
        self.misere.is_none().then(|| nim_sum(self.values()))
    }

    fn winning_moves(&self, limit: usize) -> MoveList<PartMove> {
        let mut out = Collector::new(limit);
        if let Some(solver) = &self.misere {
            let (heaps, places) = self.all_heaps();
            if !solver.to_move_wins(&heaps) {
                return out.finish();
            }
            let complete = solver.winning_steps(&heaps, limit, &mut |k, step| {
                out.push(self.heap_move(places[k], step))
            });
            if !complete {
                out.mark_incomplete();
            }
            return out.finish();
        }
        let values = self.values();
        let x = nim_sum(values.iter().copied());
        if x == 0 {
            return out.finish();
        }
        for (part, (p, g)) in self.parts.iter().zip(values).enumerate() {
            if !out.has_room() {
                out.mark_incomplete();
                break;
            }
            let found = p.moves_to(g ^ x, limit);
            if !found.complete {
                out.mark_incomplete();
            }
            for m in found.moves {
                if !out.push(PartMove {
                    part,
                    inner: Box::new(m),
                }) {
                    break;
                }
            }
        }
        out.finish()
    }

    fn best_move(&self) -> Option<PartMove> {
        if self.misere.is_some() {
            if let Some(m) = self.winning_moves(1).moves.pop() {
                return Some(m);
            }
            let (heaps, places) = self.all_heaps();
            return patient_step(&heaps).map(|(k, s)| self.heap_move(places[k], s));
        }
        let values = self.values();
        let x = nim_sum(values.iter().copied());
        let at = |part: usize, m: Move| PartMove {
            part,
            inner: Box::new(m),
        };
        if x != 0 {
            // A part whose value has x's top bit can go down to g ^ x (mex).
            for (part, (p, &g)) in self.parts.iter().zip(&values).enumerate() {
                if g ^ x < g {
                    if let Some(m) = p.moves_to(g ^ x, 1).moves.pop() {
                        return Some(at(part, m));
                    }
                }
            }
        }
        // Lost: play on in a part that is lost by itself (its own perfect
        // player keeps it long), else in the first part that can move.
        let ongoing = |i: &usize| self.parts[*i].game.status() == Status::Ongoing;
        let part = (0..self.parts.len())
            .filter(ongoing)
            .find(|&i| values[i] == 0)
            .or_else(|| (0..self.parts.len()).find(ongoing))?;
        self.parts[part].game.best_move().map(|m| at(part, m))
    }
}

impl Entry for Sum {
    const GAMES: &'static [GameId] = GAMES;

    fn read(o: &mut Obj, _id: &str) -> Result<Self, Fail> {
        Sum::from_spec(o)
    }

    fn random(_id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError> {
        // A `mix` (or a random `sum`): 2 to 5 random parts.
        let count = rng.range(2, 5);
        // With S = 1 some games start over (no room to move): not drawn.
        let choices: Vec<(&str, u64)> = catalogue()
            .filter(|g| s > 1 || !g.over_at_1)
            .filter_map(|g| Some((g.id, g.in_mix?)))
            .collect();
        let parts = (0..count)
            .map(|_| {
                let (game, cap) = choices[rng.below(choices.len() as u64) as usize];
                random_spec(game, rng.next(), Some(s.min(cap)))
            })
            .collect::<Result<Vec<Value>, SpecError>>()?;
        Ok(json!({"game": "sum", "parts": parts}))
    }
}
