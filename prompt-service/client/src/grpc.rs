//! The gRPC transport, with bounded retries for an unreachable service.

use std::time::{Duration, Instant};

use openclaw_proto::prompt::v1::{self as pb, prompt_service_client::PromptServiceClient};
use tonic::{Code, transport::Channel};

use crate::{PromptError, PromptSource};

/// How long to keep trying when prompt-service is unreachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// First pause between attempts.
    pub initial_backoff: Duration,
    /// Longest pause between attempts.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            initial_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(1),
        }
    }
}

/// A prompt-service reached over gRPC. Connects lazily, so agent-service
/// starts even when prompt-service is not up yet.
#[derive(Debug, Clone)]
pub struct GrpcPromptSource {
    endpoint: String,
    client: PromptServiceClient<Channel>,
    retry: RetryPolicy,
}

impl GrpcPromptSource {
    /// A client for `endpoint` (for example `http://127.0.0.1:50051`).
    pub fn connect_lazy(endpoint: &str, retry: RetryPolicy) -> Result<Self, PromptError> {
        let channel = tonic::transport::Endpoint::from_shared(endpoint.to_owned())
            .map_err(|e| {
                PromptError::Unavailable(format!(
                    "invalid prompt-service endpoint {endpoint:?}: {e}"
                ))
            })?
            .connect_timeout(Duration::from_secs(2))
            .tcp_nodelay(true)
            .connect_lazy();
        Ok(Self {
            endpoint: endpoint.to_owned(),
            client: PromptServiceClient::new(channel).max_decoding_message_size(64 * 1024 * 1024),
            retry,
        })
    }

    /// Runs `call` until it succeeds, fails for a reason retrying cannot fix,
    /// or the deadline passes.
    async fn with_retry<T, F, Fut>(&self, deadline: Instant, mut call: F) -> Result<T, PromptError>
    where
        F: FnMut(PromptServiceClient<Channel>, Duration) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let mut backoff = self.retry.initial_backoff;
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(PromptError::Unavailable(format!(
                    "{} did not answer before the deadline ({attempts} attempts)",
                    self.endpoint
                )));
            }
            match call(self.client.clone(), left).await {
                Ok(response) => return Ok(response.into_inner()),
                Err(status) if retryable(status.code()) => {
                    tracing::warn!(endpoint = %self.endpoint, attempts, code = ?status.code(), message = status.message(), "prompt-service call failed; retrying");
                    let pause = backoff.min(deadline.saturating_duration_since(Instant::now()));
                    if pause.is_zero() {
                        return Err(PromptError::Unavailable(format!(
                            "{}: {}",
                            self.endpoint,
                            status.message()
                        )));
                    }
                    tokio::time::sleep(pause).await;
                    backoff = (backoff * 2).min(self.retry.max_backoff);
                }
                Err(status) => {
                    return Err(PromptError::Refused(format!(
                        "{:?}: {}",
                        status.code(),
                        status.message()
                    )));
                }
            }
        }
    }
}

/// Codes worth another attempt: the service was not reachable or shed load.
fn retryable(code: Code) -> bool {
    matches!(
        code,
        Code::Unavailable
            | Code::Unknown
            | Code::ResourceExhausted
            | Code::Cancelled
            | Code::DeadlineExceeded
    )
}

#[async_trait::async_trait]
impl PromptSource for GrpcPromptSource {
    async fn render(
        &self,
        request: pb::RenderSystemPromptRequest,
        deadline: Instant,
    ) -> Result<pb::RenderSystemPromptResponse, PromptError> {
        self.with_retry(deadline, |mut client, left| {
            let mut req = tonic::Request::new(request.clone());
            req.set_timeout(left);
            async move { client.render_system_prompt(req).await }
        })
        .await
    }

    async fn contribution(
        &self,
        request: pb::ResolveProviderContributionRequest,
        deadline: Instant,
    ) -> Result<pb::ResolveProviderContributionResponse, PromptError> {
        self.with_retry(deadline, |mut client, left| {
            let mut req = tonic::Request::new(request.clone());
            req.set_timeout(left);
            async move { client.resolve_provider_contribution(req).await }
        })
        .await
    }

    fn describe(&self) -> String {
        format!("grpc {}", self.endpoint)
    }
}
