//! The shipped levels as promoted revisions, reserved names, and the game pages' public
//! reads: visibility (hidden reads like unknown, for the JSON and the share link), bad ids,
//! page views in the admin overview, static files with ETags.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{ok_result, spawn_app_beside, spawn_app_with, tool_error, TestApp};

/// The API with the gateway on, the repository's `web/`, the shipped levels published (as a
/// starting `horst api` does) and an engine worker.
pub async fn game_app() -> (TestApp, tokio::sync::watch::Sender<bool>) {
    let web = concat!(env!("CARGO_MANIFEST_DIR"), "/web");
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.server.web_dir = web.into();
    })
    .await;
    horst_operator::publish_shipped(&app.store)
        .await
        .expect("publish the shipped levels");
    let worker = app.start_engine_worker();
    (app, worker)
}

/// An agent's Labor revision of the first shipped map under `name`; its revision id.
pub async fn submit(app: &TestApp, key: &str, name: &str) -> String {
    let replay: Value = serde_json::from_str(crate::harness::LEVEL_REPLAY).unwrap();
    let sub = ok_result(
        &app.call(
            "submit_level",
            json!({"name": name, "map": crate::harness::LEVEL_MAP, "replay": replay,
                   "idempotencyKey": format!("k-{name}")}),
            Some(key),
        )
        .await,
    );
    sub["revisionId"].as_str().unwrap().to_string()
}

