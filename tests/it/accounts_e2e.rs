//! The account page and the admin page in headless Chromium, as people use them: sign up,
//! sign in, create a key and see it once, use it over MCP, revoke it (the next MCP call is
//! 401); as the operator: read a message, promote a revision, and see a stale promotion
//! refused with the 409 in words. Screenshots at 1280x800 and 390x844 go to
//! `target/screenshots/accounts/` for review.

use std::time::Duration;

use base64::Engine;
use redis::AsyncCommands;
use serde_json::{json, Value};

use crate::browser::{launch, Tab};
use crate::harness::{ok_result, spawn_app_with, TestApp};

const LONG: Duration = Duration::from_secs(60);
const PASSWORD: &str = "gipfelstuermer 2026";

async fn web_app() -> TestApp {
    spawn_app_with(|c| {
        c.server.web_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/web").into();
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.sign_up = true;
    })
    .await
}

async fn viewport(tab: &Tab, width: u32, height: u32) {
    tab.browser
        .call(
            Some(&tab.session),
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600 }),
        )
        .await
        .expect("set the viewport");
}

/// Saves a PNG of the page as it is now under `target/screenshots/<name>.png`.
async fn screenshot(tab: &Tab, name: &str) {
    // Let layout and fonts settle after the last change.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let shot = tab
        .browser
        .call(
            Some(&tab.session),
            "Page.captureScreenshot",
            json!({ "format": "png", "captureBeyondViewport": false }),
        )
        .await
        .expect("screenshot");
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().expect("data"))
        .expect("base64");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots/accounts");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

async fn navigate(tab: &Tab, url: &str) {
    tab.browser
        .call(Some(&tab.session), "Page.navigate", json!({ "url": url }))
        .await
        .expect("navigate");
}

/// Sets a form field the way typing does (the input event included).
async fn fill(tab: &Tab, selector: &str, value: &str) {
    let ok = tab
        .eval(&format!(
            "(() => {{ const e = document.querySelector({selector:?}); if (!e) return false; \
             e.value = {value:?}; e.dispatchEvent(new Event('input', {{ bubbles: true }})); return true; }})()"
        ))
        .await;
    assert_eq!(ok, Value::Bool(true), "no field {selector}");
}

async fn click(tab: &Tab, selector: &str) {
    let ok = tab
        .eval(&format!(
            "(() => {{ const e = document.querySelector({selector:?}); if (!e) return false; e.click(); return true; }})()"
        ))
        .await;
    assert_eq!(ok, Value::Bool(true), "nothing to click at {selector}");
}

