//! The app-server params schemas of the pinned binary, and validation
//! against them.
//!
//! Each params object is checked twice: against the schema exactly as Codex
//! generated it, and against a closed copy. Codex's generated object schemas
//! leave `additionalProperties` open, so a misspelt optional field
//! (`sandbox_policy` for `sandboxPolicy`) would pass the first check while
//! Codex silently ignores it; the closed copy rejects unknown fields.

use std::{fs, path::Path};

use jsonschema::Validator;
use serde_json::Value;

use crate::{error::PeerError, install::CodexInstall};

/// The app-server methods whose params we produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ParamsMethod {
    /// `thread/start`.
    ThreadStart,
    /// `thread/resume`.
    ThreadResume,
    /// `turn/start`.
    TurnStart,
}

impl ParamsMethod {
    /// Every method, in protocol order.
    pub const ALL: [Self; 3] = [Self::ThreadStart, Self::ThreadResume, Self::TurnStart];

    /// The JSON-RPC method name.
    pub fn method(self) -> &'static str {
        match self {
            Self::ThreadStart => "thread/start",
            Self::ThreadResume => "thread/resume",
            Self::TurnStart => "turn/start",
        }
    }

    /// The name of its params definition in the generated schema.
    pub fn schema_name(self) -> &'static str {
        match self {
            Self::ThreadStart => "ThreadStartParams",
            Self::ThreadResume => "ThreadResumeParams",
            Self::TurnStart => "TurnStartParams",
        }
    }

    fn index(self) -> usize {
        match self {
            Self::ThreadStart => 0,
            Self::ThreadResume => 1,
            Self::TurnStart => 2,
        }
    }
}

struct MethodValidators {
    as_generated: Validator,
    closed: Validator,
}

/// Compiled validators for the params of [`ParamsMethod::ALL`].
pub struct ParamsSchemas {
    version: String,
    validators: Vec<MethodValidators>,
}

impl std::fmt::Debug for ParamsSchemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamsSchemas")
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl ParamsSchemas {
    /// Generates the experimental JSON schema with `codex` into a temporary
    /// folder and compiles the params validators from it.
    pub fn generate(codex: &CodexInstall) -> Result<Self, PeerError> {
        let out = tempfile::tempdir().map_err(|e| PeerError::io("create", "a temp dir", e))?;
        codex.generate_json_schema(out.path())?;
        Self::load(out.path(), codex.version())
    }

    /// Compiles the params validators from a folder written by
    /// `codex app-server generate-json-schema`. `version` is recorded for
    /// messages.
    pub fn load(dir: &Path, version: &str) -> Result<Self, PeerError> {
        let mut validators = Vec::with_capacity(ParamsMethod::ALL.len());
        for method in ParamsMethod::ALL {
            let name = method.schema_name();
            let schema = read_schema(dir, name)?;
            let compile = |schema: &Value| {
                jsonschema::validator_for(schema).map_err(|e| PeerError::SchemaUnusable {
                    name,
                    reason: e.to_string(),
                })
            };
            let mut closed = schema.clone();
            close_objects(&mut closed, false);
            validators.push(MethodValidators {
                as_generated: compile(&schema)?,
                closed: compile(&closed)?,
            });
        }
        Ok(Self {
            version: version.to_owned(),
            validators,
        })
    }

    /// `codex --version` of the binary that generated the schemas.
    pub fn codex_version(&self) -> &str {
        &self.version
    }

    /// Checks `params` against the generated schema of `method` and against
    /// its closed copy (no unknown fields). Lists every violation.
    pub fn check(&self, method: ParamsMethod, params: &Value) -> Result<(), PeerError> {
        let Some(v) = self.validators.get(method.index()) else {
            return Err(PeerError::SchemaUnusable {
                name: method.schema_name(),
                reason: "not loaded".to_owned(),
            });
        };
        let mut violations: Vec<String> = v
            .as_generated
            .iter_errors(params)
            .map(|e| format!("{}: {e}", pointer(e.instance_path().as_str())))
            .collect();
        if violations.is_empty() {
            violations = v
                .closed
                .iter_errors(params)
                .map(|e| {
                    format!(
                        "{}: {e} (unknown fields are refused: Codex would ignore them)",
                        pointer(e.instance_path().as_str())
                    )
                })
                .collect();
        }
        if violations.is_empty() {
            Ok(())
        } else {
            Err(PeerError::Violation {
                method: method.method(),
                version: self.version.clone(),
                violations,
            })
        }
    }
}

fn pointer(path: &str) -> &str {
    if path.is_empty() { "(root)" } else { path }
}

/// `v2/<name>.json`, else the definition inside the bundled v2 schema file.
fn read_schema(dir: &Path, name: &'static str) -> Result<Value, PeerError> {
    let parse = |path: &Path| -> Result<Value, PeerError> {
        let text = fs::read_to_string(path).map_err(|e| PeerError::io("read", path, e))?;
        serde_json::from_str(&text).map_err(|e| PeerError::SchemaUnusable {
            name,
            reason: format!("{}: {e}", path.display()),
        })
    };
    let single = dir.join("v2").join(format!("{name}.json"));
    if single.is_file() {
        return parse(&single);
    }
    let bundle_path = dir.join("codex_app_server_protocol.v2.schemas.json");
    if bundle_path.is_file() {
        let mut bundle = parse(&bundle_path)?;
        if bundle.pointer(&format!("/definitions/{name}")).is_some()
            && let Some(root) = bundle.as_object_mut()
        {
            // Keep the bundle's definitions so its internal refs resolve,
            // and point the root at the one definition we want.
            root.remove("title");
            root.remove("type");
            root.insert(
                "$ref".to_owned(),
                Value::String(format!("#/definitions/{name}")),
            );
            return Ok(bundle);
        }
    }
    Err(PeerError::SchemaMissing {
        name,
        dir: dir.to_owned(),
    })
}

