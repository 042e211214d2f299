//! agent-service (gRPC) and its inspector (HTTP) over one runtime, with a real prompt-service
//! and a fake Anthropic model server, all on 127.0.0.1:0.

use std::{future::Future, path::PathBuf, sync::Arc, time::Duration};

use agent_runtime::{MapEnv, Runtime, RuntimeOptions, Settings};
use agent_testkit::{FakeServer, FakeServerHandle, WireFormat};
use openclaw_proto::agent::v1 as pb;
use pb::agent_service_client::AgentServiceClient;
use tokio::{net::TcpListener, sync::oneshot};
use tonic::{Streaming, transport::Channel};

pub const KEY: &str = "agent:main:main";

pub struct Inspected {
    dir: tempfile::TempDir,
    pub fake: FakeServerHandle,
    pub grpc: String,
    /// `http://127.0.0.1:PORT` of the inspector.
    pub http: String,
    _stops: Vec<oneshot::Sender<()>>,
}

fn config(base_url: &str) -> String {
    format!(
        r#"{{
  agents: {{ defaults: {{ model: "fake/test-model", userTimezone: "Europe/Berlin" }} }},
  models: {{ providers: {{ fake: {{ baseUrl: "{base_url}", api: "{}", apiKey: "test-key", models: [{{ id: "test-model" }}] }} }} }},
}}"#,
        WireFormat::AnthropicMessages.api()
    )
}

impl Inspected {
    /// Everything started; the inspector asks for `tokens` (none: open).
    pub async fn start(tokens: &[&str]) -> Self {
        Self::start_with(tokens, service_kit::ConnectionLimits::default()).await
    }

    /// [`Self::start`] with the inspector's listener under `limits`.
    pub async fn start_with(tokens: &[&str], limits: service_kit::ConnectionLimits) -> Self {
        let (base_url, fake) = FakeServer::start(WireFormat::AnthropicMessages)
            .await
            .expect("fake server");
        let mut stops = Vec::new();

        let (prompt_listener, prompt_url) = bind().await;
        tokio::spawn(prompt_server::serve(
            prompt_listener,
            prompt_server::ServeConfig::default(),
            stopper(&mut stops),
        ));
        let grpc_prompt: Arc<dyn prompt_client::PromptSource> = Arc::new(
            prompt_client::GrpcPromptSource::connect_lazy(
                &prompt_url,
                prompt_client::RetryPolicy::default(),
            )
            .expect("prompt client"),
        );
        let renders = Arc::new(agent_inspector::RenderLog::default());
        let prompt = Arc::new(agent_inspector::RecordingPromptSource::new(
            grpc_prompt,
            Arc::clone(&renders),
        ));

        let dir = tempfile::tempdir().expect("tempdir");
        let settings = Settings {
            state_dir: dir.path().join("state"),
            config_path: dir.path().join("openclaw.json"),
            home_dir: dir.path().to_path_buf(),
        };
        std::fs::write(&settings.config_path, config(&base_url)).expect("config");
        let runtime = Runtime::start(RuntimeOptions::new(
            settings,
            Arc::new(MapEnv::of([("HOME", dir.path().display().to_string())])),
            Arc::new(openclaw_transcript::SystemClock),
            prompt,
        ))
        .expect("runtime");

        let (grpc_listener, grpc) = bind().await;
        tokio::spawn(agent_server::serve(
            grpc_listener,
            agent_server::ServeConfig::default(),
            Arc::clone(&runtime),
            stopper(&mut stops),
        ));

        let (http_listener, http) = bind().await;
        let inspector =
            agent_inspector::Inspector::new(runtime, renders, service_kit::TokenSet::new(tokens));
        tokio::spawn(agent_inspector::serve(
            http_listener,
            inspector,
            limits,
            stopper(&mut stops),
        ));
        Self {
            dir,
            fake,
            grpc,
            http,
            _stops: stops,
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub async fn client(&self) -> AgentServiceClient<Channel> {
        let channel = Channel::from_shared(self.grpc.clone())
            .expect("endpoint")
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await
            .expect("connect");
        AgentServiceClient::new(channel)
    }

    /// Creates the default agent's main session (so the inspector can watch it before a run).
    pub async fn create_main_session(&self) {
        self.client()
            .await
            .create_session(pb::CreateSessionRequest::default())
            .await
            .expect("create session");
    }

    /// Starts a run of `message` in the main session over gRPC; its event stream.
    pub async fn start_run(&self, message: &str) -> Streaming<pb::RunEvent> {
        self.client()
            .await
            .run(pb::RunRequest {
                message: message.into(),
                ..Default::default()
            })
            .await
            .expect("run")
            .into_inner()
    }

    /// Decides the pending exec approval `id` as `ada` would.
    pub async fn decide(&self, id: &str, decision: pb::ApprovalDecision) {
        self.client()
            .await
            .resolve_approval(pb::ResolveApprovalRequest {
                session: None,
                id: id.to_owned(),
                decision: decision as i32,
                decided_by: "ada".into(),
            })
            .await
            .expect("resolve the approval");
    }

    /// Runs `message` in the main session over gRPC to its end; the final text.
    pub async fn run(&self, message: &str) -> String {
        let mut stream = self.start_run(message).await;
        let mut text = None;
        while let Some(event) = stream.message().await.expect("stream") {
            match event.event {
                Some(pb::run_event::Event::Final(f)) => text = Some(f.text),
                Some(pb::run_event::Event::Error(e)) => panic!("run failed: {e:?}"),
                _ => {}
            }
        }
        text.expect("a final event")
    }

    /// GET `path` (with its query) from the inspector; status and JSON body.
    pub async fn get(&self, path: &str) -> (u16, serde_json::Value) {
        let response = reqwest::get(format!("{}{path}", self.http))
            .await
            .expect("GET");
        let status = response.status().as_u16();
        (status, response.json().await.expect("JSON body"))
    }

    /// GET expecting 200; the JSON body.
    pub async fn ok(&self, path: &str) -> serde_json::Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "{path}: {body}");
        body
    }

