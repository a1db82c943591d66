//! The per-process record cache under pub/sub faults (`rcadia/src/record.rs`,
//! `RecordCache`): two API processes on one Redis, pub/sub broken for one of them while the
//! other writes. Whatever breaks, every read through either process (`/state`, `/public`,
//! `pending-actions`, long-polls) shows the newest write within a bounded time, a waiting
//! long-poll is woken, and no write is lost or applied twice (the compare-and-set holds
//! across a stale cached record and its base).
//!
//! The processes are two apps in this test process sharing nothing but Redis
//! (`spawn_app_beside`); A's pub/sub connection is told from B's by `CLIENT LIST` (the
//! subscribed connections there before B started are A's).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::harness::{eventually, on_cluster, spawn_app_beside, spawn_app_on, TestApp};
use crate::rcadia_common::*;

/// How long after a fault a read may still lag a write of the other process: a proof lapses
/// after 2 s (`FRESH_FOR`), a waiter re-reads every 2 s, the listener reconnects within 2 s
/// of backoff; the rest is slack for CI's two shared cores.
const BOUND: Duration = Duration::from_secs(10);

/// A connection of the test's own to the apps' Redis.
async fn admin(app: &TestApp) -> redis::aio::MultiplexedConnection {
    redis::Client::open(app.redis_url.as_str())
        .expect("a redis url")
        .get_multiplexed_async_connection()
        .await
        .expect("connect to the test redis")
}

/// The ids of the connections subscribed to a pattern (`psub=` above 0 in `CLIENT LIST`).
async fn subscribers(conn: &mut redis::aio::MultiplexedConnection) -> BTreeSet<u64> {
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query_async(conn)
        .await
        .expect("CLIENT LIST");
    list.lines()
        .filter(|line| {
            line.split(' ')
                .any(|f| f.strip_prefix("psub=").is_some_and(|n| n != "0"))
        })
        .filter_map(|line| {
            line.split(' ')
                .find_map(|f| f.strip_prefix("id="))
                .and_then(|id| id.parse().ok())
        })
        .collect()
}

/// Two API processes, A and B, on one Redis, and B's subscribed connections.
struct Pair {
    a: TestApp,
    b: TestApp,
    admin: redis::aio::MultiplexedConnection,
    b_subscribers: BTreeSet<u64>,
}

impl Pair {
    async fn start() -> Pair {
        // DEBUG SLEEP is refused unless enabled (from loopback only here).
        let redis = horst_testkit::RedisServer::start_with(|o| {
            o.extra
                .push(("enable-debug-command".into(), "local".into()))
        });
        let a = spawn_app_on(redis, fast).await;
        let mut admin = admin(&a).await;
        let mut of_a = BTreeSet::new();
        assert!(
            eventually(Duration::from_secs(20), async || {
                of_a = subscribers(&mut admin).await;
                !of_a.is_empty()
            })
            .await,
            "A's listener never subscribed"
        );
        let b = spawn_app_beside(&a, fast).await;
        let mut of_b = BTreeSet::new();
        assert!(
            eventually(Duration::from_secs(20), async || {
                of_b = &subscribers(&mut admin).await - &of_a;
                !of_b.is_empty()
            })
            .await,
            "B's listener never subscribed"
        );
        Pair {
            a,
            b,
            admin,
            b_subscribers: of_b,
        }
    }

    /// `CLIENT KILL`s A's pub/sub connections (whatever ids they have now); how many.
    async fn kill_a_listener(&mut self) -> usize {
        let of_a = &subscribers(&mut self.admin).await - &self.b_subscribers;
        for id in &of_a {
            let _: redis::Value = redis::cmd("CLIENT")
                .arg("KILL")
                .arg("ID")
                .arg(id)
                .query_async(&mut self.admin)
                .await
                .expect("CLIENT KILL ID");
        }
        of_a.len()
    }

