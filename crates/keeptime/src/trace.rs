//! Wake-up traces: how late this machine's absolute OS waits wake, and what
//! each costs the waiting thread; recorded, loaded, summarised, replayed, and
//! held against the *oracle*, the cheapest plan a trace allows.
//!
//! # Format
//!
//! CSV, optionally gzip-compressed, one row per OS wait, with a header naming
//! exactly these four columns (in any order):
//!
//! | column | meaning |
//! |---|---|
//! | `round` | which pass over all lengths (each pass shuffles the order); integer ≥ 0 |
//! | `os_wait_ns` | the requested length L: `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` until issue time + L; integer ≥ 1 |
//! | `overshoot_ns` | first `CLOCK_MONOTONIC` reading after the wait − the target; any integer (as recorded) |
//! | `thread_cpu_ns` | `CLOCK_THREAD_CPUTIME_ID` after − before the wait; integer ≥ 0 |
//!
//! A missing, repeated or unknown column is an error (a file with more columns
//! is some other format, not a trace with extras to ignore). Blank lines are
//! skipped; fields may carry surrounding blanks; line ends may be `\r\n`.
//! Gzip is recognised by its magic bytes, whatever the extension; a `.gz`
//! file that is not gzip is an error. Every error names the file and, for the
//! contents, the 1-based line (the header is line 1).
//!
//! # Nearest length
//!
//! An OS wait of a length the trace lacks behaves like the recorded length
//! nearest in ratio: the cut between neighbours `a < b` is `√(a·b)` (as f64),
//! and a length equal to a cut belongs to the shorter one (the oracle's
//! `bisect_left`).
//!
//! ```
//! use keeptime::trace::{Trace, TraceRow};
//! let row = |os_wait_ns, overshoot_ns| TraceRow { round: 0, os_wait_ns, overshoot_ns, thread_cpu_ns: 1_000 };
//! let trace = Trace::from_rows(vec![row(10_000, 3_000), row(40_000, 5_000)]).unwrap();
//! assert_eq!(trace.nearest_length(19_000), 10_000); // √(10 µs · 40 µs) = 20 µs
//! assert_eq!(trace.nearest_length(21_000), 40_000);
//! ```

use crate::platform::Platform;
use crate::sim::SimPlatform;
use crate::sys::OsWake;
use crate::MIN_OS_WAIT_NS;
use std::fmt;
use std::io::{Read, Write};
use std::path::Path;
use std::rc::Rc;
use std::time::Instant;

/// The header [`Trace::write`] writes.
pub const HEADER: &str = "round,os_wait_ns,overshoot_ns,thread_cpu_ns";

const COLUMNS: [&str; 4] = ["round", "os_wait_ns", "overshoot_ns", "thread_cpu_ns"];

/// Why a trace could not be read, written or recorded. The message is one line
/// naming the file and, for its contents, the 1-based line.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("{file}: cannot read the trace: {source}")]
    Read {
        /// The file.
        file: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file could not be created or written.
    #[error("{file}: cannot write the trace: {source}")]
    Write {
        /// The file.
        file: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file is not gzip where it must be, or its gzip stream is broken.
    #[error("{file}: not a gzip-compressed trace: {detail}")]
    Gzip {
        /// The file.
        file: String,
        /// What is wrong.
        detail: String,
    },
    /// The (decompressed) contents are not CSV text.
    #[error("{file}: line {line}: not CSV text (not UTF-8)")]
    NotText {
        /// The file.
        file: String,
        /// The first line that is not UTF-8.
        line: u64,
    },
    /// The header is missing or names the wrong columns.
    #[error("{file}: line 1: {detail}; a trace has the columns {HEADER}")]
    Header {
        /// The file.
        file: String,
        /// What is wrong.
        detail: String,
    },
    /// A row is malformed.
    #[error("{file}: line {line}: {detail}")]
    Row {
        /// The file.
        file: String,
        /// The 1-based line (the header is line 1).
        line: u64,
        /// What is wrong.
        detail: String,
    },
    /// The header is there, no row is.
    #[error("{file}: the trace has no rows (a trace needs at least one wait)")]
    Empty {
        /// The file.
        file: String,
    },
    /// [`RecordOptions`] that cannot be recorded.
    #[error("cannot record a trace: {0}")]
    Options(String),
}

/// One OS wait of a trace, as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRow {
    /// Which pass over all lengths.
    pub round: u32,
    /// The requested length L (ns).
    pub os_wait_ns: u64,
    /// Wake − target (ns), as recorded: may be negative in a foreign file
    /// (replays count a negative overshoot as 0).
    pub overshoot_ns: i64,
    /// The waiting thread's CPU time inside the wait (ns).
    pub thread_cpu_ns: u64,
}

