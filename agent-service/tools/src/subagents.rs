//! `sessions_spawn` and `subagents`: starting child sessions and managing them (P-7,
//! P-22, P-35).
//!
//! A subagent is a child session (`agent:<id>:subagent:<child>`) that works on one task at the
//! same time as its parent. The runtime owns everything about it: the session, its run, the
//! limits, and pushing its result back into the parent session when it ends. These tools only
//! turn the model's arguments into calls on [`SubagentControl`], which the runtime implements,
//! so this crate never depends on the runtime.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::arguments::{non_empty, parse};
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::tool::{Tool, ToolOutcome};

/// What the model asked a subagent to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRequest {
    /// The task, self-contained: the child sees nothing of the parent's conversation.
    pub task: String,
    /// A short human label for lists and the completion message.
    pub label: Option<String>,
}

/// One child of the calling session, as `subagents list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChildInfo {
    /// The child's id (the last part of its session key).
    pub id: String,
    /// The child's full session key.
    pub session_key: String,
    /// Its label, if it was given one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `running`, `done`, `failed` or `killed`.
    pub status: String,
    /// The first line of its task, shortened.
    pub task: String,
    /// Seconds since it was started.
    pub age_seconds: u64,
}

/// Subagent operations on behalf of the calling session; implemented by the runtime. Every
/// error is a plain sentence for the model (a limit reached, an unknown id, ...).
#[async_trait]
pub trait SubagentControl: Send + Sync {
    /// Starts a child session on `request` and returns at once with the child's description;
    /// its result reaches the calling session later as a message.
    async fn spawn(&self, request: SpawnRequest) -> Result<ChildInfo, String>;
    /// The calling session's children, newest first.
    async fn list(&self) -> Vec<ChildInfo>;
    /// Sends `message` into the running child `id` (steered into its current run).
    async fn steer(&self, id: &str, message: &str) -> Result<String, String>;
    /// Stops the running child `id`; no result is pushed back for it.
    async fn kill(&self, id: &str) -> Result<String, String>;
}

/// A session that cannot start subagents (a test, or a runtime without them).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSubagents;

const NO_SUBAGENTS: &str = "this session cannot start or manage subagents";

#[async_trait]
impl SubagentControl for NoSubagents {
    async fn spawn(&self, _request: SpawnRequest) -> Result<ChildInfo, String> {
        Err(NO_SUBAGENTS.to_owned())
    }

    async fn list(&self) -> Vec<ChildInfo> {
        Vec::new()
    }

    async fn steer(&self, _id: &str, _message: &str) -> Result<String, String> {
        Err(NO_SUBAGENTS.to_owned())
    }

    async fn kill(&self, _id: &str) -> Result<String, String> {
        Err(NO_SUBAGENTS.to_owned())
    }
}

/// `sessions_spawn`: starts a subagent on a task.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionsSpawnTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpawnArgs {
    task: String,
    #[serde(default)]
    label: Option<String>,
}

#[async_trait]
impl Tool for SessionsSpawnTool {
    fn name(&self) -> &'static str {
        "sessions_spawn"
    }

    fn description(&self) -> String {
        "Start a subagent: a separate session that works on one task while you carry on. \
         Give it a self-contained task (it does not see this conversation). The call returns \
         at once with the subagent's id; its final answer, or its failure, arrives later in \
         this session as a message, so do not poll for it."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "task": { "type": "string", "description": "What the subagent should do, with every detail it needs." },
                "label": { "type": "string", "description": "A short name for the subagent, shown in lists and in its result message." }
            },
            "required": ["task"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: SpawnArgs = parse(self.name(), arguments)?;
            non_empty(self.name(), "task", &args.task)?;
            let label = args
                .label
                .map(|l| l.trim().to_owned())
                .filter(|l| !l.is_empty());
            let child = ctx
                .subagents
                .spawn(SpawnRequest {
                    task: args.task.trim().to_owned(),
                    label,
                })
                .await
                .map_err(|message| {
                    ToolError::failed(format!("sessions_spawn refused: {message}"))
                })?;
            let text = format!(
                "Subagent {} started (session {}). Its result will arrive in this session as a \
                 message when it finishes; continue with other work meanwhile.",
                child.id, child.session_key
            );
            let details = serde_json::to_value(&child).unwrap_or(Value::Null);
            Ok::<_, ToolError>(ToolOutcome::ok_with(text, details))
        };
        run.await.into()
    }
}

/// `subagents`: lists, steers and kills the calling session's subagents.
#[derive(Debug, Clone, Copy, Default)]
pub struct SubagentsTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubagentsArgs {
    action: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

#[async_trait]
impl Tool for SubagentsTool {
    fn name(&self) -> &'static str {
        "subagents"
    }

    fn description(&self) -> String {
        "Manage the subagents this session started. action=list shows them with their status; \
         action=steer sends a message (message) into a running subagent (id); action=kill \
         stops a running subagent (id). A subagent's label works as its id. Results arrive on their own: never call list in a \
         loop to wait for one."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": { "type": "string", "enum": ["list", "steer", "kill"] },
                "id": { "type": "string", "description": "The subagent's id, or its label (steer, kill)." },
                "message": { "type": "string", "description": "What to tell the subagent (steer)." }
            },
            "required": ["action"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: SubagentsArgs = parse(self.name(), arguments)?;
            let refused = |message: String| ToolError::failed(format!("subagents: {message}"));
            let id = |args: &SubagentsArgs| -> Result<String, ToolError> {
                let id = args.id.as_deref().map(str::trim).unwrap_or_default();
                non_empty("subagents", "id", id)?;
                Ok(id.to_owned())
            };
            match args.action.trim() {
                "list" => {
                    let children = ctx.subagents.list().await;
                    let text = list_text(&children);
                    let details = json!({ "subagents": children });
                    Ok(ToolOutcome::ok_with(text, details))
                }
                "steer" => {
                    let id = id(&args)?;
                    let message = args.message.as_deref().map(str::trim).unwrap_or_default();
                    non_empty("subagents", "message", message)?;
                    let text = ctx.subagents.steer(&id, message).await.map_err(refused)?;
                    Ok(ToolOutcome::ok(text))
                }
                "kill" => {
                    let id = id(&args)?;
                    let text = ctx.subagents.kill(&id).await.map_err(refused)?;
                    Ok(ToolOutcome::ok(text))
                }
                other => Err(ToolError::InvalidArguments {
                    tool: "subagents",
                    detail: format!("action: expected list, steer or kill, got {other:?}"),
                }),
            }
        };
        run.await.into()
    }
}

fn list_text(children: &[ChildInfo]) -> String {
    if children.is_empty() {
        return "This session has no subagents.".to_owned();
    }
    let mut lines = vec![format!("{} subagent(s):", children.len())];
    for c in children {
        let label = c
            .label
            .as_deref()
            .map(|l| format!(" \"{l}\""))
            .unwrap_or_default();
        lines.push(format!(
            "- {}{label}: {} ({} s) — {}",
            c.id, c.status, c.age_seconds, c.task
        ));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_text_names_each_child() {
        assert_eq!(list_text(&[]), "This session has no subagents.");
        let text = list_text(&[ChildInfo {
            id: "a1".into(),
            session_key: "agent:main:subagent:a1".into(),
            label: Some("docs".into()),
            status: "running".into(),
            task: "read the docs".into(),
            age_seconds: 3,
        }]);
        assert!(
            text.contains("a1 \"docs\": running (3 s) — read the docs"),
            "{text}"
        );
    }
}
