//! Sandboxed sessions end to end: agent-service + a real prompt-service over gRPC + a fake
//! model whose `exec` calls try to leave the sandbox, with the host's bubblewrap (installed by
//! the test). What the model is told in the Sandbox section is checked against what happened.

use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;
use serde_json::json;

use super::calls::refusal;
use super::harness::Harness;
use super::run_events::session_key;
use super::status::assert_status;

/// Non-main sessions sandboxed one per session, the agent workspace read-only, no network;
/// exec approvals out of the way (`full`) so only the sandbox stands between the model and
/// the host.
const SANDBOXED: &str =
    r#", sandbox: { mode: "non-main", scope: "session", workspaceAccess: "ro" }"#;
const EXEC_FULL: &str = r#"tools: { exec: { security: "full", ask: "off" } },"#;

fn bwrap() -> String {
    agent_testkit::packages::ensure_program("bwrap", "bubblewrap")
        .unwrap_or_else(|e| panic!("bubblewrap is needed for the sandbox tests: {e}"))
        .display()
        .to_string()
}

fn request(message: &str, key: &str) -> pb::RunRequest {
    pb::RunRequest {
        session: session_key(key),
        message: message.into(),
        ..Default::default()
    }
}

/// The events of a run, or the status the stream failed with.
async fn run(
    h: &Harness,
    request: pb::RunRequest,
) -> Result<Vec<pb::run_event::Event>, tonic::Status> {
    let mut stream = h.service.client().await.run(request).await?.into_inner();
    let mut events = Vec::new();
    while let Some(event) = stream.message().await? {
        events.push(event.event.expect("event"));
    }
    Ok(events)
}

