//! Property tests: arbitrary input never panics the parsers, readers, extractors, the escape
//! cap or the key encoder, round trips hold, and no secret reaches anything recorded.

use proptest::prelude::*;

use xstack::event::{At, Event, Mode, Pass};
use xstack::journal::{self, Entry, Header, JournalWriter};
use xstack::metrics::{LineSplitter, MetricStream};
use xstack::pty::filter::{EscapeCap, MAX_STRING_PAYLOAD};
use xstack::pty::utf8::Utf8Carry;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn task_files_never_panic_the_parser(text in "(?s).{0,400}", key in "[a-z_]{1,12}", value in "[-+0-9.a-z\"']{0,10}") {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("t");
        std::fs::create_dir_all(task.join("repo")).unwrap();
        std::fs::write(task.join("task.toml"), format!("{text}\n{key} = {value}\n")).unwrap();
        let _ = xstack::task::Task::load(&task);
    }

    #[test]
    fn trajectories_never_panic_the_parser(lines in proptest::collection::vec("(?s).{0,80}", 0..8)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        let _ = xstack::agent::script::Trajectory::load(&path);
    }

    #[test]
    fn journals_of_arbitrary_bytes_never_panic_the_reader(bytes in proptest::collection::vec(any::<u8>(), 0..600), framed in any::<bool>(), compressed in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(journal::JOURNAL_FILE);
        let mut header = br#"{"format":"xstack-journal","version":1,"task":"t","agent":"a","xstack_version":"0","run_id":"r","started_at":"s"}"#.to_vec();
        header.push(b'\n');
        let content = match (framed, compressed) {
            // A plain journal of an earlier version.
            (false, _) => [header, bytes].concat(),
            // Frames: the header's, then arbitrary bytes as a frame or raw.
            (true, true) => [zstd::bulk::compress(&header, 3).unwrap(), zstd::bulk::compress(&bytes, 3).unwrap()].concat(),
            (true, false) => [zstd::bulk::compress(&header, 3).unwrap(), bytes].concat(),
        };
        std::fs::write(&path, content).unwrap();
        let _ = journal::read(&path);
        let _ = journal::finished(&path);
        if let Ok((_, mut player)) = xstack::replay::Player::open(&path) {
            let end = player.end();
            player.seek(end);
        }
    }

    #[test]
    fn journal_round_trip(texts in proptest::collection::vec("(?s).{0,60}", 1..20), times in proptest::collection::vec(0.0f64..1e5, 1..20)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(journal::JOURNAL_FILE);
        let mut writer = JournalWriter::create(&path, &Header::new("t", "a", "r", "s")).unwrap();
        let mut expected = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let t = (times[i % times.len()] * 1000.0).round() / 1000.0;
            let event = match i % 3 {
                0 => Event::AgentOutput { text: text.clone() },
                1 => Event::Note { text: text.clone() },
                _ => Event::Stage(At::Verify(1, Pass::First)),
            };
            writer.append(t, &event).unwrap();
            expected.push(Entry { t, event });
        }
        writer.append(0.0, &Event::Mode { mode: Mode::Step }).unwrap();
        expected.push(Entry { t: 0.0, event: Event::Mode { mode: Mode::Step } });
        drop(writer);
        let read = journal::read(&path).unwrap();
        prop_assert!(!read.torn);
        prop_assert_eq!(read.entries, expected);
    }

    #[test]
    fn metric_extraction_never_panics(text in "(?s).{0,300}", cut in 0usize..300) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tasks/jsonl-protected");
        let task = xstack::task::Task::load(&dir).unwrap();
        let mut stream = MetricStream::new(xstack::metrics::Extractor::for_task(&task));
        let cut = (0..=cut.min(text.len())).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        let _ = stream.feed(&text[..cut]);
        let _ = stream.feed(&text[cut..]);
        let _ = stream.finish();
    }

    #[test]
    fn line_splitting_does_not_depend_on_chunking(lines in proptest::collection::vec("[a-z0-9=. ]{0,30}", 0..10), cut in 0usize..400) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let cut = cut.min(text.len());
        let split = |chunks: &[&str]| {
            let mut s = LineSplitter::new();
            let mut out = Vec::new();
            for c in chunks {
                s.feed(c, &mut |l| out.push(l.to_string()));
            }
            s.finish(&mut |l| out.push(l.to_string()));
            out
        };
        prop_assert_eq!(split(&[&text]), split(&[&text[..cut], &text[cut..]]));
    }

    #[test]
    fn escape_cap_bounds_payloads_and_keeps_plain_text(prefix in "[a-z ]{0,20}", n in 0usize..200_000, suffix in "[a-z ]{0,20}") {
        let mut cap = EscapeCap::new();
        let mut out = String::new();
        cap.filter(&format!("{prefix}\x1b]0;"), &mut out);
        cap.filter(&"p".repeat(n), &mut out);
        cap.filter(&format!("\x07{suffix}"), &mut out);
        prop_assert!(out.starts_with(&prefix));
        let tail = format!("\x07{suffix}");
        prop_assert!(out.ends_with(&tail));
        prop_assert!(out.len() <= prefix.len() + 4 + MAX_STRING_PAYLOAD + 1 + suffix.len());
    }

    #[test]
    fn utf8_carry_matches_whole_decoding(bytes in proptest::collection::vec(any::<u8>(), 0..200), cut in 0usize..200) {
        let cut = cut.min(bytes.len());
        let mut carry = Utf8Carry::new();
        let mut out = carry.decode(&bytes[..cut]);
        out.push_str(&carry.decode(&bytes[cut..]));
        out.push_str(&carry.finish());
        let whole = String::from_utf8_lossy(&bytes).into_owned();
        // Splitting never invents text: valid input decodes identically.
        if std::str::from_utf8(&bytes).is_ok() {
            prop_assert_eq!(out, whole);
        } else {
            let replaced = out.contains(char::REPLACEMENT_CHARACTER);
            prop_assert!(replaced);
        }
    }

    #[test]
    fn every_key_encodes_without_panicking(c in any::<char>(), code in 0u8..20, mods in 0u8..8) {
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let code = match code {
            0 => KeyCode::Char(c),
            1 => KeyCode::Enter,
            2 => KeyCode::Up,
            3 => KeyCode::F(c as u8 % 24),
            4 => KeyCode::Delete,
            5 => KeyCode::Home,
            6 => KeyCode::PageUp,
            7 => KeyCode::Backspace,
            8 => KeyCode::Tab,
            9 => KeyCode::BackTab,
            _ => KeyCode::Esc,
        };
        let mods = KeyModifiers::from_bits_truncate(mods);
        if let Some(bytes) = xstack::ui::keys::key_bytes(&KeyEvent::new(code, mods), mods.contains(KeyModifiers::SHIFT)) {
            prop_assert!(!bytes.is_empty());
        }
    }
}

