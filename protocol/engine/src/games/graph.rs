//! `graph`: any finite impartial game as a directed acyclic graph. Tokens sit on
//! vertices (several may share one); a move slides one token along one edge.
//!
//! Strategy (Sprague–Grundy): g(v) is the mex of g over v's successors, and a
//! position's value is the xor of g over the tokens. A winning move takes a
//! token from v to a successor of value g(v) ^ total. The values depend only on
//! the graph, so they are computed once, when the spec is read, in a
//! sinks-first (reverse topological) order without recursion, and shared by
//! every position through an `Arc`.
//!
//! Misère (`"misere": true`, whoever cannot move wins): with one token that
//! can move, a vertex is won for the player to move when it is a sink or has a
//! successor that is lost (computed in the same sinks-first pass). Several
//! tokens that can move have no values to add, so their positions are solved
//! by exhaustive search ([`crate::games::misere::search`]) within its limit.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};

use crate::draw::{distinct, SplitMix64};
use crate::error::{MoveError, SpecError};
use crate::game::{Collector, MoveList, Outcome, Rules, Status, Strategy, Summand};
use crate::games::misere::search::Table;
use crate::games::misere::Method;
use crate::games::{Entry, GameId};
use crate::json::{array_at, fail, index, kind, u64_at, Fail, Obj};
use crate::limits::{MAX_EDGES, MAX_MISERE_SEARCH_POSITIONS, MAX_TOKENS, MAX_VERTICES};

use super::nim::malformed;

/// Largest random graph: a random start is held to the size of a spec a
/// client could send (docs/protocol.md, `max_frame_bytes`, 64 KiB), and a
/// random graph takes up to about 50 bytes of JSON per vertex.
pub const RANDOM_GRAPH_VERTICES: u64 = 1_000;

/// The game ids of this family (with its presets, if any), for the
/// catalogue ([`crate::games::catalogue`]).
pub const GAMES: &[GameId] = &[
    // A random graph is held to what fits in a client's frame; in a sum,
    // to what leaves room for the other parts.
    GameId::new("graph", "Graph game", 8, RANDOM_GRAPH_VERTICES)
        .builds_tables()
        .in_mix(150)
        .over_at_1()
        .misere(),
];

/// The graph with its Grundy values, built once per spec.
pub struct GraphTable {
    n: u32,
    /// Successors of v: `targets[offsets[v]..offsets[v + 1]]`, without
    /// duplicates, sorted by (g, vertex) so the successors of one value are a
    /// contiguous run found by binary search.
    offsets: Vec<u32>,
    targets: Vec<u32>,
    g: Vec<u32>,
    /// The longest play from v (0 at a sink).
    height: Vec<u32>,
    /// Misère play with one token: the player to move wins from v.
    misere_wins: Vec<bool>,
}

impl GraphTable {
    fn succ(&self, v: u32) -> &[u32] {
        let (a, b) = (self.offsets[v as usize], self.offsets[v as usize + 1]);
        &self.targets[a as usize..b as usize]
    }

    /// The successors of v whose value is `value`.
    fn succ_with_value(&self, v: u32, value: u32) -> &[u32] {
        let s = self.succ(v);
        let lo = s.partition_point(|&u| self.g[u as usize] < value);
        let hi = lo + s[lo..].partition_point(|&u| self.g[u as usize] == value);
        &s[lo..hi]
    }

    fn has_edge(&self, v: u32, u: u32) -> bool {
        let key = (self.g[u as usize], u);
        self.succ(v)
            .binary_search_by_key(&key, |&w| (self.g[w as usize], w))
            .is_ok()
    }

    /// The successor that keeps the game longest (ties: the larger value).
    fn patient_succ(&self, v: u32) -> Option<u32> {
        self.succ(v)
            .iter()
            .copied()
            .max_by_key(|&u| (self.height[u as usize], self.g[u as usize]))
    }

