//! The command line: every command and flag, with the text `--help` shows.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use prompt_server::PreviewFormat;

use crate::{client::DEFAULT_SERVER, error::EXIT_CODES_HELP};

/// OpenClaw agents from the command line: run prompt-service and
/// agent-service together, chat with an agent, and inspect its sessions,
/// prompt, context and skills.
#[derive(Debug, Parser)]
#[command(
    name = "openclaw",
    version,
    about,
    long_about = "OpenClaw agents from the command line: run prompt-service and agent-service \
together (`openclaw up`), chat with an agent (`openclaw chat`), check that the services answer \
(`openclaw status`), inspect its sessions, prompt, context and skills, and decide the commands \
waiting for approval (`openclaw approvals`).\n\nQuick start, no \
account or network needed: `openclaw demo`.",
    after_long_help = EXIT_CODES_HELP
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start prompt-service and agent-service together in this process.
    ///
    /// agent-service renders every prompt through the local prompt-service
    /// over gRPC, as in production; sessions are JSONL transcripts under the
    /// state dir; nothing else is needed. Stops gracefully on Ctrl-C or
    /// SIGTERM (agent-service first, so every session is flushed).
    Up(UpArgs),
    /// The quick start: `up --demo`, then one demo turn with a tool call,
    /// then keep serving until Ctrl-C.
    ///
    /// Uses the offline scripted model (no account, no network) and the state
    /// dir ./.openclaw-demo. Listens on the default ports when they are free,
    /// else on free ones, and prints how to chat from another terminal.
    Demo(DemoArgs),
    /// Chat with an agent: one message with -m, else read messages from stdin.
    ///
    /// Assistant text streams to stdout; tool calls, thinking and usage go
    /// to stderr as short dimmed lines (no colour when stdout is not a
    /// terminal or NO_COLOR is set). Interactive commands: /new, /context,
    /// /context detail, /preview, /help, /quit; /queue and /reasoning go to
    /// the runtime, which answers them itself.
    ///
    /// When a command the agent wants to run needs approval, chat shows it
    /// (command, reason, id, expiry) and asks: answer o (once), a (always),
    /// d (deny), or Enter to leave it pending. Interactively the next input
    /// line answers; with -m the terminal is asked when stdin is one, else
    /// chat prints how to decide with `openclaw approvals` and keeps waiting.
    Chat(ChatArgs),
    /// Whether the services answer and how they are set up: agent-service's
    /// address, version and readiness, prompt-service (in process or remote,
    /// reachable), the config file, TLS and caller authentication, the
    /// default agent and model, and each agent with its session count.
    Status(ServerArgs),
    /// Create openclaw.json when missing and seed the agent workspaces.
    Setup(SetupArgs),
    /// List the configured agents (the default marked with *).
    Agents(ServerArgs),
    /// List sessions, show a transcript, reset or delete a session.
    Sessions(SessionsArgs),
    /// Print the exact system prompt the session's next turn would send.
    Preview(PreviewArgs),
    /// Print what the next prompt holds, like `/context list` (or `/context detail`).
    Context(ContextArgs),
    /// List an agent's skills, name collisions and skipped candidates.
    Skills(SkillsArgs),
    /// List, add, change, remove or run an agent's cron jobs.
    ///
    /// A due job runs in its own session `agent:<id>:cron:<job>` (or, with
    /// --main, as a message in the main session). Schedules: a cron
    /// expression such as "0 9 * * MON-FRI" (in --tz, else the agent's
    /// userTimezone, else UTC), "every 15m", or "at 2026-12-24T18:00:00+01:00".
    Cron(CronArgs),
    /// List, approve or deny the commands waiting for a person, and edit
    /// an agent's exec allowlist.
    ///
    /// When a command an agent wants to run is not allowlisted, its tool
    /// call waits for a decision (until tools.exec.approvalTimeoutSec, after
    /// which tools.exec.askFallback decides). Allow it once, allow it always
    /// (its executables join the agent's allowlist, so the same command
    /// runs unasked next time), or deny it (the model is told it was
    /// refused). Every decision records who made it (--by).
    Approvals(ApprovalsArgs),
}

