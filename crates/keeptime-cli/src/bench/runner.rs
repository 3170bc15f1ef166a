//! Runs the planned cells.
//!
//! One sample: read the clock (`start`), wait until `start + d`, take the
//! method's first clock reading after the wait, store the difference in a
//! preallocated `Vec<i64>`. Nothing between the deadline and that reading
//! allocates, prints or locks; progress is reported between samples at most
//! every [`PROGRESS_EVERY_NS`], and statistics are computed after the cell.

use super::methods::{
    AbsoluteSleep, BusyLoop, Compensated, Hybrid1ms, Keeptime, KeeptimeKnobs, Method,
    RelativeSleep, Slack, SpinPause, Waiter, YieldLoop,
};
use super::plan::CellPlan;
use super::report::{CellResult, SleeperAccount};
use super::stats::Stats;
use keeptime::{os, Mode};

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
            let mut sleeper = None;
            let stats = match cell.method {
                Method::BusyLoop => run_cell(&mut BusyLoop, cell, &mut report),
                Method::SpinPause => run_cell(&mut SpinPause, cell, &mut report),
                Method::YieldLoop => run_cell(&mut YieldLoop, cell, &mut report),
                Method::SleepDefaultSlack | Method::SleepSlack1ns => {
                    run_cell(&mut RelativeSleep, cell, &mut report)
                }
                Method::ClockNanosleepAbs => run_cell(&mut AbsoluteSleep, cell, &mut report),
                Method::Compensated => run_cell(&mut Compensated::default(), cell, &mut report),
                Method::Hybrid1ms => run_cell(&mut Hybrid1ms, cell, &mut report),
                Method::Keeptime => {
                    let mut k = Keeptime::with_knobs(Mode::Exact, knobs);
                    let stats = run_cell(&mut k, cell, &mut report);
                    sleeper = k.sleeper_stats().map(|st| SleeperAccount {
                        tail_target_ppm: knobs.target.ppm(),
                        sleeps: st.sleeps,
                        late: st.late,
                        os_waits: st.os_waits,
                        spin_ns: st.spin_ns,
                        cpu_estimate_ns: st.cpu_estimate_ns,
                    });
                    stats
                }
                Method::KeeptimeEfficient => {
                    run_cell(&mut Keeptime::new(Mode::Efficient), cell, &mut report)
                }
                Method::KeeptimeSpin => run_cell(&mut Keeptime::new(Mode::Spin), cell, &mut report),
            };
            observer.cell_finished(index);
            CellResult {
                method: cell.method.name().to_owned(),
                duration_ns: cell.duration_ns,
                warmup: cell.warmup,
                timer_slack_ns,
                stats,
                sleeper,
            }
        })
        .collect();
    // Leave the thread as it was found.
    slack.apply(Slack::Default);
    results
}

/// `woke − deadline` as a signed number, saturating (only a broken clock
/// could make it overflow).
#[inline]
pub(crate) fn error_ns(woke: u64, deadline: u64) -> i64 {
    if woke >= deadline {
        i64::try_from(woke - deadline).unwrap_or(i64::MAX)
    } else {
        i64::try_from(deadline - woke).map_or(i64::MIN, |e| -e)
    }
}

/// Warms `waiter` up, then measures it as `cell` says.
///
/// # Panics
/// Never on any plan: `max_samples` is at least 1 and the statistics of a
/// non-empty cell always exist.
fn run_cell<W: Waiter>(waiter: &mut W, cell: &CellPlan, report: &mut dyn FnMut(f64)) -> Stats {
    let d = cell.duration_ns;
    for _ in 0..cell.warmup {
        let start = os::monotonic_ns();
        let deadline = start.saturating_add(d);
        let woke = waiter.wait(start, deadline);
        waiter.warmup_sample(d, error_ns(woke, deadline));
    }
    waiter.warmup_done();

    let max = usize::try_from(cell.max_samples.max(1)).unwrap_or(usize::MAX);
    let min = usize::try_from(cell.min_samples).unwrap_or(usize::MAX);
    let mut errors: Vec<i64> = Vec::with_capacity(max);
    let limit = cell.time_limit_ns.unwrap_or(u64::MAX);
    let hard_limit = cell.hard_limit_ns().unwrap_or(u64::MAX);

    let cpu_start = os::thread_cpu_ns();
    let wall_start = os::monotonic_ns();
    let mut next_report = wall_start.saturating_add(PROGRESS_EVERY_NS);
    while errors.len() < max {
        let start = os::monotonic_ns();
        let deadline = start.saturating_add(d);
        let woke = waiter.wait(start, deadline);
        // Within capacity: never reallocates.
        errors.push(error_ns(woke, deadline));

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
    Stats::from_errors(&mut errors, wall_ns, cpu_ns).expect("a cell records at least one sample")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_errors() {
        assert_eq!(error_ns(10, 7), 3);
        assert_eq!(error_ns(7, 10), -3);
        assert_eq!(error_ns(u64::MAX, 0), i64::MAX);
        assert_eq!(error_ns(0, u64::MAX), i64::MIN);
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
        }
    }
}
