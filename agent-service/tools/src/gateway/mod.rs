//! `gateway`: the agent's view of the runtime's configuration (P-11, P-12).
//!
//! - `config.schema.lookup`: the JSON Schema of one config key, from `openclaw-config`;
//! - `config.patch`: a JSON merge patch applied to the current `openclaw.json`;
//! - `config.apply`: the whole file replaced.
//!
//! Both writes are validated with the config crate's loader first (every problem reported
//! with its path, line and column; nothing written), and both are refused unless every
//! setting they change is on a short allowlist of display, streaming, reply and queue
//! settings ([`protected`], deny by default): exec settings, tool policy, models, prompts,
//! agent runtimes, workspaces, sandboxes, channels and gateway auth and bind can only be
//! changed by a person editing the file. `config.patch` rewrites the file as formatted JSON, so
//! comments in it are lost (the result says so); `config.apply` writes the text as given.
//! Restart, update and reading the raw file (which may hold secrets) are not offered.

mod protected;

use std::sync::Arc;

use async_trait::async_trait;
use openclaw_config::{ConfigError, LoadOptions, Loader, NoEnv, UnresolvedVars, schema_lookup};
use serde::Deserialize;
use serde_json::{Value, json};

use self::protected::{changed_keys, merge_patch, refused_changes};
use crate::arguments::parse;
use crate::context::{ConfigControl, ToolContext};
use crate::error::{ToolError, blocking};
use crate::output::first_chars;
use crate::tool::{Tool, ToolOutcome};

/// `gateway`: config inspection and changes.
#[derive(Debug, Clone, Copy, Default)]
pub struct GatewayTool;

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
enum Action {
    #[serde(rename = "config.schema.lookup")]
    SchemaLookup,
    #[serde(rename = "config.patch")]
    Patch,
    #[serde(rename = "config.apply")]
    Apply,
    #[serde(rename = "config.get")]
    Get,
    #[serde(rename = "config.schema")]
    Schema,
    #[serde(rename = "restart")]
    Restart,
    #[serde(rename = "update.run")]
    UpdateRun,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GatewayArgs {
    action: Action,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    patch: Option<Value>,
    #[serde(default)]
    raw: Option<String>,
    /// Free text about why; accepted and ignored.
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "accepted so that models sending a reason are not refused"
    )]
    note: Option<String>,
}

#[async_trait]
impl Tool for GatewayTool {
    fn name(&self) -> &'static str {
        "gateway"
    }

    fn description(&self) -> String {
        "Inspect or change the runtime's configuration (openclaw.json). \
         action=config.schema.lookup with path (such as agents.defaults.heartbeat) shows what \
         a config key accepts. action=config.patch with patch (an object) merges it into the \
         config: nested objects merge, null deletes a key. action=config.apply with raw (the \
         complete file as JSON5) replaces the config. Every change is validated first and \
         nothing is written if it is invalid. Only display, streaming, reply and queue \
         settings can be changed here (a refusal lists them); exec settings, tool policy, \
         models, prompts, workspaces, sandboxes, channels' access and gateway auth are for the \
         operator to edit. Restart and update are not available in this runtime."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": { "type": "string", "enum": ["config.schema.lookup", "config.patch", "config.apply"], "description": "What to do." },
                "path": { "type": "string", "description": "Dotted config key for config.schema.lookup, e.g. agents.defaults.heartbeat or agents.list[].tools." },
                "patch": { "type": "object", "description": "JSON merge patch for config.patch." },
                "raw": { "type": "string", "description": "The complete new config file (JSON5) for config.apply; for config.patch, the patch as JSON5 text instead of patch." },
                "note": { "type": "string", "description": "Optional reason for the change." }
            },
            "required": ["action"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: GatewayArgs = parse(self.name(), arguments)?;
            let config = Arc::clone(&ctx.config);
            match args.action {
                Action::SchemaLookup => lookup(args.path.as_deref(), ctx.limits.excerpt_chars),
                Action::Patch => {
                    let patch = patch_argument(args.patch, args.raw)?;
                    blocking(move || patch_config(config.as_ref(), &patch)).await
                }
                Action::Apply => {
                    let raw = args.raw.filter(|r| !r.trim().is_empty()).ok_or_else(|| {
                        ToolError::InvalidArguments {
                            tool: "gateway",
                            detail: "raw: required for config.apply (the complete config file)"
                                .to_owned(),
                        }
                    })?;
                    blocking(move || apply_config(config.as_ref(), &raw)).await
                }
                Action::Get | Action::Schema | Action::Restart | Action::UpdateRun => {
                    Err(ToolError::failed(unsupported(args.action)))
                }
            }
        };
        run.await.into()
    }
}

