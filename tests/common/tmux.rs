//! Drives the real binary in a real tmux server (one private socket per test).

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A tmux server with one session running a command.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `command` (a shell command line) in a `width`×`height` session.
    pub fn start(command: &str, width: u16, height: u16) -> Tmux {
        let socket = format!(
            "xstack-test-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
            ])
            .args(["-x", &width.to_string(), "-y", &height.to_string()])
            .arg(command)
            .current_dir(super::root())
            .env("TERM", "xterm-256color")
            .status()
            .expect("tmux runs (scripts/setup installs it)");
        assert!(status.success(), "tmux new-session failed");
        Tmux { socket }
    }

    /// The visible screen as text.
    pub fn capture(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "t"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Sends keys (tmux key names, e.g. "n", "C-s", "Enter").
    pub fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "t"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    /// Sends raw bytes, as the terminal would (`send-keys -H`), each given in hex ("1d").
    pub fn bytes_hex(&self, bytes: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "t", "-H"])
            .args(bytes)
            .status()
            .expect("tmux send-keys -H");
        assert!(status.success());
    }

    /// Resizes the session's window.
    pub fn resize(&self, width: &str, height: &str) {
        let _ = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "resize-window",
                "-t",
                "t",
                "-x",
                width,
                "-y",
                height,
            ])
            .status();
    }

    /// Waits until the screen contains `text`; panics with the screen after `timeout`.
    pub fn wait_for(&self, text: &str, timeout: Duration) -> String {
        self.wait_until(&format!("`{text}`"), timeout, |screen| {
            screen.contains(text)
        })
    }

    /// The screen once `done(screen)` holds, or None after `timeout`.
    pub fn screen_within(&self, timeout: Duration, done: impl Fn(&str) -> bool) -> Option<String> {
        super::poll(timeout, || {
            Some(self.capture()).filter(|screen| done(screen))
        })
    }

    /// Waits until `done(screen)` holds; panics naming `what` with the screen after `timeout`.
    pub fn wait_until(&self, what: &str, timeout: Duration, done: impl Fn(&str) -> bool) -> String {
        self.screen_within(timeout, done)
            .unwrap_or_else(|| panic!("timed out waiting for {what}; screen:\n{}", self.capture()))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}
