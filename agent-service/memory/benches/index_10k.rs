//! What the memory index costs at 10,000 chunks (100 files of 1,600 lines, mixed English,
//! Japanese and Korean): building it from nothing, catching up after one file changed, and the
//! latency of a search in each path (words, trigram, one-character substring) and with
//! embeddings (hybrid; vectors of 256 dimensions from a scripted server on a local socket).
//! Not a criterion bench: it prints medians of repeated runs
//! (`cargo bench -p openclaw-memory --bench index_10k`).
#![expect(clippy::unwrap_used, reason = "benchmark setup fails loudly")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::routing::post;
use openclaw_memory::{AgentMemory, MemorySettings, Mode};
use openclaw_workspace::Confined;
use serde_json::{Value, json};

const FILES: usize = 100;
const LINES: usize = 1_600;
const DIMS: usize = 256;

const WORDS: &[&str] = &[
    "project", "deadline", "coffee", "tea", "meeting", "river", "running", "garden", "invoice",
    "travel", "Kyoto", "report", "family", "birthday", "doctor", "budget", "review", "release",
    "kitchen", "concert", "weekend", "library", "lesson", "bicycle", "harbor", "winter",
];
const CJK: &[&str] = &[
    "ユーザーは毎朝コーヒーを飲む。",
    "사용자는 아침마다 커피를 마신다.",
    "プロジェクトの締め切りは金曜日です。",
    "用户的猫叫小白。",
];

/// Line `n` of file `f`: about 80 characters, deterministic.
fn line(f: usize, n: usize) -> String {
    let mut x = (f * 7_919 + n * 104_729) as u64;
    let mut out = String::new();
    if n.is_multiple_of(23) {
        out.push_str(CJK[(f + n) % CJK.len()]);
        out.push(' ');
    }
    while out.chars().count() < 72 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out.push_str(WORDS[(x >> 33) as usize % WORDS.len()]);
        out.push(' ');
    }
    out.push_str(&format!("#{f}-{n}"));
    out
}

fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0.0_f32; DIMS];
    for word in text.split_whitespace() {
        let h = word
            .bytes()
            .fold(0_usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
        v[h % DIMS] += 1.0;
    }
    v
}

async fn embeddings(body: Bytes) -> String {
    let request: Value = serde_json::from_slice(&body).unwrap();
    let data: Vec<Value> = request["input"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, t)| json!({ "index": i, "embedding": vector(t.as_str().unwrap()) }))
        .collect();
    json!({ "data": data }).to_string()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("workspace");
    std::fs::create_dir_all(root.join("memory")).unwrap();
    for f in 0..FILES {
        let text: String = (0..LINES).map(|n| line(f, n) + "\n").collect();
        std::fs::write(root.join(format!("memory/{f:03}.md")), text).unwrap();
    }
    let ws = Arc::new(Confined::new(&root).unwrap());
    let runs = 5;

    // Keyword only.
    let mut builds = Vec::new();
    let mut chunks = 0;
    for run in 0..3 {
        let memory = AgentMemory::new(
            MemorySettings::default(),
            dir.path().join(format!("state/build-{run}.sqlite")),
        )
        .unwrap();
        let start = Instant::now();
        let out = memory.search(Arc::clone(&ws), "deadline", 6).await.unwrap();
        builds.push(start.elapsed());
        chunks = out.matched.max(chunks);
    }
    let memory =
        AgentMemory::new(MemorySettings::default(), dir.path().join("state/k.sqlite")).unwrap();
    memory.search(Arc::clone(&ws), "x", 6).await.unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("state/k.sqlite")).unwrap();
    let total: i64 = conn
        .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))
        .unwrap();
    println!("index: {FILES} files, {total} chunks ({chunks} match \"deadline\")");
    println!(
        "build from nothing (first search): median {}",
        ms(median(builds))
    );

    let mut catch_up = Vec::new();
    for run in 0..runs {
        let text: String = (0..LINES).map(|n| line(1_000 + run, n) + "\n").collect();
        std::fs::write(root.join("memory/007.md"), text).unwrap();
        let start = Instant::now();
        memory.search(Arc::clone(&ws), "garden", 6).await.unwrap();
        catch_up.push(start.elapsed());
    }
    println!(
        "one file of {LINES} lines changed (next search): median {}",
        ms(median(catch_up))
    );

    for query in ["running deadline", "締め切り", "猫", "volcano"] {
        let samples: Vec<Duration> = {
            let mut s = Vec::new();
            for _ in 0..20 {
                let start = Instant::now();
                let out = memory.search(Arc::clone(&ws), query, 6).await.unwrap();
                s.push(start.elapsed());
                assert_eq!(out.mode, Mode::Keyword);
            }
            s
        };
        println!("keyword search {query:?}: median {}", ms(median(samples)));
    }

    // Hybrid, with a scripted embeddings server on a local socket.
    let app = Router::new().route("/v1/embeddings", post(embeddings));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let env = std::collections::HashMap::<String, String>::new();
    let config = openclaw_config::load(
        &format!(
            r#"{{ agents: {{ defaults: {{ memorySearch: {{ provider: "openai-compatible", model: "bench", remote: {{ baseUrl: "http://{addr}/v1" }} }} }} }} }}"#
        ),
        &env,
        &openclaw_config::LoadOptions::default(),
    )
    .unwrap();
    let settings = MemorySettings::resolve(&config, "main", &env).unwrap();
    let hybrid = AgentMemory::new(settings, dir.path().join("state/h.sqlite")).unwrap();
    let start = Instant::now();
    let out = hybrid.search(Arc::clone(&ws), "garden", 6).await.unwrap();
    assert_eq!(out.mode, Mode::Hybrid);
    println!(
        "hybrid: build and embed {total} chunks ({DIMS} dimensions, batches of 64): {}",
        ms(start.elapsed())
    );
    let mut samples = Vec::new();
    for i in 0..20 {
        let query = format!("family budget review {i}");
        let start = Instant::now();
        let out = hybrid.search(Arc::clone(&ws), &query, 6).await.unwrap();
        samples.push(start.elapsed());
        assert_eq!(out.mode, Mode::Hybrid);
    }
    println!(
        "hybrid search (a new query each time: one embedding request): median {}",
        ms(median(samples))
    );
}
