//! The `keeptime clocks` report in words: the clocks' table, the machine's
//! lines (with the idle-latency state and what this process may do about
//! it), and the findings.

use crate::output::format;
use keeptime::clocks::{ClockInfo, ClockReport, IdleLatency, MachineInfo, Severity};
use keeptime::pmqos::{self, IdleLatencyStatus};
use std::fmt::Write as _;

fn owner_name(uid: u32) -> String {
    if uid == 0 {
        "root".into()
    } else {
        format!("uid {uid}")
    }
}

/// The reason in one of the core's messages, without its "<device> not
/// held: " preamble (written for a refused request).
fn reason(e: &str) -> &str {
    e.split_once(" not held: ").map_or(e, |(_, r)| r)
}

/// The cpuidle line: driver and governor, or that there is none.
pub fn cpuidle_text(st: &IdleLatencyStatus) -> String {
    match (&st.driver, &st.governor) {
        (None, _) => "none (no cpuidle interface in /sys)".into(),
        (Some(d), Some(g)) => format!("driver {d}, governor {g}"),
        (Some(d), None) => format!("driver {d}, no governor"),
    }
}

/// The PM QoS CPU latency in force, in words.
pub fn in_force_text(st: &IdleLatencyStatus) -> String {
    match (st.in_force_us, &st.read_error) {
        (Some(v), _) if v >= pmqos::KERNEL_DEFAULT_US => format!(
            "unconstrained ({} s, the kernel default)",
            pmqos::KERNEL_DEFAULT_US / 1_000_000
        ),
        (Some(v), _) => format!("{v} µs, held by some process"),
        // The core words its open errors for holding a request ("not held:
        // … writing it needs root"); reading is what failed here.
        (None, Some(e)) if e.contains("permission denied") => format!(
            "unknown: this process may not read {} (permission denied)",
            pmqos::DEVICE
        ),
        (None, Some(e)) => format!("unknown: {}", reason(e)),
        (None, None) => "unknown".into(),
    }
}

/// Whether this process may hold a PM QoS request, and if not which
/// permission it lacks.
pub fn may_hold_text(idle: &IdleLatency) -> String {
    let dev = pmqos::DEVICE;
    if idle.status.may_request {
        return format!("yes: this process may open {dev} for writing");
    }
    let refused = reason(idle.status.request_refused.as_deref().unwrap_or("refused"));
    let Some(acc) = idle.device else {
        return format!("no: {dev}: {refused}");
    };
    let who = match idle.euid {
        Some(u) => format!("this process runs as uid {u}"),
        None => "this process is not its owner".into(),
    };
    let mode = acc.mode;
    let in_group = idle.groups.contains(&acc.gid);
    let is_owner = idle.euid == Some(acc.uid);
    let bits = format!("mode {mode:04o}, owner {}", owner_name(acc.uid));
    if mode & 0o002 != 0 || (in_group && mode & 0o020 != 0) || (is_owner && mode & 0o200 != 0) {
        // The mode allows it, yet the check failed (read-only mount, a
        // security module, …): the OS's reason is all there is.
        return format!("no: {refused} ({bits})");
    }
    if mode & 0o222 == 0 {
        return format!("no: {dev} is writable by no one ({bits}); {who}");
    }
    if mode & 0o020 != 0 {
        return format!(
            "no: {dev} is writable by its owner and group {} only ({bits}); {who} and is not in that group",
            acc.gid
        );
    }
    let only = if acc.uid == 0 {
        "root-only".to_string()
    } else {
        format!("writable by its owner ({}) only", owner_name(acc.uid))
    };
    format!("no: {dev} is {only} ({bits}); {who}")
}

const HEADERS: [&str; 7] = [
    "clock",
    "clock_getres",
    "granularity",
    "repeats",
    "read cost",
    "went back",
    "frequency",
];

fn hz(f: u64) -> String {
    if f >= 1_000_000_000 {
        format!("{:.3} GHz", f as f64 / 1e9)
    } else if f >= 1_000_000 {
        format!("{:.3} MHz", f as f64 / 1e6)
    } else {
        format!("{f} Hz")
    }
}

