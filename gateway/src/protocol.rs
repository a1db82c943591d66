//! The JSON-RPC 2.0 / MCP layer, without HTTP: parsing one message, version negotiation and
//! the shapes of responses. Pure functions, so every transport rule is testable without a
//! server.

use serde_json::{json, Map, Value};

/// The protocol revisions served, newest first.
pub const SUPPORTED_VERSIONS: [&str; 2] = ["2025-11-25", "2025-06-18"];

/// JSON-RPC error codes.
pub mod codes {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP: the `MCP-Protocol-Version` is missing or not served (data names the served ones).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// Transport-level refusals (auth, origin, limits) carry this server-defined code.
    pub const REFUSED: i64 = -32001;
    /// MCP: `resources/read` of a URI that names no (visible) resource; data names the URI.
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
}

/// `initialize` picks the client's revision when served, else the newest.
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| SUPPORTED_VERSIONS.iter().find(|v| **v == r).copied())
        .unwrap_or(SUPPORTED_VERSIONS[0])
}

/// Whether a follow-up's `MCP-Protocol-Version` header is one of ours. The server is
/// stateless, so "the negotiated revision" is any revision `initialize` can negotiate.
pub fn version_accepted(header: Option<&str>) -> bool {
    header.is_some_and(|h| SUPPORTED_VERSIONS.contains(&h.trim()))
}

/// One message from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
    },
    /// A response to a server request; this server sends none, so it is acknowledged only.
    Response,
}

/// Why a body is not one acceptable message.
#[derive(Debug, Clone, PartialEq)]
pub enum ParseError {
    /// Not JSON at all (-32700).
    Malformed(String),
    /// Not JSON this server reads (-32700), with the whole message ([`unreadable`]).
    Unreadable(String),
    /// A JSON array: batches are not supported (HTTP 400).
    Batch,
    /// JSON, but not a JSON-RPC 2.0 message (-32600); `id` when one could be read.
    Invalid { id: Value, message: String },
}

impl ParseError {
    pub fn to_error(&self) -> Value {
        match self {
            ParseError::Malformed(m) => error(
                Value::Null,
                codes::PARSE_ERROR,
                &format!("the body is not valid JSON: {m}"),
                None,
            ),
            ParseError::Unreadable(m) => error(Value::Null, codes::PARSE_ERROR, m, None),
            ParseError::Batch => error(
                Value::Null,
                codes::INVALID_REQUEST,
                "batches are not supported: send one JSON-RPC message per POST",
                None,
            ),
            ParseError::Invalid { id, message } => {
                error(id.clone(), codes::INVALID_REQUEST, message, None)
            }
        }
    }
}

/// `body` without a leading UTF-8 byte order mark. RFC 8259 (8.1) lets a parser ignore one,
/// and clients write it (Windows PowerShell 5's `-Encoding UTF8`, .NET's `Encoding.UTF8`);
/// serde_json refuses it as "expected value at line 1 column 1", which named neither the mark
/// nor the request. Only the first three bytes: a mark anywhere else is not JSON.
pub fn without_bom(body: &[u8]) -> &[u8] {
    body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body)
}

/// serde_json's error for a `\u` escape of a UTF-16 surrogate without its pair (`"\ud800"`
/// alone, or a low `"\udc00"` first), said as what is wrong and how to fix it, or `None` for
/// any other error. JSON strings are Unicode text: a surrogate escape names half of a
/// character, and serde_json's "lone leading surrogate in hex escape" (or "unexpected end of
/// hex escape") named neither the rule nor the fix. Part of [`unreadable`].
fn lone_surrogate(e: &serde_json::Error) -> Option<String> {
    let text = e.to_string();
    let surrogate = text.starts_with("lone leading surrogate in hex escape")
        || text.starts_with("unexpected end of hex escape");
    surrogate.then(|| {
        format!(
            "a lone UTF-16 surrogate escape at line {}, column {}: a \\uD800-\\uDFFF escape is half a character and must be a pair (\\uD800-\\uDBFF followed at once by \\uDC00-\\uDFFF, as \\uD83D\\uDE00 for U+1F600); send the pair, or the character itself as UTF-8",
            e.line(),
            e.column()
        )
    })
}

