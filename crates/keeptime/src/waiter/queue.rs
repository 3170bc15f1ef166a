//! The process-wide waiter thread and its queue of armed timers: the loop
//! that plans, waits (the core's sleep on an interruptible OS wait), fires
//! in batches and charges the waiter's CPU to the precise timers; admission
//! against the capacity; the backlog; the counters ([`stats`]).

use super::learns_latency;
use super::{fires, plan, relay_wait, relays, Admission, Capacity, Plan, BEHIND_BACKLOG};
use crate::default_profile::DefaultSleeper;
use crate::platform::{Platform, System};
use crate::{Sleeper, SleeperBuilder};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::Waker;
use std::time::{Duration, Instant};

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
    /// Precise deadlines admitted since the process started: precise timers
    /// armed, and finishes that began with a yield ([`Admission::offer`]
    /// answered yes).
    pub precise: u64,
    /// Coarse decisions since the process started (past the capacity, or
    /// while behind): timers armed coarse, and waits a caller serves with
    /// its own timer instead (asyncio's coarse path, which arms no timer),
    /// one per decision, so this can exceed `armed`.
    pub coarse: u64,
    /// Timers fired.
    pub fired: u64,
    /// Timers dropped before they fired.
    pub cancelled: u64,
    /// Fired timers whose task was not polled yet.
    pub backlog: u64,
    /// Fired timers the waiter handed to the relay rather than woke itself
    /// (`spec/waiter.md`, *The relay*).
    pub relayed: u64,
    /// Precise waits in progress ([`PreciseWait`](super::PreciseWait)s
    /// alive: the async sleeps not yet complete or dropped). Their offers
    /// count toward saturation only while there is more than one
    /// ([`Admission::offer`]).
    pub sleeps: u64,
    /// The stated capacity: deadlines per second served precisely ([`capacity`]).
    pub capacity_per_s: u64,
    /// The learned cost of one precise deadline, ns.
    pub cost_ns: u64,
}

pub(super) struct Shared {
    pub(super) waker: Mutex<Option<Waker>>,
    /// Clock reading when the waiter fired this timer; 0 = not fired.
    pub(super) fired_at: AtomicU64,
    /// The waiter's CPU time per precise timer of this one's batch, ns.
    pub(super) fire_cost_ns: AtomicU64,
    /// This wake-up is a latency sample ([`learns_latency`]).
    pub(super) learn: AtomicBool,
    /// The firing was seen by a poll (or the timer dropped): out of the backlog.
    pub(super) seen: AtomicBool,
    /// A coarse timer of a relaying wait: woken through the relay.
    pub(super) relay: AtomicBool,
}

/// Fired timers waiting to be woken by a relaying task's poll (see
/// [`RELAY_DIRECT`](super::RELAY_DIRECT)).
#[derive(Default)]
pub(super) struct Relay {
    pending: AtomicBool,
    timers: Mutex<Vec<Arc<Shared>>>,
}

impl Relay {
    /// Whether timers are waiting in the relay.
    pub(super) fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    pub(super) fn push(&self, timers: Vec<Arc<Shared>>) {
        if timers.is_empty() {
            return;
        }
        let mut list = self.timers.lock().unwrap_or_else(PoisonError::into_inner);
        list.extend(timers);
        self.pending.store(true, Ordering::Release);
    }

    /// Wakes at most `n` of the timers in the relay (all with `usize::MAX`).
    pub(super) fn wake(&self, n: usize) {
        if !self.is_pending() {
            return;
        }
        let batch = {
            let mut list = self.timers.lock().unwrap_or_else(PoisonError::into_inner);
            let keep = list.len().saturating_sub(n);
            let batch = list.split_off(keep);
            if list.is_empty() {
                self.pending.store(false, Ordering::Release);
            }
            batch
        };
        for shared in batch {
            shared.wake();
        }
    }
}

impl Shared {
    /// The state of a timer about to be armed, to wake `waker`.
    pub(super) fn new(waker: &Waker) -> Arc<Shared> {
        Arc::new(Shared {
            waker: Mutex::new(Some(waker.clone())),
            fired_at: AtomicU64::new(0),
            fire_cost_ns: AtomicU64::new(0),
            learn: AtomicBool::new(false),
            seen: AtomicBool::new(false),
            relay: AtomicBool::new(false),
        })
    }

