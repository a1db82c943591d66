//! The contract's board, revisions and quotas (`gcv-agent-gateway.md`, "Board", "Revisions,
//! seeds and engine versions", "Retries and idempotency", "Quotas") as an MCP client that
//! knows only the contract and docs/agents.md sees them: each daily limit one below, at and
//! one above, every failure with its code, `isError` shape and the fields the contract
//! promises, pages while others write, and one revision read through every tool across its
//! lifecycle.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::board::{board_app, operator_threads};
use crate::harness::{ok_result, tool_error, Answer, LEVEL_MAP, LEVEL_REPLAY};

/// A `quota` failure as the contract and docs/agents.md describe it: scope `owner`, `limit`
/// naming the limit, and `retryAfterSeconds` until the next 00:00 UTC.
#[track_caller]
fn assert_daily_quota(a: &Answer, limit: &str) {
    let e = tool_error(a);
    assert_eq!(e["code"], "quota", "{e}");
    assert_eq!(e["scope"], "owner", "{e}");
    // The job tools' daily counters name no `limit` (docs/agents.md): "" expects none.
    if limit.is_empty() {
        assert!(e.get("limit").is_none(), "{e}");
    } else {
        assert_eq!(e["limit"], limit, "{e}");
    }
    let retry = e["retryAfterSeconds"].as_u64().expect("retryAfterSeconds");
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let to_midnight = 86_400 - now_s % 86_400;
    // The server's clock (Redis's) and this one read a moment apart.
    assert!(
        (1..=86_400).contains(&retry) && retry.abs_diff(to_midnight) <= 5,
        "retryAfterSeconds {retry}, {to_midnight} s to 00:00 UTC: {e}"
    );
}

fn ids_of(list: &Value, field: &str) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("items: {list}"))
        .iter()
        .map(|i| i[field].as_str().unwrap().to_string())
        .collect()
}

/// "Limits per account: 5 new threads, 50 posts and 50 endorsements per UTC day (`quota`;
/// retracting an endorsement frees room)": each at one below, at and one above, with what is
/// left counted down in `threadsLeftToday` and `postsLeftToday`; a thread's first post is a
/// post; endorsing a thread you already endorse is no new endorsement (not refused at the
/// limit, not charged); nothing refused is stored.
#[tokio::test]
async fn board_limits_one_below_at_and_above() {
    let app = board_app().await;
    let key = app.agent_key("grenze", 0).await;
    let k = Some(key.as_str());
    let mut mine = Vec::new();
    for i in 0..5 {
        let w = ok_result(
            &app.call(
                "write_post",
                json!({"kind": "idea", "title": format!("Idee {i}"), "body": "b"}),
                k,
            )
            .await,
        );
        assert_eq!(w["threadsLeftToday"], 4 - i, "{w}");
        assert_eq!(w["postsLeftToday"], 49 - i, "{w}");
        mine.push(w["threadId"].as_str().unwrap().to_string());
    }
    let sixth = app
        .call(
            "write_post",
            json!({"kind": "idea", "title": "Idee 5", "body": "b"}),
            k,
        )
        .await;
    assert_daily_quota(&sixth, "board_threads");
    // 45 replies make 50 posts with the 5 first posts; the 51st is refused.
    for i in 0..45 {
        let w = ok_result(
            &app.call(
                "write_post",
                json!({"threadId": mine[i % 5], "body": format!("reply {i}")}),
                k,
            )
            .await,
        );
        assert_eq!(w["postsLeftToday"], 44 - i as i64, "{w}");
        assert_eq!(w["threadsLeftToday"], 0, "{w}");
    }
    let over = app
        .call(
            "write_post",
            json!({"threadId": mine[0], "body": "one more"}),
            k,
        )
        .await;
    assert_daily_quota(&over, "board_posts");
    let read = ok_result(
        &app.call("read_thread", json!({"threadId": mine[0]}), k)
            .await,
    );
    assert_eq!(
        read["thread"]["posts"], 10,
        "nothing refused is stored: {read}"
    );

    let theirs = operator_threads(&app, 51, "Vorschlag").await;
    for (i, t) in theirs.iter().take(50).enumerate() {
        let e = ok_result(&app.call("endorse_thread", json!({"threadId": t}), k).await);
        assert_eq!(e, json!({"endorsements": 1, "endorsedByYou": true}), "{i}");
    }
    let over = app
        .call("endorse_thread", json!({"threadId": theirs[50]}), k)
        .await;
    assert_daily_quota(&over, "board_endorsements");
    // At the limit, endorsing again what you endorse is no new endorsement.
    let again = ok_result(
        &app.call("endorse_thread", json!({"threadId": theirs[0]}), k)
            .await,
    );
    assert_eq!(again, json!({"endorsements": 1, "endorsedByYou": true}));
    // Taking one back frees room for exactly one.
    let back = ok_result(
        &app.call(
            "endorse_thread",
            json!({"threadId": theirs[0], "endorse": false}),
            k,
        )
        .await,
    );
    assert_eq!(back, json!({"endorsements": 0, "endorsedByYou": false}));
    ok_result(
        &app.call("endorse_thread", json!({"threadId": theirs[50]}), k)
            .await,
    );
    let over = app
        .call("endorse_thread", json!({"threadId": theirs[0]}), k)
        .await;
    assert_daily_quota(&over, "board_endorsements");
    // Taking back what you do not endorse frees nothing.
    ok_result(
        &app.call(
            "endorse_thread",
            json!({"threadId": theirs[0], "endorse": false}),
            k,
        )
        .await,
    );
    let over = app
        .call("endorse_thread", json!({"threadId": theirs[0]}), k)
        .await;
    assert_daily_quota(&over, "board_endorsements");
}

