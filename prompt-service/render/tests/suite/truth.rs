//! The prompt tells the truth in every session kind: nothing the budget drops
//! vanishes unmarked, rule files keep their rules, heartbeat text only where
//! heartbeats run, first-run text only on user turns, and no line promises
//! what the run cannot do. Each test names the request and the exact lines
//! expected or forbidden.

use super::behaviour::ReportFile;
use prompt_render::{
    ChannelInfo, ChatType, ContextFile, FileStatus, RenderInput, Rendered, ReplyDelivery,
    SessionKind, TruncationCause, TurnKind, fixtures as fixture, render,
};

fn ok(input: &RenderInput) -> Rendered {
    match render(input) {
        Ok(r) => r,
        Err(e) => panic!("render failed: {e}"),
    }
}

fn file(path: &str, content: String) -> ContextFile {
    fixture::file(path, content)
}

/// Every one of the `sections` headings of [`agents_md`] stands in the stable prefix.
fn assert_every_area_heading(r: &Rendered, sections: usize) {
    for s in 0..sections {
        assert!(
            r.stable_prefix.contains(&format!("\n## Area {s}\n")),
            "area {s}"
        );
    }
}

/// An AGENTS.md of `sections` headings, each with prose and `rules` rule lines.
fn agents_md(sections: usize, rules: usize, prose_lines: usize) -> String {
    let mut out = vec!["# AGENTS.md".to_owned()];
    for s in 0..sections {
        out.push(format!("## Area {s}"));
        for p in 0..prose_lines {
            out.push(format!(
                "Background for area {s}, note {p}: why this area matters and how it came to be, told at some length so the rules read in context."
            ));
        }
        for r in 0..rules {
            out.push(format!("- Rule {s}.{r}: follow the team's way here."));
        }
    }
    out.join("\n")
}

/// Workspace files at the default caps in which the fixed-order budget used
/// to give MEMORY.md nothing: AGENTS.md, SOUL.md and TOOLS.md spent the total.
fn crowded_workspace() -> RenderInput {
    let mut input = RenderInput::new(fixture::WORKSPACE);
    input.agent_id = "main".into();
    input.context_files = vec![
        file("AGENTS.md", fixture::prose("agents", 25_000)),
        file("SOUL.md", fixture::prose("soul", 12_000)),
        file("TOOLS.md", fixture::prose("tools", 20_000)),
        file("IDENTITY.md", fixture::prose("identity", 1_000)),
        file("USER.md", fixture::prose("user", 8_000)),
        file("MEMORY.md", fixture::prose("memory", 30_000)),
    ];
    input
}

/// Item 1: at the default caps MEMORY.md gets its fair share of the total
/// (before: 0 characters, status Omitted, and no marker in the prompt).
#[test]
fn memory_gets_its_fair_share_at_default_caps() {
    let r = ok(&crowded_workspace());
    let memory = r.report_file("MEMORY.md").map(|f| (f.status, f.cause));
    assert_eq!(
        memory,
        Some((FileStatus::Truncated, TruncationCause::TotalLimit))
    );
    // An equal share of what the small files leave (the fixture's prose
    // loses a trailing space or two when trimmed, hence the slack).
    let injected = r.report_file("MEMORY.md").map_or(0, |f| f.injected_chars);
    assert!((13_000..=13_010).contains(&injected), "{injected}");
    // Small files are met in full; the large ones split the rest equally.
    for path in ["IDENTITY.md", "USER.md", "SOUL.md"] {
        let f = r.report_file(path).map(|f| f.status);
        assert_eq!(f, Some(FileStatus::Injected), "{path}");
    }
    for path in ["AGENTS.md", "TOOLS.md"] {
        let f = r.report_file(path).map_or(0, |f| f.injected_chars);
        assert!((13_000..=13_010).contains(&f), "{path}: {f}");
    }
    let total: u32 = r.context.files.iter().map(|f| f.injected_chars).sum();
    assert!(total <= 60_000, "{total}");
}

