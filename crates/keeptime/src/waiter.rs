//! One process-wide precise waiter for async code: it wakes a task's
//! [`Waker`] a learned *executor wake-up latency* before the task's deadline,
//! so that the task, when polled, is just short of its deadline and finishes
//! with a few µs of work of its own. Feature `async`; used by
//! [`keeptime::tokio`](crate::tokio) and by the Python binding's
//! `keeptime.asyncio`.
//!
//! # How a precise async sleep runs
//!
//! ```text
//!   arm ─────────── waiter thread: keeptime Sleeper ──────────▶ fire (wake the Waker)
//!                                                     │ executor latency (learned) │
//!   task polled again ────────────────────────────────┘      yield … spin ≤ 4 µs ▶ deadline
//!                      wake = deadline − lead,  lead = margin of the observed latencies
//! ```
//!
//! * **The waiter** is one thread, started on first use and parked on a
//!   condition variable while no timer is armed. It waits toward the earliest
//!   wake time with a [`Sleeper`] whose OS wait is that condition variable's
//!   timed wait: the core's algorithm (learned margin, then a spin of a few
//!   µs) on an OS wait that a new, earlier timer can interrupt.
//! * **The lead** is learned with a [`MarginEstimator`], the core's estimator
//!   and spec (`spec/estimator.md`): a wake-up through the executor is just
//!   another overshoot. Each sample is "polled again − waker fired", filed
//!   under the length of the sleep it ended; the lead is the bucket's margin,
//!   capped at [`MAX_LEAD_NS`].
//! * **The finish** runs in the task, decided by [`next_step`]: within
//!   [`FINISH_SPIN_NS`] of the deadline it spins (the longest a precise sleep
//!   holds an executor thread in one poll); otherwise it wakes itself and
//!   returns `Pending` (the executor runs other tasks in between: a
//!   cooperative spin, bounded by the lead); woken earlier than the lead (a
//!   spurious poll, or a lead that shrank) it re-arms the timer instead.
//!
//! Dropping a [`Timer`] removes it at once; the waiter re-plans and, with
//! nothing left, parks. Never early: a sleep completes only on a clock reading
//! at or past its deadline.

use crate::estimate::bucket_of;
use crate::platform::{Platform, System};
use crate::{MarginEstimator, Sleeper};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::Waker;
use std::time::{Duration, Instant};

/// The longest spin a task does in one poll to finish a sleep: the longest a
/// precise sleep holds an executor thread (plus the poll's own few hundred ns).
pub const FINISH_SPIN_NS: u64 = 4_000;

/// The longest lead: a task is woken at most this long before its deadline,
/// so the cooperative finish (self-wake and yield) never costs more than this
/// per sleep, whatever the estimator says. Executors slower than this to wake
/// a task make sleeps late, never early.
pub const MAX_LEAD_NS: u64 = 200_000;

/// The longest finishing spin a caller may configure
/// ([`PreciseWait::set_finish_spin_ns`]): for event loops whose round trip
/// (yield, run the other ready tasks, come back) is itself several µs, so a
/// shorter spin would only make the sleep late by one round.
pub const MAX_FINISH_SPIN_NS: u64 = 50_000;

/// Where a timer stands when its task is polled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerState {
    /// No timer armed (first poll, or the last one was used up).
    Unarmed,
    /// Armed and not yet fired: the poll is spurious (or a re-poll by a
    /// combinator).
    Armed,
    /// The waiter fired it, aiming to wake the task `lead_ns` before the deadline.
    Fired {
        /// The lead the timer was armed with.
        lead_ns: u64,
    },
}

/// What a polled precise sleep does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The deadline has passed: complete.
    Done,
    /// Within [`FINISH_SPIN_NS`] of the deadline: spin to it in this poll, complete.
    Spin,
    /// Keep waiting for the armed timer (update its waker).
    Wait,
    /// Wake itself and return `Pending`: the executor runs other ready tasks
    /// and polls again (a cooperative spin through the executor).
    Yield,
    /// Arm (or re-arm) the timer to fire at `deadline − lead_ns`.
    Arm {
        /// How early the waiter will wake the task.
        lead_ns: u64,
    },
}

