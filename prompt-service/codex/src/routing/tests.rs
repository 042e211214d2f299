//! The routing table, row by row: each file's route, each trigger, the
//! lightweight cron exception, and the memory note against its fallback.

use prompt_render::{ContextFile, FileStatus, RenderInput, SessionKind, WORKSPACE_FILES};

use super::Route;
use crate::{
    input::{CodexTurnInput, Trigger},
    turn::{CodexTurn, render_codex_turn},
};

const WS: &str = "/ws";

fn file(path: &str) -> ContextFile {
    ContextFile {
        path: path.to_owned(),
        content: format!("<{path} body>"),
        missing: false,
    }
}

/// Every workspace file with a place of its own, then one without.
fn all() -> Vec<&'static str> {
    [WORKSPACE_FILES, &["notes/extra.md"]].concat()
}

fn input(trigger: Trigger, files: &[&str]) -> CodexTurnInput {
    let mut base = RenderInput::new(WS);
    base.agent_name = "Ada".to_owned();
    base.context_files = files.iter().map(|f| file(f)).collect();
    let mut input = CodexTurnInput::new(base, "gpt-5.5");
    input.trigger = trigger;
    input.input_text = "hello".to_owned();
    input
}

fn run(input: &CodexTurnInput) -> CodexTurn {
    render_codex_turn(input).expect("maps")
}

/// Which of our three texts a file's body appears in.
fn placed(turn: &CodexTurn, path: &str) -> Vec<&'static str> {
    let body = format!("<{path} body>");
    let mut out = Vec::new();
    if turn
        .thread_instructions
        .as_deref()
        .is_some_and(|t| t.contains(&body))
    {
        out.push("thread");
    }
    if turn
        .turn_instructions
        .as_deref()
        .is_some_and(|t| t.contains(&body))
    {
        out.push("turn");
    }
    if turn.input_text.contains(&body) {
        out.push("input");
    }
    out
}

fn route_and_status(turn: &CodexTurn, path: &str) -> (Route, FileStatus) {
    let f = turn
        .files
        .iter()
        .find(|f| f.path == path)
        .expect("reported");
    (f.route, f.status)
}

/// P-32: every file of a user turn with memory tools on the active workspace.
#[test]
fn each_file_goes_where_the_table_says() {
    let mut i = input(Trigger::User, &all());
    i.memory_tools_available = true;
    i.memory_workspace_is_active = true;
    let turn = run(&i);
    let expect: &[(&str, Route, FileStatus, &[&str])] = &[
        (
            "AGENTS.md",
            Route::CodexProjectDoc,
            FileStatus::Injected,
            &[],
        ),
        (
            "SOUL.md",
            Route::TurnInstructions,
            FileStatus::Injected,
            &["turn"],
        ),
        (
            "TOOLS.md",
            Route::ThreadInstructions,
            FileStatus::Injected,
            &["thread"],
        ),
        (
            "IDENTITY.md",
            Route::TurnInstructions,
            FileStatus::Injected,
            &["turn"],
        ),
        (
            "USER.md",
            Route::TurnInstructions,
            FileStatus::Injected,
            &["turn"],
        ),
        (
            "HEARTBEAT.md",
            Route::HeartbeatPointer,
            FileStatus::Filtered,
            &[],
        ),
        (
            "BOOTSTRAP.md",
            Route::TurnInput,
            FileStatus::Injected,
            &["input"],
        ),
        (
            "MEMORY.md",
            Route::MemoryToolsNote,
            FileStatus::Injected,
            &[],
        ),
        (
            "notes/extra.md",
            Route::TurnInput,
            FileStatus::Injected,
            &["input"],
        ),
    ];
    for (path, route, status, places) in expect {
        assert_eq!(route_and_status(&turn, path), (*route, *status), "{path}");
        assert_eq!(placed(&turn, path), *places, "{path}");
    }
    // Report order: AGENTS, persona files, TOOLS, BOOTSTRAP, MEMORY, HEARTBEAT, others.
    let order: Vec<&str> = turn.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        order,
        [
            "AGENTS.md",
            "SOUL.md",
            "IDENTITY.md",
            "USER.md",
            "TOOLS.md",
            "BOOTSTRAP.md",
            "MEMORY.md",
            "HEARTBEAT.md",
            "notes/extra.md"
        ]
    );
    let turn_text = turn.turn_instructions.as_deref().unwrap_or_default();
    assert!(turn_text.contains("## OpenClaw Workspace Memory"));
    assert!(turn_text.contains("search it with memory_search"));
    assert!(!turn_text.contains("## OpenClaw Heartbeat"));
    // Soul files keep Codex's order: SOUL, IDENTITY, USER.
    let at = |p: &str| turn_text.find(&format!("### {p}")).unwrap_or(usize::MAX);
    assert!(at("SOUL.md") < at("IDENTITY.md") && at("IDENTITY.md") < at("USER.md"));
    // AGENTS.md counts as read whole by Codex; notes inject nothing.
    let agents = turn
        .files
        .iter()
        .find(|f| f.path == "AGENTS.md")
        .expect("agents");
    assert_eq!(agents.injected_chars, agents.raw_chars);
    let memory = turn
        .files
        .iter()
        .find(|f| f.path == "MEMORY.md")
        .expect("memory");
    assert_eq!(memory.injected_chars, 0);
}

