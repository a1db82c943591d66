//! The browser bridge page (`/bridge/`) in headless Chromium with a user's JWT: a game
//! hosted from a tab, the tab going away (closed: `host_left`; crashed: `host_disconnected`
//! after the test-shortened host-gone time), and a v1 game (no `sdkVersion`) getting legacy
//! behaviour.

use std::time::Duration;

use serde_json::{json, Value};

use crate::browser::{launch, Tab};
use crate::harness::TestApp;
use crate::rcadia_common::{app_with, Client, AGENT};

const LONG: Duration = Duration::from_secs(60);
pub const PASSWORD: &str = "correct horse battery staple";

fn anon(app: &TestApp) -> Client {
    Client {
        base: format!("http://{}", app.addr),
        token: String::new(),
        http: reqwest::Client::new(),
    }
}

/// Sign in on the bridge page like a person would, and wait for the hosted table.
pub async fn host_from_tab(tab: &Tab, user: &str) -> String {
    sign_in_on_tab(tab, user).await;
    hosted_session(tab).await
}

/// Sign in on the bridge page like a person would.
async fn sign_in_on_tab(tab: &Tab, user: &str) {
    tab.wait_for(
        "!document.getElementById('signin').hidden",
        "the sign-in form",
        LONG,
    )
    .await;
    tab.eval(&format!(
        "(() => {{ const f = document.getElementById('signin-form'); f.elements.username.value = {user:?}; \
         f.elements.password.value = {PASSWORD:?}; f.requestSubmit(); return true; }})()"
    ))
    .await;
}

