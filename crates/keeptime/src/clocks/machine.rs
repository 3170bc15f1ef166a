//! The Linux machine's timing configuration from `/proc`, `/sys`, `uname`,
//! `prctl` and CPUID. Every parser takes the file's text, so tests feed it
//! fixtures; [`gather`] does the reading and turns anything unreadable into
//! `None`.

use std::path::Path;

use super::{IdleState, MachineInfo, Preemption, TscInfo, Virtualization};

/// The first processor's entry in `/proc/cpuinfo`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct CpuInfo {
    /// `vendor_id` on x86 ("GenuineIntel", "AuthenticAMD"), `CPU
    /// implementer` elsewhere ("0x41").
    pub(crate) vendor: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) flags: Vec<String>,
}

impl CpuInfo {
    pub(crate) fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

/// Parses the first processor block of `/proc/cpuinfo`: the model name
/// ("model name" on x86, "Model" or "cpu model" elsewhere) and the flags
/// ("flags" on x86, "Features" on Arm).
pub(crate) fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    let mut seen_processor = false;
    for line in text.lines() {
        if line.trim().is_empty() {
            if seen_processor {
                break;
            }
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => seen_processor = true,
            "vendor_id" if !value.is_empty() => info.vendor = Some(value.to_string()),
            "CPU implementer" if info.vendor.is_none() && !value.is_empty() => {
                info.vendor = Some(value.to_string());
            }
            "model name" | "Model" | "cpu model" if info.model.is_none() && !value.is_empty() => {
                info.model = Some(value.to_string());
            }
            "flags" | "Features" if info.flags.is_empty() => {
                info.flags = value.split_whitespace().map(str::to_string).collect();
            }
            _ => {}
        }
    }
    info
}

/// The TSC flags, if the CPU has a TSC at all (the `tsc` flag).
pub(crate) fn tsc_flags(cpu: &CpuInfo) -> Option<TscInfo> {
    cpu.has_flag("tsc").then(|| TscInfo {
        constant_tsc: cpu.has_flag("constant_tsc"),
        nonstop_tsc: cpu.has_flag("nonstop_tsc"),
        tsc_known_freq: cpu.has_flag("tsc_known_freq"),
        tsc_reliable: cpu.has_flag("tsc_reliable"),
        rdtscp: cpu.has_flag("rdtscp"),
        reported_frequency_hz: None,
        measured_frequency_hz: None,
    })
}

/// Counts the CPUs in a kernel CPU list such as "0-3,6,8-9" (`/sys/devices/system/cpu/online`).
pub(crate) fn parse_cpu_list(text: &str) -> Option<usize> {
    let mut count = 0usize;
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                count += b.checked_sub(a)? + 1;
            }
            None => {
                part.trim().parse::<usize>().ok()?;
                count += 1;
            }
        }
    }
    (count > 0).then_some(count)
}

/// Whether every CPU in `/proc/timer_list` has `hres_active : 1`; `None` if
/// the text has no `hres_active` line.
pub(crate) fn parse_timer_list(text: &str) -> Option<bool> {
    let mut any = false;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if key.trim().trim_start_matches('.') == "hres_active" {
            any = true;
            if value.trim() != "1" {
                return Some(false);
            }
        }
    }
    any.then_some(true)
}

/// The preemption model from the `uname -v` string ("#1 SMP PREEMPT_DYNAMIC …")
/// and the contents of `/sys/kernel/realtime` (present, "1", on RT kernels).
pub(crate) fn parse_preemption(uname_version: &str, realtime: Option<&str>) -> Preemption {
    if realtime.map(str::trim) == Some("1") {
        return Preemption::Rt;
    }
    let words: Vec<&str> = uname_version.split_whitespace().collect();
    if words.contains(&"PREEMPT_RT") {
        Preemption::Rt
    } else if words.contains(&"PREEMPT_DYNAMIC") {
        Preemption::Dynamic
    } else if words.contains(&"PREEMPT") {
        Preemption::Full
    } else if words.contains(&"SMP") || words.first().is_some_and(|w| w.starts_with('#')) {
        Preemption::NoneOrVoluntary
    } else {
        Preemption::Unknown
    }
}

/// The current mode in `/sys/kernel/debug/sched/preempt`: the parenthesised
/// word of "none voluntary (full) lazy".
pub(crate) fn parse_debugfs_preempt(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|w| w.starts_with('(') && w.ends_with(')') && w.len() > 2)
        .map(|w| w[1..w.len() - 1].to_string())
}

