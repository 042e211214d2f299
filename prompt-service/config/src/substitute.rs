//! `${VAR}` substitution in string values, reading variables through [`EnvSource`] so that this
//! crate never touches the process environment (tests pass a map; agent-service passes the real
//! environment; prompt-service keeps references as written).
//!
//! Rules (OpenClaw's): only names matching `[A-Z_][A-Z0-9_]*` are references; an unset or empty
//! variable is unresolved; `$${VAR}` is an escape that yields the literal text `${VAR}`; any
//! number of references may sit inside one string; object keys are never substituted.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

use serde_json::Value;

use crate::path::Segment;

/// Where `${VAR}` values come from.
pub trait EnvSource {
    /// The value of `name`, or `None` when it is unset.
    fn get(&self, name: &str) -> Option<String>;
}

impl<S: BuildHasher> EnvSource for HashMap<String, String, S> {
    fn get(&self, name: &str) -> Option<String> {
        HashMap::get(self, name).cloned()
    }
}

impl EnvSource for BTreeMap<String, String> {
    fn get(&self, name: &str) -> Option<String> {
        BTreeMap::get(self, name).cloned()
    }
}

impl<T: EnvSource + ?Sized> EnvSource for &T {
    fn get(&self, name: &str) -> Option<String> {
        (**self).get(name)
    }
}

/// An environment with no variables, for callers that never substitute (prompt-service).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoEnv;

impl EnvSource for NoEnv {
    fn get(&self, _name: &str) -> Option<String> {
        None
    }
}

/// What to do with a `${VAR}` whose variable is unset or empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnresolvedVars {
    /// Report an error at the string's path (the runtime: a missing secret must stop startup).
    #[default]
    Error,
    /// Leave the reference exactly as written (prompt-service, which never sees secrets).
    Keep,
}

/// An unresolved reference found during substitution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unresolved {
    pub(crate) path: Vec<Segment>,
    pub(crate) name: String,
}

/// A reference that was replaced by its variable's value.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub(crate) name: String,
    pub(crate) value: String,
}

/// What [`substitute_all`] did.
#[derive(Default)]
pub(crate) struct Substitution {
    /// References left unresolved (always empty under [`UnresolvedVars::Keep`]).
    pub(crate) unresolved: Vec<Unresolved>,
    /// References replaced, each name once.
    pub(crate) resolved: Vec<Resolved>,
}

/// Substitutes every string in `value` in place.
pub(crate) fn substitute_all(
    value: &mut Value,
    env: &dyn EnvSource,
    policy: UnresolvedVars,
) -> Substitution {
    let mut done = Substitution::default();
    let mut path = Vec::new();
    walk(value, env, &mut path, &mut done);
    if policy == UnresolvedVars::Keep {
        done.unresolved.clear();
    }
    done
}

fn walk(value: &mut Value, env: &dyn EnvSource, path: &mut Vec<Segment>, done: &mut Substitution) {
    match value {
        Value::String(text) => {
            if text.contains('$') {
                let (replaced, missing) = substitute_str(text, env);
                for name in referenced_names(text) {
                    if missing.contains(&name) || done.resolved.iter().any(|r| r.name == name) {
                        continue;
                    }
                    if let Some(value) = env.get(&name).filter(|v| !v.is_empty()) {
                        done.resolved.push(Resolved { name, value });
                    }
                }
                *text = replaced;
                done.unresolved
                    .extend(missing.into_iter().map(|name| Unresolved {
                        path: path.clone(),
                        name,
                    }));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                path.push(Segment::Index(i));
                walk(item, env, path, done);
                path.pop();
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                path.push(Segment::Key(key.clone()));
                walk(item, env, path, done);
                path.pop();
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Substitutes one string; returns the new text and the names left unresolved (whose references
/// stay in the text as written).
pub(crate) fn substitute_str(text: &str, env: &dyn EnvSource) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut missing = Vec::new();
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let from_dollar = &rest[dollar..];
        if let Some(name) = reference_at(from_dollar.strip_prefix('$').unwrap_or_default()) {
            // `$${NAME}`: the escape; emit `${NAME}` literally.
            out.push_str(&from_dollar[1..name.len() + 4]);
            rest = &from_dollar[name.len() + 4..];
        } else if let Some(name) = reference_at(from_dollar) {
            let written = &from_dollar[..name.len() + 3];
            match env.get(name).filter(|v| !v.is_empty()) {
                Some(value) => out.push_str(&value),
                None => {
                    out.push_str(written);
                    missing.push(name.to_owned());
                }
            }
            rest = &from_dollar[written.len()..];
        } else {
            out.push('$');
            rest = &from_dollar[1..];
        }
    }
    out.push_str(rest);
    (out, missing)
}

/// The names of the `${NAME}` references in `text` (escaped `$${NAME}` ones left out), in
/// order, each once.
pub fn referenced_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        let from_dollar = &rest[dollar..];
        if let Some(name) = reference_at(from_dollar.strip_prefix('$').unwrap_or_default()) {
            rest = &from_dollar[name.len() + 4..];
        } else if let Some(name) = reference_at(from_dollar) {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
            rest = &from_dollar[name.len() + 3..];
        } else {
            rest = &from_dollar[1..];
        }
    }
    names
}

/// If `text` starts with `${NAME}` for a valid NAME, returns NAME.
fn reference_at(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("${")?;
    let close = inner.find('}')?;
    let name = &inner[..close];
    let mut chars = name.chars();
    let valid = matches!(chars.next(), Some(c) if c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    valid.then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> BTreeMap<String, String> {
        BTreeMap::from([
            ("HOST".to_owned(), "example.com".to_owned()),
            ("PORT".to_owned(), "8080".to_owned()),
            ("EMPTY".to_owned(), String::new()),
        ])
    }

    #[test]
    fn substitutes_inline_and_repeated_references() {
        let (text, missing) = substitute_str("http://${HOST}:${PORT}/${HOST}", &env());
        assert_eq!(text, "http://example.com:8080/example.com");
        assert!(missing.is_empty());
    }

    #[test]
    fn escape_yields_literal_reference() {
        let (text, missing) = substitute_str("a $${HOST} b ${HOST}", &env());
        assert_eq!(text, "a ${HOST} b example.com");
        assert!(missing.is_empty());
        // An escaped reference is not looked up, so an unset name is not an error.
        let (text, missing) = substitute_str("$${NOPE}", &env());
        assert_eq!((text.as_str(), missing.len()), ("${NOPE}", 0));
    }

    #[test]
    fn unset_and_empty_are_unresolved_and_kept_as_written() {
        let (text, missing) = substitute_str("${NOPE}-${EMPTY}-${HOST}", &env());
        assert_eq!(text, "${NOPE}-${EMPTY}-example.com");
        assert_eq!(missing, vec!["NOPE".to_owned(), "EMPTY".to_owned()]);
    }

    #[test]
    fn non_references_are_left_alone() {
        for text in [
            "${lower}", "${}", "$HOST", "${HOST", "cost: $5", "${1ABC}", "$", "$$",
        ] {
            let (out, missing) = substitute_str(text, &env());
            assert_eq!(out, text, "{text}");
            assert!(missing.is_empty(), "{text}");
        }
    }

    #[test]
    fn unicode_around_references_survives() {
        let (text, _) = substitute_str("→${HOST}←$€", &env());
        assert_eq!(text, "→example.com←$€");
    }
}
