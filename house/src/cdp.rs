//! A small Chrome DevTools Protocol client over `--remote-debugging-pipe`.
//!
//! Why a pipe and not a WebSocket: the browser reads commands on fd 3 and writes answers on
//! fd 4, so no debugging port is ever open on the machine (nothing else can drive our
//! browser), and the client needs no WebSocket or HTTP dependency: each message is one JSON
//! text followed by a NUL byte.
//!
//! One reader task owns the receiving end: answers (`id`) complete the waiting [`Browser::call`],
//! events go to whoever [`Browser::route`]d their `sessionId` (flat sessions: one per page or
//! out-of-process frame). When the browser exits, every waiting call fails with
//! [`CdpError::BrowserGone`] and every route's channel closes.

use std::collections::HashMap;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::sync::{mpsc, oneshot};

/// How long a single command may take before we call the browser stuck.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// A single protocol message larger than this is a broken browser, not a big page.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum CdpError {
    #[error("chromium could not be started ({binary}): {source}; install Debian's `chromium` package (apt-get install chromium) or set house.chromium")]
    Launch {
        binary: String,
        source: std::io::Error,
    },
    #[error("the browser is gone (it exited or closed its DevTools pipe)")]
    BrowserGone,
    #[error("DevTools call {method} timed out after {0:?}", CALL_TIMEOUT)]
    Timeout { method: String },
    #[error("DevTools call {method} failed: {message}")]
    Protocol { method: String, message: String },
}

/// One protocol event. `session_id` is `None` for browser-level events.
#[derive(Debug, Clone)]
pub struct Event {
    pub method: String,
    pub params: Value,
    pub session_id: Option<String>,
}

/// One command on the pipe.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Command<'a, P> {
    id: u64,
    method: &'a str,
    params: P,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
}

/// What to start: the binary and any extra arguments (the operator's `house.chromium_args`).
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    pub binary: PathBuf,
    pub extra_args: Vec<String>,
    /// Host names other than this one resolve to nothing (belt and braces next to the
    /// request filter: a page cannot even look up another host).
    pub only_host: Option<String>,
}

type Pending = HashMap<u64, (String, oneshot::Sender<Result<Value, CdpError>>)>;

struct Shared {
    pending: Mutex<Pending>,
    routes: Mutex<HashMap<String, mpsc::UnboundedSender<Event>>>,
    browser_events: Mutex<Option<mpsc::UnboundedSender<Event>>>,
    gone: AtomicBool,
}

/// A running headless Chromium. Dropping it kills the browser.
pub struct Browser {
    shared: Arc<Shared>,
    writer: tokio::sync::Mutex<pipe::Sender>,
    next_id: AtomicU64,
    /// [`CALL_TIMEOUT`]; shorter in this module's tests.
    call_timeout: Duration,
    child: Mutex<Option<tokio::process::Child>>,
    // The profile lives as long as the browser; deleted on drop.
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Start the browser headless with a fresh profile and the DevTools pipe.
    pub async fn launch(options: &LaunchOptions) -> Result<Browser, CdpError> {
        let launch_err = |source| CdpError::Launch {
            binary: options.binary.display().to_string(),
            source,
        };
        let profile = tempfile::Builder::new()
            .prefix("horst-house-")
            .tempdir()
            .map_err(launch_err)?;
        // to_browser: we write, the browser reads on its fd 3; from_browser: it writes fd 4.
        let (to_browser_r, to_browser_w) = make_pipe().map_err(launch_err)?;
        let (from_browser_r, from_browser_w) = make_pipe().map_err(launch_err)?;

        let mut cmd = tokio::process::Command::new(&options.binary);
        cmd.args(browser_args(options, profile.path()));
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let (r3, w4) = (raw(&to_browser_r), raw(&from_browser_w));
        // SAFETY: only async-signal-safe calls (dup2, prctl, setpgid) between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // dup2 clears close-on-exec on the new descriptors, so exactly fds 3 and 4
                // survive into the browser.
                if libc::dup2(r3, 3) < 0 || libc::dup2(w4, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // No orphaned browser if horst dies, even by SIGKILL.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Its own process group: a Ctrl-C reaches horst, which then closes the
                // tables cleanly before stopping the browser.
                libc::setpgid(0, 0);
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(launch_err)?;
        // The browser has its copies; ours must close so EOF is seen when it exits.
        drop(to_browser_r);
        drop(from_browser_w);

        let writer = pipe::Sender::from_owned_fd(to_browser_w).map_err(launch_err)?;
        let reader = pipe::Receiver::from_owned_fd(from_browser_r).map_err(launch_err)?;
        let shared = Arc::new(Shared {
            pending: Mutex::new(HashMap::new()),
            routes: Mutex::new(HashMap::new()),
            browser_events: Mutex::new(None),
            gone: AtomicBool::new(false),
        });
        tokio::spawn(read_loop(reader, shared.clone()));
        let browser = Browser {
            shared,
            writer: tokio::sync::Mutex::new(writer),
            next_id: AtomicU64::new(1),
            call_timeout: CALL_TIMEOUT,
            child: Mutex::new(Some(child)),
            _profile: profile,
        };
        // The first answer proves the pipe works (a wrong binary fails here, not later).
        browser.call(None, "Browser.getVersion", json!({})).await?;
        Ok(browser)
    }

    /// Send one command and wait for its answer.
    pub async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: impl serde::Serialize,
    ) -> Result<Value, CdpError> {
        if self.shared.gone.load(Ordering::SeqCst) {
            return Err(CdpError::BrowserGone);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let msg = Command {
            id,
            method,
            params,
            session_id: session,
        };
        let (tx, rx) = oneshot::channel();
        self.shared
            .pending
            .lock()
            .unwrap()
            .insert(id, (method.to_string(), tx));
        let mut bytes = serde_json::to_vec(&msg).map_err(|e| CdpError::Protocol {
            method: method.to_string(),
            message: format!("cannot write its params: {e}"),
        })?;
        bytes.push(0);
        // The wait for the pipe (behind other callers' writes) and the write itself are
        // bounded too: a browser that stops reading would otherwise hold every caller here
        // for good. One that takes no input for a whole call's time is treated as gone (a
        // message may be half written, so nothing more can be sent on the pipe), and the
        // house host starts a new one.
        let write = async {
            let mut w = self.writer.lock().await;
            w.write_all(&bytes).await
        };
        match tokio::time::timeout(self.call_timeout, write).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => {
                self.shared.pending.lock().unwrap().remove(&id);
                return Err(CdpError::BrowserGone);
            }
            Err(_) => {
                self.shared.gone.store(true, Ordering::SeqCst);
                self.shared.pending.lock().unwrap().remove(&id);
                tracing::error!(%method, "the browser took no DevTools input for {:?}; dropping it", self.call_timeout);
                return Err(CdpError::Timeout {
                    method: method.to_string(),
                });
            }
        }
        match tokio::time::timeout(self.call_timeout, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(CdpError::BrowserGone),
            Err(_) => {
                self.shared.pending.lock().unwrap().remove(&id);
                Err(CdpError::Timeout {
                    method: method.to_string(),
                })
            }
        }
    }

