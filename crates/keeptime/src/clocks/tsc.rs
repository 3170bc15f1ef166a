//! The x86 time-stamp counter read directly (`rdtsc`, `rdtscp`): its
//! frequency, read cost and step, next to the kernel's clocks.

use super::cpuid;
use super::measure::{clamp_limit, measure, ppm_apart, MISMATCH_PPM};
use super::{ClockInfo, FrequencySource, InspectOptions, TscInfo};

const TSC_ABOUT: &str =
    "the CPU's time-stamp counter read with rdtsc: ticks, not ns; not ordered with earlier instructions";
const RDTSCP_ABOUT: &str =
    "the time-stamp counter read with rdtscp: waits for earlier instructions, also returns the CPU id";

/// What the TSC section of a report found.
pub(crate) struct TscResult {
    pub(crate) clocks: Vec<ClockInfo>,
    pub(crate) stated_hz: Option<u64>,
    pub(crate) measured_hz: Option<u64>,
}

/// Measures the TSC through `rdtsc` and (when `rdtscp` is true) `rdtscp`,
/// with `monotonic_raw_ns` as the reference for the frequency.
pub(crate) fn inspect(
    opts: &InspectOptions,
    rdtscp: bool,
    monotonic_raw_ns: Option<fn() -> u64>,
) -> TscResult {
    if let Some(reason) = rdtsc_disabled() {
        return TscResult {
            clocks: vec![
                ClockInfo::unavailable("TSC", TSC_ABOUT, None, reason.clone()),
                ClockInfo::unavailable("RDTSCP", RDTSCP_ABOUT, None, reason),
            ],
            stated_hz: None,
            measured_hz: None,
        };
    }
    let stated = cpuid::stated_tsc_hz();
    let measured = match monotonic_raw_ns {
        Some(raw) if !opts.tsc_calibration.is_zero() => calibrate(raw, rdtsc, || {
            std::thread::sleep(clamp_limit(opts.tsc_calibration))
        }),
        _ => None,
    };
    let frequency = choose_frequency(stated, measured);

    let mut clocks = vec![measure_counter("TSC", TSC_ABOUT, rdtsc, opts, frequency)];
    clocks.push(if rdtscp {
        measure_counter("RDTSCP", RDTSCP_ABOUT, rdtscp_read, opts, frequency)
    } else {
        ClockInfo::unavailable(
            "RDTSCP",
            RDTSCP_ABOUT,
            None,
            "the CPU (or the kernel, in /proc/cpuinfo) does not offer rdtscp",
        )
    });
    TscResult {
        clocks,
        stated_hz: stated.map(|(hz, _)| hz),
        measured_hz: measured,
    }
}

/// The stated frequency when it agrees with the measured one (or nothing was
/// measured); the measured one when they disagree, since that is the rate at
/// which the TSC actually advances against the kernel's clock.
pub(crate) fn choose_frequency(
    stated: Option<(u64, FrequencySource)>,
    measured: Option<u64>,
) -> Option<(u64, FrequencySource)> {
    let measured = measured.map(|hz| (hz, FrequencySource::MeasuredAgainstMonotonicRaw));
    match (stated, measured) {
        (Some(s), Some(m)) if ppm_apart(s.0, m.0) > MISMATCH_PPM => Some(m),
        (Some(s), _) => Some(s),
        (None, m) => m,
    }
}

fn measure_counter(
    name: &str,
    about: &str,
    read: fn() -> u64,
    opts: &InspectOptions,
    frequency: Option<(u64, FrequencySource)>,
) -> ClockInfo {
    let m = measure(read, opts);
    let hz = frequency.map(|(hz, _)| hz);
    ClockInfo {
        name: name.to_string(),
        description: about.to_string(),
        id: None,
        resolution_ns: None,
        granularity_ns: m
            .steps
            .min_step
            .zip(hz)
            .and_then(|(ticks, hz)| ticks_to_ns_ceil(ticks, hz)),
        granularity_ticks: m.steps.min_step,
        repeat_fraction: m.steps.repeat_fraction(),
        samples: m.steps.pairs,
        read_cost_ns: m.read_cost_ns,
        monotonic_violations: m.steps.violations,
        frequency_hz: hz,
        frequency_source: frequency.map(|(_, source)| source),
        available: true,
        error: None,
    }
}

/// `ticks` of a clock running at `hz`, in ns, rounded up (so a real step is
/// never reported as 0 ns).
pub(crate) fn ticks_to_ns_ceil(ticks: u64, hz: u64) -> Option<u64> {
    if hz == 0 {
        return None;
    }
    let ns = (u128::from(ticks) * 1_000_000_000).div_ceil(u128::from(hz));
    u64::try_from(ns).ok()
}

