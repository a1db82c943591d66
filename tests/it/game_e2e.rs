//! The game pages in headless Chromium (the project's DevTools driver): the level list and
//! the Labor tab, a committed level played to the win by its replay fed as key events, a
//! replay watched to "verified in your browser", the level page and its bad inputs, the
//! public board with hostile text, the page opened from file://, and the engine module's
//! parity with the native referee in Chromium. Screenshots (1280x800 and 390x844) go to
//! `target/screenshots/game/` for review; they are not committed.
//!
//! Keys are fed per tick through the page's test hook (`?test`: the loop does not run by
//! itself; `horstTest.tick(n)` advances n ticks from the keys held now, see docs/game.md),
//! with real key events from DevTools' `Input.dispatchKeyEvent`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::browser::{launch, Tab};
use crate::game_api::{game_app, get, submit};
use crate::harness::ok_result;

const LONG: Duration = Duration::from_secs(60);

fn shots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots/game");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn call(tab: &Tab, method: &str, params: Value) -> Value {
    tab.browser
        .call(Some(&tab.session), method, params)
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"))
}

async fn viewport(tab: &Tab, width: u32, height: u32) {
    call(
        tab,
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600 }),
    )
    .await;
}

/// The tab as a device's screen of `w` x `h` (a phone's or a tablet's with `touch`: touch
/// events, a coarse pointer); the screen's rectangle.
async fn device(tab: &Tab, w: u32, h: u32, touch: bool) -> [f64; 4] {
    tab.device(w, h, touch).await;
    [0.0, 0.0, w as f64, h as f64]
}

/// A fresh document each time (a URL that differs only in its fragment would not reload).
async fn navigate(tab: &Tab, url: &str) {
    call(tab, "Page.navigate", json!({ "url": "about:blank" })).await;
    tab.wait_for("location.href === 'about:blank'", "a blank page", LONG)
        .await;
    call(tab, "Page.navigate", json!({ "url": url })).await;
}

async fn ready(tab: &Tab, what: &str) {
    tab.wait_for(
        "document.body && document.body.dataset.ready === '1'",
        what,
        LONG,
    )
    .await;
}

async fn screenshot(tab: &Tab, name: &str) {
    // Let a frame draw first.
    tab.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        .await;
    let v = call(tab, "Page.captureScreenshot", json!({ "format": "png" })).await;
    let png = base64::engine::general_purpose::STANDARD
        .decode(v["data"].as_str().unwrap())
        .unwrap();
    std::fs::write(shots().join(format!("{name}.png")), png).unwrap();
}

/// A key as DevTools sends it (only `code` matters to the game).
/// Holds → for `ticks` ticks of the test hook and lets go; what the last tick answered.
async fn hold_right(tab: &Tab, ticks: u32) -> Value {
    call(
        tab,
        "Input.dispatchKeyEvent",
        key_params("ArrowRight", true),
    )
    .await;
    let st = tab.eval(&format!("horstTest.tick({ticks})")).await;
    call(
        tab,
        "Input.dispatchKeyEvent",
        key_params("ArrowRight", false),
    )
    .await;
    st
}

fn key_params(code: &str, down: bool) -> Value {
    let (key, vk) = match code {
        "ArrowLeft" => ("ArrowLeft", 37),
        "ArrowRight" => ("ArrowRight", 39),
        "ShiftLeft" => ("Shift", 16),
        "Space" => (" ", 32),
        "KeyX" => ("x", 88),
        other => panic!("no key {other}"),
    };
    json!({
        "type": if down { "rawKeyDown" } else { "keyUp" },
        "code": code, "key": key, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk,
    })
}

/// A key event with everything the tests below vary: `type` is DevTools' (`keyDown` with
/// text makes the keypress that activates a button on Enter), `modifiers` its bit mask (Alt 1,
/// Ctrl 2, Meta 4, Shift 8).
fn key_event(kind: &str, code: &str, repeat: bool, modifiers: u32) -> Value {
    let (key, vk, text) = match code {
        "ArrowRight" => ("ArrowRight", 39, ""),
        "Space" => (" ", 32, " "),
        "Enter" => ("Enter", 13, "\r"),
        "KeyR" => ("r", 82, "r"),
        "KeyX" => ("x", 88, "x"),
        other => panic!("no key {other}"),
    };
    let mut v = json!({
        "type": kind, "code": code, "key": key, "windowsVirtualKeyCode": vk,
        "nativeVirtualKeyCode": vk, "autoRepeat": repeat, "modifiers": modifiers,
    });
    if kind == "keyDown" && !text.is_empty() && modifiers & 7 == 0 {
        v["text"] = json!(text);
        v["unmodifiedText"] = json!(text);
    }
    v
}

/// The keys that make `action` (the page's own mapping, inverted).
fn keys_for(action: u64) -> BTreeSet<&'static str> {
    let (mv, b) = (action / 4, action % 4);
    let mut k = BTreeSet::new();
    if mv == 0 || mv == 3 {
        k.insert("ArrowLeft");
    }
    if mv == 2 || mv == 4 {
        k.insert("ArrowRight");
    }
    if mv >= 3 {
        k.insert("ShiftLeft");
    }
    if b == 1 || b == 3 {
        k.insert("Space");
    }
    if b >= 2 {
        k.insert("KeyX");
    }
    k
}

/// Plays `replay` on the open play stage by pressing and releasing keys, tick by tick.
async fn play_with_keys(tab: &Tab, replay: &Value) -> Value {
    play_with_keys_until(tab, replay, |_| false).await
}

/// Like `play_with_keys`, stopping after the first step whose state satisfies `stop`.
async fn play_with_keys_until(tab: &Tab, replay: &Value, stop: impl Fn(&Value) -> bool) -> Value {
    let mut held: BTreeSet<&str> = BTreeSet::new();
    for step in replay["actions"].as_array().unwrap() {
        let want = keys_for(step["action"].as_u64().unwrap());
        for k in held.difference(&want) {
            call(tab, "Input.dispatchKeyEvent", key_params(k, false)).await;
        }
        for k in want.difference(&held) {
            call(tab, "Input.dispatchKeyEvent", key_params(k, true)).await;
        }
        held = want;
        let ticks = step["ticks"].as_u64().unwrap();
        let st = tab.eval(&format!("horstTest.tick({ticks})")).await;
        if !st["finished"].is_null() || stop(&st) {
            break;
        }
    }
    for k in &held {
        call(tab, "Input.dispatchKeyEvent", key_params(k, false)).await;
    }
    tab.eval("horstTest.state()").await
}

/// A 1280x800 tab whose page keeps the focus (key events reach the canvas in the
/// background too).
async fn wide_focused_tab(browser: &std::sync::Arc<horst_house::cdp::Browser>) -> Tab {
    let tab = Tab::open(browser, "about:blank").await;
    call(
        &tab,
        "Emulation.setFocusEmulationEnabled",
        json!({ "enabled": true }),
    )
    .await;
    viewport(&tab, 1280, 800).await;
    tab
}