/// One recorded length's waits, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Group {
    os_wait_ns: u64,
    /// (overshoot clamped at 0, thread CPU), in file order.
    waits: Vec<(u64, u64)>,
}

/// A wake-up trace: rows in file order, grouped by length.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    rows: Vec<TraceRow>,
    /// Sorted by length.
    groups: Vec<Group>,
    /// `cut_above[i]`: the least integer length that belongs to group i + 1,
    /// i.e. ⌊√(Lᵢ·Lᵢ₊₁)⌋ + 1 (a length L is past the cut c iff c < L).
    cut_above: Vec<u64>,
}

impl Trace {
    /// A trace of these rows (the order is kept). An error for no rows.
    pub fn from_rows(rows: Vec<TraceRow>) -> Result<Trace, TraceError> {
        Self::from_rows_named(rows, "(rows)")
    }

    fn from_rows_named(rows: Vec<TraceRow>, file: &str) -> Result<Trace, TraceError> {
        if rows.is_empty() {
            return Err(TraceError::Empty { file: file.into() });
        }
        let mut lengths: Vec<u64> = rows.iter().map(|r| r.os_wait_ns).collect();
        lengths.sort_unstable();
        lengths.dedup();
        let mut groups: Vec<Group> = lengths
            .iter()
            .map(|&l| Group {
                os_wait_ns: l,
                waits: Vec::new(),
            })
            .collect();
        for r in &rows {
            // Present by construction.
            if let Ok(i) = lengths.binary_search(&r.os_wait_ns) {
                groups[i]
                    .waits
                    .push((r.overshoot_ns.max(0) as u64, r.thread_cpu_ns));
            }
        }
        let cut_above = lengths
            .windows(2)
            .map(|w| {
                let cut = ((w[0] as f64) * (w[1] as f64)).sqrt();
                // cut < L for an integer L iff L >= ⌊cut⌋ + 1 (cut ≥ 0).
                (cut.floor() as u64).saturating_add(1)
            })
            .collect();
        Ok(Trace {
            rows,
            groups,
            cut_above,
        })
    }

