use super::*;
use crate::journal::Header;
use crate::session::event::{FileContent, Stage};

fn fingerprint(s: &SessionState) -> String {
    format!(
        "{:?}|{:?}|{:?}|{:?}|{}|{}|{}|{:?}|{}",
        s.phase,
        s.stage,
        s.phases,
        s.files,
        s.agent_screen.contents(),
        s.run_screen.contents(),
        s.timeline.len(),
        s.waiting,
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
    push(
        Event::Stage {
            phase: 0,
            stage: Stage::Setup,
        },
        &mut t,
    );
    push(
        Event::Stage {
            phase: 1,
            stage: Stage::Migrate,
        },
        &mut t,
    );
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
    push(
        Event::Stage {
            phase: 1,
            stage: Stage::Verify,
        },
        &mut t,
    );
    push(
        Event::RunStarted {
            phase: 1,
            command: "r".into(),
            cols: 80,
            rows: 24,
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

#[test]
fn snapshots_stay_within_their_memory_budget_and_seeks_stay_exact() {
    let j = journal(45_000);
    let unbounded = Player::new(j.clone());
    // Room for one and a half states with a full agent scrollback (10,000 rows of 80 cells).
    let budget = 3 * 10_048 * 80 * 32 / 2;
    let mut player = Player::with_snapshot_budget(j.clone(), budget);
    assert!(player.snapshot_count() < unbounded.snapshot_count());
    assert!(
        player.snapshot_count() >= 2,
        "snapshots: {}",
        player.snapshot_count()
    );
    let held: usize = player
        .snapshots
        .iter_mut()
        .map(|(_, s)| s.held_bytes())
        .sum();
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
    assert_eq!(player.state().stage, Stage::Verify);
    player.jump(false);
    assert_eq!(player.state().stage, Stage::Migrate);
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
    let path = dir.path().join("journal.jsonl");
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