/// The decision a polled precise sleep makes, as a pure function of the
/// clock reading `now_ns`, its `deadline_ns`, its timer's state and the
/// current learned lead for the remaining time (`lead_ns`, see
/// [`WakeLatency::lead_ns`]).
///
/// * past the deadline: [`Step::Done`]; within `finish_spin_ns` (normally
///   [`FINISH_SPIN_NS`]): [`Step::Spin`];
/// * an armed timer: [`Step::Wait`];
/// * fired, and no more than the armed lead to go: [`Step::Yield`]; fired
///   but earlier than that (woken far too early): [`Step::Arm`] again;
/// * unarmed: [`Step::Yield`] if the remaining time is within the lead (a
///   wake-up through the waiter would come too late anyway), else [`Step::Arm`].
pub fn next_step(
    now_ns: u64,
    deadline_ns: u64,
    state: TimerState,
    lead_ns: u64,
    finish_spin_ns: u64,
) -> Step {
    if now_ns >= deadline_ns {
        return Step::Done;
    }
    let remaining = deadline_ns - now_ns;
    if remaining <= finish_spin_ns {
        return Step::Spin;
    }
    let lead_ns = lead_ns.min(MAX_LEAD_NS);
    match state {
        TimerState::Armed => Step::Wait,
        TimerState::Fired { lead_ns: armed } if remaining <= armed.min(MAX_LEAD_NS) => Step::Yield,
        TimerState::Unarmed if remaining <= lead_ns => Step::Yield,
        _ => Step::Arm { lead_ns },
    }
}

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

    /// A timer was armed for a sleep with `remaining_ns` to go: ages the
    /// samples by one sleep and returns the lead to arm it with.
    pub fn arm(&self, remaining_ns: u64) -> u64 {
        let mut est = self.est();
        est.begin_sleep();
        est.margin(bucket_of(remaining_ns), LEAD_SHARE_PPM)
            .min(MAX_LEAD_NS)
    }

    /// A task whose timer was armed with `remaining_ns` to go was polled
    /// `latency_ns` after the waiter fired its waker.
    pub fn observe(&self, remaining_ns: u64, latency_ns: u64) {
        self.est().observe(remaining_ns, latency_ns);
    }

    /// A copy of the estimator, for inspection.
    pub fn estimator(&self) -> MarginEstimator {
        self.est().clone()
    }
}

/// Counters of the process-wide waiter (see [`stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaiterStats {
    /// Timers armed and not yet fired or dropped.
    pub pending: usize,
    /// Whether the waiter thread is parked with nothing to wait for (also
    /// `true` before it was ever started).
    pub idle: bool,
    /// Timers armed since the process started.
    pub armed: u64,
    /// Timers fired.
    pub fired: u64,
    /// Timers dropped before they fired.
    pub cancelled: u64,
}

struct Shared {
    waker: Mutex<Option<Waker>>,
    /// Clock reading when the waiter fired this timer; 0 = not fired.
    fired_at: AtomicU64,
}

#[derive(Default)]
struct Queue {
    /// Armed timers by (wake time, id): the first is the next to fire.
    by_wake: BTreeMap<(u64, u64), Arc<Shared>>,
    /// The earliest wake time changed since the waiter planned its wait.
    changed: bool,
    idle: bool,
    started: bool,
    next_id: u64,
    armed: u64,
    fired: u64,
    cancelled: u64,
}

struct WaiterCore {
    queue: Mutex<Queue>,
    cv: Condvar,
}

impl WaiterCore {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn core() -> &'static WaiterCore {
    static CORE: OnceLock<WaiterCore> = OnceLock::new();
    CORE.get_or_init(|| WaiterCore {
        queue: Mutex::new(Queue {
            idle: true,
            ..Queue::default()
        }),
        cv: Condvar::new(),
    })
}

/// The waiter's OS wait: a timed wait on the queue's condition variable
/// (a futex wait with a relative timeout on Linux, under the thread's 1 ns
/// timer slack), reported as interrupted when the earliest wake time
/// changes. Everything else is the real [`System`].
#[derive(Clone, Copy, Debug)]
struct QueueWait {
    system: System,
}

