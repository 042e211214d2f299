//! What the service repaired in its own state directory since it started: a
//! session index rebuilt from the transcripts, acknowledged messages set
//! aside because no transcript line can hold them. Each is logged when it
//! happens and kept here for the service's status report.

use std::{
    path::PathBuf,
    sync::{Mutex, PoisonError},
};

/// Repairs kept at most (the oldest go first); each is also in the log.
const KEPT: usize = 256;

/// What was repaired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepairKind {
    /// An agent's `sessions.json` could not be read: it was moved aside
    /// (`file`) and rebuilt from the transcripts' headers.
    IndexRebuilt,
    /// Acknowledged messages from a session's journal could not be written
    /// to its transcript; they were set aside in `file`.
    MessagesQuarantined,
}

impl RepairKind {
    /// Its stable name (logs, the status report).
    pub fn name(self) -> &'static str {
        match self {
            Self::IndexRebuilt => "index_rebuilt",
            Self::MessagesQuarantined => "messages_quarantined",
        }
    }
}

/// One repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// What was repaired.
    pub kind: RepairKind,
    /// The agent whose state it was.
    pub agent_id: String,
    /// The session, for a session's repair.
    pub session_id: Option<String>,
    /// The file an operator should look at (the moved index, the quarantine file).
    pub file: PathBuf,
    /// What happened, in words (counts, reasons).
    pub detail: String,
    /// When, ms since the epoch.
    pub at_ms: i64,
}

/// The repairs since start-up, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Repairs {
    list: Mutex<Vec<Repair>>,
}

impl Repairs {
    pub(crate) fn record(&self, repair: Repair) {
        let mut list = self.list.lock().unwrap_or_else(PoisonError::into_inner);
        if list.len() == KEPT {
            list.remove(0);
        }
        list.push(repair);
    }

    pub(crate) fn list(&self) -> Vec<Repair> {
        self.list
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
