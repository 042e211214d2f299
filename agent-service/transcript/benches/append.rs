//! Append throughput with an fsync per turn: one turn is 4 entries then `sync`.
#![expect(clippy::expect_used, reason = "benchmark setup fails loudly")]

use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use openclaw_transcript::{
    ContentBlock, EntryBody, Message, SessionHeader, SessionId, SessionKey, SystemClock, ToolCall,
    ToolResultMessage, TranscriptWriter, UserContent, UserMessage, WriterOptions,
};
use serde_json::json;

fn turn() -> [EntryBody; 4] {
    let user = EntryBody::Message {
        message: Message::User(UserMessage {
            content: UserContent::Text("please read the README and summarise it".into()),
            timestamp: 1_751_716_800_000,
        }),
    };
    let call = EntryBody::Message {
        message: Message::User(UserMessage {
            content: UserContent::Blocks(vec![ContentBlock::ToolCall(ToolCall {
                id: "call_1".into(),
                name: "read".into(),
                arguments: json!({"path": "README.md"}),
            })]),
            timestamp: 1_751_716_800_001,
        }),
    };
    let result = EntryBody::Message {
        message: Message::ToolResult(ToolResultMessage {
            tool_call_id: "call_1".into(),
            tool_name: "read".into(),
            content: vec![ContentBlock::text("# Project\n".repeat(40))],
            is_error: false,
            details: None,
            timestamp: 1_751_716_800_002,
        }),
    };
    let reply = EntryBody::ThinkingLevelChange {
        thinking_level: "low".into(),
    };
    [user, call, result, reply]
}

fn append(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let id = SessionId::new_v4();
    let key = SessionKey::new("agent:main:main").expect("key");
    let header = SessionHeader::new(id, key, "/work/space", jiff::Timestamp::now());
    let path = dir.path().join(format!("{id}.jsonl"));
    let mut writer = TranscriptWriter::create(
        &path,
        &header,
        Arc::new(SystemClock),
        WriterOptions::default(),
    )
    .expect("transcript created");
    let mut group = c.benchmark_group("append");
    group.throughput(Throughput::Elements(4));
    group.bench_function("turn_of_4_entries_then_fsync", |b| {
        b.iter(|| -> Result<(), openclaw_transcript::Error> {
            for body in turn() {
                writer.append(body)?;
            }
            writer.sync()
        })
    });
    group.bench_function("single_entry_no_fsync", |b| {
        b.iter(|| writer.append(EntryBody::SessionInfo { name: None }))
    });
    group.finish();
}

criterion_group!(benches, append);
criterion_main!(benches);
