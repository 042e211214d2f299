//! The three happy-path scenarios of the committed snapshots (P-29).
//! Workspace file contents are placeholders; tools, skills and config are
//! pinned here so the snapshots change only when the mapping does.

use prompt_render::{
    BootstrapLimits, ChannelInfo, ChatType, ContextFile, HeartbeatInfo, RenderInput, ReplyDelivery,
    SessionKind, Skill, WORKSPACE_FILES, fixtures,
};
use serde_json::{Value, json};

use crate::{
    input::{ApprovalPolicy, CodexTurnInput, DynamicTool, SandboxMode, Trigger},
    json::sorted,
};

/// The scenarios' workspace.
pub const WORKSPACE: &str = "/home/ada/.openclaw/workspace";
/// The scenarios' Codex model.
pub const MODEL: &str = "gpt-5.5";
/// The thread id used where a scenario continues a thread.
pub const THREAD_ID: &str = "019a7c1e-0000-7000-8000-00000000c0de";

/// One snapshot scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Snapshot file stem (`<stem>.md`).
    pub stem: &'static str,
    /// Key of the tool catalog file (`codex-dynamic-tools.<key>.json`).
    pub tools_key: &'static str,
    /// Heading of the snapshot.
    pub title: &'static str,
    /// What the scenario shows, one bullet each.
    pub scope: &'static [&'static str],
    /// Channel id for the metadata.
    pub channel: &'static str,
    /// Chat type for the metadata.
    pub chat_type: &'static str,
    /// The OpenClaw config the scenario assumes (keys this workspace's
    /// config crate accepts).
    pub config: Value,
    /// Tools whose specs the snapshot repeats as critical for visible replies.
    pub critical_tools: &'static [&'static str],
    /// The mapping input.
    pub input: CodexTurnInput,
}

fn placeholder(path: &str) -> ContextFile {
    ContextFile {
        path: path.to_owned(),
        content: format!("<{path} contents will be here>"),
        missing: false,
    }
}

fn files(names: &[&str]) -> Vec<ContextFile> {
    names.iter().map(|n| placeholder(n)).collect()
}

fn skills() -> Vec<Skill> {
    [
        (
            "release-notes",
            "Draft release notes from merged pull requests",
        ),
        (
            "weather-brief",
            "Write a short weather brief for a place and day",
        ),
    ]
    .iter()
    .map(|(name, description)| {
        fixtures::skill(
            name,
            description,
            &format!(
                "---\nname: {name}\ndescription: {description}\n---\n<{name} SKILL.md body>\n"
            ),
        )
    })
    .collect()
}

fn function(
    name: &str,
    namespace: &str,
    defer: bool,
    description: &str,
    schema: Value,
) -> DynamicTool {
    DynamicTool {
        name: name.to_owned(),
        description: description.to_owned(),
        json_schema: sorted(&schema).to_string(),
        defer_loading: defer,
        namespace: namespace.to_owned(),
    }
}

fn message_tool() -> DynamicTool {
    function(
        "message",
        "",
        false,
        "Send a message to the conversation this turn came from, or react to, edit or delete one of its messages.",
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["send", "react", "edit", "delete"]},
                "text": {"type": "string", "description": "Message text, for send and edit."},
                "replyTo": {"type": "string", "description": "Id of the message to answer or act on."},
                "emoji": {"type": "string", "description": "Reaction emoji, for react."}
            },
            "required": ["action"]
        }),
    )
}

