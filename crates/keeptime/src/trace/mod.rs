//! Wake-up traces: how late this machine's absolute OS waits wake, and what
//! each costs the waiting thread; recorded, loaded, summarised, replayed, and
//! held against the *oracle*, the cheapest plan a trace allows.
//!
//! # Format
//!
//! CSV, optionally gzip-compressed, one row per OS wait, with a header naming
//! exactly these four columns, or these and `after_ns` (in any order):
//!
//! | column | meaning |
//! |---|---|
//! | `round` | which pass over all lengths (each pass shuffles the order); integer ≥ 0 |
//! | `os_wait_ns` | the requested length L: `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` until issue time + L; integer ≥ 1 |
//! | `overshoot_ns` | first `CLOCK_MONOTONIC` reading after the wait − the target; any integer (as recorded) |
//! | `thread_cpu_ns` | `CLOCK_THREAD_CPUTIME_ID` after − before the wait; integer ≥ 0 |
//! | `after_ns` (optional) | 0 for a wait recorded in a block of waits of its length; else the length of the OS wait it was issued right after (a short wait after a long one, as a two-wait plan's second wait is); integer ≥ 0 |
//!
//! A missing, repeated or unknown column is an error (a file with other
//! columns is some other format, not a trace with extras to ignore). Rows
//! with a non-zero `after_ns` are kept apart ([`Trace::after_rows`]): every
//! use of a length's waits ([`Trace::rows`], the summary, the oracle's
//! one-wait plans and first waits, a replay's waits) reads the blocks' rows;
//! the oracle's second waits after a long first wait and a replay's waits
//! right after a long one read the others ([`Oracle`], [`TracePlatform`]),
//! a profile keeps them after the blocks' rows of their
//! bucket ([`Profile::from_trace`](crate::profile::Profile::from_trace)), and
//! [`Trace::after_summary`] summarises them. A file needs at least one block
//! row. Blank lines are
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

use crate::stats::nearest_rank;
use std::io::{Read, Write};
use std::path::Path;

mod oracle;
mod record;
mod replay;

pub use oracle::*;
pub use record::*;
pub use replay::*;

/// The header [`Trace::write`] writes for a trace without
/// [after rows](Trace::after_rows).
pub const HEADER: &str = "round,os_wait_ns,overshoot_ns,thread_cpu_ns";

/// The header [`Trace::write`] writes for a trace with
/// [after rows](Trace::after_rows).
pub const HEADER_AFTER: &str = "round,os_wait_ns,overshoot_ns,thread_cpu_ns,after_ns";

const COLUMNS: [&str; 5] = [
    "round",
    "os_wait_ns",
    "overshoot_ns",
    "thread_cpu_ns",
    "after_ns",
];

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
    /// An [`AfterRow`] given to [`Trace::with_after_rows`] without the
    /// length of the wait it followed (`after_ns` 0).
    #[error("an after row needs the length of the wait it followed (after_ns ≥ 1); a row recorded in a block is one of the trace's rows")]
    AfterRow,
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

