//! Requirement 5: the session index, atomic replacement, corruption and rebuild.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use openclaw_transcript::{
    AgentId, Error, SessionEntry, SessionHeader, SessionId, SessionIndex, SessionStore,
    TranscriptWriter, WriterOptions,
};
use serde_json::json;

use super::fixture::{clock, key, now, user};

fn store(dir: &tempfile::TempDir) -> SessionStore {
    SessionStore::new(dir.path(), &AgentId::new("main").unwrap(), clock())
}

#[test]
fn the_index_round_trips_and_keeps_what_it_does_not_understand() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.json");
    let id = "0b6f8c2e-5d1a-4c3b-9e7f-1a2b3c4d5e6f";
    let original = json!({
        "agent:main:main": {
            "sessionId": id, "createdAt": 1, "updatedAt": 2, "chatType": "direct",
            "modelOverride": "gpt-5", "inputTokens": 10, "outputTokens": 3, "totalTokens": 13,
            "compactionCount": 1, "codexThreadId": "thr_1",
            "skillsSnapshot": {"version": "sha256:ab"}, "verboseLevel": "on"
        },
        "agent:main:bad-id": {"sessionId": "not-a-uuid", "updatedAt": 1},
        "a/b": {"sessionId": id, "updatedAt": 1}
    });
    fs::write(&path, serde_json::to_vec(&original).unwrap()).unwrap();
    let index = SessionIndex::load(&path).unwrap();
    let entry = index.get(&key("agent:main:main")).unwrap();
    assert_eq!(entry.session_id, SessionId::parse(id).unwrap());
    assert_eq!(entry.model_override.as_deref(), Some("gpt-5"));
    assert_eq!(
        (entry.input_tokens, entry.output_tokens, entry.total_tokens),
        (10, 3, 13)
    );
    assert_eq!(entry.codex_thread_id.as_deref(), Some("thr_1"));
    assert_eq!(
        entry.extra["skillsSnapshot"],
        json!({"version": "sha256:ab"})
    );
    assert_eq!(index.len(), 1);
    assert_eq!(
        index.invalid().keys().collect::<Vec<_>>(),
        ["a/b", "agent:main:bad-id"]
    );
    assert!(index.invalid()["a/b"].reason.contains("path separator"));

    index.save(&path).unwrap();
    let saved: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(saved, original, "nothing lost, nothing added");
    assert_eq!(SessionIndex::load(&path).unwrap(), index);
}

#[test]
fn a_missing_index_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let index = SessionIndex::load(&dir.path().join("sessions.json")).unwrap();
    assert!(index.is_empty());
}

#[test]
fn saving_replaces_the_file_and_never_rewrites_it_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.json");
    let mut index = SessionIndex::default();
    index.insert(key("a"), SessionEntry::new(SessionId::new_v4(), 1));
    index.save(&path).unwrap();
    let first_inode = fs::metadata(&path).unwrap().ino();
    index.insert(key("b"), SessionEntry::new(SessionId::new_v4(), 2));
    index.save(&path).unwrap();
    assert_ne!(
        fs::metadata(&path).unwrap().ino(),
        first_inode,
        "renamed over, not truncated"
    );
    let names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["sessions.json"], "no temp files left");
    let mode = std::os::unix::fs::PermissionsExt::mode(&fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(SessionIndex::load(&path).unwrap(), index);
}

