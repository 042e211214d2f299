//! Per-turn sections below the boundary: dynamic project context, Control UI,
//! messaging, output directives, silent replies, voice, extra context,
//! reactions, approvals, heartbeats and the runtime line (SPEC P-18 to P-21,
//! P-23, P-24, P-28).

use super::{Piece, StableCtx, TurnCtx, lines};
use crate::input::{ChatType, PromptMode, ReactionLevel, ReplyDelivery};

/// Acknowledgement token of a heartbeat turn with nothing to report.
pub const HEARTBEAT_OK: &str = "HEARTBEAT_OK";
/// Token a group/channel auto-reply run answers with to stay silent.
pub const NO_REPLY: &str = "NO_REPLY";

/// `# Dynamic Project Context`: per-turn files (HEARTBEAT.md).
pub fn dynamic_project_context(ctx: &StableCtx, turn: &TurnCtx) -> Vec<Piece> {
    let files = &turn.files.injected;
    if files.is_empty() {
        return Vec::new();
    }
    let heading = if ctx.bootstrap.stable.is_empty() {
        "# Project Context"
    } else {
        "# Dynamic Project Context"
    };
    let header = lines([
        heading,
        "These workspace files can change between turns, so they are loaded fresh each time.",
    ]);
    let mut pieces = vec![Piece::new("dynamic_project_context", header)];
    pieces.extend(files.iter().map(|f| {
        Piece::new(
            format!("dynamic_project_context:{}", f.path),
            format!("## {}\n{}", f.path, f.text),
        )
    }));
    pieces
}

/// `## Control UI Embed`: only on the `webchat` channel.
pub fn control_ui_embed(turn: &TurnCtx) -> Option<String> {
    (turn.channel.name == "webchat").then(|| {
        lines([
            "## Control UI Embed",
            "This conversation is shown in the OpenClaw Control UI. Markdown renders fully here, tables and code blocks included, and attached images appear inline.",
        ])
    })
}

/// `## Messaging`, with a `### message tool` block when that tool exists.
pub fn messaging(ctx: &StableCtx, turn: &TurnCtx) -> String {
    let t = &ctx.tools;
    let ch = &turn.channel;
    let mut out = vec!["## Messaging".to_owned()];
    match (ch.name.as_str(), ch.chat_type.label()) {
        ("", _) => out.push("This turn did not arrive through a chat channel.".to_owned()),
        (name, Some(kind)) => out.push(format!("This turn arrived on {name} ({kind}).")),
        (name, None) => out.push(format!("This turn arrived on {name}.")),
    }
    match ch.reply_delivery {
        ReplyDelivery::Automatic => {
            out.push("Your final reply goes back to the same conversation automatically.".to_owned());
        }
        ReplyDelivery::MessageToolOnly => out.push(format!(
            "Plain assistant text does not reach the chat here: send every visible reply with the {} tool. If nothing needs saying, end the turn without sending.",
            t.spelled("message")
        )),
    }
    out.push("Runtime events such as finished background jobs or cron results are for you: restate what matters in your own words rather than forwarding the raw event.".to_owned());
    if t.has("sessions_spawn") || t.has("subagents") {
        out.push("Subagent results arrive as messages in this session; summarise them for the user instead of pasting them.".to_owned());
    }
    if t.has("message") {
        let message = t.spelled("message");
        out.push(format!("### {message} tool"));
        out.push(format!(
            "To reach another chat or channel, call {message} with action \"send\", a target and the text. The current conversation is already the default target."
        ));
        out.push("Never send the same content both through the tool and as your reply.".to_owned());
        out.extend(ch.message_tool_hints.iter().cloned());
    }
    lines(out)
}

/// `## Assistant Output Directives` (SPEC P-18): depends on reply delivery.
pub fn output_directives(ctx: &StableCtx, turn: &TurnCtx) -> String {
    match turn.channel.reply_delivery {
        ReplyDelivery::Automatic => lines([
            "## Assistant Output Directives",
            "To attach a file or image, put `MEDIA: <path or URL>` on a line of its own; attach only what the user needs.",
            "To send a voice note, attach an audio file the same way.",
            "To answer a specific message, begin the reply with [[reply_to_current]] or [[reply_to:<id>]].",
            "Directives are removed from the text before delivery, so do not explain them.",
        ]),
        ReplyDelivery::MessageToolOnly => lines([
            "## Assistant Output Directives".to_owned(),
            format!(
                "Attachments and voice notes go through the {} tool's attachment fields; keep them few and relevant.",
                ctx.tools.spelled("message")
            ),
            "Reply threading is set with the tool's reply fields, not with tags in the text."
                .to_owned(),
        ]),
    }
}

/// `## Silent Replies` (SPEC P-28): only automatic group/channel runs own a
/// silent-reply contract with the `NO_REPLY` token.
pub fn silent_replies(turn: &TurnCtx) -> Option<String> {
    let ch = &turn.channel;
    let group_like = matches!(ch.chat_type, ChatType::Group | ChatType::Channel);
    (ch.reply_delivery == ReplyDelivery::Automatic && group_like).then(|| {
        lines([
            "## Silent Replies".to_owned(),
            format!("Not every group message needs an answer. When you have nothing useful to add, reply with exactly {NO_REPLY} and nothing else; it is never shown."),
            format!("Never append {NO_REPLY} to a real reply."),
        ])
    })
}

