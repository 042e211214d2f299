//! The agent runtime: configuration, agents, workspaces, skills and sessions, the agent loop
//! (embedded and on the Codex app-server), exec approvals with a person in the loop,
//! heartbeats, cron jobs and subagents.
//!
//! IO sits behind small traits (environment, clock, prompt source, model
//! provider) so tests drive it deterministically. It is not a gRPC crate:
//! the server crate converts protobuf messages and maps [`RuntimeError`]
//! onto status codes.

mod acceptance;
pub mod approvals;
pub mod bootstrap_cuts;
pub mod compaction;
mod config_state;
pub mod context;
pub mod cron;
mod env;
mod error;
mod events;
pub mod evidence;
pub mod heartbeat;
pub mod hooks;
mod kept_skills;
pub mod metrics;
pub mod origin;
pub mod prompt_input;
mod redaction;
pub mod report;
pub mod run;
mod runtime;
mod sandboxing;
mod senders;
mod services;
pub mod sessions;
mod settings;
pub mod subagents;
pub mod visibility;
mod workspaces;

pub use config_state::{ConfigState, Loaded};
pub use env::{Env, MapEnv, ProcessEnv};
pub use error::{ErrorCode, RuntimeError};
pub use openclaw_config as config;
pub use openclaw_skills as skills;
pub use runtime::{
    AgentsHandle, ApprovalsHandle, ExecAllowlist, RunsHandle, Runtime, SessionsHandle,
    TranscriptItem, TranscriptStream, WorkspacePaths,
};
pub use services::{
    CronForward, DEFAULT_IDLE_RELEASE, DEFAULT_SANDBOX_PROGRAM, RuntimeOptions, SessionOwner,
    SetupOutcome, install_dir,
};
pub use settings::{Flags, Settings, absolute_in};
pub use workspaces::WorkspaceSetup;
