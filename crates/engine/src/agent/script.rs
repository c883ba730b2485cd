//! The bundled scripted agent (SPEC §5): a trajectory of JSON lines replayed as a real child
//! process in the agent PTY, for demos and tests. The whole file is parsed before anything
//! runs, so a broken trajectory is a usage error naming the file and line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::task::located::{self, KeyPath, Located, Term};

/// Characters per second at which `say` text is typed out.
pub const TYPING_RATE: f64 = 400.0;

/// Why a trajectory could not be used: it could not be read, or a line is not a valid step
/// (the file, the line, the key and what is wrong).
pub type TrajectoryError = located::FileError;

/// One step of a trajectory.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Print text, typed out.
    Say(String),
    /// Run a shell command in the workspace.
    Run(String),
    /// Write a file from a file next to the trajectory.
    WriteFrom {
        /// Target path relative to the workspace.
        path: String,
        /// Source file (resolved).
        from: PathBuf,
    },
    /// Write a file with inline text.
    WriteText {
        /// Target path relative to the workspace.
        path: String,
        /// The content.
        text: String,
    },
    /// Delete a file.
    Delete(String),
    /// Wait.
    Sleep(u64),
}

/// The steps of one phase.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PhaseScript {
    /// The phase number.
    pub phase: u8,
    /// Text the injected message must contain (case-insensitive).
    pub expect: Option<String>,
    /// The steps.
    pub steps: Vec<Step>,
}

/// A parsed trajectory.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trajectory {
    /// The phases in file order.
    pub phases: Vec<PhaseScript>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    phase: Option<u8>,
    expect: Option<String>,
    say: Option<String>,
    run: Option<String>,
    write: Option<String>,
    from: Option<String>,
    text: Option<String>,
    delete: Option<String>,
    sleep_ms: Option<u64>,
}

/// `from` or `text`, whichever a step that is not a write step carries.
fn write_only_key(raw: &RawStep) -> Option<&'static str> {
    if raw.from.is_some() {
        Some("from")
    } else if raw.text.is_some() {
        Some("text")
    } else {
        None
    }
}

fn safe_relative(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && p.is_relative()
        && p.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
}

impl Trajectory {
    /// Parses and checks a trajectory file (every `from` file must exist).
    pub fn load(file: &Path) -> Result<Trajectory, TrajectoryError> {
        let text = located::read(file)?;
        let base = file.parent().unwrap_or(Path::new("."));
        let mut trajectory = Trajectory::default();
        for (i, line) in text.lines().enumerate() {
            let line_no = i + 1;
            let located = |key: KeyPath, message: String| {
                TrajectoryError::Invalid(Located {
                    file: file.to_path_buf(),
                    line: Some(line_no),
                    key,
                    message,
                    term: Term::Field,
                })
            };
            let invalid = |message: String| located(KeyPath::default(), message);
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let raw: RawStep = located::from_json_line(file, line_no, trimmed, Term::Field)?;
            let kinds = [
                raw.phase.is_some(),
                raw.say.is_some(),
                raw.run.is_some(),
                raw.write.is_some(),
                raw.delete.is_some(),
                raw.sleep_ms.is_some(),
            ]
            .iter()
            .filter(|k| **k)
            .count();
            if kinds != 1 {
                return Err(invalid(
                    "a step needs exactly one of phase, say, run, write, delete, sleep_ms"
                        .to_string(),
                ));
            }
            if let Some(phase) = raw.phase {
                if !(1..=2).contains(&phase) {
                    return Err(located(
                        KeyPath::of("phase"),
                        format!("must be 1 or 2, not {phase}"),
                    ));
                }
                if let Some(key) = write_only_key(&raw) {
                    return Err(located(
                        KeyPath::of(key),
                        "belongs to a write step".to_string(),
                    ));
                }
                trajectory.phases.push(PhaseScript {
                    phase,
                    expect: raw.expect,
                    steps: Vec::new(),
                });
                continue;
            }
            let step = step_of(raw, base, &located)?;
            let Some(current) = trajectory.phases.last_mut() else {
                return Err(invalid(
                    "a step before the first {\"phase\": N} line".to_string(),
                ));
            };
            current.steps.push(step);
        }
        if trajectory.phases.is_empty() {
            return Err(TrajectoryError::Invalid(Located {
                file: file.to_path_buf(),
                line: Some(text.lines().count().max(1)),
                key: KeyPath::default(),
                message: "no {\"phase\": 1} line: the trajectory has no steps".to_string(),
                term: Term::Field,
            }));
        }
        Ok(trajectory)
    }
}