async fn text(tab: &Tab, selector: &str) -> String {
    tab.eval(&format!(
        "(document.querySelector({selector:?}) || {{}}).textContent || ''"
    ))
    .await
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// The account page opened while the store is down: the notice says the server is not
/// ready (not "something went wrong"), the sign-up card says why it shows no form instead of
/// standing empty, and once the store is back the page comes back by itself, sign-up open.
/// The RCADIA tables list beside it shows its error without "Loading the tables…".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_account_page_and_the_tables_list_while_the_store_is_down_say_so() {
    if crate::harness::on_cluster() {
        // The test stops its own Redis.
        return;
    }
    let mut app = web_app().await;
    app.redis_mut().stop();
    let browser = launch().await;
    let tab = Tab::open(&browser, "about:blank").await;
    viewport(&tab, 390, 844).await;
    navigate(&tab, &app.url("/account/")).await;
    let said = tab
        .wait_for(
            "!document.getElementById('notice').hidden && document.getElementById('notice').textContent",
            "the page's notice",
            LONG,
        )
        .await;
    screenshot(&tab, "account-store-down-390").await;
    assert!(
        said.as_str().unwrap().contains("nicht bereit"),
        "the notice while the store is down: {said}"
    );
    let card = tab
        .eval(
            "[...document.querySelectorAll('#signup-card > :not(h2)')].filter(e => e.offsetParent !== null).map(e => e.textContent.trim()).join(' ')",
        )
        .await;
    assert!(
        card.as_str().unwrap().contains("gerade nicht lesen"),
        "the sign-up card while the store is down (its heading alone): {card:?}"
    );
    // The tables list at the same time: the error, and no "Loading the tables…" beside it.
    let tables = Tab::open(&browser, "about:blank").await;
    viewport(&tables, 390, 844).await;
    navigate(&tables, &app.url("/tables/")).await;
    tables
        .wait_for(
            "document.getElementById('error').textContent.includes('Retrying')",
            "the tables list's error",
            LONG,
        )
        .await;
    let summary = text(&tables, "#summary").await;
    assert!(
        !summary.contains("Loading"),
        "the tables list still says {summary:?} beside its error"
    );
    app.redis_mut().restart();
    tab.wait_for(
        "!document.getElementById('signup-form').hidden && document.getElementById('notice').hidden",
        "the sign-up form back without a reload",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("document.getElementById('signup-unknown').hidden")
            .await,
        json!(true)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_signs_up_makes_a_key_sees_it_once_uses_and_revokes_it() {
    let app = web_app().await;
    let browser = launch().await;
    let tab = Tab::open(&browser, &app.url("/account/")).await;
    viewport(&tab, 1280, 800).await;
    tab.wait_for(
        "!document.getElementById('signed-out').hidden",
        "the sign-in form",
        LONG,
    )
    .await;
    screenshot(&tab, "account-signed-out-1280").await;
    // The header wears the game's brand: the bird drawn beside the name, the same size.
    assert_eq!(
        tab.eval(
            "(() => { const c = document.querySelector('#brand > canvas.logo'); if (!c) return null; \
             const r = c.getBoundingClientRect(); return [r.width, r.height, getComputedStyle(c.parentElement).display]; })()"
        )
        .await,
        json!([36, 32, "flex"]),
        "the account page's header has no logo like the game's"
    );

    // Bad input is answered on the form, in German, without a request.
    fill(&tab, "#signup-name", "Wanderer!").await;
    fill(&tab, "#signup-password", "kurz").await;
    fill(&tab, "#signup-repeat", "anders").await;
    tab.eval("document.getElementById('signup-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.getElementById('signup-password-error').textContent.includes('mindestens 8')",
        "the password rule",
        LONG,
    )
    .await;
    assert!(text(&tab, "#signup-name-error")
        .await
        .contains("Kleinbuchstaben"));
    assert!(text(&tab, "#signup-repeat-error")
        .await
        .contains("verschieden"));
    viewport(&tab, 390, 844).await;
    screenshot(&tab, "account-form-errors-390").await;
    viewport(&tab, 1280, 800).await;

    // What only the server checks (a reserved name, a common password, a password that is
    // short by what shows) is said in German too, not as the server's English message.
    for (name, password, german) in [
        ("admin", PASSWORD, "reserviert"),
        ("wanderer", "iloveyou", "bei Datenlecks bekannt"),
        (
            "wanderer",
            "a\u{200b}\u{200b}\u{200b}\u{200b}\u{200b}\u{200b}\u{200b}",
            "unsichtbare Zeichen",
        ),
    ] {
        tab.eval("document.getElementById('signup-error').textContent = 'x'")
            .await;
        for (field, value) in [
            ("#signup-name", name),
            ("#signup-password", password),
            ("#signup-repeat", password),
        ] {
            fill(&tab, field, value).await;
        }
        tab.eval("document.getElementById('signup-form').requestSubmit()")
            .await;
        let said = tab
            .wait_for(
                "document.getElementById('signup-error').textContent !== 'x' && document.getElementById('signup-error').textContent",
                "the server's refusal",
                LONG,
            )
            .await;
        let said = said.as_str().unwrap_or_default();
        assert!(said.contains(german), "signing up as {name:?}: {said:?}");
        for english in ["the ", "password", "name"] {
            assert!(!said.contains(english), "signing up as {name:?}: {said:?}");
        }
    }

    // Sign up.
    fill(&tab, "#signup-name", "wanderer").await;
    fill(&tab, "#signup-password", PASSWORD).await;
    fill(&tab, "#signup-repeat", PASSWORD).await;
    tab.eval("document.getElementById('signup-form').requestSubmit()")
        .await;
    tab.wait_for(
        "!document.getElementById('signed-in').hidden && document.getElementById('quota-rows').children.length === 4",
        "the signed-in page with quotas",
        LONG,
    )
    .await;
    assert_eq!(text(&tab, "#me-name").await, "wanderer");
    // The session cookie is not readable by scripts.
    assert_eq!(tab.eval("document.cookie").await, json!(""));

    // The label field takes what the server takes, no more (it took 60 where the server
    // allows 40, and said so only after sending), and its hint names the same number. It
    // counts characters as the server does: its maxlength counts UTF-16 units, two for an
    // emoji, so it holds twice the units (a maxlength of 40 let 20 emoji in where the server
    // takes 40), and its counter says how many characters are in it.
    tab.wait_for(
        "document.getElementById('key-count').textContent !== ''",
        "the key card read from the server",
        LONG,
    )
    .await;
    let max = horst_identity::accounts::MAX_LABEL_CHARS;
    assert_eq!(
        tab.eval("[document.getElementById('key-label').maxLength, document.getElementById('key-label-count').textContent]")
            .await,
        json!([2 * max, format!("0 von {max} Zeichen")]),
        "the label field's maxlength and counter against the server's limit"
    );
    assert!(
        text(&tab, "label[for=key-label]")
            .await
            .contains(&format!("höchstens {max} Zeichen")),
        "{}",
        text(&tab, "label[for=key-label]").await
    );

    // Create a key: shown once.
    fill(&tab, "#key-label", "Laptop <b>fett</b>").await;
    tab.eval("document.getElementById('key-form').requestSubmit()")
        .await;
    let key = tab
        .wait_for(
            "!document.getElementById('new-key').hidden && document.getElementById('new-key-value').value",
            "the new key",
            LONG,
        )
        .await
        .as_str()
        .unwrap()
        .to_string();
    assert!(key.starts_with("gcv_"), "{key}");
    tab.wait_for(
        "document.querySelectorAll('#key-rows tr').length === 1",
        "the key in the list",
        LONG,
    )
    .await;
    // Untrusted text stays text: the label's markup is shown, not rendered.
    assert_eq!(text(&tab, "#key-rows td.label").await, "Laptop <b>fett</b>");
    assert_eq!(
        tab.eval("document.querySelectorAll('#key-rows b').length")
            .await,
        json!(0)
    );
    // The next step is said with the exact line that connects Claude Code, and the guide.
    assert_eq!(
        tab.eval("document.getElementById('mcp-command').value")
            .await,
        json!(format!(
            "claude mcp add --transport http horst {} --header \"Authorization: Bearer {key}\"",
            app.url("/api/mcp")
        ))
    );
    assert_eq!(
        tab.eval("!!document.querySelector('#next-steps a[href=\"/agents.html\"]')")
            .await,
        json!(true)
    );
    // The game's header: the same navigation as the game's pages.
    assert_eq!(
        tab.eval("[...document.querySelectorAll('header nav a')].map(a => a.getAttribute('href')).join(' ')")
            .await,
        json!("/ /board.html /agents.html /account/")
    );
    screenshot(&tab, "account-new-key-1280").await;
    tab.eval("document.getElementById('next-steps').scrollIntoView()")
        .await;
    screenshot(&tab, "account-next-steps-1280").await;
    viewport(&tab, 390, 844).await;
    screenshot(&tab, "account-new-key-390").await;
    assert_eq!(
        crate::phone_pages::small_controls(&tab).await,
        Vec::<String>::new(),
        "controls too small to tap on a phone (account-new-key-390)"
    );
    assert!(
        tab.eval("document.documentElement.scrollWidth")
            .await
            .as_u64()
            .unwrap()
            <= 390,
        "the account page scrolls sideways on a phone"
    );
    viewport(&tab, 1280, 800).await;
    click(&tab, "#hide-key").await;
    let html = tab.eval("document.documentElement.outerHTML").await;
    assert!(
        !html.as_str().unwrap().contains(&key),
        "the key stays on the page"
    );
    assert_eq!(
        tab.eval("document.getElementById('new-key-value').value")
            .await,
        json!("")
    );
    assert_eq!(
        tab.eval("document.getElementById('mcp-command').value")
            .await,
        json!(""),
        "the key stays in the Claude Code line"
    );

    // It works over MCP.
    let r = app.call("my_submissions", json!({}), Some(&key)).await;
    ok_result(&r);

    // After a reload only the prefix is there.
    navigate(&tab, &app.url("/account/maps.html#key-card")).await;
    tab.wait_for(
        "document.querySelectorAll('#key-rows tr').length === 1",
        "the key list after a reload",
        LONG,
    )
    .await;
    let html = tab.eval("document.documentElement.outerHTML").await;
    assert!(!html.as_str().unwrap().contains(&key));
    assert!(html.as_str().unwrap().contains(&key[..12]));
    viewport(&tab, 390, 844).await;
    // The account's facts, one under the other on a phone, sit as close as a fact's lines
    // (2rem apart before, as if "Konto seit" began a new part of the card).
    let gap = tab
        .eval("(([a, b]) => b.getBoundingClientRect().top - a.getBoundingClientRect().bottom)(document.querySelectorAll('#signed-in .facts > div'))")
        .await;
    assert!(
        gap.as_f64() < Some(16.0),
        "{gap} px between the account's facts"
    );
    screenshot(&tab, "account-keys-390").await;
    assert_eq!(
        crate::phone_pages::small_controls(&tab).await,
        Vec::<String>::new(),
        "controls too small to tap on a phone (account-keys-390)"
    );

    // Revoke: it asks once, naming the key; then the next MCP call is 401.
    click(&tab, "#key-rows button[data-prefix]").await;
    let ask = text(&tab, "#key-rows .ask").await;
    assert!(
        ask.contains(&key[..12]) && ask.contains("widerrufen"),
        "{ask}"
    );
    screenshot(&tab, "account-revoke-ask-390").await;
    assert_eq!(
        crate::phone_pages::small_controls(&tab).await,
        Vec::<String>::new(),
        "controls too small to tap on a phone (account-revoke-ask-390)"
    );
    // "Ja, widerrufen" and "Abbrechen" stand apart (more than a focus ring's 5 px).
    let gap = tab
        .eval(
            "(() => { const b = [...document.querySelectorAll('#key-rows td.action button')].map(e => e.getBoundingClientRect()); \
             return b.length === 2 && (b[1].top >= b[0].bottom ? b[1].top - b[0].bottom : b[1].left - b[0].right); })()",
        )
        .await;
    assert!(
        gap.as_f64().unwrap_or(0.0) >= 8.0,
        "the revoke question's buttons are {gap} px apart"
    );
    click(&tab, "#key-rows button[data-confirm]").await;
    tab.wait_for(
        "document.querySelectorAll('#key-rows tr').length === 0 && !document.getElementById('no-keys').hidden",
        "the key gone from the list",
        LONG,
    )
    .await;
    let r = app.call("my_submissions", json!({}), Some(&key)).await;
    assert_eq!(r.status, 401, "{}", r.text);
    viewport(&tab, 1280, 800).await;
    screenshot(&tab, "account-signed-in-1280").await;

    // A label of emoji: one more than the limit is counted over and refused at the field
    // without a request; the limit itself is what the server takes.
    let birds = |n: usize| "\u{1F426}".repeat(n);
    fill(&tab, "#key-label", &birds(max + 1)).await;
    assert_eq!(
        tab.eval("[document.getElementById('key-label-count').textContent, document.getElementById('key-label').validity.valid]")
            .await,
        json!([format!("{} von {max} Zeichen: 1 zu viel", max + 1), false])
    );
    tab.eval("document.getElementById('key-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.getElementById('key-label-error').textContent.includes('Höchstens')",
        "the label refused at its field",
        LONG,
    )
    .await;
    fill(&tab, "#key-label", &birds(max)).await;
    assert_eq!(
        tab.eval("[document.getElementById('key-label-count').textContent, document.getElementById('key-label').validity.valid]")
            .await,
        json!([format!("{max} von {max} Zeichen"), true])
    );
    tab.eval("document.getElementById('key-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.querySelectorAll('#key-rows tr').length === 1",
        "the key with an emoji label in the list",
        LONG,
    )
    .await;
    assert_eq!(text(&tab, "#key-rows td.label").await, birds(max));
    // The form is emptied, and so is the counter.
    assert_eq!(
        text(&tab, "#key-label-count").await,
        format!("0 von {max} Zeichen")
    );
    click(&tab, "#hide-key").await;

    // Change the password (issue 31): a wrong current one is said at its field; then the
    // change, and this tab stays signed in.
    const NEW_PASSWORD: &str = "ein neues passwort fuer wanderer";
    viewport(&tab, 390, 844).await;
    fill(&tab, "#password-current", "nicht mein passwort").await;
    fill(&tab, "#password-new", NEW_PASSWORD).await;
    fill(&tab, "#password-repeat", NEW_PASSWORD).await;
    tab.eval("document.getElementById('password-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.getElementById('password-current-error').textContent.includes('stimmt nicht')",
        "the wrong current password said at its field",
        LONG,
    )
    .await;
    tab.eval("document.getElementById('password-card').scrollIntoView()")
        .await;
    screenshot(&tab, "account-password-wrong-390").await;
    fill(&tab, "#password-current", PASSWORD).await;
    tab.eval("document.getElementById('password-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.getElementById('password-done').textContent.includes('geändert') && !document.getElementById('signed-in').hidden",
        "the password changed, still signed in",
        LONG,
    )
    .await;
    viewport(&tab, 1280, 800).await;
    tab.eval("document.getElementById('password-card').scrollIntoView()")
        .await;
    screenshot(&tab, "account-password-changed-1280").await;
    assert_eq!(
        tab.eval("document.getElementById('password-current').value")
            .await,
        "",
        "the form is emptied"
    );

    // Sign out, and sign in again with a wrong, then the right password.
    click(&tab, "#sign-out").await;
    tab.wait_for(
        "!document.getElementById('signed-out').hidden",
        "signed out",
        LONG,
    )
    .await;
    fill(&tab, "#signin-name", "wanderer").await;
    fill(&tab, "#signin-password", "falsches passwort").await;
    tab.eval("document.getElementById('signin-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.getElementById('signin-error').textContent.includes('falsch')",
        "the wrong-password message",
        LONG,
    )
    .await;
    fill(&tab, "#signin-password", NEW_PASSWORD).await;
    tab.eval("document.getElementById('signin-form').requestSubmit()")
        .await;
    tab.wait_for(
        "!document.getElementById('signed-in').hidden",
        "signed in again",
        LONG,
    )
    .await;
    tab.close().await;
    browser.close().await;
}

/// A revision of `level` whose submission check is on the current engine (so it may be
/// promoted), stored as a submission leaves it.
pub(crate) async fn revision(app: &TestApp, id: &str, level: &str, created_ms: u64) {
    let s = &app.store;
    let _: () = s
        .conn()
        .hset_multiple(
            s.key(&format!("rev:{id}")),
            &[
                ("revisionId", id),
                ("name", level),
                ("owner", "dohlenfreund"),
                ("engineVersion", horst_engine::engine_version()),
                ("createdAtMs", &created_ms.to_string()),
                ("ticks", "812"),
            ],
        )
        .await
        .unwrap();
    let _: () = s
        .conn()
        .set(s.key(&format!("rev:{id}:state")), "labor")
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_reads_a_message_promotes_and_sees_a_stale_promotion_refused() {
    let app = web_app().await;
    app.person("olga", PASSWORD).await;
    horst_operator::set_operator_role(&app.store, "setup", "olga", true)
        .await
        .unwrap();
    let key = app.agent_key("dohlenfreund", 0).await;
    let m = ok_result(
        &app.call(
            "contact_admin",
            json!({"category": "bug", "subject": "Die Dohle <script>alert(1)</script>",
                   "message": "Zeile 1\nZeile 2: <img src=x onerror=alert(2)>"}),
            Some(&key),
        )
        .await,
    );
    let message_id = m["messageId"].as_str().unwrap().to_string();
    // A board thread whose title has no space to wrap at.
    ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": format!("Gipfel{}", "sturm".repeat(20)), "body": "lang"}),
            Some(&key),
        )
        .await,
    );
    for (i, id) in [
        "rev-gipfel-a",
        "rev-gipfel-b",
        "rev-gipfel-c",
        "rev-gipfel-d",
    ]
    .iter()
    .enumerate()
    {
        revision(&app, id, "gipfel", 1_796_000_000_000 + i as u64 * 60_000).await;
    }
    horst_operator::promote(&app.store, "setup", "rev-gipfel-a", None)
        .await
        .unwrap();

    let browser = launch().await;
    let tab = Tab::open(&browser, &app.url("/admin/")).await;
    viewport(&tab, 1280, 800).await;
    tab.wait_for(
        "!document.getElementById('signed-out').hidden",
        "the sign-in forms",
        LONG,
    )
    .await;
    screenshot(&tab, "admin-sign-in-1280").await;
    // An agent key is not an admin token.
    fill(&tab, "#tok-name", "Mallory").await;
    fill(&tab, "#tok-token", &key).await;
    tab.eval("document.getElementById('token-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.getElementById('token-error').textContent.includes('not an active admin token')",
        "the refused key",
        LONG,
    )
    .await;
    fill(&tab, "#acc-name", "olga").await;
    fill(&tab, "#acc-password", PASSWORD).await;
    tab.eval("document.getElementById('account-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.body.dataset.section === 'overview' && document.querySelectorAll('.card').length > 4",
        "the overview",
        LONG,
    )
    .await;
    screenshot(&tab, "admin-overview-1280").await;
    viewport(&tab, 390, 844).await;
    screenshot(&tab, "admin-overview-390").await;
    viewport(&tab, 1280, 800).await;

    // Messages: unread first, plain text, mark read.
    navigate(&tab, &app.url("/admin/#messages")).await;
    tab.wait_for(
        "document.querySelectorAll('article.message.unread').length === 1",
        "the unread message",
        LONG,
    )
    .await;
    assert_eq!(
        text(&tab, "article.message .subject").await,
        "Die Dohle <script>alert(1)</script>"
    );
    assert_eq!(
        tab.eval("document.querySelectorAll('article.message img, article.message script').length")
            .await,
        json!(0)
    );
    screenshot(&tab, "admin-messages-1280").await;
    click(&tab, "article.message button[data-action='mark-read']").await;
    tab.wait_for(
        "document.querySelectorAll('article.message.read').length === 1",
        "the message read",
        LONG,
    )
    .await;
    let unread = horst_gateway::contact::list_messages(&app.store, true, 0, 10)
        .await
        .unwrap();
    assert!(unread.is_empty(), "{unread:?}");

    // Levels: promote b (asks once, naming what happens).
    navigate(&tab, &app.url("/admin/#levels")).await;
    tab.wait_for(
        "document.querySelectorAll('tr[data-revision]').length === 4",
        "the revisions",
        LONG,
    )
    .await;
    click(
        &tab,
        "tr[data-revision='rev-gipfel-b'] button[data-action='promote']",
    )
    .await;
    let ask = text(&tab, "tr[data-revision='rev-gipfel-b'] .confirm p").await;
    assert!(
        ask.contains("rev-gipfel-a") && ask.contains("rev-gipfel-b"),
        "{ask}"
    );
    // The question's column is wider (admin.css), but not so wide that the levels table
    // scrolls and the Check column goes under the Actions column that stays in view.
    assert_eq!(
        tab.eval(
            "(t => t.scrollWidth <= t.clientWidth + 1)(document.querySelector('.table-wrap'))"
        )
        .await,
        json!(true),
        "the levels table scrolls sideways while the promotion asks"
    );
    screenshot(&tab, "admin-promote-ask-1280").await;
    click(
        &tab,
        "tr[data-revision='rev-gipfel-b'] button[data-confirm]",
    )
    .await;
    tab.wait_for(
        "document.getElementById('notice').textContent.includes('rev-gipfel-b is now the promoted revision')",
        "the promotion",
        LONG,
    )
    .await;
    let promoted: Option<String> = app
        .store
        .conn()
        .get(app.store.key("level:gipfel:promoted"))
        .await
        .unwrap();
    assert_eq!(promoted.as_deref(), Some("rev-gipfel-b"));
    tab.wait_for(
        "document.querySelectorAll('tr[data-revision] button[data-action=promote]').length === 3",
        "the list after the promotion",
        LONG,
    )
    .await;

    // Meanwhile another operator promotes c over the REST API's library call; the page still
    // shows b as promoted, so promoting d names a stale expectation: 409, said in words.
    horst_operator::promote(
        &app.store,
        "api:anton",
        "rev-gipfel-c",
        Some("rev-gipfel-b"),
    )
    .await
    .unwrap();
    click(
        &tab,
        "tr[data-revision='rev-gipfel-d'] button[data-action='promote']",
    )
    .await;
    click(
        &tab,
        "tr[data-revision='rev-gipfel-d'] button[data-confirm]",
    )
    .await;
    let said = tab
        .wait_for(
            "document.getElementById('notice').className.includes('error') && document.getElementById('notice').textContent",
            "the refusal",
            LONG,
        )
        .await;
    let said = said.as_str().unwrap();
    assert!(
        said.contains("409")
            && said.contains("rev-gipfel-c")
            && said.contains("Nothing was changed"),
        "{said}"
    );
    let promoted: Option<String> = app
        .store
        .conn()
        .get(app.store.key("level:gipfel:promoted"))
        .await
        .unwrap();
    assert_eq!(promoted.as_deref(), Some("rev-gipfel-c"));
    screenshot(&tab, "admin-stale-promote-409-1280").await;
    viewport(&tab, 390, 844).await;
    screenshot(&tab, "admin-levels-390").await;
    // On a phone the levels table is a list of labelled cards: nothing is wider than the
    // screen, and every value says which column it is.
    let fits = tab
        .eval(
            "(() => { const t = document.querySelector('.table-wrap'); if (!t) return 'no table'; \
             const w = document.documentElement.clientWidth; \
             if (t.scrollWidth > t.clientWidth + 1 || document.documentElement.scrollWidth > w + 1) \
               return `wider than the screen: ${t.scrollWidth} > ${t.clientWidth}`; \
             const cells = [...t.querySelectorAll('tbody td')]; \
             return cells.length > 0 && cells.every((c) => c.dataset.label) ? 'ok' : 'cells without labels'; })()",
        )
        .await;
    assert_eq!(fits, json!("ok"), "the levels table at 390 px");
    viewport(&tab, 1280, 800).await;

    // At 1280 px the whole table fits: the Actions column is on the screen, and rolling back
    // names the revision that comes back (c was promoted after b).
    // Mark the old document: `reload()` returns before the navigation starts, and the old
    // table would satisfy the wait below at once (seen under load: the row then vanished).
    tab.eval("window.beforeReload = true; location.reload()")
        .await;
    tab.wait_for(
        "!window.beforeReload && document.querySelectorAll('tr[data-revision] button[data-action=rollback]').length === 1 && document.querySelector(\"tr[data-revision='rev-gipfel-c'] td.actions\") !== null",
        "the levels after a reload",
        LONG,
    )
    .await;
    let right = tab
        .eval("document.querySelector(\"tr[data-revision='rev-gipfel-c'] td.actions\").getBoundingClientRect().right")
        .await;
    assert!(
        right.as_f64().unwrap() <= 1280.0,
        "the Actions column ends at {right} px, off a 1280 px screen"
    );
    assert_eq!(
        tab.eval("document.querySelector(\"tr[data-revision='rev-gipfel-c'] a[href='/level/rev-gipfel-c']\").textContent")
            .await,
        json!("View")
    );
    screenshot(&tab, "admin-levels-1280").await;
    click(
        &tab,
        "tr[data-revision='rev-gipfel-c'] button[data-action='rollback']",
    )
    .await;
    let ask = text(&tab, "tr[data-revision='rev-gipfel-c'] .confirm p").await;
    assert!(
        ask.contains("rev-gipfel-b") && ask.contains("comes back"),
        "{ask}"
    );
    // Yes: the page names what it confirmed (c goes, b comes back), and the server rolls
    // back exactly that.
    click(
        &tab,
        "tr[data-revision='rev-gipfel-c'] button[data-confirm]",
    )
    .await;
    tab.wait_for(
        "document.getElementById('notice').textContent.includes('rev-gipfel-b is promoted again')",
        "the rollback",
        LONG,
    )
    .await;
    let promoted: Option<String> = app
        .store
        .conn()
        .get(app.store.key("level:gipfel:promoted"))
        .await
        .unwrap();
    assert_eq!(promoted.as_deref(), Some("rev-gipfel-b"));

    // A section that answers slowly never replaces the one the operator moved to since (seen
    // in CI: the levels' refresh after the rollback landed over the accounts). The page's
    // list of revisions is held back 1.5 s.
    tab.eval(
        "window.realFetch = window.fetch; window.fetch = (u, o) => String(u).includes('/api/admin/revisions') \
         ? new Promise((r) => setTimeout(r, 1500)).then(() => window.realFetch(u, o)) : window.realFetch(u, o); true",
    )
    .await;
    navigate(&tab, &app.url("/admin/#audit")).await;
    navigate(&tab, &app.url("/admin/#levels")).await;
    tab.wait_for(
        "document.getElementById('section-title').textContent === 'Levels'",
        "the levels loading",
        LONG,
    )
    .await;
    navigate(&tab, &app.url("/admin/#accounts")).await;
    tab.wait_for(
        "document.querySelectorAll('tr[data-account]').length >= 2 && document.body.dataset.section === 'accounts'",
        "the accounts",
        LONG,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        tab.eval(
            "[document.getElementById('section-title').textContent, document.body.dataset.section]"
        )
        .await,
        json!(["Accounts", "accounts"]),
        "the slow levels list replaced the accounts"
    );
    tab.eval("window.fetch = window.realFetch; true").await;

    // A role change asks first, saying what the role means.
    tab.wait_for(
        "document.querySelector(\"tr[data-account='olga'] button[data-action='operator']\")",
        "the accounts",
        LONG,
    )
    .await;
    click(
        &tab,
        "tr[data-account='olga'] button[data-action='operator']",
    )
    .await;
    let ask = text(&tab, "tr[data-account='olga'] .confirm p").await;
    assert!(ask.contains("Take the operator role from olga"), "{ask}");
    click(
        &tab,
        "tr[data-account='olga'] .confirm button:not([data-confirm])",
    )
    .await;
    assert!(
        horst_identity::people::load(&app.store, "olga")
            .await
            .unwrap()
            .unwrap()
            .operator,
        "the role changed without a yes"
    );

    // Five minutes after the sign-in a destructive action asks for the password again, in a
    // dialog that never shows it. A wrong one is said and stays said (it flashed away and
    // the page started over); the right one does what was asked.
    let sessions = app.store.scan_keys("websession:*").await.unwrap();
    for key in sessions {
        let _: () = app
            .store
            .conn()
            .hset(&key, "authAtMs", 1_000u64)
            .await
            .unwrap();
    }
    click(
        &tab,
        "tr[data-account='dohlenfreund'] button[data-action='block']",
    )
    .await;
    click(&tab, "tr[data-account='dohlenfreund'] button[data-confirm]").await;
    tab.wait_for(
        "document.querySelector('dialog.reauth[open] input[type=password]') !== null",
        "the password dialog",
        LONG,
    )
    .await;
    screenshot(&tab, "admin-reauth-1280").await;
    fill(&tab, "dialog.reauth input", "geraten!").await;
    tab.eval("document.querySelector('dialog.reauth form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.getElementById('notice').textContent.includes('Not done')",
        "the refusal of the wrong password",
        LONG,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        text(&tab, "#notice").await.contains("Nothing was changed"),
        "the refusal went away"
    );
    assert_eq!(
        tab.eval("document.body.dataset.section").await,
        json!("accounts"),
        "the page started over"
    );
    click(
        &tab,
        "tr[data-account='dohlenfreund'] button[data-action='block']",
    )
    .await;
    click(&tab, "tr[data-account='dohlenfreund'] button[data-confirm]").await;
    tab.wait_for(
        "document.querySelector('dialog.reauth[open]') !== null",
        "the password dialog again",
        LONG,
    )
    .await;
    fill(&tab, "dialog.reauth input", PASSWORD).await;
    tab.eval("document.querySelector('dialog.reauth form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.getElementById('notice').textContent.includes('dohlenfreund blocked')",
        "the block",
        LONG,
    )
    .await;

    // "Create user / set password" with a name that exists asks before it replaces that
    // person's password (it replaced it at once, signing them out everywhere).
    navigate(&tab, &app.url("/admin/#credentials")).await;
    tab.wait_for(
        "document.querySelector('#user-form input[name=name]') !== null",
        "the credentials",
        LONG,
    )
    .await;
    fill(&tab, "#user-form input[name=name]", "olga").await;
    fill(
        &tab,
        "#user-form input[name=password]",
        "ein ganz anderes passwort",
    )
    .await;
    tab.eval("document.querySelector('#user-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.querySelector('#user-form .confirm button[data-confirm]') !== null",
        "the question before a password is replaced",
        LONG,
    )
    .await;
    let ask = text(&tab, "#user-form .confirm p").await;
    assert!(ask.contains("olga already exists"), "{ask}");
    click(&tab, "#user-form .confirm button:not([data-confirm])").await;
    let still: Option<horst_identity::people::SignIn> = Some(
        horst_identity::people::sign_in(&app.store, &app.auth, "olga", PASSWORD)
            .await
            .unwrap(),
    );
    assert!(
        matches!(still, Some(horst_identity::people::SignIn::Ok(..))),
        "the password changed without a yes"
    );
    // With a yes, the notice says how many of the person's agent keys outlive the reset.
    app.person("dachs", "dachs passwort 1").await;
    horst_identity::accounts::create_key(&app.store, "dachs", Some("bot"))
        .await
        .unwrap();
    fill(&tab, "#user-form input[name=name]", "dachs").await;
    fill(&tab, "#user-form input[name=password]", "dachs passwort 2").await;
    tab.eval("document.querySelector('#user-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.querySelector('#user-form .confirm button[data-confirm]') !== null",
        "the question before dachs's password is replaced",
        LONG,
    )
    .await;
    click(&tab, "#user-form .confirm button[data-confirm]").await;
    tab.wait_for(
        "document.getElementById('notice').textContent.includes('New password for dachs')",
        "the reset",
        LONG,
    )
    .await;
    let said = text(&tab, "#notice").await;
    assert!(
        said.contains("1 agent key(s) of dachs still work"),
        "{said}"
    );

    // The other sections render with the same session.
    for (hash, ready) in [
        ("overview", "document.querySelectorAll('.card').length > 4"),
        (
            "messages",
            "document.querySelectorAll('article.message').length >= 1",
        ),
        (
            "jobs",
            "[...document.querySelectorAll('.card h2')].some((h) => h.textContent === 'Queue')",
        ),
        (
            "levels",
            "document.querySelectorAll('tr[data-revision]').length >= 1",
        ),
        (
            "accounts",
            "document.querySelectorAll('tr[data-account]').length >= 2",
        ),
        ("board", "document.body.dataset.section === 'board'"),
        (
            "switches",
            "document.querySelectorAll('.card').length === 3",
        ),
        ("quotas", "document.body.dataset.section === 'quotas'"),
        (
            "credentials",
            "document.body.dataset.section === 'credentials'",
        ),
        (
            "audit",
            "document.querySelectorAll('table.audit tbody tr').length >= 3",
        ),
    ] {
        navigate(&tab, &app.url(&format!("/admin/#{hash}"))).await;
        tab.wait_for(ready, hash, LONG).await;
        // Nothing renders a missing value as the word (replaceChildren makes a null "null").
        let stray = tab
            .eval(
                "(() => { const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT); \
                 const out = []; for (let n = w.nextNode(); n; n = w.nextNode()) { \
                 const t = n.textContent.trim(); if (t === 'null' || t === 'undefined') out.push(n.parentElement.outerHTML.slice(0, 120)); } \
                 return out; })()",
            )
            .await;
        assert_eq!(stray, json!([]), "#{hash} shows a stray null");
        screenshot(&tab, &format!("admin-{hash}-1280")).await;
        // On a phone: nothing wider than the screen (a long title wraps), every control big
        // enough to tap.
        viewport(&tab, 390, 844).await;
        // Shown again at this size (as a tap on its link would): its link is scrolled into
        // the strip of section links.
        tab.eval("document.body.dataset.section = ''; window.dispatchEvent(new HashChangeEvent('hashchange'))")
            .await;
        tab.wait_for(
            &format!("document.body.dataset.section === '{hash}' && ({ready})"),
            hash,
            LONG,
        )
        .await;
        assert_eq!(
            tab.eval("(() => { const a = document.querySelector('#nav a[aria-current=\"page\"]').getBoundingClientRect(); \
                      const n = document.querySelector('nav').getBoundingClientRect(); \
                      return a.left >= n.left - 1 && a.right <= n.right + 1; })()")
                .await,
            json!(true),
            "#{hash}: its section link is out of sight on a 390 px phone"
        );
        assert_eq!(
            tab.eval("document.documentElement.scrollWidth <= window.innerWidth")
                .await,
            json!(true),
            "#{hash} scrolls sideways on a 390 px phone"
        );
        assert_eq!(
            crate::phone_pages::small_controls(&tab).await,
            Vec::<String>::new(),
            "#{hash}: controls too small to tap on a phone"
        );
        screenshot(&tab, &format!("admin-{hash}-390")).await;
        viewport(&tab, 1280, 800).await;
    }
    let log = horst_operator::audit_log(&app.store, 0, 10).await.unwrap();
    let mine: Vec<(&str, &str)> = log
        .iter()
        .filter(|e| e.who == "page:olga")
        .map(|e| (e.action.as_str(), e.target.as_str()))
        .collect();
    assert_eq!(
        mine,
        [
            ("user_passwd", "dachs"),
            ("block", "dohlenfreund"),
            ("rollback", "gipfel"),
            ("promote", "rev-gipfel-b"),
            ("mark_read", message_id.as_str())
        ]
    );
    tab.close().await;
    browser.close().await;
}

/// Counts the page's POSTs by path from now on (`window.__posts`), the page's own fetch
/// doing the request.
const COUNT_POSTS: &str = "(() => { window.__posts = {}; const f = window.__fetch = window.__fetch || window.fetch; \
    window.fetch = (url, init) => { if (init && init.method === 'POST') { const p = new URL(url, location.href).pathname; \
    window.__posts[p] = (window.__posts[p] || 0) + 1; } return f(url, init); }; return true; })()";

/// A form submitted twice at once (a double click on its button, Enter pressed twice) sends
/// one request: on the account page one new key (the second made a key nobody saw and left
/// the page showing the other) and one password change (the second found the old password
/// gone and said "Das bisherige Passwort stimmt nicht" under a change that worked); on the
/// admin page one admin token (a second active token whose secret was never shown).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_submitted_twice_at_once_sends_one_request() {
    let app = web_app().await;
    app.person("wanderer", PASSWORD).await;
    horst_operator::set_operator_role(&app.store, "setup", "wanderer", true)
        .await
        .unwrap();
    let browser = launch().await;
    let tab = Tab::open(&browser, &app.url("/account/")).await;
    viewport(&tab, 1280, 800).await;
    tab.wait_for(
        "!document.getElementById('signed-out').hidden",
        "the sign-in form",
        LONG,
    )
    .await;
    fill(&tab, "#signin-name", "wanderer").await;
    fill(&tab, "#signin-password", PASSWORD).await;
    tab.eval(COUNT_POSTS).await;
    tab.eval("{ const f = document.getElementById('signin-form'); f.requestSubmit(); f.requestSubmit(); } true")
        .await;
    tab.wait_for(
        "!document.getElementById('signed-in').hidden && document.getElementById('quota-rows').children.length === 4",
        "the signed-in page",
        LONG,
    )
    .await;

    // A key.
    fill(&tab, "#key-label", "Laptop").await;
    tab.eval("{ const f = document.getElementById('key-form'); f.requestSubmit(); f.requestSubmit(); } true")
        .await;
    tab.wait_for(
        "!document.getElementById('new-key').hidden && document.getElementById('new-key-value').value && !document.getElementById('key-form').hasAttribute('aria-busy')",
        "the new key",
        LONG,
    )
    .await;
    // The password.
    fill(&tab, "#password-current", PASSWORD).await;
    fill(&tab, "#password-new", "ein ganz neues passwort").await;
    fill(&tab, "#password-repeat", "ein ganz neues passwort").await;
    tab.eval("{ const f = document.getElementById('password-form'); f.requestSubmit(); f.requestSubmit(); } true")
        .await;
    tab.wait_for(
        "document.getElementById('password-done').textContent && !document.getElementById('password-form').hasAttribute('aria-busy')",
        "the changed password",
        LONG,
    )
    .await;
    // Every answer is in: a second request would have been sent with the first.
    assert_eq!(
        tab.eval("window.__posts").await,
        json!({ "/api/account/sign-in": 1, "/api/account/keys": 1, "/api/account/password": 1 }),
        "the account page's requests for forms submitted twice"
    );
    assert_eq!(
        (
            text(&tab, "#password-current-error").await,
            tab.eval("document.getElementById('signed-in').hidden")
                .await
        ),
        (String::new(), json!(false)),
        "the page after the password change"
    );
    let keys = horst_identity::accounts::list_keys(&app.store, Some("wanderer"), false, 0, 10)
        .await
        .unwrap();
    assert_eq!(keys.items.len(), 1, "the keys of wanderer");

    // The admin page: one admin token.
    navigate(&tab, &app.url("/admin/")).await;
    tab.wait_for(
        "!document.getElementById('signed-out').hidden",
        "the admin sign-in forms",
        LONG,
    )
    .await;
    fill(&tab, "#acc-name", "wanderer").await;
    fill(&tab, "#acc-password", "ein ganz neues passwort").await;
    tab.eval(COUNT_POSTS).await;
    tab.eval("{ const f = document.getElementById('account-form'); f.requestSubmit(); f.requestSubmit(); } true")
        .await;
    tab.wait_for(
        "document.body.dataset.section === 'overview'",
        "the admin overview",
        LONG,
    )
    .await;
    navigate(&tab, &app.url("/admin/#credentials")).await;
    tab.wait_for(
        "document.body.dataset.section === 'credentials' && document.querySelector('form.inline button[type=submit]')",
        "the credentials",
        LONG,
    )
    .await;
    tab.eval(COUNT_POSTS).await;
    tab.eval("{ const f = [...document.querySelectorAll('form.inline')].find(f => /Create admin token/.test(f.textContent)); f.requestSubmit(); f.requestSubmit(); } true")
        .await;
    tab.wait_for(
        "document.getElementById('notice').textContent.includes('created')",
        "the new admin token",
        LONG,
    )
    .await;
    tab.wait_for(
        "document.body.dataset.section === 'credentials' && document.querySelector('form.inline button[type=submit]') && ![...document.querySelectorAll('form')].some(f => f.hasAttribute('aria-busy'))",
        "the credentials again",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("window.__posts").await,
        json!({ "/api/admin/admin-tokens": 1 }),
        "the admin page's requests for a form submitted twice"
    );
    let errors = tab.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "console errors {errors:#?}");
    tab.close().await;
    browser.close().await;
}

