//! `horst up` runs its worker as a child process: a kill -9 of the worker (what the kernel's
//! OOM killer does to a planner that outgrows memory) ends only the worker, which is started
//! again, while the API keeps answering; and the id of the HTTP request that admitted a job
//! follows it into the worker's logs and the job view.

use std::time::Duration;

use horst_queue::{
    Admission, JobInput, JobKind, JobSpec, JobState, Notifier, Queue, QueueSettings,
};
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::harness::{eventually, process_alive, wait_gone, HorstProcess, LEVEL_MAP, LEVEL_REPLAY};

/// A level the planner neither solves nor proves unsolvable: it searches until its limit.
const HARD: &str = "tests/it/levels/undecided.map";
const ADMIN_TOKEN: &str = "up-worker-admin-token-0123456789abcdef";

/// The pids of the worker processes `up` has started so far, in order.
fn worker_pids(up: &HorstProcess) -> Vec<u32> {
    up.stdout()
        .lines()
        .filter_map(|l| l.split("worker process started (pid ").nth(1))
        .filter_map(|rest| rest.split(')').next()?.parse().ok())
        .collect()
}

async fn queue_on(url: &str) -> (Queue, watch::Sender<bool>) {
    queue_on_with(url, |_| {}).await
}

/// A queue on `url` with the settings `adjust` makes of the defaults (its admissions take
/// their limits from them).
async fn queue_on_with(
    url: &str,
    adjust: impl FnOnce(&mut horst_config::Config),
) -> (Queue, watch::Sender<bool>) {
    let store = horst_store::Store::connect(url, "horst:").await.unwrap();
    let (stop, rx) = watch::channel(false);
    let notifier = Notifier::start(store.client().clone(), Queue::channels(&store), rx);
    let mut config = horst_config::Config::default();
    adjust(&mut config);
    let queue = Queue::new(
        store,
        QueueSettings {
            queue: config.queue.clone(),
            quotas: config.quotas.clone(),
        },
        notifier,
    );
    (queue, stop)
}

async fn admit(queue: &Queue, kind: JobKind, key: &str, input: JobInput) -> String {
    match queue
        .admit(JobSpec {
            kind,
            account: format!("acct-{key}"),
            trust: 1,
            idempotency_key: key.into(),
            input,
        })
        .await
        .unwrap()
    {
        Admission::New(job) => job.id,
        other => panic!("{other:?}"),
    }
}

