//! The operator's page (`/admin`) as an operator uses it, in headless Chromium against a real
//! redis-server: a section's filters are kept in the address (a reload and Back show them
//! again), and a level's untrusted title in the levels table breaks at its spaces, cut after
//! three lines with the whole title in its tooltip. Screenshots go to
//! `target/screenshots/admin/`.

use std::time::Duration;

use horst_queue::JobKind;
use redis::AsyncCommands;
use serde_json::json;

use crate::job_control::{admit, job_view_app, signed_in_job_view};

const LONG: Duration = Duration::from_secs(60);

/// The fields of the filter form shown whose label is not visible text beside them, by name.
const UNLABELLED: &str =
    "[...document.querySelectorAll('form.filters input, form.filters select')]\
  .filter(f => { const l = f.closest('label'); \
    return !l || !l.checkVisibility() || !l.textContent.replace(f.textContent, '').trim(); })\
  .map(f => f.name)";

/// The job view's filters are in the address (`#jobs?state=queued&account=anna`): a reload
/// shows the same filtered list with the filters set, Back brings the filters before, and a
/// hand-edited address with a state no job has shows the unfiltered list. The levels
/// section's filters likewise. Before, the filters lived only in the page's memory: a reload
/// or Back showed the unfiltered list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_filters_are_kept_in_the_address_through_a_reload_and_back() {
    let app = job_view_app().await;
    let job = admit(
        &app,
        JobKind::Simulate,
        "anna",
        crate::harness::LEVEL_MAP.into(),
    )
    .await;
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.viewport(1366, 768).await;
    let scope = "((document.querySelector('#job-live > p.muted') || {}).textContent || '')";
    let field = |name: &str| format!("document.querySelector('form.filters [name={name}]').value");
    let shows = |hash: &str, state: &str, account: &str, said: &str| {
        format!(
            "location.hash === {hash:?} && document.body.dataset.section === 'jobs' \
             && {} === {state:?} && {} === {account:?} && {scope}.startsWith({said:?}) \
             && document.querySelector('#job-live tbody')?.textContent.includes({job:?})",
            field("state"),
            field("account")
        )
    };
    // Every filter field is named by a visible label (a placeholder is gone once typed in).
    assert_eq!(
        tab.eval(UNLABELLED).await,
        json!([]),
        "the job view's filters"
    );
    // A state chosen, then an account typed: each goes into the address.
    tab.eval(
        "(s => { s.value = 'queued'; s.dispatchEvent(new Event('change')); })\
         (document.querySelector('form.filters select[name=state]'))",
    )
    .await;
    tab.wait_for(
        &shows("#jobs?state=queued", "queued", "", "Jobs waiting"),
        "the queued jobs, the state in the address",
        LONG,
    )
    .await;
    tab.eval(
        "document.querySelector('form.filters input[name=account]').value = 'anna'; \
         document.querySelector('form.filters').requestSubmit()",
    )
    .await;
    let annas = shows(
        "#jobs?state=queued&account=anna",
        "queued",
        "anna",
        "Recent jobs of anna.",
    );
    tab.wait_for(&annas, "anna's queued jobs, both in the address", LONG)
        .await;
    // A reload shows the same list, the filters set.
    tab.eval("window.beforeReload = true; location.reload()")
        .await;
    tab.wait_for(
        &format!("!window.beforeReload && {annas}"),
        "anna's queued jobs after a reload",
        LONG,
    )
    .await;
    tab.screenshot("admin", "jobs-filtered-after-reload-1366x768")
        .await;
    // Back: the filters before, then none.
    tab.eval("history.back()").await;
    tab.wait_for(
        &shows("#jobs?state=queued", "queued", "", "Jobs waiting"),
        "the filters before anna's, after Back",
        LONG,
    )
    .await;
    tab.eval("history.back()").await;
    tab.wait_for(
        &shows("#jobs", "", "", "Jobs waiting"),
        "the unfiltered job view, after Back again",
        LONG,
    )
    .await;
    // A hand-edited address: an unknown state is left out, a known kind is kept.
    tab.eval("location.hash = '#jobs?state=%3Cb%3Ebad&kind=submit'")
        .await;
    tab.wait_for(
        &format!(
            "{} === '' && {} === 'submit' && {scope}.startsWith('Jobs waiting')",
            field("state"),
            field("kind")
        ),
        "the job view of a hand-edited address",
        LONG,
    )
    .await;
    // The levels section keeps its filters the same way.
    tab.eval("location.hash = '#levels?name=gipfel&state=labor'")
        .await;
    let levels = |name: &str| {
        format!(
            "document.body.dataset.section === 'levels' \
             && document.querySelector('form.filters input[name=name]')?.value === {name:?} \
             && document.querySelector('form.filters select[name=state]').value === 'labor'"
        )
    };
    tab.wait_for(
        &levels("gipfel"),
        "the levels filtered from the address",
        LONG,
    )
    .await;
    assert_eq!(tab.eval(UNLABELLED).await, json!([]), "the levels filters");
    tab.eval(
        "document.querySelector('form.filters input[name=name]').value = 'dohle'; \
         document.querySelector('form.filters').requestSubmit()",
    )
    .await;
    tab.wait_for(
        &format!(
            "location.hash === '#levels?name=dohle&state=labor' && {}",
            levels("dohle")
        ),
        "the changed level filter in the address",
        LONG,
    )
    .await;
    tab.eval("window.beforeReload = true; location.reload()")
        .await;
    tab.wait_for(
        &format!("!window.beforeReload && {}", levels("dohle")),
        "the level filter after a reload",
        LONG,
    )
    .await;
    tab.assert_no_errors();
}

