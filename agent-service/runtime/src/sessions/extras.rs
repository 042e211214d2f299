//! Per-session state that lives beside the actor: the run guard, the
//! previous prompt fingerprint (for cache-break diagnostics) and the
//! registry of background commands started by `exec`.

use std::sync::{
    Arc, Mutex, PoisonError,
    atomic::{AtomicBool, AtomicU64, Ordering},
};

use openclaw_tools::ProcessRegistry;

use crate::run::evidence::PromptFingerprint;

/// State of one open session outside its transcript.
#[derive(Debug)]
pub struct SessionExtras {
    active: AtomicBool,
    runs: AtomicU64,
    fingerprint: Mutex<Option<PromptFingerprint>>,
    /// Background commands of this session.
    pub processes: Arc<ProcessRegistry>,
}

impl Default for SessionExtras {
    fn default() -> Self {
        Self {
            active: AtomicBool::new(false),
            runs: AtomicU64::new(0),
            fingerprint: Mutex::new(None),
            processes: Arc::new(ProcessRegistry::new()),
        }
    }
}

impl SessionExtras {
    /// Claims the session for a run; false when one is already active.
    pub fn begin_run(&self) -> bool {
        self.active
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Releases the claim.
    pub fn end_run(&self) {
        self.active.store(false, Ordering::Release);
    }

    /// True while a run is active.
    pub fn is_running(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// 1-based number of the next run in this process.
    pub fn next_run_number(&self) -> u64 {
        self.runs.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Stores this call's fingerprint and returns the previous one.
    pub fn swap_fingerprint(&self, next: PromptFingerprint) -> Option<PromptFingerprint> {
        self.fingerprint
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .replace(next)
    }
}
