//! `keeptime latency` options and their value parsers. Every bad value is one
//! line naming it and what is accepted (exit 2), found before any thread starts.

use super::Method;
use crate::duration;
use crate::parse::positive_duration;
use clap::Args;

/// Longest accepted interval.
pub const MAX_INTERVAL_NS: u64 = 3_600_000_000_000;
/// Most measuring threads per method.
pub const MAX_THREADS: u32 = 1024;
/// Largest `--histogram` bound: 1 s, i.e. one million 1 µs buckets per thread.
pub const MAX_HISTOGRAM_US: u64 = 1_000_000;

pub(crate) const LATENCY_ABOUT: &str = "\
Periodic wake-up latency, measured the way rt-tests' cyclictest does.

Each thread reads CLOCK_MONOTONIC once (start) and waits for the deadlines
start + k·interval (k = 1, 2, …). A sample is

  latency = first clock reading after the wake-up − deadline

A wake-up later than one interval is an overrun; deadlines that passed
meanwhile are skipped, as cyclictest skips them. Methods (--method):

  clock-nanosleep     cyclictest's loop: clock_nanosleep(TIMER_ABSTIME) to each
                      deadline (cyclictest -n, its default), thread's own timer slack
  keeptime            keeptime::Ticker with the default sleeper (Mode::Exact)
  keeptime-efficient  keeptime::Ticker with Mode::Efficient (may wake early)
  spin                a busy loop on the clock to each deadline (one CPU per thread)

Methods run one after another, each for --duration. Ctrl-C ends the run
early; what was measured is still printed and exported.";

/// `keeptime latency` options.
#[derive(Debug, Args)]
pub struct LatencyArgs {
    /// Period of every measuring thread, e.g. 1ms or 250us (cyclictest -i).
    #[arg(long, value_name = "DURATION", default_value = "1ms", value_parser = parse_interval, allow_hyphen_values = true)]
    pub interval: u64,

    /// How long each method runs, e.g. 30s (cyclictest -D).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_run_duration, allow_hyphen_values = true)]
    pub duration: u64,

    /// Measuring threads per method, 1 to 1024 [default: one per CPU this
    /// process may run on] (cyclictest -t).
    #[arg(long, value_name = "N", value_parser = parse_threads, allow_hyphen_values = true)]
    pub threads: Option<u32>,

    /// Methods, comma-separated: clock-nanosleep, keeptime, keeptime-efficient,
    /// spin [default: clock-nanosleep].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_method, allow_hyphen_values = true)]
    pub method: Vec<Method>,

    /// Run the measuring threads under SCHED_FIFO at this priority, 1–99
    /// (cyclictest -p); refused without CAP_SYS_NICE or RLIMIT_RTPRIO: a warning.
    #[arg(long, value_name = "N", value_parser = crate::parse::priority, allow_hyphen_values = true)]
    pub priority: Option<u32>,

    /// Lock all memory with mlockall(MCL_CURRENT|MCL_FUTURE) (cyclictest -m).
    #[arg(long)]
    pub mlock: bool,

    /// Hold /dev/cpu_dma_latency open at this many µs while running
    /// (cyclictest --latency; 0 keeps CPUs out of deep idle states).
    #[arg(long, value_name = "US", value_parser = parse_dma_latency, allow_hyphen_values = true)]
    pub dma_latency: Option<u32>,

    /// Pin threads: alone, thread N on the N-th allowed CPU; with a list
    /// (e.g. 0,2-3), round-robin over it (cyclictest -a).
    // No allow_hyphen_values: `--affinity --threads 2` must leave `--threads` a flag.
    #[arg(long, value_name = "CPUSET", num_args = 0..=1, default_missing_value = "", value_parser = parse_cpu_set)]
    pub affinity: Option<CpuSet>,

    /// Print cyclictest's histogram: 1 µs buckets up to this bound (at least
    /// the interval), then the overflow count (cyclictest -h).
    #[arg(long, value_name = "DURATION", value_parser = parse_histogram, allow_hyphen_values = true)]
    pub histogram: Option<u64>,

    /// Write the results in the keeptime bench format (spec/bench-result.md,
    /// periodic schedule); `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<String>,

    /// No live line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--affinity`: all allowed CPUs in order, or a given list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuSet {
    /// `--affinity` alone.
    Each,
    /// `--affinity LIST`.
    List(Vec<u32>),
}

fn quoted(s: &str) -> String {
    duration::quoted(s)
}

/// `--interval`: 1 ns to 1 h.
pub fn parse_interval(s: &str) -> Result<u64, String> {
    let ns = positive_duration(s, "interval", "1ms")?;
    if ns > MAX_INTERVAL_NS {
        return Err(format!("interval {} is too long: at most 1h", quoted(s)));
    }
    Ok(ns)
}

