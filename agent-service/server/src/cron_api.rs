//! Cron jobs over the API: the RPC messages to and from the cron crate's types.

use openclaw_cron::{Delivery, Job, JobPatch, JobSpec, RunOutcome, RunStatus, Schedule, Target};
use openclaw_proto::agent::v1 as pb;
use tonic::Status;

fn invalid(field: &str, reason: impl std::fmt::Display) -> Status {
    Status::invalid_argument(format!("{field}: {reason}"))
}

/// A schedule from its text and time zone (`tz` applies to cron expressions only).
fn schedule_of(text: &str, tz: &str, field: &str) -> Result<Schedule, Status> {
    let schedule: Schedule = text
        .parse()
        .map_err(|e| invalid(&format!("{field}.schedule"), e))?;
    let tz = tz.trim();
    match schedule {
        Schedule::Cron { expr, .. } => Ok(Schedule::Cron {
            expr,
            tz: (!tz.is_empty()).then(|| tz.to_owned()),
        }),
        other if tz.is_empty() => Ok(other),
        _ => Err(invalid(
            &format!("{field}.tz"),
            "only a cron expression takes a time zone",
        )),
    }
}

/// A schedule as its text and time zone.
fn schedule_text(schedule: &Schedule) -> (String, String) {
    match schedule {
        Schedule::Cron { expr, tz } => (expr.clone(), tz.clone().unwrap_or_default()),
        Schedule::At { at } => (format!("at {at}"), String::new()),
        Schedule::Every { every_ms, .. } => (openclaw_cron::every_text(*every_ms), String::new()),
    }
}

fn target_of(target: i32) -> Result<Option<Target>, Status> {
    match pb::CronTarget::try_from(target) {
        Ok(pb::CronTarget::Unspecified) => Ok(None),
        Ok(pb::CronTarget::Isolated) => Ok(Some(Target::Isolated)),
        Ok(pb::CronTarget::Main) => Ok(Some(Target::Main)),
        Err(_) => Err(invalid("target", format!("unknown value {target}"))),
    }
}

fn delivery_of(deliver: bool, to: &str) -> Delivery {
    let to = to.trim();
    if deliver {
        Delivery::Session {
            session_key: (!to.is_empty()).then(|| to.to_owned()),
        }
    } else {
        Delivery::None
    }
}

/// An AddCronJob spec.
pub(crate) fn spec_of(spec: Option<pb::CronJobSpec>) -> Result<JobSpec, Status> {
    let spec = spec.ok_or_else(|| invalid("spec", "required"))?;
    if !spec.deliver && !spec.deliver_to.trim().is_empty() {
        return Err(invalid("spec.deliver_to", "needs deliver"));
    }
    Ok(JobSpec {
        name: spec.name,
        schedule: schedule_of(&spec.schedule, &spec.tz, "spec")?,
        prompt: spec.prompt,
        target: target_of(spec.target)?.unwrap_or_default(),
        lightweight: spec.lightweight,
        delivery: delivery_of(spec.deliver, &spec.deliver_to),
        delete_after_run: spec.delete_after_run,
        enabled: spec.enabled.unwrap_or(true),
    })
}

/// An UpdateCronJob patch.
pub(crate) fn patch_of(patch: Option<pb::CronJobPatch>) -> Result<JobPatch, Status> {
    let patch = patch.ok_or_else(|| invalid("patch", "required"))?;
    let schedule = match (&patch.schedule, &patch.tz) {
        (Some(text), tz) => Some(schedule_of(text, tz.as_deref().unwrap_or(""), "patch")?),
        (None, Some(_)) => return Err(invalid("patch.tz", "give it with patch.schedule")),
        (None, None) => None,
    };
    let delivery = match (patch.deliver, &patch.deliver_to) {
        (Some(deliver), to) => Some(delivery_of(deliver, to.as_deref().unwrap_or(""))),
        (None, Some(_)) => return Err(invalid("patch.deliver_to", "give it with patch.deliver")),
        (None, None) => None,
    };
    let patch = JobPatch {
        name: patch.name,
        schedule,
        prompt: patch.prompt,
        target: target_of(patch.target)?,
        lightweight: patch.lightweight,
        delivery,
        delete_after_run: patch.delete_after_run,
        enabled: patch.enabled,
    };
    if patch == JobPatch::default() {
        return Err(invalid("patch", "give at least one field to change"));
    }
    Ok(patch)
}

fn ms(t: Option<jiff::Timestamp>) -> i64 {
    t.map_or(0, |t| t.as_millisecond())
}

