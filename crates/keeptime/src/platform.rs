//! The small clock + wait interface the algorithm talks to.
//!
//! [`System`] is the real one. [`SimPlatform`](crate::sim::SimPlatform)
//! simulates time with scripted OS overshoots, so every decision keeptime makes
//! (phases, margins, estimator updates, ticker schedule) is testable without
//! real time, in keeptime's tests and in yours.

use crate::sys::OsWake;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Clock, OS wait and spin primitives, as seen by the waiting algorithm.
///
/// Times are nanoseconds on one monotonic clock. Implementations must keep
/// `os_wait_until` honest: when it returns [`OsWake::Completed`], `now_ns()`
/// must be `>= target_ns`.
pub trait Platform {
    /// Current time in nanoseconds.
    fn now_ns(&self) -> u64;
    /// Block in the OS until `target_ns` (absolute); may be woken late, never
    /// early, except by a signal, reported as [`OsWake::Interrupted`].
    fn os_wait_until(&self, target_ns: u64) -> OsWake;
    /// One iteration of a spin loop (the CPU's pause hint).
    fn relax(&self);
    /// Give the CPU to another runnable thread (`sched_yield`).
    fn yield_now(&self);
    /// Ask for one of the process-wide spin slots before spinning; `false`
    /// means as many threads are spinning as there are CPUs and the caller
    /// must not add another spinner.
    fn try_begin_spin(&self) -> bool;
    /// Give back the slot taken by a successful [`try_begin_spin`](Self::try_begin_spin).
    fn end_spin(&self);
    /// Count the calling sleeper as inside an exact sleep, process-wide, and
    /// return how many are (this one included). More than [`cpus`](Self::cpus)
    /// makes the sleep a crowd's (`spec/sleep.md`, *Crowds*). The default
    /// counts nobody else: never a crowd.
    fn enter_sleep(&self) -> usize {
        1
    }
    /// Undo one [`enter_sleep`](Self::enter_sleep).
    fn leave_sleep(&self) {}
    /// CPUs available to the process. The default: no limit (never a crowd).
    fn cpus(&self) -> usize {
        usize::MAX
    }
    /// The calling thread's CPU time in nanoseconds, if the platform can
    /// read it (`CLOCK_THREAD_CPUTIME_ID` on Linux). The sleeper reads it
    /// around one OS wait in [`COST_SAMPLE_EVERY`](crate::estimate::COST_SAMPLE_EVERY)
    /// to learn what a wait costs. The default says it cannot.
    fn thread_cpu_ns(&self) -> Option<u64> {
        None
    }
    /// Prepare the calling thread for precise waits: on Linux, set its timer
    /// slack to 1 ns once. Called before every sleep; must be cheap after the first.
    fn prepare_thread(&self);
    /// The platform time of an `Instant`, rounded so that a deadline converted
    /// with it is never earlier than the `Instant` itself.
    fn ns_from_instant(&self, instant: Instant) -> u64;
    /// The `Instant` of a platform time (for reporting).
    fn instant_from_ns(&self, ns: u64) -> Instant;
}

/// The real clock and OS of the running machine.
///
/// Clock: `CLOCK_MONOTONIC` (Linux), the clock behind [`Instant`]. OS wait:
/// `clock_nanosleep(TIMER_ABSTIME)` on Linux, `std::thread::sleep` elsewhere.
/// Spin slots: at most one pausing spinner per available CPU but one (at least
/// one) in the whole process, so a woken sleeper never queues behind pausing
/// spinners; the others follow with a yield per iteration. The count of
/// sleepers inside a sleep tells a crowd (more sleepers than CPUs), whose
/// spins are capped so it cannot snowball into everyone spinning.
#[derive(Clone, Copy, Debug, Default)]
pub struct System {
    timer_slack: bool,
}

impl System {
    /// The real platform; `timer_slack` says whether waiting threads get a 1 ns
    /// timer slack (Linux only).
    pub const fn new(timer_slack: bool) -> Self {
        System { timer_slack }
    }

