//! `keeptime bench --crowd N`: many sleepers on few cores, measured in the
//! same run as the usual tables.
//!
//! For each of [`CROWD_METHODS`] in turn: N threads each sleep the crowd
//! duration `d` in a loop (each sample: read the clock, wait until that
//! reading + `d`, read the clock as soon as the call returns, as in every
//! other cell). Every thread warms up first; a gate then starts the
//! measured part of all threads at once, and it lasts [`CROWD_RUN_NS`]
//! (about 2 s) or exactly `--samples` sleeps per thread. One row per method,
//! every thread's errors merged: p50, p99 and max (nearest rank, as in
//! `spec/bench-result.md`), early returns, the share of sleeps more than
//! [`LATE_NS`] late, and the **process** CPU time over the measured span in
//! percent of one core (`keeptime::os::process_cpu_ns`), since a crowd's cost
//! is all its threads' together.
//!
//! The crowd duration is the first `--durations` value when the user gave
//! that list, else [`DEFAULT_CROWD_DURATION_NS`] (1 ms).

use super::methods::{KeeptimeKnobs, Method, Slack, Waiter};
use super::result::error_ns;
pub use super::result::{CrowdResult, LATE_NS};
use keeptime::os;
use keeptime::stats::nearest_rank;
use std::sync::{Condvar, Mutex};

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
            // Every method's threads warm up as long as keeptime's cells do
            // (it learns; the others lose nothing by the wait).
            warmup: warmup.unwrap_or_else(|| {
                super::plan::default_warmup(super::Method::Keeptime, duration_ns)
            }),
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
        p50_ns: nearest_rank(errors, 500)?,
        p99_ns: nearest_rank(errors, 990)?,
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
/// use `knobs`.
///
/// # Errors
/// One line when the OS refuses to start one of the threads (a process or
/// memory limit); nothing is measured then.
pub fn run(
    plan: &CrowdPlan,
    knobs: KeeptimeKnobs,
    observer: &mut dyn CrowdObserver,
) -> Result<Vec<CrowdResult>, String> {
    let mut rows = Vec::with_capacity(CROWD_METHODS.len());
    for (index, &method) in CROWD_METHODS.iter().enumerate() {
        observer.crowd_started(index, method, plan);
        let row = run_method(method, plan, knobs, &mut |f| {
            observer.crowd_progress(index, f)
        })?;
        observer.crowd_finished(index);
        rows.extend(row);
    }
    Ok(rows)
}

