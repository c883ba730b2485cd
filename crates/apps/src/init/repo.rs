//! What `xstack init` reads from the source repository (never writing it): requirements
//! lines and package names (the reference environment itself is `deps.rs`'s), candidate
//! experiment commands (README code blocks, entry-point files), a title, and the
//! hyper-parameters for the `[phase2]` skeleton (the command line, config files named by it or
//! kept in config folders, argparse defaults and upper-case constants of the entry file).

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::command_line::{command_flags, entry_file};
use crate::source_text::{CallSpan, assignment, call_arguments, read_small};
use crate::task::{Framework, Migration};

/// Files that are entry points when they sit at the repository's top level, in order.
const ENTRY_FILES: &[&str] = &["train.py", "main.py", "run.py", "finetune.py", "eval.py"];
/// Packages the JAX side gets by default.
pub const JAX_PACKAGES: &[&str] = &["jax", "flax", "optax"];
/// Settings listed per source.
const MAX_SETTINGS: usize = 40;

fn strip_marker(req: &str) -> &str {
    req.split(';').next().unwrap_or("").trim()
}

/// The requirements of a `requirements.txt`, and the lines left out (pip options such as
/// `-r`, `-e`, `--index-url`).
pub fn parse_requirements(text: &str) -> (Vec<String>, Vec<String>) {
    let mut list = Vec::new();
    let mut skipped = Vec::new();
    for line in text.lines() {
        let line = match line.find(" #") {
            Some(i) => &line[..i],
            None => line,
        }
        .trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('-') {
            skipped.push(line.to_string());
            continue;
        }
        let req = strip_marker(line);
        if !req.is_empty() {
            list.push(req.to_string());
        }
    }
    (list, skipped)
}

/// The distribution name of a requirement (`torch>=2.1` → `torch`), lowercase.
pub fn package_name(req: &str) -> String {
    req.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
        .collect::<String>()
        .to_ascii_lowercase()
        .replace('_', "-")
}

/// Packages the PyTorch side gets by default.
const TORCH_PACKAGES: &[&str] = &["torch"];

/// Where the default port-side packages come from, in words, for the proposal.
pub fn target_packages_note(migration: Migration) -> String {
    let added = match migration.to {
        Framework::Jax => JAX_PACKAGES.join(", "),
        Framework::Torch => TORCH_PACKAGES.join(", "),
    };
    format!(
        "The {} side: the reference packages without the {} family, plus {added}.",
        migration.to.name(),
        migration.from.name()
    )
}

/// The default port-side packages as init prints them: what they are, the family left out
/// named for the direction (a JAX source's target leaves out the JAX family).
pub fn target_environment_line(target: &[String], migration: Migration) -> String {
    format!(
        "target environment: {} (the port's framework and its usual libraries, and the reference packages outside the {} family)",
        target.join(" "),
        migration.from.name()
    )
}

/// The default port-side packages: the reference packages without the source framework's
/// family (and NVIDIA's libraries), plus the port's (jax, flax and optax; or torch).
pub fn target_packages(reference: &[String], migration: Migration) -> Vec<String> {
    let mut out: Vec<String> = reference
        .iter()
        .filter(|r| {
            let name = package_name(r);
            !migration.from.owns_distribution(&name) && !name.starts_with("nvidia-")
        })
        .cloned()
        .collect();
    let added = match migration.to {
        Framework::Jax => JAX_PACKAGES,
        Framework::Torch => TORCH_PACKAGES,
    };
    for p in added {
        if !out.iter().any(|r| package_name(r) == *p) {
            out.push((*p).to_string());
        }
    }
    out
}

/// Deep-learning frameworks besides PyTorch and JAX (module, distribution): a repository
/// that also holds an implementation in one lists it (ppnp's `tensorflow>=1.6,<2.0`), and a
/// port needs it only where the experiment imports it.
const OTHER_FRAMEWORKS: &[(&str, &str)] = &[
    ("tensorflow", "tensorflow"),
    ("tensorflow", "tensorflow-gpu"),
    ("tensorflow", "tensorflow-cpu"),
    ("tensorflow", "tf-nightly"),
    ("keras", "keras"),
    ("mxnet", "mxnet"),
    ("paddle", "paddlepaddle"),
];

