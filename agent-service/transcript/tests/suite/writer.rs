//! Requirement 3: one locked writer, single-write appends, torn-tail repair on open.

use std::fs;
use std::time::Duration;

use openclaw_transcript::{
    Error, ReadOptions, SessionHeader, SessionId, TailRepair, TranscriptWriter, WriterOptions,
    for_each_entry, quarantine_path,
};
use serde_json::Value;

use super::fixture::{append_raw, clock, fresh, key, lines, now, user};

#[test]
fn create_refuses_an_existing_transcript_and_leaves_no_temp_files() {
    let t = fresh();
    drop(t.writer);
    let header = SessionHeader::new(t.id, key("agent:main:main"), "/", now());
    assert!(matches!(
        TranscriptWriter::create(&t.path, &header, clock(), WriterOptions::default()),
        Err(Error::AlreadyExists { .. })
    ));
    let names: Vec<String> = fs::read_dir(t.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [format!("{}.jsonl", t.id)]);
    assert_eq!(lines(&t.path).len(), 1, "the existing file is untouched");
}

#[test]
fn transcripts_and_quarantine_are_private_to_the_owner() {
    use std::os::unix::fs::PermissionsExt;
    let t = fresh();
    drop(t.writer);
    append_raw(&t.path, b"torn");
    TranscriptWriter::open(&t.path, clock(), WriterOptions::default()).unwrap();
    for path in [t.path.clone(), quarantine_path(&t.path)] {
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", path.display());
    }
}

#[test]
fn create_makes_missing_directories() {
    let dir = tempfile::tempdir().unwrap();
    let id = SessionId::new_v4();
    let path = dir
        .path()
        .join("agents/main/sessions")
        .join(format!("{id}.jsonl"));
    let header = SessionHeader::new(id, key("k"), "/", now());
    TranscriptWriter::create(&path, &header, clock(), WriterOptions::default()).unwrap();
    assert_eq!(lines(&path).len(), 1);
}

#[test]
fn a_second_writer_is_locked_out_until_the_first_is_dropped() {
    let t = fresh();
    match TranscriptWriter::open(&t.path, clock(), WriterOptions::default()) {
        Err(Error::Locked { path }) => assert_eq!(path, t.path),
        other => panic!("{other:?}"),
    }
    drop(t.writer);
    let opened = TranscriptWriter::open(&t.path, clock(), WriterOptions::default()).unwrap();
    assert_eq!(opened.repair, None);
    assert!(matches!(
        TranscriptWriter::open(&t.path, clock(), WriterOptions::default()),
        Err(Error::Locked { .. })
    ));
}

#[test]
fn opening_a_missing_transcript_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        TranscriptWriter::open(
            &dir.path().join("x.jsonl"),
            clock(),
            WriterOptions::default()
        ),
        Err(Error::NotFound { .. })
    ));
}

#[test]
fn a_torn_tail_is_quarantined_and_cut_before_the_first_append() {
    let mut t = fresh();
    let a = t.writer.append_and_sync(user("a")).unwrap();
    drop(t.writer);
    let good_len = fs::metadata(&t.path).unwrap().len();
    let torn = br#"{"type":"message","id":"0badf00d","parentId":"#;
    append_raw(&t.path, torn);

    let opened = TranscriptWriter::open(&t.path, clock(), WriterOptions::default()).unwrap();
    let quarantine = quarantine_path(&t.path);
    assert_eq!(
        opened.repair,
        Some(TailRepair {
            offset: good_len,
            len: torn.len() as u64,
            quarantine: quarantine.clone(),
        })
    );
    assert_eq!(fs::metadata(&t.path).unwrap().len(), good_len);
    let kept = fs::read(&quarantine).unwrap();
    let (note, rest) = kept.split_at(kept.iter().position(|&b| b == b'\n').unwrap() + 1);
    let note: Value = serde_json::from_slice(note).unwrap();
    assert_eq!(note["quarantined"], "torn tail");
    assert_eq!(note["offset"], good_len);
    assert_eq!(note["len"], torn.len());
    assert_eq!(note["at"], "2026-07-05T12:00:00.000Z");
    assert_eq!(rest, [&torn[..], b"\n"].concat());

    let mut writer = opened.writer;
    assert_eq!(writer.leaf(), Some(&a.id));
    let b = writer.append_and_sync(user("b")).unwrap();
    assert_eq!(b.parent_id, Some(a.id.clone()));
    let mut seen = Vec::new();
    let report = for_each_entry(&t.path, ReadOptions::default(), |e| seen.push(e.id)).unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(seen, [a.id, b.id]);
}