fn no_errors(tab: &Tab, what: &str) {
    let errors = tab.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "{what}: console errors {errors:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_game_in_chromium() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let key = app.agent_key("fuchs", 1).await;
    horst_identity::accounts::set_account_field(
        &app.store,
        "fuchs",
        "displayName",
        "Fuchs <img src=x onerror=alert(1)>",
    )
    .await
    .unwrap();
    let labor_id = submit(&app, &key, "fuchsbau").await;
    let browser = launch().await;

    // `/`: the levels, then the Labor tab.
    let tab = wide_focused_tab(&browser).await;
    navigate(&tab, &app.url("/?test")).await;
    ready(&tab, "the game page").await;
    let cards = tab
        .eval("document.querySelectorAll('#level-list .card').length")
        .await;
    assert_eq!(cards, json!(horst_levels::BUILTIN.len()));
    assert_eq!(
        tab.eval("document.querySelector('#level-list .card-title').textContent")
            .await,
        "Erste Schritte"
    );
    // The shelf: every card has its level's picture, drawn with the game's own art, and a
    // first visit starts with level 1.
    tab.wait_for(
        &format!(
            "document.querySelectorAll('#level-list .card canvas.thumb').length === {}",
            horst_levels::BUILTIN.len()
        ),
        "a thumbnail on every card",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("document.getElementById('continue-button').textContent")
            .await,
        "Los geht's mit Level 1"
    );
    // Ids, hashes and engine versions are for the level page's details, not the shelf.
    let shelf = tab
        .eval("document.getElementById('level-list').textContent")
        .await;
    for dev in ["rev-", "Ticks", "Engine", "Seed"] {
        assert!(
            !shelf.as_str().unwrap().contains(dev),
            "the shelf shows {dev}: {shelf}"
        );
    }
    screenshot(&tab, "levels-1280x800").await;
    tab.eval("document.getElementById('tab-labor').click()")
        .await;
    tab.wait_for(
        "document.querySelectorAll('#labor-list .labor-card').length === 1",
        "the Labor-Karte",
        LONG,
    )
    .await;
    let text = tab
        .eval("document.querySelector('#labor-list .labor-card').textContent")
        .await;
    let text = text.as_str().unwrap();
    for want in ["fuchs", "Fuchs <img src=x onerror=alert(1)>"] {
        assert!(text.contains(want), "{want} missing in {text}");
    }
    assert_eq!(
        tab.eval("document.querySelectorAll('#labor-list img').length")
            .await,
        0,
        "an author's name became markup"
    );
    screenshot(&tab, "labor-1280x800").await;

    // Play a committed level to the win, its replay fed as key events.
    let (_, levels) = get(&app, "/api/game/levels").await;
    let level = levels["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "murmeltiere")
        .unwrap()
        .clone();
    let id = level["revisionId"].as_str().unwrap();
    let (_, rev) = get(&app, &format!("/api/game/revisions/{id}")).await;
    tab.eval("document.getElementById('tab-levels').click()")
        .await;
    tab.eval(&format!(
        "document.querySelector('[data-revision=\"{id}\"] button.primary').click()"
    ))
    .await;
    tab.wait_for(
        "window.horstTest && horstTest.state().mode === 'play'",
        "the play stage",
        LONG,
    )
    .await;
    tab.wait_for(
        "document.activeElement && document.activeElement.tagName === 'CANVAS'",
        "the canvas with focus",
        LONG,
    )
    .await;
    tab.eval("horstTest.tick(30)").await;
    tab.eval("horstTest.stage.restart()").await;
    screenshot(&tab, "play-start-1280x800").await;
    let st = play_with_keys(&tab, &rev["replay"]).await;
    assert_eq!(st["finished"]["status"], 1, "not won: {st}");
    assert_eq!(st["finished"]["ticks"], rev["evidence"]["ticks"], "{st}");
    assert_eq!(st["stateHash"], rev["evidence"]["stateHash"], "{st}");
    assert_eq!(
        tab.eval("document.getElementById('overlay-title').textContent")
            .await,
        "Geschafft!"
    );
    // A win shows the time and the best time, remembers both for this revision, and hands
    // the focus to "Weiter".
    let ticks = rev["evidence"]["ticks"].as_u64().unwrap();
    let said = tab
        .eval("document.querySelector('.overlay p').textContent")
        .await;
    let secs = format!("{:.2}", ticks as f64 / 60.0).replace('.', ",");
    assert!(
        said.as_str().unwrap().contains(&format!("Zeit: {secs} s"))
            && said.as_str().unwrap().contains("Bestzeit"),
        "{said}"
    );
    assert_eq!(
        tab.eval("document.activeElement.textContent").await,
        "Weiter"
    );
    let stored = tab
        .eval(&format!("localStorage.getItem('gcv.progress.{id}')"))
        .await;
    let stored: Value = serde_json::from_str(stored.as_str().unwrap()).unwrap();
    assert_eq!(stored, json!({"won": true, "best": ticks}));
    screenshot(&tab, "play-won-1280x800").await;
    // The downloadable replay referees to the same outcome.
    let mine = tab.eval("horstTest.lastReplay()").await;
    let map = horst_engine::parse_map(rev["map"].as_str().unwrap()).unwrap();
    let report = horst_engine::referee(&map, &horst_engine::parse_replay(&mine).unwrap());
    assert_eq!(report.outcome, "won");
    assert_eq!(
        report.state_hash,
        rev["evidence"]["stateHash"].as_str().unwrap()
    );

    // A death is a moment too: running into the marmot, with the referee's cause in words.
    tab.eval("horstTest.stage.restart()").await;
    let st = hold_right(&tab, 600).await;
    assert_eq!(st["finished"]["status"], 2, "{st}");
    let text = tab
        .eval("document.querySelector('.overlay p').textContent")
        .await;
    assert!(text.as_str().unwrap().contains("Murmeltier"), "{text}");
    screenshot(&tab, "play-lost-1280x800").await;

    // Past a checkpoint a death offers to go on from there, as practice without a replay.
    let rast = levels["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "rastplatz")
        .unwrap()
        .clone();
    let (_, rast) = get(
        &app,
        &format!(
            "/api/game/revisions/{}",
            rast["revisionId"].as_str().unwrap()
        ),
    )
    .await;
    navigate(
        &tab,
        &app.url(&format!(
            "/?test#spielen={}",
            rast["revisionId"].as_str().unwrap()
        )),
    )
    .await;
    tab.wait_for(
        "window.horstTest && horstTest.state().mode === 'play'",
        "the play stage",
        LONG,
    )
    .await;
    tab.wait_for(
        "document.activeElement && document.activeElement.tagName === 'CANVAS'",
        "the canvas with focus",
        LONG,
    )
    .await;
    // Before a run the replay button is off and says beside it what turns it on, in the
    // button's description too (a screen reader reads it with the name). Before, it was
    // greyed without a word.
    assert_eq!(
        tab.eval(REPLAY_BUTTON).await,
        json!([
            true,
            "Erst spielen: das Replay gibt es, sobald dein Lauf endet.",
            true
        ]),
        "the replay button before a run"
    );
    screenshot(&tab, "play-before-run-1280x800").await;
    let st = play_with_keys_until(&tab, &rast["replay"], |s| s["checkpoint"] == 0).await;
    assert_eq!(st["checkpoint"], 0, "{st}");
    let st = hold_right(&tab, 1200).await;
    assert_eq!(st["finished"]["status"], 2, "{st}");
    screenshot(&tab, "play-checkpoint-death-1280x800").await;
    // The run from the start ended: the replay is there, the hint gone.
    assert_eq!(
        tab.eval(REPLAY_BUTTON).await,
        json!([false, null, false]),
        "the replay button after a run"
    );
    let clicked = tab
        .eval("(() => { const b = [...document.querySelectorAll('.overlay button')].find(b => b.textContent === 'Ab Rastplatz'); if (!b) return false; b.click(); return true; })()")
        .await;
    assert_eq!(clicked, true);
    let st = tab.eval("horstTest.state()").await;
    assert_eq!(
        (st["tick"].clone(), st["practice"].clone()),
        (json!(0), json!(true)),
        "{st}"
    );
    assert_eq!(
        tab.eval("document.querySelector('.side .bar button:nth-child(2)').disabled")
            .await,
        true,
        "a practice run offers no replay"
    );
    assert_eq!(
        tab.eval(REPLAY_BUTTON).await,
        json!([
            true,
            "Ein Übungslauf vom Rastplatz gibt kein Replay: „Neustart“ spielt das Level von vorn.",
            true
        ]),
        "the replay button in a practice run"
    );

    // Back to the marmots: watch the winning replay to "verified in your browser".
    navigate(&tab, &app.url(&format!("/?test#zuschauen={id}"))).await;
    tab.wait_for(
        "window.horstTest && horstTest.state().mode === 'watch'",
        "the watch stage",
        LONG,
    )
    .await;

    // Watch the winning replay to "verified in your browser".
    tab.eval("document.querySelector('.mode:nth-child(2)').click()")
        .await;
    tab.wait_for(
        "horstTest.state().mode === 'watch'",
        "the watch stage",
        LONG,
    )
    .await;
    let total = rev["evidence"]["ticks"].as_u64().unwrap();
    tab.eval(&format!("horstTest.tick({})", total / 2)).await;
    screenshot(&tab, "watch-middle-1280x800").await;
    tab.eval("horstTest.tick(100000)").await;
    assert_eq!(
        tab.eval("document.getElementById('verdict').dataset.verified")
            .await,
        "yes",
        "{}",
        tab.eval("document.getElementById('verdict').textContent")
            .await
    );
    screenshot(&tab, "watch-verified-1280x800").await;
    // The scrubber goes back, single step goes forward.
    tab.eval("(() => { const s = document.getElementById('watch-scrub'); s.value = '10'; s.dispatchEvent(new Event('input')); })()").await;
    tab.eval("document.getElementById('watch-step').click()")
        .await;
    assert_eq!(tab.eval("horstTest.state().tick").await, 11);
    // The action line says the action in words and which step of the replay it is (it showed
    // the action's index, "#10", which no spectator reads). The marmots' replay steers right
    // and throws for 24 ticks, then steers right and jumps.
    let action = "document.getElementById('watch-action').textContent";
    assert_eq!(
        tab.eval(action).await,
        "→SprungWurfsteuert nach rechts und wirftSchritt 1 von 5"
    );
    tab.eval("(() => { const s = document.getElementById('watch-scrub'); s.value = '30'; s.dispatchEvent(new Event('input')); })()").await;
    assert_eq!(
        tab.eval(action).await,
        "→SprungWurfsteuert nach rechts und springtSchritt 2 von 5"
    );
    screenshot(&tab, "watch-action-1280x800").await;
    // Richer levels, for the screenshots: every kind of block and entity drawn.
    for name in ["gipfelsturm", "rastplatz", "sechzehn-feinde"] {
        let l = levels["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == name)
            .unwrap();
        let id = l["revisionId"].as_str().unwrap();
        let half = l["ticks"].as_u64().unwrap() / 2;
        navigate(&tab, &app.url(&format!("/?test#zuschauen={id}"))).await;
        ready(&tab, name).await;
        tab.wait_for(
            "window.horstTest && horstTest.state().mode === 'watch'",
            "the watch stage",
            LONG,
        )
        .await;
        tab.eval(&format!("horstTest.tick({half})")).await;
        screenshot(&tab, &format!("watch-{name}-1280x800")).await;
    }
    navigate(&tab, &app.url("/?test")).await;
    ready(&tab, "the game page").await;
    // Back on the shelf: the won level is marked "geschafft" with its best time, and the
    // first level not won yet leads.
    assert_eq!(
        tab.eval(&format!(
            "document.querySelector('[data-revision=\"{id}\"] .done').textContent"
        ))
        .await,
        "✓ geschafft"
    );
    assert_eq!(
        tab.eval("document.getElementById('continue-button').textContent")
            .await,
        "Weiter mit Level 1"
    );
    tab.eval("(() => { const d = document.querySelector('details.legend'); d.open = true; d.scrollIntoView(); })()").await;
    screenshot(&tab, "legend-1280x800").await;
    no_errors(&tab, "the game page");

    // The narrow screen of a phone, with touch: the touch controls show.
    viewport(&tab, 390, 844).await;
    call(
        &tab,
        "Emulation.setTouchEmulationEnabled",
        json!({ "enabled": true, "maxTouchPoints": 5 }),
    )
    .await;
    navigate(&tab, &app.url("/?test")).await;
    ready(&tab, "the game page (narrow)").await;
    screenshot(&tab, "levels-390x844").await;
    tab.eval(&format!(
        "document.querySelector('[data-revision=\"{id}\"] button.primary').click()"
    ))
    .await;
    tab.wait_for("window.horstTest", "the play stage", LONG)
        .await;
    tab.eval("horstTest.tick(40)").await;
    assert_eq!(
        tab.eval("getComputedStyle(document.querySelector('.pad')).display")
            .await,
        "grid"
    );
    screenshot(&tab, "play-390x844").await;
    call(
        &tab,
        "Emulation.setTouchEmulationEnabled",
        json!({ "enabled": false }),
    )
    .await;
    no_errors(&tab, "the narrow game page");

    // The level page of a Labor revision, and its bad inputs.
    viewport(&tab, 1280, 800).await;
    navigate(&tab, &app.url(&format!("/level/{labor_id}?test&m=watch"))).await;
    ready(&tab, "the level page").await;
    assert_eq!(
        tab.eval("document.getElementById('level-title').textContent")
            .await,
        "Erste Schritte"
    );
    tab.eval("horstTest.tick(100000)").await;
    assert_eq!(
        tab.eval("document.getElementById('verdict').dataset.verified")
            .await,
        "yes"
    );
    screenshot(&tab, "level-page-1280x800").await;
    no_errors(&tab, "the level page");
    // The ids and hashes are in the closed details, with the revision and level name.
    let details = tab
        .eval("(() => { const d = document.getElementById('level-details'); return d && !d.open && d.textContent; })()")
        .await;
    for want in ["fuchsbau", labor_id.as_str(), "Karten-Hash"] {
        assert!(
            details.as_str().unwrap_or_default().contains(want),
            "{want} not in the closed details: {details}"
        );
    }
    viewport(&tab, 390, 844).await;
    navigate(&tab, &app.url(&format!("/level/{labor_id}?test"))).await;
    ready(&tab, "the level page (narrow)").await;
    // On a phone the game comes first: the canvas starts in the upper half of the screen.
    let top = tab
        .eval("document.querySelector('canvas.screen').getBoundingClientRect().top")
        .await;
    assert!(
        top.as_f64().unwrap() < 422.0,
        "the canvas starts at {top} px"
    );
    screenshot(&tab, "level-page-390x844").await;

    // A stored replay that loses in the browser (tampered with here: walking right into the
    // first gap) is a mismatch that says what killed the bird.
    let lost_id = submit(&app, &key, "absturz").await;
    let _: () = redis::cmd("HSET")
        .arg(app.store.key(&format!("rev:{lost_id}")))
        .arg("replay")
        .arg(r#"{"seed":1,"actions":[{"action":8,"ticks":600}]}"#)
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    viewport(&tab, 1280, 800).await;
    navigate(&tab, &app.url(&format!("/level/{lost_id}?test&m=watch"))).await;
    ready(&tab, "the level page of a tampered revision").await;
    tab.eval("horstTest.tick(100000)").await;
    assert_eq!(
        tab.eval("document.getElementById('verdict').dataset.verified")
            .await,
        "no"
    );
    let verdict = tab
        .eval("document.getElementById('verdict').textContent")
        .await;
    assert!(
        verdict
            .as_str()
            .is_some_and(|v| v.contains("lost (Aus der Karte gefallen)")),
        "{verdict}"
    );
    tab.close().await;

    let bad = Tab::open(&browser, "about:blank").await;
    viewport(&bad, 1280, 800).await;
    for (path, title) in [
        ("/level/rev-gibt-es-nicht", "Level nicht gefunden"),
        ("/level/kaputt%20id", "Keine gültige Level-Kennung"),
    ] {
        navigate(&bad, &app.url(path)).await;
        ready(&bad, path).await;
        assert_eq!(
            bad.eval("document.querySelector('#message h1').textContent")
                .await,
            title,
            "{path}"
        );
    }
    screenshot(&bad, "level-not-found-1280x800").await;
    // A level checked on another engine says so.
    let other = format!("{id}-other");
    let mut conn = app.store.conn();
    let fields: Vec<(String, String)> = redis::cmd("HGETALL")
        .arg(app.store.key(&format!("rev:{id}")))
        .query_async(&mut conn)
        .await
        .unwrap();
    for (k, v) in fields {
        let v = match k.as_str() {
            "revisionId" => other.clone(),
            "engineVersion" => "0".repeat(64),
            _ => v,
        };
        let _: () = redis::cmd("HSET")
            .arg(app.store.key(&format!("rev:{other}")))
            .arg(k)
            .arg(v)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    navigate(&bad, &app.url(&format!("/level/{other}?test"))).await;
    ready(&bad, "the other-engine level").await;
    let warn = bad
        .eval("document.getElementById('engine-mismatch').textContent")
        .await;
    assert!(warn.as_str().unwrap().contains("anderen Engine"), "{warn}");
    screenshot(&bad, "level-other-engine-1280x800").await;
    bad.close().await;

    // The public board: published threads, every text as text.
    let post = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": "<b>Mehr Eis</b> & Schnee", "body": "Eis <script>alert(1)</script>\nzweite Zeile"}),
            Some(&key),
        )
        .await,
    );
    let thread = post["threadId"].as_str().unwrap();
    horst_operator::publish_thread(&app.store, "test", thread, true)
        .await
        .unwrap();
    let board = Tab::open(&browser, "about:blank").await;
    viewport(&board, 1280, 800).await;
    navigate(&board, &app.url("/board.html")).await;
    ready(&board, "the board").await;
    assert_eq!(
        board
            .eval("document.querySelector('.thread-title bdi').textContent")
            .await,
        "<b>Mehr Eis</b> & Schnee"
    );
    assert_eq!(
        board
            .eval("document.querySelectorAll('.thread .meta bdi').length")
            .await,
        1,
        "the author's name is not in <bdi>"
    );
    // One post is "1 Beitrag", not "1 Beiträge".
    let meta = board
        .eval("document.querySelector('.thread').textContent")
        .await;
    assert!(
        meta.as_str().is_some_and(|t| t.contains(" · 1 Beitrag · ")),
        "{meta}"
    );
    board
        .eval("document.querySelector('.thread button').click()")
        .await;
    board
        .wait_for("document.querySelector('.post-body')", "the posts", LONG)
        .await;
    // The button says what a click does next: hide the posts again, then read them.
    let label = "document.querySelector('.thread button').textContent";
    assert_eq!(board.eval(label).await, "Beiträge ausblenden");
    board
        .eval("document.querySelector('.thread button').click()")
        .await;
    assert_eq!(board.eval(label).await, "Beiträge lesen");
    assert_eq!(
        board
            .eval("document.querySelector('.thread-posts').hidden")
            .await,
        true
    );
    board
        .eval("document.querySelector('.thread button').click()")
        .await;
    assert_eq!(board.eval(label).await, "Beiträge ausblenden");
    assert_eq!(
        board
            .eval("document.querySelectorAll('main b, main script, main img').length")
            .await,
        0
    );
    screenshot(&board, "board-1280x800").await;
    viewport(&board, 390, 844).await;
    screenshot(&board, "board-390x844").await;
    // A further page that fails (the page's reads answered 503 from here on): the threads
    // stay, the note stands beside the button, which tries again.
    board
        .eval(
            "window.fetch = async () => new Response(JSON.stringify({ error: 'the server is busy', code: 'unavailable' }), { status: 503 }); \
             document.getElementById('more').hidden = false; document.getElementById('more').click(); true",
        )
        .await;
    let note = board
        .wait_for(
            "document.getElementById('more-error').textContent",
            "the pager's note",
            LONG,
        )
        .await;
    // In German, by the answer's code: the server's English message is for agents.
    assert!(
        note.as_str()
            .unwrap()
            .contains("(der Server ist gerade nicht bereit)"),
        "{note}"
    );
    assert_eq!(
        board
            .eval("[document.querySelectorAll('.thread').length, document.getElementById('more').disabled]")
            .await,
        json!([1, false])
    );
    screenshot(&board, "board-more-failed-390x844").await;
    no_errors(&board, "the board");
    board.close().await;

    // The engine module in Chromium gives the native results (every level and the corpus).
    let parity = Tab::open(&browser, &app.url("/?test")).await;
    ready(&parity, "the game page").await;
    let cases = serde_json::to_string(&crate::wasm_engine::native_cases()).unwrap();
    let result = parity
        .eval(&format!(
            "import('/game/engine.js').then(async (m) => {{ const e = await m.loadEngine(); const cases = {cases}; \
             const bad = []; for (const c of cases) {{ const r = e.referee(c.map, c.replay); \
             if (r.outcome !== c.outcome || r.ticks !== c.ticks || r.stateHash !== c.stateHash) bad.push(c.name); }} \
             return {{ n: cases.length, bad, engine: e.engineVersion }}; }})"
        ))
        .await;
    assert_eq!(result["bad"], json!([]), "{result}");
    assert_eq!(result["engine"], horst_engine::engine_version());
    assert!(result["n"].as_u64().unwrap() >= 40, "{result}");
    parity.close().await;
    browser.close().await;
}

/// The run waits at its start ("Bereit") until the player's first input: the clock does not
/// run while the player reads the level (the real loop here, no test hook).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_starts_at_the_first_input() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let (_, levels) = get(&app, "/api/game/levels").await;
    let id = levels["items"][0]["revisionId"]
        .as_str()
        .unwrap()
        .to_string();
    let browser = launch().await;
    let tab = wide_focused_tab(&browser).await;
    navigate(&tab, &app.url(&format!("/#spielen={id}"))).await;
    tab.wait_for(
        "document.activeElement && document.activeElement.tagName === 'CANVAS' && document.getElementById('tick')",
        "the play stage with the canvas focused",
        LONG,
    )
    .await;
    // Generous: 90 ticks would have run by now on a clock that starts at once.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        tab.eval("document.getElementById('tick').textContent")
            .await,
        "Bereit"
    );
    assert_eq!(
        tab.eval("!document.getElementById('ready').checkVisibility({ visibilityProperty: true })")
            .await,
        false
    );
    screenshot(&tab, "play-ready-1280x800").await;
    call(
        &tab,
        "Input.dispatchKeyEvent",
        key_params("ArrowRight", true),
    )
    .await;
    tab.wait_for(
        "document.getElementById('tick').textContent.startsWith('Zeit ')",
        "the clock running after the first key",
        LONG,
    )
    .await;
    call(
        &tab,
        "Input.dispatchKeyEvent",
        key_params("ArrowRight", false),
    )
    .await;
    assert_eq!(
        tab.eval("!document.getElementById('ready').checkVisibility({ visibilityProperty: true })")
            .await,
        true
    );
    no_errors(&tab, "the play stage in real time");
}

/// A Chromium of its own (with `extra_args`) for the game page opened from a file.
async fn file_browser(extra_args: &[&str]) -> std::sync::Arc<horst_house::cdp::Browser> {
    let options = horst_house::cdp::LaunchOptions {
        binary: "chromium".into(),
        extra_args: extra_args.iter().map(|a| a.to_string()).collect(),
        only_host: None,
    };
    std::sync::Arc::new(
        horst_house::cdp::Browser::launch(&options)
            .await
            .expect("chromium"),
    )
}

/// The game page as a `file://` URL.
fn game_page_file() -> String {
    let page = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("web/index.html");
    format!("file://{}", page.display())
}

/// Chromium as people start it refuses module scripts from file://: the page said
/// "Lade Level …" for good. It says to open it through horst instead, at both sizes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opened_from_a_file_without_file_access_it_says_to_open_it_through_horst() {
    let browser = file_browser(&[]).await;
    let tab = Tab::open(&browser, "about:blank").await;
    for (w, h) in [(1280, 800), (390, 844)] {
        viewport(&tab, w, h).await;
        navigate(&tab, &game_page_file()).await;
        let said = tab
            .wait_for(
                "(() => { const t = document.getElementById('level-list').textContent; return !t.includes('Lade') && t; })()",
                "a word other than loading on the page opened from a file",
                LONG,
            )
            .await;
        let said = said.as_str().unwrap_or_default().to_string();
        assert!(
            said.contains("über horst") && said.contains("http://127.0.0.1:8080/"),
            "{said}"
        );
        assert_eq!(
            tab.eval("document.getElementById('tabs').hidden").await,
            json!(true)
        );
        screenshot(&tab, &format!("file-no-access-{w}")).await;
    }
}

