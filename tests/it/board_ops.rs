//! The operator's re-check of revisions, quota reloads and the public board of published
//! threads, through `/api/admin`, `horst admin` and the anonymous REST read, against a real
//! horst, real workers and a real redis-server.

use std::time::Duration;

use redis::AsyncCommands;
use serde_json::{json, Value};

use crate::harness::{ok_result, spawn_app_with, tool_error, TestApp, LEVEL_MAP, LEVEL_REPLAY};

const ADMIN_TOKEN: &str = "test-operator-token-0123456789abcdef";
const OLDER_ENGINE: &str = "0000000000000000-an-older-engine";

async fn ops_app(adjust: impl FnOnce(&mut horst_config::Config)) -> TestApp {
    spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.burst_per_account_per_minute = 100_000;
        c.gateway.burst_per_ip_per_minute = 100_000;
        c.gateway.admin_token = ADMIN_TOKEN.into();
        adjust(c);
    })
    .await
}

fn admin(app: &TestApp, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
    app.http
        .request(method, app.url(path))
        .header("authorization", format!("Bearer {ADMIN_TOKEN}"))
        .header("x-operator", "olga")
}

async fn admin_json(app: &TestApp, method: reqwest::Method, path: &str) -> (u16, Value) {
    let r = admin(app, method, path).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// `horst admin ARGS --redis <the test's redis>` as the operator olga, off the runtime's
/// threads (the in-process worker must keep running while the command waits).
async fn horst_admin(app: &TestApp, args: &[&str]) -> (bool, String, String) {
    let url = app.redis().url();
    let mut all: Vec<String> = vec!["admin".into()];
    all.extend(args.iter().map(|a| a.to_string()));
    all.extend(["--redis".to_string(), url]);
    tokio::task::spawn_blocking(move || {
        let dir = tempfile::tempdir().unwrap();
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let mut p =
            crate::harness::HorstProcess::spawn(&refs, &[("HORST_OPERATOR", "olga")], dir.path());
        let status = p.wait_exit(Duration::from_secs(90)).expect("admin exits");
        (status.success(), p.stdout(), p.stderr())
    })
    .await
    .unwrap()
}

async fn submit(app: &TestApp, key: &str, name: &str) -> Value {
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    ok_result(
        &app.call(
            "submit_level",
            json!({"name": name, "map": LEVEL_MAP, "replay": replay, "idempotencyKey": format!("sub-{name}")}),
            Some(key),
        )
        .await,
    )
}

/// `horst admin level recheck` says the job's state every 5 s while it waits: with no worker
/// to take the job it waited the whole limit (75 s by default) without a line, which read as
/// a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recheck_nobody_runs_says_its_state_while_it_waits() {
    let app = ops_app(|_| {}).await;
    let worker = app.start_engine_worker();
    let key = app.agent_key("anna", 1).await;
    let rev = submit(&app, &key, "steil").await["revisionId"]
        .as_str()
        .unwrap()
        .to_string();
    let _ = worker.send(true);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let url = app.redis().url();
    let (ok, err) = tokio::task::spawn_blocking(move || {
        let dir = tempfile::tempdir().unwrap();
        // The shortest limit: wait_seconds 2 + simulate_seconds 1 + 10 s.
        let mut p = crate::harness::HorstProcess::spawn(
            &["admin", "level", "recheck", &rev, "--redis", &url],
            &[
                ("HORST_OPERATOR", "olga"),
                ("HORST_QUEUE_PLAYTEST_SECONDS", "1"),
                ("HORST_QUEUE_SIMULATE_SECONDS", "1"),
                ("HORST_QUEUE_WAIT_SECONDS", "2"),
            ],
            dir.path(),
        );
        let status = p.wait_exit(Duration::from_secs(90)).expect("admin exits");
        (status.success(), p.stderr())
    })
    .await
    .unwrap();
    assert!(!ok, "{err}");
    assert!(
        err.contains("still queued after 5 s (at most 13 s)"),
        "{err}"
    );
    assert!(err.contains("still queued after 10 s"), "{err}");
    // The queue fails a job that could not start in time: the end says what to look at.
    assert!(
        err.contains("is a worker running with a free slot (horst admin status"),
        "{err}"
    );
}

