//! The JSON Schema of `openclaw.json`, generated from the raw types, and lookups into it for the
//! gateway tool's `config.schema.lookup`.
//!
//! The generated schema is tidied so that it reads the way the file is written: optional keys
//! are plain (schemars marks every `Option` as nullable, but `null` is not a value anyone writes
//! in this file), and closed string sets are one `enum` instead of a `oneOf` of constants.

use serde_json::{Map, Value};

use crate::path::{LookupStep, parse_lookup};
use crate::raw::RawConfig;

/// Deepest `$ref` chain followed while inlining; our types are not recursive, so this only
/// guards against a future recursive type looping forever.
const MAX_INLINE_DEPTH: usize = 32;

/// The JSON Schema (draft 2020-12) that `openclaw.json` is validated against.
pub fn json_schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<RawConfig>().to_value();
    tidy(&mut schema);
    schema
}

/// The sub-schema at a dotted path such as `agents.defaults.heartbeat`,
/// `agents.list[].runtime`, `channels.*.allowFrom` or `agents.defaults.models["a/b"].alias`,
/// with every `$ref` inlined. `""` returns the whole schema. `None` when the path names
/// nothing the schema knows.
pub fn schema_lookup(path: &str) -> Option<Value> {
    let root = json_schema();
    let steps = parse_lookup(path)?;
    if steps.is_empty() {
        return Some(root);
    }
    let mut node = &root;
    for step in &steps {
        node = child(&root, node, step)?;
    }
    Some(inline_refs(&root, node, 0))
}

fn child<'a>(root: &'a Value, node: &'a Value, step: &LookupStep) -> Option<&'a Value> {
    let node = deref(root, node)?;
    // A union (the string-or-object model choice): the first branch that has the step.
    if let Some(branches) = node.get("anyOf").and_then(Value::as_array) {
        return branches.iter().find_map(|branch| child(root, branch, step));
    }
    match step {
        LookupStep::Key(key) => node
            .get("properties")
            .and_then(|props| props.get(key))
            .or_else(|| open_values(node)),
        LookupStep::Index(_) => node.get("items"),
        LookupStep::Any => node.get("items").or_else(|| open_values(node)),
    }
}

/// The schema of a map's values, when the object is a map (`additionalProperties` not false).
fn open_values(node: &Value) -> Option<&Value> {
    node.get("additionalProperties")
        .filter(|v| **v != Value::Bool(false))
}

fn deref<'a>(root: &'a Value, node: &'a Value) -> Option<&'a Value> {
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => root.pointer(reference.strip_prefix('#')?),
        None => Some(node),
    }
}

fn inline_refs(root: &Value, node: &Value, depth: usize) -> Value {
    match node {
        Value::Object(map) => {
            let mut out = Map::new();
            if let Some(target) = map.get("$ref").and_then(Value::as_str) {
                let resolved = target
                    .strip_prefix('#')
                    .and_then(|pointer| root.pointer(pointer))
                    .filter(|_| depth < MAX_INLINE_DEPTH);
                if let Some(Value::Object(resolved)) = resolved {
                    for (key, value) in resolved {
                        out.insert(key.clone(), inline_refs(root, value, depth + 1));
                    }
                }
            }
            for (key, value) in map {
                if key != "$ref" && key != "$defs" {
                    out.insert(key.clone(), inline_refs(root, value, depth));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| inline_refs(root, item, depth))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Keys whose values are data, not subschemas.
const DATA_KEYWORDS: [&str; 5] = ["enum", "const", "default", "examples", "required"];

fn tidy(node: &mut Value) {
    match node {
        Value::Object(map) => {
            drop_null_type(map);
            drop_null_branch(map);
            merge_string_constants(map);
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value) {
                    // Maps of named subschemas: their keys are names (a property may well be
                    // called "default"), so every value is a schema.
                    ("properties" | "$defs", Value::Object(named)) => {
                        named.values_mut().for_each(tidy);
                    }
                    (keyword, _) if DATA_KEYWORDS.contains(&keyword) => {}
                    (_, value) => tidy(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// `"type": ["string", "null"]` -> `"type": "string"`.
fn drop_null_type(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let single = types.remove(0);
            map.insert("type".to_owned(), single);
        }
    }
}

/// `"anyOf": [X, {"type": "null"}]` -> X's keywords merged into this node.
fn drop_null_branch(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.get_mut("anyOf") else {
        return;
    };
    let null_only = |v: &Value| {
        v.as_object()
            .is_some_and(|o| o.len() == 1 && o.get("type") == Some(&Value::from("null")))
    };
    branches.retain(|b| !null_only(b));
    if branches.len() != 1 {
        return;
    }
    if let Some(Value::Object(only)) = branches.pop() {
        map.remove("anyOf");
        for (key, value) in only {
            map.entry(key).or_insert(value);
        }
    }
}

/// A `oneOf` whose branches are all string constants (how schemars writes an enum whose
/// variants carry docs) -> one `enum`, with the variant docs folded into the description.
fn merge_string_constants(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.get("oneOf") else {
        return;
    };
    let mut values = Vec::new();
    let mut notes = Vec::new();
    for branch in branches {
        let Some(branch) = branch.as_object() else {
            return;
        };
        let constants: Vec<Value> = match (branch.get("const"), branch.get("enum")) {
            (Some(c), None) => vec![c.clone()],
            (None, Some(Value::Array(items))) => items.clone(),
            _ => return,
        };
        if !constants.iter().all(Value::is_string) {
            return;
        }
        if let (Some(description), [Value::String(value)]) = (
            branch.get("description").and_then(Value::as_str),
            constants.as_slice(),
        ) {
            notes.push(format!("{value}: {description}"));
        }
        values.extend(constants);
    }
    map.remove("oneOf");
    map.insert("type".to_owned(), Value::from("string"));
    map.insert("enum".to_owned(), Value::Array(values));
    if !notes.is_empty() {
        let base = map
            .get("description")
            .and_then(Value::as_str)
            .map(|d| format!("{d} "))
            .unwrap_or_default();
        map.insert(
            "description".to_owned(),
            Value::from(format!("{base}({})", notes.join("; "))),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_has_no_nullable_options_or_constant_unions() {
        let text = json_schema().to_string();
        assert!(!text.contains("\"null\""), "null leaked into the schema");
        assert!(!text.contains("\"oneOf\""), "a oneOf of constants survived");
    }

    #[test]
    fn enums_keep_every_value() {
        let mode = schema_lookup("agents.defaults.sandbox.mode");
        let values = mode.as_ref().and_then(|m| m.get("enum")).cloned();
        assert_eq!(values, Some(serde_json::json!(["off", "non-main", "all"])));
    }

    #[test]
    fn lookup_refuses_unknown_paths() {
        assert_eq!(schema_lookup("agents.defaults.nope"), None);
        assert_eq!(schema_lookup("agents..defaults"), None);
    }
}
