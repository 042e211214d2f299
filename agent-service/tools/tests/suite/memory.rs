//! memory_search and memory_get: ranking with file and line references, bounded excerpts, the
//! excerpt budget (P-40), and workspace confinement.

use std::os::unix::fs::symlink;
use std::sync::Arc;

use openclaw_memory::{AgentMemory, MemorySettings};
use openclaw_tools::{MemoryGetTool, MemorySearchTool};
use serde_json::json;

use super::{Fixture, error_text, ok_text};

/// `memory_search` over an index in the fixture's state dir (next to the workspace).
fn search_tool(f: &Fixture) -> MemorySearchTool {
    let index = f.outside.parent().unwrap().join("state/memory.sqlite");
    MemorySearchTool::new(Arc::new(
        AgentMemory::new(MemorySettings::default(), index).unwrap(),
    ))
}

const MEMORY: &str = "# About the user\n\
Name: Dana\n\
Prefers green tea, never coffee.\n\
\n\
## Projects\n\
Working on the Kyoto trip itinerary.\n\
Deadline for the itinerary: March 20.\n";

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.write("MEMORY.md", MEMORY);
    f.write(
        "memory/2026-03-01.md",
        "Dana ordered matcha green tea from Uji.\n\nCalled the plumber.\n",
    );
    f.write("memory/archive/2025.md", "Old note about tea tasting.\n");
    f.write(
        "notes/tea.md",
        "green tea outside memory must not be searched\n",
    );
    f
}

