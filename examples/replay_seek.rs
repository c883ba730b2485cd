//! Times 30 seeks to pseudo-random points of a run folder's journal, read back from the file
//! as `xstack replay` reads it: how long the player took to open (the pass that takes the
//! snapshots), how many snapshots it kept, and the median, fastest and slowest seek, each
//! with the read of the Run log's live end that the frame after it makes.
//! `cargo run --release --example replay_seek -- RUN_DIR` (docs/PERFORMANCE.md)
// A measuring tool: it stops on what it cannot go on without, as the benchmarks do.
#![allow(clippy::unwrap_used, clippy::expect_used)]
fn main() {
    let dir = std::env::args().nth(1).expect("run folder");
    let t = std::time::Instant::now();
    let (_, mut player) =
        xstack::replay::Player::open(&xstack::journal::path_in(std::path::Path::new(&dir)))
            .unwrap();
    println!(
        "open {:.2} s, {} snapshots",
        t.elapsed().as_secs_f64(),
        player.snapshot_count()
    );
    let end = player.end();
    let mut k = 1u64;
    let mut times = Vec::new();
    for _ in 0..30 {
        k = k
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let target = (k >> 11) as f64 / (1u64 << 53) as f64 * end;
        let t = std::time::Instant::now();
        player.seek(target);
        // What the frame after the seek reads: the Run log's live end.
        let state = player.state();
        std::hint::black_box(
            state
                .run_screen
                .read_scrolled(0, |screen| screen.contents()),
        );
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "seeks (ms): median {:.1}, min {:.1}, max {:.1}",
        sorted[15], sorted[0], sorted[29]
    );
}
