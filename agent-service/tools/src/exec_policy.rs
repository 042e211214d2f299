//! Exec approvals: whether a command may run, from `tools.exec.security`, `ask`, `askFallback`
//! and `safeBins` (legacy `tools.bash.*` fills gaps key by key). One policy for our `exec`
//! tool and for the Codex harness's command approvals (lesson L13: the host's allowlist binds
//! Codex-native exec too).
//!
//! This service is unattended: nobody can answer an approval prompt, so every "ask" resolves
//! through `askFallback` (default `deny`) at once, on every host (lesson L15 d). With no
//! `tools.exec.security` configured at all, every command "asks" (lesson L13: unattended
//! runs need an explicit policy).
//!
//! | `tools.exec.security` | `tools.exec.ask` | a command |
//! |---|---|---|
//! | unset | any | ask → `askFallback` (default deny) |
//! | `deny` | any | refused |
//! | `allowlist` | `off` | runs when allowlisted, else refused |
//! | `allowlist` | `on-miss` / unset | runs when allowlisted, else ask → `askFallback` |
//! | `allowlist` | `always` | ask → `askFallback` |
//! | `full` | `off` / `on-miss` / unset | runs |
//! | `full` | `always` | ask → `askFallback` |
//!
//! `askFallback: allowlist` runs allowlisted commands only, `full` runs anything.
//!
//! "Allowlisted" judges the *effective* command ([`crate::command`], on a real bash parse):
//! every program the line would start must be covered, after unwrapping shells and wrappers
//! and splitting chains, and a line with anything the analyzer does not understand exactly
//! (comments, newlines, substitutions, expansions, compound commands ...) is never covered. A
//! program is covered when a `safeBins` entry names it exactly (a bare name allows the PATH
//! lookup of that name, a path allows that file only) or when it is one of the harmless shell
//! builtins `cd`, `pwd`, `true`, `false`, `:`. Never covered, whatever `safeBins` says:
//! shells, interpreters that evaluate inline code, and programs that run other command lines
//! (`sudo`, `eval`, `watch` ...), so a shell can never become an "always allow" entry (lesson
//! L15 d); and a program started with an environment variable other than a few harmless
//! locale and display ones (`PATH=. ls` or `GIT_SSH_COMMAND=... git` change what runs).
//! Unlike OpenClaw, `safeBins` has no default list and no per-binary argument profiles: it is
//! an allowlist of executables, and an entry trusts every argument.

use openclaw_config::Config;
use openclaw_config::raw::{ExecAsk, ExecConfig, ExecSecurity};

use crate::command::{Invocation, base_name, effective_commands};

/// Shell builtins that change nothing and run nothing; covered without an entry.
const SAFE_BUILTINS: [&str; 5] = [":", "true", "false", "pwd", "cd"];

/// Programs never covered by `safeBins`: shells, interpreters that evaluate inline code, and
/// programs that run other command lines. Version suffixes (`python3.12`) are ignored.
const NEVER_COVERED: [&str; 74] = [
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "yash",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "python",
    "pypy",
    "node",
    "nodejs",
    "deno",
    "bun",
    "perl",
    "ruby",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "osascript",
    "pwsh",
    "powershell",
    "rscript",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "eval",
    "source",
    ".",
    "exec",
    "sudo",
    "doas",
    "su",
    "pkexec",
    "runuser",
    "watch",
    "flock",
    "chroot",
    "unshare",
    "nsenter",
    "script",
    "ionice",
    "chrt",
    "taskset",
    "strace",
    "ltrace",
    "gdb",
    "unbuffer",
    "parallel",
    "systemd-run",
    "at",
    "batch",
    "crontab",
    "expect",
    // bash builtins that run code, define aliases, or change which file a name runs.
    "trap",
    "builtin",
    "enable",
    "alias",
    "hash",
    "let",
    "mapfile",
    "readarray",
    "compgen",
    "complete",
    "fc",
    "bind",
    "coproc",
];

/// Environment variables a command may set and stay covered.
const SAFE_ENV: [&str; 11] = [
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "RUST_BACKTRACE",
];

