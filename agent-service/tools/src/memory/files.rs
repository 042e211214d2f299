//! `memory_get`: checked requests and bounded excerpts of one memory file, read through the
//! workspace's confinement. Which files are memory is the memory crate's rule.

use openclaw_memory::files::read_capped;
use openclaw_memory::is_memory_path;
use openclaw_workspace::Confined;
use serde_json::json;

use crate::error::ToolError;
use crate::tool::ToolOutcome;

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
