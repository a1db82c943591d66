//! `spawn_app` (the API in-process on a random port) and `HorstProcess` (the real binary).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use horst_testkit::RedisServer;
use tokio::sync::watch;

/// The API running in this process against its own Redis.
#[allow(dead_code)] // fields used by later test modules
pub struct TestApp {
    pub addr: SocketAddr,
    /// The Redis this app owns (`None` for an app started beside another one).
    pub redis: Option<RedisServer>,
    pub redis_url: String,
    pub rcadia: horst_rcadia::Rcadia,
    pub auth: horst_identity::auth::Auth,
    pub http: reqwest::Client,
    pub health: horst_store::Health,
    pub store: horst_store::Store,
    pub config: Arc<horst_config::Config>,
    pub queue: horst_queue::Queue,
    /// The composition root this app was built with (workers are started from it).
    pub app: horst::App,
    shutdown: watch::Sender<bool>,
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
    }
}

/// Starts the API on 127.0.0.1:0 with a fresh Redis, probing it every 100 ms.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// Like `spawn_app`, with the configuration adjusted first (gateway mode, limits, ...).
///
/// With `HORST_TEST_REDIS=cluster` the app runs on the test binary's shared Redis Cluster
/// (`RedisCluster::shared`) under a key prefix of its own instead: `ops/test` runs the job,
/// gateway and session tests that way too (a test that needs its own server's process,
/// `app.redis()`, cannot).
pub async fn spawn_app_with(adjust: impl FnOnce(&mut horst_config::Config)) -> TestApp {
    let mut config = horst_config::Config::default();
    // Test workers use one planner thread: CI has 2 cores for everything.
    config.worker.threads = 1;
    adjust(&mut config);
    if on_cluster() {
        return spawn_app_on_cluster(config).await;
    }
    let redis = RedisServer::start();
    config.redis.url = redis.url();
    let parts = start_api(Arc::new(config)).await;
    TestApp::from_parts(Some(redis), parts)
}

/// Like `spawn_app_with`, on a Redis the test started itself (with options of its own,
/// e.g. `enable-debug-command`).
#[allow(dead_code)] // used by some test modules only
pub async fn spawn_app_on(
    redis: RedisServer,
    adjust: impl FnOnce(&mut horst_config::Config),
) -> TestApp {
    let mut config = horst_config::Config::default();
    config.worker.threads = 1;
    adjust(&mut config);
    config.redis.url = redis.url();
    let parts = start_api(Arc::new(config)).await;
    TestApp::from_parts(Some(redis), parts)
}

/// Whether this run's apps use the shared Redis Cluster (`HORST_TEST_REDIS=cluster`).
pub fn on_cluster() -> bool {
    std::env::var("HORST_TEST_REDIS").is_ok_and(|v| v == "cluster")
}

/// The app on the Redis Cluster of `config.redis.cluster` (empty: the shared one) with a
/// fresh key prefix.
pub async fn spawn_app_on_cluster(mut config: horst_config::Config) -> TestApp {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    if config.redis.cluster.is_empty() {
        let cluster = tokio::task::spawn_blocking(horst_testkit::RedisCluster::shared)
            .await
            .expect("the shared cluster");
        config.redis.cluster = cluster.urls();
    }
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    config.redis.url = String::new();
    config.redis.key_prefix = format!("t{}-{n}:", std::process::id());
    let parts = start_api(Arc::new(config)).await;
    assert!(parts.store.hash_tags(), "the app runs on the cluster");
    TestApp::from_parts(None, parts)
}

/// Another API process (in this test process) on the same Redis as `other`: nothing is
/// shared but Redis.
pub async fn spawn_app_beside(
    other: &TestApp,
    adjust: impl FnOnce(&mut horst_config::Config),
) -> TestApp {
    let mut config = horst_config::Config::default();
    adjust(&mut config);
    config.redis.url = other.redis_url.clone();
    config.redis.cluster = other.config.redis.cluster.clone();
    config.redis.key_prefix = other.config.redis.key_prefix.clone();
    let parts = start_api(Arc::new(config)).await;
    TestApp::from_parts(None, parts)
}

struct Parts {
    addr: SocketAddr,
    config: Arc<horst_config::Config>,
    health: horst_store::Health,
    store: horst_store::Store,
    queue: horst_queue::Queue,
    rcadia: horst_rcadia::Rcadia,
    auth: horst_identity::auth::Auth,
    redis_url: String,
    app: horst::App,
    shutdown: watch::Sender<bool>,
}

