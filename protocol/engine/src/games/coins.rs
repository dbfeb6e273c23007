//! `coins`: coin-turning games (Winning Ways, ch. 14; Conway, *On Numbers and
//! Games*, ch. 11). Coins lie heads (H) or tails (T) in a row or on a
//! rectangle; a move turns over a set of coins that the rule allows, of which
//! the last (the rightmost, or the one farthest from the corner) must go from
//! heads to tails. Presets: `mock-turtles` (turn one, two or three coins),
//! `ruler` (turn any run of consecutive coins), `turning-corners` (turn the
//! four corners of a rectangle); `coins` names the rule in a field.
//!
//! Strategy: a position is the sum of its heads, each a game of its own (a
//! move that turns a tail to heads adds a head, and turning a head twice is
//! turning it not at all, which xor does), so its value is the xor of the
//! values of the heads alone, and a move changes it by the xor of the values
//! of the coins it turns. The values, coins counted from 0 (checked against
//! the rules by brute force in the tests):
//! - Mock Turtles: coin i is worth the i-th odious number (an odd count of
//!   ones in binary; OEIS A000069): 1, 2, 4, 7, 8, 11, ..., i.e. 2i or 2i + 1.
//! - Ruler: coin i is worth the largest power of 2 dividing i + 1 (OEIS
//!   A006519, 2^(A001511 − 1)): 1, 2, 1, 4, 1, 2, 1, 8, ...
//! - Turning Corners: coin (x, y) is worth x ⊗ y, the nim-product (the
//!   Tartan theorem: the game is the product of two copies of "turn exactly
//!   two coins", in which coin x is worth x, a Nim heap of x;
//!   [`crate::nimber`]).
//!
//! A winning move is found from the values directly: for a head at `r` and
//! the change `d` the move must make, Mock Turtles needs one or two coins
//! left of `r` whose values xor to `d ⊕ v(r)` (odious numbers are found by
//! halving); Ruler a run ending at `r` whose values xor to `d`; Turning
//! Corners a rectangle with far corner (x, y) and near corner (a, b), whose
//! four values xor to (x ⊕ a) ⊗ (y ⊕ b), so b = y ⊕ (d ⊘ (x ⊕ a)), one
//! division per row above.

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::{json, Value};

use crate::draw::SplitMix64;
use crate::error::{MoveError, SpecError};
use crate::game::{Collector, MoveList, Outcome, Rules, Status, Strategy, Summand};
use crate::games::nim::malformed;
use crate::games::{Entry, GameId};
use crate::json::{array_at, fail, index, kind, u64_at, Fail, Obj};
use crate::limits::{MAX_COIN_ROW, MAX_CORNERS_SIDE};
use crate::nimber::{nim_inverse, nim_mul};

/// The game ids of this family, for the catalogue
/// ([`crate::games::catalogue`]). Not drawn in a `mix`: the catalogue's
/// order is part of every stored `mix` seed.
pub const GAMES: &[GameId] = &[
    GameId::new("coins", "Coin-turning game", 12, MAX_COIN_ROW as u64)
        .builds_tables()
        .over_at_1(),
    GameId::new("mock-turtles", "Mock Turtles", 12, MAX_COIN_ROW as u64),
    GameId::new("ruler", "Ruler", 12, MAX_COIN_ROW as u64),
    // A board of one row or one column has no rectangle to turn.
    GameId::new(
        "turning-corners",
        "Turning Corners",
        5,
        MAX_CORNERS_SIDE as u64,
    )
    .builds_tables()
    .over_at_1(),
];

/// Which coins a move may turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoinRule {
    MockTurtles,
    Ruler,
    TurningCorners,
}

impl CoinRule {
    pub const ALL: [CoinRule; 3] = [
        CoinRule::MockTurtles,
        CoinRule::Ruler,
        CoinRule::TurningCorners,
    ];

