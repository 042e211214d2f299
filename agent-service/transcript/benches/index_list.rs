//! Listing and searching 100,000 sessions (goal: under 100 ms each).
//!
//! - `list`: every `(key, entry)` in key order, as `ListSessions` reads them;
//! - `get` and `find_by_id`: one session by key, and by id (a scan of the index);
//! - `first_load`: a store that has not read the index yet parses the whole file;
//! - `update_one`: one entry changed and the index saved durably (fsync included).
//!
//! The index is written once through the store; the figures after the first load are what a
//! long-running agent-service sees.
//!
//! Run: `cargo bench -p openclaw-transcript --bench index_list -- --sample-size 10 --measurement-time 6`
#![expect(clippy::expect_used, reason = "benchmark setup fails loudly")]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use openclaw_transcript::{
    AgentId, SessionEntry, SessionId, SessionIndex, SessionKey, SessionStore, SystemClock,
};
use serde_json::json;

const SESSIONS: i64 = 100_000;

fn key(n: i64) -> SessionKey {
    SessionKey::new(format!("agent:main:telegram:direct:{n}")).expect("key")
}

fn index(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let agent = AgentId::new("main").expect("agent id");
    let store = SessionStore::new(dir.path(), &agent, Arc::new(SystemClock));
    let mut index = SessionIndex::default();
    let mut ids = Vec::new();
    for n in 0..SESSIONS {
        let id = SessionId::new_v4();
        ids.push(id);
        let mut entry = SessionEntry::new(id, 1_751_716_800_000 + n);
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
        index.insert(key(n), entry);
    }
    store
        .update(|current| *current = index)
        .expect("index written");
    let bytes = std::fs::metadata(store.dir().index()).map_or(0, |m| m.len());
    eprintln!("index of {SESSIONS} sessions: {bytes} bytes");

    let mut group = c.benchmark_group(format!("index_{SESSIONS}_sessions"));
    group.bench_function("list", |b| {
        b.iter(|| black_box(store.list()).map(|sessions| sessions.len()))
    });
    let mut n = 0i64;
    group.bench_function("get", |b| {
        b.iter(|| {
            n = (n + 7_919) % SESSIONS;
            black_box(store.get(&key(n)))
        })
    });
    let mut i = 0usize;
    group.bench_function("find_by_id", |b| {
        b.iter(|| {
            i = (i + 7_919) % ids.len();
            black_box(store.find_by_id(&ids[i]))
        })
    });
    group.bench_function("first_load", |b| {
        b.iter(|| {
            let fresh = SessionStore::new(dir.path(), &agent, Arc::new(SystemClock));
            black_box(fresh.get(&key(0)))
        })
    });
    group.bench_function("update_one", |b| {
        b.iter(|| {
            store.update(|index| {
                if let Some(entry) = index.get_mut(&key(42)) {
                    entry.input_tokens += 1;
                }
            })
        })
    });
    group.finish();
}

criterion_group!(benches, index);
criterion_main!(benches);
