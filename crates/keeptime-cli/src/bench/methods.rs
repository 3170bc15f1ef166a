//! Every way of waiting that `keeptime bench` compares: one table,
//! [`METHODS`], gives each its name, family, timer slack, description and
//! constructor.
//!
//! A method waits until an absolute deadline on `CLOCK_MONOTONIC`; the
//! caller's first clock reading after the call returns, minus the deadline,
//! is the error of the wait. The deadline is always `start + d` where
//! `start` was read just before the call, so every method gets the same
//! sleep-style request ("wait d from now"). A method whose wait ends on a
//! clock reading of its own (a spin, keeptime) returns that reading, so the
//! bench can show how long the return took.
//!
//! Methods only wait; they never allocate, print or record anything. The
//! runner keeps all bookkeeping outside the timed path.

use super::result::Family;
use keeptime::{os, Mode, Sleeper, SleeperStats, TailTarget};
use std::fmt;
use std::hint;
use std::str::FromStr;
use std::time::Duration;

/// A waiting method, in the order the bench runs and prints them; what each
/// is lives in its [`METHODS`] row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// Reads the clock in a tight loop.
    BusyLoop,
    /// The clock loop with the CPU's pause hint.
    SpinPause,
    /// `sched_yield` until the deadline.
    YieldLoop,
    /// `std::thread::sleep` with the thread's default slack.
    SleepDefaultSlack,
    /// `std::thread::sleep` with timer slack 1 ns.
    SleepSlack1ns,
    /// One absolute `clock_nanosleep`, slack 1 ns.
    ClockNanosleepAbs,
    /// The compensated sleep (learned mean overshoot subtracted).
    Compensated,
    /// The 1 ms sleep-then-spin hybrid.
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

/// One method: everything the bench, its output and its result document
/// know about it.
pub struct MethodSpec {
    /// Which method.
    pub method: Method,
    /// The name on the command line and in results.
    pub name: &'static str,
    /// What kind of wait it is.
    pub family: Family,
    /// The timer slack it runs with.
    pub slack: Slack,
    /// Whether it may return before its deadline by design.
    pub may_return_early: bool,
    /// One line: what it does.
    pub description: &'static str,
    /// A fresh waiter for one cell (or one crowd thread), with the bench's
    /// keeptime knobs where the method takes them.
    pub waiter: fn(KeeptimeKnobs) -> Box<dyn Waiter>,
}

/// Every method, in bench order.
pub const METHODS: [MethodSpec; 11] = [
    MethodSpec {
        method: Method::BusyLoop,
        name: "busy-loop",
        family: Family::BusyLoop,
        slack: Slack::OneNs,
        may_return_early: false,
        description: "read the clock in a tight loop until the deadline; a whole core",
        waiter: |_| Box::new(BusyLoop),
    },
    MethodSpec {
        method: Method::SpinPause,
        name: "spin-pause",
        family: Family::SpinWithPause,
        slack: Slack::OneNs,
        may_return_early: false,
        description: "spin on the clock with the CPU's pause hint: the pure-spin accuracy baseline",
        waiter: |_| Box::new(SpinPause),
    },
    MethodSpec {
        method: Method::YieldLoop,
        name: "yield-loop",
        family: Family::YieldLoop,
        slack: Slack::OneNs,
        may_return_early: false,
        description: "sched_yield until the deadline: spins when nothing else wants the CPU",
        waiter: |_| Box::new(YieldLoop),
    },
    MethodSpec {
        method: Method::SleepDefaultSlack,
        name: "sleep-default-slack",
        family: Family::OsSleep,
        slack: Slack::Default,
        may_return_early: false,
        description: "std::thread::sleep(d), a relative nanosleep with the default timer slack: the plain OS sleep",
        waiter: |_| Box::new(RelativeSleep),
    },
    MethodSpec {
        method: Method::SleepSlack1ns,
        name: "sleep-slack-1ns",
        family: Family::OsSleep,
        slack: Slack::OneNs,
        may_return_early: false,
        description: "std::thread::sleep(d) with timer slack 1 ns: Linux's counterpart of Windows' timeBeginPeriod(1)",
        waiter: |_| Box::new(RelativeSleep),
    },
    MethodSpec {
        method: Method::ClockNanosleepAbs,
        name: "clock-nanosleep-abs",
        family: Family::OsSleep,
        slack: Slack::OneNs,
        may_return_early: false,
        description: "one clock_nanosleep(TIMER_ABSTIME) to the deadline, slack 1 ns: the OS half of keeptime, alone",
        waiter: |_| Box::new(AbsoluteSleep),
    },
    MethodSpec {
        method: Method::Compensated,
        name: "compensated",
        family: Family::CompensatedSleep,
        slack: Slack::Default,
        may_return_early: true,
        description: "sleep d - TN, TN the mean overshoot of the warm-up sleeps, default slack; may return early",
        waiter: |_| Box::<Compensated>::default(),
    },
    MethodSpec {
        method: Method::Hybrid1ms,
        name: "hybrid-1ms",
        family: Family::SleepThenSpin,
        slack: Slack::OneNs,
        may_return_early: false,
        description: "std::thread::sleep(d - 1 ms) then spin with pause, slack 1 ns; d <= 1 ms is a pure spin",
        waiter: |_| Box::new(Hybrid1ms),
    },
    MethodSpec {
        method: Method::Keeptime,
        name: "keeptime",
        family: Family::Keeptime,
        slack: Slack::OneNs,
        may_return_early: false,
        description: "keeptime::Sleeper, Mode::Exact: the cheapest plan of OS waits (learned wake-up model) meeting the tail target, then spin; never early",
        waiter: |knobs| Box::new(Keeptime::with_knobs(Mode::Exact, knobs)),
    },
    MethodSpec {
        method: Method::KeeptimeEfficient,
        name: "keeptime-efficient",
        family: Family::Keeptime,
        slack: Slack::OneNs,
        may_return_early: true,
        description: "keeptime::Sleeper, Mode::Efficient: one OS wait shortened by the learned median overshoot; may return early",
        waiter: |_| Box::new(Keeptime::new(Mode::Efficient)),
    },
    MethodSpec {
        method: Method::KeeptimeSpin,
        name: "keeptime-spin",
        family: Family::Keeptime,
        slack: Slack::OneNs,
        may_return_early: false,
        description: "keeptime::Sleeper, Mode::Spin: pure spin with pause, yielding after 50 µs only while the deadline is over 20 µs away",
        waiter: |_| Box::new(Keeptime::new(Mode::Spin)),
    },
];