/// Admits the HARD playtest under idempotency key `key` and waits until `up`'s worker runs
/// it: its job id.
async fn a_running_hard_playtest(queue: &Queue, key: &str, up: &HorstProcess) -> String {
    let map = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(HARD))
        .unwrap();
    let job = admit(queue, JobKind::Playtest, key, JobInput::playtest(map, 1)).await;
    let running = eventually(Duration::from_secs(60), async || {
        queue.get(&job).await.unwrap().unwrap().state == JobState::Running
    })
    .await;
    assert!(running, "the worker never started the job: {}", up.stderr());
    job
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_is_started_again_and_the_api_keeps_answering() {
    let dir = tempfile::tempdir().unwrap();
    let mut up = HorstProcess::spawn(
        &["up", "--listen", "127.0.0.1:0", "--data", "data"],
        // A short lease: the killed worker's job is reaped within seconds.
        &[("HORST_QUEUE_LEASE_SECONDS", "2")],
        dir.path(),
    );
    let addr = up.wait_listening();
    up.wait_for_line("worker process started (pid", Duration::from_secs(60));
    let first = worker_pids(&up)[0];
    assert_ne!(first, up.child.id(), "the worker is a process of its own");
    // The default limit fits the planner runs: nothing to warn about.
    assert!(
        !up.stdout().contains("worker.memory_limit_mib is"),
        "{}",
        up.stdout()
    );

    // The private Redis of `up`, as the worker child reached it (its socket).
    let private = horst_redis_process::PrivateRedis::attach(&dir.path().join("data"))
        .expect("the private redis-server of up");
    let (queue, _stop) = queue_on(&private.url()).await;
    let job = a_running_hard_playtest(&queue, "long", &up).await;
    let started = queue.get(&job).await.unwrap().unwrap().started_at_ms;
    // The worker running it is the one started last (the first, should up have replaced it
    // while the machine was slow, is gone: killing it would miss the job).
    let before = worker_pids(&up);
    let running = *before.last().unwrap();

    // What the OOM killer does to a planner beyond its memory.
    unsafe {
        libc::kill(running as i32, libc::SIGKILL);
    }
    let http = reqwest::Client::new();
    let healthz = format!("http://{addr}/healthz");
    let mut answered = 0;
    let restarted = eventually(Duration::from_secs(60), async || {
        let r = http.get(&healthz).send().await.expect("the API answers");
        assert_eq!(r.status(), 200, "the API keeps answering");
        answered += 1;
        worker_pids(&up).len() > before.len()
    })
    .await;
    assert!(
        restarted,
        "the worker was not started again: {}",
        up.stdout()
    );
    assert!(answered >= 1);
    assert!(up.child.try_wait().unwrap().is_none(), "up itself is alive");
    let second = worker_pids(&up)[before.len()];
    assert_ne!(second, running);
    assert!(!process_alive(running));

    // The killed worker's job ends `cancelled` (its charge kept) and is not run again.
    let reaped = eventually(Duration::from_secs(60), async || {
        queue.get(&job).await.unwrap().unwrap().state.is_final()
    })
    .await;
    assert!(reaped, "the killed worker's job never ended");
    let record = queue.get(&job).await.unwrap().unwrap();
    assert_eq!(
        record.state,
        JobState::Failed,
        "{record:?}\nworkers started: {before:?}, killed {running}\n{}",
        up.stderr()
    );
    assert_eq!(record.failure.as_ref().unwrap().code, "cancelled");
    // Ended by up as soon as its worker died, with the cause (not a lease later as "its lease
    // expired").
    let message = &record.failure.as_ref().unwrap().message;
    assert!(
        message.contains("the worker process running this job ended (signal: 9"),
        "{message}"
    );
    assert_eq!(record.started_at_ms, started, "never started again");
    assert!(record.charged_seconds > 0, "started work stays charged");
    assert!(
        up.stderr()
            .contains("the dead worker process's running jobs ended `cancelled`"),
        "{}",
        up.stderr()
    );

    // The new worker takes the next job and finishes it.
    let next = admit(
        &queue,
        JobKind::Simulate,
        "next",
        JobInput::simulate(
            LEVEL_MAP,
            serde_json::from_str::<Value>(LEVEL_REPLAY).unwrap(),
        ),
    )
    .await;
    let done = queue.wait(&next, Duration::from_secs(60)).await.unwrap();
    assert_eq!(done.state, JobState::Succeeded, "{done:?}");
    // A slot is `<host>-<pid>-<tag>-<n>/<slot>` (`WorkerIdentity::new`).
    assert_eq!(
        done.worker
            .as_deref()
            .and_then(|w| w.split('-').nth_back(2)),
        Some(second.to_string().as_str()),
        "run by the new worker process"
    );
    // The child's job metrics show on up's /metrics, as when the worker ran inside it.
    let metrics = format!("http://{addr}/metrics");
    let forwarded = eventually(Duration::from_secs(30), async || {
        let text = http
            .get(&metrics)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        text.contains("horst_job_wait_seconds_count{kind=\"simulate\"} 1")
            && text.contains("horst_job_duration_seconds_count{")
            && text.matches("# TYPE horst_job_wait_seconds ").count() == 1
            && text.ends_with("# EOF\n")
    })
    .await;
    assert!(
        forwarded,
        "the worker's job metrics are not on up's /metrics"
    );

    // A worker child that dies takes nothing off up's counters: what it counted stays (the
    // count fell back to 0 when its successor started, a counter reset of a process that
    // never restarted).
    unsafe {
        libc::kill(second as i32, libc::SIGKILL);
    }
    let third_started = eventually(Duration::from_secs(60), async || {
        worker_pids(&up).len() >= 3
    })
    .await;
    assert!(
        third_started,
        "the worker was not started again: {}",
        up.stdout()
    );
    let third = worker_pids(&up)[2];
    // Long enough for up to scrape the new child (every 2 s) a few times.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let text = http
        .get(&metrics)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains("horst_job_wait_seconds_count{kind=\"simulate\"} 1\n"),
        "the dead worker's count was lost:\n{text}"
    );

    // SIGTERM ends both: the worker first, then up (and its Redis).
    up.signal(libc::SIGTERM);
    let status = up.wait_exit(Duration::from_secs(60)).expect("up exits");
    assert!(status.success(), "{}", up.stderr());
    assert!(!process_alive(third), "the worker outlived up");
}

