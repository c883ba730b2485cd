//! Every error in a task file names its key path: the reported cases where the message used
//! to name the offending value instead, and random mutations of every bundled task (a key
//! removed, a value of the wrong type, a nonsense enum value, an unknown key) that must
//! always be refused with exit 2 and a key that is in the file or in SPEC §2.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use toml_edit::{DocumentMut, Item, TableLike, Value};
use xstack::task::located::FileError;
use xstack::task::{Task, TaskError};

/// The keys SPEC §2, §2c and §2d define (table names included), and the ones docs/CONTRACTS.md
/// adds (`[solution] remove` and `base`, `[parity] source_files`, a claim's
/// `measured.machine`).
const SPEC_KEYS: &[&str] = &[
    "id",
    "title",
    "summary",
    "source",
    "path",
    "git",
    "rev",
    "published",
    "citation",
    "url",
    "env",
    "packages",
    "reference_packages",
    "setup",
    "run",
    "command",
    "notebook",
    "timeout_s",
    "network",
    "metric",
    "name",
    "regex",
    "json_key",
    "step_key",
    "criterion",
    "reduce",
    "tolerance",
    "direction",
    "integrity",
    "forbid_imports",
    "require_imports",
    "protected",
    "seed_check",
    "phase2",
    "details",
    "reference",
    "log",
    "prompt",
    "extra",
    "parity",
    "rtol",
    "atol",
    "tell_agent",
    "claim",
    "text",
    "where",
    "value",
    "unit",
    "status",
    "measured",
    "runs",
    "mean",
    "std",
    "date",
    "versions",
    "machine",
    "solution",
    "remove",
    "base",
    "source_files",
    "migration",
    "from",
    "to",
    "upstream",
    "repository",
    "commit",
    "licence",
    "experiment",
    "changed",
];

/// Keys whose absence still leaves a valid task (a default or an optional value).
const OPTIONAL_KEYS: &[&str] = &[
    "summary",
    "url",
    "env",
    "packages",
    "reference_packages",
    "setup",
    "timeout_s",
    "network",
    "step_key",
    "reduce",
    "integrity",
    "forbid_imports",
    "require_imports",
    "protected",
    "seed_check",
    "reference",
    "prompt",
    "parity",
    "rtol",
    "atol",
    "tell_agent",
    "claim",
    "unit",
    "measured",
    "versions",
    "machine",
    "solution",
    "remove",
    "base",
    "source_files",
    "migration",
    "from",
    "to",
    "upstream",
    "changed",
    "cells",
    "exclude",
];

/// The keys whose values are enum names.
const ENUM_KEYS: &[&str] = &["direction", "reduce", "status", "from", "to"];

/// Every bundled task folder (`tasks/<id>` and `tasks/catalog/<id>`).
fn bundled_tasks() -> Vec<PathBuf> {
    let tasks = xstack::task::discover(&root().join("tasks"));
    assert!(tasks.len() >= 5, "bundled tasks: {tasks:?}");
    tasks
}

/// Copies of the bundled task folders under a temp folder, each in a folder named as the
/// original (the id must equal the folder's name), with the shared `sources/` beside them.
fn copies() -> (tempfile::TempDir, Vec<(PathBuf, String)>) {
    let tmp = tempfile::tempdir().unwrap();
    overlay(&root().join("tasks/sources"), &tmp.path().join("sources"));
    let mut out = Vec::new();
    for task in bundled_tasks() {
        let dir = tmp.path().join(task.file_name().unwrap());
        overlay(&task, &dir);
        let text = std::fs::read_to_string(dir.join("task.toml")).unwrap();
        out.push((dir, text));
    }
    (tmp, out)
}

/// One step of a path into the document.
#[derive(Debug, Clone, PartialEq)]
enum P {
    K(String),
    I(usize),
}

/// The places in a document a mutation can touch.
#[derive(Debug, Default)]
struct Sites {
    /// Keys of tables (with the path of their table): values, tables and arrays of tables.
    keys: Vec<(Vec<P>, String)>,
    /// Elements of arrays: the array's path and the element's index.
    elements: Vec<(Vec<P>, usize)>,
    /// Tables (the root included), where an unknown key can go.
    tables: Vec<Vec<P>>,
}

