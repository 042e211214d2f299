//! The renders the runtime asked for, remembered so a model call's prompt can be shown later.
//!
//! [`RecordingPromptSource`] wraps the prompt source the runtime uses and keeps the most recent
//! render of each stable prefix (keyed by the prefix's SHA-256, which every model call reports).
//! Nothing is changed on the way through: the runtime gets exactly what the wrapped source
//! answered.

use std::{
    collections::{HashMap, VecDeque},
    sync::{Arc, Mutex, PoisonError},
};

use openclaw_proto::prompt::v1 as pb;
use prompt_client::{PromptError, PromptSource};
use std::time::Instant;

/// How many distinct stable prefixes are remembered (oldest forgotten first).
pub const REMEMBERED_PREFIXES: usize = 256;

/// Renders by stable-prefix hash, bounded.
#[derive(Debug, Default)]
pub struct RenderLog {
    inner: Mutex<LogInner>,
}

#[derive(Debug, Default)]
struct LogInner {
    by_hash: HashMap<String, Arc<pb::RenderSystemPromptResponse>>,
    order: VecDeque<String>,
}

impl RenderLog {
    /// Remembers `response` as the latest render of its stable prefix.
    pub fn remember(&self, response: Arc<pb::RenderSystemPromptResponse>) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let hash = response.stable_prefix_sha256.clone();
        if inner.by_hash.insert(hash.clone(), response).is_some() {
            inner.order.retain(|h| h != &hash);
        }
        inner.order.push_back(hash);
        while inner.order.len() > REMEMBERED_PREFIXES {
            if let Some(old) = inner.order.pop_front() {
                inner.by_hash.remove(&old);
            }
        }
    }

    /// The latest render whose stable prefix hashes to `sha256`.
    pub fn latest(&self, sha256: &str) -> Option<Arc<pb::RenderSystemPromptResponse>> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.by_hash.get(sha256).cloned()
    }
}

/// A [`PromptSource`] that answers from `inner` and records every system-prompt render.
#[derive(Debug)]
pub struct RecordingPromptSource {
    inner: Arc<dyn PromptSource>,
    log: Arc<RenderLog>,
}

impl RecordingPromptSource {
    /// Wraps `inner`; renders go to `log`.
    pub fn new(inner: Arc<dyn PromptSource>, log: Arc<RenderLog>) -> Self {
        Self { inner, log }
    }
}

#[async_trait::async_trait]
impl PromptSource for RecordingPromptSource {
    async fn render(
        &self,
        request: pb::RenderSystemPromptRequest,
        deadline: Instant,
    ) -> Result<pb::RenderSystemPromptResponse, PromptError> {
        let response = self.inner.render(request, deadline).await?;
        self.log.remember(Arc::new(response.clone()));
        Ok(response)
    }

    async fn contribution(
        &self,
        request: pb::ResolveProviderContributionRequest,
        deadline: Instant,
    ) -> Result<pb::ResolveProviderContributionResponse, PromptError> {
        self.inner.contribution(request, deadline).await
    }

    async fn render_codex(
        &self,
        request: pb::RenderCodexTurnRequest,
        deadline: Instant,
    ) -> Result<pb::RenderCodexTurnResponse, PromptError> {
        self.inner.render_codex(request, deadline).await
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(hash: &str, text: &str) -> Arc<pb::RenderSystemPromptResponse> {
        Arc::new(pb::RenderSystemPromptResponse {
            stable_prefix_sha256: hash.to_owned(),
            text: text.to_owned(),
            ..Default::default()
        })
    }

    #[test]
    fn keeps_the_latest_render_of_each_prefix_and_forgets_the_oldest() {
        let log = RenderLog::default();
        log.remember(render("a", "first"));
        log.remember(render("a", "second"));
        assert_eq!(
            log.latest("a").map(|r| r.text.clone()).as_deref(),
            Some("second")
        );
        for i in 0..REMEMBERED_PREFIXES {
            log.remember(render(&format!("h{i}"), ""));
        }
        assert!(log.latest("a").is_none(), "the oldest prefix is forgotten");
        assert!(log.latest("h0").is_some());
        assert!(
            log.latest(&format!("h{}", REMEMBERED_PREFIXES - 1))
                .is_some()
        );
    }
}
