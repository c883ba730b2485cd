//! The picker of plain `xstack`: choose a task and an agent and start a run, or open a
//! recorded run in replay.

use std::path::PathBuf;

use crate::replay::runs::fit;
use crossterm::event::{Event as TermEvent, KeyCode, KeyEventKind};
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, List, ListItem, ListState, Paragraph, Wrap};

use crate::event::Mode;
use crate::replay::runs::RunSummary;
use crate::task::Task;

use super::terminal::Tui;
use super::theme::Theme;

/// What the user chose.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    /// Start a run.
    Run {
        /// The task folder.
        task: PathBuf,
        /// The agent spec.
        agent: String,
        /// Step or auto.
        mode: Mode,
    },
    /// Replay a recorded run.
    Replay(PathBuf),
    /// Make a new task from a repository folder (`xstack init`, interactively).
    NewTask(PathBuf),
    /// Leave.
    Quit,
}

/// Which list has the focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Focus {
    Tasks,
    Agents,
    Runs,
}

/// The picker's state.
pub struct Picker {
    tasks: Vec<Task>,
    runs: Vec<RunSummary>,
    focus: Focus,
    task: ListState,
    agent: ListState,
    run: ListState,
    mode: Mode,
    /// The folder being typed for "new task from a folder…", while the prompt is open.
    new_task: Option<String>,
    /// Per task: the environments a run will build first, with their estimated size.
    to_build: Vec<Vec<String>>,
}

impl Picker {
    /// A picker over the given tasks and recorded runs.
    pub fn new(tasks: Vec<Task>, runs: Vec<RunSummary>) -> Picker {
        let mut task = ListState::default();
        task.select(Some(0));
        let mut run = ListState::default();
        if !runs.is_empty() {
            run.select(Some(0));
        }
        let mut agent = ListState::default();
        agent.select(Some(0));
        Picker {
            tasks,
            runs,
            focus: Focus::Tasks,
            task,
            agent,
            run,
            mode: Mode::Auto,
            new_task: None,
            to_build: Vec::new(),
        }
    }

    /// The environments a run of each task (in the picker's order) will build first.
    pub fn environments_to_build(mut self, to_build: Vec<Vec<String>>) -> Picker {
        self.to_build = to_build;
        self
    }

    /// The task list's length: the tasks, then "new task from a folder…".
    fn task_rows(&self) -> usize {
        self.tasks.len() + 1
    }

    /// The agent choices for the selected task: its demo trajectory, then a shell.
    pub fn agents(&self) -> Vec<(String, String)> {
        let mut agents = Vec::new();
        if let Some(task) = self.task.selected().and_then(|i| self.tasks.get(i))
            && let Some(path) = task.demo_trajectory()
        {
            agents.push((
                format!("script:{}", path.display()),
                "scripted demo agent (replays the task's trajectory)".to_string(),
            ));
        }
        agents.push((
            "shell".to_string(),
            "a shell in the workspace: you do the port".to_string(),
        ));
        agents
    }

