//! `darkraft`: World of Darkraft (Codeforces 138D). An n × m grid of cells
//! marked `L`, `R` or `X`, all active at the start. A move picks an active
//! cell; it and the active cells along its diagonal(s), outward in both
//! directions until an inactive cell or the edge, become inactive: `L` the
//! down-left/up-right diagonal (i + j constant), `R` the up-left/down-right one
//! (i - j constant), `X` both. Whoever cannot move loses.
//!
//! Strategy: cells with even and odd i + j never touch each other's diagonals,
//! so they are two independent games. Turned 45° (u = i + j, v = i - j) each
//! colour is a rectangle of a lattice; a move kills one row (`L`), one column
//! (`R`) or both (`X`) of the rectangle it lies in, splitting it into 2 or 4
//! smaller rectangles whose cells are all active (a wave always runs to the
//! rectangle's border, which earlier waves drew). The Grundy value of every
//! sub-rectangle of both colours is computed once per grid in `from_spec` and
//! shared; a position keeps its active cells and its current rectangles, and
//! its value is the xor of theirs.
//!
//! `to_json` shows the grid with `.` for inactive cells: a state view, not a
//! spec (`from_spec` takes only `L`, `R` and `X`, since an arbitrary pattern
//! of inactive cells would break the rectangle structure).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};

use crate::draw::SplitMix64;
use crate::error::{MoveError, SpecError};
use crate::game::{Collector, MoveList, Outcome, Rules, Status, Strategy, Summand};
use crate::games::nim::malformed;
use crate::games::{Entry, GameId};
use crate::json::{array_at, fail, index, kind, Fail, Obj};
use crate::limits::MAX_GRID;

/// The game ids of this family (with its presets, if any), for the
/// catalogue ([`crate::games::catalogue`]).
pub const GAMES: &[GameId] = &[
    GameId::new("darkraft", "World of Darkraft", 6, MAX_GRID as u64)
        .builds_tables()
        .in_mix(6),
];

/// Words of the active-cell bitset (MAX_GRID² bits).
const WORDS: usize = (MAX_GRID * MAX_GRID).div_ceil(64);

/// `{"row": r, "col": c}`: choose the active cell in row `r`, column `c` (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct CellPick {
    pub row: usize,
    pub col: usize,
}

impl CellPick {
    pub fn parse(v: &Value) -> Result<Self, Fail> {
        let mut o = Obj::new(v, "move")?;
        let row = o.req_u64("row", u64::MAX)?;
        let col = o.req_u64("col", u64::MAX)?;
        // Beyond usize it names no cell anyway; `check` reports it as missing.
        Ok(CellPick {
            row: usize::try_from(row).unwrap_or(usize::MAX),
            col: usize::try_from(col).unwrap_or(usize::MAX),
        })
    }
}

/// One colour turned 45°: cell (cu, cv) of an nu × nv lattice, some of which lie
/// outside the grid.
struct Colour {
    nu: usize,
    nv: usize,
    /// The letter at (cu, cv), `None` outside the grid.
    letter: Vec<Option<u8>>,
    /// Grundy values of the half-open rectangles [u0, u1) × [v0, v1).
    g: Vec<u8>,
}

impl Colour {
    fn idx(&self, u0: usize, u1: usize, v0: usize, v1: usize) -> usize {
        ((u0 * (self.nu + 1) + u1) * (self.nv + 1) + v0) * (self.nv + 1) + v1
    }

    fn g(&self, u0: usize, u1: usize, v0: usize, v1: usize) -> u64 {
        if u0 >= u1 || v0 >= v1 {
            return 0;
        }
        self.g[self.idx(u0, u1, v0, v1)] as u64
    }

    fn letter(&self, cu: usize, cv: usize) -> Option<u8> {
        self.letter[cu * self.nv + cv]
    }

