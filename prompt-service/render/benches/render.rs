//! Criterion benchmark of the in-process render for a realistic full-mode
//! input: every bootstrap file (a 39,000-char MEMORY.md that gets cut), 20
//! tools with schemas, 3 skills, ~35,000 chars of output. Goal: < 20 µs per
//! render on one core.
//!
//! Two figures:
//! - `cold`: the pure function; the stable block is built and hashed
//!   (SHA-256 over the prefix and every section) on every call.
//! - `per_turn`: what a session's turns cost from a [`Prepared`] block (what
//!   prompt-service's cache holds): per-turn inputs (channel, runtime line)
//!   changing on every call, so only the dynamic suffix is rebuilt.
//!
//! Run: `cargo bench -p prompt-render --bench render`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use prompt_render::{Prepared, fixtures, render};

fn bench_render(c: &mut Criterion) {
    let input = fixtures::realistic();
    let size = render(&input).map(|r| r.chars).unwrap_or(0);
    let mut group = c.benchmark_group(format!("render_{size}_chars"));
    group.bench_function("cold", |b| b.iter(|| render(black_box(&input))));

    let mut turns = [input.clone(), input.clone()];
    turns[1].channel.name = "discord".into();
    turns[1].runtime.host = "other-host".into();
    let turns = turns.map(|mut t| t.take_turn());
    let mut stable = input.clone();
    let _ = stable.take_turn();
    let prepared = Prepared::new(stable).unwrap_or_else(|e| panic!("the fixture prepares: {e}"));
    let mut i = 0usize;
    group.bench_function("per_turn", |b| {
        b.iter(|| {
            i += 1;
            prepared.render_turn(black_box(&turns[i % 2]))
        })
    });
    group.finish();
}

criterion_group!(benches, bench_render);
criterion_main!(benches);
