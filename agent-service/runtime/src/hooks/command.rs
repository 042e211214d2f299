//! External hook commands: argv run directly (no shell) as the service, in `/` (never in a
//! workspace: see [`super::program::RUN_DIR`]), once the program passes the rules of
//! [`super::program`], with only the variables it allows (no token, no provider key). The
//! request, which names the workspace, goes to
//! stdin as one JSON object; the answer is one JSON object on stdout, whose other keys are
//! ignored (so `cat`, or a `sed` over the request, is a valid bootstrap hook). A nonzero exit, a
//! timeout (the whole command is killed, whatever it started: see `openclaw_sandbox::Lifetime`), output that is not the expected JSON, or
//! more than [`MAX_OUTPUT_BYTES`] of it, is a failure.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use openclaw_config::raw::HookPlacement;
use openclaw_config::resolve::HookCommand;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::program::Refusal;
use super::{HookError, HookFacts, InjectedFile};

/// The most a hook command may print on stdout.
pub(crate) const MAX_OUTPUT_BYTES: u64 = 8 * 1024 * 1024;

/// How much of stderr a failure message quotes.
const STDERR_QUOTE_CHARS: usize = 400;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BootstrapRequest<'a> {
    event: &'static str,
    #[serde(flatten)]
    facts: &'a HookFacts<'a>,
    files: Vec<FileOut<'a>>,
}

#[derive(Serialize)]
struct FileOut<'a> {
    name: &'a str,
    path: &'a Path,
    content: &'a str,
    missing: bool,
}

#[derive(Deserialize)]
struct BootstrapReply {
    files: Vec<FileIn>,
}

#[derive(Deserialize)]
struct FileIn {
    name: String,
    content: String,
    path: Option<PathBuf>,
    #[serde(default)]
    missing: bool,
}

#[derive(Serialize)]
struct PromptRequest<'a> {
    event: &'static str,
    #[serde(flatten)]
    facts: &'a HookFacts<'a>,
}

#[derive(Deserialize)]
struct PromptReply {
    additions: Vec<AdditionIn>,
}

#[derive(Deserialize)]
struct AdditionIn {
    text: String,
    placement: Option<HookPlacement>,
}

/// Asks the command for the new file set.
pub(super) async fn bootstrap(
    cmd: &HookCommand,
    facts: &HookFacts<'_>,
    files: &[InjectedFile],
) -> Result<Vec<InjectedFile>, HookError> {
    let request = BootstrapRequest {
        event: "agent:bootstrap",
        facts,
        files: files
            .iter()
            .map(|f| FileOut {
                name: &f.name,
                path: &f.path,
                content: &f.content,
                missing: f.missing,
            })
            .collect(),
    };
    let reply: BootstrapReply = exchange(cmd, facts, &request).await?;
    let mut out: Vec<InjectedFile> = Vec::with_capacity(reply.files.len());
    for (i, file) in reply.files.into_iter().enumerate() {
        if let Some(problem) = bad_name(&file.name) {
            return Err(HookError::Failed(format!(
                "command {} returned files[{i}].name {:?}, which {problem}",
                shown(cmd),
                file.name
            )));
        }
        if out.iter().any(|f| f.name == file.name) {
            return Err(HookError::Failed(format!(
                "command {} returned {:?} twice (files[{i}])",
                shown(cmd),
                file.name
            )));
        }
        // Without a path, a file keeps the one it came in with (a replaced file may come
        // from under memory/, and the privacy filter judges that path).
        let path = match file.path {
            Some(path) if path.is_relative() => facts.workspace.join(path),
            Some(path) => path,
            None => files
                .iter()
                .find(|f| f.name == file.name)
                .map_or_else(|| facts.workspace.join(&file.name), |f| f.path.clone()),
        };
        out.push(InjectedFile {
            name: file.name,
            path,
            content: if file.missing {
                String::new()
            } else {
                file.content
            },
            missing: file.missing,
        });
    }
    Ok(out)
}

/// Asks the command for its prompt additions.
pub(super) async fn prompt_build(
    cmd: &HookCommand,
    facts: &HookFacts<'_>,
) -> Result<Vec<(HookPlacement, String)>, HookError> {
    let request = PromptRequest {
        event: "before_prompt_build",
        facts,
    };
    let reply: PromptReply = exchange(cmd, facts, &request).await?;
    Ok(reply
        .additions
        .into_iter()
        .map(|a| (a.placement.unwrap_or(HookPlacement::Dynamic), a.text))
        .collect())
}

