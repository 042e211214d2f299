//! The demo setup: an `openclaw.json` that uses the offline scripted model,
//! and the script it plays. No account, no network.

use std::path::{Path, PathBuf};

use crate::error::CliError;

/// The state directory `up --demo` and `demo` use unless told otherwise
/// (relative to the current directory).
pub const DEMO_STATE_DIR: &str = ".openclaw-demo";

/// The script file written next to the demo config.
pub const DEMO_SCRIPT_FILE: &str = "demo-script.json5";

/// The model reference the demo config selects: provider `scripted`, model
/// `demo` (listed in the provider's catalog so the reference resolves).
pub const DEMO_MODEL: &str = "scripted/demo";

/// The message the demo turn sends. The script reads AGENTS.md with the
/// `read` tool whatever the message, then answers quoting it.
pub const DEMO_MESSAGE: &str = "What do your workspace instructions say?";

/// The demo `openclaw.json` (JSON5). The script path is relative to the
/// config file's directory.
pub const DEMO_CONFIG: &str = r#"// Written by `openclaw up --demo` / `openclaw demo`: the offline scripted model,
// no account and no network. The model is a script (demo-script.json5): it
// calls the `read` tool on AGENTS.md, then answers quoting it.
//
// To talk to a real model, add its provider and point the default model at it:
//   models: { providers: {
//     anthropic: { api: "anthropic-messages", baseUrl: "https://api.anthropic.com", apiKey: "${ANTHROPIC_API_KEY}" },
//   } },
//   agents: { defaults: { model: "anthropic/claude-sonnet-4-5" } },
{
  agents: {
    defaults: {
      model: "scripted/demo",
    },
  },
  models: {
    providers: {
      scripted: {
        api: "scripted",
        script: "demo-script.json5",
        models: [{ id: "demo", name: "Offline scripted demo model" }],
      },
    },
  },
}
"#;

/// What [`write_demo_files`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoFiles {
    /// The config file.
    pub config_path: PathBuf,
    /// True when the config was written now (it did not exist).
    pub config_written: bool,
    /// The script file next to it.
    pub script_path: PathBuf,
    /// True when the script was written now.
    pub script_written: bool,
}

/// Writes the demo config at `config_path` when no file exists there, and
/// with it the demo script next to it (unless one exists). An existing
/// config is never touched: it may be the user's own.
pub fn write_demo_files(config_path: &Path) -> Result<DemoFiles, CliError> {
    let dir = config_path.parent().unwrap_or_else(|| Path::new("."));
    let script_path = dir.join(DEMO_SCRIPT_FILE);
    let mut files = DemoFiles {
        config_path: config_path.to_path_buf(),
        config_written: false,
        script_path,
        script_written: false,
    };
    if config_path.exists() {
        return Ok(files);
    }
    std::fs::create_dir_all(dir).map_err(|source| CliError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    if !files.script_path.exists() {
        write_new(&files.script_path, openclaw_providers::DEMO_SCRIPT)?;
        files.script_written = true;
    }
    write_new(config_path, DEMO_CONFIG)?;
    files.config_written = true;
    Ok(files)
}

/// Creates a file that must not exist yet (never overwrites).
fn write_new(path: &Path, text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()
    };
    write().map_err(|source| CliError::Write {
        path: path.to_path_buf(),
        source,
    })
}
