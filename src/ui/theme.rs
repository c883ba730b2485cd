//! Themes: flat TOML files mapping UI roles to colours, plus a syntect theme name for code.
//! `dark` (default), `light` and `high-contrast` are built in; `--theme FILE` loads any file.

use std::path::Path;

use ratatui::style::Color;
use serde::Deserialize;

/// Theme errors.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    /// The file could not be read.
    #[error("{file}: cannot read: {message}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        message: String,
    },
    /// The file is not a valid theme.
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// Why (names the role and line).
        message: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    syntax_theme: String,
    colors: Colors<String>,
}

/// The colour of every UI role.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Colors<C> {
    /// Ordinary text.
    pub text: C,
    /// Secondary text.
    pub dim: C,
    /// Pane borders.
    pub border: C,
    /// The focused pane's border.
    pub focus: C,
    /// Pane titles.
    pub title: C,
    /// Status line text.
    pub status_fg: C,
    /// Status line background.
    pub status_bg: C,
    /// The `waiting:` prompt.
    pub waiting: C,
    /// Added lines (text).
    pub added: C,
    /// Removed lines (text).
    pub removed: C,
    /// Added lines (background).
    pub added_bg: C,
    /// Removed lines (background).
    pub removed_bg: C,
    /// Changed words on the added side.
    pub added_emphasis: C,
    /// Changed words on the removed side.
    pub removed_emphasis: C,
    /// Other emphasis (paired files, whitespace-only changes).
    pub emphasis: C,
    /// PASS.
    pub pass: C,
    /// FAIL.
    pub fail: C,
    /// The current run's metric series.
    pub series_current: C,
    /// The previous phase's series.
    pub series_previous: C,
    /// The reference series.
    pub series_reference: C,
    /// The published value.
    pub published: C,
    /// The tolerance band.
    pub band: C,
}

/// A loaded theme.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// The theme's name.
    pub name: String,
    /// Role colours.
    pub colors: Colors<Color>,
    /// The syntect theme for code in the Diff pane.
    pub syntax_theme: String,
}

const BUILT_IN: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

impl Theme {
    /// The default theme.
    pub fn dark() -> Theme {
        // The built-in themes are checked by the test suite; a failure here is a build error.
        Theme::parse("dark", BUILT_IN[0].1).unwrap_or_else(|e| panic!("built-in theme: {e}"))
    }

    /// A built-in theme by name, or a theme file by path.
    pub fn load(name_or_file: &str) -> Result<Theme, ThemeError> {
        if let Some((name, text)) = BUILT_IN.iter().find(|(n, _)| *n == name_or_file) {
            return Theme::parse(name, text);
        }
        let path = Path::new(name_or_file);
        if !path.is_file() {
            return Err(ThemeError::Read {
                file: name_or_file.to_string(),
                message: format!(
                    "no such file, and not a built-in theme ({})",
                    BUILT_IN
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|e| ThemeError::Read {
            file: name_or_file.to_string(),
            message: e.to_string(),
        })?;
        Theme::parse(name_or_file, &text)
    }

    /// Parses theme TOML; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Theme, ThemeError> {
        let invalid = |message: String| ThemeError::Invalid {
            file: file.to_string(),
            message,
        };
        let raw: ThemeFile = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            invalid(match line {
                Some(l) => format!("line {l}: {}", e.message().trim()),
                None => e.message().trim().to_string(),
            })
        })?;
        let c = &raw.colors;
        let parse = |role: &str, value: &str| -> Result<Color, ThemeError> {
            value.parse::<Color>().map_err(|_| {
                let line = text
                    .lines()
                    .position(|l| l.trim_start().starts_with(role))
                    .map_or(0, |i| i + 1);
                invalid(format!(
                    "line {line}: role `{role}`: `{value}` is not a colour (use #rrggbb or a colour name)"
                ))
            })
        };
        let colors = Colors {
            text: parse("text", &c.text)?,
            dim: parse("dim", &c.dim)?,
            border: parse("border", &c.border)?,
            focus: parse("focus", &c.focus)?,
            title: parse("title", &c.title)?,
            status_fg: parse("status_fg", &c.status_fg)?,
            status_bg: parse("status_bg", &c.status_bg)?,
            waiting: parse("waiting", &c.waiting)?,
            added: parse("added", &c.added)?,
            removed: parse("removed", &c.removed)?,
            added_bg: parse("added_bg", &c.added_bg)?,
            removed_bg: parse("removed_bg", &c.removed_bg)?,
            added_emphasis: parse("added_emphasis", &c.added_emphasis)?,
            removed_emphasis: parse("removed_emphasis", &c.removed_emphasis)?,
            emphasis: parse("emphasis", &c.emphasis)?,
            pass: parse("pass", &c.pass)?,
            fail: parse("fail", &c.fail)?,
            series_current: parse("series_current", &c.series_current)?,
            series_previous: parse("series_previous", &c.series_previous)?,
            series_reference: parse("series_reference", &c.series_reference)?,
            published: parse("published", &c.published)?,
            band: parse("band", &c.band)?,
        };
        Ok(Theme {
            name: file.to_string(),
            colors,
            syntax_theme: raw.syntax_theme,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_themes_load() {
        for (name, _) in BUILT_IN {
            let theme = Theme::load(name).unwrap();
            assert_eq!(&theme.name, name);
        }
        assert_eq!(Theme::dark().colors.pass, Color::Rgb(0x98, 0xc3, 0x79));
    }

    #[test]
    fn unknown_role_and_bad_colour_are_named() {
        let bad_role = BUILT_IN[0].1.replace("text = ", "txet = ");
        let err = Theme::parse("mine.toml", &bad_role)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("mine.toml: line"), "{err}");
        assert!(err.contains("txet"), "{err}");
        let bad_colour = BUILT_IN[0]
            .1
            .replace("pass = \"#98c379\"", "pass = \"greenish\"");
        let err = Theme::parse("mine.toml", &bad_colour)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("role `pass`: `greenish` is not a colour"),
            "{err}"
        );
        assert!(
            Theme::load("/no/such/theme.toml")
                .unwrap_err()
                .to_string()
                .contains("built-in")
        );
    }
}
