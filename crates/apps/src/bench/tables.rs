//! The report's tables, built once from the report model of [`super::model`]: each a title,
//! its columns and its rows of cells. `report.md` ([`super::report`]) and the site's index
//! (`crate::site::index`) paint the same tables from here, so both show the same columns,
//! the same wording and the same cells; [`all`] gives them in report.md's order.

use super::model::{
    ALL_AGENTS, DirectionLine, IntervalMethod, Report, Share, Timing, TrialRow, distinct,
    has_claims, has_ran_port, median, percent_interval,
};
use super::stats;

/// How a missing value is written in every table.
pub const MISSING: &str = "–";

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: names, labels, verdicts.
    Left,
    /// Numbers, rates and intervals.
    Right,
}

/// A column: its header and how its cells line up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The header's text.
    pub header: String,
    /// How the column's cells line up.
    pub align: Align,
    /// How the header's text is set apart, if at all (an agent's name, as code).
    pub emphasis: Option<Emphasis>,
    /// Whether the column holds a path of the machine that ran the bench (a run folder): the
    /// site, which names no such path, leaves the column out.
    pub local_path: bool,
}

/// How a cell's text is set apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emphasis {
    /// As code: an agent's name, a path.
    Code,
}

/// One cell of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// What the cell says.
    pub text: String,
    /// Where the cell's text links to, if anywhere.
    pub link: Option<String>,
    /// How the text is set apart, if at all.
    pub emphasis: Option<Emphasis>,
}

impl Cell {
    /// Plain text.
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            link: None,
            emphasis: None,
        }
    }

    /// Text set as code.
    pub fn code(text: impl Into<String>) -> Cell {
        Cell {
            emphasis: Some(Emphasis::Code),
            ..Cell::text(text)
        }
    }

    /// A missing value.
    pub fn missing() -> Cell {
        Cell::text(MISSING)
    }
}

/// The stable name of each table (the site's anchors).
pub mod key {
    /// "Per agent".
    pub const PER_AGENT: &str = "agents";
    /// "Agents compared".
    pub const PAIRS: &str = "pairs";
    /// "By direction".
    pub const BY_DIRECTION: &str = "by-direction";
    /// "Did the agent run its port?".
    pub const RAN_PORT: &str = "ran-port";
    /// "Task × agent".
    pub const TASK_GRID: &str = "task-grid";
    /// "Claimed success against the verdict".
    pub const CLAIMS: &str = "claims";
    /// "Where the time went".
    pub const TIME: &str = "time";
    /// "Trials".
    pub const TRIALS: &str = "trial-list";
}

/// A table of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// Its stable name (one of [`key`]).
    pub key: &'static str,
    /// Its title: the heading of its section.
    pub title: &'static str,
    /// Its columns.
    pub columns: Vec<Column>,
    /// Its rows, each a cell per column.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    fn new(key: &'static str, title: &'static str, columns: Vec<Column>) -> Table {
        Table {
            key,
            title,
            columns,
            rows: Vec::new(),
        }
    }
}

/// A left-aligned column.
fn left(header: impl Into<String>) -> Column {
    Column {
        header: header.into(),
        align: Align::Left,
        emphasis: None,
        local_path: false,
    }
}

/// A right-aligned column.
fn right(header: impl Into<String>) -> Column {
    Column {
        align: Align::Right,
        ..left(header)
    }
}