/// The `preempt=` boot parameter in `/proc/cmdline`, if given (before any `--`,
/// after which arguments belong to init).
pub(crate) fn parse_cmdline_preempt(cmdline: &str) -> Option<String> {
    cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .find_map(|w| w.strip_prefix("preempt="))
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// Share of CPU time stolen by the hypervisor since boot, from the first
/// ("cpu ") line of `/proc/stat`: steal / (user + nice + system + idle +
/// iowait + irq + softirq + steal).
pub(crate) fn parse_steal_fraction(proc_stat: &str) -> Option<f64> {
    let line = proc_stat.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    if fields.len() < 8 {
        return None;
    }
    let total: u64 = fields.iter().sum();
    (total > 0).then(|| fields[7] as f64 / total as f64)
}

/// The hypervisor named by `/sys/hypervisor/type` ("xen" on Xen guests and dom0).
pub(crate) fn hypervisor_from_sysfs_type(text: &str) -> Option<String> {
    match text.trim() {
        "" => None,
        "xen" => Some("Xen".to_string()),
        other => Some(other.to_string()),
    }
}

/// The hypervisor named by DMI `sys_vendor` and `product_name`, for vendors
/// that only ever make virtual machines (a cloud vendor's name alone is not
/// evidence: its bare-metal machines carry it too).
pub(crate) fn hypervisor_from_dmi(sys_vendor: &str, product_name: &str) -> Option<String> {
    let vendor = sys_vendor.trim();
    let product = product_name.trim();
    let name = if vendor == "QEMU" {
        "QEMU/KVM"
    } else if product == "KVM" || product.starts_with("KVM ") {
        "KVM"
    } else if vendor.starts_with("VMware") {
        "VMware"
    } else if vendor == "Xen" {
        "Xen"
    } else if vendor == "innotek GmbH" || product == "VirtualBox" {
        "VirtualBox"
    } else if vendor.starts_with("Parallels") {
        "Parallels"
    } else if vendor == "Microsoft Corporation" && product == "Virtual Machine" {
        "Hyper-V"
    } else if vendor == "Google" && product == "Google Compute Engine" {
        "KVM (Google Compute Engine)"
    } else {
        return None;
    };
    Some(name.to_string())
}

/// One idle state from its `name`, `latency`, `residency` and `disable` files.
pub(crate) fn parse_idle_state(
    name: &str,
    latency_us: &str,
    residency_us: Option<&str>,
    disable: Option<&str>,
) -> Option<IdleState> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    Some(IdleState {
        name: name.to_string(),
        exit_latency_us: latency_us.trim().parse().ok()?,
        target_residency_us: residency_us.and_then(|r| r.trim().parse().ok()),
        disabled: disable.is_some_and(|d| d.trim() != "0"),
    })
}

/// CONFIG_HZ from the coarse clocks' resolution (one tick, `TICK_NSEC`).
pub(crate) fn tick_hz_from_resolution(resolution_ns: u64) -> Option<u64> {
    // TICK_NSEC is 1e9/HZ rounded to nearest, so rounding back recovers HZ.
    (resolution_ns >= 1000).then(|| (1_000_000_000 + resolution_ns / 2) / resolution_ns)
}

/// Reads a small text file, trimmed; `None` if unreadable or empty.
pub(crate) fn read_text(path: impl AsRef<Path>) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}

