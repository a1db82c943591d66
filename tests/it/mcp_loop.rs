//! The recommended loop over HTTP with a real worker: keys, playtest, simulate, submit,
//! idempotent retry, status, Labor, successors, withdraw, quotas (contract: "Recommended
//! loop", "Revisions", "Retries and idempotency", "Quotas").

use serde_json::{json, Value};

use horst_queue::JobKind;

use crate::harness::{
    ok_result, spawn_app_with, spawn_gateway, tool_error, LEVEL_MAP, LEVEL_REPLAY,
};
use crate::reliability::call;
use crate::stall::{start_worker, until_started, waiting_call, Gated};

/// A short corridor: the planner finds the nest in moments.
pub const TINY_MAP: &str = "gcv-map 1\nname: Kurz\nsize: 8 3\ngrid:\n........\n........\nGGGGGGGG\nentities:\nstart 1 1\nnest 5 1\n";

async fn self_service_key(app: &crate::harness::TestApp) -> String {
    let r = app
        .http
        .post(app.url("/api/agent-keys"))
        .header("content-type", "application/json")
        .body(r#"{"displayName":"Loop"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let body: Value = r.json().await.unwrap();
    body["key"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recommended_loop() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let key = self_service_key(&app).await;
    let k = Some(key.as_str());
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();

    assert_eq!(
        ok_result(
            &app.call("validate_map", json!({"map": TINY_MAP}), None)
                .await
        )["valid"],
        true
    );
    // The planner searches a replay; the referee confirms it.
    let p = ok_result(
        &app.call(
            "playtest_map",
            json!({"map": TINY_MAP, "idempotencyKey": "p1"}),
            k,
        )
        .await,
    );
    assert_eq!(p["outcome"], "won", "{p}");
    assert!(p["explored"].as_u64().unwrap() > 0, "{p}");
    assert_eq!(p["bestDistance"], 0, "{p}");
    assert!(p.get("reason").is_none() && p.get("hint").is_none(), "{p}");
    assert_eq!(p["remaining"]["playtests"], 5);
    assert_eq!(p["seed"], 1);
    let tiny_replay = p["replay"].clone();
    let s = ok_result(
        &app.call(
            "simulate_replay",
            json!({"map": TINY_MAP, "replay": tiny_replay, "idempotencyKey": "s1"}),
            k,
        )
        .await,
    );
    assert_eq!(s["won"], true, "{s}");
    assert_eq!(s["remaining"]["simulations"], 49);

    // Submit; the revision is stored and the job annotated.
    let args = json!({"name": "erste-schritte-2", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "sub-1"});
    let sub = ok_result(&app.call("submit_level", args.clone(), k).await);
    let rev = sub["revisionId"].as_str().unwrap().to_string();
    assert_eq!(sub["state"], "labor");
    assert_eq!(sub["seed"], 1);
    assert_eq!(sub["acceptance"]["outcome"], "won");
    assert_eq!(sub["engineVersion"], horst_engine::engine_version());
    assert_eq!(sub["remaining"]["submissions"], 1);
    // Idempotent retry: the same revision, nothing charged.
    let again = ok_result(&app.call("submit_level", args.clone(), k).await);
    assert_eq!(again["revisionId"], rev.as_str());
    assert_eq!(again["replayed"], true);
    assert_eq!(again["remaining"]["submissions"], 1);
    // Same key, other input: conflict.
    let mut other = args.clone();
    other["name"] = json!("anders");
    assert_eq!(
        tool_error(&app.call("submit_level", other, k).await)["code"],
        "conflict"
    );

    let st = ok_result(
        &app.call("get_submission", json!({"jobId": sub["jobId"]}), k)
            .await,
    );
    assert_eq!(st["state"], "succeeded");
    assert_eq!(st["revisionId"], rev.as_str());
    assert_eq!(st["revisionState"], "labor");
    let mine = ok_result(&app.call("my_submissions", json!({}), k).await);
    assert_eq!(mine["items"].as_array().unwrap().len(), 1);
    assert_eq!(mine["items"][0]["latestCheck"]["currentEngine"], true);
    let labor = ok_result(&app.call("list_labor", json!({}), None).await);
    assert_eq!(labor["items"][0]["revisionId"], rev.as_str());
    assert_eq!(labor["nextOffset"], Value::Null);
    let level = ok_result(
        &app.call(
            "get_level",
            json!({"name": "erste-schritte-2", "revisionId": rev}),
            None,
        )
        .await,
    );
    assert_eq!(level["map"], LEVEL_MAP);
    assert_eq!(level["parentRevisionId"], Value::Null);
    let e = tool_error(
        &app.call("get_level", json!({"name": "erste-schritte-2"}), None)
            .await,
    );
    assert_eq!(e["code"], "not_found");

    // Another account cannot take the name or build on the revision.
    let other_key = app.agent_key("olga", 1).await;
    let o = Some(other_key.as_str());
    let e = tool_error(&app.call("submit_level", json!({"name": "erste-schritte-2", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "x1"}), o).await);
    assert_eq!(e["code"], "forbidden");
    let e = tool_error(&app.call("submit_level", json!({"name": "olgas", "parentRevisionId": rev, "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "x2"}), o).await);
    assert_eq!(e["code"], "validation_failed");
    let e = tool_error(
        &app.call("withdraw_level", json!({"revisionId": rev}), o)
            .await,
    );
    assert_eq!(e["code"], "forbidden");
    // A reserved name.
    let e = tool_error(&app.call("submit_level", json!({"name": "Felsstufen", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "x3"}), o).await);
    assert_eq!(e["code"], "forbidden");
    // A losing replay stores nothing.
    let lose = json!({"seed": 1, "actions": [{"action": 0, "ticks": 30}]});
    let e = tool_error(
        &app.call(
            "submit_level",
            json!({"name": "olgas", "map": LEVEL_MAP, "replay": lose, "idempotencyKey": "x4"}),
            o,
        )
        .await,
    );
    assert_eq!(e["code"], "validation_failed");
    assert_eq!(e["outcome"], "unresolved");
    assert!(e["ticks"].is_u64());
    assert_eq!(e["replayed"], Value::Null, "{e}");
    // The same key again: the same failure, neither charged nor run again, and it says so.
    let again = tool_error(
        &app.call(
            "submit_level",
            json!({"name": "olgas", "map": LEVEL_MAP, "replay": lose, "idempotencyKey": "x4"}),
            o,
        )
        .await,
    );
    assert_eq!(
        (&again["code"], &again["outcome"], &again["replayed"]),
        (&e["code"], &e["outcome"], &json!(true)),
        "{again}"
    );

    // A successor of the same owner and name.
    let succ = ok_result(&app.call("submit_level", json!({"name": "erste-schritte-2", "parentRevisionId": rev, "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "sub-2"}), k).await);
    let rev2 = succ["revisionId"].as_str().unwrap().to_string();
    assert_ne!(rev2, rev);
    let l2 = ok_result(
        &app.call(
            "get_level",
            json!({"name": "erste-schritte-2", "revisionId": rev2}),
            None,
        )
        .await,
    );
    assert_eq!(l2["parentRevisionId"], rev.as_str());
    // The daily submissions (2 at trust 0) are used up.
    let e = tool_error(&app.call("submit_level", json!({"name": "erste-schritte-2", "parentRevisionId": rev, "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "sub-3"}), k).await);
    assert_eq!(e["code"], "quota");
    assert_eq!(e["scope"], "owner");

    // Withdraw: hidden, evidence and name kept.
    let w = ok_result(
        &app.call("withdraw_level", json!({"revisionId": rev}), k)
            .await,
    );
    assert_eq!(w["state"], "withdrawn");
    assert_eq!(w["evidenceRetained"], true);
    assert_eq!(w["storageReclaimed"], false);
    assert_eq!(w["nameReserved"], true);
    let labor = ok_result(&app.call("list_labor", json!({}), None).await);
    assert_eq!(labor["items"].as_array().unwrap().len(), 1);
    let e = tool_error(
        &app.call(
            "get_level",
            json!({"name": "erste-schritte-2", "revisionId": rev}),
            None,
        )
        .await,
    );
    assert_eq!(e["code"], "not_found");
    let e = tool_error(&app.call("submit_level", json!({"name": "erste-schritte-2", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "x5"}), o).await);
    assert_eq!(e["code"], "forbidden", "the name stays reserved");
    let st = ok_result(
        &app.call("get_submission", json!({"jobId": sub["jobId"]}), k)
            .await,
    );
    assert_eq!(st["revisionState"], "withdrawn");
    // Jobs of others are not found.
    let e = tool_error(
        &app.call("get_submission", json!({"jobId": sub["jobId"]}), o)
            .await,
    );
    assert_eq!(e["code"], "not_found");
}

/// The nest sits in a pocket of rock: no replay can win, and the planner says so, with the
/// proof, through `playtest_map` and through `get_submission`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwinnable_playtest_says_why() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let key = self_service_key(&app).await;
    let k = Some(key.as_str());
    let sealed = "gcv-map 1\nname: Tasche\nsize: 8 4\ngrid:\n........\n.....###\n.....#.#\nGGGGGGGG\nentities:\nstart 1 2\nnest 6 2\n";
    let p = ok_result(
        &app.call(
            "playtest_map",
            json!({"map": sealed, "idempotencyKey": "sealed-1"}),
            k,
        )
        .await,
    );
    assert_eq!(p["outcome"], "unresolved", "{p}");
    assert_eq!(p["reason"], "unreachable", "{p}");
    assert_eq!(p["proof"], "relaxed_graph", "{p}");
    assert_eq!(p["explored"], 0, "{p}");
    assert!(p.get("bestDistance").is_none(), "{p}");
    assert!(
        p["hint"].as_str().unwrap().starts_with("Proved unwinnable"),
        "{p}"
    );
    let g = ok_result(
        &app.call("get_submission", json!({"jobId": p["jobId"]}), k)
            .await,
    );
    assert_eq!(g["kind"], "playtest", "{g}");
    for f in ["outcome", "reason", "proof", "explored", "hint"] {
        assert_eq!(g["result"][f], p[f], "{f}: {g}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trust0_accounts_7th_playtest_of_the_day_is_quota_owner() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("paul", 0).await;
    // Each playtest is charged when it starts, whether the planner wins or is unavailable.
    let mut first = None;
    for i in 0..6 {
        let a = app
            .call(
                "playtest_map",
                json!({"map": TINY_MAP, "idempotencyKey": format!("p{i}")}),
                Some(&key),
            )
            .await;
        let outcome = &crate::harness::result_text(&a);
        if a.body["result"]["isError"] == false {
            assert_eq!(outcome["remaining"]["playtests"], 5 - i);
        } else {
            assert_eq!(outcome["error"]["code"], "engine_unavailable", "{}", a.text);
        }
        first.get_or_insert(outcome.clone());
    }
    let e = tool_error(
        &app.call(
            "playtest_map",
            json!({"map": TINY_MAP, "idempotencyKey": "p6"}),
            Some(&key),
        )
        .await,
    );
    assert_eq!(e["code"], "quota");
    assert_eq!(e["scope"], "owner");
    assert!(e["retryAfterSeconds"].as_u64().unwrap() >= 1);
    // A replayed key is still answered without charge.
    let a = app
        .call(
            "playtest_map",
            json!({"map": TINY_MAP, "idempotencyKey": "p0"}),
            Some(&key),
        )
        .await;
    let again = &crate::harness::result_text(&a);
    if a.body["result"]["isError"] == false {
        assert_eq!(again["replayed"], true);
    } else {
        let first = first.unwrap();
        assert_eq!(again["error"]["code"], first["error"]["code"]);
        assert_eq!(again["error"]["jobId"], first["error"]["jobId"]);
        assert_eq!(
            again["error"]["remaining"]["playtests"], 0,
            "nothing charged"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labor_candidates_and_storage_are_capped() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.quotas.trust1.labor_candidates = 1;
        c.quotas.storage_per_account_bytes = 64 * 1024;
    })
    .await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("rosa", 1).await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let sub = |name: &str, idem: &str| json!({"name": name, "map": LEVEL_MAP, "replay": replay, "idempotencyKey": idem});
    let first = ok_result(&app.call("submit_level", sub("eins", "a"), Some(&key)).await);
    let e = tool_error(&app.call("submit_level", sub("zwei", "b"), Some(&key)).await);
    assert_eq!(e["code"], "quota");
    assert_eq!(e["scope"], "owner");
    // Withdrawing frees a candidate slot, but its bytes still count.
    ok_result(
        &app.call(
            "withdraw_level",
            json!({"revisionId": first["revisionId"]}),
            Some(&key),
        )
        .await,
    );
    ok_result(&app.call("submit_level", sub("zwei", "c"), Some(&key)).await);
    // A map that does not fit the remaining storage budget is refused before it runs.
    let padded = format!("{LEVEL_MAP}{}", "# padding\n".repeat(6000));
    let big = json!({"name": "drei", "map": padded, "replay": replay, "idempotencyKey": "d"});
    let e = tool_error(&app.call("submit_level", big, Some(&key)).await);
    assert_eq!(e["code"], "quota", "{e}");
    assert!(
        e["remaining"]["submissions"].is_u64(),
        "job answers carry remaining: {e}"
    );
    // A blocked account's revisions are hidden everywhere.
    let labor = ok_result(&app.call("list_labor", json!({}), None).await);
    assert_eq!(labor["items"].as_array().unwrap().len(), 1);
    let rev = labor["items"][0]["revisionId"].clone();
    horst_identity::accounts::set_account_field(&app.store, "rosa", "blocked", "1")
        .await
        .unwrap();
    let labor = ok_result(&app.call("list_labor", json!({}), None).await);
    assert_eq!(labor["items"].as_array().unwrap().len(), 0);
    let e = tool_error(
        &app.call(
            "get_level",
            json!({"name": "zwei", "revisionId": rev}),
            None,
        )
        .await,
    );
    assert_eq!(e["code"], "not_found");
}

/// A submission whose revision is refused when it is stored (the account's storage budget
/// filled while its check ran) carries the refusal's details, as a refusal before admission
/// does (a quota failure carries `retryAfterSeconds` and `scope`), and so does a retry with
/// the same key (both had only `code`, `message` and `jobId`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revision_refused_when_stored_keeps_the_refusals_details() {
    let app = spawn_gateway().await;
    let key = app.agent_key("ibis", 1).await;
    let runner = Gated::new();
    let _worker = start_worker(&app, runner.clone());
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args =
        json!({"name": "voll", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "full-1"});
    let caller = waiting_call(&app, "submit_level", &args, &key);
    until_started(&runner, JobKind::Submit).await;
    let _: () = redis::cmd("SET")
        .arg(horst_gateway::keys::storage(&app.store, "ibis"))
        .arg(app.config.quotas.storage_per_account_bytes)
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    runner.open(JobKind::Submit);
    let (status, first, _) = caller.await.unwrap();
    assert_eq!(status, 200, "{first}");
    let (_, again, _) = call(app.addr, "submit_level", args, &key).await;
    for (answer, replayed) in [(&first, Value::Null), (&again, json!(true))] {
        let e = &answer["error"];
        assert_eq!(e["code"], "quota", "{answer}");
        assert_eq!(e["scope"], "owner", "{answer}");
        assert_eq!(e["limit"], "storage", "{answer}");
        assert_eq!(e["retryAfterSeconds"], 86_400, "{answer}");
        assert!(e["jobId"].is_string(), "{answer}");
        assert_eq!(e["replayed"], replayed, "{answer}");
    }
    assert_eq!(runner.runs(JobKind::Submit), 1, "run once");
}

/// A retry whose idempotency key is still recorded but whose job is not (deleted here; a job
/// dropped between the check for its key and the admission is the same) is admitted as a new
/// job, so it is checked first like one: refused before it is queued, nothing charged. It
/// skipped the checks, ran and was charged, and only storing its revision refused it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_whose_job_is_gone_is_checked_before_it_is_admitted() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.quotas.trust1.labor_candidates = 1;
    })
    .await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("kiebitz", 1).await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args = json!({"name": "eins", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "k-1"});
    let first = ok_result(&app.call("submit_level", args.clone(), Some(&key)).await);
    let job = first["jobId"].as_str().unwrap();
    let _: () = redis::cmd("DEL")
        .arg(
            app.store
                .key_in(horst_store::Group::Queue, &format!("job:{job}")),
        )
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    let before = app.queue.remaining("kiebitz", 1).await.unwrap();
    let e = tool_error(&app.call("submit_level", args, Some(&key)).await);
    assert_eq!(e["code"], "quota", "{e}");
    assert_eq!(e["limit"], "labor_candidates", "{e}");
    assert!(e.get("jobId").is_none(), "refused before admission: {e}");
    let after = app.queue.remaining("kiebitz", 1).await.unwrap();
    assert_eq!(after.submissions, before.submissions, "nothing charged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_leaves_while_queued_is_not_charged() {
    // No worker: the job stays queued until the client gives up.
    let app = spawn_gateway().await;
    let key = app.agent_key("sepp", 0).await;
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"playtest_map",
        "arguments":{"map": TINY_MAP, "idempotencyKey": "gone-1"}}});
    // The client leaves once its job is queued (not after a fixed time: on a loaded machine
    // a fixed time could end before the admission, and then there is nothing to drop).
    let call = tokio::spawn(
        app.http
            .post(app.url("/api/mcp"))
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .header("authorization", format!("Bearer {key}"))
            .body(body.to_string())
            .send(),
    );
    let queued = crate::harness::eventually(std::time::Duration::from_secs(30), async || {
        let (jobs, _) = app.queue.list("sepp", 0, 10).await.unwrap();
        jobs.first()
            .is_some_and(|j| j.state == horst_queue::JobState::Queued)
    })
    .await;
    assert!(queued, "the job was never queued");
    assert!(!call.is_finished(), "the call should still be waiting");
    call.abort();
    let dropped = crate::harness::eventually(std::time::Duration::from_secs(10), async || {
        let (jobs, _) = app.queue.list("sepp", 0, 10).await.unwrap();
        jobs.first()
            .is_some_and(|j| j.state != horst_queue::JobState::Queued)
    })
    .await;
    assert!(dropped, "the queued job was not dropped");
    let r = app.queue.remaining("sepp", 0).await.unwrap();
    assert_eq!(r.playtests, 6, "the reservation was released");
}

/// Referees like the real runner, but only after a pause, so a client can leave while its
/// submission runs.
struct SlowReferee(horst_worker::EngineRunner);

impl horst_worker::JobRunner for SlowReferee {
    fn run(
        &self,
        kind: horst_queue::JobKind,
        input: &horst_queue::JobInput,
        limit: std::time::Duration,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<horst_queue::JobResult, horst_queue::Failure> {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        self.0.run(kind, input, limit, cancel)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_whose_client_left_publishes_nothing_and_says_why() {
    let app = spawn_gateway().await;
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(horst_worker::run(
        app.queue.clone(),
        std::sync::Arc::new(SlowReferee(horst_worker::EngineRunner::new(1).unwrap())),
        horst_worker::WorkerIdentity::new(91, 1),
        horst_worker::WorkerMetrics::register(&horst_telemetry::Metrics::new()),
        rx,
    ));
    let key = app.agent_key("toni", 0).await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args = json!({"name": "verlassen", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "left-1"});
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"submit_level","arguments": args}});
    let sent = app
        .http
        .post(app.url("/api/mcp"))
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .header("authorization", format!("Bearer {key}"))
        .timeout(std::time::Duration::from_millis(900))
        .body(body.to_string())
        .send()
        .await;
    assert!(sent.is_err(), "the call should still be running");
    // The job runs to its end (started work stays charged) and records why nothing was published.
    let recorded = crate::harness::eventually(std::time::Duration::from_secs(20), async || {
        let (jobs, _) = app.queue.list("toni", 0, 10).await.unwrap();
        jobs.first().is_some_and(|j| {
            matches!(
                j.publication,
                Some(horst_queue::Publication::Unpublished { .. })
            )
        })
    })
    .await;
    assert!(recorded, "the job does not say why nothing was published");
    let labor = ok_result(&app.call("list_labor", json!({}), None).await);
    assert_eq!(labor["items"].as_array().unwrap().len(), 0);
    // Its owner reads why, and the read publishes nothing either.
    let (jobs, _) = app.queue.list("toni", 0, 10).await.unwrap();
    let read = ok_result(
        &app.call("get_submission", json!({"jobId": jobs[0].id}), Some(&key))
            .await,
    );
    assert_eq!(
        (
            &read["state"],
            &read["revisionId"],
            &read["publication"]["state"]
        ),
        (&json!("succeeded"), &Value::Null, &json!("unpublished")),
        "{read}"
    );
    assert!(read["publication"]["message"]
        .as_str()
        .unwrap()
        .contains("disconnected"));
    // A retry with the same key answers from the record: cancelled, with the reason.
    let e = tool_error(&app.call("submit_level", args, Some(&key)).await);
    assert_eq!(e["code"], "cancelled", "{e}");
    assert!(e["message"]
        .as_str()
        .unwrap()
        .contains("nothing was published"));
    assert_eq!(
        e["remaining"]["submissions"], 1,
        "the started job stays charged"
    );
    let _ = tx.send(true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_waiting_job_per_account_else_busy() {
    // No worker: the first job waits in the queue.
    let app = spawn_gateway().await;
    let key = app.agent_key("uwe", 1).await;
    let first = {
        let (http, url, key) = (app.http.clone(), app.url("/api/mcp"), key.clone());
        tokio::spawn(async move {
            let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"simulate_replay",
                "arguments":{"map": TINY_MAP, "replay": {"seed": 1, "actions": [{"action": 8, "ticks": 60}]}, "idempotencyKey": "w1"}}});
            let _ = http
                .post(url)
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2025-11-25")
                .header("authorization", format!("Bearer {key}"))
                .timeout(std::time::Duration::from_secs(3))
                .body(body.to_string())
                .send()
                .await;
        })
    };
    let queued = crate::harness::eventually(std::time::Duration::from_secs(5), async || {
        let (jobs, _) = app.queue.list("uwe", 0, 10).await.unwrap();
        !jobs.is_empty()
    })
    .await;
    assert!(queued);
    let e = tool_error(
        &app.call(
            "playtest_map",
            json!({"map": TINY_MAP, "idempotencyKey": "w2"}),
            Some(&key),
        )
        .await,
    );
    assert_eq!(e["code"], "busy", "{e}");
    assert!(e["retryAfterSeconds"].as_u64().unwrap() >= 1);
    first.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_storage_budget_is_shared() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        // One submission of the level fits (its map, replay and the bound of an acceptance
        // report, revisions::ACCEPTANCE_MAX_BYTES), a second does not.
        c.quotas.storage_total_bytes = 3500;
    })
    .await;
    let _worker = app.start_engine_worker();
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let a = app.agent_key("vera", 1).await;
    let b = app.agent_key("wim", 1).await;
    ok_result(
        &app.call(
            "submit_level",
            json!({"name": "vera-1", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "v1"}),
            Some(&a),
        )
        .await,
    );
    let e = tool_error(
        &app.call(
            "submit_level",
            json!({"name": "wim-1", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "w1"}),
            Some(&b),
        )
        .await,
    );
    assert_eq!(e["code"], "quota", "{e}");
    assert_eq!(e["scope"], "global");
}

/// A crash of the API process between storing a submission's revision and recording it on
/// the job (the fault hook stops the call right there) leaves a job that a retry with the
/// same key answers correctly: the revision stored first, once, not `pending` for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_a_crash_between_storing_and_recording_answers_the_revision() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("kurt", 1).await;
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args =
        json!({"name": "absturz", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "crash-1"});
    horst_gateway::faults::stop_after_revision_store("kurt", true);
    let e = tool_error(&app.call("submit_level", args.clone(), Some(&key)).await);
    horst_gateway::faults::stop_after_revision_store("kurt", false);
    assert_eq!(e["code"], "internal_error", "{e}");
    // The revision is stored, the job does not say so yet.
    let (jobs, _) = app.queue.list("kurt", 0, 10).await.unwrap();
    let job = jobs.first().expect("the submission's job").clone();
    assert_eq!(job.state, horst_queue::JobState::Succeeded);
    assert_eq!(job.publication, None);
    let labor = ok_result(&app.call("list_labor", json!({}), None).await);
    let items = labor["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{labor}");
    let stored = items[0]["revisionId"].as_str().unwrap().to_string();

    // The retry answers that revision, replayed, and records it on the job.
    let again = ok_result(&app.call("submit_level", args.clone(), Some(&key)).await);
    assert_eq!(again["revisionId"], stored.as_str(), "{again}");
    assert_eq!(again["replayed"], true);
    let job = app.queue.get(&job.id).await.unwrap().unwrap();
    assert_eq!(
        job.publication,
        Some(horst_queue::Publication::Stored {
            revision_id: stored.clone()
        })
    );
    // Stored once: one revision, its bytes counted once.
    let labor = ok_result(&app.call("list_labor", json!({}), None).await);
    assert_eq!(labor["items"].as_array().unwrap().len(), 1, "{labor}");
    let st = ok_result(
        &app.call("get_submission", json!({"jobId": job.id}), Some(&key))
            .await,
    );
    assert_eq!(st["revisionId"], stored.as_str());
    // And a third call answers the same from the record.
    let third = ok_result(&app.call("submit_level", args, Some(&key)).await);
    assert_eq!(third["revisionId"], stored.as_str());
}

/// The storage refusal tells the agent to ask the operator with contact_admin, naming a
/// category; that category must be one contact_admin takes. It named `quota`, which
/// contact_admin refuses (`invalid_input`: bug, feedback, question or other), so an agent
/// that followed the advice word for word failed a second time.
#[tokio::test]
async fn the_storage_refusal_names_a_contact_category_that_works() {
    let app = spawn_gateway().await;
    let key = app.agent_key("elster", 1).await;
    let _: () = redis::cmd("SET")
        .arg(horst_gateway::keys::storage(&app.store, "elster"))
        .arg(app.config.quotas.storage_per_account_bytes)
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args = json!({"name": "voll", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "s-1"});
    let e = tool_error(&app.call("submit_level", args, Some(&key)).await);
    assert_eq!(
        (&e["code"], &e["limit"]),
        (&json!("quota"), &json!("storage")),
        "{e}"
    );
    let message = e["message"].as_str().unwrap();
    let category = message
        .split("contact_admin (category ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("no contact_admin category in {message:?}"));
    let sent = ok_result(
        &app.call(
            "contact_admin",
            json!({"category": category, "subject": "Speicher voll", "message": "Bitte Platz schaffen"}),
            Some(&key),
        )
        .await,
    );
    assert!(sent["messageId"].is_string(), "{sent}");
}

/// A submission whose replay does not win: the call answers `validation_failed`, and
/// `get_submission` of its job (what a caller told `pending` reads) says the same in
/// `publication`. It showed only `state: succeeded` with `revisionId: null` and nothing on
/// why, which reads as an accepted submission.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_submission_says_why_a_losing_submission_stored_nothing() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("dohle", 1).await;
    let losing = json!({"seed": 1, "actions": [{"action": 4, "ticks": 5}]});
    let args =
        json!({"name": "verloren", "map": LEVEL_MAP, "replay": losing, "idempotencyKey": "lose-1"});
    let e = tool_error(&app.call("submit_level", args, Some(&key)).await);
    assert_eq!(e["code"], "validation_failed", "{e}");
    let job = e["jobId"].as_str().unwrap();
    let s = ok_result(
        &app.call("get_submission", json!({"jobId": job}), Some(&key))
            .await,
    );
    assert_eq!(s["state"], "succeeded", "{s}");
    assert_eq!(s["result"]["won"], false, "{s}");
    assert_eq!(s["revisionId"], Value::Null, "{s}");
    assert_eq!(s["publication"]["state"], "refused", "{s}");
    assert_eq!(s["publication"]["code"], "validation_failed", "{s}");
    assert_eq!(s["publication"]["message"], e["message"], "{s}");
    // A won submission carries no publication (its revisionId says it all).
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let args =
        json!({"name": "gewonnen", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "win-1"});
    let won = ok_result(&app.call("submit_level", args, Some(&key)).await);
    let s = ok_result(
        &app.call("get_submission", json!({"jobId": won["jobId"]}), Some(&key))
            .await,
    );
    assert_eq!(s["revisionId"], won["revisionId"], "{s}");
    assert!(s.get("publication").is_none(), "{s}");
}

/// With no worker running, a job is not left waiting out the whole wait limit to answer
/// `timeout` (60 s): after a short grace (a worker starting or restarting is waited for) it is
/// dropped while still queued, nothing is charged, and the caller gets the contract's
/// `engine_unavailable` ("no evaluator available") with `retryAfterSeconds` and the job's id.
/// The same idempotencyKey starts afresh once a worker runs.
///
/// The contract lists `engine_unavailable` among the domain failures, "HTTP 200 with an
/// `isError` result": it was a 503 JSON-RPC error, which MCP clients raise as a transport
/// failure (the TypeScript SDK's "Error POSTing to endpoint (HTTP 503)"), so the agent never
/// read the code, the wait or the job id. Only an unreachable store stays a 503.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_worker_running_a_job_is_answered_engine_unavailable_and_not_charged() {
    let app = spawn_gateway().await;
    let key = app.agent_key("nora", 1).await;
    let args = json!({"map": TINY_MAP, "idempotencyKey": "lonely"});
    let a = app.call("playtest_map", args.clone(), Some(&key)).await;
    let error = &tool_error(&a);
    assert_eq!(error["code"], "engine_unavailable", "{}", a.text);
    assert_eq!(
        error["remaining"]["playtests"], 20,
        "nothing charged: {}",
        a.text
    );
    assert_eq!(error["retryAfterSeconds"], 30, "{}", a.text);
    assert!(
        error["message"].as_str().unwrap().contains("no worker"),
        "{}",
        a.text
    );
    let id = error["jobId"]
        .as_str()
        .expect("the dropped job's id")
        .to_string();
    let job = app.queue.get(&id).await.unwrap().unwrap();
    assert_eq!(job.state, horst_queue::JobState::Cancelled, "{job:?}");
    assert_eq!(job.charged_seconds, 0, "{job:?}");

    // With a worker, the same key runs the playtest.
    let _worker = app.start_engine_worker();
    let a = app.call("playtest_map", args, Some(&key)).await;
    let r = ok_result(&a);
    assert_eq!(r["outcome"], "won", "{}", a.text);
    assert_ne!(r["jobId"], id.as_str(), "{}", a.text);
}

/// A replay without actions runs no tick, so it cannot win: `submit_level` refuses it with
/// `validation_failed` before anything is queued (it was admitted, refereed, and cost one of
/// the day's submissions, 2 for a new account, to learn what the input already said). The
/// failure carries what the referee would have found (`outcome` unresolved, `ticks` 0).
/// `simulate_replay` still runs it: an empty replay observes the start, a valid question.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_with_an_empty_replay_is_refused_before_it_is_charged() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("leer", 0).await;
    let k = Some(key.as_str());
    let empty = json!({"seed": 1, "actions": []});
    let args =
        json!({"name": "leerlauf", "map": LEVEL_MAP, "replay": empty, "idempotencyKey": "empty-1"});
    let e = tool_error(&app.call("submit_level", args, k).await);
    assert_eq!(e["code"], "validation_failed", "{e}");
    assert_eq!(e["outcome"], "unresolved", "{e}");
    assert_eq!(e["ticks"], 0, "{e}");
    assert!(e.get("jobId").is_none(), "nothing was queued: {e}");
    assert_eq!(e["remaining"]["submissions"], 2, "nothing was charged: {e}");
    assert!(e["message"].as_str().unwrap().contains("no actions"), "{e}");
    let s = ok_result(
        &app.call(
            "simulate_replay",
            json!({"map": LEVEL_MAP, "replay": empty, "idempotencyKey": "empty-sim"}),
            k,
        )
        .await,
    );
    assert_eq!(
        (s["outcome"].as_str(), s["ticks"].as_u64()),
        (Some("unresolved"), Some(0)),
        "{s}"
    );
}

/// "A successor must come from the same owner and name": names are claimed without regard
/// to case (nobody else may take `MEIN-LEVEL`), but a successor spelled otherwise than its
/// parent (`Mein-Level` on a `mein-level`) was stored under the new spelling, so one level's
/// revisions showed two names in the Labor and a promotion renamed the level. It is refused
/// like any wrong parent (`validation_failed`, before anything is queued or charged), and
/// the message names the parent's spelling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_successor_keeps_its_parents_spelling_of_the_name() {
    let app = spawn_gateway().await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("schreiber", 1).await;
    let k = Some(key.as_str());
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let first = ok_result(
        &app.call(
            "submit_level",
            json!({"name": "mein-level", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "ml-1"}),
            k,
        )
        .await,
    );
    let parent = first["revisionId"].as_str().unwrap();
    let e = tool_error(
        &app.call(
            "submit_level",
            json!({"name": "Mein-Level", "parentRevisionId": parent, "map": LEVEL_MAP,
                   "replay": replay, "idempotencyKey": "ml-2"}),
            k,
        )
        .await,
    );
    assert_eq!(e["code"], "validation_failed", "{e}");
    assert!(
        e.get("jobId").is_none(),
        "refused before it was queued: {e}"
    );
    assert!(
        e["message"].as_str().unwrap().contains("\"mein-level\""),
        "names the parent's spelling: {e}"
    );
    assert_eq!(e["remaining"]["submissions"], 4, "nothing was charged: {e}");
    // The same spelling is a successor as before.
    let next = ok_result(
        &app.call(
            "submit_level",
            json!({"name": "mein-level", "parentRevisionId": parent, "map": LEVEL_MAP,
                   "replay": replay, "idempotencyKey": "ml-3"}),
            k,
        )
        .await,
    );
    assert_eq!(next["name"], "mein-level", "{next}");
}
