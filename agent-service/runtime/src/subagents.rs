//! Subagents (SPEC P-7, P-22, P-26, P-35): child sessions that work on one task at the same
//! time as the session that started them.
//!
//! `sessions_spawn` opens a child session `agent:<id>:subagent:<child>` (a child of a child
//! appends `:subagent:<grandchild>` to its parent's key) and hands it the task as its first
//! user message. The child's key makes it a subagent session: the prompt-service renders it in
//! minimal mode with only AGENTS.md and TOOLS.md injected, and it never sees private memory.
//! The child's run goes through the ordinary queue and driver, so it runs concurrently with
//! its parent and is stopped like any other run.
//!
//! A watcher follows the child's run to its end and pushes the outcome (the final text, or the
//! failure) into the parent session as a steered message: a parent that is mid-run takes it
//! before its next model call; an idle parent starts a run for it. Nobody polls. The message is
//! journaled like a user message, so it survives a crash between acceptance and the transcript.
//!
//! Limits (`agents.defaults.subagents`, overridable per agent under `agents.list[].subagents`):
//! `maxConcurrent` running children per agent (default 8) and `maxDepth` levels of nesting
//! (default 1: the main session may spawn, its children may not). `model` picks the children's
//! model. A refusal is a tool error the model reads.
//!
//! The registry of children lives in memory: after a restart the child sessions and their
//! transcripts remain, but `subagents list` starts empty and results of runs cut short by the
//! restart are not pushed back.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex, PoisonError},
    time::Instant,
};

use async_trait::async_trait;
use openclaw_config::raw::{AgentEntry, SubagentsConfig};
use openclaw_tools::{ChildInfo, SessionsSpawnTool, SpawnRequest, SubagentControl, SubagentsTool};
use openclaw_transcript::{SessionId, SessionKey};
use tokio::sync::mpsc;

use crate::{
    error::RuntimeError,
    prompt_input::TurnChannel,
    run::{RunEvent, RunSpec, spawn_driver, submit},
    runtime::Runtime,
    sessions::{
        SessionEvent,
        journal::Accepted,
        queue::{CollectLimits, Disposition, Inbound, QueueMode, RunOptions},
    },
};

/// Running subagents per agent unless `subagents.maxConcurrent` says otherwise.
pub const DEFAULT_MAX_CONCURRENT: u64 = 8;
/// Nesting levels unless `subagents.maxDepth` says otherwise.
pub const DEFAULT_MAX_DEPTH: u64 = 1;
/// Finished children remembered for `subagents list` (the oldest finished go first).
const KEEP_FINISHED: usize = 256;
/// Characters of a task shown in `subagents list`.
const TASK_PREVIEW_CHARS: usize = 120;

/// The subagent tools, offered to every session (tool policy still decides).
pub(crate) fn tools() -> Vec<Arc<dyn openclaw_tools::Tool>> {
    vec![Arc::new(SessionsSpawnTool), Arc::new(SubagentsTool)]
}

/// The subagent settings of one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentLimits {
    /// Running children of the agent at once.
    pub max_concurrent: u64,
    /// Nesting levels below a non-subagent session.
    pub max_depth: u64,
    /// The children's model (`provider/model` or an alias), if set.
    pub model: Option<String>,
}

impl SubagentLimits {
    /// The agent's own `subagents` block over `agents.defaults.subagents`, over the defaults.
    pub fn resolve(defaults: Option<&SubagentsConfig>, own: Option<&SubagentsConfig>) -> Self {
        let pick =
            |f: fn(&SubagentsConfig) -> Option<u64>| own.and_then(f).or(defaults.and_then(f));
        Self {
            max_concurrent: pick(|s| s.max_concurrent).unwrap_or(DEFAULT_MAX_CONCURRENT),
            max_depth: pick(|s| s.max_depth).unwrap_or(DEFAULT_MAX_DEPTH),
            model: own
                .and_then(|s| s.model.as_ref())
                .or(defaults.and_then(|s| s.model.as_ref()))
                .and_then(|m| m.primary())
                .map(str::to_owned),
        }
    }
}