    fn build(nu: usize, nv: usize, letter: Vec<Option<u8>>) -> Colour {
        let mut c = Colour {
            nu,
            nv,
            letter,
            g: vec![0; (nu + 1) * (nu + 1) * (nv + 1) * (nv + 1)],
        };
        // Every option of a rectangle is smaller in one side and no larger in
        // the other, so increasing (height, width) order sees them first.
        for du in 1..=nu {
            for dv in 1..=nv {
                for u0 in 0..=nu - du {
                    for v0 in 0..=nv - dv {
                        let value = c.compute(u0, u0 + du, v0, v0 + dv);
                        let i = c.idx(u0, u0 + du, v0, v0 + dv);
                        c.g[i] = value;
                    }
                }
            }
        }
        c
    }

    fn compute(&self, u0: usize, u1: usize, v0: usize, v1: usize) -> u8 {
        // A colour has at most MAX_GRID² / 2 = 200 cells, hence options, so
        // every value is below 256.
        let mut seen = [0u64; 4];
        for cu in u0..u1 {
            for cv in v0..v1 {
                if let Some(l) = self.letter(cu, cv) {
                    let r = Rect {
                        colour: 0,
                        u0: u0 as u8,
                        u1: u1 as u8,
                        v0: v0 as u8,
                        v1: v1 as u8,
                    };
                    let v = r
                        .split(l, cu, cv)
                        .iter()
                        .flatten()
                        .fold(0, |x, p| x ^ self.g(p.u0(), p.u1(), p.v0(), p.v1()));
                    seen[(v >> 6) as usize & 3] |= 1 << (v & 63);
                }
            }
        }
        (0..256u32)
            .find(|&v| seen[(v >> 6) as usize] & (1 << (v & 63)) == 0)
            .unwrap_or(255) as u8
    }
}

/// What one grid shares between all its positions.
struct Table {
    rows: usize,
    cols: usize,
    /// b'L', b'R' or b'X', row-major.
    letters: Vec<u8>,
    colours: [Colour; 2],
}

impl Table {
    /// (colour, cu, cv) of grid cell (i, j).
    fn turn(&self, i: usize, j: usize) -> (usize, usize, usize) {
        let u = i + j;
        let v = i + self.cols - 1 - j;
        (u & 1, u >> 1, v >> 1)
    }

    fn build(rows: usize, cols: usize, letters: Vec<u8>) -> Table {
        let mut dims = [(0usize, 0usize); 2];
        let turn = |i: usize, j: usize| {
            let u = i + j;
            let v = i + cols - 1 - j;
            (u & 1, u >> 1, v >> 1)
        };
        for i in 0..rows {
            for j in 0..cols {
                let (k, cu, cv) = turn(i, j);
                dims[k].0 = dims[k].0.max(cu + 1);
                dims[k].1 = dims[k].1.max(cv + 1);
            }
        }
        let mut cells: [Vec<Option<u8>>; 2] = dims.map(|(nu, nv)| vec![None; nu * nv]);
        for i in 0..rows {
            for j in 0..cols {
                let (k, cu, cv) = turn(i, j);
                cells[k][cu * dims[k].1 + cv] = Some(letters[i * cols + j]);
            }
        }
        let [c0, c1] = cells;
        Table {
            rows,
            cols,
            letters,
            colours: [
                Colour::build(dims[0].0, dims[0].1, c0),
                Colour::build(dims[1].0, dims[1].1, c1),
            ],
        }
    }
}

/// A half-open rectangle [u0, u1) × [v0, v1) of one colour's turned lattice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rect {
    colour: u8,
    u0: u8,
    u1: u8,
    v0: u8,
    v1: u8,
}

impl Rect {
    fn u0(&self) -> usize {
        self.u0 as usize
    }
    fn u1(&self) -> usize {
        self.u1 as usize
    }
    fn v0(&self) -> usize {
        self.v0 as usize
    }
    fn v1(&self) -> usize {
        self.v1 as usize
    }

    fn contains(&self, cu: usize, cv: usize) -> bool {
        (self.u0()..self.u1()).contains(&cu) && (self.v0()..self.v1()).contains(&cv)
    }

