//! Finding bubblewrap and proving that it can isolate on this host.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::isolation::{Isolation, Network};

/// How a root service's sandboxes are built (a service of any other user builds them as
/// itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RootForm {
    /// bubblewrap runs as root and starts the command as the sandbox user: any workspace can be
    /// mounted. Needs root's capabilities (a host, a privileged container).
    Builder,
    /// `setpriv` makes bubblewrap itself the sandbox user, which builds an unprivileged sandbox
    /// in a user namespace of its own: the only form left to root without capabilities (a
    /// container with `cap_drop: [ALL]`). The sandbox user must be able to reach the
    /// workspaces.
    SandboxUser,
}

/// Why sandboxing cannot work here, in a sentence for logs and run errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unusable(pub String);

/// A `bwrap` program that started a sandbox with every namespace this crate uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bubblewrap {
    program: PathBuf,
    version: String,
    root_form: RootForm,
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
        let mut engine = Self {
            program: located,
            version: version.trim().to_owned(),
            root_form: RootForm::Builder,
        };
        let probe_dir = std::env::temp_dir();
        let mut failures = Vec::new();
        for form in [RootForm::Builder, RootForm::SandboxUser] {
            engine.root_form = form;
            let isolation = Isolation::new(engine.clone(), probe_dir.clone(), None, Network::Off);
            let mut probe = isolation.wrap(&probe_dir, OsStr::new("true"), &[]);
            match run(&mut probe) {
                Ok(_) => return Ok(engine),
                Err(why) => failures.push(why),
            }
            if isolation.user().is_none() {
                // Not root: there is one form only.
                break;
            }
        }
        Err(Unusable(format!(
            "bubblewrap ({}) cannot create a sandbox on this host: {}",
            engine.program.display(),
            failures.join("; as the sandbox user: ")
        )))
    }

    /// How a root service's sandboxes are built on this host.
    pub(crate) fn root_form(&self) -> RootForm {
        self.root_form
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