/// What is wrong with a body serde_json could not read, said with its place and the fix, for
/// the errors whose own text names neither: a lone surrogate escape ([`lone_surrogate`]), a
/// body that is not UTF-8, and one nested deeper than serde_json reads. `None` for any other
/// error (serde_json's text says enough). Every JSON-reading route answers with this (the
/// API's `Json` extractor, `/api/agent-keys`, `/api/mcp`), each with its own code.
pub fn unreadable(body: &[u8], e: &serde_json::Error) -> Option<String> {
    if let Some(surrogate) = lone_surrogate(e) {
        return Some(format!("the body is not valid JSON: {surrogate}"));
    }
    if let Some(bad) = not_utf8(body, e) {
        return Some(bad);
    }
    is_too_deep(e).then(|| {
        format!(
            "the body nests arrays and objects {MAX_DEPTH} or more levels deep (line {}, column {}); this server reads at most {}: send the body as the endpoint documents it, less deeply nested",
            e.line(),
            e.column(),
            MAX_DEPTH - 1
        )
    })
}

/// serde_json stopped at its nesting limit.
fn is_too_deep(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("recursion limit exceeded")
}

/// serde_json's nesting limit (arrays and objects, one level each).
const MAX_DEPTH: usize = 128;

/// The body is not UTF-8, at or before the place where serde_json stopped: said with the first
/// byte that is not, and how to send it. serde_json said "invalid unicode code point at line 1
/// column 56", which reads as a wrong `\u` escape. Windows PowerShell 5 sends a string body
/// as ISO-8859-1, so a German map title (`Gipfelstürmer`) arrived so.
fn not_utf8(body: &[u8], e: &serde_json::Error) -> Option<String> {
    let at = std::str::from_utf8(body).err()?.valid_up_to();
    let line_start = |line: usize| -> usize {
        if line <= 1 {
            return 0;
        }
        body.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(line - 2)
            .map_or(body.len(), |(i, _)| i + 1)
    };
    // serde_json's column counts bytes, 1 at the first of a line; an error at the end of the
    // body is past every byte.
    let stopped = line_start(e.line()) + e.column().saturating_sub(1);
    if at > stopped {
        return None;
    }
    let line = 1 + body[..at].iter().filter(|b| **b == b'\n').count();
    let column = at - line_start(line) + 1;
    Some(format!(
        "the body is not UTF-8: the byte 0x{:02X} at line {line}, column {column} is not part of a UTF-8 character (text in Latin-1 or Windows-1252?); JSON text is UTF-8 (RFC 8259): encode the body as UTF-8 (Windows PowerShell 5 sends a string body as ISO-8859-1: send [Text.Encoding]::UTF8.GetBytes($body) instead)",
        body[at]
    ))
}

/// Parses one message (after a byte order mark, [`without_bom`]). A number too large for a
/// double (`1e400`) is valid JSON that serde_json refuses ("number out of range"); it is read
/// as the largest double of its sign, so the field it is in refuses it with its own message
/// and the request keeps its id.
pub fn parse(body: &[u8]) -> Result<Incoming, ParseError> {
    let body = without_bom(body);
    match parse_exact(body) {
        Err(ParseError::Malformed(m)) if m.starts_with(OUT_OF_RANGE) => {
            match clamp_huge_numbers(body) {
                Some(clamped) => parse_exact(&clamped),
                None => Err(ParseError::Malformed(m)),
            }
        }
        other => other,
    }
}

/// How serde_json's error for a number beyond a double's range begins.
const OUT_OF_RANGE: &str = "number out of range";

/// `body` with every number too large for a double written as the largest double of its
/// sign (`1e400` as `1.7976931348623157e308`), or `None` when it has none. Strings are left as
/// they are; anything else is copied, so broken JSON stays broken.
fn clamp_huge_numbers(body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len());
    let mut changed = false;
    let mut in_string = false;
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        if in_string {
            out.push(b);
            if b == b'\\' {
                if let Some(&next) = body.get(i + 1) {
                    out.push(next);
                    i += 1;
                }
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
        } else if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < body.len()
                && matches!(body[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                i += 1;
            }
            let token = &body[start..i];
            let huge = std::str::from_utf8(token)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(f64::is_infinite);
            if huge {
                changed = true;
                let max = if token[0] == b'-' {
                    "-1.7976931348623157e308"
                } else {
                    "1.7976931348623157e308"
                };
                out.extend_from_slice(max.as_bytes());
            } else {
                out.extend_from_slice(token);
            }
        } else {
            in_string = b == b'"';
            out.push(b);
            i += 1;
        }
    }
    changed.then_some(out)
}

