//! The heap rules of the `heaps` game: how many tokens a move may take from one
//! heap, whether the rest may be split, and each rule's Grundy function.

use std::fmt;
use std::sync::Arc;

use serde_json::{json, Value};

use super::grundys_game::{self, MAX_GRUNDYS_GAME_HEAP};
use super::sequence::{self, Removal, Sequence, Shape};
use crate::json::{fail, kind, u64_array_at, u64_at, Fail};
use crate::limits::{MAX_HEAP_SIZE, MAX_OCTAL_HEAP, MAX_SET_HEAP};

/// Largest entry of a subtraction set, and most entries.
pub const MAX_SET_ELEMENT: u64 = 1_000_000;
pub const MAX_SET_LEN: usize = 100;
/// Most digits after the point of an octal code.
pub const MAX_OCTAL_DIGITS: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// Take any k >= 1.
    Any,
    /// Take 1..=k (the Bash game).
    UpTo(u64),
    /// Take exactly one of the listed amounts.
    Set(Vec<u64>),
    /// Take any odd number.
    Odd,
    /// Take at least half (rounded up).
    Half,
    /// An octal take-and-break game; the code as written, e.g. "0.77".
    Octal(String),
    /// Take any k >= 1, or split into two non-empty heaps.
    Lasker,
    /// Grundy's game: split into two unequal non-empty heaps (take nothing).
    Grundy,
}

/// A heap rule, with its Grundy sequence when it needs one.
#[derive(Debug, Clone)]
pub struct Rule {
    pub kind: RuleKind,
    /// For `set` and `octal`: the move shape and its shared Grundy sequence.
    table: Option<(Shape, Arc<Sequence>)>,
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}
impl Eq for Rule {}
impl std::hash::Hash for Rule {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.kind.hash(state)
    }
}

impl fmt::Display for RuleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleKind::Any => write!(f, "any"),
            RuleKind::UpTo(k) => write!(f, "take 1 to {k}"),
            RuleKind::Set(s) => {
                let s: Vec<String> = s.iter().map(u64::to_string).collect();
                write!(f, "take one of {{{}}}", s.join(", "))
            }
            RuleKind::Odd => write!(f, "take an odd number"),
            RuleKind::Half => write!(f, "take at least half"),
            RuleKind::Octal(code) => write!(f, "octal {code}"),
            RuleKind::Lasker => write!(f, "Lasker's Nim"),
            RuleKind::Grundy => write!(f, "Grundy's game"),
        }
    }
}

/// A move inside one heap: take `take`, and leave the rest as one heap (or none),
/// or split it into the two heaps of `split`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapStep {
    pub take: u64,
    pub split: Option<[u64; 2]>,
}

impl Rule {
    /// Take any number: a Nim heap.
    pub fn any() -> Rule {
        Rule {
            kind: RuleKind::Any,
            table: None,
        }
    }

    pub fn new(kind: RuleKind) -> Result<Rule, String> {
        let table = match &kind {
            RuleKind::Set(s) => {
                let shape = Shape {
                    removals: s
                        .iter()
                        .map(|&take| Removal {
                            take,
                            none: true,
                            one: true,
                            two: false,
                        })
                        .collect(),
                };
                let seq = sequence::shared(&shape, MAX_SET_HEAP);
                Some((shape, seq))
            }
            RuleKind::Octal(code) => {
                let shape = octal_shape(code)?;
                let seq = sequence::shared(&shape, MAX_OCTAL_HEAP);
                Some((shape, seq))
            }
            _ => None,
        };
        Ok(Rule { kind, table })
    }

    pub fn sequence(&self) -> Option<&Arc<Sequence>> {
        self.table.as_ref().map(|(_, s)| s)
    }

    /// For `set` and `octal`: the move shape and the Grundy sequence.
    pub fn shape_and_sequence(&self) -> Option<(&Shape, &Arc<Sequence>)> {
        self.table.as_ref().map(|(shape, s)| (shape, s))
    }

    /// True when some move leaves two heaps (octal splits, Lasker's Nim).
    pub fn splits(&self) -> bool {
        match &self.kind {
            RuleKind::Lasker | RuleKind::Grundy => true,
            RuleKind::Octal(_) => self.table.as_ref().is_some_and(|(s, _)| s.splits()),
            _ => false,
        }
    }

