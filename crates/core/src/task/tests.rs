use super::*;

const GOOD: &str = r#"id = "demo-task"
title = "A task"

[source]
path = "repo"

[published]
citation = "README"

[env]
packages = []

[run]
command = "python train.py"
timeout_s = 60

[[metric]]
name = "acc"
regex = 'acc=(?P<value>[0-9.]+)'

[[metric]]
name = "loss"
json_key = "loss"
step_key = "step"

[[criterion]]
metric = "acc"
reduce = "max"
published = 0.9
tolerance = 0.01
direction = "higher"

[integrity]
protected = ["eval.py"]

[phase2]
details = "lr 1e-3"
"#;

fn task_dir(text: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("demo-task");
    std::fs::create_dir_all(dir.join("repo")).unwrap();
    std::fs::write(dir.join(TASK_FILE), text).unwrap();
    root
}

fn load_text(text: &str) -> Result<Task, TaskError> {
    let root = task_dir(text);
    Task::load(&root.path().join("demo-task"))
}

fn error_of(text: &str) -> String {
    load_text(text).unwrap_err().to_string()
}

#[test]
fn loads_a_valid_task_with_defaults() {
    let task = load_text(GOOD).unwrap();
    assert_eq!(task.id(), "demo-task");
    assert_eq!(task.spec.integrity.forbid_imports, ["torch"]);
    assert_eq!(task.spec.integrity.require_imports, ["jax"]);
    assert_eq!(task.spec.criteria[0].reduce, Reduce::Max);
    assert!(task.metric_regexes[0].is_some());
    assert!(task.metric_regexes[1].is_none());
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let text = GOOD.replace("[run]\n", "[run]\nfoo = 1\n");
    let err = error_of(&text);
    assert!(err.contains("task.toml:14"), "{err}");
    assert!(err.contains("unknown field `foo`"), "{err}");
}

#[test]
fn id_must_equal_folder_name() {
    let err = error_of(&GOOD.replace("id = \"demo-task\"", "id = \"other\""));
    assert!(err.contains("task.toml:1: field `id`"), "{err}");
    assert!(err.contains("demo-task"), "{err}");
    let err = error_of(&GOOD.replace("id = \"demo-task\"", "id = \"Bad_Id\""));
    assert!(err.contains("[a-z0-9][a-z0-9-]*"), "{err}");
}

#[test]
fn metric_needs_exactly_one_extractor() {
    let text = GOOD.replace("json_key = \"loss\"\nstep_key = \"step\"\n", "");
    let err = error_of(&text);
    assert!(err.contains("field `metric[1]`"), "{err}");
    assert!(
        err.contains("exactly one of `regex` or `json_key`"),
        "{err}"
    );
    assert!(err.contains("task.toml:21"), "{err}");
    let text = GOOD.replace(
        "json_key = \"loss\"",
        "json_key = \"loss\"\nregex = 'x(?P<value>1)'",
    );
    assert!(error_of(&text).contains("exactly one of"));
}

#[test]
fn regex_needs_value_group_and_must_compile() {
    let err = error_of(&GOOD.replace("acc=(?P<value>[0-9.]+)", "acc=([0-9.]+)"));
    assert!(
        err.contains("task.toml:19: field `metric[0].regex`"),
        "{err}"
    );
    assert!(err.contains("named group `value`"), "{err}");
    let err = error_of(&GOOD.replace("acc=(?P<value>[0-9.]+)", "acc=(?P<value>[0-9.+"));
    assert!(err.contains("does not compile"), "{err}");
}

#[test]
fn criterion_rules() {
    let err = error_of(&GOOD.replace("metric = \"acc\"", "metric = \"accuracy\""));
    assert!(err.contains("field `criterion[0].metric`"), "{err}");
    assert!(err.contains("known: acc, loss"), "{err}");
    let err = error_of(&GOOD.replace("tolerance = 0.01", "tolerance = -0.5"));
    assert!(
        err.contains("task.toml:30: field `criterion[0].tolerance`"),
        "{err}"
    );
    let err = error_of(&GOOD.replace("direction = \"higher\"", "direction = \"up\""));
    assert!(err.contains("task.toml:31"), "{err}");
    assert!(err.contains("unknown variant `up`"), "{err}");
    let err = error_of(&GOOD.replace("reduce = \"max\"", "reduce = \"median\""));
    assert!(err.contains("unknown variant `median`"), "{err}");
}

