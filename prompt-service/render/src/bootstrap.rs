//! Workspace bootstrap files: order, session filters, budgets and the
//! per-file report (P-31, P-33 to P-35, R-4).

use std::{borrow::Cow, collections::BTreeMap};

use crate::{
    boundary::strip_markers,
    error::RenderError,
    input::{BootstrapLimits, ContextFile, HeartbeatInfo, SessionKind},
    mode::Layer,
    paths, project_scope, sanitize, text, truncate,
};

/// Default per-file budget (`agents.defaults.bootstrapMaxChars`).
pub const DEFAULT_MAX_CHARS_PER_FILE: usize = 20_000;
/// Default total budget (`agents.defaults.bootstrapTotalMaxChars`).
pub const DEFAULT_TOTAL_MAX_CHARS: usize = 60_000;
/// When less than this is left of the total budget, no further file is added.
const MIN_REMAINING_FOR_A_FILE: usize = 64;

/// Canonical injection order (P-31). Budgets are spent in this order and
/// files render in it; other files follow, sorted by path.
const ORDER: &[&str] = &[
    "agents.md",
    "soul.md",
    "tools.md",
    "identity.md",
    "user.md",
    "heartbeat.md",
    "bootstrap.md",
    "memory.md",
];

/// Files a subagent session gets (P-35).
const SUBAGENT_FILES: &[&str] = &["agents.md", "tools.md"];
/// Files a cron run gets.
const CRON_FILES: &[&str] = &["agents.md", "tools.md", "soul.md", "identity.md", "user.md"];

/// Outcome for one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStatus {
    /// Injected whole.
    Injected,
    /// Injected with a head/tail cut.
    Truncated,
    /// Missing; a marker was injected.
    Missing,
    /// Empty; skipped.
    Empty,
    /// The total budget ran out.
    Omitted,
    /// Not for this session kind.
    Filtered,
    /// Every entry belongs to projects that are not active.
    OutOfScope,
}

/// Which budget cut a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncationCause {
    /// Not cut.
    None,
    /// The per-file limit.
    PerFileLimit,
    /// What was left of the total.
    TotalLimit,
}

/// Diagnostics for one file (`/context list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// Workspace-relative path.
    pub path: String,
    /// What happened.
    pub status: FileStatus,
    /// Characters given.
    pub raw_chars: u32,
    /// Characters injected, markers included.
    pub injected_chars: u32,
    /// Which budget cut it.
    pub cause: TruncationCause,
    /// Side of the boundary.
    pub layer: Layer,
    /// Characters of the legacy embedded heartbeat block removed from it.
    pub legacy_heartbeat_chars: u32,
    /// Entries left out because they belong to projects that are not active.
    pub out_of_scope_entries: u32,
    /// Characters those entries took in the budgeted text.
    pub out_of_scope_chars: u32,
}

/// A file's text as it goes into the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injected {
    /// Workspace-relative path (the section heading).
    pub path: String,
    /// Injected text.
    pub text: String,
}

/// The stable (above-boundary) files and their report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bootstrap {
    /// Files above the boundary, in order.
    pub stable: Vec<Injected>,
    /// One entry per stable file, in canonical order.
    pub report: Vec<FileReport>,
    /// Effective per-file limit.
    pub max_chars_per_file: usize,
    /// Effective total limit.
    pub total_max_chars: usize,
    /// Total budget left after the stable files, for the per-turn files.
    pub remaining: usize,
}

/// The per-turn (below-boundary) files: HEARTBEAT.md.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DynamicFiles {
    /// Injected files, in order.
    pub injected: Vec<Injected>,
    /// One entry per dynamic file, in canonical order.
    pub report: Vec<FileReport>,
}

/// Reports every file as not for this prompt (`none` mode carries none).
fn leave_out(report: &mut [FileReport]) {
    for r in report {
        if matches!(
            r.status,
            FileStatus::Injected | FileStatus::Truncated | FileStatus::Missing
        ) {
            r.status = FileStatus::Filtered;
            r.injected_chars = 0;
            r.cause = TruncationCause::None;
            r.out_of_scope_entries = 0;
            r.out_of_scope_chars = 0;
        }
    }
}

