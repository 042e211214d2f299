//! The hooks on real files and real commands: each rule, the command protocol and its
//! failures, and the privacy filter judging what the hooks left.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::time::Duration;

use openclaw_config::raw::{HookOnError, HookPlacement};
use openclaw_config::resolve::{BootstrapHook, Hook, HookCommand, PromptBuildHook};

use super::*;
use crate::visibility::{PrivateFiles, visible_files};

/// A workspace (`path()`) beside a directory for hook scripts, both in one temporary
/// directory: hook programs must live outside the workspace.
struct Dirs {
    _root: tempfile::TempDir,
    ws: std::path::PathBuf,
}

impl Dirs {
    fn path(&self) -> &Path {
        &self.ws
    }
}

fn workspace() -> Dirs {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = Dirs {
        ws: root.path().join("ws"),
        _root: root,
    };
    std::fs::create_dir_all(dir.path()).expect("mkdir");
    std::fs::create_dir_all(hooks_dir(dir.path())).expect("mkdir");
    for (name, text) in [
        ("AGENTS.md", "Agent rules.\n"),
        ("SOUL.md", "Be kind.\n"),
        ("TOOLS.md", "Tool notes.\n"),
        ("MEMORY.md", "The user's secrets.\n"),
    ] {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    std::fs::create_dir_all(dir.path().join("personas")).expect("mkdir");
    std::fs::write(dir.path().join("personas/pirate.md"), "Arr.\n").expect("write");
    std::fs::create_dir_all(dir.path().join("memory")).expect("mkdir");
    std::fs::write(dir.path().join("memory/2026.md"), "Private diary.\n").expect("write");
    dir
}

/// Where the tests' hook scripts live: beside the workspace, not in it.
fn hooks_dir(ws: &Path) -> std::path::PathBuf {
    ws.parent().expect("parent").join("hooks")
}

/// The launch of a test: the workspace off limits, the test process's `PATH`.
fn launch(ws: &Path) -> HookLaunch {
    HookLaunch::new(
        vec![(ws.to_path_buf(), "the workspace".to_owned())],
        &|name| std::env::var(name).ok(),
    )
}

fn facts<'a>(ws: &'a Path, kind: SessionKind) -> HookFacts<'a> {
    // Leaked: a test's facts live as long as the test.
    let launch: &'a HookLaunch = Box::leak(Box::new(launch(ws)));
    HookFacts::new("main", "agent:main:main", kind, false, ws, launch)
}

fn hook<T>(i: usize, form: T) -> Hook<T> {
    Hook {
        key: format!("hooks.bootstrap[{i}]"),
        form,
    }
}

/// A `#!/bin/sh` script `name` in the hooks directory beside the workspace.
fn script(ws: &Path, name: &str, body: &str) -> String {
    let path = hooks_dir(ws).join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

fn command(argv: &[&str], on_error: HookOnError) -> HookCommand {
    HookCommand {
        argv: argv.iter().map(|a| (*a).to_owned()).collect(),
        timeout: Duration::from_secs(5),
        on_error,
    }
}

async fn loaded(ws: &Path) -> Vec<InjectedFile> {
    crate::visibility::load_turn_files(ws).await.expect("load")
}

fn shown(files: &[InjectedFile]) -> Vec<(String, String)> {
    files
        .iter()
        .filter(|f| !f.missing)
        .map(|f| (f.name.clone(), f.content.clone()))
        .collect()
}

/// What a session of `kind` gets of `files` after the privacy filter.
fn visible(ws: &Path, files: &[InjectedFile], kind: SessionKind) -> Vec<String> {
    let private = PrivateFiles::scan(ws, files);
    let context = files
        .iter()
        .map(|f| prompt_render::ContextFile {
            path: f.name.clone(),
            content: f.content.clone(),
            missing: f.missing,
        })
        .collect();
    visible_files(context, kind, &private)
        .into_iter()
        .map(|f| f.path)
        .collect()
}

#[tokio::test]
async fn bootstrap_hook_rules_replace_drop_and_add_in_order() {
    let dir = workspace();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("notes")).expect("mkdir");
    std::fs::write(ws.join("notes/x.md"), "Remember the milk.\n").expect("write");
    let hooks = [
        hook(
            0,
            BootstrapHook::Replace {
                name: "SOUL.md".into(),
                with: "personas/pirate.md".into(),
            },
        ),
        hook(
            1,
            BootstrapHook::Drop {
                name: "TOOLS.md".into(),
            },
        ),
        hook(
            2,
            BootstrapHook::Add {
                name: "NOTES.md".into(),
                from: "notes/x.md".into(),
            },
        ),
    ];
    let files = apply_bootstrap(&hooks, &facts(ws, SessionKind::Main), loaded(ws).await)
        .await
        .expect("hooks");
    assert_eq!(
        shown(&files),
        [
            ("AGENTS.md".to_owned(), "Agent rules.\n".to_owned()),
            ("SOUL.md".to_owned(), "Arr.\n".to_owned()),
            ("MEMORY.md".to_owned(), "The user's secrets.\n".to_owned()),
            ("NOTES.md".to_owned(), "Remember the milk.\n".to_owned()),
        ]
    );
    let soul = files.iter().find(|f| f.name == "SOUL.md").expect("soul");
    assert!(soul.path.ends_with("personas/pirate.md"), "{:?}", soul.path);
}

