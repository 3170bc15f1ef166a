//! How many samples each cell (one method at one duration) gets.
//!
//! By default the whole run fits in a time budget ([`DEFAULT_BUDGET_NS`]):
//! every cell is promised at least [`default_min_samples`] (enough for a
//! stable p99), and whatever time is left is shared out so that short
//! durations, whose samples are cheap, get many more samples. Each cell then
//! runs until it has used its share of the time *and* has its minimum, or has
//! filled its preallocated sample storage. When the minimums alone do not fit
//! in the budget they are scaled down together, with a warning.
//!
//! `--samples N` asks for exactly N samples per cell (no time limit unless
//! `--budget` is also given, which then scales N down to fit).

use super::Method;

/// Default overall time budget, warm-ups included: the default run (11
/// methods × 4 durations) finishes in about a minute.
pub const DEFAULT_BUDGET_NS: u64 = 55_000_000_000;
/// What one sample is assumed to cost beyond its duration when planning: a
/// default-slack sleep's ~55 µs overshoot plus a margin. Only for planning;
/// cells stop on the time they actually used.
pub const PLANNING_OVERHEAD_NS: u64 = 60_000;
/// Most samples one cell stores (16 bytes each: the error and the return).
pub const MAX_SAMPLES: u64 = 500_000;
/// The warm-up takes about this long per cell, within the count limits below.
pub const WARMUP_TARGET_NS: u64 = 50_000_000;
/// Fewest warm-up waits per cell by default.
pub const MIN_WARMUP: u64 = 10;
/// Most warm-up waits per cell by default.
pub const MAX_WARMUP: u64 = 1_000;
/// The warm-up of a method that learns ([`Method::learns`]) takes about this
/// long per cell: a fresh keeptime sleeper plans on the largest wake-ups it
/// has seen until it has seen a few hundred, and at 1 ms on host kind D it
/// spent 17 % of a CPU over the 1 000 sleeps after a 50-sleep warm-up,
/// against 8.6 % after 1 000 (`docs/bench.md`).
pub const LEARNING_WARMUP_TARGET_NS: u64 = 1_000_000_000;
/// Fewest warm-up waits per cell by default for a method that learns, as long
/// as they take at most [`LEARNING_WARMUP_LIMIT_NS`]: at the default 1 %
/// target a margin sets its largest wake-up aside only from 199 of them
/// (`spec/estimator.md`, *quantile*), and 1 s is about 100 sleeps at 10 ms.
/// On host kind D, a fresh sleeper's 10 ms sleeps after 99 warm-up sleeps
/// used 2.3–30.4 % of a CPU (median 12.7 %), after 300 1.4–23.9 % (median
/// 1.9 %), eight runs each (`docs/bench.md`).
pub const MIN_LEARNING_WARMUP: u64 = 300;
/// The longest the [`MIN_LEARNING_WARMUP`] floor makes a cell's warm-up.
pub const LEARNING_WARMUP_LIMIT_NS: u64 = 5_000_000_000;
/// Most warm-up waits per cell by default for a method that learns.
pub const MAX_LEARNING_WARMUP: u64 = 3_000;
/// Longest wait `bench` accepts per sample.
pub const MAX_DURATION_NS: u64 = crate::parse::MAX_WAIT_NS;

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchConfig {
    /// Methods in run order.
    pub methods: Vec<Method>,
    /// Requested wait durations, in ns, in run order.
    pub durations_ns: Vec<u64>,
    /// `--samples`: exact samples per cell.
    pub samples: Option<u64>,
    /// `--warmup`: warm-up waits per cell.
    pub warmup: Option<u64>,
    /// `--budget`: overall time limit in ns.
    pub budget_ns: Option<u64>,
}

