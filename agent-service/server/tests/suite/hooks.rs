//! Bootstrap and prompt-build hooks over real sockets: config rules and real commands change
//! what PreviewPrompt shows and what a run sends; a failing hook is a clear error; the
//! privacy filter still keeps MEMORY.md out of shared sessions; additions sit on the side of
//! the cache boundary they ask for.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;
use openclaw_proto::prompt::v1 as ppb;

use super::harness::Harness;
use super::run_events::session_key;
use super::status::assert_status;

/// A service whose config holds `hooks`, where `HOOKS/` names a directory outside the state
/// directory (hook programs must live outside every workspace), returned with it.
async fn start(hooks: &str) -> (Harness, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let hooks = hooks.replace("HOOKS/", &format!("{}/", dir.path().display()));
    let h = Harness::start(WireFormat::ChatCompletions, "", &format!("hooks: {hooks},")).await;
    (h, dir)
}

fn ws(h: &Harness) -> std::path::PathBuf {
    h.service.path("state/workspace")
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A `#!/bin/sh` script at `rel` under `dir`.
fn script(dir: &Path, rel: &str, body: &str) {
    write(dir, rel, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(dir.join(rel), std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

async fn preview(h: &Harness, key: &str) -> Result<ppb::RenderSystemPromptResponse, tonic::Status> {
    h.service
        .client()
        .await
        .preview_prompt(pb::PreviewPromptRequest {
            session: session_key(key),
            channel: None,
        })
        .await
        .map(|r| r.into_inner().prompt.expect("prompt"))
}

/// The files the prompt injected, by path.
fn injected(prompt: &ppb::RenderSystemPromptResponse) -> Vec<String> {
    prompt
        .context
        .as_ref()
        .expect("context")
        .files
        .iter()
        .filter(|f| f.status == ppb::FileStatus::Injected as i32)
        .map(|f| f.path.clone())
        .collect()
}

async fn run_error(h: &Harness, message: &str) -> Option<pb::RunError> {
    h.service
        .run_message(message)
        .await
        .into_iter()
        .find_map(|event| match event {
            pb::run_event::Event::Error(e) => Some(e),
            _ => None,
        })
}

#[tokio::test]
async fn bootstrap_hook_rules_swap_the_persona_drop_and_add_files_in_the_preview() {
    let (h, _hooks) = start(
        r#"{ bootstrap: [
            { replace: "SOUL.md", with: "personas/pirate.md" },
            { drop: "TOOLS.md" },
            { add: "NOTES.md", from: "notes/today.md" },
        ] }"#,
    )
    .await;
    let dir = ws(&h);
    write(&dir, "SOUL.md", "Speak softly and kindly.\n");
    write(&dir, "personas/pirate.md", "Talk like a pirate, arr.\n");
    write(&dir, "notes/today.md", "The deploy is on Friday.\n");
    let prompt = preview(&h, "main").await.expect("preview");
    let files = injected(&prompt);
    assert!(files.contains(&"SOUL.md".to_owned()), "{files:?}");
    assert!(files.contains(&"NOTES.md".to_owned()), "{files:?}");
    assert!(!files.contains(&"TOOLS.md".to_owned()), "{files:?}");
    assert!(
        prompt.text.contains("Talk like a pirate, arr."),
        "{}",
        prompt.text
    );
    assert!(!prompt.text.contains("Speak softly and kindly."));
    assert!(prompt.text.contains("The deploy is on Friday."));
    // Files sit above the cache boundary, as the loaded ones do.
    assert!(prompt.stable_prefix.contains("Talk like a pirate, arr."));
}

#[tokio::test]
async fn bootstrap_hook_command_changes_what_a_run_sends_and_the_preview_shows() {
    let (h, hooks) = start(r#"{ bootstrap: [{ command: ["HOOKS/persona.sh", "bold"] }] }"#).await;
    let dir = ws(&h);
    write(&dir, "SOUL.md", "Be gentle.\n");
    // The command gets the files as JSON and answers with them, SOUL.md changed by sed.
    script(
        hooks.path(),
        "persona.sh",
        &format!(
            r#"tee '{}' | sed "s/Be gentle\./Be $1./""#,
            dir.join("seen.json").display()
        ),
    );
    h.fake.push(FakeReply::text("Ahoy."));
    assert!(run_error(&h, "Hello").await.is_none());
    let system = h.fake.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(system.contains("Be bold."), "{system}");
    assert!(!system.contains("Be gentle."), "{system}");
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("seen.json")).expect("seen"))
            .expect("json");
    assert_eq!(seen["event"], "agent:bootstrap");
    assert_eq!(seen["sessionKey"], "agent:main:main");
    assert_eq!(seen["sessionKind"], "main");
    assert_eq!(seen["private"], true);
    let names: Vec<&str> = seen["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert!(names.starts_with(&["AGENTS.md", "SOUL.md"]), "{names:?}");
    // The preview renders exactly what the run sent.
    let prompt = preview(&h, "main").await.expect("preview");
    assert!(prompt.text.contains("Be bold."));
}

#[tokio::test]
async fn bootstrap_hook_command_failure_is_failed_precondition_naming_the_hook() {
    let (h, hooks) =
        start(r#"{ bootstrap: [{ drop: "TOOLS.md" }, { command: ["HOOKS/broken.sh"] }] }"#).await;
    script(
        hooks.path(),
        "broken.sh",
        "echo 'persona store is down' >&2; exit 4",
    );
    let status = preview(&h, "main").await.expect_err("hook failed");
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert!(
        status.message().starts_with(&format!(
            "hooks.bootstrap[1]: command \"{}/broken.sh\" exited with status 4: persona store is down",
            hooks.path().display()
        )),
        "{}",
        status.message()
    );
    let error = run_error(&h, "Hello").await.expect("an error event");
    assert_eq!(error.code, "FAILED_PRECONDITION", "{error:?}");
    assert!(error.message.contains("hooks.bootstrap[1]"), "{error:?}");
    assert_eq!(h.fake.request_count(), 0, "no model call without a prompt");
}

#[tokio::test]
async fn bootstrap_hook_command_timeout_fails_or_skips_as_configured() {
    let (h, hooks) =
        start(r#"{ bootstrap: [{ command: ["HOOKS/slow.sh"], timeoutMs: 300 }] }"#).await;
    let dir = ws(&h);
    write(&dir, "SOUL.md", "Unchanged soul.\n");
    script(hooks.path(), "slow.sh", "sleep 20");
    let status = preview(&h, "main").await.expect_err("timed out");
    assert_status(
        &status,
        tonic::Code::FailedPrecondition,
        &["did not finish within 300 ms"],
    );

    let (h, hooks) = start(
        r#"{ bootstrap: [{ command: ["HOOKS/slow.sh"], timeoutMs: 300, onError: "skip" }] }"#,
    )
    .await;
    let dir = ws(&h);
    write(&dir, "SOUL.md", "Unchanged soul.\n");
    script(hooks.path(), "slow.sh", "sleep 20");
    let prompt = preview(&h, "main").await.expect("skipped");
    assert!(prompt.text.contains("Unchanged soul."), "{}", prompt.text);
}

#[tokio::test]
async fn bootstrap_hook_adding_memory_never_reaches_a_group_session() {
    let (h, hooks) = start(
        r#"{ bootstrap: [
            { add: "NOTES.md", from: "memory/2026-12-01.md" },
            { command: ["HOOKS/memory.sh"] },
        ] }"#,
    )
    .await;
    let dir = ws(&h);
    write(
        &dir,
        "memory/2026-12-01.md",
        "Diary: the user is moving house.\n",
    );
    // The command puts MEMORY.md back (from its own idea of it) and passes the rest through.
    script(
        hooks.path(),
        "memory.sh",
        r#"sed 's/"files":\[/"files":[{"name":"MEMORY.md","content":"The user hates mornings."},/'"#,
    );
    let group = preview(&h, "telegram:group:9")
        .await
        .expect("group preview");
    let files = injected(&group);
    assert!(!files.contains(&"MEMORY.md".to_owned()), "{files:?}");
    assert!(!files.contains(&"NOTES.md".to_owned()), "{files:?}");
    assert!(files.contains(&"AGENTS.md".to_owned()), "{files:?}");
    assert!(!group.text.contains("hates mornings"), "{}", group.text);
    assert!(!group.text.contains("moving house"), "{}", group.text);
    // The private main session gets both.
    let main = preview(&h, "main").await.expect("main preview");
    assert!(main.text.contains("The user hates mornings."));
    assert!(main.text.contains("Diary: the user is moving house."));
}

#[tokio::test]
async fn prompt_build_hook_text_goes_below_the_boundary_unless_placed_stable() {
    let (h, hooks) = start(
        r#"{ beforePromptBuild: [
            { text: "Mention the office closes at six today." },
            { from: "prompts/house.md", placement: "stable" },
            { command: ["HOOKS/extra.sh"] },
        ] }"#,
    )
    .await;
    let dir = ws(&h);
    write(
        &dir,
        "prompts/house.md",
        "House rule: answers in metric units.\n",
    );
    script(
        hooks.path(),
        "extra.sh",
        &format!(
            r#"cat > '{}'; printf '{{"additions":[{{"text":"Command says: the build is green."}},{{"text":"Command rule: cite file paths.","placement":"stable"}}]}}'"#,
            dir.join("seen.json").display()
        ),
    );
    let prompt = preview(&h, "main").await.expect("preview");
    for dynamic in [
        "Mention the office closes at six today.",
        "Command says: the build is green.",
    ] {
        assert!(
            prompt.dynamic_suffix.contains(dynamic),
            "{dynamic}: {}",
            prompt.text
        );
        assert!(!prompt.stable_prefix.contains(dynamic));
    }
    for stable in [
        "House rule: answers in metric units.",
        "Command rule: cite file paths.",
    ] {
        assert!(
            prompt.stable_prefix.contains(stable),
            "{stable}: {}",
            prompt.text
        );
        assert!(!prompt.dynamic_suffix.contains(stable));
    }
    let boundary = prompt.boundary_offset as usize;
    let at = |needle: &str| prompt.text.find(needle).expect(needle);
    assert!(at("Command says: the build is green.") > boundary);
    assert!(at("Command rule: cite file paths.") < boundary);
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("seen.json")).expect("seen"))
            .expect("json");
    assert_eq!(seen["event"], "before_prompt_build");
    assert_eq!(seen["agentId"], "main");
}

