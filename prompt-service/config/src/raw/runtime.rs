//! `agents.list[].runtime`: which runtime runs an agent's turns, and the Codex harness settings.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// `agents.list[].runtime`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuntimeConfig {
    /// embedded (our own loop) or codex (the Codex app-server harness).
    #[serde(rename = "type")]
    pub kind: RuntimeKind,
    /// Codex harness settings, used when type is codex.
    pub codex: Option<CodexRuntimeConfig>,
}

/// `agents.list[].runtime.codex`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CodexRuntimeConfig {
    /// The codex executable (default `codex` on PATH).
    pub command: Option<String>,
    /// CODEX_HOME for the app-server process.
    pub codex_home: Option<String>,
    /// `key=value` items passed as `-c` overrides.
    pub config_overrides: Option<Vec<String>>,
    /// Codex approval policy.
    pub approval_policy: Option<CodexApprovalPolicy>,
    /// Codex sandbox policy.
    pub sandbox: Option<CodexSandbox>,
    /// An inline Codex `model_providers` entry: opaque.
    pub model_provider: Option<BTreeMap<String, Value>>,
}

choice! {
    /// `runtime.type`.
    RuntimeKind {
        /// This system's own agent loop.
        Embedded = "embedded",
        /// The Codex app-server harness.
        Codex = "codex",
    }
}

choice! {
    /// `runtime.codex.approvalPolicy`.
    CodexApprovalPolicy {
        /// Ask before anything not known safe.
        Untrusted = "untrusted",
        /// Ask when the model requests it.
        OnRequest = "on-request",
        /// Never ask.
        Never = "never",
    }
}

choice! {
    /// `runtime.codex.sandbox`.
    CodexSandbox {
        /// Read-only file system.
        ReadOnly = "read-only",
        /// Writes allowed inside the workspace.
        WorkspaceWrite = "workspace-write",
        /// No sandbox.
        DangerFullAccess = "danger-full-access",
    }
}
