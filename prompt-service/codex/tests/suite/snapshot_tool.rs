//! The committed snapshots and the `prompt-snapshots` tool (P-29, P-30).
//! The drift check here is exactly `prompt-snapshots check`, so CI's
//! `cargo test --workspace` fails when a prompt change lands without its
//! snapshot update.

use std::{
    fs,
    path::Path,
    process::{Command, Output},
};

use openclaw_config::{LoadOptions, NoEnv, UnresolvedVars, load};
use prompt_codex::snapshots::scenarios;

const TOOL: &str = env!("CARGO_BIN_EXE_prompt-snapshots");

fn run(args: &[&str], dir: Option<&Path>) -> Output {
    let mut command = Command::new(TOOL);
    if let Some(dir) = dir {
        command.arg("--dir").arg(dir);
    }
    command.args(args).output().expect("run prompt-snapshots")
}

/// `sync-codex-model` into `dir`, finding the catalog from `codex_home` and `home` as the
/// tool would for a user; it must succeed.
fn sync_found(dir: &Path, codex_home: &Path, home: &Path) -> Output {
    let output = Command::new(TOOL)
        .arg("--dir")
        .arg(dir)
        .arg("sync-codex-model")
        .env("CODEX_HOME", codex_home)
        .env("HOME", home)
        .output()
        .expect("run");
    assert!(output.status.success(), "{}", text(&output));
    output
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn committed_snapshots_match_the_generator() {
    let output = run(&["check"], None);
    assert!(
        output.status.success(),
        "snapshot drift; run `cargo run -p prompt-codex --bin prompt-snapshots -- gen`:\n{}",
        text(&output)
    );
}

#[test]
fn gen_writes_removes_stale_files_and_check_reports_drift() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stale = dir.path().join("codex-runtime-happy-path/old-scenario.md");
    fs::create_dir_all(stale.parent().expect("parent")).expect("mkdir");
    fs::write(&stale, "old").expect("write");
    let output = run(&["gen"], Some(dir.path()));
    assert!(output.status.success(), "{}", text(&output));
    assert!(!stale.exists(), "stale snapshot left behind");
    for name in [
        "codex-runtime-happy-path/README.md",
        "codex-runtime-happy-path/telegram-direct-codex-message-tool.md",
        "codex-runtime-happy-path/discord-group-codex-message-tool.md",
        "codex-runtime-happy-path/telegram-heartbeat-codex-tool.md",
        "codex-runtime-happy-path/codex-dynamic-tools.telegram-direct.json",
        "codex-runtime-happy-path/codex-dynamic-tools.discord-group.json",
        "codex-runtime-happy-path/codex-dynamic-tools.heartbeat-turn.json",
        "codex-model-catalog/gpt-5.5.pragmatic.instructions.md",
        "codex-model-catalog/gpt-5.5.pragmatic.source.json",
    ] {
        assert!(dir.path().join(name).is_file(), "{name}");
    }
    let clean = run(&["check"], Some(dir.path()));
    assert!(clean.status.success(), "{}", text(&clean));

    let edited = dir
        .path()
        .join("codex-runtime-happy-path/discord-group-codex-message-tool.md");
    let body = fs::read_to_string(&edited).expect("read");
    fs::write(
        &edited,
        body.replace("OpenClaw Turn Instructions", "Edited"),
    )
    .expect("write");
    fs::write(&stale, "old").expect("write");
    let drift = run(&["check"], Some(dir.path()));
    let report = text(&drift);
    assert_eq!(drift.status.code(), Some(1), "{report}");
    assert!(
        report.contains("a/codex-runtime-happy-path/discord-group-codex-message-tool.md"),
        "{report}"
    );
    assert!(
        report.contains("+### Developer: OpenClaw Turn Instructions"),
        "{report}"
    );
    assert!(
        report.contains("stale codex-runtime-happy-path/old-scenario.md"),
        "{report}"
    );
}

#[test]
fn generation_is_deterministic() {
    let a = tempfile::tempdir().expect("tempdir");
    let b = tempfile::tempdir().expect("tempdir");
    for dir in [a.path(), b.path()] {
        assert!(run(&["gen"], Some(dir)).status.success());
    }
    let folder = "codex-runtime-happy-path";
    let mut names: Vec<_> = fs::read_dir(a.path().join(folder))
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    names.sort();
    for name in names {
        let path = Path::new(folder).join(&name);
        assert_eq!(
            fs::read(a.path().join(&path)).expect("a"),
            fs::read(b.path().join(&path)).expect("b"),
            "{}",
            path.display()
        );
    }
}