/// Counts the page's requests to `/api/admin/revisions/` by method and path from now on
/// (`window.__calls`), the page's own fetch doing the request.
const COUNT_REVISION_CALLS: &str = "(() => { window.__calls = {}; const f = window.__fetch = window.__fetch || window.fetch; \
    window.fetch = (url, init) => { const p = new URL(url, location.href).pathname; \
    if (p.startsWith('/api/admin/revisions/')) { const k = `${(init && init.method) || 'GET'} ${p}`; \
    window.__calls[k] = (window.__calls[k] || 0) + 1; } return f(url, init); }; return true; })()";

/// A one-click button on the admin page clicked twice at once (a double click) sends one
/// request, as a form does: "Recheck" queued two rechecks of the revision, "Checks" read its
/// checks twice. While its request is out the button is busy (aria-busy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_button_clicked_twice_at_once_sends_one_request() {
    let app = web_app().await;
    app.person("olga", PASSWORD).await;
    horst_operator::set_operator_role(&app.store, "setup", "olga", true)
        .await
        .unwrap();
    revision(&app, "rev-gipfel-a", "gipfel", 1_796_000_000_000).await;
    // Its map and replay, as a submission stores them: what a recheck queues (no worker runs
    // it here).
    let _: () = app
        .store
        .conn()
        .hset_multiple(
            app.store.key("rev:rev-gipfel-a"),
            &[("map", "gipfel"), ("replay", "{}")],
        )
        .await
        .unwrap();
    let browser = launch().await;
    let tab = Tab::open(&browser, &app.url("/admin/")).await;
    viewport(&tab, 1366, 850).await;
    tab.wait_for(
        "!document.getElementById('signed-out').hidden",
        "the admin sign-in forms",
        LONG,
    )
    .await;
    fill(&tab, "#acc-name", "olga").await;
    fill(&tab, "#acc-password", PASSWORD).await;
    tab.eval("document.getElementById('account-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.body.dataset.section === 'overview'",
        "the admin overview",
        LONG,
    )
    .await;
    navigate(&tab, &app.url("/admin/#levels")).await;
    tab.wait_for(
        "document.querySelector(\"tr[data-revision='rev-gipfel-a'] button[data-action='recheck']\")",
        "the revision",
        LONG,
    )
    .await;
    tab.eval(COUNT_REVISION_CALLS).await;

    // Checks: the button is busy until the checks are shown.
    let checks_busy = tab
        .eval("(() => { const b = [...document.querySelectorAll(\"tr[data-revision='rev-gipfel-a'] button\")].find(b => b.textContent === 'Checks'); \
               b.click(); b.click(); return b.getAttribute('aria-busy'); })()")
        .await;
    tab.wait_for(
        "/Checks of rev-gipfel-a/.test(document.getElementById('checks-detail').textContent) && !document.querySelector('button[aria-busy]')",
        "the checks",
        LONG,
    )
    .await;
    // Recheck.
    let recheck_busy = tab
        .eval("(() => { const b = document.querySelector(\"tr[data-revision='rev-gipfel-a'] button[data-action='recheck']\"); \
               b.click(); b.click(); return b.getAttribute('aria-busy'); })()")
        .await;
    tab.wait_for(
        "document.getElementById('notice').textContent && \
         document.querySelector(\"tr[data-revision='rev-gipfel-a'] button[data-action='recheck']\") && !document.querySelector('button[aria-busy]')",
        "the queued recheck",
        LONG,
    )
    .await;
    let said = text(&tab, "#notice").await;
    assert!(
        said.contains("Recheck of rev-gipfel-a queued"),
        "the notice after Recheck: {said}"
    );
    screenshot(&tab, "admin-recheck-queued-1366").await;
    viewport(&tab, 390, 844).await;
    screenshot(&tab, "admin-recheck-queued-390").await;
    // Every answer is in: a second request would have been sent with the first.
    assert_eq!(
        tab.eval("window.__calls").await,
        json!({
            "GET /api/admin/revisions/rev-gipfel-a/checks": 1,
            "POST /api/admin/revisions/rev-gipfel-a/recheck": 1,
        }),
        "the admin page's requests for buttons clicked twice"
    );
    assert_eq!(
        (checks_busy, recheck_busy),
        (json!("true"), json!("true")),
        "the Checks and Recheck buttons while their requests were out"
    );
    let errors = tab.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "console errors {errors:#?}");
    tab.close().await;
    browser.close().await;
}

