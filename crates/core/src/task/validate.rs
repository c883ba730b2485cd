//! Loading `task.toml` and checking every rule of SPEC §2, with errors that name the file,
//! the key path and the line (built by [`super::located`]).

use std::path::{Path, PathBuf};

use regex::Regex;

use super::located::{self, FileError, KeyPath, Located, Term};
use super::{Migration, Source, TASK_FILE, Task, TaskFile};

/// Why a task could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The task file could not be read, or breaks a rule (its file, line, key path and what
    /// is wrong).
    #[error(transparent)]
    File(#[from] FileError),
    /// No task folder matches the argument.
    #[error(
        "task `{arg}` not found: it is neither a folder holding {TASK_FILE} nor a task id under {}",
        tasks_dir.display()
    )]
    NotFound {
        /// The argument given.
        arg: String,
        /// The tasks folder searched.
        tasks_dir: PathBuf,
    },
}

impl From<Located> for TaskError {
    fn from(located: Located) -> Self {
        TaskError::File(FileError::Invalid(located))
    }
}

struct Checker<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Checker<'_> {
    fn fail(&self, key: KeyPath, message: impl Into<String>) -> TaskError {
        TaskError::from(Located::in_toml(
            self.file,
            self.text,
            Term::Field,
            key,
            message.into(),
        ))
    }
}

/// A notebook path must be relative, stay inside the repository, end in `.ipynb`, and (for a
/// source folder) name a file of it.
fn check_notebook_path(c: &Checker<'_>, source: &Source, notebook: &str) -> Result<(), TaskError> {
    let key = || KeyPath::of("run").key("notebook");
    let path = Path::new(notebook);
    if notebook.trim().is_empty()
        || path.is_absolute()
        || path
            .components()
            .any(|part| !matches!(part, std::path::Component::Normal(_)))
    {
        return Err(c.fail(
            key(),
            format!(
                "`{notebook}` must be a path inside the repository, such as `lectures/part5.ipynb`"
            ),
        ));
    }
    if !crate::notebook::is_notebook(notebook) {
        return Err(c.fail(key(), format!("`{notebook}` is not a notebook (.ipynb)")));
    }
    if let Source::Path(repo) = source
        && !repo.join(path).is_file()
    {
        return Err(c.fail(
            key(),
            format!("the source has no notebook {}", repo.join(path).display()),
        ));
    }
    Ok(())
}

/// A folder of task files (a shared oracle, the probe's source files) is the task's own
/// (`parity`) or one the tasks share (`../sources/NAME`): an existing folder inside the
/// folder that holds the task folder, its tasks root, links followed. (`[source] path` is not
/// held to this: `xstack init` points it at the user's repository wherever it is.)
fn check_inside_tasks(
    c: &Checker<'_>,
    key: KeyPath,
    dir: &Path,
    written: &str,
) -> Result<(), TaskError> {
    let folder = dir.join(written);
    if !folder.is_dir() {
        return Err(c.fail(key, format!("folder {} does not exist", folder.display())));
    }
    let root = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.parent().map(Path::to_path_buf));
    let inside = match (root, folder.canonicalize()) {
        (Some(root), Ok(real)) => real.starts_with(&root) && real != root,
        _ => false,
    };
    if inside {
        return Ok(());
    }
    Err(c.fail(
        key,
        format!(
            "`{written}` leaves the tasks folder: name a folder of the task or a shared one under the tasks folder (`../sources/NAME`)"
        ),
    ))
}

/// Fills the `[integrity]` lists the file leaves out with the direction's defaults (the
/// file parsed already, so reading it again cannot fail).
fn integrity_defaults(text: &str, migration: Migration, integrity: &mut super::IntegritySpec) {
    let written = text.parse::<toml::Table>().ok();
    let given = |key: &str| {
        written
            .as_ref()
            .and_then(|doc| doc.get("integrity"))
            .and_then(|table| table.get(key))
            .is_some()
    };
    if !given("forbid_imports") {
        integrity.forbid_imports = migration.default_forbid_imports();
    }
    if !given("require_imports") {
        integrity.require_imports = migration.default_require_imports();
    }
}

