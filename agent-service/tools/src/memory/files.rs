//! Finding and reading the memory files, always through the workspace's confinement.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::PathBuf;

use openclaw_workspace::{Confined, Error as WorkspaceError};
use serde_json::json;

use crate::error::ToolError;
use crate::tool::ToolOutcome;

/// Memory files searched at most (the rest are named in a note).
const MAX_FILES: usize = 500;
/// Directory levels below `memory/` that are searched.
const MAX_DEPTH: usize = 8;
/// Bytes of one memory file that are searched or excerpted.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One memory file's text.
pub(crate) struct MemoryText {
    /// Path relative to the workspace root, `/`-separated.
    pub path: String,
    /// The text (invalid UTF-8 replaced).
    pub text: String,
}

/// The memory files of a workspace, with notes about files that were left out.
pub(crate) struct Found {
    /// `MEMORY.md` first, then `memory/**.md` in path order.
    pub files: Vec<MemoryText>,
    /// Why some files were not searched, one sentence each.
    pub notes: Vec<String>,
}

/// Whether `path` (relative, `/`-separated) names a memory file: `MEMORY.md` / `memory.md` in
/// the root, or a `.md` file under `memory/`. Paths with `.`/`..` components never do.
pub fn is_memory_path(path: &str) -> bool {
    let path = path.strip_prefix("./").unwrap_or(path);
    if path.starts_with('/') {
        return false;
    }
    let parts: Vec<&str> = path.split('/').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return false;
    }
    match parts.as_slice() {
        [name] => name.eq_ignore_ascii_case("memory.md"),
        ["memory", .., name] => has_md_extension(name),
        _ => false,
    }
}

fn has_md_extension(name: &str) -> bool {
    name.len() > 3 && name.to_ascii_lowercase().ends_with(".md")
}

/// Finds and reads the memory files (blocking).
pub(crate) fn discover(workspace: &Confined) -> Result<Found, ToolError> {
    let mut candidates = Vec::new();
    let mut notes = Vec::new();
    for name in ["MEMORY.md", "memory.md"] {
        candidates.push(name.to_owned());
    }
    match workspace.resolve_read("memory") {
        Ok(real) if real.is_dir() => walk(&real, "memory", 0, &mut candidates, &mut notes),
        Ok(_) | Err(WorkspaceError::NotFound { .. }) => {}
        Err(error) => notes.push(format!("memory/ was not searched: {error}")),
    }
    if candidates.len() > MAX_FILES + 2 {
        notes.push(format!(
            "only the first {MAX_FILES} memory files were searched; {} more were left out",
            candidates.len() - MAX_FILES - 2
        ));
        candidates.truncate(MAX_FILES + 2);
    }
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut files = Vec::new();
    for path in candidates {
        match read_capped(workspace, &path) {
            Ok((text, real, cut)) => {
                // MEMORY.md and memory.md are one file on a case-insensitive filesystem.
                if !seen.insert(real) {
                    continue;
                }
                if text.contains('\0') {
                    notes.push(format!(
                        "{path} looks binary (it contains NUL bytes); skipped"
                    ));
                    continue;
                }
                if cut {
                    notes.push(format!(
                        "only the first {MAX_FILE_BYTES} bytes of {path} were searched"
                    ));
                }
                files.push(MemoryText { path, text });
            }
            Err(WorkspaceError::NotFound { .. } | WorkspaceError::NotAFile { .. }) => {}
            Err(error) => notes.push(format!("{path} was not searched: {error}")),
        }
    }
    Ok(Found { files, notes })
}

/// Collects `*.md` below `dir` (whose workspace-relative path is `rel`) in name order.
/// Symbolic links to directories are not followed (no loops); linked files are, through the
/// confinement check when they are read.
fn walk(
    dir: &std::path::Path,
    rel: &str,
    depth: usize,
    out: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            notes.push(format!("{rel}/ could not be listed: {error}"));
            return;
        }
    };
    let mut entries: Vec<(String, std::fs::FileType)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            Some((name, e.file_type().ok()?))
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in entries {
        let path = format!("{rel}/{name}");
        if kind.is_dir() {
            if depth + 1 < MAX_DEPTH {
                walk(&dir.join(&name), &path, depth + 1, out, notes);
            }
        } else if has_md_extension(&name) {
            out.push(path);
        }
    }
}

