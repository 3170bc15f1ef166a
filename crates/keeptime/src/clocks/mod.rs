//! Clock and timer inspection: what the machine's clocks and timers really do.
//!
//! [`inspect`] reads every clock back to back and describes the machine, in
//! one call of well under a second:
//!
//! ```
//! let report = keeptime::clocks::inspect();
//! let mono = report.clock("MONOTONIC").expect("always measured");
//! println!("CLOCK_MONOTONIC: {:.1} ns per read", mono.read_cost_ns);
//! for finding in &report.findings {
//!     println!("{finding}");
//! }
//! ```
//!
//! Per clock ([`ClockInfo`]): `clock_getres`, the measured granularity
//! (smallest non-zero step between successive reads), how often successive
//! reads repeat, the read cost (median over batches of ns per call) and how
//! often it went backwards. On x86_64 the TSC is measured too, through
//! `rdtsc` and `rdtscp`, with its frequency (as CPUID states it, or counted
//! against `CLOCK_MONOTONIC_RAW`; [`FrequencySource`] says which).
//!
//! The machine ([`MachineInfo`]): kernel, CPU, current and available
//! clocksource, TSC flags, timer slack, tick rate, high-resolution timers,
//! idle states and their exit latency, cpufreq governor, virtualisation and
//! steal, the kernel's preemption model, the TAI offset. Anything that can't
//! be read is `None` (or empty), never a panic. Off Linux the report holds
//! only MONOTONIC (`std::time::Instant`) and the OS and architecture.
//!
//! [`Finding`]s say what that means in plain words. Each fires only on
//! something read or measured; their `code`s are stable:
//!
//! | code | severity | when |
//! |---|---|---|
//! | `high_resolution_timers_inactive` | warning | `/proc/timer_list` or `clock_getres` says hrtimers are off |
//! | `clocksource_syscall` | warning | clocksource is hpet, acpi_pm, jiffies or pit |
//! | `clock_read_slow` | warning | otherwise, a MONOTONIC read costs over 150 ns |
//! | `tsc_not_invariant` | warning | the TSC lacks `constant_tsc` or `nonstop_tsc` |
//! | `non_monotonic_reads` | warning | a clock that must not go back did (one per clock) |
//! | `virtualized` | warning | a hypervisor was detected |
//! | `deep_idle_states` | warning | an enabled idle state takes over 50 µs to exit |
//! | `timer_slack_default` | info | this thread's timer slack is the default 50 µs |
//! | `timer_slack_large` | info | it is some other value over 1 µs |
//! | `coarse_clocks` | info | MONOTONIC_COARSE's resolution is 1 µs or more |
//! | `tsc_frequency_mismatch` | info | CPUID's and the measured TSC frequency differ by over 1000 ppm |
//! | `cpufreq_powersave` | info | the cpufreq governor is powersave |
//! | `kernel_not_preemptible` | info | no PREEMPT build, or PREEMPT_DYNAMIC booted as none/voluntary |
//! | `kernel_preempt_rt` | info | a PREEMPT_RT kernel |
//! | `few_cpus` | info (warning for 1) | two or fewer CPUs online |
//! | `tai_offset_unset` | info | CLOCK_TAI equals CLOCK_REALTIME |
//! | `idle_hint_available` | info (last) | a cpuidle driver with exit latency: the idle-latency hint pays |
//! | `idle_hint_little_effect` | info (last) | cpuidle driver `none`: the hint changes little |
//!
//! The rules, their inputs and their order are in `spec/clocks.md`, with
//! vectors (`spec/vectors/clocks.json`) every runtime replays.
//!
//! Inspection spins on the calling thread (about 5–150 ms in all, bounded by
//! [`InspectOptions::time_limit_per_clock`] per clock) and sleeps once for
//! the TSC calibration. It reports the calling thread's timer slack, so call
//! it before changing that if the default is what you want to see.

mod findings;
mod idle;
mod measure;
mod report;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod machine;
#[cfg(target_os = "linux")]
use linux as platform;

#[cfg(not(target_os = "linux"))]
mod fallback;
#[cfg(not(target_os = "linux"))]
use fallback as platform;

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod cpuid;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod tsc;

#[cfg(target_os = "linux")]
pub(crate) use machine::fingerprint as machine_fingerprint;

pub use findings::findings;
pub use idle::{DeviceAccess, IdleLatency, HINTABLE_DRIVERS};
pub use measure::MIN_STEPS;
pub use report::{
    ClockInfo, ClockReport, Finding, FrequencySource, IdleState, InspectOptions, MachineInfo,
    Preemption, Severity, TscInfo, Virtualization,
};

