//! Workspace bootstrap files: order, session filters, budgets and the
//! per-file report (P-31, P-33 to P-35, R-4).

use std::{borrow::Cow, collections::BTreeMap};

use crate::{
    boundary::strip_markers,
    digest,
    error::RenderError,
    input::{BootstrapLimits, ChatType, ContextFile, HeartbeatInfo, SessionKind, TurnKind},
    mode::Layer,
    paths, project_scope, sanitize, text, truncate,
};

/// Default per-file budget (`agents.defaults.bootstrapMaxChars`).
pub const DEFAULT_MAX_CHARS_PER_FILE: usize = 20_000;
/// Default total budget (`agents.defaults.bootstrapTotalMaxChars`).
pub const DEFAULT_TOTAL_MAX_CHARS: usize = 60_000;
/// A file whose share of the total budget is smaller than this is left out
/// (with a marker) rather than cut to a useless stub.
const MIN_REMAINING_FOR_A_FILE: usize = 64;
/// What the stable files leave for HEARTBEAT.md when the total budget is
/// short: it takes part in the fair share as a file of this size. Its real
/// size is not used, because it changes between turns and the stable files'
/// shares must not.
const HEARTBEAT_RESERVE: usize = 4_000;

/// The workspace files with a place of their own, in the canonical injection
/// order (P-31). Budgets are spent in this order and files render in it
/// (names compared without case); other files follow, sorted by path.
pub const WORKSPACE_FILES: &[&str] = &[
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "USER.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
    "MEMORY.md",
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

    /// True when a stable file with this basename is named in the prompt:
    /// injected, cut, or left out with a marker.
    pub fn listed(&self, lower_basename: &str) -> bool {
        self.report.iter().any(|r| {
            r.layer == Layer::Stable
                && matches!(
                    r.status,
                    FileStatus::Injected | FileStatus::Truncated | FileStatus::Omitted
                )
                && is_named(&r.path, lower_basename)
        })
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

/// `s.to_lowercase() == name.to_ascii_lowercase()` for an ASCII `name`,
/// without allocating.
fn lowercase_eq(s: &str, name: &str) -> bool {
    if s.is_ascii() {
        return s.eq_ignore_ascii_case(name);
    }
    // Some non-ASCII characters lowercase to ASCII (the Kelvin sign to `k`).
    s.chars()
        .flat_map(char::to_lowercase)
        .eq(name.chars().map(|c| c.to_ascii_lowercase()))
}

fn rank(path: &str) -> usize {
    let base = paths::basename(path);
    WORKSPACE_FILES
        .iter()
        .position(|n| lowercase_eq(base, n))
        .unwrap_or(WORKSPACE_FILES.len())
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

/// Heartbeats are on with their prompt section, in a session they serve
/// (taken as served when the caller does not say; see [`heartbeat_files_on`]).
pub(crate) fn heartbeat_section_on(heartbeat: &HeartbeatInfo) -> bool {
    heartbeat.enabled
        && heartbeat.include_system_prompt_section
        && heartbeat.serves_session.unwrap_or(true)
}

/// Whether this turn gets HEARTBEAT.md (P-51): a heartbeat turn always
/// does; another turn only in a session heartbeats serve, with heartbeats
/// and their prompt section on. The one fact of a turn that decides which
/// per-turn files it gets.
pub(crate) fn heartbeat_files_on(
    session: SessionKind,
    turn: TurnKind,
    heartbeat: &HeartbeatInfo,
    chat_type: ChatType,
) -> bool {
    session == SessionKind::Heartbeat
        || turn.resolve(session) == TurnKind::Heartbeat
        || (heartbeat.enabled
            && heartbeat.include_system_prompt_section
            && heartbeat.serves(chat_type))
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

/// What a file asks of the budget, decided before any budget is spent.
enum Plan {
    /// Not for this session kind (or, for HEARTBEAT.md, this turn).
    Filtered,
    /// Blank (or, for HEARTBEAT.md, a template that asks for nothing).
    Empty,
    /// Missing: this marker stands in for it.
    Missing(String),
    /// Content needing this many characters (at most the per-file limit).
    Content(usize),
}

impl Plan {
    fn need(&self) -> usize {
        match self {
            Self::Filtered | Self::Empty => 0,
            Self::Missing(marker) => text::chars(marker),
            Self::Content(need) => *need,
        }
    }
}

fn plan(
    c: &Candidate,
    workspace: &str,
    max_per_file: usize,
    kind: SessionKind,
    heartbeat: &HeartbeatInfo,
) -> Plan {
    if !allowed(&c.path, kind, heartbeat) {
        return Plan::Filtered;
    }
    if c.missing {
        let full_path = if workspace == "/" {
            format!("/{}", c.path)
        } else {
            format!("{workspace}/{}", c.path)
        };
        return Plan::Missing(format!("[missing file: expected at {full_path}]"));
    }
    let content = c.content.trim_end();
    // A HEARTBEAT.md of headings and comments (the seeded template) asks
    // for nothing, and costs nothing.
    let empty =
        content.trim().is_empty() || (is_dynamic(&c.path) && sanitize::heartbeat_is_empty(content));
    if empty {
        return Plan::Empty;
    }
    Plan::Content(text::chars(content).min(max_per_file))
}

/// The marker of a file the total budget left out.
fn left_out_marker(path: &str, raw_chars: u32) -> String {
    format!(
        "[…{path} left out: its {raw_chars} characters did not fit the total budget for workspace files; read the file when you need it…]"
    )
}

/// Max-min fair shares of `total` for these needs: every need that fits an
/// equal share is met in full, and what the small ones leave is split
/// equally among the rest. Ties are broken by position, so the result is a
/// pure function of its inputs.
pub(crate) fn fair_shares(needs: &[usize], total: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..needs.len()).collect();
    order.sort_by_key(|&i| (needs[i], i));
    let mut left = total;
    let mut grants = vec![0; needs.len()];
    for (k, &i) in order.iter().enumerate() {
        let share = left / (needs.len() - k);
        grants[i] = needs[i].min(share);
        left -= grants[i];
    }
    grants
}

/// Grants for the participants' needs within `total`: fair shares, except
/// that a participant whose share would be below [`MIN_REMAINING_FOR_A_FILE`]
/// is left out (`None`), the last in canonical order first, and its marker's
/// length (`markers[i]`) is taken from the budget instead.
fn allot(needs: &[usize], markers: &[usize], total: usize) -> Vec<Option<usize>> {
    let mut dropped = vec![false; needs.len()];
    loop {
        let spent_on_markers: usize = (0..needs.len())
            .filter(|&i| dropped[i])
            .map(|i| markers[i])
            .sum();
        let active: Vec<usize> = (0..needs.len()).filter(|&i| !dropped[i]).collect();
        let active_needs: Vec<usize> = active.iter().map(|&i| needs[i]).collect();
        let shares = fair_shares(&active_needs, total.saturating_sub(spent_on_markers));
        let starved = active
            .iter()
            .zip(&shares)
            .filter(|&(&i, &g)| g < needs[i] && g < MIN_REMAINING_FOR_A_FILE)
            .map(|(&i, _)| i)
            .next_back();
        match starved {
            Some(i) => dropped[i] = true,
            None => {
                let mut out = vec![None; needs.len()];
                for (&i, &g) in active.iter().zip(&shares) {
                    out[i] = Some(g);
                }
                return out;
            }
        }
    }
}

/// Validates, orders, filters and budgets the stable files. The total budget
/// is shared fairly among them (see [`fair_shares`]), so no file takes what
/// a later one needs. HEARTBEAT.md, rendered below the boundary, takes part
/// with a fixed reserve when the request carries it: a per-turn file must
/// never change what is injected above the boundary.
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
    let stable = candidates(workspace, files, false)?;
    let plans: Vec<Plan> = stable
        .iter()
        .map(|c| plan(c, workspace, max_per_file, kind, &no_heartbeat))
        .collect();
    let mut needs: Vec<usize> = plans.iter().map(Plan::need).collect();
    let mut markers: Vec<usize> = stable
        .iter()
        .map(|c| text::chars(&left_out_marker(&c.path, c.raw_chars)))
        .collect();
    // HEARTBEAT.md may reach this session's turns: keep its reserve.
    let heartbeat_present = candidates(workspace, files, true)?
        .iter()
        .any(|c| !c.missing && !matches!(kind, SessionKind::Subagent | SessionKind::Cron));
    if heartbeat_present {
        needs.push(HEARTBEAT_RESERVE.min(max_per_file));
        markers.push(0);
    }
    let grants = allot(&needs, &markers, total);
    for ((c, p), grant) in stable.iter().zip(plans).zip(grants) {
        let (report, injected) = inject_one(c, p, grant, max_per_file, Layer::Stable, project_keys);
        if let Some(text) = injected {
            out.remaining = out.remaining.saturating_sub(text::chars(&text));
            out.stable.push(Injected {
                path: c.path.clone(),
                text,
            });
        }
        out.report.push(report);
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
        let p = plan(&c, workspace, stable.max_chars_per_file, kind, heartbeat);
        let need = p.need();
        let grant = match need.min(remaining) {
            g if g < need && g < MIN_REMAINING_FOR_A_FILE => None,
            g => Some(g),
        };
        let (report, injected) =
            inject_one(&c, p, grant, stable.max_chars_per_file, Layer::Dynamic, &[]);
        out.report.push(report);
        if let Some(text) = injected {
            remaining = remaining.saturating_sub(text::chars(&text));
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

/// Injects one planned file within its grant (`None`: the total budget left
/// it out, and a marker says so).
fn inject_one(
    c: &Candidate,
    plan: Plan,
    grant: Option<usize>,
    max_per_file: usize,
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
    let budget = match (&plan, grant) {
        (Plan::Filtered, _) => {
            return (
                report(FileStatus::Filtered, "", TruncationCause::None),
                None,
            );
        }
        (Plan::Empty, _) => return (report(FileStatus::Empty, "", TruncationCause::None), None),
        (_, None) => {
            let marker = left_out_marker(&c.path, raw_chars);
            return (
                report(FileStatus::Omitted, &marker, TruncationCause::TotalLimit),
                Some(marker),
            );
        }
        (Plan::Missing(marker), Some(grant)) => {
            let marker = text::take_chars(marker, grant).to_owned();
            return (
                report(FileStatus::Missing, &marker, TruncationCause::None),
                Some(marker),
            );
        }
        (Plan::Content(_), Some(grant)) => grant,
    };
    let content = c.content.trim_end();
    let (budgeted, cut, cause) = if text::chars(content) <= budget {
        (content.to_owned(), None, TruncationCause::None)
    } else {
        let cause = if budget >= max_per_file {
            TruncationCause::PerFileLimit
        } else {
            TruncationCause::TotalLimit
        };
        let structured = (digest::is_rule_file(&c.path))
            .then(|| digest::structured(content, budget, &c.path))
            .flatten();
        match structured {
            Some(s) => (s.text, None, cause),
            None => {
                let cut = truncate::head_tail(content, budget, &c.path);
                (cut.text.clone(), Some(cut), cause)
            }
        }
    };
    let truncated = cause != TruncationCause::None;
    // Project scopes are applied to what the budget kept.
    let budgeted_chars = text::chars_u32(&budgeted);
    let (injected, dropped_entries) = match project_scope::is_curated(&c.path) {
        true => match project_scope::Kept::of(content, project_keys) {
            kept if kept.dropped_entries == 0 => (budgeted, 0),
            kept => (scoped(content, cut.as_ref(), &kept), kept.dropped_entries),
        },
        false => (budgeted, 0),
    };
    let status = match (injected.trim().is_empty(), truncated) {
        (true, _) => FileStatus::OutOfScope,
        (false, true) => FileStatus::Truncated,
        (false, false) => FileStatus::Injected,
    };
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
            // A name is compared without its case too (WORKSPACE_FILES are upper case).
            let upper = lower.to_ascii_uppercase();
            assert_eq!(lowercase_eq(s, &upper), want, "{s:?} ~ {upper:?}");
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

    /// Defaults pinned (lesson L4): 20,000 per file, 60,000 in total; four
    /// files over the per-file limit share the total equally.
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
            causes,
            [(FileStatus::Truncated, TruncationCause::TotalLimit, 15_000); 4]
        );
        assert!(b.stable_budget_hit());
        // Two files fit the per-file limit within the total.
        let b = run(&files[..2], BootstrapLimits::default(), SessionKind::Main);
        assert_eq!(
            b.report[0].cause,
            TruncationCause::PerFileLimit,
            "{:?}",
            b.report
        );
        assert_eq!(b.report[1].injected_chars, 20_000);
    }

    #[test]
    fn total_limit_is_named_as_the_cause() {
        let files = [
            file("AGENTS.md", &"a".repeat(900)),
            file("SOUL.md", &"s".repeat(900)),
            file("USER.md", &"u".repeat(100)),
        ];
        let limits = BootstrapLimits {
            max_chars_per_file: 1_000,
            total_max_chars: 1_200,
        };
        let b = run(&files, limits, SessionKind::Main);
        // The small file is met in full; the two large ones split the rest.
        let got: Vec<_> = b
            .report
            .iter()
            .map(|r| (r.status, r.cause, r.injected_chars))
            .collect();
        assert_eq!(
            got,
            [
                (FileStatus::Truncated, TruncationCause::TotalLimit, 550),
                (FileStatus::Truncated, TruncationCause::TotalLimit, 550),
                (FileStatus::Injected, TruncationCause::None, 100),
            ]
        );
    }

    #[test]
    fn fair_shares_meet_small_needs_and_split_the_rest() {
        assert_eq!(
            fair_shares(&[100, 5_000, 5_000], 3_100),
            [100, 1_500, 1_500]
        );
        assert_eq!(fair_shares(&[10, 20], 1_000), [10, 20]);
        assert_eq!(fair_shares(&[], 1_000), Vec::<usize>::new());
        assert_eq!(fair_shares(&[7, 7, 7], 10), [3, 3, 4]);
    }

    /// A file whose share is too small for anything useful is left out with
    /// a marker that names it, and the others share what it would have had.
    #[test]
    fn a_starved_file_is_left_out_with_a_marker() {
        let files: Vec<ContextFile> = (0..6)
            .map(|i| file(&format!("notes/n{i}.md"), &"z".repeat(500)))
            .collect();
        let limits = BootstrapLimits {
            max_chars_per_file: 1_000,
            total_max_chars: 300,
        };
        let b = run(&files, limits, SessionKind::Main);
        let omitted: Vec<_> = b
            .report
            .iter()
            .filter(|r| r.status == FileStatus::Omitted)
            .map(|r| r.path.as_str())
            .collect();
        assert!(!omitted.is_empty());
        assert!(omitted.iter().all(|p| b.stable.iter().any(|f| {
            &f.path == p
                && f.text
                    .contains(&format!("[…{p} left out: its 500 characters"))
        })));
        assert!(
            b.report
                .iter()
                .filter(|r| r.status == FileStatus::Truncated)
                .all(|r| r.injected_chars >= 64)
        );
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
