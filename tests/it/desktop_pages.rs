//! The players' pages at a laptop's and a desktop's size (1366x768, 1920x1080): the levels,
//! the Labor tab, a level being played and the board with long posts fit the width, the
//! canvas is on screen whole with the controls beside it (a key a line in the help), and
//! untrusted titles and posts wrap inside their column; keyboard focus shows a ring that
//! stands out. Screenshots go to `target/screenshots/desktop/`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::browser::{launch, Tab};
use crate::game_api::{game_app, submit};
use crate::harness::ok_result;

const LONG: Duration = Duration::from_secs(60);
const SHOTS: &str = "desktop";
const SIZES: [(u32, u32); 2] = [(1366, 768), (1920, 1080)];

/// The page's width against the window's, and the element's box `[left, top, right, bottom]`.
async fn layout(tab: &Tab, selector: &str) -> Value {
    tab.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
        .await;
    tab.eval(&format!(
        "(() => {{ const e = document.querySelector({selector:?}); const r = e ? e.getBoundingClientRect() : null; \
         return {{ wide: document.documentElement.scrollWidth > window.innerWidth + 1, \
                   box: r && [r.left, r.top, r.right, r.bottom].map(Math.round), h: window.innerHeight, w: window.innerWidth }}; }})()"
    ))
    .await
}

/// An idea `title` with its first post `body`, written by the agent of `key` and published
/// on the public board.
async fn published_idea(app: &crate::harness::TestApp, key: &str, title: &str, body: &str) {
    let post = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": title, "body": body}),
            Some(key),
        )
        .await,
    );
    let thread = post["threadId"].as_str().unwrap();
    horst_operator::publish_thread(&app.store, "test", thread, true)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_players_pages_at_laptop_and_desktop_sizes() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let key = app.agent_key("fuchs", 1).await;
    submit(&app, &key, "fuchsbau").await;
    let long = "Gipfelsturm".repeat(10);
    published_idea(
        &app,
        &key,
        &format!("{long} am Grat"),
        &format!("{long}\n{}", "Eis und Schnee ".repeat(40)),
    )
    .await;
    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    let mut problems = Vec::new();
    for (w, h) in SIZES {
        tab.viewport(w, h).await;
        tab.goto(&app.url("/?test")).await;
        tab.wait_for(
            "document.body.dataset.ready === '1' && document.querySelector('#level-list .card button')",
            "the levels",
            LONG,
        )
        .await;
        if layout(&tab, "main").await["wide"] == json!(true) {
            problems.push(format!("the levels scroll sideways at {w}x{h}"));
        }
        tab.screenshot(SHOTS, &format!("levels-{w}x{h}")).await;
        tab.eval("document.getElementById('tab-labor').click()")
            .await;
        tab.wait_for(
            "document.querySelector('#labor-list .card')",
            "the Labor's level",
            LONG,
        )
        .await;
        if layout(&tab, "main").await["wide"] == json!(true) {
            problems.push(format!("the Labor scrolls sideways at {w}x{h}"));
        }
        tab.screenshot(SHOTS, &format!("labor-{w}x{h}")).await;
        let rev = tab
            .eval("document.querySelector('#level-list .card').dataset.revision")
            .await;
        tab.eval("document.getElementById('tab-levels').click(); document.querySelector('#level-list .card button').click()")
            .await;
        tab.wait_for("document.querySelector('canvas.screen')", "the stage", LONG)
            .await;
        let canvas = layout(&tab, "canvas.screen").await;
        let side = layout(&tab, ".stage-body .side").await;
        let b = &canvas["box"];
        if canvas["wide"] == json!(true)
            || b[3].as_i64() > canvas["h"].as_i64()
            || b[2].as_i64() > side["box"][0].as_i64()
        {
            problems.push(format!(
                "playing at {w}x{h}: the canvas {b} is not whole on the screen beside the controls {}",
                side["box"]
            ));
        }
        // On a desktop screen the level is drawn big: at least 3 screen pixels to a pixel
        // of the art (main's 1280 px kept it at 2, under half the width of a 1920 px screen).
        let scale = tab
            .eval("(() => { const c = document.querySelector('canvas.screen'); return c.getBoundingClientRect().width / c.width; })()")
            .await;
        if w >= 1920 && scale.as_f64() < Some(3.0) {
            problems.push(format!(
                "playing at {w}x{h}: the level is drawn at scale {scale}"
            ));
        }
        // A mouse and a keyboard: the keys are said once, beside the canvas.
        if tab
            .eval("getComputedStyle(document.getElementById('controls-help')).display")
            .await
            == json!("none")
        {
            problems.push(format!("playing at {w}x{h}: no keyboard help"));
        }
        // Each key starts a line of the help, beside what it does (run on as a paragraph,
        // a key stood at the end of a line and "in der Luft nochmal: Eierschub" broke).
        let apart = tab
            .eval(
                "(h => { const left = h.getBoundingClientRect().left + parseFloat(getComputedStyle(h).paddingLeft);                  return [...h.querySelectorAll('kbd')].filter(k => Math.abs(k.getBoundingClientRect().left - left) > 2).map(k => k.textContent); })                 (document.getElementById('controls-help'))",
            )
            .await;
        if apart != json!([]) {
            problems.push(format!(
                "playing at {w}x{h}: the keys {apart} do not start a line of the help"
            ));
        }
        // The restart button names its key where there is a keyboard.
        let restart = tab
            .eval("[...document.querySelectorAll('.stage-body button')].find(b => b.getAttribute('aria-keyshortcuts') === 'R')?.innerText")
            .await;
        if restart != json!("Neustart (R)") {
            problems.push(format!(
                "playing at {w}x{h}: the restart button says {restart}"
            ));
        }
        tab.screenshot(SHOTS, &format!("play-{w}x{h}")).await;

        // Watching the level's checked run: the canvas, and beside it the tick, the action
        // and the scrubber.
        tab.goto("about:blank").await;
        tab.goto(&app.url(&format!("/?test#zuschauen={}", rev.as_str().unwrap())))
            .await;
        tab.wait_for(
            "document.body.dataset.ready === '1' && document.getElementById('watch-scrub')",
            "the watch view",
            LONG,
        )
        .await;
        let canvas = layout(&tab, "canvas.screen").await;
        let scrub = layout(&tab, "#watch-scrub").await;
        if canvas["wide"] == json!(true)
            || canvas["box"][3].as_i64() > canvas["h"].as_i64()
            || scrub["box"][3].as_i64() > scrub["h"].as_i64()
        {
            problems.push(format!(
                "watching at {w}x{h}: the canvas {} or the scrubber {} is off the screen",
                canvas["box"], scrub["box"]
            ));
        }
        tab.screenshot(SHOTS, &format!("watch-{w}x{h}")).await;

        tab.goto(&app.url("/board.html")).await;
        tab.wait_for("document.body.dataset.ready === '1'", "the board", LONG)
            .await;
        tab.eval("document.querySelector('.thread button').click()")
            .await;
        tab.wait_for("document.querySelector('.post-body')", "the posts", LONG)
            .await;
        let thread = layout(&tab, ".thread").await;
        let body = layout(&tab, ".post-body").await;
        if thread["wide"] == json!(true) || body["box"][2].as_i64() > thread["box"][2].as_i64() {
            problems.push(format!(
                "the board at {w}x{h}: the post {} runs out of its thread {}",
                body["box"], thread["box"]
            ));
        }
        tab.screenshot(SHOTS, &format!("board-{w}x{h}")).await;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    tab.close().await;
    browser.close().await;
}

