//! Config settings the agent may never change through the gateway tool (P-12, lesson L15e),
//! and the JSON helpers the check needs: an RFC 7396 merge patch and a list of changed keys.
//!
//! The check compares EFFECTIVE values before and after a change: `tools.exec.X` when set,
//! else its legacy alias `tools.bash.X` (the config crate normalises the alias onto the same
//! setting). Moving a value between the two spellings is therefore no change, while deleting
//! `tools.exec.ask` so that a different `tools.bash.ask` takes effect is one. An absent setting
//! is its own value: writing the default explicitly is refused too, because which default
//! applies depends on the exec host, and refusing is the safe side.

use serde_json::{Map, Value};

/// One protected setting: its canonical dotted key and the legacy keys that alias it.
struct Protected {
    key: &'static str,
    aliases: &'static [&'static str],
}

/// The protected settings. `tools.exec.ask` and `tools.exec.security` are the ones P-12
/// names; the rest are from lesson L15e (what exec may run without asking, and the gateway's
/// own authentication and bind address).
const PROTECTED: &[Protected] = &[
    Protected {
        key: "tools.exec.ask",
        aliases: &["tools.bash.ask"],
    },
    Protected {
        key: "tools.exec.security",
        aliases: &["tools.bash.security"],
    },
    Protected {
        key: "tools.exec.askFallback",
        aliases: &["tools.bash.askFallback"],
    },
    Protected {
        key: "tools.exec.safeBins",
        aliases: &["tools.bash.safeBins"],
    },
    Protected {
        key: "tools.exec.strictInlineEval",
        aliases: &["tools.bash.strictInlineEval"],
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

/// The protected settings whose effective value differs between `before` and `after`, as
/// canonical dotted keys.
pub(crate) fn changed_protected(before: &Value, after: &Value) -> Vec<&'static str> {
    PROTECTED
        .iter()
        .filter(|p| effective(before, p) != effective(after, p))
        .map(|p| p.key)
        .collect()
}

fn effective<'v>(document: &'v Value, setting: &Protected) -> Option<&'v Value> {
    std::iter::once(setting.key)
        .chain(setting.aliases.iter().copied())
        .find_map(|key| at(document, key))
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