fn parse_exact(body: &[u8]) -> Result<Incoming, ParseError> {
    let value = match serde_json::from_slice::<Strict>(body) {
        Ok(Strict(v)) => v,
        // The only data error `Strict` raises: a key written twice in one object. JSON leaves
        // its meaning open (serde_json keeps the last, other parsers the first), so the
        // message is refused rather than read one way here and another way in a proxy or a
        // log. The id is echoed when it is not itself the key written twice.
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            return Err(ParseError::Invalid {
                id: request_id(body),
                message: format!("{e}; send each key once"),
            })
        }
        Err(e) => {
            return Err(match unreadable(body, &e) {
                // Every route reads JSON with `unreadable`; only here is the body a tool
                // call, whose depth is known.
                Some(said) if is_too_deep(&e) => ParseError::Unreadable(format!(
                    "{said} (a tool call with a replay needs 6: send the arguments as tools/list describes them)"
                )),
                Some(said) => ParseError::Unreadable(said),
                None => ParseError::Malformed(e.to_string()),
            });
        }
    };
    let obj = match value {
        Value::Array(_) => return Err(ParseError::Batch),
        Value::Object(o) => o,
        _ => {
            return Err(ParseError::Invalid {
                id: Value::Null,
                message: "a JSON-RPC message is an object".into(),
            })
        }
    };
    let id = obj.get("id").cloned().map(echoed);
    let invalid = |message: &str| ParseError::Invalid {
        id: id.clone().filter(valid_id).unwrap_or(Value::Null),
        message: message.into(),
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid("\"jsonrpc\" must be \"2.0\""));
    }
    if let Some(id) = &id {
        if !valid_id(id) {
            // Said in full: an id of 2^70 or 1.5 is "an integer" to its sender, and null
            // is JSON-RPC's own id for errors, never a request's.
            return Err(invalid(
                "\"id\" must be a string or a whole number within 64 bits (not null, a fraction or a larger number)",
            ));
        }
    }
    match obj.get("method") {
        Some(Value::String(method)) => {
            // `"params": null` is read as no params: JSON-RPC 2.0 says params "MAY be
            // omitted" and many clients write the omission as null.
            let params = obj.get("params").filter(|p| !p.is_null()).cloned();
            if let Some(p) = &params {
                if !p.is_object() && !p.is_array() {
                    return Err(invalid(
                        "\"params\" must be an object (or left out, or null, for no params)",
                    ));
                }
            }
            Ok(match id {
                Some(id) => Incoming::Request {
                    id,
                    method: method.clone(),
                    params,
                },
                None => Incoming::Notification {
                    method: method.clone(),
                },
            })
        }
        Some(_) => Err(invalid("\"method\" must be a string")),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            Ok(Incoming::Response)
        }
        None => Err(invalid("a request needs \"method\"")),
    }
}

/// A JSON value read like `serde_json::Value`, except that an object naming a key twice is
/// an error (a `Category::Data` one) that names the key.
struct Strict(Value);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        serde::Deserialize::deserialize(d).map(|Strict(v)| v)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut obj = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if obj.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the message has the key {:?} twice in one object",
                    crate::text::clip(&key, crate::args::ECHO_MAX_CHARS)
                )));
            }
            let Strict(v) = map.next_value()?;
            obj.insert(key, v);
        }
        Ok(Value::Object(obj))
    }
}

/// A string, or a whole number within 64 bits: written `7`, or as a client that holds every
/// number as a double writes it, `7.0` (JSON has one number type; the tools read such
/// numbers as integers too). It is echoed as it was sent.
fn valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_))
        || id.as_i64().is_some()
        || id.as_u64().is_some()
        || id
            .as_f64()
            .is_some_and(|f| f.fract() == 0.0 && f >= i64::MIN as f64 && f < u64::MAX as f64)
}

