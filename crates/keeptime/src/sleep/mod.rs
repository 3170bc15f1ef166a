//! The waiting algorithm: an absolute OS wait until a learned margin before the
//! deadline, then a spin on the clock. Specified in `spec/sleep.md`.

use crate::estimate::{bucket_of, MarginEstimator, COST_SAMPLE_EVERY};
use crate::idle_hint::{IdleHint, IdleHintHolder, IdleHintStatus};
use crate::platform::{duration_ns, Platform, System};
use crate::sys::OsWake;
use std::fmt;
use std::time::{Duration, Instant};

mod builder;
mod handoff;
mod mode;
mod plan;
mod stats;
mod target;

pub use builder::SleeperBuilder;
pub use handoff::Handoff;
pub use mode::Mode;
pub use plan::{crowd_spin_cap, explores, plan_efficient, plan_exact, OsWaitPlan, PlanStep};
pub use stats::SleeperStats;
pub use target::TailTarget;

/// OS waits shorter than this are not worth a system call; spin instead.
pub const MIN_OS_WAIT_NS: u64 = 5_000;
/// The lengths of the short second OS wait that a two-wait plan leaves after
/// its long first one ([`plan_exact`]).
pub const SPLITS_NS: [u64; 4] = [50_000, 100_000, 200_000, 400_000];
/// Every this many sleeps, the first plan of a sleep prefers a two-wait plan
/// whose short wait's bucket is not yet established (exploration), so short
/// buckets get the samples that let two-wait plans compete on their merit.
pub const EXPLORE_EVERY: u64 = 8;
/// The first this many sleeps of a sleeper all explore (when a two-wait plan
/// with a young short bucket meets the budget): a fresh sleeper learns its
/// short waits in a few hundred sleeps instead of a few thousand.
pub const EXPLORE_YOUNG_SLEEPS: u64 = 256;
/// An exploring plan is taken only when its expected CPU exceeds the
/// one-wait plan's (or the pure spin's) by at most `1 / EXPLORE_COST_DIV` of
/// the time left: exploring costs at most 6.25 % of a sleep in CPU, and a
/// short bucket whose cautious margin is huge is not explored.
pub const EXPLORE_COST_DIV: u64 = 16;
/// A spin that has run this long (or the sleeper's `min_spin`, if longer)
/// yields the CPU on further iterations while the deadline is far.
pub const SPIN_YIELD_AFTER_NS: u64 = 50_000;
/// Within this much of the deadline a spin only pauses, never yields: the
/// last stretch is polled at the clock's own speed.
pub const SPIN_NEAR_NS: u64 = 20_000;
/// While yielding in a long spin, the interrupt check runs this often.
pub const INTERRUPT_POLL_NS: u64 = 10_000_000;
/// In a crowd (more sleepers in a sleep than CPUs), the sleepers' spins may
/// take at most `1 / CROWD_SPIN_DIVISOR` of the CPUs' time, less their OS
/// waits' cost (`spec/sleep.md`, *Crowds*).
pub const CROWD_SPIN_DIVISOR: u64 = 2;
/// In a crowd, the spin-slot holder pauses only within this much of its
/// deadline and yields before it, like the sleepers without a slot: a
/// pausing spinner holds a CPU that other sleepers' wake-ups need.
pub const CROWD_PAUSE_NS: u64 = 5_000;
/// The last stretch of a spin-finished sleep runs in the outermost call, the
/// one that returns to the caller: within this much of the deadline the spin
/// *hands off* (`spec/sleep.md`, *Hand-off*). Every piece of bookkeeping
/// (stats, the spin slot, the crowd count, the thread's sleeper) is done
/// before it, so the loop's exit is the return, and what the return path
/// touches is touched a few µs before the deadline, not after it. At most
/// [`CROWD_PAUSE_NS`], so the hand-off never changes whether a step pauses
/// or yields.
pub const HANDOFF_NS: u64 = 5_000;

/// A sleep ended early because the interrupt check asked it to (see
/// [`Sleeper::sleep_until_ns_interruptible`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupted {
    /// Clock reading when the sleep gave up.
    pub at_ns: u64,
}

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sleep interrupted at {} ns", self.at_ns)
    }
}

impl std::error::Error for Interrupted {}