    /// Its game id (and its name in a `coins` spec's `rule`).
    pub fn id(self) -> &'static str {
        match self {
            CoinRule::MockTurtles => "mock-turtles",
            CoinRule::Ruler => "ruler",
            CoinRule::TurningCorners => "turning-corners",
        }
    }

    fn from_id(id: &str) -> Option<CoinRule> {
        CoinRule::ALL.into_iter().find(|r| r.id() == id)
    }

    /// Whether the coins lie on a rectangle (else in a row).
    pub fn is_grid(self) -> bool {
        self == CoinRule::TurningCorners
    }

    fn name(self) -> &'static str {
        match self {
            CoinRule::MockTurtles => "Mock Turtles",
            CoinRule::Ruler => "Ruler",
            CoinRule::TurningCorners => "Turning Corners",
        }
    }
}

/// Coins on a board of `rows` × `cols` (one row for the row games), heads
/// `true`, row by row.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Coins {
    pub rule: CoinRule,
    rows: usize,
    cols: usize,
    heads: Vec<bool>,
}

/// A coin a move names: its number in a row (from 0, at the left), or
/// `[row, column]` on a rectangle (from 0, at the top left).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(untagged)]
pub enum Coin {
    At(usize),
    Cell([usize; 2]),
}

impl std::fmt::Display for Coin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Coin::At(i) => write!(f, "{i}"),
            Coin::Cell([r, c]) => write!(f, "[{r}, {c}]"),
        }
    }
}

/// `{"turn": [coins...]}`: the coins turned over, in any order (kept in
/// ascending order: the last is the one that goes from heads to tails).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct CoinMove {
    pub turn: Vec<Coin>,
}

impl CoinMove {
    pub fn parse(v: &Value) -> Result<Self, Fail> {
        let mut o = Obj::new(v, "move")?;
        let path = o.path("turn");
        let list = array_at(o.req("turn")?, &path, MAX_COIN_ROW)?;
        let mut turn = Vec::with_capacity(list.len());
        for (i, c) in list.iter().enumerate() {
            let at = index(&path, i);
            // Beyond usize a number names no coin anyway; `check` says so.
            let place = |x: &Value, at: &str| {
                u64_at(x, at, u64::MAX).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            };
            turn.push(match c {
                Value::Array(pair) if pair.len() == 2 => Coin::Cell([
                    place(&pair[0], &index(&at, 0))?,
                    place(&pair[1], &index(&at, 1))?,
                ]),
                Value::Number(_) => Coin::At(place(c, &at)?),
                other => {
                    return fail(
                        &at,
                        format!(
                            "expected a coin: its number in a row, or [row, column], got {}",
                            kind(other)
                        ),
                    )
                }
            });
        }
        o.finish(&[])?;
        turn.sort_unstable();
        Ok(CoinMove { turn })
    }
}

/// Mock Turtles: the i-th odious number.
pub fn odious(i: u64) -> u64 {
    2 * i + u64::from(i.count_ones().is_multiple_of(2))
}

/// Ruler: the largest power of 2 dividing i + 1.
pub fn ruler(i: u64) -> u64 {
    let n = i + 1;
    n & n.wrapping_neg()
}

/// The inverses of the nimbers below 256 (0 for 0): Turning Corners' values
/// and the differences of its coordinates all lie in that field.
fn inverse_below_256(x: u64) -> u64 {
    static TABLE: OnceLock<Vec<u8>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        (0..256u64)
            .map(|x| nim_inverse(x).unwrap_or(0) as u8)
            .collect()
    });
    table[x as usize] as u64
}

