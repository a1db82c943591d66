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
