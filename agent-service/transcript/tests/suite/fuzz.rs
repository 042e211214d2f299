//! Fuzzing the transcript reader with proptest (cargo-fuzz needs a nightly toolchain
//! and `cargo install`, which CI does not have). Real transcripts, written by the writer,
//! damaged at random, read back with a small line cap:
//! - never a panic; damage is a report, never an error (`for_each_entry` returns `Ok`);
//! - bounded memory: a line longer than the cap is reported `TooLong` and never decoded, no
//!   entry is larger than twice the cap once re-encoded, and the report keeps at most
//!   `max_reported_bad_lines` lines however many there are;
//! - the report adds up: bytes read = file size, a torn tail exactly when the file does not end
//!   in `\n`, entries plus bad lines never more than lines;
//! - damage loses nothing else: garbage lines between good ones leave every good entry
//!   readable, in order, and each non-blank garbage line is counted once.
//!
//! Cases per property default to a few hundred (a few seconds in all); set `PROPTEST_CASES`
//! for long runs (README "Fuzzing").

use openclaw_transcript::{BadLineReason, ReadOptions, for_each_entry};
use proptest::prelude::*;

use super::fixture::{fresh, user};

/// The line cap of these reads: small, so over-long lines are cheap to make.
const CAP: usize = 2048;
/// The bad lines a report keeps.
const KEEP: usize = 8;

fn options() -> ReadOptions {
    ReadOptions {
        max_line_len: CAP,
        max_reported_bad_lines: KEEP,
    }
}

fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A transcript of `texts` as user messages: its bytes and its entry ids.
fn transcript(texts: &[String]) -> (Vec<u8>, Vec<String>) {
    let mut f = fresh();
    let ids = texts
        .iter()
        .map(|t| f.writer.append(user(t)).unwrap().id.to_string())
        .collect();
    drop(f.writer);
    (std::fs::read(&f.path).unwrap(), ids)
}

/// Reads `bytes` as a transcript file: the entry ids and the report.
fn read(bytes: &[u8]) -> (Vec<String>, openclaw_transcript::LoadReport) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, bytes).unwrap();
    let mut ids = Vec::new();
    let report = for_each_entry(&path, options(), |entry| {
        let encoded = serde_json::to_string(&entry).unwrap();
        assert!(
            encoded.len() <= 2 * CAP,
            "a {}-byte entry from lines capped at {CAP}",
            encoded.len()
        );
        ids.push(entry.id.to_string());
    })
    .unwrap(); // damage is reported, never an error
    (ids, report)
}

/// The report's own invariants, whatever the bytes.
fn check_report(
    bytes: &[u8],
    entries: usize,
    report: &openclaw_transcript::LoadReport,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(report.bytes, bytes.len() as u64);
    prop_assert_eq!(report.entries, entries as u64);
    prop_assert_eq!(
        report.torn_tail.is_some(),
        !bytes.is_empty() && !bytes.ends_with(b"\n")
    );
    prop_assert!(report.bad_lines.len() <= KEEP);
    prop_assert_eq!(
        report.bad_lines.len() as u64,
        report.bad_line_count.min(KEEP as u64)
    );
    let lines = bytes.split(|b| *b == b'\n').count() as u64;
    prop_assert!(
        report.entries + report.bad_line_count + u64::from(report.header.is_some()) <= lines,
        "{} entries + {} bad in {lines} lines",
        report.entries,
        report.bad_line_count
    );
    // Every terminated line over the cap is a bad line, never decoded.
    let terminated = &bytes[..bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1)];
    let over_long = terminated
        .split(|b| *b == b'\n')
        .filter(|line| line.len() > CAP)
        .count() as u64;
    prop_assert!(over_long <= report.bad_line_count);
    for bad in &report.bad_lines {
        prop_assert_eq!(
            bad.reason == BadLineReason::TooLong,
            bad.len > CAP as u64,
            "{:?}",
            bad
        );
        prop_assert!(bad.offset + bad.len <= report.bytes);
    }
    Ok(())
}

/// Message texts: plain, unicode, JSON-looking, long enough to cross the cap sometimes.
fn texts() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop_oneof![
            "\\PC{0,40}",
            "[\"{}\\\\\n\t]{0,10}",
            (1usize..3).prop_map(|n| "x".repeat(n * CAP / 2)),
        ],
        0..8,
    )
}

