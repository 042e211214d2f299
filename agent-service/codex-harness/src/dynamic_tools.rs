//! Our tools as Codex dynamic tools: their specs for `thread/start` and the
//! answer to an `item/tool/call` request.
//!
//! The call runs through [`ToolRegistry::call`] with the run's
//! [`ToolContext`], so the registry's tool policy (only allowed tools are in
//! it) and the context's workspace confinement apply exactly as in the
//! embedded loop.

use std::sync::Arc;

use openclaw_tools::{ToolContext, ToolOutcome, ToolRegistry, ToolSchema};
use openclaw_transcript::{ContentBlock, ToolResultMessage};
use serde_json::{Value, json};

/// One of our tools as Codex declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct DynamicToolSpec {
    /// The function name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments, encoded once per tool definition.
    pub input_schema: ToolSchema,
}

impl DynamicToolSpec {
    /// The `thread/start.dynamicTools` entry:
    /// `{type: "function", name, description, inputSchema}`.
    pub fn to_codex(&self) -> Value {
        json!({
            "type": "function",
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        })
    }
}

/// The registry's tools, in the registry's order. Feed them to
/// `RenderCodexTurnRequest.dynamic_tools` (name, description, and
/// `input_schema` as JSON text) so the mapped `thread/start` declares them.
pub fn dynamic_tool_specs(tools: &ToolRegistry) -> Vec<DynamicToolSpec> {
    tools
        .specs()
        .into_iter()
        .map(|spec| DynamicToolSpec {
            name: spec.name,
            description: spec.description.to_string(),
            input_schema: spec.parameters,
        })
        .collect()
}

/// The outcome of one `item/tool/call`.
pub(crate) struct ToolAnswer {
    /// The JSON-RPC result: `{contentItems: [{type: "inputText", text}], success}`, the text
    /// fenced as untrusted data as the embedded loop fences a tool result.
    pub result: Value,
    /// The tool's text as it returned it, for the transcript.
    pub raw: String,
    /// The tool asked to end the turn ([`ToolOutcome::EndTurn`]).
    pub end_turn: bool,
}

/// Runs the requested tool. A namespaced call is never ours (we declare
/// top-level functions only) and is refused like an unknown name.
pub(crate) async fn answer(
    tools: Arc<ToolRegistry>,
    ctx: ToolContext,
    params: Value,
) -> ToolAnswer {
    let tool = params
        .get("tool")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let namespace = params.get("namespace").and_then(Value::as_str);
    let arguments = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let outcome = match namespace {
        Some(ns) if !ns.is_empty() => ToolOutcome::error(format!(
            "there is no tool called {ns}.{tool}; the available tools are: {}",
            tools.names().join(", ")
        )),
        _ => tools.call(&ctx, tool, arguments).await,
    };
    let call_id = params
        .get("callId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let raw = outcome.text().to_owned();
    // What the model reads of a tool's output is data, never instructions (lesson L15 b):
    // the same fence, scope and notice as an embedded model's tool result.
    let fenced = ctx.fence.tool_result(&ToolResultMessage {
        tool_call_id: call_id.to_owned(),
        tool_name: tool.to_owned(),
        content: vec![ContentBlock::text(raw.clone())],
        is_error: outcome.is_error(),
        details: None,
        timestamp: 0,
    });
    let text = fenced
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<String>();
    ToolAnswer {
        result: json!({
            "contentItems": [{"type": "inputText", "text": text}],
            "success": !outcome.is_error(),
        }),
        raw,
        end_turn: matches!(outcome, ToolOutcome::EndTurn { .. }),
    }
}