    /// Reads a trace file: CSV or gzip-compressed CSV (see the [module
    /// docs](self) for the format and the errors).
    pub fn load(path: impl AsRef<Path>) -> Result<Trace, TraceError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| TraceError::Read {
            file: file.clone(),
            source,
        })?;
        let gz_name = path.extension().is_some_and(|e| e == "gz");
        Self::parse_bytes(&file, &bytes, gz_name)
    }

    /// Parses a trace from memory; `file` names it in errors. Gzip is detected
    /// by its magic bytes; `expect_gzip` makes anything else an error.
    pub fn parse_bytes(file: &str, bytes: &[u8], expect_gzip: bool) -> Result<Trace, TraceError> {
        let is_gzip = bytes.starts_with(&[0x1f, 0x8b]);
        if expect_gzip && !is_gzip {
            return Err(TraceError::Gzip {
                file: file.into(),
                detail: "the file name ends in .gz but the contents do not start with the gzip magic bytes".into(),
            });
        }
        if is_gzip {
            let mut text = Vec::new();
            flate2::read::MultiGzDecoder::new(bytes)
                .read_to_end(&mut text)
                .map_err(|e| TraceError::Gzip {
                    file: file.into(),
                    detail: e.to_string(),
                })?;
            Self::parse_csv(file, &text)
        } else {
            Self::parse_csv(file, bytes)
        }
    }

    fn parse_csv(file: &str, text: &[u8]) -> Result<Trace, TraceError> {
        let mut lines = text.split(|&b| b == b'\n').enumerate().map(|(i, l)| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            let line = i as u64 + 1;
            std::str::from_utf8(l)
                .map(|s| (line, s))
                .map_err(|_| TraceError::NotText {
                    file: file.into(),
                    line,
                })
        });
        let header_error = |detail: String| TraceError::Header {
            file: file.into(),
            detail,
        };
        if text.is_empty() {
            return Err(header_error("the file is empty".into()));
        }
        let header = match lines.next() {
            Some(h) => h?.1,
            None => return Err(header_error("the file is empty".into())),
        };
        if header.trim().is_empty() {
            return Err(header_error("no header (the first line is empty)".into()));
        }
        // Position of each of COLUMNS in a row.
        let mut pos = [usize::MAX; 4];
        let names: Vec<&str> = header.split(',').map(str::trim).collect();
        for (at, name) in names.iter().enumerate() {
            match COLUMNS.iter().position(|c| c == name) {
                Some(k) if pos[k] != usize::MAX => {
                    return Err(header_error(format!(
                        "column '{}' appears twice",
                        name.escape_debug()
                    )))
                }
                Some(k) => pos[k] = at,
                None => {
                    return Err(header_error(format!(
                        "unknown column '{}'",
                        name.escape_debug()
                    )))
                }
            }
        }
        if let Some(k) = pos.iter().position(|&p| p == usize::MAX) {
            return Err(header_error(format!("column '{}' is missing", COLUMNS[k])));
        }
        let n = names.len();
        let mut rows = Vec::new();
        for item in lines {
            let (line, text) = item?;
            if text.trim().is_empty() {
                continue;
            }
            let row_error = |detail: String| TraceError::Row {
                file: file.into(),
                line,
                detail,
            };
            let fields: Vec<&str> = text.split(',').map(str::trim).collect();
            if fields.len() != n {
                return Err(row_error(format!(
                    "{} fields where the header has {n}",
                    fields.len()
                )));
            }
            let int = |k: usize| -> Result<i64, TraceError> {
                let f = fields[pos[k]];
                f.parse::<i64>().map_err(|_| {
                    row_error(format!(
                        "{} is '{}', not an integer",
                        COLUMNS[k],
                        f.escape_debug()
                    ))
                })
            };
            let at_least = |k: usize, min: i64, what: &str| -> Result<i64, TraceError> {
                let v = int(k)?;
                if v < min {
                    Err(row_error(format!(
                        "{} is {v}; it must be {what}",
                        COLUMNS[k]
                    )))
                } else {
                    Ok(v)
                }
            };
            let round = at_least(0, 0, "≥ 0")?;
            let round = u32::try_from(round)
                .map_err(|_| row_error(format!("round is {round}; it must be ≤ {}", u32::MAX)))?;
            rows.push(TraceRow {
                round,
                os_wait_ns: at_least(1, 1, "a positive length in ns")? as u64,
                overshoot_ns: int(2)?,
                thread_cpu_ns: at_least(3, 0, "≥ 0 ns")? as u64,
            });
        }
        Self::from_rows_named(rows, file)
    }

    /// Writes the trace as CSV with the [`HEADER`], gzip-compressed when the
    /// path ends in `.gz`.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), TraceError> {
        let path = path.as_ref();
        let f = std::fs::File::create(path).map_err(|source| TraceError::Write {
            file: path.display().to_string(),
            source,
        })?;
        self.write_to(f, path.extension().is_some_and(|e| e == "gz"))
            .map_err(|source| TraceError::Write {
                file: path.display().to_string(),
                source,
            })
    }

    /// Writes the trace as CSV to `out`, gzip-compressed if `gzip`.
    pub fn write_to(&self, out: impl Write, gzip: bool) -> std::io::Result<()> {
        if gzip {
            let mut gz = flate2::write::GzEncoder::new(
                std::io::BufWriter::new(out),
                flate2::Compression::default(),
            );
            self.write_csv(&mut gz)?;
            gz.finish()?.flush()
        } else {
            let mut w = std::io::BufWriter::new(out);
            self.write_csv(&mut w)?;
            w.flush()
        }
    }

    fn write_csv(&self, w: &mut impl Write) -> std::io::Result<()> {
        writeln!(w, "{HEADER}")?;
        for r in &self.rows {
            writeln!(
                w,
                "{},{},{},{}",
                r.round, r.os_wait_ns, r.overshoot_ns, r.thread_cpu_ns
            )?;
        }
        Ok(())
    }

    /// The rows, in file (recording) order.
    pub fn rows(&self) -> &[TraceRow] {
        &self.rows
    }

    /// The recorded lengths, ascending.
    pub fn lengths(&self) -> Vec<u64> {
        self.groups.iter().map(|g| g.os_wait_ns).collect()
    }

    /// Index (into [`lengths`](Self::lengths)) of the recorded length nearest
    /// in ratio to `os_wait_ns`.
    pub fn nearest_index(&self, os_wait_ns: u64) -> usize {
        self.cut_above.partition_point(|&c| c <= os_wait_ns)
    }

    /// The recorded length nearest in ratio to `os_wait_ns`.
    pub fn nearest_length(&self, os_wait_ns: u64) -> u64 {
        self.groups[self.nearest_index(os_wait_ns)].os_wait_ns
    }

    /// Per recorded length: counts and percentiles of overshoot and thread CPU.
    pub fn summary(&self) -> Vec<LengthSummary> {
        self.groups
            .iter()
            .map(|g| {
                let mut over: Vec<i64> = self
                    .rows
                    .iter()
                    .filter(|r| r.os_wait_ns == g.os_wait_ns)
                    .map(|r| r.overshoot_ns)
                    .collect();
                over.sort_unstable();
                let mut cpu: Vec<u64> = g.waits.iter().map(|w| w.1).collect();
                cpu.sort_unstable();
                let n = over.len();
                let sum: u128 = cpu.iter().map(|&c| u128::from(c)).sum();
                LengthSummary {
                    os_wait_ns: g.os_wait_ns,
                    n,
                    overshoot_p50_ns: over[rank(n, 500)],
                    overshoot_p90_ns: over[rank(n, 900)],
                    overshoot_p99_ns: over[rank(n, 990)],
                    overshoot_p999_ns: over[rank(n, 999)],
                    overshoot_max_ns: over[n - 1],
                    thread_cpu_p50_ns: cpu[rank(n, 500)],
                    thread_cpu_mean_ns: sum as f64 / n as f64,
                }
            })
            .collect()
    }
}