/// The session id of the table the tab hosts, once it waits for players.
async fn hosted_session(tab: &Tab) -> String {
    tab.wait_for(
        "document.getElementById('s-status').textContent === 'waiting'",
        "a waiting table",
        LONG,
    )
    .await;
    let session = tab
        .eval("document.getElementById('s-session').textContent")
        .await;
    session
        .as_str()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

async fn public_until(
    app: &TestApp,
    id: &str,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let c = anon(app);
    let deadline = tokio::time::Instant::now() + LONG;
    loop {
        let (_, v) = c.get(&format!("{AGENT}/{id}/public?wait=1")).await;
        if check(&v) {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never saw {what}: {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_that_goes_away_ends_its_table() {
    let app = app_with(|c| {
        c.sessions.host_gone_seconds = 3;
        c.sessions.host_alive_seconds = 1;
    })
    .await;
    app.person("tabby", PASSWORD).await;
    let browser = launch().await;
    let url = app.url("/bridge/?game=/games/chess/&title=Chess");

    // A tab closed by its user says goodbye (pagehide): host_left at once.
    let tab = Tab::open(&browser, &url).await;
    let closed = host_from_tab(&tab, "tabby").await;
    let (_, avail) = anon(&app).get(&format!("{AGENT}/available")).await;
    let entry = avail["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == closed.as_str())
        .cloned();
    assert_eq!(
        entry.as_ref().map(|e| e["host"].clone()),
        Some(json!("player")),
        "{avail}"
    );
    tab.close().await;
    let v = public_until(&app, &closed, "host_left", |v| v["status"] == "finished").await;
    assert_eq!(v["result"]["reason"], "host_left", "{v}");

    // A tab that dies says nothing: the backend ends the table when the host has been gone
    // for host_gone_seconds, with no rematch.
    let tab = Tab::open(&browser, &url).await;
    let crashed = host_from_tab(&tab, "tabby").await;
    tab.crash().await;
    let v = public_until(&app, &crashed, "host_disconnected", |v| {
        v["status"] == "finished"
    })
    .await;
    assert_eq!(v["result"]["reason"], "host_disconnected", "{v}");
    assert_eq!(v["result"]["winner"], Value::Null, "{v}");
    assert_eq!(
        v["nextSessionId"],
        Value::Null,
        "no rematch after host_disconnected: {v}"
    );
    browser.close().await;
}

/// "Sign in" pressed twice at once (a double click, Enter twice) signs in once and hosts one
/// table: the second submit started hosting a second time, and the first table went on in a
/// frame the page no longer showed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_pressed_twice_hosts_one_table() {
    let app = app_with(|_| {}).await;
    app.person("tabby", PASSWORD).await;
    let browser = launch().await;
    let tab = Tab::open(
        &browser,
        &app.url("/bridge/?game=/games/chess/&title=Chess"),
    )
    .await;
    tab.wait_for(
        "!document.getElementById('signin').hidden",
        "the sign-in form",
        LONG,
    )
    .await;
    // The page's own fetch, counted: the sign-ins it sends.
    tab.eval(&format!(
        "(() => {{ window.__signIns = 0; const f = window.fetch; window.fetch = (url, init) => {{ \
         if (String(url).includes('/auth/session') && init && init.method === 'POST') window.__signIns += 1; \
         return f(url, init); }}; \
         const form = document.getElementById('signin-form'); form.elements.username.value = 'tabby'; \
         form.elements.password.value = {PASSWORD:?}; form.requestSubmit(); form.requestSubmit(); return true; }})()"
    ))
    .await;
    tab.wait_for(
        "document.getElementById('s-status').textContent === 'waiting' && !document.getElementById('signin-form').hasAttribute('aria-busy')",
        "a waiting table",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("[window.__signIns, document.querySelectorAll('iframe').length]")
            .await,
        json!([1, 1]),
        "[sign-ins sent, game frames] after a double submit"
    );
    tab.close().await;
    browser.close().await;
}

/// "Sign out" clicked twice at once (a double click) ends the JWT once and the table once: the
/// second click sent a sign-out of its own while the first still waited for the table's end,
/// and the first then sent its sign-out without the token. While it is out the button is busy
/// (aria-busy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_out_clicked_twice_signs_out_once() {
    let app = app_with(|_| {}).await;
    app.person("tabby", PASSWORD).await;
    let browser = launch().await;
    let tab = Tab::open(
        &browser,
        &app.url("/bridge/?game=/games/chess/&title=Chess"),
    )
    .await;
    let table = host_from_tab(&tab, "tabby").await;
    // The page's own fetch, counted by method and path.
    let busy = tab
        .eval(
            "(() => { window.__calls = {}; const f = window.fetch; window.fetch = (url, init) => { \
             const k = `${(init && init.method) || 'GET'} ${new URL(url, location.href).pathname}`; \
             if (!k.startsWith('GET')) window.__calls[k] = (window.__calls[k] || 0) + 1; return f(url, init); }; \
             const b = document.getElementById('sign-out'); b.click(); b.click(); return b.getAttribute('aria-busy'); })()",
        )
        .await;
    tab.wait_for(
        "!document.getElementById('signin').hidden && document.getElementById('signin-error').textContent === 'Signed out.' \
         && !document.querySelector('[aria-busy]')",
        "the sign-in form after signing out",
        LONG,
    )
    .await;
    public_until(&app, &table, "the table ended", |v| {
        v["status"] == json!("finished")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        tab.eval("window.__calls").await,
        json!({
            format!("POST /api/v1/agent/bridge/sessions/{table}/ops"): 1,
            "DELETE /api/v1/auth/session": 1,
        }),
        "the bridge's requests after Sign out clicked twice"
    );
    assert_eq!(busy, json!("true"), "the Sign out button while it was out");
    tab.close().await;
    browser.close().await;
}

/// A v1 game: it configures without `sdkVersion`, understands only actions, and logs every
/// message its parent sends.
const V1_GAME: &str = r#"<!doctype html><meta charset="utf-8"><title>v1</title><pre id="log"></pre>
<script>
const log = (line) => { document.getElementById("log").textContent += line + "\n"; };
const id = (p) => typeof p === "string" ? p : p.playerId;
window.addEventListener("message", (e) => {
  if (e.source !== window.parent) return;
  const m = e.data || {};
  log(JSON.stringify(m));
  if (m.type !== "AGENT_ACTION") return;
  const a = m.data.action;
  if (a && a.type === "__game_start__") {
    const players = a.players.map(id);
    parent.postMessage({ type: "AGENT_STATE", data: { state: { players } } }, "*");
    parent.postMessage({ type: "AGENT_LEGAL_ACTIONS", data: { playerId: players[0], actions: ["win"] } }, "*");
  } else if (a === "win") {
    parent.postMessage({ type: "AGENT_GAME_OVER", data: { result: { winner: m.data.playerId } } }, "*");
  }
});
parent.postMessage({ type: "AGENT_CONFIGURE", data: { minPlayers: 2, maxPlayers: 2, turnBased: true, autoRematch: true } }, "*");
</script>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1_game_hosted_through_the_bridge_gets_legacy_behaviour() {
    let app = app_with(|_| {}).await;
    app.person("oldtimer", PASSWORD).await;
    // The v1 game comes from another origin, as third-party games do.
    let games = axum::Router::new().route(
        "/v1/",
        axum::routing::get(|| async { axum::response::Html(V1_GAME) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let games_addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, games).await });

    let browser = launch().await;
    let tab = Tab::open(
        &browser,
        &app.url(&format!("/bridge/?game=http://{games_addr}/v1/&title=Old")),
    )
    .await;
    // A game of another origin that the person did not pick in the page's form waits for
    // their click (`bridge_links_elsewhere_host_nothing_without_a_click`).
    sign_in_on_tab(&tab, "oldtimer").await;
    tab.wait_for(
        "!document.getElementById('consent').hidden",
        "the question whether to host the other site's game",
        LONG,
    )
    .await;
    tab.eval("document.getElementById('consent-yes').click(), true")
        .await;
    let table = hosted_session(&tab).await;
    let label = tab
        .eval("document.getElementById('s-session').textContent")
        .await;
    assert!(
        label.as_str().unwrap().contains("[legacy v1 game]"),
        "{label}"
    );

    let mut players = Vec::new();
    for name in ["First", "Second"] {
        let (token, _) = app
            .auth
            .create_token(&["play".into()], Some(name))
            .await
            .unwrap();
        let c = Client {
            base: format!("http://{}", app.addr),
            token,
            http: reqwest::Client::new(),
        };
        c.join(&table).await;
        players.push(c);
    }
    // game_start reaches the v1 game as an action from __system__.
    let log = wait_frame_log(&tab, "__game_start__").await;
    assert!(log.contains("\"playerId\":\"__system__\""), "{log}");

    let first = &players[0];
    let deadline = tokio::time::Instant::now() + LONG;
    let s = loop {
        let s = first.state(&table, 2.0).await;
        if s["yourTurn"] == true && s["legalActions"] == json!(["win"]) {
            break s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "first never got its turn: {s}"
        );
    };
    let (st, r) = first
        .post(
            &format!("{AGENT}/{table}/action?wait=10"),
            json!({ "action": "win", "turn": s["turn"] }),
        )
        .await;
    assert_eq!((st, r["outcome"].clone()), (200, json!("applied")), "{r}");
    let v = public_until(&app, &table, "the end", |v| v["status"] == "finished").await;
    assert_eq!(v["result"]["winner"], s["playerId"], "{v}");
    // Legacy: no rematch although the game asked for autoRematch, and no session_end
    // message for a game that would not understand it.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (_, v) = anon(&app).get(&format!("{AGENT}/{table}/public")).await;
    assert_eq!(v["nextSessionId"], Value::Null, "{v}");
    let log = wait_frame_log(&tab, "\"win\"").await;
    assert!(
        !log.contains("AGENT_SESSION_END"),
        "a v1 game gets no session_end: {log}"
    );
    assert!(
        !log.contains("AGENT_GAME_START"),
        "a v1 game gets game_start as an action only: {log}"
    );
    browser.close().await;
}

async fn wait_frame_log(tab: &Tab, needle: &str) -> String {
    let deadline = tokio::time::Instant::now() + LONG;
    loop {
        let v = tab.eval_frames("(() => { const e = document.getElementById('log'); return e ? e.textContent : null; })()").await;
        if let Some(t) = v.as_str() {
            if t.contains(needle) {
                return t.to_string();
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the v1 game never logged {needle}: {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The tab keeps its JWT across navigations (sessionStorage), and the bridge hosted the
/// `?game=` of its address as soon as it loaded. So any site the person visited in that tab
/// could send it to `/bridge/?game=<a page of its own>&title=Chess` and have the person host
/// that page's game under their name at once: a table listed as theirs, whose rules and
/// results the other site's page decides. Now a game of another origin waits for a click
/// unless the person typed it into the page's own "Host this game" form.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_links_elsewhere_host_nothing_without_a_click() {
    let app = app_with(|_| {}).await;
    app.person("tabby", PASSWORD).await;
    let games = axum::Router::new().route(
        "/v1/",
        axum::routing::get(|| async { axum::response::Html(V1_GAME) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let games_addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, games).await });
    let elsewhere = |n: u32| format!("http://{games_addr}/v1/?n={n}");
    let asked = async |tab: &Tab| {
        // Nothing is hosted: no frame, no table (before, the other site's game was framed
        // and its table listed within a second).
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(
            tab.eval("document.querySelectorAll('iframe').length").await,
            json!(0),
            "the other site's game was framed"
        );
        let (_, avail) = anon(&app).get(&format!("{AGENT}/available")).await;
        assert_eq!(avail["sessions"], json!([]), "{avail}");
        // The page asks instead, naming the origin.
        tab.wait_for(
            "!document.getElementById('consent').hidden",
            "the question whether to host the other site's game",
            LONG,
        )
        .await;
        let origin = tab
            .eval("document.getElementById('consent-origin').textContent")
            .await;
        assert_eq!(origin, json!(format!("http://{games_addr}")));
    };

    // A link straight to the bridge with another site's game: signing in hosts nothing yet.
    let browser = launch().await;
    let tab = Tab::open(
        &browser,
        &app.url(&format!("/bridge/?game={}&title=Chess", elsewhere(1))),
    )
    .await;
    sign_in_on_tab(&tab, "tabby").await;
    asked(&tab).await;
    // The same once signed in: another site sends the tab there again.
    tab.goto(&app.url(&format!("/bridge/?game={}&title=Chess", elsewhere(2))))
        .await;
    tab.wait_for(
        "location.search.includes('n%3D2') || location.search.includes('n=2')",
        "the navigation",
        LONG,
    )
    .await;
    asked(&tab).await;
    // The person's click hosts it.
    tab.eval("document.getElementById('consent-yes').click(), true")
        .await;
    hosted_session(&tab).await;

    // A game typed into the page's own form is the person's choice: hosted at once.
    tab.eval(&format!(
        "(() => {{ const f = document.getElementById('game-form'); f.elements.game.value = {:?}; f.requestSubmit(); return true; }})()",
        elsewhere(3)
    ))
    .await;
    tab.wait_for(
        "location.search.includes('n%3D3') || location.search.includes('n=3')",
        "the form's navigation",
        LONG,
    )
    .await;
    hosted_session(&tab).await;
    assert_eq!(
        tab.eval("document.getElementById('consent').hidden").await,
        json!(true)
    );
    browser.close().await;
}
