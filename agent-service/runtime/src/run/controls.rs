//! The runtime's side of the tools that act on it: `session_status` (the
//! status card and the per-session model override, R-15), the
//! gateway's config operations (reading and writing `openclaw.json`), and the tool context
//! that hands a run's tools these and the subagent, cron and background-command controls.

use std::sync::Arc;

use openclaw_tools::{ConfigControl, SessionControl, StatusCard, Usage};

use openclaw_tools::ToolContext;
use openclaw_workspace::Confined;
use tokio_util::sync::CancellationToken;

use super::run_context::RunModel;
use crate::{error::RuntimeError, services::Services, sessions::Session};

/// One session's controls.
pub struct SessionControls {
    pub(crate) services: Arc<Services>,
    pub(crate) agent_id: String,
    pub(crate) key: openclaw_transcript::SessionKey,
    /// The model in effect for the run, provider/model.
    pub(crate) model: String,
    /// The agent's configured model.
    pub(crate) default_model: String,
}

#[async_trait::async_trait]
impl SessionControl for SessionControls {
    async fn status(&self) -> StatusCard {
        let entry = self
            .services
            .index_entry(&self.agent_id, &self.key)
            .await
            .ok()
            .flatten();
        StatusCard {
            model: self.model.clone(),
            default_model: Some(self.default_model.clone()),
            model_override: entry.as_ref().and_then(|e| e.model_override.clone()),
            usage: entry
                .as_ref()
                .map(|e| Usage {
                    input_tokens: e.input_tokens,
                    output_tokens: e.output_tokens,
                    cache_read_tokens: 0,
                })
                .unwrap_or_default(),
            context_tokens: None,
            context_window: self.services.loaded_config().ok().map(|loaded| {
                let (provider, model) = self.model.split_once('/').unwrap_or(("", &self.model));
                crate::compaction::Budget::resolve(loaded.config.raw(), provider, model).window
            }),
            compactions: entry.as_ref().map_or(0, |e| e.compaction_count),
            thinking: entry.as_ref().and_then(|e| e.thinking_level.clone()),
            queue_mode: entry.as_ref().and_then(|e| e.queue_mode.clone()),
            extra: vec![("session".to_owned(), self.key.as_str().to_owned())],
        }
    }

    async fn set_model_override(&self, model: Option<String>) -> Result<String, String> {
        super::prepare::set_model_override(&self.services, &self.agent_id, &self.key, model)
            .await
            .map_err(|e| e.to_string())
    }
}

/// The config file, for the gateway tool.
pub struct ConfigFileControl {
    pub(crate) services: Arc<Services>,
}

impl ConfigControl for ConfigFileControl {
    fn read(&self) -> Result<String, String> {
        match std::fs::read_to_string(&self.services.settings().config_path) {
            Ok(text) => Ok(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(format!("cannot read the config file: {e}")),
        }
    }

    fn write(&self, text: &str) -> Result<(), String> {
        self.services.write_config(text).map_err(|e| e.to_string())
    }
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
    ctx.processes
        .set_exit_sink(Arc::new(super::system::ExitWakeups {
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
        ctx.exec_policy = l
            .exec_policy(&p.agent.id)
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
        None => Arc::new(super::crons::AgentCron::new(
            services,
            &p.agent.id,
            privilege,
        )),
    };
    ctx.sandbox = services
        .session_isolation(&p.agent, &p.key, &p.cwd)?
        .map(Arc::new);
    ctx.hidden_env = services.hidden_env();
    ctx.redactor = services.redactor().clone();
    Ok(ctx)
}
