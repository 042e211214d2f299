//! The per-session message queue (R-11, lesson L11): what becomes of a
//! message that arrives while the session may be busy.
//!
//! Every accepted message gets exactly one [`Disposition`] at once: started a
//! run, steered into the active run, queued as a follow-up, collected into a
//! coalesced turn, started after interrupting the active run, or rejected.
//! This is a plain state machine behind a mutex held only for these short
//! updates; the runs themselves happen elsewhere.

use std::collections::VecDeque;

use tokio_util::sync::CancellationToken;

pub use crate::acceptance::{Disposition, QueueMode};
use crate::origin::Origin;

/// The channel a turn arrived on, as the runtime sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnChannel {
    /// Channel id ("" for none).
    pub channel: String,
    /// "direct", "group", "channel" or "".
    pub chat_type: String,
    /// Capabilities.
    pub capabilities: Vec<String>,
    /// Native approval UI.
    pub native_approvals: bool,
    /// Replies only through the message tool.
    pub message_tool_only: bool,
    /// Group chat context for this turn.
    pub group_context: String,
    /// Sender id as the channel reported it, checked against the channel's allowlist
    /// ("" for none).
    pub sender_id: String,
    /// Sender's display name ("" for none).
    pub sender_name: String,
    /// The group or channel's id on its platform ("" for none).
    pub group_id: String,
}

/// What to do when a collect batch is full (`messages.queue.drop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DropPolicy {
    /// Fold the overflow into one summary message (nothing is lost).
    #[default]
    Summarize,
    /// Reject the oldest collected message to make room.
    Old,
    /// Reject the new message.
    New,
}

/// Per-run choices carried by the message that starts a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// One-run model override, provider/model.
    pub model: Option<String>,
    /// Most model calls (0 for the default).
    pub max_steps: u32,
    /// A heartbeat turn (see `crate::heartbeat`): it runs alone, messages
    /// that arrive meanwhile wait for their own run instead of steering in.
    pub heartbeat: bool,
    /// A lightweight cron run: the scheduled prompt alone, without the workspace context
    /// (no workspace files in the prompt; on the Codex runtime, none of our instructions).
    pub lightweight: bool,
}

/// One inbound user message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    /// 1-based arrival number within the session (for ordering and tests).
    pub seq: u64,
    /// The text.
    pub text: String,
    /// Where it came from.
    pub channel: TurnChannel,
    /// Used when this message starts a run.
    pub options: RunOptions,
    /// Arrival numbers of messages folded into this one (the `summarize`
    /// overflow policy); empty for an ordinary message.
    pub folded: Vec<u64>,
    /// Who sent it: a user, or the runtime (a system event).
    pub origin: Origin,
}

/// A run ready to start, with its messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunStart {
    /// Run number.
    pub run: u64,
    /// Messages in arrival order.
    pub messages: Vec<Inbound>,
    /// Cancels the run (interrupt).
    pub cancel: CancellationToken,
}

impl RunStart {
    /// The message the run starts with (its options and channel apply to the run).
    pub fn first(&self) -> Option<&Inbound> {
        self.messages.first()
    }

    /// True when this is a heartbeat run.
    pub fn is_heartbeat(&self) -> bool {
        self.messages.iter().any(|m| m.options.heartbeat)
    }

    /// The run id of the started event: `heartbeat-<n>` for heartbeats, `run-<n>` otherwise.
    pub fn run_id(&self) -> String {
        let kind = if self.is_heartbeat() {
            "heartbeat"
        } else {
            "run"
        };
        format!("{kind}-{}", self.run)
    }

    /// Arrival numbers of the user messages the run starts with (a heartbeat's prompt and
    /// other system events are none).
    pub fn user_seqs(&self) -> Vec<u64> {
        self.messages
            .iter()
            .filter(|m| m.origin.is_user() && !m.options.heartbeat)
            .map(|m| m.seq)
            .collect()
    }

    /// The system events the run starts with, as (arrival number, origin).
    pub fn system_events(&self) -> Vec<(u64, Origin)> {
        self.messages
            .iter()
            .filter(|m| !m.origin.is_user())
            .map(|m| (m.seq, m.origin.clone()))
            .collect()
    }
}

#[derive(Debug)]
struct Active {
    run: u64,
    cancel: CancellationToken,
    steer: VecDeque<Inbound>,
    /// A heartbeat run takes no steering: user messages are not answered
    /// inside a turn whose reply may be held back.
    heartbeat: bool,
}

#[derive(Debug)]
struct Batch {
    run: u64,
    messages: Vec<Inbound>,
    /// Summary of messages folded away by the `summarize` policy.
    folded: Vec<Inbound>,
    last_arrival_ms: u64,
}