/// Starts the measured part of every crowd thread at once, or calls the
/// crowd off (when a thread could not be started).
#[derive(Default)]
struct Gate {
    /// Threads warmed up and waiting; `Some(go)` once decided.
    state: Mutex<(usize, Option<bool>)>,
    changed: Condvar,
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, (usize, Option<bool>)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A crowd thread is ready; returns whether to measure.
    fn arrive(&self) -> bool {
        let mut st = self.lock();
        st.0 += 1;
        self.changed.notify_all();
        loop {
            if let Some(go) = st.1 {
                return go;
            }
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Waits until `n` threads are ready; `false` as soon as `gone()` says
    /// a thread ended without arriving (it panicked).
    fn wait_for(&self, n: usize, gone: impl Fn() -> bool) -> bool {
        let mut st = self.lock();
        while st.0 < n {
            if gone() {
                return false;
            }
            st = self
                .changed
                .wait_timeout(st, PROGRESS_EVERY)
                .map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
        true
    }

    /// Lets every waiting thread measure (`true`) or return at once (`false`).
    fn decide(&self, go: bool) {
        self.lock().1 = Some(go);
        self.changed.notify_all();
    }
}

/// One thread of a crowd: warm up, wait for everyone, then sleep and record.
/// Returns its errors and its last clock reading (nothing when called off).
fn crowd_thread<W: Waiter + ?Sized>(
    waiter: &mut W,
    plan: &CrowdPlan,
    start: &Gate,
) -> (Vec<i64>, u64) {
    let d = plan.duration_ns;
    for _ in 0..plan.warmup {
        let now = os::monotonic_ns();
        let deadline = now.saturating_add(d);
        waiter.wait(now, deadline);
        let woke = os::monotonic_ns();
        waiter.warmup_sample(d, error_ns(woke, deadline));
    }
    waiter.warmup_done();
    let cap = usize::try_from(plan.capacity_per_thread()).unwrap_or(usize::MAX);
    let mut errors: Vec<i64> = Vec::with_capacity(cap);
    if !start.arrive() {
        return (Vec::new(), 0);
    }
    let t0 = os::monotonic_ns();
    let limit = match plan.samples_per_thread {
        Some(_) => u64::MAX,
        None => CROWD_RUN_NS,
    };
    let mut last = t0;
    while errors.len() < cap {
        let now = os::monotonic_ns();
        let deadline = now.saturating_add(d);
        waiter.wait(now, deadline);
        // The caller's first reading after the call: the error's end.
        last = os::monotonic_ns();
        // Within capacity: never reallocates.
        errors.push(error_ns(last, deadline));
        if last.saturating_sub(t0) >= limit {
            break;
        }
    }
    (errors, last)
}

/// Lets the started crowd threads return at once and joins them (a panicked
/// one included, so the scope does not panic again).
fn call_off<T>(start: &Gate, handles: Vec<std::thread::ScopedJoinHandle<'_, T>>) {
    start.decide(false);
    for h in handles {
        let _ = h.join();
    }
}

fn run_method(
    method: Method,
    plan: &CrowdPlan,
    knobs: KeeptimeKnobs,
    progress: &mut dyn FnMut(f64),
) -> Result<Option<CrowdResult>, String> {
    let threads = plan.threads.max(1);
    let start = Gate::default();
    let (mut errors, cpu_ns, wall_ns) = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(threads);
        for k in 0..threads {
            let start = &start;
            let spawned = std::thread::Builder::new()
                .name(format!("crowd-{k}"))
                .spawn_scoped(s, move || {
                    // Each thread sets its own slack, as the method's cells do.
                    if method.slack() == Slack::OneNs {
                        let _ = os::set_timer_slack_ns(1);
                    }
                    crowd_thread(&mut *method.waiter(knobs), plan, start)
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    call_off(start, handles);
                    return Err(format!(
                        "--crowd {threads}: cannot start crowd thread {} ({e}); try a smaller crowd",
                        k + 1
                    ));
                }
            }
        }
        // Every thread has warmed up: the measured span starts. (A thread
        // ends before arriving only by panicking.)
        if !start.wait_for(threads, || handles.iter().any(|h| h.is_finished())) {
            call_off(&start, handles);
            return Err(format!(
                "--crowd {threads}: a {method} crowd thread failed while warming up"
            ));
        }
        start.decide(true);
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
        // start is the crowd's (the threads' exits add next to nothing).
        let cpu_ns = os::process_cpu_ns().saturating_sub(cpu0);
        let mut errors = Vec::new();
        let mut end = wall0;
        let mut failed = 0;
        for h in handles {
            match h.join() {
                Ok((e, last)) => {
                    errors.extend(e);
                    end = end.max(last);
                }
                Err(_) => failed += 1,
            }
        }
        if failed > 0 {
            return Err(format!(
                "--crowd {threads}: {failed} {method} crowd thread(s) failed while measuring"
            ));
        }
        // Wall time: the start to the last thread's last wake-up.
        Ok((errors, cpu_ns, end.saturating_sub(wall0)))
    })?;
    Ok(summarize(method, plan, &mut errors, cpu_ns, wall_ns))
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
        assert_eq!(
            p.warmup,
            super::super::plan::default_warmup(super::super::Method::Keeptime, 1_000_000)
        );
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
    fn the_gate_is_called_off_when_a_thread_dies_before_arriving() {
        let gate = Gate::default();
        std::thread::scope(|s| {
            let waiting = s.spawn(|| gate.arrive());
            let died = s.spawn(|| false);
            let handles = [&waiting, &died];
            assert!(!gate.wait_for(2, || handles.iter().any(|h| h.is_finished())));
            gate.decide(false);
            assert!(!waiting.join().unwrap());
        });
        let gate = Gate::default();
        std::thread::scope(|s| {
            let a = s.spawn(|| gate.arrive());
            let b = s.spawn(|| gate.arrive());
            assert!(gate.wait_for(2, || false));
            gate.decide(true);
            assert!(a.join().unwrap() && b.join().unwrap());
        });
    }

    #[test]
    fn a_tiny_real_crowd_is_never_early_and_counts_right() {
        let p = CrowdPlan {
            threads: 3,
            duration_ns: 50_000,
            warmup: 2,
            samples_per_thread: Some(4),
        };
        let rows = run(&p, KeeptimeKnobs::default(), &mut SilentCrowd).unwrap();
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
