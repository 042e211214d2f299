//! Subagents (P-7, P-22, P-26, P-35): child sessions that work on one task at the same
//! time as the session that started them.
//!
//! `sessions_spawn` opens a child session `<parent key>:subagent:<child>` (a child of a child
//! appends `:subagent:<grandchild>` to its parent's key, so every child names its root parent,
//! and lives on its replica behind a router) and hands it the task as its first
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
//! The registry of children is written to `<state dir>/subagents.json` on every change (spawn,
//! end, kill; temp file, fsync, rename), so a restart loses none of it. A result is recorded
//! there as pending before it is pushed, and cleared once the parent has it. At start-up
//! ([`crate::Runtime::recover_subagents`]) a child still marked running was cut short by the stop or
//! crash: its transcript decides what the parent hears (its final reply when it had finished,
//! else that it was cut short), and every pending result is pushed, unless the parent's
//! transcript already holds it (the message journal may have saved it).

use std::{
    collections::VecDeque,
    path::PathBuf,
    sync::{Arc, Mutex, PoisonError},
};

use openclaw_config::raw::{AgentEntry, SubagentsConfig};
use openclaw_tools::{ChildInfo, SessionsSpawnTool, SpawnRequest, SubagentsTool};
use openclaw_transcript::{ContentBlock, Message, SessionKey, StopReason};
use serde::{Deserialize, Serialize};

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
    /// The subagent settings of `agent_id` in `config`: its own block over the defaults'.
    pub fn of_agent(config: &openclaw_config::Config, agent_id: &str) -> Self {
        let agents = config.raw().agents.as_ref();
        let defaults = agents
            .and_then(|a| a.defaults.as_ref())
            .and_then(|d| d.subagents.as_ref());
        let own = agents
            .and_then(|a| a.list.as_deref())
            .unwrap_or_default()
            .iter()
            .find(|a: &&AgentEntry| a.id.eq_ignore_ascii_case(agent_id))
            .and_then(|a| a.subagents.as_ref());
        Self::resolve(defaults, own)
    }

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    Running,
    Done,
    Failed,
    Killed,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Killed => "killed",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub(crate) id: String,
    pub(crate) key: SessionKey,
    pub(crate) parent: SessionKey,
    pub(crate) agent_id: String,
    pub(crate) label: Option<String>,
    pub(crate) task: String,
    pub(crate) status: Status,
    /// When it was spawned (ms since the epoch).
    pub(crate) started_ms: i64,
    /// The child's session id, once its session exists.
    pub(crate) session_id: Option<String>,
    /// The result message, from the child's end until the parent has it.
    pub(crate) pending: Option<String>,
}

/// A [`Record`] as `subagents.json` keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    id: String,
    session_key: String,
    parent_key: String,
    agent_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    task: String,
    status: Status,
    started_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending_result: Option<String>,
}

/// The file: a version and the children, oldest first.
#[derive(Debug, Default, Serialize, Deserialize)]
struct RegistryFile {
    version: u32,
    children: Vec<Stored>,
}

impl Record {
    fn stored(&self) -> Stored {
        Stored {
            id: self.id.clone(),
            session_key: self.key.as_str().to_owned(),
            parent_key: self.parent.as_str().to_owned(),
            agent_id: self.agent_id.clone(),
            label: self.label.clone(),
            task: self.task.clone(),
            status: self.status,
            started_at: self.started_ms,
            session_id: self.session_id.clone(),
            pending_result: self.pending.clone(),
        }
    }

    fn from_stored(s: Stored) -> Option<Self> {
        Some(Self {
            key: SessionKey::new(s.session_key).ok()?,
            parent: SessionKey::new(s.parent_key).ok()?,
            id: s.id,
            agent_id: s.agent_id,
            label: s.label,
            task: s.task,
            status: s.status,
            started_ms: s.started_at,
            session_id: s.session_id,
            pending: s.pending_result,
        })
    }

    pub(crate) fn info(&self, now_ms: i64) -> ChildInfo {
        ChildInfo {
            id: self.id.clone(),
            session_key: self.key.as_str().to_owned(),
            label: self.label.clone(),
            status: self.status.as_str().to_owned(),
            task: preview(&self.task),
            age_seconds: u64::try_from((now_ms - self.started_ms) / 1000).unwrap_or(0),
        }
    }

    pub(crate) fn name(&self) -> String {
        match &self.label {
            Some(label) => format!("{} ({label:?})", self.id),
            None => self.id.clone(),
        }
    }
}

/// The runtime's registry of subagents (one per runtime), kept in `subagents.json`.
#[derive(Debug, Default)]
pub struct Subagents {
    records: Mutex<VecDeque<Record>>,
    /// Where the registry is written (`None`: memory only).
    path: Option<PathBuf>,
}

