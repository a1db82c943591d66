//! Fault drills an operator runs (docs/reliability.md, "Fault drills in the suite"), each
//! against real processes: the test's own redis-server and the `horst` binary where the
//! process's life is the point. (1) Redis killed and restarted from its AOF mid-job with
//! RCADIA sessions open; (2) an API process stopped (SIGSTOP) with long-polls open, then
//! resumed, and stopped then killed; (3) a worker stopped past its lease; (5) `horst up`'s
//! private Redis refusing writes because its disk fails (`MISCONF`). (4), a process whose
//! wall clock is off, is reasoned about in the docs: the deadlines run on Redis's clock.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use horst_queue::{JobKind, JobState};
use horst_testkit::RedisServer;
use serde_json::{json, Value};

use crate::harness::{eventually, spawn_app_with, HorstProcess, LEVEL_MAP};
use crate::mcp_loop::TINY_MAP;
use crate::rcadia_common::{entries, fast, max_seq, started, two_player, Client, BRIDGE};
use crate::reliability::{
    agent_key, api_process, assert_still_reaped, call, hard_map, newest_job, outside, running_job,
    Outside,
};
use crate::stall::{outcome, record, simulation, start_worker, told, until_started, Gated};

/// What a request got: its status and JSON body, or the transport error (a broken connection).
type Got = Result<(u16, Value), String>;

/// One raw request: its status and JSON body, or the transport error (a broken connection).
async fn raw(http: &reqwest::Client, url: String, token: &str) -> Got {
    let r = http
        .get(url)
        .bearer_auth(token)
        .timeout(Duration::from_secs(90))
        .send()
        .await
        .map_err(|e| format!("transport: {e}"))?;
    let status = r.status().as_u16();
    Ok((status, r.json().await.unwrap_or(Value::Null)))
}

/// An open long-poll: `GET url` in a task of its own, answered with when it came back.
fn open_poll(client: &Client, path: String) -> tokio::task::JoinHandle<(Got, Instant)> {
    let c = client.clone();
    tokio::spawn(async move {
        let answer = raw(&c.http, format!("{}{path}", c.base), &c.token).await;
        (answer, Instant::now())
    })
}

