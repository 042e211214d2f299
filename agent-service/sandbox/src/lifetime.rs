//! Host commands that cannot outlive the service: each in a pid namespace of its own, killed
//! with it.
//!
//! A process group is not a container: `setsid -f`, a double fork or a daemon leaves the group
//! its command started in, and a service killed with SIGKILL sends nothing to anyone. So every
//! unsandboxed command runs as
//!
//! ```text
//! setsid setpriv --pdeathsig KILL unshare --pid --fork --kill-child=SIGKILL --mount-proc ... -- program
//! ```
//!
//! (util-linux, which Debian marks essential): `unshare`'s child is pid 1 of a new pid
//! namespace, and when pid 1 dies the kernel kills every process in the namespace, however it
//! detached itself. Pid 1 dies when the process group is killed (the tools do that to stop a
//! command), and when `unshare` dies (`--kill-child`), which dies when the thread of the service
//! that started it dies (`--pdeathsig`), so a crashed or SIGKILLed service leaves nothing
//! running. The namespace gets its own `/proc`: a command sees its own processes, not the
//! service's. A service that is not root needs a user namespace for this (`--map-current-user`:
//! the command keeps its uid; files of other users show as `nobody`, and set-uid programs such as
//! `sudo` do not raise privileges).
//!
//! [`Lifetime::detect`] tries both forms once; when neither works (a container whose seccomp
//! profile refuses `unshare`, user namespaces disabled, a `setpriv` or `unshare` without these
//! options), commands run in a process group only ([`Containment::GroupOnly`]), with the
//! parent-death signal when `setpriv` can set it: the group is killed with the command and the
//! command's first process dies with the service, but a process that leaves the group survives
//! both. The reason is logged at start-up.

use std::ffi::OsStr;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::isolation::new_session;

/// util-linux's `setpriv`, which sets the parent-death signal.
const SETPRIV: &str = "setpriv";
/// util-linux's `unshare`, which makes the pid namespace.
const UNSHARE: &str = "unshare";

/// How host commands are tied to the service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Containment {
    /// Each command in a pid namespace of its own (see the module docs).
    PidNamespace {
        /// Whether a user namespace comes with it (the service is not root).
        user_namespace: bool,
    },
    /// A process group only: processes that leave the group survive.
    GroupOnly {
        /// Whether the command's first process gets a parent-death signal (`setpriv` can set
        /// it).
        parent_death: bool,
        /// Why no pid namespace could be made.
        reason: String,
    },
}

/// How unsandboxed commands are started on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifetime {
    containment: Containment,
}

impl Lifetime {
    /// Starts `true` in a pid namespace, first without and then with a user namespace, and keeps
    /// the first form that works; [`Containment::GroupOnly`] with the last error when neither
    /// does.
    pub fn detect() -> Self {
        let mut reason = String::new();
        for user_namespace in [false, true] {
            let candidate = Self {
                containment: Containment::PidNamespace { user_namespace },
            };
            match probe(&mut candidate.command(OsStr::new("true"), &[])) {
                Ok(()) => return candidate,
                Err(why) => reason = why,
            }
        }
        let reason = format!("unshare cannot make a pid namespace here: {reason}");
        let with_parent_death = Self {
            containment: Containment::GroupOnly {
                parent_death: true,
                reason: reason.clone(),
            },
        };
        let parent_death = probe(&mut with_parent_death.command(OsStr::new("true"), &[])).is_ok();
        Self {
            containment: Containment::GroupOnly {
                parent_death,
                reason,
            },
        }
    }

    /// The form detected for this host, once per process.
    ///
    /// A process-wide value rather than one passed down: whether the kernel lets this process
    /// make namespaces is a fact of the host, the same for every session and tool, and every
    /// place that starts a host command (exec, background commands, hooks, the Codex app-server)
    /// must agree on it.
    pub fn host() -> &'static Lifetime {
        static HOST: OnceLock<Lifetime> = OnceLock::new();
        HOST.get_or_init(Self::detect)
    }

    /// Commands in a process group only (no parent-death signal), whatever the host could do.
    pub fn group_only(reason: impl Into<String>) -> Self {
        Self {
            containment: Containment::GroupOnly {
                parent_death: false,
                reason: reason.into(),
            },
        }
    }

    /// How commands are contained.
    pub fn containment(&self) -> &Containment {
        &self.containment
    }

    /// `program args...` in a new session (see [`new_session`]: killing the process group whose
    /// id is the child's pid kills the command), dying with the thread that spawns it when the
    /// host's `setpriv` can arrange that, and in a pid namespace of its own when the host allows
    /// one. The returned command inherits the
    /// caller's environment, working directory, standard streams and every descriptor that is
    /// not close-on-exec, as usual (see the crate docs on descriptors).
    pub fn command(&self, program: &OsStr, args: &[&OsStr]) -> Command {
        let parent_death = match self.containment {
            Containment::PidNamespace { .. } => true,
            Containment::GroupOnly { parent_death, .. } => parent_death,
        };
        if !parent_death {
            let mut command = new_session(program);
            command.args(args);
            return command;
        }
        let mut command = new_session(OsStr::new(SETPRIV));
        command.args(["--pdeathsig", "KILL"]);
        if let Containment::PidNamespace { user_namespace } = self.containment {
            command.arg(UNSHARE).args([
                "--pid",
                "--fork",
                "--kill-child=SIGKILL",
                "--mount-proc",
                // Mounts the host makes later still show up inside.
                "--propagation",
                "slave",
            ]);
            if user_namespace {
                command.arg("--map-current-user");
            }
        }
        command.arg("--").arg(program).args(args);
        command
    }
}

/// Runs a probe to completion, quietly.
fn probe(command: &mut Command) -> Result<(), String> {
    let output = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start it: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr.lines().last().unwrap_or_default().trim();
    Err(if line.is_empty() {
        format!("it exited with {}", output.status)
    } else {
        format!("it exited with {}: {line}", output.status)
    })
}
