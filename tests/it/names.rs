//! Untrusted names (a map's `name:` line, RCADIA `asName`, game titles, token names and
//! display names) lose control, invisible and direction-changing characters where horst
//! accepts them, as board text does; and every page shows them in `<bdi>`, wrapped, so a
//! name can neither read backwards ("ohne Ende lefpiG") nor push a phone's layout sideways.

use std::time::Duration;

use serde_json::{json, Value};

use crate::browser::{launch, Tab};
use crate::game_api::{game_app, get};
use crate::harness::ok_result;
use crate::rcadia_common::{cast, two_player, Client, AGENT, BRIDGE};

const LONG: Duration = Duration::from_secs(60);

/// What must never survive: bidi overrides, embeddings, isolates and marks, zero-width
/// characters, controls.
fn hostile(c: char) -> bool {
    matches!(c as u32,
        0x200B..=0x200F | 0x202A..=0x202E | 0x2066..=0x2069 | 0x061C | 0xFEFF | 0x00AD)
        || c.is_control()
}

fn assert_clean(what: &str, text: &str) {
    assert!(
        !text.chars().any(hostile),
        "{what} kept a hidden or direction-changing character: {:?}",
        text.escape_unicode().to_string()
    );
}

/// A player name that reads backwards with the override, and wraps nowhere (no spaces).
const RTL_NAME: &str = "ohne Ende\u{202E}Gipfel\u{2066}\u{200B}";
const LONG_NAME: &str = "Dohlenschwarmkoeniginvomgrossenfelsenundvomkleinenfelsenzugleich";

/// A Labor revision of the first shipped map whose `name:` line is `title`.
async fn submit_titled(
    app: &crate::harness::TestApp,
    key: &str,
    name: &str,
    title: &str,
) -> String {
    let map = crate::harness::LEVEL_MAP.replace("name: Erste Schritte", &format!("name: {title}"));
    let replay: Value = serde_json::from_str(crate::harness::LEVEL_REPLAY).unwrap();
    let sub = ok_result(
        &app.call(
            "submit_level",
            json!({"name": name, "map": map, "replay": replay, "idempotencyKey": format!("k-{name}")}),
            Some(key),
        )
        .await,
    );
    sub["revisionId"].as_str().unwrap().to_string()
}

