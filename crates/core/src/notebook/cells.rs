//! A notebook's cells, read from its JSON (nbformat 4), and their text form for diffs: each
//! cell a header line (`── code ──`, `── markdown ──`) followed by its source, and a code
//! cell's outputs folded to one line (`▸ 2 outputs, 1 image`); execution counts and output
//! contents are left out, so two runs of one notebook read the same.

use serde_json::Value;

/// What a cell holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotebookCellKind {
    /// Python code.
    Code,
    /// Markdown text.
    Markdown,
    /// Raw text.
    Raw,
}

impl NotebookCellKind {
    /// The kind as nbformat names it (`code`, `markdown`, `raw`).
    pub fn name(self) -> &'static str {
        match self {
            NotebookCellKind::Code => "code",
            NotebookCellKind::Markdown => "markdown",
            NotebookCellKind::Raw => "raw",
        }
    }
}

/// One cell of a notebook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotebookCell {
    /// Its index in the notebook, from 0, markdown cells included (as nbformat, the runner's
    /// `#cell=N` and a claim's `where` number it).
    pub number: usize,
    /// What it holds.
    pub kind: NotebookCellKind,
    /// Its source text.
    pub source: String,
    /// How many outputs it has.
    pub outputs: usize,
    /// How many of them hold a picture.
    pub images: usize,
}

/// A notebook's cells in text form, with what each line is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenderedNotebook {
    /// The text, one line per `labels` entry.
    pub text: String,
    /// Per line: the cell's number on its header line, empty elsewhere.
    pub labels: Vec<String>,
    /// Per line: whether it is a code cell's source (highlighted as Python).
    pub code: Vec<bool>,
}

/// Whether `path` names a notebook.
pub fn is_notebook(path: &str) -> bool {
    path.ends_with(".ipynb")
}

fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// The Python of a file named `name`: a notebook's code cells one after the other, any other
/// file's text as it is.
pub fn python_code(name: &str, text: &str) -> String {
    if !is_notebook(name) {
        return text.to_string();
    }
    cells(text.as_bytes())
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c.kind == NotebookCellKind::Code)
        .map(|c| c.source)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The cells of the notebook `bytes`; None when they are not a notebook's JSON.
pub fn cells(bytes: &[u8]) -> Option<Vec<NotebookCell>> {
    let doc: Value = serde_json::from_slice(bytes).ok()?;
    let list = doc.get("cells")?.as_array()?;
    Some(
        list.iter()
            .enumerate()
            .map(|(i, cell)| {
                let kind = match cell.get("cell_type").and_then(Value::as_str) {
                    Some("code") => NotebookCellKind::Code,
                    Some("markdown") => NotebookCellKind::Markdown,
                    _ => NotebookCellKind::Raw,
                };
                let outputs = cell
                    .get("outputs")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice);
                let images = outputs
                    .iter()
                    .filter(|o| {
                        o.get("data")
                            .and_then(Value::as_object)
                            .is_some_and(|d| d.keys().any(|k| k.starts_with("image/")))
                    })
                    .count();
                NotebookCell {
                    number: i,
                    kind,
                    source: text_of(cell.get("source")),
                    outputs: outputs.len(),
                    images,
                }
            })
            .collect(),
    )
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The text form of `cells`.
pub fn render_cells(cells: &[NotebookCell]) -> RenderedNotebook {
    let mut out = RenderedNotebook::default();
    let line = |out: &mut RenderedNotebook, text: &str, label: String, code: bool| {
        out.text.push_str(text);
        out.text.push('\n');
        out.labels.push(label);
        out.code.push(code);
    };
    for cell in cells {
        let header = format!("── {} ──", cell.kind.name());
        line(&mut out, &header, cell.number.to_string(), false);
        let code = cell.kind == NotebookCellKind::Code;
        for source_line in cell.source.lines() {
            line(&mut out, source_line, String::new(), code);
        }
        if cell.outputs > 0 {
            let mut folded = format!("▸ {}", plural(cell.outputs, "output"));
            if cell.images > 0 {
                folded.push_str(&format!(", {}", plural(cell.images, "image")));
            }
            line(&mut out, &folded, String::new(), false);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTEBOOK: &str = r##"{"cells": [
      {"cell_type": "markdown", "metadata": {}, "source": ["# Part 5\n", "a *CNN*"]},
      {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": "import torch\nx = 1",
       "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]},
                   {"output_type": "display_data", "data": {"image/png": "AAAA", "text/plain": ["<Figure>"]}, "metadata": {}}]},
      {"cell_type": "code", "execution_count": null, "metadata": {}, "source": [], "outputs": []}
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"##;

    #[test]
    fn cells_are_numbered_from_zero_with_their_outputs_counted() {
        let cells = cells(NOTEBOOK.as_bytes()).unwrap();
        assert_eq!(cells.len(), 3);
        assert_eq!(cells[0].kind, NotebookCellKind::Markdown);
        assert_eq!(cells[0].source, "# Part 5\na *CNN*");
        assert_eq!(
            (cells[1].number, cells[1].outputs, cells[1].images),
            (1, 2, 1)
        );
        assert_eq!(cells[2].source, "");
        assert!(super::cells(b"{\"not\": \"a notebook\"}").is_none());
        assert!(super::cells(b"import torch").is_none());
    }

    #[test]
    fn the_text_form_has_a_header_per_cell_and_outputs_on_one_line() {
        let rendered = render_cells(&cells(NOTEBOOK.as_bytes()).unwrap());
        assert_eq!(
            rendered.text,
            "── markdown ──\n# Part 5\na *CNN*\n── code ──\nimport torch\nx = 1\n▸ 2 outputs, 1 image\n── code ──\n"
        );
        assert_eq!(rendered.labels, ["0", "", "", "1", "", "", "", "2"]);
        assert_eq!(
            rendered.code,
            [false, false, false, false, true, true, false, false]
        );
        assert!(is_notebook("lectures/part5.ipynb") && !is_notebook("part5.py"));
    }
}
