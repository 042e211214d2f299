//! Per-turn sections below the boundary: dynamic project context, Control UI,
//! messaging, output directives, silent replies, voice, extra context,
//! reactions, approvals, heartbeats, the date and the runtime line (
//! P-18 to P-21, P-23, P-24, P-28).

use std::fmt;

use super::{Joined, Piece, SectionText, StableCtx, TurnCtx, lines};
use crate::{
    bootstrap::DynamicFiles,
    input::{ChatType, PromptMode, ReactionLevel, ReplyDelivery, SessionKind, TurnKind},
};

/// Acknowledgement token of a heartbeat turn with nothing to report.
pub const HEARTBEAT_OK: &str = "HEARTBEAT_OK";
/// Token a group/channel auto-reply run answers with to stay silent.
pub const NO_REPLY: &str = "NO_REPLY";

/// `# Dynamic Project Context`: per-turn files (HEARTBEAT.md).
pub fn dynamic_project_context(ctx: &StableCtx, files: &DynamicFiles) -> Vec<Piece> {
    let files = &files.injected;
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
        "These workspace files may change between turns and are loaded fresh each time; HEARTBEAT.md is the heartbeat turns' checklist.",
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

/// `## Bootstrap Pending`: BOOTSTRAP.md is in Project Context.
/// Only a user's turn works through the first-run setup; a heartbeat,
/// wake-up, cron or subagent turn is told to leave it for one. The way to
/// finish is offered only with a tool that can remove the file.
pub fn bootstrap_pending(ctx: &StableCtx, turn: &TurnCtx) -> Option<String> {
    if !ctx.bootstrap.bootstrap_pending() {
        return None;
    }
    let mut out = SectionText::new("## Bootstrap Pending");
    if !turn.turn_kind.from_user() {
        out.line("This workspace is new and its first-run setup (BOOTSTRAP.md in Project Context) is still open, but no user started this turn: leave the setup for a conversation with the user and do only what this turn asks.");
        return Some(out.finish());
    }
    let finish = if ctx.tools.has("exec") {
        format!(
            "remove BOOTSTRAP.md (for example `rm BOOTSTRAP.md` with {}) once setup is complete",
            ctx.tools.spelled("exec")
        )
    } else if ctx.tools.has("apply_patch") {
        format!(
            "delete BOOTSTRAP.md with a delete-file patch through {} once setup is complete",
            ctx.tools.spelled("apply_patch")
        )
    } else {
        "once setup is complete, tell the user so they can delete BOOTSTRAP.md: no tool in this run removes files".to_owned()
    };
    out.line_fmt(format_args!("This workspace is new. BOOTSTRAP.md (in Project Context above) describes a first-run setup: work through it with the user before other tasks, record what you learn in IDENTITY.md, USER.md and SOUL.md as it asks, and {finish}."));
    Some(out.finish())
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
    if ctx.mode == PromptMode::Minimal {
        minimal_messaging(ctx, turn, &mut out);
        return out.finish();
    }
    match (ch.name.is_empty(), ch.chat_type.label()) {
        (true, _) => out.line("This turn did not arrive through a chat channel."),
        (false, Some(kind)) => out.line_fmt(format_args!(
            "This turn arrived on {} ({kind}).",
            ch.display_name
        )),
        (false, None) => out.line_fmt(format_args!("This turn arrived on {}.", ch.display_name)),
    }
    match (ch.reply_delivery, ch.name.is_empty()) {
        (ReplyDelivery::Automatic, false) => {
            out.line("Your final reply goes back to the same conversation automatically.");
        }
        (ReplyDelivery::Automatic, true) => {
            out.line("Your final reply goes back to whoever started the turn.");
        }
        (ReplyDelivery::MessageToolOnly, _) if t.has("message") => out.line_fmt(format_args!(
            "Plain assistant text does not reach the chat here: send every visible reply with the {} tool. If nothing needs saying, end the turn without sending.",
            t.spelled("message")
        )),
        (ReplyDelivery::MessageToolOnly, _) => out.line(
            "Plain assistant text does not reach the chat here, and no message tool is available in this run, so nothing you write is delivered; say so in your reply if the user expects an answer.",
        ),
    }
    out.line("When a runtime message reports something the user is waiting for (a finished job, a subagent's result), tell them in your own words; never forward it raw.");
    if t.has("message") {
        let message = t.spelled("message");
        out.line_fmt(format_args!("### {message} tool"));
        if ch.name.is_empty() {
            out.line_fmt(format_args!(
                "To reach a chat or channel, call {message} with action \"send\", the channel, a target and the text: this turn has no conversation to default to."
            ));
        } else {
            out.line_fmt(format_args!(
                "To reach another chat or channel, call {message} with action \"send\", a target and the text. The current conversation is already the default target."
            ));
        }
        if !ch.known_channels.is_empty() {
            out.line_fmt(format_args!(
                "Channels you can send to: {}.",
                Joined(&ch.known_channels, ", ")
            ));
        }
        if ch.capabilities.iter().any(|c| c == "inlinebuttons") {
            out.line_fmt(format_args!(
                "{} shows inline buttons: offer short choices as buttons through {message} when its schema has a buttons field; a tap comes back to you as a user message.",
                ch.display_name
            ));
        }
        out.line("Never send the same content both through the tool and as your reply.");
        out.line("Never reach a chat through a shell command or a raw API call.");
        for hint in &ch.message_tool_hints {
            out.line(hint);
        }
    }
    out.finish()
}

/// The minimal-mode Messaging lines: where this run's final reply goes, and
/// that chats are reached only through the message tool.
fn minimal_messaging(ctx: &StableCtx, turn: &TurnCtx, out: &mut SectionText) {
    match turn.turn_kind {
        TurnKind::Subagent => out.line("Your final reply is your result: it goes back to the session that started you as a [Subagent Result] message and reaches no chat by itself, so make it complete and self-contained."),
        TurnKind::Cron => out.line("Your final reply is this job's result: it stays in the job's session, and goes on to another session only when the job is set to deliver it."),
        _ => out.line("Your final reply goes back to whoever started the turn."),
    }
    if ctx.tools.has("message") {
        out.line_fmt(format_args!(
            "Reach a chat only with the {} tool (action \"send\", a channel, a target and the text), never through a shell command or a raw API call.",
            ctx.tools.spelled("message")
        ));
    } else {
        out.line("No tool in this run sends to a chat; do not try to reach one through a shell command or a raw API call.");
    }
}

/// `## Assistant Output Directives` (P-18): depends on reply delivery.
pub fn output_directives(ctx: &StableCtx, turn: &TurnCtx) -> String {
    match turn.channel.reply_delivery {
        ReplyDelivery::Automatic => {
            let mut out = SectionText::new("## Assistant Output Directives");
            out.line("To attach a file or image, put `MEDIA: <path or URL>` on a line of its own; attach only what the user needs.");
            out.line("To send a voice note, attach an audio file the same way.");
            // Reply tags point at a chat message; without a channel there is none.
            if !turn.channel.name.is_empty() {
                out.line("To answer a specific message, begin the reply with [[reply_to_current]] or [[reply_to:<id>]].");
            }
            out.line(
                "Directives are removed from the text before delivery, so do not explain them.",
            );
            out.finish()
        }
        ReplyDelivery::MessageToolOnly if !ctx.tools.has("message") => lines(&[
            "## Assistant Output Directives",
            "Nothing you write reaches the chat in this run, so attachments and reply threading are unavailable.",
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

/// `## Silent Replies` (P-28): the runtime delivers nothing for a reply of
/// exactly `NO_REPLY` in every session, so every run with automatic delivery
/// is told how to stay silent; group and channel runs get the group wording.
/// A subagent's reply is its result (silence would lose it), and with
/// message-tool-only delivery not sending is already silence.
pub fn silent_replies(turn: &TurnCtx) -> Option<String> {
    let ch = &turn.channel;
    if ch.reply_delivery != ReplyDelivery::Automatic || turn.turn_kind == TurnKind::Subagent {
        return None;
    }
    let mut out = SectionText::new("## Silent Replies");
    if matches!(ch.chat_type, ChatType::Group | ChatType::Channel) {
        out.line_fmt(format_args!("Not every group message needs an answer. When you have nothing useful to add, reply with exactly {NO_REPLY} and nothing else; it is never shown."));
    } else {
        out.line_fmt(format_args!("If a turn needs no answer, reply with exactly {NO_REPLY} and nothing else; nothing is delivered."));
    }
    out.line_fmt(format_args!("Never append {NO_REPLY} to a real reply."));
    Some(out.finish())
}

/// `## Voice (TTS)`: the configured hint.
pub fn voice(turn: &TurnCtx) -> Option<String> {
    (!turn.tts_hint.is_empty()).then(|| lines(&["## Voice (TTS)", turn.tts_hint.as_str()]))
}

/// `## Group Chat Context`; in minimal mode `## Subagent Context`, or
/// `## Cron Job Context` for a cron run.
pub fn extra_context(ctx: &StableCtx, turn: &TurnCtx) -> Option<String> {
    if turn.extra_system_prompt.is_empty() {
        return None;
    }
    let heading = match (ctx.mode, ctx.session_kind) {
        (PromptMode::Minimal, SessionKind::Cron) => "## Cron Job Context",
        (PromptMode::Minimal, _) => "## Subagent Context",
        _ => "## Group Chat Context",
    };
    Some(lines(&[heading, turn.extra_system_prompt.as_str()]))
}

/// `## Reactions`: only on a channel, which it names.
pub fn reactions(turn: &TurnCtx) -> Option<String> {
    if turn.channel.name.is_empty() {
        return None;
    }
    let channel = turn.channel.display_name.as_str();
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

/// `## Approvals` (P-23): channels with native approval UI, in a run
/// that can run commands.
pub fn approvals(ctx: &StableCtx, turn: &TurnCtx) -> Option<String> {
    (turn.native_approvals() && ctx.tools.has("exec")).then(|| {
        lines(&[
            "## Approvals",
            "This channel shows approval requests as native cards or buttons. When a command needs approval, let that UI collect the decision.",
            "Mention the manual /approve command only when a tool result says chat approvals are unavailable or manual approval is the only way.",
        ])
    })
}

/// `## Heartbeats` (P-19). With message-tool-only delivery an alert
/// goes out through the tool, since plain text does not reach the chat.
pub fn heartbeats(ctx: &StableCtx, turn: &TurnCtx) -> Option<String> {
    let hb = &turn.heartbeat;
    // P-51: only where heartbeats run (resolved in prepare; a heartbeat turn
    // is served by definition).
    let served = hb.serves_session == Some(true);
    if !hb.enabled || !hb.include_system_prompt_section || hb.prompt.is_empty() || !served {
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
    let tool_only = turn.channel.reply_delivery == ReplyDelivery::MessageToolOnly;
    if tool_only && ctx.tools.has("message") {
        out.line_fmt(format_args!(
            "If something does need attention, send the alert with the {} tool (plain text does not reach the chat here) and leave {HEARTBEAT_OK} out of it.",
            ctx.tools.spelled("message")
        ));
    } else if tool_only {
        // Messaging says nothing written here is delivered: do not promise that
        // an alert reply reaches anyone.
        out.line_fmt(format_args!(
            "If something does need attention, reply with the alert without {HEARTBEAT_OK}: nothing reaches the chat in this run, but the alert is kept in the session for the user to see later."
        ));
    } else {
        out.line_fmt(format_args!(
            "If something does need attention, reply with the alert itself and leave {HEARTBEAT_OK} out."
        ));
    }
    Some(out.finish())
}

/// `## Current Date`: the user's local date, when the turn gives it and the
/// user's time zone is known. Below
/// the boundary (it changes daily); the zone stays above it.
pub fn current_date(ctx: &StableCtx, turn: &TurnCtx) -> Option<String> {
    // P-50: a date without a known zone may be the wrong day for the user.
    let date = turn.date.filter(|_| !ctx.timezone.is_empty())?;
    let mut out = SectionText::new("## Current Date");
    out.line_fmt(format_args!(
        "Today is {} ({date}) in {}.",
        weekday(date),
        ctx.timezone
    ));
    Some(out.finish())
}

fn weekday(date: jiff::civil::Date) -> &'static str {
    match date.weekday() {
        jiff::civil::Weekday::Monday => "Monday",
        jiff::civil::Weekday::Tuesday => "Tuesday",
        jiff::civil::Weekday::Wednesday => "Wednesday",
        jiff::civil::Weekday::Thursday => "Thursday",
        jiff::civil::Weekday::Friday => "Friday",
        jiff::civil::Weekday::Saturday => "Saturday",
        jiff::civil::Weekday::Sunday => "Sunday",
    }
}

/// `## Runtime` (P-20, P-21): the runtime line, model identity, active
/// background processes and the reasoning toggle.
pub fn runtime(turn: &TurnCtx) -> String {
    let r = &turn.runtime;
    let mut out = SectionText::new("## Runtime");
    out.line_fmt(format_args!("Runtime: {}", RuntimeFields(turn)));
    if !r.active_processes.is_empty() {
        out.line_fmt(format_args!(
            "Background commands still running: {}.",
            Joined(&r.active_processes, "; ")
        ));
    }
    // Only a conversation with a user has someone to type /reasoning.
    if matches!(turn.turn_kind, TurnKind::Subagent | TurnKind::Cron) {
        out.line_fmt(format_args!(
            "Reasoning: {}.",
            turn.reasoning_level.as_str()
        ));
    } else {
        out.line_fmt(format_args!(
            "Reasoning: {} (the user can switch it with /reasoning; shown reasoning is visible to them).",
            turn.reasoning_level.as_str()
        ));
    }
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
        fields.non_empty("session", &r.session_key)?;
        fields.non_empty("host", &r.host)?;
        fields.non_empty("repo", &r.repo_root)?;
        match (r.os.as_str(), r.arch.as_str()) {
            ("", "") => {}
            ("", arch) => fields.field("arch", arch)?,
            (os, "") => fields.field("os", os)?,
            (os, arch) => fields.field("os", format_args!("{os} ({arch})"))?,
        }
        fields.non_empty("runtime", &r.runtime_version)?;
        for v in &r.versions {
            fields.field(&v.key, &v.value)?;
        }
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
    /// One `key=value` field. A value that could be read as more than one field (it holds the
    /// separator `|`, an `=`, a quote, a backslash, a control character, or space at either
    /// end) is written quoted with its specials escaped, so a caller-chosen value such as a
    /// session key of `x | model=evil` cannot add a field of its own.
    fn field(&mut self, key: &str, value: impl fmt::Display) -> fmt::Result {
        if !self.first {
            self.f.write_str(" | ")?;
        }
        self.first = false;
        let value = value.to_string();
        let plain = value.trim() == value
            && !value
                .chars()
                .any(|c| matches!(c, '|' | '=' | '"' | '\\') || c.is_control());
        if plain {
            write!(self.f, "{key}={value}")
        } else {
            write!(self.f, "{key}={value:?}")
        }
    }

    fn non_empty(&mut self, key: &str, value: &str) -> fmt::Result {
        if value.is_empty() {
            Ok(())
        } else {
            self.field(key, value)
        }
    }
}
