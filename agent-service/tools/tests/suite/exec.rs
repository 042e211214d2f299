//! exec in the foreground: exit codes, cwd, output cap, timeout and cancellation killing the
//! whole process group.

use std::time::Duration;

use openclaw_tools::{ExecTool, ToolOutcome};
use serde_json::json;

use super::{Fixture, error_text, ok_text, sleeping};

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
            json!({ "command": "echo before; sleep 3001 & sleep 30", "timeout": 1 }),
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
    super::eventually("the background child to die", || !sleeping("3001")).await;
}

#[tokio::test]
async fn cancellation_kills_the_command_and_ends_the_turn() {
    let f = Fixture::new();
    let cancel = f.ctx.cancel.clone();
    let call = f.call(&ExecTool, json!({ "command": "sleep 3002 & sleep 30" }));
    let canceller = async {
        super::eventually("the child to start", || sleeping("3002")).await;
        cancel.cancel();
    };
    let (outcome, ()) = tokio::join!(call, canceller);
    match &outcome {
        ToolOutcome::EndTurn { text } => {
            assert!(
                text.starts_with("Command interrupted: the run was cancelled"),
                "{text}"
            );
        }
        other => panic!("expected EndTurn, got {other:?}"),
    }
    super::eventually("the child to die", || !sleeping("3002")).await;
}

#[tokio::test]
async fn children_left_behind_are_killed_when_the_command_exits() {
    // Whether they hold the output open or not: the command's first process is pid 1 of its
    // own pid namespace, and the kernel kills the rest of the namespace when it exits. Work
    // that must go on belongs in the background, under the process tool.
    let mut f = Fixture::new();
    f.ctx.limits.exec_drain_grace = Duration::from_millis(100);
    for (command, seconds) in [
        ("sleep 3003 & echo done", "3003"),
        ("sleep 3004 > /dev/null 2>&1 & echo done", "3004"),
        ("setsid -f sleep 3005 > /dev/null 2>&1; echo done", "3005"),
    ] {
        let outcome = tokio::time::timeout(
            Duration::from_secs(20),
            f.call(&ExecTool, json!({ "command": command })),
        )
        .await
        .expect("exec must return although a child holds the pipe");
        let text = ok_text(&outcome);
        assert!(text.starts_with("Exit code: 0\nOutput:\ndone\n"), "{text}");
        super::eventually("the leftover child to die", || !sleeping(seconds)).await;
    }
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
    tokio::select! {
        outcome = f.call(&ExecTool, json!({ "command": "sleep 3006 & sleep 30" })) => {
            panic!("the command cannot finish: {outcome:?}")
        }
        () = super::eventually("the child to start", || sleeping("3006")) => (),
    };
    super::eventually("the child of the dropped call to die", || !sleeping("3006")).await;
}
