//! Criterion benchmark of the in-process render for a realistic full-mode
//! input: every bootstrap file (a 39,000-char MEMORY.md that gets cut), 20
//! tools with schemas, 3 skills, ~35,000 chars of output. Goal: < 20 µs per
//! render on one core.
//!
//! Three figures:
//! - `cold`: the pure function; the stable block is built and hashed
//!   (SHA-256 over the prefix and every section) on every call.
//! - `per_turn`: what a session's turns cost from a [`Prepared`] block (what
//!   prompt-service's cache holds): the runtime line is new on every turn
//!   (1,024 hosts in turn) and the channel alternates between two, so only
//!   the dynamic suffix is rebuilt, and the runtime section is hashed on
//!   every turn while the others repeat sections seen before.
//! - `per_turn_new_channel`: the same with the channel new on every turn
//!   too (1,024 names), so the channel's sections are hashed every time.
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

    let mut stable = input.clone();
    let _ = stable.take_turn();
    let prepared = Prepared::new(stable).unwrap_or_else(|e| panic!("the fixture prepares: {e}"));
    let turns = |new_channel: bool| -> Vec<_> {
        (0..1024)
            .map(|i| {
                let mut turn = input.clone();
                turn.runtime.host = format!("host-{i}");
                turn.channel.name = match (new_channel, i % 2) {
                    (true, _) => format!("channel-{i}"),
                    (false, 0) => "telegram".into(),
                    (false, _) => "discord".into(),
                };
                turn.take_turn()
            })
            .collect()
    };
    for (name, turns) in [
        ("per_turn", turns(false)),
        ("per_turn_new_channel", turns(true)),
    ] {
        let mut i = 0usize;
        group.bench_function(name, |b| {
            b.iter(|| {
                i = (i + 1) % turns.len();
                prepared.render_turn(black_box(&turns[i]))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_render);
criterion_main!(benches);