#[tokio::test]
async fn bootstrap_hook_rule_failures_name_the_key_and_never_skip() {
    let dir = workspace();
    let ws = dir.path();
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("x.md"), "elsewhere").expect("write");
    symlink(outside.path().join("x.md"), ws.join("escape.md")).expect("symlink");
    let cases = [
        (
            BootstrapHook::Replace {
                name: "NOPE.md".into(),
                with: "personas/pirate.md".into(),
            },
            "hooks.bootstrap[0]: no injected file is named \"NOPE.md\"",
        ),
        (
            BootstrapHook::Replace {
                name: "SOUL.md".into(),
                with: "personas/missing.md".into(),
            },
            "hooks.bootstrap[0]: \"personas/missing.md\" cannot be read",
        ),
        (
            BootstrapHook::Add {
                name: "SOUL.md".into(),
                from: "personas/pirate.md".into(),
            },
            "hooks.bootstrap[0]: \"SOUL.md\" is already injected",
        ),
    ];
    for (form, expected) in cases {
        let error = apply_bootstrap(
            &[hook(0, form)],
            &facts(ws, SessionKind::Main),
            loaded(ws).await,
        )
        .await
        .expect_err("refused");
        assert!(
            matches!(error, RuntimeError::FailedPrecondition(_)),
            "{error:?}"
        );
        assert!(error.to_string().starts_with(expected), "{error}");
    }
    let escape = hook(
        3,
        BootstrapHook::Add {
            name: "X.md".into(),
            from: "escape.md".into(),
        },
    );
    let error = apply_bootstrap(&[escape], &facts(ws, SessionKind::Main), loaded(ws).await)
        .await
        .expect_err("refused");
    assert!(
        matches!(error, RuntimeError::PermissionDenied(_)),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("hooks.bootstrap[3]: \"escape.md\""),
        "{error}"
    );
}

#[tokio::test]
async fn bootstrap_hook_command_gets_files_and_facts_and_returns_the_new_set() {
    let dir = workspace();
    let ws = dir.path();
    // The command keeps the request it saw and answers with it, SOUL.md's text changed.
    let program = script(
        ws,
        "persona.sh",
        &format!(
            "tee '{}' | sed 's/Be kind\\./Be bold./'",
            ws.join("seen.json").display()
        ),
    );
    let hooks = [hook(
        0,
        BootstrapHook::Command(command(&[&program], HookOnError::Fail)),
    )];
    let files = apply_bootstrap(&hooks, &facts(ws, SessionKind::Group), loaded(ws).await)
        .await
        .expect("hooks");
    let soul = files.iter().find(|f| f.name == "SOUL.md").expect("soul");
    assert_eq!(soul.content, "Be bold.\n");
    assert_eq!(soul.path, ws.join("SOUL.md"));
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join("seen.json")).expect("seen"))
            .expect("json");
    assert_eq!(seen["event"], "agent:bootstrap");
    assert_eq!(seen["agentId"], "main");
    assert_eq!(seen["sessionKey"], "agent:main:main");
    assert_eq!(seen["sessionKind"], "group");
    assert_eq!(seen["private"], false);
    assert_eq!(seen["heartbeat"], false);
    assert_eq!(seen["workspace"], ws.display().to_string());
    assert_eq!(seen["files"][1]["name"], "SOUL.md");
    assert_eq!(seen["files"][1]["content"], "Be kind.\n");
    assert_eq!(seen["files"][1]["missing"], false);
}

