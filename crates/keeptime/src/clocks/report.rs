//! The report types: plain data, serializable with the `serde` feature, with
//! stable snake_case field names and the unit in every field name that has one.

use std::fmt;
use std::time::Duration;

/// How [`inspect_with`](super::inspect_with) measures each clock.
///
/// The defaults keep a whole [`inspect`](super::inspect) well under a second
/// (typically 50–150 ms); smaller values make it faster and noisier. Zeros
/// are treated as 1 (and a zero duration as "one chunk of reads"): nothing
/// here can make inspection panic or hang.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InspectOptions {
    /// Clock reads per timed batch when measuring read cost. Default 1000.
    pub reads_per_batch: usize,
    /// Timed batches per clock; the read cost is the median over batches.
    /// Default 15.
    pub batches: usize,
    /// Successive reads examined per clock for granularity, repeats and
    /// monotonicity. A clock that has not stepped at least
    /// [`MIN_STEPS`](super::MIN_STEPS) times by then (a coarse clock) is read
    /// for longer, up to `time_limit_per_clock`. Default 20 000.
    pub granularity_reads: usize,
    /// Upper bound on the time spent measuring one clock: read-cost batches
    /// stop after half of it, granularity reads at all of it. This is what
    /// keeps inspection fast on a machine whose clock reads are slow system
    /// calls. Default 50 ms.
    pub time_limit_per_clock: Duration,
    /// How long the TSC is compared against `CLOCK_MONOTONIC_RAW` to estimate
    /// its frequency. Longer is more precise (the error is about 100 ns divided
    /// by this). Default 20 ms.
    pub tsc_calibration: Duration,
}

impl Default for InspectOptions {
    fn default() -> Self {
        InspectOptions {
            reads_per_batch: 1000,
            batches: 15,
            granularity_reads: 20_000,
            time_limit_per_clock: Duration::from_millis(50),
            tsc_calibration: Duration::from_millis(20),
        }
    }
}

/// Everything [`inspect`](super::inspect) found: one entry per clock, the
/// machine's timing-relevant configuration, and plain-language findings.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ClockReport {
    /// The clocks, in a fixed order: MONOTONIC, MONOTONIC_RAW,
    /// MONOTONIC_COARSE, REALTIME, REALTIME_COARSE, BOOTTIME, TAI,
    /// PROCESS_CPUTIME_ID, THREAD_CPUTIME_ID, then TSC and RDTSCP on x86_64.
    /// Off Linux, only MONOTONIC (`std::time::Instant`).
    pub clocks: Vec<ClockInfo>,
    /// The machine: kernel, CPU, clocksource, timers, idle states.
    pub machine: MachineInfo,
    /// The cpuidle driver, the PM QoS CPU latency in force and whether this
    /// process may hold a request (`None` in a report made from parts).
    #[cfg_attr(feature = "serde", serde(default))]
    pub idle_latency: Option<super::IdleLatency>,
    /// What the numbers mean for precise waiting, warnings first.
    pub findings: Vec<Finding>,
}

impl ClockReport {
    /// The clock called `name` ("MONOTONIC", "TSC", …; ASCII case-insensitive),
    /// if this report has it.
    pub fn clock(&self, name: &str) -> Option<&ClockInfo> {
        self.clocks
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The findings of the given severity, in report order.
    pub fn findings_of(&self, severity: Severity) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.severity == severity)
    }
}

/// What one clock is and how it behaved when read back to back.
///
/// For a clock that could not be read (`available == false`), the measured
/// fields are zero / `None` and `error` says why.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct ClockInfo {
    /// Short upper-case name: "MONOTONIC", "MONOTONIC_RAW", …, "TSC", "RDTSCP".
    pub name: String,
    /// What the clock counts, in a phrase.
    pub description: String,
    /// The `clockid_t` passed to `clock_gettime`; `None` for the TSC and off Linux.
    pub id: Option<i32>,
    /// What `clock_getres` reports. `None` for the TSC (one tick is
    /// 1 / `frequency_hz`) and off Linux.
    pub resolution_ns: Option<u64>,
    /// Smallest non-zero step seen between two successive reads, in ns
    /// (rounded up). For a fine clock this is bounded below by the read cost,
    /// so it is an upper bound on the real step; for a coarse clock it is the
    /// real step (the kernel tick). `None` if the clock never stepped.
    pub granularity_ns: Option<u64>,
    /// TSC only: the smallest non-zero step in TSC ticks.
    pub granularity_ticks: Option<u64>,
    /// Share of successive reads (0.0–1.0) that returned the same value as the
    /// read before: near 1 for a coarse clock, near 0 for a fine one.
    pub repeat_fraction: f64,
    /// Successive reads examined for granularity, repeats and monotonicity.
    pub samples: u64,
    /// Cost of one read in ns: the median over batches of batch wall time
    /// (on `CLOCK_MONOTONIC`) divided by reads per batch.
    pub read_cost_ns: f64,
    /// Reads that returned less than the read before. Always 0 for a working
    /// monotonic clock; REALTIME and TAI may legitimately step back (NTP,
    /// `settimeofday`); for the TSC it means CPUs whose counters disagree.
    pub monotonic_violations: u64,
    /// TSC only: ticks per second, as `frequency_source` says.
    pub frequency_hz: Option<u64>,
    /// TSC only: where `frequency_hz` came from.
    pub frequency_source: Option<FrequencySource>,
    /// Whether the clock could be read at all.
    pub available: bool,
    /// Why the clock is unavailable (or what went wrong), in words.
    pub error: Option<String>,
}

