//! Each tool's arguments as a type. serde reads them strictly (`deny_unknown_fields`), the
//! JSON Schema that `tools/list` serves is derived from the same types (schemars), and each
//! of the contract's input limits is written once, in the value type that carries it: its
//! schema bound and its check come from the same constant.
//!
//! Reading order, all before any evaluation, quota or storage work: `arguments` must be an
//! object, and `null` counts as absent; an unknown field, then a missing required one, is
//! named together with what the tool takes; then each value is read by its type, whose
//! message says what it must be; last, the size limits that have their own code
//! (`too_large`).

use std::borrow::Cow;

use schemars::generate::SchemaSettings;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::{board, contact, text};

pub const MAX_MAP_BYTES: usize = 256 * 1024;
pub const MAX_REPLAY_BYTES: usize = 1024 * 1024;
pub const MAX_NAME_CHARS: usize = 30;
pub const MAX_ID_CHARS: usize = 64;
pub const RENDER_MAX_WIDTH: i64 = 120;
pub const RENDER_MAX_HEIGHT: i64 = 30;
/// The largest map (the engine's `limits().width.max` and `.height.max`; a test holds them
/// equal): a window's `x` and `y` may start before the map by up to one window less a tile
/// and must start inside its largest extent, so every allowed window can overlap some map.
pub const MAP_MAX_WIDTH: i64 = 512;
pub const MAP_MAX_HEIGHT: i64 = 128;
/// `offset` of the paged tools: far past any page that exists, small enough for any index.
pub const MAX_OFFSET: i64 = 1_000_000_000;
/// How much of a name the caller sent an error echoes back.
pub const ECHO_MAX_CHARS: usize = 64;

/// A tool's arguments.
pub trait ToolArgs: DeserializeOwned + JsonSchema {
    /// The limits that are not about a value's shape (sizes: `too_large`).
    fn check(&self) -> Result<(), ToolError> {
        Ok(())
    }
}

/// The value type of one argument: how it is read from JSON, and what it must be.
trait ArgValue: Sized {
    /// Completes "`field` must be ...".
    fn expected() -> String;
    fn from_json(v: Value) -> Option<Self>;
    /// Completes "`field` must be ..." for the refused value `v` (by default `expected()`).
    fn refused(_v: &Value) -> String {
        Self::expected()
    }
}

/// "..., written as a JSON number (25, not "25")" when `v` is a string holding JSON that
/// would be accepted (`"25"`, `"true"`): some tool-calling layers send every value as a
/// string, and "must be an integer" read as if the caller had sent one. `None` otherwise.
fn written_as_string<T: ArgValue>(v: &Value) -> Option<String> {
    let Value::String(s) = v else { return None };
    let t = s.trim();
    let inner = serde_json::from_str::<Value>(t).ok()?;
    let what = match inner {
        Value::Number(_) => "a JSON number",
        Value::Bool(_) => "a JSON boolean",
        _ => return None,
    };
    T::from_json(inner)?;
    let expected = T::expected();
    let shown = crate::text::clip(t, ECHO_MAX_CHARS);
    Some(format!(
        "{expected}, written as {what} ({shown}, not \"{shown}\")"
    ))
}

/// serde reads an [`ArgValue`] from any JSON and fails with its `expected()` text.
macro_rules! deserialize_as_arg_value {
    ($($t:ty),+) => {$(
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = Value::deserialize(d)?;
                let refused = <$t as ArgValue>::refused(&v);
                <$t as ArgValue>::from_json(v).ok_or_else(|| D::Error::custom(refused))
            }
        }
    )+};
}

/// The schema of a value type is always written out where it is used, so the field's doc
/// comment becomes its `description`.
macro_rules! inline_schema {
    ($name:expr, $gen:ident => $schema:expr) => {
        fn inline_schema() -> bool {
            true
        }
        fn schema_name() -> Cow<'static, str> {
            $name.into()
        }
        fn json_schema($gen: &mut SchemaGenerator) -> Schema {
            $schema
        }
    };
}

// ---------------------------------------------------------------- value types

/// `map`: the `.map` text, non-empty, at most [`MAX_MAP_BYTES`] of UTF-8.
#[derive(Debug, Clone, PartialEq)]
pub struct MapText(pub String);

impl ArgValue for MapText {
    fn expected() -> String {
        "a non-empty string: the .map text (see get_map_format)".into()
    }
    fn from_json(v: Value) -> Option<Self> {
        match v {
            Value::String(s) if !s.is_empty() => Some(MapText(s)),
            _ => None,
        }
    }
}

