//! `openclaw demo` as a user runs it: the chat output carries no INFO log
//! lines, and the demo can serve metrics and write JSON logs like the
//! two-process setup.

use std::{
    io::{BufRead, BufReader, Read, Write},
    process::{Child, Command, Stdio},
};

/// The demo started with `extra` flags on free ports, read up to its last
/// line of output; returns the child (still serving) and its stdout so far.
fn start(state: &std::path::Path, extra: &[&str]) -> (Child, String) {
    start_by(Command::new(env!("CARGO_BIN_EXE_openclaw")), state, extra)
}

/// [`start`], with `launcher` the command the demo's arguments are added to (the binary,
/// or a shell that `exec`s it).
fn start_by(mut launcher: Command, state: &std::path::Path, extra: &[&str]) -> (Child, String) {
    let mut child = launcher
        .args(["demo", "--state-dir"])
        .arg(state)
        .args([
            "--prompt-listen",
            "127.0.0.1:0",
            "--agent-listen",
            "127.0.0.1:0",
        ])
        .args(extra)
        .env_remove("RUST_LOG")
        .env_remove("OPENCLAW_LOG_FORMAT")
        .env_remove("OPENCLAW_METRICS_LISTEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn openclaw demo");
    let Some(stdout) = child.stdout.take() else {
        panic!("stdout is piped");
    };
    let mut out = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("a line");
        out.push_str(&line);
        out.push('\n');
        if line == "Stop with Ctrl-C." {
            break;
        }
    }
    (child, out)
}

/// Stops the demo as Ctrl-C does and returns its stderr.
fn stop(mut child: Child) -> String {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("a pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let status = child.wait().expect("wait");
    let mut err = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        stderr.read_to_string(&mut err).expect("stderr");
    }
    assert!(status.success(), "{status}: {err}");
    err
}

fn scrape(url: &str) -> String {
    let Some(addr) = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
    else {
        panic!("a metrics URL: {url}");
    };
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .expect("request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response");
    response
}

#[test]
fn the_demo_chat_carries_no_info_log_lines() {
    let state = tempfile::tempdir().expect("tempdir");
    let (child, out) = start(state.path(), &[]);
    assert!(out.contains("(scripted model)"), "{out}");
    let err = stop(child);
    let both = format!("{out}{err}");
    assert!(!both.contains(" INFO "), "{both}");
    assert!(!both.contains("listening"), "{both}");
}

#[test]
fn the_demo_serves_metrics_and_writes_json_logs() {
    let state = tempfile::tempdir().expect("tempdir");
    let (child, out) = start(
        state.path(),
        &["--metrics-listen", "127.0.0.1:0", "--log-format", "json"],
    );
    let Some(url) = out.lines().find_map(|l| l.strip_prefix("Metrics: ")) else {
        panic!("the metrics URL is printed: {out}");
    };
    let metrics = scrape(url);
    assert!(metrics.starts_with("HTTP/1.1 200 OK"), "{metrics}");
    // Both services' metrics on one endpoint: the demo turn's model calls
    // and prompt renders, and the RPCs of both.
    for name in [
        "agent_model_calls_total{",
        "prompt_render_chars_bucket{",
        r#"grpc_service="openclaw.agent.v1.AgentService""#,
        r#"grpc_service="openclaw.prompt.v1.PromptService""#,
    ] {
        assert!(metrics.contains(name), "{name} in\n{metrics}");
    }
    let err = stop(child);
    // stderr also carries the chat's own tool and usage lines (`· read`).
    assert!(err.contains("· read: AGENTS.md"), "{err}");
    assert!(!err.contains(" INFO ") && !err.contains(" WARN "), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with('{')).collect();
    assert!(!lines.is_empty(), "JSON logs include INFO: {err}");
    for line in &lines {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(value["level"].is_string(), "{line}");
    }
    assert!(err.contains("\"listening\""), "{err}");
}

/// A descriptor the demo was started with (a careless parent's open file, not
/// close-on-exec) is closed before the services start: the commands agents run in it would
/// otherwise inherit it, sandboxed ones included.
#[test]
fn the_demo_closes_the_descriptors_it_inherited() {
    let state = tempfile::tempdir().expect("tempdir");
    let secret = state.path().join("outside-secret");
    std::fs::write(&secret, "not for commands\n").expect("secret");
    let mut launcher = Command::new("sh");
    launcher
        .arg("-c")
        .arg("exec 7<\"$1\"; shift; exec \"$@\"")
        .arg("sh")
        .arg(&secret)
        .arg(env!("CARGO_BIN_EXE_openclaw"));
    let (child, out) = start_by(launcher, &state.path().join("state"), &[]);
    // The demo is `exec`ed by the shell: the child's pid is the demo's. Read before the
    // checks, and the demo stopped first, so that a failure leaves no demo running.
    let held: Vec<std::path::PathBuf> = std::fs::read_dir(format!("/proc/{}/fd", child.id()))
        .map(|listing| {
            listing
                .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    stop(child);
    assert!(out.contains("Stop with Ctrl-C."), "{out}");
    assert!(
        !held.is_empty(),
        "the demo's descriptors could not be listed"
    );
    assert!(
        !held.iter().any(|target| target == &secret),
        "the demo still holds {}: {held:?}",
        secret.display()
    );
}
