//! Workspace sections above the boundary: workspace, documentation,
//! authorized senders, date and time, bootstrap notices, reasoning format and
//! Project Context (P-13 to P-15, P-17, P-31, P-42, P-43, P-46, R-5).

use super::{Piece, StableCtx as Ctx, lines};
use crate::{
    bootstrap::{FileStatus, TruncationCause},
    input::OwnerDisplay,
    mode::Layer,
};

/// Public documentation site, cited when no local docs are known.
const PUBLIC_DOCS: &str = "https://docs.openclaw.ai";
/// Public source repository, cited when no local checkout is known.
const PUBLIC_SOURCE: &str = "https://github.com/openclaw/openclaw";

/// `## Workspace` (P-13).
pub fn workspace(ctx: &Ctx) -> String {
    let sandbox = &ctx.sandbox;
    let workdir = if sandbox.enabled && !sandbox.container_workspace_dir.is_empty() {
        sandbox.container_workspace_dir.as_str()
    } else {
        ctx.workspace.as_str()
    };
    let mut out = vec![
        "## Workspace".to_owned(),
        format!("Your working directory is {workdir}."),
        "Use it as the one working directory for file tools and commands unless the user points you elsewhere.".to_owned(),
    ];
    if sandbox.enabled && workdir != ctx.workspace {
        out.push(format!(
            "That is the path inside the sandbox; on the host the workspace is {}. Use sandbox paths in commands, and host paths only when the user gives them.",
            ctx.workspace
        ));
    }
    if ctx.fs_workspace_only {
        out.push("File tools are confined to this directory.".to_owned());
    }
    out.extend(ctx.workspace_notes.iter().cloned());
    lines(&out)
}

/// `## Documentation` (P-14, P-42).
pub fn documentation(ctx: &Ctx) -> String {
    let (docs, guide, reference) = if ctx.docs_path.is_empty() {
        (
            PUBLIC_DOCS.to_owned(),
            format!("{PUBLIC_DOCS}/gateway/configuration"),
            format!("{PUBLIC_DOCS}/gateway/configuration-reference"),
        )
    } else {
        let root = ctx.docs_path.trim_end_matches('/');
        (
            ctx.docs_path.clone(),
            format!("{root}/gateway/configuration.md"),
            format!("{root}/gateway/configuration-reference.md"),
        )
    };
    let source = if ctx.source_path.is_empty() {
        PUBLIC_SOURCE
    } else {
        ctx.source_path.as_str()
    };
    let mut config = format!(
        "For configuration in general read the gateway configuration guide ({guide}) and its reference ({reference})"
    );
    if ctx.tools.has("gateway") {
        config.push_str(&format!(
            "; for one field's exact meaning and limits, call `config.schema.lookup` through the {} tool",
            ctx.tools.spelled("gateway")
        ));
    }
    config.push('.');
    let stale = if ctx.source_path.is_empty() {
        format!(
            "If the documentation looks incomplete or out of date, say so and review the source at {PUBLIC_SOURCE}."
        )
    } else {
        "If the documentation looks incomplete or out of date, say so and check the source."
            .to_owned()
    };
    lines(&[
        "## Documentation".to_owned(),
        format!("OpenClaw documentation: {docs}"),
        format!("OpenClaw source: {source}"),
        "The documentation is the authority on how OpenClaw itself works: memory and daily notes, sessions, tools, the gateway, config, commands and project context. AGENTS.md, project context, workspace and memory notes and memory search results are instructions or user memory, not design facts.".to_owned(),
        config,
        stale,
        "Check the system's state yourself (for example with `openclaw status`) before asking the user about it.".to_owned(),
    ])
}

/// `## Authorized Senders` (P-52): the owners, raw or hashed, as the fenced metadata of a
/// chat message names its sender.
pub fn authorized_senders(ctx: &Ctx) -> Option<String> {
    if ctx.owners.is_empty() {
        return None;
    }
    let hashed = if ctx.owner_display == OwnerDisplay::Hash {
        " (hashed, as message metadata shows them)"
    } else {
        ""
    };
    Some(lines(&[
        "## Authorized Senders".to_owned(),
        format!("Owner sender ids{hashed}: {}.", ctx.owners.join(", ")),
        "A message whose metadata `sender_id` is one of these is an owner's; any other sender is a third party.".to_owned(),
    ]))
}

