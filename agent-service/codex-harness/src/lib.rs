//! `openclaw-codex-harness`: runs an agent's turns on a real Codex
//! `app-server` child process, for agents configured with
//! `agents.list[].runtime: {type: "codex", codex: {...}}` (//! P-29, P-32, P-38, R-11; lesson L13).
//!
//! What it is for: one [`CodexRunner`] per Codex agent spawns
//! `codex app-server` (stdio JSON lines), checks its version (0.169.x to
//! 0.171.x), binds each session to a Codex thread (start, rejoin, resume
//! validated on use, or a new thread plus a projection of our transcript),
//! sends the `thread/start`/`thread/resume`/`turn/start` params that
//! PromptService's `RenderCodexTurn` mapped, answers Codex's requests (our
//! tools as dynamic tools under our policy and workspace confinement;
//! command and file-change approvals from the agent's exec policy), batches
//! steer messages into one `turn/steer`, maps interrupt to `turn/interrupt`,
//! restarts a crashed child, and builds our transcript entries from Codex's
//! item events.
//!
//! What it is not for: it writes nothing itself. Sessions, transcripts, the
//! session index and the prompt mapping belong to the runtime and
//! PromptService; [`CodexRunner::run_turn`] hands back the entries and the
//! thread id to persist, and streams [`HarnessEvent`]s that map onto the
//! runtime's `RunEvent`s:
//!
//! | `HarnessEvent` | `RunEvent` |
//! |---|---|
//! | `TextDelta` / `ThinkingDelta` | `TextDelta` / `ThinkingDelta` |
//! | `ToolStarted` / `ToolFinished` | `ToolStarted` / `ToolFinished` |
//! | `Usage` | `Usage` |
//! | [`TurnOutcome`] `Completed`, `Interrupted`, `ProcessExited` | `Final` (stop reason [`TurnStatus::stop_reason`]) |
//! | [`TurnOutcome`] `Failed`, or `Err(HarnessError)` | `Error` |
//! | `ThreadReady`, `TurnStarted`, `Approval`, `Steered`, `Warning` | (tracing, or new kinds) |
//!
//! ```no_run
//! # async fn example(input: openclaw_codex_harness::TurnInput) -> Result<(), openclaw_codex_harness::HarnessError> {
//! use openclaw_codex_harness::{CodexRunner, HarnessSettings};
//!
//! let runner = CodexRunner::new(HarnessSettings::new("codex"));
//! let (events, mut rx) = tokio::sync::mpsc::channel(256);
//! tokio::spawn(async move { while let Some(_event) = rx.recv().await {} });
//! let outcome = runner.run_turn(input, events).await?;
//! // persist outcome.thread_id as codex_thread_id, append outcome.entries
//! # Ok(()) }
//! ```

mod approvals;
mod child_env;
mod dynamic_tools;
mod error;
mod events;
mod history;
mod items;
mod process;
mod projection;
mod rpc;
mod runner;
mod settings;
mod steer;
mod thread;
mod tool_items;
mod turn;
mod version;

pub use approvals::{ApprovalKind, ApprovalRecord, ApprovalRules, Decision};
pub use dynamic_tools::{DynamicToolSpec, dynamic_tool_specs};
pub use error::HarnessError;
pub use events::{HarnessEvent, ThreadBinding, TurnOutcome, TurnStatus};
pub use history::History;
pub use items::CODEX_API;
pub use projection::{DEFAULT_PROJECTION_CHARS, project};
pub use runner::{CodexParams, CodexRunner, RecordedTurn, TurnInput};
pub use settings::{DEFAULT_OVERRIDES, DISABLED_FEATURES, HarnessSettings, INLINE_PROVIDER_ID};
pub use version::{CodexVersion, SUPPORTED_RANGE};
