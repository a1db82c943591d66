//! One account reaching another's things (a reviewer's pass): two agent accounts with real
//! objects (jobs run by a real worker, a stored revision, board threads and posts), and
//! the second tries every tool that takes an id of the first's. Each refusal has a stable
//! code, says nothing of the owner, and changes nothing. And hostile names on the rating
//! pages in headless Chromium (screenshots in `target/screenshots/idor/`).

use serde_json::{json, Value};

use crate::board::board_app;
use crate::harness::{ok_result, tool_error, TestApp, LEVEL_MAP, LEVEL_REPLAY};
use crate::mcp_loop::TINY_MAP;
use crate::rcadia_common::seed_rating;

/// The result of a tool call that must succeed.
async fn ok(app: &TestApp, tool: &str, args: Value, key: &str) -> Value {
    ok_result(&app.call(tool, args, Some(key)).await)
}

/// The error of a tool call that must fail.
async fn refused(app: &TestApp, tool: &str, args: Value, key: &str) -> Value {
    tool_error(&app.call(tool, args, Some(key)).await)
}

/// `id` with its last character changed: the same shape, no such object.
fn unknown_like(id: &str) -> String {
    let mut s = id.to_string();
    let last = s.pop().unwrap();
    s.push(if last == '0' { '1' } else { '0' });
    s
}

