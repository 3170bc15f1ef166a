//! Turning measured clocks and machine facts into plain-language findings.
//! Each rule fires only on something the inspection actually read or
//! measured; nothing here guesses.

use super::idle::{idle_finding, IdleLatency};
use super::measure::{human_ns, ppm_apart, MISMATCH_PPM};
use super::{ClockInfo, Finding, MachineInfo, Preemption, Severity};

/// The Linux default timer slack.
const DEFAULT_TIMER_SLACK_NS: u64 = 50_000;

/// Idle states slower than this to exit are worth a warning.
const DEEP_IDLE_US: u64 = 50;

/// A vDSO read on a TSC clocksource costs ~20–30 ns; beyond this, something
/// (a system call, a trapping clocksource) is in the way.
const SLOW_READ_NS: f64 = 150.0;

/// Clocksources the vDSO cannot read, so every clock read is a system call.
const SYSCALL_CLOCKSOURCES: &[&str] = &["hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit"];

/// Clocks that must never go backwards (REALTIME and TAI may be set back).
const MUST_BE_MONOTONIC: &[&str] = &[
    "MONOTONIC",
    "MONOTONIC_RAW",
    "MONOTONIC_COARSE",
    "BOOTTIME",
    "PROCESS_CPUTIME_ID",
    "THREAD_CPUTIME_ID",
    "TSC",
    "RDTSCP",
];

/// What the rules read: the report's clocks and machine, and its
/// idle-latency part when there is one.
struct Inputs<'a> {
    clocks: &'a [ClockInfo],
    machine: &'a MachineInfo,
}

impl Inputs<'_> {
    /// An available clock by its report name.
    fn clock(&self, name: &str) -> Option<&ClockInfo> {
        self.clocks.iter().find(|c| c.name == name && c.available)
    }
}

fn finding(severity: Severity, code: &str, message: String) -> Finding {
    Finding {
        severity,
        code: code.to_string(),
        message,
    }
}

