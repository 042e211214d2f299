//! The memory tools (P-32, P-40): `memory_search` ranks chunks of the workspace's memory
//! files with file and line references, and `memory_get` reads a bounded excerpt of one of
//! them by line range.
//!
//! Memory files are `MEMORY.md` (or `memory.md`) in the workspace root and every `*.md` under
//! `memory/` (daily notes such as `memory/2026-03-03.md`; subdirectories are organisation).
//! Both tools read only those files, only through the workspace's
//! [`Confined`](openclaw_workspace::Confined) (a link that leads outside is refused), and
//! return at most the runtime excerpt budget ([`crate::ToolLimits::excerpt_chars`]) of text.
//! `memory_search` answers from the agent's index ([`openclaw_memory::AgentMemory`]): full-text
//! search in every script, and embeddings when a provider is configured; the result says which.
//!
//! Which sessions get these tools is the runtime's decision: memory is private, so it offers
//! them only where MEMORY.md itself may be shown (lesson L5).

mod files;

use std::sync::Arc;

use async_trait::async_trait;
use openclaw_memory::{AgentMemory, Hit, Mode, SearchOutcome};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::arguments::{non_empty, parse};
use crate::context::ToolContext;
use crate::error::{ToolError, blocking};
use crate::tool::{Tool, ToolOutcome};

pub use openclaw_memory::is_memory_path;

/// The most results one search may ask for.
const MAX_RESULTS: usize = 20;
/// Characters of one passage line shown in search results.
const SNIPPET_LINE_CHARS: usize = 240;

/// `memory_search`: ranked chunks of the memory files, each cited as `path#Lstart-Lend`,
/// from the agent's memory index.
#[derive(Debug, Clone)]
pub struct MemorySearchTool {
    memory: Arc<AgentMemory>,
}

impl MemorySearchTool {
    /// The tool over the agent's memory index.
    pub fn new(memory: Arc<AgentMemory>) -> Self {
        Self { memory }
    }
}

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
         matching a query, in any language. Results are ranked best first; each is cited as \
         path#Lstart-Lend with the passage's lines. Read more around a result with memory_get."
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
            if openclaw_memory::search::terms(&args.query).is_empty() {
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
                None => self.memory.settings().default_results,
            };
            let workspace = Arc::clone(&ctx.workspace);
            let any = blocking(move || Ok(has_memory_files(&workspace))).await?;
            if !any {
                return Ok(ToolOutcome::ok_with(
                    "No memory files yet: MEMORY.md and memory/*.md do not exist in the workspace.",
                    json!({ "query": args.query, "files_searched": 0, "matches": [] }),
                ));
            }
            let outcome = self
                .memory
                .search(Arc::clone(&ctx.workspace), &args.query, wanted)
                .await
                .map_err(|e| ToolError::Failed(format!("memory search failed: {e}")))?;
            Ok(render(
                &args.query,
                wanted,
                ctx.limits.excerpt_chars,
                &outcome,
            ))
        };
        run.await.into()
    }
}

/// Whether the workspace has any memory file at all (a cheap check before the index opens).
fn has_memory_files(workspace: &openclaw_workspace::Confined) -> bool {
    let found = openclaw_memory::files::discover(workspace);
    !found.files.is_empty() || !found.notes.is_empty()
}

/// The mode as the result names it: (details value, sentence).
fn mode_text(mode: &Mode) -> (&'static str, String) {
    match mode {
        Mode::Keyword => (
            "keyword",
            "Ranked by keyword search (no embedding provider is configured).".to_owned(),
        ),
        Mode::Hybrid => (
            "hybrid",
            "Ranked by meaning (embeddings) and keywords together.".to_owned(),
        ),
        Mode::KeywordFallback { reason } => (
            "keyword-fallback",
            format!("Ranked by keyword search only: the embeddings were unavailable ({reason})."),
        ),
    }
}

fn render(query: &str, wanted: usize, budget: usize, outcome: &SearchOutcome) -> ToolOutcome {
    let searched = outcome.files_searched;
    let mut text = String::new();
    let mut shown = Vec::new();
    for hit in &outcome.hits {
        let block = result_block(shown.len() + 1, hit);
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
            "path": hit.path,
            "start_line": hit.start,
            "end_line": hit.end,
            "score": (hit.score * 100.0).round() / 100.0,
        }));
        if !fits {
            break;
        }
    }
    let matched = outcome.matched;
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
    let (mode, sentence) = mode_text(&outcome.mode);
    if outcome.mode != Mode::Keyword || matched > 0 {
        header.push(' ');
        header.push_str(&sentence);
    }
    for note in &outcome.notes {
        header.push_str("\nNote: ");
        header.push_str(note);
    }
    let body = if text.is_empty() {
        header
    } else {
        format!("{header}\n\n{}", text.trim_end())
    };
    ToolOutcome::ok_with(
        body,
        json!({
            "query": query,
            "mode": mode,
            "files_searched": searched,
            "matches": shown,
            "omitted": omitted,
        }),
    )
}

fn result_block(n: usize, hit: &Hit) -> String {
    let mut block = format!(
        "[{n}] {}#L{}-L{} (score {:.2})\n",
        hit.path, hit.start, hit.end, hit.score
    );
    for (i, line) in hit.text.split('\n').enumerate() {
        let mut shown: String = line.chars().take(SNIPPET_LINE_CHARS).collect();
        if shown.len() < line.len() {
            shown.push('…');
        }
        block.push_str(&format!("L{}: {shown}\n", hit.start + i));
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