impl Command {
    /// True for the commands that run the services (they log to stderr).
    pub fn serves(&self) -> bool {
        matches!(self, Self::Up(_) | Self::Demo(_))
    }

    /// How the services' logs are written, for the commands that run them.
    pub fn observe(&self) -> Option<&ObserveArgs> {
        match self {
            Self::Up(args) => Some(&args.observe),
            Self::Demo(args) => Some(&args.observe),
            _ => None,
        }
    }
}

/// Logs and metrics of the services `up` and `demo` run, as the two
/// service binaries offer them.
#[derive(Debug, Clone, Args)]
pub struct ObserveArgs {
    /// Log format on stderr: text or json (filter with RUST_LOG).
    #[arg(
        long,
        value_name = "FORMAT",
        env = "OPENCLAW_LOG_FORMAT",
        default_value = "text"
    )]
    pub log_format: service_kit::LogFormat,
    /// Serve both services' Prometheus metrics over HTTP on HOST:PORT, at
    /// GET /metrics (unset: no metrics endpoint).
    #[arg(long, value_name = "HOST:PORT", env = "OPENCLAW_METRICS_LISTEN")]
    pub metrics_listen: Option<String>,
}

/// Flags of `openclaw up`.
#[derive(Debug, Clone, Args)]
pub struct UpArgs {
    /// State directory: sessions, workspaces, proof markers [default:
    /// $OPENCLAW_STATE_DIR, else ~/.openclaw; with --demo ./.openclaw-demo].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Config file [default: $OPENCLAW_CONFIG_PATH, else <state dir>/openclaw.json].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address prompt-service listens on (HOST:PORT).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50051")]
    pub prompt_listen: String,
    /// Address agent-service listens on (HOST:PORT); `openclaw chat --server` dials it.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50052")]
    pub agent_listen: String,
    /// Use the offline scripted model: state dir ./.openclaw-demo unless
    /// --state-dir is given, and a demo openclaw.json (plus its script)
    /// written there when the config file does not exist yet.
    #[arg(long)]
    pub demo: bool,
    /// Seconds in-flight calls may run after Ctrl-C/SIGTERM, per service.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub drain_secs: u64,
    /// Logs and metrics.
    #[command(flatten)]
    pub observe: ObserveArgs,
}

/// Flags of `openclaw demo`.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// State directory [default: ./.openclaw-demo].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Address for prompt-service [default: 127.0.0.1:50051, or a free port when taken].
    #[arg(long, value_name = "ADDR")]
    pub prompt_listen: Option<String>,
    /// Address for agent-service [default: 127.0.0.1:50052, or a free port when taken].
    #[arg(long, value_name = "ADDR")]
    pub agent_listen: Option<String>,
    /// The message of the demo turn.
    #[arg(short, long, value_name = "TEXT", default_value = crate::demo::DEMO_MESSAGE)]
    pub message: String,
    /// Logs and metrics.
    #[command(flatten)]
    pub observe: ObserveArgs,
}

