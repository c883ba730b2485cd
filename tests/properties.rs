//! Property tests: arbitrary input never panics the parsers, readers, extractors, the escape
//! cap or the key encoder, and round trips hold.

use proptest::prelude::*;

use xstack::journal::{self, Entry, Header, JournalWriter};
use xstack::metrics::{LineSplitter, MetricStream};
use xstack::pty::filter::{EscapeCap, MAX_STRING_PAYLOAD};
use xstack::pty::utf8::Utf8Carry;
use xstack::session::event::{Event, Mode, Stage};

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
    fn journals_of_arbitrary_bytes_never_panic_the_reader(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let mut content = br#"{"format":"xstack-journal","version":1,"task":"t","agent":"a","xstack_version":"0","run_id":"r","started_at":"s"}"#.to_vec();
        content.push(b'\n');
        content.extend(bytes);
        std::fs::write(&path, content).unwrap();
        let _ = journal::read(&path);
    }

    #[test]
    fn journal_round_trip(texts in proptest::collection::vec("(?s).{0,60}", 1..20), times in proptest::collection::vec(0.0f64..1e5, 1..20)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let mut writer = JournalWriter::create(&path, &Header::new("t", "a", "r", "s")).unwrap();
        let mut expected = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let t = (times[i % times.len()] * 1000.0).round() / 1000.0;
            let event = match i % 3 {
                0 => Event::AgentOutput { text: text.clone() },
                1 => Event::Note { text: text.clone() },
                _ => Event::Stage { phase: 1, stage: Stage::Verify },
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
