//! Starts agent-service in-process on 127.0.0.1:0 over a temporary state dir.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use agent_runtime::{MapEnv, Runtime, RuntimeOptions, Settings};
use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use tokio::{net::TcpListener, sync::oneshot, task::JoinHandle};
use tonic::transport::Channel;

use super::calls::call;

/// How [`Service::start_with`] starts a service; the defaults are the binary's.
pub struct StartOptions {
    /// How the gRPC API is served.
    pub serve_config: agent_server::ServeConfig,
    /// The bubblewrap program sandboxed sessions use.
    pub sandbox_program: String,
    /// Where the service is installed (its bundled `skills/` and `docs/` live there).
    pub install_dir: Option<PathBuf>,
    /// How long a session may stay idle before it is released.
    pub idle_release: Duration,
}

impl Default for StartOptions {
    fn default() -> Self {
        Self {
            serve_config: agent_server::ServeConfig::default(),
            sandbox_program: agent_runtime::DEFAULT_SANDBOX_PROGRAM.into(),
            install_dir: None,
            idle_release: agent_runtime::DEFAULT_IDLE_RELEASE,
        }
    }
}

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
        Self::start_with(dir, config, prompt, StartOptions::default()).await
    }

    /// A service started as `options` say.
    pub async fn start_with(
        dir: tempfile::TempDir,
        config: Option<&str>,
        prompt: Arc<dyn prompt_client::PromptSource>,
        options: StartOptions,
    ) -> Self {
        let runtime = Runtime::start(RuntimeOptions {
            sandbox_program: options.sandbox_program.into(),
            install_dir: options.install_dir,
            idle_release: Some(options.idle_release),
            // As `main` does: the runtime starts work of its own only for the sessions this
            // replica owns.
            owns: options.serve_config.replica.session_owner(),
            ..runtime_options(dir.path(), config, prompt)
        })
        .expect("runtime");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(agent_server::serve(
            listener,
            options.serve_config,
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
        request: impl tonic::IntoRequest<pb::RunRequest>,
    ) -> tonic::Streaming<pb::RunEvent> {
        call!(self, run, request)
    }

    /// `Setup` with the defaults: the default agent's workspace and config.
    pub async fn setup(&self) -> pb::SetupResponse {
        call!(self, setup, pb::SetupRequest::default())
    }

    /// The default agent's main session.
    pub async fn session(&self) -> pb::Session {
        call!(self, get_session, pb::GetSessionRequest { session: None })
    }

    /// `PreviewPrompt` for `session` (None: the default agent's main session) as a client on
    /// `channel` would see it.
    pub async fn preview(
        &self,
        session: Option<pb::SessionRef>,
        channel: Option<pb::ChannelContext>,
    ) -> pb::PreviewPromptResponse {
        call!(
            self,
            preview_prompt,
            pb::PreviewPromptRequest { session, channel }
        )
    }

    /// Creates the default agent's session `key` (or finds it); the session.
    pub async fn create_session(&self, key: &str) -> pb::Session {
        let request = pb::CreateSessionRequest {
            session_key: key.into(),
            ..Default::default()
        };
        call!(self, create_session, request)
            .session
            .expect("session")
    }

    /// Every session of every agent.
    pub async fn list_sessions(&self) -> Vec<pb::Session> {
        call!(self, list_sessions, pb::ListSessionsRequest::default()).sessions
    }

    /// Runs `request` to its end (each event within 60 s); every event of its stream.
    pub async fn run_events(&self, request: pb::RunRequest) -> Vec<pb::RunEvent> {
        let mut stream = self.open_run(request).await;
        super::run_events::read_until_within(&mut stream, Duration::from_secs(60), |_| false).await
    }

    /// Runs `request` to its end; the events without their stream positions.
    pub async fn run_to_end(&self, request: pb::RunRequest) -> Vec<pb::run_event::Event> {
        self.run_events(request)
            .await
            .into_iter()
            .map(|e| e.event.expect("event"))
            .collect()
    }

    /// Runs `message` in the default agent's main session to its end; its events.
    pub async fn run_message(&self, message: &str) -> Vec<pb::run_event::Event> {
        self.run_to_end(pb::RunRequest {
            message: message.into(),
            ..Default::default()
        })
        .await
    }

    /// WatchSession on the default agent's main session (which must exist).
    pub async fn watch(&self) -> tonic::Streaming<pb::RunEvent> {
        call!(
            self,
            watch_session,
            pb::WatchSessionRequest { session: None }
        )
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
    pub async fn transcript_entries(&self) -> Vec<pb::TranscriptEntry> {
        let mut stream = call!(
            self,
            get_transcript,
            pb::GetTranscriptRequest { session: None }
        );
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
    launched(tokio::process::Command::new(env!(
        "CARGO_BIN_EXE_agent-service"
    )))
}

/// `command` (the binary, or a program that execs it) as [`binary`] starts it.
pub fn launched(mut command: tokio::process::Command) -> tokio::process::Command {
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
        Self::start_in(format, |base_url, _| {
            let options = StartOptions {
                sandbox_program: sandbox_program.into(),
                ..StartOptions::default()
            };
            (config(base_url, format, defaults_extra, top_extra), options)
        })
        .await
    }

    /// The three services, agent-service over a new state dir; `prepare` is given the fake
    /// model server's URL and the dir, may fill the dir, and says the config and how to start.
    pub async fn start_in(
        format: agent_testkit::WireFormat,
        prepare: impl FnOnce(&str, &Path) -> (String, StartOptions),
    ) -> Self {
        let (base_url, fake) = agent_testkit::FakeServer::start(format)
            .await
            .expect("fake server");
        let prompt = PromptService::start().await;
        let dir = tempfile::tempdir().expect("dir");
        let (config, options) = prepare(&base_url, dir.path());
        let service = Service::start_with(dir, Some(&config), prompt.client(), options).await;
        Self {
            service,
            fake,
            _prompt: prompt,
        }
    }

    /// agent-service started again over the state `dir` a [`Harness::stop`] handed back (its
    /// config file is there; prompts rendered in process), with the same fake model server.
    pub async fn resume(
        dir: tempfile::TempDir,
        fake: agent_testkit::FakeServerHandle,
        prompt: PromptService,
    ) -> Self {
        Self {
            service: Service::start_in(dir, None).await,
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

/// `top_extra` of [`Harness::start`]: an approval nobody answers expires after a second.
pub const APPROVALS_EXPIRE_AT_ONCE: &str = "tools: { exec: { approvalTimeoutSec: 1 } },";

/// `defaults_extra` of [`Harness::start`]: block streaming on, in blocks of `min` to `max`
/// characters.
pub fn block_streaming(min: usize, max: usize) -> String {
    format!(
        r#", blockStreamingDefault: "on", blockStreamingChunk: {{ minChars: {min}, maxChars: {max} }}"#
    )
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