/// Loads `dir/task.toml`, checks every rule, and resolves the source.
pub(super) fn load(dir: &Path) -> Result<Task, TaskError> {
    let file = dir.join(TASK_FILE);
    let text = located::read(&file)?;
    parse(dir, &file, &text)
}

/// Checks `text` (the task file `file` of the folder `dir`) one section after another and
/// resolves the source; the first rule broken is the error.
fn parse(dir: &Path, file: &Path, text: &str) -> Result<Task, TaskError> {
    let mut spec: TaskFile = located::from_toml(file, text, Term::Field)?;
    let c = Checker { file, text };

    check_id(&c, dir, &spec.id)?;
    if spec.title.trim().is_empty() {
        return Err(c.fail(KeyPath::of("title"), "must not be empty"));
    }
    let migration = check_migration(&c, &spec.migration)?;
    integrity_defaults(text, migration, &mut spec.integrity);
    let source = check_source(&c, dir, &spec.source)?;
    check_paths_of_source(
        &c,
        &KeyPath::of("source").key("exclude"),
        &source,
        &spec.source.exclude,
    )?;
    check_run(&c, &source, &mut spec)?;
    let regexes = check_metrics(&c, &spec.metrics)?;
    check_criteria(&c, &spec.criteria, &spec.metrics)?;
    check_integrity(&c, &spec.integrity)?;
    if spec.phase2.details.trim().is_empty() {
        return Err(c.fail(KeyPath::of("phase2").key("details"), "must not be empty"));
    }
    if let Some(reference) = &spec.reference {
        check_reference(&c, dir, reference)?;
    }
    if let Some(upstream) = &spec.upstream {
        check_upstream(&c, &source, upstream)?;
    }
    if let Some(parity) = &spec.parity {
        check_parity(&c, dir, parity)?;
    }
    if let Some(solution) = &spec.solution {
        check_solution(&c, dir, &source, solution)?;
    }

    Ok(Task {
        dir: dir.to_path_buf(),
        file: file.to_path_buf(),
        spec,
        source,
        migration,
        metric_regexes: regexes,
    })
}

/// `id`: `[a-z0-9][a-z0-9-]*`, equal to the task folder's name.
fn check_id(c: &Checker<'_>, dir: &Path, id: &str) -> Result<(), TaskError> {
    let id_ok = {
        let mut chars = id.chars();
        matches!(chars.next(), Some(ch) if ch.is_ascii_lowercase() || ch.is_ascii_digit())
            && chars.all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-')
    };
    if !id_ok {
        return Err(c.fail(KeyPath::of("id"), "must match [a-z0-9][a-z0-9-]*"));
    }
    let folder = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()));
    if folder.as_deref() != Some(id) {
        return Err(c.fail(
            KeyPath::of("id"),
            format!(
                "`{id}` must equal the task folder's name `{}`",
                folder.unwrap_or_default()
            ),
        ));
    }
    Ok(())
}

/// `[migration]`: the direction, from one framework to the other.
fn check_migration(
    c: &Checker<'_>,
    written: &super::MigrationSpec,
) -> Result<Migration, TaskError> {
    let migration = written.resolve();
    if migration.from == migration.to {
        return Err(c.fail(
            KeyPath::of("migration"),
            format!(
                "`from` and `to` are both `{}`: a migration goes from one framework to the other (torch or jax)",
                migration.from.as_str()
            ),
        ));
    }
    Ok(migration)
}

