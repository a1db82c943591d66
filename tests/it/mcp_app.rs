//! The MCP App `ui://gcv/player` in headless Chromium, driven as a client would drive it: a
//! host page (`tests/clients/mcp-app-host/`, served by the host's own server, which relays
//! MCP to horst as a host's backend does) connects with the official MCP client, calls
//! `playtest_map`, `get_level` and `simulate_replay`, reads the app each names in
//! `_meta.ui.resourceUri`, renders it in a sandboxed iframe under the ext-apps reference
//! host's CSP (nothing from the network) and drives it with the ext-apps SDK's `AppBridge`.
//! A person's click on "▶ Abspielen" plays the replay in the app; what the app reports back
//! to the host (`ui/update-model-context`, and for `get_level` the revision it reads through
//! the host) must agree with the server's referee. Under a policy without WebAssembly (the
//! MCP Apps default) the app must say so instead.
//!
//! Setup: `bash tests/clients/setup.sh` (npm ci in tests/clients/mcp-app-host: ext-apps,
//! the MCP client and esbuild, which bundles the host script for the page).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use horst_house::cdp::Browser;
use serde_json::{json, Value};

use crate::browser::{launch, Tab};
use crate::harness::{ok_result, spawn_gateway, TestApp};

const LONG: Duration = Duration::from_secs(60);

const SETUP: &str = "the MCP Apps test host is not installed; run `bash tests/clients/setup.sh` from the repository root (needs npm)";

