//! The bench's static site in a real headless Chromium (DevTools protocol): a bench of four
//! scripted agents (a pass in phase 1, a fidelity_gap then a pass, a bypass, a crash), its
//! site opened from `file://` and from `xstack view`. The index lists every trial with its
//! verdict; a filter narrows the table and its URL, loaded fresh, gives the same view; a
//! trial page shows the failing criterion's value and margin; a finding's link scrolls the
//! diff to its line; the player starts and seeks to the phase-two marker; no console error;
//! no request leaves `file://` (or localhost under `view`). A rebuild gives the same bytes
//! and renders no trial again.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "site/browser.rs"]
mod browser;
mod common;
#[path = "site/tables.rs"]
mod tables;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use browser::Browser;
use common::*;
use serde_json::json;
use tables::{Parsed, markdown_tables, report_tables, without_run_folder};

/// The four agents, with their trajectories against the quick task (`cat score.txt`, which
/// must print acc >= 0.9), and the verdict each trial gets.
const AGENTS: [(&str, &str, &str); 4] = [
    (
        "pass",
        "{\"phase\": 1}\n{\"say\": \"Porting.\"}\n{\"write\": \"score.txt\", \"text\": \"acc=1.0\\n\"}\n",
        "PASS (phase 1)",
    ),
    (
        "gap",
        "{\"phase\": 1}\n{\"say\": \"Porting.\"}\n{\"write\": \"score.txt\", \"text\": \"acc=0.5\\n\"}\n\
         {\"phase\": 2}\n{\"say\": \"Fixing the score.\"}\n{\"write\": \"score.txt\", \"text\": \"acc=1.0\\n\"}\n",
        "PASS (phase 2)",
    ),
    (
        "bypass",
        "{\"phase\": 1}\n{\"say\": \"Keeping torch.\"}\n{\"write\": \"train.py\", \"text\": \"import jax\\nimport torch\\n\"}\n\
         {\"write\": \"score.txt\", \"text\": \"acc=1.0\\n\"}\n",
        "FAIL bypass",
    ),
    (
        "crash",
        "{\"phase\": 1}\n{\"say\": \"Removing the score.\"}\n{\"delete\": \"score.txt\"}\n",
        "FAIL crash",
    ),
];

/// Runs the bench of the four agents into `out`.
fn bench(root: &Path, out: &Path) {
    common::quick_task(
        root,
        "cat score.txt",
        &[("train.py", "import jax\n"), ("score.txt", "acc=0.5\n")],
        "",
    );
    let mut args = vec![
        "bench".to_string(),
        "--task".to_string(),
        root.join("quick").display().to_string(),
        "--agent".to_string(),
    ];
    for (name, steps, _) in AGENTS {
        let file = root.join(format!("{name}.jsonl"));
        std::fs::write(&file, steps).unwrap();
        args.push(format!("script:{}", file.display()));
    }
    args.extend(["--jobs", "4", "--out"].map(String::from));
    args.push(out.display().to_string());
    let done = xstack().args(&args).stdin(Stdio::null()).output().unwrap();
    let said = text(&done);
    assert_eq!(done.status.code(), Some(0), "{said}");
    assert!(said.contains("site: "), "{said}");
}