#[test]
fn a_corrupt_index_is_reported_and_rebuilt_from_transcript_headers() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let mut expected = Vec::new();
    for name in ["agent:main:main", "agent:main:telegram:group:1"] {
        let reset = store.reset(&key(name)).unwrap();
        let header = SessionHeader::new(reset.session_id, key(name), "/w", now());
        let path = store.dir().transcript(&reset.session_id);
        let mut w =
            TranscriptWriter::create(&path, &header, clock(), WriterOptions::default()).unwrap();
        w.append(user("hi")).unwrap();
        expected.push((key(name), reset.session_id));
    }
    // A transcript that carries no key cannot be re-indexed: reported as an orphan.
    let orphan = SessionId::new_v4();
    let mut header = SessionHeader::new(orphan, key("x"), "/w", now());
    header.session_key = None;
    TranscriptWriter::create(
        &store.dir().transcript(&orphan),
        &header,
        clock(),
        WriterOptions::default(),
    )
    .unwrap();

    fs::write(
        store.dir().index(),
        b"{\"agent:main:main\": {\"sessionId\": ",
    )
    .unwrap();
    match store.list() {
        Err(Error::CorruptIndex { path, reason }) => {
            assert_eq!(path, store.dir().index());
            assert!(reason.contains("EOF"), "{reason}");
        }
        other => panic!("{other:?}"),
    }

    let report = store.rebuild_index().unwrap();
    assert_eq!(report.sessions, 2);
    assert_eq!(report.added, 2);
    assert_eq!(report.orphans, [orphan]);
    assert!(report.superseded.is_empty());
    let moved = report.corrupt_index_moved_to.unwrap();
    assert_eq!(
        fs::read(&moved).unwrap(),
        b"{\"agent:main:main\": {\"sessionId\": "
    );
    assert!(
        moved
            .to_string_lossy()
            .ends_with("sessions.json.corrupt.2026-07-05T12-00-00.000Z")
    );

    let listed: Vec<_> = store
        .list()
        .unwrap()
        .into_iter()
        .map(|(k, e)| (k, e.session_id))
        .collect();
    expected.sort();
    assert_eq!(listed, expected);
    let entry = store
        .load_index()
        .unwrap()
        .get(&key("agent:main:main"))
        .cloned()
        .unwrap();
    assert_eq!(entry.created_at, now().as_millisecond());
    assert_eq!(entry.updated_at, now().as_millisecond());
}

#[test]
fn rebuilding_a_readable_index_only_adds_missing_keys() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let kept = store.reset(&key("k1")).unwrap().session_id;
    store
        .update(|index| index.get_mut(&key("k1")).unwrap().display_name = Some("kept".into()))
        .unwrap();
    let lost = SessionId::new_v4();
    let header = SessionHeader::new(lost, key("k2"), "/w", now());
    TranscriptWriter::create(
        &store.dir().transcript(&lost),
        &header,
        clock(),
        WriterOptions::default(),
    )
    .unwrap();
    let report = store.rebuild_index().unwrap();
    assert_eq!((report.sessions, report.added), (2, 1));
    assert_eq!(report.corrupt_index_moved_to, None);
    let index = store.load_index().unwrap();
    let k1 = index.get(&key("k1")).unwrap();
    assert_eq!(
        (k1.session_id, k1.display_name.as_deref()),
        (kept, Some("kept"))
    );
    assert_eq!(index.get(&key("k2")).unwrap().session_id, lost);
}

#[test]
fn listing_reads_only_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    for n in 0..3 {
        store.reset(&key(&format!("k{n}"))).unwrap();
    }
    // No transcript exists for any of them, and a garbage file sits beside the index.
    fs::write(
        store
            .dir()
            .path()
            .join(format!("{}.jsonl", SessionId::new_v4())),
        b"\0\0",
    )
    .unwrap();
    let listed: Vec<String> = store
        .list()
        .unwrap()
        .into_iter()
        .map(|(k, _)| k.to_string())
        .collect();
    assert_eq!(listed, ["k0", "k1", "k2"]);
}

