//! One process-wide precise waiter for async code: it wakes a task's
//! [`Waker`] a learned *executor wake-up latency* before the task's deadline,
//! so that the task, when polled, is just short of its deadline and finishes
//! with a few µs of work of its own. Feature `async`; used by
//! [`keeptime::tokio`](crate::tokio) and by the Python binding's
//! `keeptime.asyncio`. The rules are `spec/waiter.md`'s.
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
//!   precise wake time with a [`Sleeper`] whose OS wait is that condition
//!   variable's timed wait: the core's algorithm (learned margin, then a spin
//!   of a few µs) on an OS wait that a new, earlier timer can interrupt. It
//!   fires in one batch every precise timer due within [`BATCH_NS`].
//! * **The lead** is learned with a [`MarginEstimator`], the core's estimator
//!   and spec (`spec/estimator.md`): a wake-up through the executor is just
//!   another overshoot. Each sample is "polled again − waker fired", filed
//!   under the length of the sleep it ended; the lead is the bucket's margin,
//!   capped at [`MAX_LEAD_NS`]. Only wake-ups of an idle executor are samples
//!   ([`learns_latency`]): under load the delay is queueing, not latency, and
//!   a lead learned from it would make every later sleep yield for longer.
//! * **The capacity** ([`capacity`]) is how many deadlines per second the
//!   waiter and the executors serve precisely: a quarter CPU second divided by
//!   the measured cost of one precise deadline ([`Capacity`]). Each
//!   [`SLOT_NS`] of deadlines admits that many precise timers
//!   ([`Admission`]); the rest are *coarse*: woken at their deadline by a
//!   plain OS wait, finished in one poll, no lead, no yield, no spin, like the
//!   runtime's own timer but on the µs clock. While more than
//!   [`BEHIND_BACKLOG`] fired timers wait for their task to be polled, new
//!   timers are coarse too ([`next_step`]'s `behind`).
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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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

/// The waiter fires, in one batch, every precise timer whose wake time is
/// within this of its clock reading: the tasks it wakes a little early finish
/// with their own spin, and the waiter saves an OS wait and a spin per timer.
pub const BATCH_NS: u64 = 4_000;

/// The waiter waits for a coarse timer until this after its wake time, so
/// that one OS wake-up fires the coarse timers of the next 250 µs together
/// and the executor's threads are woken a few thousand times a second, not
/// once per deadline (still inside the runtime's own millisecond timer).
pub const COARSE_SLACK_NS: u64 = 250_000;

/// Deadlines are admitted as precise per slot of this length
/// ([`Admission`]): [`Capacity::per_slot_at`] of them per slot.
pub const SLOT_NS: u64 = 1_000_000;

/// More fired timers than this whose tasks were not polled yet: the executor
/// is behind, and new timers are coarse (no lead, no yield) until it catches up.
pub const BEHIND_BACKLOG: u64 = 16;

/// The cost of one precise deadline assumed before any was measured, ns.
pub const DEFAULT_COST_NS: u64 = 10_000;

/// The largest cost sample taken as it is, ns (a preempted poll is not a cost).
pub const MAX_COST_NS: u64 = 1_000_000;

/// The smallest cost sample taken as it is, ns: no deadline is served
/// precisely for less (so the capacity never claims more than
/// `CAPACITY_SHARE_PPM · 1000 / MIN_COST_NS` = 250 000 a second).
pub const MIN_COST_NS: u64 = 1_000;

/// A precise deadline that ends more than this late was not served
/// precisely: instead of its (small) cost, the capacity learns a failure
/// ([`Capacity::observe_late`]).
pub const LATE_NS: u64 = 50_000;

/// The share of one CPU the precise deadlines may use (ppm): the capacity is
/// this share of a second divided by the cost of one deadline, so that the
/// waker-to-poll queue stays well inside the lead.
pub const CAPACITY_SHARE_PPM: u64 = 250_000;

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
    /// The waiter fired it, aiming to wake the task `lead_ns` before the
    /// deadline (0 for a coarse timer).
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
    /// Arm (or re-arm) the timer to fire at `deadline − lead_ns`; a zero
    /// lead asks for a coarse timer (fired at the deadline).
    Arm {
        /// How early the waiter will wake the task.
        lead_ns: u64,
    },
}

/// The decision a polled precise sleep makes, as a pure function of the
/// clock reading `now_ns`, its `deadline_ns`, its timer's state, the current
/// learned lead for the remaining time (`lead_ns`, see
/// [`WakeLatency::lead_ns`]) and whether the executor is `behind` (more than
/// [`BEHIND_BACKLOG`] fired timers not yet polled, [`behind`]).
///
/// * past the deadline: [`Step::Done`]; within `finish_spin_ns` (normally
///   [`FINISH_SPIN_NS`]): [`Step::Spin`];
/// * an armed timer: [`Step::Wait`];
/// * behind: [`Step::Arm`] with a zero lead (a coarse timer; never a yield,
///   which would only add polls to a queue that is already late);
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
    behind: bool,
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
        _ if behind => Step::Arm { lead_ns: 0 },
        TimerState::Fired { lead_ns: armed } if remaining <= armed.min(MAX_LEAD_NS) => Step::Yield,
        TimerState::Unarmed if remaining <= lead_ns => Step::Yield,
        _ => Step::Arm { lead_ns },
    }
}