/// A table whose game title and second player's name carry hostile characters; the first
/// player's name is long and has no space. Returns the session id and its host.
async fn hostile_table(app: &crate::harness::TestApp) -> (String, Client) {
    let (host, agents) = cast(app, 2).await;
    let (st, v) = host
        .post(
            BRIDGE,
            json!({ "config": two_player(json!({})), "gameId": "chess",
                    "gameTitle": "Sch\u{202E}ach\u{200F}" }),
        )
        .await;
    assert_eq!(st, 201, "{v}");
    let id = v["sessionId"].as_str().unwrap().to_string();
    for (agent, name) in agents.iter().zip([LONG_NAME, RTL_NAME]) {
        let (st, v) = agent
            .post(&format!("{AGENT}/{id}/join"), json!({ "asName": name }))
            .await;
        assert_eq!(st, 200, "{v}");
    }
    (id, host)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrusted_names_lose_hidden_and_direction_changing_characters() {
    let (app, _worker) = game_app().await;
    let key = app.agent_key("fuchs", 1).await;

    // A map's title: the Labor card, the revision and the level list all read it cleaned.
    let id = submit_titled(&app, &key, "umgedreht", "Ohne \u{202E}Ende\u{2069}\u{200B}").await;
    let (_, labor) = get(&app, "/api/game/labor").await;
    let card = labor["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["revisionId"] == id.as_str())
        .unwrap_or_else(|| panic!("{id} not in {labor}"));
    assert_eq!(card["title"], "Ohne Ende");
    let (_, rev) = get(&app, &format!("/api/game/revisions/{id}")).await;
    assert_eq!(rev["title"], "Ohne Ende");
    // The map text itself stays as the agent wrote it: its hash is the evidence's.
    assert!(rev["map"].as_str().unwrap().contains('\u{202E}'));

    // An RCADIA token's name (the default asName, shown on the admin page).
    let (_, agent) = app
        .auth
        .create_token(&["play".to_string()], Some("Fi\u{202E}sh\u{2067}"))
        .await
        .unwrap();
    let tokens = app.auth.list_tokens().await.unwrap();
    let token = serde_json::to_value(&tokens).unwrap();
    let mine = token
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["agent"] == agent.as_str())
        .unwrap();
    assert_eq!(mine["name"], "Fish");
    // A name of nothing but hidden characters is no name.
    assert!(app
        .auth
        .create_token(&["play".to_string()], Some("\u{202E}\u{200B}"))
        .await
        .is_err());

    // A table's game title and its players' names, as spectators read them.
    let (session, _host) = hostile_table(&app).await;
    let watcher = Client {
        base: format!("http://{}", app.addr),
        token: String::new(),
        http: reqwest::Client::new(),
    };
    let (st, view) = watcher.get(&format!("{AGENT}/{session}/public")).await;
    assert_eq!(st, 200, "{view}");
    assert_eq!(view["gameTitle"], "Schach", "{view}");
    let names: Vec<&str> = view["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["asName"].as_str().unwrap())
        .collect();
    assert_eq!(names, [LONG_NAME, "ohne EndeGipfel"], "{view}");
    for n in names {
        assert_clean("asName", n);
    }
    let (_, available) = watcher.get(&format!("{AGENT}/available?all=1")).await;
    assert_clean("the tables list", &available.to_string());
}

/// `document.documentElement.scrollWidth` after layout: wider than the viewport means the
/// page scrolls sideways.
async fn page_width(tab: &Tab) -> u64 {
    tab.eval(
        "new Promise(r => requestAnimationFrame(() => r(document.documentElement.scrollWidth)))",
    )
    .await
    .as_u64()
    .unwrap()
}

/// Elements that lay out wider than their own box (text that runs out of its column, e.g.
/// a long name without a space in a line that does not wrap), as `tag.class: text`.
/// Scroll containers and the chess board's own squares are left out.
async fn overflowing(tab: &Tab) -> Value {
    tab.eval(
        r#"new Promise(r => requestAnimationFrame(() => r([...document.querySelectorAll('body *')]
            .filter(e => {
              const s = getComputedStyle(e);
              return e.clientWidth > 0 && s.display !== 'inline' && s.overflowX === 'visible'
                && e.scrollWidth > e.clientWidth + 1;
            })
            .map(e => `${e.tagName.toLowerCase()}.${e.className}: ${e.textContent.slice(0, 80)}`))))"#,
    )
    .await
}

/// A fresh document at `path` (through about:blank, so no check reads the page before).
async fn go(tab: &Tab, url: &str) {
    tab.goto("about:blank").await;
    tab.wait_for("location.href === 'about:blank'", "a blank page", LONG)
        .await;
    tab.goto(url).await;
}

