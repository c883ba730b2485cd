//! Benchmarks of the hot paths: frame rendering, terminal ingest (also with a full
//! scrollback, as in a long run), a replay snapshot's
//! terminal stored and restored, metric extraction, the reducer, journal append, replay
//! seek, and diff + highlight of a 6,000-line pair.
//! `cargo bench --bench pipeline`
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use xstack::event::{At, Event, FileContent, MetricPoint, Pass};
use xstack::journal::{Entry, Header, JOURNAL_FILE, Journal, JournalWriter};
use xstack::metrics::{Extractor, MetricStream};
use xstack::pty::screen::Screen;
use xstack::replay::Player;
use xstack::session::state::SessionState;
use xstack::ui::app::App;
use xstack::ui::draw;
use xstack::ui::panes::diff::DiffPane;
use xstack::ui::theme::Theme;

fn progress_lines(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "\x1b[32m{:>3}%\x1b[0m|\x1b[36m{}\x1b[0m| step {i} loss=0.{i:04} acc=0.{:04}\r\n",
                i % 100,
                "█".repeat(i % 30),
                (i * 7) % 10000
            )
        })
        .collect()
}

fn logs() -> Vec<(&'static str, String)> {
    let plain: String = (0..20_000)
        .map(|i| format!("epoch {i} train_loss=0.1234 test_acc=0.9567\n"))
        .collect();
    let coloured = progress_lines(20_000);
    let cr: String = (0..20_000)
        .map(|i| {
            format!(
                "\r{:>3}%|{}| {i}/20000 [00:01<00:00, 9000it/s]",
                i % 100,
                "#".repeat(i % 40)
            )
        })
        .collect();
    let sgr: String = (0..20_000)
        .map(|i| {
            (0..20)
                .map(|j| {
                    format!(
                        "\x1b[38;5;{}m\x1b[48;5;{}m{}",
                        (i + j) % 256,
                        (i * j) % 256,
                        j % 10
                    )
                })
                .collect::<String>()
                + "\x1b[0m\n"
        })
        .collect();
    vec![
        ("plain", plain),
        ("coloured", coloured),
        ("cr_progress", cr),
        ("dense_sgr", sgr),
    ]
}

fn ingest(c: &mut Criterion) {
    let mut group = c.benchmark_group("screen_ingest");
    for (name, log) in logs() {
        group.throughput(Throughput::Bytes(log.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), &log, |b, log| {
            b.iter(|| {
                let mut screen = Screen::new(120, 40);
                for chunk in log.as_bytes().chunks(64 * 1024) {
                    screen.process(std::str::from_utf8(chunk).unwrap_or(""));
                }
                black_box(screen.screen().cursor_position())
            })
        });
    }
    group.finish();
}

/// The lines of `scripts/perf`'s generator (the million-line flood), `n` of them from `from`.
fn flood_lines(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| {
            format!(
                "\x1b[32m{:3}%\x1b[0m|\x1b[36m{:<30}\x1b[0m| step {i} loss={:.4} acc={:.4}\r\n",
                i / 10_000,
                "#".repeat(i % 30),
                1.0 / (i + 1) as f64,
                (i % 1000) as f64 / 1000.0
            )
        })
        .collect()
}

/// `log` in the PTY reader's pieces: 4 KiB, cut at character boundaries.
fn in_pieces(log: &str) -> impl Iterator<Item = &str> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= log.len() {
            return None;
        }
        let mut end = (at + 4096).min(log.len());
        while !log.is_char_boundary(end) {
            end += 1;
        }
        let piece = &log[at..end];
        at = end;
        Some(piece)
    })
}

