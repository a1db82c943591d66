//! Headless Chromium for the end-to-end tests, driven the way the house host drives it
//! (`horst_house::cdp`, the DevTools pipe). A test page here is a plain tab: no request
//! filter and no binding, as a user's browser would be.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use horst_house::cdp::{Browser, LaunchOptions};
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// Debian's `chromium`; `./ops/test` installs it.
pub async fn launch() -> Arc<Browser> {
    let options = LaunchOptions {
        binary: "chromium".into(),
        extra_args: vec![],
        only_host: None,
    };
    match Browser::launch(&options).await {
        Ok(b) => Arc::new(b),
        Err(e) => panic!("{e}\n(the end-to-end tests need Debian's chromium: `apt-get install chromium`, which ./ops/test does)"),
    }
}

/// One tab and the DevTools sessions of its out-of-process frames (sandboxed game frames are).
pub struct Tab {
    pub browser: Arc<Browser>,
    pub target_id: String,
    pub session: String,
    frames: Arc<Mutex<Vec<String>>>,
    /// Console errors, uncaught exceptions and error log entries of the page, as text.
    pub errors: Arc<Mutex<Vec<String>>>,
}

impl Tab {
    /// Fails the test if the page logged a console error, threw, or logged an error entry.
    #[track_caller]
    pub fn assert_no_errors(&self) {
        let errors = self.errors.lock().unwrap().clone();
        assert!(errors.is_empty(), "{errors:?}");
    }

    pub async fn open(browser: &Arc<Browser>, url: &str) -> Tab {
        let (target_id, session) = browser.new_page().await.expect("new page");
        let (tx, mut rx) = mpsc::unbounded_channel();
        browser.route(&session, tx.clone());
        let frames = Arc::new(Mutex::new(Vec::new()));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let (b, f, errs) = (browser.clone(), frames.clone(), errors.clone());
        tokio::spawn(async move {
            while let Some(ev) = rx.recv().await {
                let error = match ev.method.as_str() {
                    "Runtime.exceptionThrown" => Some(ev.params["exceptionDetails"].to_string()),
                    "Runtime.consoleAPICalled" if ev.params["type"] == "error" => {
                        Some(ev.params["args"].to_string())
                    }
                    "Log.entryAdded" if ev.params["entry"]["level"] == "error" => {
                        Some(ev.params["entry"].to_string())
                    }
                    _ => None,
                };
                if let Some(e) = error {
                    errs.lock().unwrap().push(e);
                }
                if ev.method == "Target.attachedToTarget" {
                    if let Some(child) = ev.params["sessionId"].as_str() {
                        b.route(child, tx.clone());
                        f.lock().unwrap().push(child.to_string());
                        let (b, child) = (b.clone(), child.to_string());
                        tokio::spawn(async move {
                            let _ = b
                                .call(Some(&child), "Runtime.runIfWaitingForDebugger", json!({}))
                                .await;
                        });
                    }
                }
            }
        });
        browser
            .call(
                Some(&session),
                "Target.setAutoAttach",
                json!({ "autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true }),
            )
            .await
            .expect("auto-attach");
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            browser
                .call(Some(&session), domain, json!({}))
                .await
                .expect("enable a DevTools domain");
        }
        browser
            .call(Some(&session), "Page.navigate", json!({ "url": url }))
            .await
            .expect("navigate");
        Tab {
            browser: browser.clone(),
            target_id,
            session,
            frames,
            errors,
        }
    }

    pub async fn eval(&self, expr: &str) -> Value {
        self.browser
            .evaluate(&self.session, expr)
            .await
            .unwrap_or(Value::Null)
    }

    /// The first non-null value of `expr` in any of the tab's frames.
    pub async fn eval_frames(&self, expr: &str) -> Value {
        let frames = self.frames.lock().unwrap().clone();
        for f in frames {
            if let Ok(v) = self.browser.evaluate(&f, expr).await {
                if !v.is_null() {
                    return v;
                }
            }
        }
        Value::Null
    }

    /// Reports the errors of the tab's out-of-process frames into `errors` too (their console
    /// so far is replayed): the frames attached until now.
    pub async fn watch_frame_errors(&self) {
        let frames = self.frames.lock().unwrap().clone();
        for f in frames {
            for domain in ["Runtime.enable", "Log.enable"] {
                let _ = self.browser.call(Some(&f), domain, json!({})).await;
            }
        }
    }

    /// Wait until `expr` evaluates (in the page) to something truthy; panics with `what`.
    pub async fn wait_for(&self, expr: &str, what: &str, limit: Duration) -> Value {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let v = self.eval(expr).await;
            if truthy(&v) {
                return v;
            }
            if tokio::time::Instant::now() > deadline {
                panic!("timed out waiting for {what}; last value {v}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Emulates a screen of `width` x `height` CSS pixels (a phone below 600 px: touch,
    /// mobile viewport).
    /// The tab as a device's screen of `width` x `height`: a phone's or a tablet's with
    /// `touch` (touch events, a coarse pointer, a mobile viewport), else a desktop's.
    pub async fn device(&self, width: u32, height: u32, touch: bool) {
        for (method, params) in [
            (
                "Emulation.setTouchEmulationEnabled",
                json!({ "enabled": touch, "maxTouchPoints": 5 }),
            ),
            (
                "Emulation.setDeviceMetricsOverride",
                json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": touch }),
            ),
        ] {
            self.browser
                .call(Some(&self.session), method, params)
                .await
                .expect(method);
        }
    }

    pub async fn viewport(&self, width: u32, height: u32) {
        self.browser
            .call(
                Some(&self.session),
                "Emulation.setDeviceMetricsOverride",
                json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600 }),
            )
            .await
            .expect("set the viewport");
    }

    /// Goes to `url` in this tab.
    pub async fn goto(&self, url: &str) {
        self.browser
            .call(Some(&self.session), "Page.navigate", json!({ "url": url }))
            .await
            .expect("navigate");
    }

    /// A PNG of what the tab shows, written to `target/screenshots/<dir>/<name>.png` for
    /// review (never compared: a person looks at them).
    pub async fn screenshot(&self, dir: &str, name: &str) -> std::path::PathBuf {
        use base64::Engine as _;
        // Let layout settle and a frame draw first.
        self.eval(
            "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))",
        )
        .await;
        let v = self
            .browser
            .call(
                Some(&self.session),
                "Page.captureScreenshot",
                json!({ "format": "png" }),
            )
            .await
            .expect("screenshot");
        let png = base64::engine::general_purpose::STANDARD
            .decode(v["data"].as_str().unwrap_or_default())
            .expect("a base64 PNG");
        let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/screenshots")
            .join(dir);
        std::fs::create_dir_all(&out).unwrap();
        let path = out.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }

    /// The tab's renderer dies at once: no pagehide, no unload, nothing more is sent.
    pub async fn crash(&self) {
        let _ = tokio::time::timeout(
            Duration::from_secs(5),
            self.browser
                .call(Some(&self.session), "Page.crash", json!({})),
        )
        .await;
    }

    /// Closed like a user closes a tab (pagehide runs).
    pub async fn close(&self) {
        let _ = self.browser.close_page(&self.target_id).await;
    }
}

pub fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false)) && v != &json!("") && v != &json!(0)
}
