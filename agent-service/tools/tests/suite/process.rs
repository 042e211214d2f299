//! Background exec and the process tool: list, log, write, kill, timeouts.

use std::sync::Arc;

use openclaw_tools::{
    EXIT_TAIL_CHARS, ExecTool, ExitSink, ProcessExit, ProcessStatus, ProcessTool,
};
use serde_json::json;

use super::{Fixture, error_text, eventually, ok_text, sleeping};

#[tokio::test]
async fn background_commands_are_listed_logged_and_killed() {
    let f = Fixture::new();
    let started = f
        .call(
            &ExecTool,
            json!({ "command": "echo started; sleep 3011 & wait", "background": true }),
        )
        .await;
    let text = ok_text(&started);
    assert!(
        text.starts_with("Started background process proc-1 (pid "),
        "{text}"
    );
    assert_eq!(started.details().unwrap()["id"], "proc-1");

    let list = f.call(&ProcessTool, json!({ "action": "list" })).await;
    assert!(
        ok_text(&list).starts_with("proc-1 [running] pid "),
        "{}",
        ok_text(&list)
    );
    assert!(ok_text(&list).ends_with(": echo started; sleep 3011 & wait"));

    let processes = f.ctx.processes.clone();
    eventually("the first output", || {
        processes
            .log("proc-1")
            .is_some_and(|(_, out)| out.contains("started"))
    })
    .await;
    let log = f
        .call(&ProcessTool, json!({ "action": "log", "id": "proc-1" }))
        .await;
    assert!(
        ok_text(&log).ends_with("\nOutput:\nstarted\n"),
        "{}",
        ok_text(&log)
    );

    eventually("the grandchild to start", || sleeping("3011")).await;
    let killed = f
        .call(&ProcessTool, json!({ "action": "kill", "id": "proc-1" }))
        .await;
    assert!(
        ok_text(&killed).starts_with("proc-1 [killed] pid "),
        "{}",
        ok_text(&killed)
    );
    eventually("the grandchild to die", || !sleeping("3011")).await;
    assert_eq!(f.ctx.processes.list()[0].status, ProcessStatus::Killed);
}

#[tokio::test]
async fn stdin_can_be_written_and_closed() {
    let f = Fixture::new();
    ok_text(
        &f.call(&ExecTool, json!({ "command": "cat", "background": true }))
            .await,
    );
    let wrote = f
        .call(
            &ProcessTool,
            json!({ "action": "write", "id": "proc-1", "data": "hello\n", "eof": true }),
        )
        .await;
    assert_eq!(
        ok_text(&wrote),
        "Wrote 6 bytes to proc-1 and closed its stdin."
    );
    let processes = f.ctx.processes.clone();
    eventually("cat to finish", || {
        processes.list()[0].status == ProcessStatus::Exited { code: 0 }
    })
    .await;
    eventually("the echoed text", || {
        processes
            .log("proc-1")
            .is_some_and(|(_, out)| out == "hello\n")
    })
    .await;
    let again = f
        .call(
            &ProcessTool,
            json!({ "action": "write", "id": "proc-1", "data": "more" }),
        )
        .await;
    assert_eq!(error_text(&again), "proc-1 has already ended");
}

#[tokio::test]
async fn a_background_timeout_kills_the_process() {
    let f = Fixture::new();
    ok_text(
        &f.call(
            &ExecTool,
            json!({ "command": "sleep 30", "background": true, "timeout": 1 }),
        )
        .await,
    );
    let processes = f.ctx.processes.clone();
    eventually("the timeout", || {
        processes.list()[0].status == ProcessStatus::TimedOut
    })
    .await;
}

#[tokio::test]
async fn process_errors_name_what_is_wrong() {
    let f = Fixture::new();
    let cases = [
        (
            json!({ "action": "log" }),
            "invalid arguments for process: id: required for this action",
        ),
        (
            json!({ "action": "kill", "id": "proc-99" }),
            "no background process proc-99",
        ),
        (
            json!({ "action": "log", "id": "nonsense" }),
            "no background process nonsense",
        ),
        (
            json!({ "action": "write", "id": "proc-1" }),
            "invalid arguments for process: data: required for write unless eof is true",
        ),
        (
            json!({ "action": "poll" }),
            "invalid arguments for process: action: unknown variant `poll`, expected one of `list`, `log`, `kill`, `write`",
        ),
    ];
    for (arguments, expected) in cases {
        let outcome = f.call(&ProcessTool, arguments.clone()).await;
        assert_eq!(error_text(&outcome), expected, "{arguments}");
    }
    let empty = f.call(&ProcessTool, json!({ "action": "list" })).await;
    assert_eq!(ok_text(&empty), "No background processes.");
}