/// P-32: the note needs both the tools and the active memory workspace;
/// anything else sends MEMORY.md down the bounded turn-input path.
#[test]
fn memory_note_or_turn_input_fallback() {
    for (tools, active, note) in [
        (true, true, true),
        (true, false, false),
        (false, true, false),
        (false, false, false),
    ] {
        let mut i = input(Trigger::User, &["MEMORY.md"]);
        i.memory_tools_available = tools;
        i.memory_workspace_is_active = active;
        let turn = run(&i);
        let case = format!("tools={tools} active={active}");
        let turn_text = turn.turn_instructions.clone().unwrap_or_default();
        if note {
            assert_eq!(
                route_and_status(&turn, "MEMORY.md"),
                (Route::MemoryToolsNote, FileStatus::Injected),
                "{case}"
            );
            assert!(placed(&turn, "MEMORY.md").is_empty(), "{case}");
            assert!(turn_text.contains("## OpenClaw Workspace Memory"), "{case}");
            assert_eq!(
                turn.input_text, "hello",
                "{case}: nothing else in the input"
            );
        } else {
            assert_eq!(
                route_and_status(&turn, "MEMORY.md"),
                (Route::TurnInput, FileStatus::Injected),
                "{case}"
            );
            assert_eq!(placed(&turn, "MEMORY.md"), ["input"], "{case}");
            assert!(
                !turn_text.contains("## OpenClaw Workspace Memory"),
                "{case}"
            );
            assert!(
                turn.input_text.ends_with("Request for this turn:\nhello"),
                "{case}"
            );
        }
    }
}

/// The fallback is bounded with the renderer's own budgets and cut.
#[test]
fn memory_fallback_is_budgeted_like_the_renderer() {
    let mut i = input(Trigger::User, &["TOOLS.md"]);
    i.base.context_files.push(ContextFile {
        path: "MEMORY.md".to_owned(),
        content: "m".repeat(30_000),
        missing: false,
    });
    let turn = run(&i);
    let memory = turn
        .files
        .iter()
        .find(|f| f.path == "MEMORY.md")
        .expect("memory");
    assert_eq!(memory.status, FileStatus::Truncated);
    assert_eq!(memory.raw_chars, 30_000);
    assert!(memory.injected_chars <= 20_000 && memory.injected_chars > 19_000);
    assert!(turn.input_text.contains("truncated MEMORY.md: kept"));
}

/// Thread-level files spend the budget first, so a large turn-scoped file
/// can never change the frozen thread text (lesson L13).
#[test]
fn turn_scoped_files_never_change_the_thread_text() {
    let small = run(&input(Trigger::User, &["TOOLS.md", "SOUL.md"]));
    let mut big = input(Trigger::User, &["TOOLS.md"]);
    big.base.bootstrap_limits.total_max_chars = 200;
    big.base.context_files.push(ContextFile {
        path: "SOUL.md".to_owned(),
        content: "s".repeat(5_000),
        missing: false,
    });
    big.base.channel.name = "telegram".to_owned();
    big.input_text = "something else".to_owned();
    let big = run(&big);
    assert_eq!(small.thread_start, big.thread_start);
    assert_eq!(
        route_and_status(&big, "SOUL.md"),
        (Route::TurnInstructions, FileStatus::Truncated)
    );
}

#[test]
fn missing_and_empty_files_are_left_out() {
    let mut i = input(Trigger::Heartbeat, &[]);
    for (path, content, missing) in [
        ("SOUL.md", "", true),
        ("USER.md", " \n\n", false),
        ("TOOLS.md", "", true),
        ("HEARTBEAT.md", "\n", false),
        ("BOOTSTRAP.md", "", true),
    ] {
        i.base.context_files.push(ContextFile {
            path: path.to_owned(),
            content: content.to_owned(),
            missing,
        });
    }
    let turn = run(&i);
    for (path, status) in [
        ("SOUL.md", FileStatus::Missing),
        ("USER.md", FileStatus::Empty),
        ("TOOLS.md", FileStatus::Missing),
        ("HEARTBEAT.md", FileStatus::Empty),
        ("BOOTSTRAP.md", FileStatus::Missing),
    ] {
        assert_eq!(route_and_status(&turn, path).1, status, "{path}");
    }
    let all = format!(
        "{}{}{}",
        turn.thread_instructions.as_deref().unwrap_or_default(),
        turn.turn_instructions.as_deref().unwrap_or_default(),
        turn.input_text
    );
    assert!(!all.contains("missing file"), "{all}");
    assert!(
        !all.contains("### USER.md") && !all.contains("HEARTBEAT.md"),
        "{all}"
    );
    assert_eq!(turn.input_text, "hello");
}

