//! When the first run of an old repository fails on today's releases of packages it does not
//! pin: the versions released by the day of its commit, resolved by uv with
//! `--exclude-newer`, offered as `--reference-packages` to try next. It only advises; the
//! environment init builds is always the one the user's lists say.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::env::PythonEnv;
use crate::env::uv::Installer;

/// How old a commit is, in days, before its packages' releases since are suspected.
const OLD_AFTER_DAYS: i64 = 180;

/// The day (`2025-02-14`) of the last commit of `repo` that changed `file` (the experiment,
/// relative to `repo`; its committed outputs are of that day), or of its HEAD commit without
/// one; None when `repo` is not a git checkout or no commit changed `file`.
pub fn commit_day(repo: &Path, file: Option<&Path>) -> Option<String> {
    let mut git = Command::new("git");
    git.args(["-C"])
        .arg(repo)
        .args(["log", "-1", "--format=%cs", "HEAD"]);
    if let Some(file) = file {
        git.arg("--").arg(file);
    }
    let out = git.stderr(Stdio::null()).output().ok()?;
    let day = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && chrono::NaiveDate::parse_from_str(&day, "%Y-%m-%d").is_ok())
        .then_some(day)
}

/// The advice for a failed first run of `repo`'s `experiment` with the reference packages
/// `reference` in `env`: each package it leaves unpinned at its version of the day the
/// experiment last changed (else of the HEAD commit's day), as a
/// `--reference-packages` list; None when the commit is recent or unknown, every package is
/// pinned, or the versions cannot be resolved (uv missing, the registry out of reach).
pub fn advice(
    repo: &Path,
    experiment: Option<&Path>,
    reference: &[String],
    env: &PythonEnv,
    installer: &Installer,
) -> Option<String> {
    let file = experiment.and_then(|e| e.strip_prefix(repo).ok());
    let (day, what) = match file.and_then(|f| Some((commit_day(repo, Some(f))?, f))) {
        Some((day, f)) => (day, format!("{} was last changed", f.display())),
        None => (
            commit_day(repo, None)?,
            "the repository's commit is".to_string(),
        ),
    };
    let date = chrono::NaiveDate::parse_from_str(&day, "%Y-%m-%d").ok()?;
    if (chrono::Utc::now().date_naive() - date).num_days() < OLD_AFTER_DAYS {
        return None;
    }
    let unpinned: Vec<&String> = reference.iter().filter(|s| !s.contains("==")).collect();
    if unpinned.is_empty() {
        return None;
    }
    let Installer::Uv(uv) = installer else {
        return None;
    };
    let pinned = resolve_as_of(uv, &env.bin().join("python"), &unpinned, &day).ok()?;
    let list: Vec<String> = reference
        .iter()
        .map(|spec| {
            let name = package_name(spec);
            pinned
                .iter()
                .find(|p| package_name(p) == name)
                .cloned()
                .unwrap_or_else(|| spec.clone())
        })
        .collect();
    Some(format!(
        "{what} on {day}, and packages it does not pin were installed at today's releases; with the releases of that day: --reference-packages '{}'",
        list.join(",")
    ))
}

/// `specs` resolved by uv for `python` with nothing newer than `day`: one `name==version` a
/// package, dependencies included.
fn resolve_as_of(
    uv: &Path,
    python: &Path,
    specs: &[&String],
    day: &str,
) -> Result<Vec<String>, String> {
    let mut child = Command::new(uv)
        .args([
            "pip",
            "compile",
            "-",
            "--quiet",
            "--no-header",
            "--no-annotate",
        ])
        .arg("--python")
        .arg(python)
        .args(["--exclude-newer", day])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", uv.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        let list: Vec<&str> = specs.iter().map(|s| s.as_str()).collect();
        stdin
            .write_all(list.join("\n").as_bytes())
            .map_err(|e| e.to_string())?;
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("==") && !l.starts_with('#'))
        .map(str::to_string)
        .collect())
}

/// A spec's package name as pip compares it (`Jax[cpu]>=0.4` → `jax`).
fn package_name(spec: &str) -> String {
    spec.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .next()
        .unwrap_or(spec)
        .to_lowercase()
        .replace('_', "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_specs_name_is_compared_as_pip_compares_it() {
        assert_eq!(package_name("Jax[cpu]>=0.4"), "jax");
        assert_eq!(package_name("typing_extensions"), "typing-extensions");
        assert_eq!(package_name("numpy==1.24.1"), "numpy");
    }

    #[test]
    fn a_checkouts_commit_day_is_read_and_a_plain_folder_has_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(commit_day(dir.path(), None), None);
        let git = |args: &[&str]| {
            let status = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_COMMITTER_DATE", "2023-01-02T12:00:00Z")
                .env("GIT_AUTHOR_DATE", "2023-01-02T12:00:00Z")
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("train.py"), "print(1)\n").unwrap();
        git(&["add", "."]);
        git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "first",
        ]);
        assert_eq!(commit_day(dir.path(), None).as_deref(), Some("2023-01-02"));
        let train = Path::new("train.py");
        assert_eq!(
            commit_day(dir.path(), Some(train)).as_deref(),
            Some("2023-01-02")
        );
        assert_eq!(commit_day(dir.path(), Some(Path::new("other.py"))), None);
    }
}
