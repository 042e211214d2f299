//! The built `openclaw` binary against agent-service as `deploy/` runs it: bearer tokens,
//! TLS with a required client certificate, and the HAProxy router of
//! `deploy/k8s/router/haproxy.cfg` (Debian's binary, installed by deploy-check into
//! `.tools`), which refuses session calls without `x-openclaw-session-key`. And the binary
//! as a person or a script ends it: Ctrl-C and SIGTERM while a server never answers, an
//! output pipe closed early, `up` with a state dir it cannot write.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::{Output, Stdio},
    sync::Arc,
    time::Duration,
};

use agent_runtime::{Runtime, RuntimeOptions};
use deploy_check::{haproxy::HaproxyConfig, install::Haproxy};
use nix::{sys::signal::Signal, unistd::Pid};
use openclaw_cli::{demo, up};
use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use service_kit::{ServerSecurity, TokenSet, test_pki::TestCa};
use tokio::{net::TcpListener, sync::oneshot};

use super::harness::{DemoStack, host};

const TOKEN: &str = "cli-test-token-0123456789abcdef";

/// The demo agent's answer to the demo message.
const DEMO_ANSWER: &str = "(scripted model) AGENTS.md begins like this:";

/// agent-service serving the demo config with `security`, on 127.0.0.1:0, in process.
struct Served {
    port: u16,
    dir: tempfile::TempDir,
    _stop: oneshot::Sender<()>,
}

impl Served {
    async fn start(security: ServerSecurity) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let host = host(dir.path());
        let settings = up::resolve_settings(None, None, true, &host).expect("settings");
        demo::write_demo_files(&settings.config_path).expect("demo files");
        let prompt = prompt_client::InProcessPromptSource::new().expect("renderer");
        let runtime = Runtime::start(RuntimeOptions {
            install_dir: agent_runtime::install_dir(),
            ..RuntimeOptions::new(
                settings,
                Arc::clone(&host.env),
                Arc::new(openclaw_transcript::SystemClock),
                Arc::new(prompt),
            )
        })
        .expect("runtime");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (stop, stopped) = oneshot::channel::<()>();
        let config = agent_server::ServeConfig {
            security,
            ..agent_server::ServeConfig::default()
        };
        tokio::spawn(agent_server::serve(listener, config, runtime, async {
            let _ = stopped.await;
        }));
        Self {
            port,
            dir,
            _stop: stop,
        }
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    }
}

/// `openclaw args...` with `env`, stdin closed, nothing inherited from the caller's
/// OPENCLAW_* settings.
async fn openclaw(args: &[&str], env: &[(&str, &str)]) -> Output {
    command(args, env).output().await.expect("run openclaw")
}

fn command(args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_openclaw"));
    command
        .args(args)
        .env_remove("OPENCLAW_SERVER")
        .env_remove("OPENCLAW_TOKEN")
        .env_remove("OPENCLAW_TOKEN_FILE")
        .env_remove("OPENCLAW_TLS_CA")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

#[track_caller]
fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Tokens and TLS with a required client certificate: the CLI chats, lists and shows
/// sessions with the token from a file or OPENCLAW_TOKEN and its certificate; without the
/// token it is refused (77), without the CA it is told which flag is missing (64).
#[tokio::test]
async fn the_cli_talks_to_an_authenticated_tls_agent_service() {
    let server_ca = TestCa::new("openclaw test server CA");
    let client_ca = TestCa::new("openclaw test client CA");
    let served = Served::start(ServerSecurity {
        tokens: TokenSet::new(&[TOKEN]),
        tls: Some(server_ca.server_tls(Some(&client_ca))),
        insecure_no_auth: false,
    })
    .await;
    let client = client_ca.client("cli");
    let ca = served.file("ca.pem", &server_ca.cert);
    let cert = served.file("client.pem", &client.cert);
    let key = served.file("client.key", &client.key);
    let tokens = served.file("tokens", &format!("# agent tokens\n{TOKEN}\n"));
    let server = format!("localhost:{}", served.port);
    let tls = [
        "--server",
        &server,
        "--tls-ca",
        &ca,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ];

    let chat = openclaw(
        &[
            &["chat", "-m", demo::DEMO_MESSAGE][..],
            &tls,
            &["--token-file", &tokens],
        ]
        .concat(),
        &[],
    )
    .await;
    assert_exit(&chat, 0);
    assert!(
        String::from_utf8_lossy(&chat.stdout).contains(DEMO_ANSWER),
        "{chat:?}"
    );
    // The token from the environment, flags after the subcommand's own.
    let show = openclaw(
        &[&["sessions", "show", "main"][..], &tls].concat(),
        &[("OPENCLAW_TOKEN", TOKEN)],
    )
    .await;
    assert_exit(&show, 0);
    assert!(
        String::from_utf8_lossy(&show.stdout).contains(demo::DEMO_MESSAGE),
        "{show:?}"
    );

    let refused = openclaw(&[&["sessions", "list"][..], &tls].concat(), &[]).await;
    assert_exit(&refused, 77);
    assert!(stderr(&refused).starts_with("error: "), "{refused:?}");
    let wrong = openclaw(
        &[&["sessions", "list"][..], &tls].concat(),
        &[("OPENCLAW_TOKEN", "not-the-token-0123456789")],
    )
    .await;
    assert_exit(&wrong, 77);

    // https:// without a CA, a key without its certificate, two tokens: each named, at once.
    let https = format!("https://{server}");
    let bad = openclaw(
        &[
            "agents",
            "--server",
            &https,
            "--token",
            TOKEN,
            "--token-file",
            &tokens,
            "--tls-key",
            &key,
        ],
        &[],
    )
    .await;
    assert_exit(&bad, 64);
    let text = stderr(&bad);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.contains("--token (OPENCLAW_TOKEN) and --token-file"),
        "{text}"
    );
    assert!(
        text.contains("--tls-ca (OPENCLAW_TLS_CA) must name the CA"),
        "{text}"
    );
    // TLS settings for a plaintext URL are a mistake, not ignored.
    let plain = openclaw(
        &[
            "agents",
            "--server",
            &format!("http://{server}"),
            "--tls-ca",
            &ca,
        ],
        &[],
    )
    .await;
    assert_exit(&plain, 64);
    assert!(stderr(&plain).contains("is not https://"), "{plain:?}");
}