/// Heartbeat turns point at HEARTBEAT.md (never paste it); other turns do
/// not mention it.
#[test]
fn heartbeat_pointer_only_on_heartbeat_turns() {
    for trigger in [Trigger::User, Trigger::Cron, Trigger::Heartbeat] {
        let turn = run(&input(trigger, &["HEARTBEAT.md"]));
        let text = turn.turn_instructions.clone().unwrap_or_default();
        assert!(placed(&turn, "HEARTBEAT.md").is_empty(), "{trigger:?}");
        if trigger == Trigger::Heartbeat {
            assert_eq!(
                route_and_status(&turn, "HEARTBEAT.md"),
                (Route::HeartbeatPointer, FileStatus::Injected)
            );
            assert!(
                text.contains("Its checklist is /ws/HEARTBEAT.md."),
                "{text}"
            );
            assert!(text.contains("HEARTBEAT_OK"));
        } else {
            assert_eq!(
                route_and_status(&turn, "HEARTBEAT.md").1,
                FileStatus::Filtered
            );
            assert!(!text.contains("HEARTBEAT"), "{trigger:?}: {text}");
        }
    }
    // A heartbeat turn without the file keeps the acknowledgement rule but no pointer.
    let turn = run(&input(Trigger::Heartbeat, &[]));
    let text = turn.turn_instructions.unwrap_or_default();
    assert!(text.contains("## OpenClaw Heartbeat") && !text.contains("checklist is"));
}

/// Each trigger applies its session's file filter.
#[test]
fn triggers_apply_their_file_filters() {
    let cron = run(&input(Trigger::Cron, &all()));
    for (path, status) in [
        ("SOUL.md", FileStatus::Injected),
        ("TOOLS.md", FileStatus::Injected),
        ("BOOTSTRAP.md", FileStatus::Filtered),
        ("MEMORY.md", FileStatus::Filtered),
        ("notes/extra.md", FileStatus::Filtered),
        ("HEARTBEAT.md", FileStatus::Filtered),
    ] {
        assert_eq!(route_and_status(&cron, path).1, status, "cron {path}");
    }
    let mut sub = input(Trigger::User, &all());
    sub.base.session_kind = SessionKind::Subagent;
    let sub = run(&sub);
    let used: Vec<&str> = sub
        .files
        .iter()
        .filter(|f| f.status == FileStatus::Injected)
        .map(|f| f.path.as_str())
        .collect();
    assert_eq!(used, ["AGENTS.md", "TOOLS.md"]);
    let heartbeat = run(&input(Trigger::Heartbeat, &all()));
    assert!(
        heartbeat
            .files
            .iter()
            .all(|f| f.status == FileStatus::Injected),
        "{:?}",
        heartbeat.files
    );
}

/// P-38: a lightweight cron turn passes its input byte for byte and
/// adds nothing: no instructions, skills, files or project docs.
#[test]
fn lightweight_cron_is_byte_for_byte() {
    let odd =
        "  Run the report\r\n\twith <!-- openclaw:prompt-cache-boundary --> and ✓ trailing  \n";
    let mut i = input(Trigger::Cron, &all());
    i.lightweight_cron = true;
    i.input_text = odd.to_owned();
    i.memory_tools_available = true;
    i.memory_workspace_is_active = true;
    i.base.skills = vec![prompt_render::Skill {
        name: "s".to_owned(),
        location: "/s/SKILL.md".to_owned(),
        ..prompt_render::Skill::default()
    }];
    let turn = run(&i);
    assert_eq!(turn.turn_start["input"][0]["text"].as_str(), Some(odd));
    assert_eq!(turn.input_text, odd);
    assert!(turn.turn_start.get("collaborationMode").is_none());
    for params in [&turn.thread_start, &turn.thread_resume] {
        assert!(params.get("developerInstructions").is_none());
        assert_eq!(params["config"]["project_doc_max_bytes"], 0);
    }
    assert!(turn.files.iter().all(|f| f.status == FileStatus::Filtered));
    assert!(turn.skills.block.is_empty());
    assert!(turn.thread_instructions.is_none() && turn.turn_instructions.is_none());

    // The flag means nothing without the cron trigger, and a full cron turn
    // gets the skills list in its turn instructions.
    let mut user = i.clone();
    user.trigger = Trigger::User;
    assert!(run(&user).turn_start.get("collaborationMode").is_some());
    let mut full = i.clone();
    full.lightweight_cron = false;
    let full = run(&full);
    assert!(
        full.turn_instructions
            .unwrap_or_default()
            .contains("<available_skills>")
    );
    assert!(full.thread_start.get("config").is_none());
}

/// Request order never reaches the params (lesson L1).
#[test]
fn request_order_does_not_matter() {
    let forward = input(Trigger::User, &all());
    let mut backward = forward.clone();
    backward.base.context_files.reverse();
    assert_eq!(run(&forward), run(&backward));
}