/// `target` without the packages of other frameworks that the experiment, importing the
/// modules `imported`, does not import; returns the list and the specs left out.
pub fn without_unimported_frameworks(
    target: Vec<String>,
    imported: &[String],
) -> (Vec<String>, Vec<String>) {
    target.into_iter().partition(|spec| {
        let name = package_name(spec);
        OTHER_FRAMEWORKS
            .iter()
            .find(|(_, distribution)| *distribution == name)
            .is_none_or(|(module, _)| imported.iter().any(|m| m == module))
    })
}

/// Candidate experiment commands: commands in the README's code blocks that run Python or a
/// launcher (a one-line block, ```` ```python train.py``` ````, included), then `python FILE`
/// for the entry-point files at the top level. A README command whose script is not at the
/// root but in one subfolder (`python train.py` for `pygcn/train.py`) runs there:
/// `cd pygcn && python train.py`.
pub fn command_candidates(repo: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(readme) = readme(repo) {
        let mut in_block = false;
        for line in readme.lines() {
            let t = line.trim();
            // A one-line block, or a code span that is its whole line (pytorch-GAT's
            // README.md:189, `python training_script_cora.py --should_test`).
            let one_line_block = t
                .strip_prefix("```")
                .and_then(|rest| rest.strip_suffix("```"))
                .or_else(|| {
                    t.strip_prefix('`')
                        .and_then(|rest| rest.strip_suffix('`'))
                        .filter(|inner| !inner.contains('`'))
                })
                .filter(|inner| !inner.trim().is_empty());
            let text = match one_line_block {
                Some(inner) => inner.trim(),
                None if t.starts_with("```") => {
                    in_block = !in_block;
                    continue;
                }
                None if in_block => t,
                None => continue,
            };
            if let Some(cmd) = readme_command(text).map(|c| in_its_folder(repo, c))
                && !out.contains(&cmd)
            {
                out.push(cmd);
            }
        }
    }
    for file in ENTRY_FILES {
        if repo.join(file).is_file() {
            let cmd = format!("python {file}");
            if !out
                .iter()
                .any(|c| c == &cmd || c == &format!("python3 {file}"))
            {
                out.push(cmd);
            }
        }
    }
    out
}

/// The notebooks of the repository (up to three folders deep, hidden ones skipped), the ones
/// its README names first (klicperajo/ppnp's "Run `simple_example_pytorch.ipynb`"), at most
/// five: the `--notebook` a user may mean when no command is found.
pub fn notebook_candidates(repo: &Path) -> Vec<String> {
    let mut found: Vec<String> = walkdir::WalkDir::new(repo)
        .max_depth(3)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let rel = e
                .path()
                .strip_prefix(repo)
                .ok()?
                .to_string_lossy()
                .into_owned();
            crate::notebook::is_notebook(&rel).then_some(rel)
        })
        .collect();
    let readme = readme(repo).unwrap_or_default();
    found.sort_by_key(|path| !readme.contains(path.as_str()));
    found.truncate(5);
    found
}

/// `command` run in the folder of its script: unchanged when the script it names is at the
/// root (or it names none); `cd SUB && command` when the script is not at the root and one
/// subfolder (up to three deep, hidden ones skipped) holds it.
fn in_its_folder(repo: &Path, command: String) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    let Some(script) = words
        .iter()
        .skip(1)
        .find(|w| !w.starts_with('-'))
        .filter(|w| w.ends_with(".py") && !w.starts_with('/'))
    else {
        return command;
    };
    if !matches!(words[0], "python" | "python3") || repo.join(script).is_file() {
        return command;
    }
    let folders: Vec<PathBuf> = walkdir::WalkDir::new(repo)
        .min_depth(1)
        .max_depth(3)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir() && e.path().join(script).is_file())
        .filter_map(|e| e.path().strip_prefix(repo).ok().map(Path::to_path_buf))
        .collect();
    match &folders[..] {
        [folder] => format!("cd {} && {command}", folder.display()),
        _ => command,
    }
}