/// Where agent-service is and how to reach it: the address, credentials and TLS
/// (as `deploy/` sets them up), and how long to wait.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// agent-service address (as printed by `openclaw up`), or the router in front of its
    /// replicas. A bare HOST:PORT is http://, or https:// when --tls-ca is given.
    #[arg(
        long,
        value_name = "URL",
        env = "OPENCLAW_SERVER",
        hide_env_values = true,
        default_value = DEFAULT_SERVER,
        global = true
    )]
    pub server: String,
    /// Credentials, TLS and how long to wait.
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// A flag's secret value (a bearer token): used as given, shown by `Debug` as
/// `<redacted>`.
#[derive(Clone)]
pub struct Secret(pub String);

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        Ok(Self(value.to_owned()))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How to reach agent-service once its address is known: credentials, TLS and how long to
/// wait, under the "Connection" heading of `--help`.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Connection")]
pub struct ConnectionArgs {
    /// Bearer token sent as `authorization: Bearer <token>` (prefer --token-file or the
    /// variable: a command line is visible to every local user).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "OPENCLAW_TOKEN",
        hide_env_values = true,
        global = true
    )]
    pub token: Option<Secret>,
    /// File whose first token is sent (agent-service's own --tokens-file will do).
    #[arg(long, value_name = "PATH", env = "OPENCLAW_TOKEN_FILE", global = true)]
    pub token_file: Option<PathBuf>,
    /// CA (PEM) that signed agent-service's certificate: speak TLS (https://).
    #[arg(long, value_name = "PEM", env = "OPENCLAW_TLS_CA", global = true)]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (PEM) for a server that requires one (mTLS; with --tls-key).
    #[arg(long, value_name = "PEM", env = "OPENCLAW_TLS_CERT", global = true)]
    pub tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long, value_name = "PEM", env = "OPENCLAW_TLS_KEY", global = true)]
    pub tls_key: Option<PathBuf>,
    /// Name expected in the server's certificate [default: the host of --server].
    #[arg(
        long,
        value_name = "NAME",
        env = "OPENCLAW_TLS_SERVER_NAME",
        global = true
    )]
    pub tls_server_name: Option<String>,
    /// Seconds to wait for the connection (TCP and TLS) before giving up (exit 69).
    #[arg(
        long,
        value_name = "SECS",
        env = "OPENCLAW_CONNECT_TIMEOUT",
        default_value_t = crate::client::DEFAULT_CONNECT_TIMEOUT.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..),
        global = true
    )]
    pub connect_timeout: u64,
    /// Seconds a call may take to answer (exit 75 past it). A streamed answer (chat,
    /// transcripts) must start within it.
    #[arg(
        long,
        value_name = "SECS",
        env = "OPENCLAW_CALL_TIMEOUT",
        default_value_t = crate::client::DEFAULT_CALL_TIMEOUT.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..),
        global = true
    )]
    pub call_timeout: u64,
    /// Seconds a streamed answer (a chat turn, `cron run`) may stay silent before the
    /// command gives up (exit 75); a run that keeps streaming is never cut.
    #[arg(
        long,
        value_name = "SECS",
        env = "OPENCLAW_IDLE_TIMEOUT",
        default_value_t = crate::client::DEFAULT_IDLE_TIMEOUT.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..),
        global = true
    )]
    pub idle_timeout: u64,
}

