//! The planner: the cheapest plan of OS waits and a spin that meets the
//! tail target, from the learned model (`spec/sleep.md`, *plan_exact*), and
//! the crowd's spin cap.

use super::{
    CROWD_SPIN_DIVISOR, EXPLORE_COST_DIV, EXPLORE_EVERY, EXPLORE_YOUNG_SLEEPS, MIN_OS_WAIT_NS,
    SPLITS_NS,
};
use crate::estimate::{bucket_hi, bucket_lo, bucket_of, MarginEstimator, DEFAULT_MARGIN_NS, PPM};

/// Where in a sleep [`plan_exact`] is asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanStep {
    /// The first plan of a sleep (no OS wait taken yet): only then may a
    /// wait cut short to its bucket's longest (a *chunk*) be taken.
    pub first: bool,
    /// The first plan of a sleep that [`explores`]: each of a sleeper's
    /// first [`EXPLORE_YOUNG_SLEEPS`], then every [`EXPLORE_EVERY`]-th.
    pub explore: bool,
    /// A two-wait plan's first wait has been taken: only its short wait (one
    /// OS wait, then a spin) or a spin may follow, no further split or chunk.
    pub after_split: bool,
}

/// The next OS wait [`plan_exact`] chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OsWaitPlan {
    /// Length of the OS wait, from now.
    pub wait_ns: u64,
    /// Whether it is the long first wait of a two-wait plan.
    pub split: bool,
    /// The late-share budget (ppm) the rest of the sleep plans with: half
    /// the budget (the short wait's share) for a two-wait plan, else the
    /// budget unchanged.
    pub rest_budget_ppm: u64,
    /// Whether every margin the plan rests on is established at the share
    /// it is planned at ([`MarginEstimator::established`]); an unproven
    /// plan counts the sleep in [`SleeperStats::unproven_sleeps`](super::SleeperStats::unproven_sleeps).
    pub proven: bool,
}

/// Whether the first plan of the sleep numbered `seq` (counted after its
/// `begin_sleep`) explores: each of the first [`EXPLORE_YOUNG_SLEEPS`], then
/// every [`EXPLORE_EVERY`]-th.
pub fn explores(seq: u64) -> bool {
    seq <= EXPLORE_YOUNG_SLEEPS || seq % EXPLORE_EVERY == 0
}

/// The longest spin a sleeper in a crowd of `sleepers` (more than `cpus`)
/// may plan for a sleep of `length_ns`: its share of `1 /`
/// [`CROWD_SPIN_DIVISOR`] of the CPUs' time, less `wait_cost_ns` (the
/// learned cost of its OS wait). Exact, saturating at 0 and at `u64::MAX`.
///
/// ```
/// // 64 threads sleeping 1 ms on 2 CPUs, OS waits costing 5 µs: 10.6 µs of spin each.
/// assert_eq!(keeptime::crowd_spin_cap(2, 64, 1_000_000, 5_000), 10_625);
/// ```
pub fn crowd_spin_cap(cpus: usize, sleepers: usize, length_ns: u64, wait_cost_ns: u64) -> u64 {
    let share = u128::from(length_ns) * cpus as u128
        / (u128::from(CROWD_SPIN_DIVISOR) * (sleepers.max(1) as u128));
    u64::try_from(share)
        .unwrap_or(u64::MAX)
        .saturating_sub(wait_cost_ns)
}