/// Item 1: every cut file is listed in the notice with the budget that cut
/// it, and MEMORY.md's cut brings the advice of P-49.
#[test]
fn the_notice_lists_every_cut_with_its_reason() {
    let r = ok(&crowded_workspace());
    let kept = |path: &str| r.report_file(path).map_or(0, |f| f.injected_chars);
    for line in [
        format!(
            "- AGENTS.md: {} of 25000 characters kept (its share of the total limit).",
            kept("AGENTS.md")
        ),
        format!(
            "- TOOLS.md: {} of 20000 characters kept (its share of the total limit).",
            kept("TOOLS.md")
        ),
        format!(
            "- MEMORY.md: {} of 30000 characters kept (its share of the total limit).",
            kept("MEMORY.md")
        ),
        "MEMORY.md is longer than the prompt holds: offer to distil it into a shorter lasting summary and move detailed history into memory/*.md, or suggest the operator raise the bootstrap limits on purpose.".to_owned(),
    ] {
        assert!(r.stable_prefix.contains(&line), "missing: {line}");
    }
    assert!(!r.stable_prefix.contains("- SOUL.md: 1"));
    assert!(r.stable_prefix.contains("[…truncated MEMORY.md: kept "));
}

/// Item 1: a file the total budget leaves out keeps its heading, a marker
/// naming it, its purpose line and a line in the notice.
#[test]
fn a_dropped_file_is_marked_and_stays_listed() {
    let mut input = crowded_workspace();
    input.bootstrap_limits.total_max_chars = 360;
    input.bootstrap_limits.max_chars_per_file = 20_000;
    let r = ok(&input);
    let memory = r.report_file("MEMORY.md").map(|f| f.status);
    assert_eq!(memory, Some(FileStatus::Omitted));
    for line in [
        "## MEMORY.md\n[…MEMORY.md left out: its 30000 characters did not fit the total budget for workspace files; read the file when you need it…]",
        "- MEMORY.md: left out (its share of the total limit).",
        "- MEMORY.md: long-term memory",
    ] {
        assert!(r.stable_prefix.contains(line), "missing: {line}");
    }
}

/// Item 6: a cut AGENTS.md keeps every heading and rule line (before: a
/// plain head/tail cut kept 56 of its 104 rule lines).
#[test]
fn a_cut_agents_md_keeps_its_rules() {
    let content = agents_md(8, 13, 8);
    let rules: Vec<&str> = content.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(rules.len(), 104);
    let mut input = RenderInput::new(fixture::WORKSPACE);
    input.bootstrap_limits.max_chars_per_file = 12_000;
    input.context_files = vec![file("AGENTS.md", content.clone())];
    assert!(content.chars().count() > 12_000);
    let r = ok(&input);
    let kept = rules
        .iter()
        .filter(|l| r.stable_prefix.contains(*l))
        .count();
    assert_eq!(kept, 104);
    assert_every_area_heading(&r, 8);
    assert!(
        r.stable_prefix
            .contains("[…AGENTS.md shortened to fit: lines ")
    );
    assert!(
        r.stable_prefix
            .contains("[…AGENTS.md continues in full from line ")
    );
    assert_eq!(
        r.report_file("AGENTS.md").map(|f| (f.status, f.cause)),
        Some((FileStatus::Truncated, TruncationCause::PerFileLimit))
    );
    let injected = r.report_file("AGENTS.md").map_or(0, |f| f.injected_chars);
    assert!(injected <= 12_000, "{injected}");
}

/// Item 6: when not even the digest fits, headings stay, rules follow in
/// file order and a marker counts the rules left out.
#[test]
fn a_tight_agents_md_digest_counts_what_it_leaves_out() {
    let mut input = RenderInput::new(fixture::WORKSPACE);
    input.bootstrap_limits.max_chars_per_file = 2_000;
    input.context_files = vec![file("AGENTS.md", agents_md(8, 13, 2))];
    let r = ok(&input);
    assert_every_area_heading(&r, 8);
    assert!(
        r.stable_prefix
            .contains("- Rule 0.0: follow the team's way here.")
    );
    assert!(
        r.stable_prefix
            .contains(" more rules of AGENTS.md left out here…]")
    );
}

/// A realistic main-session input whose workspace holds a real HEARTBEAT.md
/// checklist and a pending BOOTSTRAP.md.
fn with_heartbeat_and_bootstrap() -> RenderInput {
    let mut input = fixture::realistic();
    input.context_files.retain(|f| {
        !f.path.eq_ignore_ascii_case("HEARTBEAT.md") && !f.path.eq_ignore_ascii_case("BOOTSTRAP.md")
    });
    input
        .context_files
        .push(file("HEARTBEAT.md", "- Check the build queue.".to_owned()));
    input
        .context_files
        .push(file("BOOTSTRAP.md", "Ask the user for a name.".to_owned()));
    input
}

