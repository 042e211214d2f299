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
//! - exec approvals ([`exec_policy`]: `tools.exec.security`, `ask`, `askFallback`,
//!   `safeBins` with their profiles ([`safe_bins`]), allowlist entries over resolved paths
//!   ([`exec_allowlist`]) kept in the approvals file ([`exec_approvals`])) judged on the
//!   effective command ([`command`]: shells and wrappers unwrapped, chains split), shared with
//!   the Codex harness's command approvals;
//! - short blocking file work in place when a worker is to spare ([`in_place`]), for the `read`
//!   tool and the runtime's journal and transcript fsyncs;
//! - untrusted-content markers ([`untrusted`]): tool results and chat messages fenced with a
//!   per-message nonce before they reach a model, look-alike markers neutralised;
//! - the memory tools `memory_search` and `memory_get` ([`memory`]): ranked passages of
//!   MEMORY.md and memory/*.md with `path#Lstart-Lend` references, and bounded excerpts by line
//!   range (which sessions get them is the runtime's privacy decision);
//! - `session_status` (status card with the time, per-session model override), `update_plan`
//!   (with `tools.experimental.planTool`) and the `gateway` config operations, which refuse
//!   changes to exec approval and security settings;
//! - `sessions_spawn` and `subagents` ([`subagents`]): thin tools over [`SubagentControl`],
//!   which the runtime implements (child sessions, limits, pushing results back);
//! - tool policy ([`allowed_tools`]): profiles, groups, wildcards, per-provider policy,
//!   allow/alsoAllow/deny; and the per-run [`ToolRegistry`], each tool's definition in it
//!   encoded once per config load ([`SpecCache`]).
//!
//! What it is not for: the agent loop, sessions, transcripts or prompts (the runtime owns
//! them and reaches in through [`SessionControl`], [`SubagentControl`], [`ConfigControl`]
//! and [`Clock`]);
//! sandboxing (allowed commands run as the service user in the workspace) and how a person is
//! asked (the runtime implements [`Approver`]; without one "ask" resolves through
//! `askFallback`); web, messaging
//! and other session tools (the runtime adds those). TOOLS.md
//! never decides which tools exist. It holds no global state and prints nothing.

pub mod apply_patch;
pub mod approval;
mod arguments;
pub mod command;
mod context;
pub mod cron;
mod error;
pub mod exec;
pub mod exec_allowlist;
pub mod exec_approvals;
pub mod exec_policy;
mod exec_tables;
mod file_io;
pub mod fs_tools;
pub mod gateway;
pub mod in_place;
pub mod memory;
mod output;
pub mod plan;
pub mod policy;
pub mod process;
mod registry;
pub mod safe_bins;
pub mod session_status;
mod spawn;
pub mod subagents;
mod tool;
pub mod untrusted;

pub use apply_patch::ApplyPatchTool;
pub use approval::{
    ApprovalDecision, ApprovalOutcome, ApprovalRequest, ApprovalSubject, Approver, NoApprover,
    Question, Settlement, settle,
};
pub use context::{
    Clock, ConfigControl, SessionControl, StatusCard, SystemClock, ToolContext, ToolLimits,
    Unavailable, Usage,
};
pub use cron::{CronControl, CronTool, NoCron};
pub use error::ToolError;
pub use exec::ExecTool;
pub use exec_approvals::{AllowlistEntry, ExecApprovals};
pub use exec_policy::{ExecPolicy, Judgement, Verdict};
pub use fs_tools::{EditTool, ReadTool, WriteTool};
pub use gateway::GatewayTool;
pub use memory::{MemoryGetTool, MemorySearchTool};
pub use openclaw_providers::{ToolSchema, ToolSpec};
pub use plan::{Plan, PlanStep, StepStatus, UpdatePlanTool};
pub use policy::{CORE_TOOLS, allowed_tools, apply_patch_available};
pub use process::{
    EXIT_TAIL_CHARS, ExitSink, ProcessExit, ProcessInfo, ProcessRegistry, ProcessStatus,
    ProcessTool,
};
pub use registry::{SpecCache, ToolRegistry, spec_of};
pub use session_status::SessionStatusTool;
pub use subagents::{
    ChildInfo, NoSubagents, SessionsSpawnTool, SpawnRequest, SubagentControl, SubagentsTool,
};
pub use tokio_util::sync::CancellationToken;
pub use tool::{Tool, ToolOutcome};
pub use untrusted::{EXEC_EXIT_LABEL, EXEC_EXIT_OUTPUT, Fence, FencedHistory, UserOrigin};
