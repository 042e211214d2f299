//! A shell command in its own session, with its stdout and stderr merged into one bounded
//! capture. Shared by `exec` (foreground) and the background [`ProcessRegistry`].
//!
//! Each command runs in a new session ([`openclaw_sandbox::new_session`]): the leader of a new
//! session and process group whose id is its pid, with no controlling terminal (so it cannot
//! type into the terminal the service runs in). An unsandboxed command runs as `setsid setpriv
//! --pdeathsig KILL unshare --pid ... -- sh -c ...` ([`Lifetime`]): a pid namespace of its own
//! whose pid 1 dies with the process group and with the service, taking everything the command
//! started with it, detached (`setsid -f`, daemons) or not. A sandboxed session's commands run as
//! `setsid bwrap ... -- sh -c ...` ([`Isolation`]), whose pid namespace does the same. So one
//! `killpg` of the group stops the whole command, and nothing a command started outlives the
//! service (the parent-death signal belongs to the spawning thread, a runtime worker that lives
//! as long as the service). Both output streams write into one pipe, so the capture keeps
//! their interleaving.
//!
//! Unsandboxed commands inherit the service's environment minus the variables that hold
//! secrets, judged two ways: by value (`hidden_env`: provider keys, `${VAR}` values of the
//! config, the service's own tokens) and by name ([`credential_name`]: `*_KEY`, `*_TOKEN`,
//! `*_SECRET`, `*_PASSWORD` and the like, so a key of a provider the config does not use, or a
//! token meant for another program, is not handed to every command) and by shape
//! ([`credential_value`]: a URL or connection string with a password in it, the usual form of
//! `DATABASE_URL`), and with relative `PATH`
//! entries dropped (a `.` in `PATH` would let a workspace file shadow an allowlisted
//! program). Sandboxed commands get an empty environment (see `openclaw-sandbox`).
//!
//! [`ProcessRegistry`]: crate::process::ProcessRegistry

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use openclaw_sandbox::{Isolation, Lifetime};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin};
use tokio::task::JoinHandle;

use crate::error::ToolError;
use crate::output::HeadTail;

/// A started command.
pub(crate) struct Spawned {
    /// The shell process.
    pub(crate) child: Child,
    /// Its process id, which is also its process group id.
    pub(crate) pgid: i32,
    /// Its stdin, when it was asked for.
    pub(crate) stdin: Option<ChildStdin>,
    /// The merged output so far.
    pub(crate) output: Arc<Mutex<HeadTail>>,
    /// The task copying the pipe into `output`; it ends when every writer has closed the pipe.
    pub(crate) reader: JoinHandle<()>,
}

/// Where and how a command runs.
pub(crate) struct Launch<'a> {
    /// The working directory.
    pub(crate) cwd: &'a Path,
    /// The session's sandbox, when it has one.
    pub(crate) sandbox: Option<&'a Isolation>,
    /// Environment variables an unsandboxed command must not inherit.
    pub(crate) hidden_env: &'a [String],
}

