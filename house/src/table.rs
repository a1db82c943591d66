//! One house table: one browser page that runs `web/house/` with the game in a sandboxed
//! frame. This module keeps the page's DevTools sessions (the page and every out-of-process
//! frame), filters its network requests, relays its bridge calls, and publishes what the page
//! says about its table.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::cdp::{Browser, CdpError, Event};
use crate::guard::{self, Origin};
use crate::relay::{self, PageRequest, Relay};

/// The binding the house page calls; only the house page knows it is there.
pub const BINDING: &str = "horstHouse";

/// The DevTools commands and events a table uses, typed (the protocol's names, camelCase).
mod devtools {
    use super::*;

    /// The params of a command that takes none.
    #[derive(Serialize)]
    pub struct NoParams {}

    #[derive(Serialize)]
    pub struct AddBinding<'a> {
        pub name: &'a str,
    }

    #[derive(Serialize)]
    pub struct Navigate<'a> {
        pub url: &'a str,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct FetchEnable {
        pub patterns: [RequestPattern; 1],
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct RequestPattern {
        pub url_pattern: &'static str,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SetAutoAttach {
        pub auto_attach: bool,
        pub wait_for_debugger_on_start: bool,
        pub flatten: bool,
    }

    /// `Fetch.continueRequest`, or with `error_reason` `Fetch.failRequest`.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct RequestVerdict {
        pub request_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub error_reason: Option<&'static str>,
    }

    #[derive(Serialize)]
    pub struct Evaluate {
        pub expression: String,
    }

    /// `Fetch.requestPaused` (what we read of it).
    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase", default)]
    pub struct RequestPaused {
        pub request_id: String,
        pub request: PausedRequest,
    }

    #[derive(Deserialize, Default)]
    #[serde(default)]
    pub struct PausedRequest {
        pub url: String,
    }

    /// `Target.attachedToTarget` and `Target.detachedFromTarget` (what we read of them).
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct TargetSession {
        pub session_id: String,
    }

    /// `Runtime.bindingCalled`.
    #[derive(Deserialize, Default)]
    #[serde(default)]
    pub struct BindingCalled {
        pub name: String,
        pub payload: String,
    }

    /// An event's params as `T` (`None`: not what the protocol promises).
    pub fn read<T: serde::de::DeserializeOwned>(params: &Value) -> Option<T> {
        T::deserialize(params).ok()
    }
}

use devtools::*;

/// What the supervisor knows about a table, from the page's status reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableView {
    pub session_id: Option<String>,
    pub series_id: Option<String>,
    /// The page's HostSession status: idle, creating, failed, waiting, active, finished, lost,
    /// left.
    pub status: String,
    pub round: Option<u64>,
    pub next_session_id: Option<String>,
    pub result_reason: Option<String>,
    /// The bridge refused our token (401/403): nothing this table does will work.
    pub auth_refused: bool,
    /// The page or the browser died.
    pub dead: bool,
    /// The first thing that went wrong loading the page or the game (a file the backend
    /// answered with an error, a script exception, a console error), for the log.
    pub load_error: Option<String>,
    /// What the page itself says went wrong (its view's `error`: creating the session
    /// failed, its ops were refused), for the log.
    pub page_error: Option<String>,
    /// The session the table's latest create or rematch made, recorded as soon as the backend
    /// answered and before the page hears of it. Until the page reports it, this is the only
    /// trace of it: a house stopping in that moment ends it from here
    /// ([`TableView::unreported_session`]).
    pub made_session: Option<String>,
}

impl TableView {
    fn from_page(v: &Value) -> TableView {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        TableView {
            session_id: s("sessionId"),
            series_id: s("seriesId"),
            status: s("status").unwrap_or_else(|| "idle".into()),
            round: v.get("round").and_then(Value::as_u64),
            next_session_id: s("nextSessionId"),
            result_reason: v
                .pointer("/result/reason")
                .and_then(Value::as_str)
                .map(str::to_string),
            auth_refused: false,
            dead: false,
            load_error: None,
            page_error: s("error").filter(|e| !e.is_empty()),
            made_session: None,
        }
    }