/// What [`QueueState::run_ended`] decided.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RunEnded {
    /// The run to start now, if the session has one waiting.
    pub next: Option<RunStart>,
    /// Steered messages the ended run never took: the run that takes them
    /// and how many there are.
    pub handoff: Option<(u64, usize)>,
}

/// The queue state of one session.
#[derive(Debug, Default)]
pub struct QueueState {
    active: Option<Active>,
    pending: VecDeque<RunStart>,
    batch: Option<Batch>,
    next_run: u64,
    next_seq: u64,
    /// Messages that got a Rejected disposition (kept for accounting).
    rejected: Vec<Inbound>,
    /// Collected messages displaced since the caller last looked.
    displaced: Vec<(Inbound, String)>,
    /// The run an interrupt queued to start next.
    interrupt_run: Option<u64>,
}

/// Limits of the collect mode (`messages.queue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectLimits {
    /// Quiet window before a batch runs.
    pub debounce_ms: u64,
    /// Most messages in one batch.
    pub cap: usize,
    /// What happens past the cap.
    pub drop: DropPolicy,
}

impl Default for CollectLimits {
    fn default() -> Self {
        Self {
            debounce_ms: 500,
            cap: 20,
            drop: DropPolicy::Summarize,
        }
    }
}

/// A session's run, message and command numbers, kept by the manager while the session is released,
/// so that numbers never repeat within a process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// The last run number handed out.
    pub run: u64,
    /// The last message seq handed out.
    pub seq: u64,
    /// The last background command number handed out (`proc-<n>`).
    pub process: u64,
}

impl QueueState {
    /// A queue that goes on numbering after `counters`.
    pub fn continuing(counters: Counters) -> Self {
        Self {
            next_run: counters.run,
            next_seq: counters.seq,
            ..Self::default()
        }
    }

    /// The numbers handed out so far.
    pub fn counters(&self) -> Counters {
        Counters {
            run: self.next_run,
            seq: self.next_seq,
            process: 0,
        }
    }

    fn new_run(&mut self) -> u64 {
        self.next_run += 1;
        self.next_run
    }

    /// Numbers a new message.
    pub fn next_seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// True while a run is active.
    pub fn is_running(&self) -> bool {
        self.active.is_some()
    }

    /// The number of the active run, if one is active.
    pub fn active_run(&self) -> Option<u64> {
        self.active.as_ref().map(|a| a.run)
    }

    /// Cancels the active run, if any (shutdown). Queued runs stay queued.
    pub fn cancel_active(&mut self) {
        if let Some(active) = &self.active {
            active.cancel.cancel();
        }
    }

    /// Messages accepted but not yet taken by a run (steered, pending,
    /// collected).
    pub fn queued(&self) -> usize {
        self.active.as_ref().map_or(0, |a| a.steer.len())
            + self.pending.iter().map(|s| s.messages.len()).sum::<usize>()
            + self
                .batch
                .as_ref()
                .map_or(0, |b| b.messages.len() + b.folded.len())
    }

    /// True when nothing is active, pending or collecting.
    pub fn is_idle(&self) -> bool {
        self.active.is_none() && self.pending.is_empty() && self.batch.is_none()
    }

    /// Accepts a message. Returns its disposition and, when it can start at
    /// once, the run to start (the caller starts it and later calls
    /// [`QueueState::run_ended`]).
    pub fn submit(
        &mut self,
        message: Inbound,
        mode: QueueMode,
        now_ms: u64,
        limits: CollectLimits,
    ) -> (Disposition, Option<RunStart>) {
        match mode {
            QueueMode::Collect => (self.collect(message, now_ms, limits), None),
            QueueMode::Steer => match self.active.as_mut().filter(|a| !a.heartbeat) {
                Some(active) => {
                    active.steer.push_back(message);
                    (Disposition::Steered { run: active.run }, None)
                }
                None => self.start_or_queue(message),
            },
            QueueMode::Followup => self.start_or_queue(message),
            QueueMode::Interrupt => match self.active.as_ref() {
                Some(active) => {
                    let interrupted = active.run;
                    active.cancel.cancel();
                    let run = self.new_run();
                    // The newest message runs next, ahead of other queued runs.
                    self.interrupt_run = Some(run);
                    self.pending.push_front(RunStart {
                        run,
                        messages: vec![message],
                        cancel: CancellationToken::new(),
                    });
                    (Disposition::Interrupted { run, interrupted }, None)
                }
                None => self.start_or_queue(message),
            },
        }
    }