const HEARTBEAT_LINE: &str = "Heartbeat polls arrive as a user message with this prompt:";

/// Item 2, P-51: a group, channel or direct session that heartbeats do not
/// serve carries neither the Heartbeats section nor HEARTBEAT.md (before:
/// both rendered wherever the agent's heartbeat was on).
#[test]
fn heartbeat_text_only_in_sessions_heartbeats_serve() {
    for (chat, serves, expected) in [
        (ChatType::Group, None, false),
        (ChatType::Channel, None, false),
        (ChatType::Direct, Some(false), false),
        (ChatType::Group, Some(false), false),
        (ChatType::Direct, Some(true), true),
        (ChatType::Unspecified, None, true),
    ] {
        let mut input = with_heartbeat_and_bootstrap();
        input.channel.chat_type = chat;
        input.heartbeat.serves_session = serves;
        let r = ok(&input);
        assert_eq!(
            r.text.contains(HEARTBEAT_LINE),
            expected,
            "{chat:?} {serves:?}"
        );
        assert_eq!(
            r.text.contains("## HEARTBEAT.md\n- Check the build queue."),
            expected,
            "{chat:?} {serves:?}"
        );
        let status = r.report_file("HEARTBEAT.md").map(|f| f.status);
        let want = if expected {
            FileStatus::Injected
        } else {
            FileStatus::Filtered
        };
        assert_eq!(status, Some(want), "{chat:?} {serves:?}");
    }
}

/// Item 2: a heartbeat turn always gets its checklist and the Heartbeats
/// section, and its stable prefix is the user turn's.
#[test]
fn a_heartbeat_turn_gets_its_checklist_and_keeps_the_prefix() {
    let mut input = with_heartbeat_and_bootstrap();
    input.heartbeat.serves_session = Some(false);
    let user = ok(&input);
    input.turn_kind = TurnKind::Heartbeat;
    let beat = ok(&input);
    assert!(
        beat.text
            .contains("## HEARTBEAT.md\n- Check the build queue.")
    );
    assert!(beat.text.contains(HEARTBEAT_LINE));
    assert!(!user.text.contains(HEARTBEAT_LINE));
    assert_eq!(beat.stable_prefix, user.stable_prefix);
}

/// Item 3: only a user's turn is asked to work through the first-run setup;
/// heartbeat, wake-up, cron and subagent turns are told to leave it. The
/// stable prefix is the same for all of them.
#[test]
fn bootstrap_pending_guides_only_user_turns() {
    const WORK: &str = "work through it with the user before other tasks";
    const LEAVE: &str = "but no user started this turn: leave the setup for a conversation with the user and do only what this turn asks.";
    let mut input = with_heartbeat_and_bootstrap();
    let mut prefixes = Vec::new();
    for (kind, from_user) in [
        (TurnKind::Unspecified, true),
        (TurnKind::User, true),
        (TurnKind::Heartbeat, false),
        (TurnKind::WakeUp, false),
        (TurnKind::Cron, false),
        (TurnKind::Subagent, false),
    ] {
        input.turn_kind = kind;
        let r = ok(&input);
        assert_eq!(r.dynamic_suffix.contains(WORK), from_user, "{kind:?}");
        assert_eq!(r.dynamic_suffix.contains(LEAVE), !from_user, "{kind:?}");
        assert!(
            !r.stable_prefix.contains("## Bootstrap Pending"),
            "{kind:?}"
        );
        prefixes.push(r.stable_prefix_sha256);
    }
    prefixes.dedup();
    assert_eq!(prefixes.len(), 1, "the prefix moved with the turn kind");
    // A heartbeat session kind without a turn kind counts as a heartbeat turn.
    input.turn_kind = TurnKind::Unspecified;
    input.session_kind = SessionKind::Heartbeat;
    assert!(ok(&input).dynamic_suffix.contains(LEAVE));
}

