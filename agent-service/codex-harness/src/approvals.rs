//! Answers to Codex's approval requests, from the agent's exec policy.
//!
//! Codex asks only when its own `approvalPolicy` says so (`untrusted`: before
//! every command, read-only inspection such as `cat` or `ls` included, in
//! 0.169; `on-request`: when the model asks to leave the sandbox; `never`:
//! never). Whatever it asks is
//! decided here, without a human: no approval UI reaches a Codex turn yet,
//! so every run is unattended and "ask" resolves through `askFallback`
//! (default `deny`). With no exec policy configured at all the answer is
//! "decline" (lesson L13: unattended runs need an explicit policy).
//!
//! The decision is `openclaw_tools::ExecPolicy`'s, the same one our own
//! `exec` tool applies (its module docs have the table): an unset
//! `tools.exec.security` asks, `deny` declines, `allowlist` accepts what
//! `safeBins` covers after unwrapping shells and wrappers and splitting
//! chains, `full` accepts, and every "ask" resolves through `askFallback`.
//!
//! `askFallback: allowlist` accepts allowlisted commands only, `full`
//! accepts. File changes follow the same table with "allowlisted" never
//! true, and are declined outright when they ask for a root outside the
//! workspace (`grantRoot`) or when tool policy denies the agent
//! `apply_patch`: Codex's file changes are its own `apply_patch`, which
//! takes the place of ours (for models whose Codex metadata carries one,
//! such as `gpt-5.5`, Codex drops our dynamic tool of that name), so our
//! policy for `apply_patch` is the one that binds it. Accepts are always one-shot (`accept`): a shell is never
//! stored as "always allow" (lesson L15 d), so `acceptForSession` and
//! execpolicy amendments are never sent.

use openclaw_config::{
    Config,
    raw::{ExecAsk, ExecSecurity},
};
use openclaw_tools::{ExecPolicy, Judgement, ToolRegistry};

/// The agent's exec policy as far as Codex approvals are concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalRules {
    /// `tools.exec.security` (or the legacy `tools.bash.security`).
    pub security: Option<ExecSecurity>,
    /// `tools.exec.ask`.
    pub ask: Option<ExecAsk>,
    /// `tools.exec.askFallback`: what "ask" means when nobody can be asked.
    pub ask_fallback: Option<ExecSecurity>,
    /// `tools.exec.safeBins`: programs allowlist mode accepts.
    pub safe_bins: Vec<String>,
    /// Tool policy gives the agent `apply_patch`: without it, Codex's file
    /// changes (its own `apply_patch`) are declined.
    pub apply_patch: bool,
}

/// Accept or decline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision {
    /// `"accept"`, for this one request.
    Accept,
    /// `"decline"`: Codex tells the model the user rejected it.
    Decline,
}

impl Decision {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accept => "accept",
            Self::Decline => "decline",
        }
    }
}

/// What was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalKind {
    /// `item/commandExecution/requestApproval`.
    Command,
    /// `item/fileChange/requestApproval`.
    FileChange,
}

/// One approval request and its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRecord {
    /// What was asked.
    pub kind: ApprovalKind,
    /// The Codex item (the command or patch call id).
    pub item_id: String,
    /// The command line, or the file-change reason.
    pub subject: String,
    /// The answer.
    pub decision: Decision,
    /// Why, in one sentence.
    pub reason: String,
}

impl ApprovalRules {
    /// Reads `tools.exec` (falling back to the legacy `tools.bash`) from the
    /// config; `tools` is the run's registry after tool policy.
    pub fn from_config(config: &Config, tools: &ToolRegistry) -> Self {
        let ExecPolicy {
            security,
            ask,
            ask_fallback,
            safe_bins,
        } = ExecPolicy::from_config(config);
        Self {
            security,
            ask,
            ask_fallback,
            safe_bins,
            apply_patch: tools.get("apply_patch").is_some(),
        }
    }

    /// Rules that accept every request (`security: full`, `ask: off`).
    pub fn accept_all() -> Self {
        Self {
            security: Some(ExecSecurity::Full),
            ask: Some(ExecAsk::Off),
            ask_fallback: None,
            safe_bins: Vec::new(),
            apply_patch: true,
        }
    }

    /// Decides a command approval.
    pub fn decide_command(&self, command: &str) -> (Decision, String) {
        decision(self.exec_policy().judge_command(command))
    }

    /// Decides a file-change approval.
    pub fn decide_file_change(&self, grant_root: Option<&str>) -> (Decision, String) {
        if let Some(root) = grant_root {
            return (
                Decision::Decline,
                format!("file changes under {root} would leave the workspace"),
            );
        }
        if !self.apply_patch {
            return (
                Decision::Decline,
                "tool policy denies this agent apply_patch, which Codex's file changes stand in for"
                    .to_owned(),
            );
        }
        decision(self.exec_policy().judge(false, "the file change"))
    }

    /// The shared exec policy these rules stand for.
    fn exec_policy(&self) -> ExecPolicy {
        ExecPolicy {
            security: self.security,
            ask: self.ask,
            ask_fallback: self.ask_fallback,
            safe_bins: self.safe_bins.clone(),
        }
    }
}

