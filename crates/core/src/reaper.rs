//! No orphans: xstack makes itself a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`), so
//! processes an agent starts in a new session or double-forks come back to it as children,
//! reaps them as they exit, and ends every remaining descendant when a session ends.

use std::time::Duration;

use crate::poll;

/// Marks this process as a subreaper for its descendants.
pub fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// The fields of `/proc/PID/stat` after the command name (state, parent pid, …); the name is
/// in parentheses and may hold spaces, so they start after the last `)`.
fn stat_fields(pid: i32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(stat[stat.rfind(')')? + 2..].to_string())
}

/// The state letter of process `pid` (`R`, `S`, `Z`, …).
fn state(pid: i32) -> Option<char> {
    stat_fields(pid)?.chars().next()
}

/// (pid, parent pid) of every process, from a scan of all of `/proc`: the fallback where
/// the kernel lists no children (`/proc/PID/task/TID/children` needs `CONFIG_PROC_CHILDREN`).
fn every_process() -> Vec<(i32, i32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let ppid = stat_fields(pid)?.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect()
}

/// Whether the kernel lists each thread's children (`/proc/PID/task/TID/children`, which
/// needs `CONFIG_PROC_CHILDREN`).
fn children_listed() -> bool {
    static LISTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LISTED.get_or_init(|| {
        let me = std::process::id();
        std::path::Path::new(&format!("/proc/{me}/task/{me}/children")).exists()
    })
}

/// The children of process `pid`, from the kernel's list of each of its threads'
/// children: a few small files, where a scan of `/proc` reads one per process on the
/// machine (thousands on a shared one) every tick. Empty for a process that is gone. Where
/// the kernel keeps no such list, from a scan of `/proc`, made once into `scan` and kept
/// there for the next call.
fn children_of(pid: i32, scan: &mut Option<Vec<(i32, i32)>>) -> Vec<i32> {
    if !children_listed() {
        return scan
            .get_or_insert_with(every_process)
            .iter()
            .filter(|(_, ppid)| *ppid == pid)
            .map(|(child, _)| *child)
            .collect();
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for task in tasks.filter_map(Result::ok) {
        // A thread that has just ended has no list: its children went to another.
        if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
            found.extend(
                list.split_whitespace()
                    .filter_map(|c| c.parse::<i32>().ok()),
            );
        }
    }
    found
}

/// Every descendant of this process (children, their children, …).
pub fn descendants() -> Vec<i32> {
    let mut found: Vec<i32> = Vec::new();
    let mut frontier = vec![std::process::id() as i32];
    let mut scan = None;
    while let Some(parent) = frontier.pop() {
        for pid in children_of(parent, &mut scan) {
            if !found.contains(&pid) {
                found.push(pid);
                frontier.push(pid);
            }
        }
    }
    found
}

/// This process's children.
fn children() -> Vec<i32> {
    children_of(std::process::id() as i32, &mut None)
}

/// Reaps exited children that are not `keep` (the PTY children whose own waiter threads
/// collect their status). Runs every session tick, so it reads only this process's
/// children, not every process on the machine.
pub fn reap_orphans(keep: &[i32]) {
    for pid in children() {
        if !keep.contains(&pid) && state(pid) == Some('Z') {
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
    poll::wait_until(grace, Duration::from_millis(20), || {
        reap_orphans(&[]);
        !descendants().iter().any(|p| alive(*p))
    });
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

/// Whether process `pid` exists and has not exited (a zombie has).
pub fn alive(pid: i32) -> bool {
    state(pid).is_some_and(|state| state != 'Z')
}

/// Ends one process: SIGTERM, up to `grace` for it to go, then SIGKILL.
pub fn end_process(pid: i32, grace: Duration) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    if !poll::wait_until(grace, Duration::from_millis(20), || !alive(pid)) {
        // SAFETY: as above.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;
    use std::process::{Command, Stdio};

    fn wait_for(what: &str, cond: impl FnMut() -> bool) {
        assert!(
            poll::wait_until(Duration::from_secs(10), Duration::from_millis(10), cond),
            "timed out waiting: {what}"
        );
    }

    #[test]
    #[allow(
        clippy::zombie_processes,
        reason = "the orphan's zombie is what is reaped"
    )]
    fn an_exited_child_is_reaped_unless_kept() {
        let orphan = Command::new("true").spawn().unwrap();
        let mut kept = Command::new("true").spawn().unwrap();
        let (orphan, kept_pid) = (orphan.id() as i32, kept.id() as i32);
        wait_for("both children exit", || {
            state(orphan) == Some('Z') && state(kept_pid) == Some('Z')
        });
        let now = children();
        assert!(now.contains(&orphan) && now.contains(&kept_pid), "{now:?}");
        // Other tests in this process may have children of their own: keep all but one.
        let keep: Vec<i32> = now.into_iter().filter(|pid| *pid != orphan).collect();
        reap_orphans(&keep);
        assert_eq!(state(orphan), None, "the exited child is still there");
        assert_eq!(state(kept_pid), Some('Z'), "the kept child was reaped");
        assert!(kept.wait().unwrap().success());
    }

    #[test]
    fn descendants_reach_a_grandchild() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        let found = descendants();
        assert!(found.contains(&(child.id() as i32)), "{found:?}");
        assert!(found.contains(&grandchild), "{found:?}");
        assert!(
            !children().contains(&grandchild),
            "a grandchild is not a child"
        );
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(grandchild, libc::SIGKILL);
        }
        child.wait().unwrap();
    }
}