    /// Handles a key; Some when the user chose.
    pub fn on_key(&mut self, code: KeyCode) -> Option<Choice> {
        if let Some(folder) = self.new_task.as_mut() {
            match code {
                KeyCode::Esc => self.new_task = None,
                KeyCode::Enter if !folder.trim().is_empty() => {
                    return Some(Choice::NewTask(PathBuf::from(folder.trim())));
                }
                KeyCode::Backspace => {
                    folder.pop();
                }
                KeyCode::Char(c) => folder.push(c),
                _ => {}
            }
            return None;
        }
        let task_rows = self.task_rows();
        let list = match self.focus {
            Focus::Tasks => (&mut self.task, task_rows),
            Focus::Agents => (&mut self.agent, 2),
            Focus::Runs => (&mut self.run, self.runs.len()),
        };
        let (state, len) = list;
        match code {
            KeyCode::Char('q') | KeyCode::Esc => return Some(Choice::Quit),
            KeyCode::Down | KeyCode::Char('j') if len > 0 => {
                state.select(Some(state.selected().map_or(0, |i| (i + 1).min(len - 1))));
            }
            KeyCode::Up | KeyCode::Char('k') if len > 0 => {
                state.select(Some(state.selected().map_or(0, |i| i.saturating_sub(1))));
            }
            KeyCode::Tab => {
                self.focus = match self.focus {
                    Focus::Tasks => Focus::Agents,
                    Focus::Agents => Focus::Runs,
                    Focus::Runs => Focus::Tasks,
                }
            }
            KeyCode::Char('s') => {
                self.mode = match self.mode {
                    Mode::Auto => Mode::Step,
                    Mode::Step => Mode::Auto,
                }
            }
            KeyCode::Enter => match self.focus {
                Focus::Runs => {
                    let run = self.run.selected().and_then(|i| self.runs.get(i))?;
                    return Some(Choice::Replay(run.dir.clone()));
                }
                Focus::Tasks if self.task.selected() == Some(self.tasks.len()) => {
                    self.new_task = Some(String::new());
                }
                Focus::Tasks | Focus::Agents => {
                    let task = self.task.selected().and_then(|i| self.tasks.get(i))?;
                    let agents = self.agents();
                    let index = self.agent.selected().unwrap_or(0).min(agents.len() - 1);
                    return Some(Choice::Run {
                        task: task.dir.clone(),
                        agent: agents[index].0.clone(),
                        mode: self.mode,
                    });
                }
            },
            _ => {}
        }
        if self.focus != Focus::Agents {
            let agents = self.agents().len();
            let selected = self.agent.selected().unwrap_or(0).min(agents - 1);
            self.agent.select(Some(selected));
        }
        None
    }

    /// Draws the picker: the tasks and the selected one's About panel, the agents, the
    /// recorded runs and the hint line.
    pub fn draw(&mut self, frame: &mut ratatui::Frame<'_>, theme: &Theme) {
        let rows = Layout::default()
            .direction(Direction::Vertical)
            .constraints([
                Constraint::Percentage(45),
                Constraint::Percentage(20),
                Constraint::Min(5),
                Constraint::Length(1),
            ])
            .split(frame.area());
        let top = Layout::default()
            .direction(Direction::Horizontal)
            .constraints([Constraint::Percentage(55), Constraint::Percentage(45)])
            .split(rows[0]);
        self.draw_tasks(frame, top[0], theme);
        self.draw_about(frame, top[1], theme);
        self.draw_agents(frame, rows[1], theme);
        self.draw_runs(frame, rows[2], theme);
        self.draw_hint(frame, rows[3], theme);
    }

    /// The list of tasks in `area`, and the line that makes a new one from a folder.
    fn draw_tasks(&mut self, frame: &mut ratatui::Frame<'_>, area: Rect, theme: &Theme) {
        let c = &theme.colors;
        // Columns: the id, the direction (`jax→torch`), the title in what is left, the first
        // criterion's rule aligned.
        let criteria: Vec<String> = self
            .tasks
            .iter()
            .map(|t| {
                t.spec
                    .criteria
                    .first()
                    .map(|c| format!("{} {}", c.metric, crate::ui::panes::metrics::rule_of(c)))
                    .unwrap_or_default()
            })
            .collect();
        let id_width = self
            .tasks
            .iter()
            .map(|t| t.spec.id.chars().count())
            .max()
            .unwrap_or(0);
        let rule_width = criteria
            .iter()
            .map(|r| r.chars().count())
            .max()
            .unwrap_or(0);
        let inner = usize::from(area.width.saturating_sub(4));
        let direction_width = "torch→jax".chars().count() + 2;
        let title_width = inner.saturating_sub(id_width + direction_width + rule_width + 4);
        let mut tasks: Vec<ListItem> = self
            .tasks
            .iter()
            .zip(&criteria)
            .map(|(t, rule)| {
                let mut spans = vec![Span::styled(
                    format!("{:<id_width$}  ", t.spec.id),
                    Style::default().fg(c.text).add_modifier(Modifier::BOLD),
                )];
                spans.push(Span::styled(
                    format!("{}  ", t.migration.short()),
                    Style::default().fg(c.dim),
                ));
                if title_width >= 8 {
                    spans.push(Span::styled(
                        format!("{:<title_width$}  ", fit(&t.spec.title, title_width)),
                        Style::default().fg(c.text),
                    ));
                }
                spans.push(Span::styled(rule.clone(), Style::default().fg(c.dim)));
                ListItem::new(Line::from(spans))
            })
            .collect();
        tasks.push(ListItem::new(Span::styled(
            "new task from a folder…",
            Style::default().fg(c.focus),
        )));
        frame.render_stateful_widget(
            List::new(tasks)
                .block(pane_block(theme, "Tasks", self.focus == Focus::Tasks))
                .highlight_style(highlight()),
            area,
            &mut self.task,
        );
    }