    /// The largest heap this rule can be analysed at.
    pub fn max_heap(&self) -> u64 {
        match (&self.kind, &self.table) {
            (RuleKind::Grundy, _) => MAX_GRUNDYS_GAME_HEAP,
            (_, Some((_, seq))) => seq.known_up_to().min(MAX_HEAP_SIZE),
            (_, None) => MAX_HEAP_SIZE,
        }
    }

    /// Builds what g(n) needs up to heap `n` (the tier of Grundy's game's
    /// table): the spec reader calls it, so that the work is done when the
    /// spec is read, where the server expects tables to be built (off the
    /// threads that carry moves), not at the first move analysed.
    pub fn prepare(&self, n: u64) {
        if self.kind == RuleKind::Grundy {
            grundys_game::value(n);
        }
    }

    /// g(n). Callers only ask within `max_heap` (the spec reader enforces it).
    pub fn grundy(&self, n: u64) -> u64 {
        match &self.kind {
            RuleKind::Any => n,
            RuleKind::UpTo(k) => n % (k + 1),
            RuleKind::Odd => n % 2,
            RuleKind::Half => 64 - n.leading_zeros() as u64,
            RuleKind::Lasker => lasker_grundy(n),
            RuleKind::Grundy => grundys_game::value(n),
            RuleKind::Set(_) | RuleKind::Octal(_) => {
                self.sequence().and_then(|s| s.get(n)).unwrap_or(0)
            }
        }
    }

    /// Why `step` is not a legal move from a heap of `n`, or Ok.
    pub fn check(&self, n: u64, step: HeapStep) -> Result<(), String> {
        let HeapStep { take, split } = step;
        if take > n {
            return Err(format!("the heap has only {n}, cannot take {take}"));
        }
        let rest = n - take;
        if let Some([a, b]) = split {
            if a == 0 || b == 0 {
                return Err("both heaps left by a split must be non-empty".into());
            }
            if a.checked_add(b) != Some(rest) {
                return Err(format!(
                    "the heaps left must add up to {rest} ({n} minus {take}), not {a} + {b}"
                ));
            }
        }
        let no_split = || {
            if split.is_some() {
                Err(format!("rule {} never splits a heap", self.kind))
            } else {
                Ok(())
            }
        };
        let at_least_one = || {
            if take == 0 {
                Err("a move must take at least one token".to_string())
            } else {
                Ok(())
            }
        };
        match &self.kind {
            RuleKind::Any => at_least_one().and_then(|_| no_split()),
            RuleKind::UpTo(k) => {
                at_least_one()?;
                no_split()?;
                if take > *k {
                    return Err(format!("at most {k} may be taken at once, not {take}"));
                }
                Ok(())
            }
            RuleKind::Set(s) => {
                no_split()?;
                if !s.contains(&take) {
                    return Err(format!("{take} is not an allowed amount ({})", self.kind));
                }
                Ok(())
            }
            RuleKind::Odd => {
                at_least_one()?;
                no_split()?;
                if take % 2 == 0 {
                    return Err(format!("only odd amounts may be taken, not {take}"));
                }
                Ok(())
            }
            RuleKind::Half => {
                at_least_one()?;
                no_split()?;
                let half = n.div_ceil(2);
                if take < half {
                    return Err(format!(
                        "at least half the heap ({half} of {n}) must be taken, not {take}"
                    ));
                }
                Ok(())
            }
            RuleKind::Lasker => match split {
                Some(_) if take != 0 => Err("a Lasker split takes nothing: take must be 0".into()),
                Some(_) => Ok(()),
                None => at_least_one(),
            },
            RuleKind::Grundy => match split {
                None => Err(
                    "in Grundy's game every move splits a heap in two unequal heaps: give the two heaps left".into(),
                ),
                Some(_) if take != 0 => Err("a split in Grundy's game takes nothing: take must be 0".into()),
                Some([a, b]) if a == b => Err(format!(
                    "the two heaps left must be unequal: {a} and {b} are not"
                )),
                Some(_) => Ok(()),
            },
            RuleKind::Octal(code) => {
                let removal = self
                    .table
                    .as_ref()
                    .and_then(|(shape, _)| shape.removals.iter().find(|r| r.take == take));
                let Some(r) = removal else {
                    return Err(format!("octal {code} never lets a move take {take}"));
                };
                let ok = match (split, rest) {
                    (Some(_), _) => r.two,
                    (None, 0) => r.none,
                    (None, _) => r.one,
                };
                if ok {
                    Ok(())
                } else {
                    let leaves = match (split, rest) {
                        (Some(_), _) => "two heaps",
                        (None, 0) => "no heap",
                        (None, _) => "one heap",
                    };
                    Err(format!(
                        "octal {code} does not let a move that takes {take} leave {leaves}"
                    ))
                }
            }
        }
    }