/// Ctrl-C in the terminal `up` runs in goes to the whole foreground process group. The
/// worker child, in that group too, took the SIGINT as its own first signal and `up`'s
/// SIGTERM as its second, which stops a worker at once: its running job was lost (left
/// `running`, reaped later). It leads a group of its own now, and `up` alone tells it to
/// stop: the running job finishes and is recorded before everything ends.
/// `up`'s worker stopped from outside while it runs nothing (a SIGTERM not sent by up: it
/// finishes its jobs, here none, and exits 0): up starts it again and its log says nothing
/// was lost. Before, the death's line said "its running job ends `cancelled`" whether or not
/// a job ran, and an operator reading it looked for a lost job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_ends_while_idle_is_started_again_and_up_says_nothing_was_lost() {
    let dir = tempfile::tempdir().unwrap();
    let mut up = HorstProcess::spawn(
        &["up", "--listen", "127.0.0.1:0", "--data", "data"],
        &[],
        dir.path(),
    );
    up.wait_listening();
    up.wait_for_line("worker process started (pid", Duration::from_secs(60));
    let first = worker_pids(&up)[0];
    unsafe {
        libc::kill(first as i32, libc::SIGTERM);
    }
    let restarted = eventually(Duration::from_secs(60), async || {
        worker_pids(&up).len() >= 2 && up.stderr().contains("nothing was lost")
    })
    .await;
    assert!(restarted, "{}\n{}", up.stdout(), up.stderr());
    let log = up.stderr();
    assert!(
        log.contains("the dead worker process was running no job: nothing was lost")
            && !log.contains("running job ends"),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_in_the_terminal_lets_the_worker_finish_its_running_job() {
    // A store that outlives `up`, to read the job after the stop.
    let redis = horst_testkit::RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let mut up = HorstProcess::spawn_in_own_group(
        &["up", "--listen", "127.0.0.1:0", "--redis", &redis.url()],
        &[("HORST_QUEUE_PLAYTEST_SECONDS", "4")],
        dir.path(),
    );
    up.wait_listening();
    up.wait_for_line("worker process started (pid", Duration::from_secs(60));
    let (queue, _stop) = queue_on(&redis.url()).await;
    let job = a_running_hard_playtest(&queue, "ctrl-c", &up).await;

    up.signal_group(libc::SIGINT);
    let status = up.wait_exit(Duration::from_secs(90)).expect("up exits");
    assert!(status.success(), "{status}: {}", up.stderr());
    assert!(
        !up.stderr().contains("stopped at once"),
        "the worker took up's stop for a second signal: {}",
        up.stderr()
    );
    let record = queue.get(&job).await.unwrap().unwrap();
    assert!(
        record.state.is_final(),
        "the running job was lost at the stop: {record:?}"
    );
    assert_ne!(
        record.failure.as_ref().map(|f| f.code.as_str()),
        Some("cancelled"),
        "{record:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_id_follows_a_job_into_the_worker_s_logs_and_the_job_view() {
    let redis = horst_testkit::RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let mut up = HorstProcess::spawn(
        &["up", "--listen", "127.0.0.1:0", "--redis", &redis.url()],
        &[
            ("HORST_GATEWAY_MODE", "on"),
            ("HORST_GATEWAY_ADMIN_TOKEN", ADMIN_TOKEN),
            ("HORST_LOG_FORMAT", "json"),
        ],
        dir.path(),
    );
    let addr = up.wait_listening();
    up.wait_for_line("worker process started (pid", Duration::from_secs(60));
    let store = horst_store::Store::connect(&redis.url(), "horst:")
        .await
        .unwrap();
    horst_identity::accounts::create_account(&store, "rita", 1)
        .await
        .unwrap();
    let key = horst_identity::accounts::create_key(&store, "rita", None)
        .await
        .unwrap()
        .key;

    let http = reqwest::Client::new();
    let call = |request_id: Option<&'static str>, idem: &'static str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "simulate_replay",
            "arguments": {"map": LEVEL_MAP, "replay": serde_json::from_str::<Value>(LEVEL_REPLAY).unwrap(), "idempotencyKey": idem},
        }});
        let mut req = http
            .post(format!("http://{addr}/api/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("authorization", format!("Bearer {key}"))
            .body(body.to_string());
        if let Some(id) = request_id {
            req = req.header("x-request-id", id);
        }
        req.send()
    };
    let r = call(Some("it-req-42"), "sim-1").await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["x-request-id"],
        "it-req-42",
        "the id is answered"
    );
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["result"]["isError"], false, "{body}");
    let job_id = body["result"]["structuredContent"]["jobId"]
        .as_str()
        .expect("a job id")
        .to_string();

    // The job view shows the request that admitted the job.
    let view: Value = http
        .get(format!("http://{addr}/api/admin/jobs/{job_id}"))
        .header("authorization", format!("Bearer {ADMIN_TOKEN}"))
        .header("x-operator", "olga")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(view["requestId"], "it-req-42", "{view}");

    // Admission (in the API process) and the run (in the worker process) log it.
    let logged = |message: &str| {
        up.stderr().lines().any(|l| {
            let Ok(v) = serde_json::from_str::<Value>(l) else {
                return false;
            };
            v["message"] == message
                && v["job"].as_str().or(v["span"]["job"].as_str()) == Some(job_id.as_str())
                && (v["request_id"] == "it-req-42" || v["span"]["request_id"] == "it-req-42")
        })
    };
    let all_logged = eventually(Duration::from_secs(10), async || {
        logged("job admitted") && logged("job started") && logged("job finished")
    })
    .await;
    assert!(
        all_logged,
        "admission, start and end of job {job_id} with its request id:\n{}",
        up.stderr()
    );

    // Without an id (or with one that is not a plain token) the API makes one.
    for sent in [None, Some("not a token <b>")] {
        let r = call(sent, "sim-2").await.unwrap();
        let made = r.headers()["x-request-id"].to_str().unwrap().to_string();
        assert!(made.starts_with("req_") && made.len() > 8, "{made}");
    }
    up.signal(libc::SIGTERM);
    assert!(up
        .wait_exit(Duration::from_secs(60))
        .expect("up exits")
        .success());
}