/// Item 7: the first-run setup's last step is offered only with a tool that
/// can remove a file; otherwise the user is asked to.
#[test]
fn removing_bootstrap_md_is_offered_only_with_a_tool_that_can() {
    let mut input = with_heartbeat_and_bootstrap();
    assert!(ok(&input).dynamic_suffix.contains(
        "remove BOOTSTRAP.md (for example `rm BOOTSTRAP.md` with exec) once setup is complete."
    ));
    input.tools.retain(|t| t.name != "exec");
    assert!(ok(&input).dynamic_suffix.contains(
        "delete BOOTSTRAP.md with a delete-file patch through apply_patch once setup is complete."
    ));
    input.tools.retain(|t| t.name != "apply_patch");
    let r = ok(&input);
    assert!(r.dynamic_suffix.contains(
        "once setup is complete, tell the user so they can delete BOOTSTRAP.md: no tool in this run removes files."
    ));
    assert!(!r.text.contains("and delete BOOTSTRAP.md once"));
}

/// Item 4: the silent-reply rule reaches direct chats, main sessions and
/// cron runs, where the runtime honours it too; not subagents (their reply
/// is their result) nor message-tool-only runs (not sending is silence).
#[test]
fn silent_replies_wherever_the_runtime_honours_them() {
    const ANY: &str = "If a turn needs no answer, reply with exactly NO_REPLY and nothing else; nothing is delivered.";
    let mut input = fixture::realistic();
    assert!(ok(&input).dynamic_suffix.contains(ANY), "direct chat");
    input.channel = ChannelInfo::default();
    assert!(ok(&input).dynamic_suffix.contains(ANY), "main session");
    input.session_kind = SessionKind::Cron;
    let cron = ok(&input);
    assert!(cron.dynamic_suffix.contains(ANY), "cron");
    input.session_kind = SessionKind::Subagent;
    assert!(!ok(&input).text.contains("NO_REPLY"), "subagent");
    input.session_kind = SessionKind::Main;
    input.channel.reply_delivery = ReplyDelivery::MessageToolOnly;
    assert!(!ok(&input).text.contains("NO_REPLY"), "message tool only");
}

/// Item 4: minimal mode says where the run's reply goes and how chats are
/// reached (before: no Messaging section at all).
#[test]
fn minimal_mode_carries_the_messaging_rules_that_apply() {
    let mut input = fixture::realistic();
    input.session_kind = SessionKind::Subagent;
    let sub = ok(&input);
    for line in [
        "## Messaging\nYour final reply is your result: it goes back to the session that started you as a [Subagent Result] message and reaches no chat by itself, so make it complete and self-contained.",
        "Reach a chat only with the message tool (action \"send\", a channel, a target and the text), never through a shell command or a raw API call.",
    ] {
        assert!(sub.dynamic_suffix.contains(line), "missing: {line}");
    }
    input.session_kind = SessionKind::Cron;
    input.tools.retain(|t| t.name != "message");
    let cron = ok(&input);
    for line in [
        "Your final reply is this job's result: it stays in the job's session, and goes on to another session only when the job is set to deliver it.",
        "No tool in this run sends to a chat; do not try to reach one through a shell command or a raw API call.",
    ] {
        assert!(cron.dynamic_suffix.contains(line), "missing: {line}");
    }
}

/// P-50: no date without a known time zone.
#[test]
fn no_date_without_a_time_zone() {
    let mut input = fixture::realistic();
    input.current_date = "2026-12-01".into();
    assert!(
        ok(&input)
            .dynamic_suffix
            .contains("Today is Tuesday (2026-12-01) in Europe/Berlin.")
    );
    input.user_timezone.clear();
    let r = ok(&input);
    assert!(!r.text.contains("2026-12-01"));
    assert!(!r.text.contains("## Current Date"));
}

/// Two hundred skills with realistic names, descriptions and locations.
fn many_skills(n: usize) -> Vec<prompt_render::Skill> {
    (0..n)
        .map(|i| prompt_render::Skill {
            name: format!("skill-{i:03}"),
            description: format!("Helps with task family {i}: gathers inputs, runs the steps and reports what changed, with examples."),
            location: format!("{}/skills/skill-{i:03}/SKILL.md", fixture::WORKSPACE),
            version_source: prompt_render::SkillVersionSource::Content(
                format!("# skill {i}").into_bytes(),
            ),
        })
        .collect()
}

