//! The file tools: `read`, `write` and `edit`. Every path goes through the workspace's
//! [`Confined`](openclaw_workspace::Confined); a path outside it is "permission denied" and the
//! file is left untouched.

use std::io::{BufRead, BufReader, Read};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::arguments::{non_empty, parse};
use crate::context::ToolContext;
use crate::error::{ToolError, blocking};
use crate::file_io::{Written, read_text, write_file};
use crate::tool::{Tool, ToolOutcome};

/// Bytes `read` scans to count a file's lines after it has collected what it shows.
const MAX_LINE_COUNT_SCAN: u64 = 64 * 1024 * 1024;

/// Bytes `read` goes through in all (the lines skipped to reach the offset, those it shows and
/// those it counts after them): a file of one endless line, or a sparse file of gigabytes,
/// costs a bounded read, and no line costs more memory than what could be shown of it.
const MAX_SCAN: u64 = 256 * 1024 * 1024;

/// `read`: a text file's lines, bounded by the excerpt budget.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    offset: Option<u64>,
    limit: Option<u64>,
}

#[async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &'static str {
        "read"
    }

    fn description(&self) -> String {
        "Read a text file in the workspace. Returns the lines as they are in the file. Long \
         files are cut to fit the output budget; the result then says which lines it shows \
         and the offset to continue from. Relative paths start at the workspace root."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "File to read, relative to the workspace root." },
                "offset": { "type": "integer", "minimum": 1, "description": "First line to show (1-based). Default 1." },
                "limit": { "type": "integer", "minimum": 1, "description": "Most lines to show. Default: as many as fit." }
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: ReadArgs = parse(self.name(), arguments)?;
            non_empty(self.name(), "path", &args.path)?;
            if args.offset == Some(0) || args.limit == Some(0) {
                return Err(ToolError::InvalidArguments {
                    tool: "read",
                    detail: "offset and limit start at 1".to_owned(),
                });
            }
            let workspace = ctx.workspace.clone();
            let budget = ctx.limits.excerpt_chars;
            // Opening and a small file's lines are short work (see `crate::in_place`); a
            // large file is read on the blocking pool.
            let opened = crate::in_place::short_file_work(move || {
                let (file, _real) = workspace.open_read(&args.path)?;
                let small = file
                    .metadata()
                    .is_ok_and(|meta| meta.len() <= READ_IN_PLACE_MAX);
                Ok::<_, ToolError>(if small {
                    Opened::Read(read_lines(file, &args, budget))
                } else {
                    Opened::Large(file, args)
                })
            })
            .await
            .map_err(|e| ToolError::Internal(e.to_string()))?;
            match opened? {
                Opened::Read(outcome) => outcome,
                Opened::Large(file, args) => {
                    blocking(move || read_lines(file, &args, budget)).await
                }
            }
        };
        run.await.into()
    }
}

/// Why `read` stopped collecting lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Limit,
    Budget,
    /// One line alone exceeds the budget; only its start is shown.
    LongLine,
}

/// Files up to this size are read in place when a worker is to spare (`crate::in_place`).
const READ_IN_PLACE_MAX: u64 = 256 * 1024;

/// Where `read` stands after opening: done, or a large file to read on the blocking pool.
enum Opened {
    Read(Result<ToolOutcome, ToolError>),
    Large(std::fs::File, ReadArgs),
}

