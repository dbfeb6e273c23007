//! Misère quotients (Plambeck and Siegel, "Misère quotients for impartial
//! games", JCTA 115 (2008); Plambeck, "Taming the wild in impartial
//! combinatorial games", INTEGERS 5 (2005)) of one heap rule restricted to
//! heaps of at most `n` tokens.
//!
//! A quotient is a finite commutative monoid `Q`, a set `P ⊆ Q` and an element
//! `Φ(h)` for every heap size. A position (any number of heaps ≤ n) maps to the
//! product of its heaps' elements, and it is a misère P-position exactly when
//! that product lies in `P`. Deciding a position costs one product per heap
//! size; it does not depend on the number of heaps.
//!
//! **Building** follows Siegel's MisereSolver: heaps are adjoined one size at
//! a time. A new heap size first tries an element already in `Q`; otherwise `Q`
//! grows by a cyclic factor for it; when a candidate fails, the heaps of the
//! failing position get cyclic factors of their own ("recalibration"). Each
//! candidate's P-set is marked by the mex rule at the lexicographically least
//! position of each element, and the candidate is reduced (elements that no
//! position can tell apart are merged).
//!
//! **Correctness does not rest on the building**: a candidate is used only once
//! [`verify`](Quotient::verify) has proven it, by these conditions:
//!
//! - V0: the empty position maps outside `P` (misère: no move, a win);
//! - V1: for every `x ∈ Q` and heap `h`: if `x·Φ(h) ∈ P`, then `x·Φ(o) ∉ P`
//!   for every option `o` of `h`;
//! - V2: every non-empty position `G` with `Φ(G) ∉ P` has an option in `P`.
//!
//! By induction on the game, V0–V2 make `Φ(G) ∈ P` equivalent to "G is a
//! P-position" for every `G`: the options of `G = Y + h` are `Y + o` and map
//! to `Φ(Y)·Φ(o)`. V1 is a finite check. V2 ranges over infinitely many
//! positions; it is checked on positions in lexicographic order with
//! Siegel's pruning: a position's data for all its extensions is its element
//! `e` and the set `T` of its options' elements (`G + Z` has element `e·Φ(Z)`
//! and options `T·Φ(Z) ∪ e·T(Z)`). If an earlier position had the same `e` and
//! a subset of `T`, every failure extending the later one is matched by a
//! lexicographically smaller failure extending the earlier one, so the
//! later one need not be extended. The least failure, if any, is never pruned,
//! and the search ends because there are finitely many pairs `(e, T)`.

use std::collections::HashMap;

/// The options of each heap size: `options[h]` lists, for every move from a
/// heap of `h`, the heaps it leaves (terminal heaps, which can never move and
/// so change nothing, left out). A size with no option is terminal.
pub type Options = [Vec<Vec<usize>>];

/// Why no quotient was built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The work budget ran out (the quotient is too large, or no candidate was
    /// found in time).
    Budget,
}

/// A verified misère quotient for heaps of sizes `0..=n`.
#[derive(Debug)]
pub struct Quotient {
    size: usize,
    /// `mul[a * size + b]`; element 0 is the identity (the empty position).
    mul: Vec<u32>,
    p: Vec<bool>,
    /// `Φ(h)` for every heap size.
    heap: Vec<u32>,
    /// Powers of each heap's element: `pow[h][c]` up to the first repeat, from
    /// `cycle[h].0` on with period `cycle[h].1`.
    pow: Vec<Vec<u32>>,
    cycle: Vec<(usize, usize)>,
}

impl Quotient {
    /// The number of elements.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The largest heap size covered.
    pub fn max_heap(&self) -> usize {
        self.heap.len() - 1
    }

    pub fn identity(&self) -> u32 {
        0
    }

    pub fn mul(&self, a: u32, b: u32) -> u32 {
        self.mul[a as usize * self.size + b as usize]
    }

    pub fn is_p(&self, x: u32) -> bool {
        self.p[x as usize]
    }

    /// `Φ(h)^count`.
    pub fn power(&self, h: usize, count: u64) -> u32 {
        let pow = &self.pow[h];
        match usize::try_from(count) {
            Ok(c) if c < pow.len() => pow[c],
            _ => {
                let (start, period) = self.cycle[h];
                let c = start as u64 + (count - start as u64) % period as u64;
                pow[c as usize]
            }
        }
    }

