//! Answers to Codex's approval requests, from the agent's exec policy and, when the policy
//! says "ask", from a person.
//!
//! Codex asks only when its own `approvalPolicy` says so (`untrusted`: before every command,
//! read-only inspection such as `cat` or `ls` included, in 0.169; `on-request`: when the model
//! asks to leave the sandbox; `never`: never). What it asks is decided by
//! `openclaw_tools::ExecPolicy`, the same policy our own `exec` tool applies (its module docs
//! have the table): `deny` declines, `allowlist` accepts what allowlist entries and safe bins
//! cover after unwrapping shells and wrappers and splitting chains, `full` accepts. A verdict
//! of "ask" goes to a person through the run's `Approver` exactly as for our `exec` tool (the
//! same `approval_requested` event, ResolveApproval, `/approve`, allowlist and timeout); when
//! nobody can be asked, or nobody answers in time, `askFallback` decides.
//!
//! Codex runs every command as `/bin/bash -lc '<script>'`. A login shell reads profile files
//! first, so the script is judged in place of the wrapper only when the runtime says those
//! files are out of the agent's reach ([`ApprovalRules::trusted_login_shell`]: the service's
//! home is outside every workspace); otherwise the wrapper is judged as it is, which no
//! allowlist covers.
//!
//! File changes follow the same table with "allowlisted" never true, and are declined
//! outright when they ask for a root outside the workspace (`grantRoot`) or when tool policy
//! denies the agent `apply_patch`: Codex's file changes are its own `apply_patch`, which takes
//! the place of ours (for models whose Codex metadata carries one, such as `gpt-5.5`, Codex
//! drops our dynamic tool of that name), so our policy for `apply_patch` is the one that binds
//! it. Accepts are always one-shot (`accept`): allow-always is kept in our allowlist, never
//! sent to Codex as `acceptForSession` or an execpolicy amendment.

use std::path::Path;

use openclaw_config::Config;
use openclaw_tools::{
    ApprovalSubject, ExecPolicy, Judgement, Question, Settlement, ToolContext, ToolRegistry,
    Verdict, settle,
};

/// The agent's exec policy as far as Codex approvals are concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalRules {
    /// The agent's exec approvals (`tools.exec.*` with its defaults, and the allowlist
    /// entries the runtime adds).
    pub policy: ExecPolicy,
    /// Tool policy gives the agent `apply_patch`: without it, Codex's file
    /// changes (its own `apply_patch`) are declined.
    pub apply_patch: bool,
    /// The startup files of Codex's login shell are out of the agent's reach, so the script
    /// of `/bin/bash -lc '<script>'` is judged instead of the wrapper.
    pub trusted_login_shell: bool,
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
    /// Reads the agent's exec policy (`agents.list[].tools.exec` over `tools.exec` over
    /// the legacy `tools.bash`) from the config; `tools` is the run's registry after tool
    /// policy.
    pub fn from_config(config: &Config, agent_id: &str, tools: &ToolRegistry) -> Self {
        Self {
            policy: ExecPolicy::from_config(config, agent_id),
            apply_patch: tools.get("apply_patch").is_some(),
            trusted_login_shell: false,
        }
    }

    /// Rules that accept every request (`security: full`, `ask: off`).
    pub fn accept_all() -> Self {
        Self {
            policy: ExecPolicy::full(),
            apply_patch: true,
            trusted_login_shell: false,
        }
    }

    /// The command line the policy judges: the script of Codex's login-shell wrapper when
    /// its startup files are trusted, else the line as it is.
    fn judged(&self, command: &str) -> String {
        match openclaw_tools::command::login_shell_script(command) {
            Some(script) if self.trusted_login_shell => script,
            _ => command.to_owned(),
        }
    }

    /// Decides a command approval with nobody to ask.
    pub fn decide_command(&self, command: &str) -> (Decision, String) {
        decision(self.policy.verdict(&self.judged(command)).unattended())
    }

    /// Decides a command approval, asking a person through `ctx.approver` when the policy
    /// says so.
    pub async fn decide_command_asking(
        &self,
        command: &str,
        cwd: &Path,
        ctx: &ToolContext,
        call_id: &str,
    ) -> (Decision, String) {
        let judged = self.judged(command);
        let verdict = self.policy.verdict_in(&judged, cwd);
        let always = self.policy.always_patterns_in(&judged, cwd);
        ask(
            verdict,
            ApprovalSubject::Command,
            command,
            cwd,
            always,
            ctx,
            call_id,
        )
        .await
    }

    /// Decides a file-change approval, asking a person through `ctx.approver` when the policy
    /// says so (after the outright refusals of [`Self::decide_file_change`]).
    pub async fn decide_file_change_asking(
        &self,
        grant_root: Option<&str>,
        description: &str,
        cwd: &Path,
        ctx: &ToolContext,
        call_id: &str,
    ) -> (Decision, String) {
        let outright = self.decide_file_change(grant_root);
        if grant_root.is_some() || !self.apply_patch {
            return outright;
        }
        let subject = if description.is_empty() {
            "file changes in the workspace"
        } else {
            description
        };
        ask(
            self.policy.file_change_verdict(),
            ApprovalSubject::FileChange,
            subject,
            cwd,
            Vec::new(),
            ctx,
            call_id,
        )
        .await
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
        decision(self.policy.file_change_verdict().unattended())
    }
}

