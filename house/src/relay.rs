//! The house page's only way out: it calls the `horstHouse` binding with a JSON request, the
//! house process performs the matching bridge-API call with its agent token, and answers with
//! `window.__horstHouseReply(id, status, body, retryAfterMs)`. The page names an operation and its
//! arguments, never a URL or a header, so whatever called the binding could make only the
//! house token's bridge calls, and only on its own table's sessions ([`Hosted`]: the API
//! lets the token act on every house table). The game never gets the binding: it goes into the page's
//! session only (`table.rs`), and a sandboxed game frame runs as a target of its own (with
//! Chromium 156 its `typeof horstHouse` is `"undefined"`).

use std::time::{Duration, SystemTime};

use crate::answer::{read_bounded, retry_after, BodyError};

use horst_sessions::wire::AvailableList;
use serde::Serialize;
use serde_json::Value;

const BRIDGE: &str = "/api/v1/agent/bridge/sessions";
const SESSIONS: &str = "/api/v1/agent/sessions";
/// Long-polls hold for up to 25 s; give the server a margin before calling it lost.
const LONG_POLL_TIMEOUT: Duration = Duration::from_secs(40);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// The bridge API takes at most 100 ops per request; a page sending more is broken.
const MAX_OPS: usize = 100;

/// One request from the page.
#[derive(Debug, Clone, PartialEq)]
pub enum PageRequest {
    /// An API call the page waits for; answered through `__horstHouseReply(id, ...)`.
    Call { id: u64, call: BridgeCall },
    /// The page's view of its table changed (session, status, players, result...).
    Status(Value),
}

#[derive(Debug, Clone, PartialEq)]
pub enum BridgeCall {
    /// `idempotency_key`: the page's key for this create, the same on each resend.
    CreateSession {
        config: Value,
        idempotency_key: Option<String>,
    },
    /// `batch_id`: the page's id for this batch, the same on each resend.
    Ops {
        session_id: String,
        ops: Value,
        batch_id: Option<String>,
    },
    PendingActions {
        session_id: String,
        after: u64,
        wait: u64,
    },
    Rematch {
        session_id: String,
    },
    PublicView {
        session_id: String,
        since: Option<u64>,
        wait: u64,
    },
}

/// Parse the binding's payload. Errors are for the log: the page is ours, so a bad request
/// is a bug in `web/house/house.js`, or a game that found its way to the binding.
pub fn parse(payload: &str) -> Result<PageRequest, String> {
    if payload.len() > 1024 * 1024 {
        return Err("request over 1 MiB".into());
    }
    let v: Value = serde_json::from_str(payload).map_err(|e| format!("not JSON: {e}"))?;
    let kind = v.get("kind").and_then(Value::as_str).ok_or("no `kind`")?;
    if kind == "status" {
        return Ok(PageRequest::Status(
            v.get("view").cloned().unwrap_or(Value::Null),
        ));
    }
    let id = v
        .get("id")
        .and_then(Value::as_u64)
        .ok_or("no numeric `id`")?;
    let sid = || -> Result<String, String> {
        let s = v
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or("no `sessionId`")?;
        let ok = !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if ok {
            Ok(s.to_string())
        } else {
            Err(format!("bad sessionId {s:?}"))
        }
    };
    let num = |field: &str, max: u64| -> Result<Option<u64>, String> {
        match v.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => x
                .as_u64()
                .filter(|n| *n <= max)
                .map(Some)
                .ok_or(format!("bad `{field}`")),
        }
    };
    // The retry keys the page sends (checked by the API's own rule) go on as they are.
    let retry_key = |field: &str| {
        horst_sessions::retry_key::parse(&v, field, "one call").map_err(|e| e.message)
    };
    let call = match kind {
        "createSession" => {
            let config = v.get("config").cloned().ok_or("no `config`")?;
            if !config.is_object() {
                return Err("`config` must be an object".into());
            }
            BridgeCall::CreateSession {
                config,
                idempotency_key: retry_key("idempotencyKey")?,
            }
        }
        "ops" => {
            let ops = v.get("ops").cloned().ok_or("no `ops`")?;
            match ops.as_array() {
                Some(a) if a.len() <= MAX_OPS => {}
                _ => return Err(format!("`ops` must be an array of at most {MAX_OPS}")),
            }
            BridgeCall::Ops {
                session_id: sid()?,
                ops,
                batch_id: retry_key("batchId")?,
            }
        }
        "pendingActions" => BridgeCall::PendingActions {
            session_id: sid()?,
            after: num("after", u64::MAX)?.unwrap_or(0),
            wait: num("wait", 25)?.unwrap_or(0),
        },
        "rematch" => BridgeCall::Rematch { session_id: sid()? },
        "publicView" => BridgeCall::PublicView {
            session_id: sid()?,
            since: num("since", u64::MAX)?,
            wait: num("wait", 25)?.unwrap_or(0),
        },
        other => return Err(format!("unknown kind {other:?}")),
    };
    Ok(PageRequest::Call { id, call })
}

