//! `xstack view DIR [--port P]`: serves a bench's or report's site folder on localhost
//! (127.0.0.1 only), read-only, for those used to `harbor view` or `inspect view`. The
//! same site opens from `file://` without it. A static folder needs only GET: each
//! connection gets one file and is closed, with the standard library's sockets.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use super::SITE_DIR;

/// Why the site cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// DIR has no site.
    #[error(
        "{0}: no site here (no {SITE_DIR}/index.html, and not a site folder): run `xstack bench --report DIR`, `xstack report RUN_DIR... --out DIR` or `xstack catalog TASKS_DIR --out DIR` first"
    )]
    NoSite(PathBuf),
    /// The port could not be opened.
    #[error("cannot listen on 127.0.0.1:{port}: {message}")]
    Listen {
        /// The port asked for.
        port: u16,
        /// Why not.
        message: String,
    },
}

/// The site folder of `dir`: `dir/site/`, or `dir` itself when it is one.
pub fn site_of(dir: &Path) -> Result<PathBuf, ServeError> {
    let inner = dir.join(SITE_DIR);
    if inner.join("index.html").is_file() {
        Ok(inner)
    } else if dir.join("index.html").is_file() && dir.join("assets").is_dir() {
        Ok(dir.to_path_buf())
    } else {
        Err(ServeError::NoSite(dir.to_path_buf()))
    }
}

/// The file under `site` that `url` names, when it names one: no `..`, no absolute path; a
/// folder means its `index.html`.
fn file_for(site: &Path, url: &str) -> Option<PathBuf> {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let path = percent_decode(path)?;
    let mut file = site.to_path_buf();
    for component in Path::new(path.trim_start_matches('/')).components() {
        match component {
            Component::Normal(part) => file.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if file.is_dir() {
        file.push("index.html");
    }
    file.is_file().then_some(file)
}

/// `%xx` escapes decoded; None when they do not make UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The content type of a file of the site.
fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "json" => "application/json",
        _ => "text/plain; charset=utf-8",
    }
}

/// Answers one connection: reads its request's head, writes the file it names (or 404) and
/// closes it (`Connection: close`: no connection is kept waiting between two requests).
fn answer(site: &Path, mut stream: TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut words = head.lines().next().unwrap_or("").split_whitespace();
    let (method, url) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let file = (method == "GET" || method == "HEAD")
        .then(|| file_for(site, url))
        .flatten()
        .and_then(|f| Some((content_type(&f), std::fs::read(&f).ok()?)));
    tracing::debug!(url, found = file.is_some(), "view request");
    let (status, kind, body) = match file {
        Some((kind, body)) => ("200 OK", kind, body),
        None => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            b"not found\n".to_vec(),
        ),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method != "HEAD" {
        stream.write_all(&body)?;
    }
    stream.flush()
}

/// Serves `dir`'s site on 127.0.0.1:`port` (0: any free port) until the process is ended;
/// says where on `say` first. Each connection is answered on a thread of its own.
pub fn serve(dir: &Path, port: u16, say: &mut dyn Write) -> Result<(), ServeError> {
    let site = site_of(dir)?;
    let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| ServeError::Listen {
        port,
        message: e.to_string(),
    })?;
    let port = listener.local_addr().map_or(port, |a| a.port());
    let _ = writeln!(
        say,
        "serving {} at http://127.0.0.1:{port}/ (Ctrl-C stops)",
        site.display()
    );
    let _ = say.flush();
    std::thread::scope(|scope| {
        for stream in listener.incoming().flatten() {
            let site = &site;
            scope.spawn(move || {
                if let Err(e) = answer(site, stream) {
                    tracing::debug!(error = %e, "view connection");
                }
            });
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_map_to_files_under_the_site_only() {
        let site = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(site.path().join("trials/a b")).unwrap();
        std::fs::write(site.path().join("index.html"), "x").unwrap();
        std::fs::write(site.path().join("trials/a b/index.html"), "y").unwrap();
        let root = site.path();
        assert_eq!(file_for(root, "/"), Some(root.join("index.html")));
        assert_eq!(
            file_for(root, "/trials/a%20b/?x=1#f"),
            Some(root.join("trials/a b/index.html"))
        );
        assert_eq!(file_for(root, "/../etc/passwd"), None);
        assert_eq!(file_for(root, "/trials/%2e%2e/%2e%2e/x"), None);
        assert_eq!(file_for(root, "/missing.js"), None);
        assert_eq!(
            content_type(Path::new("a.js")),
            "text/javascript; charset=utf-8"
        );
    }
}
