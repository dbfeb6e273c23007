//! The perfect player's move at the limits of docs/games.md, for every family.
//! Target: under 50 ms each on one core. Run: `cargo bench -p grundy-protocol`.
//! Table builds (`table/...`) are measured apart: they happen once per rule or
//! spec, when a match is created, and must stay under 2 s.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use grundy_protocol::games::rule::octal_shape;
use grundy_protocol::games::sequence::Sequence;
use grundy_protocol::{Position, Strategy};
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
            "subtraction",
            json!({"game": "subtraction", "set": [1, 3, 4], "heaps": r.many(10_000, big)}),
        ),
    ]
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