/// Terminal ingest in the steady state of a long run: the flood's lines into the Run log's
/// screen (120×36) whose 10,000-line scrollback is already full, so every line scrolls one
/// out, in the PTY reader's chunks.
fn ingest_full_scrollback(c: &mut Criterion) {
    let mut screen = Screen::new(120, 36);
    screen.process(&flood_lines(0, 20_000));
    let log = flood_lines(20_000, 20_000);
    let mut group = c.benchmark_group("screen_ingest_full_scrollback");
    group.throughput(Throughput::Bytes(log.len() as u64));
    group.bench_function("flood_lines", |b| {
        b.iter(|| {
            for piece in in_pieces(&log) {
                screen.process(piece);
            }
            black_box(screen.screen().cursor_position())
        })
    });
    // The same with the screen holding back plain log text, as a headless session's do, and
    // read once at the end of each batch.
    let mut held = Screen::new(120, 36);
    held.hold_back_scrolled_out_lines();
    held.process(&flood_lines(0, 20_000));
    group.bench_function("flood_lines_held_back", |b| {
        b.iter(|| {
            for piece in in_pieces(&log) {
                held.process(piece);
            }
            black_box(held.screen().cursor_position())
        })
    });
    // Held back as the TUI's are, its live end read as a frame reads it, every 16 pieces
    // (about 600 lines, what arrives between two frames at the flood's pace).
    let mut live = Screen::new(120, 36);
    live.hold_back_scrolled_out_lines();
    live.process(&flood_lines(0, 20_000));
    group.bench_function("flood_lines_held_back_live_end_read", |b| {
        b.iter(|| {
            for (pieces, piece) in in_pieces(&log).enumerate() {
                live.process(piece);
                if (pieces + 1) % 16 == 0 {
                    black_box(live.read_scrolled(0, |screen| screen.cursor_position()));
                }
            }
            black_box(live.read_scrolled(0, |screen| screen.cursor_position()))
        })
    });
    group.finish();
}

/// A replay snapshot's terminal: a 120×40 screen whose 10,000-line scrollback is full of
/// progress lines, stored compactly and restored.
fn screen_snapshot(c: &mut Criterion) {
    let mut screen = Screen::new(120, 40);
    screen.process(&progress_lines(10_040));
    let stored = screen.store();
    let mut group = c.benchmark_group("screen_snapshot_full_scrollback");
    // A copy each time: storing an emulator that did not change reuses its encoding.
    group.bench_function("store", |b| {
        b.iter_batched(
            || screen.clone(),
            |copy| black_box(copy.store()),
            BatchSize::LargeInput,
        )
    });
    // What a replay's index pass stores of a flood: the held text, cut to what the screen
    // can show, beside an emulator that was never fed.
    group.bench_function("store_holding_back", |b| {
        b.iter_batched(
            || {
                let mut holding = Screen::new(120, 40);
                holding.hold_back_scrolled_out_lines();
                holding.process(&flood_lines(0, 30_000));
                holding
            },
            |holding| black_box(holding.store()),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("restore", |b| {
        b.iter(|| black_box(stored.restore().map(|s| s.screen().cursor_position())))
    });
    // A resize re-wraps every line of the scrollback (to 80 columns and back to 120).
    group.bench_function("resize_reflow", |b| {
        b.iter(|| {
            screen.resize(80, 40);
            screen.resize(120, 40);
            black_box(screen.screen().cursor_position())
        })
    });
    group.finish();
}

fn task() -> xstack::task::Task {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks/digits-mlp");
    xstack::task::Task::load(&dir).expect("digits-mlp loads")
}

fn extraction(c: &mut Criterion) {
    let task = task();
    let log: String = (0..50_000)
        .map(|i| format!("epoch {i}/30 train_loss=0.1234 test_acc=0.9567\n"))
        .collect();
    let mut group = c.benchmark_group("metric_extraction");
    group.throughput(Throughput::Elements(50_000));
    group.bench_function("regex_lines", |b| {
        b.iter(|| {
            let mut stream = MetricStream::new(Extractor::for_task(&task));
            black_box(stream.feed(&log).len())
        })
    });
    // The flood's coloured lines and its task's regex, which is matched by hand
    // (`metrics/shape.rs`); then the same groups through a regex of another shape (an
    // optional `x` at its end), which the regex engine matches.
    let flood = flood_lines(0, 50_000);
    for (name, regex) in [
        (
            "flood_lines",
            r"step (?P<step>\d+) .*acc=(?P<value>[0-9.]+)",
        ),
        (
            "flood_lines_regex_engine",
            r"step (?P<step>\d+) .*acc=(?P<value>[0-9.]+)(?:x|)",
        ),
    ] {
        let spec = xstack::task::MetricSpec {
            name: "acc".into(),
            regex: Some(regex.into()),
            json_key: None,
            step_key: None,
        };
        let extractor = Extractor::from_specs(&[spec]).expect("the regex compiles");
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut stream = MetricStream::new(extractor.clone());
                black_box(stream.feed(&flood).len())
            })
        });
    }
    group.finish();
}

