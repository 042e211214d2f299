//! The dynamic tool catalog of `thread/start.dynamicTools`: validation, an
//! explicit order, and the Codex spec objects.
//!
//! Top-level entries (function tools and namespaces) are sorted by name, and
//! so are the tools inside each namespace, so request order never reaches
//! the model-bound bytes (lesson L1).

use std::collections::BTreeMap;

use prompt_render::normalize_block;
use serde_json::{Map, Value};

use crate::{error::CodexError, input::DynamicTool, json::object};

/// Longest function or namespace name the Responses API accepts.
const MAX_NAME_CHARS: usize = 64;

/// A validated catalog.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCatalog {
    /// The `dynamicTools` array, in order.
    pub specs: Vec<Value>,
    /// Every tool the model can call, as `name` or `namespace.name`, in catalog order.
    pub names: Vec<String>,
    /// Tools registered with `deferLoading` (hidden from the model's tool list).
    pub deferred: Vec<String>,
    /// The specs without deferred tools: what the model's tool list carries.
    pub visible: Vec<Value>,
}

impl ToolCatalog {
    /// The tool's name as the model sees it, when a tool with this
    /// (case-insensitive) name exists in any namespace.
    pub fn spelled(&self, lower: &str) -> Option<&str> {
        self.names.iter().find_map(|full| {
            let name = full.rsplit('.').next().unwrap_or(full);
            name.eq_ignore_ascii_case(lower).then_some(name)
        })
    }
}

struct Function {
    name: String,
    description: String,
    schema: Value,
    defer: bool,
}

impl Function {
    fn spec(&self) -> Value {
        let mut pairs = vec![
            ("description", Value::String(self.description.clone())),
            ("inputSchema", self.schema.clone()),
            ("name", Value::String(self.name.clone())),
            ("type", Value::String("function".to_owned())),
        ];
        if self.defer {
            pairs.push(("deferLoading", Value::Bool(true)));
        }
        object(pairs)
    }
}

/// A namespace being collected: where it first appeared, its spelling and
/// its tools by lowercase name.
struct Namespace {
    first: usize,
    spelled: String,
    members: BTreeMap<String, (usize, Function)>,
}

fn check_name(field: String, name: &str) -> Result<String, CodexError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(CodexError::invalid(field, "must not be empty"));
    }
    let valid = name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err(CodexError::invalid(
            field,
            format!("{name:?} must be 1 to {MAX_NAME_CHARS} of A-Z, a-z, 0-9, _ and -"),
        ));
    }
    Ok(name.to_owned())
}