/// Inspects every clock and the machine with [`InspectOptions::default`].
///
/// Takes well under a second (typically 50–150 ms, most of it reading the
/// coarse clocks until they step and calibrating the TSC). Never panics:
/// what can't be read is reported as unavailable.
pub fn inspect() -> ClockReport {
    inspect_with(&InspectOptions::default())
}

/// Inspects every clock and the machine with the given options; smaller
/// options are faster and noisier.
pub fn inspect_with(opts: &InspectOptions) -> ClockReport {
    let (clocks, machine) = platform::inspect(opts);
    let idle_latency = IdleLatency::read();
    let findings = findings::findings(&clocks, &machine, Some(&idle_latency));
    ClockReport {
        clocks,
        machine,
        idle_latency: Some(idle_latency),
        findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn quick() -> InspectOptions {
        InspectOptions {
            reads_per_batch: 100,
            batches: 3,
            granularity_reads: 1000,
            time_limit_per_clock: Duration::from_millis(30),
            tsc_calibration: Duration::from_millis(5),
        }
    }

    #[test]
    fn inspect_measures_the_monotonic_clock() {
        let report = inspect_with(&quick());
        let mono = report
            .clock("MONOTONIC")
            .expect("MONOTONIC is always measured");
        assert!(mono.available, "{:?}", mono.error);
        assert!(mono.read_cost_ns > 0.0);
        assert_eq!(mono.monotonic_violations, 0);
        assert!(mono.samples > 0);
        assert!((0.0..=1.0).contains(&mono.repeat_fraction));
        assert_eq!(report.machine.os, std::env::consts::OS);
        assert!(report.clock("monotonic").is_some());
        assert!(report.clock("NO_SUCH_CLOCK").is_none());
    }

    #[test]
    fn every_clock_is_available_or_says_why() {
        let report = inspect_with(&quick());
        for c in &report.clocks {
            assert_eq!(c.available, c.error.is_none(), "{c:?}");
            assert!(c.read_cost_ns.is_finite() && c.read_cost_ns >= 0.0, "{c:?}");
            assert!((0.0..=1.0).contains(&c.repeat_fraction), "{c:?}");
        }
        for f in &report.findings {
            assert!(!f.code.is_empty() && !f.message.is_empty());
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn linux_reports_the_posix_clocks_in_order() {
        let report = inspect_with(&quick());
        let names: Vec<&str> = report.clocks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names[..9],
            [
                "MONOTONIC",
                "MONOTONIC_RAW",
                "MONOTONIC_COARSE",
                "REALTIME",
                "REALTIME_COARSE",
                "BOOTTIME",
                "TAI",
                "PROCESS_CPUTIME_ID",
                "THREAD_CPUTIME_ID"
            ]
        );
        let mono = report.clock("MONOTONIC").unwrap();
        assert_eq!(mono.id, Some(libc::CLOCK_MONOTONIC));
        assert!(mono.resolution_ns.is_some());
        assert!(report.machine.kernel_release.is_some());
        if cfg!(target_arch = "x86_64") {
            assert_eq!(names[9..], ["TSC", "RDTSCP"]);
            assert!(report.clock("TSC").unwrap().available);
        }
    }

    #[test]
    fn tiny_options_do_not_hang_or_panic() {
        let opts = InspectOptions {
            reads_per_batch: 0,
            batches: 0,
            granularity_reads: 0,
            time_limit_per_clock: Duration::ZERO,
            tsc_calibration: Duration::ZERO,
        };
        let report = inspect_with(&opts);
        assert!(report.clock("MONOTONIC").is_some());
    }

    #[cfg(feature = "serde")]
    #[test]
    fn the_report_round_trips_through_json() {
        let report = inspect_with(&quick());
        let json = serde_json::to_string(&report).unwrap();
        assert!(json.contains("\"read_cost_ns\""));
        assert!(json.contains("\"severity\""));
        let back: ClockReport = serde_json::from_str(&json).unwrap();
        // Floats may differ in the last bit through JSON; compare the rest.
        let names = |r: &ClockReport| r.clocks.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&back), names(&report));
        assert_eq!(back.machine.clocksource, report.machine.clocksource);
        assert_eq!(back.machine.tsc, report.machine.tsc);
        assert_eq!(back.findings, report.findings);
    }
}
