//! Answers to Codex's approval requests, from the agent's exec policy.
//!
//! Codex asks only when its own `approvalPolicy` says so (`untrusted`: every
//! command outside its built-in read-only safe list; `on-request`: when the
//! model asks to leave the sandbox; `never`: never). Whatever it asks is
//! decided here, without a human: no approval UI reaches a Codex turn yet,
//! so every run is unattended and "ask" resolves through `askFallback`
//! (default `deny`). With no exec policy configured at all the answer is
//! "decline" (lesson L13: unattended runs need an explicit policy).
//!
//! | `tools.exec.security` | `tools.exec.ask` | command approval |
//! |---|---|---|
//! | unset | any | ask → `askFallback` (default deny) |
//! | `deny` | any | decline |
//! | `allowlist` | `off` | accept when every effective command is in `safeBins`, else decline |
//! | `allowlist` | `on-miss` / unset | accept when allowlisted, else ask → `askFallback` |
//! | `allowlist` | `always` | ask → `askFallback` |
//! | `full` | `off` / `on-miss` / unset | accept |
//! | `full` | `always` | ask → `askFallback` |
//!
//! `askFallback: allowlist` accepts allowlisted commands only, `full`
//! accepts. File changes follow the same table with "allowlisted" never
//! true, and are declined outright when they ask for a root outside the
//! workspace (`grantRoot`) or when tool policy gives the agent no file
//! writing tool. Accepts are always one-shot (`accept`): a shell is never
//! stored as "always allow" (lesson L15 d), so `acceptForSession` and
//! execpolicy amendments are never sent.

use openclaw_config::{
    Config,
    raw::{ExecAsk, ExecConfig, ExecSecurity},
};
use openclaw_tools::ToolRegistry;

use crate::command::effective_programs;

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
    /// Tool policy gives the agent a file-writing tool (`write`, `edit` or
    /// `apply_patch`): without one, Codex file changes are declined.
    pub file_writes: bool,
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
        let raw = config.raw().tools.as_ref();
        // `tools.exec` wins key by key; the legacy `tools.bash` fills gaps.
        let layers: Vec<&ExecConfig> = raw
            .map(|t| {
                [t.exec.as_ref(), t.bash.as_ref()]
                    .into_iter()
                    .flatten()
                    .collect()
            })
            .unwrap_or_default();
        Self {
            security: layers.iter().find_map(|e| e.security),
            ask: layers.iter().find_map(|e| e.ask),
            ask_fallback: layers.iter().find_map(|e| e.ask_fallback),
            safe_bins: layers
                .iter()
                .find_map(|e| e.safe_bins.clone())
                .unwrap_or_default(),
            file_writes: ["write", "edit", "apply_patch"]
                .iter()
                .any(|name| tools.get(name).is_some()),
        }
    }

    /// Rules that accept every request (`security: full`, `ask: off`).
    pub fn accept_all() -> Self {
        Self {
            security: Some(ExecSecurity::Full),
            ask: Some(ExecAsk::Off),
            ask_fallback: None,
            safe_bins: Vec::new(),
            file_writes: true,
        }
    }

    /// Decides a command approval.
    pub fn decide_command(&self, command: &str) -> (Decision, String) {
        let allowlisted = match effective_programs(command) {
            Some(programs) => !programs.is_empty() && programs.iter().all(|p| self.is_safe_bin(p)),
            None => false,
        };
        self.decide(allowlisted, "the command")
    }

    /// Decides a file-change approval.
    pub fn decide_file_change(&self, grant_root: Option<&str>) -> (Decision, String) {
        if let Some(root) = grant_root {
            return (
                Decision::Decline,
                format!("file changes under {root} would leave the workspace"),
            );
        }
        if !self.file_writes {
            return (
                Decision::Decline,
                "tool policy gives this agent no file-writing tool".to_owned(),
            );
        }
        self.decide(false, "the file change")
    }

    fn decide(&self, allowlisted: bool, what: &str) -> (Decision, String) {
        let ask = self.ask.unwrap_or(ExecAsk::OnMiss);
        match (self.security, ask) {
            (None, _) => self.fallback(
                allowlisted,
                "no tools.exec.security is configured and nobody can approve an unattended run",
            ),
            (Some(ExecSecurity::Deny), _) => {
                (Decision::Decline, "tools.exec.security is deny".to_owned())
            }
            (Some(_), ExecAsk::Always) => self.fallback(allowlisted, "tools.exec.ask is always"),
            (Some(ExecSecurity::Full), _) => {
                (Decision::Accept, "tools.exec.security is full".to_owned())
            }
            (Some(ExecSecurity::Allowlist), _) if allowlisted => (
                Decision::Accept,
                format!("{what} is covered by tools.exec.safeBins"),
            ),
            (Some(ExecSecurity::Allowlist), ExecAsk::Off) => (
                Decision::Decline,
                format!("{what} is not covered by tools.exec.safeBins"),
            ),
            (Some(ExecSecurity::Allowlist), _) => self.fallback(
                false,
                &format!("{what} is not covered by tools.exec.safeBins"),
            ),
        }
    }

    /// "Ask", with nobody to ask.
    fn fallback(&self, allowlisted: bool, why: &str) -> (Decision, String) {
        let fallback = self.ask_fallback.unwrap_or(ExecSecurity::Deny);
        let decision = match fallback {
            ExecSecurity::Full => Decision::Accept,
            ExecSecurity::Allowlist if allowlisted => Decision::Accept,
            ExecSecurity::Allowlist | ExecSecurity::Deny => Decision::Decline,
        };
        (
            decision,
            format!("{why}; unattended, so tools.exec.askFallback ({fallback}) decides"),
        )
    }

    /// Exact match only: `ls` allows `ls` as found on PATH, `/bin/ls` allows
    /// that file; neither allows `/tmp/x/ls`.
    fn is_safe_bin(&self, program: &str) -> bool {
        self.safe_bins.iter().any(|bin| bin.trim() == program)
    }
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
            file_writes: true,
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
    }

    #[test]
    fn file_changes_outside_the_workspace_or_without_write_tools_are_declined() {
        let all = ApprovalRules::accept_all();
        assert_eq!(all.decide_file_change(None).0, Decision::Accept);
        assert_eq!(all.decide_file_change(Some("/etc")).0, Decision::Decline);
        let no_writes = ApprovalRules {
            file_writes: false,
            ..ApprovalRules::accept_all()
        };
        assert_eq!(no_writes.decide_file_change(None).0, Decision::Decline);
        assert_eq!(
            ApprovalRules::default().decide_file_change(None).0,
            Decision::Decline
        );
    }
}