/// Starts `sh -c command` as described by `launch`, in a new session. Output beyond
/// `output_cap` bytes is elided in the middle. With `with_stdin` the command's stdin is a
/// pipe, else /dev/null.
pub(crate) fn spawn_shell(
    command: &str,
    launch: &Launch<'_>,
    output_cap: usize,
    with_stdin: bool,
) -> Result<Spawned, ToolError> {
    let fail = |e: std::io::Error| ToolError::Internal(format!("cannot start the command: {e}"));
    let (pipe_reader, pipe_writer) = std::io::pipe().map_err(fail)?;
    let stderr_writer = pipe_writer.try_clone().map_err(fail)?;
    let script = [OsStr::new("-c"), OsStr::new(command)];
    let std_command = match launch.sandbox {
        Some(sandbox) => sandbox
            .command(launch.cwd, OsStr::new("sh"), &script)
            .map_err(|why| ToolError::failed(format!("cannot start the command: {why}")))?,
        None => {
            let mut plain = Lifetime::host().command(OsStr::new("sh"), &script);
            plain.current_dir(launch.cwd);
            for name in launch.hidden_env {
                plain.env_remove(name);
            }
            for (name, value) in std::env::vars_os() {
                // A name that is not UTF-8 cannot be judged: not passed on either.
                if name.to_str().is_none_or(credential_name) || credential_value(&value) {
                    plain.env_remove(&name);
                }
            }
            if let Some(path) = std::env::var_os("PATH") {
                plain.env("PATH", absolute_path_entries(&path));
            }
            plain
        }
    };
    let mut shell = tokio::process::Command::from(std_command);
    shell
        .stdin(if with_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(pipe_writer)
        .stderr(stderr_writer)
        // Nothing interactive can answer a pager.
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat");
    let spawn_result = shell.spawn();
    // The command holds our copies of the pipe's write end until it is dropped; the reader
    // only sees end-of-file once they are closed.
    drop(shell);
    let mut child = spawn_result.map_err(|e| {
        ToolError::failed(format!(
            "cannot start the command (setsid {} sh): {e}",
            if launch.sandbox.is_some() {
                "bwrap"
            } else {
                "setpriv unshare"
            }
        ))
    })?;
    let pgid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| ToolError::Internal("the command exited before it had a pid".into()))?;
    let stdin = child.stdin.take();
    let mut receiver = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(pipe_reader))
        .map_err(fail)?;
    let output = Arc::new(Mutex::new(HeadTail::new(output_cap)));
    let sink = Arc::clone(&output);
    let reader = tokio::spawn(async move {
        let mut buffer = vec![0_u8; 16 * 1024];
        // A read error ends the capture like end-of-file does: nothing more can be read.
        while let Ok(n @ 1..) = receiver.read(&mut buffer).await {
            lock(&sink).push(&buffer[..n]);
        }
    });
    Ok(Spawned {
        child,
        pgid,
        stdin,
        output,
        reader,
    })
}

/// Sends SIGKILL to a whole process group, and to its leader by pid (in the instant after the
/// start, before `setsid` has made the group, only the pid exists). A group that no longer
/// exists is not an error.
pub(crate) fn kill_group(pgid: i32) {
    // ESRCH (already gone) is the only expected failure, and there is nothing to do about
    // EPERM for a group we started ourselves.
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    let _ = kill(Pid::from_raw(pgid), Signal::SIGKILL);
}

/// Whether a variable's name says it holds a credential: its last word (words split at `_`,
/// any case) is `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `PASSPHRASE`, `APIKEY`,
/// `CREDENTIAL` or a plural of them, or ends with `PASSWORD` or `PASSWD` (`PGPASSWORD`), or,
/// after at least one other word, `KEY`, `PASS`, `PAT`, `PWD` or `AUTH` (`OPENAI_KEY`,
/// `STRIPE_SECRET_KEY`, `SMTP_PASS`, `GH_PAT`, `MYSQL_PWD`, `REDISCLI_AUTH`); a trailing `_FILE` (a
/// variable naming where such a value is kept) is judged without it. `AWS_ACCESS_KEY_ID`,
/// `SSH_AUTH_SOCK` or `TOKENIZERS_PARALLELISM` are not credentials.
pub(crate) fn credential_name(name: &str) -> bool {
    const LAST: [&str; 13] = [
        "TOKEN",
        "TOKENS",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWORDS",
        "PASSWD",
        "PASSPHRASE",
        "APIKEY",
        "APIKEYS",
        "CREDENTIAL",
        "CREDENTIALS",
        "AUTHTOKEN",
    ];
    /// Too short or too common alone (`KEY`, `PASS`, `PWD` the working directory), telling
    /// after a prefix.
    const AFTER_A_WORD: [&str; 6] = ["KEY", "KEYS", "PASS", "PAT", "PWD", "AUTH"];
    /// Glued to a prefix in well-known names (`PGPASSWORD`).
    const GLUED: [&str; 2] = ["PASSWORD", "PASSWD"];
    let upper = name.to_ascii_uppercase();
    let mut words: Vec<&str> = upper.split('_').filter(|w| !w.is_empty()).collect();
    if words.len() > 1 && words.last() == Some(&"FILE") {
        words.pop();
    }
    match words.as_slice() {
        [_, .., last] if AFTER_A_WORD.contains(last) => true,
        [.., last] => LAST.contains(last) || GLUED.iter().any(|glued| last.ends_with(glued)),
        [] => false,
    }
}

