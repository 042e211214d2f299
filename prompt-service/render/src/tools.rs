//! The tool list of the Tooling section: a fixed display order for core tools
//! and their one-line summaries; other tools follow alphabetically.
//!
//! [`TOOL_TABLE`] and [`tool_order`] are the one source of the tool order: agent-service's
//! tool policy sorts a run's tools (the order of the model request's tool list) with
//! [`tool_order`] too, so the request and the prompt's listing agree by construction.

use std::collections::BTreeMap;

use crate::{error::RenderError, input::Tool, text};

/// Known tools in display order, with our summary for each: (lowercase name, summary). The
/// caller's spelling of the name is what gets rendered; a tool not listed here follows the
/// listed ones alphabetically, with the first line of its own summary.
pub const TOOL_TABLE: &[(&str, &str)] = &[
    ("read", "read a file's contents"),
    ("write", "create a file or replace its contents"),
    ("edit", "replace exact text spans in an existing file"),
    (
        "apply_patch",
        "apply a multi-file patch written in the `*** Begin Patch` format",
    ),
    ("grep", "search file contents for a pattern"),
    ("find", "find files by name pattern"),
    ("ls", "list a directory"),
    (
        "exec",
        "run a shell command; long commands can keep running in the background",
    ),
    (
        "process",
        "manage background commands: list them, read their logs, send input, kill them",
    ),
    ("web_search", "search the web"),
    ("web_fetch", "fetch a URL and extract its readable text"),
    ("browser", "control a web browser"),
    ("canvas", "present and update the canvas"),
    ("nodes", "reach paired devices"),
    ("cron", "schedule reminders and recurring jobs"),
    ("message", "send messages and perform channel actions"),
    (
        "gateway",
        "read, patch or apply the OpenClaw config, restart, run updates",
    ),
    ("agents_list", "list the agents you may hand work to"),
    ("sessions_list", "list sessions"),
    ("sessions_history", "read another session's history"),
    ("sessions_send", "send a message into another session"),
    (
        "sessions_spawn",
        "start a subagent on a task; its result is pushed back to you when it ends",
    ),
    (
        "sessions_yield",
        "end your turn and wait for pending subagent results",
    ),
    ("subagents", "list, steer or stop the subagents you started"),
    (
        "session_status",
        "show the status card (current time, model, usage); can switch this session's model",
    ),
    (
        "memory_search",
        "search MEMORY.md and memory/*.md, returning file and line references",
    ),
    (
        "memory_get",
        "read a bounded excerpt of a memory file by line range",
    ),
    (
        "update_plan",
        "track a plan for non-trivial multi-step work; keep at most one step in_progress and skip it for simple single-step tasks",
    ),
    ("image", "analyse an image"),
    ("image_generate", "generate an image"),
];

fn core_rank(lower: &str) -> Option<usize> {
    TOOL_TABLE.iter().position(|(name, _)| *name == lower)
}

fn core_summary(lower: &str) -> Option<&'static str> {
    TOOL_TABLE
        .iter()
        .find(|(name, _)| *name == lower)
        .map(|(_, s)| *s)
}

/// The sort key of a tool name in display order: tools of [`TOOL_TABLE`] by their row, then
/// every other tool by lowercase name (compared case-insensitively). An explicit total order,
/// so the order tools are supplied in never reaches the prompt or the model request.
pub fn tool_order(name: &str) -> (usize, String) {
    let lower = name.trim().to_lowercase();
    (core_rank(&lower).unwrap_or(TOOL_TABLE.len()), lower)
}

/// A validated tool, ready for listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedTool {
    /// Name as supplied (case preserved).
    pub name: String,
    /// Lowercase name.
    pub lower: String,
    /// The rendered line, `- name: summary`.
    pub line: String,
    /// Characters of the JSON schema text.
    pub schema_chars: u32,
    /// Top-level schema properties.
    pub properties_count: u32,
}

/// The tools of one render, sorted in display order.
#[derive(Debug, Clone, Default)]
pub struct ToolSet {
    /// Tools in display order.
    pub tools: Vec<PreparedTool>,
    by_lower: BTreeMap<String, usize>,
}

