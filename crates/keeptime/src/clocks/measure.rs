//! Reading a clock back to back: read cost, smallest step, repeats and
//! monotonicity. Works on any `FnMut() -> u64` reader, so the same code
//! measures `clock_gettime` clocks, the TSC and `Instant`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use super::{ClockInfo, InspectOptions};

/// Reads done between two looks at the time limit.
const CHUNK: usize = 256;

/// Reads done before any measurement, so the first timed batch doesn't pay
/// for faulting in the vDSO page or warming the caches.
const WARM_UP_READS: usize = 64;

/// Steps a clock must show before its granularity is trusted; a coarse clock
/// is read for longer (within the time limit) until it has stepped this often.
pub const MIN_STEPS: u64 = 3;

/// Online statistics over a sequence of successive clock readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct StepCounter {
    prev: Option<u64>,
    /// Successive pairs examined (readings − 1).
    pub(crate) pairs: u64,
    /// Pairs where the value did not change.
    pub(crate) repeats: u64,
    /// Pairs where the value went up.
    pub(crate) steps: u64,
    /// Pairs where the value went down.
    pub(crate) violations: u64,
    /// The smallest upward step.
    pub(crate) min_step: Option<u64>,
}

impl StepCounter {
    /// Takes the next reading.
    #[inline]
    pub(crate) fn push(&mut self, value: u64) {
        if let Some(prev) = self.prev {
            self.pairs += 1;
            if value == prev {
                self.repeats += 1;
            } else if value > prev {
                self.steps += 1;
                let step = value - prev;
                self.min_step = Some(self.min_step.map_or(step, |m| m.min(step)));
            } else {
                self.violations += 1;
            }
        }
        self.prev = Some(value);
    }

    /// Share of pairs that repeated a value; 0 with no pairs.
    pub(crate) fn repeat_fraction(&self) -> f64 {
        if self.pairs == 0 {
            0.0
        } else {
            self.repeats as f64 / self.pairs as f64
        }
    }
}

/// What reading one clock back to back showed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Measurement {
    /// Median ns per read over the timed batches.
    pub(crate) read_cost_ns: f64,
    /// Successive-read statistics, in the clock's own units.
    pub(crate) steps: StepCounter,
}

impl ClockInfo {
    /// The entry of a clock measured by [`measure`].
    pub(crate) fn measured(
        name: &str,
        description: &str,
        id: Option<i32>,
        resolution_ns: Option<u64>,
        m: &Measurement,
    ) -> Self {
        ClockInfo {
            name: name.to_string(),
            description: description.to_string(),
            id,
            resolution_ns,
            granularity_ns: m.steps.min_step,
            granularity_ticks: None,
            repeat_fraction: m.steps.repeat_fraction(),
            samples: m.steps.pairs,
            read_cost_ns: m.read_cost_ns,
            monotonic_violations: m.steps.violations,
            frequency_hz: None,
            frequency_source: None,
            available: true,
            error: None,
        }
    }
}

/// Measures `read`: timed batches for read cost, then successive reads for
/// granularity, within `opts.time_limit_per_clock`.
pub(crate) fn measure(mut read: impl FnMut() -> u64, opts: &InspectOptions) -> Measurement {
    let limit = clamp_limit(opts.time_limit_per_clock);
    let start = Instant::now();
    for _ in 0..WARM_UP_READS {
        black_box(read());
    }
    let read_cost_ns = read_cost(&mut read, opts, start + limit / 2);
    let steps = successive_reads(&mut read, opts, start + limit);
    Measurement {
        read_cost_ns,
        steps,
    }
}

/// Median over batches of (batch wall time / reads per batch). At least one
/// batch runs; more run while `deadline` has not passed.
fn read_cost(read: &mut impl FnMut() -> u64, opts: &InspectOptions, deadline: Instant) -> f64 {
    let per_batch = opts.reads_per_batch.max(1);
    let mut costs = Vec::with_capacity(opts.batches.max(1));
    while costs.len() < opts.batches.max(1) {
        let t0 = Instant::now();
        for _ in 0..per_batch {
            black_box(read());
        }
        let t1 = Instant::now();
        costs.push(t1.duration_since(t0).as_nanos() as f64 / per_batch as f64);
        if t1 >= deadline {
            break;
        }
    }
    median(&mut costs)
}

/// Reads at least `opts.granularity_reads` times (rounded up to a chunk),
/// and longer until the clock has stepped [`MIN_STEPS`] times, stopping at
/// `deadline` either way.
fn successive_reads(
    read: &mut impl FnMut() -> u64,
    opts: &InspectOptions,
    deadline: Instant,
) -> StepCounter {
    let mut counter = StepCounter::default();
    let mut done = 0usize;
    loop {
        for _ in 0..CHUNK {
            counter.push(read());
        }
        done += CHUNK;
        let enough = done >= opts.granularity_reads && counter.steps >= MIN_STEPS;
        if enough || Instant::now() >= deadline {
            return counter;
        }
    }
}