/// Whether a variable's value carries a credential whatever its name says: a URL with a
/// password in its user part (`postgres://app:pw@db/x`, `redis://:pw@cache`,
/// `https://user:pw@proxy:3128`), or a `key=value` field whose key names a secret, in a
/// connection string (`Server=db;Password=pw`, Azure's `AccountKey=...`), a URL's query
/// (`jdbc:postgresql://db/x?user=app&password=pw`, `?token=...`) or a libpq keyword list
/// (`host=db password=pw`). A URL without one (`https://proxy:3128`, `postgres://app@db/x`)
/// is not.
pub(crate) fn credential_value(value: &OsStr) -> bool {
    let text = value.to_string_lossy();
    let url_password = text.split("://").skip(1).any(|rest| {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        authority
            .rsplit_once('@')
            .and_then(|(user_part, _)| user_part.split_once(':'))
            .is_some_and(|(_, password)| !password.is_empty())
    });
    let field = |field: &str| {
        field
            .split_once('=')
            .is_some_and(|(key, value)| secret_key(key.trim()) && !value.trim().is_empty())
    };
    // Connection strings may space their `=` (`Password = pw`); libpq lists separate their
    // fields with spaces alone.
    url_password
        || text
            .split([';', '&', '?'])
            .any(|part| field(part) || part.split_whitespace().any(field))
}

/// Whether the key of a `key=value` field names a secret: `password`, `pwd`, `token`,
/// `secret`, `sig` (a signed URL's signature) ..., one ending in `_key`, `_token`, `_secret`
/// or `_password`, or a camel-case one ending in `Key`, `Password`, `Secret` or `Token`
/// (`AccountKey`, `SharedAccessKey`). `monkey` or `ls` are not.
fn secret_key(key: &str) -> bool {
    const WHOLE: [&str; 12] = [
        "password",
        "passwd",
        "pwd",
        "pass",
        "secret",
        "token",
        "apikey",
        "sig",
        "accountkey",
        "sharedaccesskey",
        "access_token",
        "client_secret",
    ];
    const SUFFIXES: [&str; 4] = ["key", "password", "secret", "token"];
    let lower = key.to_ascii_lowercase();
    if WHOLE.contains(&lower.as_str()) {
        return true;
    }
    SUFFIXES.iter().any(|suffix| {
        let separated = [b'_', b'-'].iter().any(|sep| {
            lower.len() > suffix.len() + 1
                && lower.ends_with(suffix)
                && lower.as_bytes()[lower.len() - suffix.len() - 1] == *sep
        });
        // `AccountKey`: the suffix capitalised, after a lower-case letter.
        let at = key.len().wrapping_sub(suffix.len());
        let camel = key.len() > suffix.len()
            && key.is_char_boundary(at)
            && key[at..].eq_ignore_ascii_case(suffix)
            && key[at..].starts_with(|c: char| c.is_ascii_uppercase())
            && key[..at].ends_with(|c: char| c.is_ascii_lowercase());
        separated || camel
    })
}

/// `PATH` without empty or relative entries (both mean "the working directory").
fn absolute_path_entries(path: &OsStr) -> OsString {
    let kept: Vec<std::path::PathBuf> = std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .collect();
    std::env::join_paths(kept).unwrap_or_else(|_| OsString::from("/usr/bin:/bin"))
}

/// Kills a process group when dropped, unless disarmed: a foreground command whose caller
/// stops waiting (the agent loop dropped the tool call) must not keep running unseen.
pub(crate) struct GroupGuard {
    pgid: i32,
    armed: bool,
}

impl GroupGuard {
    pub(crate) fn new(pgid: i32) -> Self {
        Self { pgid, armed: true }
    }

    /// The command has been dealt with; dropping the guard does nothing.
    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_group(self.pgid);
        }
    }
}

/// Locks a mutex, ignoring poisoning: the data behind these locks (output buffers, tables)
/// stays consistent even if a holder panicked, since every update is a single push or insert.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExitKind {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
}

impl ExitKind {
    pub(crate) fn from_status(status: ExitStatus) -> Self {
        match (status.code(), status.signal()) {
            (Some(code), _) => ExitKind::Code(code),
            (None, Some(signal)) => ExitKind::Signal(signal),
            // Neither is only possible for stopped processes, which wait() does not report.
            (None, None) => ExitKind::Code(-1),
        }
    }

