//! The lead (`spec/waiter.md`, *The lead*): an executor's learned wake-up
//! latency, the core's margin estimator over "task polled − timer fired".

use super::MAX_LEAD_NS;
use crate::estimate::{bucket_of, BUCKETS};
use crate::MarginEstimator;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The share of executor wake-ups allowed to come later than the lead: the
/// core's default tail target (1 %).
pub const LEAD_SHARE_PPM: u64 = 10_000;

/// The learned wake-up latency of one executor or event loop: how long after
/// the waiter fires a waker the task is polled again. A [`MarginEstimator`]
/// keyed by the length of the sleep, so the lead follows the core's spec.
/// Thread-safe (a mutex around the estimator).
///
/// It also counts the precise deadlines of its executor that are in their
/// finish, so that a burst finishing together is charged the executor's
/// threads once ([`finish_share`](super::finish_share), `spec/waiter.md`,
/// *Capacity*).
#[derive(Debug)]
pub struct WakeLatency {
    model: Mutex<MarginEstimator>,
    /// The lead of each bucket, computed once per state of the estimator
    /// ([`NO_LEAD`] until asked after a change): every poll asks for a
    /// lead, from every executor thread, and the estimator only changes
    /// with a sample, so the leads are read without the lock.
    leads: [AtomicU64; BUCKETS],
    threads: u64,
    finishing: Arc<AtomicU64>,
}

/// A bucket's lead not computed since the estimator last changed (no lead
/// reaches it: leads are at most [`MAX_LEAD_NS`]).
const NO_LEAD: u64 = u64::MAX;

impl Default for WakeLatency {
    fn default() -> Self {
        WakeLatency::new()
    }
}

impl WakeLatency {
    /// A model that has observed nothing: its lead is the estimator's default
    /// margin until the first sample. Its executor may run tasks on as many
    /// threads as the machine has CPUs (a multi-thread runtime, a thread
    /// pool); an event loop, which runs them on one, uses
    /// [`with_threads(1)`](Self::with_threads).
    pub fn new() -> Self {
        WakeLatency::with_threads(crate::platform::available_cpus() as u64)
    }

    /// As [`new`](Self::new), for an executor that runs its tasks on
    /// `threads` threads (0 is taken as 1).
    ///
    /// ```
    /// let one_loop = keeptime::waiter::WakeLatency::with_threads(1);
    /// assert_eq!(one_loop.threads(), 1);
    /// ```
    pub fn with_threads(threads: u64) -> Self {
        WakeLatency {
            model: Mutex::new(MarginEstimator::new()),
            leads: std::array::from_fn(|_| AtomicU64::new(NO_LEAD)),
            threads: threads.max(1),
            finishing: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The threads the executor may run finishing tasks on.
    pub fn threads(&self) -> u64 {
        self.threads
    }

    /// Precise deadlines of this executor in their finish now.
    pub fn finishing(&self) -> u64 {
        self.finishing.load(Ordering::Relaxed)
    }

    /// One more precise deadline in its finish until the returned count is
    /// dropped.
    pub(super) fn begin_finish(&self) -> FinishCount {
        self.finishing.fetch_add(1, Ordering::Relaxed);
        FinishCount {
            finishing: Arc::clone(&self.finishing),
            threads: self.threads,
        }
    }

    fn model(&self) -> MutexGuard<'_, MarginEstimator> {
        self.model.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long before its deadline a sleep with `remaining_ns` to go should
    /// be woken: the margin of bucket `bucket_of(remaining_ns)` at the
    /// default tail target (1 % of wake-ups later), at most [`MAX_LEAD_NS`].
    pub fn lead_ns(&self, remaining_ns: u64) -> u64 {
        let b = bucket_of(remaining_ns);
        let lead = self.leads[b].load(Ordering::Acquire);
        if lead != NO_LEAD {
            return lead;
        }
        // Computed and stored under the lock, as `observe` clears them: a
        // lead stored is always the current estimator's.
        let m = self.model();
        let lead = m.margin(b, LEAD_SHARE_PPM).min(MAX_LEAD_NS);
        self.leads[b].store(lead, Ordering::Release);
        lead
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
        let mut m = self.model();
        m.begin_sleep();
        m.observe(remaining_ns, latency_ns);
        for lead in &self.leads {
            lead.store(NO_LEAD, Ordering::Release);
        }
    }

    /// A copy of the estimator, for inspection.
    pub fn estimator(&self) -> MarginEstimator {
        self.model().clone()
    }
}

/// One precise deadline in its finish: counted in its executor's
/// [`WakeLatency::finishing`] while it lives.
#[derive(Debug)]
pub(super) struct FinishCount {
    finishing: Arc<AtomicU64>,
    threads: u64,
}

impl FinishCount {
    /// The share of a stretch of this finish that ended now to charge it
    /// ([`finish_share`](super::finish_share) with the count now).
    pub(super) fn share(&self, stretch_ns: u64) -> u64 {
        super::finish_share(
            stretch_ns,
            self.finishing.load(Ordering::Relaxed),
            self.threads,
        )
    }
}

impl Drop for FinishCount {
    fn drop(&mut self) {
        self.finishing.fetch_sub(1, Ordering::Relaxed);
    }
}
