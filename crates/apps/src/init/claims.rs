//! The published claim each criterion `xstack init` proposes is graded against (SPEC §2b):
//! the repository's claims ranked for the criterion's metric ([`crate::claims::rank`]),
//! shown best first, one chosen by what the texts say of this repository, never by how close
//! it is to the runs (asked on a terminal; with `--yes` only an unambiguous one, and two
//! equally plausible claims stop init naming both), then authenticated against the measured
//! runs. A claim the runs reproduce becomes the
//! criterion's `published` value; one they do not reproduce stops init unless
//! `--accept-unreproduced`; without a claim the measured value stays, recorded as `no_claim`.
//! The claims' places and quotes make `[published] citation`; where the runs were measured
//! (the day, the packages, the machine) goes with each claim's measurement.

use crate::claims::{self, Choice, ClaimMatch, MetricTarget};
use crate::task::{ClaimMeasurement, ClaimSpec, ClaimStatus};

use std::path::Path;

use crate::seeds::RunPlan;

use super::detect::Candidate;
use super::publish::Published;
use super::{Console, InitError, InitOptions};

/// How many candidates are shown per criterion.
const SHOWN: usize = 5;

/// Among the plausible `candidates` (indices into `matches`), the claim that names the metric
/// and is written in a notebook's cell nearest before `cell`, when every such claim is in one
/// notebook and exactly one is nearest; None otherwise.
fn nearest_before_cell(matches: &[ClaimMatch], candidates: &[usize], cell: usize) -> Option<usize> {
    let in_cells: Vec<(usize, &str, usize)> = candidates
        .iter()
        .filter_map(|&i| {
            let m = matches.get(i)?;
            match &m.claim.location {
                claims::Location::Cell { notebook, cell } if m.names_metric => {
                    Some((i, notebook.as_str(), *cell))
                }
                _ => None,
            }
        })
        .collect();
    let (_, notebook, _) = in_cells.first()?;
    if in_cells.len() < 2 || in_cells.iter().any(|(_, n, _)| n != notebook) {
        return None;
    }
    let before: Vec<&(usize, &str, usize)> =
        in_cells.iter().filter(|(_, _, c)| *c <= cell).collect();
    let nearest = before.iter().map(|(_, _, c)| *c).max()?;
    match before
        .iter()
        .filter(|(_, _, c)| *c == nearest)
        .collect::<Vec<_>>()[..]
    {
        [only] => Some(only.0),
        _ => None,
    }
}

/// What init knows of one criterion when it looks for its claim.
pub struct Criterion<'a> {
    /// The metric's name.
    pub metric: &'a str,
    /// A line the run printed it on.
    pub line: &'a str,
    /// The metric's name as the log prints it (`Test Accuracy`).
    pub key: &'a str,
    /// The measured runs.
    pub measured: claims::Measured,
    /// The tolerance the criterion will be graded with.
    pub tolerance: f64,
    /// The notebook cell that printed the graded (last) value, when the run was a notebook's.
    pub last_cell: Option<usize>,
}

/// The claim settled for one criterion: the `[criterion.claim]` table, and the value to
/// grade against when a claim replaces the measured one.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    /// The table written under the criterion.
    pub claim: ClaimSpec,
    /// The claim in the printed metric's units, when the criterion is graded against it.
    pub published: Option<f64>,
    /// The claim's place and quote, for `[published] citation`.
    pub citation: Option<String>,
}

/// Where the runs were measured: the day, the packages and the machine, written with each
/// claim's measurement.
pub struct Provenance {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// `torch 2.15.0, numpy 2.4.6`.
    pub versions: String,
    /// `2 cores, x86_64`.
    pub machine: String,
}

/// What the claims are looked up for: the experiment's command and the words that name the
/// repository and its script.
pub struct Experiment<'a> {
    /// The command (its arguments name datasets, models, configs).
    pub command: &'a str,
    /// The repository's and its script's names (`digits`), lowercase.
    pub names: &'a [String],
}

