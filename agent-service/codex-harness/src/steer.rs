//! Collecting steer messages into one `turn/steer`.
//!
//! Messages that arrive while a turn runs are held for a debounce window
//! (reset by each new message, but never longer than four windows after the
//! first), then go out together as the `input` items of ONE `turn/steer`
//! carrying `expectedTurnId`. The turn holds the batch while a tool call is
//! in flight, because `turn/steer` abandons the model stream at once and
//! R-11 wants steering delivered after the running tool calls finish,
//! never skipping one.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

/// The longest a batch waits, in debounce windows after its first message.
const MAX_WINDOWS: u32 = 4;

/// Pending steer messages.
#[derive(Debug)]
pub(crate) struct SteerQueue {
    window: Duration,
    pending: Vec<String>,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl SteerQueue {
    pub(crate) fn new(window: Duration) -> Self {
        Self {
            window,
            pending: Vec::new(),
            first: None,
            last: None,
        }
    }

    pub(crate) fn push(&mut self, text: String, now: Instant) {
        self.pending.push(text);
        self.first.get_or_insert(now);
        self.last = Some(now);
    }

    /// When the batch is due, if there is one.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        let (first, last) = (self.first?, self.last?);
        Some((last + self.window).min(first + self.window * MAX_WINDOWS))
    }

    /// Takes the batch.
    pub(crate) fn take(&mut self) -> Vec<String> {
        self.first = None;
        self.last = None;
        std::mem::take(&mut self.pending)
    }
}

/// `turn/steer` params for one batch.
pub(crate) fn steer_params(thread_id: &str, turn_id: &str, messages: &[String]) -> Value {
    let input: Vec<Value> = messages
        .iter()
        .map(|text| json!({"type": "text", "text": text, "text_elements": []}))
        .collect();
    json!({"threadId": thread_id, "expectedTurnId": turn_id, "input": input})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn messages_within_the_window_go_out_together() {
        let window = Duration::from_millis(500);
        let mut queue = SteerQueue::new(window);
        assert_eq!(queue.deadline(), None);
        let t0 = Instant::now();
        queue.push("one".to_owned(), t0);
        assert_eq!(queue.deadline(), Some(t0 + window));
        tokio::time::advance(Duration::from_millis(300)).await;
        let t1 = Instant::now();
        queue.push("two".to_owned(), t1);
        // Each message restarts the window.
        assert_eq!(queue.deadline(), Some(t1 + window));
        assert_eq!(queue.take(), ["one", "two"]);
        assert!(queue.take().is_empty());
        assert_eq!(queue.deadline(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_steady_trickle_still_goes_out_after_four_windows() {
        let window = Duration::from_millis(500);
        let mut queue = SteerQueue::new(window);
        let t0 = Instant::now();
        for _ in 0..10 {
            queue.push("again".to_owned(), Instant::now());
            tokio::time::advance(Duration::from_millis(400)).await;
        }
        assert_eq!(queue.deadline(), Some(t0 + window * 4));
    }

    #[test]
    fn one_steer_carries_every_message_and_the_expected_turn() {
        let params = steer_params("t", "u", &["a".to_owned(), "b".to_owned()]);
        assert_eq!(
            params,
            json!({
                "threadId": "t",
                "expectedTurnId": "u",
                "input": [
                    {"type": "text", "text": "a", "text_elements": []},
                    {"type": "text", "text": "b", "text_elements": []},
                ],
            })
        );
    }
}