#[test]
fn concurrent_updates_from_many_handles_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let state = Arc::new(dir.path().to_path_buf());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let state = Arc::clone(&state);
            std::thread::spawn(move || {
                // Each thread has its own store, so its own lock handle, as another process would.
                let store = SessionStore::new(&*state, &AgentId::new("main").unwrap(), clock());
                for n in 0..10 {
                    store
                        .update(|index| {
                            index.insert(
                                key(&format!("t{t}-{n}")),
                                SessionEntry::new(SessionId::new_v4(), 0),
                            )
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(store(&dir).list().unwrap().len(), 80);
}

#[test]
fn a_cached_read_answers_only_for_the_version_already_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let ours = store(&dir);
    let theirs = store(&dir);
    assert_eq!(
        ours.get_if_cached(&key("k1")).unwrap(),
        None,
        "nothing parsed yet"
    );
    ours.reset(&key("k1")).unwrap();
    // Our own write is the version we hold.
    let cached = ours.get_if_cached(&key("k1")).unwrap().expect("cached");
    assert!(cached.is_some());
    assert_eq!(ours.get_if_cached(&key("k2")).unwrap(), Some(None));

    // Another store replaces the file: the cached version is not the file's any more.
    theirs
        .update(|index| index.get_mut(&key("k1")).unwrap().display_name = Some("renamed".into()))
        .unwrap();
    assert_eq!(ours.get_if_cached(&key("k1")).unwrap(), None);
    // A full read parses the new version; from then on it is cached.
    ours.get(&key("k1")).unwrap();
    let again = ours.get_if_cached(&key("k1")).unwrap().expect("cached");
    assert_eq!(again.unwrap().display_name.as_deref(), Some("renamed"));
}

#[test]
fn a_store_sees_what_another_store_or_an_editor_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let ours = store(&dir);
    let theirs = store(&dir);
    let id = ours.reset(&key("k1")).unwrap().session_id;
    assert_eq!(ours.get(&key("k1")).unwrap().unwrap().display_name, None);

    // Another store (another process) replaces the index: the next read sees it.
    theirs
        .update(|index| index.get_mut(&key("k1")).unwrap().display_name = Some("renamed".into()))
        .unwrap();
    assert_eq!(
        ours.get(&key("k1"))
            .unwrap()
            .unwrap()
            .display_name
            .as_deref(),
        Some("renamed")
    );

    // An editor rewrites the file in place.
    let edited = json!({
        "k1": {"sessionId": id.to_string(), "updatedAt": 5, "displayName": "edited by hand"},
        "k2": {"sessionId": SessionId::new_v4().to_string(), "updatedAt": 6}
    });
    fs::write(ours.dir().index(), serde_json::to_vec(&edited).unwrap()).unwrap();
    let listed: Vec<_> = ours
        .list()
        .unwrap()
        .into_iter()
        .map(|(k, e)| (k.to_string(), e.display_name.clone()))
        .collect();
    assert_eq!(
        listed,
        [
            ("k1".to_owned(), Some("edited by hand".to_owned())),
            ("k2".to_owned(), None)
        ]
    );

    // The index removed: empty again.
    fs::remove_file(ours.dir().index()).unwrap();
    assert!(ours.list().unwrap().is_empty());
    assert_eq!(ours.get(&key("k1")).unwrap(), None);
}

#[test]
fn sessions_are_found_by_key_and_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let a = store.reset(&key("a")).unwrap().session_id;
    let b = store.reset(&key("b")).unwrap().session_id;
    assert_eq!(store.get(&key("b")).unwrap().unwrap().session_id, b);
    assert_eq!(store.get(&key("c")).unwrap(), None);
    let (found, entry) = store.find_by_id(&a).unwrap().unwrap();
    assert_eq!((found, entry.session_id), (key("a"), a));
    assert_eq!(store.find_by_id(&SessionId::new_v4()).unwrap(), None);
    assert_eq!(store.snapshot().unwrap().len(), 2);
}

#[test]
fn readers_of_a_shared_store_see_whole_versions_while_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let shared = store(&dir);
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let store = shared.clone();
            std::thread::spawn(move || {
                for n in 0..10 {
                    store
                        .update(|index| {
                            index.insert(
                                key(&format!("t{t}-{n}")),
                                SessionEntry::new(SessionId::new_v4(), 0),
                            )
                        })
                        .unwrap();
                }
            })
        })
        .collect();
    let reader = {
        let store = shared.clone();
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while seen.last() != Some(&40) {
                seen.push(store.list().unwrap().len());
            }
            seen
        })
    };
    for writer in writers {
        writer.join().unwrap();
    }
    let seen = reader.join().unwrap();
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    // What the shared store holds is what is on disk.
    assert_eq!(
        SessionIndex::load(&shared.dir().index()).unwrap(),
        *shared.snapshot().unwrap()
    );
}
