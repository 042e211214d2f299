//! A cron job: what runs, where, and its run bookkeeping.

use jiff::{Timestamp, tz::TimeZone};
use serde::{Deserialize, Serialize};

use crate::{InvalidJob, Schedule, schedule::Compiled};

/// Where a due job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Target {
    /// Its own session `agent:<id>:cron:<job id>`: the minimal prompt (a cron session's kind),
    /// the job's prompt as the user message.
    #[default]
    Isolated,
    /// A system event in the agent's main session, through its queue like any message.
    Main,
}

/// The privilege a job runs with: that of whoever created it (or last changed it, when that
/// was less). A job never runs in, nor delivers to, a session of more privilege: the model in
/// a sandboxed session cannot schedule work into an unsandboxed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Privilege {
    /// Created from a sandboxed session (or before privileges were recorded): runs only
    /// where commands run sandboxed.
    Sandboxed,
    /// Created by the operator (the API) or an unsandboxed session: runs anywhere.
    Host,
}

impl Privilege {
    /// The name the jobs file and messages use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sandboxed => "sandboxed",
            Self::Host => "host",
        }
    }
}

/// Where an isolated run's result goes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "camelCase", deny_unknown_fields)]
pub enum Delivery {
    /// Only recorded (the cron session's transcript and the job's last run).
    #[default]
    None,
    /// Also pushed into a session as a system event (`sessionKey`; default: the main one).
    #[serde(rename_all = "camelCase")]
    Session {
        /// The session to deliver to; unset: the agent's main session.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_key: Option<String>,
    },
}

/// What a caller gives to create a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobSpec {
    /// A short name for listings; default: the first words of the prompt.
    #[serde(default)]
    pub name: String,
    /// When it runs.
    pub schedule: Schedule,
    /// The scheduled prompt (isolated) or system event text (main).
    pub prompt: String,
    /// Where it runs.
    #[serde(default)]
    pub target: Target,
    /// Lightweight: the run gets exactly the scheduled prompt and none of the workspace
    /// context (isolated runs only).
    #[serde(default)]
    pub lightweight: bool,
    /// Where an isolated run's result goes.
    #[serde(default)]
    pub delivery: Delivery,
    /// Remove the job after its one run (`at` schedules; default true for them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_after_run: Option<bool>,
    /// Off: kept, never due.
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// Changes to a job; unset fields stay.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobPatch {
    /// New name.
    pub name: Option<String>,
    /// New schedule (the next run is computed again).
    pub schedule: Option<Schedule>,
    /// New prompt.
    pub prompt: Option<String>,
    /// New target.
    pub target: Option<Target>,
    /// New lightweight flag.
    pub lightweight: Option<bool>,
    /// New delivery.
    pub delivery: Option<Delivery>,
    /// New delete-after-run flag.
    pub delete_after_run: Option<bool>,
    /// Enable or disable.
    pub enabled: Option<bool>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RunStatus {
    /// The run finished.
    Ok,
    /// The run failed (the error is kept).
    Error,
    /// The run was not started (the agent is gone, its config invalid, ...).
    Skipped,
}

/// A finished run, as the runtime reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    /// How it ended.
    pub status: RunStatus,
    /// The error or the reason it was skipped.
    pub error: Option<String>,
    /// The session the run went to.
    pub session_key: Option<String>,
}

/// A run that was claimed (durably) and has not been reported finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    /// The slot (scheduled instant) it runs for.
    pub slot: Timestamp,
    /// When it was claimed.
    pub claimed_at: Timestamp,
}

impl Claim {
    /// The run's idempotency key, `cron:<job id>:<slot in ms>`: the runtime tags the message
    /// it queues with it, so after a crash it can tell whether the run was handed over.
    pub fn event_id(&self, job_id: &str) -> String {
        format!("cron:{job_id}:{}", self.slot.as_millisecond())
    }
}

/// A job's run bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobState {
    /// The next slot; `None`: never again (a one-shot that ran, or disabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_at: Option<Timestamp>,
    /// A run claimed and not yet reported finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<Claim>,
    /// The slot of the last finished run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_at: Option<Timestamp>,
    /// How it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status: Option<RunStatus>,
    /// Its error, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Slots that passed while the service was down and were folded into one run.
    #[serde(default)]
    pub missed_runs: u64,
    /// Finished runs.
    #[serde(default)]
    pub runs: u64,
}

/// A cron job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    /// Chosen by the store; stable.
    pub id: String,
    /// The agent it belongs to.
    pub agent_id: String,
    /// What the caller asked for.
    #[serde(flatten)]
    pub spec: JobSpec,
    /// The privilege of its creator: where it may run and deliver (see [`Privilege`]).
    pub privilege: Privilege,
    /// When it was created (anchors intervals without an anchor).
    pub created_at: Timestamp,
    /// When it was last changed.
    pub updated_at: Timestamp,
    /// Run bookkeeping.
    #[serde(default)]
    pub state: JobState,
}

