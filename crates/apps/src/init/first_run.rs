//! The first run of the experiment (seed 0, output shown live, at most `--run-limit`
//! seconds), why it failed where that can be told, and the metrics found in its output.

use std::time::Duration;

use crate::calibrate::short;
use crate::seeds::{self, RunPlan, Scratch, SeedRun};

use super::detect::{self, Candidate};
use super::packages::Packages;
use super::target::Target;
use super::{Console, InitError, InitOptions, deps, limits};

/// The first run (seed 0), with the plan and the scratch folder later runs reuse.
pub(super) struct FirstRun {
    /// What every run of the repository runs.
    pub(super) plan: RunPlan,
    /// Where the runs' copies go.
    pub(super) scratch: Scratch,
    /// The run.
    pub(super) run: SeedRun,
}

impl FirstRun {
    /// Builds or finds the reference environment and runs `command` once with seed 0 (for at
    /// most `--run-limit` seconds), its output shown live; a run that fails is an error that
    /// says, where it can, why (a module no list provides, a GPU, the network, the limit).
    pub(super) fn run(
        opts: &InitOptions,
        target: &Target,
        command: &str,
        packages: &mut Packages,
        needs: &deps::Needs,
        console: &mut dyn Console,
    ) -> Result<FirstRun, InitError> {
        let env = packages.environment(opts, console)?;
        let plan = RunPlan {
            source: target.repo.clone(),
            setup: opts.setup.clone(),
            command: command.to_string(),
            timeout: Some(Duration::from_secs(opts.run_limit)),
            env,
            task_id: target.id.clone(),
            size: (120, 36),
        };
        let scratch = Scratch::new("init")?;
        console.say(&format!(
            "$ {command}    (XSTACK_SEED=0, in a copy of {}, at most {} s: --run-limit)",
            target.repo.display(),
            opts.run_limit
        ));
        let run = seeds::run_seed(&plan, 0, scratch.path(), &mut |text| console.output(text))?;
        if run.timed_out {
            return Err(InitError::RunTooLong {
                limit_s: opts.run_limit,
                advice: limits::shorten_advice(&target.repo, command, &run.lines(), run.duration_s),
                tail: run.tail(5),
            });
        }
        if !run.succeeded() {
            let tail = run.tail(seeds::TAIL_LINES);
            if let Some(module) = deps::missing_module(&tail) {
                if let Some((local, flag)) =
                    own_module_flag(&target.repo, &module, opts.setup.as_deref())
                {
                    return Err(InitError::LocalModuleOffPath {
                        module,
                        local,
                        flag,
                    });
                }
                let package = deps::packages_of(&module)
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| module.clone());
                let mut with = packages.reference.clone();
                with.push(package.clone());
                return Err(InitError::MissingModule {
                    module,
                    package,
                    listed: packages.reference.clone(),
                    flag: format!("--reference-packages {}", with.join(",")),
                });
            }
            if let Some(why) = limits::explain_failure(&tail, &needs.hazards, &target.repo, command)
            {
                return Err(InitError::CannotRunHere {
                    why,
                    ending: run.ending(),
                    tail,
                });
            }
            return Err(InitError::RunFailed {
                ending: run.ending(),
                duration_s: run.duration_s,
                tail,
            });
        }
        console.say(&format!(
            "\nthe run ended ({}) after {:.1} s",
            run.ending(),
            run.duration_s
        ));
        Ok(FirstRun { plan, scratch, run })
    }
}

/// The metrics in the first run's output, each definition verified by extracting it again;
/// says which were found and which left out.
pub(super) fn metrics_found(
    first: &SeedRun,
    command: &str,
    console: &mut dyn Console,
) -> Result<Vec<Candidate>, InitError> {
    // The notebook runner's cell lines are xstack's, not the repository's output.
    let printed: Vec<String> = first
        .lines()
        .into_iter()
        .filter(|l| !crate::notebook::is_cell_line(l))
        .collect();
    let (found, rejected) = detect::verify(detect::detect(&printed), &first.output);
    for r in &rejected {
        console.say(&format!("left out `{}`: {}", r.name, r.reason));
    }
    if found.is_empty() {
        return Err(InitError::NoMetrics(command.to_string()));
    }
    console.say("metrics found (each definition re-extracted from the output and checked):");
    for c in &found {
        let last = c.points.last().map_or(0.0, |p| p.value);
        console.say(&format!(
            "  {:<20} {:>4} value(s), last {}{}  [{}]",
            c.name,
            c.points.len(),
            short(last),
            if c.percent { " %" } else { "" },
            c.style.label()
        ));
    }
    Ok(found)
}

/// When `module` is the repository's own (a folder or a `.py` file at its root), that file
/// or folder and the `--setup` that puts the root on the import path (`export
/// PYTHONPATH=$PWD`, after `setup` when there is one); None when it is not, or when `setup`
/// already sets PYTHONPATH.
fn own_module_flag(
    repo: &std::path::Path,
    module: &str,
    setup: Option<&str>,
) -> Option<(String, String)> {
    let top = module.split('.').next().unwrap_or(module);
    let local = if repo.join(top).is_dir() {
        format!("{top}/")
    } else if repo.join(format!("{top}.py")).is_file() {
        format!("{top}.py")
    } else {
        return None;
    };
    const EXPORT: &str = "export PYTHONPATH=$PWD";
    let flag = match setup {
        Some(setup) if setup.contains("PYTHONPATH") => return None,
        Some(setup) => format!("--setup '{setup}; {EXPORT}'"),
        None => format!("--setup '{EXPORT}'"),
    };
    Some((local, flag))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_module_of_the_repository_itself_is_put_on_the_path_with_setup() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("cleanrl_utils")).unwrap();
        std::fs::write(repo.path().join("helpers.py"), "").unwrap();
        assert_eq!(
            own_module_flag(repo.path(), "cleanrl_utils.buffers", None),
            Some((
                "cleanrl_utils/".to_string(),
                "--setup 'export PYTHONPATH=$PWD'".to_string()
            ))
        );
        assert_eq!(
            own_module_flag(repo.path(), "helpers", Some("pip --version")),
            Some((
                "helpers.py".to_string(),
                "--setup 'pip --version; export PYTHONPATH=$PWD'".to_string()
            ))
        );
        // A package to install, and a root already on the path, are not this case.
        assert_eq!(own_module_flag(repo.path(), "gymnasium", None), None);
        assert_eq!(
            own_module_flag(repo.path(), "cleanrl_utils", Some("export PYTHONPATH=.")),
            None
        );
    }
}