async fn phone(tab: &Tab) {
    tab.viewport(390, 844).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_show_names_in_bdi_and_long_names_wrap() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let key = app.agent_key("dohle", 1).await;
    horst_identity::accounts::set_account_field(&app.store, "dohle", "displayName", LONG_NAME)
        .await
        .unwrap();
    let long_title: String = LONG_NAME.chars().take(60).collect();
    let id = submit_titled(&app, &key, "langername", &long_title).await;
    let (session, host) = hostile_table(&app).await;
    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    phone(&tab).await;

    // The Labor: title and author in <bdi>, nothing wider than the phone.
    go(&tab, &app.url("/?test")).await;
    tab.wait_for("document.body.dataset.ready === '1'", "the game page", LONG)
        .await;
    tab.eval("document.getElementById('tab-labor').click()")
        .await;
    tab.wait_for(
        &format!("document.querySelector('[data-revision=\"{id}\"] .card-title bdi')"),
        "the Labor card's title in <bdi>",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval(&format!(
            "document.querySelector('[data-revision=\"{id}\"] .card-title bdi').textContent"
        ))
        .await,
        json!(long_title)
    );
    assert_eq!(
        tab.eval(&format!(
            "[...document.querySelectorAll('[data-revision=\"{id}\"] bdi')].some(b => b.textContent === '{LONG_NAME}')"
        ))
        .await,
        json!(true),
        "the author's display name is not in <bdi>"
    );
    let w = page_width(&tab).await;
    assert!(w <= 390, "the Labor is {w} px wide on a 390 px phone");
    assert_eq!(
        overflowing(&tab).await,
        json!([]),
        "text runs out of its box on the Labor"
    );
    tab.screenshot("names", "labor-390x844").await;

    // The level page: the title in <bdi>.
    go(&tab, &app.url(&format!("/level/{id}?test"))).await;
    tab.wait_for(
        "document.body.dataset.ready === '1'",
        "the level page",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("document.querySelector('#level-title bdi').textContent")
            .await,
        json!(long_title)
    );
    let w = page_width(&tab).await;
    assert!(w <= 390, "the level page is {w} px wide on a 390 px phone");
    assert_eq!(
        overflowing(&tab).await,
        json!([]),
        "text runs out of its box on the level page"
    );

    // The watch page: players and the title in <bdi>; a long name wraps.
    go(&tab, &app.url(&format!("/watch/{session}"))).await;
    tab.wait_for(
        "document.querySelectorAll('#players bdi').length === 2",
        "the players in <bdi>",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("document.querySelector('#title bdi').textContent")
            .await,
        "Schach"
    );
    let w = page_width(&tab).await;
    assert!(w <= 390, "the watch page is {w} px wide on a 390 px phone");
    tab.screenshot("names", "watch-390x844").await;

    // A chess position whose last move is the long-named player's: the "Last move" line
    // beside the board wraps the name at both sizes instead of running out of its column.
    let (_, view) = get(&app, &format!("{AGENT}/{session}/public")).await;
    let players = view["players"].as_array().cloned().unwrap_or_default();
    let (long, other): (Vec<Value>, Vec<Value>) =
        players.into_iter().partition(|p| p["asName"] == LONG_NAME);
    let (long_id, rtl_id, rtl_name) = match (&long[..], &other[..]) {
        ([l], [o]) => (
            l["playerId"].as_str().unwrap().to_string(),
            o["playerId"].as_str().unwrap().to_string(),
            o["asName"].as_str().unwrap().to_string(),
        ),
        _ => panic!("the two players in {view}"),
    };
    host.ops(
        &session,
        json!([{ "op": "state", "state": {
            "game": "chess", "fen": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "turn": "black", "history": ["e4"], "white": long_id, "black": rtl_id,
            "lastMove": { "by": long_id, "san": "e4", "uci": "e2e4" } } }]),
    )
    .await;
    for (width, height) in [(1280, 800), (390, 844)] {
        tab.viewport(width, height).await;
        go(&tab, &app.url(&format!("/watch/{session}"))).await;
        tab.wait_for(
            &format!("[...document.querySelectorAll('#stage p')].some(p => p.textContent.startsWith('Last move: {LONG_NAME}'))"),
            "the last move by the long-named player",
            LONG,
        )
        .await;
        // Beside the board, every name is in its own <bdi> (a right-to-left name cannot
        // reorder "Black:" or "played e4" around it).
        assert_eq!(
            tab.eval("[...document.querySelectorAll('#stage p')].filter(p => /^(White|Black|Last move):/.test(p.textContent)).map(p => [...p.querySelectorAll('bdi')].map(b => b.textContent))")
                .await,
            json!([[rtl_name.as_str()], [LONG_NAME], [LONG_NAME]]),
            "the names beside the chess board at {width}x{height}"
        );
        let out = overflowing(&tab).await;
        tab.screenshot("names", &format!("watch-chess-{width}x{height}"))
            .await;
        assert_eq!(
            out,
            json!([]),
            "text runs out of its box on the watch page at {width}x{height}"
        );
    }

    // The tables list: the game title in <bdi>.
    go(&tab, &app.url("/tables/")).await;
    tab.wait_for(
        &format!("document.querySelector('[data-session=\"{session}\"] bdi')"),
        "the table's title in <bdi>",
        LONG,
    )
    .await;
    let w = page_width(&tab).await;
    assert!(w <= 390, "the tables list is {w} px wide on a 390 px phone");
    assert_eq!(
        overflowing(&tab).await,
        json!([]),
        "text runs out of its box on the tables list"
    );
    let errors = tab.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "console errors {errors:#?}");
}

/// Right-to-left names and messages, emoji ZWJ sequences and text that looks like HTML, as
/// agents and people may write them.
const ARABIC: &str = "قمة الجبل العالية للطيور السوداء";
const HEBREW: &str = "פסגת ההר של הציפורים השחורות";
const EMOJI: &str = "👩🏽‍🚀👨‍👩‍👧‍👦🏳️‍🌈🐦‍⬛🧗🏾‍♀️👩🏽‍🚀👨‍👩‍👧‍👦🏳️‍🌈🐦‍⬛🧗🏾‍♀️";
const HTML: &str = "<i id=\"injected\">kursiv</i> &amp; <b>fett</b>";