/// A revision of `level` in the Labor (as accounts_e2e stores one) whose map is named `title`.
async fn titled_revision(app: &crate::harness::TestApp, id: &str, level: &str, title: &str) {
    let map =
        crate::harness::LEVEL_MAP.replacen("name: Erste Schritte", &format!("name: {title}"), 1);
    assert_ne!(map, crate::harness::LEVEL_MAP, "the map's name line moved");
    crate::accounts_e2e::revision(app, id, level, 1_796_000_000_000).await;
    let s = &app.store;
    let _: () = s
        .conn()
        .hset(s.key(&format!("rev:{id}")), "map", map)
        .await
        .unwrap();
}

/// Each word of `selector`'s text that the browser laid out on more than one line (broken
/// inside the word), with the element's width and its title attribute.
const BROKEN_WORDS: &str = r#"(sel => { const e = document.querySelector(sel); if (!e) return null;
  const text = e.firstChild; const broken = []; const re = /\S+/g; let m;
  while ((m = re.exec(text.textContent))) {
    const r = document.createRange(); r.setStart(text, m.index); r.setEnd(text, m.index + m[0].length);
    const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
    if (tops.size > 1) broken.push(m[0]);
  }
  const b = e.getBoundingClientRect();
  return { broken, width: b.width, title: e.getAttribute('title'), rem: parseFloat(getComputedStyle(document.documentElement).fontSize) };
})"#;

/// Opens a section of the signed-in admin page and waits until `ready`.
async fn open_section(tab: &crate::browser::Tab, hash: &str, ready: &str, what: &str) {
    tab.eval(&format!("location.hash = '{hash}'")).await;
    tab.wait_for(ready, what, LONG).await;
}

/// Opens the signed-in admin page's overview and waits until its facts are shown.
async fn open_overview(tab: &crate::browser::Tab) {
    open_section(
        tab,
        "#overview",
        "document.body.dataset.section === 'overview' && !!document.querySelector('#view .kv')",
        "the overview",
    )
    .await;
}

/// The tab at `w` x `h`, laid out (two frames on).
async fn settled_at(tab: &crate::browser::Tab, w: u32, h: u32) {
    tab.viewport(w, h).await;
    tab.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
        .await;
}

/// At `w` px neither the page nor the section's (first) table scrolls sideways.
async fn no_sideways_scroll(tab: &crate::browser::Tab, w: u32, table: &str) {
    assert_eq!(
        tab.eval("document.documentElement.scrollWidth <= innerWidth")
            .await,
        json!(true),
        "at {w} px the page scrolls sideways"
    );
    let wrap = tab
        .eval("(t => [t.scrollWidth, t.clientWidth])(document.querySelector('.table-wrap'))")
        .await;
    assert!(
        wrap[0].as_f64() <= wrap[1].as_f64().map(|c| c + 1.0),
        "at {w} px the {table} table scrolls sideways: {wrap}"
    );
}

/// A level's title (untrusted, up to 60 characters) in the operator's levels table breaks
/// at its spaces at 1366, 1280 and 390 px: no word of it is cut across two lines; the title
/// takes at most 10.5rem (one without spaces is broken, not widening the table), and the whole
/// title is in its tooltip. Before, `overflow-wrap: anywhere` let the table squeeze the column
/// and break the words mid-word.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_level_title_in_the_admin_levels_table_breaks_at_its_spaces() {
    let app = job_view_app().await;
    let spaced = "Über Gletscherspalten zum eisigen Nordgrat der Dohlen";
    let solid = format!("Gipfel{}", "sturm".repeat(10));
    titled_revision(&app, "rev-grat-a", "nordgrat", spaced).await;
    titled_revision(&app, "rev-sturm-a", "sturm", &solid).await;
    let (_browser, tab) = signed_in_job_view(&app).await;
    open_section(
        &tab,
        "#levels",
        "document.querySelectorAll('tr[data-revision] .title').length === 2",
        "the two titled revisions",
    )
    .await;
    for (w, h) in [(1366, 768), (1280, 800), (390, 844)] {
        settled_at(&tab, w, h).await;
        let grat = tab
            .eval(&format!(
                "{BROKEN_WORDS}(\"tr[data-revision='rev-grat-a'] .title\")"
            ))
            .await;
        assert_eq!(
            grat["broken"],
            json!([]),
            "at {w} px words of the title are cut: {grat}"
        );
        assert_eq!(grat["title"], json!(spaced), "at {w} px");
        let sturm = tab
            .eval(&format!(
                "{BROKEN_WORDS}(\"tr[data-revision='rev-sturm-a'] .title\")"
            ))
            .await;
        let most = 10.5 * sturm["rem"].as_f64().unwrap() + 0.5;
        assert!(
            sturm["width"].as_f64().unwrap() <= most,
            "at {w} px a title without spaces is wider than 10.5rem: {sturm}"
        );
        assert_eq!(sturm["title"], json!(solid), "at {w} px");
        // Nor does a title make the table scroll at 1366 or 1280 px (the Check column went
        // under the Actions column that stays in view; at 1280 px it did until the headings
        // and the check's words could break at their spaces).
        no_sideways_scroll(&tab, w, "levels").await;
        tab.screenshot("admin", &format!("levels-long-titles-{w}x{h}"))
            .await;
    }
    tab.assert_no_errors();
}