impl ToolSet {
    /// Validates and orders the tools. Names must be non-empty, free of
    /// whitespace and unique case-insensitively; schemas must be JSON objects.
    pub fn prepare(tools: &[Tool]) -> Result<Self, RenderError> {
        let mut prepared = Vec::with_capacity(tools.len());
        let mut seen = BTreeMap::new();
        for (i, tool) in tools.iter().enumerate() {
            let field = format!("tools[{i}].name");
            let name = tool.name.trim();
            if name.is_empty() {
                return Err(RenderError::invalid(field, "must not be empty"));
            }
            if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(RenderError::invalid(
                    field,
                    format!("{name:?} must not contain whitespace"),
                ));
            }
            let lower = name.to_lowercase();
            if let Some(first) = seen.insert(lower.clone(), i) {
                return Err(RenderError::invalid(
                    field,
                    format!(
                        "duplicate tool name {name:?} (same as tools[{first}], compared case-insensitively)"
                    ),
                ));
            }
            let (schema_chars, properties_count) = schema_facts(i, &tool.json_schema)?;
            let summary = core_summary(&lower)
                .map(str::to_owned)
                .unwrap_or_else(|| first_line(&tool.summary));
            let line = if summary.is_empty() {
                format!("- {name}")
            } else {
                format!("- {name}: {summary}")
            };
            prepared.push(PreparedTool {
                name: name.to_owned(),
                lower,
                line,
                schema_chars,
                properties_count,
            });
        }
        // Core tools in their fixed order, then the rest by lowercase name:
        // an explicit total order, so request order never reaches the prompt.
        prepared.sort_by_cached_key(|t| tool_order(&t.lower));
        let by_lower = prepared
            .iter()
            .enumerate()
            .map(|(i, t)| (t.lower.clone(), i))
            .collect();
        Ok(Self {
            tools: prepared,
            by_lower,
        })
    }

    /// True when a tool with this (lowercase) name exists.
    pub fn has(&self, lower: &str) -> bool {
        self.by_lower.contains_key(lower)
    }

    /// The caller's spelling of a tool name, or the lowercase default.
    pub fn spelled<'a>(&'a self, lower: &'a str) -> &'a str {
        self.by_lower
            .get(lower)
            .and_then(|&i| self.tools.get(i))
            .map_or(lower, |t| t.name.as_str())
    }

    /// True when no tools are available.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

fn first_line(summary: &str) -> String {
    text::one_line(summary.trim().lines().next().unwrap_or(""))
}

fn schema_facts(i: usize, schema: &str) -> Result<(u32, u32), RenderError> {
    if schema.trim().is_empty() {
        return Ok((0, 0));
    }
    let value: serde_json::Value = serde_json::from_str(schema).map_err(|e| {
        RenderError::invalid(
            format!("tools[{i}].json_schema"),
            format!("is not valid JSON: {e}"),
        )
    })?;
    let Some(object) = value.as_object() else {
        return Err(RenderError::invalid(
            format!("tools[{i}].json_schema"),
            "must be a JSON object",
        ));
    };
    let properties = object
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .map_or(0, serde_json::Map::len);
    Ok((
        text::chars_u32(schema),
        u32::try_from(properties).unwrap_or(u32::MAX),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        Tool {
            name: name.to_owned(),
            ..Tool::default()
        }
    }

    #[test]
    fn core_tools_first_then_alphabetical() {
        let set = ToolSet::prepare(&[tool("zeta"), tool("Exec"), tool("alpha"), tool("read")]);
        let names = set.map(|s| s.tools.into_iter().map(|t| t.name).collect::<Vec<_>>());
        assert_eq!(
            names,
            Ok(vec![
                "read".to_owned(),
                "Exec".into(),
                "alpha".into(),
                "zeta".into()
            ])
        );
    }

    #[test]
    fn duplicate_names_are_rejected_case_insensitively() {
        let err = ToolSet::prepare(&[tool("read"), tool("Read")]).err();
        assert_eq!(err.as_ref().map(RenderError::field), Some("tools[1].name"));
    }

    #[test]
    fn casing_is_preserved_and_looked_up() {
        let set = ToolSet::prepare(&[tool("Exec")]).unwrap_or_default();
        assert!(set.has("exec"));
        assert_eq!(set.spelled("exec"), "Exec");
        assert_eq!(set.spelled("read"), "read");
    }

    #[test]
    fn schema_must_be_an_object() {
        let bad = Tool {
            name: "x".into(),
            json_schema: "[1]".into(),
            ..Tool::default()
        };
        let err = ToolSet::prepare(&[bad]).err();
        assert_eq!(
            err.as_ref().map(RenderError::field),
            Some("tools[0].json_schema")
        );
    }

    #[test]
    fn non_core_tools_use_the_first_line_of_their_summary() {
        let t = Tool {
            name: "weather".into(),
            summary: "Get the forecast\nmore detail".into(),
            json_schema: r#"{"type":"object","properties":{"city":{},"days":{}}}"#.into(),
        };
        let set = ToolSet::prepare(&[t]).unwrap_or_default();
        assert_eq!(set.tools[0].line, "- weather: Get the forecast");
        assert_eq!(set.tools[0].properties_count, 2);
    }
}
