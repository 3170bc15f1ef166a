//! Statistics of one cell (one method at one duration), computed after the
//! cell from every recorded error. All samples are kept, so the percentiles
//! are exact, not approximated; the definitions are the ones in
//! `spec/bench-result.md`, in integer arithmetic where it matters, so every
//! language's bench computes the same figures from the same samples.

use keeptime::stats::nearest_rank;
use serde::Serialize;

/// Per-mille ranks of the reported percentiles: p50, p90, p99, p99.9.
pub const PERCENTILES_PER_MILLE: [u64; 4] = [500, 900, 990, 999];

/// The statistics of one cell. Errors are signed nanoseconds: the first clock
/// reading after the wait minus the deadline (negative = returned early).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    /// Number of measured waits.
    pub samples: u64,
    /// Smallest error.
    pub min_ns: i64,
    /// Arithmetic mean of the errors.
    pub mean_ns: f64,
    /// Sample standard deviation (n − 1 denominator; 0 for one sample).
    pub stddev_ns: f64,
    /// Median, nearest rank.
    pub p50_ns: i64,
    /// 90th percentile, nearest rank.
    pub p90_ns: i64,
    /// 99th percentile, nearest rank.
    pub p99_ns: i64,
    /// 99.9th percentile, nearest rank.
    pub p999_ns: i64,
    /// Largest error.
    pub max_ns: i64,
    /// Waits that returned before their deadline (error < 0).
    pub early: u64,
    /// Thread CPU time over wall time during the measured waits, in percent.
    pub cpu_percent: f64,
    /// Wall time of the measured waits (first start to last wake-up), ns.
    pub wall_ns: u64,
    /// Thread CPU time over the same span, ns.
    pub cpu_ns: u64,
    /// The errors in log-linear buckets (see [`upper_edge`]); only non-empty
    /// buckets, in increasing order.
    pub histogram: Vec<Bucket>,
}

/// One histogram bucket: the samples with `gt_ns < error <= le_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Bucket {
    /// Exclusive lower edge.
    pub gt_ns: i64,
    /// Inclusive upper edge.
    pub le_ns: i64,
    /// Number of errors in the bucket.
    pub count: u64,
}

