//! The command line, and nothing else: clap definitions and value parsers.

use crate::bench::plan::MAX_DURATION_NS;
use crate::bench::Method;
use crate::duration::{self, DurationError};
use clap::{Args, Parser, Subcommand};

/// Wait exactly as long as you asked, at the CPU cost of a sleep, and know
/// what this machine's clocks and timers really do.
#[derive(Debug, Parser)]
#[command(
    name = "keeptime",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare every way of waiting on this machine: accuracy and CPU cost.
    #[command(long_about = BENCH_ABOUT)]
    Bench(BenchArgs),
    /// Inspect the machine's clocks and timers: resolution, granularity,
    /// read cost, monotonicity, clocksource, timer slack, idle states.
    Clocks(ClocksArgs),
    /// Sleep precisely (keeptime's exact mode); arguments add up, like GNU sleep.
    Sleep(SleepArgs),
    /// Periodic wake-up latency, measured the way cyclictest does.
    #[command(long_about = crate::latency::args::LATENCY_ABOUT)]
    Latency(crate::latency::LatencyArgs),
    /// Draw bench result files (any runtime's --export-json) as one
    /// self-contained HTML page: distributions, CPU trade-off, tables.
    Report(ReportArgs),
    /// Record how late this machine's OS waits wake (a trace file), or read
    /// one; print per-length overshoots and the oracle's cheapest plans.
    #[command(long_about = TRACE_ABOUT)]
    Trace(TraceArgs),
}

const TRACE_ABOUT: &str = "\
Record how late this machine's OS waits wake (a trace file), or read one;
print per-length overshoots and the oracle's cheapest plans.

Recording: for each round (each shuffles the length order), for each length L,
a block of consecutive clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) waits
until issue time + L with 1 ns timer slack, each recorded as

  overshoot = first clock reading after the wait − target
  thread CPU = CLOCK_THREAD_CPUTIME_ID after − before the wait

The oracle replays the trace and finds, per sleep and tail target, the least
CPU any plan of one or two OS waits then a spin needs while at most that share
of sleeps end late.";

const BENCH_ABOUT: &str = "\
Compare every way of waiting on this machine: accuracy and CPU cost.

Each sample reads CLOCK_MONOTONIC, asks the method to wait until that reading
plus the duration (the deadline), and records

  error = first clock reading after the wait − deadline   (signed ns; < 0 is early)

Per method and duration: min, mean, σ, p50, p90, p99, p99.9, max of the
error, the number of early returns, and

  CPU % = thread CPU time (CLOCK_THREAD_CPUTIME_ID) ÷ wall time

over the measured samples. Every method runs after a warm-up, with its timer
slack set explicitly (see --list). By default the whole run fits in a time
budget of about 45 s with at least 200–2000 samples per cell.";