/// Whether the waiter fires a timer armed for `wake_ns` at its clock reading
/// `now_ns`: a precise one when due within [`BATCH_NS`], a coarse one when due.
pub fn fires(wake_ns: u64, precise: bool, now_ns: u64) -> bool {
    if precise {
        wake_ns <= now_ns.saturating_add(BATCH_NS)
    } else {
        wake_ns <= now_ns
    }
}

/// Whether the wake-up of a fired timer is a sample of the executor's
/// wake-up latency: only the first precise timer of a batch fired while no
/// earlier fired timer was waiting for its poll (`backlog_before == 0`).
/// Any other delay includes the executor's queue.
pub fn learns_latency(first_in_batch: bool, backlog_before: u64) -> bool {
    first_in_batch && backlog_before == 0
}

/// What the waiter waits for next, from the earliest precise and coarse wake
/// times `p` and `c`: a plain OS wait (no spin) until `c + COARSE_SLACK_NS`
/// if that comes more than [`MAX_LEAD_NS`] before `p` (or there is no `p`),
/// else the precise wait for `p` with its sleeper (OS wait, then spin), the
/// coarse timers due by then firing with it. `None`: nothing armed, park.
pub fn plan(precise_ns: Option<u64>, coarse_ns: Option<u64>) -> Option<Plan> {
    let coarse = coarse_ns.map(|c| c.saturating_add(COARSE_SLACK_NS));
    match (precise_ns, coarse) {
        (None, None) => None,
        (Some(p), None) => Some(Plan::Precise(p)),
        (None, Some(c)) => Some(Plan::Coarse(c)),
        (Some(p), Some(c)) if c.saturating_add(MAX_LEAD_NS) < p => Some(Plan::Coarse(c)),
        (Some(p), Some(_)) => Some(Plan::Precise(p)),
    }
}

/// The waiter's next wait ([`plan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// A precise wait to this wake time (the core's sleep: OS wait, spin).
    Precise(u64),
    /// A plain OS wait to this wake time.
    Coarse(u64),
}

/// The learned cost of one precise deadline and the capacity it implies.
///
/// A sample is what one precise deadline cost: the waiter thread's CPU time
/// in its precise waits (OS wait and margin spin) since its previous batch
/// with precise timers, divided by the precise timers of its batch, plus the task's whole finish, from the
/// start of its first poll after the firing to the end (its yields keep an
/// executor thread busy all along when nothing else is ready; the spin).
/// The cost is a moving average,
/// `(15·cost + s) / 16` where `s` is the sample clamped to
/// `[cost/2, 2·cost]` (one preempted poll moves it by at most 1/16); the
/// first sample replaces [`DEFAULT_COST_NS`]; samples are clamped to
/// [`MIN_COST_NS`]`..=`[`MAX_COST_NS`]. A precise deadline that ended more than
/// [`LATE_NS`] late is a failure, not a cost ([`observe_late`](Self::observe_late)):
/// otherwise a saturated waiter, whose late tasks finish at once, would
/// measure tiny costs and admit ever more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    cost_ns: u64,
    samples: u64,
}

impl Default for Capacity {
    fn default() -> Self {
        Capacity::new()
    }
}

impl Capacity {
    /// Nothing measured: the cost is [`DEFAULT_COST_NS`].
    pub const fn new() -> Self {
        Capacity {
            cost_ns: DEFAULT_COST_NS,
            samples: 0,
        }
    }

    /// One precise deadline cost `cost_ns`.
    pub fn observe(&mut self, cost_ns: u64) {
        let c = cost_ns.clamp(MIN_COST_NS, MAX_COST_NS);
        self.cost_ns = if self.samples == 0 {
            c
        } else {
            let c = c.clamp(self.cost_ns / 2, self.cost_ns.saturating_mul(2));
            (self.cost_ns * 15 + c) / 16
        };
        self.samples += 1;
    }

    /// A precise deadline ended more than [`LATE_NS`] late: the waiter or
    /// the executor was saturated, whatever the deadline cost. Learned as a
    /// sample of twice the current cost (the most one sample can raise it).
    pub fn observe_late(&mut self) {
        self.observe(self.cost_ns.saturating_mul(2));
    }

    /// The learned cost of one precise deadline, ns.
    pub fn cost_ns(&self) -> u64 {
        self.cost_ns
    }

    /// Cost samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Deadlines per second served precisely:
    /// `CAPACITY_SHARE_PPM · 1000 / cost_ns` (at least 1).
    pub fn per_second(&self) -> u64 {
        (CAPACITY_SHARE_PPM * 1_000 / self.cost_ns.max(1)).max(1)
    }

    /// Precise timers admitted in slot `slot` (deadlines in
    /// `[slot·SLOT_NS, (slot+1)·SLOT_NS)`): with `r = CAPACITY_SHARE_PPM ·
    /// SLOT_NS / 10⁶ / cost_ns` the slot's share of the capacity (a fraction),
    /// `⌊(slot+1)·r⌋ − ⌊slot·r⌋`, so that any run of slots admits the
    /// capacity to within one timer, also below one per slot.
    pub fn per_slot_at(&self, slot: u64) -> u64 {
        let num = u128::from(CAPACITY_SHARE_PPM) * u128::from(SLOT_NS) / 1_000_000;
        let den = u128::from(self.cost_ns.max(1));
        let upto = |k: u128| k * num / den;
        let s = u128::from(slot);
        (upto(s + 1) - upto(s)) as u64
    }
}

