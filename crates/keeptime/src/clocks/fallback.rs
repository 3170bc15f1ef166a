//! Other targets: only the monotonic clock keeptime itself uses
//! (`std::time::Instant` from a process-wide origin), and the little of the
//! machine the standard library can tell.

use super::measure::measure;
use super::{ClockInfo, InspectOptions, MachineInfo};

/// Measures `Instant` as MONOTONIC and describes the machine.
pub(crate) fn inspect(opts: &InspectOptions) -> (Vec<ClockInfo>, MachineInfo) {
    let m = measure(crate::os::monotonic_ns, opts);
    let monotonic = ClockInfo::measured(
        "MONOTONIC",
        "std::time::Instant: the OS's monotonic clock",
        None,
        None,
        &m,
    );
    let machine = MachineInfo {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cpus_available: std::thread::available_parallelism().ok().map(|n| n.get()),
        ..MachineInfo::default()
    };
    (vec![monotonic], machine)
}
