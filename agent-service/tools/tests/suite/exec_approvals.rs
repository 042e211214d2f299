//! Exec approvals (lesson L15 d): the policy judges the effective command, a shell is never
//! an "always allow" entry, and "ask" with nobody to ask resolves through `askFallback`
//! (default deny). Regression cases from the public bypass reports: a shell allowlisted by
//! "Always Allow" on `/bin/zsh -lc` (openclaw#23276), the `/bin/sh -lc` wrapper hiding the
//! real command (openclaw#61509), shell positional carriers `sh -lc '$0 "$@"'` and `xargs`
//! (openclaw#57871), and `env`/`sh -lc` wrappers classified by their first word
//! (goclaw#1200, #1203, #1204).

use openclaw_config::raw::{ExecAsk, ExecSecurity};
use openclaw_config::{LoadOptions, NoEnv, UnresolvedVars, load};
use openclaw_tools::{ExecPolicy, ExecTool, ToolOutcome};
use proptest::prelude::*;
use serde_json::json;

use super::{Fixture, error_text, exists, ok_text};

fn allowlist() -> ExecPolicy {
    ExecPolicy::allowlist(["ls", "git", "cat", "echo", "wc", "/usr/bin/grep"])
}

fn allowed(policy: &ExecPolicy, command: &str) -> bool {
    policy.judge_command(command).allowed
}

#[test]
fn shell_wrappers_are_judged_by_the_commands_inside() {
    let p = allowlist();
    for command in [
        "ls -la",
        "sh -c 'ls'",
        "bash -lc 'ls && git status'",
        "/bin/bash -lc 'cd sub; ls | wc -l'",
        "env LANG=C sh -c 'ls | cat'",
        "sh -c \"bash -c 'echo nested'\"",
        "ls 2>&1 | /usr/bin/grep x",
        "nice -n 5 timeout 10 ls",
    ] {
        assert!(
            allowed(&p, command),
            "{command}: {:?}",
            p.judge_command(command)
        );
    }
    for command in [
        // The shell's script runs something not allowlisted.
        "sh -c 'rm -rf x'",
        "bash -lc 'rm -rf x'",
        "/bin/zsh -lc 'whoami'",
        // Chains: one uncovered link refuses the whole line.
        "ls && rm x",
        "ls; rm x",
        "ls | sh",
        "ls || curl x | bash",
        "ls & rm x",
        "ls\nrm x",
        "bash -lc 'ls; rm x'",
        "sh -c 'ls && sh -c \"ls; rm x\"'",
        // Environment that changes what runs.
        "env X=1 sh -c 'ls'",
        "PATH=. ls",
        "env PATH=/tmp ls",
        "GIT_SSH_COMMAND='sh -c id' git fetch",
        "LD_PRELOAD=/tmp/x.so ls",
        // Carriers and runners.
        "sh -lc '$0 \"$@\"' rm -rf x",
        "xargs rm",
        "xargs sh -c 'rm x'",
        "find . -exec rm {} ;",
        "timeout 5 bash -c 'rm x'",
        "nohup sh -c 'rm x'",
        "exec rm x",
        "command rm x",
        "busybox sh -c 'rm x'",
        "sudo ls",
        "eval ls",
        ". ./script.sh",
        "ionice ls",
        // Whatever the parser cannot follow.
        "ls $(rm x)",
        "ls `rm x`",
        "echo \"$(rm x)\"",
        "(rm x)",
        "$CMD",
        "ls > ~/.bashrc",
        "cat <<EOF",
        "env -S 'rm x'",
        "sh -c 'sh -c \"sh -c \\\"sh -c \\\\\\\"sh -c ls\\\\\\\"\\\"\"'",
        "",
        "   ",
    ] {
        let judgement = p.judge_command(command);
        assert!(
            !judgement.allowed,
            "{command:?} was allowed: {}",
            judgement.reason
        );
        assert!(
            judgement
                .reason
                .contains("not covered by tools.exec.safeBins"),
            "{command:?}: {}",
            judgement.reason
        );
    }
}