#[test]
fn source_rules() {
    let err = error_of(&GOOD.replace("path = \"repo\"", "path = \"missing\""));
    assert!(err.contains("field `source.path`"), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    let err = error_of(&GOOD.replace("path = \"repo\"", "path = \"repo\"\ngit = \"https://x\""));
    assert!(err.contains("exactly one of `path` or `git`"), "{err}");
    let err = error_of(&GOOD.replace("path = \"repo\"", "git = \"https://x\""));
    assert!(err.contains("needs `rev`"), "{err}");
    let task =
        load_text(&GOOD.replace("path = \"repo\"", "git = \"https://x\"\nrev = \"abc\"")).unwrap();
    assert_eq!(
        task.source,
        Source::Git {
            url: "https://x".into(),
            rev: "abc".into()
        }
    );
}

#[test]
fn an_excluded_path_must_be_a_file_of_the_source() {
    let exclude = |list: &str| {
        GOOD.replace(
            "path = \"repo\"",
            &format!("path = \"repo\"\nexclude = {list}"),
        )
    };
    let err = error_of(&exclude("[\"twin_jax.py\"]"));
    assert!(err.contains("field `source.exclude[0]`"), "{err}");
    assert!(
        err.contains("`twin_jax.py` does not exist in the source"),
        "{err}"
    );
    let err = error_of(&exclude("[\"../other.py\"]"));
    assert!(err.contains("must be a path inside the source"), "{err}");
    let root = task_dir(&exclude("[\"twin_jax.py\"]"));
    std::fs::write(root.path().join("demo-task/repo/twin_jax.py"), "import jax").unwrap();
    let task = Task::load(&root.path().join("demo-task")).unwrap();
    assert_eq!(task.spec.source.exclude, ["twin_jax.py"]);
}

#[test]
fn missing_required_table_is_named() {
    let text = GOOD.replace("[phase2]\ndetails = \"lr 1e-3\"\n", "");
    let err = error_of(&text);
    assert!(err.contains("missing field `phase2`"), "{err}");
}

#[test]
fn resolve_finds_ids_and_paths() {
    let root = task_dir(GOOD);
    let dir = root.path().join("demo-task");
    assert_eq!(resolve(dir.to_str().unwrap()).unwrap(), dir);
    let err = resolve("no-such-task-anywhere").unwrap_err().to_string();
    assert!(err.contains("no-such-task-anywhere"), "{err}");
    assert_eq!(discover(root.path()), vec![dir]);
}

#[test]
fn parity_section_is_optional_and_takes_defaults() {
    assert!(load_text(GOOD).unwrap().spec.parity.is_none());
    let text = format!("{GOOD}\n[parity]\ncommand = \"python probe.py\"\n");
    let parity = load_text(&text).unwrap().spec.parity.unwrap();
    assert_eq!(parity.command, "python probe.py");
    assert_eq!((parity.rtol, parity.atol), (1e-4, 1e-5));
    assert_eq!(parity.timeout_s, 300);
    assert!(!parity.tell_agent);
}

#[test]
fn parity_errors_name_the_file_and_the_field() {
    let cases = [
        ("command = \"  \"", "parity.command", "must not be empty"),
        (
            "command = \"p\"\nrtol = -1.0",
            "parity.rtol",
            "finite number >= 0",
        ),
        (
            "command = \"p\"\natol = nan",
            "parity.atol",
            "finite number >= 0",
        ),
        (
            "command = \"p\"\ntimeout_s = 0",
            "parity.timeout_s",
            "at least 1",
        ),
        (
            "command = \"p\"\ntol = 1.0",
            "parity",
            "unknown field `tol`",
        ),
    ];
    for (body, field, message) in cases {
        let err = error_of(&format!("{GOOD}\n[parity]\n{body}\n"));
        assert!(err.contains("task.toml:"), "{err}");
        assert!(err.contains(field), "{field}: {err}");
        assert!(err.contains(message), "{message}: {err}");
    }
}

#[test]
fn a_notebook_runs_instead_of_a_command_with_the_runner_added_to_both_environments() {
    let text = GOOD
        .replace(
            "command = \"python train.py\"",
            "notebook = \"lectures/part5.ipynb\"",
        )
        .replace(
            "packages = []",
            "packages = [\"jax\"]\nreference_packages = [\"torch\"]",
        );
    let root = task_dir(&text);
    let dir = root.path().join("demo-task");
    std::fs::create_dir_all(dir.join("repo/lectures")).unwrap();
    std::fs::write(dir.join("repo/lectures/part5.ipynb"), "{\"cells\": []}").unwrap();
    let task = Task::load(&dir).unwrap();
    assert_eq!(
        task.spec.run.command,
        "python -m _xstack_notebook lectures/part5.ipynb"
    );
    assert_eq!(
        task.spec.env.packages,
        ["jax", "nbclient==0.11.0", "ipykernel==7.4.0"]
    );
    assert_eq!(
        task.spec.env.reference_packages,
        ["torch", "nbclient==0.11.0", "ipykernel==7.4.0"]
    );
    // Each wrong notebook is named with its field and line; the task folder stays as it was.
    for (notebook, says) in [
        ("lectures/missing.ipynb", "the source has no notebook"),
        ("lectures/part5.py", "is not a notebook (.ipynb)"),
        ("/abs/part5.ipynb", "must be a path inside the repository"),
        ("../part5.ipynb", "must be a path inside the repository"),
    ] {
        std::fs::write(
            dir.join(TASK_FILE),
            text.replace("lectures/part5.ipynb", notebook),
        )
        .unwrap();
        let err = Task::load(&dir).unwrap_err().to_string();
        assert!(
            err.contains("field `run.notebook`") && err.contains(says),
            "{err}"
        );
    }
    std::fs::write(
        dir.join(TASK_FILE),
        text.replace("notebook =", "command = \"python x.py\"\nnotebook ="),
    )
    .unwrap();
    let err = Task::load(&dir).unwrap_err().to_string();
    assert!(
        err.contains("exactly one of `command` or `notebook`"),
        "{err}"
    );
    let err = error_of(&GOOD.replace("command = \"python train.py\"", "timeout_s_x = 1"));
    assert!(err.contains("timeout_s_x"), "{err}");
    let err = error_of(&GOOD.replace("command = \"python train.py\"\n", ""));
    assert!(
        err.contains("field `run.command`") && err.contains("or give `notebook`"),
        "{err}"
    );
}

#[test]
fn the_direction_defaults_to_pytorch_to_jax_and_sets_the_integrity_defaults() {
    assert_eq!(load_text(GOOD).unwrap().migration, Migration::default());
    let back = GOOD.replace(
        "[published]",
        "[migration]\nfrom = \"jax\"\nto = \"torch\"\n\n[published]",
    );
    let task = load_text(&back).unwrap();
    assert_eq!(task.migration.from, Framework::Jax);
    assert_eq!(task.migration.to, Framework::Torch);
    assert_eq!(task.spec.integrity.require_imports, ["torch"]);
    let forbidden = &task.spec.integrity.forbid_imports;
    for module in [
        "jax", "jaxlib", "flax", "optax", "equinox", "diffrax", "haiku", "chex",
    ] {
        assert!(
            forbidden.iter().any(|m| m == module),
            "{module}: {forbidden:?}"
        );
    }
    // `to` follows from `from` alone.
    let from_only = GOOD.replace("[published]", "[migration]\nfrom = \"jax\"\n\n[published]");
    assert_eq!(load_text(&from_only).unwrap().migration, task.migration);
    // An explicit list still wins, even an empty one.
    let explicit = back.replace(
        "[integrity]\n",
        "[integrity]\nforbid_imports = [\"jax\"]\nrequire_imports = []\n",
    );
    let task = load_text(&explicit).unwrap();
    assert_eq!(task.spec.integrity.forbid_imports, ["jax"]);
    assert!(task.spec.integrity.require_imports.is_empty());
}

#[test]
fn a_migration_to_its_own_framework_or_an_unknown_one_is_refused_naming_the_key() {
    let same = GOOD.replace(
        "[published]",
        "[migration]\nfrom = \"jax\"\nto = \"jax\"\n\n[published]",
    );
    let err = error_of(&same);
    assert!(err.contains("task.toml:7: field `migration`"), "{err}");
    assert!(err.contains("`from` and `to` are both `jax`"), "{err}");
    let unknown = GOOD.replace(
        "[published]",
        "[migration]\nfrom = \"tensorflow\"\n\n[published]",
    );
    let err = error_of(&unknown);
    assert!(err.contains("field `migration.from`"), "{err}");
    assert!(err.contains("`torch` or `jax`"), "{err}");
    let to_unknown = GOOD.replace("[published]", "[migration]\nto = \"mlx\"\n\n[published]");
    assert!(error_of(&to_unknown).contains("field `migration.to`"));
}

#[test]
fn tasks_of_one_repository_share_its_source_and_task_files() {
    let root = tempfile::tempdir().unwrap();
    let shared = root.path().join("sources");
    std::fs::create_dir_all(shared.join("sgc")).unwrap();
    std::fs::create_dir_all(shared.join("sgc-jax")).unwrap();
    let text = GOOD
        .replace("path = \"repo\"", "path = \"../sources/sgc\"")
        .replace(
            "[phase2]",
            "[solution]\nbase = \"../sources/sgc-jax\"\n\n[parity]\ncommand = \"python probe.py\"\nsource_files = \"parity\"\n\n[phase2]",
        );
    let dir = root.path().join("demo-task");
    std::fs::create_dir_all(dir.join("parity")).unwrap();
    std::fs::create_dir_all(dir.join("solution")).unwrap();
    std::fs::write(dir.join(TASK_FILE), &text).unwrap();
    let task = Task::load(&dir).unwrap();
    assert_eq!(
        task.source_path(),
        Some(dir.join("../sources/sgc").as_path())
    );
    assert_eq!(
        task.solution_layers(),
        [dir.join("../sources/sgc-jax"), dir.join("solution")]
    );
    assert_eq!(
        task.parity_source_layers(Path::new("/src")),
        [PathBuf::from("/src"), dir.join("parity")]
    );
    // The shared folders hold no task.toml: they are not tasks.
    assert_eq!(discover(root.path()), vec![dir.clone()]);

    // Task files may not leave the tasks folder (the folder holding the task folder).
    for (key, text) in [
        (
            "solution.base",
            text.replace("base = \"../sources/sgc-jax\"", "base = \"../..\""),
        ),
        (
            "parity.source_files",
            text.replace("source_files = \"parity\"", "source_files = \"..\""),
        ),
    ] {
        std::fs::write(dir.join(TASK_FILE), &text).unwrap();
        let err = Task::load(&dir).unwrap_err().to_string();
        assert!(err.contains(&format!("field `{key}`")), "{key}: {err}");
        assert!(err.contains("leaves the tasks folder"), "{err}");
    }
}

/// A task with an `[upstream]` table over `repo/`, which holds `LICENSE` and `train.py`.
fn upstream_task(table: &str) -> tempfile::TempDir {
    let root = task_dir(&format!("{GOOD}\n[upstream]\n{table}\n"));
    let repo = root.path().join("demo-task/repo");
    std::fs::write(repo.join("LICENSE"), "MIT License\n").unwrap();
    std::fs::write(repo.join("train.py"), "print('acc=1.0')\n").unwrap();
    root
}

const UPSTREAM: &str = r#"repository = "karpathy/nanoGPT"
commit = "3adf61e154c3fe3fca428ad6bc3818b27a3b8291"
licence = "MIT"
experiment = "train.py"
changed = ["probe.py: added, the parity probe"]"#;

#[test]
fn an_upstream_table_is_read_with_its_label_and_link() {
    let root = upstream_task(UPSTREAM);
    let task = Task::load(&root.path().join("demo-task")).unwrap();
    let upstream = task.spec.upstream.unwrap();
    assert_eq!(upstream.label(), "karpathy/nanoGPT@3adf61e");
    assert_eq!(
        upstream.url(),
        "https://github.com/karpathy/nanoGPT/tree/3adf61e154c3fe3fca428ad6bc3818b27a3b8291"
    );
    assert_eq!(upstream.changed, ["probe.py: added, the parity probe"]);
    assert_eq!(
        upstream.describe(),
        "from karpathy/nanoGPT@3adf61e (MIT), train.py, 1 change"
    );
    let without = load_text(GOOD).unwrap();
    assert_eq!(without.spec.upstream, None);
}

#[test]
fn each_bad_upstream_field_is_refused_naming_it_and_its_line() {
    let cases = [
        (
            "repository = \"karpathy/nanoGPT\"",
            "repository = \"nanoGPT\"",
            "upstream.repository",
            "not OWNER/NAME",
        ),
        (
            "repository = \"karpathy/nanoGPT\"",
            "repository = \"https://github.com/karpathy/nanoGPT\"",
            "upstream.repository",
            "not OWNER/NAME",
        ),
        (
            "commit = \"3adf61e154c3fe3fca428ad6bc3818b27a3b8291\"",
            "commit = \"3adf61e\"",
            "upstream.commit",
            "40 hexadecimal digits",
        ),
        (
            "commit = \"3adf61e154c3fe3fca428ad6bc3818b27a3b8291\"",
            "commit = \"3adf61e154c3fe3fca428ad6bc3818b27a3b829z\"",
            "upstream.commit",
            "40 hexadecimal digits",
        ),
        (
            "licence = \"MIT\"",
            "licence = \"MIT-ish\"",
            "upstream.licence",
            "not an SPDX licence id",
        ),
        (
            "licence = \"MIT\"",
            "licence = \"apache 2.0\"",
            "upstream.licence",
            "did you mean `Apache-2.0`?",
        ),
        (
            "experiment = \"train.py\"",
            "experiment = \"missing.py\"",
            "upstream.experiment",
            "not a file of the source",
        ),
        (
            "experiment = \"train.py\"",
            "experiment = \"../train.py\"",
            "upstream.experiment",
            "inside the repository",
        ),
        (
            "changed = [\"probe.py: added, the parity probe\"]",
            "changed = [\"  \"]",
            "upstream.changed[0]",
            "must not be empty",
        ),
        (
            "licence = \"MIT\"",
            "licence = \"MIT\"\nlicense = \"MIT\"",
            "upstream",
            "unknown field `license`",
        ),
        (
            "experiment = \"train.py\"\n",
            "",
            "upstream.experiment",
            "missing field `experiment`",
        ),
    ];
    for (good, bad, field, message) in cases {
        let table = format!("{UPSTREAM}\n").replace(good, bad);
        assert_ne!(table, format!("{UPSTREAM}\n"), "{bad}");
        let root = upstream_task(&table);
        let err = Task::load(&root.path().join("demo-task"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("task.toml:"), "{err}");
        assert!(err.contains(&format!("field `{field}")), "{field}: {err}");
        assert!(err.contains(message), "{message}: {err}");
    }
}

#[test]
fn the_source_must_hold_a_licence_file() {
    let root = upstream_task(UPSTREAM);
    let repo = root.path().join("demo-task/repo");
    std::fs::remove_file(repo.join("LICENSE")).unwrap();
    let err = Task::load(&root.path().join("demo-task"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("`upstream.licence`"), "{err}");
    assert!(err.contains("holds no licence file"), "{err}");
    for name in ["LICENSE.md", "licence.txt", "COPYING"] {
        std::fs::write(repo.join(name), "text\n").unwrap();
        Task::load(&root.path().join("demo-task")).unwrap();
        std::fs::remove_file(repo.join(name)).unwrap();
    }
}

#[test]
fn a_git_source_pins_the_upstream_commit() {
    let text = GOOD.replace(
        "path = \"repo\"",
        "git = \"https://github.com/karpathy/nanoGPT\"\nrev = \"3adf61e154c3fe3fca428ad6bc3818b27a3b8291\"",
    );
    let table = UPSTREAM.replace(
        "experiment = \"train.py\"",
        "experiment = \"config/train.py\"",
    );
    let good = format!("{text}\n[upstream]\n{table}\n");
    load_text(&good).unwrap();
    let other = good.replace(
        "rev = \"3adf61e154c3fe3fca428ad6bc3818b27a3b8291\"",
        "rev = \"93a43d9a5c22450bbf06e78da2cb6eeef084b717\"",
    );
    let err = load_text(&other).unwrap_err().to_string();
    assert!(err.contains("`upstream.commit`"), "{err}");
    assert!(err.contains("[source] rev"), "{err}");
}

#[test]
fn run_cells_need_a_notebook_and_name_only_its_code_cells() {
    let notebook = r##"{"cells": [
        {"cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": []},
        {"cell_type": "code", "source": "raise ValueError", "metadata": {}, "outputs": []},
        {"cell_type": "markdown", "source": "# notes", "metadata": {}},
        {"cell_type": "code", "source": "print(x)", "metadata": {}, "outputs": []}
    ]}"##;
    let with_cells = |cells: &str| {
        GOOD.replace(
            "command = \"python train.py\"",
            &format!("notebook = \"nb.ipynb\"\ncells = \"{cells}\""),
        )
    };
    let line_of = |text: &str| {
        1 + text
            .lines()
            .position(|l| l.starts_with("cells = "))
            .unwrap()
    };
    let root = task_dir(&with_cells("0, 3"));
    let dir = root.path().join("demo-task");
    std::fs::write(dir.join("repo/nb.ipynb"), notebook).unwrap();
    let task = Task::load(&dir).unwrap();
    assert_eq!(
        task.spec.run.command,
        "python -m _xstack_notebook nb.ipynb --cells 0,3"
    );
    for (cells, says) in [
        ("0-1; 3", "`1; 3` is not a cell index"),
        ("3-0", "the range `3-0` runs backwards"),
        ("0, 0", "`0` does not come after cell 0"),
        ("0-3", "nb.ipynb#cell=2 is a markdown cell, not a code cell"),
        (
            "0, 4",
            "nb.ipynb has no cell 4 (it has 4 cells, numbered from 0)",
        ),
    ] {
        let text = with_cells(cells);
        std::fs::write(dir.join(TASK_FILE), &text).unwrap();
        let err = Task::load(&dir).unwrap_err().to_string();
        let at = format!("task.toml:{}", line_of(&text));
        assert!(
            err.contains(&at) && err.contains("field `run.cells`") && err.contains(says),
            "{cells}: {err}"
        );
    }
    // The notebook's path is checked first: one outside the repository is named as such.
    std::fs::write(
        dir.join(TASK_FILE),
        with_cells("0").replace("nb.ipynb", "../nb.ipynb"),
    )
    .unwrap();
    let err = Task::load(&dir).unwrap_err().to_string();
    assert!(
        err.contains("field `run.notebook`") && err.contains("must be a path inside"),
        "{err}"
    );
    let text = GOOD.replace(
        "command = \"python train.py\"",
        "command = \"python train.py\"\ncells = \"0-6\"",
    );
    let err = error_of(&text);
    assert!(
        err.contains(&format!("task.toml:{}", line_of(&text)))
            && err.contains("field `run.cells`")
            && err.contains("only valid with `notebook`"),
        "{err}"
    );
}