/// How a child stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Running,
    Done,
    Failed,
    Killed,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Killed => "killed",
        }
    }
}

#[derive(Debug, Clone)]
struct Record {
    id: String,
    key: SessionKey,
    parent: SessionKey,
    agent_id: String,
    label: Option<String>,
    task: String,
    status: Status,
    started: Instant,
    /// The child's session id, once its session exists.
    session_id: Option<String>,
}

impl Record {
    fn info(&self) -> ChildInfo {
        ChildInfo {
            id: self.id.clone(),
            session_key: self.key.as_str().to_owned(),
            label: self.label.clone(),
            status: self.status.as_str().to_owned(),
            task: preview(&self.task),
            age_seconds: self.started.elapsed().as_secs(),
        }
    }

    fn name(&self) -> String {
        match &self.label {
            Some(label) => format!("{} ({label:?})", self.id),
            None => self.id.clone(),
        }
    }
}

/// The runtime's registry of subagents (one per runtime).
#[derive(Debug, Default)]
pub struct Subagents {
    records: Mutex<VecDeque<Record>>,
}

impl Subagents {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Record>> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a running child unless the agent already has `max` running.
    fn reserve(&self, record: Record, max: u64) -> Result<(), String> {
        let mut records = self.lock();
        let running = records
            .iter()
            .filter(|r| r.agent_id == record.agent_id && r.status == Status::Running)
            .count();
        if u64::try_from(running).unwrap_or(u64::MAX) >= max {
            return Err(format!(
                "{running} subagent(s) of agent {:?} are already running, the most allowed at \
                 once (subagents.maxConcurrent = {max}); wait for one to finish or do this \
                 work yourself",
                record.agent_id
            ));
        }
        while records.len() >= KEEP_FINISHED {
            match records.iter().position(|r| r.status != Status::Running) {
                Some(oldest) => {
                    records.remove(oldest);
                }
                None => break,
            }
        }
        records.push_back(record);
        Ok(())
    }

    fn remove(&self, key: &SessionKey) {
        self.lock().retain(|r| &r.key != key);
    }

    fn update(&self, key: &SessionKey, change: impl FnOnce(&mut Record)) -> Option<Record> {
        let mut records = self.lock();
        let record = records.iter_mut().find(|r| &r.key == key)?;
        change(record);
        Some(record.clone())
    }

    /// The child of `parent` whose id is `id`, else the newest one labelled `id`.
    fn child(&self, parent: &SessionKey, id: &str) -> Option<Record> {
        let records = self.lock();
        let mine = || records.iter().rev().filter(|r| &r.parent == parent);
        mine()
            .find(|r| r.id == id)
            .or_else(|| mine().find(|r| r.label.as_deref() == Some(id)))
            .cloned()
    }

    fn children(&self, parent: &SessionKey) -> Vec<Record> {
        self.lock()
            .iter()
            .rev()
            .filter(|r| &r.parent == parent)
            .cloned()
            .collect()
    }
}

/// How many subagent levels a session key is below its non-subagent root: `agent:a:main` is
/// 0, `agent:a:subagent:x` 1, `agent:a:subagent:x:subagent:y` 2.
pub fn depth_of(key: &SessionKey) -> u64 {
    let parts: Vec<&str> = key.as_str().split(':').collect();
    let mut rest = parts.get(2..).unwrap_or(&[]);
    let mut depth = 0;
    while let ["subagent", _, tail @ ..] = rest {
        depth += 1;
        rest = tail;
    }
    depth
}

/// The key of a new child `id` of `parent`.
fn child_key(agent_id: &str, parent: &SessionKey, id: &str) -> Result<SessionKey, String> {
    let key = if depth_of(parent) > 0 {
        format!("{}:subagent:{id}", parent.as_str())
    } else {
        format!("agent:{agent_id}:subagent:{id}")
    };
    SessionKey::new(key).map_err(|e| format!("cannot name the child session: {e}"))
}

