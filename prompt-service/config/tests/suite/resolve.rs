//! Resolved views: OpenClaw's defaults pinned, and per-agent merging.

use std::path::PathBuf;
use std::time::Duration;

use openclaw_config::raw::{
    BlockStreamingBreak, BreakPreference, CodexApprovalPolicy, ContextInjection, DelegationMode,
    Gpt5Personality, OwnerDisplay, QueueDrop, QueueMode, SandboxBackend, SandboxLimits,
    SandboxMode, SandboxNetwork, SandboxScope, TimeFormat, ToolProfile, TruncationWarning, TtsAuto,
    WorkspaceAccess,
};
use openclaw_config::resolve::{
    AgentRuntime, BootstrapLimits, Dirs, HumanDelaySettings, ModelAlias, SkillAllowlist,
    SkillsLimits,
};
use openclaw_config::{ConfigError, LoadOptions, load};

use super::support::{EXAMPLE, env, error_lines, valid};

fn dirs() -> Dirs {
    Dirs {
        state_dir: PathBuf::from("/state"),
        home_dir: PathBuf::from("/home/u"),
    }
}

#[test]
fn defaults_of_an_empty_config_are_openclaws() {
    let config = valid("{}");
    assert_eq!(config.agent_ids(), vec!["main"]);
    assert_eq!(config.default_agent_id(), "main");
    let Ok(main) = config.agent("main", &dirs()) else {
        panic!("main exists")
    };
    assert!(main.is_default);
    assert_eq!(main.workspace, PathBuf::from("/state/workspace"));
    assert_eq!(main.agent_dir, PathBuf::from("/state/agents/main/agent"));
    assert_eq!(
        main.sessions_dir,
        PathBuf::from("/state/agents/main/sessions")
    );
    assert_eq!(
        main.bootstrap,
        BootstrapLimits {
            max_chars: 20_000,
            total_max_chars: 60_000
        }
    );
    assert_eq!(main.context_injection, ContextInjection::Always);
    assert_eq!(main.skills, SkillAllowlist::All);
    assert_eq!(
        main.skills_limits,
        SkillsLimits {
            max_candidates_per_root: 300,
            max_skills_loaded_per_source: 200,
            max_skills_in_prompt: 150,
            max_skills_prompt_chars: 18_000,
            max_skill_file_bytes: 256_000,
        }
    );
    assert_eq!(main.delegation_mode, DelegationMode::Suggest);
    assert!(main.heartbeat.enabled);
    assert_eq!(main.heartbeat.every, Duration::from_secs(1800));
    assert!(main.heartbeat.include_system_prompt_section);
    assert_eq!(main.sandbox.mode, SandboxMode::Off);
    assert_eq!(main.sandbox.scope, SandboxScope::Agent);
    assert_eq!(main.sandbox.workspace_access, WorkspaceAccess::None);
    assert_eq!(
        main.sandbox.workspace_root,
        PathBuf::from("/state/sandboxes")
    );
    assert_eq!(main.sandbox.backend, SandboxBackend::Bubblewrap);
    assert_eq!(main.sandbox.network, SandboxNetwork::None);
    assert_eq!(main.tools.profile, None);
    assert!(!main.tools.fs_workspace_only);
    assert_eq!(main.runtime, AgentRuntime::Embedded);
    assert_eq!(main.model, None);

    let queue = config.queue();
    assert_eq!(
        (queue.mode, queue.debounce_ms, queue.cap, queue.drop),
        (QueueMode::Steer, 500, 20, QueueDrop::Summarize)
    );
    let streaming = config.block_streaming();
    assert!(!streaming.enabled);
    assert_eq!(streaming.break_at, BlockStreamingBreak::TextEnd);
    assert_eq!(
        (streaming.chunk.min_chars, streaming.chunk.max_chars),
        (800, 1200)
    );
    assert_eq!(streaming.chunk.break_preference, BreakPreference::Paragraph);
    assert_eq!(streaming.coalesce.idle_ms, 1000);
    assert_eq!(streaming.human_delay, HumanDelaySettings::Off);
    let patch = config.apply_patch();
    assert!(patch.enabled && patch.workspace_only && patch.allow_models.is_empty());
    assert_eq!(
        config.gpt5_personality(Some("openai")),
        Gpt5Personality::Friendly
    );

    let prompt = config.prompt_settings("main");
    assert_eq!(prompt.owner_display, OwnerDisplay::Raw);
    assert_eq!(prompt.owner_display_secret, None);
    assert_eq!(prompt.delegation_mode, DelegationMode::Suggest);
    assert_eq!(prompt.tts.auto, TtsAuto::Off);
    assert_eq!(prompt.time_format, TimeFormat::Auto);
    assert_eq!(
        prompt.bootstrap_truncation_warning,
        TruncationWarning::Always
    );
    assert!(prompt.model_aliases.is_empty());
    assert!(!prompt.plan_tool);
}

