//! The perfect player's move at the limits of docs/games.md, for every family.
//! Target: under 50 ms each on one core. Run: `cargo bench -p grundy-engine`.
//! Table builds (`table/...`) are measured apart: they happen once per rule or
//! spec, when a match is created, and must stay under 2 s.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use grundy_engine::games::grundys_game::{self, MAX_GRUNDYS_GAME_HEAP};
use grundy_engine::games::rule::{octal_shape, Rule, RuleKind};
use grundy_engine::games::sequence::Sequence;
use grundy_engine::games::wythoff::WythoffValues;
use grundy_engine::limits::{MAX_COIN_ROW, MAX_CORNERS_SIDE, MISERE_QUOTIENT_WORK};
use grundy_engine::misere::{heap_options, quotient::Quotient};
use grundy_engine::{Position, Strategy};
use serde_json::{json, Value};

/// A small deterministic generator, so every run benches the same positions.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn many(&mut self, count: usize, below: u64) -> Vec<u64> {
        (0..count).map(|_| self.below(below)).collect()
    }
}

fn limit_specs() -> Vec<(&'static str, Value)> {
    let mut r = XorShift(0x9E37_79B9_7F4A_7C15);
    let big = 1u64 << 63;
    vec![
        ("nim", json!({"game": "nim", "heaps": r.many(10_000, big)})),
        (
            "nim-misere",
            json!({"game": "nim", "misere": true, "heaps": r.many(10_000, big)}),
        ),
        (
            "kayles",
            json!({"game": "kayles", "heaps": r.many(10_000, big)}),
        ),
        (
            "octal-0.007",
            json!({"game": "heaps", "rule": {"octal": "0.007"}, "heaps": r.many(10_000, 10_001)}),
        ),
        (
            "lasker",
            json!({"game": "lasker", "heaps": r.many(10_000, big)}),
        ),
        (
            "grundy",
            json!({"game": "grundy", "heaps": r.many(10_000, MAX_GRUNDYS_GAME_HEAP + 1)}),
        ),
        (
            "subtraction",
            json!({"game": "subtraction", "set": [1, 3, 4], "heaps": r.many(10_000, big)}),
        ),
        (
            "wythoff",
            json!({"game": "wythoff", "heaps": [1_000_000_000_000_000u64, 999_999_999_999_999u64]}),
        ),
        (
            "moore",
            json!({"game": "moore", "k": 500, "heaps": big_heaps()}),
        ),
        (
            "moore-bounded",
            json!({"game": "moore", "k": 1, "max_take": 1_000_000_007u64, "heaps": big_heaps()}),
        ),
        (
            "new-stone",
            json!({"game": "new-stone", "heaps": big_heaps()}),
        ),
        (
            "staircase",
            json!({"game": "staircase", "pieces": staircase_pieces()}),
        ),
        (
            "treblecross",
            json!({"game": "treblecross", "length": 2000}),
        ),
        ("darkraft", darkraft_grid(&mut r)),
        (
            "twist",
            json!({"game": "twist", "stones": 1_000_000_000_000u64}),
        ),
        ("graph", graph_spec()),
        (
            "mock-turtles",
            json!({"game": "mock-turtles", "coins": coin_row(&mut r, MAX_COIN_ROW)}),
        ),
        (
            "ruler",
            json!({"game": "ruler", "coins": coin_row(&mut r, MAX_COIN_ROW)}),
        ),
        ("turning-corners", corners_board(&mut r)),
        ("sum-mixed", mixed_sum(&mut r)),
        ("sum-wythoff", wythoff_sum(&mut r)),
        ("sum-searched", searched_sum()),
        // Misère at the limits of docs/games.md "Misère play".
        (
            "kayles-misere",
            json!({"game": "kayles", "misere": true, "heaps": r.many(10_000, 21)}),
        ),
        (
            "dawson-misere",
            json!({"game": "dawson", "misere": true, "heaps": r.many(10_000, 21)}),
        ),
        (
            "dawson-misere-30",
            json!({"game": "dawson", "misere": true, "heaps": r.many(10_000, 31)}),
        ),
        (
            "subtraction-misere",
            json!({"game": "subtraction", "set": [1, 3, 4], "misere": true, "heaps": r.many(10_000, big)}),
        ),
        (
            "lasker-misere",
            json!({"game": "lasker", "misere": true, "heaps": r.many(10_000, 101)}),
        ),
        ("graph-misere", graph_misere_spec()),
    ]
}

/// 100 parts of every family that can be one, each at a large size, within
/// the sum's limits (1,100,000 items in all).
fn mixed_sum(r: &mut XorShift) -> Value {
    let big = 1u64 << 63;
    let parts: Vec<Value> = (0..100)
        .map(|i| match i % 7 {
            0 => json!({"game": "nim", "heaps": r.many(1000, big)}),
            1 => json!({"game": "kayles", "heaps": r.many(1000, big)}),
            2 => json!({"game": "wythoff", "heaps": [r.below(2001), r.below(2001)]}),
            3 => json!({"game": "staircase", "pieces": staircase_pieces()}),
            4 => darkraft_grid(r),
            5 => json!({"game": "lasker", "heaps": r.many(1000, big)}),
            _ => json!({"game": "moore", "k": 2, "heaps": [r.below(8), r.below(8), r.below(8)]}),
        })
        .collect();
    json!({"game": "sum", "parts": parts})
}

