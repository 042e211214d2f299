//! Decoding a tool's arguments, with errors that name the field.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ToolError;

/// Decodes `arguments` into `T`. A JSON string holding an object (some providers double-encode
/// arguments) is decoded first; `null` counts as `{}`. Errors name the offending field, e.g.
/// `invalid arguments for read: offset: invalid type: string "x", expected u64`.
pub(crate) fn parse<T: DeserializeOwned>(
    tool: &'static str,
    arguments: Value,
) -> Result<T, ToolError> {
    let invalid = |detail: String| ToolError::InvalidArguments { tool, detail };
    let arguments = match arguments {
        Value::Null => Value::Object(serde_json::Map::new()),
        Value::String(text) => serde_json::from_str(&text).map_err(|e| {
            invalid(format!(
                "expected a JSON object, got a string that is not JSON ({e})"
            ))
        })?,
        other => other,
    };
    if !arguments.is_object() {
        return Err(invalid(format!(
            "expected a JSON object, got {}",
            kind(&arguments)
        )));
    }
    serde_path_to_error::deserialize(arguments).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        invalid(if path == "." {
            inner.to_string()
        } else {
            format!("{path}: {inner}")
        })
    })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A required string argument must not be blank.
pub(crate) fn non_empty(tool: &'static str, field: &str, value: &str) -> Result<(), ToolError> {
    if value.trim().is_empty() {
        return Err(ToolError::InvalidArguments {
            tool,
            detail: format!("{field}: must not be empty"),
        });
    }
    Ok(())
}