/// "Beiträge lesen" clicked twice in a row (a double click) reads the thread once: the
/// second click hides the box while the posts load, a third shows them without reading
/// again, and the posts are there once. Before, each click while the posts loaded read the
/// whole thread again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_threads_posts_are_read_once_however_often_its_button_is_clicked() {
    let (app, _worker) = game_app().await;
    let key = app.agent_key("fuchs", 1).await;
    published_idea(&app, &key, "Mehr Eis", "Eis und <b>Schnee</b>").await;
    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    tab.viewport(1366, 768).await;
    tab.goto(&app.url("/board.html")).await;
    tab.wait_for(
        "document.body.dataset.ready === '1' && document.querySelector('.thread button')",
        "the board",
        LONG,
    )
    .await;
    // The thread's reads are counted as the page starts them (the real fetch does them).
    tab.eval(
        "window.threadReads = 0; const real = window.fetch; \
         window.fetch = (url, ...rest) => { if (String(url).includes('/api/board/published/')) window.threadReads++; return real(url, ...rest); }; true",
    )
    .await;
    let state = "(() => { const b = document.querySelector('.thread button'); \
                 return [b.textContent, b.getAttribute('aria-expanded'), document.querySelector('.thread-posts').hidden, window.threadReads]; })()";
    let twice = tab
        .eval("(b => { b.click(); b.click(); return true; })(document.querySelector('.thread button'))")
        .await;
    assert_eq!(twice, json!(true));
    assert_eq!(
        tab.eval(state).await,
        json!(["Beiträge lesen", "false", true, 1]),
        "after a double click"
    );
    // The posts come while the box is hidden; a click shows them, read no more.
    tab.wait_for(
        "document.querySelector('.thread-posts .post-body')",
        "the posts",
        LONG,
    )
    .await;
    tab.eval("document.querySelector('.thread button').click()")
        .await;
    assert_eq!(
        tab.eval(state).await,
        json!(["Beiträge ausblenden", "true", false, 1]),
        "after a third click"
    );
    assert_eq!(
        tab.eval("[document.querySelectorAll('.thread-posts li.post').length, document.querySelector('.post-body').textContent, document.querySelectorAll('main b').length]")
            .await,
        json!([1, "Eis und <b>Schnee</b>", 0]),
        "the post, once, as text"
    );
    tab.screenshot(SHOTS, "board-after-a-double-click-1366x768")
        .await;
    tab.assert_no_errors();
    tab.close().await;
    browser.close().await;
}

