//! Errors in the files a user writes (`task.toml`, the config file, trajectory lines), built in
//! one place: the file, the line, the key path (`criterion[1].direction`) taken from the parse
//! itself, and what is wrong or expected.
//!
//! Typed errors (a wrong type, an unknown enum value, an unknown or missing key) come from
//! deserialising through `serde_path_to_error`, which records the path of the value being
//! read when the error happens; rule errors found after parsing name their path directly.
//! Lines come from the parser's error span, else from the key's place in the document.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// A table key.
    Key(String),
    /// An element of an array or of an array of tables (0-based).
    Index(usize),
}

/// A key path into a document, written `criterion[1].direction`; empty for the whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyPath(Vec<Seg>);

impl KeyPath {
    /// The path of a top-level key.
    pub fn of(key: &str) -> KeyPath {
        KeyPath(vec![Seg::Key(key.to_string())])
    }

    /// This path followed by `key`.
    pub fn key(mut self, key: &str) -> KeyPath {
        self.0.push(Seg::Key(key.to_string()));
        self
    }

    /// This path followed by element `index`.
    pub fn index(mut self, index: usize) -> KeyPath {
        self.0.push(Seg::Index(index));
        self
    }

    /// The steps of the path.
    pub fn segments(&self) -> &[Seg] {
        &self.0
    }

    /// Whether the path names nothing (an error about the whole file).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn from_serde(path: &serde_path_to_error::Path) -> KeyPath {
        let mut out = KeyPath::default();
        for seg in path {
            match seg {
                serde_path_to_error::Segment::Seq { index } => out.0.push(Seg::Index(*index)),
                serde_path_to_error::Segment::Map { key } => out.0.push(Seg::Key(key.clone())),
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => {}
            }
        }
        out
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Key(key) if i == 0 => write!(f, "{key}")?,
                Seg::Key(key) => write!(f, ".{key}")?,
                Seg::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// What a kind of file calls the names it holds, as the message says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    /// `field`: task files and trajectory lines.
    Field,
    /// `key`: the config file.
    Key,
}

/// Why a file the user writes (a task file, the config file, a trajectory) could not be used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file breaks a rule: its file, line, key path and what is wrong.
    #[error(transparent)]
    Invalid(#[from] Located),
}

/// The text of a file the user writes.
pub fn read(file: &Path) -> Result<String, FileError> {
    std::fs::read_to_string(file).map_err(|source| FileError::Read {
        file: file.to_path_buf(),
        source,
    })
}

/// An error in a user's file: `FILE:LINE: field `KEY PATH`: what is wrong`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Located {
    /// The file.
    pub file: PathBuf,
    /// The 1-based line, when known.
    pub line: Option<usize>,
    /// The key the error is about; empty when it is about no one key (a syntax error).
    pub key: KeyPath,
    /// What is wrong, and what is expected.
    pub message: String,
    /// How the message names the key.
    pub term: Term,
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.key.is_empty() {
            let word = match self.term {
                Term::Field => "field",
                Term::Key => "key",
            };
            write!(f, ": {word} `{}`", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl Located {
    /// An error about `key` of the TOML text of `file`, on the line where that key (or the
    /// deepest table of the path that exists) is written.
    pub fn in_toml(file: &Path, text: &str, term: Term, key: KeyPath, message: String) -> Located {
        Located {
            file: file.to_path_buf(),
            line: line_of(text, &key),
            key,
            message,
            term,
        }
    }
}

/// Deserialises the TOML text of `file`. A failure names the key path the parser was
/// reading, the line, and what was expected.
pub fn from_toml<T: DeserializeOwned>(file: &Path, text: &str, term: Term) -> Result<T, Located> {
    let toml_error = |key: KeyPath, e: toml::de::Error| {
        let line = e
            .span()
            .map(|s| line_at(text, s.start))
            .or_else(|| line_of(text, &key));
        Located {
            file: file.to_path_buf(),
            line,
            key,
            message: plain_message(e.message(), "table"),
            term,
        }
    };
    let de = toml::Deserializer::parse(text).map_err(|e| toml_error(KeyPath::default(), e))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let key = KeyPath::from_serde(e.path());
        let inner = e.into_inner();
        let key = match missing_field(inner.message()) {
            Some(name) => key.key(name),
            None => key,
        };
        toml_error(key, inner)
    })
}