/// `title` 1-120 characters on one line and `body` 1-2000 characters, counted after cleaning:
/// at the limit accepted, one above `invalid_input` naming the field and the count, empty
/// (or only invisible characters) `invalid_input`.
#[tokio::test]
async fn board_text_limits_at_the_edges() {
    let app = board_app().await;
    let key = app.agent_key("laenge", 0).await;
    let k = Some(key.as_str());
    let at = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": "t".repeat(120), "body": "b".repeat(2000)}),
            k,
        )
        .await,
    );
    let id = at["threadId"].as_str().unwrap();
    let read = ok_result(&app.call("read_thread", json!({"threadId": id}), k).await);
    assert_eq!(
        read["thread"]["title"].as_str().unwrap().chars().count(),
        120
    );
    assert_eq!(
        read["posts"][0]["body"].as_str().unwrap().chars().count(),
        2000
    );
    // Characters, not bytes: 120 umlauts are 240 bytes.
    ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": "ü".repeat(120), "body": "ö".repeat(2000)}),
            k,
        )
        .await,
    );
    for (args, field) in [
        (
            json!({"kind": "idea", "title": "t".repeat(121), "body": "b"}),
            "title",
        ),
        (
            json!({"kind": "idea", "title": "t", "body": "b".repeat(2001)}),
            "body",
        ),
        (json!({"kind": "idea", "title": "", "body": "b"}), "title"),
        (json!({"kind": "idea", "title": "t", "body": ""}), "body"),
        (
            json!({"kind": "idea", "title": "\u{200B}", "body": "b"}),
            "title",
        ),
        (
            json!({"kind": "idea", "title": "a\nb", "body": "b"}),
            "title",
        ),
        (json!({"threadId": id, "body": "b".repeat(2001)}), "body"),
    ] {
        let e = tool_error(&app.call("write_post", args.clone(), k).await);
        assert_eq!(e["code"], "invalid_input", "{args}: {e}");
        assert!(
            e["message"].as_str().unwrap().contains(field),
            "{args}: the message names `{field}`: {e}"
        );
    }
}

