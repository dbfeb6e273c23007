//! Misère play of the `heaps` family: which method decides a position (tried
//! in the order genus, quotient, search), and outcome and winning moves by it.

use std::collections::HashMap;
use std::sync::Arc;

use super::genus::{self, Tally};
use super::quotient::{Quotient, Refused};
use super::search::Table;
use super::{shared_quotient, Method};
use crate::games::rule::Heap;
use crate::games::rule::{HeapStep, Rule, RuleKind};
use crate::json::Fail;
use crate::limits::{MAX_MISERE_QUOTIENT_HEAP, MAX_MISERE_SEARCH_POSITIONS};

/// A position for the search: `(rule, size, count)` runs, sorted, heaps that
/// cannot move left out (they change nothing). Rules are indices into
/// [`Searched::rules`].
type Key = Vec<(u32, u64, u64)>;

/// The exhaustive search's result, with the rules its keys index.
#[derive(Debug)]
pub struct Searched {
    rules: Vec<Arc<Rule>>,
    table: Table<Key>,
}

/// How the misère positions of one match are decided. Positions after moves
/// keep it: their heaps are smaller, so the proof or table still covers them.
#[derive(Debug, Clone)]
pub enum Solver {
    Genus,
    Quotient(Arc<Quotient>),
    Search(Arc<Searched>),
}

/// Two positions are the same position whatever solved them.
impl PartialEq for Solver {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Solver {}
impl std::hash::Hash for Solver {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl Solver {
    /// The method for `heaps` (`paths[i]`: where heap `i`'s size was written),
    /// or the refusal: the field, the limit passed and why.
    pub fn choose(heaps: &[Heap], paths: &[String]) -> Result<Solver, Fail> {
        let tame = heaps
            .iter()
            .all(|h| genus::tame_up_to(&h.rule).is_some_and(|max| h.size <= max));
        if tame {
            return Ok(Solver::Genus);
        }
        // Why neither quotient nor search: the message names both limits.
        let quotient_refusal = match one_rule(heaps) {
            None => "it mixes rules, and not all of them are tame, so no single quotient covers it"
                .to_string(),
            Some(rule) => {
                let (i, big) = heaps
                    .iter()
                    .enumerate()
                    .max_by_key(|(i, h)| (h.size, std::cmp::Reverse(*i)))
                    .map(|(i, h)| (i, h.size))
                    .unwrap_or((0, 0));
                if big > MAX_MISERE_QUOTIENT_HEAP {
                    let searched = search(heaps).ok();
                    return searched.map(|s| Solver::Search(Arc::new(s))).ok_or_else(|| {
                        (
                            paths[i].clone(),
                            format!(
                                "{big} is too large for misère play under rule {}: its misère quotient is built for heaps up to {MAX_MISERE_QUOTIENT_HEAP}, and exhaustive search covers at most {MAX_MISERE_SEARCH_POSITIONS} positions",
                                rule.kind
                            ),
                        )
                    });
                }
                match shared_quotient(rule, big as usize) {
                    Ok(q) => return Ok(Solver::Quotient(q)),
                    Err(Refused::Budget) => format!(
                        "the misère quotient of rule {} for heaps up to {big} is too large to build within the limit",
                        rule.kind
                    ),
                }
            }
        };
        search(heaps).map(|s| Solver::Search(Arc::new(s))).map_err(|_| {
            (
                "misere".to_string(),
                format!(
                    "this position cannot be played exactly in misère: {quotient_refusal}, and it reaches more than {MAX_MISERE_SEARCH_POSITIONS} positions for exhaustive search"
                ),
            )
        })
    }

    pub fn method(&self) -> Method {
        match self {
            Solver::Genus => Method::Genus,
            Solver::Quotient(_) => Method::Quotient,
            Solver::Search(_) => Method::Search,
        }
    }

    /// True when the player to move wins.
    pub fn to_move_wins(&self, heaps: &[Heap]) -> bool {
        match self {
            Solver::Genus => !Tally::of(heaps.iter().map(|h| h.rule.grundy(h.size))).is_p(),
            Solver::Quotient(q) => !q.is_p(q.element(counts(heaps))),
            Solver::Search(s) => s.wins(&s.key(heaps)),
        }
    }

    /// The winning moves of every heap, as `(heap, step)` in heap order, at
    /// most `limit`; false when the list was cut short.
    pub fn winning_steps(
        &self,
        heaps: &[Heap],
        limit: usize,
        emit: &mut dyn FnMut(usize, HeapStep) -> bool,
    ) -> bool {
        // Heaps of one rule and size have the same winning steps: found once.
        let mut found: HashMap<(&RuleKind, u64), (Vec<HeapStep>, bool)> = HashMap::new();
        let tally = Tally::of(heaps.iter().map(|h| h.rule.grundy(h.size)));
        let sizes = match self {
            Solver::Quotient(_) => counts(heaps),
            _ => Vec::new(),
        };
        let mut complete = true;
        for (i, h) in heaps.iter().enumerate() {
            let (steps, all) = found
                .entry((&h.rule.kind, h.size))
                .or_insert_with(|| self.steps_of(heaps, i, &tally, &sizes, limit));
            complete &= *all;
            for s in steps.iter() {
                if !emit(i, *s) {
                    return false;
                }
            }
        }
        complete
    }

