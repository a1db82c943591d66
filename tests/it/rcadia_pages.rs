//! The RCADIA pages for people, in headless Chromium against a real house host and real
//! agents: the table list (`/tables/`), the house page (`/house/`), the spectator page
//! (`/watch/<id>`) with its chess board, and the bridge page with its status panel and
//! platform events beside the game (1280x800) or below it (390x844), and a bad game URL.
//! Screenshots go to `target/screenshots/rcadia/` for review; they are not committed.

use std::time::Duration;

use serde_json::{json, Value};

use crate::bridge_e2e::{host_from_tab, PASSWORD};
use crate::browser::{launch, Tab};
use crate::house_e2e::{can_act, state_until, House};
use crate::rcadia_common::{Client, AGENT};

const LONG: Duration = Duration::from_secs(60);
const SHOTS: &str = "rcadia";
const SIZES: [(u32, u32); 2] = [(1280, 800), (390, 844)];

/// Plays `moves` (UCI) alternately, white first, through the agent API.
pub(crate) async fn play(white: &Client, black: &Client, table: &str, moves: &[&str]) {
    for (i, m) in moves.iter().enumerate() {
        let c = if i % 2 == 0 { white } else { black };
        let s = state_until(c, table, "our turn", can_act).await;
        let (st, v) = c
            .post(
                &format!("{AGENT}/{table}/action?wait=10"),
                json!({ "action": m, "turn": s["turn"] }),
            )
            .await;
        assert_eq!(
            (st, v["outcome"].as_str()),
            (200, Some("applied")),
            "{m}: {v}"
        );
    }
}

/// A rock-paper-scissors match through the agent API: each pair of `throws` is one throw of
/// `a` and one of `b`, in that order, each accepted before the next.
pub(crate) async fn rps_match(
    house: &House,
    a: &Client,
    b: &Client,
    table: &str,
    throws: &[(&str, &str)],
) {
    for (ta, tb) in throws {
        for (c, throw) in [(a, ta), (b, tb)] {
            let s = state_until(c, table, "a throw", can_act).await;
            let (st, v) = c
                .post(
                    &format!("{AGENT}/{table}/action?wait=10"),
                    json!({ "action": throw, "turn": s["turn"] }),
                )
                .await;
            // The first throw of a pair waits for the other ("pending").
            if !(st == 200 && matches!(v["outcome"].as_str(), Some("applied" | "pending"))) {
                panic!(
                    "{throw} on turn {}: {st} {v}\nthe state before it: {s}\n{}",
                    s["turn"],
                    house.game_report(table).await
                );
            }
        }
    }
}