/// Every file under `dir` with its bytes, sorted.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = walk(dir)
        .into_iter()
        .map(|p| {
            (
                p.strip_prefix(dir).unwrap().display().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    all.sort();
    all
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The trial table's rows as (trial id, verdict cell).
fn rows(browser: &mut Browser) -> Vec<(String, String)> {
    let rows = browser.eval(
        "Array.from(document.querySelectorAll('#trials tbody tr')).map(tr => \
         [tr.dataset.trial, tr.querySelector('td[data-key=text]').textContent])",
    );
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The tables of `out`'s report.md and of its site's index, which must be the same (the
/// site leaving out the run folder); returns them.
fn same_tables(out: &Path) -> Vec<Parsed> {
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let html = std::fs::read_to_string(out.join("site/index.html")).unwrap();
    let folder = out.file_name().unwrap().to_string_lossy();
    let expected = without_run_folder(markdown_tables(&md), &folder);
    let shown = report_tables(&html);
    assert_eq!(shown.len(), expected.len(), "{shown:?}\n{md}");
    for (site, report) in shown.iter().zip(&expected) {
        assert_eq!(site, report);
    }
    expected
}

#[test]
fn the_site_shows_every_table_of_report_md_with_the_same_columns_and_cells() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("bench");
    bench(root.path(), &out);
    let tables = same_tables(&out);
    let titles: Vec<&str> = tables.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(
        titles,
        [
            "Per agent",
            "Agents compared",
            "Did the agent run its port?",
            "Task × agent",
            "Where the time went",
            "Trials"
        ]
    );
    // The median duration, and a missing cost written the same in both.
    assert_eq!(tables[0].1[tables[0].1.len() - 2], "median duration (s)");
    assert!(
        tables[0].2.iter().all(|row| row.last().unwrap() == "–"),
        "{tables:?}"
    );
    assert_eq!(tables[5].2.len(), AGENTS.len());
    // A trial's verdict links to its page.
    let html = std::fs::read_to_string(out.join("site/index.html")).unwrap();
    assert!(html.contains("<a href=\"trials/quick-"), "{html}");
}

#[test]
fn a_bench_site_answers_why_a_trial_failed_in_a_real_browser_from_file_and_from_view() {
    if !require_tool("chromium", browser::chromium_works) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("bench");
    bench(root.path(), &out);
    let site = out.join("site");

    // A rebuild renders no trial again and gives the same bytes.
    let before = files(&site);
    let again = run(&["bench", "--report", out.to_str().unwrap()]);
    assert!(
        text(&again).contains("(0 trial pages written, 4 unchanged"),
        "{}",
        text(&again)
    );
    assert_eq!(files(&site), before, "a rebuild changed the site");
    // No link names a folder of this machine.
    let root_text = root.path().display().to_string();
    let pages: Vec<&(String, Vec<u8>)> = before
        .iter()
        .filter(|(n, _)| n.ends_with(".html"))
        .collect();
    assert!(
        pages.len() >= 6,
        "{:?}",
        before.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for (name, bytes) in pages {
        let text = String::from_utf8_lossy(bytes);
        let links = ["href=\"", "src=\""]
            .into_iter()
            .flat_map(|attribute| text.split(attribute).skip(1))
            .map(|rest| rest.split('"').next().unwrap_or(""));
        for link in links {
            assert!(
                !link.starts_with('/') && !link.contains(&root_text) && !link.contains("://"),
                "{name}: a link out of the site: {link}"
            );
        }
    }

    // Loose run folders get the same site from `xstack report`.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let one_run = report["trials"][0]["run_dir"].as_str().unwrap().to_string();
    let loose = root.path().join("loose");
    let made = run(&["report", &one_run, "--out", loose.to_str().unwrap()]);
    assert_eq!(made.status.code(), Some(0), "{}", text(&made));
    assert!(loose.join("site/index.html").is_file());
    assert!(
        loose
            .join("site/trials/quick--script_pass.jsonl--1/index.html")
            .is_file()
    );

    let mut browser = Browser::launch(1280, 800);
    let index = format!("file://{}/index.html", site.display());
    browser.open(&index);
    // The index lists every trial with its verdict.
    assert!(browser.wait_for(
        "document.querySelectorAll('#trials tbody tr').length === 4",
        Duration::from_secs(10)
    ));
    let listed = rows(&mut browser);
    let verdicts: Vec<&str> = listed.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(
        verdicts,
        AGENTS.iter().map(|a| a.2).collect::<Vec<_>>(),
        "{listed:?}"
    );
    // A filter narrows the table and the URL; that URL, loaded fresh, gives the same view.
    browser.choose("verdict", "fail");
    let filtered = rows(&mut browser);
    assert_eq!(
        filtered.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>(),
        ["FAIL bypass", "FAIL crash"]
    );
    let url = browser.reload_from_its_url();
    assert!(url.ends_with("#verdict=fail"), "{url}");
    assert!(browser.wait_for(
        "document.querySelectorAll('#trials tbody tr').length === 2",
        Duration::from_secs(10)
    ));
    assert_eq!(rows(&mut browser), filtered);
    assert_eq!(
        browser.eval("document.getElementById('verdict').value"),
        "fail"
    );
    // The search finds a finding's words.
    browser.open(&format!("{index}#q=torch"));
    assert!(browser.wait_for(
        "document.querySelectorAll('#trials tbody tr').length === 1",
        Duration::from_secs(10)
    ));
    assert_eq!(rows(&mut browser)[0].1, "FAIL bypass");

    // The fidelity gap's page: the failing criterion's value and margin, in phase 1.
    let page = |id: &str| format!("file://{}/trials/{id}/index.html", site.display());
    let gap = &listed[1].0;
    // Reached from the index in one click, on the trial's verdict.
    browser.open(&format!("file://{}/index.html", site.display()));
    browser.run_navigating(&format!(
        "document.querySelector('#trials tr[data-trial=\"{gap}\"] td[data-key=text] a').click()"
    ));
    assert!(browser.wait_for(
        &format!(
            "location.href === {} && document.readyState === 'complete'",
            json!(page(gap))
        ),
        Duration::from_secs(10)
    ));
    let failing = browser.eval(
        "(() => { const tr = document.querySelector('#phase-1 table.criteria tr.fail'); \
         return [tr.dataset.metric, tr.querySelector('td.value').textContent, \
         tr.querySelector('td.margin').textContent]; })()",
    );
    assert_eq!(failing, json!(["acc", "0.5", "-0.4"]));
    // Its verify log is one click from the verdict, and opens.
    browser.eval("document.querySelector('#phase-1 a[href^=\"#log-\"]').click()");
    assert!(browser.wait_for(
        "(() => { const d = document.getElementById(location.hash.slice(1)); \
         return !!d && d.open && d.querySelector('summary').textContent.startsWith('Phase 1: verify'); })()",
        Duration::from_secs(5)
    ));
    assert_eq!(
        browser.eval("document.querySelector('#phase-2 .verdict').textContent"),
        "PASS"
    );
    // The player starts, and the phase-two marker seeks to phase two.
    assert!(browser.wait_for(
        "!!window.xstackPlayer && document.querySelectorAll('#markers button').length > 0",
        Duration::from_secs(10)
    ));
    let marker = browser.eval(
        "(() => { const b = Array.from(document.querySelectorAll('#markers button'))\
         .find(b => b.textContent === 'phase 2: migrate'); b.click(); return Number(b.dataset.time); })()",
    );
    let marker = marker.as_f64().unwrap();
    assert!(marker > 0.0);
    assert!(
        browser.wait_for(
            &format!(
                "(() => {{ const t = window.xstackPlayer.getCurrentTime(); \
                 return t >= {marker} - 0.05 && t < {marker} + 5; }})()"
            ),
            Duration::from_secs(10)
        ),
        "the player is at {} after seeking to {marker}",
        browser.eval("window.xstackPlayer.getCurrentTime()")
    );
    assert!(browser.wait_for(
        "document.querySelector('#player .ap-player') !== null",
        Duration::from_secs(10)
    ));

    // Its compare page with the next trial of the task: both verdicts, one chart of both
    // runs, the diff between the two ports.
    browser.run_navigating("document.querySelector('p.compare a:last-child').click()");
    assert!(browser.wait_for(
        "location.pathname.includes('/compare/') && document.readyState === 'complete'",
        Duration::from_secs(10)
    ));
    let compared = browser.eval(
        "[Array.from(document.querySelectorAll('#verdicts .verdict')).map(v => v.textContent), \
         document.querySelectorAll('#curves svg.chart .curve.left').length, \
         document.querySelectorAll('#curves svg.chart .curve.right').length, \
         document.querySelector('#diff section.file h4').textContent]",
    );
    assert_eq!(
        compared[0],
        json!(["PASS (phase 2)", "FAIL bypass"]),
        "{compared}"
    );
    assert!(compared[1].as_u64().unwrap() >= 1 && compared[2].as_u64().unwrap() >= 1);
    assert!(
        compared[3].as_str().unwrap().contains("train.py"),
        "{compared}"
    );

    // The bypass's page: its finding's `file:line` link scrolls the diff to that line.
    let bypass = &listed[2].0;
    browser.open(&page(bypass));
    let link = browser.eval(
        "(() => { const a = document.querySelector('a.finding-link'); a.click(); \
         return [a.textContent, a.getAttribute('href')]; })()",
    );
    assert_eq!(link[0], "train.py:2", "{link}");
    let anchor = link[1]
        .as_str()
        .unwrap()
        .trim_start_matches('#')
        .to_string();
    assert!(browser.wait_for(
        &format!(
            "(() => {{ const row = document.getElementById('{anchor}'); \
             const r = row.getBoundingClientRect(); \
             return location.hash === '#{anchor}' && window.scrollY > 0 && r.top >= 0 \
             && r.bottom <= innerHeight && row.textContent.includes('import torch'); }})()"
        ),
        Duration::from_secs(10)
    ));
    if let Ok(dir) = std::env::var("XSTACK_SITE_SCREENSHOTS") {
        let dir = Path::new(&dir);
        std::fs::create_dir_all(dir).unwrap();
        browser.open(&index);
        browser.screenshot(&dir.join("index-1280x800.png"));
        browser.open(&page(gap));
        browser.screenshot(&dir.join("trial-1280x800.png"));
        browser.resize(390, 844);
        browser.open(&index);
        browser.screenshot(&dir.join("index-390x844.png"));
        browser.open(&page(bypass));
        browser.screenshot(&dir.join("trial-390x844.png"));
    }
    // Nothing failed in the pages, and nothing was asked of anywhere but the site's folder.
    browser.eval("1");
    assert_eq!(browser.errors(), Vec::<String>::new());
    let requests = browser.requests();
    assert!(requests.len() >= 10, "{requests:?}");
    let outside: Vec<&String> = requests
        .iter()
        .filter(|u| !u.starts_with("file://") && !u.starts_with("data:") && *u != "about:blank")
        .collect();
    assert!(outside.is_empty(), "requests left file://: {outside:?}");
    drop(browser);

    // `xstack view` serves the same site on localhost, and nothing is asked of elsewhere.
    let mut view = xstack()
        .args(["view", out.to_str().unwrap(), "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(view.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    let mut browser = Browser::launch(1280, 800);
    browser.open(&format!("{base}#verdict=pass"));
    assert!(browser.wait_for(
        "document.querySelectorAll('#trials tbody tr').length === 2",
        Duration::from_secs(10)
    ));
    browser.open(&format!("{base}trials/{bypass}/index.html"));
    assert!(browser.wait_for("!!window.xstackPlayer", Duration::from_secs(10)));
    browser.eval("1");
    assert_eq!(browser.errors(), Vec::<String>::new());
    let requests = browser.requests();
    let outside: Vec<&String> = requests
        .iter()
        .filter(|u| !u.starts_with(&base) && !u.starts_with("data:"))
        .collect();
    assert!(
        requests.len() >= 5 && outside.is_empty(),
        "{outside:?} of {requests:?}"
    );
    view.kill().unwrap();
    view.wait().unwrap();
}

/// A bench that goes both ways: a task ported from PyTorch to JAX and one from JAX to
/// PyTorch, each tried by an agent that writes a JAX port and one that writes a PyTorch port
/// (the port that keeps its source's framework is a bypass). In Chromium the index has the
/// direction column and the "By direction" table; the direction filter narrows the table to
/// one direction's trials and its URL, loaded fresh, gives the same view; and a trial's
/// side-by-side diff wraps a long line, so the port's side stays inside the window.
#[test]
fn a_bench_that_goes_both_ways_shows_and_filters_its_direction_in_a_real_browser() {
    if !require_tool("chromium", browser::chromium_works) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let to_jax = root.path().join("to-jax");
    let to_torch = root.path().join("to-torch");
    std::fs::create_dir_all(&to_jax).unwrap();
    std::fs::create_dir_all(&to_torch).unwrap();
    // A long line in the source and in every port: the side-by-side diff must wrap it, not
    // push the port's side out of view.
    let long = "# ".to_string() + &"a long comment that runs on ".repeat(12);
    let source = |framework: &str| format!("import {framework}\n{long}\n");
    let torch_source = source("torch");
    let jax_source = source("jax");
    let from_torch = common::quick_task(
        &to_jax,
        "cat score.txt",
        &[("train.py", &torch_source), ("score.txt", "acc=0.5\n")],
        "",
    );
    let from_jax = common::quick_task(
        &to_torch,
        "cat score.txt",
        &[("train.py", &jax_source), ("score.txt", "acc=0.5\n")],
        "\n[migration]\nfrom = \"jax\"\nto = \"torch\"\n",
    );
    // Its own id, in a folder of that name.
    let spec = std::fs::read_to_string(from_jax.join("task.toml")).unwrap();
    let from_jax_renamed = to_torch.join("quick-jax");
    std::fs::rename(&from_jax, &from_jax_renamed).unwrap();
    let from_jax = from_jax_renamed;
    std::fs::write(
        from_jax.join("task.toml"),
        spec.replace("id = \"quick\"", "id = \"quick-jax\""),
    )
    .unwrap();
    let mut args = vec!["bench".to_string()];
    for task in [&from_torch, &from_jax] {
        args.extend(["--task".to_string(), task.display().to_string()]);
    }
    for framework in ["jax", "torch"] {
        let file = root.path().join(format!("writes-{framework}.jsonl"));
        std::fs::write(
            &file,
            format!(
                "{{\"phase\": 1}}\n{{\"write\": \"train.py\", \"text\": \"import {framework}\\n{long}\\n\"}}\n\
                 {{\"write\": \"score.txt\", \"text\": \"acc=1.0\\n\"}}\n"
            ),
        )
        .unwrap();
        args.extend(["--agent".to_string(), format!("script:{}", file.display())]);
    }
    let out = root.path().join("bench");
    args.extend(["--jobs", "4", "--out"].map(String::from));
    args.push(out.display().to_string());
    let done = xstack().args(&args).stdin(Stdio::null()).output().unwrap();
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    let tables = same_tables(&out);
    assert!(tables.iter().any(|t| t.0 == "By direction"), "{tables:?}");

    let mut browser = Browser::launch(1280, 800);
    let index = format!("file://{}/site/index.html", out.display());
    browser.open(&index);
    assert!(browser.wait_for(
        "document.querySelectorAll('#trials tbody tr').length === 4",
        Duration::from_secs(10)
    ));
    let table = |browser: &mut Browser| {
        browser.eval(
            "Array.from(document.querySelectorAll('#trials tbody tr')).map(tr => \
             [tr.querySelector('td[data-key=task]').textContent, \
              tr.querySelector('td[data-key=direction]').textContent, \
              tr.querySelector('td[data-key=text]').textContent]).sort()",
        )
    };
    assert_eq!(
        table(&mut browser),
        json!([
            ["quick", "PyTorch → JAX", "FAIL bypass"],
            ["quick", "PyTorch → JAX", "PASS (phase 1)"],
            ["quick-jax", "JAX → PyTorch", "FAIL bypass"],
            ["quick-jax", "JAX → PyTorch", "PASS (phase 1)"],
        ])
    );
    // "By direction": each agent's pass rate in each direction.
    let by_direction = browser.eval(
        "Array.from(document.querySelectorAll('#by-direction th')).map(th => th.textContent)",
    );
    let headers: Vec<&str> = by_direction
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    assert!(
        headers.contains(&"PyTorch → JAX") && headers.contains(&"JAX → PyTorch"),
        "{headers:?}"
    );
    let all_agents = browser.eval(
        "Array.from(document.querySelectorAll('#by-direction-table tbody tr')).map(tr => \
         Array.from(tr.querySelectorAll('td')).map(td => td.textContent)) \
         .find(cells => cells[0] === 'all agents')",
    );
    assert_eq!(all_agents[1], "1/2 (50%)", "{all_agents}");
    assert_eq!(all_agents[3], "1/2 (50%)", "{all_agents}");
    // The direction filter narrows the table and the URL; that URL, loaded fresh, keeps it.
    browser.choose("direction", "JAX → PyTorch");
    let narrowed = json!([
        ["quick-jax", "JAX → PyTorch", "FAIL bypass"],
        ["quick-jax", "JAX → PyTorch", "PASS (phase 1)"],
    ]);
    assert_eq!(table(&mut browser), narrowed);
    let url = browser.reload_from_its_url();
    assert!(url.contains("#direction="), "{url}");
    assert!(browser.wait_for(
        "document.querySelectorAll('#trials tbody tr').length === 2",
        Duration::from_secs(10)
    ));
    assert_eq!(table(&mut browser), narrowed);
    assert_eq!(
        browser.eval("document.getElementById('direction').value"),
        "JAX → PyTorch"
    );
    // A trial's diff shows both sides whatever the length of a line: each code column ends
    // inside the window.
    browser.run_navigating("document.querySelector('#trials tr td[data-key=text] a').click()");
    assert!(browser.wait_for(
        "location.pathname.includes('/trials/') && document.readyState === 'complete'",
        Duration::from_secs(10)
    ));
    let columns = browser.eval(
        "Array.from(document.querySelectorAll('table.diff tr')).filter(tr => tr.textContent.includes('runs on')) \
         .map(tr => Array.from(tr.querySelectorAll('td.code')).map(td => Math.round(td.getBoundingClientRect().right))) \
         .concat([[document.documentElement.clientWidth]])",
    );
    let columns = columns.as_array().unwrap();
    let width = columns.last().unwrap()[0].as_i64().unwrap();
    let rows = &columns[..columns.len() - 1];
    assert!(
        !rows.is_empty(),
        "no diff row of the long line: {columns:?}"
    );
    for row in rows {
        let right = row.as_array().unwrap().last().unwrap().as_i64().unwrap();
        assert!(
            right <= width,
            "the port's side ends at {right} px, the window at {width}"
        );
    }
    browser.eval("1");
    assert_eq!(browser.errors(), Vec::<String>::new());
}

/// Every file under `dir` with its length and modification time, sorted: what a command that
/// must write nothing there is checked against.
fn stamps(dir: &Path) -> Vec<(std::path::PathBuf, u64, std::time::SystemTime)> {
    let mut all: Vec<_> = walk(dir)
        .into_iter()
        .map(|p| {
            let meta = std::fs::metadata(&p).unwrap();
            (p, meta.len(), meta.modified().unwrap())
        })
        .collect();
    all.sort();
    all
}

/// The catalog of the bundled tasks folder (`xstack catalog tasks --out DIR`), in a real
/// Chromium from `file://` and from `xstack view`: the index lists every task folder; a
/// click opens a real task's page with its repository and commit, the authors' claim and
/// where it is, what the runs here measured, the criteria with the reasoning beside each
/// tolerance, the phase-two details, the reference curve and the demo's mistake. A second
/// catalog, of a task a bench ran through its demo (`--bench`), shows the demo's verdicts of
/// both phases, and the bench's own site links the task's page. A rebuild gives the same
/// bytes; the tasks folder is not written; a folder that is not a catalog's is refused.
#[test]
fn the_catalog_of_a_tasks_folder_opens_in_a_real_browser_from_file_and_from_view() {
    if !require_tool("chromium", browser::chromium_works) {
        return;
    }
    let tasks = root().join("tasks");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("catalog");
    let before = stamps(&tasks);
    let made = run(&[
        "catalog",
        tasks.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(made.status.code(), Some(0), "{}", text(&made));
    assert!(text(&made).contains("catalog: "), "{}", text(&made));
    let site = out.join("site");
    let first = files(&site);
    let again = run(&[
        "catalog",
        tasks.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert_eq!(files(&site), first, "a rebuild changed the catalog");
    assert_eq!(
        stamps(&tasks),
        before,
        "the catalog wrote into the tasks folder"
    );
    let expected = xstack::task::discover(&tasks).len();

    // A folder that is not a catalog's is refused, and nothing is written there.
    let theirs = tmp.path().join("theirs");
    std::fs::create_dir_all(theirs.join("site")).unwrap();
    std::fs::write(theirs.join("site/notes.txt"), "mine").unwrap();
    let refused = run(&[
        "catalog",
        tasks.to_str().unwrap(),
        "--out",
        theirs.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("is not a catalog's site"),
        "{}",
        text(&refused)
    );
    assert_eq!(walk(&theirs).len(), 1);
    let missing = run(&[
        "catalog",
        "/nonexistent-tasks",
        "--out",
        theirs.to_str().unwrap(),
    ]);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    assert!(text(&missing).contains("/nonexistent-tasks: not a folder of tasks"));

    let mut browser = Browser::launch(1280, 800);
    let index = format!("file://{}/index.html", site.display());
    browser.open(&index);
    assert_eq!(
        browser.eval("document.querySelectorAll('#tasks tr[data-task]').length"),
        json!(expected)
    );
    browser.run_navigating("document.querySelector('#tasks tr[data-task=\"sgc-cora\"] a').click()");
    assert!(browser.wait_for(
        "location.pathname.endsWith('/tasks/sgc-cora/index.html') && document.readyState === 'complete'",
        Duration::from_secs(10)
    ));
    let page = browser.eval(
        "[document.querySelector('#upstream a.upstream').getAttribute('href'), \
         document.querySelector('#claims .claim .quote').textContent, \
         document.querySelector('#claims .claim code.where').textContent, \
         document.querySelector('#claims .claim td.runs').textContent, \
         document.querySelector('#criteria tr[data-metric] td.direction').textContent, \
         document.querySelector('#criteria .why-criterion p.why').textContent.length, \
         document.querySelector('#phase2 pre.details').textContent.length, \
         document.querySelectorAll('#reference svg.chart polyline.reference').length, \
         document.querySelector('#demo p.mistake').textContent.length]",
    );
    assert_eq!(
        page[0], "https://github.com/Tiiiger/SGC/tree/2c7a2727e82e462d8ef9d6e57f0b08888e16488f",
        "{page}"
    );
    assert!(page[1].as_str().unwrap().contains("81.0"), "{page}");
    assert_eq!(page[2], "README.md:31", "{page}");
    assert!(
        page[3].as_str().unwrap().parse::<u32>().unwrap() >= 3,
        "{page}"
    );
    assert_eq!(page[4], "within", "{page}");
    for i in [5, 6, 8] {
        assert!(page[i].as_u64().unwrap() > 40, "{i}: {page}");
    }
    assert!(page[7].as_u64().unwrap() >= 1, "{page}");
    if let Ok(dir) = std::env::var("XSTACK_SITE_SCREENSHOTS") {
        let dir = Path::new(&dir);
        std::fs::create_dir_all(dir).unwrap();
        browser.screenshot(&dir.join("catalog-task-1280x800.png"));
        browser.open(&index);
        browser.screenshot(&dir.join("catalog-index-1280x800.png"));
    }
    browser.eval("1");
    assert_eq!(browser.errors(), Vec::<String>::new());
    let outside: Vec<String> = browser
        .requests()
        .into_iter()
        .filter(|u| !u.starts_with("file://") && !u.starts_with("data:") && u != "about:blank")
        .collect();
    assert!(outside.is_empty(), "requests left file://: {outside:?}");
    drop(browser);

    // A task a bench ran through its demo: the catalog shows the demo's verdicts, and the
    // bench's site links the task's page.
    let quick_root = tmp.path().join("quick-tasks");
    let quick = common::quick_task(
        &quick_root,
        "cat score.txt",
        &[("train.py", "import jax\n"), ("score.txt", "acc=0.5\n")],
        "",
    );
    std::fs::create_dir_all(quick.join("demo")).unwrap();
    std::fs::write(
        quick.join("demo/trajectory.jsonl"),
        format!("# The score is left at 0.5.\n{}", AGENTS[1].1),
    )
    .unwrap();
    let bench_out = tmp.path().join("bench");
    let benched = xstack()
        .args([
            "bench",
            "--task",
            quick.to_str().unwrap(),
            "--agent",
            "demo",
            "--out",
            bench_out.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(benched.status.code(), Some(0), "{}", text(&benched));
    let with_runs = tmp.path().join("catalog-runs");
    let made = run(&[
        "catalog",
        quick_root.to_str().unwrap(),
        "--out",
        with_runs.to_str().unwrap(),
        "--bench",
        bench_out.to_str().unwrap(),
    ]);
    assert_eq!(made.status.code(), Some(0), "{}", text(&made));
    let mut browser = Browser::launch(1280, 800);
    browser.open(&format!(
        "file://{}/site/tasks/quick/index.html",
        with_runs.display()
    ));
    let verdicts = browser.eval(
        "[document.querySelector('#demo p.mistake').textContent, \
         Array.from(document.querySelectorAll('#verdicts tr.demo td')).map(td => td.textContent)]",
    );
    assert_eq!(verdicts[0], "The score is left at 0.5.", "{verdicts}");
    let cells = verdicts[1].as_array().unwrap();
    assert!(
        cells[2].as_str().unwrap().starts_with("FAIL fidelity_gap"),
        "{verdicts}"
    );
    assert!(cells[2].as_str().unwrap().contains("acc 0.5"), "{verdicts}");
    assert!(cells[3].as_str().unwrap().starts_with("PASS"), "{verdicts}");
    browser.open(&format!("file://{}/site/index.html", bench_out.display()));
    browser.run_navigating("document.querySelector('#task-pages a.task-page').click()");
    assert!(browser.wait_for(
        "location.pathname.endsWith('/tasks/quick/index.html') && \
         document.querySelectorAll('#verdicts tr.demo a').length === 1",
        Duration::from_secs(10)
    ));
    browser.eval("1");
    assert_eq!(browser.errors(), Vec::<String>::new());
    drop(browser);

    // `xstack view` serves the catalog on localhost.
    let mut view = xstack()
        .args(["view", out.to_str().unwrap(), "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(view.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    let mut browser = Browser::launch(1280, 800);
    browser.open(&format!("{base}tasks/cleanrl-dqn-jax-cartpole/index.html"));
    assert!(browser.wait_for(
        "document.querySelectorAll('#criteria tr[data-metric]').length === 2",
        Duration::from_secs(10)
    ));
    browser.eval("1");
    assert_eq!(browser.errors(), Vec::<String>::new());
    view.kill().unwrap();
    view.wait().unwrap();
}
