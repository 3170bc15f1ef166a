//! Everything a person reads: numbers with automatic units ([`format`](mod@format)), the
//! result tables ([`table`]), the verdicts ([`verdict`]) and the progress bar
//! ([`progress`]).

pub mod format;
pub mod progress;
pub mod table;
pub mod verdict;

use crate::bench::{BenchReport, CellResult};
use std::fmt::Write as _;

/// The results of `report` grouped by duration, in run order.
pub fn by_duration(report: &BenchReport) -> Vec<(u64, Vec<&CellResult>)> {
    let mut groups: Vec<(u64, Vec<&CellResult>)> = Vec::new();
    for r in &report.results {
        match groups.iter_mut().find(|(d, _)| *d == r.duration_ns) {
            Some((_, v)) => v.push(r),
            None => groups.push((r.duration_ns, vec![r])),
        }
    }
    groups
}

/// Two lines on what was measured where, and how to read the tables.
pub fn header(report: &BenchReport) -> String {
    let m = &report.machine;
    let mut machine = format!("{} {}", m.os, m.arch);
    if let Some(k) = &m.kernel {
        let _ = write!(machine, ", kernel {k}");
    }
    if let Some(v) = &m.virtualization {
        let _ = write!(machine, ", {v} guest");
    }
    if let Some(c) = &m.clocksource {
        let _ = write!(machine, ", clocksource {c}");
    }
    if let Some(s) = m.timer_slack_ns {
        let _ = write!(machine, ", default timer slack {}", format::duration(s));
    }
    let groups = by_duration(report);
    let methods = groups.first().map_or(0, |(_, v)| v.len());
    format!(
        "keeptime bench: {methods} methods × {} durations on {machine}\n\
         error = first clock reading after the wait − deadline (negative = early); \
         CPU = thread CPU time ÷ wall time; * = best in column (errors: among methods never early)\n",
        groups.len()
    )
}

/// One duration's title, table and verdict.
pub fn section(duration_ns: u64, results: &[&CellResult], color: bool) -> String {
    let title = format!("wait {}", format::duration(duration_ns));
    let mut out = String::new();
    if color {
        let _ = writeln!(out, "{}", console::style(title).bold().underlined());
    } else {
        let _ = writeln!(out, "{title}");
    }
    out.push_str(&table::Table::new(results).render_text(color));
    if let Some(v) = verdict::verdict(results) {
        if color {
            let _ = writeln!(out, "{}", console::style(v).bold());
        } else {
            let _ = writeln!(out, "{v}");
        }
    }
    for r in results {
        if let Some(line) = sleeper_line(r) {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

/// What a keeptime cell's sleeper says it spent, in one line.
pub fn sleeper_line(r: &CellResult) -> Option<String> {
    let a = r.sleeper?;
    let n = a.sleeps.max(1) as f64;
    Some(format!(
        "{} (tail target {} %): {:.2} % of sleeps late by the OS (woke after the deadline), {:.2} OS waits and {} of spin per sleep, estimated CPU {:.2} % (measured {:.2} %)",
        r.method,
        f64::from(a.tail_target_ppm) / 1e4,
        100.0 * a.late as f64 / n,
        a.os_waits as f64 / n,
        format::duration((a.spin_ns as f64 / n) as u64),
        100.0 * a.cpu_estimate_ns as f64 / n / r.duration_ns.max(1) as f64,
        r.stats.cpu_percent
    ))
}

/// The whole human-readable result: header, then a section per duration.
pub fn render(report: &BenchReport, color: bool) -> String {
    let mut out = header(report);
    for (d, results) in by_duration(report) {
        out.push('\n');
        out.push_str(&section(d, &results, color));
    }
    out
}