#[tokio::test]
async fn bootstrap_hook_command_failures_are_errors_unless_skipped() {
    let dir = workspace();
    let ws = dir.path();
    let cases = [
        (
            "exit.sh",
            "echo 'no persona today' >&2; exit 3",
            "exited with status 3: no persona today",
        ),
        (
            "garbage.sh",
            "echo 'not json'",
            "printed output that is not the expected JSON",
        ),
        ("nofiles.sh", "echo '{}'", "missing field `files`"),
        (
            "dup.sh",
            r#"echo '{"files":[{"name":"A.md","content":""},{"name":"A.md","content":""}]}'"#,
            "returned \"A.md\" twice",
        ),
        (
            "escape.sh",
            r#"echo '{"files":[{"name":"../A.md","content":""}]}'"#,
            "leaves the workspace",
        ),
    ];
    for (name, body, expected) in cases {
        let program = script(ws, name, body);
        let failing = [hook(
            2,
            BootstrapHook::Command(command(&[&program], HookOnError::Fail)),
        )];
        let error = apply_bootstrap(&failing, &facts(ws, SessionKind::Main), loaded(ws).await)
            .await
            .expect_err(name);
        assert!(
            matches!(error, RuntimeError::FailedPrecondition(_)),
            "{error:?}"
        );
        let text = error.to_string();
        assert!(text.starts_with("hooks.bootstrap[2]: command "), "{text}");
        assert!(text.contains(expected), "{name}: {text}");
        // Configured to skip, the files stay as they were.
        let skipping = [hook(
            2,
            BootstrapHook::Command(command(&[&program], HookOnError::Skip)),
        )];
        let files = apply_bootstrap(&skipping, &facts(ws, SessionKind::Main), loaded(ws).await)
            .await
            .expect("skipped");
        assert_eq!(files, loaded(ws).await, "{name}");
    }
    let missing = [hook(
        0,
        BootstrapHook::Command(command(&["/nonexistent/hook"], HookOnError::Fail)),
    )];
    let error = apply_bootstrap(&missing, &facts(ws, SessionKind::Main), loaded(ws).await)
        .await
        .expect_err("no program");
    assert!(error.to_string().contains("could not start"), "{error}");
}

#[tokio::test]
async fn bootstrap_hook_command_past_its_timeout_is_stopped_with_its_children() {
    let dir = workspace();
    let ws = dir.path();
    // The child sleeps on in the background holding the pipe: the whole group must go.
    let program = script(ws, "slow.sh", "sleep 30 & sleep 30");
    let mut cmd = command(&[&program], HookOnError::Fail);
    cmd.timeout = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let error = apply_bootstrap(
        &[hook(0, BootstrapHook::Command(cmd))],
        &facts(ws, SessionKind::Main),
        loaded(ws).await,
    )
    .await
    .expect_err("timed out");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        matches!(error, RuntimeError::FailedPrecondition(_)),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("did not finish within 300 ms"),
        "{error}"
    );
}

