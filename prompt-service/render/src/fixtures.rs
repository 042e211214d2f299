//! Realistic inputs shared by the tests, the criterion benchmark and the load
//! generator (always compiled, never a feature: a feature the load generator
//! turns on would change this crate, and everything built on it, between a
//! workspace build and a single binary's build): a main
//! session with every bootstrap file, 20 tools with schemas and 3 skills.
//! Deterministic: no randomness, no clock.

use crate::{
    ChannelInfo, ChatType, ContextFile, HeartbeatInfo, ModelAlias, ReasoningLevel, RenderInput,
    ReplyDelivery, RuntimeInfo, RuntimeVersion, Skill, SkillVersionSource, ThinkLevel, Tool,
};

/// The fixture workspace.
pub const WORKSPACE: &str = "/home/ada/.openclaw/workspace";

/// Deterministic filler text of exactly `chars` characters, in paragraphs.
/// Fixture builder.
pub fn prose(topic: &str, chars: usize) -> String {
    let sentence =
        format!("The {topic} notes record a preference, a decision and the reason behind it. ");
    let mut out = String::with_capacity(chars + sentence.len());
    let mut n = 0;
    while out.chars().count() < chars {
        out.push_str(&sentence);
        n += 1;
        if n % 6 == 0 {
            out.push_str("\n\n");
        }
    }
    out.chars().take(chars).collect()
}

fn schema(props: &[&str]) -> String {
    let properties: Vec<String> = props
        .iter()
        .map(|p| format!(r#""{p}":{{"type":"string","description":"The {p} argument."}}"#))
        .collect();
    format!(
        r#"{{"type":"object","properties":{{{}}},"required":["{}"]}}"#,
        properties.join(","),
        props.first().copied().unwrap_or("x")
    )
}

/// Twenty tools: the core set plus a few plugin tools with summaries.
/// Fixture builder.
pub fn tools() -> Vec<Tool> {
    let core = [
        ("read", &["path", "offset", "limit"][..]),
        ("write", &["path", "content"]),
        ("edit", &["path", "old_text", "new_text"]),
        ("apply_patch", &["patch"]),
        ("exec", &["command", "timeout", "background"]),
        ("process", &["action", "session_id"]),
        ("web_search", &["query"]),
        ("web_fetch", &["url"]),
        ("cron", &["action", "schedule", "prompt"]),
        ("message", &["action", "target", "message"]),
        ("gateway", &["action", "path", "patch"]),
        ("sessions_list", &["limit"]),
        ("sessions_spawn", &["task", "agent_id"]),
        ("subagents", &["action", "id"]),
        ("session_status", &["model"]),
        ("memory_search", &["query"]),
        ("memory_get", &["path", "from", "to"]),
        ("image", &["path", "prompt"]),
    ];
    let mut tools: Vec<Tool> = core
        .iter()
        .map(|(name, props)| Tool {
            name: (*name).to_owned(),
            summary: String::new(),
            json_schema: schema(props),
        })
        .collect();
    tools.push(Tool {
        name: "weather".into(),
        summary: "Look up the forecast for a place".into(),
        json_schema: schema(&["place", "days"]),
    });
    tools.push(Tool {
        name: "calendar".into(),
        summary: "Read and create calendar events".into(),
        json_schema: schema(&["action", "range"]),
    });
    tools
}

/// Fixture builder.
pub fn skills() -> Vec<Skill> {
    [
        (
            "github",
            "Work with GitHub issues, pull requests and CI runs",
        ),
        ("summarize", "Summarise long documents & web pages <fast>"),
        ("weather-brief", "Write a short morning weather brief"),
    ]
    .iter()
    .map(|(name, description)| {
        skill(
            name,
            description,
            &format!("---\nname: {name}\n---\n# {name}\n"),
        )
    })
    .collect()
}

/// A skill installed in the managed skills directory, versioned by its SKILL.md `content`.
pub fn skill(name: &str, description: &str, content: &str) -> Skill {
    Skill {
        name: name.to_owned(),
        description: description.to_owned(),
        location: format!("~/.openclaw/skills/{name}/SKILL.md"),
        version_source: SkillVersionSource::Content(content.as_bytes().to_vec()),
    }
}

/// Fixture builder.
pub fn file(path: &str, content: String) -> ContextFile {
    ContextFile {
        path: path.to_owned(),
        content,
        missing: false,
    }
}

/// Every bootstrap file; MEMORY.md is 39,000 chars and gets truncated.
/// Fixture builder.
pub fn context_files() -> Vec<ContextFile> {
    vec![
        file("AGENTS.md", format!("# AGENTS.md\n\n{}", prose("operating", 2_500))),
        file("SOUL.md", format!("# SOUL.md\n\n{}", prose("persona", 1_200))),
        file("TOOLS.md", format!("# TOOLS.md\n\n{}", prose("tool convention", 1_500))),
        file("IDENTITY.md", "# IDENTITY.md\n\nName: Ada\nEmoji: 🦞\nTheme: calm and precise".to_owned()),
        file("USER.md", format!("# USER.md\n\n{}", prose("user profile", 900))),
        file("HEARTBEAT.md", "# HEARTBEAT.md\n\n- Check the inbox for anything urgent.\n- Remind me of meetings in the next hour.".to_owned()),
        file("MEMORY.md", prose("long-term memory", 39_000)),
    ]
}

/// The realistic full-mode input of the benchmark and the base of the
/// snapshot variants.
/// Fixture builder.
pub fn realistic() -> RenderInput {
    let mut input = RenderInput::new(WORKSPACE);
    input.agent_id = "main".into();
    input.agent_name = "Ada".into();
    input.tools = tools();
    input.skills = skills();
    input.context_files = context_files();
    input.user_timezone = "Europe/Berlin".into();
    input.owner_ids = vec!["+4915112345678".into(), "telegram:42".into()];
    input.model_aliases = vec![
        ModelAlias {
            alias: "sonnet".into(),
            model: "anthropic/claude-sonnet-4-5".into(),
        },
        ModelAlias {
            alias: "fast".into(),
            model: "openai/gpt-5-mini".into(),
        },
    ];
    input.channel = ChannelInfo {
        name: "telegram".into(),
        chat_type: ChatType::Direct,
        capabilities: vec!["inlineButtons".into(), "reactions".into()],
        native_approvals: Some(false),
        reply_delivery: ReplyDelivery::Automatic,
        message_tool_hints: Vec::new(),
        display_name: String::new(),
        known_channels: Vec::new(),
    };
    input.heartbeat = HeartbeatInfo {
        enabled: true,
        prompt: "Read HEARTBEAT.md and follow it. If nothing needs attention, reply HEARTBEAT_OK."
            .into(),
        include_system_prompt_section: true,
        serves_session: Some(true),
    };
    input.runtime = RuntimeInfo {
        host: "atlas".into(),
        os: "Linux 6.8".into(),
        arch: "x86_64".into(),
        runtime_version: "agent-service".into(),
        model: "anthropic/claude-sonnet-4-5".into(),
        default_model: "anthropic/claude-sonnet-4-5".into(),
        shell: "bash".into(),
        repo_root: String::new(),
        active_processes: Vec::new(),
        session_key: "agent:main:main".into(),
        versions: vec![RuntimeVersion {
            key: "agent_service".into(),
            value: "0.1.0".into(),
        }],
    };
    input.think_level = ThinkLevel::Low;
    input.reasoning_level = ReasoningLevel::Off;
    input
}
