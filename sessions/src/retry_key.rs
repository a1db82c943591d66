//! The retry keys of horst's extensions to the bridge API: `batchId` of `/ops` and
//! `idempotencyKey` of a session create. Both follow one rule, so a host makes them alike.

use serde_json::Value;

use crate::error::ProtocolError;

/// Longest retry key, in characters.
pub const MAX_RETRY_KEY_CHARS: usize = 64;

/// The optional retry key `field` of `body`: 1-64 characters of `[A-Za-z0-9_-]`, or absent
/// (`null` counts as absent); anything else is `400 bad_request` naming the rule and `resent`
/// (when the same key is to be sent again).
pub fn parse(body: &Value, field: &str, resent: &str) -> Result<Option<String>, ProtocolError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(key)) if is_retry_key(key) => Ok(Some(key.clone())),
        Some(_) => Err(ProtocolError::bad_request(format!(
            "{field} must be a string of 1-{MAX_RETRY_KEY_CHARS} characters of [A-Za-z0-9_-] \
             (e.g. a UUID), the same on every resend of {resent}; or leave it out"
        ))),
    }
}

/// The optional `idempotencyKey` of a `POST /bridge/sessions` body (horst's extension).
pub fn create_key(body: &Value) -> Result<Option<String>, ProtocolError> {
    parse(body, "idempotencyKey", "one create")
}

fn is_retry_key(key: &str) -> bool {
    (1..=MAX_RETRY_KEY_CHARS).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_create_key_is_optional_and_checked() {
        assert_eq!(create_key(&json!({"config": {}})).unwrap(), None);
        assert_eq!(create_key(&json!({"idempotencyKey": null})).unwrap(), None);
        let key = "0f8a-b_C".to_string();
        assert_eq!(
            create_key(&json!({ "idempotencyKey": key })).unwrap(),
            Some(key)
        );
        assert!(create_key(&json!({"idempotencyKey": "x".repeat(64)})).is_ok());
        for bad in [
            json!(""),
            json!("x".repeat(65)),
            json!("a b"),
            json!("é"),
            json!(7),
        ] {
            let e = create_key(&json!({ "idempotencyKey": bad })).unwrap_err();
            assert_eq!(e.status(), 400);
            assert!(
                e.message.contains("idempotencyKey") && e.message.contains("[A-Za-z0-9_-]"),
                "{e}"
            );
        }
    }
}
