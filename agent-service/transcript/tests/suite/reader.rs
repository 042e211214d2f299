//! Requirement 4: streaming reads that report damage and still load, and tail reads.

use std::fs;

use openclaw_transcript::{
    BadLine, BadLineReason, Entry, Error, ReadOptions, TornTail, TranscriptReader, for_each_entry,
    read_leaf, read_tail,
};

use super::fixture::{append_raw, fresh, user};

/// What the reported reason must look like.
type Expect = fn(&BadLineReason) -> bool;

fn ids(entries: &[Entry]) -> Vec<String> {
    entries.iter().map(|e| e.id.to_string()).collect()
}

fn load(
    path: &std::path::Path,
    options: ReadOptions,
) -> (Vec<Entry>, openclaw_transcript::LoadReport) {
    let mut entries = Vec::new();
    let report = for_each_entry(path, options, |e| entries.push(e)).unwrap();
    (entries, report)
}

#[test]
fn a_torn_final_line_is_dropped_and_reported() {
    let mut t = fresh();
    let a = t.writer.append(user("a")).unwrap();
    let len = fs::metadata(&t.path).unwrap().len();
    let torn = br#"{"type":"message","id":"dead"#;
    append_raw(&t.path, torn);
    let (entries, report) = load(&t.path, ReadOptions::default());
    assert_eq!(ids(&entries), [a.id.to_string()]);
    assert_eq!(
        report.torn_tail,
        Some(TornTail {
            offset: len,
            len: torn.len() as u64
        })
    );
    assert_eq!(report.bad_line_count, 0);
    assert_eq!(report.leaf, Some(a.id));
    assert!(report.header.is_some());
}

#[test]
fn a_complete_json_line_without_newline_is_still_a_torn_tail() {
    // The writer only acknowledges after the whole line, `\n` included, was written.
    let t = fresh();
    let len = fs::metadata(&t.path).unwrap().len();
    let line = br#"{"type":"session_info","id":"0000000a","parentId":null,"timestamp":"t"}"#;
    append_raw(&t.path, line);
    let (entries, report) = load(&t.path, ReadOptions::default());
    assert!(entries.is_empty());
    assert_eq!(
        report.torn_tail,
        Some(TornTail {
            offset: len,
            len: line.len() as u64
        })
    );
}

