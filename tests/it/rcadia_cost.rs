//! What one RCADIA action cycle costs Redis, so the cost cannot creep back (issue 36): the
//! agent's action, the host's pending-actions read that delivers it and the host's ops that
//! apply it, driven through the session layer exactly as the routes drive it, on the test's
//! own redis-server with nothing else talking to it (no clock firer, no queue, no probes);
//! what an idle process's clock firer costs; and what a busy one pops on a cluster's 12
//! buckets (keys named as on a cluster on the test's one server, `Store::with_cluster_naming`).
//! `INFO commandstats` around the cycles counts every command, those run inside scripts
//! too; the session layer's own counter counts its round trips.
//!
//! Budget per cycle: issue 36 asked for at most 12 commands, 4 round trips and 2 KiB to and
//! from Redis; the cycle takes 10.03 commands and 3 round trips, so the test holds it to 10.5
//! and 3.25 (the margin is the session layer's clock read, one `TIME` every 2 s of a slow
//! run: `now.rs`), and to the 2 KiB. The bytes are deterministic but for a few bytes of delta (`rcadia/src/delta.rs`:
//! a write sends the record as a delta against its base, and whether two timestamps fall in
//! the same millisecond changes a delta by a byte or two).

use std::collections::BTreeMap;
use std::time::Duration;

use horst_rcadia::store::Step;
use horst_rcadia::{Rcadia, RcadiaSettings};
use horst_sessions::machine::MAX_EVENTS;
use horst_sessions::{Event, GameInfo, HostKind, NewSession, Op, Reply, Session};
use horst_testkit::RedisServer;
use serde_json::json;
use tokio::sync::watch;

const CYCLES: u64 = 40;

/// The session layer alone on `redis` (no lobby fill), until the sender is dropped.
async fn session_layer(redis: &RedisServer) -> (Rcadia, watch::Sender<bool>) {
    session_layer_named(redis, false).await
}

/// [`session_layer`], its keys named as on a cluster (12 buckets) when `cluster`.
async fn session_layer_named(redis: &RedisServer, cluster: bool) -> (Rcadia, watch::Sender<bool>) {
    let (rcadia, _, stop) = session_layer_with_notifier(redis, cluster).await;
    (rcadia, stop)
}

/// [`session_layer_named`] and its notifier.
async fn session_layer_with_notifier(
    redis: &RedisServer,
    cluster: bool,
) -> (Rcadia, horst_store::Notifier, watch::Sender<bool>) {
    let mut store = horst_store::Store::connect(&redis.url(), "cost:")
        .await
        .unwrap();
    if cluster {
        store = store.with_cluster_naming();
    }
    let (stop, stop_rx) = watch::channel(false);
    let notifier = horst_store::Notifier::start(
        store.client().clone(),
        Rcadia::channels(&store),
        stop_rx.clone(),
    );
    let mut config = horst_config::Config::default();
    config.sessions.lobby_fill_ms = 0;
    let rcadia = Rcadia::new(
        store.clone(),
        notifier.clone(),
        RcadiaSettings::from_config(&config),
        stop_rx,
    )
    .await
    .unwrap();
    (rcadia, notifier, stop)
}

/// A game without turns or clock: every cycle the agent acts and the host publishes.
fn untimed_game() -> serde_json::Value {
    json!({ "minPlayers": 2, "maxPlayers": 2, "turnBased": false,
        "sdkVersion": "2.0.0", "turnTimeout": 0 })
}

/// An idle process's clock firer looks at the delayed set when a deadline is due and
/// otherwise every 250 ms: four looks a second, each one script call (the pop returns the
/// next due time and notes the server clock beside the set, `delayed:stalls`; the clock is
/// the process's carried-forward reading). It looked every
/// 20 ms with a pop, a read and a `TIME`, about 250 commands a second per process on one
/// server and 1,250 on a cluster's 12 buckets. The budget is an upper bound, which a loaded
/// machine only undercuts.
#[tokio::test]
async fn an_idle_clock_firer_costs_redis_little() {
    let redis = RedisServer::start();
    let (rcadia, stop) = session_layer(&redis).await;
    tokio::spawn(rcadia.clone().run_clock(stop.subscribe()));
    let (commands, looks) = idle_cost(&redis, "clock firer").await;
    assert!(
        looks >= 1.0,
        "the firer stopped looking ({looks:.1} a second): a deadline of a dead process would never fire"
    );
    assert!(
        commands <= 30.0,
        "an idle clock firer sent {commands:.1} commands a second (budget 30: four looks of 6 commands)"
    );
    drop(stop);
}

