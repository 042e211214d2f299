//! Background commands: the [`ProcessRegistry`] that owns them and the `process` tool that
//! lists them, reads their output, writes to their stdin and kills them.
//!
//! Each entry keeps a bounded capture of its output (head and tail) and its exit status. A
//! registry kills every process group it still runs when it is dropped, so a session that
//! goes away does not leave its background commands behind.
//!
//! A registry may carry an [`ExitSink`]: it hears once of every command that ends on its own
//! (exits, is killed by a signal from elsewhere, or runs past its timeout), with the end of its
//! output. Commands the model stops with `process kill`, and those a session's end stops, are
//! not reported: whoever stopped them knows.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::watch;

use crate::arguments::parse;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::output::{HeadTail, last_chars};
use crate::spawn::{ExitKind, Launch, kill_group, lock, spawn_shell};
use crate::tool::{Tool, ToolOutcome};

/// Entries kept, running or finished; the oldest finished ones are forgotten first.
const MAX_ENTRIES: usize = 64;
/// How long `kill` waits for a killed process to be reaped.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long an exit report waits for the rest of the output once the shell has exited (a
/// grandchild that keeps the pipe open does not hold the report back longer).
const DRAIN_WAIT: Duration = Duration::from_millis(500);
/// Characters of output an exit report carries (the end of it).
pub const EXIT_TAIL_CHARS: usize = 2_000;

/// A background command that ended on its own, as an [`ExitSink`] hears of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessExit {
    /// Where it ended: id, command, session, final status.
    pub info: ProcessInfo,
    /// The last [`EXIT_TAIL_CHARS`] characters of its output.
    pub tail: String,
}

/// Hears of background commands that end on their own (see the module docs). Called from the
/// task that reaped the command; an implementation hands the report on without blocking.
pub trait ExitSink: Send + Sync {
    /// `exit` ended; called once per command.
    fn exited(&self, exit: ProcessExit);
}

/// The background commands of one session (or whatever scope the runtime shares it over).
#[derive(Debug)]
pub struct ProcessRegistry {
    inner: Mutex<Inner>,
    max_running: usize,
    log_bytes: usize,
    sink: std::sync::OnceLock<SinkSlot>,
}

/// The registry's [`ExitSink`] (a wrapper so the registry stays `Debug`).
#[derive(Clone)]
struct SinkSlot(Arc<dyn ExitSink>);

impl std::fmt::Debug for SinkSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExitSink")
    }
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    entries: BTreeMap<u64, Arc<Entry>>,
}

#[derive(Debug)]
struct Entry {
    id: String,
    command: String,
    session_key: String,
    pgid: i32,
    output: Arc<Mutex<HeadTail>>,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    exit: watch::Receiver<Option<ExitKind>>,
    killed: AtomicBool,
    timed_out: AtomicBool,
}

/// A snapshot of one background command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessInfo {
    /// The id the model uses (`proc-1`).
    pub id: String,
    /// The command line as given.
    pub command: String,
    /// The shell's process id (also its process group id).
    pub pid: i32,
    /// The session that started it.
    pub session_key: String,
    /// Where it stands.
    pub status: ProcessStatus,
    /// Output bytes received so far.
    pub output_bytes: u64,
}

/// Where a background command stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum ProcessStatus {
    /// Still running.
    Running,
    /// Exited with a code.
    Exited {
        /// The exit code.
        code: i32,
    },
    /// Ended by a signal it did not get from us.
    Signalled {
        /// The signal number.
        signal: i32,
    },
    /// Killed by `process kill` or [`ProcessRegistry::kill_all`].
    Killed,
    /// Killed because its timeout passed.
    TimedOut,
}

impl std::fmt::Display for ProcessStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessStatus::Running => f.write_str("running"),
            ProcessStatus::Exited { code } => write!(f, "exited with code {code}"),
            ProcessStatus::Signalled { signal } => {
                f.write_str(&ExitKind::Signal(*signal).describe())
            }
            ProcessStatus::Killed => f.write_str("killed"),
            ProcessStatus::TimedOut => f.write_str("killed after its timeout"),
        }
    }
}