impl Stats {
    /// Computes the statistics of `errors` (sorted in place) measured over
    /// `wall_ns` of wall time and `cpu_ns` of thread CPU time. `None` when
    /// there are no samples.
    pub fn from_errors(errors: &mut [i64], wall_ns: u64, cpu_ns: u64) -> Option<Stats> {
        if errors.is_empty() {
            return None;
        }
        errors.sort_unstable();
        let n = errors.len();
        let sum: i128 = errors.iter().map(|&e| i128::from(e)).sum();
        let mean = sum as f64 / n as f64;
        let stddev = if n > 1 {
            let ss: f64 = errors.iter().map(|&e| (e as f64 - mean).powi(2)).sum();
            (ss / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        // Nearest rank (the core's rule, spec/bench-result.md); `errors` is
        // not empty, so every rank exists.
        let [p50, p90, p99, p999] =
            PERCENTILES_PER_MILLE.map(|q| nearest_rank(errors, q).unwrap_or(errors[n - 1]));
        let cpu_percent = if wall_ns == 0 {
            0.0
        } else {
            100.0 * cpu_ns as f64 / wall_ns as f64
        };
        Some(Stats {
            samples: n as u64,
            min_ns: errors[0],
            mean_ns: mean,
            stddev_ns: stddev,
            p50_ns: p50,
            p90_ns: p90,
            p99_ns: p99,
            p999_ns: p999,
            max_ns: errors[n - 1],
            early: errors.partition_point(|&e| e < 0) as u64,
            cpu_percent,
            wall_ns,
            cpu_ns,
            histogram: histogram(errors),
        })
    }
}

/// Bucket edges keep this many significant bits: 8 buckets per power of two,
/// each at most 12.5 % of its value wide.
pub const SIGNIFICANT_BITS: u32 = 4;

fn low_mask(v: u64) -> u64 {
    let bits = u64::BITS - v.leading_zeros();
    if bits <= SIGNIFICANT_BITS {
        0
    } else {
        (1u64 << (bits - SIGNIFICANT_BITS)) - 1
    }
}

fn round_down_sig(v: u64) -> u64 {
    v & !low_mask(v)
}

fn round_up_sig(v: u64) -> u64 {
    let mask = low_mask(v);
    if v & mask == 0 {
        v
    } else {
        (v | mask).saturating_add(1)
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The upper edge of the histogram bucket holding `v`: the smallest edge
/// `>= v`. Edges are 0 and ±e for every e ≥ 1 with at most
/// [`SIGNIFICANT_BITS`] significant bits (1, 2, …, 16, 18, 20, …, 30, 32,
/// 36, …).
pub fn upper_edge(v: i64) -> i64 {
    match v {
        0 => 0,
        v if v > 0 => to_i64(round_up_sig(v as u64)),
        v => -to_i64(round_down_sig(v.unsigned_abs())),
    }
}

/// The edge just below edge `le` (the bucket's exclusive lower edge).
pub fn lower_edge(le: i64) -> i64 {
    match le {
        0 => -1,
        le if le > 0 => {
            let below = le as u64 - 1;
            to_i64(round_down_sig(below))
        }
        le => -to_i64(round_up_sig(le.unsigned_abs().saturating_add(1))),
    }
}

/// Buckets the sorted `errors` on the edges of [`upper_edge`].
pub fn histogram(sorted: &[i64]) -> Vec<Bucket> {
    let mut out: Vec<Bucket> = Vec::new();
    for &e in sorted {
        let le = upper_edge(e);
        match out.last_mut() {
            Some(b) if b.le_ns == le => b.count += 1,
            _ => out.push(Bucket {
                gt_ns: lower_edge(le),
                le_ns: le,
                count: 1,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut v: Vec<i64> = (1..=20).rev().collect();
        let s = Stats::from_errors(&mut v, 1, 1).unwrap();
        assert_eq!((s.p50_ns, s.p90_ns, s.p99_ns, s.p999_ns), (10, 18, 20, 20));
    }

    #[test]
    fn stats_of_known_samples() {
        let mut e = vec![3, -1, 2, 10, 1];
        let s = Stats::from_errors(&mut e, 1_000, 250).unwrap();
        assert_eq!(s.samples, 5);
        assert_eq!((s.min_ns, s.p50_ns, s.max_ns), (-1, 2, 10));
        assert_eq!(s.early, 1);
        assert_eq!(s.mean_ns, 3.0);
        assert!((s.stddev_ns - (70.0f64 / 4.0).sqrt()).abs() < 1e-9);
        assert_eq!(s.cpu_percent, 25.0);
        assert_eq!(s.histogram.iter().map(|b| b.count).sum::<u64>(), 5);
        assert!(Stats::from_errors(&mut [], 1, 1).is_none());
    }

    #[test]
    fn edges() {
        let pos: Vec<i64> = (1..=40).filter(|&v| upper_edge(v) == v).collect();
        assert_eq!(
            pos,
            [
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 26, 28, 30,
                32, 36, 40
            ]
        );
        assert_eq!(upper_edge(17), 18);
        assert_eq!(upper_edge(-17), -16);
        assert_eq!(lower_edge(18), 16);
        assert_eq!(lower_edge(-16), -18);
        assert_eq!(lower_edge(0), -1);
        assert_eq!(lower_edge(1), 0);
        assert_eq!(lower_edge(-1), -2);
        assert_eq!(upper_edge(54_321), 57_344); // 0b1101… rounds up to 0b1110 << 12
    }

    proptest! {
        #[test]
        fn every_value_lies_in_its_bucket(v in -(1i64 << 62)..(1i64 << 62)) {
            let le = upper_edge(v);
            let gt = lower_edge(le);
            prop_assert!(gt < v && v <= le, "{} not in ({}, {}]", v, gt, le);
            // The lower edge is itself an edge, and nothing between is.
            prop_assert_eq!(upper_edge(gt), gt);
            prop_assert_eq!(upper_edge(gt + 1), le);
        }

        #[test]
        fn percentiles_are_ordered(mut v in proptest::collection::vec(any::<i32>(), 1..500)) {
            let mut e: Vec<i64> = v.drain(..).map(i64::from).collect();
            let s = Stats::from_errors(&mut e, 10, 5).unwrap();
            prop_assert!(s.min_ns <= s.p50_ns && s.p50_ns <= s.p90_ns && s.p90_ns <= s.p99_ns);
            prop_assert!(s.p99_ns <= s.p999_ns && s.p999_ns <= s.max_ns);
            prop_assert!(s.min_ns as f64 <= s.mean_ns && s.mean_ns <= s.max_ns as f64);
            prop_assert_eq!(s.histogram.iter().map(|b| b.count).sum::<u64>(), s.samples);
            prop_assert!(s.histogram.windows(2).all(|w| w[0].le_ns <= w[1].gt_ns));
        }
    }
}