fn status_of(status: Option<RunStatus>) -> pb::CronRunStatus {
    match status {
        None => pb::CronRunStatus::Unspecified,
        Some(RunStatus::Ok) => pb::CronRunStatus::Ok,
        Some(RunStatus::Error) => pb::CronRunStatus::Error,
        Some(RunStatus::Skipped) => pb::CronRunStatus::Skipped,
    }
}

/// A job for the API.
pub(crate) fn job(job: Job) -> pb::CronJob {
    let spec = pb::CronJobSpec {
        delete_after_run: Some(job.deletes_after_run()),
        ..spec_pb(&job.spec)
    };
    pb::CronJob {
        spec: Some(spec),
        session_key: job.run_session_key(),
        next_run_at_ms: ms(job.state.next_run_at),
        last_run_at_ms: ms(job.state.last_run_at),
        last_status: status_of(job.state.last_status) as i32,
        last_error: job.state.last_error.clone().unwrap_or_default(),
        runs: job.state.runs,
        missed_runs: job.state.missed_runs,
        running: job.state.running.is_some(),
        created_at_ms: job.created_at.as_millisecond(),
        updated_at_ms: job.updated_at.as_millisecond(),
        running_slot_ms: ms(job.state.running.as_ref().map(|c| c.slot)),
        running_claimed_at_ms: ms(job.state.running.as_ref().map(|c| c.claimed_at)),
        id: job.id,
        agent_id: job.agent_id,
    }
}

/// A RunCronJob answer.
pub(crate) fn outcome(outcome: RunOutcome) -> pb::RunCronJobResponse {
    pb::RunCronJobResponse {
        status: status_of(Some(outcome.status)) as i32,
        error: outcome.error.unwrap_or_default(),
        session_key: outcome.session_key.unwrap_or_default(),
    }
}

// The other way, for calls forwarded to the replica that owns an agent's jobs.

/// The AddCronJob spec for `spec` ([`spec_of`] reads it back).
pub(crate) fn spec_pb(spec: &JobSpec) -> pb::CronJobSpec {
    let (schedule, tz) = schedule_text(&spec.schedule);
    let (deliver, deliver_to) = delivery_pb(&spec.delivery);
    pb::CronJobSpec {
        name: spec.name.clone(),
        schedule,
        tz,
        prompt: spec.prompt.clone(),
        target: target_pb(spec.target) as i32,
        lightweight: spec.lightweight,
        deliver,
        deliver_to,
        delete_after_run: spec.delete_after_run,
        enabled: Some(spec.enabled),
    }
}

/// `deliver` and `deliver_to` for a delivery ([`delivery_of`] the other way).
fn delivery_pb(delivery: &Delivery) -> (bool, String) {
    match delivery {
        Delivery::None => (false, String::new()),
        Delivery::Session { session_key } => (true, session_key.clone().unwrap_or_default()),
    }
}

fn target_pb(target: Target) -> pb::CronTarget {
    match target {
        Target::Isolated => pb::CronTarget::Isolated,
        Target::Main => pb::CronTarget::Main,
    }
}

/// The UpdateCronJob patch for `patch` ([`patch_of`] reads it back).
pub(crate) fn patch_pb(patch: &JobPatch) -> pb::CronJobPatch {
    let schedule = patch.schedule.as_ref().map(schedule_text);
    let delivery = patch.delivery.as_ref().map(delivery_pb);
    pb::CronJobPatch {
        name: patch.name.clone(),
        tz: schedule.as_ref().map(|(_, tz)| tz.clone()),
        schedule: schedule.map(|(text, _)| text),
        prompt: patch.prompt.clone(),
        target: patch.target.map_or(pb::CronTarget::Unspecified, target_pb) as i32,
        deliver: delivery.as_ref().map(|(deliver, _)| *deliver),
        deliver_to: delivery.and_then(|(_, to)| (!to.is_empty()).then_some(to)),
        delete_after_run: patch.delete_after_run,
        enabled: patch.enabled,
        lightweight: patch.lightweight,
    }
}

fn timestamp(ms: i64, field: &str) -> Result<Option<jiff::Timestamp>, Status> {
    if ms == 0 {
        return Ok(None);
    }
    jiff::Timestamp::from_millisecond(ms)
        .map(Some)
        .map_err(|e| invalid(field, e))
}

fn run_status_of(status: i32) -> Option<RunStatus> {
    match pb::CronRunStatus::try_from(status) {
        Ok(pb::CronRunStatus::Ok) => Some(RunStatus::Ok),
        Ok(pb::CronRunStatus::Error) => Some(RunStatus::Error),
        Ok(pb::CronRunStatus::Skipped) => Some(RunStatus::Skipped),
        Ok(pb::CronRunStatus::Unspecified) | Err(_) => None,
    }
}

