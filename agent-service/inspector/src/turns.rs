//! Model calls seen on each session's event stream, with the prompt each one sent.
//!
//! The runtime reports every model call as a [`RunEvent::ModelCall`] carrying the stable prefix
//! hash and the stable sections that changed since the session's previous call. The observer
//! subscribes to every session it finds (and to each session the API is asked about) and keeps
//! the last [`TURNS_PER_SESSION`] calls of each, joined with the render the runtime made just
//! before (from the [`RenderLog`]). Calls made before the inspector started, or while it had not
//! subscribed yet, are not known: the transcript still shows their messages.

use std::{
    collections::{HashMap, VecDeque},
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use agent_runtime::{
    Runtime,
    run::RunEvent,
    sessions::{RecvError, SessionInfo, SessionTarget},
};
use openclaw_proto::prompt::v1 as pb;
use openclaw_transcript::Usage;

use crate::record::RenderLog;

/// Model calls kept per session (oldest dropped first).
pub const TURNS_PER_SESSION: usize = 64;

/// How often the observer looks for sessions it does not watch yet.
pub const DISCOVERY_INTERVAL: Duration = Duration::from_millis(500);

/// One observed model call.
#[derive(Debug, Clone)]
pub struct Turn {
    /// Position in the session's list since the inspector started (0-based, never reused).
    pub index: u64,
    /// When it was seen, in milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// Run number within the session.
    pub run: u64,
    /// 1-based call number within the run.
    pub step: u32,
    /// provider/model.
    pub model: String,
    /// SHA-256 of the stable prefix sent.
    pub stable_prefix_sha256: String,
    /// The runtime found the prefix changed since the session's previous call.
    pub prefix_changed: bool,
    /// Stable sections the runtime found changed.
    pub changed_sections: Vec<String>,
    /// Prompt size in characters.
    pub prompt_chars: u32,
    /// Messages sent with it.
    pub messages: u32,
    /// The provider's usage report for this call, once it arrived.
    pub usage: Option<Usage>,
    /// The prompt sent, when the render was still remembered.
    pub prompt: Option<Arc<pb::RenderSystemPromptResponse>>,
}

#[derive(Debug, Default)]
struct SessionTurns {
    turns: VecDeque<Turn>,
    next_index: u64,
}

type SessionId = (String, String);

/// Watches sessions and keeps their model calls.
#[derive(Debug)]
pub struct Observer {
    runtime: Arc<Runtime>,
    renders: Arc<RenderLog>,
    sessions: Mutex<HashMap<SessionId, Arc<Mutex<SessionTurns>>>>,
}

impl Observer {
    /// An observer of `runtime`'s sessions; prompts come from `renders`.
    pub fn new(runtime: Arc<Runtime>, renders: Arc<RenderLog>) -> Arc<Self> {
        Arc::new(Self {
            runtime,
            renders,
            sessions: Mutex::new(HashMap::new()),
        })
    }

    /// Subscribes to every session of every agent now, then every [`DISCOVERY_INTERVAL`], until
    /// the returned task is aborted.
    pub fn spawn_discovery(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let this = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(DISCOVERY_INTERVAL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                this.discover().await;
            }
        })
    }

    /// One discovery pass.
    pub async fn discover(self: &Arc<Self>) {
        let Ok((agents, _)) = self.runtime.agents().list() else {
            return;
        };
        for agent in agents {
            if let Ok(sessions) = self.runtime.sessions().list(&agent.id).await {
                for info in &sessions {
                    self.observe(info).await;
                }
            }
        }
    }

    /// Whether `info`'s current session id is watched.
    pub fn watches(&self, info: &SessionInfo) -> bool {
        let id = id_of(info);
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&id)
    }

    /// Subscribes to `info`'s events unless already subscribed.
    pub async fn observe(self: &Arc<Self>, info: &SessionInfo) {
        let id = id_of(info);
        if self.watches(info) {
            return;
        }
        let target = SessionTarget::Key(info.key.as_str().to_owned());
        let Ok(events) = self.runtime.sessions().watch(&info.agent_id, &target).await else {
            return;
        };
        let turns = {
            let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            if sessions.contains_key(&id) {
                return;
            }
            let turns = Arc::new(Mutex::new(SessionTurns::default()));
            sessions.insert(id, Arc::clone(&turns));
            turns
        };
        let renders = Arc::clone(&self.renders);
        tokio::spawn(async move {
            let mut events = events;
            loop {
                match events.recv().await {
                    Ok(event) => record(&turns, &renders, event.run, &event.event),
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => break,
                }
            }
        });
    }

    /// The model calls seen on `info`'s session, oldest first.
    pub fn turns(&self, info: &SessionInfo) -> Vec<Turn> {
        let id = id_of(info);
        let turns = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .cloned();
        turns.map_or_else(Vec::new, |t| {
            t.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .turns
                .iter()
                .cloned()
                .collect()
        })
    }
}

fn id_of(info: &SessionInfo) -> SessionId {
    (info.agent_id.clone(), info.entry.session_id.to_string())
}

fn record(turns: &Mutex<SessionTurns>, renders: &RenderLog, run: u64, event: &RunEvent) {
    let mut turns = turns.lock().unwrap_or_else(PoisonError::into_inner);
    match event {
        RunEvent::ModelCall {
            step,
            model,
            stable_prefix_sha256,
            prefix_changed,
            changed_sections,
            prompt_chars,
            messages,
        } => {
            let index = turns.next_index;
            turns.next_index += 1;
            turns.turns.push_back(Turn {
                index,
                at_ms: jiff::Timestamp::now().as_millisecond(),
                run,
                step: *step,
                model: model.clone(),
                stable_prefix_sha256: stable_prefix_sha256.clone(),
                prefix_changed: *prefix_changed,
                changed_sections: changed_sections.clone(),
                prompt_chars: *prompt_chars,
                messages: *messages,
                usage: None,
                prompt: renders.latest(stable_prefix_sha256),
            });
            while turns.turns.len() > TURNS_PER_SESSION {
                turns.turns.pop_front();
            }
        }
        RunEvent::Usage(usage) => {
            if let Some(last) = turns
                .turns
                .back_mut()
                .filter(|t| t.run == run && t.usage.is_none())
            {
                last.usage = Some(usage.clone());
            }
        }
        _ => {}
    }
}