    /// The winning steps from heap `i` (at most `limit`), and whether that is
    /// all of them. `tally`: the heaps' values (genus); `sizes`: how many heaps
    /// of each size (quotient).
    fn steps_of(
        &self,
        heaps: &[Heap],
        i: usize,
        tally: &Tally,
        sizes: &[(usize, u64)],
        limit: usize,
    ) -> (Vec<HeapStep>, bool) {
        let h = &heaps[i];
        let mut out = Vec::new();
        let mut cut = false;
        let mut push = |s: HeapStep| {
            if out.len() >= limit {
                cut = true;
                return false;
            }
            out.push(s);
            true
        };
        let mut complete = true;
        match self {
            Solver::Genus => {
                // The theorem: one target value for this heap, by the others.
                let target = tally.target(h.rule.grundy(h.size));
                complete = h.rule.steps_to(h.size, target, &mut push);
            }
            Solver::Quotient(q) => {
                let mut rest = sizes.to_vec();
                if let Some(c) = rest.iter_mut().find(|(s, _)| *s as u64 == h.size) {
                    c.1 -= 1;
                }
                let others = q.element(rest);
                h.rule.steps(h.size, &mut |s| {
                    let left = left_heaps(h.size, s);
                    !q.is_p(q.mul(others, q.element_of_heaps(&left))) || push(s)
                });
            }
            Solver::Search(t) => {
                let mut key = t.key(heaps);
                let r = t.rule_index(&h.rule);
                take_one(&mut key, r, h.size);
                h.rule.steps(h.size, &mut |s| {
                    let mut child = key.clone();
                    for x in left_heaps(h.size, s) {
                        put(&mut child, r, x as u64, &h.rule);
                    }
                    t.wins(&child) || push(s)
                });
            }
        }
        (out, complete && !cut)
    }
}

/// The rule of every heap, when they share one.
fn one_rule(heaps: &[Heap]) -> Option<&Rule> {
    let first = &heaps.first()?.rule;
    heaps.iter().all(|h| &h.rule == first).then_some(&**first)
}

/// `(size, count)` of every heap size present (sizes are small here: the
/// quotient is built only up to `MAX_MISERE_QUOTIENT_HEAP`).
fn counts(heaps: &[Heap]) -> Vec<(usize, u64)> {
    let mut c: Vec<(usize, u64)> = Vec::new();
    for h in heaps {
        match c.iter_mut().find(|(s, _)| *s as u64 == h.size) {
            Some(e) => e.1 += 1,
            None => c.push((h.size as usize, 1)),
        }
    }
    c
}

/// The heaps a step leaves (none, one or two).
fn left_heaps(size: u64, s: HeapStep) -> Vec<usize> {
    match s.split {
        Some([a, b]) => vec![a as usize, b as usize],
        None if size > s.take => vec![(size - s.take) as usize],
        None => Vec::new(),
    }
}

fn take_one(key: &mut Key, rule: u32, size: u64) {
    if let Some(at) = key.iter().position(|&(r, s, _)| (r, s) == (rule, size)) {
        key[at].2 -= 1;
        if key[at].2 == 0 {
            key.remove(at);
        }
    }
}

/// Adds a heap to a key, unless it can never move.
fn put(key: &mut Key, rule: u32, size: u64, r: &Rule) {
    if !r.can_move(size) {
        return;
    }
    match key.binary_search_by_key(&(rule, size), |&(r, s, _)| (r, s)) {
        Ok(at) => key[at].2 += 1,
        Err(at) => key.insert(at, (rule, size, 1)),
    }
}

/// Solves every position reachable from `heaps` within the search limit.
fn search(heaps: &[Heap]) -> Result<Searched, usize> {
    let mut rules: Vec<Arc<Rule>> = Vec::new();
    for h in heaps {
        if !rules.contains(&h.rule) {
            rules.push(h.rule.clone());
        }
    }
    let start = key_of(&rules, heaps);
    // Options are counted too: a few positions with huge move lists (a heap
    // of 10^6 under `any`) must not take long to refuse.
    let mut options_left = 20 * MAX_MISERE_SEARCH_POSITIONS;
    let table = Table::solve(
        start,
        |key: &Key| {
            let mut children = Vec::new();
            for &(r, size, _) in key {
                let rule = &rules[r as usize];
                let mut base = key.clone();
                take_one(&mut base, r, size);
                let mut exhausted = false;
                rule.steps(size, &mut |step| {
                    if options_left == 0 {
                        exhausted = true;
                        return false;
                    }
                    options_left -= 1;
                    let mut child = base.clone();
                    for x in left_heaps(size, step) {
                        put(&mut child, r, x as u64, rule);
                    }
                    children.push(child);
                    true
                });
                if exhausted {
                    return None;
                }
            }
            Some(children)
        },
        MAX_MISERE_SEARCH_POSITIONS,
    )?;
    Ok(Searched { rules, table })
}

fn key_of(rules: &[Arc<Rule>], heaps: &[Heap]) -> Key {
    let mut key = Key::new();
    for h in heaps {
        let r = rules
            .iter()
            .position(|r| r == &h.rule)
            .expect("every rule of the match is listed") as u32;
        put(&mut key, r, h.size, &h.rule);
    }
    key
}

impl Searched {
    fn rule_index(&self, rule: &Rule) -> u32 {
        self.rules
            .iter()
            .position(|r| &**r == rule)
            .expect("every rule of the match is listed") as u32
    }

    fn key(&self, heaps: &[Heap]) -> Key {
        key_of(&self.rules, heaps)
    }

    fn wins(&self, key: &Key) -> bool {
        self.table
            .to_move_wins(key)
            .expect("positions of the match were reached by the search")
    }
}
