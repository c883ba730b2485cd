//! The `task.toml` text `xstack init` proposes: every section of SPEC §2 it can fill, with
//! comments saying where each value came from.

use crate::calibrate::{Suggestion, toml_string};
use crate::task::{ClaimSpec, Direction, MetricSpec, Migration};

use super::repo::Settings;
use super::upstream::Provenance;

/// One criterion of the proposal.
#[derive(Debug, Clone)]
pub struct ProposedCriterion {
    /// The metric name.
    pub metric: String,
    /// The direction.
    pub direction: Direction,
    /// Why that direction (`--direction`, or the name).
    pub direction_reason: String,
    /// The published value and tolerance.
    pub suggestion: Suggestion,
    /// The numbers behind them, as comment lines without `# `.
    pub evidence: Vec<String>,
    /// A line of the log that prints the metric.
    pub example: String,
    /// The `[criterion.claim]` table: what the authors published and whether the runs
    /// reproduced it.
    pub claim: Option<ClaimSpec>,
}

/// Everything the task file says.
#[derive(Debug, Clone)]
pub struct Proposal {
    /// Task id.
    pub id: String,
    /// Title.
    pub title: String,
    /// `[source] path`, relative to the task folder or absolute.
    pub source_path: String,
    /// The repository as the user named it.
    pub repo_display: String,
    /// `[published] citation`.
    pub citation: String,
    /// `[migration]`: the direction.
    pub migration: Migration,
    /// Why that direction, in words.
    pub migration_from: String,
    /// `[env] packages`.
    pub packages: Vec<String>,
    /// Where they came from, in words.
    pub target_from: String,
    /// `[env] reference_packages`.
    pub reference_packages: Vec<String>,
    /// Where the reference packages came from.
    pub packages_from: String,
    /// `[env] setup`, when given.
    pub setup: Option<String>,
    /// Why `setup` puts the repository on PYTHONPATH, when it does.
    pub own_packages_note: Option<String>,
    /// Why the run needs the network, when it fetches at run time: `[run] network = true`
    /// is written under it.
    pub network_note: Option<String>,
    /// `[run] command` (for a notebook, the command that runs it).
    pub command: String,
    /// `[run] notebook`, written instead of the command when the experiment is a notebook.
    pub notebook: Option<String>,
    /// `[run] cells`, written under the notebook when given.
    pub cells: Option<String>,
    /// A comment over `[run] command` (why it sets the repository's seed option).
    pub command_note: Option<String>,
    /// `[run] timeout_s`.
    pub timeout_s: u64,
    /// The `[[metric]]`s, with the style each was found in.
    pub metrics: Vec<(MetricSpec, String)>,
    /// The `[[criterion]]`s.
    pub criteria: Vec<ProposedCriterion>,
    /// The `[integrity] seed_check = true` block, when the runs moved a criterion value.
    pub integrity: Option<String>,
    /// What the run does with its seed, for `[phase2]`.
    pub seed_note: String,
    /// Hyper-parameters for the `[phase2]` skeleton.
    pub settings: Vec<Settings>,
    /// The `[parity]` section as a comment, when init proposes a probe.
    pub parity_note: Option<String>,
    /// `[upstream]`, or what could not be told of it.
    pub upstream: Provenance,
}

/// The `[criterion.claim]` table of `claim`, under the `[[criterion]]` it belongs to.
pub fn claim_block(claim: &ClaimSpec) -> String {
    let mut out = String::from("[criterion.claim]\n");
    if let Some(text) = &claim.text {
        out.push_str(&format!("text = {}\n", toml_string(text)));
    }
    if let Some(at) = &claim.location {
        out.push_str(&format!("where = {}\n", toml_string(at)));
    }
    if let Some(value) = claim.value {
        out.push_str(&format!("value = {}\n", toml_float(value)));
    }
    if !claim.unit.is_empty() {
        out.push_str(&format!("unit = {}\n", toml_string(&claim.unit)));
    }
    out.push_str(&format!("status = \"{}\"\n", claim.status.as_str()));
    if let Some(m) = &claim.measured {
        let machine = m.machine.as_ref().map_or_else(String::new, |machine| {
            format!(", machine = {}", toml_string(machine))
        });
        out.push_str(&format!(
            "measured = {{ runs = {}, mean = {}, std = {}, date = {}, versions = {}{machine} }}\n",
            m.runs,
            toml_float(m.mean),
            toml_float(m.std),
            toml_string(&m.date),
            toml_string(&m.versions),
        ));
    }
    out
}

