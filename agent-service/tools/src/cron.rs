//! `cron`: the model's way to schedule work for later (one-shot reminders, recurring jobs,
//! follow-ups) instead of sleeping or polling (P-7).
//!
//! The runtime owns the jobs, the scheduler and the runs; this tool turns the model's
//! arguments into calls on [`CronControl`], which the runtime implements for the calling
//! agent, so this crate never depends on the runtime.

use async_trait::async_trait;
use openclaw_cron::{Delivery, Job, JobPatch, JobSpec, Schedule, Target};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::arguments::{non_empty, parse};
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::tool::{Tool, ToolOutcome};

/// Cron operations for the calling agent; implemented by the runtime. Errors are plain
/// sentences for the model (an unknown id, a schedule that does not parse, ...).
#[async_trait]
pub trait CronControl: Send + Sync {
    /// Creates a job and returns it with its first slot.
    async fn add(&self, spec: JobSpec) -> Result<Job, String>;
    /// The agent's jobs, oldest first; an error when they cannot be read (the replica holding
    /// them does not answer), never an empty list in its place.
    async fn list(&self) -> Result<Vec<Job>, String>;
    /// Changes a job.
    async fn update(&self, id: &str, patch: JobPatch) -> Result<Job, String>;
    /// Removes a job.
    async fn remove(&self, id: &str) -> Result<Job, String>;
    /// Runs a job now (its schedule is unchanged) and returns what happened. A job whose run
    /// goes to `caller_session` (the session whose turn asks, busy with that turn) is queued
    /// there to run after the turn, and the answer says so: waiting for it would wait for the
    /// asking turn itself.
    async fn run_now(&self, id: &str, caller_session: &str) -> Result<String, String>;
}

/// A session that cannot schedule (a subagent, a test, a runtime without a scheduler).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCron;

const NO_CRON: &str = "this session cannot schedule cron jobs";

#[async_trait]
impl CronControl for NoCron {
    async fn add(&self, _spec: JobSpec) -> Result<Job, String> {
        Err(NO_CRON.to_owned())
    }

    async fn list(&self) -> Result<Vec<Job>, String> {
        Ok(Vec::new())
    }

    async fn update(&self, _id: &str, _patch: JobPatch) -> Result<Job, String> {
        Err(NO_CRON.to_owned())
    }

    async fn remove(&self, _id: &str) -> Result<Job, String> {
        Err(NO_CRON.to_owned())
    }

    async fn run_now(&self, _id: &str, _caller_session: &str) -> Result<String, String> {
        Err(NO_CRON.to_owned())
    }
}

/// `cron`: add, list, update, remove and run the agent's scheduled jobs.
#[derive(Debug, Clone, Copy, Default)]
pub struct CronTool;

#[derive(Deserialize)]
#[serde(untagged)]
enum ScheduleArg {
    Text(String),
    Object(Schedule),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CronArgs {
    action: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    schedule: Option<ScheduleArg>,
    #[serde(default)]
    tz: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    target: Option<Target>,
    #[serde(default)]
    lightweight: Option<bool>,
    #[serde(default)]
    deliver: Option<String>,
    #[serde(default)]
    deliver_to: Option<String>,
    #[serde(default)]
    delete_after_run: Option<bool>,
    #[serde(default)]
    enabled: Option<bool>,
}

const TOOL: &str = "cron";

fn invalid(detail: impl Into<String>) -> ToolError {
    ToolError::InvalidArguments {
        tool: TOOL,
        detail: detail.into(),
    }
}

impl CronArgs {
    fn schedule(&self) -> Result<Option<Schedule>, ToolError> {
        let schedule = match &self.schedule {
            None => return Ok(None),
            Some(ScheduleArg::Text(text)) => text
                .parse::<Schedule>()
                .map_err(|e| invalid(format!("schedule: {e}")))?,
            Some(ScheduleArg::Object(s)) => s.clone(),
        };
        Ok(Some(match (schedule, &self.tz) {
            (Schedule::Cron { expr, tz: None }, Some(tz)) => Schedule::Cron {
                expr,
                tz: Some(tz.trim().to_owned()),
            },
            (Schedule::Cron { .. }, Some(_)) => {
                return Err(invalid("tz: given twice (in schedule and beside it)"));
            }
            (_, Some(_)) => {
                return Err(invalid(
                    "tz: only a cron expression has a time zone (an \"at\" time carries its offset)",
                ));
            }
            (s, None) => s,
        }))
    }

    fn delivery(&self) -> Result<Option<Delivery>, ToolError> {
        match (self.deliver.as_deref().map(str::trim), &self.deliver_to) {
            (None, None) => Ok(None),
            (Some("none"), None) => Ok(Some(Delivery::None)),
            (Some("session") | None, to) => Ok(Some(Delivery::Session {
                session_key: to.as_deref().map(str::trim).map(str::to_owned),
            })),
            (Some("none"), Some(_)) => Err(invalid("deliverTo: needs deliver=session")),
            (Some(other), _) => Err(invalid(format!(
                "deliver: expected none or session, got {other:?}"
            ))),
        }
    }

    fn id(&self) -> Result<String, ToolError> {
        let id = self.id.as_deref().map(str::trim).unwrap_or_default();
        non_empty(TOOL, "id", id)?;
        Ok(id.to_owned())
    }
}

#[async_trait]
impl Tool for CronTool {
    fn name(&self) -> &'static str {
        TOOL
    }

