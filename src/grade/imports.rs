//! Static scan of Python imports (`import x`, `import x.y as z`, `from x import y`), ignoring
//! strings and comments, and the integrity findings built on it.

use std::path::Path;

use crate::task::IntegritySpec;

/// One import statement's top-level module, with its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The line of the statement.
    pub line: usize,
    /// The top-level module (`jax` for `import jax.numpy as jnp`).
    pub module: String,
}

/// Rewrites Python source into logical statements with strings blanked and comments dropped;
/// each statement keeps the line it started on.
fn statements(source: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut start_line = 1;
    let mut line = 1;
    let mut depth: i32 = 0;
    let chars: Vec<char> = source.chars().collect();
    let mut i = 0;
    let flush = |current: &mut String, start_line: usize, out: &mut Vec<(usize, String)>| {
        if !current.trim().is_empty() {
            out.push((start_line, std::mem::take(current)));
        } else {
            current.clear();
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '\'' | '"' => {
                let triple = i + 2 < chars.len() && chars[i + 1] == c && chars[i + 2] == c;
                i += if triple { 3 } else { 1 };
                while i < chars.len() {
                    let d = chars[i];
                    if d == '\\' {
                        if chars.get(i + 1) == Some(&'\n') {
                            line += 1;
                        }
                        i += 2;
                        continue;
                    }
                    if d == '\n' {
                        line += 1;
                        if !triple {
                            break;
                        }
                    }
                    if d == c
                        && (!triple
                            || (i + 2 < chars.len() && chars[i + 1] == c && chars[i + 2] == c))
                    {
                        i += if triple { 3 } else { 1 };
                        break;
                    }
                    i += 1;
                }
                current.push_str("\"\"");
                continue;
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                line += 1;
                i += 2;
                current.push(' ');
                continue;
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = (depth - 1).max(0),
            '\n' => {
                line += 1;
                if depth == 0 {
                    flush(&mut current, start_line, &mut out);
                    start_line = line;
                } else {
                    current.push(' ');
                }
                i += 1;
                continue;
            }
            ';' if depth == 0 => {
                flush(&mut current, start_line, &mut out);
                start_line = line;
                i += 1;
                continue;
            }
            _ => {}
        }
        if current.trim().is_empty() {
            start_line = line;
        }
        current.push(c);
        i += 1;
    }
    flush(&mut current, start_line, &mut out);
    out
}

fn top_level(dotted: &str) -> Option<String> {
    let name = dotted.trim().split('.').next()?.trim();
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .then(|| name.to_string())
}

/// The absolute imports of a Python source file (relative imports are skipped).
pub fn imports(source: &str) -> Vec<Import> {
    let mut found = Vec::new();
    for (line, stmt) in statements(source) {
        let stmt = stmt.trim();
        let words: Vec<&str> = stmt.split_whitespace().collect();
        match words.first() {
            Some(&"import") => {
                let rest = stmt["import".len()..].replace(['(', ')'], " ");
                for part in rest.split(',') {
                    let module = part.split_whitespace().next().unwrap_or("");
                    if let Some(m) = top_level(module) {
                        found.push(Import { line, module: m });
                    }
                }
            }
            Some(&"from") => {
                if let Some(module) = words.get(1)
                    && !module.starts_with('.')
                    && let Some(m) = top_level(module)
                {
                    found.push(Import { line, module: m });
                }
            }
            _ => {}
        }
    }
    found
}

/// Scans every `.py` file under `root` and reports imports that break the integrity rules:
/// each forbidden import (file and line), and the absence of any required import.
pub fn import_findings(root: &Path, spec: &IntegritySpec) -> Vec<String> {
    let mut findings = Vec::new();
    let mut required_seen = spec.require_imports.is_empty();
    let mut py_files = 0;
    for entry in walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
    {
        let path = entry.path();
        if !entry.file_type().is_file() || path.extension().is_none_or(|e| e != "py") {
            continue;
        }
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        py_files += 1;
        let text = String::from_utf8_lossy(&bytes);
        let rel = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        for import in imports(&text) {
            if spec.forbid_imports.contains(&import.module) {
                findings.push(format!(
                    "{rel}:{}: imports forbidden module `{}`",
                    import.line, import.module
                ));
            }
            if spec.require_imports.contains(&import.module) {
                required_seen = true;
            }
        }
    }
    if !required_seen {
        findings.push(if py_files == 0 {
            "no Python file in the migrated repository".to_string()
        } else {
            format!(
                "no migrated .py file imports any of: {}",
                spec.require_imports.join(", ")
            )
        });
    }
    findings
}

/// The module a package installs under (`scikit-learn` → `sklearn`).
fn module_of(package: &str) -> String {
    let name = package
        .split(|c: char| "=<>!~[; ".contains(c))
        .next()
        .unwrap_or(package)
        .trim()
        .to_ascii_lowercase()
        .replace('-', "_");
    match name.as_str() {
        "scikit_learn" => "sklearn".to_string(),
        "pyyaml" => "yaml".to_string(),
        "pillow" => "PIL".to_string(),
        _ => name,
    }
}

/// Files that change what Python imports or runs at start-up: `sitecustomize.py`,
/// `usercustomize.py`, `.pth` files, and a module or package in the repository named like an
/// installed one (`jax/`, `numpy.py`), which would shadow it.
pub fn shadow_findings(root: &Path, spec: &IntegritySpec, packages: &[String]) -> Vec<String> {
    let mut guarded: Vec<String> = packages.iter().map(|p| module_of(p)).collect();
    guarded.extend(spec.require_imports.iter().cloned());
    guarded.extend(["jax", "jaxlib", "numpy"].map(String::from));
    guarded.sort();
    guarded.dedup();
    let mut findings = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
    {
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file() {
            if name == "sitecustomize.py" || name == "usercustomize.py" {
                findings.push(format!("{rel}: runs code at every Python start-up"));
            } else if name.ends_with(".pth") {
                findings.push(format!(
                    "{rel}: a .pth file can run code and change the import path"
                ));
            } else if let Some(stem) = name.strip_suffix(".py")
                && guarded.iter().any(|g| g == stem)
            {
                findings.push(format!("{rel}: shadows the installed module `{stem}`"));
            }
        } else if entry.file_type().is_dir()
            && guarded.iter().any(|g| *g == name)
            && path.join("__init__.py").is_file()
        {
            findings.push(format!("{rel}/: shadows the installed package `{name}`"));
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules(src: &str) -> Vec<String> {
        imports(src).into_iter().map(|i| i.module).collect()
    }

    #[test]
    fn finds_every_import_form() {
        let src = "import os, sys\nimport jax.numpy as jnp\nfrom torch import nn\nfrom torch.nn import functional as F\nif True:\n    import optax\nimport numpy as np; import flax\n";
        assert_eq!(
            modules(src),
            [
                "os", "sys", "jax", "torch", "torch", "optax", "numpy", "flax"
            ]
        );
    }

    #[test]
    fn ignores_strings_comments_and_relative_imports() {
        let src = "# import torch\nx = 'import torch'\ny = \"\"\"\nimport torch\nfrom torch import nn\n\"\"\"\nfrom . import model\nfrom .utils import f\nprint('from torch import x')\n";
        assert!(modules(src).is_empty(), "{:?}", modules(src));
    }

    #[test]
    fn reports_lines_of_statements() {
        let src = "\"\"\"doc\nstring\"\"\"\nfrom jax import (\n    numpy,\n    random,\n)\nimport torch\n";
        let found = imports(src);
        assert_eq!(
            found[0],
            Import {
                line: 3,
                module: "jax".into()
            }
        );
        assert_eq!(
            found[1],
            Import {
                line: 7,
                module: "torch".into()
            }
        );
    }

    #[test]
    fn start_up_hooks_and_shadowing_packages_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("train.py"), "import jax\n").unwrap();
        std::fs::write(root.join("sitecustomize.py"), "").unwrap();
        std::fs::write(root.join("hack.pth"), "import os\n").unwrap();
        std::fs::create_dir_all(root.join("jax")).unwrap();
        std::fs::write(root.join("jax/__init__.py"), "").unwrap();
        std::fs::write(root.join("sklearn.py"), "").unwrap();
        std::fs::create_dir_all(root.join("data/numpy")).unwrap();
        let findings = shadow_findings(
            root,
            &IntegritySpec::default(),
            &["scikit-learn>=1.0".into(), "optax".into()],
        );
        assert_eq!(
            findings,
            [
                "hack.pth: a .pth file can run code and change the import path",
                "jax/: shadows the installed package `jax`",
                "sitecustomize.py: runs code at every Python start-up",
                "sklearn.py: shadows the installed module `sklearn`",
            ]
        );
    }

    #[test]
    fn findings_name_file_and_line_and_missing_requirement() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("train.py"), "import numpy\nimport torch\n").unwrap();
        let spec = IntegritySpec::default();
        let findings = import_findings(dir.path(), &spec);
        assert_eq!(
            findings,
            [
                "train.py:2: imports forbidden module `torch`",
                "no migrated .py file imports any of: jax"
            ]
        );
        std::fs::write(dir.path().join("model.py"), "import jax\n").unwrap();
        assert_eq!(
            import_findings(dir.path(), &spec),
            ["train.py:2: imports forbidden module `torch`"]
        );
    }
}
