//! `keeptime trace`: record how late this machine's OS waits wake (and what
//! they cost the thread) to a trace file, or read one; then print the
//! per-length summary and the oracle's cheapest plans
//! ([`keeptime::trace`]).

use crate::output::format;
use crate::UsageError;
use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use keeptime::profile::{Fingerprint, Profile};
use keeptime::trace::{self, LengthSummary, Oracle, OraclePlan, RecordOptions, Trace};
use std::io::{IsTerminal, Write};
use std::path::Path;

pub(crate) const TRACE_ABOUT: &str = "\
Record how late this machine's OS waits wake (a trace file), or read one;
print per-length overshoots and the oracle's cheapest plans.

Recording: for each round (each shuffles the length order), for each length L,
a block of consecutive clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) waits
until the time of the call + L with 1 ns timer slack, each recorded as

  overshoot = first clock reading after the wait − target
  thread CPU = CLOCK_THREAD_CPUTIME_ID after − before the wait

Then (--after-waits, default 70) waits of 40, 80, 160 and 320 µs, each right
after a 10.24 ms wait: the short wait of a two-wait plan as a 10 ms sleep meets
it, which on some hosts wakes later than in a block of short waits. They are
kept apart (the after_ns column) and printed in a table of their own.

The oracle replays the trace and finds, per sleep and tail target, the least
CPU any plan of one or two OS waits then a spin needs while at most that share
of sleeps end late. The second wait of a plan whose first wait is 5.12 ms or
longer is drawn from the waits recorded right after a long one, where the trace
has them.

--profile FILE also writes a host profile: this machine's fingerprint (CPU,
online CPUs, virtualisation, cpuidle driver, clocksource, kernel) and, per
OS-wait length bucket, the trace's last 1024 wake-ups (the short waits
recorded after a long one last) and the median cost of an OS wait. A sleeper started from it (Rust SleeperBuilder::profile, C
kt_sleeper_create_with_profile, Python Sleeper(profile=...), Go
Sleeper.UseProfile, Java and C# Sleeper builders' profile) answers at once as
one that had made those waits, instead of spinning for hundreds of sleeps
while it learns; set_default_profile (Rust, Python; C kt_set_default_profile,
Go and C# SetDefaultProfile, Java KeepTime.setDefaultProfile) does the same for
the sleepers behind the free sleep functions and the async waiter. Loading it
on another machine is refused, naming the field that differs.

  keeptime trace --profile host.profile            record ~15 s, write the profile
  keeptime trace -o t.csv.gz --profile host.profile  keep the trace as well
  keeptime trace --oracle t.csv.gz --profile host.profile
                          from a trace recorded earlier on this same machine";

/// `keeptime trace` options.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).multiple(true).args(["output", "oracle", "profile"])))]
pub struct TraceArgs {
    /// Record a trace to FILE (gzip-compressed when it ends in .gz).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,

    /// Read an existing trace FILE (CSV or CSV.gz) instead of recording.
    #[arg(long, value_name = "FILE", conflicts_with = "output")]
    pub oracle: Option<std::path::PathBuf>,

    /// Write a host profile of this machine to FILE: from the recording
    /// (recorded even without -o), or from the --oracle trace, which must
    /// have been recorded on this machine (the profile carries this
    /// machine's fingerprint). See --help.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<std::path::PathBuf>,

    /// How long to record, e.g. 12 or 500ms (a bare number is seconds) [default: 12].
    #[arg(long, value_name = "N", value_parser = parse_seconds,
          allow_hyphen_values = true, conflicts_with = "oracle")]
    pub seconds: Option<u64>,

    /// OS-wait lengths to record, comma-separated [default: 5us,10us,…,20.48ms doubling].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_length,
          allow_hyphen_values = true, conflicts_with = "oracle")]
    pub lengths: Vec<u64>,

    /// Waits of each of 40, 80, 160 and 320 µs recorded right after a
    /// 10.24 ms wait, after the rounds: the short wait of a two-wait plan,
    /// which on some hosts wakes later than in a row of short ones. The
    /// oracle prices the second waits of plans whose first wait is 5.12 ms
    /// or longer with them, and a profile keeps them in its short buckets
    /// [default: 70; 0 records none; at most 10000, about 7 minutes].
    #[arg(long, value_name = "N", value_parser = parse_after_waits,
          allow_hyphen_values = true, conflicts_with = "oracle")]
    pub after_waits: Option<u32>,

    /// Passes over all lengths, each in a shuffled order [default: 3].
    #[arg(long, value_name = "N", value_parser = parse_rounds,
          allow_hyphen_values = true, conflicts_with = "oracle")]
    pub rounds: Option<u32>,

    /// Sleep durations for the oracle, comma-separated [default: 100us,250us,1ms,2.5ms,10ms].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = crate::parse::wait_duration,
          allow_hyphen_values = true)]
    pub durations: Vec<u64>,

    /// Shares of late sleeps allowed, comma-separated, as --tail-target takes
    /// them: relaxed, balanced, strict, fractions or percentages
    /// [default: 5%,1%,0.1%].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = crate::parse::tail_share,
          allow_hyphen_values = true)]
    pub tails: Vec<f64>,

    /// Draws per plan the oracle replays [default: 4000].
    #[arg(long, value_name = "N", value_parser = parse_draws, allow_hyphen_values = true)]
    pub draws: Option<usize>,

    /// No progress bar (it is also hidden when stderr is not a terminal).
    #[arg(long, short)]
    pub quiet: bool,
}

