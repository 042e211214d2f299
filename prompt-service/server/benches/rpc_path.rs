//! The server-side cost of one RenderSystemPrompt call without the network:
//! decode the request bytes, convert, render (memoised, per-turn inputs
//! changing), convert back, encode the response. The load generator shows
//! the same path over loopback next to a same-size echo.
//!
//! `served_path` decodes the whole request, renders the turn from the
//! session's prepared block and writes the reply's text fields from the
//! shared prefix (see `RenderReply`): what the served route would cost if it
//! decoded every request; `wire_path` is what the served route does: the
//! request's bytes go to `render_wire`, which decodes only the turn fields
//! of a request whose stable part is in its cache; `decode_render_encode`
//! is the typed in-process path (`render_message`: encode the request to
//! find its stable part, render, build the response message, encode it);
//! `echo_path` is the echo baseline's own work for a same-size request and
//! response.
//!
//! Run: `cargo bench -p prompt-server --bench rpc_path`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use openclaw_proto::{bench::v1 as bench_pb, prompt::v1 as pb};
use prompt_render::{Prepared, fixtures};
use prost::Message;

fn bench(c: &mut Criterion) {
    let service = prompt_server::PromptServiceImpl::new()
        .unwrap_or_else(|e| panic!("the service starts: {e}"));
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
            let resp = service.render_message(&req).ok()?;
            Some(resp.encode_to_vec())
        })
    });
    let mut stable = inputs[0].clone();
    let _ = stable.take_turn();
    let prepared = Prepared::new(stable).unwrap_or_else(|e| panic!("the fixture prepares: {e}"));
    let parts = std::sync::Arc::new(prompt_server::ReplyParts::of(&prepared));
    group.bench_function("served_path", |b| {
        b.iter(|| {
            i += 1;
            let req =
                pb::RenderSystemPromptRequest::decode(black_box(encoded[i % 2].as_slice())).ok()?;
            let mut input = prompt_server::input_from_request(req).ok()?;
            let turn = input.take_turn();
            let reply = prompt_server::RenderReply::with_parts(
                prepared.render_turn(&turn).ok()?,
                std::sync::Arc::clone(&parts),
            );
            let mut out = Vec::with_capacity(reply.encoded_len());
            reply.encode_raw(&mut out);
            Some(out)
        })
    });
    // What the served route does: the request's bytes to the service, which
    // decodes only the turn fields once it has seen the stable part.
    group.bench_function("wire_path", |b| {
        b.iter(|| {
            i += 1;
            let reply = service
                .render_wire(black_box(encoded[i % 2].as_slice()))
                .ok()?;
            let mut out = Vec::with_capacity(reply.encoded_len());
            reply.encode_raw(&mut out);
            Some(out)
        })
    });
    let response_len = prompt_server::RenderReply::new(
        prompt_render::render(&inputs[0]).unwrap_or_else(|e| panic!("the fixture renders: {e}")),
    )
    .encoded_len();
    let echo = bench_pb::EchoRequest {
        payload: vec![b'x'; encoded[0].len()],
        response_bytes: u32::try_from(response_len).unwrap_or(u32::MAX),
    }
    .encode_to_vec();
    group.bench_function("echo_path", |b| {
        b.iter(|| {
            let req = bench_pb::EchoRequest::decode(black_box(echo.as_slice())).ok()?;
            let resp = bench_pb::EchoResponse {
                payload: vec![b'x'; req.response_bytes as usize],
            };
            Some(resp.encode_to_vec())
        })
    });
    group.bench_function("decode_only", |b| {
        b.iter(|| pb::RenderSystemPromptRequest::decode(black_box(encoded[0].as_slice())).ok())
    });
    let response = prompt_server::render_request(
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