/// The job view's pager is in the address with the filters (`#jobs?state=cancelled&pages=100,200`):
/// Next twice, then a reload shows the third page with Previous on; Back shows the second
/// page, Previous the first, and a hand-edited `pages` that does not grow is the first page.
/// Before, the pages shown lived only in the page's memory: a reload or Back went back to
/// the first page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_job_views_page_is_kept_in_the_address_through_a_reload_and_back() {
    let app = job_view_app().await;
    // 230 cancelled jobs: three pages of 100 of every account's cancelled jobs.
    crate::job_control::cancelled_jobs(&app, 230, |_| "test".into()).await;
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.viewport(1366, 768).await;
    tab.eval("location.hash = '#jobs?state=cancelled'").await;
    // The first job's id of the list shown and the address, once a list of `rows` rows is
    // shown at `hash`.
    let shown = |hash: &str, rows: usize| {
        format!(
            "location.hash === {hash:?} && document.body.dataset.section === 'jobs' \
             && document.querySelectorAll('#job-live tbody tr').length === {rows} \
             && document.querySelector('#job-live tbody th code.id').textContent"
        )
    };
    let button = |name: &str| {
        format!(
            "[...document.querySelectorAll('#job-live .pager button')].find(b => b.textContent === {name:?})"
        )
    };
    let first = tab
        .wait_for(&shown("#jobs?state=cancelled", 100), "the first page", LONG)
        .await;
    tab.eval(&format!("{}.click()", button("Next"))).await;
    let second = tab
        .wait_for(
            &shown("#jobs?state=cancelled&pages=100", 100),
            "the second page, its place in the address",
            LONG,
        )
        .await;
    assert_ne!(first, second);
    tab.eval(&format!("{}.click()", button("Next"))).await;
    let third = tab
        .wait_for(
            &shown("#jobs?state=cancelled&pages=100,200", 30),
            "the third page, its place in the address",
            LONG,
        )
        .await;
    // A reload shows the third page, with Previous to go back.
    tab.eval("window.beforeReload = true; location.reload()")
        .await;
    let again = tab
        .wait_for(
            &format!(
                "!window.beforeReload && !{}.disabled && {}.disabled && {}",
                button("Previous"),
                button("Next"),
                shown("#jobs?state=cancelled&pages=100,200", 30)
            ),
            "the third page after a reload",
            LONG,
        )
        .await;
    assert_eq!(again, third, "a reload showed another page");
    tab.screenshot("admin", "jobs-third-page-after-reload-1366x768")
        .await;
    // Back: the second page; Previous: the first.
    tab.eval("history.back()").await;
    let back = tab
        .wait_for(
            &shown("#jobs?state=cancelled&pages=100", 100),
            "the second page after Back",
            LONG,
        )
        .await;
    assert_eq!(back, second);
    tab.eval(&format!("{}.click()", button("Previous"))).await;
    let start = tab
        .wait_for(
            &format!(
                "{}.disabled && {}",
                button("Previous"),
                shown("#jobs?state=cancelled", 100)
            ),
            "the first page after Previous",
            LONG,
        )
        .await;
    assert_eq!(start, first);
    // A hand-edited address whose pages do not grow shows the first page.
    tab.eval("location.hash = '#jobs?state=cancelled&pages=200,100,x'")
        .await;
    let edited = tab
        .wait_for(
            &format!(
                "{}.disabled && {}",
                button("Previous"),
                shown("#jobs?state=cancelled&pages=200,100,x", 100)
            ),
            "the first page of a hand-edited address",
            LONG,
        )
        .await;
    assert_eq!(edited, first);
    tab.assert_no_errors();
}

/// The messages' page of unread ones is in the address (`#messages?offset=50`), as the jobs'
/// and the audit log's are: Older unread, then a reload shows the same messages, Back the
/// newest ones. Before, the offset lived only in the page's memory: a reload or Back showed
/// the first page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_messages_page_is_kept_in_the_address_through_a_reload_and_back() {
    let app = job_view_app().await;
    let s = &app.store;
    let mut pipe = redis::pipe();
    for i in 0..120u64 {
        let id = format!("m{i:03}");
        // The newest in Arabic: it reads from the right, as a note of its own.
        let (subject, message) = if i == 119 {
            ("المستوى لا يعمل", "الطائر يسقط عند الحافة 3")
        } else {
            ("s", "m")
        };
        pipe.hset_multiple(
            horst_gateway::keys::contact_msg(s, &id),
            &[
                ("account", "anna"),
                ("category", "bug"),
                ("subject", subject),
                ("message", message),
                ("createdAtMs", &(1_796_000_000_000 + i).to_string()),
                ("read", "0"),
            ],
        )
        .ignore();
        pipe.zadd(
            horst_gateway::keys::contact_all(s),
            &id,
            1_796_000_000_000 + i,
        )
        .ignore();
        pipe.sadd(horst_gateway::keys::contact_unread(s), &id)
            .ignore();
    }
    let _: () = pipe.query_async(&mut s.conn()).await.unwrap();
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.viewport(1366, 768).await;
    tab.eval("location.hash = '#messages'").await;
    // The address and the first message's id, once a page of 50 is shown.
    let first = "(document.querySelector('#view article.message') || {}).dataset?.id";
    let shown = format!(
        "document.body.dataset.section === 'messages' && !document.querySelector('#view .loading') \
         && document.querySelectorAll('#view article.message.unread').length === 50 \
         && [location.hash, {first}]"
    );
    let newest = tab
        .wait_for(&shown, "the newest unread messages", LONG)
        .await;
    assert_eq!(newest, json!(["#messages", "m119"]), "{newest}");
    // An Arabic note's subject and text run from the right; the meta line stays left to right.
    // Before, they ran left to right like the page ("3" stood at the wrong end).
    assert_eq!(
        tab.eval("[...document.querySelector('#view article.message').querySelectorAll('.subject, .meta, .body')].map(e => getComputedStyle(e).direction)")
            .await,
        json!(["rtl", "ltr", "rtl"])
    );
    tab.eval("[...document.querySelectorAll('#view .pager button')].find(b => b.textContent === 'Older unread').click()")
        .await;
    let older = tab
        .wait_for(
            &format!("location.hash === '#messages?offset=50' && {first} === 'm069' && {shown}"),
            "the older unread messages, their place in the address",
            LONG,
        )
        .await;
    tab.eval("window.beforeReload = true; location.reload()")
        .await;
    let again = tab
        .wait_for(
            &format!("!window.beforeReload && {shown}"),
            "the older messages after a reload",
            LONG,
        )
        .await;
    assert_eq!(again, older, "a reload showed other messages");
    tab.eval("history.back()").await;
    let back = tab
        .wait_for(
            &format!("location.hash === '#messages' && {first} === 'm119' && {shown}"),
            "the newest messages after Back",
            LONG,
        )
        .await;
    assert_eq!(back, newest);
    // An address past the last unread message shows the last page, in its place.
    tab.eval("location.hash = '#messages?offset=500'").await;
    tab.wait_for(
        "location.hash === '#messages?offset=100' && document.body.dataset.section === 'messages' \
         && !document.querySelector('#view .loading') \
         && document.querySelectorAll('#view article.message.unread').length === 20",
        "the last page for an address past the end",
        LONG,
    )
    .await;
    tab.assert_no_errors();
}

