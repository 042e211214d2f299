//! Every params object we produce, validated against the JSON schema that
//! the pinned Codex binary generates (installed from npm into `.tools/` by
//! `codex-peer`; no skipping: a failed install fails the test).

use std::time::Instant;

use codex_peer::{CODEX_VERSION, CodexInstall, ParamsMethod, ParamsSchemas};
use prompt_codex::{
    ApprovalPolicy, CODEX_PROTOCOL_VERSION, CodexTurnInput, DynamicTool, SandboxMode, Trigger,
    render_codex_turn, snapshots::scenarios,
};
use serde_json::{Value, json};

fn schemas() -> ParamsSchemas {
    let started = Instant::now();
    let codex = CodexInstall::ensure().unwrap_or_else(|e| panic!("installing Codex: {e}"));
    let installed = started.elapsed();
    let schemas = ParamsSchemas::generate(&codex).unwrap_or_else(|e| panic!("schema: {e}"));
    eprintln!(
        "{} at {}: install/verify {:?}, schema generation {:?}",
        schemas.codex_version(),
        codex.binary().display(),
        installed,
        started.elapsed() - installed
    );
    schemas
}

fn check_all(schemas: &ParamsSchemas, case: &str, input: &CodexTurnInput) -> usize {
    let turn = render_codex_turn(input).unwrap_or_else(|e| panic!("{case}: {e}"));
    let objects = [
        (ParamsMethod::ThreadStart, &turn.thread_start),
        (ParamsMethod::ThreadResume, &turn.thread_resume),
        (ParamsMethod::TurnStart, &turn.turn_start),
    ];
    for (method, params) in objects {
        if let Err(e) = schemas.check(method, params) {
            panic!("{case}: {e}\nparams: {params:#}");
        }
    }
    objects.len()
}

/// A realistic base: the renderer's fixture workspace, tools and skills.
fn rich_base() -> prompt_render::RenderInput {
    let mut base = prompt_render::fixtures::realistic();
    base.context_files.push(prompt_render::fixtures::file(
        "BOOTSTRAP.md",
        "first run".to_owned(),
    ));
    base
}

fn tools() -> Vec<DynamicTool> {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}}).to_string();
    vec![
        DynamicTool {
            name: "message".to_owned(),
            description: "Send a message.".to_owned(),
            json_schema: schema.clone(),
            ..DynamicTool::default()
        },
        DynamicTool {
            name: "cron".to_owned(),
            description: "Schedule jobs.".to_owned(),
            json_schema: schema,
            defer_loading: true,
            namespace: "openclaw".to_owned(),
        },
        DynamicTool {
            name: "session_status".to_owned(),
            namespace: "openclaw".to_owned(),
            ..DynamicTool::default()
        },
    ]
}

/// The cases: the snapshot scenarios, then every trigger, lightweight flag,
/// approval policy, sandbox, thread state and memory setting, with and
/// without a separate working directory.
fn cases() -> Vec<(String, CodexTurnInput)> {
    let mut out: Vec<(String, CodexTurnInput)> = scenarios::all()
        .into_iter()
        .map(|s| (s.stem.to_owned(), s.input))
        .collect();
    let approvals = [
        ApprovalPolicy::Untrusted,
        ApprovalPolicy::OnRequest,
        ApprovalPolicy::Never,
    ];
    let sandboxes = [
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
        SandboxMode::DangerFullAccess,
    ];
    let threads = [(false, ""), (false, "thread-1"), (true, "thread-1")];
    for trigger in [Trigger::User, Trigger::Heartbeat, Trigger::Cron] {
        for lightweight in [false, true] {
            for approval in approvals {
                for sandbox in sandboxes {
                    for (resume, thread) in threads {
                        for memory in [false, true] {
                            let mut input = CodexTurnInput::new(rich_base(), "gpt-5.5");
                            input.trigger = trigger;
                            input.lightweight_cron = lightweight;
                            input.approval_policy = approval;
                            input.sandbox = sandbox;
                            input.resume = resume;
                            input.thread_id = thread.to_owned();
                            input.memory_tools_available = memory;
                            input.memory_workspace_is_active = memory;
                            input.effort = if memory { "medium" } else { "" }.to_owned();
                            input.cwd = if resume { "/srv/checkout" } else { "" }.to_owned();
                            input.dynamic_tools = tools();
                            input.input_text = "Check the build.".to_owned();
                            out.push((
                                format!(
                                    "{trigger:?} lightweight={lightweight} {approval:?} {sandbox:?} resume={resume} thread={thread:?} memory={memory}"
                                ),
                                input,
                            ));
                        }
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_params_object_matches_the_pinned_codex_schema() {
    assert_eq!(
        CODEX_VERSION, CODEX_PROTOCOL_VERSION,
        "the installed Codex and the protocol the mapping follows must be the same release"
    );
    let schemas = schemas();
    assert_eq!(
        schemas.codex_version(),
        format!("codex-cli {CODEX_VERSION}")
    );
    let mut checked = 0;
    for (case, input) in cases() {
        checked += check_all(&schemas, &case, &input);
    }
    eprintln!(
        "{checked} params objects valid against {}",
        schemas.codex_version()
    );
    assert!(checked > 900, "{checked}");

    // The validator has teeth: spellings and shapes Codex 0.169 rejects or
    // ignores fail here too.
    let scenario = &scenarios::all()[0];
    let turn = render_codex_turn(&scenario.input).expect("maps");
    let broken: [(ParamsMethod, &Value, &str, Value); 5] = [
        (
            ParamsMethod::ThreadStart,
            &turn.thread_start,
            "/sandbox",
            json!("workspaceWrite"),
        ),
        (
            ParamsMethod::ThreadStart,
            &turn.thread_start,
            "/approvalPolicy",
            json!("unlessTrusted"),
        ),
        (
            ParamsMethod::TurnStart,
            &turn.turn_start,
            "/sandboxPolicy",
            json!("workspace-write"),
        ),
        (
            ParamsMethod::TurnStart,
            &turn.turn_start,
            "/input/0/type",
            json!("txt"),
        ),
        (
            ParamsMethod::ThreadResume,
            &turn.thread_resume,
            "/personality",
            json!("grumpy"),
        ),
    ];
    for (method, params, pointer, value) in broken {
        let mut bad = params.clone();
        *bad.pointer_mut(pointer).expect(pointer) = value;
        assert!(schemas.check(method, &bad).is_err(), "{pointer} accepted");
    }
    let mut typo = turn.turn_start.clone();
    typo["sandbox_policy"] = json!({"type": "readOnly"});
    let error = schemas
        .check(ParamsMethod::TurnStart, &typo)
        .expect_err("unknown field");
    assert!(error.to_string().contains("sandbox_policy"), "{error}");
    let mut no_thread = turn.turn_start.clone();
    no_thread
        .as_object_mut()
        .expect("object")
        .remove("threadId");
    assert!(schemas.check(ParamsMethod::TurnStart, &no_thread).is_err());
}