/// The default `--seconds`: 12 s, as the shared traces.
pub const DEFAULT_RECORD_NS: u64 = 12_000_000_000;
/// The default `--durations`.
pub const DEFAULT_DURATIONS_NS: [u64; 5] = [100_000, 250_000, 1_000_000, 2_500_000, 10_000_000];
/// The default `--tails`.
pub const DEFAULT_TAILS: [f64; 3] = [0.05, 0.01, 0.001];

/// A file this run will write, checked writable before the long part of the
/// run: opened for writing without truncating what it holds (an existing
/// trace or profile is kept until the new one replaces it). A file the check
/// had to create is removed again unless [`keep`](Self::keep) is called, so a
/// run that fails leaves neither an empty file nor a truncated one.
struct OutputFile<'a> {
    path: &'a Path,
    created: bool,
}

impl<'a> OutputFile<'a> {
    fn check(path: &'a Path, what: &str) -> Result<Self> {
        let created = !path.exists();
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| UsageError(format!("{}: cannot write the {what}: {e}", path.display())))?;
        Ok(OutputFile { path, created })
    }

    /// The run wrote the file: it stays.
    fn keep(mut self) {
        self.created = false;
    }
}

impl Drop for OutputFile<'_> {
    fn drop(&mut self) {
        if self.created {
            let _ = std::fs::remove_file(self.path);
        }
    }
}

