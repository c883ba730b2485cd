//! Notebooks read for claims: markdown cells as Markdown, and the committed outputs of code
//! cells (stream text, `text/plain` of execute results) line by line as plain text, each
//! output claim carrying the words of its cell's code as context (`split_loss('val')` says
//! the `val 1.99` it prints is a loss).

use serde_json::Value;

use super::scan::{self, NumberKind, ScanOptions};
use super::{Claim, Location, markdown};

/// At most this many distinct words of a cell's code go into an output claim's context.
const SOURCE_WORDS: usize = 200;

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

fn source_words(source: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for w in source.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if w.is_empty() || w.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let w = w.to_lowercase();
        if !words.contains(&w) {
            words.push(w);
            if words.len() == SOURCE_WORDS {
                break;
            }
        }
    }
    words
}

/// The claims in a notebook's JSON, located in `notebook`.
pub fn claims(json: &str, notebook: &str) -> Result<Vec<Claim>, serde_json::Error> {
    let doc: Value = serde_json::from_str(json)?;
    let mut claims = Vec::new();
    let cells = doc
        .get("cells")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (index, cell) in cells.iter().enumerate() {
        let at = |_: usize| Location::Cell {
            notebook: notebook.to_string(),
            cell: index,
        };
        let source = cell.get("source").map(text_of).unwrap_or_default();
        match cell.get("cell_type").and_then(Value::as_str) {
            Some("markdown") => claims.extend(markdown::claims(&source, &at)),
            Some("code") => {
                let code_words = source_words(&source);
                let outputs = cell
                    .get("outputs")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for output in &outputs {
                    let text = match output.get("output_type").and_then(Value::as_str) {
                        Some("stream") => output.get("text").map(text_of).unwrap_or_default(),
                        Some("execute_result") => output
                            .get("data")
                            .and_then(|d| d.get("text/plain"))
                            .map(text_of)
                            .unwrap_or_default(),
                        _ => continue,
                    };
                    for line in text.split(['\n', '\r']) {
                        let t = line.trim();
                        if t.is_empty() {
                            continue;
                        }
                        for f in scan::scan(t, ScanOptions::default())
                            .into_iter()
                            .filter(|f| f.kind == NumberKind::Result)
                        {
                            let mut context = f.sentence.clone();
                            context.extend(code_words.iter().cloned());
                            claims.push(Claim {
                                value: f.value,
                                number: f.number.clone(),
                                unit: f.unit,
                                approximate: f.approximate,
                                quote: t.to_string(),
                                context: context.join(" "),
                                label: f.label.join(" "),
                                table: None,
                                commands: Vec::new(),
                                location: at(0),
                                output: true,
                            });
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_and_outputs_by_cell() {
        let json = r##"{"cells": [
            {"cell_type": "markdown", "source": ["# results\n", "we get val loss 2.01\n"]},
            {"cell_type": "code", "source": "print('val', loss)\nlr = 3e-4",
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["val 1.99\n", "76579\n"]},
                         {"output_type": "execute_result", "data": {"text/plain": "accuracy: 0.91"}},
                         {"output_type": "display_data", "data": {"text/plain": "loss 5.0"}}]}
        ]}"##;
        let claims = claims(json, "nb.ipynb").unwrap();
        let found: Vec<(String, f64)> = claims.iter().map(|c| (c.where_text(), c.value)).collect();
        assert_eq!(
            found,
            vec![
                ("nb.ipynb#cell=0".to_string(), 2.01),
                ("nb.ipynb#cell=1".to_string(), 1.99),
                ("nb.ipynb#cell=1".to_string(), 0.91),
            ]
        );
        assert!(claims[1].context.contains("loss"));
    }

    #[test]
    fn a_key_value_line_names_its_metric() {
        // equinox's train_rnn.ipynb prints `final_accuracy=1.0` as its last line.
        let json = r##"{"cells": [
            {"cell_type": "code", "source": ["main()"],
             "outputs": [{"output_type": "stream", "name": "stdout",
                          "text": ["step=199, loss=0.0037215303163975477\n", "final_accuracy=1.0\n"]}]}
        ]}"##;
        let claims = claims(json, "train_rnn.ipynb").unwrap();
        let found: Vec<(&str, f64)> = claims.iter().map(|c| (c.label.as_str(), c.value)).collect();
        assert_eq!(
            found,
            vec![("loss", 0.0037215303163975477), ("final_accuracy", 1.0)]
        );
        assert_eq!(claims[1].quote, "final_accuracy=1.0");
    }

    #[test]
    fn not_json_is_an_error() {
        assert!(claims("{not json", "x.ipynb").is_err());
    }
}