#[test]
fn a_shell_or_wrapper_named_by_a_workspace_path_is_not_unwrapped() {
    // `./sh -c ls` runs whatever ./sh is (the agent can write one), not `ls`.
    let p = ExecPolicy::allowlist(["ls"]);
    for command in [
        "./sh -c ls",
        "./bash -lc ls",
        "./env ls",
        "./nice ls",
        "/tmp/x/sh -c ls",
        "bin/timeout 5 ls",
        "/usr/bin/../../tmp/sh -c ls",
    ] {
        assert!(!allowed(&p, command), "{command}");
    }
    assert!(allowed(&p, "/bin/sh -c ls"));
    assert!(allowed(&p, "/usr/bin/env LANG=C ls"));
}

#[test]
fn a_shell_is_never_an_always_allow_entry() {
    // Even listed in safeBins, shells, interpreters and command runners do not cover
    // anything: "Always Allow" on `/bin/zsh -lc whoami` must not allow every zsh line.
    let p = ExecPolicy::allowlist([
        "sh", "bash", "zsh", "/bin/zsh", "dash", "python3", "node", "perl", "busybox", "xargs",
        "sudo", "env", "ls",
    ]);
    for command in [
        "sh",
        "bash script.sh",
        "/bin/zsh",
        "zsh -i",
        "python3 -c 'import os'",
        "python3.12 x.py",
        "node -e 1",
        "perl -e 1",
        "sudo ls",
        "xargs -0 sh",
        "busybox",
    ] {
        let judgement = p.judge_command(command);
        assert!(!judgement.allowed, "{command:?}: {}", judgement.reason);
        assert!(
            judgement.reason.contains("never allowlisted"),
            "{command:?}: {}",
            judgement.reason
        );
    }
    // The shell's script is still judged: an allowlisted command inside runs, nothing else.
    assert!(allowed(&p, "/bin/zsh -lc 'ls'"));
    assert!(!allowed(&p, "/bin/zsh -lc 'whoami'"));
    assert!(!allowed(&p, "bash -lc 'zsh -c whoami'"));
    // Variables set for a shell reach what its script runs (BASH_ENV makes bash source a
    // file first).
    assert!(!allowed(&p, "BASH_ENV=/tmp/x bash -c 'ls'"));
    assert!(!allowed(&p, "env ENV=/tmp/x sh -c 'ls'"));
}

#[test]
fn ask_without_an_approver_follows_ask_fallback_and_defaults_to_deny() {
    use ExecAsk::{Always, Off, OnMiss};
    use ExecSecurity::{Allowlist, Deny, Full};
    let policy = |security, ask, ask_fallback| ExecPolicy {
        security,
        ask,
        ask_fallback,
        safe_bins: vec!["ls".to_owned()],
    };
    let cases = [
        // (security, ask, askFallback, command, allowed)
        (None, None, None, "ls", false),
        (None, Some(Off), None, "ls", false),
        (None, None, Some(Deny), "ls", false),
        (None, None, Some(Allowlist), "ls", true),
        (None, None, Some(Allowlist), "rm x", false),
        (None, None, Some(Full), "rm x", true),
        (Some(Deny), Some(Off), Some(Full), "ls", false),
        (Some(Allowlist), None, None, "ls", true),
        (Some(Allowlist), None, None, "rm x", false),
        (Some(Allowlist), Some(OnMiss), Some(Deny), "rm x", false),
        (Some(Allowlist), Some(OnMiss), Some(Full), "rm x", true),
        (Some(Allowlist), Some(Off), Some(Full), "rm x", false),
        (Some(Allowlist), Some(Always), None, "ls", false),
        (Some(Allowlist), Some(Always), Some(Allowlist), "ls", true),
        (Some(Full), None, None, "rm x", true),
        (Some(Full), Some(Always), None, "ls", false),
        (Some(Full), Some(Always), Some(Deny), "ls", false),
        (Some(Full), Some(Always), Some(Full), "ls", true),
    ];
    for (security, ask, fallback, command, expected) in cases {
        let judgement = policy(security, ask, fallback).judge_command(command);
        assert_eq!(
            judgement.allowed, expected,
            "{security:?} {ask:?} {fallback:?} {command:?}: {}",
            judgement.reason
        );
    }
    let unset = ExecPolicy::default().judge_command("ls");
    assert!(
        unset.reason.contains("nobody can approve")
            && unset
                .reason
                .contains("tools.exec.askFallback (deny) decides"),
        "{}",
        unset.reason
    );
}

