//! The bench site's build time and size per trial (docs/SITE.md): four real trials of the
//! quick scripted bench (a pass, a fidelity gap then a pass, a bypass, a crash), copied into
//! a bench of N trials (`XSTACK_SITE_TRIALS`, default 1000); then the site built from
//! nothing, built again with nothing changed, and built again after one trial changed.
//! `cargo bench --bench site`; with `XSTACK_SITE_KEEP=DIR` the bench of N (and its site) is
//! copied to DIR, to open in a browser; with `XSTACK_SITE_BROWSER=1` its index is opened from
//! `file://` in headless Chromium (the tests' DevTools client) and the index's actions are
//! timed in the page: first render, next page, a filter, a sort, a search, a link loaded fresh.
// Helpers panic on what a benchmark cannot go on without.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// The tests' Chromium client; the benchmark uses part of it.
#[allow(dead_code)]
#[path = "../tests/site/browser.rs"]
mod browser;

/// What the Chromium client asks of the tests' helpers.
mod common {
    /// Whether `program args` runs and exits 0.
    pub fn runs_ok(program: &str, args: &[&str]) -> bool {
        std::process::Command::new(program)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use browser::Browser;

use xstack::bench::model::{self, TrialRow};
use xstack::bench::record::TrialKey;

const AGENTS: [(&str, &str); 4] = [
    (
        "pass",
        "{\"phase\": 1}\n{\"say\": \"Porting.\"}\n{\"write\": \"score.txt\", \"text\": \"acc=1.0\\n\"}\n",
    ),
    (
        "gap",
        "{\"phase\": 1}\n{\"write\": \"score.txt\", \"text\": \"acc=0.5\\n\"}\n{\"phase\": 2}\n\
         {\"write\": \"score.txt\", \"text\": \"acc=1.0\\n\"}\n",
    ),
    (
        "bypass",
        "{\"phase\": 1}\n{\"write\": \"train.py\", \"text\": \"import jax\\nimport torch\\n\"}\n",
    ),
    ("crash", "{\"phase\": 1}\n{\"delete\": \"score.txt\"}\n"),
];

/// The quick task: `cat score.txt` must print acc >= 0.9.
fn task(root: &Path) -> PathBuf {
    let task = root.join("quick");
    std::fs::create_dir_all(task.join("repo")).unwrap();
    std::fs::write(task.join("repo/train.py"), "import jax\n").unwrap();
    std::fs::write(task.join("repo/score.txt"), "acc=0.5\n").unwrap();
    std::fs::write(
        task.join("task.toml"),
        "id = \"quick\"\ntitle = \"Prints a score\"\n[source]\npath = \"repo\"\n[published]\n\
         citation = \"none\"\n[env]\npackages = []\n[run]\ncommand = \"cat score.txt\"\ntimeout_s = 60\n\
         [[metric]]\nname = \"acc\"\nregex = 'acc=(?P<value>[0-9.]+)'\n[[criterion]]\nmetric = \"acc\"\n\
         reduce = \"last\"\npublished = 1.0\ntolerance = 0.1\ndirection = \"higher\"\n[phase2]\n\
         details = \"Print acc=1.0.\"\n",
    )
    .unwrap();
    task
}

/// Bytes of every file under `dir`.
fn size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                size(&p)
            } else {
                e.metadata().unwrap().len()
            }
        })
        .sum()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn main() {
    let trials: usize = std::env::var("XSTACK_SITE_TRIALS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let root = tempfile::tempdir().unwrap();
    let task = task(root.path());
    let seed = root.path().join("seed");
    let mut args = vec![
        "bench".to_string(),
        "--task".to_string(),
        task.display().to_string(),
        "--agent".to_string(),
    ];
    for (name, steps) in AGENTS {
        let file = root.path().join(format!("{name}.jsonl"));
        std::fs::write(&file, steps).unwrap();
        args.push(format!("script:{}", file.display()));
    }
    args.extend(["--jobs".into(), "4".into(), "--out".into()]);
    args.push(seed.display().to_string());
    let status = Command::new(env!("CARGO_BIN_EXE_xstack"))
        .args(&args)
        .env("XSTACK_CONFIG", "/dev/null")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "the seed bench failed");
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&seed)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("result.json").is_file())
        .collect();
    folders.sort();
    assert_eq!(folders.len(), 4);

    // N trials: the four, copied, each its own repeat.
    let bench = root.path().join("bench");
    let mut rows: Vec<TrialRow> = Vec::new();
    for i in 0..trials {
        let from = &folders[i % 4];
        let dir = bench.join(format!("trial-{i:05}"));
        copy_dir(from, &dir);
        let key = TrialKey {
            task: "quick".to_string(),
            agent: format!("script:{}.jsonl", AGENTS[i % 4].0),
            repeat: (i / 4 + 1) as u32,
        };
        rows.push(model::row(&key, &dir, &dir));
    }
    let agents: Vec<String> = AGENTS
        .iter()
        .map(|(a, _)| format!("script:{a}.jsonl"))
        .collect();
    let report = model::build(rows, &agents);

    let started = Instant::now();
    let first = xstack::site::build(&bench, &report).unwrap();
    let full = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let second = xstack::site::build(&bench, &report).unwrap();
    let unchanged = started.elapsed().as_secs_f64();
    // One trial's result changes (a byte of white space): only it is rendered again.
    let one = bench.join("trial-00000/result.json");
    let text = std::fs::read_to_string(&one).unwrap();
    std::fs::write(&one, format!("{text}\n")).unwrap();
    let started = Instant::now();
    let third = xstack::site::build(&bench, &report).unwrap();
    let one_changed = started.elapsed().as_secs_f64();
    let site = bench.join("site");
    let total = size(&site);
    let trial_pages = size(&site.join("trials"));
    let index = std::fs::metadata(site.join("index.html")).unwrap().len()
        + std::fs::metadata(site.join("data.js")).unwrap().len();
    assert_eq!(first.rendered, trials);
    assert_eq!(second.kept, trials);
    assert_eq!(third.rendered, 1);
    if let Some(keep) = std::env::var_os("XSTACK_SITE_KEEP") {
        // The whole bench folder, to open its site in a browser.
        copy_dir(&bench, Path::new(&keep));
    }
    println!(
        "| trials | full build (s) | per trial (ms) | unchanged rebuild (s) | one trial changed (s) | site (MB) | per trial (KB) | index + data.js (KB) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| {trials} | {full:.2} | {:.1} | {unchanged:.2} | {one_changed:.2} | {:.1} | {:.1} | {:.0} |",
        full * 1000.0 / trials as f64,
        total as f64 / 1e6,
        trial_pages as f64 / 1024.0 / trials as f64,
        index as f64 / 1024.0
    );
    if std::env::var_os("XSTACK_SITE_BROWSER").is_some() {
        browser_timings(&site);
    }
}

