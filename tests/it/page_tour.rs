//! Every page a player, an agent's owner and an operator use, at a phone's size upright and
//! held sideways (390x844, 844x390, touch), a tablet's without touch (768x1024) and a
//! laptop's (1280x800), in the states that matter: the levels, the Labor with a level of a
//! long unbroken title, a level waiting for its first key and running, its end, its replay,
//! the level page and a missing one, the board with a long post, /account signed out and
//! with a key, /admin signed out, its overview and its job view with a running job, the
//! table list and a live table with long names, a finished game's replay, and the 404 page.
//! Each is a screenshot for a person to look at (`target/screenshots/tour/`); the test checks
//! what a look found wrong and can be measured: nothing wider than the screen; on a screen a
//! finger may use (1024 px wide or less, touch reported or not) no control smaller than 44 px
//! to tap (at 768x1024 without touch the pages' buttons and links were 19-42 px, a replay's
//! moves 24 px); and the line under a level's canvas says "Bereit" once before the first key
//! and the time while the run runs (it stood empty, and the side said "Bereit" again), in
//! one line that keeps the touch pad where it was.

use std::time::Duration;

use horst_queue::JobKind;
use serde_json::{json, Value};

use crate::browser::{launch, Tab};
use crate::game_api::{game_app, get};
use crate::harness::{ok_result, TestApp, LEVEL_MAP};
use crate::job_control::admit;
use crate::phone_pages::small_controls;
use crate::rcadia_common::{cast, max_seq, two_player, AGENT, BRIDGE};

const LONG: Duration = Duration::from_secs(60);
const SHOTS: &str = "tour";
const PASSWORD: &str = "Steinbock-42-Gipfel";
/// A name without a space, as an agent may choose one: it has to wrap or be cut.
const LONG_NAME: &str = "Gipfelstürmerin_aus_dem_Hochgebirge_der_Alpen";

/// (width, height, touch).
const SIZES: [(u32, u32, bool); 4] = [
    (390, 844, true),
    (844, 390, true),
    (768, 1024, false),
    (1280, 800, false),
];

async fn screen(tab: &Tab, (w, h, touch): (u32, u32, bool)) {
    tab.device(w, h, touch).await;
}

/// On the play stage: the text shown in the line under the canvas (inside its frame), how
/// many shown elements of the stage say "Bereit", and the touch pad's top (null without one).
const UNDER_THE_CANVAS: &str = r#"(() => {
  const wrap = document.querySelector('.screen-wrap'), below = wrap.querySelector('canvas.screen').getBoundingClientRect().bottom;
  const shown = e => e.checkVisibility({ visibilityProperty: true }) && e.getBoundingClientRect().width > 1;
  const own = e => [...e.childNodes].filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent).join('').trim();
  const line = [...wrap.querySelectorAll('*')].filter(e => shown(e) && own(e) && e.getBoundingClientRect().top >= below - 1)
    .map(own).join(' ');
  const bereit = [...document.querySelectorAll('.stage-body *')].filter(e => shown(e) && /Bereit/.test(own(e))).length;
  const pad = document.querySelector('.pad');
  return { line, bereit, pad: pad && pad.offsetHeight ? Math.round(pad.getBoundingClientRect().top) : null };
})()"#;

/// On a replay: the words of the step controls' bar that are shown and whole on the screen.
const STEP_IN_THE_BAR: &str = r#"(() => {
  const on = e => { const r = e.getBoundingClientRect(); return e.checkVisibility({ visibilityProperty: true }) && r.width > 1 && r.top >= 0 && r.bottom <= innerHeight; };
  return [...document.querySelectorAll('#r-controls *')].filter(on).map(e => e.textContent.trim()).filter(Boolean).join(' | ');
})()"#;

/// Where a table's rows are cards (admin.css, up to 900 px): the rows' headings that do not
/// take their card's width (a job's id stood indented over a rule a third of the card wide).
const ROW_HEADINGS_ASIDE: &str = r#"[...document.querySelectorAll('.table-wrap th[scope=row]')].filter(th => {
  if (!th.checkVisibility()) return false;
  const tr = th.closest('tr'), s = getComputedStyle(tr), r = tr.getBoundingClientRect(), h = th.getBoundingClientRect();
  const inner = r.width - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight) - parseFloat(s.borderLeftWidth) - parseFloat(s.borderRightWidth);
  return Math.abs(h.width - inner) > 2;
}).map(th => `${th.textContent.trim().slice(0, 30)} ${Math.round(th.getBoundingClientRect().width)} px`)"#;