impl Method {
    /// All methods in bench order (the order of [`METHODS`]).
    pub const ALL: [Method; METHODS.len()] = {
        let mut all = [Method::BusyLoop; METHODS.len()];
        let mut i = 0;
        while i < METHODS.len() {
            all[i] = METHODS[i].method;
            i += 1;
        }
        all
    };

    /// The method's row of [`METHODS`].
    pub fn spec(self) -> &'static MethodSpec {
        METHODS
            .iter()
            .find(|s| s.method == self)
            .expect("every method has a row in METHODS")
    }

    /// The method's name on the command line and in results.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// What kind of wait it is.
    pub fn family(self) -> Family {
        self.spec().family
    }

    /// One line: what the method does.
    pub fn description(self) -> &'static str {
        self.spec().description
    }

    /// The timer slack this method runs with.
    pub fn slack(self) -> Slack {
        self.spec().slack
    }

    /// Whether the method is allowed to return before its deadline by design.
    pub fn may_return_early(self) -> bool {
        self.spec().may_return_early
    }

    /// Whether the method learns from its own waits, so that its first
    /// waits cost more (or land worse) than its later ones: keeptime's exact
    /// and efficient sleepers (the wake-up model) and the compensated sleep
    /// (the overshoot it subtracts). Such methods get a longer warm-up
    /// ([`default_warmup`](super::plan::default_warmup)).
    pub fn learns(self) -> bool {
        matches!(
            self,
            Method::Keeptime | Method::KeeptimeEfficient | Method::Compensated
        )
    }

    /// A fresh waiter for one cell or crowd thread.
    pub fn waiter(self, knobs: KeeptimeKnobs) -> Box<dyn Waiter> {
        (self.spec().waiter)(knobs)
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
        let names: Vec<&str> = METHODS.iter().map(|m| m.name).collect();
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
        METHODS
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(s.trim()))
            .map(|m| m.method)
            .ok_or_else(|| UnknownMethod(s.to_owned()))
    }
}

/// A method ready to wait: whatever state it keeps between waits (a learned
/// overshoot, a `Sleeper`) lives here.
pub trait Waiter {
    /// Waits until `deadline_ns`, which is `start_ns + duration_ns`. Returns
    /// the method's own last `CLOCK_MONOTONIC` reading when its wait ends on
    /// one (a spin's exit, keeptime's returned reading), `None` when it reads
    /// no clock after waiting (a plain OS sleep): the caller reads the clock
    /// itself either way.
    fn wait(&mut self, start_ns: u64, deadline_ns: u64) -> Option<u64>;

    /// Called with every warm-up sample's (duration, error) before measuring.
    fn warmup_sample(&mut self, _duration_ns: u64, _error_ns: i64) {}

    /// Called once after the warm-up, before the first measured sample.
    fn warmup_done(&mut self) {}

    /// A keeptime exact sleeper's own stats since the warm-up ended.
    fn sleeper_stats(&self) -> Option<SleeperStats> {
        None
    }
}

/// The busy loop: nothing but clock reads.
pub struct BusyLoop;

