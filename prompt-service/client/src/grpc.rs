//! The gRPC transport, with bounded retries for an unreachable service, and
//! the caller's credentials: a bearer token on every call and TLS (with a
//! client certificate for mTLS) when the URL is `https://`.
//!
//! Provider contributions are kept for [`CONTRIBUTION_TTL`]: prompt-service
//! answers the same request with the same contribution (it reads no clock,
//! config or disk of its own), and a run asks for one before its first model
//! call, so a busy agent would otherwise make the same round trip for every
//! run. A prompt-service replaced by a build with other contributions is
//! heard from within that time. Renders are never kept.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use openclaw_proto::prompt::v1::{self as pb, prompt_service_client::PromptServiceClient};
use service_kit::{BearerToken, ClientSecurity};
use tokio::sync::watch;
use tonic::{Code, transport::Channel};
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

use crate::{PromptError, PromptSource};

/// How long to keep trying when prompt-service is unreachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// First pause between attempts.
    pub initial_backoff: Duration,
    /// Longest pause between attempts.
    pub max_backoff: Duration,
    /// How long one call keeps retrying a prompt-service that cannot be
    /// reached (refused connections, shed load), counted from the call's
    /// start; then it fails with [`PromptError::Unavailable`]. Independent
    /// of the caller's deadline, which may be a whole run's: a service that
    /// is down is reported in seconds, not when the run would have timed
    /// out. An attempt that reached the service may still take until the
    /// deadline.
    pub give_up_after: Duration,
}

/// [`RetryPolicy::give_up_after`] by default.
pub const DEFAULT_GIVE_UP_AFTER: Duration = Duration::from_secs(2);

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            initial_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(1),
            give_up_after: DEFAULT_GIVE_UP_AFTER,
        }
    }
}

/// How long a provider contribution prompt-service returned is used again for the same
/// request before it is asked anew.
pub const CONTRIBUTION_TTL: Duration = Duration::from_secs(30);

/// Requests kept at most; a full cache is emptied (there are a few provider/model pairs).
const CONTRIBUTIONS_KEPT: usize = 256;

/// A prompt-service reached over gRPC. Connects lazily, so agent-service
/// starts even when prompt-service is not up yet. Debug output never shows
/// the token. Clones share the connection and the kept contributions.
#[derive(Debug, Clone)]
pub struct GrpcPromptSource {
    endpoint: String,
    channel: Channel,
    client: PromptServiceClient<Channel>,
    retry: RetryPolicy,
    token: Option<BearerToken>,
    contributions: Arc<Contributions>,
}

/// Provider contributions by their encoded request, with when each was received.
#[derive(Debug)]
struct Contributions {
    ttl: Duration,
    kept: Mutex<HashMap<Vec<u8>, (Instant, pb::ResolveProviderContributionResponse)>>,
}

impl Contributions {
    fn new(ttl: Duration) -> Arc<Self> {
        Arc::new(Self {
            ttl,
            kept: Mutex::default(),
        })
    }

    fn get(&self, key: &[u8]) -> Option<pb::ResolveProviderContributionResponse> {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (at, response) = kept.get(key)?;
        (at.elapsed() < self.ttl).then(|| response.clone())
    }

    fn keep(&self, key: Vec<u8>, at: Instant, response: &pb::ResolveProviderContributionResponse) {
        if self.ttl.is_zero() {
            return;
        }
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if kept.len() >= CONTRIBUTIONS_KEPT && !kept.contains_key(&key) {
            kept.retain(|_, (at, _)| at.elapsed() < self.ttl);
            if kept.len() >= CONTRIBUTIONS_KEPT {
                kept.clear();
            }
        }
        kept.insert(key, (at, response.clone()));
    }
}

impl GrpcPromptSource {
    /// A client for `endpoint` (for example `http://127.0.0.1:50051`),
    /// without credentials.
    pub fn connect_lazy(endpoint: &str, retry: RetryPolicy) -> Result<Self, PromptError> {
        Self::connect_lazy_with(endpoint, retry, &ClientSecurity::default())
    }

