//! What the app-server child starts with: its own environment (not the service's), a
//! `CODEX_HOME` created when missing, and error messages free of colour codes.

use std::os::unix::fs::PermissionsExt;

use openclaw_codex_harness::{CodexRunner, HarnessSettings};

use super::fixture::{Fixture, Turn, stand_in, start_script};

/// A stand-in for `codex` that writes its environment to `env.txt`, prints a coloured log
/// line and a fake backtrace on stderr, and exits 134 (an abort) before answering anything.
fn crashing_codex(dir: &std::path::Path) -> HarnessSettings {
    let script = format!(
        "#!/bin/sh\nenv > {}/env.txt\nprintf '\\033[2m2026-12-01T10:00:00Z\\033[0m \\033[31mERROR\\033[0m codex_core: boom\\n' >&2\nprintf 'stack backtrace:\\n   0: \\033[1mcodex::main\\033[0m\\n' >&2\nexit 134\n",
        dir.display()
    );
    stand_in(dir, &script, dir.join("home"))
}

#[tokio::test]
async fn a_dying_child_is_reported_without_colour_codes_and_without_the_services_environment() {
    let dir = tempfile::tempdir().expect("dir");
    let settings = crashing_codex(dir.path());
    let error = start_script(&settings)
        .await
        .expect_err("the crashing stand-in started");
    let message = error.to_string();
    assert!(!message.contains('\u{1b}'), "{message:?}");
    assert!(message.contains("ERROR codex_core: boom"), "{message}");
    let env = std::fs::read_to_string(dir.path().join("env.txt")).expect("env.txt");
    let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
    for name in &names {
        assert!(
            !name.starts_with("RUST_") && !name.starts_with("CARGO"),
            "{name} reached the child: {env}"
        );
    }
    assert!(env.contains("NO_COLOR=1"), "{env}");
    assert!(
        env.contains(&format!("CODEX_HOME={}", dir.path().join("home").display())),
        "{env}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_codex_home_is_created_private_and_the_turn_runs() {
    let mut f = Fixture::start().await;
    let home = f.workspace.path().join("not/yet/codex-home");
    f.settings.codex_home = Some(home.clone());
    f.runner = std::sync::Arc::new(CodexRunner::new(f.settings.clone()));
    f.fake.push(agent_testkit::FakeReply::text("Hello."));
    let (outcome, _) = f.run(&Turn::new("Hi.")).await;
    assert_eq!(outcome.final_text, "Hello.");
    let mode = std::fs::metadata(&home)
        .expect("created")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
}