    /// The session a create or rematch made that the page has not reported yet (its view still
    /// names no session, or the one before a rematch).
    pub fn unreported_session(&self) -> Option<&str> {
        self.made_session
            .as_deref()
            .filter(|m| self.session_id.as_deref() != Some(*m))
    }
}

/// A running table. Dropping the handle does not close the page; call [`Table::close`].
pub struct Table {
    pub target_id: String,
    pub session_id: String,
    pub view: watch::Receiver<TableView>,
    /// DevTools sessions of the page's out-of-process frames (the game's frame among them).
    pub frames: Arc<Mutex<Vec<String>>>,
    /// Set when the table is closed (or the house stops): a session a create or rematch
    /// still in flight then makes is ended at once (`host_left`).
    closed: Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Table {
    /// Open a page and start hosting `game_path` (for example `/games/chess/?turnTimeout=5`).
    pub async fn open(
        browser: Arc<Browser>,
        origin: &Origin,
        relay: Relay,
        game_path: &str,
        title: &str,
    ) -> Result<Table, CdpError> {
        let (target_id, session_id) = browser.new_page().await?;
        tracing::debug!(target_id = %target_id, "page created");
        // From here on a failure closes what it made: a tab left open would go on loading
        // and host a table nobody tracks (past `max_tables`, never ended).
        let mut cleanup = OpenGuard {
            browser: &browser,
            target_id: &target_id,
            session_id: &session_id,
            task: None,
            frames: None,
            done: false,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        browser.route(&session_id, tx);
        setup_session(&browser, &session_id).await?;
        // The binding goes only into the page session: frames (the game) never get it. It is
        // installed before the page loads, and never from the event loop below, which must
        // keep answering paused requests (a navigation waits for them).
        browser
            .call(
                Some(&session_id),
                "Runtime.addBinding",
                AddBinding { name: BINDING },
            )
            .await?;
        browser
            .call(Some(&session_id), "Page.enable", NoParams {})
            .await?;
        let url = format!(
            "{}/house/table.html?game={}&title={}",
            origin.as_str(),
            query_escape(game_path),
            query_escape(title)
        );
        let (view_tx, view_rx) = watch::channel(TableView {
            status: "idle".into(),
            ..TableView::default()
        });
        let frames = Arc::new(Mutex::new(Vec::new()));
        let closed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let task = tokio::spawn(run(
            browser.clone(),
            origin.clone(),
            relay,
            session_id.clone(),
            rx,
            view_tx,
            Shared {
                frames: frames.clone(),
                closed: closed.clone(),
            },
        ));
        cleanup.task = Some(task.abort_handle());
        cleanup.frames = Some(frames.clone());
        tracing::debug!(%url, "navigating");
        browser
            .call(Some(&session_id), "Page.navigate", Navigate { url: &url })
            .await?;
        tracing::debug!("navigated");
        cleanup.done = true;
        drop(cleanup);
        Ok(Table {
            target_id,
            session_id,
            view: view_rx,
            frames,
            closed,
            task,
        })
    }

    /// Evaluate `expression` in each of the page's frames and return the first value that is
    /// not null (diagnostics and tests: what does the game page show?).
    pub async fn evaluate_in_frames(&self, browser: &Browser, expression: &str) -> Option<Value> {
        let frames = self.frames.lock().unwrap().clone();
        for f in frames {
            if let Ok(v) = browser.evaluate(&f, expression).await {
                if !v.is_null() {
                    return Some(v);
                }
            }
        }
        None
    }

    /// Crash the page's frames (`Page.crash`): the end-to-end tests' way to make the
    /// game die under a live table. Not waited for: a crashed frame never answers.
    pub fn crash_frames(&self, browser: &Arc<Browser>) {
        let frames = self.frames.lock().unwrap().clone();
        for f in frames {
            let b = browser.clone();
            tokio::spawn(async move {
                let _ = b.call(Some(&f), "Page.crash", NoParams {}).await;
            });
        }
    }

    /// Marks the table closed (the house stops it, or is stopping): a session its page's
    /// create or rematch still in flight makes is ended at once.
    pub fn mark_closed(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Close the page (no end op: the caller ends live sessions through the relay first).
    pub async fn close(self, browser: &Browser) {
        self.mark_closed();
        let _ = browser.close_page(&self.target_id).await;
        self.task.abort();
        browser.unroute(&self.session_id);
        // The frames' routes too: the loop that took them off on their detach is stopped.
        for f in self.frames.lock().unwrap().drain(..) {
            browser.unroute(&f);
        }
    }
}

/// Closes a page whose [`Table::open`] failed part way (unless `done`): the tab, its event
/// loop and its routes.
struct OpenGuard<'a> {
    browser: &'a Arc<Browser>,
    target_id: &'a str,
    session_id: &'a str,
    task: Option<tokio::task::AbortHandle>,
    frames: Option<Arc<Mutex<Vec<String>>>>,
    done: bool,
}

impl Drop for OpenGuard<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Some(task) = &self.task {
            task.abort();
        }
        self.browser.unroute(self.session_id);
        if let Some(frames) = &self.frames {
            for f in frames.lock().unwrap().drain(..) {
                self.browser.unroute(&f);
            }
        }
        // Closing takes a DevTools call: on its own task (a drop cannot wait for it).
        let (browser, target) = (self.browser.clone(), self.target_id.to_string());
        tokio::spawn(async move {
            let _ = browser.close_page(&target).await;
        });
    }
}