/// The failure codes the contract's tables give the board's tools, each an `isError` result
/// (HTTP 200) with `{"ok":false,"error":{"code","message"}}`: `forbidden` for endorsing your
/// own thread and withdrawing someone else's post, `not_found` for a thread or post that does
/// not exist or is not visible to you (withdrawn, hidden), `invalid_input` for arguments that
/// do not match the schema. Without a key every board tool is HTTP 401 with
/// `WWW-Authenticate: Bearer`.
#[tokio::test]
async fn board_failures_carry_the_documented_codes() {
    let app = board_app().await;
    let a = app.agent_key("erste", 0).await;
    let b = app.agent_key("zweite", 0).await;
    let (ka, kb) = (Some(a.as_str()), Some(b.as_str()));
    let t = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": "Mein Faden", "body": "b"}),
            ka,
        )
        .await,
    );
    let (thread, first) = (t["threadId"].clone(), t["postId"].clone());
    let reply = ok_result(
        &app.call("write_post", json!({"threadId": thread, "body": "r"}), kb)
            .await,
    );
    let code = |a: Answer| tool_error(&a)["code"].as_str().unwrap().to_string();

    assert_eq!(
        code(
            app.call("endorse_thread", json!({"threadId": thread}), ka)
                .await
        ),
        "forbidden"
    );
    assert_eq!(
        code(
            app.call("withdraw_post", json!({"postId": reply["postId"]}), ka)
                .await
        ),
        "forbidden"
    );
    for (tool, args) in [
        ("read_thread", json!({"threadId": "t999999"})),
        ("endorse_thread", json!({"threadId": "t999999"})),
        ("write_post", json!({"threadId": "t999999", "body": "b"})),
        ("withdraw_post", json!({"postId": "p999999"})),
        // A thread id where a post id belongs, and the other way round.
        ("withdraw_post", json!({"postId": thread})),
        ("read_thread", json!({"threadId": first})),
    ] {
        assert_eq!(
            code(app.call(tool, args.clone(), ka).await),
            "not_found",
            "{tool} {args}"
        );
    }
    for (tool, args) in [
        ("list_threads", json!({"kind": "bug"})),
        ("list_threads", json!({"status": "closed"})),
        ("list_threads", json!({"sort": "oldest"})),
        ("list_threads", json!({"unknown": 1})),
        ("read_thread", json!({})),
        ("read_thread", json!({"threadId": "../t1"})),
        ("read_thread", json!({"threadId": "t".repeat(65)})),
        ("write_post", json!({"body": "b"})),
        ("write_post", json!({"kind": "idea", "body": "b"})),
        (
            "write_post",
            json!({"kind": "level", "title": "t", "body": "b"}),
        ),
        (
            "write_post",
            json!({"kind": "idea", "title": "t", "body": "b", "level": "x"}),
        ),
        (
            "write_post",
            json!({"threadId": thread, "title": "t", "body": "b"}),
        ),
        (
            "endorse_thread",
            json!({"threadId": thread, "endorse": "yes"}),
        ),
        ("withdraw_post", json!({})),
    ] {
        assert_eq!(
            code(app.call(tool, args.clone(), kb).await),
            "invalid_input",
            "{tool} {args}"
        );
    }
    // A withdrawn reply: gone for everyone but the operator; withdrawing it again is the
    // same answer (a retry after a lost response must not fail).
    let withdrawn = json!({"withdrawn": "post"});
    let w = json!({"postId": reply["postId"]});
    assert_eq!(
        ok_result(&app.call("withdraw_post", w.clone(), kb).await),
        withdrawn
    );
    assert_eq!(
        ok_result(&app.call("withdraw_post", w.clone(), kb).await),
        withdrawn
    );
    // The thread withdrawn by its first post: not_found to read, reply to or endorse.
    let w = json!({"postId": first});
    assert_eq!(
        ok_result(&app.call("withdraw_post", w, ka).await),
        json!({"withdrawn": "thread"})
    );
    for (tool, args) in [
        ("read_thread", json!({"threadId": thread})),
        ("write_post", json!({"threadId": thread, "body": "b"})),
        ("endorse_thread", json!({"threadId": thread})),
    ] {
        assert_eq!(
            code(app.call(tool, args.clone(), kb).await),
            "not_found",
            "{tool} {args}"
        );
    }
    // A post the operator hid is not_found to others, as if it did not exist.
    let t = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": "Zweiter", "body": "b"}),
            kb,
        )
        .await,
    );
    let hidden = ok_result(
        &app.call(
            "write_post",
            json!({"threadId": t["threadId"], "body": "r"}),
            ka,
        )
        .await,
    );
    horst_gateway::board::set_post_hidden(&app.store, hidden["postId"].as_str().unwrap(), true)
        .await
        .unwrap();
    assert_eq!(
        code(
            app.call("withdraw_post", json!({"postId": hidden["postId"]}), kb)
                .await
        ),
        "not_found"
    );
    // No key: 401 with the challenge, for every board tool.
    for tool in [
        "list_threads",
        "read_thread",
        "write_post",
        "endorse_thread",
        "withdraw_post",
    ] {
        let a = app.call(tool, json!({}), None).await;
        assert_eq!(a.status, 401, "{tool}: {}", a.text);
        let challenge = a
            .headers
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap().to_string());
        assert!(
            challenge
                .as_deref()
                .is_some_and(|c| c.starts_with("Bearer")),
            "{tool}: {challenge:?}"
        );
    }
}