impl ClockInfo {
    /// An entry for a clock that cannot be read here, with the reason.
    pub fn unavailable(
        name: &str,
        description: &str,
        id: Option<i32>,
        error: impl Into<String>,
    ) -> Self {
        ClockInfo {
            name: name.to_string(),
            description: description.to_string(),
            id,
            resolution_ns: None,
            granularity_ns: None,
            granularity_ticks: None,
            repeat_fraction: 0.0,
            samples: 0,
            read_cost_ns: 0.0,
            monotonic_violations: 0,
            frequency_hz: None,
            frequency_source: None,
            available: false,
            error: Some(error.into()),
        }
    }
}

/// Where a TSC frequency came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum FrequencySource {
    /// CPUID leaf 0x15: crystal frequency × TSC/crystal ratio, as the CPU states it.
    CpuidLeaf15,
    /// CPUID leaf 0x40000010: the TSC frequency the hypervisor states (KVM, VMware).
    HypervisorCpuid,
    /// Counted against `CLOCK_MONOTONIC_RAW` over
    /// [`InspectOptions::tsc_calibration`]. On a `tsc` clocksource this
    /// recovers the frequency the kernel itself uses.
    MeasuredAgainstMonotonicRaw,
}

impl fmt::Display for FrequencySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FrequencySource::CpuidLeaf15 => "CPUID leaf 0x15",
            FrequencySource::HypervisorCpuid => "hypervisor CPUID leaf 0x40000010",
            FrequencySource::MeasuredAgainstMonotonicRaw => "measured against CLOCK_MONOTONIC_RAW",
        })
    }
}

/// The machine's timing-relevant configuration, as read from `/proc`, `/sys`,
/// `uname`, `prctl` and CPUID. Anything unreadable is `None` (or empty).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct MachineInfo {
    /// `std::env::consts::OS`: "linux", "macos", "windows", …
    pub os: String,
    /// `std::env::consts::ARCH`: "x86_64", "aarch64", …
    pub arch: String,
    /// `uname -r`, e.g. "6.8.0-45-generic".
    pub kernel_release: Option<String>,
    /// `uname -v`, e.g. "#1 SMP PREEMPT_DYNAMIC …"; it names the preemption model.
    pub kernel_version: Option<String>,
    /// The CPU's model name from `/proc/cpuinfo`.
    pub cpu_model: Option<String>,
    /// CPUs online (`/sys/devices/system/cpu/online`).
    pub cpus_online: Option<usize>,
    /// CPUs this process may run on (affinity mask, cgroup quota).
    pub cpus_available: Option<usize>,
    /// The current clocksource: "tsc" is read in user space through the vDSO;
    /// "hpet" and "acpi_pm" make every clock read a system call.
    pub clocksource: Option<String>,
    /// All clocksources the kernel considers usable.
    pub available_clocksources: Vec<String>,
    /// The TSC's flags and frequency; `None` off x86_64 or without `/proc/cpuinfo`.
    pub tsc: Option<TscInfo>,
    /// This thread's timer slack (`PR_GET_TIMERSLACK`): how late the kernel
    /// may fire its timers to batch wake-ups. Linux default 50 000.
    pub timer_slack_ns: Option<u64>,
    /// The kernel tick rate (CONFIG_HZ), from `clock_getres(CLOCK_MONOTONIC_COARSE)`.
    pub tick_hz: Option<u64>,
    /// Whether high-resolution timers are active; if not, every timed wait is
    /// rounded up to the next tick.
    pub high_resolution_timers: Option<bool>,
    /// Where `high_resolution_timers` came from: "/proc/timer_list" or
    /// "clock_getres(CLOCK_MONOTONIC)".
    pub high_resolution_timers_source: Option<String>,
    /// The cpuidle driver ("intel_idle", "acpi_idle", "haltpoll", "none").
    pub idle_driver: Option<String>,
    /// CPU 0's idle states, shallowest first; empty when the kernel exposes none.
    pub idle_states: Vec<IdleState>,
    /// The cpufreq driver ("intel_pstate", "acpi-cpufreq", …) of CPU 0.
    pub cpufreq_driver: Option<String>,
    /// The cpufreq governor ("performance", "powersave", "schedutil", …) of CPU 0.
    pub cpufreq_governor: Option<String>,
    /// The hypervisor this runs under; `None` when there is no sign of one.
    pub virtualization: Option<Virtualization>,
    /// Share of CPU time the hypervisor took from this machine since boot
    /// (`steal` in `/proc/stat`), 0.0–1.0.
    pub steal_fraction: Option<f64>,
    /// How the kernel was built to preempt running kernel code.
    pub preemption: Preemption,
    /// For [`Preemption::Dynamic`], the mode chosen at boot ("none",
    /// "voluntary", "full", "lazy") when it can be read.
    pub preemption_mode: Option<String>,
    /// CLOCK_TAI − CLOCK_REALTIME in whole seconds (37 since 2017 when NTP has
    /// set it; 0 when nobody has).
    pub tai_offset_s: Option<i64>,
}

