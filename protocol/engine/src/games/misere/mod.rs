//! Exact misère play (the player who cannot move wins) for the families whose
//! sums have no Grundy values to add: `heaps` (every rule) and `graph`.
//!
//! Three methods, tried in this order, each exact where it is used:
//!
//! - [`genus`]: rules proven tame, played as misère Nim on the heaps' values;
//! - [`quotient`]: the misère quotient of one rule for heaps up to a bound,
//!   built once per (rule, bound) and shared; any number of heaps;
//! - [`search`]: exhaustive search of every position reachable from the start.
//!
//! Beyond all three a spec is refused, with the field and the limit it passes.

pub mod genus;
pub mod heaps;
pub mod quotient;
pub mod search;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;

use crate::games::rule::{Rule, RuleKind};
use crate::limits::MISERE_QUOTIENT_WORK;
use quotient::{Quotient, Refused};

/// Which method decided a misère position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Tame rules: misère Nim on the Grundy values (Conway's genus theory).
    Genus,
    /// The misère quotient of the rule (Plambeck–Siegel).
    Quotient,
    /// Exhaustive search of the reachable positions.
    Search,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Genus => "genus",
            Method::Quotient => "quotient",
            Method::Search => "search",
        }
    }
}

/// The options of every heap size `0..=n` under `rule`, as the heaps each move
/// leaves, without the heaps that can never move (they change nothing).
pub fn heap_options(rule: &Rule, n: usize) -> Vec<Vec<Vec<usize>>> {
    let movable: Vec<bool> = (0..=n as u64).map(|h| rule.can_move(h)).collect();
    (0..=n as u64)
        .map(|h| {
            let mut options: Vec<Vec<usize>> = Vec::new();
            rule.steps(h, &mut |s| {
                let left: Vec<u64> = match s.split {
                    Some([a, b]) => vec![a, b],
                    None => vec![h - s.take],
                };
                let mut left: Vec<usize> = left
                    .into_iter()
                    .map(|x| x as usize)
                    .filter(|&x| movable[x])
                    .collect();
                left.sort_unstable();
                options.push(left);
                true
            });
            options.sort();
            options.dedup();
            options
        })
        .collect()
}

/// The quotient of `rule` for heaps up to `n`, built once per process and
/// shared by every position that uses it (like the Grundy sequences).
pub fn shared_quotient(rule: &Rule, n: usize) -> Result<Arc<Quotient>, Refused> {
    type Cell = Arc<OnceLock<Result<Arc<Quotient>, Refused>>>;
    static CACHE: OnceLock<Mutex<HashMap<(RuleKind, usize), Cell>>> = OnceLock::new();
    // Positions keep their own Arc, so forgetting the cache only costs a rebuild.
    const MAX_CACHED: usize = 64;
    let key = (rule.kind.clone(), n);
    let cell: Cell = {
        let mut map = CACHE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if map.len() >= MAX_CACHED && !map.contains_key(&key) {
            map.clear();
        }
        map.entry(key).or_default().clone()
    };
    cell.get_or_init(|| Quotient::build(&heap_options(rule, n), MISERE_QUOTIENT_WORK).map(Arc::new))
        .clone()
}
