//! Exec approvals (lesson L15 d): the policy judges the effective command, allowlist entries
//! match resolved executable paths, safe bins follow their profiles, a shell is never an
//! "always allow" entry, and "ask" with nobody to ask resolves through `askFallback`
//! (default deny). Regression cases from the public bypass reports: a shell allowlisted by
//! "Always Allow" on `/bin/zsh -lc` (openclaw#23276), the `/bin/sh -lc` wrapper hiding the
//! real command (openclaw#61509), shell positional carriers `sh -lc '$0 "$@"'` and `xargs`
//! (openclaw#57871), and `env`/`sh -lc` wrappers classified by their first word
//! (goclaw#1200, #1203, #1204).

use openclaw_config::raw::{ExecAsk, ExecSecurity};
use openclaw_config::{LoadOptions, NoEnv, UnresolvedVars, load};
use openclaw_tools::{ExecPolicy, ExecTool, ToolOutcome, Verdict};
use proptest::prelude::*;
use serde_json::json;

use super::exec_corpus::Bins;
use super::{Fixture, error_text, exists, ok_text};

fn bins() -> Bins {
    Bins::new(&[
        "ls", "git", "cat", "grep", "rm", "touch", "zsh", "python3", "sudo",
    ])
}

fn allowlist(b: &Bins) -> ExecPolicy {
    b.policy(&["ls", "git", "cat", "grep"])
}

fn allowed(policy: &ExecPolicy, command: &str) -> bool {
    policy.judge_command(command).allowed
}

#[test]
fn shell_wrappers_are_judged_by_the_commands_inside() {
    let b = bins();
    let p = allowlist(&b);
    for command in [
        "ls -la",
        "sh -c 'ls'",
        "bash -c 'ls && git status'",
        "/bin/bash -c 'cd sub; ls | wc -l'",
        "env LANG=C sh -c 'ls | cat'",
        "sh -c \"bash -c 'echo nested'\"",
        "ls 2>&1 | grep x",
        "nice -n 5 timeout 10 ls",
        "bash --norc --noprofile -c ls",
        "sh -ec 'ls'",
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
        "bash -c 'rm -rf x'",
        "/bin/zsh -c 'whoami'",
        // Login and interactive shells read files the agent may have written.
        "bash -lc 'ls'",
        "/bin/bash -lc 'ls'",
        // Chains: one uncovered link refuses the whole line.
        "ls && rm x",
        "ls; rm x",
        "ls | sh",
        "ls || curl x | bash",
        "ls & rm x",
        "ls\nrm x",
        "bash -c 'ls; rm x'",
        "sh -c 'ls && sh -c \"ls; rm x\"'",
        // Environment that changes what runs.
        "env X=1 sh -c 'ls'",
        "PATH=. ls",
        "env PATH=/tmp ls",
        "GIT_SSH_COMMAND='sh -c id' git fetch",
        "LD_PRELOAD=/tmp/x.so ls",
        // Carriers and runners.
        "sh -c '$0 \"$@\"' rm -rf x",
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
                .contains("not covered by the allowlist or tools.exec.safeBins"),
            "{command:?}: {}",
            judgement.reason
        );
    }
}