/// The page's whole visible text.
async fn text(tab: &Tab) -> String {
    tab.eval("document.body.innerText")
        .await
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// `getBoundingClientRect()` of the first element matching `selector`, as
/// `[left, top, right, bottom]`.
async fn rect(tab: &Tab, selector: &str) -> [f64; 4] {
    let v = tab
        .eval(&format!(
            "(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }})()"
        ))
        .await;
    let a: Vec<f64> = v
        .as_array()
        .unwrap_or_else(|| panic!("no {selector}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    [a[0], a[1], a[2], a[3]]
}

/// The page does not scroll sideways at this size (nothing wider than the screen).
async fn fits_the_width(tab: &Tab, what: &str) {
    let v = tab
        .eval("document.documentElement.scrollWidth <= window.innerWidth + 1")
        .await;
    assert_eq!(v, json!(true), "{what} is wider than the screen");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_house_and_watch_pages_show_a_live_house_game() {
    let house = House::start(&["chess", "rps"], "", |_| {}).await;
    let table = house.open_table("chess").await;
    let (white, black) = (house.agent("Fish").await, house.agent("Crab").await);
    white.join(&table).await;
    black.join(&table).await;
    play(
        &white,
        &black,
        &table,
        &["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"],
    )
    .await;
    let second = house.open_table("chess").await;
    let base = format!("http://{}", house.app.addr);
    let browser = launch().await;

    // The table list: both tables, the running one with a watch link.
    let tab = Tab::open(&browser, &format!("{base}/tables/")).await;
    for (w, h) in SIZES {
        tab.viewport(w, h).await;
        tab.goto(&format!("{base}/tables/")).await;
        tab.wait_for(
            &format!("document.querySelector('tr[data-session={table:?}] a.watch') && document.querySelector('tr[data-session={second:?}]')"),
            "both house tables in the list",
            LONG,
        )
        .await;
        fits_the_width(&tab, "the table list").await;
        tab.screenshot(SHOTS, &format!("tables-{w}x{h}")).await;
    }
    let page = text(&tab).await;
    assert!(
        page.contains("playing") && page.contains("open: join now"),
        "{page}"
    );
    assert!(page.contains("RCADIA house"), "{page}");

    // The house page lists the house's tables the same way.
    tab.goto(&format!("{base}/house/")).await;
    tab.wait_for(
        &format!("document.querySelector('tr[data-session={table:?}]')"),
        "the house page's tables",
        LONG,
    )
    .await;
    for (w, h) in SIZES {
        tab.viewport(w, h).await;
        fits_the_width(&tab, "the house page").await;
        tab.screenshot(SHOTS, &format!("house-{w}x{h}")).await;
    }
    assert!(text(&tab).await.contains("House tables"));

    // From the list to the spectator page, as a person would click.
    tab.goto(&format!("{base}/tables/")).await;
    tab.wait_for(
        &format!("document.querySelector('tr[data-session={table:?}] a.watch')"),
        "the watch link",
        LONG,
    )
    .await;
    // A keyboard user on a Watch link keeps the focus through the list's refreshes (every
    // 3 s it was rebuilt and the focus lost).
    tab.eval(&format!(
        "document.querySelector('tr[data-session={table:?}] a.watch').focus()"
    ))
    .await;
    tokio::time::sleep(Duration::from_millis(7_000)).await;
    assert_eq!(
        tab.eval("document.activeElement && document.activeElement.closest('tr') ? document.activeElement.closest('tr').dataset.session : null")
            .await,
        json!(table),
        "the focus left the Watch link"
    );
    tab.eval(&format!(
        "document.querySelector('tr[data-session={table:?}] a.watch').click()"
    ))
    .await;
    tab.wait_for(
        "document.querySelectorAll('#board .sq').length === 64",
        "the spectator's chess board",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("location.pathname").await,
        json!(format!("/watch/{table}"))
    );
    let marked = tab
        .eval("[...document.querySelectorAll('#board .sq.last')].map(e => e.dataset.square).sort()")
        .await;
    assert_eq!(marked, json!(["b5", "f1"]), "the last move's squares");
    let colours = tab
        .eval("[...new Set([...document.querySelectorAll('#board .sq')].map(e => getComputedStyle(e).backgroundColor))].length")
        .await;
    assert!(
        colours.as_u64().unwrap() >= 3,
        "light, dark and marked squares: {colours}"
    );
    let page = text(&tab).await;
    for needle in [
        "White: Fish",
        "Black: Crab",
        "Fish played Bb5",
        "1. e4 e5  2. Nf3 Nc6  3. Bb5",
    ] {
        assert!(page.contains(needle), "{needle:?} in:\n{page}");
    }
    assert!(
        !page.contains("p_"),
        "players are shown by name, not id:\n{page}"
    );

    // A move shows up live (the page long-polls /public).
    play(&black, &white, &table, &["a7a6"]).await;
    tab.wait_for(
        "document.body.innerText.includes('Crab played a6')",
        "the next move, live",
        LONG,
    )
    .await;
    for (w, h) in SIZES {
        tab.viewport(w, h).await;
        fits_the_width(&tab, "the spectator page").await;
        tab.screenshot(SHOTS, &format!("watch-chess-{w}x{h}")).await;
    }
    // Beside at 1280, below on a phone.
    tab.viewport(1280, 800).await;
    let (stage, side) = (rect(&tab, "#stage").await, rect(&tab, "aside").await);
    assert!(
        side[0] >= stage[2],
        "the panel is beside the game: {stage:?} {side:?}"
    );
    // Its first panel (Players, the replay's being hidden) is level with the game's: it sat
    // 16 px lower, spaced from the hidden replay panel before it.
    let first = rect(&tab, "aside > .panel:not([hidden])").await;
    assert!(
        (first[1] - stage[1]).abs() < 1.0,
        "the side's first panel starts at {} px, the game at {} px",
        first[1],
        stage[1]
    );
    tab.viewport(390, 844).await;
    let (stage, side) = (rect(&tab, "#stage").await, rect(&tab, "aside").await);
    assert!(
        side[1] >= stage[3],
        "the panel is below the game: {stage:?} {side:?}"
    );

    // Rock-paper-scissors: the score and the throws, by name.
    let rps = house.open_table("rps").await;
    let (rocky, edward) = (house.agent("Rocky").await, house.agent("Edward").await);
    rocky.join(&rps).await;
    edward.join(&rps).await;
    rps_match(&house, &rocky, &edward, &rps, &[("rock", "scissors")]).await;
    tab.goto(&format!("{base}/watch/{rps}")).await;
    tab.wait_for(
        "document.body.innerText.includes('Rocky 1 – 0 Edward')",
        "the rock-paper-scissors score by name",
        LONG,
    )
    .await;
    assert!(text(&tab)
        .await
        .contains("Rocky rock vs scissors Edward: Rocky wins"));
    for (w, h) in SIZES {
        tab.viewport(w, h).await;
        fits_the_width(&tab, "the rock-paper-scissors spectator page").await;
        tab.screenshot(SHOTS, &format!("watch-rps-{w}x{h}")).await;
    }

    // A session that does not exist reads as words.
    tab.viewport(1280, 800).await;
    tab.goto(&format!("{base}/watch/ses_{}ffffffff", &table[4..8]))
        .await;
    tab.wait_for(
        "document.getElementById('error').textContent.includes('no session')",
        "the not-found message",
        LONG,
    )
    .await;
    tab.screenshot(SHOTS, "watch-unknown-1280x800").await;
    tab.close().await;
    browser.close().await;
    house.stop().await;
}

/// Issue 31: a rock-paper-scissors match is over in well under a second. A spectator who
/// opened the table before the first throw keeps the final score and result on screen at the
/// table's URL (no jump to the rematch, no "has not published anything"), with a link to the
/// next round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fast_games_result_stays_on_the_watch_page() {
    let house = House::start(&["rps"], "", |_| {}).await;
    let table = house.open_table("rps").await;
    let base = format!("http://{}", house.app.addr);
    let browser = launch().await;
    let tab = Tab::open(&browser, &format!("{base}/watch/{table}")).await;
    tab.wait_for(
        "document.body.dataset.ready === '1'",
        "the watch page of the open table",
        LONG,
    )
    .await;
    // Before the first throw the result is "not decided yet" (it read "-").
    assert_eq!(
        tab.eval("document.getElementById('f-result').textContent")
            .await,
        json!("not decided yet"),
        "the result of a table still waiting"
    );
    let (rocky, edward) = (house.agent("Rocky").await, house.agent("Edward").await);
    rocky.join(&table).await;
    edward.join(&table).await;
    rps_match(
        &house,
        &rocky,
        &edward,
        &table,
        &[("rock", "scissors"), ("paper", "rock")],
    )
    .await;
    let over = "document.body.innerText.includes('Rocky 2 – 0 Edward') && document.getElementById('f-result').textContent.startsWith('Rocky won')";
    tab.wait_for(over, "the final score and the result", LONG)
        .await;
    tab.wait_for(
        "document.querySelector('#next-round')",
        "the link to the next round",
        LONG,
    )
    .await;
    // A few seconds on, it is all still there, at the table's own address.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        tab.eval(&format!("[location.pathname, {over}]")).await,
        json!([format!("/watch/{table}"), true]),
        "{}",
        text(&tab).await
    );
    let page = text(&tab).await;
    assert!(
        page.contains("This game is over")
            && page.contains("Rocky paper vs rock Edward: Rocky wins")
            && !page.contains("has not published anything"),
        "{page}"
    );
    // The result at the top, where a spectator looks first (it stood only in the table's
    // facts below the board), the winner's name in a <bdi>, then the way to the next round.
    assert_eq!(
        tab.eval("[document.getElementById('notice').textContent.replace(/Watch round \\d+$/, ''), document.querySelector('#notice bdi') && document.querySelector('#notice bdi').textContent]")
            .await,
        json!(["This game is over: Rocky won (best of three). The series goes on: ", "Rocky"]),
        "the notice of the finished match"
    );
    for (w, h) in SIZES {
        tab.viewport(w, h).await;
        fits_the_width(&tab, "the finished rps match").await;
        tab.screenshot(SHOTS, &format!("watch-rps-over-{w}x{h}"))
            .await;
    }
    tab.close().await;
    browser.close().await;
    house.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_shows_its_panel_beside_the_game_and_a_bad_game_url_in_words() {
    let app = crate::rcadia_common::app_with(|_| {}).await;
    app.person("alice", PASSWORD).await;
    let base = format!("http://{}", app.addr);
    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    tab.viewport(1280, 800).await;
    tab.goto(&format!("{base}/bridge/?game=/games/chess/&title=Chess"))
        .await;
    let table = host_from_tab(&tab, "alice").await;
    let agent = |name: &'static str| {
        let (app, base) = (&app, base.clone());
        async move {
            let (token, _) = app
                .auth
                .create_token(&["play".into()], Some(name))
                .await
                .unwrap();
            Client {
                base,
                token,
                http: reqwest::Client::new(),
            }
        }
    };
    let (white, black) = (agent("Fish").await, agent("Crab").await);
    white.join(&table).await;
    black.join(&table).await;
    play(&white, &black, &table, &["d2d4", "d7d5", "c2c4"]).await;
    tab.wait_for(
        "document.getElementById('events').textContent.includes('round 1 starts: Fish vs Crab')",
        "the platform events, with names",
        LONG,
    )
    .await;
    // The game frame shows names too (the bridge passes them with game_start).
    let deadline = tokio::time::Instant::now() + LONG;
    loop {
        let players = tab
            .eval_frames("document.getElementById('players') && document.getElementById('players').textContent")
            .await;
        if players == json!("Round 1: white Fish, black Crab") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "game frame players: {players}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Every square of the game page's board in its place, the last move's too (a page style
    // once hid the empty "last" square and shifted the rest).
    let in_place = tab
        .eval_frames(
            "(() => { if (!document.getElementById('board')) return null;
               const c = [...document.querySelectorAll('#board .sq')]; if (c.length !== 64) return c.length;
               const a = c[0].getBoundingClientRect();
               return c.every((e, i) => { const r = e.getBoundingClientRect();
                 return Math.abs(r.left - (a.left + (i % 8) * a.width)) < 2 && Math.abs(r.top - (a.top + Math.floor(i / 8) * a.height)) < 2; }); })()",
        )
        .await;
    assert_eq!(in_place, json!(true), "the game page's board squares");
    let (frame, side) = (
        rect(&tab, "#game-frame-box").await,
        rect(&tab, "aside").await,
    );
    assert!(
        side[0] >= frame[2],
        "the panel is beside the game at 1280x800: {frame:?} {side:?}"
    );
    assert!(side[1] < 400.0, "and starts at the top: {side:?}");
    fits_the_width(&tab, "the bridge").await;
    tab.screenshot(SHOTS, "bridge-chess-1280x800").await;
    tab.viewport(390, 844).await;
    let (frame, side) = (
        rect(&tab, "#game-frame-box").await,
        rect(&tab, "aside").await,
    );
    assert!(
        side[1] >= frame[3],
        "the panel is below the game on a phone: {frame:?} {side:?}"
    );
    fits_the_width(&tab, "the bridge on a phone").await;
    tab.screenshot(SHOTS, "bridge-chess-390x844").await;
    let panel = text(&tab).await;
    assert!(
        panel.contains("seat 0: Fish") && panel.contains("Watch this table"),
        "{panel}"
    );

    // A game URL that does not load: a readable page in the frame and a message beside it.
    for (w, h) in SIZES {
        tab.viewport(w, h).await;
        tab.goto(&format!("{base}/bridge/?game=/games/nope/")).await;
        tab.wait_for(
            "document.getElementById('error').textContent.includes('did not start')",
            "the bridge saying the game did not start",
            LONG,
        )
        .await;
        let in_frame: Value = tab
            .eval_frames("document.body && document.body.innerText")
            .await;
        let in_frame = in_frame.as_str().unwrap_or("").to_string();
        assert!(
            in_frame.contains("No game at this address") && !in_frame.contains("\"code\""),
            "the frame shows a page, not JSON: {in_frame:?}"
        );
        tab.screenshot(SHOTS, &format!("bridge-bad-game-{w}x{h}"))
            .await;
    }
    tab.close().await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_house_table_page_by_hand_explains_itself_and_the_game_pages_have_the_shared_look() {
    let app = crate::rcadia_common::app_with(|_| {}).await;
    let base = format!("http://{}", app.addr);
    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    for (w, h) in SIZES {
        tab.viewport(w, h).await;
        // Opened by a person (no ?game=): words and ways back, not a developer error.
        tab.goto(&format!("{base}/house/table.html")).await;
        tab.wait_for(
            "!document.getElementById('about').hidden",
            "the explanation on the house table page",
            LONG,
        )
        .await;
        let page = text(&tab).await;
        assert!(
            page.contains("house host's table page")
                && page.contains("horst house")
                && !page.contains("not a house game")
                && !page.contains("starting"),
            "{page}"
        );
        let links = tab
            .eval("[...document.querySelectorAll('#about a[href=\"/tables/\"]')].filter(a => a.offsetParent).length")
            .await;
        assert!(
            links.as_u64().unwrap_or(0) >= 1,
            "no visible link to /tables/: {links}"
        );
        let frames = tab.eval("document.querySelectorAll('iframe').length").await;
        assert_eq!(frames, json!(0), "no table is started by hand");
        fits_the_width(&tab, "the house table page").await;
        tab.screenshot(SHOTS, &format!("house-table-by-hand-{w}x{h}"))
            .await;

        // The house games' own pages wear RCADIA's stylesheet (the page's paper and
        // panels), with no look of their own inline.
        for (game, waiting) in [
            ("rps", "Waiting for the match"),
            ("chess", "Waiting for the game to start"),
        ] {
            tab.goto(&format!("{base}/games/{game}/")).await;
            tab.wait_for(
                &format!("document.getElementById('status').textContent.includes({waiting:?})"),
                &format!("the {game} page rendering"),
                LONG,
            )
            .await;
            let look = tab
                .eval(
                    "(() => { const s = [...document.styleSheets].some(x => x.href && x.href.endsWith('/pages/rcadia.css') && x.cssRules.length > 0);
                      const bg = getComputedStyle(document.body).backgroundColor;
                      const panel = document.querySelector('.panel');
                      return [s, bg, panel ? getComputedStyle(panel).borderRadius : null,
                              document.querySelectorAll('style, [style]').length]; })()",
                )
                .await;
            assert_eq!(
                look,
                json!([true, "rgb(245, 244, 240)", "10px", 0]),
                "the {game} page's look at {w}x{h} (shared sheet, paper, panels, no inline styles)"
            );
            fits_the_width(&tab, &format!("the {game} page")).await;
            tab.screenshot(SHOTS, &format!("{game}-page-{w}x{h}")).await;
        }
    }
    // The house host still gets its table: with ?game= the page starts the game frame.
    tab.goto(&format!(
        "{base}/house/table.html?game=/games/rps/&title=RPS"
    ))
    .await;
    tab.wait_for(
        "document.querySelectorAll('iframe').length === 1 && document.getElementById('about').hidden",
        "the house table page hosting when given its parameters",
        LONG,
    )
    .await;
    tab.close().await;
    browser.close().await;
}

