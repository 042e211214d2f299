//! `RenderCodexTurn`: conversions between the proto messages and
//! `prompt-codex`. Requests are destructured field by field, so a new proto
//! field breaks the build here until it is handled.

use openclaw_proto::prompt::v1 as pb;
use prompt_codex as codex;

use crate::{
    convert::{enum_value, input_from_request, status_to_pb},
    error::ServerError,
};

/// Maps a request exactly as the RPC does.
pub fn render_codex_request(
    req: pb::RenderCodexTurnRequest,
) -> Result<pb::RenderCodexTurnResponse, ServerError> {
    let input = codex_input_from_request(req)?;
    let turn = codex::render_codex_turn(&input)?;
    Ok(response_from_turn(&turn))
}

/// Converts a request into the mapping's input, naming the field of any bad
/// value (`base.` for the shared inputs).
pub fn codex_input_from_request(
    req: pb::RenderCodexTurnRequest,
) -> Result<codex::CodexTurnInput, ServerError> {
    let pb::RenderCodexTurnRequest {
        base,
        trigger,
        lightweight_cron,
        memory_tools_available,
        memory_workspace_is_active,
        thread_id,
        resume,
        model,
        effort,
        approval_policy,
        sandbox,
        dynamic_tools,
        input_text,
        cwd,
        thread_context,
    } = req;
    let base = input_from_request(base.unwrap_or_default()).map_err(|e| e.within("base"))?;
    let trigger = match enum_value::<pb::CodexTrigger>("trigger", trigger)? {
        pb::CodexTrigger::Unspecified => return Err(unset("trigger", "USER, HEARTBEAT or CRON")),
        pb::CodexTrigger::User => codex::Trigger::User,
        pb::CodexTrigger::Heartbeat => codex::Trigger::Heartbeat,
        pb::CodexTrigger::Cron => codex::Trigger::Cron,
    };
    let approval_policy =
        match enum_value::<pb::CodexApprovalPolicy>("approval_policy", approval_policy)? {
            pb::CodexApprovalPolicy::Unspecified => {
                return Err(unset("approval_policy", "UNTRUSTED, ON_REQUEST or NEVER"));
            }
            pb::CodexApprovalPolicy::Untrusted => codex::ApprovalPolicy::Untrusted,
            pb::CodexApprovalPolicy::OnRequest => codex::ApprovalPolicy::OnRequest,
            pb::CodexApprovalPolicy::Never => codex::ApprovalPolicy::Never,
        };
    let sandbox = match enum_value::<pb::CodexSandboxMode>("sandbox", sandbox)? {
        pb::CodexSandboxMode::Unspecified => {
            return Err(unset(
                "sandbox",
                "READ_ONLY, WORKSPACE_WRITE or DANGER_FULL_ACCESS",
            ));
        }
        pb::CodexSandboxMode::ReadOnly => codex::SandboxMode::ReadOnly,
        pb::CodexSandboxMode::WorkspaceWrite => codex::SandboxMode::WorkspaceWrite,
        pb::CodexSandboxMode::DangerFullAccess => codex::SandboxMode::DangerFullAccess,
    };
    Ok(codex::CodexTurnInput {
        base,
        trigger,
        lightweight_cron,
        memory_tools_available,
        memory_workspace_is_active,
        thread_id,
        resume,
        model,
        effort,
        approval_policy,
        sandbox,
        dynamic_tools: dynamic_tools.into_iter().map(dynamic_tool_of).collect(),
        input_text,
        cwd,
        thread_context: thread_context
            .into_iter()
            .map(|digest| {
                let pb::CodexContextDigest { path, sha256 } = digest;
                codex::ContextDigest { path, sha256 }
            })
            .collect(),
    })
}

/// A required enum left unset: the field must be one of `choices`.
fn unset(field: &str, choices: &str) -> ServerError {
    ServerError::invalid(field, format!("must be set ({choices})"))
}

fn dynamic_tool_of(tool: pb::CodexDynamicTool) -> codex::DynamicTool {
    let pb::CodexDynamicTool {
        name,
        description,
        json_schema,
        defer_loading,
        namespace,
    } = tool;
    codex::DynamicTool {
        name,
        description,
        json_schema,
        defer_loading,
        namespace,
    }
}

fn role_to_pb(role: codex::Role) -> pb::CodexLayerRole {
    match role {
        codex::Role::System => pb::CodexLayerRole::System,
        codex::Role::Developer => pb::CodexLayerRole::Developer,
        codex::Role::User => pb::CodexLayerRole::User,
        codex::Role::Tools => pb::CodexLayerRole::Tools,
    }
}

fn route_to_pb(route: codex::Route) -> pb::CodexFileRoute {
    match route {
        codex::Route::CodexProjectDoc => pb::CodexFileRoute::CodexProjectDoc,
        codex::Route::ThreadInstructions => pb::CodexFileRoute::ThreadDeveloperInstructions,
        codex::Route::TurnInstructions => pb::CodexFileRoute::TurnDeveloperInstructions,
        codex::Route::TurnInput => pb::CodexFileRoute::TurnInput,
        codex::Route::MemoryToolsNote => pb::CodexFileRoute::MemoryToolsNote,
        codex::Route::HeartbeatPointer => pb::CodexFileRoute::HeartbeatPointer,
    }
}

/// Converts a mapped turn into the RPC response. Codex-owned layers are
/// listed with empty text: the service cannot know what Codex writes.
pub fn response_from_turn(turn: &codex::CodexTurn) -> pb::RenderCodexTurnResponse {
    pb::RenderCodexTurnResponse {
        thread_start_params_json: turn.thread_start.to_string(),
        thread_resume_params_json: turn.thread_resume.to_string(),
        turn_start_params_json: turn.turn_start.to_string(),
        new_thread_turn_start_params_json: turn
            .new_thread_turn_start
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        turn_context: turn
            .turn_context
            .iter()
            .map(|d| pb::CodexContextDigest {
                path: d.path.clone(),
                sha256: d.sha256.clone(),
            })
            .collect(),
        layers: turn
            .layers(&codex::CodexOwnedText::default())
            .into_iter()
            .map(|layer| {
                let codex::Layer {
                    role,
                    carrier,
                    title,
                    text,
                    chars,
                    approx_tokens,
                    codex_owned,
                } = layer;
                pb::CodexPromptLayer {
                    role: role_to_pb(role) as i32,
                    carrier,
                    title,
                    text,
                    chars,
                    approx_tokens,
                    codex_owned,
                }
            })
            .collect(),
        files: turn
            .files
            .iter()
            .map(|f| pb::CodexFileReport {
                path: f.path.clone(),
                route: route_to_pb(f.route) as i32,
                status: status_to_pb(f.status) as i32,
                raw_chars: f.raw_chars,
                injected_chars: f.injected_chars,
                held_by_thread: f.held_by_thread,
            })
            .collect(),
    }
}
