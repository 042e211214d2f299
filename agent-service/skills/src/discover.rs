//! The entry point: roots, scan, merge, gates, allowlist, fingerprint.

use std::path::{Path, PathBuf};

use openclaw_config::raw::SkillsConfig;
use openclaw_config::resolve::{Dirs, SkillAllowlist, SkillsLimits};
use serde_json::Value;

use crate::consulted::Consulted;
use crate::error::Error;
use crate::fingerprint::fingerprint;
use crate::gates::{self, GateInputs};
use crate::host::Host;
use crate::merge::merge;
use crate::report::{SkipReason, Skipped};
use crate::roots::{self, PluginSkillRoot, RootInputs};
use crate::scan::{self, Loaded, ScanLimits};
use crate::skill::{DiscoveredSkill, Discovery, display_path, sha256_hex, version_tag};

/// Everything discovery reads besides the filesystem.
#[derive(Clone, Copy)]
pub struct DiscoverInput<'a> {
    /// The agent's workspace, absolute.
    pub workspace: &'a Path,
    /// Home (for `~/.agents/skills`, `~` in configured paths and `~/` in display paths) and
    /// state directory (for `<stateDir>/skills`), both absolute.
    pub dirs: &'a Dirs,
    /// The bundled skills directory, if this build ships one (it may be absent on disk).
    pub bundled_dir: Option<&'a Path>,
    /// Skills directories shipped by plugins.
    pub plugin_roots: &'a [PluginSkillRoot],
    /// Ids of the enabled plugins; other plugins' roots are skipped.
    pub enabled_plugins: &'a [String],
    /// `skills.*` as written (`Config::raw().skills`, or the default when absent).
    pub skills: &'a SkillsConfig,
    /// The agent's allowlist (`AgentView::skills`).
    pub allowlist: &'a SkillAllowlist,
    /// The agent's limits (`AgentView::skills_limits`).
    pub limits: &'a SkillsLimits,
    /// The loaded config JSON (`Config::value()`), for `requires.config`.
    pub config: Option<&'a Value>,
    /// Platform, environment and PATH.
    pub host: &'a dyn Host,
}

impl std::fmt::Debug for DiscoverInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscoverInput")
            .field("workspace", &self.workspace)
            .field("dirs", &self.dirs)
            .field("bundled_dir", &self.bundled_dir)
            .field("plugin_roots", &self.plugin_roots)
            .field("enabled_plugins", &self.enabled_plugins)
            .field("allowlist", &self.allowlist)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// Discovers the skills available to one agent.
///
/// Reads the roots synchronously with `std::fs`; every read is bounded by the limits. Only
/// relative input paths are errors; everything that goes wrong below a root is reported in
/// [`Discovery::skipped`] and [`Discovery::collisions`].
pub fn discover(input: &DiscoverInput<'_>) -> Result<Discovery, Error> {
    discover_consulted(input).map(|(discovery, _)| discovery)
}

/// [`discover`], with every path it read stamped, so the caller may keep the discovery while
/// [`Consulted::still_holds`] (see [`Consulted`] for what the stamps cover and when a
/// discovery may be kept at all).
pub fn discover_consulted(input: &DiscoverInput<'_>) -> Result<(Discovery, Consulted), Error> {
    check_absolute(input)?;
    let mut consulted = Consulted::default();
    let load = input.skills.load.as_ref();
    let extra_dirs = load.and_then(|l| l.extra_dirs.as_deref()).unwrap_or(&[]);
    let (roots, mut skipped) = roots::plan(&RootInputs {
        workspace: input.workspace,
        dirs: input.dirs,
        bundled: input.bundled_dir,
        extra_dirs,
        plugin_roots: input.plugin_roots,
        enabled_plugins: input.enabled_plugins,
    });
    let targets = load
        .and_then(|l| l.allow_symlink_targets.as_deref())
        .unwrap_or(&[]);
    let allowed_targets = allowed_targets(targets, input.dirs, &mut skipped, &mut consulted);
    let limits = ScanLimits {
        max_candidates: input.limits.max_candidates_per_root,
        max_skills: input.limits.max_skills_loaded_per_source,
        max_file_bytes: input.limits.max_skill_file_bytes,
    };
    let mut loaded = Vec::new();
    for root in &roots {
        scan::scan_root(
            root,
            &allowed_targets,
            limits,
            &mut loaded,
            &mut skipped,
            &mut consulted,
        );
    }
    let (kept, collisions) = merge(loaded);
    let host = Probed {
        host: input.host,
        consulted: std::cell::RefCell::new(consulted),
    };
    let gate_inputs = GateInputs {
        skills: input.skills,
        host: &host,
        config: input.config,
    };
    let mut skills = Vec::new();
    for skill in kept {
        let metadata = &skill.frontmatter.metadata;
        let verdict =
            gates::check(&skill.name, skill.root.kind, metadata, &gate_inputs).and_then(|()| {
                // The agent's allowlist filters last.
                if input.allowlist.allows(&skill.name) {
                    Ok(())
                } else {
                    Err(SkipReason::NotInAgentAllowlist)
                }
            });
        match verdict {
            Ok(()) => skills.push(listed(skill, &input.dirs.home_dir)),
            Err(reason) => skipped.push(Skipped {
                path: skill.file,
                name: Some(skill.name),
                root: Some(skill.root),
                reason,
            }),
        }
    }
    let fingerprint = fingerprint(&skills, input);
    let discovery = Discovery {
        skills,
        collisions,
        skipped,
        fingerprint,
    };
    Ok((discovery, host.consulted.into_inner()))
}

