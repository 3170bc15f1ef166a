//! `keeptime bench --crowd N`: many sleepers on few cores, measured in the
//! same run as the usual tables (issue 11).
//!
//! For each of [`CROWD_METHODS`] in turn: N threads each sleep the crowd
//! duration `d` in a loop (each sample: read the clock, wait until that
//! reading + `d`, take the method's first clock reading after the wait, as in
//! every other cell). Every thread warms up first; a barrier then starts the
//! measured part of all threads at once, and it lasts [`CROWD_RUN_NS`]
//! (about 2 s) or exactly `--samples` sleeps per thread. One row per method,
//! every thread's errors merged: p50, p99 and max (nearest rank, as in
//! `spec/bench-result.md`), early returns, the share of sleeps more than
//! [`LATE_NS`] late, and the **process** CPU time over the measured span in
//! percent of one core (`keeptime::os::process_cpu_ns`), since a crowd's cost
//! is all its threads' together.
//!
//! The crowd duration is the first `--durations` value when the user gave
//! that list, else [`DEFAULT_CROWD_DURATION_NS`] (1 ms, the crowd).

use super::methods::{AbsoluteSleep, Keeptime, Method, Slack, SpinPause, Waiter};
use super::stats::percentile;
use keeptime::{os, Mode, TailTarget};
use serde::{Deserialize, Serialize};
use std::sync::Barrier;

/// The methods of the crowd block, in run order: keeptime's default sleeper,
/// the OS-sleep baseline (one absolute `clock_nanosleep`, slack 1 ns) and the
/// pure spin.
pub const CROWD_METHODS: [Method; 3] = [
    Method::Keeptime,
    Method::ClockNanosleepAbs,
    Method::SpinPause,
];

/// Each thread's sleep when the user gave no `--durations`: 1 ms.
pub const DEFAULT_CROWD_DURATION_NS: u64 = 1_000_000;
/// How long each method's crowd is measured, unless `--samples` fixes the count.
pub const CROWD_RUN_NS: u64 = 2_000_000_000;
/// A sleep ending more than this after its deadline counts as late (issue 11's 2 µs).
pub const LATE_NS: i64 = 2_000;
/// Most threads `--crowd` accepts.
pub const MAX_CROWD_THREADS: u64 = 1_024;
/// Most samples one method's crowd stores, over all its threads (8 bytes each).
pub const MAX_CROWD_SAMPLES: u64 = 4_000_000;
/// The coordinating thread looks at the crowd this often (to report
/// progress; the figures do not depend on it).
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(20);

/// How the crowd block runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrowdPlan {
    /// Sleeping threads per method (at least 1).
    pub threads: usize,
    /// Each sleep, ns.
    pub duration_ns: u64,
    /// Warm-up sleeps per thread before the measured part.
    pub warmup: u64,
    /// Exact measured sleeps per thread (`--samples`); `None`: run for
    /// [`CROWD_RUN_NS`].
    pub samples_per_thread: Option<u64>,
}

impl CrowdPlan {
    /// The plan for `--crowd threads`, the bench's `--durations`,
    /// `--samples` and `--warmup`; `None` for `--crowd 0`.
    pub fn new(
        threads: u64,
        durations_ns: &[u64],
        samples: Option<u64>,
        warmup: Option<u64>,
    ) -> Option<CrowdPlan> {
        if threads == 0 {
            return None;
        }
        let duration_ns = durations_ns
            .first()
            .copied()
            .unwrap_or(DEFAULT_CROWD_DURATION_NS);
        Some(CrowdPlan {
            threads: usize::try_from(threads).unwrap_or(usize::MAX),
            duration_ns,
            warmup: warmup.unwrap_or_else(|| super::plan::default_warmup(duration_ns)),
            samples_per_thread: samples,
        })
    }

