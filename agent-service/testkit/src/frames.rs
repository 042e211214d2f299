//! SSE frames as each API writes them, and the steps a response body takes once delays and
//! faults are applied.

use std::collections::VecDeque;

use bytes::Bytes;
use serde_json::Value;

use crate::reply::Fault;

/// What a frame is, for placing faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Opens the reply or a block.
    Open,
    /// A content delta (text, thinking, argument piece).
    Delta,
    /// Closes a block.
    Close,
    /// The first frame of the end of the reply (stop reason or completion).
    Terminal,
}

/// One SSE frame.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    /// The `event:` line, which Responses and Anthropic send and Chat Completions does not.
    pub(crate) event: Option<String>,
    /// The `data:` payload.
    pub(crate) data: String,
    pub(crate) role: Role,
}

impl Frame {
    pub(crate) fn named(event: &str, data: &Value, role: Role) -> Self {
        Self {
            event: Some(event.to_owned()),
            data: data.to_string(),
            role,
        }
    }

    pub(crate) fn data(data: &Value, role: Role) -> Self {
        Self {
            event: None,
            data: data.to_string(),
            role,
        }
    }

    pub(crate) fn raw(data: &str, role: Role) -> Self {
        Self {
            event: None,
            data: data.to_owned(),
            role,
        }
    }

    fn bytes(&self) -> Bytes {
        let mut text = String::with_capacity(self.data.len() + 32);
        if let Some(event) = &self.event {
            text.push_str("event: ");
            text.push_str(event);
            text.push('\n');
        }
        text.push_str("data: ");
        text.push_str(&self.data);
        text.push_str("\n\n");
        Bytes::from(text)
    }

    /// The same frame with its JSON cut in half.
    fn malformed(&self) -> Bytes {
        let cut = self
            .data
            .char_indices()
            .nth(self.data.chars().count() / 2)
            .map_or(0, |(at, _)| at);
        Self {
            event: self.event.clone(),
            data: self.data[..cut].to_owned(),
            role: self.role,
        }
        .bytes()
    }
}

/// One thing the response body does.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    Write(Bytes),
    Cut,
    Stall,
}

/// The body's steps: every frame written in order, with the fault (if any) placed after the
/// given number of deltas, or before the terminal frame.
pub(crate) fn steps(frames: &[Frame], fault: Option<Fault>) -> VecDeque<Step> {
    let mut steps = VecDeque::with_capacity(frames.len() + 1);
    let mut deltas = 0;
    let mut pending = fault;
    for frame in frames {
        if let Some(fault) = pending {
            let after = match fault {
                Fault::Malformed(n) | Fault::Cut(n) | Fault::Stall(n) => n,
            };
            let due =
                (frame.role == Role::Delta && deltas == after) || frame.role == Role::Terminal;
            if due {
                pending = None;
                match fault {
                    // The rest still follows: a client must fail on the broken frame itself.
                    Fault::Malformed(_) => steps.push_back(Step::Write(frame.malformed())),
                    Fault::Cut(_) => {
                        steps.push_back(Step::Cut);
                        return steps;
                    }
                    Fault::Stall(_) => {
                        steps.push_back(Step::Stall);
                        return steps;
                    }
                }
            }
        }
        if frame.role == Role::Delta {
            deltas += 1;
        }
        steps.push_back(Step::Write(frame.bytes()));
    }
    steps
}

/// The whole body at once (instant mode).
pub(crate) fn concatenated(frames: &[Frame]) -> Bytes {
    let mut body = Vec::new();
    for frame in frames {
        body.extend_from_slice(&frame.bytes());
    }
    Bytes::from(body)
}