#[test]
fn entries_match_the_resolved_executable_path() {
    let b = bins();
    let p = allowlist(&b);
    let ws = tempfile::tempdir().unwrap();
    // A bare name resolves through the policy's PATH, and that file must be listed.
    assert!(allowed(&p, "ls"));
    assert!(allowed(&p, &format!("{} -la", b.path("ls").display())));
    assert!(!allowed(&p, "rm x"), "rm resolves to a file with no entry");
    assert!(
        !allowed(&p, "/usr/bin/ls"),
        "the system's ls is another file"
    );
    assert!(!allowed(&p, "no-such-program"));
    // A relative path resolves against the working directory, then is canonicalized:
    // a link to an allowlisted file is that file.
    std::os::unix::fs::symlink(b.path("ls"), ws.path().join("my-ls")).unwrap();
    std::fs::copy(b.path("ls"), ws.path().join("ls")).unwrap();
    let here = |c: &str| matches!(p.verdict_in(c, ws.path()), Verdict::Allow { .. });
    assert!(here("./my-ls"));
    assert!(here("./my-ls && cd sub"));
    // After `cd` the shell is elsewhere: a relative program is no longer the one here.
    assert!(!here("cd /tmp && ./my-ls"));
    assert!(!here("cd sub; ./my-ls"));
    assert!(!here("sh -c 'cd /tmp; ./my-ls'"));
    assert!(!here("env -C /tmp ./my-ls"), "env -C moves too");
    assert!(!here("env --chdir=/tmp ./my-ls"));
    assert!(!here("./ls"), "a copy is another file");
    assert!(
        !allowed(&p, "./my-ls"),
        "without a working directory nothing relative resolves"
    );
    // A link named like a harmless program but pointing at an interpreter is the interpreter.
    std::os::unix::fs::symlink(b.path("python3"), ws.path().join("lister")).unwrap();
    let anything = b.policy(&["ls"]).with_allowlist([format!(
        "{}/**",
        ws.path().canonicalize().unwrap().display()
    )]);
    let reason = anything.verdict_in("./lister", ws.path());
    assert!(
        matches!(&reason, Verdict::Deny { reason } if reason.contains("never allowlisted")),
        "{reason:?}"
    );
    // Globs: `*` stays in one directory, `**` crosses them; `~` and bare names never match.
    let dir = b.path("ls").parent().unwrap().display().to_string();
    let star = b.policy(&[]).with_allowlist([format!("{dir}/*")]);
    assert!(allowed(&star, "git status") && allowed(&star, "rm x"));
    assert!(
        !allowed(&star, "head -n 1 /etc/passwd"),
        "/usr/bin is not under it"
    );
    let names = b.policy(&[]).with_allowlist(["ls", "~/bin/ls", "*"]);
    assert!(!allowed(&names, "ls"));
    assert_eq!(names.warnings().len(), 3, "{:#?}", names.warnings());
}

/// With every system program allowlisted (arguments free), words `xargs` appends still never
/// pick the program: a wrapper left without one, a second `xargs`, or `find` (which could be
/// handed `-exec`).
#[test]
fn xargs_never_supplies_the_program_even_when_everything_is_allowlisted() {
    let p = ExecPolicy::allowlist(["/usr/bin/*", "/bin/*"]).with_search_path("/usr/bin:/bin");
    assert!(
        allowed(&p, "xargs -0 grep x"),
        "a plain program keeps its arguments free"
    );
    assert!(allowed(&p, "find . -name x -delete"));
    for command in [
        "echo rm | xargs xargs",
        "echo rm | xargs nice",
        "echo 'rm -rf x' | xargs timeout 5",
        "echo 'rm -rf x' | xargs env",
        "echo 'rm -rf x' | xargs nohup",
        "echo 'rm -rf x' | xargs stdbuf -oL",
        "echo '-exec rm -rf {} ;' | xargs find .",
        "printf 'rm\\0' | xargs -0 -n1 xargs",
    ] {
        let judgement = p.judge_command(command);
        assert!(!judgement.allowed, "{command}: {}", judgement.reason);
    }
}

#[test]
fn always_patterns_are_resolved_paths_or_nothing() {
    let b = bins();
    let p = b.policy(&["ls"]);
    let path = |n: &str| b.path(n).display().to_string();
    assert_eq!(
        p.always_patterns("git status && rm x"),
        [path("git"), path("rm")]
    );
    assert_eq!(p.always_patterns("ls && git log | git show"), [path("git")]);
    assert_eq!(
        p.always_patterns("sh -c 'touch a; cd b; echo c'"),
        [path("touch")]
    );
    assert!(
        p.always_patterns("ls | head -n 1").is_empty(),
        "all covered already"
    );
    for never in [
        "zsh -c ls",
        "git status; python3 -c 1",
        "sudo ls",
        "bash -lc git",
        "GIT_DIR=x git status",
        "git $(id)",
        "no-such-program",
        "./relative",
    ] {
        assert!(p.always_patterns(never).is_empty(), "{never}");
    }
}