    /// Wakes the waker installed last (once; a fired timer's waker is taken).
    fn wake(&self) {
        let waker = self
            .waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

#[derive(Default)]
pub(super) struct Queue {
    /// Armed precise timers by (wake time, id): the first is the next to fire.
    pub(super) precise: BTreeMap<(u64, u64), Arc<Shared>>,
    /// Armed coarse timers by (deadline, id).
    pub(super) coarse: BTreeMap<(u64, u64), Arc<Shared>>,
    pub(super) admission: Admission,
    /// The earliest wake time changed since the waiter planned its wait.
    pub(super) changed: bool,
    pub(super) idle: bool,
    pub(super) started: bool,
    pub(super) next_id: u64,
    pub(super) armed: u64,
    pub(super) coarse_armed: u64,
    pub(super) precise_admitted: u64,
    pub(super) fired: u64,
    pub(super) cancelled: u64,
    pub(super) relayed: u64,
}

/// A value on cache lines of its own. Every sleep of every executor thread
/// (and the waiter thread) touches the waiter's counters and locks: packed
/// together, an update of one moved the line holding the others between
/// CPUs too (at 1 000 tasks ticking at 1 kHz, most of the process CPU
/// keeptime added to tokio's own timer).
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Line<T>(pub(super) T);

impl<T> std::ops::Deref for Line<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The capacity as last learned, for reading without a lock: admission
/// reads it on every arm, and it changes only with a precise deadline's
/// cost sample.
#[derive(Default)]
pub(super) struct CapacityView {
    cost_ns: AtomicU64,
    samples: AtomicU64,
}

impl CapacityView {
    fn publish(&self, c: &Capacity) {
        self.cost_ns.store(c.cost_ns(), Ordering::Relaxed);
        self.samples.store(c.samples(), Ordering::Relaxed);
    }

    fn get(&self) -> Capacity {
        Capacity::from_parts(
            self.cost_ns.load(Ordering::Relaxed),
            self.samples.load(Ordering::Relaxed),
        )
    }
}

pub(super) struct WaiterCore {
    pub(super) queue: Line<Mutex<Queue>>,
    pub(super) cv: Condvar,
    pub(super) backlog: Line<AtomicU64>,
    /// The learned capacity; its readers read `capacity_view`.
    capacity: Mutex<Capacity>,
    capacity_view: Line<CapacityView>,
    /// Precise waits in progress ([`PreciseWait`](super::PreciseWait)s alive).
    pub(super) sleeps: Line<AtomicU64>,
    pub(super) relay: Line<Relay>,
}

impl WaiterCore {
    pub(super) fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The capacity as last learned (no lock).
    pub(super) fn capacity(&self) -> Capacity {
        self.capacity_view.get()
    }

    /// Learns one precise deadline's outcome: its cost, or `None` for a
    /// failure ([`Capacity::observe_late`]).
    pub(super) fn observe_cost(&self, cost_ns: Option<u64>) {
        let mut c = self.capacity.lock().unwrap_or_else(PoisonError::into_inner);
        match cost_ns {
            Some(cost) => c.observe(cost),
            None => c.observe_late(),
        }
        self.capacity_view.publish(&c);
    }
}

pub(super) fn core() -> &'static WaiterCore {
    static CORE: OnceLock<WaiterCore> = OnceLock::new();
    CORE.get_or_init(|| {
        let core = WaiterCore {
            queue: Line(Mutex::new(Queue {
                idle: true,
                ..Queue::default()
            })),
            cv: Condvar::new(),
            backlog: Line::default(),
            capacity: Mutex::new(Capacity::new()),
            capacity_view: Line::default(),
            sleeps: Line::default(),
            relay: Line::default(),
        };
        core.capacity_view.publish(&Capacity::new());
        core
    })
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
/// otherwise counts a coarse one, as offered at the caller's clock reading
/// `now_ns`. `from_wait`: the caller is a [`PreciseWait`](super::PreciseWait),
/// itself counted in `sleeps`.
/// The caller holds the queue's lock `q`, so that a timer it then arms
/// takes the lock once.
pub(super) fn admit(
    q: &mut Queue,
    now_ns: u64,
    deadline_ns: u64,
    lead_ns: u64,
    from_wait: bool,
) -> bool {
    let core = core();
    let capacity = core.capacity();
    // Other sleeps in progress: another precise wait, or an armed timer.
    let others = core.sleeps.load(Ordering::Relaxed) > u64::from(from_wait);
    let concurrent = others || !q.precise.is_empty() || !q.coarse.is_empty();
    let precise = q
        .admission
        .offer(now_ns, deadline_ns, lead_ns, concurrent, &capacity);
    if precise {
        q.precise_admitted += 1;
    } else {
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

/// The waiter's sleeper: default settings, waiting on the queue.
fn waiter_settings() -> (SleeperBuilder, QueueWait) {
    (
        Sleeper::builder(),
        QueueWait {
            system: System::new(true),
        },
    )
}

pub(super) fn run_waiter() {
    let core = core();
    let wait = waiter_settings().1;
    wait.prepare_thread();
    // Started from the default profile, if one is set (and again whenever
    // it changes, before the next precise wait).
    let mut sleeper = DefaultSleeper::new(waiter_settings);
    // The waiter's CPU time in precise waits since its last precise batch.
    let mut precise_cpu = 0u64;
    // The reading that ended the last completed coarse wait.
    let mut last_coarse = None;
    // When the timers left in the relay are to be woken by the waiter.
    let mut relay_check: Option<u64> = None;
    loop {
        let next = {
            let mut q = core.lock();
            let next = loop {
                if !core.relay.is_pending() {
                    // Emptied by the tasks' polls: nothing to check.
                    relay_check = None;
                }
                let p = q.precise.first_key_value().map(|(k, _)| k.0);
                let c = q.coarse.first_key_value().map(|(k, _)| k.0);
                let next = plan(p, c, last_coarse);
                if next.is_some() || relay_check.is_some() {
                    break next;
                }
                q.idle = true;
                q = core.cv.wait(q).unwrap_or_else(PoisonError::into_inner);
            };
            q.idle = false;
            q.changed = false;
            next
        };
        let target = match next {
            Some(Plan::Precise(t) | Plan::Coarse(t)) => Some(t),
            None => None,
        };
        if let Some(check) = relay_wait(relay_check, target) {
            // The relay's leftovers are due before anything else.
            if let crate::OsWake::Completed = wait.os_wait_until(check) {
                core.relay.wake(usize::MAX);
                relay_check = None;
            }
            continue;
        }
        let Some(next) = next else { continue };
        // Interrupted (an earlier timer was armed, or the first one dropped):
        // plan again from the new queue.
        let now = match next {
            Plan::Precise(target) => {
                // Replaced first if the default profile changed: not a cost
                // of precision.
                let sleeper = sleeper.get();
                let cpu0 = crate::os::thread_cpu_ns();
                let woke = sleeper.sleep_until_ns_interruptible(target, &mut || false);
                precise_cpu += crate::os::thread_cpu_ns().saturating_sub(cpu0);
                match woke {
                    Ok(now) => now,
                    Err(_) => continue,
                }
            }
            Plan::Coarse(target) => match wait.os_wait_until(target) {
                crate::OsWake::Completed => {
                    let now = wait.now_ns();
                    last_coarse = Some(now);
                    now
                }
                _ => continue,
            },
        };
        let (due, n) = {
            let mut q = core.lock();
            // `fires` holds for a prefix of each queue: split it off whole
            // (a burst's thousand timers at once, not one by one while the
            // executors wait for the lock to arm theirs).
            let precise_due = split_due(&mut q.precise, true, now);
            let coarse_due = split_due(&mut q.coarse, false, now);
            let precise = precise_due.len();
            let mut due: Vec<Arc<Shared>> = precise_due.into_values().collect();
            due.extend(coarse_due.into_values());
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
            // backlog itself. Counted meanwhile: the coarse timers of
            // relaying waits, `n`, and those of them that go to the relay.
            let mut n = 0;
            for (i, shared) in due.iter().enumerate() {
                shared.fire_cost_ns.store(fire_cost_ns, Ordering::Relaxed);
                shared.learn.store(i == 0 && learns, Ordering::Relaxed);
                shared.fired_at.store(now.max(1), Ordering::SeqCst);
                n += usize::from(shared.relay.load(Ordering::Relaxed));
            }
            q.relayed += (0..n).filter(|&k| relays(k, n)).count() as u64;
            (due, n)
        };
        // The previous firing's timers still in the relay first.
        core.relay.wake(usize::MAX);
        relay_check = None;
        // The relay's share of the batch goes to the relay before the
        // waiter wakes anything: a task it wakes may be polled at once, on
        // another CPU, and its poll is what wakes the relayed ones.
        let mut relaying = 0;
        let (relayed, direct): (Vec<_>, Vec<_>) = due.into_iter().partition(|shared| {
            shared.relay.load(Ordering::Relaxed) && {
                relaying += 1;
                relays(relaying - 1, n)
            }
        });
        if !relayed.is_empty() {
            core.relay.push(relayed);
            relay_check = Some(now.saturating_add(super::RELAY_GRACE_NS));
        }
        // fired_at first, then the waker: a task that installs a new waker
        // and then sees fired_at == 0 is sure to be woken with it.
        for shared in direct {
            shared.wake();
        }
    }
}

/// Removes from `map` and returns its timers that [`fires`] at `now_ns`
/// (a prefix of it, by wake time), in order.
pub(super) fn split_due(
    map: &mut BTreeMap<(u64, u64), Arc<Shared>>,
    precise: bool,
    now_ns: u64,
) -> BTreeMap<(u64, u64), Arc<Shared>> {
    // The first key that does not fire: the smallest wake time past the
    // last one that does (`fires` is monotone in the wake time).
    let last = if precise {
        now_ns.saturating_add(super::BATCH_NS)
    } else {
        now_ns
    };
    debug_assert!(fires(last, precise, now_ns));
    match last.checked_add(1) {
        Some(first_kept) => {
            let kept = map.split_off(&(first_kept, 0));
            std::mem::replace(map, kept)
        }
        None => std::mem::take(map),
    }
}

/// The process-wide waiter's counters and state.
pub fn stats() -> WaiterStats {
    let core = core();
    let cap = core.capacity();
    let q = core.lock();
    WaiterStats {
        pending: q.precise.len() + q.coarse.len(),
        idle: q.idle,
        armed: q.armed,
        precise: q.precise_admitted,
        coarse: q.coarse_armed,
        fired: q.fired,
        cancelled: q.cancelled,
        backlog: core.backlog.load(Ordering::Relaxed),
        relayed: q.relayed,
        sleeps: core.sleeps.load(Ordering::Relaxed),
        capacity_per_s: cap.per_second(),
        cost_ns: cap.cost_ns(),
    }
}