#[test]
fn unknown_agents_are_an_error() {
    assert!(
        matches!(valid("{}").agent("work", &dirs()), Err(ConfigError::UnknownAgent(id)) if id == "work")
    );
    assert!(matches!(
        valid(EXAMPLE).agent("nobody", &dirs()),
        Err(ConfigError::UnknownAgent(_))
    ));
}

#[test]
fn default_agent_is_the_first_marked_else_the_first() {
    let marked = valid(
        "{ agents: { list: [{ id: 'a' }, { id: 'b', default: true }, { id: 'c', default: true }] } }",
    );
    assert_eq!(marked.default_agent_id(), "b");
    let unmarked = valid("{ agents: { list: [{ id: 'x' }, { id: 'y' }] } }");
    assert_eq!(unmarked.default_agent_id(), "x");
    assert_eq!(unmarked.agent_ids(), vec!["x", "y"]);
}

#[test]
fn workspaces_follow_the_default_agent_rule() {
    let config = valid(
        "{ agents: { defaults: { workspace: '~/ws' }, list: [{ id: 'a' }, { id: 'b' }, { id: 'c', workspace: '/srv/c' }] } }",
    );
    let workspace = |id: &str| config.agent(id, &dirs()).map(|a| a.workspace).ok();
    assert_eq!(workspace("a"), Some(PathBuf::from("/home/u/ws")));
    assert_eq!(workspace("b"), Some(PathBuf::from("/state/workspace-b")));
    assert_eq!(workspace("c"), Some(PathBuf::from("/srv/c")));
    assert_eq!(
        workspace("B"),
        Some(PathBuf::from("/state/workspace-b")),
        "ids compare case-insensitively"
    );
}

#[test]
fn example_agents_merge_defaults_with_overrides() {
    let config = valid(EXAMPLE);
    assert_eq!(config.default_agent_id(), "main");
    let (Ok(main), Ok(work)) = (config.agent("main", &dirs()), config.agent("work", &dirs()))
    else {
        panic!("both agents exist");
    };
    assert_eq!(main.workspace, PathBuf::from("/home/u/.openclaw/workspace"));
    assert_eq!(
        main.bootstrap,
        BootstrapLimits {
            max_chars: 16_000,
            total_max_chars: 48_000
        }
    );
    assert_eq!(
        main.skills,
        SkillAllowlist::Only(vec!["github".into(), "weather".into(), "summarize".into()])
    );
    assert_eq!(main.skills_limits.max_skills_in_prompt, 100);
    assert_eq!(main.delegation_mode, DelegationMode::Prefer);
    assert_eq!(main.context_injection, ContextInjection::ContinuationSkip);
    assert_eq!(main.model.as_deref(), Some("anthropic/claude-opus-4-5"));
    assert_eq!(
        main.model_fallbacks,
        vec![
            "openai/gpt-5.5".to_owned(),
            "openrouter/moonshotai/kimi-k2".to_owned()
        ]
    );
    assert_eq!(main.tools.profile, Some(ToolProfile::Full));
    assert!(main.tools.fs_workspace_only);
    assert_eq!(
        main.mention_patterns,
        vec!["@clawd".to_owned(), "clawd".to_owned()]
    );
    // Only "work" has a heartbeat block, so only "work" runs heartbeats.
    assert!(!main.heartbeat.enabled);

    assert_eq!(work.workspace, PathBuf::from("/home/u/work/agent"));
    assert!(!work.is_default);
    assert_eq!(
        work.bootstrap,
        BootstrapLimits {
            max_chars: 8_000,
            total_max_chars: 48_000
        }
    );
    assert_eq!(
        work.skills,
        SkillAllowlist::Only(vec![]),
        "a per-agent list replaces the default; [] = none"
    );
    assert!(!work.skills.allows("github"));
    assert_eq!(
        work.skills_limits,
        SkillsLimits {
            max_skills_in_prompt: 20,
            max_skills_prompt_chars: 4000,
            ..SkillsLimits::default()
        }
    );
    assert_eq!(work.delegation_mode, DelegationMode::Suggest);
    assert_eq!(work.allow_agents, vec!["main".to_owned()]);
    assert!(work.heartbeat.enabled);
    assert_eq!(work.heartbeat.every, Duration::from_secs(3600));
    assert_eq!(
        work.heartbeat.prompt.as_deref(),
        Some("Check the inbox and the build.")
    );
    assert_eq!(
        work.heartbeat.target.as_deref(),
        Some("last"),
        "inherited key by key"
    );
    assert_eq!(work.sandbox.mode, SandboxMode::All);
    assert_eq!(work.sandbox.scope, SandboxScope::Session);
    assert_eq!(work.sandbox.workspace_access, WorkspaceAccess::Rw);
    assert_eq!(
        work.sandbox.workspace_root,
        PathBuf::from("/home/u/.openclaw/sandboxes")
    );
    // The string form replaces only the primary.
    assert_eq!(work.model.as_deref(), Some("gpt"));
    assert_eq!(work.model_fallbacks.len(), 2);
    assert_eq!(work.tools.profile, Some(ToolProfile::Coding));
    assert_eq!(
        work.tools.deny,
        vec!["group:messaging".to_owned(), "browser".to_owned()]
    );
    assert_eq!(work.tools.also_allow, vec!["web_search".to_owned()]);
    assert!(!work.tools.fs_workspace_only);
    let AgentRuntime::Codex(codex) = &work.runtime else {
        panic!("codex runtime")
    };
    assert_eq!(codex.command, "codex");
    assert_eq!(
        codex.config_overrides,
        vec!["model_reasoning_effort=high".to_owned()]
    );
    assert_eq!(codex.approval_policy, Some(CodexApprovalPolicy::OnRequest));
}

