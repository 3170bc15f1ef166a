//! Every way of waiting that `keeptime bench` compares, each named after what
//! it is and mapped to the seed document that used it (DESIGN.md §1, §4).
//!
//! A method waits until an absolute deadline on `CLOCK_MONOTONIC` and returns
//! the first clock reading taken after its wait: the error of the wait is that
//! reading minus the deadline. The deadline is always `start + d` where
//! `start` was read just before the call, so every method gets the same
//! sleep-style request ("wait d from now").
//!
//! Methods only wait; they never allocate, print or record anything. The
//! runner keeps all bookkeeping outside the timed path.

use keeptime::{os, Mode, Sleeper, SleeperStats, TailTarget};
use std::fmt;
use std::hint;
use std::str::FromStr;
use std::time::Duration;

/// A waiting method, in the order the bench runs and prints them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// Seed 000's `while (sw.Elapsed < d) {}`: reads the clock in a tight loop.
    BusyLoop,
    /// Seed 000's `SpinWait`: the loop with the CPU's pause hint.
    SpinPause,
    /// `sched_yield` until the deadline.
    YieldLoop,
    /// `std::thread::sleep` (relative `nanosleep`) with the thread's default slack.
    SleepDefaultSlack,
    /// `std::thread::sleep` with timer slack 1 ns: Linux's `timeBeginPeriod(1)`.
    SleepSlack1ns,
    /// `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` to the deadline, slack 1 ns.
    ClockNanosleepAbs,
    /// Seed 001: sleep `d − TN`, TN the mean overshoot measured during warm-up.
    Compensated,
    /// Seed 000's fix: OS sleep `d − 1 ms`, then spin.
    Hybrid1ms,
    /// keeptime's default, [`Mode::Exact`].
    Keeptime,
    /// keeptime [`Mode::Efficient`].
    KeeptimeEfficient,
    /// keeptime [`Mode::Spin`].
    KeeptimeSpin,
}

/// Which timer slack a method runs with; set before each of its cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slack {
    /// The slack this thread had when `keeptime` started (the kernel's
    /// default, 50 µs, unless the parent process changed it).
    Default,
    /// 1 ns, the smallest the kernel accepts.
    OneNs,
}

impl Method {
    /// All methods in bench order.
    pub const ALL: [Method; 11] = [
        Method::BusyLoop,
        Method::SpinPause,
        Method::YieldLoop,
        Method::SleepDefaultSlack,
        Method::SleepSlack1ns,
        Method::ClockNanosleepAbs,
        Method::Compensated,
        Method::Hybrid1ms,
        Method::Keeptime,
        Method::KeeptimeEfficient,
        Method::KeeptimeSpin,
    ];

