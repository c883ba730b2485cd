use super::*;
use crate::event::{At, Mode, Pass};

fn header() -> Header {
    Header::new("t", "script:x", "run-1", "2026-01-01T00:00:00Z")
}

fn mode() -> Event {
    Event::Mode { mode: Mode::Auto }
}

fn output(text: &str) -> Event {
    Event::AgentOutput { text: text.into() }
}

/// A journal in `dir`: the header's frame, a frame of two events, a frame of one.
fn sample(dir: &Path) -> PathBuf {
    let path = dir.join(JOURNAL_FILE);
    let mut w = JournalWriter::create(&path, &header()).unwrap();
    w.append(0.0, &mode()).unwrap();
    w.append(0.5, &Event::Stage(At::Migrate(1))).unwrap();
    w.append(0.75, &output("héllo\r\n")).unwrap();
    w.flush().unwrap();
    path
}

/// The text `zstdcat` prints: every frame decompressed in order.
fn zstdcat(path: &Path) -> String {
    let bytes = zstd::stream::decode_all(&std::fs::read(path).unwrap()[..]).unwrap();
    String::from_utf8(bytes).unwrap()
}

/// Where each frame of the file at `path` starts.
fn frame_starts(path: &Path) -> Vec<u64> {
    let file = File::open(path).unwrap();
    let mut frames = FrameReader::new(&file, 0).unwrap();
    let mut text = Vec::new();
    let mut starts = Vec::new();
    while let FrameEnd::Whole(start) = frames.next_frame(&mut text).unwrap() {
        starts.push(start);
    }
    starts
}

#[test]
fn round_trip_through_zstd_frames_that_zstdcat_prints_as_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let journal = read(&path).unwrap();
    assert_eq!(journal.header, header());
    assert_eq!(journal.entries.len(), 3);
    assert_eq!(journal.entries[2].event, output("héllo\r\n"));
    assert!((journal.entries[1].t - 0.5).abs() < 1e-9);
    assert!(!journal.torn);
    let text = zstdcat(&path);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].contains("\"format\":\"xstack-journal\""));
    assert_eq!(lines[1], r#"{"t":0.0,"type":"mode","mode":"auto"}"#);
    // The header alone, then the stage change (urgent) with the line before it, then the rest.
    assert_eq!(frame_starts(&path).len(), 3);
}

#[test]
fn a_torn_last_frame_loses_only_that_frame_at_every_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let full = std::fs::read(&path).unwrap();
    let last = *frame_starts(&path).last().unwrap() as usize;
    for cut in last..full.len() {
        std::fs::write(&path, &full[..cut]).unwrap();
        let journal = read(&path).unwrap();
        assert_eq!(journal.entries.len(), 2, "cut at {cut}");
        assert_eq!(journal.torn, cut > last, "cut at {cut}");
        assert!(!finished(&path));
    }
}

