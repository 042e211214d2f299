//! The PromptService implementation: validate, convert, call the pure core.

use openclaw_config::Loader;
use openclaw_proto::prompt::v1 as pb;
use pb::prompt_service_server::PromptService;
use prompt_render::Renderer;
use service_kit::metrics::{self, StableInputs};
use std::sync::Arc;
use tonic::{Request, Response, Status};

use crate::{
    codex::render_codex_request,
    contribution,
    convert::{input_from_request, response_from_rendered, turn_from_request},
    error::ServerError,
    knobs,
    reply::{RenderReply, ReplyParts},
    wire::{self, Split},
    wire_memo::WireMemo,
};

/// Renders a request exactly as the RPC does. The CLI preview calls this too,
/// so what it prints is byte-for-byte what the RPC returns (P-3).
pub fn render_request(
    renderer: &Renderer,
    req: pb::RenderSystemPromptRequest,
) -> Result<pb::RenderSystemPromptResponse, ServerError> {
    let input = input_from_request(req)?;
    let rendered = renderer.render(&input)?;
    Ok(response_from_rendered(rendered))
}

/// Decodes a request, refusing malformed bytes as an invalid argument.
fn decode(bytes: &[u8]) -> Result<pb::RenderSystemPromptRequest, ServerError> {
    use prost::Message;
    pb::RenderSystemPromptRequest::decode(bytes).map_err(|e| {
        ServerError::invalid(
            "request",
            format!("not a valid RenderSystemPromptRequest: {e}"),
        )
    })
}

/// The prompt service. Its only state is the memos of stable prompt blocks
/// (by stable inputs, and by the request bytes that carry them), which never
/// change what a request returns, and the compiled config schema validator.
#[derive(Debug, Clone)]
pub struct PromptServiceImpl {
    renderer: Arc<Renderer>,
    memo: Arc<WireMemo>,
    loader: Arc<Loader>,
}

impl PromptServiceImpl {
    /// A service sharing `renderer` (for example with metrics). Compiles the
    /// config schema validator once.
    pub fn new(renderer: Arc<Renderer>) -> Result<Self, openclaw_config::ConfigError> {
        Self::with_memo(renderer, prompt_render::DEFAULT_CACHE_ENTRIES)
    }

    /// The same, remembering the stable parts of at most `entries` distinct
    /// requests by their bytes (see [`Self::render_wire`]; 0 turns that off).
    pub fn with_memo(
        renderer: Arc<Renderer>,
        entries: usize,
    ) -> Result<Self, openclaw_config::ConfigError> {
        Ok(Self {
            renderer,
            memo: Arc::new(WireMemo::new(entries)),
            loader: Arc::new(Loader::new()?),
        })
    }

    /// RenderSystemPrompt from the request's bytes, as the served route
    /// calls it: the same result as decoding the request and calling
    /// [`render_request`], but a request whose stable part was seen before
    /// has only its turn fields decoded (see [`crate::wire`]).
    pub fn render_wire(&self, request: &[u8]) -> Result<RenderReply, Status> {
        let result = match wire::split(request) {
            Some(split) => self.render_split(request, &split),
            None => {
                metrics::prompt_stable_inputs(StableInputs::Decoded);
                decode(request)
                    .and_then(input_from_request)
                    .and_then(|input| Ok(RenderReply::new(self.renderer.render(&input)?)))
            }
        };
        let reply = result.inspect_err(|e| {
            tracing::info!(error = %e, "render refused");
        })?;
        tracing::debug!(chars = reply.chars(), "rendered");
        metrics::prompt_rendered(reply.chars(), reply.stable_prefix_chars());
        metrics::prompt_surface(reply.surface_name());
        Ok(reply)
    }

    fn render_split(&self, request: &[u8], split: &Split<'_>) -> Result<RenderReply, ServerError> {
        let fingerprint = split.stable_fingerprint();
        if let Some(entry) = self.memo.find(fingerprint, split) {
            metrics::prompt_stable_inputs(StableInputs::Remembered);
            let turn = turn_from_request(decode(&split.turn)?)?;
            let rendered = entry.prepared.render_turn(&turn)?;
            return Ok(RenderReply::with_parts(rendered, Arc::clone(&entry.parts)));
        }
        let prepared = decode(request)
            .and_then(input_from_request)
            .and_then(|mut input| {
                let turn = input.take_turn();
                Ok((self.renderer.prepare(input)?, turn))
            });
        metrics::prompt_stable_inputs(if prepared.is_ok() {
            StableInputs::Prepared
        } else {
            StableInputs::Decoded
        });
        let (prepared, turn) = prepared?;
        let parts = Arc::new(ReplyParts::of(&prepared));
        let rendered = prepared.render_turn(&turn);
        // The stable part is valid whatever this turn's outcome.
        self.memo
            .insert(fingerprint, split, prepared, Arc::clone(&parts));
        Ok(RenderReply::with_parts(rendered?, parts))
    }

    /// Stable parts remembered by their bytes.
    pub fn remembered_requests(&self) -> usize {
        self.memo.len()
    }
}

#[tonic::async_trait]
impl PromptService for PromptServiceImpl {
    async fn render_system_prompt(
        &self,
        request: Request<pb::RenderSystemPromptRequest>,
    ) -> Result<Response<pb::RenderSystemPromptResponse>, Status> {
        // The served route goes through `render_wire`; this is the same
        // render for callers of the generated service (tests, embedders).
        let rendered = input_from_request(request.into_inner())
            .and_then(|input| Ok(self.renderer.render(&input)?))
            .inspect_err(|e| {
                tracing::info!(error = %e, "render refused");
            })?;
        metrics::prompt_rendered(rendered.chars, rendered.stable_prefix_chars);
        metrics::prompt_surface(rendered.prompt_surface.as_str());
        Ok(Response::new(response_from_rendered(rendered)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn a_session_s_stable_part_is_remembered_once() {
        let service =
            PromptServiceImpl::new(Arc::new(Renderer::default())).expect("the service starts");
        let mut request = crate::request_from_input(&prompt_render::fixtures::realistic());
        let first = service
            .render_wire(&request.encode_to_vec())
            .expect("renders");
        assert_eq!(service.remembered_requests(), 1);
        // Another turn: the same entry, whichever turn fields change.
        request.channel.get_or_insert_with(Default::default).name = "discord".into();
        request.tts_hint = "Keep it short.".into();
        request.current_date = "2026-12-01".into();
        request.prompt_surface = pb::PromptSurface::Preview as i32;
        request.mark_relocatable_block = true;
        let second = service
            .render_wire(&request.encode_to_vec())
            .expect("renders");
        assert_eq!(service.remembered_requests(), 1);
        assert_ne!(first.chars(), second.chars());
        // Other stable inputs: a second entry (the project keys are stable).
        request
            .active_project_keys
            .push("github.com/acme/app".into());
        service
            .render_wire(&request.encode_to_vec())
            .expect("renders");
        assert_eq!(service.remembered_requests(), 2);
        // Refused stable inputs are not remembered.
        request.workspace_dir = "relative/dir".into();
        assert!(service.render_wire(&request.encode_to_vec()).is_err());
        assert_eq!(service.remembered_requests(), 2);
        // Nothing is remembered when the memo is off.
        let off = PromptServiceImpl::with_memo(Arc::new(Renderer::default()), 0)
            .expect("the service starts");
        off.render_wire(
            &crate::request_from_input(&prompt_render::fixtures::realistic()).encode_to_vec(),
        )
        .expect("renders");
        assert_eq!(off.remembered_requests(), 0);
    }
}