    /// Builds the adjacency and the values; refuses a cycle.
    fn build(n: u32, mut edges: Vec<(u32, u32)>) -> Result<GraphTable, Fail> {
        let nu = n as usize;
        edges.sort_unstable();
        edges.dedup();
        let mut offsets = vec![0u32; nu + 1];
        for &(a, _) in &edges {
            offsets[a as usize + 1] += 1;
        }
        for v in 0..nu {
            offsets[v + 1] += offsets[v];
        }
        let targets: Vec<u32> = edges.iter().map(|&(_, b)| b).collect();
        // Predecessors, to peel the graph from its sinks.
        let mut pred_off = vec![0u32; nu + 1];
        for &(_, b) in &edges {
            pred_off[b as usize + 1] += 1;
        }
        for v in 0..nu {
            pred_off[v + 1] += pred_off[v];
        }
        let mut fill = pred_off.clone();
        let mut preds = vec![0u32; edges.len()];
        for &(a, b) in &edges {
            preds[fill[b as usize] as usize] = a;
            fill[b as usize] += 1;
        }
        drop(edges);
        let mut left: Vec<u32> = (0..nu).map(|v| offsets[v + 1] - offsets[v]).collect();
        let mut queue: Vec<u32> = (0..n).filter(|&v| left[v as usize] == 0).collect();
        let mut g = vec![0u32; nu];
        let mut height = vec![0u32; nu];
        let mut misere_wins = vec![false; nu];
        // stamp[k] == v + 1: some successor of v has value k (for the mex).
        let mut stamp = vec![0u32; nu + 1];
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head];
            head += 1;
            let succ = &targets[offsets[v as usize] as usize..offsets[v as usize + 1] as usize];
            let mut h = 0;
            // A sink is a misère win: the player to move cannot move.
            let mut wins = succ.is_empty();
            for &u in succ {
                // g(u) <= out-degree(u) < n, so it indexes `stamp`.
                stamp[g[u as usize] as usize] = v + 1;
                h = h.max(height[u as usize] + 1);
                wins |= !misere_wins[u as usize];
            }
            misere_wins[v as usize] = wins;
            g[v as usize] = (0..).find(|&k| stamp[k as usize] != v + 1).unwrap_or(0);
            height[v as usize] = h;
            for &p in &preds[pred_off[v as usize] as usize..pred_off[v as usize + 1] as usize] {
                left[p as usize] -= 1;
                if left[p as usize] == 0 {
                    queue.push(p);
                }
            }
        }
        if queue.len() < nu {
            return Err(cycle_error(n, &offsets, &targets, &left));
        }
        let mut targets = targets;
        for v in 0..nu {
            targets[offsets[v] as usize..offsets[v + 1] as usize]
                .sort_unstable_by_key(|&u| (g[u as usize], u));
        }
        Ok(GraphTable {
            n,
            offsets,
            targets,
            g,
            height,
            misere_wins,
        })
    }
}

/// Every vertex the peeling could not remove has a successor that was not
/// removed either, so following such successors must close a cycle.
fn cycle_error(n: u32, offsets: &[u32], targets: &[u32], left: &[u32]) -> Fail {
    let stuck = |v: u32| left[v as usize] > 0;
    let Some(start) = (0..n).find(|&v| stuck(v)) else {
        return ("edges".into(), "the edges form a cycle".into());
    };
    let mut step_of = std::collections::HashMap::new();
    let mut walk = Vec::new();
    let mut v = start;
    while let std::collections::hash_map::Entry::Vacant(e) = step_of.entry(v) {
        e.insert(walk.len());
        walk.push(v);
        let succ = &targets[offsets[v as usize] as usize..offsets[v as usize + 1] as usize];
        match succ.iter().copied().find(|&u| stuck(u)) {
            Some(u) => v = u,
            None => return ("edges".into(), "the edges form a cycle".into()),
        }
    }
    let cycle = &walk[step_of[&v]..];
    let shown: Vec<String> = cycle.iter().take(8).map(|u| u.to_string()).collect();
    let path = if cycle.len() > 8 {
        format!(
            "{} -> ... -> {v} ({} vertices)",
            shown.join(" -> "),
            cycle.len()
        )
    } else {
        format!("{} -> {v}", shown.join(" -> "))
    };
    (
        "edges".into(),
        format!("the edges form a cycle through vertex {v}: {path}; the graph must be acyclic"),
    )
}

