//! Other targets: only the monotonic clock keeptime itself uses
//! (`std::time::Instant` from a process-wide origin), and the little of the
//! machine the standard library can tell.

use super::measure::measure;
use super::{ClockInfo, InspectOptions, MachineInfo};

/// Measures `Instant` as MONOTONIC and describes the machine.
pub(crate) fn inspect(opts: &InspectOptions) -> (Vec<ClockInfo>, MachineInfo) {
    let m = measure(crate::os::monotonic_ns, opts);
    let monotonic = ClockInfo {
        name: "MONOTONIC".to_string(),
        description: "std::time::Instant: the OS's monotonic clock".to_string(),
        id: None,
        resolution_ns: None,
        granularity_ns: m.steps.min_step,
        granularity_ticks: None,
        repeat_fraction: m.steps.repeat_fraction(),
        samples: m.steps.pairs,
        read_cost_ns: m.read_cost_ns,
        monotonic_violations: m.steps.violations,
        frequency_hz: None,
        frequency_source: None,
        available: true,
        error: None,
    };
    let machine = MachineInfo {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cpus_available: std::thread::available_parallelism().ok().map(|n| n.get()),
        ..MachineInfo::default()
    };
    (vec![monotonic], machine)
}