    /// Lists the sessions through the inspector, which subscribes to each it lists: a run
    /// started after this reaches the inspector from its first event.
    pub async fn observe(&self) {
        let body = self.ok("/api/sessions").await;
        let main = body["sessions"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["key"] == KEY))
            .cloned()
            .expect("the main session is listed");
        assert_eq!(main["observed"], true, "{main}");
    }
}

/// A listener on 127.0.0.1:0 and its `http://` address.
async fn bind() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    (listener, url)
}

/// A shutdown signal for one server, fired when its sender in `stops` is dropped.
fn stopper(stops: &mut Vec<oneshot::Sender<()>>) -> impl Future<Output = ()> + Send + 'static {
    let (stop, stopped) = oneshot::channel::<()>();
    stops.push(stop);
    async {
        let _ = stopped.await;
    }
}

/// Reads a run's events until `pick` takes one; what it took.
pub async fn next_picked<T>(
    stream: &mut Streaming<pb::RunEvent>,
    pick: impl Fn(pb::RunEvent) -> Option<T>,
) -> T {
    loop {
        let event = stream.message().await.expect("stream").expect("an event");
        if let Some(picked) = pick(event) {
            return picked;
        }
    }
}

/// The next exec approval a run asks for.
pub async fn next_approval(stream: &mut Streaming<pb::RunEvent>) -> pb::Approval {
    next_picked(stream, |event| match event.event {
        Some(pb::run_event::Event::ApprovalRequested(a)) => Some(a),
        _ => None,
    })
    .await
}

/// Reads the inspector's event stream into `seen` until it holds `marker`, for at most 20 s.
pub async fn read_until(response: &mut reqwest::Response, seen: &mut String, marker: &str) {
    let read = async {
        while !seen.contains(marker) {
            let chunk = response.chunk().await.expect("chunk").expect("more");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .unwrap_or_else(|_| panic!("{marker:?} within 20 s"));
}

/// The query naming the main session.
pub fn main_session() -> String {
    format!("agent=main&key={KEY}")
}
