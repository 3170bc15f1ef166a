//! The waiting algorithm: an absolute OS wait until a learned margin before the
//! deadline, then a spin on the clock. Specified in `spec/sleep.md`.

use crate::estimate::{bucket_hi, bucket_lo, bucket_of, MarginEstimator};
use crate::platform::{duration_ns, Platform, System};
use crate::sys::OsWake;
use std::fmt;
use std::time::{Duration, Instant};

/// OS waits shorter than this are not worth a system call; spin instead.
pub const MIN_OS_WAIT_NS: u64 = 5_000;
/// A long OS wait stops this much earlier than its learned margin, leaving the
/// rest to a short OS wait: long waits have long-tailed wake-ups, short ones
/// (≲ 200 µs) wake within a few µs, so the tail is absorbed at no CPU cost.
pub const SPLIT_NS: u64 = 200_000;
/// First bucket whose OS waits count as long (262.144 µs and up).
pub const LONG_BUCKET: usize = 5;
/// A spin that has run this long (or the sleeper's `min_spin`, if longer)
/// yields the CPU on every further iteration.
pub const SPIN_YIELD_AFTER_NS: u64 = 50_000;
/// While yielding in a long spin, the interrupt check runs this often.
pub const INTERRUPT_POLL_NS: u64 = 10_000_000;

/// How a [`Sleeper`] finishes a wait: the trade between accuracy and CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Mode {
    /// Spin-finished (the default): OS waits end a learned margin before the
    /// deadline, a spin on the clock finishes the sleep. Never returns early;
    /// typically within a fraction of a microsecond after the deadline, at a
    /// CPU cost of the margin (a few µs) per sleep.
    #[default]
    Exact,
    /// OS-only, compensated (seed 001's method): one OS wait that ends the
    /// learned *median* overshoot before the deadline, no spin. Uses almost no
    /// CPU, but **may return before the deadline** (about half of the time by
    /// a few µs) and cannot wait less than the OS's minimum wake-up latency.
    /// The one documented exception to "never early".
    Efficient,
    /// Pure spin on the clock with the CPU's pause hint: the most accurate and
    /// a whole core for the whole wait (yielding after 50 µs, so a crowd of
    /// spinners does not starve other threads). Never returns early.
    Spin,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Exact => "exact",
            Mode::Efficient => "efficient",
            Mode::Spin => "spin",
        })
    }
}

impl std::str::FromStr for Mode {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "exact" => Ok(Mode::Exact),
            "efficient" => Ok(Mode::Efficient),
            "spin" => Ok(Mode::Spin),
            _ => Err(crate::Error::UnknownMode(s.to_owned())),
        }
    }
}

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
    estimator: MarginEstimator,
}

/// Configures a [`Sleeper`]: mode and knobs.
#[derive(Clone, Copy, Debug)]
#[must_use = "call .build() to get a Sleeper"]
pub struct SleeperBuilder {
    mode: Mode,
    timer_slack: bool,
    min_spin_ns: u64,
}

impl Default for SleeperBuilder {
    fn default() -> Self {
        SleeperBuilder {
            mode: Mode::Exact,
            timer_slack: true,
            min_spin_ns: 0,
        }
    }
}

impl SleeperBuilder {
    /// Accuracy/CPU preset (default [`Mode::Exact`]).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Whether to set the waiting thread's Linux timer slack to 1 ns
    /// (default `true`). Timer slack is per thread: once any keeptime sleep
    /// with this on has run on a thread, the thread keeps the 1 ns slack.
    /// keeptime sets it once per thread (a `prctl` per sleep would cost more
    /// than the clock reads); if other code on that thread resets the slack
    /// later, keeptime does not notice, and its margins learn the larger
    /// overshoot instead.
    /// Turning it off leaves the kernel's default (50 µs) in place; the
    /// estimator then learns the larger overshoot and spins for it.
    pub fn timer_slack(mut self, set_1ns: bool) -> Self {
        self.timer_slack = set_1ns;
        self
    }

