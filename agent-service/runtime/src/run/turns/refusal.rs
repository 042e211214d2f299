//! A model request the provider refused for what it holds (HTTP 400 or 422), judged by the
//! rule of R-21: the newest content (everything after the last assistant reply: the run's user
//! messages, steered messages, the last batch's tool results) is the cause only when the same
//! request with that content withheld is accepted. Then it is marked rejected in the
//! transcript, left out of every later request, and the run's error says so. Otherwise nothing
//! is marked, since dropping a message for a refusal of our own request's shape would lose it
//! for good, and the error says what was checked.

use openclaw_transcript::{EntryId, UserContent, UserMessage};

use super::model::STREAM_BUFFER;
use super::*;
use crate::context::Rejection;

/// What the model gets in place of each piece of newest content in the check request.
const WITHHELD: &str = "[withheld]";

/// What the check request showed.
enum Verdict {
    /// Accepted without the newest content: that content is what the provider refuses.
    Accepted,
    /// Refused without it too, with the provider's message.
    Refused(String),
    /// The check itself failed otherwise (a timeout, a server error, cancellation).
    Unknown(String),
}

impl RunParts<'_> {
    /// Judges a refusal (`provider_says`) of the request made over `history`; returns the run's
    /// error. When the newest content is the cause it is marked rejected in the transcript
    /// and taken out of `history` (a tool result becomes a note, see [`Rejection`]).
    pub(super) async fn judge_refusal(
        &self,
        system: &SystemPrompt,
        history: &mut Vec<Arc<Message>>,
        provider_says: String,
    ) -> Result<RuntimeError, RuntimeError> {
        let snapshot = self.s.live.snapshot().await?;
        let newest: Vec<(EntryId, Arc<Message>)> = snapshot
            .entries
            .iter()
            .rev()
            .take_while(|(_, m)| !matches!(**m, Message::Assistant(_)))
            .cloned()
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let n = newest.len();
        // The run's history must end with exactly what the transcript holds as newest.
        let same = n > 0
            && history.len() >= n
            && history[history.len() - n..]
                .iter()
                .zip(&newest)
                .all(|(h, (_, m))| h == m);
        if !same {
            return Ok(RuntimeError::FailedPrecondition(format!(
                "{provider_says} (the request has no new message to hold responsible, so nothing is dropped)"
            )));
        }
        let mut check = history.clone();
        let start = check.len() - n;
        for message in &mut check[start..] {
            withhold(Arc::make_mut(message));
        }
        match self.check_request(self.request(system, &check)).await {
            Verdict::Accepted => {}
            Verdict::Refused(again) => {
                return Ok(RuntimeError::FailedPrecondition(format!(
                    "{provider_says}; the same request was refused even without the newest message ({again}), so nothing is dropped: the provider refuses the request itself or the conversation before it"
                )));
            }
            Verdict::Unknown(why) => {
                return Ok(RuntimeError::FailedPrecondition(format!(
                    "{provider_says} (whether the newest message is the cause could not be checked: {why}; nothing is dropped)"
                )));
            }
        }
        let rejection = Rejection {
            entry_ids: newest.iter().map(|(id, _)| id.clone()).collect(),
            reason: self.services.redactor().redact(&provider_says).into_owned(),
        };
        self.s.live.append(vec![rejection.to_entry()], true).await?;
        let mut tail: Vec<(EntryId, Arc<Message>)> = newest;
        rejection.apply(&mut tail);
        history.truncate(start);
        history.extend(tail.into_iter().map(|(_, m)| m));
        let users = check[start..]
            .iter()
            .filter(|m| matches!(***m, Message::User(_)))
            .count();
        let results: Vec<String> = history[start..]
            .iter()
            .filter_map(|m| match &**m {
                Message::ToolResult(r) => Some(format!("{} ({})", r.tool_call_id, r.tool_name)),
                _ => None,
            })
            .collect();
        tracing::warn!(
            users,
            results = results.len(),
            "the model provider refused the newest content; marked rejected"
        );
        let kept =
            "it stays in the transcript marked rejected and will not be sent again to the model";
        Ok(if users > 0 {
            let what = match users {
                1 => "the message was".to_owned(),
                n => format!("the {n} newest messages were"),
            };
            RuntimeError::invalid(
                "message",
                format!("{what} rejected by the model provider ({provider_says}); {kept}"),
            )
        } else {
            RuntimeError::FailedPrecondition(format!(
                "the result of tool call {} was rejected by the model provider ({provider_says}); {kept}: later requests carry a note in its place",
                results.join(", ")
            ))
        })
    }

    /// Sends `request` and reports whether the provider accepts it. The call is cut off at
    /// its first streamed event (a provider that starts answering has accepted the request),
    /// so the check costs little output and none of it reaches the run or the transcript.
    async fn check_request(&self, request: ModelRequest) -> Verdict {
        let (tx, mut rx) = mpsc::channel::<StreamEvent>(STREAM_BUFFER);
        let cancel = self.cancel.child_token();
        let policy = RetryPolicy {
            deadline: self.deadline.saturating_duration_since(Instant::now()),
            ..RetryPolicy::default()
        };
        let call = complete_with_retry(
            self.run.model.provider.as_ref(),
            request,
            tx,
            cancel.clone(),
            &policy,
        );
        let first = async {
            let answered = rx.recv().await.is_some();
            if answered {
                cancel.cancel();
            }
            while rx.recv().await.is_some() {}
            answered
        };
        let (result, answered) = tokio::join!(call, first);
        match result {
            Ok(_) => Verdict::Accepted,
            Err(_) if answered => Verdict::Accepted,
            Err(ProviderError::Client {
                status: 400 | 422,
                message,
                ..
            }) => Verdict::Refused(message),
            Err(error) => Verdict::Unknown(error.to_string()),
        }
    }
}

/// Replaces what a message says with [`WITHHELD`], keeping its role and pairing.
fn withhold(message: &mut Message) {
    match message {
        Message::User(user) => {
            *user = UserMessage {
                content: UserContent::Text(WITHHELD.to_owned()),
                timestamp: user.timestamp,
            };
        }
        Message::ToolResult(result) => {
            result.content = vec![openclaw_transcript::ContentBlock::text(WITHHELD)];
        }
        Message::Assistant(_) | Message::Other(_) => {}
    }
}