/// The board (`web/board.html`) and a level's page (`web/level/index.html`) opened from a file
/// say to open them through horst, as the game page does: in a Chromium as people start it
/// (no module runs) the board said "Lade …" for good and the level page showed nothing; with
/// file access the board said "Das Brett ist gerade nicht zu haben (Failed to fetch)" and the
/// level page "Level-Seiten brauchen den Server; öffne sie über http", without the address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_board_and_a_level_page_opened_from_a_file_say_to_open_them_through_horst() {
    let web = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("web");
    for (access, args) in [
        ("no-access", &[][..]),
        ("file-access", &["--allow-file-access-from-files"][..]),
    ] {
        let browser = file_browser(args).await;
        let tab = Tab::open(&browser, "about:blank").await;
        for (page, slot) in [("board.html", "threads"), ("level/index.html", "message")] {
            for (w, h) in [(1280, 800), (390, 844)] {
                viewport(&tab, w, h).await;
                navigate(&tab, &format!("file://{}", web.join(page).display())).await;
                let said = tab
                    .wait_for(
                        &format!(
                            "(() => {{ const s = document.getElementById('{slot}'); const t = s.textContent; \
                             return !s.hidden && s.checkVisibility() && !t.includes('Lade') && t; }})()"
                        ),
                        &format!("a word other than loading on {page} opened from a file ({access})"),
                        LONG,
                    )
                    .await;
                let said = said.as_str().unwrap_or_default().to_string();
                assert!(
                    said.contains("über horst") && said.contains("http://127.0.0.1:8080/"),
                    "{page} ({access}): {said}"
                );
                if page == "board.html" {
                    assert_eq!(
                        tab.eval("document.getElementById('more').hidden").await,
                        json!(true)
                    );
                }
                let name = page.replace(['/', '.'], "-");
                screenshot(&tab, &format!("file-{name}-{access}-{w}")).await;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opened_from_a_file_the_labor_is_hidden() {
    crate::wasm_engine::engine_module();
    let browser = file_browser(&["--allow-file-access-from-files"]).await;
    let tab = Tab::open(&browser, &game_page_file()).await;
    ready(&tab, "the game page from a file").await;
    assert_eq!(
        tab.eval("document.getElementById('tab-labor').hidden")
            .await,
        true
    );
    assert_eq!(
        tab.eval("!!document.getElementById('map-file')").await,
        true
    );
    // Bad files are named next to the file fields, which stay for the next try.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/tmp")
        .join(format!("game-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let said = |want: &'static str| {
        let tab = &tab;
        async move {
            let text = tab
                .wait_for(
                    &format!(
                        "(() => {{ const t = document.getElementById('file-error').textContent; return t.includes({want:?}) && t; }})()"
                    ),
                    want,
                    LONG,
                )
                .await;
            assert_eq!(
                tab.eval("[!!document.getElementById('map-file'), !!document.getElementById('replay-file'), document.getElementById('chooser').hidden]")
                    .await,
                json!([true, true, false]),
                "after {text}"
            );
        }
    };
    choose_file(&tab, "map-file", &file("kaputt.map", BROKEN_MAP)).await;
    said("kein gültiges Level").await;
    said("5:3").await;
    choose_file(&tab, "replay-file", &file("kaputt.json", "nicht json")).await;
    said("kein JSON").await;
    choose_file(&tab, "replay-file", &file("leer.json", r#"{"seed": 1}"#)).await;
    said("\"actions\"").await;
    choose_file(&tab, "map-file", &file("flach.map", FLAT_MAP)).await;
    said("\"actions\"").await;
    choose_file(
        &tab,
        "replay-file",
        &file(
            "zu-lang.json",
            r#"{"seed": 1, "actions": [{"action": 8, "ticks": 601}]}"#,
        ),
    )
    .await;
    said("Das Replay passt nicht").await;
    // A good pair plays; watched to its end, the page says what it computed itself (there is
    // no evidence to compare with).
    choose_file(
        &tab,
        "replay-file",
        &file(
            "flach.json",
            r#"{"seed": 1, "actions": [{"action": 8, "ticks": 300}]}"#,
        ),
    )
    .await;
    tab.wait_for(
        "!document.getElementById('stage-view').hidden && document.querySelector('.mode:nth-child(2)')",
        "the stage",
        LONG,
    )
    .await;
    tab.eval("(() => { document.querySelector('.mode:nth-child(2)').click(); const s = document.getElementById('watch-scrub'); s.value = s.max; s.dispatchEvent(new Event('input')); return true; })()")
        .await;
    let verdict = tab
        .wait_for(
            "document.getElementById('verdict').textContent",
            "the verdict",
            LONG,
        )
        .await;
    let verdict = verdict.as_str().unwrap();
    assert!(
        verdict.contains("Dein Browser kam auf won")
            && !verdict.contains("Abweichung")
            && !verdict.contains("undefined"),
        "{verdict}"
    );
    screenshot(&tab, "file-watch-1280x800").await;
    no_errors(&tab, "the game page from a file");
    tab.close().await;
    browser.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Chooses `path` in the file field `input` (as a person would: its change event fires).
async fn choose_file(tab: &Tab, input: &str, path: &std::path::Path) {
    let v = call(
        tab,
        "Runtime.evaluate",
        json!({ "expression": format!("document.getElementById('{input}')") }),
    )
    .await;
    let object = v["result"]["objectId"].as_str().expect("the file field");
    call(
        tab,
        "DOM.setFileInputFiles",
        json!({ "files": [path], "objectId": object }),
    )
    .await;
}

/// The figures of docs/benchmarks.md, "Engine in the browser", in Chromium: the engine
/// module's ticks per second on the engine benchmark's level (batched and per tick, three runs
/// each), and the game page's load (DOMContentLoaded, load, levels listed with the engine
/// ready) over three loads, the first one cold. A benchmark, not a test: run it by name with
/// `--ignored --nocapture`; it asserts only that the runs reproduce the native stateHash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: cargo test --test it game_e2e::engine_figures -- --ignored --nocapture"]
async fn engine_figures() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let browser = launch().await;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("levels");
    let map = std::fs::read_to_string(root.join("15-sechzehn-feinde.map")).unwrap();
    // The engine benchmark's own copy of the replay (engine/benches/README.md).
    let replay: Value = serde_json::from_str(include_str!(
        "../../engine/benches/sechzehn-feinde.replay.json"
    ))
    .unwrap();
    let native = horst_engine::referee(
        &horst_engine::parse_map(&map).unwrap(),
        &horst_engine::parse_replay(&replay).unwrap(),
    );
    for load in 0..3 {
        let tab = Tab::open(&browser, &app.url("/?test")).await;
        ready(&tab, "the game page").await;
        let t = tab
            .eval(
                "(() => { const n = performance.getEntriesByType('navigation')[0]; \
                 return { dom: n.domContentLoadedEventEnd, load: n.loadEventEnd, ready: performance.now() }; })()",
            )
            .await;
        println!(
            "page load {load}: DOMContentLoaded {:.0} ms, load {:.0} ms, levels listed and engine ready by {:.0} ms",
            t["dom"].as_f64().unwrap_or(0.0),
            t["load"].as_f64().unwrap_or(0.0),
            t["ready"].as_f64().unwrap_or(0.0)
        );
        // The page's weight once every card has its picture: each request, transferred
        // (headers included; 0 for a 304 from the cache) and decoded.
        tab.wait_for(
            "document.querySelectorAll('#level-list canvas.thumb').length === document.querySelectorAll('#level-list .card').length",
            "every card's picture",
            LONG,
        )
        .await;
        let w = tab
            .eval(
                "(() => { const all = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]; \
                 return { requests: all.length, transfer: all.reduce((s, e) => s + e.transferSize, 0), \
                 body: all.reduce((s, e) => s + e.decodedBodySize, 0), pictures: performance.now() }; })()",
            )
            .await;
        println!(
            "page weight {load}: {} requests, {:.1} KiB transferred, {:.1} KiB decoded; every card's picture drawn by {:.0} ms",
            w["requests"],
            w["transfer"].as_f64().unwrap_or(0.0) / 1024.0,
            w["body"].as_f64().unwrap_or(0.0) / 1024.0,
            w["pictures"].as_f64().unwrap_or(0.0)
        );
        tab.close().await;
    }
    let tab = Tab::open(&browser, &app.url("/?test")).await;
    ready(&tab, "the game page").await;
    let runs = tab
        .eval(&format!(
            "Promise.all([import('/game/engine.js'), import('/game/bench.js')]).then(async ([m, b]) => {{ \
             const e = await m.loadEngine(); const out = []; \
             for (const batched of [true, false]) for (let i = 0; i < 3; i++) \
               out.push({{ batched, ...b.benchmark(e, {map:?}, {replay}, 5000000, batched) }}); \
             return out; }})"
        ))
        .await;
    let runs = runs.as_array().expect("benchmark runs");
    assert_eq!(runs.len(), 6, "{runs:?}");
    for r in runs {
        println!(
            "chromium {}: {:.1} M ticks/s ({} ticks in {:.3} s)",
            if r["batched"] == true {
                "batched"
            } else {
                "per tick"
            },
            r["ticksPerSecond"].as_f64().unwrap_or(0.0) / 1e6,
            r["ticks"],
            r["seconds"].as_f64().unwrap_or(0.0)
        );
        assert_eq!(r["stateHash"], json!(native.state_hash), "{r}");
    }
    tab.close().await;
    browser.close().await;
}

/// Sets one field of a stored revision (a test's tampering: a map the engine rejects, a
/// map only two rows high).
async fn tamper(app: &crate::harness::TestApp, id: &str, field: &str, value: &str) {
    let _: () = redis::cmd("HSET")
        .arg(app.store.key(&format!("rev:{id}")))
        .arg(field)
        .arg(value)
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
}

/// A map the engine rejects: an unknown block character and no nest.
const BROKEN_MAP: &str =
    "gcv-map 1\nname: Kaputt\nsize: 3 2\ngrid:\n..Q\nGGG\nentities:\nstart 0 0\n";

/// A level only two rows high: walking right wins.
const FLAT_MAP: &str = "gcv-map 1\nname: Flach\nsize: 32 2\ngrid:\n................................\nGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGG\nentities:\nstart 1 0\nnest 30 0\n";

/// The revision id of the promoted level `name`.
async fn promoted_id(app: &crate::harness::TestApp, name: &str) -> String {
    let (_, levels) = get(app, "/api/game/levels").await;
    levels["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or_else(|| panic!("no level {name}: {levels}"))["revisionId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The rectangle of the first element matching `selector`: `[left, top, right, bottom]`.
async fn rect(tab: &Tab, selector: &str) -> [f64; 4] {
    let r = tab
        .eval(&format!(
            "(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }})()"
        ))
        .await;
    let r: Vec<f64> =
        serde_json::from_value(r.clone()).unwrap_or_else(|_| panic!("{selector}: {r}"));
    [r[0], r[1], r[2], r[3]]
}

/// Whether `inner` lies within `outer` (half a pixel of rounding allowed).
fn inside(inner: [f64; 4], outer: [f64; 4]) -> bool {
    inner[0] >= outer[0] - 0.5
        && inner[1] >= outer[1] - 0.5
        && inner[2] <= outer[2] + 0.5
        && inner[3] <= outer[3] + 0.5
}

/// Keys at the edges of a run, as real DevTools key events: Space or Enter held through a
/// win presses no button of the dialog and, after the restart, starts no clock; R restarts
/// from the dialog; a browser shortcut (Ctrl+X) stays the browser's; a run ends at the
/// referee's replay limit with a replay the referee takes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_at_the_edges_of_a_run() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let (_, levels) = get(&app, "/api/game/levels").await;
    let id = levels["items"][0]["revisionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, rev) = get(&app, &format!("/api/game/revisions/{id}")).await;
    let browser = launch().await;
    let tab = wide_focused_tab(&browser).await;
    navigate(&tab, &app.url(&format!("/?test#spielen={id}"))).await;
    tab.wait_for(
        "window.horstTest && horstTest.state().mode === 'play' && document.activeElement && document.activeElement.tagName === 'CANVAS'",
        "the play stage with the canvas focused",
        LONG,
    )
    .await;
    // What became of the last key event (read after every handler of the page).
    tab.eval("window.addEventListener('keydown', (e) => { window.lastKey = { code: e.code, prevented: e.defaultPrevented }; }); true")
        .await;
    let key = |kind: &'static str, code: &'static str, repeat: bool, modifiers: u32| {
        call(
            &tab,
            "Input.dispatchKeyEvent",
            key_event(kind, code, repeat, modifiers),
        )
    };

    // Ctrl+X is the browser's: not prevented, not held, and the run still waits.
    key("rawKeyDown", "KeyX", false, 2).await;
    assert_eq!(
        tab.eval("window.lastKey").await,
        json!({"code": "KeyX", "prevented": false})
    );
    key("keyUp", "KeyX", false, 2).await;
    assert_eq!(
        tab.eval("[horstTest.stage.keys.held.size, horstTest.state().waiting]")
            .await,
        json!([0, true])
    );

    // Space and Enter held through a win: their auto-repeats press no button of the dialog
    // (the first, "Weiter", would open the next level).
    let st = play_with_keys(&tab, &rev["replay"]).await;
    assert_eq!(st["finished"]["status"], 1, "not won: {st}");
    assert_eq!(
        tab.eval("document.activeElement.textContent").await,
        "Weiter"
    );
    for code in ["Space", "Enter"] {
        for _ in 0..3 {
            key("keyDown", code, true, 0).await;
        }
        key("keyUp", code, false, 0).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(
            tab.eval("[location.hash, document.querySelector('.overlay').hidden, horstTest.state().finished && horstTest.state().finished.status]")
                .await,
            json!([format!("#spielen={id}"), false, 1]),
            "{code} held pressed a button of the dialog"
        );
    }
    // A fresh Enter on "Nochmal" still presses it; Space held on from there (its repeats
    // reach the canvas) does not start the clock.
    tab.eval("[...document.querySelectorAll('.overlay button')].find((b) => b.textContent === 'Nochmal').focus()")
        .await;
    key("keyDown", "Enter", false, 0).await;
    key("keyUp", "Enter", false, 0).await;
    assert_eq!(
        tab.eval("[horstTest.state().finished, horstTest.state().waiting, document.activeElement.tagName]")
            .await,
        json!([null, true, "CANVAS"])
    );
    for _ in 0..3 {
        key("rawKeyDown", "Space", true, 0).await;
    }
    assert_eq!(
        tab.eval("[horstTest.state().waiting, horstTest.stage.keys.held.size]")
            .await,
        json!([true, 0]),
        "an auto-repeat started the run"
    );
    key("keyUp", "Space", false, 0).await;
    key("rawKeyDown", "Space", false, 0).await;
    assert_eq!(tab.eval("horstTest.state().waiting").await, false);
    key("keyUp", "Space", false, 0).await;

    // R restarts from the dialog too (won again: the focus is on "Weiter").
    tab.eval("horstTest.stage.restart()").await;
    let st = play_with_keys(&tab, &rev["replay"]).await;
    assert_eq!(st["finished"]["status"], 1, "not won: {st}");
    assert_eq!(
        tab.eval("document.activeElement.textContent").await,
        "Weiter"
    );
    key("keyDown", "KeyR", false, 0).await;
    key("keyUp", "KeyR", false, 0).await;
    assert_eq!(
        tab.eval("[location.hash, horstTest.state().finished, horstTest.state().tick, document.querySelector('.overlay').hidden, document.activeElement.tagName]")
            .await,
        json!([format!("#spielen={id}"), null, 0, true, "CANVAS"]),
        "R in the dialog did not restart"
    );

    // A run as long as the referee's limit ends there: "Die Zeit ist um", with a replay the
    // referee takes (36,000 ticks, unresolved).
    tab.eval("horstTest.stage.restart()").await;
    let st = tab.eval("horstTest.tick(36100)").await;
    assert_eq!(st["finished"], json!({"status": 3, "ticks": 36000}), "{st}");
    assert_eq!(
        tab.eval("document.getElementById('overlay-title').textContent")
            .await,
        "Die Zeit ist um"
    );
    let mine = tab.eval("horstTest.lastReplay()").await;
    let map = horst_engine::parse_map(rev["map"].as_str().unwrap()).unwrap();
    let replay = horst_engine::parse_replay(&mine).expect("the referee takes the replay");
    let report = horst_engine::referee(&map, &replay);
    assert_eq!((report.outcome, report.ticks), ("unresolved", 36000));
    screenshot(&tab, "play-time-up-1280x800").await;
    no_errors(&tab, "keys at the edges of a run");
    browser.close().await;
}

/// What the pages do with what goes wrong around a stage: a map the engine rejects says why
/// (on `/` and on the level page), "Spielen" without the engine says so, a level that loads
/// late does not replace the one opened after it, and a failed load ends the running stage.
/// A link to a level whose id does not decode (`#spielen=%E0`, a link cut in the middle of
/// an escape) or that no revision can have: the stage says it is no level id, as the level
/// page does, with the way back; nothing throws and nothing is asked of the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_link_with_no_valid_id_says_so_without_asking_the_server() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let browser = launch().await;
    let tab = wide_focused_tab(&browser).await;
    for hash in [
        "#spielen=%E0",
        "#zuschauen=rev-erste%2",
        "#spielen=%3Cscript%3E",
    ] {
        navigate(&tab, "about:blank").await;
        navigate(&tab, &app.url(&format!("/?test{hash}"))).await;
        let text = tab
            .wait_for(
                "document.querySelector('#stage .error') && document.querySelector('#stage .error').textContent",
                "the stage's word on the link",
                LONG,
            )
            .await;
        assert!(
            text.as_str()
                .unwrap()
                .contains("Keine gültige Level-Kennung"),
            "{hash}: {text}"
        );
        assert_eq!(
            tab.eval("document.getElementById('back').hidden").await,
            json!(false),
            "{hash}: no way back to the levels"
        );
        no_errors(&tab, hash);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_goes_wrong_around_a_stage() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let key = app.agent_key("fuchs", 1).await;
    let broken = submit(&app, &key, "kaputt").await;
    tamper(&app, &broken, "map", BROKEN_MAP).await;
    let (_, r) = get(&app, &format!("/api/game/revisions/{broken}")).await;
    assert_eq!(r["map"], BROKEN_MAP, "the tampered map is served");
    let (_, levels) = get(&app, "/api/game/levels").await;
    let ids: Vec<String> = levels["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["revisionId"].as_str().unwrap().to_string())
        .collect();
    let browser = launch().await;
    let tab = wide_focused_tab(&browser).await;

    // `/`: the engine's message and its errors with line:column, as text, under "Alle Level".
    navigate(&tab, &app.url(&format!("/?test#spielen={broken}"))).await;
    let text = tab
        .wait_for(
            "document.querySelector('#stage .play-error') && document.querySelector('#stage .play-error').textContent",
            "the engine's reasons on /",
            LONG,
        )
        .await;
    let text = text.as_str().unwrap();
    for want in [
        "lässt sich hier nicht spielen",
        "5:3",
        "`Q` is not a block character",
        "no nest",
    ] {
        assert!(text.contains(want), "{want} missing in {text}");
    }
    assert_eq!(
        tab.eval("[document.getElementById('back').hidden, document.getElementById('stage-view').hidden, !!window.horstTest]")
            .await,
        json!([false, false, false])
    );
    screenshot(&tab, "play-broken-map-1280x800").await;
    no_errors(&tab, "a map the engine rejects on /");
    // The level page: the same, and the way back.
    navigate(&tab, &app.url(&format!("/level/{broken}?test"))).await;
    ready(&tab, "the level page of a broken map").await;
    let text = tab
        .eval("document.querySelector('#stage .play-error').textContent")
        .await;
    assert!(text.as_str().is_some_and(|t| t.contains("5:3")), "{text}");
    assert_eq!(
        tab.eval("document.querySelector('#stage a').getAttribute('href')")
            .await,
        "../"
    );
    no_errors(&tab, "a map the engine rejects on the level page");

    // A level that answers late (held back 1.5 s here) does not replace the one opened after
    // it; a level that fails to load ends the stage that ran.
    navigate(&tab, &app.url("/?test")).await;
    ready(&tab, "the game page").await;
    tab.eval(&format!(
        "(() => {{ const f = window.fetch; window.fetch = (u, o) => String(u).endsWith('/revisions/{}') ? new Promise((r) => setTimeout(r, 1500)).then(() => f(u, o)) : f(u, o); return true; }})()",
        ids[0]
    ))
    .await;
    for id in [&ids[0], &ids[1]] {
        tab.eval(&format!(
            "document.querySelector('[data-revision=\"{id}\"] button.primary').click()"
        ))
        .await;
    }
    tab.wait_for(
        "window.horstTest && horstTest.state().mode === 'play'",
        "the second level's stage",
        LONG,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        tab.eval("horstTest.stage.rev.revisionId").await,
        json!(ids[1]),
        "the first level's late answer replaced the second"
    );
    tab.eval("location.hash = '#spielen=rev-gibt-es-nicht'; true")
        .await;
    tab.wait_for(
        "document.querySelector('#stage .error')",
        "the load error",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("[!!window.horstTest, document.querySelectorAll('#stage canvas').length]")
            .await,
        json!([false, 0]),
        "the old stage still runs"
    );
    tab.close().await;

    // Without the engine module (blocked here, as where WebAssembly fails) "Spielen" on a
    // Labor card says so.
    let tab = wide_focused_tab(&browser).await;
    call(&tab, "Network.enable", json!({})).await;
    call(
        &tab,
        "Network.setBlockedURLs",
        json!({ "urls": ["*engine.wasm*"] }),
    )
    .await;
    navigate(&tab, &app.url("/?test")).await;
    tab.wait_for(
        "document.querySelector('#panel-levels .error')",
        "the engine's error",
        LONG,
    )
    .await;
    tab.eval("document.getElementById('tab-labor').click()")
        .await;
    tab.wait_for(
        "document.querySelector('#labor-list .labor-card button.primary')",
        "a Labor card",
        LONG,
    )
    .await;
    tab.eval("document.querySelector('#labor-list .labor-card button.primary').click()")
        .await;
    let said = tab
        .wait_for(
            "document.querySelector('#stage .error') && document.querySelector('#stage .error').textContent",
            "the refusal",
            LONG,
        )
        .await;
    assert!(
        said.as_str()
            .is_some_and(|t| t.contains("Ohne die Spiel-Engine")),
        "{said}"
    );
    let thrown: Vec<String> = tab
        .errors
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.contains("TypeError"))
        .cloned()
        .collect();
    assert!(thrown.is_empty(), "{thrown:#?}");
    tab.close().await;
    browser.close().await;
}

/// A phone: held upright (390x844) and sideways (844x390), with touch. The touch pad and the
/// whole canvas are on screen; the dialog of a level two rows high is not cut off; a touch
/// button lets go (and looks it) when the focus goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_upright_and_sideways() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let key = app.agent_key("fuchs", 1).await;
    let flat = submit(&app, &key, "flach").await;
    tamper(&app, &flat, "map", FLAT_MAP).await;
    let murmel = promoted_id(&app, "murmeltiere").await;
    let browser = launch().await;
    let tab = wide_focused_tab(&browser).await;
    for (w, h) in [(390u32, 844u32), (844, 390)] {
        let screen = device(&tab, w, h, true).await;
        navigate(&tab, &app.url(&format!("/?test#spielen={murmel}"))).await;
        tab.wait_for(
            "window.horstTest && horstTest.state().mode === 'play' && document.activeElement && document.activeElement.tagName === 'CANVAS'",
            "the play stage",
            LONG,
        )
        .await;
        tab.eval("horstTest.tick(40)").await;
        assert_eq!(
            tab.eval("getComputedStyle(document.querySelector('.pad')).display")
                .await,
            "grid"
        );
        let canvas = rect(&tab, "canvas.screen").await;
        assert!(
            inside(canvas, screen),
            "{w}x{h}: the canvas {canvas:?} is not all on screen"
        );
        let n = tab
            .eval("document.querySelectorAll('.pad button').length")
            .await;
        for i in 1..=n.as_u64().unwrap() {
            let b = rect(&tab, &format!(".pad button:nth-child({i})")).await;
            assert!(
                inside(b, screen),
                "{w}x{h}: touch button {i} at {b:?} is off screen"
            );
        }
        // Held sideways, the tiles are as big as upright (2 pixels to a level pixel).
        assert_eq!(tab.eval("horstTest.stage.scale").await, 2, "{w}x{h}");
        // And every control is big enough to tap, held either way (the head takes fewer
        // rows sideways rather than smaller buttons).
        let small = crate::phone_pages::small_controls(&tab).await;
        assert!(small.is_empty(), "{w}x{h}: too small to tap: {small:?}");
        screenshot(&tab, &format!("play-{w}x{h}")).await;

        // The level page too (its title and author above the stage).
        navigate(&tab, &app.url(&format!("/level/{murmel}?test"))).await;
        ready(&tab, "the level page").await;
        for what in [
            "canvas.screen",
            ".pad button:first-child",
            ".pad button:last-child",
        ] {
            let r = rect(&tab, what).await;
            assert!(
                inside(r, screen),
                "{w}x{h}: on the level page {what} at {r:?} is off screen"
            );
        }
        let small = crate::phone_pages::small_controls(&tab).await;
        assert!(
            small.is_empty(),
            "{w}x{h}: on the level page too small to tap: {small:?}"
        );
        screenshot(&tab, &format!("level-page-play-{w}x{h}")).await;
        // Its replay: held sideways, the scrubber and the action are on screen beside the
        // canvas.
        tab.eval("document.querySelector('.mode[aria-pressed=\"false\"]').click()")
            .await;
        tab.wait_for(
            "document.querySelector('#stage').dataset.mode === 'watch'",
            "the level page's replay",
            LONG,
        )
        .await;
        let sideways = if w > h {
            &["canvas.screen", "#watch-scrub", "#watch-action"][..]
        } else {
            &[]
        };
        for what in sideways {
            let r = rect(&tab, what).await;
            assert!(
                inside(r, screen),
                "{w}x{h}: watching on the level page {what} at {r:?} is off screen"
            );
        }
        let small = crate::phone_pages::small_controls(&tab).await;
        assert!(
            small.is_empty(),
            "{w}x{h}: watching on the level page too small to tap: {small:?}"
        );
        screenshot(&tab, &format!("level-page-watch-{w}x{h}")).await;
        navigate(&tab, &app.url(&format!("/?test#spielen={murmel}"))).await;
        tab.wait_for(
            "window.horstTest && horstTest.state().mode === 'play' && document.activeElement && document.activeElement.tagName === 'CANVAS'",
            "the play stage",
            LONG,
        )
        .await;

        // A touch held on "◀" while the focus goes: the key and its look are let go.
        let b = rect(&tab, ".pad button:nth-child(1)").await;
        let (x, y) = ((b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0);
        call(
            &tab,
            "Input.dispatchTouchEvent",
            json!({ "type": "touchStart", "touchPoints": [{ "x": x, "y": y }] }),
        )
        .await;
        assert_eq!(
            tab.eval("[document.querySelector('.pad button').classList.contains('held'), horstTest.stage.keys.held.has('ArrowLeft')]")
                .await,
            json!([true, true])
        );
        tab.eval("document.getElementById('back').focus()").await;
        assert_eq!(
            tab.eval("[document.querySelectorAll('.pad button.held').length, horstTest.stage.keys.held.size]")
                .await,
            json!([0, 0]),
            "{w}x{h}: a touch button still looks held"
        );
        call(
            &tab,
            "Input.dispatchTouchEvent",
            json!({ "type": "touchEnd", "touchPoints": [] }),
        )
        .await;

        // A level two rows high: its win dialog is all there.
        navigate(&tab, &app.url(&format!("/?test#spielen={flat}"))).await;
        tab.wait_for(
            "window.horstTest && horstTest.state().mode === 'play' && document.activeElement && document.activeElement.tagName === 'CANVAS'",
            "the flat level",
            LONG,
        )
        .await;
        let st = hold_right(&tab, 600).await;
        assert_eq!(st["finished"]["status"], 1, "{st}");
        tab.eval("document.querySelector('.screen-wrap').scrollIntoView({ block: 'center' })")
            .await;
        let wrap = rect(&tab, ".screen-wrap").await;
        let dialog = rect(&tab, ".overlay").await;
        assert!(
            inside(dialog, wrap),
            "{w}x{h}: the dialog {dialog:?} is cut off by its frame {wrap:?}"
        );
        assert!(
            inside(dialog, screen),
            "{w}x{h}: the dialog {dialog:?} is off screen"
        );
        screenshot(&tab, &format!("play-flat-won-{w}x{h}")).await;
    }
    // And on a wide screen.
    call(
        &tab,
        "Emulation.setTouchEmulationEnabled",
        json!({ "enabled": false }),
    )
    .await;
    viewport(&tab, 1280, 800).await;
    navigate(&tab, &app.url(&format!("/?test#spielen={flat}"))).await;
    tab.wait_for(
        "window.horstTest && horstTest.state().mode === 'play'",
        "the flat level",
        LONG,
    )
    .await;
    let st = hold_right(&tab, 600).await;
    assert_eq!(st["finished"]["status"], 1, "{st}");
    assert!(inside(
        rect(&tab, ".overlay").await,
        rect(&tab, ".screen-wrap").await
    ));
    // The run is saved as a file: "speichern" ("Replay laden" read as loading one).
    assert_eq!(
        tab.eval("[...document.querySelectorAll('.overlay button, .stage-body .side button')].map(b => b.textContent).filter(t => /Replay/.test(t))")
            .await,
        json!(["Replay speichern", "Replay speichern"])
    );
    screenshot(&tab, "play-flat-won-1280x800").await;
    no_errors(&tab, "a phone upright and sideways");
    browser.close().await;
}

/// The "Bereit" hint and the canvas as `[[left, top, right, bottom] of the hint, of the
/// canvas], whether the hint shows`.
const READY_AND_CANVAS: &str = "(() => { const b = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }; \
  const h = document.getElementById('ready'); \
  return [b(h), b(document.querySelector('canvas.screen')), h.checkVisibility({ visibilityProperty: true })]; })()";

/// Every shipped level and a level two rows high, on the level page, at a phone's size upright
/// and sideways, a tablet's and a laptop's: before the first input the "Bereit" hint is whole on
/// the first screen and covers none of the canvas (over the canvas's bottom edge it hid the
/// ground beside the bird on a phone); watching the replay, the buttons to play and to step
/// and the scrubber are on the first screen with the canvas (a tablet's tall canvas pushed
/// them under its edge).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ready_hint_and_the_replay_controls_leave_the_picture_alone_at_every_size() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let (_, levels) = get(&app, "/api/game/levels").await;
    let mut ids: Vec<String> = levels["items"]
        .as_array()
        .expect("the levels")
        .iter()
        .map(|l| l["revisionId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), horst_levels::BUILTIN.len(), "{levels}");
    let key = app.agent_key("fuchs", 1).await;
    let flat = submit(&app, &key, "flach").await;
    tamper(&app, &flat, "map", FLAT_MAP).await;
    ids.push(flat);
    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    let mut problems = Vec::new();
    for (w, h, touch) in [
        (390u32, 844u32, true),
        (844, 390, true),
        (768, 1024, true),
        (1280, 800, false),
    ] {
        let screen = device(&tab, w, h, touch).await;
        for (n, id) in ids.iter().enumerate() {
            navigate(&tab, &app.url(&format!("/level/{id}?test"))).await;
            tab.wait_for(
                "window.horstTest && horstTest.state().mode === 'play' && horstTest.state().waiting",
                "the level page's stage, waiting for the first input",
                LONG,
            )
            .await;
            tab.eval("scrollTo(0, 0); new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
                .await;
            let at = format!("{w}x{h}, level {}", n + 1);
            let v = tab.eval(READY_AND_CANVAS).await;
            let r = |i: usize| -> [f64; 4] {
                serde_json::from_value(v[i].clone()).unwrap_or_else(|_| panic!("{at}: {v}"))
            };
            let (hint, canvas) = (r(0), r(1));
            if v[2] != json!(true) {
                problems.push(format!("{at}: the hint does not show"));
            }
            if !inside(hint, screen) {
                problems.push(format!("{at}: the hint {hint:?} is not all on the screen"));
            }
            let across = hint[2].min(canvas[2]) - hint[0].max(canvas[0]);
            let down = hint[3].min(canvas[3]) - hint[1].max(canvas[1]);
            if across > 0.5 && down > 0.5 {
                problems.push(format!(
                    "{at}: the hint {hint:?} lies over the canvas {canvas:?}"
                ));
            }
            if n == 0 {
                screenshot(&tab, &format!("level-page-ready-{w}x{h}")).await;
            }
            // The replay, where the level has one.
            let watch = tab
                .eval("(b => b && !b.closest('[hidden]') && (b.click(), true))(document.querySelector('.mode[aria-pressed=\"false\"]'))")
                .await;
            if watch != json!(true) {
                continue;
            }
            tab.wait_for(
                "document.querySelector('#stage').dataset.mode === 'watch'",
                "the level page's replay",
                LONG,
            )
            .await;
            tab.eval("scrollTo(0, 0); new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
                .await;
            for what in [
                "canvas.screen",
                "#watch-play",
                "#watch-step",
                "#watch-scrub",
            ] {
                let r = rect(&tab, what).await;
                if !inside(r, screen) {
                    problems.push(format!(
                        "{at}, watching: {what} at {r:?} is off the first screen"
                    ));
                }
            }
            if n == 0 {
                screenshot(&tab, &format!("level-page-watch-first-screen-{w}x{h}")).await;
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    no_errors(&tab, "the levels at every size");
    browser.close().await;
}

/// The play stage's replay button: whether it is off, its description (the text of the
/// element its `aria-describedby` names, or null) and whether that text is shown.
const REPLAY_BUTTON: &str = "(b => { const d = document.getElementById(b.getAttribute('aria-describedby')); \
  return [b.disabled, d ? d.textContent : null, !!d && d.checkVisibility()]; })\
  ([...document.querySelectorAll('.stage-body .side button')].find(b => /Replay/.test(b.textContent)))";

/// What is wrong with the layout now, for a phone-sized window: visible controls (and the
/// canvas) that leave the screen sideways or lie over one another (the win dialog lies over
/// the canvas by design), and the page's width against the screen's.
const LAYOUT: &str = r#"(() => {
  const els = [...document.querySelectorAll(
    'a[href], button, select, input:not([type=hidden]), textarea, summary, [role=tab], canvas.screen')]
    .filter(e => !e.classList.contains('skip') && e.checkVisibility({ visibilityProperty: true })
      && e.getBoundingClientRect().width > 0);
  const name = e => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''} "${(e.textContent || e.getAttribute('aria-label') || '').trim().slice(0, 24)}"`;
  const off = [], over = [];
  for (const e of els) {
    const r = e.getBoundingClientRect();
    if (r.left < -0.5 || r.right > innerWidth + 0.5) off.push(`${name(e)} ${Math.round(r.left)}..${Math.round(r.right)}`);
  }
  for (let i = 0; i < els.length; i++) for (let j = i + 1; j < els.length; j++) {
    const [a, b] = [els[i], els[j]];
    if (a.contains(b) || b.contains(a)) continue;
    const onCanvas = (x, y) => x.matches('canvas') && y.closest('.overlay');
    if (onCanvas(a, b) || onCanvas(b, a)) continue;
    const p = a.getBoundingClientRect(), q = b.getBoundingClientRect();
    const w = Math.min(p.right, q.right) - Math.max(p.left, q.left);
    const h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
    if (w > 1 && h > 1) over.push(`${name(a)} and ${name(b)}`);
  }
  // A key's name broken over two lines ("Leertaste /" at a line's end, "↑" on the next).
  const split = [...document.querySelectorAll('kbd')].filter(k => k.checkVisibility() && k.getClientRects().length > 1)
    .map(k => k.textContent);
  return { off, over, split, width: document.documentElement.scrollWidth, screen: innerWidth };
})()"#;

async fn layout_problems(tab: &Tab, what: &str) -> Vec<String> {
    tab.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
        .await;
    let m = tab.eval(LAYOUT).await;
    let mut problems = Vec::new();
    if m["width"].as_u64() > m["screen"].as_u64().map(|s| s + 1) {
        problems.push(format!(
            "{what}: the page is {} px wide on a {} px screen",
            m["width"], m["screen"]
        ));
    }
    for o in m["off"].as_array().into_iter().flatten() {
        problems.push(format!("{what}: {o} leaves the screen"));
    }
    for o in m["over"].as_array().into_iter().flatten() {
        problems.push(format!("{what}: {o} overlap"));
    }
    for k in m["split"].as_array().into_iter().flatten() {
        problems.push(format!("{what}: the key {k} is broken over two lines"));
    }
    problems.extend(
        crate::phone_pages::small_controls(tab)
            .await
            .into_iter()
            .map(|s| format!("{what}: {s} is too small to hit")),
    );
    problems
}

/// The game in an upright phone-sized window with a mouse and a keyboard (no touch, so no
/// touch pad: a desktop browser made narrow, or a phone with a mouse): the keyboard's help is
/// shown with no key's name broken over two lines (a narrow help broke "Leertaste / ↑" after
/// the slash, its box in two), the canvas and every control are on screen, none lies over
/// another, and the level is played to the win with the keys, its dialog's buttons on
/// screen; its replay is watched with the watch controls on screen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upright_phone_window_with_a_mouse() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let murmel = promoted_id(&app, "murmeltiere").await;
    let (_, rev) = get(&app, &format!("/api/game/revisions/{murmel}")).await;
    let browser = launch().await;
    let tab = wide_focused_tab(&browser).await;
    let (w, h) = (390u32, 844u32);
    call(
        &tab,
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": w, "height": h, "deviceScaleFactor": 1, "mobile": false }),
    )
    .await;
    let screen = [0.0, 0.0, w as f64, h as f64];
    let mut problems = Vec::new();

    // The levels, then a level's play stage.
    navigate(&tab, &app.url("/?test")).await;
    ready(&tab, "the level list").await;
    assert_eq!(
        tab.eval("matchMedia('(pointer: coarse)').matches").await,
        false,
        "a mouse is the pointer"
    );
    problems.extend(layout_problems(&tab, "the level list").await);
    screenshot(&tab, "mouse-levels-390x844").await;
    navigate(&tab, &app.url(&format!("/?test#spielen={murmel}"))).await;
    tab.wait_for(
        "window.horstTest && horstTest.state().mode === 'play' && document.activeElement && document.activeElement.tagName === 'CANVAS'",
        "the play stage",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("getComputedStyle(document.querySelector('.pad')).display")
            .await,
        "none",
        "no touch pad without touch"
    );
    assert_eq!(
        tab.eval("document.querySelector('.help').checkVisibility()")
            .await,
        true,
        "the keys are explained"
    );
    let canvas = rect(&tab, "canvas.screen").await;
    assert!(
        inside(canvas, screen),
        "the canvas {canvas:?} is not all on screen"
    );
    problems.extend(layout_problems(&tab, "playing").await);
    screenshot(&tab, "mouse-play-390x844").await;

    // Played to the win with the keys: the dialog's buttons are on screen.
    let st = play_with_keys(&tab, &rev["replay"]).await;
    assert_eq!(st["finished"]["status"], 1, "not won: {st}");
    let n = tab
        .eval("document.querySelectorAll('.overlay button').length")
        .await
        .as_u64()
        .unwrap();
    assert!(n >= 2, "the win dialog's buttons");
    for i in 1..=n {
        let b = rect(&tab, &format!(".overlay button:nth-of-type({i})")).await;
        assert!(
            inside(b, screen),
            "the dialog's button {i} at {b:?} is off screen"
        );
    }
    problems.extend(layout_problems(&tab, "the win").await);
    screenshot(&tab, "mouse-won-390x844").await;

    // Its replay, watched with the mouse: the controls are on screen and can be clicked.
    tab.eval("document.querySelector('.overlay') && document.querySelector('.mode:nth-child(2)').click()")
        .await;
    tab.wait_for(
        "horstTest.state().mode === 'watch'",
        "the watch stage",
        LONG,
    )
    .await;
    // Upright they are under the canvas (the page scrolls): on screen sideways.
    for what in [
        "#watch-play",
        "#watch-step",
        "#watch-speed",
        "#watch-scrub",
        "#watch-action",
    ] {
        let r = rect(&tab, what).await;
        assert!(
            r[0] >= -0.5 && r[2] <= w as f64 + 0.5,
            "{what} at {r:?} is off screen"
        );
    }
    tab.eval("horstTest.tick(30)").await;
    problems.extend(layout_problems(&tab, "watching").await);
    screenshot(&tab, "mouse-watch-390x844").await;
    assert!(problems.is_empty(), "{problems:#?}");
    no_errors(&tab, "a phone-sized window with a mouse");
}

/// While the store is down the level list says so and tries again by itself; once the store
/// is back the levels show without a reload. Before, it said "Lade die Seite später neu" and
/// stayed so after the store was back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_level_list_comes_back_by_itself_after_the_store_was_down() {
    if crate::harness::on_cluster() {
        // The test stops its own Redis.
        return;
    }
    crate::wasm_engine::engine_module();
    let (mut app, _worker) = game_app().await;
    app.redis_mut().stop();
    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    call(
        &tab,
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": true }),
    )
    .await;
    navigate(&tab, &app.url("/?test")).await;
    let said = tab
        .wait_for(
            "document.querySelector('#level-list .error')?.textContent",
            "the level list's error",
            LONG,
        )
        .await;
    assert!(
        said.as_str()
            .unwrap_or_default()
            .contains("versucht es alle 5 Sekunden noch einmal"),
        "the level list while the store is down: {said}"
    );
    screenshot(&tab, "levels-store-down-390x844").await;
    // The Labor likewise (it said "nicht zu haben" and stayed so).
    tab.eval("document.getElementById('tab-labor').click()")
        .await;
    let said = tab
        .wait_for(
            "document.querySelector('#labor-list .error')?.textContent",
            "the Labor's error",
            LONG,
        )
        .await;
    assert!(
        said.as_str()
            .unwrap_or_default()
            .contains("versucht es alle 5 Sekunden noch einmal"),
        "the Labor while the store is down: {said}"
    );
    app.redis_mut().restart();
    tab.wait_for(
        "!document.querySelector('#labor-list .error') && document.querySelector('#labor-list li')",
        "the Labor after the store is back, without a reload",
        LONG,
    )
    .await;
    tab.eval("document.getElementById('tab-levels').click()")
        .await;
    tab.wait_for(
        "document.querySelectorAll('#level-list .card').length > 0 && !document.querySelector('#level-list .error') \
         && document.getElementById('continue-button')",
        "the levels after the store is back, without a reload",
        LONG,
    )
    .await;
    screenshot(&tab, "levels-store-back-390x844").await;
}

/// The line under the canvas: its visible text, its height, and the touch pad's top (null
/// without one), the page scrolled to its top.
const CAPTION: &str = r#"(() => {
  scrollTo(0, 0);
  const c = document.getElementById('caption');
  const shown = e => e.checkVisibility({ visibilityProperty: true }) && e.getBoundingClientRect().width > 1;
  const text = [...c.children].filter(shown).map(e => e.textContent.trim()).filter(Boolean).join(' | ');
  const pad = document.querySelector('.pad');
  return { text, height: Math.round(c.getBoundingClientRect().height),
           pad: pad && pad.offsetHeight ? Math.round(pad.getBoundingClientRect().top) : null };
})()"#;

/// A practice run (on from a checkpoint after a death) is marked in the line under the canvas,
/// before its first key and while it runs, and a run from the start is not; the line keeps
/// its height through all of it (a counted run's and a practice run's, waiting and running),
/// so the touch pad under it stays under the thumb. Before, nothing under the canvas told a
/// practice run from a counted one while playing: only the replay button's hint beside the
/// controls said it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_practice_run_is_marked_under_the_canvas_in_a_line_of_the_same_height() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let rast = promoted_id(&app, "rastplatz").await;
    let (_, rev) = get(&app, &format!("/api/game/revisions/{rast}")).await;
    let browser = launch().await;
    let tab = wide_focused_tab(&browser).await;
    let mut problems = Vec::new();
    for (w, h, touch) in [(390u32, 844u32, true), (844, 390, true), (1280, 800, false)] {
        device(&tab, w, h, touch).await;
        navigate(&tab, &app.url(&format!("/?test#spielen={rast}"))).await;
        tab.wait_for(
            "window.horstTest && horstTest.state().mode === 'play' && document.activeElement && document.activeElement.tagName === 'CANVAS'",
            "the play stage",
            LONG,
        )
        .await;
        let counted_ready = tab.eval(CAPTION).await;
        let st = play_with_keys_until(&tab, &rev["replay"], |s| s["checkpoint"] == 0).await;
        assert_eq!(st["checkpoint"], 0, "{w}x{h}: {st}");
        let counted_running = tab.eval(CAPTION).await;
        let st = hold_right(&tab, 1200).await;
        assert_eq!(st["finished"]["status"], 2, "{w}x{h}: {st}");
        let clicked = tab
            .eval("(() => { const b = [...document.querySelectorAll('.overlay button')].find(b => b.textContent === 'Ab Rastplatz'); if (!b) return false; b.click(); return true; })()")
            .await;
        assert_eq!(
            clicked, true,
            "{w}x{h}: no \"Ab Rastplatz\" after the death"
        );
        let practice_ready = tab.eval(CAPTION).await;
        screenshot(&tab, &format!("practice-ready-{w}x{h}")).await;
        let st = tab.eval("horstTest.tick(10)").await;
        assert!(
            st["finished"].is_null(),
            "{w}x{h}: the practice run ended: {st}"
        );
        let practice_running = tab.eval(CAPTION).await;
        screenshot(&tab, &format!("practice-running-{w}x{h}")).await;
        assert_eq!(
            tab.eval("horstTest.state().practice").await,
            true,
            "{w}x{h}"
        );
        let states = [
            ("a counted run, ready", &counted_ready, false),
            ("a counted run, running", &counted_running, false),
            ("practice, ready", &practice_ready, true),
            ("practice, running", &practice_running, true),
        ];
        for (what, v, practice) in states {
            let text = v["text"].as_str().unwrap_or_default();
            if text.contains("Übung") != practice {
                problems.push(format!(
                    "{w}x{h}, {what}: the line under the canvas says {text:?}"
                ));
            }
            if v["height"] != counted_ready["height"] || v["pad"] != counted_ready["pad"] {
                problems.push(format!(
                    "{w}x{h}, {what}: the line is {} px high, the pad at {} (a counted run before its first key: {} px, the pad at {}): {text:?}",
                    v["height"], v["pad"], counted_ready["height"], counted_ready["pad"]
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    no_errors(&tab, "practice runs");
    browser.close().await;
}