/// The fixture of an engine change: the revision's only check was made by another engine.
async fn checked_on_older_engine(app: &TestApp, rev: &str) {
    let _: () = app
        .store
        .conn()
        .hset(
            app.store.key(&format!("rev:{rev}")),
            "engineVersion",
            OLDER_ENGINE,
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recheck_on_the_current_engine_unlocks_promotion_and_keeps_old_evidence() {
    let app = ops_app(|_| {}).await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("anna", 1).await;
    let sub = submit(&app, &key, "gipfel").await;
    let rev = sub["revisionId"].as_str().unwrap().to_string();
    checked_on_older_engine(&app, &rev).await;

    // Only a check on another engine: refused, with a code and the way out.
    let r = admin(
        &app,
        reqwest::Method::POST,
        &format!("/api/admin/revisions/{rev}/promote"),
    )
    .json(&json!({"expect": null}))
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 409);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["code"], "engine_mismatch");
    assert!(
        body["error"].as_str().unwrap().contains("recheck"),
        "{body}"
    );

    // The recheck runs as a job on the real worker; the API waits and answers the check.
    let (status, r) = admin_json(
        &app,
        reqwest::Method::POST,
        &format!("/api/admin/revisions/{rev}/recheck"),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["state"], "succeeded");
    let check = &r["check"];
    assert_eq!(check["passed"], true, "{r}");
    assert_eq!(check["outcome"], "won");
    assert_eq!(check["engineVersion"], horst_engine::engine_version());
    assert_eq!(check["policyVersion"], horst_engine::POLICY_VERSION);
    assert_eq!(check["stateHash"], sub["acceptance"]["stateHash"]);
    assert_eq!(check["ticks"], sub["ticks"]);
    assert_eq!(check["jobId"], r["jobId"]);
    assert!(check["by"]
        .as_str()
        .unwrap()
        .starts_with("api:olga@config-"));
    assert!(check["at"].as_str().unwrap().ends_with('Z'));
    let job = horst_queue::job_record(&app.store, r["jobId"].as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(job.kind, horst_queue::JobKind::Recheck);

    let r = admin(
        &app,
        reqwest::Method::POST,
        &format!("/api/admin/revisions/{rev}/promote"),
    )
    .json(&json!({"expect": null}))
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let level = ok_result(&app.call("get_level", json!({"name": "gipfel"}), None).await);
    assert_eq!(level["revisionId"], rev.as_str());

    // The older evidence is still there, untouched, before the new one.
    let (status, checks) = admin_json(
        &app,
        reqwest::Method::GET,
        &format!("/api/admin/revisions/{rev}/checks"),
    )
    .await;
    assert_eq!(status, 200);
    let items = checks["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{checks}");
    assert_eq!(items[0]["kind"], "submission");
    assert_eq!(items[0]["engineVersion"], OLDER_ENGINE);
    assert_eq!(items[0]["stateHash"], sub["acceptance"]["stateHash"]);
    assert_eq!(items[0]["jobId"], sub["jobId"]);
    assert_eq!(items[1]["kind"], "recheck");
    assert_eq!(checks["currentCheck"]["jobId"], items[1]["jobId"]);
    assert_eq!(checks["pending"], json!([]));
    let acceptance: String = app
        .store
        .conn()
        .hget(app.store.key(&format!("rev:{rev}")), "acceptance")
        .await
        .unwrap();
    assert!(acceptance.contains("stateHash"));

    let mut log = horst_operator::audit_log(&app.store, 0, 5).await.unwrap();
    // The configured admin token's seed at the start is not this test's.
    log.retain(|e| e.who != "config");
    let actions: Vec<&str> = log.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["promote", "recheck"]);
    assert!(log[1].who.starts_with("api:olga@config-"), "{}", log[1].who);
    assert_eq!(log[1].target, rev.as_str());

    // Unknown revisions: not_found (404), nothing queued.
    let (status, e) = admin_json(
        &app,
        reqwest::Method::POST,
        "/api/admin/revisions/rev-404/recheck",
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(e["code"], "not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recheck_that_no_longer_wins_is_recorded_and_promotion_stays_refused() {
    let app = ops_app(|_| {}).await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("anna", 1).await;
    let sub = submit(&app, &key, "steil").await;
    let rev = sub["revisionId"].as_str().unwrap().to_string();
    // The fixture: the revision was accepted by an older engine whose physics let this replay
    // win; on the current engine the same replay falls short (a replay cut to its first step).
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let short = json!({"seed": replay["seed"], "actions": [replay["actions"][0].clone()]});
    let s = &app.store;
    let _: () = s
        .conn()
        .hset_multiple(
            s.key(&format!("rev:{rev}")),
            &[
                ("engineVersion", OLDER_ENGINE.to_string()),
                ("replay", short.to_string()),
            ],
        )
        .await
        .unwrap();

    // horst admin level recheck waits, shows progress, prints the failing check, exits 1.
    let (ok, out, err) = horst_admin(&app, &["level", "recheck", &rev]).await;
    assert!(!ok, "{out}\n{err}");
    assert!(err.contains("queued as job"), "{err}");
    assert!(err.contains("succeeded after"), "{err}");
    assert!(err.contains("check_failed"), "{err}");
    let check: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(check["passed"], false);
    assert_ne!(check["outcome"], "won");
    assert_eq!(check["engineVersion"], horst_engine::engine_version());
    assert_eq!(check["by"], "olga");

    let e = horst_operator::promote(s, "olga", &rev, None)
        .await
        .unwrap_err();
    assert_eq!(e.code, "check_failed");
    assert!(e.message.contains("no longer wins"), "{}", e.message);
    let r = admin(
        &app,
        reqwest::Method::POST,
        &format!("/api/admin/revisions/{rev}/promote"),
    )
    .json(&json!({"expect": null}))
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 409);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], "check_failed");

    // --no-wait: the job id at once; the check is recorded by whoever reads it later.
    let (ok, out, err) = horst_admin(&app, &["level", "recheck", &rev, "--no-wait"]).await;
    assert!(ok, "{out}\n{err}");
    let queued: Value = serde_json::from_str(out.trim()).unwrap();
    let job = queued["jobId"].as_str().unwrap().to_string();
    let done = crate::harness::eventually(Duration::from_secs(30), async || {
        horst_queue::job_record(s, &job)
            .await
            .unwrap()
            .is_some_and(|r| r.state.is_final())
    })
    .await;
    assert!(done);
    let (ok, out, err) = horst_admin(&app, &["level", "checks", &rev]).await;
    assert!(ok, "{err}");
    let all: Value = serde_json::from_str(&out).unwrap();
    let items = all["items"].as_array().unwrap();
    assert_eq!(items.len(), 3, "{all}");
    assert_eq!(items[0]["engineVersion"], OLDER_ENGINE);
    assert_eq!(items[0]["passed"], true);
    assert_eq!(items[2]["jobId"], job.as_str());
    assert_eq!(items[2]["passed"], false);
    // Recorded once, however often it is read.
    let again = horst_gateway::checks::checks(s, &rev).await.unwrap();
    assert_eq!(again["items"].as_array().unwrap().len(), 3);
    // The author's own list names that newest check, not the submission's (it said `won`
    // on the old engine whatever the rechecks found).
    let mine = crate::harness::ok_result(&app.call("my_submissions", json!({}), Some(&key)).await);
    let latest = &mine["items"][0]["latestCheck"];
    assert_ne!(latest["outcome"], "won", "{mine}");
    assert_eq!(
        latest["engineVersion"],
        horst_engine::engine_version(),
        "{mine}"
    );
    assert_eq!(latest["currentEngine"], true, "{mine}");
    assert_eq!(
        horst_operator::promote(s, "olga", &rev, None)
            .await
            .unwrap_err()
            .code,
        "check_failed"
    );
}

