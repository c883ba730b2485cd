//! `xstack init`'s `[upstream]` (SPEC §2d), best effort: when the repository is the top of a
//! git checkout whose remote `origin` is on GitHub, its `OWNER/NAME`, its HEAD commit, the
//! licence its licence file's text gives, the experiment's file and what the checkout changed
//! since HEAD. Git is only read (`--no-optional-locks`: not even the index is refreshed).

use std::path::Path;
use std::process::Command;

use crate::task::{UpstreamSpec, licence_files};

/// What init could tell of where the repository comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Provenance {
    /// Every field was found: the table is written.
    Found(UpstreamSpec),
    /// Some field could not be told: the table is written as a comment with what was found.
    Unknown {
        /// What was found, placeholders elsewhere.
        partial: UpstreamSpec,
        /// What could not be told, one phrase each.
        missing: Vec<String>,
    },
}

impl Provenance {
    /// What init says of it: `upstream: OWNER/NAME@SHORT (MIT), train.py` or why the table is
    /// left as a comment.
    pub fn summary(&self) -> String {
        match self {
            Provenance::Found(u) => {
                format!("upstream: {} ({}), {}", u.label(), u.licence, u.experiment)
            }
            Provenance::Unknown { missing, .. } => format!(
                "upstream: not written: could not tell {}; [upstream] is left as a comment in task.toml to fill in if the repository is public",
                missing.join(", ")
            ),
        }
    }
}

/// `git -C repo ARGS`, its standard output trimmed when it exits 0.
fn git(repo: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// `OWNER/NAME` of a GitHub remote URL (`https://github.com/O/N(.git)`,
/// `git@github.com:O/N(.git)`, `ssh://git@github.com/O/N(.git)`).
pub fn github_repository(url: &str) -> Option<String> {
    let rest = [
        "https://github.com/",
        "http://github.com/",
        "ssh://git@github.com/",
        "git@github.com:",
        "git://github.com/",
    ]
    .iter()
    .find_map(|prefix| url.strip_prefix(prefix))?;
    let rest = rest.trim_end_matches('/');
    let rest = rest.strip_suffix(".git").unwrap_or(rest);
    let (owner, name) = rest.split_once('/')?;
    (!owner.is_empty() && !name.is_empty() && !name.contains('/'))
        .then(|| format!("{owner}/{name}"))
}

/// The SPDX id a licence text is, for the licences whose text says which unambiguously.
pub fn recognise_licence(text: &str) -> Option<&'static str> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let has = |words: &str| flat.contains(words);
    if has("Permission is hereby granted, free of charge, to any person obtaining a copy") {
        Some("MIT")
    } else if has("Apache License") && has("Version 2.0") {
        Some("Apache-2.0")
    } else if has("Redistribution and use in source and binary forms") {
        Some(if has("Neither the name") {
            "BSD-3-Clause"
        } else {
            "BSD-2-Clause"
        })
    } else if has("Mozilla Public License Version 2.0") {
        Some("MPL-2.0")
    } else if has("This is free and unencumbered software released into the public domain") {
        Some("Unlicense")
    } else {
        None
    }
}

/// What `git status` says differs from HEAD, one `PATH: what` line each.
fn changes(repo: &Path) -> Vec<String> {
    let Some(status) = git(repo, &["status", "--porcelain=v1", "--untracked-files=all"]) else {
        return Vec::new();
    };
    status
        .lines()
        .filter(|line| line.len() > 3)
        .map(|line| {
            let (code, path) = line.split_at(3);
            let what = match code.trim() {
                "??" => "added, not committed",
                c if c.contains('D') => "deleted since the commit",
                _ => "changed since the commit",
            };
            format!("{}: {what}", path.trim())
        })
        .collect()
}

/// The licence of the repository's licence file, or why it cannot be told.
fn licence(repo: &Path) -> Result<String, String> {
    let files = licence_files(repo);
    let Some(file) = files.first() else {
        return Err("the licence (no LICENSE, LICENCE or COPYING file)".to_string());
    };
    let text = std::fs::read_to_string(repo.join(file)).unwrap_or_default();
    recognise_licence(&text)
        .map(str::to_string)
        .ok_or_else(|| format!("the licence of {file} (write its SPDX id)"))
}

/// Where `repo` comes from; `experiment` is the file the task runs (absolute or relative to
/// `repo`).
pub fn detect(repo: &Path, experiment: Option<&Path>) -> Provenance {
    let mut missing = Vec::new();
    let mut partial = UpstreamSpec {
        repository: "OWNER/NAME".to_string(),
        commit: "FULL-COMMIT".to_string(),
        licence: "SPDX-ID".to_string(),
        experiment: "PATH/IN/REPOSITORY".to_string(),
        changed: Vec::new(),
    };
    match git(repo, &["rev-parse", "--show-prefix"]) {
        None => missing.push("the repository (not a git checkout)".to_string()),
        Some(prefix) if !prefix.is_empty() => missing.push(format!(
            "the repository ({} is the folder {prefix} of a git checkout, not its top)",
            repo.display()
        )),
        Some(_) => {
            match git(repo, &["remote", "get-url", "origin"]) {
                Some(url) => match github_repository(&url) {
                    Some(name) => partial.repository = name,
                    None => missing.push(format!(
                        "the repository (remote `origin` is {url}, not GitHub)"
                    )),
                },
                None => missing.push("the repository (no git remote `origin`)".to_string()),
            }
            match git(repo, &["rev-parse", "--verify", "HEAD^{commit}"]) {
                Some(commit) => partial.commit = commit,
                None => missing.push("the commit (the checkout has none)".to_string()),
            }
            partial.changed = changes(repo);
        }
    }
    match licence(repo) {
        Ok(id) => partial.licence = id,
        Err(why) => missing.push(why),
    }
    let relative = experiment
        .map(|file| file.strip_prefix(repo).unwrap_or(file))
        .filter(|file| file.is_relative() && repo.join(file).is_file());
    match relative {
        Some(file) => partial.experiment = file.to_string_lossy().into_owned(),
        None => missing.push("the experiment's file (the command names none)".to_string()),
    }
    if missing.is_empty() {
        Provenance::Found(partial)
    } else {
        Provenance::Unknown { partial, missing }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_remotes_give_owner_and_name() {
        for url in [
            "https://github.com/karpathy/nanoGPT",
            "https://github.com/karpathy/nanoGPT.git",
            "git@github.com:karpathy/nanoGPT.git",
            "ssh://git@github.com/karpathy/nanoGPT.git",
        ] {
            assert_eq!(
                github_repository(url).as_deref(),
                Some("karpathy/nanoGPT"),
                "{url}"
            );
        }
        for url in [
            "https://gitlab.com/a/b",
            "/srv/git/b.git",
            "https://github.com/karpathy",
        ] {
            assert_eq!(github_repository(url), None, "{url}");
        }
    }

    #[test]
    fn licence_texts_are_recognised_only_when_unambiguous() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
        assert_eq!(
            recognise_licence(&read("tasks/makemore/repo/LICENSE")),
            Some("MIT")
        );
        assert_eq!(
            recognise_licence(&read("tasks/sources/diffrax/LICENSE")),
            Some("Apache-2.0")
        );
        assert_eq!(
            recognise_licence(
                "Redistribution and use in source and binary forms, with or without\nmodification ... Neither the name of"
            ),
            Some("BSD-3-Clause")
        );
        assert_eq!(
            recognise_licence("GNU GENERAL PUBLIC LICENSE Version 3"),
            None
        );
    }
}
