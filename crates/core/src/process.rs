//! The process as a whole: its exit statuses (SPEC's contract with scripts), when it
//! started, and how its session threads are scheduled. A leaf: every layer may use it, it
//! uses none.

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

/// The threads a tokio runtime runs its tasks on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeThreads {
    /// Two batch workers: a subcommand's session (the budgets are measured on a two-core
    /// machine, where the child that writes the log needs a core of its own, and a batch
    /// thread's wake-up does not take the core from it).
    SessionWorkers,
    /// The calling thread only: a blocking helper that runs one future to its end (a
    /// calibration run, the parity probe inside a session's blocking task).
    CallingThread,
}

/// The one place a tokio runtime is built, with its I/O and timers enabled.
pub fn runtime(threads: RuntimeThreads) -> std::io::Result<tokio::runtime::Runtime> {
    match threads {
        RuntimeThreads::SessionWorkers => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .on_thread_start(run_as_batch)
            .enable_all()
            .build(),
        RuntimeThreads::CallingThread => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    }
}

/// Marks the calling thread as a batch thread (Linux's `SCHED_BATCH`, which any thread may
/// choose): when it wakes it does not preempt a running thread, such as the experiment's
/// process writing the log xstack reads, but waits for the end of that thread's time slice
/// or for an idle core. The session's threads (the PTY readers, the runtime's workers) run
/// so; the processes they start do not ([`OrdinaryScheduling`]).
pub fn run_as_batch() {
    set_policy(libc::SCHED_BATCH);
}

/// The calling thread scheduled as an ordinary thread while this lives, then as before: a
/// child process inherits its parent thread's policy, and the experiment and the agent run
/// as they would without xstack.
pub struct OrdinaryScheduling {
    previous: libc::c_int,
}

impl OrdinaryScheduling {
    /// Schedules the calling thread as an ordinary thread until the guard drops.
    pub fn new() -> Self {
        // SAFETY: sched_getscheduler reads the calling thread's policy (0 names it).
        let previous = unsafe { libc::sched_getscheduler(0) };
        if previous != libc::SCHED_OTHER && previous >= 0 {
            set_policy(libc::SCHED_OTHER);
        }
        OrdinaryScheduling { previous }
    }
}

impl Default for OrdinaryScheduling {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for OrdinaryScheduling {
    fn drop(&mut self) {
        if self.previous != libc::SCHED_OTHER && self.previous >= 0 {
            set_policy(self.previous);
        }
    }
}

/// Sets the calling thread's scheduling policy (one without priorities); a refusal is
/// only logged, since the policy changes nothing but how soon a thread runs.
fn set_policy(policy: libc::c_int) {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param for the call; 0 names the calling thread.
    let result = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if result != 0 {
        tracing::debug!(
            "scheduling policy {policy} refused: {}",
            std::io::Error::last_os_error()
        );
    }
}