/// An OS wait recorded right after a longer one, not in a block of its
/// length: the short wait of a two-wait plan, as such a plan meets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AfterRow {
    /// The wait.
    pub row: TraceRow,
    /// The length of the OS wait it was issued right after (ns, ≥ 1).
    pub after_ns: u64,
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
    /// Rows recorded right after a long wait, in file order.
    after: Vec<AfterRow>,
    /// `after_groups[i]`: the after rows of `groups[i]`'s length, in file
    /// order (empty when it has none).
    after_groups: Vec<Vec<(u64, u64)>>,
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
            after: Vec::new(),
            after_groups: vec![Vec::new(); lengths.len()],
            groups,
            cut_above,
        })
    }

    /// This trace with `after` as its [after rows](Self::after_rows) (in
    /// that order, replacing any it had). An error for an `after_ns` of 0.
    pub fn with_after_rows(mut self, after: Vec<AfterRow>) -> Result<Trace, TraceError> {
        if after.iter().any(|a| a.after_ns == 0) {
            return Err(TraceError::AfterRow);
        }
        self.set_after(after);
        Ok(self)
    }

    fn set_after(&mut self, after: Vec<AfterRow>) {
        let mut groups = vec![Vec::new(); self.groups.len()];
        for a in &after {
            if let Some(i) = self
                .groups
                .iter()
                .position(|g| g.os_wait_ns == a.row.os_wait_ns)
            {
                groups[i].push((a.row.overshoot_ns.max(0) as u64, a.row.thread_cpu_ns));
            }
        }
        self.after = after;
        self.after_groups = groups;
    }

    /// The after rows of the recorded length `lengths()[index]`, as
    /// (overshoot clamped at 0, thread CPU) in file order; empty when it has
    /// none (or there is no such length).
    pub(crate) fn after_waits(&self, index: usize) -> &[(u64, u64)] {
        self.after_groups.get(index).map_or(&[], Vec::as_slice)
    }

    /// The waits recorded right after a long one, in file order: not part of
    /// [`rows`](Self::rows) or of any length's block.
    pub fn after_rows(&self) -> &[AfterRow] {
        &self.after
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
        // Position of each of COLUMNS in a row (after_ns may be absent).
        let mut pos = [usize::MAX; 5];
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
        if let Some(k) = pos[..4].iter().position(|&p| p == usize::MAX) {
            return Err(header_error(format!("column '{}' is missing", COLUMNS[k])));
        }
        let n = names.len();
        let mut rows = Vec::new();
        let mut after = Vec::new();
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
            let row = TraceRow {
                round,
                os_wait_ns: at_least(1, 1, "a positive length in ns")? as u64,
                overshoot_ns: int(2)?,
                thread_cpu_ns: at_least(3, 0, "≥ 0 ns")? as u64,
            };
            match pos[4] {
                usize::MAX => rows.push(row),
                _ => match at_least(4, 0, "≥ 0 ns")? as u64 {
                    0 => rows.push(row),
                    after_ns => after.push(AfterRow { row, after_ns }),
                },
            }
        }
        if rows.is_empty() && !after.is_empty() {
            return Err(TraceError::Row {
                file: file.into(),
                line: 1,
                detail: "every row has an after_ns; a trace needs at least one row recorded in a block (after_ns 0)".into(),
            });
        }
        let mut trace = Self::from_rows_named(rows, file)?;
        trace.set_after(after);
        Ok(trace)
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
        if self.after.is_empty() {
            writeln!(w, "{HEADER}")?;
            for r in &self.rows {
                writeln!(
                    w,
                    "{},{},{},{}",
                    r.round, r.os_wait_ns, r.overshoot_ns, r.thread_cpu_ns
                )?;
            }
            return Ok(());
        }
        writeln!(w, "{HEADER_AFTER}")?;
        let after = self.after.iter().map(|a| (&a.row, a.after_ns));
        for (r, after_ns) in self.rows.iter().map(|r| (r, 0)).chain(after) {
            writeln!(
                w,
                "{},{},{},{},{after_ns}",
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

    /// Per length of the [after rows](Self::after_rows) (whatever wait each
    /// followed), ascending: counts and percentiles of overshoot and thread
    /// CPU, as [`summary`](Self::summary) gives them for the blocks.
    pub fn after_summary(&self) -> Vec<LengthSummary> {
        let mut lengths: Vec<u64> = self.after.iter().map(|a| a.row.os_wait_ns).collect();
        lengths.sort_unstable();
        lengths.dedup();
        lengths
            .into_iter()
            .map(|l| {
                let rows = self
                    .after
                    .iter()
                    .map(|a| a.row)
                    .filter(|r| r.os_wait_ns == l);
                summarise(l, rows)
            })
            .collect()
    }

    /// Per recorded length: counts and percentiles of overshoot and thread CPU.
    pub fn summary(&self) -> Vec<LengthSummary> {
        self.groups
            .iter()
            .map(|g| {
                let rows = self
                    .rows
                    .iter()
                    .copied()
                    .filter(|r| r.os_wait_ns == g.os_wait_ns);
                summarise(g.os_wait_ns, rows)
            })
            .collect()
    }
}

/// The summary of one length's rows (at least one).
fn summarise(os_wait_ns: u64, rows: impl Iterator<Item = TraceRow>) -> LengthSummary {
    let (mut over, mut cpu): (Vec<i64>, Vec<u64>) =
        rows.map(|r| (r.overshoot_ns, r.thread_cpu_ns)).unzip();
    over.sort_unstable();
    cpu.sort_unstable();
    let n = over.len();
    let sum: u128 = cpu.iter().map(|&c| u128::from(c)).sum();
    LengthSummary {
        os_wait_ns,
        n,
        overshoot_p50_ns: q(&over, 500),
        overshoot_p90_ns: q(&over, 900),
        overshoot_p99_ns: q(&over, 990),
        overshoot_p999_ns: q(&over, 999),
        overshoot_max_ns: over.last().copied().unwrap_or_default(),
        thread_cpu_p50_ns: q(&cpu, 500),
        thread_cpu_mean_ns: sum as f64 / n.max(1) as f64,
    }
}

/// The nearest-rank percentile ([`nearest_rank`]) of a group's sorted
/// values; every group has at least one row.
fn q<T: Copy + Default>(sorted: &[T], per_mille: u64) -> T {
    nearest_rank(sorted, per_mille).unwrap_or_default()
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
