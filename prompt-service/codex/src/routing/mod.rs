//! The native Codex routing table for workspace files (P-32, P-38).
//!
//! | file | route |
//! |---|---|
//! | AGENTS.md | not injected: Codex reads it itself |
//! | TOOLS.md | thread `developerInstructions` |
//! | SOUL.md, IDENTITY.md, USER.md | turn-scoped `collaborationMode.settings.developer_instructions` |
//! | HEARTBEAT.md | never pasted; a pointer note on heartbeat turns |
//! | MEMORY.md | a memory-tools note when the tools exist and the memory workspace is the active one, else the turn input |
//! | BOOTSTRAP.md, other files | the turn input's project context |
//!
//! Missing and empty files are left out. The renderer's session filters
//! apply first (cron turns: AGENTS, TOOLS, SOUL, IDENTITY, USER; subagents:
//! AGENTS, TOOLS), and a lightweight cron turn gets nothing at all. Pasted
//! files are budgeted and cut by the renderer's own code, thread-level files
//! first, so that a turn-scoped file can never change the frozen thread text.

use std::collections::BTreeMap;

use prompt_render::{
    BootstrapLimits, ContextFile, FileStatus, HeartbeatInfo, Injected, SessionKind,
    bootstrap_file_allowed, budget_bootstrap_files, chars_u32, normalize_project_key,
    relative_in_workspace,
};

use crate::{error::CodexError, input::CodexTurnInput};

/// Where a workspace file goes on the native Codex harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Route {
    /// Not injected: Codex discovers and reads it itself (AGENTS.md).
    CodexProjectDoc,
    /// Thread-level `developerInstructions`, inherited by Codex sub-agents (TOOLS.md).
    ThreadInstructions,
    /// Turn-scoped collaboration developer instructions (SOUL.md, IDENTITY.md, USER.md).
    TurnInstructions,
    /// Bounded project context in the turn input (BOOTSTRAP.md, the MEMORY.md
    /// fallback, files without a route of their own).
    TurnInput,
    /// Never pasted: the turn instructions point the model at the memory tools.
    MemoryToolsNote,
    /// Never pasted: heartbeat turns get a note naming the file.
    HeartbeatPointer,
}

impl Route {
    /// Snake-case name for snapshots and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CodexProjectDoc => "codex_project_doc",
            Self::ThreadInstructions => "thread_developer_instructions",
            Self::TurnInstructions => "turn_developer_instructions",
            Self::TurnInput => "turn_input",
            Self::MemoryToolsNote => "memory_tools_note",
            Self::HeartbeatPointer => "heartbeat_pointer",
        }
    }

    /// The route of a file, by its lowercase basename.
    pub fn of(lower_basename: &str, memory_tools_note: bool) -> Self {
        match lower_basename {
            "agents.md" => Self::CodexProjectDoc,
            "tools.md" => Self::ThreadInstructions,
            "soul.md" | "identity.md" | "user.md" => Self::TurnInstructions,
            "heartbeat.md" => Self::HeartbeatPointer,
            "memory.md" if memory_tools_note => Self::MemoryToolsNote,
            _ => Self::TurnInput,
        }
    }
}

/// Order of files inside the Codex blocks and in the report: AGENTS first,
/// then the persona files, TOOLS, BOOTSTRAP, MEMORY, HEARTBEAT; other files
/// follow by path.
const CODEX_ORDER: &[&str] = &[
    "agents.md",
    "soul.md",
    "identity.md",
    "user.md",
    "tools.md",
    "bootstrap.md",
    "memory.md",
    "heartbeat.md",
];

/// Lowercase name of a file status, for snapshots.
pub fn status_name(status: FileStatus) -> &'static str {
    match status {
        FileStatus::Injected => "injected",
        FileStatus::Truncated => "truncated",
        FileStatus::Missing => "missing",
        FileStatus::Empty => "empty",
        FileStatus::Omitted => "omitted",
        FileStatus::Filtered => "filtered",
        FileStatus::OutOfScope => "out_of_scope",
    }
}

/// What happened to one workspace file on this turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRoute {
    /// Workspace-relative path.
    pub path: String,
    /// Where the file goes.
    pub route: Route,
    /// The renderer's status vocabulary: `Injected` for a pasted file and for
    /// one Codex reads itself or a note points at (then `injected_chars` is
    /// the raw size or 0); `Filtered` when this turn does not use it.
    pub status: FileStatus,
    /// Characters given.
    pub raw_chars: u32,
    /// Characters of it that we put into a Codex parameter.
    pub injected_chars: u32,
    /// Per-turn context the thread already holds unchanged: not pasted
    /// again this turn (`injected_chars` is what was pasted when it was).
    pub held_by_thread: bool,
}

/// The routed files of one turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Routed {
    /// Files for the thread developer instructions, in order.
    pub thread: Vec<Injected>,
    /// Files for the turn instructions, in order.
    pub turn_instructions: Vec<Injected>,
    /// Files for the turn input's project context, in order.
    pub turn_input: Vec<Injected>,
    /// MEMORY.md's path when the memory-tools note applies.
    pub memory_note: Option<String>,
    /// HEARTBEAT.md's path when the heartbeat pointer applies.
    pub heartbeat_file: Option<String>,
    /// One entry per requested file, in Codex order.
    pub files: Vec<FileRoute>,
}

struct Candidate {
    rel: String,
    route: Route,
    file: ContextFile,
    offered: bool,
}