impl Coins {
    fn from_spec(o: &mut Obj, rule: CoinRule) -> Result<Self, Fail> {
        let path = o.path("coins");
        let v = o.req("coins")?;
        if !rule.is_grid() {
            let heads = read_row(v, &path, MAX_COIN_ROW)?;
            return Ok(Coins {
                rule,
                rows: 1,
                cols: heads.len(),
                heads,
            });
        }
        // Built once per process, here rather than in the first bot move.
        inverse_below_256(1);
        let rows = match v {
            Value::Array(rows) => rows,
            other => {
                return fail(
                    &path,
                    format!(
                        "expected an array of rows, each a string of 'H' (heads) and 'T' (tails), got {}",
                        kind(other)
                    ),
                )
            }
        };
        if rows.is_empty() {
            return fail(&path, "must hold at least one row");
        }
        if rows.len() > MAX_CORNERS_SIDE {
            return fail(
                &path,
                format!("has {} rows; the limit is {MAX_CORNERS_SIDE}", rows.len()),
            );
        }
        let mut heads = Vec::new();
        let mut cols = 0;
        for (r, row) in rows.iter().enumerate() {
            let at = index(&path, r);
            let read = read_row(row, &at, MAX_CORNERS_SIDE)?;
            if r == 0 {
                cols = read.len();
            } else if read.len() != cols {
                return fail(
                    &at,
                    format!(
                        "has {} coins but row 0 has {cols}: every row must be as long",
                        read.len()
                    ),
                );
            }
            heads.extend(read);
        }
        Ok(Coins {
            rule,
            rows: rows.len(),
            cols,
            heads,
        })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Whether the coin at (row, col) shows heads.
    pub fn is_heads(&self, row: usize, col: usize) -> bool {
        self.heads[row * self.cols + col]
    }

    /// The coin at (row, col) as a move names it.
    fn coin(&self, row: usize, col: usize) -> Coin {
        if self.rule.is_grid() {
            Coin::Cell([row, col])
        } else {
            Coin::At(col)
        }
    }

    /// Where a coin lies, if it is of this board's kind and on it.
    fn place(&self, c: Coin) -> Option<(usize, usize)> {
        match (self.rule.is_grid(), c) {
            (false, Coin::At(i)) if i < self.cols => Some((0, i)),
            (true, Coin::Cell([r, col])) if r < self.rows && col < self.cols => Some((r, col)),
            _ => None,
        }
    }

    /// A head's worth, on its own.
    fn coin_value(&self, row: usize, col: usize) -> u64 {
        match self.rule {
            CoinRule::MockTurtles => odious(col as u64),
            CoinRule::Ruler => ruler(col as u64),
            CoinRule::TurningCorners => nim_mul(row as u64, col as u64),
        }
    }

    /// The heads, in order (row by row, left to right).
    fn heads(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.heads
            .iter()
            .enumerate()
            .filter(|&(_, &h)| h)
            .map(|(i, _)| (i / self.cols, i % self.cols))
    }

    /// The heads a move may end on (in Turning Corners, not on the edges:
    /// no rectangle has its far corner there).
    fn movable_heads(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let grid = self.rule.is_grid();
        self.heads()
            .filter(move |&(r, c)| !grid || (r > 0 && c > 0))
    }

    /// Every head with its value: the parts whose xor is the position's.
    pub fn head_values(&self) -> Vec<(Coin, u64)> {
        self.heads()
            .map(|(r, c)| (self.coin(r, c), self.coin_value(r, c)))
            .collect()
    }

    pub fn value(&self) -> u64 {
        self.heads().fold(0, |x, (r, c)| x ^ self.coin_value(r, c))
    }

    /// The board as the spec writes it: one string of H and T per row.
    pub fn view(&self) -> Vec<String> {
        self.heads
            .chunks(self.cols.max(1))
            .map(|row| row.iter().map(|&h| if h { 'H' } else { 'T' }).collect())
            .collect()
    }

    /// Every move ending on the head at (x, y), in order, each to `out`
    /// while `keep` accepts it; false once `out` is full.
    fn moves_ending_at(
        &self,
        (x, y): (usize, usize),
        mut keep: impl FnMut(u64) -> bool,
        out: &mut Collector<CoinMove>,
    ) -> bool {
        let v = |r: usize, c: usize| self.coin_value(r, c);
        let mut push = |turn: Vec<Coin>, change: u64| !keep(change) || out.push(CoinMove { turn });
        match self.rule {
            CoinRule::MockTurtles => {
                let last = v(0, y);
                if !push(vec![Coin::At(y)], last) {
                    return false;
                }
                for a in 0..y {
                    if !push(vec![Coin::At(a), Coin::At(y)], last ^ v(0, a)) {
                        return false;
                    }
                    for b in a + 1..y {
                        let turn = vec![Coin::At(a), Coin::At(b), Coin::At(y)];
                        if !push(turn, last ^ v(0, a) ^ v(0, b)) {
                            return false;
                        }
                    }
                }
            }
            CoinRule::Ruler => {
                let mut change = 0;
                for l in (0..=y).rev() {
                    change ^= v(0, l);
                    if !push((l..=y).map(Coin::At).collect(), change) {
                        return false;
                    }
                }
            }
            CoinRule::TurningCorners => {
                for a in 0..x {
                    for b in 0..y {
                        let turn = vec![
                            Coin::Cell([a, b]),
                            Coin::Cell([a, y]),
                            Coin::Cell([x, b]),
                            Coin::Cell([x, y]),
                        ];
                        let change = nim_mul((x ^ a) as u64, (y ^ b) as u64);
                        if !push(turn, change) {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }

    /// The moves that change the value by `d`, found from the values rather
    /// than by trying every move (see the module doc), at most `limit`.
    fn moves_changing_by(&self, d: u64, limit: usize) -> MoveList<CoinMove> {
        let mut out = Collector::new(limit);
        if d == 0 {
            return out.finish();
        }
        for (x, y) in self.movable_heads() {
            match self.rule {
                CoinRule::MockTurtles => {
                    let t = d ^ odious(y as u64);
                    if t == 0
                        && !out.push(CoinMove {
                            turn: vec![Coin::At(y)],
                        })
                    {
                        break;
                    }
                    // One coin a < y worth t: t odious, a = t / 2.
                    let a = (t / 2) as usize;
                    if t != 0
                        && odious(t / 2) == t
                        && a < y
                        && !out.push(CoinMove {
                            turn: vec![Coin::At(a), Coin::At(y)],
                        })
                    {
                        break;
                    }
                    // Two coins a < b < y worth t together.
                    let mut full = false;
                    for a in 0..y {
                        let u = t ^ odious(a as u64);
                        let b = (u / 2) as usize;
                        if odious(u / 2) == u
                            && a < b
                            && b < y
                            && !out.push(CoinMove {
                                turn: vec![Coin::At(a), Coin::At(b), Coin::At(y)],
                            })
                        {
                            full = true;
                            break;
                        }
                    }
                    if full {
                        break;
                    }
                }
                CoinRule::Ruler => {
                    let mut change = 0;
                    let mut full = false;
                    for l in (0..=y).rev() {
                        change ^= ruler(l as u64);
                        if change == d
                            && !out.push(CoinMove {
                                turn: (l..=y).map(Coin::At).collect(),
                            })
                        {
                            full = true;
                            break;
                        }
                    }
                    if full {
                        break;
                    }
                }
                CoinRule::TurningCorners => {
                    // (x ⊕ a) ⊗ (y ⊕ b) = d, all below 256 (the sides are at
                    // most 64): y ⊕ b = d ⊗ (x ⊕ a)^-1.
                    let mut full = false;
                    for a in 0..x {
                        let f = nim_mul(d, inverse_below_256((x ^ a) as u64)) as usize;
                        let b = y ^ f;
                        if b < y
                            && !out.push(CoinMove {
                                turn: vec![
                                    Coin::Cell([a, b]),
                                    Coin::Cell([a, y]),
                                    Coin::Cell([x, b]),
                                    Coin::Cell([x, y]),
                                ],
                            })
                        {
                            full = true;
                            break;
                        }
                    }
                    if full {
                        break;
                    }
                }
            }
        }
        out.finish()
    }
}

/// A row of coins: a string of 'H' and 'T', 1 to `max` of them.
fn read_row(v: &Value, path: &str, max: usize) -> Result<Vec<bool>, Fail> {
    let Value::String(s) = v else {
        return fail(
            path,
            format!(
                "expected a string of 'H' (heads) and 'T' (tails), got {}",
                kind(v)
            ),
        );
    };
    let len = s.chars().count();
    if len > max {
        return fail(path, format!("has {len} coins; the limit is {max}"));
    }
    if len == 0 {
        return fail(path, "must hold at least one coin");
    }
    s.chars()
        .enumerate()
        .map(|(i, ch)| match ch {
            'H' => Ok(true),
            'T' => Ok(false),
            other => fail(
                path,
                format!("coin {i} is {other:?}; only 'H' (heads) and 'T' (tails) are allowed"),
            ),
        })
        .collect()
}

impl Rules for Coins {
    type Move = CoinMove;

    fn parse_move(&self, v: &Value) -> Result<CoinMove, MoveError> {
        CoinMove::parse(v).map_err(malformed)
    }

    fn check(&self, mv: &CoinMove) -> Result<(), MoveError> {
        if self.status() != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        let name = self.rule.name();
        let Some(&last) = mv.turn.last() else {
            return Err(MoveError::forbidden("a move turns at least one coin"));
        };
        let mut places = Vec::with_capacity(mv.turn.len());
        for &c in &mv.turn {
            let Some(p) = self.place(c) else {
                return Err(match (self.rule.is_grid(), c) {
                    (false, Coin::At(i)) => MoveError::NoSuch {
                        what: "coin",
                        index: i as u64,
                        count: self.cols as u64,
                        first: 0,
                    },
                    (false, Coin::Cell(_)) => MoveError::forbidden(format!(
                        "the coins of {name} lie in a row: name coin {c} by its number, from 0"
                    )),
                    (true, Coin::At(i)) => MoveError::forbidden(format!(
                        "the coins of {name} lie on a rectangle: name a coin as [row, column], not {i}"
                    )),
                    (true, Coin::Cell(_)) => MoveError::forbidden(format!(
                        "there is no coin {c}: the board has {} rows and {} columns, numbered from 0",
                        self.rows, self.cols
                    )),
                });
            };
            places.push(p);
        }
        if let Some(w) = mv.turn.windows(2).find(|w| w[0] == w[1]) {
            return Err(MoveError::forbidden(format!(
                "coin {} is named twice: a move turns each coin once",
                w[0]
            )));
        }
        match self.rule {
            CoinRule::MockTurtles if mv.turn.len() > 3 => {
                return Err(MoveError::forbidden(format!(
                    "in {name} a move turns one, two or three coins, not {}",
                    mv.turn.len()
                )))
            }
            CoinRule::Ruler => {
                let (first, end) = (places[0].1, places[places.len() - 1].1);
                if end - first + 1 != places.len() {
                    return Err(MoveError::forbidden(format!(
                        "in {name} the coins turned are a run of consecutive coins: coins {first} to {end} are {}, not {}",
                        end - first + 1,
                        places.len()
                    )));
                }
            }
            CoinRule::TurningCorners => {
                let corners = match places.as_slice() {
                    &[(a, b), (a2, y), (x, b2), (x2, y2)] => {
                        a == a2 && x == x2 && b == b2 && y == y2 && a < x && b < y
                    }
                    _ => false,
                };
                if !corners {
                    return Err(MoveError::forbidden(format!(
                        "in {name} a move turns the four corners of a rectangle: [a, b], [a, y], [x, b] and [x, y] with a < x and b < y"
                    )));
                }
            }
            _ => {}
        }
        let (r, c) = places[places.len() - 1];
        if !self.is_heads(r, c) {
            let which = if self.rule.is_grid() {
                "the corner farthest from [0, 0]"
            } else {
                "the rightmost coin turned"
            };
            return Err(MoveError::forbidden(format!(
                "{which}, {last}, must go from heads to tails, but it shows tails"
            )));
        }
        Ok(())
    }

    fn apply_checked(&mut self, mv: &CoinMove) {
        for &c in &mv.turn {
            if let Some((r, col)) = self.place(c) {
                let h = &mut self.heads[r * self.cols + col];
                *h = !*h;
            }
        }
    }

    fn status(&self) -> Status {
        if self.movable_heads().next().is_none() {
            Status::Over {
                to_move_wins: false,
            }
        } else {
            Status::Ongoing
        }
    }

    fn legal_moves(&self, limit: usize) -> MoveList<CoinMove> {
        let mut out = Collector::new(limit);
        for head in self.movable_heads() {
            if !self.moves_ending_at(head, |_| true, &mut out) {
                break;
            }
        }
        out.finish()
    }

    fn to_json(&self) -> Value {
        let id = self.rule.id();
        let view = self.view();
        if self.rule.is_grid() {
            json!({"game": id, "coins": view})
        } else {
            json!({"game": id, "coins": view.first().cloned().unwrap_or_default()})
        }
    }
}

impl Summand for Coins {
    fn value(&self) -> u64 {
        Coins::value(self)
    }

    fn moves_to(&self, target: u64, limit: usize) -> MoveList<CoinMove> {
        self.moves_changing_by(self.value() ^ target, limit)
    }
}

impl Strategy for Coins {
    fn outcome(&self) -> Outcome {
        Outcome::from_to_move_wins(self.value() != 0)
    }

    fn grundy(&self) -> Option<u64> {
        Some(self.value())
    }

    fn winning_moves(&self, limit: usize) -> MoveList<CoinMove> {
        self.moves_to(0, limit)
    }

    fn best_move(&self) -> Option<CoinMove> {
        if let Some(m) = self.winning_moves(1).moves.into_iter().next() {
            return Some(m);
        }
        // Lost anyway: the smallest move, at the first head that can move
        // (one coin; in Turning Corners the smallest rectangle).
        let (x, y) = self.movable_heads().next()?;
        Some(CoinMove {
            turn: if self.rule.is_grid() {
                vec![
                    self.coin(x - 1, y - 1),
                    self.coin(x - 1, y),
                    self.coin(x, y - 1),
                    self.coin(x, y),
                ]
            } else {
                vec![self.coin(x, y)]
            },
        })
    }
}

impl Entry for Coins {
    const GAMES: &'static [GameId] = GAMES;

    fn read(o: &mut Obj, id: &str) -> Result<Self, Fail> {
        let rule = match CoinRule::from_id(id) {
            Some(rule) => rule,
            None => {
                let path = o.path("rule");
                match o.req("rule")? {
                    Value::String(s) => CoinRule::from_id(s).map_or_else(
                        || {
                            fail(
                                &path,
                                format!(
                                    "unknown rule {s:?} (rules: \"mock-turtles\", \"ruler\", \"turning-corners\")"
                                ),
                            )
                        },
                        Ok,
                    )?,
                    other => {
                        return fail(
                            &path,
                            format!("expected a rule's name, got {}", kind(other)),
                        )
                    }
                }
            }
        };
        Coins::from_spec(o, rule)
    }

    fn random(id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError> {
        let rule = match CoinRule::from_id(id) {
            Some(rule) => rule,
            None => CoinRule::ALL[rng.below(3) as usize],
        };
        let coins = if rule.is_grid() {
            let s = s.min(MAX_CORNERS_SIDE as u64);
            let lo = (2 * s).div_ceil(3).max(1);
            let (rows, cols) = (rng.range(lo, s) as usize, rng.range(lo, s) as usize);
            let mut grid: Vec<Vec<char>> = (0..rows)
                .map(|_| {
                    (0..cols)
                        .map(|_| if rng.below(2) == 1 { 'H' } else { 'T' })
                        .collect()
                })
                .collect();
            // Not over before the first move, where a rectangle fits.
            let movable = grid
                .iter()
                .skip(1)
                .any(|row| row.iter().skip(1).any(|&c| c == 'H'));
            if !movable && rows > 1 && cols > 1 {
                grid[rows - 1][cols - 1] = 'H';
            }
            json!(grid
                .into_iter()
                .map(|row| row.into_iter().collect::<String>())
                .collect::<Vec<_>>())
        } else {
            let n = rng.range((2 * s / 3).max(1), s) as usize;
            let mut row: Vec<char> = (0..n)
                .map(|_| if rng.below(2) == 1 { 'H' } else { 'T' })
                .collect();
            if !row.contains(&'H') {
                row[n - 1] = 'H';
            }
            json!(row.into_iter().collect::<String>())
        };
        Ok(if CoinRule::from_id(id).is_some() {
            json!({"game": id, "coins": coins})
        } else {
            json!({"game": id, "rule": rule.id(), "coins": coins})
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of one head by the rules alone: the mex of the values of
    /// the positions its moves leave (heads left of it, each worth its own
    /// value, by the same recursion).
    fn by_the_rules(rule: CoinRule, n: usize) -> Vec<u64> {
        let mut g: Vec<u64> = Vec::new();
        for y in 0..n {
            let p = Coins {
                rule,
                rows: 1,
                cols: n,
                heads: (0..n).map(|i| i == y).collect(),
            };
            let mut out = Collector::new(usize::MAX);
            p.moves_ending_at((0, y), |_| true, &mut out);
            let mut options: Vec<u64> = out
                .finish()
                .moves
                .iter()
                .map(|m| {
                    m.turn
                        .iter()
                        .filter(|&&c| c != Coin::At(y))
                        .map(|&c| match c {
                            Coin::At(i) => g[i],
                            Coin::Cell(_) => unreachable!(),
                        })
                        .fold(0, |a, b| a ^ b)
                })
                .collect();
            g.push(crate::oracle::mex(&mut options));
        }
        g
    }

    #[test]
    fn mock_turtles_values_are_the_odious_numbers() {
        let want: Vec<u64> = (0..60).map(odious).collect();
        assert_eq!(by_the_rules(CoinRule::MockTurtles, 60), want);
        // OEIS A000069.
        assert_eq!(
            want[..20],
            [1, 2, 4, 7, 8, 11, 13, 14, 16, 19, 21, 22, 25, 26, 28, 31, 32, 35, 37, 38]
        );
    }

    #[test]
    fn ruler_values_are_the_ruler_function() {
        let want: Vec<u64> = (0..64).map(ruler).collect();
        assert_eq!(by_the_rules(CoinRule::Ruler, 64), want);
        // OEIS A006519 (2^(A001511(n) - 1)).
        assert_eq!(
            want[..16],
            [1, 2, 1, 4, 1, 2, 1, 8, 1, 2, 1, 4, 1, 2, 1, 16]
        );
    }

    /// Turning Corners: the value of one head by the rules (mex over its
    /// rectangles of the other three corners' values), against x ⊗ y.
    #[test]
    fn turning_corners_values_are_nim_products() {
        let n = 16;
        let mut g = vec![vec![0u64; n]; n];
        for x in 0..n {
            for y in 0..n {
                let mut options = Vec::new();
                for a in 0..x {
                    for b in 0..y {
                        options.push(g[a][b] ^ g[a][y] ^ g[x][b]);
                    }
                }
                g[x][y] = crate::oracle::mex(&mut options);
                assert_eq!(g[x][y], nim_mul(x as u64, y as u64), "({x}, {y})");
            }
        }
    }

    #[test]
    fn inverses_below_256() {
        for x in 1..256u64 {
            assert_eq!(nim_mul(x, inverse_below_256(x)), 1, "{x}");
        }
    }
}
