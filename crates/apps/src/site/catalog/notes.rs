//! What a task folder says beyond its fields: the reasoning its `task.toml` keeps in comments
//! above each table (why each tolerance, what a run costs), and its demo trajectory (the
//! porting mistake of phase 1, what each phase writes and says).

use std::path::Path;

/// The comment block written directly above each occurrence of the table `header` (`[run]`,
/// `[[criterion]]`) in `text`, in order: the lines' text without `#`, a hard-wrapped line
/// joined to the one before it, a list item (`- `) or the line after an empty `#` on a line
/// of its own; empty where no comment is written there.
pub fn comments_above(text: &str, header: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.trim() == header)
        .map(|(at, _)| {
            let block: Vec<&str> = lines[..at]
                .iter()
                .rev()
                .take_while(|line| line.trim_start().starts_with('#'))
                .map(|line| line.trim_start().trim_start_matches('#').trim())
                .collect();
            join_wrapped(block.into_iter().rev())
        })
        .collect()
}

/// Comment lines as text: each line joined to the one before it by a space, except a list
/// item (`- `) and the line after an empty one, which start a line of their own.
fn join_wrapped<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut text = String::new();
    let mut after_empty = false;
    for line in lines {
        if line.is_empty() {
            after_empty = true;
            continue;
        }
        if !text.is_empty() {
            text.push(if after_empty || line.starts_with("- ") {
                '\n'
            } else {
                ' '
            });
        }
        text.push_str(line);
        after_empty = false;
    }
    text
}

/// One phase of a demo trajectory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DemoPhase {
    /// The phase's number.
    pub number: u64,
    /// What the phase-two prompt must contain for the script to go on (`expect`).
    pub expect: Option<String>,
    /// What the scripted agent says, in order.
    pub said: Vec<String>,
    /// The files it writes, in order.
    pub writes: Vec<String>,
    /// The commands it runs, in order.
    pub runs: Vec<String>,
}

/// A task's demo trajectory, read for a reader.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Demo {
    /// The comment the trajectory opens with: the porting mistake of phase 1.
    pub mistake: String,
    /// Its phases.
    pub phases: Vec<DemoPhase>,
}

/// Reads `demo/trajectory.jsonl`: its opening comment and, per phase, what the agent says,
/// writes and runs. A line that is not JSON is left out (xstack check judges the file).
pub fn read_demo(file: &Path) -> Option<Demo> {
    let text = std::fs::read_to_string(file).ok()?;
    let mut demo = Demo::default();
    let mut opening = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(comment) = line.strip_prefix('#') {
            if demo.phases.is_empty() {
                opening.push(comment.trim());
            }
            continue;
        }
        let Ok(step) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if let Some(number) = step.get("phase").and_then(|p| p.as_u64()) {
            demo.phases.push(DemoPhase {
                number,
                expect: step
                    .get("expect")
                    .and_then(|e| e.as_str())
                    .map(str::to_string),
                ..DemoPhase::default()
            });
            continue;
        }
        let Some(phase) = demo.phases.last_mut() else {
            continue;
        };
        let field = |key: &str| step.get(key).and_then(|v| v.as_str()).map(str::to_string);
        if let Some(said) = field("say") {
            phase.said.push(said);
        } else if let Some(path) = field("write") {
            phase.writes.push(path);
        } else if let Some(command) = field("run") {
            phase.runs.push(command);
        }
    }
    demo.mistake = opening.join(" ");
    Some(demo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tables_comment_is_the_block_right_above_it() {
        let text = "# about the run\n# second line:\n# - one\n#   wrapped\n#\n# after\n[run]\n\
                    command = \"x\"\n\n[[criterion]]\nmetric = \"a\"\n\n# why 0.02\n[[criterion]]\n\
                    metric = \"b\"\n";
        assert_eq!(
            comments_above(text, "[run]"),
            ["about the run second line:\n- one wrapped\nafter"]
        );
        assert_eq!(comments_above(text, "[[criterion]]"), ["", "why 0.02"]);
        assert!(comments_above(text, "[parity]").is_empty());
    }

    #[test]
    fn a_demo_reads_as_its_mistake_and_its_phases() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("trajectory.jsonl");
        std::fs::write(
            &file,
            "# The loss is summed,\n# not averaged.\n{\"phase\": 1}\n{\"say\": \"Porting.\"}\n\
             {\"run\": \"grep -n torch train.py\"}\n{\"write\": \"train.py\", \"from\": \"phase1/train.py\"}\n\
             {\"phase\": 2, \"expect\": \"mean\"}\n{\"write\": \"train.py\", \"from\": \"../solution/train.py\"}\n",
        )
        .unwrap();
        let demo = read_demo(&file).unwrap();
        assert_eq!(demo.mistake, "The loss is summed, not averaged.");
        assert_eq!(demo.phases.len(), 2);
        assert_eq!(demo.phases[0].said, ["Porting."]);
        assert_eq!(demo.phases[0].runs, ["grep -n torch train.py"]);
        assert_eq!(demo.phases[1].expect.as_deref(), Some("mean"));
        assert_eq!(demo.phases[1].writes, ["train.py"]);
    }
}
