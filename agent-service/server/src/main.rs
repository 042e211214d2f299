//! `agent-service`: serve the AgentService, or probe a running one's health. The flags and
//! what they mean are `agent_server::flags`; this file starts what they describe.

use std::{process::ExitCode, sync::Arc};

use agent_runtime::{ProcessEnv, Runtime, RuntimeOptions};
use agent_server::flags::{self, Command, ENV_PREFIX, EXIT_CANTCREAT};
use service_kit::refuse;

/// Threads for blocking work (transcript appends and fsyncs, journal writes, index
/// rewrites). More would not make one disk faster, and each thread keeps its own stack and
/// allocator heap: tokio's default of 512 let a thousand busy sessions start 512 of them.
const BLOCKING_THREADS: usize = 64;

/// jemalloc instead of the system allocator, with its background threads
/// purging freed pages: glibc's malloc kept the memory of every session it
/// ever served (thousands of sessions released while idle left the process
/// at its peak), while jemalloc gives pages back a few seconds after they
/// are freed (see README "Performance").
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    // First of all, while nothing in this process owns a descriptor above stderr.
    if let Err(problem) = service_kit::close_inherited_descriptors() {
        eprintln!("error: {problem}");
        return ExitCode::FAILURE;
    }
    // Before any secret is read: the commands agents run on the host are this user's too.
    if let Err(problem) = service_kit::deny_same_user_inspection() {
        eprintln!("error: {problem}");
        return ExitCode::FAILURE;
    }
    raise_open_file_limit();
    let runtime = match service_kit::runtime(Some(BLOCKING_THREADS)) {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: {error}");
            return error.exit_code();
        }
    };
    // One `error:` line, never a Debug dump with a backtrace (whatever
    // RUST_BACKTRACE says): these are the user's errors (a port in use, an
    // unreadable state directory), not the program's.
    runtime.block_on(run()).unwrap_or_else(|error| {
        eprintln!("error: {error:#}");
        ExitCode::FAILURE
    })
}

/// Raises the soft limit on open files to the hard limit: an active session holds about
/// three descriptors (transcript, journal, its share of connections), so a thousand of them
/// need more than the usual soft limit of 1,024. A limit that cannot be raised stays.
fn raise_open_file_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
}

async fn run() -> anyhow::Result<ExitCode> {
    let parsed = match flags::parse(std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(code) => return Ok(code),
    };
    let cli = &parsed.cli;
    // Log lines pass through the runtime's redactor: a secret quoted in any message (a
    // provider's error body, a config value) is replaced before it is written.
    let redactor = openclaw_secrets::Redactor::new();
    service_kit::init_tracing_to(
        cli.server.log_format,
        openclaw_secrets::RedactingWriter::new(redactor.clone(), std::io::stderr),
    );
    if let Some(Command::Healthcheck { listen }) = &cli.command {
        if !parsed.refused.is_empty() {
            return Ok(refuse(&parsed.refused));
        }
        let listen = listen.as_deref().unwrap_or(&cli.listen);
        return Ok(service_kit::healthcheck(listen, &cli.server.security, ENV_PREFIX).await);
    }
    let launch = match parsed.resolve(&ProcessEnv, &std::env::current_dir()?) {
        Ok(launch) => launch,
        Err(problems) => return Ok(refuse(&problems)),
    };
    // Every listener and the state dir before the runtime starts: a port in use or a
    // read-only directory is one clear line, never a server that reports ready and fails.
    let bound = match launch.bind().await {
        Ok(bound) => bound,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(EXIT_CANTCREAT));
        }
    };
    let (prompt, prompt_reachability) = launch.prompt_source()?;
    tracing::info!(prompt = %prompt.describe(), "prompt source");
    // The inspector shows each model call's prompt: it sees the renders on their way to the
    // runtime (unchanged).
    let renders = Arc::new(agent_inspector::RenderLog::default());
    let prompt: Arc<dyn prompt_client::PromptSource> = if bound.inspector.is_some() {
        Arc::new(agent_inspector::RecordingPromptSource::new(
            prompt,
            Arc::clone(&renders),
        ))
    } else {
        prompt
    };
    // The service's own tokens are secrets like provider keys: redacted everywhere, and every
    // variable holding one is kept from the commands the runtime starts.
    redactor.replace_source("auth", launch.own.secrets());
    let metrics = launch.metrics_listen.map(|addr| addr.to_string());
    let runtime = Runtime::start(RuntimeOptions {
        sandbox_program: launch.sandbox_program.clone(),
        redactor,
        install_dir: agent_runtime::install_dir(),
        idle_release: launch.idle_release,
        cron_forward: launch.cron_router.map(agent_server::CronRouter::forward),
        owns: launch.replica.session_owner(),
        open_listeners: agent_server::open_listeners(
            launch.listen,
            &launch.security,
            launch.inspector_listen,
            metrics.as_deref(),
        ),
        ..RuntimeOptions::new(
            launch.settings,
            Arc::new(ProcessEnv),
            Arc::new(openclaw_transcript::SystemClock),
            prompt,
        )
    })?;
    if let Some(listener) = bound.metrics {
        service_kit::metrics::serve(listener, &[agent_runtime::metrics::CATALOG])?;
    }
    let connections = launch.server.connections();
    let inspector = bound.inspector.map(|listener| {
        let inspector = agent_inspector::Inspector::new(
            Arc::clone(&runtime),
            renders,
            launch.security.tokens.clone(),
        );
        tokio::spawn(async move {
            let served =
                agent_inspector::serve(listener, inspector, connections, std::future::pending());
            if let Err(error) = served.await {
                tracing::error!(%error, "inspector stopped");
            }
        })
    });
    let config = agent_server::ServeConfig {
        max_request_bytes: launch.server.max_request_bytes,
        compress_responses: launch.server.compress_responses,
        drain_timeout: launch.server.drain_timeout(),
        security: launch.security,
        overload: launch.server.overload.config(),
        prompt_reachability,
        connections,
        replica: launch.replica,
    };
    agent_server::serve(bound.api, config, runtime, service_kit::shutdown_signal()).await?;
    if let Some(inspector) = inspector {
        inspector.abort();
    }
    service_kit::flush_traces();
    Ok(ExitCode::SUCCESS)
}