    /// Whether the process's sleepers are a crowd right now: more of them
    /// inside an exact sleep than the process has CPUs, counting one more
    /// for a caller about to sleep (`spec/sleep.md`, *Crowds*). For runtimes
    /// that add steps of their own around a sleep (Python's warm return) and
    /// should not add them to a crowd.
    pub fn crowded() -> bool {
        SLEEPERS.load(Ordering::Relaxed) + 1 > available_cpus()
    }
}

/// A matching (Instant, monotonic ns) pair read once per process, the
/// nanoseconds read *after* the Instant so conversions err toward late.
fn anchor() -> (Instant, u64) {
    static ANCHOR: OnceLock<(Instant, u64)> = OnceLock::new();
    *ANCHOR.get_or_init(|| {
        let i = Instant::now();
        (i, crate::sys::monotonic_ns())
    })
}

/// CPUs the process may use (read once).
pub(crate) fn available_cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// One CPU fewer than the process may use (at least one): a thread woken from
/// its OS wait always finds a CPU that no spinner holds.
fn spin_slots() -> usize {
    available_cpus().saturating_sub(1).max(1)
}

static SPINNERS: AtomicUsize = AtomicUsize::new(0);
/// Sleepers of the process inside an exact sleep.
static SLEEPERS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SLACK_SET: Cell<bool> = const { Cell::new(false) };
}

/// Nanoseconds in a `Duration`, saturating at `u64::MAX` (584 years).
pub(crate) fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Platform for System {
    #[inline]
    fn now_ns(&self) -> u64 {
        crate::sys::monotonic_ns()
    }

    #[inline]
    fn os_wait_until(&self, target_ns: u64) -> OsWake {
        crate::sys::wait_until(target_ns)
    }

    #[inline]
    fn relax(&self) {
        std::hint::spin_loop();
    }

    #[inline]
    fn yield_now(&self) {
        crate::sys::yield_now();
    }

    fn thread_cpu_ns(&self) -> Option<u64> {
        if cfg!(target_os = "linux") {
            Some(crate::sys::thread_cpu_ns())
        } else {
            None
        }
    }

    fn try_begin_spin(&self) -> bool {
        let before = SPINNERS.fetch_add(1, Ordering::AcqRel);
        if before >= spin_slots() {
            SPINNERS.fetch_sub(1, Ordering::AcqRel);
            false
        } else {
            true
        }
    }

    fn end_spin(&self) {
        SPINNERS.fetch_sub(1, Ordering::AcqRel);
    }

    fn enter_sleep(&self) -> usize {
        SLEEPERS.fetch_add(1, Ordering::AcqRel) + 1
    }

    fn leave_sleep(&self) {
        SLEEPERS.fetch_sub(1, Ordering::AcqRel);
    }

    fn cpus(&self) -> usize {
        available_cpus()
    }

    #[inline]
    fn prepare_thread(&self) {
        if self.timer_slack && !SLACK_SET.with(Cell::get) {
            // Best effort: if the kernel refuses, waits are still correct, only
            // the learned margins are larger.
            let _ = crate::sys::set_timer_slack_ns(1);
            SLACK_SET.with(|s| s.set(true));
        }
    }

    fn ns_from_instant(&self, instant: Instant) -> u64 {
        let (base_i, base_ns) = anchor();
        match instant.checked_duration_since(base_i) {
            Some(after) => base_ns.saturating_add(duration_ns(after)),
            None => base_ns.saturating_sub(duration_ns(base_i - instant)),
        }
    }

    fn instant_from_ns(&self, ns: u64) -> Instant {
        let (base_i, base_ns) = anchor();
        if ns >= base_ns {
            let d = Duration::from_nanos(ns - base_ns);
            base_i.checked_add(d).unwrap_or(base_i)
        } else {
            let d = Duration::from_nanos(base_ns - ns);
            base_i.checked_sub(d).unwrap_or(base_i)
        }
    }
}
