//! Per-turn sections below the boundary: dynamic project context, Control UI,
//! messaging, output directives, silent replies, voice, extra context,
//! reactions, approvals, heartbeats and the runtime line (SPEC P-18 to P-21,
//! P-23, P-24, P-28).

use std::fmt;

use super::{Joined, Piece, SectionText, StableCtx, TurnCtx, lines};
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
    let header = lines(&[
        heading,
        "These workspace files can change between turns, so they are loaded fresh each time.",
    ]);
    let mut pieces = Vec::with_capacity(1 + files.len());
    pieces.push(Piece::new("dynamic_project_context", header));
    pieces.extend(files.iter().map(|f| {
        Piece::new(
            format!("dynamic_project_context:{}", f.path),
            ["## ", &f.path, "\n", &f.text].concat(),
        )
    }));
    pieces
}

/// `## Control UI Embed`: only on the `webchat` channel.
pub fn control_ui_embed(turn: &TurnCtx) -> Option<String> {
    (turn.channel.name == "webchat").then(|| {
        lines(&[
            "## Control UI Embed",
            "This conversation is shown in the OpenClaw Control UI. Markdown renders fully here, tables and code blocks included, and attached images appear inline.",
        ])
    })
}

/// `## Messaging`, with a `### message tool` block when that tool exists.
pub fn messaging(ctx: &StableCtx, turn: &TurnCtx) -> String {
    let t = &ctx.tools;
    let ch = &turn.channel;
    let mut out = SectionText::new("## Messaging");
    match (ch.name.as_str(), ch.chat_type.label()) {
        ("", _) => out.line("This turn did not arrive through a chat channel."),
        (name, Some(kind)) => out.line_fmt(format_args!("This turn arrived on {name} ({kind}).")),
        (name, None) => out.line_fmt(format_args!("This turn arrived on {name}.")),
    }
    match ch.reply_delivery {
        ReplyDelivery::Automatic => {
            out.line("Your final reply goes back to the same conversation automatically.");
        }
        ReplyDelivery::MessageToolOnly => out.line_fmt(format_args!(
            "Plain assistant text does not reach the chat here: send every visible reply with the {} tool. If nothing needs saying, end the turn without sending.",
            t.spelled("message")
        )),
    }
    out.line("Runtime events such as finished background jobs or cron results are for you: restate what matters in your own words rather than forwarding the raw event.");
    if t.has("sessions_spawn") || t.has("subagents") {
        out.line("Subagent results arrive as messages in this session; summarise them for the user instead of pasting them.");
    }
    if t.has("message") {
        let message = t.spelled("message");
        out.line_fmt(format_args!("### {message} tool"));
        out.line_fmt(format_args!(
            "To reach another chat or channel, call {message} with action \"send\", a target and the text. The current conversation is already the default target."
        ));
        out.line("Never send the same content both through the tool and as your reply.");
        for hint in &ch.message_tool_hints {
            out.line(hint);
        }
    }
    out.finish()
}

/// `## Assistant Output Directives` (SPEC P-18): depends on reply delivery.
pub fn output_directives(ctx: &StableCtx, turn: &TurnCtx) -> String {
    match turn.channel.reply_delivery {
        ReplyDelivery::Automatic => lines(&[
            "## Assistant Output Directives",
            "To attach a file or image, put `MEDIA: <path or URL>` on a line of its own; attach only what the user needs.",
            "To send a voice note, attach an audio file the same way.",
            "To answer a specific message, begin the reply with [[reply_to_current]] or [[reply_to:<id>]].",
            "Directives are removed from the text before delivery, so do not explain them.",
        ]),
        ReplyDelivery::MessageToolOnly => {
            let mut out = SectionText::new("## Assistant Output Directives");
            out.line_fmt(format_args!(
                "Attachments and voice notes go through the {} tool's attachment fields; keep them few and relevant.",
                ctx.tools.spelled("message")
            ));
            out.line(
                "Reply threading is set with the tool's reply fields, not with tags in the text.",
            );
            out.finish()
        }
    }
}

/// `## Silent Replies` (SPEC P-28): only automatic group/channel runs own a
/// silent-reply contract with the `NO_REPLY` token.
pub fn silent_replies(turn: &TurnCtx) -> Option<String> {
    let ch = &turn.channel;
    let group_like = matches!(ch.chat_type, ChatType::Group | ChatType::Channel);
    (ch.reply_delivery == ReplyDelivery::Automatic && group_like).then(|| {
        let mut out = SectionText::new("## Silent Replies");
        out.line_fmt(format_args!("Not every group message needs an answer. When you have nothing useful to add, reply with exactly {NO_REPLY} and nothing else; it is never shown."));
        out.line_fmt(format_args!("Never append {NO_REPLY} to a real reply."));
        out.finish()
    })
}

