//! A temporary home with a workspace, a state dir and a bundled dir, plus a fake host.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use openclaw_config::raw::SkillsConfig;
use openclaw_config::resolve::{Dirs, SkillAllowlist, SkillsLimits};
use openclaw_config::{LoadOptions, NoEnv, UnresolvedVars};
use openclaw_skills::{
    Consulted, DiscoverInput, Discovery, Host, Platform, PluginSkillRoot, SkipReason, Skipped,
    discover, discover_consulted,
};
use serde_json::Value;
use tempfile::TempDir;

/// Answers the gates from fixed sets; never reads the real environment.
#[derive(Debug, Clone)]
pub struct FakeHost {
    pub platform: Platform,
    pub env: BTreeSet<String>,
    pub bins: BTreeSet<String>,
}

impl Host for FakeHost {
    fn platform(&self) -> Platform {
        self.platform
    }
    fn env_is_set(&self, name: &str) -> bool {
        self.env.contains(name)
    }
    fn has_bin(&self, name: &str) -> bool {
        self.bins.contains(name)
    }
}

pub struct World {
    _tmp: TempDir,
    pub home: PathBuf,
    pub workspace: PathBuf,
    pub state: PathBuf,
    pub bundled: PathBuf,
    /// Outside home, for extra dirs and symlink targets.
    pub outside: PathBuf,
    pub skills: SkillsConfig,
    pub allowlist: SkillAllowlist,
    pub limits: SkillsLimits,
    pub config: Option<Value>,
    pub host: FakeHost,
    pub plugin_roots: Vec<PluginSkillRoot>,
    pub enabled_plugins: Vec<String>,
}

impl World {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        // Real paths, so containment checks compare like with like on every OS.
        let base = fs::canonicalize(tmp.path()).unwrap();
        let home = base.join("home");
        let outside = base.join("outside");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&outside).unwrap();
        Self {
            workspace: home.join("ws"),
            state: home.join(".openclaw"),
            bundled: base.join("bundled"),
            home,
            outside,
            _tmp: tmp,
            skills: SkillsConfig::default(),
            allowlist: SkillAllowlist::All,
            limits: SkillsLimits::default(),
            config: None,
            host: FakeHost {
                platform: Platform::Linux,
                env: BTreeSet::new(),
                bins: BTreeSet::new(),
            },
            plugin_roots: Vec::new(),
            enabled_plugins: Vec::new(),
        }
    }

    pub fn dirs(&self) -> Dirs {
        Dirs {
            home_dir: self.home.clone(),
            state_dir: self.state.clone(),
        }
    }

    /// Sets `skills`, the config JSON and the allowlist and limits of `agent` from JSON5 text.
    pub fn config(&mut self, text: &str, agent: &str) {
        let options = LoadOptions {
            unresolved_vars: UnresolvedVars::Keep,
        };
        let config = openclaw_config::load(text, &NoEnv, &options).unwrap();
        let view = config.agent(agent, &self.dirs()).unwrap();
        self.skills = config.raw().skills.clone().unwrap_or_default();
        self.allowlist = view.skills;
        self.limits = view.skills_limits;
        self.config = Some(config.value().clone());
    }

    /// Configures `skills.load.<key>` (`extraDirs`, `allowSymlinkTargets`) as `dirs`, for
    /// agent `main`.
    pub fn load_dirs(&mut self, key: &str, dirs: &[&Path]) {
        let quoted: Vec<String> = dirs.iter().map(|d| format!("'{}'", d.display())).collect();
        self.config(
            &format!(
                "{{ skills: {{ load: {{ {key}: [{}] }} }} }}",
                quoted.join(", ")
            ),
            "main",
        );
    }

    /// Runs `f` on this world's discovery inputs with `host` for the gates.
    fn with_input<T>(&self, host: &dyn Host, f: impl FnOnce(&DiscoverInput<'_>) -> T) -> T {
        let dirs = self.dirs();
        f(&DiscoverInput {
            workspace: &self.workspace,
            dirs: &dirs,
            bundled_dir: Some(&self.bundled),
            plugin_roots: &self.plugin_roots,
            enabled_plugins: &self.enabled_plugins,
            skills: &self.skills,
            allowlist: &self.allowlist,
            limits: &self.limits,
            config: self.config.as_ref(),
            host,
        })
    }

    pub fn try_discover(&self) -> Result<Discovery, openclaw_skills::Error> {
        self.with_input(&self.host, discover)
    }

    pub fn discover(&self) -> Discovery {
        self.try_discover().unwrap()
    }

    /// `discover_consulted` with this world's inputs and `host` for the gates.
    pub fn discover_consulted(&self, host: &dyn Host) -> (Discovery, Consulted) {
        self.with_input(host, |input| discover_consulted(input).unwrap())
    }
}

/// Writes `<dir>/SKILL.md` with a name and description; returns the file.
pub fn skill(dir: &Path, name: &str, description: &str) -> PathBuf {
    write_skill(
        dir,
        &format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
    )
}

/// Writes `<dir>/SKILL.md` with exactly this text; returns the file.
pub fn write_skill(dir: &Path, text: &str) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let file = dir.join("SKILL.md");
    fs::write(&file, text).unwrap();
    file
}

/// A skill whose frontmatter carries this `metadata.openclaw` JSON.
pub fn gated(dir: &Path, name: &str, openclaw: &str) -> PathBuf {
    write_skill(
        dir,
        &format!(
            "---\nname: {name}\ndescription: d\nmetadata: {{\"openclaw\": {openclaw}}}\n---\n"
        ),
    )
}

pub fn names(discovery: &Discovery) -> Vec<&str> {
    discovery.skills.iter().map(|s| s.name.as_str()).collect()
}

/// The skipped entries' (name or file name, reason) pairs.
pub fn reasons(discovery: &Discovery) -> Vec<(String, SkipReason)> {
    discovery
        .skipped
        .iter()
        .map(|s: &Skipped| {
            let label = s.name.clone().unwrap_or_else(|| {
                s.path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
            (label, s.reason.clone())
        })
        .collect()
}
