//! JSON objects with an explicit key order.
//!
//! `serde_json` keeps insertion order in this workspace (`preserve_order`),
//! so every object we build is assembled here with its keys sorted: the
//! bytes of a params object are then a function of its content alone.

use serde_json::{Map, Value};

/// An object of `pairs` with its keys in byte order.
pub fn object<K: Into<String>>(pairs: Vec<(K, Value)>) -> Value {
    let mut pairs: Vec<(String, Value)> = pairs.into_iter().map(|(k, v)| (k.into(), v)).collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    Value::Object(pairs.into_iter().collect::<Map<String, Value>>())
}

/// A copy of `value` with the keys of every object sorted, recursively.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => object(map.iter().map(|(k, v)| (k.clone(), sorted(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_out_sorted_at_every_level() {
        let value: Value =
            serde_json::from_str(r#"{"b":1,"a":{"d":[{"z":0,"y":1}],"c":2}}"#).expect("json");
        assert_eq!(
            serde_json::to_string(&sorted(&value)).expect("text"),
            r#"{"a":{"c":2,"d":[{"y":1,"z":0}]},"b":1}"#
        );
        let built = object(vec![("z", Value::Null), ("a", Value::Null)]);
        assert_eq!(
            serde_json::to_string(&built).expect("text"),
            r#"{"a":null,"z":null}"#
        );
    }
}
