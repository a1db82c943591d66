//! horst on a slow link to Redis: every chunk between the horst processes and Redis held
//! 100 ms each way (a round trip of 200 ms: Redis in another region, a congested or lossy
//! network), real `horst api` and `horst worker` processes reaching a real redis-server
//! through `horst_testkit::Cut`'s delay (docs/reliability.md, "Faults nobody here had
//! tried"). Jobs run once each and their callers are answered; a turn clock strikes once and
//! on time, not stretched by rounds of the clock firer that a slow link makes long (a gap of
//! 2 s between pops counts as a stall, charged to nobody); the host's long-poll is answered
//! with the strike. (The housekeeping's rounds over such a link with a full queue:
//! `queue.rs`, `a_slow_link_to_redis_with_a_full_queue_still_reaps_a_dead_workers_lease`.)

use std::time::{Duration, Instant};

use horst_queue::JobState;
use horst_testkit::Cut;
use serde_json::json;

use crate::harness::HorstProcess;
use crate::rcadia_common::{entries, max_seq, started, two_player, Client};
use crate::reliability::{call, outside, Outside};
use crate::stall::simulation;

/// Each way, per chunk.
const DELAY: Duration = Duration::from_millis(100);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_and_a_turn_clock_keep_their_promises_on_a_slow_link_to_redis() {
    let Outside {
        redis,
        store,
        queue,
        key,
        dir,
        ..
    } = outside("sloth").await;
    let link = Cut::start(redis.port()).await;
    link.set_delay(DELAY);
    let url = link.url();
    let via_link = ["--redis", url.as_str()];
    let mut api = HorstProcess::spawn(
        &[&["api", "--listen", "127.0.0.1:0"][..], &via_link[..]].concat(),
        &[
            ("HORST_GATEWAY_MODE", "on"),
            ("HORST_SESSIONS_LOBBY_FILL_MS", "300"),
        ],
        dir.path(),
    );
    let addr = api.wait_listening();
    let _worker = HorstProcess::spawn(&[&["worker"][..], &via_link[..]].concat(), &[], dir.path());

    // Jobs: simulations one after another, each with a key of its own.
    let mut answered_in = Vec::new();
    for i in 0..6 {
        let sent = Instant::now();
        let (status, answer, _) = call(
            addr,
            "simulate_replay",
            simulation(&format!("slow-{i}")),
            &key,
        )
        .await;
        answered_in.push(sent.elapsed().as_secs_f64());
        assert_eq!(status, 200, "{answer}\n{}", api.stderr());
        assert_eq!(answer["outcome"], "won", "{answer}");
    }
    eprintln!("figure: simulate_replay over the slow link answered in {answered_in:.2?} s");
    let ids: Vec<String> = redis::cmd("ZRANGE")
        .arg(store.key("jobs:sloth"))
        .arg(0)
        .arg(-1)
        .query_async(&mut store.conn())
        .await
        .unwrap();
    assert_eq!(ids.len(), 6, "one job a call: {ids:?}");
    let mut charged = 0;
    for id in &ids {
        let job = queue.get(id).await.unwrap().unwrap();
        assert_eq!(job.state, JobState::Succeeded, "{job:?}");
        charged += job.charged_seconds;
    }
    let day = queue.today().await.unwrap();
    assert_eq!(day.seconds_charged, charged, "charged once each");

    // A turn clock: a has 3 s and one strike (the first loses); nobody moves. The host
    // long-polls for what happens.
    let auth = horst_identity::auth::Auth::new(store.clone(), &dir.path().join("jwt.key"))
        .await
        .unwrap();
    let client = |token: String| Client {
        base: format!("http://{addr}"),
        token,
        http: reqwest::Client::new(),
    };
    let (host, _) = auth
        .create_token(&["host".to_string()], Some("Host"))
        .await
        .unwrap();
    let host = client(host);
    let mut agents = Vec::new();
    for name in ["Sloth0", "Sloth1"] {
        let (token, _) = auth
            .create_token(&["play".to_string()], Some(name))
            .await
            .unwrap();
        agents.push(client(token));
    }
    let turn = 3;
    let (id, pids, mut after) = started(
        &host,
        &agents,
        two_player(json!({ "turnTimeout": turn, "maxTurnTimeouts": 1 })),
    )
    .await;
    let sent = Instant::now();
    host.ops(
        &id,
        json!([{ "op": "legal_actions", "playerId": pids[0], "actions": ["x"] }]),
    )
    .await;
    // The turn began while the ops were answered: at most one answer's way after `sent`.
    let on_turn = sent.elapsed();
    let mut strikes = Vec::new();
    while sent.elapsed() < Duration::from_secs(30) {
        let v = host.pending(&id, after, 25.0).await;
        for e in entries(&v) {
            if e["type"] == "timeout" {
                strikes.push((e, sent.elapsed()));
            }
        }
        after = max_seq(&v, after);
        if v["status"] == "finished" {
            break;
        }
    }
    eprintln!(
        "figure: {turn} s turn over the slow link: the ops answered {:.2} s after sent, the strike at {:?}",
        on_turn.as_secs_f64(),
        strikes
            .iter()
            .map(|(_, at)| format!("{:.2} s", at.as_secs_f64()))
            .collect::<Vec<_>>()
    );
    assert_eq!(strikes.len(), 1, "one strike, once: {strikes:?}");
    let (strike, at) = &strikes[0];
    assert_eq!(strike["playerId"], pids[0].as_str(), "{strike}");
    assert!(
        *at >= Duration::from_secs(turn),
        "struck before its turn was over: {at:?}"
    );
    // The link costs a few of its round trips (the firer's pop and write, the poll's
    // wake-up and answer: 0.6-0.8 s measured); the bound is a whole turn more, so a CI
    // machine's load cannot fail it, while a clock stretched by the link (a deadline
    // counted again from a late read, a firer round taken for a stall each time) would.
    assert!(
        *at < Duration::from_secs(2 * turn),
        "struck {at:?} after the ops were sent, for a {turn} s turn"
    );
    let s = agents[0].state(&id, 0.0).await;
    assert_eq!(s["status"], "finished", "{s}");
}
