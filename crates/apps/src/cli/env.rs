//! `xstack env build|list|prune`: the cached Python environments (SPEC §1).

use std::io::Write;
use std::time::{Duration, Instant, SystemTime};

use crate::env::store::{self, Pruned, Usage, human_bytes};
use crate::env::{Side, uv};
use crate::process::EXIT_PASS;
use crate::task::{self, Task};

use super::AppError;

/// `xstack env build TASK...`: builds (or reuses) both environments of each task, one line
/// per environment; the build's own steps go to stderr.
pub fn env_build(tasks: &[String], out: &mut dyn Write) -> Result<i32, AppError> {
    let loaded = tasks
        .iter()
        .map(|t| Ok(Task::load(&task::resolve(t)?)?))
        .collect::<Result<Vec<Task>, AppError>>()?;
    let cache = crate::env::cache_dir();
    for task in &loaded {
        for (side, packages) in [
            (Side::Target, &task.spec.env.packages),
            (Side::Reference, &task.spec.env.reference_packages),
        ] {
            let id = &task.spec.id;
            if packages.is_empty() {
                let _ = writeln!(out, "{:<9}  {id}  no packages: no environment", side.name());
                continue;
            }
            let started = Instant::now();
            let env = crate::env::ensure(&cache, packages, &Usage::of(id, side), &mut |line| {
                eprintln!("{line}")
            })
            .map_err(|e| AppError::infra(e.to_string()))?;
            let seconds = started.elapsed().as_secs_f64();
            if let Some(env) = env {
                let used = store::disk_use(&env.dir);
                let _ = writeln!(
                    out,
                    "{:<9}  {id}  [{}]  {}  {}  {seconds:.1} s",
                    side.name(),
                    packages.join(" "),
                    env.dir.display(),
                    human_bytes(used.total),
                );
            }
        }
    }
    Ok(EXIT_PASS)
}

/// When `t` was, in local time.
fn when(t: Option<SystemTime>) -> String {
    t.map_or_else(
        || "never".to_string(),
        |t| {
            chrono::DateTime::<chrono::Local>::from(t)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        },
    )
}

/// `xstack env list`: every cached environment with the side it serves, the bytes it alone
/// holds (files not linked from the package store or another environment) of its total, its
/// last use, its tasks and packages; then the package store and the whole cache.
pub fn env_list(out: &mut dyn Write) -> Result<i32, AppError> {
    let cache = crate::env::cache_dir();
    let envs = store::list(&cache);
    if envs.is_empty() {
        let _ = writeln!(out, "no environments in {}", cache.join("envs").display());
    }
    for env in &envs {
        let used = store::disk_use(&env.dir);
        let tasks = env.tasks();
        let _ = writeln!(
            out,
            "{}  {:<16}  {} alone of {}  last used {}  tasks: {}  [{}]{}",
            env.key,
            env.sides(),
            human_bytes(used.alone),
            human_bytes(used.total),
            when(env.last_used),
            if tasks.is_empty() {
                "-".to_string()
            } else {
                tasks.join(", ")
            },
            env.record.packages.join(" "),
            if env.complete {
                ""
            } else {
                "  (unfinished build)"
            }
        );
    }
    let store_dir = cache.join(uv::STORE_DIR);
    if store_dir.is_dir() {
        let _ = writeln!(
            out,
            "package store {}: {}",
            store_dir.display(),
            human_bytes(store::disk_use(&store_dir).total)
        );
    }
    if cache.is_dir() {
        let _ = writeln!(
            out,
            "cache {}: {} on disk",
            cache.display(),
            human_bytes(store::disk_use(&cache).total)
        );
    }
    Ok(EXIT_PASS)
}

/// `xstack env prune [--unused-days N] [--all]`: removes the environments unused for N days
/// (all of them and the package store with `--all`), never one a running xstack holds;
/// says what it removed, what it kept and the bytes it freed.
pub fn env_prune(unused_days: u64, all: bool, out: &mut dyn Write) -> Result<i32, AppError> {
    let cache = crate::env::cache_dir();
    let period = Duration::from_secs(unused_days.saturating_mul(86_400));
    let report = store::prune(&cache, period, all).map_err(|e| AppError::infra(e.to_string()))?;
    let mut recent = 0;
    for (env, outcome) in &report.envs {
        let what = format!(
            "{} [{}] (last used {})",
            env.key,
            env.record.packages.join(" "),
            when(env.last_used)
        );
        match outcome {
            Pruned::Removed => {
                let _ = writeln!(out, "removed {what}");
            }
            Pruned::InUse => {
                let _ = writeln!(out, "kept    {what}: a running xstack holds it");
            }
            Pruned::Recent => recent += 1,
        }
    }
    if recent > 0 {
        let _ = writeln!(
            out,
            "kept    {recent} used within the last {unused_days} days"
        );
    }
    if report.store_removed {
        let _ = writeln!(
            out,
            "removed the package store {}",
            cache.join(uv::STORE_DIR).display()
        );
    } else if cache.join(uv::STORE_DIR).exists() {
        let store_dir = cache.join(uv::STORE_DIR);
        let why = if all {
            "an environment in use links to it"
        } else {
            "the next build reuses its packages; --all removes it"
        };
        let _ = writeln!(
            out,
            "kept    the package store {} ({}): {why}",
            store_dir.display(),
            human_bytes(store::disk_use(&store_dir).total)
        );
    }
    let _ = writeln!(out, "freed {}", human_bytes(report.freed));
    Ok(EXIT_PASS)
}