#[test]
fn plain_journals_of_earlier_versions_are_read_with_a_torn_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(PLAIN_JOURNAL_FILE);
    let mut full = serde_json::to_string(&header()).unwrap() + "\n";
    full.push_str("{\"t\":0.0,\"type\":\"mode\",\"mode\":\"auto\"}\n");
    full.push_str("{\"t\":0.5,\"type\":\"stage\",\"phase\":1,\"stage\":\"migrate\"}\n");
    let last_start = full.len();
    full.push_str("{\"t\":0.75,\"type\":\"agent_output\",\"text\":\"héllo\\r\\n\"}\n");
    for cut in (last_start..=full.len()).filter(|c| full.is_char_boundary(*c)) {
        std::fs::write(&path, &full[..cut]).unwrap();
        let journal = read(&path).unwrap();
        // Only the newline missing: the line is whole and kept.
        let whole = cut >= full.len() - 1;
        assert_eq!(journal.entries.len(), if whole { 3 } else { 2 }, "{cut}");
        assert_eq!(journal.torn, cut > last_start && !whole, "cut at {cut}");
    }
    assert_eq!(path_in(dir.path()), path);
    let (_, entry) = {
        let mut found = Vec::new();
        JournalReader::open(&path)
            .unwrap()
            .visit_at(|place, entry| found.push((place, entry)))
            .unwrap();
        found.pop().unwrap()
    };
    assert_eq!(entry.event, output("héllo\r\n"));
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
    std::fs::write(&path, zstd::bulk::compress(b"{\"hello\": 1}\n", 3).unwrap()).unwrap();
    let err = read(&path).unwrap_err().to_string();
    assert!(err.contains("not an xstack journal header"), "{err}");
    std::fs::write(&path, frames::MAGIC).unwrap();
    let err = read(&path).unwrap_err().to_string();
    assert!(err.contains("cut off"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn an_append_is_flushed_by_the_tick_once_the_interval_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(JOURNAL_FILE);
    let mut w = JournalWriter::create(&path, &header()).unwrap();
    w.append(0.1, &Event::Note { text: "x".into() }).unwrap();
    tokio::time::advance(FLUSH_INTERVAL / 2).await;
    w.tick().unwrap();
    assert_eq!(read(&path).unwrap().entries.len(), 0, "flushed too early");
    tokio::time::advance(FLUSH_INTERVAL / 2).await;
    w.tick().unwrap();
    assert_eq!(
        read(&path).unwrap().entries.len(),
        1,
        "not flushed by the tick"
    );
    // With nothing new, a tick writes no frame.
    let len = std::fs::metadata(&path).unwrap().len();
    tokio::time::advance(FLUSH_INTERVAL).await;
    w.tick().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    // An append after the interval is flushed at once; a phase change always is.
    tokio::time::advance(FLUSH_INTERVAL).await;
    w.append(0.5, &Event::Note { text: "y".into() }).unwrap();
    assert_eq!(read(&path).unwrap().entries.len(), 2);
    w.append(0.6, &Event::Stage(At::Verify(1, Pass::First)))
        .unwrap();
    assert_eq!(read(&path).unwrap().entries.len(), 3);
}

#[test]
fn frames_are_cut_at_their_size_and_compress_repetitive_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(JOURNAL_FILE);
    let mut w = JournalWriter::create(&path, &header()).unwrap();
    let line = "\x1b[32m 42%\x1b[0m|\x1b[36m##########           \x1b[0m| step 4200 loss=0.0002 acc=0.2000\r\n";
    let mut printed = 0;
    for i in 0..20_000 {
        let text = line.repeat(10).replace("4200", &i.to_string());
        printed += text.len();
        w.append(f64::from(i) * 0.001, &Event::RunOutput { text })
            .unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let size = std::fs::metadata(&path).unwrap().len() as usize;
    assert!(size * 4 < printed, "{size} bytes for {printed} printed");
    assert!(frame_starts(&path).len() > 10);
    assert_eq!(read(&path).unwrap().entries.len(), 20_000);
}

#[test]
fn resuming_cuts_a_torn_last_frame_and_appends_after_the_whole_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let full = std::fs::read(&path).unwrap();
    let last = *frame_starts(&path).last().unwrap() as usize;
    std::fs::write(&path, &full[..last + 5]).unwrap();
    let mut w = JournalWriter::resume(dir.path()).unwrap();
    w.append(1.0, &Event::Note { text: "on".into() }).unwrap();
    w.flush().unwrap();
    let journal = read(&path).unwrap();
    assert!(!journal.torn);
    assert_eq!(journal.entries.len(), 3);
    assert_eq!(journal.entries[2].event, Event::Note { text: "on".into() });
}

#[test]
fn resuming_a_plain_journal_compresses_it_first() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join(PLAIN_JOURNAL_FILE);
    let mut text = serde_json::to_string(&header()).unwrap() + "\n";
    text.push_str("{\"t\":0.0,\"type\":\"mode\",\"mode\":\"auto\"}\n{\"t\":0.5,\"type\":\"no");
    std::fs::write(&plain, text).unwrap();
    let mut w = JournalWriter::resume(dir.path()).unwrap();
    w.append(
        1.0,
        &Event::Finished {
            passed: true,
            passed_in_phase: Some(1),
            exit_code: 0,
            error: None,
            interrupted: None,
        },
    )
    .unwrap();
    drop(w);
    assert!(!plain.exists());
    let path = path_in(dir.path());
    assert_eq!(path, dir.path().join(JOURNAL_FILE));
    let journal = read(&path).unwrap();
    assert_eq!(journal.header, header());
    assert_eq!(journal.entries.len(), 2);
    assert!(!journal.torn);
    assert!(finished(&path));
}

#[test]
fn the_end_is_found_from_the_last_frame_or_the_plain_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    assert!(!finished(&path));
    let mut w = JournalWriter::resume(dir.path()).unwrap();
    // A long run first, so the end lies in one frame of many.
    for i in 0..5_000 {
        w.append(1.0, &output(&format!("line {i} {}\r\n", "x".repeat(300))))
            .unwrap();
    }
    w.append(
        2.0,
        &Event::Finished {
            passed: false,
            passed_in_phase: None,
            exit_code: 1,
            error: None,
            interrupted: None,
        },
    )
    .unwrap();
    drop(w);
    assert!(finished(&path));
    let plain = dir.path().join(PLAIN_JOURNAL_FILE);
    std::fs::write(&plain, zstdcat(&path)).unwrap();
    assert!(finished(&plain));
}