impl Default for ProcessRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ProcessRegistry {
    /// A registry allowing 16 running commands with 256 KiB of output kept each.
    pub fn new() -> Self {
        Self::with_limits(16, 256 * 1024)
    }

    /// A registry allowing `max_running` commands at once, keeping `log_bytes` of each
    /// command's output (head and tail).
    pub fn with_limits(max_running: usize, log_bytes: usize) -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            max_running,
            log_bytes,
            sink: std::sync::OnceLock::new(),
        }
    }

    /// Numbers new commands after `last` (`proc-<last + 1>` next), so a session that was
    /// released and opened again never reuses an id its history mentions.
    pub fn numbered_after(self, last: u64) -> Self {
        lock(&self.inner).next = last;
        self
    }

    /// The number of the last command started (0 before the first).
    pub fn last_number(&self) -> u64 {
        lock(&self.inner).next
    }

    /// True while any command is still running.
    pub fn any_running(&self) -> bool {
        lock(&self.inner)
            .entries
            .values()
            .any(|e| e.exit.borrow().is_none())
    }

    /// Reports commands started from now on that end on their own to `sink`. The first sink
    /// set stays; returns false (and changes nothing) when one was set already.
    pub fn set_exit_sink(&self, sink: Arc<dyn ExitSink>) -> bool {
        self.sink.set(SinkSlot(sink)).is_ok()
    }

    /// Starts `command` in the background in `cwd`. With a `timeout` it is killed (with its
    /// process group) once that passes.
    pub(crate) fn start(
        &self,
        command: &str,
        launch: &Launch<'_>,
        session_key: &str,
        timeout: Option<Duration>,
    ) -> Result<ProcessInfo, ToolError> {
        let running = lock(&self.inner)
            .entries
            .values()
            .filter(|e| e.exit.borrow().is_none())
            .count();
        if running >= self.max_running {
            return Err(ToolError::failed(format!(
                "{running} background processes are already running (the limit); kill one \
                 with the process tool first"
            )));
        }
        let mut spawned = spawn_shell(command, launch, self.log_bytes, true)?;
        let (exit_tx, exit_rx) = watch::channel(None);
        let mut inner = lock(&self.inner);
        inner.next += 1;
        let number = inner.next;
        let entry = Arc::new(Entry {
            id: format!("proc-{number}"),
            command: command.to_owned(),
            session_key: session_key.to_owned(),
            pgid: spawned.pgid,
            output: Arc::clone(&spawned.output),
            stdin: tokio::sync::Mutex::new(spawned.stdin.take()),
            exit: exit_rx,
            killed: AtomicBool::new(false),
            timed_out: AtomicBool::new(false),
        });
        let watcher = Arc::clone(&entry);
        let sink = self.sink.get().cloned();
        let reader = spawned.reader;
        tokio::spawn(async move {
            let mut child = spawned.child;
            let status = match timeout {
                None => child.wait().await,
                Some(limit) => tokio::select! {
                    status = child.wait() => status,
                    () = tokio::time::sleep(limit) => {
                        watcher.timed_out.store(true, Ordering::SeqCst);
                        kill_group(watcher.pgid);
                        child.wait().await
                    }
                },
            };
            // A failed wait means the process is gone in a way we cannot describe.
            let kind = status.map_or(ExitKind::Code(-1), ExitKind::from_status);
            let _ = exit_tx.send(Some(kind));
            // The reader ends by itself at end-of-file; its output is already shared.
            let Some(SinkSlot(sink)) = sink else {
                return;
            };
            if watcher.killed.load(Ordering::SeqCst) {
                return;
            }
            let _ = tokio::time::timeout(DRAIN_WAIT, reader).await;
            let tail = last_chars(&lock(&watcher.output).render(), EXIT_TAIL_CHARS);
            sink.exited(ProcessExit {
                info: watcher.info(),
                tail,
            });
        });
        inner.entries.insert(number, Arc::clone(&entry));
        forget_old(&mut inner.entries);
        Ok(entry.info())
    }

    /// Every command, oldest first.
    pub fn list(&self) -> Vec<ProcessInfo> {
        lock(&self.inner)
            .entries
            .values()
            .map(|e| e.info())
            .collect()
    }

    /// One command's status and its kept output (head and tail, middle elided).
    pub fn log(&self, id: &str) -> Option<(ProcessInfo, String)> {
        let entry = self.find(id)?;
        let text = lock(&entry.output).render();
        Some((entry.info(), text))
    }

    /// Kills a command's whole process group and waits (briefly) until it has been reaped.
    /// Killing a command that has already ended changes nothing.
    pub async fn kill(&self, id: &str) -> Option<ProcessInfo> {
        let entry = self.find(id)?;
        if entry.exit.borrow().is_none() {
            entry.killed.store(true, Ordering::SeqCst);
            kill_group(entry.pgid);
            let mut exit = entry.exit.clone();
            let _ = tokio::time::timeout(KILL_WAIT, exit.wait_for(Option::is_some)).await;
        }
        Some(entry.info())
    }

    /// Writes `data` to a running command's stdin; with `eof` closes it afterwards.
    pub async fn write(&self, id: &str, data: &str, eof: bool) -> Result<ProcessInfo, ToolError> {
        let entry = self
            .find(id)
            .ok_or_else(|| ToolError::NotFound(format!("no background process {id}")))?;
        if entry.exit.borrow().is_some() {
            return Err(ToolError::failed(format!("{id} has already ended")));
        }
        let mut stdin = entry.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(ToolError::failed(format!(
                "the stdin of {id} is already closed"
            )));
        };
        let written = async {
            pipe.write_all(data.as_bytes()).await?;
            pipe.flush().await
        }
        .await;
        if let Err(e) = written {
            return Err(ToolError::failed(format!("cannot write to {id}: {e}")));
        }
        if eof {
            *stdin = None;
        }
        Ok(entry.info())
    }

    /// Kills every command still running (a session ending, a shutdown).
    pub fn kill_all(&self) {
        for entry in lock(&self.inner).entries.values() {
            if entry.exit.borrow().is_none() {
                entry.killed.store(true, Ordering::SeqCst);
                kill_group(entry.pgid);
            }
        }
    }

    fn find(&self, id: &str) -> Option<Arc<Entry>> {
        let number: u64 = id.trim().strip_prefix("proc-")?.parse().ok()?;
        lock(&self.inner).entries.get(&number).cloned()
    }
}