impl Waiter for BusyLoop {
    #[inline]
    fn wait(&mut self, _start_ns: u64, deadline_ns: u64) -> Option<u64> {
        Some(poll_until(deadline_ns, || {}))
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

/// The pure spin: the clock loop with the pause hint.
pub struct SpinPause;

impl Waiter for SpinPause {
    #[inline]
    fn wait(&mut self, _start_ns: u64, deadline_ns: u64) -> Option<u64> {
        Some(spin_until(deadline_ns))
    }
}

/// `sched_yield` in a loop.
pub struct YieldLoop;

impl Waiter for YieldLoop {
    #[inline]
    fn wait(&mut self, _start_ns: u64, deadline_ns: u64) -> Option<u64> {
        Some(poll_until(deadline_ns, os::yield_now))
    }
}

/// `std::thread::sleep(d)`; the slack decides which of the two sleep methods it is.
pub struct RelativeSleep;

impl Waiter for RelativeSleep {
    #[inline]
    fn wait(&mut self, start_ns: u64, deadline_ns: u64) -> Option<u64> {
        std::thread::sleep(Duration::from_nanos(deadline_ns - start_ns));
        None
    }
}

/// One absolute `clock_nanosleep` to the deadline, resumed after signals.
pub struct AbsoluteSleep;

impl Waiter for AbsoluteSleep {
    #[inline]
    fn wait(&mut self, _start_ns: u64, deadline_ns: u64) -> Option<u64> {
        while os::wait_until_ns(deadline_ns) != os::OsWake::Completed {
            // Interrupted by a signal: resume unless the deadline has passed.
            if os::monotonic_ns() >= deadline_ns {
                break;
            }
        }
        None
    }
}

/// The compensated sleep: measure the fixed overshoot TN of a plain sleep
/// during the warm-up (the mean of the warm-up errors), then sleep `d − TN`.
/// TN is measured once, so it does not follow load changes afterwards; that
/// is what `keeptime-efficient` adds.
#[derive(Default)]
pub struct Compensated {
    sum_ns: i128,
    count: u64,
    tn_ns: u64,
}

impl Waiter for Compensated {
    #[inline]
    fn wait(&mut self, start_ns: u64, deadline_ns: u64) -> Option<u64> {
        let d = deadline_ns - start_ns;
        if d > self.tn_ns {
            std::thread::sleep(Duration::from_nanos(d - self.tn_ns));
        }
        None
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

/// The 1 ms sleep-then-spin hybrid: `std::thread::sleep(d − 1 ms)`, then spin.
pub struct Hybrid1ms;

/// How much of the wait the 1 ms hybrid leaves to the spin.
pub const HYBRID_SPIN_NS: u64 = 1_000_000;

impl Waiter for Hybrid1ms {
    #[inline]
    fn wait(&mut self, start_ns: u64, deadline_ns: u64) -> Option<u64> {
        let d = deadline_ns - start_ns;
        if d > HYBRID_SPIN_NS {
            std::thread::sleep(Duration::from_nanos(d - HYBRID_SPIN_NS));
        }
        Some(spin_until(deadline_ns))
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
pub struct Keeptime {
    sleeper: Sleeper,
    mode: Mode,
}

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
        Keeptime {
            sleeper: b.build(),
            mode,
        }
    }
}

impl Waiter for Keeptime {
    #[inline]
    fn wait(&mut self, _start_ns: u64, deadline_ns: u64) -> Option<u64> {
        Some(self.sleeper.sleep_until_ns(deadline_ns))
    }

    fn warmup_done(&mut self) {
        self.sleeper.reset_stats();
    }

    fn sleeper_stats(&self) -> Option<SleeperStats> {
        (self.mode == Mode::Exact).then(|| self.sleeper.stats())
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
    fn the_table_has_each_method_once_under_a_unique_name() {
        for (i, row) in METHODS.iter().enumerate() {
            assert_eq!(Method::ALL[i], row.method);
            assert_eq!(row.method.spec().name, row.name);
            let same_name = METHODS.iter().filter(|r| r.name == row.name).count();
            let same_method = METHODS.iter().filter(|r| r.method == row.method).count();
            assert_eq!((same_name, same_method), (1, 1), "{}", row.name);
        }
        assert_eq!(Method::Hybrid1ms.family(), Family::SleepThenSpin);
        assert_eq!(Method::SleepSlack1ns.slack(), Slack::OneNs);
        assert!(Method::Compensated.may_return_early());
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
        for m in Method::ALL.into_iter().filter(|m| !m.may_return_early()) {
            let mut w = m.waiter(KeeptimeKnobs::default());
            let start = os::monotonic_ns();
            let own = w.wait(start, start + d);
            let caller = os::monotonic_ns();
            assert!(caller >= start + d, "{m}");
            if let Some(own) = own {
                assert!(own >= start + d && own <= caller, "{m}");
            }
        }
    }
}