fn outputs(events: &[pb::run_event::Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            pb::run_event::Event::ToolFinished(t) => Some(t.output.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_sandboxed_session_cannot_reach_the_state_dir_the_agent_workspace_or_the_network() {
    let h =
        Harness::start_sandboxed(WireFormat::ChatCompletions, SANDBOXED, EXEC_FULL, &bwrap()).await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let config = h.service.root().join("openclaw.json");
    let state = h.service.path("state");
    let agent_workspace = std::fs::canonicalize(h.service.path("state/workspace")).expect("ws");
    let calls = [
        format!(
            "cat {} 2>&1; ls {} 2>&1",
            config.display(),
            state.join("agents").display()
        ),
        format!(
            "touch {}/pwned 2>&1; echo status=$?",
            agent_workspace.display()
        ),
        format!(
            "cat {}/AGENTS.md | head -c 20; echo",
            agent_workspace.display()
        ),
        format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>&1 && echo connected || echo refused"),
        "echo inside > made.txt; pwd".to_owned(),
    ];
    h.fake.push_all(
        calls
            .iter()
            .enumerate()
            .map(|(i, command)| {
                FakeReply::tool_call(format!("c{i}"), "exec", json!({ "command": command }))
            })
            .chain([FakeReply::text("Done.")]),
    );
    let events = run(&h, request("Try things.", "telegram:group:9"))
        .await
        .expect("run");
    let out = outputs(&events);
    assert_eq!(out.len(), 5, "{events:?}");
    assert!(out[0].contains("No such file or directory"), "{}", out[0]);
    assert!(
        !out[0].contains("test-key"),
        "the config was read: {}",
        out[0]
    );
    assert!(out[1].contains("Read-only file system"), "{}", out[1]);
    assert!(!agent_workspace.join("pwned").exists());
    assert!(
        !out[2].contains("No such file"),
        "the agent workspace is readable: {}",
        out[2]
    );
    assert!(
        out[3].contains("refused") && !out[3].contains("connected\n"),
        "{}",
        out[3]
    );
    assert!(
        listener.accept().is_err(),
        "nothing reached the host listener"
    );
    let sandbox_dir = out[4].lines().last().expect("pwd").to_owned();
    assert!(
        sandbox_dir.starts_with(&state.join("sandboxes").display().to_string()),
        "{sandbox_dir}"
    );
    assert_eq!(
        std::fs::read_to_string(std::path::Path::new(&sandbox_dir).join("made.txt")).expect("made"),
        "inside\n"
    );

    // What the model was told matches: a sandbox, the agent workspace read-only at its path.
    let first = &h.fake.requests()[0];
    let system = first.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let section = system
        .split("## Sandbox")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_else(|| panic!("a Sandbox section: {system}"));
    assert!(section.contains(&sandbox_dir), "{section}");
    assert!(
        section.contains(&format!(
            "Commands run isolated by bubblewrap: the working directory {sandbox_dir} is the only writable path, /tmp is private to the sandbox, and network access is off."
        )),
        "{section}"
    );
    assert!(section.contains("read-only"), "{section}");
    assert!(
        section.contains(&agent_workspace.display().to_string()),
        "{section}"
    );
    assert!(
        !section.contains("Elevated exec on the host exists"),
        "{section}"
    );

    // The main session is not sandboxed: the same read of the config works there, so the
    // sandbox is what refused it above.
    h.fake.push_all([
        FakeReply::tool_call(
            "m1",
            "exec",
            json!({ "command": format!("cat {}", config.display()) }),
        ),
        FakeReply::text("Read it."),
    ]);
    let events = run(&h, request("Read the config.", "main"))
        .await
        .expect("main run");
    let out = outputs(&events);
    // The file was read (its key is redacted on the way out, like every secret).
    assert!(
        out[0].contains("apiKey: \"[redacted models.providers.fake.apiKey]\""),
        "{out:?}"
    );
    let main_system = h.fake.requests().last().expect("request").body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!main_system.contains("## Sandbox"), "{main_system}");
}

#[tokio::test]
async fn an_unusable_engine_refuses_sandboxed_runs_and_never_runs_them_on_the_host() {
    let h = Harness::start_sandboxed(
        WireFormat::ChatCompletions,
        SANDBOXED,
        EXEC_FULL,
        "/nonexistent/bwrap",
    )
    .await;
    h.fake.push_all([
        FakeReply::tool_call("c1", "exec", json!({ "command": "touch escaped" })),
        FakeReply::text("Done."),
    ]);
    let status = run(&h, request("Make a file.", "telegram:group:9"))
        .await
        .expect_err("a sandboxed run without a sandbox is refused");
    assert_status(
        &status,
        tonic::Code::FailedPrecondition,
        &["runs sandboxed", "/nonexistent/bwrap"],
    );
    assert!(h.fake.requests().is_empty(), "no model call was made");
    // The preview refuses the same way.
    let preview = refusal!(
        h.service,
        preview_prompt,
        pb::PreviewPromptRequest {
            session: session_key("telegram:group:9"),
            ..Default::default()
        }
    );
    assert_eq!(preview.code(), tonic::Code::FailedPrecondition);
    // The main session is not sandboxed and still runs (the queued replies answer it).
    let events = run(&h, request("Hi.", "main")).await.expect("main runs");
    assert!(!events.is_empty());
}

/// The file tools run in the service (as root in CI) and commands in the sandbox (never host
/// uid 0): a file the model writes with `write` is edited by a sandboxed command and read back,
/// and what the command made is edited by `edit`.
#[tokio::test]
async fn the_file_tools_and_sandboxed_commands_share_the_workspace() {
    let h =
        Harness::start_sandboxed(WireFormat::ChatCompletions, SANDBOXED, EXEC_FULL, &bwrap()).await;
    h.fake.push_all([
        FakeReply::tool_call(
            "w",
            "write",
            json!({ "path": "notes/plan.md", "content": "step one\n" }),
        ),
        FakeReply::tool_call(
            "x",
            "exec",
            json!({ "command": "echo step two >> notes/plan.md && sed -i 's/one/1/' notes/plan.md \
                                && echo made > notes/made.txt && stat -c 'uid=%u' notes/plan.md" }),
        ),
        FakeReply::tool_call(
            "e",
            "edit",
            json!({ "path": "notes/made.txt", "oldText": "made", "newText": "edited" }),
        ),
        FakeReply::tool_call("r", "read", json!({ "path": "notes/plan.md" })),
        FakeReply::tool_call(
            "c",
            "exec",
            json!({ "command": "cat notes/made.txt; id -u" }),
        ),
        FakeReply::text("Done."),
    ]);
    let events = run(&h, request("Plan.", "telegram:group:11"))
        .await
        .expect("run");
    let out = outputs(&events);
    assert_eq!(out.len(), 5, "{events:?}");
    let root = nix::unistd::Uid::effective().is_root();
    if root {
        assert!(out[1].contains("uid=65532"), "{}", out[1]);
    }
    assert!(out[3].contains("step 1\nstep two"), "{}", out[3]);
    assert!(out[4].contains("\nedited\n"), "{}", out[4]);
    if root {
        assert!(out[4].contains("\nedited\n65532\n"), "{}", out[4]);
    }
}

/// `sandbox.uid` is who a root service's sandboxed commands are; a service of any other user
/// runs them as itself.
#[tokio::test]
async fn a_configured_sandbox_uid_is_who_commands_run_as() {
    let h = Harness::start_sandboxed(
        WireFormat::ChatCompletions,
        r#", sandbox: { mode: "non-main", scope: "session", uid: 61234 }"#,
        EXEC_FULL,
        &bwrap(),
    )
    .await;
    h.fake.push_all([
        FakeReply::tool_call("x", "exec", json!({ "command": "id -u; touch made" })),
        FakeReply::text("Done."),
    ]);
    let events = run(&h, request("Who?", "telegram:group:12"))
        .await
        .expect("run");
    let out = outputs(&events);
    let expected = if nix::unistd::Uid::effective().is_root() {
        "61234".to_owned()
    } else {
        nix::unistd::Uid::effective().to_string()
    };
    assert!(out[0].contains(&format!("\n{expected}\n")), "{}", out[0]);
}

/// A link planted where a session's workspace lives is refused, never resolved and handed to
/// the sandbox user (nor mounted writable).
#[tokio::test]
async fn a_session_workspace_replaced_by_a_link_is_refused() {
    let h =
        Harness::start_sandboxed(WireFormat::ChatCompletions, SANDBOXED, EXEC_FULL, &bwrap()).await;
    h.fake.push_all([
        FakeReply::tool_call("p", "exec", json!({ "command": "pwd" })),
        FakeReply::text("Done."),
    ]);
    let events = run(&h, request("Where?", "telegram:group:13"))
        .await
        .expect("run");
    let workspace =
        std::path::PathBuf::from(outputs(&events)[0].lines().last().expect("pwd").to_owned());
    let outside = h.service.path("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::write(outside.join("keep"), "host").expect("keep");
    std::fs::rename(&workspace, workspace.with_extension("moved")).expect("move");
    std::os::unix::fs::symlink(&outside, &workspace).expect("link");
    h.fake.push_all([
        FakeReply::tool_call("t", "exec", json!({ "command": "touch planted" })),
        FakeReply::text("Done."),
    ]);
    let status = run(&h, request("Again.", "telegram:group:13"))
        .await
        .expect_err("refused");
    // The workspace check sees the link first; the sandbox would refuse it too.
    assert!(
        matches!(
            status.code(),
            tonic::Code::PermissionDenied | tonic::Code::FailedPrecondition
        ),
        "{status:?}"
    );
    assert!(
        status.message().contains("symbolic link"),
        "{}",
        status.message()
    );
    assert!(!outside.join("planted").exists());
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(outside.join("keep")).expect("keep").uid();
    assert_eq!(owner, nix::unistd::Uid::effective().as_raw());
}
