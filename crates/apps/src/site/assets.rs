//! The site's scripts and style sheets, compiled into the binary and written into every
//! `site/assets/`: the site's own (`src/site/static/`) and asciinema-player 3.18.0 from the
//! npm registry with its licence (`vendor/asciinema-player/`).

use std::path::Path;

use super::{SiteError, Writer};

/// The version of asciinema-player the site carries.
pub const PLAYER_VERSION: &str = "3.18.0";

/// Every file of `site/assets/`: name and content.
const FILES: [(&str, &str); 7] = [
    ("site.css", include_str!("static/site.css")),
    ("index.js", include_str!("static/index.js")),
    ("trial.js", include_str!("static/trial.js")),
    (
        "asciinema-player.min.js",
        include_str!("../../../../vendor/asciinema-player/asciinema-player.min.js"),
    ),
    (
        "asciinema-player.css",
        include_str!("../../../../vendor/asciinema-player/asciinema-player.css"),
    ),
    (
        "asciinema-player.LICENSE",
        include_str!("../../../../vendor/asciinema-player/LICENSE"),
    ),
    ("NOTICE.txt", NOTICE),
];

/// Where the site's third-party files come from.
const NOTICE: &str = "asciinema-player.min.js and asciinema-player.css: asciinema-player 3.18.0 \
(npm registry, dist/bundle/), Apache License 2.0, see asciinema-player.LICENSE.\n\
site.css, index.js, trial.js: xstack.\n";

/// Writes the assets into `site/assets/`.
pub fn write(site: &Path, writer: &Writer) -> Result<(), SiteError> {
    let dir = site.join("assets");
    for (name, text) in FILES {
        writer.bytes(&dir.join(name), text.as_bytes())?;
    }
    Ok(())
}