/// Deserialises one JSON line (line `line` of `file`). A failure names the key being read;
/// a line that is not JSON names no key.
pub fn from_json_line<T: DeserializeOwned>(
    file: &Path,
    line: usize,
    text: &str,
    term: Term,
) -> Result<T, Located> {
    let located = |key: KeyPath, e: serde_json::Error| {
        let text = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = plain_message(text.strip_suffix(&suffix).unwrap_or(&text), "object");
        let key = match missing_field(&message) {
            Some(name) => key.key(name),
            None => key,
        };
        let message = if e.is_syntax() || e.is_eof() {
            format!("not valid JSON: {message} (column {})", e.column())
        } else {
            message
        };
        Located {
            file: file.to_path_buf(),
            line: Some(line),
            key,
            message,
            term,
        }
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| located(KeyPath::from_serde(e.path()), e.into_inner()))?;
    de.end().map_err(|e| located(KeyPath::default(), e))?;
    Ok(value)
}

/// Deserialises a value written as one of the names of `choices` (an enum of plain names):
/// an unknown name and a value of another type both say which names are expected.
pub fn one_of<'de, D, T>(d: D, choices: &'static [(&'static str, T)]) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Copy + 'static,
{
    struct Names<T: 'static>(&'static [(&'static str, T)]);

    impl<T: Copy + 'static> Names<T> {
        fn list(&self) -> String {
            let names: Vec<String> = self.0.iter().map(|(n, _)| format!("`{n}`")).collect();
            match names.as_slice() {
                [one] => one.clone(),
                [a, b] => format!("{a} or {b}"),
                _ => format!("one of {}", names.join(", ")),
            }
        }
    }

    impl<T: Copy + 'static> Visitor<'_> for Names<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(&self.list())
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            self.0
                .iter()
                .find(|(name, _)| *name == v)
                .map(|(_, value)| *value)
                .ok_or_else(|| {
                    E::custom(format!("unknown variant `{v}`, expected {}", self.list()))
                })
        }
    }

    d.deserialize_str(Names(choices))
}

/// The name in serde's "missing field `NAME`" message: a missing key is reported with its
/// table's path, and the key path should end at the key itself.
fn missing_field(message: &str) -> Option<&str> {
    message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
        .filter(|name| !name.is_empty())
}

/// The parser's message on one line, with serde's Rust type names said as a user reads them
/// (`map` is `table` in TOML and `object` in JSON).
fn plain_message(message: &str, map: &str) -> String {
    let mut out = message.trim().replace('\n', "; ");
    let map_type = format!("invalid type: {map}");
    let expected_map = format!("expected a {map}");
    for (rust, plain) in [
        ("invalid type: sequence", "invalid type: array"),
        ("invalid type: map", map_type.as_str()),
        ("expected a map", expected_map.as_str()),
        ("expected u64", "expected a whole number >= 0"),
        ("expected u32", "expected a whole number >= 0"),
        ("expected u16", "expected a whole number >= 0"),
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected an array"),
        ("expected a boolean", "expected true or false"),
    ] {
        if let Some(at) = out.find(rust)
            && !out[at + rust.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            out.replace_range(at..at + rust.len(), plain);
        }
    }
    out
}

/// A node of the parsed document while walking a key path.
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

/// The 1-based line of `key` in the TOML text: the line of the deepest part of the path that
/// exists (the key itself, or the table that lacks it), line 1 when no part exists (a
/// missing top-level key is the whole file's); None when the text is not TOML.
pub fn line_of(text: &str, key: &KeyPath) -> Option<usize> {
    let doc = toml_edit::Document::parse(text).ok()?;
    let mut span: Option<Range<usize>> = None;
    let mut node = Node::Table(doc.as_table());
    for seg in key.segments() {
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
    Some(span.map_or(1, |s| line_at(text, s.start)))
}

/// The 1-based line of byte `offset` of `text`.
fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        name: String,
        #[serde(default)]
        item: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Item {
        size: u64,
        #[serde(default)]
        tags: Vec<String>,
        kind: Option<Kind>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Big,
        Small,
    }

    fn toml_error(text: &str) -> String {
        from_toml::<Doc>(Path::new("f.toml"), text, Term::Field)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_valid_document_parses() {
        let doc: Doc = from_toml(
            Path::new("f.toml"),
            "name = \"n\"\n[[item]]\nsize = 3\ntags = [\"a\"]\nkind = \"small\"\n",
            Term::Field,
        )
        .unwrap();
        assert_eq!(doc.name, "n");
        assert_eq!(doc.item[0].size, 3);
        assert_eq!(doc.item[0].tags, ["a"]);
        assert!(matches!(doc.item[0].kind, Some(Kind::Small)));
    }

    #[test]
    fn typed_errors_name_the_key_path_line_and_what_is_expected() {
        let base = "name = \"n\"\n\n[[item]]\nsize = 1\n\n[[item]]\nsize = 2\n";
        assert_eq!(
            toml_error(&format!("{base}kind = \"huge\"\n")),
            "f.toml:8: field `item[1].kind`: unknown variant `huge`, expected `big` or `small`"
        );
        assert_eq!(
            toml_error(&base.replace("size = 2", "size = \"2\"")),
            "f.toml:7: field `item[1].size`: invalid type: string \"2\", expected a whole number >= 0"
        );
        assert_eq!(
            toml_error(&format!("{base}tags = [\n  \"a\",\n  3,\n]\n")),
            "f.toml:10: field `item[1].tags[1]`: invalid type: integer `3`, expected a string"
        );
        assert_eq!(
            toml_error(&format!("{base}colour = 1\n")),
            "f.toml:8: field `item[1].colour`: unknown field `colour`, expected one of `size`, `tags`, `kind`"
        );
    }

    #[test]
    fn a_missing_key_is_named_with_its_table() {
        let err = toml_error("name = \"n\"\n\n[[item]]\ntags = []\n");
        assert!(
            err.starts_with("f.toml:3: field `item[0].size`: missing field `size`"),
            "{err}"
        );
        let err = toml_error("[[item]]\nsize = 1\n");
        assert!(err.contains("field `name`: missing field `name`"), "{err}");
    }

    #[test]
    fn a_syntax_error_names_the_line_only() {
        let err = toml_error("name = \"n\"\nsize = = 3\n");
        assert!(err.starts_with("f.toml:2: "), "{err}");
        assert!(!err.contains("field `"), "{err}");
    }

    #[test]
    fn json_lines_name_the_key_or_say_the_line_is_not_json() {
        let err =
            from_json_line::<Item>(Path::new("t.jsonl"), 4, r#"{"size": "big"}"#, Term::Field)
                .unwrap_err()
                .to_string();
        assert_eq!(
            err,
            "t.jsonl:4: field `size`: invalid type: string \"big\", expected a whole number >= 0"
        );
        let err = from_json_line::<Item>(Path::new("t.jsonl"), 2, r#"{"size": 1"#, Term::Field)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("t.jsonl:2: not valid JSON: "), "{err}");
        let err = from_json_line::<Item>(Path::new("t.jsonl"), 2, r#"{"size": 1} x"#, Term::Field)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("t.jsonl:2: not valid JSON: trailing"),
            "{err}"
        );
    }

    #[test]
    fn rule_errors_find_the_line_of_their_key() {
        let text =
            "name = \"n\"\n\n[[item]]\nsize = 1\n\n[[item]]\nsize = 2\ntags = [\"a\",\n  \"b\"]\n";
        let at = |key: KeyPath| line_of(text, &key);
        assert_eq!(at(KeyPath::of("name")), Some(1));
        assert_eq!(at(KeyPath::of("item").index(1).key("size")), Some(7));
        assert_eq!(
            at(KeyPath::of("item").index(1).key("tags").index(1)),
            Some(9)
        );
        assert_eq!(at(KeyPath::of("item").index(0).key("kind")), Some(3));
        assert_eq!(at(KeyPath::of("other")), Some(1));
        assert_eq!(
            KeyPath::of("item")
                .index(1)
                .key("tags")
                .index(0)
                .to_string(),
            "item[1].tags[0]"
        );
    }
}