/// The router of deploy/k8s/router refuses a session call without the session-key header;
/// the CLI's session calls (a chat turn, a transcript, the context, cron jobs, approvals and
/// the allowlist) all pass it with the token, by the default agent or a named one.
#[tokio::test]
async fn the_cli_goes_through_the_router() {
    let served = Served::start(ServerSecurity {
        tokens: TokenSet::new(&[TOKEN]),
        tls: None,
        insecure_no_auth: false,
    })
    .await;
    let router = Router::start(served.port).await;
    let server = format!("http://127.0.0.1:{}", router.port);

    // The control: a session call without the header does not reach agent-service.
    let channel = tonic::transport::Channel::from_shared(server.clone())
        .expect("url")
        .connect()
        .await
        .expect("connect to the router");
    let mut raw = AgentServiceClient::new(channel);
    let refused = raw
        .context_report(pb::ContextReportRequest::default())
        .await
        .expect_err("no header");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(
        refused.message().contains("x-openclaw-session-key"),
        "{refused:?}"
    );

    let env = [
        ("OPENCLAW_SERVER", server.as_str()),
        ("OPENCLAW_TOKEN", TOKEN),
    ];
    let commands: [&[&str]; 8] = [
        &["chat", "-m", demo::DEMO_MESSAGE],
        &["sessions", "show", "main"],
        &["sessions", "show", "agent:main:main"],
        &["context", "--agent", "MAIN"],
        &["preview", "--session", "work"],
        &["cron", "list"],
        &["approvals", "list"],
        &["approvals", "allowlist", "list"],
    ];
    for args in commands {
        let output = openclaw(args, &env).await;
        assert_eq!(
            output.status.code(),
            Some(0),
            "openclaw {args:?}:\n{}\n{}\nrouter log:\n{}",
            String::from_utf8_lossy(&output.stdout),
            stderr(&output),
            router.log()
        );
    }
}