/// Item 5: with 200 skills at the default limits the compact listing holds
/// the 150 the count limit allows (before: 116, the version tags spent the
/// budget), and every omitted skill is named in the prompt (before: 64 were
/// neither listed nor named).
#[test]
fn an_overflowing_skills_list_names_every_skill() {
    let mut input = RenderInput::new(fixture::WORKSPACE);
    input.skills = many_skills(200);
    let r = ok(&input);
    assert_eq!(r.skills.entries.len(), 150, "listed");
    assert!(r.skills.compact);
    for i in 0..200 {
        let name = format!("skill-{i:03}");
        assert!(
            r.stable_prefix.contains(&name),
            "{name} is neither listed nor named"
        );
    }
    assert!(
        r.stable_prefix
            .contains("Not listed: skill-150, skill-151,")
    );
    assert!(r.stable_prefix.contains(", skill-199."));
    let block = r
        .sections
        .iter()
        .find(|s| s.id == "skills")
        .map_or(0, |s| s.chars);
    assert!(block <= 18_000 + 400, "{block}");
}

/// The gateway tool with the actions agent-service's tool offers.
fn config_only_gateway(input: &mut RenderInput) {
    for t in &mut input.tools {
        if t.name == "gateway" {
            t.json_schema = r#"{"type":"object","properties":{"action":{"type":"string","enum":["config.schema.lookup","config.patch","config.apply"]}}}"#.into();
        }
    }
}

/// Item 7: restarts and updates are offered only when the gateway tool can
/// do them (before: offered whatever the tool could do).
#[test]
fn restart_and_update_only_when_the_gateway_can() {
    let mut input = fixture::realistic();
    let open = ok(&input);
    assert!(open.stable_prefix.contains("For configuration changes and restarts, use the gateway tool instead of asking the user to run commands."));
    assert!(
        open.stable_prefix
            .contains("Run `update.run` only when the user explicitly asks for an update.")
    );
    config_only_gateway(&mut input);
    let r = ok(&input);
    assert!(r.stable_prefix.contains("For configuration changes, use the gateway tool instead of asking the user to run commands."));
    assert!(r.stable_prefix.contains("The gateway tool cannot restart or update OpenClaw here; if the user wants either, tell them it is done outside this session."));
    for gone in [
        "restarts or updates only when",
        "update.run",
        "and restarts,",
    ] {
        assert!(!r.stable_prefix.contains(gone), "{gone}");
    }
}

/// Item 7: a subagent or cron turn is not offered /reasoning (no user is
/// there to type it).
#[test]
fn reasoning_switch_only_where_a_user_can_use_it() {
    let mut input = fixture::realistic();
    assert!(
        ok(&input)
            .dynamic_suffix
            .contains("the user can switch it with /reasoning")
    );
    for kind in [SessionKind::Subagent, SessionKind::Cron] {
        input.session_kind = kind;
        let r = ok(&input);
        assert!(r.dynamic_suffix.contains("Reasoning: off."), "{kind:?}");
        assert!(!r.text.contains("/reasoning"), "{kind:?}");
    }
}

/// Item 9: the guidance lines, each present only with what backs it.
#[test]
fn guidance_follows_the_tools_and_policy_in_force() {
    let approve = "`/approve` is the user's command, never yours; a one-time approval covers only the exact command it was given for.";
    let cron = "Before changing scheduled jobs, list them and edit the matching one instead of adding a duplicate.";
    let correction = "A correction mid-task updates the task in progress; it does not end it.";
    let own_rules = "Never change your own instructions, safety rules or tool policy unasked.";
    let snapshot = "A newer snapshot of a fact (a status, a file, a list) replaces older ones.";
    let parent = "Only this session talks to the user; subagents report to it.";
    let raw_send = "Never reach a chat through a shell command or a raw API call.";
    let mut input = fixture::realistic();
    let r = ok(&input);
    for line in [
        approve, cron, correction, own_rules, snapshot, parent, raw_send,
    ] {
        assert!(r.text.contains(line), "missing: {line}");
    }
    // Nobody is asked: no /approve line.
    input.exec_approvals_never_ask = true;
    assert!(!ok(&input).text.contains(approve));
    // Without the tools that back them, the tool-bound lines go.
    input.tools.retain(|t| {
        !matches!(
            t.name.as_str(),
            "cron" | "sessions_spawn" | "subagents" | "message"
        )
    });
    let r = ok(&input);
    for line in [cron, parent, raw_send] {
        assert!(!r.text.contains(line), "still there: {line}");
    }
    assert!(r.text.contains(correction) && r.text.contains(own_rules));
}
