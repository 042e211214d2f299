//! `openclaw-config`: OpenClaw's `openclaw.json` (JSON5) turned into a validated, typed config.
//!
//! What it is for: both services read the same file through this crate. prompt-service
//! (`ResolvePromptConfig`) receives the text in a request; agent-service reads it from disk and
//! passes the text in. [`load`] decodes JSON5, substitutes `${VAR}` through an [`EnvSource`],
//! validates against a JSON Schema generated from the [`raw`] types, and reports EVERY problem at
//! once with its JSON path and 1-based line and column. [`Config`] then answers resolved
//! questions with OpenClaw's defaults applied: the default agent, one agent's merged view
//! ([`Config::agent`]), queue, block streaming, prompt knobs, and model references through the
//! single parser in [`model_ref`].
//!
//! What it is not for: it is a pure library. It reads no files, no environment variables and no
//! clock; it does not watch, write or patch config, follow `$include`, or decide tool policy or
//! sandboxing (it only reports the configured values). It holds no global state.
//!
//! ```
//! use openclaw_config::{LoadOptions, NoEnv, UnresolvedVars, load};
//!
//! let options = LoadOptions { unresolved_vars: UnresolvedVars::Keep };
//! let config = load("{ agents: { defaults: { workspace: '~/ws' } } }", &NoEnv, &options)?;
//! assert_eq!(config.default_agent_id(), "main");
//!
//! let Err(error) = load("{ agents: { defaults: { workspac: 1 } } }", &NoEnv, &options) else {
//!     panic!("a typo must be refused");
//! };
//! assert_eq!(
//!     error.to_string(),
//!     r#"agents.defaults.workspac (line 1, column 25): unknown key; did you mean "workspace"?"#
//! );
//! # Ok::<(), openclaw_config::ConfigError>(())
//! ```

mod checks;
pub mod duration;
mod error;
mod load;
mod locate;
pub mod model_ref;
mod path;
pub mod raw;
pub mod resolve;
mod schema;
mod substitute;
mod suggest;
mod validate;

pub use duration::parse_duration;
pub use error::{ConfigError, ConfigErrors, ErrorKind, LocatedError, Position};
pub use load::{Config, LoadOptions, Loader, MAX_NESTING, SecretValue, load, parse_json5};
pub use model_ref::{ModelCatalog, ModelRef, is_gpt5_family};
pub use schema::{json_schema, schema_lookup};
pub use substitute::{EnvSource, NoEnv, UnresolvedVars, referenced_names};
