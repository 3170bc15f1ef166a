//! The oracle: the least CPU any "OS wait(s), then spin" plan needs on a
//! trace for a given share of late sleeps (`keeptime trace --oracle`).

use super::record::SplitMix64;
use super::{Group, Trace};
use crate::MIN_OS_WAIT_NS;
use std::fmt;

/// Margins the oracle tries (µs): the reference implementation's grid
/// ([`ORACLE_PY_MARGINS_US`]), then on to 7 ms. That grid stops at 300 µs,
/// so it answered "spin" (100 % CPU) wherever every plan needs a longer
/// margin: on the `amd-epyc-kvm-nocpuidle` trace, 10 ms sleeps at 1 % late,
/// which this grid meets at 1.6 % CPU (a 3 ms margin before a 200 µs split).
pub const ORACLE_MARGINS_US: [u64; 28] = [
    0, 2, 5, 10, 15, 20, 25, 30, 35, 40, 50, 60, 70, 80, 100, 120, 150, 200, 300, 400, 500, 700,
    1_000, 1_500, 2_000, 3_000, 5_000, 7_000,
];

/// The reference implementation's margins (µs), the first 19 of
/// [`ORACLE_MARGINS_US`]: an oracle built [`with_margins`](Oracle::with_margins)
/// these reproduces its figures given its draws (`tests/trace.rs`).
pub const ORACLE_PY_MARGINS_US: [u64; 19] = [
    0, 2, 5, 10, 15, 20, 25, 30, 35, 40, 50, 60, 70, 80, 100, 120, 150, 200, 300,
];

/// Splits between the long and the short wait the oracle tries (µs).
pub const ORACLE_SPLITS_US: [u64; 4] = [50, 100, 200, 400];

/// Draws per plan by default.
pub const ORACLE_DEFAULT_DRAWS: usize = 4000;

/// A plan of the oracle's family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OracleChoice {
    /// One OS wait until `margin_ns` before the deadline, then a spin (a
    /// margin at or past the duration minus [`MIN_OS_WAIT_NS`] means no wait).
    OneWait {
        /// Margin (ns).
        margin_ns: u64,
    },
    /// An OS wait until `long_margin_ns + split_ns` before the deadline, then
    /// one until `short_margin_ns` before it (if at least
    /// [`MIN_OS_WAIT_NS`] is left), then a spin.
    TwoWaits {
        /// g1 (ns).
        long_margin_ns: u64,
        /// The split S (ns).
        split_ns: u64,
        /// g2 (ns).
        short_margin_ns: u64,
    },
    /// No plan of the family met the tail: spin the whole sleep.
    Spin,
}

impl fmt::Display for OracleChoice {
    /// The oracle's wording, as `keeptime trace --oracle` prints it (margins
    /// in µs).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = |ns: u64| format!("{:.0}", ns as f64 / 1e3);
        match *self {
            OracleChoice::OneWait { margin_ns } => {
                write!(f, "one OS wait, margin {}", us(margin_ns))
            }
            OracleChoice::TwoWaits {
                long_margin_ns,
                split_ns,
                short_margin_ns,
            } => write!(
                f,
                "long wait margin {} + {}, short wait margin {}",
                us(long_margin_ns),
                us(split_ns),
                us(short_margin_ns)
            ),
            OracleChoice::Spin => f.write_str("spin"),
        }
    }
}

/// The cheapest plan for a sleep and a tail target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OraclePlan {
    /// The sleep (ns).
    pub duration_ns: u64,
    /// The target: the largest share of late sleeps allowed.
    pub tail_share: f64,
    /// CPU per sleep ÷ the sleep: (OS waits' thread CPU + spin) / duration.
    pub cpu_share: f64,
    /// Share of the draws that woke after the deadline.
    pub late_share: f64,
    /// The plan.
    pub plan: OracleChoice,
}

