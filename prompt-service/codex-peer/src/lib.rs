//! The real Codex peer for tests: installs the pinned `@openai/codex` npm
//! package into the ignored `.tools/` folder of the workspace (once, cached
//! between runs, serialized by a file lock) and checks app-server params
//! against the JSON schema that exact binary generates.
//!
//! It is dev-only tooling, used from `[dev-dependencies]` of the crates that
//! speak the Codex app-server protocol (`prompt-codex`, `prompt-server`, and
//! later the agent-service Codex harness). It is not for production code: it
//! shells out to `npm` and to the Codex binary and touches the filesystem.
//!
//! ```no_run
//! # fn main() -> Result<(), codex_peer::PeerError> {
//! let codex = codex_peer::CodexInstall::ensure()?;
//! let schemas = codex_peer::ParamsSchemas::generate(&codex)?;
//! let params = serde_json::json!({"threadId": "t", "input": []});
//! schemas.check(codex_peer::ParamsMethod::TurnStart, &params)?;
//! # Ok(())
//! # }
//! ```

mod error;
mod install;
mod schema;

pub use error::PeerError;
pub use install::{CODEX_NPM_PACKAGE, CODEX_VERSION, CodexInstall, default_tools_dir};
pub use schema::{ParamsMethod, ParamsSchemas};