/// The rules, in report order within a severity (`spec/clocks.md`,
/// *Findings*). Each returns the findings it makes, usually none or one.
const RULES: [fn(&Inputs<'_>) -> Vec<Finding>; 13] = [
    high_resolution_timers,
    clock_read_cost,
    tsc_invariance,
    non_monotonic_reads,
    virtualized,
    deep_idle_states,
    timer_slack,
    coarse_clocks,
    tsc_frequency,
    cpufreq_powersave,
    preemption,
    few_cpus,
    tai_offset,
];

/// All findings for a report's clocks and machine (and its idle-latency
/// part, whose finding comes last): warnings first, otherwise in the order
/// of the rules in `spec/clocks.md`.
pub fn findings(
    clocks: &[ClockInfo],
    machine: &MachineInfo,
    idle: Option<&IdleLatency>,
) -> Vec<Finding> {
    let inputs = Inputs { clocks, machine };
    let mut out: Vec<Finding> = RULES.iter().flat_map(|rule| rule(&inputs)).collect();
    // Warnings first; the sort is stable, so each group keeps the rules' order.
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out.extend(idle.and_then(|idle| idle_finding(idle, machine)));
    out
}

fn high_resolution_timers(i: &Inputs<'_>) -> Vec<Finding> {
    let machine = i.machine;
    if machine.high_resolution_timers != Some(false) {
        return Vec::new();
    }
    let tick = machine
        .tick_hz
        .map(|hz| format!(" ({})", human_ns(1e9 / hz as f64)))
        .unwrap_or_default();
    vec![finding(
        Severity::Warning,
        "high_resolution_timers_inactive",
        format!(
            "High-resolution timers are inactive: every timed wait is rounded up to the next \
             kernel tick{tick}, so no sleep can be shorter or more precise than that."
        ),
    )]
}

fn clock_read_cost(i: &Inputs<'_>) -> Vec<Finding> {
    let machine = i.machine;
    let monotonic_cost = i.clock("MONOTONIC").map(|c| c.read_cost_ns);
    let syscall_source = machine
        .clocksource
        .as_deref()
        .filter(|cs| SYSCALL_CLOCKSOURCES.contains(cs));
    if let Some(cs) = syscall_source {
        let cost = monotonic_cost
            .map(|ns| format!(" (CLOCK_MONOTONIC costs {} per read here)", human_ns(ns)))
            .unwrap_or_default();
        let hint = if machine.available_clocksources.iter().any(|s| s == "tsc") {
            "; tsc is available: echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource"
        } else {
            ""
        };
        return vec![finding(
            Severity::Warning,
            "clocksource_syscall",
            format!(
                "The clocksource is {cs}, not tsc: every clock read is a system call{cost} instead \
                 of ~25 ns through the vDSO{hint}."
            ),
        )];
    }
    let Some(ns) = monotonic_cost.filter(|&ns| ns > SLOW_READ_NS) else {
        return Vec::new();
    };
    let cs = machine
        .clocksource
        .as_deref()
        .map(|cs| format!(" (clocksource {cs})"))
        .unwrap_or_default();
    vec![finding(
        Severity::Warning,
        "clock_read_slow",
        format!(
            "Reading CLOCK_MONOTONIC costs {} here{cs}, where a vDSO read on a TSC clocksource \
             takes ~25 ns: spin loops see the time less often and every timestamp costs more.",
            human_ns(ns)
        ),
    )]
}

fn tsc_invariance(i: &Inputs<'_>) -> Vec<Finding> {
    let Some(tsc) = i.machine.tsc.as_ref().filter(|t| !t.invariant()) else {
        return Vec::new();
    };
    let missing: Vec<&str> = [
        (!tsc.constant_tsc).then_some("constant_tsc"),
        (!tsc.nonstop_tsc).then_some("nonstop_tsc"),
    ]
    .into_iter()
    .flatten()
    .collect();
    vec![finding(
        Severity::Warning,
        "tsc_not_invariant",
        format!(
            "The TSC lacks {}: its rate may follow the CPU frequency or it may stop in deep \
             idle, so raw TSC ticks don't convert to time; use CLOCK_MONOTONIC.",
            missing.join(" and ")
        ),
    )]
}

fn non_monotonic_reads(i: &Inputs<'_>) -> Vec<Finding> {
    i.clocks
        .iter()
        .filter(|c| c.available && c.monotonic_violations > 0)
        .filter(|c| MUST_BE_MONOTONIC.contains(&c.name.as_str()))
        .map(|c| {
            let why = if c.name == "TSC" || c.name == "RDTSCP" {
                "the CPUs' counters are not in step, so TSC readings from different CPUs can't be compared"
            } else {
                "this clock should never go back; timestamps from it can't be trusted to order events"
            };
            finding(
                Severity::Warning,
                "non_monotonic_reads",
                format!(
                    "{} went backwards {} times in {} successive reads: {why}.",
                    c.name, c.monotonic_violations, c.samples
                ),
            )
        })
        .collect()
}

fn virtualized(i: &Inputs<'_>) -> Vec<Finding> {
    let Some(v) = &i.machine.virtualization else {
        return Vec::new();
    };
    let under = if v.hypervisor == "unknown" {
        "a hypervisor".to_string()
    } else {
        v.hypervisor.clone()
    };
    let steal = i
        .machine
        .steal_fraction
        .filter(|&f| f > 0.0)
        .map(|f| format!("; it has taken {:.2}% of CPU time since boot", f * 100.0))
        .unwrap_or_default();
    vec![finding(
        Severity::Warning,
        "virtualized",
        format!(
            "Running under {under}: wake-ups and spins are subject to the host's scheduling \
             (steal{steal}); compare against a pure spin measured in the same run."
        ),
    )]
}

fn deep_idle_states(i: &Inputs<'_>) -> Vec<Finding> {
    let deep: Vec<_> = i
        .machine
        .idle_states
        .iter()
        .filter(|s| !s.disabled && s.exit_latency_us > DEEP_IDLE_US)
        .collect();
    let Some(worst) = deep.iter().map(|s| s.exit_latency_us).max() else {
        return Vec::new();
    };
    let names: Vec<String> = deep
        .iter()
        .map(|s| format!("{} ({} µs)", s.name, s.exit_latency_us))
        .collect();
    vec![finding(
        Severity::Warning,
        "deep_idle_states",
        format!(
            "CPU idle states {} take over {DEEP_IDLE_US} µs to exit: a wake-up that finds its \
             CPU asleep may come up to {worst} µs late; keeptime's learned margin absorbs this \
             by spinning longer.",
            names.join(", ")
        ),
    )]
}

fn timer_slack(i: &Inputs<'_>) -> Vec<Finding> {
    match i.machine.timer_slack_ns {
        Some(DEFAULT_TIMER_SLACK_NS) => vec![finding(
            Severity::Info,
            "timer_slack_default",
            "This thread's timer slack is 50 µs (the Linux default): plain sleeps overshoot by at \
             least that much, so a 100 µs sleep takes 150 µs or more; keeptime sets 1 ns for its \
             own waits."
                .to_string(),
        )],
        Some(slack) if slack > 1_000 => vec![finding(
            Severity::Info,
            "timer_slack_large",
            format!(
                "This thread's timer slack is {}: plain sleeps overshoot by at least that much; \
                 keeptime sets 1 ns for its own waits.",
                human_ns(slack as f64)
            ),
        )],
        _ => Vec::new(),
    }
}

fn coarse_clocks(i: &Inputs<'_>) -> Vec<Finding> {
    let Some(coarse) = i.clock("MONOTONIC_COARSE") else {
        return Vec::new();
    };
    let Some(step) = coarse.resolution_ns.filter(|&ns| ns >= 1_000) else {
        return Vec::new();
    };
    vec![finding(
        Severity::Info,
        "coarse_clocks",
        format!(
            "MONOTONIC_COARSE and REALTIME_COARSE step every {} (the kernel tick): cheap \
             to read ({} each) but never time waits with them.",
            human_ns(step as f64),
            human_ns(coarse.read_cost_ns)
        ),
    )]
}

fn tsc_frequency(i: &Inputs<'_>) -> Vec<Finding> {
    let Some(tsc) = &i.machine.tsc else {
        return Vec::new();
    };
    let (Some(stated), Some(measured)) = (tsc.reported_frequency_hz, tsc.measured_frequency_hz)
    else {
        return Vec::new();
    };
    let ppm = ppm_apart(stated, measured);
    if ppm <= MISMATCH_PPM {
        return Vec::new();
    }
    vec![finding(
        Severity::Info,
        "tsc_frequency_mismatch",
        format!(
            "CPUID states a TSC frequency of {} but it runs at {} against \
             CLOCK_MONOTONIC_RAW ({ppm} ppm apart); the report uses the measured one.",
            human_hz(stated),
            human_hz(measured)
        ),
    )]
}

fn cpufreq_powersave(i: &Inputs<'_>) -> Vec<Finding> {
    let machine = i.machine;
    if machine.cpufreq_governor.as_deref() != Some("powersave") {
        return Vec::new();
    }
    let driver = machine
        .cpufreq_driver
        .as_deref()
        .map(|d| format!(" (driver {d})"))
        .unwrap_or_default();
    vec![finding(
        Severity::Info,
        "cpufreq_powersave",
        format!(
            "The cpufreq governor is powersave{driver}: the CPU may run below its top \
             frequency and ramp up after each wake-up, so wake-ups and spins can be slower \
             than with performance."
        ),
    )]
}

fn preemption(i: &Inputs<'_>) -> Vec<Finding> {
    let machine = i.machine;
    let dynamic_not_preemptible = machine.preemption == Preemption::Dynamic
        && matches!(
            machine.preemption_mode.as_deref(),
            Some("none" | "voluntary")
        );
    if machine.preemption == Preemption::NoneOrVoluntary || dynamic_not_preemptible {
        vec![finding(
            Severity::Info,
            "kernel_not_preemptible",
            "The kernel does not preempt running kernel code (no PREEMPT in its build, or \
             preempt=none/voluntary): a woken thread may wait until a long system call on its CPU \
             reaches a preemption point."
                .to_string(),
        )]
    } else if machine.preemption == Preemption::Rt {
        vec![finding(
            Severity::Info,
            "kernel_preempt_rt",
            "The kernel is PREEMPT_RT: wake-up latency is as low and as bounded as Linux offers."
                .to_string(),
        )]
    } else {
        Vec::new()
    }
}

fn few_cpus(i: &Inputs<'_>) -> Vec<Finding> {
    let machine = i.machine;
    let Some(n) = machine
        .cpus_online
        .or(machine.cpus_available)
        .filter(|&n| n <= 2)
    else {
        return Vec::new();
    };
    let (severity, share) = if n == 1 {
        (
            Severity::Warning,
            "the whole machine: every other thread waits behind it",
        )
    } else {
        (Severity::Info, "half the machine")
    };
    vec![finding(
        severity,
        "few_cpus",
        format!(
            "Only {n} CPU{} online: a spinning wait occupies {share}; keeptime lets at most \
             one thread per CPU but one spin with the pause hint (the others yield as they \
             spin), and with more sleepers than CPUs caps their spins at half the machine.",
            if n == 1 { "" } else { "s" }
        ),
    )]
}

fn tai_offset(i: &Inputs<'_>) -> Vec<Finding> {
    if i.machine.tai_offset_s != Some(0) {
        return Vec::new();
    }
    vec![finding(
        Severity::Info,
        "tai_offset_unset",
        "CLOCK_TAI equals CLOCK_REALTIME: nothing has told the kernel the TAI offset (NTP \
         sets it to 37 s), so TAI here is not TAI."
            .to_string(),
    )]
}

/// "2.700 GHz", "24.000 MHz".
fn human_hz(hz: u64) -> String {
    if hz >= 1_000_000_000 {
        format!("{:.3} GHz", hz as f64 / 1e9)
    } else {
        format!("{:.3} MHz", hz as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clocks::{IdleState, TscInfo, Virtualization};

    fn clock(name: &str, resolution_ns: u64, read_cost_ns: f64) -> ClockInfo {
        ClockInfo {
            name: name.to_string(),
            description: String::new(),
            id: None,
            resolution_ns: Some(resolution_ns),
            granularity_ns: Some(resolution_ns.max(20)),
            granularity_ticks: None,
            repeat_fraction: 0.0,
            samples: 20_000,
            read_cost_ns,
            monotonic_violations: 0,
            frequency_hz: None,
            frequency_source: None,
            available: true,
            error: None,
        }
    }

    fn codes(findings: &[Finding]) -> Vec<&str> {
        findings.iter().map(|f| f.code.as_str()).collect()
    }

    /// A quiet bare-metal box: TSC clocksource, invariant TSC, high-res
    /// timers, performance governor, 8 CPUs, slack already 1 ns, full preemption.
    fn quiet_machine() -> MachineInfo {
        MachineInfo {
            os: "linux".to_string(),
            arch: "x86_64".to_string(),
            cpus_online: Some(8),
            cpus_available: Some(8),
            clocksource: Some("tsc".to_string()),
            available_clocksources: vec!["tsc".to_string(), "hpet".to_string()],
            tsc: Some(TscInfo {
                constant_tsc: true,
                nonstop_tsc: true,
                ..TscInfo::default()
            }),
            timer_slack_ns: Some(1),
            tick_hz: Some(1000),
            high_resolution_timers: Some(true),
            cpufreq_governor: Some("performance".to_string()),
            preemption: Preemption::Full,
            tai_offset_s: Some(37),
            ..MachineInfo::default()
        }
    }

    #[test]
    fn a_quiet_machine_has_no_findings() {
        let clocks = [clock("MONOTONIC", 1, 22.0)];
        assert_eq!(findings(&clocks, &quiet_machine(), None), vec![]);
    }

    #[test]
    fn a_troubled_vm_gets_every_finding_in_order() {
        let mut tsc = clock("TSC", 1, 9.0);
        tsc.monotonic_violations = 3;
        let clocks = [
            clock("MONOTONIC", 4_000_000, 1234.0),
            clock("MONOTONIC_COARSE", 4_000_000, 6.0),
            tsc,
        ];
        let machine = MachineInfo {
            cpus_online: Some(2),
            clocksource: Some("hpet".to_string()),
            tsc: Some(TscInfo {
                constant_tsc: true,
                reported_frequency_hz: Some(2_400_000_000),
                measured_frequency_hz: Some(2_700_000_000),
                ..TscInfo::default()
            }),
            timer_slack_ns: Some(50_000),
            tick_hz: Some(250),
            high_resolution_timers: Some(false),
            idle_states: vec![
                IdleState {
                    name: "C1".to_string(),
                    exit_latency_us: 2,
                    target_residency_us: Some(2),
                    disabled: false,
                },
                IdleState {
                    name: "C6".to_string(),
                    exit_latency_us: 133,
                    target_residency_us: Some(400),
                    disabled: false,
                },
            ],
            cpufreq_driver: Some("intel_pstate".to_string()),
            cpufreq_governor: Some("powersave".to_string()),
            virtualization: Some(Virtualization {
                hypervisor: "KVM".to_string(),
                source: "cpuid".to_string(),
            }),
            steal_fraction: Some(0.0123),
            preemption: Preemption::Dynamic,
            preemption_mode: Some("voluntary".to_string()),
            tai_offset_s: Some(0),
            ..quiet_machine()
        };
        let found = findings(&clocks, &machine, None);
        assert_eq!(
            codes(&found),
            [
                "high_resolution_timers_inactive",
                "clocksource_syscall",
                "tsc_not_invariant",
                "non_monotonic_reads",
                "virtualized",
                "deep_idle_states",
                "timer_slack_default",
                "coarse_clocks",
                "tsc_frequency_mismatch",
                "cpufreq_powersave",
                "kernel_not_preemptible",
                "few_cpus",
                "tai_offset_unset",
            ]
        );
        let message = |code: &str| {
            found
                .iter()
                .find(|f| f.code == code)
                .map(|f| f.message.as_str())
                .unwrap()
        };
        assert_eq!(
            message("high_resolution_timers_inactive"),
            "High-resolution timers are inactive: every timed wait is rounded up to the next \
             kernel tick (4 ms), so no sleep can be shorter or more precise than that."
        );
        assert_eq!(
            message("clocksource_syscall"),
            "The clocksource is hpet, not tsc: every clock read is a system call (CLOCK_MONOTONIC \
             costs 1.2 µs per read here) instead of ~25 ns through the vDSO; tsc is available: \
             echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource."
        );
        assert_eq!(
            message("tsc_not_invariant"),
            "The TSC lacks nonstop_tsc: its rate may follow the CPU frequency or it may stop in \
             deep idle, so raw TSC ticks don't convert to time; use CLOCK_MONOTONIC."
        );
        assert_eq!(
            message("non_monotonic_reads"),
            "TSC went backwards 3 times in 20000 successive reads: the CPUs' counters are not in \
             step, so TSC readings from different CPUs can't be compared."
        );
        assert_eq!(
            message("virtualized"),
            "Running under KVM: wake-ups and spins are subject to the host's scheduling (steal; \
             it has taken 1.23% of CPU time since boot); compare against a pure spin measured in \
             the same run."
        );
        assert_eq!(
            message("deep_idle_states"),
            "CPU idle states C6 (133 µs) take over 50 µs to exit: a wake-up that finds its CPU \
             asleep may come up to 133 µs late; keeptime's learned margin absorbs this by \
             spinning longer."
        );
        assert_eq!(
            message("coarse_clocks"),
            "MONOTONIC_COARSE and REALTIME_COARSE step every 4 ms (the kernel tick): cheap to \
             read (6 ns each) but never time waits with them."
        );
        assert_eq!(
            message("tsc_frequency_mismatch"),
            "CPUID states a TSC frequency of 2.400 GHz but it runs at 2.700 GHz against \
             CLOCK_MONOTONIC_RAW (111111 ppm apart); the report uses the measured one."
        );
        assert_eq!(
            message("few_cpus"),
            "Only 2 CPUs online: a spinning wait occupies half the machine; keeptime lets at most \
             one thread per CPU but one spin with the pause hint (the others yield as they spin), \
             and with more sleepers than CPUs caps their spins at half the machine."
        );
        assert!(found[..6].iter().all(|f| f.severity == Severity::Warning));
        assert!(found[6..].iter().all(|f| f.severity == Severity::Info));
    }

    #[test]
    fn slow_reads_without_a_syscall_clocksource() {
        let clocks = [clock("MONOTONIC", 1, 480.0)];
        let machine = MachineInfo {
            clocksource: Some("kvm-clock".to_string()),
            ..quiet_machine()
        };
        let found = findings(&clocks, &machine, None);
        assert_eq!(codes(&found), ["clock_read_slow"]);
        assert_eq!(
            found[0].message,
            "Reading CLOCK_MONOTONIC costs 480 ns here (clocksource kvm-clock), where a vDSO read \
             on a TSC clocksource takes ~25 ns: spin loops see the time less often and every \
             timestamp costs more."
        );
    }

    #[test]
    fn realtime_stepping_back_is_not_a_finding_but_monotonic_is() {
        let mut realtime = clock("REALTIME", 1, 22.0);
        realtime.monotonic_violations = 1;
        let mut monotonic = clock("MONOTONIC", 1, 22.0);
        monotonic.monotonic_violations = 2;
        let found = findings(&[realtime, monotonic], &quiet_machine(), None);
        assert_eq!(codes(&found), ["non_monotonic_reads"]);
        assert!(found[0]
            .message
            .starts_with("MONOTONIC went backwards 2 times"));
    }

    #[test]
    fn other_slack_single_cpu_and_rt() {
        let machine = MachineInfo {
            timer_slack_ns: Some(200_000),
            cpus_online: Some(1),
            preemption: Preemption::Rt,
            ..quiet_machine()
        };
        let found = findings(&[], &machine, None);
        assert_eq!(
            codes(&found),
            ["few_cpus", "timer_slack_large", "kernel_preempt_rt"]
        );
        assert_eq!(found[0].severity, Severity::Warning);
        assert_eq!(
            found[1].message,
            "This thread's timer slack is 200 µs: plain sleeps overshoot by at least that much; \
             keeptime sets 1 ns for its own waits."
        );
    }
}
