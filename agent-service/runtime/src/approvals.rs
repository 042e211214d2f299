//! Exec approvals with a person in the loop: the requests tool calls wait on, and their
//! decisions.
//!
//! When exec approvals say "ask" ([`openclaw_tools::Verdict::Ask`]) and somebody can answer
//! (a client follows the session: a Run stream, a WatchSession, a channel bridge), the tool
//! call asks through the run's approver (`crate::run::RunApprover`): the request is kept here as pending, an
//! `approval_requested` event goes to the session's subscribers, and the call waits for the
//! first of
//!
//! - a decision ([`Approvals::resolve`]: the ResolveApproval RPC, or `/approve` from an owner
//!   in chat): allow-once, allow-always (its executables are added to the agent's allowlist in
//!   the approvals file first) or deny;
//! - the approval timeout (`tools.exec.approvalTimeoutSec`, default [`DEFAULT_TIMEOUT`]):
//!   `askFallback` decides, and the tool result says so;
//! - the run's cancellation.
//!
//! Then an `approval_resolved` event follows. Each approval is decided exactly once: whoever
//! takes it out of the pending map (a decision, the timeout, the cancellation) is the only one
//! that decides it; a later decision is FAILED_PRECONDITION naming the state it ended in.
//! Pending approvals live in memory only: a restart ends the run that waited (its tool call is
//! recorded as interrupted, see `crate::context::INTERRUPTED`), so a command is never run
//! unapproved, and the approval's id is then unknown (NOT_FOUND).

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use openclaw_tools::{ApprovalDecision, ApprovalOutcome, ApprovalSubject, CancellationToken};
use tokio::sync::oneshot;

use crate::error::RuntimeError;

/// How long an approval waits for a decision unless `tools.exec.approvalTimeoutSec` says
/// otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Decided approvals kept for [`Approvals::list`] and the inspector (newest first).
const DECIDED_KEPT: usize = 256;

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalState {
    /// Waiting for a decision.
    Pending,
    /// Allowed this once.
    AllowedOnce,
    /// Allowed, and its executables added to the allowlist.
    AllowedAlways,
    /// Denied by a person.
    Denied,
    /// Nobody decided in time; `askFallback` decided.
    Expired,
    /// Its run was cancelled first.
    Cancelled,
}

impl ApprovalState {
    /// A word for messages: `pending`, `allowed once` ...
    pub fn describe(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::AllowedOnce => "allowed once",
            Self::AllowedAlways => "allowed always",
            Self::Denied => "denied",
            Self::Expired => "expired",
            Self::Cancelled => "cancelled",
        }
    }

    fn of(decision: ApprovalDecision) -> Self {
        match decision {
            ApprovalDecision::AllowOnce => Self::AllowedOnce,
            ApprovalDecision::AllowAlways => Self::AllowedAlways,
            ApprovalDecision::Deny => Self::Denied,
        }
    }
}

/// One approval: what was asked, by whom, and where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// Its id (what `/approve` and ResolveApproval name).
    pub id: String,
    /// The agent.
    pub agent_id: String,
    /// The session whose tool call waits.
    pub session_key: String,
    /// The session's run number.
    pub run: u64,
    /// The tool call that waits.
    pub call_id: String,
    /// What is asked.
    pub subject: ApprovalSubject,
    /// The command line (or a description of the file changes).
    pub command: String,
    /// The directory it would run in.
    pub cwd: PathBuf,
    /// Why it needs approval.
    pub reason: String,
    /// What allow-always would add to the allowlist.
    pub always_patterns: Vec<String>,
    /// Where it stands.
    pub state: ApprovalState,
    /// When it was asked (ms since the epoch).
    pub requested_at_ms: i64,
    /// When it expires unanswered.
    pub expires_at_ms: i64,
    /// When it was decided or ended.
    pub decided_at_ms: Option<i64>,
    /// Who decided; empty while pending or when it expired.
    pub decided_by: String,
    /// For [`ApprovalState::Expired`]: whether `askFallback` let it run.
    pub fallback_allowed: bool,
}

/// A decision on its way to the waiting tool call.
struct Answer {
    decision: ApprovalDecision,
    by: String,
}

struct Pending {
    approval: Approval,
    answer: oneshot::Sender<Answer>,
}

#[derive(Default)]
struct Book {
    pending: BTreeMap<String, Pending>,
    decided: VecDeque<Approval>,
}

