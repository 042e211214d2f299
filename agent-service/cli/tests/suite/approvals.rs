//! `openclaw approvals` and inline decisions in `openclaw chat`, against the
//! in-process stack over real sockets: the scripted model calls `exec`, the
//! command is not allowlisted, so its tool call waits for a person.

use clap::Parser;
use openclaw_cli::{Cli, CliError};
use openclaw_proto::agent::v1::{self as pb, run_event::Event};

use super::harness::{DemoStack, assert_in_order, capture};

/// A model that says hello, and runs a command when asked to, then reports its output. The
/// command's output ("approved-run") differs from its text, so a reply that
/// quotes it proves the command ran.
const SCRIPT: &str = r#"{
  chunkChars: 50,
  turns: [
    { text: "Hello." },
    {
      when: "run the command",
      text: "Running it.",
      toolCalls: [{ name: "exec", arguments: { command: "printf '%s-%s\\n' approved run" } }],
    },
    { text: "Result: {{lastToolResult}}" },
    {
      when: "hostile",
      toolCalls: [{ name: "exec", arguments: { command: "rm -rf ~/x\r\u001b[2Kls -l \u202egnp.txt" } }],
    },
    { text: "Result: {{lastToolResult}}" },
  ],
}"#;

const COMMAND: &str = "printf '%s-%s\\n' approved run";

/// Runs `openclaw <args> --server <the stack>` as `main` does.
async fn openclaw(demo: &DemoStack, args: &[&str]) -> (Result<(), CliError>, String, String) {
    let url = demo.stack.agent_url();
    let argv = ["openclaw"]
        .iter()
        .chain(args)
        .copied()
        .chain(["--server", url.as_str()]);
    let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{e}"));
    let (result, rec) = capture(async |term| {
        openclaw_cli::run(cli, &demo.host, term, std::future::pending()).await
    })
    .await;
    (result, rec.stdout(), rec.stderr())
}

/// The scripted stack after ada typed `input` into an interactive chat, and what the chat
/// wrote.
async fn ada_chats(input: &[u8]) -> (DemoStack, String) {
    let demo = DemoStack::start_with_script(SCRIPT).await;
    let all = demo.chat_ok(input, "ada").await;
    (demo, all)
}

/// Opens a Run asking for the command and reads until the approval request.
async fn until_requested(demo: &DemoStack) -> (tonic::Streaming<pb::RunEvent>, pb::Approval) {
    until_requested_by(demo, "Please run the command.").await
}

/// Opens a Run of `message` and reads until the approval request.
async fn until_requested_by(
    demo: &DemoStack,
    message: &str,
) -> (tonic::Streaming<pb::RunEvent>, pb::Approval) {
    let mut stream = demo.open_run(message).await;
    let mut seen = Vec::new();
    while let Some(event) = stream.message().await.expect("stream") {
        if let Some(Event::ApprovalRequested(approval)) = event.event {
            return (stream, approval);
        }
        seen.push(event);
    }
    panic!("the run ended without asking: {seen:?}");
}

/// The run's tool results and final text, read to its end.
async fn finish(mut stream: tonic::Streaming<pb::RunEvent>) -> (Vec<(bool, String)>, String) {
    let mut tools = Vec::new();
    while let Some(event) = stream.message().await.expect("stream") {
        match event.event {
            Some(Event::ToolFinished(t)) => tools.push((t.is_error, t.output)),
            Some(Event::Final(f)) => return (tools, f.text),
            Some(Event::Error(e)) => panic!("the run failed: {e:?}"),
            _ => {}
        }
    }
    panic!("the stream ended before the run did");
}

/// `approvals list` shows the waiting command; `approve` lets it run once and
/// records who decided; `list --all` then shows the decision.
#[tokio::test]
async fn list_shows_a_pending_approval_and_approve_runs_it() {
    let demo = DemoStack::start_with_script(SCRIPT).await;
    let (stream, approval) = until_requested(&demo).await;
    assert_eq!(approval.command, COMMAND);

    let (result, stdout, _) = openclaw(&demo, &["approvals", "list"]).await;
    result.expect("list");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_in_order(
        lines[0],
        &["ID", "SESSION", "STATE", "COMMAND", "REASON", "EXPIRES"],
    );
    assert_in_order(
        lines[1],
        &[
            &approval.id,
            "agent:main:main",
            "pending",
            COMMAND,
            &approval.reason,
            "expires 20",
        ],
    );
    // `approvals` alone lists too; another session's filter hides it.
    let (result, alone, _) = openclaw(&demo, &["approvals"]).await;
    result.expect("approvals");
    assert_eq!(alone, stdout);
    let (result, other, _) = openclaw(
        &demo,
        &["approvals", "list", "--session", "agent:main:other"],
    )
    .await;
    result.expect("list other");
    assert!(other.starts_with("no approvals pending"), "{other}");

    let (result, stdout, _) = openclaw(
        &demo,
        &["approvals", "approve", &approval.id, "--by", "ada"],
    )
    .await;
    result.expect("approve");
    assert_eq!(
        stdout,
        format!(
            "approval {}: allowed once by ada ({COMMAND})\n",
            approval.id
        )
    );
    let (tools, text) = finish(stream).await;
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert!(
        !tools[0].0 && tools[0].1.contains("approved-run"),
        "{tools:?}"
    );
    assert!(text.contains("approved-run"), "{text}");

    let (result, stdout, _) = openclaw(&demo, &["approvals", "list"]).await;
    result.expect("list");
    assert!(stdout.starts_with("no approvals pending"), "{stdout}");
    let (result, stdout, _) = openclaw(&demo, &["approvals", "list", "--all"]).await;
    result.expect("list --all");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_in_order(lines[1], &[&approval.id, "allowed once", " by ada"]);

    // Decided once: a second decision is the server's refusal, exit 78.
    let (result, _, _) = openclaw(&demo, &["approvals", "deny", &approval.id]).await;
    let error = result.expect_err("a second decision");
    assert_eq!(error.exit_code(), 78, "{error}");
    assert!(
        error.to_string().contains("already allowed once"),
        "{error}"
    );
}

