//! The two sides' packages: from the flags, else read from the repository's files and the
//! experiment's imports; and the reference environment built from them, with pins that
//! cannot install on this Python relaxed under `--relax-pins`.

use std::path::Path;

use super::{Console, InitError, InitOptions, deps, repo};

/// The experiment's own files, relative to the repository: the notebook, else the Python
/// file the command runs (none for a command that runs no Python file of the repository).
pub(super) fn experiment_files(opts: &InitOptions, repo: &Path, command: &str) -> Vec<String> {
    if let Some(notebook) = &opts.notebook {
        return vec![notebook.clone()];
    }
    let words = shell_words::split(command).unwrap_or_default();
    crate::command_line::entry_file(repo, &words)
        .and_then(|p| {
            p.strip_prefix(repo)
                .ok()
                .map(|r| r.to_string_lossy().into_owned())
        })
        .into_iter()
        .collect()
}

/// A package list given on the command line: blanks dropped, `none` (or nothing) meaning an
/// empty list, so no environment.
fn package_flag(list: &[String]) -> Vec<String> {
    list.iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty() && p != "none")
        .collect()
}

/// The two sides' packages and where the reference side's came from.
pub(super) struct Packages {
    /// The source side's.
    pub(super) reference: Vec<String>,
    /// The port side's.
    pub(super) target: Vec<String>,
    /// Where `reference` came from, in words (one line a package when read from the
    /// repository).
    pub(super) from: String,
    /// The repository's requirements, with their sources, when `reference` came from them.
    pub(super) found: Option<deps::Needs>,
    /// The direction, which decides the port side's packages.
    pub(super) migration: crate::task::Migration,
}

impl Packages {
    /// From the flags, else from the repository's files and the experiment's imports; says
    /// what each environment is and where each package came from.
    pub(super) fn choose(
        opts: &InitOptions,
        needs: &deps::Needs,
        migration: crate::task::Migration,
        console: &mut dyn Console,
    ) -> Packages {
        let (reference, from, found) = match &opts.reference_packages {
            Some(list) => (
                package_flag(list),
                "From --reference-packages.".to_string(),
                None,
            ),
            None => {
                for note in &needs.notes {
                    console.say(&format!("reference packages: {note}"));
                }
                let from = if needs.requirements.is_empty() {
                    "Nothing: no requirements file, setup.py, setup.cfg, pyproject.toml or environment.yml dependencies, and no import outside the standard library.".to_string()
                } else {
                    let mut text = String::from("From the repository:");
                    for r in &needs.requirements {
                        text.push_str(&format!("\n  {}: {}", r.spec, r.from));
                    }
                    text
                };
                (needs.specs(), from, Some(needs.clone()))
            }
        };
        let target = opts.packages.as_deref().map_or_else(
            || repo::target_packages(&reference, migration),
            package_flag,
        );
        if reference.is_empty() {
            console.say("reference environment: none (the command runs with the Python on PATH)");
        } else if let Some(needs) = &found {
            console.say("reference environment, from the repository:");
            for r in &needs.requirements {
                console.say(&format!("  {}: {}", r.spec, r.from));
            }
        } else {
            console.say(&format!(
                "reference environment: {} (from --reference-packages)",
                reference.join(" ")
            ));
        }
        if opts.packages.is_none() {
            console.say(&repo::target_environment_line(&target, migration));
        }
        Packages {
            reference,
            target,
            from,
            found,
            migration,
        }
    }

    /// The reference environment built, or found in the cache. Pins of the repository's
    /// requirements that cannot install on this Python stop init, naming them, unless
    /// `--relax-pins`: then they are installed unpinned and the review says so.
    pub(super) fn environment(
        &mut self,
        opts: &InitOptions,
        console: &mut dyn Console,
    ) -> Result<Option<crate::env::PythonEnv>, InitError> {
        let with_runner = |list: &[String]| {
            if opts.notebook.is_some() {
                // A notebook runs in a kernel of the environment: the runner's packages are
                // added to it (and, by the task format, to the task's, which lists only its
                // own).
                crate::notebook::with_runner_packages(list)
            } else {
                list.to_vec()
            }
        };
        let usage = crate::env::store::Usage {
            task: opts.id.clone(),
            side: crate::env::Side::Reference,
        };
        let first = crate::env::ensure(
            &opts.cache_dir,
            &with_runner(&self.reference),
            &usage,
            &mut |l| console.say(&l),
        );
        let err = match first {
            Ok(env) => return Ok(env),
            Err(e) => e,
        };
        let (needs, tail) = match (&self.found, &err) {
            (Some(needs), crate::env::EnvError::Build { tail, .. }) => {
                (needs.clone(), tail.clone())
            }
            _ => return Err(err.into()),
        };
        let failing = deps::failing_pins(&needs.requirements, &tail);
        if failing.is_empty() {
            return Err(err.into());
        }
        let python = needs.python.clone().unwrap_or_else(|| "3".to_string());
        let named: Vec<String> = failing
            .iter()
            .map(|r| format!("{} ({})", r.spec, r.from))
            .collect();
        if !opts.relax_pins {
            return Err(InitError::PinsDoNotInstall {
                pins: named,
                python,
                tail,
            });
        }
        let relaxed: Vec<String> = needs
            .requirements
            .iter()
            .map(|r| {
                if failing.iter().any(|f| f.spec == r.spec) {
                    r.relaxed()
                } else {
                    r.spec.clone()
                }
            })
            .collect();
        let said = format!(
            "{} cannot install on Python {python}: installed {} instead (--relax-pins)",
            named.join(", "),
            failing
                .iter()
                .map(|r| format!("`{}`", r.relaxed()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        console.say(&format!("reference environment: {said}"));
        self.from.push_str(&format!("\n{said}."));
        self.reference = relaxed;
        if opts.packages.is_none() {
            self.target = repo::target_packages(&self.reference, self.migration);
        }
        Ok(crate::env::ensure(
            &opts.cache_dir,
            &with_runner(&self.reference),
            &usage,
            &mut |l| console.say(&l),
        )?)
    }
}