impl Subagents {
    /// A registry written to `path`.
    pub(crate) fn at(path: PathBuf) -> Self {
        Self {
            records: Mutex::default(),
            path: Some(path),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Record>> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes the registry (called with the lock held, so writes keep their order). Changes
    /// are rare (a spawn, an end, a kill) and the file is small; a failure is logged and the
    /// next change writes everything again.
    fn save(&self, records: &VecDeque<Record>) {
        let Some(path) = &self.path else { return };
        let file = RegistryFile {
            version: 1,
            children: records.iter().map(Record::stored).collect(),
        };
        let written = serde_json::to_vec_pretty(&file)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                openclaw_transcript::write_atomic(path, &bytes).map_err(|e| e.to_string())
            });
        if let Err(error) = written {
            tracing::warn!(path = %path.display(), %error, "could not write the subagent registry");
        }
    }

    /// Reads the registry file into memory (start-up). A missing file is an empty registry;
    /// an unreadable one is logged, moved aside as `.corrupt` and replaced.
    pub(crate) fn load(&self) -> usize {
        let Some(path) = &self.path else { return 0 };
        let text = match std::fs::read(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return 0,
            Err(error) => {
                tracing::error!(path = %path.display(), %error, "cannot read the subagent registry");
                return 0;
            }
        };
        let file: RegistryFile = match serde_json::from_slice(&text) {
            Ok(file) => file,
            Err(error) => {
                let aside = path.with_extension("json.corrupt");
                tracing::error!(path = %path.display(), %error, moved_to = %aside.display(), "the subagent registry is not valid JSON; starting empty");
                let _ = std::fs::rename(path, &aside);
                return 0;
            }
        };
        let mut records = self.lock();
        records.clear();
        records.extend(file.children.into_iter().filter_map(Record::from_stored));
        records.len()
    }

    /// Adds a running child unless the agent already has `max` running.
    pub(crate) fn reserve(&self, record: Record, max: u64) -> Result<(), String> {
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
        self.save(&records);
        Ok(())
    }

    pub(crate) fn remove(&self, key: &SessionKey) {
        let mut records = self.lock();
        records.retain(|r| &r.key != key);
        self.save(&records);
    }

    pub(crate) fn update(
        &self,
        key: &SessionKey,
        change: impl FnOnce(&mut Record),
    ) -> Option<Record> {
        let mut records = self.lock();
        let record = records.iter_mut().find(|r| &r.key == key)?;
        change(record);
        let record = record.clone();
        self.save(&records);
        Some(record)
    }

    pub(crate) fn all(&self) -> Vec<Record> {
        self.lock().iter().cloned().collect()
    }

    /// The child of `parent` whose id is `id`, else the newest one labelled `id`.
    pub(crate) fn child(&self, parent: &SessionKey, id: &str) -> Option<Record> {
        let records = self.lock();
        let mine = || records.iter().rev().filter(|r| &r.parent == parent);
        mine()
            .find(|r| r.id == id)
            .or_else(|| mine().find(|r| r.label.as_deref() == Some(id)))
            .cloned()
    }

    pub(crate) fn children(&self, parent: &SessionKey) -> Vec<Record> {
        self.lock()
            .iter()
            .rev()
            .filter(|r| &r.parent == parent)
            .cloned()
            .collect()
    }
}

/// How many subagent levels a session key is below its non-subagent root: `agent:a:main` is
/// 0, `agent:a:main:subagent:x` 1, `agent:a:main:subagent:x:subagent:y` 2 (keys made before
/// children named their parent, `agent:a:subagent:x`, count the same way).
pub fn depth_of(key: &SessionKey) -> u64 {
    let parts: Vec<&str> = key.as_str().split(':').collect();
    let rest = parts.get(2..).unwrap_or(&[]);
    let levels = rest
        .windows(2)
        .filter(|pair| pair.first() == Some(&"subagent"))
        .count();
    u64::try_from(levels).unwrap_or(u64::MAX)
}

/// The key of a new child `id` of `parent` (a session of `agent_id`): the parent's key, then
/// `:subagent:<id>`. Naming the parent puts the child on the parent's replica behind a router,
/// which routes a subagent session by the key before its first `:subagent:`.
pub(crate) fn child_key(
    agent_id: &str,
    parent: &SessionKey,
    id: &str,
) -> Result<SessionKey, String> {
    if !parent.as_str().starts_with(&format!("agent:{agent_id}:")) {
        return Err(format!(
            "cannot name the child session: {} is not a session of agent {agent_id}",
            parent.as_str()
        ));
    }
    SessionKey::new(format!("{}:subagent:{id}", parent.as_str()))
        .map_err(|e| format!("cannot name the child session: {e}"))
}

pub(crate) fn preview(task: &str) -> String {
    let line = task.lines().next().unwrap_or_default().trim();
    if line.chars().count() <= TASK_PREVIEW_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(TASK_PREVIEW_CHARS).collect();
    format!("{cut}…")
}

/// The first user message of a child session.
pub(crate) fn task_message(parent: &SessionKey, request: &SpawnRequest) -> String {
    format!(
        "[Subagent Task] You are a subagent started by session {}. Do the task below on your \
         own and end with a reply that states the result; that reply is passed back to the \
         session that started you.\n\n{}",
        parent.as_str(),
        request.task
    )
}

