//! The memory tools (P-32, P-40): `memory_search` ranks passages of the workspace's memory
//! files with file and line references, and `memory_get` reads a bounded excerpt of one of
//! them by line range.
//!
//! Memory files are `MEMORY.md` (or `memory.md`) in the workspace root and every `*.md` under
//! `memory/` (daily notes such as `memory/2026-03-03.md`; subdirectories are organisation).
//! Both tools read only those files, only through the workspace's
//! [`Confined`](openclaw_workspace::Confined) (a link that leads outside is refused), and
//! return at most the runtime excerpt budget ([`crate::ToolLimits::excerpt_chars`]) of text.
//!
//! Which sessions get these tools is the runtime's decision: memory is private, so it offers
//! them only where MEMORY.md itself may be shown (lesson L5).

mod files;
mod rank;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::arguments::{non_empty, parse};
use crate::context::ToolContext;
use crate::error::{ToolError, blocking};
use crate::tool::{Tool, ToolOutcome};

pub use files::is_memory_path;

/// Results `memory_search` shows unless asked for another number.
const DEFAULT_RESULTS: usize = 6;
/// The most results one search may ask for.
const MAX_RESULTS: usize = 20;
/// Characters of one passage line shown in search results.
const SNIPPET_LINE_CHARS: usize = 240;

/// `memory_search`: ranked passages of the memory files, each cited as `path#Lstart-Lend`.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemorySearchTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SearchArgs {
    query: String,
    #[serde(alias = "max_results")]
    max_results: Option<usize>,
}

#[async_trait]
impl Tool for MemorySearchTool {
    fn name(&self) -> &'static str {
        "memory_search"
    }

    fn description(&self) -> String {
        "Search long-term memory (MEMORY.md and memory/*.md in the workspace) for passages \
         matching a query. Results are ranked best first; each is cited as path#Lstart-Lend \
         with the passage's lines. Read more around a result with memory_get."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "Words to look for: names, topics, dates, decisions." },
                "maxResults": { "type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "description": "Most passages to return (default 6)." }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: SearchArgs = parse(self.name(), arguments)?;
            non_empty(self.name(), "query", &args.query)?;
            if rank::terms(&args.query).is_empty() {
                return Err(ToolError::InvalidArguments {
                    tool: "memory_search",
                    detail: "query: has no words to search for".to_owned(),
                });
            }
            let wanted = match args.max_results {
                Some(0) => {
                    return Err(ToolError::InvalidArguments {
                        tool: "memory_search",
                        detail: "maxResults: must be at least 1".to_owned(),
                    });
                }
                Some(n) => n.min(MAX_RESULTS),
                None => DEFAULT_RESULTS,
            };
            let workspace = ctx.workspace.clone();
            let budget = ctx.limits.excerpt_chars;
            blocking(move || search(&workspace, &args.query, wanted, budget)).await
        };
        run.await.into()
    }
}

fn search(
    workspace: &openclaw_workspace::Confined,
    query: &str,
    wanted: usize,
    budget: usize,
) -> Result<ToolOutcome, ToolError> {
    let found = files::discover(workspace)?;
    if found.files.is_empty() {
        return Ok(ToolOutcome::ok_with(
            "No memory files yet: MEMORY.md and memory/*.md do not exist in the workspace.",
            json!({ "query": query, "files_searched": 0, "matches": [] }),
        ));
    }
    let passages: Vec<Vec<rank::Passage>> = found
        .files
        .iter()
        .map(|f| rank::passages(&f.text))
        .collect();
    let hits = rank::rank(query, &passages);
    let searched = found.files.len();
    let mut text = String::new();
    let mut shown = Vec::new();
    for hit in hits.iter().take(wanted) {
        let path = &found.files[hit.file].path;
        let block = result_block(shown.len() + 1, path, hit);
        let fits = text.chars().count() + block.chars().count() <= budget;
        if !fits && !shown.is_empty() {
            break;
        }
        if fits {
            text.push_str(&block);
        } else {
            // Not even the best passage fits: show its start rather than nothing.
            text.extend(block.chars().take(budget));
            text.push('…');
        }
        shown.push(json!({
            "path": path,
            "start_line": hit.passage.start,
            "end_line": hit.passage.end,
            "score": (hit.score * 100.0).round() / 100.0,
        }));
        if !fits {
            break;
        }
    }
    let matched = hits.len();
    let omitted = matched - shown.len();
    let mut header = if matched == 0 {
        format!("No memory passages match {query:?} ({searched} files searched).")
    } else {
        format!(
            "Memory search for {query:?}: {matched} matching passages in {searched} files searched; the best {} follow.",
            shown.len()
        )
    };
    if omitted > 0 && shown.len() < wanted.min(matched) {
        header.push_str(&format!(
            " Further matches were left out to stay within the {budget}-character output budget."
        ));
    }
    for note in &found.notes {
        header.push_str("\nNote: ");
        header.push_str(note);
    }
    let body = if text.is_empty() {
        header
    } else {
        format!("{header}\n\n{}", text.trim_end())
    };
    Ok(ToolOutcome::ok_with(
        body,
        json!({
            "query": query,
            "files_searched": searched,
            "matches": shown,
            "omitted": omitted,
        }),
    ))
}

fn result_block(n: usize, path: &str, hit: &rank::Hit) -> String {
    let p = &hit.passage;
    let mut block = format!(
        "[{n}] {path}#L{}-L{} (score {:.2})\n",
        p.start, p.end, hit.score
    );
    for (i, line) in p.lines.iter().enumerate() {
        let mut shown: String = line.chars().take(SNIPPET_LINE_CHARS).collect();
        if shown.len() < line.len() {
            shown.push('…');
        }
        block.push_str(&format!("L{}: {shown}\n", p.start + i));
    }
    block.push('\n');
    block
}

/// `memory_get`: lines of one memory file, bounded by the excerpt budget.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryGetTool;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GetArgs {
    path: String,
    from: Option<u64>,
    lines: Option<u64>,
}

#[async_trait]
impl Tool for MemoryGetTool {
    fn name(&self) -> &'static str {
        "memory_get"
    }

    fn description(&self) -> String {
        "Read lines of a memory file (MEMORY.md or memory/*.md) by line range, for example \
         after memory_search. The excerpt is bounded by the output budget; the result says \
         which lines it shows and where to continue. A path like MEMORY.md#L10-L20 works too."
            .to_owned()
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "Memory file relative to the workspace root, e.g. MEMORY.md or memory/2026-03-03.md." },
                "from": { "type": "integer", "minimum": 1, "description": "First line to show (1-based). Default 1." },
                "lines": { "type": "integer", "minimum": 1, "description": "Most lines to show. Default: as many as fit." }
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext, arguments: Value) -> ToolOutcome {
        let run = async {
            let args: GetArgs = parse(self.name(), arguments)?;
            non_empty(self.name(), "path", &args.path)?;
            let request = files::excerpt_request(&args.path, args.from, args.lines)?;
            let workspace = ctx.workspace.clone();
            let budget = ctx.limits.excerpt_chars;
            blocking(move || files::excerpt(&workspace, &request, budget)).await
        };
        run.await.into()
    }
}