/// Everything a page or a frame session needs before it may load anything: the request
/// filter, the binding (page only matters, harmless in frames), and auto-attach so frames in
/// other processes (sandboxed game frames are) pause until they have the filter too.
async fn setup_session(browser: &Browser, session: &str) -> Result<(), CdpError> {
    browser
        .call(
            Some(session),
            "Fetch.enable",
            FetchEnable {
                patterns: [RequestPattern { url_pattern: "*" }],
            },
        )
        .await?;
    browser
        .call(Some(session), "Runtime.enable", NoParams {})
        .await?;
    // Only to say why a table failed to load (a missing file, a script error).
    browser
        .call(Some(session), "Network.enable", NoParams {})
        .await?;
    browser
        .call(Some(session), "Log.enable", NoParams {})
        .await?;
    // Without it Chromium sends no `Inspector.targetCrashed`: a crashed page or game frame
    // went unnoticed.
    browser
        .call(Some(session), "Inspector.enable", NoParams {})
        .await?;
    browser
        .call(
            Some(session),
            "Target.setAutoAttach",
            SetAutoAttach {
                auto_attach: true,
                wait_for_debugger_on_start: true,
                flatten: true,
            },
        )
        .await?;
    Ok(())
}

async fn run(
    browser: Arc<Browser>,
    origin: Origin,
    relay: Relay,
    page_session: String,
    mut events: mpsc::UnboundedReceiver<Event>,
    view: watch::Sender<TableView>,
    shared: Shared,
) {
    let Shared { frames, closed } = shared;
    // The sessions this table may call (`relay::Hosted`), learned from the answers.
    let hosted = Arc::new(Mutex::new(relay::Hosted::default()));
    // Nothing in this loop awaits the browser: every call goes out on its own task, so a
    // navigation waiting for a paused request can never wait for the loop itself.
    while let Some(ev) = events.recv().await {
        let from = ev.session_id.clone().unwrap_or_default();
        match ev.method.as_str() {
            "Fetch.requestPaused" => {
                let paused: RequestPaused = read(&ev.params).unwrap_or_default();
                let url = paused.request.url.as_str();
                let b = browser.clone();
                let (method, error_reason) = if guard::allowed(url, &origin) {
                    ("Fetch.continueRequest", None)
                } else {
                    tracing::warn!(url = %short(url), "house page request blocked: not a house file on the backend");
                    ("Fetch.failRequest", Some("AccessDenied"))
                };
                let params = RequestVerdict {
                    request_id: paused.request_id,
                    error_reason,
                };
                tokio::spawn(async move {
                    let _ = b.call(Some(&from), method, params).await;
                });
            }
            "Target.attachedToTarget" => {
                let Some(TargetSession { session_id: child }) = read(&ev.params) else {
                    continue;
                };
                // Frames feed this same loop.
                if let Some(tx) = browser.route_of(&page_session) {
                    browser.route(&child, tx);
                }
                frames.lock().unwrap().push(child.clone());
                let b = browser.clone();
                tokio::spawn(async move {
                    if let Err(e) = setup_session(&b, &child).await {
                        tracing::debug!("frame setup failed: {e}");
                    }
                    let _ = b
                        .call(Some(&child), "Runtime.runIfWaitingForDebugger", NoParams {})
                        .await;
                });
            }
            "Target.detachedFromTarget" => {
                if let Some(TargetSession { session_id: child }) = read(&ev.params) {
                    browser.unroute(&child);
                    frames.lock().unwrap().retain(|f| *f != child);
                }
            }
            "Runtime.bindingCalled" if from == page_session => {
                let called: BindingCalled = read(&ev.params).unwrap_or_default();
                if called.name != BINDING {
                    continue;
                }
                match relay::parse(&called.payload) {
                    Ok(PageRequest::Status(v)) => {
                        let new = TableView::from_page(&v);
                        view.send_modify(|cur| {
                            let (auth, load) = (cur.auth_refused, cur.load_error.take());
                            let made = cur.made_session.take();
                            *cur = new;
                            cur.auth_refused = auth;
                            cur.load_error = load;
                            cur.made_session = made;
                        });
                    }
                    Ok(PageRequest::Call { id, call }) => {
                        let (b, s) = (browser.clone(), page_session.clone());
                        let refused = hosted.lock().unwrap().refuses(&call).map(str::to_string);
                        if let Some(sid) = refused {
                            tracing::warn!(session = %sid, "house page called a session its table does not host; refused");
                            tokio::spawn(async move {
                                answer(&b, &s, id, relay::not_hosted(&sid)).await
                            });
                            continue;
                        }
                        let (r, view, closed, hosted) =
                            (relay.clone(), view.clone(), closed.clone(), hosted.clone());
                        tokio::spawn(async move {
                            let reply = r.perform(&call).await;
                            // Before the page hears of it: its next call may name the
                            // session this answer made or linked.
                            hosted.lock().unwrap().learn(&call, &reply);
                            // Record the session this call made and look at `closed` under the
                            // view's lock: a house stopping marks the table closed and then
                            // reads the view, so either it sees the session here and ends it,
                            // or this sees `closed` and ends it. Checked outside the lock, a
                            // session made just before the stop was ended by nobody and stayed
                            // joinable with no page behind it.
                            let made = made_session(&call, &reply);
                            let mut was_closed = false;
                            view.send_modify(|v| {
                                if let Some(sid) = &made {
                                    v.made_session = Some(sid.clone());
                                }
                                was_closed = closed.load(std::sync::atomic::Ordering::SeqCst);
                            });
                            if was_closed {
                                // Nobody hosts what this call made: a joinable house table
                                // with no page behind it, until host_disconnected 90 s on.
                                if let Some(sid) = made {
                                    tracing::info!(session = %sid, "a session made for a table closed meanwhile; ending it");
                                    let _ = r.end_host_left(&sid).await;
                                }
                                return;
                            }
                            if reply.status == 401 || reply.status == 403 {
                                view.send_modify(|v| v.auth_refused = true);
                            }
                            answer(&b, &s, id, reply).await;
                        });
                    }
                    Err(e) => {
                        tracing::warn!("house page sent a bad request: {e}");
                        // Answered at once: unanswered, the page would wait a minute for
                        // the reply and then send the same request again.
                        if let Some(id) = relay::request_id(&called.payload) {
                            let reply = relay::refusal(&called.payload, &e);
                            let (b, s) = (browser.clone(), page_session.clone());
                            tokio::spawn(async move { answer(&b, &s, id, reply).await });
                        }
                    }
                }
            }
            "Network.responseReceived" | "Runtime.exceptionThrown" | "Log.entryAdded" => {
                if let Some(why) = load_problem(&ev.method, &ev.params) {
                    let first = view.borrow().load_error.is_none();
                    tracing::warn!(problem = %why, "house table page");
                    if first {
                        view.send_modify(|v| v.load_error = Some(why));
                    }
                }
            }
            "Inspector.targetCrashed" | "Inspector.detached" if from == page_session => {
                tracing::warn!(event = %ev.method, "house page is gone");
                break;
            }
            // The game's frame crashed (or was killed for its memory): the page lives on and
            // would keep the session, but nothing answers the players' moves any more, and
            // they would be struck out and forfeit a rated game. The table is dead: the
            // supervisor ends it `host_left` (no winner, not rated).
            "Inspector.targetCrashed" if frames.lock().unwrap().contains(&from) => {
                tracing::warn!("a house table's game frame crashed; ending its table");
                break;
            }
            _ => {}
        }
    }
    view.send_modify(|v| v.dead = true);
}

