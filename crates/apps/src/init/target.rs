//! Where the task goes: the repository, the task id and the task folder, each checked (with
//! the options a run without a terminal needs) before anything runs.

use std::path::{Component, Path, PathBuf};

use super::{Console, InitError, InitOptions, repo};

/// Where the task goes: the repository, the id and the task folder, each checked before
/// anything runs.
pub(super) struct Target {
    /// The repository, absolute.
    pub(super) repo: PathBuf,
    /// The task id.
    pub(super) id: String,
    /// `tasks/<id>`, absolute.
    pub(super) task_dir: PathBuf,
}

impl Target {
    /// Checks every option that can be checked before a run: the repository, the id and its
    /// folder, `--seeds`, `--notebook`, and what a run without a terminal needs from flags.
    pub(super) fn check(
        opts: &InitOptions,
        console: &mut dyn Console,
    ) -> Result<Target, InitError> {
        if !opts.repo.is_dir() {
            return Err(InitError::NoRepo(opts.repo.clone()));
        }
        let repo = absolute(&opts.repo);
        let id = match &opts.id {
            Some(id) => id.clone(),
            None => sanitize_id(&repo.file_name().unwrap_or_default().to_string_lossy()),
        };
        if !valid_id(&id) {
            return Err(InitError::BadId(id));
        }
        let task_dir = absolute(&opts.tasks_dir.join(&id));
        if task_dir.exists() {
            return Err(InitError::Exists(opts.tasks_dir.join(&id)));
        }
        if let Some(n) = opts.seeds
            && n < 2
        {
            return Err(InitError::TooFewSeeds(n));
        }
        if let Some(notebook) = &opts.notebook {
            let path = std::path::Path::new(notebook);
            let inside = path
                .components()
                .all(|part| matches!(part, std::path::Component::Normal(_)));
            if !inside || !crate::notebook::is_notebook(notebook) || !repo.join(path).is_file() {
                return Err(InitError::NoNotebook(notebook.clone()));
            }
            if let Some(cells) = &opts.cells {
                crate::notebook::CellSelection::parse(cells)
                    .and_then(|c| c.check_code_cells(&repo.join(path), notebook))
                    .map_err(|e| InitError::BadCells(e.to_string()))?;
            }
        } else if opts.command.is_none() && !console.interactive() {
            // One candidate is proposed in the review, as a claim is; more are the user's
            // choice.
            let candidates = repo::command_candidates(&repo);
            if candidates.len() != 1 {
                return Err(InitError::NoCommand {
                    candidates,
                    notebooks: repo::notebook_candidates(&repo),
                });
            }
        }
        if !opts.yes && !console.interactive() {
            return Err(InitError::NeedsYes);
        }
        Ok(Target { repo, id, task_dir })
    }
}

/// The id from a folder name: lowercase, runs of other characters → `-`, trimmed.
pub fn sanitize_id(name: &str) -> String {
    let mut out = String::new();
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A path made absolute against the current folder, `.` and `..` resolved, with its longest
/// existing ancestor's symlinks resolved.
fn absolute(p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    let mut clean = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    let mut existing = clean.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match existing.file_name() {
            Some(name) => rest.push(name.to_os_string()),
            None => break,
        }
        if !existing.pop() {
            break;
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    for name in rest.into_iter().rev() {
        out.push(name);
    }
    out
}

/// `to` relative to the folder `from` (both absolute), or `to` itself when they share
/// nothing but the root.
pub fn relative_path(from: &Path, to: &Path) -> String {
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common <= 1 {
        return to.display().to_string();
    }
    let mut rel = PathBuf::new();
    for _ in common..a.len() {
        rel.push("..");
    }
    for c in &b[common..] {
        rel.push(c);
    }
    if rel.as_os_str().is_empty() {
        ".".to_string()
    } else {
        rel.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_from_folder_names() {
        assert_eq!(sanitize_id("My_Repo.v2"), "my-repo-v2");
        assert_eq!(sanitize_id("--x--"), "x");
        assert!(valid_id("digits-mlp"));
        assert!(!valid_id("-x"));
        assert!(!valid_id(""));
    }

    #[test]
    fn source_paths_are_relative_when_they_share_a_folder() {
        assert_eq!(
            relative_path(Path::new("/work/proj/tasks/x"), Path::new("/work/repos/x")),
            "../../../repos/x"
        );
        assert_eq!(
            relative_path(Path::new("/a/t/x"), Path::new("/b/r")),
            "/b/r"
        );
        assert_eq!(
            relative_path(Path::new("/a/t"), Path::new("/a/t/repo")),
            "repo"
        );
    }
}