    fn description(&self) -> String {
        "Schedule work for later: reminders, recurring jobs and follow-ups, instead of sleeping \
         or polling. action=add creates a job from a schedule (a cron expression such as \
         \"0 9 * * 1-5\", evaluated in the user's time zone unless tz is given; \"every 30m\"; \
         or \"at 2026-12-24T18:00:00+01:00\" for once) and a prompt (what the run should do). \
         By default a job runs in a session of its own (target=isolated) and its result is only \
         recorded; deliver=session also brings the result into the main session \
         (or deliverTo). target=main instead puts the prompt into the main session as a system \
         event. action=list shows the jobs with their next run; update, remove and run (now) \
         take the job's id."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": { "type": "string", "enum": ["add", "list", "update", "remove", "run"] },
                "id": { "type": "string", "description": "The job's id (update, remove, run)." },
                "name": { "type": "string", "description": "A short name for listings." },
                "schedule": { "type": "string", "description": "A cron expression, \"every <n>(s|m|h|d)\" or \"at <RFC 3339 time>\"." },
                "tz": { "type": "string", "description": "IANA time zone of a cron expression (default: the user's)." },
                "prompt": { "type": "string", "description": "What the run should do or say." },
                "target": { "type": "string", "enum": ["isolated", "main"] },
                "lightweight": { "type": "boolean", "description": "Run with the prompt alone and none of the workspace context (target isolated only)." },
                "deliver": { "type": "string", "enum": ["none", "session"], "description": "Where an isolated run's result goes besides its own session." },
                "deliverTo": { "type": "string", "description": "The session key to deliver to (default: the main session)." },
                "deleteAfterRun": { "type": "boolean", "description": "Remove the job after its run (default for \"at\" jobs)." },
                "enabled": { "type": "boolean" }
            },
            "required": ["action"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: CronArgs = parse(TOOL, arguments)?;
            let refused = |message: String| ToolError::failed(format!("cron: {message}"));
            let zone = ctx.timezone.as_deref().unwrap_or("UTC");
            match args.action.trim() {
                "add" => {
                    let schedule = args
                        .schedule()?
                        .ok_or_else(|| invalid("schedule: required for add"))?;
                    let prompt = args.prompt.as_deref().map(str::trim).unwrap_or_default();
                    non_empty(TOOL, "prompt", prompt)?;
                    let spec = JobSpec {
                        name: args.name.clone().unwrap_or_default(),
                        schedule,
                        prompt: prompt.to_owned(),
                        target: args.target.unwrap_or_default(),
                        lightweight: args.lightweight.unwrap_or(false),
                        delivery: args.delivery()?.unwrap_or_default(),
                        delete_after_run: args.delete_after_run,
                        enabled: args.enabled.unwrap_or(true),
                    };
                    let job = ctx.cron.add(spec).await.map_err(refused)?;
                    let text = format!("Scheduled {}", job_line(&job, zone));
                    Ok(ToolOutcome::ok_with(text, job_json(&job)))
                }
                "list" => {
                    let jobs = ctx.cron.list().await.map_err(refused)?;
                    let text = if jobs.is_empty() {
                        "No cron jobs.".to_owned()
                    } else {
                        let mut lines = vec![format!("{} cron job(s):", jobs.len())];
                        lines.extend(jobs.iter().map(|j| format!("- {}", job_line(j, zone))));
                        lines.join("\n")
                    };
                    let details = json!({ "jobs": jobs.iter().map(job_json).collect::<Vec<_>>() });
                    Ok(ToolOutcome::ok_with(text, details))
                }
                "update" => {
                    let id = args.id()?;
                    let patch = JobPatch {
                        name: args.name.clone(),
                        schedule: args.schedule()?,
                        prompt: args.prompt.clone(),
                        target: args.target,
                        lightweight: args.lightweight,
                        delivery: args.delivery()?,
                        delete_after_run: args.delete_after_run,
                        enabled: args.enabled,
                    };
                    if patch == JobPatch::default() {
                        return Err(invalid("update: give at least one field to change"));
                    }
                    let job = ctx.cron.update(&id, patch).await.map_err(refused)?;
                    Ok(ToolOutcome::ok_with(
                        format!("Updated {}", job_line(&job, zone)),
                        job_json(&job),
                    ))
                }
                "remove" => {
                    let id = args.id()?;
                    let job = ctx.cron.remove(&id).await.map_err(refused)?;
                    Ok(ToolOutcome::ok(format!(
                        "Removed cron job {} \"{}\".",
                        job.id, job.spec.name
                    )))
                }
                "run" => {
                    let id = args.id()?;
                    let text = ctx
                        .cron
                        .run_now(&id, &ctx.session_key)
                        .await
                        .map_err(refused)?;
                    Ok(ToolOutcome::ok(text))
                }
                other => Err(invalid(format!(
                    "action: expected add, list, update, remove or run, got {other:?}"
                ))),
            }
        };
        run.await.into()
    }
}

/// One line about a job: id, name, schedule, next run (in the user's zone), target.
pub fn job_line(job: &Job, zone: &str) -> String {
    let next = match job.state.next_run_at {
        Some(t) => match jiff::tz::TimeZone::get(zone) {
            Ok(tz) => format!(
                "next run {}",
                t.to_zoned_datetime(tz).strftime("%Y-%m-%d %H:%M %Z")
            ),
            Err(_) => format!("next run {t}"),
        },
        None if !job.spec.enabled => "disabled".to_owned(),
        None => "no further runs".to_owned(),
    };
    let target = match (job.spec.target, job.spec.lightweight) {
        (Target::Main, _) => "main session event",
        (Target::Isolated, true) => "own session, lightweight",
        (Target::Isolated, false) => "own session",
    };
    format!(
        "job {} \"{}\": {}, {next}, {target}",
        job.id,
        job.spec.name,
        job.spec.schedule.describe()
    )
}

fn job_json(job: &Job) -> Value {
    serde_json::to_value(job).unwrap_or(Value::Null)
}