/// `## Voice (TTS)`: the configured hint.
pub fn voice(turn: &TurnCtx) -> Option<String> {
    (!turn.tts_hint.is_empty()).then(|| lines(&["## Voice (TTS)", turn.tts_hint.as_str()]))
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
    Some(lines(&[heading, turn.extra_system_prompt.as_str()]))
}

/// `## Reactions`.
pub fn reactions(turn: &TurnCtx) -> Option<String> {
    let channel = if turn.channel.name.is_empty() {
        "this channel"
    } else {
        turn.channel.name.as_str()
    };
    let usage = match turn.reaction_level {
        ReactionLevel::Unspecified => return None,
        ReactionLevel::Minimal => {
            ". Use them rarely: only to acknowledge a message that needs no written answer."
        }
        ReactionLevel::Extensive => {
            " and are a normal way to respond: acknowledge, agree or show you are on it. A reaction can replace a short written reply."
        }
    };
    let mut out = SectionText::new("## Reactions");
    out.line_fmt(format_args!(
        "Emoji reactions are available on {channel}{usage}"
    ));
    Some(out.finish())
}

/// `## Approvals` (SPEC P-23): channels with native approval UI.
pub fn approvals(turn: &TurnCtx) -> Option<String> {
    turn.channel.native_approvals.then(|| {
        lines(&[
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
    let mut out = SectionText::new("## Heartbeats");
    out.line_fmt(format_args!(
        "Heartbeat polls arrive as a user message with this prompt: {}",
        hb.prompt
    ));
    out.line_fmt(format_args!(
        "If a heartbeat finds nothing that needs attention, reply with exactly {HEARTBEAT_OK} and nothing else; that reply is recorded but not delivered."
    ));
    out.line_fmt(format_args!(
        "If something does need attention, reply with the alert itself and leave {HEARTBEAT_OK} out."
    ));
    Some(out.finish())
}

/// `## Runtime` (SPEC P-20, P-21): the runtime line, model identity, active
/// background processes and the reasoning toggle.
pub fn runtime(turn: &TurnCtx) -> String {
    let r = &turn.runtime;
    let mut out = SectionText::new("## Runtime");
    out.line_fmt(format_args!("Runtime: {}", RuntimeFields(turn)));
    if !r.model.is_empty() {
        out.line_fmt(format_args!("You are running on the model {}.", r.model));
    }
    if !r.active_processes.is_empty() {
        out.line_fmt(format_args!(
            "Background commands still running: {}.",
            Joined(&r.active_processes, "; ")
        ));
    }
    out.line_fmt(format_args!(
        "Reasoning: {} (the user can switch it with /reasoning; shown reasoning is visible to them).",
        turn.reasoning_level.as_str()
    ));
    out.finish()
}

/// The fields of the runtime line: `key=value`, ` | `-separated, fields
/// with an empty value left out.
struct RuntimeFields<'a>(&'a TurnCtx);

impl fmt::Display for RuntimeFields<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let turn = self.0;
        let r = &turn.runtime;
        let mut fields = Fields { f, first: true };
        fields.non_empty("agent", &turn.agent_id)?;
        fields.non_empty("host", &r.host)?;
        fields.non_empty("repo", &r.repo_root)?;
        match (r.os.as_str(), r.arch.as_str()) {
            ("", "") => {}
            ("", arch) => fields.field("arch", arch)?,
            (os, "") => fields.field("os", os)?,
            (os, arch) => fields.field("os", format_args!("{os} ({arch})"))?,
        }
        fields.non_empty("runtime", &r.runtime_version)?;
        fields.non_empty("model", &r.model)?;
        fields.non_empty("default_model", &r.default_model)?;
        fields.non_empty("shell", &r.shell)?;
        let channel = &turn.channel;
        if !channel.name.is_empty() {
            fields.field("channel", &channel.name)?;
            if channel.capabilities.is_empty() {
                fields.field("capabilities", "none")?;
            } else {
                fields.field("capabilities", Joined(&channel.capabilities, ","))?;
            }
        }
        fields.field("thinking", turn.think_level.as_str())
    }
}

/// Writes ` | `-separated `key=value` fields.
struct Fields<'a, 'f> {
    f: &'a mut fmt::Formatter<'f>,
    first: bool,
}

impl Fields<'_, '_> {
    fn field(&mut self, key: &str, value: impl fmt::Display) -> fmt::Result {
        if !self.first {
            self.f.write_str(" | ")?;
        }
        self.first = false;
        write!(self.f, "{key}={value}")
    }

    fn non_empty(&mut self, key: &str, value: &str) -> fmt::Result {
        if value.is_empty() {
            Ok(())
        } else {
            self.field(key, value)
        }
    }
}
