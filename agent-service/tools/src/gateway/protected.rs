//! What the agent may change through the gateway tool (P-12, lesson L15 e), and the JSON
//! helpers the check needs: an RFC 7396 merge patch and a list of changed keys.
//!
//! Deny by default: a change is accepted only when every setting it changes is on
//! [`MUTABLE`] (or, per agent, [`MUTABLE_PER_AGENT`]): display, streaming, reply and queue
//! tuning that decides nothing about what runs, what is read, who may talk to the agent or
//! what the agent is told. Everything else, including keys this build does not know yet, is
//! refused (OpenClaw moved from a denylist to this after #70726; #11945 lists what an open
//! config tool gives away: auth, bind, channels, models, workspaces).
//!
//! On top of that, some subtrees are compared by their EFFECTIVE value, so that the refusal
//! names the setting that would really change:
//! - `tools.exec.*` with its legacy alias `tools.bash.*` (the config crate normalises the
//!   alias onto the same settings; `tools.exec` wins key by key): exec approvals (`ask`,
//!   `security`, `askFallback`, `safeBins`, `strictInlineEval`) and everything else that
//!   decides what a command runs (`pathPrepend` could put a workspace script in front of an
//!   allowlisted name, `host`, `applyPatch.workspaceOnly`). Deleting `tools.exec.ask` so
//!   that a different `tools.bash.ask` takes effect is reported as `tools.exec.ask`
//!   (#55682, #62001);
//! - `agents.list[].runtime`, per agent id: a Codex runtime's `command`, `configOverrides`,
//!   `approvalPolicy` and `sandbox` decide what runs outside our exec approvals (L13);
//! - the workspace roots the file tools are confined to and the sandbox settings
//!   (a workspace moved to `/` is a path escape by config);
//! - `gateway.auth` and `gateway.bind`.
//!
//! Global prompt and model defaults (`agents.defaults.model`, `promptOverlays`, heartbeat
//! prompts) are not mutable either (#90145); the sanctioned way to switch models is the
//! per-session override of `session_status`. A config write never restarts anything here.

use serde_json::{Map, Value};

/// One protected subtree: its canonical dotted key and the legacy keys that alias it
/// (lowest priority last).
struct Protected {
    key: &'static str,
    aliases: &'static [&'static str],
}

/// Protected subtrees of the whole document.
const PROTECTED: &[Protected] = &[
    Protected {
        key: "tools.exec",
        aliases: &["tools.bash"],
    },
    Protected {
        key: "agents.defaults.workspace",
        aliases: &[],
    },
    Protected {
        key: "agents.defaults.sandbox",
        aliases: &[],
    },
    Protected {
        key: "gateway.auth",
        aliases: &[],
    },
    Protected {
        key: "gateway.bind",
        aliases: &[],
    },
];

/// Protected keys of every `agents.list[]` entry, matched across the two documents by `id`.
const PROTECTED_PER_AGENT: [&str; 3] = ["runtime", "workspace", "sandbox"];

/// Settings the agent may change: a dotted key covers itself and everything below it; `*`
/// stands for one key (a channel id).
pub(crate) const MUTABLE: &[&str] = &[
    "agents.defaults.userTimezone",
    "agents.defaults.timeFormat",
    "agents.defaults.envelopeTimezone",
    "agents.defaults.envelopeTimestamp",
    "agents.defaults.envelopeElapsed",
    "agents.defaults.thinkingDefault",
    "agents.defaults.reasoningDefault",
    "agents.defaults.blockStreamingDefault",
    "agents.defaults.blockStreamingBreak",
    "agents.defaults.blockStreamingChunk",
    "agents.defaults.blockStreamingCoalesce",
    "agents.defaults.humanDelay",
    "messages.groupChat.visibleReplies",
    "messages.ackReaction",
    "messages.ackReactionScope",
    "messages.responsePrefix",
    "messages.queue.mode",
    "messages.queue.byChannel",
    "messages.queue.debounceMs",
    "channels.*.blockStreaming",
    "channels.*.textChunkLimit",
    "channels.*.streaming",
];

/// Keys of an existing `agents.list[]` entry the agent may change. Adding, removing or
/// reordering agents is not mutable.
pub(crate) const MUTABLE_PER_AGENT: &[&str] = &[
    "thinkingDefault",
    "reasoningDefault",
    "fastModeDefault",
    "groupChat.mentionPatterns",
];