/// What a table's handle and its event loop share.
struct Shared {
    /// The page's frames' DevTools sessions ([`Table::frames`]).
    frames: Arc<Mutex<Vec<String>>>,
    /// [`Table::mark_closed`].
    closed: Arc<std::sync::atomic::AtomicBool>,
}

/// The session a successful create or rematch made, from the backend's answer.
fn made_session(call: &relay::BridgeCall, reply: &relay::Reply) -> Option<String> {
    use relay::BridgeCall;
    if !matches!(
        call,
        BridgeCall::CreateSession { .. } | BridgeCall::Rematch { .. }
    ) || !(200..300).contains(&reply.status)
    {
        return None;
    }
    serde_json::from_str::<Value>(&reply.body)
        .ok()?
        .get("sessionId")?
        .as_str()
        .map(str::to_string)
}

/// The script that hands the page `reply`: status, body and Retry-After (`null` if none).
fn reply_expression(id: u64, reply: relay::Reply) -> String {
    let retry_after = reply
        .retry_after_ms
        .map_or_else(|| "null".to_string(), |ms| ms.to_string());
    format!(
        "window.__horstHouseReply && window.__horstHouseReply({id}, {}, {}, {retry_after})",
        reply.status,
        Value::String(reply.body)
    )
}

/// Hands the page the reply to its request `id`.
async fn answer(browser: &Browser, page_session: &str, id: u64, reply: relay::Reply) {
    let expr = reply_expression(id, reply);
    let _ = browser
        .call(
            Some(page_session),
            "Runtime.evaluate",
            Evaluate { expression: expr },
        )
        .await;
}