impl MapText {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn check(&self, field: &str) -> Result<(), ToolError> {
        let len = self.0.len();
        if len > MAX_MAP_BYTES {
            return Err(ToolError::too_large(format!(
                "`{field}` is {len} bytes; at most {MAX_MAP_BYTES} bytes (256 KiB) of UTF-8 are allowed"
            ))
            .with("limit", MAX_MAP_BYTES)
            .with("size", len));
        }
        Ok(())
    }
}

impl JsonSchema for MapText {
    inline_schema!("MapText", _g => json_schema!({
        "type": "string", "minLength": 1, "maxLength": MAX_MAP_BYTES,
        "description": "The .map text (UTF-8, at most 256 KiB)",
    }));
}

/// `limits` of `get_map_format`, `list_palette` and the format resource: the engine's limits
/// plus the gateway's level name, with both "names" said apart. The engine's `maxNameChars`
/// (kept as it is) is the map's `name:` line, the title players see (1-60 characters); the
/// level name of `submit_level`, `get_level` and `list_threads` is 1-30 letters, digits or
/// hyphens. Agents read `maxNameChars: 60` as the level name's limit and were refused.
pub fn limits_value() -> Value {
    let engine = horst_engine::limits();
    let title = engine.max_name_chars;
    let limits = GatewayLimits {
        engine,
        max_map_title_chars: title,
        level_name: LevelNameLimits {
            min_chars: 1,
            max_chars: MAX_NAME_CHARS,
            allowed: "ASCII letters, digits and hyphens",
            pattern: format!("^[A-Za-z0-9-]{{1,{MAX_NAME_CHARS}}}$"),
        },
        about: LimitsAbout {
            max_name_chars: format!("the map's `name:` line, the title players see: 1-{title} characters of any text (same as maxMapTitleChars); not the level name"),
            level_name: format!("the `name` argument of submit_level and get_level (and a board thread's level): 1-{MAX_NAME_CHARS} ASCII letters, digits or hyphens"),
        },
    };
    serde_json::to_value(limits).unwrap_or_else(|_| Value::Object(Map::new()))
}