/// A command line from a README code block, without its prompt, leading variable
/// assignments and trailing comment; None when it does not run an experiment (a line that
/// installs packages or makes a virtual environment, `python3 -m venv .venv`, prepares one;
/// so does `python setup.py install`; a test runner, `python -m unittest discover tests` or
/// `python -m pytest`, checks the code rather than running an experiment).
fn readme_command(line: &str) -> Option<String> {
    let line = line.strip_prefix("$ ").unwrap_or(line);
    let line = match line.find(" #") {
        Some(i) => &line[..i],
        None => line,
    }
    .trim();
    let words: Vec<&str> = line.split_whitespace().collect();
    let start = words
        .iter()
        .position(|w| !w.contains('=') || w.starts_with('-'))?;
    let words = &words[start..];
    let program = *words.first()?;
    let runs_experiment = matches!(
        program,
        "python" | "python3" | "torchrun" | "accelerate" | "deepspeed" | "bash" | "sh"
    ) || program.starts_with("./");
    let prepares_environment = (words.get(1).is_some_and(|w| *w == "-m")
        && words
            .get(2)
            .is_some_and(|w| matches!(*w, "pip" | "venv" | "virtualenv" | "ensurepip")))
        || words.get(1).is_some_and(|w| *w == "setup.py");
    let runs_tests = words.get(1).is_some_and(|w| *w == "-m")
        && words
            .get(2)
            .is_some_and(|w| matches!(*w, "unittest" | "pytest"));
    (runs_experiment && !prepares_environment && !runs_tests && words.len() > 1)
        .then(|| words.join(" "))
}

fn readme(repo: &Path) -> Option<String> {
    [
        "README.md",
        "README.rst",
        "README.txt",
        "README",
        "readme.md",
    ]
    .iter()
    .find_map(|f| std::fs::read_to_string(repo.join(f)).ok())
}

/// A title: the README's first heading, else the folder's name.
pub fn title(repo: &Path) -> String {
    let heading = readme(repo).and_then(|r| {
        r.lines()
            .find_map(|l| l.strip_prefix("# ").map(|h| h.trim().to_string()))
            .filter(|h| !h.is_empty())
    });
    heading.unwrap_or_else(|| {
        repo.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "PyTorch repository".to_string())
    })
}

/// Settings found in one place.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Where: `command line`, `train.py argparse defaults`, `configs/base.yaml`, …
    pub source: String,
    /// `name = value` pairs, as written.
    pub items: Vec<(String, String)>,
}

/// The hyper-parameters of the experiment: its command line, the config files it names (else
/// those in config folders or named like `*config*`, `*hparams*`), and the entry file's
/// argparse defaults and upper-case constants. The notebook runner's own options (`--cells`)
/// are not the experiment's.
pub fn hyper_parameters(repo: &Path, command: &str) -> Vec<Settings> {
    let words = shell_words::split(command).unwrap_or_default();
    let mut out = Vec::new();
    let flags = if words.iter().any(|w| w == crate::notebook::MODULE) {
        Vec::new()
    } else {
        command_flags(&words)
    };
    if !flags.is_empty() {
        out.push(Settings {
            source: "command line".to_string(),
            items: flags,
        });
    }
    for notebook in words.iter().filter(|w| crate::notebook::is_notebook(w)) {
        if let Some(text) = read_small(&repo.join(notebook)) {
            let code = crate::notebook::python_code(notebook, &text);
            out.extend(function_settings(notebook, &code));
        }
    }
    if let Some(entry) = entry_file(repo, &words) {
        let rel = entry
            .strip_prefix(repo)
            .unwrap_or(&entry)
            .display()
            .to_string();
        if let Some(text) = read_small(&entry) {
            out.extend(function_settings(&rel, &text));
            let defaults = argparse_defaults(&text);
            if !defaults.is_empty() {
                out.push(Settings {
                    source: format!("{rel} argparse defaults"),
                    items: defaults,
                });
            }
            let constants = constants(&text);
            if !constants.is_empty() {
                out.push(Settings {
                    source: format!("{rel} constants"),
                    items: constants,
                });
            }
        }
    }
    for file in config_files(repo, &words) {
        let Some(text) = read_small(&file) else {
            continue;
        };
        let items = flatten_config(&file, &text);
        if !items.is_empty() {
            out.push(Settings {
                source: file
                    .strip_prefix(repo)
                    .unwrap_or(&file)
                    .display()
                    .to_string(),
                items,
            });
        }
    }
    out
}

