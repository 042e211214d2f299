//! Start-up recovery of acknowledged messages that never reached a
//! transcript (see [`super::journal`]).

use std::{path::PathBuf, sync::Arc};

use openclaw_transcript::{EntryBody, Message, SessionKey, UserContent, UserMessage};

use super::{
    LiveSession,
    journal::{self, Accepted, Journal},
    stored_size::check_stored_size,
};
use crate::error::RuntimeError;

/// What recovering one journal did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Recovered {
    /// Messages written to the transcript.
    pub saved: usize,
    /// Messages that could not be written, set aside in this file.
    pub quarantined: Option<(usize, PathBuf)>,
}

/// Writes the journal's leftovers into the transcript as unanswered user
/// messages (skipping any the transcript already has), fsyncs, and empties
/// the journal.
///
/// A leftover that can never be written (too large for a transcript line once
/// stored, as a journal from before that limit was checked can hold) is not
/// retried forever, which would fail every later call on the session: it is
/// moved to the journal's quarantine file with the reason, and reported.
pub(crate) async fn recover_journal(
    clock: &dyn openclaw_transcript::Clock,
    live: &LiveSession,
    journal: &Arc<Journal>,
    key: &SessionKey,
) -> Result<Recovered, RuntimeError> {
    let reader = Arc::clone(journal);
    let leftovers = blocking(move || reader.leftovers()).await?;
    if leftovers.is_empty() {
        return Ok(Recovered::default());
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
    let (writable, unwritable) = split_unwritable(journal::still_missing(leftovers, &users));
    let mut recovered = Recovered {
        saved: writable.len(),
        quarantined: None,
    };
    if !unwritable.is_empty() {
        let count = unwritable.len();
        let quarantiner = Arc::clone(journal);
        let path = blocking(move || quarantiner.quarantine(&unwritable)).await?;
        tracing::warn!(
            session = %key.as_str(),
            messages = count,
            file = %path.display(),
            "acknowledged messages that cannot be written to the transcript were set aside"
        );
        recovered.quarantined = Some((count, path));
    }
    if !writable.is_empty() {
        let now = openclaw_transcript::unix_millis(clock.now());
        let bodies = writable
            .into_iter()
            .map(|a| EntryBody::Message {
                message: Message::User(UserMessage {
                    content: UserContent::Text(a.text),
                    timestamp: now,
                }),
            })
            .collect();
        live.append(bodies, true).await?;
    }
    tracing::warn!(
        session = %key.as_str(),
        acknowledged = found,
        saved = recovered.saved,
        "recovered messages acknowledged before a crash: saved to the transcript unanswered"
    );
    let clearer = Arc::clone(journal);
    blocking(move || clearer.clear()).await?;
    Ok(recovered)
}

/// Separates the leftovers a transcript line can hold from those it never can (with why).
fn split_unwritable(leftovers: Vec<Accepted>) -> (Vec<Accepted>, Vec<(Accepted, String)>) {
    let mut writable = Vec::new();
    let mut unwritable = Vec::new();
    for accepted in leftovers {
        match check_stored_size(&accepted.text) {
            Ok(()) => writable.push(accepted),
            Err(error) => unwritable.push((accepted, error.to_string())),
        }
    }
    (writable, unwritable)
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<T, RuntimeError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| RuntimeError::Internal(format!("journal task failed: {e}")))?
        .map_err(|e| RuntimeError::Internal(format!("message journal: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_messages_no_line_can_hold_are_set_aside() {
        let at = |seq: u64, text: String| Accepted {
            seq,
            text,
            at: 1,
            origin: Default::default(),
        };
        let poison = "\u{1}".repeat(3 * 1024 * 1024);
        let (writable, unwritable) = split_unwritable(vec![
            at(1, "hello".to_owned()),
            at(2, poison.clone()),
            at(3, "a".repeat(3 * 1024 * 1024)),
        ]);
        assert_eq!(writable.iter().map(|a| a.seq).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(unwritable.len(), 1);
        assert_eq!(unwritable[0].0.seq, 2);
        assert!(
            unwritable[0].1.contains("transcript line"),
            "{}",
            unwritable[0].1
        );
    }
}
