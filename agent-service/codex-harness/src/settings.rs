//! How the app-server process is started and driven: resolved from the
//! agent's `runtime.codex` settings, with the harness's own defaults.

use std::{path::PathBuf, time::Duration};

use openclaw_config::resolve::CodexSettings;
use serde_json::{Map, Value};

/// The id the inline model provider is registered under
/// (`config."model_providers.openclaw"` and `modelProvider: "openclaw"`).
pub const INLINE_PROVIDER_ID: &str = "openclaw";

/// Features switched off on every start: they sync plugins and apps from
/// github.com and chatgpt.com at startup, which is stray egress in a
/// firewalled deployment (reference, "Startup network attempts").
pub const DISABLED_FEATURES: [&str; 3] = ["plugins", "apps", "remote_plugin"];

/// `-c` overrides applied before the agent's own: Codex's bundled
/// `<skills_instructions>` block would compete with our skills listing,
/// which travels in the turn instructions (P-38; lesson L13, "one
/// coherent persona"). An agent's `configOverrides` come later and win.
pub const DEFAULT_OVERRIDES: [&str; 1] = ["skills.include_instructions=false"];

/// Everything the harness needs to start and drive one app-server.
#[derive(Debug, Clone, PartialEq)]
pub struct HarnessSettings {
    /// The Codex executable (`codex` resolves on PATH).
    pub command: PathBuf,
    /// `CODEX_HOME` for the child; `None` inherits the service's.
    pub codex_home: Option<PathBuf>,
    /// `-c key=value` overrides, in order (ours first, then the agent's).
    pub config_overrides: Vec<String>,
    /// Features passed as `--disable <name>`.
    pub disabled_features: Vec<String>,
    /// Whether Codex offers its own shell (`exec_command`, `write_stdin`).
    /// `false` adds `--disable shell_tool`: set it when the agent's tool
    /// policy denies `exec` or `tools.exec.security` is `deny`, so that
    /// these bind Codex-native exec as well (under `on-request` and `never`
    /// Codex runs sandboxed commands without asking).
    pub native_exec: bool,
    /// An inline `model_providers` table, registered under
    /// [`INLINE_PROVIDER_ID`] on every thread this harness starts or resumes.
    pub model_provider: Option<Map<String, Value>>,
    /// `initialize.capabilities.experimentalApi`. On by default: both
    /// `thread/start.dynamicTools` and `turn/start.collaborationMode` (where
    /// our turn instructions travel) are experimental fields, and the flag is
    /// fixed for the life of the process, which serves every thread.
    pub experimental_api: bool,
    /// `clientInfo.name`: Codex sends it upstream as the `originator` header.
    pub client_name: String,
    /// How long steer messages are collected before one `turn/steer` goes out.
    pub steer_debounce: Duration,
    /// How long a request may wait for its response.
    pub request_timeout: Duration,
    /// How often a running turn checks that the app-server still answers (the watchdog;
    /// see the crate README).
    pub liveness_interval: Duration,
    /// How long the child gets to exit after stdin closes before it is killed.
    pub shutdown_grace: Duration,
}

impl HarnessSettings {
    /// Defaults for `command`: no CODEX_HOME, our overrides, the features
    /// above disabled, no inline provider.
    pub fn new(command: impl Into<PathBuf>) -> Self {
        Self {
            command: command.into(),
            codex_home: None,
            config_overrides: DEFAULT_OVERRIDES.iter().map(|s| (*s).to_owned()).collect(),
            disabled_features: DISABLED_FEATURES.iter().map(|s| (*s).to_owned()).collect(),
            native_exec: true,
            model_provider: None,
            experimental_api: true,
            client_name: "openclaw".to_owned(),
            steer_debounce: Duration::from_millis(500),
            request_timeout: Duration::from_secs(60),
            liveness_interval: Duration::from_secs(15),
            shutdown_grace: Duration::from_secs(3),
        }
    }

    /// The settings of an agent configured with `runtime: {type: "codex", codex: {...}}`.
    /// `approvalPolicy` and `sandbox` are not process settings: they reach
    /// Codex through the mapped thread and turn params (prompt-codex) and the
    /// [`ApprovalRules`](crate::ApprovalRules).
    pub fn from_codex(codex: &CodexSettings) -> Self {
        let mut settings = Self::new(&codex.command);
        settings.codex_home = codex.codex_home.clone();
        settings
            .config_overrides
            .extend(codex.config_overrides.iter().cloned());
        settings.model_provider = codex
            .model_provider
            .as_ref()
            .map(|table| table.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
        settings
    }

    /// The command line after the executable.
    pub(crate) fn args(&self) -> Vec<String> {
        let mut args = vec!["app-server".to_owned()];
        for item in &self.config_overrides {
            args.push("-c".to_owned());
            args.push(item.clone());
        }
        let shell = (!self.native_exec).then(|| "shell_tool".to_owned());
        for feature in self.disabled_features.iter().chain(&shell) {
            args.push("--disable".to_owned());
            args.push(feature.clone());
        }
        args.extend(["--listen".to_owned(), "stdio://".to_owned()]);
        args
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    #[test]
    fn agent_settings_become_a_command_line() {
        let codex = CodexSettings {
            command: "/opt/codex".to_owned(),
            codex_home: Some(PathBuf::from("/var/lib/codex")),
            config_overrides: vec!["model_reasoning_summary=\"none\"".to_owned()],
            approval_policy: None,
            sandbox: None,
            model_provider: Some(BTreeMap::from([(
                "base_url".to_owned(),
                json!("http://127.0.0.1:9/v1"),
            )])),
        };
        let settings = HarnessSettings::from_codex(&codex);
        assert_eq!(settings.command, PathBuf::from("/opt/codex"));
        assert_eq!(
            settings.args(),
            [
                "app-server",
                "-c",
                "skills.include_instructions=false",
                "-c",
                "model_reasoning_summary=\"none\"",
                "--disable",
                "plugins",
                "--disable",
                "apps",
                "--disable",
                "remote_plugin",
                "--listen",
                "stdio://",
            ]
        );
        let mut no_shell = settings.clone();
        no_shell.native_exec = false;
        assert!(
            no_shell
                .args()
                .windows(2)
                .any(|w| w == ["--disable", "shell_tool"])
        );
        assert_eq!(
            settings.model_provider.as_ref().map(|t| t.len()),
            Some(1),
            "the provider table is kept whole"
        );
    }
}
