//! Accessibility of every page people open, checked with axe-core (from npm, installed into
//! web/node_modules by ops/web-setup) inside headless Chromium at 1280x800 and 390x844: no
//! finding of impact "serious" or "critical" against WCAG 2 A/AA (contrast, names of
//! buttons, links and fields, landmarks, ARIA use). The script is evaluated over DevTools,
//! so the pages' Content-Security-Policy stays as it is.

use std::time::Duration;

use serde_json::Value;

use crate::browser::{launch, Tab};
use crate::game_api::{game_app, get};
use crate::house_e2e::House;
use crate::rcadia_common::{cast, two_player, Client, AGENT};
use crate::rcadia_pages::{play, rps_match};

const LONG: Duration = Duration::from_secs(60);
const PASSWORD: &str = "Steinbock-42-Gipfel";

fn axe_source() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/web/node_modules/axe-core/axe.min.js"
    );
    std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!("{path}: {e} (axe-core comes from npm: ./ops/web-setup web, which ./ops/test runs)")
    })
}

/// axe's serious and critical findings on the page as it is now, one line each.
async fn findings(tab: &Tab, axe: &str) -> Vec<String> {
    if tab.eval("typeof window.axe").await != "object" {
        tab.eval(axe).await;
    }
    let v = tab
        .eval(
            "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] })\
             .then(r => r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')\
             .map(v => `${v.id} (${v.impact}): ${v.help}: ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | ')}`))",
        )
        .await;
    match v {
        Value::Array(items) => items
            .into_iter()
            .map(|i| i.as_str().unwrap_or_default().to_string())
            .collect(),
        other => panic!("axe did not run: {other}"),
    }
}

/// A new two-seat table with one player, "Fish"; its session id. (Its host never polls, so
/// after a while it ends as host_disconnected.)
async fn seated_table(app: &crate::harness::TestApp) -> String {
    let (host, agents) = cast(app, 1).await;
    let session = host.create(two_player(serde_json::json!({}))).await;
    let (st, _) = agents[0]
        .post(
            &format!("{AGENT}/{session}/join"),
            serde_json::json!({"asName": "Fish"}),
        )
        .await;
    assert_eq!(st, 200);
    session
}