#[tokio::test]
async fn search_ranks_passages_with_file_and_line_references() {
    let f = fixture();
    let outcome = f
        .call(&search_tool(&f), json!({ "query": "green tea" }))
        .await;
    let text = ok_text(&outcome);
    assert!(
        text.starts_with(
            "Memory search for \"green tea\": 3 matching passages in 3 files searched"
        ),
        "{text}"
    );
    // One chunk of about 400 tokens holds all of the short MEMORY.md.
    assert!(text.contains("MEMORY.md#L1-L7"), "{text}");
    assert!(
        text.contains("L3: Prefers green tea, never coffee."),
        "{text}"
    );
    assert!(text.contains("memory/2026-03-01.md#L1-L3"), "{text}");
    assert!(
        text.contains("Ranked by keyword search (no embedding provider is configured)."),
        "{text}"
    );
    assert_eq!(outcome.details().unwrap()["mode"], "keyword");
    assert!(!text.contains("notes/tea.md"), "only memory files: {text}");
    let details = outcome.details().unwrap();
    assert_eq!(details["files_searched"], 3);
    let matches = details["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 3);
    // Both words beat one word: the archive note (only "tea") ranks last.
    assert_eq!(matches[2]["path"], "memory/archive/2025.md");
    let scores: Vec<f64> = matches
        .iter()
        .map(|m| m["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
}

#[tokio::test]
async fn search_finds_korean_japanese_and_chinese_notes() {
    let f = Fixture::new();
    f.write("MEMORY.md", "ユーザーは毎朝コーヒーを飲む。\n");
    f.write("memory/ko.md", "사용자는 아침마다 커피를 마신다.\n");
    f.write("memory/zh.md", "用户的猫叫小白。\n");
    f.write("memory/ja.md", "プロジェクトの締め切りは金曜日です。\n");
    let tool = search_tool(&f);
    for (query, cited) in [
        ("コーヒー", "MEMORY.md#L1-L1"),
        ("커피", "memory/ko.md#L1-L1"),
        ("猫", "memory/zh.md#L1-L1"),
        ("締め切り", "memory/ja.md#L1-L1"),
    ] {
        let outcome = f.call(&tool, json!({ "query": query })).await;
        let text = ok_text(&outcome);
        assert!(
            text.starts_with(&format!("Memory search for {query:?}: 1 matching passages")),
            "{text}"
        );
        assert!(text.contains(cited), "{text}");
    }
}

#[tokio::test]
async fn search_is_deterministic_and_honours_max_results() {
    let f = fixture();
    let first = f
        .call(&search_tool(&f), json!({ "query": "tea", "maxResults": 2 }))
        .await;
    let again = f
        .call(&search_tool(&f), json!({ "query": "tea", "maxResults": 2 }))
        .await;
    assert_eq!(first, again);
    assert_eq!(
        first.details().unwrap()["matches"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(first.details().unwrap()["omitted"], 1);
}

#[tokio::test]
async fn search_without_memory_or_matches_says_so() {
    let f = Fixture::new();
    let none = f.call(&search_tool(&f), json!({ "query": "tea" })).await;
    assert!(
        ok_text(&none).starts_with("No memory files yet"),
        "{none:?}"
    );
    let f = fixture();
    let miss = f
        .call(&search_tool(&f), json!({ "query": "volcano" }))
        .await;
    assert_eq!(
        ok_text(&miss),
        "No memory passages match \"volcano\" (3 files searched)."
    );
}

#[tokio::test]
async fn search_stays_within_the_excerpt_budget() {
    let mut f = fixture();
    f.ctx.limits.excerpt_chars = 120;
    let outcome = f.call(&search_tool(&f), json!({ "query": "tea" })).await;
    let text = ok_text(&outcome);
    let shown = outcome.details().unwrap()["matches"]
        .as_array()
        .unwrap()
        .len();
    assert!(shown < 3, "{text}");
    assert!(text.contains("120-character output budget"), "{text}");
    let body = text.split_once("\n\n").map_or("", |(_, body)| body);
    assert!(body.chars().count() <= 121, "{}", body.chars().count());
}

#[tokio::test]
async fn search_argument_errors_name_the_field() {
    let f = fixture();
    let cases = [
        (
            json!({}),
            "invalid arguments for memory_search: missing field `query`",
        ),
        (
            json!({ "query": "  " }),
            "invalid arguments for memory_search: query: must not be empty",
        ),
        (
            json!({ "query": "?!" }),
            "invalid arguments for memory_search: query: has no words to search for",
        ),
        (
            json!({ "query": "tea", "maxResults": 0 }),
            "invalid arguments for memory_search: maxResults: must be at least 1",
        ),
    ];
    for (args, expected) in cases {
        let outcome = f.call(&search_tool(&f), args).await;
        assert_eq!(error_text(&outcome), expected);
    }
}

#[tokio::test]
async fn search_does_not_follow_links_out_of_the_workspace() {
    let f = Fixture::new();
    std::fs::write(f.outside.join("leak.md"), "secret green tea plans\n").unwrap();
    std::fs::create_dir_all(f.path("memory")).unwrap();
    symlink(f.outside.join("leak.md"), f.path("memory/leak.md")).unwrap();
    symlink(&f.outside, f.path("memory/outside-dir")).unwrap();
    f.write("memory/ok.md", "green tea at home\n");
    let outcome = f
        .call(&search_tool(&f), json!({ "query": "green tea" }))
        .await;
    let text = ok_text(&outcome);
    assert!(!text.contains("secret"), "{text}");
    assert!(text.contains("memory/ok.md#L1-L1"), "{text}");
    assert!(
        text.contains("memory/leak.md was not searched: permission denied"),
        "{text}"
    );
}

#[tokio::test]
async fn get_returns_a_line_range() {
    let f = fixture();
    let outcome = f
        .call(
            &MemoryGetTool,
            json!({ "path": "MEMORY.md", "from": 2, "lines": 2 }),
        )
        .await;
    assert_eq!(
        ok_text(&outcome),
        "Name: Dana\nPrefers green tea, never coffee.\n[Showing lines 2-3 of 7. Continue with from=4.]"
    );
    let cited = f
        .call(&MemoryGetTool, json!({ "path": "MEMORY.md#L6-L7" }))
        .await;
    assert_eq!(
        ok_text(&cited),
        "Working on the Kyoto trip itinerary.\nDeadline for the itinerary: March 20.\n"
    );
    assert_eq!(cited.details().unwrap()["to"], 7);
    let whole = f
        .call(&MemoryGetTool, json!({ "path": "memory/2026-03-01.md" }))
        .await;
    assert_eq!(
        ok_text(&whole),
        "Dana ordered matcha green tea from Uji.\n\nCalled the plumber.\n"
    );
}

#[tokio::test]
async fn get_is_bounded_by_the_excerpt_budget() {
    let mut f = fixture();
    f.ctx.limits.excerpt_chars = 30;
    let outcome = f.call(&MemoryGetTool, json!({ "path": "MEMORY.md" })).await;
    assert_eq!(
        ok_text(&outcome),
        "# About the user\nName: Dana\n[Output cut at the 30-character budget: showing lines 1-2 of 7. Continue with from=3.]"
    );
    f.ctx.limits.excerpt_chars = 10;
    let long = f
        .call(&MemoryGetTool, json!({ "path": "MEMORY.md", "from": 3 }))
        .await;
    assert!(
        ok_text(&long)
            .starts_with("Prefers gr\n[Line 3 alone is longer than the 10-character budget"),
        "{long:?}"
    );
}

#[tokio::test]
async fn get_refuses_other_files_and_escapes() {
    let f = fixture();
    std::fs::write(f.outside.join("MEMORY.md"), "secret\n").unwrap();
    std::fs::remove_file(f.path("MEMORY.md")).unwrap();
    symlink(f.outside.join("MEMORY.md"), f.path("MEMORY.md")).unwrap();
    let cases = [
        (json!({ "path": "AGENTS.md" }), "is not a memory file"),
        (
            json!({ "path": "memory/../AGENTS.md" }),
            "is not a memory file",
        ),
        (
            json!({ "path": "notes/tea.md" }),
            "use read for other files",
        ),
        (json!({ "path": "/etc/passwd" }), "is not a memory file"),
        (json!({ "path": "MEMORY.md" }), "permission denied"),
        (
            json!({ "path": "memory/none.md" }),
            "memory/none.md not found",
        ),
        (
            json!({ "path": "memory/2026-03-01.md", "from": 9 }),
            "from 9 is past the end",
        ),
        (
            json!({ "path": "memory/2026-03-01.md", "lines": 0 }),
            "from and lines start at 1",
        ),
        (
            json!({ "path": "MEMORY.md#Lx" }),
            "is not #L<from> or #L<from>-L<to>",
        ),
    ];
    for (args, expected) in cases {
        let outcome = f.call(&MemoryGetTool, args.clone()).await;
        let text = error_text(&outcome);
        assert!(text.contains(expected), "{args}: {text}");
        assert!(!text.contains("secret"), "{text}");
    }
}
