//! Starts agent-service in-process on 127.0.0.1:0 over a temporary state dir.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use agent_runtime::{MapEnv, Runtime, RuntimeOptions, Settings};
use openclaw_proto::agent::v1::agent_service_client::AgentServiceClient;
use tokio::{net::TcpListener, sync::oneshot, task::JoinHandle};
use tonic::transport::Channel;

pub struct Service {
    dir: Option<tempfile::TempDir>,
    pub runtime: Arc<Runtime>,
    pub endpoint: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), agent_server::ServeError>>>,
}

impl Service {
    /// A service whose config file holds `config` (None: no file).
    pub async fn start(config: Option<&str>) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        Self::start_in(dir, config).await
    }

    pub async fn start_in(dir: tempfile::TempDir, config: Option<&str>) -> Self {
        let prompt: Arc<dyn prompt_client::PromptSource> =
            Arc::new(prompt_client::InProcessPromptSource::new().expect("prompt source"));
        Self::start_full(dir, config, prompt).await
    }

    /// A service using `prompt` (for example a gRPC client of a real prompt-service).
    pub async fn start_full(
        dir: tempfile::TempDir,
        config: Option<&str>,
        prompt: Arc<dyn prompt_client::PromptSource>,
    ) -> Self {
        Self::start_with(
            dir,
            config,
            prompt,
            agent_server::ServeConfig::default(),
            agent_runtime::DEFAULT_SANDBOX_PROGRAM,
        )
        .await
    }

    /// A service installed in `install_dir` (its bundled `skills/` and `docs/` live there).
    pub async fn start_installed(
        dir: tempfile::TempDir,
        config: Option<&str>,
        prompt: Arc<dyn prompt_client::PromptSource>,
        install_dir: PathBuf,
    ) -> Self {
        Self::start_options(
            dir,
            config,
            prompt,
            agent_server::ServeConfig::default(),
            agent_runtime::DEFAULT_SANDBOX_PROGRAM,
            Some(install_dir),
            Some(agent_runtime::DEFAULT_IDLE_RELEASE),
        )
        .await
    }

    /// A service that releases sessions idle for `idle_release`.
    pub async fn start_releasing(
        dir: tempfile::TempDir,
        config: Option<&str>,
        prompt: Arc<dyn prompt_client::PromptSource>,
        idle_release: Duration,
    ) -> Self {
        Self::start_options(
            dir,
            config,
            prompt,
            agent_server::ServeConfig::default(),
            agent_runtime::DEFAULT_SANDBOX_PROGRAM,
            None,
            Some(idle_release),
        )
        .await
    }

    /// The same, served with `serve_config`.
    pub async fn start_serving(
        dir: tempfile::TempDir,
        config: Option<&str>,
        prompt: Arc<dyn prompt_client::PromptSource>,
        serve_config: agent_server::ServeConfig,
    ) -> Self {
        Self::start_with(
            dir,
            config,
            prompt,
            serve_config,
            agent_runtime::DEFAULT_SANDBOX_PROGRAM,
        )
        .await
    }

    /// [`Service::start_full`] with the bubblewrap program sandboxed sessions use.
    pub async fn start_sandboxed(
        dir: tempfile::TempDir,
        config: Option<&str>,
        prompt: Arc<dyn prompt_client::PromptSource>,
        sandbox_program: &str,
    ) -> Self {
        Self::start_with(
            dir,
            config,
            prompt,
            agent_server::ServeConfig::default(),
            sandbox_program,
        )
        .await
    }

    async fn start_with(
        dir: tempfile::TempDir,
        config: Option<&str>,
        prompt: Arc<dyn prompt_client::PromptSource>,
        serve_config: agent_server::ServeConfig,
        sandbox_program: &str,
    ) -> Self {
        Self::start_options(
            dir,
            config,
            prompt,
            serve_config,
            sandbox_program,
            None,
            Some(agent_runtime::DEFAULT_IDLE_RELEASE),
        )
        .await
    }

    async fn start_options(
        dir: tempfile::TempDir,
        config: Option<&str>,
        prompt: Arc<dyn prompt_client::PromptSource>,
        serve_config: agent_server::ServeConfig,
        sandbox_program: &str,
        install_dir: Option<PathBuf>,
        idle_release: Option<Duration>,
    ) -> Self {
        let runtime = Runtime::start(RuntimeOptions {
            sandbox_program: sandbox_program.into(),
            install_dir,
            idle_release,
            // As `main` does: the runtime starts work of its own only for the sessions this
            // replica owns.
            owns: serve_config.replica.session_owner(),
            ..runtime_options(dir.path(), config, prompt)
        })
        .expect("runtime");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(agent_server::serve(
            listener,
            serve_config,
            Arc::clone(&runtime),
            async {
                let _ = stopped.await;
            },
        ));
        Self {
            dir: Some(dir),
            runtime,
            endpoint,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.endpoint.clone())
            .expect("endpoint")
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await
            .expect("connect")
    }

    pub async fn client(&self) -> AgentServiceClient<Channel> {
        AgentServiceClient::new(self.channel().await)
    }

    /// Opens a Run of `request`.
    pub async fn open_run(
        &self,
        request: impl tonic::IntoRequest<openclaw_proto::agent::v1::RunRequest>,
    ) -> tonic::Streaming<openclaw_proto::agent::v1::RunEvent> {
        self.client()
            .await
            .run(request)
            .await
            .expect("run")
            .into_inner()
    }

    /// `Setup` with the defaults: the default agent's workspace and config.
    pub async fn setup(&self) -> openclaw_proto::agent::v1::SetupResponse {
        self.client()
            .await
            .setup(openclaw_proto::agent::v1::SetupRequest::default())
            .await
            .expect("setup")
            .into_inner()
    }

    /// The default agent's main session.
    pub async fn session(&self) -> openclaw_proto::agent::v1::Session {
        self.client()
            .await
            .get_session(openclaw_proto::agent::v1::GetSessionRequest { session: None })
            .await
            .expect("session")
            .into_inner()
    }

    /// `PreviewPrompt` for `session` (None: the default agent's main session) as a client on
    /// `channel` would see it.
    pub async fn preview(
        &self,
        session: Option<openclaw_proto::agent::v1::SessionRef>,
        channel: Option<openclaw_proto::agent::v1::ChannelContext>,
    ) -> openclaw_proto::agent::v1::PreviewPromptResponse {
        self.client()
            .await
            .preview_prompt(openclaw_proto::agent::v1::PreviewPromptRequest { session, channel })
            .await
            .expect("preview")
            .into_inner()
    }

    /// Every session of every agent.
    pub async fn list_sessions(&self) -> Vec<openclaw_proto::agent::v1::Session> {
        self.client()
            .await
            .list_sessions(openclaw_proto::agent::v1::ListSessionsRequest::default())
            .await
            .expect("list")
            .into_inner()
            .sessions
    }

    /// Runs `request` to its end (each event within 60 s); every event of its stream.
    pub async fn run_events(
        &self,
        request: openclaw_proto::agent::v1::RunRequest,
    ) -> Vec<openclaw_proto::agent::v1::RunEvent> {
        let mut stream = self.open_run(request).await;
        let mut events = Vec::new();
        loop {
            let next = tokio::time::timeout(Duration::from_secs(60), stream.message())
                .await
                .expect("an event within 60 s")
                .expect("stream");
            let Some(event) = next else { return events };
            events.push(event);
        }
    }

    /// Runs `request` to its end; the events without their stream positions.
    pub async fn run_to_end(
        &self,
        request: openclaw_proto::agent::v1::RunRequest,
    ) -> Vec<openclaw_proto::agent::v1::run_event::Event> {
        self.run_events(request)
            .await
            .into_iter()
            .map(|e| e.event.expect("event"))
            .collect()
    }

    /// Runs `message` in the default agent's main session to its end; its events.
    pub async fn run_message(
        &self,
        message: &str,
    ) -> Vec<openclaw_proto::agent::v1::run_event::Event> {
        self.run_to_end(openclaw_proto::agent::v1::RunRequest {
            message: message.into(),
            ..Default::default()
        })
        .await
    }

    /// WatchSession on the default agent's main session (which must exist).
    pub async fn watch(&self) -> tonic::Streaming<openclaw_proto::agent::v1::RunEvent> {
        self.client()
            .await
            .watch_session(openclaw_proto::agent::v1::WatchSessionRequest { session: None })
            .await
            .expect("watch")
            .into_inner()
    }

    /// SIGTERM equivalent: stop accepting, drain, flush sessions.
    pub async fn stop(mut self) -> tempfile::TempDir {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("serve task").expect("serve result");
        }
        self.dir.take().expect("dir")
    }

    /// Every line of the default agent's main session as sent by GetTranscript (the header
    /// first, with an empty id).
    pub async fn transcript_entries(&self) -> Vec<openclaw_proto::agent::v1::TranscriptEntry> {
        use openclaw_proto::agent::v1 as pb;
        let mut stream = self
            .client()
            .await
            .get_transcript(pb::GetTranscriptRequest { session: None })
            .await
            .expect("transcript")
            .into_inner();
        let mut out: Vec<pb::TranscriptEntry> = Vec::new();
        let mut continuing = false;
        while let Some(item) = stream.message().await.expect("item") {
            if let Some(pb::transcript_item::Item::Entry(e)) = item.item {
                // An entry over 1 MiB comes in parts: join them.
                match out.last_mut() {
                    Some(head) if continuing => head.json.push_str(&e.json),
                    _ => out.push(e.clone()),
                }
                continuing = e.json_continues;
            }
        }
        out
    }

    /// The main session's message entries as (role, message JSON).
    pub async fn transcript_messages(&self) -> Vec<(String, serde_json::Value)> {
        self.transcript_entries()
            .await
            .into_iter()
            .filter(|e| !e.role.is_empty())
            .map(|e| {
                let entry: serde_json::Value = serde_json::from_str(&e.json).expect("entry json");
                (e.role, entry["message"].clone())
            })
            .collect()
    }

    /// Every entry of the default agent's main session (not the header), as JSON.
    pub async fn transcript_json(&self) -> Vec<serde_json::Value> {
        self.transcript_entries()
            .await
            .into_iter()
            .filter(|e| !e.id.is_empty())
            .map(|e| serde_json::from_str(&e.json).expect("entry json"))
            .collect()
    }

    /// The temporary root (home dir; state under `state/`).
    pub fn root(&self) -> &std::path::Path {
        self.dir.as_ref().expect("dir").path()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A real prompt-service on 127.0.0.1:0 (stopped on drop).
pub struct PromptService {
    pub endpoint: String,
    _stop: oneshot::Sender<()>,
}

impl PromptService {
    pub async fn start() -> Self {
        Self::start_on(TcpListener::bind("127.0.0.1:0").await.expect("bind")).await
    }

    /// On a listener already bound (a port clients were given before).
    pub async fn start_on(listener: TcpListener) -> Self {
        let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(prompt_server::serve(
            listener,
            prompt_server::ServeConfig::default(),
            async {
                let _ = stopped.await;
            },
        ));
        Self {
            endpoint,
            _stop: stop,
        }
    }

    pub fn client(&self) -> Arc<dyn prompt_client::PromptSource> {
        Arc::new(
            prompt_client::GrpcPromptSource::connect_lazy(
                &self.endpoint,
                prompt_client::RetryPolicy::default(),
            )
            .expect("client"),
        )
    }
}

/// The RFC 3339 instant `ms` milliseconds from now.
pub fn instant_in(ms: u64) -> String {
    let at = std::time::SystemTime::now() + Duration::from_millis(ms);
    let ms = at
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis();
    jiff::Timestamp::from_millisecond(i64::try_from(ms).expect("ms"))
        .expect("instant")
        .to_string()
}

/// The agent-service binary with an empty environment but `RUST_LOG=info`, its stderr piped
/// and killed when dropped.
pub fn binary() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-service"));
    command
        .env_clear()
        .env("RUST_LOG", "info")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    command
}