/// The id of a request [`parse`] refused, so the page is answered at once (it would wait a
/// minute for the reply and retry the same request). `None` when there is none to find: the
/// payload is not JSON with a numeric `id`, or too large to look at.
pub fn request_id(payload: &str) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<u64>,
    }
    if payload.len() > 16 * 1024 * 1024 {
        return None;
    }
    serde_json::from_str::<IdOnly>(payload).ok()?.id
}

/// The answer to a request [`parse`] refused: 413 for one over the size limit, else 400,
/// with the API's error shape.
pub fn refusal(payload: &str, why: &str) -> Reply {
    #[derive(Serialize)]
    struct Refused {
        code: &'static str,
        error: String,
    }
    let (status, code) = if payload.len() > 1024 * 1024 {
        (413, "too_large")
    } else {
        (400, "bad_request")
    };
    let body = Refused {
        code,
        error: format!("the house refused this request from the page: {why}"),
    };
    Reply {
        status,
        body: serde_json::to_string(&body).unwrap_or_default(),
        retry_after_ms: None,
    }
}

/// What the API answered: the HTTP status (0: no answer, network error), the body text and
/// its `Retry-After` in milliseconds, which the page waits out before it asks again (a 503
/// while the API's store restarts, a 429).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    pub retry_after_ms: Option<u64>,
}

/// `POST /api/v1/agent/bridge/sessions`: the page's config, the house's game.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CreateBody<'a> {
    config: &'a Value,
    game_id: &'a str,
    game_title: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    idempotency_key: Option<&'a str>,
}

/// `POST .../ops`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OpsBody<'a, O> {
    ops: O,
    #[serde(skip_serializing_if = "Option::is_none")]
    batch_id: Option<&'a str>,
}

/// The `end` op the house sends as it leaves: a result without a winner, reason `host_left`.
#[derive(Serialize)]
struct EndOp {
    op: &'static str,
    result: EndResult,
    reason: &'static str,
}

#[derive(Serialize)]
struct EndResult {
    winner: Option<String>,
    reason: &'static str,
}

/// A body without fields (`POST .../rematch`).
#[derive(Serialize)]
struct Empty {}

/// The HTTP client of the relay's calls. It follows no redirect: horst's API never sends
/// one, and followed, a redirect turned a `POST /ops` into a `GET` of its target, whose 200
/// the page took for the ops applied.
pub fn api_client() -> reqwest::ClientBuilder {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none())
}

/// What the page gets when the API could not be reached (the API's own `{error}` shape).
#[derive(Serialize)]
struct NetworkError {
    error: String,
}

/// A request body as JSON; these types hold only strings and JSON, so this cannot fail.
fn body(b: impl Serialize) -> Option<Value> {
    serde_json::to_value(b).ok()
}