impl DynamicFiles {
    /// Drops every file: the prompt carries no workspace file.
    pub fn leave_out_all(&mut self) {
        self.injected.clear();
        leave_out(&mut self.report);
    }
}

impl Bootstrap {
    /// Drops every file: the prompt carries no workspace file.
    pub fn leave_out_all(&mut self) {
        self.stable.clear();
        leave_out(&mut self.report);
    }

    /// True when a stable file was cut or left out for budget reasons. Only
    /// stable files count, so a per-turn file can never change the notice.
    pub fn stable_budget_hit(&self) -> bool {
        self.report.iter().any(|r| {
            r.layer == Layer::Stable
                && matches!(r.status, FileStatus::Truncated | FileStatus::Omitted)
        })
    }

    /// True when BOOTSTRAP.md was injected (the first-run ritual is pending).
    pub fn bootstrap_pending(&self) -> bool {
        self.has_stable("bootstrap.md")
    }

    /// True when a stable file with this basename has real content in the
    /// prompt (a missing-file marker does not count).
    pub fn has_stable(&self, lower_basename: &str) -> bool {
        self.report.iter().any(|r| {
            r.layer == Layer::Stable
                && matches!(r.status, FileStatus::Injected | FileStatus::Truncated)
                && is_named(&r.path, lower_basename)
        })
    }
}

fn is_named(path: &str, lower_basename: &str) -> bool {
    paths::basename(path).eq_ignore_ascii_case(lower_basename)
}

/// `s.to_lowercase() == lower` for an ASCII `lower`, without allocating.
fn lowercase_eq(s: &str, lower: &str) -> bool {
    if s.is_ascii() {
        return s.eq_ignore_ascii_case(lower);
    }
    // Some non-ASCII characters lowercase to ASCII (the Kelvin sign to `k`).
    s.chars().flat_map(char::to_lowercase).eq(lower.chars())
}

fn rank(path: &str) -> usize {
    let base = paths::basename(path);
    ORDER
        .iter()
        .position(|n| lowercase_eq(base, n))
        .unwrap_or(ORDER.len())
}

/// True for files rendered below the boundary (they may change every turn).
pub fn is_dynamic(path: &str) -> bool {
    is_named(path, "heartbeat.md")
}

/// Whether a file is offered to this kind of run (P-33, P-35).
pub fn allowed(path: &str, kind: SessionKind, heartbeat: &HeartbeatInfo) -> bool {
    let base = paths::basename(path);
    let listed = |names: &[&str]| names.iter().any(|n| lowercase_eq(base, n));
    let kind_allows = match kind {
        SessionKind::Subagent => listed(SUBAGENT_FILES),
        SessionKind::Cron => listed(CRON_FILES),
        SessionKind::Main | SessionKind::Heartbeat => true,
    };
    // HEARTBEAT.md is left out of normal runs when heartbeats are off or the
    // prompt section is disabled; heartbeat runs always see it.
    let heartbeat_allows = !lowercase_eq(base, "heartbeat.md")
        || kind == SessionKind::Heartbeat
        || heartbeat_section_on(heartbeat);
    kind_allows && heartbeat_allows
}

/// Heartbeats are on with their prompt section: the one fact of a turn that
/// decides which per-turn files a normal run gets (see [`allowed`]).
pub(crate) fn heartbeat_section_on(heartbeat: &HeartbeatInfo) -> bool {
    heartbeat.enabled && heartbeat.include_system_prompt_section
}

struct Candidate<'a> {
    path: String,
    content: Cow<'a, str>,
    missing: bool,
    /// Characters of the raw content as given.
    raw_chars: u32,
    /// Characters of the legacy heartbeat block removed.
    legacy_heartbeat_chars: u32,
}