    /// The element of a position given as `(heap size, count)` pairs.
    pub fn element(&self, counts: impl IntoIterator<Item = (usize, u64)>) -> u32 {
        counts
            .into_iter()
            .fold(0, |x, (h, c)| self.mul(x, self.power(h, c)))
    }

    /// The element of the heaps one move leaves.
    pub fn element_of_heaps(&self, heaps: &[usize]) -> u32 {
        heaps.iter().fold(0, |x, &h| self.mul(x, self.heap[h]))
    }

    /// Builds the quotient of the rule whose heap options are `options`
    /// (sizes `0..options.len()`), spending at most `budget` units of work
    /// (one unit: a position visited, an element found, a product taken).
    pub fn build(options: &Options, budget: u64) -> Result<Quotient, Refused> {
        let work = Work(std::cell::Cell::new(budget));
        let mut q = Table::trivial(options.len());
        let mut ll = q.lex_least(&options[..1], &work)?;
        for k in 1..options.len() {
            if options[k].is_empty() {
                continue; // never moves: the identity
            }
            let opts = &options[..=k];
            let alias = q.try_alias(opts, &ll, &work)?;
            if let Some(x) = alias {
                q.heap[k] = x;
            } else {
                let mut factors = vec![None; k + 1];
                factors[k] = Some(Cyclic {
                    index: 2,
                    period: 2,
                });
                q = q.extend(opts, &factors, &work)?;
                while let Some((failure, should_be_p)) = q.verify(opts, &work)? {
                    q = q.recalibrate(opts, &failure, should_be_p, &work)?;
                }
                // Larger heaps are not adjoined yet: the identity for now.
                q.heap.resize(options.len(), 0);
            }
            ll = q.lex_least(opts, &work)?;
        }
        Ok(q.finish())
    }
}

/// A work budget, counted down (shared by the searches and their callbacks).
struct Work(std::cell::Cell<u64>);

impl Work {
    fn spend(&self, units: u64) -> Result<(), Refused> {
        let left = self.0.get().checked_sub(units).ok_or(Refused::Budget)?;
        self.0.set(left);
        Ok(())
    }
}

/// The most elements a candidate may reach before reduction.
const MAX_CANDIDATE: usize = 1 << 20;
/// The most elements a quotient may keep (its table has this many squared).
const MAX_QUOTIENT: usize = 4096;

/// A cyclic monoid `a^0 .. a^(index + period - 1)`, `a^(index + period) = a^index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cyclic {
    index: usize,
    period: usize,
}

impl Cyclic {
    fn len(self) -> usize {
        self.index + self.period
    }

    fn mul(self, i: usize, j: usize) -> usize {
        let s = i + j;
        if s < self.len() {
            s
        } else {
            self.index + (s - self.index) % self.period
        }
    }
}

/// A small set of elements, as bits.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(len: usize) -> Bits {
        Bits(vec![0; len.div_ceil(64)])
    }

    fn insert(&mut self, x: u32) {
        self.0[x as usize / 64] |= 1 << (x % 64);
    }

    fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    fn is_subset(&self, other: &Bits) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| a & !b == 0)
    }

    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &w)| {
            (0..64)
                .filter(move |b| w >> b & 1 == 1)
                .map(move |b| (i * 64 + b) as u32)
        })
    }
}

/// A candidate: an explicit commutative monoid with its P-set and heap map,
/// as the building works on it.
#[derive(Debug, Clone)]
struct Table {
    size: usize,
    mul: Vec<u32>,
    p: Vec<bool>,
    heap: Vec<u32>,
}

/// A position: how many heaps of each size (index 0 unused).
type Word = Vec<u32>;

/// Lexicographic order with the largest heap size most significant: the order
/// in which the searches below visit positions.
fn lex_less(a: &[u32], b: &[u32]) -> bool {
    for i in (0..a.len().max(b.len())).rev() {
        let (x, y) = (a.get(i).copied(), b.get(i).copied());
        let (x, y) = (x.unwrap_or(0), y.unwrap_or(0));
        if x != y {
            return x < y;
        }
    }
    false
}