/// `[source]`: exactly one of an existing folder (`path`) or a `git` URL pinned by `rev`.
fn check_source(
    c: &Checker<'_>,
    dir: &Path,
    spec: &super::SourceSpec,
) -> Result<Source, TaskError> {
    match (&spec.path, &spec.git) {
        (Some(_), Some(_)) | (None, None) => Err(c.fail(
            KeyPath::of("source"),
            "exactly one of `path` or `git` is required",
        )),
        (Some(path), None) => {
            if spec.rev.is_some() {
                return Err(c.fail(KeyPath::of("source").key("rev"), "only valid with `git`"));
            }
            let p = dir.join(path);
            if !p.is_dir() {
                return Err(c.fail(
                    KeyPath::of("source").key("path"),
                    format!("folder {} does not exist", p.display()),
                ));
            }
            Ok(Source::Path(p))
        }
        (None, Some(url)) => {
            let Some(rev) = &spec.rev else {
                return Err(c.fail(
                    KeyPath::of("source").key("git"),
                    "`git` needs `rev` (a commit)",
                ));
            };
            Ok(Source::Git {
                url: url.clone(),
                rev: rev.clone(),
            })
        }
    }
}

/// `[run] cells` of the notebook `notebook` (its path already checked): a well-formed
/// selection and, for a source folder, each index a code cell of the notebook.
fn check_cells(
    c: &Checker<'_>,
    source: &Source,
    notebook: &str,
    cells: Option<&str>,
) -> Result<Option<crate::notebook::CellSelection>, TaskError> {
    let key = || KeyPath::of("run").key("cells");
    let Some(text) = cells else {
        return Ok(None);
    };
    let cells =
        crate::notebook::CellSelection::parse(text).map_err(|e| c.fail(key(), e.to_string()))?;
    if let Source::Path(repo) = source {
        cells
            .check_code_cells(&repo.join(notebook), notebook)
            .map_err(|e| c.fail(key(), e.to_string()))?;
    }
    Ok(Some(cells))
}

/// `[run]`: exactly one of `command` or `notebook`, and a timeout. A notebook becomes the
/// command that runs it (only the cells `[run] cells` selects), and its runner's packages
/// join both environments.
fn check_run(c: &Checker<'_>, source: &Source, spec: &mut TaskFile) -> Result<(), TaskError> {
    if spec.run.cells.is_some() && spec.run.notebook.is_none() {
        return Err(c.fail(
            KeyPath::of("run").key("cells"),
            "only valid with `notebook`",
        ));
    }
    match &spec.run.notebook {
        None if spec.run.command.trim().is_empty() => {
            return Err(c.fail(
                KeyPath::of("run").key("command"),
                "must not be empty (or give `notebook` instead)",
            ));
        }
        None => {}
        Some(_) if !spec.run.command.is_empty() => {
            return Err(c.fail(
                KeyPath::of("run"),
                "exactly one of `command` or `notebook` is required",
            ));
        }
        Some(notebook) => {
            check_notebook_path(c, source, notebook)?;
            let cells = check_cells(c, source, notebook, spec.run.cells.as_deref())?;
            spec.run.command = crate::notebook::command(notebook, cells.as_ref());
            spec.env.packages = crate::notebook::with_runner_packages(&spec.env.packages);
            spec.env.reference_packages =
                crate::notebook::with_runner_packages(&spec.env.reference_packages);
        }
    }
    if spec.run.timeout_s == 0 {
        return Err(c.fail(KeyPath::of("run").key("timeout_s"), "must be at least 1"));
    }
    Ok(())
}

/// `[[metric]]`: at least one, names unique and not empty; returns each metric's compiled
/// regex (`None` for a `json_key` metric).
fn check_metrics(
    c: &Checker<'_>,
    metrics: &[super::MetricSpec],
) -> Result<Vec<Option<Regex>>, TaskError> {
    if metrics.is_empty() {
        return Err(c.fail(KeyPath::of("metric"), "at least one [[metric]] is required"));
    }
    let mut regexes = Vec::with_capacity(metrics.len());
    for (i, m) in metrics.iter().enumerate() {
        if m.name.trim().is_empty() {
            return Err(c.fail(
                KeyPath::of("metric").index(i).key("name"),
                "must not be empty",
            ));
        }
        if metrics[..i].iter().any(|o| o.name == m.name) {
            return Err(c.fail(
                KeyPath::of("metric").index(i).key("name"),
                format!("metric `{}` is defined twice", m.name),
            ));
        }
        regexes.push(check_metric_source(c, i, m)?);
    }
    Ok(regexes)
}