/// A sentence for the log when a DevTools event says the page or its game is failing: a file
/// answered with an error status, an uncaught exception, or an error on the console.
fn load_problem(method: &str, params: &Value) -> Option<String> {
    let text = |p: &str| params.pointer(p).and_then(Value::as_str).unwrap_or("");
    match method {
        "Network.responseReceived" => {
            let status = params.pointer("/response/status")?.as_u64()?;
            (status >= 400)
                .then(|| format!("{} answered HTTP {status}", short(text("/response/url"))))
        }
        "Runtime.exceptionThrown" => {
            let d = text("/exceptionDetails/exception/description");
            let what = if d.is_empty() {
                text("/exceptionDetails/text")
            } else {
                d
            };
            Some(format!(
                "uncaught exception in {}: {}",
                short(text("/exceptionDetails/url")),
                short(what.lines().next().unwrap_or(""))
            ))
        }
        "Log.entryAdded" if text("/entry/level") == "error" => Some(format!(
            "console error: {}{}",
            short(text("/entry/text")),
            match text("/entry/url") {
                "" => String::new(),
                u => format!(" ({})", short(u)),
            }
        )),
        _ => None,
    }
}

fn short(url: &str) -> String {
    url.chars().take(200).collect()
}

/// Percent-encode a query value (RFC 3986 unreserved characters and `/` stay as they are).
fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_page_gets_retry_after() {
        let reply = |retry_after_ms| relay::Reply {
            status: 503,
            body: r#"{"error":"x"}"#.into(),
            retry_after_ms,
        };
        assert_eq!(
            reply_expression(4, reply(Some(5000))),
            r#"window.__horstHouseReply && window.__horstHouseReply(4, 503, "{\"error\":\"x\"}", 5000)"#
        );
        assert!(reply_expression(4, reply(None)).ends_with(", null)"));
    }

    #[test]
    fn escapes_query_values() {
        assert_eq!(
            query_escape("/games/chess/?turnTimeout=5&x=1"),
            "/games/chess/%3FturnTimeout%3D5%26x%3D1"
        );
        assert_eq!(query_escape("Rock paper"), "Rock%20paper");
    }

    #[test]
    fn load_problems_are_sentences() {
        let missing = load_problem(
            "Network.responseReceived",
            &json!({"response": {"url": "http://127.0.0.1:1/games/vendor/chess.js", "status": 404}}),
        );
        assert_eq!(
            missing.as_deref(),
            Some("http://127.0.0.1:1/games/vendor/chess.js answered HTTP 404")
        );
        assert_eq!(
            load_problem(
                "Network.responseReceived",
                &json!({"response": {"url": "x", "status": 200}})
            ),
            None
        );
        let thrown = load_problem(
            "Runtime.exceptionThrown",
            &json!({"exceptionDetails": {"text": "Uncaught", "url": "http://h/games/chess/game.js",
                     "exception": {"description": "TypeError: x is undefined\n    at game.js:3"}}}),
        )
        .unwrap();
        assert_eq!(
            thrown,
            "uncaught exception in http://h/games/chess/game.js: TypeError: x is undefined"
        );
        assert!(load_problem(
            "Log.entryAdded",
            &json!({"entry": {"level": "error", "text": "Failed to load module script"}})
        )
        .unwrap()
        .contains("Failed to load module script"));
        assert_eq!(
            load_problem(
                "Log.entryAdded",
                &json!({"entry": {"level": "info", "text": "hi"}})
            ),
            None
        );
    }

    #[test]
    fn view_from_the_page() {
        let v = TableView::from_page(&json!({
            "sessionId": "ses_1", "status": "finished", "round": 2, "nextSessionId": null,
            "result": { "winner": null, "reason": "host_disconnected" }
        }));
        assert_eq!(v.session_id.as_deref(), Some("ses_1"));
        assert_eq!(v.status, "finished");
        assert_eq!(v.round, Some(2));
        assert_eq!(v.next_session_id, None);
        assert_eq!(v.result_reason.as_deref(), Some("host_disconnected"));
        assert_eq!(v.page_error, None);
        // What the page says went wrong is kept for the log (a table that never loaded was
        // said to lack AGENT_CONFIGURE when creating its session had failed).
        let v = TableView::from_page(&json!({
            "status": "idle", "error": "creating the session failed: HTTP 503"
        }));
        assert_eq!(
            v.page_error.as_deref(),
            Some("creating the session failed: HTTP 503")
        );
    }

    #[test]
    fn a_session_made_but_not_reported_is_known() {
        let ok = |body: &str| relay::Reply {
            status: 201,
            body: body.into(),
            retry_after_ms: None,
        };
        let create = relay::BridgeCall::CreateSession {
            config: json!({}),
            idempotency_key: None,
        };
        let rematch = relay::BridgeCall::Rematch {
            session_id: "ses_1".into(),
        };
        let ops = relay::BridgeCall::Ops {
            session_id: "ses_1".into(),
            ops: json!([]),
            batch_id: None,
        };
        assert_eq!(
            made_session(&create, &ok(r#"{"sessionId":"ses_2"}"#)).as_deref(),
            Some("ses_2")
        );
        assert_eq!(
            made_session(&rematch, &ok(r#"{"sessionId":"ses_3"}"#)).as_deref(),
            Some("ses_3")
        );
        // Only a create or rematch the backend accepted makes one.
        assert_eq!(made_session(&ops, &ok(r#"{"sessionId":"ses_2"}"#)), None);
        let refused = relay::Reply {
            status: 409,
            ..ok(r#"{"sessionId":"ses_2"}"#)
        };
        assert_eq!(made_session(&create, &refused), None);

        // The page has not reported it: no session yet, or still the one before a rematch.
        let mut v = TableView {
            made_session: Some("ses_2".into()),
            ..TableView::default()
        };
        assert_eq!(v.unreported_session(), Some("ses_2"));
        v.session_id = Some("ses_1".into());
        assert_eq!(v.unreported_session(), Some("ses_2"));
        // Reported: the page's view is what says whether it is live.
        v.session_id = Some("ses_2".into());
        assert_eq!(v.unreported_session(), None);
    }
}
