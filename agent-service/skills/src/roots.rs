//! The skill roots of one agent, highest priority first.

use std::path::{Path, PathBuf};

use openclaw_config::resolve::Dirs;

use crate::report::{SkipReason, Skipped};

/// Where a root comes from. The order of the variants is the merge priority, highest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RootKind {
    /// `<workspace>/skills`.
    Workspace,
    /// `<workspace>/.agents/skills`.
    WorkspaceAgents,
    /// `~/.agents/skills`.
    PersonalAgents,
    /// `<stateDir>/skills` (`~/.openclaw/skills`).
    Managed,
    /// The skills shipped with the service.
    Bundled,
    /// A directory from `skills.load.extraDirs`.
    Extra,
    /// A directory shipped by a plugin; present only while the plugin is enabled.
    Plugin,
}

impl RootKind {
    /// OpenClaw's name for the source (what its status and UI show).
    pub fn source(self) -> &'static str {
        match self {
            Self::Workspace => "openclaw-workspace",
            Self::WorkspaceAgents => "agents-skills-project",
            Self::PersonalAgents => "agents-skills-personal",
            Self::Managed => "openclaw-managed",
            Self::Bundled => "openclaw-bundled",
            Self::Extra | Self::Plugin => "openclaw-extra",
        }
    }

    /// How deep grouping folders may nest below the root: configured roots are scanned
    /// shallowly because they may point at large, unrelated trees.
    pub fn max_depth(self) -> usize {
        match self {
            Self::Extra | Self::Plugin => 2,
            _ => 6,
        }
    }

    /// Whether someone configured this root explicitly, so its absence is worth reporting.
    pub fn is_configured(self) -> bool {
        matches!(self, Self::Extra | Self::Plugin)
    }
}

/// One directory searched for skills.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Root {
    /// Where it comes from.
    pub kind: RootKind,
    /// The directory, absolute.
    pub dir: PathBuf,
    /// The plugin that ships it, for [`RootKind::Plugin`].
    pub plugin: Option<String>,
}

/// A skills directory shipped by a plugin.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PluginSkillRoot {
    /// The plugin id.
    pub plugin: String,
    /// Its skills directory, absolute.
    pub dir: PathBuf,
}

/// What [`plan`] needs.
pub(crate) struct RootInputs<'a> {
    pub workspace: &'a Path,
    pub dirs: &'a Dirs,
    pub bundled: Option<&'a Path>,
    pub extra_dirs: &'a [String],
    pub plugin_roots: &'a [PluginSkillRoot],
    pub enabled_plugins: &'a [String],
}

/// Lists the roots in priority order. Extra dirs keep their configured order (earlier wins);
/// plugin roots come last, ordered by plugin id then directory. Relative extra dirs and roots
/// of disabled plugins are reported, not searched.
pub(crate) fn plan(inputs: &RootInputs<'_>) -> (Vec<Root>, Vec<Skipped>) {
    let root = |kind, dir: PathBuf| Root {
        kind,
        dir,
        plugin: None,
    };
    let mut roots = vec![
        root(RootKind::Workspace, inputs.workspace.join("skills")),
        root(
            RootKind::WorkspaceAgents,
            inputs.workspace.join(".agents").join("skills"),
        ),
        root(
            RootKind::PersonalAgents,
            inputs.dirs.home_dir.join(".agents").join("skills"),
        ),
        root(RootKind::Managed, inputs.dirs.state_dir.join("skills")),
    ];
    if let Some(bundled) = inputs.bundled {
        roots.push(root(RootKind::Bundled, bundled.to_path_buf()));
    }
    let mut skipped = Vec::new();
    for written in inputs.extra_dirs {
        let written = written.trim();
        if written.is_empty() {
            continue;
        }
        let dir = inputs.dirs.expand(written);
        if dir.is_absolute() {
            roots.push(root(RootKind::Extra, dir));
        } else {
            // Relative to what? OpenClaw uses the gateway's cwd; we refuse to guess.
            skipped.push(Skipped {
                path: dir,
                name: None,
                root: None,
                reason: SkipReason::RelativePath {
                    setting: "skills.load.extraDirs",
                },
            });
        }
    }
    let mut plugin_roots: Vec<&PluginSkillRoot> = inputs.plugin_roots.iter().collect();
    plugin_roots.sort();
    for plugin_root in plugin_roots {
        let candidate = Root {
            kind: RootKind::Plugin,
            dir: plugin_root.dir.clone(),
            plugin: Some(plugin_root.plugin.clone()),
        };
        if inputs.enabled_plugins.contains(&plugin_root.plugin) {
            roots.push(candidate);
        } else {
            skipped.push(Skipped {
                path: plugin_root.dir.clone(),
                name: None,
                root: Some(candidate),
                reason: SkipReason::PluginDisabled {
                    plugin: plugin_root.plugin.clone(),
                },
            });
        }
    }
    (roots, skipped)
}