fn collect(table: &dyn TableLike, at: Vec<P>, sites: &mut Sites) {
    sites.tables.push(at.clone());
    for (key, item) in table.iter() {
        sites.keys.push((at.clone(), key.to_string()));
        let mut here = at.clone();
        here.push(P::K(key.to_string()));
        match item {
            Item::Value(Value::Array(array)) => {
                for i in 0..array.len() {
                    sites.elements.push((here.clone(), i));
                }
            }
            Item::Table(inner) => collect(inner, here, sites),
            Item::ArrayOfTables(tables) => {
                for (i, inner) in tables.iter().enumerate() {
                    let mut element = here.clone();
                    element.push(P::I(i));
                    collect(inner, element, sites);
                }
            }
            _ => {}
        }
    }
}

fn table_at<'a>(table: &'a mut dyn TableLike, path: &[P]) -> &'a mut dyn TableLike {
    match path {
        [] => table,
        [P::K(key), P::I(i), rest @ ..] => {
            let inner = table
                .get_mut(key)
                .and_then(Item::as_array_of_tables_mut)
                .and_then(|a| a.get_mut(*i))
                .unwrap();
            table_at(inner, rest)
        }
        [P::K(key), rest @ ..] => {
            let inner = table
                .get_mut(key)
                .and_then(Item::as_table_like_mut)
                .unwrap();
            table_at(inner, rest)
        }
        [P::I(_), ..] => unreachable!("a path starts with a key"),
    }
}

/// A value of another type than `value`, which no field of a task accepts in its place.
fn other_type(value: &Value) -> Value {
    match value {
        Value::String(_) => Value::from(7),
        Value::Array(_) | Value::InlineTable(_) => Value::from(1.5),
        _ => Value::from("seven"),
    }
}

/// What a mutation did: its kind and the key path it touched.
#[derive(Debug, Clone)]
struct Mutation {
    kind: Kind,
    path: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Remove,
    Retype,
    Nonsense,
    Unknown,
}

impl Mutation {
    /// Whether an error about `named` is about what this mutation did: the key it touched,
    /// or for a removed key also its table or another key of that table (a rule such as
    /// "exactly one of `path` or `git`").
    fn is_about(&self, named: &str) -> bool {
        if self.kind != Kind::Remove {
            return named == self.path;
        }
        match self.path.rfind(['.', '[']) {
            Some(at) => named.starts_with(&self.path[..at]),
            None => true,
        }
    }
}