/// A 512 x 128 level with ledges on every fifth row and 256 moving entities, whose nest lies
/// behind a pit no jump clears (a corridor's ceiling): the planner's states are large and
/// many, so its search grows to hundreds of MiB within seconds. Entities are placed by a
/// fixed pseudo-random sequence.
pub(crate) fn a_huge_level() -> String {
    const W: usize = 512;
    const H: usize = 128;
    let mut g = vec![vec![b'.'; W]; H];
    g[H - 1].fill(b'E');
    g[H - 2].fill(b'G');
    g[0].fill(b'#');
    for row in g.iter_mut() {
        row[0] = b'#';
        row[W - 1] = b'#';
    }
    for y in (8..H - 6).step_by(5) {
        for x in (3..W - 40).step_by(7) {
            for k in 0..3 {
                g[y][x + k] = if (x / 7) % 2 == 1 { b'~' } else { b'-' };
            }
        }
    }
    for row in g.iter_mut().take(H - 4).skip(1) {
        for cell in row.iter_mut().take(W - 1).skip(W - 31) {
            *cell = b'#';
        }
    }
    g[H - 2][W - 12..W - 5].fill(b'^');
    let mut entities = vec![
        format!("start 2 {}", H - 3),
        format!("nest {} {}", W - 3, H - 3),
    ];
    let mut state: u64 = 1;
    let mut used = std::collections::HashSet::new();
    let kinds: [(&str, usize, [usize; 4], &str); 5] = [
        ("walker", 60, [15, W - 60, H - 3, H - 2], " range=10"),
        ("flyer", 60, [12, W - 60, 12, H - 12], " axis=h range=8"),
        ("rockfall", 32, [5, W - 60, 1, 2], ""),
        ("platform", 64, [5, W - 60, 20, H - 5], " dx=10 dy=-10"),
        ("spring", 40, [3, W - 60, H - 3, H - 2], " strength=12"),
    ];
    for (kind, n, [x0, x1, y0, y1], extra) in kinds {
        for _ in 0..n {
            let mut next = |lo: usize, hi: usize| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                lo + ((state >> 33) as usize) % (hi - lo)
            };
            let (x, y) = loop {
                let p = (next(x0, x1), next(y0, y1));
                if g[p.1][p.0] == b'.' && used.insert(p) {
                    break p;
                }
            };
            entities.push(format!("{kind} {x} {y}{extra}"));
        }
    }
    let mut map = format!("gcv-map 1\nname: gross\nsize: {W} {H}\ngrid:\n");
    for row in &g {
        map.push_str(std::str::from_utf8(row).unwrap());
        map.push('\n');
    }
    map.push_str("entities:\n");
    map.push_str(&entities.join("\n"));
    map.push('\n');
    map
}