impl Drop for ProcessRegistry {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Forgets the oldest finished entries beyond [`MAX_ENTRIES`].
fn forget_old(entries: &mut BTreeMap<u64, Arc<Entry>>) {
    while entries.len() > MAX_ENTRIES {
        let oldest_finished = entries
            .iter()
            .find(|(_, e)| e.exit.borrow().is_some())
            .map(|(n, _)| *n);
        match oldest_finished {
            Some(number) => entries.remove(&number),
            None => break,
        };
    }
}

impl Entry {
    fn info(&self) -> ProcessInfo {
        let exit = *self.exit.borrow();
        let status = match exit {
            None => ProcessStatus::Running,
            Some(_) if self.timed_out.load(Ordering::SeqCst) => ProcessStatus::TimedOut,
            Some(ExitKind::Signal(_)) if self.killed.load(Ordering::SeqCst) => {
                ProcessStatus::Killed
            }
            Some(ExitKind::Signal(signal)) => ProcessStatus::Signalled { signal },
            Some(ExitKind::Code(code)) => ProcessStatus::Exited { code },
        };
        ProcessInfo {
            id: self.id.clone(),
            command: self.command.clone(),
            pid: self.pgid,
            session_key: self.session_key.clone(),
            status,
            output_bytes: lock(&self.output).total(),
        }
    }
}

/// `process`: manage background commands.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessTool;

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Action {
    List,
    Log,
    Kill,
    Write,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProcessArgs {
    action: Action,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    data: Option<String>,
    #[serde(default)]
    eof: Option<bool>,
}

#[async_trait]
impl Tool for ProcessTool {
    fn name(&self) -> &'static str {
        "process"
    }

    fn description(&self) -> String {
        "Manage commands started with exec background: true. action=list shows them with \
         their status; log shows a command's status and output (the newest part when long); \
         write sends text to its stdin (eof: true closes it); kill stops it and everything it \
         started. Check on a process when there is reason to; do not poll in a loop to wait."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": { "type": "string", "enum": ["list", "log", "kill", "write"], "description": "What to do." },
                "id": { "type": "string", "description": "The process id from exec (proc-N); needed for log, kill and write." },
                "data": { "type": "string", "description": "Text to send to stdin (write)." },
                "eof": { "type": "boolean", "description": "Close stdin after writing (write). Default false." }
            },
            "required": ["action"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: ProcessArgs = parse(self.name(), arguments)?;
            let registry = &ctx.processes;
            let id = || {
                args.id
                    .as_deref()
                    .filter(|id| !id.trim().is_empty())
                    .ok_or_else(|| ToolError::InvalidArguments {
                        tool: "process",
                        detail: "id: required for this action".to_owned(),
                    })
            };
            let unknown = |id: &str| ToolError::NotFound(format!("no background process {id}"));
            match args.action {
                Action::List => {
                    let all = registry.list();
                    let text = if all.is_empty() {
                        "No background processes.".to_owned()
                    } else {
                        all.iter().map(line).collect::<Vec<_>>().join("\n")
                    };
                    Ok(ToolOutcome::ok_with(text, json!({ "processes": all })))
                }
                Action::Log => {
                    let id = id()?;
                    let (info, output) = registry.log(id).ok_or_else(|| unknown(id))?;
                    let output = if output.is_empty() {
                        "(no output yet)".to_owned()
                    } else {
                        last_chars(&output, ctx.limits.excerpt_chars)
                    };
                    Ok(ToolOutcome::ok_with(
                        format!("{}\nOutput:\n{output}", line(&info)),
                        json!({ "process": info }),
                    ))
                }
                Action::Kill => {
                    let id = id()?;
                    let info = registry.kill(id).await.ok_or_else(|| unknown(id))?;
                    Ok(ToolOutcome::ok_with(
                        line(&info),
                        json!({ "process": info }),
                    ))
                }
                Action::Write => {
                    let id = id()?;
                    let eof = args.eof.unwrap_or(false);
                    let data = match (&args.data, eof) {
                        (Some(data), _) => data.as_str(),
                        (None, true) => "",
                        (None, false) => {
                            return Err(ToolError::InvalidArguments {
                                tool: "process",
                                detail: "data: required for write unless eof is true".to_owned(),
                            });
                        }
                    };
                    let info = registry.write(id, data, eof).await?;
                    let closed = if eof { " and closed its stdin" } else { "" };
                    Ok(ToolOutcome::ok_with(
                        format!("Wrote {} bytes to {id}{closed}.", data.len()),
                        json!({ "process": info }),
                    ))
                }
            }
        };
        run.await.into()
    }
}

/// `proc-1 [running] pid 42: npm run dev`
fn line(info: &ProcessInfo) -> String {
    let command: String = info.command.chars().take(120).collect();
    let more = if info.command.chars().count() > 120 {
        "…"
    } else {
        ""
    };
    format!(
        "{} [{}] pid {}: {command}{more}",
        info.id, info.status, info.pid
    )
}