/// `--duration`: any positive duration.
pub fn parse_run_duration(s: &str) -> Result<u64, String> {
    positive_duration(s, "duration", "30s")
}

/// `--histogram`: a positive duration up to 1 s, rounded up to whole µs.
pub fn parse_histogram(s: &str) -> Result<u64, String> {
    let ns = positive_duration(s, "histogram bound", "400us")?;
    let us = ns.div_ceil(1000);
    if us > MAX_HISTOGRAM_US {
        return Err(format!(
            "histogram bound {} is too large: at most 1s (1 000 000 buckets of 1 µs)",
            quoted(s)
        ));
    }
    Ok(us)
}

/// `--threads`: 1 to [`MAX_THREADS`].
pub fn parse_threads(s: &str) -> Result<u32, String> {
    let q = quoted(s);
    match s.trim().parse::<i64>() {
        Ok(n) if (1..=i64::from(MAX_THREADS)).contains(&n) => Ok(n as u32),
        Ok(_) => Err(format!(
            "thread count {q} is out of range: expected 1 to {MAX_THREADS}"
        )),
        Err(_) => Err(format!(
            "invalid thread count {q}: expected a whole number from 1 to {MAX_THREADS}"
        )),
    }
}

/// `--method` item.
pub fn parse_method(s: &str) -> Result<Method, String> {
    s.parse()
}

/// `--dma-latency`: whole µs, 0 to `i32::MAX` (the kernel's `s32`).
pub fn parse_dma_latency(s: &str) -> Result<u32, String> {
    let q = quoted(s);
    let max = keeptime::pmqos::MAX_LATENCY_US;
    match s.trim().parse::<i128>() {
        Ok(n) if (0..=i128::from(max)).contains(&n) => Ok(n as u32),
        Ok(_) => Err(format!(
            "dma latency {q} is out of range: expected whole µs from 0 to {max}"
        )),
        Err(_) => Err(format!(
            "invalid dma latency {q}: expected whole µs from 0 to {max}, e.g. 0"
        )),
    }
}

/// `--affinity` value: empty (each CPU in turn) or a list like `0,2-3`.
pub fn parse_cpu_set(s: &str) -> Result<CpuSet, String> {
    if s.trim().is_empty() {
        return Ok(CpuSet::Each);
    }
    let q = quoted(s);
    let bad = || format!("invalid CPU list {q}: expected CPU numbers and ranges, e.g. 0,2-3");
    let mut cpus = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let a: u32 = a.trim().parse().map_err(|_| bad())?;
        let b: u32 = b.trim().parse().map_err(|_| bad())?;
        if a > b || b - a > 4096 {
            return Err(bad());
        }
        cpus.extend(a..=b);
    }
    if cpus.is_empty() {
        return Err(bad());
    }
    Ok(CpuSet::List(cpus))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bad_value_is_named_with_what_is_accepted() {
        assert_eq!(
            parse_interval("0ms").unwrap_err(),
            "zero interval '0ms': expected a positive duration, e.g. 1ms"
        );
        assert_eq!(
            parse_interval("-1ms").unwrap_err(),
            "negative interval '-1ms': expected a positive duration, e.g. 1ms"
        );
        assert_eq!(
            parse_interval("NaN").unwrap_err(),
            "interval 'NaN' is not a number: expected a positive duration, e.g. 1ms"
        );
        assert!(parse_run_duration("forever")
            .unwrap_err()
            .starts_with("duration: "));
        assert_eq!(
            parse_threads("0").unwrap_err(),
            "thread count '0' is out of range: expected 1 to 1024"
        );
        assert!(parse_method("cyclic")
            .unwrap_err()
            .contains("clock-nanosleep, keeptime, keeptime-efficient or spin"));
        assert_eq!(
            parse_dma_latency("2147483648").unwrap_err(),
            "dma latency '2147483648' is out of range: expected whole µs from 0 to 2147483647"
        );
        assert_eq!(parse_dma_latency("0"), Ok(0));
        assert_eq!(parse_histogram("400us"), Ok(400));
        assert_eq!(parse_histogram("1500ns"), Ok(2));
        assert_eq!(parse_interval("250us"), Ok(250_000));
        assert_eq!(parse_cpu_set(""), Ok(CpuSet::Each));
        assert_eq!(parse_cpu_set("3-5,0"), Ok(CpuSet::List(vec![3, 4, 5, 0])));
        assert!(parse_cpu_set("5-3").is_err());
    }
}
