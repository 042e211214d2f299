//! Damage the soak does to agent-service's state directory while the process
//! is down, and how it checks, once the service is back, that the damage was
//! repaired rather than ignored.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

/// Unreadable index contents, used in turn.
const BAD_INDEXES: [(&str, &[u8]); 4] = [
    ("truncated", b"{\"agent:main:x\": {\"sessionId\": \"0"),
    ("emptied", b""),
    ("an array", b"[]"),
    ("random bytes", b"\x8f\x00\xffnot an index\x13"),
];

/// A message of this many U+0001 characters escapes (`\u0001`, six bytes each) to more
/// than a 16 MiB transcript line.
const POISON_CHARS: usize = 3 * 1024 * 1024;

/// Journal sequence numbers of injected entries start here, far above a real process's.
const POISON_SEQ: u64 = 1_000_000_000;

/// What to check after the restart.
#[derive(Debug)]
pub(crate) enum Check {
    /// The index was replaced by unreadable bytes: a moved-aside copy must appear.
    IndexRebuilt {
        dir: PathBuf,
        what: &'static str,
        aside_before: usize,
    },
    /// There was nothing to damage yet (no session): nothing to check.
    Skipped(&'static str),
    /// A poison entry went into a session's journal: the quarantine file must hold it.
    Quarantined {
        file: PathBuf,
        seq: u64,
        session: String,
    },
}

/// Replaces the index with unreadable bytes (variant `n`).
pub(crate) fn corrupt_index(dir: &Path, n: u64) -> Result<Check, String> {
    let index = dir.join("sessions.json");
    let (what, bytes) = BAD_INDEXES[usize::try_from(n).unwrap_or(0) % BAD_INDEXES.len()];
    let aside_before = moved_aside(dir);
    std::fs::write(&index, bytes).map_err(|e| format!("write {}: {e}", index.display()))?;
    Ok(Check::IndexRebuilt {
        dir: dir.to_path_buf(),
        what,
        aside_before,
    })
}

/// Appends an acknowledged message no transcript line can hold, then a torn line, to the
/// journal of one session (the `n`th transcript by name, cycling).
pub(crate) fn poison_journal(dir: &Path, n: u64) -> Result<Check, String> {
    let mut sessions: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("list {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter_map(|e| {
            e.file_name()
                .to_string_lossy()
                .strip_suffix(".jsonl")
                .map(str::to_owned)
        })
        .collect();
    sessions.sort();
    if sessions.is_empty() {
        return Ok(Check::Skipped("no session to damage yet"));
    }
    let session = sessions[usize::try_from(n).unwrap_or(0) % sessions.len()].clone();
    let seq = POISON_SEQ + n;
    let line = serde_json::json!({
        "accepted": { "seq": seq, "text": "\u{1}".repeat(POISON_CHARS), "at": now_ms() }
    });
    let journal = dir.join(format!("{session}.queue"));
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&journal)
        .and_then(|mut f| {
            f.write_all(format!("{line}\n{{\"accepted\":{{\"seq\":").as_bytes())?;
            f.sync_all()
        })
        .map_err(|e| format!("append to {}: {e}", journal.display()))?;
    Ok(Check::Quarantined {
        file: dir.join(format!("{session}.queue.quarantined")),
        seq,
        session,
    })
}

impl Check {
    /// Whether the service repaired the damage (call once it is serving again).
    pub(crate) fn verify(self) -> Result<String, String> {
        match self {
            Self::Skipped(why) => Ok(why.to_owned()),
            Self::IndexRebuilt {
                dir,
                what,
                aside_before,
            } => {
                let aside = moved_aside(&dir);
                let readable = std::fs::read(dir.join("sessions.json"))
                    .ok()
                    .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                    .is_some_and(|v| v.is_object());
                if aside == aside_before + 1 && readable {
                    Ok(format!("sessions.json {what}: moved aside and rebuilt"))
                } else {
                    Err(format!(
                        "sessions.json {what}: {aside} moved-aside copies (was {aside_before}), \
                         index readable: {readable}"
                    ))
                }
            }
            Self::Quarantined { file, seq, session } => {
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                let found = text.lines().any(|line| {
                    serde_json::from_str::<serde_json::Value>(line)
                        .is_ok_and(|v| v["accepted"]["seq"] == seq)
                });
                if found {
                    Ok(format!("session {session}: poison entry {seq} quarantined"))
                } else {
                    Err(format!(
                        "session {session}: poison entry {seq} not in {}",
                        file.display()
                    ))
                }
            }
        }
    }
}

fn moved_aside(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|listing| {
            listing
                .filter_map(Result::ok)
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("sessions.json.corrupt.")
                })
                .count()
        })
        .unwrap_or(0)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poison_entry_does_not_fit_a_transcript_line() {
        let escaped = serde_json::to_string(&"\u{1}".repeat(POISON_CHARS)).unwrap_or_default();
        assert!(escaped.len() > 16 * 1024 * 1024, "{}", escaped.len());
    }

    #[test]
    fn damage_is_judged_by_what_the_service_left() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("abc.jsonl"), b"{}\n").unwrap_or_else(|e| panic!("{e}"));
        // Nothing repaired: both checks fail.
        let check = corrupt_index(dir.path(), 0).unwrap_or_else(|e| panic!("{e}"));
        assert!(check.verify().is_err());
        let check = poison_journal(dir.path(), 1).unwrap_or_else(|e| panic!("{e}"));
        assert!(check.verify().is_err());
        // Repaired: both pass.
        let check = corrupt_index(dir.path(), 0).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("sessions.json.corrupt.1"), b"")
            .and_then(|()| std::fs::write(dir.path().join("sessions.json"), b"{}"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(check.verify().is_ok());
        let check = poison_journal(dir.path(), 2).unwrap_or_else(|e| panic!("{e}"));
        let line = format!(
            "{{\"accepted\":{{\"seq\":{}}},\"reason\":\"x\"}}\n",
            POISON_SEQ + 2
        );
        std::fs::write(dir.path().join("abc.queue.quarantined"), line)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(check.verify().is_ok());
    }
}