/// `deny` refuses the command (it does not run, the model is told) and,
/// without --by, records the local user ($USER, else "cli").
#[tokio::test]
async fn deny_refuses_the_command() {
    let demo = DemoStack::start_with_script(SCRIPT).await;
    let (stream, approval) = until_requested(&demo).await;
    let (result, stdout, _) = openclaw(&demo, &["approvals", "deny", &approval.id]).await;
    result.expect("deny");
    // The test host has no USER.
    assert_eq!(
        stdout,
        format!("approval {}: denied by cli ({COMMAND})\n", approval.id)
    );
    let (tools, text) = finish(stream).await;
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert!(tools[0].0, "a denied command is an error result: {tools:?}");
    assert!(!tools[0].1.contains("approved-run"), "{tools:?}");
    assert!(!text.contains("approved-run"), "{text}");
}

/// An id the service does not know: NOT_FOUND, exit 66, the server's message
/// naming the id; nothing on stdout. The same from the built binary.
#[tokio::test]
async fn an_unknown_id_exits_66_with_the_servers_message() {
    let demo = DemoStack::start_with_script(SCRIPT).await;
    let (result, stdout, _) = openclaw(&demo, &["approvals", "approve", "no-such-id"]).await;
    let error = result.expect_err("unknown id");
    assert!(
        matches!(&error, CliError::Status(s) if s.code() == tonic::Code::NotFound),
        "{error:?}"
    );
    assert_eq!(error.exit_code(), 66);
    assert!(error.to_string().contains("no-such-id"), "{error}");
    assert_eq!(stdout, "");

    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_openclaw"))
        .args([
            "approvals",
            "deny",
            "no-such-id",
            "--server",
            &demo.stack.agent_url(),
        ])
        .env_remove("OPENCLAW_SERVER")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("run openclaw");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(66), "{stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains("no-such-id"),
        "{stderr}"
    );
}

/// `allowlist add`, `list` and `remove` round trip through the approvals
/// file; a relative pattern and removing an absent one are the server's
/// errors with their exit codes.
#[tokio::test]
async fn the_allowlist_round_trips() {
    let demo = DemoStack::start_with_script(SCRIPT).await;
    let (result, stdout, _) = openclaw(&demo, &["approvals", "allowlist", "list"]).await;
    result.expect("list");
    assert!(
        stdout.starts_with("the allowlist of agent main is empty"),
        "{stdout}"
    );

    let (result, stdout, _) = openclaw(
        &demo,
        &[
            "approvals",
            "allowlist",
            "add",
            "/usr/bin/git",
            "--by",
            "ada",
        ],
    )
    .await;
    result.expect("add");
    assert_eq!(
        stdout,
        "added /usr/bin/git to the allowlist of agent main\n"
    );
    let (result, stdout, _) = openclaw(&demo, &["approvals", "allowlist"]).await;
    result.expect("list");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_in_order(lines[0], &["PATTERN", "SOURCE", "ADDED BY", "ADDED AT"]);
    assert_in_order(lines[1], &["/usr/bin/git", "file", "ada", "20"]);

    let (result, _, _) = openclaw(&demo, &["approvals", "allowlist", "add", "git"]).await;
    let error = result.expect_err("a relative pattern");
    assert_eq!(error.exit_code(), 65, "{error}");

    let (result, stdout, _) =
        openclaw(&demo, &["approvals", "allowlist", "remove", "/usr/bin/git"]).await;
    result.expect("remove");
    assert_eq!(
        stdout,
        "removed /usr/bin/git from the allowlist of agent main\n"
    );
    let (result, stdout, _) = openclaw(&demo, &["approvals", "allowlist", "list"]).await;
    result.expect("list");
    assert!(stdout.contains("is empty"), "{stdout}");
    let (result, _, _) = openclaw(&demo, &["approvals", "allowlist", "rm", "/usr/bin/git"]).await;
    let error = result.expect_err("removing an absent entry");
    assert_eq!(error.exit_code(), 66, "{error}");
}