/// What a visit tells the lexicographic walk.
enum Flow {
    Go,
    Stop,
}

impl Table {
    fn trivial(heaps: usize) -> Table {
        Table {
            size: 1,
            mul: vec![0],
            p: vec![false],
            heap: vec![0; heaps],
        }
    }

    fn mul(&self, a: u32, b: u32) -> u32 {
        self.mul[a as usize * self.size + b as usize]
    }

    fn act(&self, x: u32, h: usize) -> u32 {
        self.mul(x, self.heap[h])
    }

    fn of_heaps(&self, x: u32, heaps: &[usize]) -> u32 {
        heaps.iter().fold(x, |x, &h| self.act(x, h))
    }

    fn element(&self, w: &[u32]) -> u32 {
        let mut x = 0;
        for (h, &c) in w.iter().enumerate() {
            for _ in 0..c {
                x = self.act(x, h);
            }
        }
        x
    }

    /// The options' elements of `w + h`, given those of `w` (`tr`, element `e`).
    fn step(&self, opts: &Options, e: u32, tr: &Bits, h: usize) -> Bits {
        let mut out = Bits::new(self.size);
        for t in tr.iter() {
            out.insert(self.act(t, h));
        }
        for o in &opts[h] {
            out.insert(self.of_heaps(e, o));
        }
        out
    }

    /// Visits positions of heaps `1..opts.len()` in lexicographic order.
    /// `add(word, e, tr)` is asked when a heap is added; false prunes that
    /// position and every extension of it by heaps of that size or smaller.
    /// `visit` sees every position that is not pruned.
    fn walk(
        &self,
        opts: &Options,
        work: &Work,
        add: &mut dyn FnMut(&Word, u32, &Bits) -> Result<bool, Refused>,
        visit: &mut dyn FnMut(&Word, u32, &Bits) -> Flow,
    ) -> Result<bool, Refused> {
        let mut word = vec![0; opts.len()];
        let tr = Bits::new(self.size);
        self.walk_from(opts.len() - 1, &mut word, 0, &tr, opts, work, add, visit)
    }

    #[allow(clippy::too_many_arguments)]
    fn walk_from(
        &self,
        d: usize,
        word: &mut Word,
        e: u32,
        tr: &Bits,
        opts: &Options,
        work: &Work,
        add: &mut dyn FnMut(&Word, u32, &Bits) -> Result<bool, Refused>,
        visit: &mut dyn FnMut(&Word, u32, &Bits) -> Flow,
    ) -> Result<bool, Refused> {
        if d == 0 {
            work.spend(1)?;
            return Ok(matches!(visit(word, e, tr), Flow::Stop));
        }
        if self.walk_from(d - 1, word, e, tr, opts, work, add, visit)? {
            return Ok(true);
        }
        if opts[d].is_empty() {
            return Ok(false);
        }
        let (mut e, mut tr) = (e, tr.clone());
        let stop = loop {
            work.spend(1 + (self.size / 64) as u64)?;
            let next_tr = self.step(opts, e, &tr, d);
            let next_e = self.act(e, d);
            word[d] += 1;
            if !add(word, next_e, &next_tr)? {
                break false;
            }
            (e, tr) = (next_e, next_tr);
            if self.walk_from(d - 1, word, e, &tr, opts, work, add, visit)? {
                break true;
            }
        };
        word[d] = 0;
        Ok(stop)
    }

    /// The lexicographically least position of each element, with its
    /// options' elements.
    fn lex_least(&self, opts: &Options, work: &Work) -> Result<Vec<(Word, Bits)>, Refused> {
        let mut found: Vec<Option<(Word, Bits)>> = vec![None; self.size];
        let seen = std::cell::RefCell::new(vec![false; self.size]);
        self.walk(
            opts,
            work,
            &mut |_, e, _| Ok(!seen.borrow()[e as usize]),
            &mut |w, e, tr| {
                let mut seen = seen.borrow_mut();
                if !seen[e as usize] {
                    seen[e as usize] = true;
                    found[e as usize] = Some((w.clone(), tr.clone()));
                }
                Flow::Go
            },
        )?;
        // Elements no position reaches (possible after an alias) get no word;
        // they take part in no check that matters, so an empty one serves.
        Ok(found
            .into_iter()
            .map(|f| f.unwrap_or_else(|| (vec![0; opts.len()], Bits::new(self.size))))
            .collect())
    }