#[test]
fn bootstrap_total_follows_a_larger_per_file_budget_and_ignores_zero() {
    let config = valid(
        "{ agents: { defaults: { bootstrapMaxChars: 80000 }, list: [{ id: 'a' }, { id: 'b', bootstrapMaxChars: 0, bootstrapTotalMaxChars: 5 }] } }",
    );
    let limits = |id: &str| config.agent(id, &dirs()).map(|a| a.bootstrap).ok();
    assert_eq!(
        limits("a"),
        Some(BootstrapLimits {
            max_chars: 80_000,
            total_max_chars: 80_000
        })
    );
    assert_eq!(
        limits("b"),
        Some(BootstrapLimits {
            max_chars: 80_000,
            total_max_chars: 5
        })
    );
}

#[test]
fn object_model_form_replaces_fallbacks_and_empty_list_disables_them() {
    let config = valid(
        "{ agents: { defaults: { model: { primary: 'a/x', fallbacks: ['a/y'] } }, list: [{ id: 'm' }, { id: 'n', model: { primary: 'b/z', fallbacks: [] } }] } }",
    );
    let model = |id: &str| {
        config
            .agent(id, &dirs())
            .map(|a| (a.model, a.model_fallbacks))
            .ok()
    };
    assert_eq!(
        model("m"),
        Some((Some("a/x".to_owned()), vec!["a/y".to_owned()]))
    );
    assert_eq!(model("n"), Some((Some("b/z".to_owned()), vec![])));
}

#[test]
fn heartbeat_of_zero_is_off() {
    let config = valid(
        "{ agents: { defaults: { heartbeat: { every: '0m', includeSystemPromptSection: false } } } }",
    );
    let Ok(main) = config.agent("main", &dirs()) else {
        panic!("main")
    };
    assert!(!main.heartbeat.enabled);
    assert!(!main.heartbeat.include_system_prompt_section);
}

#[test]
fn example_settings_and_prompt_knobs() {
    let vars = env(&[("OWNER_SECRET", "k3y")]);
    let options = LoadOptions {
        unresolved_vars: openclaw_config::UnresolvedVars::Keep,
    };
    let Ok(config) = load(EXAMPLE, &vars, &options) else {
        panic!("valid")
    };
    let queue = config.queue();
    assert_eq!(queue.mode_for_channel("discord"), QueueMode::Collect);
    assert_eq!(queue.mode_for_channel("telegram"), QueueMode::Steer);
    assert_eq!((queue.debounce_ms, queue.cap), (750, 25));
    let streaming = config.block_streaming();
    assert!(streaming.enabled);
    assert_eq!(
        (streaming.chunk.min_chars, streaming.chunk.max_chars),
        (600, 1000)
    );
    assert_eq!(streaming.chunk.break_preference, BreakPreference::Newline);
    assert_eq!(streaming.coalesce.idle_ms, 800);
    assert_eq!(
        streaming.human_delay,
        HumanDelaySettings::Range {
            min_ms: 800,
            max_ms: 2500
        }
    );

    let patch = config.apply_patch();
    let model = |text: &str| config.resolve_model(text).ok();
    assert!(model("openai/gpt-5.5").is_some_and(|m| patch.allows(&m)));
    assert!(model("anthropic/claude-opus-4-5").is_some_and(|m| !patch.allows(&m)));

    // The overlay key wins over the plugin's "off".
    assert_eq!(
        config.gpt5_personality(Some("openai")),
        Gpt5Personality::Friendly
    );

    let prompt = config.prompt_settings("work");
    assert_eq!(prompt.owner_display, OwnerDisplay::Hash);
    assert_eq!(
        prompt.owner_display_secret.as_deref(),
        Some("k3y"),
        "trimmed after substitution"
    );
    assert_eq!(prompt.delegation_mode, DelegationMode::Suggest);
    assert_eq!(
        config.prompt_settings("main").delegation_mode,
        DelegationMode::Prefer
    );
    assert_eq!(prompt.tts.auto, TtsAuto::Inbound);
    assert_eq!(prompt.tts.max_text_length, Some(1500));
    assert_eq!(prompt.user_timezone.as_deref(), Some("Europe/Berlin"));
    assert_eq!(prompt.time_format, TimeFormat::H24);
    assert!(prompt.plan_tool);
    assert_eq!(prompt.bootstrap_truncation_warning, TruncationWarning::Once);
    let aliases: Vec<(&str, &str)> = prompt
        .model_aliases
        .iter()
        .map(|a| (a.alias.as_str(), a.target.as_str()))
        .collect();
    assert_eq!(
        aliases,
        vec![
            ("gpt", "openai/gpt-5.5"),
            ("kimi", "openrouter/moonshotai/kimi-k2"),
            ("opus", "anthropic/claude-opus-4-5")
        ]
    );
    assert_eq!(
        config.model_aliases().first(),
        Some(&ModelAlias {
            alias: "gpt".into(),
            target: "openai/gpt-5.5".into()
        })
    );
}