pub async fn get(app: &TestApp, path: &str) -> (u16, Value) {
    let r = app.http.get(app.url(path)).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shipped_levels_are_published_once_even_by_processes_starting_together() {
    let web = concat!(env!("CARGO_MANIFEST_DIR"), "/web");
    let a = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.server.web_dir = web.into();
    })
    .await;
    let b = spawn_app_beside(&a, |c| c.gateway.mode = horst_config::GatewayMode::On).await;
    let (ra, rb) = tokio::join!(
        horst_operator::publish_builtin(&a.store, "start", horst_levels::BUILTIN),
        horst_operator::publish_builtin(&b.store, "start", horst_levels::BUILTIN),
    );
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    let n = horst_levels::BUILTIN.len();
    assert!(n >= 15);
    for i in 0..n {
        let mut actions = [ra[i].action, rb[i].action];
        actions.sort();
        assert_eq!(actions, ["present", "published"], "{:?} {:?}", ra[i], rb[i]);
        assert_eq!(ra[i].revision_id, rb[i].revision_id);
    }
    // A restart changes nothing.
    let again = horst_operator::publish_builtin(&a.store, "start", horst_levels::BUILTIN)
        .await
        .unwrap();
    assert!(again.iter().all(|o| o.action == "present"), "{again:?}");

    // get_level by name reads the shipped level.
    let level = ok_result(
        &a.call("get_level", json!({"name": "erste-schritte"}), None)
            .await,
    );
    assert_eq!(level["owner"], horst_gateway::builtin::OWNER, "{level}");
    assert_eq!(level["state"], "promoted");
    assert_eq!(level["revisionId"], ra[0].revision_id.as_str());
    assert_eq!(level["engineVersion"], horst_engine::engine_version());

    // Its name is reserved: an agent cannot claim it (the old hand list missed this one).
    let key = a.agent_key("fuchs", 1).await;
    let e = tool_error(
        &a.call(
            "submit_level",
            json!({"name": "Erste-Schritte", "map": crate::harness::LEVEL_MAP,
                   "replay": serde_json::from_str::<Value>(crate::harness::LEVEL_REPLAY).unwrap(),
                   "idempotencyKey": "k1"}),
            Some(&key),
        )
        .await,
    );
    assert_eq!(e["code"], "forbidden", "{e}");
    assert!(e["message"].as_str().unwrap().contains("reserved"), "{e}");

    // A new version of a level (another replay, as after an engine change) is published and
    // promoted; the one before is retired to the history, and the new one names it as parent.
    let mut changed = horst_levels::BUILTIN[0];
    changed.replay = r#"{"seed": 2, "actions": [{"action": 8, "ticks": 24}, {"action": 9, "ticks": 24}, {"action": 8, "ticks": 24}, {"action": 9, "ticks": 24}, {"action": 8, "ticks": 12}, {"action": 9, "ticks": 24}, {"action": 8, "ticks": 12}, {"action": 9, "ticks": 24}, {"action": 8, "ticks": 12}, {"action": 9, "ticks": 24}, {"action": 8, "ticks": 3}]}"#;
    // A level whose replay does not win is refused, never stored.
    let mut losing = horst_levels::BUILTIN[1];
    losing.replay = r#"{"seed": 1, "actions": [{"action": 4, "ticks": 10}]}"#;
    let out = horst_operator::publish_builtin(&a.store, "start", &[changed, losing])
        .await
        .unwrap();
    assert_eq!(out[0].action, "published", "{out:?}");
    assert_eq!(out[1].action, "refused", "{out:?}");
    assert!(out[1].detail.as_deref().unwrap().contains("does not win"));
    let (st, v) = get(&a, &format!("/api/game/revisions/{}", out[0].revision_id)).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["parentRevisionId"], ra[0].revision_id.as_str(), "{v}");
    assert_eq!(v["seed"], 2);
    // The same map on the same engine plays the same: a browser's progress on the revision
    // before counts for the new one (web/game/progress.js), as when a shipped replay was
    // made easier; the first publication names none.
    assert_eq!(v["progressFrom"], json!([ra[0].revision_id]), "{v}");
    let (_, first) = get(&a, &format!("/api/game/revisions/{}", ra[0].revision_id)).await;
    assert_eq!(first["progressFrom"], json!([]), "{first}");
    let (_, old) = get(&a, &format!("/api/game/revisions/{}", ra[0].revision_id)).await;
    assert_eq!(old["state"], "retired", "{old}");
    let rolled =
        json!(
            horst_operator::rollback(&a.store, "test", "erste-schritte", &Default::default())
                .await
                .unwrap()
        );
    assert_eq!(rolled["to"], ra[0].revision_id.as_str());
    // After the operator's rollback a restart keeps the operator's choice.
    let again = horst_operator::publish_builtin(&a.store, "start", &[changed])
        .await
        .unwrap();
    assert_eq!(again[0].action, "present");
    let level = ok_result(
        &a.call("get_level", json!({"name": "erste-schritte"}), None)
            .await,
    );
    assert_eq!(level["revisionId"], ra[0].revision_id.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_game_reads_hide_what_is_hidden_and_count_page_views() {
    let (app, _worker) = game_app().await;
    let (st, levels) = get(&app, "/api/game/levels").await;
    assert_eq!(st, 200);
    let items = levels["items"].as_array().unwrap();
    assert_eq!(items.len(), horst_levels::BUILTIN.len(), "{levels}");
    assert_eq!(items[0]["name"], "erste-schritte");
    assert_eq!(items[0]["title"], "Erste Schritte");
    assert_eq!(items[0]["ownerDisplayName"], "Game con Vogel");
    assert_eq!(items[0]["builtin"], true);
    assert_eq!(levels["engineVersion"], horst_engine::engine_version());
    let first = items[0]["revisionId"].as_str().unwrap().to_string();
    let (st, rev) = get(&app, &format!("/api/game/revisions/{first}")).await;
    assert_eq!(st, 200);
    assert_eq!(rev["evidence"]["outcome"], "won");
    assert_eq!(rev["replay"]["seed"], 1);
    let map = horst_engine::parse_map(rev["map"].as_str().unwrap()).unwrap();
    let replay = horst_engine::parse_replay(&rev["replay"]).unwrap();
    let report = horst_engine::referee(&map, &replay);
    assert_eq!(rev["evidence"]["stateHash"], report.state_hash.as_str());
    assert_eq!(rev["evidence"]["ticks"], report.ticks);

    // Two agents' Labor revisions, newest first, with handle and display name.
    let fuchs = app.agent_key("fuchs", 1).await;
    horst_identity::accounts::set_account_field(&app.store, "fuchs", "displayName", "Fuchs <b>")
        .await
        .unwrap();
    let dachs = app.agent_key("dachs", 1).await;
    let mut ids = Vec::new();
    for (key, name) in [
        (&fuchs, "fuchsbau"),
        (&dachs, "dachsbau"),
        (&fuchs, "fuchsweg"),
    ] {
        ids.push(submit(&app, key, name).await);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (_, labor) = get(&app, "/api/game/labor").await;
    let names: Vec<&str> = labor["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fuchsweg", "dachsbau", "fuchsbau"], "{labor}");
    assert_eq!(labor["items"][0]["owner"], "fuchs");
    assert_eq!(labor["items"][0]["ownerDisplayName"], "Fuchs <b>");
    assert_eq!(labor["items"][0]["title"], "Erste Schritte");
    assert_eq!(labor["nextOffset"], Value::Null);

    // Share links: 200 for a visible revision, 404 for unknown, hidden ones, 400 malformed.
    let page = |p: String| {
        let http = app.http.clone();
        let url = app.url(&p);
        async move { http.get(url).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(page(format!("/level/{}", ids[0])).await, 200);
    assert_eq!(page("/level/rev-nope".into()).await, 404);
    assert_eq!(page("/level/bad%20id".into()).await, 400);
    // An id that does not decode is malformed too, and still the page (it was the API's JSON).
    let r = app.http.get(app.url("/level/%FF")).send().await.unwrap();
    assert_eq!(r.status(), 400);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "{:?}",
        r.headers()
    );
    let r = app.http.get(app.url("/game/%FF")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(get(&app, "/api/game/revisions/bad%20id").await.0, 400);
    // Quarantined: hidden everywhere.
    horst_operator::quarantine(&app.store, "test", &ids[1])
        .await
        .unwrap();
    assert_eq!(page(format!("/level/{}", ids[1])).await, 404);
    let (st, e) = get(&app, &format!("/api/game/revisions/{}", ids[1])).await;
    assert_eq!((st, e["code"].clone()), (404, json!("not_found")));
    // Withdrawn: hidden from the game too.
    ok_result(
        &app.call(
            "withdraw_level",
            json!({"revisionId": ids[2]}),
            Some(&fuchs),
        )
        .await,
    );
    assert_eq!(page(format!("/level/{}", ids[2])).await, 404);
    // Blocked account: every revision hidden, share links included.
    horst_operator::set_blocked(&app.store, &app.auth, "test", "fuchs", true)
        .await
        .unwrap();
    assert_eq!(page(format!("/level/{}", ids[0])).await, 404);
    let (_, labor) = get(&app, "/api/game/labor").await;
    assert!(labor["items"].as_array().unwrap().is_empty(), "{labor}");

    // Page views: counted per page and UTC day, shown in the overview beside board reads.
    for p in ["/", "/", "/board.html"] {
        assert_eq!(page(p.into()).await, 200, "{p}");
    }
    let o = json!(horst_operator::overview(&app.store, &app.queue)
        .await
        .unwrap());
    assert_eq!(o["pageViews"]["today"]["game"], 2, "{o}");
    assert_eq!(o["pageViews"]["today"]["board"], 1, "{o}");
    assert_eq!(o["pageViews"]["today"]["level"], 7, "{o}");
    assert_eq!(o["pageViews"]["total"]["game"], 2, "{o}");
    assert!(o["boardReads"].is_object());
}

#[tokio::test]
async fn game_files_carry_etags_and_the_engine_is_application_wasm() {
    crate::wasm_engine::engine_module();
    let (app, _worker) = game_app().await;
    let r = app
        .http
        .get(app.url("/game/engine.wasm"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/wasm");
    assert_eq!(r.headers()["cache-control"], "no-cache");
    let etag = r.headers()["etag"].clone();
    let r = app
        .http
        .get(app.url("/game/engine.wasm"))
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 304);
    let r = app.http.get(app.url("/game/main.js")).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "text/javascript");
    for bad in ["/game/..%2fCargo.toml", "/game/.hidden", "/game/nope.js"] {
        let r = app.http.get(app.url(bad)).send().await.unwrap();
        assert_eq!(r.status(), 404, "{bad}");
    }
    let r = app
        .http
        .get(app.url("/board/board.html"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.url().path(), "/board.html");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_api_processes_starting_together_publish_the_shipped_levels_once() {
    let redis = horst_testkit::RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let url = redis.url();
    let env = [("HORST_REDIS_URL", url.as_str())];
    let args = ["api", "--listen", "127.0.0.1:0"];
    let mut a = crate::harness::HorstProcess::spawn(&args, &env, dir.path());
    let mut b = crate::harness::HorstProcess::spawn(&args, &env, dir.path());
    let (aa, ab) = (a.wait_listening(), b.wait_listening());
    let http = reqwest::Client::new();
    for addr in [aa, ab] {
        let v: Value = http
            .get(format!("http://{addr}/api/game/levels"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let items = v["items"].as_array().unwrap();
        assert_eq!(items.len(), horst_levels::BUILTIN.len(), "{v}");
        assert!(items
            .iter()
            .all(|i| i["state"] == "promoted" && i["owner"] == "gcv"));
    }
    let store = horst_store::Store::connect(&url, "horst:")
        .await
        .expect("store");
    let log = horst_operator::audit_log(&store, 0, 1000).await.unwrap();
    let published = log.iter().filter(|e| e.action == "publish_builtin").count();
    assert_eq!(published, horst_levels::BUILTIN.len(), "{log:?}");
    a.signal(libc::SIGTERM);
    b.signal(libc::SIGTERM);
    assert!(a.wait_exit(Duration::from_secs(20)).is_some());
    assert!(b.wait_exit(Duration::from_secs(20)).is_some());
}

/// A path part that does not decode (a percent-encoded byte that is not UTF-8) is a 400 in
/// the API's own shape, in each contract's vocabulary, on every kind of route: never axum's
/// plain text.
#[tokio::test]
async fn path_parts_that_do_not_decode_are_answered_in_the_apis_shape() {
    let app = crate::harness::spawn_app().await;
    for (path, code) in [
        ("/api/game/maps/%ff%fe", "invalid_input"),
        ("/api/game/revisions/%ff", "invalid_input"),
        ("/api/board/published/%c3%28", "invalid_input"),
        ("/api/v1/leaderboard/%ff%fe", "bad_request"),
        ("/api/v1/leaderboard/chess/%ff", "bad_request"),
        ("/api/v1/agent/sessions/%ff%fe/replay", "bad_request"),
    ] {
        let r = app.http.get(app.url(path)).send().await.unwrap();
        let status = r.status().as_u16();
        let kind = r
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body: Value = r.json().await.unwrap_or(Value::Null);
        assert_eq!(status, 400, "{path}: {body}");
        assert!(kind.starts_with("application/json"), "{path}: {kind}");
        assert_eq!(body["code"], code, "{path}: {body}");
        let message = body["error"].as_str().unwrap_or("");
        assert!(message.contains("UTF-8"), "{path}: {message}");
    }
    // A file path that does not decode names no file: 404, as a missing file (axum's plain
    // "Invalid URL" 400 before), and a game page says so in words.
    for path in ["/sdk/%FF", "/bridge/%C3", "/house/%FF", "/pages/%FF"] {
        let r = app.http.get(app.url(path)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 404, "{path}");
    }
    let r = app
        .http
        .get(app.url("/games/%FF.html"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
}

/// A page offset past any list is refused in words (it overflowed the page arithmetic: a
/// debug build's request died without an answer, a release build wrapped around to the
/// first page), and the server goes on answering. API answers, errors included, are
/// `no-store`.
#[tokio::test]
async fn huge_page_offsets_are_refused_and_api_answers_are_not_stored() {
    let app = crate::harness::spawn_app().await;
    for path in [
        "/api/game/labor?offset=18446744073709551615",
        "/api/board/published?offset=18446744073709551615",
        "/api/board/published/t1?offset=18446744073709551615",
    ] {
        let r = app.http.get(app.url(path)).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 400, "{path}");
        assert_eq!(r.headers()["cache-control"], "no-store", "{path}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["code"], "invalid_input", "{path}: {body}");
        assert!(body["error"].as_str().unwrap().contains("offset"), "{body}");
    }
    let r = app
        .http
        .get(app.url("/api/game/labor?offset=1000000000"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["items"], json!([]));
    let r = app
        .http
        .get(app.url("/api/game/revisions/nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["cache-control"], "no-store");
}

/// While the store cannot be reached a share link answers the level page (whose script says
/// "Gerade nicht erreichbar") with 503 and Retry-After, not the API's JSON error.
#[tokio::test]
async fn a_level_link_while_the_store_is_down_is_the_page_with_503() {
    if crate::harness::on_cluster() {
        // The test stops its own Redis.
        return;
    }
    let web = concat!(env!("CARGO_MANIFEST_DIR"), "/web");
    let mut app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.server.web_dir = web.into();
    })
    .await;
    app.redis_mut().stop();
    let r = app.http.get(app.url("/level/rev-x")).send().await.unwrap();
    assert_eq!(r.status(), 503);
    assert!(r.headers().contains_key("retry-after"), "{:?}", r.headers());
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "{:?}",
        r.headers()
    );
    assert!(r.text().await.unwrap().contains("../game/level.js"));
}

/// A card's title is stored with its revision (submission and shipped level alike), so the
/// lists read it and parse no map; a revision stored before titles were gets its title on
/// the first read, written beside it, and the answers are the same either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cards_title_is_stored_with_its_revision_and_lists_parse_no_map() {
    use redis::AsyncCommands;
    let (app, _worker) = game_app().await;
    let fuchs = app.agent_key("fuchs", 1).await;
    let id = submit(&app, &fuchs, "fuchsbau").await;
    let (_, levels) = get(&app, "/api/game/levels").await;
    let shipped = levels["items"][0]["revisionId"]
        .as_str()
        .unwrap()
        .to_string();
    let title = |id: String| {
        let store = app.store.clone();
        async move {
            let t: Option<String> = store
                .conn()
                .hget(horst_gateway::keys::rev(&store, &id), "title")
                .await
                .unwrap();
            t
        }
    };
    // Stored in the same write as the revision (the lists above parse nothing to write it).
    assert_eq!(title(id.clone()).await.as_deref(), Some("Erste Schritte"));
    assert_eq!(
        title(shipped.clone()).await.as_deref(),
        Some("Erste Schritte")
    );

    // The lists read the stored title: a stored one that differs from the map shows.
    let key = horst_gateway::keys::rev(&app.store, &id);
    let _: () = app
        .store
        .conn()
        .hset(&key, "title", "Gespeichert\u{202e}")
        .await
        .unwrap();
    let (_, labor) = get(&app, "/api/game/labor").await;
    assert_eq!(labor["items"][0]["title"], "Gespeichert", "{labor}");

    // A revision stored before titles were: the first read parses its map once and stores
    // the title; the answer is the one it always was.
    let _: () = app.store.conn().hdel(&key, "title").await.unwrap();
    let _: () = app
        .store
        .conn()
        .hdel(horst_gateway::keys::rev(&app.store, &shipped), "title")
        .await
        .unwrap();
    assert_eq!(title(id.clone()).await, None);
    let (_, labor) = get(&app, "/api/game/labor").await;
    assert_eq!(labor["items"][0]["title"], "Erste Schritte", "{labor}");
    let (_, levels) = get(&app, "/api/game/levels").await;
    assert_eq!(levels["items"][0]["title"], "Erste Schritte", "{levels}");
    assert_eq!(title(id.clone()).await.as_deref(), Some("Erste Schritte"));
    assert_eq!(title(shipped).await.as_deref(), Some("Erste Schritte"));
    let (_, rev) = get(&app, &format!("/api/game/revisions/{id}")).await;
    assert_eq!(rev["title"], "Erste Schritte", "{rev}");
}