/// Median of `values` (mean of the middle two for an even count); 0 when empty.
pub(crate) fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// A duration in ns as a short string for messages, to one decimal at most:
/// "4 ms", "50 µs", "1.5 ms", "120 ns".
pub(crate) fn human_ns(ns: f64) -> String {
    let (value, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    let rounded = (value * 10.0).round() / 10.0;
    if rounded.fract() == 0.0 {
        format!("{rounded:.0} {unit}")
    } else {
        format!("{rounded:.1} {unit}")
    }
}

/// Stated and measured TSC frequencies differing by more than this many
/// parts per million are reported, and the measured one is used.
pub(crate) const MISMATCH_PPM: u64 = 1000;

/// |a − b| relative to b, in parts per million.
pub(crate) fn ppm_apart(a: u64, b: u64) -> u64 {
    if b == 0 {
        return u64::MAX;
    }
    let diff = u128::from(a.abs_diff(b)) * 1_000_000 / u128::from(b);
    u64::try_from(diff).unwrap_or(u64::MAX)
}

/// A caller's time limit, capped at an hour so `Instant + limit` cannot overflow.
pub(crate) fn clamp_limit(d: Duration) -> Duration {
    d.min(Duration::from_secs(3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(values: &[u64]) -> StepCounter {
        let mut c = StepCounter::default();
        for &v in values {
            c.push(v);
        }
        c
    }

    #[test]
    fn step_counter_on_a_fine_clock() {
        let c = counted(&[100, 125, 149, 175, 200]);
        assert_eq!(c.pairs, 4);
        assert_eq!(c.repeats, 0);
        assert_eq!(c.steps, 4);
        assert_eq!(c.violations, 0);
        assert_eq!(c.min_step, Some(24));
        assert_eq!(c.repeat_fraction(), 0.0);
    }

    #[test]
    fn step_counter_on_a_coarse_clock() {
        let c = counted(&[4_000_000, 4_000_000, 4_000_000, 8_000_000, 8_000_000]);
        assert_eq!(c.pairs, 4);
        assert_eq!(c.repeats, 3);
        assert_eq!(c.steps, 1);
        assert_eq!(c.min_step, Some(4_000_000));
        assert_eq!(c.repeat_fraction(), 0.75);
    }

    #[test]
    fn step_counter_counts_backward_reads_and_not_as_steps() {
        let c = counted(&[10, 20, 15, 30]);
        assert_eq!(c.violations, 1);
        assert_eq!(c.steps, 2);
        assert_eq!(c.min_step, Some(10));
    }

    #[test]
    fn step_counter_with_one_or_no_reading() {
        assert_eq!(counted(&[]).pairs, 0);
        assert_eq!(counted(&[]).repeat_fraction(), 0.0);
        let one = counted(&[7]);
        assert_eq!(one.pairs, 0);
        assert_eq!(one.min_step, None);
    }

    #[test]
    fn median_odd_even_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }

    #[test]
    fn human_durations() {
        assert_eq!(human_ns(4_000_000.0), "4 ms");
        assert_eq!(human_ns(50_000.0), "50 µs");
        assert_eq!(human_ns(1_500_000.0), "1.5 ms");
        assert_eq!(human_ns(23.4), "23.4 ns");
        assert_eq!(human_ns(120.0), "120 ns");
    }

    #[test]
    fn measure_a_counter_is_fast_and_consistent() {
        let mut n = 0u64;
        let opts = InspectOptions {
            reads_per_batch: 10,
            batches: 3,
            granularity_reads: 100,
            ..InspectOptions::default()
        };
        let m = measure(
            || {
                n += 2;
                n
            },
            &opts,
        );
        assert_eq!(m.steps.min_step, Some(2));
        assert_eq!(m.steps.violations, 0);
        assert_eq!(m.steps.repeats, 0);
        assert!(m.steps.pairs >= 100);
    }

    #[test]
    fn measure_a_frozen_clock_stops_at_the_time_limit() {
        let opts = InspectOptions {
            reads_per_batch: 10,
            batches: 1,
            granularity_reads: 10,
            time_limit_per_clock: Duration::from_millis(2),
            ..InspectOptions::default()
        };
        let m = measure(|| 42, &opts);
        assert_eq!(m.steps.min_step, None);
        assert_eq!(m.steps.repeat_fraction(), 1.0);
    }

    #[test]
    fn zero_options_still_measure() {
        let opts = InspectOptions {
            reads_per_batch: 0,
            batches: 0,
            granularity_reads: 0,
            time_limit_per_clock: Duration::ZERO,
            tsc_calibration: Duration::ZERO,
        };
        let mut n = 0u64;
        let m = measure(
            || {
                n += 1;
                n
            },
            &opts,
        );
        assert!(m.steps.pairs >= (CHUNK as u64) - 1);
        assert!(m.read_cost_ns >= 0.0);
    }

    #[test]
    fn ppm() {
        assert_eq!(ppm_apart(1_001_000, 1_000_000), 1000);
        assert_eq!(ppm_apart(999_000, 1_000_000), 1000);
        assert_eq!(ppm_apart(1, 0), u64::MAX);
    }
}
