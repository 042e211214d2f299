//! The index on disk: edits seen by the next search, chunking changes rebuild, a corrupt file
//! is moved aside and rebuilt while the search still answers.

use openclaw_memory::{AgentMemory, Chunking, MemorySettings};

use super::{Fixture, exists, found};

#[tokio::test]
async fn an_edit_is_seen_by_the_next_search_and_a_removal_too() {
    let f = Fixture::new();
    f.write("MEMORY.md", "# Notes\nlikes tea\n");
    let memory = f.memory(MemorySettings::default());
    assert!(f.search(&memory, "volcano").await.hits.is_empty());
    // Same size as before would not be enough on its own: the mtime changes too.
    f.write(
        "MEMORY.md",
        "# Notes\nlikes tea\nclimbed a volcano in May\n",
    );
    let outcome = f.search(&memory, "volcano").await;
    assert_eq!(found(&outcome), ["MEMORY.md#L1-L3"]);
    f.write("memory/trip.md", "The volcano trip was in Iceland.\n");
    assert_eq!(f.search(&memory, "volcano").await.hits.len(), 2);
    std::fs::remove_file(f.workspace.join("memory/trip.md")).unwrap();
    let outcome = f.search(&memory, "volcano").await;
    assert_eq!(found(&outcome), ["MEMORY.md#L1-L3"]);
    assert_eq!(outcome.files_searched, 1);
}

#[tokio::test]
async fn a_new_process_reuses_the_index_and_a_chunking_change_rebuilds_it() {
    let f = Fixture::new();
    let text: String = (1..=40)
        .map(|i| format!("line {i:03} about tea\n"))
        .collect();
    f.write("MEMORY.md", &text);
    let memory = f.memory(MemorySettings::default());
    assert_eq!(found(&f.search(&memory, "tea").await), ["MEMORY.md#L1-L40"]);
    drop(memory);
    assert!(exists(&f.index));
    let small = MemorySettings {
        chunking: Chunking {
            tokens: 50,
            overlap: 10,
        },
        ..MemorySettings::default()
    };
    let memory = f.memory(small);
    let outcome = f.search(&memory, "tea").await;
    assert!(outcome.matched > 1, "{outcome:?}");
    assert!(
        found(&outcome).contains(&"MEMORY.md#L1-L10".to_owned()),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_corrupt_index_is_moved_aside_and_rebuilt_while_the_search_answers() {
    let f = Fixture::new();
    f.write("MEMORY.md", "Dana likes green tea.\n");
    let memory = f.memory(MemorySettings::default());
    assert_eq!(f.search(&memory, "tea").await.hits.len(), 1);
    drop(memory);
    std::fs::write(
        &f.index,
        b"this is not an SQLite database, just bytes".repeat(200),
    )
    .unwrap();
    let memory = f.memory(MemorySettings::default());
    assert_tea_found_noting(&f, &memory, "memory index was damaged and has been rebuilt").await;
    let dir = f.index.parent().unwrap();
    let kept = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("memory.sqlite.corrupt-")
        });
    assert!(kept, "the damaged file is kept for inspection");
    // The next search uses the rebuilt index quietly.
    assert!(f.search(&memory, "tea").await.notes.is_empty());
}

/// A search for "tea" finds MEMORY.md's one line and says, in a note, `needle`.
async fn assert_tea_found_noting(f: &Fixture, memory: &AgentMemory, needle: &str) {
    let outcome = f.search(memory, "tea").await;
    assert_eq!(found(&outcome), ["MEMORY.md#L1-L1"]);
    assert!(
        outcome.notes.iter().any(|n| n.contains(needle)),
        "{needle:?} not in {:?}",
        outcome.notes
    );
}

#[tokio::test]
async fn an_index_damaged_while_open_is_rebuilt_too() {
    let f = Fixture::new();
    f.write("MEMORY.md", "Dana likes green tea.\n");
    let memory = f.memory(MemorySettings::default());
    assert_eq!(f.search(&memory, "tea").await.hits.len(), 1);
    // Another program overwrites the pages under the open connection.
    let len = std::fs::metadata(&f.index).unwrap().len();
    std::fs::write(
        &f.index,
        vec![0xA5; usize::try_from(len).unwrap().max(8192)],
    )
    .unwrap();
    let _ = std::fs::remove_file(format!("{}-wal", f.index.display()));
    let outcome = f.search(&memory, "tea").await;
    assert_eq!(found(&outcome), ["MEMORY.md#L1-L1"], "{outcome:?}");
}

#[tokio::test]
async fn an_index_that_cannot_be_created_falls_back_to_memory() {
    let f = Fixture::new();
    f.write("MEMORY.md", "Dana likes green tea.\n");
    // The index's directory is a file: nothing can be created there.
    let blocker = f.index.parent().unwrap();
    std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
    std::fs::write(blocker, "not a directory").unwrap();
    let memory = f.memory(MemorySettings::default());
    assert_tea_found_noting(&f, &memory, "used a temporary index").await;
}

#[tokio::test]
async fn binary_and_linked_out_files_are_noted_not_indexed() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("leak.md"), "secret green tea plans\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("leak.md"),
        f.workspace.join("memory/leak.md"),
    )
    .unwrap();
    f.write("memory/bin.md", "tea\0\0\0");
    f.write("memory/ok.md", "green tea at home\n");
    let memory = f.memory(MemorySettings::default());
    let outcome = f.search(&memory, "green tea").await;
    assert_eq!(found(&outcome), ["memory/ok.md#L1-L1"]);
    let notes = outcome.notes.join("\n");
    assert!(
        notes.contains("memory/leak.md was not searched: permission denied"),
        "{notes}"
    );
    assert!(notes.contains("memory/bin.md looks binary"), "{notes}");
    assert!(!format!("{outcome:?}").contains("secret"));
}