async fn ready(tab: &Tab, expr: &str, what: &str) {
    tab.wait_for(expr, what, LONG).await;
    // Let the last fetches render.
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// Opens each page `(path, ready expression, what)` in turn (from a blank page, so a ready
/// flag is the new page's) and collects axe's findings, each naming the page and the size.
async fn each_page(
    tab: &Tab,
    axe: &str,
    app: &crate::harness::TestApp,
    pages: &[(String, String, &str)],
    (w, h): (u32, u32),
) -> Vec<String> {
    let mut all = Vec::new();
    for (path, expr, what) in pages {
        tab.goto("about:blank").await;
        tab.wait_for("location.href === 'about:blank'", "a blank page", LONG)
            .await;
        tab.goto(&app.url(path)).await;
        ready(tab, expr, what).await;
        for f in findings(tab, axe).await {
            all.push(format!("{path} at {w}x{h}: {f}"));
        }
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_has_no_serious_accessibility_findings() {
    crate::wasm_engine::engine_module();
    let axe = axe_source();
    let (app, _worker) = game_app().await;
    let key = app.agent_key("fuchs", 1).await;
    let labor = crate::game_api::submit(&app, &key, "fuchsbau").await;
    let (_, levels) = get(&app, "/api/game/levels").await;
    let first = levels["items"][0]["revisionId"]
        .as_str()
        .unwrap()
        .to_string();
    app.person("olga", PASSWORD).await;
    horst_identity::people::set_operator(&app.store, "olga", true)
        .await
        .unwrap();
    horst_identity::people::set_sign_up(&app.store, true)
        .await
        .unwrap();
    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    let game_ready = "document.body && document.body.dataset.ready === '1'";
    // The seated table's host never polls, so it ends after a while: a fresh one per size.
    let pages = |session: &str| -> Vec<(String, String, &str)> {
        vec![
            // First, while the table is fresh.
            (
                "/tables/".into(),
                format!("document.querySelector('[data-session=\"{session}\"]')"),
                "the tables list",
            ),
            (
                format!("/watch/{session}"),
                "document.querySelectorAll('#players li').length > 0".into(),
                "the watch page",
            ),
            ("/".into(), game_ready.into(), "the game page"),
            (
                format!("/?test#spielen={first}"),
                "window.horstTest && horstTest.state().mode === 'play'".into(),
                "the play stage",
            ),
            (
                format!("/level/{labor}"),
                game_ready.into(),
                "the level page",
            ),
            (
                "/level/no-such-level".into(),
                game_ready.into(),
                "a level that is not there",
            ),
            ("/board.html".into(), game_ready.into(), "the board"),
            (
                "/account/".into(),
                "!document.getElementById('signed-out').hidden".into(),
                "the account sign-in",
            ),
            (
                "/agents.html".into(),
                // Its stylesheet applied (a file under the page's CSP, no inline style).
                "document.querySelector('h1') && getComputedStyle(document.body).backgroundColor === 'rgb(238, 243, 248)'".into(),
                "the agent guide, styled",
            ),
            (
                "/admin/".into(),
                "!document.getElementById('signed-out').hidden".into(),
                "the admin sign-in",
            ),
            (
                "/bridge/".into(),
                "document.readyState === 'complete'".into(),
                "the bridge",
            ),
        ]
    };
    let mut all = Vec::new();
    for (w, h) in [(1280, 800), (390, 844)] {
        tab.viewport(w, h).await;
        let session = seated_table(&app).await;
        all.extend(each_page(&tab, &axe, &app, &pages(&session), (w, h)).await);
    }

    // Signed in: the account page with its keys, and the operator's sections.
    tab.viewport(1280, 800).await;
    tab.goto(&app.url("/account/")).await;
    ready(
        &tab,
        "!document.getElementById('signed-out').hidden",
        "the account sign-in",
    )
    .await;
    tab.eval(&format!(
        "document.getElementById('signin-name').value = 'olga'; \
         document.getElementById('signin-password').value = '{PASSWORD}'; \
         document.getElementById('signin-form').requestSubmit()"
    ))
    .await;
    ready(
        &tab,
        "!document.getElementById('signed-in').hidden",
        "the signed-in account page",
    )
    .await;
    tab.eval("document.getElementById('key-form').requestSubmit()")
        .await;
    ready(
        &tab,
        "!document.getElementById('new-key').hidden",
        "the new key",
    )
    .await;
    for f in findings(&tab, &axe).await {
        all.push(format!("/account/ signed in: {f}"));
    }
    // The account's session may open /admin for an operator at once; else sign in there.
    tab.goto("about:blank").await;
    tab.wait_for("location.href === 'about:blank'", "a blank page", LONG)
        .await;
    tab.goto(&app.url("/admin/")).await;
    ready(
        &tab,
        "document.getElementById('signed-out') && (!document.getElementById('signed-out').hidden || !document.getElementById('signed-in').hidden)",
        "the admin page",
    )
    .await;
    if tab
        .eval("document.getElementById('signed-in').hidden")
        .await
        == true
    {
        tab.eval(&format!(
            "document.getElementById('acc-name').value = 'olga'; \
             document.getElementById('acc-password').value = '{PASSWORD}'; \
             document.getElementById('account-form').requestSubmit()"
        ))
        .await;
    }
    ready(
        &tab,
        "document.body.dataset.section === 'overview'",
        "the admin overview",
    )
    .await;
    // A fresh table for the live tables section (the first one may have ended by now).
    let session = seated_table(&app).await;
    for section in [
        "overview",
        "jobs",
        "messages",
        "levels",
        "accounts",
        "board",
        "switches",
        "quotas",
        "credentials",
        "audit",
        "tables",
    ] {
        tab.eval(&format!("location.hash = '#{section}'")).await;
        ready(
            &tab,
            &format!("document.body.dataset.section === '{section}' && !document.getElementById('view').textContent.includes('Loading…')"),
            section,
        )
        .await;
        for f in findings(&tab, &axe).await {
            all.push(format!("/admin/#{section}: {f}"));
        }
    }
    // The live tables section names the players (the last section opened).
    assert_eq!(
        tab.eval(&format!(
            "(document.querySelector('tr[data-session=\"{session}\"] bdi.name') || {{}}).textContent"
        ))
        .await,
        "Fish",
        "{}",
        tab.eval("document.getElementById('view').textContent").await
    );
    tab.screenshot("admin", "live-tables-1280x800").await;
    // Ending a table (issue 31): the button asks in place, with a reason; confirmed, the
    // table is over and leaves the list of live ones.
    let row = format!("document.querySelector('tr[data-session=\"{session}\"]')");
    tab.eval(&format!("{row}.querySelector('button[data-end]').click()"))
        .await;
    ready(
        &tab,
        &format!("!!{row}.querySelector('.confirm input')"),
        "the end-table question",
    )
    .await;
    tab.eval(&format!(
        "{row}.querySelector('.confirm input').value = 'Testende'"
    ))
    .await;
    // With the question open, its session id and seat count are each still on one line
    // (they broke into "ses_f14f943d441" / "2" and "1 of" / "2" at 1280 px).
    assert_eq!(
        tab.eval(&format!(
            "(tr => [tr.querySelector('code.id'), tr.children[3]].map(e => {{ const r = document.createRange(); r.selectNodeContents(e); \
             return new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size; }}))\
             (document.querySelector('tr[data-session=\"{session}\"]'))"
        ))
        .await,
        serde_json::json!([1, 1]),
        "lines of the live table's session id and seat count"
    );
    tab.screenshot("admin", "end-table-ask-1280x800").await;
    tab.eval(&format!(
        "{row}.querySelector('[data-confirm=\"yes\"]').click()"
    ))
    .await;
    ready(
        &tab,
        &format!("!{row} && document.getElementById('notice').textContent.includes('ended')"),
        "the ended table gone from the list",
    )
    .await;
    assert!(
        all.is_empty(),
        "serious accessibility findings:\n{}",
        all.join("\n")
    );
}

/// The RCADIA and arena pages with games on them (issue 31): the house games' own pages, a
/// live chess board and a finished rock-paper-scissors match (its replay controls) on the
/// watch page, the leaderboards and an agent's page with a rated match, the house pages and
/// the pages for addresses that hold nothing, at both sizes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rcadia_pages_with_games_have_no_serious_accessibility_findings() {
    let axe = axe_source();
    let house = House::start(&["chess", "rps"], "", |_| {}).await;
    let rps = house.open_table("rps").await;
    let (rocky, edward) = (house.agent("Rocky").await, house.agent("Edward").await);
    rocky.join(&rps).await;
    edward.join(&rps).await;
    rps_match(
        &house,
        &rocky,
        &edward,
        &rps,
        &[("rock", "scissors"), ("paper", "rock")],
    )
    .await;
    let chess = house.open_table("chess").await;
    let (white, black) = (house.agent("Fish").await, house.agent("Crab").await);
    white.join(&chess).await;
    black.join(&chess).await;
    play(&white, &black, &chess, &["e2e4", "e7e5"]).await;
    // The match at a house table between two agents is rated.
    let anon = Client {
        base: format!("http://{}", house.app.addr),
        token: String::new(),
        http: reqwest::Client::new(),
    };
    let deadline = tokio::time::Instant::now() + LONG;
    let agent = loop {
        let (_, v) = anon.get("/api/v1/leaderboard/rps").await;
        if let Some(a) = v["provisional"]
            .as_array()
            .filter(|s| s.len() == 2)
            .and_then(|s| s[0]["agent"].as_str())
        {
            break a.to_string();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the rps match never rated: {v}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };

    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    let ready_flag = "document.body.dataset.ready === '1'";
    let pages: Vec<(String, String, &str)> = vec![
        (
            "/tables/".into(),
            format!("document.querySelector('tr[data-session=\"{chess}\"]')"),
            "the tables list with a game",
        ),
        (
            "/house/".into(),
            format!("document.querySelector('tr[data-session=\"{chess}\"]')"),
            "the house page",
        ),
        (
            "/house/table.html".into(),
            "!document.getElementById('about').hidden".into(),
            "the house table page opened by hand",
        ),
        (
            "/games/chess/".into(),
            "document.querySelectorAll('#board .sq').length === 64".into(),
            "the chess page",
        ),
        (
            "/games/rps/".into(),
            "document.getElementById('status').textContent !== ''".into(),
            "the rps page",
        ),
        (
            format!("/watch/{chess}"),
            "document.querySelectorAll('#board .sq').length === 64".into(),
            "a live chess game",
        ),
        (
            format!("/watch/{rps}"),
            "document.body.dataset.replay === '1'".into(),
            "a finished match's replay",
        ),
        (
            "/leaderboard/".into(),
            ready_flag.into(),
            "the leaderboards",
        ),
        (
            "/leaderboard/rps".into(),
            ready_flag.into(),
            "the rps leaderboard",
        ),
        (
            format!("/leaderboard/rps/{agent}"),
            format!("{ready_flag} && document.querySelector('a[href=\"/watch/{rps}\"]')"),
            "an agent's page",
        ),
        (
            "/no/such/page".into(),
            "document.querySelector('h1')".into(),
            "the page for unknown addresses",
        ),
        (
            "/games/nope/".into(),
            "document.querySelector('h1')".into(),
            "the page for an unknown game",
        ),
    ];
    let mut all = Vec::new();
    for (w, h) in [(1280, 800), (390, 844)] {
        tab.viewport(w, h).await;
        all.extend(each_page(&tab, &axe, &house.app, &pages, (w, h)).await);
    }
    tab.close().await;
    browser.close().await;
    house.stop().await;
    assert!(
        all.is_empty(),
        "serious accessibility findings:\n{}",
        all.join("\n")
    );
}