/// Every table of the report that has something to show, in report.md's order; `tasks` in
/// `--task` order.
pub fn all(report: &Report, tasks: &[String]) -> Vec<Table> {
    [
        Some(per_agent(report)),
        pairs(report),
        by_direction(report),
        ran_port(report),
        Some(task_grid(report, tasks)),
        claims(report),
        Some(time(report)),
        Some(trials(report)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// An agent's label, as code.
fn agent(agent: &str) -> Cell {
    Cell::code(crate::agent::label(agent))
}

/// Seconds with one decimal, or missing.
fn secs(v: Option<f64>) -> Cell {
    v.map_or_else(Cell::missing, |v| Cell::text(format!("{v:.1}")))
}

/// `3/4 (75%)` and its interval `30–95%`; `0/0` and missing without a graded trial.
fn share_cells(share: &Share) -> [Cell; 2] {
    match share.rate {
        Some(rate) => [
            Cell::text(format!(
                "{}/{} ({:.0}%)",
                share.passed,
                share.graded,
                rate * 100.0
            )),
            Cell::text(percent_interval([share.low, share.high])),
        ],
        None => [Cell::text("0/0"), Cell::missing()],
    }
}

/// "Per agent": pass rates with their intervals, phases, failure classes, the median
/// duration, cost.
pub fn per_agent(report: &Report) -> Table {
    let failures = report.failure_columns();
    let mut columns = vec![
        left("agent"),
        right("trials"),
        right("graded"),
        right("passed"),
        right("pass rate"),
        right("95% interval"),
        right("phase 1"),
        right("phase 2"),
    ];
    columns.extend(failures.iter().map(|f| right(f.as_str())));
    columns.push(right("median duration (s)"));
    columns.push(right("cost (USD)"));
    let mut table = Table::new(key::PER_AGENT, "Per agent", columns);
    for a in &report.summary {
        let mut cells = vec![
            agent(&a.agent),
            Cell::text(a.trials.to_string()),
            Cell::text(a.graded.to_string()),
            Cell::text(a.passed.to_string()),
            Cell::text(format!("{:.0}%", a.pass_rate * 100.0)),
            Cell::text(percent_interval(a.pass_rate_ci95)),
            Cell::text(a.passed_phase1.to_string()),
            Cell::text(a.passed_phase2.to_string()),
        ];
        for failure in &failures {
            cells.push(Cell::text(
                a.failures.get(failure).copied().unwrap_or(0).to_string(),
            ));
        }
        cells.push(secs(median(
            report
                .trials
                .iter()
                .filter(|t| t.agent == a.agent)
                .map(|t| t.duration_s)
                .collect(),
        )));
        cells.push(
            a.cost_usd
                .map_or_else(Cell::missing, |c| Cell::text(format!("{c:.4}"))),
        );
        table.rows.push(cells);
    }
    table
}

/// The interval method of "Agents compared", in words.
pub fn pairs_method(method: IntervalMethod) -> &'static str {
    match method {
        IntervalMethod::Wilson => "Newcombe's score interval with continuity correction",
        IntervalMethod::Bootstrap => {
            "paired bootstrap over tasks, widened to hold Newcombe's interval"
        }
    }
}

/// "Agents compared": each pair's difference of pass rates; none with one agent.
pub fn pairs(report: &Report) -> Option<Table> {
    if report.pairs.is_empty() {
        return None;
    }
    let mut table = Table::new(
        key::PAIRS,
        "Agents compared",
        vec![
            left("a"),
            left("b"),
            right("difference"),
            right("95% interval"),
            left("distinguishable"),
        ],
    );
    for p in &report.pairs {
        table.rows.push(vec![
            agent(&p.a),
            agent(&p.b),
            p.difference
                .map_or_else(Cell::missing, |d| Cell::text(format!("{:+.1}", d * 100.0))),
            Cell::text(p.difference_ci95.map_or_else(
                || "no graded trial".to_string(),
                |[low, high]| format!("{:+.1} to {:+.1}", low * 100.0, high * 100.0),
            )),
            Cell::text(if p.distinguishable { "yes" } else { "no" }),
        ]);
    }
    Some(table)
}

/// "By direction": when the trials go both ways, each agent's pass rate per direction with
/// its 95% Wilson interval.
pub fn by_direction(report: &Report) -> Option<Table> {
    if report.by_direction.is_empty() {
        return None;
    }
    let directions = distinct(report.by_direction.iter().map(|l| l.migration.label()));
    let mut columns = vec![left("agent")];
    for label in &directions {
        columns.push(right(label.clone()));
        columns.push(right("95% interval"));
    }
    let mut table = Table::new(key::BY_DIRECTION, "By direction", columns);
    for name in distinct(report.by_direction.iter().map(|l| l.agent.clone())) {
        let mut cells = vec![if name == ALL_AGENTS {
            Cell::text("all agents")
        } else {
            agent(&name)
        }];
        for label in &directions {
            let line: Option<&DirectionLine> = report
                .by_direction
                .iter()
                .find(|l| l.agent == name && &l.migration.label() == label);
            cells.extend(line.map_or_else(
                || [Cell::text("0/0"), Cell::missing()],
                |l| share_cells(&l.share),
            ));
        }
        table.rows.push(cells);
    }
    Some(table)
}

/// "Did the agent run its port?": per agent and for all agents, the pass rate of the graded
/// trials whose agent ran its port against those whose agent did not; none when no graded
/// trial records it.
pub fn ran_port(report: &Report) -> Option<Table> {
    if !has_ran_port(report) {
        return None;
    }
    let mut table = Table::new(
        key::RAN_PORT,
        "Did the agent run its port?",
        vec![
            left("agent"),
            right("ran its port"),
            right("95% interval"),
            right("did not"),
            right("95% interval"),
            right("unknown"),
            right("difference"),
            right("95% interval"),
        ],
    );
    let last = report.ran_port.len().saturating_sub(1);
    for (i, line) in report.ran_port.iter().enumerate() {
        let name = if i == last && line.agent == ALL_AGENTS {
            Cell::text("all agents")
        } else {
            agent(&line.agent)
        };
        let mut cells = vec![name];
        cells.extend(share_cells(&line.ran));
        cells.extend(share_cells(&line.did_not));
        cells.push(Cell::text(line.unknown.to_string()));
        match line.difference {
            Some(d) => cells.extend([
                Cell::text(format!("{:+.1}", d.points)),
                Cell::text(format!("{:+.1} to {:+.1}", d.low, d.high)),
            ]),
            None => cells.extend([Cell::missing(), Cell::missing()]),
        }
        table.rows.push(cells);
    }
    Some(table)
}

/// The first trial of `task`.
fn first_trial<'a>(report: &'a Report, task: &str) -> Option<&'a TrialRow> {
    report.trials.iter().find(|t| t.task == task)
}

