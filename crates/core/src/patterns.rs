//! Regular expressions written into the source. Each is compiled once, where it is used (in a
//! `LazyLock`); one that does not compile is a bug in xstack that the unit tests of its module
//! find, never a user's input error, so this is the one place a failed compile may panic.

use regex::Regex;

/// `pattern`, a constant of the source, compiled.
#[expect(
    clippy::expect_used,
    reason = "the patterns are constants of the source, compiled by their modules' tests"
)]
pub fn constant(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a constant pattern of the source compiles")
}
