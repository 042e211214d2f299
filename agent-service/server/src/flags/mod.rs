//! agent-service's command line: every flag with the text `--help` shows, and the
//! parse that turns any bad flag into exit 64. What the values mean together (addresses,
//! credentials, paths) is checked in [`resolve`], which reports every problem at once.
//!
//! It reads no file and binds nothing except through [`Cli::resolve`], so tests parse and
//! resolve command lines without a server.

mod collect;
mod resolve;

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    process::ExitCode,
};

use agent_runtime::Env;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use service_kit::ServerArgs;

pub use resolve::{Bound, Launch, PromptSource};

/// Prefix of the environment variables.
pub const ENV_PREFIX: &str = "AGENT_SERVICE";

/// Exit code of a bad flag or value (EX_USAGE).
pub const EXIT_USAGE: u8 = 64;
/// Exit code when a listener cannot be bound or the state dir cannot be written
/// (EX_CANTCREAT, as `openclaw up`).
pub const EXIT_CANTCREAT: u8 = 73;

/// A command line as parsed, with the values clap refused (a number that is not one, an
/// unknown flag): each is left at its default in [`Self::cli`], and reported by
/// [`Self::resolve`] with every other problem.
#[derive(Debug)]
pub struct Parsed {
    /// The flags (a refused one at its default).
    pub cli: Cli,
    /// One line per refused value, naming the flag (and its variable) and the value.
    pub refused: Vec<String>,
}

impl Parsed {
    /// [`Cli::resolve`], with the refused values first: every problem of the command line
    /// at once.
    pub fn resolve(self, env: &dyn Env, cwd: &Path) -> Result<Launch, Vec<String>> {
        let Self { cli, mut refused } = self;
        match cli.resolve(env, cwd) {
            Ok(launch) if refused.is_empty() => Ok(launch),
            Ok(_) => Err(refused),
            Err(problems) => {
                refused.extend(problems);
                Err(refused)
            }
        }
    }
}

/// Parses `args` (the program name first) with every flag's environment variable. `--help`
/// and `--version` print and answer exit 0. A value clap refuses (see `collect`) is listed
/// in [`Parsed::refused`]; any other problem clap finds (an unknown subcommand) prints the
/// values refused so far and clap's message, and answers [`EXIT_USAGE`].
pub fn parse<I, T>(args: I) -> Result<Parsed, ExitCode>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let command = || ServerArgs::with_env(Cli::command(), ENV_PREFIX);
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let parsed =
        collect::matches(command, args).and_then(|(matches, refused)| match Cli::from_arg_matches(
            &matches,
        ) {
            Ok(cli) => Ok(Parsed { cli, refused }),
            Err(error) => Err((error, refused)),
        });
    parsed.map_err(|(error, refused)| {
        for line in &refused {
            eprintln!("error: {line}");
        }
        let _ = error.print();
        if error.use_stderr() {
            ExitCode::from(EXIT_USAGE)
        } else {
            ExitCode::SUCCESS
        }
    })
}

