//! Waiting for a condition with a deadline: the one poll loop of the crate and its tests. What
//! xstack or a test waits on outside itself (a process's end, a file, a queue's state) is
//! checked every `every` until it holds or the limit passes, never slept on for a fixed time.
//! A leaf: every layer may use it, it uses none.

use std::time::{Duration, Instant};

/// Calls `found` every `every` until it gives a value or `limit` passes; it is called once
/// more at the deadline, so a condition that holds by then is seen.
pub fn poll<T>(
    limit: Duration,
    every: Duration,
    mut found: impl FnMut() -> Option<T>,
) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = found() {
            return Some(value);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        std::thread::sleep(every.min(deadline - now));
    }
}

/// Calls `cond` every `every` until it holds or `limit` passes; whether it held.
pub fn wait_until(limit: Duration, every: Duration, mut cond: impl FnMut() -> bool) -> bool {
    poll(limit, every, || cond().then_some(())).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_that_comes_true_is_seen_and_one_that_never_does_times_out() {
        let mut calls = 0;
        let found = poll(Duration::from_secs(5), Duration::from_millis(1), || {
            calls += 1;
            (calls == 3).then_some(calls)
        });
        assert_eq!(found, Some(3));
        let mut checked = 0;
        let held = wait_until(Duration::from_millis(30), Duration::from_millis(5), || {
            checked += 1;
            false
        });
        assert!(!held);
        assert!(checked >= 2, "checked {checked} times");
    }
}