/// Tokens on the shared graph. Equality and hashing look at the tokens (and
/// at the graph only when two positions do not share one table).
#[derive(Clone)]
pub struct Graph {
    table: Arc<GraphTable>,
    pub tokens: Vec<u32>,
    /// Misère play; with several tokens that can move, the searched outcomes
    /// of every position reachable from the spec.
    misere: Option<Option<Arc<Table<Vec<u32>>>>>,
}

impl PartialEq for Graph {
    fn eq(&self, other: &Self) -> bool {
        self.tokens == other.tokens
            && self.misere.is_some() == other.misere.is_some()
            && (Arc::ptr_eq(&self.table, &other.table)
                || (self.table.n == other.table.n
                    && self.table.offsets == other.table.offsets
                    && self.table.targets == other.table.targets))
    }
}

impl Eq for Graph {}

impl Hash for Graph {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.table.n.hash(state);
        self.table.targets.len().hash(state);
        self.tokens.hash(state);
        self.misere.is_some().hash(state);
    }
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.table;
        if t.targets.len() <= 64 {
            let edges: Vec<(u32, u32)> = (0..t.n)
                .flat_map(|v| t.succ(v).iter().map(move |&u| (v, u)))
                .collect();
            write!(
                f,
                "Graph {{ n: {}, edges: {edges:?}, tokens: {:?} }}",
                t.n, self.tokens
            )
        } else {
            write!(
                f,
                "Graph {{ n: {}, {} edges, tokens: {:?} }}",
                t.n,
                t.targets.len(),
                self.tokens
            )
        }
    }
}

fn movable_key(t: &GraphTable, tokens: &[u32]) -> Vec<u32> {
    let mut key: Vec<u32> = tokens
        .iter()
        .copied()
        .filter(|&v| !t.succ(v).is_empty())
        .collect();
    key.sort_unstable();
    key
}

/// Misère with several tokens that can move: every reachable position solved,
/// or the refusal. With at most one, the per-vertex table decides (None).
fn misere_search(t: &GraphTable, tokens: &[u32]) -> Result<Option<Arc<Table<Vec<u32>>>>, Fail> {
    let start = movable_key(t, tokens);
    if start.len() <= 1 {
        return Ok(None);
    }
    let mut moves_left = 20 * MAX_MISERE_SEARCH_POSITIONS;
    let table = Table::solve(
        start.clone(),
        |key: &Vec<u32>| {
            let mut children = Vec::new();
            for (i, &v) in key.iter().enumerate() {
                if i > 0 && key[i - 1] == v {
                    continue; // the same move as the token before
                }
                for &u in t.succ(v) {
                    moves_left = moves_left.checked_sub(1)?;
                    let mut child = key.clone();
                    child.remove(i);
                    if !t.succ(u).is_empty() {
                        let at = child.partition_point(|&w| w < u);
                        child.insert(at, u);
                    }
                    children.push(child);
                }
            }
            Some(children)
        },
        MAX_MISERE_SEARCH_POSITIONS,
    )
    .map_err(|_| {
        (
            "misere".to_string(),
            format!(
                "{} tokens can move: misère sums have no values to add, so several tokens are played by exhaustive search, limited to {MAX_MISERE_SEARCH_POSITIONS} positions, and this one reaches more (one movable token is played on any graph)",
                start.len()
            ),
        )
    })?;
    Ok(Some(Arc::new(table)))
}

/// `{"token": t, "to": v}`: move token `t` (from 0, in the spec's order) along
/// an edge to vertex `v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct TokenMove {
    pub token: usize,
    pub to: u64,
}