    /// Waits until A's listener is subscribed again.
    async fn a_listener_back(&mut self) {
        let (admin, of_b) = (&mut self.admin, &self.b_subscribers);
        assert!(
            eventually(BOUND, async || {
                !(&subscribers(admin).await - of_b).is_empty()
            })
            .await,
            "A's listener did not come back"
        );
    }
}

/// A started two-player game: the host and the agents have a client on each process.
struct Game {
    id: String,
    pids: Vec<String>,
    after: u64,
    host: [Client; 2],
    agents: [Vec<Client>; 2],
}

impl Game {
    async fn start(p: &Pair) -> Game {
        let (host, agents) = cast(&p.a, 2).await;
        let (id, pids, after) = started(&host, &agents, two_player(json!({}))).await;
        // Seat 1's turn: seat 0's long-polls wait for theirs.
        host.ops(
            &id,
            json!([{ "op": "legal_actions", "playerId": pids[1], "actions": ["y"] }]),
        )
        .await;
        Game {
            id,
            pids,
            after,
            host: [host.clone(), host.on(&p.b)],
            agents: [agents.clone(), agents.iter().map(|c| c.on(&p.b)).collect()],
        }
    }

    /// Host ops through process `on` (0 = A, 1 = B); the version they stored.
    async fn ops(&self, on: usize, ops: Value) -> u64 {
        let v = self.host[on].ops(&self.id, ops).await;
        v["version"].as_u64().expect("a version")
    }

    /// A new public state `n` (a write that wakes everyone) through `on`.
    async fn publish(&self, on: usize, n: u64) -> u64 {
        self.ops(on, json!([{ "op": "state", "state": { "n": n } }]))
            .await
    }

    /// A long-poll of agent `seat` on process `on` for its turn, started now.
    fn poll_turn(&self, on: usize, seat: usize) -> tokio::task::JoinHandle<(Value, Instant)> {
        let agent = self.agents[on][seat].clone();
        let id = self.id.clone();
        tokio::spawn(async move { (agent.state(&id, 20.0).await, Instant::now()) })
    }

    /// Every read through process `on` shows version `v` (or later) and public state `n`
    /// within [`BOUND`]; how long that took.
    async fn converged(&self, on: usize, v: u64, n: u64) -> Duration {
        let t = Instant::now();
        let (mut seen_state, mut seen_public) = (Value::Null, Value::Null);
        let ok = eventually(BOUND, async || {
            seen_state = self.agents[on][0].state(&self.id, 0.0).await;
            let (st, public) = self.agents[on][1]
                .get(&format!("{AGENT}/{}/public", self.id))
                .await;
            assert_eq!(st, 200, "{public}");
            seen_public = public;
            seen_state["version"].as_u64() >= Some(v)
                && seen_state["state"]["n"] == n
                && seen_public["version"].as_u64() >= Some(v)
                && seen_public["state"]["n"] == n
        })
        .await;
        assert!(
            ok,
            "process {on} still serves an older record {BOUND:?} after version {v} \
             (state n={n}) was stored: /state {seen_state} /public {seen_public}"
        );
        t.elapsed()
    }

    /// The host's queue through process `on` holds exactly the given players' actions past
    /// `self.after`, each once.
    async fn host_sees(&self, on: usize, players: &[&str]) {
        let mut seen = Vec::new();
        let ok = eventually(BOUND, async || {
            let p = self.host[on].pending(&self.id, self.after, 0.0).await;
            seen = entries(&p)
                .iter()
                .filter_map(|e| e["playerId"].as_str().map(str::to_string))
                .collect();
            seen == players
        })
        .await;
        assert!(
            ok,
            "pending-actions through process {on}: {seen:?}, wanted {players:?}"
        );
    }
}

/// The turn moves to seat 0 through process `on`; its version.
async fn turn_to_0(g: &Game, on: usize, n: u64) -> u64 {
    g.ops(
        on,
        json!([
            { "op": "state", "state": { "n": n } },
            { "op": "legal_actions", "playerId": g.pids[0], "actions": ["x"] }
        ]),
    )
    .await
}

