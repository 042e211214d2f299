//! `exec`: runs a shell command in the workspace, in the foreground with a timeout and an
//! output cap, or in the background under the session's [`ProcessRegistry`].
//!
//! Foreground commands are killed with their whole process group when the timeout passes or
//! the run is cancelled. When the shell exits but something it started still holds the output
//! pipe, that output is read for a short grace period and then the rest of the group is
//! killed: a foreground call must return, and long-running work belongs in the background.
//! A foreground call that is dropped before it returns kills its process group too.
//! Background commands outlive the run that started them (cancelling a run does not stop
//! them); they end with `process kill`, their own timeout, or the registry.
//!
//! [`ProcessRegistry`]: crate::process::ProcessRegistry

use std::path::PathBuf;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::approval::{ApprovalSubject, Question, Settlement, settle};
use crate::arguments::{non_empty, parse};
use crate::context::ToolContext;
use crate::error::{ToolError, blocking};
use crate::spawn::{ExitKind, GroupGuard, Launch, kill_group, lock, spawn_shell};
use crate::tool::{Tool, ToolOutcome};

/// `exec`: a shell command in the workspace.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExecTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExecArgs {
    command: String,
    #[serde(default, alias = "timeoutSec", alias = "timeout_sec")]
    timeout: Option<u64>,
    #[serde(default)]
    background: Option<bool>,
    #[serde(default)]
    workdir: Option<String>,
}

#[async_trait]
impl Tool for ExecTool {
    fn name(&self) -> &'static str {
        "exec"
    }

    fn description(&self) -> String {
        "Run a shell command (sh -c) in the workspace and return its exit code and combined \
         stdout/stderr. In a sandboxed session it runs inside the sandbox. Long output keeps its beginning and end. The command is killed, with \
         everything it started, when the timeout passes. Set background to true for \
         long-running commands started now (servers, watchers, builds): the call returns a \
         process id at once and the process tool reads its output or stops it. Do not use \
         sleep loops to wait for later events. Commands are checked against the operator's \
         exec approval policy (tools.exec); a refused command does not run."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": { "type": "string", "description": "The shell command line." },
                "timeout": { "type": "integer", "minimum": 1, "description": "Seconds before the command is killed. Default from the runtime config." },
                "background": { "type": "boolean", "description": "Start the command in the background and return its process id. Default false." },
                "workdir": { "type": "string", "description": "Directory to run in, relative to the workspace root. Default: the root." }
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let mut note: Option<String> = None;
        let run = async {
            let args: ExecArgs = parse(self.name(), arguments)?;
            non_empty(self.name(), "command", &args.command)?;
            if args.timeout == Some(0) {
                return Err(ToolError::InvalidArguments {
                    tool: "exec",
                    detail: "timeout: must be at least 1 second".to_owned(),
                });
            }
            let cwd = working_dir(ctx, args.workdir.clone()).await?;
            note = approve(ctx, &args.command, &cwd).await?;
            let requested = args.timeout.map(Duration::from_secs);
            if args.background.unwrap_or(false) {
                let launch = Launch {
                    cwd: &cwd,
                    sandbox: ctx.sandbox.as_deref(),
                    hidden_env: &ctx.hidden_env,
                };
                let info = ctx.processes.start(
                    &args.command,
                    &launch,
                    &ctx.session_key,
                    requested.map(|t| t.min(ctx.limits.exec_max_timeout)),
                )?;
                return Ok(ToolOutcome::ok_with(
                    format!(
                        "Started background process {} (pid {}). Read its output with process \
                         action=log id={}; stop it with action=kill.",
                        info.id, info.pid, info.id
                    ),
                    json!({ "id": info.id, "pid": info.pid, "background": true }),
                ));
            }
            let timeout = requested
                .unwrap_or(ctx.limits.exec_timeout)
                .min(ctx.limits.exec_max_timeout);
            run_foreground(ctx, &args.command, &cwd, timeout).await
        };
        let mut outcome: ToolOutcome = run.await.into();
        if let Some(note) = note {
            let text = outcome.text_mut();
            *text = format!("{note}\n{text}");
        }
        outcome
    }
}

/// Exec approvals ([`crate::exec_policy`]): a command runs when the policy allows it or a
/// person approves it; otherwise it is an error result for the model and nothing runs. On
/// success, the note to prepend to the result (who approved it), if any.
async fn approve(
    ctx: &ToolContext,
    command: &str,
    cwd: &std::path::Path,
) -> Result<Option<String>, ToolError> {
    let question = Question {
        subject: ApprovalSubject::Command,
        command,
        cwd,
        call_id: &ctx.call_id,
    };
    // A sandboxed command finds its program on the sandbox's PATH, not the service's.
    let sandboxed;
    let policy = if ctx.sandbox.is_some() {
        sandboxed = ctx
            .exec_policy
            .clone()
            .with_search_path(openclaw_sandbox::SANDBOX_PATH);
        &sandboxed
    } else {
        &ctx.exec_policy
    };
    let verdict = policy.verdict_in(command, cwd);
    let always = || policy.always_patterns_in(command, cwd);
    match settle(
        verdict,
        question,
        always,
        ctx.approver.as_ref(),
        &ctx.cancel,
    )
    .await
    {
        Settlement::Allowed => Ok(None),
        Settlement::Refused { reason } => Err(ToolError::PermissionDenied(format!(
            "permission denied: exec approval refused this command, so it was not run: \
             {reason}. Rewording the command will not change that: tell the user what you \
             need to run, or use the other tools."
        ))),
        Settlement::Approved { id, decision, by } => Ok(Some(format!(
            "[Approved {decision} by {by} (approval {id}).]"
        ))),
        Settlement::Denied { id, by } => Err(ToolError::PermissionDenied(format!(
            "permission denied: {by} denied this command (approval {id}), so it was not run. \
             Do not retry it: ask the user what they would like instead."
        ))),
        Settlement::FellBack {
            allowed: true,
            why,
            fallback,
            ..
        } => Ok(Some(format!("[{why}; {fallback} and let it run.]"))),
        Settlement::FellBack {
            reason,
            why,
            fallback,
            ..
        } => Err(ToolError::PermissionDenied(format!(
            "permission denied: this command needs approval ({reason}) and {why}, so {fallback} \
             and it was not run. Do not retry it reworded: tell the user what you need to \
             run and why."
        ))),
        Settlement::Cancelled => Err(ToolError::Cancelled(
            "Command not run: the run was cancelled while it waited for approval.".to_owned(),
        )),
    }
}