/// Whether some task of `tasks` was made from a public repository (its `[upstream]`).
pub fn has_upstream(report: &Report, tasks: &[String]) -> bool {
    tasks
        .iter()
        .any(|task| first_trial(report, task).is_some_and(|t| t.upstream.is_some()))
}

/// "Task × agent": passed / graded per task (in `tasks`' order) and agent, with the median
/// duration; the task's upstream repository when some task has one.
pub fn task_grid(report: &Report, tasks: &[String]) -> Table {
    let with_upstream = has_upstream(report, tasks);
    let mut columns = vec![left("task"), left("direction")];
    if with_upstream {
        columns.push(left("upstream"));
    }
    columns.extend(report.summary.iter().map(|a| Column {
        emphasis: Some(Emphasis::Code),
        ..right(crate::agent::label(&a.agent))
    }));
    let mut table = Table::new(key::TASK_GRID, "Task × agent", columns);
    for task in tasks {
        let trial = first_trial(report, task);
        let mut cells = vec![
            Cell::text(task.clone()),
            trial.map_or_else(Cell::missing, |t| Cell::text(t.migration.label())),
        ];
        if with_upstream {
            cells.push(
                trial
                    .and_then(|t| t.upstream.as_ref())
                    .map_or_else(Cell::missing, |u| Cell {
                        link: Some(u.url()),
                        ..Cell::text(u.label())
                    }),
            );
        }
        for a in &report.summary {
            let cell: Vec<&TrialRow> = report
                .trials
                .iter()
                .filter(|t| &t.task == task && t.agent == a.agent)
                .collect();
            let graded = cell.iter().filter(|t| t.graded()).count();
            let passed = cell.iter().filter(|t| t.passed).count();
            cells.push(if cell.is_empty() {
                Cell::missing()
            } else {
                Cell::text(format!(
                    "{passed}/{graded} ({}) · {}",
                    percent_interval(stats::wilson(passed, graded)),
                    secs(median(cell.iter().map(|t| t.duration_s).collect())).text
                ))
            });
        }
        table.rows.push(cells);
    }
    table
}

