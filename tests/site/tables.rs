//! Tables read back from report.md (Markdown) and the site's index (HTML), to compare the
//! two: each table's title (the heading above it), its column headers and its rows' cell
//! texts, without markup. Shared by tests/site.rs and the unit tests of `src/site/index.rs`.

/// A table as its title (the heading above it), its column headers and its rows' cell texts.
pub type Parsed = (String, Vec<String>, Vec<Vec<String>>);

/// A Markdown cell's text: code without its backticks, a link as its text.
fn markdown_text(cell: &str) -> String {
    let cell = cell.trim().replace("\\|", "|");
    let cell = match (cell.strip_prefix('['), cell.find("](")) {
        (Some(_), Some(end)) if cell.ends_with(')') => cell[1..end].to_string(),
        _ => cell,
    };
    cell.trim_matches('`').to_string()
}

/// report.md's tables, each under the last `## ` heading before it.
pub fn markdown_tables(md: &str) -> Vec<Parsed> {
    let mut tables: Vec<Parsed> = Vec::new();
    let mut title = String::new();
    let mut in_table = false;
    for line in md.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            title = heading.to_string();
        }
        let Some(inner) = line.strip_prefix("| ").and_then(|l| l.strip_suffix(" |")) else {
            in_table = line.starts_with("|---");
            continue;
        };
        let cells: Vec<String> = inner.split(" | ").map(markdown_text).collect();
        if in_table {
            tables.last_mut().unwrap().2.push(cells);
        } else {
            tables.push((title.clone(), cells, Vec::new()));
        }
        in_table = true;
    }
    tables
}

/// The text of an HTML fragment: its tags dropped, its entities read.
fn html_text(fragment: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in fragment.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The contents of each `<tag ...>...</tag>` in `html`, in order.
fn elements<'a>(html: &'a str, tag: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(&open) {
        let after = &rest[at + open.len()..];
        if !after.starts_with(['>', ' ']) {
            rest = after;
            continue;
        }
        let body = &after[after.find('>').unwrap() + 1..];
        let end = body.find(&close).unwrap();
        found.push(&body[..end]);
        rest = &body[end..];
    }
    found
}

/// The index's tables, each under the `<h2>` of its section.
pub fn html_tables(html: &str) -> Vec<Parsed> {
    elements(html, "section")
        .into_iter()
        .flat_map(|section| {
            let title = html_text(elements(section, "h2")[0]);
            elements(section, "table").into_iter().map(move |table| {
                let header = elements(table, "th").into_iter().map(html_text).collect();
                let body = elements(table, "tbody").concat();
                let rows = elements(&body, "tr")
                    .into_iter()
                    .map(|tr| elements(tr, "td").into_iter().map(html_text).collect())
                    .collect();
                (title.clone(), header, rows)
            })
        })
        .collect()
}

/// report.md's tables as the site shows them: the run folder, a path of the machine, left
/// out of "Trials" (each of its cells must name `folder`).
pub fn without_run_folder(mut tables: Vec<Parsed>, folder: &str) -> Vec<Parsed> {
    if let Some(trials) = tables.iter_mut().find(|t| t.0 == "Trials") {
        let at = trials.1.iter().position(|h| h == "run folder").unwrap();
        trials.1.remove(at);
        for row in &mut trials.2 {
            assert!(row.remove(at).contains(folder), "{row:?}");
        }
    }
    tables
}

/// The index's tables of the report: all but the trial finder and the sources.
pub fn report_tables(html: &str) -> Vec<Parsed> {
    html_tables(html)
        .into_iter()
        .filter(|t| t.0 != "Find a trial" && t.0 != "Where the tasks come from")
        .collect()
}