#[test]
fn plugin_personality_applies_only_to_openai_like_providers() {
    let config = valid("{ plugins: { entries: { openai: { config: { personality: 'off' } } } } }");
    assert_eq!(
        config.gpt5_personality(Some("openai")),
        Gpt5Personality::Off
    );
    assert_eq!(config.gpt5_personality(Some("Codex")), Gpt5Personality::Off);
    assert_eq!(config.gpt5_personality(None), Gpt5Personality::Off);
    assert_eq!(
        config.gpt5_personality(Some("anthropic")),
        Gpt5Personality::Friendly
    );
    let on = valid("{ agents: { defaults: { promptOverlays: { gpt5: { personality: 'on' } } } } }");
    assert_eq!(on.gpt5_personality(None), Gpt5Personality::Friendly);
}

#[test]
fn sandbox_limits_merge_key_by_key_and_bad_ones_are_named() {
    let config = valid(
        "{ agents: { defaults: { sandbox: { limits: { processes: 64, cpuSeconds: 10 } } }, \
           list: [{ id: 'main' }, { id: 'work', sandbox: { limits: { cpuSeconds: 0, fileSizeMb: 5 } } }] } }",
    );
    let main = config.agent("main", &dirs()).expect("main");
    assert_eq!(
        main.sandbox.limits,
        SandboxLimits {
            processes: Some(64),
            cpu_seconds: Some(10),
            ..SandboxLimits::default()
        }
    );
    let work = config.agent("work", &dirs()).expect("work");
    assert_eq!(
        work.sandbox.limits,
        SandboxLimits {
            processes: Some(64),
            address_space_mb: None,
            file_size_mb: Some(5),
            cpu_seconds: Some(0),
        }
    );
    let errors = super::support::invalid(
        "{ agents: { defaults: { sandbox: { limits: { processes: -1, memoryMb: 5, cpuSeconds: 'lots' } } } } }",
        &env(&[]),
        &LoadOptions::default(),
    );
    assert_eq!(
        error_lines(&errors),
        [
            "agents.defaults.sandbox.limits.processes: must be at least 0, found -1",
            "agents.defaults.sandbox.limits.memoryMb: unknown key",
            r#"agents.defaults.sandbox.limits.cpuSeconds: expected an integer, found "lots""#,
        ]
    );
}

#[test]
fn the_sandbox_uid_is_an_agents_own_or_the_defaults_and_never_root() {
    let config = valid(
        "{ agents: { defaults: { sandbox: { uid: 61000 } }, \
           list: [{ id: 'main' }, { id: 'work', sandbox: { uid: 62000 } }] } }",
    );
    assert_eq!(
        config.agent("main", &dirs()).expect("main").sandbox.uid,
        Some(61000)
    );
    assert_eq!(
        config.agent("work", &dirs()).expect("work").sandbox.uid,
        Some(62000)
    );
    assert_eq!(
        valid("{}")
            .agent("main", &dirs())
            .expect("main")
            .sandbox
            .uid,
        None
    );
    for (bad, message) in [
        ("0", "must be at least 1, found 0"),
        ("-5", "must be at least 1, found -5"),
        ("4294967295", "must be at most 4294967294, found 4294967295"),
        ("'nobody'", r#"expected an integer, found "nobody""#),
    ] {
        let errors = super::support::invalid(
            &format!("{{ agents: {{ defaults: {{ sandbox: {{ uid: {bad} }} }} }} }}"),
            &env(&[]),
            &LoadOptions::default(),
        );
        assert_eq!(
            error_lines(&errors),
            [format!("agents.defaults.sandbox.uid: {message}")]
        );
    }
}