/// The keyword defaults of each function the top level of `code` calls (`main()`,
/// `ts, ys, model = main()`), as one [`Settings`] a function: what the experiment runs with
/// when the call gives them no value (`main(..., steps=250, seed=5678)`).
fn function_settings(rel: &str, code: &str) -> Vec<Settings> {
    called_functions(code)
        .into_iter()
        .filter_map(|name| {
            let items = keyword_defaults(code, &name);
            (!items.is_empty()).then(|| Settings {
                source: format!("{rel} {name}() keyword defaults"),
                items,
            })
        })
        .collect()
}

/// The functions a top-level statement of `code` calls by a bare name (`main()`,
/// `model = train(...)`) that `code` itself defines, each once, in order.
fn called_functions(code: &str) -> Vec<String> {
    static CALL: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r"^(?:[A-Za-z_][\w\s,]*=\s*)?([A-Za-z_]\w*)\s*\(")
    });
    let mut out: Vec<String> = Vec::new();
    for line in code.lines() {
        let Some(name) = CALL.captures(line).and_then(|c| c.get(1)) else {
            continue;
        };
        let name = name.as_str();
        let defined = code.lines().any(|l| {
            l.strip_prefix("def ")
                .is_some_and(|rest| rest.trim_start().starts_with(&format!("{name}(")))
        });
        if defined && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// The `name=default` parameters of the top-level `def NAME(...)` of `code`, annotations
/// dropped (`seed: int = 0` is `seed = 0`).
fn keyword_defaults(code: &str, function: &str) -> Vec<(String, String)> {
    let head = format!("def {function}(");
    let Some(at) = code
        .match_indices(&head)
        .map(|(i, _)| i)
        .find(|&i| i == 0 || code[..i].ends_with('\n'))
    else {
        return Vec::new();
    };
    let signature = call_arguments(&code[at + head.len()..], CallSpan::Lines);
    top_level_items(signature)
        .into_iter()
        .filter_map(|item| {
            let (name, value) = item.split_once('=')?;
            let name = name.split(':').next()?.trim();
            let value = value.trim();
            let plain = !name.is_empty()
                && !name.starts_with('*')
                && name.chars().all(|c| c.is_alphanumeric() || c == '_');
            (plain && !value.is_empty()).then(|| (name.to_string(), value.to_string()))
        })
        .take(MAX_SETTINGS)
        .collect()
}

/// The comma-separated items of an argument list, commas inside brackets and strings kept.
fn top_level_items(list: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut current = String::new();
    let mut comment = false;
    for ch in list.chars() {
        if comment {
            comment = ch != '\n';
            if comment {
                continue;
            }
        }
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => {}
            None => match ch {
                '#' => {
                    comment = true;
                    continue;
                }
                '\'' | '"' => quote = Some(ch),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(std::mem::take(&mut current));
                    continue;
                }
                _ => {}
            },
        }
        current.push(ch);
    }
    items.push(current);
    items
        .into_iter()
        .map(|i| i.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|i| !i.is_empty())
        .collect()
}