/// "Claimed success against the verdict": claims, overclaims, success claimed unrun; none
/// when no graded phase records a claim.
pub fn claims(report: &Report) -> Option<Table> {
    if !has_claims(report) {
        return None;
    }
    let mut table = Table::new(
        key::CLAIMS,
        "Claimed success against the verdict",
        vec![
            left("agent"),
            right("claims"),
            right("overclaims"),
            right("overclaim rate"),
            right("claimed success without running the port"),
        ],
    );
    for a in &report.summary {
        let unrun = report
            .ran_port
            .iter()
            .find(|l| l.agent == a.agent)
            .and_then(|l| l.claimed_without_running);
        table.rows.push(vec![
            agent(&a.agent),
            Cell::text(a.claims.to_string()),
            Cell::text(a.overclaims.to_string()),
            a.overclaim_rate
                .map_or_else(Cell::missing, |r| Cell::text(format!("{:.0}%", r * 100.0))),
            unrun.map_or_else(Cell::missing, |n| Cell::text(n.to_string())),
        ]);
    }
    Some(table)
}

/// "Where the time went": median seconds per trial, split into agent, verify and the rest.
pub fn time(report: &Report) -> Table {
    let mut table = Table::new(
        key::TIME,
        "Where the time went",
        vec![
            left("agent"),
            right("trial"),
            right("agent"),
            right("verify"),
            right("overhead"),
        ],
    );
    for a in &report.summary {
        let timed: Vec<Timing> = report
            .trials
            .iter()
            .filter(|t| t.agent == a.agent)
            .filter_map(|t| t.timing)
            .collect();
        let column = |f: &dyn Fn(&Timing) -> f64| {
            median(timed.iter().map(f).collect())
                .map_or_else(Cell::missing, |v| Cell::text(format!("{v:.2}")))
        };
        table.rows.push(vec![
            agent(&a.agent),
            column(&|t| t.wall_s),
            column(&|t| t.agent_s),
            column(&|t| t.verify_s),
            column(&|t| (t.wall_s - t.agent_s - t.verify_s).max(0.0)),
        ]);
    }
    table
}

/// A trial's verdict: `PASS (phase 1)`, `FAIL crash`.
pub fn verdict(t: &TrialRow) -> String {
    match (&t.failure, t.passed_in_phase) {
        (None, Some(p)) => format!("PASS (phase {p})"),
        (None, None) => "PASS".to_string(),
        (Some(f), _) => format!("FAIL {}", f.as_str()),
    }
}

/// The column of [`trials`] that holds the verdict (the site links it to the trial's page).
pub const TRIAL_VERDICT_COLUMN: usize = 3;

/// "Trials": one row per trial folder, in the report's order; a trial run by a scheduler
/// (Slurm) names its job and how long it waited in the queue.
pub fn trials(report: &Report) -> Table {
    let jobs = report.trials.iter().any(|t| t.job_id.is_some());
    let mut columns = vec![
        left("task"),
        left("agent"),
        right("repeat"),
        left("verdict"),
        right("duration (s)"),
    ];
    if jobs {
        columns.extend([left("job"), right("queue wait (s)")]);
    }
    columns.push(Column {
        local_path: true,
        ..left("run folder")
    });
    let mut table = Table::new(key::TRIALS, "Trials", columns);
    for t in &report.trials {
        let mut cells = vec![
            Cell::text(t.task.clone()),
            agent(&t.agent),
            Cell::text(t.repeat.to_string()),
            Cell::text(verdict(t)),
            Cell::text(format!("{:.1}", t.duration_s)),
        ];
        if jobs {
            cells.push(t.job_id.clone().map_or_else(Cell::missing, Cell::text));
            cells.push(
                t.queue_s
                    .map_or_else(Cell::missing, |q| Cell::text(format!("{q:.1}"))),
            );
        }
        cells.push(Cell::code(t.run_dir.clone()));
        table.rows.push(cells);
    }
    table
}