/// At most [`MAX_FILE_BYTES`] of a workspace file: its text, real path, and whether it was cut.
fn read_capped(
    workspace: &Confined,
    path: &str,
) -> Result<(String, PathBuf, bool), WorkspaceError> {
    let (file, real) = workspace.open_read(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| WorkspaceError::Io {
            path: real.clone(),
            source,
        })?;
    let cut = bytes.len() as u64 > MAX_FILE_BYTES;
    if cut {
        bytes.truncate(usize::try_from(MAX_FILE_BYTES).unwrap_or(usize::MAX));
    }
    Ok((String::from_utf8_lossy(&bytes).into_owned(), real, cut))
}

/// A checked `memory_get` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExcerptRequest {
    /// The memory file, relative to the workspace root.
    pub path: String,
    /// First line (1-based).
    pub from: u64,
    /// Most lines; `None` = as many as fit.
    pub lines: Option<u64>,
}

/// Checks a `memory_get` request. A `#L<a>` or `#L<a>-L<b>` suffix on the path (the citation
/// form `memory_search` prints) gives the range unless `from` / `lines` are passed.
pub(crate) fn excerpt_request(
    path: &str,
    from: Option<u64>,
    lines: Option<u64>,
) -> Result<ExcerptRequest, ToolError> {
    let invalid = |detail: String| ToolError::InvalidArguments {
        tool: "memory_get",
        detail,
    };
    let path = path.trim();
    let (file, range) = match path.rsplit_once("#L") {
        Some((file, range)) => (
            file,
            parse_range(range).map(Some).ok_or_else(|| {
                invalid(format!(
                    "path: {path:?} has a line reference that is not #L<from> or #L<from>-L<to>"
                ))
            })?,
        ),
        None => (path, None),
    };
    let file = file.strip_prefix("./").unwrap_or(file);
    if !is_memory_path(file) {
        return Err(invalid(format!(
            "path: {file:?} is not a memory file; memory_get reads MEMORY.md and memory/*.md \
             (relative to the workspace root) — use read for other files"
        )));
    }
    if from == Some(0) || lines == Some(0) {
        return Err(invalid("from and lines start at 1".to_owned()));
    }
    let (range_from, range_lines) = match range {
        Some((a, b)) => (Some(a), b.map(|b| b - a + 1)),
        None => (None, None),
    };
    Ok(ExcerptRequest {
        path: file.to_owned(),
        from: from.or(range_from).unwrap_or(1),
        lines: lines.or(if from.is_some() { None } else { range_lines }),
    })
}

/// `12` or `12-L20` / `12-20` → (12, Some(20)); `None` when malformed or reversed.
fn parse_range(text: &str) -> Option<(u64, Option<u64>)> {
    let (a, b) = match text.split_once('-') {
        Some((a, b)) => (a, Some(b.strip_prefix('L').unwrap_or(b))),
        None => (text, None),
    };
    let a: u64 = a.parse().ok().filter(|a| *a >= 1)?;
    match b {
        None => Some((a, None)),
        Some(b) => {
            let b: u64 = b.parse().ok().filter(|b| *b >= a)?;
            Some((a, Some(b)))
        }
    }
}

