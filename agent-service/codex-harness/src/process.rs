//! One `codex app-server` child: spawn, handshake, version check, exit
//! detection and shutdown.
//!
//! The child runs in a process group and a pid namespace of its own
//! ([`openclaw_sandbox::Lifetime`]) so that killing the group, or the
//! service dying, also kills every command it started, detached or not,
//! with an environment of its own
//! ([`crate::child_env`]) and its `CODEX_HOME` created (0700) when missing.
//! Its stderr is drained into the log at debug level, and the last lines are
//! kept, without colour codes or control characters, for the error message
//! when it dies.

use std::{
    collections::{HashMap, VecDeque},
    process::Stdio,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use nix::{sys::signal::Signal, unistd::Pid};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{ChildStderr, Command},
    sync::watch,
};

use crate::{
    error::HarnessError,
    rpc::{self, Connection},
    settings::HarnessSettings,
    version::{CodexVersion, SUPPORTED_RANGE},
};

/// Lines of stderr kept for error messages.
const STDERR_TAIL_LINES: usize = 20;
/// How long to wait for the exit status once stdout closed.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(2);

/// What the app-server said about a loaded thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ThreadInfo {
    /// `model` of the thread/start or thread/resume result.
    pub model: String,
    /// `modelProvider` of that result.
    pub provider: String,
}

/// A running, initialised app-server.
pub(crate) struct AppServer {
    pub conn: Arc<Connection>,
    pid: Option<u32>,
    exited: watch::Receiver<Option<String>>,
    pub version: CodexVersion,
    /// Threads started or resumed in this process (the rest need `thread/resume`).
    loaded: Mutex<HashMap<String, ThreadInfo>>,
    grace: Duration,
}

