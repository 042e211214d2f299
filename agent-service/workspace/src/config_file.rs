//! The starter `openclaw.json`: created by setup when the state dir has none, never
//! overwriting one that exists.

use std::path::{Path, PathBuf};

use crate::durable;
use crate::error::{Result, io_at};

/// The config file's name in the state dir.
pub const CONFIG_FILE_NAME: &str = "openclaw.json";

const TEMPLATE: &str = include_str!("../templates/openclaw.json5");
const WORKSPACE_PLACEHOLDER: &str = "__WORKSPACE__";

/// What [`ensure_config_file`] found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// `<stateDir>/openclaw.json`.
    pub path: PathBuf,
    /// Whether this call created it (`false`: it already existed and was left untouched).
    pub created: bool,
}

/// The starter config text: a minimal JSON5 config with comments, setting
/// `agents.defaults.workspace` to `workspace` (written as given, `~` and all), and a
/// commented-out `channels.whatsapp.allowFrom` example.
pub fn default_config_text(workspace: &str) -> String {
    // A JSON string literal is a valid JSON5 string literal, whatever `workspace` holds.
    let literal = serde_json::Value::String(workspace.to_owned()).to_string();
    TEMPLATE.replace(WORKSPACE_PLACEHOLDER, &literal)
}

/// Creates the config file at `path` (normally `<stateDir>/openclaw.json`) from
/// [`default_config_text`] when nothing exists under
/// that name: written to a temporary file, fsynced, and published only if the name is still
/// free, with mode 0600 (a config holds channel tokens sooner or later). A missing state dir is
/// created with mode 0700.
///
/// When anything is already there (a file, a symlink such as a Kubernetes ConfigMap's, even a
/// dangling one) nothing at all is written, not even a temporary file: deployments mount the
/// config from a read-only directory, where any write fails.
pub fn ensure_config_file(path: &Path, workspace: &str) -> Result<ConfigFile> {
    let path = path.to_path_buf();
    match std::fs::symlink_metadata(&path) {
        Ok(_) => {
            return Ok(ConfigFile {
                path,
                created: false,
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_at(&path)(e)),
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    durable::create_private_dir(dir).map_err(io_at(dir))?;
    let text = default_config_text(workspace);
    // Still publish-if-free: another process may create the file after the check above.
    let created =
        durable::create_new(&path, text.as_bytes(), durable::PRIVATE_FILE).map_err(io_at(&path))?;
    Ok(ConfigFile { path, created })
}
