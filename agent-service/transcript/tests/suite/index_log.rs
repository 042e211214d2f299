//! The index's update log: a large index takes changes as appended lines, read back by every
//! reader, cut at a torn tail, folded into `sessions.json` when it grows, and safe to replay
//! after a crash between a fold and the log's removal.

use std::fs;
use std::io::Write as _;

use openclaw_transcript::{
    AgentId, SessionEntry, SessionId, SessionIndex, SessionKey, SessionStore,
};

use super::fixture::{clock, key};

/// Sessions that make an index larger than the size below which it is always rewritten.
const LARGE: usize = 4_000;

fn store(dir: &tempfile::TempDir) -> SessionStore {
    SessionStore::new(dir.path(), &AgentId::new("main").unwrap(), clock())
}

fn log_of(store: &SessionStore) -> std::path::PathBuf {
    let mut name = store.dir().index().into_os_string();
    name.push(".log");
    name.into()
}

/// A store over an index of `LARGE` sessions, written whole in one update.
fn large(dir: &tempfile::TempDir) -> SessionStore {
    let store = store(dir);
    store
        .update(|index| {
            for i in 0..LARGE {
                index.insert(
                    key(&format!("agent:main:s{i}")),
                    SessionEntry::new(SessionId::new_v4(), 1),
                );
            }
        })
        .unwrap();
    assert!(!log_of(&store).exists(), "the first write is a whole index");
    store
}

fn tokens(store: &SessionStore, name: &str) -> Option<u64> {
    store.get(&key(name)).unwrap().map(|e| e.input_tokens)
}

#[test]
fn a_large_index_takes_changes_in_its_log_and_every_reader_sees_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = large(&dir);
    let before = fs::read(store.dir().index()).unwrap();
    store
        .update(|index| index.get_mut(&key("agent:main:s7")).unwrap().input_tokens = 42)
        .unwrap();
    let fresh = SessionEntry::new(SessionId::new_v4(), 2);
    store
        .update(|index| index.insert(key("agent:main:new"), fresh.clone()))
        .unwrap();
    store.delete(&key("agent:main:s9")).unwrap().unwrap();

    assert_eq!(
        fs::read(store.dir().index()).unwrap(),
        before,
        "sessions.json was not rewritten"
    );
    let log = fs::read_to_string(log_of(&store)).unwrap();
    assert_eq!(log.lines().count(), 3, "one line per changed key: {log}");

    // This store, a fresh one (another process) and a plain load agree.
    for reader in [&store, &self::store(&dir)] {
        assert_eq!(tokens(reader, "agent:main:s7"), Some(42));
        assert_eq!(
            reader.get(&key("agent:main:new")).unwrap().as_deref(),
            Some(&fresh)
        );
        assert_eq!(tokens(reader, "agent:main:s9"), None);
        assert_eq!(reader.list().unwrap().len(), LARGE);
    }
    let loaded = SessionIndex::load(&store.dir().index()).unwrap();
    assert_eq!(loaded, *store.snapshot().unwrap());
}

#[test]
fn a_torn_log_line_is_skipped_and_cut_off_before_the_next_append() {
    let dir = tempfile::tempdir().unwrap();
    let store = large(&dir);
    store
        .update(|index| index.get_mut(&key("agent:main:s1")).unwrap().input_tokens = 1)
        .unwrap();
    // A crash in the middle of the next append.
    fs::OpenOptions::new()
        .append(true)
        .open(log_of(&store))
        .unwrap()
        .write_all(b"{\"key\":\"agent:main:s2\",\"entry\":{\"sessionId\":\"")
        .unwrap();

    let restarted = self::store(&dir);
    assert_eq!(tokens(&restarted, "agent:main:s1"), Some(1));
    restarted
        .update(|index| index.get_mut(&key("agent:main:s3")).unwrap().input_tokens = 3)
        .unwrap();
    let log = fs::read_to_string(log_of(&store)).unwrap();
    for line in log.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("a line that does not parse ({e}): {line}"));
    }
    let again = self::store(&dir);
    assert_eq!(tokens(&again, "agent:main:s1"), Some(1));
    assert_eq!(tokens(&again, "agent:main:s3"), Some(3));
    // The first store learns of the other's write too.
    assert_eq!(tokens(&store, "agent:main:s3"), Some(3));
}