/// A precise sleeper with its own learned margins.
///
/// Every wait goes: OS waits with an **absolute** deadline (`clock_nanosleep`
/// `TIMER_ABSTIME` on Linux), each ending a learned margin before the deadline
/// (a long wait also leaves 200 µs for a short one), then a spin on the clock
/// with the CPU's pause hint. The margins come from the overshoots this
/// sleeper has observed ([`MarginEstimator`]), so they follow the machine's
/// load. On Linux the waiting thread's timer slack is set to 1 ns on first use
/// (opt out with [`SleeperBuilder::timer_slack`]).
///
/// Guarantees (in [`Mode::Exact`] and [`Mode::Spin`]): never returns before
/// the deadline on the monotonic clock; a signal (EINTR) resumes toward the
/// same deadline; a deadline in the past returns at once.
///
/// Cost: one clock read for a past deadline; otherwise one or two OS waits
/// plus a spin of the learned margin (typically a few µs) per sleep.
///
/// Use one `Sleeper` per thread (it is `Send` but not `Sync`); the free
/// functions [`sleep`](crate::sleep) and [`sleep_until`](crate::sleep_until)
/// keep one per thread for you.
///
/// ```
/// use keeptime::{Mode, Sleeper};
/// use std::time::{Duration, Instant};
///
/// let mut s = Sleeper::builder().mode(Mode::Exact).build();
/// let deadline = Instant::now() + Duration::from_micros(250);
/// s.sleep_until(deadline);
/// assert!(Instant::now() >= deadline);
/// ```
#[derive(Clone, Debug)]
pub struct Sleeper<P: Platform = System> {
    platform: P,
    mode: Mode,
    min_spin_ns: u64,
    /// A binding's lead during one sleep (0 otherwise): its OS waits are
    /// planned for the deadline less this, so the binding's own work after
    /// the hand-off fits before the deadline whenever the last wake-up is
    /// within its margin, and the spin hands off `max(lead, HANDOFF_NS)`
    /// before the deadline.
    lead_ns: u64,
    target: TailTarget,
    estimator: MarginEstimator,
    waits_planned: u64,
    stats: SleeperStats,
    /// The idle-latency request, shared by clones ([`SleeperBuilder::idle_hint`]).
    idle_hint: IdleHintHolder,
    warn_refused_hint: bool,
}

impl Default for Sleeper {
    fn default() -> Self {
        Self::new()
    }
}

impl Sleeper {
    /// A sleeper in [`Mode::Exact`] on the real clock, timer slack 1 ns.
    pub fn new() -> Self {
        SleeperBuilder::default().build()
    }
}

impl Sleeper<System> {
    /// Starts configuring a sleeper.
    pub fn builder() -> SleeperBuilder {
        SleeperBuilder::default()
    }
}

impl<P: Platform> Sleeper<P> {
    /// This sleeper's mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Switches the mode; the learned margins are kept.
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// The shortest spin that finishes an exact sleep ([`SleeperBuilder::min_spin`]).
    pub fn min_spin(&self) -> Duration {
        Duration::from_nanos(self.min_spin_ns)
    }

    /// Changes the shortest spin; see [`SleeperBuilder::min_spin`].
    pub fn set_min_spin(&mut self, min_spin: Duration) {
        self.min_spin_ns = duration_ns(min_spin);
    }

    /// The share of sleeps allowed to end late ([`SleeperBuilder::tail_target`]).
    pub fn tail_target(&self) -> TailTarget {
        self.target
    }

    /// Changes the tail target; what was learned is kept.
    pub fn set_tail_target(&mut self, target: TailTarget) {
        self.target = target;
    }

    /// What this sleeper has spent so far: sleeps, late sleeps, OS waits,
    /// spin time and the estimated thread CPU.
    ///
    /// ```
    /// let mut s = keeptime::Sleeper::new();
    /// s.sleep(std::time::Duration::from_micros(200));
    /// let st = s.stats();
    /// assert_eq!(st.sleeps, 1);
    /// assert!(st.late <= st.sleeps);
    /// ```
    pub fn stats(&self) -> SleeperStats {
        self.stats
    }

    /// Starts the stats afresh (what was learned is kept).
    pub fn reset_stats(&mut self) {
        self.stats = SleeperStats::default();
    }

    /// Whether this sleeper's idle-latency hint is held (and the value in
    /// force for the process), was refused (and why), or was not asked for
    /// ([`SleeperBuilder::idle_hint`]).
    pub fn idle_hint_status(&self) -> IdleHintStatus {
        self.idle_hint.status()
    }