    /// A client for `endpoint` that sends `security.token` on every call
    /// and, for an `https://` endpoint, speaks TLS as `security.tls` says
    /// (the CA to verify prompt-service with, and a client certificate when
    /// prompt-service requires one).
    pub fn connect_lazy_with(
        endpoint: &str,
        retry: RetryPolicy,
        security: &ClientSecurity,
    ) -> Result<Self, PromptError> {
        let invalid = |e: &dyn std::fmt::Display| {
            PromptError::Unavailable(format!("invalid prompt-service endpoint {endpoint:?}: {e}"))
        };
        let mut config = tonic::transport::Endpoint::from_shared(endpoint.to_owned())
            .map_err(|e| invalid(&e))?;
        if let Some(tls) = &security.tls {
            config = config
                .tls_config(tls.client_config())
                .map_err(|e| invalid(&e))?;
        }
        // Keepalive PINGs: a prompt-service host that vanished without
        // closing its connections (no FIN) is noticed in seconds, by the
        // reachability watch too, rather than after TCP's own timeouts.
        let channel = config
            .connect_timeout(Duration::from_secs(2))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(20))
            .keep_alive_timeout(Duration::from_secs(10))
            .connect_lazy();
        Ok(Self {
            endpoint: endpoint.to_owned(),
            channel: channel.clone(),
            client: PromptServiceClient::new(channel).max_decoding_message_size(64 * 1024 * 1024),
            retry,
            token: security.token.clone(),
            contributions: Contributions::new(CONTRIBUTION_TTL),
        })
    }

    /// This client with contributions kept for `ttl` instead of [`CONTRIBUTION_TTL`]
    /// (zero: never kept). Clones made before this keep the old setting.
    #[must_use]
    pub fn with_contribution_ttl(mut self, ttl: Duration) -> Self {
        self.contributions = Contributions::new(ttl);
        self
    }

    /// One attempt's request: the time left as its deadline, and the token.
    fn request<T>(&self, message: T, left: Duration) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        request.set_timeout(left);
        if let Some(token) = &self.token {
            token.apply(&mut request);
        }
        request
    }

    /// Runs `call` until it succeeds, fails for a reason retrying cannot fix,
    /// the retry budget is spent or the deadline passes.
    async fn with_retry<T, F, Fut>(&self, deadline: Instant, mut call: F) -> Result<T, PromptError>
    where
        F: FnMut(PromptServiceClient<Channel>, Duration) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let started = Instant::now();
        let retry_until = deadline.min(started + self.retry.give_up_after);
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
            // A router's own 502/503/504 page is an unreachable service, retried like one.
            match call(self.client.clone(), left)
                .await
                .map_err(service_kit::gateway_unavailable)
            {
                Ok(response) => return Ok(response.into_inner()),
                Err(status) if retryable(status.code()) => {
                    let pause = backoff.min(retry_until.saturating_duration_since(Instant::now()));
                    if pause.is_zero() {
                        tracing::warn!(endpoint = %self.endpoint, attempts, code = ?status.code(), message = status.message(), "prompt-service unreachable; giving up");
                        return Err(PromptError::Unavailable(format!(
                            "{} cannot be reached: {} ({attempts} attempts in {:.1} s)",
                            self.endpoint,
                            status.message(),
                            started.elapsed().as_secs_f64()
                        )));
                    }
                    tracing::debug!(endpoint = %self.endpoint, attempts, code = ?status.code(), message = status.message(), "prompt-service call failed; retrying");
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

/// The health service name prompt-service reports for its RPCs.
const PROMPT_SERVICE: &str = "openclaw.prompt.v1.PromptService";

impl GrpcPromptSource {
    /// Whether prompt-service is up, as it goes: a task (on the current
    /// runtime) keeps a `grpc.health.v1` Watch open on
    /// `openclaw.prompt.v1.PromptService` and the value is `true` while that
    /// reports SERVING. A refused connection, a broken stream or NOT_SERVING
    /// (prompt-service draining) make it `false` unless a watch opened again
    /// at once answers SERVING: behind a router, one instance draining is
    /// not prompt-service going away, and the new watch reaches another
    /// instance. After that the watch is re-opened with backoff
    /// (`initial_backoff` doubling to `max_backoff`). It starts `false` until
    /// the first answer. The task ends once every receiver is dropped.
    pub fn reachability(&self) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        let source = self.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = source.follow_health(&tx) => {}
                () = tx.closed() => {}
            }
        });
        rx
    }

    async fn follow_health(&self, reachable: &watch::Sender<bool>) {
        let mut backoff = self.retry.initial_backoff;
        // One watch opened again at once before a reachable service is
        // reported gone; re-armed by every SERVING answer.
        let mut second_look = true;
        loop {
            let mut request = tonic::Request::new(HealthCheckRequest {
                service: PROMPT_SERVICE.to_owned(),
            });
            if let Some(token) = &self.token {
                token.apply(&mut request);
            }
            let reason = match HealthClient::new(self.channel.clone()).watch(request).await {
                Ok(response) => {
                    let mut stream = response.into_inner();
                    loop {
                        match stream.message().await {
                            Ok(Some(reply)) if reply.status() == ServingStatus::Serving => {
                                backoff = self.retry.initial_backoff;
                                second_look = true;
                                if set(reachable, true) {
                                    tracing::info!(endpoint = %self.endpoint, "prompt-service reachable");
                                }
                            }
                            // Draining, most likely: its connection takes no
                            // new calls, so watch again over a new one, which
                            // may reach another instance.
                            Ok(Some(reply)) => {
                                break format!("it reports {:?}", reply.status());
                            }
                            Ok(None) => break "the health stream ended".to_owned(),
                            Err(status) => break status.message().to_owned(),
                        }
                    }
                }
                Err(status) => status.message().to_owned(),
            };
            if second_look && *reachable.borrow() {
                second_look = false;
                tracing::debug!(endpoint = %self.endpoint, %reason, "prompt-service health watch ended; watching again before reporting it");
                continue;
            }
            if set(reachable, false) {
                tracing::warn!(endpoint = %self.endpoint, %reason, "prompt-service unreachable");
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(self.retry.max_backoff);
        }
    }
}