/// `--flag` and `default=` of every `add_argument(...)` call that has a default.
pub fn argparse_defaults(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("add_argument(") {
        let call = &rest[at + "add_argument(".len()..];
        let body = call_arguments(call, CallSpan::Lines);
        rest = &call[body.len()..];
        let Some(flag) = first_string(body) else {
            continue;
        };
        let Some(default) = keyword_value(body, "default") else {
            continue;
        };
        out.push((flag, default));
        if out.len() >= MAX_SETTINGS {
            break;
        }
    }
    out
}

fn first_string(body: &str) -> Option<String> {
    let start = body.find(['\'', '"'])?;
    let q = body[start..].chars().next()?;
    let end = body[start + 1..].find(q)?;
    Some(body[start + 1..start + 1 + end].to_string())
}

/// The value of `key=` at the top level of a call's arguments.
fn keyword_value(body: &str, key: &str) -> Option<String> {
    static KEY: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r"(?:^|[,(\s])(\w+)\s*=")
    });
    for c in KEY.captures_iter(body) {
        let (Some(name), Some(all)) = (c.get(1), c.get(0)) else {
            continue;
        };
        if name.as_str() != key {
            continue;
        }
        let value = &body[all.end()..];
        let mut end = value.len();
        let mut depth = 0;
        let mut quote: Option<char> = None;
        for (i, ch) in value.char_indices() {
            match quote {
                Some(q) if ch == q => quote = None,
                Some(_) => {}
                None => match ch {
                    '\'' | '"' => quote = Some(ch),
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth -= 1,
                    ',' if depth == 0 => {
                        end = i;
                        break;
                    }
                    _ => {}
                },
            }
        }
        let v = value[..end].trim();
        return (!v.is_empty() && v.len() <= 80).then(|| v.to_string());
    }
    None
}

/// Top-level `UPPER_CASE = literal` assignments.
pub fn constants(text: &str) -> Vec<(String, String)> {
    static CONST: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(
            r#"^([A-Z][A-Z0-9_]*)\s*=\s*([-+]?[0-9][0-9_.eE+-]*|True|False|'[^']{0,40}'|"[^"]{0,40}"|\([-+0-9., eE]{1,40}\)|\[[-+0-9., eE]{1,40}\])\s*(?:#.*)?$"#,
        )
    });
    text.lines()
        .filter_map(|l| CONST.captures(l))
        .filter_map(|c| assignment(&c))
        .take(MAX_SETTINGS)
        .collect()
}

/// Config files: those the command names, else YAML/JSON/TOML files (two levels deep at
/// most) in folders named like `conf*` or named like `*config*`, `*hparams*`, `*params*`.
fn config_files(repo: &Path, words: &[String]) -> Vec<PathBuf> {
    let is_config = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json" | "toml"))
    };
    let named: Vec<PathBuf> = words
        .iter()
        .flat_map(|w| w.split('='))
        .map(|w| repo.join(w))
        .filter(|p| is_config(p) && p.is_file())
        .collect();
    if !named.is_empty() {
        return named;
    }
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(repo)
        .max_depth(3)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(Result::ok)
    {
        let p = entry.path();
        if !entry.file_type().is_file() || !is_config(p) {
            continue;
        }
        let rel = p
            .strip_prefix(repo)
            .unwrap_or(p)
            .to_string_lossy()
            .to_lowercase();
        if rel == "pyproject.toml" || rel.ends_with("package.json") {
            continue;
        }
        let named_like = ["conf", "hparam", "param", "args", "settings"]
            .iter()
            .any(|k| rel.contains(k));
        if named_like {
            found.push(p.to_path_buf());
        }
        if found.len() >= 3 {
            break;
        }
    }
    found
}

/// The scalar settings of a config file as dotted names.
pub fn flatten_config(path: &Path, text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
                flatten_json("", &v, &mut out);
            }
        }
        Some("toml") => {
            if let Ok(v) = toml::from_str::<toml::Value>(text) {
                flatten_toml("", &v, &mut out);
            }
        }
        _ => flatten_yaml(text, &mut out),
    }
    out.truncate(MAX_SETTINGS);
    out
}

