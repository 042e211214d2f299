//! One soak from start to report: set up, load with faults, stop cleanly,
//! read the files, restart once more for `GetTranscript`, stop, reconcile.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use agent_testkit::WireFormat;
use openclaw_proto::agent::v1 as pb;
use tokio::task::JoinSet;

use crate::{
    client::{self, ClientOutcome, ClientPlan},
    cluster::{Clock, Cluster, Launch, Layout},
    error::SoakError,
    faults::{FaultKind, Schedule},
    model::{FakeModel, MODEL},
    procs,
    reconcile::{self, Evidence},
    report::Report,
    rng::Rng,
    transcripts,
};

/// How long the closing probe of each session may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the service binaries are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binaries {
    /// The `prompt-service` binary.
    pub prompt_service: PathBuf,
    /// The `agent-service` binary.
    pub agent_service: PathBuf,
}

impl Binaries {
    /// Both binaries in the directory of `exe` or its parent: cargo puts
    /// binaries in `target/<profile>/` and test executables in
    /// `target/<profile>/deps/`.
    pub fn near(exe: &Path) -> Result<Self, SoakError> {
        let dir = exe.parent().unwrap_or(Path::new("."));
        let candidates = [Some(dir), dir.parent()];
        for dir in candidates.into_iter().flatten() {
            let found = Self {
                prompt_service: dir.join("prompt-service"),
                agent_service: dir.join("agent-service"),
            };
            if found.prompt_service.is_file() && found.agent_service.is_file() {
                return Ok(found);
            }
        }
        Err(SoakError::MissingBinary(dir.join("agent-service")))
    }
}

/// Which runtime the soak's agent runs on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Runtime {
    /// agent-service's own agent loop.
    #[default]
    Embedded,
    /// The Codex runtime: agent-service drives a real `codex app-server`
    /// child (the pinned version) against the fake model's Responses API.
    Codex,
}

impl Runtime {
    /// How it is printed.
    pub fn name(self) -> &'static str {
        match self {
            Self::Embedded => "embedded",
            Self::Codex => "codex",
        }
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The runtime of the soak's agent.
    pub runtime: Runtime,
    /// The `codex` binary for [`Runtime::Codex`]; `None`: the pinned
    /// version, installed into the workspace's `.tools/` on first use.
    pub codex_command: Option<PathBuf>,
    /// How long the clients send messages.
    pub duration: Duration,
    /// Conversation clients.
    pub clients: usize,
    /// Sessions each client owns at a time.
    pub sessions_per_client: usize,
    /// Acknowledged messages after which a client moves a session slot to a
    /// new key (keeps transcripts and prompts short on long runs).
    pub messages_per_session: usize,
    /// Pause between a client's messages, picked in this range.
    pub think_time: (Duration, Duration),
    /// Faults to inject (none: a baseline without faults).
    pub faults: Vec<FaultKind>,
    /// Pause before each fault, picked in this range.
    pub fault_interval: (Duration, Duration),
    /// Seed of every random choice.
    pub seed: u64,
    /// The fake model's wire format (the Codex runtime speaks only
    /// [`WireFormat::OpenAiResponses`]).
    pub wire: WireFormat,
    /// The service binaries.
    pub binaries: Binaries,
    /// agent-service's and prompt-service's `--drain-secs`.
    pub drain_secs: u64,
    /// Work directory (state, config, logs); `None`: a temporary one.
    pub work_dir: Option<PathBuf>,
    /// Keep a temporary work directory even when the soak passes (it is
    /// always kept when it fails).
    pub keep_work_dir: bool,
    /// Bearer token sent to agent-service, if it requires one.
    pub token: Option<String>,
    /// Extra environment for both services (`KEY=VALUE`).
    pub service_env: Vec<(String, String)>,
    /// How long a prompt-service outage fault keeps it down.
    pub prompt_outage: Duration,
    /// How long a hung-model fault keeps the fake model from answering.
    pub model_hang: Duration,
    /// Percent of client messages sent as poison (too large for a transcript line once
    /// stored; each must be refused before it is acknowledged).
    pub poison_percent: u64,
}