fn schema_of(i: usize, text: &str) -> Result<Value, CodexError> {
    let field = || format!("dynamic_tools[{i}].json_schema");
    if text.trim().is_empty() {
        return Ok(object(vec![
            ("properties", Value::Object(Map::new())),
            ("type", Value::String("object".to_owned())),
        ]));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| CodexError::invalid(field(), format!("is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(CodexError::invalid(field(), "must be a JSON object"));
    }
    Ok(value)
}

/// Validates the tools and builds the catalog. Names must be unique
/// (case-insensitively) within their namespace, and a namespace may not
/// share its name with a top-level tool.
pub fn catalog(tools: &[DynamicTool]) -> Result<ToolCatalog, CodexError> {
    // Keyed by lowercase name; the value keeps the first request index for messages.
    let mut top: BTreeMap<String, (usize, Function)> = BTreeMap::new();
    let mut namespaces: BTreeMap<String, Namespace> = BTreeMap::new();
    for (i, tool) in tools.iter().enumerate() {
        let name = check_name(format!("dynamic_tools[{i}].name"), &tool.name)?;
        let function = Function {
            description: normalize_block(&tool.description),
            schema: schema_of(i, &tool.json_schema)?,
            defer: tool.defer_loading,
            name: name.clone(),
        };
        let lower = name.to_lowercase();
        let duplicate = |first: usize| {
            CodexError::invalid(
                format!("dynamic_tools[{i}].name"),
                format!(
                    "duplicate tool name {name:?} (same as dynamic_tools[{first}], compared case-insensitively)"
                ),
            )
        };
        if tool.namespace.trim().is_empty() {
            if let Some(ns) = namespaces.get(&lower) {
                return Err(CodexError::invalid(
                    format!("dynamic_tools[{i}].name"),
                    format!(
                        "{name:?} is already a namespace (dynamic_tools[{}])",
                        ns.first
                    ),
                ));
            }
            if let Some((first, _)) = top.get(&lower) {
                return Err(duplicate(*first));
            }
            top.insert(lower, (i, function));
        } else {
            let ns_field = format!("dynamic_tools[{i}].namespace");
            let ns = check_name(ns_field.clone(), &tool.namespace)?;
            let ns_lower = ns.to_lowercase();
            if let Some((first, _)) = top.get(&ns_lower) {
                return Err(CodexError::invalid(
                    ns_field,
                    format!("{ns:?} is already a top-level tool (dynamic_tools[{first}])"),
                ));
            }
            let entry = namespaces.entry(ns_lower).or_insert_with(|| Namespace {
                first: i,
                spelled: ns.clone(),
                members: BTreeMap::new(),
            });
            if entry.spelled != ns {
                return Err(CodexError::invalid(
                    ns_field,
                    format!(
                        "namespace {ns:?} is spelled {:?} in dynamic_tools[{}]",
                        entry.spelled, entry.first
                    ),
                ));
            }
            if let Some((first, _)) = entry.members.get(&lower) {
                return Err(duplicate(*first));
            }
            entry.members.insert(lower, (i, function));
        }
    }

    // One ordered list of top-level entries: functions and namespaces by
    // lowercase name (the two never share a name).
    enum Entry<'a> {
        Function(&'a Function),
        Namespace(&'a str, Vec<&'a Function>),
    }
    let mut entries: BTreeMap<&str, Entry<'_>> = BTreeMap::new();
    for (lower, (_, f)) in &top {
        entries.insert(lower, Entry::Function(f));
    }
    for (lower, ns) in &namespaces {
        entries.insert(
            lower,
            Entry::Namespace(&ns.spelled, ns.members.values().map(|(_, f)| f).collect()),
        );
    }

    let mut out = ToolCatalog::default();
    for entry in entries.values() {
        match entry {
            Entry::Function(f) => {
                out.specs.push(f.spec());
                out.names.push(f.name.clone());
                if f.defer {
                    out.deferred.push(f.name.clone());
                } else {
                    out.visible.push(f.spec());
                }
            }
            Entry::Namespace(ns, members) => {
                let namespace = |fs: &[&Function]| {
                    object(vec![
                        ("description", Value::String(String::new())),
                        ("name", Value::String((*ns).to_owned())),
                        ("tools", Value::Array(fs.iter().map(|f| f.spec()).collect())),
                        ("type", Value::String("namespace".to_owned())),
                    ])
                };
                out.specs.push(namespace(members));
                for f in members {
                    let full = format!("{ns}.{}", f.name);
                    if f.defer {
                        out.deferred.push(full.clone());
                    }
                    out.names.push(full);
                }
                let shown: Vec<&Function> = members.iter().copied().filter(|f| !f.defer).collect();
                if !shown.is_empty() {
                    out.visible.push(namespace(&shown));
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, namespace: &str) -> DynamicTool {
        DynamicTool {
            name: name.to_owned(),
            namespace: namespace.to_owned(),
            ..DynamicTool::default()
        }
    }

    #[test]
    fn entries_are_sorted_and_deferred_tools_are_hidden() {
        let mut cron = tool("cron", "openclaw");
        cron.defer_loading = true;
        let tools = [
            tool("zeta", ""),
            cron,
            tool("message", ""),
            tool("agents_list", "openclaw"),
        ];
        let c = catalog(&tools).expect("catalog");
        assert_eq!(
            c.names,
            ["message", "openclaw.agents_list", "openclaw.cron", "zeta"]
        );
        assert_eq!(c.deferred, ["openclaw.cron"]);
        assert_eq!(c.specs[1]["type"], "namespace");
        assert_eq!(c.specs[1]["tools"][1]["deferLoading"], true);
        assert_eq!(c.visible[1]["tools"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            c.specs[0]["inputSchema"],
            serde_json::json!({"properties": {}, "type": "object"})
        );
        assert_eq!(c.spelled("cron"), Some("cron"));
    }

    #[test]
    fn bad_names_schemas_and_duplicates_name_the_field() {
        let field = |tools: &[DynamicTool]| catalog(tools).err().map(|e| e.field());
        assert_eq!(
            field(&[tool("has space", "")]).as_deref(),
            Some("dynamic_tools[0].name")
        );
        assert_eq!(
            field(&[tool("a", ""), tool("A", "")]).as_deref(),
            Some("dynamic_tools[1].name")
        );
        assert_eq!(
            field(&[tool("a", "ns"), tool("A", "ns")]).as_deref(),
            Some("dynamic_tools[1].name")
        );
        assert!(catalog(&[tool("a", "ns"), tool("a", "other")]).is_ok());
        assert_eq!(
            field(&[tool("ns", ""), tool("a", "ns")]).as_deref(),
            Some("dynamic_tools[1].namespace")
        );
        assert_eq!(
            field(&[tool("a", "ns"), tool("ns", "")]).as_deref(),
            Some("dynamic_tools[1].name")
        );
        let mut bad = tool("a", "");
        bad.json_schema = "[]".to_owned();
        assert_eq!(
            field(&[bad]).as_deref(),
            Some("dynamic_tools[0].json_schema")
        );
        let mut broken = tool("a", "");
        broken.json_schema = "{".to_owned();
        assert_eq!(
            field(&[broken]).as_deref(),
            Some("dynamic_tools[0].json_schema")
        );
    }
}
