//! Live progress of a bench: on a terminal, a compact table redrawn in place (trials done,
//! running and queued, passes per agent, elapsed time and an estimate of the rest); otherwise
//! one line per finished trial.

use std::io::Write;
use std::time::{Duration, Instant};

use super::report::{NoVerdict, TrialFailure, TrialRow};

/// A trial that is running now.
#[derive(Debug, Clone)]
pub struct RunningTrial {
    /// `task × agent #repeat`.
    pub label: String,
    /// Where it is: `phase 1 verify`.
    pub stage: String,
    /// When it started.
    pub since: Instant,
}

#[derive(Debug, Clone)]
struct AgentCount {
    agent: String,
    done: usize,
    passed: usize,
}

/// The progress display.
#[derive(Debug)]
pub struct Progress {
    live: bool,
    started: Instant,
    total: usize,
    done: usize,
    finished_now: usize,
    agents: Vec<AgentCount>,
    drawn: usize,
}

/// `m:ss`, or `h:mm:ss` past an hour.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// A trial's verdict in a word or two.
pub fn verdict(row: &TrialRow) -> String {
    match (row.failure, row.passed_in_phase) {
        (None, Some(p)) => format!("PASS in phase {p}"),
        (None, None) => "PASS".to_string(),
        (Some(TrialFailure::NoVerdict(NoVerdict::Infra)), _) => "INFRA failure".to_string(),
        (Some(TrialFailure::NoVerdict(NoVerdict::Interrupted)), _) => "INTERRUPTED".to_string(),
        (Some(TrialFailure::NoVerdict(NoVerdict::Timeout)), _) => "TIMEOUT".to_string(),
        (Some(f), _) => format!("FAIL {}", f.as_str()),
    }
}

impl Progress {
    /// A display for `total` trials of `agents`, of which `earlier` were done before.
    pub fn new(live: bool, total: usize, agents: &[String], earlier: &[TrialRow]) -> Progress {
        let mut progress = Progress {
            live,
            started: Instant::now(),
            total,
            done: 0,
            finished_now: 0,
            agents: agents
                .iter()
                .map(|a| AgentCount {
                    agent: a.clone(),
                    done: 0,
                    passed: 0,
                })
                .collect(),
            drawn: 0,
        };
        for row in earlier {
            progress.count(row);
        }
        progress
    }

    fn count(&mut self, row: &TrialRow) {
        self.done += 1;
        if let Some(a) = self.agents.iter_mut().find(|a| a.agent == row.agent) {
            a.done += 1;
            a.passed += usize::from(row.passed);
        }
    }

    /// Records a finished trial; without a terminal, prints its line to `out`.
    pub fn finished(&mut self, row: &TrialRow, extra: &str, out: &mut dyn Write) {
        self.count(row);
        self.finished_now += 1;
        if !self.live {
            let _ = writeln!(
                out,
                "[{:>8}] {}/{} {} × {} #{}: {} ({:.1} s){extra}",
                clock(self.started.elapsed()),
                self.done,
                self.total,
                row.task,
                crate::agent::label(&row.agent),
                row.repeat,
                verdict(row),
                row.duration_s,
            );
            let _ = out.flush();
        }
    }

    /// The estimated time left, once a trial has finished in this invocation.
    fn eta(&self, remaining: usize) -> Option<Duration> {
        (self.finished_now > 0).then(|| {
            self.started
                .elapsed()
                .mul_f64(remaining as f64 / self.finished_now as f64)
        })
    }