impl std::fmt::Debug for AppServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppServer")
            .field("pid", &self.pid)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl AppServer {
    /// Spawns the child, runs `initialize`/`initialized` and checks the version.
    #[tracing::instrument(skip_all, fields(command = %settings.command.display()))]
    pub(crate) async fn start(settings: &HarnessSettings) -> Result<Arc<Self>, HarnessError> {
        if let Some(home) = &settings.codex_home {
            ensure_codex_home(home)?;
        }
        // Looked up first: the wrapper starts whatever it is given, so a missing program would
        // otherwise show up as an app-server that exited at once.
        let program = openclaw_sandbox::locate(settings.command.as_os_str()).ok_or_else(|| {
            HarnessError::Spawn {
                command: settings.command.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such executable file (on PATH, for a bare name)",
                ),
            }
        })?;
        let args = settings.args();
        let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        let mut command =
            Command::from(openclaw_sandbox::Lifetime::host().command(program.as_os_str(), &args));
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        apply_env(&mut command, settings);
        let mut child = command.spawn().map_err(|source| HarnessError::Spawn {
            command: settings.command.clone(),
            source,
        })?;
        let pid = child.id();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(HarnessError::protocol("spawn", "stdio pipes missing"));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        tokio::spawn(drain_stderr(stderr, Arc::clone(&tail)));
        let (exit_tx, exited) = watch::channel(None);
        tokio::spawn(async move {
            let status = match child.wait().await {
                Ok(status) => status.to_string(),
                Err(error) => format!("unknown status ({error})"),
            };
            let _ = exit_tx.send(Some(status));
        });
        let conn = Connection::new(stdin, settings.request_timeout);
        // The watchdog: an app-server that leaves a request unanswered past its limit is
        // hung (stopped, deadlocked): its whole process group is killed at once, so nothing
        // it started lingers, and the next turn starts a new one.
        if let Some(group) = pid.and_then(|p| i32::try_from(p).ok()) {
            let exited = exited.clone();
            conn.on_hang(Box::new(move || {
                if exited.borrow().is_some() {
                    // Reaped already: the group id may belong to someone else by now.
                    return;
                }
                tracing::warn!(
                    pid = group,
                    "the Codex app-server stopped answering; killing its process group"
                );
                if let Err(error) = nix::sys::signal::killpg(Pid::from_raw(group), Signal::SIGKILL)
                {
                    tracing::debug!(%error, pid = group, "killpg failed");
                }
            }));
        }
        {
            let conn = Arc::clone(&conn);
            let mut exited = exited.clone();
            tokio::spawn(async move {
                rpc::read_loop(&conn, stdout).await;
                // stdout closed: the process is (nearly) gone.
                let status =
                    tokio::time::timeout(EXIT_STATUS_WAIT, exited.wait_for(Option::is_some))
                        .await
                        .ok()
                        .and_then(Result::ok)
                        .and_then(|s| s.clone())
                        .unwrap_or_else(|| "still running with stdout closed".to_owned());
                let tail = tail
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n");
                let detail = if tail.is_empty() {
                    status
                } else {
                    format!("{status}; stderr ends with:\n{tail}")
                };
                tracing::warn!(%detail, "the Codex app-server exited");
                conn.close(detail);
            });
        }
        let mut server = Self {
            conn,
            pid,
            exited,
            version: CodexVersion {
                major: 0,
                minor: 0,
                patch: 0,
            },
            loaded: Mutex::new(HashMap::new()),
            grace: settings.shutdown_grace,
        };
        match server.handshake(settings).await {
            Ok(version) => {
                server.version = version;
                tracing::info!(%version, pid, "Codex app-server ready");
                Ok(Arc::new(server))
            }
            Err(error) => {
                server.shutdown().await;
                Err(error)
            }
        }
    }

    async fn handshake(&self, settings: &HarnessSettings) -> Result<CodexVersion, HarnessError> {
        let params = json!({
            "clientInfo": {
                "name": settings.client_name,
                "title": "OpenClaw",
                "version": env!("CARGO_PKG_VERSION"),
            },
            "capabilities": {"experimentalApi": settings.experimental_api},
        });
        let result = self.conn.request("initialize", params).await?;
        let user_agent = result
            .get("userAgent")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let version = match CodexVersion::from_user_agent(user_agent) {
            Some(version) => version,
            None => version_from_cli(settings, user_agent).await?,
        };
        if !version.is_supported() {
            return Err(HarnessError::UnsupportedVersion {
                command: settings.command.clone(),
                found: version.to_string(),
                supported: SUPPORTED_RANGE,
            });
        }
        self.conn.notify("initialized", Value::Null).await?;
        Ok(version)
    }

    /// The child's process id (also its process group id).
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// False once the connection closed (the child exited or was killed).
    pub(crate) fn is_alive(&self) -> bool {
        self.conn.closed().is_none()
    }

    /// The thread, when this process has it loaded.
    pub(crate) fn loaded(&self, thread_id: &str) -> Option<ThreadInfo> {
        self.loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(thread_id)
            .cloned()
    }

    pub(crate) fn mark_loaded(&self, thread_id: &str, info: ThreadInfo) {
        self.loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(thread_id.to_owned(), info);
    }

    /// Closes stdin, waits for the exit, and kills the process group after
    /// the grace period.
    pub(crate) async fn shutdown(&self) {
        self.conn.close_stdin().await;
        if self.wait_exit(self.grace).await {
            return;
        }
        tracing::warn!(
            pid = self.pid,
            "the Codex app-server ignored EOF; killing it"
        );
        self.kill();
        self.wait_exit(EXIT_STATUS_WAIT).await;
    }

    /// SIGKILL to the whole process group.
    pub(crate) fn kill(&self) {
        if self.exited.borrow().is_some() {
            // Reaped already: the pid may belong to someone else by now.
            return;
        }
        let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) else {
            return;
        };
        if let Err(error) = nix::sys::signal::killpg(Pid::from_raw(pid), Signal::SIGKILL) {
            tracing::debug!(%error, pid, "killpg failed");
        }
    }

    async fn wait_exit(&self, limit: Duration) -> bool {
        let mut exited = self.exited.clone();
        tokio::time::timeout(limit, exited.wait_for(Option::is_some))
            .await
            .is_ok()
    }
}

