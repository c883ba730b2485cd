//! A pool of runners (`--runner` given one or more times): each verify run takes a free
//! runner for as long as it runs (a machine takes one run at a time, a scheduler any
//! number). A runner that cannot be reached is left out of the pool for
//! the rest of its life and the verify run tries another; when none is left the run fails as
//! an infrastructure failure.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use super::{Job, Launch, LocalRunner, QueueState, Runner, RunnerError, RunnerSpec};

/// How often a verify run waiting for a free runner checks whether it was cancelled.
const WAIT_POLL: Duration = Duration::from_millis(100);

/// One or more runners lent to verify runs.
#[derive(Debug)]
pub struct RunnerPool {
    slots: Vec<Slot>,
    state: Mutex<PoolState>,
    freed: Condvar,
}

#[derive(Debug)]
struct Slot {
    runner: Arc<dyn Runner>,
    /// Environment keys already prepared on this runner.
    prepared: Mutex<BTreeSet<String>>,
}

#[derive(Debug)]
struct PoolState {
    /// How many verify runs each runner has now.
    busy: Vec<usize>,
    /// Why a runner was left out, for each runner that was.
    down: Vec<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl RunnerPool {
    /// A pool of `runners`; an empty list means the local runner.
    pub fn new(runners: Vec<Arc<dyn Runner>>) -> RunnerPool {
        let runners = if runners.is_empty() {
            vec![Arc::new(LocalRunner) as Arc<dyn Runner>]
        } else {
            runners
        };
        let n = runners.len();
        RunnerPool {
            slots: runners
                .into_iter()
                .map(|runner| Slot {
                    runner,
                    prepared: Mutex::new(BTreeSet::new()),
                })
                .collect(),
            state: Mutex::new(PoolState {
                busy: vec![0; n],
                down: vec![None; n],
            }),
            freed: Condvar::new(),
        }
    }

    /// A pool of the runners of `specs` (the local runner when empty).
    pub fn from_specs(specs: &[RunnerSpec]) -> RunnerPool {
        RunnerPool::new(specs.iter().map(super::make).collect())
    }

    /// The number of runners (at least one).
    pub fn size(&self) -> usize {
        self.slots.len()
    }

    /// Whether every runner is the local one.
    pub fn is_local(&self) -> bool {
        self.slots.iter().all(|s| s.runner.spec().is_local())
    }

    /// The runners, comma-separated.
    pub fn describe(&self) -> String {
        self.slots
            .iter()
            .map(|s| s.runner.spec().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Makes sure some runner is reachable and has the job's environment: returns at once
    /// when one already has it, else prepares runners in order until one succeeds.
    pub fn prepare(
        &self,
        job: &Job,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(String),
    ) -> Result<(), RunnerError> {
        let key = crate::env::env_key(&job.packages);
        let up = |i: usize| lock(&self.state).down[i].is_none();
        if (0..self.size()).any(|i| up(i) && lock(&self.slots[i].prepared).contains(&key)) {
            return Ok(());
        }
        for i in 0..self.size() {
            if cancel.load(Ordering::Relaxed) {
                return Err(RunnerError::Cancelled);
            }
            if !up(i) {
                continue;
            }
            match self.prepare_slot(i, job, &key, cancel, progress) {
                Ok(()) => return Ok(()),
                Err(e @ RunnerError::Unreachable { .. }) => self.mark_down(i, &e, progress),
                Err(e) => return Err(e),
            }
        }
        Err(self.none_reachable())
    }

    fn prepare_slot(
        &self,
        i: usize,
        job: &Job,
        key: &str,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(String),
    ) -> Result<(), RunnerError> {
        let slot = &self.slots[i];
        let mut prepared = lock(&slot.prepared);
        if prepared.contains(key) {
            return Ok(());
        }
        slot.runner.prepare(job, cancel, progress)?;
        prepared.insert(key.to_string());
        Ok(())
    }

    /// Takes a free runner (waiting for one), makes sure it has the job's environment, and
    /// copies the verify folder there. An unreachable runner is left out and another tried.
    pub fn launch(
        self: &Arc<Self>,
        job: &Job,
        verify_dir: &Path,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(String),
    ) -> Result<Lease, RunnerError> {
        let key = crate::env::env_key(&job.packages);
        loop {
            let held = self.acquire(cancel)?;
            let i = held.index;
            let staged = self
                .prepare_slot(i, job, &key, cancel, progress)
                .and_then(|()| self.slots[i].runner.stage(job, verify_dir));
            match staged {
                Ok(launch) => {
                    return Ok(Lease {
                        held,
                        job: job.clone(),
                        launch,
                    });
                }
                Err(e @ RunnerError::Unreachable { .. }) => self.mark_down(i, &e, progress),
                Err(e) => return Err(e),
            }
            if cancel.load(Ordering::Relaxed) {
                return Err(RunnerError::Cancelled);
            }
        }
    }

    fn acquire(self: &Arc<Self>, cancel: &AtomicBool) -> Result<Held, RunnerError> {
        let mut state = lock(&self.state);
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(RunnerError::Cancelled);
            }
            let free = (0..self.size()).find(|&i| {
                state.busy[i] < self.slots[i].runner.capacity() && state.down[i].is_none()
            });
            if let Some(index) = free {
                state.busy[index] += 1;
                return Ok(Held {
                    pool: self.clone(),
                    index,
                });
            }
            if state.down.iter().all(Option::is_some) {
                drop(state);
                return Err(self.none_reachable());
            }
            state = self
                .freed
                .wait_timeout(state, WAIT_POLL)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
        }
    }

    fn mark_down(&self, i: usize, error: &RunnerError, progress: &mut dyn FnMut(String)) {
        let reason = error.to_string();
        tracing::warn!("{reason}");
        if self.size() > 1 {
            progress(format!(
                "{reason}\n(left out of the pool; trying another runner)"
            ));
        }
        lock(&self.state).down[i] = Some(reason);
        self.freed.notify_all();
    }

    fn none_reachable(&self) -> RunnerError {
        let state = lock(&self.state);
        RunnerError::NoneReachable(state.down.iter().flatten().cloned().collect())
    }

    fn release(&self, i: usize) {
        let mut state = lock(&self.state);
        state.busy[i] = state.busy[i].saturating_sub(1);
        drop(state);
        self.freed.notify_all();
    }
}

/// A runner taken from the pool, released when dropped.
#[derive(Debug)]
struct Held {
    pool: Arc<RunnerPool>,
    index: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.pool.release(self.index);
    }
}