/// The audit log's page is in the address (`#audit?offset=50&of=…`): Older, then a reload
/// shows the same entries, Back the newest ones. Before, the offset lived only in the page's
/// memory: a reload or Back showed the newest page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_logs_page_is_kept_in_the_address_through_a_reload_and_back() {
    let app = job_view_app().await;
    for n in 0..120 {
        horst_operator::audit(
            &app.store,
            "olga",
            horst_operator::Action::JobCancel,
            &format!("job_{n:04}"),
            horst_operator::Detail::JobCancel {
                reason: "test",
                was: "queued",
            },
        )
        .await
        .unwrap();
    }
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.viewport(1366, 768).await;
    tab.eval("location.hash = '#audit'").await;
    // The address and the first entry's target, once the log's page is shown.
    let shown = "document.body.dataset.section === 'audit' && !document.querySelector('#view .loading') \
                 && document.querySelectorAll('#view tbody tr').length === 50 \
                 && [location.hash, [...document.querySelectorAll('#view tbody tr')].map(r => r.cells[3].textContent).find(t => t.startsWith('job_'))]";
    let newest = tab.wait_for(shown, "the newest entries", LONG).await;
    assert_eq!(newest[0], json!("#audit"), "{newest}");
    tab.eval("[...document.querySelectorAll('#view .pager button')].find(b => b.textContent === 'Older').click()")
        .await;
    // The address can change before the rows do: wait for other rows than the newest.
    let first_row = "[...document.querySelectorAll('#view tbody tr')].map(r => r.cells[3].textContent).find(t => t.startsWith('job_'))";
    let older = tab
        .wait_for(
            &format!(
                "location.hash.startsWith('#audit?offset=50&of=') && {first_row} !== {} && {shown}",
                newest[1]
            ),
            "the older entries, their place in the address",
            LONG,
        )
        .await;
    assert_ne!(older[1], newest[1], "Older showed the same entries");
    tab.eval("window.beforeReload = true; location.reload()")
        .await;
    let again = tab
        .wait_for(
            &format!("!window.beforeReload && {shown}"),
            "the older entries after a reload",
            LONG,
        )
        .await;
    assert_eq!(again, older, "a reload showed other entries");
    tab.eval("history.back()").await;
    // Back changes the address at once and the rows when the page is read again: wait for
    // the newest rows (a Back that kept the older ones times out here).
    let back = tab
        .wait_for(
            &format!(
                "location.hash === '#audit' && {first_row} === {} && {shown}",
                newest[1]
            ),
            "the newest entries after Back",
            LONG,
        )
        .await;
    assert_eq!(back, newest);
    tab.assert_no_errors();
}

/// Promoting the first revision of a level asks without naming a revision it would replace:
/// there is none. Before, it asked "It replaces the promoted revision none for players (which
/// stays retained for a rollback)".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promoting_a_levels_first_revision_says_it_replaces_nothing() {
    let app = job_view_app().await;
    titled_revision(&app, "rev-grat-a", "nordgrat", "Nordgrat").await;
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.viewport(1280, 800).await;
    tab.eval("location.hash = '#levels'").await;
    tab.wait_for(
        "document.querySelector(\"tr[data-revision='rev-grat-a'] [data-action=promote]\")",
        "the Labor revision's Promote button",
        LONG,
    )
    .await;
    tab.eval(
        "document.querySelector(\"tr[data-revision='rev-grat-a'] [data-action=promote]\").click()",
    )
    .await;
    let asked = tab
        .wait_for(
            "document.querySelector(\"tr[data-revision='rev-grat-a'] .confirm p\")?.textContent",
            "the promotion's question",
            LONG,
        )
        .await;
    let asked = asked.as_str().unwrap_or_default();
    assert!(
        asked.contains("No revision of \"nordgrat\" is promoted yet")
            && !asked.contains("none")
            && !asked.contains("replaces"),
        "the question: {asked}"
    );
    assert_eq!(
        tab.eval("document.querySelector('.section-head .muted').textContent.split(' · ')[0]")
            .await,
        json!("1 revision"),
        "the levels' count"
    );
    // The question has room: its answer's words are whole ("Yes, promote rev-" / "gipfel-b"
    // in a 12rem column before) and it takes at most five lines (six before).
    let yes = tab
        .eval(&format!(
            "{BROKEN_WORDS}(\"tr[data-revision='rev-grat-a'] [data-confirm=yes]\")"
        ))
        .await;
    assert_eq!(yes["broken"], json!([]), "the answer: {yes}");
    let lines = tab
        .eval("(p => Math.round(p.getBoundingClientRect().height / parseFloat(getComputedStyle(p).lineHeight)))(document.querySelector(\"tr[data-revision='rev-grat-a'] .confirm p\"))")
        .await;
    assert!(
        lines.as_f64() <= Some(5.0),
        "the question takes {lines} lines"
    );
    tab.screenshot("admin", "promote-first-ask-1280x800").await;
}