impl Book {
    fn remember(&mut self, approval: Approval) {
        self.decided.push_front(approval);
        self.decided.truncate(DECIDED_KEPT);
    }
}

/// Adds the patterns of an allow-always decision to an agent's allowlist, durably, before the
/// decision is answered.
pub(crate) type AllowAlways =
    Arc<dyn Fn(&str, &[String], &str) -> Result<(), RuntimeError> + Send + Sync>;

/// Every approval of this service: pending ones with their waiting tool calls, and the recently
/// decided ones.
pub struct Approvals {
    book: Mutex<Book>,
    /// Persists allow-always decisions; `None` makes allow-always act as allow-once.
    allow_always: Option<AllowAlways>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals").finish_non_exhaustive()
    }
}

impl Approvals {
    /// An empty book; `allow_always` persists allow-always decisions.
    pub(crate) fn new(allow_always: Option<AllowAlways>) -> Self {
        Self {
            book: Mutex::new(Book::default()),
            allow_always,
        }
    }

    fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Decides pending approval `id` of `agent_id` (`None`: any agent) once: NOT_FOUND for an
    /// unknown id, FAILED_PRECONDITION for one that already ended. An allow-always decision
    /// adds the command's executables to the agent's allowlist before it is answered; when
    /// that fails the approval stays pending and the error is returned.
    pub async fn resolve(
        &self,
        agent_id: Option<&str>,
        id: &str,
        decision: ApprovalDecision,
        by: &str,
        now_ms: i64,
    ) -> Result<Approval, RuntimeError> {
        let id = id.trim();
        if id.is_empty() {
            return Err(RuntimeError::invalid("id", "name the approval to decide"));
        }
        if by.trim().is_empty() {
            return Err(RuntimeError::invalid(
                "decided_by",
                "say who decides (it is recorded with the decision)",
            ));
        }
        let (agent, patterns) = {
            let book = self.book();
            match book.pending.get(id) {
                Some(p) if agent_id.is_none_or(|a| a == p.approval.agent_id) => (
                    p.approval.agent_id.clone(),
                    p.approval.always_patterns.clone(),
                ),
                _ => return Err(self.not_pending(&book, agent_id, id)),
            }
        };
        // Persisted before the decision is taken, so an allow-always that is answered is on
        // disk; the file is written off the async threads.
        if decision == ApprovalDecision::AllowAlways
            && !patterns.is_empty()
            && let Some(persist) = &self.allow_always
        {
            let persist = Arc::clone(persist);
            let by_owned = by.to_owned();
            tokio::task::spawn_blocking(move || persist(&agent, &patterns, &by_owned))
                .await
                .map_err(|e| RuntimeError::Internal(format!("allowlist task failed: {e}")))??;
        }
        let mut book = self.book();
        let Some(pending) = book.pending.remove(id) else {
            // It ended while the allowlist was written.
            return Err(self.not_pending(&book, agent_id, id));
        };
        let mut approval = pending.approval;
        approval.state = ApprovalState::of(decision);
        approval.decided_at_ms = Some(now_ms);
        by.trim().clone_into(&mut approval.decided_by);
        // The waiting call may have been dropped (its run ended); the decision stands.
        let _ = pending.answer.send(Answer {
            decision,
            by: approval.decided_by.clone(),
        });
        book.remember(approval.clone());
        tracing::info!(approval = %approval.id, agent = %approval.agent_id, session = %approval.session_key, decision = decision.as_str(), by = %approval.decided_by, "exec approval decided");
        Ok(approval)
    }

    fn not_pending(&self, book: &Book, agent_id: Option<&str>, id: &str) -> RuntimeError {
        match book
            .decided
            .iter()
            .find(|a| a.id == id && agent_id.is_none_or(|x| x == a.agent_id))
        {
            Some(done) => RuntimeError::FailedPrecondition(format!(
                "approval {id} is already {}{}",
                done.state.describe(),
                if done.decided_by.is_empty() {
                    String::new()
                } else {
                    format!(" (by {})", done.decided_by)
                }
            )),
            None => RuntimeError::NotFound(format!(
                "no pending approval {id}: it does not exist, or belonged to a run that ended \
                 when agent-service restarted (such a command is never run)"
            )),
        }
    }

