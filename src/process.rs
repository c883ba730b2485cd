//! The process as a whole: its exit statuses (SPEC's contract with scripts) and when it
//! started. A leaf: every layer may use it, it uses none.

/// When the process started (forced by `main` before anything else), for the first-frame log.
pub static STARTED: std::sync::LazyLock<std::time::Instant> =
    std::sync::LazyLock::new(std::time::Instant::now);

/// Exit status: the task passed.
pub const EXIT_PASS: i32 = 0;
/// Exit status: graded and failed.
pub const EXIT_FAIL: i32 = 1;
/// Exit status: bad usage or an invalid task or config.
pub const EXIT_USAGE: i32 = 2;
/// Exit status: infrastructure failure.
pub const EXIT_INFRA: i32 = 3;
