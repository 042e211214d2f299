//! The built `openclaw` binary, once: `chat -m` against the in-process demo
//! stack, as a user runs it in a pipe (no TTY, so no colour).

use std::process::Stdio;

use openclaw_cli::demo::DEMO_MESSAGE;

use super::harness::DemoStack;

#[tokio::test]
async fn the_binary_chats_one_shot() {
    let demo = DemoStack::start().await;
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_openclaw"))
        .args([
            "chat",
            "--server",
            &demo.stack.agent_url(),
            "-m",
            DEMO_MESSAGE,
        ])
        .env_remove("NO_COLOR")
        .env_remove("OPENCLAW_SERVER")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("run openclaw");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("(scripted model) AGENTS.md begins like this:"),
        "{stdout}"
    );
    assert!(stderr.contains("· read: AGENTS.md\n"), "{stderr}");
    assert!(stderr.contains("· 2 model calls"), "{stderr}");
    assert!(
        !stdout.contains('\x1b') && !stderr.contains('\x1b'),
        "no colour in a pipe"
    );
}

/// `openclaw status` from the built binary against the real services `up --demo` runs: both
/// reachable, the version, the config, the security state, the default agent and model, and
/// each agent's session count (one after a turn). With no server it fails with exit 69.
#[tokio::test]
async fn the_binary_reports_status() {
    let demo = DemoStack::start().await;
    let status = |server: String| async move {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_openclaw"))
            .args(["status", "--server", &server])
            .env_remove("OPENCLAW_SERVER")
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output()
            .await
            .expect("run openclaw")
    };
    demo.open_run(DEMO_MESSAGE)
        .await
        .message()
        .await
        .expect("first event");
    // The session exists once its message is accepted.
    let output = status(demo.stack.agent_url()).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let version = env!("CARGO_PKG_VERSION");
    for expected in [
        format!(
            "agent-service   {}: reachable, version {version}, ready",
            demo.stack.agent_url()
        ),
        "prompt-service  remote over gRPC: reachable".to_owned(),
        ": valid".to_owned(),
        "security        TLS off; callers are not authenticated".to_owned(),
        "default         agent main, model ".to_owned(),
    ] {
        assert!(
            stdout.contains(&expected),
            "{expected:?} missing from:\n{stdout}"
        );
    }
    let row = stdout
        .lines()
        .find(|l| l.starts_with('*'))
        .unwrap_or_else(|| panic!("no default agent row in:\n{stdout}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        (cells[1], cells.last().copied()),
        ("main", Some("1")),
        "{row}"
    );

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let closed = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener);
    let output = status(closed).await;
    assert_eq!(output.status.code(), Some(69), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("cannot connect"),
        "{output:?}"
    );
}