    /// The shortest spin that finishes an [`Mode::Exact`] sleep (default 0:
    /// only the learned margin). The last OS wait then ends at least this
    /// long before the deadline.
    ///
    /// The learned margin covers roughly the 97th percentile of the OS's
    /// wake-up overshoot, for a spin of a few µs. On virtual machines the
    /// rarest wake-ups come tens of µs late (the host schedules the halted
    /// vCPU); a spin that covers them gives spin-level p99 accuracy at a
    /// fixed CPU price: `min_spin` ÷ the sleep's length. `keeptime bench`
    /// shows this machine's tail (the p99 of `clock-nanosleep-abs`).
    /// Durations past `u64::MAX` ns saturate, so a huge value is a pure spin.
    ///
    /// ```
    /// use keeptime::Sleeper;
    /// use std::time::Duration;
    ///
    /// // A 1 kHz control loop on a VM: spin the last 60 µs of every period (~6 % CPU).
    /// let mut s = Sleeper::builder().min_spin(Duration::from_micros(60)).build();
    /// s.sleep(Duration::from_micros(200));
    /// ```
    pub fn min_spin(mut self, min_spin: Duration) -> Self {
        self.min_spin_ns = duration_ns(min_spin);
        self
    }

    /// A sleeper on the real clock.
    pub fn build(self) -> Sleeper {
        self.build_with(System::new(self.timer_slack))
    }

    /// A sleeper on another [`Platform`], e.g. a
    /// [`SimPlatform`](crate::sim::SimPlatform) in tests.
    pub fn build_with<P: Platform>(self, platform: P) -> Sleeper<P> {
        Sleeper {
            platform,
            mode: self.mode,
            min_spin_ns: self.min_spin_ns,
            estimator: MarginEstimator::new(),
        }
    }
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

    /// The learned margins.
    pub fn estimator(&self) -> &MarginEstimator {
        &self.estimator
    }

    /// The platform this sleeper waits on.
    pub fn platform(&self) -> &P {
        &self.platform
    }

    /// Sleeps until `deadline`; never returns before it (except
    /// [`Mode::Efficient`]). A past deadline returns at once.
    pub fn sleep_until(&mut self, deadline: Instant) {
        let ns = self.platform.ns_from_instant(deadline);
        self.sleep_until_ns(ns);
    }

    /// Sleeps for `duration` from now. `Duration::MAX` and other durations
    /// past the clock's range saturate to an effectively unbounded wait
    /// (until `u64::MAX` ns, 584 years after boot); they never panic.
    pub fn sleep(&mut self, duration: Duration) {
        let deadline = self.platform.now_ns().saturating_add(duration_ns(duration));
        self.sleep_until_ns(deadline);
    }

    /// Sleeps until `deadline_ns` on the platform's monotonic clock
    /// (`CLOCK_MONOTONIC` nanoseconds on Linux, see
    /// [`os::monotonic_ns`](crate::os::monotonic_ns)) and returns the first clock
    /// reading taken after the wait: `>= deadline_ns` except in
    /// [`Mode::Efficient`].
    pub fn sleep_until_ns(&mut self, deadline_ns: u64) -> u64 {
        match self.run(deadline_ns, &mut || true) {
            Ok(now) => now,
            Err(Interrupted { at_ns }) => at_ns, // unreachable: the check never stops
        }
    }

