//! A rendered prompt as the layers view draws it, and the cache-break analysis of two
//! consecutive model calls.

use openclaw_proto::prompt::v1 as pb;
use serde_json::{Value, json};

use crate::{sections, turns::Turn};

fn layer_name(layer: pb::Layer) -> &'static str {
    match layer {
        pb::Layer::Stable => "stable",
        pb::Layer::Dynamic => "dynamic",
        pb::Layer::Unspecified => "unspecified",
    }
}

fn file_status(status: pb::FileStatus) -> &'static str {
    match status {
        pb::FileStatus::Injected => "injected",
        pb::FileStatus::Truncated => "truncated",
        pb::FileStatus::Missing => "missing",
        pb::FileStatus::Empty => "empty",
        pb::FileStatus::Omitted => "omitted",
        pb::FileStatus::Filtered => "filtered",
        pb::FileStatus::OutOfScope => "out_of_scope",
        pb::FileStatus::Unspecified => "unspecified",
    }
}

fn cause(cause: pb::TruncationCause) -> &'static str {
    match cause {
        pb::TruncationCause::None => "",
        pb::TruncationCause::PerFileLimit => "per_file_limit",
        pb::TruncationCause::TotalLimit => "total_limit",
    }
}

/// Sections by size and layer, the stable/dynamic split, bootstrap files, skills and tools:
/// the ContextReport of one render, for drawing.
pub fn layers(prompt: &pb::RenderSystemPromptResponse) -> Value {
    let context = prompt.context.clone().unwrap_or_default();
    let skills = prompt.skills.clone().unwrap_or_default();
    let tools = prompt.tools.clone().unwrap_or_default();
    let texts = sections::section_texts(prompt);
    let stable_chars: u64 = prompt
        .sections
        .iter()
        .filter(|s| s.layer() == pb::Layer::Stable)
        .map(|s| u64::from(s.chars))
        .sum();
    let dynamic_chars: u64 = prompt
        .sections
        .iter()
        .filter(|s| s.layer() == pb::Layer::Dynamic)
        .map(|s| u64::from(s.chars))
        .sum();
    json!({
        "chars": prompt.chars,
        "approx_tokens": prompt.approx_tokens,
        "mode": prompt.resolved_mode().as_str_name(),
        "stable_prefix_sha256": prompt.stable_prefix_sha256,
        "stable_chars": stable_chars,
        "dynamic_chars": dynamic_chars,
        "sections": prompt.sections.iter().zip(texts).map(|(s, text)| json!({
            "id": s.id,
            "heading": s.heading,
            "layer": layer_name(s.layer()),
            "chars": s.chars,
            "sha256": s.sha256,
            "text": text,
        })).collect::<Vec<_>>(),
        "bootstrap": {
            "max_chars_per_file": context.max_chars_per_file,
            "total_max_chars": context.total_max_chars,
            "project_context_chars": context.project_context_chars,
            "truncation_notice_shown": context.truncation_notice_shown,
            "files": context.files.iter().map(|f| json!({
                "path": f.path,
                "status": file_status(f.status()),
                "cause": cause(f.cause()),
                "layer": layer_name(f.layer()),
                "raw_chars": f.raw_chars,
                "injected_chars": f.injected_chars,
                "out_of_scope_entries": f.out_of_scope_entries,
                "out_of_scope_chars": f.out_of_scope_chars,
            })).collect::<Vec<_>>(),
        },
        "skills": {
            "chars": skills.chars,
            "offered": skills.offered,
            "listed": skills.listed,
            "omitted": skills.omitted,
            "compact": skills.compact,
            "entries": skills.entries.iter().map(|s| json!({
                "name": s.name, "version": s.version, "block_chars": s.block_chars,
            })).collect::<Vec<_>>(),
        },
        "tools": {
            "list_chars": tools.list_chars,
            "schema_chars": tools.schema_chars,
            "entries": tools.entries.iter().map(|t| json!({
                "name": t.name,
                "summary_chars": t.summary_chars,
                "schema_chars": t.schema_chars,
                "properties_count": t.properties_count,
            })).collect::<Vec<_>>(),
        },
    })
}

