//! A real headless browser for the view tests: Debian's Chromium (`/usr/bin/chromium`, which
//! `scripts/setup/chromium.sh` installs), driven over the DevTools protocol on a pipe
//! (`--remote-debugging-pipe`: Chromium reads commands on fd 3 and writes answers and events
//! on fd 4, each a JSON message ended by a NUL byte). No port, no websocket, no crate: a page
//! is opened from `file://`, and everything it logs or requests is recorded from the moment it
//! starts loading.
//!
//! Chromium starts as the machine notes say (headless, no sandbox as root, no GPU, QUIC or
//! background networking, a new empty profile), in a process group of its own that is killed
//! when the [`Browser`] drops. A watchdog kills it if a test hangs, so a stuck browser fails the
//! test instead of blocking the suite.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

/// Where the setup script installs Chromium.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// How long one browser may live before the watchdog kills it (a hang guard, never a
/// condition a test asserts on).
const WATCHDOG: Duration = Duration::from_secs(240);

/// A running Chromium and its DevTools pipe.
pub struct Browser {
    child: Child,
    to_browser: std::io::PipeWriter,
    from_browser: BufReader<std::io::PipeReader>,
    next_id: u64,
    /// Every event received, in order, with its `sessionId`.
    events: Vec<Value>,
    stop_watchdog: Option<mpsc::Sender<()>>,
    _profile: tempfile::TempDir,
}

/// What a page did while it loaded and what it holds.
pub struct Page<'b> {
    browser: &'b mut Browser,
    session: String,
    /// The index in the browser's events where this page's began.
    first_event: usize,
}