/// Nearest-rank percentile index: the ⌈n·p⌉-th smallest (1-based), p in ‰.
fn rank(n: usize, per_mille: usize) -> usize {
    (n * per_mille).div_ceil(1000).clamp(1, n) - 1
}

/// One recorded length of a trace, summarised (nearest-rank percentiles).
#[derive(Clone, Debug, PartialEq)]
pub struct LengthSummary {
    /// The length.
    pub os_wait_ns: u64,
    /// Waits of this length.
    pub n: usize,
    /// Overshoot percentiles, as recorded (may be negative in foreign files).
    pub overshoot_p50_ns: i64,
    /// p90.
    pub overshoot_p90_ns: i64,
    /// p99.
    pub overshoot_p99_ns: i64,
    /// p99.9.
    pub overshoot_p999_ns: i64,
    /// Largest.
    pub overshoot_max_ns: i64,
    /// Median thread CPU per wait.
    pub thread_cpu_p50_ns: u64,
    /// Mean thread CPU per wait.
    pub thread_cpu_mean_ns: f64,
}

// ---------------------------------------------------------------- recording

/// What [`record`] records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordOptions {
    /// The OS-wait lengths (ns), each ≥ 1.
    pub lengths_ns: Vec<u64>,
    /// Passes over all lengths, each in its own shuffled order (≥ 1).
    pub rounds: u32,
    /// Wall time of the whole recording (ns), split evenly into one block per
    /// (round, length).
    pub total_ns: u64,
    /// Fewest waits in one block, even when they overrun its share of the time.
    pub min_block_waits: u32,
    /// Most waits in one block (short lengths stop here).
    pub max_block_waits: u32,
    /// Seed of the shuffles.
    pub seed: u64,
}

impl Default for RecordOptions {
    /// The shared traces' settings: 5 µs … 20.48 ms doubling, 3 rounds, 12 s,
    /// 60–1500 waits per block, seed 1.
    fn default() -> Self {
        RecordOptions {
            lengths_ns: default_lengths_ns(),
            rounds: 3,
            total_ns: 12_000_000_000,
            min_block_waits: 60,
            max_block_waits: 1500,
            seed: 1,
        }
    }
}

/// 5 µs, 10 µs, … 20.48 ms (13 lengths, doubling).
pub fn default_lengths_ns() -> Vec<u64> {
    (0..13).map(|k| 5_000u64 << k).collect()
}

/// Where a recording is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordProgress {
    /// Blocks finished.
    pub blocks_done: usize,
    /// Blocks in all.
    pub blocks: usize,
    /// Waits so far.
    pub waits: usize,
    /// Wall time so far (ns).
    pub elapsed_ns: u64,
}

/// SplitMix64: the deterministic generator behind the shuffles and the
/// oracle's draws.
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in 0..n (n ≥ 1), by rejection.
    fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }
}

/// The length order of each round: a Fisher–Yates shuffle per round from
/// one SplitMix64 stream seeded with `seed`.
pub fn round_orders(lengths_ns: &[u64], rounds: u32, seed: u64) -> Vec<Vec<u64>> {
    let mut rng = SplitMix64(seed);
    (0..rounds)
        .map(|_| {
            let mut order = lengths_ns.to_vec();
            for i in (1..order.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                order.swap(i, j);
            }
            order
        })
        .collect()
}

