//! Asking a person: the approval a command (or a Codex file change) waits for when exec
//! approvals say "ask" ([`crate::exec_policy::Verdict::Ask`]).
//!
//! The tools only see the [`Approver`] trait. The runtime implements it: it publishes an
//! `approval_requested` event to the session's subscribers, waits for a decision over the API
//! or the `/approve` chat command, or for the approval timeout, and records the outcome. A
//! context without an approver ([`NoApprover`]) has nobody to ask, so `askFallback` decides at
//! once.

use std::fmt;
use std::path::PathBuf;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

/// What a person is asked to approve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalSubject {
    /// A shell command line (our `exec`, or a command Codex wants to run).
    Command,
    /// A set of file changes Codex wants to make outside its sandbox's rules.
    FileChange,
}

impl ApprovalSubject {
    /// The wire name: `command` or `file_change`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Command => "command",
            Self::FileChange => "file_change",
        }
    }
}

/// One request for a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// What is asked.
    pub subject: ApprovalSubject,
    /// The command line (or, for a file change, a one-line description of it).
    pub command: String,
    /// The directory it would run in.
    pub cwd: PathBuf,
    /// Why it needs approval, in one sentence (from the policy's verdict).
    pub reason: String,
    /// The allowlist patterns "allow-always" would add (resolved executable paths); empty
    /// when the command can never be allowlisted (a shell, `xargs` ...), in which case
    /// "allow-always" is taken as "allow-once".
    pub always_patterns: Vec<String>,
    /// The tool call that waits (empty when not known).
    pub call_id: String,
    /// Whether `askFallback` lets it run when nobody answers in time.
    pub fallback_allowed: bool,
}

/// A person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalDecision {
    /// Run this one command, this once.
    AllowOnce,
    /// Run it, and add its executables to the agent's allowlist.
    AllowAlways,
    /// Do not run it.
    Deny,
}

impl ApprovalDecision {
    /// The wire name: `allow-once`, `allow-always` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AllowOnce => "allow-once",
            Self::AllowAlways => "allow-always",
            Self::Deny => "deny",
        }
    }

    /// Parses a wire name (`allow-once`, `allow-always`, `deny`; `_` is taken for `-`).
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "allow-once" | "once" => Some(Self::AllowOnce),
            "allow-always" | "always" => Some(Self::AllowAlways),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }

    /// Whether the command may run.
    pub fn allows(self) -> bool {
        !matches!(self, Self::Deny)
    }
}

impl fmt::Display for ApprovalDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalOutcome {
    /// A person decided.
    Decided {
        /// The approval's id (for the result text).
        id: String,
        /// The decision.
        decision: ApprovalDecision,
        /// Who decided (a sender id, an API caller's name).
        by: String,
    },
    /// Nobody decided before the approval timeout.
    TimedOut {
        /// The approval's id.
        id: String,
        /// How long it waited, in seconds.
        waited_secs: u64,
    },
    /// Nobody can be asked (no approver, or approvals are off for this session).
    Unavailable,
    /// The run was cancelled while it waited.
    Cancelled,
}

/// Asks a person and waits for the answer.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Whether anyone can be asked at all. When false, `askFallback` decides at once and no
    /// request is made.
    fn available(&self) -> bool;

    /// Publishes `request` and waits for a decision, the approval timeout or `cancel`.
    async fn request(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
    ) -> ApprovalOutcome;
}

/// Nobody to ask: every "ask" falls back to `askFallback`.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoApprover;

#[async_trait]
impl Approver for NoApprover {
    fn available(&self) -> bool {
        false
    }

    async fn request(
        &self,
        _request: ApprovalRequest,
        _cancel: &CancellationToken,
    ) -> ApprovalOutcome {
        ApprovalOutcome::Unavailable
    }
}

/// What is asked about, before the policy's verdict adds why and what the fallback does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question<'a> {
    /// What is asked.
    pub subject: ApprovalSubject,
    /// The command line (or a one-line description of file changes).
    pub command: &'a str,
    /// The directory it would run in.
    pub cwd: &'a std::path::Path,
    /// The tool call that waits (empty when not known).
    pub call_id: &'a str,
}

