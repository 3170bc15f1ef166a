//! Linux: CLOCK_MONOTONIC read through the vDSO, `clock_nanosleep` with
//! `TIMER_ABSTIME`, and `PR_SET_TIMERSLACK`.

use super::OsWake;
use std::io;

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// The one wrapper of `clock_gettime` in the crate: `id`'s reading in ns,
/// or the OS's error for a clock this kernel does not have.
#[inline]
pub(crate) fn clock_gettime_ns(id: libc::clockid_t) -> io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; an unknown id returns EINVAL.
    if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(timespec_ns(&ts))
}

/// `clock_getres` of `id` in ns.
pub(crate) fn clock_getres_ns(id: libc::clockid_t) -> io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; an unknown id returns EINVAL.
    if unsafe { libc::clock_getres(id, &mut ts) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(timespec_ns(&ts))
}

/// A timespec in ns, saturating; these clocks never report negative times.
#[inline]
fn timespec_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec.max(0) as u64)
        .saturating_mul(NANOS_PER_SEC)
        .saturating_add(ts.tv_nsec.max(0) as u64)
}

/// A clock every Linux has (MONOTONIC, the CPU-time clocks): its reading.
#[inline]
fn read(clock: libc::clockid_t) -> u64 {
    clock_gettime_ns(clock).unwrap_or(0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespec_conversion_saturates_and_clamps_negatives() {
        let ts = libc::timespec {
            tv_sec: 3,
            tv_nsec: 25,
        };
        assert_eq!(timespec_ns(&ts), 3_000_000_025);
        let ts = libc::timespec {
            tv_sec: libc::time_t::MAX,
            tv_nsec: 1,
        };
        assert_eq!(timespec_ns(&ts), u64::MAX);
    }

    #[test]
    fn an_unknown_clock_is_an_error() {
        assert!(clock_gettime_ns(12345).is_err());
        assert!(clock_gettime_ns(libc::CLOCK_MONOTONIC).is_ok());
    }
}