/// The quotas section shows the three trust tiers as the table's rows and the two storage
/// limits in words beside the other settings. Before, the storage limits (numbers among the
/// tiers in the stored quotas) were two more "tiers" with empty cells, and the table's
/// Storage column read "–" in every row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quotas_show_the_tiers_as_rows_and_the_storage_limits_in_words() {
    let app = job_view_app().await;
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.viewport(1280, 800).await;
    tab.eval("location.hash = '#quotas'").await;
    tab.wait_for(
        "document.body.dataset.section === 'quotas' && !!document.querySelector('#view tbody')",
        "the quotas",
        LONG,
    )
    .await;
    assert_eq!(
        tab.eval("[...document.querySelectorAll('#view tbody th')].map(th => th.textContent)")
            .await,
        json!(["trust0", "trust1", "trust2"]),
        "the quota table's rows"
    );
    assert_eq!(
        tab.eval("[...document.querySelectorAll('#view tbody td')].filter(td => !/^\\d+$/.test(td.textContent)).map(td => td.textContent)")
            .await,
        json!([]),
        "cells of the quota table that hold no number"
    );
    let settings = tab
        .eval("Object.fromEntries([...document.querySelectorAll('#view .kv > div')].map(d => [d.querySelector('dt').textContent, d.querySelector('dd').textContent]))")
        .await;
    assert_eq!(
        settings["Evidence storage per account"],
        json!("16.0 MiB"),
        "{settings}"
    );
    assert_eq!(
        settings["Evidence storage in total"],
        json!("256.0 MiB"),
        "{settings}"
    );
    tab.screenshot("admin", "quotas-1280x800").await;
    tab.assert_no_errors();
}

/// The overview's game page views are a table, a row a page with today's and the total
/// count. Before, the card listed the day, then "today" and "total" each with the same three
/// page names nested under them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_shows_the_game_page_views_as_a_table() {
    let app = job_view_app().await;
    for _ in 0..2 {
        let r = app.http.get(app.url("/")).send().await.unwrap();
        assert_eq!(r.status(), 200);
    }
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.viewport(1280, 800).await;
    tab.eval("location.hash = '#overview'").await;
    let rows = tab
        .wait_for(
            "document.body.dataset.section === 'overview' && document.querySelector('#page-views tbody') \
             && [...document.querySelectorAll('#page-views tbody tr')].map(tr => [...tr.children].map(c => c.textContent))",
            "the page views table",
            LONG,
        )
        .await;
    assert_eq!(
        rows,
        json!([
            ["/", "2", "2"],
            ["/level/…", "0", "0"],
            ["/board.html", "0", "0"]
        ])
    );
    tab.screenshot("admin", "overview-1280x800").await;
}

/// The only active admin token's Retire is off, with the reason beside it: the server
/// refuses to retire the last active token. Before, the button asked, and only the 409 after
/// "Yes, retire" said why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_admin_tokens_retire_is_off_and_says_why() {
    let app = job_view_app().await;
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.viewport(1280, 800).await;
    tab.eval("location.hash = '#credentials'").await;
    let retire = tab
        .wait_for(
            "document.body.dataset.section === 'credentials' && (b => b && [b.disabled, \
             document.getElementById(b.getAttribute('aria-describedby'))?.textContent ?? null])\
             ([...document.querySelectorAll('#view button')].find(b => b.textContent === 'Retire'))",
            "the admin token's Retire button",
            LONG,
        )
        .await;
    assert_eq!(
        retire,
        json!([true, "The last active token: create its successor first."])
    );
    // The token's label ("gateway.admin_token") is not broken mid-word beside room to spare
    // (it read "gateway.admin_to|ken").
    let label = tab
        .eval(&format!(
            "{BROKEN_WORDS}(\"#view td[data-label='Label'] bdi\")"
        ))
        .await;
    assert_eq!(label["broken"], json!([]), "{label}");
    // With no RCADIA token and no agent key, each list says how one is made (they said "No
    // tokens." and "No active keys.").
    assert_eq!(
        tab.eval("['no-rcadia-tokens', 'no-agent-keys'].map(id => document.getElementById(id)?.querySelector('code')?.textContent ?? null)")
            .await,
        json!([
            "horst admin token create --scopes play --name NAME --data DIR",
            "horst admin key create NAME --data DIR"
        ])
    );
    tab.screenshot("admin", "credentials-1280x800").await;
}