/// Everything [`MachineInfo`] holds that comes from files and system calls
/// (the clock-derived fields are filled in by the caller).
pub(crate) fn gather() -> MachineInfo {
    let cpu = read_text("/proc/cpuinfo").map(|t| parse_cpuinfo(&t));
    let (kernel_release, kernel_version) = uname();
    let preemption = parse_preemption(
        kernel_version.as_deref().unwrap_or(""),
        read_text("/sys/kernel/realtime").as_deref(),
    );
    let preemption_mode = (preemption == Preemption::Dynamic)
        .then(|| {
            read_text("/sys/kernel/debug/sched/preempt")
                .and_then(|t| parse_debugfs_preempt(&t))
                .or_else(|| read_text("/proc/cmdline").and_then(|t| parse_cmdline_preempt(&t)))
        })
        .flatten();
    let (high_resolution_timers, hrt_source) =
        match read_text("/proc/timer_list").and_then(|t| parse_timer_list(&t)) {
            Some(active) => (Some(active), Some("/proc/timer_list".to_string())),
            None => (None, None),
        };
    let clocksource_dir = "/sys/devices/system/clocksource/clocksource0";
    MachineInfo {
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        kernel_release,
        kernel_version,
        cpu_model: cpu.as_ref().and_then(|c| c.model.clone()),
        cpus_online: read_text("/sys/devices/system/cpu/online").and_then(|t| parse_cpu_list(&t)),
        cpus_available: std::thread::available_parallelism().ok().map(|n| n.get()),
        clocksource: read_text(format!("{clocksource_dir}/current_clocksource")),
        available_clocksources: read_text(format!("{clocksource_dir}/available_clocksource"))
            .map(|t| t.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        tsc: cpu.as_ref().and_then(tsc_flags),
        timer_slack_ns: crate::os::timer_slack_ns().ok(),
        tick_hz: None,
        high_resolution_timers,
        high_resolution_timers_source: hrt_source,
        idle_driver: read_text("/sys/devices/system/cpu/cpuidle/current_driver"),
        idle_states: idle_states("/sys/devices/system/cpu/cpu0/cpuidle"),
        cpufreq_driver: read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver"),
        cpufreq_governor: read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        virtualization: virtualization(cpu.as_ref()),
        steal_fraction: read_text("/proc/stat").and_then(|t| parse_steal_fraction(&t)),
        preemption,
        preemption_mode,
        tai_offset_s: None,
    }
}

fn idle_states(dir: &str) -> Vec<IdleState> {
    let mut states = Vec::new();
    // The kernel allows at most CPUIDLE_STATE_MAX (10) states; stop at the first gap.
    for n in 0..16 {
        let state = format!("{dir}/state{n}");
        let (Some(name), Some(latency)) = (
            read_text(format!("{state}/name")),
            read_text(format!("{state}/latency")),
        ) else {
            break;
        };
        let residency = read_text(format!("{state}/residency"));
        let disable = read_text(format!("{state}/disable"));
        if let Some(s) = parse_idle_state(&name, &latency, residency.as_deref(), disable.as_deref())
        {
            states.push(s);
        }
    }
    states
}

/// The CPU's vendor from the first processor block of `/proc/cpuinfo`
/// (see [`CpuInfo::vendor`]).
pub(crate) fn parse_cpu_vendor(text: &str) -> Option<String> {
    parse_cpuinfo(text).vendor
}

/// This machine's profile fingerprint (`spec/estimator.md`, *Profile*): the
/// few fields of [`gather`] a wake-up model depends on, read without
/// measuring anything.
pub(crate) fn fingerprint() -> crate::profile::Fingerprint {
    let cpuinfo = read_text("/proc/cpuinfo");
    let cpu = cpuinfo.as_deref().map(parse_cpuinfo);
    let (kernel_release, _) = uname();
    crate::profile::Fingerprint::from_parts(
        cpuinfo.as_deref().and_then(parse_cpu_vendor),
        cpu.as_ref().and_then(|c| c.model.clone()),
        read_text("/sys/devices/system/cpu/online").and_then(|t| parse_cpu_list(&t)),
        virtualization_without_cpuid(cpu.as_ref(), &available_clocksources()).map(|v| v.hypervisor),
        read_text("/sys/devices/system/cpu/cpuidle/current_driver"),
        read_text("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        kernel_release,
    )
}

fn virtualization(cpu: Option<&CpuInfo>) -> Option<Virtualization> {
    #[cfg(target_arch = "x86_64")]
    if let Some(name) = super::cpuid::hypervisor() {
        return Some(Virtualization {
            hypervisor: name,
            source: "cpuid".to_string(),
        });
    }
    virtualization_without_cpuid(cpu, &available_clocksources())
}

/// The clocksources the kernel offers (`available_clocksource`).
fn available_clocksources() -> Vec<String> {
    read_text("/sys/devices/system/clocksource/clocksource0/available_clocksource")
        .map(|t| t.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The hypervisor as every runtime can read it (no CPUID): what a profile's
/// fingerprint holds (`spec/estimator.md`, *Machine fingerprint*):
/// `/sys/hypervisor/type`, DMI, a paravirtual clocksource, the CPU's flag.
fn virtualization_without_cpuid(
    cpu: Option<&CpuInfo>,
    clocksources: &[String],
) -> Option<Virtualization> {
    let found = |hypervisor: String, source: &str| Virtualization {
        hypervisor,
        source: source.to_string(),
    };
    if let Some(name) =
        read_text("/sys/hypervisor/type").and_then(|t| hypervisor_from_sysfs_type(&t))
    {
        return Some(found(name, "/sys/hypervisor/type"));
    }
    let vendor = read_text("/sys/class/dmi/id/sys_vendor").unwrap_or_default();
    let product = read_text("/sys/class/dmi/id/product_name").unwrap_or_default();
    if let Some(name) = hypervisor_from_dmi(&vendor, &product) {
        return Some(found(name, "/sys/class/dmi/id"));
    }
    if let Some(name) = hypervisor_from_clocksources(clocksources) {
        return Some(found(name, "/sys/devices/system/clocksource"));
    }
    if cpu.is_some_and(|c| c.has_flag("hypervisor")) {
        return Some(found("unknown".to_string(), "/proc/cpuinfo"));
    }
    None
}

/// The hypervisor a paravirtual clocksource names: `kvm-clock` (KVM),
/// `hyperv_clocksource_tsc_page` (Hyper-V), `xen` (Xen), in that order.
pub(crate) fn hypervisor_from_clocksources(available: &[String]) -> Option<String> {
    [
        ("kvm-clock", "KVM"),
        ("hyperv_clocksource_tsc_page", "Hyper-V"),
        ("xen", "Xen"),
    ]
    .iter()
    .find(|(source, _)| available.iter().any(|a| a == source))
    .map(|(_, name)| name.to_string())
}

/// `uname -r` and `uname -v`.
fn uname() -> (Option<String>, Option<String>) {
    // SAFETY: utsname is plain old data; all-zero is a valid value.
    let mut buf: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `buf` is a valid, writable utsname.
    if unsafe { libc::uname(&mut buf) } != 0 {
        return (
            read_text("/proc/sys/kernel/osrelease"),
            read_text("/proc/sys/kernel/version"),
        );
    }
    let field = |chars: &[libc::c_char]| {
        let bytes: Vec<u8> = chars
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        let text = String::from_utf8_lossy(&bytes).trim().to_string();
        (!text.is_empty()).then_some(text)
    };
    (field(&buf.release), field(&buf.version))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO_X86: &str = "\
processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Processor
cpu MHz\t\t: 2700.000
flags\t\t: fpu tsc msr rdtscp lm constant_tsc nonstop_tsc tsc_known_freq hypervisor arat

processor\t: 1
model name\t: Other CPU
flags\t\t: fpu
";

    const CPUINFO_ARM: &str = "\
processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes crc32 cpuid
CPU implementer\t: 0x41
";

    const TIMER_LIST: &str = "\
Timer List Version: v0.10
HRTIMER_MAX_CLOCK_BASES: 8
now at 344651755452 nsecs

cpu: 0
 clock 0:
  .base:       0000000051514475
  .resolution: 1 nsecs
  .expires_next   : 344652000000 nsecs
  .hres_active    : 1
  .nr_events      : 74567
cpu: 1
  .hres_active    : 1
";

    #[test]
    fn the_cpu_vendor_is_the_first_processors() {
        assert_eq!(
            parse_cpu_vendor(CPUINFO_X86).as_deref(),
            Some("GenuineIntel")
        );
        let arm = "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n\nprocessor\t: 1\nCPU implementer\t: 0x51\n";
        assert_eq!(parse_cpu_vendor(arm).as_deref(), Some("0x41"));
        assert_eq!(parse_cpu_vendor(""), None);
    }

    #[test]
    fn cpuinfo_x86_first_processor_only() {
        let cpu = parse_cpuinfo(CPUINFO_X86);
        assert_eq!(cpu.model.as_deref(), Some("Intel(R) Xeon(R) Processor"));
        assert_eq!(
            cpu.flags,
            [
                "fpu",
                "tsc",
                "msr",
                "rdtscp",
                "lm",
                "constant_tsc",
                "nonstop_tsc",
                "tsc_known_freq",
                "hypervisor",
                "arat"
            ]
        );
        assert_eq!(
            tsc_flags(&cpu),
            Some(TscInfo {
                constant_tsc: true,
                nonstop_tsc: true,
                tsc_known_freq: true,
                tsc_reliable: false,
                rdtscp: true,
                reported_frequency_hz: None,
                measured_frequency_hz: None,
            })
        );
    }

    #[test]
    fn cpuinfo_arm_has_no_tsc() {
        let cpu = parse_cpuinfo(CPUINFO_ARM);
        assert_eq!(cpu.model, None);
        assert!(cpu.has_flag("asimd"));
        assert_eq!(tsc_flags(&cpu), None);
        assert_eq!(parse_cpuinfo(""), CpuInfo::default());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-1\n"), Some(2));
        assert_eq!(parse_cpu_list("0-3,6,8-9"), Some(7));
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list(""), None);
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn timer_list_hres() {
        assert_eq!(parse_timer_list(TIMER_LIST), Some(true));
        let off = TIMER_LIST.replace(".hres_active    : 1\n  .nr", ".hres_active    : 0\n  .nr");
        assert_eq!(parse_timer_list(&off), Some(false));
        assert_eq!(parse_timer_list("Timer List Version: v0.10\n"), None);
    }

    #[test]
    fn preemption_from_uname() {
        let p = |v: &str| parse_preemption(v, None);
        assert_eq!(p("#1 SMP PREEMPT_DYNAMIC @0"), Preemption::Dynamic);
        assert_eq!(
            p("#1 SMP PREEMPT_RT Thu Jan 1 00:00:00 UTC 2024"),
            Preemption::Rt
        );
        assert_eq!(p("#1 SMP PREEMPT Debian 6.1.0"), Preemption::Full);
        assert_eq!(
            p("#45-Ubuntu SMP Fri Aug 30 12:02:04 UTC 2024"),
            Preemption::NoneOrVoluntary
        );
        assert_eq!(p(""), Preemption::Unknown);
        assert_eq!(parse_preemption("#1 SMP", Some("1\n")), Preemption::Rt);
    }

    #[test]
    fn preempt_mode_sources() {
        assert_eq!(
            parse_debugfs_preempt("none voluntary (full) lazy\n").as_deref(),
            Some("full")
        );
        assert_eq!(parse_debugfs_preempt("none voluntary full"), None);
        assert_eq!(
            parse_cmdline_preempt("BOOT_IMAGE=/vmlinuz ro preempt=voluntary quiet").as_deref(),
            Some("voluntary")
        );
        assert_eq!(parse_cmdline_preempt("ro quiet -- preempt=full"), None);
        assert_eq!(parse_cmdline_preempt("ro preempt="), None);
    }

    #[test]
    fn steal_from_proc_stat() {
        let stat = "cpu  100 0 100 700 50 0 0 50 0 0\ncpu0 50 0 50 350 25 0 0 25 0 0\n";
        assert_eq!(parse_steal_fraction(stat), Some(0.05));
        assert_eq!(parse_steal_fraction("cpu  1 2 3\n"), None);
        assert_eq!(parse_steal_fraction("intr 5\n"), None);
    }

    #[test]
    fn hypervisor_names() {
        assert_eq!(hypervisor_from_sysfs_type("xen\n").as_deref(), Some("Xen"));
        assert_eq!(hypervisor_from_sysfs_type(""), None);
        assert_eq!(
            hypervisor_from_dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)").as_deref(),
            Some("QEMU/KVM")
        );
        assert_eq!(
            hypervisor_from_dmi("Microsoft Corporation", "Virtual Machine").as_deref(),
            Some("Hyper-V")
        );
        assert_eq!(
            hypervisor_from_dmi("VMware, Inc.", "VMware7,1").as_deref(),
            Some("VMware")
        );
        assert_eq!(hypervisor_from_dmi("Amazon EC2", "m5.metal"), None);
        let sources = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            hypervisor_from_clocksources(&sources(&["tsc", "kvm-clock"])).as_deref(),
            Some("KVM")
        );
        assert_eq!(
            hypervisor_from_clocksources(&sources(&["hyperv_clocksource_tsc_page", "tsc"]))
                .as_deref(),
            Some("Hyper-V")
        );
        assert_eq!(
            hypervisor_from_clocksources(&sources(&["xen", "tsc"])).as_deref(),
            Some("Xen")
        );
        assert_eq!(
            hypervisor_from_clocksources(&sources(&["tsc", "hpet", "acpi_pm"])),
            None
        );
        assert_eq!(hypervisor_from_dmi("Dell Inc.", "PowerEdge R640"), None);
    }

    #[test]
    fn idle_state_files() {
        assert_eq!(
            parse_idle_state("C6\n", "133\n", Some("400\n"), Some("0\n")),
            Some(IdleState {
                name: "C6".to_string(),
                exit_latency_us: 133,
                target_residency_us: Some(400),
                disabled: false,
            })
        );
        assert_eq!(
            parse_idle_state("POLL", "0", None, Some("1")).map(|s| s.disabled),
            Some(true)
        );
        assert_eq!(parse_idle_state("C1", "n/a", None, None), None);
    }

    #[test]
    fn tick_rate_from_coarse_resolution() {
        assert_eq!(tick_hz_from_resolution(4_000_000), Some(250));
        assert_eq!(tick_hz_from_resolution(1_000_000), Some(1000));
        assert_eq!(tick_hz_from_resolution(3_333_333), Some(300));
        assert_eq!(tick_hz_from_resolution(10_000_000), Some(100));
        assert_eq!(tick_hz_from_resolution(1), None);
    }
}