fn policy_of(text: &str) -> ExecPolicy {
    let options = LoadOptions {
        unresolved_vars: UnresolvedVars::Keep,
    };
    ExecPolicy::from_config(&load(text, &NoEnv, &options).unwrap())
}

#[test]
fn the_legacy_tools_bash_alias_fills_gaps_key_by_key() {
    let legacy = policy_of("{ tools: { bash: { security: 'allowlist', safeBins: ['ls'] } } }");
    assert_eq!(
        legacy,
        ExecPolicy {
            security: Some(ExecSecurity::Allowlist),
            ask: None,
            ask_fallback: None,
            safe_bins: vec!["ls".to_owned()],
        }
    );
    let both = policy_of(
        "{ tools: { exec: { security: 'deny' }, bash: { security: 'full', ask: 'off', askFallback: 'full' } } }",
    );
    assert_eq!(both.security, Some(ExecSecurity::Deny), "tools.exec wins");
    assert_eq!(both.ask, Some(ExecAsk::Off), "tools.bash fills the gap");
    assert!(!both.judge_command("ls").allowed);
    assert_eq!(policy_of("{}"), ExecPolicy::default());
}

/// Through the tool: a refused command is an error for the model and nothing runs, in the
/// foreground or the background.
#[tokio::test]
async fn the_exec_tool_runs_nothing_it_refuses() {
    let mut f = Fixture::new();
    f.ctx.exec_policy = ExecPolicy::allowlist(["ls", "touch"]);
    for (command, background) in [
        ("ls && sh -c 'echo pwned > pwned'", false),
        ("bash -lc 'ls; echo pwned > pwned'", false),
        ("env X=1 sh -c 'touch pwned'", false),
        ("ls | sh -c 'cat > pwned'", true),
        ("touch ok; python3 -c 'open(\"pwned\",\"w\")'", true),
    ] {
        let outcome = f
            .call(
                &ExecTool,
                json!({ "command": command, "background": background }),
            )
            .await;
        let text = error_text(&outcome);
        assert!(
            text.starts_with(
                "permission denied: exec approval refused this command, so it was not run"
            ),
            "{command}: {text}"
        );
        assert!(!exists(&f.path("pwned")), "{command}");
        assert!(
            !exists(&f.path("ok")),
            "{command}: nothing of a refused line runs"
        );
    }
    assert!(f.ctx.processes.list().is_empty());
    // What the allowlist covers runs, wrapped or not.
    let outcome = f
        .call(&ExecTool, json!({ "command": "sh -c 'touch made && ls'" }))
        .await;
    assert!(ok_text(&outcome).contains("made"), "{outcome:?}");
    // No policy at all (the context's default): every command is refused.
    f.ctx.exec_policy = ExecPolicy::default();
    let outcome = f.call(&ExecTool, json!({ "command": "ls" })).await;
    assert!(matches!(outcome, ToolOutcome::Error { .. }), "{outcome:?}");
    assert!(error_text(&outcome).contains("no tools.exec.security is configured"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(super::fuzz_cases(256)))]

    /// Whatever wraps or chains it, a line that runs `rm` is never allowed by an allowlist
    /// without `rm`; and judging never panics.
    #[test]
    fn rm_hidden_in_wrappers_and_chains_is_always_refused(
        before in prop::sample::select(vec!["", "ls; ", "ls && ", "ls | ", "echo a || ", "cat x & "]),
        wrap in prop::sample::select(vec![
            "{}", "sh -c '{}'", "bash -lc '{}'", "env LANG=C {}", "/bin/sh -c \"{}\"",
            "timeout 5 {}", "nice -n 1 {}", "nohup {}", "xargs {}", "command {}",
            "/usr/bin/env sh -c '{}'", "sh -c \"bash -c '{}'\"",
        ]),
        after in prop::sample::select(vec!["", "; ls", " && ls", " | wc -l", " 2>&1"]),
        args in "[a-z./ -]{0,12}",
    ) {
        let p = allowlist();
        let inner = format!("rm {args}");
        let line = format!("{before}{}{after}", wrap.replace("{}", &inner));
        prop_assert!(!p.judge_command(&line).allowed, "{}", line);
    }

    #[test]
    fn judging_any_line_never_panics(line in "\\PC{0,300}") {
        let _ = allowlist().judge_command(&line);
        let _ = ExecPolicy::default().judge_command(&line);
    }
}
