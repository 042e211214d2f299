//! Where the runtime keeps its state and finds its config: flags over
//! environment over defaults (`~/.openclaw`).

use std::path::{Path, PathBuf};

use crate::{env::Env, error::RuntimeError};

/// Command-line choices; `None` falls back to the environment, then defaults.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// `--state-dir`.
    pub state_dir: Option<PathBuf>,
    /// `--config`.
    pub config: Option<PathBuf>,
}

/// Resolved locations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// State directory: sessions, workspaces, proof markers.
    pub state_dir: PathBuf,
    /// Path of `openclaw.json`.
    pub config_path: PathBuf,
    /// The user's home directory (for `~` in configured paths).
    pub home_dir: PathBuf,
}

impl Settings {
    /// Resolves: `--state-dir` > `OPENCLAW_STATE_DIR` > `~/.openclaw`;
    /// `--config` > `OPENCLAW_CONFIG_PATH` > `<stateDir>/openclaw.json`.
    pub fn resolve(flags: &Flags, env: &dyn Env) -> Result<Self, RuntimeError> {
        let home_dir = env
            .var("HOME")
            .filter(|h| !h.trim().is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| {
                RuntimeError::invalid("HOME", "is not set; pass --state-dir and --config")
            })?;
        let expand = |p: &Path| -> PathBuf {
            match p.strip_prefix("~") {
                Ok(rest) => home_dir.join(rest),
                Err(_) => p.to_path_buf(),
            }
        };
        let state_dir = flags
            .state_dir
            .clone()
            .or_else(|| {
                env.var("OPENCLAW_STATE_DIR")
                    .filter(|s| !s.trim().is_empty())
                    .map(PathBuf::from)
            })
            .map_or_else(|| home_dir.join(".openclaw"), |p| expand(&p));
        let config_path = flags
            .config
            .clone()
            .or_else(|| {
                env.var("OPENCLAW_CONFIG_PATH")
                    .filter(|s| !s.trim().is_empty())
                    .map(PathBuf::from)
            })
            .map_or_else(|| state_dir.join("openclaw.json"), |p| expand(&p));
        Ok(Self {
            state_dir,
            config_path,
            home_dir,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::MapEnv;

    #[test]
    fn flags_over_env_over_defaults() {
        let env = MapEnv::of([("HOME", "/home/u")]);
        let s = Settings::resolve(&Flags::default(), &env).ok();
        assert_eq!(
            s.as_ref().map(|s| s.state_dir.clone()),
            Some("/home/u/.openclaw".into())
        );
        assert_eq!(
            s.map(|s| s.config_path),
            Some("/home/u/.openclaw/openclaw.json".into())
        );

        let env = MapEnv::of([
            ("HOME", "/home/u"),
            ("OPENCLAW_STATE_DIR", "~/state"),
            ("OPENCLAW_CONFIG_PATH", "/etc/oc.json"),
        ]);
        let s = Settings::resolve(&Flags::default(), &env).ok();
        assert_eq!(
            s.as_ref().map(|s| s.state_dir.clone()),
            Some("/home/u/state".into())
        );
        assert_eq!(s.map(|s| s.config_path), Some("/etc/oc.json".into()));

        let flags = Flags {
            state_dir: Some("/flag/state".into()),
            config: None,
        };
        let s = Settings::resolve(&flags, &env).ok();
        assert_eq!(s.map(|s| s.state_dir), Some("/flag/state".into()));
    }

    #[test]
    fn missing_home_is_an_error_naming_it() {
        let err = Settings::resolve(&Flags::default(), &MapEnv::default()).err();
        assert!(err.is_some_and(|e| e.to_string().starts_with("HOME:")));
    }
}