/// Options of a runtime kept in `dir`: its state under `state/`, `openclaw.json` (written with
/// `config` when there is one) and HOME at the root, the system clock and `prompt`.
pub fn runtime_options(
    dir: &Path,
    config: Option<&str>,
    prompt: Arc<dyn prompt_client::PromptSource>,
) -> RuntimeOptions {
    let settings = Settings {
        state_dir: dir.join("state"),
        config_path: dir.join("openclaw.json"),
        home_dir: dir.to_path_buf(),
    };
    if let Some(text) = config {
        std::fs::write(&settings.config_path, text).expect("write config");
    }
    RuntimeOptions::new(
        settings,
        Arc::new(MapEnv::of([("HOME", dir.display().to_string())])),
        Arc::new(openclaw_transcript::SystemClock),
        prompt,
    )
}

/// agent-service + a real prompt-service over gRPC + a fake model server
/// speaking `format`, with the default agent on model `fake/test-model`.
pub struct Harness {
    pub service: Service,
    pub fake: agent_testkit::FakeServerHandle,
    pub _prompt: PromptService,
}

impl Harness {
    /// `defaults_extra` goes inside `agents.defaults` (start it with a
    /// comma), `top_extra` at the top level (end it with a comma).
    /// Telegram allows sender "42" only.
    pub async fn start(
        format: agent_testkit::WireFormat,
        defaults_extra: &str,
        top_extra: &str,
    ) -> Self {
        Self::start_sandboxed(
            format,
            defaults_extra,
            top_extra,
            agent_runtime::DEFAULT_SANDBOX_PROGRAM,
        )
        .await
    }

