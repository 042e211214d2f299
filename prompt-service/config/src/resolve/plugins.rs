//! Plugins as far as the services use them: which are enabled, and the skills folders they
//! ship (`plugins.entries.<id>.skills`); and the local documentation folder.

use std::path::PathBuf;

use super::Dirs;
use crate::load::Config;

/// A plugin's skills folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PluginSkills {
    /// The plugin id (the key under `plugins.entries`).
    pub plugin: String,
    /// Its skills folder, `~` expanded (absolute: the loader refuses anything else).
    pub dir: PathBuf,
}

impl Config {
    /// Whether plugin `id` is enabled: plugins are on (`plugins.enabled`), `id` is not in
    /// `plugins.deny`, `plugins.allow` (when given) names it, and its entry does not say
    /// `enabled: false`.
    pub fn plugin_enabled(&self, id: &str) -> bool {
        let Some(plugins) = self.raw().plugins.as_ref() else {
            return true;
        };
        let listed = |list: &Option<Vec<String>>| {
            list.as_ref()
                .map(|l| l.iter().any(|entry| entry.trim() == id))
        };
        plugins.enabled != Some(false)
            && listed(&plugins.deny) != Some(true)
            && listed(&plugins.allow) != Some(false)
            && plugins
                .entries
                .as_ref()
                .and_then(|e| e.get(id))
                .and_then(|e| e.enabled)
                != Some(false)
    }

    /// The enabled plugins among the configured entries, by id.
    pub fn enabled_plugins(&self) -> Vec<String> {
        self.plugin_entries()
            .filter(|id| self.plugin_enabled(id))
            .map(str::to_owned)
            .collect()
    }

    /// Every configured plugin skills folder, enabled or not (discovery skips those of
    /// disabled plugins and reports them), sorted by plugin id.
    pub fn plugin_skills(&self, dirs: &Dirs) -> Vec<PluginSkills> {
        let Some(entries) = self.raw().plugins.as_ref().and_then(|p| p.entries.as_ref()) else {
            return Vec::new();
        };
        entries
            .iter()
            .filter_map(|(id, entry)| {
                let written = entry.skills.as_deref()?.trim();
                Some(PluginSkills {
                    plugin: id.clone(),
                    dir: dirs.expand(written),
                })
            })
            .filter(|p| p.dir.is_absolute())
            .collect()
    }

    /// `agents.defaults.docsPath`, `~` expanded; `None` when unset, blank or relative (the
    /// loader refuses a relative one).
    pub fn docs_path(&self, dirs: &Dirs) -> Option<PathBuf> {
        let written = self.agent_defaults()?.docs_path.as_deref()?.trim();
        let path = dirs.expand(written);
        (!written.is_empty() && path.is_absolute()).then_some(path)
    }

    fn plugin_entries(&self) -> impl Iterator<Item = &str> {
        self.raw()
            .plugins
            .as_ref()
            .and_then(|p| p.entries.as_ref())
            .into_iter()
            .flat_map(|e| e.keys().map(String::as_str))
    }
}