    /// Refuses a plan whose `--samples` would store more than
    /// [`MAX_CROWD_SAMPLES`] per method; the message is one line.
    pub fn check(&self) -> Result<(), String> {
        if let Some(n) = self.samples_per_thread {
            let total = n.saturating_mul(self.threads as u64);
            if total > MAX_CROWD_SAMPLES {
                return Err(format!(
                    "--samples {n} with --crowd {} is {total} crowd sleeps per method: at most {MAX_CROWD_SAMPLES} (lower --samples or --crowd)",
                    self.threads
                ));
            }
        }
        Ok(())
    }

    /// Samples one thread may store: `--samples`, or what [`CROWD_RUN_NS`]
    /// can hold (every sleep takes at least `duration_ns`), within
    /// [`MAX_CROWD_SAMPLES`] over all threads.
    pub fn capacity_per_thread(&self) -> u64 {
        let share = (MAX_CROWD_SAMPLES / self.threads.max(1) as u64).max(1);
        match self.samples_per_thread {
            Some(n) => n.max(1),
            None => (CROWD_RUN_NS / self.duration_ns.max(1) + 1).min(share),
        }
    }

    /// Planned wall time of one method's crowd (warm-up and measuring), ns;
    /// for the progress bar.
    pub fn planned_ns(&self) -> u64 {
        let per = self
            .duration_ns
            .saturating_add(super::plan::PLANNING_OVERHEAD_NS);
        let measure = match self.samples_per_thread {
            Some(n) => n.saturating_mul(per),
            None => CROWD_RUN_NS,
        };
        self.warmup.saturating_mul(per).saturating_add(measure)
    }
}

/// One method's crowd: every thread's sleeps merged. Serialized as an item
/// of the result document's optional `crowd` array (`spec/bench-result.md`);
/// read back by `keeptime report` (the format's optional fields default to 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrowdResult {
    /// The method (a `keeptime bench --list` name).
    pub method: String,
    /// Sleeping threads.
    pub threads: u64,
    /// Each sleep, ns.
    pub duration_ns: u64,
    /// Warm-up sleeps per thread (not recorded).
    #[serde(default)]
    pub warmup: u64,
    /// Recorded sleeps over all threads.
    pub samples: u64,
    /// Median error, nearest rank.
    pub p50_ns: i64,
    /// 99th percentile error, nearest rank.
    pub p99_ns: i64,
    /// Largest error.
    pub max_ns: i64,
    /// Sleeps that returned before their deadline.
    pub early: u64,
    /// Share (0–1) of sleeps more than [`LATE_NS`] after their deadline.
    pub late_share: f64,
    /// Process CPU time over wall time of the measured span, % of one core.
    pub cpu_percent: f64,
    /// Wall time of the measured span (barrier release to the last thread's
    /// last wake-up), ns.
    #[serde(default)]
    pub wall_ns: u64,
    /// Process CPU time over the same span, ns.
    #[serde(default)]
    pub cpu_ns: u64,
}

/// The row of `method` from every thread's `errors` (sorted in place),
/// measured over `wall_ns` with `cpu_ns` of process CPU. `None` without samples.
pub fn summarize(
    method: Method,
    plan: &CrowdPlan,
    errors: &mut [i64],
    cpu_ns: u64,
    wall_ns: u64,
) -> Option<CrowdResult> {
    if errors.is_empty() {
        return None;
    }
    errors.sort_unstable();
    let n = errors.len();
    let late = n - errors.partition_point(|&e| e <= LATE_NS);
    Some(CrowdResult {
        method: method.name().to_owned(),
        threads: plan.threads as u64,
        duration_ns: plan.duration_ns,
        warmup: plan.warmup,
        samples: n as u64,
        p50_ns: percentile(errors, 500),
        p99_ns: percentile(errors, 990),
        max_ns: errors[n - 1],
        early: errors.partition_point(|&e| e < 0) as u64,
        late_share: late as f64 / n as f64,
        cpu_percent: if wall_ns == 0 {
            0.0
        } else {
            100.0 * cpu_ns as f64 / wall_ns as f64
        },
        wall_ns,
        cpu_ns,
    })
}