/// On a cluster's 12 buckets a look of the clock firer pops only the buckets that can have
/// something due (the earliest deadline each pop returned, and the deadlines this process
/// scheduled), and every bucket only in a sweep every 250 ms. It popped every bucket on every
/// look: a busy firer (a deadline due every 10 ms in one bucket) made 12 pops a look, about
/// 1,200 a second. Counted with `ZRANGEBYSCORE`, which only the pop runs here.
#[tokio::test]
async fn a_busy_clock_firer_on_12_buckets_pops_only_the_buckets_due() {
    let redis = RedisServer::start();
    let (rcadia, stop) = session_layer_named(&redis, true).await;
    let store = rcadia.store().clone();
    assert_eq!(store.buckets(), 12, "the store is named as on a cluster");
    let delayed = horst_store::DelayedSet::new(store.clone());
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let now = rcadia.now_ms().await.unwrap();
    const ENTRIES: u64 = 200;
    let mut pipe = redis::pipe();
    for i in 0..ENTRIES {
        pipe.cmd("ZADD")
            .arg(delayed.key_in(3))
            .arg(now + 600 + i * 10)
            .arg(format!("busy{i}"))
            .ignore();
    }
    pipe.query_async::<()>(&mut conn).await.unwrap();
    tokio::spawn(rcadia.clone().run_clock(stop.subscribe()));
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    let (before, _) = counters(&mut conn).await;
    let left_before: u64 = redis::cmd("ZCARD")
        .arg(delayed.key_in(3))
        .query_async(&mut conn)
        .await
        .unwrap();
    let started = std::time::Instant::now();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let (after, _) = counters(&mut conn).await;
    let seconds = started.elapsed().as_secs_f64();
    let left_after: u64 = redis::cmd("ZCARD")
        .arg(delayed.key_in(3))
        .query_async(&mut conn)
        .await
        .unwrap();
    let delta =
        |name: &str| after.get(name).copied().unwrap_or(0) - before.get(name).copied().unwrap_or(0);
    let pops = delta("zrangebyscore");
    let fired = left_before - left_after;
    println!(
        "busy clock firer on 12 buckets: {pops} pops in {seconds:.2} s, {fired} deadlines fired, {:.1} commands a second: {after:?}",
        after
            .keys()
            .filter(|n| n.as_str() != "info")
            .map(|n| delta(n))
            .sum::<u64>() as f64
            / seconds
    );
    assert!(
        fired >= 20,
        "the firer fired only {fired} deadlines in {seconds:.2} s"
    );
    // Every bucket in each sweep (one every 250 ms, two more for the edges), and about one
    // pop a deadline fired (a look may take several; twice that for a look that finds its
    // deadline not quite due on the server's clock).
    let budget = 12 * ((seconds / 0.25).ceil() as u64 + 2) + 2 * fired + 10;
    assert!(
        pops <= budget,
        "{pops} pops for {fired} deadlines fired in {seconds:.2} s (budget {budget}): looks pop every bucket"
    );
    drop(stop);
}

/// What the clock firer costs an action on a cluster's 12 buckets (issue 36): 60 clocked
/// tables (0.5 s turns, the agent thinking 0.2 to 0.7 s, so some turns time out) driven
/// through the session layer, the firer running, on the test's own redis-server with keys
/// named as on a cluster. Counts every command an action (`INFO commandstats`, the cycle's own
/// included) and the firer's pops (`ZRANGEBYSCORE`, which only the pop runs here). A look
/// popped all 12 buckets: the firer looks at each clock that comes due, so on a cluster it
/// popped about 12 buckets an action; it pops about one now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clocked_tables_on_12_buckets_cost_the_firer_about_one_pop_an_action() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    const TABLES: u64 = 60;
    let redis = RedisServer::start();
    let (rcadia, stop) = session_layer_named(&redis, true).await;
    tokio::spawn(rcadia.clone().run_clock(stop.subscribe()));
    let config = json!({ "minPlayers": 2, "maxPlayers": 2, "turnBased": true,
        "simultaneous": false, "sdkVersion": "2.0.0", "turnTimeout": 0.5,
        "maxTurnTimeouts": 100_000 });
    let actions = Arc::new(AtomicU64::new(0));
    let running = Arc::new(AtomicBool::new(true));
    let mut tasks = tokio::task::JoinSet::new();
    for k in 0..TABLES {
        let mut t = new_table(&rcadia, config.clone()).await;
        t.try_pending().await;
        t.ops().await;
        let (actions, running) = (actions.clone(), running.clone());
        tasks.spawn(async move {
            let mut n = 0;
            while running.load(Ordering::Relaxed) {
                let think = 200 + (k * 37 + n * 101) % 500;
                tokio::time::sleep(std::time::Duration::from_millis(think)).await;
                if t.try_act(n).await {
                    actions.fetch_add(1, Ordering::Relaxed);
                }
                t.try_pending().await;
                t.ops().await;
                n += 1;
            }
        });
    }
    let mut probe = redis::Client::open(redis.url().as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let (before, _) = counters(&mut probe).await;
    let acted = actions.load(Ordering::Relaxed);
    let started = std::time::Instant::now();
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    let (after, _) = counters(&mut probe).await;
    let acted = actions.load(Ordering::Relaxed) - acted;
    let seconds = started.elapsed().as_secs_f64();
    running.store(false, Ordering::Relaxed);
    while tasks.join_next().await.is_some() {}
    let delta =
        |name: &str| after.get(name).copied().unwrap_or(0) - before.get(name).copied().unwrap_or(0);
    let commands: u64 = after
        .keys()
        .filter(|n| n.as_str() != "info")
        .map(|n| delta(n))
        .sum();
    let per = |n: u64| n as f64 / acted.max(1) as f64;
    let pops = delta("zrangebyscore");
    println!(
        "clocked tables on 12 buckets: {acted} actions in {seconds:.2} s ({:.0}/s); an action {:.2} commands, {:.2} firer pops ({:.2} commands of the firer: a pop is EVALSHA, TIME, ZRANGEBYSCORE, ZRANGE, HMGET, HSET); ZREM (deadlines fired or cancelled): {}",
        acted as f64 / seconds,
        per(commands),
        per(pops),
        per(6 * pops),
        delta("zrem"),
    );
    assert!(acted >= 20, "only {acted} actions in {seconds:.2} s");
    // The sweeps (12 pops every 250 ms) and about one pop a look, a look a clock due at
    // most: well under 12 pops an action, which popping every bucket on every look cost.
    let budget = 12.0 * (seconds / 0.25 + 2.0) / acted as f64 + 3.0;
    assert!(
        per(pops) <= budget,
        "{:.2} firer pops an action (budget {budget:.2}): looks pop every bucket",
        per(pops)
    );
    drop(stop);
}

