//! The one model provider over HTTP, whatever the wire format: an endpoint, the clock of its
//! reply timestamps, and a [`Wire`] that says where a request goes, what it sends and how the
//! stream that answers it is read.

use std::{marker::PhantomData, sync::Arc};

use async_trait::async_trait;
use http::{HeaderName, HeaderValue};
use openclaw_transcript::{AssistantMessage, Clock, unix_millis};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::provider::ModelProvider;
use crate::request::{ModelRequest, StreamEvent};
use crate::transport::{self, Auth, Endpoint, WireDecoder};

/// A wire format spoken over HTTP with streamed SSE.
pub(crate) trait Wire: Send + Sync + 'static {
    /// The format's `api` in config and in the transcript.
    const API: &'static str;
    /// The provider's name in debug output.
    const NAME: &'static str;
    /// Reads the stream of one reply.
    type Decoder: WireDecoder + Default + Send;
    /// What `request` sends to `endpoint`, its body already encoded.
    fn post(endpoint: &Endpoint, request: &ModelRequest) -> Result<Post, ProviderError>;
}

/// One request of a wire format.
pub(crate) struct Post {
    /// Below the endpoint's base URL.
    pub(crate) path: &'static str,
    /// How the API key travels.
    pub(crate) auth: Auth,
    /// Headers the API itself requires (the endpoint's configured ones are added after).
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// The JSON body, encoded: built straight from the request it borrows, never through a
    /// `serde_json::Value` tree.
    pub(crate) body: Vec<u8>,
}

/// A provider speaking the wire format `W` to one endpoint.
pub struct HttpProvider<W> {
    endpoint: Endpoint,
    clock: Arc<dyn Clock>,
    wire: PhantomData<fn() -> W>,
}

impl<W> HttpProvider<W> {
    /// A provider for `endpoint`; reply timestamps come from `clock`.
    pub fn new(endpoint: Endpoint, clock: Arc<dyn Clock>) -> Self {
        Self {
            endpoint,
            clock,
            wire: PhantomData,
        }
    }
}

impl<W> Clone for HttpProvider<W> {
    fn clone(&self) -> Self {
        Self::new(self.endpoint.clone(), Arc::clone(&self.clock))
    }
}

impl<W: Wire> std::fmt::Debug for HttpProvider<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(W::NAME)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<W: Wire> ModelProvider for HttpProvider<W> {
    fn id(&self) -> &str {
        &self.endpoint.id
    }

    fn api(&self) -> &'static str {
        W::API
    }

    #[tracing::instrument(skip_all, fields(provider = %self.endpoint.id, model = %request.model))]
    async fn complete(
        &self,
        request: &ModelRequest,
        events: mpsc::Sender<StreamEvent>,
        cancel: CancellationToken,
    ) -> Result<AssistantMessage, ProviderError> {
        let timestamp = unix_millis(self.clock.now());
        // The messages and tools are shared, so this copy is small.
        let mut request = request.clone();
        if request.max_output_tokens.is_none() {
            request.max_output_tokens = self.endpoint.output_limit(&request.model);
        }
        if !self.endpoint.reasons(&request.model) {
            request.reasoning_effort = None;
        }
        let post = W::post(&self.endpoint, &request)?;
        tracing::debug!("model request");
        let stream = transport::post_sse(
            &self.endpoint,
            post.path,
            post.auth,
            &post.headers,
            post.body,
            &cancel,
        )
        .await?;
        let mut decoder = W::Decoder::default();
        transport::drive(stream, &mut decoder, &events, &cancel).await?;
        Ok(std::mem::take(decoder.reply()).into_message(
            &self.endpoint.id,
            &request.model,
            W::API,
            timestamp,
        ))
    }
}
