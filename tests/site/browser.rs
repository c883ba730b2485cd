//! A real headless Chromium driven over the DevTools protocol (a websocket, through
//! `tungstenite`): pages are loaded, scripts evaluated in them, and every request, console
//! error and uncaught exception of the page recorded.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// The browser program (Debian's package).
pub const CHROMIUM: &str = "chromium";

/// One headless Chromium with one page attached.
pub struct Browser {
    child: Child,
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    /// Every event the page sent, in order.
    events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium with a fresh profile, a `width`×`height` window and its page attached.
    pub fn launch(width: u32, height: u32) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(CHROMIUM)
            .args([
                "--headless",
                // Tests run as root in a container: Chromium's sandbox needs user namespaces.
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        // Chromium says on stderr where its DevTools socket is; the rest of stderr is drained.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let url = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("chromium prints its DevTools address");
        let (socket, _) = tungstenite::connect(url.as_str()).expect("the DevTools socket opens");
        if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream
                .set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
        }
        let mut browser = Browser {
            child,
            socket,
            session: String::new(),
            next_id: 0,
            events: Vec::new(),
            _profile: profile,
        };
        let targets = browser.call("Target.getTargets", json!({}));
        let page = targets["targetInfos"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page")
            .expect("a page target")["targetId"]
            .clone();
        let attached = browser.call(
            "Target.attachToTarget",
            json!({"targetId": page, "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        for domain in ["Page", "Runtime", "Network", "Log"] {
            browser.call(&format!("{domain}.enable"), json!({}));
        }
        browser.resize(width, height);
        browser
    }

    /// Shows the page as a `width`×`height` screen (a phone's below 600 pixels wide).
    pub fn resize(&mut self, width: u32, height: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}),
        );
    }

