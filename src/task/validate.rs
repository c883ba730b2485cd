//! Loading `task.toml` and checking every rule of SPEC §2, with errors that name the file,
//! the field and the line.

use std::fmt;
use std::path::{Path, PathBuf};

use regex::Regex;

use super::{Source, TASK_FILE, Task, TaskFile};

/// Why a task could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The task file could not be read.
    #[error("{}: cannot read: {source}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The task file breaks a rule.
    #[error("{}", Located { file, line: *line, field, message })]
    Invalid {
        /// The file.
        file: PathBuf,
        /// The 1-based TOML line, when known.
        line: Option<usize>,
        /// The dotted field path, e.g. `metric[0].regex`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// No task folder matches the argument.
    #[error(
        "task `{arg}` not found: it is neither a folder holding {TASK_FILE} nor a task id under {}",
        tasks_dir.display()
    )]
    NotFound {
        /// The argument given.
        arg: String,
        /// The tasks folder searched.
        tasks_dir: PathBuf,
    },
}

struct Located<'a> {
    file: &'a Path,
    line: Option<usize>,
    field: &'a str,
    message: &'a str,
}

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if self.field.is_empty() {
            write!(f, ": {}", self.message)
        } else {
            write!(f, ": field `{}`: {}", self.field, self.message)
        }
    }
}

/// One step of a path into the TOML document.
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// A node of the parsed document while walking a field path.
enum Node<'a> {
    Table(&'a dyn toml_edit::TableLike),
    Tables(&'a toml_edit::ArrayOfTables),
    Array(&'a toml_edit::Array),
    Leaf,
}

fn node_of_item(item: &toml_edit::Item) -> Node<'_> {
    if let Some(aot) = item.as_array_of_tables() {
        Node::Tables(aot)
    } else if let Some(table) = item.as_table_like() {
        Node::Table(table)
    } else if let Some(array) = item.as_array() {
        Node::Array(array)
    } else {
        Node::Leaf
    }
}

fn node_of_value(value: &toml_edit::Value) -> Node<'_> {
    if let Some(table) = value.as_inline_table() {
        Node::Table(table)
    } else if let Some(array) = value.as_array() {
        Node::Array(array)
    } else {
        Node::Leaf
    }
}

