//! The command-line flags both server binaries take, the start-up checks
//! they share and the `healthcheck` subcommand's probe.
//!
//! Each binary flattens [`ServerArgs`] into its own CLI
//! (`#[command(flatten)]`) and parses with [`ServerArgs::parse_cli`], which
//! names every flag's environment variable after the binary's prefix
//! (`PROMPT_SERVICE_DRAIN_SECS`, `AGENT_SERVICE_DRAIN_SECS`).

use std::{net::SocketAddr, process::ExitCode, time::Duration};

use crate::{LogFormat, OverloadConfig, SecurityArgs, ServerSecurity};

/// Flags of both servers.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// Largest request message accepted, in bytes (bigger: RESOURCE_EXHAUSTED).
    #[arg(long, default_value_t = crate::DEFAULT_MAX_REQUEST_BYTES)]
    pub max_request_bytes: usize,
    /// Seconds in-flight calls may run after SIGTERM/SIGINT.
    #[arg(long, default_value_t = 10)]
    pub drain_secs: u64,
    /// Log format on stderr: text or json (filter with RUST_LOG).
    #[arg(long, default_value = "text")]
    pub log_format: LogFormat,
    /// Serve Prometheus metrics over HTTP on HOST:PORT, at GET /metrics (unset: no
    /// metrics endpoint).
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_listen: Option<String>,
    /// Connections each listener (the API, the inspector) holds at once; past it new ones
    /// wait in the kernel's backlog while the open ones are served.
    #[arg(
        long,
        default_value_t = crate::connections::DEFAULT_MAX_CONNECTIONS,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
        value_name = "N"
    )]
    pub max_connections: usize,
    /// Seconds a connection may carry nothing (no request, no keepalive answer) before it
    /// is closed.
    #[arg(
        long,
        default_value_t = crate::connections::DEFAULT_IDLE_TIMEOUT.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..),
        value_name = "SECS"
    )]
    pub connection_idle_secs: u64,
    /// Gzip responses for clients that accept gzip. Off by default: responses go out
    /// uncompressed, because gzip costs about 30 ms of CPU per MB sent and on a LAN moves the
    /// bytes slower than sending them as they are; worth it only on slow links. Gzipped
    /// requests are accepted either way.
    #[arg(long)]
    pub compress_responses: bool,

    /// Authentication and TLS.
    #[command(flatten)]
    pub security: SecurityArgs,

    /// Load shedding.
    #[command(flatten)]
    pub overload: OverloadArgs,
}

/// The load-shedding caps ([`OverloadConfig`]).
#[derive(Debug, Clone, clap::Args)]
pub struct OverloadArgs {
    /// Unary calls in progress at once; past it a call gets RESOURCE_EXHAUSTED at once
    /// instead of queueing (health checks are exempt).
    #[arg(
        long,
        default_value_t = 256,
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Overload"
    )]
    pub max_concurrent_requests: u32,
    /// Streaming calls open at once, a pool apart so long streams never starve unary
    /// calls; past it RESOURCE_EXHAUSTED at once.
    #[arg(
        long,
        default_value_t = 256,
        value_parser = clap::value_parser!(u32).range(1..),
        help_heading = "Overload"
    )]
    pub max_concurrent_streams: u32,
}

impl OverloadArgs {
    /// The caps as the overload layer takes them.
    pub fn config(&self) -> OverloadConfig {
        OverloadConfig {
            max_concurrent_requests: self.max_concurrent_requests as usize,
            max_concurrent_streams: self.max_concurrent_streams as usize,
        }
    }
}

impl ServerArgs {
    /// Each flag's environment variable, after the binary's prefix and `_`.
    const VARS: [(&'static str, &'static str); 9] = [
        ("max_request_bytes", "MAX_REQUEST_BYTES"),
        ("max_connections", "MAX_CONNECTIONS"),
        ("connection_idle_secs", "CONNECTION_IDLE_SECS"),
        ("compress_responses", "COMPRESS_RESPONSES"),
        ("drain_secs", "DRAIN_SECS"),
        ("log_format", "LOG_FORMAT"),
        ("metrics_listen", "METRICS_LISTEN"),
        ("max_concurrent_requests", "MAX_CONCURRENT_REQUESTS"),
        ("max_concurrent_streams", "MAX_CONCURRENT_STREAMS"),
    ];

    /// `command` (which flattens these flags) with their variables, and
    /// the security flags', named `<prefix>_...`.
    pub fn with_env(command: clap::Command, prefix: &str) -> clap::Command {
        let command = Self::VARS.iter().fold(command, |command, (id, var)| {
            command.mut_arg(*id, |arg| arg.env(format!("{prefix}_{var}")))
        });
        SecurityArgs::with_env(command, prefix)
    }

    /// Parses the process's command line into `C`, which flattens these
    /// flags, with their variables named `<prefix>_...`; on bad input prints
    /// clap's message and exits.
    pub fn parse_cli<C: clap::Parser>(prefix: &str) -> C {
        let matches = Self::with_env(C::command(), prefix).get_matches();
        C::from_arg_matches(&matches).unwrap_or_else(|error| error.exit())
    }

    /// The listen address and the security to serve it with, checked before
    /// anything binds: a server that would serve other hosts
    /// unauthenticated never opens its port. The problems otherwise, for
    /// [`refuse`].
    pub fn resolve(
        &self,
        listen: &str,
        prefix: &str,
    ) -> Result<(SocketAddr, ServerSecurity), Vec<String>> {
        let addr = crate::parse_listen(listen).map_err(|e| vec![format!("--listen: {e}")])?;
        let security = ServerSecurity::resolve(&self.security.flags(), prefix)?;
        security.check_listen(addr, prefix).map_err(|e| vec![e])?;
        Ok((addr, security))
    }

    /// The drain timeout.
    pub fn drain_timeout(&self) -> Duration {
        Duration::from_secs(self.drain_secs)
    }

    /// The bounds every listener is served with.
    pub fn connections(&self) -> crate::ConnectionLimits {
        crate::ConnectionLimits {
            max_connections: self.max_connections,
            idle_timeout: Duration::from_secs(self.connection_idle_secs),
        }
    }
}

/// Prints each problem and returns the usage exit code (EX_USAGE, 64).
pub fn refuse(problems: &[String]) -> ExitCode {
    for problem in problems {
        eprintln!("error: {problem}");
    }
    ExitCode::from(64)
}

/// The `healthcheck` subcommand: exit 0 when the server at `listen`
/// reports SERVING. Health is open, so no token is sent; over TLS when the
/// server serves TLS (the same `--tls-cert` setting), verified with
/// `--tls-ca`.
pub async fn healthcheck(listen: &str, security: &SecurityArgs, prefix: &str) -> ExitCode {
    let target =
        crate::parse_listen(listen).and_then(|addr| security.flags().probe_target(addr, prefix));
    let (endpoint, tls) = match target {
        Ok(target) => target,
        Err(problem) => return refuse(&[problem]),
    };
    let serving = crate::probe_with(&endpoint, "", Duration::from_secs(3), tls.as_ref())
        .await
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            false
        });
    if serving {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