impl Options {
    /// A short soak on the embedded runtime with every fault, using
    /// `binaries`.
    pub fn short(binaries: Binaries) -> Self {
        Self {
            runtime: Runtime::Embedded,
            codex_command: None,
            duration: Duration::from_secs(20),
            clients: 2,
            sessions_per_client: 2,
            messages_per_session: 40,
            think_time: (Duration::ZERO, Duration::from_millis(400)),
            faults: FaultKind::defaults(Runtime::Embedded),
            fault_interval: (Duration::from_secs(2), Duration::from_secs(4)),
            seed: 1,
            wire: WireFormat::AnthropicMessages,
            binaries,
            drain_secs: 5,
            work_dir: None,
            keep_work_dir: false,
            token: None,
            service_env: Vec::new(),
            prompt_outage: Duration::from_secs(3),
            model_hang: Duration::from_secs(4),
            poison_percent: 2,
        }
    }

    /// [`Options::short`] on the Codex runtime (its wire format, and every
    /// fault including the Codex kill).
    pub fn short_codex(binaries: Binaries) -> Self {
        Self {
            runtime: Runtime::Codex,
            wire: WireFormat::OpenAiResponses,
            faults: FaultKind::defaults(Runtime::Codex),
            ..Self::short(binaries)
        }
    }
}

/// Runs one soak and reports what it found. Errors mean the soak itself
/// could not be carried out; the services' failures are in the report.
pub async fn run(options: Options) -> Result<Report, SoakError> {
    for binary in [
        &options.binaries.prompt_service,
        &options.binaries.agent_service,
    ] {
        if !binary.is_file() {
            return Err(SoakError::MissingBinary(binary.clone()));
        }
    }
    if options.clients == 0 {
        return Err(SoakError::Invalid(
            "--clients must be at least 1".to_owned(),
        ));
    }
    if options.runtime == Runtime::Codex && options.wire != WireFormat::OpenAiResponses {
        return Err(SoakError::Invalid(format!(
            "--runtime codex speaks only the Responses API: use --wire openai-responses (or leave --wire out), not {:?}",
            options.wire
        )));
    }
    if let Some(kind) = options
        .faults
        .iter()
        .find(|kind| !kind.applies_to(options.runtime))
    {
        return Err(SoakError::Invalid(format!(
            "the fault \"{}\" does not apply to --runtime {}",
            kind.name(),
            options.runtime.name()
        )));
    }
    let temp = match &options.work_dir {
        Some(_) => None,
        None => Some(
            tempfile::Builder::new()
                .prefix("openclaw-soak-")
                .tempdir()
                .map_err(SoakError::io("create a temporary work directory"))?,
        ),
    };
    let work = match (&options.work_dir, &temp) {
        (Some(dir), _) => dir.clone(),
        (None, Some(temp)) => temp.path().to_path_buf(),
        (None, None) => return Err(SoakError::Invalid("no work directory".to_owned())),
    };
    let outcome = soak(&options, &work).await;
    // Whatever the outcome, no Codex process of this soak outlives it.
    let leftovers = match options.runtime {
        Runtime::Codex => sweep_codex(&work.join(CODEX_HOME)).await,
        Runtime::Embedded => Vec::new(),
    };
    let mut report = outcome?;
    report.codex.left_at_end = leftovers;
    let keep = options.work_dir.is_some() || options.keep_work_dir || !report.passed();
    if keep {
        if let Some(temp) = temp {
            // Kept for the logs and files a failure needs.
            let _ = temp.keep();
        }
        report.work_dir = Some(work);
    }
    Ok(report)
}

/// The Codex home of a soak on the Codex runtime, in its work directory.
const CODEX_HOME: &str = "codex-home";

/// SIGKILLs the processes still carrying this soak's Codex home once every
/// agent-service is gone (Codex app-servers that outlived their
/// agent-service, and what they started); returns their pids and names.
async fn sweep_codex(home: &Path) -> Vec<String> {
    let found = procs::with_codex_home(home);
    let named: Vec<String> = found
        .iter()
        .map(|&pid| format!("{pid} ({})", procs::name_of(pid)))
        .collect();
    procs::kill_all(&found);
    procs::wait_gone(&found, Duration::from_secs(5)).await;
    named
}

