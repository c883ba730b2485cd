//! The bench's static site from the command line: built after `xstack bench`, `xstack bench
//! --report` and `xstack report` have written their report, and served by `xstack view`.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::bench::model::Report;
use crate::cli::AppError;
use crate::process::EXIT_PASS;
use crate::site;

/// After a report was written into `out` (the command returned `done`): builds `out/site/`
/// from its `report.json` and says where it is. The command's own exit status stands.
pub fn with_site(
    out: &Path,
    done: Result<i32, AppError>,
    say: &mut dyn Write,
) -> Result<i32, AppError> {
    let code = done?;
    let json = out.join("report.json");
    let report: Report = std::fs::read_to_string(&json)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
        .map_err(|e| AppError::infra(format!("{}: {e}", json.display())))?;
    let built = site::build(out, &report)
        .map_err(|e| AppError::infra(format!("cannot write the site: {e}")))?;
    let _ = writeln!(
        say,
        "site: {} ({} trial pages written, {} unchanged; `xstack view {}` serves it)",
        out.join(site::SITE_DIR).join("index.html").display(),
        built.rendered,
        built.kept,
        out.display()
    );
    Ok(code)
}

/// `xstack catalog [TASKS_DIR] --out DIR [--bench BENCH]...`: writes the catalog's site into
/// `DIR/site/` and says where it is; a bad folder is a usage error that writes nothing.
pub fn catalog(
    tasks: &Path,
    out: &Path,
    benches: &[PathBuf],
    say: &mut dyn Write,
) -> Result<i32, AppError> {
    use site::catalog::CatalogError;
    let built = site::catalog::build(tasks, out, benches).map_err(|e| match e {
        CatalogError::Write(_) => AppError::infra(format!("cannot write the catalog: {e}")),
        _ => AppError::usage(e.to_string()),
    })?;
    let invalid = match built.invalid {
        0 => String::new(),
        n => format!(
            ", {n} invalid folder{} listed with its error",
            if n == 1 { "" } else { "s" }
        ),
    };
    let _ = writeln!(
        say,
        "catalog: {} ({} task pages{invalid}; `xstack view {}` serves it)",
        built.index.display(),
        built.tasks,
        out.display()
    );
    Ok(EXIT_PASS)
}

/// `xstack view DIR [--port P]`: serves `DIR/site/` on localhost until interrupted.
pub fn view(dir: &Path, port: u16, say: &mut dyn Write) -> Result<i32, AppError> {
    site::serve::serve(dir, port, say).map_err(|e| match e {
        site::serve::ServeError::NoSite(_) => AppError::usage(e.to_string()),
        site::serve::ServeError::Listen { .. } => AppError::infra(e.to_string()),
    })?;
    Ok(EXIT_PASS)
}
