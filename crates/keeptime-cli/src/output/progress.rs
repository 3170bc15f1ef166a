//! The progress bar on stderr: hidden when stderr is not a terminal or with
//! `--quiet`. Its length is the run's planned time, so the ETA means something.

use crate::bench::crowd::{CrowdObserver, CrowdPlan, CROWD_METHODS};
use crate::bench::plan::{CellPlan, PLANNING_OVERHEAD_NS};
use crate::bench::runner::Observer;
use crate::bench::Method;
use crate::output::format;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Planned wall time of a cell, in ms (the bar's unit).
fn planned_ms(cell: &CellPlan) -> u64 {
    let per_sample = cell.duration_ns.saturating_add(PLANNING_OVERHEAD_NS);
    let measure = cell
        .time_limit_ns
        .unwrap_or_else(|| cell.max_samples.saturating_mul(per_sample));
    (cell
        .warmup
        .saturating_mul(per_sample)
        .saturating_add(measure)
        / 1_000_000)
        .max(1)
}

/// A bar of `total` ms on stderr; hidden when `quiet` or stderr is not a terminal.
fn bar(total: u64, quiet: bool) -> ProgressBar {
    let target = if quiet || !std::io::stderr().is_terminal() {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    bar.set_style(
        ProgressStyle::with_template("{bar:30.cyan/blue} {msg} · ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Progress of a bench run.
pub struct Progress {
    bar: ProgressBar,
    /// Bar position at the start of each cell.
    offsets: Vec<u64>,
    sizes: Vec<u64>,
}

impl Progress {
    /// A bar for `cells`; hidden when `quiet` or stderr is not a terminal.
    pub fn new(cells: &[CellPlan], quiet: bool) -> Self {
        let sizes: Vec<u64> = cells.iter().map(planned_ms).collect();
        let offsets = sizes
            .iter()
            .scan(0u64, |acc, &s| {
                let at = *acc;
                *acc += s;
                Some(at)
            })
            .collect();
        let total: u64 = sizes.iter().sum();
        let bar = bar(total, quiet);
        Progress {
            bar,
            offsets,
            sizes,
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Observer for Progress {
    fn cell_started(&mut self, index: usize, cell: &CellPlan) {
        self.bar.set_message(format!(
            "{} at {} ({}/{})",
            cell.method,
            format::duration(cell.duration_ns),
            index + 1,
            self.sizes.len()
        ));
        self.bar.set_position(self.offsets[index]);
    }

    fn cell_progress(&mut self, index: usize, fraction: f64) {
        let within = (self.sizes[index] as f64 * fraction.clamp(0.0, 1.0)) as u64;
        self.bar.set_position(self.offsets[index] + within);
    }

    fn cell_finished(&mut self, index: usize) {
        self.bar
            .set_position(self.offsets[index] + self.sizes[index]);
    }
}

/// Progress of the `--crowd` block.
pub struct CrowdProgress {
    bar: ProgressBar,
    size: u64,
}

impl CrowdProgress {
    /// A bar for the crowd of `plan`; hidden when `quiet` or stderr is not a terminal.
    pub fn new(plan: &CrowdPlan, quiet: bool) -> Self {
        let size = (plan.planned_ns() / 1_000_000).max(1);
        CrowdProgress {
            bar: bar(size.saturating_mul(CROWD_METHODS.len() as u64), quiet),
            size,
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl CrowdObserver for CrowdProgress {
    fn crowd_started(&mut self, index: usize, method: Method, plan: &CrowdPlan) {
        self.bar.set_message(format!(
            "crowd: {method}, {} threads × {} ({}/{})",
            plan.threads,
            format::duration(plan.duration_ns),
            index + 1,
            CROWD_METHODS.len()
        ));
        self.bar.set_position(self.size * index as u64);
    }

    fn crowd_progress(&mut self, index: usize, fraction: f64) {
        let within = (self.size as f64 * fraction.clamp(0.0, 1.0)) as u64;
        self.bar.set_position(self.size * index as u64 + within);
    }

    fn crowd_finished(&mut self, index: usize) {
        self.bar.set_position(self.size * (index as u64 + 1));
    }
}