/// A verdict turned into an answer for Codex: "ask" goes to a person when someone can be
/// asked, else (and on expiry) `askFallback` decides.
async fn ask(
    verdict: Verdict,
    subject: ApprovalSubject,
    command: &str,
    cwd: &Path,
    always_patterns: Vec<String>,
    ctx: &ToolContext,
    call_id: &str,
) -> (Decision, String) {
    let question = Question {
        subject,
        command,
        cwd,
        call_id,
    };
    let settled = settle(
        verdict.clone(),
        question,
        || always_patterns,
        ctx.approver.as_ref(),
        &ctx.cancel,
    )
    .await;
    let decided = if settled.allows() {
        Decision::Accept
    } else {
        Decision::Decline
    };
    let why = match settled {
        Settlement::Allowed | Settlement::Refused { .. } => return decision(verdict.unattended()),
        Settlement::Approved { id, decision, by } => {
            format!("approved {decision} by {by} (approval {id})")
        }
        Settlement::Denied { id, by } => format!("{by} denied it (approval {id})"),
        Settlement::FellBack {
            reason,
            why,
            fallback,
            ..
        } => format!("{reason}; {why}, so {fallback}"),
        Settlement::Cancelled => "the run was cancelled while it waited for approval".to_owned(),
    };
    (decided, why)
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
    use openclaw_config::raw::{ExecAsk, ExecSecurity};

    use super::*;

    /// `ls` and `git` as fake programs on a `PATH` of their own, allowlisted by path.
    struct Bins(tempfile::TempDir);

    impl Bins {
        fn new() -> Self {
            use std::os::unix::fs::PermissionsExt;
            let dir = tempfile::tempdir().unwrap();
            for name in ["ls", "git", "touch", "bash"] {
                let file = dir.path().join(name);
                std::fs::write(&file, "#!/bin/sh\n").unwrap();
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            Self(dir)
        }

        fn entry(&self, name: &str) -> String {
            let dir = self.0.path().canonicalize().unwrap();
            dir.join(name).display().to_string()
        }

        fn rules(
            &self,
            security: ExecSecurity,
            ask: ExecAsk,
            fallback: ExecSecurity,
        ) -> ApprovalRules {
            let policy = ExecPolicy {
                security,
                ask,
                ask_fallback: fallback,
                ..ExecPolicy::default()
            }
            .with_allowlist([self.entry("ls"), self.entry("git")])
            .with_search_path(format!("{}:/usr/bin:/bin", self.0.path().display()));
            ApprovalRules {
                policy,
                apply_patch: true,
                trusted_login_shell: false,
            }
        }
    }

    #[test]
    fn the_table_in_the_module_docs_holds() {
        use Decision::{Accept as A, Decline as D};
        use ExecAsk::{Always, Off, OnMiss};
        use ExecSecurity::{Allowlist, Deny, Full};
        let b = Bins::new();
        let cases = [
            // (security, ask, fallback, command, expected)
            (Deny, OnMiss, Full, "ls", D),
            (Allowlist, Off, Deny, "ls && git status", A),
            (Allowlist, Off, Full, "rm -rf x", D),
            (Allowlist, OnMiss, Full, "rm -rf x", A),
            (Allowlist, OnMiss, Deny, "rm -rf x", D),
            (Allowlist, OnMiss, Allowlist, "ls -la", A),
            (Allowlist, Always, Deny, "ls", D),
            (Allowlist, Always, Allowlist, "ls", A),
            (Full, OnMiss, Deny, "rm -rf x", A),
            (Full, Off, Deny, "anything", A),
            (Full, Always, Deny, "ls", D),
            (Full, Always, Full, "ls", A),
        ];
        for (security, ask, fallback, command, expected) in cases {
            let (decision, reason) = b.rules(security, ask, fallback).decide_command(command);
            assert_eq!(
                decision, expected,
                "{security:?} {ask:?} {fallback:?} {command:?}: {reason}"
            );
        }
        // Nothing configured: allowlist, on-miss, deny; nobody can be asked, so declined.
        assert_eq!(
            ApprovalRules::default().decide_command("rm -rf x").0,
            Decision::Decline
        );
    }

    #[test]
    fn allowlists_judge_the_effective_command() {
        let b = Bins::new();
        let r = b.rules(ExecSecurity::Allowlist, ExecAsk::Off, ExecSecurity::Deny);
        let accepted = |c: &str| r.decide_command(c).0 == Decision::Accept;
        assert!(accepted("/bin/bash -c 'ls -la'"));
        assert!(accepted("env LANG=C ls"));
        assert!(accepted(&format!("{} log", b.entry("git"))));
        assert!(
            accepted("git log"),
            "a bare name resolves to the allowlisted file"
        );
        assert!(!accepted("/usr/bin/git log"), "another file");
        assert!(!accepted("ls; rm -rf x"));
        assert!(!accepted("ls $(rm -rf x)"));
        assert!(!accepted("ls > out.txt"));
        // A login shell reads profile files first, so Codex's `bash -lc` wrapper is never
        // accepted by an allowlist.
        assert!(!accepted("/bin/bash -lc 'ls -la'"));
        // Regression (openclaw#23276, goclaw#1203): shells and `env` are unwrapped, and a
        // shell never covers anything by itself.
        assert!(!accepted("/bin/zsh -c 'whoami'"));
        assert!(!accepted("env X=1 sh -c 'ls'"));
        assert!(!accepted("bash -c 'ls; rm -rf x'"));
        let shells = ApprovalRules {
            policy: r
                .policy
                .clone()
                .with_allowlist([b.entry("bash"), "/usr/bin/*".to_owned()]),
            ..r.clone()
        };
        assert_eq!(shells.decide_command("bash").0, Decision::Decline);
        assert_eq!(
            shells.decide_command("/bin/zsh -c 'id'").0,
            Decision::Decline
        );
    }

    /// Codex's command approvals and our `exec` tool reach the same verdict, for the same
    /// reason, on every policy and command (one judgement, `openclaw_tools::ExecPolicy`).
    #[test]
    fn codex_approvals_and_the_exec_tool_judge_alike() {
        use ExecAsk::{Always, Off, OnMiss};
        use ExecSecurity::{Allowlist, Deny, Full};
        let b = Bins::new();
        let commands = [
            "ls",
            "git status",
            "sh -c 'ls'",
            "bash -lc 'ls && rm -rf x'",
            "env X=1 sh -c 'ls'",
            "/bin/zsh -c whoami",
            "ls | sh",
            "./sh -c ls",
            "ls $(id)",
            "echo x | head -n 1",
            "",
        ];
        for security in [Deny, Allowlist, Full] {
            for ask in [Off, OnMiss, Always] {
                for fallback in [Deny, Allowlist, Full] {
                    let rules = b.rules(security, ask, fallback);
                    for command in commands {
                        let judgement = rules.policy.judge_command(command);
                        let (decision, reason) = rules.decide_command(command);
                        assert_eq!(
                            decision == Decision::Accept,
                            judgement.allowed,
                            "{security:?} {ask:?} {fallback:?} {command:?}"
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