/// One thing recorded in the secrets property: which event carries the text, and the text as
/// fragments (filler, or the index of a secret).
type Said = (u8, Vec<Result<String, usize>>);

fn said() -> impl Strategy<Value = Said> {
    let fragment = prop_oneof![
        "(?s).{0,12}".prop_map(Ok::<String, usize>),
        (0usize..4).prop_map(Err::<String, usize>),
    ];
    (0u8..14, proptest::collection::vec(fragment, 0..6))
}

/// The events that carry `text`, as a child or an agent would produce them (terminal output
/// cut into pieces at `cuts`).
fn events_saying(kind: u8, text: String, cuts: &[usize]) -> Vec<Event> {
    use xstack::agent::transcript::TranscriptItem;
    use xstack::event::FileContent;
    let pieces = || {
        let mut bounds: Vec<usize> = cuts
            .iter()
            .filter_map(|c| (c % (text.len() + 1)..=text.len()).find(|i| text.is_char_boundary(*i)))
            .collect();
        bounds.extend([0, text.len()]);
        bounds.sort_unstable();
        bounds.dedup();
        bounds
            .windows(2)
            .map(|w| text[w[0]..w[1]].to_string())
            .collect::<Vec<_>>()
    };
    let item = |item| vec![Event::Transcript { phase: 1, item }];
    match kind {
        0 => pieces()
            .into_iter()
            .map(|text| Event::AgentOutput { text })
            .collect(),
        1 => pieces()
            .into_iter()
            .map(|text| Event::RunOutput { text })
            .collect(),
        2 => item(TranscriptItem::Message { text }),
        3 => item(TranscriptItem::ToolCall {
            tool: "Bash".into(),
            input: text,
        }),
        4 => item(TranscriptItem::Final {
            text,
            success: true,
        }),
        5 => item(TranscriptItem::FileEdit { path: text }),
        6 => item(TranscriptItem::Session { id: text }),
        7 => vec![Event::Note { text }],
        8 => vec![Event::Message {
            text,
            queued: false,
        }],
        9 => vec![Event::FileChanged {
            file: FileContent {
                path: text.clone(),
                size: text.len() as u64,
                text: Some(text),
            },
            deleted: false,
        }],
        10 => vec![
            Event::AgentExited { code: Some(0) },
            Event::AgentStarted {
                phase: 1,
                command: text,
                cols: 80,
                rows: 24,
            },
        ],
        11 => vec![Event::Prompt { phase: 1, text }],
        12 => vec![Event::Waiting { what: Some(text) }],
        _ => vec![Event::Finished {
            passed: false,
            passed_in_phase: None,
            exit_code: 3,
            error: Some(text),
            interrupted: None,
        }],
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_secret_reaches_anything_recorded(
        secrets in proptest::collection::vec("[A-Za-z0-9_-]{4,20}".prop_filter("a secret inside the marker cannot be told from it", |s| !xstack::secrets::REDACTED.contains(s.as_str())), 1..4),
        stream in proptest::collection::vec(said(), 1..24),
        cuts in proptest::collection::vec(0usize..200, 0..12),
    ) {
        use std::sync::{Arc, Mutex};
        use xstack::replay::cast::{self, CastPane};
        use xstack::secrets::Secrets;
        use xstack::session::progress::ProgressLines;
        use xstack::session::recorder::{self, Recorder};
        use xstack::session::result::RunResult;
        use xstack::session::state::SessionState;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(journal::JOURNAL_FILE);
        let writer = JournalWriter::create(&path, &Header::new("t", "a", "r", "s")).unwrap();
        let state = recorder::shared(SessionState::new());
        let (mut rec, _changed) = Recorder::new(writer, state.clone(), 0.0);
        rec.set_secrets(Secrets::from_vars(
            secrets.iter().enumerate().map(|(i, s)| (format!("S{i}_TOKEN"), s.clone())),
        ));
        let printed = Arc::new(Mutex::new(Vec::new()));
        let mut progress = ProgressLines::new();
        let sink = printed.clone();
        rec.set_observer(Box::new(move |t, event, _| {
            sink.lock().unwrap().extend(progress.lines(t, event));
        }));
        rec.emit(Event::AgentStarted { phase: 1, command: "agent".into(), cols: 80, rows: 24 });
        // As a journal line, so fields an event has beyond these take their defaults.
        rec.emit(serde_json::from_str(r#"{"type":"run_started","phase":1,"command":"run","cols":80,"rows":24}"#).unwrap());
        for (kind, fragments) in stream {
            let text: String = fragments
                .into_iter()
                .map(|f| f.unwrap_or_else(|i| secrets[i % secrets.len()].clone()))
                .collect();
            for event in events_saying(kind, text, &cuts) {
                rec.emit(event);
            }
        }
        rec.emit(Event::AgentExited { code: Some(0) });
        rec.emit(Event::RunExited { code: Some(0), timed_out: false, duration_s: 1.0 });
        rec.flush();
        drop(rec);

        let read = journal::read(&path).unwrap();
        let state = recorder::lock(&state).clone();
        let mut recorded = vec![
            String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned(),
            String::from_utf8(zstd::stream::decode_all(&std::fs::read(&path).unwrap()[..]).unwrap()).unwrap(),
            format!("{:?}", read.entries),
            printed.lock().unwrap().join("\n"),
            serde_json::to_string(&RunResult::from_state(&state, "r", "s")).unwrap(),
            state.agent_screen.contents(),
            state.run_screen.contents(),
        ];
        for pane in [CastPane::Agent, CastPane::Run] {
            let mut cast = Vec::new();
            cast::export(&read, pane, &mut cast).unwrap();
            recorded.push(String::from_utf8(cast).unwrap());
        }
        for (i, text) in recorded.iter().enumerate() {
            for secret in &secrets {
                prop_assert!(!text.contains(secret.as_str()), "record {} holds {:?}", i, secret);
            }
        }
    }
}
