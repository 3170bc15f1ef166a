//! Runs the planned cells.
//!
//! One sample: read the clock (`start`), call the method to wait until
//! `start + d`, and read the clock again as soon as the call returns: the
//! error is that caller's reading minus the deadline, for every method
//! alike. When the method returns a reading of its own, `caller reading −
//! method reading` is stored too (the return). Both go into preallocated
//! `Vec<i64>`s; nothing between the deadline and the caller's reading
//! allocates, prints or locks; progress is reported between samples at most
//! every [`PROGRESS_EVERY_NS`], and statistics are computed after the cell.

use super::methods::{KeeptimeKnobs, Slack, Waiter};
use super::plan::CellPlan;
use super::result::{error_ns, late_share, CellResult, Return, SleeperAccount};
use super::stats::Stats;
use keeptime::os;

/// Progress is reported at most this often while a cell runs.
pub const PROGRESS_EVERY_NS: u64 = 100_000_000;

/// Told about the run as it goes (the progress bar).
pub trait Observer {
    /// Cell `index` (of the plan) is about to start its warm-up.
    fn cell_started(&mut self, index: usize, cell: &CellPlan);
    /// Cell `index` is `fraction` (0–1) done.
    fn cell_progress(&mut self, index: usize, fraction: f64);
    /// Cell `index` has finished.
    fn cell_finished(&mut self, index: usize);
}

/// An observer that ignores everything.
pub struct Silent;

impl Observer for Silent {
    fn cell_started(&mut self, _: usize, _: &CellPlan) {}
    fn cell_progress(&mut self, _: usize, _: f64) {}
    fn cell_finished(&mut self, _: usize) {}
}

/// The thread's timer slack as found at start-up, before anything changed it.
#[derive(Clone, Copy, Debug)]
pub struct SlackControl {
    /// `PR_GET_TIMERSLACK` at start-up; `None` where there is no timer slack.
    pub default_ns: Option<u64>,
}

impl SlackControl {
    /// Reads the calling thread's current slack; call before anything sets it.
    pub fn capture() -> Self {
        SlackControl {
            default_ns: os::timer_slack_ns().ok(),
        }
    }

    /// Sets the slack `method` runs with and returns the slack now in force.
    pub fn apply(&self, slack: Slack) -> Option<u64> {
        let want = match slack {
            Slack::Default => self.default_ns?,
            Slack::OneNs => 1,
        };
        // Best effort: a refusal leaves the slack as it was, and the slack
        // read back below is what gets reported.
        let _ = os::set_timer_slack_ns(want);
        os::timer_slack_ns().ok()
    }
}

/// Runs every cell in order; `observer` hears about progress.
pub fn run(
    cells: &[CellPlan],
    slack: SlackControl,
    knobs: KeeptimeKnobs,
    observer: &mut dyn Observer,
) -> Vec<CellResult> {
    let results = cells
        .iter()
        .enumerate()
        .map(|(index, cell)| {
            observer.cell_started(index, cell);
            let timer_slack_ns = slack.apply(cell.method.slack());
            let mut report = |fraction: f64| observer.cell_progress(index, fraction);
            let mut waiter = cell.method.waiter(knobs);
            let measured = run_cell(&mut *waiter, cell, &mut report);
            let sleeper = waiter.sleeper_stats().map(|st| SleeperAccount {
                tail_target_ppm: knobs.target.ppm(),
                sleeps: st.sleeps,
                late: st.late,
                os_waits: st.os_waits,
                spin_ns: st.spin_ns,
                cpu_estimate_ns: st.cpu_estimate_ns,
                unproven_sleeps: st.unproven_sleeps,
            });
            // The waiter (and an idle hint it holds) ends with its cell.
            drop(waiter);
            observer.cell_finished(index);
            CellResult {
                method: cell.method.name().to_owned(),
                family: Some(cell.method.family()),
                duration_ns: cell.duration_ns,
                warmup: cell.warmup,
                timer_slack_ns,
                stats: measured.stats,
                late_share: measured.late_share,
                ret: measured.ret,
                sleeper,
            }
        })
        .collect();
    // Leave the thread as it was found.
    slack.apply(Slack::Default);
    results
}

/// What one cell measured: the error statistics, the late share and the
/// return percentiles (when the method returned readings of its own).
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The error statistics.
    pub stats: Stats,
    /// Share of the waits more than 2 µs late.
    pub late_share: Option<f64>,
    /// `caller reading − method reading`, p50 and p90.
    pub ret: Option<Return>,
}

impl Measured {
    /// The figures of a cell's `errors` and `returns` (both sorted in
    /// place) over `wall_ns` and `cpu_ns`; `None` without samples.
    pub fn from_samples(
        errors: &mut [i64],
        returns: &mut [i64],
        wall_ns: u64,
        cpu_ns: u64,
    ) -> Option<Measured> {
        let stats = Stats::from_errors(errors, wall_ns, cpu_ns)?;
        Some(Measured {
            stats,
            late_share: late_share(errors),
            ret: Return::from_samples(returns),
        })
    }
}