/// A deadline handed to a process that died before firing it (popped, never applied) still
/// fires, a lease later, from any process: the pop leases the deadlines and only a stored
/// firing removes them. The pop removed them: that table waited for ever (listed as open,
/// its keys kept without an expiry), since nobody talked to it again.
#[tokio::test]
async fn a_deadline_whose_taker_died_before_firing_it_fires_a_lease_later() {
    let redis = RedisServer::start();
    let (rcadia, stop) = session_layer_named(&redis, false).await;
    let config = json!({ "minPlayers": 2, "maxPlayers": 2, "turnBased": true,
        "simultaneous": false, "sdkVersion": "2.0.0", "turnTimeout": 0.3,
        "maxTurnTimeouts": 1 });
    let mut t = new_table(&rcadia, config).await;
    t.try_pending().await;
    t.ops().await;
    // The process that dies: an hour on (every deadline of the table due: the turn clock,
    // the host's liveness, the host gone that would end it), it takes them all, and no more.
    let delayed = horst_store::DelayedSet::new(rcadia.store().clone());
    let hour: i64 = 3_600_000;
    rcadia.store().set_clock_offset_ms(hour);
    let taken = delayed.pop_due_in(&[0], 10).await.remove(0).unwrap().due;
    let kinds: Vec<&str> = taken
        .iter()
        .filter_map(|(m, _)| m.split('|').nth(2))
        .collect();
    assert!(
        kinds.contains(&"clock") && kinds.contains(&"host_gone"),
        "{taken:?}"
    );
    // This process's firer, a lease later.
    let lease = horst_store::DELAYED_LEASE.as_millis() as i64;
    rcadia.store().set_clock_offset_ms(hour + lease + 1_000);
    tokio::spawn(rcadia.clone().run_clock(stop.subscribe()));
    // Watched from outside the session layer (a read through it would catch the deadline
    // up itself): the table leaves the open set when its forfeit is stored.
    let store = rcadia.store().clone();
    let open = store.key_in_bucket(store.bucket_of(&t.id), "sessions:open");
    let started = std::time::Instant::now();
    loop {
        let listed: bool = redis::cmd("SISMEMBER")
            .arg(&open)
            .arg(&t.id)
            .query_async(&mut store.conn())
            .await
            .unwrap();
        if !listed {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the deadlines the dead process took never fired"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let s = rcadia.load(&t.id).await.unwrap();
    assert_eq!(s.status(), horst_sessions::Status::Finished);
    // Fired and acked: nothing is left in the set.
    let left: u64 = redis::cmd("ZCARD")
        .arg(delayed.key())
        .query_async(&mut rcadia.store().conn())
        .await
        .unwrap();
    assert_eq!(left, 0);
    drop(stop);
}

/// A deadline scheduled by another process (which this process's firer is not told of: it
/// died, say) still fires: the firer sweeps every bucket at least every 250 ms.
#[tokio::test]
async fn a_deadline_another_process_scheduled_on_12_buckets_fires() {
    let redis = RedisServer::start();
    let (rcadia, stop) = session_layer_named(&redis, true).await;
    tokio::spawn(rcadia.clone().run_clock(stop.subscribe()));
    // Another process: its own store, no firer.
    let other = horst_store::Store::connect(&redis.url(), "cost:")
        .await
        .unwrap()
        .with_cluster_naming();
    let delayed = horst_store::DelayedSet::new(other.clone());
    let mut conn = other.conn();
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    for bucket in [0, 7, 11] {
        let now = other.now_ms().await.unwrap();
        let _: i64 = redis::cmd("ZADD")
            .arg(delayed.key_in(bucket))
            .arg(now + 100)
            .arg(format!("elsewhere{bucket}"))
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let started = std::time::Instant::now();
    let mut left = Vec::new();
    // Fired within 250 ms of its time; the limit is for a loaded machine.
    while started.elapsed() < std::time::Duration::from_secs(5) {
        left.clear();
        for bucket in [0, 7, 11] {
            let n: u64 = redis::cmd("ZCARD")
                .arg(delayed.key_in(bucket))
                .query_async(&mut conn)
                .await
                .unwrap();
            if n > 0 {
                left.push(bucket);
            }
        }
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        left.is_empty(),
        "deadlines another process scheduled into buckets {left:?} never fired"
    );
    println!("fired after {:?} (due after 100 ms)", started.elapsed());
    drop(stop);
}

/// An idle process's rater looks for finished games when the earliest pending one is due,
/// when this process finishes a rated game, and otherwise every 2 s: one claim per bucket a
/// look. It looked every 250 ms (four claims a second per bucket; on a cluster's 12 buckets
/// 48 a second per idle process).
#[tokio::test]
async fn an_idle_rater_costs_redis_little() {
    let redis = RedisServer::start();
    let (rcadia, stop) = session_layer(&redis).await;
    tokio::spawn(rcadia.clone().run_rater(stop.subscribe(), 0));
    let (commands, looks) = idle_cost(&redis, "rater").await;
    assert!(
        looks > 0.0,
        "the rater stopped looking: a game finished by a dead process would never be rated"
    );
    assert!(
        looks <= 1.0 && commands <= 5.0,
        "an idle rater made {looks:.1} claims ({commands:.1} commands) a second (budget: 1 claim of 3 commands and the odd TIME)"
    );
    drop(stop);
}

/// What an idle background task costs the otherwise idle `redis` over 3 s (after 0.5 s to
/// settle): commands a second (INFO aside) and script calls ("looks") a second.
async fn idle_cost(redis: &RedisServer, what: &str) -> (f64, f64) {
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let (before, _) = counters(&mut conn).await;
    let started = std::time::Instant::now();
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let (after, _) = counters(&mut conn).await;
    let seconds = started.elapsed().as_secs_f64();
    let delta =
        |name: &str| after.get(name).copied().unwrap_or(0) - before.get(name).copied().unwrap_or(0);
    let commands: u64 = after
        .keys()
        .filter(|name| name.as_str() != "info")
        .map(|name| delta(name))
        .sum();
    let looks = delta("evalsha") as f64 / seconds;
    println!(
        "idle {what}: {:.1} commands a second ({looks:.1} looks): {after:?}",
        commands as f64 / seconds
    );
    (commands as f64 / seconds, looks)
}

/// Calls by command, and bytes in and out, as the server counts them.
async fn counters(
    conn: &mut redis::aio::MultiplexedConnection,
) -> (BTreeMap<String, u64>, (u64, u64)) {
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    let calls = horst_testkit::command_calls(&stats);
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(conn)
        .await
        .unwrap();
    let num = |k: &str| -> u64 {
        info.lines()
            .find_map(|l| l.strip_prefix(k)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    (
        calls,
        (num("total_net_input_bytes"), num("total_net_output_bytes")),
    )
}

/// A session of `config` on `rcadia` with both seats taken (agent0's is the table's player).
async fn new_table(rcadia: &Rcadia, config: serde_json::Value) -> Table {
    let timings = rcadia.settings().timings;
    let s = rcadia
        .create(|session_id, now| {
            Session::create(
                NewSession {
                    session_id,
                    config: config.clone(),
                    host_identity: "host".into(),
                    host_kind: HostKind::Agent,
                    game: GameInfo::default(),
                    timings,
                },
                now,
            )
        })
        .await
        .unwrap();
    let id = s.session_id().to_string();
    let mut player = String::new();
    for i in 0..2u32 {
        let a = rcadia
            .apply(&id, |_| {
                Ok(Step::main(Event::Join {
                    player_id: horst_sessions::format_player_id(i + 1),
                    identity: format!("agent{i}"),
                    as_name: None,
                }))
            })
            .await
            .unwrap();
        if let (Reply::Joined { player_id, .. }, 0) = (a.outcome.reply, i) {
            player = player_id;
        }
    }
    Table {
        rcadia: rcadia.clone(),
        id,
        player,
        after: 0,
    }
}

/// `POST /action` by agent0 on session `id`, as the route applies it; whether it was accepted.
async fn act_on(rcadia: &Rcadia, id: &str, n: u64) -> bool {
    let a = rcadia
        .apply(id, |s| {
            let player_id = s.authorize_player("agent0")?.to_string();
            Ok(Step::main(Event::Action {
                player_id,
                action: json!("go"),
                turn: None,
                action_id: format!("a_{n:016x}"),
                idempotency_key: None,
            }))
        })
        .await;
    matches!(a, Ok(a) if matches!(a.outcome.reply, Reply::ActionAccepted { .. }))
}

struct Table {
    rcadia: Rcadia,
    id: String,
    player: String,
    after: u64,
}

impl Table {
    /// `POST /action` as the route applies it.
    async fn act(&self, n: u64) {
        assert!(self.try_act(n).await, "action not accepted");
    }

    /// [`Table::act`]; whether the action was accepted (a clocked turn may have timed out).
    async fn try_act(&self, n: u64) -> bool {
        act_on(&self.rcadia, &self.id, n).await
    }

    /// `GET pending-actions?after&wait=5` finding the action queued (no wait).
    async fn pending(&mut self) {
        let entries = self.try_pending().await;
        assert!(entries > 0, "no entries");
    }

    /// [`Table::pending`]; how many entries it found.
    async fn try_pending(&mut self) -> usize {
        let after = self.after;
        let a = self
            .rcadia
            .apply(&self.id, |s| {
                s.authorize_host("host")?;
                Ok(Step::main(Event::HostPoll {
                    after: Some(after),
                    wait_ms: 5000,
                }))
            })
            .await
            .expect("pending-actions");
        let Reply::Entries { entries, .. } = a.outcome.reply else {
            panic!("no entries")
        };
        self.after = entries.iter().map(|e| e.seq).max().unwrap_or(after);
        entries.len()
    }

    /// `POST /ops` publishing the next legal actions (which applies the action).
    async fn ops(&self) {
        let ops = Op::parse_batch(&json!({ "ops": [
            { "op": "legal_actions", "playerId": self.player, "actions": ["go"] }
        ] }))
        .unwrap();
        self.rcadia
            .apply(&self.id, |s| {
                s.authorize_host("host")?;
                Ok(Step::main(Event::PublishOps {
                    ops: ops.clone(),
                    batch_id: None,
                }))
            })
            .await
            .expect("ops");
    }

    async fn cycle(&mut self, n: u64) {
        self.act(n).await;
        self.pending().await;
        self.ops().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_cycle_stays_within_its_redis_budget() {
    let redis = RedisServer::start();
    let (rcadia, _stop) = session_layer(&redis).await;
    let mut t = new_table(&rcadia, untimed_game()).await;
    // game_start, then the first legal actions; a few cycles warm up the caches.
    t.pending().await;
    t.ops().await;
    for n in 0..5 {
        t.cycle(n).await;
    }
    let mut probe = redis::Client::open(redis.url().as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    // Two reads with nothing between: what the probe's own INFO calls add to the bytes.
    let (_, b0) = counters(&mut probe).await;
    let (before, bytes_before) = counters(&mut probe).await;
    let probe_bytes = (bytes_before.0 - b0.0, bytes_before.1 - b0.1);
    let trips_before = rcadia.metrics().round_trips();
    for n in 100..100 + CYCLES {
        t.cycle(n).await;
    }
    let trips = rcadia.metrics().round_trips() - trips_before;
    let (after, bytes_after) = counters(&mut probe).await;
    let bytes_in = (bytes_after.0 - bytes_before.0).saturating_sub(probe_bytes.0);
    let bytes_out = (bytes_after.1 - bytes_before.1).saturating_sub(probe_bytes.1);
    let mut total = 0;
    let mut by = Vec::new();
    for (name, calls) in &after {
        let n = calls - before.get(name).copied().unwrap_or(0);
        if name != "info" && n > 0 {
            total += n;
            by.push(format!("{name} {:.2}", n as f64 / CYCLES as f64));
        }
    }
    let per = |x: u64| x as f64 / CYCLES as f64;
    let summary = format!(
        "per cycle: {:.2} commands ({}), {:.2} round trips, {:.0} bytes in, {:.0} bytes out",
        per(total),
        by.join(", "),
        per(trips),
        per(bytes_in),
        per(bytes_out)
    );
    println!("{summary}");
    assert!(per(total) <= 10.5, "over the command budget: {summary}");
    assert!(per(trips) <= 3.25, "over the round-trip budget: {summary}");
    assert!(
        per(bytes_in + bytes_out) <= 2048.0,
        "over the byte budget: {summary}"
    );

    // Memory of a long game: play on until the event log is full (`MAX_EVENTS`, trimmed
    // every 64 more), then what Redis holds for the session (`MEMORY USAGE`), and what the
    // same events took as JSON text, as the log stored them before: at most half.
    for n in 1000..1000 + MAX_EVENTS as u64 / 2 + 40 {
        t.cycle(n).await;
    }
    let memory = probe.clone();
    let usage = |key: String| {
        let mut conn = memory.clone();
        async move {
            let bytes: Option<u64> = redis::cmd("MEMORY")
                .arg("USAGE")
                .arg(&key)
                .arg("SAMPLES")
                .arg(0)
                .query_async(&mut conn)
                .await
                .unwrap();
            bytes.unwrap_or(0)
        }
    };
    let record_key = format!("cost:ses:{}", t.id);
    let log_key = format!("{record_key}:events");
    // The record is its delta and its base (`ses:<id>:base`).
    let record = usage(format!("{record_key}:base")).await + usage(record_key.clone()).await;
    let log = usage(log_key.clone()).await;
    let held: u64 = redis::cmd("LLEN")
        .arg(&log_key)
        .query_async(&mut probe)
        .await
        .unwrap();
    let events = rcadia.load_with_events(&t.id).await.unwrap();
    let events = events.held_events();
    assert_eq!(
        events.len(),
        MAX_EVENTS,
        "GET /events reads the whole kept log"
    );
    let mut pipe = redis::pipe();
    for e in events {
        pipe.cmd("RPUSH")
            .arg("cost:json-log")
            .arg(e.to_string())
            .ignore();
    }
    let _: () = pipe.query_async(&mut probe).await.unwrap();
    let json_log = usage("cost:json-log".into()).await * held / MAX_EVENTS as u64;
    // The replay (issue 33) holds a line per thing that happened, up to `replay::MAX_LINES`:
    // stored compact, and what the same lines took as JSON text, as it stored them before.
    let replay_key = format!("{record_key}:replay");
    let replay = usage(replay_key.clone()).await;
    let lines = rcadia.replay_lines(&t.id).await.unwrap();
    let mut pipe = redis::pipe();
    for l in &lines {
        pipe.cmd("RPUSH")
            .arg("cost:json-replay")
            .arg(serde_json::to_string(l).unwrap())
            .ignore();
    }
    let _: () = pipe.query_async(&mut probe).await.unwrap();
    let json_replay = usage("cost:json-replay".into()).await;
    println!(
        "memory of a long game: record {record} bytes, event log {log} bytes ({held} events, \
         {:.0} bytes each; as JSON text {json_log} bytes), replay {replay} bytes ({} lines, \
         {:.0} bytes each; as JSON text {json_replay} bytes); {} bytes in all (was {} with \
         both as JSON)",
        log as f64 / held as f64,
        lines.len(),
        replay as f64 / lines.len().max(1) as f64,
        record + log + replay,
        record + json_log + json_replay,
    );
    assert!(
        log * 2 <= json_log,
        "the log takes {log} bytes, its JSON {json_log}"
    );
    assert!(
        replay * 2 <= json_replay,
        "the replay takes {replay} bytes, its JSON {json_replay}"
    );
}

/// A cycle of one process with every participant long-polling (the host and both agents
/// waiting for the cycle's ops), the agent's action and the host's poll sent together, so two
/// writes are in flight at once: no record is read whole, every wake-up finds its record in
/// the process's cache. Issue 36's sessions benchmark read 0.36-0.48 records whole an action,
/// most of them wake-ups of the process's own writes that arrived once its next write was in
/// flight (the cache kept only the latest write in flight), or after its next write was
/// answered (the cache held a later record than the one named), and races lost to its own
/// writes (`horst_session_whole_reads_total` by cause; docs/benchmarks.md, seventeenth
/// round).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cycle_with_long_polls_reads_no_record_whole() {
    const CYCLES: u64 = 30;
    let redis = RedisServer::start();
    let (rcadia, _notifier, _stop) = vouched_layer(&redis).await;
    let mut t = new_table(&rcadia, untimed_game()).await;
    t.pending().await;
    t.ops().await;
    for n in 0..3 {
        t.cycle(n).await;
    }
    let before = rcadia.metrics().whole_reads();
    let published = |n: u64| move |s: &Session| s.state().get("n") == Some(&json!(n));
    for n in 100..100 + CYCLES {
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let (rcadia, id) = (rcadia.clone(), t.id.clone());
                tokio::spawn(async move {
                    rcadia
                        .wait_until(&id, Duration::from_secs(10), published(n))
                        .await
                        .unwrap()
                })
            })
            .collect();
        let act = tokio::spawn({
            let (rcadia, id) = (rcadia.clone(), t.id.clone());
            async move { act_on(&rcadia, &id, n).await }
        });
        let found = t.try_pending().await;
        assert!(act.await.unwrap(), "action not accepted");
        if found == 0 {
            // The action was stored after the poll: the host's next poll delivers it.
            t.pending().await;
        }
        let ops = Op::parse_batch(&json!({ "ops": [
            { "op": "legal_actions", "playerId": t.player, "actions": ["go"] },
            { "op": "state", "state": { "n": n } },
        ] }))
        .unwrap();
        rcadia
            .apply(&t.id, |_| {
                Ok(Step::main(Event::PublishOps {
                    ops: ops.clone(),
                    batch_id: None,
                }))
            })
            .await
            .unwrap();
        for w in waiters {
            let seen = w.await.unwrap();
            assert!(published(n)(&seen), "a long-poll missed the cycle's ops");
        }
    }
    let whole = rcadia.metrics().whole_reads() - before;
    let by: Vec<String> = [
        "wake",
        "lost_race",
        "stale",
        "recheck",
        "apply_check",
        "uncached",
    ]
    .iter()
    .map(|c| format!("{c} {}", rcadia.metrics().whole_reads_of(c)))
    .collect();
    println!(
        "{CYCLES} cycles with 3 long-polls each: {whole} records read whole ({})",
        by.join(", ")
    );
    assert_eq!(
        whole,
        0,
        "records read whole in {CYCLES} cycles of one process: {}",
        by.join(", ")
    );
}

/// A session layer on `redis` like [`session_layer`], and its notifier, subscribed.
async fn vouched_layer(
    redis: &RedisServer,
) -> (Rcadia, horst_store::Notifier, watch::Sender<bool>) {
    let layer = session_layer_with_notifier(redis, false).await;
    assert!(layer.1.ready(std::time::Duration::from_secs(10)).await);
    layer
}

/// Loads `id` on `rcadia` until the read is one the listener vouched for (its cached record
/// proved by the wake-up of this process's own write); at most 10 s.
async fn until_vouched(rcadia: &Rcadia, id: &str) {
    let started = std::time::Instant::now();
    loop {
        let before = rcadia.metrics().fresh_reads();
        rcadia.load(id).await.unwrap();
        if rcadia.metrics().fresh_reads() > before {
            return;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the listener never vouched for the record of this process's own write"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// A read of a record the process's pub/sub listener vouches for (it heard the wake-up of
/// the write that stored it, and none after) asks Redis nothing: a long-poll's first read was
/// a `GETRANGE` of the stored rev, about 2 of an action's 7 round trips in the sessions
/// benchmark. Once another process's write has been heard, the next read asks Redis and sees
/// that write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_the_listener_vouches_for_asks_redis_nothing_and_sees_other_processes_writes() {
    let redis = RedisServer::start();
    let (a, _notifier_a, _stop_a) = vouched_layer(&redis).await;
    let (b, notifier_b, _stop_b) = vouched_layer(&redis).await;
    let mut ta = new_table(&a, untimed_game()).await;
    ta.pending().await;
    ta.ops().await;
    let tb = Table {
        rcadia: b.clone(),
        id: ta.id.clone(),
        player: ta.player.clone(),
        after: 0,
    };
    // B writes (an action): its own wake-up proves its record.
    tb.act(1).await;
    until_vouched(&b, &ta.id).await;
    let trips = b.metrics().round_trips();
    let fresh = b.metrics().fresh_reads();
    let seen = b.load(&ta.id).await.unwrap().rev();
    assert_eq!(
        b.metrics().round_trips(),
        trips,
        "a vouched-for read asked Redis"
    );
    assert_eq!(b.metrics().fresh_reads(), fresh + 1);

    // A writes; once B's listener heard it (observers hear a message before its waiters are
    // woken), B's next read asks Redis and sees it.
    let mut sub = notifier_b.subscribe(&format!("cost:ses:{}", ta.id));
    ta.pending().await;
    ta.ops().await;
    let stored = a.load(&ta.id).await.unwrap().rev();
    assert!(stored > seen);
    // A wake-up carries its write's token, `<rev>.<tag>`; an earlier one (B's own last
    // write's) may still be on its way: skip it.
    let heard = async {
        loop {
            sub.changed().await;
            if sub
                .payload()
                .is_some_and(|token| token.starts_with(&format!("{stored}.")))
            {
                return;
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), heard)
        .await
        .expect("B's listener heard A's write");
    let fresh = b.metrics().fresh_reads();
    assert_eq!(
        b.load(&ta.id).await.unwrap().rev(),
        stored,
        "B served its own record after hearing a later write"
    );
    assert_eq!(b.metrics().fresh_reads(), fresh, "not vouched for any more");
}

/// Messages published while the listener's connection was down are lost, so a gap in it
/// ends every proof: after a reconnect the first read asks Redis again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gap_in_the_listener_connection_sends_reads_to_redis_again() {
    let redis = RedisServer::start();
    let (b, notifier_b, _stop_b) = vouched_layer(&redis).await;
    let mut t = new_table(&b, untimed_game()).await;
    t.pending().await;
    t.ops().await;
    t.act(1).await;
    until_vouched(&b, &t.id).await;
    // Drop the listener's connection; the waiter learns of the reconnect (a wake-up without
    // a payload), and observers learn of the gap before that.
    let mut sub = notifier_b.subscribe(&format!("cost:ses:{}", t.id));
    let mut conn = redis::Client::open(redis.url().as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("pubsub")
        .query_async(&mut conn)
        .await
        .unwrap();
    // (The wake-up of the last write may still be on its way: skip it.)
    let reconnected = async {
        loop {
            sub.changed().await;
            if sub.payload().is_none() {
                return;
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), reconnected)
        .await
        .expect("the listener reconnected");
    let (trips, fresh) = (b.metrics().round_trips(), b.metrics().fresh_reads());
    b.load(&t.id).await.unwrap();
    assert_eq!(b.metrics().fresh_reads(), fresh, "vouched for across a gap");
    assert!(b.metrics().round_trips() > trips);
    // Its next own write is vouched for again.
    t.pending().await;
    t.ops().await;
    until_vouched(&b, &t.id).await;
}

/// The value of the sample line `series` on the app's `/metrics` (0 when absent).
async fn metric(app: &crate::harness::TestApp, series: &str) -> f64 {
    let res = app.http.get(app.url("/metrics")).send().await.unwrap();
    let text = res.text().await.unwrap();
    text.lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// A host that long-polls (the usual host: its `pending-actions?wait=` open while the agent
/// thinks) costs three stored writes a cycle: the agent's action, the poll's answer that
/// delivers it and the host's ops. The poll's opening is not stored while it changes nothing
/// anybody needs before it ends (`Session::host_poll_quiet_until`); it was a fourth write a
/// cycle, with its script, its record's delta and its Redis round trip. Counted through the
/// real HTTP API as the record's `SET`s (each stored write is one, in the save script), with
/// the poll open (the long-poll gauge) before the agent acts, so it is woken by the action.
#[tokio::test]
async fn a_long_polling_hosts_cycle_is_three_writes() {
    use crate::rcadia_common::{app_with, cast, entries, max_seq, started, two_player};
    const HTTP_CYCLES: u64 = 12;
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 2).await;
    let (id, pids, mut after) = started(&host, &agents, two_player(json!({}))).await;
    let turn_to =
        |on: usize| json!([{ "op": "legal_actions", "playerId": pids[on], "actions": ["x"] }]);
    host.ops(&id, turn_to(0)).await;
    let mut probe = redis::Client::open(app.redis_url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let (before, _) = counters(&mut probe).await;
    for n in 0..HTTP_CYCLES as usize {
        let on = n % 2;
        let turn = agents[on].state(&id, 0.0).await["turn"]
            .as_u64()
            .expect("turn");
        let poll = {
            let (host, id) = (host.clone(), id.clone());
            tokio::spawn(async move { host.pending(&id, after, 20.0).await })
        };
        let open = crate::harness::eventually(Duration::from_secs(10), async || {
            metric(&app, "horst_session_long_polls_open").await >= 1.0
        })
        .await;
        assert!(open, "cycle {n}: the host's poll never opened");
        let (st, v) = agents[on].act(&id, json!("x"), turn).await;
        assert_eq!(st, 200, "cycle {n}: {v}");
        let p = poll.await.unwrap();
        assert!(
            entries(&p).iter().any(|e| e["actionId"] == v["actionId"]),
            "cycle {n}: the poll delivers the action: {p}"
        );
        after = max_seq(&p, after);
        host.ops(&id, turn_to(1 - on)).await;
    }
    let (now, _) = counters(&mut probe).await;
    let calls =
        |name: &str| now.get(name).copied().unwrap_or(0) - before.get(name).copied().unwrap_or(0);
    let sets = calls("set") as f64 / HTTP_CYCLES as f64;
    let scripts = calls("evalsha") as f64 / HTTP_CYCLES as f64;
    println!("a long-polling host's cycle: {sets:.2} record writes, {scripts:.2} scripts");
    assert!(
        sets <= 3.25,
        "{sets:.2} stored writes a cycle (three: the action, the poll's answer, the ops)"
    );
}
