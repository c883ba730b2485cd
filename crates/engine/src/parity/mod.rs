//! The numeric parity probe (SPEC §3a): the task's `[parity] command` runs in a clean copy of
//! the source and in the port's verify copy, each side records named arrays with the shipped
//! helper ([`HELPER`], `xstack_parity.py`), and the two archives are compared name by name in
//! the source's order; the first name that fails is where the port diverges. `npz.rs` reads
//! the archives, `compare.rs` compares them, `probe.rs` runs both sides. The probe explains a
//! verdict; it never changes one.

mod compare;
mod npz;
mod probe;

use serde::{Deserialize, Serialize};

pub use compare::compare;
pub use npz::read_npz;
pub use probe::{
    PROBE_DIR, ProbePlan, ProbeProgress, ProbeSide, SourceRecord, run_port, run_probe, run_source,
};

/// The helper both sides may import (`import xstack_parity`): `record(name, array)` and
/// `load_inputs()`; xstack writes it next to each side's copy and puts it on PYTHONPATH.
pub const HELPER: &str = include_str!("xstack_parity.py");

/// A side of the probe: the source in its reference environment, or the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParitySide {
    /// The source's clean copy.
    Source,
    /// The port's verify copy.
    Port,
}

impl ParitySide {
    /// `source` or `port`.
    pub fn as_str(self) -> &'static str {
        match self {
            ParitySide::Source => "source",
            ParitySide::Port => "port",
        }
    }
}

/// The helper's module file name.
pub const HELPER_FILE: &str = "xstack_parity.py";

/// The archive member in which the helper lists the arrays with the caller's file and line.
pub const MANIFEST: &str = "__xstack_parity__.json";

/// Why an archive could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ParityError {
    /// The archive is missing, not a zip file, or holds an array xstack cannot read.
    #[error("{file}: {message}")]
    Read {
        /// The archive.
        file: String,
        /// What is wrong with it.
        message: String,
    },
}

/// Where a probe recorded a tensor: the file (relative to the side's copy) and line of the
/// `record` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// The file, relative to the copy the probe ran in.
    pub file: String,
    /// The 1-based line.
    pub line: u32,
}

/// The values of one array: floats as f64, booleans and integers exactly.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// Float arrays (any width).
    Float(Vec<f64>),
    /// Boolean and integer arrays.
    Int(Vec<i128>),
}

impl Values {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Values::Float(v) => v.len(),
            Values::Int(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One recorded array.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Its name.
    pub name: String,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Its dtype as NumPy names it (`float32`, `int64`, `bool`), or as the probe's framework
    /// did when the helper recorded it.
    pub dtype: String,
    /// The values, in C order.
    pub values: Values,
    /// Where it was recorded, when the helper recorded it.
    pub location: Option<Location>,
}

/// The comparison of one source tensor with the port's of the same name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorReport {
    /// The name.
    pub name: String,
    /// The source's shape.
    pub shape: Vec<u64>,
    /// The source's dtype.
    pub dtype: String,
    /// The port's shape, when it differs.
    pub port_shape: Option<Vec<u64>>,
    /// The port's dtype, when it differs.
    pub port_dtype: Option<String>,
    /// The largest `|port - source|` over the elements where both are finite.
    pub max_abs: Option<f64>,
    /// The largest `|port - source| / |source|` over the elements where both are finite and
    /// the source is not zero.
    pub max_rel: Option<f64>,
    /// Whether every element passes.
    pub passed: bool,
    /// Why it fails, in words, when it does.
    pub problem: Option<String>,
    /// Where the source recorded it.
    pub source_location: Option<Location>,
    /// Where the port recorded it (the migrated code that produces it).
    pub port_location: Option<Location>,
}

/// The first tensor that fails, in the source's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Divergence {
    /// Its name.
    pub name: String,
    /// Its largest absolute error, when the values could be compared.
    pub max_abs: Option<f64>,
    /// Its largest relative error, when the values could be compared.
    pub max_rel: Option<f64>,
}

/// What a probe found (`result.json`'s per-phase `parity`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParityReport {
    /// How many of the source's tensors were compared.
    pub compared: usize,
    /// Whether both sides ran and every tensor passed.
    pub passed: bool,
    /// The first failing tensor, in the source's order.
    pub first_divergent: Option<Divergence>,
    /// Every tensor of the source, in its order.
    pub tensors: Vec<TensorReport>,
    /// Names the port recorded that the source did not (reported, not failed).
    #[serde(default)]
    pub extra: Vec<String>,
    /// Why the probe could not run or finish: a side that crashed, timed out or wrote no
    /// file; null when both ran.
    pub error: Option<String>,
}

impl ParityReport {
    /// A probe that produced nothing to compare.
    pub fn failed(error: String) -> ParityReport {
        ParityReport {
            compared: 0,
            passed: false,
            first_divergent: None,
            tensors: Vec::new(),
            extra: Vec::new(),
            error: Some(error),
        }
    }