fn join_key(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn flatten_json(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                flatten_json(&join_key(prefix, k), v, out);
            }
        }
        serde_json::Value::Array(_) | serde_json::Value::Null => {}
        scalar if !prefix.is_empty() => out.push((prefix.to_string(), scalar.to_string())),
        _ => {}
    }
}

fn flatten_toml(prefix: &str, v: &toml::Value, out: &mut Vec<(String, String)>) {
    match v {
        toml::Value::Table(map) => {
            for (k, v) in map {
                flatten_toml(&join_key(prefix, k), v, out);
            }
        }
        toml::Value::Array(_) => {}
        scalar if !prefix.is_empty() => out.push((prefix.to_string(), scalar.to_string())),
        _ => {}
    }
}

/// Block-style YAML mappings with scalar values (enough for experiment configs).
fn flatten_yaml(text: &str, out: &mut Vec<(String, String)>) {
    static LINE: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r"^( *)([A-Za-z_][\w.-]*)\s*:\s*(.*?)\s*(?:\s#.*)?$")
    });
    let mut stack: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let Some(c) = LINE.captures(line) else {
            continue;
        };
        let (Some(indent), Some(key), Some(value)) = (c.get(1), c.get(2), c.get(3)) else {
            continue;
        };
        let indent = indent.as_str().len();
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        let prefix = stack.last().map(|(_, p)| p.clone()).unwrap_or_default();
        let name = join_key(&prefix, key.as_str());
        let value = value.as_str();
        if value.is_empty() {
            stack.push((indent, name));
        } else if !value.starts_with(['|', '>', '&', '*']) {
            out.push((name, value.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notebooks_are_listed_relative_to_the_repository_without_hidden_folders() {
        let dir = tempfile::tempdir().unwrap();
        for path in [
            "lectures/makemore/part3.ipynb",
            "lectures/makemore/.ipynb_checkpoints/part3-checkpoint.ipynb",
            "lectures/makemore/names.txt",
            "demo.ipynb",
        ] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "{}").unwrap();
        }
        assert_eq!(
            notebook_candidates(dir.path()),
            ["demo.ipynb", "lectures/makemore/part3.ipynb"]
        );
    }

    #[test]
    fn requirements_keep_torch_and_skip_pip_options() {
        let (list, skipped) = parse_requirements(
            "# deps\ntorch>=2.1  # cpu is fine\nnumpy\n-r extra.txt\n--index-url https://x\nscikit-learn; python_version > '3.8'\n",
        );
        assert_eq!(list, ["torch>=2.1", "numpy", "scikit-learn"]);
        assert_eq!(skipped, ["-r extra.txt", "--index-url https://x"]);
        assert_eq!(
            target_packages(&list, Migration::default()),
            ["numpy", "scikit-learn", "jax", "flax", "optax"]
        );
        let jax_source: Vec<String> = ["jax[cpu]==0.4.30", "jaxlib", "equinox", "numpy"]
            .map(String::from)
            .to_vec();
        let back = Migration {
            from: Framework::Jax,
            to: Framework::Torch,
        };
        assert_eq!(target_packages(&jax_source, back), ["numpy", "torch"]);
        assert_eq!(
            target_packages_note(back),
            "The PyTorch side: the reference packages without the JAX family, plus torch."
        );
        assert_eq!(
            target_environment_line(&target_packages(&jax_source, back), back),
            "target environment: numpy torch (the port's framework and its usual libraries, and the reference packages outside the JAX family)"
        );
        assert!(
            target_environment_line(&["jax".to_string()], Migration::default())
                .ends_with("outside the PyTorch family)")
        );
        // ppnp's requirements (its `pytorch>=1.5` read as torch): a TensorFlow
        // implementation's framework, which the PyTorch notebook does not import.
        let ppnp: Vec<String> = ["numpy", "scipy", "tensorflow>=1.6,<2.0", "torch>=1.5"]
            .map(String::from)
            .to_vec();
        let target = target_packages(&ppnp, Migration::default());
        assert_eq!(
            without_unimported_frameworks(target.clone(), &["numpy".into(), "torch".into()]),
            (
                ["numpy", "scipy", "jax", "flax", "optax"]
                    .map(String::from)
                    .to_vec(),
                vec!["tensorflow>=1.6,<2.0".to_string()]
            )
        );
        let (kept, left_out) = without_unimported_frameworks(target, &["tensorflow".into()]);
        assert!(kept.contains(&"tensorflow>=1.6,<2.0".to_string()));
        assert!(left_out.is_empty());
    }

    #[test]
    fn commands_come_from_readme_blocks_then_entry_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("README.md"),
            "# Tiny MLP\n\n```sh\npip install -r requirements.txt\n$ python train.py --lr 0.1  # seed 0\nXSTACK_SEED=2 python train.py --lr 0.1\npython -m pip install x\npython3 -m venv .venv\n```\n\nRun `python nope.py` inline.\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("train.py"), "").unwrap();
        std::fs::write(dir.path().join("main.py"), "").unwrap();
        assert_eq!(
            command_candidates(dir.path()),
            [
                "python train.py --lr 0.1",
                "python train.py",
                "python main.py"
            ]
        );
        assert_eq!(title(dir.path()), "Tiny MLP");
    }

    /// karpathy/minGPT: the README's only command runs the unit tests; it is not proposed as
    /// the experiment, so init asks for `--notebook` and names the demo.
    #[test]
    fn a_test_runner_is_not_an_experiment_command() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("README.md"),
            "# minGPT\n\nSee `demo.ipynb`.\n\n### Unit tests\n\n```\npython -m unittest discover tests\npython -m pytest -q\n```\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("demo.ipynb"), "{}").unwrap();
        assert!(command_candidates(dir.path()).is_empty());
        assert_eq!(notebook_candidates(dir.path()), ["demo.ipynb"]);
    }

    /// klicperajo/ppnp: no command, notebooks named in the README's prose; the error says
    /// `--notebook` with them, the README's first.
    #[test]
    fn with_no_command_the_notebooks_are_named_the_readmes_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("README.md"),
            "# ppnp\n\nRun `simple_example_pytorch.ipynb` to train APPNP.\n",
        )
        .unwrap();
        for file in [
            "analysis.ipynb",
            "simple_example_pytorch.ipynb",
            ".ipynb_checkpoints/x.ipynb",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "{}").unwrap();
        }
        assert!(command_candidates(dir.path()).is_empty());
        let notebooks = notebook_candidates(dir.path());
        assert_eq!(
            notebooks,
            ["simple_example_pytorch.ipynb", "analysis.ipynb"]
        );
        let error = super::super::InitError::NoCommand {
            candidates: Vec::new(),
            notebooks,
        };
        assert_eq!(
            error.to_string(),
            "no experiment command: pass --command CMD, or --notebook PATH for a notebook experiment (simple_example_pytorch.ipynb, analysis.ipynb)"
        );
    }

    /// tkipf/pygcn's README: one-line blocks, an install step, and `python train.py` for a
    /// script in the package's folder, which runs there.
    #[test]
    fn a_one_line_block_names_a_command_that_runs_in_its_scripts_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("README.md"),
            "# pygcn\n\n## Installation\n\n```python setup.py install```\n\n## Usage\n\n```python train.py```\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("pygcn")).unwrap();
        std::fs::write(dir.path().join("pygcn/train.py"), "").unwrap();
        assert_eq!(
            command_candidates(dir.path()),
            ["cd pygcn && python train.py"]
        );
        // At the root too: the root's runs; in two subfolders and not at the root: unchanged.
        std::fs::create_dir(dir.path().join("other")).unwrap();
        std::fs::write(dir.path().join("other/train.py"), "").unwrap();
        assert_eq!(command_candidates(dir.path()), ["python train.py"]);
        std::fs::write(dir.path().join("train.py"), "").unwrap();
        assert_eq!(command_candidates(dir.path()), ["python train.py"]);
        // A code span that is its whole line is a command; one inside a sentence is not.
        std::fs::write(
            dir.path().join("README.md"),
            "# GAT\n\nTrain it:\n\n`python training_script_cora.py --should_test`\n\nOr run `python nope.py` in prose.\n",
        )
        .unwrap();
        assert_eq!(
            command_candidates(dir.path()),
            [
                "python training_script_cora.py --should_test",
                "python train.py"
            ]
        );
    }

    #[test]
    fn a_notebooks_main_keyword_defaults_are_its_settings() {
        let dir = tempfile::tempdir().unwrap();
        let cells = [
            "import jax.random as jr\n",
            "def main(\n    dataset_size=10000,\n    lr=1e-2,  # Adam, (default)\n    sizes=(16, 16),\n    *,\n    seed: int = 5678,\n    **kwargs,\n):\n    key = jr.PRNGKey(seed)\n",
            "def helper(x=3):\n    return x\n",
            "ts, ys = main()\n",
        ];
        let notebook = serde_json::json!({
            "cells": cells.iter().map(|c| serde_json::json!({
                "cell_type": "code", "source": c, "metadata": {}, "outputs": [], "execution_count": null
            })).collect::<Vec<_>>(),
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5
        });
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("docs/nb.ipynb"), notebook.to_string()).unwrap();
        let cells = crate::notebook::CellSelection::parse("0-1, 3").unwrap();
        let with_cells = hyper_parameters(
            dir.path(),
            &crate::notebook::command("docs/nb.ipynb", Some(&cells)),
        );
        let found = hyper_parameters(dir.path(), &crate::notebook::command("docs/nb.ipynb", None));
        assert_eq!(with_cells, found);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].source, "docs/nb.ipynb main() keyword defaults");
        let items: Vec<(&str, &str)> = found[0]
            .items
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            items,
            [
                ("dataset_size", "10000"),
                ("lr", "1e-2"),
                ("sizes", "(16, 16)"),
                ("seed", "5678"),
            ]
        );
    }

    #[test]
    fn hyper_parameters_from_command_entry_file_and_configs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("train.py"),
            "import argparse\nEPOCHS = 30\nLR = 1e-3  # Adam\nSEED = int(os.environ.get('S', 0))\n\
             p = argparse.ArgumentParser()\n\
             p.add_argument('--batch-size', type=int, default=64, help='batch (default: 64)')\n\
             p.add_argument(\n    \"--betas\",\n    default=(0.9, 0.999),\n)\np.add_argument('--data')\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("configs")).unwrap();
        std::fs::write(
            dir.path().join("configs/base.yaml"),
            "optimizer:\n  name: adamw\n  lr: 0.001   # peak\n  betas: [0.9, 0.95]\nschedule:\n  warmup: 100\ndata: digits\n",
        )
        .unwrap();
        let found = hyper_parameters(dir.path(), "python train.py --lr 0.1 --epochs=5 --fast");
        let by = |s: &str| {
            found
                .iter()
                .find(|x| x.source == s)
                .unwrap_or_else(|| panic!("no {s} in {found:?}"))
                .items
                .clone()
        };
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            by("command line"),
            pairs(&[("--lr", "0.1"), ("--epochs", "5")])
        );
        assert_eq!(
            by("train.py argparse defaults"),
            pairs(&[("--batch-size", "64"), ("--betas", "(0.9, 0.999)")])
        );
        assert_eq!(
            by("train.py constants"),
            pairs(&[("EPOCHS", "30"), ("LR", "1e-3")])
        );
        assert_eq!(
            by("configs/base.yaml"),
            pairs(&[
                ("optimizer.name", "adamw"),
                ("optimizer.lr", "0.001"),
                ("optimizer.betas", "[0.9, 0.95]"),
                ("schedule.warmup", "100"),
                ("data", "digits"),
            ])
        );
        let json = flatten_config(
            Path::new("a.json"),
            r#"{"model": {"depth": 4, "act": "relu"}, "tags": [1]}"#,
        );
        assert_eq!(
            json,
            pairs(&[("model.act", "\"relu\""), ("model.depth", "4")])
        );
    }
}