impl Platform for QueueWait {
    fn now_ns(&self) -> u64 {
        self.system.now_ns()
    }

    fn os_wait_until(&self, target_ns: u64) -> crate::OsWake {
        let core = core();
        let mut q = core.lock();
        loop {
            if q.changed {
                return crate::OsWake::Interrupted;
            }
            let now = self.system.now_ns();
            if now >= target_ns {
                return crate::OsWake::Completed;
            }
            let timeout = Duration::from_nanos(target_ns - now);
            q = core
                .cv
                .wait_timeout(q, timeout)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    fn relax(&self) {
        self.system.relax();
    }

    fn yield_now(&self) {
        self.system.yield_now();
    }

    fn try_begin_spin(&self) -> bool {
        self.system.try_begin_spin()
    }

    fn end_spin(&self) {
        self.system.end_spin();
    }

    fn prepare_thread(&self) {
        self.system.prepare_thread();
    }

    fn ns_from_instant(&self, instant: Instant) -> u64 {
        self.system.ns_from_instant(instant)
    }

    fn instant_from_ns(&self, ns: u64) -> Instant {
        self.system.instant_from_ns(ns)
    }
}

fn run_waiter() {
    let core = core();
    let mut sleeper = Sleeper::builder().build_with(QueueWait {
        system: System::new(true),
    });
    loop {
        let target = {
            let mut q = core.lock();
            let target = loop {
                if let Some((&(wake, _), _)) = q.by_wake.first_key_value() {
                    break wake;
                }
                q.idle = true;
                q = core.cv.wait(q).unwrap_or_else(PoisonError::into_inner);
            };
            q.idle = false;
            q.changed = false;
            target
        };
        // Interrupted (an earlier timer was armed, or the first one dropped):
        // plan again from the new queue.
        let Ok(now) = sleeper.sleep_until_ns_interruptible(target, &mut || false) else {
            continue;
        };
        let due: Vec<Arc<Shared>> = {
            let mut q = core.lock();
            let mut due = Vec::new();
            while let Some(entry) = q.by_wake.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                due.push(entry.remove());
            }
            q.fired += due.len() as u64;
            due
        };
        for shared in due {
            // fired_at first, then the waker: a task that installs a new
            // waker and then sees fired_at == 0 is sure to be woken with it.
            shared.fired_at.store(now.max(1), Ordering::SeqCst);
            let waker = shared
                .waker
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(w) = waker {
                w.wake();
            }
        }
    }
}

/// An armed timer of the process-wide waiter: the waiter wakes `waker` once
/// the monotonic clock reaches the wake time. Dropping it disarms it at once
/// (the waiter re-plans, and parks if nothing is left).
pub struct Timer {
    key: (u64, u64),
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Timer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timer")
            .field("wake_ns", &self.key.0)
            .field("fired_at_ns", &self.fired_at_ns())
            .finish()
    }
}

impl Timer {
    /// Arms a timer that wakes `waker` at `wake_ns` on the monotonic clock
    /// ([`os::monotonic_ns`](crate::os::monotonic_ns)), starting the waiter
    /// thread on first use. A wake time in the past fires at once.
    pub fn arm(wake_ns: u64, waker: &Waker) -> Timer {
        let core = core();
        let shared = Arc::new(Shared {
            waker: Mutex::new(Some(waker.clone())),
            fired_at: AtomicU64::new(0),
        });
        let mut q = core.lock();
        q.next_id += 1;
        q.armed += 1;
        let key = (wake_ns, q.next_id);
        let earliest = q.by_wake.first_key_value().map_or(true, |(k, _)| key < *k);
        q.by_wake.insert(key, Arc::clone(&shared));
        if !q.started {
            q.started = std::thread::Builder::new()
                .name("keeptime-waiter".into())
                .spawn(run_waiter)
                .is_ok();
            if !q.started {
                // No thread to wait with (the OS refused one): fire at once.
                // The task then finishes by yielding to its executor until
                // the deadline, still never early; the next arm tries again.
                q.by_wake.remove(&key);
                q.fired += 1;
                drop(q);
                let now = crate::os::monotonic_ns();
                shared.fired_at.store(now.max(1), Ordering::SeqCst);
                waker.wake_by_ref();
                return Timer { key, shared };
            }
        }
        if earliest {
            q.changed = true;
            drop(q);
            // After unlocking: a waiter woken while the lock is held would
            // block on it and cost this (executor) thread a second futex wake.
            core.cv.notify_all();
        }
        Timer { key, shared }
    }