fn decision(judgement: Judgement) -> (Decision, String) {
    let decision = if judgement.allowed {
        Decision::Accept
    } else {
        Decision::Decline
    };
    (decision, judgement.reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(
        security: Option<ExecSecurity>,
        ask: Option<ExecAsk>,
        fallback: Option<ExecSecurity>,
    ) -> ApprovalRules {
        ApprovalRules {
            security,
            ask,
            ask_fallback: fallback,
            safe_bins: vec!["ls".to_owned(), "/usr/bin/git".to_owned()],
            apply_patch: true,
        }
    }

    #[test]
    fn the_table_in_the_module_docs_holds() {
        use Decision::{Accept as A, Decline as D};
        use ExecAsk::{Always, Off, OnMiss};
        use ExecSecurity::{Allowlist, Deny, Full};
        let cases = [
            // (security, ask, fallback, command, expected)
            (None, None, None, "ls", D),
            (None, None, Some(Full), "touch x", A),
            (None, None, Some(Allowlist), "ls -la", A),
            (None, None, Some(Allowlist), "touch x", D),
            (Some(Deny), None, Some(Full), "ls", D),
            (
                Some(Allowlist),
                Some(Off),
                None,
                "ls && /usr/bin/git status",
                A,
            ),
            (Some(Allowlist), Some(Off), Some(Full), "rm -rf x", D),
            (Some(Allowlist), Some(OnMiss), Some(Full), "rm -rf x", A),
            (Some(Allowlist), None, None, "rm -rf x", D),
            (Some(Allowlist), Some(Always), None, "ls", D),
            (Some(Allowlist), Some(Always), Some(Allowlist), "ls", A),
            (Some(Full), None, None, "rm -rf x", A),
            (Some(Full), Some(Off), None, "anything", A),
            (Some(Full), Some(Always), None, "ls", D),
            (Some(Full), Some(Always), Some(Full), "ls", A),
        ];
        for (security, ask, fallback, command, expected) in cases {
            let (decision, reason) = rules(security, ask, fallback).decide_command(command);
            assert_eq!(
                decision, expected,
                "{security:?} {ask:?} {fallback:?} {command:?}: {reason}"
            );
        }
    }

    #[test]
    fn allowlists_judge_the_effective_command() {
        let r = rules(Some(ExecSecurity::Allowlist), Some(ExecAsk::Off), None);
        let accepted = |c: &str| r.decide_command(c).0 == Decision::Accept;
        assert!(accepted("/bin/bash -lc 'ls -la'"));
        assert!(accepted("env LANG=C ls"));
        assert!(accepted("/usr/bin/git log"));
        assert!(!accepted("git log"), "a path entry allows that path only");
        assert!(
            !accepted("/tmp/x/ls"),
            "a bare entry allows the PATH lookup only"
        );
        assert!(!accepted("ls; rm -rf x"));
        assert!(!accepted("ls $(rm -rf x)"));
        assert!(!accepted("ls > out.txt"));
        // Regression (openclaw#23276, goclaw#1203): shells and `env` are unwrapped, and a
        // shell never covers anything by itself.
        assert!(!accepted("/bin/zsh -lc 'whoami'"));
        assert!(!accepted("env X=1 sh -c 'ls'"));
        assert!(!accepted("bash -lc 'ls; rm -rf x'"));
        let shells = ApprovalRules {
            safe_bins: vec!["bash".to_owned(), "/bin/zsh".to_owned()],
            ..r.clone()
        };
        assert_eq!(shells.decide_command("bash").0, Decision::Decline);
        assert_eq!(
            shells.decide_command("/bin/zsh -lc 'id'").0,
            Decision::Decline
        );
    }

    /// Codex's command approvals and our `exec` tool reach the same verdict, for the same
    /// reason, on every policy and command (one judgement, `openclaw_tools::ExecPolicy`).
    #[test]
    fn codex_approvals_and_the_exec_tool_judge_alike() {
        use ExecAsk::{Always, Off, OnMiss};
        use ExecSecurity::{Allowlist, Deny, Full};
        let securities = [None, Some(Deny), Some(Allowlist), Some(Full)];
        let asks = [None, Some(Off), Some(OnMiss), Some(Always)];
        let fallbacks = [None, Some(Deny), Some(Allowlist), Some(Full)];
        let commands = [
            "ls",
            "/usr/bin/git status",
            "sh -c 'ls'",
            "bash -lc 'ls && rm -rf x'",
            "env X=1 sh -c 'ls'",
            "/bin/zsh -lc whoami",
            "ls | sh",
            "./sh -c ls",
            "ls $(id)",
            "",
        ];
        for security in securities {
            for ask in asks {
                for ask_fallback in fallbacks {
                    let rules = rules(security, ask, ask_fallback);
                    let policy = ExecPolicy {
                        security,
                        ask,
                        ask_fallback,
                        safe_bins: rules.safe_bins.clone(),
                    };
                    for command in commands {
                        let judgement = policy.judge_command(command);
                        let (decision, reason) = rules.decide_command(command);
                        assert_eq!(
                            decision == Decision::Accept,
                            judgement.allowed,
                            "{security:?} {ask:?} {ask_fallback:?} {command:?}"
                        );
                        assert_eq!(reason, judgement.reason);
                    }
                }
            }
        }
    }

    #[test]
    fn file_changes_outside_the_workspace_or_without_apply_patch_are_declined() {
        let all = ApprovalRules::accept_all();
        assert_eq!(all.decide_file_change(None).0, Decision::Accept);
        assert_eq!(all.decide_file_change(Some("/etc")).0, Decision::Decline);
        let no_writes = ApprovalRules {
            apply_patch: false,
            ..ApprovalRules::accept_all()
        };
        assert_eq!(no_writes.decide_file_change(None).0, Decision::Decline);
        assert_eq!(
            ApprovalRules::default().decide_file_change(None).0,
            Decision::Decline
        );
    }
}