/// A file's content as injected: faithful, except that CRLF becomes LF, an
/// embedded boundary marker is removed (so no file can move the cache
/// boundary), the legacy embedded heartbeat block is removed and runs of
/// blank lines are shortened to one. Borrowed when nothing changes.
fn file_content(content: &str) -> (Cow<'_, str>, u32) {
    let unified = if content.contains("\r\n") {
        Cow::Owned(strip_markers(&content.replace("\r\n", "\n")).into_owned())
    } else {
        strip_markers(content)
    };
    let (stripped, legacy) = match sanitize::strip_legacy_heartbeat(&unified) {
        (Cow::Borrowed(_), n) => (unified, n),
        (Cow::Owned(text), n) => (Cow::Owned(text), n),
    };
    let collapsed = match sanitize::collapse_blank_runs(&stripped) {
        Cow::Borrowed(_) => stripped,
        Cow::Owned(text) => Cow::Owned(text),
    };
    (collapsed, legacy)
}

/// Validates the request's files of one layer (paths inside the workspace,
/// no duplicates) and returns them in canonical order. Field indices refer to
/// the whole request.
fn candidates<'a>(
    workspace: &str,
    files: &'a [ContextFile],
    dynamic: bool,
) -> Result<Vec<Candidate<'a>>, RenderError> {
    let mut by_path: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, file) in files.iter().enumerate() {
        if is_dynamic(&file.path) != dynamic {
            continue;
        }
        let field = || format!("context_files[{i}].path");
        let path = paths::relative_in_workspace(workspace, &file.path)
            .map_err(|reason| RenderError::invalid(field(), reason))?;
        if let Some(first) = by_path.insert(path.clone(), i) {
            return Err(RenderError::invalid(
                field(),
                format!("duplicate context file {path:?} (same as context_files[{first}])"),
            ));
        }
        let (content, legacy_heartbeat_chars) = file_content(&file.content);
        out.push(Candidate {
            path,
            content,
            missing: file.missing,
            raw_chars: text::chars_u32(&file.content),
            legacy_heartbeat_chars,
        });
    }
    out.sort_by(|a, b| {
        rank(&a.path)
            .cmp(&rank(&b.path))
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok(out)
}

/// Validates, orders, filters and budgets the stable files. They spend the
/// budget first: a per-turn file below the boundary must never change what
/// is injected above it.
pub fn prepare_stable(
    workspace: &str,
    files: &[ContextFile],
    limits: BootstrapLimits,
    kind: SessionKind,
    project_keys: &[String],
) -> Result<Bootstrap, RenderError> {
    let max_per_file = match limits.max_chars_per_file {
        0 => DEFAULT_MAX_CHARS_PER_FILE,
        n => n as usize,
    };
    let total = match limits.total_max_chars {
        0 => max_per_file.max(DEFAULT_TOTAL_MAX_CHARS),
        n => n as usize,
    };
    let mut out = Bootstrap {
        max_chars_per_file: max_per_file,
        total_max_chars: total,
        remaining: total,
        ..Bootstrap::default()
    };
    // The heartbeat rule only concerns HEARTBEAT.md, a dynamic file.
    let no_heartbeat = HeartbeatInfo::default();
    for c in candidates(workspace, files, false)? {
        let (report, injected) = inject_one(
            &c,
            workspace,
            max_per_file,
            &mut out.remaining,
            kind,
            &no_heartbeat,
            Layer::Stable,
            project_keys,
        );
        out.report.push(report);
        if let Some(text) = injected {
            out.stable.push(Injected { path: c.path, text });
        }
    }
    Ok(out)
}

/// Validates and budgets the per-turn files from what the stable files left.
pub fn prepare_dynamic(
    stable: &Bootstrap,
    workspace: &str,
    files: &[ContextFile],
    kind: SessionKind,
    heartbeat: &HeartbeatInfo,
) -> Result<DynamicFiles, RenderError> {
    let mut remaining = stable.remaining;
    let mut out = DynamicFiles::default();
    for c in candidates(workspace, files, true)? {
        let (report, injected) = inject_one(
            &c,
            workspace,
            stable.max_chars_per_file,
            &mut remaining,
            kind,
            heartbeat,
            Layer::Dynamic,
            &[],
        );
        out.report.push(report);
        if let Some(text) = injected {
            out.injected.push(Injected { path: c.path, text });
        }
    }
    Ok(out)
}

/// Stable and dynamic reports merged in canonical order.
pub fn merged_report(stable: &Bootstrap, dynamic: &DynamicFiles) -> Vec<FileReport> {
    let mut all: Vec<FileReport> = stable
        .report
        .iter()
        .chain(&dynamic.report)
        .cloned()
        .collect();
    all.sort_by(|a, b| {
        rank(&a.path)
            .cmp(&rank(&b.path))
            .then_with(|| a.path.cmp(&b.path))
    });
    all
}

#[expect(
    clippy::too_many_arguments,
    reason = "one file's facts and the running budget, passed as they are"
)]
fn inject_one(
    c: &Candidate,
    workspace: &str,
    max_per_file: usize,
    remaining: &mut usize,
    kind: SessionKind,
    heartbeat: &HeartbeatInfo,
    layer: Layer,
    project_keys: &[String],
) -> (FileReport, Option<String>) {
    let raw_chars = if c.missing { 0 } else { c.raw_chars };
    let report = |status, injected: &str, cause| FileReport {
        path: c.path.clone(),
        status,
        raw_chars,
        injected_chars: text::chars_u32(injected),
        cause,
        layer,
        legacy_heartbeat_chars: c.legacy_heartbeat_chars,
        out_of_scope_entries: 0,
        out_of_scope_chars: 0,
    };
    if !allowed(&c.path, kind, heartbeat) {
        return (
            report(FileStatus::Filtered, "", TruncationCause::None),
            None,
        );
    }
    if *remaining < MIN_REMAINING_FOR_A_FILE {
        return (
            report(FileStatus::Omitted, "", TruncationCause::TotalLimit),
            None,
        );
    }
    if c.missing {
        let full_path = if workspace == "/" {
            format!("/{}", c.path)
        } else {
            format!("{workspace}/{}", c.path)
        };
        let marker = format!("[missing file: expected at {full_path}]");
        let marker = text::take_chars(&marker, *remaining).to_owned();
        *remaining -= text::chars(&marker);
        return (
            report(FileStatus::Missing, &marker, TruncationCause::None),
            Some(marker),
        );
    }
    let content = c.content.trim_end();
    // A HEARTBEAT.md of headings and comments (the seeded template) asks
    // for nothing, and costs nothing.
    let empty =
        content.trim().is_empty() || (is_dynamic(&c.path) && sanitize::heartbeat_is_empty(content));
    if empty {
        return (report(FileStatus::Empty, "", TruncationCause::None), None);
    }
    let budget = max_per_file.min(*remaining);
    let (budgeted, cut, cause) = if text::chars(content) <= budget {
        (content.to_owned(), None, TruncationCause::None)
    } else {
        let cause = if max_per_file <= *remaining {
            TruncationCause::PerFileLimit
        } else {
            TruncationCause::TotalLimit
        };
        let cut = truncate::head_tail(content, budget, &c.path);
        (cut.text.clone(), Some(cut), cause)
    };
    // Project scopes are applied to what the budget kept.
    let budgeted_chars = text::chars_u32(&budgeted);
    let (injected, dropped_entries) = match project_scope::is_curated(&c.path) {
        true => match project_scope::Kept::of(content, project_keys) {
            kept if kept.dropped_entries == 0 => (budgeted, 0),
            kept => (scoped(content, cut.as_ref(), &kept), kept.dropped_entries),
        },
        false => (budgeted, 0),
    };
    let status = match (injected.trim().is_empty(), cut.is_some()) {
        (true, _) => FileStatus::OutOfScope,
        (false, true) => FileStatus::Truncated,
        (false, false) => FileStatus::Injected,
    };
    *remaining -= text::chars(&injected);
    let mut r = report(status, &injected, cause);
    r.out_of_scope_entries = dropped_entries;
    r.out_of_scope_chars = budgeted_chars.saturating_sub(r.injected_chars);
    let injected = (status != FileStatus::OutOfScope).then_some(injected);
    (r, injected)
}

