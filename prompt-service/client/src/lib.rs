//! How agent-service obtains its prompts: the [`PromptSource`] trait and its
//! two transports.
//!
//! - [`GrpcPromptSource`] calls a prompt-service over gRPC (the deployment
//!   default). Connection failures are retried with backoff for a short
//!   budget ([`RetryPolicy::give_up_after`], 2 s by default) or until the
//!   caller's deadline if that comes first, then reported as
//!   [`PromptError::Unavailable`]. [`GrpcPromptSource::reachability`]
//!   follows whether prompt-service is up, for readiness.
//! - [`InProcessPromptSource`] runs the very same request through the RPC's
//!   own code path inside the process (the single-binary embedded mode).
//!
//! Both take and return the `openclaw.prompt.v1` messages, so the bytes a
//! run sends are the bytes a preview or an export shows (P-3). It holds
//! no agent logic.

mod grpc;
mod in_process;

pub use grpc::{CONTRIBUTION_TTL, DEFAULT_GIVE_UP_AFTER, GrpcPromptSource, RetryPolicy};
pub use in_process::InProcessPromptSource;
pub use prompt_server::request_from_input;

use std::time::Instant;

use openclaw_proto::prompt::v1 as pb;

/// Why a prompt could not be obtained.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// prompt-service could not be reached before the deadline.
    #[error("prompt-service unavailable: {0}")]
    Unavailable(String),
    /// prompt-service refused the request (a bug in what the runtime sent).
    #[error("prompt-service refused the request: {0}")]
    Refused(String),
}

/// A source of rendered prompts.
#[async_trait::async_trait]
pub trait PromptSource: Send + Sync + std::fmt::Debug {
    /// Renders one turn's prompt, giving up at `deadline`.
    async fn render(
        &self,
        request: pb::RenderSystemPromptRequest,
        deadline: Instant,
    ) -> Result<pb::RenderSystemPromptResponse, PromptError>;

    /// The provider contribution for a provider/model pair (P-4, P-5).
    async fn contribution(
        &self,
        request: pb::ResolveProviderContributionRequest,
        deadline: Instant,
    ) -> Result<pb::ResolveProviderContributionResponse, PromptError>;

    /// Maps one Codex turn onto the app-server's `thread/start`,
    /// `thread/resume` and `turn/start` params (`RenderCodexTurn`,
    /// P-29, P-32, P-38), giving up at `deadline`.
    async fn render_codex(
        &self,
        request: pb::RenderCodexTurnRequest,
        deadline: Instant,
    ) -> Result<pb::RenderCodexTurnResponse, PromptError>;

    /// A short label for logs ("grpc http://..." or "in-process").
    fn describe(&self) -> String;
}