    /// Asks for another idle-latency hint (`None`: gives this sleeper's up).
    /// The new request is made before the old one is released, so the
    /// device is not closed in between. Clones made earlier keep the old
    /// request. A refusal warns as [`SleeperBuilder::warn_refused_hint`] says.
    pub fn set_idle_hint(&mut self, hint: Option<IdleHint>) {
        self.idle_hint = IdleHintHolder::request_warning(hint, self.warn_refused_hint);
    }

    /// The learned wake-up model.
    pub fn estimator(&self) -> &MarginEstimator {
        &self.estimator
    }

    /// A host profile of what this sleeper has learned, made on this
    /// machine ([`Fingerprint::this_machine`](crate::profile::Fingerprint::this_machine)):
    /// write it with [`Profile::write`](crate::profile::Profile::write) and
    /// start a later run from it ([`SleeperBuilder::profile`]); its sleepers
    /// then answer as this one does now (`spec/estimator.md`, *Writing*).
    pub fn profile(&self) -> crate::profile::Profile {
        crate::profile::Profile::from_estimator(
            &self.estimator,
            crate::profile::Fingerprint::this_machine(),
        )
    }

    /// The platform this sleeper waits on.
    pub fn platform(&self) -> &P {
        &self.platform
    }

    /// Sleeps until `deadline`; never returns before it (except
    /// [`Mode::Efficient`]). A past deadline returns at once.
    #[inline]
    pub fn sleep_until(&mut self, deadline: Instant) {
        let ns = self.platform.ns_from_instant(deadline);
        self.sleep_until_ns(ns);
    }

    /// Sleeps for `duration` from now. `Duration::MAX` and other durations
    /// past the clock's range saturate to an effectively unbounded wait
    /// (until `u64::MAX` ns, 584 years after boot); they never panic.
    #[inline]
    pub fn sleep(&mut self, duration: Duration) {
        let deadline = self.platform.now_ns().saturating_add(duration_ns(duration));
        self.sleep_until_ns(deadline);
    }

    /// Sleeps until `deadline_ns` on the platform's monotonic clock
    /// (`CLOCK_MONOTONIC` nanoseconds on Linux, see
    /// [`os::monotonic_ns`](crate::os::monotonic_ns)) and returns the first clock
    /// reading taken after the wait: `>= deadline_ns` except in
    /// [`Mode::Efficient`].
    #[inline]
    pub fn sleep_until_ns(&mut self, deadline_ns: u64) -> u64 {
        self.sleep_to_handoff(deadline_ns).finish(&self.platform)
    }

    /// Everything of a sleep but its last [`HANDOFF_NS`]: the caller spins
    /// the rest with [`Handoff::finish`], outside any borrow of the sleeper.
    pub fn sleep_to_handoff(&mut self, deadline_ns: u64) -> Handoff {
        match self.run(deadline_ns, &mut || true) {
            Ok(handoff) => handoff,
            Err(Interrupted { at_ns }) => Handoff::done(at_ns), // unreachable: the check never stops
        }
    }