impl TestApp {
    fn from_parts(redis: Option<RedisServer>, p: Parts) -> TestApp {
        TestApp {
            addr: p.addr,
            redis,
            http: reqwest::Client::new(),
            health: p.health,
            store: p.store,
            queue: p.queue,
            config: p.config,
            rcadia: p.rcadia,
            auth: p.auth,
            redis_url: p.redis_url,
            app: p.app,
            shutdown: p.shutdown,
        }
    }

    /// The Redis this app owns (panics for an app started beside another one).
    pub fn redis(&self) -> &RedisServer {
        self.redis
            .as_ref()
            .expect("this app does not own its Redis")
    }

    pub fn redis_mut(&mut self) -> &mut RedisServer {
        self.redis
            .as_mut()
            .expect("this app does not own its Redis")
    }

    /// Stops this API (its long-polls end, its clock firer stops), as if the process died.
    pub fn stop(&self) {
        let _ = self.shutdown.send(true);
    }
}

async fn start_api(config: Arc<horst_config::Config>) -> Parts {
    let url = config.redis.url.clone();
    let (tx, rx) = watch::channel(false);
    // The same composition root as `horst api`; only the probe is faster.
    let app = horst::App::build(config.clone(), &url, rx)
        .await
        .expect("build horst against the test redis")
        .with_probe_interval(Duration::from_millis(100))
        .with_server_check_interval(Duration::from_millis(500));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(app.clone().run(horst::Roles::API, Some(listener)));
    Parts {
        addr,
        health: app.health().clone(),
        store: app.store().clone(),
        config,
        queue: app.queue().clone(),
        rcadia: app.rcadia().clone(),
        auth: app.auth().clone(),
        app,
        redis_url: url,
        shutdown: tx,
    }
}

