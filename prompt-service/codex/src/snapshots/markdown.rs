//! One scenario rendered as the snapshot Markdown (layout of OpenClaw's
//! `codex-runtime-happy-path` fixtures) and its tool catalog JSON.

use serde_json::{Value, json};

use super::{GENERATED_NOTE, MODEL_CATALOG_DIR, scenarios::Scenario};
use crate::{
    catalog::ModelFixture,
    error::CodexError,
    layers::{CodexOwnedText, Layer},
    params::CODEX_PROTOCOL_VERSION,
    routing::{Route, status_name},
    turn::{CodexTurn, render_codex_turn},
};

/// The tool catalog file name of a scenario.
pub fn tools_file_name(scenario: &Scenario) -> String {
    format!("codex-dynamic-tools.{}.json", scenario.tools_key)
}

/// Pretty JSON with a trailing newline. Objects we build have sorted keys.
pub fn pretty(value: &Value) -> String {
    format!(
        "{}\n",
        serde_json::to_string_pretty(value).unwrap_or_default()
    )
}

/// A fenced block whose fence is longer than any backtick run inside it.
fn fenced(lang: &str, text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}", text.trim_end_matches('\n'))
}

fn json_block(value: &Value) -> String {
    fenced("json", &pretty(value))
}

fn heading(layer: &Layer, fixture: &ModelFixture) -> String {
    if layer.carrier == crate::layers::CARRIER_MODEL {
        format!(
            "{}: {} ({}, {})",
            layer.role.title(),
            layer.title,
            fixture.model,
            fixture.personality
        )
    } else {
        format!("{}: {}", layer.role.title(), layer.title)
    }
}

/// Replaces the long strings of a params object by pointers into the
/// layer section, so the params stay readable.
fn redact(params: &Value, tools_file: &str) -> Value {
    let mut out = params.clone();
    let replacements = [
        (
            "/developerInstructions",
            "<see Developer: OpenClaw Runtime Instructions>".to_owned(),
        ),
        (
            "/collaborationMode/settings/developer_instructions",
            "<see Developer: OpenClaw Turn Instructions>".to_owned(),
        ),
        ("/input/0/text", "<see User: Turn Input Text>".to_owned()),
        ("/dynamicTools", format!("<see {tools_file}>")),
    ];
    for (pointer, text) in replacements {
        if let Some(slot) = out.pointer_mut(pointer) {
            *slot = Value::String(text);
        }
    }
    out
}

fn codex_owned(scenario: &Scenario, fixture: &ModelFixture) -> CodexOwnedText {
    let input = &scenario.input;
    let has_agents = input.base.context_files.iter().any(|f| {
        f.path.eq_ignore_ascii_case("AGENTS.md") && !f.missing && !f.content.trim().is_empty()
    });
    let environment = "<Codex environment context (cwd, shell, date, time zone) will be here>";
    let project_docs = if input.is_lightweight_cron() || !has_agents {
        environment.to_owned()
    } else {
        format!("<AGENTS.md contents will be here (Codex reads the file itself)>\n{environment}")
    };
    CodexOwnedText {
        model_instructions: fixture.instructions.clone(),
        permissions: format!(
            "<Codex permission instructions for sandbox {} and approval policy {} will be here>",
            input.sandbox.thread_str(),
            input.approval_policy.codex_str()
        ),
        project_docs_and_environment: project_docs,
    }
}

fn metadata(scenario: &Scenario, turn: &CodexTurn, tools_file: &str) -> Value {
    let input = &scenario.input;
    let paths = |routes: &[Route], used_only: bool| -> Vec<Value> {
        turn.files
            .iter()
            .filter(|f| routes.contains(&f.route) && (!used_only || f.injected_chars > 0))
            .map(|f| Value::String(f.path.clone()))
            .collect()
    };
    let heartbeat = turn
        .files
        .iter()
        .find(|f| f.route == Route::HeartbeatPointer)
        .map_or(Value::Null, |f| Value::String(f.path.clone()));
    let routes: Vec<Value> = turn
        .files
        .iter()
        .map(|f| {
            json!({
                "path": f.path,
                "route": f.route.as_str(),
                "status": status_name(f.status),
                "rawChars": f.raw_chars,
                "injectedChars": f.injected_chars,
            })
        })
        .collect();
    crate::json::sorted(&json!({
        "channel": scenario.channel,
        "chatType": scenario.chat_type,
        "codexAppServerVersion": CODEX_PROTOCOL_VERSION,
        "codexModelInstructionsFixture": format!("../{MODEL_CATALOG_DIR}/{}", ModelFixture::instructions_file_name()),
        "harness": "codex",
        "model": input.model,
        "modelProvider": "openai",
        "resume": input.resume,
        "runtime": "codex_app_server",
        "simulatedHeartbeatWorkspaceFile": heartbeat,
        "simulatedWorkspaceBootstrapFiles": input.base.context_files.iter().map(|f| f.path.clone()).collect::<Vec<_>>(),
        "simulatedWorkspaceDeveloperInstructionFiles": paths(&[Route::ThreadInstructions], true),
        "simulatedWorkspaceTurnInputFiles": paths(&[Route::TurnInput], true),
        "simulatedWorkspaceTurnScopedDeveloperInstructionFiles": paths(&[Route::TurnInstructions], true),
        "sourceReplyDeliveryMode": match input.base.channel.reply_delivery {
            prompt_render::ReplyDelivery::Automatic => "automatic",
            prompt_render::ReplyDelivery::MessageToolOnly => "message_tool_only",
        },
        "threadId": input.thread_id,
        "toolSnapshot": tools_file,
        "trigger": input.trigger.as_str(),
        "workspaceFileRoutes": routes,
    }))
}

