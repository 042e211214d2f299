//! Shared helpers for the suite.

use std::collections::BTreeMap;

use openclaw_config::{
    Config, ConfigError, LoadOptions, LocatedError, NoEnv, Position, UnresolvedVars, load,
};

/// The realistic example kept beside the crate (referenced from the README).
pub const EXAMPLE: &str = include_str!("../../examples/openclaw.json5");

/// Keys of the real schema, mixed with near misses and awkward ones, so that generated
/// documents get deep into validation and hit its errors too.
pub const SCHEMA_KEYS: &[&str] = &[
    "agents",
    "defaults",
    "list",
    "id",
    "workspace",
    "model",
    "primary",
    "fallbacks",
    "tools",
    "exec",
    "security",
    "ask",
    "askFallback",
    "safeBins",
    "bash",
    "channels",
    "telegram",
    "allowFrom",
    "messages",
    "queue",
    "mode",
    "byChannel",
    "session",
    "gateway",
    "auth",
    "bind",
    "heartbeat",
    "every",
    "prompt",
    "sandbox",
    "runtime",
    "type",
    "codex",
    "command",
    "skills",
    "models",
    "providers",
    "baseUrl",
    "api",
    "apiKey",
    "env",
    "userTimezone",
    "params",
    "identity",
    "workspac",
    "$schema",
    "é",
    "x-y",
    "alias",
    "profile",
    "extra",
    "openai/gpt-5",
    "x y",
];

/// Options that keep `${VAR}` references as written.
pub fn keep() -> LoadOptions {
    LoadOptions {
        unresolved_vars: UnresolvedVars::Keep,
    }
}

/// Loads text that must be valid, keeping unresolved references.
pub fn valid(text: &str) -> Config {
    match load(text, &NoEnv, &keep()) {
        Ok(config) => config,
        Err(error) => panic!("expected a valid config, got:\n{error}"),
    }
}

/// Loads text that must be invalid and returns its located errors.
pub fn invalid(
    text: &str,
    env: &BTreeMap<String, String>,
    options: &LoadOptions,
) -> Vec<LocatedError> {
    match load(text, env, options) {
        Ok(_) => panic!("expected errors"),
        Err(ConfigError::Invalid(errors)) => errors.into_vec(),
        Err(other) => panic!("expected located errors, got {other:?}"),
    }
}

/// Each error's path and message, in order.
pub fn paths_and_messages(errors: &[LocatedError]) -> Vec<(&str, &str)> {
    errors
        .iter()
        .map(|e| (e.path.as_str(), e.message.as_str()))
        .collect()
}

/// Each error as `path: message`, in order.
pub fn error_lines(errors: &[LocatedError]) -> Vec<String> {
    errors
        .iter()
        .map(|e| format!("{}: {}", e.path, e.message))
        .collect()
}

/// An environment from pairs.
pub fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Independent check of a reported position: the text at (line, column), counted in
/// characters, must start with `token`.
pub fn assert_points_at(text: &str, position: Option<Position>, token: &str) {
    let Some(Position { line, column }) = position else {
        panic!("no position for {token:?}");
    };
    let line_text = text.lines().nth(line - 1).unwrap_or_default();
    let rest: String = line_text.chars().skip(column - 1).collect();
    assert!(
        rest.starts_with(token),
        "line {line}, column {column} points at {rest:?}, expected {token:?}"
    );
}