/// Performs bridge calls for one game's tables.
#[derive(Clone)]
pub struct Relay {
    http: reqwest::Client,
    backend: String,
    token: String,
    game_id: String,
    game_title: String,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("backend", &self.backend)
            .field("game_id", &self.game_id)
            .finish_non_exhaustive()
    }
}

impl Relay {
    pub fn new(
        http: reqwest::Client,
        backend: &str,
        token: &str,
        game_id: &str,
        game_title: &str,
    ) -> Relay {
        Relay {
            http,
            backend: backend.trim_end_matches('/').to_string(),
            token: token.to_string(),
            game_id: game_id.to_string(),
            game_title: game_title.to_string(),
        }
    }

    pub async fn perform(&self, call: &BridgeCall) -> Reply {
        let (method, path, body, auth, timeout) = match call {
            // The house decides what it hosts: gameId and gameTitle come from its settings,
            // whatever the page says.
            BridgeCall::CreateSession {
                config,
                idempotency_key,
            } => (
                reqwest::Method::POST,
                BRIDGE.to_string(),
                body(CreateBody {
                    config,
                    game_id: &self.game_id,
                    game_title: &self.game_title,
                    idempotency_key: idempotency_key.as_deref(),
                }),
                true,
                REQUEST_TIMEOUT,
            ),
            BridgeCall::Ops {
                session_id,
                ops,
                batch_id,
            } => (
                reqwest::Method::POST,
                format!("{BRIDGE}/{session_id}/ops"),
                body(OpsBody {
                    ops,
                    batch_id: batch_id.as_deref(),
                }),
                true,
                REQUEST_TIMEOUT,
            ),
            BridgeCall::PendingActions {
                session_id,
                after,
                wait,
            } => (
                reqwest::Method::GET,
                format!("{BRIDGE}/{session_id}/pending-actions?after={after}&wait={wait}"),
                None,
                true,
                LONG_POLL_TIMEOUT,
            ),
            BridgeCall::Rematch { session_id } => (
                reqwest::Method::POST,
                format!("{BRIDGE}/{session_id}/rematch"),
                body(Empty {}),
                true,
                REQUEST_TIMEOUT,
            ),
            BridgeCall::PublicView {
                session_id,
                since,
                wait,
            } => (
                reqwest::Method::GET,
                match since {
                    Some(s) => format!("{SESSIONS}/{session_id}/public?since={s}&wait={wait}"),
                    None => format!("{SESSIONS}/{session_id}/public?wait={wait}"),
                },
                None,
                false,
                LONG_POLL_TIMEOUT,
            ),
        };
        self.send(method, &path, body, auth, timeout).await
    }

    /// End a live session as the house leaves (no rematch follows).
    pub async fn end_host_left(&self, session_id: &str) -> Reply {
        let ops = [EndOp {
            op: "end",
            result: EndResult {
                winner: None,
                reason: "host_left",
            },
            reason: "host_left",
        }];
        self.send(
            reqwest::Method::POST,
            &format!("{BRIDGE}/{session_id}/ops"),
            body(OpsBody {
                ops,
                batch_id: None,
            }),
            true,
            REQUEST_TIMEOUT,
        )
        .await
    }

