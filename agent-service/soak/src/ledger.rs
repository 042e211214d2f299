//! What each client sent and what it was told: the input of the
//! reconciliation.
//!
//! The acknowledgement rule. A message is **acknowledged** exactly when one
//! of its attempts got, from agent-service:
//! - a `Send` response whose disposition is STARTED, STEERED, FOLLOWUP,
//!   COLLECTED or INTERRUPTED, or
//! - a `Run` stream whose first event is `accepted` carrying one of those.
//!
//! Everything else leaves it **unacknowledged**: any RPC error before that
//! point (UNAVAILABLE during a restart, a cut connection, the client's own
//! deadline), a REJECTED disposition, a `Run` stream that ended before its
//! first event. Only an unacknowledged message may be sent again, with the
//! same id, text and session key; an acknowledged one never is. What happens
//! after the acknowledgement (the run fails, the stream is cut by a restart,
//! the message is saved unanswered at shutdown) does not change it: an
//! acknowledged message must be in its session's transcript exactly once.

use std::time::Duration;

use openclaw_proto::agent::v1::{self as pb, disposition::Outcome};

/// The marker that opens every soak message: `[soak:<id>]`.
pub(crate) const MARKER: &str = "[soak:";

/// The API an attempt used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Api {
    /// Unary `Send`.
    Send,
    /// Streaming `Run`.
    Run,
}

/// What agent-service said about an accepted message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    /// STARTED, STEERED, FOLLOWUP, COLLECTED or INTERRUPTED.
    pub outcome: Outcome,
    /// The run that handles it.
    pub run: u64,
    /// Its arrival number in the session.
    pub seq: u64,
    /// The session id it was accepted into.
    pub session_id: String,
}

/// The result of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptResult {
    /// Acknowledged.
    Acked(Ack),
    /// A REJECTED disposition, with its reason.
    Rejected(String),
    /// No acknowledgement: the gRPC code (or `TIMEOUT`, `NO_ACCEPTED_EVENT`)
    /// and message.
    Failed {
        /// gRPC code name, or the client-side reason.
        code: String,
        /// Detail.
        message: String,
    },
}

impl AttemptResult {
    /// True when the service certainly did not take the message, so sending
    /// it again cannot make a second copy: no connection was made, or the
    /// service refused it with a status of its own before accepting it
    /// (shutting down, overloaded, invalid). A cut connection, a timeout or a
    /// stream that ended before its first event are ambiguous: the service
    /// may have journaled the message and lost only the answer. The API has
    /// no idempotency key yet, so an ambiguous message is not sent again
    /// (it may then be in the transcript once, unacknowledged).
    pub fn safe_to_retry(&self) -> bool {
        let AttemptResult::Failed { code, message } = self else {
            return matches!(self, AttemptResult::Rejected(_));
        };
        let not_connected = [
            "error trying to connect",
            "onnection refused",
            "tcp connect",
        ]
        .iter()
        .any(|m| message.contains(m));
        match code.as_str() {
            "Unavailable" => not_connected || message.contains("shutting down"),
            "ResourceExhausted" | "InvalidArgument" | "FailedPrecondition" | "PermissionDenied"
            | "Unauthenticated" | "NotFound" => true,
            _ => not_connected,
        }
    }
}

/// One try at delivering a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// When it was sent, since the soak began.
    pub at: Duration,
    /// When its answer (or failure) came.
    pub answered_at: Duration,
    /// The API used.
    pub api: Api,
    /// The queue mode asked for.
    pub mode: pb::QueueMode,
    /// The agent-service incarnation running when it was sent and when it
    /// was answered (they differ when a restart happened in between).
    pub incarnations: (u64, u64),
    /// What came back.
    pub result: AttemptResult,
}

/// One message a client owned, with every attempt at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRecord {
    /// Unique id, carried in the text as `[soak:<id>]`.
    pub id: String,
    /// The session key it was sent to (every attempt uses the same).
    pub session_key: String,
    /// Attempts in order; at most the last one is acknowledged.
    pub attempts: Vec<Attempt>,
}

impl MessageRecord {
    /// The acknowledged attempt, if any.
    pub fn acked(&self) -> Option<(&Attempt, &Ack)> {
        self.attempts.iter().find_map(|a| match &a.result {
            AttemptResult::Acked(ack) => Some((a, ack)),
            _ => None,
        })
    }

    /// True when an earlier attempt failed without a definite answer (an RPC
    /// error, not a rejection): it may have reached the session anyway.
    pub fn retried_after_ambiguous_failure(&self) -> bool {
        self.attempts.len() > 1
            && self.attempts[..self.attempts.len() - 1]
                .iter()
                .any(|a| matches!(a.result, AttemptResult::Failed { .. }))
    }
}

/// The text of message `id`: the marker first, so that even the
/// 200-character excerpt kept by the collect overflow summary holds it.
pub(crate) fn message_text(id: &str, filler_words: u64) -> String {
    let filler: Vec<String> = (0..filler_words).map(|i| format!("f{i}")).collect();
    format!("{MARKER}{id}] please note item {id}. {}", filler.join(" "))
        .trim_end()
        .to_owned()
}

/// Every soak id in a user message text (a collect summary holds several).
pub(crate) fn ids_in(text: &str) -> Vec<&str> {
    let mut ids = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(MARKER) {
        rest = &rest[at + MARKER.len()..];
        if let Some(end) = rest.find(']') {
            ids.push(&rest[..end]);
            rest = &rest[end..];
        }
    }
    ids
}

/// The gRPC name of an outcome, for reports.
pub(crate) fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Unspecified => "unspecified",
        Outcome::Started => "started",
        Outcome::Steered => "steered",
        Outcome::Followup => "followup",
        Outcome::Collected => "collected",
        Outcome::Interrupted => "interrupted",
        Outcome::Rejected => "rejected",
        Outcome::Command => "command",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_certain_non_deliveries_are_retried() {
        let failed = |code: &str, message: &str| AttemptResult::Failed {
            code: code.to_owned(),
            message: message.to_owned(),
        };
        assert!(
            failed(
                "Unavailable",
                "error trying to connect: tcp connect error: Connection refused"
            )
            .safe_to_retry()
        );
        assert!(
            failed(
                "Unavailable",
                "agent-service is shutting down; send the message again once it is back"
            )
            .safe_to_retry()
        );
        assert!(failed("ResourceExhausted", "server at capacity").safe_to_retry());
        assert!(AttemptResult::Rejected("cap".to_owned()).safe_to_retry());
        // The service may have journaled these and lost only the answer.
        assert!(!failed("Unknown", "transport error").safe_to_retry());
        assert!(!failed("Cancelled", "h2 protocol error").safe_to_retry());
        assert!(!failed("Unavailable", "connection reset").safe_to_retry());
        assert!(!failed("TIMEOUT", "no first event").safe_to_retry());
        assert!(
            !failed(
                "NO_ACCEPTED_EVENT",
                "the stream ended before its first event"
            )
            .safe_to_retry()
        );
    }

    #[test]
    fn ids_are_found_in_messages_and_in_collect_summaries() {
        let one = message_text("c0-m1", 3);
        assert_eq!(one, "[soak:c0-m1] please note item c0-m1. f0 f1 f2");
        assert_eq!(ids_in(&one), ["c0-m1"]);
        let summary = format!(
            "[2 earlier messages, condensed because the queue was full:]\n- {one}\n- {}",
            message_text("c1-m9", 0)
        );
        assert_eq!(ids_in(&summary), ["c0-m1", "c1-m9"]);
        assert!(ids_in("no marker [soak:unterminated").is_empty());
    }
}