/// Counts the page's requests by method and path from now on (`window.__calls`), the page's
/// own fetch doing the request; GETs too, so a second click that only reads is seen.
const COUNT_CALLS: &str = "(() => { window.__calls = {}; const f = window.__fetch = window.__fetch || window.fetch; \
    window.fetch = (url, init) => { const k = `${(init && init.method) || 'GET'} ${new URL(url, location.href).pathname}`; \
    window.__calls[k] = (window.__calls[k] || 0) + 1; return f(url, init); }; return true; })()";

/// The account page's buttons clicked twice at once (a double click) send one request, as
/// its forms do: "Ja, widerrufen" revoked once, and "Abmelden" signed out twice (the second
/// with the session the first ended) and read the session twice. While a sign-out is out
/// its button is busy (aria-busy).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_button_clicked_twice_at_once_sends_one_request() {
    let app = web_app().await;
    app.person("wanderer", PASSWORD).await;
    let browser = launch().await;
    let tab = signed_in_tab(&browser, &app, (1366, 768)).await;
    tab.eval("document.getElementById('key-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.querySelectorAll('#key-rows tr').length === 1",
        "the new key in the list",
        LONG,
    )
    .await;
    click(&tab, "#hide-key").await;

    // Revoke: the question, then yes twice.
    tab.eval(COUNT_CALLS).await;
    tab.eval("(() => { const b = document.querySelector('#key-rows button.danger'); b.click(); b.click(); return true; })()")
        .await;
    tab.wait_for(
        "!!document.querySelector('#key-rows [data-confirm]')",
        "the revoke question",
        LONG,
    )
    .await;
    // The question takes room in the row; the key's prefix and its dates stay on one line
    // each (at 1366 px the prefix broke into "gcv_201f" / "e76e…").
    let lines = tab
        .eval("[...document.querySelectorAll('#key-rows code, #key-rows td:nth-child(3), #key-rows td:nth-child(4)')] \
               .map((e) => { const r = document.createRange(); r.selectNodeContents(e); \
               return `${e.textContent}: ${new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top))).size}`; })")
        .await;
    screenshot(&tab, "account-revoke-asks-1366").await;
    for line in lines.as_array().unwrap() {
        assert!(
            line.as_str().unwrap().ends_with(": 1"),
            "broken across lines while the revoke question is open at 1366 px: {lines}"
        );
    }
    tab.eval("(() => { const b = document.querySelector('#key-rows [data-confirm]'); b.click(); b.click(); return true; })()")
        .await;
    tab.wait_for(
        "!document.getElementById('no-keys').hidden",
        "no active keys",
        LONG,
    )
    .await;
    // Sign-out.
    let busy = tab
        .eval("(() => { const b = document.getElementById('sign-out'); b.click(); b.click(); return b.getAttribute('aria-busy'); })()")
        .await;
    tab.wait_for(
        "!document.getElementById('signed-out').hidden && !document.querySelector('[aria-busy]') \
         && document.getElementById('notice').textContent.includes('abgemeldet')",
        "the signed-out page",
        LONG,
    )
    .await;
    // Let a second round of requests (a second start()) come in before counting.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let calls = tab.eval("window.__calls").await;
    for (call, n) in [
        ("POST /api/account/keys/", 1),
        ("POST /api/account/sign-out", 1),
        ("GET /api/account/session", 1),
    ] {
        let seen: u64 = calls
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.starts_with(call))
            .map(|(_, v)| v.as_u64().unwrap())
            .sum();
        assert_eq!(seen, n, "{call} after buttons clicked twice: {calls}");
    }
    assert_eq!(
        busy,
        json!("true"),
        "the sign-out button while its request was out"
    );
    let errors = tab.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "console errors {errors:#?}");
    tab.close().await;
    browser.close().await;
}