/// Every paged tool refuses an offset that is not a whole number from 0 (a string, a
/// negative, a fraction, a boolean, an object, a huge number) as `invalid_input` with a
/// message saying what an offset is, and answers a page past the end empty with
/// `nextOffset: null`.
#[tokio::test]
async fn a_garbage_offset_is_refused_clearly_everywhere() {
    let app = board_app().await;
    let key = app.agent_key("seitenweise", 0).await;
    let k = Some(key.as_str());
    let t = operator_threads(&app, 1, "Faden").await;
    let paged: [(&str, Value, Option<&str>); 4] = [
        ("list_labor", json!({}), None),
        ("my_submissions", json!({}), k),
        ("list_threads", json!({}), k),
        ("read_thread", json!({"threadId": t[0]}), k),
    ];
    for (tool, base, key) in &paged {
        for bad in [
            json!("abc"),
            json!("25"),
            json!(-1),
            json!(2.5),
            json!(true),
            json!({}),
            json!(1e300),
        ] {
            let mut args = base.clone();
            args["offset"] = bad.clone();
            let e = tool_error(&app.call(tool, args, *key).await);
            assert_eq!(e["code"], "invalid_input", "{tool} offset {bad}: {e}");
            assert!(
                e["message"]
                    .as_str()
                    .unwrap()
                    .contains("`offset` must be an integer"),
                "{tool} offset {bad}: {e}"
            );
        }
        let mut args = base.clone();
        args["offset"] = json!(1_000_000);
        let past = ok_result(&app.call(tool, args, *key).await);
        assert_eq!(past["nextOffset"], Value::Null, "{tool}: {past}");
        let items = if *tool == "read_thread" {
            &past["posts"]
        } else {
            &past["items"]
        };
        assert_eq!(items, &json!([]), "{tool}: {past}");
    }
}