/// A configuration file with trust-0 simulation limit `n` (and the other defaults).
fn quota_file(path: &std::path::Path, simulations: u32) {
    std::fs::write(
        path,
        format!(
            "[quotas.trust0]\nsubmissions = 2\nplaytests = 6\nsimulations = {simulations}\nlabor_candidates = 3\n"
        ),
    )
    .unwrap();
}

async fn simulate(app: &TestApp, key: &str, idem: &str) -> crate::harness::Answer {
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    app.call(
        "simulate_replay",
        json!({"map": LEVEL_MAP, "replay": replay, "idempotencyKey": idem}),
        Some(key),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_reload_applies_to_the_running_api() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("horst.toml");
    quota_file(&file, 1);
    let path = file.clone();
    let app = ops_app(move |c| {
        c.quotas.trust0.simulations = 1;
        c.file = Some(path);
    })
    .await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("anna", 0).await;

    let first = ok_result(&simulate(&app, &key, "s1").await);
    assert_eq!(first["remaining"]["simulations"], 0);
    let e = tool_error(&simulate(&app, &key, "s2").await);
    assert_eq!(e["code"], "quota");
    assert!(e["message"].as_str().unwrap().contains("limit of 1"), "{e}");
    let (status, shown) = admin_json(&app, reqwest::Method::GET, "/api/admin/quotas").await;
    assert_eq!(status, 200);
    assert_eq!(shown["values"]["quotas"]["trust0"]["simulations"], 1);

    // The operator edits the file and reloads through the API: no restart.
    quota_file(&file, 3);
    let (status, r) = admin_json(&app, reqwest::Method::POST, "/api/admin/quotas/reload").await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["source"], "stored");
    assert!(r["writtenBy"]
        .as_str()
        .unwrap()
        .starts_with("api:olga@config-"));
    assert_eq!(r["values"]["quotas"]["trust0"]["simulations"], 3);
    assert_eq!(r["values"]["daily_seconds"], 3600);
    let ok = ok_result(&simulate(&app, &key, "s3").await);
    assert_eq!(ok["remaining"]["simulations"], 1);

    // A broken file: refused with the setting named; the values in force stay.
    std::fs::write(&file, "[quotas.trust0]\nsimulations = \"many\"\n").unwrap();
    let (status, e) = admin_json(&app, reqwest::Method::POST, "/api/admin/quotas/reload").await;
    assert_eq!(status, 400);
    assert_eq!(e["code"], "invalid_config");
    let (_, shown) = admin_json(&app, reqwest::Method::GET, "/api/admin/quotas").await;
    assert_eq!(shown["values"]["quotas"]["trust0"]["simulations"], 3);

    // The CLI reloads from its own --config; the running API follows within a second.
    let other = dir.path().join("other.toml");
    quota_file(&other, 2);
    let (ok, out, err) = horst_admin(
        &app,
        &["quotas", "reload", "--config", other.to_str().unwrap()],
    )
    .await;
    assert!(ok, "{out}\n{err}");
    assert!(err.contains("within a second"), "{err}");
    let (ok, out, _) = horst_admin(&app, &["quotas", "show"]).await;
    assert!(ok);
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["values"]["quotas"]["trust0"]["simulations"], 2);
    assert_eq!(shown["writtenBy"], "olga");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let e = tool_error(&simulate(&app, &key, "s4").await);
    assert_eq!(e["code"], "quota");
    assert!(e["message"].as_str().unwrap().contains("limit of 2"), "{e}");

    let mut log = horst_operator::audit_log(&app.store, 0, 5).await.unwrap();
    // The configured admin token's seed at the start is not this test's.
    log.retain(|e| e.who != "config");
    let actions: Vec<&str> = log.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["quotas_reload", "quotas_reload"]);
    assert_eq!(log[0].who, "olga");
    assert!(log[1].who.starts_with("api:olga@config-"), "{}", log[1].who);
}

