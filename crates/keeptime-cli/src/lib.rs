//! The `keeptime` command's parts, one module per noun (hyperfine's layout):
//!
//! * [`cli`]: the command line's top, the six subcommands.
//! * The commands, each with its options and its `run`:
//!   [`bench`](mod@bench) (the methods, the plan, the runner, the crowd, the
//!   statistics, the result document), [`clocks`], [`sleep`],
//!   [`latency`] (periodic wake-up latency, cyclictest's way),
//!   [`report`](mod@report) (the HTML page of bench results) and [`trace`].
//! * [`parse`]: the value parsers the commands share.
//! * [`duration`]: durations as people type them (`2.5ms`, `250µs`).
//! * [`export`]: one file per export format behind one trait.
//! * [`output`]: units, tables, verdicts, progress bar.
//! * [`sched`]: `--pin` and `--priority`.
//!
//! The binary (`src/main.rs`) parses the command line and runs the command;
//! the parts live in a library so the duration parser can be fuzzed and
//! everything unit-tested.

pub mod bench;
pub mod cli;
pub mod clocks;
pub mod duration;
pub mod export;
pub mod latency;
pub mod output;
pub mod parse;
pub mod report;
pub mod sched;
pub mod sleep;
pub mod trace;

use std::fmt;

/// An error in what the user asked for: printed as one line, exit status 2
/// (like clap's own usage errors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

impl From<sched::SchedError> for UsageError {
    fn from(e: sched::SchedError) -> Self {
        UsageError(e.to_string())
    }
}