impl TokenMove {
    pub fn parse(v: &Value) -> Result<Self, Fail> {
        let mut o = Obj::new(v, "move")?;
        let token = o.req_u64("token", u32::MAX as u64)? as usize;
        let to = o.req_u64("to", u64::MAX)?;
        Ok(TokenMove { token, to })
    }
}

fn no_vertex(path: &str, v: u64, n: u32) -> Result<u32, Fail> {
    if n == 0 {
        fail(
            path,
            format!("vertex {v} does not exist: the graph has no vertices"),
        )
    } else {
        fail(
            path,
            format!(
                "vertex {v} does not exist (vertices are numbered 0 to {})",
                n - 1
            ),
        )
    }
}

fn vertex_at(v: &Value, path: &str, n: u32) -> Result<u32, Fail> {
    let x = u64_at(v, path, u64::MAX)?;
    if x < u64::from(n) {
        Ok(x as u32)
    } else {
        no_vertex(path, x, n)
    }
}

/// Reads one edge; the common case allocates nothing (a million of them).
fn edge_at(e: &Value, i: usize, n: u32) -> Result<(u32, u32), Fail> {
    let pair = match e {
        Value::Array(a) if a.len() == 2 => a,
        other => {
            return fail(
                &format!("edges[{i}]"),
                format!("expected a pair [from, to], got {}", kind(other)),
            )
        }
    };
    let quick = |x: &Value| x.as_u64().filter(|&x| x < u64::from(n));
    let (a, b) = match (quick(&pair[0]), quick(&pair[1])) {
        (Some(a), Some(b)) => (a as u32, b as u32),
        _ => (
            vertex_at(&pair[0], &format!("edges[{i}][0]"), n)?,
            vertex_at(&pair[1], &format!("edges[{i}][1]"), n)?,
        ),
    };
    if a == b {
        return fail(
            &format!("edges[{i}]"),
            format!("a self-loop at vertex {a}: the graph must be acyclic"),
        );
    }
    Ok((a, b))
}

impl Graph {
    pub fn from_spec(o: &mut Obj) -> Result<Self, Fail> {
        let n = o.req_u64("vertices", MAX_VERTICES)? as u32;
        let edges_path = o.path("edges");
        let raw = array_at(o.req("edges")?, &edges_path, MAX_EDGES)?;
        let edges = raw
            .iter()
            .enumerate()
            .map(|(i, e)| edge_at(e, i, n))
            .collect::<Result<Vec<_>, Fail>>()?;
        let tokens_path = o.path("tokens");
        let tokens = array_at(o.req("tokens")?, &tokens_path, MAX_TOKENS)?
            .iter()
            .enumerate()
            .map(|(i, t)| vertex_at(t, &index(&tokens_path, i), n))
            .collect::<Result<Vec<_>, Fail>>()?;
        let table = Arc::new(GraphTable::build(n, edges)?);
        let misere = match o.opt_bool("misere")? {
            Some(true) => Some(misere_search(&table, &tokens)?),
            _ => None,
        };
        Ok(Graph {
            table,
            tokens,
            misere,
        })
    }

    /// Which method decides this misère position (None in normal play): a
    /// search, of the single-token game on every vertex or of the positions
    /// several tokens reach.
    pub fn misere_method(&self) -> Option<Method> {
        self.misere.as_ref().map(|_| Method::Search)
    }

    /// The tokens that can still move, sorted: the search's key (a token on a
    /// sink changes nothing).
    fn key(&self) -> Vec<u32> {
        movable_key(&self.table, &self.tokens)
    }

    /// Misère: whether the player to move wins.
    fn misere_wins(&self, searched: &Option<Arc<Table<Vec<u32>>>>) -> bool {
        self.key_wins(searched, &self.key())
    }

    /// Misère: whether the player to move wins with the movable tokens `key`.
    fn key_wins(&self, searched: &Option<Arc<Table<Vec<u32>>>>, key: &[u32]) -> bool {
        match (searched, key) {
            (_, []) => true,
            (_, [v]) => self.table.misere_wins[*v as usize],
            (Some(t), _) => t
                .to_move_wins(&key.to_vec())
                .expect("positions of the match were reached by the search"),
            (None, _) => unreachable!("several movable tokens are searched"),
        }
    }

