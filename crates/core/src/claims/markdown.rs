//! Markdown read for claims, line by line: headings delimit sections; fenced code blocks are
//! either source code (skipped), command lines (remembered: the claims after them in the same
//! section carry them) or pasted logs (each line read as plain text); tables are read cell by
//! cell with their row and column headers; paragraphs and list items are read as prose.

use super::scan::{self, Found, NumberKind, ScanOptions};
use super::{Claim, Location, TableCell};

/// Code block languages whose lines are source code, never logs or commands.
const CODE_LANGUAGES: &[&str] = &[
    "python",
    "py",
    "python3",
    "ipython",
    "c",
    "cpp",
    "c++",
    "cc",
    "h",
    "rust",
    "rs",
    "js",
    "javascript",
    "ts",
    "typescript",
    "java",
    "go",
    "json",
    "jsonc",
    "yaml",
    "yml",
    "toml",
    "bibtex",
    "bib",
    "tex",
    "latex",
    "html",
    "xml",
    "css",
    "dockerfile",
    "make",
    "makefile",
    "cmake",
    "ini",
    "cfg",
    "diff",
    "patch",
    "sql",
    "julia",
    "cuda",
];

/// Code block languages whose lines are all commands (comments aside).
const SHELL_LANGUAGES: &[&str] = &["sh", "bash", "shell", "zsh", "fish", "powershell", "cmd"];

/// Code block languages of terminal sessions: prompted lines are commands, others output.
const SESSION_LANGUAGES: &[&str] = &["console", "shell-session", "sh-session", "terminal"];

/// Programs a command line starts with.
const PROGRAMS: &[&str] = &[
    "python",
    "python3",
    "python2",
    "pip",
    "pip3",
    "torchrun",
    "accelerate",
    "deepspeed",
    "bash",
    "sh",
    "zsh",
    "cd",
    "git",
    "conda",
    "uv",
    "make",
    "cmake",
    "docker",
    "wget",
    "curl",
    "sbatch",
    "srun",
    "mpirun",
    "jupyter",
    "export",
    "source",
    "sudo",
    "apt",
    "apt-get",
    "brew",
    "npm",
    "cargo",
    "julia",
    "rscript",
    "java",
    "node",
    "mkdir",
    "tar",
    "unzip",
    "nvidia-smi",
];

fn fence_open(trimmed: &str) -> Option<(String, String)> {
    let ch = trimmed.chars().next()?;
    if ch != '`' && ch != '~' {
        return None;
    }
    let fence: String = trimmed.chars().take_while(|&c| c == ch).collect();
    if fence.chars().count() < 3 {
        return None;
    }
    let info = trimmed[fence.len()..].trim();
    if ch == '`' && info.contains('`') {
        return None;
    }
    let lang = info
        .split(|c: char| c.is_whitespace() || c == '{' || c == ',')
        .next()
        .unwrap_or("")
        .to_lowercase();
    Some((fence, lang))
}

fn is_heading(trimmed: &str) -> bool {
    let hashes = trimmed.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&hashes)
        && trimmed[hashes..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
}

fn is_thematic_break(trimmed: &str) -> bool {
    let t: String = trimmed.chars().filter(|c| !c.is_whitespace()).collect();
    t.len() >= 3
        && (t.chars().all(|c| c == '-')
            || t.chars().all(|c| c == '*')
            || t.chars().all(|c| c == '='))
}

fn is_list_item(trimmed: &str) -> bool {
    if let Some(rest) = trimmed.strip_prefix(['-', '*', '+']) {
        return rest.starts_with(char::is_whitespace);
    }
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && {
        let rest = &trimmed[digits..];
        (rest.starts_with(". ") || rest.starts_with(") ")) && digits <= 3
    }
}

fn is_delimiter_row(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty()
        && t.contains('-')
        && t.chars().all(|c| matches!(c, '|' | ':' | '-' | ' ' | '\t'))
        && (t.contains('|') || t.chars().filter(|&c| c == '-').count() >= 3)
}

fn is_table_start(lines: &[&str], i: usize) -> bool {
    lines[i].contains('|') && lines.get(i + 1).is_some_and(|l| is_delimiter_row(l))
}

/// The cells of a table row, trimmed, without the outer pipes.
fn split_row(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut escaped = false;
    for c in t.chars() {
        if c == '|' && !escaped {
            cells.push(cell.trim().to_string());
            cell.clear();
        } else {
            cell.push(c);
        }
        escaped = c == '\\';
    }
    cells.push(cell.trim().to_string());
    cells
}

fn ends_paragraph(lines: &[&str], i: usize) -> bool {
    let t = lines[i].trim_start();
    t.is_empty()
        || fence_open(t).is_some()
        || is_heading(t)
        || is_thematic_break(t)
        || is_list_item(t)
        || is_table_start(lines, i)
}