/// The `i`th metric reads exactly one of a `regex` with a `value` group (compiled and
/// returned) or a `json_key`.
fn check_metric_source(
    c: &Checker<'_>,
    i: usize,
    m: &super::MetricSpec,
) -> Result<Option<Regex>, TaskError> {
    let key = |field: &str| KeyPath::of("metric").index(i).key(field);
    match (&m.regex, &m.json_key) {
        (Some(_), Some(_)) | (None, None) => Err(c.fail(
            KeyPath::of("metric").index(i),
            "exactly one of `regex` or `json_key` is required",
        )),
        (Some(re), None) => {
            if m.step_key.is_some() {
                return Err(c.fail(
                    key("step_key"),
                    "only valid with `json_key` (use a `step` group in the regex)",
                ));
            }
            let compiled = Regex::new(re)
                .map_err(|e| c.fail(key("regex"), format!("does not compile: {e}")))?;
            if !compiled.capture_names().any(|n| n == Some("value")) {
                return Err(c.fail(
                    key("regex"),
                    "needs a named group `value`, e.g. (?P<value>[-+0-9.eE]+)",
                ));
            }
            Ok(Some(compiled))
        }
        (None, Some(json_key)) => {
            if json_key.is_empty() {
                return Err(c.fail(key("json_key"), "must not be empty"));
            }
            Ok(None)
        }
    }
}