/// Every changed setting the agent may not change, as dotted keys in a fixed order: the
/// protected ones by effective value first ([`changed_protected`]), then whatever else is
/// off the allowlist, leaving out keys already covered by an earlier one.
pub(crate) fn refused_changes(before: &Value, after: &Value) -> Vec<String> {
    let mut refused = changed_protected(before, after);
    for key in not_mutable(before, after) {
        let covered = refused.iter().any(|r| nested(r, &key) || nested(&key, r));
        if !covered {
            refused.push(key);
        }
    }
    refused
}

/// `inner` is `outer` or below it.
fn nested(outer: &str, inner: &str) -> bool {
    inner == outer
        || inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// Changed keys not on the allowlists. `agents.list` is compared per agent id.
fn not_mutable(before: &Value, after: &Value) -> Vec<String> {
    let without_list = |document: &Value| {
        let mut copy = document.clone();
        if let Some(agents) = copy.get_mut("agents").and_then(Value::as_object_mut) {
            agents.shift_remove("list");
        }
        copy
    };
    let mut refused: Vec<String> = changed_keys(&without_list(before), &without_list(after))
        .into_iter()
        .filter(|key| !MUTABLE.iter().any(|pattern| covers(pattern, key)))
        .collect();
    let (old, new) = (agents(before), agents(after));
    let order = |list: &Map<String, Value>| list.keys().cloned().collect::<Vec<_>>();
    if order(&old) != order(&new) {
        refused.push("agents.list".to_owned());
        return refused;
    }
    for (id, entry) in &old {
        let Some(changed) = new.get(id) else { continue };
        for key in changed_keys(entry, changed) {
            if !MUTABLE_PER_AGENT
                .iter()
                .any(|pattern| covers(pattern, &key))
            {
                refused.push(if key == "(the whole file)" {
                    format!("agents.list[{id}]")
                } else {
                    format!("agents.list[{id}].{key}")
                });
            }
        }
    }
    refused
}

/// Whether an allowlist `pattern` (dotted, `*` for one key) covers the dotted `key`.
fn covers(pattern: &str, key: &str) -> bool {
    let mut keys = key.split('.');
    pattern
        .split('.')
        .all(|part| keys.next().is_some_and(|k| part == "*" || part == k))
}

/// The protected settings whose effective value differs between `before` and `after`, as
/// dotted keys (`tools.exec.ask`, `agents.list[ops].runtime`), in a fixed order.
pub(crate) fn changed_protected(before: &Value, after: &Value) -> Vec<String> {
    let mut changed = Vec::new();
    for setting in PROTECTED {
        let (old, new) = (effective(before, setting), effective(after, setting));
        if old != new {
            // An absent subtree compares as an empty one, so that setting one key reports
            // that key (`tools.exec.ask`), not the whole subtree.
            let empty = Value::Object(Map::new());
            let keys = changed_keys(
                old.as_ref().unwrap_or(&empty),
                new.as_ref().unwrap_or(&empty),
            );
            if keys.is_empty() {
                changed.push(setting.key.to_owned());
            }
            changed.extend(keys.into_iter().map(|key| match key.as_str() {
                "(the whole file)" => setting.key.to_owned(),
                _ => format!("{}.{key}", setting.key),
            }));
        }
    }
    let (old, new) = (agents(before), agents(after));
    let ids = old
        .keys()
        .chain(new.keys().filter(|id| !old.contains_key(*id)));
    for id in ids {
        for key in PROTECTED_PER_AGENT {
            let value = |agents: &Map<String, Value>| {
                agents
                    .get(id)
                    .and_then(|a| a.get(key))
                    .filter(|v| !v.is_null())
                    .cloned()
            };
            if value(&old) != value(&new) {
                changed.push(format!("agents.list[{id}].{key}"));
            }
        }
    }
    changed
}

/// The subtree at `setting.key` merged over its aliases, nulls dropped; `None` when absent
/// or empty.
fn effective(document: &Value, setting: &Protected) -> Option<Value> {
    let mut merged: Option<Value> = None;
    for key in setting.aliases.iter().rev().chain([&setting.key]) {
        let Some(layer) = at(document, key) else {
            continue;
        };
        match merged.as_mut() {
            None => {
                let mut fresh = Value::Null;
                merge_patch(&mut fresh, layer);
                merged = Some(fresh);
            }
            Some(base) => merge_patch(base, layer),
        }
    }
    merged.filter(|v| !v.is_null() && v.as_object().is_none_or(|o| !o.is_empty()))
}

/// `agents.list` by agent id (an entry without a string id is keyed by its index).
fn agents(document: &Value) -> Map<String, Value> {
    let list = at(document, "agents.list")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.into_iter()
        .enumerate()
        .map(|(index, entry)| {
            let id = entry
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("#{index}"), str::to_owned);
            (id, entry)
        })
        .collect()
}