pub fn success(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

pub fn error(id: Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut err = Map::new();
    err.insert("code".into(), code.into());
    err.insert("message".into(), message.into());
    if let Some(d) = data {
        err.insert("data".into(), d);
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": err })
}

/// The -32022 error for a missing or unserved `MCP-Protocol-Version`; `data.supported` lets
/// clients that probe a newer revision fall back to `initialize`.
pub fn unsupported_version(id: Value, got: Option<&str>) -> Value {
    let message = match got {
        None => format!(
            "the MCP-Protocol-Version header is missing; send the revision initialize returned ({})",
            SUPPORTED_VERSIONS.join(" or ")
        ),
        Some(v) => format!(
            "MCP-Protocol-Version {:?} is not supported; supported: {}",
            crate::text::clip(v, crate::args::ECHO_MAX_CHARS),
            SUPPORTED_VERSIONS.join(", ")
        ),
    };
    let requested = got.map(|v| crate::text::clip(v, crate::args::ECHO_MAX_CHARS));
    error(
        id,
        codes::UNSUPPORTED_PROTOCOL_VERSION,
        &message,
        Some(json!({ "supported": SUPPORTED_VERSIONS, "requested": requested })),
    )
}

/// The request id of a message the HTTP layer refuses before the gateway reads it (a bad
/// key, a burst limit), so its error names the request: the `id` of a JSON-RPC object, if
/// it is a valid one; `null` for anything else (a batch, a notification, broken JSON).
pub fn request_id(body: &[u8]) -> Value {
    let body = without_bom(body);
    #[derive(serde::Deserialize)]
    struct IdOnly {
        #[serde(default)]
        id: Option<Value>,
    }
    let read = |b: &[u8]| serde_json::from_slice::<IdOnly>(b);
    match read(body) {
        Err(e) if e.to_string().starts_with(OUT_OF_RANGE) => {
            clamp_huge_numbers(body).map_or(Err(e), |clamped| read(&clamped))
        }
        other => other,
    }
    .ok()
    .and_then(|m| m.id)
    .filter(valid_id)
    .map(echoed)
    .unwrap_or(Value::Null)
}

/// The id as it is echoed: as sent, except `-0`. serde_json reads `-0` as the float -0.0 and
/// writes it back `-0.0`, a float to clients that hold ids as integers (Rust's rmcp, Go's
/// int64 ids), which then cannot match the answer to their request; it is the integer 0.
fn echoed(id: Value) -> Value {
    match id.as_f64() {
        Some(f) if id.is_f64() && f == 0.0 && f.is_sign_negative() => Value::from(0),
        _ => id,
    }
}

/// What `initialize` offers beside the tools (the operator's switches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// `resources/list`, `resources/templates/list`, `resources/read`.
    pub resources: bool,
    /// `prompts/list`, `prompts/get`.
    pub prompts: bool,
    /// The MCP App: the `io.modelcontextprotocol/ui` extension (SEP-1865), named under
    /// `extensions` (SEP-2133) with the app's MIME type.
    pub apps: bool,
}

/// The MCP Apps extension's identifier.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The `initialize` result.
pub fn initialize_result(params: Option<&Value>, instructions: &str, offer: Capabilities) -> Value {
    let requested = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str);
    let mut capabilities = json!({ "tools": { "listChanged": false } });
    if offer.resources {
        capabilities["resources"] = json!({ "subscribe": false, "listChanged": false });
    }
    if offer.prompts {
        capabilities["prompts"] = json!({ "listChanged": false });
    }
    if offer.apps {
        capabilities["extensions"] =
            json!({ UI_EXTENSION: { "mimeTypes": [crate::player::MIME] } });
    }
    json!({
        "protocolVersion": negotiate(requested),
        "capabilities": capabilities,
        "serverInfo": {
            "name": "horst",
            "title": "Game con Vogel agent gateway",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "instructions": instructions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_find_the_request_id() {
        assert_eq!(
            request_id(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#),
            json!(7)
        );
        assert_eq!(
            request_id(br#"{"id":"a-1","method":"x","params":{"big":[1,2,3]}}"#),
            json!("a-1")
        );
        assert_eq!(request_id(br#"[{"id":1}]"#), Value::Null);
        assert_eq!(
            request_id(br#"{"method":"notifications/initialized"}"#),
            Value::Null
        );
        assert_eq!(request_id(br#"{"id":{"no":1}}"#), Value::Null);
        assert_eq!(request_id(b"not json"), Value::Null);
        assert_eq!(request_id(br#"{"id":-0}"#).to_string(), "0");
        assert_eq!(request_id(br#"{"id":-3.0}"#).to_string(), "-3.0");
        assert_eq!(request_id(br#"{"id":5,"x":1e400}"#), json!(5));
    }

    /// A body that is not UTF-8 is named with its first such byte, on its line and column;
    /// one broken before that byte keeps serde_json's own message, and so does valid UTF-8.
    #[test]
    fn bodies_that_are_not_utf8_or_too_deep_are_said_so() {
        let said = |body: &[u8]| match parse(body) {
            Err(ParseError::Unreadable(m)) => Some(m),
            _ => None,
        };
        let m = said(b"{\"jsonrpc\":\"2.0\",\n\"id\":1,\"method\":\"p\xe4\"}").unwrap();
        assert!(m.contains("the byte 0xE4 at line 2, column 19"), "{m}");
        assert!(m.starts_with("the body is not UTF-8"), "{m}");
        // A syntax error before the byte is that error.
        assert!(matches!(
            parse(b"{\"a\" 1, \"b\":\"\xff\"}"),
            Err(ParseError::Malformed(_))
        ));
        // Outside a string, too.
        let m = said(b"{\"a\":\xff}").unwrap();
        assert!(m.contains("the byte 0xFF at line 1, column 6"), "{m}");
        let deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
        let m = said(deep.as_bytes()).unwrap();
        assert!(m.contains("128 or more levels deep"), "{m}");
        // A tool call is told what a tool call needs; any other body (an RCADIA action, an
        // agent key's) is not sent to tools/list.
        assert!(m.contains("tools/list"), "{m}");
        let e = serde_json::from_slice::<Value>(deep.as_bytes()).unwrap_err();
        let m = unreadable(deep.as_bytes(), &e).unwrap();
        assert!(
            m.contains("at most 127") && !m.contains("tools/list"),
            "{m}"
        );
        let ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
        assert_eq!(parse(ok.as_bytes()), Err(ParseError::Batch));
        // A lone surrogate is still said as one.
        let m = said(br#"{"a":"\ud800"}"#).unwrap();
        assert!(m.contains("lone UTF-16 surrogate"), "{m}");
    }

    #[test]
    fn numbers_too_large_for_a_double_read_as_the_largest() {
        let clamped =
            |b: &str| clamp_huge_numbers(b.as_bytes()).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(clamped(r#"{"a":1}"#), None);
        assert_eq!(
            clamped(r#"{"a":[1e400,-2E+999,1.5e-400,3]}"#).as_deref(),
            Some(r#"{"a":[1.7976931348623157e308,-1.7976931348623157e308,1.5e-400,3]}"#)
        );
        // Inside strings (escaped quotes included) nothing moves.
        assert_eq!(clamped(r#"{"a":"1e400 \" 1e400"}"#), None);
        let Ok(Incoming::Request { params, .. }) =
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":-1e400,"s":"1e400"}}"#)
        else {
            panic!("a request")
        };
        let p = params.unwrap();
        assert_eq!(p["x"].as_f64(), Some(f64::MIN));
        assert_eq!(p["s"], "1e400");
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1e400,"method":"m"}"#),
            Err(ParseError::Invalid { .. })
        ));
        assert!(matches!(
            parse(br#"{"x":1e400"#),
            Err(ParseError::Malformed(_))
        ));
    }

    #[test]
    fn negotiation_prefers_the_clients_served_revision_else_the_newest() {
        assert_eq!(negotiate(Some("2025-06-18")), "2025-06-18");
        assert_eq!(negotiate(Some("2025-11-25")), "2025-11-25");
        assert_eq!(negotiate(Some("2025-03-26")), "2025-11-25");
        assert_eq!(negotiate(Some("2026-07-28")), "2025-11-25");
        assert_eq!(negotiate(Some("garbage")), "2025-11-25");
        assert_eq!(negotiate(None), "2025-11-25");
    }

    #[test]
    fn initialize_offers_what_is_switched_on() {
        let none = initialize_result(None, "i", Capabilities::default());
        assert_eq!(
            none["capabilities"],
            json!({ "tools": { "listChanged": false } })
        );
        let all = initialize_result(
            None,
            "i",
            Capabilities {
                resources: true,
                prompts: true,
                apps: true,
            },
        );
        assert_eq!(all["capabilities"]["resources"]["subscribe"], false);
        assert_eq!(all["capabilities"]["prompts"]["listChanged"], false);
        assert_eq!(
            all["capabilities"]["extensions"][UI_EXTENSION]["mimeTypes"],
            json!(["text/html;profile=mcp-app"])
        );
    }

    #[test]
    fn follow_up_versions() {
        assert!(version_accepted(Some("2025-11-25")));
        assert!(version_accepted(Some("2025-06-18")));
        assert!(!version_accepted(Some("2025-03-26")));
        assert!(!version_accepted(Some("2026-07-28")));
        assert!(!version_accepted(None));
    }

    #[test]
    fn parse_kinds() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Ok(Incoming::Request { .. })
        ));
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Incoming::Notification {
                method: "notifications/initialized".into()
            })
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Ok(Incoming::Response)
        );
        assert_eq!(
            parse(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            Err(ParseError::Batch)
        );
        assert!(matches!(parse(b"{nope"), Err(ParseError::Malformed(_))));
        assert!(matches!(parse(b""), Err(ParseError::Malformed(_))));
        assert!(matches!(
            parse(br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            Err(ParseError::Invalid { .. })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#),
            Err(ParseError::Invalid { .. })
        ));
        // A key twice in one object names the key; the id is kept unless it is that key.
        let Err(ParseError::Invalid { id, message }) =
            parse(br#"{"jsonrpc":"2.0","id":4,"method":"x","params":{"a":{"b":1,"b":2}}}"#)
        else {
            panic!("a key twice is invalid")
        };
        assert_eq!(id, json!(4));
        assert!(message.contains("\"b\" twice"), "{message}");
        let Err(ParseError::Invalid { id, .. }) =
            parse(br#"{"jsonrpc":"2.0","id":4,"id":5,"method":"x"}"#)
        else {
            panic!("an id twice is invalid")
        };
        assert_eq!(id, Value::Null);
        // Numbers, nesting and the same key in two objects read as serde_json reads them.
        let body = br#"{"jsonrpc":"2.0","id":-3,"method":"m","params":{"m":[1,2.5,-0,18446744073709551615,null,true,"s",{"m":{}}]}}"#;
        let Ok(Incoming::Request { params, id, .. }) = parse(body) else {
            panic!("a request")
        };
        let plain: Value = serde_json::from_slice(body).unwrap();
        assert_eq!(params.as_ref(), Some(&plain["params"]));
        assert_eq!(id, plain["id"]);
        assert_eq!(
            ParseError::Malformed("x".into()).to_error()["error"]["code"],
            -32700
        );
    }

    /// `"params": null` is no params, for requests and notifications alike; a parse never
    /// hands a handler `Some(Value::Null)`.
    #[test]
    fn null_params_are_no_params() {
        let Ok(Incoming::Request { params, .. }) =
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":null}"#)
        else {
            panic!("a request")
        };
        assert_eq!(params, None);
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":null}"#),
            Ok(Incoming::Notification { .. })
        ));
        for bad in ["1", "\"x\"", "true"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{bad}}}"#);
            assert!(
                matches!(parse(body.as_bytes()), Err(ParseError::Invalid { .. })),
                "{bad}"
            );
        }
    }

    /// Fuzz: mutated messages (bytes flipped, cut, spliced from JSON fragments) never panic,
    /// and a request that parses never carries `params: null`.
    #[test]
    fn mutated_messages_never_panic() {
        let seeds: [&[u8]; 4] = [
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"validate_map","arguments":{"map":"x"}}}"#,
            br#"{"jsonrpc":"2.0","id":"a","method":"ping","params":null}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":[]}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        ];
        let fragments: [&[u8]; 10] = [
            b"null",
            b"1e400",
            b"-1e400",
            b"[]",
            b"{}",
            b"\"\\u0000\"",
            b",",
            b":",
            b"\"params\"",
            b"}",
        ];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..20_000u32 {
            let mut body = seeds[round as usize % seeds.len()].to_vec();
            for _ in 0..(next() % 4 + 1) {
                let at = (next() as usize) % (body.len() + 1);
                match next() % 4 {
                    0 if at < body.len() => body[at] = (next() % 256) as u8,
                    1 => body.truncate(at),
                    2 => {
                        let f = fragments[(next() as usize) % fragments.len()];
                        body.splice(at..at, f.iter().copied());
                    }
                    _ if at < body.len() => {
                        body.remove(at);
                    }
                    _ => {}
                }
            }
            if let Ok(Incoming::Request { params, .. }) = parse(&body) {
                assert_ne!(
                    params,
                    Some(Value::Null),
                    "{}",
                    String::from_utf8_lossy(&body)
                );
            }
        }
    }
}
