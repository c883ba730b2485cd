//! What a repository's command line runs, read from its words alone: the flags it passes and
//! the Python file it starts. Shared by `init` (hyper-parameters) and `seeds::usage` (seed
//! options), which otherwise know nothing of each other.

use std::path::{Path, PathBuf};

/// `--name value` and `--name=value` pairs of a command line.
pub fn command_flags(words: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let is_value = |w: &str| !w.starts_with('-') || w.parse::<f64>().is_ok();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if let Some(flag) = w.strip_prefix("--").filter(|f| !f.is_empty()) {
            if let Some((name, value)) = flag.split_once('=') {
                out.push((format!("--{name}"), value.to_string()));
            } else if let Some(next) = words.get(i + 1).filter(|n| is_value(n)) {
                out.push((format!("--{flag}"), next.clone()));
                i += 1;
            }
        }
        i += 1;
    }
    out
}

/// The Python file the command runs: the first `*.py` word, or `-m pkg.module`; for a
/// command that starts in a folder of the repository (`cd pygcn && python train.py`), in
/// that folder.
pub fn entry_file(repo: &Path, words: &[String]) -> Option<PathBuf> {
    let (repo, words) = match words {
        [cd, folder, and, rest @ ..] if cd == "cd" && and == "&&" => (repo.join(folder), rest),
        _ => (repo.to_path_buf(), words),
    };
    if let Some(py) = words.iter().find(|w| w.ends_with(".py")) {
        let p = repo.join(py);
        return p.is_file().then_some(p);
    }
    let module = words
        .iter()
        .position(|w| w == "-m")
        .and_then(|i| words.get(i + 1))?;
    let base = repo.join(module.replace('.', "/"));
    [base.with_extension("py"), base.join("__main__.py")]
        .into_iter()
        .find(|p| p.is_file())
}
