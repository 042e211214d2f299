//! gRPC shell of prompt-service: converts `openclaw.prompt.v1` messages to the
//! pure renderer's inputs and back, maps errors onto status codes, and serves
//! the service with health, reflection, limits and a graceful drain.
//!
//! It holds no prompt logic (that is `prompt-render`, and `prompt-codex` for
//! the Codex app-server mapping) and no state.

mod codex;
mod contribution;
mod convert;
mod error;
mod knobs;
pub mod metrics;
mod preview;
mod reply;
mod serve;
mod service;
mod stable_cache;
mod to_proto;
mod wire;

pub use codex::{codex_input_from_request, render_codex_request, response_from_turn};
pub use contribution::resolve as resolve_provider_contribution;
pub use convert::{input_from_request, response_from_rendered, turn_from_request};
pub use error::ServerError;
pub use preview::{PreviewError, PreviewFormat, parse_request, preview, response_json};
pub use reply::{RenderReply, ReplyParts};
pub use serve::{ServeConfig, ServeError, serve};
pub use service::{PromptServiceImpl, render_request};
pub use stable_cache::DEFAULT_CACHE_ENTRIES;
pub use to_proto::request_from_input;