/// One model call for the turn list.
pub fn turn_summary(turn: &Turn, previous: Option<&Turn>) -> Value {
    json!({
        "index": turn.index,
        "at_ms": turn.at_ms,
        "run": turn.run,
        "step": turn.step,
        "model": turn.model,
        "stable_prefix_sha256": turn.stable_prefix_sha256,
        "prefix_changed": turn.prefix_changed,
        "hash_changed": previous.is_some_and(|p| p.stable_prefix_sha256 != turn.stable_prefix_sha256),
        "changed_sections": turn.changed_sections,
        "prompt_chars": turn.prompt_chars,
        "messages": turn.messages,
        "usage": turn.usage,
        "has_prompt": turn.prompt.is_some(),
    })
}

/// What changed in the stable prefix from `previous` to `turn`: the hashes, the sections
/// added, removed or changed (in the new prompt's order; the first one is where the cached
/// prefix stops matching), and a side-by-side diff of each changed section.
pub fn cache_break(turn: &Turn, previous: Option<&Turn>) -> Value {
    let Some(previous) = previous else {
        return json!({
            "index": turn.index,
            "previous_index": null,
            "hash_changed": false,
            "first_changed": null,
            "runtime_changed_sections": turn.changed_sections,
            "sections": [],
            "note": "no earlier model call of this session was observed",
        });
    };
    let hash_changed = previous.stable_prefix_sha256 != turn.stable_prefix_sha256;
    let mut changes = Vec::new();
    let mut note = Value::Null;
    match (&previous.prompt, &turn.prompt) {
        (Some(old), Some(new)) => {
            let old_stable = stable_sections(old);
            let new_stable = stable_sections(new);
            for (id, new_section, new_text) in &new_stable {
                let old = old_stable.iter().find(|(oid, _, _)| oid == id);
                match old {
                    Some((_, old_section, _)) if old_section.sha256 == new_section.sha256 => {}
                    Some((_, old_section, old_text)) => changes.push(change(
                        id,
                        "changed",
                        Some((old_section, old_text)),
                        Some((new_section, new_text)),
                    )),
                    None => changes.push(change(id, "added", None, Some((new_section, new_text)))),
                }
            }
            for (id, old_section, old_text) in &old_stable {
                if !new_stable.iter().any(|(nid, _, _)| nid == id) {
                    changes.push(change(id, "removed", Some((old_section, old_text)), None));
                }
            }
        }
        _ => {
            note = json!(
                "the prompt of one of these calls is no longer remembered; sections are as the runtime reported them"
            );
            for id in &turn.changed_sections {
                changes.push(json!({ "id": id, "change": "changed", "diff": null }));
            }
        }
    }
    json!({
        "index": turn.index,
        "previous_index": previous.index,
        "previous_sha256": previous.stable_prefix_sha256,
        "sha256": turn.stable_prefix_sha256,
        "hash_changed": hash_changed,
        "first_changed": changes.first().and_then(|c| c.get("id")).cloned(),
        "runtime_changed_sections": turn.changed_sections,
        "sections": changes,
        "note": note,
    })
}

type StableSection<'a> = (String, &'a pb::RenderedSection, Option<String>);

fn stable_sections(prompt: &pb::RenderSystemPromptResponse) -> Vec<StableSection<'_>> {
    prompt
        .sections
        .iter()
        .zip(sections::section_texts(prompt))
        .filter(|(s, _)| s.layer() == pb::Layer::Stable)
        .map(|(s, text)| (s.id.clone(), s, text))
        .collect()
}

fn change(
    id: &str,
    kind: &str,
    old: Option<(&pb::RenderedSection, &Option<String>)>,
    new: Option<(&pb::RenderedSection, &Option<String>)>,
) -> Value {
    let old_text = old.and_then(|(_, t)| t.clone());
    let new_text = new.and_then(|(_, t)| t.clone());
    let known = (old.is_none() || old_text.is_some()) && (new.is_none() || new_text.is_some());
    let diff = known.then(|| {
        sections::side_by_side(
            old_text.as_deref().unwrap_or_default(),
            new_text.as_deref().unwrap_or_default(),
        )
    });
    json!({
        "id": id,
        "change": kind,
        "old_chars": old.map(|(s, _)| s.chars),
        "new_chars": new.map(|(s, _)| s.chars),
        "old_sha256": old.map(|(s, _)| s.sha256.clone()),
        "new_sha256": new.map(|(s, _)| s.sha256.clone()),
        "diff": diff,
    })
}