    /// True if some move is possible from a heap of `n`.
    pub fn can_move(&self, n: u64) -> bool {
        let mut any = false;
        self.steps(n, &mut |_| {
            any = true;
            false
        });
        any
    }

    /// Every move from a heap of `n`, smallest take first; `emit` answers false to
    /// stop the enumeration.
    pub fn steps(&self, n: u64, emit: &mut dyn FnMut(HeapStep) -> bool) {
        let single = |take: u64| HeapStep { take, split: None };
        match &self.kind {
            RuleKind::Any | RuleKind::Lasker => {
                for take in 1..=n {
                    if !emit(single(take)) {
                        return;
                    }
                }
                if self.kind == RuleKind::Lasker {
                    for a in 1..=n / 2 {
                        if !emit(HeapStep {
                            take: 0,
                            split: Some([a, n - a]),
                        }) {
                            return;
                        }
                    }
                }
            }
            RuleKind::Grundy => {
                for a in 1..n.div_ceil(2) {
                    if !emit(HeapStep {
                        take: 0,
                        split: Some([a, n - a]),
                    }) {
                        return;
                    }
                }
            }
            RuleKind::UpTo(k) => {
                for take in 1..=n.min(*k) {
                    if !emit(single(take)) {
                        return;
                    }
                }
            }
            RuleKind::Odd => {
                for take in (1..=n).step_by(2) {
                    if !emit(single(take)) {
                        return;
                    }
                }
            }
            RuleKind::Half => {
                for take in n.div_ceil(2).max(1)..=n {
                    if !emit(single(take)) {
                        return;
                    }
                }
            }
            RuleKind::Set(_) | RuleKind::Octal(_) => {
                let Some((shape, _)) = &self.table else {
                    return;
                };
                for r in &shape.removals {
                    let Some(rest) = n.checked_sub(r.take) else {
                        break;
                    };
                    if ((r.none && rest == 0) || (r.one && rest > 0)) && !emit(single(r.take)) {
                        return;
                    }
                    if r.two {
                        for a in 1..=rest / 2 {
                            if !emit(HeapStep {
                                take: r.take,
                                split: Some([a, rest - a]),
                            }) {
                                return;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Moves from a heap of `n` to positions of value `target`, in the order of
    /// `steps`. `emit` answers false to stop. Returns false if the search was cut
    /// short by its budget (the listing is then incomplete).
    pub fn steps_to(&self, n: u64, target: u64, emit: &mut dyn FnMut(HeapStep) -> bool) -> bool {
        let single = |take: u64| HeapStep { take, split: None };
        match &self.kind {
            RuleKind::Any => {
                if target < n {
                    emit(single(n - target));
                }
                true
            }
            RuleKind::UpTo(k) => {
                // The rest r lies in [n - k, n - 1]; at most one r has r % (k+1) == target.
                let m = *k as u128 + 1;
                let (n, t) = (n as u128, target as u128);
                if t < m && n > 0 {
                    let lo = n.saturating_sub(*k as u128);
                    let r = lo + (t + m - lo % m) % m;
                    if r < n {
                        emit(single((n - r) as u64));
                    }
                }
                true
            }
            RuleKind::Odd => {
                // Every odd take leaves a rest of parity (n - 1) % 2.
                if n > 0 && target == (n - 1) % 2 {
                    self.steps(n, emit);
                }
                true
            }
            RuleKind::Half => {
                // The rest r in [0, n / 2] has value bit_length(r).
                let (lo, hi) = match target {
                    0 => (0, 0),
                    64.. => return true,
                    t => (1u64 << (t - 1), (1u64 << (t - 1)).saturating_mul(2) - 1),
                };
                let hi = hi.min(n / 2);
                if n == 0 || lo > hi {
                    return true;
                }
                for r in (lo..=hi).rev() {
                    if !emit(single(n - r)) {
                        break;
                    }
                }
                true
            }
            RuleKind::Lasker => {
                if let Some(r) = lasker_inverse(target) {
                    if r < n && !emit(single(n - r)) {
                        return true;
                    }
                }
                // Splits are searched up to a budget: huge heaps have too many to scan.
                self.split_search(n, 0, target, None, Some(4096), emit)
            }
            // Every split of a heap of at most 2^20: half a million checks
            // at most, so the listing is always complete.
            RuleKind::Grundy => self.split_search(n, 0, target, None, None, &mut |step| {
                step.split.is_some_and(|[a, b]| a == b) || emit(step)
            }),
            RuleKind::Set(_) | RuleKind::Octal(_) => {
                let Some((shape, seq)) = &self.table else {
                    return true;
                };
                let mut complete = true;
                for r in &shape.removals {
                    let Some(rest) = n.checked_sub(r.take) else {
                        break;
                    };
                    let value = match rest {
                        0 if r.none => Some(0),
                        0 => None,
                        _ if r.one => Some(self.grundy(rest)),
                        _ => None,
                    };
                    if value == Some(target) && !emit(single(r.take)) {
                        return complete;
                    }
                    if r.two {
                        let mut stopped = false;
                        let done =
                            self.split_search(rest, r.take, target, seq.period(), None, &mut |s| {
                                let go = emit(s);
                                stopped |= !go;
                                go
                            });
                        complete &= done;
                        if stopped {
                            return complete;
                        }
                    }
                }
                complete
            }
        }
    }

    /// Splits of `rest` into `a + b` (1 <= a <= b) with g(a) ^ g(b) == target.
    /// With a proven period (p, q) and rest >= 2p, whether `a` matches repeats
    /// with period q once a - q >= p, so a full period without a match ends the
    /// search. Otherwise at most `budget` candidates are tried (none: all).
    fn split_search(
        &self,
        rest: u64,
        take: u64,
        target: u64,
        period: Option<(u64, u64)>,
        budget: Option<u64>,
        emit: &mut dyn FnMut(HeapStep) -> bool,
    ) -> bool {
        let periodic_from = period
            .filter(|&(p, _)| rest / 2 >= p)
            .map(|(p, q)| (p + q, q));
        let mut last_match = 0u64;
        let mut a = 1u64;
        while a <= rest / 2 {
            if let Some((zone, q)) = periodic_from {
                if a >= zone + q && a - last_match > q {
                    return true;
                }
            } else if budget.is_some_and(|b| a > b) {
                return false;
            }
            if self.grundy(a) ^ self.grundy(rest - a) == target {
                last_match = a;
                if !emit(HeapStep {
                    take,
                    split: Some([a, rest - a]),
                }) {
                    return true;
                }
            }
            a += 1;
        }
        true
    }

    pub fn to_json(&self) -> Value {
        match &self.kind {
            RuleKind::Any => json!("any"),
            RuleKind::UpTo(k) => json!({ "upto": k }),
            RuleKind::Set(s) => json!({ "set": s }),
            RuleKind::Odd => json!("odd"),
            RuleKind::Half => json!("half"),
            RuleKind::Octal(code) => json!({ "octal": code }),
            RuleKind::Lasker => json!("lasker"),
            RuleKind::Grundy => json!("grundy"),
        }
    }

    /// Reads a RULE of docs/games.md.
    pub fn parse(v: &Value, path: &str) -> Result<Rule, Fail> {
        let kind = match v {
            Value::String(s) => match s.as_str() {
                "any" => RuleKind::Any,
                "odd" => RuleKind::Odd,
                "half" => RuleKind::Half,
                "lasker" => RuleKind::Lasker,
                "grundy" => RuleKind::Grundy,
                other => {
                    return fail(
                        path,
                        format!(
                            "unknown rule {other:?} (rules: \"any\", \"odd\", \"half\", \"lasker\", \"grundy\", {{\"upto\": k}}, {{\"set\": [...]}}, {{\"octal\": \"0.77\"}})"
                        ),
                    )
                }
            },
            Value::Object(map) if map.len() == 1 => {
                let (key, inner) = map.iter().next().expect("one entry");
                let inner_path = format!("{path}.{key}");
                match key.as_str() {
                    "upto" => {
                        let k = u64_at(inner, &inner_path, MAX_HEAP_SIZE)?;
                        if k == 0 {
                            return fail(&inner_path, "must be at least 1");
                        }
                        RuleKind::UpTo(k)
                    }
                    "set" => RuleKind::Set(parse_set(inner, &inner_path)?),
                    "octal" => match inner {
                        Value::String(code) => {
                            octal_shape(code).map_err(|e| (inner_path.clone(), e))?;
                            RuleKind::Octal(code.clone())
                        }
                        other => {
                            return fail(
                                &inner_path,
                                format!("expected an octal code string such as \"0.77\", got {}", kind(other)),
                            )
                        }
                    },
                    other => return fail(path, format!("unknown rule {{{other:?}: ...}}")),
                }
            }
            other => {
                return fail(
                    path,
                    format!("expected a rule (\"any\", {{\"upto\": k}}, ...), got {}", kind(other)),
                )
            }
        };
        Rule::new(kind).map_err(|e| (path.to_string(), e))
    }
}

pub fn parse_set(v: &Value, path: &str) -> Result<Vec<u64>, Fail> {
    let mut s = u64_array_at(v, path, MAX_SET_LEN, MAX_SET_ELEMENT)?;
    if s.is_empty() {
        return fail(path, "a subtraction set needs at least one amount");
    }
    if let Some(i) = s.iter().position(|&x| x == 0) {
        return fail(&format!("{path}[{i}]"), "amounts must be at least 1");
    }
    s.sort_unstable();
    s.dedup();
    Ok(s)
}

/// The move shape of an octal code `d0.d1d2...`: digit d_k says what removing k
/// tokens may leave (1: no heap, 2: one heap, 4: two heaps).
pub fn octal_shape(code: &str) -> Result<Shape, String> {
    let (before, after) = code
        .split_once('.')
        .ok_or_else(|| format!("an octal code looks like \"0.77\"; {code:?} has no point"))?;
    let d0 = match before {
        "" | "0" => 0,
        "4" => 4,
        _ => {
            return Err(format!(
                "the digit before the point must be 0 or 4 (splitting without taking), not {before:?}: other values would allow a move that changes nothing"
            ))
        }
    };
    if after.len() > MAX_OCTAL_DIGITS {
        return Err(format!(
            "at most {MAX_OCTAL_DIGITS} digits after the point, got {}",
            after.len()
        ));
    }
    let mut removals = Vec::new();
    if d0 == 4 {
        removals.push(Removal {
            take: 0,
            none: false,
            one: false,
            two: true,
        });
    }
    for (i, c) in after.chars().enumerate() {
        let d = c
            .to_digit(8)
            .ok_or_else(|| format!("{c:?} is not an octal digit (0-7) in {code:?}"))?;
        if d != 0 {
            removals.push(Removal {
                take: i as u64 + 1,
                none: d & 1 != 0,
                one: d & 2 != 0,
                two: d & 4 != 0,
            });
        }
    }
    Ok(Shape { removals })
}

/// Lasker's Nim: g(4k+1) = 4k+1, g(4k+2) = 4k+2, g(4k+3) = 4k+4, g(4k+4) = 4k+3.
pub fn lasker_grundy(n: u64) -> u64 {
    match n % 4 {
        0 if n > 0 => n - 1,
        3 => n + 1,
        _ => n,
    }
}

/// The heap size of Lasker value `g` (the function is a bijection).
fn lasker_inverse(g: u64) -> Option<u64> {
    Some(match g % 4 {
        0 if g > 0 => g - 1,
        3 => g.checked_add(1)?,
        _ => g,
    })
}

/// A heap of the `heaps` game: its size and the rule it is played by (here,
/// beside the rules, so that normal play and misère play both read it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Heap {
    pub size: u64,
    pub rule: Arc<Rule>,
}
