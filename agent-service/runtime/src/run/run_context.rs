//! One run's context, built once when the driver admits the run: the session (agent view,
//! working directory), the message the run starts with (channel, options), the config it was
//! admitted under, the resolved model and tools, the deadline, the reasoning level and the
//! emitter. The embedded loop, the Codex turn, the compactor and the heartbeat settle read
//! these from here instead of each deriving them again from the services; the tool context of
//! the run is built from it too.
//!
//! Admission writes the run's messages into the transcript before anything that can fail, so
//! a run that fails still leaves them recorded, then announces the run (its started event).

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use openclaw_providers::ResolvedModel;
use openclaw_tools::{Tool, ToolContext, ToolRegistry};
use openclaw_transcript::{EntryBody, Message, Usage, UserContent, UserMessage};
use openclaw_workspace::Confined;
use tokio_util::sync::CancellationToken;

use super::{
    Emitter, RunEvent,
    blocks::BlockSink,
    controls::{ConfigFileControl, SessionControls},
    reply::{Delivery, DirectiveCheck},
};
use crate::{
    config_state::Loaded,
    error::RuntimeError,
    events::ReplyDirectives,
    prompt_input::ToolDescriptor,
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
    /// The session's `/reasoning` level, if it set one.
    pub reasoning: Option<prompt_render::ReasoningLevel>,
}

impl RunContext {
    /// Admits `start`: writes its messages into the transcript, resolves the run's model and
    /// tools and publishes the started event. The caller publishes the terminal event.
    pub(crate) async fn admit(
        services: Arc<Services>,
        session: Arc<Session>,
        start: RunStart,
        out: Emitter,
    ) -> Result<Self, RuntimeError> {
        let deadline = Instant::now() + services.run_timeout();
        let first = start
            .first()
            .cloned()
            .ok_or_else(|| RuntimeError::Internal(format!("run {} has no messages", start.run)))?;
        // The messages are accepted: they go into the transcript before anything
        // that can fail, so a run that fails still leaves them recorded.
        append_user(&services, &session, &start.messages).await?;
        let loaded = services.loaded_config()?;
        let model = run_model(&services, &loaded, &session, first.options.model.as_deref()).await?;
        out.emit(RunEvent::Started {
            run_id: start.run_id(),
            agent_id: session.agent.id.clone(),
            session_key: session.key.as_str().to_owned(),
            session_id: session.session_id.clone(),
            model: model.name.clone(),
            message_seqs: start.user_seqs(),
            system_events: start.system_events(),
        });
        let reasoning = services
            .session_reasoning(&session.agent.id, &session.key)
            .await;
        Ok(Self {
            services,
            session,
            start,
            first,
            out,
            loaded,
            model,
            deadline,
            reasoning,
        })
    }

    /// The tool context of the run's tool calls, cancelled by `cancel`, with the run's
    /// approver. A workspace that cannot be confined fails the run.
    pub(crate) fn tool_context(
        &self,
        cancel: CancellationToken,
    ) -> Result<ToolContext, RuntimeError> {
        let mut ctx = tool_context(&self.services, &self.session, &self.model, cancel)?;
        ctx.approver = self.approver();
        Ok(ctx)
    }