/// The caller's host, stamping the files a program lookup probes before it probes them.
struct Probed<'a> {
    host: &'a dyn Host,
    consulted: std::cell::RefCell<Consulted>,
}

impl Host for Probed<'_> {
    fn platform(&self) -> crate::host::Platform {
        self.host.platform()
    }

    fn env_is_set(&self, name: &str) -> bool {
        self.host.env_is_set(name)
    }

    fn has_bin(&self, name: &str) -> bool {
        let mut consulted = self.consulted.borrow_mut();
        for file in self.host.bin_candidates(name) {
            consulted.record(&file);
        }
        drop(consulted);
        self.host.has_bin(name)
    }

    fn bin_candidates(&self, name: &str) -> Vec<PathBuf> {
        self.host.bin_candidates(name)
    }
}

fn check_absolute(input: &DiscoverInput<'_>) -> Result<(), Error> {
    let mut paths: Vec<(&'static str, &Path)> = vec![
        ("workspace", input.workspace),
        ("home_dir", &input.dirs.home_dir),
        ("state_dir", &input.dirs.state_dir),
    ];
    paths.extend(input.bundled_dir.map(|b| ("bundled_dir", b)));
    paths.extend(
        input
            .plugin_roots
            .iter()
            .map(|r| ("plugin_roots", r.dir.as_path())),
    );
    match paths.into_iter().find(|(_, p)| !p.is_absolute()) {
        Some((field, path)) => Err(Error::RelativePath {
            field,
            path: path.to_path_buf(),
        }),
        None => Ok(()),
    }
}

/// `skills.load.allowSymlinkTargets`, `~` expanded and resolved to real paths (a target that
/// does not exist yet is kept as written). Relative entries are reported and ignored.
fn allowed_targets(
    written: &[String],
    dirs: &Dirs,
    skipped: &mut Vec<Skipped>,
    consulted: &mut Consulted,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for target in written.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        let path = dirs.expand(target);
        if !path.is_absolute() {
            skipped.push(Skipped {
                path,
                name: None,
                root: None,
                reason: SkipReason::RelativePath {
                    setting: "skills.load.allowSymlinkTargets",
                },
            });
            continue;
        }
        consulted.record(&path);
        out.push(std::fs::canonicalize(&path).unwrap_or(path));
    }
    out
}

fn listed(skill: Loaded, home: &Path) -> DiscoveredSkill {
    let Loaded {
        root,
        file,
        name,
        description,
        content,
        frontmatter,
        ..
    } = skill;
    let sha256 = sha256_hex(&content);
    let display_location = display_path(&file, home);
    let version = version_tag(&display_location, &sha256);
    let skill_key = gates::skill_key(&name, &frontmatter.metadata).to_owned();
    DiscoveredSkill {
        display_location,
        location: file,
        sha256,
        version,
        root,
        skill_key,
        user_invocable: frontmatter.user_invocable,
        model_invocable: !frontmatter.disable_model_invocation,
        emoji: frontmatter.metadata.emoji.clone(),
        homepage: frontmatter.homepage,
        metadata: frontmatter.metadata,
        warnings: frontmatter.warnings,
        name,
        description,
        content,
    }
}