#[test]
fn a_file_that_is_all_torn_tail_is_cut_to_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    fs::write(&path, b"{\"type\":\"sess").unwrap();
    let opened = TranscriptWriter::open(&path, clock(), WriterOptions::default()).unwrap();
    assert_eq!(opened.repair.map(|r| (r.offset, r.len)), Some((0, 13)));
    assert_eq!(fs::metadata(&path).unwrap().len(), 0);
}

#[test]
fn reopening_continues_the_chain_from_the_tail() {
    let mut t = fresh();
    t.writer.append(user("a")).unwrap();
    let b = t.writer.append(user("b")).unwrap();
    drop(t.writer);
    let mut writer = TranscriptWriter::open(&t.path, clock(), WriterOptions::default())
        .unwrap()
        .writer;
    assert_eq!(writer.leaf(), Some(&b.id));
    // No replay: the first append scans ids itself.
    let c = writer.append(user("c")).unwrap();
    assert_eq!(c.parent_id, Some(b.id));
    assert_eq!(writer.leaf(), Some(&c.id));
}

#[test]
fn replay_streams_the_session_and_primes_the_writer() {
    let mut t = fresh();
    let a = t.writer.append(user("a")).unwrap();
    let b = t.writer.append(user("b")).unwrap();
    drop(t.writer);
    append_raw(&t.path, b"not json\n");
    let mut writer = TranscriptWriter::open(&t.path, clock(), WriterOptions::default())
        .unwrap()
        .writer;
    let mut seen = Vec::new();
    let report = writer
        .replay(ReadOptions::default(), |e| seen.push(e))
        .unwrap();
    assert_eq!(seen, [a, b.clone()]);
    assert_eq!(report.entries, 2);
    assert_eq!(report.bad_line_count, 1);
    assert_eq!(report.header.unwrap().id, t.id);
    assert_eq!(writer.leaf(), Some(&b.id));
    let c = writer.append(user("c")).unwrap();
    assert_eq!(c.parent_id, Some(b.id));
}

#[test]
fn an_entry_over_the_line_limit_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let id = SessionId::new_v4();
    let path = dir.path().join(format!("{id}.jsonl"));
    let header = SessionHeader::new(id, key("k"), "/", now());
    let options = WriterOptions {
        max_line_len: 300,
        ..WriterOptions::default()
    };
    let mut writer = TranscriptWriter::create(&path, &header, clock(), options).unwrap();
    let a = writer.append(user("small")).unwrap();
    let len = writer.file_len();
    assert_eq!(len, fs::metadata(&path).unwrap().len());
    match writer.append(user(&"x".repeat(400))) {
        Err(Error::EntryTooLarge { len, max: 300 }) => assert!(len > 400),
        other => panic!("{other:?}"),
    }
    assert_eq!(fs::metadata(&path).unwrap().len(), len);
    assert_eq!(writer.leaf(), Some(&a.id));
}

#[test]
fn a_lock_released_within_lock_wait_is_acquired_and_zero_wait_tries_once() {
    let t = fresh();
    let strict = WriterOptions {
        lock_wait: Duration::ZERO,
        ..WriterOptions::default()
    };
    assert!(matches!(
        TranscriptWriter::open(&t.path, clock(), strict),
        Err(Error::Locked { .. })
    ));
    let (held, release) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let writer = t.writer;
        // Hold the lock until the main thread is already waiting for it.
        let _ = release.recv();
        std::thread::sleep(Duration::from_millis(20));
        drop(writer);
        t.dir
    });
    let patient = WriterOptions {
        lock_wait: Duration::from_secs(10),
        ..WriterOptions::default()
    };
    held.send(()).unwrap();
    let opened = TranscriptWriter::open(&t.path, clock(), patient);
    let _dir = holder.join().unwrap();
    assert!(opened.is_ok(), "{opened:?}");
}
