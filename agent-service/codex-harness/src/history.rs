//! The session's transcript as a turn may need it: only a new thread (or
//! one that replaces a stored thread Codex cannot resume) is given a
//! projection of it, so a steady-state turn on a loaded thread reads none
//! of it, and a long session's turn costs what its first one did.

use std::{future::Future, pin::Pin, sync::Arc};

use openclaw_transcript::Message;

type Load =
    dyn Fn() -> Pin<Box<dyn Future<Output = Result<Vec<Message>, String>> + Send>> + Send + Sync;

/// The messages before a turn, oldest first, read when (and only when) the
/// turn needs them.
#[derive(Clone)]
pub struct History(Arc<Load>);

impl History {
    /// Messages already at hand.
    pub fn of(messages: Vec<Message>) -> Self {
        let messages = Arc::new(messages);
        Self(Arc::new(move || {
            let messages = Arc::clone(&messages);
            Box::pin(async move { Ok(messages.as_ref().clone()) })
        }))
    }

    /// Messages read by `load` when a turn needs them; its error (a
    /// transcript that cannot be read) fails the turn before any thread is
    /// started.
    pub fn lazy<F, Fut>(load: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Message>, String>> + Send + 'static,
    {
        Self(Arc::new(move || Box::pin(load())))
    }

    pub(crate) async fn load(&self) -> Result<Vec<Message>, String> {
        (self.0)().await
    }
}

impl Default for History {
    fn default() -> Self {
        Self::of(Vec::new())
    }
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("History")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openclaw_transcript::{UserContent, UserMessage};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn user(text: &str) -> Message {
        Message::User(UserMessage {
            content: UserContent::Text(text.to_owned()),
            timestamp: 0,
        })
    }

    #[tokio::test]
    async fn a_lazy_history_is_read_only_when_loaded() {
        let reads = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&reads);
        let history = History::lazy(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok(vec![user("hello")]) }
        });
        let copy = history.clone();
        assert_eq!(
            reads.load(Ordering::SeqCst),
            0,
            "not read when made or cloned"
        );
        assert_eq!(copy.load().await, Ok(vec![user("hello")]));
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        let failing = History::lazy(|| async { Err("the transcript is gone".to_owned()) });
        assert_eq!(
            failing.load().await,
            Err("the transcript is gone".to_owned())
        );
        assert_eq!(
            History::of(vec![user("a")]).load().await,
            Ok(vec![user("a")])
        );
    }
}