/// Which deadlines are served precisely: at most `per_slot` precise timers
/// per [`SLOT_NS`] slot of deadlines (slot = `deadline / SLOT_NS`), in the
/// order they are armed; the rest are coarse.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Admission {
    slots: BTreeMap<u64, u64>,
}

impl Admission {
    /// No deadline admitted.
    pub fn new() -> Self {
        Admission::default()
    }

    /// Admits a precise timer for `deadline_ns` if its slot holds fewer than
    /// `per_slot`; returns whether it did.
    pub fn try_admit(&mut self, deadline_ns: u64, per_slot: u64) -> bool {
        let n = self.slots.entry(deadline_ns / SLOT_NS).or_insert(0);
        if *n < per_slot {
            *n += 1;
            true
        } else {
            if *n == 0 {
                self.slots.remove(&(deadline_ns / SLOT_NS));
            }
            false
        }
    }

    /// A precise timer for `deadline_ns` was dropped before it fired.
    pub fn release(&mut self, deadline_ns: u64) {
        let slot = deadline_ns / SLOT_NS;
        if let Some(n) = self.slots.get_mut(&slot) {
            *n -= 1;
            if *n == 0 {
                self.slots.remove(&slot);
            }
        }
    }

    /// Forgets the slots that ended before `now_ns`.
    pub fn forget_before(&mut self, now_ns: u64) {
        self.slots = self.slots.split_off(&(now_ns / SLOT_NS));
    }

    /// Precise timers admitted in the slot of `deadline_ns`.
    pub fn admitted(&self, deadline_ns: u64) -> u64 {
        self.slots
            .get(&(deadline_ns / SLOT_NS))
            .copied()
            .unwrap_or(0)
    }

    /// Slots remembered.
    pub fn slots(&self) -> usize {
        self.slots.len()
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

    /// A timer was armed for a sleep with `remaining_ns` to go: the lead to
    /// arm it with ([`lead_ns`](Self::lead_ns)). Arming does not age the
    /// samples: only a learned wake-up counts as a sleep of the estimator, so
    /// a load that teaches nothing ([`learns_latency`]) does not make the
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
    /// Of those, the ones armed coarse (past the capacity, or while behind).
    pub coarse: u64,
    /// Timers fired.
    pub fired: u64,
    /// Timers dropped before they fired.
    pub cancelled: u64,
    /// Fired timers whose task was not polled yet.
    pub backlog: u64,
    /// The stated capacity: deadlines per second served precisely ([`capacity`]).
    pub capacity_per_s: u64,
    /// The learned cost of one precise deadline, ns.
    pub cost_ns: u64,
}

struct Shared {
    waker: Mutex<Option<Waker>>,
    /// Clock reading when the waiter fired this timer; 0 = not fired.
    fired_at: AtomicU64,
    /// The waiter's CPU time per precise timer of this one's batch, ns.
    fire_cost_ns: AtomicU64,
    /// This wake-up is a latency sample ([`learns_latency`]).
    learn: AtomicBool,
    /// The firing was seen by a poll (or the timer dropped): out of the backlog.
    seen: AtomicBool,
}

#[derive(Default)]
struct Queue {
    /// Armed precise timers by (wake time, id): the first is the next to fire.
    precise: BTreeMap<(u64, u64), Arc<Shared>>,
    /// Armed coarse timers by (deadline, id).
    coarse: BTreeMap<(u64, u64), Arc<Shared>>,
    admission: Admission,
    /// The earliest wake time changed since the waiter planned its wait.
    changed: bool,
    idle: bool,
    started: bool,
    next_id: u64,
    armed: u64,
    coarse_armed: u64,
    fired: u64,
    cancelled: u64,
}

struct WaiterCore {
    queue: Mutex<Queue>,
    cv: Condvar,
    backlog: AtomicU64,
    capacity: Mutex<Capacity>,
}

impl WaiterCore {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn capacity(&self) -> MutexGuard<'_, Capacity> {
        self.capacity.lock().unwrap_or_else(PoisonError::into_inner)
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
        backlog: AtomicU64::new(0),
        capacity: Mutex::new(Capacity::new()),
    })
}

/// Measures the stated capacity on this machine: `n` precise waits of
/// `each`, one after another, driven from the calling thread (a waker that
/// unparks it, each poll as an executor would make it), then [`capacity`].
/// It takes about `n · each` and teaches the process-wide waiter what a
/// precise deadline costs here (`spec/waiter.md`), as the first few hundred
/// async sleeps of a program would. `keeptime clocks` reports it.
///
/// ```
/// let per_s = keeptime::waiter::probe_capacity(20, std::time::Duration::from_micros(500));
/// assert!(per_s >= 1);
/// ```
pub fn probe_capacity(n: u32, each: Duration) -> u64 {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let each_ns = crate::platform::duration_ns(each);
    // This thread is the executor: its wake-up latency is its own.
    let latency = WakeLatency::new();
    for _ in 0..n {
        let mut wait = PreciseWait::new(crate::os::monotonic_ns().saturating_add(each_ns));
        loop {
            match wait.poll(&latency, &waker) {
                Progress::Ready(_) => break,
                // The task woke itself: an executor would poll it again at once.
                Progress::Pending(Step::Yield) => {}
                // The timer will wake it (a spurious return from park only
                // polls once more).
                Progress::Pending(_) => std::thread::park(),
            }
        }
    }
    capacity()
}