#[tokio::test]
async fn prompt_build_hook_bad_output_fails_the_run_and_skip_leaves_the_prompt_alone() {
    let (h, hooks) = start(r#"{ beforePromptBuild: [{ command: ["HOOKS/bad.sh"] }] }"#).await;
    script(
        hooks.path(),
        "bad.sh",
        "cat >/dev/null; echo 'additions: none'",
    );
    let status = preview(&h, "main").await.expect_err("bad output");
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert!(
        status
            .message()
            .starts_with(&format!(
                "hooks.beforePromptBuild[0]: command \"{}/bad.sh\" printed output that is not the expected JSON",
                hooks.path().display()
            )),
        "{}",
        status.message()
    );
    let error = run_error(&h, "Hello").await.expect("an error event");
    assert_eq!(error.code, "FAILED_PRECONDITION", "{error:?}");

    let (h, hooks) =
        start(r#"{ beforePromptBuild: [{ command: ["HOOKS/bad.sh"], onError: "skip" }] }"#).await;
    // A hook with nothing to add, then the same hook broken: the prompt is the same.
    script(
        hooks.path(),
        "bad.sh",
        r#"cat >/dev/null; echo '{"additions":[]}'"#,
    );
    let baseline = preview(&h, "main").await.expect("baseline");
    script(
        hooks.path(),
        "bad.sh",
        "cat >/dev/null; echo 'additions: none'",
    );
    let skipped = preview(&h, "main").await.expect("skipped");
    assert_eq!(skipped.stable_prefix_sha256, baseline.stable_prefix_sha256);
    assert_eq!(skipped.dynamic_suffix, baseline.dynamic_suffix);
    assert!(!skipped.text.contains("additions: none"));
}

#[tokio::test]
async fn bootstrap_hook_config_errors_are_failed_precondition_naming_the_key() {
    let (h, _hooks) =
        start(r#"{ bootstrap: [{ replace: "SOUL.md", with: "../../etc/passwd" }] }"#).await;
    let status = preview(&h, "main").await.expect_err("invalid config");
    assert_status(
        &status,
        tonic::Code::FailedPrecondition,
        &["hooks.bootstrap[0].with (line", "leaves the workspace"],
    );
}

/// The README's old form, a program relative to the workspace, is something the agent can
/// rewrite with its `write` tool: the config is refused, naming the key, and nothing runs.
#[tokio::test]
async fn hook_program_the_agent_can_write_is_refused_naming_the_key() {
    let (h, _hooks) = start(r#"{ bootstrap: [{ command: ["hooks/files.sh"] }] }"#).await;
    let dir = ws(&h);
    let planted = format!("touch '{}'; cat", dir.join("ran.mark").display());
    script(&dir, "hooks/files.sh", &planted);
    let status = preview(&h, "main").await.expect_err("refused");
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert!(
        status.message().contains(
            "hooks.bootstrap[0].command: program \"hooks/files.sh\" is relative to the workspace"
        ),
        "{}",
        status.message()
    );
    assert!(!dir.join("ran.mark").exists(), "the planted hook ran");
}
