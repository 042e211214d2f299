//! From parsed flags to what agent-service starts with: every address parsed, every
//! credential file read, the state dir and config made absolute. Every problem is reported
//! at once, one line each naming the flag (and its variable) and the value, so an operator
//! fixes a command line in one pass.

use std::{ffi::OsString, net::SocketAddr, path::Path, sync::Arc, time::Duration};

use agent_runtime::{Env, Flags, Settings};
use service_kit::{BearerToken, ClientFlags, ClientSecurity, ServerArgs, ServerSecurity};
use tokio::net::TcpListener;

use super::{Cli, ENV_PREFIX};
use crate::{CronRouter, OwnCredentials};

/// Everything agent-service starts with, checked: what `main` binds, builds and serves.
#[derive(Debug)]
pub struct Launch {
    /// The gRPC API's address (`--listen`).
    pub listen: SocketAddr,
    /// Tokens and TLS of the API.
    pub security: ServerSecurity,
    /// The inspector's address (`--inspector-listen`).
    pub inspector_listen: Option<SocketAddr>,
    /// The metrics endpoint's address (`--metrics-listen`).
    pub metrics_listen: Option<SocketAddr>,
    /// prompt-service's URL and how to call it; None renders in this process.
    pub prompt_service: Option<(String, ClientSecurity)>,
    /// How long a prompt-service call keeps retrying an unreachable service.
    pub prompt_retry: prompt_client::RetryPolicy,
    /// The router cron calls go through (`--router-url`).
    pub cron_router: Option<CronRouter>,
    /// State dir and config path, absolute.
    pub settings: Settings,
    /// The service's own credentials, for the redactor.
    pub own: OwnCredentials,
    /// The bubblewrap program (`--sandbox-bwrap`).
    pub sandbox_program: OsString,
    /// When an idle session is released; None keeps every session open.
    pub idle_release: Option<Duration>,
    /// This replica among those sharing the sessions (`--replica`).
    pub replica: crate::Replica,
    /// The flags both servers share (limits, drain, overload, log format).
    pub server: ServerArgs,
}

/// Where prompts come from, and whether prompt-service answers (None: rendered in process).
pub type PromptSource = (
    Arc<dyn prompt_client::PromptSource>,
    Option<tokio::sync::watch::Receiver<bool>>,
);

/// The listeners of a [`Launch`], bound.
#[derive(Debug)]
pub struct Bound {
    /// The gRPC API's.
    pub api: TcpListener,
    /// The inspector's.
    pub inspector: Option<TcpListener>,
    /// The metrics endpoint's.
    pub metrics: Option<TcpListener>,
}

impl Launch {
    /// Proves the state dir writable and binds every listener, before anything starts:
    /// the error names the directory, or the address and its flag.
    pub async fn bind(&self) -> std::io::Result<Bound> {
        self.settings.check_state_dir()?;
        let api = service_kit::bind(self.listen, "--listen").await?;
        let inspector = match self.inspector_listen {
            Some(addr) => Some(service_kit::bind(addr, "--inspector-listen").await?),
            None => None,
        };
        let metrics = match self.metrics_listen {
            Some(addr) => Some(service_kit::bind(addr, "--metrics-listen").await?),
            None => None,
        };
        Ok(Bound {
            api,
            inspector,
            metrics,
        })
    }

    /// Where prompts come from: a lazily connected prompt-service client (with the
    /// reachability agent-service's readiness follows), or the renderer in this process.
    pub fn prompt_source(&self) -> Result<PromptSource, prompt_client::PromptError> {
        Ok(match &self.prompt_service {
            Some((url, security)) => {
                let grpc = prompt_client::GrpcPromptSource::connect_lazy_with(
                    url,
                    self.prompt_retry,
                    security,
                )?;
                let reachability = grpc.reachability();
                (Arc::new(grpc), Some(reachability))
            }
            None => (Arc::new(prompt_client::InProcessPromptSource::new()?), None),
        })
    }
}

