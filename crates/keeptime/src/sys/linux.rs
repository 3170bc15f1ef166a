//! Linux: CLOCK_MONOTONIC read through the vDSO, `clock_nanosleep` with
//! `TIMER_ABSTIME`, and `PR_SET_TIMERSLACK`.

use super::OsWake;
use std::io;

const NANOS_PER_SEC: u64 = 1_000_000_000;

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock ids we pass always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    // tv_sec and tv_nsec are non-negative for these clocks.
    (ts.tv_sec as u64)
        .saturating_mul(NANOS_PER_SEC)
        .saturating_add(ts.tv_nsec as u64)
}

pub(crate) fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

pub(crate) fn thread_cpu_ns() -> u64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

pub(crate) fn process_cpu_ns() -> u64 {
    read(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// One `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`: never returns before
/// `target_ns` unless a signal interrupted it.
pub(crate) fn wait_until(target_ns: u64) -> OsWake {
    let secs = (target_ns / NANOS_PER_SEC).min(libc::time_t::MAX as u64);
    let ts = libc::timespec {
        tv_sec: secs as libc::time_t,
        tv_nsec: (target_ns % NANOS_PER_SEC) as libc::c_long,
    };
    // SAFETY: `ts` is a valid timespec; with TIMER_ABSTIME the remainder pointer is unused.
    let rc = unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
    // clock_nanosleep returns the error number instead of setting errno.
    if rc == libc::EINTR {
        OsWake::Interrupted
    } else {
        OsWake::Completed
    }
}

pub(crate) fn yield_now() {
    // SAFETY: sched_yield has no preconditions.
    unsafe { libc::sched_yield() };
}

pub(crate) fn timer_slack_ns() -> io::Result<u64> {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer arguments.
    let rc = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as u64)
    }
}

pub(crate) fn set_timer_slack_ns(slack_ns: u64) -> io::Result<()> {
    if slack_ns == 0 {
        // The kernel reads 0 as "reset to the default", never as "no slack".
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "timer slack must be at least 1 ns (0 means 'restore the default' to the kernel)",
        ));
    }
    let slack = libc::c_ulong::try_from(slack_ns)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "timer slack too large"))?;
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument.
    let rc = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, slack, 0, 0, 0) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub(crate) const HAS_ABSOLUTE_WAIT: bool = true;