/// `## Voice (TTS)`: the configured hint.
pub fn voice(turn: &TurnCtx) -> Option<String> {
    (!turn.tts_hint.is_empty()).then(|| lines(["## Voice (TTS)", turn.tts_hint.as_str()]))
}

/// `## Group Chat Context` or, in minimal mode, `## Subagent Context`.
pub fn extra_context(ctx: &StableCtx, turn: &TurnCtx) -> Option<String> {
    if turn.extra_system_prompt.is_empty() {
        return None;
    }
    let heading = if ctx.mode == PromptMode::Minimal {
        "## Subagent Context"
    } else {
        "## Group Chat Context"
    };
    Some(lines([heading, turn.extra_system_prompt.as_str()]))
}

/// `## Reactions`.
pub fn reactions(turn: &TurnCtx) -> Option<String> {
    let channel = if turn.channel.name.is_empty() {
        "this channel"
    } else {
        turn.channel.name.as_str()
    };
    let body = match turn.reaction_level {
        ReactionLevel::Unspecified => return None,
        ReactionLevel::Minimal => format!(
            "Emoji reactions are available on {channel}. Use them rarely: only to acknowledge a message that needs no written answer."
        ),
        ReactionLevel::Extensive => format!(
            "Emoji reactions are available on {channel} and are a normal way to respond: acknowledge, agree or show you are on it. A reaction can replace a short written reply."
        ),
    };
    Some(lines(["## Reactions".to_owned(), body]))
}

/// `## Approvals` (SPEC P-23): channels with native approval UI.
pub fn approvals(turn: &TurnCtx) -> Option<String> {
    turn.channel.native_approvals.then(|| {
        lines([
            "## Approvals",
            "This channel shows approval requests as native cards or buttons. When a command needs approval, let that UI collect the decision.",
            "Mention the manual /approve command only when a tool result says chat approvals are unavailable or manual approval is the only way.",
        ])
    })
}

/// `## Heartbeats` (SPEC P-19).
pub fn heartbeats(turn: &TurnCtx) -> Option<String> {
    let hb = &turn.heartbeat;
    if !hb.enabled || !hb.include_system_prompt_section || hb.prompt.is_empty() {
        return None;
    }
    Some(lines([
        "## Heartbeats".to_owned(),
        format!(
            "Heartbeat polls arrive as a user message with this prompt: {}",
            hb.prompt
        ),
        format!(
            "If a heartbeat finds nothing that needs attention, reply with exactly {HEARTBEAT_OK} and nothing else; that reply is recorded but not delivered."
        ),
        format!(
            "If something does need attention, reply with the alert itself and leave {HEARTBEAT_OK} out."
        ),
    ]))
}

/// `## Runtime` (SPEC P-20, P-21): the runtime line, model identity, active
/// background processes and the reasoning toggle.
pub fn runtime(turn: &TurnCtx) -> String {
    let r = &turn.runtime;
    let kv = |key: &str, value: &str| (!value.is_empty()).then(|| format!("{key}={value}"));
    let os = match (r.os.as_str(), r.arch.as_str()) {
        ("", "") => None,
        ("", arch) => Some(format!("arch={arch}")),
        (os, "") => Some(format!("os={os}")),
        (os, arch) => Some(format!("os={os} ({arch})")),
    };
    let (channel, caps) = if turn.channel.name.is_empty() {
        (None, None)
    } else {
        let caps = if turn.channel.capabilities.is_empty() {
            "none".to_owned()
        } else {
            turn.channel.capabilities.join(",")
        };
        (
            kv("channel", &turn.channel.name),
            Some(format!("capabilities={caps}")),
        )
    };
    let mut fields: Vec<String> = [
        kv("agent", &turn.agent_id),
        kv("host", &r.host),
        kv("repo", &r.repo_root),
        os,
        kv("runtime", &r.runtime_version),
        kv("model", &r.model),
        kv("default_model", &r.default_model),
        kv("shell", &r.shell),
        channel,
        caps,
    ]
    .into_iter()
    .flatten()
    .collect();
    fields.push(format!("thinking={}", turn.think_level.as_str()));
    let mut out = vec![
        "## Runtime".to_owned(),
        format!("Runtime: {}", fields.join(" | ")),
    ];
    if !r.model.is_empty() {
        out.push(format!("You are running on the model {}.", r.model));
    }
    if !r.active_processes.is_empty() {
        out.push(format!(
            "Background commands still running: {}.",
            r.active_processes.join("; ")
        ));
    }
    out.push(format!(
        "Reasoning: {} (the user can switch it with /reasoning; shown reasoning is visible to them).",
        turn.reasoning_level.as_str()
    ));
    lines(out)
}