/// Runs `keeptime trace`.
pub fn run(args: TraceArgs) -> Result<()> {
    // An unwritable profile fails before anything is recorded or read.
    let profile_file = match &args.profile {
        Some(p) => Some(OutputFile::check(p, "profile")?),
        None => None,
    };
    let trace = match (&args.output, &args.oracle, &args.profile) {
        (_, Some(file), _) => Trace::load(file).map_err(|e| UsageError(e.to_string()))?,
        (Some(out), None, _) => record_to(Some(out), &args)?,
        (None, None, Some(_)) => record_to(None, &args)?,
        (None, None, None) => {
            return Err(UsageError(
                "give -o FILE to record, --oracle FILE to read a trace, or --profile FILE".into(),
            )
            .into())
        }
    };
    if let (Some(p), Some(file)) = (&args.profile, profile_file) {
        let profile = Profile::from_trace(&trace, Fingerprint::this_machine());
        profile.write(p).map_err(|e| UsageError(e.to_string()))?;
        file.keep();
        let buckets = profile.samples().iter().filter(|&&n| n > 0).count();
        let samples: usize = profile.samples().iter().sum();
        eprintln!(
            "wrote a profile of this machine ({samples} wake-ups in {buckets} buckets) to {}; \
             {}={} starts keeptime's own sleepers from it in any program",
            p.display(),
            keeptime::PROFILE_ENV,
            std::fs::canonicalize(p).as_deref().unwrap_or(p).display()
        );
        if trace.after_rows().is_empty() {
            eprintln!(
                "note: the trace holds no short waits recorded right after a long one (--after-waits); \
                 on a host where those wake later than short waits in a row (host kind D), two-wait \
                 plans from this profile can end late more often than their target"
            );
        }
    }
    let durations = if args.durations.is_empty() {
        DEFAULT_DURATIONS_NS.to_vec()
    } else {
        args.durations.clone()
    };
    let tails = if args.tails.is_empty() {
        DEFAULT_TAILS.to_vec()
    } else {
        args.tails.clone()
    };
    let draws = args.draws.unwrap_or(trace::ORACLE_DEFAULT_DRAWS);
    let mut out = std::io::stdout().lock();
    out.write_all(render_summary(&trace.summary()).as_bytes())?;
    let after = trace.after_summary();
    if !after.is_empty() {
        let mut long: Vec<u64> = trace.after_rows().iter().map(|a| a.after_ns).collect();
        long.sort_unstable();
        long.dedup();
        let names: Vec<String> = long.iter().map(|&l| format::duration(l)).collect();
        writeln!(
            out,
            "\nright after a {} wait, as the second wait of a two-wait plan (the oracle's second waits of \
             these lengths after a first wait of {} or more):",
            names.join(" or "),
            format::duration(long[0] / 2)
        )?;
        out.write_all(render_summary(&after).as_bytes())?;
    }
    writeln!(out)?;
    let oracle = Oracle::new(&trace, draws, 1).map_err(|e| UsageError(e.to_string()))?;
    let mut plans = Vec::new();
    for &d in &durations {
        let outcomes = oracle.outcomes(d).map_err(|e| UsageError(e.to_string()))?;
        for &t in &tails {
            plans.push(outcomes.best(t).map_err(|e| UsageError(e.to_string()))?);
        }
    }
    out.write_all(render_oracle(&plans, draws).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Records with the options of `args` and writes `out` if given; the file
/// is checked writable first ([`OutputFile`]), so an unwritable path fails
/// before the recording and a failed recording leaves what it held.
fn record_to(out: Option<&Path>, args: &TraceArgs) -> Result<Trace> {
    let out_file = match out {
        Some(out) => Some(OutputFile::check(out, "trace")?),
        None => None,
    };
    let defaults = RecordOptions::default();
    let options = RecordOptions {
        lengths_ns: if args.lengths.is_empty() {
            defaults.lengths_ns.clone()
        } else {
            args.lengths.clone()
        },
        rounds: args.rounds.unwrap_or(defaults.rounds),
        total_ns: args.seconds.unwrap_or(DEFAULT_RECORD_NS),
        after_waits: args.after_waits.unwrap_or(defaults.after_waits),
        ..defaults
    };
    let blocks = options.blocks() as u64;
    let bar = if args.quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::with_draw_target(Some(blocks), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "recording {bar:30} {pos}/{len} blocks, {msg} waits, {elapsed}",
        ) {
            bar.set_style(style);
        }
        bar
    };
    let trace = trace::record(&options, |p| {
        bar.set_position(p.blocks_done as u64);
        bar.set_message(p.waits.to_string());
    })
    .map_err(|e| UsageError(e.to_string()))?;
    bar.finish_and_clear();
    if let (Some(out), Some(file)) = (out, out_file) {
        trace.write(out)?;
        file.keep();
        eprintln!(
            "wrote {} waits to {}",
            trace.rows().len() + trace.after_rows().len(),
            out.display()
        );
    }
    Ok(trace)
}

/// The per-length table: count, overshoot percentiles, thread CPU per wait.
pub fn render_summary(rows: &[LengthSummary]) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "{:>9} {:>6}  {:>9} {:>9} {:>9} {:>9} {:>9}  {:>9} {:>9}\n",
        "OS wait", "waits", "over p50", "p90", "p99", "p99.9", "max", "CPU p50", "CPU mean"
    ));
    for r in rows {
        s.push_str(&format!(
            "{:>9} {:>6}  {:>9} {:>9} {:>9} {:>9} {:>9}  {:>9} {:>9}\n",
            format::duration(r.os_wait_ns),
            r.n,
            format::ns(r.overshoot_p50_ns),
            format::ns(r.overshoot_p90_ns),
            format::ns(r.overshoot_p99_ns),
            format::ns(r.overshoot_p999_ns),
            format::ns(r.overshoot_max_ns),
            format::ns(i64::try_from(r.thread_cpu_p50_ns).unwrap_or(i64::MAX)),
            format::ns_f64(r.thread_cpu_mean_ns),
        ));
    }
    s
}

