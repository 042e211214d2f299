//! Keyword search without embeddings: every script, inflected English, the mode reported.

use openclaw_memory::{MemorySettings, Mode};

use super::{Fixture, found};

fn notes() -> Fixture {
    let f = Fixture::new();
    f.write(
        "MEMORY.md",
        "# About the user\nName: Dana\nDana runs along the river every Sunday.\n",
    );
    f.write("memory/ja.md", "ユーザーは毎朝コーヒーを飲む。\n");
    f.write("memory/ko.md", "사용자는 아침마다 커피를 마신다.\n");
    f.write("memory/zh.md", "用户的猫叫小白。\n");
    f.write(
        "memory/project.md",
        "プロジェクトの締め切りは金曜日です。\n",
    );
    f
}

#[tokio::test]
async fn korean_japanese_and_chinese_queries_find_their_notes() {
    let f = notes();
    let memory = f.memory(MemorySettings::default());
    for (query, note) in [
        ("コーヒー", "memory/ja.md#L1-L1"),
        ("커피", "memory/ko.md#L1-L1"),
        ("猫", "memory/zh.md#L1-L1"),
        ("締め切り", "memory/project.md#L1-L1"),
        ("커피를", "memory/ko.md#L1-L1"),
        ("小白", "memory/zh.md#L1-L1"),
        ("金曜日の締め切り", "memory/project.md#L1-L1"),
    ] {
        let outcome = f.search(&memory, query).await;
        assert_eq!(outcome.mode, Mode::Keyword);
        assert_eq!(
            found(&outcome).first().map(String::as_str),
            Some(note),
            "{query}: {outcome:?}"
        );
    }
    // A character in no note finds nothing, in either path.
    assert!(f.search(&memory, "犬").await.hits.is_empty());
    assert!(f.search(&memory, "고양이").await.hits.is_empty());
}

#[tokio::test]
async fn inflected_english_finds_the_stem_and_prefixes() {
    let f = notes();
    let memory = f.memory(MemorySettings::default());
    for query in ["running", "runs", "run", "Sundays", "rivers"] {
        let outcome = f.search(&memory, query).await;
        assert_eq!(found(&outcome), ["MEMORY.md#L1-L3"], "{query}");
    }
    // Porter does not know irregular forms: "ran" is another word.
    assert!(f.search(&memory, "ran").await.hits.is_empty());
    // Inside English words, no substring matches: "art" is not in "party".
    f.write("memory/party.md", "A party on Friday.\n");
    assert!(f.search(&memory, "art").await.hits.is_empty());
}

#[tokio::test]
async fn more_query_words_rank_higher_and_ties_follow_path_order() {
    let f = Fixture::new();
    f.write("MEMORY.md", "Prefers green tea, never coffee.\n");
    f.write("memory/a.md", "Old note about tea tasting.\n");
    f.write("memory/b.md", "Old note about tea tasting.\n");
    let memory = f.memory(MemorySettings::default());
    let outcome = f.search(&memory, "green tea").await;
    assert_eq!(
        found(&outcome),
        ["MEMORY.md#L1-L1", "memory/a.md#L1-L1", "memory/b.md#L1-L1"]
    );
    assert_eq!(outcome.matched, 3);
    assert_eq!(outcome.files_searched, 3);
}