/// A verify run staged on a runner: the local command to start, and the runner for as long
/// as the lease lives; dropping it gives back what the runner holds for the job.
#[derive(Debug)]
pub struct Lease {
    held: Held,
    job: Job,
    launch: Launch,
}

impl Lease {
    /// The local command that runs the job.
    pub fn launch(&self) -> &Launch {
        &self.launch
    }

    /// The runner's spec.
    pub fn runner(&self) -> &RunnerSpec {
        self.held.pool.slots[self.held.index].runner.spec()
    }

    /// Waits until the job has started on a runner with a queue (see
    /// [`Runner::wait_started`]); None at once on the others.
    pub fn wait_started(
        &self,
        cancel: &AtomicBool,
        report: &mut dyn FnMut(QueueState),
    ) -> Result<Option<QueueState>, RunnerError> {
        self.held.pool.slots[self.held.index]
            .runner
            .wait_started(&self.job, cancel, report)
    }

    /// Ends the job's processes on the runner.
    pub fn cancel(&self) -> Result<(), RunnerError> {
        self.held.pool.slots[self.held.index]
            .runner
            .cancel(&self.job)
    }

    /// What the job's wrapper recorded on the runner (see [`Runner::recorded`]).
    pub fn recorded(&self) -> Result<Option<super::Recorded>, RunnerError> {
        self.held.pool.slots[self.held.index]
            .runner
            .recorded(&self.job)
    }

    /// Leaves the runner out of the pool after it lost its connection mid-run, when the pool
    /// has others (a pool of one keeps its only runner: the next run tries it again).
    pub fn leave_out(&self, reason: &str) {
        let pool = &self.held.pool;
        if pool.size() > 1 {
            tracing::warn!("{reason}");
            lock(&pool.state).down[self.held.index] = Some(reason.to_string());
            pool.freed.notify_all();
        }
    }

    /// Copies what the runner keeps of the run into `run_dir`.
    pub fn collect(&self, run_dir: &Path) -> Result<(), RunnerError> {
        self.held.pool.slots[self.held.index]
            .runner
            .collect(&self.job, run_dir)
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.held.pool.slots[self.held.index]
            .runner
            .release(&self.job);
    }
}
