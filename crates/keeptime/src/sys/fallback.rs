//! Other targets: the clock is `std::time::Instant` measured from a process-wide
//! origin, and the OS wait is `std::thread::sleep` for the remaining time (a
//! relative sleep, so a late wake-up is possible, an early one is not: std's
//! sleep never returns before the requested duration). Timer slack is a Linux
//! notion and is reported as unsupported.

use super::OsWake;
use std::io;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

pub(crate) fn monotonic_ns() -> u64 {
    u64::try_from(origin().elapsed().as_nanos()).unwrap_or(u64::MAX)
}

pub(crate) fn thread_cpu_ns() -> u64 {
    0
}

pub(crate) fn process_cpu_ns() -> u64 {
    0
}

pub(crate) fn wait_until(target_ns: u64) -> OsWake {
    let now = monotonic_ns();
    if target_ns > now {
        std::thread::sleep(Duration::from_nanos(target_ns - now));
    }
    OsWake::Completed
}

pub(crate) fn yield_now() {
    std::thread::yield_now();
}

pub(crate) fn timer_slack_ns() -> io::Result<u64> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "timer slack exists only on Linux",
    ))
}

pub(crate) fn set_timer_slack_ns(_slack_ns: u64) -> io::Result<()> {
    timer_slack_ns().map(|_| ())
}

pub(crate) const HAS_ABSOLUTE_WAIT: bool = false;
