//! The patch grammar `apply_patch` accepts. Markers are matched after trimming surrounding
//! whitespace; lines are split on `\n` with a trailing `\r` dropped.
//!
//! ```text
//! patch       := "*** Begin Patch" NL operation* "*** End Patch" NL?
//! operation   := add | delete | update
//! add         := "*** Add File: " path NL ("+" text NL)*
//! delete      := "*** Delete File: " path NL
//! update      := "*** Update File: " path NL ("*** Move to: " path NL)? hunk*
//! hunk        := ("@@" | "@@ " anchor) NL? hunk_line+ ("*** End of File" NL)?
//! hunk_line   := (" " | "-" | "+") text NL | NL            (an empty line is empty context)
//! ```
//!
//! The first hunk of an update may leave out its `@@` line. An update needs at least one hunk
//! unless it moves the file. The anchor after `@@` names a line (a function signature, a class
//! header) that must occur before the hunk's lines; it narrows where they are searched for.
//! Blank lines between operations are ignored; a wrapper such as `apply_patch <<'EOF'` ...
//! `EOF` around the whole patch is tolerated.

use crate::error::ToolError;

/// A parsed patch: its file operations in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Patch {
    pub(crate) operations: Vec<Operation>,
}

/// One file operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Operation {
    /// Create (or overwrite) a file with this content.
    Add { path: String, content: String },
    /// Delete a file.
    Delete { path: String },
    /// Change a file, optionally moving it.
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
}

/// One `@@` hunk of an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// The text after `@@`, if any.
    pub(crate) anchor: Option<String>,
    /// Context and removed lines, in order: what the file must contain.
    pub(crate) old: Vec<String>,
    /// Context and added lines, in order: what replaces `old`.
    pub(crate) new: Vec<String>,
    /// Whether `old` must be at the very end of the file.
    pub(crate) end_of_file: bool,
    /// 1-based line of the hunk's first line in the patch, for error messages.
    pub(crate) line: usize,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

fn invalid(line: usize, message: impl Into<String>) -> ToolError {
    ToolError::failed(format!("invalid patch (line {line}): {}", message.into()))
}

/// Parses patch text. Errors name the patch line.
pub(crate) fn parse(text: &str) -> Result<Patch, ToolError> {
    let all: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    // (1-based line number, text) of the meaningful lines.
    let mut lines: Vec<(usize, &str)> = all.iter().enumerate().map(|(i, l)| (i + 1, *l)).collect();
    while lines.last().is_some_and(|(_, l)| l.trim().is_empty()) {
        lines.pop();
    }
    let first_content = lines
        .iter()
        .position(|(_, l)| !l.trim().is_empty())
        .unwrap_or(0);
    lines.drain(..first_content);
    strip_heredoc(&mut lines);

    let Some((first_no, first)) = lines.first() else {
        return Err(invalid(1, "the patch is empty"));
    };
    if first.trim() != BEGIN {
        return Err(invalid(
            *first_no,
            format!("the patch must start with '{BEGIN}'"),
        ));
    }
    let Some((last_no, last)) = lines.last() else {
        return Err(invalid(1, "the patch is empty"));
    };
    if lines.len() < 2 || last.trim() != END {
        return Err(invalid(
            *last_no,
            format!("the patch must end with '{END}'"),
        ));
    }
    let body = &lines[1..lines.len() - 1];
    let mut cursor = Cursor { lines: body, at: 0 };
    let mut operations = Vec::new();
    while let Some((number, line)) = cursor.peek() {
        let header = line.trim();
        cursor.at += 1;
        if header.is_empty() {
            continue;
        }
        let operation = if let Some(path) = header.strip_prefix(ADD.trim_end()) {
            Operation::Add {
                path: file_path(number, path)?,
                content: add_content(&mut cursor),
            }
        } else if let Some(path) = header.strip_prefix(DELETE.trim_end()) {
            Operation::Delete {
                path: file_path(number, path)?,
            }
        } else if let Some(path) = header.strip_prefix(UPDATE.trim_end()) {
            update(number, file_path(number, path)?, &mut cursor)?
        } else {
            return Err(invalid(
                number,
                format!(
                    "expected '{}<path>', '{}<path>' or '{}<path>', found {line:?}",
                    ADD, DELETE, UPDATE
                ),
            ));
        };
        operations.push(operation);
    }
    if operations.is_empty() {
        return Err(invalid(*first_no, "the patch contains no file operations"));
    }
    Ok(Patch { operations })
}

/// Drops `apply_patch <<'EOF'` / `<<EOF` / `<<"EOF"` and the matching terminator line.
fn strip_heredoc(lines: &mut Vec<(usize, &str)>) {
    let Some((_, first)) = lines.first() else {
        return;
    };
    let Some(marker) = first.trim().rsplit_once("<<").map(|(_, m)| m.trim()) else {
        return;
    };
    let word = marker.trim_matches(|c| c == '\'' || c == '"');
    if word.is_empty() || lines.last().is_none_or(|(_, l)| l.trim() != word) {
        return;
    }
    lines.pop();
    lines.remove(0);
}

