//! Listing 10,000 sessions from `sessions.json` (goal: under 100 ms).
#![expect(clippy::expect_used, reason = "benchmark setup fails loudly")]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use openclaw_transcript::{
    AgentId, SessionEntry, SessionId, SessionIndex, SessionKey, SessionStore, SystemClock,
};
use serde_json::json;

fn list(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let agent = AgentId::new("main").expect("agent id");
    let store = SessionStore::new(dir.path(), &agent, Arc::new(SystemClock));
    let mut index = SessionIndex::default();
    for n in 0..10_000i64 {
        let key = SessionKey::new(format!("agent:main:telegram:direct:{n}")).expect("key");
        let mut entry = SessionEntry::new(SessionId::new_v4(), 1_751_716_800_000 + n);
        entry.chat_type = Some("direct".into());
        entry.channel = Some("telegram".into());
        entry.display_name = Some(format!("User {n}"));
        entry.model_override = Some("anthropic/claude-opus-4".into());
        entry.input_tokens = 12_345;
        entry.output_tokens = 678;
        entry.total_tokens = 13_023;
        entry.extra.insert("verboseLevel".into(), json!("off"));
        entry.extra.insert(
            "systemPromptReport".into(),
            json!({"chars": 23_872, "files": 7}),
        );
        index.insert(key, entry);
    }
    store
        .update(|current| *current = index)
        .expect("index written");
    let bytes = std::fs::metadata(store.dir().index()).map_or(0, |m| m.len());
    eprintln!("index of 10000 sessions: {bytes} bytes");
    c.bench_function("index/list_10000_sessions", |b| {
        b.iter(|| black_box(store.list()).map(|sessions| sessions.len()))
    });
}

criterion_group!(benches, list);
criterion_main!(benches);