    /// Like [`sleep_until_ns`](Self::sleep_until_ns), but calls `keep_going`
    /// whenever a signal interrupts the OS wait (EINTR), and every 10 ms of a
    /// long spin; when it returns `false` the sleep ends with
    /// [`Interrupted`]. This is how a language runtime lets a signal handler
    /// run during a long wait (Python's Ctrl-C).
    #[inline]
    pub fn sleep_until_ns_interruptible(
        &mut self,
        deadline_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<u64, Interrupted> {
        Ok(self.run(deadline_ns, keep_going)?.finish(&self.platform))
    }

    /// An interruptible sleep up to its hand-off (the ticker's wait records
    /// the tick before the final spin; a binding re-acquires its runtime
    /// before it). The caller spins the rest with [`Handoff::finish`].
    pub fn sleep_until_ns_to_handoff(
        &mut self,
        deadline_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        self.run(deadline_ns, keep_going)
    }

    /// [`sleep_until_ns_to_handoff`](Self::sleep_until_ns_to_handoff) with a
    /// last stretch of at least `lead_ns` for a binding that has work of its
    /// own to do before the return (Python re-attaches to its interpreter and
    /// warms its way back): the sleep plans its OS waits for `lead_ns` before
    /// the deadline (each margin then leaves the whole lead for that work),
    /// and hands off `max(lead_ns, HANDOFF_NS)` before the deadline
    /// (`spec/sleep.md`, *Hand-off*). Stats, the late count and the spin are
    /// the sleep's own, against the real deadline.
    pub fn sleep_until_ns_to_handoff_with_lead(
        &mut self,
        deadline_ns: u64,
        lead_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        self.lead_ns = lead_ns;
        let result = self.run(deadline_ns, keep_going);
        self.lead_ns = 0;
        result
    }

    fn run(
        &mut self,
        deadline: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        let mut now = self.platform.now_ns();
        if now >= deadline {
            return Ok(Handoff::done(now));
        }
        self.platform.prepare_thread();
        self.estimator.begin_sleep();
        self.stats.sleeps += 1;
        match self.mode {
            Mode::Spin => self.spin(deadline, now, SPIN_YIELD_AFTER_NS, SPIN_NEAR_NS, keep_going),
            Mode::Efficient => {
                if let Some(wait) = plan_efficient(&self.estimator, deadline - now) {
                    now = self.os_wait(now, wait, keep_going)?;
                }
                Ok(Handoff::done(now))
            }
            Mode::Exact => {
                let n = self.platform.enter_sleep();
                let result = if n > self.platform.cpus() {
                    self.crowd_sleep(deadline, now, n, keep_going)
                } else {
                    self.planned_sleep(deadline, now, keep_going)
                };
                self.platform.leave_sleep();
                result
            }
        }
    }

    /// An exact sleep with a CPU to itself: the cheapest plan that meets the
    /// tail target (`spec/sleep.md`, *planned_sleep*).
    fn planned_sleep(
        &mut self,
        deadline: u64,
        mut now: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        let mut budget = u64::from(self.target.ppm());
        let mut unproven = false;
        let mut step = PlanStep {
            first: true,
            explore: explores(self.estimator.sleeps()),
            after_split: false,
        };
        loop {
            let plan = plan_exact(
                &self.estimator,
                (deadline - now).saturating_sub(self.lead_ns),
                budget,
                self.min_spin_ns,
                step,
            );
            step.first = false;
            step.explore = false;
            match plan {
                Some(plan) => {
                    if !plan.proven && !unproven {
                        unproven = true;
                        self.stats.unproven_sleeps += 1;
                    }
                    now = self.os_wait(now, plan.wait_ns, keep_going)?;
                    if now >= deadline {
                        if now > deadline {
                            self.stats.late += 1;
                        }
                        return Ok(Handoff::done(now));
                    }
                    budget = plan.rest_budget_ppm;
                    if plan.split {
                        step.after_split = true;
                    }
                }
                None => {
                    let pause_for = SPIN_YIELD_AFTER_NS.max(self.min_spin_ns);
                    return self.finish(deadline, now, pause_for, SPIN_NEAR_NS, keep_going);
                }
            }
        }
    }

    /// An exact sleep in a crowd of `n` sleepers: one OS wait ending the
    /// learned margin before the deadline, the margin capped by
    /// [`crowd_spin_cap`], then a spin (`spec/sleep.md`, *Crowds*).
    fn crowd_sleep(
        &mut self,
        deadline: u64,
        mut now: u64,
        n: usize,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        let length = deadline - now;
        let cap = crowd_spin_cap(
            self.platform.cpus(),
            n,
            length,
            self.estimator.cost(bucket_of(length)),
        );
        let budget = u64::from(self.target.ppm());
        loop {
            let rest = (deadline - now).saturating_sub(self.lead_ns);
            let g = self
                .estimator
                .margin(bucket_of(rest), budget)
                .min(cap)
                .max(self.min_spin_ns);
            if rest > g && rest - g >= MIN_OS_WAIT_NS {
                now = self.os_wait(now, rest - g, keep_going)?;
                if now >= deadline {
                    if now > deadline {
                        self.stats.late += 1;
                    }
                    return Ok(Handoff::done(now));
                }
            } else {
                return self.finish(deadline, now, self.min_spin_ns, CROWD_PAUSE_NS, keep_going);
            }
        }
    }

    /// One planned OS wait of `wait_ns` from `now`, resumed toward the same
    /// absolute target after signals; records its overshoot, and its thread
    /// CPU on every [`COST_SAMPLE_EVERY`](crate::estimate::COST_SAMPLE_EVERY)-th wait.
    fn os_wait(
        &mut self,
        now: u64,
        wait_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<u64, Interrupted> {
        let target = now.saturating_add(wait_ns);
        let sample = self.waits_planned % COST_SAMPLE_EVERY == 0;
        self.waits_planned = self.waits_planned.wrapping_add(1);
        let cpu_before = if sample {
            self.platform.thread_cpu_ns()
        } else {
            None
        };
        self.wait_through_signals(target, keep_going)?;
        let woke = self.platform.now_ns();
        if let Some(before) = cpu_before {
            if let Some(after) = self.platform.thread_cpu_ns() {
                self.estimator
                    .observe_cost(wait_ns, after.saturating_sub(before));
            }
        }
        self.count_os_wait(bucket_of(wait_ns));
        self.estimator.observe(wait_ns, woke.saturating_sub(target));
        Ok(woke)
    }

    fn count_os_wait(&mut self, bucket: usize) {
        self.stats.os_waits += 1;
        self.stats.cpu_estimate_ns = self
            .stats
            .cpu_estimate_ns
            .saturating_add(self.estimator.cost(bucket));
    }

    fn wait_through_signals(
        &self,
        target: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<(), Interrupted> {
        while self.platform.os_wait_until(target) == OsWake::Interrupted {
            if !keep_going() {
                return Err(Interrupted {
                    at_ns: self.platform.now_ns(),
                });
            }
        }
        Ok(())
    }

    /// The last phase of an exact sleep: a spin. With a process-wide spin slot
    /// it pauses ([`spin`](Self::spin)); without one it *follows*: a yield on
    /// every iteration, never late by an OS wake-up and never holding a CPU
    /// that a woken thread needs.
    fn finish(
        &mut self,
        deadline: u64,
        now: u64,
        pause_for: u64,
        near: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        if self.platform.try_begin_spin() {
            let result = self.spin(deadline, now, pause_for, near, keep_going);
            self.platform.end_spin();
            return result;
        }
        self.follow(deadline, now, keep_going)
    }

    /// A spin without a spin slot: yields on every iteration until `deadline`.
    fn follow(
        &mut self,
        deadline: u64,
        start: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        // No pause at all (`pause_for` and `near` 0): a yield per iteration.
        self.spin(deadline, start, 0, 0, keep_going)
    }

    /// Spins until `deadline`: the pause hint for `pause_for` (the planned
    /// length of the spin) and always within `near` of the deadline
    /// ([`SPIN_NEAR_NS`]; [`CROWD_PAUSE_NS`] in a crowd); a yield per
    /// iteration in between. A spin that pauses near the deadline (`near >=`
    /// [`HANDOFF_NS`]) hands off its last [`HANDOFF_NS`] to the outermost
    /// call, counted as spin time to the deadline; one that yields to the
    /// end (a follower) spins to the deadline here.
    fn spin(
        &mut self,
        deadline: u64,
        start: u64,
        pause_for: u64,
        near: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Handoff, Interrupted> {
        let mut now = start;
        let mut next_poll = start
            .saturating_add(pause_for)
            .saturating_add(INTERRUPT_POLL_NS);
        let handoff_at = if near >= HANDOFF_NS {
            deadline.saturating_sub(HANDOFF_NS.max(self.lead_ns))
        } else {
            deadline
        };
        while now < handoff_at {
            if now - start < pause_for || deadline - now <= near {
                self.platform.relax();
            } else {
                self.platform.yield_now();
                if now >= next_poll {
                    if !keep_going() {
                        self.add_spin(now - start);
                        return Err(Interrupted { at_ns: now });
                    }
                    next_poll = now.saturating_add(INTERRUPT_POLL_NS);
                }
            }
            now = self.platform.now_ns();
        }
        if now < deadline {
            self.add_spin(deadline - start);
            return Ok(Handoff {
                now,
                until: deadline,
            });
        }
        self.add_spin(now - start);
        Ok(Handoff::done(now))
    }

    fn add_spin(&mut self, ns: u64) {
        self.stats.spin_ns = self.stats.spin_ns.saturating_add(ns);
        self.stats.cpu_estimate_ns = self.stats.cpu_estimate_ns.saturating_add(ns);
    }
}