/// Bad oracle arguments.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OracleError {
    /// A zero duration.
    #[error("the sleep duration must be positive (got 0 ns)")]
    ZeroDuration,
    /// A tail share outside [0, 1] or NaN.
    #[error("tail share {0} is not in [0, 1]")]
    Tail(f64),
    /// No draws.
    #[error("the oracle needs at least one draw")]
    NoDraws,
}

/// The oracle's model, evaluated on a trace: draws fixed once, every plan
/// of the family replayed against the same draws.
///
/// Method: `draws` pairs (u₁, u₂) uniform in [0, 1) (from SplitMix64 seeded
/// with `seed`, or given with [`Oracle::with_draws`]; other draws change the
/// figures only within sampling noise). An OS wait of length L with draw u takes
/// row ⌊u·n⌋ (file order) of the nearest recorded length's n rows: it wakes
/// `max(0, overshoot)` after its target and costs that row's thread CPU. For
/// a sleep of D, a plan (g1, S, g2) makes the first wait of L₁ = D − g1 − S
/// (if L₁ ≥ 5 µs; it ends at t = L₁ + overshoot), then, if S > 0, a wait of
/// L₂ = D − g2 − t (if L₂ ≥ 5 µs), then spins to D. Where the trace has
/// [after rows](Trace::after_rows) (waits recorded right after a long one,
/// as `keeptime trace` records the short lengths after 10.24 ms) of L₂'s
/// nearest recorded length, and L₁ is at least half the shortest wait they
/// followed, the second wait takes row ⌊u₂·n⌋ of those n instead: it
/// follows a long wait, as they did. A trace without after rows (every
/// shared trace) is priced as the reference implementation prices it. A
/// sleep is late when
/// t > D (no spin is counted then); CPU = the waits' thread CPU + D − t.
/// Plans: (g1, 0, 0) for every margin g1, and (g1, S, g2) for every margin g1,
/// split S and margin g2 with g1 + S < D. The cheapest plan whose late share
/// is ≤ the tail wins (the first in that order on a tie); none: a pure spin.
#[derive(Clone, Debug)]
pub struct Oracle<'t> {
    trace: &'t Trace,
    /// Per recorded length, per draw: the (overshoot, cpu) draw u₁ picks.
    first: Vec<Vec<(u64, u64)>>,
    /// Per draw, per recorded length (draw-major: the second wait's length
    /// varies by draw): the (overshoot, cpu) draw u₂ picks.
    second: Vec<(u64, u64)>,
    /// The same among the length's after rows where it has any: for a
    /// second wait after a first wait of at least `after_first_ns` (empty
    /// for a trace without after rows).
    second_after: Vec<(u64, u64)>,
    /// Half the shortest wait the trace's after rows followed (none without
    /// after rows).
    after_first_ns: Option<u64>,
    lengths: usize,
    draws: usize,
    /// The margins tried (µs).
    margins_us: &'static [u64],
}

/// Every plan's outcome for one sleep duration.
#[derive(Clone, Debug)]
pub struct OracleOutcomes {
    duration_ns: u64,
    draws: usize,
    /// (plan, late count, CPU sum in ns) in the family's order.
    plans: Vec<(OracleChoice, usize, u64)>,
}

impl OracleOutcomes {
    /// The cheapest plan whose late share is at most `tail_share`.
    pub fn best(&self, tail_share: f64) -> Result<OraclePlan, OracleError> {
        if !(0.0..=1.0).contains(&tail_share) {
            return Err(OracleError::Tail(tail_share));
        }
        let n = self.draws as f64;
        let mut best: Option<(OracleChoice, usize, u64)> = None;
        for &p in &self.plans {
            if p.1 as f64 / n <= tail_share && best.map_or(true, |b| p.2 < b.2) {
                best = Some(p);
            }
        }
        let d = self.duration_ns as f64;
        Ok(match best {
            Some((plan, late, cpu)) => OraclePlan {
                duration_ns: self.duration_ns,
                tail_share,
                cpu_share: cpu as f64 / n / d,
                late_share: late as f64 / n,
                plan,
            },
            None => OraclePlan {
                duration_ns: self.duration_ns,
                tail_share,
                cpu_share: 1.0,
                late_share: 0.0,
                plan: OracleChoice::Spin,
            },
        })
    }
}