    /// The method's name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Method::BusyLoop => "busy-loop",
            Method::SpinPause => "spin-pause",
            Method::YieldLoop => "yield-loop",
            Method::SleepDefaultSlack => "sleep-default-slack",
            Method::SleepSlack1ns => "sleep-slack-1ns",
            Method::ClockNanosleepAbs => "clock-nanosleep-abs",
            Method::Compensated => "compensated",
            Method::Hybrid1ms => "hybrid-1ms",
            Method::Keeptime => "keeptime",
            Method::KeeptimeEfficient => "keeptime-efficient",
            Method::KeeptimeSpin => "keeptime-spin",
        }
    }

    /// The seed documents the method comes from (`"000, 003"`), if any.
    pub fn seed(self) -> Option<&'static str> {
        match self {
            Method::BusyLoop | Method::SpinPause | Method::SleepSlack1ns | Method::Hybrid1ms => {
                Some("000")
            }
            Method::SleepDefaultSlack => Some("000, 003"),
            Method::Compensated => Some("001"),
            _ => None,
        }
    }

    /// One line: what the method does and where it comes from.
    pub fn description(self) -> &'static str {
        match self {
            Method::BusyLoop => {
                "read the clock in a tight loop until the deadline (seed 000's while loop); a whole core"
            }
            Method::SpinPause => {
                "spin on the clock with the CPU's pause hint (seed 000's SpinWait): the pure-spin accuracy baseline"
            }
            Method::YieldLoop => "sched_yield until the deadline: spins when nothing else wants the CPU",
            Method::SleepDefaultSlack => {
                "std::thread::sleep(d), a relative nanosleep with the default timer slack (seed 000's Thread.Sleep, 003's time.Sleep)"
            }
            Method::SleepSlack1ns => {
                "std::thread::sleep(d) with timer slack 1 ns: the Linux timeBeginPeriod(1) of seed 000"
            }
            Method::ClockNanosleepAbs => {
                "one clock_nanosleep(TIMER_ABSTIME) to the deadline, slack 1 ns: the OS half of keeptime, alone"
            }
            Method::Compensated => {
                "seed 001: sleep d - TN, TN the mean overshoot of the warm-up sleeps, default slack; may return early"
            }
            Method::Hybrid1ms => {
                "seed 000's fix: std::thread::sleep(d - 1 ms) then spin with pause, slack 1 ns; d <= 1 ms is a pure spin"
            }
            Method::Keeptime => {
                "keeptime::Sleeper, Mode::Exact: the cheapest plan of OS waits (learned wake-up model) meeting the tail target, then spin; never early"
            }
            Method::KeeptimeEfficient => {
                "keeptime::Sleeper, Mode::Efficient: one OS wait shortened by the learned median overshoot; may return early"
            }
            Method::KeeptimeSpin => "keeptime::Sleeper, Mode::Spin: pure spin with pause, yielding after 50 µs only while the deadline is over 20 µs away",
        }
    }

    /// The timer slack this method runs with.
    pub fn slack(self) -> Slack {
        match self {
            Method::SleepDefaultSlack | Method::Compensated => Slack::Default,
            _ => Slack::OneNs,
        }
    }

    /// Whether the method is allowed to return before its deadline by design.
    pub fn may_return_early(self) -> bool {
        matches!(self, Method::Compensated | Method::KeeptimeEfficient)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of [`Method::ALL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownMethod(pub String);

impl fmt::Display for UnknownMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
        write!(
            f,
            "unknown method {}: accepted methods are {} (see `keeptime bench --list`)",
            crate::duration::quoted(&self.0),
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownMethod {}

impl FromStr for Method {
    type Err = UnknownMethod;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Method::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownMethod(s.to_owned()))
    }
}

/// A method ready to wait: whatever state it keeps between waits (a learned
/// overshoot, a `Sleeper`) lives here.
pub trait Waiter {
    /// Waits until `deadline_ns`, which is `start_ns + duration_ns`, and
    /// returns the first `CLOCK_MONOTONIC` reading after the wait.
    fn wait(&mut self, start_ns: u64, deadline_ns: u64) -> u64;

    /// Called with every warm-up sample's (duration, error) before measuring.
    fn warmup_sample(&mut self, _duration_ns: u64, _error_ns: i64) {}

    /// Called once after the warm-up, before the first measured sample.
    fn warmup_done(&mut self) {}

    /// A keeptime sleeper's own stats since the warm-up ended.
    fn sleeper_stats(&self) -> Option<SleeperStats> {
        None
    }
}

/// Seed 000's busy loop: nothing but clock reads.
pub struct BusyLoop;

impl Waiter for BusyLoop {
    #[inline]
    fn wait(&mut self, _start_ns: u64, deadline_ns: u64) -> u64 {
        poll_until(deadline_ns, || {})
    }
}

/// Reads the clock until `deadline_ns`, running `between` after each early
/// reading; returns the reading that ended the loop. Each method's loop is
/// its own monomorphised copy, as tight as a hand-written one.
#[inline(always)]
fn poll_until(deadline_ns: u64, between: impl Fn()) -> u64 {
    loop {
        let now = os::monotonic_ns();
        if now >= deadline_ns {
            return now;
        }
        between();
    }
}

/// Spin with the CPU's pause hint until `deadline_ns`; returns the clock reading.
#[inline]
pub fn spin_until(deadline_ns: u64) -> u64 {
    poll_until(deadline_ns, hint::spin_loop)
}

/// Seed 000's `SpinWait`: spin with the pause hint.
pub struct SpinPause;

impl Waiter for SpinPause {
    #[inline]
    fn wait(&mut self, _start_ns: u64, deadline_ns: u64) -> u64 {
        spin_until(deadline_ns)
    }
}

/// `sched_yield` in a loop.
pub struct YieldLoop;

impl Waiter for YieldLoop {
    #[inline]
    fn wait(&mut self, _start_ns: u64, deadline_ns: u64) -> u64 {
        poll_until(deadline_ns, os::yield_now)
    }
}

/// `std::thread::sleep(d)`; the slack decides which of the two sleep methods it is.
pub struct RelativeSleep;

impl Waiter for RelativeSleep {
    #[inline]
    fn wait(&mut self, start_ns: u64, deadline_ns: u64) -> u64 {
        std::thread::sleep(Duration::from_nanos(deadline_ns - start_ns));
        os::monotonic_ns()
    }
}

/// One absolute `clock_nanosleep` to the deadline, resumed after signals.
pub struct AbsoluteSleep;

impl Waiter for AbsoluteSleep {
    #[inline]
    fn wait(&mut self, _start_ns: u64, deadline_ns: u64) -> u64 {
        loop {
            let wake = os::wait_until_ns(deadline_ns);
            let now = os::monotonic_ns();
            if wake == os::OsWake::Completed || now >= deadline_ns {
                return now;
            }
        }
    }
}

/// Seed 001: measure the fixed overshoot TN of a plain sleep during the
/// warm-up (the mean of the warm-up errors), then sleep `d − TN`. Seed 001
/// measured TN once, so it does not follow load changes afterwards; that is
/// what `keeptime-efficient` adds.
#[derive(Default)]
pub struct Compensated {
    sum_ns: i128,
    count: u64,
    tn_ns: u64,
}

impl Waiter for Compensated {
    #[inline]
    fn wait(&mut self, start_ns: u64, deadline_ns: u64) -> u64 {
        let d = deadline_ns - start_ns;
        if d > self.tn_ns {
            std::thread::sleep(Duration::from_nanos(d - self.tn_ns));
        }
        os::monotonic_ns()
    }

    fn warmup_sample(&mut self, _duration_ns: u64, error_ns: i64) {
        self.sum_ns += i128::from(error_ns);
        self.count += 1;
    }

    fn warmup_done(&mut self) {
        if self.count > 0 {
            let mean = self.sum_ns / i128::from(self.count);
            self.tn_ns = u64::try_from(mean.max(0)).unwrap_or(0);
        }
    }
}

/// Seed 000's fix: `Thread.Sleep(d − 1 ms)` then spin.
pub struct Hybrid1ms;

/// How much of the wait seed 000's hybrid leaves to the spin.
pub const HYBRID_SPIN_NS: u64 = 1_000_000;

impl Waiter for Hybrid1ms {
    #[inline]
    fn wait(&mut self, start_ns: u64, deadline_ns: u64) -> u64 {
        let d = deadline_ns - start_ns;
        if d > HYBRID_SPIN_NS {
            std::thread::sleep(Duration::from_nanos(d - HYBRID_SPIN_NS));
        }
        spin_until(deadline_ns)
    }
}

/// The knobs `keeptime bench` gives keeptime's exact sleepers.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeeptimeKnobs {
    /// `--tail-target`.
    pub target: TailTarget,
    /// `--idle-hint`.
    pub idle_hint: Option<keeptime::IdleHint>,
}

/// A fresh keeptime [`Sleeper`] in one mode.
pub struct Keeptime(pub Sleeper);

impl Keeptime {
    /// A new sleeper in `mode` with keeptime's own 1 ns timer slack and the
    /// default knobs (tail target 1 %, no idle hint).
    pub fn new(mode: Mode) -> Self {
        Self::with_knobs(mode, KeeptimeKnobs::default())
    }

    /// A new sleeper in `mode` with the bench's keeptime knobs; it holds the
    /// idle hint, if any, for as long as it lives.
    pub fn with_knobs(mode: Mode, knobs: KeeptimeKnobs) -> Self {
        let mut b = Sleeper::builder()
            .mode(mode)
            .timer_slack(true)
            .tail_target(knobs.target);
        if let Some(hint) = knobs.idle_hint {
            b = b.idle_hint(hint);
        }
        Keeptime(b.build())
    }
}

impl Waiter for Keeptime {
    #[inline]
    fn wait(&mut self, _start_ns: u64, deadline_ns: u64) -> u64 {
        self.0.sleep_until_ns(deadline_ns)
    }

    fn warmup_done(&mut self) {
        self.0.reset_stats();
    }

    fn sleeper_stats(&self) -> Option<SleeperStats> {
        Some(self.0.stats())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for m in Method::ALL {
            assert_eq!(m.name().parse::<Method>(), Ok(m));
            assert!(!m.description().contains('\n'));
        }
        assert_eq!("KEEPTIME".parse::<Method>(), Ok(Method::Keeptime));
        let err = "warp-drive".parse::<Method>().unwrap_err().to_string();
        assert!(err.contains("'warp-drive'") && err.contains("busy-loop"));
    }

    #[test]
    fn compensated_learns_mean_overshoot() {
        let mut c = Compensated::default();
        for e in [50_000, 60_000, 70_000] {
            c.warmup_sample(100_000, e);
        }
        c.warmup_done();
        assert_eq!(c.tn_ns, 60_000);
        let mut early = Compensated::default();
        early.warmup_sample(100_000, -5);
        early.warmup_done();
        assert_eq!(early.tn_ns, 0);
    }

    #[test]
    fn every_waiter_reaches_its_deadline() {
        let d = 20_000;
        let mut waiters: Vec<Box<dyn Waiter>> = vec![
            Box::new(BusyLoop),
            Box::new(SpinPause),
            Box::new(YieldLoop),
            Box::new(RelativeSleep),
            Box::new(AbsoluteSleep),
            Box::new(Hybrid1ms),
            Box::new(Keeptime::new(Mode::Exact)),
            Box::new(Keeptime::new(Mode::Spin)),
        ];
        for w in &mut waiters {
            let start = os::monotonic_ns();
            let woke = w.wait(start, start + d);
            assert!(woke >= start + d);
        }
    }
}