    /// [`Harness::start`] with the bubblewrap program sandboxed sessions use.
    pub async fn start_sandboxed(
        format: agent_testkit::WireFormat,
        defaults_extra: &str,
        top_extra: &str,
        sandbox_program: &str,
    ) -> Self {
        let (base_url, fake) = agent_testkit::FakeServer::start(format)
            .await
            .expect("fake server");
        let prompt = PromptService::start().await;
        let dir = tempfile::tempdir().expect("dir");
        let config = config(&base_url, format, defaults_extra, top_extra);
        let service =
            Service::start_sandboxed(dir, Some(&config), prompt.client(), sandbox_program).await;
        Self {
            service,
            fake,
            _prompt: prompt,
        }
    }

    /// Stops agent-service and hands back its state directory, the fake model server and
    /// prompt-service, both still serving, for a restart on the same state.
    pub async fn stop(
        self,
    ) -> (
        tempfile::TempDir,
        agent_testkit::FakeServerHandle,
        PromptService,
    ) {
        let Self {
            service,
            fake,
            _prompt,
        } = self;
        (service.stop().await, fake, _prompt)
    }
}

/// A config for the fake model server at `base_url`; see [`Harness::start`].
pub fn config(
    base_url: &str,
    format: agent_testkit::WireFormat,
    defaults_extra: &str,
    top_extra: &str,
) -> String {
    format!(
        r#"{{
  agents: {{ defaults: {{ model: "fake/test-model", userTimezone: "Europe/Berlin" {defaults_extra} }} }},
  models: {{ providers: {{ fake: {{ baseUrl: "{base_url}", api: "{}", apiKey: "test-key", models: [{{ id: "test-model" }}] }} }} }},
  channels: {{ telegram: {{ allowFrom: ["42"] }} }},
  {top_extra}
}}"#,
        format.api()
    )
}

/// Now, ms since the epoch (journal lines and job files carry such times).
pub fn now_ms() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_millis(),
    )
    .expect("ms")
}