/// Whether a line in a code block is a command (and the command without its prompt).
fn command_of(line: &str) -> Option<String> {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix("$ ").or_else(|| t.strip_prefix("% ")) {
        return Some(rest.trim().to_string());
    }
    let mut words = t.split_whitespace().skip_while(|w| {
        w.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
    });
    let first = words.next()?.to_lowercase();
    let program = PROGRAMS.contains(&first.as_str())
        || first.starts_with("python3.")
        || first.starts_with("./")
        || first.ends_with(".py")
        || first.ends_with(".sh");
    let has_flag = t
        .split_whitespace()
        .any(|w| w.starts_with("--") && w[2..].starts_with(|c: char| c.is_ascii_alphabetic()));
    (program || has_flag).then(|| t.to_string())
}

fn words(text: &str) -> Vec<String> {
    let masked = scan::mask(text, true);
    masked
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .map(|w| w.trim_matches('-').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

struct Reader<'a> {
    lines: Vec<&'a str>,
    at: &'a dyn Fn(usize) -> Location,
    claims: Vec<Claim>,
    /// The commands of the last code block with commands in this section.
    commands: Vec<String>,
    /// The last paragraph's words in this section (a table's caption).
    caption: Vec<String>,
}

/// The claims in a Markdown text; `at` locates a 0-based line.
pub fn claims(text: &str, at: &dyn Fn(usize) -> Location) -> Vec<Claim> {
    let mut reader = Reader {
        lines: text.lines().collect(),
        at,
        claims: Vec::new(),
        commands: Vec::new(),
        caption: Vec::new(),
    };
    reader.read();
    reader.claims
}

impl Reader<'_> {
    fn read(&mut self) {
        let mut i = 0;
        while i < self.lines.len() {
            let trimmed = self.lines[i].trim_start();
            if let Some((fence, lang)) = fence_open(trimmed) {
                let close = (i + 1..self.lines.len())
                    .find(|&j| {
                        let t = self.lines[j].trim();
                        t.starts_with(&fence)
                            && t.chars().all(|c| c == fence.chars().next().unwrap_or('`'))
                    })
                    .unwrap_or(self.lines.len());
                self.code_block(i + 1, close, &lang);
                i = close + 1;
                continue;
            }
            if is_heading(trimmed) {
                self.commands.clear();
                self.caption.clear();
                i += 1;
                continue;
            }
            if trimmed.is_empty() || is_thematic_break(trimmed) {
                i += 1;
                continue;
            }
            if is_table_start(&self.lines, i) {
                let mut end = i + 2;
                while end < self.lines.len()
                    && self.lines[end].contains('|')
                    && !self.lines[end].trim().is_empty()
                {
                    end += 1;
                }
                self.table(i, end);
                i = end;
                continue;
            }
            let start = i;
            i += 1;
            while i < self.lines.len() && !ends_paragraph(&self.lines, i) {
                i += 1;
            }
            self.paragraph(start, i);
        }
    }

    fn claim(&self, found: &Found, line: usize, context: String) -> Claim {
        Claim {
            value: found.value,
            number: found.number.clone(),
            unit: found.unit,
            approximate: found.approximate,
            quote: self.lines[line].trim().to_string(),
            context,
            label: found.label.join(" "),
            table: None,
            commands: self.commands.clone(),
            location: (self.at)(line),
            output: false,
        }
    }

    fn paragraph(&mut self, start: usize, end: usize) {
        let text = self.lines[start..end].join("\n");
        let found = scan::scan(
            &text,
            ScanOptions {
                markdown: true,
                ..Default::default()
            },
        );
        for f in found.iter().filter(|f| f.kind == NumberKind::Result) {
            let line = start + text[..f.start].matches('\n').count();
            let claim = self.claim(f, line, f.sentence.join(" "));
            self.claims.push(claim);
        }
        self.caption = words(&text);
    }

    fn table(&mut self, header_line: usize, end: usize) {
        let header = split_row(self.lines[header_line]);
        for row_line in header_line + 2..end {
            let cells = split_row(self.lines[row_line]);
            let Some(row_header) = cells.first() else {
                continue;
            };
            let mut surroundings = words(row_header);
            surroundings.extend(self.caption.iter().cloned());
            for (c, cell) in cells.iter().enumerate().skip(1) {
                let column_header = header.get(c).cloned().unwrap_or_default();
                let header_words = words(&column_header);
                let found = scan::scan(
                    cell,
                    ScanOptions {
                        markdown: true,
                        header: &header_words,
                        surroundings: &surroundings,
                    },
                );
                for f in found.iter().filter(|f| f.kind == NumberKind::Result) {
                    let mut context = words(row_header);
                    for w in header_words.iter().chain(&f.label) {
                        if !context.contains(w) {
                            context.push(w.clone());
                        }
                    }
                    let mut claim = self.claim(f, row_line, context.join(" "));
                    claim.table = Some(TableCell {
                        row_header: row_header.clone(),
                        column_header: column_header.clone(),
                        table_line: header_line + 1,
                    });
                    self.claims.push(claim);
                }
            }
        }
    }

    fn code_block(&mut self, start: usize, end: usize, lang: &str) {
        if CODE_LANGUAGES.contains(&lang) {
            return;
        }
        let all_commands = SHELL_LANGUAGES.contains(&lang);
        let session = SESSION_LANGUAGES.contains(&lang);
        let mut block_commands: Vec<String> = Vec::new();
        let mut i = start;
        while i < end {
            let line = self.lines[i];
            let t = line.trim();
            i += 1;
            if t.is_empty() || t.starts_with(">>>") || t.starts_with("...") {
                continue;
            }
            let command = if all_commands {
                (!t.starts_with('#')).then(|| t.trim_start_matches("$ ").to_string())
            } else if session {
                t.strip_prefix("$ ")
                    .or_else(|| t.strip_prefix("> "))
                    .map(|c| c.trim().to_string())
            } else {
                command_of(t)
            };
            if let Some(mut command) = command {
                while command.ends_with('\\') && i < end {
                    command.pop();
                    command.push(' ');
                    command.push_str(self.lines[i].trim());
                    i += 1;
                }
                block_commands.push(command.split_whitespace().collect::<Vec<_>>().join(" "));
                continue;
            }
            if t.starts_with('#') || t.starts_with("//") || all_commands {
                continue;
            }
            let found = scan::scan(t, ScanOptions::default());
            for f in found.iter().filter(|f| f.kind == NumberKind::Result) {
                let mut claim = self.claim(f, i - 1, f.sentence.join(" "));
                if !block_commands.is_empty() {
                    claim.commands = block_commands.clone();
                }
                self.claims.push(claim);
            }
        }
        if !block_commands.is_empty() {
            self.commands = block_commands;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Claim> {
        claims(text, &|line| Location::Line {
            file: "README.md".into(),
            line: line + 1,
        })
    }

    #[test]
    fn rows_cells_and_headers() {
        assert_eq!(split_row("| a | b\\|c | d |"), vec!["a", "b\\|c", "d"]);
        assert_eq!(
            split_row("Cora    | Acc: 81.0 %     | 0.13s"),
            vec!["Cora", "Acc: 81.0 %", "0.13s"]
        );
        assert!(is_delimiter_row(":------:|:------:|:-----------:|"));
        assert!(!is_delimiter_row("a | b"));
    }

    #[test]
    fn commands_in_code_blocks() {
        assert_eq!(
            command_of("$ python citation.py --dataset cora --tuned").as_deref(),
            Some("python citation.py --dataset cora --tuned")
        );
        assert!(command_of("CUDA_VISIBLE_DEVICES=0 python train.py").is_some());
        assert!(command_of("step 2000: train loss 1.7648, val loss 1.8857").is_none());
        assert!(command_of("ANGELO:").is_none());
    }

    #[test]
    fn a_log_in_a_code_block_is_read_and_commands_are_not() {
        let text = "## run\n\n```\n$ python train.py --lr=3e-4 --batch_size=32\nstep 2000: train loss 1.7648, val loss 1.8857\n```\n\nwe get val loss 1.88.\n\n## other\n\nloss 2.5\n";
        let claims = read(text);
        let values: Vec<f64> = claims.iter().map(|c| c.value).collect();
        assert_eq!(values, vec![1.7648, 1.8857, 1.88, 2.5]);
        assert_eq!(claims[1].where_text(), "README.md:5");
        assert_eq!(claims[1].label, "val loss");
        assert_eq!(
            claims[2].commands,
            vec!["python train.py --lr=3e-4 --batch_size=32"]
        );
        assert_eq!(claims[2].where_text(), "README.md:8");
        assert!(
            claims[3].commands.is_empty(),
            "a heading starts a new section"
        );
    }

    #[test]
    fn source_code_blocks_are_skipped() {
        let text = "```python\nval_loss = 1.23  # accuracy 0.5\n```\n";
        assert!(read(text).is_empty());
    }

    #[test]
    fn a_paragraph_over_several_lines_locates_each_claim() {
        let text = "intro\n\nThe model reaches\na test accuracy of 91.2%\nin the end.\n";
        let claims = read(text);
        assert_eq!(claims.len(), 1);
        assert_eq!(claims[0].where_text(), "README.md:4");
        assert_eq!(claims[0].quote, "a test accuracy of 91.2%");
        assert_eq!(claims[0].value_text(), "91.2 %");
    }
}