/// A job as the API gave it ([`job`] the other way).
pub(crate) fn job_of(job: pb::CronJob) -> Result<Job, Status> {
    let spec = spec_of(job.spec)?;
    let running = match (
        job.running,
        timestamp(job.running_slot_ms, "running_slot_ms")?,
        timestamp(job.running_claimed_at_ms, "running_claimed_at_ms")?,
    ) {
        (true, Some(slot), Some(claimed_at)) => Some(openclaw_cron::Claim { slot, claimed_at }),
        _ => None,
    };
    Ok(Job {
        id: job.id,
        agent_id: job.agent_id,
        spec,
        // Not sent over the API: the replica that owns the job keeps it and enforces it.
        privilege: openclaw_cron::Privilege::Host,
        created_at: timestamp(job.created_at_ms, "created_at_ms")?.unwrap_or_default(),
        updated_at: timestamp(job.updated_at_ms, "updated_at_ms")?.unwrap_or_default(),
        state: openclaw_cron::JobState {
            next_run_at: timestamp(job.next_run_at_ms, "next_run_at_ms")?,
            running,
            last_run_at: timestamp(job.last_run_at_ms, "last_run_at_ms")?,
            last_status: run_status_of(job.last_status),
            last_error: (!job.last_error.is_empty()).then_some(job.last_error),
            missed_runs: job.missed_runs,
            runs: job.runs,
        },
    })
}

/// A RunCronJob answer as the cron crate's outcome ([`outcome`] the other way).
pub(crate) fn outcome_of(response: pb::RunCronJobResponse) -> RunOutcome {
    RunOutcome {
        status: run_status_of(response.status).unwrap_or(RunStatus::Error),
        error: (!response.error.is_empty()).then_some(response.error),
        session_key: (!response.session_key.is_empty()).then_some(response.session_key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_round_trip_through_their_text() {
        for (text, tz) in [
            ("0 9 * * MON-FRI", "Europe/Berlin"),
            ("every 90s", ""),
            ("every 1500ms", ""),
            ("every 2h", ""),
            ("at 2026-12-24T17:00:00Z", ""),
        ] {
            let schedule = schedule_of(text, tz, "spec").unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(schedule_text(&schedule), (text.to_owned(), tz.to_owned()));
        }
        let err = schedule_of("every 5m", "Europe/Berlin", "spec").unwrap_err();
        assert_eq!(err.code(), tonic::Code::InvalidArgument);
        assert!(err.message().starts_with("spec.tz:"), "{}", err.message());
        let err = schedule_of("every 5 fortnights", "", "spec").unwrap_err();
        assert!(
            err.message().starts_with("spec.schedule:"),
            "{}",
            err.message()
        );
    }

    #[test]
    fn jobs_specs_patches_and_outcomes_cross_the_api_both_ways() {
        let at = |ms: i64| jiff::Timestamp::from_millisecond(ms).unwrap_or_default();
        let spec = JobSpec {
            name: "standup".into(),
            schedule: schedule_of("0 9 * * MON-FRI", "Europe/Berlin", "spec")
                .unwrap_or_else(|e| panic!("{e}")),
            prompt: "Summarise the night.".into(),
            target: Target::Isolated,
            lightweight: true,
            delivery: Delivery::Session {
                session_key: Some("agent:main:main".into()),
            },
            delete_after_run: Some(false),
            enabled: false,
        };
        assert_eq!(spec_of(Some(spec_pb(&spec))).ok(), Some(spec.clone()));
        let job = Job {
            id: "j1".into(),
            agent_id: "main".into(),
            spec,
            privilege: openclaw_cron::Privilege::Host,
            created_at: at(1_000),
            updated_at: at(2_000),
            state: openclaw_cron::JobState {
                next_run_at: Some(at(3_000)),
                running: Some(openclaw_cron::Claim {
                    slot: at(2_500),
                    claimed_at: at(2_600),
                }),
                last_run_at: Some(at(1_500)),
                last_status: Some(RunStatus::Error),
                last_error: Some("model down".into()),
                missed_runs: 2,
                runs: 5,
            },
        };
        assert_eq!(job_of(super::job(job.clone())).ok(), Some(job));

        let patch = JobPatch {
            schedule: Some(Schedule::Every {
                every_ms: 90_000,
                anchor: None,
            }),
            target: Some(Target::Main),
            delivery: Some(Delivery::None),
            enabled: Some(true),
            ..JobPatch::default()
        };
        assert_eq!(patch_of(Some(patch_pb(&patch))).ok(), Some(patch));

        let run = RunOutcome {
            status: RunStatus::Skipped,
            error: Some("disabled".into()),
            session_key: None,
        };
        assert_eq!(outcome_of(outcome(run.clone())), run);
    }
}
