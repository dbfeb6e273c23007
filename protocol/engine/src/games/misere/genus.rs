//! Tame heap rules: misère play by the Grundy values (Conway's genus theory).
//!
//! Conway (ONAG, ch. 12) calls a game tame when, in misère sums, it behaves like
//! a nim heap of its Grundy value: genus 0^120 for *0, 1^031 for *1, g^g(g^2)
//! for larger g. We use the case that can be checked rule by rule:
//!
//! **Theorem.** Let every move of a heap rule leave at most one heap (no
//! splits), and let every heap of value 0 that has a move have a move to a heap
//! of value 1. Then any sum of such heaps (rules may differ) is a misère
//! P-position exactly when misère Nim on the heaps' values says so: with some
//! value ≥ 2 the xor is 0; otherwise the number of 1s is odd.
//!
//! *Proof.* Call a position P' when the rule above says P. A position with no
//! move has only value-0 heaps, so it is N', as misère play wants (the player
//! to move has won). From P', a move changes one value g to some v ≠ g (the
//! mex): with some value ≥ 2 the xor was 0, and either a value ≥ 2 remains (the
//! xor is now v ^ g ≠ 0) or the moved heap was the only large one, impossible
//! since the others' xor equals it; with all values ≤ 1, v ≥ 2 makes the xor
//! ≥ 2, and v ≤ 1 changes the number of 1s by one. So every move from P' goes
//! to N'. From a non-terminal N', Bouton's move needs only values below the
//! heap's own (which the mex provides), except when all values are 0: then a
//! heap of value 0 that can move goes to value 1 (the hypothesis), leaving one
//! 1. By induction on the game, P' is exactly the set of P-positions. ∎
//!
//! The hypothesis holds for all heaps of `any`, `half` (value 0 only at 0),
//! `odd` (an even heap takes 1 to an odd one) and `{"upto": k}` (a multiple of
//! k + 1 takes k, leaving value 1). For `set` and octal rules without splits it
//! is checked on the Grundy table (below), and a periodic table checks it for
//! every heap. Splitting rules (Kayles, Dawson's Kayles, Lasker's Nim, Grundy's game) are not
//! covered: their misère play is decided by a quotient or by search.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::games::rule::{Rule, RuleKind};
use crate::games::sequence::{Sequence, Shape};

/// The largest heap up to which `rule` meets the theorem's hypothesis (every
/// heap, `u64::MAX`, when proven), or None for a rule that splits heaps.
pub fn tame_up_to(rule: &Rule) -> Option<u64> {
    match &rule.kind {
        RuleKind::Any | RuleKind::UpTo(_) | RuleKind::Odd | RuleKind::Half => Some(u64::MAX),
        RuleKind::Lasker | RuleKind::Grundy => None,
        RuleKind::Set(_) | RuleKind::Octal(_) => {
            let (shape, seq) = rule.shape_and_sequence()?;
            if shape.splits() {
                return None;
            }
            Some(shared_scan(shape, seq))
        }
    }
}

/// [`scan`] once per shape: a `set` rule's table may hold 10^6 values.
fn shared_scan(shape: &Shape, seq: &Sequence) -> u64 {
    static CACHE: OnceLock<Mutex<HashMap<Shape, u64>>> = OnceLock::new();
    const MAX_CACHED: usize = 256;
    let cache = CACHE.get_or_init(Default::default);
    let lock = || {
        cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    if let Some(&known) = lock().get(shape) {
        return known;
    }
    let tame = scan(shape, seq);
    let mut map = lock();
    if map.len() >= MAX_CACHED {
        map.clear();
    }
    map.insert(shape.clone(), tame);
    tame
}

/// The first heap that breaks the hypothesis, minus one; beyond the computed
/// prefix a proven period repeats the check (for n ≥ p + t every option lies
/// in the periodic part, and the prefix holds more than p + q + t values).
fn scan(shape: &Shape, seq: &Sequence) -> u64 {
    let g = seq.prefix();
    for n in 1..g.len() {
        if g[n] != 0 {
            continue;
        }
        let mut can_move = false;
        let mut to_one = false;
        for r in &shape.removals {
            let Some(rest) = n.checked_sub(r.take as usize) else {
                break;
            };
            if (r.none && rest == 0) || (r.one && rest > 0) {
                can_move = true;
            }
            to_one |= r.one && rest > 0 && g[rest] == 1;
        }
        if can_move && !to_one {
            return n as u64 - 1;
        }
    }
    if seq.period().is_some() {
        u64::MAX
    } else {
        g.len() as u64 - 1
    }
}

/// Misère Nim on heap values: the xor, and how many values are 1 and ≥ 2.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    xor: u64,
    ones: usize,
    big: usize,
}

impl Tally {
    pub fn of(values: impl IntoIterator<Item = u64>) -> Tally {
        let mut t = Tally::default();
        for v in values {
            t.xor ^= v;
            t.ones += usize::from(v == 1);
            t.big += usize::from(v >= 2);
        }
        t
    }

    /// The player to move loses.
    pub fn is_p(&self) -> bool {
        if self.big > 0 {
            self.xor == 0
        } else {
            self.ones % 2 == 1
        }
    }

    /// The value a heap of value `g` must be moved to so that the player to
    /// move next loses (the theorem: one value, by the other heaps).
    pub fn target(&self, g: u64) -> u64 {
        let xor = self.xor ^ g;
        let big = self.big - usize::from(g >= 2);
        let ones = self.ones - usize::from(g == 1);
        if big > 0 {
            xor
        } else {
            (ones as u64 + 1) % 2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misere_nim_rule() {
        assert!(!Tally::of([]).is_p(), "no heap: the player to move has won");
        assert!(Tally::of([1]).is_p());
        assert!(!Tally::of([1, 1]).is_p());
        assert!(Tally::of([2, 2]).is_p());
        assert!(Tally::of([1, 2, 3]).is_p());
        assert!(!Tally::of([2]).is_p());
        let t = Tally::of([5, 1]);
        assert_eq!(t.target(5), 0, "leave an odd number of 1s");
        assert_eq!(Tally::of([5, 1, 1]).target(5), 1);
        assert_eq!(Tally::of([5, 3, 1]).target(5), 2);
    }

    #[test]
    fn closed_form_rules_are_tame_and_splitting_ones_are_not_covered() {
        let rule = |k| Rule::new(k).unwrap();
        for k in [
            RuleKind::Any,
            RuleKind::UpTo(3),
            RuleKind::Odd,
            RuleKind::Half,
            RuleKind::Set(vec![1, 3, 4]),
        ] {
            assert_eq!(tame_up_to(&rule(k.clone())), Some(u64::MAX), "{k}");
        }
        assert_eq!(tame_up_to(&rule(RuleKind::Lasker)), None);
        assert_eq!(tame_up_to(&rule(RuleKind::Octal("0.77".into()))), None);
        assert_eq!(tame_up_to(&rule(RuleKind::Octal("4.3".into()))), None);
    }

    /// 0.31 (take 1, or take a whole heap of 2): heap 3 has value 0 and one
    /// move, to heap 2 of value 2, so the rule is tame up to heap 2 only.
    #[test]
    fn the_hypothesis_can_fail() {
        let r = Rule::new(RuleKind::Octal("0.31".into())).unwrap();
        assert_eq!(tame_up_to(&r), Some(2));
    }
}