fn clock_row(c: &ClockInfo) -> Vec<String> {
    if !c.available {
        return vec![
            c.name.clone(),
            format!(
                "unavailable: {}",
                c.error.as_deref().unwrap_or("unknown reason")
            ),
        ];
    }
    let opt_ns = |v: Option<u64>| v.map_or("—".to_string(), |n| format::ns(n as i64));
    let granularity = match (c.granularity_ticks, c.granularity_ns) {
        (Some(t), Some(ns)) => format!("{t} ticks ({})", format::ns(ns as i64)),
        (Some(t), None) => format!("{t} ticks"),
        (None, ns) => opt_ns(ns),
    };
    let frequency = match (c.frequency_hz, c.frequency_source) {
        (Some(f), Some(src)) => format!("{} ({src})", hz(f)),
        (Some(f), None) => hz(f),
        _ => String::new(),
    };
    vec![
        c.name.clone(),
        c.resolution_ns.map_or("—".to_string(), format::duration),
        granularity,
        format!("{:.1} %", 100.0 * c.repeat_fraction),
        format!("{:.1} ns", c.read_cost_ns),
        c.monotonic_violations.to_string(),
        frequency,
    ]
}

/// Aligned columns, the first left-aligned; rows shorter than the header
/// (unavailable clocks) run their last cell across the rest.
fn aligned(header: &[&str], rows: &[Vec<String>], color: bool) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows.iter().filter(|r| r.len() == header.len()) {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<String>, out: &mut String, bold: bool| {
        let mut text = String::new();
        for (i, c) in cells.iter().enumerate() {
            let fill = " ".repeat(widths[i].saturating_sub(c.chars().count()));
            let last_of_short = cells.len() < widths.len() && i + 1 == cells.len();
            if i == 0 || last_of_short || i + 1 == widths.len() {
                let _ = write!(text, "  {c}{fill}");
            } else {
                let _ = write!(text, "  {fill}{c}");
            }
        }
        let text = text.trim_end().to_string();
        if bold {
            let _ = writeln!(out, "{}", console::style(text).bold());
        } else {
            let _ = writeln!(out, "{text}");
        }
    };
    line(
        header.iter().map(|h| h.to_string()).collect(),
        &mut out,
        color,
    );
    for row in rows {
        line(row.clone(), &mut out, false);
    }
    out
}

