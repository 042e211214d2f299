//! RenderCodexTurn over a real socket: the happy path (validated against
//! the pinned Codex binary's schema) and every bad-input rule.

use codex_peer::{CodexInstall, ParamsMethod, ParamsSchemas};
use openclaw_proto::prompt::v1 as pb;
use serde_json::{Value, json};
use tonic::Code;

use super::harness::Server;

const EXAMPLE: &str = include_str!("../../examples/render-request.json5");

fn request() -> pb::RenderCodexTurnRequest {
    let base = prompt_server::parse_request(EXAMPLE).expect("example parses");
    pb::RenderCodexTurnRequest {
        base: Some(base),
        trigger: pb::CodexTrigger::User as i32,
        memory_tools_available: true,
        memory_workspace_is_active: true,
        model: "gpt-5.5".into(),
        effort: "medium".into(),
        approval_policy: pb::CodexApprovalPolicy::OnRequest as i32,
        sandbox: pb::CodexSandboxMode::WorkspaceWrite as i32,
        dynamic_tools: vec![
            pb::CodexDynamicTool {
                name: "message".into(),
                description: "Send a message to this chat.".into(),
                json_schema: r#"{"type":"object","properties":{"text":{"type":"string"}}}"#.into(),
                ..Default::default()
            },
            pb::CodexDynamicTool {
                name: "cron".into(),
                description: "Schedule jobs.".into(),
                defer_loading: true,
                namespace: "openclaw".into(),
                ..Default::default()
            },
        ],
        input_text: "What is on my calendar today?".into(),
        ..Default::default()
    }
}

async fn status_of(server: &Server, req: pb::RenderCodexTurnRequest) -> tonic::Status {
    match server.client().await.render_codex_turn(req).await {
        Ok(_) => panic!("expected an error"),
        Err(status) => status,
    }
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("params are JSON")
}

#[tokio::test]
async fn happy_path_params_match_the_pinned_codex_schema() {
    let server = Server::start().await;
    let mut client = server.client().await;
    // Installing (cold: seconds) and generating block; keep them off the runtime.
    let schemas = tokio::task::spawn_blocking(|| {
        let codex = CodexInstall::ensure().unwrap_or_else(|e| panic!("installing Codex: {e}"));
        ParamsSchemas::generate(&codex).unwrap_or_else(|e| panic!("schema: {e}"))
    })
    .await
    .expect("schema task");

    let mut resumed = request();
    resumed.thread_id = "019a0000-0000-7000-8000-000000000001".into();
    resumed.resume = true;
    let mut heartbeat = resumed.clone();
    heartbeat.trigger = pb::CodexTrigger::Heartbeat as i32;
    let mut cron = request();
    cron.trigger = pb::CodexTrigger::Cron as i32;
    cron.lightweight_cron = true;
    cron.approval_policy = pb::CodexApprovalPolicy::Never as i32;
    cron.sandbox = pb::CodexSandboxMode::ReadOnly as i32;

    for (case, req) in [
        ("new thread", request()),
        ("resume", resumed),
        ("heartbeat", heartbeat),
        ("lightweight cron", cron.clone()),
    ] {
        let reply = client
            .render_codex_turn(req.clone())
            .await
            .unwrap_or_else(|s| panic!("{case}: {s}"))
            .into_inner();
        for (method, text) in [
            (ParamsMethod::ThreadStart, &reply.thread_start_params_json),
            (ParamsMethod::ThreadResume, &reply.thread_resume_params_json),
            (ParamsMethod::TurnStart, &reply.turn_start_params_json),
        ] {
            if let Err(e) = schemas.check(method, &parse(text)) {
                panic!("{case}: {e}\n{text}");
            }
        }
        // The RPC returns exactly what the library maps.
        let direct = prompt_server::render_codex_request(req).expect("maps");
        assert_eq!(reply, direct, "{case}");
    }

    let reply = client
        .render_codex_turn(request())
        .await
        .expect("render")
        .into_inner();
    let start = parse(&reply.thread_start_params_json);
    assert_eq!(start["approvalPolicy"], "on-request");
    assert_eq!(start["sandbox"], "workspace-write");
    assert_eq!(start["personality"], "none");
    assert_eq!(start["serviceName"], "OpenClaw");
    assert!(start.get("baseInstructions").is_none());
    assert_eq!(start["dynamicTools"][1]["name"], "openclaw");
    assert_eq!(start["dynamicTools"][1]["tools"][0]["deferLoading"], true);
    let developer = start["developerInstructions"].as_str().expect("text");
    assert!(developer.contains("You are Ada, an OpenClaw agent."));
    assert!(
        !developer.contains("Work carefully"),
        "AGENTS.md is Codex's to read"
    );
    let turn = parse(&reply.turn_start_params_json);
    assert_eq!(turn["sandboxPolicy"]["type"], "workspaceWrite");
    assert_eq!(turn["input"][0]["type"], "text");
    assert_eq!(turn["input"][0]["text_elements"], json!([]));
    let collaboration = turn["collaborationMode"]["settings"]["developer_instructions"]
        .as_str()
        .expect("text");
    assert!(collaboration.contains("Calm, precise, a little dry."));
    assert!(collaboration.contains("<available_skills>"));
    assert!(collaboration.contains("## OpenClaw Workspace Memory"));
    assert!(
        !collaboration.contains("standup"),
        "MEMORY.md is never pasted"
    );

    let roles: Vec<(pb::CodexLayerRole, &str, bool)> = reply
        .layers
        .iter()
        .map(|l| (l.role(), l.carrier.as_str(), l.codex_owned))
        .collect();
    assert_eq!(
        roles,
        [
            (pb::CodexLayerRole::System, "codex:model-instructions", true),
            (
                pb::CodexLayerRole::Developer,
                "thread/start.developerInstructions",
                false
            ),
            (
                pb::CodexLayerRole::Developer,
                "codex:permissions-instructions",
                true
            ),
            (
                pb::CodexLayerRole::Developer,
                "turn/start.collaborationMode.settings.developer_instructions",
                false
            ),
            (
                pb::CodexLayerRole::User,
                "codex:project-docs-and-environment",
                true
            ),
            (pb::CodexLayerRole::User, "turn/start.input[0].text", false),
            (
                pb::CodexLayerRole::Tools,
                "thread/start.dynamicTools",
                false
            ),
        ]
    );
    for layer in &reply.layers {
        assert_eq!(layer.chars as usize, layer.text.chars().count());
        assert_eq!(layer.approx_tokens, layer.chars.div_ceil(4));
    }
    let routes: Vec<(&str, pb::CodexFileRoute, pb::FileStatus)> = reply
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.route(), f.status()))
        .collect();
    assert_eq!(
        routes,
        [
            (
                "AGENTS.md",
                pb::CodexFileRoute::CodexProjectDoc,
                pb::FileStatus::Injected
            ),
            (
                "SOUL.md",
                pb::CodexFileRoute::TurnDeveloperInstructions,
                pb::FileStatus::Injected
            ),
            (
                "IDENTITY.md",
                pb::CodexFileRoute::TurnDeveloperInstructions,
                pb::FileStatus::Missing
            ),
            (
                "USER.md",
                pb::CodexFileRoute::TurnDeveloperInstructions,
                pb::FileStatus::Injected
            ),
            (
                "MEMORY.md",
                pb::CodexFileRoute::MemoryToolsNote,
                pb::FileStatus::Injected
            ),
        ]
    );

    // Lightweight cron: the input text byte for byte, nothing of ours.
    let reply = client
        .render_codex_turn(cron.clone())
        .await
        .expect("render")
        .into_inner();
    let turn = parse(&reply.turn_start_params_json);
    assert_eq!(turn["input"][0]["text"], cron.input_text.as_str());
    assert!(turn.get("collaborationMode").is_none());
    assert!(
        parse(&reply.thread_start_params_json)
            .get("developerInstructions")
            .is_none()
    );
}