    pub fn nim_sum(&self) -> u32 {
        self.tokens
            .iter()
            .fold(0, |acc, &v| acc ^ self.table.g[v as usize])
    }

    /// The Grundy value of vertex `v` (None when there is no such vertex).
    pub fn vertex_value(&self, v: u32) -> Option<u32> {
        self.table.g.get(v as usize).copied()
    }
}

impl Rules for Graph {
    type Move = TokenMove;

    fn parse_move(&self, v: &Value) -> Result<TokenMove, MoveError> {
        TokenMove::parse(v).map_err(malformed)
    }

    fn check(&self, mv: &TokenMove) -> Result<(), MoveError> {
        if self.status() != Status::Ongoing {
            return Err(MoveError::GameOver);
        }
        let &v = self.tokens.get(mv.token).ok_or(MoveError::NoSuch {
            what: "token",
            index: mv.token as u64,
            count: self.tokens.len() as u64,
            first: 0,
        })?;
        let t = &self.table;
        if mv.to >= u64::from(t.n) {
            return Err(MoveError::NoSuch {
                what: "vertex",
                index: mv.to,
                count: u64::from(t.n),
                first: 0,
            });
        }
        if t.succ(v).is_empty() {
            return Err(MoveError::forbidden(format!(
                "token {} is on vertex {v}, which has no outgoing edge",
                mv.token
            )));
        }
        if !t.has_edge(v, mv.to as u32) {
            return Err(MoveError::forbidden(format!(
                "there is no edge from vertex {v} (token {}) to vertex {}",
                mv.token, mv.to
            )));
        }
        Ok(())
    }

    fn apply_checked(&mut self, mv: &TokenMove) {
        self.tokens[mv.token] = mv.to as u32;
    }

    fn status(&self) -> Status {
        if self.tokens.iter().all(|&v| self.table.succ(v).is_empty()) {
            Status::Over {
                to_move_wins: self.misere.is_some(),
            }
        } else {
            Status::Ongoing
        }
    }

    fn legal_moves(&self, limit: usize) -> MoveList<TokenMove> {
        let mut out = Collector::new(limit);
        for (token, &v) in self.tokens.iter().enumerate() {
            for &u in self.table.succ(v) {
                if !out.push(TokenMove {
                    token,
                    to: u64::from(u),
                }) {
                    return out.finish();
                }
            }
        }
        out.finish()
    }

    fn to_json(&self) -> Value {
        let t = &self.table;
        let mut edges = Vec::with_capacity(t.targets.len());
        for v in 0..t.n {
            let mut succ = t.succ(v).to_vec();
            succ.sort_unstable();
            edges.extend(succ.into_iter().map(|u| [v, u]));
        }
        let mut spec =
            json!({"game": "graph", "vertices": t.n, "edges": edges, "tokens": self.tokens});
        if self.misere.is_some() {
            spec["misere"] = json!(true);
        }
        spec
    }

    fn normal_play(&self) -> bool {
        self.misere.is_none()
    }
}

/// Normal-play graph tokens as a part of a sum (a sum refuses misère parts).
impl Summand for Graph {
    fn value(&self) -> u64 {
        u64::from(self.nim_sum())
    }

    fn moves_to(&self, target: u64, limit: usize) -> MoveList<TokenMove> {
        let mut out = Collector::new(limit);
        let Ok(target) = u32::try_from(target) else {
            return out.finish();
        };
        let x = self.nim_sum() ^ target;
        if x == 0 {
            return out.finish();
        }
        let t = &self.table;
        for (token, &v) in self.tokens.iter().enumerate() {
            // Successors may have larger values than v too: look up the
            // target value whichever side of g(v) it lies.
            for &u in t.succ_with_value(v, t.g[v as usize] ^ x) {
                if !out.push(TokenMove {
                    token,
                    to: u64::from(u),
                }) {
                    return out.finish();
                }
            }
        }
        out.finish()
    }
}

