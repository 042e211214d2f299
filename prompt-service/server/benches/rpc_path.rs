//! The server-side cost of one RenderSystemPrompt call without the network:
//! decode the request bytes, convert, render (memoised, per-turn inputs
//! changing), convert back, encode the response. The load generator shows
//! the same path over loopback next to a same-size echo.
//!
//! Run: `cargo bench -p prompt-server --bench rpc_path`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use openclaw_proto::prompt::v1 as pb;
use prompt_render::{Renderer, fixtures};
use prost::Message;

fn bench(c: &mut Criterion) {
    let renderer = Renderer::default();
    let mut inputs = [fixtures::realistic(), fixtures::realistic()];
    inputs[1].channel.name = "discord".into();
    let encoded: Vec<Vec<u8>> = inputs
        .iter()
        .map(|i| prompt_server::request_from_input(i).encode_to_vec())
        .collect();
    let mut group = c.benchmark_group("rpc_path");
    let mut i = 0usize;
    group.bench_function("decode_render_encode", |b| {
        b.iter(|| {
            i += 1;
            let req =
                pb::RenderSystemPromptRequest::decode(black_box(encoded[i % 2].as_slice())).ok()?;
            let resp = prompt_server::render_request(&renderer, req).ok()?;
            Some(resp.encode_to_vec())
        })
    });
    group.bench_function("decode_only", |b| {
        b.iter(|| pb::RenderSystemPromptRequest::decode(black_box(encoded[0].as_slice())).ok())
    });
    let response = prompt_server::render_request(
        &renderer,
        pb::RenderSystemPromptRequest::decode(encoded[0].as_slice())
            .ok()
            .unwrap_or_default(),
    )
    .ok()
    .unwrap_or_default();
    group.bench_function("encode_response_only", |b| {
        b.iter(|| black_box(&response).encode_to_vec())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