fn read_lines(
    file: std::fs::File,
    args: &ReadArgs,
    budget: usize,
) -> Result<ToolOutcome, ToolError> {
    let path = args.path.as_str();
    let io_error = |e: std::io::Error| ToolError::failed(format!("cannot read {path}: {e}"));
    let start = args.offset.unwrap_or(1);
    let mut reader = BufReader::new(file.take(MAX_SCAN));
    // A line longer than this many bytes has more than `budget` characters, so no more of it
    // could be shown.
    let keep = budget.saturating_mul(4).saturating_add(4);
    let mut line = Vec::new();
    let (mut seen, mut scanned_after_stop) = (0_u64, 0_u64);
    let (mut shown, mut shown_chars) = (String::new(), 0_usize);
    let (mut first, mut last) = (0_u64, 0_u64);
    let mut stop = None;
    let mut counted_all = true;
    loop {
        let n = next_line(&mut reader, &mut line, keep).map_err(io_error)?;
        if n == 0 {
            break;
        }
        seen += 1;
        if seen < start {
            continue;
        }
        if stop.is_some() {
            scanned_after_stop += n as u64;
            if scanned_after_stop > MAX_LINE_COUNT_SCAN {
                counted_all = false;
                break;
            }
            continue;
        }
        if line.contains(&0) {
            return Err(ToolError::failed(format!(
                "{path} looks like a binary file (it contains NUL bytes); read shows text files only"
            )));
        }
        if args.limit.is_some_and(|limit| seen >= start + limit) {
            stop = Some(Stop::Limit);
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let chars = text.chars().count();
        if shown_chars + chars > budget {
            if first == 0 {
                shown.extend(text.chars().take(budget));
                (first, last) = (seen, seen);
                stop = Some(Stop::LongLine);
            } else {
                stop = Some(Stop::Budget);
            }
            continue;
        }
        shown.push_str(&text);
        shown_chars += chars;
        if first == 0 {
            first = seen;
        }
        last = seen;
    }
    if reader.get_ref().limit() == 0 {
        // Stopped by MAX_SCAN, perhaps before the end.
        counted_all = false;
        if first == 0 && seen > 0 {
            return Err(ToolError::failed(format!(
                "offset {start} is further into {path} than read goes: it reads at most the \
                 first {} MiB of a file, and they hold {seen} lines",
                MAX_SCAN / (1024 * 1024)
            )));
        }
    }
    let total = if counted_all {
        seen.to_string()
    } else {
        format!("more than {seen}")
    };
    if seen == 0 {
        return Ok(ToolOutcome::ok_with(
            format!("[{path} is empty]"),
            json!({ "path": path, "total_lines": 0 }),
        ));
    }
    if first == 0 {
        return Err(ToolError::failed(format!(
            "offset {start} is past the end of {path}, which has {total} lines"
        )));
    }
    let note = match stop {
        None => None,
        Some(Stop::Limit) => Some(format!(
            "[Showing lines {first}-{last} of {total}. Continue with offset={}.]",
            last + 1
        )),
        Some(Stop::Budget) => Some(format!(
            "[Output cut at the {budget}-character budget: showing lines {first}-{last} of \
             {total}. Continue with offset={}.]",
            last + 1
        )),
        Some(Stop::LongLine) => Some(format!(
            "[Line {first} alone is longer than the {budget}-character budget; only its start \
             is shown. The file has {total} lines; continue with offset={}.]",
            last + 1
        )),
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
            "first_line": first,
            "last_line": last,
            "total_lines": counted_all.then_some(seen),
            "truncated": truncated,
        }),
    ))
}

/// Reads the next line (through its `\n`, or to the end of the input) and keeps at most `keep`
/// bytes of it in `line`. Returns the line's whole length; 0 at the end.
fn next_line(reader: &mut impl BufRead, line: &mut Vec<u8>, keep: usize) -> std::io::Result<usize> {
    line.clear();
    let mut length = 0;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(length);
        }
        let (used, ended) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buf.len(), false),
        };
        let room = keep.saturating_sub(line.len());
        line.extend_from_slice(&buf[..used.min(room)]);
        reader.consume(used);
        length += used;
        if ended {
            return Ok(length);
        }
    }
}