fn layer_metadata(
    scenario: &Scenario,
    turn: &CodexTurn,
    fixture: &ModelFixture,
    layers: &[Layer],
) -> Value {
    let input = &scenario.input;
    let stack: Vec<Value> = layers
        .iter()
        .map(|l| {
            json!({
                "layer": format!("{}: {}", l.role.title(), l.title),
                "carrier": l.carrier,
                "codexOwned": l.codex_owned,
            })
        })
        .collect();
    crate::json::sorted(&json!({
        "codexModelInstructions": {
            "catalogKind": fixture.source.kind,
            "catalogPath": fixture.source.path,
            "field": fixture.field,
            "model": fixture.model,
            "personality": fixture.personality,
        },
        "permissions": {
            "approvalPolicy": input.approval_policy.codex_str(),
            "sandbox": input.sandbox.thread_str(),
            "sandboxPolicy": turn.turn_start.get("sandboxPolicy"),
        },
        "limitations": [
            "Codex writes the permission instructions, the environment context and (unless switched off) its own skills instructions; they are placeholders here, so their sizes are not real.",
            "Codex 0.169 sends the model instructions as the first developer-role input item; the role shown is the layer's purpose.",
            "Our collaboration-mode developer_instructions replace Codex's built-in text for the default mode. On a new thread they close the developer message that opens with our thread instructions; later turns carry them again only when they changed, as a developer message of their own before the user input.",
            "developerInstructions on thread/resume do not change an existing thread: Codex keeps those of thread creation.",
            "An empty threadId means there is no thread yet: take it from the thread/start result.",
        ],
        "openClawRuntime": stack,
    }))
}

fn estimates(layers: &[Layer]) -> Value {
    let mut rows: Vec<Value> = layers
        .iter()
        .map(|l| {
            json!({
                "layer": format!("{}: {}", l.role.title(), l.title),
                "chars": l.chars,
                "approxTokens": l.approx_tokens,
            })
        })
        .collect();
    let chars: u32 = layers.iter().map(|l| l.chars).sum();
    rows.push(json!({"layer": "total", "chars": chars, "approxTokens": chars.div_ceil(4)}));
    crate::json::sorted(&Value::Array(rows))
}

/// The snapshot Markdown and the tool catalog JSON of one scenario.
pub fn render(scenario: &Scenario, fixture: &ModelFixture) -> Result<(String, String), CodexError> {
    let turn = render_codex_turn(&scenario.input)?;
    let tools_file = tools_file_name(scenario);
    let layers = turn.layers(&codex_owned(scenario, fixture));
    let critical: Vec<Value> = turn
        .tools
        .specs
        .iter()
        .flat_map(|spec| match spec.get("tools").and_then(Value::as_array) {
            Some(members) => members.clone(),
            None => vec![spec.clone()],
        })
        .filter(|spec| {
            spec.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| scenario.critical_tools.contains(&n))
        })
        .collect();

    let mut out = vec![
        GENERATED_NOTE.to_owned(),
        format!("# {}", scenario.title),
        "## Scope".to_owned(),
        scenario
            .scope
            .iter()
            .map(|s| format!("- {s}"))
            .collect::<Vec<_>>()
            .join("\n"),
        "## Scenario Metadata".to_owned(),
        json_block(&metadata(scenario, &turn, &tools_file)),
        "## Effective OpenClaw Config".to_owned(),
        json_block(&scenario.config),
        "## Thread Start Params".to_owned(),
        json_block(&redact(&turn.thread_start, &tools_file)),
        "## Thread Resume Params".to_owned(),
        json_block(&redact(&turn.thread_resume, &tools_file)),
        "## Turn Start Params".to_owned(),
        json_block(&redact(&turn.turn_start, &tools_file)),
        "## Reconstructed Model-Bound Prompt Layers".to_owned(),
        "### Layer Metadata".to_owned(),
        json_block(&layer_metadata(scenario, &turn, fixture, &layers)),
        "### Rough Text Token Estimates".to_owned(),
        json_block(&estimates(&layers)),
    ];
    for layer in &layers {
        out.push(format!("### {}", heading(layer, fixture)));
        let lang = if layer.carrier == crate::layers::CARRIER_TOOLS {
            "json"
        } else {
            "text"
        };
        out.push(fenced(lang, &layer.text));
    }
    out.extend([
        "## Dynamic Tool Names".to_owned(),
        json_block(&json!({"deferred": turn.tools.deferred, "registered": turn.tools.names})),
        "## Critical Visible-Reply Tool Specs".to_owned(),
        json_block(&Value::Array(critical)),
    ]);
    let markdown = format!("{}\n", out.join("\n\n"));
    Ok((markdown, pretty(&Value::Array(turn.tools.specs.clone()))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_backtick_runs() {
        assert_eq!(fenced("text", "a"), "```text\na\n```");
        assert_eq!(fenced("", "x ```` y"), "`````\nx ```` y\n`````");
    }
}
