//! Renders one frame of a recorded run (its journal, at a given time) as JSON cells, for
//! `scripts/screenshot` to turn into a picture.
//!
//! `cargo run --example frame_json -- RUN_DIR SECONDS WIDTH HEIGHT > frame.json`

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use serde_json::json;

use xstack::replay::Player;
use xstack::ui::app::App;
use xstack::ui::draw;
use xstack::ui::panes::diff::DiffPane;
use xstack::ui::theme::Theme;

fn hex(color: Color, default: &str) -> String {
    match color {
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Reset => default.to_string(),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    anyhow::ensure!(
        args.len() == 5,
        "usage: frame_json RUN_DIR SECONDS WIDTH HEIGHT"
    );
    let journal = xstack::journal::read(&xstack::journal::path_in(std::path::Path::new(&args[1])))?;
    let at: f64 = args[2].parse()?;
    let (width, height): (u16, u16) = (args[3].parse()?, args[4].parse()?);
    let mut player = Player::new(journal);
    player.seek(at);
    let theme = Theme::dark();
    let mut app = App::new(true);
    let (mut diff, mut built) = DiffPane::new(theme.syntax_theme.clone());
    diff.update(diff.read(player.state(), &app), &mut app);
    while let Ok(b) = built.try_recv() {
        diff.accept(b);
    }
    let mut terminal = Terminal::new(TestBackend::new(width, height))?;
    terminal.draw(|f| {
        draw::draw(f, player.state(), &app, &diff, &theme);
    })?;
    let buffer = terminal.backend().buffer();
    let mut rows = Vec::new();
    for y in 0..height {
        let mut row = Vec::new();
        for x in 0..width {
            let cell = &buffer[(x, y)];
            row.push(json!([
                cell.symbol(),
                hex(cell.fg, "#c8ccd4"),
                hex(cell.bg, "#1e2127"),
                cell.modifier.contains(Modifier::BOLD)
            ]));
        }
        rows.push(row);
    }
    println!(
        "{}",
        json!({ "width": width, "height": height, "rows": rows })
    );
    Ok(())
}
