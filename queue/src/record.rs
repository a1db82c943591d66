//! The job record as stored in `job:<id>` and as callers see it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::contract::{FailureCode, JobInput, JobResult, Publication};
use crate::JobKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<JobState> {
        Some(match s {
            "queued" => JobState::Queued,
            "running" => JobState::Running,
            "succeeded" => JobState::Succeeded,
            "failed" => JobState::Failed,
            "cancelled" => JobState::Cancelled,
            _ => return None,
        })
    }

    pub fn is_final(self) -> bool {
        matches!(
            self,
            JobState::Succeeded | JobState::Failed | JobState::Cancelled
        )
    }
}

/// Why a job failed: a contract error code, a message that says what to do, details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub code: FailureCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
}

impl Failure {
    pub fn new(code: FailureCode, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
            details: Value::Null,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobRecord {
    pub id: String,
    pub kind: JobKind,
    pub account: String,
    pub trust: u8,
    pub state: JobState,
    pub idempotency_key: String,
    #[serde(skip)]
    pub input: JobInput,
    pub created_at_ms: u64,
    pub started_at_ms: Option<u64>,
    pub finished_at_ms: Option<u64>,
    pub result: Option<JobResult>,
    pub failure: Option<Failure>,
    /// What the caller of a won submission did with it (`publish.lua`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publication: Option<Publication>,
    pub reserved_seconds: u64,
    pub charged_seconds: u64,
    pub worker: Option<String>,
    /// The id of the HTTP request that admitted it (`X-Request-Id`); none for jobs admitted
    /// outside a request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// A running job's latest progress, as its worker wrote it (at most 2 s old).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<JobProgress>,
    /// Handed to an idle slot by its admission (admit.lua's `handed` mark) and not yet taken
    /// up: `running` and named for the slot, which has not started it (and, should its worker
    /// die, it goes back to its lane uncharged).
    #[serde(skip)]
    pub handed: bool,
}

/// How far a running planner search got: what `get_submission` of a running playtest
/// carries as `progress`, written by its worker at most every 2 s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobProgress {
    /// Since the search started, s (one decimal).
    pub elapsed_seconds: f64,
    /// Search states expanded so far.
    pub states_explored: u64,
    /// The smallest distance to a nest reached so far, in the planner's own measure (tiles
    /// of the relaxed route; 0 = at the nest); null before the first state is measured.
    pub best_distance: Option<u32>,
    /// The refinement stage (0 = the coarsest).
    pub stage: usize,
    /// The most memory the search has held so far, MiB (rounded up): what the planner's
    /// budget (`worker.job_memory_mib`; the search stops at it: `memory_limit`) is measured against.
    /// Absent in the progress of workers older than this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_mib: Option<u64>,
}

/// The queued record's packed field (admit.lua; helpers.lua's `PACKED_AT`): the fields an
/// admission writes once and nothing changes afterwards, their values packed by Redis's
/// cmsgpack, one string after another in [`PACKED_FIELDS`]' order. The previous release wrote
/// each as a field of its own, and so does this one with `queue.write_previous_forms`: every
/// reader reads both forms, and a named field wins over the packed one (detach.lua writes
/// `waiter` by name over a packed record's).
pub const PACKED_FIELD: &str = "p";

/// The names of the packed field's values, in their order (helpers.lua's `PACKED_AT`; a test
/// compares them).
pub const PACKED_FIELDS: [&str; 14] = [
    "account", "day", "idem", "waiter", "deadline", "exec_ms", "reserved", "id", "kind", "trust",
    "input", "created", "request", "fp",
];

/// One string as Redis's cmsgpack packs it: a fixstr under 32 bytes, else str8, str16 or
/// str32, then the bytes.
fn pack_str(out: &mut Vec<u8>, v: &[u8]) {
    let n = v.len();
    if n < 32 {
        out.push(0xa0 | n as u8);
    } else if let Ok(n) = u8::try_from(n) {
        out.extend_from_slice(&[0xd9, n]);
    } else if let Ok(n) = u16::try_from(n) {
        out.push(0xda);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
    out.extend_from_slice(v);
}

/// The packed field's values but for the two clock texts only admit.lua knows (the 5th,
/// `deadline`, and the 12th, `created`), packed as cmsgpack packs them, in the three parts
/// around those texts (admit.lua's ARGV[6], ARGV[8], ARGV[26]): the script puts each text in
/// with its header, and the field is the bytes `cmsgpack.pack` makes of all 14 values.
/// `values`: [`PACKED_FIELDS`]' values in their order, the two clock texts left out (12).
pub(crate) fn packed_parts(values: [&[u8]; 12]) -> [Vec<u8>; 3] {
    let mut parts: [Vec<u8>; 3] = Default::default();
    for (i, v) in values.iter().enumerate() {
        // account, day, idem, waiter | exec_ms, reserved, id, kind, trust, input | request, fp
        let part = match i {
            0..=3 => 0,
            4..=9 => 1,
            _ => 2,
        };
        pack_str(&mut parts[part], v);
    }
    parts
}

/// The values of a packed field (`None`: not a packed field this release reads). A later
/// release may append values: only the first of [`PACKED_FIELDS`]' length are read.
pub(crate) fn unpack(bytes: &[u8]) -> Option<Vec<String>> {
    let mut de = rmp_serde::Deserializer::new(bytes);
    let mut values = Vec::with_capacity(PACKED_FIELDS.len());
    while values.len() < PACKED_FIELDS.len() {
        match String::deserialize(&mut de) {
            Ok(v) => values.push(v),
            Err(_) => break,
        }
    }
    (!values.is_empty()).then_some(values)
}

/// A record's fields as HGETALL gives them (values as bytes: the packed field is binary),
/// with the packed values by their names: the named form whichever form was stored.
pub(crate) fn named_fields(raw: Vec<(String, Vec<u8>)>) -> Vec<(String, String)> {
    let mut fields = Vec::with_capacity(raw.len() + PACKED_FIELDS.len());
    let mut packed = None;
    for (name, value) in raw {
        if name == PACKED_FIELD {
            packed = Some(value);
        } else if let Ok(value) = String::from_utf8(value) {
            fields.push((name, value));
        }
    }
    let values = packed.as_deref().and_then(unpack).unwrap_or_default();
    for (name, value) in PACKED_FIELDS.iter().zip(values) {
        if !fields.iter().any(|(k, _)| k == name) {
            fields.push(((*name).to_string(), value));
        }
    }
    fields
}

/// The fields `names` of the job record at `key`, in either form: one HMGET of the packed
/// field and the names. `None` for a field the record does not have.
pub async fn job_fields(
    conn: &mut impl redis::aio::ConnectionLike,
    key: &str,
    names: &[&str],
) -> redis::RedisResult<Vec<Option<String>>> {
    let values: Vec<Option<Vec<u8>>> = job_fields_cmd(key, names).query_async(conn).await?;
    Ok(job_fields_of(names, values))
}

/// The HMGET [`job_fields`] sends (for a pipeline: [`job_fields_of`] reads its reply).
pub(crate) fn job_fields_cmd(key: &str, names: &[&str]) -> redis::Cmd {
    let mut cmd = redis::cmd("HMGET");
    cmd.arg(key).arg(PACKED_FIELD).arg(names);
    cmd
}

/// The values of `names` from the reply of [`job_fields_cmd`].
pub(crate) fn job_fields_of(names: &[&str], values: Vec<Option<Vec<u8>>>) -> Vec<Option<String>> {
    let mut values = values.into_iter();
    let unpacked = values
        .next()
        .flatten()
        .as_deref()
        .and_then(unpack)
        .unwrap_or_default();
    names
        .iter()
        .map(|name| {
            values
                .next()
                .flatten()
                .and_then(|v| String::from_utf8(v).ok())
                .or_else(|| {
                    let at = PACKED_FIELDS.iter().position(|f| f == name)?;
                    unpacked.get(at).cloned()
                })
        })
        .collect()
}

impl JobRecord {
    /// From HGETALL; `None` for a missing (or unreadable) record.
    pub(crate) fn from_fields(fields: Vec<(String, String)>) -> Option<JobRecord> {
        if fields.is_empty() {
            return None;
        }
        let get = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let num = |name: &str| get(name).and_then(|v| v.parse::<u64>().ok());
        let kind = JobKind::parse(get("kind")?)?;
        Some(JobRecord {
            id: get("id")?.to_string(),
            kind,
            account: get("account")?.to_string(),
            trust: get("trust").and_then(|t| t.parse().ok()).unwrap_or(0),
            state: JobState::parse(get("state")?)?,
            idempotency_key: get("idem").unwrap_or_default().to_string(),
            input: get("input")
                .and_then(|v| serde_json::from_str(v).ok())
                .unwrap_or_default(),
            created_at_ms: num("created").unwrap_or(0),
            started_at_ms: num("started"),
            finished_at_ms: num("finished"),
            result: get("result").and_then(|v| JobResult::parse(kind, v)),
            failure: get("failure").and_then(|v| serde_json::from_str(v).ok()),
            publication: get("publication")
                .and_then(|v| serde_json::from_str(v).ok())
                .or_else(|| get("result").and_then(legacy_publication)),
            reserved_seconds: num("reserved").unwrap_or(0),
            charged_seconds: num("charged").unwrap_or(0),
            worker: get("worker").map(str::to_string),
            request_id: get("request").filter(|r| !r.is_empty()).map(str::to_string),
            progress: get("progress").and_then(|v| serde_json::from_str(v).ok()),
            handed: get("handed").is_some(),
        })
    }
}

/// A record written before `publish.lua` kept what became of a submission inside its result
/// (`revisionId`, `unpublished`, `revisionError`): read it from there, so a retry of such a
/// job never stores its revision a second time.
fn legacy_publication(result: &str) -> Option<Publication> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Legacy {
        revision_id: Option<String>,
        unpublished: Option<String>,
        revision_error: Option<LegacyError>,
    }
    #[derive(Deserialize)]
    struct LegacyError {
        code: String,
        message: String,
    }
    let legacy: Legacy = serde_json::from_str(result).ok()?;
    if let Some(revision_id) = legacy.revision_id {
        return Some(Publication::Stored { revision_id });
    }
    if let Some(reason) = legacy.unpublished {
        return Some(Publication::Unpublished { reason });
    }
    legacy.revision_error.map(|e| Publication::Refused {
        code: e.code,
        message: e.message,
        details: serde_json::Map::new(),
    })
}

/// What `complete.lua` publishes on a job's completion channel: its final state, so a waiter
/// that holds the record of the admission finishes it without reading it back.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Finished {
    state: String,
    started: Option<u64>,
    finished: u64,
    charged: Option<u64>,
    worker: Option<String>,
    /// The result's JSON, `""` for none.
    #[serde(default)]
    result: String,
    /// The failure's JSON, `""` for none.
    #[serde(default)]
    failure: String,
}

