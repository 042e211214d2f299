//! Open and replay a 100 MB transcript containing one 1 MB line (L9), plus the cost of reading
//! its leaf from the end.
#![expect(clippy::expect_used, reason = "benchmark setup fails loudly")]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use openclaw_transcript::{
    ReadOptions, SystemClock, TranscriptWriter, WriterOptions, for_each_entry, read_leaf,
};

mod support;

fn replay(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (path, entries) =
        support::big_transcript(dir.path(), 100 << 20, 1 << 20).expect("transcript generated");
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    eprintln!("generated {bytes} bytes, {entries} entries");
    let mut group = c.benchmark_group("transcript_100mb");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("stream_all_entries", |b| {
        b.iter(|| {
            for_each_entry(&path, ReadOptions::default(), |entry| {
                drop(black_box(entry))
            })
        })
    });
    group.bench_function("writer_open_and_replay", |b| {
        b.iter(|| {
            let opened =
                TranscriptWriter::open(&path, Arc::new(SystemClock), WriterOptions::default());
            opened.and_then(|mut opened| {
                opened
                    .writer
                    .replay(ReadOptions::default(), |entry| drop(black_box(entry)))
            })
        })
    });
    group.finish();
    c.bench_function("transcript_100mb/read_leaf", |b| {
        b.iter(|| read_leaf(&path, ReadOptions::default()))
    });
}

criterion_group!(benches, replay);
criterion_main!(benches);
