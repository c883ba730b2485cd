use super::*;
use crate::event::{At, FileContent, Pass};
use crate::journal::Header;

fn fingerprint(s: &SessionState) -> String {
    format!(
        "{:?}|{:?}|{:?}|{}|{}|{:?}|{:?}|{:?}|{}",
        s.at,
        s.phases,
        s.files,
        String::from_utf8_lossy(&s.agent_screen.screen().contents_formatted()),
        String::from_utf8_lossy(&s.run_screen.screen().contents_formatted()),
        s.agent_screen.screen().cursor_position(),
        s.run_screen.screen().cursor_position(),
        s.waiting(),
        s.now
    )
}

fn journal(events: usize) -> Journal {
    let mut entries = Vec::new();
    let mut t = 0.0;
    let mut push = |event: Event, t: &mut f64| {
        *t += 0.01;
        entries.push(Entry { t: *t, event });
    };
    push(Event::Stage(At::Setup), &mut t);
    push(Event::Stage(At::Migrate(1)), &mut t);
    push(
        Event::AgentStarted {
            phase: 1,
            command: "a".into(),
            cols: 80,
            rows: 24,
        },
        &mut t,
    );
    for i in 0..events {
        push(
            Event::AgentOutput {
                text: format!("line {i} \x1b[32mgreen\x1b[0m\r\n"),
            },
            &mut t,
        );
        if i % 5000 == 0 {
            push(
                Event::FileChanged {
                    file: FileContent {
                        path: format!("f{i}.py"),
                        text: Some(format!("{i}")),
                        size: 1,
                    },
                    deleted: false,
                },
                &mut t,
            );
        }
    }
    push(Event::Stage(At::Verify(1, Pass::First)), &mut t);
    push(
        Event::RunStarted {
            phase: 1,
            command: "r".into(),
            cols: 80,
            rows: 24,
            seed_check: false,
        },
        &mut t,
    );
    for i in 0..100 {
        push(
            Event::RunOutput {
                text: format!("epoch {i}\r\n"),
            },
            &mut t,
        );
    }
    Journal {
        header: Header::new("t", "a", "r", "s"),
        entries,
        torn: false,
        bad_lines: Vec::new(),
    }
}

#[test]
fn seeking_anywhere_equals_playing_up_to_there() {
    let j = journal(45_000);
    let mut player = Player::new(j.clone());
    assert!(
        player.snapshot_count() >= 3,
        "snapshots: {}",
        player.snapshot_count()
    );
    let end = player.end();
    assert_seeks_equal_playing(
        &mut player,
        &j,
        &[250.0, 10.0, 449.5, 0.05, 120.33, end, 300.0],
    );
}

/// Seeks to each target in turn and checks the state equals the journal applied up to it.
fn assert_seeks_equal_playing(player: &mut Player, j: &Journal, targets: &[f64]) {
    for &target in targets {
        player.seek(target);
        let mut fresh = SessionState::new();
        for e in j.entries.iter().take_while(|e| e.t <= target) {
            fresh.apply(e.t, &e.event);
        }
        assert_eq!(
            fingerprint(player.state()),
            fingerprint(&fresh),
            "at {target}"
        );
    }
}

/// The bytes a player's snapshots hold together, as the budget counts them.
fn held_bytes(snapshots: &[(usize, StoredState)]) -> usize {
    sizes(snapshots).iter().sum()
}

#[test]
fn snapshots_stay_within_their_memory_budget_and_seeks_stay_exact() {
    let j = journal(45_000);
    let spacing = Spacing {
        text_bytes: usize::MAX,
        events: 2_000,
    };
    let unbounded = Player::with_snapshots(j.clone(), usize::MAX, spacing);
    // Room for a third of what the unbounded player keeps.
    let all = held_bytes(&unbounded.snapshots);
    let budget = all / 3;
    let mut player = Player::with_snapshots(j.clone(), budget, spacing);
    assert!(player.snapshot_count() < unbounded.snapshot_count());
    assert!(
        player.snapshot_count() >= 2,
        "snapshots: {}",
        player.snapshot_count()
    );
    let held = held_bytes(&player.snapshots);
    assert!(held <= budget, "{held} bytes held");
    let end = player.end();
    assert_seeks_equal_playing(&mut player, &j, &[449.5, 10.0, 250.0, 0.05, end, 120.33]);
}