#[test]
fn a_shell_or_wrapper_named_by_a_workspace_path_is_not_unwrapped() {
    // `./sh -c ls` runs whatever ./sh is (the agent can write one), not `ls`.
    let b = bins();
    let p = b.policy(&["ls"]);
    for command in [
        "./sh -c ls",
        "./bash -c ls",
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
    // A bare shell or wrapper name that PATH resolves outside the system directories (a
    // directory first on PATH holding `sh` and `nice`) is not the system's either.
    let shadow = Bins::new(&["ls", "sh", "nice"]);
    let p = shadow.policy(&["ls"]);
    for command in [
        "sh -c ls",
        "env sh -c ls",
        "timeout 5 sh -c 'ls'",
        "nice ls",
    ] {
        let reason = p.judge_command(command).reason;
        assert!(
            reason.contains("outside the system directories"),
            "{command}: {reason}"
        );
    }
    assert!(allowed(&p, "bash -c ls"), "no shadowing bash: the system's");
    assert!(allowed(&p, "env ls"));
}

#[test]
fn a_shell_is_never_an_always_allow_entry() {
    // Even allowlisted, shells, interpreters and command runners cover nothing: "Always
    // Allow" on `/bin/zsh -lc whoami` must not allow every zsh line.
    let b = bins();
    let p = b
        .policy(&["ls", "zsh", "python3", "sudo"])
        .with_allowlist(["/usr/bin/*", "/bin/*"]);
    for command in [
        "sh",
        "bash script.sh",
        "zsh",
        "zsh -i",
        "zsh -c ls",
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
    assert!(allowed(&p, "/bin/sh -c 'ls'"));
    assert!(!allowed(&p, "bash -c 'zsh -c whoami'"));
    // Variables set for a shell reach what its script runs (BASH_ENV makes bash source a
    // file first).
    assert!(!allowed(&p, "BASH_ENV=/tmp/x bash -c 'ls'"));
    assert!(!allowed(&p, "env ENV=/tmp/x sh -c 'ls'"));
}

#[test]
fn safe_bins_resolve_into_system_directories_and_follow_their_profiles() {
    let p = ExecPolicy::allowlist(Vec::<String>::new()).with_search_path("/usr/bin:/bin");
    for command in [
        "head -n 5",
        "head -5",
        "head -n5 -q",
        "head --lines=5",
        "head --lines 5",
        "tail -n 3",
        "cut -d, -f2",
        "cut -d / -f2",
        "cut --delimiter=: --fields=1,3 --output-delimiter=' '",
        "uniq -c",
        "uniq -c -i",
        "tr a-z A-Z",
        "tr -d '\\r'",
        "tr -s ' '",
        "tr '[:upper:]' '[:lower:]'",
        "wc -l",
        "wc -lw",
        "wc --lines",
        "echo x | head -n 1 | wc -c",
    ] {
        assert!(
            allowed(&p, command),
            "{command}: {:?}",
            p.judge_command(command)
        );
    }
    // A safe bin shadowed on PATH by a file outside the system directories is refused.
    let shadow = Bins::new(&["head"]);
    let shadowed = ExecPolicy::allowlist(Vec::<String>::new()).with_search_path(format!(
        "{}:/usr/bin",
        shadow.path("head").parent().unwrap().display()
    ));
    let reason = shadowed.judge_command("head -n 1").reason;
    assert!(
        reason.contains("outside the system directories"),
        "{reason}"
    );
    let nowhere = ExecPolicy::allowlist(Vec::<String>::new()).with_search_path("/nonexistent");
    assert!(
        nowhere
            .judge_command("head -n 1")
            .reason
            .contains("not found on PATH")
    );
}

fn policy_of(text: &str, agent: &str) -> ExecPolicy {
    let options = LoadOptions {
        unresolved_vars: UnresolvedVars::Keep,
    };
    ExecPolicy::from_config(&load(text, &NoEnv, &options).unwrap(), agent)
}

#[test]
fn custom_safe_bins_need_a_profile_and_shells_never_qualify() {
    let text = r#"{ tools: { exec: { security: "allowlist", ask: "off",
        safeBins: ["grep", "sort", "rev", "sed", "bash", "head"],
        safeBinProfiles: {
            grep: { maxPositional: 1, allowedFlags: ["-i", "-v", "-c"], allowedValueFlags: ["-e", "--regexp", "-f"] },
            sort: { allowedFlags: ["-r", "-n", "-u"], allowedValueFlags: ["-k", "-t", "-o", "--output", "--out"], deniedFlags: ["-u"] },
            sed: { allowedFlags: ["-n"], maxPositional: 1 },
            bash: { allowedFlags: ["-c"], maxPositional: 1 },
        } } } }"#;
    let p = policy_of(text, "main");
    for command in [
        "ls | grep -e x",
        "ls | grep -i --regexp=x -c",
        "ls | sort -r -k2 -t,",
        "ls | head -n 1",
    ] {
        let judgement = p.judge_command(command);
        // ls is not allowlisted: judge the filters alone.
        let filter = command.trim_start_matches("ls | ");
        let filter_judgement = p.judge_command(filter);
        assert!(!judgement.allowed);
        assert!(
            filter_judgement.allowed,
            "{filter}: {}",
            filter_judgement.reason
        );
    }
    for (command, why) in [
        ("grep x", "grep's pattern goes through -e only"),
        ("grep -e x file", "an operand, whatever maxPositional says"),
        ("grep -f pats", "-f reads a file whatever the profile lists"),
        ("grep -e ./x", "a path-like value of a custom profile"),
        ("grep -r -e x", "an option the profile does not list"),
        ("sort -o out", "sort -o whatever the profile lists"),
        ("sort --output=out", "the long form"),
        ("sort --out=out", "an abbreviation of a refused option"),
        ("sort -ro out", "-o in a cluster"),
        ("sort -u", "a denied flag wins over an allowed one"),
        ("rev", "no profile"),
        ("sed -n p", "never a safe bin"),
        ("bash -c ls", "never a safe bin"),
    ] {
        let judgement = p.judge_command(command);
        assert!(
            !judgement.allowed,
            "{command} ({why}): {}",
            judgement.reason
        );
    }
    let warnings = p.warnings();
    assert_eq!(warnings.len(), 3, "{warnings:#?}");
    assert!(warnings[0].contains("\"bash\""), "{warnings:#?}");
    assert!(warnings[1].contains("\"rev\"") && warnings[1].contains("safeBinProfiles.rev"));
    assert!(warnings[2].contains("\"sed\""));
}