/// A long-poll's answer: woken with its turn, soon enough after `sent`.
fn woken_with_turn(poll: (Value, Instant), sent: Instant, what: &str) -> Value {
    let (s, at) = poll;
    assert!(
        at > sent,
        "{what}: the long-poll did not wait for the write: {s}"
    );
    assert_eq!(
        s["yourTurn"], true,
        "{what}: the long-poll ended without it: {s}"
    );
    let late = at.saturating_duration_since(sent);
    assert!(
        late < BOUND,
        "{what}: the long-poll woke {late:?} after the write"
    );
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_listener_connection_serves_no_stale_record_and_strands_no_long_poll() {
    if on_cluster() {
        return; // CLIENT KILL on the shared cluster would hit other tests' listeners.
    }
    let mut p = Pair::start().await;
    let g = Game::start(&p).await;
    // A's own write: A holds the stored record, vouched for by its listener.
    g.publish(0, 1).await;
    g.converged(0, 0, 1).await;
    let poll = g.poll_turn(0, 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(p.kill_a_listener().await > 0, "no listener of A to kill");
    // B writes at once: its wake-up is published while A has no connection to hear it.
    let sent = Instant::now();
    let v = turn_to_0(&g, 1, 2).await;
    woken_with_turn(poll.await.expect("the poll"), sent, "A's long-poll");
    g.converged(0, v, 2).await;
    g.converged(1, v, 2).await;
    // And once A listens again, later writes of B reach A's waiters by pub/sub.
    p.a_listener_back().await;
    let s = g.agents[0][0].state(&g.id, 0.0).await;
    let (st, r) = g.agents[0][0]
        .act(&g.id, json!("x"), s["turn"].as_u64().expect("a turn"))
        .await;
    assert_eq!(st, 200, "{r}");
    g.host_sees(0, &[&g.pids[0]]).await;
    g.host_sees(1, &[&g.pids[0]]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_published_while_the_listener_reconnects_are_all_seen() {
    if on_cluster() {
        return;
    }
    let mut p = Pair::start().await;
    let g = Game::start(&p).await;
    let mut n = 0;
    let mut v = 0;
    // Kill A's listener again and again, each time while it is (re)connecting, with writes
    // of both processes in between: reads through A must keep up all the same.
    for round in 0..5 {
        p.kill_a_listener().await;
        for on in [1, 0, 1] {
            n += 1;
            v = g.publish(on, n).await;
            // A read through A right after each write: served either from a record A wrote
            // itself or checked against Redis, never an older vouched one for long.
            g.converged(0, v, n).await;
        }
        if round % 2 == 1 {
            p.a_listener_back().await;
        }
    }
    g.converged(0, v, n).await;
    g.converged(1, v, n).await;
    // A long-poll on A is woken by B's write once the dust settles.
    p.a_listener_back().await;
    let poll = g.poll_turn(0, 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = Instant::now();
    n += 1;
    let v = turn_to_0(&g, 1, n).await;
    woken_with_turn(poll.await.expect("the poll"), sent, "A's long-poll");
    g.converged(0, v, n).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_pause_and_debug_sleep_hold_writes_and_reads_catch_up() {
    if on_cluster() {
        return;
    }
    let mut p = Pair::start().await;
    let g = Game::start(&p).await;
    g.publish(0, 1).await;
    for (fault, n) in [("pause", 2u64), ("sleep", 3)] {
        let poll = g.poll_turn(0, 0);
        tokio::time::sleep(Duration::from_millis(300)).await;
        match fault {
            "pause" => {
                let _: () = redis::cmd("CLIENT")
                    .arg("PAUSE")
                    .arg(1500)
                    .arg("WRITE")
                    .query_async(&mut p.admin)
                    .await
                    .expect("CLIENT PAUSE");
            }
            _ => {
                // DEBUG SLEEP blocks the connection that sends it: a connection of its own.
                let mut sleeper = admin(&p.a).await;
                tokio::spawn(async move {
                    let _: () = redis::cmd("DEBUG")
                        .arg("SLEEP")
                        .arg("1.5")
                        .query_async(&mut sleeper)
                        .await
                        .expect("DEBUG SLEEP (enable-debug-command)");
                });
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        let sent = Instant::now();
        let v = turn_to_0(&g, 1, n).await;
        woken_with_turn(poll.await.expect("the poll"), sent, fault);
        g.converged(0, v, n).await;
        g.converged(1, v, n).await;
        // Back to seat 1's turn for the next round.
        g.ops(
            0,
            json!([{ "op": "legal_actions", "playerId": g.pids[1], "actions": ["y"] }]),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_loses_no_write_and_wakes_the_long_polls() {
    if on_cluster() {
        return;
    }
    let mut p = Pair::start().await;
    let g = Game::start(&p).await;
    let v1 = g.publish(0, 1).await;
    g.converged(0, v1, 1).await;
    g.converged(1, v1, 1).await;
    let poll = g.poll_turn(0, 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A clean restart (the AOF is flushed and replayed): every connection drops.
    let redis = p.a.redis.as_mut().expect("A owns its Redis");
    tokio::task::block_in_place(|| redis.restart());
    p.admin = admin(&p.a).await;
    // B writes as soon as it can (its first tries may meet the restart).
    let sent = Instant::now();
    let mut v = None;
    let ok = eventually(BOUND, async || {
        let (st, r) = g.host[1]
            .post(
                &format!("{BRIDGE}/{}/ops", g.id),
                json!({ "ops": [
                    { "op": "state", "state": { "n": 2 } },
                    { "op": "legal_actions", "playerId": g.pids[0], "actions": ["x"] }
                ] }),
            )
            .await;
        v = r["version"].as_u64();
        st == 200
    })
    .await;
    assert!(ok, "B could not write after the restart");
    let v = v.expect("a version");
    let s = woken_with_turn(poll.await.expect("the poll"), sent, "A's long-poll");
    g.converged(0, v, 2).await;
    g.converged(1, v, 2).await;
    // The same action through both processes at once: applied exactly once.
    let turn = s["turn"].as_u64().expect("a turn");
    let (x, y) = tokio::join!(
        g.agents[0][0].act(&g.id, json!("x"), turn),
        g.agents[1][0].act(&g.id, json!("x"), turn),
    );
    assert_eq!(
        [x.0, y.0].iter().filter(|st| **st == 200).count(),
        1,
        "one of the two must win: {x:?} {y:?}"
    );
    g.host_sees(0, &[&g.pids[0]]).await;
    g.host_sees(1, &[&g.pids[0]]).await;
}

/// B's writes rebase the record (a new `ses:<id>:base`) while A, its listener killed, still
/// holds the record from before: A's write from its stale record and base loses the
/// compare-and-set, applies again on the stored one, and nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_from_a_stale_record_and_base_is_applied_once_on_the_stored_one() {
    if on_cluster() {
        return;
    }
    let mut p = Pair::start().await;
    let g = Game::start(&p).await;
    g.publish(0, 1).await;
    g.converged(0, 0, 1).await;
    assert!(p.kill_a_listener().await > 0);
    // Big states, so B's writes rebase (a delta past a third of the record).
    let big: Vec<String> = (0..200).map(|i| format!("cell-{i}")).collect();
    for n in 2..5u64 {
        g.ops(
            1,
            json!([{ "op": "state", "state": { "n": n, "board": big, "salt": n } }]),
        )
        .await;
    }
    let v = turn_to_0(&g, 1, 5).await;
    // A's agent acts at once through A: A's cached record has no turn for it yet.
    let s = g.agents[1][0].state(&g.id, 0.0).await;
    let turn = s["turn"].as_u64().expect("a turn");
    let (st, r) = g.agents[0][0].act(&g.id, json!("x"), turn).await;
    assert_eq!(
        st, 200,
        "A refused an action legal in the stored record: {r}"
    );
    g.host_sees(0, &[&g.pids[0]]).await;
    g.host_sees(1, &[&g.pids[0]]).await;
    let after = g.agents[1][1].state(&g.id, 0.0).await;
    assert!(after["version"].as_u64() >= Some(v), "{after}");
    assert_eq!(
        after["state"]["n"], 5,
        "B's state survived A's write: {after}"
    );
}

/// Many writers through both processes while A's listener is killed over and over: every
/// join lands exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joins_through_both_processes_while_a_listener_flaps_each_land_once() {
    if on_cluster() {
        return;
    }
    let mut p = Pair::start().await;
    let (host, agents) = cast(&p.a, 12).await;
    let id = host
        .create(
            json!({ "minPlayers": 2, "maxPlayers": 12, "sdkVersion": "2.0.0", "turnTimeout": 0 }),
        )
        .await;
    let mut joins = tokio::task::JoinSet::new();
    for (i, ag) in agents.iter().enumerate() {
        let ag = if i % 2 == 0 { ag.clone() } else { ag.on(&p.b) };
        let id = id.clone();
        joins.spawn(async move {
            tokio::time::sleep(Duration::from_millis(40 * i as u64)).await;
            ag.join(&id).await["seat"].as_u64().expect("a seat")
        });
    }
    for _ in 0..4 {
        p.kill_a_listener().await;
        tokio::time::sleep(Duration::from_millis(120)).await;
    }
    let mut seats = Vec::new();
    while let Some(s) = joins.join_next().await {
        seats.push(s.expect("a join"));
    }
    seats.sort_unstable();
    assert_eq!(seats, (0..12).collect::<Vec<u64>>());
    for app in [&p.a, &p.b] {
        let c = host.on(app);
        let ok = eventually(BOUND, async || {
            let (_, v) = c.get(&format!("{AGENT}/{id}/public")).await;
            v["players"].as_array().map(Vec::len) == Some(12)
        })
        .await;
        assert!(ok, "a process still shows fewer than 12 players");
    }
}

/// A process whose listener lost its connection a few times over its life (each time
/// subscribed again and listening well for a while) is woken as soon after the next drop as
/// after the first: the listener used to double its reconnect backoff on every drop and
/// never shrink it again, so from the fifth drop on every wake-up of the process waited 2 s
/// (long-polls fell back to their own 2 s re-read).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listener_reconnects_at_once_after_many_good_connections() {
    if on_cluster() {
        return;
    }
    let mut p = Pair::start().await;
    let g = Game::start(&p).await;
    for _ in 0..5 {
        assert!(p.kill_a_listener().await > 0);
        tokio::time::sleep(Duration::from_millis(50)).await;
        p.a_listener_back().await;
        // A good connection: held past the listener's `STABLE` (1 s).
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }
    let poll = g.poll_turn(0, 0);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(p.kill_a_listener().await > 0);
    let sent = Instant::now();
    let v = turn_to_0(&g, 1, 7).await;
    let (s, at) = poll.await.expect("the poll");
    assert_eq!(s["version"].as_u64(), Some(v), "{s}");
    // Woken by the reconnect's wake-up (100 ms of backoff), not by the waiter's own re-read
    // 2 s after it started (1.9 s from here) nor after a 2 s backoff.
    let late = at.saturating_duration_since(sent);
    assert!(
        late < Duration::from_millis(1500),
        "A's long-poll was woken {late:?} after the write: the listener waited long to reconnect"
    );
}

/// Redis down for a few seconds in the middle of a long-poll (a restart, a failover): the
/// poll's own re-reads meet the outage, and it still ends woken by the write made once Redis
/// is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_outlives_a_redis_outage_and_is_woken_after_it() {
    if on_cluster() {
        return;
    }
    let mut p = Pair::start().await;
    let g = Game::start(&p).await;
    let agent = g.agents[0][0].clone();
    let id = g.id.clone();
    let poll = tokio::spawn(async move {
        let r = agent.get(&format!("{AGENT}/{id}/state?wait=20")).await;
        (r, Instant::now())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let redis = p.a.redis.as_mut().expect("A owns its Redis");
    tokio::task::block_in_place(|| redis.stop());
    // Longer than a waiter's re-read interval (2 s): every waiter meets the outage.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let redis = p.a.redis.as_mut().expect("A owns its Redis");
    tokio::task::block_in_place(|| redis.start_again());
    let mut v = None;
    let sent = Instant::now();
    let ok = eventually(BOUND, async || {
        let (st, r) = g.host[1]
            .post(
                &format!("{BRIDGE}/{}/ops", g.id),
                json!({ "ops": [
                    { "op": "state", "state": { "n": 2 } },
                    { "op": "legal_actions", "playerId": g.pids[0], "actions": ["x"] }
                ] }),
            )
            .await;
        v = r["version"].as_u64();
        st == 200
    })
    .await;
    assert!(ok, "B could not write after the outage");
    let ((st, s), at) = poll.await.expect("the poll");
    assert_eq!(st, 200, "the long-poll failed on the outage: {s}");
    woken_with_turn((s, at), sent, "A's long-poll");
    g.converged(0, v.expect("a version"), 2).await;
    // A wait that ends with Redis still unreachable answers so (not a stale 200).
    let agent = g.agents[0][1].clone();
    let id = g.id.clone();
    let poll = tokio::spawn(async move {
        let t = Instant::now();
        let r = agent.get(&format!("{AGENT}/{id}/state?wait=3")).await;
        (r, t.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let redis = p.a.redis.as_mut().expect("A owns its Redis");
    tokio::task::block_in_place(|| redis.stop());
    let ((st, r), took) = poll.await.expect("the poll");
    assert_eq!(st, 503, "a wait that ended with Redis down: {r}");
    assert!(took < BOUND, "the wait outlived its limit: {took:?}");
}

/// Redis frozen (SIGSTOP: every command waits out the store's 5 s response timeout) under a
/// long-poll: the poll waits on, and a retry after its first failed read ends with the wait,
/// so it answers 503 by its limit plus one read's timeout, not later. After the freeze, the
/// next poll is woken by a write as ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_under_a_frozen_redis_answers_by_its_limit() {
    if on_cluster() {
        return;
    }
    let p = Pair::start().await;
    let g = Game::start(&p).await;
    let agent = g.agents[0][0].clone();
    let id = g.id.clone();
    let poll = tokio::spawn(async move {
        let t = Instant::now();
        let r = agent.get(&format!("{AGENT}/{id}/state?wait=9")).await;
        (r, t.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = p.a.redis.as_ref().and_then(|r| r.pid()).expect("A's Redis") as i32;
    // SAFETY: a plain signal to the test's own redis-server.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let ((st, r), took) = poll.await.expect("the poll");
    unsafe { libc::kill(pid, libc::SIGCONT) };
    assert_eq!(st, 503, "a wait that ended with Redis frozen: {r}");
    // 9 s of wait; its first re-read (2 s in) fails after 5 s; the retry ends at 9 s.
    assert!(
        took < Duration::from_millis(11_500),
        "the wait outlived its limit by a retry's timeout: {took:?}"
    );
    let poll = g.poll_turn(0, 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = Instant::now();
    let mut v = None;
    let ok = eventually(BOUND, async || {
        let (st, r) = g.host[1]
            .post(
                &format!("{BRIDGE}/{}/ops", g.id),
                json!({ "ops": [
                    { "op": "state", "state": { "n": 2 } },
                    { "op": "legal_actions", "playerId": g.pids[0], "actions": ["x"] }
                ] }),
            )
            .await;
        v = r["version"].as_u64();
        st == 200
    })
    .await;
    assert!(ok, "B could not write after the freeze");
    woken_with_turn(poll.await.expect("the poll"), sent, "A's long-poll");
    g.converged(0, v.expect("a version"), 2).await;
}