/// The step of a line that is not a phase line: its paths relative and inside the
/// workspace, a write's `from` a file (resolved against `base`, the trajectory's folder).
/// `located` makes an error at the line.
fn step_of(
    raw: RawStep,
    base: &Path,
    located: &dyn Fn(KeyPath, String) -> TrajectoryError,
) -> Result<Step, TrajectoryError> {
    if raw.expect.is_some() {
        return Err(located(
            KeyPath::of("expect"),
            "belongs to a phase line".to_string(),
        ));
    }
    if let Some(path) = raw.write {
        return write_step(path, raw.from, raw.text, base, located);
    }
    if let Some(key) = write_only_key(&raw) {
        return Err(located(
            KeyPath::of(key),
            "belongs to a write step".to_string(),
        ));
    }
    if let Some(text) = raw.say {
        return Ok(Step::Say(text));
    }
    if let Some(cmd) = raw.run {
        return Ok(Step::Run(cmd));
    }
    if let Some(path) = raw.delete {
        if !safe_relative(&path) {
            return Err(located(
                KeyPath::of("delete"),
                format!("path `{path}` must be relative and stay inside the workspace"),
            ));
        }
        return Ok(Step::Delete(path));
    }
    Ok(Step::Sleep(raw.sleep_ms.unwrap_or(0)))
}

/// A write step to `path`: of the file `from` (resolved against `base`) or of `text`,
/// exactly one of them.
fn write_step(
    path: String,
    from: Option<String>,
    text: Option<String>,
    base: &Path,
    located: &dyn Fn(KeyPath, String) -> TrajectoryError,
) -> Result<Step, TrajectoryError> {
    if !safe_relative(&path) {
        return Err(located(
            KeyPath::of("write"),
            format!("path `{path}` must be relative and stay inside the workspace"),
        ));
    }
    match (from, text) {
        (Some(from), None) => {
            let resolved = base.join(&from);
            if !resolved.is_file() {
                return Err(located(
                    KeyPath::of("from"),
                    format!("file {} does not exist", resolved.display()),
                ));
            }
            Ok(Step::WriteFrom {
                path,
                from: resolved,
            })
        }
        (None, Some(text)) => Ok(Step::WriteText { path, text }),
        _ => Err(located(
            KeyPath::of("write"),
            "a write step needs exactly one of `from` or `text`".to_string(),
        )),
    }
}

/// Runs the steps of `phase` in the current folder, writing to `out`. Returns the exit code.
pub fn play(
    file: &Path,
    trajectory: &Trajectory,
    phase: u8,
    message: Option<&str>,
    out: &mut dyn Write,
) -> i32 {
    let _ = writeln!(
        out,
        "[xstack scripted agent] replaying {} (phase {phase}); this is a recorded script, not a live model",
        file.display()
    );
    let Some(script) = trajectory.phases.iter().find(|p| p.phase == phase) else {
        let _ = writeln!(out, "The trajectory has no steps for phase {phase}.");
        return 0;
    };
    if let Some(expect) = &script.expect {
        let found = message.is_some_and(|m| m.to_lowercase().contains(&expect.to_lowercase()));
        if !found {
            let _ = writeln!(
                out,
                "The message I was given does not mention \"{expect}\", which this script needs; stopping."
            );
            return 1;
        }
    }
    for step in &script.steps {
        let result = match step {
            Step::Say(text) => {
                type_out(text, out);
                Ok(())
            }
            Step::Run(cmd) => {
                let _ = writeln!(out, "$ {cmd}");
                let _ = out.flush();
                std::process::Command::new("bash")
                    .arg("-c")
                    .arg(cmd)
                    .status()
                    .map(|status| {
                        if !status.success() {
                            let _ = writeln!(out, "(exit status {})", status.code().unwrap_or(-1));
                        }
                    })
            }
            Step::WriteFrom { path, from } => std::fs::read(from)
                .and_then(|bytes| write_file(path, &bytes))
                .map(|()| {
                    let _ = writeln!(out, "wrote {path}");
                }),
            Step::WriteText { path, text } => write_file(path, text.as_bytes()).map(|()| {
                let _ = writeln!(out, "wrote {path}");
            }),
            Step::Delete(path) => std::fs::remove_file(path).map(|()| {
                let _ = writeln!(out, "deleted {path}");
            }),
            Step::Sleep(ms) => {
                std::thread::sleep(Duration::from_millis(*ms));
                Ok(())
            }
        };
        if let Err(e) = result {
            let _ = writeln!(out, "step failed: {e}");
            return 1;
        }
    }
    0
}

fn write_file(path: &str, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = Path::new(path).parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, bytes)
}

fn type_out(text: &str, out: &mut dyn Write) {
    let per_char = Duration::from_secs_f64(1.0 / TYPING_RATE);
    let mut batch = String::new();
    for (i, ch) in text.chars().enumerate() {
        batch.push(ch);
        if i % 8 == 7 {
            let _ = out.write_all(batch.as_bytes());
            let _ = out.flush();
            batch.clear();
            std::thread::sleep(per_char * 8);
        }
    }
    let _ = out.write_all(batch.as_bytes());
    let _ = writeln!(out);
    let _ = out.flush();
}

#[cfg(test)]
#[path = "script/tests.rs"]
mod tests;
