//! The embedded transport: the RPC's own code path, without a socket.

use std::time::Instant;

use openclaw_config::Loader;
use openclaw_proto::prompt::v1 as pb;
use prompt_server::PromptServiceImpl;

use crate::{PromptError, PromptSource};

/// Renders in this process through the prompt service itself
/// (`PromptServiceImpl::render_message`, the RPC's code path and its cache
/// of stable blocks), without a socket.
#[derive(Debug)]
pub struct InProcessPromptSource {
    service: PromptServiceImpl,
    loader: Loader,
}

impl InProcessPromptSource {
    /// A source with its own stable-block cache and config validator.
    pub fn new() -> Result<Self, PromptError> {
        Ok(Self {
            service: PromptServiceImpl::new().map_err(|e| PromptError::Refused(e.to_string()))?,
            loader: Loader::new().map_err(|e| PromptError::Refused(e.to_string()))?,
        })
    }
}

#[async_trait::async_trait]
impl PromptSource for InProcessPromptSource {
    async fn render(
        &self,
        request: pb::RenderSystemPromptRequest,
        _deadline: Instant,
    ) -> Result<pb::RenderSystemPromptResponse, PromptError> {
        self.service
            .render_message(&request)
            .map_err(|e| PromptError::Refused(e.to_string()))
    }

    async fn contribution(
        &self,
        request: pb::ResolveProviderContributionRequest,
        _deadline: Instant,
    ) -> Result<pb::ResolveProviderContributionResponse, PromptError> {
        prompt_server::resolve_provider_contribution(&self.loader, request)
            .map_err(|e| PromptError::Refused(e.to_string()))
    }

    async fn render_codex(
        &self,
        request: pb::RenderCodexTurnRequest,
        _deadline: Instant,
    ) -> Result<pb::RenderCodexTurnResponse, PromptError> {
        // The RPC's own conversions around `prompt_codex::render_codex_turn`,
        // so the params are byte-identical to what RenderCodexTurn returns.
        let input = prompt_server::codex_input_from_request(request)
            .map_err(|e| PromptError::Refused(e.to_string()))?;
        let turn = prompt_codex::render_codex_turn(&input)
            .map_err(|e| PromptError::Refused(e.to_string()))?;
        Ok(prompt_server::response_from_turn(&turn))
    }

    fn describe(&self) -> String {
        "in-process".to_owned()
    }
}