/// A short level the planner wins at once; its title would read backwards if shown as sent.
const TINY: &str = "gcv-map 1\nname: Kurz \u{202E}und gut\nsize: 8 3\ngrid:\n........\n........\nGGGGGGGG\nentities:\nstart 1 1\nnest 5 1\n";
/// Spikes between the start and the nest: walking right loses.
const SPIKES: &str = "gcv-map 1\nname: Stacheln\nsize: 6 3\ngrid:\n......\n..^^..\nGGGGGG\nentities:\nstart 0 1\nnest 5 1\n";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The host page and its script (bundled by esbuild from the installed packages) in a
/// temporary directory.
fn host_files() -> tempfile::TempDir {
    let host = root().join("tests/clients/mcp-app-host");
    let esbuild = host.join("node_modules/.bin/esbuild");
    assert!(
        esbuild.exists()
            && host
                .join("node_modules/@modelcontextprotocol/ext-apps")
                .exists(),
        "{SETUP} (missing: {})",
        esbuild.display()
    );
    let wasm = root().join("web/game/engine.wasm");
    assert!(
        wasm.exists(),
        "the player app inlines {}; build it with ./ops/build-wasm",
        wasm.display()
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(host.join("host.html"), dir.path().join("host.html")).unwrap();
    let out = std::process::Command::new(&esbuild)
        .arg("host.js")
        .args([
            "--bundle",
            "--format=esm",
            "--platform=browser",
            "--log-level=warning",
        ])
        .arg(format!(
            "--outfile={}",
            dir.path().join("mcp-host.js").display()
        ))
        .current_dir(&host)
        .output()
        .expect("run esbuild");
    assert!(
        out.status.success(),
        "esbuild could not bundle the host: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// The host's own web server, as an MCP host has one: it serves the host page and relays
/// `/api/mcp` to horst (hosts talk to MCP servers from their backend). Its pages carry no
/// policy of horst's, so the app frame gets only the policy the host builds for it.
async fn serve_host(files: PathBuf, horst: String) -> std::net::SocketAddr {
    use axum::body::Bytes;
    use axum::http::{HeaderMap, Method, StatusCode};
    use axum::response::IntoResponse;
    let http = reqwest::Client::new();
    let relay = move |method: Method, headers: HeaderMap, body: Bytes| {
        let (http, horst) = (http.clone(), horst.clone());
        async move {
            let mut req = http.request(method, format!("{horst}/api/mcp")).body(body);
            for name in [
                "authorization",
                "content-type",
                "accept",
                "mcp-protocol-version",
                "mcp-session-id",
            ] {
                if let Some(v) = headers.get(name) {
                    req = req.header(name, v.as_bytes());
                }
            }
            let Ok(r) = req.send().await else {
                return (StatusCode::BAD_GATEWAY, "horst did not answer").into_response();
            };
            let status = StatusCode::from_u16(r.status().as_u16()).unwrap();
            let mut out = HeaderMap::new();
            for name in ["content-type", "mcp-session-id", "mcp-protocol-version"] {
                if let Some(v) = r.headers().get(name) {
                    out.insert(name, v.to_str().unwrap_or_default().parse().unwrap());
                }
            }
            (status, out, r.bytes().await.unwrap_or_default()).into_response()
        }
    };
    let file = move |axum::extract::Path(name): axum::extract::Path<String>| {
        let files = files.clone();
        async move {
            let kind = if name.ends_with(".js") {
                "text/javascript"
            } else {
                "text/html; charset=utf-8"
            };
            match std::fs::read(files.join(&name)) {
                Ok(body) if !name.contains('/') => ([("content-type", kind)], body).into_response(),
                _ => StatusCode::NOT_FOUND.into_response(),
            }
        }
    };
    let router = axum::Router::new()
        .route("/api/mcp", axum::routing::any(relay))
        .route("/{name}", axum::routing::get(file));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

async fn click(tab: &Tab, x: i64, y: i64) {
    for kind in ["mousePressed", "mouseReleased"] {
        tab.browser
            .call(
                Some(&tab.session),
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            )
            .await
            .expect("a mouse event");
    }
}

/// A value inside the app of iframe `#app-{app}` (apps run in out-of-process frames: each
/// has its own document; `tag_frames` marked which is which).
async fn in_app(tab: &Tab, app: usize, expr: &str) -> Value {
    tab.eval_frames(&format!(
        "(document.body && document.body.dataset.hostFrame === 'app-{app}') ? ({expr}) : null"
    ))
    .await
}

/// Shows `tool` with `args` in a new app frame and waits until the host handed the call in.
async fn show(tab: &Tab, tool: &str, args: Value) -> (usize, Value) {
    show_with(tab, tool, args, json!({})).await
}

/// `show` with the host's `options` (`strict`: a frame policy without WebAssembly).
async fn show_with(tab: &Tab, tool: &str, args: Value, options: Value) -> (usize, Value) {
    let app = tab
        .eval(&format!("hostShow({}, {args}, {options})", json!(tool)))
        .await
        .as_u64()
        .expect("hostShow answers the app's number") as usize;
    let deadline = tokio::time::Instant::now() + LONG;
    let call = loop {
        let c = tab.eval(&format!("hostCalls[{app}]")).await;
        if c["ready"] == true || !c["error"].is_null() {
            break c;
        }
        if tokio::time::Instant::now() > deadline {
            tab.watch_frame_errors().await;
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the host never showed {tool}: {c}; the app told the host {}; the frames say {}; errors {:?}",
            tab.eval("JSON.stringify(hostLog)").await,
            tab.eval_frames("JSON.stringify({ href: location.href.slice(0, 40), status: (document.getElementById('app-status') || {}).textContent })").await,
            tab.errors.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        call["error"].is_null(),
        "the host failed: {}",
        call["error"]
    );
    (app, call)
}

/// Marks each app frame's document with its iframe id, so the test can find it among the
/// tab's frames (the frames cannot be reached from the host page: they are sandboxed).
async fn tag_frames(tab: &Tab, count: usize) {
    // Frames come in order; each untagged one showing the player takes the next free id.
    for app in 0..count {
        if in_app(tab, app, "true").await == Value::Bool(true) {
            continue;
        }
        let deadline = tokio::time::Instant::now() + LONG;
        loop {
            let tagged = tab
                .eval_frames(&format!(
                    "(document.getElementById('app-status') && !document.body.dataset.hostFrame) \
                     ? (document.body.dataset.hostFrame = 'app-{app}', true) : null"
                ))
                .await;
            if tagged == Value::Bool(true) {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "app frame {app} never appeared"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

async fn wait_in_app(tab: &Tab, app: usize, expr: &str, what: &str) -> Value {
    let deadline = tokio::time::Instant::now() + LONG;
    loop {
        let v = in_app(tab, app, expr).await;
        if !v.is_null() && v != Value::Bool(false) {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what} in app {app}; its status: {}",
            in_app(
                tab,
                app,
                "document.getElementById('app-status').textContent"
            )
            .await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Presses "▶ Abspielen" in app `app` with the mouse, as a person would: once, where the
/// button stands when the app and its frame have settled, then waits for the app to play.
/// It never presses again: a second press that reached the button would pause the run.
async fn press_play(tab: &Tab, app: usize) {
    wait_in_app(
        tab,
        app,
        "(() => { const b = document.getElementById('watch-play'); return b && b.offsetParent !== null; })()",
        "the play button",
    )
    .await;
    // Settled: the host has fitted the frame to the app's content (the frame is as tall as
    // the content it reported) and the button stood at the same place at two looks.
    let fitted = "Math.ceil(document.body.getBoundingClientRect().height) === innerHeight";
    let deadline = tokio::time::Instant::now() + LONG;
    let mut last = None;
    let at = loop {
        let at = button_on_page(tab, app).await;
        if last == Some(at) && in_app(tab, app, fitted).await == Value::Bool(true) {
            break at;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "app {app} and its frame never settled: the button last at {at:?}, the frame {}",
            in_app(
                tab,
                app,
                "JSON.stringify({ content: document.body.getBoundingClientRect().height, frame: innerHeight })"
            )
            .await
        );
        last = Some(at);
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    // What the press meets in the app, for the message if it does not take.
    in_app(
        tab,
        app,
        "(window.testPresses = [], ['mousedown', 'click'].forEach(k => document.addEventListener(k, \
         e => window.testPresses.push([k, e.target.id || e.target.tagName, e.clientX, e.clientY]), true)), true)",
    )
    .await;
    click(tab, at.0, at.1).await;
    let pressed =
        "document.getElementById('watch-play').getAttribute('aria-pressed') === 'true' || \
                   !document.getElementById('app-verdict').hidden";
    let deadline = tokio::time::Instant::now() + LONG;
    while tokio::time::Instant::now() < deadline {
        if in_app(tab, app, pressed).await == Value::Bool(true) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let met = in_app(
        tab,
        app,
        "(() => { const b = document.getElementById('watch-play'); const r = b.getBoundingClientRect(); \
         const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); \
         return JSON.stringify({ presses: window.testPresses, button: [r.left, r.top, r.width, r.height], \
           hit: hit && (hit.id || hit.tagName), text: b.textContent, disabled: b.disabled, \
           status: document.getElementById('app-status').textContent, \
           tick: (document.getElementById('tick') || {}).textContent, \
           verdictHidden: document.getElementById('app-verdict').hidden }); })()",
    )
    .await;
    let shot = tab
        .screenshot("mcp-app", &format!("press-{app}-failed"))
        .await;
    panic!(
        "pressing ▶ Abspielen in app {app} at {at:?} never started the replay; in the app: {met}; \
         the tab then: {}",
        shot.display()
    );
}

/// The centre of app `app`'s play button in the tab's coordinates, scrolled into view.
async fn button_on_page(tab: &Tab, app: usize) -> (i64, i64) {
    // Scrolling inside the frame may scroll the host page too: measure after both.
    tab.eval(&format!(
        "document.getElementById('app-{app}').scrollIntoView({{ block: 'start' }})"
    ))
    .await;
    in_app(
        tab,
        app,
        "(document.getElementById('watch-play').scrollIntoView({ block: 'center' }), true)",
    )
    .await;
    let frame = tab
        .eval(&format!(
            "new Promise(r => requestAnimationFrame(() => {{ const f = document.getElementById('app-{app}'); \
             const b = f.getBoundingClientRect(); r([b.left + f.clientLeft, b.top + f.clientTop]); }}))"
        ))
        .await;
    let button = in_app(
        tab,
        app,
        "(() => { const r = document.getElementById('watch-play').getBoundingClientRect(); \
         return [r.left + r.width / 2, r.top + r.height / 2]; })()",
    )
    .await;
    let at = |v: &Value, i: usize| v[i].as_f64().expect("a coordinate");
    (
        (at(&frame, 0) + at(&button, 0)).round() as i64,
        (at(&frame, 1) + at(&button, 1)).round() as i64,
    )
}

/// App `app` in a frame 40 px shorter than its content: its layout (the canvas, the
/// content's height) does not change, and it reports no new height. The frame is fitted
/// again afterwards.
async fn assert_keeps_its_size_in_a_short_frame(tab: &Tab, app: usize) {
    let look =
        "JSON.stringify({ content: Math.ceil(document.body.getBoundingClientRect().height), \
                canvas: document.querySelector('canvas.screen').style.height })";
    let reports =
        format!("hostLog.filter(e => e.app === {app} && e.kind === 'size-changed').length");
    // In view: a frame out of view renders nothing, its resizing included.
    tab.eval(&format!(
        "document.getElementById('app-{app}').scrollIntoView({{ block: 'start' }})"
    ))
    .await;
    let before: Value = serde_json::from_str(
        in_app(tab, app, look)
            .await
            .as_str()
            .expect("the app's size"),
    )
    .unwrap();
    let reported = tab.eval(&reports).await;
    let content = before["content"].as_i64().expect("a height");
    let short = content - 40;
    tab.eval(&format!(
        "document.getElementById('app-{app}').style.height = '{short}px'"
    ))
    .await;
    // Until the frame has its new height and two frames were drawn since (resize observers
    // run before each), or the app answered the height with a report of its own.
    let deadline = tokio::time::Instant::now() + LONG;
    let settled = format!(
        "innerHeight === {short} && new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
    );
    while tab.eval(&reports).await == reported
        && in_app(tab, app, &settled).await != Value::Bool(true)
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "app {app}'s frame never became {short} px tall"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after: Value = serde_json::from_str(
        in_app(tab, app, look)
            .await
            .as_str()
            .expect("the app's size"),
    )
    .unwrap();
    assert_eq!(
        (&after, tab.eval(&reports).await),
        (&before, reported),
        "app {app} in a frame of {short} px changed its size ({before} -> {after}); it told the host {}",
        tab.eval(&format!(
            "JSON.stringify(hostLog.filter(e => e.app === {app} && e.kind === 'size-changed').map(e => e.params.height))"
        ))
        .await
    );
    tab.eval(&format!(
        "document.getElementById('app-{app}').style.height = '{content}px'"
    ))
    .await;
}

/// What app `app` told the host with `ui/update-model-context` (waits for it).
async fn reported(tab: &Tab, app: usize) -> Value {
    let deadline = tokio::time::Instant::now() + LONG;
    loop {
        let v = tab
            .eval(&format!(
                "hostLog.find(e => e.app === {app} && e.kind === 'update-model-context') || null"
            ))
            .await;
        if !v.is_null() {
            return v["params"].clone();
        }
        if tokio::time::Instant::now() > deadline {
            tab.watch_frame_errors().await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            panic!(
                "app {app} never reported its run to the host; it shows {}; it told the host {}; errors {:?}",
                in_app(tab, app, "JSON.stringify({ status: document.getElementById('app-status').textContent, tick: (document.getElementById('tick') || {}).textContent, play: (document.getElementById('watch-play') || {}).textContent })").await,
                tab.eval("JSON.stringify(hostLog)").await,
                tab.errors.lock().unwrap()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn read_resource(app: &TestApp, uri: &str) -> Value {
    let a = app.rpc("resources/read", json!({ "uri": uri }), None).await;
    assert_eq!(a.status, 200, "{}", a.text);
    a.body["result"].clone()
}

/// The host page at 1280x800, ready, with an agent key for `app` (after publishing the
/// shipped levels); the key too.
async fn host_page(app: &TestApp, files: &tempfile::TempDir) -> (Arc<Browser>, Tab, String) {
    horst_operator::publish_shipped(&app.store)
        .await
        .expect("publish the shipped levels");
    let key = app.agent_key("app-host", 1).await;
    let browser = launch().await;
    let host = serve_host(files.path().to_path_buf(), app.url("")).await;
    let tab = Tab::open(&browser, &format!("http://{host}/host.html#key={key}")).await;
    tab.viewport(1280, 800).await;
    tab.wait_for(
        "document.getElementById('host-status').textContent === 'ready'",
        "the host page",
        LONG,
    )
    .await;
    (browser, tab, key)
}

/// The errors of the host and its apps, but those the tests expect.
async fn unexpected_errors(tab: &Tab) -> Vec<String> {
    tab.watch_frame_errors().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The official client asks for a server stream with GET, which the stateless gateway
    // answers 405 (as the transport allows); Chromium logs that as a failed load.
    tab.errors
        .lock()
        .unwrap()
        .iter()
        .filter(|e| !(e.contains("/api/mcp") && e.contains("status of 405")))
        // The strict frame's refusal, which it was made for.
        .filter(|e| !(e.contains("WebAssembly") && e.contains("unsafe-eval")))
        // The clipboard this host's frames may not write: the app shows the replay instead.
        .filter(|e| !(e.contains("Permissions policy violation") && e.contains("Clipboard")))
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_player_app_plays_in_a_host_and_agrees_with_the_referee() {
    let files = host_files();
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let (browser, tab, key) = host_page(&app, &files).await;

    // playtest_map: the result carries the planner's replay and the referee's ticks.
    let (first, call) = show(
        &tab,
        "playtest_map",
        json!({ "map": TINY, "idempotencyKey": "app-p1" }),
    )
    .await;
    let played = &call["result"]["structuredContent"];
    assert_eq!(played["outcome"], "won", "{played}");
    assert_eq!(call["resource"]["uri"], "ui://gcv/player");
    assert_eq!(
        call["resource"]["meta"]["ui"]["csp"]["connectDomains"],
        json!([]),
        "the app declares no network access: {}",
        call["resource"]
    );
    tag_frames(&tab, 1).await;
    // The app fills these in once the result is in (after the host said ready).
    assert_eq!(
        wait_in_app(
            &tab,
            first,
            "document.getElementById('app-tool').textContent || null",
            "the tool's name",
        )
        .await,
        "playtest_map"
    );
    // The map's title, untrusted: cleaned and isolated.
    assert_eq!(
        wait_in_app(
            &tab,
            first,
            "(document.querySelector('#stage-title bdi') || {}).textContent",
            "the map's title",
        )
        .await,
        "Kurz und gut"
    );
    press_play(&tab, first).await;
    let seen = reported(&tab, first).await;
    let facts = &seen["structuredContent"];
    assert_eq!(facts["tool"], "playtest_map", "{seen}");
    assert_eq!(facts["outcome"], "won", "{seen}");
    assert_eq!(
        facts["ticks"], played["ticks"],
        "the app's run ends where the referee's does: {seen}"
    );
    assert_eq!(facts["agrees"], true, "{seen}");
    assert!(
        seen["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("won after"),
        "{seen}"
    );
    let verdict = wait_in_app(
        &tab,
        first,
        "document.getElementById('app-verdict').hidden ? null : document.getElementById('app-verdict').textContent",
        "the verdict",
    )
    .await;
    assert!(verdict.as_str().unwrap().starts_with('✓'), "{verdict}");
    tab.screenshot("mcp-app", "playtest-1280").await;

    // get_level: the result has no replay; the app reads the revision's through the host,
    // which forwards it to the server.
    let (second, call) = show(&tab, "get_level", json!({ "name": "erste-schritte" })).await;
    let level = &call["result"]["structuredContent"];
    let revision = level["revisionId"]
        .as_str()
        .expect("a revisionId")
        .to_string();
    tag_frames(&tab, 2).await;
    press_play(&tab, second).await;
    let seen = reported(&tab, second).await;
    let asked = tab
        .eval(&format!(
            "hostLog.filter(e => e.app === {second} && e.kind === 'resources/read').map(e => e.params.uri)"
        ))
        .await;
    assert_eq!(asked, json!([format!("gcv://revisions/{revision}")]));
    let meta = read_resource(&app, &format!("gcv://revisions/{revision}")).await;
    let meta: Value = serde_json::from_str(
        meta["contents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["mimeType"] == "application/json")
            .expect("the revision's metadata")["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let facts = &seen["structuredContent"];
    assert_eq!(facts["tool"], "get_level", "{seen}");
    assert_eq!(facts["outcome"], "won", "{seen}");
    assert_eq!(
        facts["ticks"], meta["evidence"]["ticks"],
        "{seen} vs {meta}"
    );
    assert_eq!(
        facts["stateHash"], meta["evidence"]["stateHash"],
        "{seen} vs {meta}"
    );
    assert_eq!(facts["agrees"], true, "{seen}");

    // A frame shorter than its app (a host that caps the height, or the host's fit of the
    // last report still on its way) scrolls; the app keeps its width, so its content stays
    // as tall. (It did not: the frame's scrollbar took the canvas's width, the canvas and so
    // the app got shorter, the app reported that, the host's frame fitted it, the scrollbar
    // went, the canvas grew again: app and host resized each other while their messages
    // crossed, ▶ Abspielen jumped 10 px each time, and a press under load missed it.)
    assert_keeps_its_size_in_a_short_frame(&tab, second).await;

    // simulate_replay of a run into spikes: the app shows the loss the referee found, at the
    // same tick (so "won" above was read from the run, not assumed).
    let lost = ok_result(
        &app.call(
            "simulate_replay",
            json!({ "map": SPIKES, "replay": { "seed": 1, "actions": [{ "action": 8, "ticks": 120 }] }, "idempotencyKey": "app-s0" }),
            Some(&key),
        )
        .await,
    );
    assert_eq!(lost["outcome"], "lost", "{lost}");
    let (third, call) = show(
        &tab,
        "simulate_replay",
        json!({ "map": SPIKES, "replay": { "seed": 1, "actions": [{ "action": 8, "ticks": 120 }] }, "idempotencyKey": "app-s1" }),
    )
    .await;
    assert_eq!(call["result"]["structuredContent"]["outcome"], "lost");
    tag_frames(&tab, 3).await;
    press_play(&tab, third).await;
    let facts = reported(&tab, third).await["structuredContent"].clone();
    assert_eq!(facts["tool"], "simulate_replay", "{facts}");
    assert_eq!(facts["outcome"], "lost", "{facts}");
    assert_eq!(facts["ticks"], lost["ticks"], "{facts} vs {lost}");
    assert_eq!(facts["stateHash"], lost["stateHash"], "{facts} vs {lost}");
    assert_eq!(facts["agrees"], true, "{facts}");
    // The view ends where the run ended: the tick of the loss over the run's length, and the
    // scrubber no longer (it read "Tick 14 / 120", the replay's inputs, and went on past it).
    let ticks = lost["ticks"].as_u64().expect("the loss's ticks");
    assert_eq!(
        in_app(
            &tab,
            third,
            "[document.getElementById('tick').textContent, document.getElementById('watch-scrub').max]"
        )
        .await,
        json!([format!("Tick {ticks} / {ticks}"), ticks.to_string()]),
        "the lost run's tick and scrubber at its end"
    );

    // A host whose frame policy forbids WebAssembly (the MCP Apps default, without
    // 'unsafe-eval'): the app says so and points at the result's text; it reports nothing.
    let (strict, _) = show_with(
        &tab,
        "playtest_map",
        json!({ "map": TINY, "idempotencyKey": "app-p1" }),
        json!({ "strict": true }),
    )
    .await;
    tag_frames(&tab, 4).await;
    let note = wait_in_app(
        &tab,
        strict,
        "document.getElementById('app-status').textContent.includes('Engine startet') && document.getElementById('app-status').textContent",
        "the note that the engine cannot start",
    )
    .await;
    assert!(
        note.as_str().unwrap().contains("Text des Aufrufs"),
        "{note}"
    );

    // The app asked for nothing else (no tool calls, no messages into the chat).
    let kinds = tab
        .eval("[...new Set(hostLog.map(e => e.kind))].sort()")
        .await;
    assert_eq!(
        kinds,
        json!([
            "initialized",
            "resources/read",
            "size-changed",
            "update-model-context"
        ]),
        "{}",
        tab.eval("JSON.stringify(hostLog)").await
    );
    // On a phone the apps tell the host their new height; the host fits each frame to it,
    // and each frame is then exactly as tall as its app's content. (A frame out of view
    // renders nothing, so each is looked at in view.)
    let before = tab.eval("hostLog.length").await;
    tab.viewport(390, 844).await;
    for played in [first, second, third] {
        tab.eval(&format!(
            "document.getElementById('app-{played}').scrollIntoView({{ block: 'start' }})"
        ))
        .await;
        let deadline = tokio::time::Instant::now() + LONG;
        loop {
            let (reported, frame) = (
                tab.eval(&format!(
                    "hostLog.slice({before}).some(e => e.kind === 'size-changed' && e.app === {played})"
                ))
                .await,
                tab.eval(&format!(
                    "document.getElementById('app-{played}').clientHeight"
                ))
                .await,
            );
            let content = in_app(
                &tab,
                played,
                "Math.ceil(document.body.getBoundingClientRect().height)",
            )
            .await;
            if reported == true && frame == content {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "app {played} at 390 px: reported {reported}, its frame is {frame} px tall, its content {content} px"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    tab.eval(&format!(
        "document.getElementById('app-{third}').scrollIntoView({{ block: 'start' }})"
    ))
    .await;
    tab.screenshot("mcp-app", "simulate-390").await;
    let errors = unexpected_errors(&tab).await;
    assert!(
        errors.is_empty(),
        "errors in the host or an app: {errors:?}"
    );
    browser.close().await;
}

/// A nest walled in: the planner proves at once that nothing wins (unresolved, no replay).
const SEALED: &str = "gcv-map 1\nname: Tasche\nsize: 8 4\ngrid:\n........\n.....###\n.....#.#\nGGGGGGGG\nentities:\nstart 1 2\nnest 6 2\n";

/// What app `app` says in its status line.
async fn status_of(tab: &Tab, app: usize) -> String {
    in_app(
        tab,
        app,
        "document.getElementById('app-status').textContent",
    )
    .await
    .as_str()
    .unwrap_or_default()
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_player_app_without_a_replay_only_plays() {
    let files = host_files();
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let (browser, tab, _) = host_page(&app, &files).await;

    // An unresolved playtest carries no replay: the stage plays, and offers nothing to watch.
    let (sealed, call) = show(
        &tab,
        "playtest_map",
        json!({ "map": SEALED, "idempotencyKey": "app-u1" }),
    )
    .await;
    assert_eq!(call["result"]["structuredContent"]["outcome"], "unresolved");
    tag_frames(&tab, 1).await;
    wait_in_app(
        &tab,
        sealed,
        "document.getElementById('stage').dataset.mode === 'play'",
        "the stage in play mode",
    )
    .await;
    let said = status_of(&tab, sealed).await;
    assert!(
        said.contains("Kein Replay in diesem Ergebnis (unreachable)"),
        "{said}"
    );
    assert_eq!(
        in_app(
            &tab,
            sealed,
            "document.querySelector('.modes').offsetParent === null"
        )
        .await,
        true,
        "no Spielen/Zuschauen tabs without a replay"
    );
    // Zuschauen pressed anyway (the button is still in the page): the stage keeps playing
    // instead of watching a tape that is not there.
    in_app(
        &tab,
        sealed,
        "(document.querySelectorAll('.modes .mode')[1].click(), true)",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        in_app(
            &tab,
            sealed,
            "document.getElementById('stage').dataset.mode"
        )
        .await,
        "play"
    );
    tab.eval(&format!(
        "document.getElementById('app-{sealed}').scrollIntoView({{ block: 'start' }})"
    ))
    .await;
    tab.screenshot("mcp-app", "unresolved-1280").await;

    // get_level through a host that cannot read the revision's replay: the app says that
    // (not only that the result has none), and plays.
    let (unread, _) = show_with(
        &tab,
        "get_level",
        json!({ "name": "erste-schritte" }),
        json!({ "failRead": true }),
    )
    .await;
    tag_frames(&tab, 2).await;
    wait_in_app(
        &tab,
        unread,
        "document.getElementById('stage').dataset.mode === 'play'",
        "the stage in play mode",
    )
    .await;
    let said = status_of(&tab, unread).await;
    assert!(
        said.contains("Das Replay der Revision kam nicht an"),
        "{said}"
    );
    assert_eq!(
        in_app(
            &tab,
            unread,
            "document.querySelector('.modes').offsetParent === null"
        )
        .await,
        true
    );

    // Played to its end (walking right into the first gap): a host's frame cannot download,
    // so the run's replay is offered to copy; where the frame may not write the clipboard
    // (this host grants no clipboard-write) the JSON is shown, selected.
    tab.eval(&format!(
        "document.getElementById('app-{unread}').scrollIntoView({{ block: 'start' }})"
    ))
    .await;
    in_app(
        &tab,
        unread,
        "(document.querySelector('canvas.screen').dispatchEvent(new KeyboardEvent('keydown', { code: 'ArrowRight', bubbles: true })), true)",
    )
    .await;
    let buttons = wait_in_app(
        &tab,
        unread,
        "!document.querySelector('.overlay').hidden && [...document.querySelectorAll('.overlay button')].map(b => b.textContent)",
        "the end of the run",
    )
    .await;
    assert!(
        buttons
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b == "Replay kopieren"),
        "{buttons}"
    );
    in_app(
        &tab,
        unread,
        "([...document.querySelectorAll('.overlay button')].find(b => b.textContent === 'Replay kopieren').click(), true)",
    )
    .await;
    let copy = wait_in_app(
        &tab,
        unread,
        "(() => { const t = document.querySelector('.overlay #replay-copy textarea'); \
         return t && { text: t.value, selected: t.selectionStart === 0 && t.selectionEnd === t.value.length, focused: document.activeElement === t }; })()",
        "the replay to copy",
    )
    .await;
    let replay: Value = serde_json::from_str(copy["text"].as_str().unwrap()).unwrap();
    assert_eq!(replay["seed"], 1, "{replay}");
    assert!(
        !replay["actions"].as_array().unwrap().is_empty(),
        "{replay}"
    );
    assert_eq!(copy["selected"], true, "{copy}");
    assert_eq!(copy["focused"], true, "{copy}");
    tab.screenshot("mcp-app", "copy-replay-1280").await;

    // A failed call in a frame the host started at 600 px: the app reports the height of
    // its few lines, so the frame shrinks to them (the document's scrollHeight, which it
    // reported, is never below the frame's own height).
    let (failed, call) = show_with(
        &tab,
        "playtest_map",
        json!({ "map": "this is not a map\n", "idempotencyKey": "app-f1" }),
        json!({ "height": 600 }),
    )
    .await;
    assert_eq!(call["result"]["isError"], true, "{call}");
    tag_frames(&tab, 3).await;
    wait_in_app(
        &tab,
        failed,
        "document.getElementById('app-status').textContent.includes('fehlgeschlagen')",
        "the failure",
    )
    .await;
    // In view: a frame out of view renders nothing, its size included.
    tab.eval(&format!(
        "document.getElementById('app-{failed}').scrollIntoView({{ block: 'start' }})"
    ))
    .await;
    let last = format!(
        "(hostLog.filter(e => e.app === {failed} && e.kind === 'size-changed').pop() || {{ params: {{}} }}).params.height"
    );
    tab.wait_for(
        &format!("{last} < 600"),
        "the failed call's app to report less than 600 px",
        Duration::from_secs(10),
    )
    .await;
    let height = tab.eval(&last).await.as_f64().unwrap();
    assert!(height < 200.0, "{height}");
    tab.screenshot("mcp-app", "failed-1280").await;

    // get_level through a slow host (its read of the revision takes 6 s, longer than the
    // app waits for a host's other answers): the app says the replay is on its way, waits
    // for it, and then offers it to watch (it gave up after 5 s and only played).
    let (slow, _) = show_with(
        &tab,
        "get_level",
        json!({ "name": "erste-schritte" }),
        json!({ "slowRead": 6000 }),
    )
    .await;
    tag_frames(&tab, 4).await;
    wait_in_app(
        &tab,
        slow,
        "document.getElementById('app-status').textContent.includes('Lade das Replay der Revision')",
        "the note that the replay is on its way",
    )
    .await;
    let mode = wait_in_app(
        &tab,
        slow,
        "document.getElementById('stage').dataset.mode || null",
        "the stage",
    )
    .await;
    assert_eq!(mode, "watch", "{}", status_of(&tab, slow).await);

    let errors = unexpected_errors(&tab).await;
    assert!(
        errors.is_empty(),
        "errors in the host or an app: {errors:?}"
    );
    browser.close().await;
}
