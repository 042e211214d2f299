//! The cron scheduler (see [`crate::cron`]): wakes at the earliest due job (or when jobs
//! change), claims the due ones durably, hands each to its session through the queue, and
//! records how the run ended.
//!
//! Exactly once across a crash: a run is claimed in the jobs file before its message is
//! queued, and finished after the run ends. A claim still open at start-up is resolved by
//! looking for the job's message in its session: found (the message was queued, so the
//! journal or the transcript has it), the run counts as interrupted and is not repeated;
//! not found, the claim is released and the job runs again for the same slot.

use std::{sync::Arc, sync::Weak, time::Duration};

use async_trait::async_trait;
use jiff::{Timestamp, tz::TimeZone};
use openclaw_config::resolve::AgentView;
use openclaw_cron::{
    Delivery, InvalidJob, Job, JobPatch, JobSpec, Privilege, RunOutcome, RunStatus, Target,
    plan::{self, After},
};
use openclaw_transcript::{Message, UserContent, UserMessage};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::{
    RunEvent, follow_run,
    system::{SystemEvent, deliver},
};
use crate::{
    error::RuntimeError,
    origin::Origin,
    services::Services,
    sessions::{SessionKind, SessionTarget, queue::QueueMode},
};

/// The longest the scheduler sleeps before looking again (a wall clock that jumps is noticed
/// within this).
const MAX_SLEEP: Duration = Duration::from_secs(30);

/// The session a job's run goes to.
fn session_key(job: &Job) -> String {
    match job.spec.target {
        Target::Isolated => job.isolated_session_key(),
        Target::Main => String::new(),
    }
}

/// The message a job's run starts with: the scheduled prompt itself, byte for byte, in its
/// own session; in the main session, under a label saying which job it is (it joins a
/// conversation).
fn message_of(job: &Job) -> String {
    match job.spec.target {
        Target::Isolated => job.spec.prompt.clone(),
        Target::Main => format!(
            "[Cron Job Due] Job \"{}\" ({}) is due:\n{}",
            job.spec.name, job.id, job.spec.prompt
        ),
    }
}

fn outcome(status: RunStatus, error: Option<String>, session_key: Option<String>) -> RunOutcome {
    RunOutcome {
        status,
        error,
        session_key,
    }
}

/// The privilege commands have in session `key`: host unless the sandbox covers it.
fn session_privilege(agent: &AgentView, key: &openclaw_transcript::SessionKey) -> Privilege {
    if crate::workspaces::sandboxed(agent, key) {
        Privilege::Sandboxed
    } else {
        Privilege::Host
    }
}

/// Why a job of `privilege` may not run where `spec` says (`job_key`: its isolated session)
/// or deliver where it says, if it may not: a session of more privilege than the job's is out
/// of its reach. An agent with no sandbox at all has no sandboxed session, so nothing there
/// is out of reach (the jobs of an older jobs file, whose creators are unknown, keep running).
fn out_of_reach(
    agent: &AgentView,
    spec: &JobSpec,
    job_key: &str,
    privilege: Privilege,
) -> Result<(), RuntimeError> {
    if privilege == Privilege::Host || agent.sandbox.mode == openclaw_config::raw::SandboxMode::Off
    {
        return Ok(());
    }
    let run_key = match spec.target {
        Target::Isolated => job_key.to_owned(),
        Target::Main => String::new(),
    };
    let mut reached = vec![("target", run_key)];
    if let Delivery::Session { session_key } = &spec.delivery {
        reached.push(("delivery", session_key.clone().unwrap_or_default()));
    }
    for (field, key) in reached {
        let key = crate::sessions::key::normalize(&agent.id, &key)?;
        if session_privilege(agent, &key) > privilege {
            return Err(RuntimeError::PermissionDenied(format!(
                "job.{field}: {} runs unsandboxed, and this job has the privilege of a \
                 sandboxed session (it was created or changed from one, or before privileges \
                 were recorded): a job never runs in or delivers to a session with more \
                 privilege than its creator (use target \"isolated\" without delivery, or ask \
                 the operator to create it through the API)",
                key.as_str()
            )));
        }
    }
    Ok(())
}

/// A job's run handed to its session.
struct Queued {
    /// The session's key.
    session: String,
    /// The session's events, and the run that takes the message.
    events: crate::sessions::SessionEvents,
    run: u64,
    seq: u64,
}