    /// The parts left when the cell (cu, cv) with letter `l` is chosen: `L`
    /// removes row cu, `R` column cv, `X` both. Parts may be empty.
    fn split(&self, l: u8, cu: usize, cv: usize) -> [Option<Rect>; 4] {
        let (cu, cv) = (cu as u8, cv as u8);
        let part = |u0, u1, v0, v1| {
            Some(Rect {
                colour: self.colour,
                u0,
                u1,
                v0,
                v1,
            })
        };
        match l {
            b'L' => [
                part(self.u0, cu, self.v0, self.v1),
                part(cu + 1, self.u1, self.v0, self.v1),
                None,
                None,
            ],
            b'R' => [
                part(self.u0, self.u1, self.v0, cv),
                part(self.u0, self.u1, cv + 1, self.v1),
                None,
                None,
            ],
            _ => [
                part(self.u0, cu, self.v0, cv),
                part(self.u0, cu, cv + 1, self.v1),
                part(cu + 1, self.u1, self.v0, cv),
                part(cu + 1, self.u1, cv + 1, self.v1),
            ],
        }
    }
}

/// A position: the grid (shared), which cells are active, and the rectangles
/// the active cells form in each colour.
#[derive(Clone)]
pub struct Darkraft {
    table: Arc<Table>,
    active: [u64; WORDS],
    /// Only rectangles holding at least one grid cell (all of them active).
    rects: Vec<Rect>,
}

// Positions are equal when they are the same game: same grid, same active
// cells. The rectangle list follows from these (up to empty rows and columns,
// which do not change any value).
impl PartialEq for Darkraft {
    fn eq(&self, other: &Self) -> bool {
        self.active == other.active
            && (Arc::ptr_eq(&self.table, &other.table)
                || (self.table.rows == other.table.rows
                    && self.table.cols == other.table.cols
                    && self.table.letters == other.table.letters))
    }
}

impl Eq for Darkraft {}

impl Hash for Darkraft {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.table.rows.hash(state);
        self.table.cols.hash(state);
        self.active.hash(state);
    }
}

impl fmt::Debug for Darkraft {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Darkraft")
            .field("grid", &self.view())
            .finish()
    }
}

impl Darkraft {
    pub fn from_spec(o: &mut Obj) -> Result<Self, Fail> {
        let path = o.path("grid");
        let grid = array_at(o.req("grid")?, &path, MAX_GRID)?;
        if grid.is_empty() {
            return fail(&path, "must have at least one row");
        }
        let mut cols = 0;
        let mut letters = Vec::new();
        for (i, row) in grid.iter().enumerate() {
            let row_path = index(&path, i);
            let Value::String(s) = row else {
                return fail(
                    &row_path,
                    format!("expected a string of L, R and X, got {}", kind(row)),
                );
            };
            let len = s.chars().count();
            if len == 0 {
                return fail(&row_path, "must not be empty");
            }
            if len > MAX_GRID {
                return fail(
                    &row_path,
                    format!("has {len} cells; the limit is {MAX_GRID}"),
                );
            }
            if i == 0 {
                cols = len;
            } else if len != cols {
                return fail(
                    &row_path,
                    format!(
                        "has {} but row 0 has {cols}: rows must have equal length",
                        crate::count::count(len as u64, "cell", "cells")
                    ),
                );
            }
            for (j, ch) in s.chars().enumerate() {
                match ch {
                    'L' | 'R' | 'X' => letters.push(ch as u8),
                    other => {
                        return fail(
                            &index(&row_path, j),
                            format!("expected L, R or X, got {other:?} (row {i}, column {j})"),
                        )
                    }
                }
            }
        }
        let table = Arc::new(Table::build(grid.len(), cols, letters));
        Ok(Self::start(table))
    }

    fn start(table: Arc<Table>) -> Darkraft {
        let mut active = [0u64; WORDS];
        for b in 0..table.rows * table.cols {
            active[b / 64] |= 1 << (b % 64);
        }
        let rects = (0..2)
            .filter(|&k| table.colours[k].nu > 0 && table.colours[k].nv > 0)
            .map(|k| Rect {
                colour: k as u8,
                u0: 0,
                u1: table.colours[k].nu as u8,
                v0: 0,
                v1: table.colours[k].nv as u8,
            })
            .collect();
        Darkraft {
            table,
            active,
            rects,
        }
    }