#[tokio::test]
async fn dropping_the_registry_kills_what_it_still_runs() {
    let f = Fixture::new();
    ok_text(
        &f.call(
            &ExecTool,
            json!({ "command": "setsid -f sleep 3012; sleep 3013 & wait", "background": true }),
        )
        .await,
    );
    eventually("the children to start", || {
        sleeping("3012") && sleeping("3013")
    })
    .await;
    let Fixture { ctx, .. } = f;
    drop(ctx);
    eventually("the children to die with the registry", || {
        !sleeping("3012") && !sleeping("3013")
    })
    .await;
}

/// Collects what an [`ExitSink`] hears.
#[derive(Default)]
struct Heard(std::sync::Mutex<Vec<ProcessExit>>);

impl ExitSink for Heard {
    fn exited(&self, exit: ProcessExit) {
        self.0.lock().unwrap().push(exit);
    }
}

impl Heard {
    fn all(&self) -> Vec<ProcessExit> {
        self.0.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn commands_that_end_on_their_own_are_reported_once_and_killed_ones_never() {
    let f = Fixture::new();
    let heard = Arc::new(Heard::default());
    assert!(
        f.ctx
            .processes
            .set_exit_sink(Arc::clone(&heard) as Arc<dyn ExitSink>)
    );
    assert!(
        !f.ctx.processes.set_exit_sink(Arc::new(Heard::default())),
        "the first sink stays"
    );
    let long_tail = "x".repeat(EXIT_TAIL_CHARS + 50);
    for (command, timeout) in [
        (
            format!("echo begin; printf '{long_tail}'; echo; echo done; exit 3"),
            None,
        ),
        ("sleep 30".to_owned(), None),
        ("sleep 30".to_owned(), Some(1)),
    ] {
        let mut args = json!({ "command": command, "background": true });
        if let Some(timeout) = timeout {
            args["timeout"] = json!(timeout);
        }
        ok_text(&f.call(&ExecTool, args).await);
    }
    ok_text(
        &f.call(&ProcessTool, json!({ "action": "kill", "id": "proc-2" }))
            .await,
    );
    let probe = Arc::clone(&heard);
    eventually("two reports", || probe.all().len() == 2).await;
    let mut heard_now = heard.all();
    heard_now.sort_by(|a, b| a.info.id.cmp(&b.info.id));
    let [exited, timed_out] = heard_now.as_slice() else {
        panic!("{heard_now:?}");
    };
    assert_eq!(exited.info.id, "proc-1");
    assert_eq!(exited.info.status, ProcessStatus::Exited { code: 3 });
    assert!(exited.tail.ends_with("x\ndone\n"), "{}", exited.tail);
    assert!(
        !exited.tail.contains("begin"),
        "only the end: {}",
        exited.tail
    );
    assert_eq!(timed_out.info.id, "proc-3");
    assert_eq!(timed_out.info.status, ProcessStatus::TimedOut);
    // The killed one is never reported, and nothing is reported twice.
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    assert_eq!(heard.all().len(), 2);
}

#[tokio::test]
async fn a_kill_reaches_processes_that_left_the_commands_group() {
    let f = Fixture::new();
    ok_text(
        &f.call(
            &ExecTool,
            json!({ "command": "setsid -f sleep 3014; nohup sleep 3015 >/dev/null 2>&1 & wait", "background": true }),
        )
        .await,
    );
    eventually("the children to start", || {
        sleeping("3014") && sleeping("3015")
    })
    .await;
    let killed = f
        .call(&ProcessTool, json!({ "action": "kill", "id": "proc-1" }))
        .await;
    assert!(ok_text(&killed).starts_with("proc-1 [killed] pid "));
    eventually("the detached children to die", || {
        !sleeping("3014") && !sleeping("3015")
    })
    .await;
}