/// Queues `job`'s message in its session (a follow-up: after whatever runs there); an
/// outcome instead when it was not queued.
async fn queue_cron_job(services: &Arc<Services>, job: &Job) -> Result<Queued, RunOutcome> {
    let key = session_key(job);
    // Judged again at run time: the config (which sessions are sandboxed) may have changed.
    let reach = services.agent_view(&job.agent_id).and_then(|agent| {
        out_of_reach(
            &agent,
            &job.spec,
            &job.isolated_session_key(),
            job.privilege,
        )
    });
    if let Err(error) = reach {
        return Err(outcome(RunStatus::Skipped, Some(error.to_string()), None));
    }
    // A system event (see `super::system`): a follow-up, after whatever runs there.
    let mut event = SystemEvent::new(
        Origin::Cron {
            job_id: job.id.clone(),
        },
        message_of(job),
        QueueMode::Followup,
    );
    // A lightweight run (isolated jobs only: the spec check refuses it for main) gets the
    // scheduled prompt without the workspace context.
    event.options.lightweight = job.spec.lightweight && job.spec.target == Target::Isolated;
    let delivered = match deliver(services, &job.agent_id, &key, event, false).await {
        Ok(Some(delivered)) => delivered,
        Ok(None) => return Err(outcome(RunStatus::Skipped, None, None)),
        Err(error) => return Err(outcome(RunStatus::Skipped, Some(error.to_string()), None)),
    };
    let session = delivered.session.key.as_str().to_owned();
    let Some(run) = delivered.disposition.run() else {
        let why = format!("the message was not queued: {}", delivered.disposition);
        return Err(outcome(RunStatus::Skipped, Some(why), Some(session)));
    };
    Ok(Queued {
        session,
        events: delivered.events,
        run,
        seq: delivered.seq,
    })
}

/// Runs `job` once now: queues its message in its session (a follow-up: after whatever runs
/// there) and waits for the run to end; then delivers an isolated run's reply when the job
/// asks for it.
pub(crate) async fn run_cron_job(services: &Arc<Services>, job: &Job) -> RunOutcome {
    match queue_cron_job(services, job).await {
        Ok(queued) => finish_cron_run(services, job, queued).await,
        Err(outcome) => outcome,
    }
}

/// Waits for a queued run of `job` to end, then delivers an isolated run's reply when the job
/// asks for it.
async fn finish_cron_run(services: &Arc<Services>, job: &Job, queued: Queued) -> RunOutcome {
    let session = Some(queued.session);
    let mut events = follow_run(queued.events, Some(queued.run), queued.seq, false);
    let mut result = Err("the run ended without a final answer".to_owned());
    while let Some(event) = events.recv().await {
        match event.event {
            RunEvent::Final { reply, .. } => result = Ok(reply),
            RunEvent::Error { code, message } => result = Err(format!("{code}: {message}")),
            _ => {}
        }
    }
    let reply = match result {
        Ok(reply) => reply,
        Err(error) => return outcome(RunStatus::Error, Some(error), session),
    };
    if let (Target::Isolated, Delivery::Session { session_key }) =
        (job.spec.target, &job.spec.delivery)
        && !reply.trim().is_empty()
    {
        let event = SystemEvent::new(
            Origin::Cron {
                job_id: job.id.clone(),
            },
            format!(
                "[Cron Job Result] Job \"{}\" ({}) finished:\n{reply}",
                job.spec.name, job.id
            ),
            QueueMode::Followup,
        );
        let target = session_key.clone().unwrap_or_default();
        if let Err(error) = deliver(services, &job.agent_id, &target, event, false).await {
            let why = format!("the run finished but its result was not delivered: {error}");
            return outcome(RunStatus::Error, Some(why), session);
        }
    }
    outcome(RunStatus::Ok, None, session)
}

/// A run queued in the calling session, in a line (the `cron` tool's `run` action).
pub fn describe_queued(session: &str) -> String {
    format!(
        "queued in {session}, this session: it runs after this turn (waiting for it here would \
         wait for this very turn)"
    )
}