/// The longest prompt a job may carry.
pub const MAX_PROMPT_CHARS: usize = 20_000;

impl JobSpec {
    /// Checks the spec (the schedule compiles in `default_tz`, the prompt is not empty, ...).
    pub fn validate(&self, default_tz: &TimeZone) -> Result<Compiled, InvalidJob> {
        let compiled = self
            .schedule
            .compile(default_tz)
            .map_err(|e| InvalidJob::new("schedule", e.to_string()))?;
        if self.prompt.trim().is_empty() {
            return Err(InvalidJob::new("prompt", "must not be empty"));
        }
        let chars = self.prompt.chars().count();
        if chars > MAX_PROMPT_CHARS {
            return Err(InvalidJob::new(
                "prompt",
                format!("{chars} characters, more than the {MAX_PROMPT_CHARS} allowed"),
            ));
        }
        if self.name.chars().count() > 200 {
            return Err(InvalidJob::new("name", "longer than 200 characters"));
        }
        if self.lightweight && self.target == Target::Main {
            return Err(InvalidJob::new(
                "lightweight",
                "only isolated jobs can be lightweight (a main-session event joins its history)",
            ));
        }
        if self.target == Target::Main && self.delivery != Delivery::None {
            return Err(InvalidJob::new(
                "delivery",
                "a main-session job's event is already in the main session",
            ));
        }
        Ok(compiled)
    }
}

impl Job {
    /// A new job created at `now`, its first slot computed.
    pub fn new(
        id: String,
        agent_id: String,
        mut spec: JobSpec,
        default_tz: &TimeZone,
        now: Timestamp,
    ) -> Result<Self, InvalidJob> {
        let compiled = spec.validate(default_tz)?;
        if spec.name.trim().is_empty() {
            spec.name = default_name(&spec.prompt);
        }
        let next = if spec.enabled {
            compiled.next_after(now, now)
        } else {
            None
        };
        Ok(Self {
            id,
            agent_id,
            spec,
            privilege: Privilege::Host,
            created_at: now,
            updated_at: now,
            state: JobState {
                next_run_at: next,
                ..JobState::default()
            },
        })
    }

    /// Applies a patch at `now`; a changed schedule or enabling recomputes the next slot.
    pub fn apply(
        &mut self,
        patch: JobPatch,
        default_tz: &TimeZone,
        now: Timestamp,
    ) -> Result<(), InvalidJob> {
        let mut spec = self.spec.clone();
        let reschedule = patch.schedule.is_some() || patch.enabled.is_some();
        if let Some(v) = patch.name {
            spec.name = v;
        }
        if let Some(v) = patch.schedule {
            spec.schedule = v;
        }
        if let Some(v) = patch.prompt {
            spec.prompt = v;
        }
        if let Some(v) = patch.target {
            spec.target = v;
        }
        if let Some(v) = patch.lightweight {
            spec.lightweight = v;
        }
        if let Some(v) = patch.delivery {
            spec.delivery = v;
        }
        if let Some(v) = patch.delete_after_run {
            spec.delete_after_run = Some(v);
        }
        if let Some(v) = patch.enabled {
            spec.enabled = v;
        }
        let compiled = spec.validate(default_tz)?;
        self.spec = spec;
        self.updated_at = now;
        if reschedule {
            self.state.next_run_at = if self.spec.enabled {
                compiled.next_after(now, self.created_at)
            } else {
                None
            };
        }
        Ok(())
    }

    /// True when the job is removed after its run (`at` jobs by default).
    pub fn deletes_after_run(&self) -> bool {
        self.spec
            .delete_after_run
            .unwrap_or(matches!(self.spec.schedule, Schedule::At { .. }))
    }

    /// The session an isolated run goes to.
    pub fn isolated_session_key(&self) -> String {
        format!("agent:{}:cron:{}", self.agent_id, self.id)
    }

    /// The full key of the session its runs go to: its own for an isolated job, the agent's
    /// main session for a main-session job.
    pub fn run_session_key(&self) -> String {
        match self.spec.target {
            Target::Isolated => self.isolated_session_key(),
            Target::Main => format!("agent:{}:main", self.agent_id),
        }
    }
}

fn default_name(prompt: &str) -> String {
    let words: Vec<&str> = prompt.split_whitespace().take(6).collect();
    let name = words.join(" ");
    if name.chars().count() > 60 {
        name.chars().take(60).collect()
    } else {
        name
    }
}