fn lower_basename(rel: &str) -> String {
    rel.rsplit('/').next().unwrap_or(rel).to_lowercase()
}

fn codex_rank(rel: &str) -> usize {
    let base = lower_basename(rel);
    CODEX_ORDER
        .iter()
        .position(|n| *n == base)
        .unwrap_or(CODEX_ORDER.len())
}

/// Routes and budgets the workspace files of `input` (whose `base` must
/// already have passed the renderer's validation).
pub fn route_files(input: &CodexTurnInput, workspace: &str) -> Result<Routed, CodexError> {
    let kind = input.trigger.session_kind(input.base.session_kind);
    let lightweight = input.is_lightweight_cron();
    let memory_note = input.memory_tools_available && input.memory_workspace_is_active;
    // The heartbeat switches only gate HEARTBEAT.md, which has its own rule.
    let no_heartbeat = HeartbeatInfo::default();

    let mut candidates = Vec::with_capacity(input.base.context_files.len());
    for (i, file) in input.base.context_files.iter().enumerate() {
        let rel = relative_in_workspace(workspace, &file.path).map_err(|reason| {
            CodexError::invalid(format!("base.context_files[{i}].path"), reason)
        })?;
        let route = Route::of(&lower_basename(&rel), memory_note);
        let offered = !lightweight
            && match route {
                Route::HeartbeatPointer => kind == SessionKind::Heartbeat,
                _ => bootstrap_file_allowed(&rel, kind, &no_heartbeat),
            };
        candidates.push(Candidate {
            rel,
            route,
            file: file.clone(),
            offered,
        });
    }

    let pasted = |routes: &[Route]| -> Vec<ContextFile> {
        candidates
            .iter()
            .filter(|c| c.offered && !c.file.missing && routes.contains(&c.route))
            .map(|c| c.file.clone())
            .collect()
    };
    let limits = input.base.bootstrap_limits;
    // MEMORY.md and USER.md entries of other projects stay out here too.
    let project_keys: Vec<String> = input
        .base
        .active_project_keys
        .iter()
        .filter_map(|k| normalize_project_key(k))
        .collect();
    let thread = budget_bootstrap_files(
        workspace,
        &pasted(&[Route::ThreadInstructions]),
        limits,
        kind,
        &project_keys,
    )?;
    // Turn-scoped files get what the thread-level ones left. (A zero total
    // would mean "default", so an exhausted budget is passed as 1: too
    // little for any file, which the renderer reports as omitted.)
    let turn_limits = BootstrapLimits {
        max_chars_per_file: limits.max_chars_per_file,
        total_max_chars: u32::try_from(thread.remaining.max(1)).unwrap_or(u32::MAX),
    };
    let turn = budget_bootstrap_files(
        workspace,
        &pasted(&[Route::TurnInstructions, Route::TurnInput]),
        turn_limits,
        kind,
        &project_keys,
    )?;
    let budgeted: BTreeMap<&str, _> = thread
        .report
        .iter()
        .chain(&turn.report)
        .map(|r| (r.path.as_str(), r))
        .collect();

    let mut out = Routed {
        thread: thread.stable.clone(),
        ..Routed::default()
    };
    for injected in &turn.stable {
        let route = candidates
            .iter()
            .find(|c| c.rel == injected.path)
            .map_or(Route::TurnInput, |c| c.route);
        match route {
            Route::TurnInstructions => out.turn_instructions.push(injected.clone()),
            _ => out.turn_input.push(injected.clone()),
        }
    }
    // Codex order inside each block (the renderer budgets in its own order).
    for block in [&mut out.turn_instructions, &mut out.turn_input] {
        block.sort_by(|a, b| {
            codex_rank(&a.path)
                .cmp(&codex_rank(&b.path))
                .then_with(|| a.path.cmp(&b.path))
        });
    }

    for c in &candidates {
        let raw_chars = if c.file.missing {
            0
        } else {
            chars_u32(&c.file.content)
        };
        let empty = c.file.content.trim().is_empty();
        let (status, injected_chars) = if let Some(report) = budgeted.get(c.rel.as_str()) {
            (report.status, report.injected_chars)
        } else if c.file.missing {
            (FileStatus::Missing, 0)
        } else if !c.offered {
            (FileStatus::Filtered, 0)
        } else if empty {
            (FileStatus::Empty, 0)
        } else {
            match c.route {
                // Codex reads the file itself, whole (as OpenClaw reports it).
                Route::CodexProjectDoc => (FileStatus::Injected, raw_chars),
                Route::MemoryToolsNote => {
                    out.memory_note = Some(c.rel.clone());
                    (FileStatus::Injected, 0)
                }
                Route::HeartbeatPointer => {
                    out.heartbeat_file = Some(c.rel.clone());
                    (FileStatus::Injected, 0)
                }
                // Pasted routes are always in the budget report.
                Route::ThreadInstructions | Route::TurnInstructions | Route::TurnInput => {
                    (FileStatus::Omitted, 0)
                }
            }
        };
        out.files.push(FileRoute {
            path: c.rel.clone(),
            route: c.route,
            status,
            raw_chars,
            injected_chars,
            held_by_thread: false,
        });
    }
    out.files.sort_by(|a, b| {
        codex_rank(&a.path)
            .cmp(&codex_rank(&b.path))
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok(out)
}

#[cfg(test)]
mod tests;
