//! Exactly once, both ways: user messages a Codex thread already holds are not sent to it
//! again after a crash, and the messages Codex was given fenced are stored as their senders
//! wrote them.

use super::*;

impl CodexRun<'_> {
    /// How many of `candidates` (user messages after our last reply, oldest first) the
    /// thread already holds: its last turn, which our transcript never recorded the end of
    /// (agent-service died during it), was given them. Judged by the thread's own record
    /// (`thread/read`); a last turn whose reply our transcript ends with is one we recorded,
    /// and then none of them reached it.
    pub(super) async fn delivered(
        &self,
        thread: &str,
        candidates: &[Message],
    ) -> Result<usize, RuntimeError> {
        let recorded = match self.runner.last_turn(thread).await {
            Ok(Some(recorded)) => recorded,
            Ok(None) => return Ok(0),
            Err(error) => {
                // Unknown: sending twice is better than not at all.
                tracing::warn!(%error, "could not read the Codex thread's last turn");
                return Ok(0);
            }
        };
        let ours = self.s.live.messages().await?;
        let our_reply = ours.iter().rev().find_map(|m| match m {
            Message::Assistant(reply) => Some(
                reply
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        openclaw_transcript::ContentBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect::<String>(),
            ),
            _ => None,
        });
        if !recorded.reply.is_empty() && our_reply.as_deref() == Some(recorded.reply.as_str()) {
            return Ok(0);
        }
        Ok(held_by(&recorded.inputs, candidates, |m| {
            crate::run::prepare::user_turn_text(
                &self.tool_ctx.fence,
                self.channel,
                std::slice::from_ref(m),
            )
        }))
    }
}

/// How many of `candidates`, from the first, the recorded turn `inputs` hold: each in the
/// words the model read (`model_text`), or at least neutralised as any message is.
fn held_by(
    inputs: &[String],
    candidates: &[Message],
    model_text: impl Fn(&Message) -> String,
) -> usize {
    let held = inputs.join("\n\n");
    candidates
        .iter()
        .take_while(|message| {
            let raw = match message {
                Message::User(openclaw_transcript::UserMessage {
                    content: openclaw_transcript::UserContent::Text(text),
                    ..
                }) => text.as_str(),
                _ => return false,
            };
            let neutral = openclaw_tools::untrusted::neutralize(raw);
            !raw.trim().is_empty()
                && (held.contains(neutral.as_ref()) || held.contains(&model_text(message)))
        })
        .count()
}

/// The turn's entries as the transcript keeps them: the user messages among them are the
/// steered ones, in order, and Codex was given their fenced copies; the transcript holds
/// what their senders wrote.
pub(super) fn raw_steers(entries: &mut [Message], steered: &[Inbound]) {
    let users = entries
        .iter_mut()
        .filter_map(|message| match message {
            Message::User(user) => Some(user),
            _ => None,
        })
        .collect::<Vec<_>>();
    if users.len() != steered.len() {
        tracing::warn!(
            entries = users.len(),
            steered = steered.len(),
            "the Codex turn's steered messages do not match what was steered; kept as sent"
        );
        return;
    }
    for (user, message) in users.into_iter().zip(steered) {
        user.content = openclaw_transcript::UserContent::Text(message.text.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Message {
        Message::User(openclaw_transcript::UserMessage {
            content: openclaw_transcript::UserContent::Text(text.to_owned()),
            timestamp: 1,
        })
    }

    #[test]
    fn messages_a_recorded_turn_holds_are_counted_from_the_first() {
        let inputs = ["Earlier.\n\nWhat is in notes.txt?".to_owned()];
        let plain = |m: &Message| format!("{m:?}");
        let candidates = [
            user("Earlier."),
            user("What is in notes.txt?"),
            user("New."),
        ];
        assert_eq!(held_by(&inputs, &candidates, plain), 2);
        assert_eq!(held_by(&inputs, &candidates[2..], plain), 0);
        assert_eq!(held_by(&[], &candidates, plain), 0);
        // Held in the words the model read (fenced), though not verbatim.
        let fenced = |_: &Message| "<<<fenced>>>".to_owned();
        let inputs = ["<<<fenced>>>".to_owned()];
        assert_eq!(held_by(&inputs, &[user("raw words")], fenced), 1);
    }
}