/// A float as TOML writes one: `81.0`, not `81`.
fn toml_float(v: f64) -> String {
    let s = v.to_string();
    if s.contains(['.', 'e', 'E', 'n', 'i']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// A TOML string for a regex: a literal string when it can be one, else a basic string.
fn toml_regex(re: &str) -> String {
    if re.contains('\'') || re.contains('\n') {
        toml_string(re)
    } else {
        format!("'{re}'")
    }
}

/// A TOML multi-line basic string.
fn toml_multiline(text: &str) -> String {
    let mut out = String::from("\"\"\"");
    let mut quotes = 0;
    for ch in text.chars() {
        if ch == '"' {
            quotes += 1;
            if quotes == 3 {
                out.push_str("\\\"");
                quotes = 0;
                continue;
            }
        } else {
            quotes = 0;
        }
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' | '\t' => out.push(ch),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    if out.ends_with('"') {
        out.push_str("\\\n");
    }
    out.push_str("\"\"\"");
    out
}

fn toml_list(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| toml_string(s)).collect();
    format!("[{}]", inner.join(", "))
}

/// The `[phase2] details` skeleton: what init found, for the task author to complete.
pub fn phase2_details(p: &Proposal) -> String {
    let mut text = format!(
        "The experiment, as `{}` runs it. Found by xstack init; keep what the published \
         result depends on and add what it missed (data and split, preprocessing, model and \
         initialisation, optimizer and schedule, evaluation protocol):\n",
        p.command
    );
    for s in &p.settings {
        let items: Vec<String> = s
            .items
            .iter()
            .map(|(k, v)| {
                if k.starts_with('-') {
                    format!("{k} {v}")
                } else {
                    format!("{k} = {v}")
                }
            })
            .collect();
        text.push_str(&format!("- {}: {}\n", s.source, items.join(", ")));
    }
    text.push_str(&format!("- seed: {}\n", p.seed_note));
    for c in &p.criteria {
        text.push_str(&format!(
            "- output: `{}` is read from lines like `{}`; the published value is {} ({}, \
             tolerance {}).\n",
            c.metric,
            c.example.trim(),
            c.suggestion.published_toml(),
            match c.direction {
                Direction::Higher => "higher is better",
                Direction::Lower => "lower is better",
                Direction::Within => "to be matched",
            },
            c.suggestion.tolerance_toml()
        ));
    }
    text.trim_end().to_string()
}

/// `[upstream]` (SPEC §2d): the table when every field was found, else the table as a comment
/// under what could not be told.
pub fn upstream_block(provenance: &Provenance) -> String {
    let (u, missing) = match provenance {
        Provenance::Found(u) => (u, None),
        Provenance::Unknown { partial, missing } => (partial, Some(missing)),
    };
    let changed = if u.changed.is_empty() {
        "[]".to_string()
    } else {
        let lines: String = u
            .changed
            .iter()
            .map(|c| format!("    {},\n", toml_string(c)))
            .collect();
        format!("[\n{lines}]")
    };
    let table = format!(
        "[upstream]\nrepository = {}\ncommit = {}\nlicence = {}\nexperiment = {}\nchanged = {changed}\n",
        toml_string(&u.repository),
        toml_string(&u.commit),
        toml_string(&u.licence),
        toml_string(&u.experiment),
    );
    match missing {
        None => format!(
            "# Where the repository comes from (SPEC §2d): its git remote `origin`, HEAD and licence\n\
             # file; `changed` is what the checkout changed since that commit.\n{table}\n"
        ),
        Some(missing) => {
            let commented: String = table.lines().map(|l| format!("# {l}\n")).collect();
            format!(
                "# [upstream] (SPEC §2d) is not written: xstack init could not tell {}. For a task\n\
                 # made from a public repository, fill it in and uncomment it.\n{commented}\n",
                missing.join(", ")
            )
        }
    }
}

/// The whole `task.toml`.
pub fn task_toml(p: &Proposal) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "# Made by `xstack init {}`. Review it: the metrics, criteria and [phase2] are proposals.\n",
        p.repo_display
    ));
    out.push_str(&format!("id = {}\n", toml_string(&p.id)));
    out.push_str(&format!("title = {}\n\n", toml_string(&p.title)));
    out.push_str(&format!(
        "[source]\npath = {}\n\n",
        toml_string(&p.source_path)
    ));
    out.push_str(&upstream_block(&p.upstream));
    out.push_str(&format!(
        "# {}\n[migration]\nfrom = {}\nto = {}\n\n",
        p.migration_from,
        toml_string(p.migration.from.as_str()),
        toml_string(p.migration.to.as_str())
    ));
    out.push_str(&format!(
        "[published]\ncitation = {}\n\n",
        toml_string(&p.citation)
    ));
    out.push_str("[env]\n");
    out.push_str(&format!("# {}\n", p.target_from));
    out.push_str(&format!("packages = {}\n", toml_list(&p.packages)));
    for line in p.packages_from.lines() {
        out.push_str(&format!("# {line}\n"));
    }
    out.push_str(&format!(
        "reference_packages = {}\n",
        toml_list(&p.reference_packages)
    ));
    if let Some(setup) = &p.setup {
        match &p.own_packages_note {
            Some(note) => {
                out.push_str(&format!("# Its first line: {note}."));
                if setup.contains('\n') {
                    out.push_str(" The rest, from --setup: run before the command in every run.");
                }
                out.push('\n');
            }
            None => out.push_str("# From --setup: run before the command in every run.\n"),
        }
        out.push_str(&format!("setup = {}\n", toml_string(setup)));
    }
    out.push('\n');
    out.push_str("[run]\n");
    if let Some(note) = &p.command_note {
        out.push_str(&format!("# {note}\n"));
    }
    let entry = match (&p.notebook, &p.cells) {
        (Some(notebook), Some(cells)) => format!(
            "notebook = {}\ncells = {}",
            toml_string(notebook),
            toml_string(cells)
        ),
        (Some(notebook), None) => format!("notebook = {}", toml_string(notebook)),
        (None, _) => format!("command = {}", toml_string(&p.command)),
    };
    out.push_str(&format!("{entry}\ntimeout_s = {}\n", p.timeout_s));
    if let Some(note) = &p.network_note {
        out.push_str(&format!(
            "# {}\nnetwork = true\n",
            note.trim_end_matches('.')
        ));
    }
    for (m, style) in &p.metrics {
        out.push_str(&format!(
            "\n# Found as {style}.\n[[metric]]\nname = {}\n",
            toml_string(&m.name)
        ));
        if let Some(re) = &m.regex {
            out.push_str(&format!("regex = {}\n", toml_regex(re)));
        }
        if let Some(key) = &m.json_key {
            out.push_str(&format!("json_key = {}\n", toml_string(key)));
        }
        if let Some(key) = &m.step_key {
            out.push_str(&format!("step_key = {}\n", toml_string(key)));
        }
    }
    for c in &p.criteria {
        out.push('\n');
        for line in &c.evidence {
            out.push_str(&format!("# {line}\n"));
        }
        out.push_str(&format!("# Direction {}.\n", c.direction_reason));
        out.push_str(&crate::calibrate::criterion_block(
            &c.metric,
            crate::task::Reduce::Last,
            c.direction,
            &c.suggestion,
        ));
        if let Some(claim) = &c.claim {
            out.push_str(&claim_block(claim));
        }
    }
    if let Some(block) = &p.integrity {
        out.push('\n');
        out.push_str(block);
    }
    out.push_str(&format!(
        "\n[phase2]\ndetails = {}\n\n[reference]\nlog = \"reference.log\"\n",
        toml_multiline(&phase2_details(p))
    ));
    if let Some(note) = &p.parity_note {
        out.push('\n');
        out.push_str(note);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_survive_toml() {
        #[derive(serde::Deserialize)]
        struct Doc {
            a: String,
            b: String,
            c: String,
        }
        let tricky = "say \"\"\"hi\"\"\" \\ back\\slash\tand \u{7} end\"";
        let text = format!(
            "a = {}\nb = {}\nc = {}\n",
            toml_multiline(tricky),
            toml_regex(r"it's (?P<value>\d+)"),
            toml_regex(r"a\s+(?P<value>\d+)")
        );
        let doc: Doc = toml::from_str(&text).unwrap();
        assert_eq!(doc.a, tricky);
        assert_eq!(doc.b, r"it's (?P<value>\d+)");
        assert_eq!(doc.c, r"a\s+(?P<value>\d+)");
    }
}