/// Records a trace on this machine's real OS, as the format says: the
/// calling thread's timer slack is set to 1 ns (best effort: if the kernel
/// refuses, the trace shows the default slack), then for each round, for each
/// length L in that round's shuffled order, a block of consecutive waits:
/// read the thread CPU clock and `CLOCK_MONOTONIC` (issue time), wait with
/// `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` until issue + L (resumed
/// to the same target after a signal), read `CLOCK_MONOTONIC` (overshoot =
/// it − target) and the thread CPU clock. A block runs until its share of
/// `total_ns` has passed, within `min_block_waits..=max_block_waits` waits.
/// `progress` is called after every block.
///
/// This blocks the calling thread for about `total_ns` (more if the minimum
/// wait counts overrun it). Off Linux the waits are `std::thread::sleep`.
pub fn record(
    options: &RecordOptions,
    mut progress: impl FnMut(RecordProgress),
) -> Result<Trace, TraceError> {
    let o = options;
    if o.lengths_ns.is_empty() {
        return Err(TraceError::Options("no lengths to record".into()));
    }
    if o.lengths_ns.contains(&0) {
        return Err(TraceError::Options(
            "a length of 0 ns (lengths must be positive)".into(),
        ));
    }
    if o.rounds == 0 {
        return Err(TraceError::Options("0 rounds (at least 1)".into()));
    }
    if o.min_block_waits == 0 || o.min_block_waits > o.max_block_waits {
        return Err(TraceError::Options(format!(
            "waits per block {}..={} (need 1 ≤ min ≤ max)",
            o.min_block_waits, o.max_block_waits
        )));
    }
    let _ = crate::sys::set_timer_slack_ns(1);
    let orders = round_orders(&o.lengths_ns, o.rounds, o.seed);
    let blocks = orders.len() * o.lengths_ns.len();
    let block_ns = o.total_ns / blocks as u64;
    let start = crate::sys::monotonic_ns();
    let mut rows = Vec::new();
    let mut done = 0;
    for (round, order) in orders.iter().enumerate() {
        for &len in order {
            let block_start = crate::sys::monotonic_ns();
            let mut n = 0u32;
            loop {
                let cpu0 = crate::sys::thread_cpu_ns();
                let issue = crate::sys::monotonic_ns();
                let target = issue.saturating_add(len);
                while crate::sys::wait_until(target) == OsWake::Interrupted {}
                let after = crate::sys::monotonic_ns();
                let cpu1 = crate::sys::thread_cpu_ns();
                rows.push(TraceRow {
                    round: round as u32,
                    os_wait_ns: len,
                    overshoot_ns: after as i64 - target as i64,
                    thread_cpu_ns: cpu1.saturating_sub(cpu0),
                });
                n += 1;
                let spent = after.saturating_sub(block_start);
                if n >= o.max_block_waits || (n >= o.min_block_waits && spent >= block_ns) {
                    break;
                }
            }
            done += 1;
            progress(RecordProgress {
                blocks_done: done,
                blocks,
                waits: rows.len(),
                elapsed_ns: crate::sys::monotonic_ns().saturating_sub(start),
            });
        }
    }
    Trace::from_rows_named(rows, "(recording)")
}

// ------------------------------------------------------------------- oracle

/// Margins the oracle tries (µs).
pub const ORACLE_MARGINS_US: [u64; 19] = [
    0, 2, 5, 10, 15, 20, 25, 30, 35, 40, 50, 60, 70, 80, 100, 120, 150, 200, 300,
];

/// Splits between the long and the short wait the oracle tries (µs).
pub const ORACLE_SPLITS_US: [u64; 4] = [50, 100, 200, 400];

/// Draws per plan by default.
pub const ORACLE_DEFAULT_DRAWS: usize = 4000;

/// A plan of the oracle's family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OracleChoice {
    /// One OS wait until `margin_ns` before the deadline, then a spin (a
    /// margin at or past the duration minus [`MIN_OS_WAIT_NS`] means no wait).
    OneWait {
        /// Margin (ns).
        margin_ns: u64,
    },
    /// An OS wait until `long_margin_ns + split_ns` before the deadline, then
    /// one until `short_margin_ns` before it (if at least
    /// [`MIN_OS_WAIT_NS`] is left), then a spin.
    TwoWaits {
        /// g1 (ns).
        long_margin_ns: u64,
        /// The split S (ns).
        split_ns: u64,
        /// g2 (ns).
        short_margin_ns: u64,
    },
    /// No plan of the family met the tail: spin the whole sleep.
    Spin,
}

