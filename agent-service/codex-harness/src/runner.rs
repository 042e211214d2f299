//! The entry point: one [`CodexRunner`] per Codex-runtime agent owns one
//! app-server process (started on first use, restarted after a crash) and
//! runs turns on it for every session of that agent.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, MutexGuard, PoisonError,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
};

use openclaw_tools::{ToolContext, ToolRegistry};
use openclaw_transcript::Message;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::{
    approvals::ApprovalRules,
    error::HarnessError,
    events::{HarnessEvent, ThreadBinding, TurnOutcome},
    history::History,
    process::AppServer,
    projection::{self, DEFAULT_PROJECTION_CHARS},
    settings::HarnessSettings,
    thread,
    turn::{self, Control},
    version::CodexVersion,
};

/// The three params objects PromptService's `RenderCodexTurn` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct CodexParams {
    /// `thread/start` params (used for a new thread and for the fallback).
    pub thread_start: Value,
    /// `thread/resume` params (`threadId` is set by the harness).
    pub thread_resume: Value,
    /// `turn/start` params (`threadId` is set by the harness).
    pub turn_start: Value,
    /// `turn/start` params for a new thread, when they differ from
    /// `turn_start`: the per-turn context the stored thread already holds
    /// is left out of `turn_start`, and a thread that replaces it needs it.
    pub new_thread_turn_start: Option<Value>,
}

impl CodexParams {
    /// Parses the `*_params_json` fields of `RenderCodexTurnResponse`.
    pub fn from_json(
        thread_start: &str,
        thread_resume: &str,
        turn_start: &str,
    ) -> Result<Self, HarnessError> {
        let parse = |field: &'static str, text: &str| {
            let value: Value =
                serde_json::from_str(text).map_err(|e| HarnessError::InvalidInput {
                    field,
                    reason: format!("is not JSON: {e}"),
                })?;
            if value.is_object() {
                Ok(value)
            } else {
                Err(HarnessError::InvalidInput {
                    field,
                    reason: "must be a JSON object".to_owned(),
                })
            }
        };
        Ok(Self {
            thread_start: parse("thread_start_params_json", thread_start)?,
            thread_resume: parse("thread_resume_params_json", thread_resume)?,
            turn_start: parse("turn_start_params_json", turn_start)?,
            new_thread_turn_start: None,
        })
    }

    /// Adds `new_thread_turn_start_params_json` (empty: the same as `turn_start`).
    pub fn with_new_thread_turn(mut self, turn_start: &str) -> Result<Self, HarnessError> {
        if turn_start.is_empty() {
            return Ok(self);
        }
        let value: Value = serde_json::from_str(turn_start)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| HarnessError::InvalidInput {
                field: "new_thread_turn_start_params_json",
                reason: "must be a JSON object".to_owned(),
            })?;
        self.new_thread_turn_start = Some(value);
        Ok(self)
    }

    /// The `turn/start` params for a thread bound as `binding`: a new thread
    /// holds none of the context an earlier turn pasted.
    pub fn turn_start_for(&self, binding: &ThreadBinding) -> &Value {
        match (binding, &self.new_thread_turn_start) {
            (ThreadBinding::Started | ThreadBinding::Replaced { .. }, Some(fresh)) => fresh,
            _ => &self.turn_start,
        }
    }
}

/// One turn to run.
#[derive(Clone)]
pub struct TurnInput {
    /// The session's stored Codex thread (`SessionEntry::codex_thread_id`).
    pub thread_id: Option<String>,
    /// The mapped params; `turn_start.input` carries the user's text.
    pub params: CodexParams,
    /// The session's transcript before this turn's user message, oldest
    /// first. Projected into the input when a new thread has to replace the
    /// stored one (or when a session with history has none yet); read only
    /// then.
    pub history: History,
    /// The run's tools after policy, answered for `item/tool/call`.
    pub tools: Arc<ToolRegistry>,
    /// The context the tools run in (workspace confinement); its cancel
    /// token interrupts the turn.
    pub tool_ctx: ToolContext,
    /// How approval requests are answered.
    pub approvals: ApprovalRules,
}

impl std::fmt::Debug for TurnInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnInput")
            .field("thread_id", &self.thread_id)
            .field("tools", &self.tools)
            .field("approvals", &self.approvals)
            .finish_non_exhaustive()
    }
}

/// One turn of a thread as Codex keeps it (see [`CodexRunner::last_turn`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedTurn {
    /// The text of each user message the turn holds (its input, then what was steered in),
    /// in order.
    pub inputs: Vec<String>,
    /// The turn's last agent message, empty when it has none.
    pub reply: String,
}

