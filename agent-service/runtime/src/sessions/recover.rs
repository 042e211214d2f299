//! Start-up recovery of acknowledged messages that never reached a
//! transcript (see [`super::journal`]).

use std::sync::Arc;

use openclaw_transcript::{EntryBody, Message, SessionKey, UserContent, UserMessage};

use super::{
    LiveSession,
    journal::{self, Journal},
};
use crate::error::RuntimeError;

/// Writes the journal's leftovers into the transcript as unanswered user
/// messages (skipping any the transcript already has), fsyncs, and empties
/// the journal.
pub(crate) async fn recover_journal(
    clock: &dyn openclaw_transcript::Clock,
    live: &LiveSession,
    journal: &Arc<Journal>,
    key: &SessionKey,
) -> Result<(), RuntimeError> {
    let reader = Arc::clone(journal);
    let leftovers = blocking(move || reader.leftovers()).await?;
    if leftovers.is_empty() {
        return Ok(());
    }
    let users: Vec<(String, i64)> = live
        .messages()
        .await?
        .into_iter()
        .filter_map(|m| match m {
            Message::User(UserMessage {
                content: UserContent::Text(text),
                timestamp,
            }) => Some((text, timestamp)),
            _ => None,
        })
        .collect();
    let found = leftovers.len();
    let missing = journal::still_missing(leftovers, &users);
    if !missing.is_empty() {
        let now = openclaw_transcript::unix_millis(clock.now());
        let bodies = missing
            .iter()
            .map(|a| EntryBody::Message {
                message: Message::User(UserMessage {
                    content: UserContent::Text(a.text.clone()),
                    timestamp: now,
                }),
            })
            .collect();
        live.append(bodies, true).await?;
    }
    tracing::warn!(
        session = %key.as_str(),
        acknowledged = found,
        saved = missing.len(),
        "recovered messages acknowledged before a crash: saved to the transcript unanswered"
    );
    let clearer = Arc::clone(journal);
    blocking(move || clearer.clear()).await
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, RuntimeError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| RuntimeError::Internal(format!("journal task failed: {e}")))?
        .map_err(|e| RuntimeError::Internal(format!("message journal: {e}")))
}