/// The focus ring of `e`: its outline's style and colour, the background it is drawn on (what
/// shows just outside `e`'s left edge, or its right one at the screen's edge, where the ring
/// is) and the contrast between the two (WCAG's formula).
const RING: &str = r#"(e => {
  const rgb = s => s.match(/[\d.]+/g).slice(0, 3).map(Number);
  const lum = c => c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); })
    .reduce((l, v, i) => l + v * [0.2126, 0.7152, 0.0722][i], 0);
  const r = e.getBoundingClientRect();
  const x = r.left >= 4 ? r.left - 3.5 : r.right + 3.5;
  let bg = 'rgb(255, 255, 255)';
  for (const p of document.elementsFromPoint(x, r.top + r.height / 2)) {
    if (p === e || e.contains(p)) continue;
    const c = getComputedStyle(p).backgroundColor;
    if (c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') { bg = c; break; }
  }
  const s = getComputedStyle(e);
  const [a, b] = [lum(rgb(s.outlineColor)), lum(rgb(bg))];
  const what = (e.id ? '#' + e.id : e.tagName.toLowerCase()) + ' ' + (e.textContent || '').trim().slice(0, 20);
  return { what, style: s.outlineStyle, color: s.outlineColor, bg,
           contrast: Math.round(100 * (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)) / 100 };
})"#;

/// The focused element's ring when it has none or one under 3:1.
async fn weak_ring(tab: &Tab) -> Option<Value> {
    let ring = tab.eval(&format!("{RING}(document.activeElement)")).await;
    (ring["style"] != json!("solid") || ring["contrast"].as_f64() < Some(3.0)).then_some(ring)
}

/// Tab pressed once, as a keyboard does it (the focus ring shows for keyboard focus).
async fn press_tab(tab: &Tab) {
    for kind in ["rawKeyDown", "keyUp"] {
        tab.browser
            .call(
                Some(&tab.session),
                "Input.dispatchKeyEvent",
                json!({ "type": kind, "key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9, "nativeVirtualKeyCode": 9 }),
            )
            .await
            .expect("Tab");
    }
}

/// Keyboard focus is seen at 1280x800: every control Tab reaches on the levels (the skip
/// link, the header's links, the tabs, the cards' buttons) and on the bridge's sign-in has a
/// ring of 3:1 or more against what is around it, and the Spielfeld, once focused, has one
/// around it. Before, the ring
/// was amber everywhere (1.8:1 against the white cards and the light page), and the canvas's
/// ring was cut off by the wrap around it, so the focused Spielfeld showed none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyboard_focus_shows_a_ring_that_stands_out() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    tab.viewport(1280, 800).await;
    tab.goto(&app.url("/?test")).await;
    tab.wait_for(
        "document.body.dataset.ready === '1' && document.querySelector('#level-list .card button')",
        "the levels",
        LONG,
    )
    .await;
    let mut weak = Vec::new();
    let mut seen = 0;
    // Up to the second card's "Spielen".
    while seen < 20
        && tab
            .eval("document.activeElement !== document.querySelectorAll('#level-list .card button.primary')[1]")
            .await
            == json!(true)
    {
        press_tab(&tab).await;
        seen += 1;
        weak.extend(weak_ring(&tab).await);
    }
    assert!(seen < 20, "Tab did not reach the second card's Spielen");
    assert!(weak.is_empty(), "focus rings under 3:1 or none: {weak:?}");
    tab.screenshot(SHOTS, "focus-card-1280x800").await;
    // Into the level; then Tab round to the Spielfeld.
    tab.eval("document.activeElement.click()").await;
    tab.wait_for("document.querySelector('canvas.screen')", "the stage", LONG)
        .await;
    let mut tabs = 0;
    while tabs < 20
        && tab
            .eval("document.querySelector('canvas.screen').matches(':focus-visible')")
            .await
            != json!(true)
    {
        press_tab(&tab).await;
        tabs += 1;
    }
    assert!(tabs < 20, "Tab did not reach the Spielfeld");
    let ring = tab
        .eval(&format!("{RING}(document.querySelector('.screen-wrap'))"))
        .await;
    assert!(
        ring["style"] == json!("solid") && ring["contrast"].as_f64() >= Some(3.0),
        "the focused Spielfeld's ring: {ring}"
    );
    tab.screenshot(SHOTS, "focus-canvas-1280x800").await;
    // RCADIA's pages likewise: the header's links, then the bridge's sign-in fields and button.
    tab.goto(&app.url("/bridge/")).await;
    tab.wait_for(
        "document.readyState === 'complete' && document.querySelector('form input')",
        "the bridge's sign-in",
        LONG,
    )
    .await;
    for _ in 0..7 {
        press_tab(&tab).await;
        weak.extend(weak_ring(&tab).await);
    }
    assert!(
        weak.is_empty(),
        "focus rings under 3:1 or none on /bridge/: {weak:?}"
    );
    tab.screenshot(SHOTS, "focus-bridge-1280x800").await;
    tab.assert_no_errors();
    tab.close().await;
    browser.close().await;
}