fn machine_lines(m: &MachineInfo, idle: Option<&IdleLatency>) -> Vec<(&'static str, String)> {
    let mut lines = Vec::new();
    let mut system = format!("{} {}", m.os, m.arch);
    if let Some(r) = &m.kernel_release {
        let _ = write!(system, ", kernel {r}");
    }
    lines.push(("system", system));
    if let Some(v) = &m.kernel_version {
        lines.push(("kernel build", v.clone()));
    }
    let preemption = match &m.preemption_mode {
        Some(mode) => format!("{} ({mode})", m.preemption),
        None => m.preemption.to_string(),
    };
    lines.push(("preemption", preemption));
    let mut cpu = m
        .cpu_model
        .clone()
        .unwrap_or_else(|| "unknown model".into());
    if let Some(n) = m.cpus_online {
        let _ = write!(cpu, "; {n} online");
    }
    if let Some(n) = m.cpus_available {
        let _ = write!(cpu, ", {n} available to this process");
    }
    lines.push(("CPU", cpu));
    if let Some(cs) = &m.clocksource {
        let meaning = match cs.as_str() {
            "tsc" | "arch_sys_counter" | "kvm-clock" => {
                "read in user space through the vDSO (fast)"
            }
            "hpet" | "acpi_pm" | "jiffies" | "pit" => "every clock read is a system call (slow)",
            _ => "",
        };
        let mut s = cs.clone();
        if !meaning.is_empty() {
            let _ = write!(s, ": {meaning}");
        }
        if !m.available_clocksources.is_empty() {
            let _ = write!(s, "; available: {}", m.available_clocksources.join(", "));
        }
        lines.push(("clocksource", s));
    }
    if let Some(t) = &m.tsc {
        let flags: Vec<&str> = [
            (t.constant_tsc, "constant_tsc"),
            (t.nonstop_tsc, "nonstop_tsc"),
            (t.tsc_known_freq, "tsc_known_freq"),
            (t.tsc_reliable, "tsc_reliable"),
            (t.rdtscp, "rdtscp"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|&(_, name)| name)
        .collect();
        let mut s = if flags.is_empty() {
            "no invariant-TSC flags".to_string()
        } else {
            flags.join(" ")
        };
        if let Some(f) = t.reported_frequency_hz {
            let _ = write!(s, "; CPUID says {}", hz(f));
        }
        if let Some(f) = t.measured_frequency_hz {
            let _ = write!(s, "; measured {}", hz(f));
        }
        lines.push(("TSC", s));
    }
    if let Some(s) = m.timer_slack_ns {
        lines.push((
            "timer slack",
            format!(
                "{} (this thread)",
                format::ns(i64::try_from(s).unwrap_or(i64::MAX))
            ),
        ));
    }
    let mut timers = String::new();
    if let Some(hz) = m.tick_hz {
        let _ = write!(timers, "tick {hz} Hz");
    }
    if let Some(on) = m.high_resolution_timers {
        if !timers.is_empty() {
            timers.push_str("; ");
        }
        let _ = write!(
            timers,
            "high-resolution timers {}",
            if on { "active" } else { "INACTIVE" }
        );
        if let Some(src) = &m.high_resolution_timers_source {
            let _ = write!(timers, " ({src})");
        }
    }
    if !timers.is_empty() {
        lines.push(("timers", timers));
    }
    if !m.idle_states.is_empty() || m.idle_driver.is_some() {
        let states: Vec<String> = m
            .idle_states
            .iter()
            .map(|s| {
                format!(
                    "{} {} µs{}",
                    s.name,
                    s.exit_latency_us,
                    if s.disabled { " (disabled)" } else { "" }
                )
            })
            .collect();
        let mut s = m
            .idle_driver
            .clone()
            .unwrap_or_else(|| "unknown driver".into());
        if !states.is_empty() {
            let _ = write!(s, ": {} (exit latency)", states.join(", "));
        }
        lines.push(("idle states", s));
    }
    if let Some(idle) = idle {
        lines.push(("cpuidle", cpuidle_text(&idle.status)));
        lines.push(("CPU latency QoS", in_force_text(&idle.status)));
        lines.push(("may request", may_hold_text(idle)));
    }
    if m.cpufreq_driver.is_some() || m.cpufreq_governor.is_some() {
        lines.push((
            "cpufreq",
            format!(
                "{}, governor {}",
                m.cpufreq_driver.as_deref().unwrap_or("unknown driver"),
                m.cpufreq_governor.as_deref().unwrap_or("unknown")
            ),
        ));
    }
    let mut virt = match &m.virtualization {
        Some(v) => format!("{} (from {})", v.hypervisor, v.source),
        None => "none detected".to_string(),
    };
    if let Some(steal) = m.steal_fraction {
        let _ = write!(
            virt,
            "; steal {} since boot",
            format::percent(100.0 * steal)
        );
    }
    lines.push(("virtualisation", virt));
    if let Some(tai) = m.tai_offset_s {
        lines.push(("TAI − UTC", format!("{tai} s")));
    }
    lines
}

/// The human-readable report; `idle` adds the idle-latency lines to the
/// machine section.
pub fn render(report: &ClockReport, idle: Option<&IdleLatency>, color: bool) -> String {
    let title = |s: &str| {
        if color {
            console::style(s).bold().underlined().to_string()
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    let _ = writeln!(out, "{}", title("clocks"));
    let rows: Vec<Vec<String>> = report.clocks.iter().map(clock_row).collect();
    out.push_str(&aligned(&HEADERS, &rows, color));
    out.push_str(
        "  granularity: smallest step between successive reads; repeats: reads equal to the one before;\n  \
         read cost: median ns per read; went back: reads lower than the one before\n",
    );

    let _ = writeln!(out, "\n{}", title("machine"));
    let lines = machine_lines(&report.machine, idle);
    let width = lines
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    for (k, v) in lines {
        let fill = " ".repeat(width - k.chars().count());
        let _ = writeln!(out, "  {k}{fill}  {v}");
    }

    let _ = writeln!(out, "\n{}", title("findings"));
    if report.findings.is_empty() {
        let _ = writeln!(out, "  nothing unusual");
    }
    let mut findings: Vec<_> = report.findings.iter().collect();
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    for f in findings {
        let tag = match (f.severity, color) {
            (Severity::Warning, true) => console::style("warning").yellow().bold().to_string(),
            (s, _) => s.to_string(),
        };
        let _ = writeln!(out, "  {tag}: {}", f.message);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use keeptime::clocks::DeviceAccess;

    fn status(driver: Option<&str>, in_force_us: Option<i32>, may: bool) -> IdleLatencyStatus {
        IdleLatencyStatus {
            driver: driver.map(str::to_owned),
            governor: driver.map(|_| "menu".to_owned()),
            in_force_us,
            read_error: in_force_us
                .is_none()
                .then(|| "/dev/cpu_dma_latency not held: permission denied (writing it needs root or write access to the device)".to_owned()),
            may_request: may,
            request_refused: (!may).then(|| {
                "/dev/cpu_dma_latency not held: permission denied (writing it needs root or write access to the device)".to_owned()
            }),
        }
    }

    fn idle(st: IdleLatencyStatus, mode: u32, gid: u32, euid: u32, groups: &[u32]) -> IdleLatency {
        IdleLatency {
            status: st,
            device: Some(DeviceAccess { mode, uid: 0, gid }),
            euid: Some(euid),
            groups: groups.to_vec(),
        }
    }

    #[test]
    fn idle_latency_lines() {
        let st = status(Some("haltpoll"), Some(pmqos::KERNEL_DEFAULT_US), false);
        let i = idle(st, 0o600, 0, 1000, &[1000, 27]);
        let lines = machine_lines(&MachineInfo::default(), Some(&i));
        let at = lines.iter().position(|(k, _)| *k == "cpuidle").unwrap();
        assert_eq!(
            lines[at..at + 3],
            [
                ("cpuidle", "driver haltpoll, governor menu".to_string()),
                (
                    "CPU latency QoS",
                    "unconstrained (2000 s, the kernel default)".to_string()
                ),
                (
                    "may request",
                    "no: /dev/cpu_dma_latency is root-only (mode 0600, owner root); this process runs as uid 1000"
                        .to_string()
                ),
            ]
        );
        // Without the idle state, the machine section is as before.
        assert!(machine_lines(&MachineInfo::default(), None)
            .iter()
            .all(|(k, _)| *k != "cpuidle"));
    }

    #[test]
    fn value_in_force_in_words() {
        let text = |v| in_force_text(&status(Some("none"), v, true));
        assert_eq!(text(Some(0)), "0 µs, held by some process");
        assert_eq!(text(Some(20)), "20 µs, held by some process");
        assert_eq!(
            text(Some(2_000_000_000)),
            "unconstrained (2000 s, the kernel default)"
        );
        assert_eq!(
            text(None),
            "unknown: this process may not read /dev/cpu_dma_latency (permission denied)"
        );
        let mut missing = status(None, None, false);
        missing.read_error = Some(
            "/dev/cpu_dma_latency not held: no such device (no PM QoS CPU latency interface here)"
                .into(),
        );
        assert_eq!(
            in_force_text(&missing),
            "unknown: no such device (no PM QoS CPU latency interface here)"
        );
        assert_eq!(
            cpuidle_text(&status(None, None, false)),
            "none (no cpuidle interface in /sys)"
        );
    }

    #[test]
    fn which_permission_is_lacking() {
        let refused = |mode, gid, groups: &[u32]| {
            may_hold_text(&idle(
                status(Some("none"), Some(0), false),
                mode,
                gid,
                1000,
                groups,
            ))
        };
        assert_eq!(
            refused(0o660, 994, &[1000]),
            "no: /dev/cpu_dma_latency is writable by its owner and group 994 only (mode 0660, owner root); this process runs as uid 1000 and is not in that group"
        );
        assert_eq!(
            refused(0o444, 0, &[1000]),
            "no: /dev/cpu_dma_latency is writable by no one (mode 0444, owner root); this process runs as uid 1000"
        );
        // The mode allows it, so the OS's reason is all there is.
        assert_eq!(
            refused(0o660, 994, &[1000, 994]),
            "no: permission denied (writing it needs root or write access to the device) (mode 0660, owner root)"
        );
        let mut owned = idle(
            status(Some("none"), Some(0), false),
            0o600,
            0,
            1000,
            &[1000],
        );
        owned.device = Some(DeviceAccess {
            mode: 0o600,
            uid: 1001,
            gid: 1001,
        });
        assert_eq!(
            may_hold_text(&owned),
            "no: /dev/cpu_dma_latency is writable by its owner (uid 1001) only (mode 0600, owner uid 1001); this process runs as uid 1000"
        );
        let mut missing = idle(status(None, None, false), 0, 0, 1000, &[]);
        missing.device = None;
        missing.status.request_refused = Some(
            "/dev/cpu_dma_latency not held: no such device (no PM QoS CPU latency interface here)"
                .into(),
        );
        assert_eq!(
            may_hold_text(&missing),
            "no: /dev/cpu_dma_latency: no such device (no PM QoS CPU latency interface here)"
        );
        assert_eq!(
            may_hold_text(&idle(
                status(Some("none"), Some(0), true),
                0o600,
                0,
                0,
                &[0]
            )),
            "yes: this process may open /dev/cpu_dma_latency for writing"
        );
    }

    #[test]
    fn renders_the_real_report() {
        let report = keeptime::clocks::inspect_with(&keeptime::clocks::InspectOptions {
            reads_per_batch: 10,
            batches: 2,
            granularity_reads: 100,
            time_limit_per_clock: std::time::Duration::from_millis(2),
            tsc_calibration: std::time::Duration::from_millis(2),
        });
        let text = render(&report, report.idle_latency.as_ref(), false);
        assert!(text.contains("MONOTONIC"));
        assert!(text.contains("machine") && text.contains("findings"));
    }
}