impl<'t> Oracle<'t> {
    /// Fixes `draws` draws from a SplitMix64 seeded with `seed`.
    pub fn new(trace: &'t Trace, draws: usize, seed: u64) -> Result<Self, OracleError> {
        if draws == 0 {
            return Err(OracleError::NoDraws);
        }
        let mut rng = SplitMix64(seed);
        let us: Vec<(f64, f64)> = (0..draws)
            .map(|_| (rng.next_f64(), rng.next_f64()))
            .collect();
        Self::with_draws(trace, &us)
    }

    /// An oracle replaying these draws (u₁, u₂), each meant to be in [0, 1)
    /// (a value outside is taken as the nearest end, NaN as 0), e.g. the exact
    /// draws of another implementation.
    pub fn with_draws(trace: &'t Trace, us: &[(f64, f64)]) -> Result<Self, OracleError> {
        let draws = us.len();
        if draws == 0 {
            return Err(OracleError::NoDraws);
        }
        let row = |waits: &[(u64, u64)], u: f64| {
            let n = waits.len();
            // ⌊u·n⌋ < n for u < 1; `as` saturates (NaN, u < 0 give 0), min
            // guards u ≥ 1.
            waits[((u * n as f64) as usize).min(n - 1)]
        };
        let first = trace
            .groups
            .iter()
            .map(|g| us.iter().map(|&(u1, _)| row(&g.waits, u1)).collect())
            .collect();
        let second = us
            .iter()
            .flat_map(|&(_, u2)| trace.groups.iter().map(move |g| row(&g.waits, u2)))
            .collect();
        // A second wait after a long first one: where the trace recorded its
        // length right after a long wait (after rows), drawn from those.
        let after_table = |i: usize, g: &'t Group| match trace.after_waits(i) {
            [] => g.waits.as_slice(),
            after => after,
        };
        let after_first_ns = trace.after_rows().iter().map(|a| a.after_ns / 2).min();
        // Only a trace with after rows reads it (after_first_ns is some).
        let second_after = match after_first_ns {
            None => Vec::new(),
            Some(_) => us
                .iter()
                .flat_map(|&(_, u2)| {
                    trace
                        .groups
                        .iter()
                        .enumerate()
                        .map(move |(i, g)| row(after_table(i, g), u2))
                })
                .collect(),
        };
        Ok(Oracle {
            trace,
            first,
            second,
            second_after,
            after_first_ns,
            lengths: trace.groups.len(),
            draws,
            margins_us: &ORACLE_MARGINS_US,
        })
    }

    /// The same oracle trying these margins (µs) instead of
    /// [`ORACLE_MARGINS_US`], e.g. [`ORACLE_PY_MARGINS_US`] to reproduce the
    /// reference implementation.
    #[must_use]
    pub fn with_margins(mut self, margins_us: &'static [u64]) -> Self {
        self.margins_us = margins_us;
        self
    }

    /// Replays every plan of the family for a sleep of `duration_ns`.
    pub fn outcomes(&self, duration_ns: u64) -> Result<OracleOutcomes, OracleError> {
        if duration_ns == 0 {
            return Err(OracleError::ZeroDuration);
        }
        let d = duration_ns;
        let m = self.margins_us.len();
        let mut plans = Vec::with_capacity(m * (1 + ORACLE_SPLITS_US.len() * m));
        // First waits' end and CPU per draw, reused for every g2.
        let mut t1 = vec![0u64; self.draws];
        let mut c1 = vec![0u64; self.draws];
        for &g1_us in self.margins_us {
            let g1 = g1_us * 1_000;
            let (late, cpu) = self.first_wait(d, g1, &mut t1, &mut c1);
            plans.push((OracleChoice::OneWait { margin_ns: g1 }, late, cpu));
            for split_us in ORACLE_SPLITS_US {
                let split = split_us * 1_000;
                if split + g1 >= d {
                    continue;
                }
                self.first_wait(d, g1 + split, &mut t1, &mut c1);
                let first_len = d.saturating_sub(g1 + split);
                let table = match self.after_first_ns {
                    Some(a) if first_len >= a => &self.second_after,
                    _ => &self.second,
                };
                for &g2_us in self.margins_us {
                    let g2 = g2_us * 1_000;
                    let (late, cpu) = self.second_wait(d, g2, &t1, &c1, table);
                    plans.push((
                        OracleChoice::TwoWaits {
                            long_margin_ns: g1,
                            split_ns: split,
                            short_margin_ns: g2,
                        },
                        late,
                        cpu,
                    ));
                }
            }
        }
        Ok(OracleOutcomes {
            duration_ns,
            draws: self.draws,
            plans,
        })
    }

    /// The first wait, until `lead` before the deadline: fills the end time
    /// and CPU per draw; returns (late, CPU sum) of the one-wait plan.
    fn first_wait(&self, d: u64, lead: u64, t1: &mut [u64], c1: &mut [u64]) -> (usize, u64) {
        let len = d.checked_sub(lead).filter(|&l| l >= MIN_OS_WAIT_NS);
        match len {
            None => {
                t1.fill(0);
                c1.fill(0);
                (0, d * self.draws as u64)
            }
            Some(l) => {
                let table = &self.first[self.trace.nearest_index(l)];
                let (mut late, mut cpu) = (0usize, 0u64);
                for ((&(w, c), t), cc) in table.iter().zip(t1.iter_mut()).zip(c1.iter_mut()) {
                    let end = l.saturating_add(w);
                    *t = end;
                    *cc = c;
                    cpu = cpu.saturating_add(c);
                    if end > d {
                        late += 1;
                    } else {
                        cpu += d - end;
                    }
                }
                (late, cpu)
            }
        }
    }

    /// The second wait, until `g2` before the deadline, after the first,
    /// drawn from `table` ([`second`](Self::second) or `second_after`).
    fn second_wait(
        &self,
        d: u64,
        g2: u64,
        t1: &[u64],
        c1: &[u64],
        table: &[(u64, u64)],
    ) -> (usize, u64) {
        let (mut late, mut cpu) = (0usize, 0u64);
        let until = d.saturating_sub(g2);
        for (i, (&t0, &c0)) in t1.iter().zip(c1).enumerate() {
            let mut t = t0;
            cpu = cpu.saturating_add(c0);
            if d >= g2 && until >= t.saturating_add(MIN_OS_WAIT_NS) {
                let l = until - t;
                let (w, c) = table[i * self.lengths + self.trace.nearest_index(l)];
                t = until.saturating_add(w);
                cpu = cpu.saturating_add(c);
            }
            if t > d {
                late += 1;
            } else {
                cpu += d - t;
            }
        }
        (late, cpu)
    }
}

/// The cheapest plan of the oracle's family for one sleep and tail target,
/// from `draws` draws seeded with 1 (see [`Oracle`] for the method; build an
/// [`Oracle`] once to ask about several durations and targets).
pub fn oracle(
    trace: &Trace,
    duration_ns: u64,
    tail_share: f64,
    draws: usize,
) -> Result<OraclePlan, OracleError> {
    if !(0.0..=1.0).contains(&tail_share) {
        return Err(OracleError::Tail(tail_share));
    }
    Oracle::new(trace, draws, 1)?
        .outcomes(duration_ns)?
        .best(tail_share)
}

// ------------------------------------------------------------------- replay