/// Sets the reachability to `value`; true (and subscribers woken) only when it changed.
fn set(reachable: &watch::Sender<bool>, value: bool) -> bool {
    reachable.send_if_modified(|current| std::mem::replace(current, value) != value)
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
            let req = self.request(request.clone(), left);
            async move { client.render_system_prompt(req).await }
        })
        .await
    }

    async fn contribution(
        &self,
        request: pb::ResolveProviderContributionRequest,
        deadline: Instant,
    ) -> Result<pb::ResolveProviderContributionResponse, PromptError> {
        let key = prost::Message::encode_to_vec(&request);
        if let Some(kept) = self.contributions.get(&key) {
            return Ok(kept);
        }
        // Kept from when it was asked for: a slow answer is not kept longer.
        let asked = Instant::now();
        let response = self
            .with_retry(deadline, |mut client, left| {
                let req = self.request(request.clone(), left);
                async move { client.resolve_provider_contribution(req).await }
            })
            .await?;
        self.contributions.keep(key, asked, &response);
        Ok(response)
    }

    async fn render_codex(
        &self,
        request: pb::RenderCodexTurnRequest,
        deadline: Instant,
    ) -> Result<pb::RenderCodexTurnResponse, PromptError> {
        self.with_retry(deadline, |mut client, left| {
            let req = self.request(request.clone(), left);
            async move { client.render_codex_turn(req).await }
        })
        .await
    }

    fn describe(&self) -> String {
        format!("grpc {}", self.endpoint)
    }
}