/// Runs OpenClaw agents over gRPC: their workspaces, sessions and turns,
/// with prompts from prompt-service (or rendered in this process).
#[derive(Debug, Parser)]
#[command(name = "agent-service", version, long_about = None)]
pub struct Cli {
    /// Address to listen on (HOST:PORT).
    #[arg(long, env = "AGENT_SERVICE_LISTEN", default_value = "127.0.0.1:50052")]
    pub listen: String,
    /// State directory (sessions, workspaces); default $OPENCLAW_STATE_DIR or ~/.openclaw.
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Config file; default $OPENCLAW_CONFIG_PATH or <state dir>/openclaw.json.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// prompt-service address (for example http://127.0.0.1:50051). Unset: render
    /// prompts in this process (the single-binary embedded mode).
    #[arg(long, env = "PROMPT_SERVICE_URL")]
    pub prompt_service: Option<String>,
    /// Serve the web inspector (sessions, transcripts, prompt layers, cache breaks; read-only)
    /// over HTTP on HOST:PORT (unset: none). A non-loopback address needs bearer tokens
    /// (--tokens / --tokens-file), which the inspector then asks for too.
    #[arg(long, env = "AGENT_SERVICE_INSPECTOR_LISTEN", value_name = "HOST:PORT")]
    pub inspector_listen: Option<String>,
    /// The bubblewrap program sandboxed sessions run their commands in (a name is looked up
    /// on PATH). Checked at start-up; if it cannot isolate here, sandboxed runs are refused.
    #[arg(long, env = "AGENT_SERVICE_SANDBOX_BWRAP", default_value = agent_runtime::DEFAULT_SANDBOX_PROGRAM, value_name = "PROGRAM")]
    pub sandbox_bwrap: std::ffi::OsString,
    /// Seconds a session stays idle (no run, no watcher, no background command) before its
    /// transcript file, buffers and memory are released; the next call on it opens it again
    /// and reads its transcript. 0 keeps every session open until shutdown.
    #[arg(
        long,
        env = "AGENT_SERVICE_IDLE_RELEASE_SECS",
        value_name = "SECS",
        default_value_t = agent_runtime::DEFAULT_IDLE_RELEASE.as_secs()
    )]
    pub idle_release_secs: u64,

    /// The router in front of every replica (for example http://openclaw-router:50052). Set
    /// it when several replicas share the agents: an agent's cron jobs then live on the
    /// replica that owns its main session, and the `cron` tool of a session on any replica
    /// manages them through the router. Unset: one replica, jobs kept here.
    #[arg(long, env = "AGENT_SERVICE_ROUTER_URL", value_name = "URL")]
    pub router_url: Option<String>,
    /// File whose first token the calls through --router-url carry (default: the first of
    /// this service's own accepted tokens, from --tokens-file or --tokens, which every replica
    /// accepts).
    #[arg(long, env = "AGENT_SERVICE_ROUTER_TOKEN_FILE", value_name = "PATH")]
    pub router_token_file: Option<PathBuf>,

    /// This replica's place among those behind the router, <ordinal>/<count> (the ordinal may
    /// be the StatefulSet pod name: agent-service-1/2). Calls about sessions another replica
    /// owns are refused. Unset: one replica, which owns every session.
    #[arg(long, env = "AGENT_SERVICE_REPLICA", value_name = "ORDINAL/COUNT")]
    pub replica: Option<crate::Replica>,

    /// The flags both servers share (limits, drain, security, overload).
    #[command(flatten)]
    pub server: ServerArgs,

    /// How to call prompt-service.
    #[command(flatten)]
    pub prompt_client: PromptClientArgs,

    /// What to do [default: serve].
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The flags for calling prompt-service (credentials, TLS, retries), under one heading of
/// `--help`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Calling prompt-service")]
pub struct PromptClientArgs {
    /// File whose first token is sent to prompt-service as `authorization: Bearer <token>`
    /// (prompt-service's own --tokens-file will do: keep the newest token first).
    #[arg(long, env = "PROMPT_SERVICE_TOKEN_FILE", value_name = "PATH")]
    pub prompt_service_token_file: Option<PathBuf>,
    /// Bearer token sent to prompt-service (prefer --prompt-service-token-file).
    #[arg(
        long,
        env = "PROMPT_SERVICE_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub prompt_service_token: Option<String>,
    /// CA (PEM) that signed prompt-service's certificate; needed for an https:// --prompt-service.
    #[arg(long, env = "PROMPT_SERVICE_CA", value_name = "PEM")]
    pub prompt_service_ca: Option<PathBuf>,
    /// Client certificate (PEM) presented to prompt-service when it requires one (mTLS).
    #[arg(long, env = "PROMPT_SERVICE_CLIENT_CERT", value_name = "PEM")]
    pub prompt_service_client_cert: Option<PathBuf>,
    /// Private key (PEM) of --prompt-service-client-cert.
    #[arg(long, env = "PROMPT_SERVICE_CLIENT_KEY", value_name = "PEM")]
    pub prompt_service_client_key: Option<PathBuf>,
    /// Name expected in prompt-service's certificate (default: the host of --prompt-service).
    #[arg(long, env = "PROMPT_SERVICE_SERVER_NAME", value_name = "NAME")]
    pub prompt_service_server_name: Option<String>,
    /// How long a prompt-service call keeps retrying a service that cannot be reached
    /// (refused connections, shed load) before the call fails UNAVAILABLE, in milliseconds,
    /// whatever the call's own deadline.
    #[arg(
        long,
        env = "PROMPT_SERVICE_RETRY_BUDGET_MS",
        value_name = "MS",
        default_value_t = 2000,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub prompt_service_retry_budget_ms: u64,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the gRPC API (the default).
    Serve,
    /// Exit 0 when the server at --listen reports SERVING (container health checks). TLS
    /// settings are the top-level flags (or their variables), as for serving.
    Healthcheck {
        /// Address of the server to probe (default: the top-level --listen).
        #[arg(long)]
        listen: Option<String>,
    },
}