/// Interactive chat: the approval request shows the command, why, the id and
/// the expiry, and the next input line decides it: "o" runs the command.
#[tokio::test]
async fn interactive_chat_allows_once_inline() {
    let (demo, all) = ada_chats(b"Please run the command.\no\n/quit\n").await;
    assert_in_order(
        &all,
        &[
            "· approval ",
            &format!(" needed to run: {COMMAND}\n"),
            "  why: ",
            "  expires: 20",
            "  allow ",
            "? [o]nce, [a]lways, [d]eny, Enter leaves it pending: ",
            " allowed once by ada\n",
            "Result: ",
            "approved-run",
        ],
    );
    let request = pb::ListApprovalsRequest {
        include_decided: true,
        ..Default::default()
    };
    let mut client = demo.client().await;
    let history = client.list_approvals(request).await.expect("list");
    let history = history.into_inner().approvals;
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].state(), pb::ApprovalState::AllowedOnce);
    assert_eq!(history[0].decided_by, "ada");
}

/// An answer that is not one is asked again; "d" then denies, and the
/// conversation goes on with the next message.
#[tokio::test]
async fn interactive_chat_asks_again_then_denies() {
    let (_demo, all) = ada_chats(b"Please run the command.\nmaybe\nD\n/help\n").await;
    assert_in_order(
        &all,
        &[
            "· \"maybe\" is not an answer\n",
            "  allow ",
            " denied by ada\n",
            "Result: ",
            "/new ",
        ],
    );
    assert!(!all.contains("approved-run"), "{all}");
}

/// With nobody to ask (`-m` with piped stdin), the request says how to decide
/// from another terminal, and the run waits for that decision.
#[tokio::test]
async fn one_shot_chat_without_a_terminal_says_how_to_decide() {
    let demo = DemoStack::start_with_script(SCRIPT).await;
    // A first turn creates the session, so it can be watched.
    let (hello, _) = demo.turn("hi", false).await;
    assert_eq!(hello.expect("first turn").text, "Hello.");
    let mut watcher = demo.client().await;
    let mut watch = watcher
        .watch_session(pb::WatchSessionRequest::default())
        .await
        .expect("watch")
        .into_inner();
    let decider = async {
        while let Some(event) = watch.message().await.expect("watch stream") {
            if let Some(Event::ApprovalRequested(approval)) = event.event {
                let (result, _, _) = openclaw(&demo, &["approvals", "approve", &approval.id]).await;
                result.expect("approve");
                return;
            }
        }
    };
    let turn = demo.turn("Please run the command.", false);
    let ((outcome, rec), ()) = tokio::join!(turn, decider);
    let outcome = outcome.expect("turn");
    assert!(outcome.text.contains("approved-run"), "{}", outcome.text);
    assert_in_order(
        &rec.stderr(),
        &[
            "· approval ",
            "decide with `openclaw approvals approve ",
            " [--always]` or `openclaw approvals deny ",
            " allowed once by cli\n",
        ],
    );
}

/// Terminal spoofing, the class: the person approves what their terminal
/// shows, and the command is model output, so text that redraws or reorders
/// the line (a carriage return, an ANSI erase, a bidi override, a line
/// break) could show one command while another waits. Every place the CLI
/// prints a command, reason or name of an approval writes such characters
/// as visible escapes.
#[tokio::test]
async fn a_command_that_would_redraw_the_terminal_is_shown_escaped() {
    let demo = DemoStack::start_with_script(SCRIPT).await;
    let (stream, approval) = until_requested_by(&demo, "Something hostile.").await;
    assert_eq!(
        approval.command,
        "rm -rf ~/x\r\u{1b}[2Kls -l \u{202e}gnp.txt"
    );
    let shown = r"rm -rf ~/x\r\u{1b}[2Kls -l \u{202e}gnp.txt";
    let (result, listed, _) = openclaw(&demo, &["approvals", "list"]).await;
    result.expect("list");
    let (result, denied, _) = openclaw(&demo, &["approvals", "deny", &approval.id]).await;
    result.expect("deny");
    for out in [&listed, &denied] {
        assert!(out.contains(shown), "{out}");
        assert!(
            !out.contains(['\r', '\x1b', '\u{202e}']),
            "raw control characters reached the terminal: {out:?}"
        );
    }
    drop(stream);

    // The inline question shows it escaped too (and "d" refuses it).
    let (result, rec) = demo.chat(b"Something hostile again.\nd\n", "ada").await;
    result.expect("chat");
    let all = rec.combined();
    assert_in_order(
        &all,
        &[&format!(" needed to run: {shown}\n"), " denied by ada"],
    );
    assert!(!all.contains(['\r', '\x1b', '\u{202e}']), "{all:?}");
}