/// Flags of `openclaw chat`.
#[derive(Debug, Clone, Args)]
pub struct ChatArgs {
    /// Agent id [default: the default agent].
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Session key, e.g. `main` or `agent:main:work` [default: the agent's main session].
    #[arg(long, value_name = "KEY")]
    pub session: Option<String>,
    /// Send this one message, print the answer and exit (non-zero when the run fails).
    #[arg(short, long, value_name = "MESSAGE")]
    pub message: Option<String>,
    /// Also show each model call's prompt evidence (size, stable-prefix hash, changes).
    #[arg(short, long)]
    pub verbose: bool,
    /// Where agent-service is.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Flags of `openclaw setup`.
#[derive(Debug, Clone, Args)]
pub struct SetupArgs {
    /// Only this agent [default: every configured agent].
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Clear the workspace and its proof marker first, so a fresh workspace
    /// is seeded (the old one is moved aside to <workspace>.reset-<n>, never
    /// deleted).
    #[arg(long)]
    pub full_reset: bool,
    /// Where agent-service is.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Flags of `openclaw sessions`.
#[derive(Debug, Clone, Args)]
pub struct SessionsArgs {
    /// What to do with sessions [default: list].
    #[command(subcommand)]
    pub action: Option<SessionsAction>,
    /// Agent id [default: the default agent].
    #[arg(long, value_name = "ID", global = true)]
    pub agent: Option<String>,
    /// Where agent-service is.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `openclaw sessions ...`.
#[derive(Debug, Clone, Subcommand)]
pub enum SessionsAction {
    /// List the agent's sessions, most recently updated first.
    List,
    /// Print a session's transcript readably, then its load report.
    Show {
        /// Session key (`main` means `agent:<id>:main`).
        key: String,
    },
    /// Give the key a new session id (the old transcript is archived).
    Reset {
        /// Session key.
        key: String,
    },
    /// Remove the session (the transcript is archived, not erased).
    Delete {
        /// Session key.
        key: String,
    },
}

/// Flags of `openclaw cron`.
#[derive(Debug, Clone, Args)]
pub struct CronArgs {
    /// What to do with cron jobs [default: list].
    #[command(subcommand)]
    pub action: Option<CronAction>,
    /// Agent id [default: the default agent].
    #[arg(long, value_name = "ID", global = true)]
    pub agent: Option<String>,
    /// Where agent-service is.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `openclaw cron ...`.
#[derive(Debug, Clone, Subcommand)]
pub enum CronAction {
    /// List the agent's jobs with their next run and last outcome.
    List,
    /// Create a job.
    Add {
        /// When it runs: a cron expression, "every <n>(s|m|h|d)" or "at <RFC 3339 time>".
        schedule: String,
        /// The scheduled prompt.
        prompt: String,
        /// A short name for listings [default: the first words of the prompt].
        #[arg(long)]
        name: Option<String>,
        /// IANA time zone of a cron expression [default: the agent's].
        #[arg(long)]
        tz: Option<String>,
        /// Run as a message in the agent's main session instead of the job's own session.
        #[arg(long)]
        main: bool,
        /// Run with the prompt alone, byte for byte, and none of the workspace context (not
        /// with --main).
        #[arg(long)]
        lightweight: bool,
        /// Also send the run's reply to this session (a key; "main" for the main session).
        #[arg(long, value_name = "KEY")]
        deliver_to: Option<String>,
        /// Create it disabled.
        #[arg(long)]
        disabled: bool,
    },
    /// Enable a job.
    Enable {
        /// Job id.
        id: String,
    },
    /// Disable a job (kept, never due).
    Disable {
        /// Job id.
        id: String,
    },
    /// Remove a job.
    Rm {
        /// Job id.
        id: String,
    },
    /// Run a job now and wait for the run to end (its schedule is unchanged).
    Run {
        /// Job id.
        id: String,
    },
}

/// Flags of `openclaw approvals`.
#[derive(Debug, Clone, Args)]
pub struct ApprovalsArgs {
    /// What to do [default: list the pending approvals].
    #[command(subcommand)]
    pub action: Option<ApprovalsAction>,
    /// Agent id [default: the default agent].
    #[arg(long, value_name = "ID", global = true)]
    pub agent: Option<String>,
    /// Where agent-service is.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `openclaw approvals ...`.
#[derive(Debug, Clone, Subcommand)]
pub enum ApprovalsAction {
    /// The approvals waiting for a decision: id, session, state, command,
    /// reason, and when each expires (with --all, also those decided since
    /// the service started, with who decided).
    List {
        /// Only this session's approvals (a key such as `main`, or an id).
        #[arg(long, value_name = "KEY")]
        session: Option<String>,
        /// Also list the approvals already decided, expired or cancelled.
        #[arg(long)]
        all: bool,
    },
    /// Let a waiting command run (once, or with --always from now on).
    Approve {
        /// The approval id (from `openclaw approvals list` or the chat).
        id: String,
        /// Also add the command's executables to the agent's allowlist, so
        /// the same command runs unasked next time.
        #[arg(long)]
        always: bool,
        /// Who decides, recorded with the decision [default: $USER, else "cli"].
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
    /// Refuse a waiting command: it does not run and the model is told so.
    Deny {
        /// The approval id.
        id: String,
        /// Who decides, recorded with the decision [default: $USER, else "cli"].
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
    /// The agent's exec allowlist: commands whose executables match an
    /// entry run without asking.
    Allowlist {
        /// What to do with the allowlist [default: list].
        #[command(subcommand)]
        action: Option<AllowlistAction>,
    },
}

/// `openclaw approvals allowlist ...`.
#[derive(Debug, Clone, Subcommand)]
pub enum AllowlistAction {
    /// List the entries: those of the approvals file (with who added them
    /// and when), then those of the config.
    List,
    /// Add a pattern to the approvals file: an absolute glob over resolved
    /// executable paths, e.g. /usr/bin/git or /usr/local/bin/*.
    Add {
        /// The pattern (absolute).
        pattern: String,
        /// Who adds it, recorded with the entry [default: $USER, else "cli"].
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
    /// Remove a pattern from the approvals file (entries of the config are
    /// removed in the config).
    #[command(alias = "rm")]
    Remove {
        /// The pattern, exactly as listed.
        pattern: String,
    },
}

/// Flags of `openclaw preview`.
#[derive(Debug, Clone, Args)]
pub struct PreviewArgs {
    /// Agent id [default: the default agent].
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Session key [default: the agent's main session]; it need not exist yet.
    #[arg(long, value_name = "KEY")]
    pub session: Option<String>,
    /// What to print: the whole prompt, one side of the cache boundary, or
    /// the render response as canonical protobuf JSON.
    #[arg(long, value_enum, default_value = "text")]
    pub part: PreviewFormat,
    /// Where agent-service is.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Flags of `openclaw context`.
#[derive(Debug, Clone, Args)]
pub struct ContextArgs {
    /// Agent id [default: the default agent].
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Session key [default: the agent's main session].
    #[arg(long, value_name = "KEY")]
    pub session: Option<String>,
    /// Also list the largest skills and tools (`/context detail`).
    #[arg(long)]
    pub detail: bool,
    /// Where agent-service is.
    #[command(flatten)]
    pub server: ServerArgs,
}

/// Flags of `openclaw skills`.
#[derive(Debug, Clone, Args)]
pub struct SkillsArgs {
    /// Agent id [default: the default agent].
    #[arg(long, value_name = "ID")]
    pub agent: Option<String>,
    /// Where agent-service is.
    #[command(flatten)]
    pub server: ServerArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn sessions_defaults_to_list_and_takes_agent_anywhere() -> Result<(), clap::Error> {
        let cli = Cli::try_parse_from(["openclaw", "sessions", "--agent", "work"])?;
        assert!(matches!(
            cli.command,
            Command::Sessions(SessionsArgs { action: None, agent: Some(ref a), .. }) if a == "work"
        ));
        let cli = Cli::try_parse_from([
            "openclaw", "sessions", "show", "main", "--agent", "w", "--server", "h:1",
        ])?;
        assert!(matches!(
            cli.command,
            Command::Sessions(SessionsArgs {
                action: Some(SessionsAction::Show { ref key }),
                agent: Some(_),
                server: ServerArgs { ref server, .. },
            }) if key == "main" && server == "h:1"
        ));
        Ok(())
    }

    /// The class: a secret flag value reaching a log line or an error through `Debug`. The
    /// token is shown redacted wherever the parsed command line is formatted.
    #[test]
    fn the_token_never_shows_in_debug_output() -> Result<(), clap::Error> {
        let token = "cli-debug-token-0123456789";
        for args in [
            vec!["openclaw", "status", "--token", token],
            vec!["openclaw", "chat", "-m", "hi", "--token", token],
            vec!["openclaw", "sessions", "show", "main", "--token", token],
        ] {
            let shown = format!("{:?}", Cli::try_parse_from(args)?);
            assert!(!shown.contains(token), "{shown}");
            assert!(shown.contains("token: Some(<redacted>)"), "{shown}");
        }
        Ok(())
    }

    #[test]
    fn approvals_defaults_to_list_and_takes_agent_anywhere() -> Result<(), clap::Error> {
        let cli = Cli::try_parse_from(["openclaw", "approvals"])?;
        assert!(matches!(
            cli.command,
            Command::Approvals(ApprovalsArgs { action: None, .. })
        ));
        let cli = Cli::try_parse_from([
            "openclaw",
            "approvals",
            "approve",
            "a1",
            "--always",
            "--agent",
            "w",
        ])?;
        assert!(matches!(
            cli.command,
            Command::Approvals(ApprovalsArgs {
                action: Some(ApprovalsAction::Approve { ref id, always: true, by: None }),
                agent: Some(ref agent),
                ..
            }) if id == "a1" && agent == "w"
        ));
        let cli = Cli::try_parse_from([
            "openclaw",
            "approvals",
            "--agent",
            "w",
            "allowlist",
            "rm",
            "/usr/bin/git",
        ])?;
        assert!(matches!(
            cli.command,
            Command::Approvals(ApprovalsArgs {
                action: Some(ApprovalsAction::Allowlist {
                    action: Some(AllowlistAction::Remove { ref pattern })
                }),
                ..
            }) if pattern == "/usr/bin/git"
        ));
        // `deny` takes no --always.
        assert!(Cli::try_parse_from(["openclaw", "approvals", "deny", "a1", "--always"]).is_err());
        Ok(())
    }
}