    /// What it found, in the words every painter heads it with: `could not run: …`,
    /// `diverges first at h2 (6 of 8 tensors match)`, `all 8 tensors match`.
    pub fn headline(&self) -> String {
        match (&self.error, &self.first_divergent) {
            (Some(error), _) => format!("could not run: {error}"),
            (None, Some(first)) => format!(
                "diverges first at {} ({} of {} tensors match)",
                first.name,
                self.tensors.iter().filter(|t| t.passed).count(),
                self.compared
            ),
            (None, None) => format!("all {} tensors match", self.compared),
        }
    }

    /// A row per tensor of the source, in its order, with what each painter shows of it.
    pub fn rows(&self) -> Vec<ParityRow<'_>> {
        let first = self.first_divergent.as_ref().map(|d| d.name.as_str());
        self.tensors
            .iter()
            .map(|t| {
                let is_first = Some(t.name.as_str()) == first;
                ParityRow {
                    name: &t.name,
                    passed: t.passed,
                    first: is_first,
                    shape: format!("{:?} {}", t.shape, t.dtype),
                    errors: match (t.max_abs, t.max_rel) {
                        (Some(abs), Some(rel)) => {
                            Some(format!("max abs {}  max rel {}", short(abs), short(rel)))
                        }
                        _ => None,
                    },
                    problem: t.problem.as_deref().filter(|_| !t.passed || is_first),
                    port_at: t
                        .port_location
                        .as_ref()
                        .filter(|_| is_first)
                        .map(|at| format!("{}:{}", at.file, at.line)),
                }
            })
            .collect()
    }

    /// The names the port recorded that the source did not, as a line; None when none.
    pub fn also_recorded(&self) -> Option<String> {
        (!self.extra.is_empty())
            .then(|| format!("the port also recorded: {}", self.extra.join(", ")))
    }

    /// One line for progress output, notes and phase two's prompt: the headline, with the
    /// first divergent tensor's problem and errors.
    pub fn summary(&self) -> String {
        if let Some(error) = &self.error {
            let mut line = format!("parity probe could not run: {error}");
            if let Some(d) = &self.first_divergent {
                line.push_str(&format!(" (first divergent so far: {})", d.name));
            }
            return line;
        }
        match &self.first_divergent {
            None => format!("parity: {}", self.headline()),
            Some(d) => {
                let mut why = self
                    .tensors
                    .iter()
                    .find(|t| t.name == d.name)
                    .and_then(|t| t.problem.clone())
                    .unwrap_or_default();
                if let (Some(abs), Some(rel)) = (d.max_abs, d.max_rel) {
                    why.push_str(&format!(", max abs {} max rel {}", short(abs), short(rel)));
                }
                format!(
                    "parity: the port diverges first at `{}` ({why}); {} of {} tensors match",
                    d.name,
                    self.tensors.iter().filter(|t| t.passed).count(),
                    self.compared
                )
            }
        }
    }
}

/// One tensor of a [`ParityReport`] as the painters show it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParityRow<'a> {
    /// Its name.
    pub name: &'a str,
    /// Whether every element passed.
    pub passed: bool,
    /// Whether it is the first divergent tensor.
    pub first: bool,
    /// The source's shape and dtype: `[2, 3] float32`.
    pub shape: String,
    /// `max abs 0.1  max rel 0.2`, when the values could be compared.
    pub errors: Option<String>,
    /// Why it fails: shown for a failing tensor.
    pub problem: Option<&'a str>,
    /// Where the port records the first divergent tensor, `file:line`.
    pub port_at: Option<String>,
}

/// The report as lines for a terminal: a line per tensor (✓ or ✗, name, shape, dtype, errors,
/// why it fails), the first divergent one marked, then the summary.
pub fn render_text(report: &ParityReport) -> String {
    let rows = report.rows();
    let width = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for row in &rows {
        let mark = if row.passed { "✓" } else { "✗" };
        let mut line = format!(
            "{mark} {:width$}  {}  {}",
            row.name,
            row.shape,
            row.errors.as_deref().unwrap_or("")
        );
        if row.first {
            line.push_str("  <- first divergent");
            if let Some(problem) = row.problem {
                line.push_str(&format!(": {problem}"));
            }
            if let Some(at) = &row.port_at {
                line.push_str(&format!(" (the port records it at {at})"));
            }
        } else if let Some(problem) = row.problem {
            line.push_str(&format!("  {problem}"));
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    if let Some(extra) = report.also_recorded() {
        text.push_str(&extra);
        text.push('\n');
    }
    text.push_str(&report.summary());
    text.push('\n');
    text
}

/// A number for people: four significant digits.
pub fn short(value: f64) -> String {
    if value == 0.0 {
        "0".to_string()
    } else if (1e-3..1e4).contains(&value.abs()) {
        format!("{value:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{value:.3e}")
    }
}

#[cfg(test)]
mod tests;
