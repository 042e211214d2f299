//! `openclaw-soak`: a bounded soak with faults against the real service
//! binaries on loopback. Exit 0 when nothing acknowledged was lost (and the
//! other checks held), 1 when something was, 2 when the soak could not run.

use std::{path::PathBuf, process::ExitCode, time::Duration};

use clap::Parser;
use openclaw_soak::{Binaries, FaultKind, Options, Runtime, WireFormat};

/// Soak prompt-service and agent-service with faults, then reconcile every
/// acknowledged message against the transcripts.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    /// Seconds of load (then it stops by itself).
    #[arg(long, default_value_t = 20)]
    duration: u64,
    /// Conversation clients.
    #[arg(long, default_value_t = 2)]
    clients: usize,
    /// Sessions per client at a time.
    #[arg(long, default_value_t = 2)]
    sessions: usize,
    /// Acknowledged messages before a session slot moves to a new key.
    #[arg(long, default_value_t = 40)]
    messages_per_session: usize,
    /// Longest pause between a client's messages, in ms (each pause is 0..=this).
    #[arg(long, default_value_t = 400)]
    think_ms: u64,
    /// Runtime of the soak's agent: agent-service's own loop, or a real `codex app-server`
    /// child (the pinned version, installed into .tools/ on first use) against the fake
    /// model's Responses API.
    #[arg(long, value_enum, default_value = "embedded")]
    runtime: Runtime,
    /// The `codex` binary for --runtime codex (default: the pinned version).
    #[arg(long)]
    codex: Option<PathBuf>,
    /// Faults to inject (comma-separated; "none" for a baseline). Default with --runtime
    /// embedded: sigterm-agent,sigkill-agent,restart-prompt,prompt-outage,corrupt-index,
    /// corrupt-journal; with --runtime codex: those and sigkill-codex (SIGKILL agent-service's
    /// Codex app-server and its descendants, agent-service keeps running).
    #[arg(long, value_delimiter = ',')]
    faults: Option<Vec<FaultChoice>>,
    /// Shortest and longest pause before a fault, in seconds ("MIN,MAX").
    #[arg(long, value_delimiter = ',', num_args = 2, default_values_t = [2.0, 6.0])]
    fault_interval: Vec<f64>,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Wire format of the fake model (default: anthropic; with --runtime codex,
    /// openai-responses, the only one it takes).
    #[arg(long, value_enum)]
    wire: Option<Wire>,
    /// Directory holding prompt-service and agent-service (default: next to this binary).
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// --drain-secs of both services.
    #[arg(long, default_value_t = 5)]
    drain_secs: u64,
    /// Work directory (state, config, logs); default: a temporary one, kept only on failure.
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Keep the temporary work directory even when the soak passes.
    #[arg(long)]
    keep: bool,
    /// Bearer token for agent-service, when it requires one.
    #[arg(long, env = "OPENCLAW_SOAK_TOKEN")]
    token: Option<String>,
    /// Extra environment for both services, KEY=VALUE (repeatable).
    #[arg(long = "service-env", value_parser = parse_env)]
    service_env: Vec<(String, String)>,
    /// Seconds a prompt-outage fault keeps prompt-service down.
    #[arg(long, default_value_t = 8)]
    prompt_outage_secs: u64,
    /// Seconds a hung-model fault keeps the fake model from answering.
    #[arg(long, default_value_t = 10)]
    model_hang_secs: u64,
    /// Percent of client messages sent as poison (too large for a transcript line once
    /// stored; each must be refused before it is acknowledged). 0 sends none.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(0..=100))]
    poison_percent: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FaultChoice {
    None,
    SigtermAgent,
    SigkillAgent,
    RestartPrompt,
    PromptOutage,
    CorruptIndex,
    CorruptJournal,
    SigkillCodex,
    HungModel,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Wire {
    Anthropic,
    OpenaiResponses,
    ChatCompletions,
}

fn parse_env(value: &str) -> Result<(String, String), String> {
    value
        .split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("{value:?} is not KEY=VALUE"))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    let binaries = match &cli.bin_dir {
        Some(dir) => Binaries {
            prompt_service: dir.join("prompt-service"),
            agent_service: dir.join("agent-service"),
        },
        None => Binaries::near(&std::env::current_exe()?)?,
    };
    let (low, high) = (cli.fault_interval[0], cli.fault_interval[1]);
    let faults = match &cli.faults {
        None => FaultKind::defaults(cli.runtime),
        Some(chosen) => chosen
            .iter()
            .filter_map(|f| match f {
                FaultChoice::None => None,
                FaultChoice::SigtermAgent => Some(FaultKind::SigtermAgent),
                FaultChoice::SigkillAgent => Some(FaultKind::SigkillAgent),
                FaultChoice::RestartPrompt => Some(FaultKind::RestartPrompt),
                FaultChoice::PromptOutage => Some(FaultKind::PromptOutage),
                FaultChoice::CorruptIndex => Some(FaultKind::CorruptIndex),
                FaultChoice::CorruptJournal => Some(FaultKind::CorruptJournal),
                FaultChoice::SigkillCodex => Some(FaultKind::SigkillCodex),
                FaultChoice::HungModel => Some(FaultKind::HungModel),
            })
            .collect(),
    };
    let wire = match (cli.wire, cli.runtime) {
        (Some(Wire::Anthropic), _) | (None, Runtime::Embedded) => WireFormat::AnthropicMessages,
        (Some(Wire::OpenaiResponses), _) | (None, Runtime::Codex) => WireFormat::OpenAiResponses,
        (Some(Wire::ChatCompletions), _) => WireFormat::ChatCompletions,
    };
    let options = Options {
        runtime: cli.runtime,
        codex_command: cli.codex,
        duration: Duration::from_secs(cli.duration),
        clients: cli.clients,
        sessions_per_client: cli.sessions,
        messages_per_session: cli.messages_per_session,
        think_time: (Duration::ZERO, Duration::from_millis(cli.think_ms)),
        faults,
        fault_interval: (
            Duration::try_from_secs_f64(low)?,
            Duration::try_from_secs_f64(high)?,
        ),
        seed: cli.seed,
        wire,
        binaries,
        drain_secs: cli.drain_secs,
        work_dir: cli.work_dir,
        keep_work_dir: cli.keep,
        token: cli.token,
        service_env: cli.service_env,
        prompt_outage: Duration::from_secs(cli.prompt_outage_secs),
        model_hang: Duration::from_secs(cli.model_hang_secs),
        poison_percent: cli.poison_percent,
    };
    match openclaw_soak::run(options).await {
        Ok(report) => {
            println!("{report}");
            Ok(if report.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Err(error) => {
            eprintln!("openclaw-soak: {error}");
            Ok(ExitCode::from(2))
        }
    }
}