/// Lines `req.from..` of a memory file, at most `req.lines` of them and at most `budget`
/// characters (blocking). The result says which lines it shows and where to continue.
pub(crate) fn excerpt(
    workspace: &Confined,
    req: &ExcerptRequest,
    budget: usize,
) -> Result<ToolOutcome, ToolError> {
    let path = req.path.as_str();
    let (text, _real, cut) = read_capped(workspace, path)?;
    if text.contains('\0') {
        return Err(ToolError::failed(format!(
            "{path} looks like a binary file (it contains NUL bytes)"
        )));
    }
    let all: Vec<&str> = text.split_inclusive('\n').collect();
    let total = all.len() as u64;
    if total == 0 {
        return Ok(ToolOutcome::ok_with(
            format!("[{path} is empty]"),
            json!({ "path": path, "total_lines": 0 }),
        ));
    }
    if req.from > total {
        return Err(ToolError::failed(format!(
            "from {} is past the end of {path}, which has {total} lines",
            req.from
        )));
    }
    let first = req.from;
    let wanted_last = req.lines.map_or(total, |n| (first + n - 1).min(total));
    let mut shown = String::new();
    let (mut used, mut last) = (0_usize, first - 1);
    let mut long_line = false;
    for number in first..=wanted_last {
        let Some(line) = usize::try_from(number - 1).ok().and_then(|i| all.get(i)) else {
            break;
        };
        let chars = line.chars().count();
        if used + chars > budget {
            if last < first {
                shown.extend(line.chars().take(budget));
                last = number;
                long_line = true;
            }
            break;
        }
        shown.push_str(line);
        used += chars;
        last = number;
    }
    let totals = if cut {
        format!("more than {total}")
    } else {
        total.to_string()
    };
    let note = if long_line {
        Some(format!(
            "[Line {first} alone is longer than the {budget}-character budget; only its start is shown. Continue with from={}.]",
            last + 1
        ))
    } else if last < wanted_last {
        Some(format!(
            "[Output cut at the {budget}-character budget: showing lines {first}-{last} of {totals}. Continue with from={}.]",
            last + 1
        ))
    } else if last < total || cut {
        Some(format!(
            "[Showing lines {first}-{last} of {totals}. Continue with from={}.]",
            last + 1
        ))
    } else {
        None
    };
    let truncated = note.is_some();
    if let Some(note) = note {
        if !shown.ends_with('\n') {
            shown.push('\n');
        }
        shown.push_str(&note);
    }
    Ok(ToolOutcome::ok_with(
        shown,
        json!({
            "path": path,
            "from": first,
            "to": last,
            "total_lines": (!cut).then_some(total),
            "truncated": truncated,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_paths() {
        for ok in [
            "MEMORY.md",
            "memory.md",
            "./MEMORY.md",
            "memory/2026-03-03.md",
            "memory/work/a.MD",
        ] {
            assert!(is_memory_path(ok), "{ok}");
        }
        for bad in [
            "AGENTS.md",
            "memory/../AGENTS.md",
            "memory/notes.txt",
            "/etc/MEMORY.md",
            "sub/MEMORY.md",
            "memory/.md",
            "memory//a.md",
            "",
        ] {
            assert!(!is_memory_path(bad), "{bad}");
        }
    }

    #[test]
    fn citation_suffixes_give_the_range() {
        let req = |p: &str, f, l| excerpt_request(p, f, l).map_err(|e| e.to_string());
        assert_eq!(
            req("MEMORY.md#L3-L5", None, None),
            Ok(ExcerptRequest {
                path: "MEMORY.md".into(),
                from: 3,
                lines: Some(3)
            })
        );
        assert_eq!(
            req("memory/a.md#L7", None, None),
            Ok(ExcerptRequest {
                path: "memory/a.md".into(),
                from: 7,
                lines: None
            })
        );
        assert_eq!(
            req("MEMORY.md#L3-L5", Some(1), None),
            Ok(ExcerptRequest {
                path: "MEMORY.md".into(),
                from: 1,
                lines: None
            })
        );
        assert!(req("MEMORY.md#L5-L3", None, None).is_err());
        assert!(req("MEMORY.md", Some(0), None).is_err());
        assert!(
            req("AGENTS.md", None, None)
                .unwrap_err()
                .contains("use read for other files")
        );
    }
}
