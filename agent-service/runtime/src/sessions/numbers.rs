//! A session's numbers across restarts. Runs, message seqs and background commands are
//! numbered per session and clients de-duplicate by them, so a restarted service must go on
//! above every number the last process handed out.
//!
//! `<sessionId>.numbers` beside the transcript holds a floor, as JSON
//! (`{"version":1,"run":R,"seq":S,"process":P}`). The first time a process opens the session
//! it numbers on from the floor and first moves the floor [`BLOCK`] ahead (written and
//! synced before any number is handed out); while the session is live the floor is moved
//! again before the numbers come within half a block of it. A released idle session keeps its
//! numbers in memory (its floor on disk stays ahead of them); a graceful shutdown writes the
//! exact numbers of every session, released ones included, so they go on without a gap; after
//! a crash they jump by less than a block. Never backwards.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use super::queue::Counters;

/// File extension of a session's numbers floor.
pub const NUMBERS_EXT: &str = "numbers";

/// The version of the file this build writes; a newer one is read for its numbers (a floor
/// above is safe) and reported.
const VERSION: u32 = 1;

/// How far ahead of the numbers handed out the floor is moved.
pub(crate) const BLOCK: u64 = 1000;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    version: u32,
    #[serde(default)]
    run: u64,
    #[serde(default)]
    seq: u64,
    #[serde(default)]
    process: u64,
}

/// The numbers file of the session whose transcript is `transcript`.
pub(crate) fn path_of(transcript: &Path) -> PathBuf {
    transcript.with_extension(NUMBERS_EXT)
}

/// The floor stored at `path` (nothing yet: zero). A file that cannot be read or parsed is
/// reported and read as zero: the session stays usable, and its numbers may repeat.
pub(crate) fn read(path: &Path) -> Counters {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Counters::default(),
        Err(error) => {
            tracing::error!(path = %path.display(), %error, "session numbers unreadable; numbering from 0");
            return Counters::default();
        }
    };
    match serde_json::from_str::<Stored>(&text) {
        Ok(stored) => {
            if stored.version > VERSION {
                tracing::warn!(path = %path.display(), version = stored.version, "session numbers written by a newer version; using them as the floor");
            }
            Counters {
                run: stored.run,
                seq: stored.seq,
                process: stored.process,
            }
        }
        Err(error) => {
            tracing::error!(path = %path.display(), %error, "session numbers unparsable; numbering from 0");
            Counters::default()
        }
    }
}

/// Writes `counters` as the floor at `path`: a temporary file, synced, renamed over it.
pub(crate) fn write(path: &Path, counters: Counters) -> std::io::Result<()> {
    let stored = Stored {
        version: VERSION,
        run: counters.run,
        seq: counters.seq,
        process: counters.process,
    };
    let text = serde_json::to_string(&stored).map_err(std::io::Error::other)?;
    let tmp = path.with_extension(format!("{NUMBERS_EXT}.tmp"));
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// `counters` moved a block ahead: the floor to write before numbering on from `counters`.
pub(crate) fn ahead(counters: Counters) -> Counters {
    Counters {
        run: counters.run.saturating_add(BLOCK),
        seq: counters.seq.saturating_add(BLOCK),
        process: counters.process.saturating_add(BLOCK),
    }
}

/// True when `counters` came within half a block of the `floor` written ahead of them.
pub(crate) fn near(counters: Counters, floor: Counters) -> bool {
    let close = |n: u64, f: u64| n.saturating_add(BLOCK / 2) >= f;
    close(counters.run, floor.run)
        || close(counters.seq, floor.seq)
        || close(counters.process, floor.process)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_round_trips_and_moves_ahead() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = path_of(&dir.path().join("s.jsonl"));
        assert_eq!(read(&path), Counters::default());
        let handed = Counters {
            run: 7,
            seq: 12,
            process: 1,
        };
        write(&path, ahead(handed)).expect("write");
        assert_eq!(
            read(&path),
            Counters {
                run: 1007,
                seq: 1012,
                process: 1001
            }
        );
        assert!(!near(handed, ahead(handed)));
        let later = Counters {
            seq: 12 + BLOCK / 2,
            ..handed
        };
        assert!(near(later, ahead(handed)));
        // A newer version's numbers are still a floor; garbage reads as zero.
        std::fs::write(&path, r#"{"version":9,"run":50,"seq":60,"later":true}"#).expect("write");
        assert_eq!(read(&path).seq, 60);
        std::fs::write(&path, "{").expect("write");
        assert_eq!(read(&path), Counters::default());
    }
}