#[test]
fn ask_without_an_approver_follows_ask_fallback_and_defaults_to_deny() {
    use ExecAsk::{Always, Off, OnMiss};
    use ExecSecurity::{Allowlist, Deny, Full};
    let b = bins();
    let policy = |security, ask, ask_fallback| ExecPolicy {
        security,
        ask,
        ask_fallback,
        ..b.policy(&["ls"])
    };
    let cases = [
        // (security, ask, askFallback, command, allowed)
        (Deny, Off, Full, "ls", false),
        (Deny, Always, Full, "ls", false),
        (Allowlist, Off, Deny, "ls", true),
        (Allowlist, Off, Full, "rm x", false),
        (Allowlist, OnMiss, Deny, "ls", true),
        (Allowlist, OnMiss, Deny, "rm x", false),
        (Allowlist, OnMiss, Allowlist, "rm x", false),
        (Allowlist, OnMiss, Full, "rm x", true),
        (Allowlist, Always, Deny, "ls", false),
        (Allowlist, Always, Allowlist, "ls", true),
        (Allowlist, Always, Allowlist, "rm x", false),
        (Full, Off, Deny, "rm x", true),
        (Full, OnMiss, Deny, "rm x", true),
        (Full, Always, Deny, "ls", false),
        (Full, Always, Allowlist, "rm x", false),
        (Full, Always, Full, "rm x", true),
    ];
    for (security, ask, fallback, command, expected) in cases {
        let judgement = policy(security, ask, fallback).judge_command(command);
        assert_eq!(
            judgement.allowed, expected,
            "{security:?} {ask:?} {fallback:?} {command:?}: {}",
            judgement.reason
        );
    }
}