/// A person who chose a display name is greeted by it, right to left when it is Arabic (the
/// greeting said the sign-in name); the sign-in name stays on the page, in the facts, and the
/// password rules still check against it (a new password that is the sign-in name with a
/// few digits is refused before it is sent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_account_page_greets_by_the_display_name_and_keeps_the_sign_in_name() {
    let app = web_app().await;
    app.person("wanderer", PASSWORD).await;
    const SHOWN: &str = "قمة الجبل";
    horst_identity::accounts::set_account_field(&app.store, "wanderer", "displayName", SHOWN)
        .await
        .unwrap();
    let browser = launch().await;
    let tab = signed_in_tab(&browser, &app, (390, 844)).await;
    assert_eq!(text(&tab, "#me-name").await, SHOWN, "the greeting");
    assert_eq!(
        tab.eval("getComputedStyle(document.getElementById('me-name')).direction")
            .await,
        "rtl",
        "the Arabic name reads right to left in its <bdi>"
    );
    assert_eq!(
        text(&tab, "#me-login").await,
        "wanderer",
        "the sign-in name"
    );
    screenshot(&tab, "account-display-name-390").await;
    fill(&tab, "#password-current", PASSWORD).await;
    fill(&tab, "#password-new", "wanderer2026").await;
    fill(&tab, "#password-repeat", "wanderer2026").await;
    tab.eval("document.getElementById('password-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.getElementById('password-new-error').textContent.includes('nicht der Name')",
        "the sign-in name refused as the new password",
        LONG,
    )
    .await;
    let errors = tab.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "console errors {errors:#?}");
}