/// Why a returned file name is refused, if it is.
fn bad_name(name: &str) -> Option<&'static str> {
    if name.trim().is_empty() {
        Some("is empty")
    } else if name.starts_with('/') || name.starts_with('~') || name.starts_with('\\') {
        Some("is not relative to the workspace")
    } else if name.split(['/', '\\']).any(|part| part == "..") {
        Some("leaves the workspace with \"..\"")
    } else if name.chars().any(char::is_control) {
        Some("holds a control character")
    } else {
        None
    }
}

/// Sends `request` as JSON and decodes the reply.
async fn exchange<T: Serialize, R: for<'de> Deserialize<'de>>(
    cmd: &HookCommand,
    facts: &HookFacts<'_>,
    request: &T,
) -> Result<R, HookError> {
    let input = serde_json::to_vec(request)
        .map_err(|e| HookError::Failed(format!("the request could not be encoded: {e}")))?;
    let stdout = run(cmd, facts, &input).await?;
    serde_json::from_slice(&stdout).map_err(|e| {
        HookError::Failed(format!(
            "command {} printed output that is not the expected JSON: {e}",
            shown(cmd)
        ))
    })
}

fn shown(cmd: &HookCommand) -> String {
    format!("{:?}", cmd.argv.join(" "))
}

/// Runs the command with `input` on stdin; its stdout when it exits 0 within the timeout.
async fn run(cmd: &HookCommand, facts: &HookFacts<'_>, input: &[u8]) -> Result<Vec<u8>, HookError> {
    let Some((program, args)) = cmd.argv.split_first() else {
        return Err(HookError::Failed("the command is empty".to_owned()));
    };
    if program.trim().is_empty() {
        return Err(HookError::Failed("the program name is empty".to_owned()));
    }
    // Judged again on every run: a file moved or linked into a workspace since the config
    // loaded is refused now. The real path it resolved to is what runs.
    let program =
        facts
            .launch
            .check(&cmd.argv, facts.workspace)
            .map_err(|refusal| match refusal {
                Refusal::Missing(why) => {
                    HookError::Failed(format!("command {} could not start: {why}", shown(cmd)))
                }
                Refusal::Unsafe(why) => {
                    HookError::Refused(format!("command {} refused: {why}", shown(cmd)))
                }
            })?;
    // In a process group and a pid namespace of their own (`Lifetime`), so the kill below and
    // the service's own end reach everything the command started, detached or not.
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let mut command = tokio::process::Command::from(
        openclaw_sandbox::Lifetime::host().command(program.as_os_str(), &args),
    );
    command
        .env_clear()
        .envs(facts.launch.env())
        .current_dir(super::program::RUN_DIR)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| HookError::Failed(format!("command {} could not start: {e}", shown(cmd))))?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let work = async {
        let write = async {
            if let Some(mut pipe) = stdin.take() {
                // A command that does not read its input may exit first: a broken pipe here
                // is judged by its exit status, not reported on its own.
                let _ = pipe.write_all(input).await;
                let _ = pipe.shutdown().await;
            }
        };
        let read_out = async {
            let mut bytes = Vec::new();
            if let Some(pipe) = stdout.take() {
                let _ = pipe
                    .take(MAX_OUTPUT_BYTES + 1)
                    .read_to_end(&mut bytes)
                    .await;
            }
            bytes
        };
        let read_err = async {
            let mut bytes = Vec::new();
            if let Some(pipe) = stderr.take() {
                let _ = pipe.take(64 * 1024).read_to_end(&mut bytes).await;
            }
            bytes
        };
        let ((), out, err) = tokio::join!(write, read_out, read_err);
        let status = child.wait().await;
        (status, out, err)
    };
    let outcome = tokio::time::timeout(cmd.timeout, work).await;
    // Whatever happened, nothing the command started outlives it.
    if let Some(pgid) = pgid {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
    let Ok((status, out, err)) = outcome else {
        return Err(HookError::Failed(format!(
            "command {} did not finish within {} ms and was stopped",
            shown(cmd),
            cmd.timeout.as_millis()
        )));
    };
    let status = status.map_err(|e| {
        HookError::Failed(format!(
            "command {} could not be waited for: {e}",
            shown(cmd)
        ))
    })?;
    if !status.success() {
        let how = match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            (None, None) => "failed".to_owned(),
        };
        let said = String::from_utf8_lossy(&err);
        let said: String = said.trim().chars().take(STDERR_QUOTE_CHARS).collect();
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        };
        return Err(HookError::Failed(format!(
            "command {} {how}{said}",
            shown(cmd)
        )));
    }
    if out.len() as u64 > MAX_OUTPUT_BYTES {
        return Err(HookError::Failed(format!(
            "command {} printed more than {MAX_OUTPUT_BYTES} bytes",
            shown(cmd)
        )));
    }
    Ok(out)
}