/// `up`'s worker runs two playtests; one, on a huge level, grows the process past
/// `worker.memory_limit_mib`, and up kills it. Each caller is told what happened to its own
/// job: the huge level's that its level needs less memory, the other's that another job was
/// the cause. Both were told their level needed less: the small level's agent was sent to
/// simplify a level that was never the cause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_over_memory_blames_only_the_job_that_grew_it() {
    let huge = a_huge_level();
    let report = horst_engine::validate_map(&huge);
    assert!(report.valid, "{:?}", report.errors);
    let redis = horst_testkit::RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    // Playtests of up to 60 s: the huge search reaches the limit long before its end, and the
    // small one still runs then.
    let mut up = HorstProcess::spawn(
        &["up", "--listen", "127.0.0.1:0", "--redis", &redis.url()],
        &[
            ("HORST_WORKER_SLOTS", "2"),
            ("HORST_WORKER_MEMORY_LIMIT_MIB", "400"),
            ("HORST_QUEUE_PLAYTEST_SECONDS", "60"),
            ("HORST_QUEUE_WAIT_SECONDS", "120"),
        ],
        dir.path(),
    );
    let addr = up.wait_listening();
    up.wait_for_line("worker process started (pid", Duration::from_secs(60));
    // Said at the start: 400 MiB is less than two 512 MiB planner runs may use. (The limit
    // leaves the huge search a few progress reports before it is reached: the blame goes by
    // the memory last reported.)
    assert!(
        up.stdout().contains(
            "warning: worker.memory_limit_mib is 400 MiB, below what the worker's planner runs may use (128 MiB + 2 slot(s) x worker.job_memory_mib 512 MiB = 1152 MiB)"
        ) && up.stdout().contains("lower worker.job_memory_mib to 136 MiB"),
        "{}",
        up.stdout()
    );
    let (queue, _stop) = queue_on_with(&redis.url(), |c| {
        c.queue.playtest_seconds = 60;
        c.queue.wait_seconds = 120;
    })
    .await;
    let small = a_running_hard_playtest(&queue, "small", &up).await;
    let big = admit(
        &queue,
        JobKind::Playtest,
        "huge",
        JobInput::playtest(huge, 1),
    )
    .await;
    let ended = eventually(Duration::from_secs(120), async || {
        queue.get(&big).await.unwrap().unwrap().state.is_final()
            && queue.get(&small).await.unwrap().unwrap().state.is_final()
    })
    .await;
    assert!(ended, "the jobs did not end: {}", up.stderr());
    assert!(
        up.stderr()
            .contains("more memory than worker.memory_limit_mib"),
        "the worker was not killed over its memory: {}",
        up.stderr()
    );
    let message = |id: &str| {
        let queue = queue.clone();
        let id = id.to_string();
        async move {
            let r = queue.get(&id).await.unwrap().unwrap();
            assert_eq!(r.state, JobState::Failed, "{r:?}");
            r.failure.unwrap().message
        }
    };
    let huge_told = message(&big).await;
    assert!(
        huge_told.contains("used more memory than the server allows")
            && huge_told.contains("a smaller or simpler level"),
        "{huge_told}"
    );
    let small_told = message(&small).await;
    assert!(
        small_told.contains("another job in the same worker process")
            && !small_told.contains("a smaller or simpler level"),
        "{small_told}"
    );
    // The kill and restart show on up's /metrics (a log line alone before), by cause.
    let metrics = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("horst_worker_process_restarts_total{cause=\"memory_limit\"} 1\n")
            && metrics.contains("horst_worker_process_restarts_total{cause=\"exited\"} 0\n"),
        "{metrics}"
    );
    up.signal(libc::SIGTERM);
    up.wait_exit(Duration::from_secs(60)).expect("up exits");
}

