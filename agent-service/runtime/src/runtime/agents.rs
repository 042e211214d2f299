//! The configured agents as the API reads them: their views, their skills and their runs
//! (a message handed to a session, the prompt a turn would send, a heartbeat now).

use std::sync::Arc;

use openclaw_config::resolve::AgentView;
use openclaw_skills::Discovery;
use tokio::sync::broadcast;

use crate::{
    error::RuntimeError,
    heartbeat::{HeartbeatEvent, HeartbeatOutcome},
    prompt_input::TurnChannel,
    run::{self, Preview, RunSpec, Submitted, TurnPrompt},
    services::Services,
};

/// The configured agents (see [`crate::Runtime::agents`]). Agent ids are those of the
/// config, "" for the default agent.
#[derive(Debug, Clone, Copy)]
pub struct AgentsHandle<'r> {
    services: &'r Arc<Services>,
}

impl<'r> AgentsHandle<'r> {
    pub(super) fn new(services: &'r Arc<Services>) -> Self {
        Self { services }
    }

    /// The agent view for an id.
    pub fn view(&self, agent_id: &str) -> Result<AgentView, RuntimeError> {
        self.services.agent_view(agent_id)
    }

    /// The configured agents, in config order, with the default id.
    pub fn list(&self) -> Result<(Vec<AgentView>, String), RuntimeError> {
        self.services.agents()
    }

    /// The skills of one agent (R-9, P-39).
    pub async fn skills(&self, agent_id: &str) -> Result<Arc<Discovery>, RuntimeError> {
        self.services.list_skills(agent_id).await
    }
}

/// The runs of every agent (see [`crate::Runtime::runs`]): what a message starts, what a
/// turn would send, and the heartbeat turns.
#[derive(Debug, Clone, Copy)]
pub struct RunsHandle<'r> {
    services: &'r Arc<Services>,
}

impl<'r> RunsHandle<'r> {
    pub(super) fn new(services: &'r Arc<Services>) -> Self {
        Self { services }
    }

    /// Hands a user message to its session: it starts a run, joins the active one, or
    /// waits, by its queue mode; see [`crate::run`].
    pub async fn submit(&self, spec: RunSpec) -> Result<Submitted, RuntimeError> {
        run::submit(self.services, spec).await
    }

    /// Renders one turn's system prompt: the workspace files are read now, the config knobs
    /// applied, and the request sent to the prompt source. Runs and previews both come
    /// through here, so a preview is byte-identical to what a run sends (P-3).
    pub async fn render_turn(
        &self,
        t: &TurnPrompt<'_>,
        deadline: std::time::Instant,
    ) -> Result<openclaw_proto::prompt::v1::RenderSystemPromptResponse, RuntimeError> {
        run::render_turn(self.services, t, deadline).await
    }

    /// The prompt the next model call of a session would send, without writing anything
    /// (the session need not exist).
    pub async fn preview(
        &self,
        agent_id: &str,
        session_key: &str,
        channel: &TurnChannel,
    ) -> Result<Preview, RuntimeError> {
        run::preview(self.services, agent_id, session_key, channel).await
    }

    /// Heartbeat outcomes from now on, for every agent.
    pub fn heartbeat_events(&self) -> broadcast::Receiver<HeartbeatEvent> {
        self.services.heartbeats().subscribe()
    }

    /// Runs one heartbeat of an agent now, waits for its outcome and publishes it like a
    /// scheduled one.
    pub async fn heartbeat_now(&self, agent_id: &str) -> HeartbeatOutcome {
        run::heartbeat_now(self.services, agent_id).await
    }
}