/// What a finished child reports to its parent.
pub(crate) fn result_message(record: &Record, outcome: &Result<String, String>) -> String {
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

/// What a child cut short by a stop or crash reports: its final reply if it had one (the
/// last message is the model's answer, with no tool call left open), else that it was cut
/// short.
pub(crate) fn outcome_after_restart(
    record: &Record,
    messages: &[Message],
) -> Result<String, String> {
    match messages.last() {
        Some(Message::Assistant(a))
            if a.stop_reason == StopReason::Stop
                && !a
                    .content
                    .iter()
                    .any(|b| matches!(b, ContentBlock::ToolCall(_))) =>
        {
            Ok(a.content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(""))
        }
        _ => Err(format!(
            "it was cut short when agent-service stopped before it finished; what it did so \
             far is in session {}",
            record.key.as_str()
        )),
    }
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
        assert_eq!(depth_of(&key("agent:main:main:subagent:a1")), 1);
        assert_eq!(depth_of(&key("agent:main:chat:subagent:a1:subagent:b2")), 2);
        // The older format, children of the agent rather than of a session.
        assert_eq!(depth_of(&key("agent:main:subagent:a1")), 1);
        assert_eq!(depth_of(&key("agent:main:subagent:a1:subagent:b2")), 2);
    }

    #[test]
    fn child_keys_name_their_parent() {
        let child =
            |parent: &str| child_key("main", &key(parent), "c3").map(|k| k.as_str().to_owned());
        assert_eq!(
            child("agent:main:main").as_deref(),
            Ok("agent:main:main:subagent:c3")
        );
        assert_eq!(
            child("agent:main:telegram:direct:42").as_deref(),
            Ok("agent:main:telegram:direct:42:subagent:c3")
        );
        assert_eq!(
            child("agent:main:main:subagent:a1").as_deref(),
            Ok("agent:main:main:subagent:a1:subagent:c3")
        );
        assert_eq!(
            child("agent:main:subagent:a1").as_deref(),
            Ok("agent:main:subagent:a1:subagent:c3")
        );
        assert!(child("agent:work:main").is_err());
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

    fn record(status: Status) -> Record {
        Record {
            id: "ab12cd34".into(),
            key: key("agent:main:subagent:ab12cd34"),
            parent: key("agent:main:main"),
            agent_id: "main".into(),
            label: Some("counter".into()),
            task: "Count the files.".into(),
            status,
            started_ms: 1_000,
            session_id: Some("0b7c3a4e-8f2d-4c1a-9e5b-2d6f8a1c3e70".into()),
            pending: None,
        }
    }

    fn assistant(content: Vec<ContentBlock>, stop: StopReason) -> Message {
        Message::Assistant(openclaw_transcript::AssistantMessage {
            content,
            provider: "p".into(),
            model: "m".into(),
            api: None,
            usage: None,
            stop_reason: stop,
            error_message: None,
            timestamp: 0,
        })
    }

    #[test]
    fn a_child_that_had_answered_reports_its_answer_after_a_restart() {
        let r = record(Status::Running);
        let done = [assistant(
            vec![ContentBlock::text("7 files.")],
            StopReason::Stop,
        )];
        assert_eq!(outcome_after_restart(&r, &done), Ok("7 files.".to_owned()));
        let open_call = [assistant(
            vec![ContentBlock::ToolCall(openclaw_transcript::ToolCall {
                id: "c1".into(),
                name: "read".into(),
                arguments: serde_json::json!({}),
            })],
            StopReason::Stop,
        )];
        let cut = outcome_after_restart(&r, &open_call).unwrap_err();
        assert!(
            cut.contains("cut short") && cut.contains("agent:main:subagent:ab12cd34"),
            "{cut}"
        );
        let errored = [assistant(
            vec![ContentBlock::text("partial")],
            StopReason::Error,
        )];
        assert!(outcome_after_restart(&r, &errored).is_err());
        assert!(outcome_after_restart(&r, &[]).is_err());
    }

    #[test]
    fn the_registry_survives_a_reload_and_a_corrupt_file_is_moved_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("subagents.json");
        let registry = Subagents::at(path.clone());
        registry.reserve(record(Status::Running), 8).unwrap();
        registry.update(&key("agent:main:subagent:ab12cd34"), |r| {
            r.status = Status::Failed;
            r.pending = Some("[Subagent Failed] x".into());
        });
        let reloaded = Subagents::at(path.clone());
        assert_eq!(reloaded.load(), 1);
        let all = reloaded.all();
        assert_eq!(all[0].status, Status::Failed);
        assert_eq!(all[0].pending.as_deref(), Some("[Subagent Failed] x"));
        assert_eq!(all[0].label.as_deref(), Some("counter"));
        assert_eq!(all[0].started_ms, 1_000);

        std::fs::write(&path, "{ not json").unwrap();
        let broken = Subagents::at(path.clone());
        assert_eq!(broken.load(), 0);
        assert!(dir.path().join("subagents.json.corrupt").exists());
        assert!(!path.exists());
    }
}
