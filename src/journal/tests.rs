use super::*;
use crate::session::event::{Mode, Stage};

fn sample(dir: &Path) -> PathBuf {
    let path = dir.join(JOURNAL_FILE);
    let mut w = JournalWriter::create(
        &path,
        &Header::new("t", "script:x", "run-1", "2026-01-01T00:00:00Z"),
    )
    .unwrap();
    w.append(0.0, &Event::Mode { mode: Mode::Auto }).unwrap();
    w.append(
        0.5,
        &Event::Stage {
            phase: 1,
            stage: Stage::Migrate,
        },
    )
    .unwrap();
    w.append(
        0.75,
        &Event::AgentOutput {
            text: "héllo\r\n".into(),
        },
    )
    .unwrap();
    w.flush().unwrap();
    path
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let journal = read(&path).unwrap();
    assert_eq!(journal.header.task, "t");
    assert_eq!(journal.header.version, FORMAT_VERSION);
    assert_eq!(journal.entries.len(), 3);
    assert_eq!(
        journal.entries[2].event,
        Event::AgentOutput {
            text: "héllo\r\n".into()
        }
    );
    assert!((journal.entries[1].t - 0.5).abs() < 1e-9);
    assert!(!journal.torn);
    let first_event_line = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    assert_eq!(first_event_line, r#"{"t":0.0,"type":"mode","mode":"auto"}"#);
}

#[test]
fn torn_last_line_is_skipped_at_every_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let full = std::fs::read(&path).unwrap();
    let last_start = full[..full.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    for cut in last_start..full.len() {
        std::fs::write(&path, &full[..cut]).unwrap();
        let journal = read(&path).unwrap();
        // Only the newline missing: the line is whole and kept.
        let whole = cut == full.len() - 1;
        assert_eq!(
            journal.entries.len(),
            if whole { 3 } else { 2 },
            "cut at {cut}"
        );
        assert_eq!(journal.torn, cut > last_start && !whole, "cut at {cut}");
    }
}

#[test]
fn a_file_that_is_not_a_journal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(JOURNAL_FILE);
    std::fs::write(&path, "{\"hello\": 1}\n").unwrap();
    let err = read(&path).unwrap_err().to_string();
    assert!(err.contains("not an xstack journal header"), "{err}");
    std::fs::write(&path, "").unwrap();
    assert!(read(&path).is_err());
}

#[test]
fn appends_are_visible_within_the_flush_interval_after_a_tick() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(JOURNAL_FILE);
    let mut w = JournalWriter::create(&path, &Header::new("t", "a", "r", "s")).unwrap();
    w.append(0.1, &Event::Note { text: "x".into() }).unwrap();
    // A phase change is flushed at once.
    w.append(
        0.2,
        &Event::Stage {
            phase: 1,
            stage: Stage::Verify,
        },
    )
    .unwrap();
    assert_eq!(read(&path).unwrap().entries.len(), 2);
}