/// Offsets count places in the list as it is when each page is read. What is written between
/// two pages therefore never hides anything that was there: threads and Labor revisions come
/// newest first, so a new one repeats the last entries of the page before at the top of the
/// next, and posts come oldest first, so a new one only adds to the end. (Activity reorders
/// the thread list: a reply moves a thread to the top, where a list from offset 0 shows it.)
#[tokio::test]
async fn pages_read_while_others_write_skip_nothing() {
    let app = board_app().await;
    let key = app.agent_key("leser", 1).await;
    let k = Some(key.as_str());
    let before: BTreeSet<String> = operator_threads(&app, 25, "Alt")
        .await
        .into_iter()
        .collect();
    let first = ok_result(&app.call("list_threads", json!({}), k).await);
    assert_eq!(first["nextOffset"], 20, "{first}");
    operator_threads(&app, 3, "Neu").await;
    let second = ok_result(&app.call("list_threads", json!({"offset": 20}), k).await);
    let mut seen: BTreeSet<String> = ids_of(&first, "threadId").into_iter().collect();
    let second_ids = ids_of(&second, "threadId");
    assert_eq!(second_ids.len(), 8, "{second}");
    assert_eq!(
        second_ids[..3],
        ids_of(&first, "threadId")[17..],
        "the last three repeated"
    );
    seen.extend(second_ids);
    assert!(before.is_subset(&seen), "no thread skipped");

    // Posts, oldest first: 60, then 5 more between the pages.
    let thread = operator_threads(&app, 1, "Lang").await.remove(0);
    let post = |i: usize| {
        let (app, thread) = (&app, thread.clone());
        async move {
            horst_gateway::board::write_post(
                &app.store,
                horst_gateway::board::Writer::Operator("olga"),
                Some(&thread),
                None,
                &format!("post {i}"),
            )
            .await
            .unwrap()
            .post_id
        }
    };
    let mut posts = Vec::new();
    for i in 1..60 {
        posts.push(post(i).await);
    }
    let page1 = ok_result(
        &app.call("read_thread", json!({"threadId": thread}), k)
            .await,
    );
    assert_eq!(page1["nextOffset"], 50, "{page1}");
    for i in 60..65 {
        posts.push(post(i).await);
    }
    let page2 = ok_result(
        &app.call("read_thread", json!({"threadId": thread, "offset": 50}), k)
            .await,
    );
    assert_eq!(page2["nextOffset"], Value::Null);
    let bodies: Vec<&str> = page1["posts"]
        .as_array()
        .unwrap()
        .iter()
        .chain(page2["posts"].as_array().unwrap())
        .map(|p| p["body"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = std::iter::once("from the operator".to_string())
        .chain((1..65).map(|i| format!("post {i}")))
        .collect();
    assert_eq!(bodies, expected, "every post once, in order");

    // Labor revisions, newest first: 26, then 2 more between the pages.
    let older = crate::gcv_contract_probe::store_revisions(&app, "leser", "alt", 26).await;
    let first = ok_result(&app.call("list_labor", json!({}), None).await);
    let mine_first = ok_result(&app.call("my_submissions", json!({}), k).await);
    crate::gcv_contract_probe::store_revisions(&app, "leser", "neu", 2).await;
    let second = ok_result(&app.call("list_labor", json!({"offset": 25}), None).await);
    let mine_second = ok_result(&app.call("my_submissions", json!({"offset": 25}), k).await);
    for (what, first, second) in [
        ("list_labor", &first, &second),
        ("my_submissions", &mine_first, &mine_second),
    ] {
        let a = ids_of(first, "revisionId");
        let b = ids_of(second, "revisionId");
        assert_eq!(b.len(), 3, "{what}: {second}");
        assert_eq!(b[..2], a[23..], "{what}: the last two repeated");
        let seen: BTreeSet<&String> = a.iter().chain(&b).collect();
        assert!(
            older.iter().all(|r| seen.contains(r)),
            "{what}: none skipped"
        );
    }
}

/// One revision through its lifecycle, read through every tool that shows it, as its owner,
/// another agent and an anonymous client: a Labor candidate after `submit_level` (and the
/// same answer again for the same `idempotencyKey`, a `conflict` for other input), promoted by
/// the operator (the level's revision by name, no longer a Labor candidate, not
/// withdrawable), a successor withdrawn by its owner (hidden from others, the name still the
/// owner's), and another quarantined (hidden everywhere). Each tool says the same state
/// at each step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revision_seen_through_every_tool_across_its_lifecycle() {
    let app = board_app().await;
    let _worker = app.start_engine_worker();
    let owner = app.agent_key("besitzerin", 1).await;
    let other = app.agent_key("andere", 1).await;
    let (ko, kx) = (Some(owner.as_str()), Some(other.as_str()));
    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let submit = json!({"name": "Lebenslauf", "map": LEVEL_MAP, "replay": replay, "idempotencyKey": "lauf-1"});
    let s = ok_result(&app.call("submit_level", submit.clone(), ko).await);
    assert_eq!(s["state"], "labor", "{s}");
    let r1 = s["revisionId"].as_str().unwrap().to_string();
    let job1 = s["jobId"].clone();
    // The same key and input: the recorded result, nothing charged; other input: conflict.
    let again = ok_result(&app.call("submit_level", submit.clone(), ko).await);
    assert_eq!(again["replayed"], true, "{again}");
    assert_eq!(
        (&again["revisionId"], &again["jobId"]),
        (&s["revisionId"], &s["jobId"])
    );
    assert_eq!(
        again["remaining"]["submissions"],
        s["remaining"]["submissions"]
    );
    let mut changed = submit.clone();
    changed["name"] = json!("anderer-name");
    let e = tool_error(&app.call("submit_level", changed, ko).await);
    assert_eq!(e["code"], "conflict", "{e}");

    // What each tool says of a revision now: (get_level by id anonymous, by its owner, by
    // another agent; in list_labor; my_submissions' state; get_submission's revisionState).
    let states = |rev: String, job: Value| {
        let app = &app;
        async move {
            let by_id = |key: Option<&'static str>| {
                let rev = rev.clone();
                async move {
                    let k = match key {
                        Some("owner") => ko,
                        Some(_) => kx,
                        None => None,
                    };
                    let a = app.call("get_level", json!({"revisionId": rev}), k).await;
                    if a.body["result"]["isError"] == true {
                        tool_error(&a)["code"].as_str().unwrap().to_string()
                    } else {
                        ok_result(&a)["state"].as_str().unwrap().to_string()
                    }
                }
            };
            let labor = ok_result(&app.call("list_labor", json!({}), None).await);
            let in_labor = ids_of(&labor, "revisionId").contains(&rev);
            let mine = ok_result(&app.call("my_submissions", json!({}), ko).await);
            let my_state = mine["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["revisionId"] == rev.as_str())
                .map(|i| i["state"].as_str().unwrap().to_string());
            let job = ok_result(&app.call("get_submission", json!({"jobId": job}), ko).await);
            (
                by_id(None).await,
                by_id(Some("owner")).await,
                by_id(Some("other")).await,
                in_labor,
                my_state,
                job["revisionState"].as_str().map(str::to_string),
            )
        }
    };
    let labor = |s: &str| {
        (
            s.to_string(),
            s.to_string(),
            s.to_string(),
            true,
            Some(s.to_string()),
            Some(s.to_string()),
        )
    };
    assert_eq!(states(r1.clone(), job1.clone()).await, labor("labor"));
    // The level has no promoted revision yet: by name it is not_found.
    let e = tool_error(
        &app.call("get_level", json!({"name": "Lebenslauf"}), None)
            .await,
    );
    assert_eq!(e["code"], "not_found", "{e}");
    // The name is the owner's: another agent's submission of it is forbidden, its
    // withdrawal too.
    let mut theirs = submit.clone();
    theirs["idempotencyKey"] = json!("fremd-1");
    let e = tool_error(&app.call("submit_level", theirs, kx).await);
    assert_eq!(e["code"], "forbidden", "{e}");
    let e = tool_error(
        &app.call("withdraw_level", json!({"revisionId": r1}), kx)
            .await,
    );
    assert_eq!(e["code"], "forbidden", "{e}");

    horst_gateway::promotion::promote(&app.store, &r1, None)
        .await
        .unwrap();
    let (anon, own, oth, in_labor, my, job) = states(r1.clone(), job1.clone()).await;
    assert_eq!(
        (anon.as_str(), own.as_str(), oth.as_str()),
        ("promoted", "promoted", "promoted")
    );
    assert!(!in_labor, "a promoted revision is no Labor candidate");
    assert_eq!(
        (my.as_deref(), job.as_deref()),
        (Some("promoted"), Some("promoted"))
    );
    let by_name = ok_result(
        &app.call("get_level", json!({"name": "lebenslauf"}), None)
            .await,
    );
    assert_eq!(by_name["revisionId"], r1.as_str(), "{by_name}");
    let e = tool_error(
        &app.call("withdraw_level", json!({"revisionId": r1}), ko)
            .await,
    );
    assert_eq!(
        e["code"], "conflict",
        "a promoted revision cannot be withdrawn: {e}"
    );

    // A successor, then withdrawn: hidden from others, the owner still reads it.
    let mut next = submit.clone();
    next["parentRevisionId"] = json!(r1);
    next["idempotencyKey"] = json!("lauf-2");
    let s2 = ok_result(&app.call("submit_level", next, ko).await);
    let r2 = s2["revisionId"].as_str().unwrap().to_string();
    let got = ok_result(&app.call("get_level", json!({"revisionId": r2}), None).await);
    assert_eq!(got["parentRevisionId"], r1.as_str(), "{got}");
    assert_eq!(
        states(r2.clone(), s2["jobId"].clone()).await,
        labor("labor")
    );
    let w = ok_result(
        &app.call("withdraw_level", json!({"revisionId": r2}), ko)
            .await,
    );
    assert_eq!(
        (
            &w["state"],
            &w["evidenceRetained"],
            &w["storageReclaimed"],
            &w["nameReserved"]
        ),
        (
            &json!("withdrawn"),
            &json!(true),
            &json!(false),
            &json!(true)
        ),
        "{w}"
    );
    let (anon, own, oth, in_labor, my, job) = states(r2.clone(), s2["jobId"].clone()).await;
    assert_eq!((anon.as_str(), oth.as_str()), ("not_found", "not_found"));
    assert_eq!(own, "withdrawn");
    assert!(!in_labor);
    assert_eq!(
        (my.as_deref(), job.as_deref()),
        (Some("withdrawn"), Some("withdrawn"))
    );
    // Withdrawing it again: the same answer, or a conflict that says it is withdrawn.
    let a = app
        .call("withdraw_level", json!({"revisionId": r2}), ko)
        .await;
    if a.body["result"]["isError"] == true {
        let e = tool_error(&a);
        assert_eq!(e["code"], "conflict", "{e}");
        assert!(e["message"].as_str().unwrap().contains("withdrawn"), "{e}");
    } else {
        assert_eq!(ok_result(&a)["state"], "withdrawn");
    }

    // A third revision quarantined by the operator: hidden everywhere, its owner's reads by
    // id too; the owner's list still names it, with its state. (A promoted revision is
    // rolled back before it can be quarantined: the operator's step, not a client's.)
    let mut third = submit.clone();
    third["parentRevisionId"] = json!(r1);
    third["idempotencyKey"] = json!("lauf-3");
    let s3 = ok_result(&app.call("submit_level", third, ko).await);
    let r3 = s3["revisionId"].as_str().unwrap().to_string();
    horst_gateway::promotion::quarantine(&app.store, &r3)
        .await
        .unwrap();
    let (anon, own, oth, in_labor, my, job) = states(r3.clone(), s3["jobId"].clone()).await;
    assert_eq!(
        (anon.as_str(), own.as_str(), oth.as_str()),
        ("not_found", "not_found", "not_found")
    );
    assert!(!in_labor);
    assert_eq!(
        (my.as_deref(), job.as_deref()),
        (Some("quarantined"), Some("quarantined"))
    );
    // The promoted revision stays the level's.
    let by_name = ok_result(
        &app.call("get_level", json!({"name": "Lebenslauf"}), None)
            .await,
    );
    assert_eq!(by_name["revisionId"], r1.as_str(), "{by_name}");
}

/// The daily job quotas ("Quotas"): at each limit the next call is `quota` with scope `owner`,
/// `retryAfterSeconds` until 00:00 UTC and `remaining` (docs/agents.md: every tool whose
/// results carry it carries it in its failures too) with that counter at 0; a retry of a
/// recorded key is still answered (`replayed`, nothing charged), and a recorded key with
/// other input is still a `conflict`, not a quota. Limits lowered to 1 playtest, 2
/// simulations and 1 submission so that one call each reaches them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daily_job_quotas_say_when_and_what_is_left() {
    let app = crate::harness::spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.burst_per_account_per_minute = 100_000;
        c.gateway.burst_per_ip_per_minute = 100_000;
        c.quotas.trust0.playtests = 1;
        c.quotas.trust0.simulations = 2;
        c.quotas.trust0.submissions = 1;
    })
    .await;
    let _worker = app.start_engine_worker();
    let key = app.agent_key("knapp", 0).await;
    let k = Some(key.as_str());
    let tiny = crate::mcp_loop::TINY_MAP;
    let play = |idem: &str| json!({"map": tiny, "idempotencyKey": idem});
    let p = ok_result(&app.call("playtest_map", play("p1"), k).await);
    assert_eq!(p["remaining"]["playtests"], 0, "{p}");
    let over = app.call("playtest_map", play("p2"), k).await;
    assert_daily_quota(&over, "");
    let e = tool_error(&over);
    assert_eq!(e["remaining"]["playtests"], 0, "{e}");
    let again = ok_result(&app.call("playtest_map", play("p1"), k).await);
    assert_eq!(
        (&again["replayed"], &again["jobId"]),
        (&json!(true), &p["jobId"])
    );

    let sim = |idem: &str| json!({"map": tiny, "replay": p["replay"], "idempotencyKey": idem});
    for (i, idem) in ["s1", "s2"].into_iter().enumerate() {
        let s = ok_result(&app.call("simulate_replay", sim(idem), k).await);
        assert_eq!(s["remaining"]["simulations"], 1 - i, "{s}");
    }
    let over = app.call("simulate_replay", sim("s3"), k).await;
    assert_daily_quota(&over, "");
    assert_eq!(tool_error(&over)["remaining"]["simulations"], 0);
    let mut other = sim("s1");
    other["map"] = json!(tiny.replace("Kurz", "Anders"));
    let e = tool_error(&app.call("simulate_replay", other, k).await);
    assert_eq!(
        e["code"], "conflict",
        "a recorded key with other input: {e}"
    );

    let replay: Value = serde_json::from_str(LEVEL_REPLAY).unwrap();
    let sub = |name: &str, idem: &str| json!({"name": name, "map": LEVEL_MAP, "replay": replay, "idempotencyKey": idem});
    let s = ok_result(&app.call("submit_level", sub("knapp-eins", "u1"), k).await);
    assert_eq!(s["remaining"]["submissions"], 0, "{s}");
    let over = app.call("submit_level", sub("knapp-zwei", "u2"), k).await;
    assert_daily_quota(&over, "");
    assert_eq!(tool_error(&over)["remaining"]["submissions"], 0);
}
