//! Job inputs kept once: a map's text and a replay's compact JSON of more than
//! [`INLINE_MAX`] bytes are stored as content-addressed blobs (`blob:<sha256>`, in the
//! queue's slot group) shared by every job that uses them; the job record keeps their
//! SHA-256 (`mapBlob`, `replayBlob` in its `input`) instead of the bytes.
//!
//! Lifetime, crash-safe without reference counts (nothing in Redis runs when a key expires):
//! 1. Before admission the caller writes each blob with `SET NX PX` [`PROVISIONAL`]: a blob
//!    that exists is left as it is, a new one expires by itself if no admission adopts it
//!    (the caller crashed, or admission refused).
//! 2. `admit.lua` (in the same atomic step as the job) refuses if a blob is gone (the caller
//!    writes it again and retries) and extends each blob's expiry to the end of the UTC day
//!    in which the job's record expires at the latest: its wait, a lease and a margin until
//!    it is finished, then `queue.job_retention_hours` ([`Queue::input_keep_ms`]). An
//!    expiry is only ever moved later, so a blob lives as long as the longest-lived job that
//!    uses it and goes with it (within the day).
//! 3. Each extension counts the blob's bytes in the day's `budget:<day>` (the account's
//!    `d:<account>:bytes` and the server's `bytes`), against
//!    `queue.input_bytes_per_account_day` and `queue.input_bytes_per_day`; a blob is
//!    extended (and counted) at most once per day, since its expiry is a day's end. So what
//!    is kept at any time is at most the bytes counted in the last 9 days (7 days of
//!    retention, the day it was counted and the day its expiry rounds up to).
//!
//! Small inputs stay inline in the record (no extra round trip; at most 1 KiB each).

use serde_json::Value;

use crate::contract::JobInput;

/// A map or replay up to this many bytes stays in the job record.
pub const INLINE_MAX: usize = 1024;

/// How long a blob written before its admission lives if no admission adopts it, ms.
pub const PROVISIONAL_MS: u64 = 60_000;

/// An input as admission stores it: the record's `input` JSON, and the blobs it names.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    /// `JobInput`'s JSON with a large map replaced by `""` and `mapBlob`, a large replay by
    /// `replayBlob`.
    pub json: Value,
    /// (SHA-256 hex, bytes) of each blob.
    pub blobs: Vec<(String, String)>,
}

use horst_store::digest::sha256_hex;

/// Splits the large parts of `input` off into blobs.
pub(crate) fn split(input: &JobInput) -> Stored {
    let mut json = input.to_value();
    let mut blobs = Vec::new();
    if input.map.len() > INLINE_MAX {
        let hash = sha256_hex(input.map.as_bytes());
        json["map"] = Value::String(String::new());
        json["mapBlob"] = Value::String(hash.clone());
        blobs.push((hash, input.map.clone()));
    }
    if let Some(replay) = &input.replay {
        let text = replay.to_string();
        if text.len() > INLINE_MAX {
            let hash = sha256_hex(text.as_bytes());
            if let Some(o) = json.as_object_mut() {
                o.remove("replay");
            }
            json["replayBlob"] = Value::String(hash.clone());
            blobs.push((hash, text));
        }
    }
    Stored { json, blobs }
}

/// The blobs a stored input (the record's `input` field) names: (field, SHA-256 hex).
pub(crate) fn named(stored: &str) -> Vec<(&'static str, String)> {
    let Ok(v) = serde_json::from_str::<Value>(stored) else {
        return Vec::new();
    };
    ["mapBlob", "replayBlob"]
        .into_iter()
        .filter_map(|f| v.get(f).and_then(Value::as_str).map(|h| (f, h.to_string())))
        .collect()
}

/// The whole input from a stored one and the bytes of the blobs it names (in the order of
/// [`named`]); `None` if a blob is missing or does not hash to its name.
pub(crate) fn join(stored: &str, bytes: &[Option<String>]) -> Option<JobInput> {
    let mut v: Value = serde_json::from_str(stored).ok()?;
    let names = named(stored);
    if names.len() != bytes.len() {
        return None;
    }
    for ((field, hash), data) in names.iter().zip(bytes) {
        let data = data.as_ref()?;
        if sha256_hex(data.as_bytes()) != *hash {
            return None;
        }
        let o = v.as_object_mut()?;
        o.remove(*field);
        match *field {
            "mapBlob" => {
                o.insert("map".into(), Value::String(data.clone()));
            }
            _ => {
                o.insert("replay".into(), serde_json::from_str(data).ok()?);
            }
        }
    }
    serde_json::from_value(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn large_parts_go_to_blobs_and_come_back_whole() {
        let map = "#".repeat(INLINE_MAX + 1);
        let replay = json!({"seed": 1, "inputs": "R".repeat(INLINE_MAX)});
        let input = JobInput::submit(map.clone(), replay.clone(), "lvl", None);
        let s = split(&input);
        assert_eq!(s.blobs.len(), 2);
        assert_eq!(s.json["map"], json!(""));
        assert!(s.json.get("replay").is_none());
        assert_eq!(s.json["parentRevisionId"], json!(null));
        let stored = s.json.to_string();
        let bytes: Vec<Option<String>> = s.blobs.iter().map(|(_, b)| Some(b.clone())).collect();
        assert_eq!(join(&stored, &bytes), Some(input));
        // A missing or altered blob is not an input.
        assert_eq!(join(&stored, &[Some(map), None]), None);
        assert_eq!(join(&stored, &[Some("x".into()), bytes[1].clone()]), None);
    }

    #[test]
    fn small_inputs_stay_inline() {
        let input = JobInput::simulate("small map", json!({"seed": 2}));
        let s = split(&input);
        assert!(s.blobs.is_empty());
        assert_eq!(s.json, input.to_value());
        assert_eq!(join(&s.json.to_string(), &[]), Some(input));
    }
}
