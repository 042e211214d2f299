//! The sandbox of one session and the `bwrap` arguments that build it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::engine::{Bubblewrap, RootForm, Unusable};
use crate::identity::{SandboxUser, hand_over};

/// System directories mounted read-only (a symlink, as on merged-/usr systems, is recreated
/// as the same symlink).
const SYSTEM_DIRS: [&str; 8] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
];

/// The `/etc` entries programs need to start and to name users, mounted read-only when they
/// exist. Nothing else of `/etc` is visible.
const ETC_ENTRIES: [&str; 15] = [
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/mime.types",
    "/etc/gitconfig",
    "/etc/protocols",
    "/etc/services",
];

/// Name resolution, mounted only when the network is on.
const NETWORK_ETC_ENTRIES: [&str; 3] = ["/etc/resolv.conf", "/etc/gai.conf", "/etc/host.conf"];

/// The size of the private `/tmp` (it lives in memory).
const TMP_BYTES: u64 = 512 * 1024 * 1024;

/// `PATH` inside the sandbox, and the only variable bubblewrap itself is started with. Exec
/// approvals resolve a sandboxed command's program names on it, not on the service's own.
pub const SANDBOX_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Kernel interfaces under the sandbox's `/proc` that change the whole host when written
/// (`/proc/sys/kernel/core_pattern` runs a program as root on the next crash,
/// `/proc/sysrq-trigger` reboots), mounted read-only over the sandbox's own `/proc`. Without
/// this a service running as root has sandboxed commands that are host uid 0: dropping every
/// capability does not stop uid 0 writing root-owned `/proc/sys` files. bubblewrap covers
/// `irq` and `bus` itself, and `sys` only when it judges the directory writable, which it
/// never is (it is `r-x`, its files are not).
const KERNEL_INTERFACES: [&str; 5] = [
    "/proc/sys",
    "/proc/sysrq-trigger",
    "/proc/irq",
    "/proc/bus",
    "/proc/fs",
];

/// util-linux's `prlimit`, which sets the resource limits of the command it starts.
const PRLIMIT: &str = "prlimit";

/// util-linux's `setpriv`, which makes a root service's sandboxed command the sandbox user.
const SETPRIV: &str = "setpriv";

/// util-linux's `unshare`, which puts it in a user namespace of that user.
const UNSHARE: &str = "unshare";

/// What bubblewrap unshares when the service is root. `--unshare-all` would add a user
/// namespace in which root stays host uid 0; the sandbox user's own namespace replaces it.
const ROOT_NAMESPACES: [&str; 4] = [
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-uts",
    "--unshare-cgroup-try",
];

/// How a mounted directory may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Readable, not writable.
    ReadOnly,
    /// Readable and writable.
    ReadWrite,
}

/// A host directory mounted at the same path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The directory (absolute, canonical).
    pub path: PathBuf,
    /// How it may be used.
    pub access: Access,
}

/// Whether sandboxed commands can reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// A private network namespace with nothing in it (not even the host's loopback).
    Off,
    /// The host's network.
    On,
}

/// Resource limits of every process in a sandbox (`setrlimit`, soft and hard alike, so no
/// command can raise them). `None` leaves a limit as the service's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Processes and threads (`RLIMIT_NPROC`). The kernel counts them per user namespace,
    /// and every sandbox has one of its own, so each sandbox has its own count (a root
    /// service's too: its sandboxes run as the [`SandboxUser`], see the crate docs).
    pub processes: Option<u64>,
    /// Address space of each process, in bytes (`RLIMIT_AS`): a larger allocation fails.
    pub address_space_bytes: Option<u64>,
    /// Largest file a process may write, in bytes (`RLIMIT_FSIZE`): a write beyond it fails
    /// and the writer gets `SIGXFSZ`.
    pub file_size_bytes: Option<u64>,
    /// CPU time of each process, in seconds (`RLIMIT_CPU`): a process that uses more is
    /// killed.
    pub cpu_seconds: Option<u64>,
}

