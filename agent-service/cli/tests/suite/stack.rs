//! `up`'s internals: settings, readiness, refusal of a bad config, and the
//! ordered shutdown that flushes sessions.

use std::{path::Path, sync::Arc};

use agent_runtime::MapEnv;
use openclaw_cli::{
    CliError,
    up::{self, Host},
};
use tokio::net::TcpListener;

use super::harness::{DemoStack, host, start_stack};

#[test]
fn demo_state_dir_defaults_to_the_current_directory() {
    let host = host(Path::new("/home/u/project"));
    let s = up::resolve_settings(None, None, true, &host).expect("settings");
    assert_eq!(s.state_dir, Path::new("/home/u/project/.openclaw-demo"));
    assert_eq!(
        s.config_path,
        Path::new("/home/u/project/.openclaw-demo/openclaw.json")
    );
    let s = up::resolve_settings(Some(Path::new("st")), None, true, &host).expect("settings");
    assert_eq!(s.state_dir, Path::new("/home/u/project/st"));
    assert_eq!(s.config_path, Path::new("/home/u/project/st/openclaw.json"));
}

#[test]
fn without_demo_the_environment_and_home_apply() {
    let env = MapEnv::of([("HOME", "/home/u"), ("OPENCLAW_STATE_DIR", "~/state")]);
    let host = Host {
        redactor: Default::default(),
        env: Arc::new(env),
        cwd: "/elsewhere".into(),
        stdin_tty: false,
    };
    let s = up::resolve_settings(None, None, false, &host).expect("settings");
    assert_eq!(s.state_dir, Path::new("/home/u/state"));
    assert_eq!(s.config_path, Path::new("/home/u/state/openclaw.json"));
    let s = up::resolve_settings(None, Some(Path::new("oc.json")), false, &host).expect("settings");
    assert_eq!(s.config_path, Path::new("/elsewhere/oc.json"));
}

/// A config with problems is refused before agent-service serves, with every
/// problem in the message and exit code 64.
#[tokio::test]
async fn an_invalid_config_is_refused_with_every_problem() {
    let dir = tempfile::tempdir().expect("dir");
    let host = host(dir.path());
    let settings = up::resolve_settings(Some(Path::new("state")), None, false, &host).expect("s");
    std::fs::create_dir_all(&settings.state_dir).expect("mkdir");
    std::fs::write(
        &settings.config_path,
        "{ agents: { defaults: { nope: 1 } }, bogus: true }",
    )
    .expect("write");
    let error = start_stack(settings, &host).await.expect_err("refused");
    assert!(matches!(error, CliError::Config(_)), "{error:?}");
    assert_eq!(error.exit_code(), 64);
    let message = error.to_string();
    assert!(
        message.contains("nope") && message.contains("bogus"),
        "{message}"
    );
}

/// A taken address is a bind error (73) unless falling back is allowed.
#[tokio::test]
async fn a_taken_port_falls_back_only_when_allowed() {
    let taken = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let error = up::bind(&addr, "--agent-listen", false)
        .await
        .expect_err("taken");
    assert_eq!(error.exit_code(), 73);
    assert!(error.to_string().contains("(--agent-listen)"), "{error}");
    let other = up::bind(&addr, "--agent-listen", true)
        .await
        .expect("fallback");
    assert_ne!(other.local_addr().expect("addr").to_string(), addr);
    assert_eq!(
        up::bind("nonsense", "--agent-listen", true)
            .await
            .err()
            .map(|e| e.exit_code()),
        Some(64)
    );
}

/// `up` takes no credentials, so it serves loopback only; the refusal names the flag and
/// suggests nothing `up` does not accept.
#[tokio::test]
async fn up_refuses_a_wide_listen_address_naming_only_its_own_flags() {
    for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.1:0"] {
        let error = up::bind(addr, "--prompt-listen", false)
            .await
            .expect_err("refused");
        assert_eq!(error.exit_code(), 64, "{error}");
        let text = error.to_string();
        assert!(
            text.starts_with(&format!("--prompt-listen {addr}: ")),
            "{text}"
        );
        for foreign in [
            "--tokens",
            "--insecure-no-auth",
            "--tls-client-ca",
            "_TOKENS",
        ] {
            assert!(!text.contains(foreign), "{text} names {foreign}");
        }
    }
    assert!(up::check_listen("localhost:0", "--agent-listen").is_ok());
    assert!(up::check_listen("[::1]:0", "--agent-listen").is_ok());
}

/// Shutdown stops agent-service first and flushes the session: the
/// transcript on disk holds the whole turn afterwards.
#[tokio::test]
async fn shutdown_is_ordered_and_flushes_sessions() {
    let demo = DemoStack::start().await;
    let (outcome, _) = demo.turn("hello", false).await;
    outcome.expect("turn");
    let state = demo.state_dir();
    let agent_url = demo.stack.agent_url();
    let DemoStack {
        stack, dir: _dir, ..
    } = demo;
    stack.shutdown().await.expect("clean shutdown");
    let sessions = state.join("agents/main/sessions");
    let transcript = std::fs::read_dir(&sessions)
        .expect("sessions dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a transcript");
    let text = std::fs::read_to_string(transcript).expect("read");
    assert_eq!(
        text.lines().count(),
        text.matches('\n').count(),
        "whole lines"
    );
    assert!(text.contains("\"toolResult\"") && text.contains("AGENTS.md begins like this"));
    assert!(
        openclaw_cli::client::connect(&agent_url).await.is_err(),
        "agent-service is gone"
    );
}