#[test]
fn sync_uses_the_given_catalog_then_codex_home_and_else_changes_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ours = root.join("tests/fixtures/models_cache.json");
    let committed = root.join("snapshots/codex-model-catalog");

    // --catalog with our catalog reproduces the committed fixture exactly.
    let dir = tempfile::tempdir().expect("tempdir");
    let output = run(
        &[
            "sync-codex-model",
            "--catalog",
            ours.to_str().expect("utf-8"),
        ],
        Some(dir.path()),
    );
    assert!(output.status.success(), "{}", text(&output));
    for name in [
        "gpt-5.5.pragmatic.instructions.md",
        "gpt-5.5.pragmatic.source.json",
    ] {
        assert_eq!(
            fs::read_to_string(dir.path().join("codex-model-catalog").join(name)).expect("new"),
            fs::read_to_string(committed.join(name)).expect("committed"),
            "{name}"
        );
    }

    // No catalog anywhere: nothing changes, exit 0, and it says so.
    let empty_home = tempfile::tempdir().expect("tempdir");
    let untouched = tempfile::tempdir().expect("tempdir");
    let output = sync_found(
        untouched.path(),
        &empty_home.path().join("codex"),
        empty_home.path(),
    );
    assert!(text(&output).contains("unchanged"), "{}", text(&output));
    assert_eq!(fs::read_dir(untouched.path()).expect("list").count(), 0);

    // $CODEX_HOME/models_cache.json comes first and is recorded as such.
    let codex_home = tempfile::tempdir().expect("tempdir");
    fs::copy(&ours, codex_home.path().join("models_cache.json")).expect("copy");
    sync_found(untouched.path(), codex_home.path(), empty_home.path());
    let note = fs::read_to_string(
        untouched
            .path()
            .join("codex-model-catalog/gpt-5.5.pragmatic.source.json"),
    )
    .expect("note");
    assert!(note.contains("\"$CODEX_HOME/models_cache.json\""), "{note}");
    assert!(note.contains("\"models_cache\""), "{note}");
    // A fixture that is not from our catalog is refused by check.
    assert!(run(&["gen"], Some(untouched.path())).status.success());
    assert_eq!(
        run(&["check"], Some(untouched.path())).status.code(),
        Some(1)
    );
}

/// P-44: a maintainer's Codex checkout is the third place looked at,
/// and `--catalog` takes a `models.json` as well as a `models_cache.json`.
#[test]
fn sync_reads_a_codex_checkout_and_a_models_json() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ours = fs::read_to_string(root.join("tests/fixtures/models_cache.json")).expect("read");
    let note_of = |dir: &Path| {
        fs::read_to_string(dir.join("codex-model-catalog/gpt-5.5.pragmatic.source.json"))
            .expect("note")
    };

    // Only the checkout exists: it is found after the two caches.
    let home = tempfile::tempdir().expect("tempdir");
    let checkout = home.path().join("code/codex/codex-rs/models-manager");
    fs::create_dir_all(&checkout).expect("mkdir");
    fs::write(checkout.join("models.json"), &ours).expect("write");
    let out = tempfile::tempdir().expect("tempdir");
    let output = sync_found(out.path(), &home.path().join("no-codex-home"), home.path());
    let note = note_of(out.path());
    assert!(
        note.contains("\"~/code/codex/codex-rs/models-manager/models.json\""),
        "{note}"
    );
    assert!(note.contains("\"checked_in_catalog\""), "{note}");
    assert!(text(&output).contains("not ours"), "{}", text(&output));

    // A cache in ~/.codex wins over the checkout.
    fs::create_dir_all(home.path().join(".codex")).expect("mkdir");
    fs::write(home.path().join(".codex/models_cache.json"), &ours).expect("write");
    sync_found(out.path(), &home.path().join("no-codex-home"), home.path());
    assert!(note_of(out.path()).contains("\"~/.codex/models_cache.json\""));

    // --catalog with a models.json outside the workspace.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let catalog = elsewhere.path().join("models.json");
    fs::write(&catalog, &ours).expect("write");
    let output = run(
        &[
            "sync-codex-model",
            "--catalog",
            catalog.to_str().expect("utf-8"),
        ],
        Some(out.path()),
    );
    assert!(output.status.success(), "{}", text(&output));
    let note = note_of(out.path());
    assert!(note.contains("\"checked_in_catalog\""), "{note}");
    assert!(note.contains("models.json"), "{note}");
    let instructions = fs::read_to_string(
        out.path()
            .join("codex-model-catalog/gpt-5.5.pragmatic.instructions.md"),
    )
    .expect("instructions");
    let committed = fs::read_to_string(
        root.join("snapshots/codex-model-catalog/gpt-5.5.pragmatic.instructions.md"),
    )
    .expect("committed");
    assert_eq!(
        instructions, committed,
        "the same catalog renders the same text"
    );
}

/// The effective config shown in each snapshot is a valid `openclaw.json`
/// for our config crate, and agrees with the scenario's Codex settings.
#[test]
fn effective_configs_are_valid_openclaw_config() {
    let options = LoadOptions {
        unresolved_vars: UnresolvedVars::Keep,
    };
    for scenario in scenarios::all() {
        let text = scenario.config.to_string();
        if let Err(e) = load(&text, &NoEnv, &options) {
            panic!("{}: {e}", scenario.stem);
        }
        let codex = &scenario.config["agents"]["list"][0]["runtime"]["codex"];
        assert_eq!(
            codex["approvalPolicy"],
            scenario.input.approval_policy.codex_str(),
            "{}",
            scenario.stem
        );
        assert_eq!(codex["sandbox"], scenario.input.sandbox.thread_str());
    }
}

/// P-45: the committed Codex snapshots say they are not byte-exact requests, and why: Codex
/// adds context of its own after our thread and turn parameters.
#[test]
fn the_snapshots_say_they_are_not_byte_exact_requests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots/codex-runtime-happy-path");
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("snapshot README");
    for needle in [
        "not byte-exact OpenAI requests",
        "AGENTS.md",
        "environment context",
        "memory",
        "plugin instructions",
        "collaboration-mode",
    ] {
        assert!(
            readme.contains(needle),
            "{needle:?} missing from:\n{readme}"
        );
    }
}
