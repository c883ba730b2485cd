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
        let target = match (&opts.packages, &found) {
            (Some(list), _) => package_flag(list),
            (None, Some(needs)) => {
                let (target, left_out) = repo::without_unimported_frameworks(
                    repo::target_packages(&reference, migration),
                    &needs.imported,
                );
                for spec in left_out {
                    console.say(&format!(
                        "target packages: {spec} left out: the repository lists it, the experiment imports no module of it"
                    ));
                }
                target
            }
            (None, None) => repo::target_packages(&reference, migration),
        };
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
    /// `--relax-pins`: then each such pin is installed unpinned (the installer names one at
    /// a time, so the build is tried again until it stands), and the review says each with
    /// the version it became.
    pub(super) fn environment(
        &mut self,
        opts: &InitOptions,
        console: &mut dyn Console,
    ) -> Result<Option<crate::env::PythonEnv>, InitError> {
        let usage = crate::env::store::Usage {
            task: opts.id.clone(),
            side: crate::env::Side::Reference,
        };
        let needs = self.found.clone();
        let mut relaxed: Vec<deps::Requirement> = Vec::new();
        loop {
            let built = crate::env::ensure(
                &opts.cache_dir,
                &with_runner(opts, &self.reference),
                &usage,
                &mut |l| console.say(&l),
            );
            let err = match built {
                Ok(env) => {
                    self.say_relaxed(&relaxed, env.as_ref(), needs.as_ref(), console);
                    return Ok(env);
                }
                Err(e) => e,
            };
            let (needs, tail) = match (&needs, &err) {
                (Some(needs), crate::env::EnvError::Build { tail, .. }) => (needs, tail.clone()),
                _ => return Err(err.into()),
            };
            let failing: Vec<&deps::Requirement> = deps::failing_pins(&needs.requirements, &tail)
                .into_iter()
                .filter(|r| !relaxed.iter().any(|done| done.spec == r.spec))
                .collect();
            if failing.is_empty() {
                return Err(match deps::unbuildable(&needs.requirements, &tail) {
                    Some(broken) => {
                        let others: Vec<&str> = self
                            .reference
                            .iter()
                            .map(String::as_str)
                            .filter(|spec| super::repo::package_name(spec) != broken.name())
                            .collect();
                        InitError::PackageDoesNotBuild {
                            package: broken.spec.clone(),
                            from: broken.from.clone(),
                            flag: format!("--reference-packages '{}'", others.join(" ")),
                            tail,
                        }
                    }
                    None => err.into(),
                });
            }
            if !opts.relax_pins {
                return Err(InitError::PinsDoNotInstall {
                    pins: failing
                        .iter()
                        .map(|r| format!("{} ({})", r.spec, r.from))
                        .collect(),
                    python: python_of(needs),
                    tail,
                });
            }
            relaxed.extend(failing.into_iter().cloned());
            self.reference = needs
                .requirements
                .iter()
                .map(|r| {
                    if relaxed.iter().any(|f| f.spec == r.spec) {
                        r.relaxed()
                    } else {
                        r.spec.clone()
                    }
                })
                .collect();
            if opts.packages.is_none() {
                self.target = repo::without_unimported_frameworks(
                    repo::target_packages(&self.reference, self.migration),
                    &needs.imported,
                )
                .0;
            }
        }
    }

    /// Says the pins `--relax-pins` relaxed, each with the version the environment got, in
    /// the review and in `task.toml`'s note on where the packages came from.
    fn say_relaxed(
        &mut self,
        relaxed: &[deps::Requirement],
        env: Option<&crate::env::PythonEnv>,
        needs: Option<&deps::Needs>,
        console: &mut dyn Console,
    ) {
        if relaxed.is_empty() {
            return;
        }
        let names: Vec<String> = relaxed.iter().map(deps::Requirement::relaxed).collect();
        let versions = env.map_or_else(
            || vec![None; names.len()],
            |e| installed_versions(e, &names),
        );
        let became: Vec<String> = names
            .iter()
            .zip(&versions)
            .map(|(name, version)| match version {
                Some(v) => format!("`{name}` {v}"),
                None => format!("`{name}`"),
            })
            .collect();
        let said = format!(
            "{} cannot install on Python {}: installed {} instead (--relax-pins)",
            relaxed
                .iter()
                .map(|r| format!("{} ({})", r.spec, r.from))
                .collect::<Vec<_>>()
                .join(", "),
            needs.map_or_else(|| "3".to_string(), python_of),
            became.join(", ")
        );
        console.say(&format!("reference environment: {said}"));
        self.from.push_str(&format!("\n{said}."));
    }
}

/// The packages of a side's environment: a notebook's kernel gets the runner's packages
/// added (and, by the task format, the task lists only its own).
fn with_runner(opts: &InitOptions, list: &[String]) -> Vec<String> {
    if opts.notebook.is_some() {
        crate::notebook::with_runner_packages(list)
    } else {
        list.to_vec()
    }
}

/// The Python version the repository asks for, else `3`.
fn python_of(needs: &deps::Needs) -> String {
    needs.python.clone().unwrap_or_else(|| "3".to_string())
}

/// The installed version of each distribution in `names` (extras dropped), as the
/// environment's Python reads its metadata; None for one it cannot read.
fn installed_versions(env: &crate::env::PythonEnv, names: &[String]) -> Vec<Option<String>> {
    let bare: Vec<String> = names
        .iter()
        .map(|n| n.split('[').next().unwrap_or(n).to_string())
        .collect();
    let script = "import importlib.metadata as m, sys\nfor n in sys.argv[1:]:\n    try:\n        print(m.version(n))\n    except Exception:\n        print('')\n";
    let out = std::process::Command::new(env.bin().join("python"))
        .arg("-c")
        .arg(script)
        .args(&bare)
        .stdin(std::process::Stdio::null())
        .output();
    let text = match out {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        _ => return vec![None; names.len()],
    };
    let mut lines: Vec<Option<String>> = text
        .lines()
        .map(|l| Some(l.trim().to_string()).filter(|v| !v.is_empty()))
        .collect();
    lines.resize(names.len(), None);
    lines
}