fn preview(task: &str) -> String {
    let line = task.lines().next().unwrap_or_default().trim();
    if line.chars().count() <= TASK_PREVIEW_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(TASK_PREVIEW_CHARS).collect();
    format!("{cut}…")
}

/// The first user message of a child session.
fn task_message(parent: &SessionKey, request: &SpawnRequest) -> String {
    format!(
        "[Subagent Task] You are a subagent started by session {}. Do the task below on your \
         own and end with a reply that states the result; that reply is passed back to the \
         session that started you.\n\n{}",
        parent.as_str(),
        request.task
    )
}

/// What a finished child reports to its parent.
fn result_message(record: &Record, outcome: &Result<String, String>) -> String {
    match outcome {
        Ok(text) if text.trim().is_empty() => format!(
            "[Subagent Result] Subagent {} finished without a text reply.",
            record.name()
        ),
        Ok(text) => format!(
            "[Subagent Result] Subagent {} finished:\n\n{}",
            record.name(),
            text.trim()
        ),
        Err(message) => format!(
            "[Subagent Failed] Subagent {} failed: {message}",
            record.name()
        ),
    }
}

impl Runtime {
    /// The subagent settings of `agent_id`.
    pub fn subagent_limits(&self, agent_id: &str) -> Result<SubagentLimits, RuntimeError> {
        let loaded = self.loaded_config()?;
        let agents = loaded.config.raw().agents.as_ref();
        let defaults = agents
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.subagents.as_ref());
        let own = agents
            .and_then(|a| a.list.as_deref())
            .unwrap_or_default()
            .iter()
            .find(|a: &&AgentEntry| a.id.eq_ignore_ascii_case(agent_id))
            .and_then(|a| a.subagents.as_ref());
        Ok(SubagentLimits::resolve(defaults, own))
    }

    /// The subagent control of a run in session `parent`, for its tool context.
    pub(crate) fn subagent_control(
        self: &Arc<Self>,
        agent_id: &str,
        parent: &SessionKey,
    ) -> Arc<dyn SubagentControl> {
        Arc::new(Control {
            runtime: Arc::clone(self),
            agent_id: agent_id.to_owned(),
            parent: parent.clone(),
        })
    }
}

/// [`SubagentControl`] for the runs of one session.
struct Control {
    runtime: Arc<Runtime>,
    agent_id: String,
    parent: SessionKey,
}

#[async_trait]
impl SubagentControl for Control {
    async fn spawn(&self, request: SpawnRequest) -> Result<ChildInfo, String> {
        let rt = &self.runtime;
        let limits = rt
            .subagent_limits(&self.agent_id)
            .map_err(|e| e.to_string())?;
        let depth = depth_of(&self.parent);
        if depth >= limits.max_depth {
            return Err(format!(
                "this session is {depth} subagent level(s) deep and subagents.maxDepth is {}, \
                 so it cannot start subagents; do the work yourself",
                limits.max_depth
            ));
        }
        let id: String = SessionId::new_v4().to_string().chars().take(8).collect();
        let key = child_key(&self.agent_id, &self.parent, &id)?;
        let record = Record {
            id,
            key: key.clone(),
            parent: self.parent.clone(),
            agent_id: self.agent_id.clone(),
            label: request.label.clone(),
            task: request.task.clone(),
            status: Status::Running,
            started: Instant::now(),
            session_id: None,
        };
        rt.subagents().reserve(record, limits.max_concurrent)?;
        let spec = RunSpec {
            agent_id: self.agent_id.clone(),
            session_key: key.as_str().to_owned(),
            message: task_message(&self.parent, &request),
            model: limits.model.clone(),
            queue_mode: Some(QueueMode::Followup),
            ..RunSpec::default()
        };
        let submitted = match submit(rt, spec).await {
            Ok(submitted) => submitted,
            Err(error) => {
                rt.subagents().remove(&key);
                return Err(format!("the subagent could not start: {error}"));
            }
        };
        let session_id = submitted.session_id.clone();
        let record = rt
            .subagents()
            .update(&key, |r| r.session_id = Some(session_id))
            .ok_or_else(|| "the subagent vanished while starting".to_owned())?;
        tracing::info!(parent = %self.parent.as_str(), child = %key.as_str(), "subagent started");
        tokio::spawn(watch(Arc::clone(rt), key, submitted.follow()));
        Ok(record.info())
    }