impl RecordedTurn {
    fn of(turn: &Value) -> Self {
        let mut recorded = Self::default();
        let items = turn.get("items").and_then(Value::as_array);
        for item in items.into_iter().flatten() {
            match item.get("type").and_then(Value::as_str) {
                Some("userMessage") => {
                    let parts = item.get("content").and_then(Value::as_array);
                    let text = parts
                        .into_iter()
                        .flatten()
                        .filter_map(|part| part.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n");
                    recorded.inputs.push(text);
                }
                Some("agentMessage") => {
                    if let Some(text) = item.get("text").and_then(Value::as_str) {
                        text.clone_into(&mut recorded.reply);
                    }
                }
                _ => {}
            }
        }
        recorded
    }
}

/// Runs turns on one app-server process. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct CodexRunner {
    settings: HarnessSettings,
    /// Held while a process is (re)started, never across a model or tool call.
    server: tokio::sync::Mutex<Option<Arc<AppServer>>>,
    /// Thread id → the running turn's control channel.
    active: Mutex<HashMap<String, mpsc::Sender<Control>>>,
    shut_down: AtomicBool,
    spawns: AtomicU64,
}

impl CodexRunner {
    /// A runner; the process starts with the first turn (or [`CodexRunner::start`]).
    pub fn new(settings: HarnessSettings) -> Self {
        Self {
            settings,
            server: tokio::sync::Mutex::new(None),
            active: Mutex::new(HashMap::new()),
            shut_down: AtomicBool::new(false),
            spawns: AtomicU64::new(0),
        }
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &HarnessSettings {
        &self.settings
    }

    /// Starts the process now (handshake and version check included), so a
    /// bad binary or version fails at startup rather than on the first turn.
    pub async fn start(&self) -> Result<CodexVersion, HarnessError> {
        Ok(self.server().await?.version)
    }

    /// Runs one turn: binds the session's thread (start, rejoin, resume, or
    /// replace with a projection), sends `turn/start`, streams `events`, and
    /// returns the entries to append. A turn that fails, is interrupted or
    /// loses its process still returns `Ok` with that status; `Err` means
    /// no turn ran (check [`HarnessEvent::ThreadReady`] for a thread that
    /// was created before the failure).
    #[tracing::instrument(skip_all, fields(thread_id = input.thread_id.as_deref().unwrap_or("")))]
    pub async fn run_turn(
        &self,
        input: TurnInput,
        events: mpsc::Sender<HarnessEvent>,
    ) -> Result<TurnOutcome, HarnessError> {
        let stored = input.thread_id.as_deref();
        let params = &input.params;
        let mut server = self.server().await?;
        // A thread this process has loaded is rejoined as it is; any other
        // binding may start a new thread, which needs the history projected,
        // so it is read before anything is started.
        let mut history = match stored {
            Some(id) if server.loaded(id).is_some() => None,
            _ => Some(load_history(&input.history).await?),
        };
        let bound = match thread::bind(
            &server,
            &self.settings,
            stored,
            &params.thread_resume,
            &params.thread_start,
        )
        .await
        {
            // The process died under us (between turns, say): once more on a new one.
            Err(HarnessError::ProcessExited { detail }) => {
                tracing::warn!(%detail, "the Codex app-server died before the turn; restarting it");
                server = self.server().await?;
                thread::bind(
                    &server,
                    &self.settings,
                    stored,
                    &params.thread_resume,
                    &params.thread_start,
                )
                .await?
            }
            other => other?,
        };
        let _ = events
            .send(HarnessEvent::ThreadReady {
                thread_id: bound.id.clone(),
                binding: bound.binding.clone(),
            })
            .await;
        let projection = match &bound.binding {
            ThreadBinding::Replaced { .. } | ThreadBinding::Started => {
                let history = match history.take() {
                    Some(history) => history,
                    None => load_history(&input.history).await?,
                };
                projection::project(&history, DEFAULT_PROJECTION_CHARS)
            }
            ThreadBinding::Loaded | ThreadBinding::Resumed => None,
        };
        drop(history);
        let (tx, rx) = mpsc::channel(64);
        let _active = self.register(&bound.id, tx)?;
        turn::run(
            &server,
            input,
            bound,
            projection,
            rx,
            &events,
            &self.settings,
        )
        .await
    }

    /// Queues a steer message for the turn running on `thread_id`; queued
    /// messages go out as one `turn/steer` after the debounce window. With
    /// no running turn the message is refused
    /// ([`HarnessError::NoActiveTurn`]): run it as the next turn instead.
    pub async fn steer(
        &self,
        thread_id: &str,
        text: impl Into<String>,
    ) -> Result<(), HarnessError> {
        self.control(thread_id, Control::Steer(text.into())).await
    }

    /// Interrupts the turn running on `thread_id` (`turn/interrupt`); its
    /// `run_turn` returns with [`TurnStatus::Interrupted`](crate::TurnStatus).
    pub async fn interrupt(&self, thread_id: &str) -> Result<(), HarnessError> {
        self.control(thread_id, Control::Interrupt).await
    }

    /// The last turn of `thread_id` as Codex recorded it (`thread/read` with its turns):
    /// what it was given and what it answered. After a crash this tells whether the messages
    /// of a turn that was in flight reached the thread, so they are not sent twice.
    pub async fn last_turn(&self, thread_id: &str) -> Result<Option<RecordedTurn>, HarnessError> {
        let server = self.server().await?;
        let result = server
            .conn
            .request(
                "thread/read",
                serde_json::json!({"threadId": thread_id, "includeTurns": true}),
            )
            .await?;
        Ok(result
            .get("thread")
            .and_then(|t| t.get("turns"))
            .and_then(Value::as_array)
            .and_then(|turns| turns.last())
            .map(RecordedTurn::of))
    }

    /// Whether a turn runs on `thread_id`.
    pub fn is_running(&self, thread_id: &str) -> bool {
        self.lock_active().contains_key(thread_id)
    }

    /// Closes the app-server's stdin, waits for it to exit, kills it after
    /// the grace period. Later turns fail with [`HarnessError::ShutDown`].
    pub async fn shutdown(&self) {
        self.shut_down.store(true, Ordering::SeqCst);
        let server = self.server.lock().await.take();
        if let Some(server) = server {
            server.shutdown().await;
        }
    }

    /// The running app-server's process id, if one runs.
    pub async fn child_pid(&self) -> Option<u32> {
        let guard = self.server.lock().await;
        guard
            .as_ref()
            .filter(|s| s.is_alive())
            .and_then(|s| s.pid())
    }

    /// How many app-server processes were started (1 + restarts).
    pub fn spawns(&self) -> u64 {
        self.spawns.load(Ordering::Relaxed)
    }

    async fn control(&self, thread_id: &str, control: Control) -> Result<(), HarnessError> {
        let sender = self.lock_active().get(thread_id).cloned();
        let no_turn = || HarnessError::NoActiveTurn {
            thread_id: thread_id.to_owned(),
        };
        let sender = sender.ok_or_else(no_turn)?;
        sender.send(control).await.map_err(|_| no_turn())
    }

    /// The live app-server, started or restarted as needed.
    async fn server(&self) -> Result<Arc<AppServer>, HarnessError> {
        if self.shut_down.load(Ordering::SeqCst) {
            return Err(HarnessError::ShutDown);
        }
        let mut guard = self.server.lock().await;
        if let Some(server) = guard.as_ref().filter(|s| s.is_alive()) {
            return Ok(Arc::clone(server));
        }
        if let Some(dead) = guard.take() {
            tracing::warn!(pid = dead.pid(), "restarting the Codex app-server");
            dead.kill();
        }
        let server = AppServer::start(&self.settings).await?;
        self.spawns.fetch_add(1, Ordering::Relaxed);
        *guard = Some(Arc::clone(&server));
        Ok(server)
    }

    fn lock_active(&self) -> MutexGuard<'_, HashMap<String, mpsc::Sender<Control>>> {
        self.active.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn register(
        &self,
        thread_id: &str,
        tx: mpsc::Sender<Control>,
    ) -> Result<ActiveTurn<'_>, HarnessError> {
        let mut active = self.lock_active();
        if active.contains_key(thread_id) {
            return Err(HarnessError::TurnActive {
                thread_id: thread_id.to_owned(),
            });
        }
        active.insert(thread_id.to_owned(), tx);
        Ok(ActiveTurn {
            runner: self,
            thread_id: thread_id.to_owned(),
        })
    }
}