#[test]
fn nothing_configured_means_allowlist_on_miss_and_deny() {
    let p = policy_of("{}", "main");
    assert_eq!(p.security, ExecSecurity::Allowlist);
    assert_eq!(p.ask, ExecAsk::OnMiss);
    assert_eq!(p.ask_fallback, ExecSecurity::Deny);
    assert_eq!(
        p.safe_bins.names().collect::<Vec<_>>(),
        ["cut", "head", "tail", "tr", "uniq", "wc"]
    );
    assert_eq!(p, ExecPolicy::default());
    // A command nobody allowlisted asks; with nobody to ask, it is refused.
    let Verdict::Ask { reason, fallback } = p.verdict("rm -rf x") else {
        panic!("{:?}", p.verdict("rm -rf x"));
    };
    assert!(reason.contains("not covered"), "{reason}");
    assert!(!fallback.allowed);
    let unattended = p.judge_command("rm -rf x").reason;
    assert!(
        unattended.contains("nobody can approve")
            && unattended.contains("tools.exec.askFallback (deny) decides"),
        "{unattended}"
    );
    // The default safe bins run without asking.
    assert!(matches!(
        p.verdict("echo x | head -n 1"),
        Verdict::Allow { .. }
    ));
}

#[test]
fn agents_override_tools_exec_key_by_key_and_tools_bash_fills_gaps() {
    let legacy = policy_of(
        "{ tools: { bash: { security: 'full', ask: 'always', safeBins: ['wc'] } } }",
        "main",
    );
    assert_eq!(legacy.security, ExecSecurity::Full);
    assert_eq!(legacy.ask, ExecAsk::Always);
    assert_eq!(legacy.safe_bins.names().collect::<Vec<_>>(), ["wc"]);
    let text = r#"{
      tools: { exec: { security: 'deny', askFallback: 'allowlist', safeBins: ['head'],
                       allowlist: ['/usr/bin/ls'] },
               bash: { ask: 'off', askFallback: 'full' } },
      agents: { list: [
        { id: 'main' },
        { id: 'Ops', tools: { exec: { security: 'allowlist', safeBins: ['tac'], allowlist: ['/opt/tools/*'],
            safeBinProfiles: { tac: { maxPositional: 0 } } } } },
      ] },
    }"#;
    let main = policy_of(text, "main");
    assert_eq!(
        main.security,
        ExecSecurity::Deny,
        "tools.exec wins over tools.bash"
    );
    assert_eq!(main.ask, ExecAsk::Off, "tools.bash fills the gap");
    assert_eq!(main.ask_fallback, ExecSecurity::Allowlist);
    assert_eq!(main.allowlist.patterns(), ["/usr/bin/ls"]);
    let ops = policy_of(text, "ops");
    assert_eq!(
        ops.security,
        ExecSecurity::Allowlist,
        "the agent's own key wins"
    );
    assert_eq!(ops.ask, ExecAsk::Off);
    assert_eq!(
        ops.ask_fallback,
        ExecSecurity::Allowlist,
        "tools.exec fills the gap"
    );
    assert_eq!(ops.safe_bins.names().collect::<Vec<_>>(), ["tac"]);
    assert_eq!(
        ops.allowlist.patterns(),
        ["/opt/tools/*"],
        "the agent's list replaces"
    );
    assert!(ops.judge_command("echo x | tac").allowed);
    assert!(
        !ops.judge_command("echo x | head -n 1").allowed,
        "the agent's list replaces"
    );
    assert!(
        !main.judge_command("echo x | head -n 1").allowed,
        "security deny"
    );
}

