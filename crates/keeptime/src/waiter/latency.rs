//! The lead (`spec/waiter.md`, *The lead*): an executor's learned wake-up
//! latency, the core's margin estimator over "task polled − timer fired".

use super::MAX_LEAD_NS;
use crate::estimate::bucket_of;
use crate::MarginEstimator;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The share of executor wake-ups allowed to come later than the lead: the
/// core's default tail target (1 %).
pub const LEAD_SHARE_PPM: u64 = 10_000;

/// The learned wake-up latency of one executor or event loop: how long after
/// the waiter fires a waker the task is polled again. A [`MarginEstimator`]
/// keyed by the length of the sleep, so the lead follows the core's spec.
/// Thread-safe (a mutex around the estimator).
#[derive(Debug, Default)]
pub struct WakeLatency {
    est: Mutex<MarginEstimator>,
}

impl WakeLatency {
    /// A model that has observed nothing: its lead is the estimator's default
    /// margin until the first sample.
    pub fn new() -> Self {
        WakeLatency {
            est: Mutex::new(MarginEstimator::new()),
        }
    }

    fn est(&self) -> MutexGuard<'_, MarginEstimator> {
        self.est.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long before its deadline a sleep with `remaining_ns` to go should
    /// be woken: the margin of bucket `bucket_of(remaining_ns)` at the
    /// default tail target (1 % of wake-ups later), at most [`MAX_LEAD_NS`].
    pub fn lead_ns(&self, remaining_ns: u64) -> u64 {
        self.est()
            .margin(bucket_of(remaining_ns), LEAD_SHARE_PPM)
            .min(MAX_LEAD_NS)
    }

    /// A timer was armed for a sleep with `remaining_ns` to go: the lead to
    /// arm it with ([`lead_ns`](Self::lead_ns)). Arming does not age the
    /// samples: only a learned wake-up counts as a sleep of the estimator, so
    /// a load that teaches nothing ([`learns_latency`](super::learns_latency)) does not make the
    /// model forget what it learned before it either.
    pub fn arm(&self, remaining_ns: u64) -> u64 {
        self.lead_ns(remaining_ns)
    }

    /// A task whose timer was armed with `remaining_ns` to go was polled
    /// `latency_ns` after the waiter fired its waker: one sleep of the
    /// estimator (`begin_sleep`, then the overshoot).
    pub fn observe(&self, remaining_ns: u64, latency_ns: u64) {
        let mut est = self.est();
        est.begin_sleep();
        est.observe(remaining_ns, latency_ns);
    }

    /// A copy of the estimator, for inspection.
    pub fn estimator(&self) -> MarginEstimator {
        self.est().clone()
    }
}