/// Warms `waiter` up, then measures it as `cell` says.
///
/// # Panics
/// Never on any plan: `max_samples` is at least 1 and the statistics of a
/// non-empty cell always exist.
fn run_cell<W: Waiter + ?Sized>(
    waiter: &mut W,
    cell: &CellPlan,
    report: &mut dyn FnMut(f64),
) -> Measured {
    let d = cell.duration_ns;
    for _ in 0..cell.warmup {
        let start = os::monotonic_ns();
        let deadline = start.saturating_add(d);
        waiter.wait(start, deadline);
        let woke = os::monotonic_ns();
        waiter.warmup_sample(d, error_ns(woke, deadline));
    }
    waiter.warmup_done();

    let max = usize::try_from(cell.max_samples.max(1)).unwrap_or(usize::MAX);
    let min = usize::try_from(cell.min_samples).unwrap_or(usize::MAX);
    let mut errors: Vec<i64> = Vec::with_capacity(max);
    let mut returns: Vec<i64> = Vec::with_capacity(max);
    let limit = cell.time_limit_ns.unwrap_or(u64::MAX);
    let hard_limit = cell.hard_limit_ns().unwrap_or(u64::MAX);

    let cpu_start = os::thread_cpu_ns();
    let wall_start = os::monotonic_ns();
    let mut next_report = wall_start.saturating_add(PROGRESS_EVERY_NS);
    while errors.len() < max {
        let start = os::monotonic_ns();
        let deadline = start.saturating_add(d);
        let own = waiter.wait(start, deadline);
        // The caller's first reading after the call: the error's end.
        let woke = os::monotonic_ns();
        // Within capacity: never reallocates.
        errors.push(error_ns(woke, deadline));
        if let Some(own) = own {
            returns.push(error_ns(woke, own));
        }

        let elapsed = woke.saturating_sub(wall_start);
        if (elapsed >= limit && errors.len() >= min) || elapsed >= hard_limit {
            break;
        }
        if woke >= next_report {
            let by_time = elapsed as f64 / limit as f64;
            let by_count = errors.len() as f64 / max as f64;
            report(by_time.max(by_count).min(1.0));
            next_report = woke.saturating_add(PROGRESS_EVERY_NS);
        }
    }
    let cpu_ns = os::thread_cpu_ns().saturating_sub(cpu_start);
    let wall_ns = os::monotonic_ns().saturating_sub(wall_start);
    Measured::from_samples(&mut errors, &mut returns, wall_ns, cpu_ns)
        .expect("a cell records at least one sample")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::bench::Method;

    #[test]
    fn a_cell_summary_of_hand_made_samples() {
        // Ten waits: errors (caller's reading − deadline) and, for the
        // seven that returned a reading of their own, the returns.
        let mut errors = vec![120, 80, 2_500, 95, 60, 3_000, 110, 70, 100, 90];
        let mut returns = vec![30, 10, 60, 20, 50, 40, 500];
        let m = Measured::from_samples(&mut errors, &mut returns, 2_000, 500).unwrap();
        assert_eq!((m.stats.p50_ns, m.stats.p90_ns), (95, 2_500));
        assert_eq!(m.stats.samples, 10);
        assert_eq!(m.late_share, Some(0.2));
        // Sorted returns 10 20 30 40 50 60 500: p50 = 4th, p90 = 7th.
        assert_eq!(
            m.ret,
            Some(Return {
                p50_ns: 40,
                p90_ns: 500
            })
        );
        // A method that returns no reading of its own has no return column.
        let m = Measured::from_samples(&mut [5], &mut [], 1, 1).unwrap();
        assert_eq!((m.ret, m.late_share), (None, Some(0.0)));
        assert!(Measured::from_samples(&mut [], &mut [], 1, 1).is_none());
    }

    #[test]
    fn runs_a_tiny_plan() {
        let cells: Vec<CellPlan> = Method::ALL
            .iter()
            .map(|&method| CellPlan {
                method,
                duration_ns: 20_000,
                warmup: 2,
                min_samples: 5,
                max_samples: 5,
                time_limit_ns: None,
            })
            .collect();
        let results = run(
            &cells,
            SlackControl::capture(),
            KeeptimeKnobs::default(),
            &mut Silent,
        );
        assert_eq!(results.len(), Method::ALL.len());
        for r in &results {
            assert_eq!(r.stats.samples, 5);
            let m: Method = r.method.parse().unwrap();
            if !m.may_return_early() {
                assert_eq!(r.stats.early, 0, "{}", r.method);
            }
            assert_eq!(r.family, Some(m.family()));
            // Spins and keeptime return a reading of their own; plain OS
            // sleeps do not, and have no return column.
            let own_reading = !matches!(
                m,
                Method::SleepDefaultSlack
                    | Method::SleepSlack1ns
                    | Method::ClockNanosleepAbs
                    | Method::Compensated
            );
            assert_eq!(r.ret.is_some(), own_reading, "{}", r.method);
            if let Some(ret) = r.ret {
                assert!(0 <= ret.p50_ns && ret.p50_ns <= ret.p90_ns, "{}", r.method);
            }
        }
    }
}