/// Told about the crowd block as it goes (the progress bar).
pub trait CrowdObserver {
    /// Method `index` of [`CROWD_METHODS`] starts (its threads warm up).
    fn crowd_started(&mut self, index: usize, method: Method, plan: &CrowdPlan);
    /// Method `index` is `fraction` (0–1) done.
    fn crowd_progress(&mut self, index: usize, fraction: f64);
    /// Method `index` has finished.
    fn crowd_finished(&mut self, index: usize);
}

/// An observer that ignores everything.
pub struct SilentCrowd;

impl CrowdObserver for SilentCrowd {
    fn crowd_started(&mut self, _: usize, _: Method, _: &CrowdPlan) {}
    fn crowd_progress(&mut self, _: usize, _: f64) {}
    fn crowd_finished(&mut self, _: usize) {}
}

/// Runs the crowd of every method in [`CROWD_METHODS`]; keeptime's sleepers
/// use `target`.
pub fn run(
    plan: &CrowdPlan,
    target: TailTarget,
    observer: &mut dyn CrowdObserver,
) -> Vec<CrowdResult> {
    CROWD_METHODS
        .iter()
        .enumerate()
        .filter_map(|(index, &method)| {
            observer.crowd_started(index, method, plan);
            let row = run_method(method, plan, target, &mut |f| {
                observer.crowd_progress(index, f)
            });
            observer.crowd_finished(index);
            row
        })
        .collect()
}

/// One thread of a crowd: warm up, wait for everyone, then sleep and record.
/// Returns its errors and its last clock reading.
fn crowd_thread<W: Waiter>(waiter: &mut W, plan: &CrowdPlan, start: &Barrier) -> (Vec<i64>, u64) {
    let d = plan.duration_ns;
    for _ in 0..plan.warmup {
        let now = os::monotonic_ns();
        waiter.wait(now, now.saturating_add(d));
    }
    waiter.warmup_done();
    let cap = usize::try_from(plan.capacity_per_thread()).unwrap_or(usize::MAX);
    let mut errors: Vec<i64> = Vec::with_capacity(cap);
    start.wait();
    let t0 = os::monotonic_ns();
    let limit = match plan.samples_per_thread {
        Some(_) => u64::MAX,
        None => CROWD_RUN_NS,
    };
    let mut last = t0;
    while errors.len() < cap {
        let now = os::monotonic_ns();
        let deadline = now.saturating_add(d);
        last = waiter.wait(now, deadline);
        // Within capacity: never reallocates.
        errors.push(super::runner::error_ns(last, deadline));
        if last.saturating_sub(t0) >= limit {
            break;
        }
    }
    (errors, last)
}

