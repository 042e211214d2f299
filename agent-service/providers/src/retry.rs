//! Retrying a model call that failed before it produced anything.

use std::time::Duration;

use openclaw_transcript::AssistantMessage;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::provider::ModelProvider;
use crate::request::{ModelRequest, StreamEvent};

/// When and how often [`complete_with_retry`] tries again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included; 1 disables retries.
    pub max_attempts: u32,
    /// The wait before the first retry when the provider named none; doubles per retry.
    pub initial_backoff: Duration,
    /// The longest computed wait (a provider's `retry-after` is honoured as sent).
    pub max_backoff: Duration,
    /// The hard limit of the whole call, measured from its start: an attempt still running
    /// then is dropped (its connection closed) and the call fails with
    /// [`ProviderError::Connection`] saying so, and no retry is started (or waited for) that
    /// would end later. The runtime passes what is left of the run's `timeoutSeconds`.
    pub deadline: Duration,
}

impl Default for RetryPolicy {
    /// 3 attempts, 1 s then 2 s backoff (at most 20 s), within 60 s.
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(20),
            deadline: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt number `attempt` (1-based): the provider's `retry-after`
    /// when it sent one, else exponential backoff capped at `max_backoff`.
    pub fn delay(&self, attempt: u32, error: &ProviderError) -> Duration {
        if let Some(wait) = error.retry_after() {
            return wait;
        }
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

/// Runs `provider.complete`, retrying retryable errors ([`ProviderError::is_retryable`]) with
/// [`RetryPolicy::delay`] between attempts, within `policy.max_attempts` and
/// `policy.deadline` (a hard limit, see there). Once any event of an attempt reached `events`,
/// that attempt's error is returned as is: a retry would stream the reply a second time.
///
/// Events pass through a per-attempt channel with the capacity of `events`, so the check is
/// exact: an event counts as reached once it was handed to `events`.
pub async fn complete_with_retry(
    provider: &dyn ModelProvider,
    request: ModelRequest,
    events: mpsc::Sender<StreamEvent>,
    cancel: CancellationToken,
    policy: &RetryPolicy,
) -> Result<AssistantMessage, ProviderError> {
    let started = Instant::now();
    let end = started.checked_add(policy.deadline);
    let mut attempt = 1;
    loop {
        let (sender, mut receiver) = mpsc::channel(events.max_capacity().max(1));
        let call = provider.complete(&request, sender, cancel.clone());
        let forward = async {
            let mut forwarded = false;
            while let Some(event) = receiver.recv().await {
                forwarded = true;
                tokio::select! {
                    biased;
                    // Dropping the receiver lets the provider notice the cancellation itself.
                    () = cancel.cancelled() => break,
                    _ = events.send(event) => {}
                }
            }
            forwarded
        };
        let both = async { tokio::join!(call, forward) };
        // Dropping the attempt drops its response body, which closes the connection.
        let bounded = match end {
            Some(end) => tokio::time::timeout_at(end, both).await,
            None => Ok(both.await),
        };
        let Ok((result, forwarded)) = bounded else {
            return Err(ProviderError::connection(format!(
                "no complete reply within the call's deadline of {} s (attempt {attempt})",
                policy.deadline.as_secs_f64()
            )));
        };
        let error = match result {
            Ok(message) => return Ok(message),
            Err(error) => error,
        };
        if forwarded || !error.is_retryable() || attempt >= policy.max_attempts {
            return Err(error);
        }
        let wait = policy.delay(attempt, &error);
        if started.elapsed().saturating_add(wait) >= policy.deadline {
            return Err(error);
        }
        tracing::warn!(
            provider = %provider.id(),
            attempt,
            wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            error = %error,
            "model call failed before any output; retrying"
        );
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            () = tokio::time::sleep(wait) => {}
        }
        attempt += 1;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use async_trait::async_trait;
    use openclaw_transcript::StopReason;

    use super::*;

    /// Returns queued outcomes in order, sending a text delta first when asked.
    struct Queue(Mutex<VecDeque<(bool, Result<(), ProviderError>)>>);

    #[async_trait]
    impl ModelProvider for Queue {
        fn id(&self) -> &str {
            "queue"
        }
        fn api(&self) -> &'static str {
            "scripted"
        }
        async fn complete(
            &self,
            _: &ModelRequest,
            events: mpsc::Sender<StreamEvent>,
            _: CancellationToken,
        ) -> Result<AssistantMessage, ProviderError> {
            let (send_first, outcome) = self.0.lock().unwrap().pop_front().unwrap();
            if send_first {
                events
                    .send(StreamEvent::TextDelta("partial".into()))
                    .await
                    .unwrap();
            }
            outcome.map(|()| AssistantMessage {
                content: vec![],
                provider: "queue".into(),
                model: "m".into(),
                api: None,
                usage: None,
                stop_reason: StopReason::Stop,
                error_message: None,
                timestamp: 0,
            })
        }
    }

    fn queue(items: Vec<(bool, Result<(), ProviderError>)>) -> Queue {
        Queue(Mutex::new(items.into()))
    }

    fn server() -> ProviderError {
        ProviderError::server(500, "boom")
    }

    async fn run(
        provider: &Queue,
        policy: &RetryPolicy,
    ) -> (Result<AssistantMessage, ProviderError>, usize) {
        let (sender, mut receiver) = mpsc::channel(8);
        let result = complete_with_retry(
            provider,
            ModelRequest::default(),
            sender,
            CancellationToken::new(),
            policy,
        )
        .await;
        let mut seen = 0;
        while receiver.try_recv().is_ok() {
            seen += 1;
        }
        (result, seen)
    }

    #[tokio::test(start_paused = true)]
    async fn retries_until_success_with_backoff() {
        let provider = queue(vec![
            (false, Err(server())),
            (false, Err(server())),
            (false, Ok(())),
        ]);
        let started = Instant::now();
        let (result, _) = run(&provider, &RetryPolicy::default()).await;
        assert!(result.is_ok());
        assert_eq!(started.elapsed(), Duration::from_secs(3), "1 s then 2 s");
    }

    #[tokio::test(start_paused = true)]
    async fn honours_retry_after_and_the_deadline() {
        let limited = |secs| ProviderError::rate_limited(Some(Duration::from_secs(secs)), "");
        let provider = queue(vec![(false, Err(limited(7))), (false, Ok(()))]);
        let started = Instant::now();
        assert!(run(&provider, &RetryPolicy::default()).await.0.is_ok());
        assert_eq!(started.elapsed(), Duration::from_secs(7));

        let provider = queue(vec![(false, Err(limited(120))), (false, Ok(()))]);
        assert_eq!(
            run(&provider, &RetryPolicy::default()).await.0.unwrap_err(),
            limited(120)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn never_retries_after_output_or_when_not_retryable_or_out_of_attempts() {
        let provider = queue(vec![(true, Err(server())), (false, Ok(()))]);
        let (result, seen) = run(&provider, &RetryPolicy::default()).await;
        assert_eq!((result.unwrap_err(), seen), (server(), 1));

        let overflow = ProviderError::context_overflow("long");
        let provider = queue(vec![(false, Err(overflow.clone())), (false, Ok(()))]);
        assert_eq!(
            run(&provider, &RetryPolicy::default()).await.0.unwrap_err(),
            overflow
        );

        let provider = queue(vec![
            (false, Err(server())),
            (false, Err(server())),
            (false, Ok(())),
        ]);
        let policy = RetryPolicy {
            max_attempts: 2,
            ..RetryPolicy::default()
        };
        assert_eq!(run(&provider, &policy).await.0.unwrap_err(), server());
    }

    #[tokio::test(start_paused = true)]
    async fn cancellation_during_backoff_returns_at_once() {
        let provider = queue(vec![(false, Err(server())), (false, Ok(()))]);
        let (sender, _receiver) = mpsc::channel(8);
        let cancel = CancellationToken::new();
        let policy = RetryPolicy {
            initial_backoff: Duration::from_secs(30),
            ..RetryPolicy::default()
        };
        let started = Instant::now();
        let canceller = async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            cancel.cancel();
        };
        let (result, ()) = tokio::join!(
            complete_with_retry(
                &provider,
                ModelRequest::default(),
                sender,
                cancel.clone(),
                &policy
            ),
            canceller
        );
        assert_eq!(result.unwrap_err(), ProviderError::Cancelled);
        assert_eq!(started.elapsed(), Duration::from_secs(1));
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RetryPolicy::default();
        let waits: Vec<u64> = (1..=7)
            .map(|n| policy.delay(n, &server()).as_secs())
            .collect();
        assert_eq!(waits, vec![1, 2, 4, 8, 16, 20, 20]);
    }
}