#[test]
fn playback_advances_with_speed_and_stops_at_the_end() {
    let mut player = Player::new(journal(100));
    player.speed = 2.0;
    assert!(player.advance(0.5));
    assert!((player.position() - 1.0).abs() < 1e-9);
    assert!(player.state().agent_screen.contents().contains("line 9"));
    player.playing = false;
    assert!(!player.advance(10.0));
    player.playing = true;
    player.advance(1000.0);
    assert!(player.at_end());
    assert!(!player.playing);
}

#[test]
fn jumps_go_to_stage_changes() {
    let mut player = Player::new(journal(100));
    player.seek(0.5);
    player.jump(true);
    assert_eq!(player.state().at, At::Verify(1, Pass::First));
    player.jump(false);
    assert_eq!(player.state().at, At::Migrate(1));
    player.change_speed(true);
    assert_eq!(player.speed, 2.0);
    for _ in 0..20 {
        player.change_speed(true);
    }
    assert_eq!(player.speed, 64.0);
}

#[test]
fn a_player_reading_the_file_back_equals_one_holding_the_journal() {
    let j = journal(45_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(crate::journal::JOURNAL_FILE);
    let mut writer = crate::journal::JournalWriter::create(&path, &j.header).unwrap();
    for e in &j.entries {
        writer.append(e.t, &e.event).unwrap();
    }
    writer.flush().unwrap();
    // The writer rounds times to milliseconds: compare against the journal as written.
    let written = crate::journal::read(&path).unwrap();
    let in_memory = Player::new(written.clone());
    let (header, mut from_file) = Player::open(&path).unwrap();
    assert_eq!(header, j.header);
    assert_eq!(from_file.markers(), in_memory.markers());
    assert_eq!(from_file.end(), in_memory.end());
    assert_eq!(from_file.snapshot_count(), in_memory.snapshot_count());
    let end = from_file.end();
    assert_seeks_equal_playing(
        &mut from_file,
        &written,
        &[300.0, 12.5, end, 0.5, 449.0, 200.0],
    );
    // Playing on from a seek reads the following events in order.
    from_file.seek(100.0);
    from_file.playing = true;
    from_file.advance(1_000.0);
    assert!(from_file.at_end());
    let mut fresh = SessionState::new();
    for e in &written.entries {
        fresh.apply(e.t, &e.event);
    }
    assert_eq!(fingerprint(from_file.state()), fingerprint(&fresh));
}

/// Pieces of terminal output that escape sequences are made of, cut anywhere when recorded.
const PIECES: [&str; 14] = [
    "text ",
    "é✓ ",
    "\r\n",
    "\x1b[31m",
    "\x1b[0m",
    "\x1b[1;4m",
    "\x1b[38;5;200m",
    "\x1b[2J\x1b[H",
    "\x1b[5;10H",
    "\x1b]0;a title\x07",
    "\x1b]2;other\x1b\\",
    "\x1b(0q\x1b(B",
    "\x1bP1$r q\x1b\\",
    "\x1b[?25l",
];

/// A journal of the agent's output `text` cut into events at `cuts` (byte offsets, moved to
/// character boundaries), so escape sequences are split across events.
fn cut_journal(text: &str, cuts: &[usize]) -> Journal {
    let mut bounds: Vec<usize> = cuts
        .iter()
        .map(|&c| {
            (c % (text.len() + 1)..=text.len())
                .find(|i| text.is_char_boundary(*i))
                .unwrap_or(text.len())
        })
        .collect();
    bounds.extend([0, text.len()]);
    bounds.sort_unstable();
    bounds.dedup();
    let mut entries = vec![Entry {
        t: 0.0,
        event: Event::AgentStarted {
            phase: 1,
            command: "a".into(),
            cols: 30,
            rows: 8,
        },
    }];
    for (i, pair) in bounds.windows(2).enumerate() {
        entries.push(Entry {
            t: (i + 1) as f64,
            event: Event::AgentOutput {
                text: text[pair[0]..pair[1]].to_string(),
            },
        });
    }
    Journal {
        header: Header::new("t", "a", "r", "s"),
        entries,
        torn: false,
        bad_lines: Vec::new(),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    #[test]
    fn seeking_equals_playing_with_snapshots_inside_escape_sequences(
        pieces in proptest::collection::vec(0..PIECES.len(), 1..80),
        cuts in proptest::collection::vec(0usize..10_000, 0..60),
        every in 1usize..4,
        targets in proptest::collection::vec(0.0f64..70.0, 1..6),
    ) {
        let text: String = pieces.iter().map(|&p| PIECES[p]).collect();
        let j = cut_journal(&text, &cuts);
        let spacing = Spacing { text_bytes: usize::MAX, events: every };
        let mut player = Player::with_snapshots(j.clone(), SNAPSHOT_BUDGET_BYTES, spacing);
        for target in targets {
            player.seek(target);
            let mut fresh = SessionState::new();
            for e in j.entries.iter().take_while(|e| e.t <= target) {
                fresh.apply(e.t, &e.event);
            }
            proptest::prop_assert_eq!(fingerprint(player.state()), fingerprint(&fresh), "at {}", target);
        }
    }
}

#[test]
fn snapshots_wait_for_the_terminals_to_be_between_escape_sequences() {
    // Every event ends inside a colour sequence but the last.
    let mut text = String::new();
    for i in 0..50 {
        text.push_str(&format!("line {i} \x1b[3"));
        text.push_str("2mgreen\x1b[0m\r\n");
    }
    let cuts: Vec<usize> = text.match_indices("2mgreen").map(|(i, _)| i).collect();
    let j = cut_journal(&text, &cuts);
    let spacing = Spacing {
        text_bytes: usize::MAX,
        events: 1,
    };
    let player = Player::with_snapshots(j, SNAPSHOT_BUDGET_BYTES, spacing);
    // The empty state, the agent's new terminal, and the end, where the last piece closes
    // its sequence.
    assert_eq!(player.snapshot_count(), 3);
}

#[test]
fn a_plain_journal_of_an_earlier_version_plays_back_from_the_file_too() {
    let j = journal(45_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(crate::journal::PLAIN_JOURNAL_FILE);
    let mut text = serde_json::to_string(&j.header).unwrap() + "\n";
    for e in &j.entries {
        text.push_str(&serde_json::to_string(e).unwrap());
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    let written = crate::journal::read(&path).unwrap();
    assert_eq!(written.entries.len(), j.entries.len());
    let (header, mut from_file) = Player::open(&path).unwrap();
    assert_eq!(header, j.header);
    let end = from_file.end();
    assert_seeks_equal_playing(&mut from_file, &written, &[300.0, 12.5, end, 0.5, 449.0]);
}

#[test]
fn a_quiet_stretch_plays_for_two_seconds_then_skips_to_the_next_event() {
    let mut player = Player::new(player_journal_of(&[(1.0, "before"), (100.0, "after")]));
    assert!(player.advance(1.0));
    assert_eq!(player.position(), 1.0);
    // The first two quiet seconds play as they were.
    assert!(!player.advance(1.5));
    assert_eq!(player.position(), 2.5);
    // Past them, the replay skips to half a second before the next event.
    assert!(!player.advance(1.0));
    assert_eq!(player.position(), 100.0 - IDLE_LEAD_S);
    assert!(player.advance(IDLE_LEAD_S));
    assert_eq!(player.state().activity.as_ref().unwrap().text, "after");
    assert!(player.at_end());
    // At a higher speed the quiet seconds played are counted in wall time too.
    let mut fast = Player::new(player_journal_of(&[(0.0, "a"), (300.0, "b")]));
    fast.speed = 8.0;
    fast.advance(1.0);
    assert_eq!(fast.position(), 8.0);
    fast.advance(1.5);
    assert_eq!(fast.position(), 300.0 - IDLE_LEAD_S * 8.0);
}

fn player_journal_of(notes: &[(f64, &str)]) -> Journal {
    Journal {
        header: Header::new("t", "a", "r", "s"),
        entries: notes
            .iter()
            .map(|(t, text)| Entry {
                t: *t,
                event: Event::Note {
                    text: (*text).into(),
                },
            })
            .collect(),
        torn: false,
        bad_lines: Vec::new(),
    }
}