/// How a run ended, in a line (the `cron` tool's `run` action).
pub fn describe_cron_outcome(outcome: &RunOutcome) -> String {
    let session = outcome.session_key.as_deref().unwrap_or("no session");
    match (outcome.status, &outcome.error) {
        (RunStatus::Ok, _) => format!("ran in {session}: finished"),
        (RunStatus::Error, error) => format!(
            "ran in {session}: failed: {}",
            error.as_deref().unwrap_or("unknown error")
        ),
        (RunStatus::Skipped, error) => {
            format!("not run: {}", error.as_deref().unwrap_or("unknown reason"))
        }
    }
}

/// Starts the scheduler (the first call only), after resolving the claims a previous process
/// left open. It stops when shutdown begins.
pub(crate) fn start_cron(services: &Arc<Services>) {
    if !services.cron().claim_start() {
        return;
    }
    let services = Arc::clone(services);
    tokio::spawn(async move {
        resolve_claims(&services).await;
        let (stop, changed) = (services.cron().stop_token(), services.cron().changes());
        let weak = Arc::downgrade(&services);
        drop(services);
        schedule(weak, stop, changed).await;
    });
}

/// Whether this replica schedules `job`: the one that owns the session its runs go to (its
/// isolated session, which lives with the agent's main session, or that main session). With
/// several replicas sharing a schedule (a jobs file copied or shared, or jobs made before the
/// router) every replica sees the job, and only its owner runs it: exactly once, and never
/// in a session another replica owns.
fn scheduled_here(services: &Services, job: &Job) -> bool {
    services.owns(&job.run_session_key())
}

/// Claims open at start-up: see the module comment. A claim of a job another replica owns is
/// that replica's to resolve.
async fn resolve_claims(services: &Arc<Services>) {
    let open: Vec<Job> = services.cron().read(|store| {
        store
            .jobs()
            .filter(|j| scheduled_here(services, j))
            .filter(|j| j.state.running.is_some())
            .cloned()
            .collect()
    });
    for job in open {
        let handed = match handed_over(services, &job).await {
            Ok(handed) => handed,
            Err(error) => {
                // Unknown: releasing could double the run, finishing could lose it. Keep the
                // claim (the job is not due meanwhile) and say so.
                tracing::error!(job = %job.id, agent = %job.agent_id, %error, "cannot tell whether an interrupted cron run was handed over; the job stays claimed");
                continue;
            }
        };
        let (tz, now) = (time_zone(services, &job.agent_id), now(services));
        let done = services.cron().edit(|store| {
            let Some(stored) = store.get_mut(&job.id) else {
                return Ok(());
            };
            if handed {
                let interrupted = outcome(
                    RunStatus::Error,
                    Some("interrupted by a restart of agent-service".to_owned()),
                    Some(session_key(&job)),
                );
                if plan::finish(stored, &interrupted, &tz, now).ok() == Some(After::Remove) {
                    store.remove(&job.id);
                }
            } else {
                plan::release(stored);
            }
            Ok(())
        });
        match done {
            Ok(()) => {
                tracing::warn!(job = %job.id, agent = %job.agent_id, handed_over = handed, "resolved a cron run a restart interrupted: {}", if handed { "its message had reached the session, so it is not repeated" } else { "it never reached its session, so it runs again" })
            }
            Err(error) => tracing::error!(job = %job.id, %error, "cannot save the cron jobs file"),
        }
    }
}

/// Whether the job's claimed run reached its session: its message is in the session's
/// transcript, written at or after the claim (journals are recovered before the scheduler
/// starts, so an acknowledged message is in the transcript by now).
async fn handed_over(services: &Arc<Services>, job: &Job) -> Result<bool, RuntimeError> {
    let Some(claim) = &job.state.running else {
        return Ok(false);
    };
    let agent = services.agent_view(&job.agent_id)?;
    let target = SessionTarget::Key(session_key(job));
    let info = match services.sessions().get(&agent, &target).await {
        Ok(info) => info,
        Err(RuntimeError::SessionNotFound(_)) => return Ok(false),
        Err(error) => return Err(error),
    };
    let cwd = services.session_workspace(&agent, &info.key).await?;
    let session = services.sessions().open(&agent, &info, &cwd).await?;
    let text = message_of(job);
    let since = claim.claimed_at.as_millisecond();
    Ok(session.live.messages().await?.into_iter().any(|m| {
        matches!(m, Message::User(UserMessage { content: UserContent::Text(t), timestamp })
            if t == text && timestamp >= since)
    }))
}