    /// Sends one command (to the page once attached) and returns its result; events that
    /// arrive meanwhile are kept.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        match self.request(method, params) {
            Ok(result) => result,
            Err(error) => panic!("{method} failed: {error}"),
        }
    }

    /// Sends one command and returns its result, or the error chromium answered with.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        self.socket
            .send(Message::text(message.to_string()))
            .expect("the command is sent");
        loop {
            let reply = self.socket.read().expect("chromium answers");
            let Message::Text(text) = reply else {
                continue;
            };
            let value: Value = serde_json::from_str(text.as_str()).unwrap();
            if value["id"] == json!(id) {
                return match value.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(value["result"].clone()),
                };
            }
            if value.get("method").is_some() {
                self.events.push(value);
            }
        }
    }

    /// The value of `expression` in the page (promises awaited); panics on an exception.
    pub fn eval(&mut self, expression: &str) -> Value {
        match self.eval_unless_navigating(expression) {
            Some(value) => value,
            None => panic!("{expression}: the page navigated while it was evaluated"),
        }
    }

    /// The value of `expression`, or `None` when the page was between two documents (a
    /// navigation destroys the context an evaluation runs in); panics on any other error.
    fn eval_unless_navigating(&mut self, expression: &str) -> Option<Value> {
        let answer = self.request(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        let result = match answer {
            Ok(result) => result,
            Err(error) if is_navigation_error(&error) => return None,
            Err(error) => panic!("Runtime.evaluate failed: {error}"),
        };
        if let Some(exception) = result.get("exceptionDetails") {
            if is_navigation_error(exception) {
                return None;
            }
            panic!("{expression}: {exception}");
        }
        Some(result["result"]["value"].clone())
    }

    /// Runs `expression`, which may start a navigation (a link's click): the page being
    /// replaced while it runs is not an error.
    pub fn run_navigating(&mut self, expression: &str) {
        self.eval_unless_navigating(expression);
    }

    /// Picks `value` in the `<select>` whose id is `id`, as a user's choice does (its
    /// `change` event fires).
    pub fn choose(&mut self, id: &str, value: &str) {
        self.eval(&format!(
            "(() => {{ const s = document.getElementById({}); s.value = {}; \
             s.dispatchEvent(new Event('change')); }})()",
            json!(id),
            json!(value)
        ));
    }

    /// Loads the page's URL afresh from a blank page, so the view keeps only what its URL
    /// holds; that URL.
    pub fn reload_from_its_url(&mut self) -> String {
        let url = self.eval("location.href");
        let url = url.as_str().expect("location.href is a string").to_string();
        self.open("about:blank");
        self.open(&url);
        url
    }

    /// Polls `expression` until it is true, for at most `limit`; whether it became true. An
    /// evaluation that a navigation interrupted counts as not yet.
    pub fn wait_for(&mut self, expression: &str, limit: Duration) -> bool {
        xstack::poll::wait_until(limit, Duration::from_millis(50), || {
            self.eval_unless_navigating(expression) == Some(json!(true))
        })
    }

    /// Loads `url` and waits until the document has loaded.
    pub fn open(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
        let loaded = self.wait_for(
            &format!(
                "document.readyState === 'complete' && location.href === {}",
                json!(url)
            ),
            Duration::from_secs(20),
        );
        if !loaded {
            let at = self.eval("[location.href, document.readyState, document.title]");
            let finished: Vec<&Value> = self
                .events
                .iter()
                .filter(|e| {
                    e["method"] == "Network.loadingFinished"
                        || e["method"] == "Network.loadingFailed"
                })
                .map(|e| &e["params"]["requestId"])
                .collect();
            let network: Vec<String> = self
                .events
                .iter()
                .filter(|e| e["method"] == "Network.requestWillBeSent")
                .filter(|e| !finished.contains(&&e["params"]["requestId"]))
                .map(|e| e["params"]["request"]["url"].to_string())
                .collect();
            panic!("{url} did not load: the page is at {at}; {network:#?}");
        }
    }

    /// Every URL the page requested.
    pub fn requests(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .map(|e| {
                e["params"]["request"]["url"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    }

    /// Console errors, uncaught exceptions and the browser's own error log entries.
    pub fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e["method"].as_str() {
                Some("Runtime.exceptionThrown") => {
                    Some(e["params"]["exceptionDetails"].to_string())
                }
                Some("Runtime.consoleAPICalled")
                    if matches!(e["params"]["type"].as_str(), Some("error" | "assert")) =>
                {
                    Some(e["params"]["args"].to_string())
                }
                Some("Log.entryAdded") if e["params"]["entry"]["level"] == "error" => {
                    Some(e["params"]["entry"].to_string())
                }
                _ => None,
            })
            .collect()
    }

    /// Writes a PNG of the page as shown to `path`.
    pub fn screenshot(&mut self, path: &Path) {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}));
        std::fs::write(path, decode_base64(shot["data"].as_str().unwrap())).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (with padding) decoded.
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' => 62,
            b'/' => 63,
            _ => 0,
        }
    };
    let bytes: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for chunk in bytes.chunks(4) {
        let n = chunk.iter().fold(0u32, |acc, &c| (acc << 6) | value(c))
            << (6 * (4 - chunk.len() as u32));
        let pad = chunk.iter().filter(|&&c| c == b'=').count();
        let keep = chunk.len() - 1 - pad;
        out.extend(&n.to_be_bytes()[1..1 + keep]);
    }
    out
}

/// Whether Chromium starts here.
pub fn chromium_works() -> bool {
    super::common::runs_ok(CHROMIUM, &["--headless", "--no-sandbox", "--version"])
}

/// Whether chromium's error (or exception) says the page navigated away from the context an
/// evaluation ran in, which a poll retries rather than fails on.
fn is_navigation_error(error: &Value) -> bool {
    let text = error.to_string();
    [
        "Inspected target navigated or closed",
        "Execution context was destroyed",
        "Cannot find context with specified id",
    ]
    .iter()
    .any(|known| text.contains(known))
}