impl Limits {
    /// 512 processes, 16 GiB of address space per process, 4 GiB per file, an hour of CPU
    /// per process: far beyond builds and test runs, well short of taking the host down.
    /// Address space is not memory use: V8 (WebAssembly) and the JVM reserve gigabytes they
    /// never touch, which a tighter default would refuse.
    pub const DEFAULT: Limits = Limits {
        processes: Some(512),
        address_space_bytes: Some(16 << 30),
        file_size_bytes: Some(4 << 30),
        cpu_seconds: Some(3600),
    };

    /// No limits beyond the service's own.
    pub const NONE: Limits = Limits {
        processes: None,
        address_space_bytes: None,
        file_size_bytes: None,
        cpu_seconds: None,
    };

    /// The `prlimit` options that set these limits (none for limits left unset).
    fn options(&self) -> Vec<OsString> {
        let Limits {
            processes,
            address_space_bytes,
            file_size_bytes,
            cpu_seconds,
        } = *self;
        [
            ("--nproc", processes),
            ("--as", address_space_bytes),
            ("--fsize", file_size_bytes),
            ("--cpu", cpu_seconds),
        ]
        .into_iter()
        .filter_map(|(option, value)| value.map(|v| format!("{option}={v}").into()))
        .collect()
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The sandbox of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Isolation {
    engine: Bubblewrap,
    workspace: PathBuf,
    agent_workspace: Option<Mount>,
    network: Network,
    limits: Limits,
    user: Option<SandboxUser>,
}

impl Isolation {
    /// A sandbox whose only writable path is `workspace` (absolute, canonical), with the agent
    /// workspace mounted as given (or not at all) and the [`Limits::DEFAULT`] limits. When this
    /// process is root, its commands run as [`SandboxUser::DEFAULT`].
    pub fn new(
        engine: Bubblewrap,
        workspace: PathBuf,
        agent_workspace: Option<Mount>,
        network: Network,
    ) -> Self {
        Self {
            engine,
            workspace,
            agent_workspace,
            network,
            limits: Limits::DEFAULT,
            user: service_is_root().then_some(SandboxUser::DEFAULT),
        }
    }

    /// The same sandbox with its commands run as `user` when this process is root. A service
    /// that is not root runs its sandboxes as itself (in a user namespace of its own uid) and
    /// keeps doing so.
    #[must_use]
    pub fn with_user(mut self, user: SandboxUser) -> Self {
        if self.user.is_some() {
            self.user = Some(user);
        }
        self
    }

    /// The host user its commands run as when the service is root; `None` when they run as
    /// the service's own (non-root) user.
    pub fn user(&self) -> Option<SandboxUser> {
        self.user
    }

    /// The same sandbox with these resource limits.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The resource limits of its processes.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The engine that enforces it.
    pub fn engine(&self) -> &Bubblewrap {
        &self.engine
    }

    /// The session workspace: writable, the default working directory.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The agent workspace, when it is mounted.
    pub fn agent_workspace(&self) -> Option<&Mount> {
        self.agent_workspace.as_ref()
    }

    /// Whether commands reach the network.
    pub fn network(&self) -> Network {
        self.network
    }

    /// `setsid bwrap <arguments> -- prlimit <limits> program args...` in `cwd` (which must
    /// be the workspace or inside a mounted directory to exist in the sandbox). See
    /// [`new_session`]: the sandbox has no controlling terminal, and killing the process group
    /// whose id is the child's pid kills the whole sandbox.
    ///
    /// When the service is root, the program runs as the sandbox user instead (`... -- setpriv
    /// --reuid U --regid G --clear-groups --inh-caps=-all -- unshare --user --map-current-user
    /// -- prlimit ...`), and first every entry of the session workspace, and of an agent
    /// workspace mounted read-write, that the service owns is given to that user (see the
    /// crate docs); an error is a workspace that could not be handed over.
    ///
    /// bubblewrap starts with an empty environment but for `PATH`: its init is the sandbox's
    /// pid 1, and anything in the sandbox can read `/proc/1/environ`. Variables set on the
    /// returned command reach bubblewrap alone (and so pid 1), never the program, whose
    /// environment is the sandbox's own (`--clearenv`, then a few harmless variables).
    pub fn command(
        &self,
        cwd: &Path,
        program: &OsStr,
        args: &[&OsStr],
    ) -> Result<Command, Unusable> {
        if let Some(user) = self.user {
            let service = nix::unistd::Uid::effective();
            hand_over(&self.workspace, service, user)?;
            if let Some(agent) = &self.agent_workspace
                && agent.access == Access::ReadWrite
            {
                hand_over(&agent.path, service, user)?;
            }
        }
        Ok(self.wrap(cwd, program, args))
    }

    /// [`Isolation::command`] without handing anything over (the engine's probe, whose
    /// workspace is the system temp directory).
    pub(crate) fn wrap(&self, cwd: &Path, program: &OsStr, args: &[&OsStr]) -> Command {
        let mut command = match self.builder_user() {
            Some(user) => {
                let mut command = new_session(OsStr::new(SETPRIV));
                command.args(as_user(user)).arg(self.engine.program());
                command
            }
            None => new_session(self.engine.program().as_os_str()),
        };
        command.env_clear().env("PATH", SANDBOX_PATH);
        command.args(self.arguments(cwd)).arg("--");
        if let Some(user) = self.root_built_user() {
            command.arg(SETPRIV).args(as_user(user));
            command.args([UNSHARE, "--user", "--map-current-user", "--"]);
        }
        let limits = self.limits.options();
        if !limits.is_empty() {
            command.arg(PRLIMIT).args(limits).arg("--");
        }
        command.arg(program).args(args);
        command
    }

    /// The sandbox user, when bubblewrap runs as root and starts the command as that user.
    fn root_built_user(&self) -> Option<SandboxUser> {
        self.user
            .filter(|_| self.engine.root_form() == RootForm::Builder)
    }

    /// The sandbox user, when bubblewrap itself runs as that user.
    fn builder_user(&self) -> Option<SandboxUser> {
        self.user
            .filter(|_| self.engine.root_form() == RootForm::SandboxUser)
    }

    /// The `bwrap` options of this sandbox, in the order bubblewrap applies them: the root
    /// first, then what is mounted over it, then the root made read-only.
    pub fn arguments(&self, cwd: &Path) -> Vec<OsString> {
        let mut args = Arguments::default();
        if self.root_built_user().is_some() {
            for namespace in ROOT_NAMESPACES {
                args.flag(namespace);
            }
            if self.network == Network::Off {
                args.flag("--unshare-net");
            }
        } else {
            args.flag("--unshare-all");
            if self.network == Network::On {
                args.flag("--share-net");
            }
        }
        // No `--new-session`: the caller starts bwrap in a session of its own (see
        // `new_session`), so the namespace's init stays in bwrap's process group and one
        // group kill reaches it. When init dies the kernel kills everything else inside.
        args.flag("--die-with-parent");
        args.pair("--cap-drop", "ALL");
        if self.root_built_user().is_some() {
            // For `setpriv` alone, the sandbox's first program: changing to a non-root uid
            // clears them before anything else runs.
            args.pair("--cap-add", "CAP_SETUID");
            args.pair("--cap-add", "CAP_SETGID");
        }
        args.pair("--hostname", "sandbox");
        for dir in SYSTEM_DIRS {
            args.system(Path::new(dir));
        }
        let etc = ETC_ENTRIES.iter().chain(if self.network == Network::On {
            NETWORK_ETC_ENTRIES.as_slice()
        } else {
            &[]
        });
        for entry in etc {
            if Path::new(entry).exists() {
                args.mount("--ro-bind", Path::new(entry));
            }
        }
        args.pair("--proc", "/proc");
        for interface in KERNEL_INTERFACES {
            if Path::new(interface).exists() {
                args.mount("--ro-bind", Path::new(interface));
            }
        }
        args.pair("--dev", "/dev");
        args.pair("--size", TMP_BYTES.to_string());
        // Writable by whoever the command runs as: a root service's sandbox user too.
        args.pair("--perms", "1777");
        args.pair("--tmpfs", "/tmp");
        // Mounted after /tmp, so a workspace under /tmp stays the host's directory.
        if let Some(agent) = &self.agent_workspace
            && agent.path != self.workspace
        {
            let option = match agent.access {
                Access::ReadOnly => "--ro-bind",
                Access::ReadWrite => "--bind",
            };
            args.parents(&agent.path);
            args.mount(option, &agent.path);
        }
        args.parents(&self.workspace);
        args.mount("--bind", &self.workspace);
        args.pair("--remount-ro", "/");
        args.flag("--clearenv");
        for (name, value) in [
            ("PATH", OsStr::new(SANDBOX_PATH)),
            ("HOME", self.workspace.as_os_str()),
            ("TMPDIR", OsStr::new("/tmp")),
            ("LANG", OsStr::new("C.UTF-8")),
            ("TERM", OsStr::new("dumb")),
            ("PAGER", OsStr::new("cat")),
            ("GIT_PAGER", OsStr::new("cat")),
        ] {
            args.triple("--setenv", name, value);
        }
        args.pair("--chdir", cwd.as_os_str());
        args.0
    }
}

/// `setsid program`: the program runs as the leader of a new session and process group
/// (whose id is its pid) without a controlling terminal, so nothing it starts can inject
/// keystrokes into the terminal the service was started from (TIOCSTI), and one `killpg`
/// of that id stops it and everything that stayed in its group. The caller must not make
/// the child a process group leader itself (`setsid` would then fork and return at once).
pub fn new_session(program: &OsStr) -> Command {
    let mut command = Command::new(SETSID);
    command.arg(program);
    command
}

/// util-linux's `setsid` (Debian marks util-linux essential).
const SETSID: &str = "setsid";

/// `setpriv`'s options that make the rest of the command line `user`, with no supplementary
/// group and no inheritable capability.
fn as_user(user: SandboxUser) -> [String; 5] {
    [
        format!("--reuid={}", user.uid()),
        format!("--regid={}", user.gid()),
        "--clear-groups".to_owned(),
        "--inh-caps=-all".to_owned(),
        "--".to_owned(),
    ]
}

/// Whether this process runs as root.
fn service_is_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

/// The argument list under construction.
#[derive(Default)]
struct Arguments(Vec<OsString>);

impl Arguments {
    fn flag(&mut self, flag: &str) {
        self.0.push(flag.into());
    }

    fn pair(&mut self, option: &str, value: impl Into<OsString>) {
        self.0.push(option.into());
        self.0.push(value.into());
    }

    fn triple(&mut self, option: &str, first: impl Into<OsString>, second: impl Into<OsString>) {
        self.0.push(option.into());
        self.0.push(first.into());
        self.0.push(second.into());
    }

    /// `path` mounted at the same path.
    fn mount(&mut self, option: &str, path: &Path) {
        self.triple(option, path.as_os_str(), path.as_os_str());
    }

    /// The directories above `path` that bubblewrap creates to mount it on, searchable by
    /// everyone: bubblewrap running as root would make them `0700`, and a root service's
    /// sandbox user could then not reach its own workspace by its absolute path. Directories
    /// that already exist in the sandbox are left as they are.
    fn parents(&mut self, path: &Path) {
        let mut above: Vec<&Path> = path
            .ancestors()
            .skip(1)
            .filter(|dir| dir.parent().is_some())
            .collect();
        above.reverse();
        for dir in above {
            self.pair("--perms", "0755");
            self.pair("--dir", dir.as_os_str());
        }
    }

    /// A system directory: the same symlink when it is one, else a read-only mount; nothing
    /// when the host has no such directory.
    fn system(&mut self, dir: &Path) {
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(dir) {
                    self.triple("--symlink", target.as_os_str(), dir.as_os_str());
                }
            }
            Ok(meta) if meta.is_dir() => self.mount("--ro-bind", dir),
            _ => {}
        }
    }
}