/// The admin token's label field takes what the server takes, as `GET
/// /api/admin/admin-tokens` says (`maxLabelChars`, `admin_tokens::MAX_LABEL_CHARS`), and counts
/// the characters as they are typed. Before, the page had its own `maxlength="40"` that nothing
/// tied to the server's check, and no word of the limit: a cut label said nothing. It counts
/// characters as the server does (`chars()`): it counted UTF-16 units, two for an emoji, and
/// its maxlength (also in units) let only 20 emoji in where the server takes 40.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_token_label_field_takes_the_servers_limit_and_counts() {
    let max = horst_identity::admin_tokens::MAX_LABEL_CHARS;
    let app = job_view_app().await;
    let (_browser, tab) = signed_in_job_view(&app).await;
    for (w, h) in [(1280, 800), (390, 844)] {
        tab.viewport(w, h).await;
        tab.eval("location.hash = '#overview'").await;
        tab.eval("location.hash = '#credentials'").await;
        tab.wait_for(
            "document.body.dataset.section === 'credentials' && !!document.getElementById('at-label-count')",
            "the admin token's label counter",
            LONG,
        )
        .await;
        let served = tab
            .eval("fetch('/api/admin/admin-tokens').then(r => r.json()).then(b => b.maxLabelChars)")
            .await;
        assert_eq!(served, json!(max), "the API's maxLabelChars");
        let field = tab
            .eval(
                "(f => [f.maxLength, f.getAttribute('aria-describedby'), document.getElementById('at-label-count').textContent])\
                 (document.querySelector('#view input[name=label]'))",
            )
            .await;
        assert_eq!(
            field,
            json!([2 * max, "at-label-count", format!("0 of {max} characters")])
        );
        // Astral characters count one each, as on the server: `max` of them fit and are
        // valid, one more is counted over and the field is invalid (the form does not send).
        let typed = |n: usize| {
            format!(
                "(f => {{ f.value = '{}'; f.dispatchEvent(new Event('input', {{ bubbles: true }})); \
                 return [document.getElementById('at-label-count').textContent, f.validity.valid, f.value.length]; }})\
                 (document.querySelector('#view input[name=label]'))",
                "\u{1F426}".repeat(n)
            )
        };
        assert_eq!(
            tab.eval(&typed(max)).await,
            json!([format!("{max} of {max} characters"), true, 2 * max])
        );
        assert_eq!(
            tab.eval(&typed(max + 1)).await,
            json!([
                format!("{} of {max} characters: 1 too many", max + 1),
                false,
                2 * max + 2
            ])
        );
        let counted = tab
            .eval(
                "(f => { f.value = 'Laptop Nord'; f.dispatchEvent(new Event('input', { bubbles: true })); \
                 return document.getElementById('at-label-count').textContent; })\
                 (document.querySelector('#view input[name=label]'))",
            )
            .await;
        assert_eq!(counted, json!(format!("11 of {max} characters")));
        tab.screenshot("admin", &format!("credentials-label-{w}x{h}"))
            .await;
    }
    tab.assert_no_errors();
    // The server refuses a longer label with the limit and the fix (the browser logs the 400).
    let long = "x".repeat(max + 1);
    let refused = tab
        .eval(&format!(
            "(async () => {{ const s = await (await fetch('/api/admin/session')).json(); \
             const r = await fetch('/api/admin/admin-tokens', {{ method: 'POST', \
             headers: {{ 'content-type': 'application/json', 'x-csrf-token': s.csrf }}, \
             body: JSON.stringify({{ label: '{long}' }}) }}); return [r.status, (await r.json()).error]; }})()"
        ))
        .await;
    assert_eq!(refused[0], json!(400), "{refused}");
    let m = refused[1].as_str().unwrap_or_default();
    assert!(
        m.contains(&format!("at most {max} characters")) && m.contains("shorten it"),
        "{m}"
    );
    // What the page counts as fitting, the server takes: `max` astral characters.
    let birds = "\u{1F426}".repeat(max);
    let taken = tab
        .eval(&format!(
            "(async () => {{ const s = await (await fetch('/api/admin/session')).json(); \
             const r = await fetch('/api/admin/admin-tokens', {{ method: 'POST', \
             headers: {{ 'content-type': 'application/json', 'x-csrf-token': s.csrf }}, \
             body: JSON.stringify({{ label: '{birds}' }}) }}); return [r.ok, (await r.json()).adminToken?.label]; }})()"
        ))
        .await;
    assert_eq!(taken, json!([true, birds]), "{taken}");
}

