//! `/context list` and `/context detail` as text (P-34): the same report for the chat command
//! and for the ContextReport RPC.

use std::fmt::Write;

use openclaw_proto::prompt::v1 as pb;

fn tokens(chars: u32) -> u32 {
    chars.div_ceil(4)
}

/// Formats a render's reports the way `/context list` (or detail) shows them.
pub fn context_text(
    workspace: &str,
    prompt: &pb::RenderSystemPromptResponse,
    detail: bool,
) -> String {
    let mut out = String::new();
    let context = prompt.context.clone().unwrap_or_default();
    let skills = prompt.skills.clone().unwrap_or_default();
    let tools = prompt.tools.clone().unwrap_or_default();
    let _ = writeln!(out, "Workspace: {workspace}");
    let _ = writeln!(
        out,
        "Bootstrap limits: {} chars per file, {} in total",
        context.max_chars_per_file, context.total_max_chars
    );
    let _ = writeln!(
        out,
        "System prompt: {} chars (~{} tok), of which Project Context {} chars (~{} tok)",
        prompt.chars,
        prompt.approx_tokens,
        context.project_context_chars,
        tokens(context.project_context_chars)
    );
    let _ = writeln!(out, "Workspace files:");
    let _ = writeln!(
        out,
        "  (raw: the file as read; injected: what the prompt carries, so usually a little \
         less: CRLF as LF, trailing whitespace and repeated blank lines dropped, the old \
         embedded heartbeat block removed, a truncation marker counted)"
    );
    for f in &context.files {
        let status = match f.status() {
            pb::FileStatus::Injected => "OK".to_owned(),
            pb::FileStatus::Truncated => format!(
                "TRUNCATED ({})",
                match f.cause() {
                    pb::TruncationCause::PerFileLimit => "per-file limit",
                    pb::TruncationCause::TotalLimit => "total limit",
                    pb::TruncationCause::None => "limit",
                }
            ),
            pb::FileStatus::Missing => "MISSING".to_owned(),
            pb::FileStatus::Empty => "EMPTY".to_owned(),
            pb::FileStatus::Omitted => "OMITTED (total limit)".to_owned(),
            pb::FileStatus::Filtered => "NOT FOR THIS SESSION".to_owned(),
            pb::FileStatus::OutOfScope => "OTHER PROJECTS ONLY".to_owned(),
            pb::FileStatus::Unspecified => "?".to_owned(),
        };
        let scoped = if f.out_of_scope_entries > 0 {
            format!(
                " | {} entries of other projects left out ({} chars)",
                f.out_of_scope_entries, f.out_of_scope_chars
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  {}: {status} | raw {} chars (~{} tok) | injected {} chars (~{} tok){scoped}",
            f.path,
            f.raw_chars,
            tokens(f.raw_chars),
            f.injected_chars,
            tokens(f.injected_chars)
        );
    }
    let _ = writeln!(
        out,
        "Skills list: {} chars (~{} tok), {} of {} listed{}",
        skills.chars,
        tokens(skills.chars),
        skills.listed,
        skills.offered,
        if skills.omitted.is_empty() {
            String::new()
        } else {
            format!("; not listed: {}", skills.omitted.join(", "))
        }
    );
    let _ = writeln!(
        out,
        "Tools: {} listed; list {} chars (~{} tok); schemas {} chars (~{} tok)",
        tools.entries.len(),
        tools.list_chars,
        tokens(tools.list_chars),
        tools.schema_chars,
        tokens(tools.schema_chars)
    );
    if detail {
        let mut by_size = skills.entries.clone();
        by_size.sort_by(|a, b| {
            b.block_chars
                .cmp(&a.block_chars)
                .then_with(|| a.name.cmp(&b.name))
        });
        let _ = writeln!(out, "Top skills by size:");
        for s in by_size.iter().take(10) {
            let _ = writeln!(out, "  {}: {} chars ({})", s.name, s.block_chars, s.version);
        }
        let mut by_schema = tools.entries.clone();
        by_schema.sort_by(|a, b| {
            b.schema_chars
                .cmp(&a.schema_chars)
                .then_with(|| a.name.cmp(&b.name))
        });
        let _ = writeln!(out, "Top tools by schema size:");
        for t in by_schema.iter().take(10) {
            let _ = writeln!(
                out,
                "  {}: schema {} chars, {} properties",
                t.name, t.schema_chars, t.properties_count
            );
        }
        let _ = writeln!(out, "Sections:");
        for s in &prompt.sections {
            let layer = if s.layer() == pb::Layer::Stable {
                "stable"
            } else {
                "dynamic"
            };
            let _ = writeln!(out, "  {:<36} {layer:<7} {:>6} chars", s.id, s.chars);
        }
    }
    out
}