/// Settles the claim of each criterion in `criteria` among `found` (the repository's
/// claims), for `experiment`.
pub fn settle(
    found: &[claims::Claim],
    criteria: &[Criterion<'_>],
    experiment: &Experiment<'_>,
    provenance: &Provenance,
    yes: bool,
    accept_unreproduced: bool,
    console: &mut dyn Console,
) -> Result<Vec<Settled>, InitError> {
    let args = claims::split_command(experiment.command);
    let mut settled = Vec::with_capacity(criteria.len());
    for c in criteria {
        let target = MetricTarget {
            name: c.metric.to_string(),
            line: c.line.to_string(),
            literal: c.key.to_string(),
            args: args.clone(),
            measured: Some(c.measured.mean),
            names: experiment.names.to_vec(),
        };
        let matches = claims::rank(found, &target);
        let chosen = choose(c.metric, &matches, c.last_cell, yes, console)?;
        let measured = measurement(&c.measured, provenance);
        let Some(m) = chosen else {
            console.say(&format!(
                "{}: no published claim; graded against this machine's runs ({} over {} run{})",
                c.metric,
                measured.mean,
                measured.runs,
                if measured.runs == 1 { "" } else { "s" }
            ));
            settled.push(Settled {
                claim: ClaimSpec {
                    text: None,
                    location: None,
                    value: None,
                    unit: String::new(),
                    status: ClaimStatus::NoClaim,
                    measured: Some(measured),
                },
                published: None,
                citation: None,
            });
            continue;
        };
        let auth = claims::authenticate(m.value_in_metric_units, &c.measured, c.tolerance);
        let claim = ClaimSpec {
            text: Some(m.claim.quote.clone()),
            location: Some(m.claim.where_text()),
            value: Some(m.claim.value),
            unit: m.claim.unit.as_str().to_string(),
            status: auth.status,
            measured: Some(measured.clone()),
        };
        let said = format!(
            "{}: published {} ({}, \"{}\")",
            c.metric,
            m.claim.value_text(),
            m.claim.where_text(),
            one_line(&m.claim.quote)
        );
        if auth.status == ClaimStatus::Reproduced {
            console.say(&format!(
                "{said} — reproduced: {} ± {} over {} run{}, within the tolerance {}",
                measured.mean,
                measured.std,
                measured.runs,
                if measured.runs == 1 { "" } else { "s" },
                c.tolerance
            ));
        } else {
            let why = format!(
                "{said} — NOT reproduced: {} ± {} over {} run{}, {} from the claim ({:.1}× the tolerance {})",
                measured.mean,
                measured.std,
                measured.runs,
                if measured.runs == 1 { "" } else { "s" },
                crate::calibrate::short(auth.difference.abs()),
                auth.in_tolerances.abs(),
                c.tolerance
            );
            if !accept_unreproduced {
                return Err(InitError::ClaimNotReproduced(why));
            }
            console.say(&format!(
                "{why}; graded against the claim all the same (--accept-unreproduced), recorded as not_reproduced"
            ));
        }
        settled.push(Settled {
            citation: Some(format!(
                "{}: \"{}\"",
                m.claim.where_text(),
                one_line(&m.claim.quote)
            )),
            published: Some(m.value_in_metric_units),
            claim,
        });
    }
    Ok(settled)
}

/// The claim a criterion is graded against, among `matches` (best first): shown, then asked
/// for on a terminal; with `--yes` only an unambiguous match is taken, and claims that name
/// the metric and are equally plausible are refused, naming each, unless the notebook
/// settles it: of such claims written in the experiment's notebook, the one nearest before
/// `last_cell`, the cell that printed the graded value, is about that value (jraph's "about
/// 0.91" for its GCN, "about 0.97" before the GAT's cell, which prints last).
fn choose<'m>(
    metric: &str,
    matches: &'m [ClaimMatch],
    last_cell: Option<usize>,
    yes: bool,
    console: &mut dyn Console,
) -> Result<Option<&'m ClaimMatch>, InitError> {
    if matches.is_empty() {
        return Ok(None);
    }
    console.say(&format!("claims that may be {metric}'s, best first:"));
    for (i, m) in matches.iter().take(SHOWN).enumerate() {
        console.say(&format!(
            "  {}. {} at {} \"{}\" ({})",
            i + 1,
            m.claim.value_text(),
            m.claim.where_text(),
            one_line(&m.claim.quote),
            m.reasons.join("; ")
        ));
    }
    let mut choice = claims::choose(matches);
    if let (Choice::Ambiguous { candidates, .. }, Some(cell)) = (&choice, last_cell)
        && let Some(i) = nearest_before_cell(matches, candidates, cell)
    {
        console.say(&format!(
            "{metric}: {} at {} is the claim written nearest before cell {cell}, which printed the value graded",
            matches[i].claim.value_text(),
            matches[i].claim.where_text()
        ));
        choice = Choice::Unambiguous(i);
    }
    if yes {
        return match choice {
            Choice::Unambiguous(i) => Ok(matches.get(i)),
            Choice::Ambiguous { candidates, why } => {
                let plausible: Vec<&ClaimMatch> =
                    candidates.iter().filter_map(|&i| matches.get(i)).collect();
                let named = |m: &ClaimMatch| {
                    format!(
                        "{} at {} (\"{}\")",
                        m.claim.value_text(),
                        m.claim.where_text(),
                        one_line(&m.claim.quote)
                    )
                };
                let naming: Vec<String> = plausible
                    .iter()
                    .copied()
                    .filter(|m| m.names_metric)
                    .map(&named)
                    .collect();
                if naming.len() >= 2 {
                    return Err(InitError::AmbiguousClaim {
                        metric: metric.to_string(),
                        claims: naming,
                    });
                }
                console.say(&format!(
                    "{metric}: no claim taken ({why}); close: {} (run without --yes to choose one)",
                    plausible
                        .iter()
                        .copied()
                        .map(&named)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                Ok(None)
            }
            Choice::None => {
                console.say(&format!("{metric}: none of them names it"));
                Ok(None)
            }
        };
    }
    let default = match choice {
        Choice::Unambiguous(i) => i + 1,
        _ => 0,
    };
    let shown = matches.len().min(SHOWN);
    loop {
        let answer = console
            .ask(&format!(
                "grade {metric} against which claim? [1-{shown}, 0 for none; default {default}] "
            ))
            .unwrap_or_default();
        let answer = answer.trim();
        let pick = if answer.is_empty() {
            Some(default)
        } else {
            answer.parse::<usize>().ok().filter(|n| *n <= shown)
        };
        match pick {
            Some(0) => return Ok(None),
            Some(n) => return Ok(matches.get(n - 1)),
            None => console.say(&format!("a number from 0 to {shown}, please")),
        }
    }
}

/// The measured runs as `[criterion.claim] measured` writes them: mean and std rounded as
/// task files round a value and its spread.
fn measurement(m: &claims::Measured, provenance: &Provenance) -> ClaimMeasurement {
    let rounded = crate::calibrate::Suggestion::rounded(m.mean, m.std);
    ClaimMeasurement {
        runs: m.runs,
        mean: rounded.published,
        std: rounded.tolerance,
        date: provenance.date.clone(),
        versions: provenance.versions.clone(),
        machine: Some(provenance.machine.clone()),
    }
}

/// `text` on one line, its runs of white space (a table row's padding) made one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// This machine, as a claim's measurement records it: `2 cores, x86_64 Linux`.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    format!(
        "{cores} core{}, {} {}",
        if cores == 1 { "" } else { "s" },
        std::env::consts::ARCH,
        std::env::consts::OS
    )
}

