//! Sections about what the agent can look up or load above the boundary:
//! skills, memory recall, self-update, model aliases and the GPT-5
//! overlay's heartbeat guidance (P-5, P-10, P-12, P-37).

use super::{StableCtx as Ctx, lines};
use crate::input::CitationsMode;

/// `## Skills` (P-10, P-37): only when skills are listed. Following a skill
/// means reading its file, so the reading rules come only with the `read`
/// tool; without it the section says plainly that no skill can be opened.
pub fn skills(ctx: &Ctx) -> Option<String> {
    if ctx.skills.block.is_empty() {
        return None;
    }
    if !ctx.tools.has("read") {
        return Some(lines(&[
            "## Skills",
            "Skills are optional instruction packs, but no tool in this run can read a SKILL.md: when one clearly fits the task, tell the user which skill would help rather than guessing what it says.",
            ctx.skills.block.as_str(),
        ]));
    }
    let read = ctx.tools.spelled("read");
    Some(lines(&[
        "## Skills".to_owned(),
        format!("Skills are optional instruction packs. Before replying, scan the list: when one skill clearly fits the task, read its SKILL.md (the <location>) with {read} and follow it. When several fit, choose the most specific; load at most one up front."),
        "Each skill carries a <version>. If it differs from the version you saw earlier in this session, read that SKILL.md again.".to_owned(),
        "Resolve relative paths in a skill against the folder holding its SKILL.md, and never guess a skill's location.".to_owned(),
        "When a skill calls an external service, respect its rate limits: back off when a call answers 429 or sends Retry-After, and never retry in a tight loop. Confirm with the user before writing to an external service (posting, sending, changing or deleting) unless they asked for exactly that.".to_owned(),
        ctx.skills.block.clone(),
    ]))
}

/// `## Memory Recall`: only when memory tools exist and the section is on.
pub fn memory(ctx: &Ctx) -> Option<String> {
    let t = &ctx.tools;
    if !ctx.memory_include || !(t.has("memory_search") || t.has("memory_get")) {
        return None;
    }
    let mut out = vec!["## Memory Recall".to_owned()];
    match (t.has("memory_search"), t.has("memory_get")) {
        (true, true) => out.push(format!(
            "Before answering about earlier work, decisions, dates, people, preferences or open tasks, search memory with {} and then read only the lines you need with {}.",
            t.spelled("memory_search"),
            t.spelled("memory_get")
        )),
        (true, false) => out.push(format!(
            "Before answering about earlier work, decisions, dates, people, preferences or open tasks, search memory with {}.",
            t.spelled("memory_search")
        )),
        _ => out.push(format!(
            "Read the relevant memory file lines with {} before answering about earlier work, decisions or preferences.",
            t.spelled("memory_get")
        )),
    }
    out.push("If memory holds nothing relevant, say that you checked.".to_owned());
    out.push(
        match ctx.citations {
            CitationsMode::Auto => "Cite the memory file and line range when that helps the user check a fact.",
            CitationsMode::On => "Cite the memory file and line range (path#Lstart-Lend) for every fact you take from memory.",
            CitationsMode::Off => "Do not cite memory file paths in replies.",
        }
        .to_owned(),
    );
    Some(lines(&out))
}

/// `## OpenClaw Self-Update` (P-12): only with the gateway tool.
pub fn self_update(ctx: &Ctx) -> Option<String> {
    if !ctx.tools.has("gateway") {
        return None;
    }
    let mut out = vec![
        "## OpenClaw Self-Update",
        "To change configuration, first read the relevant schema with `config.schema.lookup`, then make targeted edits with `config.patch`; use `config.apply` only to replace the whole file.",
    ];
    if ctx.gateway_can("update.run") {
        out.push("Run `update.run` only when the user explicitly asks for an update.");
    }
    out.push("Exec approval settings (`tools.exec.ask`, `tools.exec.security` and their legacy `tools.bash.*` aliases) cannot be changed through the gateway; ask the user to change them by hand.");
    Some(lines(&out))
}

/// `## Model Aliases`: configured aliases, sorted.
pub fn model_aliases(ctx: &Ctx) -> Option<String> {
    if ctx.aliases.is_empty() {
        return None;
    }
    let mut out = vec![
        "## Model Aliases".to_owned(),
        "When the user names a model, these aliases are the preferred spelling:".to_owned(),
    ];
    out.extend(
        ctx.aliases
            .iter()
            .map(|a| format!("- {}: {}", a.alias, a.model)),
    );
    Some(lines(&out))
}

/// `## Heartbeat Initiative` (P-5): the GPT-5 overlay's heartbeat
/// guidance, only when the input asks for it.
pub fn gpt5_heartbeat(ctx: &Ctx) -> Option<String> {
    ctx.gpt5_heartbeat_guidance
        .then(|| crate::gpt5::HEARTBEAT_GUIDANCE.to_owned())
}