async fn assert_invalid(server: &Server, req: pb::RenderCodexTurnRequest, field: &str) {
    let status = status_of(server, req).await;
    assert_eq!(status.code(), Code::InvalidArgument, "{}", status.message());
    assert!(
        status.message().starts_with(&format!("{field}:")),
        "expected {field}: {}",
        status.message()
    );
}

#[tokio::test]
async fn unknown_or_unset_trigger_is_invalid_argument() {
    let server = Server::start().await;
    for value in [42, pb::CodexTrigger::Unspecified as i32] {
        let mut req = request();
        req.trigger = value;
        assert_invalid(&server, req, "trigger").await;
    }
}

#[tokio::test]
async fn unknown_or_unset_approval_policy_is_invalid_argument() {
    let server = Server::start().await;
    for value in [7, pb::CodexApprovalPolicy::Unspecified as i32] {
        let mut req = request();
        req.approval_policy = value;
        assert_invalid(&server, req, "approval_policy").await;
    }
}

#[tokio::test]
async fn unknown_or_unset_sandbox_is_invalid_argument() {
    let server = Server::start().await;
    for value in [-1, pb::CodexSandboxMode::Unspecified as i32] {
        let mut req = request();
        req.sandbox = value;
        assert_invalid(&server, req, "sandbox").await;
    }
}

#[tokio::test]
async fn resume_without_a_thread_id_is_invalid_argument() {
    let server = Server::start().await;
    let mut req = request();
    req.resume = true;
    let status = status_of(&server, req).await;
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(
        status.message(),
        "thread_id: is required when resume is set"
    );
}

#[tokio::test]
async fn other_bad_fields_are_named() {
    let server = Server::start().await;
    let mut no_model = request();
    no_model.model.clear();
    assert_invalid(&server, no_model, "model").await;

    let mut bad_base = request();
    if let Some(base) = bad_base.base.as_mut() {
        base.workspace_dir = "relative".into();
    }
    assert_invalid(&server, bad_base, "base.workspace_dir").await;

    let mut bad_base_enum = request();
    if let Some(base) = bad_base_enum.base.as_mut() {
        base.session_kind = 99;
    }
    assert_invalid(&server, bad_base_enum, "base.session_kind").await;

    let mut no_base = request();
    no_base.base = None;
    assert_invalid(&server, no_base, "base.workspace_dir").await;

    let mut bad_tool = request();
    bad_tool.dynamic_tools[0].json_schema = "[1, 2]".into();
    assert_invalid(&server, bad_tool, "dynamic_tools[0].json_schema").await;

    let mut relative_cwd = request();
    relative_cwd.cwd = "src".into();
    assert_invalid(&server, relative_cwd, "cwd").await;
}
