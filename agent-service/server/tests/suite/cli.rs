//! The `agent-service` binary as a user meets it: help, version and a
//! user error.

use std::process::{Command, Output, Stdio};

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-service"))
        .args(args)
        .env_clear()
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("runs")
}

#[test]
fn help_speaks_to_users_and_version_names_the_binary() {
    let help = String::from_utf8_lossy(&run(&["--help"], &[]).stdout).into_owned();
    assert!(help.starts_with("Runs OpenClaw agents over gRPC"), "{help}");
    // The shared server flags, with this binary's variables.
    assert!(help.contains("AGENT_SERVICE_DRAIN_SECS=]"), "{help}");
    assert!(
        help.contains("AGENT_SERVICE_MAX_CONCURRENT_STREAMS=]"),
        "{help}"
    );
    assert!(help.contains("AGENT_SERVICE_TOKENS_FILE=]"), "{help}");
    let version = run(&["-V"], &[]);
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        format!("agent-service {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_user_error_is_one_line_without_a_backtrace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let state = dir.path().to_string_lossy().into_owned();
    let output = run(
        &["--listen", &addr, "--state-dir", &state],
        &[
            ("HOME", &state),
            ("RUST_BACKTRACE", "full"),
            ("RUST_LOG", "off"),
        ],
    );
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("acktrace"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