    fn start_or_queue(&mut self, message: Inbound) -> (Disposition, Option<RunStart>) {
        let run = self.new_run();
        let start = RunStart {
            run,
            messages: vec![message],
            cancel: CancellationToken::new(),
        };
        if self.active.is_none() && self.pending.is_empty() {
            self.activate(&start);
            (Disposition::Started { run }, Some(start))
        } else {
            let ahead = self.pending.len() + usize::from(self.active.is_some());
            self.pending.push_back(start);
            (Disposition::Followup { run, ahead }, None)
        }
    }

    fn collect(&mut self, message: Inbound, now_ms: u64, limits: CollectLimits) -> Disposition {
        if self.batch.is_none() {
            let run = self.new_run();
            self.batch = Some(Batch {
                run,
                messages: Vec::new(),
                folded: Vec::new(),
                last_arrival_ms: now_ms,
            });
        }
        let Some(batch) = self.batch.as_mut() else {
            return Disposition::Rejected {
                reason: "internal: no collect batch".to_owned(),
            };
        };
        batch.last_arrival_ms = now_ms;
        let run = batch.run;
        if batch.messages.len() < limits.cap.max(1) {
            batch.messages.push(message);
            return Disposition::Collected { run };
        }
        match limits.drop {
            DropPolicy::Summarize => {
                // Keep the newest messages whole; fold the oldest into the summary.
                let oldest = batch.messages.remove(0);
                batch.folded.push(oldest);
                batch.messages.push(message);
                Disposition::Collected { run }
            }
            DropPolicy::Old => {
                let oldest = batch.messages.remove(0);
                let reason = format!(
                    "displaced by a newer message: the collect queue holds {} messages (messages.queue.cap) and drop is \"old\"",
                    limits.cap
                );
                self.displaced.push((oldest.clone(), reason));
                self.rejected.push(oldest);
                if let Some(batch) = self.batch.as_mut() {
                    batch.messages.push(message);
                }
                Disposition::Collected { run }
            }
            DropPolicy::New => {
                let reason = format!(
                    "the collect queue already holds {} messages (messages.queue.cap) and drop is \"new\"",
                    limits.cap
                );
                self.rejected.push(message);
                Disposition::Rejected { reason }
            }
        }
    }

    /// Moves a collect batch that has been quiet for the debounce window
    /// into the run queue. Returns a run to start at once, if idle.
    pub fn flush_collect(&mut self, now_ms: u64, limits: CollectLimits) -> Option<RunStart> {
        let quiet = self
            .batch
            .as_ref()
            .is_some_and(|b| now_ms.saturating_sub(b.last_arrival_ms) >= limits.debounce_ms);
        if !quiet {
            return None;
        }
        let batch = self.batch.take()?;
        let mut messages = Vec::with_capacity(batch.messages.len() + 1);
        if !batch.folded.is_empty() {
            messages.push(summary_of(&batch.folded));
        }
        messages.extend(batch.messages);
        let start = RunStart {
            run: batch.run,
            messages,
            cancel: CancellationToken::new(),
        };
        if self.active.is_none() && self.pending.is_empty() {
            self.activate(&start);
            Some(start)
        } else {
            self.pending.push_back(start);
            None
        }
    }

    /// When a collect batch should be checked next (its quiet deadline).
    pub fn collect_deadline_ms(&self, limits: CollectLimits) -> Option<u64> {
        self.batch
            .as_ref()
            .map(|b| b.last_arrival_ms + limits.debounce_ms)
    }

    fn activate(&mut self, start: &RunStart) {
        self.active = Some(Active {
            run: start.run,
            cancel: start.cancel.clone(),
            steer: VecDeque::new(),
            heartbeat: start.messages.iter().any(|m| m.options.heartbeat),
        });
    }

    /// Steer messages waiting for run `run` (taken in arrival order). The
    /// caller commits them to the transcript; if that fails it gives them
    /// back with [`QueueState::requeue_steer`].
    pub fn drain_steer(&mut self, run: u64) -> Vec<Inbound> {
        match self.active.as_mut() {
            Some(active) if active.run == run => active.steer.drain(..).collect(),
            _ => Vec::new(),
        }
    }

    /// Puts drained but uncommitted steer messages back at the front.
    pub fn requeue_steer(&mut self, run: u64, messages: Vec<Inbound>) {
        if let Some(active) = self.active.as_mut().filter(|a| a.run == run) {
            for m in messages.into_iter().rev() {
                active.steer.push_front(m);
            }
        } else {
            let next = self.new_run();
            self.queue_by_arrival(RunStart {
                run: next,
                messages,
                cancel: CancellationToken::new(),
            });
        }
    }