    /// The table's lines.
    pub fn table(&self, running: &[RunningTrial], queued: usize, width: usize) -> Vec<String> {
        let eta = self
            .eta(running.len() + queued)
            .map_or_else(|| "–".to_string(), clock);
        let mut lines = vec![format!(
            "bench: {}/{} done · {} running · {} queued · elapsed {} · ETA {eta}",
            self.done,
            self.total,
            running.len(),
            queued,
            clock(self.started.elapsed()),
        )];
        let name_width = self
            .agents
            .iter()
            .map(|a| crate::agent::label(&a.agent).chars().count())
            .max()
            .unwrap_or(5)
            .clamp(5, 40);
        lines.push(format!("  {:<name_width$}  done  passed", "agent"));
        for a in &self.agents {
            lines.push(format!(
                "  {:<name_width$}  {:>4}  {:>6}",
                crate::agent::label(&a.agent),
                a.done,
                a.passed
            ));
        }
        for r in running {
            lines.push(format!(
                "  ▶ {} · {} · {}",
                r.label,
                r.stage,
                clock(r.since.elapsed())
            ));
        }
        lines
            .into_iter()
            .map(|l| l.chars().take(width.max(20)).collect())
            .collect()
    }

    /// Redraws the live table in place (on a terminal only).
    pub fn draw(&mut self, running: &[RunningTrial], queued: usize, out: &mut dyn Write) {
        if !self.live {
            return;
        }
        let width = crossterm::terminal::size().map_or(100, |(w, _)| usize::from(w));
        let lines = self.table(running, queued, width.saturating_sub(1));
        self.clear(out);
        for line in &lines {
            let _ = writeln!(out, "{line}");
        }
        self.drawn = lines.len();
        let _ = out.flush();
    }

    /// Removes the live table (before the final lines).
    pub fn clear(&mut self, out: &mut dyn Write) {
        if self.live && self.drawn > 0 {
            // Up to the table's first line, then erase to the end of the screen.
            let _ = write!(out, "\x1b[{}F\x1b[J", self.drawn);
            self.drawn = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::Migration;

    fn row(agent: &str, failure: Option<&str>) -> TrialRow {
        TrialRow {
            task: "t".into(),
            migration: Migration::default(),
            upstream: None,
            agent: agent.into(),
            repeat: 2,
            passed: failure.is_none(),
            passed_in_phase: failure.is_none().then_some(1),
            failure: failure.map(|f| TrialFailure::parse(f).expect("a failure's name")),
            duration_s: 4.25,
            run_dir: "x".into(),
            runner: None,
            job_id: None,
            queue_s: None,
            ran_port: None,
            agent_outcome: Vec::new(),
            timing: None,
        }
    }

    #[test]
    fn without_a_terminal_each_finished_trial_is_one_line() {
        let agents = vec!["script:a/pass.jsonl".to_string(), "cmd:b".to_string()];
        let mut p = Progress::new(false, 4, &agents, &[row("cmd:b", Some("crash"))]);
        let mut out = Vec::new();
        p.finished(&row("script:a/pass.jsonl", None), "", &mut out);
        p.finished(&row("cmd:b", Some("infra")), " (runner down)", &mut out);
        p.draw(&[], 0, &mut out);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].ends_with("2/4 t × script:pass.jsonl #2: PASS in phase 1 (4.2 s)"),
            "{text}"
        );
        assert!(
            lines[1].ends_with("3/4 t × cmd:b #2: INFRA failure (4.2 s) (runner down)"),
            "{text}"
        );
    }

    #[test]
    fn the_table_shows_counts_per_agent_and_the_running_trials() {
        let agents = vec!["script:a/pass.jsonl".to_string()];
        let mut p = Progress::new(true, 3, &agents, &[]);
        p.finished(&row("script:a/pass.jsonl", None), "", &mut Vec::new());
        let running = vec![RunningTrial {
            label: "t × script:pass.jsonl #2".into(),
            stage: "phase 1 verify".into(),
            since: Instant::now(),
        }];
        let lines = p.table(&running, 1, 200);
        assert!(
            lines[0].starts_with("bench: 1/3 done · 1 running · 1 queued · elapsed 0:00 · ETA")
        );
        assert!(lines[2].contains("script:pass.jsonl") && lines[2].ends_with("   1       1"));
        assert!(lines[3].contains("▶ t × script:pass.jsonl #2 · phase 1 verify · 0:00"));
    }
}