    /// `exit code 3` or `killed by signal 9 (SIGKILL)`.
    pub(crate) fn describe(self) -> String {
        match self {
            ExitKind::Code(code) => format!("exit code {code}"),
            ExitKind::Signal(signal) => match Signal::try_from(signal) {
                Ok(named) => format!("killed by signal {signal} ({})", named.as_str()),
                Err(_) => format!("killed by signal {signal}"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::{credential_name, credential_value};

    #[test]
    fn values_holding_a_credential_are_recognised() {
        for value in [
            "postgres://app:s3cret@db.internal:5432/main",
            "postgresql://app:s3cret@db/main?sslmode=require",
            "redis://:s3cret@cache:6379/0",
            "https://user:s3cret@proxy.example:3128",
            "mongodb+srv://u:p%40ss@cluster0.example.net/db",
            "amqp://guest:guest@rabbit//",
            "a list: http://x, mysql://root:pw@db",
            "Server=db;User Id=app;Password=s3cret;",
            "host=db;pwd=s3cret",
            "Data Source=x; PASSWORD = s3cret",
            "jdbc:postgresql://db:5432/x?user=app&password=s3cret",
            "host=db port=5432 user=app password=s3cret dbname=x",
            "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=abc==;",
            "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=r;SharedAccessKey=abc=",
            "https://x.blob.core.windows.net/c?sv=2020&sig=abc%3D",
            "https://hooks.example.com/notify?token=abc",
            "https://api.example.com/v1?api_key=abc",
            "client_id=x&client_secret=abc",
        ] {
            assert!(credential_value(OsStr::new(value)), "{value}");
        }
        for value in [
            "",
            "/usr/local/bin:/usr/bin:/bin",
            "https://proxy.example:3128",
            "postgres://app@db/main",
            "postgres://db:5432/main",
            "redis://:@cache",
            "http://example.com/a:b@c",
            "http://example.com/?next=user:pw@x",
            "en_US.UTF-8",
            "Password=",
            "user@example.com",
            "ssh://git@github.com:22/x.git",
            "rs=0:di=01;34:ln=01;36:mh=00",
            "monkey=banana",
            "token=",
            "https://example.com/search?q=password",
            "SharedAccessKeyName=reader",
            "--max-old-space-size=4096 --key-file",
        ] {
            assert!(!credential_value(OsStr::new(value)), "{value}");
        }
    }

    #[test]
    fn credential_names_are_recognised_by_their_last_words() {
        for name in [
            "ANTHROPIC_API_KEY",
            "openai_api_key",
            "GITHUB_TOKEN",
            "HF_TOKEN",
            "AGENT_SERVICE_TOKENS",
            "AGENT_SERVICE_TOKENS_FILE",
            "PROMPT_SERVICE_TOKEN_FILE",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "STRIPE_SECRET_KEY",
            "DB_PASSWORD",
            "MYSQL_PASSWD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "CLIENT_SECRET",
            "GH_PAT",
            "SENTRY_AUTH_TOKEN",
            "JWT_SIGNING_KEY",
            "MISTRAL_APIKEY",
            "TOKEN",
            "OPENAI_KEY",
            "DJANGO_SECRET_KEY",
            "MAPBOX_KEYS",
            "SMTP_PASS",
            "GPG_PASSPHRASE",
            "NGROK_AUTHTOKEN",
            "DOCKER_CREDENTIAL",
            "SSH_PRIVATE_KEY_FILE",
            "PGPASSWORD",
            "MYSQL_PWD",
            "REDISCLI_AUTH",
            "ORACLE_PWD",
            "DBPASSWD",
        ] {
            assert!(credential_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "AWS_ACCESS_KEY_ID",
            "AWS_REGION",
            "SSH_AUTH_SOCK",
            "TOKENIZERS_PARALLELISM",
            "KEYBOARD",
            "GPG_TTY",
            "PASSWORD_STORE_DIR",
            "KEY",
            "PASS",
            "PAT",
            "PWD",
            "OLDPWD",
            "KEY_FILE",
            "FILE",
            "PGPASSFILE",
            "SSH_AUTH_SOCK",
            "AUTH",
            "PASSWORD_STORE_DIR",
            "XAUTHORITY",
            "_",
            "",
        ] {
            assert!(!credential_name(name), "{name}");
        }
    }
}