    /// The About panel of the selected task in `area`, with the environments it would build.
    fn draw_about(&self, frame: &mut ratatui::Frame<'_>, area: Rect, theme: &Theme) {
        let c = &theme.colors;
        let selected = self.task.selected();
        let to_build = selected
            .and_then(|i| self.to_build.get(i))
            .map_or(&[][..], Vec::as_slice);
        let about = selected.and_then(|i| self.tasks.get(i)).map_or_else(
            || {
                vec![Line::from(
                    "no tasks found: set $XSTACK_TASKS_DIR or run in a folder with tasks/",
                )]
            },
            |t| about_lines(t, to_build, theme),
        );
        frame.render_widget(
            Paragraph::new(about)
                .style(Style::default().fg(c.text))
                .wrap(Wrap { trim: true })
                .block(pane_block(theme, "About", false)),
            area,
        );
    }

    /// The list of agents in `area`, titled with the mode a run starts in.
    fn draw_agents(&mut self, frame: &mut ratatui::Frame<'_>, area: Rect, theme: &Theme) {
        let c = &theme.colors;
        let agents: Vec<ListItem> = self
            .agents()
            .into_iter()
            .map(|(spec, about)| {
                ListItem::new(Line::from(vec![
                    Span::styled(format!("{spec}  "), Style::default().fg(c.text)),
                    Span::styled(about, Style::default().fg(c.dim)),
                ]))
            })
            .collect();
        frame.render_stateful_widget(
            List::new(agents)
                .block(pane_block(
                    theme,
                    &format!("Agent ({} mode: s toggles)", self.mode.label()),
                    self.focus == Focus::Agents,
                ))
                .highlight_style(highlight()),
            area,
            &mut self.agent,
        );
    }

    /// The list of recorded runs in `area`: when, which task and agent, the verdicts, the
    /// duration.
    fn draw_runs(&mut self, frame: &mut ratatui::Frame<'_>, area: Rect, theme: &Theme) {
        let c = &theme.colors;
        let runs: Vec<ListItem> = self
            .runs
            .iter()
            .map(|r| {
                let verdicts = r.outcome();
                ListItem::new(Line::from(vec![
                    Span::styled(
                        format!(
                            "{:<22} {:<20} {:<24} ",
                            r.started_at,
                            fit(&r.task, 20),
                            fit(&crate::agent::label(&r.agent), 24)
                        ),
                        Style::default().fg(c.text),
                    ),
                    Span::styled(
                        verdicts,
                        Style::default().fg(if r.passed { c.pass } else { c.fail }),
                    ),
                    Span::styled(
                        format!("  {:.1} s", r.duration_s),
                        Style::default().fg(c.dim),
                    ),
                ]))
            })
            .collect();
        frame.render_stateful_widget(
            List::new(runs)
                .block(pane_block(
                    theme,
                    "Recorded runs (Enter replays)",
                    self.focus == Focus::Runs,
                ))
                .highlight_style(highlight()),
            area,
            &mut self.run,
        );
    }