fn unsupported(action: Action) -> String {
    let (name, instead) = match action {
        Action::Get => (
            "config.get",
            " Use config.schema.lookup to see what a key accepts, and config.patch to change it.",
        ),
        Action::Schema => (
            "config.schema",
            " Use config.schema.lookup with a path instead.",
        ),
        Action::Restart => ("restart", " Configuration changes need no restart here."),
        Action::UpdateRun => ("update.run", " Ask the user to update the installation."),
        Action::SchemaLookup | Action::Patch | Action::Apply => ("this action", ""),
    };
    format!("gateway action {name} is not supported by this runtime.{instead}")
}

fn lookup(path: Option<&str>, budget: usize) -> Result<ToolOutcome, ToolError> {
    let path = path
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| ToolError::InvalidArguments {
            tool: "gateway",
            detail: "path: required for config.schema.lookup (a dotted key such as tools.exec)"
                .to_owned(),
        })?;
    let schema = schema_lookup(path).ok_or_else(|| {
        ToolError::NotFound(format!(
            "the config has no key {path}; look up a parent key to see which keys it has"
        ))
    })?;
    let text = serde_json::to_string_pretty(&schema)
        .map_err(|e| ToolError::Internal(format!("cannot encode the schema: {e}")))?;
    Ok(ToolOutcome::ok_with(
        format!("Schema of {path}:\n{}", first_chars(&text, budget)),
        json!({ "path": path, "schema": schema }),
    ))
}

/// The merge patch from `patch` (an object, or JSON5 text) or `raw` (JSON5 text).
fn patch_argument(patch: Option<Value>, raw: Option<String>) -> Result<Value, ToolError> {
    let invalid = |detail: String| ToolError::InvalidArguments {
        tool: "gateway",
        detail,
    };
    let (field, value) = match (patch, raw) {
        (Some(Value::String(text)), _) => (
            "patch",
            parse_json5(&text).map_err(|e| invalid(format!("patch: {e}")))?,
        ),
        (Some(value), _) => ("patch", value),
        (None, Some(text)) => (
            "raw",
            parse_json5(&text).map_err(|e| invalid(format!("raw: {e}")))?,
        ),
        (None, None) => return Err(invalid("patch: required for config.patch".to_owned())),
    };
    if !value.is_object() {
        return Err(invalid(format!(
            "{field}: must be an object (use config.apply to replace the whole file)"
        )));
    }
    Ok(value)
}

fn parse_json5(text: &str) -> Result<Value, String> {
    // Nesting is capped before the parser recurses (a deep enough document overflows the
    // stack and aborts the service).
    openclaw_config::parse_json5(text).map_err(|e| format!("not valid JSON5: {e}"))
}

/// The current config as JSON; an empty file is `{}`.
fn current(config: &dyn ConfigControl) -> Result<(String, Value), ToolError> {
    let text = config
        .read()
        .map_err(|e| ToolError::failed(format!("cannot read the config: {e}")))?;
    if text.trim().is_empty() {
        return Ok((text, Value::Object(serde_json::Map::new())));
    }
    let value = parse_json5(&text).map_err(|e| {
        ToolError::failed(format!(
            "the current config cannot be parsed ({e}), so protected settings cannot be \
             checked; it must be fixed by hand"
        ))
    })?;
    Ok((text, value))
}

fn patch_config(config: &dyn ConfigControl, patch: &Value) -> Result<ToolOutcome, ToolError> {
    let (old_text, before) = current(config)?;
    let mut after = before.clone();
    merge_patch(&mut after, patch);
    let changed = changed_keys(&before, &after);
    if changed.is_empty() {
        return Ok(ToolOutcome::ok(
            "The patch changes nothing; the config was not written.",
        ));
    }
    let mut text = serde_json::to_string_pretty(&after)
        .map_err(|e| ToolError::Internal(format!("cannot encode the config: {e}")))?;
    text.push('\n');
    // Validation first: a misspelt key is better reported as such than as a refusal.
    validate(&text)?;
    refuse_protected(&before, &after)?;
    refuse_new_references(&before, &after)?;
    let reformatted =
        serde_json::to_string_pretty(&before).is_ok_and(|plain| plain.trim() != old_text.trim());
    write(config, &text)?;
    let mut message = format!("Config updated. Changed: {}.", changed.join(", "));
    if reformatted {
        message.push_str(
            " The file was rewritten as formatted JSON: its comments and formatting were not kept.",
        );
    }
    Ok(ToolOutcome::ok_with(message, json!({ "changed": changed })))
}

