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