#[tokio::test]
async fn bootstrap_hook_privacy_filter_judges_what_the_hooks_left() {
    let dir = workspace();
    let ws = dir.path();
    // SOUL.md filled from memory/, MEMORY.md added back by a command after a drop.
    let program = script(
        ws,
        "back.sh",
        r#"cat >/dev/null; echo '{"files":[{"name":"AGENTS.md","content":"a"},{"name":"MEMORY.md","content":"leaked"},{"name":"NOTES.md","content":"b","path":"memory/2026.md"}]}'"#,
    );
    let hooks = [
        hook(
            0,
            BootstrapHook::Drop {
                name: "MEMORY.md".into(),
            },
        ),
        hook(
            1,
            BootstrapHook::Command(command(&[&program], HookOnError::Fail)),
        ),
    ];
    let files = apply_bootstrap(&hooks, &facts(ws, SessionKind::Group), loaded(ws).await)
        .await
        .expect("hooks");
    assert_eq!(
        visible(ws, &files, SessionKind::Group),
        ["AGENTS.md"],
        "{files:#?}"
    );
    assert_eq!(
        visible(ws, &files, SessionKind::Main),
        ["AGENTS.md", "MEMORY.md", "NOTES.md"]
    );
    let replace = [hook(
        0,
        BootstrapHook::Replace {
            name: "SOUL.md".into(),
            with: "memory/2026.md".into(),
        },
    )];
    let files = apply_bootstrap(&replace, &facts(ws, SessionKind::Group), loaded(ws).await)
        .await
        .expect("hooks");
    let group = visible(ws, &files, SessionKind::Group);
    assert!(!group.contains(&"SOUL.md".to_owned()), "{group:?}");
    assert!(group.contains(&"AGENTS.md".to_owned()), "{group:?}");
}

#[tokio::test]
async fn prompt_build_hook_additions_go_where_they_are_placed() {
    let dir = workspace();
    let ws = dir.path();
    std::fs::write(ws.join("rules.md"), "Stable rule.\n").expect("write");
    let program = script(
        ws,
        "extra.sh",
        &format!(
            r#"cat > '{}'; echo '{{"additions":[{{"text":"From the command."}},{{"text":"Stable from the command.","placement":"stable"}},{{"text":"  "}}]}}'"#,
            ws.join("seen.json").display()
        ),
    );
    let key = |i| format!("hooks.beforePromptBuild[{i}]");
    let hooks = [
        Hook {
            key: key(0),
            form: PromptBuildHook::Text {
                text: "Dynamic text.".into(),
                placement: HookPlacement::Dynamic,
            },
        },
        Hook {
            key: key(1),
            form: PromptBuildHook::File {
                from: "rules.md".into(),
                placement: HookPlacement::Stable,
            },
        },
        Hook {
            key: key(2),
            form: PromptBuildHook::Command(command(&[&program], HookOnError::Fail)),
        },
    ];
    let additions = prompt_additions(&hooks, &facts(ws, SessionKind::Direct))
        .await
        .expect("additions");
    assert_eq!(
        additions,
        PromptAdditions {
            stable: vec!["Stable rule.\n".into(), "Stable from the command.".into()],
            dynamic: vec!["Dynamic text.".into(), "From the command.".into()],
        }
    );
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join("seen.json")).expect("seen"))
            .expect("json");
    assert_eq!(seen["event"], "before_prompt_build");
    assert_eq!(seen["sessionKind"], "direct");
    let mut contribution = prompt_render::Contribution {
        dynamic_suffix: "Provider text.".into(),
        ..Default::default()
    };
    additions.apply(&mut contribution);
    assert_eq!(
        contribution.dynamic_suffix,
        "Provider text.\n\nDynamic text.\n\nFrom the command."
    );
    assert_eq!(
        contribution.stable_prefix,
        "Stable rule.\n\nStable from the command."
    );
}

