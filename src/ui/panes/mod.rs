//! The five panes, a file each: each draws from the frame's [`super::scene::Scene`] and the
//! view state, and changes neither.

pub mod diff;
pub mod metrics;
pub mod terminal;
pub mod transcript;
pub mod verdict;

pub use metrics::metrics;
pub use terminal::terminal;
pub use transcript::{transcript, transcript_lines};
pub use verdict::{verdict, verdict_lines};

/// A number as the panes show it: four decimals at most, trailing zeros cut, scientific
/// for the very large and the very small.
pub(crate) fn fmt_num(v: f64) -> String {
    if v.abs() >= 1000.0 || (v != 0.0 && v.abs() < 0.001) {
        format!("{v:.2e}")
    } else {
        format!("{v:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}