/// `write`: creates or replaces a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &'static str {
        "write"
    }

    fn description(&self) -> String {
        "Create a file in the workspace, or replace its whole content. Missing parent \
         directories are created. The new content replaces the old in one step. Prefer edit \
         or apply_patch for changes to part of an existing file."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "File to write, relative to the workspace root." },
                "content": { "type": "string", "description": "The complete new content of the file." }
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: WriteArgs = parse(self.name(), arguments)?;
            non_empty(self.name(), "path", &args.path)?;
            let workspace = ctx.workspace.clone();
            blocking(move || {
                let written = write_file(
                    &workspace,
                    std::path::Path::new(&args.path),
                    args.content.as_bytes(),
                    &args.path,
                )?;
                let bytes = args.content.len();
                let text = match written {
                    Written::Created => format!("Created {} ({bytes} bytes).", args.path),
                    Written::Replaced => format!("Replaced {} ({bytes} bytes).", args.path),
                };
                Ok(ToolOutcome::ok_with(
                    text,
                    json!({ "path": args.path, "bytes": bytes, "created": written == Written::Created }),
                ))
            })
            .await
        };
        run.await.into()
    }
}

/// `edit`: replaces an exact piece of text in a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    #[serde(alias = "oldText")]
    old_text: String,
    #[serde(alias = "newText")]
    new_text: String,
    #[serde(default, alias = "replaceAll")]
    replace_all: Option<bool>,
}

#[async_trait]
impl Tool for EditTool {
    fn name(&self) -> &'static str {
        "edit"
    }

    fn description(&self) -> String {
        "Replace a piece of text in a workspace file. old_text must match the file exactly, \
         whitespace and indentation included, and must occur exactly once unless replace_all \
         is true. Read the file first and copy the text to replace from it."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "File to edit, relative to the workspace root." },
                "old_text": { "type": "string", "description": "The exact text to replace." },
                "new_text": { "type": "string", "description": "The text to put in its place." },
                "replace_all": { "type": "boolean", "description": "Replace every occurrence instead of exactly one. Default false." }
            },
            "required": ["path", "old_text", "new_text"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: EditArgs = parse(self.name(), arguments)?;
            non_empty(self.name(), "path", &args.path)?;
            if args.old_text.is_empty() {
                return Err(ToolError::InvalidArguments {
                    tool: "edit",
                    detail: "old_text: must not be empty (use write to create a file)".to_owned(),
                });
            }
            let workspace = ctx.workspace.clone();
            blocking(move || edit_file(&workspace, &args)).await
        };
        run.await.into()
    }
}

fn edit_file(
    workspace: &openclaw_workspace::Confined,
    args: &EditArgs,
) -> Result<ToolOutcome, ToolError> {
    let path = args.path.as_str();
    if args.old_text == args.new_text {
        return Err(ToolError::failed(
            "old_text and new_text are identical; there is nothing to change",
        ));
    }
    let file = read_text(workspace, std::path::Path::new(path), path)?;
    let count = file.text.matches(&args.old_text).count();
    let replace_all = args.replace_all.unwrap_or(false);
    if count == 0 {
        let hint = if file.text.contains("\r\n") && !args.old_text.contains("\r\n") {
            " The file uses CRLF line endings; old_text must use them too."
        } else {
            " Check whitespace, indentation and line breaks, or read the file again."
        };
        return Err(ToolError::failed(format!(
            "old_text was not found in {path}; it must match the file exactly.{hint}"
        )));
    }
    if count > 1 && !replace_all {
        return Err(ToolError::failed(format!(
            "old_text occurs {count} times in {path}; include more surrounding lines so that it \
             matches exactly once, or set replace_all to true"
        )));
    }
    let first_line = file
        .text
        .find(&args.old_text)
        .map_or(1, |at| file.text[..at].matches('\n').count() + 1);
    let updated = if replace_all {
        file.text.replace(&args.old_text, &args.new_text)
    } else {
        file.text.replacen(&args.old_text, &args.new_text, 1)
    };
    // The real path is inside the workspace and has no links left; writing it re-checks that
    // and resolves it beneath the workspace handle, so a swap in between is refused.
    write_file(workspace, &file.real, updated.as_bytes(), path)?;
    let replaced = if replace_all { count } else { 1 };
    let noun = if replaced == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    Ok(ToolOutcome::ok_with(
        format!("Edited {path}: replaced {replaced} {noun} (first at line {first_line})."),
        json!({ "path": path, "replacements": replaced, "first_line": first_line }),
    ))
}
