//! The choices init makes before and after the first run: the experiment command (the flag,
//! else asked among the repository's candidates), and the metrics graded with their
//! criteria's direction.

use std::path::Path;

use crate::task::{CriterionSpec, Direction, Reduce};

use super::detect::{self, Candidate};
use super::{Console, InitError, InitOptions, repo};

/// Picks the experiment command: the flag, else a question proposing the candidates.
pub(super) fn choose_command(
    opts: &InitOptions,
    repo: &Path,
    console: &mut dyn Console,
) -> Result<String, InitError> {
    if let Some(notebook) = &opts.notebook {
        let cells = opts
            .cells
            .as_deref()
            .map(crate::notebook::CellSelection::parse)
            .transpose()
            .map_err(|e| InitError::BadCells(e.to_string()))?;
        return Ok(crate::notebook::command(notebook, cells.as_ref()));
    }
    if let Some(cmd) = &opts.command {
        return Ok(cmd.clone());
    }
    let candidates = repo::command_candidates(repo);
    if !console.interactive() {
        return match &candidates[..] {
            [only] => {
                console.say(&format!(
                    "command: `{only}`, the only one the repository names (--command chooses another)"
                ));
                Ok(only.clone())
            }
            _ => Err(InitError::NoCommand {
                candidates,
                notebooks: repo::notebook_candidates(repo),
            }),
        };
    }
    let mut question = String::from("The experiment command");
    if candidates.is_empty() {
        question.push_str(": ");
    } else {
        for (i, c) in candidates.iter().enumerate() {
            question.push_str(&format!("\n  {}) {c}", i + 1));
        }
        question.push_str("\nA number, or a command [1]: ");
    }
    loop {
        let Some(answer) = console.ask(&question) else {
            return Err(InitError::NoCommand {
                candidates,
                notebooks: repo::notebook_candidates(repo),
            });
        };
        let answer = answer.trim();
        if answer.is_empty() {
            if let Some(first) = candidates.first() {
                return Ok(first.clone());
            }
            continue;
        }
        if let Ok(n) = answer.parse::<usize>() {
            if let Some(c) = n.checked_sub(1).and_then(|i| candidates.get(i)) {
                return Ok(c.clone());
            }
            continue;
        }
        return Ok(answer.to_string());
    }
}

/// Picks the criteria among the verified candidates, and says why: `--metric`, else the ones
/// that look like evaluation results, else the only candidate whose name gives a direction
/// (a script that prints nothing but its final loss).
pub(super) fn choose_criteria<'a>(
    opts: &InitOptions,
    found: &'a [Candidate],
) -> Result<(Vec<&'a Candidate>, String), InitError> {
    let names = || found.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    if !opts.metrics.is_empty() {
        let chosen = opts
            .metrics
            .iter()
            .map(|want| {
                found
                    .iter()
                    .find(|c| c.name == *want)
                    .or_else(|| found.iter().find(|c| c.key.eq_ignore_ascii_case(want)))
                    .or_else(|| found.iter().find(|c| c.name == detect::sanitize(want)))
                    .ok_or_else(|| InitError::UnknownMetric {
                        name: want.clone(),
                        found: names(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok((chosen, "--metric".to_string()));
    }
    let chosen: Vec<&Candidate> = found
        .iter()
        .filter(|c| detect::looks_like_evaluation(&c.name, &c.example))
        .collect();
    if !chosen.is_empty() {
        return Ok((
            chosen,
            "the metrics that look like evaluation results; choose others with --metric"
                .to_string(),
        ));
    }
    let directed: Vec<&Candidate> = found
        .iter()
        .filter(|c| direction_for(&c.name) != Direction::Within)
        .collect();
    match directed.as_slice() {
        [only] => Ok((
            directed.clone(),
            format!(
                "no metric looks like an evaluation result, and `{}` is the only one whose name says which way is better ({}); choose others with --metric",
                only.name,
                direction_for(&only.name).as_str()
            ),
        )),
        _ => Err(InitError::NoEvaluationMetric(names())),
    }
}

/// The direction a metric's name implies: accuracy, acc, f1, bleu, auc, return, reward →
/// higher (a reinforcement-learning agent's episodic return is its result); loss, mse,
/// error, perplexity, fid → lower (a token of the name equal to the word, or the word followed
/// by digits, like `acc1`); anything else → within.
pub fn direction_for(name: &str) -> Direction {
    const HIGHER: &[&str] = &["accuracy", "acc", "f1", "bleu", "auc", "return", "reward"];
    const LOWER: &[&str] = &["loss", "mse", "error", "perplexity", "fid"];
    let name = detect::sanitize(name);
    let has = |words: &[&str]| {
        name.split('_').any(|t| {
            words.iter().any(|w| {
                t.strip_prefix(w)
                    .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()))
            })
        })
    };
    match (has(HIGHER), has(LOWER)) {
        (true, false) => Direction::Higher,
        (false, true) => Direction::Lower,
        _ => Direction::Within,
    }
}

/// A criterion for each chosen metric: its last value, in `--direction` (else within); the
/// value and tolerance are published later.
pub(super) fn criteria_of(opts: &InitOptions, chosen: &[&Candidate]) -> Vec<CriterionSpec> {
    chosen
        .iter()
        .map(|c| CriterionSpec {
            metric: c.name.clone(),
            reduce: Reduce::Last,
            published: 0.0,
            tolerance: 0.0,
            direction: opts.direction.unwrap_or(Direction::Within),
            claim: None,
        })
        .collect()
}
