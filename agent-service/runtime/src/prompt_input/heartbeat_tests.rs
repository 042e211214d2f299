//! The turn kind and the heartbeat-session fact of the render input (P-51),
//! through the real config and workspace, and what the rendered prompt says
//! with them.

use std::path::Path;

use openclaw_config::{LoadOptions, NoEnv, resolve::Dirs};

use super::{TurnChannel, TurnPrompt, TurnSources, render_input};
use crate::{sessions::SessionKind, visibility::PrivateFiles};

/// The render input of one turn of `agent` under `config` (`WS` stands for
/// the workspace).
fn input_of(
    ws: &Path,
    config: &str,
    agent: &str,
    kind: SessionKind,
    heartbeat_turn: bool,
    chat_type: &str,
) -> prompt_render::RenderInput {
    input_with(ws, config, agent, kind, heartbeat_turn, false, chat_type)
}

/// [`input_of`] for a turn that may be a wake-up (system events only).
fn input_with(
    ws: &Path,
    config: &str,
    agent: &str,
    kind: SessionKind,
    heartbeat_turn: bool,
    wake_up: bool,
    chat_type: &str,
) -> prompt_render::RenderInput {
    let text = config.replace("WS", &ws.display().to_string());
    let config = openclaw_config::load(&text, &NoEnv, &LoadOptions::default()).unwrap();
    let dirs = Dirs {
        state_dir: ws.join("state"),
        home_dir: ws.to_path_buf(),
    };
    let agent = config.agent(agent, &dirs).unwrap();
    let files: Vec<crate::visibility::InjectedFile> = openclaw_workspace::load_bootstrap_files(ws)
        .unwrap()
        .into_iter()
        .map(Into::into)
        .collect();
    let private = PrivateFiles::scan(ws, &files);
    let channel = TurnChannel {
        channel: if chat_type.is_empty() {
            String::new()
        } else {
            "telegram".to_owned()
        },
        chat_type: chat_type.to_owned(),
        ..TurnChannel::default()
    };
    let sources = TurnSources {
        config: &config,
        files: &files,
        private: &private,
        docs: None,
    };
    let turn = TurnPrompt {
        kind,
        heartbeat_turn,
        wake_up,
        ..TurnPrompt::for_test(&agent, ws, &channel, &[])
    };
    render_input(&turn, &sources)
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("AGENTS.md", "be brief\n"),
        ("HEARTBEAT.md", "- Check the build queue.\n"),
        ("BOOTSTRAP.md", "Ask the user for a name.\n"),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

const ON: &str = r#"{ agents: { defaults: { workspace: "WS", heartbeat: { every: "30m" } } } }"#;
const POLL: &str = "Heartbeat polls arrive as a user message with this prompt:";
const CHECKLIST: &str = "## HEARTBEAT.md\n- Check the build queue.";

/// Heartbeats run in the main session only: group, channel and direct
/// sessions get neither the Heartbeats section nor HEARTBEAT.md.
#[test]
fn heartbeat_text_follows_the_sessions_heartbeats_run_in() {
    let ws = workspace();
    for (kind, chat, serves) in [
        (SessionKind::Main, "", true),
        (SessionKind::Main, "direct", true),
        (SessionKind::Direct, "direct", false),
        (SessionKind::Group, "group", false),
        (SessionKind::Channel, "channel", false),
    ] {
        let input = input_of(ws.path(), ON, "main", kind, false, chat);
        assert_eq!(input.heartbeat.serves_session, Some(serves), "{kind:?}");
        assert_eq!(input.turn_kind, prompt_render::TurnKind::User, "{kind:?}");
        let r = prompt_render::render(&input).unwrap();
        assert_eq!(r.text.contains(POLL), serves, "{kind:?}");
        assert_eq!(r.text.contains(CHECKLIST), serves, "{kind:?}");
    }
}

/// The turn's kind comes from the run: a heartbeat turn gets its checklist
/// and is not asked to run the first-run setup; cron and subagent turns say so.
#[test]
fn the_turn_kind_comes_from_the_run() {
    let ws = workspace();
    let beat = input_of(ws.path(), ON, "main", SessionKind::Main, true, "");
    assert_eq!(beat.turn_kind, prompt_render::TurnKind::Heartbeat);
    let r = prompt_render::render(&beat).unwrap();
    assert!(r.text.contains(CHECKLIST));
    assert!(r.text.contains("but no user started this turn"));
    assert!(!r.text.contains("work through it with the user"));
    let user = input_of(ws.path(), ON, "main", SessionKind::Main, false, "");
    let u = prompt_render::render(&user).unwrap();
    assert!(u.text.contains("work through it with the user"));
    assert_eq!(u.stable_prefix, r.stable_prefix);
    for (kind, want) in [
        (SessionKind::Cron, prompt_render::TurnKind::Cron),
        (SessionKind::Subagent, prompt_render::TurnKind::Subagent),
    ] {
        let input = input_of(ws.path(), ON, "main", kind, false, "");
        assert_eq!(input.turn_kind, want);
        assert_eq!(input.heartbeat.serves_session, Some(false));
    }
}

/// A non-default agent follows its own heartbeat: off unless it has one
/// (when any agent has a heartbeat block, only those agents run heartbeats).
#[test]
fn a_non_default_agent_follows_its_own_heartbeat() {
    let ws = workspace();
    let shared = r#"{ agents: { defaults: { workspace: "WS", heartbeat: { every: "30m" } },
        list: [ { id: "main", default: true }, { id: "ops" } ] } }"#;
    let ops = input_of(ws.path(), shared, "ops", SessionKind::Main, false, "");
    assert_eq!(ops.heartbeat.serves_session, Some(false));
    let own = r#"{ agents: { defaults: { workspace: "WS" },
        list: [ { id: "main", default: true }, { id: "ops", heartbeat: { every: "1h" } } ] } }"#;
    let ops = input_of(ws.path(), own, "ops", SessionKind::Main, false, "");
    assert_eq!(ops.heartbeat.serves_session, Some(true));
    let r = prompt_render::render(&ops).unwrap();
    assert!(r.text.contains(CHECKLIST));
    let main = input_of(ws.path(), own, "main", SessionKind::Main, false, "");
    assert_eq!(main.heartbeat.serves_session, Some(false));
}

/// A run that starts with system events only (a background command ended, a subagent's
/// result) is a wake-up: it says so, and does not ask for the first-run setup a person's
/// message would get; the stable prefix is the user turn's.
#[test]
fn a_run_of_system_events_only_is_a_wake_up() {
    let ws = workspace();
    let wake = input_with(ws.path(), ON, "main", SessionKind::Main, false, true, "");
    assert_eq!(wake.turn_kind, prompt_render::TurnKind::WakeUp);
    let w = prompt_render::render(&wake).unwrap();
    assert!(
        !w.text.contains("work through it with the user"),
        "{}",
        w.text
    );
    let user = input_of(ws.path(), ON, "main", SessionKind::Main, false, "");
    let u = prompt_render::render(&user).unwrap();
    assert_eq!(w.stable_prefix, u.stable_prefix);
    // A heartbeat is a heartbeat even when it carries no person's message.
    let beat = input_with(ws.path(), ON, "main", SessionKind::Main, true, true, "");
    assert_eq!(beat.turn_kind, prompt_render::TurnKind::Heartbeat);
}
