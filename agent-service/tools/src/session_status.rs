//! `session_status`: a status card with the current date and time, and the per-session
//! model override (`model=<ref>` sets it, `model=default` clears it).
//!
//! The prompt carries only a time zone, never a clock (cache stability, lesson L2); this tool
//! is how the model learns the date and time.

use async_trait::async_trait;
use jiff::tz::TimeZone;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::arguments::parse;
use crate::context::{StatusCard, ToolContext};
use crate::error::ToolError;
use crate::tool::{Tool, ToolOutcome};

/// `session_status`: the status card.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionStatusTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusArgs {
    #[serde(default)]
    model: Option<String>,
}

#[async_trait]
impl Tool for SessionStatusTool {
    fn name(&self) -> &'static str {
        "session_status"
    }

    fn description(&self) -> String {
        "Show this session's status card: the current date and time in the user's time zone, \
         the session, the model in use and token usage. Use it whenever the date or time \
         matters. With model set to a model reference it switches this session to that \
         model; model=default goes back to the configured model."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "model": { "type": "string", "description": "A model reference (provider/model or an alias) to use for this session from now on, or 'default' to clear the override." }
            },
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: StatusArgs = parse(self.name(), arguments)?;
            let mut changed = None;
            if let Some(model) = args.model {
                let model = model.trim();
                if model.is_empty() {
                    return Err(ToolError::InvalidArguments {
                        tool: "session_status",
                        detail: "model: must not be empty (use 'default' to clear the override)"
                            .to_owned(),
                    });
                }
                let clear = model.eq_ignore_ascii_case("default");
                let request = (!clear).then(|| model.to_owned());
                let now_using = ctx
                    .session
                    .set_model_override(request)
                    .await
                    .map_err(|e| ToolError::failed(format!("cannot switch the model: {e}")))?;
                changed = Some(if clear {
                    format!("Model override cleared; now using {now_using}.")
                } else {
                    format!("Model override set; now using {now_using}.")
                });
            }
            let card = ctx.session.status().await;
            let (time_line, now) = timestamp(ctx);
            let mut lines = Vec::new();
            lines.extend(changed);
            lines.push(time_line);
            lines.extend(card_lines(ctx, &card));
            Ok(ToolOutcome::ok_with(
                lines.join("\n"),
                json!({
                    "now": now,
                    "session_key": ctx.session_key,
                    "agent_id": ctx.agent_id,
                    "card": card,
                }),
            ))
        };
        run.await.into()
    }
}

/// `Time: Tuesday, 2026-03-03 14:05 CET (Europe/Berlin)` and the instant as RFC 3339. An
/// unknown zone falls back to UTC, once, and says so.
fn timestamp(ctx: &ToolContext) -> (String, String) {
    let now = ctx.clock.now();
    let requested = ctx
        .timezone
        .as_deref()
        .map(str::trim)
        .filter(|z| !z.is_empty());
    let (zone, name, note) = match requested.map(|name| (name, TimeZone::get(name))) {
        Some((name, Ok(zone))) => (zone, name.to_owned(), String::new()),
        Some((name, Err(_))) => (
            TimeZone::UTC,
            "UTC".to_owned(),
            format!(" [unknown time zone {name:?}; showing UTC]"),
        ),
        None => (TimeZone::UTC, "UTC".to_owned(), String::new()),
    };
    let zoned = now.to_zoned_datetime(zone);
    let line = format!(
        "Time: {} ({name}){note}",
        zoned.strftime("%A, %Y-%m-%d %H:%M %Z")
    );
    (line, zoned.timestamp().to_string())
}

fn card_lines(ctx: &ToolContext, card: &StatusCard) -> Vec<String> {
    let mut lines = vec![format!(
        "Session: {} (agent {})",
        ctx.session_key, ctx.agent_id
    )];
    let model = if card.model.is_empty() {
        ctx.model.as_str()
    } else {
        card.model.as_str()
    };
    let mut model_line = format!("Model: {model}");
    match (&card.model_override, &card.default_model) {
        (Some(_), Some(default)) => {
            model_line.push_str(&format!(" (session override; default {default})"));
        }
        (Some(_), None) => model_line.push_str(" (session override)"),
        (None, _) => {}
    }
    lines.push(model_line);
    let usage = &card.usage;
    let mut tokens = format!(
        "Tokens: {} in, {} out",
        usage.input_tokens, usage.output_tokens
    );
    if usage.cache_read_tokens > 0 {
        tokens.push_str(&format!(", {} from cache", usage.cache_read_tokens));
    }
    lines.push(tokens);
    match (card.context_tokens, card.context_window) {
        (Some(used), Some(window)) => lines.push(format!("Context: {used} of {window} tokens")),
        (Some(used), None) => lines.push(format!("Context: {used} tokens")),
        (None, Some(window)) => lines.push(format!("Context window: {window} tokens")),
        (None, None) => {}
    }
    lines.push(format!("Compactions: {}", card.compactions));
    if let Some(thinking) = &card.thinking {
        lines.push(format!("Thinking: {thinking}"));
    }
    if let Some(queue) = &card.queue_mode {
        lines.push(format!("Queue: {queue}"));
    }
    lines.extend(
        card.extra
            .iter()
            .map(|(label, value)| format!("{label}: {value}")),
    );
    lines
}
