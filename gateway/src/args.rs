//! Strict argument parsing: unknown fields, wrong types and every limit of the contract are
//! `invalid_input` or `too_large`, checked before any evaluation, quota or storage work.

use serde_json::{Map, Value};

use crate::error::ToolError;

pub const MAX_MAP_BYTES: usize = 256 * 1024;
pub const MAX_REPLAY_BYTES: usize = 1024 * 1024;
pub const MAX_NAME_CHARS: usize = 30;
pub const MAX_ID_CHARS: usize = 64;
pub const RENDER_MAX_WIDTH: i64 = 120;
pub const RENDER_MAX_HEIGHT: i64 = 30;

/// The arguments object, with the set of allowed fields.
pub struct Args<'a> {
    obj: &'a Map<String, Value>,
}

static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();

impl<'a> Args<'a> {
    /// `arguments` may be absent (no arguments); otherwise an object with only `allowed` keys.
    pub fn new(arguments: Option<&'a Value>, allowed: &[&str]) -> Result<Self, ToolError> {
        let obj = match arguments {
            None | Some(Value::Null) => EMPTY.get_or_init(Map::new),
            Some(Value::Object(o)) => o,
            Some(_) => return Err(ToolError::invalid("arguments must be an object")),
        };
        for k in obj.keys() {
            if !allowed.contains(&k.as_str()) {
                let hint = if allowed.is_empty() {
                    "this tool takes no arguments".to_string()
                } else {
                    format!("allowed: {}", allowed.join(", "))
                };
                return Err(ToolError::invalid(format!(
                    "unknown argument `{k}`; {hint}"
                )));
            }
        }
        Ok(Args { obj })
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.obj.get(name).filter(|v| !v.is_null())
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    fn required(&self, name: &str) -> Result<&'a Value, ToolError> {
        self.get(name)
            .ok_or_else(|| ToolError::invalid(format!("`{name}` is required")))
    }

    fn string(&self, name: &str) -> Result<Option<&'a str>, ToolError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(ToolError::invalid(format!("`{name}` must be a string"))),
        }
    }

    /// `map`: non-empty, at most 256 KiB of UTF-8.
    pub fn map(&self) -> Result<&'a str, ToolError> {
        self.required("map")?;
        let map = self.string("map")?.unwrap_or_default();
        if map.is_empty() {
            return Err(ToolError::invalid("`map` must not be empty"));
        }
        if map.len() > MAX_MAP_BYTES {
            return Err(ToolError::too_large(format!(
                "`map` is {} bytes; at most {MAX_MAP_BYTES} bytes (256 KiB) of UTF-8 are allowed",
                map.len()
            ))
            .with("limit", MAX_MAP_BYTES)
            .with("size", map.len()));
        }
        Ok(map)
    }

    /// `replay`: at most 1 MiB as compact JSON, then the engine's strict parser (fields,
    /// ranges, 36,000 actions, 36,000 ticks).
    pub fn replay(&self) -> Result<(horst_engine::Replay, &'a Value), ToolError> {
        let value = self.required("replay")?;
        let compact = serde_json::to_vec(value)
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        if compact > MAX_REPLAY_BYTES {
            return Err(ToolError::too_large(format!(
                "`replay` is {compact} bytes as compact JSON; at most {MAX_REPLAY_BYTES} (1 MiB) are allowed"
            ))
            .with("limit", MAX_REPLAY_BYTES)
            .with("size", compact));
        }
        let replay = horst_engine::parse_replay(value).map_err(ToolError::from)?;
        Ok((replay, value))
    }

    /// A level name: 1-30 letters, digits or hyphens.
    pub fn name(&self, field: &str) -> Result<&'a str, ToolError> {
        self.required(field)?;
        let s = self.string(field)?.unwrap_or_default();
        if s.is_empty()
            || s.chars().count() > MAX_NAME_CHARS
            || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            return Err(ToolError::invalid(format!(
                "`{field}` must be 1-{MAX_NAME_CHARS} letters, digits or hyphens"
            )));
        }
        Ok(s)
    }

    /// An id (`revisionId`, `parentRevisionId`, `jobId`, `idempotencyKey`): 1-64 ASCII letters,
    /// digits, dots, underscores or hyphens.
    pub fn id(&self, field: &str) -> Result<Option<&'a str>, ToolError> {
        let Some(s) = self.string(field)? else {
            return Ok(None);
        };
        if !valid_id(s) {
            return Err(ToolError::invalid(format!(
                "`{field}` must be 1-{MAX_ID_CHARS} ASCII letters, digits, dots, underscores or hyphens"
            )));
        }
        Ok(Some(s))
    }

    pub fn required_id(&self, field: &str) -> Result<&'a str, ToolError> {
        self.required(field)?;
        self.id(field)?
            .ok_or_else(|| ToolError::invalid(format!("`{field}` is required")))
    }

    /// An integer in `min..=max`.
    pub fn int(&self, field: &str, min: i64, max: i64) -> Result<Option<i64>, ToolError> {
        let Some(v) = self.get(field) else {
            return Ok(None);
        };
        match v.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(ToolError::invalid(format!(
                "`{field}` must be an integer {min} to {max}"
            ))),
        }
    }

    pub fn required_int(&self, field: &str, min: i64, max: i64) -> Result<i64, ToolError> {
        self.required(field)?;
        self.int(field, min, max)?
            .ok_or_else(|| ToolError::invalid(format!("`{field}` is required")))
    }

    /// An optional string field (no content checks; callers clean and bound it).
    pub fn text(&self, field: &str) -> Result<Option<&'a str>, ToolError> {
        self.string(field)
    }

    pub fn required_text(&self, field: &str) -> Result<&'a str, ToolError> {
        self.required(field)?;
        Ok(self.string(field)?.unwrap_or_default())
    }

    /// An optional string that must be one of `choices`.
    pub fn choice(
        &self,
        field: &str,
        choices: &[&'static str],
    ) -> Result<Option<&'static str>, ToolError> {
        let Some(s) = self.string(field)? else {
            return Ok(None);
        };
        choices
            .iter()
            .find(|c| **c == s)
            .copied()
            .map(Some)
            .ok_or_else(|| {
                ToolError::invalid(format!("`{field}` must be one of: {}", choices.join(", ")))
            })
    }

    pub fn boolean(&self, field: &str) -> Result<Option<bool>, ToolError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(ToolError::invalid(format!(
                "`{field}` must be true or false"
            ))),
        }
    }

    pub fn offset(&self) -> Result<usize, ToolError> {
        Ok(self.int("offset", 0, 1_000_000_000)?.unwrap_or(0) as usize)
    }
}