fn apply_config(config: &dyn ConfigControl, raw: &str) -> Result<ToolOutcome, ToolError> {
    validate(raw)?;
    let (_, before) = current(config)?;
    let after = parse_json5(raw).map_err(ToolError::failed)?;
    refuse_protected(&before, &after)?;
    refuse_new_references(&before, &after)?;
    let changed = changed_keys(&before, &after);
    let mut text = raw.to_owned();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    write(config, &text)?;
    let summary = if changed.is_empty() {
        "no setting changed".to_owned()
    } else {
        format!("changed: {}", changed.join(", "))
    };
    Ok(ToolOutcome::ok_with(
        format!("Config replaced ({summary})."),
        json!({ "changed": changed }),
    ))
}

fn refuse_protected(before: &Value, after: &Value) -> Result<(), ToolError> {
    let touched = refused_changes(before, after);
    if touched.is_empty() {
        return Ok(());
    }
    Err(ToolError::failed(format!(
        "refused: this change would modify {}, which the agent may not change. This is a fixed \
         boundary of this tool, not a missing permission: nobody can authorise it in chat. \
         The agent may change only display, streaming, reply and queue settings ({}, and per \
         agent {}); exec settings (with their legacy tools.bash aliases), tool policy, models, \
         prompts, agent runtimes, workspaces, sandboxes, channels' access lists and gateway \
         auth and bind can only be changed by a person editing openclaw.json. Nothing was \
         written.",
        touched.join(", "),
        protected::MUTABLE.join(", "),
        protected::MUTABLE_PER_AGENT.join(", "),
    )))
}

/// Refuses a change that puts a `${VAR}` reference into any value where the file did not
/// already have that exact string: on the next load it would expand to the variable's value,
/// which may be a secret, and land wherever that field is shown (the prompt, a log line).
/// References the operator wrote stay allowed as they are.
fn refuse_new_references(before: &Value, after: &Value) -> Result<(), ToolError> {
    let mut added = Vec::new();
    new_references(before, after, &mut String::new(), &mut added);
    if added.is_empty() {
        return Ok(());
    }
    Err(ToolError::failed(format!(
        "refused: this change would put an environment-variable reference (${{...}}) into {}. \
         References expand to the variable's value when the config loads, so the agent may \
         not write them; only a person editing openclaw.json can. Nothing was written.",
        added.join(", ")
    )))
}

/// The dotted paths of strings in `after` that reference a variable and differ from
/// `before` at the same path.
fn new_references(before: &Value, after: &Value, path: &mut String, out: &mut Vec<String>) {
    match after {
        Value::String(text) => {
            let kept = matches!(before, Value::String(old) if old == text);
            if !kept && !openclaw_config::referenced_names(text).is_empty() {
                out.push(if path.is_empty() {
                    "(the whole file)".to_owned()
                } else {
                    path.clone()
                });
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let old = before.get(key).unwrap_or(&Value::Null);
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                new_references(old, item, path, out);
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let old = before.get(i).unwrap_or(&Value::Null);
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                new_references(old, item, path, out);
                path.truncate(len);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Loads `text` with the config crate; `${VAR}` references are kept as written.
fn validate(text: &str) -> Result<(), ToolError> {
    let loader = Loader::new().map_err(|e| ToolError::Internal(e.to_string()))?;
    let options = LoadOptions {
        unresolved_vars: UnresolvedVars::Keep,
    };
    match loader.load(text, &NoEnv, &options) {
        Ok(_) => Ok(()),
        Err(ConfigError::Invalid(errors)) => Err(ToolError::failed(format!(
            "the new config is invalid, so nothing was written:\n{errors}"
        ))),
        Err(other) => Err(ToolError::failed(format!(
            "the new config is invalid, so nothing was written: {other}"
        ))),
    }
}

fn write(config: &dyn ConfigControl, text: &str) -> Result<(), ToolError> {
    config
        .write(text)
        .map_err(|e| ToolError::failed(format!("cannot write the config: {e}")))
}