fn events(n: usize) -> Vec<Entry> {
    let mut entries = vec![
        Entry {
            t: 0.0,
            event: Event::Stage(At::Verify(1, Pass::First)),
        },
        Entry {
            t: 0.0,
            event: Event::RunStarted {
                phase: 1,
                command: "python train.py".into(),
                cols: 120,
                rows: 40,
                seed_check: false,
            },
        },
    ];
    for i in 0..n {
        let t = i as f64 * 0.01;
        entries.push(Entry {
            t,
            event: Event::RunOutput {
                text: format!("epoch {i} train_loss=0.1234 test_acc=0.95\r\n"),
            },
        });
        entries.push(Entry {
            t,
            event: Event::Metrics {
                phase: 1,
                points: vec![MetricPoint(0, Some(i as f64), 0.95)],
            },
        });
    }
    entries
}

fn reducer(c: &mut Criterion) {
    let entries = events(20_000);
    let mut group = c.benchmark_group("reducer");
    group.throughput(Throughput::Elements(entries.len() as u64));
    group.bench_function("apply", |b| {
        b.iter(|| {
            let mut state = SessionState::new();
            for e in &entries {
                state.apply(e.t, &e.event);
            }
            black_box(state.version)
        })
    });
    group.finish();
}

fn journal(c: &mut Criterion) {
    let entries = events(20_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut group = c.benchmark_group("journal");
    group.throughput(Throughput::Elements(entries.len() as u64));
    group.bench_function("append", |b| {
        b.iter(|| {
            let path = dir.path().join(JOURNAL_FILE);
            let mut writer =
                JournalWriter::create(&path, &Header::new("t", "a", "r", "s")).expect("journal");
            for e in &entries {
                writer.append(e.t, &e.event).expect("append");
            }
            writer.flush().expect("flush");
        })
    });
    group.finish();

    // A one-hour session: 360,000 output events (100 a second) with metrics.
    let hour = Journal {
        header: Header::new("t", "a", "r", "s"),
        entries: events(180_000)
            .into_iter()
            .map(|mut e| {
                e.t *= 2.0;
                e
            })
            .collect(),
        torn: false,
        bad_lines: Vec::new(),
    };
    let end = hour.entries.last().map_or(0.0, |e| e.t);
    // The same hour as `xstack replay` reads it: written as zstd frames, read back by place.
    let path = dir.path().join("hour").join(JOURNAL_FILE);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder");
    let mut writer = JournalWriter::create(&path, &hour.header).expect("journal");
    for e in &hour.entries {
        writer.append(e.t, &e.event).expect("append");
    }
    drop(writer);
    let (_, mut from_file) = Player::open(&path).expect("player");
    let mut player = Player::new(hour);
    let mut group = c.benchmark_group("replay_seek_one_hour");
    let mut k = 0u64;
    let mut target = move || {
        k = k
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (k >> 11) as f64 / (1u64 << 53) as f64 * end
    };
    group.bench_function("seek_anywhere", |b| {
        b.iter(|| {
            player.seek(target());
            black_box(player.state().version)
        })
    });
    group.bench_function("seek_anywhere_from_the_file", |b| {
        b.iter(|| {
            from_file.seek(target());
            black_box(from_file.state().version)
        })
    });
    group.finish();
}

fn filled_state() -> SessionState {
    let mut state = SessionState::new();
    let py_old: String = (0..300)
        .map(|i| format!("x{i} = torch.tensor([{i}])  # line {i}\n"))
        .collect();
    let py_new: String = (0..300)
        .map(|i| {
            if i % 7 == 0 {
                format!("x{i} = jnp.array([{i}])  # line {i}\n")
            } else {
                format!("x{i} = torch.tensor([{i}])  # line {i}\n")
            }
        })
        .collect();
    state.apply(
        0.0,
        &Event::Baseline {
            files: vec![FileContent {
                path: "model.py".into(),
                text: Some(py_old),
                size: 1,
            }],
        },
    );
    state.apply(
        0.1,
        &Event::FileChanged {
            file: FileContent {
                path: "model.py".into(),
                text: Some(py_new),
                size: 1,
            },
            deleted: false,
        },
    );
    state.apply(
        0.2,
        &Event::AgentStarted {
            phase: 1,
            command: "a".into(),
            cols: 200,
            rows: 50,
        },
    );
    state.apply(
        0.3,
        &Event::AgentOutput {
            text: progress_lines(200),
        },
    );
    state.apply(
        0.4,
        &Event::RunStarted {
            phase: 1,
            command: "r".into(),
            cols: 200,
            rows: 50,
            seed_check: false,
        },
    );
    state.apply(
        0.5,
        &Event::RunOutput {
            text: progress_lines(200),
        },
    );
    for e in events(30).into_iter().skip(2) {
        state.apply(e.t, &e.event);
    }
    state
}

fn frames(c: &mut Criterion) {
    let theme = Theme::dark();
    let mut group = c.benchmark_group("full_frame");
    for (w, h) in [(80u16, 24u16), (200, 50), (400, 100)] {
        let state = filled_state();
        let mut app = App::new(true);
        let (mut diff, mut built) = DiffPane::new(theme.syntax_theme.clone());
        diff.update(diff.read(&state, &app), &mut app);
        while let Ok(b) = built.try_recv() {
            diff.accept(b);
        }
        let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        group.bench_function(BenchmarkId::from_parameter(format!("{w}x{h}")), |b| {
            b.iter(|| {
                terminal
                    .draw(|f| {
                        draw::draw(f, &state, &app, &diff, &theme);
                    })
                    .expect("draw");
            })
        });
    }
    group.finish();
}

fn diff_pair(c: &mut Criterion) {
    use xstack::diff::{
        CompareOptions, DEFAULT_THEME, DiffOptions, HighlightRequest, HighlightScope, Highlighter,
        Snapshot, build_views, compare_snapshots, render_text,
    };
    let old: String = (0..6000)
        .map(|i| format!("    value_{i} = torch.relu(layer_{i}(inputs))  # step {i}\n"))
        .collect();
    let new: String = (0..6000)
        .map(|i| {
            if i % 50 == 0 {
                format!("    value_{i} = jax.nn.relu(layer_{i}(inputs))  # step {i}\n")
            } else {
                format!("    value_{i} = torch.relu(layer_{i}(inputs))  # step {i}\n")
            }
        })
        .collect();
    let mut a = Snapshot::new();
    a.insert("model.py".into(), old.into_bytes());
    let mut b = Snapshot::new();
    b.insert("model.py".into(), new.into_bytes());
    let entries = compare_snapshots(&a, &b, &CompareOptions::default());
    c.bench_function("diff_highlight_6000_lines", |bench| {
        bench.iter(|| {
            let highlighter = Highlighter::default();
            let request = HighlightRequest {
                highlighter: &highlighter,
                theme: DEFAULT_THEME,
                scope: HighlightScope::ShownLines,
            };
            let views = build_views(&entries, &a, &b, &DiffOptions::default(), Some(&request))
                .expect("views");
            black_box(render_text(&views, 200, true).len())
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(3));
    targets = frames, ingest, ingest_full_scrollback, screen_snapshot, extraction, reducer, journal, diff_pair
}
criterion_main!(benches);