fn run_method(
    method: Method,
    plan: &CrowdPlan,
    target: TailTarget,
    progress: &mut dyn FnMut(f64),
) -> Option<CrowdResult> {
    let threads = plan.threads.max(1);
    let start = Barrier::new(threads + 1);
    let (mut errors, cpu_ns, wall_ns) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let start = &start;
                s.spawn(move || {
                    // Each thread sets its own slack, as the method's cells do.
                    if method.slack() == Slack::OneNs {
                        let _ = os::set_timer_slack_ns(1);
                    }
                    match method {
                        Method::Keeptime => crowd_thread(
                            &mut Keeptime::with_target(Mode::Exact, target),
                            plan,
                            start,
                        ),
                        Method::ClockNanosleepAbs => crowd_thread(&mut AbsoluteSleep, plan, start),
                        _ => crowd_thread(&mut SpinPause, plan, start),
                    }
                })
            })
            .collect();
        // Released when every thread has warmed up: the measured span starts.
        start.wait();
        let cpu0 = os::process_cpu_ns();
        let wall0 = os::monotonic_ns();
        let planned = match plan.samples_per_thread {
            Some(n) => n.saturating_mul(plan.duration_ns),
            None => CROWD_RUN_NS,
        }
        .max(1);
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(PROGRESS_EVERY);
            let elapsed = os::monotonic_ns().saturating_sub(wall0);
            progress((elapsed as f64 / planned as f64).min(1.0));
        }
        // Every measuring thread has ended: the process CPU since the
        // barrier is the crowd's (the threads' exits add next to nothing).
        let cpu_ns = os::process_cpu_ns().saturating_sub(cpu0);
        let mut errors = Vec::new();
        let mut end = wall0;
        for h in handles {
            let (e, last) = h.join().unwrap_or_default();
            errors.extend(e);
            end = end.max(last);
        }
        // Wall time: barrier release to the last thread's last wake-up.
        (errors, cpu_ns, end.saturating_sub(wall0))
    });
    summarize(method, plan, &mut errors, cpu_ns, wall_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(threads: usize, samples: Option<u64>) -> CrowdPlan {
        CrowdPlan {
            threads,
            duration_ns: 1_000_000,
            warmup: 3,
            samples_per_thread: samples,
        }
    }

    #[test]
    fn plan_from_the_bench_options() {
        assert_eq!(CrowdPlan::new(0, &[], None, None), None);
        let p = CrowdPlan::new(16, &[], None, None).unwrap();
        assert_eq!((p.threads, p.duration_ns), (16, DEFAULT_CROWD_DURATION_NS));
        assert_eq!(p.warmup, super::super::plan::default_warmup(1_000_000));
        assert_eq!(p.capacity_per_thread(), 2_001);
        let p = CrowdPlan::new(2, &[250_000, 1_000_000], Some(7), Some(1)).unwrap();
        assert_eq!(
            (p.duration_ns, p.warmup, p.capacity_per_thread()),
            (250_000, 1, 7)
        );
        // 10 µs sleeps for 2 s would be 200 001 per thread: the total is capped.
        let p = CrowdPlan::new(64, &[10_000], None, None).unwrap();
        assert_eq!(p.capacity_per_thread(), MAX_CROWD_SAMPLES / 64);
        assert_eq!(p.check(), Ok(()));
        let p = CrowdPlan::new(1_000, &[], Some(5_000), None).unwrap();
        assert_eq!(
            p.check().unwrap_err(),
            "--samples 5000 with --crowd 1000 is 5000000 crowd sleeps per method: at most 4000000 (lower --samples or --crowd)"
        );
    }

    #[test]
    fn summary_of_known_errors() {
        let mut e = vec![2_001, -5, 0, 2_000, 150_000, 10, 3, 40_000, 7, 1];
        let r = summarize(Method::Keeptime, &plan(2, Some(5)), &mut e, 250, 1_000).unwrap();
        assert_eq!(
            r,
            CrowdResult {
                method: "keeptime".into(),
                threads: 2,
                duration_ns: 1_000_000,
                warmup: 3,
                samples: 10,
                p50_ns: 7,
                p99_ns: 150_000,
                max_ns: 150_000,
                early: 1,
                late_share: 0.3,
                cpu_percent: 25.0,
                wall_ns: 1_000,
                cpu_ns: 250,
            }
        );
        assert!(summarize(Method::SpinPause, &plan(1, None), &mut [], 1, 1).is_none());
    }

    #[test]
    fn a_tiny_real_crowd_is_never_early_and_counts_right() {
        let p = CrowdPlan {
            threads: 3,
            duration_ns: 50_000,
            warmup: 2,
            samples_per_thread: Some(4),
        };
        let rows = run(&p, TailTarget::default(), &mut SilentCrowd);
        let names: Vec<&str> = rows.iter().map(|r| r.method.as_str()).collect();
        assert_eq!(names, ["keeptime", "clock-nanosleep-abs", "spin-pause"]);
        for r in &rows {
            assert_eq!((r.samples, r.threads), (12, 3), "{}", r.method);
            assert_eq!(r.early, 0, "{}", r.method);
            assert!(r.p50_ns <= r.p99_ns && r.p99_ns <= r.max_ns);
            assert!((0.0..=1.0).contains(&r.late_share));
        }
    }
}
