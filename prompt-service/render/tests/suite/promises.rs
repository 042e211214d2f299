//! The promise table (`tests/promises.md`): every prompt line that names a command, directive,
//! token or config action the runtime must back, the fact that gates it, and the agent-service
//! test that exercises that behaviour. Here the renderer's side is checked: rendering with
//! every gate on (and the variants that swap lines), each promise-bearing line matches a row,
//! and each row still matches a line. deploy-check's `promises` test checks that every named
//! runtime test exists, so a new promise without a runtime test fails one or the other.

use prompt_render::{
    ChatType, DelegationMode, Gpt5Personality, ReactionLevel, RenderInput, ReplyDelivery,
    gpt5_contribution, render,
};

use prompt_render::fixtures;

/// The table, shared with deploy-check.
const TABLE: &str = include_str!("../promises.md");

/// Chat commands a prompt line may name.
const COMMANDS: &[&str] = &[
    "/approve",
    "/context",
    "/help",
    "/model",
    "/new",
    "/queue",
    "/reasoning",
    "/reset",
    "/status",
    "/think",
    "/verbose",
];

/// One row: the text that identifies the line, and whether its runtime test is still to come.
struct Row<'a> {
    needle: &'a str,
    pending: bool,
}

/// The rows of the table: `| needle | gate | test | status |` lines below the header.
fn rows() -> Vec<Row<'static>> {
    TABLE
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Prompt line"))
        .map(|l| {
            let cells: Vec<&str> = l
                .trim_start_matches("| ")
                .trim_end_matches(" |")
                .split(" | ")
                .collect();
            match cells.as_slice() {
                [needle, gate, test, status] => {
                    assert!(
                        !needle.is_empty() && !gate.is_empty() && !test.is_empty(),
                        "incomplete row: {l}"
                    );
                    assert!(
                        matches!(*status, "backed" | "pending"),
                        "status must be backed or pending: {l}"
                    );
                    Row {
                        needle,
                        pending: *status == "pending",
                    }
                }
                _ => panic!("a row has four cells: {l}"),
            }
        })
        .collect()
}

/// Every gate on: delegation, the GPT-5 overlay with heartbeat guidance, a group chat with
/// reactions, native approvals, voice, heartbeats, every tool. The Reasoning Format section
/// stays off: agent-service never asks for it.
fn every_gate() -> RenderInput {
    let mut i = fixtures::realistic();
    i.delegation_mode = DelegationMode::Prefer;
    i.runtime.model = "openai/gpt-5.5".into();
    i.contribution = gpt5_contribution(Gpt5Personality::Friendly);
    i.gpt5_heartbeat_guidance = true;
    i.exec_exit_wakeups = true;
    i.channel.chat_type = ChatType::Group;
    i.channel.native_approvals = Some(true);
    i.channel.known_channels = vec!["discord".into(), "telegram".into()];
    i.reaction_level = ReactionLevel::Minimal;
    i.extra_system_prompt = "The group plans a trip.".into();
    i.tts_hint = "Keep spoken replies short.".into();
    i.current_date = "2026-12-01".into();
    // A new workspace: the first-run setup is pending.
    i.context_files.push(fixtures::file(
        "BOOTSTRAP.md",
        "Ask the user for a name.".to_owned(),
    ));
    i
}

/// The gate variants whose lines replace others: a direct chat, message-tool-only delivery
/// with and without the message tool, no channel, no tools.
fn variants() -> Vec<RenderInput> {
    let mut tool_only = every_gate();
    tool_only.channel.reply_delivery = ReplyDelivery::MessageToolOnly;
    let mut no_message_tool = tool_only.clone();
    no_message_tool.tools.retain(|t| t.name != "message");
    let mut no_channel = every_gate();
    no_channel.channel.name.clear();
    let mut no_tools = every_gate();
    no_tools.tools.clear();
    let mut direct = every_gate();
    direct.channel.chat_type = ChatType::Direct;
    vec![
        every_gate(),
        direct,
        tool_only,
        no_message_tool,
        no_channel,
        no_tools,
    ]
}

/// Whether a line names something the runtime must back: a backticked command or key, a
/// reply directive, an all-caps token such as `HEARTBEAT_OK`, a chat command, or the label of
/// a message the runtime sends (`[Exec Finished]`).
fn promise_bearing(line: &str) -> bool {
    let token = line
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| {
            w.len() > 3
                && w.contains('_')
                && w.chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
        });
    let command = COMMANDS.iter().any(|c| {
        line.match_indices(c).any(|(at, _)| {
            let after = line[at + c.len()..].chars().next();
            after.is_none_or(|a| !a.is_ascii_alphanumeric())
        })
    });
    // A label of a message the runtime promises to send.
    let runtime_label = line.contains("[Exec Finished]");
    line.contains('`') || line.contains("[[") || token || command || runtime_label
}

/// The lines we wrote (not the input's): tool summaries, skill blocks and workspace files
/// are the caller's text.
fn our_lines(input: &RenderInput, text: &str) -> Vec<String> {
    let from_input = |line: &str| {
        input
            .context_files
            .iter()
            .any(|f| f.content.lines().any(|l| l == line))
    };
    text.lines()
        .filter(|l| !l.starts_with("- ") && !l.starts_with('<') && !l.starts_with(' '))
        .filter(|l| !from_input(l))
        .map(str::to_owned)
        .collect()
}

fn promise_lines() -> Vec<String> {
    let mut out: Vec<String> = variants()
        .iter()
        .flat_map(|input| {
            let rendered = match render(input) {
                Ok(rendered) => rendered,
                Err(e) => panic!("render: {e}"),
            };
            our_lines(input, &rendered.text)
        })
        .filter(|l| promise_bearing(l))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn every_promise_bearing_line_is_in_the_table() {
    let rows = rows();
    let missing: Vec<String> = promise_lines()
        .into_iter()
        .filter(|line| !rows.iter().any(|r| line.contains(r.needle)))
        .collect();
    assert!(
        missing.is_empty(),
        "prompt lines that promise something without a row in tests/promises.md (add the row with the agent-service test that backs it):\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_row_still_names_a_line() {
    let lines = promise_lines();
    let stale: Vec<&str> = rows()
        .iter()
        .filter(|r| !lines.iter().any(|l| l.contains(r.needle)))
        .map(|r| r.needle)
        .collect();
    assert!(
        stale.is_empty(),
        "rows that match no prompt line: {stale:?}"
    );
    assert!(rows().iter().any(|r| !r.pending));
}

/// The completion wake-up is promised only when the caller says it is on, and only to a
/// run with the exec tool.
#[test]
fn the_exec_wakeup_is_promised_only_with_the_fact_and_exec() {
    let text = |wakeups: bool, exec: bool| {
        let mut input = fixtures::realistic();
        input.exec_exit_wakeups = wakeups;
        if !exec {
            input.tools.retain(|t| t.name != "exec");
        }
        render(&input)
            .map(|r| r.text)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let promise = "an [Exec Finished] message brings you its exit status";
    assert!(text(true, true).contains(promise));
    assert!(text(true, true).contains("take up its [Exec Finished] message when it ends"));
    assert!(!text(false, true).contains("[Exec Finished]"));
    assert!(!text(true, false).contains("[Exec Finished]"));
}