/// Counts TSC ticks against `reference_ns` across `wait`. Each end pairs a
/// TSC read with the midpoint of the tightest of a few bracketing reference
/// reads, so a preemption at either end costs accuracy only if it hits every
/// attempt.
pub(crate) fn calibrate(
    mut reference_ns: impl FnMut() -> u64,
    mut ticks: impl FnMut() -> u64,
    wait: impl FnOnce(),
) -> Option<u64> {
    let mut pair = || {
        (0..5)
            .map(|_| {
                let r0 = reference_ns();
                let t = ticks();
                let r1 = reference_ns();
                (r1.saturating_sub(r0), t, r0 / 2 + r1 / 2)
            })
            .min_by_key(|&(window, _, _)| window)
            .map(|(_, t, r)| (t, r))
    };
    let (t0, r0) = pair()?;
    wait();
    let (t1, r1) = pair()?;
    let elapsed_ns = r1.checked_sub(r0).filter(|&ns| ns > 0)?;
    let elapsed_ticks = t1.checked_sub(t0)?;
    u64::try_from(u128::from(elapsed_ticks) * 1_000_000_000 / u128::from(elapsed_ns)).ok()
}

/// Why `rdtsc` would fault for this process (`PR_SET_TSC`), if it would.
fn rdtsc_disabled() -> Option<String> {
    let mut mode: libc::c_int = 0;
    // SAFETY: PR_GET_TSC writes one int through the pointer, which is valid.
    let rc = unsafe { libc::prctl(libc::PR_GET_TSC, &mut mode as *mut libc::c_int) };
    (rc == 0 && mode == libc::PR_TSC_SIGSEGV)
        .then(|| "rdtsc is disabled for this process (prctl PR_SET_TSC)".to_string())
}

fn rdtsc() -> u64 {
    // SAFETY: rdtsc exists on every x86_64 CPU and rdtsc_disabled() has
    // checked that the kernel doesn't make it fault for this process.
    unsafe { core::arch::x86_64::_rdtsc() }
}

fn rdtscp_read() -> u64 {
    let mut cpu = 0u32;
    // SAFETY: only called after /proc/cpuinfo or CPUID confirmed rdtscp; the
    // pointer is to a local.
    unsafe { core::arch::x86_64::__rdtscp(&mut cpu) }
}

/// Fills the frequency fields of `info` from a TSC section's result.
pub(crate) fn record(info: &mut TscInfo, result: &TscResult) {
    info.reported_frequency_hz = result.stated_hz;
    info.measured_frequency_hz = result.measured_hz;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn calibrate_recovers_a_simulated_rate() {
        // One simulated timeline: every read takes 10 ns; the counter runs at
        // 2.7 ticks per ns; the wait takes 20 ms.
        let now = Cell::new(1_000_000u64);
        let hz = calibrate(
            || {
                now.set(now.get() + 10);
                now.get()
            },
            || {
                now.set(now.get() + 10);
                now.get() * 27 / 10
            },
            || now.set(now.get() + 20_000_000),
        );
        assert_eq!(hz, Some(2_700_000_000));
    }

    #[test]
    fn calibrate_refuses_a_frozen_reference() {
        assert_eq!(calibrate(|| 5, || 7, || {}), None);
    }

    #[test]
    fn frequency_choice() {
        let stated = Some((2_700_000_000, FrequencySource::CpuidLeaf15));
        // Agreeing within 1000 ppm: the stated one.
        assert_eq!(choose_frequency(stated, Some(2_700_100_000)), stated);
        // Disagreeing: the measured one.
        assert_eq!(
            choose_frequency(stated, Some(2_600_000_000)),
            Some((2_600_000_000, FrequencySource::MeasuredAgainstMonotonicRaw))
        );
        assert_eq!(choose_frequency(stated, None), stated);
        assert_eq!(
            choose_frequency(None, Some(3)),
            Some((3, FrequencySource::MeasuredAgainstMonotonicRaw))
        );
        assert_eq!(choose_frequency(None, None), None);
    }

    #[test]
    fn ticks_convert_to_ns_rounding_up() {
        assert_eq!(ticks_to_ns_ceil(27, 2_700_000_000), Some(10));
        assert_eq!(ticks_to_ns_ceil(1, 2_700_000_000), Some(1));
        assert_eq!(ticks_to_ns_ceil(3, 1_000_000_000), Some(3));
        assert_eq!(ticks_to_ns_ceil(5, 0), None);
    }
}
