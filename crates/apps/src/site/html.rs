//! The few pieces every page of the site is made of: escaping, a page's frame, data for its
//! scripts, and the names a trial's files get.

use std::fmt::Write as _;

/// `text` escaped for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `value` as JSON that is safe inside a `<script>` element (no `</script>` can end it).
pub fn script_json(value: &serde_json::Value) -> String {
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// What a page needs besides its body.
pub struct Frame<'a> {
    /// The `<title>`.
    pub title: &'a str,
    /// The path from the page to the site's root folder (`""` or `"../../"`).
    pub root: &'a str,
    /// Style sheets under `assets/`, besides the site's own.
    pub styles: &'a [&'a str],
    /// Scripts, relative to the page, loaded at the end of the body in this order.
    pub scripts: &'a [&'a str],
}

/// A whole page: the frame around `body`.
pub fn page(frame: &Frame<'_>, body: &str) -> String {
    let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n");
    out.push_str("<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    // No icon: the browser asks for none (nothing is requested beside the site's files).
    out.push_str("<link rel=\"icon\" href=\"data:,\">\n");
    let _ = writeln!(out, "<title>{}</title>", escape(frame.title));
    let _ = writeln!(
        out,
        "<link rel=\"stylesheet\" href=\"{}assets/site.css\">",
        frame.root
    );
    for style in frame.styles {
        let _ = writeln!(
            out,
            "<link rel=\"stylesheet\" href=\"{}assets/{style}\">",
            frame.root
        );
    }
    out.push_str("</head>\n<body>\n");
    out.push_str(body);
    for script in frame.scripts {
        let _ = writeln!(out, "<script src=\"{script}\"></script>");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// A file name made of `parts`: letters, digits, `.`, `_` and `-` kept, anything else `_`.
pub fn slug(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| {
            p.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("--")
}

/// A number as the grader shows it: at most six decimals, trailing zeros dropped.
pub fn measure(value: f64) -> String {
    let text = format!("{value:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_markup_and_script_data_cannot_close_its_element() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let json = script_json(&serde_json::json!({"t": "</script><b>"}));
        assert!(!json.contains("</script>") && !json.contains('<'), "{json}");
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back["t"], "</script><b>");
    }

    #[test]
    fn slugs_keep_only_safe_characters_and_numbers_read_as_the_grader_writes_them() {
        assert_eq!(
            slug(&["digits-mlp", "script:a/b c.jsonl", "2"]),
            "digits-mlp--script_a_b_c.jsonl--2"
        );
        assert_eq!(measure(0.0112), "0.0112");
        assert_eq!(measure(2.0), "2");
        assert_eq!(measure(-0.0000001), "0");
    }
}