/// Keywords whose value is a map from names to subschemas.
const SCHEMA_MAPS: &[&str] = &["properties", "definitions", "$defs", "patternProperties"];
/// Keywords whose value is data, not a schema.
const DATA: &[&str] = &["enum", "const", "default", "examples", "required"];
/// Composition keywords.
const COMPOSITIONS: &[&str] = &["anyOf", "oneOf", "allOf"];

/// Sets `additionalProperties: false` on every object schema that lists its
/// `properties` and says nothing about extra ones. Branches of a composition
/// that sits next to `properties` are partial mixins (the sibling properties
/// complete them), so they are left open; so is any schema that composes.
fn close_objects(node: &mut Value, mixin: bool) {
    let Some(object) = node.as_object_mut() else {
        if let Some(items) = node.as_array_mut() {
            for item in items {
                close_objects(item, false);
            }
        }
        return;
    };
    let has_properties = object.contains_key("properties");
    let composes = COMPOSITIONS.iter().any(|k| object.contains_key(*k));
    if has_properties && !composes && !mixin && !object.contains_key("additionalProperties") {
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    for (key, child) in object.iter_mut() {
        let key = key.as_str();
        if DATA.contains(&key) {
            continue;
        }
        if SCHEMA_MAPS.contains(&key) {
            if let Some(map) = child.as_object_mut() {
                for schema in map.values_mut() {
                    close_objects(schema, false);
                }
            }
        } else if COMPOSITIONS.contains(&key) && has_properties {
            if let Some(branches) = child.as_array_mut() {
                for branch in branches {
                    close_objects(branch, true);
                }
            }
        } else {
            close_objects(child, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn closing_adds_no_extra_fields_to_plain_objects_only() {
        let mut schema = json!({
            "properties": {"a": {"type": "string"}, "properties": {"type": "object", "properties": {}}},
            "definitions": {
                "Tagged": {"oneOf": [{"properties": {"type": {"enum": ["x"]}}, "required": ["type"]}]},
                "Mixed": {
                    "properties": {"type": {"enum": ["image"]}},
                    "anyOf": [{"properties": {"url": {}}, "required": ["url"]}]
                },
                "Open": {"properties": {}, "additionalProperties": true}
            }
        });
        close_objects(&mut schema, false);
        assert_eq!(schema["additionalProperties"], json!(false));
        // A property that happens to be called "properties" is a schema, not a map.
        assert_eq!(
            schema["properties"]["properties"]["additionalProperties"],
            json!(false)
        );
        assert!(schema["properties"].get("additionalProperties").is_none());
        let tagged = &schema["definitions"]["Tagged"]["oneOf"][0];
        assert_eq!(tagged["additionalProperties"], json!(false));
        let mixed = &schema["definitions"]["Mixed"];
        assert!(mixed.get("additionalProperties").is_none());
        assert!(mixed["anyOf"][0].get("additionalProperties").is_none());
        assert_eq!(
            schema["definitions"]["Open"]["additionalProperties"],
            json!(true)
        );
    }

    fn write(dir: &Path, rel: &str, value: &Value) {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, value.to_string()).expect("write");
    }

    #[test]
    fn unknown_fields_and_type_errors_are_both_violations() {
        let dir = tempfile::tempdir().expect("tempdir");
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "properties": {"threadId": {"type": "string"}},
            "required": ["threadId"]
        });
        for method in ParamsMethod::ALL {
            write(
                dir.path(),
                &format!("v2/{}.json", method.schema_name()),
                &schema,
            );
        }
        let schemas = ParamsSchemas::load(dir.path(), "codex-cli test").expect("load");
        let method = ParamsMethod::TurnStart;
        assert!(schemas.check(method, &json!({"threadId": "t"})).is_ok());
        let typo = schemas
            .check(method, &json!({"threadId": "t", "thread_id": "t"}))
            .expect_err("unknown field");
        assert!(typo.to_string().contains("unknown fields"), "{typo}");
        let wrong = schemas
            .check(method, &json!({"threadId": 1}))
            .expect_err("wrong type");
        assert!(wrong.to_string().contains("/threadId"), "{wrong}");
    }

    #[test]
    fn the_bundled_schema_is_used_when_single_files_are_missing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut definitions = serde_json::Map::new();
        for method in ParamsMethod::ALL {
            definitions.insert(
                method.schema_name().to_owned(),
                json!({"properties": {"threadId": {"$ref": "#/definitions/Id"}}}),
            );
        }
        definitions.insert("Id".to_owned(), json!({"type": "string"}));
        let bundle = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": "Bundle",
            "type": "object",
            "definitions": definitions
        });
        write(
            dir.path(),
            "codex_app_server_protocol.v2.schemas.json",
            &bundle,
        );
        let schemas = ParamsSchemas::load(dir.path(), "codex-cli test").expect("load");
        let method = ParamsMethod::ThreadResume;
        assert!(schemas.check(method, &json!({"threadId": "t"})).is_ok());
        assert!(schemas.check(method, &json!({"threadId": 2})).is_err());
    }
}