/// The exec approval settings of one agent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecPolicy {
    /// `tools.exec.security` (or the legacy `tools.bash.security`).
    pub security: Option<ExecSecurity>,
    /// `tools.exec.ask`.
    pub ask: Option<ExecAsk>,
    /// `tools.exec.askFallback`: what "ask" means when nobody can be asked.
    pub ask_fallback: Option<ExecSecurity>,
    /// `tools.exec.safeBins`: executables allowlist mode runs.
    pub safe_bins: Vec<String>,
}

/// Whether something may run, and why, in one sentence for the model and the logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// It may run.
    pub allowed: bool,
    /// Why.
    pub reason: String,
}

impl ExecPolicy {
    /// Reads `tools.exec`, falling back key by key to the legacy `tools.bash`.
    pub fn from_config(config: &Config) -> Self {
        let raw = config.raw().tools.as_ref();
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
        }
    }

    /// Runs everything without asking (`security: full`, `ask: off`).
    pub fn full() -> Self {
        Self {
            security: Some(ExecSecurity::Full),
            ask: Some(ExecAsk::Off),
            ask_fallback: None,
            safe_bins: Vec::new(),
        }
    }

    /// Allowlist mode without asking: `safeBins` and nothing else.
    pub fn allowlist<I, S>(safe_bins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            security: Some(ExecSecurity::Allowlist),
            ask: Some(ExecAsk::Off),
            ask_fallback: None,
            safe_bins: safe_bins.into_iter().map(Into::into).collect(),
        }
    }

    /// Whether `command` may run, collapsing "ask" into `askFallback` (nobody asked).
    pub fn judge_command(&self, command: &str) -> Judgement {
        self.verdict(command).unattended()
    }

    /// Whether `command` runs, is refused, or needs a person's approval.
    pub fn verdict(&self, command: &str) -> Verdict {
        match self.uncovered(command) {
            None => self.decide(true, "the command"),
            Some(miss) => {
                // Say what missed the allowlist only where the allowlist was consulted.
                let consulted = [self.security, self.ask_fallback]
                    .contains(&Some(ExecSecurity::Allowlist))
                    || matches!(self.security, None | Some(ExecSecurity::Allowlist));
                let mut verdict = self.decide(false, "the command");
                if consulted {
                    verdict.add_detail(&miss);
                }
                verdict
            }
        }
    }

    /// Whether a Codex file change is made, refused, or needs a person's approval (file
    /// changes are never allowlisted).
    pub fn file_change_verdict(&self) -> Verdict {
        self.decide(false, "the file change")
    }

    /// The decision table for something that is (`covered`) or is not allowlisted, with
    /// "ask" resolved through `askFallback`; `what` names it in the reason.
    pub fn judge(&self, covered: bool, what: &str) -> Judgement {
        self.decide(covered, what).unattended()
    }

    /// The allowlist patterns "allow-always" would add for `command`: every program it runs,
    /// as written. Empty when any of them can never be allowlisted.
    pub fn always_patterns(&self, command: &str) -> Vec<String> {
        let Ok(invocations) = effective_commands(command) else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for invocation in &invocations {
            let program = invocation.program.as_str();
            if never_covered(program) || invocation.env.iter().any(|n| !safe_env(n)) {
                return Vec::new();
            }
            if SAFE_BUILTINS.contains(&program) || out.iter().any(|p| p == program) {
                continue;
            }
            out.push(program.to_owned());
        }
        out
    }

    /// The decision table (see the module docs).
    fn decide(&self, covered: bool, what: &str) -> Verdict {
        let ask = self.ask.unwrap_or(ExecAsk::OnMiss);
        match (self.security, ask) {
            (None, _) => self.ask(
                covered,
                "no tools.exec.security is configured, so commands need approval".to_owned(),
            ),
            (Some(ExecSecurity::Deny), _) => Verdict::Deny {
                reason: "tools.exec.security is deny".to_owned(),
            },
            (Some(_), ExecAsk::Always) => self.ask(covered, "tools.exec.ask is always".to_owned()),
            (Some(ExecSecurity::Full), _) => Verdict::Allow {
                reason: "tools.exec.security is full".to_owned(),
            },
            (Some(ExecSecurity::Allowlist), _) if covered => Verdict::Allow {
                reason: format!("{what} is covered by tools.exec.safeBins"),
            },
            (Some(ExecSecurity::Allowlist), ExecAsk::Off) => Verdict::Deny {
                reason: format!("{what} is not covered by tools.exec.safeBins"),
            },
            (Some(ExecSecurity::Allowlist), _) => self.ask(
                false,
                format!("{what} is not covered by tools.exec.safeBins"),
            ),
        }
    }

    /// `None` when every program `command` runs is covered, else what is not, as a phrase.
    pub fn uncovered(&self, command: &str) -> Option<String> {
        let invocations = match effective_commands(command) {
            Ok(all) if all.is_empty() => return Some("it runs no program".to_owned()),
            Ok(all) => all,
            Err(opaque) => return Some(format!("it {}", opaque.describe())),
        };
        let mut misses: Vec<String> = Vec::new();
        for invocation in &invocations {
            if let Some(miss) = self.miss(invocation)
                && !misses.contains(&miss)
            {
                misses.push(miss);
            }
        }
        (!misses.is_empty()).then(|| misses.join("; "))
    }

    fn miss(&self, invocation: &Invocation) -> Option<String> {
        let program = invocation.program.as_str();
        if let Some(name) = invocation.env.iter().find(|n| !safe_env(n)) {
            return Some(format!(
                "it sets {name} for {program}, which can change what runs"
            ));
        }
        if SAFE_BUILTINS.contains(&program) {
            return None;
        }
        if never_covered(program) {
            return Some(format!(
                "{program} runs other code (a shell, an interpreter or a command runner) and is \
                 never allowlisted"
            ));
        }
        if self.safe_bins.iter().any(|bin| bin.trim() == program) {
            return None;
        }
        Some(format!("{program} is not in tools.exec.safeBins"))
    }

    /// "Ask", with what `askFallback` decides when nobody answers.
    fn ask(&self, covered: bool, reason: String) -> Verdict {
        let fallback = self.ask_fallback.unwrap_or(ExecSecurity::Deny);
        let allowed = match fallback {
            ExecSecurity::Full => true,
            ExecSecurity::Allowlist => covered,
            ExecSecurity::Deny => false,
        };
        Verdict::Ask {
            fallback: Judgement {
                allowed,
                reason: format!("tools.exec.askFallback ({fallback}) decides"),
            },
            reason,
        }
    }
}