/// When its worker child dies, `up` ends that process's running jobs at once. It found them
/// by `<host>-<pid>-`, which another worker process has too when it runs under the same
/// hostname with the same pid: containers with the host's network (and so its hostname)
/// start their processes with the same small pids, and two `horst up` on one Redis number
/// their children alike. Such a process's running job was failed as "the worker process
/// running this job ended" while it ran on. `up` now names its child's ids in full
/// (`<host>-<pid>-<tag>-`, the tag given to the child), and ends only those.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_worker_child_ends_only_its_own_jobs_not_a_namesake_s() {
    let dir = tempfile::tempdir().unwrap();
    let mut up = HorstProcess::spawn(
        &["up", "--listen", "127.0.0.1:0", "--data", "data"],
        // Long leases: nothing here is reaped; only up ends jobs.
        &[("HORST_QUEUE_LEASE_SECONDS", "120")],
        dir.path(),
    );
    up.wait_listening();
    up.wait_for_line("worker process started (pid", Duration::from_secs(60));
    let child = worker_pids(&up)[0];
    let private = horst_redis_process::PrivateRedis::attach(&dir.path().join("data"))
        .expect("the private redis-server of up");
    let (queue, _stop) = queue_on(&private.url()).await;
    // The child's general slot runs one long playtest; a second waits for a general slot.
    let own = a_running_hard_playtest(&queue, "own", &up).await;
    let map = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(HARD))
        .unwrap();
    let theirs = admit(
        &queue,
        JobKind::Playtest,
        "theirs",
        JobInput::playtest(map, 1),
    )
    .await;
    // Another process with the same hostname and pid (its own tag) claims it.
    let namesake = format!("{}ffffff-0/0", horst_worker::process_prefix(child));
    let claim = queue
        .claim(&namesake)
        .await
        .unwrap()
        .expect("the waiting playtest");
    assert_eq!(claim.record.id, theirs);

    unsafe {
        libc::kill(child as i32, libc::SIGKILL);
    }
    let ended = eventually(Duration::from_secs(60), async || {
        queue.get(&own).await.unwrap().unwrap().state.is_final()
    })
    .await;
    assert!(
        ended,
        "up did not end its dead child's job: {}",
        up.stderr()
    );
    let record = queue.get(&own).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Failed, "{record:?}");
    // The namesake's job runs on, and its worker records the outcome.
    let record = queue.get(&theirs).await.unwrap().unwrap();
    assert_eq!(record.state, JobState::Running, "{record:?}");
    assert_eq!(record.worker.as_deref(), Some(namesake.as_str()));
    assert!(
        queue.heartbeat(&theirs, claim.token).await.unwrap(),
        "the namesake's lease was taken"
    );

    up.signal(libc::SIGTERM);
    up.wait_exit(Duration::from_secs(60)).expect("up exits");
}

/// The worker child's log (its stderr) reaches `up`'s stderr marked as the child's: before,
/// it was passed through as it was, and an operator reading up's terminal or journal took a
/// worker's error for up's own. In text a `worker: ` before the line; with `log.format =
/// "json"` the child's JSON event whole, with `"process":"worker"`.
#[test]
fn the_worker_childs_log_lines_on_ups_stderr_say_they_are_the_childs() {
    let child_line = |up: &HorstProcess| {
        let err = up.stderr();
        err.lines()
            .find(|l| l.contains("worker started") && !l.contains("worker process started"))
            .map(str::to_string)
    };
    for json in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let format = if json { "json" } else { "human" };
        let mut up = HorstProcess::spawn(
            &["up", "--listen", "127.0.0.1:0", "--data", "data"],
            &[("HORST_LOG_FORMAT", format)],
            dir.path(),
        );
        up.wait_listening();
        let start = std::time::Instant::now();
        while child_line(&up).is_none() && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(100));
        }
        up.signal(libc::SIGTERM);
        assert!(up.wait_exit(Duration::from_secs(30)).is_some());
        let line = child_line(&up).unwrap_or_else(|| {
            panic!("the child's \"worker started\" never came: {}", up.stderr())
        });
        if json {
            let event: Value = serde_json::from_str(&line).expect("a JSON event");
            assert_eq!(event["process"], "worker", "{line}");
            assert!(
                event["message"]
                    .as_str()
                    .unwrap()
                    .contains("worker started"),
                "{line}"
            );
            assert!(
                event.get("worker").is_some(),
                "the child's fields are kept: {line}"
            );
        } else {
            assert!(
                line.starts_with("worker: "),
                "not marked as the child's: {line}"
            );
        }
    }
}