    /// An element of the current monoid that heap `k` (the last of `opts`) may
    /// map to, if one passes the verification.
    fn try_alias(
        &mut self,
        opts: &Options,
        ll: &[(Word, Bits)],
        work: &Work,
    ) -> Result<Option<u32>, Refused> {
        let k = opts.len() - 1;
        let heap_is_p = !opts[k].iter().any(|o| self.p[self.of_heaps(0, o) as usize]);
        for x in 0..self.size as u32 {
            if self.p[x as usize] != heap_is_p {
                continue;
            }
            work.spend(self.size as u64)?;
            self.heap[k] = x;
            // Quick necessary checks before the full one: V1 for heap k, and
            // V2 on each least position plus one heap of k.
            let quick = (0..self.size as u32).all(|y| {
                let e = self.mul(y, x);
                let options = opts[k].iter().map(|o| self.of_heaps(y, o));
                if self.p[e as usize] {
                    return options.clone().all(|t| !self.p[t as usize]);
                }
                let tr = &ll[y as usize].1;
                options
                    .chain(tr.iter().map(|t| self.mul(t, x)))
                    .any(|t| self.p[t as usize])
            });
            if quick && self.verify(opts, work)?.is_none() {
                return Ok(Some(x));
            }
        }
        self.heap[k] = 0;
        Ok(None)
    }

    /// The least position at which V0–V2 fail, with the outcome it really
    /// has (its options, all smaller, are predicted right), or None: proven.
    fn verify(&self, opts: &Options, work: &Work) -> Result<Option<(Word, bool)>, Refused> {
        if self.p[0] {
            return Ok(Some((vec![0; opts.len()], false)));
        }
        let ll = self.lex_least(opts, work)?;
        // V1: the least failure for (x, h) is x's least position plus h.
        let mut least: Option<Word> = None;
        for x in 0..self.size as u32 {
            work.spend(opts.len() as u64)?;
            for (h, hopts) in opts.iter().enumerate() {
                if hopts.is_empty() || !self.p[self.act(x, h) as usize] {
                    continue;
                }
                if hopts.iter().any(|o| self.p[self.of_heaps(x, o) as usize]) {
                    let mut w = ll[x as usize].0.clone();
                    w[h] += 1;
                    if least.as_ref().is_none_or(|l| lex_less(&w, l)) {
                        least = Some(w);
                    }
                }
            }
        }
        // V2, up to the V1 failure: pairs (e, T) kept as antichains under ⊆.
        let mut kept: Vec<Vec<Bits>> = vec![Vec::new(); self.size];
        let mut failure = None;
        let bound = least.clone();
        self.walk(
            opts,
            work,
            &mut |_, e, tr| {
                let list = &mut kept[e as usize];
                work.spend((list.len() * tr.0.len()) as u64)?;
                if list.iter().any(|old| old.is_subset(tr)) {
                    return Ok(false);
                }
                list.retain(|old| !tr.is_subset(old));
                list.push(tr.clone());
                Ok(true)
            },
            &mut |w, e, tr| {
                if bound.as_ref().is_some_and(|b| !lex_less(w, b)) {
                    return Flow::Stop;
                }
                if !tr.is_empty() && !self.p[e as usize] && !tr.iter().any(|t| self.p[t as usize]) {
                    failure = Some(w.clone());
                    return Flow::Stop;
                }
                Flow::Go
            },
        )?;
        Ok(match (failure, least) {
            // Predicted N, but no option is P: really P.
            (Some(w), _) => Some((w, true)),
            // Predicted P, with a P option: really N.
            (None, Some(w)) => Some((w, false)),
            (None, None) => None,
        })
    }