/// An account's name in the operator's accounts table breaks only where it must: at 1366 and
/// 1280 px "dohlenfreund" stays whole, a name of 32 characters without a space takes at most
/// 14rem, and the table does not scroll (on a phone, where rows are cards, nothing scrolls). Before, `overflow-wrap: anywhere` let the table
/// squeeze the Name column and break "dohlenfre|und" beside columns with room to spare. A
/// display name is on its own line under the name; it stood beside a short one ("bob محمد").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_name_in_the_admin_accounts_table_is_not_broken_mid_word() {
    let app = job_view_app().await;
    let long = "murmeltier_am_gletscher_nordgrat";
    assert_eq!(long.len(), 32);
    for name in ["dohlenfreund", long, "bob"] {
        app.agent_key(name, 0).await;
    }
    // A short name with a right-to-left display name.
    let s = &app.store;
    let _: () = s
        .conn()
        .hset(s.key("account:bob"), "displayName", "محمد من جبال الألب")
        .await
        .unwrap();
    let (_browser, tab) = signed_in_job_view(&app).await;
    open_section(
        &tab,
        "#accounts",
        "document.querySelectorAll('tr[data-account] .name').length === 4",
        "the three accounts",
    )
    .await;
    for (w, h) in [(1366, 768), (1280, 800), (390, 844)] {
        settled_at(&tab, w, h).await;
        let short = tab
            .eval(&format!(
                "{BROKEN_WORDS}(\"tr[data-account='dohlenfreund'] .name\")"
            ))
            .await;
        assert_eq!(
            short["broken"],
            json!([]),
            "at {w} px the account's name is cut: {short}"
        );
        let solid = tab
            .eval(&format!(
                "{BROKEN_WORDS}(\"tr[data-account='{long}'] .name\")"
            ))
            .await;
        // On a phone the row is a card, and the name may take the card's width.
        let most = 14.0 * solid["rem"].as_f64().unwrap() + 0.5;
        assert!(
            w < 640 || solid["width"].as_f64().unwrap() <= most,
            "at {w} px a name of 32 characters is wider than 14rem: {solid}"
        );
        // The display name is under the name, not beside it as if part of it ("bob محمد").
        let under = tab
            .eval("(([n, d]) => [d.textContent, d.getBoundingClientRect().top >= n.getBoundingClientRect().bottom - 1])\
                 ([...document.querySelectorAll(\"tr[data-account='bob'] .name\")])")
            .await;
        assert_eq!(
            under,
            json!(["محمد من جبال الألب", true]),
            "at {w} px bob's display name"
        );
        no_sideways_scroll(&tab, w, "accounts").await;
        tab.screenshot("admin", &format!("accounts-names-{w}x{h}"))
            .await;
    }
    tab.assert_no_errors();
}

/// Each of `selector`'s elements whose text the browser laid out on more than one line: its
/// text and the number of lines.
const ON_MORE_LINES: &str = r#"(sel => [...document.querySelectorAll(sel)].map(e => {
  const r = document.createRange(); r.selectNodeContents(e);
  const lines = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size;
  return [e.textContent, lines];
}).filter(([, lines]) => lines > 1))"#;

/// The overview's facts (a name and its value, such as the execution seconds' "Trust-0
/// used" and "0 of 1800") each take one line at 1280, 1440 and 1920 px and on a phone, and
/// the page's links are in its blue. Before, the trust-0 share was one value, "0 of 1800
/// used, 1800 left", that took two lines beside "Trust-0" / "share" (and "Last read" beside
/// its date likewise), "Read messages" was in the browser's own blue, rgb(0, 0, 238), and
/// the page views' table scrolled sideways in its card at 1440 and 1920 px.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overviews_facts_take_a_line_each_and_its_links_the_pages_blue() {
    let app = job_view_app().await;
    // Board reads, so the card has the date of the last one.
    let s = &app.store;
    let _: () = redis::pipe()
        .set(horst_gateway::keys::board_reads_total(s), 3456)
        .set(
            horst_gateway::keys::board_reads_last(s),
            1_796_000_000_000u64,
        )
        // Page views of a busy site: the card's table had to fit six digits.
        .hset_multiple(
            horst_gateway::keys::page_views_total(s),
            &[("game", 123_456u64), ("level", 5_678), ("board", 90)],
        )
        .query_async(&mut s.conn())
        .await
        .unwrap();
    let (_browser, tab) = signed_in_job_view(&app).await;
    open_overview(&tab).await;
    for (w, h) in [(1280, 800), (1440, 900), (1920, 1080), (390, 844)] {
        settled_at(&tab, w, h).await;
        let more = tab
            .eval(&format!("{ON_MORE_LINES}('#view .kv dt, #view .kv dd')"))
            .await;
        assert_eq!(more, json!([]), "at {w} px facts on more than one line");
        // A fact's value on its name's line where both fit, on a phone too (there every
        // value stood on the line under its name).
        let under = tab
            .eval("(() => { const text = (e) => { const r = document.createRange(); r.selectNodeContents(e); return r.getBoundingClientRect(); }; \
                   return [...document.querySelectorAll('#view .kv > div')].filter(d => { const [t, v] = [text(d.querySelector('dt')), text(d.querySelector('dd'))]; \
                   return t.width + v.width + 16 < d.clientWidth && Math.abs(t.top - v.top) > 4; }).map(d => d.textContent); })()")
            .await;
        assert_eq!(
            under,
            json!([]),
            "at {w} px values under their names, though both fit on a line"
        );
        // Nor does a table in a card scroll sideways (the page views' did at 1440 px).
        let wraps = tab
            .eval("[...document.querySelectorAll('#view .table-wrap')].map(t => t.scrollWidth - t.clientWidth)")
            .await;
        assert!(
            wraps
                .as_array()
                .unwrap()
                .iter()
                .all(|d| d.as_f64() <= Some(1.0)),
            "at {w} px a table in the overview scrolls sideways by {wraps} px"
        );
        let links = tab
            .eval("[...document.querySelectorAll('#view a')].map(a => [a.textContent, getComputedStyle(a).color])")
            .await;
        assert_eq!(
            links,
            json!([["Read messages", "rgb(29, 79, 145)"]]),
            "at {w} px"
        );
        tab.screenshot("admin", &format!("overview-facts-{w}x{h}"))
            .await;
    }
    let seconds = tab
        .eval("[...document.querySelectorAll('#view .kv dt')].map(dt => dt.textContent).filter(t => t.startsWith('Trust-0'))")
        .await;
    assert_eq!(seconds, json!(["Trust-0 used", "Trust-0 remaining"]));
    tab.assert_no_errors();
}