/// [`limits_value`]'s answer: the engine's limits with the gateway's beside them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GatewayLimits {
    #[serde(flatten)]
    engine: horst_engine::Limits,
    max_map_title_chars: usize,
    level_name: LevelNameLimits,
    about: LimitsAbout,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LevelNameLimits {
    min_chars: usize,
    max_chars: usize,
    allowed: &'static str,
    pattern: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LimitsAbout {
    max_name_chars: String,
    level_name: String,
}

/// A level name: 1-30 ASCII letters, digits or hyphens.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelName(pub String);

impl ArgValue for LevelName {
    fn expected() -> String {
        format!("1-{MAX_NAME_CHARS} ASCII letters, digits or hyphens")
    }
    /// Names the first character that is none of them, or the length: "letters" read as
    /// `ä` or `ß` too to the author of a German level name, and the refusal did not say
    /// which character it was (`Käse`, `erste schritte`, `level_1`).
    fn refused(v: &Value) -> String {
        let expected = Self::expected();
        let Value::String(s) = v else {
            return expected;
        };
        if let Some(c) = s
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
        {
            return format!(
                "{expected}; {c:?} (U+{:04X}) is none of them (write umlauts as ae, oe, ue, ss and spaces or underscores as hyphens)",
                u32::from(c)
            );
        }
        match s.chars().count() {
            0 => format!("{expected}; it is empty"),
            n if n > MAX_NAME_CHARS => format!("{expected}; it has {n}"),
            _ => expected,
        }
    }
    fn from_json(v: Value) -> Option<Self> {
        match v {
            Value::String(s) if valid_name(&s) => Some(LevelName(s)),
            _ => None,
        }
    }
}

impl LevelName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl JsonSchema for LevelName {
    inline_schema!("LevelName", _g => json_schema!({
        "type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS,
        "pattern": format!("^[A-Za-z0-9-]{{1,{MAX_NAME_CHARS}}}$"),
        "description": format!("Level name: {}", LevelName::expected()),
    }));
}

pub fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars().count() <= MAX_NAME_CHARS
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// An id (`revisionId`, `parentRevisionId`, `jobId`, `threadId`, `postId`): 1-64 ASCII
/// letters, digits, dots, underscores or hyphens.
#[derive(Debug, Clone, PartialEq)]
pub struct Id(pub String);

impl ArgValue for Id {
    fn expected() -> String {
        format!("1-{MAX_ID_CHARS} ASCII letters, digits, dots, underscores or hyphens")
    }
    fn from_json(v: Value) -> Option<Self> {
        match v {
            Value::String(s) if valid_id(&s) => Some(Id(s)),
            _ => None,
        }
    }
}

impl Id {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn id_schema() -> Schema {
    json_schema!({
        "type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS,
        "pattern": format!("^[A-Za-z0-9._-]{{1,{MAX_ID_CHARS}}}$"),
    })
}

impl JsonSchema for Id {
    inline_schema!("Id", _g => id_schema());
}

pub fn valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID_CHARS
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}

/// `idempotencyKey`: an [`Id`] the caller picks per deliberate attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct IdempotencyKey(pub Id);

impl ArgValue for IdempotencyKey {
    fn expected() -> String {
        Id::expected()
    }
    fn from_json(v: Value) -> Option<Self> {
        Id::from_json(v).map(IdempotencyKey)
    }
}

impl IdempotencyKey {
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl JsonSchema for IdempotencyKey {
    inline_schema!("IdempotencyKey", _g => {
        let mut s = id_schema();
        s.insert(
            "description".into(),
            "Fresh per attempt; reuse only to retry after a lost response".into(),
        );
        s
    });
}

/// An integer in `MIN..=MAX`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Int<const MIN: i64, const MAX: i64>(pub i64);

impl<const MIN: i64, const MAX: i64> ArgValue for Int<MIN, MAX> {
    fn expected() -> String {
        format!("an integer {MIN} to {MAX}")
    }
    /// A number out of range (or with a fraction) is named beside the range: "must be an
    /// integer 1 to 120" alone left the caller to find which of its numbers was off, and by
    /// how much.
    fn refused(v: &Value) -> String {
        match v {
            Value::Number(n) => {
                // A whole number held as a double (`-0`, `121.0`) is named as the integer
                // its sender wrote; beyond 2^53 a double is not one exact integer.
                let shown = match n.as_f64() {
                    Some(f)
                        if !n.is_i64() && !n.is_u64() && f.fract() == 0.0 && f.abs() < 9.0e15 =>
                    {
                        (f as i64).to_string()
                    }
                    _ => n.to_string(),
                };
                format!(
                    "{}, got {}",
                    Self::expected(),
                    crate::text::clip(&shown, ECHO_MAX_CHARS)
                )
            }
            _ => written_as_string::<Self>(v).unwrap_or_else(Self::expected),
        }
    }
    fn from_json(v: Value) -> Option<Self> {
        // JSON Schema's `integer` is any number with a zero fraction, so `1.0` and `1e2`
        // are integers too (clients that hold every number as a double send them so).
        let n = v.as_i64().or_else(|| {
            let f = v.as_f64()?;
            (f.fract() == 0.0 && f >= MIN as f64 && f <= MAX as f64).then_some(f as i64)
        })?;
        (MIN..=MAX).contains(&n).then_some(Int(n))
    }
}

impl<'de, const MIN: i64, const MAX: i64> Deserialize<'de> for Int<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let refused = Self::refused(&v);
        Self::from_json(v).ok_or_else(|| D::Error::custom(refused))
    }
}

impl<const MIN: i64, const MAX: i64> JsonSchema for Int<MIN, MAX> {
    inline_schema!("Int", _g => json_schema!({ "type": "integer", "minimum": MIN, "maximum": MAX }));
}

/// `offset` of a paged tool.
pub type Offset = Int<0, MAX_OFFSET>;

/// A replay seed.
pub type Seed = Int<0, { u32::MAX as i64 }>;

/// A plain-text field of at most `MAX` characters. Its cleaner (`text::clean_*`) removes
/// control and invisible characters and then checks the length, so reading only needs a
/// string.
#[derive(Debug, Clone, PartialEq)]
pub struct Text<const MAX: usize>(pub String);

impl<const MAX: usize> ArgValue for Text<MAX> {
    fn expected() -> String {
        format!("a string of 1-{MAX} characters")
    }
    fn from_json(v: Value) -> Option<Self> {
        match v {
            Value::String(s) => Some(Text(s)),
            _ => None,
        }
    }
}

impl<const MAX: usize> Text<MAX> {
    pub const MAX_CHARS: usize = MAX;

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de, const MAX: usize> Deserialize<'de> for Text<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Self::from_json(v).ok_or_else(|| D::Error::custom(Self::expected()))
    }
}

impl<const MAX: usize> JsonSchema for Text<MAX> {
    inline_schema!("Text", _g => json_schema!({ "type": "string", "minLength": 1, "maxLength": MAX }));
}

/// `true` or `false`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flag(pub bool);