    /// When the waiter fired this timer (a monotonic-clock reading), or
    /// `None` while it is armed.
    pub fn fired_at_ns(&self) -> Option<u64> {
        match self.shared.fired_at.load(Ordering::SeqCst) {
            0 => None,
            t => Some(t),
        }
    }

    /// The wake time this timer was armed for.
    pub fn wake_ns(&self) -> u64 {
        self.key.0
    }

    /// Replaces the waker to wake (a future moved to another task, or
    /// polled with a new context). Returns `false` if the timer had already
    /// fired, in which case the caller should poll again rather than wait.
    pub fn set_waker(&self, waker: &Waker) -> bool {
        {
            let mut slot = self
                .shared
                .waker
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            match slot.as_ref() {
                Some(w) if w.will_wake(waker) => {}
                _ => *slot = Some(waker.clone()),
            }
        }
        self.fired_at_ns().is_none()
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if self.fired_at_ns().is_some() {
            return;
        }
        let core = core();
        let mut q = core.lock();
        let first = q.by_wake.first_key_value().map(|(k, _)| *k);
        if q.by_wake.remove(&self.key).is_some() {
            q.cancelled += 1;
            if first == Some(self.key) {
                q.changed = true;
                drop(q);
                core.cv.notify_all();
            }
        }
    }
}

/// The process-wide waiter's counters and state.
pub fn stats() -> WaiterStats {
    let q = core().lock();
    WaiterStats {
        pending: q.by_wake.len(),
        idle: q.idle,
        armed: q.armed,
        fired: q.fired,
        cancelled: q.cancelled,
    }
}

/// A precise wait toward one deadline, driven by polls: the state machine
/// behind [`keeptime::tokio`](crate::tokio)'s futures and the Python
/// binding's `keeptime.asyncio.sleep`, over a [`WakeLatency`] of the caller's
/// choosing (one per executor or event loop).
#[derive(Debug)]
pub struct PreciseWait {
    deadline_ns: u64,
    timer: Option<Timer>,
    /// Remaining time and lead when the timer was armed.
    armed_remaining_ns: u64,
    armed_lead_ns: u64,
    observed: bool,
    finish_spin_ns: u64,
}

/// The outcome of [`PreciseWait::poll`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// The deadline has passed; the first clock reading at or after it.
    Ready(u64),
    /// Not yet: the timer (or, for [`Step::Yield`], the task itself) will wake
    /// the waker; the step taken says which.
    Pending(Step),
}

impl PreciseWait {
    /// A wait until `deadline_ns` on the monotonic clock; nothing is armed
    /// until the first [`poll`](Self::poll).
    pub fn new(deadline_ns: u64) -> Self {
        PreciseWait {
            deadline_ns,
            timer: None,
            armed_remaining_ns: 0,
            armed_lead_ns: 0,
            observed: false,
            finish_spin_ns: FINISH_SPIN_NS,
        }
    }

    /// Sets the longest finishing spin in one poll (default
    /// [`FINISH_SPIN_NS`]; clamped to `FINISH_SPIN_NS..=MAX_FINISH_SPIN_NS`).
    /// An event loop whose yield round trip takes longer than 4 µs sets it
    /// to that round trip, or its sleeps end late by one round.
    pub fn set_finish_spin_ns(&mut self, ns: u64) {
        self.finish_spin_ns = ns.clamp(FINISH_SPIN_NS, MAX_FINISH_SPIN_NS);
    }

    /// The deadline.
    pub fn deadline_ns(&self) -> u64 {
        self.deadline_ns
    }

    /// Whether a timer is armed (and not yet fired) for this wait.
    pub fn is_armed(&self) -> bool {
        self.timer
            .as_ref()
            .is_some_and(|t| t.fired_at_ns().is_none())
    }

    /// Drops the armed timer, if any.
    pub fn disarm(&mut self) {
        self.timer = None;
    }

