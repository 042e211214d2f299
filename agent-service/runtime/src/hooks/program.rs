//! Which hook commands may run: a hook runs as the service, outside every sandbox, so the code
//! it runs must be code no session can write.
//!
//! The class of attack: a session changes what a hook executes. It can write its workspace
//! (the `write` tool, a sandboxed `exec`), so a program or script inside any workspace, the
//! sandbox workspace root or the state directory is refused; so is one reached through a
//! symbolic link into them, one another user can rewrite (group- or world-writable, owned by
//! someone other than root or the service, or under such a directory), and an argument that
//! names such a file (`["sh", "hooks/x.sh"]` runs the script as surely as `["hooks/x.sh"]`).
//! A bare program name is looked up on `PATH`, skipping relative entries and entries inside
//! those directories. The rule is applied when the config loads and again before every run,
//! on the real path, so a file moved or linked into a workspace later is refused then.
//!
//! What a program reads without being told is part of the same class. The environment (an
//! interpreter reads `BASH_ENV`, `PYTHONPATH`, `LD_PRELOAD`): a hook gets only `PATH` (as
//! filtered here), `HOME` (when it lies outside those directories) and `LANG`. The working
//! directory: `python3 -c` imports modules from it before the standard library, `git` reads
//! `.git/config` there (whose `core.fsmonitor` is a command), `make` and `npm` read their
//! recipes there, so a hook whose working directory were a workspace would run whatever a
//! session put there. A hook runs in [`RUN_DIR`], which only root can write; the request it
//! reads on stdin names the workspace.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use openclaw_config::resolve::AgentView;

/// `PATH` when the service's environment has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The working directory of every hook command: a directory no session can write (see the
/// module docs).
pub(crate) const RUN_DIR: &str = "/";

/// Why a hook command does not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The program is not there (an ordinary failure: `onError` applies).
    Missing(String),
    /// The command runs code a session or another user can change.
    Unsafe(String),
}

/// A directory sessions can write, and what it is (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Root {
    path: PathBuf,
    what: String,
}

/// What a hook command is judged against and launched with: the directories sessions can
/// write and the few variables a hook inherits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HookLaunch {
    roots: Vec<Root>,
    path: Option<OsString>,
    home: Option<String>,
    lang: Option<String>,
}

impl HookLaunch {
    /// The launch of hooks for these agents: the state directory, each agent's workspace and
    /// sandbox workspace root are off limits; `PATH`, `HOME` and `LANG` come from `var`.
    pub fn for_agents(
        state_dir: &Path,
        agents: &[AgentView],
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let mut roots = vec![(state_dir.to_path_buf(), "the state directory".to_owned())];
        for agent in agents {
            roots.push((
                agent.workspace.clone(),
                format!("the workspace of agent {}", agent.id),
            ));
            roots.push((
                agent.sandbox.workspace_root.clone(),
                format!("the sandbox workspaces of agent {}", agent.id),
            ));
        }
        Self::new(roots, var)
    }

    /// A launch that keeps hooks out of `roots` (each a directory and what it is, for
    /// messages); `PATH`, `HOME` and `LANG` come from `var`.
    pub fn new(roots: Vec<(PathBuf, String)>, var: &dyn Fn(&str) -> Option<String>) -> Self {
        let mut launch = Self {
            roots: roots
                .into_iter()
                .map(|(path, what)| Root { path, what })
                .collect(),
            path: None,
            home: None,
            lang: var("LANG"),
        };
        // A HOME inside a directory sessions can write would hand them `~/.gitconfig`,
        // `~/.bashrc` and the like.
        launch.home = var("HOME").filter(|home| launch.inside(Path::new(home)).is_none());
        let path = var("PATH").unwrap_or_else(|| DEFAULT_PATH.to_owned());
        let kept: Vec<PathBuf> = std::env::split_paths(&path)
            .filter(|dir| dir.is_absolute() && launch.inside(dir).is_none())
            .collect();
        launch.path = std::env::join_paths(kept).ok();
        launch
    }

    /// The variables a hook runs with, and nothing else.
    pub(crate) fn env(&self) -> Vec<(&'static str, OsString)> {
        let mut env = Vec::new();
        if let Some(path) = &self.path {
            env.push(("PATH", path.clone()));
        }
        if let Some(home) = &self.home {
            env.push(("HOME", OsString::from(home)));
        }
        if let Some(lang) = &self.lang {
            env.push(("LANG", OsString::from(lang)));
        }
        env
    }

    /// The root `path` lies in, judged both as given and with symbolic links resolved.
    fn inside(&self, path: &Path) -> Option<&Root> {
        let real = std::fs::canonicalize(path).ok();
        self.roots.iter().find(|root| {
            let root_real = std::fs::canonicalize(&root.path).ok();
            let candidates = [Some(path), real.as_deref()];
            let roots = [Some(root.path.as_path()), root_real.as_deref()];
            candidates.iter().flatten().any(|p| {
                roots
                    .iter()
                    .flatten()
                    .any(|r| normal(p).starts_with(normal(r)))
            })
        })
    }