impl Strategy for Graph {
    fn outcome(&self) -> Outcome {
        if let Some(searched) = &self.misere {
            return Outcome::from_to_move_wins(self.misere_wins(searched));
        }
        Outcome::from_to_move_wins(self.nim_sum() != 0)
    }

    fn grundy(&self) -> Option<u64> {
        // A misère sum has no Grundy value.
        self.misere.is_none().then(|| u64::from(self.nim_sum()))
    }

    fn winning_moves(&self, limit: usize) -> MoveList<TokenMove> {
        if let Some(searched) = &self.misere {
            let mut out = Collector::new(limit);
            if !self.misere_wins(searched) {
                return out.finish();
            }
            let key = self.key();
            for (token, &v) in self.tokens.iter().enumerate() {
                let Ok(at) = key.binary_search(&v) else {
                    continue; // on a sink
                };
                let mut rest = key.clone();
                rest.remove(at);
                for &u in self.table.succ(v) {
                    let mut after = rest.clone();
                    if !self.table.succ(u).is_empty() {
                        after.insert(after.partition_point(|&w| w < u), u);
                    }
                    if !self.key_wins(searched, &after)
                        && !out.push(TokenMove {
                            token,
                            to: u64::from(u),
                        })
                    {
                        return out.finish();
                    }
                }
            }
            return out.finish();
        }
        self.moves_to(0, limit)
    }

    fn best_move(&self) -> Option<TokenMove> {
        let t = &self.table;
        let x = self.nim_sum();
        if self.misere.is_some() {
            if let Some(m) = self.winning_moves(1).moves.pop() {
                return Some(m);
            }
        } else if x != 0 {
            // A token whose value has the top bit of x can go down to g ^ x,
            // which the mex guarantees among its successors.
            let found = self.tokens.iter().enumerate().find_map(|(token, &v)| {
                let target = t.g[v as usize] ^ x;
                (target < t.g[v as usize])
                    .then(|| t.succ_with_value(v, target).first().copied())
                    .flatten()
                    .map(|u| TokenMove {
                        token,
                        to: u64::from(u),
                    })
            });
            if found.is_some() {
                return found;
            }
        }
        // Lost (or, impossibly, no winning move found): the longest play on.
        let (token, &v) = self
            .tokens
            .iter()
            .enumerate()
            .filter(|&(_, &v)| !t.succ(v).is_empty())
            .max_by_key(|&(i, &v)| (t.height[v as usize], std::cmp::Reverse(i)))?;
        t.patient_succ(v).map(|u| TokenMove {
            token,
            to: u64::from(u),
        })
    }
}

impl Entry for Graph {
    const GAMES: &'static [GameId] = GAMES;

    fn read(o: &mut Obj, _id: &str) -> Result<Self, Fail> {
        Graph::from_spec(o)
    }

    fn random(_id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError> {
        Ok(random_graph(rng, s))
    }
}

/// Graph edges reach at most this many vertices up.
const GRAPH_REACH: u64 = 8;

/// A random DAG on `n` vertices: edges only from lower to higher index.
fn random_graph(rng: &mut SplitMix64, s: u64) -> Value {
    let n = if s == 1 {
        1
    } else {
        rng.range((s / 2).max(2), s)
    };
    let mut edges: Vec<[u64; 2]> = Vec::new();
    for v in 0..n.saturating_sub(1) {
        let room = (n - 1 - v).min(GRAPH_REACH);
        let out = rng.range(1, room.min(3)) as usize;
        for w in distinct(rng, out, v + 1, v + room) {
            edges.push([v, w]);
        }
    }
    let token_count = rng.range(1, 3);
    let top = n.saturating_sub(2);
    let tokens: Vec<u64> = (0..token_count).map(|_| rng.range(0, top)).collect();
    json!({"game": "graph", "vertices": n, "edges": edges, "tokens": tokens})
}
