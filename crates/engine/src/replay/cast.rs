//! asciicast v2 export of a recorded terminal pane: a header with width, height and title,
//! `o` events with non-decreasing times, `r` on resize, `m` markers at phase changes.

use std::io::Write;

use serde_json::json;

use crate::event::{Event, TerminalPane};
use crate::journal::Journal;
use crate::session::state::{DEFAULT_COLS, DEFAULT_ROWS};

/// Which pane to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum CastPane {
    /// The agent's terminal.
    Agent,
    /// The verify run's terminal.
    Run,
}

impl CastPane {
    /// The name `--pane` takes: `agent` or `run`.
    pub fn as_str(self) -> &'static str {
        match self {
            CastPane::Agent => "agent",
            CastPane::Run => "run",
        }
    }
}

/// Writes the asciicast of `pane` to `out`; returns the number of output events.
pub fn export(journal: &Journal, pane: CastPane, out: &mut dyn Write) -> std::io::Result<usize> {
    let size = journal.entries.iter().find_map(|e| match (&e.event, pane) {
        (Event::AgentStarted { cols, rows, .. }, CastPane::Agent)
        | (Event::RunStarted { cols, rows, .. }, CastPane::Run) => Some((*cols, *rows)),
        _ => None,
    });
    let (width, height) = size.unwrap_or((DEFAULT_COLS, DEFAULT_ROWS));
    let timestamp = chrono::DateTime::parse_from_rfc3339(&journal.header.started_at)
        .map(|d| d.timestamp())
        .unwrap_or(0);
    let pane_name = match pane {
        CastPane::Agent => "agent",
        CastPane::Run => "run log",
    };
    let header = json!({
        "version": 2,
        "width": width,
        "height": height,
        "timestamp": timestamp,
        "title": format!("xstack {} — {} ({pane_name})", journal.header.task, journal.header.run_id),
    });
    writeln!(out, "{header}")?;
    let mut last = 0.0f64;
    let mut outputs = 0;
    let mut current = (width, height);
    let mut line = |t: f64, kind: &str, data: String, out: &mut dyn Write| -> std::io::Result<()> {
        last = last.max(t);
        let t = (last * 1_000_000.0).round() / 1_000_000.0;
        writeln!(out, "{}", json!([t, kind, data]))
    };
    for entry in &journal.entries {
        match (&entry.event, pane) {
            (Event::AgentOutput { text }, CastPane::Agent)
            | (Event::RunOutput { text }, CastPane::Run) => {
                line(entry.t, "o", text.clone(), out)?;
                outputs += 1;
            }
            (Event::AgentStarted { cols, rows, .. }, CastPane::Agent)
            | (Event::RunStarted { cols, rows, .. }, CastPane::Run)
            | (
                Event::Resized {
                    pane: TerminalPane::Agent,
                    cols,
                    rows,
                },
                CastPane::Agent,
            )
            | (
                Event::Resized {
                    pane: TerminalPane::Run,
                    cols,
                    rows,
                },
                CastPane::Run,
            ) if (*cols, *rows) != current => {
                current = (*cols, *rows);
                line(entry.t, "r", format!("{cols}x{rows}"), out)?;
            }
            (Event::Stage(at), _) if at.is_step() => {
                if let Some(text) = crate::session::progress::describe_at(*at) {
                    line(entry.t, "m", text, out)?;
                }
            }
            (Event::Graded { phase, verdict, .. }, _) => line(
                entry.t,
                "m",
                format!("phase {phase}: {}", verdict.label()),
                out,
            )?,
            _ => {}
        }
    }
    Ok(outputs)
}
