//! `keeptime clocks`: seed 002's investigation done in one command. Renders
//! [`keeptime::clocks::inspect`]: a table of the clocks, the machine, and the
//! findings in plain words; or the whole report as JSON.

use crate::output::format;
use anyhow::Result;
use keeptime::clocks::{ClockInfo, ClockReport, MachineInfo, Severity};
use std::fmt::Write as _;

/// The machine description for bench results, read before anything changed
/// the thread's timer slack.
pub fn machine_info() -> MachineInfo {
    keeptime::clocks::inspect().machine
}

/// Runs `keeptime clocks`.
pub fn run(json: bool) -> Result<()> {
    let report = keeptime::clocks::inspect();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        let color = console::colors_enabled();
        print!("{}", render(&report, color));
    }
    Ok(())
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

fn machine_lines(m: &MachineInfo) -> Vec<(&'static str, String)> {
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

/// The human-readable report.
pub fn render(report: &ClockReport, color: bool) -> String {
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
    let lines = machine_lines(&report.machine);
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

    #[test]
    fn renders_the_real_report() {
        let report = keeptime::clocks::inspect_with(&keeptime::clocks::InspectOptions {
            reads_per_batch: 10,
            batches: 2,
            granularity_reads: 100,
            time_limit_per_clock: std::time::Duration::from_millis(2),
            tsc_calibration: std::time::Duration::from_millis(2),
        });
        let text = render(&report, false);
        assert!(text.contains("MONOTONIC"));
        assert!(text.contains("machine") && text.contains("findings"));
    }
}
