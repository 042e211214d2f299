//! `prompt-service`: serve the PromptService, preview a render, or probe health.

use std::{io::Write, process::ExitCode, time::Duration};

use clap::{Parser, Subcommand};
use prompt_server::{PreviewFormat, ServeConfig};
use service_kit::{ServerArgs, refuse};

/// Prefix of the environment variables.
const ENV_PREFIX: &str = "PROMPT_SERVICE";

/// Renders the system prompts of OpenClaw agents, over gRPC. Stateless: every
/// answer follows from the request alone.
#[derive(Debug, Parser)]
#[command(name = "prompt-service", version, long_about = None)]
struct Cli {
    /// Address to listen on (HOST:PORT).
    #[arg(long, env = "PROMPT_SERVICE_LISTEN", default_value = "127.0.0.1:50051")]
    listen: String,
    #[command(flatten)]
    server: ServerArgs,
    /// Longest a call may run, in seconds, whatever its own grpc-timeout (which is honoured
    /// when shorter); then DEADLINE_EXCEEDED.
    #[arg(
        long,
        env = "PROMPT_SERVICE_REQUEST_TIMEOUT_SECS",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..),
        help_heading = "Overload"
    )]
    request_timeout_secs: u64,
    /// Also serve the bench echo baseline (used by prompt-loadgen only).
    #[arg(long, hide = true)]
    bench_echo: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the gRPC API (the default).
    Serve,
    /// Render a RenderSystemPromptRequest written as JSON5 and print exactly what the RPC returns.
    Render {
        /// Path of the JSON5 request file ("-" for stdin).
        request: String,
        /// What to print.
        #[arg(long, value_enum, default_value = "text")]
        format: PreviewFormat,
    },
    /// Exit 0 when the server at --listen reports SERVING (container health checks). TLS
    /// settings are the top-level flags (or their variables), as for serving.
    Healthcheck {
        /// Address of the server to probe (default: the top-level --listen).
        #[arg(long)]
        listen: Option<String>,
    },
}

/// mimalloc instead of the system allocator: a render request makes a few
/// hundred small allocations on whichever worker thread runs it, and glibc's
/// malloc spent a measurable share of the server's time consolidating and
/// clearing pages under load (see README "Performance").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    if let Err(problem) = service_kit::deny_same_user_inspection() {
        eprintln!("error: {problem}");
        return ExitCode::FAILURE;
    }
    let runtime = match service_kit::runtime(None) {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: {error}");
            return error.exit_code();
        }
    };
    // One `error:` line, never a Debug dump with a backtrace (whatever
    // RUST_BACKTRACE says): these are the user's errors (a port in use, a
    // bad certificate), not the program's.
    runtime.block_on(run()).unwrap_or_else(|error| {
        eprintln!("error: {error:#}");
        ExitCode::FAILURE
    })
}

async fn run() -> anyhow::Result<ExitCode> {
    let cli: Cli = ServerArgs::parse_cli(ENV_PREFIX);
    service_kit::init_tracing(cli.server.log_format);
    match cli.command.as_ref().unwrap_or(&Command::Serve) {
        Command::Serve => serve(&cli).await,
        Command::Render { request, format } => Ok(render(request, *format)),
        Command::Healthcheck { listen } => {
            let listen = listen.as_deref().unwrap_or(&cli.listen);
            Ok(service_kit::healthcheck(listen, &cli.server.security, ENV_PREFIX).await)
        }
    }
}

async fn serve(cli: &Cli) -> anyhow::Result<ExitCode> {
    let (addr, security) = match cli.server.resolve(&cli.listen, ENV_PREFIX) {
        Ok(resolved) => resolved,
        Err(problems) => return Ok(refuse(&problems)),
    };
    let listener = service_kit::bind(addr, "--listen").await?;
    if let Some(metrics) = &cli.server.metrics_listen {
        service_kit::metrics::listen(metrics, &[prompt_server::metrics::CATALOG]).await?;
    }
    let config = ServeConfig {
        max_request_bytes: cli.server.max_request_bytes,
        compress_responses: cli.server.compress_responses,
        drain_timeout: cli.server.drain_timeout(),
        bench_echo: cli.bench_echo,
        request_timeout: Duration::from_secs(cli.request_timeout_secs),
        security,
        overload: cli.server.overload.config(),
        connections: cli.server.connections(),
    };
    prompt_server::serve(listener, config, service_kit::shutdown_signal()).await?;
    service_kit::flush_traces();
    Ok(ExitCode::SUCCESS)
}

/// `render`: the preview, printed to stdout. A reader that goes away early
/// (`| head`) ends it quietly.
fn render(request: &str, format: PreviewFormat) -> ExitCode {
    let text = if request == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| format!("reading stdin: {e}"))
    } else {
        std::fs::read_to_string(request).map_err(|e| format!("reading {request}: {e}"))
    };
    let text = match text {
        Ok(text) => text,
        Err(problem) => {
            eprintln!("error: {problem}");
            return ExitCode::from(66);
        }
    };
    match prompt_server::preview(&text, format) {
        Ok(out) => match writeln!(std::io::stdout().lock(), "{out}") {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: writing the preview: {e}");
                ExitCode::from(74)
            }
        },
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(65)
        }
    }
}