impl Finished {
    /// `None` for any other message on the channel (a state word: read the record).
    pub(crate) fn parse(payload: &str) -> Option<Finished> {
        if !payload.starts_with('{') {
            return None;
        }
        let f: Finished = serde_json::from_str(payload).ok()?;
        JobState::parse(&f.state)
            .filter(|s| s.is_final())
            .map(|_| f)
    }

    /// The message complete.lua publishes for a job whose claim the worker holds, but for
    /// the time it finished: the script appends that (ms) and the closing `}`, so Redis
    /// builds no JSON (cjson.encode of the message cost it about 18,000 instructions a job).
    pub(crate) fn prefix(
        state: &str,
        started: u64,
        charged: u64,
        worker: &str,
        result: &str,
        failure: &str,
    ) -> String {
        #[derive(Serialize)]
        struct Known<'a> {
            state: &'a str,
            started: u64,
            charged: u64,
            worker: &'a str,
            result: &'a str,
            failure: &'a str,
        }
        let mut json = serde_json::to_string(&Known {
            state,
            started,
            charged,
            worker,
            result,
            failure,
        })
        .unwrap_or_default();
        json.pop(); // its closing brace
        json.push_str(",\"finished\":");
        json
    }

    /// The admitted record `rec` as it ended.
    pub(crate) fn apply(self, mut rec: JobRecord) -> JobRecord {
        rec.state = JobState::parse(&self.state).unwrap_or(rec.state);
        rec.started_at_ms = self.started;
        rec.finished_at_ms = Some(self.finished);
        rec.charged_seconds = self.charged.unwrap_or(0);
        rec.worker = self.worker;
        rec.result = (!self.result.is_empty())
            .then(|| JobResult::parse(rec.kind, &self.result))
            .flatten();
        rec.failure = (!self.failure.is_empty())
            .then(|| serde_json::from_str(&self.failure).ok())
            .flatten();
        rec
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// helpers.lua's PACKED_AT is this side's PACKED_FIELDS (a drift garbles every packed
    /// record), and its first 13 are CLAIM_FIELDS after the state, in order (claim_values
    /// gives a packed record's as they come).
    #[test]
    fn the_packed_fields_are_the_lua_ones() {
        let helpers = include_str!("../lua/helpers.lua");
        let start = helpers.find("local PACKED_AT = {").expect("PACKED_AT") + 19;
        let end = start + helpers[start..].find('}').expect("its end");
        let mut lua: Vec<(usize, &str)> = helpers[start..end]
            .split(',')
            .map(|pair| {
                let (name, at) = pair.split_once('=').expect("name = index");
                (at.trim().parse().expect("an index"), name.trim())
            })
            .collect();
        lua.sort();
        let names: Vec<&str> = lua.iter().map(|(_, n)| *n).collect();
        assert_eq!(names, PACKED_FIELDS);
        assert!(lua.iter().enumerate().all(|(i, (at, _))| *at == i + 1));
        assert_eq!(crate::scripts::CLAIM_FIELDS[1..], PACKED_FIELDS[..13]);
    }

    /// A packed field as cmsgpack writes it (fixstr, str8, str16) reads back by its names;
    /// a named field wins over the packed one; junk in it reads as no values.
    #[test]
    fn a_packed_field_reads_by_its_names() {
        fn str_of(v: &str) -> Vec<u8> {
            let mut out = match v.len() {
                n if n < 32 => vec![0xa0 | n as u8],
                n if n < 256 => vec![0xd9, n as u8],
                n => vec![0xda, (n >> 8) as u8, n as u8],
            };
            out.extend_from_slice(v.as_bytes());
            out
        }
        let long = "x".repeat(300);
        let values: Vec<String> = PACKED_FIELDS
            .iter()
            .map(|f| match *f {
                "input" => long.clone(),
                "fp" => "f".repeat(64),
                "waiter" => "api-1".into(),
                "trust" => "1".into(),
                "kind" => "simulate".into(),
                other => format!("{other}-v"),
            })
            .collect();
        let packed: Vec<u8> = values.iter().flat_map(|v| str_of(v)).collect();
        let raw = vec![
            ("state".to_string(), b"queued".to_vec()),
            ("waiter".to_string(), b"".to_vec()),
            (PACKED_FIELD.to_string(), packed.clone()),
        ];
        let fields = named_fields(raw);
        let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("input"), Some(long.as_str()));
        assert_eq!(get("account"), Some("account-v"));
        assert_eq!(get("waiter"), Some(""), "the named field wins");
        assert_eq!(fields.iter().filter(|(n, _)| n == "waiter").count(), 1);
        let rec = JobRecord::from_fields(fields.clone()).expect("a record");
        assert_eq!((rec.id.as_str(), rec.trust), ("id-v", 1));
        let got = job_fields_of(
            &["state", "kind", "waiter", "worker"],
            vec![
                Some(packed),
                Some(b"queued".to_vec()),
                None,
                Some(b"".to_vec()),
                None,
            ],
        );
        assert_eq!(
            got,
            [
                Some("queued".into()),
                Some("simulate".into()),
                Some("".into()),
                None
            ]
        );
        let junk = job_fields_of(&["kind"], vec![Some(vec![0xc1, 0xff]), None]);
        assert_eq!(junk, [None]);
    }

    /// What complete.lua publishes from the worker's prefix (the prefix, the finish time,
    /// `}`) is the message a waiter reads, quotes and all.
    #[test]
    fn a_completions_prefix_with_its_finish_time_is_the_message() {
        let result = r#"{"won":true,"note":"a \"quoted\" word"}"#;
        let payload = format!(
            "{}{}}}",
            Finished::prefix("succeeded", 1_765_000_000_000, 20, "w-1:0", result, ""),
            1_765_000_000_123u64
        );
        let f = Finished::parse(&payload).expect("the message parses");
        assert_eq!(f.state, "succeeded");
        assert_eq!(f.started, Some(1_765_000_000_000));
        assert_eq!(f.finished, 1_765_000_000_123);
        assert_eq!(f.charged, Some(20));
        assert_eq!(f.worker.as_deref(), Some("w-1:0"));
        assert_eq!(f.result, result);
        assert_eq!(f.failure, "");
    }
}