/// The waiter's stated capacity: deadlines per second it and the executors
/// serve precisely on this host, from the measured cost of a precise
/// deadline ([`Capacity::per_second`]). Past it, deadlines are served coarse:
/// at their deadline plus the OS wake-up and the executor's queue.
pub fn capacity() -> u64 {
    core().capacity().per_second()
}

/// Admits a precise timer for `deadline_ns` woken `lead_ns` early, if the
/// lead is not zero and the deadline's slot has room ([`Admission`]);
/// otherwise counts a coarse one.
fn admit(deadline_ns: u64, lead_ns: u64) -> bool {
    let core = core();
    let per_slot = core.capacity().per_slot_at(deadline_ns / SLOT_NS);
    let mut q = core.lock();
    let precise = lead_ns > 0 && q.admission.try_admit(deadline_ns, per_slot);
    if !precise {
        q.coarse_armed += 1;
    }
    precise
}

/// Whether the executors are behind: more than [`BEHIND_BACKLOG`] fired
/// timers whose task was not polled yet.
pub fn behind() -> bool {
    core().backlog.load(Ordering::Relaxed) > BEHIND_BACKLOG
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
    let wait = QueueWait {
        system: System::new(true),
    };
    wait.prepare_thread();
    let mut sleeper = Sleeper::builder().build_with(wait);
    // The waiter's CPU time in precise waits since its last precise batch.
    let mut precise_cpu = 0u64;
    loop {
        let next = {
            let mut q = core.lock();
            let next = loop {
                let p = q.precise.first_key_value().map(|(k, _)| k.0);
                let c = q.coarse.first_key_value().map(|(k, _)| k.0);
                if let Some(next) = plan(p, c) {
                    break next;
                }
                q.idle = true;
                q = core.cv.wait(q).unwrap_or_else(PoisonError::into_inner);
            };
            q.idle = false;
            q.changed = false;
            next
        };
        // Interrupted (an earlier timer was armed, or the first one dropped):
        // plan again from the new queue.
        let now = match next {
            Plan::Precise(target) => {
                let cpu0 = crate::os::thread_cpu_ns();
                let woke = sleeper.sleep_until_ns_interruptible(target, &mut || false);
                precise_cpu += crate::os::thread_cpu_ns().saturating_sub(cpu0);
                match woke {
                    Ok(now) => now,
                    Err(_) => continue,
                }
            }
            Plan::Coarse(target) => match wait.os_wait_until(target) {
                crate::OsWake::Completed => wait.now_ns(),
                _ => continue,
            },
        };
        let due = {
            let mut q = core.lock();
            let mut due = Vec::new();
            while let Some(entry) = q.precise.first_entry() {
                if !fires(entry.key().0, true, now) {
                    break;
                }
                due.push(entry.remove());
            }
            let precise = due.len();
            while let Some(entry) = q.coarse.first_entry() {
                if !fires(entry.key().0, false, now) {
                    break;
                }
                due.push(entry.remove());
            }
            q.fired += due.len() as u64;
            q.admission.forget_before(now);
            let before = core.backlog.fetch_add(due.len() as u64, Ordering::Relaxed);
            let learns = precise > 0 && learns_latency(true, before);
            let fire_cost_ns = precise_cpu / (precise.max(1) as u64);
            if precise > 0 {
                precise_cpu = 0;
            }
            // Marked fired under the lock: a timer dropped from here on (it
            // is no longer in the queue) sees that it fired and leaves the
            // backlog itself.
            for (i, shared) in due.iter().enumerate() {
                shared.fire_cost_ns.store(fire_cost_ns, Ordering::Relaxed);
                shared.learn.store(i == 0 && learns, Ordering::Relaxed);
                shared.fired_at.store(now.max(1), Ordering::SeqCst);
            }
            due
        };
        // fired_at first, then the waker: a task that installs a new waker
        // and then sees fired_at == 0 is sure to be woken with it.
        for shared in due {
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
    precise: bool,
    deadline_ns: u64,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Timer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timer")
            .field("wake_ns", &self.key.0)
            .field("precise", &self.precise)
            .field("fired_at_ns", &self.fired_at_ns())
            .finish()
    }
}

impl Timer {
    /// Arms a precise timer that wakes `waker` at `wake_ns` on the monotonic
    /// clock ([`os::monotonic_ns`](crate::os::monotonic_ns)), whatever the
    /// capacity, starting the waiter thread on first use. A wake time in the
    /// past fires at once.
    pub fn arm(wake_ns: u64, waker: &Waker) -> Timer {
        Timer::insert(wake_ns, wake_ns, true, waker)
    }

    /// Arms a timer for a sleep until `deadline_ns` that wants to be woken
    /// `lead_ns` before it: a precise timer at `deadline_ns − lead_ns` if the
    /// deadline's slot admits one more ([`Admission`], [`Capacity::per_slot_at`]),
    /// else (or with a zero lead) a coarse one at `deadline_ns`.
    pub fn arm_for(deadline_ns: u64, lead_ns: u64, waker: &Waker) -> Timer {
        if admit(deadline_ns, lead_ns) {
            Timer::insert(
                deadline_ns.saturating_sub(lead_ns),
                deadline_ns,
                true,
                waker,
            )
        } else {
            Timer::insert(deadline_ns, deadline_ns, false, waker)
        }
    }

    fn insert(wake_ns: u64, deadline_ns: u64, precise: bool, waker: &Waker) -> Timer {
        let core = core();
        let shared = Arc::new(Shared {
            waker: Mutex::new(Some(waker.clone())),
            fired_at: AtomicU64::new(0),
            fire_cost_ns: AtomicU64::new(0),
            learn: AtomicBool::new(false),
            seen: AtomicBool::new(false),
        });
        let mut q = core.lock();
        q.next_id += 1;
        q.armed += 1;
        let key = (wake_ns, q.next_id);
        let map = if precise {
            &mut q.precise
        } else {
            &mut q.coarse
        };
        let earliest = map.first_key_value().map_or(true, |(k, _)| key < *k);
        map.insert(key, Arc::clone(&shared));
        let timer = Timer {
            key,
            precise,
            deadline_ns,
            shared,
        };
        if !q.started {
            q.started = std::thread::Builder::new()
                .name("keeptime-waiter".into())
                .spawn(run_waiter)
                .is_ok();
            if !q.started {
                // No thread to wait with (the OS refused one): fire at once.
                // The task then finishes by yielding to its executor until
                // the deadline, still never early; the next arm tries again.
                if precise {
                    q.precise.remove(&key);
                } else {
                    q.coarse.remove(&key);
                }
                q.fired += 1;
                drop(q);
                core.backlog.fetch_add(1, Ordering::Relaxed);
                let now = crate::os::monotonic_ns();
                timer.shared.fired_at.store(now.max(1), Ordering::SeqCst);
                waker.wake_by_ref();
                return timer;
            }
        }
        if earliest {
            q.changed = true;
            drop(q);
            // After unlocking: a waiter woken while the lock is held would
            // block on it and cost this (executor) thread a second futex wake.
            core.cv.notify_all();
        }
        timer
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

    /// Whether the timer is precise (woken a lead early, finished by the
    /// task) rather than coarse (woken at its deadline).
    pub fn is_precise(&self) -> bool {
        self.precise
    }

    /// The lead this timer was armed with: deadline − wake time (0 if coarse).
    pub fn lead_ns(&self) -> u64 {
        self.deadline_ns.saturating_sub(self.key.0)
    }

    /// Marks the firing as seen by the task (out of the waiter's backlog,
    /// once). Returns `(latency sample?, the waiter's cost per timer)` the
    /// first time after the timer fired, `None` otherwise.
    fn see(&self) -> Option<(bool, u64)> {
        if self.fired_at_ns().is_none() || self.shared.seen.swap(true, Ordering::AcqRel) {
            return None;
        }
        core().backlog.fetch_sub(1, Ordering::Relaxed);
        Some((
            self.shared.learn.load(Ordering::Relaxed),
            self.shared.fire_cost_ns.load(Ordering::Relaxed),
        ))
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
            let _ = self.see();
            return;
        }
        let core = core();
        let mut q = core.lock();
        let map = if self.precise {
            &mut q.precise
        } else {
            &mut q.coarse
        };
        let first = map.first_key_value().map(|(k, _)| *k);
        if map.remove(&self.key).is_some() {
            q.cancelled += 1;
            if self.precise && self.lead_ns() > 0 {
                q.admission.release(self.deadline_ns);
            }
            if first == Some(self.key) {
                q.changed = true;
                drop(q);
                core.cv.notify_all();
            }
        } else {
            // Fired between the check above and the lock.
            drop(q);
            let _ = self.see();
        }
    }
}

/// The process-wide waiter's counters and state.
pub fn stats() -> WaiterStats {
    let core = core();
    let cap = *core.capacity();
    let q = core.lock();
    WaiterStats {
        pending: q.precise.len() + q.coarse.len(),
        idle: q.idle,
        armed: q.armed,
        coarse: q.coarse_armed,
        fired: q.fired,
        cancelled: q.cancelled,
        backlog: core.backlog.load(Ordering::Relaxed),
        capacity_per_s: cap.per_second(),
        cost_ns: cap.cost_ns(),
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
    finish_spin_ns: u64,
    /// Coarse waits are the caller's ([`PreciseWait::set_caller_coarse`]).
    caller_coarse: bool,
    /// The waiter's cost of this deadline's precise timer and the start of
    /// the first poll after it fired; `None` while no precise timer fired
    /// (or after a coarse one was armed).
    finish: Option<(u64, u64)>,
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
            finish_spin_ns: FINISH_SPIN_NS,
            caller_coarse: false,
            finish: None,
        }
    }

    /// Sets the longest finishing spin in one poll (default
    /// [`FINISH_SPIN_NS`]; clamped to `FINISH_SPIN_NS..=MAX_FINISH_SPIN_NS`).
    /// An event loop whose yield round trip takes longer than 4 µs sets it
    /// to that round trip, or its sleeps end late by one round.
    pub fn set_finish_spin_ns(&mut self, ns: u64) {
        self.finish_spin_ns = ns.clamp(FINISH_SPIN_NS, MAX_FINISH_SPIN_NS);
    }

    /// Leaves coarse waits to the caller (default: the waiter's coarse
    /// timers): when a poll answers `Pending(Step::Arm { lead_ns: 0 })` with
    /// no timer armed ([`is_armed`](Self::is_armed) false), the caller waits
    /// until the deadline on its runtime's own timer and polls again. An
    /// event loop whose own timer is cheap degrades to exactly it.
    pub fn set_caller_coarse(&mut self, on: bool) {
        self.caller_coarse = on;
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

    /// Whether the armed (or last fired) timer is coarse.
    pub fn is_coarse(&self) -> bool {
        self.timer.as_ref().is_some_and(|t| !t.is_precise())
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
        let start = crate::os::monotonic_ns();
        let progress = self.step(latency, waker, start);
        if let (Progress::Ready(end), Some((fire_cost, first_poll))) = (progress, self.finish) {
            // The waiter's share plus the whole finish, from the first poll
            // after the firing to the end: the yields' polls, the executor's
            // rounds between them and the spin.
            self.finish = None;
            let mut cap = core().capacity();
            if end.saturating_sub(self.deadline_ns) > LATE_NS {
                cap.observe_late();
            } else {
                cap.observe(fire_cost.saturating_add(end.saturating_sub(first_poll)));
            }
        }
        progress
    }

    fn step(&mut self, latency: &WakeLatency, waker: &Waker, start: u64) -> Progress {
        let mut now = start;
        loop {
            let state = match &self.timer {
                None => TimerState::Unarmed,
                Some(t) => match t.fired_at_ns() {
                    None => TimerState::Armed,
                    Some(fired) => {
                        if let Some((learn, fire_cost)) = t.see() {
                            if learn {
                                latency.observe(self.armed_remaining_ns, now.saturating_sub(fired));
                            }
                            if t.is_precise() {
                                self.finish = Some((fire_cost, start));
                            }
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
            let step = next_step(
                now,
                self.deadline_ns,
                state,
                lead,
                self.finish_spin_ns,
                behind(),
            );
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
                Step::Arm { lead_ns } => {
                    let lead = if lead_ns == 0 {
                        0
                    } else {
                        latency.arm(remaining)
                    };
                    self.timer = None;
                    let precise = admit(self.deadline_ns, lead);
                    self.armed_remaining_ns = remaining;
                    if !precise {
                        self.finish = None;
                        if self.caller_coarse {
                            self.armed_lead_ns = 0;
                            return Progress::Pending(Step::Arm { lead_ns: 0 });
                        }
                    }
                    let timer = if precise {
                        Timer::insert(
                            self.deadline_ns.saturating_sub(lead),
                            self.deadline_ns,
                            true,
                            waker,
                        )
                    } else {
                        Timer::insert(self.deadline_ns, self.deadline_ns, false, waker)
                    };
                    self.armed_lead_ns = timer.lead_ns();
                    self.timer = Some(timer);
                    return Progress::Pending(Step::Arm {
                        lead_ns: self.armed_lead_ns,
                    });
                }
            }
            now = crate::os::monotonic_ns();
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
            assert_eq!(
                next_step(MS, MS, state, 50_000, FINISH_SPIN_NS, false),
                Step::Done
            );
            assert_eq!(
                next_step(MS + 1, MS, state, 50_000, FINISH_SPIN_NS, false),
                Step::Done
            );
            assert_eq!(
                next_step(
                    MS - FINISH_SPIN_NS,
                    MS,
                    state,
                    50_000,
                    FINISH_SPIN_NS,
                    false
                ),
                Step::Spin
            );
            assert_eq!(
                next_step(MS - 1, MS, state, 50_000, FINISH_SPIN_NS, false),
                Step::Spin
            );
        }
    }

    #[test]
    fn first_poll_arms_unless_the_lead_covers_the_rest() {
        let s = TimerState::Unarmed;
        assert_eq!(
            next_step(0, MS, s, 30_000, FINISH_SPIN_NS, false),
            Step::Arm { lead_ns: 30_000 }
        );
        assert_eq!(
            next_step(MS - 30_000, MS, s, 30_000, FINISH_SPIN_NS, false),
            Step::Yield
        );
        assert_eq!(
            next_step(MS - 30_001, MS, s, 30_000, FINISH_SPIN_NS, false),
            Step::Arm { lead_ns: 30_000 }
        );
        // The lead is capped.
        assert_eq!(
            next_step(0, 10 * MS, s, 5 * MS, FINISH_SPIN_NS, false),
            Step::Arm {
                lead_ns: MAX_LEAD_NS
            }
        );
    }

    #[test]
    fn fired_timers_yield_within_their_lead_and_rearm_when_woken_far_too_early() {
        let fired = TimerState::Fired { lead_ns: 40_000 };
        assert_eq!(
            next_step(MS - 40_000, MS, fired, 10_000, FINISH_SPIN_NS, false),
            Step::Yield
        );
        assert_eq!(
            next_step(MS - 5_000, MS, fired, 10_000, FINISH_SPIN_NS, false),
            Step::Yield
        );
        assert_eq!(
            next_step(MS - 40_001, MS, fired, 10_000, FINISH_SPIN_NS, false),
            Step::Arm { lead_ns: 10_000 }
        );
        assert_eq!(
            next_step(0, MS, TimerState::Armed, 10_000, FINISH_SPIN_NS, false),
            Step::Wait
        );
        // An event loop with a 25 µs round trip spins the last 25 µs instead.
        assert_eq!(
            next_step(MS - 25_000, MS, fired, 10_000, 25_000, false),
            Step::Spin
        );
        assert_eq!(
            next_step(MS - 25_001, MS, fired, 10_000, 25_000, false),
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
        for i in 0..8 {
            e.begin_sleep();
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
                false,
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
                    false,
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

    #[test]
    fn behind_arms_coarse_instead_of_yielding_but_still_spins_the_last_microseconds() {
        let fired = TimerState::Fired { lead_ns: 40_000 };
        for state in [TimerState::Unarmed, fired] {
            assert_eq!(
                next_step(MS - 20_000, MS, state, 40_000, FINISH_SPIN_NS, true),
                Step::Arm { lead_ns: 0 }
            );
            assert_eq!(
                next_step(0, MS, state, 40_000, FINISH_SPIN_NS, true),
                Step::Arm { lead_ns: 0 }
            );
            assert_eq!(
                next_step(MS - FINISH_SPIN_NS, MS, state, 40_000, FINISH_SPIN_NS, true),
                Step::Spin
            );
            assert_eq!(
                next_step(MS, MS, state, 40_000, FINISH_SPIN_NS, true),
                Step::Done
            );
        }
        assert_eq!(
            next_step(0, MS, TimerState::Armed, 40_000, FINISH_SPIN_NS, true),
            Step::Wait
        );
        // A coarse timer fires at the deadline: its task is done on the first poll.
        assert_eq!(
            next_step(
                MS + 70_000,
                MS,
                TimerState::Fired { lead_ns: 0 },
                40_000,
                FINISH_SPIN_NS,
                false
            ),
            Step::Done
        );
    }

    #[test]
    fn batches_fire_precise_timers_due_within_batch_ns_and_coarse_ones_when_due() {
        assert!(fires(MS, true, MS));
        assert!(fires(MS + BATCH_NS, true, MS));
        assert!(!fires(MS + BATCH_NS + 1, true, MS));
        assert!(fires(MS, false, MS));
        assert!(!fires(MS + 1, false, MS));
        assert!(fires(u64::MAX, true, u64::MAX - 1));
        assert_eq!(plan(None, None), None);
        assert_eq!(plan(Some(MS), None), Some(Plan::Precise(MS)));
        assert_eq!(
            plan(None, Some(MS)),
            Some(Plan::Coarse(MS + COARSE_SLACK_NS))
        );
        assert_eq!(plan(None, Some(u64::MAX)), Some(Plan::Coarse(u64::MAX)));
        // A coarse timer due (with its slack) just before a precise one
        // rides on its precise wait.
        assert_eq!(
            plan(Some(MS), Some(MS - MAX_LEAD_NS - COARSE_SLACK_NS)),
            Some(Plan::Precise(MS))
        );
        assert_eq!(
            plan(Some(MS), Some(MS - MAX_LEAD_NS - COARSE_SLACK_NS - 1)),
            Some(Plan::Coarse(MS - MAX_LEAD_NS - 1))
        );
        assert_eq!(plan(Some(MS), Some(MS)), Some(Plan::Precise(MS)));
        assert_eq!(plan(Some(MS), Some(2 * MS)), Some(Plan::Precise(MS)));
    }

    #[test]
    fn only_the_first_wake_up_of_a_batch_fired_with_no_backlog_is_a_latency_sample() {
        assert!(learns_latency(true, 0));
        assert!(!learns_latency(false, 0));
        assert!(!learns_latency(true, 1));
    }

    #[test]
    fn capacity_is_a_quarter_cpu_second_over_the_moving_cost() {
        let mut c = Capacity::new();
        assert_eq!(c.cost_ns(), DEFAULT_COST_NS);
        assert_eq!(c.per_second(), 25_000);
        assert_eq!((c.per_slot_at(0), c.per_slot_at(7)), (25, 25));
        c.observe(4_000); // the first sample replaces the default
        assert_eq!((c.cost_ns(), c.samples()), (4_000, 1));
        assert_eq!(c.per_second(), 62_500);
        // 62.5 a slot: 62 and 63 in turn.
        assert_eq!((c.per_slot_at(0), c.per_slot_at(1)), (62, 63));
        assert_eq!((0..100).map(|k| c.per_slot_at(k)).sum::<u64>(), 6_250);
        c.observe(6_000); // (15·4000 + 6000) / 16
        assert_eq!(c.cost_ns(), 4_125);
        assert_eq!(c.per_second(), 60_606);
        c.observe(u64::MAX); // a spike counts as twice the cost
        assert_eq!(c.cost_ns(), (4_125 * 15 + 8_250) / 16);
        c.observe(0); // and a dip as half
        assert_eq!(c.cost_ns(), (4_382 * 15 + 2_191) / 16);
        let cost = c.cost_ns();
        c.observe_late(); // a late precise deadline: twice the cost
        assert_eq!(c.cost_ns(), (cost * 15 + 2 * cost) / 16);
        // Costs under MIN_COST_NS count as MIN_COST_NS.
        let mut tiny = Capacity::new();
        tiny.observe(3);
        assert_eq!(tiny.cost_ns(), MIN_COST_NS);
        assert_eq!(tiny.per_second(), 250_000);
        for _ in 0..100 {
            tiny.observe(0);
        }
        assert_eq!(tiny.cost_ns(), MIN_COST_NS);
        let mut slow = Capacity::new();
        slow.observe(u64::MAX); // capped at MAX_COST_NS
        assert_eq!(slow.per_second(), 250);
        // A quarter timer a slot: one precise timer in every fourth slot.
        let slots: Vec<u64> = (0..8).map(|k| slow.per_slot_at(k)).collect();
        assert_eq!(slots, vec![0, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(slow.per_slot_at(u64::MAX / SLOT_NS), 0);
    }

    #[test]
    fn admission_takes_per_slot_precise_deadlines_per_slot_in_arm_order() {
        let mut a = Admission::new();
        // 2,000 deadlines 2 µs apart from 10 ms: 500 per 1 ms slot.
        let admitted: Vec<bool> = (0..2_000u64)
            .map(|i| a.try_admit(10 * MS + i * 2_000, 5))
            .collect();
        assert_eq!(admitted.iter().filter(|&&x| x).count(), 4 * 5);
        assert!(admitted[..5].iter().all(|&x| x));
        assert!(!admitted[5]);
        assert!(admitted[500]);
        assert_eq!(a.admitted(10 * MS), 5);
        assert_eq!(a.slots(), 4);
        // A dropped precise timer frees its place.
        a.release(10 * MS + 2_000);
        assert_eq!(a.admitted(10 * MS), 4);
        assert!(a.try_admit(10 * MS + 999_999, 5));
        assert!(!a.try_admit(10 * MS + 999_999, 5));
        // Slots that ended are forgotten; a full refusal leaves no empty slot.
        a.forget_before(11 * MS);
        assert_eq!(a.slots(), 3);
        assert_eq!(a.admitted(10 * MS), 0);
        assert!(!a.try_admit(50 * MS, 0));
        assert_eq!(a.slots(), 3);
        a.release(50 * MS); // nothing admitted there: no effect
        assert_eq!(a.slots(), 3);
    }

    /// Two rounds of 2,000 deadlines 2 µs apart on a simulated executor that
    /// polls one task per 3 µs (so it falls behind): the lead learned in the
    /// first round's quiet start is not fed by the queue, and the second
    /// round arms with the same lead as the first.
    #[test]
    fn a_load_round_does_not_teach_the_next_one_a_longer_lead() {
        let lat = WakeLatency::new();
        let mut admission = Admission::new();
        let mut cap = Capacity::new();
        // A quiet warm-up: eight lone wake-ups, 12 µs each.
        for _ in 0..8 {
            lat.arm(MS);
            if learns_latency(true, 0) {
                lat.observe(MS, 12_000);
            }
        }
        let quiet_lead = lat.lead_ns(MS);
        assert_eq!(quiet_lead, 12_287); // the top of 12 µs's bin
        let mut leads = Vec::new();
        for round in 0..2u64 {
            let start = (10 + round * 10) * MS;
            let mut precise = 0;
            let mut backlog = 0u64;
            let mut free_at = 0u64; // the executor's next free instant
            for i in 0..2_000u64 {
                let deadline = start + i * 2_000;
                let lead = lat.arm(MS);
                if i == 0 {
                    leads.push(lead);
                }
                if !admission.try_admit(deadline, cap.per_slot_at(deadline / SLOT_NS)) {
                    continue;
                }
                precise += 1;
                let fired = deadline - lead;
                // The executor serves the wake-up after the ones before it.
                let polled = (fired + 12_000).max(free_at);
                free_at = polled + 3_000;
                let first = precise == 1;
                if learns_latency(first, backlog) {
                    lat.observe(MS, polled - fired);
                }
                backlog = u64::from(polled > fired + 12_000);
                cap.observe(3_000);
            }
            admission.forget_before(start + 10 * MS);
            // 4 slots of 1 ms; from the first measured cost (3 µs) on,
            // 83⅓ precise a slot: slots 10-13 admit ⌊14·250000/3000⌋ −
            // ⌊10·250000/3000⌋ = 333, slots 20-23 admit 2000 − 1666 = 334.
            assert_eq!(precise, [333, 334][round as usize]);
        }
        assert_eq!(leads, vec![quiet_lead, quiet_lead]);
        assert_eq!(lat.lead_ns(MS), quiet_lead);
    }
}