/// `[[criterion]]`: at least one, each naming a metric, with a finite published value, a
/// tolerance >= 0 and a well-formed claim.
fn check_criteria(
    c: &Checker<'_>,
    criteria: &[super::CriterionSpec],
    metrics: &[super::MetricSpec],
) -> Result<(), TaskError> {
    if criteria.is_empty() {
        return Err(c.fail(
            KeyPath::of("criterion"),
            "at least one [[criterion]] is required",
        ));
    }
    for (i, cr) in criteria.iter().enumerate() {
        let key = |field: &str| KeyPath::of("criterion").index(i).key(field);
        if !metrics.iter().any(|m| m.name == cr.metric) {
            return Err(c.fail(
                key("metric"),
                format!(
                    "`{}` is not a [[metric]] name (known: {})",
                    cr.metric,
                    metrics
                        .iter()
                        .map(|m| m.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        if !cr.tolerance.is_finite() || cr.tolerance < 0.0 {
            return Err(c.fail(key("tolerance"), "must be a finite number >= 0"));
        }
        if !cr.published.is_finite() {
            return Err(c.fail(key("published"), "must be a finite number"));
        }
        if let Some(claim) = &cr.claim {
            check_claim(c, key("claim"), claim)?;
        }
    }
    Ok(())
}

/// `[integrity]`: protected paths are globs, import lists name top-level modules.
fn check_integrity(c: &Checker<'_>, integrity: &super::IntegritySpec) -> Result<(), TaskError> {
    for (i, glob) in integrity.protected.iter().enumerate() {
        if let Err(e) = globset::Glob::new(glob) {
            return Err(c.fail(
                KeyPath::of("integrity").key("protected").index(i),
                format!("not a valid glob: {e}"),
            ));
        }
    }
    for (field, list) in [
        ("forbid_imports", &integrity.forbid_imports),
        ("require_imports", &integrity.require_imports),
    ] {
        for (i, module) in list.iter().enumerate() {
            if module.is_empty() || !module.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return Err(c.fail(
                    KeyPath::of("integrity").key(field).index(i),
                    format!("`{module}` is not a top-level module name"),
                ));
            }
        }
    }
    Ok(())
}

/// `[reference]`: its log is a file of the task folder.
fn check_reference(
    c: &Checker<'_>,
    dir: &Path,
    reference: &super::ReferenceSpec,
) -> Result<(), TaskError> {
    let log = dir.join(&reference.log);
    if !log.is_file() {
        return Err(c.fail(
            KeyPath::of("reference").key("log"),
            format!("file {} does not exist", log.display()),
        ));
    }
    Ok(())
}

/// `[parity]`: a command, finite tolerances >= 0, a timeout, and source files inside the
/// tasks folder.
fn check_parity(c: &Checker<'_>, dir: &Path, parity: &super::ParitySpec) -> Result<(), TaskError> {
    let key = || KeyPath::of("parity");
    if parity.command.trim().is_empty() {
        return Err(c.fail(key().key("command"), "must not be empty"));
    }
    for (field, value) in [("rtol", parity.rtol), ("atol", parity.atol)] {
        if !value.is_finite() || value < 0.0 {
            return Err(c.fail(key().key(field), "must be a finite number >= 0"));
        }
    }
    if parity.timeout_s == 0 {
        return Err(c.fail(key().key("timeout_s"), "must be at least 1"));
    }
    if let Some(files) = &parity.source_files {
        check_inside_tasks(c, key().key("source_files"), dir, files)?;
    }
    Ok(())
}

/// `[solution]`: a base inside the tasks folder, and removed paths inside (and, for a source
/// folder, of) the source.
fn check_solution(
    c: &Checker<'_>,
    dir: &Path,
    source: &Source,
    solution: &super::SolutionSpec,
) -> Result<(), TaskError> {
    if let Some(base) = &solution.base {
        check_inside_tasks(c, KeyPath::of("solution").key("base"), dir, base)?;
    }
    check_paths_of_source(
        c,
        &KeyPath::of("solution").key("remove"),
        source,
        &solution.remove,
    )
}

/// Each of `paths` (the list at `key`) a path inside the source and, for a source folder, one
/// of its files or folders.
fn check_paths_of_source(
    c: &Checker<'_>,
    key: &KeyPath,
    source: &Source,
    paths: &[String],
) -> Result<(), TaskError> {
    for (i, path) in paths.iter().enumerate() {
        let key = || key.clone().index(i);
        let relative = Path::new(path);
        let inside = !path.is_empty()
            && relative
                .components()
                .all(|part| matches!(part, std::path::Component::Normal(_)));
        if !inside {
            return Err(c.fail(
                key(),
                format!("`{path}` must be a path inside the source (no `..`, not absolute)"),
            ));
        }
        if let Source::Path(root) = source
            && std::fs::symlink_metadata(root.join(relative)).is_err()
        {
            return Err(c.fail(
                key(),
                format!("`{path}` does not exist in the source {}", root.display()),
            ));
        }
    }
    Ok(())
}

/// The prefixes a licence file's name starts with (upper-cased): `LICENSE`, `LICENSE.md`,
/// `LICENCE.txt`, `COPYING`.
const LICENCE_FILES: [&str; 3] = ["LICENSE", "LICENCE", "COPYING"];

/// The licence files at the top of `folder`, sorted.
pub fn licence_files(folder: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| {
            let upper = name.to_ascii_uppercase();
            LICENCE_FILES.iter().any(|prefix| upper.starts_with(prefix))
        })
        .collect();
    found.sort();
    found
}

/// Whether `repository` is `OWNER/NAME` as GitHub spells them: an owner of letters, digits and
/// inner hyphens, a name of letters, digits, `.`, `-` and `_` that is not `.` or `..`.
fn is_owner_and_name(repository: &str) -> bool {
    let Some((owner, name)) = repository.split_once('/') else {
        return false;
    };
    let owner_ok = !owner.is_empty()
        && !owner.starts_with('-')
        && !owner.ends_with('-')
        && owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    let name_ok = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    owner_ok && name_ok
}

/// Why `licence` is not an SPDX licence id or expression, with the id it may have meant.
fn licence_error(licence: &str) -> Option<String> {
    if spdx::Expression::parse(licence).is_ok() {
        return None;
    }
    let hint = spdx::imprecise_license_id(licence)
        .map(|(id, _)| format!(" (did you mean `{}`?)", id.name))
        .unwrap_or_default();
    Some(format!(
        "`{licence}` is not an SPDX licence id such as `MIT` or `Apache-2.0`{hint}"
    ))
}

/// The rules of `[upstream]` (SPEC §2d): `OWNER/NAME`, a full commit (the `[source] rev` of a
/// git source), an SPDX licence whose file the source folder holds, and an experiment that is
/// a file of the source.
fn check_upstream(
    c: &Checker<'_>,
    source: &Source,
    upstream: &super::UpstreamSpec,
) -> Result<(), TaskError> {
    let key = |field: &str| KeyPath::of("upstream").key(field);
    if !is_owner_and_name(&upstream.repository) {
        return Err(c.fail(
            key("repository"),
            format!(
                "`{}` is not OWNER/NAME, such as `karpathy/nanoGPT`",
                upstream.repository
            ),
        ));
    }
    let commit = &upstream.commit;
    if commit.len() != 40 || !commit.chars().all(|ch| ch.is_ascii_hexdigit()) {
        return Err(c.fail(
            key("commit"),
            format!("`{commit}` is not a full commit (40 hexadecimal digits)"),
        ));
    }
    if let Source::Git { rev, .. } = source
        && !rev.eq_ignore_ascii_case(commit)
    {
        return Err(c.fail(
            key("commit"),
            format!("`{commit}` is not the commit `[source] rev` pins (`{rev}`)"),
        ));
    }
    if let Some(message) = licence_error(&upstream.licence) {
        return Err(c.fail(key("licence"), message));
    }
    let experiment = Path::new(&upstream.experiment);
    let inside = !upstream.experiment.is_empty()
        && experiment
            .components()
            .all(|part| matches!(part, std::path::Component::Normal(_)));
    if !inside {
        return Err(c.fail(
            key("experiment"),
            format!(
                "`{}` must be a path inside the repository (no `..`, not absolute)",
                upstream.experiment
            ),
        ));
    }
    if let Source::Path(root) = source {
        if licence_files(root).is_empty() {
            return Err(c.fail(
                key("licence"),
                format!(
                    "the source {} holds no licence file (LICENSE*, LICENCE* or COPYING*)",
                    root.display()
                ),
            ));
        }
        if !root.join(experiment).is_file() {
            return Err(c.fail(
                key("experiment"),
                format!(
                    "`{}` is not a file of the source {}",
                    upstream.experiment,
                    root.display()
                ),
            ));
        }
    }
    for (i, line) in upstream.changed.iter().enumerate() {
        if line.trim().is_empty() {
            return Err(c.fail(key("changed").index(i), "must not be empty"));
        }
    }
    Ok(())
}

/// The rules of a `[criterion.claim]`: a claim that was found names its text, place and value;
/// `no_claim` names none of them; numbers are finite; a measurement has runs.
fn check_claim(c: &Checker<'_>, key: KeyPath, claim: &super::ClaimSpec) -> Result<(), TaskError> {
    let found = claim.status != super::ClaimStatus::NoClaim;
    for (field, present) in [
        ("text", claim.text.is_some()),
        ("where", claim.location.is_some()),
        ("value", claim.value.is_some()),
    ] {
        if found && !present {
            return Err(c.fail(
                key.clone().key(field),
                format!("required when `status` is `{}`", claim.status.as_str()),
            ));
        }
        if !found && present {
            return Err(c.fail(
                key.clone().key(field),
                "must be left out when `status` is `no_claim`",
            ));
        }
    }
    if let Some(value) = claim.value
        && !value.is_finite()
    {
        return Err(c.fail(key.clone().key("value"), "must be a finite number"));
    }
    if !matches!(claim.unit.as_str(), "" | "%") {
        return Err(c.fail(
            key.clone().key("unit"),
            format!("`{}` is not a unit: \"%\" or \"\"", claim.unit),
        ));
    }
    if let Some(m) = &claim.measured {
        let measured = || key.clone().key("measured");
        if m.runs == 0 {
            return Err(c.fail(measured().key("runs"), "must be at least 1"));
        }
        if !m.mean.is_finite() {
            return Err(c.fail(measured().key("mean"), "must be a finite number"));
        }
        if !m.std.is_finite() || m.std < 0.0 {
            return Err(c.fail(measured().key("std"), "must be a finite number >= 0"));
        }
    }
    Ok(())
}