    /// Pending approvals of `agent_id` (and of one session when `session_key` is given), oldest
    /// first, then with `include_decided` the decided ones, newest first.
    pub fn list(
        &self,
        agent_id: &str,
        session_key: Option<&str>,
        include_decided: bool,
    ) -> Vec<Approval> {
        let book = self.book();
        let wanted = |a: &Approval| {
            a.agent_id == agent_id && session_key.is_none_or(|key| a.session_key == key)
        };
        let mut pending: Vec<Approval> = book
            .pending
            .values()
            .map(|p| &p.approval)
            .filter(|a| wanted(a))
            .cloned()
            .collect();
        pending.sort_by(|a, b| {
            (a.requested_at_ms, a.id.as_str()).cmp(&(b.requested_at_ms, b.id.as_str()))
        });
        if include_decided {
            pending.extend(book.decided.iter().filter(|a| wanted(a)).cloned());
        }
        pending
    }

    /// Files `approval` as pending, publishes it (`publish(approval, false)`), and waits for its
    /// end, which is published too (`publish(approval, true)`); see the module docs.
    pub(crate) async fn ask(
        &self,
        mut approval: Approval,
        publish: &(dyn Fn(Approval, bool) + Send + Sync),
        timeout: Duration,
        cancel: &CancellationToken,
        fallback_allowed: bool,
        now: impl Fn() -> i64,
    ) -> ApprovalOutcome {
        let (tx, mut rx) = oneshot::channel();
        {
            let mut book = self.book();
            while book.pending.contains_key(&approval.id) {
                approval.id = new_id();
            }
            book.pending.insert(
                approval.id.clone(),
                Pending {
                    approval: approval.clone(),
                    answer: tx,
                },
            );
        }
        tracing::info!(approval = %approval.id, agent = %approval.agent_id, session = %approval.session_key, command = %approval.command, "exec approval requested");
        publish(approval.clone(), false);
        let id = approval.id.clone();
        // `Some` when the channel answered (a decision, or its sender dropped by
        // `cancel_all`), `None` when the timeout or the cancellation came first.
        let answered = tokio::select! {
            answer = &mut rx => Some(answer.ok()),
            () = tokio::time::sleep(timeout) => None,
            () = cancel.cancelled() => None,
        };
        let answer = match answered {
            Some(answer) => answer,
            None => {
                let taken = self.book().pending.remove(&id);
                let Some(pending) = taken else {
                    // A decision took it out just now: it is in the channel.
                    return match rx.await {
                        Ok(answer) => self.decided_now(&id, answer, publish),
                        Err(_) => ApprovalOutcome::Cancelled,
                    };
                };
                // Nobody decided first: the timeout or the cancellation ends it.
                let mut approval = pending.approval;
                approval.decided_at_ms = Some(now());
                let outcome = if cancel.is_cancelled() {
                    approval.state = ApprovalState::Cancelled;
                    ApprovalOutcome::Cancelled
                } else {
                    approval.state = ApprovalState::Expired;
                    approval.fallback_allowed = fallback_allowed;
                    ApprovalOutcome::TimedOut {
                        id: id.clone(),
                        waited_secs: timeout.as_secs(),
                    }
                };
                self.book().remember(approval.clone());
                publish(approval, true);
                return outcome;
            }
        };
        match answer {
            Some(answer) => self.decided_now(&id, answer, publish),
            // The service is stopping: `cancel_all` ended it.
            None => ApprovalOutcome::Cancelled,
        }
    }

    /// The outcome of a decision, published with the approval as decided.
    fn decided_now(
        &self,
        id: &str,
        answer: Answer,
        publish: &(dyn Fn(Approval, bool) + Send + Sync),
    ) -> ApprovalOutcome {
        let resolved = self.book().decided.iter().find(|a| a.id == id).cloned();
        if let Some(approval) = resolved {
            publish(approval, true);
        }
        decided(id, answer)
    }

    /// Ends every pending approval as cancelled (shutdown): their runs are ending.
    pub(crate) fn cancel_all(&self, now_ms: i64) {
        let mut book = self.book();
        let pending = std::mem::take(&mut book.pending);
        for (_, p) in pending {
            let mut approval = p.approval;
            approval.state = ApprovalState::Cancelled;
            approval.decided_at_ms = Some(now_ms);
            book.remember(approval);
        }
    }
}

fn decided(id: &str, answer: Answer) -> ApprovalOutcome {
    ApprovalOutcome::Decided {
        id: id.to_owned(),
        decision: answer.decision,
        by: answer.by,
    }
}

/// A short id that is easy to type in `/approve <id> ...`: eight lowercase hex digits.
pub(crate) fn new_id() -> String {
    let mut id = uuid::Uuid::new_v4().simple().to_string();
    id.truncate(8);
    id
}