/// HAProxy running deploy/k8s/router/haproxy.cfg with both replicas mapped onto one
/// agent-service on loopback (killed on drop).
struct Router {
    port: u16,
    child: tokio::process::Child,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Router {
    async fn start(agent_port: u16) -> Self {
        let haproxy = tokio::task::spawn_blocking(Haproxy::ensure)
            .await
            .expect("install task")
            .unwrap_or_else(|e| panic!("install HAProxy: {e}"));
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let text = std::fs::read_to_string(deploy_dir().join("k8s/router/haproxy.cfg"))
            .expect("haproxy.cfg")
            // The error files the config names, where the ConfigMap would mount them.
            .replace(
                "/usr/local/etc/haproxy/",
                &format!("{}/", deploy_dir().join("k8s/router").display()),
            );
        let agent = format!("127.0.0.1:{agent_port}");
        let mapped = HaproxyConfig::mapped(
            &text,
            &[(50052, port), (50051, free_port()), (8404, free_port())].into(),
            &BTreeMap::from([
                (
                    "agent-service-0.openclaw.svc.cluster.local:50052".to_owned(),
                    agent.clone(),
                ),
                (
                    "agent-service-1.openclaw.svc.cluster.local:50052".to_owned(),
                    agent,
                ),
                (
                    "prompt-service-headless.openclaw.svc.cluster.local:50051".to_owned(),
                    format!("127.0.0.1:{}", free_port()),
                ),
            ]),
        )
        .expect("map the router config");
        let config = dir.path().join("haproxy.cfg");
        std::fs::write(&config, mapped).expect("write haproxy.cfg");
        let log = dir.path().join("haproxy.log");
        let child = tokio::process::Command::new(&haproxy.binary)
            .args(["-W", "-db", "-f"])
            .arg(&config)
            .env("LD_LIBRARY_PATH", &haproxy.library_path)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .kill_on_drop(true)
            .spawn()
            .expect("start haproxy");
        let router = Self {
            port,
            child,
            log,
            _dir: dir,
        };
        router.wait_ready().await;
        router
    }

    /// Until the router answers a health check (it binds within milliseconds; the backoff
    /// bounds how often it is asked, not how long the test waits on a fixed guess).
    async fn wait_ready(&self) {
        let endpoint = format!("http://127.0.0.1:{}", self.port);
        let mut backoff = Duration::from_millis(10);
        for _ in 0..80 {
            if let Ok(true) = service_kit::probe(&endpoint, "", Duration::from_secs(2)).await {
                return;
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(500));
        }
        panic!("the router never answered a health check\n{}", self.log());
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A port that accepts connections and never answers on them; reports each accept.
async fn silent_server() -> (u16, tokio::sync::mpsc::Receiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (accepted, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
            let _ = accepted.send(()).await;
        }
    });
    (port, rx)
}

/// Ctrl-C (SIGINT) and SIGTERM end a command blocked on a server that never answers,
/// promptly, with 130 and 143 and one line saying so; the call timeout ends it alone too
/// (75).
#[tokio::test]
async fn signals_end_a_command_waiting_on_a_silent_server() {
    for (signal, args, code, line) in [
        (
            Signal::SIGINT,
            &["chat", "-m", "hello"][..],
            130,
            "interrupted\n",
        ),
        (Signal::SIGTERM, &["status"][..], 143, "terminated\n"),
        (
            Signal::SIGINT,
            &["sessions", "show", "main"][..],
            130,
            "interrupted\n",
        ),
    ] {
        let (port, mut accepted) = silent_server().await;
        let server = format!("http://127.0.0.1:{port}");
        let child = command(args, &[("OPENCLAW_SERVER", &server)])
            .spawn()
            .expect("spawn openclaw");
        // Connected: from here on the command waits for an answer that never comes.
        accepted.recv().await.expect("the command connects");
        let pid = Pid::from_raw(i32::try_from(child.id().expect("pid")).expect("pid fits"));
        nix::sys::signal::kill(pid, signal).expect("signal");
        let output = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
            .await
            .unwrap_or_else(|_| panic!("{args:?} still running 10 s after {signal}"))
            .expect("wait");
        assert_exit(&output, code);
        assert_eq!(stderr(&output), line, "{args:?}");
    }
    let (port, mut accepted) = silent_server().await;
    let server = format!("http://127.0.0.1:{port}");
    let timed_out = command(&["agents", "--server", &server, "--call-timeout", "1"], &[])
        .spawn()
        .expect("spawn openclaw");
    accepted.recv().await.expect("the command connects");
    let output = tokio::time::timeout(Duration::from_secs(20), timed_out.wait_with_output())
        .await
        .expect("the call timeout ends the command")
        .expect("wait");
    assert_exit(&output, 75);
    assert!(stderr(&output).contains("--call-timeout"), "{output:?}");
}

/// `openclaw ... | head` closes the pipe before the command is done writing: it ends
/// quietly with 0, not with a broken-pipe error.
#[tokio::test]
async fn a_closed_output_pipe_ends_the_command_quietly() {
    let demo = DemoStack::start().await;
    let mut child = command(&["agents", "--server", &demo.stack.agent_url()], &[])
        .spawn()
        .expect("spawn openclaw");
    // The reader goes away before anything is written.
    drop(child.stdout.take());
    let output = child.wait_with_output().await.expect("wait");
    assert_exit(&output, 0);
    assert_eq!(stderr(&output), "");
}

/// `up` with a state dir it cannot create says so (73) before it starts anything.
#[tokio::test]
async fn up_checks_its_state_dir_before_it_is_ready() {
    let dir = tempfile::tempdir().expect("tempdir");
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "").expect("write");
    let state = blocker.join("state").display().to_string();
    let output = command(
        &[
            "up",
            "--state-dir",
            &state,
            "--prompt-listen",
            "127.0.0.1:0",
            "--agent-listen",
            "127.0.0.1:0",
        ],
        &[
            ("HOME", &dir.path().display().to_string()),
            ("RUST_LOG", "off"),
        ],
    )
    .output()
    .await
    .expect("run openclaw up");
    assert_exit(&output, 73);
    assert!(
        stderr(&output).starts_with(&format!("error: state dir {state}: Not a directory")),
        "{output:?}"
    );
    assert!(!String::from_utf8_lossy(&output.stdout).contains("ready"));
}
