//! Maps OpenClaw's prompt layers onto the parameters of OpenAI's Codex
//! app-server (protocol of Codex 0.169.0): `thread/start`, `thread/resume`
//! and `turn/start`, routed file by file for the native Codex harness
//! (P-29, P-30, P-32, P-38), plus the reconstructed model-bound layer
//! stack and the committed snapshot scenarios.
//!
//! Like `prompt-render`, whose validation, bootstrap budgeting, skills
//! listing and text normalisation it reuses, the library is pure: explicit
//! inputs in, JSON params and texts out; no tokio, gRPC, filesystem or clock.
//! The `prompt-snapshots` binary is the only part that touches files.
//!
//! It is not a Codex client: spawning `codex app-server`, the JSON-RPC
//! session and the thread bookkeeping belong to agent-service.

mod catalog;
mod context;
mod error;
mod input;
mod instructions;
mod json;
mod layers;
mod params;
mod routing;
pub mod snapshots;
mod tools;
mod turn;

pub use catalog::{CatalogSource, MODEL_FIXTURE_MODEL, MODEL_FIXTURE_PERSONALITY, ModelFixture};
pub use context::ContextDigest;
pub use error::CodexError;
pub use input::{ApprovalPolicy, CodexTurnInput, DynamicTool, SandboxMode, Trigger};
pub use layers::{CodexOwnedText, Layer, Role, from_params as layers_from_params};
pub use params::{CODEX_PROTOCOL_VERSION, SERVICE_NAME};
pub use routing::{FileRoute, Route, status_name};
pub use tools::ToolCatalog;
pub use turn::{CodexTurn, render_codex_turn};