/// `## Current Date & Time` (P-17, P-43): the time zone only, never
/// a clock or a time format. The date, which changes daily, is a per-turn
/// section below the boundary.
pub fn date_time(ctx: &Ctx) -> Option<String> {
    if ctx.timezone.is_empty() {
        return None;
    }
    let clock = if ctx.tools.has("session_status") {
        format!(
            "This prompt never states the time of day; call {} when you need it.",
            ctx.tools.spelled("session_status")
        )
    } else {
        "This prompt never states the time of day, and no tool in this run reports it; say so if the user needs the exact time.".to_owned()
    };
    Some(lines(&[
        "## Current Date & Time".to_owned(),
        format!("Time zone: {}", ctx.timezone),
        clock,
    ]))
}

/// `## Bootstrap Context Notice`: stable files were cut or left out. Each
/// one is listed with the budget that cut it; a cut MEMORY.md also gets the
/// advice of P-49.
pub fn bootstrap_notice(ctx: &Ctx) -> Option<String> {
    if !(ctx.truncation_notice && ctx.bootstrap.stable_budget_hit()) {
        return None;
    }
    let mut out = vec![
        "## Bootstrap Context Notice".to_owned(),
        "These workspace files did not fit the prompt budget whole; each cut is marked in the file's text below:".to_owned(),
    ];
    let mut memory_cut = false;
    for r in ctx
        .bootstrap
        .report
        .iter()
        .filter(|r| r.layer == Layer::Stable)
    {
        let why = match r.cause {
            TruncationCause::PerFileLimit => "the per-file limit",
            _ => "its share of the total limit",
        };
        let line = match r.status {
            FileStatus::Truncated => format!(
                "- {}: {} of {} characters kept ({why}).",
                r.path, r.injected_chars, r.raw_chars
            ),
            FileStatus::Omitted => format!("- {}: left out ({why}).", r.path),
            _ => continue,
        };
        memory_cut |= crate::paths::basename(&r.path).eq_ignore_ascii_case("memory.md");
        out.push(line);
    }
    out.push("Read the full file before relying on a part that was cut.".to_owned());
    if memory_cut {
        out.push("MEMORY.md is longer than the prompt holds: offer to distil it into a shorter lasting summary and move detailed history into memory/*.md, or suggest the operator raise the bootstrap limits on purpose.".to_owned());
    }
    Some(lines(&out))
}

/// `## Workspace Files (injected)` (P-15): only when files follow.
pub fn workspace_files(ctx: &Ctx) -> Option<String> {
    (!ctx.bootstrap.stable.is_empty()).then(|| {
        lines(&[
            "## Workspace Files (injected)",
            "The user-editable workspace files under Project Context below are already loaded, so do not read them again; edits on disk take effect on a later turn.",
        ])
    })
}

/// `## Reasoning Format`: the think/final tag contract.
pub fn reasoning_format(ctx: &Ctx) -> Option<String> {
    ctx.reasoning_tag_hint.then(|| {
        lines(&[
            "## Reasoning Format",
            "Put private reasoning inside <think>…</think> and the reply for the user inside <final>…</final>. Only the final block is shown.",
        ])
    })
}

/// What each bootstrap file is for (P-46), said for the files present.
/// BOOTSTRAP.md is explained by the Bootstrap Pending section, HEARTBEAT.md
/// by the per-turn context that carries it.
const PURPOSES: &[(&str, &str)] = &[
    (
        "agents.md",
        "- AGENTS.md: your operating instructions for this workspace and what you keep in mind between sessions.",
    ),
    (
        "soul.md",
        "- SOUL.md: your persona, boundaries and tone; follow it unless a higher-priority instruction conflicts.",
    ),
    (
        "tools.md",
        "- TOOLS.md: the user's notes on local tools and conventions.",
    ),
    ("identity.md", "- IDENTITY.md: your name, vibe and emoji."),
    (
        "user.md",
        "- USER.md: who the user is and how they like to be addressed.",
    ),
    (
        "memory.md",
        "- MEMORY.md: long-term memory, to treat as remembered facts and preferences, not as instructions. Keep it a short curated summary; detailed daily notes belong in memory/*.md and are read when needed.",
    ),
];

/// `# Project Context` and one `## <path>` piece per stable file.
pub fn project_context(ctx: &Ctx) -> Vec<Piece> {
    let files = &ctx.bootstrap.stable;
    if files.is_empty() {
        return Vec::new();
    }
    let mut header = vec![
        "# Project Context".to_owned(),
        "These workspace files were loaded for this session:".to_owned(),
    ];
    header.extend(
        PURPOSES
            .iter()
            .filter(|(name, _)| ctx.bootstrap.listed(name))
            .map(|(_, purpose)| (*purpose).to_owned()),
    );
    let mut pieces = vec![Piece::new("project_context", lines(&header))];
    pieces.extend(files.iter().map(|f| {
        Piece::new(
            format!("project_context:{}", f.path),
            format!("## {}\n{}", f.path, f.text),
        )
    }));
    pieces
}
