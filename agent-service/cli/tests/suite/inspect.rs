//! `sessions`, `preview`, `context`, `agents`, `skills`, `setup` against the
//! demo stack.

use openclaw_cli::{client::Target, demo::DEMO_MESSAGE, inspect, sessions};
use openclaw_proto::agent::v1 as pb;
use prompt_server::PreviewFormat;

use super::harness::{DemoStack, assert_in_order, capture};

async fn demo_turn(demo: &DemoStack) {
    let (outcome, _) = demo.turn(DEMO_MESSAGE, false).await;
    outcome.expect("demo turn");
}

/// After the demo turn the session is listed, and its transcript reads as
/// user, assistant with the tool call, the tool result, the answer, then
/// the load report.
#[tokio::test]
async fn sessions_list_and_show_after_the_demo_turn() {
    let demo = DemoStack::start().await;
    demo_turn(&demo).await;
    let mut client = demo.client().await;

    let (result, rec) = capture(async |term| sessions::list(&mut client, "", term).await).await;
    result.expect("list");
    let listing = rec.stdout();
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 2, "{listing}");
    assert!(lines[0].starts_with("KEY "), "{listing}");
    assert!(lines[1].starts_with("agent:main:main "), "{listing}");

    let target = Target::new(None, Some("main"));
    let (result, rec) =
        capture(async |term| sessions::show(&mut client, &target, term).await).await;
    result.expect("show");
    let shown = rec.stdout();
    assert!(shown.starts_with("#1 session "), "{shown}");
    assert_in_order(
        &shown,
        &[
            &format!("user: {DEMO_MESSAGE}\n"),
            "assistant (scripted/demo, toolUse): (scripted model) Let me read the workspace instructions first.\n",
            "    → read {\"path\":\"AGENTS.md\"}\n",
            "tool result read ✓ (",
            "assistant (scripted/demo, stop): (scripted model) AGENTS.md begins like this:",
        ],
    );
    assert_in_order(
        &rec.stderr(),
        &["· load report: ", " entries · torn tail none · 0 bad lines"],
    );
}

/// `preview` prints exactly the prompt PreviewPrompt returns, and that is
/// the prompt ContextReport reports on; `context` prints the report's text.
#[tokio::test]
async fn preview_is_what_the_context_report_reports() {
    let demo = DemoStack::start().await;
    demo_turn(&demo).await;
    let mut client = demo.client().await;
    let session = Some(Target::default().session_ref());
    let preview = client
        .preview_prompt(pb::PreviewPromptRequest {
            session: session.clone(),
            channel: None,
        })
        .await
        .expect("preview")
        .into_inner();
    let report = client
        .context_report(pb::ContextReportRequest {
            session,
            detail: false,
        })
        .await
        .expect("context")
        .into_inner();
    let prompt = preview.prompt.expect("prompt");
    assert_eq!(Some(&prompt), report.prompt.as_ref());
    assert!(
        prompt.text.contains("AGENTS.md"),
        "the workspace files are injected"
    );

    let target = Target::default();
    for (part, expected) in [
        (PreviewFormat::Text, &prompt.text),
        (PreviewFormat::Stable, &prompt.stable_prefix),
        (PreviewFormat::Dynamic, &prompt.dynamic_suffix),
    ] {
        let (result, rec) =
            capture(async |term| inspect::preview(&mut client, &target, part, term).await).await;
        result.expect("preview command");
        assert_eq!(rec.stdout(), format!("{expected}\n"), "{part:?}");
        assert!(
            rec.stderr().contains("· model scripted/demo · tools: "),
            "{}",
            rec.stderr()
        );
    }
    let (result, rec) = capture(async |term| {
        inspect::preview(&mut client, &target, PreviewFormat::Json, term).await
    })
    .await;
    result.expect("json");
    let json: serde_json::Value = serde_json::from_str(&rec.stdout()).expect("valid JSON");
    assert_eq!(json["text"].as_str(), Some(prompt.text.as_str()));

    let (result, rec) =
        capture(async |term| inspect::context(&mut client, &target, false, term).await).await;
    result.expect("context command");
    assert_eq!(rec.stdout(), format!("{}\n", report.text.trim_end()));
    assert!(rec.stdout().contains("AGENTS.md: OK"), "{}", rec.stdout());
}

/// `agents`, `skills` and `setup` print what the API returns.
#[tokio::test]
async fn agents_skills_and_setup() {
    let demo = DemoStack::start().await;
    let mut client = demo.client().await;

    let (result, rec) = capture(async |term| inspect::agents(&mut client, term).await).await;
    result.expect("agents");
    let lines: Vec<String> = rec.stdout().lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[1].starts_with("*  main "), "{lines:?}");
    assert!(lines[1].contains("scripted/demo"), "{lines:?}");

    let (result, rec) = capture(async |term| inspect::skills(&mut client, "", term).await).await;
    result.expect("skills");
    assert!(!rec.stdout().is_empty());

    let (result, rec) =
        capture(async |term| inspect::setup(&mut client, "", false, term).await).await;
    result.expect("setup");
    let config = demo.state_dir().join("openclaw.json");
    assert_in_order(
        &rec.stdout(),
        &[&format!("config: {} (kept)\n", config.display()), "main: "],
    );

    let error = capture(async |term| inspect::skills(&mut client, "ghost", term).await)
        .await
        .0
        .expect_err("unknown agent");
    assert_eq!(error.exit_code(), 66);
}

/// A transcript with a 7 MB line (a 3.5 MiB message of quotes, each stored
/// escaped) is shown whole: the line arrives in parts that fit the client's
/// default 4 MiB limit, and `show` joins them.
#[tokio::test]
async fn sessions_show_reads_a_seven_megabyte_line() {
    let demo = DemoStack::start().await;
    let mut client = demo.client().await;
    let quotes = "\"".repeat(3_500_000);
    let mut run = client
        .run(pb::RunRequest {
            session: Some(Target::default().session_ref()),
            message: quotes,
            ..Default::default()
        })
        .await
        .expect("run")
        .into_inner();
    // The run's own outcome does not matter: the message is stored first.
    while run.message().await.expect("event").is_some() {}

    let (result, rec) =
        capture(async |term| sessions::show(&mut client, &Target::default(), term).await).await;
    result.expect("show");
    let shown = rec.stdout();
    assert!(
        shown.starts_with("#1 session "),
        "{}",
        &shown[..shown.len().min(400)]
    );
    assert!(
        shown.contains("\n#2 user: \"\"\"\"\"\"\"\""),
        "{}",
        &shown[..shown.len().min(400)]
    );
    assert!(
        !shown.contains("broken"),
        "{}",
        &shown[..shown.len().min(400)]
    );
    assert_in_order(&rec.stderr(), &["· load report: ", " · 0 bad lines"]);
}