#[tokio::test]
async fn prompt_build_hook_command_failure_fails_or_skips() {
    let dir = workspace();
    let ws = dir.path();
    let program = script(ws, "bad.sh", r#"echo '{"additions":[{"text":1}]}'"#);
    let hooks = |on_error| {
        [Hook {
            key: "agents.list[0].hooks.beforePromptBuild[0]".to_owned(),
            form: PromptBuildHook::Command(command(&[&program], on_error)),
        }]
    };
    let error = prompt_additions(&hooks(HookOnError::Fail), &facts(ws, SessionKind::Main))
        .await
        .expect_err("bad json");
    assert!(
        matches!(error, RuntimeError::FailedPrecondition(_)),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("agents.list[0].hooks.beforePromptBuild[0]: command "),
        "{error}"
    );
    let skipped = prompt_additions(&hooks(HookOnError::Skip), &facts(ws, SessionKind::Main))
        .await
        .expect("skipped");
    assert_eq!(skipped, PromptAdditions::default());
}

#[tokio::test]
async fn bootstrap_hook_command_cat_from_path_changes_nothing() {
    let dir = workspace();
    let ws = dir.path();
    let hooks = [hook(
        0,
        BootstrapHook::Command(command(&["cat"], HookOnError::Fail)),
    )];
    let before = loaded(ws).await;
    let after = apply_bootstrap(&hooks, &facts(ws, SessionKind::Main), before.clone())
        .await
        .expect("cat");
    assert_eq!(after, before);
}

/// Runs one bootstrap command hook in a main session; the error it fails with, if any.
async fn run_one(ws: &Path, argv: &[&str], on_error: HookOnError) -> Option<RuntimeError> {
    let hooks = [hook(0, BootstrapHook::Command(command(argv, on_error)))];
    apply_bootstrap(&hooks, &facts(ws, SessionKind::Main), loaded(ws).await)
        .await
        .err()
}

/// Each way a session could change what a hook runs is refused before anything runs, with
/// FAILED_PRECONDITION naming the key, even when the hook is configured to be skipped.
#[tokio::test]
async fn hook_code_a_session_can_write_never_runs() {
    let dir = workspace();
    let ws = dir.path();
    // What the agent would plant: a script that leaves a mark when it runs.
    let planted = format!("touch '{}'; cat", ws.join("ran.mark").display());
    let planted = planted.as_str();
    std::fs::create_dir_all(ws.join("hooks")).expect("mkdir");
    let in_ws = ws.join("hooks/files.sh");
    std::fs::write(&in_ws, format!("#!/bin/sh\n{planted}\n")).expect("write");
    std::fs::set_permissions(&in_ws, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::write(ws.join("plain.sh"), format!("{planted}\n")).expect("write");
    // A link beside the workspace that leads into it.
    let link = hooks_dir(ws).join("link.sh");
    symlink(&in_ws, &link).expect("symlink");
    // A script outside the workspace that anyone may rewrite.
    let open = script(ws, "open.sh", planted);
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let in_ws = in_ws.display().to_string();
    let link = link.display().to_string();
    let cases: [(&[&str], &str); 6] = [
        (&["hooks/files.sh"], "is relative to the workspace"),
        (&[&in_ws], "lies inside the workspace"),
        (&[&link], "lies inside the workspace"),
        (&["sh", "plain.sh"], "argument \"plain.sh\""),
        (
            &["sh", "-c", planted, &format!("--script={in_ws}")],
            "lies inside",
        ),
        (&[&open], "is writable by other users"),
    ];
    for (argv, expected) in cases {
        for on_error in [HookOnError::Fail, HookOnError::Skip] {
            let error = run_one(ws, argv, on_error).await;
            let Some(RuntimeError::FailedPrecondition(text)) = &error else {
                panic!("{argv:?} was not refused: {error:?}");
            };
            assert!(text.starts_with("hooks.bootstrap[0]: command "), "{text}");
            assert!(text.contains("refused"), "{text}");
            assert!(text.contains(expected), "{argv:?}: {text}");
            assert!(!ws.join("ran.mark").exists(), "{argv:?} ran");
        }
    }
}

/// A bare name is looked up on `PATH` without its entries inside a workspace: a program the
/// agent put on such an entry is not found.
#[tokio::test]
async fn hook_path_lookup_skips_entries_inside_the_workspace() {
    let dir = workspace();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("bin")).expect("mkdir");
    let tool = ws.join("bin/planted-hook-tool");
    let body = format!(
        "#!/bin/sh\ntouch '{}'; cat\n",
        ws.join("ran.mark").display()
    );
    std::fs::write(&tool, body).expect("write");
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!("{}:/usr/bin:/bin", ws.join("bin").display());
    let launch = HookLaunch::new(vec![(ws.to_path_buf(), "the workspace".to_owned())], &|n| {
        (n == "PATH").then(|| path.clone())
    });
    let facts = HookFacts::new(
        "main",
        "agent:main:main",
        SessionKind::Main,
        false,
        ws,
        &launch,
    );
    let hooks = [hook(
        0,
        BootstrapHook::Command(command(&["planted-hook-tool"], HookOnError::Fail)),
    )];
    let error = apply_bootstrap(&hooks, &facts, loaded(ws).await)
        .await
        .expect_err("refused");
    assert!(error.to_string().contains("is not on PATH"), "{error}");
    assert!(!ws.join("ran.mark").exists());
}

/// A hook that passed when the config loaded is judged again on each run: replaced by a link
/// into the workspace, it is refused.
#[tokio::test]
async fn hook_moved_into_the_workspace_after_load_is_refused_at_run_time() {
    let dir = workspace();
    let ws = dir.path();
    let program = script(ws, "persona.sh", "cat");
    assert!(run_one(ws, &[&program], HookOnError::Fail).await.is_none());
    let planted = ws.join("planted.sh");
    let body = format!(
        "#!/bin/sh\ntouch '{}'; cat\n",
        ws.join("ran.mark").display()
    );
    std::fs::write(&planted, body).expect("write");
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::remove_file(&program).expect("rm");
    symlink(&planted, &program).expect("symlink");
    let error = run_one(ws, &[&program], HookOnError::Skip).await;
    assert!(
        matches!(&error, Some(RuntimeError::FailedPrecondition(t)) if t.contains("lies inside the workspace")),
        "{error:?}"
    );
    assert!(!ws.join("ran.mark").exists());
}

/// A hook inherits nothing of the service's environment but `PATH`, `HOME` and `LANG`: no
/// token, no provider key, no variable an interpreter would read code from.
#[tokio::test]
async fn hook_environment_is_minimal() {
    let dir = workspace();
    let ws = dir.path();
    let launch = HookLaunch::new(
        vec![(ws.to_path_buf(), "the workspace".to_owned())],
        &|n| match n {
            "PATH" => Some("/usr/bin:/bin".to_owned()),
            "HOME" => Some("/home/svc".to_owned()),
            "AGENT_SERVICE_TOKENS" => Some("service-token-0123456789".to_owned()),
            _ => None,
        },
    );
    let facts = HookFacts::new(
        "main",
        "agent:main:main",
        SessionKind::Main,
        false,
        ws,
        &launch,
    );
    let program = script(
        ws,
        "env.sh",
        &format!("env > '{}'; cat", ws.join("env.txt").display()),
    );
    let hooks = [hook(
        0,
        BootstrapHook::Command(command(&[&program], HookOnError::Fail)),
    )];
    apply_bootstrap(&hooks, &facts, loaded(ws).await)
        .await
        .expect("hook");
    let env = std::fs::read_to_string(ws.join("env.txt")).expect("env");
    let mut names: Vec<&str> = env
        .lines()
        .filter_map(|l| l.split_once('=').map(|(n, _)| n))
        // What the shell sets for itself.
        .filter(|n| !["PWD", "SHLVL", "_", "OLDPWD"].contains(n))
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["HOME", "PATH"], "{env}");
    assert!(env.contains("PATH=/usr/bin:/bin\n"), "{env}");
}

