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

    /// These settings with a relative state dir or config path taken from `cwd`, by the
    /// rule every binary uses ([`absolute_in`]): the runtime hands workspace paths to
    /// prompt-service, which accepts absolute ones only, so a relative `--state-dir` must
    /// not survive start-up.
    pub fn anchored(self, cwd: &Path) -> Self {
        Self {
            state_dir: absolute_in(cwd, &self.state_dir),
            config_path: absolute_in(cwd, &self.config_path),
            home_dir: self.home_dir,
        }
    }

    /// Creates the state directory when missing and proves it writable (a probe file is
    /// created and removed), so a server never reports ready on a directory where no
    /// session can be written. The error names the directory.
    pub fn check_state_dir(&self) -> Result<(), std::io::Error> {
        let dir = &self.state_dir;
        let named = |e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("state dir {}: {e}", dir.display()))
        };
        std::fs::create_dir_all(dir).map_err(named)?;
        let probe = dir.join(format!(".write-check-{}", std::process::id()));
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&probe)
            .map_err(named)?;
        std::fs::remove_file(&probe).map_err(named)
    }
}

/// `path` made absolute against `cwd`, lexically: `.` components dropped, `..` and
/// symlinks kept as given (resolving them would need the path to exist).
pub fn absolute_in(cwd: &Path, path: &Path) -> PathBuf {
    cwd.join(path).components().collect()
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
    fn relative_paths_are_taken_from_the_working_directory() {
        let env = MapEnv::of([("HOME", "/home/u"), ("OPENCLAW_STATE_DIR", "./rel/state")]);
        let s = Settings::resolve(&Flags::default(), &env)
            .ok()
            .map(|s| s.anchored(Path::new("/work/dir")));
        assert_eq!(
            s.as_ref().map(|s| s.state_dir.clone()),
            Some("/work/dir/rel/state".into())
        );
        assert_eq!(
            s.map(|s| s.config_path),
            Some("/work/dir/rel/state/openclaw.json".into())
        );
        assert_eq!(
            absolute_in(Path::new("/a"), Path::new("/abs/./x")),
            PathBuf::from("/abs/x")
        );
        assert_eq!(
            absolute_in(Path::new("/a/b"), Path::new("../c")),
            PathBuf::from("/a/b/../c")
        );
    }

    #[test]
    fn a_state_dir_that_cannot_be_written_is_found() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let blocker = tmp.path().join("file");
        std::fs::write(&blocker, "x").expect("write");
        let settings = Settings {
            state_dir: blocker.join("state"),
            config_path: blocker.join("state/openclaw.json"),
            home_dir: tmp.path().into(),
        };
        let error = settings.check_state_dir().err().map(|e| e.to_string());
        assert!(
            error.as_deref().is_some_and(
                |e| e.starts_with(&format!("state dir {}", blocker.join("state").display()))
            ),
            "{error:?}"
        );
        let fine = Settings {
            state_dir: tmp.path().join("new/state"),
            ..settings
        };
        assert!(fine.check_state_dir().is_ok());
        assert!(tmp.path().join("new/state").is_dir());
    }

    #[test]
    fn missing_home_is_an_error_naming_it() {
        let err = Settings::resolve(&Flags::default(), &MapEnv::default()).err();
        assert!(err.is_some_and(|e| e.to_string().starts_with("HOME:")));
    }
}