impl fmt::Display for OracleChoice {
    /// The oracle's wording, as `keeptime trace --oracle` prints it (margins
    /// in µs).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = |ns: u64| format!("{:.0}", ns as f64 / 1e3);
        match *self {
            OracleChoice::OneWait { margin_ns } => {
                write!(f, "one OS wait, margin {}", us(margin_ns))
            }
            OracleChoice::TwoWaits {
                long_margin_ns,
                split_ns,
                short_margin_ns,
            } => write!(
                f,
                "long wait margin {} + {}, short wait margin {}",
                us(long_margin_ns),
                us(split_ns),
                us(short_margin_ns)
            ),
            OracleChoice::Spin => f.write_str("spin"),
        }
    }
}

/// The cheapest plan for a sleep and a tail target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OraclePlan {
    /// The sleep (ns).
    pub duration_ns: u64,
    /// The target: the largest share of late sleeps allowed.
    pub tail_share: f64,
    /// CPU per sleep ÷ the sleep: (OS waits' thread CPU + spin) / duration.
    pub cpu_share: f64,
    /// Share of the draws that woke after the deadline.
    pub late_share: f64,
    /// The plan.
    pub plan: OracleChoice,
}

/// Bad oracle arguments.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OracleError {
    /// A zero duration.
    #[error("the sleep duration must be positive (got 0 ns)")]
    ZeroDuration,
    /// A tail share outside [0, 1] or NaN.
    #[error("tail share {0} is not in [0, 1]")]
    Tail(f64),
    /// No draws.
    #[error("the oracle needs at least one draw")]
    NoDraws,
}

/// The oracle's model, evaluated on a trace: draws fixed once, every plan
/// of the family replayed against the same draws.
///
/// Method: `draws` pairs (u₁, u₂) uniform in [0, 1) (from SplitMix64 seeded
/// with `seed`, or given with [`Oracle::with_draws`]; other draws change the
/// figures only within sampling noise). An OS wait of length L with draw u takes
/// row ⌊u·n⌋ (file order) of the nearest recorded length's n rows: it wakes
/// `max(0, overshoot)` after its target and costs that row's thread CPU. For
/// a sleep of D, a plan (g1, S, g2) makes the first wait of L₁ = D − g1 − S
/// (if L₁ ≥ 5 µs; it ends at t = L₁ + overshoot), then, if S > 0, a wait of
/// L₂ = D − g2 − t (if L₂ ≥ 5 µs), then spins to D. A sleep is late when
/// t > D (no spin is counted then); CPU = the waits' thread CPU + D − t.
/// Plans: (g1, 0, 0) for every margin g1, and (g1, S, g2) for every margin g1,
/// split S and margin g2 with g1 + S < D. The cheapest plan whose late share
/// is ≤ the tail wins (the first in that order on a tie); none: a pure spin.
#[derive(Clone, Debug)]
pub struct Oracle<'t> {
    trace: &'t Trace,
    /// Per recorded length, per draw: the (overshoot, cpu) draw u₁ picks.
    first: Vec<Vec<(u64, u64)>>,
    /// Per draw, per recorded length (draw-major: the second wait's length
    /// varies by draw): the (overshoot, cpu) draw u₂ picks.
    second: Vec<(u64, u64)>,
    lengths: usize,
    draws: usize,
}

/// Every plan's outcome for one sleep duration.
#[derive(Clone, Debug)]
pub struct OracleOutcomes {
    duration_ns: u64,
    draws: usize,
    /// (plan, late count, CPU sum in ns) in the family's order.
    plans: Vec<(OracleChoice, usize, u64)>,
}

impl OracleOutcomes {
    /// The cheapest plan whose late share is at most `tail_share`.
    pub fn best(&self, tail_share: f64) -> Result<OraclePlan, OracleError> {
        if !(0.0..=1.0).contains(&tail_share) {
            return Err(OracleError::Tail(tail_share));
        }
        let n = self.draws as f64;
        let mut best: Option<(OracleChoice, usize, u64)> = None;
        for &p in &self.plans {
            if p.1 as f64 / n <= tail_share && best.map_or(true, |b| p.2 < b.2) {
                best = Some(p);
            }
        }
        let d = self.duration_ns as f64;
        Ok(match best {
            Some((plan, late, cpu)) => OraclePlan {
                duration_ns: self.duration_ns,
                tail_share,
                cpu_share: cpu as f64 / n / d,
                late_share: late as f64 / n,
                plan,
            },
            None => OraclePlan {
                duration_ns: self.duration_ns,
                tail_share,
                cpu_share: 1.0,
                late_share: 0.0,
                plan: OracleChoice::Spin,
            },
        })
    }
}