#[tokio::test]
async fn a_bootstrap_hooks_output_is_judged_on_every_render_and_never_kept() {
    let dir = workspace();
    let ws = dir.path();
    let cache = std::sync::Arc::new(crate::visibility::turn_file_cache());
    // A clock an hour ahead: the files just written look settled, so the load is kept.
    let later = std::time::SystemTime::now() + Duration::from_secs(3600);
    let as_read = crate::visibility::turn_files_at(&cache, ws, later).expect("load");
    let hooks = [hook(
        0,
        BootstrapHook::Replace {
            name: "SOUL.md".into(),
            with: "memory/2026.md".into(),
        },
    )];

    // As a render with a bootstrap hook does it: the files from the cache, the hook, and a
    // judgement of what the hook left.
    let (files, _) = crate::visibility::cached_turn_files(&cache, ws)
        .await
        .expect("load");
    let hooked = apply_bootstrap(&hooks, &facts(ws, SessionKind::Group), files)
        .await
        .expect("hooks");
    let private = crate::visibility::scan_turn_files(ws, &hooked)
        .await
        .expect("scan");
    // Filled from memory/: private whatever its name, so a group never sees it.
    assert!(private.is_private("SOUL.md"));
    assert!(!visible(ws, &hooked, SessionKind::Group).contains(&"SOUL.md".to_owned()));

    // What is kept is still the files as read, judged as read (a kept load is used whatever
    // the clock says, as long as nothing changed).
    let again =
        crate::visibility::turn_files_at(&cache, ws, std::time::SystemTime::now()).expect("load");
    assert_eq!(again, as_read);
    let soul = again.0.iter().find(|f| f.name == "SOUL.md").expect("soul");
    assert_eq!(soul.content, "Be kind.\n");
    assert!(!again.1.is_private("SOUL.md"));
    assert_eq!(cache.stats().hits, 2, "{:?}", cache.stats());
}