#[test]
fn bad_lines_in_the_middle_are_reported_with_position_and_skipped() {
    let mut t = fresh();
    let mut expect = Vec::new();
    let mut good = Vec::new();
    let damage: [(&[u8], Expect); 6] = [
        (b"{\"type\":\"message\",", |r| matches!(r, BadLineReason::InvalidJson(_))),
        (b"\0\0\0\0\0\0\0\0", |r| *r == BadLineReason::NulBytes),
        (b"{\"type\":\"custom\",\"x\":\"\xff\xfe\"}", |r| *r == BadLineReason::InvalidUtf8),
        (b"[1,2,3]", |r| matches!(r, BadLineReason::NotARecord(m) if m.contains("array"))),
        (b"{\"type\":\"custom\",\"customType\":\"x\"}", |r| matches!(r, BadLineReason::NotARecord(m) if m.contains("`id`"))),
        (b"{\"type\":\"session\",\"version\":3,\"id\":\"0b6f8c2e-5d1a-4c3b-9e7f-1a2b3c4d5e6f\",\"timestamp\":\"t\",\"cwd\":\"/\"}", |r| *r == BadLineReason::MisplacedHeader),
    ];
    let mut line_no = 2;
    for (bytes, _) in &damage {
        let entry = t.writer.append(user("fine")).unwrap();
        let offset = fs::metadata(&t.path).unwrap().len();
        good.push(entry.id.to_string());
        line_no += 1;
        append_raw(&t.path, bytes);
        append_raw(&t.path, b"\n");
        expect.push((line_no, offset, bytes.len() as u64));
        line_no += 1;
    }
    let last = t.writer.append(user("last")).unwrap();
    good.push(last.id.to_string());
    let (entries, report) = load(&t.path, ReadOptions::default());
    assert_eq!(ids(&entries), good);
    assert_eq!(report.bad_line_count, 6);
    assert!(report.torn_tail.is_none());
    let found: Vec<(u64, u64, u64)> = report
        .bad_lines
        .iter()
        .map(|b| (b.line_no, b.offset, b.len))
        .collect();
    assert_eq!(found, expect);
    for (bad, (bytes, check)) in report.bad_lines.iter().zip(&damage) {
        assert!(
            check(&bad.reason),
            "{:?} for {:?}",
            bad.reason,
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn over_long_lines_are_skipped_reported_and_counted() {
    let mut t = fresh();
    let a = t.writer.append(user("short")).unwrap();
    let before = fs::metadata(&t.path).unwrap().len();
    let big = t.writer.append(user(&"y".repeat(5000))).unwrap();
    let after = fs::metadata(&t.path).unwrap().len();
    let c = t.writer.append(user("short again")).unwrap();
    let options = ReadOptions {
        max_line_len: 1000,
        ..ReadOptions::default()
    };
    let (entries, report) = load(&t.path, options);
    assert_eq!(ids(&entries), [a.id.to_string(), c.id.to_string()]);
    assert_eq!(
        report.bad_lines,
        [BadLine {
            line_no: 3,
            offset: before,
            len: after - before - 1,
            reason: BadLineReason::TooLong,
        }]
    );
    // With the default limit the same line loads.
    let (entries, _) = load(&t.path, ReadOptions::default());
    assert_eq!(entries[1].id, big.id);
    // Tail reads apply the same guard.
    let tail = read_tail(&t.path, 2, options).unwrap();
    assert_eq!(ids(&tail.entries), [a.id.to_string(), c.id.to_string()]);
    assert_eq!(tail.bad_lines, 1);
}

#[test]
fn bad_line_reports_are_capped_but_all_are_counted() {
    let t = fresh();
    for _ in 0..10 {
        append_raw(&t.path, b"not json\n");
    }
    let options = ReadOptions {
        max_reported_bad_lines: 3,
        ..ReadOptions::default()
    };
    let (_, report) = load(&t.path, options);
    assert_eq!(report.bad_lines.len(), 3);
    assert_eq!(report.bad_line_count, 10);
}

#[test]
fn the_iterator_yields_entries_and_the_header_and_a_final_report() {
    let mut t = fresh();
    let a = t.writer.append(user("a")).unwrap();
    let b = t.writer.append(user("b")).unwrap();
    append_raw(&t.path, b"\n   \n");
    let mut reader = TranscriptReader::open(&t.path, ReadOptions::default()).unwrap();
    assert_eq!(reader.header().unwrap().id, t.id);
    let first = reader.next().unwrap().unwrap();
    assert_eq!(first.id, a.id);
    assert_eq!(reader.report().entries, 1);
    let rest: Vec<Entry> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(ids(&rest), [b.id.to_string()]);
    let report = reader.finish();
    assert_eq!(report.entries, 2);
    assert_eq!(report.leaf, Some(b.id));
    assert!(report.is_clean(), "blank lines are not damage: {report:?}");
    assert_eq!(report.bytes, fs::metadata(&t.path).unwrap().len());
}

#[test]
fn a_file_without_header_still_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    fs::write(
        &path,
        "{\"type\":\"session_info\",\"id\":\"0000000a\",\"parentId\":null,\"timestamp\":\"t\"}\n",
    )
    .unwrap();
    let (entries, report) = load(&path, ReadOptions::default());
    assert_eq!(entries.len(), 1);
    assert!(report.header.is_none());
    assert!(report.is_clean());
}

#[test]
fn a_missing_transcript_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.jsonl");
    assert!(matches!(
        TranscriptReader::open(&path, ReadOptions::default()),
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(
        read_tail(&path, 1, ReadOptions::default()),
        Err(Error::NotFound { .. })
    ));
}

#[test]
fn read_tail_returns_the_last_entries_from_the_end() {
    let mut t = fresh();
    let mut all = Vec::new();
    for n in 0..50 {
        // Some lines span several 64 KiB read chunks.
        let text = if n % 10 == 3 {
            "z".repeat(200_000)
        } else {
            format!("m{n}")
        };
        all.push(t.writer.append(user(&text)).unwrap());
    }
    let tail = read_tail(&t.path, 3, ReadOptions::default()).unwrap();
    assert_eq!(tail.entries, all[47..]);
    assert!(!tail.reached_start);
    assert!(tail.torn_tail.is_none());
    let tail = read_tail(&t.path, 100, ReadOptions::default()).unwrap();
    assert_eq!(tail.entries, all);
    assert!(tail.reached_start);
    assert_eq!(tail.bad_lines, 0, "the header is not a bad line");

    let torn = b"{\"type\":\"mess";
    append_raw(&t.path, b"garbage\n");
    append_raw(&t.path, torn);
    let tail = read_tail(&t.path, 1, ReadOptions::default()).unwrap();
    assert_eq!(tail.entries, all[49..]);
    assert_eq!(tail.bad_lines, 1);
    assert_eq!(tail.torn_tail.unwrap().len, torn.len() as u64);
    assert_eq!(
        read_leaf(&t.path, ReadOptions::default()).unwrap(),
        all.last().cloned()
    );
}

#[test]
fn read_tail_of_a_header_only_or_empty_file() {
    let t = fresh();
    let tail = read_tail(&t.path, 5, ReadOptions::default()).unwrap();
    assert!(tail.entries.is_empty() && tail.reached_start && tail.bad_lines == 0);
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("e.jsonl");
    fs::write(&empty, "").unwrap();
    assert_eq!(read_leaf(&empty, ReadOptions::default()).unwrap(), None);
}

/// A transcript whose header names a format this crate does not read is refused, by the
/// reader and by the writer (nothing is repaired or appended), with an error naming the file
/// and the version; the current version reads as before.
#[test]
fn a_transcript_of_an_unknown_format_version_is_refused_with_its_name() {
    use std::sync::Arc;

    use openclaw_transcript::{SystemClock, TranscriptWriter, WriterOptions};
    let t = fresh();
    drop(t.writer);
    let text = fs::read_to_string(&t.path).unwrap();
    assert!(text.contains("\"version\":3"), "{text}");
    for version in [99, 2] {
        let changed = text.replacen("\"version\":3", &format!("\"version\":{version}"), 1);
        fs::write(&t.path, format!("{changed}{{\"torn\":")).unwrap();
        let read = TranscriptReader::open(&t.path, ReadOptions::default())
            .err()
            .expect("refused by the reader");
        let message = read.to_string();
        assert!(
            matches!(read, Error::UnsupportedVersion { version: v, .. } if v == version),
            "{message}"
        );
        assert!(message.contains(&t.path.display().to_string()), "{message}");
        assert!(message.contains(&format!("version {version}")), "{message}");
        let opened =
            TranscriptWriter::open(&t.path, Arc::new(SystemClock), WriterOptions::default());
        assert!(
            matches!(opened, Err(Error::UnsupportedVersion { .. })),
            "the writer opened it"
        );
        // Nothing was repaired or appended: the torn tail is still there.
        assert!(fs::read_to_string(&t.path).unwrap().ends_with("{\"torn\":"));
    }
    fs::write(&t.path, &text).unwrap();
    assert!(TranscriptReader::open(&t.path, ReadOptions::default()).is_ok());
}
