//! The MEMORY.md filter per session kind (lesson L5), through the real render input.

use std::{os::unix::fs::symlink, path::Path};

use openclaw_config::{LoadOptions, NoEnv, resolve::Dirs};

use super::{TurnChannel, TurnPrompt, TurnSources, render_input};
use crate::{sessions::SessionKind, visibility::*};

const CONFIG: &str = r#"{ agents: { defaults: { workspace: "WS" } } }"#;

/// The context files and tool names of one turn's render input.
fn render(ws: &Path, kind: SessionKind, heartbeat_turn: bool) -> (Vec<String>, Vec<String>) {
    let text = CONFIG.replace("WS", &ws.display().to_string());
    let config = openclaw_config::load(&text, &NoEnv, &LoadOptions::default()).unwrap();
    let dirs = Dirs {
        state_dir: ws.join("state"),
        home_dir: ws.to_path_buf(),
    };
    let agent = config.agent("main", &dirs).unwrap();
    let files: Vec<crate::visibility::InjectedFile> = openclaw_workspace::load_bootstrap_files(ws)
        .unwrap()
        .into_iter()
        .map(Into::into)
        .collect();
    let private = PrivateFiles::scan(ws, &files);
    let index = openclaw_memory::AgentMemory::new(
        openclaw_memory::MemorySettings::default(),
        agent.agent_dir.join("memory.sqlite"),
    )
    .unwrap();
    let tools: Vec<_> = memory_tools(kind, Some(std::sync::Arc::new(index)))
        .iter()
        .map(|t| openclaw_tools::spec_of(t.as_ref()))
        .collect();
    let channel = TurnChannel::default();
    let sources = TurnSources {
        config: &config,
        files: &files,
        private: &private,
        docs: None,
    };
    let turn = TurnPrompt {
        kind,
        heartbeat_turn,
        ..TurnPrompt::for_test(&agent, ws, &channel, &tools)
    };
    let input = render_input(&turn, &sources);
    (
        input.context_files.into_iter().map(|f| f.path).collect(),
        input.tools.into_iter().map(|t| t.name).collect(),
    )
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("AGENTS.md", "be brief\n"),
        ("TOOLS.md", "tools\n"),
        ("USER.md", "the user\n"),
        ("MEMORY.md", "likes green tea\n"),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

#[test]
fn memory_reaches_only_the_private_main_session() {
    let ws = workspace();
    let cases = [
        (SessionKind::Main, false, true),
        (SessionKind::Main, true, true),
        (SessionKind::Direct, false, false),
        (SessionKind::Group, false, false),
        (SessionKind::Channel, false, false),
        (SessionKind::Cron, false, false),
        (SessionKind::Subagent, false, false),
    ];
    for (kind, heartbeat, sees_memory) in cases {
        let (files, tools) = render(ws.path(), kind, heartbeat);
        assert_eq!(
            files.iter().any(|f| f == "MEMORY.md"),
            sees_memory,
            "{kind:?} (heartbeat {heartbeat}): {files:?}"
        );
        assert!(
            files.iter().any(|f| f == "AGENTS.md"),
            "{kind:?}: {files:?}"
        );
        let expected_tools: &[&str] = if sees_memory {
            &["memory_search", "memory_get"]
        } else {
            &[]
        };
        assert_eq!(tools, expected_tools, "{kind:?}");
    }
}

#[test]
fn a_bootstrap_file_that_is_memory_in_disguise_stays_private() {
    let ws = workspace();
    std::fs::remove_file(ws.path().join("USER.md")).unwrap();
    symlink(ws.path().join("MEMORY.md"), ws.path().join("USER.md")).unwrap();
    std::fs::remove_file(ws.path().join("TOOLS.md")).unwrap();
    std::fs::create_dir(ws.path().join("memory")).unwrap();
    std::fs::write(ws.path().join("memory/tools.md"), "private tools notes\n").unwrap();
    symlink(
        ws.path().join("memory/tools.md"),
        ws.path().join("TOOLS.md"),
    )
    .unwrap();
    let (group, _) = render(ws.path(), SessionKind::Group, false);
    assert!(
        !group
            .iter()
            .any(|f| f == "USER.md" || f == "TOOLS.md" || f == "MEMORY.md"),
        "{group:?}"
    );
    let (main, _) = render(ws.path(), SessionKind::Main, false);
    assert!(main.iter().any(|f| f == "USER.md") && main.iter().any(|f| f == "TOOLS.md"));
}

#[test]
fn private_paths_by_name() {
    for private in [
        "MEMORY.md",
        "memory.md",
        "./MEMORY.md",
        "sub/Memory.MD",
        "memory/a.md",
        "memory\\b.md",
    ] {
        assert!(is_private_path(private), "{private}");
    }
    for public in ["AGENTS.md", "memories.md", "notes/memory", "memory"] {
        assert!(!is_private_path(public), "{public}");
    }
}

#[test]
fn memory_search_off_leaves_memory_get_in_the_main_session_only() {
    let ws = workspace();
    let config = openclaw_config::load(
        r#"{ agents: { defaults: { memorySearch: { enabled: false } } } }"#,
        &NoEnv,
        &LoadOptions::default(),
    )
    .unwrap();
    let settings = openclaw_memory::MemorySettings::resolve(
        &config,
        "main",
        &std::collections::HashMap::<String, String>::new(),
    )
    .unwrap();
    assert!(!settings.enabled);
    let index = std::sync::Arc::new(
        openclaw_memory::AgentMemory::new(settings, ws.path().join("state/memory.sqlite")).unwrap(),
    );
    // What `Loaded::memory` hands over when memorySearch.enabled is false.
    let offered = |kind, index| -> Vec<&'static str> {
        memory_tools(kind, index).iter().map(|t| t.name()).collect()
    };
    assert_eq!(offered(SessionKind::Main, None), ["memory_get"]);
    assert_eq!(
        offered(SessionKind::Main, Some(std::sync::Arc::clone(&index))),
        ["memory_search", "memory_get"]
    );
    assert!(offered(SessionKind::Group, Some(index)).is_empty());
}