impl<'t> Oracle<'t> {
    /// Fixes `draws` draws from a SplitMix64 seeded with `seed`.
    pub fn new(trace: &'t Trace, draws: usize, seed: u64) -> Result<Self, OracleError> {
        if draws == 0 {
            return Err(OracleError::NoDraws);
        }
        let mut rng = SplitMix64(seed);
        let us: Vec<(f64, f64)> = (0..draws)
            .map(|_| (rng.next_f64(), rng.next_f64()))
            .collect();
        Self::with_draws(trace, &us)
    }

    /// An oracle replaying these draws (u₁, u₂), each meant to be in [0, 1)
    /// (a value outside is taken as the nearest end, NaN as 0), e.g. the exact
    /// draws of another implementation.
    pub fn with_draws(trace: &'t Trace, us: &[(f64, f64)]) -> Result<Self, OracleError> {
        let draws = us.len();
        if draws == 0 {
            return Err(OracleError::NoDraws);
        }
        let row = |g: &Group, u: f64| {
            let n = g.waits.len();
            // ⌊u·n⌋ < n for u < 1; `as` saturates (NaN, u < 0 give 0), min
            // guards u ≥ 1.
            g.waits[((u * n as f64) as usize).min(n - 1)]
        };
        let first = trace
            .groups
            .iter()
            .map(|g| us.iter().map(|&(u1, _)| row(g, u1)).collect())
            .collect();
        let second = us
            .iter()
            .flat_map(|&(_, u2)| trace.groups.iter().map(move |g| row(g, u2)))
            .collect();
        Ok(Oracle {
            trace,
            first,
            second,
            lengths: trace.groups.len(),
            draws,
        })
    }

    /// Replays every plan of the family for a sleep of `duration_ns`.
    pub fn outcomes(&self, duration_ns: u64) -> Result<OracleOutcomes, OracleError> {
        if duration_ns == 0 {
            return Err(OracleError::ZeroDuration);
        }
        let d = duration_ns;
        let mut plans = Vec::with_capacity(ORACLE_MARGINS_US.len() * (1 + 4 * 19));
        // First waits' end and CPU per draw, reused for every g2.
        let mut t1 = vec![0u64; self.draws];
        let mut c1 = vec![0u64; self.draws];
        for g1_us in ORACLE_MARGINS_US {
            let g1 = g1_us * 1_000;
            let (late, cpu) = self.first_wait(d, g1, &mut t1, &mut c1);
            plans.push((OracleChoice::OneWait { margin_ns: g1 }, late, cpu));
            for split_us in ORACLE_SPLITS_US {
                let split = split_us * 1_000;
                if split + g1 >= d {
                    continue;
                }
                self.first_wait(d, g1 + split, &mut t1, &mut c1);
                for g2_us in ORACLE_MARGINS_US {
                    let g2 = g2_us * 1_000;
                    let (late, cpu) = self.second_wait(d, g2, &t1, &c1);
                    plans.push((
                        OracleChoice::TwoWaits {
                            long_margin_ns: g1,
                            split_ns: split,
                            short_margin_ns: g2,
                        },
                        late,
                        cpu,
                    ));
                }
            }
        }
        Ok(OracleOutcomes {
            duration_ns,
            draws: self.draws,
            plans,
        })
    }

    /// The first wait, until `lead` before the deadline: fills the end time
    /// and CPU per draw; returns (late, CPU sum) of the one-wait plan.
    fn first_wait(&self, d: u64, lead: u64, t1: &mut [u64], c1: &mut [u64]) -> (usize, u64) {
        let len = d.checked_sub(lead).filter(|&l| l >= MIN_OS_WAIT_NS);
        match len {
            None => {
                t1.fill(0);
                c1.fill(0);
                (0, d * self.draws as u64)
            }
            Some(l) => {
                let table = &self.first[self.trace.nearest_index(l)];
                let (mut late, mut cpu) = (0usize, 0u64);
                for ((&(w, c), t), cc) in table.iter().zip(t1.iter_mut()).zip(c1.iter_mut()) {
                    let end = l.saturating_add(w);
                    *t = end;
                    *cc = c;
                    cpu = cpu.saturating_add(c);
                    if end > d {
                        late += 1;
                    } else {
                        cpu += d - end;
                    }
                }
                (late, cpu)
            }
        }
    }

