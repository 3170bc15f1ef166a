//! `keeptime bench`'s command line: its options and the values only it
//! takes (method names, sample counts, crowd sizes).

use super::crowd::MAX_CROWD_THREADS;
use super::methods::{Method, UnknownMethod};
use super::plan::MAX_SAMPLES;
use crate::duration::quoted;
use crate::parse;
use clap::Args;

pub(crate) const BENCH_ABOUT: &str = "\
Compare every way of waiting on this machine: accuracy and CPU cost.

Each sample reads CLOCK_MONOTONIC, asks the method to wait until that reading
plus the duration (the deadline), and records

  error = the caller's first clock reading after the call returns − deadline
          (signed ns; < 0 is early), for every method alike

Per method and duration: min, mean, σ, p50, p90, p99, p99.9, max of the
error, the number of early returns, the return (caller's reading − the
method's own last reading, p50/p90, for methods that end on a reading of
their own: spins and keeptime), and

  CPU % = thread CPU time (CLOCK_THREAD_CPUTIME_ID) ÷ wall time

over the measured samples. Every method runs after a warm-up, with its timer
slack set explicitly (see --list). By default the whole run fits in a time
budget of about 55 s with at least 200–2000 samples per cell. The methods
that learn from their own waits (keeptime's exact and efficient sleepers,
the compensated sleep) warm up for about 1 s per cell, and for at least 300
waits where those take at most 5 s (at most 3000 waits), the others for
about 50 ms: a fresh keeptime sleeper spends several times its later CPU
while it learns (`make bench-convergence` measures that).";

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
        value_parser = parse::wait_duration,
        allow_hyphen_values = true
    )]
    pub durations: Vec<u64>,

    /// Exact number of measured samples per method and duration (by default
    /// chosen to fit the time budget).
    #[arg(long, value_name = "N", value_parser = parse_samples, allow_hyphen_values = true)]
    pub samples: Option<u64>,

    /// Warm-up waits per method and duration before measuring (by default
    /// about 50 ms worth, 10–1000; for the methods that learn, about 1 s
    /// worth but at least 300 where they fit in 5 s, 10–3000).
    #[arg(long, value_name = "N", value_parser = parse::count, allow_hyphen_values = true)]
    pub warmup: Option<u64>,

    /// Overall time limit, e.g. 30s; sample counts are scaled down to fit
    /// [default: 55s, or none with --samples].
    #[arg(long, value_name = "DURATION", value_parser = parse::budget, allow_hyphen_values = true)]
    pub budget: Option<u64>,

    /// The share of keeptime's sleeps allowed to end late because the OS woke
    /// the thread after the deadline: relaxed (5 %), balanced (1 %), strict
    /// (0.1 %), a share such as 0.002, or a percentage such as 0.5%
    /// [default: balanced].
    #[arg(long, value_name = "TARGET", value_parser = parse::tail_target, allow_hyphen_values = true)]
    pub tail_target: Option<keeptime::TailTarget>,

    /// Pin the measuring thread to this CPU (sched_setaffinity).
    #[arg(long, value_name = "CPU", value_parser = parse::cpu, allow_hyphen_values = true)]
    pub pin: Option<u32>,

    /// Run the measuring thread under SCHED_FIFO at this priority (1–99);
    /// needs CAP_SYS_NICE or an RLIMIT_RTPRIO (ulimit -r) of at least N.
    #[arg(long, value_name = "N", value_parser = parse::priority, allow_hyphen_values = true)]
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
    #[arg(long, value_name = "US", value_parser = parse::idle_hint, allow_hyphen_values = true)]
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

/// `--methods` item.
pub fn parse_method(s: &str) -> Result<Method, String> {
    s.parse().map_err(|e: UnknownMethod| e.to_string())
}

/// `--samples`: 1 to [`MAX_SAMPLES`].
pub fn parse_samples(s: &str) -> Result<u64, String> {
    let q = quoted(s);
    match parse::whole(s, "sample count", "1000")? {
        0 => Err(format!(
            "zero samples {q}: at least 1 sample is needed, e.g. --samples 1000"
        )),
        n if n > MAX_SAMPLES => Err(format!(
            "sample count {q} is too large: at most {MAX_SAMPLES} per cell"
        )),
        n => Ok(n),
    }
}

/// `--crowd`: 0 (off) to [`MAX_CROWD_THREADS`] threads.
pub fn parse_crowd(s: &str) -> Result<u64, String> {
    let q = quoted(s);
    let too_large = || {
        format!(
            "crowd size {q} is too large: at most {MAX_CROWD_THREADS} threads (0 turns the crowd off)"
        )
    };
    match parse::whole(s, "crowd size", "16") {
        Ok(n) if n <= MAX_CROWD_THREADS => Ok(n),
        Ok(_) => Err(too_large()),
        Err(e) if e.contains("too large") => Err(too_large()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_values_name_the_value() {
        assert!(parse_samples("0").unwrap_err().contains("'0'"));
        assert!(!parse_samples("1\n2").unwrap_err().contains('\n'));
        assert!(parse_samples("-5").unwrap_err().contains("negative"));
        assert!(parse_samples("abc").unwrap_err().contains("'abc'"));
        assert!(parse_samples("99999999999999999999999")
            .unwrap_err()
            .contains("too large"));
        assert_eq!(
            parse_samples("500001").unwrap_err(),
            "sample count '500001' is too large: at most 500000 per cell"
        );
        assert!(parse_method("nope").unwrap_err().contains("'nope'"));
        assert_eq!(parse_method(" Keeptime"), Ok(Method::Keeptime));
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
    }
}
