//! gRPC shell of prompt-service: converts `openclaw.prompt.v1` messages to the
//! pure renderer's inputs and back, maps errors onto status codes, and serves
//! the service with health, reflection, limits and a graceful drain.
//!
//! It holds no prompt logic (that is `prompt-render`) and no state.

mod contribution;
mod convert;
mod error;
mod knobs;
mod preview;
mod serve;
mod service;
mod to_proto;

pub use convert::{input_from_request, response_from_rendered};
pub use error::ServerError;
pub use preview::{PreviewError, PreviewFormat, parse_request, preview, response_json};
pub use serve::{ServeConfig, ServeError, serve};
pub use service::{PromptServiceImpl, render_request};
pub use to_proto::request_from_input;
