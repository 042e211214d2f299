//! What the agent loop works with: one value holding the config snapshot, the prompt source,
//! the model providers, the clock, the session index, the sandbox engine, the redactor and the
//! registries of Codex runners, heartbeats and subagents. [`crate::Runtime`] is the public face
//! over it; the loop (`crate::run`) takes a `Services` and never the face.

use std::{
    collections::BTreeMap,
    path::PathBuf,
    sync::{
        Arc, PoisonError, RwLock,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use openclaw_codex_harness::{CodexRunner, HarnessSettings};
use openclaw_config::{
    Loader,
    resolve::{AgentView, Dirs},
};
use openclaw_providers::{HttpSettings, ProviderRegistry, RegistryContext};
use openclaw_skills::Discovery;
use openclaw_transcript::{Clock, SessionKey};
use prompt_client::PromptSource;

use crate::{
    config_state::{self, ConfigState, Loaded},
    env::Env,
    error::RuntimeError,
    sessions::{NewSession, SessionInfo, SessionManager, SessionTarget, key},
    settings::Settings,
    workspaces::{self, WorkspaceSetup},
};

/// Everything the runtime needs from its host.
#[derive(Clone)]
pub struct RuntimeOptions {
    /// Where state and config live.
    pub settings: Settings,
    /// Environment variables (for `${VAR}` in the config, skill gates).
    pub env: Arc<dyn Env>,
    /// Wall clock for timestamps.
    pub clock: Arc<dyn Clock>,
    /// Where prompts come from (prompt-service over gRPC, or in-process).
    pub prompt: Arc<dyn PromptSource>,
    /// The bubblewrap program sandboxed sessions run their commands with (a bare name is
    /// looked up on `PATH`; `bwrap` is the usual one).
    pub sandbox_program: std::ffi::OsString,
    /// Where the resolved secrets of the config go (its `config` source is replaced on every
    /// load); share it with the log writer so log lines are redacted too.
    pub redactor: openclaw_secrets::Redactor,
}

impl RuntimeOptions {
    /// Options with the default sandbox program and a fresh redactor.
    pub fn new(
        settings: Settings,
        env: Arc<dyn Env>,
        clock: Arc<dyn Clock>,
        prompt: Arc<dyn PromptSource>,
    ) -> Self {
        Self {
            settings,
            env,
            clock,
            prompt,
            sandbox_program: DEFAULT_SANDBOX_PROGRAM.into(),
            redactor: openclaw_secrets::Redactor::new(),
        }
    }
}

impl std::fmt::Debug for RuntimeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeOptions")
            .field("settings", &self.settings)
            .field("prompt", &self.prompt.describe())
            .finish_non_exhaustive()
    }
}

/// The bubblewrap program looked up on `PATH` unless the operator names another.
pub const DEFAULT_SANDBOX_PROGRAM: &str = "bwrap";

/// What `Setup` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupOutcome {
    /// `openclaw.json` was created by this call.
    pub config_created: bool,
    /// Path of `openclaw.json`.
    pub config_path: PathBuf,
    /// One entry per agent set up.
    pub workspaces: Vec<WorkspaceSetup>,
}