impl Cli {
    /// Checks every flag and its variable, reads the credential files, and takes a relative
    /// state dir or config path from `cwd` ([`agent_runtime::absolute_in`], the rule
    /// `openclaw up` uses too). `env` supplies `HOME` and `OPENCLAW_STATE_DIR` /
    /// `OPENCLAW_CONFIG_PATH`. Every problem is in the error, one line each.
    pub fn resolve(self, env: &dyn Env, cwd: &Path) -> Result<Launch, Vec<String>> {
        let mut problems = Vec::new();
        let listen = take(
            &mut problems,
            service_kit::parse_listen(&self.listen).map_err(|e| vec![format!("--listen: {e}")]),
        );
        let security = take(
            &mut problems,
            ServerSecurity::resolve(&self.server.security.flags(), ENV_PREFIX),
        );
        let inspector_listen = take(
            &mut problems,
            optional_listen(self.inspector_listen.as_deref(), "--inspector-listen"),
        );
        let metrics_listen = take(
            &mut problems,
            optional_listen(self.server.metrics_listen.as_deref(), "--metrics-listen"),
        );
        let prompt_security = take(&mut problems, self.prompt_security());
        let cron_router = take(&mut problems, self.cron_router());
        let flags = Flags {
            state_dir: self.state_dir.clone(),
            config: self.config.clone(),
        };
        let settings = take(
            &mut problems,
            Settings::resolve(&flags, env)
                .map(|settings| settings.anchored(cwd))
                .map_err(|e| vec![e.to_string()]),
        );
        if let (Some(listen), Some(security)) = (listen, &security) {
            take(
                &mut problems,
                security
                    .check_listen(listen, ENV_PREFIX)
                    .map_err(|e| vec![e]),
            );
            if let Some(Some(inspector)) = inspector_listen {
                take(
                    &mut problems,
                    agent_inspector::check_listen(inspector, security.tokens.as_ref())
                        .map_err(|e| vec![e]),
                );
            }
        }
        if let (Some(listen), Some(inspector), Some(metrics)) =
            (listen, inspector_listen, metrics_listen)
        {
            take(
                &mut problems,
                distinct_listeners(listen, inspector, metrics),
            );
        }
        let (
            Some(listen),
            Some(security),
            Some(inspector_listen),
            Some(metrics_listen),
            Some(prompt_security),
            Some(cron_router),
            Some(settings),
        ) = (
            listen,
            security,
            inspector_listen,
            metrics_listen,
            prompt_security,
            cron_router,
            settings,
        )
        else {
            return Err(problems);
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        let own = OwnCredentials {
            tokens: self.server.security.tokens.clone(),
            tokens_file: self.server.security.tokens_file.clone(),
            prompt_token: self.prompt_client.prompt_service_token.clone(),
            prompt_token_file: self.prompt_client.prompt_service_token_file.clone(),
            router_token_file: self.router_token_file.clone(),
        };
        Ok(Launch {
            listen,
            security,
            inspector_listen,
            metrics_listen,
            prompt_service: self.prompt_service.clone().zip(prompt_security),
            prompt_retry: prompt_client::RetryPolicy {
                give_up_after: Duration::from_millis(
                    self.prompt_client.prompt_service_retry_budget_ms,
                ),
                ..prompt_client::RetryPolicy::default()
            },
            cron_router,
            settings,
            own,
            sandbox_program: self.sandbox_bwrap,
            idle_release: (self.idle_release_secs > 0)
                .then(|| Duration::from_secs(self.idle_release_secs)),
            replica: self.replica.unwrap_or_default(),
            server: self.server,
        })
    }

    /// The router cron tool calls go through, with the token they carry.
    fn cron_router(&self) -> Result<Option<crate::CronRouter>, Vec<String>> {
        let Some(url) = &self.router_url else {
            if self.router_token_file.is_some() {
                return Err(vec![
                    "--router-token-file (AGENT_SERVICE_ROUTER_TOKEN_FILE) is set but \
                     --router-url (AGENT_SERVICE_ROUTER_URL) is not"
                        .to_owned(),
                ]);
            }
            return Ok(None);
        };
        let security = &self.server.security;
        let token = match (
            &self.router_token_file,
            &security.tokens_file,
            &security.tokens,
        ) {
            (Some(path), _, _) => Some(BearerToken::from_file(path).map_err(|e| {
                vec![format!(
                    "--router-token-file (AGENT_SERVICE_ROUTER_TOKEN_FILE) {}: {e}",
                    path.display()
                )]
            })?),
            (None, Some(path), _) => Some(BearerToken::from_file(path).map_err(|e| {
                vec![format!(
                    "--tokens-file {}, for --router-url: {e}",
                    path.display()
                )]
            })?),
            (None, None, Some(tokens)) => service_kit::auth::parse_token_list(tokens)
                .and_then(|tokens| tokens.first().map(|t| BearerToken::new(t)).transpose())
                .map_err(|e| vec![format!("--tokens, for --router-url: {e}")])?,
            (None, None, None) => None,
        };
        crate::CronRouter::new(url, token)
            .map(Some)
            .map_err(|e| vec![format!("--router-url (AGENT_SERVICE_ROUTER_URL): {e}")])
    }

    fn prompt_client_flags(&self) -> ClientFlags {
        ClientFlags {
            token: self.prompt_client.prompt_service_token.clone(),
            token_file: self.prompt_client.prompt_service_token_file.clone(),
            ca: self.prompt_client.prompt_service_ca.clone(),
            cert: self.prompt_client.prompt_service_client_cert.clone(),
            key: self.prompt_client.prompt_service_client_key.clone(),
            server_name: self.prompt_client.prompt_service_server_name.clone(),
        }
    }

    /// How to call prompt-service; an error when its credentials are set
    /// but prompts render in this process.
    fn prompt_security(&self) -> Result<Option<ClientSecurity>, Vec<String>> {
        let flags = self.prompt_client_flags();
        match &self.prompt_service {
            Some(url) => {
                ClientSecurity::resolve(&flags, url, "prompt-service", "PROMPT_SERVICE").map(Some)
            }
            None => {
                let set = flags.token.is_some()
                    || flags.token_file.is_some()
                    || flags.ca.is_some()
                    || flags.cert.is_some()
                    || flags.key.is_some();
                if set {
                    Err(vec![
                        "prompt-service credentials (--prompt-service-token*, --prompt-service-ca, \
                         --prompt-service-client-*) are set but --prompt-service \
                         (PROMPT_SERVICE_URL) is not: prompts would render in this process"
                            .to_owned(),
                    ])
                } else {
                    Ok(None)
                }
            }
        }
    }
}

/// The value, or None with its problems added to `problems`.
fn take<T>(problems: &mut Vec<String>, result: Result<T, Vec<String>>) -> Option<T> {
    match result {
        Ok(value) => Some(value),
        Err(found) => {
            problems.extend(found);
            None
        }
    }
}

/// An optional `HOST:PORT` flag, parsed.
fn optional_listen(value: Option<&str>, flag: &str) -> Result<Option<SocketAddr>, Vec<String>> {
    value
        .map(|addr| service_kit::parse_listen(addr).map_err(|e| vec![format!("{flag}: {e}")]))
        .transpose()
}

/// Two listeners on one address would fail to bind only after the runtime started; a
/// port 0 (any free port) never collides.
fn distinct_listeners(
    listen: SocketAddr,
    inspector: Option<SocketAddr>,
    metrics: Option<SocketAddr>,
) -> Result<(), Vec<String>> {
    let named = [
        Some(("--listen", listen)),
        inspector.map(|addr| ("--inspector-listen", addr)),
        metrics.map(|addr| ("--metrics-listen", addr)),
    ];
    let named: Vec<_> = named.into_iter().flatten().collect();
    let mut problems = Vec::new();
    for (i, (flag, addr)) in named.iter().enumerate() {
        for (other, other_addr) in &named[i + 1..] {
            if addr.port() != 0 && addr == other_addr {
                problems.push(format!("{other}: {other_addr} is already {flag}'s address"));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use std::{path::PathBuf, process::ExitCode};

    use agent_runtime::MapEnv;

    use super::*;
    use crate::flags::{EXIT_USAGE, parse};

    fn parsed(args: &[&str]) -> crate::flags::Parsed {
        match parse(std::iter::once("agent-service").chain(args.iter().copied())) {
            Ok(parsed) => parsed,
            Err(code) => panic!("{args:?} did not parse: {code:?}"),
        }
    }

    fn cli(args: &[&str]) -> Cli {
        let parsed = parsed(args);
        assert_eq!(parsed.refused, Vec::<String>::new(), "{args:?}");
        parsed.cli
    }

    fn home() -> MapEnv {
        MapEnv::of([("HOME", "/home/u")])
    }

    fn problems(args: &[&str]) -> Vec<String> {
        match parsed(args).resolve(&home(), Path::new("/srv")) {
            Ok(launch) => panic!("{args:?} resolved: {launch:?}"),
            Err(problems) => problems,
        }
    }

    /// Asserts each line of `found` starts with its prefix in `expect`, holds its detail (the
    /// value, or what would do) and is one line.
    fn assert_lines(found: &[String], expect: &[(&str, &str)]) {
        for ((prefix, detail), line) in expect.iter().zip(found) {
            assert!(
                line.starts_with(prefix),
                "{line} should start with {prefix}"
            );
            assert!(line.contains(detail), "{line} should say {detail}");
            assert!(!line.contains('\n'), "one line each: {line}");
        }
    }

    /// Asserts `args` resolve to exactly one problem, which starts with `start`.
    fn assert_the_problem(args: &[&str], start: &str) {
        let found = problems(args);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].starts_with(start), "{found:#?}");
    }

    #[test]
    fn every_bad_value_is_reported_at_once_naming_flag_and_value() {
        let found = problems(&[
            "--listen",
            "nonsense",
            "--inspector-listen",
            "also-nonsense",
            "--metrics-listen",
            "metrics?",
            "--router-url",
            "not a url",
            "--prompt-service-token-file",
            "/nowhere/token",
        ]);
        assert_eq!(found.len(), 5, "{found:#?}");
        let expect = [
            ("--listen: ", "\"nonsense\""),
            ("--inspector-listen: ", "\"also-nonsense\""),
            ("--metrics-listen: ", "\"metrics?\""),
            ("prompt-service credentials", "--prompt-service"),
            ("--router-url (AGENT_SERVICE_ROUTER_URL): ", "\"not a url\""),
        ];
        assert_lines(&found, &expect);
    }

    #[test]
    fn a_bad_metrics_address_alone_is_refused_before_anything_starts() {
        assert_the_problem(
            &["--metrics-listen", "nonsense"],
            "--metrics-listen: invalid listen address \"nonsense\"",
        );
    }

    #[test]
    fn help_exits_0_and_an_unknown_subcommand_exits_64() {
        let code = |args: &[&str]| {
            let args = std::iter::once("agent-service").chain(args.iter().copied());
            parse(args).err()
        };
        assert_eq!(code(&["--version"]), Some(ExitCode::SUCCESS));
        assert_eq!(code(&["--help"]), Some(ExitCode::SUCCESS));
        assert_eq!(code(&["launch"]), Some(ExitCode::from(EXIT_USAGE)));
        // The unknown flag is listed first, then the unknown subcommand stops the parse.
        assert_eq!(
            code(&["--no-such-flag", "--listen", "127.0.0.1:1", "launch"]),
            Some(ExitCode::from(EXIT_USAGE))
        );
        assert_eq!(code(&["--listen", "127.0.0.1:1"]), None);
    }

    /// Values clap refuses by type (numbers, ranges, enums, the replica, unknown flags) are
    /// listed with the problems of the values that parsed, in one go.
    #[test]
    fn values_refused_by_type_are_reported_with_every_other_problem() {
        let found = problems(&[
            "--listen",
            "nonsense",
            "--inspector-listen",
            "nonsense",
            "--router-url",
            "not a url",
            "--metrics-listen",
            "x",
            "--drain-seconds",
            "abc",
            "--drain-secs=abc",
            "--idle-release-secs",
            "soon",
            "--max-connections",
            "0",
            "--log-format",
            "yaml",
            "--replica",
            "3/2",
            "serve",
        ]);
        let expect = [
            ("--drain-seconds: no such flag", "--drain-secs"),
            ("--drain-secs: invalid value \"abc\"", "digit"),
            ("--idle-release-secs: invalid value \"soon\"", "digit"),
            ("--max-connections: invalid value \"0\"", "1.."),
            ("--log-format: invalid value \"yaml\"", "json"),
            ("--replica: invalid value \"3/2\"", "3/2"),
            ("--listen: ", "\"nonsense\""),
            ("--inspector-listen: ", "\"nonsense\""),
            ("--metrics-listen: ", "\"x\""),
            ("--router-url (AGENT_SERVICE_ROUTER_URL): ", "\"not a url\""),
        ];
        let mut found_sorted = found.clone();
        found_sorted.sort_by_key(|line| {
            expect
                .iter()
                .position(|(prefix, _)| line.starts_with(prefix))
                .unwrap_or(usize::MAX)
        });
        assert_eq!(found.len(), expect.len(), "{found:#?}");
        assert_lines(&found_sorted, &expect);
    }

    /// A refused value alone is still refused (the defaults it falls back to resolve).
    #[test]
    fn a_value_refused_alone_fails_the_launch() {
        assert_the_problem(
            &["--max-concurrent-streams", "many"],
            "--max-concurrent-streams: invalid value \"many\"",
        );
    }

    #[test]
    fn a_relative_state_dir_is_taken_from_the_working_directory() {
        let launch = cli(&["--state-dir", "rel/./state", "--config", "conf.json"])
            .resolve(&home(), Path::new("/srv/app"))
            .expect("resolves");
        assert_eq!(
            launch.settings.state_dir,
            PathBuf::from("/srv/app/rel/state")
        );
        assert_eq!(
            launch.settings.config_path,
            PathBuf::from("/srv/app/conf.json")
        );
        let env = MapEnv::of([("HOME", "/home/u"), ("OPENCLAW_STATE_DIR", "state")]);
        let launch = cli(&[]).resolve(&env, Path::new("/srv")).expect("resolves");
        assert_eq!(launch.settings.state_dir, PathBuf::from("/srv/state"));
        assert_eq!(
            launch.settings.config_path,
            PathBuf::from("/srv/state/openclaw.json")
        );
    }

    #[test]
    fn two_listeners_on_one_address_are_refused() {
        let found = problems(&[
            "--listen",
            "127.0.0.1:7000",
            "--metrics-listen",
            "127.0.0.1:7000",
        ]);
        assert_eq!(
            found,
            ["--metrics-listen: 127.0.0.1:7000 is already --listen's address"]
        );
        // Port 0 is any free port: never the same one twice.
        assert!(
            cli(&[
                "--listen",
                "127.0.0.1:0",
                "--inspector-listen",
                "127.0.0.1:0"
            ])
            .resolve(&home(), Path::new("/"))
            .is_ok()
        );
    }

    #[test]
    fn unauthenticated_wide_listeners_and_missing_home_are_listed_together() {
        let found = match cli(&[
            "--listen",
            "0.0.0.0:7001",
            "--inspector-listen",
            "0.0.0.0:7002",
        ])
        .resolve(&MapEnv::default(), Path::new("/"))
        {
            Ok(launch) => panic!("resolved: {launch:?}"),
            Err(found) => found,
        };
        assert_eq!(found.len(), 3, "{found:#?}");
        assert!(found[0].starts_with("HOME:"), "{found:#?}");
        assert!(
            found[1].starts_with("refusing to listen on 0.0.0.0:7001"),
            "{found:#?}"
        );
        assert!(
            found[2].starts_with("refusing to serve the inspector on 0.0.0.0:7002"),
            "{found:#?}"
        );
    }

    #[test]
    fn a_router_token_without_a_router_is_refused() {
        let found = problems(&["--router-token-file", "/some/token"]);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].contains("--router-url"), "{found:#?}");
    }
}