struct Cursor<'a> {
    lines: &'a [(usize, &'a str)],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<(usize, &'a str)> {
        self.lines.get(self.at).map(|(n, l)| (*n, *l))
    }

    /// Whether the next line starts another operation (or the file ends).
    fn at_operation(&self) -> bool {
        match self.peek() {
            None => true,
            Some((_, line)) => {
                let t = line.trim();
                [ADD, DELETE, UPDATE]
                    .iter()
                    .any(|marker| t.starts_with(marker.trim_end()))
            }
        }
    }
}

fn file_path(line: usize, raw: &str) -> Result<String, ToolError> {
    let path = raw.trim();
    if path.is_empty() {
        return Err(invalid(line, "the file path is missing"));
    }
    Ok(path.to_owned())
}

fn add_content(cursor: &mut Cursor<'_>) -> String {
    let mut content = String::new();
    while let Some((_, line)) = cursor.peek() {
        let Some(text) = line.strip_prefix('+') else {
            break;
        };
        content.push_str(text);
        content.push('\n');
        cursor.at += 1;
    }
    content
}

fn update(
    header_line: usize,
    path: String,
    cursor: &mut Cursor<'_>,
) -> Result<Operation, ToolError> {
    let mut move_to = None;
    if let Some((number, line)) = cursor.peek()
        && let Some(target) = line.trim().strip_prefix(MOVE.trim_end())
    {
        move_to = Some(file_path(number, target)?);
        cursor.at += 1;
    }
    let mut hunks = Vec::new();
    while !cursor.at_operation() {
        let Some((number, line)) = cursor.peek() else {
            break;
        };
        let trimmed = line.trim();
        let anchor = if trimmed == "@@" {
            cursor.at += 1;
            None
        } else if let Some(rest) = trimmed.strip_prefix("@@ ") {
            cursor.at += 1;
            Some(rest.trim().to_owned()).filter(|a| !a.is_empty())
        } else if hunks.is_empty() && is_hunk_line(line) {
            // The first hunk may leave out its @@ line.
            None
        } else if trimmed.is_empty() {
            // Blank lines between hunks.
            cursor.at += 1;
            continue;
        } else {
            return Err(invalid(
                number,
                format!("expected a hunk starting with '@@', found {line:?}"),
            ));
        };
        hunks.push(hunk(number, anchor, cursor)?);
    }
    if hunks.is_empty() && move_to.is_none() {
        return Err(invalid(
            header_line,
            format!("'{UPDATE}{path}' has no hunks"),
        ));
    }
    Ok(Operation::Update {
        path,
        move_to,
        hunks,
    })
}

fn is_hunk_line(line: &str) -> bool {
    line.starts_with([' ', '+', '-'])
}

fn hunk(start: usize, anchor: Option<String>, cursor: &mut Cursor<'_>) -> Result<Hunk, ToolError> {
    let mut hunk = Hunk {
        anchor,
        old: Vec::new(),
        new: Vec::new(),
        end_of_file: false,
        line: start,
    };
    let mut changed_lines = 0_usize;
    // Empty lines without any prefix at the end of the hunk, which may be separators.
    let mut bare_blanks = 0_usize;
    while !cursor.at_operation() {
        let Some((_, line)) = cursor.peek() else {
            break;
        };
        let trimmed = line.trim();
        if trimmed == END_OF_FILE {
            hunk.end_of_file = true;
            cursor.at += 1;
            break;
        }
        if trimmed == "@@" || trimmed.starts_with("@@ ") {
            break;
        }
        bare_blanks = if line.is_empty() { bare_blanks + 1 } else { 0 };
        match line.chars().next() {
            Some(' ') => {
                hunk.old.push(line[1..].to_owned());
                hunk.new.push(line[1..].to_owned());
            }
            Some('-') => {
                hunk.old.push(line[1..].to_owned());
                changed_lines += 1;
            }
            Some('+') => {
                hunk.new.push(line[1..].to_owned());
                changed_lines += 1;
            }
            // An empty line: editors strip the lone space of an empty context line.
            None => {
                hunk.old.push(String::new());
                hunk.new.push(String::new());
            }
            Some(_) => break,
        }
        cursor.at += 1;
    }
    // Bare empty lines right before the next operation (or the end) separate operations.
    if cursor.at_operation() && !hunk.end_of_file {
        for _ in 0..bare_blanks {
            hunk.old.pop();
            hunk.new.pop();
        }
    }
    if changed_lines == 0 && hunk.old.is_empty() {
        return Err(invalid(start, "the hunk is empty"));
    }
    if let Some((number, line)) = cursor.peek()
        && !cursor.at_operation()
        && !(line.trim() == "@@" || line.trim().starts_with("@@ "))
        && !line.trim().is_empty()
    {
        return Err(invalid(
            number,
            format!("hunk lines must start with ' ', '+' or '-', found {line:?}"),
        ));
    }
    Ok(hunk)
}
