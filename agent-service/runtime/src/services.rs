//! What the agent loop works with: one value holding the config snapshot, the prompt source,
//! the model providers, the clock, the session index, the sandbox engine, the redactor and the
//! registries of Codex runners, heartbeats and subagents. [`crate::Runtime`] is the public face
//! over it; the loop (`crate::run`) takes a `Services` and never the face.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{
        Arc, PoisonError, RwLock,
        atomic::{AtomicBool, Ordering},
    },
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
    sessions::SessionManager,
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
    /// The directory the service was installed into (the one holding its executable, see
    /// [`install_dir`]): a `skills/` folder there is the bundled skills root, and a `docs/`
    /// folder the local documentation. `None` offers neither.
    pub install_dir: Option<PathBuf>,
    /// How long a session stays idle (no run, no watcher, no background command) before its
    /// transcript writer, descriptors and buffers are released; it is opened again on demand.
    /// `None` keeps every session open until shutdown.
    pub idle_release: Option<std::time::Duration>,
    /// Set when several replicas share the agents behind a router: an agent's cron jobs live
    /// on the replica that owns its main session, and a session's `cron` tool manages them
    /// through what this returns for the agent id (a client of that replica, through the
    /// router) instead of this replica's store. It also limits a job's delivery to the
    /// sessions that live with its jobs. `None`: one replica, jobs kept here.
    pub cron_forward: Option<CronForward>,
    /// The service's own listeners that answer without a token (the gRPC API and inspector
    /// without `--tokens`, the metrics endpoint), each described for messages: a sandbox on
    /// the host network would reach them, so while there is one, `sandbox.network: "host"`
    /// is a config error. Empty: none (or the host does not say).
    pub open_listeners: Vec<String>,
    /// Whether this replica owns the session with a full key, when several replicas share
    /// the agents (the server decides, as the router routes). Work the runtime starts on its
    /// own, such as heartbeats in an agent's main session, runs only where that session
    /// lives, so no replica creates a session another one owns. `None`: one replica, which
    /// owns every session.
    pub owns: Option<SessionOwner>,
}

/// See [`RuntimeOptions::owns`].
pub type SessionOwner = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// See [`RuntimeOptions::cron_forward`].
pub type CronForward = Arc<
    dyn Fn(&str, openclaw_cron::Privilege) -> Arc<dyn openclaw_tools::CronControl> + Send + Sync,
>;

/// Default limit on a whole run (`agents.defaults.timeoutSeconds`).
pub const DEFAULT_RUN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Default of [`RuntimeOptions::idle_release`]: ten minutes.
pub const DEFAULT_IDLE_RELEASE: std::time::Duration = std::time::Duration::from_secs(600);

/// The directory holding the running executable, where the bundled `skills/` and `docs/`
/// folders ship. `None` when the platform cannot say.
pub fn install_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    exe.parent().map(Path::to_path_buf)
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
            install_dir: None,
            idle_release: Some(DEFAULT_IDLE_RELEASE),
            cron_forward: None,
            open_listeners: Vec::new(),
            owns: None,
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
    /// proven workspace, R-6).
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
    /// The cron jobs of every agent and the scheduler's signals (see [`crate::cron`]).
    cron: crate::cron::CronJobs,
    /// The sandbox engine, detected at start-up (see [`crate::sandboxing`]).
    sandbox: crate::sandboxing::Engine,
    /// Environment variables commands must not inherit (they hold secrets); refreshed with
    /// the config.
    hidden_env: RwLock<Arc<[String]>>,
    /// Exec approvals waiting for a person, and recent decisions (see [`crate::approvals`]).
    approvals: Arc<crate::approvals::Approvals>,
    /// The approvals file of the state dir: each agent's allowlist entries.
    exec_approvals: Arc<openclaw_tools::ExecApprovals>,
    /// Workspace files cut on several renders in a row (see [`crate::bootstrap_cuts`]).
    cuts: crate::bootstrap_cuts::CutWatch,
    /// The bootstrap files of each workspace as last read, checked on every render.
    turn_files: Arc<crate::visibility::TurnFileCache>,
    /// Each agent's last skill discovery, checked on every run.
    kept_skills: Arc<crate::kept_skills::KeptSkills>,
    /// The `docs/` folder beside the executable, looked for once: it ships with the binary.
    shipped_docs: std::sync::OnceLock<Option<PathBuf>>,
}