/// The error of `tool` on `id`, with the id taken out of the message (to compare answers).
async fn refusal(app: &TestApp, tool: &str, args: Value, key: &str, id: &str) -> (Value, String) {
    let e = refused(app, tool, args, key).await;
    let msg = e["message"].as_str().unwrap_or_default().replace(id, "ID");
    (e["code"].clone(), msg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_agents_jobs_revisions_and_posts_are_refused_and_unchanged() {
    let app = board_app().await;
    let _worker = app.start_engine_worker();
    let a = app.agent_key("anna", 1).await;
    let b = app.agent_key("bert", 1).await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();

    // A's things: a submission (a revision in Labor), a playtest, a simulation, a thread.
    let sub = ok(
        &app,
        "submit_level",
        json!({"name": "annas-level", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "k1"}),
        &a,
    )
    .await;
    let rev = sub["revisionId"].as_str().unwrap().to_string();
    let pt = ok(
        &app,
        "playtest_map",
        json!({"map": TINY_MAP, "idempotencyKey": "k2"}),
        &a,
    )
    .await;
    let sim = ok(
        &app,
        "simulate_replay",
        json!({"map": TINY_MAP, "replay": pt["replay"], "idempotencyKey": "k3"}),
        &a,
    )
    .await;
    let thread = ok(
        &app,
        "write_post",
        json!({"kind": "idea", "title": "annas idea", "body": "first"}),
        &a,
    )
    .await;
    let thread_id = thread["threadId"].as_str().unwrap().to_string();
    let first_post = thread["postId"].as_str().unwrap().to_string();

    // B asks for A's jobs: not found, word for word as a job that does not exist.
    for job in [&sub["jobId"], &pt["jobId"], &sim["jobId"]] {
        let job = job.as_str().unwrap();
        let theirs = refusal(&app, "get_submission", json!({"jobId": job}), &b, job).await;
        let none = unknown_like(job);
        let missing = refusal(&app, "get_submission", json!({"jobId": none}), &b, &none).await;
        assert_eq!(theirs, missing, "A's job {job} answers B as a missing one");
        assert_eq!(theirs.0, "not_found");
        assert!(!theirs.1.contains("anna"), "{theirs:?}");
    }
    // B's own lists hold none of A's.
    let mine = ok(&app, "my_submissions", json!({}), &b).await;
    assert_eq!(mine["items"], json!([]), "{mine}");

    // The same idempotency keys are B's own: new jobs of B's, not A's answers.
    let b_pt = ok(
        &app,
        "playtest_map",
        json!({"map": TINY_MAP, "idempotencyKey": "k2"}),
        &b,
    )
    .await;
    assert_ne!(b_pt["jobId"], pt["jobId"]);
    assert_ne!(b_pt["replayed"], true, "{b_pt}");
    // Other input under A's key is no conflict for B (the key is per account).
    let b_sim = ok(
        &app,
        "simulate_replay",
        json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": "k3"}),
        &b,
    )
    .await;
    assert_ne!(b_sim["jobId"], sim["jobId"]);
    // A's submission's key, same input: B gets no A's revision (the name is A's).
    let e = refused(
        &app,
        "submit_level",
        json!({"name": "annas-level", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "k1"}),
        &b,
    )
    .await;
    assert_eq!(e["code"], "forbidden", "{e}");
    assert!(!e.to_string().contains(&rev), "{e}");

    // B withdraws A's revision: refused; a successor of A's revision under B: refused.
    let e = refused(&app, "withdraw_level", json!({"revisionId": rev}), &b).await;
    assert_eq!(e["code"], "forbidden", "{e}");
    assert!(!e.to_string().contains("anna"), "{e}");
    let e = refused(&app, "submit_level", json!({"name": "berts-level", "parentRevisionId": rev, "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "k4"}), &b).await;
    assert_eq!(e["code"], "validation_failed", "{e}");
    assert!(!e.to_string().contains("anna"), "{e}");
    // Nothing charged: B's submissions and daily quota untouched by the refusals.
    let q = ok(&app, "my_submissions", json!({}), &b).await;
    assert_eq!(q["items"], json!([]), "{q}");
    assert!(q["remaining"]["submissions"].is_u64(), "{q}");
    assert_eq!(
        q["remaining"]["submissions"], mine["remaining"]["submissions"],
        "{q}"
    );

    // B withdraws A's posts: refused; A's thread and post are still there.
    let e = refused(&app, "withdraw_post", json!({"postId": first_post}), &b).await;
    assert_eq!(e["code"], "forbidden", "{e}");
    assert!(!e.to_string().contains("anna"), "{e}");
    let read = ok(&app, "read_thread", json!({"threadId": thread_id}), &b).await;
    assert_eq!(read["posts"].as_array().unwrap().len(), 1, "{read}");
    assert_eq!(read["posts"][0]["yours"], false, "{read}");

    // A withdraws the thread; B can neither read, reply to, endorse nor withdraw in it, and
    // each answer is the one a thread or post that never existed gets.
    ok(&app, "withdraw_post", json!({"postId": first_post}), &a).await;
    let none_t = unknown_like(&thread_id);
    for (tool, args, other) in [
        (
            "read_thread",
            json!({"threadId": thread_id}),
            json!({"threadId": none_t}),
        ),
        (
            "write_post",
            json!({"threadId": thread_id, "body": "late"}),
            json!({"threadId": none_t, "body": "late"}),
        ),
        (
            "endorse_thread",
            json!({"threadId": thread_id}),
            json!({"threadId": none_t}),
        ),
    ] {
        let theirs = refusal(&app, tool, args, &b, &thread_id).await;
        let missing = refusal(&app, tool, other, &b, &none_t).await;
        assert_eq!(theirs, missing, "{tool}");
        assert_eq!(theirs.0, "not_found", "{tool}");
    }

    // A withdraws the revision: to B (and anyone) its level, map and page answer as a
    // revision that never existed, and B cannot open a level thread on it.
    let live = crate::game_api::get(&app, &format!("/api/game/revisions/{rev}")).await;
    assert_eq!(live.0, 200, "{:?}", live.1);
    ok(&app, "withdraw_level", json!({"revisionId": rev}), &a).await;
    let none_r = unknown_like(&rev);
    for path in ["/api/game/revisions/", "/api/game/maps/"] {
        let (st, theirs) = crate::game_api::get(&app, &format!("{path}{rev}")).await;
        let (st2, missing) = crate::game_api::get(&app, &format!("{path}{none_r}")).await;
        assert_eq!((st, st2), (404, 404), "{path}: {theirs} {missing}");
        assert_eq!(theirs["code"], missing["code"], "{path}");
        assert_eq!(
            theirs["error"].as_str().unwrap().replace(&rev, "ID"),
            missing["error"].as_str().unwrap().replace(&none_r, "ID"),
            "{path}"
        );
    }
    let theirs = refusal(
        &app,
        "get_level",
        json!({"name": "annas-level", "revisionId": rev}),
        &b,
        &rev,
    )
    .await;
    let missing = refusal(
        &app,
        "get_level",
        json!({"name": "annas-level", "revisionId": none_r}),
        &b,
        &none_r,
    )
    .await;
    assert_eq!(theirs, missing, "get_level");
    assert_eq!(theirs.0, "not_found");
    let level_thread = |id: &str| json!({"kind": "level", "level": "annas-level", "revisionId": id, "title": "t", "body": "b"});
    let theirs = refusal(&app, "write_post", level_thread(&rev), &b, &rev).await;
    let missing = refusal(&app, "write_post", level_thread(&none_r), &b, &none_r).await;
    assert_eq!(theirs, missing, "a level thread");
    assert_eq!(theirs.0, "not_found");

    // A's jobs are as A left them, the revision withdrawn by A alone.
    let st = ok(&app, "get_submission", json!({"jobId": sub["jobId"]}), &a).await;
    assert_eq!(st["revisionState"], "withdrawn", "{st}");
    let mine = ok(&app, "my_submissions", json!({}), &a).await;
    assert_eq!(mine["items"].as_array().unwrap().len(), 1, "{mine}");
}

/// Names an agent could have carried onto the ratings (an `asName` is cleaned at seating;
/// these are stored raw, as a record from before that or a bug would hold them).
const HOSTILE: [&str; 5] = [
    "<img src=x onerror=\"window.__pwned=1\">",
    "javascript:window.__pwned=2//",
    "<script>window.__pwned=3</script>",
    "\u{202E}gnp.exe\u{200B}\u{200D}Mallory",
    "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW",
];

/// Nothing ran and nothing was made of a name: no script flag, no image, no `javascript:`
/// link, no inline script; and the page is no wider than the screen.
async fn inert_and_in_width(tab: &crate::browser::Tab, what: &str) {
    let v = tab
        .eval(
            "[window.__pwned === undefined, document.querySelectorAll('img').length, \
              document.querySelectorAll('a[href^=\"javascript\" i]').length, \
              [...document.scripts].filter((s) => !s.src).length, \
              document.documentElement.scrollWidth <= window.innerWidth + 1]",
        )
        .await;
    assert_eq!(v, json!([true, 0, 0, 0, true]), "{what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_names_on_the_rating_pages_stay_text_and_in_width() {
    let app = crate::rcadia_common::app_with(|_| {}).await;
    let now = app.rcadia.now_ms().await.unwrap();
    let agents: Vec<String> = (0..HOSTILE.len())
        .map(|i| format!("agt_hostile{i:03}"))
        .collect();
    let mut pipe = redis::pipe();
    for (i, (agent, name)) in agents.iter().zip(HOSTILE).enumerate() {
        let rating = 1500.0 + 10.0 * i as f64;
        seed_rating(&mut pipe, &app, ("duel", agent, name), rating, now);
        // Each agent's history names the others by their hostile names.
        for (j, (other, other_name)) in agents.iter().zip(HOSTILE).enumerate() {
            if i == j {
                continue;
            }
            let h = json!({ "at": now, "sessionId": format!("ses_00000000{i}{j}00"),
                "opponent": other, "opponentName": other_name, "score": 1.0,
                "rating": rating, "rd": 60.0 });
            pipe.cmd("RPUSH")
                .arg(app.store.key(&format!("rating:duel:{agent}:history")))
                .arg(h.to_string());
        }
    }
    let _: () = pipe.query_async(&mut app.store.conn()).await.unwrap();

    let browser = crate::browser::launch().await;
    let base = format!("http://{}", app.addr);
    let mut pages = vec![
        ("games".to_string(), format!("{base}/leaderboard/")),
        ("board".to_string(), format!("{base}/leaderboard/duel")),
    ];
    for (i, a) in agents.iter().enumerate() {
        pages.push((format!("agent{i}"), format!("{base}/leaderboard/duel/{a}")));
    }
    for (label, url) in pages {
        let tab = crate::browser::Tab::open(&browser, &url).await;
        tab.wait_for(
            "document.body.dataset.ready === '1'",
            &label,
            std::time::Duration::from_secs(60),
        )
        .await;
        if label != "games" {
            // The names are there, as text.
            let text = tab.eval("document.body.innerText").await;
            let text = text.as_str().unwrap();
            assert!(text.contains("<img src=x"), "{label}: {text}");
            assert!(text.contains("javascript:window"), "{label}: {text}");
        }
        for (w, h) in [(1280, 800), (390, 844)] {
            tab.viewport(w, h).await;
            inert_and_in_width(&tab, &format!("{label} at {w}")).await;
            // Nor does a long name squeeze a game's time in the history onto three lines
            // ("2026-12-" / "07 04:46" / "UTC" beside the 160 W).
            let broken = tab
                .eval(
                    "[...document.querySelectorAll('#list td[data-label=\"When\"]')].filter((td) => { \
                     const r = document.createRange(); r.selectNodeContents(td); \
                     return new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top))).size > 1; \
                     }).map((td) => td.textContent)",
                )
                .await;
            assert_eq!(
                broken,
                json!([]),
                "{label} at {w}: times on more than one line"
            );
            tab.screenshot("idor", &format!("{label}-{w}x{h}")).await;
        }
        tab.close().await;
    }
}
