//! Nim-multiplication (`grundy_engine::nimber`): products of 64-bit numbers,
//! of bytes (the table), and an inverse. Run: `cargo bench -p grundy-engine
//! --bench nimber`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use grundy_engine::nimber::{nim_inverse, nim_mul};

fn products(c: &mut Criterion) {
    let mut group = c.benchmark_group("nimber");
    // 1,000 pairs of each width, the same every run.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for bits in [8u32, 16, 32, 64] {
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1 << bits) - 1
        };
        let pairs: Vec<(u64, u64)> = (0..1000).map(|_| (next() & mask, next() & mask)).collect();
        group.bench_function(format!("mul-{bits}-bit-x1000"), |b| {
            b.iter(|| {
                pairs
                    .iter()
                    .fold(0, |acc, &(a, b)| acc ^ nim_mul(black_box(a), black_box(b)))
            })
        });
    }
    let a = next();
    group.bench_function("inverse-64-bit", |b| b.iter(|| nim_inverse(black_box(a))));
    group.finish();
}

criterion_group!(benches, products);
criterion_main!(benches);