/// The value at a dotted key; `null` counts as absent.
fn at<'v>(document: &'v Value, dotted: &str) -> Option<&'v Value> {
    dotted
        .split('.')
        .try_fold(document, |node, key| node.get(key))
        .filter(|v| !v.is_null())
}

/// Applies a JSON merge patch (RFC 7396) to `target`: objects merge key by key, `null`
/// deletes a key, anything else replaces. Key order is kept; new keys go last.
pub(crate) fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(changes) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(fields) = target {
        for (key, change) in changes {
            if change.is_null() {
                fields.shift_remove(key);
            } else {
                merge_patch(fields.entry(key.clone()).or_insert(Value::Null), change);
            }
        }
    }
}

/// Dotted keys whose values differ between `before` and `after` (objects are compared key by
/// key, anything else as a whole), in document order.
pub(crate) fn changed_keys(before: &Value, after: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff(before, after, String::new(), &mut out);
    out
}

fn diff(before: &Value, after: &Value, prefix: String, out: &mut Vec<String>) {
    match (before, after) {
        (Value::Object(old), Value::Object(new)) => {
            let keys = old
                .keys()
                .chain(new.keys().filter(|k| !old.contains_key(*k)));
            for key in keys {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                diff(
                    old.get(key).unwrap_or(&Value::Null),
                    new.get(key).unwrap_or(&Value::Null),
                    path,
                    out,
                );
            }
        }
        // A subtree added or removed as a whole reports its leaves, so that an allowlist of
        // keys can judge them.
        (Value::Object(_), Value::Null) | (Value::Null, Value::Object(_)) => {
            let empty = Value::Object(Map::new());
            let (old, new) = if before.is_null() {
                (&empty, after)
            } else {
                (before, &empty)
            };
            diff(old, new, prefix, out);
        }
        (old, new) if old != new => out.push(if prefix.is_empty() {
            "(the whole file)".to_owned()
        } else {
            prefix
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_patch_follows_rfc_7396() {
        let mut doc = json!({ "a": "b", "c": { "d": "e", "f": "g" } });
        merge_patch(&mut doc, &json!({ "a": "z", "c": { "f": null } }));
        assert_eq!(doc, json!({ "a": "z", "c": { "d": "e" } }));
        let mut doc = json!({ "a": [1, 2] });
        merge_patch(&mut doc, &json!({ "a": [3], "n": { "x": 1 } }));
        assert_eq!(doc, json!({ "a": [3], "n": { "x": 1 } }));
        let mut doc = json!("scalar");
        merge_patch(&mut doc, &json!({ "k": null, "v": 1 }));
        assert_eq!(doc, json!({ "v": 1 }));
    }

    #[test]
    fn changed_keys_are_dotted_and_ordered() {
        let before = json!({ "a": { "b": 1, "c": 2 }, "x": 1 });
        let after = json!({ "a": { "b": 1, "c": 3 }, "y": 2 });
        assert_eq!(changed_keys(&before, &after), ["a.c", "x", "y"]);
    }

    #[test]
    fn effective_values_follow_the_legacy_alias() {
        let exec = json!({ "tools": { "exec": { "ask": "always" } } });
        let bash = json!({ "tools": { "bash": { "ask": "always" } } });
        let other = json!({ "tools": { "exec": { "ask": "off" }, "bash": { "ask": "always" } } });
        assert!(changed_protected(&exec, &bash).is_empty());
        assert_eq!(changed_protected(&bash, &other), ["tools.exec.ask"]);
        assert_eq!(changed_protected(&json!({}), &exec), ["tools.exec.ask"]);
        let null_ask = json!({ "tools": { "exec": { "ask": null } } });
        assert!(changed_protected(&json!({}), &null_ask).is_empty());
    }
}