/// A key on the focused page through DevTools (`rawKeyDown` then `keyUp`), with the
/// modifiers' bit mask (Alt 1, Ctrl 2, Meta 4, Shift 8).
async fn press(tab: &Tab, key: &str, vk: u32, modifiers: u32) {
    for kind in ["rawKeyDown", "keyUp"] {
        tab.browser
            .call(
                Some(&tab.session),
                "Input.dispatchKeyEvent",
                json!({ "type": kind, "key": key, "code": key, "windowsVirtualKeyCode": vk,
                        "nativeVirtualKeyCode": vk, "modifiers": modifiers }),
            )
            .await
            .expect("Input.dispatchKeyEvent");
    }
}

/// A finished game's replay, stepped with the keyboard: a bare ← or → moves one step, but
/// with Alt, Ctrl, Meta or Shift the keys are the browser's (Alt+← is "back", Shift+←
/// selects text) and move nothing (the page took them all: Alt+← stepped and stayed).
/// At a laptop's and a desktop's size (1366x768, 1920x1080) the replay fits the width.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_steps_on_bare_arrow_keys_and_leaves_the_browsers_shortcuts_alone() {
    let house = House::start(&["rps"], "", |_| {}).await;
    let table = house.open_table("rps").await;
    let base = format!("http://{}", house.app.addr);
    let (rocky, edward) = (house.agent("Rocky").await, house.agent("Edward").await);
    rocky.join(&table).await;
    edward.join(&table).await;
    rps_match(
        &house,
        &rocky,
        &edward,
        &table,
        &[("rock", "scissors"), ("paper", "rock")],
    )
    .await;
    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    // Key events reach the page while other tests' tabs are in front.
    tab.browser
        .call(
            Some(&tab.session),
            "Emulation.setFocusEmulationEnabled",
            json!({ "enabled": true }),
        )
        .await
        .expect("focus emulation");
    tab.goto(&format!("{base}/watch/{table}")).await;
    tab.wait_for(
        "document.body.dataset.replay === '1'",
        "the finished game's replay",
        LONG,
    )
    .await;
    let frame = "Number(document.body.dataset.frame)";
    let last = tab.eval(frame).await.as_u64().expect("a frame");
    assert!(last >= 2, "{}", text(&tab).await);
    tab.eval("document.activeElement && document.activeElement.blur(); true")
        .await;
    press(&tab, "ArrowLeft", 37, 0).await;
    assert_eq!(
        tab.eval(frame).await,
        json!(last - 1),
        "a bare ← steps back"
    );
    for (name, bit) in [("Ctrl", 2), ("Meta", 4), ("Shift", 8)] {
        for (arrow, vk) in [("ArrowLeft", 37), ("ArrowRight", 39)] {
            press(&tab, arrow, vk, bit).await;
            assert_eq!(
                tab.eval(frame).await,
                json!(last - 1),
                "{name}+{arrow} is the browser's, not a step"
            );
        }
    }
    // In the list of moves too: its own keys (↑ ↓ Home End) only bare.
    tab.eval("document.querySelector('#r-frames li.current button').focus(); true")
        .await;
    press(&tab, "Home", 36, 8).await;
    assert_eq!(
        tab.eval(frame).await,
        json!(last - 1),
        "Shift+Home in the list"
    );
    press(&tab, "Home", 36, 0).await;
    assert_eq!(tab.eval(frame).await, json!(0), "Home in the list");
    // The table's facts follow the step: at the start the game is being played and its
    // result not decided (they said "finished" and "Rocky won" at every step); at the end,
    // the result.
    let facts =
        "['f-status', 'f-clock', 'f-result'].map(id => document.getElementById(id).textContent)";
    assert_eq!(
        tab.eval(facts).await,
        json!([
            format!("playing (replay, step 1 of {})", last + 1),
            "-",
            "not decided yet"
        ]),
        "the table's facts at the start of the replay"
    );
    press(&tab, "End", 35, 0).await;
    assert_eq!(tab.eval(frame).await, json!(last), "End in the list");
    assert_eq!(
        tab.eval(facts).await,
        json!(["finished", "-", "Rocky won (best of three)"]),
        "the table's facts at the end of the replay"
    );
    press(&tab, "Home", 36, 0).await;
    assert_eq!(tab.eval(frame).await, json!(0), "Home in the list again");
    // The focused move's ring is inside the list that scrolls (it was cut off at the right).
    let ring = "(() => { const b = document.activeElement, l = document.getElementById('r-frames');         const s = getComputedStyle(b), out = parseFloat(s.outlineWidth) + parseFloat(s.outlineOffset);         const r = b.getBoundingClientRect(), L = l.getBoundingClientRect();         return [b.matches('#r-frames button:focus-visible'), s.outlineStyle, r.right + out <= L.left + l.clientLeft + l.clientWidth + 0.5]; })()";
    assert_eq!(
        tab.eval(ring).await,
        json!([true, "solid", true]),
        "the focused move's ring"
    );
    press(&tab, "ArrowRight", 39, 0).await;
    assert_eq!(tab.eval(frame).await, json!(1), "a bare → steps on");
    let problems = crate::arena_pages::step_buttons_out_of_reach(&tab, "the rps replay").await;
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for (w, h) in [(1366, 768), (1920, 1080)] {
        tab.viewport(w, h).await;
        fits_the_width(&tab, "the replay").await;
        tab.screenshot(SHOTS, &format!("replay-rps-{w}x{h}")).await;
    }
    // Alt+← is the browser's "back" (to the blank page this tab came from): the page took
    // it for a step and stayed.
    tab.eval("document.activeElement && document.activeElement.blur(); true")
        .await;
    press(&tab, "ArrowLeft", 37, 1).await;
    tab.wait_for(
        "location.href === 'about:blank'",
        "Alt+← going back to the page before",
        LONG,
    )
    .await;
    tab.close().await;
    browser.close().await;
    house.stop().await;
}