    pub fn rows(&self) -> usize {
        self.table.rows
    }

    pub fn cols(&self) -> usize {
        self.table.cols
    }

    fn is_active(&self, i: usize, j: usize) -> bool {
        let b = i * self.table.cols + j;
        self.active[b / 64] & (1 << (b % 64)) != 0
    }

    fn deactivate(&mut self, i: usize, j: usize) {
        let b = i * self.table.cols + j;
        self.active[b / 64] &= !(1 << (b % 64));
    }

    fn letter(&self, i: usize, j: usize) -> u8 {
        self.table.letters[i * self.table.cols + j]
    }

    fn active_cells(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let cols = self.table.cols;
        (0..self.table.rows * cols)
            .map(move |b| (b / cols, b % cols))
            .filter(|&(i, j)| self.is_active(i, j))
    }

    /// The grid rows with '.' for inactive cells.
    fn view(&self) -> Vec<String> {
        (0..self.table.rows)
            .map(|i| {
                (0..self.table.cols)
                    .map(|j| {
                        if self.is_active(i, j) {
                            self.letter(i, j) as char
                        } else {
                            '.'
                        }
                    })
                    .collect()
            })
            .collect()
    }

    fn colour(&self, r: &Rect) -> &Colour {
        &self.table.colours[r.colour as usize]
    }

    fn rect_value(&self, r: &Rect) -> u64 {
        self.colour(r).g(r.u0(), r.u1(), r.v0(), r.v1())
    }

    fn value(&self) -> u64 {
        self.rects.iter().fold(0, |x, r| x ^ self.rect_value(r))
    }

    /// The index in `rects` of the rectangle holding active cell (i, j).
    fn rect_of(&self, i: usize, j: usize) -> Option<usize> {
        let (k, cu, cv) = self.table.turn(i, j);
        self.rects
            .iter()
            .position(|r| r.colour as usize == k && r.contains(cu, cv))
    }

    /// The value of the rectangle holding (i, j) after (i, j) is chosen, and
    /// the index of that rectangle.
    fn split_value(&self, i: usize, j: usize) -> Option<(usize, u64)> {
        let at = self.rect_of(i, j)?;
        let r = self.rects[at];
        let (_, cu, cv) = self.table.turn(i, j);
        let c = self.colour(&r);
        let v = r
            .split(self.letter(i, j), cu, cv)
            .iter()
            .flatten()
            .fold(0, |x, p| x ^ c.g(p.u0(), p.u1(), p.v0(), p.v1()));
        Some((at, v))
    }

    fn has_cells(&self, r: &Rect) -> bool {
        let c = self.colour(r);
        (r.u0()..r.u1()).any(|cu| (r.v0()..r.v1()).any(|cv| c.letter(cu, cv).is_some()))
    }

    /// The diagonal steps a cell's wave takes.
    fn directions(l: u8) -> &'static [(isize, isize)] {
        match l {
            b'L' => &[(1, -1), (-1, 1)],
            b'R' => &[(1, 1), (-1, -1)],
            _ => &[(1, -1), (-1, 1), (1, 1), (-1, -1)],
        }
    }

    /// The cells a wave from (i, j) reaches, (i, j) included.
    fn wave(&self, i: usize, j: usize) -> Vec<(usize, usize)> {
        let mut out = vec![(i, j)];
        for &(di, dj) in Self::directions(self.letter(i, j)) {
            let (mut a, mut b) = (i, j);
            while let (Some(na), Some(nb)) = (a.checked_add_signed(di), b.checked_add_signed(dj)) {
                if na >= self.table.rows || nb >= self.table.cols || !self.is_active(na, nb) {
                    break;
                }
                out.push((na, nb));
                (a, b) = (na, nb);
            }
        }
        out
    }
}

impl Rules for Darkraft {
    type Move = CellPick;