/// The sizes every page is looked at: a desktop, a phone upright and held sideways (touch).
const SIZES: [(&str, u32, u32, bool); 3] = [
    ("desktop", 1440, 900, false),
    ("phone", 390, 844, true),
    ("sideways", 844, 390, true),
];

/// What is wrong on the page as it is drawn now: wider than the screen, text that runs out
/// of its box or is cut off without an ellipsis, text that looks like HTML turned into
/// elements, right-to-left text outside a `<bdi>` or an element with `dir` (it reads in the
/// wrong direction, its punctuation on the wrong side).
const INSPECT: &str = r#"new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => {
  const problems = [];
  const what = (e) => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${typeof e.className === 'string' && e.className ? '.' + e.className.trim().replace(/\s+/g, '.') : ''} "${(e.textContent || '').trim().slice(0, 50)}"`;
  if (document.documentElement.scrollWidth > innerWidth + 1)
    problems.push(`the page is ${document.documentElement.scrollWidth} px wide on a ${innerWidth} px screen`);
  for (const e of document.querySelectorAll('body *')) {
    if (e.clientWidth === 0 || !e.checkVisibility()) continue;
    const s = getComputedStyle(e);
    if (e.closest('.sr-only, svg, canvas, select, .board')) continue;
    if (e.scrollWidth <= e.clientWidth + 1) continue;
    if (s.display !== 'inline' && s.overflowX === 'visible') problems.push(`runs out of its box: ${what(e)}`);
    else if (['hidden', 'clip'].includes(s.overflowX) && s.textOverflow !== 'ellipsis' && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
      problems.push(`cut off: ${what(e)}`);
  }
  if (document.getElementById('injected')) problems.push('text that looks like HTML became elements');
  // An empty list says so in words, not as a table of headings and no rows.
  for (const t of document.querySelectorAll('table'))
    if (t.checkVisibility() && t.tBodies.length && ![...t.tBodies].some(b => b.rows.length))
      problems.push(`an empty table: ${what(t)}`);
  const rtl = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/;
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode, p = n.parentElement;
    if (!rtl.test(n.textContent) || !p || !p.checkVisibility()) continue;
    let isolated = false;
    // An inline element isolated by its style counts (the agent guide's code); a block
    // does not (the browser isolates every div and p), it needs its own direction.
    for (let a = p; a && a !== document.body && !isolated; a = a.parentElement) {
      const s = getComputedStyle(a);
      isolated = a.matches('bdi, [dir], script, style, textarea, option') || s.unicodeBidi === 'plaintext'
        || (s.display.startsWith('inline') && ['isolate', 'isolate-override'].includes(s.unicodeBidi));
    }
    if (isolated) continue;
    problems.push(`right-to-left text outside <bdi> or dir: ${what(p)}`);
  }
  // A heading that is one right-to-left title and nothing else starts at its right edge, as
  // it reads (an Arabic card title sat at the left edge of its card, inline in a left-to-right
  // heading).
  for (const h of document.querySelectorAll('h1, h2, h3')) {
    const b = h.querySelector(':scope > bdi');
    if (!b || !h.checkVisibility() || h.closest('.sr-only') || h.textContent !== b.textContent) continue;
    if (getComputedStyle(b).direction !== 'rtl') continue;
    const range = document.createRange(); range.selectNodeContents(b);
    const right = Math.max(...[...range.getClientRects()].map(x => x.right));
    const s = getComputedStyle(h);
    const edge = h.getBoundingClientRect().right - parseFloat(s.paddingRight) - parseFloat(s.borderRightWidth);
    if (edge - right > 2) problems.push(`a right-to-left title starts ${Math.round(edge - right)} px left of its heading's right edge: ${what(h)}`);
  }
  // A board post's lines start where they read from: a right-to-left line at its post's
  // right edge, as a title does, and a left-to-right line under it at the left edge (the
  // post's one 40em box stood at the left, the Arabic line ending mid-post; moved to the
  // right, it took the German lines along to the middle).
  for (const b of document.querySelectorAll('.post-body > *, .post-body:not(:has(*))')) {
    if (!b.checkVisibility() || !b.textContent.trim()) continue;
    const post = b.closest('.post'), s = getComputedStyle(post), box = post.getBoundingClientRect();
    const range = document.createRange(); range.selectNodeContents(b);
    const rects = [...range.getClientRects()].filter(x => x.width > 0);
    const top = Math.min(...rects.map(x => x.top)), first = rects.filter(x => x.top < top + 2);
    if (getComputedStyle(b).direction === 'rtl') {
      const gap = box.right - parseFloat(s.paddingRight) - parseFloat(s.borderRightWidth) - Math.max(...first.map(x => x.right));
      if (gap > 2) problems.push(`a right-to-left line of a post starts ${Math.round(gap)} px left of its post's right edge: ${what(b)}`);
    } else {
      const gap = Math.min(...first.map(x => x.left)) - box.left - parseFloat(s.paddingLeft) - parseFloat(s.borderLeftWidth);
      if (gap > 2) problems.push(`a left-to-right line of a post starts ${Math.round(gap)} px right of its post's left edge: ${what(b)}`);
    }
  }
  // An empty list's words stand under its heading (an agent's "No recent games on record"
  // stood 2.5rem below "Recent games", as if a table were missing between them).
  for (const e of document.querySelectorAll(':is(h2, h3) + .empty')) {
    if (!e.checkVisibility()) continue;
    const range = document.createRange(); range.selectNodeContents(e);
    const gap = range.getBoundingClientRect().top - e.previousElementSibling.getBoundingClientRect().bottom;
    if (gap > 16) problems.push(`an empty list's words stand ${Math.round(gap)} px under their heading: ${what(e)}`);
  }
  // Figures beside long names stay on one line: a leaderboard's rating, games and thinking
  // time, the table list's round and age.
  for (const e of document.querySelectorAll('#list td:is([data-label=Rating], [data-label=Games], [data-label^=Thinking], [data-label=Round], [data-label=Opened])')) {
    const range = document.createRange(); range.selectNodeContents(e);
    const lines = new Set([...range.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size;
    if (lines > 1 && !e.querySelector('bdi')) problems.push(`on ${lines} lines: ${what(e)}`);
  }
  r([...new Set(problems)]);
})))"#;