/// No table scrolls sideways; up to 900 px wide (rows as cards), every row heading as wide as
/// its card (at 768x1024 the job list scrolled in its box, "Cancel job" over its State).
async fn tables_fit(
    tab: &Tab,
    name: &str,
    (w, h, _): (u32, u32, bool),
    problems: &mut Vec<String>,
) {
    let sideways = tab
        .eval("[...document.querySelectorAll('.table-wrap')].filter(t => t.checkVisibility() && t.scrollWidth > t.clientWidth + 1).map(t => `${t.clientWidth} px showing ${t.scrollWidth}`)")
        .await;
    if sideways != json!([]) {
        problems.push(format!(
            "{name} at {w}x{h}: a table scrolls sideways: {sideways}"
        ));
    }
    if w > 900 {
        return;
    }
    let aside = tab.eval(ROW_HEADINGS_ASIDE).await;
    if aside != json!([]) {
        problems.push(format!(
            "{name} at {w}x{h}: row headings narrower than their card: {aside}"
        ));
    }
}

fn text_of(v: &Value) -> &str {
    v["line"].as_str().unwrap_or_default()
}

async fn go(tab: &Tab, url: &str) {
    tab.goto("about:blank").await;
    tab.wait_for("location.href === 'about:blank'", "a blank page", LONG)
        .await;
    tab.goto(url).await;
}

/// The page as it is now: a screenshot, and what is wrong with it at this size.
async fn look(tab: &Tab, name: &str, (w, h, _): (u32, u32, bool), problems: &mut Vec<String>) {
    // Let the last fetches render.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let wide = tab
        .eval("[document.documentElement.scrollWidth, window.innerWidth]")
        .await;
    if wide[0].as_u64() > wide[1].as_u64().map(|s| s + 1) {
        problems.push(format!(
            "{name} at {w}x{h}: the page is {} px wide on a {} px screen",
            wide[0], wide[1]
        ));
    }
    if w < 1024 {
        for s in small_controls(tab).await {
            problems.push(format!("{name} at {w}x{h}: {s} is smaller than 44 px"));
        }
    }
    tab.screenshot(SHOTS, &format!("{name}-{w}x{h}")).await;
}

/// A finished two-player game between agents of long names (three moves, a winner): its id.
async fn finished_game(app: &TestApp) -> String {
    let (host, agents) = cast(app, 2).await;
    let (st, v) = host
        .post(
            BRIDGE,
            json!({ "config": two_player(json!({ "gameType": "counting" })),
                    "gameId": "counting", "gameTitle": "Count to three" }),
        )
        .await;
    assert_eq!(st, 201, "{v}");
    let id = v["sessionId"].as_str().unwrap().to_string();
    let mut pids = Vec::new();
    for (a, name) in agents.iter().zip([LONG_NAME, "Bo"]) {
        let (st, v) = a
            .post(&format!("{AGENT}/{id}/join"), json!({ "asName": name }))
            .await;
        assert_eq!(st, 200, "{v}");
        pids.push(v["playerId"].as_str().unwrap().to_string());
    }
    let mut after = 0;
    for _ in 0..20 {
        let p = host.pending(&id, after, 5.0).await;
        after = max_seq(&p, after);
        if crate::rcadia_common::entries(&p)
            .iter()
            .any(|e| e["event"] == "game_start")
        {
            break;
        }
    }
    host.ops(
        &id,
        json!([{ "op": "state", "state": { "count": 0 } },
               { "op": "legal_actions", "playerId": pids[0], "actions": ["count"] }]),
    )
    .await;
    for i in 0..3 {
        let me = &agents[i % 2];
        let s = me.state(&id, 5.0).await;
        let (st, v) = me
            .act(&id, json!("count"), s["turn"].as_u64().unwrap())
            .await;
        assert_eq!(st, 200, "{v}");
        after = max_seq(&host.pending(&id, after, 5.0).await, after);
        if i < 2 {
            host.ops(
                &id,
                json!([{ "op": "state", "state": { "count": i + 1 } },
                       { "op": "legal_actions", "playerId": pids[(i + 1) % 2], "actions": ["count"] }]),
            )
            .await;
        }
    }
    host.ops(
        &id,
        json!([{ "op": "state", "state": { "count": 3 } },
               { "op": "end", "result": { "winner": pids[0], "reason": "counted to three" } }]),
    )
    .await;
    id
}

