//! Schema validation that collects every problem, phrased for people.
//!
//! The validator reports JSON Pointers and terse keyword failures; this module turns each into a
//! [`Finding`]: the offending path, whether to point at the key or the value, a category and a
//! sentence such as `expected an integer, found "lots"` or `unknown key; did you mean
//! "workspace"?`. Unions (`anyOf`) are explained through the branch whose type matches the
//! value, so a typo inside the object form of `model` reads as that typo, not as "matches no
//! branch".

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use crate::error::{ConfigError, ErrorKind};
use crate::locate::Target;
use crate::path::{Segment, from_pointer};
use crate::suggest::did_you_mean;

/// One problem, not yet located in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) path: Vec<Segment>,
    pub(crate) target: Target,
    pub(crate) kind: ErrorKind,
    pub(crate) message: String,
}

/// Builds a validator for `schema`.
pub(crate) fn validator(schema: &Value) -> Result<Validator, ConfigError> {
    jsonschema::validator_for(schema).map_err(|e| ConfigError::Schema(e.to_string()))
}

/// Every schema violation in `document`.
pub(crate) fn findings(validator: &Validator, schema: &Value, document: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    for error in validator.iter_errors(document) {
        explain(&error, schema, document, &mut out);
    }
    // A value of the wrong type also fails its enum or range; the type is the useful half.
    let mistyped: Vec<Vec<Segment>> = out
        .iter()
        .filter(|f| f.kind == ErrorKind::WrongType)
        .map(|f| f.path.clone())
        .collect();
    out.retain(|f| {
        f.kind == ErrorKind::WrongType || f.target == Target::Key || !mistyped.contains(&f.path)
    });
    out
}

fn explain(error: &ValidationError<'_>, schema: &Value, document: &Value, out: &mut Vec<Finding>) {
    let path = from_pointer(error.instance_path().as_str(), document);
    let instance = error.instance();
    let value_finding = |kind, message| Finding {
        path: path.clone(),
        target: Target::Value,
        kind,
        message,
    };
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let known = known_keys(schema, error.schema_path().as_str());
            for key in unexpected {
                let mut key_path = path.clone();
                key_path.push(Segment::Key(key.clone()));
                let message = match did_you_mean(key, known.iter().map(String::as_str)) {
                    Some(guess) => format!("unknown key; did you mean \"{guess}\"?"),
                    None => "unknown key".to_owned(),
                };
                out.push(Finding {
                    path: key_path,
                    target: Target::Key,
                    kind: ErrorKind::UnknownKey,
                    message,
                });
            }
        }
        ValidationErrorKind::Type { kind } => out.push(value_finding(
            ErrorKind::WrongType,
            format!(
                "expected {}, found {}",
                type_phrase(kind),
                describe(instance)
            ),
        )),
        ValidationErrorKind::Enum { options } => {
            let choices: Vec<&str> = options
                .as_array()
                .map(|items| items.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let listed = options
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            let mut message = format!("expected one of {listed}, found {}", describe(instance));
            if let Some(guess) = instance
                .as_str()
                .and_then(|given| did_you_mean(given, choices.iter().copied()))
            {
                message.push_str(&format!("; did you mean \"{guess}\"?"));
            }
            out.push(value_finding(ErrorKind::InvalidValue, message));
        }
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            out.push(value_finding(
                ErrorKind::MissingKey,
                format!("missing required key \"{name}\""),
            ));
        }
        ValidationErrorKind::Minimum { limit } => out.push(value_finding(
            ErrorKind::InvalidValue,
            format!("must be at least {limit}, found {}", describe(instance)),
        )),
        ValidationErrorKind::Maximum { limit } => out.push(value_finding(
            ErrorKind::InvalidValue,
            format!("must be at most {limit}, found {}", describe(instance)),
        )),
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            explain_union(context, &path, instance, schema, document, out);
        }
        _ => out.push(value_finding(ErrorKind::InvalidValue, error.to_string())),
    }
}

/// A value that matched no branch of a union. When some branch accepts the value's JSON type,
/// that branch's own errors are the useful ones; otherwise the value has the wrong type for
/// every branch and one "expected A or B" line says so.
fn explain_union(
    branches: &[Vec<ValidationError<'static>>],
    path: &[Segment],
    instance: &Value,
    schema: &Value,
    document: &Value,
    out: &mut Vec<Finding>,
) {
    let own_pointer =
        |e: &ValidationError<'_>| from_pointer(e.instance_path().as_str(), document) == path;
    let type_mismatch = |e: &ValidationError<'_>| {
        own_pointer(e) && matches!(e.kind(), ValidationErrorKind::Type { .. })
    };
    if let Some(branch) = branches.iter().find(|b| !b.iter().any(type_mismatch)) {
        for error in branch {
            explain(error, schema, document, out);
        }
        return;
    }
    let mut expected: Vec<String> = Vec::new();
    for error in branches.iter().flatten().filter(|e| own_pointer(e)) {
        if let ValidationErrorKind::Type { kind } = error.kind() {
            let phrase = type_phrase(kind);
            if !expected.contains(&phrase) {
                expected.push(phrase);
            }
        }
    }
    out.push(Finding {
        path: path.to_vec(),
        target: Target::Value,
        kind: ErrorKind::WrongType,
        message: format!(
            "expected {}, found {}",
            expected.join(" or "),
            describe(instance)
        ),
    });
}

/// The keys an object schema allows, found from the schema path of its
/// `additionalProperties` failure.
fn known_keys(schema: &Value, schema_path: &str) -> Vec<String> {
    let object_path = schema_path
        .strip_suffix("/additionalProperties")
        .unwrap_or(schema_path);
    schema
        .pointer(object_path)
        .and_then(|node| node.get("properties"))
        .and_then(Value::as_object)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

fn type_phrase(kind: &TypeKind) -> String {
    let names: Vec<String> = match kind {
        TypeKind::Single(t) => vec![t.to_string()],
        TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
    };
    names
        .iter()
        .filter(|n| n.as_str() != "null")
        .map(|n| with_article(n))
        .collect::<Vec<_>>()
        .join(" or ")
}

fn with_article(type_name: &str) -> String {
    match type_name {
        "integer" => "an integer".to_owned(),
        "object" => "an object".to_owned(),
        "array" => "an array".to_owned(),
        "boolean" => "a boolean (true or false)".to_owned(),
        other => format!("a {other}"),
    }
}

/// A short rendering of a found value: strings quoted, long values cut.
fn describe(value: &Value) -> String {
    const MAX: usize = 40;
    let text = match value {
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        Value::Array(items) if items.is_empty() => "[]".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        other => other.to_string(),
    };
    if text.chars().count() > MAX {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describes_values_briefly() {
        assert_eq!(describe(&json!("lots")), "\"lots\"");
        assert_eq!(describe(&json!(3)), "3");
        assert_eq!(describe(&json!({"a": 1})), "an object");
        assert_eq!(describe(&json!([])), "[]");
        assert_eq!(describe(&json!("x".repeat(60))).chars().count(), 41);
    }
}