    /// The candidate generated by the heaps, with `factors[h]` giving heap `h`
    /// a cyclic factor of its own (and no element of this monoid): marked by
    /// the mex rule and reduced.
    fn extend(
        &self,
        opts: &Options,
        factors: &[Option<Cyclic>],
        work: &Work,
    ) -> Result<Table, Refused> {
        let cyclics: Vec<(usize, Cyclic)> = factors
            .iter()
            .enumerate()
            .filter_map(|(h, f)| f.map(|c| (h, c)))
            .collect();
        // An element of the product: this monoid's element, then each factor's
        // exponent, in mixed radix.
        let radix: Vec<u64> = std::iter::once(self.size as u64)
            .chain(cyclics.iter().map(|(_, c)| c.len() as u64))
            .collect();
        let gens: Vec<Vec<usize>> = (0..opts.len())
            .map(|h| {
                let own = cyclics.iter().position(|&(g, _)| g == h);
                let mut parts = vec![0; radix.len()];
                match own {
                    Some(i) => parts[i + 1] = 1,
                    None if !opts[h].is_empty() => parts[0] = self.heap[h] as usize,
                    None => {}
                }
                parts
            })
            .collect();
        let total: u64 = radix.iter().product();
        // Elements are found by their code: directly when the product is small.
        let mut dense: Vec<u32> = Vec::new();
        let mut sparse: HashMap<u64, u32> = HashMap::new();
        if total <= 1 << 24 {
            dense = vec![u32::MAX; total as usize];
            dense[0] = 0;
        } else {
            sparse.insert(0, 0);
        }
        let mut elements: Vec<u64> = vec![0];
        let mut act: Vec<u32> = Vec::new();
        let mut x = vec![0usize; radix.len()];
        let mut i = 0;
        while i < elements.len() {
            let mut code = elements[i];
            for (d, &r) in x.iter_mut().zip(&radix) {
                *d = (code % r) as usize;
                code /= r;
            }
            work.spend(gens.len() as u64)?;
            for g in &gens {
                // The product, encoded digit by digit from the last.
                let mut y = 0u64;
                for c in (0..radix.len()).rev() {
                    let d = if c == 0 {
                        self.mul(x[0] as u32, g[0] as u32) as usize
                    } else {
                        cyclics[c - 1].1.mul(x[c], g[c])
                    };
                    y = y * radix[c] + d as u64;
                }
                let next = elements.len() as u32;
                let id = if dense.is_empty() {
                    *sparse.entry(y).or_insert(next)
                } else {
                    let slot = &mut dense[y as usize];
                    if *slot == u32::MAX {
                        *slot = next;
                    }
                    *slot
                };
                if id == next {
                    if elements.len() >= MAX_CANDIDATE {
                        return Err(Refused::Budget);
                    }
                    elements.push(y);
                }
                act.push(id);
            }
            i += 1;
        }
        let automaton = Automaton {
            size: elements.len(),
            heaps: opts.len(),
            act,
        };
        let p = automaton.mark(opts, work)?;
        automaton.reduce(&p, work)
    }

    /// After a failure at `failure` (which really has outcome `should_be_p`),
    /// frees the heaps in it: subsets of them, smallest first, get cyclic
    /// factors of their own until the failure is predicted right.
    fn recalibrate(
        &self,
        opts: &Options,
        failure: &Word,
        should_be_p: bool,
        work: &Work,
    ) -> Result<Table, Refused> {
        let involved: Vec<usize> = (1..failure.len()).filter(|&h| failure[h] > 0).collect();
        for n in 1..=involved.len() {
            for subset in combinations(&involved, n) {
                let mut factors = vec![None; opts.len()];
                for &h in &subset {
                    let index = self.cycle_of(h).0.max(failure[h] as usize).max(2);
                    factors[h] = Some(Cyclic { index, period: 2 });
                }
                let candidate = self.extend(opts, &factors, work)?;
                if candidate.p[candidate.element(failure) as usize] == should_be_p {
                    return Ok(candidate);
                }
            }
        }
        Err(Refused::Budget)
    }

    /// The powers of heap `h`'s element: (first repeated exponent, period).
    fn cycle_of(&self, h: usize) -> (usize, usize) {
        let (_, start, period) = self.powers(h);
        (start, period)
    }

    fn powers(&self, h: usize) -> (Vec<u32>, usize, usize) {
        let mut pow = vec![0u32];
        let mut at: HashMap<u32, usize> = HashMap::from([(0, 0)]);
        loop {
            let next = self.act(*pow.last().expect("non-empty"), h);
            if let Some(&start) = at.get(&next) {
                let period = pow.len() - start;
                return (pow, start, period);
            }
            at.insert(next, pow.len());
            pow.push(next);
        }
    }