/// The strikes (`timeout` entries) of one host view: (player, strike number, final).
fn strikes(view: &[Value]) -> Vec<(String, u64, bool)> {
    view.iter()
        .filter(|e| e["type"] == "timeout")
        .map(|e| {
            (
                e["playerId"].as_str().unwrap_or_default().to_string(),
                e["strike"].as_u64().unwrap_or(0),
                e["final"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

/// What a session with `maxTurnTimeouts` `n` nobody answers shows its host: strikes 1..=n
/// of `player`, each once and in order, the last final, and the end for time.
fn assert_struck_out(view: &[Value], player: &str, n: u64) {
    let seqs: Vec<u64> = view.iter().filter_map(|e| e["seq"].as_u64()).collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "entries out of order or doubled: {seqs:?}"
    );
    let want: Vec<(String, u64, bool)> = (1..=n).map(|k| (player.to_string(), k, k == n)).collect();
    assert_eq!(strikes(view), want, "{view:?}");
    let end = view
        .iter()
        .find(|e| e["event"] == "session_end")
        .unwrap_or_else(|| panic!("no session_end: {view:?}"));
    assert_eq!(end["reason"], "timeout", "{end}");
    assert_eq!(end["result"]["forfeitedBy"], player, "{end}");
}

/// A started two-player session of `config` with the first agent on turn: (session id,
/// player ids, the host's last seq).
async fn first_on_turn(
    host: &Client,
    agents: &[Client],
    config: Value,
) -> (String, Vec<String>, u64) {
    let (id, pids, after) = started(host, agents, two_player(config)).await;
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    (id, pids, after)
}

/// Polls the host queue of `id` (on `host`'s API process) from `after` until the session's
/// end: every entry, once.
async fn host_view_until_end(host: &Client, id: &str, after: u64, limit: Duration) -> Vec<Value> {
    let start = Instant::now();
    let (mut after, mut seen) = (after, Vec::new());
    while start.elapsed() < limit {
        let url = format!(
            "{}{BRIDGE}/{id}/pending-actions?after={after}&wait=2",
            host.base
        );
        if let Ok((200, p)) = raw(&host.http, url, &host.token).await {
            after = max_seq(&p, after);
            let es = entries(&p);
            let ended = es.iter().any(|e| e["event"] == "session_end");
            seen.extend(es);
            if ended {
                return seen;
            }
        } else {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    panic!("the session never ended within {limit:?}: {seen:?}");
}

/// (1) Redis killed (`kill -9`) and started again from its AOF while a playtest and a
/// simulation are held running, and a session's turn clock runs with the host's and an
/// agent's long-polls open. The work finishes while Redis is down; its worker's completion
/// is retried until Redis is back. Afterwards: both jobs `succeeded`, each run once and
/// charged once; the clock strikes 1, 2 (each once, in order) and the game ends for time;
/// the long-polls that were open across the restart are answered, and the host's next polls
/// get every entry once.
async fn redis_restarted_from_its_aof_mid_job_with_sessions_open_loses_and_doubles_nothing() {
    let mut app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        fast(c);
    })
    .await;
    let key = app.agent_key("dunlin", 1).await;
    let other = app.agent_key("godwit", 1).await;
    let before = app.queue.remaining("dunlin", 1).await.unwrap();
    let other_before = app.queue.remaining("godwit", 1).await.unwrap();
    let runner = Gated::new();
    let _worker = start_worker(&app, runner.clone());
    let sim = simulation("aof-sim");
    let play = json!({"map": TINY_MAP, "idempotencyKey": "aof-play"});
    let callers = [
        crate::stall::waiting_call(&app, "simulate_replay", &sim, &key),
        crate::stall::waiting_call(&app, "playtest_map", &play, &other),
    ];
    until_started(&runner, JobKind::Simulate).await;
    until_started(&runner, JobKind::Playtest).await;

    let (host, agents) = crate::rcadia_common::cast(&app, 2).await;
    let (id, pids, after) = first_on_turn(
        &host,
        &agents,
        json!({ "turnTimeout": 2, "maxTurnTimeouts": 2 }),
    )
    .await;
    let host_poll = open_poll(
        &host,
        format!("{BRIDGE}/{id}/pending-actions?after={after}&wait=25"),
    );
    let agent_poll = open_poll(
        &agents[1],
        format!("/api/v1/agent/sessions/{id}/state?wait=25"),
    );
    // `appendfsync everysec`: what the test wrote reaches the AOF before the kill.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    app.redis_mut().kill();
    let killed = Instant::now();
    tokio::time::sleep(Duration::from_secs(1)).await;
    // The work finishes while Redis is down.
    runner.open(JobKind::Simulate);
    runner.open(JobKind::Playtest);
    tokio::time::sleep(Duration::from_secs(2)).await;
    app.redis_mut().start_again();
    let back = Instant::now();

    let mut first = Vec::new();
    for c in callers {
        let (status, answer, _) = c.await.unwrap();
        first.push(told(status, &answer));
    }
    let sim_answer = outcome(&app, "simulate_replay", &sim, &key).await;
    let play_answer = outcome(&app, "playtest_map", &play, &other).await;
    let view = host_view_until_end(&host, &id, after, Duration::from_secs(60)).await;
    let (host_first, host_at) = host_poll.await.unwrap();
    let (agent_first, agent_at) = agent_poll.await.unwrap();
    let brief = |a: &Got| match a {
        Ok((st, v)) => format!("{st} ({} entries)", entries(v).len()),
        Err(e) => e.clone(),
    };
    eprintln!(
        "figure: redis kill -9, down {:.1} s, started again from its AOF: waiting callers got {first:?}; \
         asked again: simulation {}, playtest {}; open host poll answered {} at {:.1} s after the restart, \
         agent poll {} at {:.1} s; strikes {:?}",
        back.duration_since(killed).as_secs_f64(),
        sim_answer["outcome"],
        play_answer.get("outcome").unwrap_or(&play_answer["error"]),
        brief(&host_first),
        host_at.saturating_duration_since(back).as_secs_f64(),
        brief(&agent_first),
        agent_at.saturating_duration_since(back).as_secs_f64(),
        strikes(&view),
    );
    // The jobs: finished once, run once, charged once.
    assert_eq!(sim_answer["outcome"], "won", "{sim_answer}");
    assert!(play_answer.get("error").is_none(), "{play_answer}");
    for (answer, kind) in [
        (&sim_answer, JobKind::Simulate),
        (&play_answer, JobKind::Playtest),
    ] {
        let job = record(&app, &answer["jobId"]).await;
        assert_eq!(job.state, JobState::Succeeded, "{job:?}");
        assert_eq!(runner.runs(kind), 1, "{kind:?} ran once");
    }
    let after_sim = app.queue.remaining("dunlin", 1).await.unwrap();
    let after_play = app.queue.remaining("godwit", 1).await.unwrap();
    assert_eq!(
        after_sim.simulations,
        before.simulations - 1,
        "charged once"
    );
    assert_eq!(
        after_play.playtests,
        other_before.playtests - 1,
        "charged once"
    );
    // The day's seconds are the server's: both jobs' charges, each once.
    let charged = record(&app, &sim_answer["jobId"]).await.charged_seconds
        + record(&app, &play_answer["jobId"]).await.charged_seconds;
    assert_eq!(after_sim.seconds, before.seconds - charged, "charged once");

    // The clock: each strike once, in order, then the end; the waiters were answered.
    assert_struck_out(&view, &pids[0], 2);
    assert!(
        host_at < back + Duration::from_secs(40),
        "the host's poll hung"
    );
    assert!(
        agent_at < back + Duration::from_secs(40),
        "the agent's poll hung"
    );
    let s = agents[1].state(&id, 0.0).await;
    assert_eq!(s["status"], "finished", "{s}");
    assert_eq!(s["result"]["reason"], "timeout", "{s}");
    // Not charged once more for a turn it never had: b was never struck.
    assert_eq!(s["strikes"], 0, "{s}");
}

/// Tokens for a host and two agents, made in `store` as `horst admin token create` does.
async fn rcadia_tokens(store: &horst_store::Store, dir: &std::path::Path) -> (String, [String; 2]) {
    let auth = horst_identity::auth::Auth::new(store.clone(), &dir.join("jwt.key"))
        .await
        .unwrap();
    let mk = async |scope: &str, name: &str| {
        auth.create_token(&[scope.to_string()], Some(name))
            .await
            .unwrap()
            .0
    };
    let host = mk("host", "Host").await;
    let a = mk("play", "Teal").await;
    let b = mk("play", "Smew").await;
    (host, [a, b])
}

fn client(addr: SocketAddr, token: &str) -> Client {
    Client {
        base: format!("http://{addr}"),
        token: token.to_string(),
        http: reqwest::Client::new(),
    }
}

/// (2) Two `horst api` processes on one Redis. A session's turn clock runs (3 s, two
/// strikes lose) with the host's and an agent's long-polls open on A, and A is stopped
/// (SIGSTOP). B serves the session meanwhile and B's clock firer strikes: the clocks are not
/// A's. At SIGCONT A's open polls are answered with everything they missed, once. Then a
/// second session, and A is stopped and killed (`kill -9` while stopped): its polls break,
/// the host moves to B and gets every entry once, the game ends for time. Last, B is
/// stopped too: a worker process fires the clocks while no API process runs.
async fn an_api_process_stopped_with_long_polls_open_leaves_its_sessions_to_the_others() {
    let redis = RedisServer::start();
    let store = horst_store::Store::connect(&redis.url(), "horst:")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (host_token, agent_tokens) = rcadia_tokens(&store, &dir.path().join("data")).await;
    let mut a = api_process(&redis, dir.path(), &[]);
    let a_addr = a.wait_listening();
    let mut b = api_process(&redis, dir.path(), &[]);
    let b_addr = b.wait_listening();
    // Every process fires session clocks, a worker too (round 3).
    let worker = HorstProcess::spawn(&["worker", "--redis", &redis.url()], &[], dir.path());
    let (host_a, host_b) = (client(a_addr, &host_token), client(b_addr, &host_token));
    let agents_a: Vec<Client> = agent_tokens.iter().map(|t| client(a_addr, t)).collect();
    let agents_b: Vec<Client> = agent_tokens.iter().map(|t| client(b_addr, t)).collect();
    // A 3 s turn: A is stopped well before the first strike, however loaded the machine.
    let config = json!({ "turnTimeout": 3, "maxTurnTimeouts": 2 });

    // Round 1: stopped, then resumed.
    let (id, pids, after) = first_on_turn(&host_a, &agents_b, config.clone()).await;
    let host_poll = open_poll(
        &host_a,
        format!("{BRIDGE}/{id}/pending-actions?after={after}&wait=25"),
    );
    let agent_poll = open_poll(
        &agents_a[1],
        format!("/api/v1/agent/sessions/{id}/state?wait=25"),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.signal(libc::SIGSTOP);
    let stopped = Instant::now();
    let view_b = host_view_until_end(&host_b, &id, after, Duration::from_secs(30)).await;
    let ended_after = stopped.elapsed();
    assert!(!host_poll.is_finished() && !agent_poll.is_finished());
    a.signal(libc::SIGCONT);
    let resumed = Instant::now();
    let (host_first, host_at) = host_poll.await.unwrap();
    let (agent_first, agent_at) = agent_poll.await.unwrap();
    eprintln!(
        "figure: API A stopped; on B the game ended for time {:.1} s later with strikes {:?}; \
         at SIGCONT A's open host poll was answered after {:.2} s, the agent's after {:.2} s",
        ended_after.as_secs_f64(),
        strikes(&view_b),
        host_at.saturating_duration_since(resumed).as_secs_f64(),
        agent_at.saturating_duration_since(resumed).as_secs_f64(),
    );
    assert_struck_out(&view_b, &pids[0], 2);
    let (status, p) = host_first.expect("A's host poll answered");
    assert_eq!(status, 200, "{p}");
    // What B's polls acknowledged (`after`) is gone from the host's queue; the rest comes
    // as B delivered it, once, ending with the end.
    let missed = entries(&p);
    assert!(!missed.is_empty(), "A's poll came back empty: {p}");
    for e in &missed {
        assert!(
            view_b.contains(e),
            "A's poll: {e} is not what B delivered: {p}"
        );
    }
    assert_eq!(missed.last().unwrap()["event"], "session_end", "{p}");
    assert!(
        missed
            .windows(2)
            .all(|w| w[0]["seq"].as_u64() < w[1]["seq"].as_u64()),
        "{p}"
    );
    let (status, s) = agent_first.expect("A's agent poll answered");
    assert_eq!(status, 200, "{s}");
    assert_eq!(s["status"], "finished", "{s}");
    for at in [host_at, agent_at] {
        assert!(
            at < resumed + Duration::from_secs(10),
            "answered only at its wait's end"
        );
    }

    // Round 2: stopped, then killed while stopped.
    let (id, pids, after) = first_on_turn(&host_b, &agents_b, config.clone()).await;
    let host_poll = open_poll(
        &host_a,
        format!("{BRIDGE}/{id}/pending-actions?after={after}&wait=25"),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.signal(libc::SIGSTOP);
    tokio::time::sleep(Duration::from_millis(500)).await;
    a.signal(libc::SIGKILL);
    a.wait_exit(Duration::from_secs(10)).expect("A ended");
    let (broken, _) = host_poll.await.unwrap();
    assert!(broken.is_err(), "a killed process answered: {broken:?}");
    let view = host_view_until_end(&host_b, &id, after, Duration::from_secs(30)).await;
    eprintln!(
        "figure: API A stopped and killed: its open poll {}; on B strikes {:?}",
        broken.unwrap_err(),
        strikes(&view)
    );
    assert_struck_out(&view, &pids[0], 2);
    let r = reqwest::get(format!("http://{b_addr}/readyz"))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(b.child.try_wait().unwrap().is_none(), "{}", b.stderr());

    // Round 3: no API process runs (B stopped too, A dead); the worker fires the clocks.
    // Had nobody popped them, B would find a stall at SIGCONT and give the player its turn
    // back ("Turn clocks across a stall of Redis"); the game is over at once instead.
    let (id, pids, after) = first_on_turn(&host_b, &agents_b, config).await;
    b.signal(libc::SIGSTOP);
    tokio::time::sleep(Duration::from_secs(9)).await;
    b.signal(libc::SIGCONT);
    let s = agents_b[1].state(&id, 0.0).await;
    let view = host_view_until_end(&host_b, &id, after, Duration::from_secs(30)).await;
    eprintln!(
        "figure: every API process stopped or dead for 9 s, a worker running: at SIGCONT the game was {} ({}), strikes {:?}",
        s["status"],
        s["result"]["reason"],
        strikes(&view)
    );
    assert_eq!(s["status"], "finished", "{s}\n{}", worker.stderr());
    assert_struck_out(&view, &pids[0], 2);
}

/// (3) A worker process stopped (SIGSTOP) in the middle of a playtest, past its lease (2 s):
/// the API process reaps the job as the contract says (`cancelled`, charged once, never run
/// again) and tells the waiting caller; at SIGCONT the worker hears that its lease is gone,
/// drops its result and records nothing, and then runs the next job.
async fn a_worker_stopped_past_its_lease_loses_the_job_once_and_its_late_result_is_dropped() {
    let Outside {
        redis,
        store,
        queue,
        key,
        before,
        dir,
        ..
    } = outside("plover").await;
    let lease = [("HORST_QUEUE_LEASE_SECONDS", "2")];
    let mut api = api_process(&redis, dir.path(), &lease);
    let addr = api.wait_listening();
    let worker = HorstProcess::spawn(&["worker", "--redis", &redis.url()], &lease, dir.path());
    let args = json!({"map": hard_map(), "idempotencyKey": "hard-1"});
    let caller = tokio::spawn({
        let (args, key) = (args.clone(), key.clone());
        async move { call(addr, "playtest_map", args, &key).await }
    });
    let job = running_job(&store, "plover", &worker).await;

    worker.signal(libc::SIGSTOP);
    let stopped = Instant::now();
    let (status, answer, _) = caller.await.unwrap();
    let told_after = stopped.elapsed();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["error"]["code"],
        "cancelled",
        "{answer}\n{}",
        api.stderr()
    );
    assert_eq!(answer["error"]["jobId"], job.as_str());
    let reaped = queue.get(&job).await.unwrap().unwrap();
    assert_eq!(reaped.state, JobState::Failed, "{reaped:?}");
    assert_eq!(reaped.failure.as_ref().unwrap().code, "cancelled");
    // Stopped for three leases in all, then resumed.
    tokio::time::sleep_until((stopped + Duration::from_secs(6)).into()).await;
    worker.signal(libc::SIGCONT);
    let resumed = Instant::now();
    let mut heard = false;
    for _ in 0..200 {
        if worker.stderr().contains("lease lost while running") {
            heard = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let heard_after = resumed.elapsed();
    assert!(
        heard,
        "the worker never dropped its result: {}",
        worker.stderr()
    );
    // The next job runs on the resumed worker.
    let (next_status, next, _) = call(addr, "simulate_replay", simulation("after-1"), &key).await;
    let again = call(addr, "playtest_map", args, &key).await;
    eprintln!(
        "figure: worker stopped 6 s (lease 2 s) mid-playtest: caller told {} {:.1} s after the stop; \
         at SIGCONT the worker dropped its result after {:.2} s; next simulation {next_status} {}; \
         the same key again: {}",
        answer["error"]["code"],
        told_after.as_secs_f64(),
        heard_after.as_secs_f64(),
        next["outcome"],
        again.1["error"]["code"],
    );
    assert_eq!(next_status, 200, "{next}");
    assert_eq!(next["outcome"], "won", "{next}");
    // The reaped job: as it was reaped (not completed, not re-run), charged once.
    let last = queue.get(&job).await.unwrap().unwrap();
    assert_still_reaped(&last, &reaped);
    assert_eq!(last.charged_seconds, 20);
    assert_eq!(again.1["error"]["code"], "cancelled", "{}", again.1);
    assert_eq!(again.1["error"]["jobId"], job.as_str());
    let now = queue.remaining("plover", 1).await.unwrap();
    let sim_charge = record_of(&queue, &next["jobId"]).await.charged_seconds;
    assert_eq!(now.playtests, before.playtests - 1, "one playtest charged");
    assert_eq!(
        now.seconds,
        before.seconds - 20 - sim_charge,
        "charged once"
    );
}

async fn record_of(queue: &horst_queue::Queue, id: &Value) -> horst_queue::JobRecord {
    queue.get(id.as_str().unwrap()).await.unwrap().unwrap()
}

/// One request to `horst up` in the sweep below: its status, whether a 503 carried
/// `Retry-After`, and the body.
async fn ask(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, bool, Value) {
    let mut req = http
        .request(method, url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    let r = req.send().await.expect("horst up answers");
    let status = r.status().as_u16();
    let retry = r.headers().get("retry-after").is_some();
    (status, retry, r.json().await.unwrap_or(Value::Null))
}

fn tool(name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
}

/// (5) `horst up` (API, worker child, private Redis) while its Redis's disk fails
/// (`MISCONF`: the snapshot cannot be written, so Redis refuses every write): every route
/// answers, reads 200 and writes 503 with `Retry-After`, none 500; `/readyz` stays 200 and
/// says writes are refused; neither the worker child nor the private Redis is restarted and
/// up keeps running; once the disk is mended the refused admission is accepted under its
/// idempotency key and run, without a restart.
async fn horst_up_s_private_redis_with_a_failing_disk_answers_503_and_recovers_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    // Dropped after `up`: a run that fails before the save points are reset below leaves no
    // redis-server behind either.
    let mut private_pid = KillOnDrop(None);
    let mut up = HorstProcess::spawn(
        &["up", "--listen", "127.0.0.1:0", "--data", "data"],
        &[("HORST_GATEWAY_MODE", "on")],
        dir.path(),
    );
    let addr = up.wait_listening();
    up.wait_for_line("worker process started (pid", Duration::from_secs(60));
    let data = dir.path().join("data");
    let private = horst_redis_process::PrivateRedis::attach(&data).expect("up's redis-server");
    let store = horst_store::Store::connect(&private.url(), "horst:")
        .await
        .unwrap();
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut store.conn())
        .await
        .unwrap();
    private_pid.0 = info
        .lines()
        .find_map(|l| l.strip_prefix("process_id:")?.trim().parse().ok());
    let key = agent_key(&store, "curlew").await;
    let (host_token, _) = rcadia_tokens(&store, &data).await;
    let http = reqwest::Client::new();
    let url = |path: &str| format!("http://{addr}{path}");
    let (st, before, _) = call(addr, "simulate_replay", simulation("up-before"), &key).await;
    assert_eq!((st, &before["outcome"]), (200, &json!("won")), "{before}");

    crate::redis_full::break_the_disk(&store).await;
    let broken = Instant::now();
    let mut ready = Value::Null;
    let told = eventually(Duration::from_secs(20), async || {
        let (st, _, v) = ask(&http, reqwest::Method::GET, url("/readyz"), None, None).await;
        ready = json!({"status": st, "body": v});
        st == 200 && v["writes"] == "refused"
    })
    .await;
    assert!(told, "/readyz never said writes are refused: {ready}");

    use reqwest::Method as M;
    let session =
        json!({ "config": two_player(json!({})), "gameId": "chess", "gameTitle": "Chess" });
    // (name, method, path, credential, body, what it must answer: None = anything but 500)
    type Route<'a> = (
        &'a str,
        M,
        &'a str,
        Option<&'a str>,
        Option<Value>,
        Option<u16>,
    );
    let routes: Vec<Route> = vec![
        ("GET /healthz", M::GET, "/healthz", None, None, Some(200)),
        (
            "MCP validate_map (anonymous)",
            M::POST,
            "/api/mcp",
            None,
            Some(tool("validate_map", json!({"map": LEVEL_MAP}))),
            Some(200),
        ),
        (
            "MCP simulate_replay (admission)",
            M::POST,
            "/api/mcp",
            Some(&key),
            Some(tool("simulate_replay", simulation("up-during"))),
            Some(503),
        ),
        (
            "MCP my_submissions (keyed read)",
            M::POST,
            "/api/mcp",
            Some(&key),
            Some(tool("my_submissions", json!({}))),
            Some(200),
        ),
        (
            "POST /api/agent-keys",
            M::POST,
            "/api/agent-keys",
            None,
            Some(json!({"displayName": "Drill"})),
            None,
        ),
        (
            "GET /api/game/levels",
            M::GET,
            "/api/game/levels",
            None,
            None,
            Some(200),
        ),
        (
            "RCADIA GET sessions/available",
            M::GET,
            "/api/v1/agent/sessions/available",
            Some(&host_token),
            None,
            Some(200),
        ),
        (
            "RCADIA POST bridge/sessions (create)",
            M::POST,
            BRIDGE,
            Some(&host_token),
            Some(session.clone()),
            Some(503),
        ),
    ];
    let mut seen = Vec::new();
    for (name, method, path, token, body, want) in routes {
        let (status, retry, v) = ask(&http, method, url(path), token, body).await;
        seen.push((name, status, retry));
        assert_ne!(status, 500, "{name}: {v}");
        if status == 503 {
            assert!(retry, "{name} answered 503 without Retry-After: {v}");
        }
        if let Some(want) = want {
            assert_eq!(status, want, "{name}: {v}");
        }
    }
    // Up rides it out: nothing of it is restarted, and it stays up.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        starts(&up, "worker process started (pid"),
        1,
        "{}",
        up.stdout()
    );
    assert_eq!(
        starts(&up, "private redis-server started"),
        1,
        "{}",
        up.stdout()
    );
    assert!(up.child.try_wait().unwrap().is_none(), "{}", up.stderr());

    crate::redis_full::mend_the_disk(&store).await;
    let mended = Instant::now();
    let mut last = Value::Null;
    let recovered = eventually(Duration::from_secs(30), async || {
        let (st, v, _) = call(addr, "simulate_replay", simulation("up-during"), &key).await;
        last = json!({"status": st, "answer": v});
        st == 200 && v["outcome"] == "won"
    })
    .await;
    let recovered_after = mended.elapsed();
    let mut v = Value::Null;
    let cleared = eventually(Duration::from_secs(20), async || {
        let (st, _, seen) = ask(&http, M::GET, url("/readyz"), None, None).await;
        v = json!({"status": st, "body": seen});
        st == 200 && seen["writes"] != "refused"
    })
    .await;
    let cleared_after = mended.elapsed();
    let (created, _, s) = ask(
        &http,
        M::POST,
        url(BRIDGE),
        Some(&host_token),
        Some(session),
    )
    .await;
    eprintln!(
        "figure: horst up, disk failing (MISCONF) for {:.1} s: {seen:?}; /readyz said {}; \
         after the repair the refused admission ran under its key within {:.1} s, /readyz cleared within {:.1} s",
        mended.duration_since(broken).as_secs_f64(),
        ready["body"],
        recovered_after.as_secs_f64(),
        cleared_after.as_secs_f64(),
    );
    assert!(recovered, "never recovered: {last}");
    assert!(cleared, "/readyz still says writes are refused: {v}");
    assert_eq!(created, 201, "{s}");
    assert_eq!(
        starts(&up, "worker process started (pid"),
        1,
        "{}",
        up.stdout()
    );
    // Back to no snapshots: with save points a SIGTERM (up's death signal for its Redis)
    // makes Redis save first, and once the test's directory is gone that save fails and
    // Redis stays up: every run left a redis-server behind.
    crate::redis_full::config_set_on(&store, "save", "").await;
}

/// SIGKILLs the process when dropped.
struct KillOnDrop(Option<i32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// How many times `up` printed `what` (a start of its worker or of its Redis).
fn starts(up: &HorstProcess, what: &str) -> usize {
    up.stdout().matches(what).count()
}

/// (4) The clock jumps. horst reads time for its deadlines from Redis (`TIME`, in every
/// script and `Store::now_ms`), never from a process's own wall clock, and waits in-process
/// on monotonic timers; so a process whose wall clock is off or jumps changes no deadline
/// (docs/reliability.md says where the process clock is read and why that is harmless).
/// What can jump is Redis's own clock (its host's): here it jumps 60 s forward (the store's
/// clock offset, which every part of this test's process reads, as every process would
/// read a jumped server clock) with a turn clock running and a job held running. The jump is
/// taken for a stall, charged to nobody: the player is not struck for it, the job's lease
/// (10 s) is not reaped; the job then finishes once and the player is struck only after
/// the turn time it really had.
async fn a_forward_jump_of_redis_s_clock_strikes_nobody_and_reaps_no_lease() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        fast(c);
    })
    .await;
    let key = app.agent_key("knot", 1).await;
    let runner = Gated::new();
    let _worker = start_worker(&app, runner.clone());
    let sim = simulation("jump-sim");
    let caller = crate::stall::waiting_call(&app, "simulate_replay", &sim, &key);
    until_started(&runner, JobKind::Simulate).await;
    let (host, agents) = crate::rcadia_common::cast(&app, 2).await;
    let (id, pids, after) = first_on_turn(
        &host,
        &agents,
        json!({ "turnTimeout": 6, "maxTurnTimeouts": 1 }),
    )
    .await;
    let on_turn = Instant::now();
    let hosting = {
        let host = host.clone();
        let id = id.clone();
        tokio::spawn(async move {
            let view = host_view_until_end(&host, &id, after, Duration::from_secs(60)).await;
            (view, Instant::now())
        })
    };
    tokio::time::sleep_until((on_turn + Duration::from_secs(1)).into()).await;
    app.store.set_clock_offset_ms(60_000);
    tokio::time::sleep_until((on_turn + Duration::from_secs(3)).into()).await;
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["status"], "active", "struck out for the jump: {s}");
    assert_eq!(s["strikes"], 0, "{s}");
    let job = app
        .queue
        .get(&newest(&app, "knot").await)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(job.state, JobState::Running, "reaped for the jump: {job:?}");

    runner.open(JobKind::Simulate);
    let (status, first, _) = caller.await.unwrap();
    let answer = outcome(&app, "simulate_replay", &sim, &key).await;
    let (view, ended) = hosting.await.unwrap();
    let struck_after = ended.duration_since(on_turn);
    eprintln!(
        "figure: Redis's clock 60 s forward 1 s into a 6 s turn, with a job running: caller HTTP {status} \
         (pending: {}), outcome {}; the player struck out {:.1} s after its turn began",
        first["pending"] == true,
        answer["outcome"],
        struck_after.as_secs_f64()
    );
    assert_eq!(answer["outcome"], "won", "{answer}");
    let job = record(&app, &answer["jobId"]).await;
    assert_eq!(job.state, JobState::Succeeded, "{job:?}");
    assert_eq!(runner.runs(JobKind::Simulate), 1, "run once");
    assert_struck_out(&view, &pids[0], 1);
    assert!(
        struck_after >= Duration::from_millis(5500),
        "struck {struck_after:?} after its turn began (turn 6 s)"
    );
}

async fn newest(app: &crate::harness::TestApp, account: &str) -> String {
    newest_job(&app.store, account).await.expect("a job")
}

/// The five drills side by side, each with its own Redis and processes: they mostly wait
/// (a lease running out, an API's long-polls moving over, a disk failing and coming back),
/// and one after another they held a test thread for about 50 s.
#[test]
fn drills_side_by_side() {
    crate::side_by_side!(
        redis_restarted_from_its_aof_mid_job_with_sessions_open_loses_and_doubles_nothing,
        an_api_process_stopped_with_long_polls_open_leaves_its_sessions_to_the_others,
        a_worker_stopped_past_its_lease_loses_the_job_once_and_its_late_result_is_dropped,
        horst_up_s_private_redis_with_a_failing_disk_answers_503_and_recovers_by_itself,
        a_forward_jump_of_redis_s_clock_strikes_nobody_and_reaps_no_lease,
    );
}