/// A tab of `size` on the account page, signed in as "wanderer" through its form, its quotas
/// read.
async fn signed_in_tab(
    browser: &std::sync::Arc<horst_house::cdp::Browser>,
    app: &TestApp,
    (width, height): (u32, u32),
) -> Tab {
    let tab = Tab::open(browser, &app.url("/account/")).await;
    viewport(&tab, width, height).await;
    tab.wait_for(
        "!document.getElementById('signed-out').hidden",
        "the sign-in form",
        LONG,
    )
    .await;
    fill(&tab, "#signin-name", "wanderer").await;
    fill(&tab, "#signin-password", PASSWORD).await;
    tab.eval("document.getElementById('signin-form').requestSubmit()")
        .await;
    tab.wait_for(
        "!document.getElementById('signed-in').hidden && document.getElementById('quota-rows').children.length === 4",
        "the signed-in page",
        LONG,
    )
    .await;
    tab
}

/// A key made more than five minutes after the sign-in: the page shows a password field
/// beside the label (the server said `reauthenticate`), a wrong password is said at the
/// field, the right one makes the key, and the field goes away again.
#[tokio::test]
async fn a_late_key_asks_for_the_password_on_the_page() {
    let app = web_app().await;
    app.person("wanderer", PASSWORD).await;
    let browser = launch().await;
    let tab = signed_in_tab(&browser, &app, (390, 844)).await;
    app.store.set_clock_offset_ms(6 * 60 * 1000);
    fill(&tab, "#key-label", "Laptop").await;
    click(&tab, "#create-key").await;
    tab.wait_for(
        "!document.getElementById('key-password-field').hidden && document.activeElement.id === 'key-password'",
        "the password field, focused",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("document.getElementById('new-key').hidden").await,
        Value::Bool(true),
        "no key yet"
    );
    screenshot(&tab, "account-key-password-390").await;
    fill(&tab, "#key-password", "falsch falsch").await;
    click(&tab, "#create-key").await;
    tab.wait_for(
        "document.getElementById('key-password-error').textContent.includes('stimmt nicht')",
        "the wrong password said at its field",
        LONG,
    )
    .await;
    fill(&tab, "#key-password", PASSWORD).await;
    click(&tab, "#create-key").await;
    tab.wait_for(
        "!document.getElementById('new-key').hidden && document.getElementById('new-key-value').value.startsWith('gcv_')",
        "the new key shown once",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("document.getElementById('key-password-field').hidden")
            .await,
        Value::Bool(true),
        "the password field goes away with the key made"
    );
    assert_eq!(
        tab.eval("document.getElementById('key-password').value")
            .await,
        Value::String(String::new()),
        "the password is not kept in the page"
    );
    // The browser logs the two refusals the page asked for (403, 401) as failed loads;
    // nothing else may be said.
    let errors: Vec<String> = tab
        .errors
        .lock()
        .unwrap()
        .iter()
        .filter(|e| !(e.contains("\"source\":\"network\"") && e.contains("/api/account/keys")))
        .cloned()
        .collect();
    assert!(errors.is_empty(), "console errors {errors:#?}");
}

