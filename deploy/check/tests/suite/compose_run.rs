//! compose.yaml run natively: each service's binary with exactly
//! the command, environment, mounts and ports the compose file gives, mapped
//! onto loopback and a temporary root (see `deploy_check::native`); health
//! through the compose health check; one demo turn through agent-service;
//! metrics scraped; a run in flight at SIGTERM drains; transcripts flushed.

use std::{collections::BTreeMap, time::Duration};

use deploy_check::{
    compose::ComposeFile,
    native::{self, Layout},
};
use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use tonic::{Request, transport::Channel};

use super::support::{self, Running};

/// What the demo script's second turn begins with (it quotes AGENTS.md).
const DEMO_REPLY: &str = "(scripted model) AGENTS.md begins like this:";

/// Starts a service; a port taken between our probe and the service's bind
/// (another test on the machine) gets a fresh plan, up to three times.
async fn start(
    compose: &ComposeFile,
    name: &str,
    layout: &Layout,
    planned: &BTreeMap<String, BTreeMap<u16, u16>>,
) -> Running {
    let mut last = String::new();
    for _ in 0..3 {
        let plan = native::plan(
            compose,
            &support::deploy_dir(),
            name,
            layout,
            planned,
            &mut support::free_port,
        )
        .unwrap_or_else(|e| panic!("plan {name}: {e}"));
        let mut running = Running::spawn(&plan);
        match running.wait_healthy().await {
            Ok(_) => return running,
            Err(error) => {
                last = format!("{error}\n{}", running.log());
                if !last.contains("Address already in use") {
                    break;
                }
            }
        }
    }
    panic!("{name} did not start:\n{last}");
}

/// The loopback port of the container port a `*_LISTEN` variable names.
fn port_of(running: &Running, compose: &ComposeFile, variable: &str) -> u16 {
    let service = &compose.services[&running.plan.service];
    let container: u16 = service.environment[variable]
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or_else(|| panic!("{variable} is HOST:PORT"));
    running.plan.ports[&container]
}

fn run_request(session_key: &str) -> Request<pb::RunRequest> {
    let mut request = Request::new(pb::RunRequest {
        session: Some(pb::SessionRef {
            agent_id: String::new(),
            target: Some(pb::session_ref::Target::SessionKey(session_key.into())),
        }),
        message: "hello".into(),
        ..Default::default()
    });
    request.metadata_mut().insert(
        service_kit::SESSION_KEY_HEADER,
        session_key.parse().expect("ascii key"),
    );
    request
}

/// A run's events, and its session id and final text.
struct RunOutcome {
    session_id: String,
    final_text: String,
}

async fn finish(mut stream: tonic::Streaming<pb::RunEvent>) -> RunOutcome {
    let mut events = Vec::new();
    while let Some(event) = stream.message().await.expect("run stream") {
        events.push(event);
    }
    finish_events(events)
}