    /// The second wait, until `g2` before the deadline, after the first.
    fn second_wait(&self, d: u64, g2: u64, t1: &[u64], c1: &[u64]) -> (usize, u64) {
        let (mut late, mut cpu) = (0usize, 0u64);
        let until = d.saturating_sub(g2);
        for (i, (&t0, &c0)) in t1.iter().zip(c1).enumerate() {
            let mut t = t0;
            cpu = cpu.saturating_add(c0);
            if d >= g2 && until >= t.saturating_add(MIN_OS_WAIT_NS) {
                let l = until - t;
                let (w, c) = self.second[i * self.lengths + self.trace.nearest_index(l)];
                t = until.saturating_add(w);
                cpu = cpu.saturating_add(c);
            }
            if t > d {
                late += 1;
            } else {
                cpu += d - t;
            }
        }
        (late, cpu)
    }
}

/// The cheapest plan of the oracle's family for one sleep and tail target,
/// from `draws` draws seeded with 1 (see [`Oracle`] for the method; build an
/// [`Oracle`] once to ask about several durations and targets).
pub fn oracle(
    trace: &Trace,
    duration_ns: u64,
    tail_share: f64,
    draws: usize,
) -> Result<OraclePlan, OracleError> {
    if !(0.0..=1.0).contains(&tail_share) {
        return Err(OracleError::Tail(tail_share));
    }
    Oracle::new(trace, draws, 1)?
        .outcomes(duration_ns)?
        .best(tail_share)
}

// ------------------------------------------------------------------- replay

/// A simulated [`Platform`] whose OS waits replay a [`Trace`]: a
/// [`SimPlatform`] (its methods are reachable through `Deref`) whose wake
/// source walks the trace. Cheap to clone; clones share one simulated world.
/// Deterministic.
///
/// An OS wait issued at `now` to target `t` has length `L = t − now` (0 if
/// `t ≤ now`) and wakes at `max(now, t)` + the next overshoot of the recorded
/// length nearest to L: each recorded length has a cursor that walks its rows
/// in file order and starts over after the last; a negative recorded
/// overshoot counts as 0. The row's thread CPU is added to the simulated
/// thread-CPU counter. A spin iteration ([`relax`](Platform::relax)) advances
/// the clock and the CPU counter by the spin step (default 100 ns), a yield
/// by the yield step (default 1 µs). Spin slots are free unless
/// [`set_spin_slots_free(false)`](SimPlatform::set_spin_slots_free). OS waits
/// are not interrupted unless interrupts are scripted on the simulation.
#[derive(Clone, Debug)]
pub struct TracePlatform {
    trace: Rc<Trace>,
    sim: SimPlatform,
}

impl TracePlatform {
    /// Replays `trace` on a clock that starts at `start_ns`.
    pub fn new(trace: Trace, start_ns: u64) -> Self {
        let trace = Rc::new(trace);
        let sim = SimPlatform::new(start_ns);
        let replayed = Rc::clone(&trace);
        let mut cursors = vec![0usize; trace.groups.len()];
        sim.set_wake_source(move |len| {
            let k = replayed.nearest_index(len);
            let waits = &replayed.groups[k].waits;
            let row = waits[cursors[k]];
            cursors[k] = (cursors[k] + 1) % waits.len();
            row
        });
        TracePlatform { trace, sim }
    }

    /// The trace being replayed.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The simulated thread CPU so far (ns): replayed OS waits' thread CPU
    /// plus spin and yield steps.
    pub fn thread_cpu_ns(&self) -> u64 {
        self.sim.thread_cpu()
    }
}

impl std::ops::Deref for TracePlatform {
    type Target = SimPlatform;
    fn deref(&self) -> &SimPlatform {
        &self.sim
    }
}

impl Platform for TracePlatform {
    fn now_ns(&self) -> u64 {
        self.sim.now_ns()
    }
    fn os_wait_until(&self, target_ns: u64) -> OsWake {
        self.sim.os_wait_until(target_ns)
    }
    fn relax(&self) {
        self.sim.relax();
    }
    fn yield_now(&self) {
        self.sim.yield_now();
    }
    fn thread_cpu_ns(&self) -> Option<u64> {
        self.sim.thread_cpu_ns()
    }
    fn try_begin_spin(&self) -> bool {
        self.sim.try_begin_spin()
    }
    fn end_spin(&self) {
        self.sim.end_spin();
    }
    fn prepare_thread(&self) {}
    fn ns_from_instant(&self, instant: Instant) -> u64 {
        self.sim.ns_from_instant(instant)
    }
    fn instant_from_ns(&self, ns: u64) -> Instant {
        self.sim.instant_from_ns(ns)
    }
}