/// The service's own credentials, never handed to a command whatever their value.
const OWN_SECRET_VARIABLES: [&str; 6] = [
    "AGENT_SERVICE_TOKENS",
    "AGENT_SERVICE_TOKENS_FILE",
    "AGENT_SERVICE_ROUTER_TOKEN_FILE",
    "PROMPT_SERVICE_TOKEN",
    "PROMPT_SERVICE_TOKEN_FILE",
    "PROMPT_SERVICE_TOKENS",
];

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
        let config = config_state::load(
            &options.settings,
            options.env.as_ref(),
            &loader,
            &options.open_listeners,
        );
        log_config(&options, &config);
        let sessions = SessionManager::new(
            options.settings.state_dir.clone(),
            Arc::clone(&options.clock),
        );
        let providers = build_providers(&options, &config);
        let subagents_path = options.settings.state_dir.join("subagents.json");
        let sandbox = crate::sandboxing::Engine::detect(&options.sandbox_program);
        let now = jiff::Timestamp::from_millisecond(openclaw_transcript::unix_millis(
            options.clock.now(),
        ))
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        let (cron, moved_aside) = crate::cron::CronJobs::open(&options.settings.state_dir, now)?;
        if let Some((path, reason)) = &moved_aside {
            tracing::warn!(moved_to = %path.display(), %reason, "the cron jobs file could not be read: moved aside, starting with no jobs");
        }
        let exec_approvals = open_exec_approvals(&options)?;
        let persist: crate::approvals::AllowAlways = {
            let store = Arc::clone(&exec_approvals);
            let clock = Arc::clone(&options.clock);
            Arc::new(move |agent: &str, patterns: &[String], by: &str| {
                let at = openclaw_transcript::unix_millis(clock.now());
                for pattern in patterns {
                    store
                        .add(agent, pattern, by, at)
                        .map_err(|e| RuntimeError::Internal(e.to_string()))?;
                }
                Ok(())
            })
        };
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
            cron,
            sandbox,
            hidden_env: RwLock::new(Arc::from(Vec::new())),
            approvals: Arc::new(crate::approvals::Approvals::new(Some(persist))),
            exec_approvals,
            cuts: crate::bootstrap_cuts::CutWatch::default(),
            turn_files: Arc::new(crate::visibility::turn_file_cache()),
            kept_skills: Arc::default(),
            shipped_docs: std::sync::OnceLock::new(),
        });
        runtime.refresh_secrets();
        runtime.check_workspaces();
        Ok(runtime)
    }

    /// Seeds or checks every agent's workspace. A recently proven workspace
    /// that vanished is not reseeded: the agent is blocked with a message
    /// telling the user to restore it or run a full reset.
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

    /// Exec approvals waiting for a person, and recent decisions.
    pub(crate) fn approvals(&self) -> &Arc<crate::approvals::Approvals> {
        &self.approvals
    }

    /// Workspace files cut on several renders in a row, per session (P-49).
    pub(crate) fn cuts(&self) -> &crate::bootstrap_cuts::CutWatch {
        &self.cuts
    }

    /// The bootstrap files of each workspace as last read, checked on every render.
    pub(crate) fn turn_files(&self) -> &Arc<crate::visibility::TurnFileCache> {
        &self.turn_files
    }

    /// The approvals file of the state dir (allowlist entries per agent).
    pub(crate) fn exec_approvals(&self) -> &Arc<openclaw_tools::ExecApprovals> {
        &self.exec_approvals
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
            &self.options.open_listeners,
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
        // Any variable whose value holds a secret of any source (a provider key, the service's
        // own tokens, the prompt-service token): a command must not read it in the clear.
        let holding: Vec<String> = self
            .options
            .env
            .vars()
            .into_iter()
            .filter(|(_, value)| self.options.redactor.contains_secret(value.as_bytes()))
            .map(|(name, _)| name)
            .collect();
        for name in key_variables
            .into_iter()
            .chain(OWN_SECRET_VARIABLES.iter().map(|n| (*n).to_owned()))
            .chain(holding)
        {
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

    /// What hook commands are judged against and launched with, for the loaded agents.
    pub(crate) fn hook_launch(&self, agents: &[AgentView]) -> crate::hooks::HookLaunch {
        crate::hooks::HookLaunch::for_agents(&self.options.settings.state_dir, agents, &|name| {
            self.options.env.var(name)
        })
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

    /// Whether this replica owns the session `key` (see [`RuntimeOptions::owns`]).
    pub(crate) fn owns(&self, key: &str) -> bool {
        self.options.owns.as_ref().is_none_or(|owns| owns(key))
    }

    /// See [`RuntimeOptions::cron_forward`].
    pub(crate) fn cron_forward(&self) -> Option<&CronForward> {
        self.options.cron_forward.as_ref()
    }

    /// The runtime clock.
    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.options.clock
    }

    /// The loaded config, or FAILED_PRECONDITION listing its problems.
    pub(crate) fn loaded_config(&self) -> Result<Arc<Loaded>, RuntimeError> {
        self.loaded()
    }

    /// Stops starting runs (the first step of `Runtime::shutdown`; call it
    /// as soon as the shutdown signal arrives).
    pub(crate) fn begin_shutdown(&self) {
        // A tool call waiting for a person would hold the drain: nobody decides it now.
        self.approvals.cancel_all(self.now_ms());
        self.heartbeats.stop();
        self.cron.stop();
        let _ = self.stopping_since.set(tokio::time::Instant::now());
        if !self.stopping.swap(true, Ordering::AcqRel) {
            tracing::info!("shutdown: no new runs start; queued messages will be saved unanswered");
        }
    }

    /// When shutdown began, if it did.
    pub(crate) fn stopping_since(&self) -> Option<tokio::time::Instant> {
        self.stopping_since.get().copied()
    }

    /// Releases idle sessions (see [`SessionManager::release_idle`]) until shutdown begins,
    /// looking every quarter of `options.idle_release` (between 100 ms and 30 s). Does
    /// nothing when release is off.
    pub(crate) fn start_idle_release(self: &Arc<Self>) {
        let Some(idle_for) = self.options.idle_release else {
            return;
        };
        let every = (idle_for / 4).clamp(
            std::time::Duration::from_millis(100),
            std::time::Duration::from_secs(30),
        );
        let services = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(services) = services.upgrade() else {
                    return;
                };
                if services.is_stopping() {
                    return;
                }
                services.sessions.release_idle(idle_for).await;
            }
        });
    }

    /// Lets the agents use their workspaces again (they were set up anew).
    pub(crate) fn unblock<'a>(&self, agent_ids: impl IntoIterator<Item = &'a str>) {
        let mut blocked = self.blocked.write().unwrap_or_else(PoisonError::into_inner);
        for id in agent_ids {
            blocked.remove(id);
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

    /// The skills of one agent (R-9, P-39): its workspace and personal roots, the bundled
    /// skills beside the executable and the skills folders of the enabled plugins. The last
    /// discovery is answered again while every path it read is unchanged
    /// ([`crate::kept_skills`]).
    pub(crate) async fn list_skills(&self, agent_id: &str) -> Result<Arc<Discovery>, RuntimeError> {
        let loaded = self.loaded()?;
        let agent = loaded.agent(agent_id)?.clone();
        if let Some(kept) = self.kept_skills.get(&agent.id, &loaded) {
            let holds = if kept.consulted.len() <= crate::kept_skills::CHECKED_INLINE {
                kept.consulted.still_holds()
            } else {
                let kept = Arc::clone(&kept);
                blocking(move || Ok(kept.consulted.still_holds())).await?
            };
            if holds {
                return Ok(Arc::clone(&kept.discovery));
            }
        }
        let dirs = self.dirs();
        let env = Arc::clone(&self.options.env);
        let bundled = self.options.install_dir.as_ref().map(|d| d.join("skills"));
        let kept_skills = Arc::clone(&self.kept_skills);
        blocking(move || {
            // The wall clock, as file times are: a discovery is kept only when every file it
            // read is older than this by a margin.
            let began = std::time::SystemTime::now();
            let (discovery, consulted) = workspaces::discover_skills_consulted(
                &agent,
                &loaded.config,
                &dirs,
                bundled.as_deref(),
                env,
            )?;
            let discovery = Arc::new(discovery);
            kept_skills.keep(&agent.id, &loaded, Arc::clone(&discovery), consulted, began);
            Ok(discovery)
        })
        .await
    }

    /// The local documentation the prompt points at: `agents.defaults.docsPath`, else a
    /// `docs/` folder beside the executable when there is one (looked for on first use: it is
    /// part of the installation, not of the state a run may change).
    pub(crate) fn docs_dir(&self, config: &openclaw_config::Config) -> Option<PathBuf> {
        config.docs_path(&self.dirs()).or_else(|| {
            self.shipped_docs
                .get_or_init(|| {
                    let shipped = self.options.install_dir.as_ref()?.join("docs");
                    shipped.is_dir().then_some(shipped)
                })
                .clone()
        })
    }

    /// The working directory of a session, created if it is a sandbox
    /// workspace.
    pub(crate) async fn session_workspace(
        &self,
        agent: &AgentView,
        key: &SessionKey,
    ) -> Result<PathBuf, RuntimeError> {
        // Only a sandbox workspace is created (on the blocking pool); the agent's own
        // workspace is a path, handed back without a thread hand-off.
        if workspaces::sandbox_scope(agent, key).is_none() {
            return Ok(agent.workspace.clone());
        }
        let (agent, key) = (agent.clone(), key.clone());
        blocking(move || workspaces::ensure_session_workspace(&agent, &key)).await
    }

    /// The registry of subagents.
    pub(crate) fn subagents(&self) -> &crate::subagents::Subagents {
        &self.subagents
    }

    /// The heartbeat scheduler's state.
    pub(crate) fn cron(&self) -> &crate::cron::CronJobs {
        &self.cron
    }

    pub(crate) fn heartbeats(&self) -> &crate::heartbeat::Heartbeats {
        &self.heartbeats
    }

    /// The Codex app-server runners of the Codex-runtime agents.
    pub(crate) fn codex_runners(&self) -> &CodexRunners {
        &self.codex
    }

    /// The session manager (appends go through session writers).
    pub(crate) fn sessions(&self) -> &SessionManager {
        &self.sessions
    }

    /// The workspace bootstrap files, read now.
    pub(crate) async fn bootstrap_files(
        &self,
        cwd: &Path,
    ) -> Result<Vec<openclaw_workspace::BootstrapFile>, RuntimeError> {
        let cwd = cwd.to_path_buf();
        tokio::task::spawn_blocking(move || openclaw_workspace::load_bootstrap_files(&cwd))
            .await
            .map_err(|e| RuntimeError::Internal(format!("file task failed: {e}")))?
            .map_err(crate::workspaces::workspace_error)
    }

    /// How long one run may take (`agents.defaults.timeoutSeconds`).
    pub(crate) fn run_timeout(&self) -> std::time::Duration {
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
            .map_or(DEFAULT_RUN_TIMEOUT, std::time::Duration::from_secs)
    }

    /// Milliseconds since the epoch, from the services' clock.
    pub(crate) fn now_ms(&self) -> i64 {
        openclaw_transcript::unix_millis(self.clock().now())
    }

    /// Adds a turn's usage to the index and touches the timestamps (written
    /// behind the run; see `sessions::touches`).
    pub(crate) fn record_turn(
        &self,
        agent: &openclaw_config::resolve::AgentView,
        key: &SessionKey,
        usage: &openclaw_transcript::Usage,
    ) {
        self.sessions().record_turn(
            agent,
            key,
            crate::sessions::TurnDelta {
                input: usage.input,
                output: usage.output,
                total: usage.total_tokens,
                cache_read: usage.cache_read,
                cache_write: usage.cache_write,
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

    /// A session's `/think` setting, if it has one (an unreadable index reads as none: the
    /// agent's `thinkingDefault` applies).
    pub(crate) async fn session_thinking(
        &self,
        agent_id: &str,
        key: &SessionKey,
    ) -> Option<openclaw_config::raw::ThinkingLevel> {
        let entry = self.index_entry(agent_id, key).await.ok().flatten()?;
        crate::prompt_input::thinking_of(entry.thinking_level.as_deref())
    }

    /// The index entry of a session.
    pub(crate) async fn index_entry(
        &self,
        agent_id: &str,
        key: &SessionKey,
    ) -> Result<Option<Arc<openclaw_transcript::SessionEntry>>, RuntimeError> {
        let agent = self.agent_view(agent_id)?;
        match self
            .sessions()
            .lookup(
                &agent,
                &crate::sessions::SessionTarget::Key(key.as_str().to_owned()),
            )
            .await
        {
            Ok(info) => Ok(Some(info.entry)),
            Err(RuntimeError::SessionNotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
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

/// Opens the approvals file of the state dir; an unreadable one is moved aside (and logged)
/// and the service starts with no file entries.
fn open_exec_approvals(
    options: &RuntimeOptions,
) -> Result<Arc<openclaw_tools::ExecApprovals>, RuntimeError> {
    let now = openclaw_transcript::unix_millis(options.clock.now());
    let opened = openclaw_tools::ExecApprovals::open(&options.settings.state_dir, now)
        .map_err(|e| RuntimeError::Internal(e.to_string()))?;
    if let Some(aside) = &opened.set_aside {
        tracing::warn!(moved_to = %aside.moved_to.display(), reason = %aside.reason, "the exec approvals file could not be read: moved aside, starting with no allowlist entries from it");
    }
    Ok(Arc::new(opened.store))
}

fn log_config(options: &RuntimeOptions, config: &ConfigState) {
    match config {
        ConfigState::Ready(loaded) => {
            tracing::info!(
                config = %options.settings.config_path.display(),
                from_file = loaded.from_file,
                agents = loaded.agents.len(),
                default_agent = %loaded.default_agent,
                "config loaded"
            );
            for agent in &loaded.agents {
                for warning in
                    openclaw_tools::ExecPolicy::from_config(&loaded.config, &agent.id).warnings()
                {
                    tracing::warn!(agent = %agent.id, %warning, "exec approvals");
                }
            }
        }
        ConfigState::Invalid(message) => {
            tracing::error!(%message, "config invalid; agent calls answer FAILED_PRECONDITION until it is fixed");
        }
    }
}

/// Runs blocking filesystem work off the async workers (defined with the
/// sessions, the lowest module that needs it).
pub(crate) use crate::sessions::blocking;

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