    /// The real path of the program `argv` runs, when every rule holds; otherwise why not.
    /// A relative argument is judged as a name in `cwd` (the workspace, where the operator may
    /// have meant it) and in [`RUN_DIR`] (where the program reads it).
    pub fn check(&self, argv: &[String], cwd: &Path) -> Result<PathBuf, Refusal> {
        let missing = match argv.first() {
            Some(program) if program.contains('/') => {
                Path::new(program).is_absolute() && std::fs::symlink_metadata(program).is_err()
            }
            Some(program) => self.lookup(program).is_err(),
            None => false,
        };
        self.check_as(argv, cwd, false).map_err(|why| {
            if missing {
                Refusal::Missing(why)
            } else {
                Refusal::Unsafe(why)
            }
        })
    }

    /// [`Self::check`] when the config loads: a program not installed yet is judged by where
    /// it would be (the run judges it again, whole).
    pub fn check_config(&self, argv: &[String], cwd: &Path) -> Result<(), String> {
        self.check_as(argv, cwd, true).map(|_| ())
    }

    fn check_as(&self, argv: &[String], cwd: &Path, at_load: bool) -> Result<PathBuf, String> {
        let Some((program, args)) = argv.split_first() else {
            return Err("the command is empty".to_owned());
        };
        let found = if program.contains('/') {
            if Path::new(program).is_relative() {
                return Err(format!(
                    "program {program:?} is relative to the workspace, which the agent can \
                     write: give an absolute path outside every workspace and the state \
                     directory"
                ));
            }
            PathBuf::from(program)
        } else {
            match self.lookup(program) {
                Ok(found) => found,
                Err(_) if at_load => return Ok(PathBuf::new()),
                Err(why) => return Err(why),
            }
        };
        let real = if at_load && std::fs::symlink_metadata(&found).is_err() {
            if let Some(root) = self.inside(&found) {
                return Err(format!(
                    "program {program:?} lies inside {} ({}), which sessions can write",
                    root.what,
                    root.path.display()
                ));
            }
            found
        } else {
            self.judge(&format!("program {program:?}"), &found)?
        };
        for arg in args {
            // `--script=hooks/x.sh` names a file as surely as `hooks/x.sh`.
            let named = [Some(arg.as_str()), arg.split_once('=').map(|(_, v)| v)];
            for name in named.into_iter().flatten().filter(|n| !n.is_empty()) {
                for dir in [cwd, Path::new(RUN_DIR)] {
                    let candidate = dir.join(name);
                    if candidate.is_file() {
                        self.judge(&format!("argument {arg:?}"), &candidate)
                            .map(|_| ())?;
                    }
                }
            }
        }
        Ok(real)
    }

    /// The first executable named `name` on the hook `PATH`.
    fn lookup(&self, name: &str) -> Result<PathBuf, String> {
        let path = self.path.as_deref().unwrap_or(OsStr::new(""));
        std::env::split_paths(path)
            .map(|dir| dir.join(name))
            .find(|candidate| {
                std::fs::metadata(candidate)
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
            .ok_or_else(|| {
                format!(
                    "program {name:?} is not on PATH (entries inside a workspace or the state \
                     directory, and relative ones, are not searched)"
                )
            })
    }

    /// `what` at `path` (the program or a file an argument names): its real path when no
    /// session and no other user can change it.
    fn judge(&self, what: &str, path: &Path) -> Result<PathBuf, String> {
        let real = std::fs::canonicalize(path)
            .map_err(|e| format!("{what} ({}) cannot be resolved: {e}", path.display()))?;
        if let Some(root) = self.inside(path) {
            return Err(format!(
                "{what} ({}) lies inside {} ({}), which sessions can write; hook programs \
                 and the files they run must live outside every workspace and the state \
                 directory",
                real.display(),
                root.what,
                root.path.display()
            ));
        }
        // proc(5): `/proc/self` belongs to the process's effective user.
        let me = std::fs::metadata("/proc/self").map_or(0, |m| m.uid());
        let mut at = Some(real.as_path());
        while let Some(current) = at {
            let meta = std::fs::metadata(current)
                .map_err(|e| format!("{what}: {} cannot be read: {e}", current.display()))?;
            let mode = meta.permissions().mode();
            let others_write = mode & 0o022 != 0;
            let sticky_dir = meta.is_dir() && mode & 0o1000 != 0;
            let problem = if meta.uid() != 0 && meta.uid() != me {
                Some(format!("is owned by uid {}", meta.uid()))
            } else if others_write && !sticky_dir {
                Some(format!(
                    "is writable by other users (mode {:o})",
                    mode & 0o7777
                ))
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(format!(
                    "{what} ({}) can be changed by others: {} {problem}",
                    real.display(),
                    current.display()
                ));
            }
            at = current.parent();
        }
        Ok(real)
    }
}

/// `path` without `.` components (the roots and candidates are compared component-wise).
fn normal(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}
