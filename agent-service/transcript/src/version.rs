//! The format version seam: which transcript versions this crate reads, and how.
//!
//! Line 1 of a transcript carries its format `version`. A reader must never take a format it
//! does not know for one it does: a newer file is refused with an error naming the file and
//! both versions (the service that wrote it is newer than this one), and an older one is read
//! only through a row of [`READERS`]. Version 3 (pi's, the only one this crate has ever
//! written) is read as it is; no older version has a reader yet, so one is refused the same
//! way until a row with its conversion is added. A file without a valid header is read as
//! before (its lines are judged one by one), so a damaged header never hides a session.

use std::path::Path;

use crate::entry::CURRENT_VERSION;
use crate::error::{Error, Result};

/// How the entries of a readable version become today's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conversion {
    /// The lines are today's format.
    AsIs,
}

/// Every version this crate reads, oldest first, with its conversion.
const READERS: &[(u32, Conversion)] = &[(CURRENT_VERSION, Conversion::AsIs)];

/// Whether a transcript whose header says `version` may be read (and appended to).
pub(crate) fn check(path: &Path, version: u32) -> Result<()> {
    if version > CURRENT_VERSION {
        return Err(Error::UnsupportedVersion {
            path: path.to_path_buf(),
            version,
            reason: format!(
                "it is newer than the newest this agent-service reads ({CURRENT_VERSION}): it \
                 was written by a newer release; run that release, or move the file aside"
            ),
        });
    }
    match READERS.iter().find(|(known, _)| *known == version) {
        Some((_, Conversion::AsIs)) => Ok(()),
        None => Err(Error::UnsupportedVersion {
            path: path.to_path_buf(),
            version,
            reason: format!(
                "this agent-service reads versions {} only and has no conversion for it",
                READERS
                    .iter()
                    .map(|(v, _)| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_version_reads_and_others_are_refused_by_name() {
        let path = Path::new("/state/sessions/x.jsonl");
        assert!(check(path, CURRENT_VERSION).is_ok());
        let newer = check(path, 99).expect_err("newer").to_string();
        assert!(newer.contains("/state/sessions/x.jsonl"), "{newer}");
        assert!(newer.contains("version 99"), "{newer}");
        assert!(newer.contains("newer than the newest"), "{newer}");
        let older = check(path, 2).expect_err("older").to_string();
        assert!(older.contains("version 2"), "{older}");
        assert!(older.contains("reads versions 3 only"), "{older}");
    }
}