/// `keeptime bench` options.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// List the methods, one line each, and exit.
    #[arg(long)]
    pub list: bool,

    /// Methods to run, comma-separated (default: all; see --list).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = parse_method,
        allow_hyphen_values = true
    )]
    pub methods: Vec<Method>,

    /// Wait durations, comma-separated, with units ns, us (µs), ms, s
    /// [default: 10ms,1ms,100us,10us].
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = parse_bench_duration,
        allow_hyphen_values = true
    )]
    pub durations: Vec<u64>,

    /// Exact number of measured samples per method and duration (by default
    /// chosen to fit the time budget).
    #[arg(long, value_name = "N", value_parser = parse_samples, allow_hyphen_values = true)]
    pub samples: Option<u64>,

    /// Warm-up waits per method and duration before measuring (by default
    /// about 50 ms worth, 10–1000).
    #[arg(long, value_name = "N", value_parser = parse_count, allow_hyphen_values = true)]
    pub warmup: Option<u64>,

    /// Overall time limit, e.g. 30s; sample counts are scaled down to fit
    /// [default: 45s, or none with --samples].
    #[arg(long, value_name = "DURATION", value_parser = parse_budget, allow_hyphen_values = true)]
    pub budget: Option<u64>,

    /// The share of keeptime's sleeps allowed to end late because the OS woke
    /// the thread after the deadline: relaxed (5 %), balanced (1 %), strict
    /// (0.1 %), a share such as 0.002, or a percentage such as 0.5%
    /// [default: balanced].
    #[arg(long, value_name = "TARGET", value_parser = parse_tail_target, allow_hyphen_values = true)]
    pub tail_target: Option<keeptime::TailTarget>,

    /// Pin the measuring thread to this CPU (sched_setaffinity).
    #[arg(long, value_name = "CPU", value_parser = parse_cpu, allow_hyphen_values = true)]
    pub pin: Option<u32>,

    /// Run the measuring thread under SCHED_FIFO at this priority (1–99);
    /// needs CAP_SYS_NICE or an RLIMIT_RTPRIO (ulimit -r) of at least N.
    #[arg(long, value_name = "N", value_parser = parse_priority, allow_hyphen_values = true)]
    pub priority: Option<u32>,

    /// After the tables, a crowd block: N threads each sleeping in a loop at
    /// once for about 2 s per method (or --samples sleeps per thread), for
    /// keeptime, clock-nanosleep-abs and spin-pause; p50, p99, max, early,
    /// share late by more than 2 µs, process CPU. Each sleep is the first
    /// --durations value, or 1 ms without --durations. 0 = off [default: 0].
    #[arg(long, value_name = "N", value_parser = parse_crowd, allow_hyphen_values = true)]
    pub crowd: Option<u64>,

    /// keeptime's sleepers ask the kernel to keep CPU wake-up latency at most
    /// US µs while they run (a PM QoS request on /dev/cpu_dma_latency, held
    /// only during keeptime's own cells and crowd, so the baselines run
    /// without it). Price: idle CPUs poll instead of sleeping (power; on a
    /// VM the host sees the vCPU busy). Refused (not root, no device): one
    /// warning, the run goes on without it. 0 to 2147483647.
    #[arg(long, value_name = "US", value_parser = parse_idle_hint, allow_hyphen_values = true)]
    pub idle_hint: Option<keeptime::IdleHint>,

    /// Write the results in the keeptime bench format (spec/bench-result.md); `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<String>,

    /// Write one CSV row per method and duration; `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<String>,

    /// Write the tables as Markdown; `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<String>,

    /// After the run, write the results as one self-contained HTML page
    /// (as `keeptime report` draws them).
    #[arg(long, value_name = "FILE")]
    pub report: Option<std::path::PathBuf>,

    /// No progress bar (it is also hidden when stderr is not a terminal).
    #[arg(long, short)]
    pub quiet: bool,
}

/// `keeptime clocks` options.
#[derive(Debug, Args)]
pub struct ClocksArgs {
    /// Print the whole report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `keeptime report` options.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Bench result files (spec/bench-result.md) from any runtime; several
    /// are drawn side by side.
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    pub files: Vec<std::path::PathBuf>,

    /// The HTML file to write.
    #[arg(short, long, value_name = "OUT.html")]
    pub output: std::path::PathBuf,
}

/// `keeptime sleep` options.
#[derive(Debug, Args)]
pub struct SleepArgs {
    /// How long: a number and a unit (ns, us, µs, ms, s, min, h); a bare
    /// number is seconds. Several durations add up.
    #[arg(
        value_name = "DURATION",
        required = true,
        num_args = 1..,
        value_parser = parse_sleep_duration,
        allow_negative_numbers = true
    )]
    pub durations: Vec<u64>,

    /// Print how late it woke after the deadline.
    #[arg(long, short)]
    pub verbose: bool,
}

/// `keeptime trace` options.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["output", "oracle"])))]
pub struct TraceArgs {
    /// Record a trace to FILE (gzip-compressed when it ends in .gz).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,

    /// Read an existing trace FILE (CSV or CSV.gz) instead of recording.
    #[arg(long, value_name = "FILE")]
    pub oracle: Option<std::path::PathBuf>,