    async fn list(&self) -> Vec<ChildInfo> {
        self.runtime
            .subagents()
            .children(&self.parent)
            .iter()
            .map(Record::info)
            .collect()
    }

    async fn steer(&self, id: &str, message: &str) -> Result<String, String> {
        let rt = &self.runtime;
        let record = self.running(id)?;
        let spec = RunSpec {
            agent_id: self.agent_id.clone(),
            session_key: record.key.as_str().to_owned(),
            message: format!("[Message from the session that started you] {message}"),
            queue_mode: Some(QueueMode::Steer),
            ..RunSpec::default()
        };
        let submitted = submit(rt, spec)
            .await
            .map_err(|e| format!("the message could not be delivered: {e}"))?;
        if !matches!(submitted.disposition, Disposition::Steered { .. }) {
            // The child's run ended just before the message arrived, so the message started
            // a new run of the child: follow that one too, so its result is pushed back.
            rt.subagents()
                .update(&record.key, |r| r.status = Status::Running);
            tokio::spawn(watch(
                Arc::clone(rt),
                record.key.clone(),
                submitted.follow(),
            ));
        }
        Ok(format!(
            "Message delivered to subagent {}; it takes it before its next step.",
            record.name()
        ))
    }

    async fn kill(&self, id: &str) -> Result<String, String> {
        let rt = &self.runtime;
        let record = self.running(id)?;
        rt.subagents()
            .update(&record.key, |r| r.status = Status::Killed);
        let session_id = record
            .session_id
            .as_deref()
            .and_then(|s| s.parse::<SessionId>().ok());
        if let Some(session_id) = session_id {
            let extras = rt.sessions().extras(&record.agent_id, &session_id);
            let dropped: Vec<u64> = {
                let mut queue = extras.queue();
                queue.cancel_active();
                queue
                    .drain_all()
                    .into_iter()
                    .flat_map(|(_, messages)| messages)
                    .map(|m| m.seq)
                    .collect()
            };
            if !dropped.is_empty()
                && let Some(journal) = extras.opened_journal()
            {
                let _ = tokio::task::spawn_blocking(move || journal.done(&dropped)).await;
            }
        }
        tracing::info!(parent = %self.parent.as_str(), child = %record.key.as_str(), "subagent killed");
        Ok(format!(
            "Subagent {} stopped; no result will be sent for it.",
            record.name()
        ))
    }
}

impl Control {
    /// The caller's child `id`, which must still be running.
    fn running(&self, id: &str) -> Result<Record, String> {
        let record = self.runtime.subagents().child(&self.parent, id).ok_or_else(|| {
            format!("this session has no subagent {id:?}; call subagents with action=list to see them")
        })?;
        if record.status != Status::Running {
            return Err(format!(
                "subagent {} is no longer running (it is {})",
                record.name(),
                record.status.as_str()
            ));
        }
        Ok(record)
    }
}

/// Follows a child's run to its end, records the outcome and pushes it to the parent.
async fn watch(runtime: Arc<Runtime>, key: SessionKey, mut events: mpsc::Receiver<SessionEvent>) {
    let mut outcome = Err("the subagent's run ended without a result".to_owned());
    while let Some(event) = events.recv().await {
        match event.event {
            RunEvent::Final { text, .. } => {
                outcome = Ok(text);
                break;
            }
            RunEvent::Error { message, .. } => {
                outcome = Err(message);
                break;
            }
            _ => {}
        }
    }
    let mut killed = false;
    let record = runtime.subagents().update(&key, |r| {
        killed = r.status == Status::Killed;
        if !killed {
            r.status = if outcome.is_ok() {
                Status::Done
            } else {
                Status::Failed
            };
        }
    });
    let Some(record) = record else { return };
    if killed {
        return;
    }
    let message = result_message(&record, &outcome);
    if let Err(error) = announce(&runtime, &record, message).await {
        tracing::warn!(%error, parent = %record.parent.as_str(), child = %key.as_str(), "could not push a subagent's result to its parent");
    }
}

