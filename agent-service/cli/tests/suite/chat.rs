//! `openclaw chat`: the demo turn, interactive mode, errors.

use clap::Parser;
use openclaw_cli::{Cli, CliError, chat, client::Target, demo::DEMO_MESSAGE};

use super::harness::{DemoStack, assert_in_order, capture};

/// The quick-start turn: the scripted model says it will read AGENTS.md,
/// calls `read`, then answers quoting it. Text streams to stdout; the tool
/// call, its result and the usage are notes on stderr, in that order.
#[tokio::test]
async fn demo_turn_prints_text_tool_call_and_usage_in_order() {
    let demo = DemoStack::start().await;
    let (outcome, rec) = demo.turn(DEMO_MESSAGE, false).await;
    let outcome = outcome.expect("turn");
    assert_eq!(outcome.session_key, "agent:main:main");
    assert_eq!(outcome.tools, ["read"]);
    assert_eq!(outcome.steps, 2);
    assert!(
        outcome.text.contains("AGENTS.md begins like this"),
        "{}",
        outcome.text
    );

    assert_in_order(
        &rec.combined(),
        &[
            "(scripted model) Let me read the workspace instructions first.\n",
            "· read: AGENTS.md\n",
            "· read ✓ (",
            " ms)\n",
            "(scripted model) AGENTS.md begins like this:",
            "offline scripted model",
            "\n· 2 model calls · tokens: ",
        ],
    );
    let stdout = rec.stdout();
    assert!(!stdout.contains('·'), "notes stay off stdout: {stdout}");
    assert!(stdout.ends_with('\n'));
    assert!(
        !rec.combined().contains('\x1b'),
        "plain style has no escapes"
    );
}

/// `--verbose` adds the prompt evidence of each model call.
#[tokio::test]
async fn verbose_shows_each_model_call() {
    let demo = DemoStack::start().await;
    let (outcome, rec) = demo.turn("hi", true).await;
    outcome.expect("turn");
    assert_in_order(
        &rec.stderr(),
        &[
            "· agent:main:main · session ",
            "· model call 1 · scripted/demo · prompt ",
            "· model call 2 · scripted/demo · prompt ",
        ],
    );
}

/// Unknown agent: NOT_FOUND from the server, exit code 66, the status
/// message as is, and nothing on stdout.
#[tokio::test]
async fn unknown_agent_exits_66_with_the_status_message() {
    let demo = DemoStack::start().await;
    let mut client = demo.client().await;
    let target = Target::new(Some("nope"), None);
    let (result, rec) =
        capture(async |term| chat::run_turn(&mut client, &target, "hi", false, term).await).await;
    let error = result.expect_err("unknown agent");
    assert!(
        matches!(&error, CliError::Status(s) if s.code() == tonic::Code::NotFound),
        "{error:?}"
    );
    assert_eq!(error.exit_code(), 66);
    assert_eq!(
        error.to_string(),
        "agent_id: no agent \"nope\" is configured"
    );
    assert_eq!(rec.stdout(), "");

    // The same through the command line as `main` runs it.
    let cli = Cli::try_parse_from([
        "openclaw",
        "chat",
        "--server",
        &demo.stack.agent_url(),
        "--agent",
        "nope",
        "-m",
        "hi",
    ])
    .expect("args");
    let (result, _) = capture(async |term| {
        openclaw_cli::run(cli, &demo.host, term, std::future::pending()).await
    })
    .await;
    assert_eq!(result.map_err(|e| e.exit_code()).err(), Some(66));
}

/// No server: a connect error naming the address, exit code 69.
#[tokio::test]
async fn no_server_exits_69() {
    let free = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = free.local_addr().expect("addr");
    drop(free);
    let error = openclaw_cli::client::connect(&addr.to_string())
        .await
        .expect_err("nothing listens");
    assert_eq!(error.exit_code(), 69);
    assert!(
        error
            .to_string()
            .starts_with(&format!("cannot connect to http://{addr}")),
        "{error}"
    );
}

/// Interactive mode: messages and slash commands from stdin, errors printed
/// without ending the conversation, `/quit` stops reading.
#[tokio::test]
async fn interactive_reads_messages_and_commands() {
    let demo = DemoStack::start().await;
    let all = demo
        .chat_ok(
            b"/help\n\nhello\n/context\n/queue followup\n/new\n/quit\nnever sent\n",
            "tester",
        )
        .await;
    assert_in_order(
        &all,
        &[
            "· chatting in the main session; /help lists commands, /quit leaves",
            "/new             start a new session",
            "Let me read the workspace instructions first.",
            "· read ✓",
            "AGENTS.md begins like this",
            "Workspace: ",
            "Workspace files:",
            "followup",
            "· new session ",
        ],
    );
    assert!(!all.contains("never sent"));
}