/// Polls `check` until it returns true or `limit` passes (generous limits: CI is slow).
pub async fn eventually(limit: Duration, mut check: impl AsyncFnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Runs async test cases side by side, each on a thread and a Tokio runtime of its own (two
/// workers, as `#[tokio::test(flavor = "multi_thread", worker_threads = 2)]` gives a test),
/// and fails naming every case that panicked. For cases that mostly wait (Redis frozen,
/// leases running out): one after another they held one of the suite's two test threads
/// for the sum of their waits. A case's panic message names its thread, which is its name.
#[macro_export]
macro_rules! side_by_side {
    ($($case:path),+ $(,)?) => {{
        let cases = vec![$((
            stringify!($case),
            std::thread::Builder::new()
                .name(stringify!($case).to_string())
                .spawn(|| {
                    tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(2)
                        .enable_all()
                        .build()
                        .expect("a Tokio runtime")
                        .block_on($case())
                })
                .expect("a thread for the case"),
        )),+];
        let failed: Vec<&str> = cases
            .into_iter()
            .filter_map(|(name, case)| case.join().is_err().then_some(name))
            .collect();
        assert!(failed.is_empty(), "failed (their panics are above): {failed:?}");
    }};
}

async fn a_case_that_passes() {
    tokio::time::sleep(Duration::from_millis(50)).await;
}

async fn a_case_that_fails() {
    tokio::time::sleep(Duration::from_millis(10)).await;
    panic!("on purpose");
}

/// A case that fails fails `side_by_side!`, which names it, after the others have ended.
#[test]
fn side_by_side_fails_naming_the_failing_case() {
    let started = Instant::now();
    let failed = std::panic::catch_unwind(|| {
        crate::side_by_side!(a_case_that_passes, a_case_that_fails, a_case_that_passes);
    })
    .expect_err("a failing case fails the test");
    let text = failed.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        text.contains("[\"a_case_that_fails\"]"),
        "the failing case by name: {text}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(50),
        "the others ended first"
    );
}

/// The `horst` binary as a child process, with its output captured line by line.
pub struct HorstProcess {
    pub child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
    /// How many of the two streams their reader has read to the end.
    ended: Arc<AtomicUsize>,
}

impl HorstProcess {
    pub fn spawn(args: &[&str], env: &[(&str, &str)], cwd: &Path) -> HorstProcess {
        Self::spawn_with(args, env, cwd, |_| {})
    }

    /// As [`HorstProcess::spawn`], leading a process group of its own, as a command run
    /// in a terminal does: [`HorstProcess::signal_group`] is then what Ctrl-C sends.
    pub fn spawn_in_own_group(args: &[&str], env: &[(&str, &str)], cwd: &Path) -> HorstProcess {
        use std::os::unix::process::CommandExt;
        Self::spawn_with(args, env, cwd, |cmd| {
            cmd.process_group(0);
        })
    }

    pub fn spawn_with(
        args: &[&str],
        env: &[(&str, &str)],
        cwd: &Path,
        adjust: impl FnOnce(&mut Command),
    ) -> HorstProcess {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_horst"));
        adjust(&mut cmd);
        cmd.args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A developer's own HORST_* settings must not leak into tests.
        for (k, _) in std::env::vars() {
            if k.starts_with("HORST_") {
                cmd.env_remove(k);
            }
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn horst");
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let ended = Arc::new(AtomicUsize::new(0));
        collect(child.stdout.take().unwrap(), stdout.clone(), ended.clone());
        collect(child.stderr.take().unwrap(), stderr.clone(), ended.clone());
        HorstProcess {
            child,
            stdout,
            stderr,
            ended,
        }
    }

    pub fn stdout(&self) -> String {
        self.stdout.lock().unwrap().join("\n")
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Waits for a stdout line containing `needle` and returns it.
    pub fn wait_for_line(&mut self, needle: &str, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            if let Some(line) = self
                .stdout
                .lock()
                .unwrap()
                .iter()
                .find(|l| l.contains(needle))
            {
                return line.clone();
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "horst exited ({status}) before printing {needle:?}\nstdout:\n{}\nstderr:\n{}",
                    self.stdout(),
                    self.stderr()
                );
            }
            if start.elapsed() > limit {
                panic!(
                    "horst did not print {needle:?} within {limit:?}\nstdout:\n{}\nstderr:\n{}",
                    self.stdout(),
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The address from "listening on http://ADDR" (a plain line or a JSON event's message).
    pub fn wait_listening(&mut self) -> SocketAddr {
        let line = self.wait_for_line("listening on http://", Duration::from_secs(60));
        let rest = line.rsplit("http://").next().unwrap();
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || ".:[]".contains(c)))
            .unwrap_or(rest.len());
        rest[..end].parse().unwrap()
    }

    pub fn signal(&self, sig: i32) {
        unsafe {
            libc::kill(self.child.id() as i32, sig);
        }
    }

    /// `sig` to every process of the group this one leads
    /// ([`HorstProcess::spawn_in_own_group`]): what a terminal's Ctrl-C does.
    pub fn signal_group(&self, sig: i32) {
        unsafe {
            libc::kill(-(self.child.id() as i32), sig);
        }
    }

    /// Waits for the exit; `None` if it did not exit within `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Ok(Some(status)) = self.child.try_wait() {
                // The last lines may still be in the pipes: wait for both readers to reach
                // the end (a fixed 50 ms was not enough on a loaded machine, and the error
                // a test looked for was not there yet). A child of horst's that outlives it
                // may hold a pipe open: then only for a while.
                let eof = Instant::now();
                while self.ended.load(Ordering::SeqCst) < 2
                    && eof.elapsed() < Duration::from_secs(10)
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for HorstProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn collect(
    stream: impl std::io::Read + Send + 'static,
    into: Arc<Mutex<Vec<String>>>,
    ended: Arc<AtomicUsize>,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            into.lock().unwrap().push(line);
        }
        ended.fetch_add(1, Ordering::SeqCst);
    });
}

/// True while a process with this pid exists.
pub fn process_alive(pid: u32) -> bool {
    // A zombie still "exists"; read its state to tell.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .map(|rest| rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// True once no process with this pid is alive (or it is a zombie), within `limit`.
pub fn wait_gone(pid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !process_alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The API with the gateway switched on (the default is off).
pub async fn spawn_gateway() -> TestApp {
    spawn_app_with(|c| c.gateway.mode = horst_config::GatewayMode::On).await
}

/// A level that validates and whose replay wins (from `levels/`).
pub const LEVEL_MAP: &str = include_str!("../../levels/01-erste-schritte.map");
pub const LEVEL_REPLAY: &str = include_str!("../../levels/01-erste-schritte.replay.json");

/// One HTTP answer of the MCP endpoint.
#[allow(dead_code)]
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: serde_json::Value,
    pub text: String,
}

impl TestApp {
    /// POSTs `body` (raw) to `/api/mcp` with JSON content type and extra headers.
    pub async fn mcp_raw(
        &self,
        body: impl Into<reqwest::Body>,
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut req = self
            .http
            .post(self.url("/api/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.body(body).send().await.expect("request");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
        Answer {
            status,
            headers,
            body,
            text,
        }
    }

    /// A follow-up request (with `MCP-Protocol-Version: 2025-11-25`) and optional key.
    pub async fn rpc(&self, method: &str, params: serde_json::Value, key: Option<&str>) -> Answer {
        let body = serde_json::json!({"jsonrpc":"2.0","id":7,"method":method,"params":params});
        let auth = key.map(|k| format!("Bearer {k}"));
        let mut headers = vec![("mcp-protocol-version", "2025-11-25")];
        if let Some(a) = &auth {
            headers.push(("authorization", a.as_str()));
        }
        self.mcp_raw(body.to_string(), &headers).await
    }

    /// `tools/call`; returns the answer (check `result.isError` / `structuredContent`).
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Value,
        key: Option<&str>,
    ) -> Answer {
        self.rpc(
            "tools/call",
            serde_json::json!({"name": tool, "arguments": arguments}),
            key,
        )
        .await
    }

    /// A person's account with a password (what `horst admin user create` makes).
    pub async fn person(&self, name: &str, password: &str) {
        horst_identity::people::create(
            &self.store,
            &self.auth,
            name,
            password,
            0,
            horst_identity::people::Existing::GivePassword,
        )
        .await
        .expect("create a person");
    }

    /// A fresh agent key through the operator path (an account of `trust`).
    pub async fn agent_key(&self, name: &str, trust: u8) -> String {
        horst_identity::accounts::create_account(&self.store, name, trust)
            .await
            .expect("create account");
        horst_identity::accounts::create_key(&self.store, name, None)
            .await
            .expect("create key")
            .key
    }
}

/// The structured result of a successful tool call (panics with the answer otherwise).
#[allow(dead_code)]
pub fn ok_result(a: &Answer) -> serde_json::Value {
    assert_eq!(a.status, 200, "{}", a.text);
    let r = &a.body["result"];
    assert_eq!(r["isError"], false, "{}", a.text);
    let text = r["content"][0]["text"].as_str().expect("text content");
    let parsed: serde_json::Value = serde_json::from_str(text).expect("JSON text");
    assert_eq!(
        parsed, r["structuredContent"],
        "text and structuredContent differ"
    );
    parsed
}

/// The error code of a failed tool call (panics if it did not fail as a tool error).
#[allow(dead_code)]
pub fn tool_error(a: &Answer) -> serde_json::Value {
    assert_eq!(a.status, 200, "{}", a.text);
    let r = &a.body["result"];
    assert_eq!(r["isError"], true, "{}", a.text);
    let text = r["content"][0]["text"].as_str().expect("text content");
    let parsed: serde_json::Value = serde_json::from_str(text).expect("JSON text");
    assert_eq!(parsed["ok"], false);
    assert!(
        r.get("structuredContent").is_none(),
        "failures carry no structuredContent"
    );
    parsed["error"].clone()
}

impl TestApp {
    /// Starts an in-process worker with the real engine; it stops when the sender drops.
    pub fn start_engine_worker(&self) -> watch::Sender<bool> {
        let (tx, rx) = watch::channel(false);
        tokio::spawn(self.app.worker(90, 1, rx).expect("planner pool"));
        tx
    }
}

/// The error code of a tool call's failure, or `Null` when it did not fail as a tool.
#[allow(dead_code)]
pub fn error_code(a: &Answer) -> serde_json::Value {
    if a.body["result"]["isError"] != true {
        return serde_json::Value::Null;
    }
    a.body["result"]["content"][0]["text"]
        .as_str()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .map(|v| v["error"]["code"].clone())
        .unwrap_or_default()
}

/// The parsed text of a tool result (success or failure).
#[allow(dead_code)]
pub fn result_text(a: &Answer) -> serde_json::Value {
    a.body["result"]["content"][0]["text"]
        .as_str()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default()
}