/// How a verdict was settled, for each caller to word in its own terms (the exec tool to the
/// model, the Codex harness to the app-server). One place decides who is asked and what each
/// outcome means; the callers only phrase it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settlement {
    /// The policy lets it run without asking.
    Allowed,
    /// The policy refuses it outright.
    Refused {
        /// Why.
        reason: String,
    },
    /// A person allowed it.
    Approved {
        /// The approval's id.
        id: String,
        /// Once or always.
        decision: ApprovalDecision,
        /// Who.
        by: String,
    },
    /// A person denied it.
    Denied {
        /// The approval's id.
        id: String,
        /// Who.
        by: String,
    },
    /// Nobody decided (nobody can be asked, or nobody answered in time): `askFallback` did.
    FellBack {
        /// Why it needed approval.
        reason: String,
        /// Why nobody decided.
        why: String,
        /// Whether the fallback lets it run.
        allowed: bool,
        /// The fallback's own reason.
        fallback: String,
    },
    /// The run was cancelled while it waited.
    Cancelled,
}

impl Settlement {
    /// Whether the command may run.
    pub fn allows(&self) -> bool {
        match self {
            Self::Allowed | Self::Approved { .. } => true,
            Self::FellBack { allowed, .. } => *allowed,
            Self::Refused { .. } | Self::Denied { .. } | Self::Cancelled => false,
        }
    }
}

/// Settles `verdict`: an "ask" goes to `approver` when anyone can be asked (with the
/// allowlist patterns `always_patterns` computes, only then), else `askFallback` decides.
pub async fn settle(
    verdict: crate::exec_policy::Verdict,
    question: Question<'_>,
    always_patterns: impl FnOnce() -> Vec<String>,
    approver: &dyn Approver,
    cancel: &CancellationToken,
) -> Settlement {
    use crate::exec_policy::Verdict;
    let (reason, fallback) = match verdict {
        Verdict::Allow { .. } => return Settlement::Allowed,
        Verdict::Deny { reason } => return Settlement::Refused { reason },
        Verdict::Ask { reason, fallback } => (reason, fallback),
    };
    let fell_back = |reason: String, why: String| Settlement::FellBack {
        reason,
        why,
        allowed: fallback.allowed,
        fallback: fallback.reason.clone(),
    };
    const NOBODY: &str = "nobody can approve commands in this session";
    if !approver.available() {
        return fell_back(reason, NOBODY.to_owned());
    }
    let request = ApprovalRequest {
        subject: question.subject,
        command: question.command.to_owned(),
        cwd: question.cwd.to_path_buf(),
        reason: reason.clone(),
        always_patterns: always_patterns(),
        call_id: question.call_id.to_owned(),
        fallback_allowed: fallback.allowed,
    };
    match approver.request(request, cancel).await {
        ApprovalOutcome::Decided { id, decision, by } if decision.allows() => {
            Settlement::Approved { id, decision, by }
        }
        ApprovalOutcome::Decided { id, by, .. } => Settlement::Denied { id, by },
        ApprovalOutcome::TimedOut { id, waited_secs } => fell_back(
            reason,
            format!("nobody answered approval {id} within {waited_secs} s"),
        ),
        ApprovalOutcome::Unavailable => fell_back(reason, NOBODY.to_owned()),
        ApprovalOutcome::Cancelled => Settlement::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_round_trip_through_their_wire_names() {
        for d in [
            ApprovalDecision::AllowOnce,
            ApprovalDecision::AllowAlways,
            ApprovalDecision::Deny,
        ] {
            assert_eq!(ApprovalDecision::parse(d.as_str()), Some(d));
        }
        assert_eq!(
            ApprovalDecision::parse("ALLOW_ONCE"),
            Some(ApprovalDecision::AllowOnce)
        );
        assert_eq!(ApprovalDecision::parse("yes"), None);
    }
}
