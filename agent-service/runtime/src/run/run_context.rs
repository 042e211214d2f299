//! One run's context, built once when the driver admits the run (`super::drive`): the session (agent view,
//! working directory), the message the run starts with (channel, options), the config it was
//! admitted under, the resolved model and tools, the deadline, the reasoning level and the
//! emitter. The embedded loop, the Codex turn, the compactor and the heartbeat settle read
//! these from here instead of each deriving them again from the services.
//!
//! This module holds values and what computes them from the config; it starts nothing, so the
//! loop modules that read it stay out of the cycle of modules that start runs.

use std::{sync::Arc, time::Instant};

use openclaw_providers::{ResolvedModel, ToolSpec};
use openclaw_tools::{Tool, ToolContext, ToolRegistry};
use openclaw_transcript::{EntryBody, Message, Usage, UserContent, UserMessage};

use super::{
    Emitter,
    blocks::BlockSink,
    reply::{Delivery, DirectiveCheck},
};
use crate::{
    config_state::Loaded,
    error::RuntimeError,
    events::ReplyDirectives,
    services::Services,
    sessions::{
        Session, SessionKind,
        queue::{Inbound, RunStart},
    },
};

/// What one run reads, decided once when it is admitted.
pub(crate) struct RunContext {
    /// The shared services (the session index, the prompt source, the clock...).
    pub services: Arc<Services>,
    /// The session: its agent view, key, kind, working directory and live state.
    pub session: Arc<Session>,
    /// The run's number, messages and cancellation.
    pub start: RunStart,
    /// The message the run starts with: its channel and options apply to the run.
    pub first: Inbound,
    /// Publishes the run's events.
    pub out: Emitter,
    /// The config the run was admitted under.
    pub loaded: Arc<Loaded>,
    /// The model and tools of the run.
    pub model: RunModel,
    /// When the run runs out of time (`agents.defaults.timeoutSeconds`).
    pub deadline: Instant,
    /// The run's thinking level: the session's `/think` setting, else the agent's
    /// `thinkingDefault`. It goes on the prompt's Runtime line and into every model request.
    pub thinking: Option<openclaw_config::raw::ThinkingLevel>,
    /// The session's `/reasoning` level, if it set one.
    pub reasoning: Option<prompt_render::ReasoningLevel>,
    /// What the run's tool calls run in: confined to the session's working directory,
    /// cancelled with the run, asking a person through the run's approver.
    pub tools: ToolContext,
}

/// The model and tools of one run, chosen when it starts.
pub(crate) struct RunModel {
    pub model: ResolvedModel,
    /// provider/model.
    pub name: String,
    /// The agent's configured model.
    pub default_model: String,
    pub tools: Arc<ToolRegistry>,
}

/// The tools of a registry as the model sees them: the definitions the registry was built
/// with (encoded once per config load, see [`Loaded::tool_specs`]), shared, not copied.
pub(crate) fn descriptors(tools: &ToolRegistry) -> Vec<ToolSpec> {
    tools.specs()
}

/// The model and tools of a run that starts now: the run's override,
/// else the session's, else the agent's, else the default.
pub(crate) async fn run_model(
    services: &Services,
    loaded: &Loaded,
    session: &Session,
    run_override: Option<&str>,
) -> Result<RunModel, RuntimeError> {
    let entry = services
        .index_entry(&session.agent.id, &session.key)
        .await?;
    let model = super::models::choose_model(
        services,
        loaded,
        &session.agent,
        run_override,
        entry.as_ref().and_then(|e| e.model_override.as_deref()),
    )?;
    let tools = tools_for(loaded, &session.agent, &model, session.kind);
    Ok(RunModel {
        name: format!("{}/{}", model.reference.provider, model.reference.model),
        default_model: session.agent.model.clone().unwrap_or_default(),
        tools: Arc::new(tools),
        model,
    })
}

pub(crate) fn tools_for(
    loaded: &Loaded,
    agent: &openclaw_config::resolve::AgentView,
    model: &ResolvedModel,
    kind: SessionKind,
) -> ToolRegistry {
    let settings = loaded.config.prompt_settings(&agent.id);
    ToolRegistry::for_run(
        &agent.tools,
        &model.reference.provider,
        &model.reference.model,
        settings.plan_tool,
        &loaded.config.apply_patch(),
        crate::visibility::memory_tools(kind, loaded.memory(&agent.id))
            .into_iter()
            .chain(crate::subagents::tools())
            .chain([Arc::new(openclaw_tools::CronTool) as Arc<dyn Tool>])
            .collect(),
        loaded.tool_specs(),
    )
}

/// How a run ended well.
pub(crate) struct Finished {
    /// The final assistant text as written (directives included).
    pub text: String,
    pub stop_reason: String,
    pub steps: u32,
    pub usage: Usage,
    /// What the channel still has to send, directives taken out.
    pub reply: String,
    pub blocks: u32,
    /// The directives that go with `reply`.
    pub directives: ReplyDirectives,
    /// The final message was the silent token.
    pub silent: bool,
    /// The final text without directives, whole (what a heartbeat is judged by).
    pub clean: String,
}

impl Finished {
    /// A run whose final message says `text` after `steps` model calls; what block streaming
    /// already sent (text and directives) is not part of the final reply.
    pub(crate) fn of(
        text: String,
        stop_reason: String,
        steps: u32,
        usage: Usage,
        sink: Option<&BlockSink>,
        check: &DirectiveCheck,
    ) -> Self {
        let delivery = Delivery::of(&text, check);
        let clean = if delivery.silent {
            openclaw_blocks::parse_directives(&text).text
        } else {
            delivery.text.clone()
        };
        let (reply, blocks, directives) = match sink {
            _ if delivery.silent => (
                String::new(),
                sink.map_or(0, BlockSink::sent),
                delivery.directives,
            ),
            Some(sink) => (
                sink.unsent_tail(&delivery.text),
                sink.sent(),
                ReplyDirectives::default(),
            ),
            None => (delivery.text, 0, delivery.directives),
        };
        Self {
            text,
            stop_reason,
            steps,
            usage,
            reply,
            blocks,
            directives,
            silent: delivery.silent,
            clean,
        }
    }
}

/// Writes a batch of user messages as one append (one turn of the writer's lock).
pub(crate) async fn append_user(
    services: &Services,
    session: &Session,
    messages: &[Inbound],
) -> Result<Vec<Message>, RuntimeError> {
    let now = services.now_ms();
    let users: Vec<Message> = messages
        .iter()
        .map(|m| {
            Message::User(UserMessage {
                content: UserContent::Text(m.text.clone()),
                timestamp: now,
            })
        })
        .collect();
    let bodies = users
        .iter()
        .cloned()
        .map(|message| EntryBody::Message { message })
        .collect();
    session.live.append(bodies, false).await?;
    // In the transcript now: the journal lets go of them once it is fsynced.
    mark_done(session, messages);
    Ok(users)
}

/// Reports messages as in the transcript: the journal lets go of them after
/// the transcript's next fsync (the end of the run at the latest).
pub(crate) fn mark_done(s: &Session, messages: &[Inbound]) {
    s.live.written(
        messages
            .iter()
            .flat_map(|m| std::iter::once(m.seq).chain(m.folded.iter().copied())),
    );
}

/// Adds one model call's usage to a run's total.
pub(crate) fn add_usage(total: &mut Usage, usage: &Usage) {
    total.input += usage.input;
    total.output += usage.output;
    total.cache_read += usage.cache_read;
    total.cache_write += usage.cache_write;
    total.total_tokens += usage.total_tokens;
}