/// Pushes `message` into the parent session as a steered message: taken by the parent's
/// active run before its next model call, or starting a run when the parent is idle.
async fn announce(
    runtime: &Arc<Runtime>,
    record: &Record,
    message: String,
) -> Result<(), RuntimeError> {
    if runtime.is_stopping() {
        return Err(RuntimeError::Unavailable(
            "agent-service is shutting down".to_owned(),
        ));
    }
    let admitted = runtime
        .admit(&RunSpec {
            agent_id: record.agent_id.clone(),
            session_key: record.parent.as_str().to_owned(),
            message: message.clone(),
            ..RunSpec::default()
        })
        .await?;
    let session = admitted.session;
    // A run started for the result keeps the parent's channel label.
    let channel = TurnChannel {
        channel: admitted.entry.channel.clone().unwrap_or_default(),
        chat_type: admitted.entry.chat_type.clone().unwrap_or_default(),
        ..TurnChannel::default()
    };
    let seq = session.extras.queue().next_seq();
    let accepted = Accepted {
        seq,
        text: message.clone(),
        at: runtime.now_ms(),
    };
    let journal = Arc::clone(&session.journal);
    tokio::task::spawn_blocking(move || journal.accept(&accepted))
        .await
        .map_err(|e| RuntimeError::Internal(format!("journal task failed: {e}")))?
        .map_err(|e| RuntimeError::Unavailable(format!("cannot journal the result: {e}")))?;
    let (disposition, start) = session.extras.queue().submit(
        Inbound {
            seq,
            text: message,
            channel,
            options: RunOptions::default(),
            folded: Vec::new(),
        },
        QueueMode::Steer,
        session.extras.now_ms(),
        CollectLimits::default(),
    );
    tracing::info!(parent = %record.parent.as_str(), child = %record.key.as_str(), ?disposition, "subagent result pushed to its parent");
    if let Some(start) = start {
        spawn_driver(Arc::clone(runtime), session, start);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> SessionKey {
        SessionKey::new(k).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn depth_counts_subagent_levels() {
        assert_eq!(depth_of(&key("agent:main:main")), 0);
        assert_eq!(depth_of(&key("agent:main:telegram:direct:42")), 0);
        assert_eq!(depth_of(&key("agent:main:subagent:a1")), 1);
        assert_eq!(depth_of(&key("agent:main:subagent:a1:subagent:b2")), 2);
    }

    #[test]
    fn child_keys_nest_under_subagent_parents_only() {
        let child =
            |parent: &str| child_key("main", &key(parent), "c3").map(|k| k.as_str().to_owned());
        assert_eq!(
            child("agent:main:main").as_deref(),
            Ok("agent:main:subagent:c3")
        );
        assert_eq!(
            child("agent:main:telegram:direct:42").as_deref(),
            Ok("agent:main:subagent:c3")
        );
        assert_eq!(
            child("agent:main:subagent:a1").as_deref(),
            Ok("agent:main:subagent:a1:subagent:c3")
        );
    }

    #[test]
    fn limits_take_the_agent_over_the_defaults() {
        let defaults = SubagentsConfig {
            max_concurrent: Some(3),
            max_depth: Some(2),
            ..SubagentsConfig::default()
        };
        let own = SubagentsConfig {
            max_concurrent: Some(1),
            ..SubagentsConfig::default()
        };
        let limits = SubagentLimits::resolve(Some(&defaults), Some(&own));
        assert_eq!((limits.max_concurrent, limits.max_depth), (1, 2));
        let none = SubagentLimits::resolve(None, None);
        assert_eq!(
            (none.max_concurrent, none.max_depth, none.model),
            (DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_DEPTH, None)
        );
    }
}
