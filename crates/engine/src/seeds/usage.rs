//! What a source repository does with its seed, read from its files (never run, never
//! written): whether the command or the code it runs reads `XSTACK_SEED`, where the code fixes
//! a seed (`torch.manual_seed(0)`, `np.random.seed(0)`, `random.seed(0)`, `PRNGKey(0)`, …),
//! and whether the experiment has a seed option of its own (an argparse, click or absl
//! `--seed`, a nanoGPT-style configurator global, a Hydra config key) that `calibrate` and
//! `init` can set from `XSTACK_SEED` in the command.
//!
//! The files read are the ones the command names, the local modules they import (followed
//! transitively) and a configurator they `exec`; when the command names none, every Python
//! and shell file up to two folders deep.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use crate::source_text::{CallSpan, assignment, call_arguments, read_small};

/// Most files read.
const MAX_FILES: usize = 200;
/// Most fixed-seed places kept.
const MAX_FIXED: usize = 8;
/// The variable every run gets.
pub const SEED_VAR: &str = "XSTACK_SEED";

/// One place in the repository (or in the command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file relative to the repository, or `the command`.
    pub file: String,
    /// 1-based line; 0 in the command.
    pub line: usize,
    /// The code there, trimmed.
    pub text: String,
}

impl Location {
    /// `train.py:12`, or `the command`.
    pub fn place(&self) -> String {
        if self.line == 0 {
            self.file.clone()
        } else {
            format!("{}:{}", self.file, self.line)
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` at {}", self.text, self.place())
    }
}

/// How a seed option is written on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionStyle {
    /// `--seed N`.
    Flag,
    /// `--seed=N` (a configurator or absl flag).
    FlagEquals,
    /// `seed=N` (a Hydra override).
    Override,
}

/// A seed option of the repository's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedOption {
    /// The option as typed: `--seed`, `--random-seed`, `seed`.
    pub name: String,
    /// How it takes its value.
    pub style: OptionStyle,
    /// What defines it, in words: `argparse option`, `Hydra config key`, …
    pub kind: &'static str,
    /// Where it is defined.
    pub at: Location,
}

impl SeedOption {
    /// The option set from `XSTACK_SEED`: `--seed $XSTACK_SEED`.
    pub fn setting(&self) -> String {
        match self.style {
            OptionStyle::Flag => format!("{} ${SEED_VAR}", self.name),
            OptionStyle::FlagEquals | OptionStyle::Override => {
                format!("{}=${SEED_VAR}", self.name)
            }
        }
    }

    /// The command with this option set from `XSTACK_SEED`: a value the command gives it
    /// already is replaced, else the setting is appended.
    pub fn apply(&self, command: &str) -> String {
        let name = regex::escape(&self.name);
        let pattern = match self.style {
            OptionStyle::Flag => format!(r"(^|\s){name}(=|\s+)\S+"),
            OptionStyle::FlagEquals | OptionStyle::Override => format!(r"(^|\s){name}(=)\S+"),
        };
        if let Ok(re) = Regex::new(&pattern)
            && re.is_match(command)
        {
            // `$$` is a literal `$` in a replacement.
            let replacement = format!("${{1}}{}${{2}}$${SEED_VAR}", self.name);
            return re.replace(command, replacement.as_str()).into_owned();
        }
        format!("{} {}", command.trim_end(), self.setting())
    }
}

/// What the repository does with its seed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeedUse {
    /// The first place that reads `XSTACK_SEED` (the command itself, or a file it runs).
    pub reads: Option<Location>,
    /// Places that fix a seed to a constant.
    pub fixed: Vec<Location>,
    /// The repository's own seed option, when it has one.
    pub option: Option<SeedOption>,
}

impl SeedUse {
    /// The fixed seeds in words: "`torch.manual_seed(0)` at train.py:12, …", None when none
    /// was found.
    pub fn fixed_text(&self) -> Option<String> {
        if self.fixed.is_empty() {
            return None;
        }
        let shown: Vec<String> = self.fixed.iter().map(Location::to_string).collect();
        Some(shown.join(", "))
    }

    /// One line for the user: what the source does with its seed.
    pub fn summary(&self) -> String {
        let mut parts = vec![match &self.reads {
            Some(at) => format!("reads XSTACK_SEED ({})", at.place()),
            None => "does not read XSTACK_SEED".to_string(),
        }];
        if let Some(fixed) = self.fixed_text() {
            parts.push(format!("fixes a seed: {fixed}"));
        }
        if let Some(o) = &self.option {
            parts.push(format!(
                "has a seed option of its own: {} ({} at {})",
                o.name,
                o.kind,
                o.at.place()
            ));
        }
        format!("seed: the source {}", parts.join("; "))
    }
}

/// Reads what the repository at `repo` does with its seed when `command` runs it.
pub fn inspect(repo: &Path, command: &str) -> SeedUse {
    let words = shell_words::split(command).unwrap_or_default();
    let mut out = SeedUse::default();
    if reads_seed_var(command) {
        out.reads = Some(Location {
            file: "the command".to_string(),
            line: 0,
            text: command.to_string(),
        });
    }
    for (flag, value) in crate::command_line::command_flags(&words) {
        if is_seed_name(flag.trim_start_matches('-')) && !value.contains(SEED_VAR) {
            out.fixed.push(Location {
                file: "the command".to_string(),
                line: 0,
                text: format!("{flag} {value}"),
            });
        }
    }
    let files = relevant_files(repo, &words);
    for file in &files {
        let Some(text) = read_small(file) else {
            continue;
        };
        let rel = file
            .strip_prefix(repo)
            .unwrap_or(file)
            .display()
            .to_string();
        if out.reads.is_none()
            && let Some((i, line)) = text
                .lines()
                .enumerate()
                .find(|(_, l)| reads_seed_var(l) && !is_comment(l))
        {
            out.reads = Some(Location {
                file: rel.clone(),
                line: i + 1,
                text: line.trim().to_string(),
            });
        }
        if is_python(file) || is_notebook(file) {
            for (line, call) in fixed_seeds(&text) {
                if out.fixed.len() < MAX_FIXED {
                    out.fixed.push(Location {
                        file: rel.clone(),
                        line,
                        text: call,
                    });
                }
            }
            if out.option.is_none() && is_python(file) {
                out.option = seed_option(repo, file, &rel, &text);
            }
        }
    }
    out
}

/// Whether a line of code reads `XSTACK_SEED`: the name quoted (`os.environ["XSTACK_SEED"]`,
/// `os.getenv('XSTACK_SEED')`) or expanded by a shell (`$XSTACK_SEED`, `${XSTACK_SEED:-0}`);
/// a mention in prose is not a read.
fn reads_seed_var(line: &str) -> bool {
    static READ: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r#"["']XSTACK_SEED["']|\$\{?XSTACK_SEED\b"#)
    });
    READ.is_match(line)
}

fn is_python(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "py")
}

/// A notebook: its fixed seeds are read in its JSON as they are in a Python file (a code
/// line is a JSON string there), and offset in place.
fn is_notebook(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "ipynb")
}

fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with('#')
}

/// Whether an option or variable name names a seed: `seed`, `random_seed`, `manual-seed`, …
fn is_seed_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace('-', "_");
    matches!(
        name.as_str(),
        "seed" | "random_seed" | "manual_seed" | "rng_seed" | "global_seed"
    )
}

/// The files the command runs: the files it names, the local modules they import, the
/// Python files shell scripts among them run, a configurator they `exec`; when it names
/// none, the Python and shell files up to two folders deep.
fn relevant_files(repo: &Path, words: &[String]) -> Vec<PathBuf> {
    let mut queue: Vec<PathBuf> = words
        .iter()
        .flat_map(|w| w.split('='))
        .map(|w| repo.join(w))
        .filter(|p| p.is_file())
        .collect();
    if let Some(entry) = crate::command_line::entry_file(repo, words)
        && !queue.contains(&entry)
    {
        queue.insert(0, entry);
    }
    if queue.is_empty() {
        queue = walkdir::WalkDir::new(repo)
            .max_depth(3)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| e.into_path())
            .filter(|p| p.extension().is_some_and(|e| e == "py" || e == "sh"))
            .take(MAX_FILES)
            .collect();
    }
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut out = Vec::new();
    let mut i = 0;
    while i < queue.len() && out.len() < MAX_FILES {
        let file = queue[i].clone();
        i += 1;
        if !seen.insert(file.clone()) {
            continue;
        }
        if let Some(text) = read_small(&file) {
            for next in referenced_files(repo, &file, &text) {
                if !seen.contains(&next) {
                    queue.push(next);
                }
            }
        }
        out.push(file);
    }
    out
}

/// Local files a file leads to: the modules a Python file imports, the configurator it
/// `exec`s, the Python files a shell script runs.
fn referenced_files(repo: &Path, file: &Path, text: &str) -> Vec<PathBuf> {
    static IMPORT: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(
            r"(?m)^\s*(?:from\s+(\.*[\w.]*)\s+import\b|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))",
        )
    });
    static EXEC: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r#"exec\(\s*open\(\s*['"]([^'"]+\.py)['"]"#)
    });
    static PY: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r"(?:^|\s)([\w./-]+\.py)\b")
    });
    let dir = file.parent().unwrap_or(repo);
    let mut out = Vec::new();
    let mut module = |name: &str| {
        let relative = name.starts_with('.');
        let path = name.trim_start_matches('.').replace('.', "/");
        if path.is_empty() {
            return;
        }
        let bases = if relative {
            vec![dir.join(&path)]
        } else {
            vec![repo.join(&path), dir.join(&path)]
        };
        for base in bases {
            for candidate in [
                base.with_extension("py"),
                base.join("__main__.py"),
                base.join("__init__.py"),
            ] {
                if candidate.is_file() && !out.contains(&candidate) {
                    out.push(candidate);
                }
            }
        }
    };
    if is_python(file) {
        for c in IMPORT.captures_iter(text) {
            if let Some(m) = c.get(1) {
                module(m.as_str());
            }
            if let Some(m) = c.get(2) {
                for name in m.as_str().split(',') {
                    module(name.trim());
                }
            }
        }
        for c in EXEC.captures_iter(text) {
            if let Some(m) = c.get(1) {
                for base in [repo, dir] {
                    let p = base.join(m.as_str());
                    if p.is_file() && !out.contains(&p) {
                        out.push(p);
                    }
                }
            }
        }
    } else {
        for c in PY.captures_iter(text) {
            if let Some(m) = c.get(1) {
                let p = repo.join(m.as_str());
                if p.is_file() && !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// Whether a call's dotted name seeds a random number generator.
fn is_seeding_call(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name);
    match last {
        "manual_seed" | "manual_seed_all" | "set_seed" | "seed_everything" | "set_random_seed"
        | "PRNGKey" | "default_rng" | "RandomState" => true,
        "seed" => name.ends_with("random.seed"),
        "Random" => name == "random.Random",
        "key" => name == "jax.random.key",
        _ => false,
    }
}

/// Whether a seed expression comes from outside the code: the environment, the command
/// line, a parsed option or config object.
fn reads_outside(args: &str) -> bool {
    static OUTSIDE: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(
            r"environ|getenv|argv|XSTACK_SEED|\b(?:args|opt|opts|options|cfg|config|conf|hparams|params|flags|FLAGS|self|hp)\s*[.\[]",
        )
    });
    OUTSIDE.is_match(args)
}

/// Top-level `NAME = <integer>` assignments, and seed-named parameters whose default is an
/// integer (`def main(..., seed=5678)`, `seed: int = 0,`): a seed fixed through a function's
/// default is fixed all the same when the experiment calls it without one.
fn integer_constants(text: &str) -> Vec<(String, String)> {
    static ASSIGN: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r"(?m)^([A-Za-z_]\w*)\s*=\s*(\d+)\s*(?:#.*)?$")
    });
    static DEFAULT: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(
            r"(?:^|[^\w.=!<>])([A-Za-z_]\w*)\s*(?::\s*int\s*)?=\s*(\d+)\s*(?:[,)]|$)",
        )
    });
    let mut out: Vec<(String, String)> = ASSIGN
        .captures_iter(text)
        .filter_map(|c| assignment(&c))
        .collect();
    for (name, value) in DEFAULT.captures_iter(text).filter_map(|c| assignment(&c)) {
        if is_seed_name(&name) && !out.iter().any(|(k, _)| *k == name) {
            out.push((name, value));
        }
    }
    out
}

/// The calls of a Python file that seed a generator with a constant: an integer literal in
/// the argument (`manual_seed(0)`, `manual_seed(1337 + seed_offset)`), or a name the file
/// binds to an integer at the top level (`SEED = 0` … `random.seed(SEED)`), and nothing
/// read from the environment or an option. As (line, text).
pub fn fixed_seeds(text: &str) -> Vec<(usize, String)> {
    fixed_seed_calls(text)
        .into_iter()
        .map(|call| (call.line, call.text))
        .collect()
}

/// A call that fixes a seed, with where its argument lies in the file's text.
struct FixedCall {
    /// 1-based line.
    line: usize,
    /// The call as shown to the user.
    text: String,
    /// Byte range of the argument text between the parentheses.
    args: std::ops::Range<usize>,
}

/// The expression a varied copy adds to each fixed seed: the run's `XSTACK_SEED`.
pub const SEED_OFFSET: &str = "int(__import__('os').environ['XSTACK_SEED'])";

/// `text` with the argument of every fixed-seed call that [`fixed_seeds`] reports offset by
/// the run's `XSTACK_SEED` (`torch.manual_seed(1337 + seed_offset)` becomes
/// `torch.manual_seed((1337 + seed_offset) + int(__import__('os').environ['XSTACK_SEED']))`),
/// so that seed 0 runs exactly as the file does and every other seed is a different fixed
/// seed; and the lines changed.
pub fn offset_fixed_seeds(text: &str) -> (String, Vec<usize>) {
    let calls = fixed_seed_calls(text);
    let mut out = String::with_capacity(text.len() + calls.len() * 64);
    let mut done = 0;
    let mut lines = Vec::new();
    for call in &calls {
        if call.args.start < done {
            continue;
        }
        out.push_str(&text[done..call.args.start]);
        out.push('(');
        out.push_str(&text[call.args.clone()]);
        out.push_str(") + ");
        out.push_str(SEED_OFFSET);
        done = call.args.end;
        lines.push(call.line);
    }
    out.push_str(&text[done..]);
    (out, lines)
}

/// The fixed-seed calls of a Python file, in order (see [`fixed_seeds`]).
fn fixed_seed_calls(text: &str) -> Vec<FixedCall> {
    static CALL: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(
            r"(?:^|[^\w.])((?:[A-Za-z_]\w*\s*\(\s*\)\s*\.|[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\s*\(",
        )
    });
    static LITERAL: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r"(?:^|[^\w.])\d+(?:[^\w.]|$)")
    });
    static NAME: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r"^\s*(?:int\(\s*)?([A-Za-z_]\w*)\s*\)?\s*(?:,.*)?$")
    });
    let constants = integer_constants(text);
    let mut out = Vec::new();
    let mut offset = 0;
    for (i, raw) in text.split('\n').enumerate() {
        let start = offset;
        offset += raw.len() + 1;
        let line = raw.trim_end_matches('\r');
        let code = line.split(" #").next().unwrap_or(line);
        // A notebook's code line is a JSON string: its quote is not code.
        let unquoted = code.trim_start().trim_start_matches('"');
        if is_comment(unquoted) || unquoted.starts_with("def ") {
            continue;
        }
        for c in CALL.captures_iter(code) {
            let (Some(name), Some(all)) = (c.get(1), c.get(0)) else {
                continue;
            };
            let compact: String = name
                .as_str()
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            let compact = compact.replace("()", "");
            if !is_seeding_call(&compact) {
                continue;
            }
            let args_start = start + all.end();
            let args = call_arguments(&text[args_start..], CallSpan::Line);
            if args.trim().is_empty() || reads_outside(args) {
                continue;
            }
            let constant = NAME
                .captures(args)
                .and_then(|n| n.get(1))
                .and_then(|n| constants.iter().find(|(k, _)| k == n.as_str()));
            let fixed =
                LITERAL.is_match(args.split(',').next().unwrap_or(args)) || constant.is_some();
            if !fixed {
                continue;
            }
            let call = format!("{}({})", name.as_str(), args.trim());
            let text = match constant {
                Some((k, v)) => format!("{call} with {k} = {v}"),
                None => call,
            };
            out.push(FixedCall {
                line: i + 1,
                text,
                args: args_start..args_start + args.len(),
            });
        }
    }
    out
}

/// The repository's own seed option, defined in `text` (the file `rel` of `repo`).
fn seed_option(repo: &Path, file: &Path, rel: &str, text: &str) -> Option<SeedOption> {
    static ARGPARSE: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(
            r#"(add_argument|click\.option)\(\s*(?:['"]-\w['"]\s*,\s*)?['"](--(?:seed|random[-_]seed|manual[-_]seed|rng[-_]seed|global[-_]seed))['"]"#,
        )
    });
    static ABSL: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r#"DEFINE_integer\(\s*['"](seed|random_seed|rng_seed)['"]"#)
    });
    static CONFIGURATOR: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r#"exec\(\s*open\(\s*['"][^'"]*configurator[^'"]*['"]"#)
    });
    let line_of = |byte: usize| text[..byte].matches('\n').count() + 1;
    let line_text = |line: usize| text.lines().nth(line - 1).unwrap_or("").trim().to_string();
    let at = |line: usize| Location {
        file: rel.to_string(),
        line,
        text: line_text(line),
    };
    if let Some(c) = ARGPARSE.captures(text)
        && let (Some(kind), Some(name)) = (c.get(1), c.get(2))
    {
        let line = line_of(name.start());
        return Some(SeedOption {
            name: name.as_str().to_string(),
            style: OptionStyle::Flag,
            kind: if kind.as_str() == "add_argument" {
                "argparse option"
            } else {
                "click option"
            },
            at: at(line),
        });
    }
    if let Some(c) = ABSL.captures(text)
        && let Some(name) = c.get(1)
    {
        return Some(SeedOption {
            name: format!("--{}", name.as_str()),
            style: OptionStyle::FlagEquals,
            kind: "absl flag",
            at: at(line_of(name.start())),
        });
    }
    if let Some(exec) = CONFIGURATOR.find(text) {
        // nanoGPT's configurator: `--name=value` overrides a global assigned before it.
        let before = &text[..exec.start()];
        if let Some((name, _)) = integer_constants(before)
            .into_iter()
            .find(|(k, _)| is_seed_name(k))
        {
            let line = before
                .lines()
                .position(|l| l.trim_start().starts_with(&name) && l.contains('='))
                .map_or(1, |i| i + 1);
            return Some(SeedOption {
                name: format!("--{name}"),
                style: OptionStyle::FlagEquals,
                kind: "configurator key",
                at: at(line),
            });
        }
    }
    hydra_seed(repo, file, text)
}

/// A top-level `seed:` key in the config of a Hydra entry point (`@hydra.main(config_path=…,
/// config_name=…)`), set as a `seed=N` override.
fn hydra_seed(repo: &Path, file: &Path, text: &str) -> Option<SeedOption> {
    static MAIN: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r#"@hydra\.main\(([^)]*)\)"#)
    });
    static KEY: LazyLock<Regex> = LazyLock::new(|| {
        // Invariant: a constant pattern.
        crate::patterns::constant(r#"(config_path|config_name)\s*=\s*['"]([^'"]*)['"]"#)
    });
    let args = MAIN.captures(text)?.get(1)?.as_str();
    let mut path = ".".to_string();
    let mut name = "config".to_string();
    for c in KEY.captures_iter(args) {
        let (Some(k), Some(v)) = (c.get(1), c.get(2)) else {
            continue;
        };
        if k.as_str() == "config_path" {
            path = v.as_str().to_string();
        } else {
            name = v.as_str().trim_end_matches(".yaml").to_string();
        }
    }
    let config = file
        .parent()
        .unwrap_or(repo)
        .join(path)
        .join(format!("{name}.yaml"));
    let yaml = read_small(&config)?;
    let (i, line) = yaml.lines().enumerate().find(|(_, l)| {
        l.split_once(':')
            .is_some_and(|(k, _)| !k.starts_with(' ') && is_seed_name(k.trim()))
    })?;
    let key = line
        .split_once(':')
        .map_or("seed", |(k, _)| k)
        .trim()
        .to_string();
    Some(SeedOption {
        name: key,
        style: OptionStyle::Override,
        kind: "Hydra config key",
        at: Location {
            file: config
                .strip_prefix(repo)
                .unwrap_or(&config)
                .display()
                .to_string(),
            line: i + 1,
            text: line.trim().to_string(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            let p = dir.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }

    #[test]
    fn constant_seeds_are_found_with_their_line() {
        let text = "import numpy as np\nimport torch, random\n\
                    np.random.seed(0)\ntorch.manual_seed(0)  # reproducible\n\
                    random.seed(int(os.environ.get('XSTACK_SEED', 0)))\n\
                    key = jax.random.PRNGKey(0)\n\
                    torch.cuda.manual_seed_all(args.seed)\n\
                    SEED = 42\nrng = np.random.default_rng(SEED)\n\
                    g = torch.Generator().manual_seed(7)\n\
                    # torch.manual_seed(3)\n\
                    def set_seed(seed):\n    random.seed(seed)\n\
                    np.random.seed()\n";
        let found = fixed_seeds(text);
        assert_eq!(
            found,
            [
                (3, "np.random.seed(0)".to_string()),
                (4, "torch.manual_seed(0)".to_string()),
                (6, "jax.random.PRNGKey(0)".to_string()),
                (9, "np.random.default_rng(SEED) with SEED = 42".to_string()),
                (10, "torch.Generator().manual_seed(7)".to_string()),
            ]
        );
    }

    #[test]
    fn nanogpt_fixes_its_seed_in_train_py() {
        // nanoGPT's own train.py and configurator.py (the bundled task's unmodified repo/).
        let repo =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks/nanogpt-shakespeare-char/repo");
        let command = "python train.py config/train_shakespeare_char.py --device=cpu --compile=False --eval_iters=20 --log_interval=1 --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128 --max_iters=2000 --lr_decay_iters=2000 --dropout=0.0";
        let found = inspect(&repo, command);
        assert_eq!(found.reads, None);
        assert_eq!(found.option, None);
        assert_eq!(
            found.fixed,
            [Location {
                file: "train.py".to_string(),
                line: 106,
                text: "torch.manual_seed(1337 + seed_offset)".to_string(),
            }]
        );
        assert_eq!(
            found.fixed_text().unwrap(),
            "`torch.manual_seed(1337 + seed_offset)` at train.py:106"
        );
    }

    #[test]
    fn a_seed_fixed_by_a_keyword_default_in_a_notebook_is_found_and_offset() {
        // diffrax's latent_ode.ipynb: `def main(..., seed=5678)`, `key = jr.PRNGKey(seed)`,
        // and the last cell calls `main()`.
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks/sources/diffrax");
        let notebook = "docs/examples/latent_ode.ipynb";
        let found = inspect(&repo, &crate::notebook::command(notebook, None));
        let texts: Vec<(&str, &str)> = found
            .fixed
            .iter()
            .map(|l| (l.file.as_str(), l.text.as_str()))
            .collect();
        assert_eq!(texts, [(notebook, "jr.PRNGKey(seed) with seed = 5678")]);
        assert!(found.reads.is_none());
        // The offset copy is still the notebook, its one seeding line reading XSTACK_SEED.
        let text = std::fs::read_to_string(repo.join(notebook)).unwrap();
        let (offset, lines) = offset_fixed_seeds(&text);
        assert_eq!(lines, [found.fixed[0].line]);
        let code = crate::notebook::python_code(notebook, &offset);
        let original = crate::notebook::python_code(notebook, &text);
        let changed: Vec<(&str, &str)> = code
            .lines()
            .zip(original.lines())
            .filter(|(a, b)| a != b)
            .collect();
        assert_eq!(
            changed,
            [(
                "    key = jr.PRNGKey((seed) + int(__import__('os').environ['XSTACK_SEED']))",
                "    key = jr.PRNGKey(seed)"
            )]
        );
        // Parameters without an integer default, and other names, fix nothing.
        let text = "def train(seed, steps=100, lr=3):\n    torch.manual_seed(seed)\n    np.random.seed(steps)\n";
        assert!(fixed_seeds(text).is_empty(), "{:?}", fixed_seeds(text));
        let text =
            "def train(steps=100, random_seed: int = 0):\n    torch.manual_seed(random_seed)\n";
        assert_eq!(
            fixed_seeds(text),
            [(
                2,
                "torch.manual_seed(random_seed) with random_seed = 0".to_string()
            )]
        );
    }

    #[test]
    fn fixed_seeds_are_offset_by_the_run_seed_and_nothing_else_changes() {
        let text = "import torch\ntorch.manual_seed(1337 + seed_offset)\n\
                    random.seed(int(os.environ['XSTACK_SEED']))\n\
                    key = jax.random.PRNGKey(0); np.random.seed(3)\n";
        let (offset, lines) = offset_fixed_seeds(text);
        assert_eq!(lines, [2, 4, 4]);
        let seed = "int(__import__('os').environ['XSTACK_SEED'])";
        assert_eq!(
            offset,
            format!(
                "import torch\ntorch.manual_seed((1337 + seed_offset) + {seed})\n\
                 random.seed(int(os.environ['XSTACK_SEED']))\n\
                 key = jax.random.PRNGKey((0) + {seed}); np.random.seed((3) + {seed})\n"
            )
        );
        // The offset calls read the environment: nothing fixed is left.
        assert!(fixed_seeds(&offset).is_empty(), "{offset}");
        // nanoGPT's train.py: line 106 only, every other byte as it was.
        let repo =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks/nanogpt-shakespeare-char/repo");
        let train = std::fs::read_to_string(repo.join("train.py")).unwrap();
        let (offset, lines) = offset_fixed_seeds(&train);
        assert_eq!(lines, [106]);
        let changed: Vec<(usize, &str)> = offset
            .lines()
            .zip(train.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, (a, _))| (i + 1, a))
            .collect();
        assert_eq!(
            changed,
            [(
                106,
                format!("torch.manual_seed((1337 + seed_offset) + {seed})").as_str()
            )]
        );
        assert_eq!(offset.lines().count(), train.lines().count());
    }

    #[test]
    fn a_seed_read_from_the_environment_or_the_command_is_read() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[
                ("train.py", "import util\nutil.go()\n"),
                (
                    "util.py",
                    "import os\nSEED = int(os.environ.get('XSTACK_SEED', 0))\n",
                ),
                ("run.sh", "echo $XSTACK_SEED\n"),
            ],
        );
        let found = inspect(dir.path(), "python train.py");
        assert_eq!(found.reads.unwrap().place(), "util.py:2");
        let found = inspect(dir.path(), "bash run.sh");
        assert_eq!(found.reads.unwrap().place(), "run.sh:1");
        let found = inspect(dir.path(), "python train.py --seed $XSTACK_SEED");
        assert_eq!(found.reads.unwrap().place(), "the command");
        // A seed the command fixes is a fixed seed.
        let found = inspect(dir.path(), "python train.py --seed 3");
        assert_eq!(found.fixed[0].place(), "the command");
        assert_eq!(found.fixed[0].text, "--seed 3");
    }

    #[test]
    fn seed_options_of_each_kind() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[
                (
                    "argp.py",
                    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--lr')\np.add_argument('-s', '--seed', type=int, default=0)\n",
                ),
                ("absl_main.py", "flags.DEFINE_integer('seed', 0, 'seed')\n"),
                (
                    "nano.py",
                    "seed = 1337\nbatch = 4\nexec(open('configurator.py').read())\ntorch.manual_seed(seed)\n",
                ),
                ("configurator.py", "import sys\n"),
                (
                    "hyd.py",
                    "import hydra\n@hydra.main(config_path=\"conf\", config_name=\"base\")\ndef main(cfg):\n    torch.manual_seed(cfg.seed)\n",
                ),
                ("conf/base.yaml", "lr: 0.1\nseed: 0\n"),
            ],
        );
        let option = |cmd: &str| inspect(dir.path(), cmd).option.unwrap();
        let o = option("python argp.py --lr 0.1");
        assert_eq!(
            (o.name.as_str(), o.kind, o.at.place()),
            ("--seed", "argparse option", "argp.py:4".to_string())
        );
        assert_eq!(
            o.apply("python argp.py --lr 0.1"),
            "python argp.py --lr 0.1 --seed $XSTACK_SEED"
        );
        assert_eq!(
            o.apply("python argp.py --seed 4 --lr 1"),
            "python argp.py --seed $XSTACK_SEED --lr 1"
        );
        let o = option("python absl_main.py");
        assert_eq!(o.setting(), "--seed=$XSTACK_SEED");
        let o = option("python nano.py");
        assert_eq!(
            (o.kind, o.at.place()),
            ("configurator key", "nano.py:1".to_string())
        );
        assert_eq!(
            o.apply("python nano.py --seed=5"),
            "python nano.py --seed=$XSTACK_SEED"
        );
        // The configurator's global is a fixed seed until the option sets it.
        assert_eq!(
            inspect(dir.path(), "python nano.py").fixed[0].text,
            "torch.manual_seed(seed) with seed = 1337"
        );
        let o = option("python hyd.py");
        assert_eq!(
            (o.kind, o.at.place()),
            ("Hydra config key", "conf/base.yaml:2".to_string())
        );
        assert_eq!(
            o.apply("python hyd.py lr=0.2"),
            "python hyd.py lr=0.2 seed=$XSTACK_SEED"
        );
    }
}