/// The `codex` binary to run: the one named, or the pinned version
/// (installed on first use; npm runs meanwhile, so off the async threads).
async fn codex_command(options: &Options) -> Result<PathBuf, SoakError> {
    if let Some(command) = &options.codex_command {
        return Ok(command.clone());
    }
    let install = tokio::task::spawn_blocking(codex_peer::CodexInstall::ensure)
        .await
        .map_err(|e| SoakError::Invalid(format!("the Codex install task failed: {e}")))?
        .map_err(SoakError::Codex)?;
    Ok(install.binary().to_path_buf())
}

async fn soak(options: &Options, work: &Path) -> Result<Report, SoakError> {
    let mut rng = Rng::new(options.seed);
    let layout = Layout::under(work)?;
    let codex = match options.runtime {
        Runtime::Codex => {
            let home = work.join(CODEX_HOME);
            std::fs::create_dir_all(&home)
                .map_err(SoakError::io(format!("create {}", home.display())))?;
            Some(Codex {
                command: codex_command(options).await?,
                home,
            })
        }
        Runtime::Embedded => None,
    };
    let model = FakeModel::start(options.wire, rng.fork()).await?;
    write_config(&layout, work, &model, codex.as_ref())?;
    let clock = Clock::start();
    let mut cluster = Cluster::new(
        &Launch {
            prompt_bin: options.binaries.prompt_service.clone(),
            agent_bin: options.binaries.agent_service.clone(),
            layout: &layout,
            drain_secs: options.drain_secs,
            extra_env: &options.service_env,
            prompt_outage: options.prompt_outage,
            model_hang: options.model_hang,
        },
        clock,
    )?;
    cluster.start().await?;
    let endpoint = cluster.agent_endpoint();
    let token = options.token.as_deref();
    let mut agent = client::connect(&endpoint, token)?;
    agent
        .setup(pb::SetupRequest::default())
        .await
        .map_err(SoakError::rpc("Setup"))?;

    // Load, with faults.
    let began = Instant::now();
    let until = began + options.duration;
    let mut clients = JoinSet::new();
    for index in 0..options.clients {
        clients.spawn(client::run_client(ClientPlan {
            index,
            agent: client::connect(&endpoint, token)?,
            rng: rng.fork(),
            sessions: options.sessions_per_client,
            messages_per_session: options.messages_per_session,
            think: options.think_time,
            until,
            clock,
            current: cluster.current(),
            poison_percent: options.poison_percent,
        }));
    }
    let mut faults = Vec::new();
    let mut schedule = Schedule::new(&options.faults, options.fault_interval, rng.fork());
    while let Some((pause, kind)) = schedule.next() {
        if Instant::now() + pause >= until {
            break;
        }
        tokio::time::sleep(pause).await;
        faults.push(cluster.inject(kind, &model).await?);
    }
    let mut outcomes: Vec<ClientOutcome> = Vec::new();
    while let Some(outcome) = clients.join_next().await {
        outcomes.push(outcome.map_err(|e| SoakError::Invalid(format!("a client panicked: {e}")))?);
    }
    let load_time = until.saturating_duration_since(began);
    let model_requests = model.requests();

    // Clean stop, the files, a final restart for GetTranscript, stop again.
    let mut unclean_exits: Vec<String> = faults
        .iter()
        .filter(|f| !f.clean_exit)
        .map(|f| {
            format!(
                "{} at +{:.2} s: {}",
                f.kind.name(),
                f.at.as_secs_f64(),
                f.exit_status
            )
        })
        .collect();
    unclean_exits.extend(cluster.stop().await?);
    let first = transcripts::scan_dir(&layout.state_dir)?;
    let keys: BTreeSet<String> = outcomes.iter().flat_map(|o| o.keys.clone()).collect();
    cluster.start().await?;
    let mut rpc = BTreeMap::new();
    let mut reader = client::connect(&endpoint, token)?;
    for key in &keys {
        rpc.insert(key.clone(), transcripts::scan_rpc(&mut reader, key).await?);
    }
    unclean_exits.extend(cluster.stop().await?);
    let last = transcripts::scan_dir(&layout.state_dir)?;

    let records: Vec<_> = outcomes.iter().flat_map(|o| o.records.clone()).collect();
    let started: BTreeSet<_> = outcomes.iter().flat_map(|o| o.started.clone()).collect();
    let check = reconcile::reconcile(&Evidence {
        records: &records,
        started: &started,
        incarnations: &cluster.incarnations,
        first: &first,
        last: &last,
        rpc: &rpc,
        clock,
    });
    let incarnations = cluster.incarnations.clone();

    // Last, every session must still take a message: none may be wedged.
    cluster.start().await?;
    let probe_client = client::connect(&endpoint, token)?;
    let probed: Vec<String> = keys.iter().cloned().collect();
    let wedged = client::probe_sessions(&probe_client, &probed, PROBE_TIMEOUT).await;
    unclean_exits.extend(cluster.stop().await?);

    let mut poison = client::Poison::default();
    for outcome in &outcomes {
        poison.merge(&outcome.poison);
    }
    let (acked_by_outcome, acked_by_api, attempt_failures) = reconcile::tallies(&records);
    let mut runs = crate::client::RunEnds::default();
    for outcome in &outcomes {
        runs.finished += outcome.runs.finished;
        runs.failed += outcome.runs.failed;
        runs.cut += outcome.runs.cut;
    }
    Ok(Report {
        runtime: options.runtime,
        load_time,
        clients: options.clients,
        sessions: keys.len(),
        attempts: records.iter().map(|r| r.attempts.len() as u64).sum(),
        acked_by_outcome,
        acked_by_api,
        attempt_failures,
        runs,
        model_requests,
        faults,
        incarnations,
        unclean_exits,
        check,
        poison,
        probed: probed.len(),
        wedged,
        codex: cluster.children.clone(),
        work_dir: None,
    })
}

