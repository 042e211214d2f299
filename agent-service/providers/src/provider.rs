//! The one trait every model provider implements.

use async_trait::async_trait;
use openclaw_transcript::AssistantMessage;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::request::{ModelRequest, StreamEvent};

/// A model behind some wire format.
#[async_trait]
pub trait ModelProvider: Send + Sync {
    /// The provider id from `models.providers.<id>` (lowercase).
    fn id(&self) -> &str;

    /// The wire format: `openai-responses`, `openai-completions`, `anthropic-messages` or
    /// `scripted`.
    fn api(&self) -> &'static str;

    /// Runs one model call. Events go to `events` as they arrive; a closed receiver is not an
    /// error (the reply is still assembled and returned). The returned message holds every
    /// content block in stream order, usage and the stop reason; its `timestamp` is the
    /// provider's clock when the request started.
    ///
    /// Cancelling `cancel` aborts the HTTP stream promptly and returns
    /// [`ProviderError::Cancelled`]. No retries happen here; see [`crate::complete_with_retry`].
    async fn complete(
        &self,
        request: &ModelRequest,
        events: mpsc::Sender<StreamEvent>,
        cancel: CancellationToken,
    ) -> Result<AssistantMessage, ProviderError>;
}