async fn public(app: &TestApp, path: &str) -> (u16, Value) {
    let r = app.http.get(app.url(path)).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn published_threads_are_public_with_the_board_rules() {
    let app = ops_app(|_| {}).await;
    let a = app.agent_key("anna", 0).await;
    let b = app.agent_key("bert", 0).await;
    let t = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": "Mehr\u{200B} Vögel", "body": "first\u{202E} post\u{0007}\u{200D}"}),
            Some(&a),
        )
        .await,
    );
    let id = t["threadId"].as_str().unwrap().to_string();
    let reply = |key: String, body: &'static str| {
        let app = &app;
        let id = id.clone();
        async move {
            ok_result(
                &app.call(
                    "write_post",
                    json!({"threadId": id, "body": body}),
                    Some(&key),
                )
                .await,
            )
        }
    };
    let from_bert = reply(b.clone(), "agreed").await;
    let hidden = reply(a.clone(), "rude words").await;
    let other = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": "not chosen", "body": "b"}),
            Some(&b),
        )
        .await,
    );

    // Nothing published yet; no key needed.
    let (status, list) = public(&app, "/api/board/published").await;
    assert_eq!(status, 200);
    assert_eq!(list["items"], json!([]));
    assert!(list["notice"].as_str().unwrap().contains("untrusted"));

    let (status, _) = admin_json(
        &app,
        reqwest::Method::POST,
        &format!(
            "/api/admin/posts/{}/hide",
            hidden["postId"].as_str().unwrap()
        ),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = admin_json(
        &app,
        reqwest::Method::POST,
        &format!("/api/admin/threads/{id}/publish"),
    )
    .await;
    assert_eq!(status, 200);
    let (status, e) = admin_json(
        &app,
        reqwest::Method::POST,
        "/api/admin/threads/t404/publish",
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(e["code"], "not_found");

    let (_, before) = admin_json(&app, reqwest::Method::GET, "/api/admin/overview").await;
    let (status, list) = public(&app, "/api/board/published").await;
    assert_eq!(status, 200);
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    let item = &items[0];
    assert_eq!(item["threadId"], id.as_str());
    assert_eq!(item["title"], "Mehr Vögel");
    assert_eq!(item["author"], "anna");
    assert_eq!(item["posts"], 2);
    assert!(item["publishedAt"].as_str().unwrap().ends_with('Z'));
    assert!(item.get("yours").is_none() && item.get("endorsedByYou").is_none());

    let r = app
        .http
        .get(app.url(&format!("/api/board/published/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let read: Value = r.json().await.unwrap();
    let posts = read["posts"].as_array().unwrap();
    let bodies: Vec<&str> = posts.iter().map(|p| p["body"].as_str().unwrap()).collect();
    assert_eq!(bodies, ["first post", "agreed"]);
    assert!(posts.iter().all(|p| p.get("yours").is_none()));
    assert_eq!(posts[1]["postId"], from_bert["postId"]);

    // Public reads are not board reads.
    let (_, after) = admin_json(&app, reqwest::Method::GET, "/api/admin/overview").await;
    assert_eq!(before["boardReads"], after["boardReads"]);

    // Not published, unknown, or not an id at all: the same 404. A bad offset: 400.
    for path in [
        format!(
            "/api/board/published/{}",
            other["threadId"].as_str().unwrap()
        ),
        "/api/board/published/t404".into(),
        "/api/board/published/%3Cscript%3E".into(),
    ] {
        let (status, e) = public(&app, &path).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(e["code"], "not_found");
    }
    let (status, e) = public(&app, "/api/board/published?offset=many").await;
    assert_eq!(status, 400);
    assert_eq!(e["code"], "invalid_input");

    // A blocked author's posts vanish from the public thread too.
    horst_operator::set_blocked(&app.store, &app.auth, "olga", "bert", true)
        .await
        .unwrap();
    let (_, read) = public(&app, &format!("/api/board/published/{id}")).await;
    assert_eq!(read["posts"].as_array().unwrap().len(), 1);
    horst_operator::set_blocked(&app.store, &app.auth, "olga", "bert", false)
        .await
        .unwrap();

    // Unpublish with the CLI, publish again with it; the operator's list shows the flag.
    let (ok, out, err) = horst_admin(&app, &["board", "unpublish", &id]).await;
    assert!(ok, "{out}\n{err}");
    let (_, list) = public(&app, "/api/board/published").await;
    assert_eq!(list["items"], json!([]));
    let (status, _) = public(&app, &format!("/api/board/published/{id}")).await;
    assert_eq!(status, 404);
    let (ok, _, err) = horst_admin(&app, &["board", "publish", &id]).await;
    assert!(ok, "{err}");
    let (_, shown) = admin_json(
        &app,
        reqwest::Method::GET,
        &format!("/api/admin/threads/{id}"),
    )
    .await;
    assert_eq!(shown["published"], true);

    // The author withdraws the thread: it leaves the public board; it cannot be published.
    ok_result(
        &app.call("withdraw_post", json!({"postId": t["postId"]}), Some(&a))
            .await,
    );
    let (_, list) = public(&app, "/api/board/published").await;
    assert_eq!(list["items"], json!([]));
    let (status, _) = public(&app, &format!("/api/board/published/{id}")).await;
    assert_eq!(status, 404);
    let (status, e) = admin_json(
        &app,
        reqwest::Method::POST,
        &format!("/api/admin/threads/{id}/publish"),
    )
    .await;
    assert_eq!(status, 409);
    assert_eq!(e["code"], "conflict");

    let mut log = horst_operator::audit_log(&app.store, 0, 10).await.unwrap();
    // The configured admin token's seed at the start is not this test's.
    log.retain(|e| e.who != "config");
    let actions: Vec<&str> = log.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(
        actions,
        [
            "publish",
            "unpublish",
            "unblock",
            "block",
            "publish",
            "hide_post"
        ]
    );
}

/// The operator's list of revisions refuses a state no revision can have, with the states
/// it takes, in the REST API and the CLI; it listed nothing (200, `total: 0`), so a typo
/// (`promote` for `promoted`) read as a server without promoted levels.
#[tokio::test]
async fn the_revision_list_refuses_an_unknown_state() {
    let app = ops_app(|_| {}).await;
    let (status, e) = admin_json(
        &app,
        reqwest::Method::GET,
        "/api/admin/revisions?state=promote",
    )
    .await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["code"], "invalid_input", "{e}");
    let m = e["error"].as_str().unwrap();
    assert!(
        m.contains("promote") && m.contains("labor, promoted, retired, withdrawn, quarantined"),
        "{m}"
    );
    let (status, list) = admin_json(
        &app,
        reqwest::Method::GET,
        "/api/admin/revisions?state=promoted",
    )
    .await;
    assert_eq!(status, 200, "{list}");
    let (ok, out, err) = horst_admin(&app, &["level", "list", "--state", "promote"]).await;
    assert!(!ok, "{out}");
    assert!(err.contains("unknown state"), "{err}");
}

/// The operator's account list refuses a kind or trust no account has, saying what it
/// takes; it listed nothing (200, `total: 0`), so `kind=agents` read as "no agents".
#[tokio::test]
async fn the_account_list_refuses_an_unknown_kind_or_trust() {
    let app = ops_app(|_| {}).await;
    app.agent_key("amsel", 0).await;
    for (path, says) in [
        ("/api/admin/accounts?kind=agents", "agent or human"),
        ("/api/admin/accounts?trust=3", "0, 1 or 2"),
    ] {
        let (status, e) = admin_json(&app, reqwest::Method::GET, path).await;
        assert_eq!(status, 400, "{path}: {e}");
        assert_eq!(e["code"], "invalid_input", "{path}: {e}");
        assert!(e["error"].as_str().unwrap().contains(says), "{path}: {e}");
    }
    let (status, list) =
        admin_json(&app, reqwest::Method::GET, "/api/admin/accounts?trust=0").await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["total"], 1, "{list}");
}

/// The account that owns the built-in levels cannot be blocked: blocked, every shipped level
/// vanished for players and agents (`get_level erste-schritte` answered `not_found`). The
/// refusal says what to do instead; other accounts are blocked as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_levels_owner_cannot_be_blocked() {
    let app = ops_app(|_| {}).await;
    horst_operator::publish_shipped(&app.store).await.unwrap();
    let owner = horst_gateway::builtin::OWNER;
    let (status, v) = admin_json(
        &app,
        reqwest::Method::POST,
        &format!("/api/admin/accounts/{owner}/block"),
    )
    .await;
    assert_eq!(status, 400, "{v}");
    assert!(v.to_string().contains("built-in levels"), "{v}");
    assert!(v.to_string().contains("quarantine"), "{v}");
    let a = app
        .call("get_level", json!({"name": "erste-schritte"}), None)
        .await;
    assert_eq!(ok_result(&a)["name"], "erste-schritte", "{}", a.text);
    let (ok, _, err) = horst_admin(&app, &["account", "block", owner]).await;
    assert!(!ok && err.contains("built-in levels"), "{err}");

    horst_identity::accounts::create_account(&app.store, "bert", 1)
        .await
        .unwrap();
    let (status, v) = admin_json(
        &app,
        reqwest::Method::POST,
        "/api/admin/accounts/bert/block",
    )
    .await;
    assert_eq!(status, 200, "{v}");
}

/// A REST listing's `limit` outside its range (0 too) is a 400 naming the range, as the CLI's
/// `--limit` and the leaderboard are refused, for every admin listing; they took it as the
/// nearest bound (`limit=0` answered one item, `limit=20000` a page of 10000).
#[tokio::test]
async fn listings_refuse_a_limit_out_of_range_and_say_the_range() {
    let app = ops_app(|_| {}).await;
    let key = app.agent_key("anna", 1).await;
    for _ in 0..2 {
        ok_result(
            &app.call(
                "contact_admin",
                json!({"category": "bug", "subject": "s", "message": "m"}),
                Some(&key),
            )
            .await,
        );
    }
    for (path, max) in [
        ("/api/admin/messages", 10_000),
        ("/api/admin/threads", 10_000),
        ("/api/admin/audit", 10_000),
        ("/api/admin/sign-ins", 10_000),
        ("/api/admin/accounts", 1000),
        ("/api/admin/keys", 1000),
        ("/api/admin/tokens", 1000),
        ("/api/admin/revisions", 1000),
        ("/api/admin/jobs", 500),
    ] {
        for limit in [0, max + 1] {
            let (status, v) =
                admin_json(&app, reqwest::Method::GET, &format!("{path}?limit={limit}")).await;
            assert_eq!(status, 400, "{path}?limit={limit}: {v}");
            assert_eq!(v["code"], "invalid_input", "{path}: {v}");
            let m = v["error"].as_str().unwrap();
            assert!(m.contains(&format!("1 to {max}")), "{path}: {m}");
        }
        let (status, v) =
            admin_json(&app, reqwest::Method::GET, &format!("{path}?limit={max}")).await;
        assert_eq!(status, 200, "{path}?limit={max}: {v}");
        let (status, v) = admin_json(&app, reqwest::Method::GET, &format!("{path}?limit=1")).await;
        assert_eq!(status, 200, "{path}?limit=1: {v}");
    }
    let (_, v) = admin_json(&app, reqwest::Method::GET, "/api/admin/messages?limit=5").await;
    assert_eq!(v["items"].as_array().map(Vec::len), Some(2), "{v}");
}