pub fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID_CHARS
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: &Value, allowed: &[&str]) -> Result<(), ToolError> {
        Args::new(Some(v), allowed).map(|_| ())
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(args(&json!({"map": "x"}), &["map"]).is_ok());
        assert_eq!(
            args(&json!({"mapp": "x"}), &["map"]).unwrap_err().code,
            "invalid_input"
        );
        assert_eq!(
            args(&json!([1]), &["map"]).unwrap_err().code,
            "invalid_input"
        );
        assert!(Args::new(None, &[]).is_ok());
    }

    #[test]
    fn map_edges() {
        let ok = json!({"map": "a".repeat(MAX_MAP_BYTES)});
        assert!(Args::new(Some(&ok), &["map"]).unwrap().map().is_ok());
        let big = json!({"map": "a".repeat(MAX_MAP_BYTES + 1)});
        assert_eq!(
            Args::new(Some(&big), &["map"])
                .unwrap()
                .map()
                .unwrap_err()
                .code,
            "too_large"
        );
        let empty = json!({"map": ""});
        assert_eq!(
            Args::new(Some(&empty), &["map"])
                .unwrap()
                .map()
                .unwrap_err()
                .code,
            "invalid_input"
        );
        let num = json!({"map": 5});
        assert_eq!(
            Args::new(Some(&num), &["map"])
                .unwrap()
                .map()
                .unwrap_err()
                .code,
            "invalid_input"
        );
    }

    #[test]
    fn name_and_id_edges() {
        let a = json!({"name": "a".repeat(30), "id": "a.b_c-".repeat(10) + "abcd"});
        let a = Args::new(Some(&a), &["name", "id"]).unwrap();
        assert!(a.name("name").is_ok());
        assert_eq!(a.id("id").unwrap().unwrap().len(), 64);
        let b = json!({"name": "a".repeat(31), "id": "a".repeat(65)});
        let b = Args::new(Some(&b), &["name", "id"]).unwrap();
        assert!(b.name("name").is_err());
        assert!(b.id("id").is_err());
        let c = json!({"name": "a_b", "id": "ä"});
        let c = Args::new(Some(&c), &["name", "id"]).unwrap();
        assert!(c.name("name").is_err());
        assert!(c.id("id").is_err());
    }
}