/// The Codex app-server the agent runs on.
struct Codex {
    /// The `codex` binary.
    command: PathBuf,
    /// Its `CODEX_HOME`.
    home: PathBuf,
}

/// `openclaw.json`: the one agent on the fake model (through a Codex
/// app-server when `codex` is given), its workspace in the work directory,
/// and an exec policy that lets the model's `sleep` run (an unset policy
/// would refuse every command, and interrupts need a tool call that is
/// really in flight).
fn write_config(
    layout: &Layout,
    work: &Path,
    model: &FakeModel,
    codex: Option<&Codex>,
) -> Result<(), SoakError> {
    let workspace = work.join("workspace");
    let agent = match codex {
        None => format!(r#"{{ id: "{}", default: true }}"#, transcripts::AGENT),
        // Codex names the model without our provider; its own provider
        // entry points at the same fake server, and it retries nothing
        // (a retry would take a reply queued for another request).
        Some(codex) => format!(
            r#"{{ id: "{}", default: true, model: "{MODEL}", runtime: {{ type: "codex", codex: {{
      command: {}, codexHome: {},
      approvalPolicy: "never", sandbox: "read-only",
      modelProvider: {{ name: "fake", base_url: {}, wire_api: "responses", request_max_retries: 0, stream_max_retries: 0 }},
    }} }} }}"#,
            transcripts::AGENT,
            serde_json::json!(codex.command.display().to_string()),
            serde_json::json!(codex.home.display().to_string()),
            serde_json::json!(model.base_url()),
        ),
    };
    let text = format!(
        r#"// Written by openclaw-soak.
{{
  agents: {{
    defaults: {{ model: "fake/{MODEL}", userTimezone: "UTC", workspace: "{}" }},
    list: [{agent}],
  }},
  tools: {{ exec: {{ security: "allowlist", ask: "off", allowlist: ["/usr/bin/sleep", "/bin/sleep"] }} }},
  models: {{ providers: {{ {} }} }},
}}
"#,
        workspace.display(),
        model.provider_json5()
    );
    std::fs::write(&layout.config, text)
        .map_err(SoakError::io(format!("write {}", layout.config.display())))
}