    /// The public list of joinable tables of this game (`GET /available?game=`).
    pub async fn joinable_sessions(&self) -> Result<Vec<String>, String> {
        let path = format!("{SESSIONS}/available?game={}", self.game_id);
        let r = self
            .send(reqwest::Method::GET, &path, None, false, REQUEST_TIMEOUT)
            .await;
        if r.status != 200 {
            return Err(format!(
                "GET {path}: HTTP {} {}",
                r.status,
                r.body.chars().take(200).collect::<String>()
            ));
        }
        let list: AvailableList =
            serde_json::from_str(&r.body).map_err(|e| format!("GET {path}: {e}"))?;
        Ok(list
            .sessions
            .into_iter()
            .filter(|e| e.joinable)
            .map(|e| e.session_id)
            .collect())
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        auth: bool,
        timeout: Duration,
    ) -> Reply {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.backend))
            .timeout(timeout);
        if auth {
            req = req.bearer_auth(&self.token);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        match req.send().await {
            Ok(mut resp) => {
                let status = resp.status().as_u16();
                let retry_after_ms = retry_after(resp.headers(), SystemTime::now())
                    .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                if resp.status().is_redirection() {
                    let to = resp
                        .headers()
                        .get(reqwest::header::LOCATION)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("nowhere");
                    let error = format!("the backend answered with a redirect to {to}; give horst house the address horst itself serves on (--backend), not a proxy that redirects");
                    return Reply {
                        status,
                        body: serde_json::to_string(&NetworkError { error }).unwrap_or_default(),
                        retry_after_ms: None,
                    };
                }
                match read_bounded(&mut resp).await {
                    Ok(bytes) => Reply {
                        status,
                        body: String::from_utf8_lossy(&bytes).into_owned(),
                        retry_after_ms,
                    },
                    // A body cut off mid-way is an empty one: the page asks again from the
                    // same place (a poll) or reads `{}`, as the bridge does with fetch.
                    Err(BodyError::Read(_)) => Reply {
                        status,
                        body: String::new(),
                        retry_after_ms,
                    },
                    // Too large to be an answer of the protocol: no answer, which the page
                    // retries, and the rest is never read.
                    Err(e @ BodyError::TooLarge) => Reply {
                        status: 0,
                        body: serde_json::to_string(&NetworkError {
                            error: format!("{e} (HTTP {status} from the backend)"),
                        })
                        .unwrap_or_default(),
                        retry_after_ms: None,
                    },
                }
            }
            Err(e) => Reply {
                status: 0,
                body: serde_json::to_string(&NetworkError {
                    error: format!("network error: {}", without_url(&e)),
                })
                .unwrap_or_default(),
                retry_after_ms: None,
            },
        }
    }
}

/// Sessions one table may call with the house's token: those its creates and rematches
/// made, and the next rounds the API named in answers about them (an autoRematch's round,
/// linked by the API, reaches the page in a poll's or an ops answer's `nextSessionId`).
/// Every house table is the token's, so the API lets the token act on any of them: a page
/// (or a game that reached its binding) could drain another table's host queue, publish
/// into it or end it. The public view needs no token and is not limited.
#[derive(Debug, Default)]
pub struct Hosted {
    /// Newest last; at most [`Hosted::KEPT`] (a page only ever calls its current round and
    /// the one before it).
    sessions: std::collections::VecDeque<String>,
}

impl Hosted {
    const KEPT: usize = 8;

    /// Whether the table may make `call`; `None` if so, else the session it may not touch.
    pub fn refuses<'a>(&self, call: &'a BridgeCall) -> Option<&'a str> {
        let sid = match call {
            BridgeCall::CreateSession { .. } | BridgeCall::PublicView { .. } => return None,
            BridgeCall::Ops { session_id, .. }
            | BridgeCall::PendingActions { session_id, .. }
            | BridgeCall::Rematch { session_id } => session_id,
        };
        (!self.sessions.iter().any(|s| s == sid)).then_some(sid.as_str())
    }

    /// Learns the sessions `reply` (the API's answer to `call`) names as this table's: the
    /// one a create or rematch made, the next round an answer about a session of its names.
    pub fn learn(&mut self, call: &BridgeCall, reply: &Reply) {
        if !(200..300).contains(&reply.status) || self.refuses(call).is_some() {
            return;
        }
        let field = match call {
            BridgeCall::CreateSession { .. } | BridgeCall::Rematch { .. } => "sessionId",
            BridgeCall::Ops { .. } | BridgeCall::PendingActions { .. } => "nextSessionId",
            BridgeCall::PublicView { .. } => return,
        };
        let named = serde_json::from_str::<Value>(&reply.body)
            .ok()
            .and_then(|v| v.get(field)?.as_str().map(str::to_string));
        if let Some(sid) = named {
            self.add(sid);
        }
    }

    fn add(&mut self, sid: String) {
        if self.sessions.contains(&sid) {
            return;
        }
        if self.sessions.len() == Self::KEPT {
            self.sessions.pop_front();
        }
        self.sessions.push_back(sid);
    }
}