fn dotted(path: &[P], key: &str) -> String {
    let mut out = String::new();
    for p in path {
        match p {
            P::K(k) if out.is_empty() => out.push_str(k),
            P::K(k) => out.push_str(&format!(".{k}")),
            P::I(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if out.is_empty() {
        key.to_string()
    } else {
        format!("{out}.{key}")
    }
}

/// Applies mutation `kind` (0 remove, 1 retype, 2 nonsense enum value, 3 unknown key) at
/// site `pick` to the task text; None when the document has no such site.
fn mutate(text: &str, kind: u8, pick: usize, word: &str) -> Option<(String, Mutation)> {
    let mut doc: DocumentMut = text.parse().unwrap();
    let mut sites = Sites::default();
    collect(doc.as_table(), Vec::new(), &mut sites);
    let mutation = match kind {
        0 => {
            let required: Vec<_> = sites
                .keys
                .iter()
                .filter(|(_, k)| !OPTIONAL_KEYS.contains(&k.as_str()))
                .collect();
            let (path, key) = required.get(pick % required.len().max(1))?;
            table_at(doc.as_table_mut(), path).remove(key);
            Mutation {
                kind: Kind::Remove,
                path: dotted(path, key),
            }
        }
        1 => {
            let n = sites.keys.len() + sites.elements.len();
            let pick = pick % n;
            if let Some((path, key)) = sites.keys.get(pick) {
                let table = table_at(doc.as_table_mut(), path);
                let item = table.get_mut(key)?;
                let new = match item {
                    Item::Value(v) => other_type(v),
                    _ => Value::from(3),
                };
                *item = Item::Value(new);
                Mutation {
                    kind: Kind::Retype,
                    path: dotted(path, key),
                }
            } else {
                let (path, i) = &sites.elements[pick - sites.keys.len()];
                let (parent, last) = path.split_at(path.len() - 1);
                let [P::K(key)] = last else { return None };
                let table = table_at(doc.as_table_mut(), parent);
                let array = table.get_mut(key)?.as_array_mut()?;
                let new = other_type(array.get(*i)?);
                array.replace(*i, new);
                Mutation {
                    kind: Kind::Retype,
                    path: format!("{}[{i}]", dotted(parent, key)),
                }
            }
        }
        2 => {
            let enums: Vec<_> = sites
                .keys
                .iter()
                .filter(|(_, k)| ENUM_KEYS.contains(&k.as_str()))
                .collect();
            let (path, key) = enums.get(pick % enums.len().max(1))?;
            let nonsense = format!("{word}-x");
            table_at(doc.as_table_mut(), path).insert(key, toml_edit::value(nonsense.as_str()));
            Mutation {
                kind: Kind::Nonsense,
                path: dotted(path, key),
            }
        }
        _ => {
            let path = &sites.tables[pick % sites.tables.len()];
            let key = format!("{word}_x");
            let table = table_at(doc.as_table_mut(), path);
            if table.contains_key(&key) || SPEC_KEYS.contains(&key.as_str()) {
                return None;
            }
            table.insert(&key, toml_edit::value(1));
            Mutation {
                kind: Kind::Unknown,
                path: dotted(path, &key),
            }
        }
    };
    Some((doc.to_string(), mutation))
}

/// Whether `name` is a key written in the TOML text (a `key =` or a table header).
fn is_key_of(text: &str, name: &str) -> bool {
    let doc: Result<DocumentMut, _> = text.parse();
    let Ok(doc) = doc else { return false };
    let mut sites = Sites::default();
    collect(doc.as_table(), Vec::new(), &mut sites);
    sites.keys.iter().any(|(_, k)| k == name)
}

/// The key names of a printed key path such as `criterion[1].direction`.
fn names_of(path: &str) -> Vec<String> {
    path.split('.')
        .map(|part| part.split('[').next().unwrap_or("").to_string())
        .collect()
}

/// Checks that the error `message` about the mutated `text` names `path`, a key path about
/// what the mutation did whose every name is in the file or in SPEC §2.
fn assert_names_a_key(message: &str, path: &str, text: &str, what: &Mutation) {
    assert!(
        what.is_about(path),
        "{what:?}: the error names `{path}`: {message}"
    );
    let names = names_of(path);
    assert!(!path.is_empty(), "{what:?}: no key in {message}");
    for name in &names {
        assert!(
            SPEC_KEYS.contains(&name.as_str()) || is_key_of(text, name),
            "{what:?}: `{name}` is neither in the file nor in SPEC §2: {message}"
        );
    }
}

/// The key path and line of a `check` message: `…task.toml:LINE: field `PATH`: …`.
fn located(message: &str) -> Option<(usize, String)> {
    let after = message.split("task.toml:").nth(1)?;
    let (line, rest) = after.split_once(": field `")?;
    let (path, _) = rest.split_once('`')?;
    Some((line.parse().ok()?, path.to_string()))
}

#[test]
fn the_reported_cases_name_the_key_path_not_the_value() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("jsonl-protected");
    overlay(&root().join("tests/tasks/jsonl-protected"), &dir);
    let good = std::fs::read_to_string(dir.join("task.toml")).unwrap();
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "direction = \"lower\"",
            "direction = \"down\"",
            "37: field `criterion[0].direction`",
            "unknown variant `down`, expected one of `higher`, `lower`, `within`",
        ),
        (
            "timeout_s = 60",
            "timeout_s = \"60\"",
            "19: field `run.timeout_s`",
            "expected a whole number >= 0",
        ),
        (
            "published = 0.0112",
            "published = \"0.0112\"",
            "35: field `criterion[0].published`",
            "expected a number",
        ),
        (
            "tolerance = 0.0031",
            "tolerance = true",
            "36: field `criterion[0].tolerance`",
            "expected a number",
        ),
        (
            "packages = [\"jax\", \"numpy\"]",
            "packages = \"jax numpy\"",
            "14: field `env.packages`",
            "expected an array",
        ),
        (
            "packages = [\"jax\", \"numpy\"]",
            "packages = [\"jax\", 2]",
            "14: field `env.packages[1]`",
            "expected a string",
        ),
        (
            "protected = [\"eval.py\"]",
            "protected = \"eval.py\"",
            "40: field `integrity.protected`",
            "expected an array",
        ),
        (
            "protected = [\"eval.py\"]",
            "protected = [\"eval.py\"]\nforbid_imports = \"torch\"",
            "41: field `integrity.forbid_imports`",
            "expected an array",
        ),
        (
            "json_key = \"eval_mse\"",
            "json_key = 5",
            "28: field `metric[1].json_key`",
            "expected a string",
        ),
        (
            "command = \"python train.py\"",
            "command = [\"python\", \"train.py\"]",
            "18: field `run.command`",
            "expected a string",
        ),
        (
            "title = \"Linear regression, JSON-lines metrics, protected eval.py\"",
            "title = 1",
            "2: field `title`",
            "expected a string",
        ),
        (
            "reduce = \"last\"",
            "reduce = \"median\"",
            "34: field `criterion[0].reduce`",
            "unknown variant `median`, expected one of `last`, `max`, `min`, `mean`",
        ),
        (
            "reduce = \"last\"",
            "reduce = 1",
            "34: field `criterion[0].reduce`",
            "invalid type: integer `1`, expected one of `last`, `max`, `min`, `mean`",
        ),
    ];
    for (from, to, at, what) in cases {
        assert!(good.contains(from), "{from}");
        std::fs::write(dir.join("task.toml"), good.replacen(from, to, 1)).unwrap();
        let out = run(&["check", dir.to_str().unwrap()]);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{to}: {all}");
        let expected = format!("task.toml:{at}: ");
        assert!(
            all.contains(&expected),
            "{to}: expected `{expected}` in:\n{all}"
        );
        assert!(all.contains(what), "{to}: expected `{what}` in:\n{all}");
    }
}