    /// Deliver the events of one session (a page or an out-of-process frame) to `tx`.
    /// Several sessions may share one channel: a table routes its frames to its own loop.
    pub fn route(&self, session_id: &str, tx: mpsc::UnboundedSender<Event>) {
        self.shared
            .routes
            .lock()
            .unwrap()
            .insert(session_id.to_string(), tx);
    }

    /// The channel a session's events go to, to route its child frames to the same place.
    pub fn route_of(&self, session_id: &str) -> Option<mpsc::UnboundedSender<Event>> {
        self.shared.routes.lock().unwrap().get(session_id).cloned()
    }

    pub fn unroute(&self, session_id: &str) {
        self.shared.routes.lock().unwrap().remove(session_id);
    }

    /// Browser-level events (no session), for example `Target.targetCrashed`.
    pub fn browser_events(&self) -> mpsc::UnboundedReceiver<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        *self.shared.browser_events.lock().unwrap() = Some(tx);
        rx
    }

    pub fn is_gone(&self) -> bool {
        self.shared.gone.load(Ordering::SeqCst)
    }

    /// Open a page and attach to it: returns (target id, session id). The page starts blank;
    /// the caller sets up its session before navigating, so no request escapes the filter.
    pub async fn new_page(&self) -> Result<(String, String), CdpError> {
        let created = self
            .call(None, "Target.createTarget", json!({ "url": "about:blank" }))
            .await?;
        let target_id = str_field(&created, "targetId", "Target.createTarget")?;
        let attached = self
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target_id, "flatten": true }),
            )
            .await?;
        let session_id = str_field(&attached, "sessionId", "Target.attachToTarget")?;
        Ok((target_id, session_id))
    }

    pub async fn close_page(&self, target_id: &str) -> Result<(), CdpError> {
        self.call(None, "Target.closeTarget", json!({ "targetId": target_id }))
            .await
            .map(|_| ())
    }

    /// Evaluate an expression in a session's page (or frame) and return its JSON value.
    pub async fn evaluate(&self, session: &str, expression: &str) -> Result<Value, CdpError> {
        let r = self
            .call(
                Some(session),
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
            )
            .await?;
        if let Some(ex) = r.get("exceptionDetails") {
            return Err(CdpError::Protocol {
                method: "Runtime.evaluate".into(),
                message: ex.to_string(),
            });
        }
        Ok(r.pointer("/result/value").cloned().unwrap_or(Value::Null))
    }

    /// Ask the browser to exit, and kill it if it has not after a few seconds.
    pub async fn close(&self) {
        let _ = tokio::time::timeout(
            Duration::from_secs(3),
            self.call(None, "Browser.close", json!({})),
        )
        .await;
        let child = self.child.lock().unwrap().take();
        if let Some(mut child) = child {
            if tokio::time::timeout(Duration::from_secs(5), child.wait())
                .await
                .is_err()
            {
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
        }
    }
}