/// The sign-in forms' buttons stand clear of the field above them (with no error shown they
/// touched the password field, 0 px apart) at a phone's, a tablet's and a desktop's size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sign_in_buttons_stand_clear_of_their_fields() {
    let (app, _worker) = crate::game_api::game_app().await;
    let browser = crate::browser::launch().await;
    let tab = crate::browser::Tab::open(&browser, &app.url("/admin")).await;
    tab.wait_for(
        "document.getElementById('signed-out') && !document.getElementById('signed-out').hidden",
        "the operator sign-in",
        LONG,
    )
    .await;
    for (w, h) in [(390, 844), (768, 1024), (1440, 900)] {
        settled_at(&tab, w, h).await;
        let gaps = tab
            .eval(
                "[...document.querySelectorAll('#signed-out form')].map(f => \
                 Math.round(f.querySelector('button[type=submit]').getBoundingClientRect().top \
                 - [...f.querySelectorAll('input')].pop().getBoundingClientRect().bottom))",
            )
            .await;
        let gaps: Vec<i64> = serde_json::from_value(gaps.clone()).expect("two forms");
        assert_eq!(gaps.len(), 2, "{gaps:?}");
        assert!(
            gaps.iter().all(|g| *g >= 8),
            "at {w}x{h} the sign-in buttons are {gaps:?} px below their fields (at least 8)"
        );
        tab.screenshot("admin", &format!("sign-in-{w}x{h}")).await;
    }
    browser.close().await;
}

/// A finger's tap at the middle of the first element matching `selector` (touch emulated).
async fn tap(tab: &crate::browser::Tab, selector: &str) {
    let at = tab
        .eval(&format!(
            "(r => r && [r.x + r.width / 2, r.y + r.height / 2])(document.querySelector({selector:?})?.getBoundingClientRect())"
        ))
        .await;
    assert!(at.is_array(), "nothing to tap at {selector}");
    for (kind, points) in [
        ("touchStart", json!([{ "x": at[0], "y": at[1] }])),
        ("touchEnd", json!([])),
    ] {
        tab.browser
            .call(
                Some(&tab.session),
                "Input.dispatchTouchEvent",
                json!({ "type": kind, "touchPoints": points }),
            )
            .await
            .expect(kind);
    }
}

/// Where the section's heading is after a tap: `[top, bottom, the screen's height, whether
/// the heading itself is what lies at its middle (nothing over it), whether it has the focus]`.
const HEADING_SEEN: &str = "(h => { const r = h.getBoundingClientRect(); \
  const at = document.elementFromPoint(Math.min(r.left + 20, innerWidth - 1), (r.top + r.bottom) / 2); \
  return [Math.round(r.top), Math.round(r.bottom), innerHeight, !!at && h.contains(at), document.activeElement === h]; })\
  (document.getElementById('section-title'))";

/// On a phone (390x844, touch) a tap on a link to another section (the overview's "Read
/// messages" further down the page, a section link of the navigation) shows that section
/// with its heading on the screen, not under anything, and the focus on it (a screen reader
/// reads where it is). Before, the page kept its scroll position: after "Read messages" the
/// new section's heading was above the screen's top, out of sight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tapped_section_link_shows_the_sections_heading_on_a_phone() {
    let app = job_view_app().await;
    let (_browser, tab) = signed_in_job_view(&app).await;
    tab.browser
        .call(
            Some(&tab.session),
            "Emulation.setTouchEmulationEnabled",
            json!({ "enabled": true, "maxTouchPoints": 5 }),
        )
        .await
        .expect("touch");
    settled_at(&tab, 390, 844).await;
    open_overview(&tab).await;
    let mut problems = Vec::new();
    // The user scrolls down to the messages card and taps its link; then up to the section
    // links and taps one; then down a long section and taps a link of the navigation again.
    let steps = [
        (
            "\"Read messages\" on the overview",
            "#view a[href='#messages']",
            "messages",
            "Messages",
        ),
        (
            "the section link \"Levels\"",
            "#nav a[href='#levels']",
            "levels",
            "Levels",
        ),
        (
            "the section link \"Overview\"",
            "#nav a[href='#overview']",
            "overview",
            "Overview",
        ),
        (
            "the section link \"Audit log\"",
            "#nav a[href='#audit']",
            "audit",
            "Audit log",
        ),
    ];
    for (what, link, section, title) in steps {
        tab.eval(&format!(
            "document.querySelector({link:?}).scrollIntoView({{ block: 'center', inline: 'center' }}); \
             new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
        ))
        .await;
        tap(&tab, link).await;
        tab.wait_for(
            &format!(
                "document.body.dataset.section === {section:?} && document.getElementById('section-title')?.textContent === {title:?} \
                 && !document.getElementById('view').textContent.includes('Loading…')"
            ),
            &format!("the section after a tap on {what}"),
            LONG,
        )
        .await;
        tab.eval(
            "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))",
        )
        .await;
        let seen = tab.eval(HEADING_SEEN).await;
        let (top, bottom, screen) = (seen[0].as_f64(), seen[1].as_f64(), seen[2].as_f64());
        if !(top >= Some(0.0)
            && bottom <= screen
            && seen[3] == json!(true)
            && seen[4] == json!(true))
        {
            problems.push(format!(
                "after a tap on {what}: the heading [top, bottom, screen, seen, focused] is {seen}"
            ));
        }
        tab.screenshot("admin", &format!("tapped-{section}-390x844"))
            .await;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    tab.assert_no_errors();
}
