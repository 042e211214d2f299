//! What a run needs from the shared services: deciding the session, model and tools
//! before the run starts, and the small services the loop and the tools call.

use std::{
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use openclaw_config::resolve::AgentRuntime;
use openclaw_proto::prompt::v1 as pb;
use openclaw_providers::ResolvedModel;
use openclaw_tools::{Tool, ToolContext, ToolRegistry};
use openclaw_transcript::{SessionEntry, SessionKey, Usage};
use openclaw_workspace::{BootstrapFile, Confined};

use tokio_util::sync::CancellationToken;

use super::{
    DEFAULT_RUN_TIMEOUT, RunSpec,
    controls::{ConfigFileControl, SessionControls},
    kind_of, millis, sender_allowed,
};
use crate::{
    config_state::Loaded,
    error::RuntimeError,
    prompt_input::{self, ToolDescriptor, TurnChannel, TurnPrompt, TurnSources},
    services::Services,
    sessions::Session,
    sessions::{NewSession, SessionKind, SessionTarget, key},
};

mod prompt;

pub use prompt::Preview;
pub(crate) use prompt::prompt_error;

/// An admitted message's session, with its index entry and the config it
/// was checked against.
pub(crate) struct Admitted {
    pub session: Arc<Session>,
    pub entry: Arc<SessionEntry>,
    pub loaded: Arc<Loaded>,
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

impl Services {
    /// Checks a message and opens its session, refusing before anything is
    /// written: an empty message, an unknown or blocked agent, a sender
    /// outside the channel's allowlist, a bad session key.
    pub(crate) async fn admit(&self, spec: &RunSpec) -> Result<Admitted, RuntimeError> {
        if spec.message.trim().is_empty() {
            return Err(RuntimeError::invalid("message", "must not be empty"));
        }
        let loaded = self.loaded_config()?;
        let agent = self.usable_agent(&spec.agent_id)?;
        // a sender outside a configured allowlist is refused and
        // recorded nowhere.
        if !spec.channel.channel.is_empty()
            && !sender_allowed(&loaded.config, &spec.channel.channel, &spec.sender_id)
        {
            return Err(RuntimeError::PermissionDenied(format!(
                "sender {:?} is not in channels.{}.allowFrom",
                spec.sender_id, spec.channel.channel
            )));
        }
        let key = key::normalize(&agent.id, &spec.session_key)?;
        let cwd = self.session_workspace(&agent, &key).await?;
        // A sandboxed session whose sandbox cannot be made is refused before the message is
        // accepted, so nothing is recorded that no run could answer.
        self.session_isolation(&agent, &key, &cwd)?;
        let meta = NewSession {
            channel: (!spec.channel.channel.is_empty()).then(|| spec.channel.channel.clone()),
            chat_type: (!spec.channel.chat_type.is_empty()).then(|| spec.channel.chat_type.clone()),
            display_name: None,
        };
        let (info, _) = self.sessions().create(&agent, &key, &cwd, meta).await?;
        let session = self.sessions().open(&agent, &info, &cwd).await?;
        Ok(Admitted {
            session: Arc::new(session),
            entry: info.entry,
            loaded,
        })
    }

    /// The model and tools of a run that starts now: the run's override,
    /// else the session's, else the agent's, else the default.
    pub(crate) async fn run_model(
        &self,
        session: &Session,
        run_override: Option<&str>,
    ) -> Result<RunModel, RuntimeError> {
        let loaded = self.loaded_config()?;
        let entry = self.index_entry(&session.agent.id, &session.key).await?;
        let model = self.choose_model(
            &loaded,
            &session.agent,
            run_override,
            entry.as_ref().and_then(|e| e.model_override.as_deref()),
        )?;
        let tools = self.tools_for(&loaded, &session.agent, &model, session.kind);
        Ok(RunModel {
            name: format!("{}/{}", model.reference.provider, model.reference.model),
            default_model: session.agent.model.clone().unwrap_or_default(),
            tools: Arc::new(tools),
            model,
        })
    }

    /// Run override > session override > agent model > configured default.
    /// A Codex agent's model is not looked up among our providers: Codex
    /// calls it, and the model id part is the Codex model slug.
    pub(crate) fn choose_model(
        &self,
        loaded: &Loaded,
        agent: &openclaw_config::resolve::AgentView,
        run: Option<&str>,
        session: Option<&str>,
    ) -> Result<ResolvedModel, RuntimeError> {
        let wanted = run
            .filter(|m| !m.trim().is_empty())
            .or(session)
            .or(agent.model.as_deref())
            .map(str::to_owned)
            .or_else(|| {
                loaded
                    .config
                    .default_model()
                    .map(|m| format!("{}/{}", m.provider, m.model))
            });
        let Some(wanted) = wanted else {
            return Err(RuntimeError::FailedPrecondition(
                "no model is configured: set agents.defaults.model and define its provider under models.providers (the offline `scripted` provider needs no account)".to_owned(),
            ));
        };
        if let AgentRuntime::Codex(_) = agent.runtime {
            return super::codex::codex_model(&loaded.config, &wanted);
        }
        self.providers()?
            .resolve(&wanted)
            .map_err(|e| RuntimeError::FailedPrecondition(format!("model {wanted:?}: {e}")))
    }

    fn tools_for(
        &self,
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
        )
    }

    /// The tool context of a run: file tools confined to the session's
    /// working directory. A workspace that cannot be confined fails the run.
    pub(crate) fn tool_context(
        self: &Arc<Self>,
        p: &Session,
        run: &RunModel,
        cancel: CancellationToken,
    ) -> Result<ToolContext, RuntimeError> {
        let model = run.name.as_str();
        let workspace =
            Arc::new(Confined::new(&p.cwd).map_err(crate::workspaces::workspace_error)?);
        let session = Arc::new(SessionControls {
            services: Arc::clone(self),
            agent_id: p.agent.id.clone(),
            key: p.key.clone(),
            model: model.to_owned(),
            default_model: run.default_model.clone(),
        });
        let config = Arc::new(ConfigFileControl {
            services: Arc::clone(self),
        });
        let mut ctx = ToolContext::new(workspace, session, config);
        ctx.agent_id = p.agent.id.clone();
        ctx.session_key = p.key.as_str().to_owned();
        ctx.processes = Arc::clone(&p.live.processes);
        // Background commands that end on their own come back to this session (see
        // `super::system`); the first run that can start one installs the sink.
        ctx.processes.set_exit_sink(Arc::new(super::ExitWakeups {
            services: Arc::downgrade(self),
            agent_id: p.agent.id.clone(),
            session_key: p.key.as_str().to_owned(),
        }));
        ctx.model = model.to_owned();
        ctx.cancel = cancel;
        let loaded = self.loaded_config().ok();
        ctx.timezone = loaded
            .as_ref()
            .and_then(|l| l.config.prompt_settings(&p.agent.id).user_timezone);
        // Exec approvals (tools.exec): without a loadable config, the default
        // policy (allowlist, on-miss, deny) applies.
        if let Some(l) = &loaded {
            ctx.exec_policy = openclaw_tools::ExecPolicy::from_config(&l.config, &p.agent.id)
                .with_allowlist(self.exec_approvals().patterns(&p.agent.id));
        }
        // One fence key per session keeps fenced history byte-identical
        // across runs (prompt caching).
        ctx.fence = p.live.fence.clone();
        ctx.subagents = super::subagents::control(self, &p.agent.id, &p.key);
        // The jobs a session creates get its privilege: a sandboxed session cannot schedule
        // work into an unsandboxed one.
        let privilege = if crate::workspaces::sandboxed(&p.agent, &p.key) {
            openclaw_cron::Privilege::Sandboxed
        } else {
            openclaw_cron::Privilege::Host
        };
        ctx.cron = match self.cron_forward() {
            Some(forward) => forward(&p.agent.id, privilege),
            None => Arc::new(super::AgentCron::new(self, &p.agent.id, privilege)),
        };
        ctx.sandbox = self
            .session_isolation(&p.agent, &p.key, &p.cwd)?
            .map(Arc::new);
        ctx.hidden_env = self.hidden_env();
        ctx.redactor = self.redactor().clone();
        Ok(ctx)
    }

    /// The [`Approver`](openclaw_tools::Approver) of a run: asks a person through the
    /// service's approvals while anyone follows the session (a Run stream, a watcher).
    pub(crate) fn approver(
        &self,
        s: &Session,
        out: &super::Emitter,
    ) -> Arc<dyn openclaw_tools::Approver> {
        let live = Arc::downgrade(&s.live);
        let timeout = self
            .loaded_config()
            .ok()
            .map_or(crate::approvals::DEFAULT_TIMEOUT, |l| {
                approval_timeout(&l.config)
            });
        Arc::new(super::RunApprover {
            approvals: Arc::clone(self.approvals()),
            out: out.clone(),
            agent_id: s.agent.id.clone(),
            session_key: s.key.as_str().to_owned(),
            run: out.run(),
            timeout,
            followed: Arc::new(move || live.upgrade().is_some_and(|l| l.followers() > 0)),
            clock: Arc::clone(self.clock()),
        })
    }

    /// The workspace bootstrap files, read now.
    pub(crate) async fn bootstrap_files(
        &self,
        cwd: &Path,
    ) -> Result<Vec<BootstrapFile>, RuntimeError> {
        let cwd = cwd.to_path_buf();
        tokio::task::spawn_blocking(move || openclaw_workspace::load_bootstrap_files(&cwd))
            .await
            .map_err(|e| RuntimeError::Internal(format!("file task failed: {e}")))?
            .map_err(crate::workspaces::workspace_error)
    }

    /// How long one run may take (`agents.defaults.timeoutSeconds`).
    pub(crate) fn run_timeout(&self) -> Duration {
        self.loaded_config()
            .ok()
            .and_then(|l| {
                l.config
                    .raw()
                    .agents
                    .as_ref()
                    .and_then(|a| a.defaults.as_ref())
                    .and_then(|d| d.timeout_seconds)
            })
            .map_or(DEFAULT_RUN_TIMEOUT, Duration::from_secs)
    }

    /// Milliseconds since the epoch, from the services' clock.
    pub(crate) fn now_ms(&self) -> i64 {
        millis(self.clock().now())
    }

    /// Adds a turn's usage to the index and touches the timestamps (written
    /// behind the run; see `sessions::touches`).
    pub(crate) fn record_turn(
        &self,
        agent: &openclaw_config::resolve::AgentView,
        key: &SessionKey,
        usage: &Usage,
    ) {
        self.sessions().record_turn(
            agent,
            key,
            crate::sessions::TurnDelta {
                input: usage.input,
                output: usage.output,
                total: usage.total_tokens,
                at: self.now_ms(),
                ..crate::sessions::TurnDelta::default()
            },
        );
    }

    /// Counts a compaction and a memory flush in the index (written behind
    /// the run, like turn usage).
    pub(crate) fn record_compaction(
        &self,
        agent: &openclaw_config::resolve::AgentView,
        key: &SessionKey,
        compactions: u64,
        memory_flush_at: Option<i64>,
    ) {
        self.sessions().record_turn(
            agent,
            key,
            crate::sessions::TurnDelta {
                at: self.now_ms(),
                compactions,
                memory_flush_at,
                ..crate::sessions::TurnDelta::default()
            },
        );
    }

    /// A session's `/reasoning` setting, if it has one (an unreadable index reads as none: the
    /// agent's default applies).
    pub(crate) async fn session_reasoning(
        &self,
        agent_id: &str,
        key: &SessionKey,
    ) -> Option<prompt_render::ReasoningLevel> {
        let entry = self.index_entry(agent_id, key).await.ok().flatten()?;
        crate::prompt_input::reasoning_of(entry.reasoning_level.as_deref())
    }

    /// The index entry of a session.
    pub(crate) async fn index_entry(
        &self,
        agent_id: &str,
        key: &SessionKey,
    ) -> Result<Option<Arc<SessionEntry>>, RuntimeError> {
        let agent = self.agent_view(agent_id)?;
        match self
            .sessions()
            .lookup(&agent, &SessionTarget::Key(key.as_str().to_owned()))
            .await
        {
            Ok(info) => Ok(Some(info.entry)),
            Err(RuntimeError::SessionNotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sets (or with `None` / `"default"` clears) a session's model override
    /// after checking that the model resolves. Returns the model
    /// now in effect.
    pub(crate) async fn set_model_override(
        &self,
        agent_id: &str,
        key: &SessionKey,
        model: Option<String>,
    ) -> Result<String, RuntimeError> {
        let agent = self.agent_view(agent_id)?;
        let model =
            model.filter(|m| !m.trim().is_empty() && !m.trim().eq_ignore_ascii_case("default"));
        let loaded = self.loaded_config()?;
        let effective = self.choose_model(&loaded, &agent, None, model.as_deref())?;
        let stored = model.map(|_| {
            format!(
                "{}/{}",
                effective.reference.provider, effective.reference.model
            )
        });
        self.sessions()
            .update_entry(&agent, key, move |entry| entry.model_override = stored)
            .await?;
        Ok(format!(
            "{}/{}",
            effective.reference.provider, effective.reference.model
        ))
    }

    /// Replaces `openclaw.json` atomically (temp file + fsync + rename) and
    /// reloads it. The caller has validated the text.
    pub(crate) fn write_config(&self, text: &str) -> Result<(), RuntimeError> {
        let path = &self.settings().config_path;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut temp = tempfile::NamedTempFile::new_in(dir)
            .map_err(|e| RuntimeError::Internal(format!("cannot write the config: {e}")))?;
        std::io::Write::write_all(&mut temp, text.as_bytes())
            .and_then(|()| temp.as_file().sync_all())
            .map_err(|e| RuntimeError::Internal(format!("cannot write the config: {e}")))?;
        temp.persist(path)
            .map_err(|e| RuntimeError::Internal(format!("cannot replace the config: {e}")))?;
        tracing::info!(path = %path.display(), "config rewritten by the gateway tool; reloading");
        self.reload();
        Ok(())
    }
}

/// `tools.exec.approvalTimeoutSec` (legacy `tools.bash`), at least one second.
pub(crate) fn approval_timeout(config: &openclaw_config::Config) -> Duration {
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
