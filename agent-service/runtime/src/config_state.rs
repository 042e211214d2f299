//! Loading `openclaw.json` into the agents the runtime serves.
//!
//! A missing file means OpenClaw's defaults (one `main` agent). An invalid
//! file does not crash the service: it keeps serving health checks and
//! answers every agent call with FAILED_PRECONDITION listing every problem
//! with its path, line and column, until the file is fixed.

use std::collections::BTreeMap;
use std::sync::Arc;

use openclaw_config::{
    Config, ConfigError, LoadOptions, Loader, UnresolvedVars,
    resolve::{AgentView, Dirs},
};

use crate::{
    env::{ConfigEnv, Env},
    error::RuntimeError,
    settings::Settings,
};

/// A loaded, valid configuration and the agents it defines.
#[derive(Debug)]
pub struct Loaded {
    /// The config.
    pub config: Config,
    /// Every configured agent, in config order.
    pub agents: Vec<AgentView>,
    /// Id of the default agent.
    pub default_agent: String,
    /// False when no file existed and defaults are in use.
    pub from_file: bool,
    /// Each agent's memory index and settings (`memorySearch`), by agent id: one per agent,
    /// shared by its sessions, so every search of an agent goes through one connection.
    pub memory: BTreeMap<String, Arc<openclaw_memory::AgentMemory>>,
    /// Each agent's exec policy as the config sets it (`tools.exec` layers), by agent id,
    /// judged once per load rather than once per run.
    exec_policies: BTreeMap<String, openclaw_tools::ExecPolicy>,
    /// Each tool's definition as the model is shown it, encoded once per load rather than
    /// once per run.
    tool_specs: openclaw_tools::SpecCache,
}

impl Loaded {
    /// The memory index of agent `id` when its `memorySearch` is enabled.
    pub fn memory(&self, id: &str) -> Option<Arc<openclaw_memory::AgentMemory>> {
        self.memory
            .get(id)
            .filter(|m| m.settings().enabled)
            .map(Arc::clone)
    }

    /// Agent `id`'s exec policy as the config sets it (before the approvals file's entries).
    pub fn exec_policy(&self, id: &str) -> openclaw_tools::ExecPolicy {
        self.exec_policies
            .get(id)
            .cloned()
            .unwrap_or_else(|| openclaw_tools::ExecPolicy::from_config(&self.config, id))
    }

    /// The definitions of the tools this config offers, shared by every run under it.
    pub fn tool_specs(&self) -> &openclaw_tools::SpecCache {
        &self.tool_specs
    }

    /// The agent with this id (case-insensitive), or the default for "".
    pub fn agent(&self, id: &str) -> Result<&AgentView, RuntimeError> {
        let wanted = id.trim();
        let wanted = if wanted.is_empty() {
            self.default_agent.as_str()
        } else {
            wanted
        };
        self.agents
            .iter()
            .find(|a| a.id.eq_ignore_ascii_case(wanted))
            .ok_or_else(|| RuntimeError::UnknownAgent(wanted.to_owned()))
    }
}

/// The config as the runtime sees it.
#[derive(Debug, Clone)]
pub enum ConfigState {
    /// Valid.
    Ready(Arc<Loaded>),
    /// Invalid; the message lists every problem.
    Invalid(String),
}

impl ConfigState {
    /// The loaded config, or FAILED_PRECONDITION with every problem listed.
    pub fn ready(&self) -> Result<&Arc<Loaded>, RuntimeError> {
        match self {
            Self::Ready(loaded) => Ok(loaded),
            Self::Invalid(message) => Err(RuntimeError::FailedPrecondition(message.clone())),
        }
    }
}