#[test]
fn one_mutation_of_each_kind_on_every_bundled_task_is_refused_by_check() {
    let (_tmp, tasks) = copies();
    for (dir, good) in &tasks {
        for kind in 0..4u8 {
            let Some((mutated, what)) = mutate(good, kind, 1, "bogus") else {
                continue;
            };
            std::fs::write(dir.join("task.toml"), &mutated).unwrap();
            let out = run(&["check", dir.to_str().unwrap()]);
            let all = text(&out);
            assert_eq!(out.status.code(), Some(2), "{what:?}: {all}");
            assert!(!all.contains("panicked"), "{what:?}: {all}");
            let (line, path) =
                located(&all).unwrap_or_else(|| panic!("{what:?}: no line and key in {all}"));
            assert!(
                line >= 1 && line <= mutated.lines().count().max(1),
                "{what:?}: {all}"
            );
            assert_names_a_key(&all, &path, &mutated, &what);
        }
        std::fs::write(dir.join("task.toml"), good).unwrap();
        let out = run(&["check", dir.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
}

fn load_error(dir: &Path) -> TaskError {
    match Task::load(dir) {
        Ok(task) => panic!("{} loaded", task.file.display()),
        Err(e) => e,
    }
}

#[test]
fn random_mutations_of_the_bundled_tasks_always_name_a_key() {
    let (_tmp, tasks) = copies();
    let mut runner = TestRunner::new(Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (0..tasks.len(), 0u8..4, any::<usize>(), "[a-z][a-z_]{1,9}");
    runner
        .run(&strategy, |(task, kind, pick, word)| {
            let (dir, good) = &tasks[task];
            let Some((text, what)) = mutate(good, kind, pick, &word) else {
                return Ok(());
            };
            std::fs::write(dir.join("task.toml"), &text).unwrap();
            let TaskError::File(FileError::Invalid(located)) = load_error(dir) else {
                panic!("{what:?}: not a task-file error");
            };
            let message = located.to_string();
            prop_assert!(
                located
                    .line
                    .is_some_and(|l| l >= 1 && l <= text.lines().count().max(1)),
                "{:?}: {}",
                what,
                message
            );
            prop_assert!(!located.message.is_empty(), "{:?}: {}", what, message);
            assert_names_a_key(&message, &located.key.to_string(), &text, &what);
            Ok(())
        })
        .unwrap();
}

/// A criterion whose published value is a percentage of a metric its own reference run prints
/// as a fraction (or a fraction of one printed as a percentage) cannot be met by a faithful
/// port: `xstack check` refuses it, naming the criterion, the log's value and the value in
/// the metric's units.
#[test]
fn check_refuses_a_published_value_a_hundred_times_the_reference_runs() {
    let (_tmp, tasks) = copies();
    let (dir, good) = tasks
        .iter()
        .find(|(dir, _)| dir.ends_with("sgc-cora"))
        .expect("sgc-cora is bundled");
    for (published, said, times, units) in [
        (
            "published = 81.0",
            "published = 81",
            "a hundred times",
            "0.81",
        ),
        (
            "published = 0.0081",
            "published = 0.0081",
            "a hundredth of",
            "0.81",
        ),
    ] {
        std::fs::write(
            dir.join("task.toml"),
            good.replacen("\npublished = 0.810", &format!("\n{published}"), 1),
        )
        .unwrap();
        let out = run(&["check", dir.to_str().unwrap()]);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{published}: {all}");
        assert!(
            all.contains(&format!(
                "criterion `test_acc`: {said} is {times} what the reference run printed (0.81 in reference.log)"
            )),
            "{all}"
        );
        assert!(
            all.contains(&format!("in the metric's units it is {units}")),
            "{all}"
        );
    }
    std::fs::write(dir.join("task.toml"), good).unwrap();
    let out = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}