/// The seats of `#players` as `[seat, text, open]` rows.
const SEATS: &str = "[...document.querySelectorAll('#players li')].map(li => [li.querySelector('.seat')?.textContent, \
  (li.querySelector('bdi') || li.querySelector('.waiting') || li).textContent, li.classList.contains('open')])";

/// A table waiting for players shows every seat of the game on the watch page: the taken ones
/// by name, each open one as waiting for a player, and a seat taken while the page is open
/// changes from open to its player's name (and the events say it was taken). Before, only the taken seats were listed: a
/// spectator of a three-seat table with one player saw one line and could not tell that the
/// game waits for two more. The count is the public view's `maxPlayers`, not one more call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_page_lists_every_seat_and_the_open_ones_wait_for_a_player() {
    use crate::rcadia_common::{app_with, cast, two_player};
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let id = host
        .create(two_player(
            json!({ "minPlayers": 3, "maxPlayers": 3, "gameType": "counting" }),
        ))
        .await;
    let (st, v) = agents[0]
        .post(&format!("{AGENT}/{id}/join"), json!({ "asName": "Ada" }))
        .await;
    assert_eq!(st, 200, "{v}");
    let browser = launch().await;
    let tab = Tab::open(&browser, &app.url(&format!("/watch/{id}"))).await;
    tab.wait_for(
        "document.body.dataset.ready === '1'",
        "the watch page of the waiting table",
        LONG,
    )
    .await;
    let open = "open: waiting for a player";
    assert_eq!(
        tab.eval(SEATS).await,
        json!([
            ["seat 0", "Ada", false],
            ["seat 1", open, true],
            ["seat 2", open, true]
        ]),
        "the seats of a table with one of three players"
    );
    // The seat count comes with the public view: the page asks nothing else (it read the
    // whole `/available?all=1` list for it, every table's entry, to find one number).
    assert_eq!(
        tab.eval("performance.getEntriesByType('resource').map(e => new URL(e.name).pathname).filter(p => p.startsWith('/api/')).filter(p => !p.endsWith('/public'))")
            .await,
        json!([]),
        "the watch page's API calls besides the public view"
    );
    let (st, v) = agents[1]
        .post(&format!("{AGENT}/{id}/join"), json!({ "asName": "Bo" }))
        .await;
    assert_eq!(st, 200, "{v}");
    let two = json!([
        ["seat 0", "Ada", false],
        ["seat 1", "Bo", false],
        ["seat 2", open, true]
    ]);
    tab.wait_for(
        &format!("JSON.stringify({SEATS}) === {:?}", two.to_string()),
        "the second player in seat 1, seat 2 still open",
        LONG,
    )
    .await;
    // What happened says when the seat was taken, the name in a <bdi>; the empty stage says
    // in words when the game shows (it stood as a block of code).
    tab.wait_for(
        "[...document.querySelectorAll('#events li')].some(li => li.textContent.endsWith('Bo took seat 1') && li.querySelector('bdi')?.textContent === 'Bo')",
        "the seat taken in the events",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("[!!document.querySelector('#stage pre'), document.querySelector('#stage p')?.textContent]")
            .await,
        json!([false, "The game shows here once enough players are seated (see Players)."]),
        "the stage of a table waiting for players"
    );
    for (w, h) in SIZES {
        tab.viewport(w, h).await;
        fits_the_width(&tab, "the waiting table").await;
        tab.screenshot(SHOTS, &format!("watch-open-seats-{w}x{h}"))
            .await;
    }
    // On a phone, upright and held sideways, the seats are on the first screen: the stage's
    // one line of "nothing yet" was a box of 12rem above them, and sideways the players
    // began below the screen's edge (at 844x390 the first seat's bottom at 436 px).
    for (w, h) in [(390, 844), (844, 390)] {
        tab.device(w, h, true).await;
        let first_seat = tab
            .eval("(scrollTo(0, 0), Math.round(document.querySelector('#players li').getBoundingClientRect().bottom))")
            .await;
        assert!(
            first_seat.as_i64().is_some_and(|b| b <= i64::from(h)),
            "at {w}x{h} the first seat's bottom is at {first_seat} px, below the first screen"
        );
        tab.screenshot(SHOTS, &format!("watch-open-seats-{w}x{h}-touch"))
            .await;
    }
    // The table list says how many of the seats are taken beside the names (the names had
    // replaced the count "2 of 3", and nothing said the table waits for one more).
    tab.device(1280, 800, false).await;
    tab.goto(&app.url("/tables/")).await;
    tab.wait_for(
        &format!("document.querySelector('tr[data-session=\"{id}\"] td.who')?.textContent === 'Ada vs Bo · 2 of 3 seats taken'"),
        "the waiting table's row: its players and how many of its seats are taken",
        LONG,
    )
    .await;
    tab.assert_no_errors();
    tab.close().await;
    browser.close().await;
}