#[test]
fn the_log_is_folded_into_the_index_once_it_outgrows_half_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = large(&dir);
    let index_len = fs::metadata(store.dir().index()).unwrap().len();
    let mut folded_at = None;
    for round in 1..=20_000_u64 {
        let name = format!("agent:main:s{}", round % LARGE as u64);
        store
            .update(|index| index.get_mut(&key(&name)).unwrap().input_tokens = round)
            .unwrap();
        if !log_of(&store).exists() {
            folded_at = Some(round);
            break;
        }
        assert!(
            fs::metadata(log_of(&store)).unwrap().len() <= index_len / 2,
            "the log never grows past half the index"
        );
    }
    let round = folded_at.expect("the log was folded");
    assert!(round > 100, "folded only after many changes: {round}");
    // sessions.json alone now holds every change.
    let plain: serde_json::Value =
        serde_json::from_slice(&fs::read(store.dir().index()).unwrap()).unwrap();
    let last = format!("agent:main:s{}", round % LARGE as u64);
    assert_eq!(plain[&last]["inputTokens"], round);
    assert_eq!(plain["agent:main:s1"]["inputTokens"], 1);
}

#[test]
fn a_crash_between_a_fold_and_the_logs_removal_replays_to_the_same_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = large(&dir);
    for i in 0..50_u64 {
        store
            .update(|index| {
                index.get_mut(&key("agent:main:s5")).unwrap().input_tokens = i;
                index.remove(&key(&format!("agent:main:s{}", 100 + i)));
            })
            .unwrap();
    }
    let leftover = fs::read(log_of(&store)).unwrap();
    let expected = SessionIndex::clone(&store.snapshot().unwrap());
    // A rebuild writes the index whole and folds the log...
    store.rebuild_index().unwrap();
    assert!(!log_of(&store).exists());
    // ...and the crash came before the log's removal reached the disk.
    fs::write(log_of(&store), &leftover).unwrap();
    let restarted = self::store(&dir);
    assert_eq!(*restarted.snapshot().unwrap(), expected);
    assert_eq!(tokens(&restarted, "agent:main:s5"), Some(49));
    assert_eq!(tokens(&restarted, "agent:main:s120"), None);
}

#[test]
fn a_corrupt_index_is_rebuilt_with_the_records_of_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = large(&dir);
    let fresh = SessionEntry::new(SessionId::new_v4(), 5);
    store
        .update(|index| index.insert(key("agent:main:logged"), fresh.clone()))
        .unwrap();
    fs::write(store.dir().index(), b"{\"agent:main:s1\": ").unwrap();
    let restarted = self::store(&dir);
    assert!(restarted.list().is_err(), "the corrupt index is reported");
    let report = restarted.rebuild_index().unwrap();
    assert!(report.corrupt_index_moved_to.is_some());
    assert_eq!(
        restarted
            .get(&SessionKey::new("agent:main:logged").unwrap())
            .unwrap()
            .as_deref(),
        Some(&fresh),
        "a record only the log held survives the rebuild"
    );
}

#[test]
fn two_stores_writing_one_large_index_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    large(&dir);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let store = store(&dir);
            std::thread::spawn(move || {
                for i in 0..100_usize {
                    let name = format!("agent:main:t{t}-{i}");
                    store
                        .update(|index| {
                            index.insert(key(&name), SessionEntry::new(SessionId::new_v4(), 1))
                        })
                        .unwrap();
                    // Reads in between see every write of this thread so far.
                    if i % 25 == 0 {
                        assert!(store.get(&key(&name)).unwrap().is_some());
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(store(&dir).list().unwrap().len(), LARGE + 400);
    assert_eq!(
        SessionIndex::load(&store(&dir).dir().index())
            .unwrap()
            .len(),
        LARGE + 400
    );
}
