//! Thin, documented access to the OS primitives keeptime is built from, for
//! programs (and keeptime's own benchmarks) that want to compare against them.
//!
//! On Linux the monotonic clock is `CLOCK_MONOTONIC`, the same clock as
//! [`std::time::Instant`], Python's `time.monotonic_ns`, Go's monotonic reading
//! and Java's `System.nanoTime`. On other targets it is `Instant` measured from a
//! process-wide origin.

use std::io;

pub use crate::sys::OsWake;

/// Nanoseconds on the monotonic clock (`CLOCK_MONOTONIC` on Linux).
///
/// Cost: one vDSO call, about 20–30 ns on a TSC clocksource; far more on a
/// clocksource without vDSO support (see `keeptime clocks`).
#[inline]
pub fn monotonic_ns() -> u64 {
    crate::sys::monotonic_ns()
}

/// CPU time consumed by the calling thread, in nanoseconds
/// (`CLOCK_THREAD_CPUTIME_ID`). Returns 0 where the OS has no such clock.
#[inline]
pub fn thread_cpu_ns() -> u64 {
    crate::sys::thread_cpu_ns()
}

/// CPU time consumed by the whole process, in nanoseconds
/// (`CLOCK_PROCESS_CPUTIME_ID`). Returns 0 where the OS has no such clock.
#[inline]
pub fn process_cpu_ns() -> u64 {
    crate::sys::process_cpu_ns()
}

/// One OS wait toward an absolute monotonic deadline, with no compensation and
/// no spin: `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` on Linux,
/// `std::thread::sleep` of the remaining time elsewhere.
///
/// Never returns before `target_ns` unless a signal handler ran, which it
/// reports as [`OsWake::Interrupted`]. How late it returns is the OS's timer
/// slack plus wake-up latency: measuring that is what `keeptime bench` is for.
#[inline]
pub fn wait_until_ns(target_ns: u64) -> OsWake {
    crate::sys::wait_until(target_ns)
}

/// `true` when [`wait_until_ns`] is a true absolute-deadline wait
/// (`clock_nanosleep` with `TIMER_ABSTIME`), `false` on the relative fallback.
pub const HAS_ABSOLUTE_WAIT: bool = crate::sys::HAS_ABSOLUTE_WAIT;

/// Gives up the rest of this thread's time slice (`sched_yield`).
#[inline]
pub fn yield_now() {
    crate::sys::yield_now()
}

/// The calling thread's timer slack in nanoseconds (`PR_GET_TIMERSLACK`).
///
/// The kernel may delay any timer-based wake-up of this thread by up to this
/// much so it can batch wake-ups; the default is 50 µs, which is why a plain
/// 100 µs sleep on Linux takes ~155 µs.
///
/// # Errors
/// `ErrorKind::Unsupported` off Linux, or the OS error from `prctl`.
pub fn timer_slack_ns() -> io::Result<u64> {
    crate::sys::timer_slack_ns()
}

/// Sets the calling thread's timer slack (`PR_SET_TIMERSLACK`); keeptime sets
/// 1 ns for threads it waits on unless told not to
/// ([`SleeperBuilder::timer_slack`](crate::SleeperBuilder::timer_slack)).
///
/// # Errors
/// `ErrorKind::InvalidInput` for 0 (the kernel reads 0 as "restore the
/// default"), `ErrorKind::Unsupported` off Linux, or the OS error from `prctl`.
pub fn set_timer_slack_ns(slack_ns: u64) -> io::Result<()> {
    crate::sys::set_timer_slack_ns(slack_ns)
}
