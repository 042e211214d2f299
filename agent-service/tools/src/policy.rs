//! Which tools a run gets: tool policy applied to the tools that exist.
//!
//! The tools that exist are this crate's core tools (always built; `update_plan` only with
//! `tools.experimental.planTool`; `apply_patch` only where [`apply_patch_available`] says)
//! plus whatever else the runtime offers (`extra_available`). TOOLS.md plays no part.
//!
//! Policy is a chain of filters; a tool must pass every one of them:
//!
//! | layer | allowlist | denylist |
//! |---|---|---|
//! | 1. profile | `tools.profile` list + `alsoAllow` (+ `update_plan` when the plan tool is on); none for `full` or no profile | — |
//! | 2. provider profile | `byProvider[key].profile` list + its `alsoAllow`; none without a profile | — |
//! | 3. provider lists | `byProvider[key].allow` | `byProvider[key].deny` |
//! | 4. global lists | `tools.allow` | `tools.deny` |
//!
//! Per-agent values are already merged into the resolved [`ToolPolicy`] (the agent's profile
//! and allow replace the global ones; alsoAllow and deny add up). `key` is `provider/model`
//! when `byProvider` has it, else `provider`, compared case-insensitively; a model id that
//! itself contains `/` never selects another provider's entry. In every layer a deny match
//! wins over an allow match; an absent allowlist lets everything through, an explicitly
//! empty one lets nothing through. Names compare case-insensitively after trimming, with the
//! aliases `bash` = `exec` and `apply-patch` = `apply_patch`; `*` is a wildcard for any run of
//! characters; `group:<name>` stands for the group's tools ([`tool_group`]). An allowlist
//! that admits `exec` also admits `apply_patch` (it edits files no more than exec can).

use openclaw_config::ModelRef;
use openclaw_config::model_ref::normalize_provider;
use openclaw_config::raw::{ToolPolicyConfig, ToolProfile};
use openclaw_config::resolve::{ApplyPatchSettings, ToolPolicy};

/// The tools this crate implements.
pub const CORE_TOOLS: [&str; 9] = [
    "read",
    "write",
    "edit",
    "apply_patch",
    "exec",
    "process",
    "gateway",
    "session_status",
    "update_plan",
];

/// The tools a `group:<name>` entry stands for.
pub fn tool_group(name: &str) -> Option<&'static [&'static str]> {
    Some(match name.trim().to_lowercase().as_str() {
        "group:fs" => &["read", "write", "edit", "apply_patch"],
        "group:runtime" => &["exec", "process"],
        "group:sessions" => &[
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "sessions_spawn",
            "sessions_yield",
            "subagents",
            "session_status",
        ],
        "group:memory" => &["memory_search", "memory_get"],
        "group:web" => &["web_search", "web_fetch"],
        "group:messaging" => &["message"],
        "group:ui" => &["browser", "canvas"],
        "group:automation" => &["cron", "gateway"],
        "group:nodes" => &["nodes"],
        "group:openclaw" => &[
            "read",
            "write",
            "edit",
            "apply_patch",
            "exec",
            "process",
            "update_plan",
            "browser",
            "canvas",
            "nodes",
            "cron",
            "message",
            "gateway",
            "agents_list",
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "sessions_spawn",
            "sessions_yield",
            "subagents",
            "session_status",
            "memory_search",
            "memory_get",
            "web_search",
            "web_fetch",
            "image",
        ],
        _ => return None,
    })
}

/// A profile's base allowlist; `None` = no restriction (`full`).
pub fn profile_allowlist(profile: ToolProfile) -> Option<&'static [&'static str]> {
    match profile {
        ToolProfile::Minimal => Some(&["session_status"]),
        ToolProfile::Coding => Some(&[
            "group:fs",
            "group:runtime",
            "group:sessions",
            "group:memory",
            "image",
        ]),
        ToolProfile::Messaging => Some(&[
            "group:messaging",
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "session_status",
        ]),
        ToolProfile::Full => None,
    }
}

/// Whether a provider is OpenAI's (including the Codex and Azure OpenAI routes).
pub fn is_openai_provider(provider: &str) -> bool {
    let provider = normalize_provider(provider);
    provider == "openai"
        || provider.starts_with("openai-")
        || provider == "codex"
        || provider.starts_with("azure-openai")
}

/// Whether `apply_patch` exists for `provider`/`model`: `enabled` must be on; with an
/// empty `allowModels` it exists for OpenAI models only (the "on by default for OpenAI models"
/// of R-8); a non-empty `allowModels` is the complete list, whatever the provider (an explicit
/// entry is how an operator opts another provider's model in).
pub fn apply_patch_available(settings: &ApplyPatchSettings, provider: &str, model: &str) -> bool {
    if !settings.enabled {
        return false;
    }
    if settings.allow_models.is_empty() {
        return is_openai_provider(provider);
    }
    settings.allows(&ModelRef {
        provider: normalize_provider(provider),
        model: model.to_owned(),
        auth_profile: None,
    })
}