/// The password change on the page offers to revoke every agent key in the same step (a
/// checkbox that says why, shown only while there are keys), and says afterwards which
/// keys still work, by prefix and label (a label as text: the keys may be someone else's),
/// or that they were revoked. At 390 and 1280 wide (screenshots `account-password-keys-*`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_change_on_the_page_names_the_keys_that_stay_and_revokes_them_when_asked() {
    use crate::security::key_works;
    let app = web_app().await;
    app.person("wanderer", PASSWORD).await;
    let mut keys = Vec::new();
    for label in ["Laptop", "<img src=x onerror=alert(1)>"] {
        let k = horst_identity::accounts::create_key(&app.store, "wanderer", Some(label))
            .await
            .unwrap();
        keys.push(k);
    }
    let browser = launch().await;
    let tab = signed_in_tab(&browser, &app, (390, 844)).await;
    tab.wait_for(
        "!document.getElementById('password-keys-field').hidden && document.getElementById('password-keys-count').textContent === '2'",
        "the offer to revoke both keys",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("document.getElementById('password-revoke-keys').checked")
            .await,
        Value::Bool(false),
        "keys stay unless asked"
    );
    tab.eval("document.getElementById('password-card').scrollIntoView()")
        .await;
    screenshot(&tab, "account-password-keys-offer-390").await;
    assert_eq!(
        crate::phone_pages::small_controls(&tab).await,
        Vec::<String>::new(),
        "controls too small to tap on a phone (account-password-keys-offer-390)"
    );

    // Changed without the box: both keys still work, and the page says so, by name.
    const SECOND: &str = "ein neues passwort fuer wanderer";
    fill(&tab, "#password-current", PASSWORD).await;
    fill(&tab, "#password-new", SECOND).await;
    fill(&tab, "#password-repeat", SECOND).await;
    tab.eval("document.getElementById('password-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.getElementById('password-done').textContent.includes('gelten weiter')",
        "the keys that stay, named",
        LONG,
    )
    .await;
    let done = text(&tab, "#password-done").await;
    for k in &keys {
        assert!(done.contains(&k.prefix), "{done}");
        assert!(key_works(&app, &k.key).await);
    }
    assert!(done.contains("„<img src=x onerror=alert(1)>“"), "{done}");
    tab.eval("document.getElementById('password-card').scrollIntoView()")
        .await;
    screenshot(&tab, "account-password-keys-stay-390").await;
    viewport(&tab, 1280, 800).await;
    tab.eval("document.getElementById('password-card').scrollIntoView()")
        .await;
    screenshot(&tab, "account-password-keys-stay-1280").await;

    // Changed with the box: both keys are refused at once, and the offer goes away.
    fill(&tab, "#password-current", SECOND).await;
    fill(&tab, "#password-new", "und noch ein anderes passwort").await;
    fill(&tab, "#password-repeat", "und noch ein anderes passwort").await;
    click(&tab, "#password-revoke-keys").await;
    tab.eval("document.getElementById('password-form').requestSubmit()")
        .await;
    tab.wait_for(
        "document.getElementById('password-done').textContent.includes('2 Agent-Schlüssel sind widerrufen') && document.getElementById('password-keys-field').hidden && !document.getElementById('no-keys').hidden",
        "the keys revoked with the change",
        LONG,
    )
    .await;
    for k in &keys {
        assert!(!key_works(&app, &k.key).await, "{} still works", k.prefix);
    }
    tab.eval("document.getElementById('password-card').scrollIntoView()")
        .await;
    screenshot(&tab, "account-password-keys-revoked-1280").await;
    assert_eq!(
        tab.eval("document.querySelectorAll('img').length").await,
        json!(0),
        "a label is text"
    );
    // No page is wider than the phone's screen.
    viewport(&tab, 390, 844).await;
    assert_eq!(
        tab.eval("document.documentElement.scrollWidth <= 390")
            .await,
        Value::Bool(true)
    );
    // Signing out everywhere ends this tab's session too, and says so.
    tab.eval("document.getElementById('everywhere-card').scrollIntoView()")
        .await;
    screenshot(&tab, "account-everywhere-390").await;
    click(&tab, "#sign-out-everywhere").await;
    tab.wait_for(
        "!document.getElementById('signed-out').hidden && document.getElementById('notice').textContent.includes('überall abgemeldet')",
        "signed out everywhere",
        LONG,
    )
    .await;
    let errors = tab.errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "console errors {errors:#?}");
}

