//! Pushes 200 KiB of assistant text through the chunker in 50-char deltas.
//!
//! Criterion reports time per delta (`Throughput::Elements` = number of deltas): `mixed` is
//! prose, lists, links and code blocks; `open_fence` is one fence that never closes, the case
//! that made each delta cost tens of milliseconds in openclaw#127754.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use openclaw_blocks::{BlockChunker, ChunkerConfig};

const TARGET_BYTES: usize = 200 * 1024;
const DELTA_CHARS: usize = 50;

fn mixed_text() -> String {
    let parts = [
        "Block streaming sends each finished block as soon as it completes. ",
        "See https://docs.openclaw.ai/concepts/streaming#blocks for details, or [the guide](https://example.com/guide_(v2)). ",
        "Short sentence! Another one? Yes.\n",
        "\n",
        "- a list item with `inline code` and some words\n- another item, naïve café, 日本語 🎉\n\n",
        "```rust\nfn main() {\n    let url = \"https://example.com/a/b\";\n    println!(\"{url}\");\n}\n```\n\n",
        "A longer paragraph that keeps going with plain words so that the chunker has to find a sentence end or a space to cut at, because there is no newline for quite a while in this part of the text. ",
    ];
    let mut text = String::new();
    let mut i = 0;
    while text.len() < TARGET_BYTES {
        text.push_str(parts[i % parts.len()]);
        i += 1;
    }
    text
}

fn open_fence_text() -> String {
    let mut text = String::from("Here is the log:\n\n```text\n");
    let mut i = 0u64;
    while text.len() < TARGET_BYTES {
        text.push_str(&format!(
            "line {i:06}: GET /api/v1/items?page={i} 200 12ms\n"
        ));
        i += 1;
    }
    text
}

fn deltas(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(DELTA_CHARS)
        .map(|c| c.iter().collect())
        .collect()
}

fn run(deltas: &[String]) -> usize {
    let mut chunker = BlockChunker::new(ChunkerConfig::default());
    let mut emitted = 0;
    for delta in deltas {
        emitted += chunker.push(black_box(delta)).len();
    }
    emitted + chunker.finish().len()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("push_200KiB_in_50_char_deltas");
    for (name, text) in [("mixed", mixed_text()), ("open_fence", open_fence_text())] {
        let deltas = deltas(&text);
        group.throughput(Throughput::Elements(deltas.len() as u64));
        group.bench_function(name, |b| b.iter(|| run(black_box(&deltas))));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