/// Through the tool: a refused command is an error for the model and nothing runs, in the
/// foreground or the background.
#[tokio::test]
async fn the_exec_tool_runs_nothing_it_refuses() {
    let mut f = Fixture::new();
    let b = bins();
    f.ctx.exec_policy =
        ExecPolicy::allowlist(["/usr/bin/ls", "/usr/bin/touch"]).with_search_path("/usr/bin:/bin");
    for (command, background) in [
        ("ls && sh -c 'echo pwned > pwned'", false),
        ("bash -c 'ls; echo pwned > pwned'", false),
        ("bash -lc 'ls'", false),
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
    // No policy at all (the context's default): what no entry covers asks, and with nobody
    // to ask it is refused; the default safe bins run.
    f.ctx.exec_policy = ExecPolicy::default().with_search_path(b.search_path());
    let outcome = f.call(&ExecTool, json!({ "command": "ls" })).await;
    assert!(matches!(outcome, ToolOutcome::Error { .. }), "{outcome:?}");
    assert!(
        error_text(&outcome).contains("tools.exec.askFallback (deny) decides"),
        "{outcome:?}"
    );
    let outcome = f
        .call(&ExecTool, json!({ "command": "echo one | head -n 1" }))
        .await;
    assert!(ok_text(&outcome).contains("one"), "{outcome:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(super::fuzz_cases(256)))]

    /// Whatever wraps or chains it, a line that runs `rm` is never allowed by an allowlist
    /// without `rm`; and judging never panics.
    #[test]
    fn rm_hidden_in_wrappers_and_chains_is_always_refused(
        before in prop::sample::select(vec!["", "ls; ", "ls && ", "ls | ", "echo a || ", "cat x & "]),
        wrap in prop::sample::select(vec![
            "{}", "sh -c '{}'", "bash -c '{}'", "env LANG=C {}", "/bin/sh -c \"{}\"",
            "timeout 5 {}", "nice -n 1 {}", "nohup {}", "xargs {}", "command {}",
            "/usr/bin/env sh -c '{}'", "sh -c \"bash -c '{}'\"",
        ]),
        after in prop::sample::select(vec!["", "; ls", " && ls", " | wc -l", " 2>&1"]),
        args in "[a-z./ -]{0,12}",
    ) {
        let b = bins();
        let p = allowlist(&b);
        let inner = format!("rm {args}");
        let line = format!("{before}{}{after}", wrap.replace("{}", &inner));
        prop_assert!(!p.judge_command(&line).allowed, "{}", line);
    }

    #[test]
    fn judging_any_line_never_panics(line in "\\PC{0,300}") {
        let _ = ExecPolicy::allowlist(["/usr/bin/ls"]).judge_command(&line);
        let _ = ExecPolicy::default().judge_command(&line);
    }
}

/// Whether a policy can ask a person at all decides whether the prompt offers approvals.
#[test]
fn only_policies_that_ask_can_ask() {
    use openclaw_config::raw::{ExecAsk as A, ExecSecurity as S};
    let policy = |security, ask| ExecPolicy {
        security,
        ask,
        ..ExecPolicy::default()
    };
    assert!(ExecPolicy::default().can_ask());
    assert!(policy(S::Allowlist, A::OnMiss).can_ask());
    assert!(policy(S::Allowlist, A::Always).can_ask());
    assert!(policy(S::Full, A::Always).can_ask());
    assert!(!policy(S::Allowlist, A::Off).can_ask());
    assert!(!policy(S::Full, A::OnMiss).can_ask());
    assert!(!policy(S::Full, A::Off).can_ask());
    assert!(!policy(S::Deny, A::Always).can_ask());
}

/// The config-only answer is the built policy's, through every layer.
#[test]
fn config_can_ask_agrees_with_the_built_policy() {
    for text in [
        "{}",
        r#"{ tools: { exec: { ask: "off" } } }"#,
        r#"{ tools: { exec: { security: "full" } } }"#,
        r#"{ tools: { exec: { security: "full", ask: "always" } } }"#,
        r#"{ tools: { bash: { security: "deny" } } }"#,
        r#"{ tools: { exec: { security: "full" } },
           agents: { list: [{ id: "main", tools: { exec: { security: "allowlist" } } }] } }"#,
        r#"{ agents: { list: [{ id: "main", tools: { exec: { ask: "off" } } }] } }"#,
    ] {
        let config = load(text, &NoEnv, &LoadOptions::default()).unwrap();
        for agent in ["main", "other"] {
            assert_eq!(
                ExecPolicy::config_can_ask(&config, agent),
                ExecPolicy::from_config(&config, agent).can_ask(),
                "{text} for {agent}"
            );
        }
    }
}