    fn finish(self) -> Quotient {
        let (pow, cycle) = (0..self.heap.len())
            .map(|h| {
                let (pow, start, period) = self.powers(h);
                (pow, (start, period))
            })
            .unzip();
        Quotient {
            size: self.size,
            mul: self.mul,
            p: self.p,
            heap: self.heap,
            pow,
            cycle,
        }
    }
}

/// Every `n`-element subset of `items`, in order.
fn combinations(items: &[usize], n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        for mut rest in combinations(&items[i + 1..], n - 1) {
            rest.insert(0, first);
            out.push(rest);
        }
    }
    out
}

/// A candidate before reduction: the elements the heaps generate, and each
/// heap's action (`act[x * heaps + h] = x·Φ(h)`).
struct Automaton {
    size: usize,
    heaps: usize,
    act: Vec<u32>,
}

impl Automaton {
    fn act(&self, x: u32, h: usize) -> u32 {
        self.act[x as usize * self.heaps + h]
    }

    fn of_heaps(&self, x: u32, heaps: &[usize]) -> u32 {
        heaps.iter().fold(x, |x, &h| self.act(x, h))
    }

    /// The mex rule at each element's least position: P when that position is
    /// not empty and none of its options is P. Its options are smaller, so
    /// their elements are marked first.
    fn mark(&self, opts: &Options, work: &Work) -> Result<Vec<bool>, Refused> {
        let mut marked = vec![false; self.size];
        let mut p = vec![false; self.size];
        let mut word = vec![0u32; opts.len()];
        self.mark_from(
            opts.len() - 1,
            &mut word,
            0,
            &[],
            opts,
            &mut marked,
            &mut p,
            work,
        )?;
        Ok(p)
    }

    #[allow(clippy::too_many_arguments)]
    fn mark_from(
        &self,
        d: usize,
        word: &mut Word,
        e: u32,
        tr: &[u32],
        opts: &Options,
        marked: &mut [bool],
        p: &mut [bool],
        work: &Work,
    ) -> Result<(), Refused> {
        if d == 0 {
            if !marked[e as usize] {
                marked[e as usize] = true;
                p[e as usize] = !tr.is_empty() && tr.iter().all(|&t| !p[t as usize]);
            }
            return Ok(());
        }
        self.mark_from(d - 1, word, e, tr, opts, marked, p, work)?;
        if opts[d].is_empty() {
            return Ok(());
        }
        let (mut e, mut tr) = (e, tr.to_vec());
        loop {
            work.spend(1 + tr.len() as u64)?;
            let mut next: Vec<u32> = tr.iter().map(|&t| self.act(t, d)).collect();
            next.extend(opts[d].iter().map(|o| self.of_heaps(e, o)));
            next.sort_unstable();
            next.dedup();
            e = self.act(e, d);
            if marked[e as usize] {
                break;
            }
            tr = next;
            word[d] += 1;
            self.mark_from(d - 1, word, e, &tr, opts, marked, p, work)?;
        }
        word[d] = 0;
        Ok(())
    }