/// The site's index in headless Chromium at 1280×800: each action's time in the page
/// (`performance.now()` around it; the loads by the wall clock, from navigation), what the
/// page then shows, its JavaScript heap; panics on a console error.
fn browser_timings(site: &Path) {
    assert!(
        browser::chromium_works(),
        "XSTACK_SITE_BROWSER is set but `{}` does not start",
        browser::CHROMIUM
    );
    let mut page = Browser::launch(1280, 800);
    let index = format!("file://{}/index.html", site.display());
    let rendered = "document.querySelectorAll('#trials tbody tr').length > 0";
    let started = Instant::now();
    page.open(&index);
    assert!(page.wait_for(rendered, Duration::from_secs(60)));
    let first = started.elapsed().as_secs_f64() * 1000.0;
    let shown = |page: &mut Browser| {
        page.eval("document.getElementById('count').textContent")
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let mut lines = vec![(
        format!(
            "load and first render (`data.js` {:.0} KB)",
            std::fs::metadata(site.join("data.js")).unwrap().len() as f64 / 1024.0
        ),
        format!("{first:.0} (wall clock, from navigation)"),
        shown(&mut page),
    )];
    let actions = [
        (
            "next page",
            "document.querySelector('#pager button:last-child').click()",
        ),
        (
            "filter verdict = fail",
            "const s = document.getElementById('verdict'); s.value = 'fail'; \
             s.dispatchEvent(new Event('change'))",
        ),
        (
            "sort by duration",
            "document.querySelector('th[data-key=duration]').click()",
        ),
        (
            "search \"torch\" (one keystroke's work)",
            "const q = document.getElementById('q'); q.value = 'torch'; \
             q.dispatchEvent(new Event('input'))",
        ),
    ];
    for (name, action) in actions {
        let ms = page.eval(&format!(
            "(() => {{ const t0 = performance.now(); {action}; return performance.now() - t0; }})()"
        ));
        lines.push((
            name.to_string(),
            format!("{:.0}", ms.as_f64().unwrap()),
            shown(&mut page),
        ));
    }
    let url = page.eval("location.href").as_str().unwrap().to_string();
    page.open("about:blank");
    let started = Instant::now();
    page.open(&url);
    assert!(page.wait_for(rendered, Duration::from_secs(60)));
    lines.push((
        "that view's URL loaded fresh".to_string(),
        format!(
            "{:.0} (wall clock)",
            started.elapsed().as_secs_f64() * 1000.0
        ),
        shown(&mut page),
    ));
    let heap = page.eval("performance.memory.usedJSHeapSize");
    assert_eq!(page.errors(), Vec::<String>::new(), "console errors");
    println!();
    println!("| action on the index | time in the page (ms) | shown |");
    println!("|---|---|---|");
    for (name, ms, shown) in lines {
        println!("| {name} | {ms} | {shown} |");
    }
    println!(
        "JavaScript heap {:.0} MB; no console error.",
        heap.as_f64().unwrap_or_default() / 1e6
    );
}