/// A sign-up from a network that was told of as many taken names as it may (or made as many
/// accounts) is `network_cap`: the form says so in words, with the hours to wait and the way
/// round it (the operator). It said "Etwas ist schiefgegangen", which tells nobody what to do.
#[tokio::test]
async fn the_sign_up_form_says_when_the_network_may_make_no_more_accounts() {
    let app = spawn_app_with(|c| {
        c.server.web_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/web").into();
        c.gateway.sign_up = true;
        // Not the attempts' limit (10 a minute): the network's cap is what the page says.
        c.gateway.sign_in_per_ip_per_minute = 100;
    })
    .await;
    app.person("wanderer", PASSWORD).await;
    // Ten taken names asked about from the browser's own network (it connects from 127.0.0.1).
    for _ in 0..horst_identity::people::TAKEN_NAMES_PER_NETWORK {
        let r = app
            .http
            .post(app.url("/api/account/sign-up"))
            .header("sec-fetch-site", "same-origin")
            .json(&json!({ "name": "wanderer", "password": PASSWORD }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 409);
    }
    let browser = launch().await;
    let tab = Tab::open(&browser, &app.url("/account/")).await;
    viewport(&tab, 390, 844).await;
    tab.wait_for(
        "!document.getElementById('signup-form').hidden",
        "the sign-up form",
        LONG,
    )
    .await;
    fill(&tab, "#signup-name", "bergfink").await;
    fill(&tab, "#signup-password", PASSWORD).await;
    fill(&tab, "#signup-repeat", PASSWORD).await;
    tab.eval("document.getElementById('signup-form').requestSubmit()")
        .await;
    let said = tab
        .wait_for(
            "document.getElementById('signup-error').textContent",
            "the sign-up's refusal",
            LONG,
        )
        .await;
    let said = said.as_str().unwrap_or_default();
    assert!(
        said.contains("deinem Netz") && said.contains("24 Stunden") && said.contains("Betreiber"),
        "{said}"
    );
    tab.eval("document.getElementById('signup-error').scrollIntoView({ block: 'center' })")
        .await;
    screenshot(&tab, "account-sign-up-network-cap-390").await;
    // The browser logs the refused request itself; nothing else.
    let errors = tab.errors.lock().unwrap().clone();
    assert!(
        errors
            .iter()
            .all(|e| e.contains("status of 429") && e.contains("/api/account/sign-up")),
        "console errors {errors:#?}"
    );
}