/// The directory to run in: the workspace root, or a directory inside it.
async fn working_dir(ctx: &ToolContext, workdir: Option<String>) -> Result<PathBuf, ToolError> {
    let Some(dir) = workdir.filter(|d| !d.trim().is_empty()) else {
        return Ok(ctx.workspace.root().to_path_buf());
    };
    let workspace = ctx.workspace.clone();
    blocking(move || {
        let real = workspace.resolve_read(&dir)?;
        if !real.is_dir() {
            return Err(ToolError::failed(format!(
                "workdir {dir} is not a directory"
            )));
        }
        Ok(real)
    })
    .await
}

/// How a foreground command ended.
enum End {
    Exited(std::io::Result<std::process::ExitStatus>),
    TimedOut,
    Cancelled,
}

async fn run_foreground(
    ctx: &ToolContext,
    command: &str,
    cwd: &std::path::Path,
    timeout: Duration,
) -> Result<ToolOutcome, ToolError> {
    let started = Instant::now();
    let launch = Launch {
        cwd,
        sandbox: ctx.sandbox.as_deref(),
        hidden_env: &ctx.hidden_env,
    };
    let mut spawned = spawn_shell(command, &launch, ctx.limits.exec_output_bytes, false)?;
    let mut guard = GroupGuard::new(spawned.pgid);
    let end = tokio::select! {
        status = spawned.child.wait() => End::Exited(status),
        () = tokio::time::sleep(timeout) => End::TimedOut,
        () = ctx.cancel.cancelled() => End::Cancelled,
    };
    let grace = ctx.limits.exec_drain_grace;
    let mut killed_leftovers = false;
    let mut drained = false;
    let exit = match &end {
        End::Exited(Ok(status)) => {
            if tokio::time::timeout(grace, &mut spawned.reader)
                .await
                .is_ok()
            {
                drained = true;
            } else {
                // Something the command started still holds the pipe.
                kill_group(spawned.pgid);
                killed_leftovers = true;
            }
            Some(ExitKind::from_status(*status))
        }
        End::Exited(Err(e)) => {
            kill_group(spawned.pgid);
            return Err(ToolError::Internal(format!(
                "waiting for the command failed: {e}"
            )));
        }
        End::TimedOut | End::Cancelled => {
            kill_group(spawned.pgid);
            // Reap the shell so it does not linger as a zombie; SIGKILL cannot be ignored.
            let _ = spawned.child.wait().await;
            None
        }
    };
    // From here on the group is dead or empty; killing it again could hit a reused id.
    guard.disarm();
    // Output written by processes that escaped the group is not waited for forever.
    if !drained
        && tokio::time::timeout(grace, &mut spawned.reader)
            .await
            .is_err()
    {
        spawned.reader.abort();
    }
    let (output, total, omitted) = {
        let capture = lock(&spawned.output);
        (capture.render(), capture.total(), capture.omitted())
    };
    let shown = if output.is_empty() {
        "(no output)".to_owned()
    } else {
        output
    };
    let mut details = json!({
        "duration_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        "output_bytes": total,
        "output_omitted_bytes": omitted,
    });
    let cancelled = matches!(end, End::Cancelled);
    match exit {
        Some(kind) => {
            let label = match kind {
                ExitKind::Code(code) => {
                    details["exit_code"] = json!(code);
                    format!("Exit code: {code}")
                }
                ExitKind::Signal(signal) => {
                    details["signal"] = json!(signal);
                    format!("Exited: {}", kind.describe())
                }
            };
            let mut text = format!("{label}\nOutput:\n{shown}");
            if killed_leftovers {
                text.push_str(
                    "\n[The command exited but processes it started kept its output open; they \
                     were killed. Use background: true for long-running processes.]",
                );
            }
            Ok(ToolOutcome::ok_with(text, details))
        }
        None if cancelled => Err(ToolError::Cancelled(format!(
            "Command interrupted: the run was cancelled, so the command and everything it \
             started were killed.\nOutput so far:\n{shown}"
        ))),
        None => Err(ToolError::failed(format!(
            "Command timed out after {} s and was killed with everything it started. Use a \
             longer timeout, or background: true for long-running commands.\nOutput before \
             the timeout:\n{shown}",
            timeout.as_secs()
        ))),
    }
}