/// Where the runs were measured: today, the reference packages' versions, this machine.
pub(super) fn provenance(plan: &RunPlan, reference: &[String]) -> Provenance {
    Provenance {
        date: chrono::Utc::now().format("%Y-%m-%d").to_string(),
        versions: plan
            .env
            .as_ref()
            .map(|e| e.package_versions(reference))
            .unwrap_or_else(|| "the Python on PATH".to_string()),
        machine: machine(),
    }
}

/// What the repository (and the paper) claims, matched to each criterion and authenticated
/// by the runs.
pub(super) fn settle_claims(
    opts: &InitOptions,
    repo: &Path,
    chosen: &[&Candidate],
    published: &Published,
    command: &str,
    provenance: &Provenance,
    console: &mut dyn Console,
) -> Result<Vec<Settled>, InitError> {
    let found_claims = crate::claims::find_claims(repo, opts.paper.as_deref())?;
    console.say(&format!(
        "claims found in the repository{}: {}",
        if opts.paper.is_some() {
            " and the paper"
        } else {
            ""
        },
        found_claims.len()
    ));
    let looked_up: Vec<Criterion<'_>> = chosen
        .iter()
        .zip(&published.suggestions)
        .zip(&published.measured)
        .map(|((cand, suggestion), measured)| Criterion {
            metric: &cand.name,
            line: &cand.last_example,
            key: &cand.key,
            measured: *measured,
            tolerance: suggestion.tolerance,
            last_cell: cand.last_cell,
        })
        .collect();
    let names = repository_names(repo, command);
    settle(
        &found_claims,
        &looked_up,
        &Experiment {
            command,
            names: &names,
        },
        provenance,
        opts.yes,
        opts.accept_unreproduced,
        console,
    )
}

/// Words that name the repository and its script, as a README would: the folder's name and
/// the entry file's stem, split at `-`, `_` and `.`, without generic words (`train`, `main`).
fn repository_names(repo: &Path, command: &str) -> Vec<String> {
    const GENERIC: &[&str] = &[
        "train", "main", "run", "eval", "test", "model", "models", "src", "code", "repo", "py",
        "python", "the", "and", "master", "pytorch", "torch", "notebook", "ipynb",
    ];
    let words = shell_words::split(command).unwrap_or_default();
    let script = crate::command_line::entry_file(repo, &words);
    let mut names: Vec<String> = Vec::new();
    let texts = [
        repo.file_name().map(|n| n.to_string_lossy().into_owned()),
        script
            .as_ref()
            .and_then(|s| s.file_stem())
            .map(|n| n.to_string_lossy().into_owned()),
    ];
    for text in texts.into_iter().flatten() {
        for word in text
            .to_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() >= 3 && !GENERIC.contains(w))
        {
            if !names.iter().any(|n| n == word) {
                names.push(word.to_string());
            }
        }
    }
    names
}

/// `[published] citation`: the claims' places and quotes, else how xstack init measured it.
pub(super) fn citation(opts: &InitOptions, settled: &[Settled], command: &str) -> String {
    if settled.iter().any(|s| s.citation.is_some()) {
        return settled
            .iter()
            .filter_map(|s| s.citation.clone())
            .collect::<Vec<_>>()
            .join("; ");
    }
    let n_runs = opts.seeds.unwrap_or(1);
    let date = chrono::Utc::now().format("%Y-%m-%d");
    if n_runs > 1 {
        format!(
            "measured by xstack init on {date}: mean of {n_runs} runs of `{command}` (XSTACK_SEED 0-{}); no published claim was found in the repository",
            n_runs - 1
        )
    } else {
        format!(
            "measured by xstack init on {date}: one run of `{command}` (XSTACK_SEED=0); no published claim was found in the repository"
        )
    }
}