impl ArgValue for Flag {
    fn expected() -> String {
        "true or false".into()
    }
    fn refused(v: &Value) -> String {
        written_as_string::<Self>(v).unwrap_or_else(Self::expected)
    }
    fn from_json(v: Value) -> Option<Self> {
        v.as_bool().map(Flag)
    }
}

impl JsonSchema for Flag {
    inline_schema!("Flag", _g => json_schema!({ "type": "boolean" }));
}

/// `replay`: `{seed, actions}` within the engine's limits. The schema is written from the
/// engine's own limits; the engine's strict parser checks it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayArg(pub Value);

impl ArgValue for ReplayArg {
    fn expected() -> String {
        "an object {\"seed\": ..., \"actions\": [...]}".into()
    }
    fn from_json(mut v: Value) -> Option<Self> {
        // `seed`, `action` and `ticks` written as `1.0` or `6e1` are integers (the engine
        // reads them so); stored, hashed for idempotency and run as plain integers.
        if let Some(o) = v.as_object_mut() {
            whole(o.get_mut("seed"));
            if let Some(Value::Array(steps)) = o.get_mut("actions") {
                for step in steps.iter_mut().filter_map(Value::as_object_mut) {
                    whole(step.get_mut("action"));
                    whole(step.get_mut("ticks"));
                }
            }
        }
        Some(ReplayArg(v))
    }
}

/// A number without a fraction (`60.0`, `6e1`) becomes that integer: JSON has one number
/// type, and JSON Schema's `integer` counts them so (as [`Int`] reads them). A fraction, a
/// negative or a huge number stays as it is, for the engine's parser to refuse with its
/// message. Done here, not in the engine's parser: its source is part of `engineVersion`.
fn whole(v: Option<&mut Value>) {
    if let Some(v) = v {
        if let Some(f) = v.as_f64().filter(|_| v.is_f64()) {
            if f.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&f) {
                *v = (f as u64).into();
            }
        }
    }
}

impl ReplayArg {
    fn check(&self, field: &str) -> Result<(), ToolError> {
        let compact = serde_json::to_vec(&self.0)
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        if compact > MAX_REPLAY_BYTES {
            return Err(ToolError::too_large(format!(
                "`{field}` is {compact} bytes as compact JSON; at most {MAX_REPLAY_BYTES} (1 MiB) are allowed"
            ))
            .with("limit", MAX_REPLAY_BYTES)
            .with("size", compact));
        }
        // The contract says the action indices are "stable for replay version 1
        // (`replay.version` is a format number)", so a reader may send that number; a replay
        // is only `{seed, actions}` ("only the fields seed and actions are allowed"), and the
        // engine's refusal of an unknown field did not say that the version is implied.
        if let Some(version) = self.0.get("version") {
            return Err(ToolError::invalid(format!(
                "`{field}.version` is not sent: a replay is only {{\"seed\", \"actions\"}}, and its format version (1, the one the 20 action indices are stable for) is implied; remove `version` (got {})",
                crate::text::clip(&version.to_string(), ECHO_MAX_CHARS)
            )));
        }
        horst_engine::parse_replay(&self.0).map_err(ToolError::from)?;
        Ok(())
    }
}

impl JsonSchema for ReplayArg {
    inline_schema!("Replay", _g => {
        let r = horst_engine::limits().replay;
        json_schema!({
            "type": "object",
            "description": format!(
                "{{seed, actions:[{{action {}-{}, ticks {}-{}}}]}}; at most 1 MiB of compact JSON, {} actions and {} ticks in total",
                r.action.min, r.action.max, r.ticks.min, r.ticks.max,
                thousands(r.max_actions as u64), thousands(r.max_total_ticks)
            ),
            "additionalProperties": false,
            "required": ["seed", "actions"],
            "properties": {
                "seed": { "type": "integer", "minimum": r.seed.min, "maximum": r.seed.max },
                "actions": {
                    "type": "array", "maxItems": r.max_actions,
                    "items": {
                        "type": "object", "additionalProperties": false,
                        "required": ["action", "ticks"],
                        "properties": {
                            "action": { "type": "integer", "minimum": r.action.min, "maximum": r.action.max },
                            "ticks": { "type": "integer", "minimum": r.ticks.min, "maximum": r.ticks.max },
                        },
                    },
                },
            },
        })
    });
}

/// 36000 -> "36,000".
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

deserialize_as_arg_value!(MapText, LevelName, Id, IdempotencyKey, Flag, ReplayArg);

