//! The Codex 0.169 app-server params objects, with Codex's exact field names
//! and enum spellings, as the pinned Codex's generated JSON schema has them (codex-peer
//! checks every params object against it).
//!
//! - `baseInstructions` is never set: Codex keeps its own model instructions.
//! - `personality` is always `"none"`.
//! - `sandbox` is the kebab-case mode on `thread/start` and `thread/resume`;
//!   `turn/start` takes the tagged camelCase `sandboxPolicy` object instead.
//! - A lightweight cron turn sends no instructions of ours and switches
//!   Codex's own AGENTS.md loading off (`project_doc_max_bytes = 0`).

use serde_json::Value;

use crate::{
    input::{CodexTurnInput, SandboxMode},
    json::object,
};

/// The Codex release whose app-server protocol these params follow.
pub const CODEX_PROTOCOL_VERSION: &str = "0.169.0";

/// `serviceName` on `thread/start`.
pub const SERVICE_NAME: &str = "OpenClaw";

/// What the params are assembled from.
#[derive(Debug, Clone, Copy)]
pub struct Parts<'a> {
    /// The request.
    pub input: &'a CodexTurnInput,
    /// Normalised model slug.
    pub model: &'a str,
    /// Normalised effort (empty: not set).
    pub effort: &'a str,
    /// Normalised thread id (empty: not known yet).
    pub thread_id: &'a str,
    /// Effective working directory.
    pub cwd: &'a str,
    /// Normalised workspace directory.
    pub workspace: &'a str,
    /// Thread developer instructions (`None`: none of ours).
    pub thread_instructions: Option<&'a str>,
    /// Turn-scoped collaboration instructions (`None`: no collaboration mode).
    pub turn_instructions: Option<&'a str>,
    /// `input[0].text`.
    pub input_text: &'a str,
    /// The `dynamicTools` array.
    pub dynamic_tools: &'a [Value],
}

fn string(s: &str) -> Value {
    Value::String(s.to_owned())
}

/// The fields `thread/start` and `thread/resume` share.
fn thread_common(p: &Parts<'_>) -> Vec<(&'static str, Value)> {
    let mut pairs = vec![
        (
            "approvalPolicy",
            string(p.input.approval_policy.codex_str()),
        ),
        ("cwd", string(p.cwd)),
        ("model", string(p.model)),
        ("personality", string("none")),
        ("sandbox", string(p.input.sandbox.thread_str())),
    ];
    if let Some(text) = p.thread_instructions {
        pairs.push(("developerInstructions", string(text)));
    }
    if p.input.is_lightweight_cron() {
        // The scheduled prompt must reach the model alone: no project docs.
        pairs.push((
            "config",
            object(vec![("project_doc_max_bytes", Value::from(0))]),
        ));
    }
    pairs
}

/// `thread/start` params: a new, persistent thread for this session.
pub fn thread_start(p: &Parts<'_>) -> Value {
    let mut pairs = thread_common(p);
    pairs.extend([
        ("dynamicTools", Value::Array(p.dynamic_tools.to_vec())),
        // Threads are persisted so a later turn can resume them (lesson L13).
        ("ephemeral", Value::Bool(false)),
        ("serviceName", string(SERVICE_NAME)),
    ]);
    object(pairs)
}

/// `thread/resume` params. Codex keeps the developer instructions frozen at
/// thread creation; they are sent anyway so a resumed and a new thread get
/// the same request.
pub fn thread_resume(p: &Parts<'_>) -> Value {
    let mut pairs = thread_common(p);
    pairs.push(("threadId", string(p.thread_id)));
    object(pairs)
}

/// The tagged `sandboxPolicy` object of `turn/start`. With workspace-write
/// and a working directory outside the workspace, the workspace stays
/// writable as an extra root.
pub fn sandbox_policy(mode: SandboxMode, cwd: &str, workspace: &str) -> Value {
    let tag = ("type", string(mode.policy_type()));
    match mode {
        SandboxMode::DangerFullAccess => object(vec![tag]),
        SandboxMode::ReadOnly => object(vec![tag, ("networkAccess", Value::Bool(false))]),
        SandboxMode::WorkspaceWrite => {
            let roots = if cwd == workspace {
                Vec::new()
            } else {
                vec![string(workspace)]
            };
            object(vec![
                tag,
                ("networkAccess", Value::Bool(false)),
                ("writableRoots", Value::Array(roots)),
            ])
        }
    }
}

/// `turn/start` params.
pub fn turn_start(p: &Parts<'_>) -> Value {
    let effort = (!p.effort.is_empty()).then(|| string(p.effort));
    let mut pairs = vec![
        (
            "approvalPolicy",
            string(p.input.approval_policy.codex_str()),
        ),
        ("cwd", string(p.cwd)),
        (
            "input",
            Value::Array(vec![object(vec![
                ("text", string(p.input_text)),
                ("text_elements", Value::Array(Vec::new())),
                ("type", string("text")),
            ])]),
        ),
        ("model", string(p.model)),
        ("personality", string("none")),
        (
            "sandboxPolicy",
            sandbox_policy(p.input.sandbox, p.cwd, p.workspace),
        ),
        ("threadId", string(p.thread_id)),
    ];
    if let Some(effort) = &effort {
        pairs.push(("effort", effort.clone()));
    }
    if let Some(text) = p.turn_instructions {
        pairs.push((
            "collaborationMode",
            object(vec![
                ("mode", string("default")),
                (
                    "settings",
                    object(vec![
                        ("developer_instructions", string(text)),
                        ("model", string(p.model)),
                        ("reasoning_effort", effort.unwrap_or(Value::Null)),
                    ]),
                ),
            ]),
        ));
    }
    object(pairs)
}
