//! The PromptService implementation: validate, convert, call the pure core.

use openclaw_config::Loader;
use openclaw_proto::prompt::v1 as pb;
use pb::prompt_service_server::PromptService;
use prompt_render::Renderer;
use std::sync::Arc;
use tonic::{Request, Response, Status};

use crate::{
    codex::render_codex_request,
    contribution,
    convert::{input_from_request, response_from_rendered},
    error::ServerError,
    knobs,
    reply::RenderReply,
};

/// Renders a request exactly as the RPC does. The CLI preview calls this too,
/// so what it prints is byte-for-byte what the RPC returns (SPEC P-3).
pub fn render_request(
    renderer: &Renderer,
    req: pb::RenderSystemPromptRequest,
) -> Result<pb::RenderSystemPromptResponse, ServerError> {
    let input = input_from_request(req)?;
    let rendered = renderer.render(&input)?;
    Ok(response_from_rendered(rendered))
}

/// The prompt service. Its only state is the memo of stable prompt blocks,
/// which never changes what a request returns, and the compiled config
/// schema validator.
#[derive(Debug, Clone)]
pub struct PromptServiceImpl {
    renderer: Arc<Renderer>,
    loader: Arc<Loader>,
}

impl PromptServiceImpl {
    /// A service sharing `renderer` (for example with metrics). Compiles the
    /// config schema validator once.
    pub fn new(renderer: Arc<Renderer>) -> Result<Self, openclaw_config::ConfigError> {
        Ok(Self {
            renderer,
            loader: Arc::new(Loader::new()?),
        })
    }

    /// RenderSystemPrompt's work: validate, render, log and count. Both the
    /// served route and the generated trait method go through here.
    pub(crate) fn render_reply(
        &self,
        request: pb::RenderSystemPromptRequest,
    ) -> Result<RenderReply, Status> {
        let input = input_from_request(request).inspect_err(|e| {
            tracing::info!(error = %e, "render refused");
        })?;
        let rendered = self
            .renderer
            .render(&input)
            .map_err(ServerError::from)
            .inspect_err(|e| {
                tracing::info!(error = %e, "render refused");
            })?;
        tracing::debug!(
            chars = rendered.chars,
            sections = rendered.sections.len(),
            stable_prefix_sha256 = %rendered.stable_prefix_sha256,
            "rendered"
        );
        service_kit::metrics::prompt_rendered(rendered.chars, rendered.stable_prefix_chars);
        Ok(RenderReply::new(rendered))
    }
}

#[tonic::async_trait]
impl PromptService for PromptServiceImpl {
    async fn render_system_prompt(
        &self,
        request: Request<pb::RenderSystemPromptRequest>,
    ) -> Result<Response<pb::RenderSystemPromptResponse>, Status> {
        Ok(Response::new(
            self.render_reply(request.into_inner())?.into_response(),
        ))
    }

    async fn resolve_prompt_config(
        &self,
        request: Request<pb::ResolvePromptConfigRequest>,
    ) -> Result<Response<pb::ResolvePromptConfigResponse>, Status> {
        Ok(Response::new(knobs::resolve(
            &self.loader,
            request.into_inner(),
        )?))
    }

    async fn resolve_provider_contribution(
        &self,
        request: Request<pb::ResolveProviderContributionRequest>,
    ) -> Result<Response<pb::ResolveProviderContributionResponse>, Status> {
        Ok(Response::new(contribution::resolve(
            &self.loader,
            request.into_inner(),
        )?))
    }

    async fn render_codex_turn(
        &self,
        request: Request<pb::RenderCodexTurnRequest>,
    ) -> Result<Response<pb::RenderCodexTurnResponse>, Status> {
        let response = render_codex_request(request.into_inner()).inspect_err(|e| {
            tracing::info!(error = %e, "codex turn refused");
        })?;
        tracing::debug!(
            layers = response.layers.len(),
            files = response.files.len(),
            "codex turn mapped"
        );
        Ok(Response::new(response))
    }
}