fn openclaw_tools(memory: bool) -> Vec<DynamicTool> {
    let mut tools = vec![
        function(
            "cron",
            "openclaw",
            true,
            "Schedule, list or cancel reminders and recurring jobs.",
            json!({"type": "object", "properties": {
                "action": {"type": "string", "enum": ["add", "list", "remove"]},
                "schedule": {"type": "string"},
                "prompt": {"type": "string"}
            }, "required": ["action"]}),
        ),
        function(
            "session_status",
            "openclaw",
            false,
            "Show the session status card: current time, model and usage.",
            json!({"type": "object", "properties": {}}),
        ),
        function(
            "sessions_spawn",
            "openclaw",
            true,
            "Start a sub-agent session on a task; its result is pushed back to you when it ends.",
            json!({"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]}),
        ),
    ];
    if memory {
        tools.push(function(
            "memory_search",
            "openclaw",
            false,
            "Search MEMORY.md and memory/*.md; returns file and line references.",
            json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
        ));
        tools.push(function(
            "memory_get",
            "openclaw",
            false,
            "Read a range of lines from a memory file.",
            json!({"type": "object", "properties": {
                "path": {"type": "string"}, "from": {"type": "integer"}, "to": {"type": "integer"}
            }, "required": ["path"]}),
        ));
    }
    tools
}

/// A main session's workspace files once the first-run ritual is done: every file with a
/// place of its own but BOOTSTRAP.md.
fn main_session_files() -> Vec<&'static str> {
    WORKSPACE_FILES
        .iter()
        .copied()
        .filter(|f| *f != "BOOTSTRAP.md")
        .collect()
}

fn base(channel: ChannelInfo, kind: SessionKind, context: &[&str]) -> RenderInput {
    let mut base = RenderInput::new(WORKSPACE);
    base.agent_id = "main".to_owned();
    base.agent_name = "Ada".to_owned();
    base.session_kind = kind;
    base.context_files = files(context);
    base.skills = skills();
    base.bootstrap_limits = BootstrapLimits {
        max_chars_per_file: 20_000,
        total_max_chars: 60_000,
    };
    base.channel = channel;
    base.heartbeat = HeartbeatInfo {
        enabled: true,
        prompt: HEARTBEAT_PROMPT.to_owned(),
        include_system_prompt_section: true,
        // Taken from the conversation: a group is not a heartbeat session.
        serves_session: None,
    };
    base
}

const HEARTBEAT_PROMPT: &str =
    "Heartbeat check: look at your heartbeat checklist and report only what needs attention.";

fn config(approval: ApprovalPolicy, sandbox: SandboxMode, channel: &str, group: bool) -> Value {
    let mut config = json!({
        "agents": {
            "defaults": {
                "workspace": WORKSPACE,
                "model": {"primary": format!("openai/{MODEL}")},
                "bootstrapMaxChars": 20000,
                "bootstrapTotalMaxChars": 60000,
                "heartbeat": {"every": "30m", "prompt": HEARTBEAT_PROMPT}
            },
            "list": [{
                "id": "main",
                "default": true,
                "name": "Ada",
                "runtime": {"type": "codex", "codex": {
                    "approvalPolicy": approval.codex_str(),
                    "sandbox": sandbox.thread_str()
                }}
            }]
        },
        "channels": {channel: {"enabled": true}}
    });
    if group {
        config["messages"] = json!({"groupChat": {"visibleReplies": "message_tool"}});
    }
    sorted(&config)
}

fn telegram(reply: ReplyDelivery) -> ChannelInfo {
    ChannelInfo {
        name: "telegram".to_owned(),
        chat_type: ChatType::Direct,
        capabilities: vec!["inlineButtons".to_owned(), "reactions".to_owned()],
        native_approvals: Some(true),
        reply_delivery: reply,
        ..ChannelInfo::default()
    }
}

fn telegram_direct() -> Scenario {
    let (approval, sandbox) = (ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite);
    let base = base(
        telegram(ReplyDelivery::MessageToolOnly),
        SessionKind::Main,
        &main_session_files(),
    );
    let mut input = CodexTurnInput::new(base, MODEL);
    input.effort = "medium".to_owned();
    input.approval_policy = approval;
    input.sandbox = sandbox;
    input.memory_tools_available = true;
    input.memory_workspace_is_active = true;
    input.dynamic_tools = [vec![message_tool()], openclaw_tools(true)].concat();
    input.input_text = "Can you move my dentist reminder to Friday at 9?".to_owned();
    Scenario {
        stem: "telegram-direct-codex-message-tool",
        tools_key: "telegram-direct",
        title: "Telegram direct message on the Codex harness (message tool replies)",
        scope: &[
            "A user turn in a Telegram direct chat; the first turn of a new Codex thread.",
            "Visible replies go only through the `message` tool.",
            "Memory tools are available and the memory workspace is the active one, so MEMORY.md becomes a note, not pasted text.",
            "HEARTBEAT.md exists but this is not a heartbeat turn, so it is not mentioned.",
        ],
        channel: "telegram",
        chat_type: "direct",
        config: config(approval, sandbox, "telegram", false),
        critical_tools: &["message"],
        input,
    }
}

fn discord_group() -> Scenario {
    let (approval, sandbox) = (ApprovalPolicy::Never, SandboxMode::ReadOnly);
    let channel = ChannelInfo {
        name: "discord".to_owned(),
        chat_type: ChatType::Group,
        capabilities: vec!["reactions".to_owned(), "threads".to_owned()],
        native_approvals: Some(false),
        reply_delivery: ReplyDelivery::MessageToolOnly,
        ..ChannelInfo::default()
    };
    // Group sessions carry no MEMORY.md (private memory stays out of shared chats).
    let mut base = base(
        channel,
        SessionKind::Main,
        &["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md"],
    );
    base.extra_system_prompt = "You are in the #release channel of the Acme Discord server and were mentioned by name. Many people talk here: answer the person who mentioned you, keep it short, and stay quiet on messages that are not for you.".to_owned();
    let mut input = CodexTurnInput::new(base, MODEL);
    input.effort = "low".to_owned();
    input.approval_policy = approval;
    input.sandbox = sandbox;
    input.thread_id = THREAD_ID.to_owned();
    input.dynamic_tools = [vec![message_tool()], openclaw_tools(false)].concat();
    input.input_text = "[recent messages]\nben: is the release branch cut yet?\ncara: I think it was cut this morning\n[message that mentions you]\ndana: @Ada can you confirm the branch was cut and by whom?".to_owned();
    Scenario {
        stem: "discord-group-codex-message-tool",
        tools_key: "discord-group",
        title: "Discord group mention on the Codex harness (message tool replies)",
        scope: &[
            "A user turn in a Discord group, triggered by a mention; the thread is already loaded, so no thread/resume is needed.",
            "Visible replies go only through the `message` tool (`messages.groupChat.visibleReplies`).",
            "The group chat context and the recent messages arrive with the turn; no MEMORY.md in a shared chat.",
        ],
        channel: "discord",
        chat_type: "group",
        config: config(approval, sandbox, "discord", true),
        critical_tools: &["message"],
        input,
    }
}

fn heartbeat_turn() -> Scenario {
    let (approval, sandbox) = (ApprovalPolicy::Never, SandboxMode::WorkspaceWrite);
    let base = base(
        telegram(ReplyDelivery::MessageToolOnly),
        SessionKind::Main,
        &main_session_files(),
    );
    let mut input = CodexTurnInput::new(base, MODEL);
    input.trigger = Trigger::Heartbeat;
    input.effort = "low".to_owned();
    input.approval_policy = approval;
    input.sandbox = sandbox;
    input.thread_id = THREAD_ID.to_owned();
    input.resume = true;
    let heartbeat_respond = function(
        "heartbeat_respond",
        "openclaw",
        true,
        "Finish a heartbeat check: record that nothing needs attention, or send an alert to the user.",
        json!({"type": "object", "properties": {
            "status": {"type": "string", "enum": ["ok", "alert"]},
            "alert": {"type": "string"}
        }, "required": ["status"]}),
    );
    input.dynamic_tools = [
        vec![message_tool(), heartbeat_respond],
        openclaw_tools(false),
    ]
    .concat();
    input.input_text = HEARTBEAT_PROMPT.to_owned();
    Scenario {
        stem: "telegram-heartbeat-codex-tool",
        tools_key: "heartbeat-turn",
        title: "Heartbeat turn on the Codex harness (Telegram main session)",
        scope: &[
            "A heartbeat turn on the agent's main session; the stored thread is resumed with thread/resume.",
            "HEARTBEAT.md exists and is not empty, so the turn instructions point at it; it is never pasted.",
            "No memory tools are available, so MEMORY.md takes the bounded turn-input path.",
            "`heartbeat_respond` is registered as a deferred tool in the `openclaw` namespace.",
        ],
        channel: "telegram",
        chat_type: "direct",
        config: config(approval, sandbox, "telegram", false),
        critical_tools: &["message", "heartbeat_respond"],
        input,
    }
}

/// Every scenario, in snapshot order.
pub fn all() -> Vec<Scenario> {
    vec![telegram_direct(), discord_group(), heartbeat_turn()]
}