/// The transcript ends with a whole line, every line is JSON, and the last
/// entry is the assistant message the run ended with.
fn assert_flushed(layout: &Layout, compose: &ComposeFile, outcome: &RunOutcome) {
    let state_dir = &compose.services["agent-service"].environment["OPENCLAW_STATE_DIR"];
    let path = layout
        .host_path("agent-service", state_dir)
        .join("agents/main/sessions")
        .join(format!("{}.jsonl", outcome.session_id));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("transcript {}: {e}", path.display()));
    assert!(text.ends_with('\n'), "torn last line in {}", path.display());
    let entries: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}")))
        .collect();
    assert_eq!(entries[0]["type"], "session");
    assert_eq!(entries[0]["id"], outcome.session_id.as_str());
    let last = entries.last().expect("entries");
    assert_eq!(last["message"]["role"], "assistant", "{last}");
    let said: String = last["message"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(said, outcome.final_text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compose_services_run_natively_serve_a_demo_turn_and_drain_on_sigterm() {
    let deploy = support::deploy_dir();
    let compose = ComposeFile::load(&deploy.join("compose.yaml"), &support::example_vars())
        .expect("compose.yaml");
    let tmp = support::Root::new();
    // Tokens made up for this run, in the secret files' format, standing in
    // for deploy/secrets/ (git-ignored, and never read by the test).
    let agent_token = format!("deploy-check-agent-{}", std::process::id());
    let prompt_token = format!("deploy-check-prompt-{}", std::process::id());
    let layout = Layout {
        root: tmp.path().join("root"),
        bin_dir: support::bin_dir(),
        secrets: [
            (
                "agent-tokens".to_owned(),
                format!("# newest first\n{agent_token}\n"),
            ),
            ("prompt-tokens".to_owned(), format!("{prompt_token}\n")),
        ]
        .into(),
    };
    let config_before = std::fs::read(deploy.join("openclaw.json")).expect("openclaw.json");

    // Start in depends_on order, each one healthy before its dependents.
    let mut planned = BTreeMap::new();
    let mut services: Vec<Running> = Vec::new();
    for name in compose.start_order() {
        let running = start(&compose, &name, &layout, &planned).await;
        planned.insert(name.clone(), running.plan.ports.clone());
        services.push(running);
    }
    let [prompt, agent] = services.as_mut_slice() else {
        panic!("expected prompt-service and agent-service");
    };
    assert_eq!(
        (prompt.plan.service.as_str(), agent.plan.service.as_str()),
        ("prompt-service", "agent-service")
    );
    // agent-service reaches prompt-service by its service name, mapped.
    assert_eq!(
        agent.plan.env["PROMPT_SERVICE_URL"],
        format!(
            "http://127.0.0.1:{}",
            port_of(prompt, &compose, "PROMPT_SERVICE_LISTEN")
        )
    );

    // The published port: "127.0.0.1:HOST:CONTAINER" → the container port's loopback mapping.
    let published = &compose.services["agent-service"].ports[0];
    let (_, _, container) = deploy_check::compose::parse_port(published).expect("port spec");
    let url = format!("http://127.0.0.1:{}", agent.plan.ports[&container]);
    let channel = Channel::from_shared(url)
        .expect("url")
        .connect()
        .await
        .expect("connect");
    // prompt-service too needs its token: agent-service's renders below
    // get through because it sends the first line of the same secret.
    let prompt_channel = Channel::from_shared(format!(
        "http://127.0.0.1:{}",
        port_of(prompt, &compose, "PROMPT_SERVICE_LISTEN")
    ))
    .expect("url")
    .connect()
    .await
    .expect("connect to prompt-service");
    let refused =
        openclaw_proto::prompt::v1::prompt_service_client::PromptServiceClient::new(prompt_channel)
            .resolve_provider_contribution(
                openclaw_proto::prompt::v1::ResolveProviderContributionRequest::default(),
            )
            .await
            .expect_err("no token");
    assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused:?}");
    // Every call but health needs agent-service's token.
    let refused = AgentServiceClient::new(channel.clone())
        .setup(pb::SetupRequest::default())
        .await
        .expect_err("no token");
    assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused:?}");
    let token = service_kit::BearerToken::new(&agent_token).expect("token");
    let mut client = AgentServiceClient::with_interceptor(channel, move |mut request| {
        token.apply(&mut request);
        Ok(request)
    });
    // Setup with the config present in a read-only directory (the
    // container's read-only root): it reports the config as found, and
    // writes nothing next to it.
    let setup = client
        .setup(pb::SetupRequest::default())
        .await
        .expect("Setup")
        .into_inner();
    let config_path = &compose.services["agent-service"].environment["OPENCLAW_CONFIG_PATH"];
    assert!(!setup.config_created, "{setup:?}");
    assert_eq!(
        setup.config_path,
        layout
            .host_path("agent-service", config_path)
            .display()
            .to_string()
    );
    assert_eq!(setup.workspaces.len(), 1, "{setup:?}");

    // One demo turn: the scripted model reads AGENTS.md with a tool, then quotes it.
    let first = finish(
        client
            .run(run_request("agent:main:deploy-check"))
            .await
            .expect("Run")
            .into_inner(),
    )
    .await;
    assert!(
        first.final_text.starts_with(DEMO_REPLY),
        "{}",
        first.final_text
    );

    // Metrics of that turn, scraped over HTTP from both services.
    let agent_metrics = support::samples(
        &support::scrape(port_of(agent, &compose, "AGENT_SERVICE_METRICS_LISTEN")).await,
    );
    let run = [
        ("grpc_service", "openclaw.agent.v1.AgentService"),
        ("grpc_method", "Run"),
        ("grpc_code", "OK"),
    ];
    assert_eq!(
        support::value(&agent_metrics, "grpc_server_handled_total", &run),
        Some(1.0)
    );
    assert_eq!(
        support::value(&agent_metrics, "grpc_server_handling_seconds_count", &run),
        Some(1.0)
    );
    let inf = [run[0], run[1], run[2], ("le", "+Inf")];
    assert_eq!(
        support::value(&agent_metrics, "grpc_server_handling_seconds_bucket", &inf),
        Some(1.0)
    );
    assert_eq!(
        support::value(&agent_metrics, "grpc_server_in_flight", &run[..2]),
        Some(0.0),
        "the finished Run stream is no longer in flight"
    );
    // The runtime's own metrics: the demo turn is a tool call and an answer.
    let calls = [
        ("provider", "scripted"),
        ("model", "demo"),
        ("outcome", "ok"),
    ];
    assert_eq!(
        support::value(&agent_metrics, "agent_model_calls_total", &calls),
        Some(2.0)
    );
    assert_eq!(
        support::value(&agent_metrics, "agent_runs_active", &[]),
        Some(0.0)
    );
    // Nothing was ever queued (the series appears once something is).
    assert_eq!(
        support::value(&agent_metrics, "agent_queue_depth", &[]).unwrap_or(0.0),
        0.0
    );
    let appends = support::value(
        &agent_metrics,
        "agent_transcript_append_seconds_count",
        &[("sync", "false")],
    )
    .expect("transcript appends measured");
    assert!(appends >= 4.0, "{appends}");
    let prompt_metrics = support::samples(
        &support::scrape(port_of(prompt, &compose, "PROMPT_SERVICE_METRICS_LISTEN")).await,
    );
    let render = [
        ("grpc_service", "openclaw.prompt.v1.PromptService"),
        ("grpc_method", "RenderSystemPrompt"),
        ("grpc_code", "OK"),
    ];
    let renders = support::value(&prompt_metrics, "grpc_server_handled_total", &render)
        .expect("RenderSystemPrompt counted");
    // The turn's second model call builds the same render request as its first (reading
    // AGENTS.md changes nothing the prompt says), so the run renders once (L17).
    assert_eq!(renders, 1.0, "one render for the turn's two model calls");
    assert_eq!(
        support::value(
            &prompt_metrics,
            "prompt_render_chars_count",
            &[("part", "total")]
        ),
        Some(renders)
    );
    assert!(
        support::value(
            &prompt_metrics,
            "prompt_render_chars_sum",
            &[("part", "total")]
        )
        .is_some_and(|chars| chars > 1000.0)
    );

    // A second turn in the session renders again, with the stable inputs of the first:
    // prompt-service recognises them by their bytes.
    finish(
        client
            .run(run_request("agent:main:deploy-check"))
            .await
            .expect("Run")
            .into_inner(),
    )
    .await;
    let prompt_metrics = support::samples(
        &support::scrape(port_of(prompt, &compose, "PROMPT_SERVICE_METRICS_LISTEN")).await,
    );
    let renders = support::value(&prompt_metrics, "grpc_server_handled_total", &render)
        .expect("RenderSystemPrompt counted");
    assert!(renders >= 2.0, "a render for each turn, got {renders}");
    let stable = |source| {
        support::value(
            &prompt_metrics,
            "prompt_render_stable_inputs_total",
            &[("source", source)],
        )
        .unwrap_or(0.0)
    };
    assert!(
        stable("remembered") >= 1.0,
        "prepared {}, decoded {}",
        stable("prepared"),
        stable("decoded")
    );
    assert_eq!(stable("remembered") + stable("prepared"), renders);

    // SIGTERM while a second run streams: it finishes, the process exits 0
    // within stop_grace_period, and both transcripts end with a whole line.
    let mut stream = client
        .run(run_request("agent:main:drain"))
        .await
        .expect("Run")
        .into_inner();
    // The run is under way once its first event arrives.
    let first_event = stream
        .message()
        .await
        .expect("stream")
        .expect("first event");
    let mut in_flight = tokio::spawn(async move {
        let mut events = vec![first_event];
        while let Some(event) = stream.message().await.expect("drained stream") {
            events.push(event);
        }
        events
    });
    let status = agent
        .terminate()
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", agent.log()));
    assert!(
        status.success(),
        "agent-service exited with {status}\n{}",
        agent.log()
    );
    let events = tokio::time::timeout(Duration::from_secs(5), &mut in_flight)
        .await
        .expect("stream ended")
        .expect("stream task");
    let drained = finish_events(events);
    assert!(
        drained.final_text.starts_with(DEMO_REPLY),
        "{}",
        drained.final_text
    );
    let status = prompt
        .terminate()
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", prompt.log()));
    assert!(
        status.success(),
        "prompt-service exited with {status}\n{}",
        prompt.log()
    );

    assert_flushed(&layout, &compose, &first);
    assert_flushed(&layout, &compose, &drained);

    // Structured logs: every line both services printed is one JSON object,
    // and the read-only config was not touched.
    for service in [&*prompt, &*agent] {
        let log = service.log();
        assert!(!log.is_empty(), "{} logged nothing", service.plan.service);
        for line in log.lines() {
            let parsed: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {line}", service.plan.service));
            assert!(parsed["fields"]["message"].is_string(), "{line}");
        }
    }
    assert_eq!(
        std::fs::read(layout.host_path("agent-service", config_path)).expect("mounted config"),
        config_before
    );
    let config_dir = layout.host_path("agent-service", "/etc/openclaw");
    let mut listed: Vec<String> = std::fs::read_dir(&config_dir)
        .expect("config dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    listed.sort();
    assert_eq!(listed, ["demo-script.json5", "openclaw.json"]);
}

fn finish_events(events: Vec<pb::RunEvent>) -> RunOutcome {
    let mut session_id = None;
    let mut final_text = None;
    for event in events {
        match event.event.expect("event") {
            pb::run_event::Event::Started(s) => session_id = Some(s.session_id),
            pb::run_event::Event::Final(f) => final_text = Some(f.text),
            pb::run_event::Event::Error(e) => panic!("run failed: {} {}", e.code, e.message),
            _ => {}
        }
    }
    RunOutcome {
        session_id: session_id.expect("RunStarted"),
        final_text: final_text.expect("RunFinal"),
    }
}