/// The answer to a call on a session the table does not host ([`Hosted::refuses`]), in the
/// API's error shape: 403 `not_the_host`, as the API answers another host.
pub fn not_hosted(session_id: &str) -> Reply {
    #[derive(Serialize)]
    struct Refused {
        code: &'static str,
        error: String,
    }
    let body = Refused {
        code: "not_the_host",
        error: format!(
            "this table does not host session {session_id}: a house table calls only the sessions it created or rematched and the next rounds the API named for them"
        ),
    };
    Reply {
        status: 403,
        body: serde_json::to_string(&body).unwrap_or_default(),
        retry_after_ms: None,
    }
}

/// reqwest's errors include the URL; ours carry no secrets, but keep messages short.
fn without_url(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    if let Some(url) = e.url() {
        s = s.replace(url.as_str(), "");
    }
    if e.is_timeout() {
        return "timed out".into();
    }
    s.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A table calls the sessions it made and the next rounds the API named for them; another
    /// house table's session (the same token may act on it at the API) is refused before
    /// anything is sent.
    #[test]
    fn a_table_calls_only_the_sessions_it_hosts() {
        let ok = |body: &str| Reply {
            status: 200,
            body: body.to_string(),
            retry_after_ms: None,
        };
        let ops = |sid: &str| BridgeCall::Ops {
            session_id: sid.into(),
            ops: json!([]),
            batch_id: None,
        };
        let poll = |sid: &str| BridgeCall::PendingActions {
            session_id: sid.into(),
            after: 0,
            wait: 0,
        };
        let create = BridgeCall::CreateSession {
            config: json!({}),
            idempotency_key: None,
        };
        let mut hosted = Hosted::default();
        assert_eq!(hosted.refuses(&create), None);
        assert_eq!(hosted.refuses(&ops("ses_1")), Some("ses_1"));
        hosted.learn(&create, &ok(r#"{"sessionId":"ses_1"}"#));
        assert_eq!(hosted.refuses(&ops("ses_1")), None);
        assert_eq!(hosted.refuses(&poll("ses_1")), None);
        // Another table's session: refused, and what its answers would name is not learned.
        assert_eq!(hosted.refuses(&poll("ses_9")), Some("ses_9"));
        hosted.learn(&poll("ses_9"), &ok(r#"{"nextSessionId":"ses_10"}"#));
        assert_eq!(hosted.refuses(&ops("ses_10")), Some("ses_10"));
        // The next round, named in an answer about its own session.
        hosted.learn(&poll("ses_1"), &ok(r#"{"nextSessionId":"ses_2"}"#));
        assert_eq!(hosted.refuses(&ops("ses_2")), None);
        hosted.learn(
            &BridgeCall::Rematch {
                session_id: "ses_2".into(),
            },
            &ok(r#"{"sessionId":"ses_3"}"#),
        );
        assert_eq!(hosted.refuses(&ops("ses_3")), None);
        // A refused call's answer teaches nothing; the public view needs no token.
        hosted.learn(
            &create,
            &Reply {
                status: 500,
                ..ok(r#"{"sessionId":"ses_4"}"#)
            },
        );
        assert_eq!(hosted.refuses(&ops("ses_4")), Some("ses_4"));
        let public = BridgeCall::PublicView {
            session_id: "ses_9".into(),
            since: None,
            wait: 0,
        };
        assert_eq!(hosted.refuses(&public), None);
        let r = not_hosted("ses_9");
        assert_eq!(r.status, 403);
        let v: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(v["code"], "not_the_host");
        assert!(v["error"].as_str().unwrap().contains("ses_9"), "{v}");
    }

    #[test]
    fn parses_each_call() {
        assert_eq!(
            parse(r#"{"kind":"createSession","id":1,"config":{"minPlayers":2}}"#).unwrap(),
            PageRequest::Call {
                id: 1,
                call: BridgeCall::CreateSession {
                    config: json!({"minPlayers":2}),
                    idempotency_key: None,
                }
            }
        );
        assert_eq!(
            parse(r#"{"kind":"createSession","id":1,"config":{},"idempotencyKey":"k-1"}"#).unwrap(),
            PageRequest::Call {
                id: 1,
                call: BridgeCall::CreateSession {
                    config: json!({}),
                    idempotency_key: Some("k-1".into()),
                }
            }
        );
        assert_eq!(
            parse(r#"{"kind":"pendingActions","id":2,"sessionId":"ses_ab-1","after":7,"wait":25}"#)
                .unwrap(),
            PageRequest::Call {
                id: 2,
                call: BridgeCall::PendingActions {
                    session_id: "ses_ab-1".into(),
                    after: 7,
                    wait: 25
                }
            }
        );
        assert_eq!(
            parse(r#"{"kind":"publicView","id":3,"sessionId":"s","wait":0}"#).unwrap(),
            PageRequest::Call {
                id: 3,
                call: BridgeCall::PublicView {
                    session_id: "s".into(),
                    since: None,
                    wait: 0
                }
            }
        );
        assert!(matches!(
            parse(r#"{"kind":"status","view":{"status":"waiting"}}"#).unwrap(),
            PageRequest::Status(_)
        ));
        assert!(matches!(
            parse(r#"{"kind":"ops","id":4,"sessionId":"s","ops":[{"op":"state","state":{}}]}"#)
                .unwrap(),
            PageRequest::Call {
                id: 4,
                call: BridgeCall::Ops { batch_id: None, .. }
            }
        ));
        assert!(matches!(
            parse(r#"{"kind":"ops","id":4,"sessionId":"s","ops":[],"batchId":"b_1"}"#).unwrap(),
            PageRequest::Call {
                id: 4,
                call: BridgeCall::Ops { batch_id: Some(b), .. }
            } if b == "b_1"
        ));
    }

    #[test]
    fn refuses_what_could_leave_the_bridge_api() {
        for bad in [
            "",
            "[]",
            r#"{"kind":"fetch","id":1,"url":"http://evil"}"#,
            r#"{"kind":"ops","id":1,"sessionId":"../../admin","ops":[]}"#,
            r#"{"kind":"ops","id":1,"sessionId":"a?b","ops":[]}"#,
            r#"{"kind":"ops","id":1,"sessionId":"s","ops":{}}"#,
            r#"{"kind":"pendingActions","id":1,"sessionId":"s","wait":26}"#,
            r#"{"kind":"pendingActions","sessionId":"s"}"#,
            r#"{"kind":"createSession","id":1,"config":[]}"#,
            r#"{"kind":"createSession","id":1,"config":{},"idempotencyKey":"a b"}"#,
            r#"{"kind":"ops","id":1,"sessionId":"s","ops":[],"batchId":""}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad} should be refused");
        }
        let many = format!(
            r#"{{"kind":"ops","id":1,"sessionId":"s","ops":[{}]}}"#,
            vec!["{}"; 101].join(",")
        );
        assert!(parse(&many).is_err());
    }

    /// Serves one canned HTTP answer on loopback; returns the base URL.
    async fn answer_once(response: &'static str) -> String {
        answer_once_keeping(response).await.0
    }

    /// [`answer_once`], and the request it was sent (head and body, as text).
    async fn answer_once_keeping(
        response: &'static str,
    ) -> (String, tokio::sync::oneshot::Receiver<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (sent, request) = tokio::sync::oneshot::channel();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            // The whole request first: closing with some of it unread would reset the
            // connection before the client reads the answer.
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = conn.read(&mut buf).await.unwrap();
                req.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&req).to_ascii_lowercase();
                if let Some(head) = text.find("\r\n\r\n") {
                    let len = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse().unwrap());
                    if req.len() >= head + 4 + len {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            let _ = sent.send(String::from_utf8_lossy(&req).into_owned());
            conn.write_all(response.as_bytes()).await.unwrap();
            let _ = conn.shutdown().await;
        });
        (format!("http://{addr}"), request)
    }

    /// The page's retry keys reach the backend, so a create or a batch the page sends again
    /// after a lost answer is answered, not applied again (docs/hosts.md). The house dropped
    /// them: every resent batch was applied twice, every resent create made a second table.
    #[tokio::test]
    async fn the_pages_retry_keys_reach_the_backend() {
        let ok = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}";
        let calls = [
            (
                r#"{"kind":"createSession","id":1,"config":{"a":1},"idempotencyKey":"k_1"}"#,
                json!({"config": {"a": 1}, "gameId": "chess", "gameTitle": "Chess", "idempotencyKey": "k_1"}),
            ),
            (
                r#"{"kind":"createSession","id":2,"config":{}}"#,
                json!({"config": {}, "gameId": "chess", "gameTitle": "Chess"}),
            ),
            (
                r#"{"kind":"ops","id":3,"sessionId":"ses_1","ops":[],"batchId":"b_1"}"#,
                json!({"ops": [], "batchId": "b_1"}),
            ),
        ];
        for (page, want) in calls {
            let (backend, request) = answer_once_keeping(ok).await;
            let http = api_client().no_proxy().build().unwrap();
            let relay = Relay::new(http, &backend, "t", "chess", "Chess");
            let PageRequest::Call { call, .. } = parse(page).unwrap() else {
                panic!("{page} is a call")
            };
            assert_eq!(relay.perform(&call).await.status, 200);
            let request = request.await.unwrap();
            let body = &request[request.find("\r\n\r\n").unwrap() + 4..];
            let body: Value = serde_json::from_str(body).unwrap();
            assert_eq!(body, want, "{page}");
        }
    }

    /// A redirect is the page's answer, not followed: followed, the 302 to a sign-in page
    /// turned `POST /ops` into a `GET` of it, and its 200 counted as the ops applied.
    #[tokio::test]
    async fn a_redirect_is_answered_to_the_page_not_followed() {
        let target = answer_once(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 7\r\nconnection: close\r\n\r\n<html/>",
        )
        .await;
        let response: &'static str = Box::leak(
            format!("HTTP/1.1 302 Found\r\nlocation: {target}/login\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .into_boxed_str(),
        );
        let backend = answer_once(response).await;
        let http = api_client().no_proxy().build().unwrap();
        let relay = Relay::new(http, &backend, "t", "chess", "Chess");
        let reply = relay
            .perform(&BridgeCall::Ops {
                session_id: "ses_1".into(),
                ops: serde_json::json!([]),
                batch_id: None,
            })
            .await;
        assert_eq!(reply.status, 302, "{}", reply.body);
        let body: Value = serde_json::from_str(&reply.body).unwrap();
        let error = body["error"].as_str().unwrap();
        assert!(
            error.contains(&format!("a redirect to {target}/login")),
            "{error}"
        );
    }

    #[tokio::test]
    async fn carries_retry_after_to_the_page() {
        let backend = answer_once(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 7\r\n\
             content-length: 22\r\nconnection: close\r\n\r\n{\"code\":\"unavailable\"}",
        )
        .await;
        let http = reqwest::Client::builder().no_proxy().build().unwrap();
        let relay = Relay::new(http, &backend, "t", "chess", "Chess");
        let reply = relay
            .perform(&BridgeCall::Rematch {
                session_id: "ses_1".into(),
            })
            .await;
        assert_eq!(reply.status, 503, "{}", reply.body);
        assert_eq!(reply.retry_after_ms, Some(7000));
        assert_eq!(reply.body, r#"{"code":"unavailable"}"#);
    }

    /// A `Retry-After` given as an HTTP date (RFC 9110 allows it; proxies send it) reaches
    /// the page as the milliseconds to that date from the answer's `Date`; before, only
    /// seconds were read and the page waited its own backoff.
    #[tokio::test]
    async fn a_retry_after_given_as_an_http_date_reaches_the_page_in_ms() {
        for (retry_after, want) in [
            ("Sun, 06 Dec 2026 18:00:09 GMT", Some(9000)),
            ("Sunday, 06-Dec-26 18:00:02 GMT", Some(2000)),
            ("Sun Dec  6 18:01:00 2026", Some(60_000)),
            // In the past, or not a date: no header, the page's own backoff.
            ("Sun, 06 Dec 2026 17:59:00 GMT", None),
            ("soon", None),
        ] {
            let response: &'static str = Box::leak(
                format!(
                    "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n\
                     date: Sun, 06 Dec 2026 18:00:00 GMT\r\nretry-after: {retry_after}\r\n\
                     content-length: 16\r\nconnection: close\r\n\r\n{{\"code\":\"burst\"}}"
                )
                .into_boxed_str(),
            );
            let backend = answer_once(response).await;
            let http = api_client().no_proxy().build().unwrap();
            let relay = Relay::new(http, &backend, "t", "chess", "Chess");
            let reply = relay
                .perform(&BridgeCall::Rematch {
                    session_id: "ses_1".into(),
                })
                .await;
            assert_eq!(reply.status, 429, "{}", reply.body);
            assert_eq!(reply.retry_after_ms, want, "{retry_after}");
        }
    }

    /// Serves one answer whose head is `head` and whose body never ends (1 MiB chunks until
    /// the client hangs up); returns the base URL and the bytes of body sent so far.
    async fn answer_without_end(
        head: &'static str,
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::Ordering;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let sent = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = sent.clone();
        tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf).await;
            if conn.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let chunk = vec![b' '; 1 << 20];
            // Stops when the client hangs up (or at 1 GiB, should a client read it all).
            while counter.load(Ordering::Relaxed) < 1 << 30 {
                if conn.write_all(&chunk).await.is_err() {
                    return;
                }
                counter.fetch_add(chunk.len(), Ordering::Relaxed);
            }
        });
        (format!("http://{addr}"), sent)
    }

    /// An answer over 16 MiB, endless or said so by its `Content-Length`, is no answer to the
    /// page (status 0, which it retries) and is not read past the cap. Before, the relay
    /// read it whole: an endless one held the house's memory without bound.
    #[tokio::test]
    async fn an_answer_over_16_mib_is_no_answer_and_is_not_read_past_the_cap() {
        for head in [
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{\"pad\":\"",
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 67108864\r\n\r\n{\"pad\":\"",
        ] {
            let (backend, sent) = answer_without_end(head).await;
            let http = api_client().no_proxy().build().unwrap();
            let relay = Relay::new(http, &backend, "t", "chess", "Chess");
            let reply = relay
                .perform(&BridgeCall::PendingActions {
                    session_id: "ses_1".into(),
                    after: 0,
                    wait: 25,
                })
                .await;
            assert_eq!(reply.status, 0, "{head}");
            let body: Value = serde_json::from_str(&reply.body).unwrap();
            let error = body["error"].as_str().unwrap();
            assert!(error.contains("larger than 16 MiB"), "{error}");
            // What went out before the relay hung up: at most the cap and the sockets' buffers.
            let sent = sent.load(std::sync::atomic::Ordering::Relaxed);
            assert!(sent < 40 << 20, "{sent} bytes sent");
        }
    }
}
