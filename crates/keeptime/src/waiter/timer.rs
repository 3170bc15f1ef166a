//! A task's side of the waiter: an armed [`Timer`] (arm, re-waker, drop)
//! and [`PreciseWait`], the poll-driven state machine of one precise async
//! sleep over [`next_step`], which also takes the capacity's cost samples;
//! [`probe_capacity`] drives a few of them from a plain thread.

use super::latency::FinishCount;
use super::queue::{admit, behind, capacity, core, run_waiter, Queue, Shared};
use super::{next_step, Step, TimerState, WakeLatency};
use super::{FINISH_SPIN_NS, LATE_NS, MAX_FINISH_SPIN_NS};
use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard, PoisonError};
use std::task::Waker;
use std::time::Duration;

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
        let shared = Shared::new(waker);
        Timer::insert(core().lock(), shared, wake_ns, wake_ns, true, waker)
    }

    /// Arms a timer for a sleep until `deadline_ns` that wants to be woken
    /// `lead_ns` before it: a precise timer at `deadline_ns − lead_ns` if the
    /// admission takes it ([`Admission::offer`](super::Admission::offer): the
    /// slot's share of the capacity, the trickle while the waiter is
    /// saturated, always for a lone sleeper; any [`PreciseWait`] alive counts
    /// as another sleep), else (or with a zero lead) a coarse one at
    /// `deadline_ns`.
    pub fn arm_for(deadline_ns: u64, lead_ns: u64, waker: &Waker) -> Timer {
        let shared = Shared::new(waker);
        let now = crate::os::monotonic_ns();
        let mut q = core().lock();
        let precise = admit(&mut q, now, deadline_ns, lead_ns, false);
        Timer::admitted(q, shared, deadline_ns, lead_ns, precise, waker)
    }

    /// The timer an admission decided for a sleep until `deadline_ns`:
    /// precise, at `deadline_ns − lead_ns`, or coarse, at `deadline_ns`;
    /// armed under the queue's lock `q`, which the admission held, with
    /// its `shared` state made before the lock was taken.
    fn admitted(
        q: MutexGuard<'_, Queue>,
        shared: Arc<Shared>,
        deadline_ns: u64,
        lead_ns: u64,
        precise: bool,
        waker: &Waker,
    ) -> Timer {
        if precise {
            Timer::insert(
                q,
                shared,
                deadline_ns.saturating_sub(lead_ns),
                deadline_ns,
                true,
                waker,
            )
        } else {
            Timer::insert(q, shared, deadline_ns, deadline_ns, false, waker)
        }
    }

    fn insert(
        mut q: MutexGuard<'_, Queue>,
        shared: Arc<Shared>,
        wake_ns: u64,
        deadline_ns: u64,
        precise: bool,
        waker: &Waker,
    ) -> Timer {
        let core = core();
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

/// A precise wait toward one deadline, driven by polls: the state machine
/// behind `keeptime::tokio`'s futures and the Python
/// binding's `keeptime.asyncio.sleep`, over a [`WakeLatency`] of the caller's
/// choosing (one per executor or event loop).
#[derive(Debug)]
pub struct PreciseWait {
    deadline_ns: u64,
    timer: Option<Timer>,
    /// Remaining time and lead when the timer was armed.
    armed_remaining_ns: u64,
    armed_lead_ns: u64,
    pub(super) finish_spin_ns: u64,
    /// Coarse waits are the caller's ([`PreciseWait::set_caller_coarse`]).
    caller_coarse: bool,
    /// Coarse timers woken through the relay ([`PreciseWait::set_relay`]).
    relay: bool,
    /// The finish of a fired precise timer; `None` while no precise timer
    /// fired (or after a coarse one was armed).
    finish: Option<Finish>,
}

/// The finish of a precise deadline, from the first poll after its timer
/// fired: what it has cost so far (`spec/waiter.md`, *Capacity*).
#[derive(Debug)]
struct Finish {
    /// The waiter's cost of the precise timer.
    fire_cost_ns: u64,
    /// The start of the latest poll.
    last_ns: u64,
    /// The stretches' shares so far ([`finish_share`](super::finish_share)).
    charged_ns: u64,
    /// Counted among the executor's finishing deadlines while it lives.
    count: FinishCount,
}

impl Finish {
    /// A finish beginning with the poll that started at `start_ns`, after a
    /// waiter cost of `fire_cost_ns` (0 when no timer fired for it).
    fn begin(fire_cost_ns: u64, start_ns: u64, latency: &WakeLatency) -> Finish {
        Finish {
            fire_cost_ns,
            last_ns: start_ns,
            charged_ns: 0,
            count: latency.begin_finish(),
        }
    }

    /// The stretch from the latest poll's start to `now_ns`, charged.
    fn charge_to(&mut self, now_ns: u64) {
        let share = self.count.share(now_ns.saturating_sub(self.last_ns));
        self.charged_ns = self.charged_ns.saturating_add(share);
        self.last_ns = now_ns.max(self.last_ns);
    }
}

impl Drop for PreciseWait {
    fn drop(&mut self) {
        core().sleeps.fetch_sub(1, Ordering::Relaxed);
    }
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
        core().sleeps.fetch_add(1, Ordering::Relaxed);
        PreciseWait {
            deadline_ns,
            timer: None,
            armed_remaining_ns: 0,
            armed_lead_ns: 0,
            finish_spin_ns: FINISH_SPIN_NS,
            caller_coarse: false,
            relay: false,
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

    /// Takes part in the waiter's relay (default: off): this wait's coarse
    /// timers may be woken by another relaying wait's poll rather than by
    /// the waiter thread, and each of its polls wakes up to
    /// [`RELAY_BATCH`](super::RELAY_BATCH) fired timers of the relay. For
    /// executors where a wake from one of their own threads is cheaper than
    /// one from outside (tokio: a push to the thread's own run queue). A
    /// relayed timer that no relaying poll wakes is woken by the waiter,
    /// before its next batch and at most
    /// [`RELAY_GRACE_NS`](super::RELAY_GRACE_NS) after its firing. The
    /// caller's wakers must tolerate being woken from inside another
    /// task's poll.
    pub fn set_relay(&mut self, on: bool) {
        self.relay = on;
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
        if self.relay {
            core().relay.wake(super::RELAY_BATCH);
        }
        let start = crate::os::monotonic_ns();
        if let Some(f) = self.finish.as_mut() {
            f.charge_to(start);
        }
        let progress = self.step(latency, waker, start);
        if let Progress::Ready(end) = progress {
            if let Some(mut f) = self.finish.take() {
                // The waiter's share plus this task's share of the finish,
                // from the first poll after the firing to the end: the
                // yields' polls, the executor's rounds between them and the
                // spin, shared with the deadlines finishing beside it.
                f.charge_to(end);
                let cost = f.fire_cost_ns.saturating_add(f.charged_ns);
                drop(f);
                let late = end.saturating_sub(self.deadline_ns) > LATE_NS;
                core().observe_cost(if late { None } else { Some(cost) });
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
                                self.finish = Some(Finish::begin(fire_cost, start, latency));
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
                    if let Some(coarse) = self.offer_finish(step, now, lead, start, latency, waker)
                    {
                        return coarse;
                    }
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
                    if let Some(coarse) = self.offer_finish(step, now, lead, start, latency, waker)
                    {
                        return coarse;
                    }
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
                    // Made before the lock (unless the caller serves coarse
                    // waits, and then only if admitted).
                    let shared = (!self.caller_coarse).then(|| Shared::new(waker));
                    let mut q = core().lock();
                    let precise = admit(&mut q, now, self.deadline_ns, lead, true);
                    return self.arm(q, shared, precise, lead, remaining, waker);
                }
            }
            now = crate::os::monotonic_ns();
        }
    }

    /// A finish (`step`: a yield or a spin) without a precise timer fired
    /// for it (woken by the caller's coarse wait, or first polled within the
    /// lead or an event loop's spin) is a precise deadline too
    /// ([`offers_finish`](super::offers_finish)): offered to its slot, and
    /// charged its finish if admitted; not admitted, a coarse timer instead
    /// (returned). `None`: go on with the finish.
    fn offer_finish(
        &mut self,
        step: Step,
        now: u64,
        lead: u64,
        start: u64,
        latency: &WakeLatency,
        waker: &Waker,
    ) -> Option<Progress> {
        let admitted = self.finish.is_some() || self.timer.as_ref().is_some_and(|t| t.is_precise());
        let remaining = self.deadline_ns.saturating_sub(now);
        if !super::offers_finish(step, remaining, admitted) {
            return None;
        }
        self.timer = None;
        let mut q = core().lock();
        if !admit(&mut q, now, self.deadline_ns, lead, true) {
            return Some(self.arm(q, None, false, 0, remaining, waker));
        }
        drop(q);
        self.finish = Some(Finish::begin(0, start, latency));
        None
    }

    /// Arms the timer the admission decided, under the queue's lock `q`
    /// it held: precise with `lead`, else coarse (the caller's own timer if
    /// it serves coarse waits). `shared`: the timer's state, if made
    /// before the lock.
    fn arm(
        &mut self,
        q: MutexGuard<'_, Queue>,
        shared: Option<Arc<Shared>>,
        precise: bool,
        lead: u64,
        remaining: u64,
        waker: &Waker,
    ) -> Progress {
        self.armed_remaining_ns = remaining;
        if !precise {
            self.finish = None;
            if self.caller_coarse {
                drop(q);
                self.armed_lead_ns = 0;
                return Progress::Pending(Step::Arm { lead_ns: 0 });
            }
        }
        let shared = shared.unwrap_or_else(|| Shared::new(waker));
        if !precise && self.relay {
            shared.relay.store(true, Ordering::Relaxed);
        }
        let timer = Timer::admitted(q, shared, self.deadline_ns, lead, precise, waker);
        self.armed_lead_ns = timer.lead_ns();
        self.timer = Some(timer);
        Progress::Pending(Step::Arm {
            lead_ns: self.armed_lead_ns,
        })
    }
}