#[test]
fn a_session_resized_after_it_finished_is_still_finished() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(JOURNAL_FILE);
    let mut w = JournalWriter::create(&path, &header()).unwrap();
    let end = Event::Finished {
        passed: true,
        passed_in_phase: Some(1),
        exit_code: 0,
        error: None,
        interrupted: None,
    };
    let resized = |cols| Event::Resized {
        pane: crate::event::TerminalPane::Run,
        cols,
        rows: 20,
    };
    w.append(1.0, &Event::Note { text: "x".into() }).unwrap();
    w.flush().unwrap();
    assert!(!finished(&path));
    w.append(2.0, &end).unwrap();
    w.append(3.0, &resized(60)).unwrap();
    w.flush().unwrap();
    assert!(finished(&path), "a resize in the same frame");
    // Resizes in frames of their own after the end: the end is read from the whole journal.
    for cols in [80, 100] {
        w.append(4.0, &resized(cols)).unwrap();
        w.flush().unwrap();
    }
    assert!(finished(&path), "resizes in later frames");
    // Anything else after the end means the session went on (a re-run): not finished.
    w.append(
        5.0,
        &Event::Note {
            text: "again".into(),
        },
    )
    .unwrap();
    w.flush().unwrap();
    assert!(!finished(&path));
}

/// Where the session is, as every `stage` event records it: each state reads back as
/// itself, the steps keep the form earlier journals have, and those journals still read.
#[test]
fn every_place_of_the_session_is_recorded_and_read_back() {
    use crate::event::{Gated, Return};
    let again = |to| Pass::Again(to);
    let places = [
        (At::Setup, r#"{"type":"stage","phase":0,"stage":"setup"}"#),
        (
            At::Gate(Gated::Migrate(1)),
            r#"{"type":"stage","phase":1,"stage":"migrate","waiting":true}"#,
        ),
        (
            At::Migrate(1),
            r#"{"type":"stage","phase":1,"stage":"migrate"}"#,
        ),
        (
            At::Gate(Gated::Verify(1)),
            r#"{"type":"stage","phase":1,"stage":"verify","waiting":true}"#,
        ),
        (
            At::Verify(1, Pass::First),
            r#"{"type":"stage","phase":1,"stage":"verify"}"#,
        ),
        (
            At::Grade(1, Pass::First),
            r#"{"type":"stage","phase":1,"stage":"grade"}"#,
        ),
        (
            At::Gate(Gated::Details),
            r#"{"type":"stage","phase":1,"stage":"inject","waiting":true}"#,
        ),
        (
            At::Verify(1, again(Return::Details)),
            r#"{"type":"stage","phase":1,"stage":"verify","again":"details"}"#,
        ),
        (
            At::Grade(2, again(Return::Ended)),
            r#"{"type":"stage","phase":2,"stage":"grade","again":"ended"}"#,
        ),
        (At::Inject, r#"{"type":"stage","phase":1,"stage":"inject"}"#),
        (At::Ended(2), r#"{"type":"stage","phase":2,"stage":"done"}"#),
    ];
    for (at, line) in places {
        assert_eq!(serde_json::to_string(&Event::Stage(at)).unwrap(), line);
        assert_eq!(
            serde_json::from_str::<Event>(line).unwrap(),
            Event::Stage(at)
        );
    }
    // A wait where nothing waits is refused, naming the step.
    let error = serde_json::from_str::<Event>(
        r#"{"type":"stage","phase":1,"stage":"grade","waiting":true}"#,
    )
    .unwrap_err();
    assert!(error.to_string().contains("before grade"), "{error}");
}

/// An earlier journal said what the session waited for as text: the agent's question is
/// read back as the question, any other wait as it was said.
#[test]
fn an_earlier_journals_waits_are_read_back() {
    use crate::event::Waiting;
    use crate::session::state::SessionState;
    let mut state = SessionState::new();
    let asks: Event = serde_json::from_str(
        r#"{"type":"waiting","what":"the agent asks to trust this folder (a attaches to answer)"}"#,
    )
    .unwrap();
    state.apply(1.0, &asks);
    assert_eq!(state.agent_asks.as_deref(), Some("to trust this folder"));
    assert_eq!(
        state.waiting(),
        Some(Waiting::AgentAsks("to trust this folder".to_string()))
    );
    let gate: Event =
        serde_json::from_str(r#"{"type":"waiting","what":"n to verify phase 1"}"#).unwrap();
    state.apply(2.0, &gate);
    assert_eq!(
        state.waiting().map(|w| w.text()).as_deref(),
        Some("n to verify phase 1")
    );
    state.apply(3.0, &Event::Waiting { what: None });
    assert_eq!(state.waiting(), None);
}