async fn load_history(history: &History) -> Result<Vec<Message>, HarnessError> {
    history
        .load()
        .await
        .map_err(|detail| HarnessError::History { detail })
}

/// Removes the control channel when the turn ends, however it ends.
struct ActiveTurn<'a> {
    runner: &'a CodexRunner,
    thread_id: String,
}

impl Drop for ActiveTurn<'_> {
    fn drop(&mut self) {
        self.runner.lock_active().remove(&self.thread_id);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_recorded_turn_holds_its_inputs_and_last_reply() {
        let turn = json!({"id": "u", "status": "interrupted", "items": [
            {"type": "userMessage", "id": "1", "content": [
                {"type": "text", "text": "first", "text_elements": []},
                {"type": "image", "url": "x"},
            ]},
            {"type": "agentMessage", "id": "2", "text": "Looking."},
            {"type": "dynamicToolCall", "id": "3", "tool": "read"},
            {"type": "userMessage", "id": "4", "content": [{"type": "text", "text": "steered"}]},
            {"type": "agentMessage", "id": "5", "text": "Done."},
        ]});
        assert_eq!(
            RecordedTurn::of(&turn),
            RecordedTurn {
                inputs: vec!["first".to_owned(), "steered".to_owned()],
                reply: "Done.".to_owned(),
            }
        );
        assert_eq!(RecordedTurn::of(&json!({})), RecordedTurn::default());
    }
}
