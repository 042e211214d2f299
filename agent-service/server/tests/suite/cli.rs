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
    // EX_CANTCREAT, as `openclaw up` answers a port it cannot bind.
    assert_eq!(output.status.code(), Some(73), "{err}");
    assert!(
        err.starts_with(&format!("error: cannot listen on {addr} (--listen): ")),
        "{err}"
    );
    assert!(!err.contains("acktrace"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The binary started with each `(flag, value)` of `bad` over a temporary state dir, with
/// `env` (HOME added): it must exit 64; the lines of its stderr.
fn refused_lines(bad: &[(&str, &str)], env: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().to_string_lossy().into_owned();
    let mut args: Vec<&str> = bad
        .iter()
        .flat_map(|(flag, value)| [*flag, *value])
        .collect();
    args.extend(["--state-dir", &state]);
    let mut env = env.to_vec();
    env.push(("HOME", &state));
    let output = run(&args, &env);
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(64), "{err}");
    err.lines().map(str::to_owned).collect()
}

/// A worker-thread count the async runtime cannot use is one line naming the variable and
/// exit 64, before anything starts (tokio itself would panic on it); a good one starts.
#[test]
fn a_bad_worker_thread_count_is_one_line_and_exit_64() {
    for value in ["0", "two", "-1", ""] {
        let lines = refused_lines(&[], &[("TOKIO_WORKER_THREADS", value)]);
        assert_eq!(lines.len(), 1, "{value:?}: {lines:#?}");
        assert!(
            lines[0].starts_with(&format!(
                "error: TOKIO_WORKER_THREADS: invalid value {value:?}"
            )),
            "{lines:#?}"
        );
    }
    let output = run(&["--version"], &[("TOKIO_WORKER_THREADS", "1")]);
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn every_bad_flag_is_one_line_and_exit_64() {
    let bad = [
        ("--listen", "nonsense"),
        ("--inspector-listen", "nonsense"),
        ("--metrics-listen", "nonsense"),
        ("--router-url", "not a url"),
    ];
    let lines = refused_lines(&bad, &[]);
    assert_eq!(lines.len(), 4, "{lines:#?}");
    for (line, (flag, _)) in lines.iter().zip(bad) {
        assert!(line.starts_with(&format!("error: {flag}")), "{lines:#?}");
    }
    // Values clap itself refuses (numbers, enums, unknown flags, from the command line or a
    // variable) are listed with the rest, in one go.
    let mut lines = refused_lines(
        &[
            ("--listen", "nonsense"),
            ("--inspector-listen", "nonsense"),
            ("--router-url", "not a url"),
            ("--metrics-listen", "x"),
            ("--drain-seconds", "abc"),
            ("--drain-secs", "abc"),
            ("--log-format", "yaml"),
        ],
        &[("AGENT_SERVICE_IDLE_RELEASE_SECS", "soon")],
    );
    lines.sort_unstable();
    assert_eq!(
        lines.len(),
        8,
        "one line per bad value, nothing else: {lines:#?}"
    );
    for (line, start) in lines.iter().zip([
        "error: --drain-seconds: no such flag (did you mean --drain-secs?)",
        "error: --drain-secs: invalid value \"abc\": ",
        "error: --idle-release-secs (AGENT_SERVICE_IDLE_RELEASE_SECS): invalid value \"soon\": ",
        "error: --inspector-listen: ",
        "error: --listen: ",
        "error: --log-format: invalid value \"yaml\": ",
        "error: --metrics-listen: ",
        "error: --router-url (AGENT_SERVICE_ROUTER_URL): ",
    ]) {
        assert!(
            line.starts_with(start),
            "{line:?} should start with {start:?}\n{lines:#?}"
        );
    }
}

#[test]
fn an_unwritable_state_dir_is_refused_before_serving() {
    let dir = tempfile::tempdir().expect("tempdir");
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, "").expect("write");
    let state = blocker.join("state").to_string_lossy().into_owned();
    let output = run(
        &["--listen", "127.0.0.1:0", "--state-dir", &state],
        &[("HOME", &dir.path().to_string_lossy())],
    );
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(73), "{err}");
    assert!(
        err.starts_with(&format!("error: state dir {state}: Not a directory")),
        "{err}"
    );
}
