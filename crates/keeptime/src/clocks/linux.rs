//! Linux: every `clock_gettime` clock worth knowing, the TSC on x86_64, and
//! the machine description from [`machine`](super::machine).

use super::machine;
use super::measure::measure;
use super::{ClockInfo, InspectOptions, MachineInfo};

/// The clocks measured, in report order: name, id, what it counts.
const CLOCKS: &[(&str, libc::clockid_t, &str)] = &[
    (
        "MONOTONIC",
        libc::CLOCK_MONOTONIC,
        "time since boot, not counting suspend; slewed by NTP; the clock of std::time::Instant",
    ),
    (
        "MONOTONIC_RAW",
        libc::CLOCK_MONOTONIC_RAW,
        "like MONOTONIC but never slewed by NTP: the hardware counter's own rate",
    ),
    (
        "MONOTONIC_COARSE",
        libc::CLOCK_MONOTONIC_COARSE,
        "MONOTONIC as of the last kernel tick: cheap, but steps once per tick",
    ),
    (
        "REALTIME",
        libc::CLOCK_REALTIME,
        "wall-clock time (UTC since 1970); jumps when the time is set",
    ),
    (
        "REALTIME_COARSE",
        libc::CLOCK_REALTIME_COARSE,
        "REALTIME as of the last kernel tick",
    ),
    (
        "BOOTTIME",
        libc::CLOCK_BOOTTIME,
        "MONOTONIC plus time spent suspended",
    ),
    (
        "TAI",
        libc::CLOCK_TAI,
        "REALTIME on International Atomic Time: no leap seconds, once NTP sets the offset",
    ),
    (
        "PROCESS_CPUTIME_ID",
        libc::CLOCK_PROCESS_CPUTIME_ID,
        "CPU time used by all threads of this process; a system call",
    ),
    (
        "THREAD_CPUTIME_ID",
        libc::CLOCK_THREAD_CPUTIME_ID,
        "CPU time used by the calling thread; a system call",
    ),
];

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// Measures every clock and describes the machine.
pub(crate) fn inspect(opts: &InspectOptions) -> (Vec<ClockInfo>, MachineInfo) {
    let mut info = machine::gather();
    let mut clocks: Vec<ClockInfo> = CLOCKS
        .iter()
        .map(|&(name, id, about)| measure_clock(name, id, about, opts))
        .collect();

    let resolution = |name: &str| {
        clocks
            .iter()
            .find(|c| c.name == name)
            .and_then(|c| c.resolution_ns)
    };
    info.tick_hz = resolution("MONOTONIC_COARSE").and_then(machine::tick_hz_from_resolution);
    if info.high_resolution_timers.is_none() {
        // hrtimer_resolution is 1 ns exactly when high-resolution mode is on;
        // otherwise it is the tick.
        if let Some(res) = resolution("MONOTONIC") {
            info.high_resolution_timers = Some(res == 1);
            info.high_resolution_timers_source = Some("clock_getres(CLOCK_MONOTONIC)".to_string());
        }
    }
    info.tai_offset_s = tai_offset_s();

    let tsc = tsc_clocks(opts, &mut info, &clocks);
    clocks.extend(tsc);
    (clocks, info)
}

/// The TSC through `rdtsc` and `rdtscp`, calibrated against MONOTONIC_RAW
/// when that clock works; its frequencies go into `info.tsc`.
#[cfg(target_arch = "x86_64")]
fn tsc_clocks(
    opts: &InspectOptions,
    info: &mut MachineInfo,
    posix: &[ClockInfo],
) -> Vec<ClockInfo> {
    let rdtscp = match &info.tsc {
        Some(tsc) => tsc.rdtscp,
        None => super::cpuid::has_rdtscp(),
    };
    let raw_available = posix
        .iter()
        .any(|c| c.name == "MONOTONIC_RAW" && c.available);
    let reference = raw_available.then_some(monotonic_raw_ns as fn() -> u64);
    let result = super::tsc::inspect(opts, rdtscp, reference);
    if let Some(tsc) = info.tsc.as_mut() {
        super::tsc::record(tsc, &result);
    }
    result.clocks
}

/// No TSC off x86_64.
#[cfg(not(target_arch = "x86_64"))]
fn tsc_clocks(_: &InspectOptions, _: &mut MachineInfo, _: &[ClockInfo]) -> Vec<ClockInfo> {
    Vec::new()
}

fn measure_clock(name: &str, id: libc::clockid_t, about: &str, opts: &InspectOptions) -> ClockInfo {
    let resolution = match getres(id) {
        Ok(ns) => ns,
        Err(e) => {
            return ClockInfo::unavailable(
                name,
                about,
                Some(id),
                format!("clock_getres(CLOCK_{name}): {e}"),
            )
        }
    };
    if let Err(e) = gettime(id) {
        return ClockInfo::unavailable(
            name,
            about,
            Some(id),
            format!("clock_gettime(CLOCK_{name}): {e}"),
        );
    }
    let m = measure(|| gettime(id).unwrap_or(0), opts);
    ClockInfo::measured(name, about, Some(id), Some(resolution), &m)
}

/// CLOCK_TAI − CLOCK_REALTIME in whole seconds.
fn tai_offset_s() -> Option<i64> {
    let realtime = gettime(libc::CLOCK_REALTIME).ok()?;
    let tai = gettime(libc::CLOCK_TAI).ok()?;
    let diff = i128::from(tai) - i128::from(realtime);
    // Round to the nearest second: the two reads are nanoseconds apart.
    let secs = (diff + i128::from(NANOS_PER_SEC / 2)).div_euclid(i128::from(NANOS_PER_SEC));
    i64::try_from(secs).ok()
}

#[cfg(target_arch = "x86_64")]
fn monotonic_raw_ns() -> u64 {
    gettime(libc::CLOCK_MONOTONIC_RAW).unwrap_or(0)
}

use crate::sys::{clock_getres_ns as getres, clock_gettime_ns as gettime};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_clock_is_unavailable_with_a_reason() {
        let info = measure_clock("BOGUS", 12345, "nothing", &InspectOptions::default());
        assert!(!info.available);
        assert_eq!(info.id, Some(12345));
        let error = info.error.unwrap();
        assert!(error.starts_with("clock_getres(CLOCK_BOGUS): "), "{error}");
    }
}