    /// How long to record, e.g. 12 or 500ms (a bare number is seconds) [default: 12].
    #[arg(long, value_name = "N", value_parser = crate::trace::parse_seconds,
          allow_hyphen_values = true, conflicts_with = "oracle")]
    pub seconds: Option<u64>,

    /// OS-wait lengths to record, comma-separated [default: 5us,10us,…,20.48ms doubling].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = crate::trace::parse_length,
          allow_hyphen_values = true, conflicts_with = "oracle")]
    pub lengths: Vec<u64>,

    /// Passes over all lengths, each in a shuffled order [default: 3].
    #[arg(long, value_name = "N", value_parser = crate::trace::parse_rounds,
          allow_hyphen_values = true, conflicts_with = "oracle")]
    pub rounds: Option<u32>,

    /// Sleep durations for the oracle, comma-separated [default: 100us,250us,1ms,2.5ms,10ms].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_bench_duration,
          allow_hyphen_values = true)]
    pub durations: Vec<u64>,

    /// Shares of late sleeps allowed, comma-separated fractions or
    /// percentages [default: 5%,1%,0.1%].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = crate::trace::parse_tail,
          allow_hyphen_values = true)]
    pub tails: Vec<f64>,

    /// Draws per plan the oracle replays [default: 4000].
    #[arg(long, value_name = "N", value_parser = crate::trace::parse_draws, allow_hyphen_values = true)]
    pub draws: Option<usize>,

    /// No progress bar (it is also hidden when stderr is not a terminal).
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--methods` item.
pub fn parse_method(s: &str) -> Result<Method, String> {
    s.parse()
        .map_err(|e: crate::bench::methods::UnknownMethod| e.to_string())
}

/// `--durations` item: 1 ns to 1 h.
pub fn parse_bench_duration(s: &str) -> Result<u64, String> {
    let q = duration::quoted(s);
    let too_long = || format!("duration {q} is too long for a bench: at most 1h per wait");
    let ns = duration::parse_ns(s).map_err(|e| match e {
        DurationError::TooLong(_) => too_long(),
        e => e.to_string(),
    })?;
    if ns == 0 {
        return Err(format!(
            "zero duration {q}: bench durations must be at least 1ns, e.g. 10us"
        ));
    }
    if ns > MAX_DURATION_NS {
        return Err(too_long());
    }
    Ok(ns)
}

/// `sleep` operand: any duration, bare numbers in seconds.
pub fn parse_sleep_duration(s: &str) -> Result<u64, String> {
    duration::parse_ns_default_seconds(s).map_err(|e: DurationError| e.to_string())
}

/// `--budget`: a positive duration.
pub fn parse_budget(s: &str) -> Result<u64, String> {
    let q = duration::quoted(s);
    match duration::parse_ns(s) {
        Ok(0) => Err(format!(
            "zero budget {q}: the budget must be more than 0, e.g. 30s"
        )),
        Ok(ns) => Ok(ns),
        Err(e) => Err(e.to_string()),
    }
}

/// A non-negative whole number, with messages for the usual mistakes.
fn parse_whole(s: &str, what: &str, example: &str) -> Result<u64, String> {
    let q = duration::quoted(s);
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!(
            "negative {what} {q}: expected a whole number, e.g. {example}"
        ));
    }
    t.parse::<u64>().map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => {
            format!("{what} {q} is too large: at most {}", u64::MAX)
        }
        _ => format!("invalid {what} {q}: expected a whole number, e.g. {example}"),
    })
}

/// `--samples`: at least 1.
pub fn parse_samples(s: &str) -> Result<u64, String> {
    let q = duration::quoted(s);
    match parse_whole(s, "sample count", "1000")? {
        0 => Err(format!(
            "zero samples {q}: at least 1 sample is needed, e.g. --samples 1000"
        )),
        n if n > crate::bench::plan::MAX_SAMPLES => Err(format!(
            "sample count {q} is too large: at most {} per cell",
            crate::bench::plan::MAX_SAMPLES
        )),
        n => Ok(n),
    }
}

/// `--crowd`: 0 (off) to [`MAX_CROWD_THREADS`](crate::bench::crowd::MAX_CROWD_THREADS) threads.
pub fn parse_crowd(s: &str) -> Result<u64, String> {
    let q = duration::quoted(s);
    let max = crate::bench::crowd::MAX_CROWD_THREADS;
    match parse_whole(s, "crowd size", "16") {
        Ok(n) if n <= max => Ok(n),
        Ok(_) => Err(format!(
            "crowd size {q} is too large: at most {max} threads (0 turns the crowd off)"
        )),
        Err(e) if e.contains("too large") => Err(format!(
            "crowd size {q} is too large: at most {max} threads (0 turns the crowd off)"
        )),
        Err(e) => Err(e),
    }
}

/// `--warmup`: 0 or more.
pub fn parse_count(s: &str) -> Result<u64, String> {
    parse_whole(s, "warm-up count", "20")
}

/// `--pin`: a CPU number.
pub fn parse_cpu(s: &str) -> Result<u32, String> {
    let q = duration::quoted(s);
    let n = parse_whole(s, "CPU number", "0")?;
    u32::try_from(n).map_err(|_| format!("CPU number {q} is too large"))
}

/// `--priority`: 1–99.
pub fn parse_priority(s: &str) -> Result<u32, String> {
    let q = duration::quoted(s);
    let n = parse_whole(s, "priority", "50")?;
    if (1..=99).contains(&n) {
        Ok(n as u32)
    } else {
        Err(format!(
            "priority {q} is out of range: SCHED_FIFO priorities are 1 to 99"
        ))
    }
}

/// `--idle-hint`: whole µs, 0 to 2147483647 (an optional `us`/`µs` suffix).
pub fn parse_idle_hint(s: &str) -> Result<keeptime::IdleHint, String> {
    s.trim().parse().map_err(|e: keeptime::Error| e.to_string())
}

/// `--tail-target`: a preset name, a share in (0, 1) or a percentage.
pub fn parse_tail_target(s: &str) -> Result<keeptime::TailTarget, String> {
    s.parse().map_err(|_| {
        format!(
            "tail target {} is not accepted: use relaxed (5 %), balanced (1 %), strict (0.1 %), a share such as 0.01 (strictly between 0 and 1, at least 0.000001) or a percentage such as 1%",
            duration::quoted(s)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn value_errors_name_the_value() {
        assert!(parse_samples("0").unwrap_err().contains("'0'"));
        assert!(!parse_samples("1\n2").unwrap_err().contains('\n'));
        assert!(parse_samples("-5").unwrap_err().contains("negative"));
        assert!(parse_samples("abc").unwrap_err().contains("'abc'"));
        assert!(parse_samples("99999999999999999999999")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_priority("0").unwrap_err().contains("1 to 99"));
        assert!(parse_bench_duration("0ms")
            .unwrap_err()
            .contains("at least 1ns"));
        assert!(parse_bench_duration("2h").unwrap_err().contains("1h"));
        assert!(parse_budget("0s").unwrap_err().contains("more than 0"));
        assert!(parse_method("nope").unwrap_err().contains("'nope'"));
        assert_eq!(parse_crowd("0"), Ok(0));
        assert_eq!(parse_crowd("16"), Ok(16));
        assert_eq!(parse_crowd("1024"), Ok(1024));
        assert_eq!(
            parse_crowd("1025").unwrap_err(),
            "crowd size '1025' is too large: at most 1024 threads (0 turns the crowd off)"
        );
        assert!(parse_crowd("99999999999999999999999")
            .unwrap_err()
            .contains("at most 1024 threads"));
        assert_eq!(
            parse_crowd("-2").unwrap_err(),
            "negative crowd size '-2': expected a whole number, e.g. 16"
        );
        assert_eq!(
            parse_crowd("many").unwrap_err(),
            "invalid crowd size 'many': expected a whole number, e.g. 16"
        );
        assert_eq!(parse_sleep_duration("1.5"), Ok(1_500_000_000));
    }
}