/// The next OS wait of a spin-finished sleep with `remaining_ns` to go, or
/// `None` to spin the rest: the plan with the least expected thread CPU whose
/// predicted share of late sleeps is at most `budget_ppm` parts per million
/// (`spec/sleep.md`, *Planning*). Candidates:
///
/// * **one OS wait** ending the bucket's margin at `budget_ppm` (at least
///   `min_spin_ns`) before the deadline, then a spin: its learned cost plus
///   the expected spin;
/// * **two OS waits** for each split `S` of [`SPLITS_NS`]: a long wait ending
///   `S` plus the short wait's margin (at half the budget) before the
///   deadline, then a short wait of about `S`, then a spin; taken only if the
///   long wait's own late share plus the short one's fit the budget, and,
///   when the long wait's bucket is not established at the budget, only if
///   it ends at least that bucket's margin before the short one;
/// * **a pure spin** of `remaining_ns`.
///
/// After a two-wait plan's first wait (`step.after_split`) only the one-wait
/// candidate or a spin is considered; a chunk only as a sleep's first plan. With `step.explore` (the first plan of
/// every [`EXPLORE_EVERY`]-th sleep), a
/// two-wait plan that meets the budget and whose short wait's bucket is not
/// yet established at half the budget is taken even if it costs more: the one
/// whose short bucket has the most samples (finishing one bucket at a time),
/// among those whose short wait follows at least half of the long waits (a
/// split that the long wait's usual lateness leaves too short for a second
/// wait would observe nothing).
///
/// Before anything is learned: one OS wait ending
/// [`DEFAULT_MARGIN_NS`](crate::estimate::DEFAULT_MARGIN_NS) (or `min_spin_ns`)
/// before the deadline.
pub fn plan_exact(
    est: &MarginEstimator,
    remaining_ns: u64,
    budget_ppm: u64,
    min_spin_ns: u64,
    step: PlanStep,
) -> Option<OsWaitPlan> {
    let PlanStep {
        first,
        explore,
        after_split,
    } = step;
    let r = remaining_ns;
    if r < MIN_OS_WAIT_NS {
        return None;
    }
    let one = |wait_ns, proven| OsWaitPlan {
        wait_ns,
        split: false,
        rest_budget_ppm: budget_ppm,
        proven,
    };
    if est.is_empty() {
        let wait = r.checked_sub(DEFAULT_MARGIN_NS.max(min_spin_ns))?;
        return (wait >= MIN_OS_WAIT_NS).then(|| one(wait, false));
    }
    let mut best = None;
    let mut best_cost = r; // a pure spin
                           // A wait cut to its bucket's longest (its own margin would allow a longer
                           // one, the longer bucket's does not) is not the last OS wait: its cost is
                           // not known here, so it is only a fallback when no complete plan fits.
    let mut chunk = None;
    for b in (0..=bucket_of(r)).rev() {
        let g = est.margin(b, budget_ppm).max(min_spin_ns);
        let Some(wait) = r.checked_sub(g) else {
            continue;
        };
        if wait > bucket_hi(b) {
            if bucket_hi(b) >= MIN_OS_WAIT_NS && first {
                chunk = Some((
                    one(bucket_hi(b), est.established(b, budget_ppm)),
                    est.cost(b),
                ));
            }
            break;
        }
        if wait >= bucket_lo(b) && wait >= MIN_OS_WAIT_NS {
            let t = est.tail(b, budget_ppm, g);
            let cost = est.cost(b).saturating_add(t.spin_sum_ns / t.samples);
            if cost < best_cost {
                best = Some(one(wait, est.established(b, budget_ppm)));
                best_cost = cost;
            }
            break;
        }
    }
    let one_cost = best_cost; // the cheapest one-wait plan's, or a pure spin's
    let mut explored: Option<(OsWaitPlan, u64)> = None;
    let q = budget_ppm / 2;
    for s in SPLITS_NS.into_iter().filter(|_| q > 0 && !after_split) {
        let bs = bucket_of(s);
        let gs = est.margin(bs, q).max(min_spin_ns);
        let g = s.saturating_add(gs);
        let Some(wait) = r.checked_sub(g) else {
            continue;
        };
        if wait < MIN_OS_WAIT_NS {
            continue;
        }
        let b1 = bucket_of(wait);
        // A long wait too young for the budget is held to its margin, like a
        // one-wait plan's: a young view's tail says nothing of a rare late
        // wake-up, and longer waits bound it.
        let long_established = est.established(b1, budget_ppm);
        if !long_established && g < est.margin(b1, budget_ppm) {
            continue;
        }
        let t1 = est.tail(b1, budget_ppm, g);
        let (room, rest_spin) = est.split_counts(b1, budget_ppm, s - MIN_OS_WAIT_NS, g);
        let ts = est.tail(bs, q, gs);
        let late = (t1.late * ts.samples + room * ts.late).saturating_mul(PPM);
        if late > budget_ppm.saturating_mul(t1.samples * ts.samples) {
            continue;
        }
        let second = est.cost(bs).saturating_add(ts.spin_sum_ns / ts.samples);
        let cost = est
            .cost(b1)
            .saturating_add(room.saturating_mul(second).saturating_add(rest_spin) / t1.samples);
        let short_established = est.established(bs, q);
        let plan = OsWaitPlan {
            wait_ns: wait,
            split: true,
            rest_budget_ppm: q,
            proven: short_established && long_established,
        };
        // Exploring observes the short wait only when one follows: after at
        // least half of the long waits (`room`), not a split that the long
        // wait's usual lateness leaves too short for a second wait.
        if explore
            && !short_established
            && room.saturating_mul(2) >= t1.samples
            && cost <= one_cost.saturating_add(r / EXPLORE_COST_DIV)
        {
            let n = est.samples(bs, q);
            if explored.map_or(true, |(_, m)| n > m) {
                explored = Some((plan, n));
            }
        }
        if cost < best_cost {
            best = Some(plan);
            best_cost = cost;
        }
    }
    if let Some((plan, _)) = explored {
        return Some(plan);
    }
    match (best, chunk) {
        (None, Some((plan, cost))) if cost < r => Some(plan),
        _ => best,
    }
}

/// The single OS wait of an [`Mode::Efficient`](super::Mode::Efficient) sleep: the longest wait `L >= 1`
/// with `L + compensation(bucket(L)) <= remaining_ns`; `None` means return at once.
pub fn plan_efficient(est: &MarginEstimator, remaining_ns: u64) -> Option<u64> {
    (0..=bucket_of(remaining_ns)).rev().find_map(|b| {
        let wait = remaining_ns
            .checked_sub(est.compensation(b))?
            .min(bucket_hi(b));
        (wait >= bucket_lo(b).max(1)).then_some(wait)
    })
}