/// The plan of one cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellPlan {
    /// The method.
    pub method: Method,
    /// The requested wait, ns.
    pub duration_ns: u64,
    /// Warm-up waits (not recorded).
    pub warmup: u64,
    /// The cell may stop on time only once it has this many samples.
    pub min_samples: u64,
    /// The cell stops at this many samples (the storage preallocated for it).
    pub max_samples: u64,
    /// Measuring time after which the cell stops (once it has `min_samples`);
    /// `None` means run exactly `max_samples`.
    pub time_limit_ns: Option<u64>,
}

impl CellPlan {
    /// Hard stop: a cell never measures for longer than twice its share,
    /// even if its samples turned out slower than planned.
    pub fn hard_limit_ns(&self) -> Option<u64> {
        self.time_limit_ns.map(|t| t.saturating_mul(2))
    }
}

/// The plan of a whole run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Cells in run order: durations outer, methods inner.
    pub cells: Vec<CellPlan>,
    /// The budget actually applied, if any.
    pub budget_ns: Option<u64>,
    /// Things the user should know (e.g. the budget is too small for stable p99).
    pub warnings: Vec<String>,
}

/// The smallest sample count a cell at duration `d_ns` gets by default: enough
/// that p99 rests on several samples (p99.9 too for sub-5 ms waits).
pub fn default_min_samples(d_ns: u64) -> u64 {
    if d_ns >= 5_000_000 {
        200
    } else if d_ns >= 500_000 {
        1_000
    } else {
        2_000
    }
}

fn planned_cost_ns(d_ns: u64) -> u64 {
    d_ns.saturating_add(PLANNING_OVERHEAD_NS)
}

/// The default warm-up of `method` at `d_ns`: about [`WARMUP_TARGET_NS`],
/// within [`MIN_WARMUP`]..=[`MAX_WARMUP`] waits; for a method that learns
/// ([`Method::learns`]), about [`LEARNING_WARMUP_TARGET_NS`] but at least
/// [`MIN_LEARNING_WARMUP`] waits if they take at most
/// [`LEARNING_WARMUP_LIMIT_NS`], within [`MIN_WARMUP`]..=[`MAX_LEARNING_WARMUP`],
/// so that its cells measure what it learned rather than its first waits
/// (`make bench-convergence` measures those).
pub fn default_warmup(method: Method, d_ns: u64) -> u64 {
    if method.learns() {
        let per = planned_cost_ns(d_ns);
        let floor = MIN_LEARNING_WARMUP.min(LEARNING_WARMUP_LIMIT_NS / per);
        (LEARNING_WARMUP_TARGET_NS / per)
            .max(floor)
            .clamp(MIN_WARMUP, MAX_LEARNING_WARMUP)
    } else {
        (WARMUP_TARGET_NS / planned_cost_ns(d_ns)).clamp(MIN_WARMUP, MAX_WARMUP)
    }
}

/// The level `λ` with `Σ max(floor_i, λ) ≈ total` (water filling, rounded
/// down); `total` must be at least `Σ floor_i`. Cells whose floor is above the
/// level keep their floor; the others are raised to the level.
fn water_level(floors: &[u64], total: u64) -> u64 {
    let mut sorted: Vec<u64> = floors.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let n = sorted.len() as u64;
    let mut above: u64 = 0; // sum of the floors that stay above the level
    for (k, &f) in sorted.iter().enumerate() {
        let level = total.saturating_sub(above) / (n - k as u64);
        if f <= level {
            return level;
        }
        above = above.saturating_add(f);
    }
    0
}