/// A hook runs in `/`, not in the workspace: whatever a session put in its workspace (a module
/// an interpreter would import from its working directory, a `.git/config`, a Makefile) is not
/// where the program looks. The request still names the workspace.
#[tokio::test]
async fn hook_runs_outside_the_workspace() {
    let dir = workspace();
    let ws = dir.path();
    std::fs::write(ws.join("planted-by-session.txt"), "x").expect("write");
    let program = script(
        ws,
        "where.sh",
        r#"ws=$(sed 's/.*"workspace":"\([^"]*\)".*/\1/'); printf '{"additions":[{"text":"cwd=%s ws=%s sees=%s"}]}' "$(pwd)" "$ws" "$(ls | tr '\n' ' ')""#,
    );
    let hooks = [Hook {
        key: "hooks.beforePromptBuild[0]".to_owned(),
        form: PromptBuildHook::Command(command(&[&program], HookOnError::Fail)),
    }];
    let additions = prompt_additions(&hooks, &facts(ws, SessionKind::Main))
        .await
        .expect("additions");
    let text = additions.dynamic.join("\n");
    assert!(text.starts_with("cwd=/ "), "{text}");
    assert!(text.contains(&format!("ws={}", ws.display())), "{text}");
    assert!(!text.contains("planted-by-session.txt"), "{text}");
}

/// The realistic form of the same attack: an operator's inline Python hook imports `json`,
/// and a session planted `json.py` in its workspace. Python puts the working directory first
/// on its module path for `-c`, so in the workspace the planted module would run as the
/// service.
#[tokio::test]
async fn an_interpreter_hook_does_not_import_a_module_planted_in_the_workspace() {
    // The system's interpreter (a hook program must be one no session can write); installed
    // first when the machine has none.
    let python = if Path::new("/usr/bin/python3").exists() {
        std::path::PathBuf::from("/usr/bin/python3")
    } else {
        agent_testkit::packages::ensure_program("python3", "python3-minimal")
            .unwrap_or_else(|e| panic!("python3 is needed: {e}"))
    };
    let python = python.display().to_string();
    let dir = workspace();
    let ws = dir.path();
    let mark = ws.join("ran.mark");
    std::fs::write(
        ws.join("json.py"),
        format!(
            "open({:?}, 'w').write('planted')\n",
            mark.display().to_string()
        ),
    )
    .expect("plant");
    let code = "import json, sys; json.load(sys.stdin); print(json.dumps({'additions': [{'text': 'ok'}]}))";
    let hooks = [Hook {
        key: "hooks.beforePromptBuild[0]".to_owned(),
        form: PromptBuildHook::Command(command(&[python.as_str(), "-c", code], HookOnError::Fail)),
    }];
    let result = prompt_additions(&hooks, &facts(ws, SessionKind::Main)).await;
    assert!(!mark.exists(), "the planted module ran as the service");
    assert_eq!(result.expect("additions").dynamic, ["ok"]);
}

/// A `HOME` inside a directory sessions can write is not passed on (`~/.gitconfig`,
/// `~/.bashrc` there would be theirs); one outside is.
#[test]
fn hook_home_inside_a_workspace_is_not_passed() {
    let dir = workspace();
    let ws = dir.path();
    let roots = || vec![(ws.to_path_buf(), "the workspace".to_owned())];
    let inside = ws.join("home").display().to_string();
    let launch = HookLaunch::new(roots(), &|n| (n == "HOME").then(|| inside.clone()));
    assert!(
        launch.env().iter().all(|(name, _)| *name != "HOME"),
        "{:?}",
        launch.env()
    );
    let launch = HookLaunch::new(roots(), &|n| (n == "HOME").then(|| "/home/svc".to_owned()));
    assert!(
        launch
            .env()
            .contains(&("HOME", std::ffi::OsString::from("/home/svc"))),
        "{:?}",
        launch.env()
    );
}
