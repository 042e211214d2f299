//! Requirement 6: reset and delete archive the transcript and update the index.

use std::fs;

use openclaw_transcript::{
    AgentId, Error, SessionHeader, SessionStore, TranscriptWriter, WriterOptions,
};

use super::fixture::{clock, key, now, user};

#[test]
fn reset_archives_the_transcript_and_points_the_key_at_a_new_session() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path(), &AgentId::new("main").unwrap(), clock());
    let k = key("agent:main:main");
    let first = store.reset(&k).unwrap();
    assert_eq!((first.previous, first.archived.clone()), (None, None));
    let path = store.dir().transcript(&first.session_id);
    let header = SessionHeader::new(first.session_id, k.clone(), "/w", now());
    let mut writer =
        TranscriptWriter::create(&path, &header, clock(), WriterOptions::default()).unwrap();
    writer.append_and_sync(user("hello")).unwrap();
    drop(writer);
    store
        .update(|index| {
            let entry = index.get_mut(&k).unwrap();
            entry.model_override = Some("gpt-5".into());
            entry.total_tokens = 500;
            entry.codex_thread_id = Some("thr".into());
        })
        .unwrap();
    let before = fs::read(&path).unwrap();

    let second = store.reset(&k).unwrap();
    assert_eq!(second.previous, Some(first.session_id));
    assert_ne!(second.session_id, first.session_id);
    let archived = second.archived.unwrap();
    assert_eq!(
        archived,
        store.dir().path().join(format!(
            "{}.jsonl.reset.2026-07-05T12-00-00.000Z",
            first.session_id
        ))
    );
    assert_eq!(fs::read(&archived).unwrap(), before);
    assert!(!path.exists());
    let entry = store.load_index().unwrap().get(&k).cloned().unwrap();
    assert_eq!(entry.session_id, second.session_id);
    assert_eq!(
        entry.model_override.as_deref(),
        Some("gpt-5"),
        "preferences carry over"
    );
    assert_eq!(
        (entry.total_tokens, entry.codex_thread_id),
        (0, None),
        "conversation state does not"
    );
    assert_eq!(entry.created_at, now().as_millisecond());
}

#[test]
fn reset_and_delete_refuse_while_a_writer_holds_the_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path(), &AgentId::new("main").unwrap(), clock());
    let k = key("agent:main:main");
    let id = store.reset(&k).unwrap().session_id;
    let header = SessionHeader::new(id, k.clone(), "/w", now());
    let path = store.dir().transcript(&id);
    let writer =
        TranscriptWriter::create(&path, &header, clock(), WriterOptions::default()).unwrap();
    assert!(matches!(store.reset(&k), Err(Error::Locked { .. })));
    assert!(matches!(store.delete(&k), Err(Error::Locked { .. })));
    assert_eq!(
        store.load_index().unwrap().get(&k).unwrap().session_id,
        id,
        "index unchanged"
    );
    assert!(path.exists());
    drop(writer);
    assert!(store.delete(&k).unwrap().is_some());
}

#[test]
fn delete_archives_the_transcript_and_removes_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path(), &AgentId::new("main").unwrap(), clock());
    let k = key("agent:main:cron:job");
    let id = store.reset(&k).unwrap().session_id;
    let other = store.reset(&key("agent:main:main")).unwrap().session_id;
    let header = SessionHeader::new(id, k.clone(), "/w", now());
    let path = store.dir().transcript(&id);
    TranscriptWriter::create(&path, &header, clock(), WriterOptions::default()).unwrap();

    let deleted = store.delete(&k).unwrap().unwrap();
    assert_eq!(deleted.session_id, id);
    assert_eq!(
        deleted.archived,
        Some(
            store
                .dir()
                .path()
                .join(format!("{id}.jsonl.deleted.2026-07-05T12-00-00.000Z"))
        )
    );
    assert!(!path.exists());
    let listed: Vec<_> = store
        .list()
        .unwrap()
        .into_iter()
        .map(|(k, e)| (k.to_string(), e.session_id))
        .collect();
    assert_eq!(listed, [("agent:main:main".to_owned(), other)]);
    assert!(
        store.delete(&k).unwrap().is_none(),
        "deleting again is a no-op"
    );
}

/// A reset keeps every setting of the session and its routing, and none of the old
/// conversation's state; the new entry equals a fresh one with exactly those fields set.
#[test]
fn a_reset_keeps_every_setting_and_nothing_of_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path(), &AgentId::new("main").unwrap(), clock());
    let k = key("agent:main:telegram:direct:42");
    store.reset(&k).unwrap();
    store
        .update(|index| {
            let e = index.get_mut(&k).unwrap();
            e.chat_type = Some("direct".into());
            e.channel = Some("telegram".into());
            e.display_name = Some("Ada".into());
            e.model_override = Some("gpt-5".into());
            e.provider_override = Some("openai".into());
            e.thinking_level = Some("high".into());
            e.queue_mode = Some("collect".into());
            e.reasoning_level = Some("stream".into());
            e.last_interaction_at = Some(5);
            e.codex_thread_id = Some("thr".into());
            e.codex_thread_context
                .insert("AGENTS.md".into(), "ab".into());
            e.compaction_count = 2;
            e.input_tokens = 10;
            e.output_tokens = 20;
            e.total_tokens = 30;
            e.extra.insert("other".into(), serde_json::json!(1));
        })
        .unwrap();
    let before = store.load_index().unwrap().get(&k).cloned().unwrap();
    let reset = store.reset(&k).unwrap();
    let after = store.load_index().unwrap().get(&k).cloned().unwrap();
    let mut expected =
        openclaw_transcript::SessionEntry::new(reset.session_id, now().as_millisecond());
    expected.chat_type = before.chat_type;
    expected.channel = before.channel;
    expected.display_name = before.display_name;
    expected.model_override = before.model_override;
    expected.provider_override = before.provider_override;
    expected.thinking_level = before.thinking_level;
    expected.queue_mode = before.queue_mode;
    expected.reasoning_level = before.reasoning_level;
    assert_eq!(after, expected);
}