impl Browser {
    /// Starts Chromium. Panics, naming the setup script, when it is not installed.
    pub fn launch() -> Browser {
        assert!(
            Path::new(CHROMIUM).exists(),
            "{CHROMIUM} is missing: run `bash scripts/setup/chromium.sh` (scripts/test.sh does)"
        );
        let profile = tempfile::tempdir().expect("a profile folder");
        let (their_in, to_browser) = std::io::pipe().expect("pipe");
        let (from_browser, their_out) = std::io::pipe().expect("pipe");
        let (r, w) = (their_in.as_raw_fd(), their_out.as_raw_fd());
        let mut cmd = Command::new(CHROMIUM);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-default-apps",
            "--hide-scrollbars",
            "--mute-audio",
            "--remote-debugging-pipe",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        // Chromium keeps its singleton socket in a folder of TMPDIR that only a clean exit
        // removes: in the profile, it goes with it when the browser is killed.
        .env("TMPDIR", profile.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
        // SAFETY: only async-signal-safe calls (fcntl, dup2, close) between fork and exec. The
        // pipe ends are first copied above fd 10 (so neither can be 3 or 4 already, where dup2
        // would keep its close-on-exec flag), then onto fds 3 and 4, which exec keeps.
        unsafe {
            cmd.pre_exec(move || {
                let (r2, w2) = (
                    libc::fcntl(r, libc::F_DUPFD, 10),
                    libc::fcntl(w, libc::F_DUPFD, 10),
                );
                if r2 < 0 || w2 < 0 || libc::dup2(r2, 3) < 0 || libc::dup2(w2, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(r2);
                libc::close(w2);
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start chromium");
        // Our copies of Chromium's ends go, so its exit ends our reads.
        drop((their_in, their_out));
        let (stop, stopped) = mpsc::channel::<()>();
        let pid = child.id() as i32;
        std::thread::spawn(move || {
            if stopped.recv_timeout(WATCHDOG) == Err(mpsc::RecvTimeoutError::Timeout) {
                eprintln!("chromium still running after {WATCHDOG:?}: killed");
                // SAFETY: a plain syscall on the process group this browser leads.
                unsafe { libc::killpg(pid, libc::SIGKILL) };
            }
        });
        Browser {
            child,
            to_browser,
            from_browser: BufReader::new(from_browser),
            next_id: 0,
            events: Vec::new(),
            stop_watchdog: Some(stop),
            _profile: profile,
        }
    }

    /// Sends one command (to a page's session, or to the browser) and returns its result;
    /// events that arrive meanwhile are kept. Panics on a protocol error.
    pub fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).expect("json");
        bytes.push(0);
        self.to_browser
            .write_all(&bytes)
            .and_then(|()| self.to_browser.flush())
            .unwrap_or_else(|e| panic!("chromium's pipe closed: {e}"));
        loop {
            let message = self.read();
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    panic!("{method} failed: {error}");
                }
                return message["result"].clone();
            }
            self.events.push(message);
        }
    }

    fn read(&mut self) -> Value {
        let mut buf = Vec::new();
        let n = self
            .from_browser
            .read_until(0, &mut buf)
            .expect("read chromium's pipe");
        assert!(n > 0, "chromium closed its pipe (it exited or was killed)");
        buf.pop();
        serde_json::from_slice(&buf).expect("chromium sends JSON")
    }

    /// Waits for the event `method` of `session`, keeping every other event.
    fn wait_for(&mut self, session: &str, method: &str, from: usize) -> Value {
        if let Some(e) = self.events[from..]
            .iter()
            .find(|e| e["method"] == method && e["sessionId"] == session)
        {
            return e.clone();
        }
        loop {
            let message = self.read();
            self.events.push(message.clone());
            if message["method"] == method && message["sessionId"] == session {
                return message;
            }
        }
    }

    /// Opens `path` from `file://` in a new tab of 1280 x 900 and waits for its load event.
    /// With `bypass_csp`, the page's Content-Security-Policy is ignored, so what it would
    /// block runs: a test of the escaping alone.
    pub fn open(&mut self, path: &Path, bypass_csp: bool) -> Page<'_> {
        let url = file_url(path);
        let target = self.call(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"]
            .as_str()
            .expect("a target id")
            .to_string();
        let attached = self.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        let session = attached["sessionId"]
            .as_str()
            .expect("a session")
            .to_string();
        let s = Some(session.as_str());
        for domain in ["Page", "Runtime", "Log", "Network"] {
            self.call(s, &format!("{domain}.enable"), json!({}));
        }
        if bypass_csp {
            self.call(s, "Page.setBypassCSP", json!({"enabled": true}));
        }
        self.call(
            s,
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
        );
        let first_event = self.events.len();
        let nav = self.call(s, "Page.navigate", json!({"url": url}));
        assert!(nav.get("errorText").is_none(), "cannot open {url}: {nav}");
        self.wait_for(&session, "Page.loadEventFired", first_event);
        Page {
            browser: self,
            session,
            first_event,
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let pid = self.child.id() as i32;
        // SAFETY: a plain syscall on the process group this browser leads.
        unsafe { libc::killpg(pid, libc::SIGKILL) };
        let _ = self.child.wait();
        if let Some(stop) = self.stop_watchdog.take() {
            let _ = stop.send(());
        }
    }
}

/// The `file://` URL of a path (absolute, its bytes percent-encoded where needed).
pub fn file_url(path: &Path) -> String {
    let path = std::fs::canonicalize(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut url = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

impl Page<'_> {
    /// The value of a JavaScript expression, evaluated by DevTools in the page (which the
    /// page's own policy does not restrict).
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.browser.call(
            Some(&self.session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "`{expression}` threw: {result}"
        );
        result["result"]["value"].clone()
    }

    fn events(&self) -> impl Iterator<Item = &Value> {
        self.browser.events[self.first_event..]
            .iter()
            .filter(|e| e["sessionId"] == self.session.as_str())
    }

    /// Every console error, uncaught exception and error log entry (a policy violation is
    /// one) since the page started loading.
    pub fn errors(&self) -> Vec<String> {
        self.events()
            .filter_map(|e| {
                let p = &e["params"];
                match e["method"].as_str()? {
                    "Runtime.exceptionThrown" => Some(p["exceptionDetails"].to_string()),
                    "Runtime.consoleAPICalled"
                        if matches!(p["type"].as_str(), Some("error" | "assert")) =>
                    {
                        Some(p["args"].to_string())
                    }
                    "Log.entryAdded" if p["entry"]["level"] == "error" => {
                        Some(p["entry"]["text"].to_string())
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// The URL of every request the page made, its own document included.
    pub fn requests(&self) -> Vec<String> {
        self.events()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str().map(str::to_string))
            .collect()
    }

    /// A PNG of the top of the page, at most `max_height` pixels of it.
    pub fn screenshot(&mut self, max_height: u64) -> Vec<u8> {
        let metrics = self
            .browser
            .call(Some(&self.session), "Page.getLayoutMetrics", json!({}));
        let height = metrics["cssContentSize"]["height"]
            .as_f64()
            .unwrap_or(900.0)
            .min(max_height as f64);
        let shot = self.browser.call(
            Some(&self.session),
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true,
                   "clip": {"x": 0, "y": 0, "width": 1280, "height": height, "scale": 1}}),
        );
        base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("screenshot data"))
            .expect("base64 PNG")
    }
}

/// How much of a PNG is not its most common colour, and how many colours it has: a blank page
/// is one colour, a page with text and drawings thousands.
pub fn ink(png_bytes: &[u8]) -> (f64, usize) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let step = info.color_type.samples();
    let mut counts = std::collections::HashMap::new();
    for px in buf[..info.buffer_size()].chunks(step) {
        *counts.entry(px[..3.min(step)].to_vec()).or_insert(0usize) += 1;
    }
    let total: usize = counts.values().sum();
    let most = counts.values().copied().max().unwrap_or(0);
    (1.0 - most as f64 / total.max(1) as f64, counts.len())
}