    /// Queues a run of steer messages where their arrival puts it: after
    /// the pending runs whose messages came earlier (a follow-up sent
    /// before a steer is answered before it).
    fn queue_by_arrival(&mut self, start: RunStart) {
        let first = start.messages.first().map_or(u64::MAX, |m| m.seq);
        let at = self
            .pending
            .iter()
            .position(|p| p.messages.first().is_some_and(|m| m.seq > first))
            .unwrap_or(self.pending.len());
        self.pending.insert(at, start);
    }

    /// Called when run `run` has nothing left to do. Atomically either hands
    /// back steer messages that arrived meanwhile (the run makes another
    /// model call) or retires the run. This is what keeps a late steer from
    /// being dropped.
    pub fn finish_or_continue(&mut self, run: u64) -> Option<Vec<Inbound>> {
        let steer = self.drain_steer(run);
        if steer.is_empty() {
            if self.active.as_ref().is_some_and(|a| a.run == run) {
                self.active = None;
            }
            None
        } else {
            Some(steer)
        }
    }

    /// Called when run `run` stopped (finished, failed or aborted). Steer
    /// messages it never took become a new run (nothing accepted is lost).
    pub fn run_ended(&mut self, run: u64) -> RunEnded {
        let mut ended = RunEnded::default();
        if let Some(active) = self.active.take_if(|a| a.run == run)
            && !active.steer.is_empty()
        {
            let count = active.steer.len();
            let interrupt = self.interrupt_run;
            match self.pending.front_mut() {
                // An interrupt is waiting: it takes the steered messages too,
                // ahead of its own (they arrived first), and still runs next.
                Some(front) if Some(front.run) == interrupt => {
                    let mut messages: Vec<Inbound> = active.steer.into_iter().collect();
                    messages.append(&mut front.messages);
                    front.messages = messages;
                    ended.handoff = Some((front.run, count));
                }
                _ => {
                    let next = self.new_run();
                    ended.handoff = Some((next, count));
                    self.queue_by_arrival(RunStart {
                        run: next,
                        messages: active.steer.into_iter().collect(),
                        cancel: CancellationToken::new(),
                    });
                }
            }
        }
        if self.active.is_none()
            && let Some(start) = self.pending.pop_front()
        {
            if self.interrupt_run == Some(start.run) {
                self.interrupt_run = None;
            }
            self.activate(&start);
            ended.next = Some(start);
        }
        ended
    }

    /// Empties the queue at shutdown: every message not yet taken by a run
    /// (steered, pending, collected), grouped by the run that would have
    /// taken it, in arrival order. Nothing is active afterwards.
    pub fn drain_all(&mut self) -> Vec<(u64, Vec<Inbound>)> {
        let mut out = Vec::new();
        if let Some(active) = self.active.take()
            && !active.steer.is_empty()
        {
            out.push((active.run, active.steer.into_iter().collect()));
        }
        out.extend(self.pending.drain(..).map(|s| (s.run, s.messages)));
        if let Some(batch) = self.batch.take() {
            let mut messages = batch.folded;
            messages.extend(batch.messages);
            out.push((batch.run, messages));
        }
        self.interrupt_run = None;
        out
    }

    /// Collected messages displaced by the `old` overflow policy since the
    /// last call, with the reason.
    pub fn take_displaced(&mut self) -> Vec<(Inbound, String)> {
        std::mem::take(&mut self.displaced)
    }

    /// Messages that were rejected, for accounting.
    pub fn rejected(&self) -> &[Inbound] {
        &self.rejected
    }
}

/// The single message that stands for collect messages folded away by the
/// `summarize` overflow policy: their texts are kept, shortened.
fn summary_of(folded: &[Inbound]) -> Inbound {
    let mut text = format!(
        "[{} earlier messages, condensed because the queue was full:]",
        folded.len()
    );
    for m in folded {
        // The summary is the runtime's text: a folded message's metadata line is not kept.
        let line: String = openclaw_tools::untrusted::ChatMeta::text_of(&m.text)
            .chars()
            .take(200)
            .collect();
        text.push_str("\n- ");
        text.push_str(&line);
    }
    Inbound {
        seq: folded.first().map_or(0, |m| m.seq),
        text,
        channel: folded
            .first()
            .map(|m| m.channel.clone())
            .unwrap_or_default(),
        options: RunOptions::default(),
        folded: folded
            .iter()
            .flat_map(|m| std::iter::once(m.seq).chain(m.folded.iter().copied()))
            .skip(1)
            .collect(),
        origin: Origin::User,
    }
}

#[cfg(test)]
mod tests;