/// The scheduler loop; ends at shutdown or when the services are gone.
async fn schedule(services: Weak<Services>, stop: CancellationToken, changed: Arc<Notify>) {
    loop {
        let Some(rt) = services.upgrade() else { return };
        if rt.is_stopping() {
            return;
        }
        let now = now(&rt);
        let here = |job: &&Job| scheduled_here(&rt, job);
        let any_due = rt
            .cron()
            .read(|store| !plan::due(store.jobs().filter(here), now).is_empty());
        if any_due {
            let claimed = rt.cron().edit(|store| {
                let mut claimed = Vec::new();
                for due in plan::due(store.jobs().filter(here), now) {
                    if let Some(job) = store.get_mut(&due.job_id) {
                        plan::claim(job, due.slot, now);
                        claimed.push(job.clone());
                    }
                }
                Ok(claimed)
            });
            match claimed {
                Ok(jobs) => {
                    for job in jobs {
                        tokio::spawn(run_claimed(Arc::clone(&rt), job));
                    }
                }
                Err(error) => {
                    tracing::error!(%error, "cannot save the cron jobs file; due jobs wait");
                }
            }
        }
        let next = rt
            .cron()
            .read(|store| plan::next_wake(store.jobs().filter(here)));
        // Not held while waiting: the services may go away meanwhile.
        drop(rt);
        let wait = next
            .map(|at| {
                let ms = at.as_millisecond().saturating_sub(now.as_millisecond());
                Duration::from_millis(u64::try_from(ms).unwrap_or(0))
            })
            .unwrap_or(MAX_SLEEP)
            .min(MAX_SLEEP);
        tokio::select! {
            () = stop.cancelled() => return,
            () = changed.notified() => {}
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// Runs a claimed job and records how it ended.
async fn run_claimed(services: Arc<Services>, job: Job) {
    tracing::info!(job = %job.id, agent = %job.agent_id, name = %job.spec.name, "cron job due");
    let outcome = run_cron_job(&services, &job).await;
    let (tz, now) = (time_zone(&services, &job.agent_id), now(&services));
    let recorded = services.cron().edit(|store| {
        let Some(stored) = store.get_mut(&job.id) else {
            // Removed while it ran.
            return Ok(());
        };
        match plan::finish(stored, &outcome, &tz, now) {
            Ok(After::Remove) => {
                store.remove(&job.id);
            }
            Ok(After::Keep) => {}
            Err(invalid) => {
                // Its schedule no longer compiles (a time zone removed from the config, say):
                // it stops rather than failing every tick.
                stored.spec.enabled = false;
                stored.state.next_run_at = None;
                stored.state.last_error = Some(format!("disabled: {invalid}"));
            }
        }
        Ok(())
    });
    match (&outcome.status, recorded) {
        (_, Err(error)) => {
            tracing::error!(job = %job.id, %error, "cron run ended but the jobs file could not be saved");
        }
        (RunStatus::Ok, Ok(())) => tracing::info!(job = %job.id, "cron run finished"),
        (_, Ok(())) => {
            tracing::warn!(job = %job.id, outcome = %describe_cron_outcome(&outcome), "cron run did not finish")
        }
    }
}

/// Counts a run on demand in the job's bookkeeping, as a scheduled run is counted
/// ([`plan::record_on_demand`]); a job removed meanwhile is left removed.
fn record_on_demand(services: &Services, job: &Job, outcome: &RunOutcome) {
    let now = now(services);
    let recorded = services.cron().edit(|store| {
        if let Some(stored) = store.get_mut(&job.id) {
            plan::record_on_demand(stored, outcome, now);
        }
        Ok(())
    });
    if let Err(error) = recorded {
        tracing::error!(job = %job.id, %error, "cron run on demand ended but the jobs file could not be saved");
    }
}

/// A job's spec or patch that was refused, naming the field.
pub(crate) fn invalid(error: InvalidJob) -> RuntimeError {
    RuntimeError::invalid(format!("job.{}", error.field), error.reason)
}

/// The time zone cron expressions of `agent_id` are read in: the agent's `userTimezone`,
/// else UTC.
pub(crate) fn time_zone(services: &Services, agent_id: &str) -> TimeZone {
    services
        .loaded_config()
        .ok()
        .and_then(|l| l.config.prompt_settings(agent_id).user_timezone)
        .and_then(|name| TimeZone::get(&name).ok())
        .unwrap_or(TimeZone::UTC)
}

/// Now on the runtime's clock.
pub(crate) fn now(services: &Services) -> Timestamp {
    let ms = openclaw_transcript::unix_millis(services.clock().now());
    Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// The jobs of one agent, as its sessions' `cron` tool and the API see them, with the
/// privilege of the caller (the API: host; a session's tool: its own).
#[derive(Clone)]
pub struct AgentCron {
    services: Weak<Services>,
    agent_id: String,
    privilege: Privilege,
}

impl AgentCron {
    pub(crate) fn new(services: &Arc<Services>, agent_id: &str, privilege: Privilege) -> Self {
        Self {
            services: Arc::downgrade(services),
            agent_id: agent_id.to_owned(),
            privilege,
        }
    }

    /// The caller's privilege, which the jobs it creates get.
    pub fn privilege(&self) -> Privilege {
        self.privilege
    }

    fn services(&self) -> Result<Arc<Services>, RuntimeError> {
        self.services
            .upgrade()
            .ok_or_else(|| RuntimeError::Unavailable("the runtime is shutting down".to_owned()))
    }

    /// The agent.
    pub fn agent_id(&self) -> &str {
        &self.agent_id
    }

    /// Behind a router (several replicas) a job's result may go only to a session that lives
    /// on this replica with the job: the agent's main session or one of its cron sessions,
    /// which the router sends where the main session is.
    fn check_delivery(&self, services: &Services, delivery: &Delivery) -> Result<(), RuntimeError> {
        let Delivery::Session {
            session_key: Some(key),
        } = delivery
        else {
            return Ok(());
        };
        if services.cron_forward().is_none() {
            return Ok(());
        }
        let key = crate::sessions::key::normalize(&self.agent_id, key)?;
        match crate::sessions::key::kind_of(&key) {
            SessionKind::Main | SessionKind::Cron => Ok(()),
            _ => Err(RuntimeError::invalid(
                "job.delivery",
                format!(
                    "{} may live on another replica: with several replicas behind a router a \
                     job delivers to its agent's main session or one of its cron sessions, \
                     which live with its jobs",
                    key.as_str()
                ),
            )),
        }
    }

    /// Creates a job; returns it with its first slot.
    pub fn add(&self, spec: JobSpec) -> Result<Job, RuntimeError> {
        let services = self.services()?;
        self.check_delivery(&services, &spec.delivery)?;
        let agent = services.agent_view(&self.agent_id)?;
        let new_key = format!("agent:{}:cron:new", self.agent_id);
        out_of_reach(&agent, &spec, &new_key, self.privilege)?;
        let (tz, now) = (time_zone(&services, &self.agent_id), now(&services));
        services.cron().edit(|store| {
            let id = store
                .add(&self.agent_id, spec, &tz, now)
                .map_err(invalid)?
                .id
                .clone();
            let job = store.get_mut(&id).ok_or_else(|| self.not_found(&id))?;
            job.privilege = self.privilege;
            Ok(job.clone())
        })
    }

    /// The agent's jobs, oldest first.
    pub fn list(&self) -> Result<Vec<Job>, RuntimeError> {
        let services = self.services()?;
        Ok(services.cron().read(|store| {
            store
                .list(Some(&self.agent_id))
                .into_iter()
                .cloned()
                .collect()
        }))
    }

    /// One of the agent's jobs.
    pub fn get(&self, id: &str) -> Result<Job, RuntimeError> {
        let services = self.services()?;
        services
            .cron()
            .read(|store| {
                store
                    .get(id)
                    .filter(|j| j.agent_id == self.agent_id)
                    .cloned()
            })
            .ok_or_else(|| self.not_found(id))
    }

    /// Changes one of the agent's jobs.
    pub fn update(&self, id: &str, patch: JobPatch) -> Result<Job, RuntimeError> {
        let services = self.services()?;
        if let Some(delivery) = &patch.delivery {
            self.check_delivery(&services, delivery)?;
        }
        let agent = services.agent_view(&self.agent_id)?;
        let (tz, now) = (time_zone(&services, &self.agent_id), now(&services));
        services.cron().edit(|store| {
            let Some(current) = store.get(id).filter(|j| j.agent_id == self.agent_id) else {
                return Err(self.not_found(id));
            };
            // A change from a session of less privilege lowers the job's to it; the job as
            // changed must stay within reach of that.
            let privilege = current.privilege.min(self.privilege);
            let mut changed = current.clone();
            changed.apply(patch.clone(), &tz, now).map_err(invalid)?;
            out_of_reach(
                &agent,
                &changed.spec,
                &changed.isolated_session_key(),
                privilege,
            )?;
            let job = store
                .update(id, patch, &tz, now)
                .map_err(invalid)?
                .ok_or_else(|| self.not_found(id))?;
            let id = job.id.clone();
            let job = store.get_mut(&id).ok_or_else(|| self.not_found(&id))?;
            job.privilege = privilege;
            Ok(job.clone())
        })
    }

    /// Removes one of the agent's jobs.
    pub fn remove(&self, id: &str) -> Result<Job, RuntimeError> {
        let services = self.services()?;
        services.cron().edit(|store| {
            if store.get(id).is_none_or(|j| j.agent_id != self.agent_id) {
                return Err(self.not_found(id));
            }
            store.remove(id).ok_or_else(|| self.not_found(id))
        })
    }

    /// Runs one of the agent's jobs now, outside its schedule, and waits for the run.
    pub async fn run_now(&self, id: &str) -> Result<openclaw_cron::RunOutcome, RuntimeError> {
        let job = self.get(id)?;
        let services = self.services()?;
        let outcome = run_cron_job(&services, &job).await;
        record_on_demand(&services, &job, &outcome);
        Ok(outcome)
    }

    /// Queues a run of one of the agent's jobs now, outside its schedule, without waiting for
    /// it: the key of the session it was queued in, or how it was not run. The rest of the
    /// run ([`Self::run_now`]'s wait and an isolated job's delivery) goes on in the background.
    pub async fn queue_now(&self, id: &str) -> Result<Result<String, RunOutcome>, RuntimeError> {
        let job = self.get(id)?;
        let services = self.services()?;
        Ok(match queue_cron_job(&services, &job).await {
            Ok(queued) => {
                let session = queued.session.clone();
                tokio::spawn(async move {
                    let outcome = finish_cron_run(&services, &job, queued).await;
                    record_on_demand(&services, &job, &outcome);
                    tracing::info!(job = %job.id, outcome = %describe_cron_outcome(&outcome), "a cron run queued without a waiter ended");
                });
                Ok(session)
            }
            Err(outcome) => Err(outcome),
        })
    }

    /// The key of the session `id`'s runs go to.
    pub fn session_of(&self, id: &str) -> Result<String, RuntimeError> {
        Ok(self.get(id)?.run_session_key())
    }

    fn not_found(&self, id: &str) -> RuntimeError {
        RuntimeError::NotFound(format!(
            "cron job {id:?}: agent {} has no such job",
            self.agent_id
        ))
    }
}

#[async_trait]
impl openclaw_tools::CronControl for AgentCron {
    async fn add(&self, spec: JobSpec) -> Result<Job, String> {
        AgentCron::add(self, spec).map_err(|e| e.to_string())
    }

    async fn list(&self) -> Result<Vec<Job>, String> {
        AgentCron::list(self).map_err(|e| e.to_string())
    }

    async fn update(&self, id: &str, patch: JobPatch) -> Result<Job, String> {
        AgentCron::update(self, id, patch).map_err(|e| e.to_string())
    }

    async fn remove(&self, id: &str) -> Result<Job, String> {
        AgentCron::remove(self, id).map_err(|e| e.to_string())
    }

    async fn run_now(&self, id: &str, caller_session: &str) -> Result<String, String> {
        let session = self.session_of(id).map_err(|e| e.to_string())?;
        if session == caller_session {
            return match self.queue_now(id).await.map_err(|e| e.to_string())? {
                Ok(session) => Ok(describe_queued(&session)),
                Err(outcome) => Ok(describe_cron_outcome(&outcome)),
            };
        }
        let outcome = AgentCron::run_now(self, id)
            .await
            .map_err(|e| e.to_string())?;
        Ok(describe_cron_outcome(&outcome))
    }
}
