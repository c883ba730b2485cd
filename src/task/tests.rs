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