    /// The [`Approver`](openclaw_tools::Approver) of a run: asks a person through the
    /// service's approvals while anyone follows the session (a Run stream, a watcher).
    fn approver(&self) -> Arc<dyn openclaw_tools::Approver> {
        let (s, out) = (&self.session, &self.out);
        let live = Arc::downgrade(&s.live);
        let timeout = approval_timeout(&self.loaded.config);
        Arc::new(super::RunApprover {
            approvals: Arc::clone(self.services.approvals()),
            out: out.clone(),
            agent_id: s.agent.id.clone(),
            session_key: s.key.as_str().to_owned(),
            run: out.run(),
            timeout,
            followed: Arc::new(move || live.upgrade().is_some_and(|l| l.followers() > 0)),
            clock: Arc::clone(self.services.clock()),
        })
    }
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

/// The tools of a registry as the model sees them.
pub(crate) fn descriptors(tools: &ToolRegistry) -> Vec<ToolDescriptor> {
    tools
        .specs()
        .into_iter()
        .map(|(name, description, parameters)| ToolDescriptor {
            name: name.to_owned(),
            description,
            parameters,
        })
        .collect()
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
    let model = services.choose_model(
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
        crate::visibility::memory_tools(kind)
            .into_iter()
            .chain(crate::subagents::tools())
            .chain([Arc::new(openclaw_tools::CronTool) as Arc<dyn Tool>])
            .collect(),
    )
}

/// The tool context of a run: file tools confined to the session's
/// working directory. A workspace that cannot be confined fails the run.
pub(crate) fn tool_context(
    services: &Arc<Services>,
    p: &Session,
    run: &RunModel,
    cancel: CancellationToken,
) -> Result<ToolContext, RuntimeError> {
    let model = run.name.as_str();
    let workspace = Arc::new(Confined::new(&p.cwd).map_err(crate::workspaces::workspace_error)?);
    let session = Arc::new(SessionControls {
        services: Arc::clone(services),
        agent_id: p.agent.id.clone(),
        key: p.key.clone(),
        model: model.to_owned(),
        default_model: run.default_model.clone(),
    });
    let config = Arc::new(ConfigFileControl {
        services: Arc::clone(services),
    });
    let mut ctx = ToolContext::new(workspace, session, config);
    ctx.agent_id = p.agent.id.clone();
    ctx.session_key = p.key.as_str().to_owned();
    ctx.processes = Arc::clone(&p.live.processes);
    // Background commands that end on their own come back to this session (see
    // `super::system`); the first run that can start one installs the sink.
    ctx.processes.set_exit_sink(Arc::new(super::ExitWakeups {
        services: Arc::downgrade(services),
        agent_id: p.agent.id.clone(),
        session_key: p.key.as_str().to_owned(),
    }));
    ctx.model = model.to_owned();
    ctx.cancel = cancel;
    let loaded = services.loaded_config().ok();
    ctx.timezone = loaded
        .as_ref()
        .and_then(|l| l.config.prompt_settings(&p.agent.id).user_timezone);
    // Exec approvals (tools.exec): without a loadable config, the default
    // policy (allowlist, on-miss, deny) applies.
    if let Some(l) = &loaded {
        ctx.exec_policy = openclaw_tools::ExecPolicy::from_config(&l.config, &p.agent.id)
            .with_allowlist(services.exec_approvals().patterns(&p.agent.id));
    }
    // One fence key per session keeps fenced history byte-identical
    // across runs (prompt caching).
    ctx.fence = p.live.fence.clone();
    ctx.subagents = super::subagents::control(services, &p.agent.id, &p.key);
    // The jobs a session creates get its privilege: a sandboxed session cannot schedule
    // work into an unsandboxed one.
    let privilege = if crate::workspaces::sandboxed(&p.agent, &p.key) {
        openclaw_cron::Privilege::Sandboxed
    } else {
        openclaw_cron::Privilege::Host
    };
    ctx.cron = match services.cron_forward() {
        Some(forward) => forward(&p.agent.id, privilege),
        None => Arc::new(super::AgentCron::new(services, &p.agent.id, privilege)),
    };
    ctx.sandbox = services
        .session_isolation(&p.agent, &p.key, &p.cwd)?
        .map(Arc::new);
    ctx.hidden_env = services.hidden_env();
    ctx.redactor = services.redactor().clone();
    Ok(ctx)
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

/// Writes a batch of user messages as one append (one actor round trip).
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

/// `tools.exec.approvalTimeoutSec` (legacy `tools.bash`), at least one second.
fn approval_timeout(config: &openclaw_config::Config) -> Duration {
    config
        .raw()
        .tools
        .as_ref()
        .and_then(|t| {
            [t.exec.as_ref(), t.bash.as_ref()]
                .into_iter()
                .flatten()
                .find_map(|e| e.approval_timeout_sec)
        })
        .map_or(crate::approvals::DEFAULT_TIMEOUT, |secs| {
            Duration::from_secs(secs.max(1))
        })
}
