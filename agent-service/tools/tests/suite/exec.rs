//! exec in the foreground: exit codes, cwd, output cap, timeout and cancellation killing the
//! whole process group.

use std::time::Duration;

use openclaw_tools::{ExecTool, ToolOutcome};
use serde_json::json;

use super::{Fixture, alive, error_text, ok_text, pid_from};

#[tokio::test]
async fn returns_exit_code_and_merged_output() {
    let f = Fixture::new();
    let outcome = f
        .call(
            &ExecTool,
            json!({ "command": "echo out; echo err >&2; exit 3" }),
        )
        .await;
    assert_eq!(ok_text(&outcome), "Exit code: 3\nOutput:\nout\nerr\n");
    assert_eq!(outcome.details().unwrap()["exit_code"], 3);
}

#[tokio::test]
async fn runs_in_the_workspace_or_a_directory_inside_it() {
    let f = Fixture::new();
    std::fs::create_dir(f.path("sub")).unwrap();
    let root = f.call(&ExecTool, json!({ "command": "pwd" })).await;
    assert_eq!(
        ok_text(&root),
        format!("Exit code: 0\nOutput:\n{}\n", f.root.display())
    );
    let sub = f
        .call(&ExecTool, json!({ "command": "pwd", "workdir": "sub" }))
        .await;
    assert!(ok_text(&sub).ends_with(&format!("{}/sub\n", f.root.display())));
    let escape = f
        .call(
            &ExecTool,
            json!({ "command": "pwd", "workdir": "../outside" }),
        )
        .await;
    assert!(error_text(&escape).starts_with("permission denied"));
    let silent = f.call(&ExecTool, json!({ "command": "true" })).await;
    assert_eq!(ok_text(&silent), "Exit code: 0\nOutput:\n(no output)");
}

#[tokio::test]
async fn long_output_keeps_head_and_tail() {
    let mut f = Fixture::new();
    f.ctx.limits.exec_output_bytes = 300;
    let outcome = f.call(&ExecTool, json!({ "command": "seq 1 10000" })).await;
    let text = ok_text(&outcome);
    assert!(
        text.starts_with("Exit code: 0\nOutput:\n1\n2\n3\n"),
        "{text}"
    );
    assert!(text.contains(" bytes of output omitted ...]"), "{text}");
    assert!(text.ends_with("9999\n10000\n"), "{text}");
    assert!(text.len() < 450, "{}", text.len());
    assert_eq!(outcome.details().unwrap()["output_bytes"], 48_894);
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_its_children() {
    let f = Fixture::new();
    let outcome = f
        .call(
            &ExecTool,
            json!({ "command": "echo before; sleep 30 & echo $! > child.pid; sleep 30", "timeout": 1 }),
        )
        .await;
    let text = error_text(&outcome);
    assert!(
        text.starts_with("Command timed out after 1 s and was killed"),
        "{text}"
    );
    assert!(
        text.ends_with("Output before the timeout:\nbefore\n"),
        "{text}"
    );
    let child = pid_from(&f, "child.pid").await;
    super::eventually("the background child to die", || !alive(child)).await;
}

#[tokio::test]
async fn cancellation_kills_the_command_and_ends_the_turn() {
    let f = Fixture::new();
    let cancel = f.ctx.cancel.clone();
    let call = f.call(
        &ExecTool,
        json!({ "command": "sleep 30 & echo $! > child.pid; sleep 30" }),
    );
    let canceller = async {
        let child = pid_from(&f, "child.pid").await;
        cancel.cancel();
        child
    };
    let (outcome, child) = tokio::join!(call, canceller);
    match &outcome {
        ToolOutcome::EndTurn { text } => {
            assert!(
                text.starts_with("Command interrupted: the run was cancelled"),
                "{text}"
            );
        }
        other => panic!("expected EndTurn, got {other:?}"),
    }
    super::eventually("the child to die", || !alive(child)).await;
}

#[tokio::test]
async fn children_left_holding_the_output_are_killed_when_the_command_exits() {
    let mut f = Fixture::new();
    f.ctx.limits.exec_drain_grace = Duration::from_millis(100);
    let outcome = tokio::time::timeout(
        Duration::from_secs(20),
        f.call(
            &ExecTool,
            json!({ "command": "sleep 30 & echo $! > child.pid; echo done" }),
        ),
    )
    .await
    .expect("exec must return although a child holds the pipe");
    let text = ok_text(&outcome);
    assert!(text.starts_with("Exit code: 0\nOutput:\ndone\n"), "{text}");
    assert!(text.contains("they were killed"), "{text}");
    let child = pid_from(&f, "child.pid").await;
    super::eventually("the leftover child to die", || !alive(child)).await;
}

#[tokio::test]
async fn detached_children_that_close_the_output_are_left_alone() {
    let f = Fixture::new();
    let outcome = f
        .call(
            &ExecTool,
            json!({ "command": "sleep 30 > /dev/null 2>&1 & echo $! > child.pid" }),
        )
        .await;
    assert_eq!(ok_text(&outcome), "Exit code: 0\nOutput:\n(no output)");
    let child = pid_from(&f, "child.pid").await;
    assert!(alive(child));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
}

#[tokio::test]
async fn a_requested_timeout_is_capped() {
    let mut f = Fixture::new();
    f.ctx.limits.exec_max_timeout = Duration::from_secs(1);
    let outcome = f
        .call(&ExecTool, json!({ "command": "sleep 30", "timeout": 3600 }))
        .await;
    assert!(error_text(&outcome).starts_with("Command timed out after 1 s"));
    let zero = f
        .call(&ExecTool, json!({ "command": "true", "timeout": 0 }))
        .await;
    assert_eq!(
        error_text(&zero),
        "invalid arguments for exec: timeout: must be at least 1 second"
    );
}

#[tokio::test]
async fn dropping_the_call_kills_the_command() {
    let f = Fixture::new();
    let child = tokio::select! {
        outcome = f.call(&ExecTool, json!({ "command": "sleep 30 & echo $! > child.pid; sleep 30" })) => {
            panic!("the command cannot finish: {outcome:?}")
        }
        child = pid_from(&f, "child.pid") => child,
    };
    super::eventually("the child of the dropped call to die", || !alive(child)).await;
}