/// Finds the 1-based line of a field in the document: the line of the deepest part of the
/// path that exists (the key itself, or the table that lacks it).
fn line_of(text: &str, path: &[Seg<'_>]) -> Option<usize> {
    let doc = toml_edit::Document::parse(text).ok()?;
    let mut span: Option<std::ops::Range<usize>> = None;
    let mut node = Node::Table(doc.as_table());
    for seg in path {
        node = match (seg, node) {
            (Seg::Key(key), Node::Table(table)) => match table.get_key_value(key) {
                Some((k, item)) => {
                    span = k.span().or_else(|| item.span()).or(span);
                    node_of_item(item)
                }
                None => break,
            },
            (Seg::Index(i), Node::Tables(tables)) => match tables.get(*i) {
                Some(table) => {
                    span = table.span().or(span);
                    Node::Table(table)
                }
                None => break,
            },
            (Seg::Index(i), Node::Array(array)) => match array.get(*i) {
                Some(value) => {
                    span = value.span().or(span);
                    node_of_value(value)
                }
                None => break,
            },
            _ => break,
        };
    }
    span.map(|s| line_at(text, s.start))
}

fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

struct Checker<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Checker<'_> {
    fn fail(&self, path: &[Seg<'_>], message: impl Into<String>) -> TaskError {
        let field = path
            .iter()
            .map(|s| match s {
                Seg::Key(k) => format!(".{k}"),
                Seg::Index(i) => format!("[{i}]"),
            })
            .collect::<String>()
            .trim_start_matches('.')
            .to_string();
        TaskError::Invalid {
            file: self.file.to_path_buf(),
            line: line_of(self.text, path),
            field,
            message: message.into(),
        }
    }
}

/// Loads `dir/task.toml`, checks every rule, and resolves the source.
pub(super) fn load(dir: &Path) -> Result<Task, TaskError> {
    let file = dir.join(TASK_FILE);
    let text = std::fs::read_to_string(&file).map_err(|source| TaskError::Read {
        file: file.clone(),
        source,
    })?;
    parse(dir, &file, &text)
}

fn parse(dir: &Path, file: &Path, text: &str) -> Result<Task, TaskError> {
    let spec: TaskFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_at(text, s.start));
        let field = e
            .span()
            .and_then(|s| text.get(s))
            .map(|s| s.split(['=', '\n']).next().unwrap_or("").trim().to_string())
            .filter(|s| !s.is_empty() && s.len() < 60)
            .unwrap_or_default();
        TaskError::Invalid {
            file: file.to_path_buf(),
            line,
            field,
            message: e.message().trim().to_string(),
        }
    })?;
    let c = Checker { file, text };
    use Seg::{Index, Key};

    let id_ok = {
        let mut chars = spec.id.chars();
        matches!(chars.next(), Some(ch) if ch.is_ascii_lowercase() || ch.is_ascii_digit())
            && chars.all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-')
    };
    if !id_ok {
        return Err(c.fail(&[Key("id")], "must match [a-z0-9][a-z0-9-]*"));
    }
    let folder = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()));
    if folder.as_deref() != Some(spec.id.as_str()) {
        return Err(c.fail(
            &[Key("id")],
            format!(
                "`{}` must equal the task folder's name `{}`",
                spec.id,
                folder.unwrap_or_default()
            ),
        ));
    }
    if spec.title.trim().is_empty() {
        return Err(c.fail(&[Key("title")], "must not be empty"));
    }

    let source = match (&spec.source.path, &spec.source.git) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(c.fail(
                &[Key("source")],
                "exactly one of `path` or `git` is required",
            ));
        }
        (Some(path), None) => {
            if spec.source.rev.is_some() {
                return Err(c.fail(&[Key("source"), Key("rev")], "only valid with `git`"));
            }
            let p = dir.join(path);
            if !p.is_dir() {
                return Err(c.fail(
                    &[Key("source"), Key("path")],
                    format!("folder {} does not exist", p.display()),
                ));
            }
            Source::Path(p)
        }
        (None, Some(url)) => {
            let Some(rev) = &spec.source.rev else {
                return Err(c.fail(&[Key("source"), Key("git")], "`git` needs `rev` (a commit)"));
            };
            Source::Git {
                url: url.clone(),
                rev: rev.clone(),
            }
        }
    };

    if spec.run.command.trim().is_empty() {
        return Err(c.fail(&[Key("run"), Key("command")], "must not be empty"));
    }
    if spec.run.timeout_s == 0 {
        return Err(c.fail(&[Key("run"), Key("timeout_s")], "must be at least 1"));
    }

    if spec.metrics.is_empty() {
        return Err(c.fail(&[Key("metric")], "at least one [[metric]] is required"));
    }
    let mut regexes = Vec::with_capacity(spec.metrics.len());
    for (i, m) in spec.metrics.iter().enumerate() {
        if m.name.trim().is_empty() {
            return Err(c.fail(&[Key("metric"), Index(i), Key("name")], "must not be empty"));
        }
        if spec.metrics[..i].iter().any(|o| o.name == m.name) {
            return Err(c.fail(
                &[Key("metric"), Index(i), Key("name")],
                format!("metric `{}` is defined twice", m.name),
            ));
        }
        match (&m.regex, &m.json_key) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(c.fail(
                    &[Key("metric"), Index(i)],
                    "exactly one of `regex` or `json_key` is required",
                ));
            }
            (Some(re), None) => {
                if m.step_key.is_some() {
                    return Err(c.fail(
                        &[Key("metric"), Index(i), Key("step_key")],
                        "only valid with `json_key` (use a `step` group in the regex)",
                    ));
                }
                let compiled = Regex::new(re).map_err(|e| {
                    c.fail(
                        &[Key("metric"), Index(i), Key("regex")],
                        format!("does not compile: {e}"),
                    )
                })?;
                if !compiled.capture_names().any(|n| n == Some("value")) {
                    return Err(c.fail(
                        &[Key("metric"), Index(i), Key("regex")],
                        "needs a named group `value`, e.g. (?P<value>[-+0-9.eE]+)",
                    ));
                }
                regexes.push(Some(compiled));
            }
            (None, Some(key)) => {
                if key.is_empty() {
                    return Err(c.fail(
                        &[Key("metric"), Index(i), Key("json_key")],
                        "must not be empty",
                    ));
                }
                regexes.push(None);
            }
        }
    }

    if spec.criteria.is_empty() {
        return Err(c.fail(
            &[Key("criterion")],
            "at least one [[criterion]] is required",
        ));
    }
    for (i, cr) in spec.criteria.iter().enumerate() {
        if !spec.metrics.iter().any(|m| m.name == cr.metric) {
            return Err(c.fail(
                &[Key("criterion"), Index(i), Key("metric")],
                format!(
                    "`{}` is not a [[metric]] name (known: {})",
                    cr.metric,
                    spec.metrics
                        .iter()
                        .map(|m| m.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        if !cr.tolerance.is_finite() || cr.tolerance < 0.0 {
            return Err(c.fail(
                &[Key("criterion"), Index(i), Key("tolerance")],
                "must be a finite number >= 0",
            ));
        }
        if !cr.published.is_finite() {
            return Err(c.fail(
                &[Key("criterion"), Index(i), Key("published")],
                "must be a finite number",
            ));
        }
    }

    for (i, glob) in spec.integrity.protected.iter().enumerate() {
        if let Err(e) = globset::Glob::new(glob) {
            return Err(c.fail(
                &[Key("integrity"), Key("protected"), Index(i)],
                format!("not a valid glob: {e}"),
            ));
        }
    }
    for (field, list) in [
        ("forbid_imports", &spec.integrity.forbid_imports),
        ("require_imports", &spec.integrity.require_imports),
    ] {
        for (i, module) in list.iter().enumerate() {
            if module.is_empty() || !module.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return Err(c.fail(
                    &[Key("integrity"), Key(field), Index(i)],
                    format!("`{module}` is not a top-level module name"),
                ));
            }
        }
    }
    if spec.phase2.details.trim().is_empty() {
        return Err(c.fail(&[Key("phase2"), Key("details")], "must not be empty"));
    }
    if let Some(reference) = &spec.reference {
        let log = dir.join(&reference.log);
        if !log.is_file() {
            return Err(c.fail(
                &[Key("reference"), Key("log")],
                format!("file {} does not exist", log.display()),
            ));
        }
    }

    Ok(Task {
        dir: dir.to_path_buf(),
        file: file.to_path_buf(),
        spec,
        source,
        metric_regexes: regexes,
    })
}