    /// The hint line in `area`: the keys, or the folder being typed for a new task.
    fn draw_hint(&self, frame: &mut ratatui::Frame<'_>, area: Rect, theme: &Theme) {
        let c = &theme.colors;
        let hint = match &self.new_task {
            Some(folder) => format!(
                "repository folder: {folder}▏ (Enter runs `xstack init` on it, Esc cancels)"
            ),
            None => "↑/↓ choose · Tab next list · s step/auto · Enter start (or replay) · q quit"
                .to_string(),
        };
        frame.render_widget(
            Paragraph::new(Span::styled(
                hint,
                Style::default().fg(if self.new_task.is_some() {
                    c.waiting
                } else {
                    c.dim
                }),
            )),
            area,
        );
    }
}

/// A picker pane's frame titled `title`, its border lit when `focused`.
fn pane_block(theme: &Theme, title: &str, focused: bool) -> Block<'static> {
    let c = &theme.colors;
    Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(if focused { c.focus } else { c.border }))
        .title(Span::styled(
            format!(" {title} "),
            Style::default().fg(c.title).add_modifier(Modifier::BOLD),
        ))
}

/// How the selected line of a picker list is drawn.
fn highlight() -> Style {
    Style::default().add_modifier(Modifier::REVERSED)
}

/// The About panel of a task: the claim its first criterion is graded against and, beside it,
/// the public repository and commit the task was made from (`[upstream]`), the environments a
/// run of it would build first (`to_build`: said before the summary, so a short pane shows
/// them), then its summary.
fn about_lines(task: &Task, to_build: &[String], theme: &Theme) -> Vec<Line<'static>> {
    let c = &theme.colors;
    let mut lines = Vec::new();
    if let Some(claim) = task.spec.criteria.first().and_then(|cr| cr.claim.as_ref()) {
        lines.push(Line::from(Span::styled(
            format!("claim: {}", claim.describe()),
            Style::default().fg(c.dim),
        )));
    }
    if let Some(upstream) = &task.spec.upstream {
        lines.push(Line::from(Span::styled(
            upstream.describe(),
            Style::default().fg(c.dim),
        )));
    }
    for note in to_build {
        lines.push(Line::from(Span::styled(
            note.clone(),
            Style::default().fg(c.dim),
        )));
    }
    if !lines.is_empty() {
        lines.push(Line::default());
    }
    let summary = task
        .spec
        .summary
        .clone()
        .unwrap_or_else(|| task.spec.title.clone());
    lines.push(Line::from(summary));
    lines
}

