//! Which jobs are due, and the bookkeeping of one run: claim, then finish (or release).
//!
//! Missed runs: when the service was down over one or more slots of a job, the job is due
//! once when the service is back (its oldest missed slot is the run's slot), and the slots in
//! between are counted in [`JobState::missed_runs`](crate::JobState) rather than run.

use jiff::{Timestamp, tz::TimeZone};

use crate::{Claim, InvalidJob, Job, RunOutcome};

/// A job that is due now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    /// The job.
    pub job_id: String,
    /// The slot it runs for (its `next_run_at`).
    pub slot: Timestamp,
}

/// The jobs due at `now`, oldest slot first (ties by id): enabled, not running, and their
/// next slot at or before `now`.
pub fn due<'a>(jobs: impl IntoIterator<Item = &'a Job>, now: Timestamp) -> Vec<Due> {
    let mut due: Vec<Due> = jobs
        .into_iter()
        .filter(|j| j.spec.enabled && j.state.running.is_none())
        .filter_map(|j| {
            let slot = j.state.next_run_at?;
            (slot <= now).then(|| Due {
                job_id: j.id.clone(),
                slot,
            })
        })
        .collect();
    due.sort_by(|a, b| a.slot.cmp(&b.slot).then_with(|| a.job_id.cmp(&b.job_id)));
    due
}

/// The earliest slot of any enabled job that is not running: when the scheduler should wake.
pub fn next_wake<'a>(jobs: impl IntoIterator<Item = &'a Job>) -> Option<Timestamp> {
    jobs.into_iter()
        .filter(|j| j.spec.enabled && j.state.running.is_none())
        .filter_map(|j| j.state.next_run_at)
        .min()
}

/// Claims the run of `slot`: from here until [`finish`] or [`release`], the job is not due
/// again. The caller writes the store before starting the run.
pub fn claim(job: &mut Job, slot: Timestamp, now: Timestamp) -> Claim {
    let claim = Claim {
        slot,
        claimed_at: now,
    };
    job.state.running = Some(claim.clone());
    claim
}

/// Gives a claimed run back without running it (it was never handed to a session): the job is
/// due again for the same slot.
pub fn release(job: &mut Job) {
    if let Some(claim) = job.state.running.take() {
        job.state.next_run_at = Some(claim.slot);
    }
}

/// What to do with a job after its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Keep it; it runs again at its next slot (or never, for a finished one-shot).
    Keep,
    /// Remove it (a one-shot with delete-after-run).
    Remove,
}

/// Records a run on demand (outside the schedule) that ended at `now`: counted and its
/// outcome kept like a scheduled run's, while the schedule (the next slot, missed slots, a
/// claim the scheduler holds) is left as it is.
pub fn record_on_demand(job: &mut Job, outcome: &RunOutcome, now: Timestamp) {
    job.state.last_run_at = Some(now);
    job.state.last_status = Some(outcome.status);
    job.state.last_error = outcome.error.clone();
    job.state.runs = job.state.runs.saturating_add(1);
    job.updated_at = now;
}

/// Records the end of the claimed run at `now` and computes the next slot strictly after
/// `now`: slots that passed during the run or the downtime before it are counted as missed,
/// not run.
pub fn finish(
    job: &mut Job,
    outcome: &RunOutcome,
    default_tz: &TimeZone,
    now: Timestamp,
) -> Result<After, InvalidJob> {
    let compiled = job.spec.validate(default_tz)?;
    let slot = job
        .state
        .running
        .take()
        .map(|c| c.slot)
        .or(job.state.next_run_at)
        .unwrap_or(now);
    let created = job.created_at;
    let mut missed = 0u64;
    let mut next = compiled.next_after(slot, created);
    while let Some(t) = next {
        if t > now || missed >= 100_000 {
            break;
        }
        missed += 1;
        next = compiled.next_after(t, created);
    }
    let next = match next {
        Some(t) if t <= now => compiled.next_after(now, created),
        other => other,
    };
    job.state.missed_runs = job.state.missed_runs.saturating_add(missed);
    job.state.last_run_at = Some(slot);
    job.state.last_status = Some(outcome.status);
    job.state.last_error = outcome.error.clone();
    job.state.runs = job.state.runs.saturating_add(1);
    job.state.next_run_at = if job.spec.enabled { next } else { None };
    job.updated_at = now;
    if job.deletes_after_run() && job.state.next_run_at.is_none() {
        return Ok(After::Remove);
    }
    Ok(After::Keep)
}
