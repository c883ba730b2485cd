//! A source repository's files read as text, never run: a file small enough to read, the
//! arguments of a call, a `NAME = value` assignment, the modules a file imports. Shared by
//! `init` (hyper-parameters, the framework), `seeds::usage` (seeding calls and options) and
//! `xstack diff` (each side's framework), which read the same Python the same way.

use std::path::Path;
use std::sync::LazyLock;

use regex::{Captures, Regex};

/// `import X[, Y]` / `from X import` at the start of a line (indented ones too: imports
/// inside functions and `try` blocks count).
static IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    crate::patterns::constant(
        r"(?m)^\s*(?:from\s+([A-Za-z_]\w*)|import\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_][\w.]*)*))",
    )
});

/// The top-level modules `code` imports, in order (`import jax.numpy as jnp` → `jax`).
pub fn imported_modules(code: &str) -> Vec<String> {
    let mut modules = Vec::new();
    for caps in IMPORT.captures_iter(code) {
        if let Some(from) = caps.get(1) {
            modules.push(from.as_str().to_string());
        }
        if let Some(list) = caps.get(2) {
            modules.extend(list.as_str().split(',').filter_map(|name| {
                let top = name.trim().split('.').next()?;
                (!top.is_empty()).then(|| top.to_string())
            }));
        }
    }
    modules
}

/// Largest file read.
pub const MAX_READ: u64 = 256 * 1024;

/// The text of a regular file of at most [`MAX_READ`] bytes; None for anything else or a
/// file that cannot be read as UTF-8.
pub fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    (meta.is_file() && meta.len() <= MAX_READ)
        .then(|| std::fs::read_to_string(path).ok())
        .flatten()
}

/// How far a call's arguments may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallSpan {
    /// To the parenthesis that closes the call, over as many lines as it takes.
    Lines,
    /// To that parenthesis or the end of the line, whichever comes first.
    Line,
}

/// The text of an open call's arguments: up to the parenthesis that closes it (strings
/// respected), or within `span`; all of `text` when nothing closes it.
pub fn call_arguments(text: &str, span: CallSpan) -> &str {
    let mut depth = 1;
    let mut quote: Option<char> = None;
    for (i, c) in text.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return &text[..i];
                    }
                }
                '\n' if span == CallSpan::Line => return &text[..i],
                _ => {}
            },
        }
    }
    text
}

/// The name (the first group) and the value (the second) of an assignment a pattern matched.
pub fn assignment(c: &Captures<'_>) -> Option<(String, String)> {
    Some((
        c.get(1)?.as_str().to_string(),
        c.get(2)?.as_str().to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_ends_at_its_parenthesis_or_where_its_span_does() {
        let text = "\"--lr\", default=(1, 2),\n  type=float) + rest";
        assert_eq!(
            call_arguments(text, CallSpan::Lines),
            "\"--lr\", default=(1, 2),\n  type=float"
        );
        assert_eq!(
            call_arguments(text, CallSpan::Line),
            "\"--lr\", default=(1, 2),"
        );
        assert_eq!(call_arguments("')' , 3) x", CallSpan::Line), "')' , 3");
        assert_eq!(call_arguments("open", CallSpan::Lines), "open");
    }

    #[test]
    fn only_small_regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("train.py");
        std::fs::write(&small, "LR = 3e-4\n").unwrap();
        let large = dir.path().join("data.py");
        std::fs::write(&large, "x".repeat(MAX_READ as usize + 1)).unwrap();
        assert_eq!(read_small(&small).as_deref(), Some("LR = 3e-4\n"));
        assert_eq!(read_small(&large), None);
        assert_eq!(read_small(dir.path()), None);
        assert_eq!(read_small(&dir.path().join("missing.py")), None);
    }
}