/// The budgeted text of a curated file with the entries of inactive
/// projects removed. Entries are decided on the whole content, so a cut
/// through an entry keeps or drops both of its parts.
fn scoped(content: &str, cut: Option<&truncate::Cut>, kept: &project_scope::Kept) -> String {
    let Some(cut) = cut else {
        return kept.apply(content, 0..content.len());
    };
    let head_end = text::take_chars(content, cut.head).len();
    let tail_len = text::last_chars(content, cut.tail).len();
    let head = kept.apply(content, 0..head_end);
    if cut.text.len() == head_end {
        // Clamped: no marker, no tail.
        return head;
    }
    // The cut is `head \n marker \n tail`.
    let marker = &cut.text[head_end + 1..cut.text.len() - tail_len - 1];
    let tail = kept.apply(content, content.len() - tail_len..content.len());
    [head.as_str(), marker, tail.as_str()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_eq_matches_to_lowercase() {
        for (s, lower, want) in [
            ("AGENTS.md", "agents.md", true),
            ("agents.md", "agents.md", true),
            ("AGENTS.mdx", "agents.md", false),
            ("\u{212A}EYS.md", "keys.md", true),
            ("\u{130}DENTITY.md", "identity.md", false),
            ("", "", true),
        ] {
            assert_eq!(lowercase_eq(s, lower), want, "{s:?}");
            assert_eq!(s.to_lowercase() == lower, want, "{s:?}");
        }
    }

    const WS: &str = "/ws";

    fn file(path: &str, content: &str) -> ContextFile {
        ContextFile {
            path: path.into(),
            content: content.into(),
            missing: false,
        }
    }

    fn run(files: &[ContextFile], limits: BootstrapLimits, kind: SessionKind) -> Bootstrap {
        prepare_stable(WS, files, limits, kind, &[]).unwrap_or_default()
    }

    #[test]
    fn canonical_order_regardless_of_request_order() {
        let files = [
            file("MEMORY.md", "m"),
            file("notes/extra.md", "e"),
            file("USER.md", "u"),
            file("AGENTS.md", "a"),
            file("SOUL.md", "s"),
        ];
        let b = run(&files, BootstrapLimits::default(), SessionKind::Main);
        let order: Vec<_> = b.stable.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            order,
            [
                "AGENTS.md",
                "SOUL.md",
                "USER.md",
                "MEMORY.md",
                "notes/extra.md"
            ]
        );
    }

    /// P-35: subagents get only AGENTS.md and TOOLS.md.
    #[test]
    fn subagent_filter() {
        let files = [
            file("AGENTS.md", "a"),
            file("TOOLS.md", "t"),
            file("SOUL.md", "s"),
            file("MEMORY.md", "m"),
        ];
        let b = run(&files, BootstrapLimits::default(), SessionKind::Subagent);
        let order: Vec<_> = b.stable.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(order, ["AGENTS.md", "TOOLS.md"]);
        let filtered = b
            .report
            .iter()
            .filter(|r| r.status == FileStatus::Filtered)
            .count();
        assert_eq!(filtered, 2);
    }

    /// P-33: HEARTBEAT.md is omitted from normal runs when heartbeat is
    /// off or its prompt section is disabled; heartbeat runs always see it.
    #[test]
    fn heartbeat_rule() {
        let files = [file("HEARTBEAT.md", "check mail")];
        let off = HeartbeatInfo::default();
        let hidden = HeartbeatInfo {
            enabled: true,
            include_system_prompt_section: false,
            ..HeartbeatInfo::default()
        };
        let on = HeartbeatInfo {
            enabled: true,
            ..HeartbeatInfo::default()
        };
        let lim = BootstrapLimits::default();
        for (hb, kind, expected) in [
            (&off, SessionKind::Main, 0),
            (&hidden, SessionKind::Main, 0),
            (&on, SessionKind::Main, 1),
            (&off, SessionKind::Heartbeat, 1),
        ] {
            let b = prepare_stable(WS, &files, lim, kind, &[]).unwrap_or_default();
            assert!(
                b.stable.is_empty() && b.report.is_empty(),
                "HEARTBEAT.md is never stable"
            );
            let d = prepare_dynamic(&b, WS, &files, kind, hb).unwrap_or_default();
            assert_eq!(d.injected.len(), expected, "{hb:?} {kind:?}");
        }
    }

    #[test]
    fn empty_files_are_skipped_and_missing_get_a_marker() {
        let files = [
            file("AGENTS.md", "  \n\n"),
            ContextFile {
                path: "SOUL.md".into(),
                content: String::new(),
                missing: true,
            },
        ];
        let b = run(&files, BootstrapLimits::default(), SessionKind::Main);
        assert_eq!(b.stable.len(), 1);
        assert_eq!(b.stable[0].text, "[missing file: expected at /ws/SOUL.md]");
        assert_eq!(b.report[0].status, FileStatus::Empty);
        assert_eq!(b.report[1].status, FileStatus::Missing);
    }

    /// Defaults pinned (lesson L4): 20,000 per file, 60,000 in total.
    #[test]
    fn default_budgets() {
        let big = "x".repeat(25_000);
        let files = [
            file("AGENTS.md", &big),
            file("SOUL.md", &big),
            file("TOOLS.md", &big),
            file("USER.md", &big),
        ];
        let b = run(&files, BootstrapLimits::default(), SessionKind::Main);
        assert_eq!((b.max_chars_per_file, b.total_max_chars), (20_000, 60_000));
        let causes: Vec<_> = b
            .report
            .iter()
            .map(|r| (r.status, r.cause, r.injected_chars))
            .collect();
        assert_eq!(
            causes[0],
            (FileStatus::Truncated, TruncationCause::PerFileLimit, 20_000)
        );
        assert_eq!(
            causes[1],
            (FileStatus::Truncated, TruncationCause::PerFileLimit, 20_000)
        );
        assert_eq!(
            causes[2],
            (FileStatus::Truncated, TruncationCause::PerFileLimit, 20_000)
        );
        assert_eq!(
            causes[3],
            (FileStatus::Omitted, TruncationCause::TotalLimit, 0)
        );
        assert!(b.stable_budget_hit());
    }

    #[test]
    fn total_limit_is_named_as_the_cause() {
        let files = [
            file("AGENTS.md", &"a".repeat(900)),
            file("SOUL.md", &"s".repeat(900)),
        ];
        let limits = BootstrapLimits {
            max_chars_per_file: 1_000,
            total_max_chars: 1_200,
        };
        let b = run(&files, limits, SessionKind::Main);
        assert_eq!(b.report[0].status, FileStatus::Injected);
        assert_eq!(b.report[1].status, FileStatus::Truncated);
        assert_eq!(b.report[1].cause, TruncationCause::TotalLimit);
        assert_eq!(b.report[1].injected_chars, 300);
    }

    #[test]
    fn paths_outside_the_workspace_and_duplicates_are_refused() {
        let lim = BootstrapLimits::default();
        let err = prepare_stable(
            WS,
            &[file("../etc/passwd", "x")],
            lim,
            SessionKind::Main,
            &[],
        )
        .err();
        assert_eq!(
            err.as_ref().map(RenderError::field),
            Some("context_files[0].path")
        );
        let dup = [file("AGENTS.md", "a"), file("/ws/AGENTS.md", "b")];
        let err = prepare_stable(WS, &dup, lim, SessionKind::Main, &[]).err();
        assert_eq!(
            err.as_ref().map(RenderError::field),
            Some("context_files[1].path")
        );
        let hb = HeartbeatInfo::default();
        let base = Bootstrap::default();
        let err = prepare_dynamic(
            &base,
            WS,
            &[file("../HEARTBEAT.md", "x")],
            SessionKind::Main,
            &hb,
        )
        .err();
        assert_eq!(
            err.as_ref().map(RenderError::field),
            Some("context_files[0].path")
        );
    }
}
