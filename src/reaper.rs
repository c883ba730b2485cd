//! No orphans: xstack makes itself a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`), so
//! processes an agent starts in a new session or double-forks come back to it as children,
//! reaps them as they exit, and ends every remaining descendant when a session ends.

use std::time::{Duration, Instant};

/// Marks this process as a subreaper for its descendants.
pub fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// (pid, parent pid, state letter) of every process.
fn processes() -> Vec<(i32, i32, char)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // The command name is in parentheses and may hold spaces: parse after the last ')'.
            let rest = &stat[stat.rfind(')')? + 2..];
            let mut fields = rest.split_whitespace();
            let state = fields.next()?.chars().next()?;
            let ppid = fields.next()?.parse().ok()?;
            Some((pid, ppid, state))
        })
        .collect()
}

/// Every descendant of this process (children, their children, …).
pub fn descendants() -> Vec<i32> {
    let me = std::process::id() as i32;
    let all = processes();
    let mut found = Vec::new();
    let mut frontier = vec![me];
    while let Some(parent) = frontier.pop() {
        for (pid, ppid, _) in &all {
            if *ppid == parent && !found.contains(pid) {
                found.push(*pid);
                frontier.push(*pid);
            }
        }
    }
    found
}

/// Reaps exited children that are not `keep` (the PTY children whose own waiter threads
/// collect their status).
pub fn reap_orphans(keep: &[i32]) {
    let me = std::process::id() as i32;
    for (pid, ppid, state) in processes() {
        if ppid == me && state == 'Z' && !keep.contains(&pid) {
            // SAFETY: waitpid on a specific zombie child of ours.
            unsafe {
                libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
    }
}

/// Ends every descendant: SIGTERM, up to `grace` for them to go, then SIGKILL; reaps them.
pub fn end_descendants(grace: Duration) {
    let pids = descendants();
    if pids.is_empty() {
        return;
    }
    for pid in &pids {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(*pid, libc::SIGCONT);
            libc::kill(*pid, libc::SIGTERM);
        }
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline && descendants().iter().any(|p| alive(*p)) {
        reap_orphans(&[]);
        std::thread::sleep(Duration::from_millis(20));
    }
    for _ in 0..3 {
        let left = descendants();
        if left.is_empty() {
            break;
        }
        for pid in &left {
            // SAFETY: as above.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
        reap_orphans(&[]);
    }
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rfind(')').and_then(|i| s[i + 2..].chars().next()))
        .is_some_and(|state| state != 'Z')
}