    fn parse_move(&self, v: &Value) -> Result<CellPick, MoveError> {
        CellPick::parse(v).map_err(malformed)
    }

    fn check(&self, mv: &CellPick) -> Result<(), MoveError> {
        if self.status() != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        if mv.row >= self.table.rows {
            return Err(MoveError::NoSuch {
                what: "row",
                index: mv.row as u64,
                count: self.table.rows as u64,
                first: 0,
            });
        }
        if mv.col >= self.table.cols {
            return Err(MoveError::NoSuch {
                what: "column",
                index: mv.col as u64,
                count: self.table.cols as u64,
                first: 0,
            });
        }
        if !self.is_active(mv.row, mv.col) {
            return Err(MoveError::forbidden(format!(
                "cell (row {}, col {}) is inactive: only an active cell can be chosen",
                mv.row, mv.col
            )));
        }
        Ok(())
    }

    fn apply_checked(&mut self, mv: &CellPick) {
        let (i, j) = (mv.row, mv.col);
        for (a, b) in self.wave(i, j) {
            self.deactivate(a, b);
        }
        let (_, cu, cv) = self.table.turn(i, j);
        if let Some(at) = self.rect_of(i, j) {
            let r = self.rects.swap_remove(at);
            for p in r.split(self.letter(i, j), cu, cv).into_iter().flatten() {
                if p.u0 < p.u1 && p.v0 < p.v1 && self.has_cells(&p) {
                    self.rects.push(p);
                }
            }
        }
    }

    fn status(&self) -> Status {
        if self.active.iter().all(|&w| w == 0) {
            Status::Over {
                to_move_wins: false,
            }
        } else {
            Status::Ongoing
        }
    }

    fn legal_moves(&self, limit: usize) -> MoveList<CellPick> {
        let mut out = Collector::new(limit);
        for (row, col) in self.active_cells() {
            if !out.push(CellPick { row, col }) {
                break;
            }
        }
        out.finish()
    }

    fn to_json(&self) -> Value {
        json!({"game": "darkraft", "grid": self.view()})
    }
}

impl Summand for Darkraft {
    fn value(&self) -> u64 {
        Darkraft::value(self)
    }

    fn moves_to(&self, target: u64, limit: usize) -> MoveList<CellPick> {
        let mut out = Collector::new(limit);
        let x = self.value() ^ target;
        if x == 0 {
            return out.finish();
        }
        for (row, col) in self.active_cells() {
            let Some((at, after)) = self.split_value(row, col) else {
                continue;
            };
            if x ^ self.rect_value(&self.rects[at]) ^ after == 0 && !out.push(CellPick { row, col })
            {
                break;
            }
        }
        out.finish()
    }
}

impl Strategy for Darkraft {
    fn outcome(&self) -> Outcome {
        Outcome::from_to_move_wins(self.value() != 0)
    }

    fn grundy(&self) -> Option<u64> {
        Some(self.value())
    }

    fn winning_moves(&self, limit: usize) -> MoveList<CellPick> {
        self.moves_to(0, limit)
    }

    fn best_move(&self) -> Option<CellPick> {
        if let Some(m) = self.winning_moves(1).moves.into_iter().next() {
            return Some(m);
        }
        // Lost anyway: the move that deactivates the fewest cells.
        self.active_cells()
            .min_by_key(|&(i, j)| self.wave(i, j).len())
            .map(|(row, col)| CellPick { row, col })
    }
}

impl Entry for Darkraft {
    const GAMES: &'static [GameId] = GAMES;

    fn read(o: &mut Obj, _id: &str) -> Result<Self, Fail> {
        Darkraft::from_spec(o)
    }

    fn random(id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError> {
        let lo = (2 * s).div_ceil(3).max(1);
        let rows = rng.range(lo, s);
        let cols = rng.range(lo, s);
        let grid: Vec<String> = (0..rows)
            .map(|_| {
                (0..cols)
                    .map(|_| ['L', 'R', 'X'][rng.below(3) as usize])
                    .collect()
            })
            .collect();
        Ok(json!({"game": id, "grid": grid}))
    }
}