/// The oracle's table: per sleep and tail target, the least CPU and the plan.
pub fn render_oracle(plans: &[OraclePlan], draws: usize) -> String {
    let mut s = format!(
        "oracle ({draws} draws): the least CPU a plan of one or two OS waits then a spin needs\n"
    );
    s.push_str(&format!(
        "{:>9} {:>7} {:>8}  plan (margins in µs)\n",
        "sleep", "late ≤", "CPU %"
    ));
    for p in plans {
        let late = match p.plan {
            trace::OracleChoice::Spin => String::new(),
            _ => format!(" (late {:.2}%)", p.late_share * 100.0),
        };
        // The oracle names this plan by its margin; say what it does.
        let plan = match p.plan {
            trace::OracleChoice::OneWait { margin_ns }
                if p.duration_ns.saturating_sub(margin_ns) < keeptime::MIN_OS_WAIT_NS =>
            {
                format!("spin ({} leaves no OS wait of 5 µs or more)", p.plan)
            }
            plan => plan.to_string(),
        };
        s.push_str(&format!(
            "{:>9} {:>6}% {:>8.2}  {}{}\n",
            format::duration(p.duration_ns),
            tail_text(p.tail_share),
            p.cpu_share * 100.0,
            plan,
            late
        ));
    }
    s
}

fn tail_text(t: f64) -> String {
    let p = t * 100.0;
    if p >= 1.0 {
        format!("{p:.1}")
    } else {
        format!("{p}")
    }
}

/// `--lengths` item: an OS-wait length from 1 µs to 10 s.
pub fn parse_length(s: &str) -> Result<u64, String> {
    let q = crate::duration::quoted(s);
    let ns = crate::duration::parse_ns(s).map_err(|e| e.to_string())?;
    if (1_000..=10_000_000_000).contains(&ns) {
        Ok(ns)
    } else {
        Err(format!("OS-wait length {q} is out of range: 1us to 10s"))
    }
}

/// `--seconds`: the recording's length, 1 ms to 1 h (a bare number is seconds).
pub fn parse_seconds(s: &str) -> Result<u64, String> {
    let q = crate::duration::quoted(s);
    let ns = crate::duration::parse_ns_default_seconds(s).map_err(|e| e.to_string())?;
    if (1_000_000..=3_600_000_000_000).contains(&ns) {
        Ok(ns)
    } else {
        Err(format!(
            "recording time {q} is out of range: 0.001 to 3600 seconds"
        ))
    }
}

/// `--after-waits`: 0 to 10 000 (each of the four lengths waits 10.24 ms
/// first: 10 000 of each take about 7 minutes).
pub fn parse_after_waits(s: &str) -> Result<u32, String> {
    let q = crate::duration::quoted(s);
    match s.trim().parse::<u32>() {
        Ok(n) if n <= 10_000 => Ok(n),
        _ => Err(format!(
            "after-waits {q}: expected a whole number from 0 to 10000, e.g. 70"
        )),
    }
}

/// `--rounds`: 1 to 100.
pub fn parse_rounds(s: &str) -> Result<u32, String> {
    let q = crate::duration::quoted(s);
    match s.trim().parse::<u32>() {
        Ok(n) if (1..=100).contains(&n) => Ok(n),
        _ => Err(format!(
            "rounds {q}: expected a whole number from 1 to 100, e.g. 3"
        )),
    }
}

/// `--draws`: 1 to 10 000 000.
pub fn parse_draws(s: &str) -> Result<usize, String> {
    let q = crate::duration::quoted(s);
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=10_000_000).contains(&n) => Ok(n),
        _ => Err(format!(
            "draws {q}: expected a whole number from 1 to 10000000, e.g. 4000"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_wait_plan_with_no_room_for_the_wait_reads_as_a_spin() {
        let plan = |margin_ns| OraclePlan {
            duration_ns: 100_000,
            tail_share: 0.001,
            cpu_share: 1.0,
            late_share: 0.0,
            plan: trace::OracleChoice::OneWait { margin_ns },
        };
        let text = render_oracle(&[plan(100_000), plan(95_000)], 10);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[2],
            "   100 µs    0.1%   100.00  spin (one OS wait, margin 100 leaves no OS wait of 5 µs or more) (late 0.00%)"
        );
        assert_eq!(
            lines[3],
            "   100 µs    0.1%   100.00  one OS wait, margin 95 (late 0.00%)"
        );
    }

    #[test]
    fn record_options_are_range_checked() {
        assert_eq!(parse_length("5us"), Ok(5_000));
        assert!(parse_length("0ns").unwrap_err().contains("1us to 10s"));
        assert!(parse_length("-5us").is_err());
        assert_eq!(parse_seconds("12"), Ok(12_000_000_000));
        assert_eq!(parse_seconds("500ms"), Ok(500_000_000));
        assert!(parse_seconds("0").unwrap_err().contains("out of range"));
        assert_eq!(parse_rounds("3"), Ok(3));
        assert!(parse_rounds("0").is_err());
        assert!(parse_draws("0").is_err());
    }
}