/// A `horst worker` started with `env`, its stdout and stderr pipes to this test, through
/// `sh -c script` (`$0` the binary, `$@` the worker's arguments): once it printed its metrics
/// address, both pipes' read ends are closed here, as they are when the `horst up` that reads
/// them dies. Answers the shell, and the worker's pid (the script prints `worker <pid>` when
/// it is not the worker itself).
fn a_worker_whose_pipes_are_gone(
    script: &str,
    redis_url: &str,
    data: &std::path::Path,
    env: &[(&str, &str)],
) -> (std::process::Child, u32) {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_horst"))
        .args(["worker", "--redis", redis_url, "--data"])
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("HORST_WORKER_METRICS_LISTEN", "127.0.0.1:0");
    for (k, _) in std::env::vars() {
        if k.starts_with("HORST_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut sh = cmd.spawn().expect("spawn sh");
    let out = sh.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads until the worker runs, then drops the read end of its stdout.
    std::thread::spawn(move || {
        let mut pid = None;
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if let Some(p) = line.strip_prefix("worker ") {
                pid = p.trim().parse::<u32>().ok();
            }
            if line.contains("metrics on http://") {
                let _ = tx.send(pid);
                return;
            }
        }
    });
    let pid = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the worker never printed its metrics address")
        .unwrap_or(sh.id());
    drop(sh.stderr.take());
    (sh, pid)
}

/// SIGKILLs `pid` when dropped (a worker a failed test left behind).
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        unsafe {
            libc::kill(self.0 as i32, libc::SIGKILL);
        }
    }
}

/// A worker whose log pipe is broken (what its stderr is once the `horst up` relaying it
/// died) stops on SIGTERM. Before, every log line it wrote panicked the task that wrote it
/// (tracing-subscriber reports a failed write with `eprintln!`, which panics on the broken
/// pipe): the signal task died logging "shutting down" before it started the shutdown, and
/// the worker ignored every SIGTERM after, a second one too (found as an orphaned worker
/// child left by the test suite, 2026-12-08).
#[test]
fn a_worker_whose_log_pipe_is_broken_still_stops_on_sigterm() {
    let redis = horst_testkit::RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (mut worker, pid) =
        a_worker_whose_pipes_are_gone("exec \"$0\" \"$@\"", &redis.url(), dir.path(), &[]);
    let _guard = KillOnDrop(pid);
    // A line or two written into the broken pipe before the signal.
    std::thread::sleep(Duration::from_millis(500));
    unsafe {
        libc::kill(pid as i32, libc::SIGTERM);
    }
    let start = std::time::Instant::now();
    let mut status = None;
    while status.is_none() && start.elapsed() < Duration::from_secs(60) {
        status = worker.try_wait().unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = status.expect("the worker ignored SIGTERM with its log pipe broken");
    assert!(status.success(), "{status}");
}

/// `horst up`'s worker child stops by itself once up is gone, whatever became of up's
/// parent-death signal (PR_SET_PDEATHSIG is tied to the thread that forked, not the
/// process; it is lost when up dies between the fork and the `prctl`, and an exec of a binary
/// with file capabilities clears it). Here up is a shell that sets none, killed -9, with the
/// worker's pipes to it broken as they are when up dies. Before, the worker ran on forever
/// with no parent.
#[test]
fn a_worker_child_whose_up_is_gone_stops_by_itself() {
    let redis = horst_testkit::RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (mut up, pid) = a_worker_whose_pipes_are_gone(
        "\"$0\" \"$@\" & echo \"worker $!\"; wait",
        &redis.url(),
        dir.path(),
        &[(horst_worker::PROCESS_TAG_ENV, "0a0b0c")],
    );
    let _guard = KillOnDrop(pid);
    assert_ne!(pid, up.id(), "the worker is the shell's child");
    assert!(process_alive(pid));
    up.kill().unwrap();
    up.wait().unwrap();
    assert!(
        wait_gone(pid, Duration::from_secs(60)),
        "the worker child {pid} outlived its up by 60 s"
    );
}