/// The state and services shared by the runtime's operations and its runs.
pub(crate) struct Services {
    options: RuntimeOptions,
    loader: Loader,
    /// Swapped whole on reload; never held across an await.
    config: RwLock<ConfigState>,
    /// Agents whose workspace may not be used, with the reason (a vanished
    /// proven workspace, SPEC R-6).
    blocked: RwLock<BTreeMap<String, String>>,
    /// Model providers built from `models.providers`, or why they could not be.
    providers: RwLock<Result<Arc<ProviderRegistry>, String>>,
    sessions: SessionManager,
    /// Set by [`Services::begin_shutdown`]: no new runs start.
    stopping: AtomicBool,
    /// When shutdown began.
    stopping_since: std::sync::OnceLock<tokio::time::Instant>,
    /// One Codex app-server runner per Codex-runtime agent, built on first use.
    codex: CodexRunners,
    /// The heartbeat scheduler's state (see [`crate::heartbeat`]).
    heartbeats: crate::heartbeat::Heartbeats,
    /// The subagents started by sessions (see [`crate::subagents`]).
    subagents: crate::subagents::Subagents,
    /// The sandbox engine, detected at start-up (see [`crate::sandboxing`]).
    sandbox: crate::sandboxing::Engine,
    /// Environment variables commands must not inherit (they hold secrets); refreshed with
    /// the config.
    hidden_env: RwLock<Arc<[String]>>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Services {
    /// Loads the config, seeds or checks every agent workspace, and prepares
    /// the services. An invalid config does not fail here: see [`Services::config`].
    pub(crate) fn start(options: RuntimeOptions) -> Result<Arc<Self>, RuntimeError> {
        let loader = Loader::new().map_err(|e| RuntimeError::Internal(e.to_string()))?;
        let config = config_state::load(&options.settings, options.env.as_ref(), &loader);
        log_config(&options, &config);
        let sessions = SessionManager::new(
            options.settings.state_dir.clone(),
            Arc::clone(&options.clock),
        );
        let providers = build_providers(&options, &config);
        let subagents_path = options.settings.state_dir.join("subagents.json");
        let sandbox = crate::sandboxing::Engine::detect(&options.sandbox_program);
        let runtime = Arc::new(Self {
            options,
            loader,
            config: RwLock::new(config),
            blocked: RwLock::new(BTreeMap::new()),
            providers: RwLock::new(providers),
            sessions,
            stopping: AtomicBool::new(false),
            stopping_since: std::sync::OnceLock::new(),
            codex: CodexRunners::default(),
            heartbeats: crate::heartbeat::Heartbeats::default(),
            subagents: crate::subagents::Subagents::at(subagents_path),
            sandbox,
            hidden_env: RwLock::new(Arc::from(Vec::new())),
        });
        runtime.refresh_secrets();
        runtime.check_workspaces();
        Ok(runtime)
    }

    /// Seeds or checks every agent's workspace. A recently proven workspace
    /// that vanished is not reseeded: the agent is blocked with a message
    /// telling the user to restore it or run a full reset (SPEC R-6).
    fn check_workspaces(&self) {
        let Ok(loaded) = self.loaded() else { return };
        let options = workspaces::setup_options(&loaded.config);
        let mut blocked = BTreeMap::new();
        for agent in &loaded.agents {
            if let Err(error) =
                workspaces::ensure(agent, &self.options.settings.state_dir, options, false)
            {
                tracing::error!(agent = %agent.id, %error, "workspace unusable");
                blocked.insert(agent.id.clone(), error.to_string());
            }
        }
        *self.blocked.write().unwrap_or_else(PoisonError::into_inner) = blocked;
    }

    /// The config state (an invalid config lists every problem).
    pub(crate) fn config(&self) -> ConfigState {
        self.config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Re-reads the config file.
    pub(crate) fn reload(&self) {
        let config = config_state::load(
            &self.options.settings,
            self.options.env.as_ref(),
            &self.loader,
        );
        log_config(&self.options, &config);
        let providers = build_providers(&self.options, &config);
        *self.config.write().unwrap_or_else(PoisonError::into_inner) = config;
        *self
            .providers
            .write()
            .unwrap_or_else(PoisonError::into_inner) = providers;
        self.refresh_secrets();
        self.heartbeats.config_changed();
    }

    /// Collects the secrets of the current config (what `${VAR}` references expanded to,
    /// secret-named fields, provider keys) into the redactor, and the variables they came
    /// from into the list commands do not inherit. An invalid config keeps the last set.
    fn refresh_secrets(&self) {
        let Ok(loaded) = self.loaded() else { return };
        let env = crate::env::ConfigEnv(self.options.env.as_ref());
        let (keys, key_variables) = openclaw_providers::provider_secrets(&loaded.config, &env);
        let secrets = loaded
            .config
            .secret_values()
            .into_iter()
            .map(|s| openclaw_secrets::Secret::new(s.label, s.value))
            .chain(
                keys.into_iter()
                    .map(|(label, key)| openclaw_secrets::Secret::new(label, key.expose())),
            );
        self.options.redactor.replace_source("config", secrets);
        let mut hidden: Vec<String> = loaded.config.substituted_variables();
        for name in key_variables {
            if !hidden.contains(&name) {
                hidden.push(name);
            }
        }
        *self
            .hidden_env
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::from(hidden);
    }

    /// Replaces secret values in `text`.
    pub(crate) fn redact<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        self.options.redactor.redact(text)
    }

    /// The redactor every outgoing text goes through.
    pub(crate) fn redactor(&self) -> &openclaw_secrets::Redactor {
        &self.options.redactor
    }

    /// Variables commands run on the host must not inherit.
    pub(crate) fn hidden_env(&self) -> Arc<[String]> {
        Arc::clone(
            &self
                .hidden_env
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// The model providers, or FAILED_PRECONDITION saying why there are none.
    pub(crate) fn providers(&self) -> Result<Arc<ProviderRegistry>, RuntimeError> {
        self.providers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .map_err(|problem| {
                RuntimeError::FailedPrecondition(format!("model providers unusable: {problem}"))
            })
    }

    /// Where prompts come from.
    pub(crate) fn prompt(&self) -> &Arc<dyn PromptSource> {
        &self.options.prompt
    }

    /// The sandbox of a session's commands, `None` when it is not sandboxed; refused with
    /// FAILED_PRECONDITION when it is sandboxed but no real sandbox can be made.
    pub(crate) fn session_isolation(
        &self,
        agent: &AgentView,
        key: &SessionKey,
        cwd: &std::path::Path,
    ) -> Result<Option<openclaw_sandbox::Isolation>, RuntimeError> {
        self.sandbox.isolation(agent, key, cwd)
    }

    /// The runtime clock.
    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.options.clock
    }

    /// The loaded config, or FAILED_PRECONDITION listing its problems.
    pub(crate) fn loaded_config(&self) -> Result<Arc<Loaded>, RuntimeError> {
        self.loaded()
    }

    /// Start-up: writes messages that a previous process acknowledged but
    /// never wrote (its journals) into their transcripts, unanswered. Call
    /// before serving. Returns how many sessions had leftovers.
    pub(crate) async fn recover_journals(&self) -> usize {
        let Ok(loaded) = self.loaded() else { return 0 };
        let mut recovered = 0;
        for agent in &loaded.agents {
            let ids = match self.sessions.journaled_sessions(agent) {
                Ok(ids) => ids,
                Err(error) => {
                    tracing::error!(agent = %agent.id, %error, "cannot scan message journals");
                    continue;
                }
            };
            for id in ids {
                match self.recover_session_journal(agent, &id.to_string()).await {
                    Ok(()) => recovered += 1,
                    Err(error) => {
                        tracing::error!(agent = %agent.id, session_id = %id, %error, "message journal not recovered");
                    }
                }
            }
        }
        recovered
    }

    async fn recover_session_journal(
        &self,
        agent: &AgentView,
        id: &str,
    ) -> Result<(), RuntimeError> {
        let info = self
            .sessions
            .get(agent, &SessionTarget::Id(id.to_owned()))
            .await?;
        let cwd = self.session_workspace(agent, &info.key).await?;
        let handle = self.sessions.handle(agent, &info, &cwd)?;
        let extras = self.sessions.extras(&agent.id, &info.entry.session_id);
        self.open_journal(agent, &info, &handle, &extras)
            .await
            .map(drop)
    }

    /// The session's message journal, after writing into the transcript
    /// whatever a previous process acknowledged but never wrote (once per
    /// process and session, before anything new).
    pub(crate) async fn open_journal(
        &self,
        agent: &AgentView,
        info: &crate::sessions::SessionInfo,
        handle: &crate::sessions::SessionHandle,
        extras: &crate::sessions::SessionExtras,
    ) -> Result<Arc<crate::sessions::journal::Journal>, RuntimeError> {
        let transcript = self
            .sessions
            .transcript_path(agent, &info.entry.session_id)?;
        let journal = extras.journal(&transcript);
        extras
            .recover_once(|| {
                crate::sessions::recover_journal(self.clock().as_ref(), handle, &journal, &info.key)
            })
            .await?;
        Ok(journal)
    }

    /// The run events of a session from now on (all runs).
    pub(crate) async fn watch(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<crate::sessions::SessionEvents, RuntimeError> {
        let agent = self.agent_view(agent_id)?;
        let info = self.sessions.get(&agent, target).await?;
        Ok(self
            .sessions
            .extras(&agent.id, &info.entry.session_id)
            .subscribe())
    }

    /// Stops starting runs (the first step of [`Services::shutdown`]; call it
    /// as soon as the shutdown signal arrives).
    pub(crate) fn begin_shutdown(&self) {
        self.heartbeats.stop();
        let _ = self.stopping_since.set(tokio::time::Instant::now());
        if !self.stopping.swap(true, Ordering::AcqRel) {
            tracing::info!("shutdown: no new runs start; queued messages will be saved unanswered");
        }
    }

    /// True once shutdown began: runs no longer start.
    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Resolved locations.
    pub(crate) fn settings(&self) -> &Settings {
        &self.options.settings
    }

    fn dirs(&self) -> Dirs {
        Dirs {
            state_dir: self.options.settings.state_dir.clone(),
            home_dir: self.options.settings.home_dir.clone(),
        }
    }

    fn loaded(&self) -> Result<Arc<Loaded>, RuntimeError> {
        self.config().ready().cloned()
    }

    /// The agent view for an id ("" for the default).
    pub(crate) fn agent_view(&self, id: &str) -> Result<AgentView, RuntimeError> {
        self.loaded()?.agent(id).cloned()
    }

    /// The agent, refused when its workspace is unusable.
    pub(crate) fn usable_agent(&self, id: &str) -> Result<AgentView, RuntimeError> {
        let agent = self.agent_view(id)?;
        match self
            .blocked
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&agent.id)
        {
            Some(reason) => Err(RuntimeError::FailedPrecondition(format!(
                "agent {:?}: {reason}",
                agent.id
            ))),
            None => Ok(agent),
        }
    }

    /// The configured agents, in config order, with the default id.
    pub(crate) fn agents(&self) -> Result<(Vec<AgentView>, String), RuntimeError> {
        let loaded = self.loaded()?;
        Ok((loaded.agents.clone(), loaded.default_agent.clone()))
    }

    /// Creates `openclaw.json` when missing and seeds the workspace of one
    /// agent ("" for all). `full_reset` clears the proof marker and setup
    /// state first (user files are kept).
    pub(crate) async fn setup(
        &self,
        agent_id: &str,
        full_reset: bool,
    ) -> Result<SetupOutcome, RuntimeError> {
        let loaded = self.loaded()?;
        let agents: Vec<AgentView> = if agent_id.trim().is_empty() {
            loaded.agents.clone()
        } else {
            vec![loaded.agent(agent_id)?.clone()]
        };
        let default_ws = loaded.agent("")?.workspace.display().to_string();
        let config_path = self.options.settings.config_path.clone();
        let state_dir = self.options.settings.state_dir.clone();
        let options = workspaces::setup_options(&loaded.config);
        let (config_created, results) = blocking(move || {
            let file = openclaw_workspace::ensure_config_file(&config_path, &default_ws)
                .map_err(workspaces::workspace_error)?;
            let mut results = Vec::new();
            for agent in &agents {
                results.push(workspaces::ensure(agent, &state_dir, options, full_reset)?);
            }
            Ok((file.created, results))
        })
        .await?;
        if config_created {
            tracing::info!(path = %self.options.settings.config_path.display(), "config file created");
            self.reload();
        }
        let mut blocked = self.blocked.write().unwrap_or_else(PoisonError::into_inner);
        for r in &results {
            blocked.remove(&r.agent_id);
        }
        drop(blocked);
        Ok(SetupOutcome {
            config_created,
            config_path: self.options.settings.config_path.clone(),
            workspaces: results,
        })
    }

    /// The skills of one agent (R-9, P-39).
    pub(crate) async fn list_skills(&self, agent_id: &str) -> Result<Discovery, RuntimeError> {
        let loaded = self.loaded()?;
        let agent = loaded.agent(agent_id)?.clone();
        let dirs = self.dirs();
        let env = Arc::clone(&self.options.env);
        blocking(move || workspaces::discover_skills(&agent, &loaded.config, &dirs, env)).await
    }

    /// The working directory of a session, created if it is a sandbox
    /// workspace (SPEC R-3).
    pub(crate) async fn session_workspace(
        &self,
        agent: &AgentView,
        key: &SessionKey,
    ) -> Result<PathBuf, RuntimeError> {
        let (agent, key) = (agent.clone(), key.clone());
        blocking(move || workspaces::ensure_session_workspace(&agent, &key)).await
    }

    /// The working directory of a session, computed only.
    pub(crate) fn session_workspace_path(
        &self,
        agent_id: &str,
        key: &SessionKey,
    ) -> Result<PathBuf, RuntimeError> {
        Ok(workspaces::session_workspace_path(
            &self.agent_view(agent_id)?,
            key,
        ))
    }

    /// Creates (or returns) the session for a key.
    pub(crate) async fn create_session(
        &self,
        agent_id: &str,
        session_key: &str,
        meta: NewSession,
    ) -> Result<(SessionInfo, bool), RuntimeError> {
        let agent = self.usable_agent(agent_id)?;
        let key = key::normalize(&agent.id, session_key)?;
        let cwd = self.session_workspace(&agent, &key).await?;
        self.sessions.create(&agent, &key, &cwd, meta).await
    }

    /// Sessions of an agent.
    pub(crate) async fn list_sessions(
        &self,
        agent_id: &str,
    ) -> Result<Vec<SessionInfo>, RuntimeError> {
        let agent = self.agent_view(agent_id)?;
        self.sessions.list(&agent).await
    }

    /// One session.
    pub(crate) async fn get_session(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<SessionInfo, RuntimeError> {
        let agent = self.agent_view(agent_id)?;
        self.sessions.get(&agent, target).await
    }

    /// Resets a session (new id, old transcript archived).
    pub(crate) async fn reset_session(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<SessionInfo, RuntimeError> {
        let agent = self.usable_agent(agent_id)?;
        let info = self.sessions.get(&agent, target).await?;
        let cwd = self.session_workspace(&agent, &info.key).await?;
        self.sessions.reset(&agent, target, &cwd).await
    }

    /// Deletes a session (transcript archived); returns the archive path.
    pub(crate) async fn delete_session(
        &self,
        agent_id: &str,
        target: &SessionTarget,
    ) -> Result<Option<PathBuf>, RuntimeError> {
        let agent = self.agent_view(agent_id)?;
        self.sessions.delete(&agent, target).await
    }

    /// Graceful shutdown: no new runs start; active runs get until `drain`
    /// after [`Services::begin_shutdown`] to finish, then are cancelled (their tool calls get "interrupted"
    /// results). Messages still queued are written to their transcripts as
    /// unanswered user messages, so nothing accepted is lost. Then every
    /// session is flushed and closed.
    pub(crate) async fn shutdown(&self, drain: Duration) {
        self.begin_shutdown();
        let since = self
            .stopping_since
            .get()
            .copied()
            .unwrap_or_else(tokio::time::Instant::now);
        let left = drain.saturating_sub(since.elapsed());
        if !self.wait_idle(left).await {
            tracing::warn!(
                drain_ms = u64::try_from(drain.as_millis()).unwrap_or(u64::MAX),
                "runs still active after the drain window; cancelling them"
            );
            self.sessions.cancel_all();
            if !self.wait_idle(Duration::from_secs(10)).await {
                tracing::error!("runs did not stop after cancellation; closing sessions anyway");
            }
        }
        self.sessions.close_all().await;
        tracing::info!("sessions flushed and closed");
        // After the runs: a Codex turn still running would end as interrupted.
        self.codex.shutdown().await;
    }

    async fn wait_idle(&self, limit: Duration) -> bool {
        let until = tokio::time::Instant::now() + limit;
        loop {
            if self.sessions.all_idle() {
                return true;
            }
            if tokio::time::Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The registry of subagents.
    pub(crate) fn subagents(&self) -> &crate::subagents::Subagents {
        &self.subagents
    }

    /// The heartbeat scheduler's state.
    pub(crate) fn heartbeats(&self) -> &crate::heartbeat::Heartbeats {
        &self.heartbeats
    }

    /// The Codex app-server runners of the Codex-runtime agents.
    pub(crate) fn codex_runners(&self) -> &CodexRunners {
        &self.codex
    }

    /// The session manager (appends go through session actors).
    pub(crate) fn sessions(&self) -> &SessionManager {
        &self.sessions
    }
}

/// Builds the providers of a valid config (an invalid config has none).
fn build_providers(
    options: &RuntimeOptions,
    config: &ConfigState,
) -> Result<Arc<ProviderRegistry>, String> {
    let loaded = config.ready().map_err(|e| e.to_string())?;
    let base_dir = options
        .settings
        .config_path
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let env = crate::env::ConfigEnv(options.env.as_ref());
    let context = RegistryContext {
        env: &env,
        base_dir: &base_dir,
        clock: Arc::clone(&options.clock),
        http: HttpSettings::default(),
    };
    ProviderRegistry::from_config(&loaded.config, &context)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

fn log_config(options: &RuntimeOptions, config: &ConfigState) {
    match config {
        ConfigState::Ready(loaded) => tracing::info!(
            config = %options.settings.config_path.display(),
            from_file = loaded.from_file,
            agents = loaded.agents.len(),
            default_agent = %loaded.default_agent,
            "config loaded"
        ),
        ConfigState::Invalid(message) => {
            tracing::error!(%message, "config invalid; agent calls answer FAILED_PRECONDITION until it is fixed");
        }
    }
}

/// Runs blocking filesystem work off the async workers.
async fn blocking<T, F>(work: F) -> Result<T, RuntimeError>
where
    F: FnOnce() -> Result<T, RuntimeError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| RuntimeError::Internal(format!("blocking task failed: {e}")))?
}

/// One [`CodexRunner`] per Codex agent, built on first use and rebuilt when
/// the agent's settings change. A replaced runner serves its running turns
/// to the end; its app-server exits when the last of them drops it.
#[derive(Debug, Default)]
pub(crate) struct CodexRunners {
    by_agent: std::sync::Mutex<BTreeMap<String, Arc<CodexRunner>>>,
}

impl CodexRunners {
    /// The agent's runner for `settings`.
    pub(crate) fn runner(&self, agent_id: &str, settings: HarnessSettings) -> Arc<CodexRunner> {
        let mut map = self.by_agent.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(runner) = map.get(agent_id)
            && *runner.settings() == settings
        {
            return Arc::clone(runner);
        }
        if map.contains_key(agent_id) {
            tracing::info!(agent = %agent_id, "Codex settings changed; later turns use a new app-server");
        }
        let runner = Arc::new(CodexRunner::new(settings));
        map.insert(agent_id.to_owned(), Arc::clone(&runner));
        runner
    }

    /// Shuts every runner down (stdin closed, then killed after the grace).
    pub(crate) async fn shutdown(&self) {
        let runners =
            std::mem::take(&mut *self.by_agent.lock().unwrap_or_else(PoisonError::into_inner));
        for (agent, runner) in runners {
            tracing::debug!(%agent, "stopping the Codex app-server");
            runner.shutdown().await;
        }
    }
}