/// The TSC as `/proc/cpuinfo` and CPUID describe it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct TscInfo {
    /// Ticks at a fixed rate whatever the CPU's frequency.
    pub constant_tsc: bool,
    /// Keeps ticking in deep idle states.
    pub nonstop_tsc: bool,
    /// The kernel got the frequency from the CPU or hypervisor, not by calibration.
    pub tsc_known_freq: bool,
    /// The kernel trusts the TSC without watchdog checks (typically under a hypervisor).
    pub tsc_reliable: bool,
    /// The `rdtscp` instruction is available.
    pub rdtscp: bool,
    /// The frequency the CPU or hypervisor states through CPUID, if any.
    pub reported_frequency_hz: Option<u64>,
    /// The frequency counted against `CLOCK_MONOTONIC_RAW`.
    pub measured_frequency_hz: Option<u64>,
}

impl TscInfo {
    /// Constant rate and never stops: TSC ticks convert to time.
    pub fn invariant(&self) -> bool {
        self.constant_tsc && self.nonstop_tsc
    }
}

/// One CPU idle state (C-state) and what waking from it costs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct IdleState {
    /// The state's name ("POLL", "C1", "C6", …).
    pub name: String,
    /// Worst-case time to wake from this state, in µs, as the driver states it.
    pub exit_latency_us: u64,
    /// The shortest idle period for which the kernel chooses this state, in µs.
    pub target_residency_us: Option<u64>,
    /// Whether the state is disabled (for CPU 0).
    pub disabled: bool,
}

/// The hypervisor a machine runs under and how that was found out.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct Virtualization {
    /// "KVM", "Xen", "VMware", "Hyper-V", …; "unknown" when only the CPU's
    /// hypervisor flag says so.
    pub hypervisor: String,
    /// Where that came from: "cpuid", "/sys/hypervisor/type",
    /// "/sys/class/dmi/id", "/proc/cpuinfo".
    pub source: String,
}

/// The kernel's preemption model, from the `uname -v` build string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Preemption {
    /// PREEMPT_RT: almost all kernel code is preemptible; the lowest wake-up latency.
    Rt,
    /// PREEMPT: kernel code is preemptible except in critical sections.
    Full,
    /// PREEMPT_DYNAMIC: chosen at boot (`preempt=`); see `preemption_mode`.
    Dynamic,
    /// Neither PREEMPT flag: kernel code yields only at explicit points, so a
    /// woken thread may wait for a long system call on its CPU to finish.
    NoneOrVoluntary,
    /// Not known (no `uname`, or not Linux).
    #[default]
    Unknown,
}

impl fmt::Display for Preemption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Preemption::Rt => "PREEMPT_RT",
            Preemption::Full => "PREEMPT (full)",
            Preemption::Dynamic => "PREEMPT_DYNAMIC",
            Preemption::NoneOrVoluntary => "none or voluntary",
            Preemption::Unknown => "unknown",
        })
    }
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Severity {
    /// Worth knowing when reading measurements.
    Info,
    /// Changes how precisely anything on this machine can wait or measure.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
        })
    }
}

/// One observation about the machine, in plain words, backed by something
/// the inspection read or measured.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Finding {
    /// How much it matters.
    pub severity: Severity,
    /// Stable identifier, e.g. "timer_slack_default"; the list is in
    /// [`clocks`](super)'s module docs.
    pub code: String,
    /// One or two sentences for a person.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity, self.message)
    }
}