/// Reads and validates the config file (every error reported at once). `open_listeners` are
/// the service's own listeners that take no token (see
/// [`crate::RuntimeOptions::open_listeners`]).
pub fn load(
    settings: &Settings,
    env: &dyn Env,
    loader: &Loader,
    open_listeners: &[String],
) -> ConfigState {
    let path = &settings.config_path;
    let (text, from_file) = match std::fs::read_to_string(path) {
        Ok(text) => (text, true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ("{}".to_owned(), false),
        Err(e) => return ConfigState::Invalid(format!("cannot read {}: {e}", path.display())),
    };
    let options = LoadOptions {
        unresolved_vars: UnresolvedVars::Error,
    };
    let config = match loader.load(&text, &ConfigEnv(env), &options) {
        Ok(config) => config,
        Err(error) => return ConfigState::Invalid(describe(path, &error)),
    };
    let dirs = Dirs {
        state_dir: settings.state_dir.clone(),
        home_dir: settings.home_dir.clone(),
    };
    let mut agents = Vec::new();
    let mut problems = Vec::new();
    let mut memory = BTreeMap::new();
    for id in config.agent_ids() {
        match config.agent(id, &dirs) {
            Ok(view) => {
                match memory_of(&config, &view, env) {
                    Ok(m) => {
                        memory.insert(view.id.clone(), Arc::new(m));
                    }
                    Err(error) => problems.push(format!("agent {id:?}: {error}")),
                }
                agents.push(view);
            }
            Err(error) => problems.push(format!("agent {id:?}: {error}")),
        }
    }
    problems.extend(hook_problems(&config, &agents, settings, env));
    problems.extend(host_network_problems(&agents, open_listeners));
    if !problems.is_empty() {
        return ConfigState::Invalid(format!(
            "{} is invalid:\n{}",
            path.display(),
            problems.join("\n")
        ));
    }
    let default_agent = config.default_agent_id().to_owned();
    let exec_policies = agents
        .iter()
        .map(|a| {
            (
                a.id.clone(),
                openclaw_tools::ExecPolicy::from_config(&config, &a.id),
            )
        })
        .collect();
    ConfigState::Ready(Arc::new(Loaded {
        config,
        agents,
        default_agent,
        from_file,
        memory,
        exec_policies,
        tool_specs: openclaw_tools::SpecCache::new(),
    }))
}

/// The agent's memory index: `memorySearch` resolved, the index file in its agent dir.
fn memory_of(
    config: &Config,
    agent: &AgentView,
    env: &dyn Env,
) -> Result<openclaw_memory::AgentMemory, openclaw_memory::MemoryError> {
    let settings = openclaw_memory::MemorySettings::resolve(config, &agent.id, &ConfigEnv(env))?;
    openclaw_memory::AgentMemory::new(settings, agent.agent_dir.join(MEMORY_INDEX_FILE))
}

/// The memory index's file name in an agent's dir (`<stateDir>/agents/<id>/agent/`).
pub const MEMORY_INDEX_FILE: &str = "memory.sqlite";

/// Every hook command that names a program (or a file) a session or another user can write,
/// by config key (`hooks.bootstrap[0].command`). Shared hooks are judged once per agent (each
/// agent's workspace is a different cwd) and reported once.
fn hook_problems(
    config: &Config,
    agents: &[AgentView],
    settings: &Settings,
    env: &dyn Env,
) -> Vec<String> {
    use openclaw_config::resolve::{BootstrapHook, PromptBuildHook};
    let launch =
        crate::hooks::HookLaunch::for_agents(&settings.state_dir, agents, &|name| env.var(name));
    let mut problems: Vec<String> = Vec::new();
    for agent in agents {
        let hooks = config.hooks(&agent.id);
        let bootstrap = hooks.bootstrap.iter().filter_map(|h| match &h.form {
            BootstrapHook::Command(cmd) => Some((&h.key, cmd)),
            _ => None,
        });
        let prompt = hooks
            .before_prompt_build
            .iter()
            .filter_map(|h| match &h.form {
                PromptBuildHook::Command(cmd) => Some((&h.key, cmd)),
                _ => None,
            });
        for (key, cmd) in bootstrap.chain(prompt) {
            if let Err(why) = launch.check_config(&cmd.argv, &agent.workspace) {
                let line = format!("{key}.command: {why}");
                if !problems.contains(&line) {
                    problems.push(line);
                }
            }
        }
    }
    problems
}

/// A sandbox on the host network shares the host's loopback: it reaches the service's own
/// listeners there (and its abstract Unix sockets). While one of them answers without a token,
/// `network: "host"` would hand a sandboxed command the API the sandbox exists to keep from it.
fn host_network_problems(agents: &[AgentView], open_listeners: &[String]) -> Vec<String> {
    use openclaw_config::raw::{SandboxMode, SandboxNetwork};
    if open_listeners.is_empty() {
        return Vec::new();
    }
    agents
        .iter()
        .filter(|a| a.sandbox.mode != SandboxMode::Off && a.sandbox.network == SandboxNetwork::Host)
        .map(|a| {
            format!(
                "agent {:?}: sandbox.network \"host\" (agents.defaults.sandbox.network or \
                 agents.list[].sandbox.network) is refused while {} answer{} without a token: a \
                 sandboxed command on the host network would reach {}. Give the API tokens \
                 (--tokens-file) and leave --metrics-listen unset, or use network \"none\"",
                a.id,
                open_listeners.join(" and "),
                if open_listeners.len() == 1 { "s" } else { "" },
                if open_listeners.len() == 1 {
                    "it"
                } else {
                    "them"
                },
            )
        })
        .collect()
}

fn describe(path: &std::path::Path, error: &ConfigError) -> String {
    match error {
        ConfigError::Invalid(errors) => format!(
            "{} is invalid ({} problem{}):\n{errors}",
            path.display(),
            errors.len(),
            if errors.len() == 1 { "" } else { "s" }
        ),
        other => format!("{} is invalid: {other}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::MapEnv;

    fn settings(dir: &std::path::Path) -> Settings {
        Settings {
            state_dir: dir.join("state"),
            config_path: dir.join("openclaw.json"),
            home_dir: dir.to_path_buf(),
        }
    }

    #[test]
    fn missing_file_means_one_default_agent() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let s = settings(dir.path());
        let state = load(&s, &MapEnv::default(), &Loader::new()?, &[]);
        let loaded = state.ready()?;
        assert!(!loaded.from_file);
        assert_eq!(loaded.default_agent, "main");
        assert_eq!(
            loaded.agent("")?.workspace,
            dir.path().join("state/workspace")
        );
        assert!(matches!(
            loaded.agent("nope"),
            Err(RuntimeError::UnknownAgent(_))
        ));
        Ok(())
    }

    #[test]
    fn invalid_file_lists_every_problem() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let s = settings(dir.path());
        std::fs::write(
            &s.config_path,
            "{\n  agents: { defaults: { bootstrapMaxChars: 'x', workspac: 1 } },\n  tools: { profle: 'full' },\n}",
        )?;
        let state = load(&s, &MapEnv::default(), &Loader::new()?, &[]);
        let err = state
            .ready()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("3 problems"), "{err}");
        assert!(
            err.contains("agents.defaults.bootstrapMaxChars (line 2"),
            "{err}"
        );
        assert!(err.contains("agents.defaults.workspac"), "{err}");
        assert!(err.contains("tools.profle"), "{err}");
        Ok(())
    }

    #[test]
    fn env_references_are_substituted_or_reported() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let s = settings(dir.path());
        std::fs::write(
            &s.config_path,
            "{ agents: { defaults: { workspace: '${WS}' } } }",
        )?;
        let loader = Loader::new()?;
        let state = load(&s, &MapEnv::of([("WS", "/srv/ws")]), &loader, &[]);
        assert_eq!(
            state.ready()?.agent("main")?.workspace,
            std::path::PathBuf::from("/srv/ws")
        );
        let missing = load(&s, &MapEnv::default(), &loader, &[]);
        assert!(
            missing
                .ready()
                .err()
                .is_some_and(|e| e.to_string().contains("WS"))
        );
        Ok(())
    }

    /// A host-network sandbox shares the loopback of the service's own listeners: refused
    /// while one takes no token, naming the key; allowed once none is open, and always for
    /// `network: "none"`.
    #[test]
    fn host_network_sandboxes_are_refused_while_a_listener_takes_no_token()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let s = settings(dir.path());
        let loader = Loader::new()?;
        let open = ["the gRPC API on 127.0.0.1:50052".to_owned()];
        std::fs::write(
            &s.config_path,
            "{ agents: { defaults: { sandbox: { mode: 'non-main', network: 'host' } } } }",
        )?;
        let refused = load(&s, &MapEnv::default(), &loader, &open)
            .ready()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            refused.contains(
                "agent \"main\": sandbox.network \"host\" (agents.defaults.sandbox.network"
            ),
            "{refused}"
        );
        assert!(
            refused.contains("the gRPC API on 127.0.0.1:50052 answers without a token"),
            "{refused}"
        );
        assert!(load(&s, &MapEnv::default(), &loader, &[]).ready().is_ok());
        std::fs::write(
            &s.config_path,
            "{ agents: { defaults: { sandbox: { mode: 'non-main', network: 'none' } } } }",
        )?;
        assert!(load(&s, &MapEnv::default(), &loader, &open).ready().is_ok());
        Ok(())
    }
}