/// Every player and spectator page with hostile data (60-character names without a space,
/// Arabic and Hebrew names and messages, emoji ZWJ sequences, text that looks like HTML,
/// empty and long lists) at a desktop and a phone upright and sideways: nothing is wider
/// than the screen, no text runs out of its box or is cut, HTML-looking text stays text,
/// right-to-left text reads right to left, and on a phone every control is big enough to
/// tap. Screenshots go to `target/screenshots/hostile/` (look at them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_with_hostile_data_at_desktop_and_phone_sizes() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let long_title: String = LONG_NAME.chars().take(60).collect();

    // The Labor: levels titled and written by hostile names.
    let mut labor = Vec::new();
    for (account, display, title) in [
        ("dohle", LONG_NAME, long_title.as_str()),
        ("qamar", ARABIC, ARABIC),
        ("emoji", EMOJI, EMOJI),
        ("html", HTML, HTML),
        ("ivri", HEBREW, HEBREW),
    ] {
        let key = app.agent_key(account, 1).await;
        horst_identity::accounts::set_account_field(&app.store, account, "displayName", display)
            .await
            .unwrap();
        labor.push((key.clone(), submit_titled(&app, &key, account, title).await));
    }
    let arabic_level = labor[1].1.clone();

    // The board: a long list of threads, and hostile threads with hostile replies on top.
    let mut threads = Vec::new();
    for i in 0..30 {
        let w = horst_gateway::board::write_post(
            &app.store,
            horst_gateway::board::Writer::Operator("horst"),
            None,
            Some(horst_gateway::board::NewThread {
                kind: "idea",
                title: format!("Faden {i} {ARABIC}"),
                level: None,
                revision_id: None,
            }),
            "kurz",
        )
        .await
        .unwrap();
        threads.push(w.thread_id);
    }
    for (i, (key, _)) in labor.iter().enumerate() {
        let title = [long_title.as_str(), ARABIC, EMOJI, HTML, HEBREW][i];
        let body = format!("{ARABIC}\n{HTML}\n{LONG_NAME}{LONG_NAME}\n{EMOJI}");
        let t = ok_result(
            &app.call(
                "write_post",
                json!({"kind": "idea", "title": title, "body": body}),
                Some(key),
            )
            .await,
        );
        let id = t["threadId"].as_str().unwrap().to_string();
        ok_result(
            &app.call(
                "write_post",
                json!({"threadId": id, "body": format!("{HEBREW} {HTML}")}),
                Some(&labor[(i + 1) % labor.len()].0),
            )
            .await,
        );
        threads.push(id);
    }
    for id in &threads {
        horst_gateway::board::set_published(&app.store, id, true)
            .await
            .unwrap();
    }

    // RCADIA: tables with hostile game titles and players, and a leaderboard of 101 agents
    // with hostile names.
    let mut tables = Vec::new();
    for (title, names) in [
        (long_title.as_str(), [LONG_NAME, ARABIC]),
        (ARABIC, [HEBREW, EMOJI]),
        (HTML, [HTML, LONG_NAME]),
        (EMOJI, [EMOJI, ARABIC]),
    ] {
        let (host, agents) = cast(&app, 2).await;
        let (st, v) = host
            .post(
                BRIDGE,
                json!({ "config": two_player(json!({})), "gameId": "chess", "gameTitle": title }),
            )
            .await;
        assert_eq!(st, 201, "{v}");
        let id = v["sessionId"].as_str().unwrap().to_string();
        for (agent, name) in agents.iter().zip(names) {
            let (st, v) = agent
                .post(&format!("{AGENT}/{id}/join"), json!({ "asName": name }))
                .await;
            assert_eq!(st, 200, "{v}");
        }
        tables.push((id, host));
    }
    // The tables' hosts keep polling while the pages are looked at (20 pages at 3 sizes):
    // a table whose host is silent for 90 s closes, and on a loaded machine the walk to the
    // tables page can take longer than that.
    let hosts: Vec<_> = tables
        .iter()
        .map(|(id, host)| host.keep_polling(id))
        .collect();
    let now = app.rcadia.now_ms().await.unwrap();
    let mut pipe = redis::pipe();
    for i in 0..101u32 {
        let name = [LONG_NAME, ARABIC, EMOJI, HTML, HEBREW][i as usize % 5];
        crate::rcadia_common::seed_rating(
            &mut pipe,
            &app,
            ("chess", &format!("agt_hostile{i:03}"), name),
            1500.0 + f64::from(i),
            now,
        );
    }
    let _: () = pipe.query_async(&mut app.store.conn()).await.unwrap();

    // A person with agent keys whose labels are hostile.
    app.person("olga", "gipfelstuermer 2026").await;
    horst_identity::accounts::set_account_field(&app.store, "olga", "displayName", ARABIC)
        .await
        .unwrap();
    for label in [LONG_NAME, ARABIC, EMOJI, HTML, HEBREW] {
        // As long as a label may be (40 characters).
        let label: String = label.chars().take(40).collect();
        horst_identity::accounts::create_key(&app.store, "olga", Some(&label))
            .await
            .unwrap_or_else(|e| panic!("a key labelled {label}: {e}"));
    }

    let browser = launch().await;
    let mut problems = Vec::new();
    for (size, width, height, touch) in SIZES {
        let tab = Tab::open(&browser, "about:blank").await;
        tab.device(width, height, touch).await;
        let ready = "document.body && document.body.dataset.ready === '1'";
        let loaded = "document.readyState === 'complete' && document.querySelector('main') \
            && !/Loading/.test(document.querySelector('main').textContent)";
        let first_table = &tables[0].0;
        // A page: its name, address, what shows it is drawn, and what to do there then (and
        // what shows that is done).
        type Act = Option<(&'static str, &'static str)>;
        let pages: Vec<(&str, String, String, Act)> = vec![
            ("levels", "/?test".into(), format!("{ready} && document.querySelector('#level-list .card')"), None),
            (
                "labor",
                "/?test".into(),
                ready.into(),
                Some((
                    "document.getElementById('tab-labor').click()",
                    "document.querySelectorAll('#labor-list .card').length >= 5",
                )),
            ),
            ("level", format!("/level/{arabic_level}?test"), ready.into(), None),
            ("level-long", format!("/level/{}?test", labor[0].1), ready.into(), None),
            (
                "play",
                format!("/?test#spielen={}", labor[3].1),
                "window.horstTest && horstTest.state().mode === 'play'".into(),
                None,
            ),
            (
                "watch-level",
                format!("/level/{}?test&m=watch", labor[2].1),
                format!("{ready} && document.getElementById('watch-scrub')"),
                None,
            ),
            ("level-missing", "/level/rev-gibt-es-nicht?test".into(), ready.into(), None),
            (
                "board",
                "/board.html".into(),
                format!("{ready} && document.querySelector('.thread')"),
                Some((
                    "[...document.querySelectorAll('.thread > button')].slice(0, 5).forEach(b => b.click())",
                    "document.querySelectorAll('.thread-posts[data-loaded]').length === 5",
                )),
            ),
            ("signin", "/account/".into(), "!document.getElementById('signed-out').hidden".into(), None),
            ("tables", "/tables/".into(), format!("document.querySelector('[data-session=\"{first_table}\"]')"), None),
            (
                "watch",
                format!("/watch/{}", tables[1].0),
                "document.querySelectorAll('#players li').length === 2".into(),
                None,
            ),
            (
                "watch-long",
                format!("/watch/{first_table}"),
                "document.querySelectorAll('#players li').length === 2".into(),
                None,
            ),
            ("house", "/house/".into(), loaded.into(), None),
            ("bridge", "/bridge/".into(), loaded.into(), None),
            ("leaderboards", "/leaderboard/".into(), ready.into(), None),
            ("leaderboard", "/leaderboard/chess".into(), format!("{ready} && document.querySelector('#list tbody tr')"), None),
            ("agent", "/leaderboard/chess/agt_hostile001".into(), ready.into(), None),
            ("agent-long", "/leaderboard/chess/agt_hostile100".into(), ready.into(), None),
            ("agents-guide", "/agents.html".into(), "document.querySelector('h1')".into(), None),
            ("not-found", "/gibt-es-nicht".into(), "document.readyState === 'complete'".into(), None),
        ];
        for (name, path, wait, act) in &pages {
            go(&tab, &app.url(path)).await;
            tab.wait_for(wait, &format!("the {name} page at {size}"), LONG)
                .await;
            if let Some((act, done)) = act {
                tab.eval(act).await;
                tab.wait_for(done, &format!("{act} on the {name} page"), LONG)
                    .await;
            }
            look(
                &tab,
                &format!("{name}-{width}x{height}"),
                touch,
                &mut problems,
            )
            .await;
        }
        // Signed in, with agent keys labelled by hostile names.
        let signed_in = tab.eval(
            "fetch('/api/account/sign-in', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'olga', password: 'gipfelstuermer 2026' }) }).then(r => r.status)",
        )
        .await;
        assert!(
            signed_in.as_u64().is_some_and(|s| s < 300),
            "the sign-in: {signed_in}"
        );
        go(&tab, &app.url("/account/")).await;
        tab.wait_for(
            "!document.getElementById('signed-in').hidden && document.querySelectorAll('#key-rows tr').length === 5",
            "the account page, signed in, with its keys",
            LONG,
        )
        .await;
        tab.eval(
            "document.querySelector('#key-rows tr:last-child').scrollIntoView({ block: 'end' })",
        )
        .await;
        look(
            &tab,
            &format!("account-{width}x{height}"),
            touch,
            &mut problems,
        )
        .await;
        // Signed out again: the next size's sign-in page is the signed-out one (the tabs
        // share their cookies).
        tab.browser
            .call(Some(&tab.session), "Network.clearBrowserCookies", json!({}))
            .await
            .expect("clear the cookies");
        // The pages of things that are not there were answered 404, as they should.
        let errors: Vec<String> = tab
            .errors
            .lock()
            .unwrap()
            .iter()
            .filter(|e| !e.contains("404 (Not Found)"))
            .cloned()
            .collect();
        if !errors.is_empty() {
            problems.push(format!("console errors at {size}: {errors:?}"));
        }
        tab.close().await;
    }
    for host in hosts {
        host.abort();
    }
    assert!(
        problems.is_empty(),
        "with hostile data:\n{}",
        problems.join("\n")
    );
}

/// Inspects the page (INSPECT, and on a touch screen the controls too small to tap) and
/// saves its screenshot as `hostile/<shot>.png`.
async fn look(tab: &Tab, shot: &str, touch: bool, problems: &mut Vec<String>) {
    let found = tab.eval(INSPECT).await;
    let mut here: Vec<String> = found
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| format!("{shot}: {}", p.as_str().unwrap_or_default()))
        .collect();
    if touch {
        for s in crate::phone_pages::small_controls(tab).await {
            here.push(format!("{shot}: {s} is smaller than 44 px to tap"));
        }
    }
    // Said as they are found, so a later page that times out does not hide them.
    for p in &here {
        eprintln!("{p}");
    }
    problems.extend(here);
    tab.screenshot("hostile", shot).await;
}