/// 100 Wythoff pairs up to the part limit: every winning-move search tries
/// all of a pair's moves in the table.
fn wythoff_sum(r: &mut XorShift) -> Value {
    let parts: Vec<Value> = (0..100)
        .map(|_| json!({"game": "wythoff", "heaps": [r.below(2001), r.below(2001)]}))
        .collect();
    json!({"game": "sum", "parts": parts})
}

/// Parts searched exhaustively, near the search budget of one sum.
fn searched_sum() -> Value {
    json!({"game": "sum", "parts": [
        {"game": "moore", "k": 2, "heaps": [8, 8, 8, 7]},
        {"game": "new-stone", "heaps": [4, 3, 3, 2]},
        {"game": "nim", "heaps": [5]}]})
}

/// The largest graph with one token, in misère play.
fn graph_misere_spec() -> Value {
    let mut spec = graph_spec();
    spec["tokens"] = json!([0]);
    spec["misere"] = json!(true);
    spec
}

/// 1,000 distinct heaps near 2^63.
fn big_heaps() -> Vec<u64> {
    (0..1000u64)
        .map(|i| (1u64 << 63) - i * 7_777_777_777)
        .collect()
}

/// 1,000 pieces spread up to 10^15, one pair gap changed so the position is N.
fn staircase_pieces() -> Vec<u64> {
    let mut p: Vec<u64> = (1..=1000u64).map(|i| i * 1_000_000_000_000).collect();
    p[998] -= 5;
    p
}

fn darkraft_grid(r: &mut XorShift) -> Value {
    let rows: Vec<String> = (0..20)
        .map(|_| {
            (0..20)
                .map(|_| ['L', 'R', 'X'][r.below(3) as usize])
                .collect()
        })
        .collect();
    json!({"game": "darkraft", "grid": rows})
}

/// `n` coins, each heads or tails.
fn coin_row(r: &mut XorShift, n: usize) -> String {
    (0..n)
        .map(|_| if r.below(2) == 1 { 'H' } else { 'T' })
        .collect()
}

/// Turning Corners at its limit, 64 × 64.
fn corners_board(r: &mut XorShift) -> Value {
    let rows: Vec<String> = (0..MAX_CORNERS_SIDE)
        .map(|_| coin_row(r, MAX_CORNERS_SIDE))
        .collect();
    json!({"game": "turning-corners", "coins": rows})
}

/// 100,000 vertices, each with edges to the next ten: 999,945 edges; 10,000 tokens.
fn graph_spec() -> Value {
    let n = 100_000u64;
    let edges: Vec<[u64; 2]> = (0..n)
        .flat_map(|v| (1..=10).filter(move |k| v + k < n).map(move |k| [v, v + k]))
        .collect();
    let tokens: Vec<u64> = (0..10_000u64).map(|i| (i * 7919) % n).collect();
    json!({"game": "graph", "vertices": n, "edges": edges, "tokens": tokens})
}

fn best_move(c: &mut Criterion) {
    let mut group = c.benchmark_group("best_move");
    for (name, spec) in limit_specs() {
        let position = Position::from_spec(&spec).expect("limit spec is valid");
        group.bench_function(name, |b| b.iter(|| position.best_move()));
    }
    group.finish();
}

fn tables(c: &mut Criterion) {
    let mut group = c.benchmark_group("table");
    group.sample_size(10);
    // Specs whose tables are built per match, when the match is created.
    let mut r = XorShift(7);
    for (name, spec) in [
        ("darkraft", darkraft_grid(&mut r)),
        ("graph", graph_spec()),
        ("sum-searched", searched_sum()),
        ("graph-misere", graph_misere_spec()),
    ] {
        group.bench_function(name, |b| b.iter(|| Position::from_spec(&spec)));
    }
    // Misère quotients, per (rule, largest heap): built once per process.
    for (code, n) in [("0.77", 20), ("0.07", 20), ("0.07", 30), ("0.77", 100)] {
        let options = heap_options(&Rule::new(RuleKind::Octal(code.into())).unwrap(), n);
        group.bench_function(format!("misere-quotient-{code}-{n}"), |b| {
            b.iter(|| Quotient::build(&options, MISERE_QUOTIENT_WORK).expect("within budget"))
        });
    }
    let lasker = heap_options(&Rule::new(RuleKind::Lasker).unwrap(), 100);
    group.bench_function("misere-quotient-lasker-100", |b| {
        b.iter(|| Quotient::build(&lasker, MISERE_QUOTIENT_WORK).expect("within budget"))
    });
    group.bench_function("wythoff-2000", |b| b.iter(|| WythoffValues::build(2000)));
    // Grundy's game: the tiers' tables, the largest (2^20) once per process.
    for n in [1 << 16, MAX_GRUNDYS_GAME_HEAP as usize] {
        group.bench_function(format!("grundys-game-{n}"), |b| {
            b.iter(|| grundys_game::values(n))
        });
    }
    for code in ["0.77", "0.007"] {
        let shape = octal_shape(code).expect("valid code");
        group.bench_function(format!("octal-{code}"), |b| {
            b.iter_batched(
                || shape.clone(),
                |s| Sequence::compute(&s, 10_000),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, best_move, tables);
criterion_main!(benches);