/// A live table with one seated player of a long name: its id (a fresh one per size: its
/// host never polls, so it ends after a while).
async fn live_table(app: &TestApp) -> String {
    let (host, agents) = cast(app, 1).await;
    let id = host.create(two_player(json!({}))).await;
    let (st, v) = agents[0]
        .post(
            &format!("{AGENT}/{id}/join"),
            json!({ "asName": LONG_NAME }),
        )
        .await;
    assert_eq!(st, 200, "{v}");
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_people_use_at_four_sizes() {
    crate::wasm_engine::engine_module();
    let (app, worker) = game_app().await;
    // A Labor level of a long unbroken title, by an agent.
    let key = app.agent_key("fuchs", 1).await;
    let title = "Gipfelsturm".repeat(5);
    let map = LEVEL_MAP.replace("name: Erste Schritte", &format!("name: {title}"));
    let replay: Value = serde_json::from_str(crate::harness::LEVEL_REPLAY).unwrap();
    let labor = ok_result(
        &app.call(
            "submit_level",
            json!({"name": "gipfelsturm-am-langen-grat", "map": map, "replay": replay,
                   "idempotencyKey": "k-tour"}),
            Some(&key),
        )
        .await,
    )["revisionId"]
        .as_str()
        .unwrap()
        .to_string();
    // A published idea with a long title and a long post.
    let post = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": format!("{} am Grat", "Gipfelsturm".repeat(8)),
                   "body": format!("{}\n{}", "Gipfelsturm".repeat(10), "Eis und Schnee ".repeat(30))}),
            Some(&key),
        )
        .await,
    );
    horst_operator::publish_thread(&app.store, "test", post["threadId"].as_str().unwrap(), true)
        .await
        .unwrap();
    let (_, levels) = get(&app, "/api/game/levels").await;
    let first = levels["items"][0]["revisionId"]
        .as_str()
        .unwrap()
        .to_string();
    app.person("olga", PASSWORD).await;
    horst_identity::people::set_operator(&app.store, "olga", true)
        .await
        .unwrap();
    let finished = finished_game(&app).await;
    // A running job: the worker stopped, a job admitted and claimed as a worker would.
    let _ = worker.send(true);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let job = admit(&app, JobKind::Playtest, "fuchs", LEVEL_MAP.into()).await;
    let job_id = job.clone();
    let claim = app
        .queue
        .claim("tour-worker")
        .await
        .unwrap()
        .expect("the job claimed");
    assert_eq!(claim.record.id, job);
    // Its lease kept and its progress written, as a worker's search does.
    let queue = app.queue.clone();
    let running = tokio::spawn(async move {
        for n in 1u64.. {
            let progress = horst_queue::JobProgress {
                elapsed_seconds: n as f64,
                states_explored: 25_000 * n,
                best_distance: Some(12),
                stage: 1,
                peak_memory_mib: Some(48),
            };
            let _ = queue.heartbeat(&job_id, claim.token).await;
            let _ = queue.report_progress(&job_id, claim.token, &progress).await;
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });

    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    let mut problems = Vec::new();
    let game_ready = "document.body && document.body.dataset.ready === '1'";
    for size in SIZES {
        screen(&tab, size).await;
        let (w, h, _) = size;
        let p = &mut problems;

        // The game: the levels, the Labor.
        go(&tab, &app.url("/?test")).await;
        tab.wait_for(
            &format!("{game_ready} && document.querySelector('#level-list .card button')"),
            "the levels",
            LONG,
        )
        .await;
        look(&tab, "levels", size, p).await;
        tab.eval("document.getElementById('tab-labor').click()")
            .await;
        tab.wait_for(
            "document.querySelector('#labor-list .card')",
            "the Labor",
            LONG,
        )
        .await;
        look(&tab, "labor", size, p).await;

        // A level: waiting for the first key, running, at its end.
        go(&tab, &app.url(&format!("/?test#spielen={first}"))).await;
        tab.wait_for(
            "window.horstTest && horstTest.state().mode === 'play'",
            "the play stage",
            LONG,
        )
        .await;
        look(&tab, "play-ready", size, p).await;
        let ready = tab.eval(UNDER_THE_CANVAS).await;
        if ready["bereit"] != json!(1)
            || !text_of(&ready).contains("die Zeit läuft ab deiner ersten Taste")
        {
            p.push(format!(
                "play-ready at {w}x{h}: \"Bereit\" shown {} times, the line under the canvas: {}",
                ready["bereit"], ready["line"]
            ));
        }
        tab.eval("horstTest.tick(90)").await;
        look(&tab, "play-running", size, p).await;
        let running = tab.eval(UNDER_THE_CANVAS).await;
        if !text_of(&running).starts_with("Zeit 1,50 s") {
            p.push(format!(
                "play-running at {w}x{h}: the line under the canvas says {}",
                running["line"]
            ));
        }
        // The pad under the thumb stays where it was when the run starts.
        if running["pad"] != ready["pad"] {
            p.push(format!(
                "play at {w}x{h}: the pad moved from {} to {} as the run started",
                ready["pad"], running["pad"]
            ));
        }
        // Nothing held: the time runs out.
        tab.eval("horstTest.tick(40000).finished").await;
        tab.wait_for(
            "!document.querySelector('.overlay').hidden",
            "the end of the run",
            LONG,
        )
        .await;
        look(&tab, "play-time-up", size, p).await;
        go(&tab, &app.url(&format!("/?test#zuschauen={first}"))).await;
        tab.wait_for(
            &format!("{game_ready} && document.getElementById('watch-scrub')"),
            "the watch view",
            LONG,
        )
        .await;
        tab.eval("horstTest.tick(120)").await;
        look(&tab, "watch", size, p).await;
        go(&tab, &app.url(&format!("/level/{labor}?test"))).await;
        tab.wait_for(game_ready, "the level page", LONG).await;
        look(&tab, "level-page", size, p).await;
        // The details and the legend under them end at the same edge (at 1280 px the details
        // stopped at 60em, 270 px short of the legend's).
        let edges = tab
            .eval("[document.getElementById('level-details'), document.querySelector('#level details.legend')].map(e => e && Math.round(e.getBoundingClientRect().right))")
            .await;
        if edges[0] != edges[1] {
            p.push(format!(
                "level-page at {w}x{h}: the details and the legend end at {edges} (one edge)"
            ));
        }
        go(&tab, &app.url("/level/rev-gibt-es-nicht?test")).await;
        tab.wait_for(
            &format!("{game_ready} && !document.getElementById('message').hidden"),
            "a missing level",
            LONG,
        )
        .await;
        look(&tab, "level-missing", size, p).await;

        // The board, a thread open.
        go(&tab, &app.url("/board.html")).await;
        tab.wait_for(
            &format!("{game_ready} && document.querySelector('.thread button')"),
            "the board",
            LONG,
        )
        .await;
        tab.eval("document.querySelector('.thread button').click()")
            .await;
        tab.wait_for("document.querySelector('.post-body')", "the posts", LONG)
            .await;
        look(&tab, "board", size, p).await;
        // A post's lines stay short enough to read (at 1280 px one ran about 160 characters).
        let line = tab
            .eval("Math.max(...[...document.querySelectorAll('.post-body > *, .post-body:not(:has(*))')].map(b => Math.round(b.getBoundingClientRect().width / parseFloat(getComputedStyle(b).fontSize))))")
            .await;
        if line.as_i64().is_none_or(|ems| ems > 41) {
            p.push(format!(
                "board at {w}x{h}: a post's lines are {line} em wide (more than 41, about 80 characters)"
            ));
        }

        // /admin and /account signed out, then /account signed in with a new key, and
        // /admin as the operator it is.
        go(&tab, &app.url("/admin/")).await;
        tab.wait_for(
            "!document.getElementById('signed-out').hidden",
            "the admin sign-in",
            LONG,
        )
        .await;
        look(&tab, "admin-signed-out", size, p).await;
        go(&tab, &app.url("/account/")).await;
        tab.wait_for(
            "!document.getElementById('signed-out').hidden",
            "the account sign-in",
            LONG,
        )
        .await;
        look(&tab, "account-signed-out", size, p).await;
        tab.eval(&format!(
            "document.getElementById('signin-name').value = 'olga'; \
             document.getElementById('signin-password').value = '{PASSWORD}'; \
             document.getElementById('signin-form').requestSubmit()"
        ))
        .await;
        tab.wait_for(
            "!document.getElementById('signed-in').hidden",
            "the signed-in account page",
            LONG,
        )
        .await;
        let label: String = LONG_NAME.chars().take(40).collect();
        tab.eval(&format!(
            "document.getElementById('key-label').value = {label:?}; \
             document.getElementById('key-form').requestSubmit()"
        ))
        .await;
        tab.wait_for(
            "!document.getElementById('new-key').hidden",
            "the new key",
            LONG,
        )
        .await;
        look(&tab, "account-key", size, p).await;
        // The account's session opens /admin for an operator; else the account's sign-in.
        go(&tab, &app.url("/admin/")).await;
        tab.wait_for(
            "document.body.dataset.section === 'overview' || !document.getElementById('signed-out').hidden",
            "the admin page",
            LONG,
        )
        .await;
        if tab.eval("document.body.dataset.section").await != json!("overview") {
            tab.eval(&format!(
                "document.getElementById('acc-name').value = 'olga'; \
                 document.getElementById('acc-password').value = '{PASSWORD}'; \
                 document.getElementById('account-form').requestSubmit()"
            ))
            .await;
        }
        tab.wait_for(
            "document.body.dataset.section === 'overview' && !document.getElementById('view').textContent.includes('Loading…')",
            "the admin overview",
            LONG,
        )
        .await;
        look(&tab, "admin-overview", size, p).await;
        tables_fit(&tab, "admin-overview", size, p).await;
        tab.eval("location.hash = '#jobs'").await;
        tab.wait_for(
            &format!("document.body.dataset.section === 'jobs' && document.getElementById('view').textContent.includes('{job}')"),
            "the job view with the running job",
            LONG,
        )
        .await;
        look(&tab, "admin-jobs", size, p).await;
        tables_fit(&tab, "admin-jobs", size, p).await;
        // On a laptop the filters and their "Show" are one line (it stood alone under them).
        if w >= 1280 {
            let show = tab
                .eval("(() => { const f = document.querySelector('form.filters'); return [f.querySelector('button[type=submit]'), f.elements.job].map(e => Math.round(e.getBoundingClientRect().top)); })()")
                .await;
            if show[0].as_i64() > show[1].as_i64().map(|t| t + 20) {
                p.push(format!(
                    "admin-jobs at {w}x{h}: \"Show\" under the filters (its top, the job id field's: {show})"
                ));
            }
        }
        tab.eval(&format!("location.hash = '#jobs?job={job}'"))
            .await;
        tab.wait_for(
            &format!("location.hash.includes('job=') && document.getElementById('view').textContent.includes('{job}') && !document.getElementById('view').textContent.includes('Loading…')"),
            "the running job",
            LONG,
        )
        .await;
        look(&tab, "admin-job", size, p).await;
        tables_fit(&tab, "admin-job", size, p).await;
        // The id stands in the Job id field and in its row; the line above the row said it
        // again ("Job job_….").
        let said = tab
            .eval(&format!(
                "document.getElementById('view').textContent.split('{job}').length - 1"
            ))
            .await;
        if said != json!(1) {
            p.push(format!(
                "admin-job at {w}x{h}: the job id is said {said} times on the page (once, in its row)"
            ));
        }
        // Signed out again for the next size.
        tab.browser
            .call(Some(&tab.session), "Network.clearBrowserCookies", json!({}))
            .await
            .expect("clear cookies");

        // RCADIA: the table list and a live table, a finished game's replay, the 404 page.
        let live = live_table(&app).await;
        go(&tab, &app.url("/tables/")).await;
        tab.wait_for(
            &format!("document.querySelector('[data-session=\"{live}\"]')"),
            "the live table in the list",
            LONG,
        )
        .await;
        look(&tab, "tables", size, p).await;
        go(&tab, &app.url(&format!("/watch/{live}"))).await;
        tab.wait_for(
            "document.querySelectorAll('#players li').length > 0",
            "the live table",
            LONG,
        )
        .await;
        look(&tab, "watch-live", size, p).await;
        go(&tab, &app.url(&format!("/watch/{finished}"))).await;
        tab.wait_for(
            "document.body.dataset.replay === '1'",
            "the finished game's replay",
            LONG,
        )
        .await;
        look(&tab, "replay", size, p).await;
        // Stepping back on a narrow screen, the bar at its bottom edge says what the step is
        // (it said "3/4"; the step's words stood in the panel under the game, off the screen).
        if w <= 860 {
            tab.eval("document.getElementById('r-prev').click()").await;
            let bar = tab.eval(STEP_IN_THE_BAR).await;
            if !bar.as_str().unwrap_or_default().contains("Bo played count") {
                p.push(format!(
                    "replay at {w}x{h}: one step back, the bar on the screen says {bar}"
                ));
            }
            look(&tab, "replay-step-back", size, p).await;
        }
        go(&tab, &app.url("/no-such-page")).await;
        tab.wait_for("document.readyState === 'complete'", "the 404 page", LONG)
            .await;
        look(&tab, "not-found", size, p).await;
    }
    running.abort();
    assert!(
        problems.is_empty(),
        "seen on the tour:\n{}",
        problems.join("\n")
    );
    tab.close().await;
    browser.close().await;
}
