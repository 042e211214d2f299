//! Cron jobs of agents, the pure part: what a job is, when it is due, and the file the jobs
//! live in.
//!
//! - [`Schedule`]: a cron expression evaluated in a time zone (daylight saving changes
//!   handled by the time zone database), a one-shot instant, or a fixed interval from an
//!   anchor. [`Schedule::next_after`] is the only question the scheduler asks of it.
//! - [`Job`] and [`JobState`]: what to run (a prompt in an isolated cron session, or a system
//!   event in the agent's main session), where the result goes, and the bookkeeping that makes
//!   a run happen once: a run is *claimed* (durably) before it starts and *finished* after, so
//!   a crash between the two leaves a claim the runtime resolves at start-up instead of losing
//!   or doubling the run ([`Claim::event_id`] is the idempotency key).
//! - [`plan`]: which jobs are due at an instant, and the missed-run policy after downtime: a
//!   job whose slots passed while the service was down runs once at start-up, not once per
//!   missed slot.
//! - [`JobStore`]: the jobs file (`<state dir>/cron/jobs.json`), written by temp file, fsync
//!   and rename; a file that cannot be read is moved aside and reported, never fatal.
//!
//! Nothing here reads the clock: every function takes `now`.

mod civil;
mod job;
pub mod plan;
mod schedule;
mod store;

pub use job::{
    Claim, Delivery, Job, JobPatch, JobSpec, JobState, MAX_PROMPT_CHARS, Privilege, RunOutcome,
    RunStatus, Target,
};
pub use schedule::{Compiled, MIN_EVERY_MS, Schedule, ScheduleError, every_text};
pub use store::{JobStore, Opened, StoreError};

/// A job's spec or patch that cannot be accepted, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct InvalidJob {
    /// The field, as the tool and the API spell it (`schedule.expr`, `prompt`, ...).
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: String,
}

impl InvalidJob {
    pub(crate) fn new(field: &'static str, reason: impl Into<String>) -> Self {
        Self {
            field,
            reason: reason.into(),
        }
    }
}