    /// Like [`sleep_until_ns`](Self::sleep_until_ns), but calls `keep_going`
    /// whenever a signal interrupts the OS wait (EINTR), and every 10 ms of a
    /// long spin; when it returns `false` the sleep ends with
    /// [`Interrupted`]. This is how a language runtime lets a signal handler
    /// run during a long wait (Python's Ctrl-C).
    pub fn sleep_until_ns_interruptible(
        &mut self,
        deadline_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<u64, Interrupted> {
        self.run(deadline_ns, keep_going)
    }

    fn run(
        &mut self,
        deadline: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<u64, Interrupted> {
        let mut now = self.platform.now_ns();
        if now >= deadline {
            return Ok(now);
        }
        self.platform.prepare_thread();
        self.estimator.begin_sleep();
        match self.mode {
            Mode::Spin => self.spin(deadline, now, SPIN_YIELD_AFTER_NS, keep_going),
            Mode::Efficient => {
                if let Some(wait) = plan_efficient(&self.estimator, deadline - now) {
                    now = self.os_wait(now, wait, keep_going)?;
                }
                Ok(now)
            }
            Mode::Exact => loop {
                match plan_exact(&self.estimator, deadline - now, self.min_spin_ns) {
                    Some(wait) => {
                        now = self.os_wait(now, wait, keep_going)?;
                        if now >= deadline {
                            return Ok(now);
                        }
                    }
                    None => {
                        let pause_for = SPIN_YIELD_AFTER_NS.max(self.min_spin_ns);
                        return self.finish(deadline, now, pause_for, keep_going);
                    }
                }
            },
        }
    }

    /// Only the last phase of an exact sleep, planned by the caller: spin from
    /// now until `deadline_ns` if a process-wide spin slot is free (the whole
    /// spin counts as planned, so it does not yield), else an OS wait straight
    /// to the deadline. No OS wait is planned and nothing is learned.
    ///
    /// For runtimes that end a wait in steps of their own: Python's binding
    /// stops the sleep a few µs early to warm the interpreter, then finishes
    /// with this, keeping the spin-slot guarantee. `keep_going` runs as in
    /// [`sleep_until_ns_interruptible`](Self::sleep_until_ns_interruptible).
    /// Never returns before the deadline unless `keep_going` stops it.
    pub fn finish_until_ns_interruptible(
        &mut self,
        deadline_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<u64, Interrupted> {
        let now = self.platform.now_ns();
        if now >= deadline_ns {
            return Ok(now);
        }
        let pause_for = SPIN_YIELD_AFTER_NS.max(deadline_ns - now);
        self.finish(deadline_ns, now, pause_for, keep_going)
    }

    /// One planned OS wait of `wait_ns` from `now`, resumed toward the same
    /// absolute target after signals; records its overshoot.
    fn os_wait(
        &mut self,
        now: u64,
        wait_ns: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<u64, Interrupted> {
        let target = now.saturating_add(wait_ns);
        self.wait_through_signals(target, keep_going)?;
        let woke = self.platform.now_ns();
        self.estimator.observe(wait_ns, woke.saturating_sub(target));
        Ok(woke)
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

    /// The last phase of an exact sleep: spin if a spin slot is free, else an
    /// OS wait straight to the deadline (late by the wake-up latency, never early).
    fn finish(
        &mut self,
        deadline: u64,
        now: u64,
        pause_for: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<u64, Interrupted> {
        if self.platform.try_begin_spin() {
            let result = self.spin(deadline, now, pause_for, keep_going);
            self.platform.end_spin();
            return result;
        }
        loop {
            self.wait_through_signals(deadline, keep_going)?;
            let now = self.platform.now_ns();
            if now >= deadline {
                return Ok(now);
            }
        }
    }

    /// Spins until `deadline`: the pause hint for `pause_for` (the planned
    /// length of the spin), then a yield per iteration.
    fn spin(
        &self,
        deadline: u64,
        start: u64,
        pause_for: u64,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<u64, Interrupted> {
        let mut now = start;
        let mut next_poll = start
            .saturating_add(pause_for)
            .saturating_add(INTERRUPT_POLL_NS);
        while now < deadline {
            if now - start < pause_for {
                self.platform.relax();
            } else {
                self.platform.yield_now();
                if now >= next_poll {
                    if !keep_going() {
                        return Err(Interrupted { at_ns: now });
                    }
                    next_poll = now.saturating_add(INTERRUPT_POLL_NS);
                }
            }
            now = self.platform.now_ns();
        }
        Ok(now)
    }
}

/// The next OS wait of a spin-finished sleep with `remaining_ns` to go: the
/// longest wait `L >= MIN_OS_WAIT_NS` such that `L + gap(bucket(L)) <=
/// remaining_ns`, searching buckets from `bucket(remaining_ns)` down; `None`
/// means spin. `gap` is the larger of the bucket's margin and `min_spin_ns`,
/// plus [`SPLIT_NS`] for long buckets.
pub fn plan_exact(est: &MarginEstimator, remaining_ns: u64, min_spin_ns: u64) -> Option<u64> {
    if remaining_ns < MIN_OS_WAIT_NS {
        return None;
    }
    (0..=bucket_of(remaining_ns)).rev().find_map(|b| {
        let split = if b >= LONG_BUCKET { SPLIT_NS } else { 0 };
        let gap = est.margin(b).max(min_spin_ns).saturating_add(split);
        let wait = remaining_ns.checked_sub(gap)?.min(bucket_hi(b));
        (wait >= bucket_lo(b) && wait >= MIN_OS_WAIT_NS).then_some(wait)
    })
}

/// The single OS wait of an [`Mode::Efficient`] sleep: the longest wait `L >= 1`
/// with `L + compensation(bucket(L)) <= remaining_ns`; `None` means return at once.
pub fn plan_efficient(est: &MarginEstimator, remaining_ns: u64) -> Option<u64> {
    (0..=bucket_of(remaining_ns)).rev().find_map(|b| {
        let wait = remaining_ns
            .checked_sub(est.compensation(b))?
            .min(bucket_hi(b));
        (wait >= bucket_lo(b).max(1)).then_some(wait)
    })
}