impl Drop for AppServer {
    /// A server dropped without [`AppServer::shutdown`] still goes: stdin
    /// closes (its normal exit), and the process group is killed if it is
    /// still there after the grace period.
    fn drop(&mut self) {
        if self.exited.borrow().is_some() {
            return;
        }
        self.conn.try_close_stdin();
        let (Ok(runtime), Some(pid)) = (
            tokio::runtime::Handle::try_current(),
            self.pid.and_then(|p| i32::try_from(p).ok()),
        ) else {
            return;
        };
        let mut exited = self.exited.clone();
        let grace = self.grace;
        runtime.spawn(async move {
            let gone = tokio::time::timeout(grace, exited.wait_for(Option::is_some)).await;
            if gone.is_err() {
                let _ = nix::sys::signal::killpg(Pid::from_raw(pid), Signal::SIGKILL);
            }
        });
    }
}

/// `codex --version`, for servers whose user agent does not say.
async fn version_from_cli(
    settings: &HarnessSettings,
    user_agent: &str,
) -> Result<CodexVersion, HarnessError> {
    let mut command = Command::new(&settings.command);
    command.arg("--version").kill_on_drop(true);
    apply_env(&mut command, settings);
    let unknown = |detail: String| HarnessError::UnknownVersion {
        command: settings.command.clone(),
        detail,
    };
    let output = tokio::time::timeout(settings.request_timeout, command.output())
        .await
        .map_err(|_| unknown("`--version` did not finish".to_owned()))?
        .map_err(|e| unknown(format!("`--version` failed: {e}")))?;
    let text = String::from_utf8_lossy(&output.stdout);
    CodexVersion::from_version_output(&text).ok_or_else(|| {
        unknown(format!(
            "initialize said userAgent {user_agent:?} and `--version` printed {:?}",
            text.trim()
        ))
    })
}

/// The child's environment: [`crate::child_env`], and `CODEX_HOME` when configured, with
/// the directory of [`sandbox_helper`] first on `PATH`.
fn apply_env(command: &mut Command, settings: &HarnessSettings) {
    let extra = crate::child_env::provider_key_names(settings.model_provider.as_ref());
    let mut env = crate::child_env::child_env(std::env::vars_os(), &extra);
    if let Some(home) = &settings.codex_home {
        env.retain(|(k, _)| k != "CODEX_HOME");
        env.push(("CODEX_HOME".into(), home.clone().into_os_string()));
        if let Some(dir) = sandbox_helper(home, &settings.command) {
            let rest = env
                .iter()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
            let joined =
                std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest)));
            if let Ok(joined) = joined {
                env.retain(|(k, _)| k != "PATH");
                env.push(("PATH".into(), joined));
            }
        }
    }
    command.env_clear().envs(env);
}

/// A directory in `CODEX_HOME` holding `codex-linux-sandbox`, a link to the Codex binary:
/// Codex's Linux sandbox runs its commands through a helper of that name looked up on `PATH`,
/// and Codex itself declines to create that link when its home lies in the system temp
/// directory, so sandboxed commands would fail to start. `None` when it cannot be made
/// (then Codex's own arrangement applies).
fn sandbox_helper(home: &std::path::Path, command: &std::path::Path) -> Option<std::path::PathBuf> {
    let binary = if command.components().count() > 1 {
        std::fs::canonicalize(command).ok()?
    } else {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(command))
            .find(|candidate| candidate.is_file())
            .and_then(|found| std::fs::canonicalize(found).ok())?
    };
    let dir = home.join(".openclaw-path");
    std::fs::create_dir_all(&dir).ok()?;
    let link = dir.join("codex-linux-sandbox");
    if std::fs::read_link(&link).ok().as_deref() != Some(binary.as_path()) {
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&binary, &link).ok()?;
    }
    Some(dir)
}

/// Creates a configured `CODEX_HOME` that does not exist yet, private to this user (Codex
/// aborts on a missing one). An existing directory is used as it is.
fn ensure_codex_home(home: &std::path::Path) -> Result<(), HarnessError> {
    use std::os::unix::fs::DirBuilderExt;
    if home.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(home)
        .map_err(|source| HarnessError::CodexHome {
            path: home.to_path_buf(),
            source,
        })
}

async fn drain_stderr(stderr: ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line = crate::child_env::printable(&line);
        tracing::debug!(target: "codex_app_server", %line, "stderr");
        let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
        if tail.len() == STDERR_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}