    /// One poll: reads the clock, learns the executor latency if the timer
    /// fired since the last poll, and acts on [`next_step`]. With
    /// [`Step::Yield`] the caller must make sure it is polled again soon (a
    /// tokio future calls `waker.wake_by_ref()`; Python yields to the loop).
    /// Never returns `Ready` before the deadline. Holds the caller for at
    /// most the finishing spin ([`FINISH_SPIN_NS`] unless set otherwise) plus
    /// a few clock reads.
    pub fn poll(&mut self, latency: &WakeLatency, waker: &Waker) -> Progress {
        loop {
            let now = crate::os::monotonic_ns();
            let state = match &self.timer {
                None => TimerState::Unarmed,
                Some(t) => match t.fired_at_ns() {
                    None => TimerState::Armed,
                    Some(fired) => {
                        if !self.observed {
                            self.observed = true;
                            latency.observe(self.armed_remaining_ns, now.saturating_sub(fired));
                        }
                        TimerState::Fired {
                            lead_ns: self.armed_lead_ns,
                        }
                    }
                },
            };
            let remaining = self.deadline_ns.saturating_sub(now);
            let lead = match state {
                TimerState::Unarmed => latency.lead_ns(remaining),
                _ => self.armed_lead_ns,
            };
            let step = next_step(now, self.deadline_ns, state, lead, self.finish_spin_ns);
            match step {
                Step::Done => {
                    self.timer = None;
                    return Progress::Ready(now);
                }
                Step::Spin => {
                    self.timer = None;
                    let mut t = now;
                    while t < self.deadline_ns {
                        std::hint::spin_loop();
                        t = crate::os::monotonic_ns();
                    }
                    return Progress::Ready(t);
                }
                Step::Wait => {
                    if self.timer.as_ref().is_some_and(|t| t.set_waker(waker)) {
                        return Progress::Pending(step);
                    }
                    // Fired meanwhile: decide again.
                }
                Step::Yield => {
                    self.timer = None;
                    return Progress::Pending(step);
                }
                Step::Arm { .. } => {
                    let lead = latency.arm(remaining);
                    self.armed_remaining_ns = remaining;
                    self.armed_lead_ns = lead;
                    self.observed = false;
                    self.timer = Some(Timer::arm(self.deadline_ns.saturating_sub(lead), waker));
                    return Progress::Pending(Step::Arm { lead_ns: lead });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::DEFAULT_MARGIN_NS;

    const MS: u64 = 1_000_000;

    #[test]
    fn past_or_close_deadlines_finish_in_the_poll() {
        for state in [
            TimerState::Unarmed,
            TimerState::Armed,
            TimerState::Fired { lead_ns: 50_000 },
        ] {
            assert_eq!(next_step(MS, MS, state, 50_000, FINISH_SPIN_NS), Step::Done);
            assert_eq!(
                next_step(MS + 1, MS, state, 50_000, FINISH_SPIN_NS),
                Step::Done
            );
            assert_eq!(
                next_step(MS - FINISH_SPIN_NS, MS, state, 50_000, FINISH_SPIN_NS),
                Step::Spin
            );
            assert_eq!(
                next_step(MS - 1, MS, state, 50_000, FINISH_SPIN_NS),
                Step::Spin
            );
        }
    }

    #[test]
    fn first_poll_arms_unless_the_lead_covers_the_rest() {
        let s = TimerState::Unarmed;
        assert_eq!(
            next_step(0, MS, s, 30_000, FINISH_SPIN_NS),
            Step::Arm { lead_ns: 30_000 }
        );
        assert_eq!(
            next_step(MS - 30_000, MS, s, 30_000, FINISH_SPIN_NS),
            Step::Yield
        );
        assert_eq!(
            next_step(MS - 30_001, MS, s, 30_000, FINISH_SPIN_NS),
            Step::Arm { lead_ns: 30_000 }
        );
        // The lead is capped.
        assert_eq!(
            next_step(0, 10 * MS, s, 5 * MS, FINISH_SPIN_NS),
            Step::Arm {
                lead_ns: MAX_LEAD_NS
            }
        );
    }

    #[test]
    fn fired_timers_yield_within_their_lead_and_rearm_when_woken_far_too_early() {
        let fired = TimerState::Fired { lead_ns: 40_000 };
        assert_eq!(
            next_step(MS - 40_000, MS, fired, 10_000, FINISH_SPIN_NS),
            Step::Yield
        );
        assert_eq!(
            next_step(MS - 5_000, MS, fired, 10_000, FINISH_SPIN_NS),
            Step::Yield
        );
        assert_eq!(
            next_step(MS - 40_001, MS, fired, 10_000, FINISH_SPIN_NS),
            Step::Arm { lead_ns: 10_000 }
        );
        assert_eq!(
            next_step(0, MS, TimerState::Armed, 10_000, FINISH_SPIN_NS),
            Step::Wait
        );
        // An event loop with a 25 µs round trip spins the last 25 µs instead.
        assert_eq!(
            next_step(MS - 25_000, MS, fired, 10_000, 25_000),
            Step::Spin
        );
        assert_eq!(
            next_step(MS - 25_001, MS, fired, 10_000, 25_000),
            Step::Yield
        );
        let mut w = PreciseWait::new(MS);
        w.set_finish_spin_ns(u64::MAX);
        assert_eq!(w.finish_spin_ns, MAX_FINISH_SPIN_NS);
        w.set_finish_spin_ns(0);
        assert_eq!(w.finish_spin_ns, FINISH_SPIN_NS);
    }

    #[test]
    fn the_lead_is_the_core_margin_of_the_observed_latencies() {
        let lat = WakeLatency::new();
        assert_eq!(lat.lead_ns(MS), DEFAULT_MARGIN_NS);
        assert_eq!(lat.arm(MS), DEFAULT_MARGIN_NS);
        // Eight wake-ups through the executor, 10..17 µs after the waker fired.
        for i in 0..8 {
            lat.observe(MS, 10_000 + i * 1_000);
        }
        // n = 8 is too few to set one aside at 1 %: the largest, 17 µs, in
        // its bin [16384, 18431].
        assert_eq!(lat.lead_ns(MS), 18_431);
        let mut e = MarginEstimator::new();
        e.begin_sleep();
        for i in 0..8 {
            e.observe(MS, 10_000 + i * 1_000);
        }
        assert_eq!(lat.lead_ns(MS), e.margin(bucket_of(MS), LEAD_SHARE_PPM));
        // A huge latency is capped.
        for _ in 0..32 {
            lat.observe(MS, 900_000);
        }
        assert_eq!(lat.lead_ns(MS), MAX_LEAD_NS);
    }

    /// A whole sleep on a simulated executor: arm, fire at deadline − lead,
    /// a scripted executor latency, then the finish; exact at every step.
    #[test]
    fn simulated_sleeps_learn_the_latency_and_finish_by_yield_or_spin() {
        let lat = WakeLatency::new();
        let deadline = 10 * MS;
        let mut finishes = Vec::new();
        for latency in [20_000u64, 20_000, 20_000, 20_000, 20_000, 20_000] {
            let now = 9 * MS; // each sleep starts 1 ms before its deadline
            let Step::Arm { lead_ns } = next_step(
                now,
                deadline,
                TimerState::Unarmed,
                lat.lead_ns(deadline - now),
                FINISH_SPIN_NS,
            ) else {
                panic!("a 1 ms sleep arms a timer");
            };
            let lead = lat.arm(deadline - now);
            assert_eq!(lead, lead_ns);
            let fired = deadline - lead;
            let resumed = fired + latency;
            lat.observe(deadline - now, resumed - fired);
            finishes.push((
                lead,
                next_step(
                    resumed,
                    deadline,
                    TimerState::Fired { lead_ns: lead },
                    lead,
                    FINISH_SPIN_NS,
                ),
            ));
        }
        // First sleep: the default 50 µs lead, woken 30 µs early: yield.
        assert_eq!(finishes[0], (DEFAULT_MARGIN_NS, Step::Yield));
        // Then the lead is the top of 20 µs's bin [18432, 20479]: resumed
        // 479 ns early: spin.
        for f in &finishes[1..] {
            assert_eq!(*f, (20_479, Step::Spin));
        }
    }
}