/// Runs the picker until the user chooses.
pub fn run(terminal: &mut Tui, mut picker: Picker, theme: &Theme) -> std::io::Result<Choice> {
    loop {
        terminal.draw(|f| picker.draw(f, theme))?;
        if let TermEvent::Key(key) = crossterm::event::read()?
            && key.kind != KeyEventKind::Release
            && let Some(choice) = picker.on_key(key.code)
        {
            return Ok(choice);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enter_starts_the_selected_task_with_its_demo_agent() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks/digits-mlp");
        let task = Task::load(&dir).unwrap();
        let mut picker = Picker::new(vec![task], Vec::new());
        assert_eq!(picker.agents().len(), 2);
        picker.on_key(KeyCode::Char('s'));
        let choice = picker.on_key(KeyCode::Enter).unwrap();
        let Choice::Run { task, agent, mode } = choice else {
            panic!("{choice:?}")
        };
        assert_eq!(task, dir);
        assert!(agent.starts_with("script:") && agent.ends_with("demo/trajectory.jsonl"));
        assert_eq!(mode, Mode::Step);
        picker.on_key(KeyCode::Tab);
        picker.on_key(KeyCode::Down);
        let Some(Choice::Run { agent, .. }) = picker.on_key(KeyCode::Enter) else {
            panic!()
        };
        assert_eq!(agent, "shell");
        assert_eq!(picker.on_key(KeyCode::Char('q')), Some(Choice::Quit));
    }

    #[test]
    fn each_task_shows_its_direction() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks/digits-mlp");
        let forward = Task::load(&dir).unwrap();
        let mut back = forward.clone();
        back.migration = crate::task::Migration {
            from: crate::task::Framework::Jax,
            to: crate::task::Framework::Torch,
        };
        let mut picker = Picker::new(vec![forward, back], Vec::new());
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 20)).unwrap();
        terminal.draw(|f| picker.draw(f, &Theme::dark())).unwrap();
        let buffer = terminal.backend().buffer();
        let rows: Vec<String> = (0..20)
            .map(|y| (0..160).map(|x| buffer[(x, y)].symbol()).collect())
            .filter(|row: &String| row.contains("digits-mlp  "))
            .collect();
        assert_eq!(rows.len(), 2, "{rows:#?}");
        assert!(
            rows[0].contains("digits-mlp  torch→jax  MLP"),
            "{}",
            rows[0]
        );
        assert!(
            rows[1].contains("digits-mlp  jax→torch  MLP"),
            "{}",
            rows[1]
        );
    }

    /// The About pane says which environment a run of the selected task builds first and how
    /// big it will be; a task with nothing to build says nothing of it.
    #[test]
    fn the_about_pane_says_which_environment_will_be_built_first() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks/digits-mlp");
        let task = Task::load(&dir).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let notes = crate::env::store::to_build(cache.path(), &task);
        assert_eq!(notes.len(), 1, "{notes:?}");
        let mut picker = Picker::new(vec![task.clone(), task], Vec::new())
            .environments_to_build(vec![notes, Vec::new()]);
        let screen = |picker: &mut Picker| {
            let mut terminal =
                ratatui::Terminal::new(ratatui::backend::TestBackend::new(300, 30)).unwrap();
            terminal.draw(|f| picker.draw(f, &Theme::dark())).unwrap();
            let buffer = terminal.backend().buffer();
            (0..30)
                .map(|y| {
                    (0..300)
                        .map(|x| buffer[(x, y)].symbol())
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        let first = screen(&mut picker);
        assert!(
            first.contains("the target environment of digits-mlp"),
            "{first}"
        );
        assert!(first.contains("rough figure"), "{first}");
        picker.on_key(KeyCode::Down);
        let second = screen(&mut picker);
        assert!(!second.contains("will be built first"), "{second}");
    }

    #[test]
    fn the_about_panel_shows_the_claim_and_the_repository_it_comes_from() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks/sgc-cora");
        let task = Task::load(&dir).unwrap();
        let mut picker = Picker::new(vec![task], Vec::new());
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 40)).unwrap();
        terminal.draw(|f| picker.draw(f, &Theme::dark())).unwrap();
        let buffer = terminal.backend().buffer();
        let screen: String = (0..40)
            .map(|y| {
                (0..200)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n");
        let claim = screen.find("claim: README.md:31").expect(&screen);
        let upstream = screen
            .find("from Tiiiger/SGC@2c7a272 (MIT), citation.py, 1 change")
            .expect(&screen);
        assert!(claim < upstream, "{screen}");
    }

    #[test]
    fn new_task_from_a_folder_asks_for_the_folder() {
        let mut picker = Picker::new(Vec::new(), Vec::new());
        assert_eq!(picker.on_key(KeyCode::Enter), None);
        for c in "../my-repo".chars() {
            picker.on_key(KeyCode::Char(c));
        }
        picker.on_key(KeyCode::Backspace);
        picker.on_key(KeyCode::Char('o'));
        assert_eq!(
            picker.on_key(KeyCode::Enter),
            Some(Choice::NewTask(PathBuf::from("../my-repo")))
        );
    }
}