/// A string argument with a fixed set of values.
macro_rules! choice {
    ($(#[$m:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const NAMES: &'static [&'static str] = &[$($text),+];
            const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl ArgValue for $name {
            fn expected() -> String {
                format!("one of: {}", Self::NAMES.join(", "))
            }
            fn from_json(v: Value) -> Option<Self> {
                let s = v.as_str()?;
                Self::ALL.iter().copied().find(|c| c.as_str() == s)
            }
        }

        deserialize_as_arg_value!($name);

        impl JsonSchema for $name {
            inline_schema!(stringify!($name), _g => json_schema!({ "type": "string", "enum": Self::NAMES }));
        }
    };
}

choice!(
    /// `contact_admin`'s `category`.
    Category { Bug = "bug", Feedback = "feedback", Question = "question", Other = "other" }
);
choice!(
    /// A board thread's kind.
    ThreadKind { Idea = "idea", Level = "level" }
);
choice!(
    /// A board thread's status (set by the operator).
    ThreadStatus { Open = "open", Planned = "planned", Done = "done", Declined = "declined" }
);
choice!(
    /// `list_threads`' order.
    ThreadSort { Recent = "recent", Endorsed = "endorsed" }
);

// ---------------------------------------------------------------- the tools' arguments

/// Tools without arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

impl ToolArgs for NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MapArgs {
    pub map: MapText,
}

impl ToolArgs for MapArgs {
    fn check(&self) -> Result<(), ToolError> {
        self.map.check("map")
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenderMapArgs {
    pub map: MapText,
    /// Left column of the window (0 is the map's left edge; a window partly outside the map is clipped to it)
    pub x: Int<{ 1 - RENDER_MAX_WIDTH }, { MAP_MAX_WIDTH - 1 }>,
    /// Top row of the window (0 is the map's top edge)
    pub y: Int<{ 1 - RENDER_MAX_HEIGHT }, { MAP_MAX_HEIGHT - 1 }>,
    /// Columns in the window
    pub width: Int<1, RENDER_MAX_WIDTH>,
    /// Rows in the window
    pub height: Int<1, RENDER_MAX_HEIGHT>,
    /// true: also a PNG picture of the same window (12 px a tile, a colour per legend entry)
    pub image: Option<Flag>,
}

impl ToolArgs for RenderMapArgs {
    fn check(&self) -> Result<(), ToolError> {
        self.map.check("map")
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GetLevelArgs {
    /// The level's promoted revision (leave it out to read by revisionId alone)
    pub name: Option<LevelName>,
    /// An exact revision
    pub revision_id: Option<Id>,
}

impl ToolArgs for GetLevelArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaborPageArgs {
    /// Start of the page (25 items per page); use nextOffset
    pub offset: Option<Offset>,
}

impl ToolArgs for LaborPageArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlaytestArgs {
    pub map: MapText,
    /// RNG seed (default 1)
    pub seed: Option<Seed>,
    pub idempotency_key: IdempotencyKey,
}

impl ToolArgs for PlaytestArgs {
    fn check(&self) -> Result<(), ToolError> {
        self.map.check("map")
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SimulateArgs {
    pub map: MapText,
    pub replay: ReplayArg,
    pub idempotency_key: IdempotencyKey,
}

impl ToolArgs for SimulateArgs {
    fn check(&self) -> Result<(), ToolError> {
        self.map.check("map")?;
        self.replay.check("replay")
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SubmitArgs {
    pub name: LevelName,
    /// The revision this one improves (same owner and name)
    pub parent_revision_id: Option<Id>,
    pub map: MapText,
    pub replay: ReplayArg,
    pub idempotency_key: IdempotencyKey,
}

impl ToolArgs for SubmitArgs {
    fn check(&self) -> Result<(), ToolError> {
        self.map.check("map")?;
        self.replay.check("replay")
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JobArgs {
    /// The jobId a call returned
    pub job_id: Id,
}

impl ToolArgs for JobArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WithdrawLevelArgs {
    /// Your revision to withdraw
    pub revision_id: Id,
}

impl ToolArgs for WithdrawLevelArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactArgs {
    pub category: Category,
    /// One line, 1-120 characters
    pub subject: Text<{ contact::SUBJECT_MAX_CHARS }>,
    /// Plain text, 1-2000 characters
    pub message: Text<{ contact::MESSAGE_MAX_CHARS }>,
}

impl ToolArgs for ContactArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListThreadsArgs {
    pub kind: Option<ThreadKind>,
    pub level: Option<LevelName>,
    pub status: Option<ThreadStatus>,
    /// recent (default) or endorsed
    pub sort: Option<ThreadSort>,
    /// Start of the page (20 items per page); use nextOffset
    pub offset: Option<Offset>,
}

impl ToolArgs for ListThreadsArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadThreadArgs {
    /// A threadId from list_threads
    pub thread_id: Id,
    /// Start of the page (50 items per page); use nextOffset
    pub offset: Option<Offset>,
}

impl ToolArgs for ReadThreadArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WritePostArgs {
    /// Reply to this thread
    pub thread_id: Option<Id>,
    pub kind: Option<ThreadKind>,
    pub title: Option<Text<{ board::TITLE_MAX_CHARS }>>,
    pub level: Option<LevelName>,
    /// A revision of level you may read
    pub revision_id: Option<Id>,
    pub body: Text<{ board::BODY_MAX_CHARS }>,
}

impl ToolArgs for WritePostArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EndorseArgs {
    /// A threadId from list_threads
    pub thread_id: Id,
    pub endorse: Option<Flag>,
}

impl ToolArgs for EndorseArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WithdrawPostArgs {
    /// Your postId
    pub post_id: Id,
}

impl ToolArgs for WithdrawPostArgs {}

// ---------------------------------------------------------------- schema and reading

/// The `inputSchema` of `T`: derived, then shaped as MCP lists it (no title or meta-schema;
/// `properties` and `required` always present; optional fields without the `null` that
/// schemars adds for `Option`, since a value must have the type when it is sent).
pub fn input_schema<T: ToolArgs>() -> Value {
    let mut schema = inline_generator(SchemaSettings::draft2020_12())
        .into_root_schema_for::<T>()
        .to_value();
    if let Value::Object(root) = &mut schema {
        root.remove("title");
        root.remove("description");
        root.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        root.entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(Value::Object(props)) = root.get_mut("properties") {
            for p in props.values_mut() {
                drop_null(p);
            }
        }
    }
    schema
}

/// Schemas as tools list them: every subschema written out in place, no meta-schema.
pub(crate) fn inline_generator(settings: SchemaSettings) -> SchemaGenerator {
    settings
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator()
}

fn drop_null(p: &mut Value) {
    let Value::Object(p) = p else { return };
    if let Some(Value::Array(types)) = p.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            p.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(choices)) = p.get_mut("enum") {
        choices.retain(|c| !c.is_null());
    }
}

/// Reads a tool's `arguments` as `T`, with `schema` (its [`input_schema`]) naming the fields.
pub fn read<T: ToolArgs>(arguments: Option<&Value>, schema: &Value) -> Result<T, ToolError> {
    let mut obj = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(_) => return Err(ToolError::invalid("arguments must be an object")),
    };
    let props = schema.get("properties").and_then(Value::as_object);
    let allowed: Vec<&str> = props
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    // Unknown names are refused whatever their value, `null` included; a known one given
    // as `null` is treated as left out.
    if let Some(k) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        let hint = if allowed.is_empty() {
            "this tool takes no arguments".to_string()
        } else {
            format!("allowed: {}", allowed.join(", "))
        };
        return Err(ToolError::invalid(format!(
            "unknown argument `{}`; {hint}",
            text::clip(k, ECHO_MAX_CHARS)
        )));
    }
    obj.retain(|_, v| !v.is_null());
    let required = schema.get("required").and_then(Value::as_array);
    for r in required.into_iter().flatten().filter_map(Value::as_str) {
        if !obj.contains_key(r) {
            let what = props
                .and_then(|p| p.get(r))
                .and_then(|p| p.get("enum"))
                .and_then(Value::as_array)
                .map(|e| {
                    let names: Vec<&str> = e.iter().filter_map(Value::as_str).collect();
                    format!(": one of {}", names.join(", "))
                })
                .unwrap_or_default();
            return Err(ToolError::invalid(format!("`{r}` is required{what}")));
        }
    }
    let args: T = serde_path_to_error::deserialize(Value::Object(obj)).map_err(|e| {
        let field = e.path().to_string();
        ToolError::invalid(format!("`{field}` must be {}", e.inner()))
    })?;
    args.check()?;
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_as<T: ToolArgs>(v: Value) -> Result<T, ToolError> {
        read::<T>(Some(&v), &input_schema::<T>())
    }

    fn message<T: ToolArgs + std::fmt::Debug>(v: Value) -> (&'static str, String) {
        let e = read_as::<T>(v).unwrap_err();
        (e.code.as_str(), e.message)
    }

    #[test]
    fn unknown_fields_are_refused_with_what_is_allowed() {
        assert!(read_as::<MapArgs>(json!({"map": "x"})).is_ok());
        assert_eq!(
            message::<MapArgs>(json!({"mapp": "x"})),
            (
                "invalid_input",
                "unknown argument `mapp`; allowed: map".into()
            )
        );
        assert_eq!(
            message::<NoArgs>(json!({"x": 1})).1,
            "unknown argument `x`; this tool takes no arguments"
        );
        // Whatever the value: a null unknown is still unknown; a null known one is left out.
        assert_eq!(
            message::<NoArgs>(json!({"x": null})).1,
            "unknown argument `x`; this tool takes no arguments"
        );
        assert_eq!(
            message::<MapArgs>(json!({"map": "x", "foo": null})).1,
            "unknown argument `foo`; allowed: map"
        );
        assert_eq!(
            message::<MapArgs>(json!([1])).1,
            "arguments must be an object"
        );
        assert!(read::<NoArgs>(None, &input_schema::<NoArgs>()).is_ok());
        // A long unknown name is echoed cut.
        let long = "k".repeat(10_000);
        let m = message::<MapArgs>(json!({ long.clone(): 1 })).1;
        assert!(m.len() < 200, "{m}");
    }

    #[test]
    fn missing_wrong_type_and_out_of_range_each_say_what_to_send() {
        assert_eq!(
            message::<RenderMapArgs>(json!({"map": "x", "x": 0, "y": 0, "width": 5})).1,
            "`height` is required"
        );
        assert_eq!(
            message::<RenderMapArgs>(
                json!({"map": "x", "x": 0, "y": 0, "width": 121, "height": 1})
            )
            .1,
            "`width` must be an integer 1 to 120, got 121"
        );
        assert_eq!(
            message::<RenderMapArgs>(
                json!({"map": "x", "x": "0", "y": 0, "width": 1, "height": 1})
            )
            .1,
            "`x` must be an integer -119 to 511, written as a JSON number (0, not \"0\")"
        );
        assert_eq!(
            message::<ContactArgs>(json!({"subject": "s", "message": "m"})).1,
            "`category` is required: one of bug, feedback, question, other"
        );
        assert_eq!(
            message::<ContactArgs>(json!({"category": "rant", "subject": "s", "message": "m"})).1,
            "`category` must be one of: bug, feedback, question, other"
        );
        assert_eq!(
            message::<EndorseArgs>(json!({"threadId": "t1", "endorse": "yes"})).1,
            "`endorse` must be true or false"
        );
        assert_eq!(
            message::<JobArgs>(json!({"jobId": "ä"})).1,
            "`jobId` must be 1-64 ASCII letters, digits, dots, underscores or hyphens"
        );
        assert_eq!(
            message::<ListThreadsArgs>(json!({"offset": -1})).1,
            "`offset` must be an integer 0 to 1000000000, got -1"
        );
        // JSON Schema's integers include `1.0` and `1e2`; a fraction or a number past the
        // range is still refused.
        let a = read_as::<ListThreadsArgs>(json!({"offset": 25.0})).unwrap();
        assert_eq!(a.offset.map(|o| o.0), Some(25));
        let a = read_as::<ListThreadsArgs>(serde_json::from_str(r#"{"offset": 1e2}"#).unwrap())
            .unwrap();
        assert_eq!(a.offset.map(|o| o.0), Some(100));
        assert_eq!(
            message::<ListThreadsArgs>(json!({"offset": 2.5})).1,
            "`offset` must be an integer 0 to 1000000000, got 2.5"
        );
        assert_eq!(
            message::<ListThreadsArgs>(json!({"offset": 1e300})).1,
            "`offset` must be an integer 0 to 1000000000, got 1e+300"
        );
        // A whole number written with a fraction or as `-0` is named as the integer it is:
        // `-0` was "got -0.0", a float its sender never wrote.
        let m = |body: &str| message::<RenderMapArgs>(serde_json::from_str(body).unwrap()).1;
        assert_eq!(
            m(r#"{"map": "x", "x": 0, "y": 0, "width": -0, "height": 1}"#),
            "`width` must be an integer 1 to 120, got 0"
        );
        assert_eq!(
            m(r#"{"map": "x", "x": 0, "y": 0, "width": 121.0, "height": 1}"#),
            "`width` must be an integer 1 to 120, got 121"
        );
        // null is absent.
        let a = read_as::<ListThreadsArgs>(json!({"offset": null, "kind": null})).unwrap();
        assert!(a.offset.is_none() && a.kind.is_none());
        assert_eq!(
            message::<MapArgs>(json!({"map": null})).1,
            "`map` is required"
        );
    }

    #[test]
    fn numbers_and_flags_sent_as_strings_are_told_how_to_write_them() {
        assert_eq!(
            message::<ListThreadsArgs>(json!({"offset": "25"})).1,
            "`offset` must be an integer 0 to 1000000000, written as a JSON number (25, not \"25\")"
        );
        assert_eq!(
            message::<EndorseArgs>(json!({"threadId": "t1", "endorse": "false"})).1,
            "`endorse` must be true or false, written as a JSON boolean (false, not \"false\")"
        );
        // A string that would be refused as a number too, or holds no number: the plain message.
        for v in ["-1", "2.5", "next", "", "[1]"] {
            assert_eq!(
                message::<ListThreadsArgs>(json!({ "offset": v })).1,
                "`offset` must be an integer 0 to 1000000000",
                "{v:?}"
            );
        }
        assert_eq!(
            message::<EndorseArgs>(json!({"threadId": "t1", "endorse": "1"})).1,
            "`endorse` must be true or false"
        );
    }

    #[test]
    fn map_edges() {
        assert!(read_as::<MapArgs>(json!({"map": "a".repeat(MAX_MAP_BYTES)})).is_ok());
        let e = read_as::<MapArgs>(json!({"map": "a".repeat(MAX_MAP_BYTES + 1)})).unwrap_err();
        assert_eq!(e.code, "too_large");
        assert_eq!(e.details["limit"], MAX_MAP_BYTES);
        assert_eq!(message::<MapArgs>(json!({"map": ""})).0, "invalid_input");
        assert_eq!(
            message::<MapArgs>(json!({"map": 5})).1,
            "`map` must be a non-empty string: the .map text (see get_map_format)"
        );
    }

    #[test]
    fn name_and_id_edges() {
        let ok = json!({"name": "a".repeat(30), "revisionId": "a.b_c-".repeat(10) + "abcd"});
        let a = read_as::<GetLevelArgs>(ok).unwrap();
        assert_eq!(a.revision_id.unwrap().as_str().len(), 64);
        for bad in [
            json!({"name": "a".repeat(31)}),
            json!({"name": "a_b"}),
            json!({"name": "ok", "revisionId": "a".repeat(65)}),
            json!({"name": "ok", "revisionId": "ä"}),
        ] {
            assert_eq!(message::<GetLevelArgs>(bad).0, "invalid_input");
        }
    }

    #[test]
    fn replays_are_sized_then_parsed_by_the_engine() {
        let map = "x";
        let ok = json!({"map": map, "idempotencyKey": "k",
                        "replay": {"seed": 1, "actions": [{"action": 8, "ticks": 60}]}});
        assert!(read_as::<SimulateArgs>(ok).is_ok());
        let bad = json!({"map": map, "idempotencyKey": "k",
                         "replay": {"seed": 1, "actions": [{"action": 20, "ticks": 60}]}});
        assert_eq!(message::<SimulateArgs>(bad).0, "invalid_input");
        let steps: Vec<Value> = (0..60_000)
            .map(|_| json!({"action": 8, "ticks": 1}))
            .collect();
        let big = json!({"map": map, "idempotencyKey": "k",
                         "replay": {"seed": 1, "actions": steps}});
        assert_eq!(message::<SimulateArgs>(big).0, "too_large");
        let versioned = json!({"map": map, "idempotencyKey": "k",
                               "replay": {"seed": 1, "version": 1, "actions": []}});
        let (code, said) = message::<SimulateArgs>(versioned);
        assert_eq!(code, "invalid_input");
        assert!(
            said.contains("`replay.version` is not sent") && said.contains("(got 1)"),
            "{said}"
        );
    }

    #[test]
    fn the_largest_map_is_the_engines() {
        let l = horst_engine::limits();
        assert_eq!((l.width.max, l.height.max), (MAP_MAX_WIDTH, MAP_MAX_HEIGHT));
        assert_eq!(
            (l.render_max_width, l.render_max_height),
            (RENDER_MAX_WIDTH, RENDER_MAX_HEIGHT)
        );
        assert_eq!(l.max_map_bytes, MAX_MAP_BYTES);
        assert_eq!(l.replay.max_bytes, MAX_REPLAY_BYTES);
    }

    #[test]
    fn choice_names_are_the_board_and_contact_lists() {
        assert_eq!(ThreadStatus::NAMES, board::STATUSES);
        assert_eq!(
            input_schema::<ListThreadsArgs>()["properties"]["status"]["enum"],
            json!(["open", "planned", "done", "declined"])
        );
        assert_eq!(thousands(36_000), "36,000");
        assert_eq!(thousands(600), "600");
    }
}