    /// Merges elements no position tells apart (Moore's partition
    /// refinement: same P-status, and the same class after every heap), and
    /// builds the quotient monoid's table.
    fn reduce(&self, p: &[bool], work: &Work) -> Result<Table, Refused> {
        let mut class: Vec<u32> = p.iter().map(|&b| u32::from(b)).collect();
        let mut count = if p.iter().any(|&b| b) && p.iter().any(|&b| !b) {
            2
        } else {
            // One class: renumber to 0.
            class.iter_mut().for_each(|c| *c = 0);
            1
        };
        loop {
            work.spend((self.size * self.heaps) as u64)?;
            let mut ids: HashMap<Vec<u32>, u32> = HashMap::new();
            let next: Vec<u32> = (0..self.size as u32)
                .map(|x| {
                    let mut sig = vec![class[x as usize]];
                    sig.extend((0..self.heaps).map(|h| class[self.act(x, h) as usize]));
                    let n = ids.len() as u32;
                    *ids.entry(sig).or_insert(n)
                })
                .collect();
            let n = ids.len();
            class = next;
            if n == count {
                break;
            }
            count = n;
        }
        if count > MAX_QUOTIENT {
            return Err(Refused::Budget);
        }
        // Renumber so that the identity (element 0) is class 0.
        let mut order = vec![u32::MAX; count];
        let mut rep = Vec::with_capacity(count);
        order[class[0] as usize] = 0;
        rep.push(0u32);
        for x in 0..self.size as u32 {
            let c = class[x as usize] as usize;
            if order[c] == u32::MAX {
                order[c] = rep.len() as u32;
                rep.push(x);
            }
        }
        let class: Vec<u32> = class.iter().map(|&c| order[c as usize]).collect();
        // A word for each representative (a path of heaps from the identity),
        // so that a·b is a's representative acted on by b's word.
        let mut path: Vec<Option<(u32, usize)>> = vec![None; self.size];
        let mut reached = vec![false; self.size];
        reached[0] = true;
        let mut queue = std::collections::VecDeque::from([0u32]);
        while let Some(x) = queue.pop_front() {
            for h in 0..self.heaps {
                let y = self.act(x, h);
                if !reached[y as usize] {
                    reached[y as usize] = true;
                    path[y as usize] = Some((x, h));
                    queue.push_back(y);
                }
            }
        }
        let word_of = |mut x: u32| {
            let mut w = Vec::new();
            while let Some((from, h)) = path[x as usize] {
                w.push(h);
                x = from;
            }
            w
        };
        let words: Vec<Vec<usize>> = rep.iter().map(|&r| word_of(r)).collect();
        let mut mul = vec![0u32; count * count];
        for a in 0..count {
            work.spend(count as u64)?;
            for b in 0..count {
                let x = self.of_heaps(rep[a], &words[b]);
                mul[a * count + b] = class[x as usize];
            }
        }
        let mut cp = vec![false; count];
        for x in 0..self.size {
            cp[class[x] as usize] = p[x];
        }
        let heap = (0..self.heaps)
            .map(|h| class[self.act(0, h) as usize])
            .collect();
        Ok(Table {
            size: count,
            mul,
            p: cp,
            heap,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Heap options of Nim (take any number): misère Nim.
    fn nim_options(n: usize) -> Vec<Vec<Vec<usize>>> {
        (0..=n)
            .map(|h| {
                (0..h)
                    .map(|r| if r == 0 { vec![] } else { vec![r] })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn misere_nim_quotient_matches_bouton() {
        // Heaps up to 3: the tame quotient of 6 elements (Plambeck-Siegel's T2).
        let q = Quotient::build(&nim_options(3), 1_000_000).unwrap();
        assert_eq!(q.size(), 6);
        for a in 0..4u64 {
            for b in 0..4u64 {
                for c in 0..4u64 {
                    let heaps = [a, b, c];
                    let big = heaps.iter().any(|&h| h > 1);
                    let p = if big {
                        a ^ b ^ c == 0
                    } else {
                        heaps.iter().filter(|&&h| h == 1).count() % 2 == 1
                    };
                    let x = heaps
                        .iter()
                        .fold(0, |x, &h| q.mul(x, q.element_of_heaps(&[h as usize])));
                    assert_eq!(q.is_p(x), p, "{heaps:?}");
                }
            }
        }
        // A thousand heaps of 1 and one of 2: the count's parity decides.
        let x = q.element([(1, 1001), (2, 1)]);
        assert!(!q.is_p(x), "1001 ones and a 2: N");
        assert!(q.is_p(q.element([(1, 1001)])));
        assert!(!q.is_p(q.element([(1, 1000)])));
    }

    #[test]
    fn the_budget_refuses() {
        assert_eq!(
            Quotient::build(&nim_options(8), 10).unwrap_err(),
            Refused::Budget
        );
    }

    #[test]
    fn lex_order() {
        assert!(lex_less(&[0, 5, 0], &[0, 0, 1]));
        assert!(!lex_less(&[0, 0, 1], &[0, 5, 0]));
        assert!(!lex_less(&[0, 1], &[0, 1]));
    }
}
