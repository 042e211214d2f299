//! `openclaw-tools`: the agent's built-in tools and the policy that decides which of them a
//! run gets (R-8, R-15, P-7, P-12, P-40).
//!
//! What it is for:
//! - the [`Tool`] interface the agent loop calls, the [`ToolContext`] a call runs in and the
//!   [`ToolOutcome`] it returns: a result, an error told to the model (the turn goes on), or
//!   the end of the turn. No tool panics or fails the session;
//! - the file tools `read`, `write`, `edit` ([`fs_tools`]) and `apply_patch` ([`apply_patch`]),
//!   every path confined to the workspace through `openclaw_workspace::Confined` (a path
//!   outside is "permission denied" and nothing is touched);
//! - `exec` ([`exec`]) with a timeout and an output cap, killing the whole process group on
//!   timeout and cancellation, and `process` ([`process`]) for background commands;
//! - `session_status` (status card with the time, per-session model override), `update_plan`
//!   (with `tools.experimental.planTool`) and the `gateway` config operations, which refuse
//!   changes to exec approval and security settings;
//! - tool policy ([`allowed_tools`]): profiles, groups, wildcards, per-provider policy,
//!   allow/alsoAllow/deny; and the per-run [`ToolRegistry`].
//!
//! What it is not for: the agent loop, sessions, transcripts or prompts (the runtime owns
//! them and reaches in through [`SessionControl`], [`ConfigControl`] and [`Clock`]); exec
//! approvals and sandboxing (commands run as the service user in the workspace, with no
//! allowlist); memory, web, messaging and session tools (the runtime adds those). TOOLS.md
//! never decides which tools exist. It holds no global state and prints nothing.

pub mod apply_patch;
mod arguments;
mod command;
mod context;
mod error;
pub mod exec;
mod file_io;
pub mod fs_tools;
pub mod gateway;
mod output;
pub mod plan;
pub mod policy;
pub mod process;
mod registry;
pub mod session_status;
mod tool;

pub use apply_patch::ApplyPatchTool;
pub use context::{
    Clock, ConfigControl, SessionControl, StatusCard, SystemClock, ToolContext, ToolLimits,
    Unavailable, Usage,
};
pub use error::ToolError;
pub use exec::ExecTool;
pub use fs_tools::{EditTool, ReadTool, WriteTool};
pub use gateway::GatewayTool;
pub use plan::{Plan, PlanStep, StepStatus, UpdatePlanTool};
pub use policy::{CORE_TOOLS, allowed_tools, apply_patch_available};
pub use process::{ProcessInfo, ProcessRegistry, ProcessStatus, ProcessTool};
pub use registry::ToolRegistry;
pub use session_status::SessionStatusTool;
pub use tokio_util::sync::CancellationToken;
pub use tool::{Tool, ToolOutcome};