/// What exec approvals say about one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It runs without asking.
    Allow {
        /// Why, in one phrase.
        reason: String,
    },
    /// It is refused without asking.
    Deny {
        /// Why, in one phrase.
        reason: String,
    },
    /// A person must approve it.
    Ask {
        /// Why it needs approval, in one phrase.
        reason: String,
        /// What `askFallback` decides when nobody can be asked or nobody answers in time.
        fallback: Judgement,
    },
}

impl Verdict {
    /// The verdict when nobody can be asked: "ask" becomes `askFallback`'s decision.
    pub fn unattended(self) -> Judgement {
        match self {
            Verdict::Allow { reason } => allow(reason),
            Verdict::Deny { reason } => refuse(reason),
            Verdict::Ask { reason, fallback } => Judgement {
                allowed: fallback.allowed,
                reason: format!("{reason}; nobody can approve it, so {}", fallback.reason),
            },
        }
    }

    /// Appends a detail in parentheses to the reason of a refusal or a question.
    fn add_detail(&mut self, detail: &str) {
        match self {
            Verdict::Allow { .. } => {}
            Verdict::Deny { reason } | Verdict::Ask { reason, .. } => {
                reason.push_str(&format!(" ({detail})"));
            }
        }
    }
}

fn allow(reason: String) -> Judgement {
    Judgement {
        allowed: true,
        reason,
    }
}

fn refuse(reason: String) -> Judgement {
    Judgement {
        allowed: false,
        reason,
    }
}

fn safe_env(name: &str) -> bool {
    SAFE_ENV.contains(&name) || name.starts_with("LC_")
}

/// Shells, interpreters and command runners, by file name, ignoring a version suffix.
fn never_covered(program: &str) -> bool {
    let base = base_name(program).to_ascii_lowercase();
    let unversioned = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    NEVER_COVERED.contains(&base.as_str())
        || (!unversioned.is_empty() && NEVER_COVERED.contains(&unversioned))
}
