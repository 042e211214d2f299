//! Cron jobs in the runtime: the jobs file every agent shares
//! (`<state dir>/cron/jobs.json`), the control the `cron` tool and the API go through, and
//! what wakes the scheduler. The rules (schedules, due jobs, claims, missed runs) are in
//! [`openclaw_cron`]; the scheduler that runs due jobs, and the per-agent view the tool and the
//! API use, are in `run::crons`.
//!
//! A job belongs to one agent: the tool of a session of agent A sees and changes A's jobs
//! only. Due runs go to the job's isolated session (`agent:<id>:cron:<job>`, minimal prompt)
//! or, as a follow-up message, to the agent's main session.

use std::{
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
};

use jiff::Timestamp;
use openclaw_cron::JobStore;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::error::RuntimeError;

/// The jobs file, relative to the state directory.
pub const JOBS_FILE: &str = "cron/jobs.json";

/// The jobs and the scheduler's signals.
pub(crate) struct CronJobs {
    store: Mutex<JobStore>,
    /// Set when jobs change, so the scheduler recomputes its wake-up.
    changed: Arc<Notify>,
    stop: CancellationToken,
    started: AtomicBool,
}

impl std::fmt::Debug for CronJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CronJobs").finish_non_exhaustive()
    }
}

/// What opening the jobs file found besides the jobs: a file that could not be read, moved
/// aside (where to, and why).
pub(crate) type MovedAside = Option<(PathBuf, String)>;

impl CronJobs {
    /// Opens (or starts) the jobs file under `state_dir`.
    pub(crate) fn open(
        state_dir: &Path,
        now: Timestamp,
    ) -> Result<(Self, MovedAside), RuntimeError> {
        let path = state_dir.join(JOBS_FILE);
        let opened = JobStore::open(&path, now).map_err(store_error)?;
        Ok((
            Self {
                store: Mutex::new(opened.store),
                changed: Arc::new(Notify::new()),
                stop: CancellationToken::new(),
                started: AtomicBool::new(false),
            },
            opened.moved_aside,
        ))
    }

    /// Reads the jobs.
    pub(crate) fn read<T>(&self, f: impl FnOnce(&JobStore) -> T) -> T {
        f(&self.store.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Changes the jobs and saves them (temp file, fsync, rename) before returning; the
    /// scheduler is woken. When the save fails the change is undone (the file is read back),
    /// so memory never holds what the file does not. The fsync runs on the caller's thread:
    /// job changes are rare and small.
    pub(crate) fn edit<T>(
        &self,
        f: impl FnOnce(&mut JobStore) -> Result<T, RuntimeError>,
    ) -> Result<T, RuntimeError> {
        let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        let out = f(&mut store)?;
        if let Err(error) = store.save() {
            let path = store.path().to_path_buf();
            if let Ok(opened) = JobStore::open(&path, Timestamp::now()) {
                *store = opened.store;
            }
            return Err(store_error(error));
        }
        drop(store);
        self.changed.notify_one();
        Ok(out)
    }

    pub(crate) fn changes(&self) -> Arc<Notify> {
        Arc::clone(&self.changed)
    }

    pub(crate) fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Stops the scheduler (shutdown).
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }

    /// True for the first caller only: that one starts the scheduler.
    pub(crate) fn claim_start(&self) -> bool {
        !self.started.swap(true, Ordering::SeqCst)
    }
}

fn store_error(error: openclaw_cron::StoreError) -> RuntimeError {
    RuntimeError::Unavailable(error.to_string())
}
