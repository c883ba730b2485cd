//! Provenance of the bundled tasks (SPEC §2d): every task made from a public repository names
//! it in `[upstream]` (repository, full commit, licence, experiment, the copy's differences
//! from the commit) and passes `xstack check`; the tasks written for xstack have none.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use xstack::task::{Source, Task, licence_files};

/// The bundled tasks made from a public repository, with the repository each names.
const REAL: &[(&str, &str)] = &[
    ("cleanrl-dqn-cartpole", "vwxyzjn/cleanrl"),
    ("cleanrl-dqn-jax-cartpole", "vwxyzjn/cleanrl"),
    ("diffrax-kalman-filter", "patrick-kidger/diffrax"),
    ("diffrax-latent-ode", "patrick-kidger/diffrax"),
    ("diffrax-neural-cde", "patrick-kidger/diffrax"),
    ("diffrax-neural-ode", "patrick-kidger/diffrax"),
    ("equinox-mnist", "patrick-kidger/equinox"),
    ("equinox-train-rnn", "patrick-kidger/equinox"),
    ("jraph-karate-club", "google-deepmind/educational"),
    ("makemore", "karpathy/makemore"),
    ("makemore-cnn", "karpathy/nn-zero-to-hero"),
    ("makemore-part2-mlp", "karpathy/nn-zero-to-hero"),
    ("makemore-part3-bn", "karpathy/nn-zero-to-hero"),
    ("mingpt-sort", "karpathy/minGPT"),
    ("mlp-ngram", "EurekaLabsAI/mlp"),
    ("nanogpt-shakespeare-char", "karpathy/nanoGPT"),
    ("ppnp-appnp-cora-ml", "klicperajo/ppnp"),
    ("pytorch-gat-cora", "gordicaleksa/pytorch-GAT"),
    ("sgc-citeseer", "Tiiiger/SGC"),
    ("sgc-cora", "Tiiiger/SGC"),
];

/// The bundled tasks written for xstack.
const OWN: &[&str] = &[
    "adamw-cosine",
    "char-transformer",
    "digits-cnn-bn",
    "digits-mlp",
    "label-smoothing-init",
];

/// A `changed` line that names a path and says it was added or left out: the path and
/// whether the copy holds it.
fn file_claim(line: &str) -> Option<(&str, bool)> {
    let (path, what) = line.split_once(": ")?;
    if path.contains(' ') {
        return None;
    }
    if what.starts_with("added") {
        Some((path, true))
    } else if what.starts_with("left out") {
        Some((path, false))
    } else {
        None
    }
}

#[test]
fn every_real_task_names_its_upstream_and_passes_check() {
    let mut found: Vec<String> = std::fs::read_dir(root().join("tasks"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().join("task.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut known: Vec<&str> = REAL
        .iter()
        .map(|(id, _)| *id)
        .chain(OWN.iter().copied())
        .collect();
    known.sort();
    assert_eq!(
        found, known,
        "a new bundled task is real (REAL) or xstack's own (OWN)"
    );

    for (id, repository) in REAL {
        let dir = root().join("tasks").join(id);
        let task = Task::load(&dir).unwrap();
        let upstream = task
            .spec
            .upstream
            .as_ref()
            .unwrap_or_else(|| panic!("{id}: no [upstream]"));
        assert_eq!(&upstream.repository, repository, "{id}");
        let Source::Path(source) = &task.source else {
            panic!("{id}: a bundled task's source is a folder")
        };
        assert!(
            !licence_files(source).is_empty(),
            "{id}: no licence file in {}",
            source.display()
        );
        assert!(
            source.join(&upstream.experiment).is_file(),
            "{id}: {}",
            upstream.experiment
        );
        if let Some(notebook) = &task.spec.run.notebook {
            assert_eq!(
                &upstream.experiment, notebook,
                "{id}: the experiment is the notebook run"
            );
        }
        // The commit is the one the task's own notes give for its snapshot.
        let text = std::fs::read_to_string(dir.join("task.toml")).unwrap();
        let notes: String = text
            .lines()
            .filter(|l| l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            notes.contains(&upstream.commit),
            "{id}: the notes do not name {}",
            upstream.commit
        );
        assert!(
            !upstream.changed.is_empty(),
            "{id}: every real copy differs from its commit"
        );
        for line in &upstream.changed {
            if let Some((path, held)) = file_claim(line) {
                assert_eq!(source.join(path).exists(), held, "{id}: `{line}`");
            }
        }
    }
    for id in OWN {
        let task = Task::load(&root().join("tasks").join(id)).unwrap();
        assert_eq!(
            task.spec.upstream, None,
            "{id}: xstack's own task names no upstream"
        );
    }

    let mut args = vec!["check"];
    args.extend(REAL.iter().map(|(id, _)| *id));
    let out = xstack().args(&args).output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    for (id, _) in REAL {
        assert!(said.contains(&format!("ok    {id}")), "{id}: {said}");
    }
}

#[test]
fn check_refuses_a_real_task_whose_source_lost_its_licence_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("makemore");
    overlay(&root().join("tasks/makemore"), &dir);
    std::fs::remove_file(dir.join("repo/LICENSE")).unwrap();
    let out = xstack()
        .args(["check", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("task.toml:"), "{said}");
    assert!(said.contains("field `upstream.licence`"), "{said}");
    assert!(said.contains("holds no licence file"), "{said}");
}

#[test]
fn every_catalog_task_names_the_repository_and_commit_it_clones() {
    let tasks = xstack::task::discover(&root().join("tasks/catalog"));
    assert!(tasks.len() >= 4, "{tasks:?}");
    for dir in tasks {
        let task = Task::load(&dir).unwrap();
        let upstream = task
            .spec
            .upstream
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no [upstream]", dir.display()));
        let Source::Git { url, rev } = &task.source else {
            panic!("{}: a catalog task clones its source", dir.display())
        };
        assert_eq!(url, &format!("https://github.com/{}", upstream.repository));
        assert_eq!(rev, &upstream.commit);
        assert!(
            upstream.changed.is_empty(),
            "{}: a clone is the commit itself",
            dir.display()
        );
    }
}
