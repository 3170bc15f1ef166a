//! The measured results: one cell (a method at one duration), one crowd row,
//! a method's family, and the error of one wait. The runner and the crowd
//! produce these; the result document ([`report`](super::report)), the
//! output and `keeptime report` read them.

use super::stats::Stats;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A wait ending more than this after its deadline counts as late (2 µs):
/// the crowd's `late_share` and a cell's.
pub const LATE_NS: i64 = 2_000;

/// `woke − deadline` as a signed number, saturating (only a broken clock
/// could make it overflow).
#[inline]
pub fn error_ns(woke: u64, deadline: u64) -> i64 {
    if woke >= deadline {
        i64::try_from(woke - deadline).unwrap_or(i64::MAX)
    } else {
        i64::try_from(deadline - woke).map_or(i64::MIN, |e| -e)
    }
}

/// What kind of wait a method is, in words (`spec/bench-result.md`,
/// `methods[].family`). Readers pick baselines by family, never by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Family {
    /// Reads the clock in a tight loop until the deadline.
    #[serde(rename = "busy loop")]
    BusyLoop,
    /// Reads the clock with the CPU's pause hint between reads: the pure spin.
    #[serde(rename = "spin with pause")]
    SpinWithPause,
    /// Gives the CPU away (`sched_yield`) between clock reads.
    #[serde(rename = "yield loop")]
    YieldLoop,
    /// One OS sleep (relative or absolute) per wait, whatever the slack.
    #[serde(rename = "OS sleep")]
    OsSleep,
    /// An OS sleep to a fixed distance before the deadline, then a spin.
    #[serde(rename = "sleep-then-spin hybrid")]
    SleepThenSpin,
    /// An OS sleep shortened by a learned overshoot; may end early.
    #[serde(rename = "compensated sleep")]
    CompensatedSleep,
    /// One of keeptime's own sleepers, in any mode.
    #[serde(rename = "keeptime")]
    Keeptime,
    /// Another library's precise wait.
    #[serde(rename = "peer library")]
    PeerLibrary,
    /// A timer of an async runtime.
    #[serde(rename = "async timer")]
    AsyncTimer,
}

impl Family {
    /// Every family, in the order of the format's list.
    pub const ALL: [Family; 9] = [
        Family::BusyLoop,
        Family::SpinWithPause,
        Family::YieldLoop,
        Family::OsSleep,
        Family::SleepThenSpin,
        Family::CompensatedSleep,
        Family::Keeptime,
        Family::PeerLibrary,
        Family::AsyncTimer,
    ];

    /// The family's words, as in the format.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::BusyLoop => "busy loop",
            Family::SpinWithPause => "spin with pause",
            Family::YieldLoop => "yield loop",
            Family::OsSleep => "OS sleep",
            Family::SleepThenSpin => "sleep-then-spin hybrid",
            Family::CompensatedSleep => "compensated sleep",
            Family::Keeptime => "keeptime",
            Family::PeerLibrary => "peer library",
            Family::AsyncTimer => "async timer",
        }
    }

    /// Whether a wait of this family is a pure spin (no OS sleep at all).
    pub fn is_pure_spin(self) -> bool {
        matches!(self, Family::BusyLoop | Family::SpinWithPause)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One cell: a method at one duration, with its statistics.
#[derive(Clone, Debug, Serialize)]
pub struct CellResult {
    /// The method's name.
    pub method: String,
    /// The method's family, from the document's `methods` (not a field of
    /// the cell in the format); `None` when the document does not say.
    #[serde(skip)]
    pub family: Option<Family>,
    /// The requested wait, ns.
    pub duration_ns: u64,
    /// Warm-up waits before measuring (not in the statistics).
    pub warmup: u64,
    /// Timer slack in force during the cell, ns (`null` where none).
    pub timer_slack_ns: Option<u64>,
    /// The statistics of the error (the caller's first clock reading after
    /// the call returned − the deadline), flattened into the cell.
    #[serde(flatten)]
    pub stats: Stats,
    /// Share (0–1) of the waits more than [`LATE_NS`] late; optional in the
    /// format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_share: Option<f64>,
    /// The return: the caller's reading − the method's own last reading,
    /// p50 and p90 (nearest rank); absent for methods that return no
    /// reading of their own.
    #[serde(flatten)]
    pub ret: Option<Return>,
    /// keeptime's own account of the measured samples (spin-finished cells).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sleeper: Option<SleeperAccount>,
}

/// How long after the method's own last clock reading the caller got its
/// first: the percentiles of `caller reading − method reading`, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Return {
    /// Median, nearest rank.
    #[serde(rename = "return_p50_ns")]
    pub p50_ns: i64,
    /// 90th percentile, nearest rank.
    #[serde(rename = "return_p90_ns")]
    pub p90_ns: i64,
}

impl Return {
    /// The percentiles of `returns` (sorted in place); `None` when empty.
    pub fn from_samples(returns: &mut [i64]) -> Option<Return> {
        returns.sort_unstable();
        Some(Return {
            p50_ns: keeptime::stats::nearest_rank(returns, 500)?,
            p90_ns: keeptime::stats::nearest_rank(returns, 900)?,
        })
    }
}

/// The share of `errors` more than [`LATE_NS`] late; `None` when empty.
pub fn late_share(errors: &[i64]) -> Option<f64> {
    if errors.is_empty() {
        return None;
    }
    let late = errors.iter().filter(|&&e| e > LATE_NS).count();
    Some(late as f64 / errors.len() as f64)
}

/// What a keeptime sleeper says it spent over a cell's measured samples.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct SleeperAccount {
    /// The tail target in force, ppm.
    pub tail_target_ppm: u32,
    /// Sleeps that waited.
    pub sleeps: u64,
    /// Sleeps an OS wait ended after the deadline.
    pub late: u64,
    /// OS waits issued.
    pub os_waits: u64,
    /// Time spent spinning, ns.
    pub spin_ns: u64,
    /// Learned OS-wait costs plus the spin, ns.
    pub cpu_estimate_ns: u64,
    /// Sleeps planned on a margin not yet established at the target
    /// (`spec/sleep.md`, *Unproven sleeps*); 0 when a reader finds none.
    #[serde(default)]
    pub unproven_sleeps: u64,
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
    /// Wall time of the measured span (the common start to the last
    /// thread's last wake-up), ns.
    #[serde(default)]
    pub wall_ns: u64,
    /// Process CPU time over the same span, ns.
    #[serde(default)]
    pub cpu_ns: u64,
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
    fn families_are_spelled_as_in_the_format() {
        for f in Family::ALL {
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(json, format!("\"{}\"", f.as_str()));
            assert_eq!(serde_json::from_str::<Family>(&json).unwrap(), f);
        }
    }

    #[test]
    fn return_percentiles_and_late_share_of_known_samples() {
        let mut r = vec![40, 10, 30, 20, 1_000, 0, 50, 60, 70, 80];
        assert_eq!(
            Return::from_samples(&mut r),
            Some(Return {
                p50_ns: 40,
                p90_ns: 80
            })
        );
        assert_eq!(Return::from_samples(&mut []), None);
        assert_eq!(late_share(&[0, 2_000, 2_001, -5]), Some(0.25));
        assert_eq!(late_share(&[]), None);
    }
}