/// One garbage line (without its `\n`) of the kinds crashes and other writers leave.
fn garbage_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        Just(b"   \t ".to_vec()),
        (1usize..64).prop_map(|n| vec![0_u8; n]),
        prop::collection::vec(
            any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
            1..64
        ),
        Just(b"{\"type\":\"message\",\"id\":".to_vec()),
        Just(b"{\"type\":\"message\"}".to_vec()),
        Just(b"{\"type\":\"session\",\"version\":3,\"id\":\"x\"}".to_vec()),
        Just(b"[1,2,3]".to_vec()),
        Just(b"\xff\xfe{\"id\":\"a\"}".to_vec()),
        Just(vec![b'['; 5000]),
        (1usize..4).prop_map(|n| vec![b'a'; CAP * n + 1]),
        "\\PC{0,80}".prop_map(String::into_bytes),
    ]
    .prop_filter("never a valid entry", |line| !line.starts_with(b"{\"id\""))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(128)))]

    /// Random byte edits of a real transcript: cuts, insertions (NUL runs, newlines, JSON
    /// punctuation), duplications and truncations.
    #[test]
    fn damaged_transcripts_never_panic_and_reports_add_up(
        texts in texts(),
        edits in prop::collection::vec(
            (0u8..4, any::<usize>(), 0usize..200, prop::collection::vec(
                prop_oneof![Just(0_u8), Just(b'\n'), Just(b'{'), Just(b'"'), Just(b'\\'), any::<u8>()],
                0..16,
            )),
            0..6,
        ),
    ) {
        let (mut bytes, _) = transcript(&texts);
        for (kind, at, len, insert) in edits {
            let from = at % (bytes.len() + 1);
            let to = from.saturating_add(len).min(bytes.len());
            bytes = match kind {
                0 => [&bytes[..from], &bytes[to..]].concat(),
                1 => [&bytes[..from], &insert[..], &bytes[from..]].concat(),
                2 => [&bytes[..to], &bytes[from..to], &bytes[from..]].concat(),
                _ => bytes[..from].to_vec(),
            };
        }
        let (ids, report) = read(&bytes);
        check_report(&bytes, ids.len(), &report)?;
    }

    /// Whole garbage lines between good ones: every good entry is still read, in order, and
    /// each non-blank garbage line is counted once.
    #[test]
    fn garbage_lines_lose_no_good_entry(
        texts in texts(),
        garbage in prop::collection::vec((any::<prop::sample::Index>(), garbage_line()), 0..10),
    ) {
        let (bytes, expected) = transcript(&texts);
        let mut lines: Vec<Vec<u8>> = bytes
            .split(|b| *b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        lines.pop(); // the empty piece after the final newline
        // Good entries whose line is over the cap are skipped (and counted) like garbage.
        let mut counted = 0;
        let expected: Vec<String> = expected
            .into_iter()
            .zip(&lines[1..])
            .filter_map(|(id, line)| {
                if line.len() > CAP {
                    counted += 1;
                    None
                } else {
                    Some(id)
                }
            })
            .collect();
        for (index, line) in garbage {
            // Never before the header: line 1 must stay the header.
            let at = 1 + index.index(lines.len());
            if !line.iter().all(u8::is_ascii_whitespace) {
                counted += 1;
            }
            lines.insert(at.min(lines.len()), line);
        }
        let mut damaged = lines.join(&b'\n');
        damaged.push(b'\n');
        let (ids, report) = read(&damaged);
        check_report(&damaged, ids.len(), &report)?;
        prop_assert_eq!(&ids, &expected);
        prop_assert_eq!(report.bad_line_count, counted);
        prop_assert!(report.header.is_some());
        prop_assert!(report.torn_tail.is_none());
    }

    /// Arbitrary bytes, with and without a final newline.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let (ids, report) = read(&bytes);
        check_report(&bytes, ids.len(), &report)?;
    }
}

/// One line far over the cap is skipped without being buffered, and the read goes on.
#[test]
fn a_huge_line_is_skipped_and_reading_goes_on() {
    let (clean, ids) = transcript(&["before".to_owned(), "after".to_owned()]);
    let lines: Vec<&[u8]> = clean.split(|b| *b == b'\n').collect();
    let huge = vec![b'{'; 8 * 1024 * 1024];
    let damaged = [
        lines[0], b"\n", lines[1], b"\n", &huge, b"\n", lines[2], b"\n",
    ]
    .concat();
    let (read_ids, report) = read(&damaged);
    assert_eq!(read_ids, ids);
    assert_eq!(report.bad_line_count, 1);
    assert_eq!(report.bad_lines[0].reason, BadLineReason::TooLong);
    assert_eq!(report.bad_lines[0].len, huge.len() as u64);
}
