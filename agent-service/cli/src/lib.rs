//! The `openclaw` command line: `up` runs prompt-service and agent-service
//! together in one process (agent-service rendering prompts through
//! prompt-service over gRPC, as deployed), `demo` adds the offline scripted
//! model and a first turn, and the other commands are a gRPC client of the
//! AgentService API (`chat`, `status`, `setup`, `agents`, `sessions`,
//! `preview`, `context`, `skills`, `cron`, `approvals`).
//!
//! It is not where agent or prompt logic lives: it starts the servers of
//! `agent-server` and `prompt-server` and prints what the API returns.
//! Every command writes through [`Term`] (answers on stdout, notes on
//! stderr) and fails with a [`CliError`] that carries its exit code, so the
//! tests drive the same functions `main` does.

mod app;
pub mod approvals;
mod args;
pub mod chat;
pub mod client;
pub mod cron;
pub mod demo;
mod error;
pub mod inspect;
mod interrupt;
pub mod sessions;
pub mod stack;
pub mod status;
mod term;
pub mod up;

pub use app::run;
pub use args::{
    AllowlistAction, ApprovalsAction, ApprovalsArgs, ChatArgs, Cli, Command, ContextArgs,
    CronAction, CronArgs, DemoArgs, ObserveArgs, PreviewArgs, ServerArgs, SessionsAction,
    SessionsArgs, SetupArgs, SkillsArgs, UpArgs,
};
pub use error::{CliError, EXIT_CODES_HELP};
pub use interrupt::{Interrupt, Signalled};
pub use term::{Style, Term, table, visible};