/// Plans every cell of `config`.
pub fn plan(config: &BenchConfig) -> Plan {
    let mut warnings = Vec::new();
    let pairs: Vec<(Method, u64)> = config
        .durations_ns
        .iter()
        .flat_map(|&d| config.methods.iter().map(move |&m| (m, d)))
        .collect();
    let warmups: Vec<u64> = pairs
        .iter()
        .map(|&(m, d)| config.warmup.unwrap_or_else(|| default_warmup(m, d)))
        .collect();

    let budget = match (config.samples, config.budget_ns) {
        (Some(_), None) => None,
        (_, b) => Some(b.unwrap_or(DEFAULT_BUDGET_NS)),
    };

    let Some(budget) = budget else {
        let n = config.samples.unwrap_or(1).max(1);
        let cells = pairs
            .iter()
            .zip(&warmups)
            .map(|(&(method, duration_ns), &warmup)| CellPlan {
                method,
                duration_ns,
                warmup,
                min_samples: n,
                max_samples: n,
                time_limit_ns: None,
            })
            .collect();
        return Plan {
            cells,
            budget_ns: None,
            warnings,
        };
    };

    let wanted_min: Vec<u64> = pairs
        .iter()
        .map(|&(_, d)| config.samples.unwrap_or_else(|| default_min_samples(d)))
        .collect();
    let warmup_total: u64 = pairs
        .iter()
        .zip(&warmups)
        .map(|(&(_, d), &w)| w.saturating_mul(planned_cost_ns(d)))
        .fold(0, u64::saturating_add);
    // The warm-up comes out of the budget, but always leaves most of it for measuring.
    let measure_budget = budget.saturating_sub(warmup_total).max(budget / 2);
    let floors: Vec<u64> = pairs
        .iter()
        .zip(&wanted_min)
        .map(|(&(_, d), &n)| n.saturating_mul(planned_cost_ns(d)))
        .collect();
    let floor_total = floors.iter().copied().fold(0u64, u64::saturating_add);

    let (shares, mins): (Vec<u64>, Vec<u64>) = if floor_total > measure_budget {
        let scale = measure_budget as f64 / floor_total as f64;
        let mins: Vec<u64> = wanted_min
            .iter()
            .map(|&n| ((n as f64 * scale) as u64).max(1))
            .collect();
        let shares = floors.iter().map(|&f| (f as f64 * scale) as u64).collect();
        let shown: Vec<String> = config
            .durations_ns
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                let i = pairs.iter().position(|&(_, pd)| pd == d).unwrap_or(0);
                let per_cell = if k == 0 { " samples per cell" } else { "" };
                format!(
                    "{}{per_cell} at {}",
                    mins[i],
                    crate::output::format::duration(d)
                )
            })
            .collect();
        warnings.push(format!(
            "the budget of {} allows only about {}; percentiles will be rough (raise --budget)",
            crate::output::format::duration(budget),
            shown.join(", ")
        ));
        (shares, mins)
    } else {
        let level = water_level(&floors, measure_budget);
        (floors.iter().map(|&f| f.max(level)).collect(), wanted_min)
    };

    let cells = pairs
        .iter()
        .zip(&warmups)
        .zip(shares.iter().zip(&mins))
        .map(|((&(method, duration_ns), &warmup), (&share, &min))| {
            // Every sample takes at least its duration, so this bounds the
            // count the hard time limit allows; storage is preallocated for it.
            let by_time = share.saturating_mul(2) / duration_ns.max(1) + 1;
            let cap = config.samples.unwrap_or(MAX_SAMPLES);
            let max_samples = by_time.min(cap).max(min);
            CellPlan {
                method,
                duration_ns,
                warmup,
                min_samples: min.min(max_samples),
                max_samples,
                time_limit_ns: Some(share),
            }
        })
        .collect();
    Plan {
        cells,
        budget_ns: Some(budget),
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(durations_ns: Vec<u64>) -> BenchConfig {
        BenchConfig {
            methods: Method::ALL.to_vec(),
            durations_ns,
            samples: None,
            warmup: None,
            budget_ns: None,
        }
    }

    fn planned_total(p: &Plan) -> u64 {
        p.cells
            .iter()
            .map(|c| c.time_limit_ns.unwrap() + c.warmup * planned_cost_ns(c.duration_ns))
            .sum()
    }

    #[test]
    fn default_run_fits_the_budget_with_stable_p99() {
        let p = plan(&config(vec![10_000_000, 1_000_000, 100_000, 10_000]));
        assert_eq!(p.cells.len(), 44);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        for c in &p.cells {
            assert!(c.min_samples >= 200, "{c:?}");
            assert!(c.max_samples >= c.min_samples);
            assert!(c.max_samples <= MAX_SAMPLES);
        }
        let total = planned_total(&p);
        assert!(
            total <= DEFAULT_BUDGET_NS + DEFAULT_BUDGET_NS / 100,
            "{total}"
        );
        // Short waits get more samples than the minimum.
        let short = p.cells.iter().find(|c| c.duration_ns == 10_000).unwrap();
        assert!(short.time_limit_ns.unwrap() / planned_cost_ns(10_000) > 2_000);
    }

    #[test]
    fn methods_that_learn_warm_up_about_a_second() {
        // 1 s / (1 ms + the 60 µs planning overhead) = 943 waits.
        assert_eq!(default_warmup(Method::Keeptime, 1_000_000), 943);
        assert_eq!(default_warmup(Method::KeeptimeEfficient, 1_000_000), 943);
        assert_eq!(default_warmup(Method::Compensated, 1_000_000), 943);
        // At 10 ms 1 s is 99 waits: the floor of 300 applies (3 s).
        assert_eq!(default_warmup(Method::Keeptime, 10_000_000), 300);
        assert_eq!(default_warmup(Method::Compensated, 10_000_000), 300);
        // At 20 ms 300 waits would take 6 s: as many as fit in 5 s.
        assert_eq!(default_warmup(Method::Keeptime, 20_000_000), 249);
        // At 100 ms: 5 s / 100.06 ms = 49 (1 s alone would give 9).
        assert_eq!(default_warmup(Method::Keeptime, 100_000_000), 49);
        // Where 1 s holds more than the floor, 1 s counts.
        assert_eq!(default_warmup(Method::Keeptime, 2_500_000), 390);
        assert_eq!(
            default_warmup(Method::Keeptime, 10_000),
            MAX_LEARNING_WARMUP
        );
        assert_eq!(default_warmup(Method::Keeptime, 10_000_000_000), MIN_WARMUP);
        // The others: about 50 ms.
        assert_eq!(default_warmup(Method::SpinPause, 1_000_000), 47);
        assert_eq!(default_warmup(Method::KeeptimeSpin, 10_000), 714); // 50 ms / 70 µs
        assert_eq!(
            default_warmup(Method::SleepDefaultSlack, 10_000_000),
            MIN_WARMUP
        );
        let p = plan(&config(vec![1_000_000]));
        for c in &p.cells {
            assert_eq!(c.warmup, default_warmup(c.method, 1_000_000), "{c:?}");
        }
    }

    #[test]
    fn small_budget_scales_down_and_warns() {
        let mut c = config(vec![1_000_000_000]);
        c.budget_ns = Some(10_000_000_000);
        let p = plan(&c);
        assert_eq!(p.warnings.len(), 1);
        assert!(p
            .cells
            .iter()
            .all(|c| c.min_samples >= 1 && c.max_samples >= 1));
        assert!(planned_total(&p) <= 10_000_000_000 + 11 * 10 * 1_000_060_000);
    }

    #[test]
    fn exact_samples_without_budget() {
        let mut c = config(vec![50_000]);
        c.samples = Some(20);
        c.warmup = Some(3);
        let p = plan(&c);
        assert!(p.budget_ns.is_none());
        for cell in &p.cells {
            assert_eq!(
                (cell.min_samples, cell.max_samples, cell.warmup),
                (20, 20, 3)
            );
            assert_eq!(cell.time_limit_ns, None);
        }
    }

    #[test]
    fn water_level_fills_evenly() {
        assert_eq!(water_level(&[10, 10, 10], 60), 20);
        assert_eq!(water_level(&[50, 0, 0], 60), 5);
        assert_eq!(water_level(&[50, 0, 0], 50), 0);
        let floors = [100, 5, 7, 30];
        let total = 400;
        let l = water_level(&floors, total);
        let sum: u64 = floors.iter().map(|&f| f.max(l)).sum();
        assert!(
            sum <= total && total - sum < floors.len() as u64,
            "{l} {sum}"
        );
    }
}
