//! The input fingerprint behind idempotency: the same key with the same input replays, with
//! other input it is a conflict.

use serde_json::Value;

use crate::JobKind;

/// SHA-256 (hex) over the canonical form `kind "\n" json`, where the JSON has its object keys
/// sorted and no insignificant white space (serde_json's map is ordered by key), so
/// `{"a":1,"b":2}` and `{ "b": 2, "a": 1 }` are the same input.
pub fn fingerprint(kind: JobKind, input: &Value) -> String {
    horst_store::digest::sha256_hex(format!("{}\n{}", kind.as_str(), canonical(input)))
}

fn canonical(v: &Value) -> String {
    // serde_json::Map is a BTreeMap unless the `preserve_order` feature is on; sort anyway
    // so the fingerprint cannot change if some dependency turns that feature on.
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", inner.join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_and_spacing_do_not_matter() {
        let a: Value =
            serde_json::from_str(r#"{"map":"x","replay":{"seed":1,"actions":[]}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{ "replay": {"actions": [], "seed": 1}, "map": "x" }"#)
                .unwrap();
        assert_eq!(
            fingerprint(JobKind::Simulate, &a),
            fingerprint(JobKind::Simulate, &b)
        );
    }

    #[test]
    fn kind_and_values_matter() {
        let a = json!({"map": "x"});
        assert_ne!(
            fingerprint(JobKind::Simulate, &a),
            fingerprint(JobKind::Submit, &a)
        );
        assert_ne!(
            fingerprint(JobKind::Playtest, &json!({"map": "x", "seed": 1})),
            fingerprint(JobKind::Playtest, &json!({"map": "x", "seed": 2}))
        );
        assert_eq!(fingerprint(JobKind::Playtest, &a).len(), 64);
    }
}