fn str_field(v: &Value, field: &str, method: &str) -> Result<String, CdpError> {
    v.get(field)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| CdpError::Protocol {
            method: method.to_string(),
            message: format!("the answer had no {field}"),
        })
}

fn browser_args(options: &LaunchOptions, profile: &std::path::Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "--headless",
        "--remote-debugging-pipe",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-extensions",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-component-update",
        // No calls home: the house reaches only the backend.
        "--disable-background-networking",
        "--metrics-recording-only",
        "--mute-audio",
        "--disable-breakpad",
        // Every table is a background tab; without these its timers (the 10 ms ops batching,
        // the long-poll loop) would be throttled to once a second or worse.
        "--disable-background-timer-throttling",
        "--disable-renderer-backgrounding",
        "--disable-backgrounding-occluded-windows",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    if let Some(host) = &options.only_host {
        args.push(format!(
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE {host}"
        ));
    }
    // Chromium refuses to run its sandbox as root; as root (containers, CI) it must be off.
    // Under the systemd unit's own user the sandbox stays on.
    if unsafe { libc::geteuid() } == 0 && !options.extra_args.iter().any(|a| a == "--no-sandbox") {
        args.push("--no-sandbox".into());
    }
    args.extend(options.extra_args.iter().cloned());
    args.push("about:blank".into());
    args
}

fn make_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array; we own them from here on.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn raw(fd: &OwnedFd) -> i32 {
    use std::os::fd::AsRawFd;
    fd.as_raw_fd()
}

async fn read_loop(mut reader: pipe::Receiver, shared: Arc<Shared>) {
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    'outer: loop {
        let n = match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        while let Some(end) = buf.iter().position(|&b| b == 0) {
            let message: Vec<u8> = buf.drain(..=end).collect();
            dispatch(&shared, &message[..message.len() - 1]);
        }
        if buf.len() > MAX_MESSAGE_BYTES {
            tracing::error!(
                "DevTools message over {MAX_MESSAGE_BYTES} bytes; dropping the browser"
            );
            break 'outer;
        }
    }
    shared.gone.store(true, Ordering::SeqCst);
    for (_, (_, tx)) in shared.pending.lock().unwrap().drain() {
        let _ = tx.send(Err(CdpError::BrowserGone));
    }
    shared.routes.lock().unwrap().clear();
    shared.browser_events.lock().unwrap().take();
}

fn dispatch(shared: &Shared, raw: &[u8]) {
    let Ok(msg) = serde_json::from_slice::<Value>(raw) else {
        tracing::warn!("unreadable DevTools message ({} bytes)", raw.len());
        return;
    };
    if let Some(id) = msg.get("id").and_then(Value::as_u64) {
        let Some((method, tx)) = shared.pending.lock().unwrap().remove(&id) else {
            return; // timed out already
        };
        let result = match msg.get("error") {
            Some(err) => Err(CdpError::Protocol {
                method,
                message: err
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_string(),
            }),
            None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = tx.send(result);
        return;
    }
    let Some(method) = msg.get("method").and_then(Value::as_str) else {
        return;
    };
    let session_id = msg
        .get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_string);
    let event = Event {
        method: method.to_string(),
        params: msg.get("params").cloned().unwrap_or(Value::Null),
        session_id: session_id.clone(),
    };
    match session_id {
        Some(sid) => {
            let routes = shared.routes.lock().unwrap();
            if let Some(tx) = routes.get(&sid) {
                let _ = tx.send(event);
            }
        }
        None => {
            if let Some(tx) = shared.browser_events.lock().unwrap().as_ref() {
                let _ = tx.send(event);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A "browser" that answers the first command and then never reads its pipe again: a
    /// command too large for the pipe's buffer blocks its write. The call must still end
    /// within its time, and the browser count as gone (the house host then starts another).
    #[tokio::test]
    async fn a_browser_that_stops_reading_does_not_hold_callers_for_good() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("stuck-browser");
        std::fs::write(
            &fake,
            "#!/bin/bash\nread -r -d '' first <&3\nprintf '{\"id\":1,\"result\":{}}\\0' >&4\nexec sleep 600\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut browser = Browser::launch(&LaunchOptions {
            binary: fake,
            extra_args: vec![],
            only_host: None,
        })
        .await
        .unwrap();
        browser.call_timeout = Duration::from_secs(1);
        let big = "x".repeat(4 << 20);
        let first = browser.call(None, "Runtime.evaluate", json!({ "expression": big }));
        let second = browser.call(None, "Browser.getVersion", json!({}));
        let (first, second) = tokio::time::timeout(Duration::from_secs(60), async {
            tokio::join!(first, second)
        })
        .await
        .expect("both calls end within their time");
        assert!(matches!(first, Err(CdpError::Timeout { .. })), "{first:?}");
        assert!(second.is_err(), "{second:?}");
        assert!(browser.is_gone());
        assert!(matches!(
            browser.call(None, "Browser.getVersion", json!({})).await,
            Err(CdpError::BrowserGone)
        ));
    }
}
