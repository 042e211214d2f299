//! `openclaw cron`: an agent's cron jobs over the API.

use openclaw_proto::agent::v1 as pb;

use crate::{
    args::CronAction,
    client::Client,
    error::CliError,
    term::{Term, columns},
};

/// Runs one `openclaw cron` action for `agent` ("" for the default).
pub async fn run(
    client: &mut Client,
    agent: &str,
    action: CronAction,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    let agent_id = agent.to_owned();
    match action {
        CronAction::List => {
            let request = client
                .main_keyed(agent, pb::ListCronJobsRequest { agent_id })
                .await?;
            let jobs = client.list_cron_jobs(request).await?.into_inner().jobs;
            if jobs.is_empty() {
                term.line("no cron jobs; add one with `openclaw cron add SCHEDULE PROMPT`")?;
                return Ok(());
            }
            let mut rows = vec![columns([
                "ID", "NAME", "SCHEDULE", "NEXT RUN", "LAST", "RUNS", "RUNS IN",
            ])];
            rows.extend(jobs.iter().map(row));
            term.table(&rows)?;
        }
        CronAction::Add {
            schedule,
            prompt,
            name,
            tz,
            main,
            lightweight,
            deliver_to,
            disabled,
        } => {
            let target = if main {
                pb::CronTarget::Main
            } else {
                pb::CronTarget::Isolated
            };
            let deliver = deliver_to.is_some();
            let deliver_to = match deliver_to.as_deref() {
                Some("main") | None => String::new(),
                Some(key) => key.to_owned(),
            };
            let request = client
                .main_keyed(
                    agent,
                    pb::AddCronJobRequest {
                        agent_id,
                        spec: Some(pb::CronJobSpec {
                            name: name.unwrap_or_default(),
                            schedule,
                            tz: tz.unwrap_or_default(),
                            prompt,
                            target: target as i32,
                            lightweight,
                            deliver,
                            deliver_to,
                            enabled: Some(!disabled),
                            ..Default::default()
                        }),
                    },
                )
                .await?;
            let job = client.add_cron_job(request).await?.into_inner();
            term.line(&format!(
                "added cron job {} ({}): next run {}",
                job.id,
                job.spec
                    .as_ref()
                    .map(|s| s.name.as_str())
                    .unwrap_or_default(),
                when(job.next_run_at_ms)
            ))?;
        }
        CronAction::Enable { id } => set_enabled(client, agent, id, true, term).await?,
        CronAction::Disable { id } => set_enabled(client, agent, id, false, term).await?,
        CronAction::Rm { id } => {
            let request = client
                .main_keyed(agent, pb::RemoveCronJobRequest { agent_id, id })
                .await?;
            let job = client.remove_cron_job(request).await?.into_inner();
            term.line(&format!("removed cron job {}", job.id))?;
        }
        CronAction::Run { id } => {
            let request = client
                .main_keyed(
                    agent,
                    pb::RunCronJobRequest {
                        agent_id,
                        id,
                        queue_only: false,
                    },
                )
                .await?;
            // Answers when the run ends: bounded by silence, not by the call timeout.
            let mut call = client.clone();
            let outcome = client.long(call.run_cron_job(request)).await?;
            let line = match outcome.status() {
                pb::CronRunStatus::Ok => format!("ran in {}: finished", outcome.session_key),
                pb::CronRunStatus::Skipped => format!("not run: {}", outcome.error),
                _ => format!("ran in {}: failed: {}", outcome.session_key, outcome.error),
            };
            term.line(&line)?;
        }
    }
    Ok(())
}

async fn set_enabled(
    client: &mut Client,
    agent: &str,
    id: String,
    enabled: bool,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    let request = client
        .main_keyed(
            agent,
            pb::UpdateCronJobRequest {
                agent_id: agent.to_owned(),
                id,
                patch: Some(pb::CronJobPatch {
                    enabled: Some(enabled),
                    ..Default::default()
                }),
            },
        )
        .await?;
    let job = client.update_cron_job(request).await?.into_inner();
    let state = if enabled {
        format!("enabled: next run {}", when(job.next_run_at_ms))
    } else {
        "disabled".to_owned()
    };
    term.line(&format!("cron job {} {state}", job.id))?;
    Ok(())
}

fn row(job: &pb::CronJob) -> Vec<String> {
    let spec = job.spec.clone().unwrap_or_default();
    let schedule = if spec.tz.is_empty() {
        spec.schedule
    } else {
        format!("{} ({})", spec.schedule, spec.tz)
    };
    let last = match job.last_status() {
        pb::CronRunStatus::Unspecified => "-".to_owned(),
        pb::CronRunStatus::Ok => "ok".to_owned(),
        pb::CronRunStatus::Error => format!("error: {}", job.last_error),
        pb::CronRunStatus::Skipped => format!("skipped: {}", job.last_error),
    };
    let next = if spec.enabled == Some(false) {
        "disabled".to_owned()
    } else if job.running {
        "running now".to_owned()
    } else {
        when(job.next_run_at_ms)
    };
    vec![
        job.id.clone(),
        spec.name,
        schedule,
        next,
        last,
        job.runs.to_string(),
        job.session_key.clone(),
    ]
}

/// An instant in ms as RFC 3339 (UTC), or "-" for none.
fn when(ms: i64) -> String {
    if ms == 0 {
        return "-".to_owned();
    }
    jiff::Timestamp::from_millisecond(ms).map_or_else(|_| ms.to_string(), |t| t.to_string())
}
