//! Finding bubblewrap and proving that it can isolate on this host.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::isolation::{Isolation, Network};

/// Why sandboxing cannot work here, in a sentence for logs and run errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unusable(pub String);

/// A `bwrap` program that started a sandbox with every namespace this crate uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bubblewrap {
    program: PathBuf,
    version: String,
}

impl Bubblewrap {
    /// The engine's name, as the prompt and the logs show it.
    pub const NAME: &'static str = "bubblewrap";

    /// Finds `program` (a bare name is looked up on `PATH`) and starts a throwaway sandbox
    /// with it: no network, an empty root with the system directories, running `true`. Any
    /// failure (not installed, user namespaces disabled, a seccomp profile refusing
    /// `unshare`) is the reason sandboxed runs will be refused with.
    pub fn detect(program: &OsStr) -> Result<Self, Unusable> {
        let located = locate(program).ok_or_else(|| {
            Unusable(format!(
                "the sandbox engine bubblewrap ({}) is not installed or not on PATH; install \
                 the bubblewrap package",
                Path::new(program).display()
            ))
        })?;
        let version = run(Command::new(&located).arg("--version"))
            .map_err(|why| Unusable(format!("{} --version failed: {why}", located.display())))?;
        let engine = Self {
            program: located,
            version: version.trim().to_owned(),
        };
        let probe_dir = std::env::temp_dir();
        let isolation = Isolation::new(engine.clone(), probe_dir.clone(), None, Network::Off);
        let mut probe = isolation.wrap(&probe_dir, OsStr::new("true"), &[]);
        run(&mut probe).map_err(|why| {
            Unusable(format!(
                "bubblewrap ({}) cannot create a sandbox on this host: {why}",
                engine.program.display()
            ))
        })?;
        Ok(engine)
    }

    /// The `bwrap` program that will be run.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// What `bwrap --version` printed (`bubblewrap 0.8.0`).
    pub fn version(&self) -> &str {
        &self.version
    }
}

/// A bare name on `PATH`, or a path as given, if it is an executable file. A wrapper such as
/// [`crate::Lifetime::command`] starts the program only after its own start succeeded, so a
/// caller that must tell "not installed" apart from "failed" looks the program up first.
pub fn locate(program: &OsStr) -> Option<PathBuf> {
    let as_path = Path::new(program);
    if as_path.components().count() > 1 || as_path.is_absolute() {
        return executable(as_path).then(|| as_path.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| executable(candidate))
}

fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs a command to completion; its stdout, or why it failed with the tail of its stderr.
fn run(command: &mut Command) -> Result<String, String> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start it: {e}"))?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stderr = stderr.trim();
    let tail: String = stderr
        .chars()
        .rev()
        .take(400)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .filter(|c| !c.is_control() || *c == '\n')
        .collect();
    Err(if tail.is_empty() {
        format!("it exited with {}", output.status)
    } else {
        format!("it exited with {}: {tail}", output.status)
    })
}