/// The tools a run gets, in display order ([`prompt_render::tool_order`], the order the
/// prompt's Tooling section lists them in). `extra_available` names the runtime's other tools
/// (memory, messaging, sessions...), which pass through the same policy; they are returned as
/// spelled there.
pub fn allowed_tools(
    policy: &ToolPolicy,
    provider: &str,
    model: &str,
    plan_tool: bool,
    apply_patch: &ApplyPatchSettings,
    extra_available: &[&str],
) -> Vec<String> {
    let mut candidates: Vec<String> = CORE_TOOLS
        .iter()
        .filter(|name| match **name {
            "update_plan" => plan_tool,
            "apply_patch" => apply_patch_available(apply_patch, provider, model),
            _ => true,
        })
        .map(|name| (*name).to_owned())
        .collect();
    for extra in extra_available {
        let extra = extra.trim();
        if !extra.is_empty() && !candidates.iter().any(|c| normalize(c) == normalize(extra)) {
            candidates.push(extra.to_owned());
        }
    }
    let implicit: &[&str] = if plan_tool { &["update_plan"] } else { &[] };
    let provider_entry = provider_policy(policy, provider, model);
    let mut layers = vec![profile_layer(policy.profile, &policy.also_allow, implicit)];
    if let Some(entry) = provider_entry {
        layers.push(profile_layer(
            entry.profile,
            entry.also_allow.as_deref().unwrap_or_default(),
            implicit,
        ));
        layers.push(Layer::new(
            entry.allow.as_deref(),
            entry.deny.as_deref().unwrap_or_default(),
        ));
    }
    layers.push(Layer::new(policy.allow.as_deref(), &policy.deny));
    candidates.retain(|name| layers.iter().all(|layer| layer.permits(&normalize(name))));
    // The prompt's Tooling order, from the renderer's table: the request lists the tools in
    // the order the prompt does.
    candidates.sort_by_cached_key(|name| prompt_render::tool_order(name));
    candidates
}

/// `byProvider["provider/model"]`, else `byProvider["provider"]`, keys compared
/// case-insensitively.
fn provider_policy<'p>(
    policy: &'p ToolPolicy,
    provider: &str,
    model: &str,
) -> Option<&'p ToolPolicyConfig> {
    let provider = normalize_provider(provider);
    let full = format!("{provider}/{}", model.trim().to_lowercase());
    let find = |wanted: &str| {
        policy
            .by_provider
            .iter()
            .find(|(key, _)| key.trim().to_lowercase() == wanted)
            .map(|(_, entry)| entry)
    };
    find(&full).or_else(|| find(&provider))
}

fn profile_layer(profile: Option<ToolProfile>, also_allow: &[String], implicit: &[&str]) -> Layer {
    match profile.and_then(profile_allowlist) {
        None => Layer::new(None, &[]),
        Some(base) => {
            let entries: Vec<String> = base
                .iter()
                .map(|s| (*s).to_owned())
                .chain(also_allow.iter().cloned())
                .chain(implicit.iter().map(|s| (*s).to_owned()))
                .collect();
            Layer::new(Some(&entries), &[])
        }
    }
}

/// One filter of the chain.
struct Layer {
    allow: Option<Vec<Pattern>>,
    deny: Vec<Pattern>,
}

impl Layer {
    fn new(allow: Option<&[String]>, deny: &[String]) -> Self {
        Self {
            allow: allow.map(compile),
            deny: compile(deny),
        }
    }

    fn permits(&self, name: &str) -> bool {
        let matches = |patterns: &[Pattern], name: &str| patterns.iter().any(|p| p.matches(name));
        if matches(&self.deny, name) {
            return false;
        }
        match &self.allow {
            None => true,
            Some(allow) => {
                matches(allow, name) || (name == "apply_patch" && matches(allow, "exec"))
            }
        }
    }
}

/// One allow or deny entry.
enum Pattern {
    Exact(String),
    Glob(String),
}

impl Pattern {
    fn matches(&self, name: &str) -> bool {
        match self {
            Pattern::Exact(exact) => exact == name,
            Pattern::Glob(glob) => wildcard_match(glob, name),
        }
    }
}

fn compile(entries: &[String]) -> Vec<Pattern> {
    let mut patterns = Vec::new();
    for entry in entries {
        let entry = normalize(entry);
        if entry.is_empty() {
            continue;
        }
        if let Some(members) = tool_group(&entry) {
            patterns.extend(members.iter().map(|m| Pattern::Exact((*m).to_owned())));
        } else if entry.contains('*') {
            patterns.push(Pattern::Glob(entry));
        } else {
            patterns.push(Pattern::Exact(entry));
        }
    }
    patterns
}

/// Trimmed, lowercase, aliases resolved.
fn normalize(name: &str) -> String {
    let name = name.trim().to_lowercase();
    match name.as_str() {
        "bash" => "exec".to_owned(),
        "apply-patch" => "apply_patch".to_owned(),
        _ => name,
    }
}

/// `*` matches any run of characters (including none); everything else matches itself.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return text.is_empty();
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let middle: Vec<&str> = parts.collect();
    let Some((last, inner)) = middle.split_last() else {
        return rest.is_empty();
    };
    for part in inner {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        for (pattern, text, expected) in [
            ("*", "anything", true),
            ("*", "", true),
            ("web_*", "web_search", true),
            ("web_*", "websearch", false),
            ("*_get", "memory_get", true),
            ("s*s*s", "sessions", true),
            ("s*s*s", "session", false),
            ("a*b*c", "abc", true),
            ("ab*ab", "ab", false),
            ("exact", "exact", true),
        ] {
            assert_eq!(
                wildcard_match(pattern, text),
                expected,
                "{pattern} vs {text}"
            );
        }
    }
}
