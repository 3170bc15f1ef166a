//! Everything a person reads: numbers with automatic units ([`format`](mod@format)), the
//! result tables ([`table`]), the verdicts ([`verdict`]) and the progress bar
//! ([`progress`]).

pub mod format;
pub mod progress;
pub mod table;
pub mod verdict;

use crate::bench::result::CrowdResult;
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
         error = the caller's first clock reading after the call returns − deadline (negative = early); \
         return = that reading − the method's own last reading;\n\
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
    if let Some(line) = verdict::handoff_line(results) {
        let _ = writeln!(out, "{line}");
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
    let mut line = format!(
        "{} (tail target {} %): {:.2} % of sleeps late by the OS (woke after the deadline), {:.2} OS waits and {} of spin per sleep, estimated CPU {:.2} % (measured {:.2} %)",
        r.method,
        f64::from(a.tail_target_ppm) / 1e4,
        100.0 * a.late as f64 / n,
        a.os_waits as f64 / n,
        format::duration((a.spin_ns as f64 / n) as u64),
        100.0 * a.cpu_estimate_ns as f64 / n / r.duration_ns.max(1) as f64,
        r.stats.cpu_percent
    );
    if a.unproven_sleeps > 0 {
        // A young model plans on its largest wake-ups yet: its CPU here is
        // its learning's, not its steady state's (`make bench-convergence`).
        let _ = write!(
            line,
            "; {} of {} sleeps planned on margins not yet established at the target (still learning: a larger --warmup measures its steady state)",
            a.unproven_sleeps, a.sleeps
        );
    }
    Some(line)
}

/// The whole human-readable result: header, then a section per duration,
/// then the crowd block when there is one.
pub fn render(report: &BenchReport, color: bool) -> String {
    let mut out = header(report);
    for (d, results) in by_duration(report) {
        out.push('\n');
        out.push_str(&section(d, &results, color));
    }
    if let Some(rows) = report.crowd.as_deref().filter(|r| !r.is_empty()) {
        out.push('\n');
        out.push_str(&crowd_section(rows, report.machine.cpus, color));
    }
    out
}

/// Column headers of the crowd table.
pub const CROWD_HEADERS: [&str; 8] = [
    "method",
    "p50",
    "p99",
    "max",
    "early",
    "late > 2 µs",
    "CPU (process)",
    "samples",
];

/// The crowd block's title line (without a trailing newline).
pub fn crowd_title(rows: &[CrowdResult], cpus: Option<u64>) -> String {
    let first = &rows[0];
    let per_thread = first.samples / first.threads.max(1);
    let cpus = cpus.map_or(String::new(), |n| {
        format!(" on {n} CPU{}", if n == 1 { "" } else { "s" })
    });
    format!(
        "crowd: {} threads each sleeping {} in a loop at once{cpus}, about {} sleeps per thread per method",
        first.threads,
        format::duration(first.duration_ns),
        per_thread
    )
}

/// The crowd table's cells, one row per method, as printed.
pub fn crowd_rows(rows: &[CrowdResult]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| {
            vec![
                r.method.clone(),
                format::ns(r.p50_ns),
                format::ns(r.p99_ns),
                format::ns(r.max_ns),
                r.early.to_string(),
                format::percent(100.0 * r.late_share),
                format::percent(r.cpu_percent),
                r.samples.to_string(),
            ]
        })
        .collect()
}

/// keeptime's crowd figures as ratios to the same run's baselines, one
/// line: `keeptime ÷ clock-nanosleep-abs: p50 0.28×, p99 1.3×, max 10×, CPU 15×; …`.
/// `None` without a keeptime row or a baseline.
pub fn crowd_ratios(rows: &[CrowdResult]) -> Option<String> {
    let k = rows.iter().find(|r| r.method == "keeptime")?;
    let ratio = |a: f64, b: f64| {
        if a >= 0.0 && b > 0.0 && (a / b).is_finite() {
            let r = a / b;
            if r < 0.095 {
                format!("{r:.3}×")
            } else if r < 0.995 {
                format!("{r:.2}×")
            } else {
                format!("{}×", format::ratio(r))
            }
        } else {
            "n/a".into()
        }
    };
    let parts: Vec<String> = rows
        .iter()
        .filter(|r| r.method != "keeptime")
        .map(|b| {
            format!(
                "÷ {}: p50 {}, p99 {}, max {}, CPU {}",
                b.method,
                ratio(k.p50_ns as f64, b.p50_ns as f64),
                ratio(k.p99_ns as f64, b.p99_ns as f64),
                ratio(k.max_ns as f64, b.max_ns as f64),
                ratio(k.cpu_percent, b.cpu_percent)
            )
        })
        .collect();
    (!parts.is_empty()).then(|| format!("keeptime {}", parts.join("; ")))
}

/// The crowd block for the terminal: title, aligned table, and how to read it.
pub fn crowd_section(rows: &[CrowdResult], cpus: Option<u64>, color: bool) -> String {
    let mut out = String::new();
    let title = crowd_title(rows, cpus);
    if color {
        let _ = writeln!(out, "{}", console::style(title).bold().underlined());
    } else {
        let _ = writeln!(out, "{title}");
    }
    let body = crowd_rows(rows);
    let mut widths: Vec<usize> = CROWD_HEADERS.iter().map(|h| h.chars().count()).collect();
    for row in &body {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let header: Vec<String> = CROWD_HEADERS.iter().map(|h| h.to_string()).collect();
    for (k, row) in std::iter::once(&header).chain(&body).enumerate() {
        let mut text = String::new();
        for (i, c) in row.iter().enumerate() {
            let fill = " ".repeat(widths[i] - c.chars().count());
            if i == 0 {
                let _ = write!(text, "  {c}{fill}");
            } else {
                let _ = write!(text, "  {fill}{c}");
            }
        }
        let text = text.trim_end();
        if k == 0 && color {
            let _ = writeln!(out, "{}", console::style(text).bold());
        } else {
            let _ = writeln!(out, "{text}");
        }
    }
    if let Some(line) = crowd_ratios(rows) {
        if color {
            let _ = writeln!(out, "{}", console::style(line).bold());
        } else {
            let _ = writeln!(out, "{line}");
        }
    }
    out.push_str(
        "  errors of every thread's sleeps merged; late = share of sleeps more than 2 µs after the deadline;\n  \
         CPU = the whole process's CPU time ÷ wall time, in % of one core\n",
    );
    out
}

/// The crowd block as Markdown: title and table.
pub fn crowd_markdown(rows: &[CrowdResult], cpus: Option<u64>) -> String {
    let mut out = format!("### {}\n\n", crowd_title(rows, cpus));
    let _ = writeln!(out, "| {} |", CROWD_HEADERS.join(" | "));
    let _ = writeln!(out, "|:---|{}", "---:|".repeat(CROWD_HEADERS.len() - 1));
    for row in crowd_rows(rows) {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    if let Some(line) = crowd_ratios(rows) {
        let _ = writeln!(out, "\n{line}");
    }
    out.push_str(
        "\nErrors of every thread's sleeps merged; late = more than 2 µs after the deadline; \
         CPU = process CPU time ÷ wall time, % of one core.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::{Family, SleeperAccount};

    fn row(method: &str, p50: i64, p99: i64, max: i64, late: f64, cpu: f64) -> CrowdResult {
        CrowdResult {
            method: method.into(),
            threads: 16,
            duration_ns: 1_000_000,
            warmup: 47,
            samples: 32_000,
            p50_ns: p50,
            p99_ns: p99,
            max_ns: max,
            early: 0,
            late_share: late,
            cpu_percent: cpu,
            wall_ns: 2_000_000_000,
            cpu_ns: 0,
        }
    }

    #[test]
    fn the_sleeper_line_says_when_it_is_still_learning() {
        let mut errors = vec![100; 10];
        let stats = crate::bench::stats::Stats::from_errors(&mut errors, 10_000_000, 0).unwrap();
        let mut cell = CellResult {
            method: "keeptime".into(),
            family: Some(Family::Keeptime),
            duration_ns: 10_000_000,
            warmup: 99,
            timer_slack_ns: Some(1),
            stats,
            late_share: None,
            ret: None,
            sleeper: Some(SleeperAccount {
                tail_target_ppm: 10_000,
                sleeps: 200,
                late: 2,
                os_waits: 206,
                spin_ns: 200 * 2_900_000,
                cpu_estimate_ns: 200 * 2_910_000,
                unproven_sleeps: 0,
            }),
        };
        let proven = sleeper_line(&cell).unwrap();
        assert!(proven.starts_with(
            "keeptime (tail target 1 %): 1.00 % of sleeps late by the OS (woke after the deadline), \
             1.03 OS waits and 2.9 ms of spin per sleep, estimated CPU 29.10 %"
        ), "{proven}");
        assert!(!proven.contains("not yet established"), "{proven}");
        cell.sleeper.as_mut().unwrap().unproven_sleeps = 187;
        let young = sleeper_line(&cell).unwrap();
        assert!(young.starts_with(&proven), "{young}");
        assert!(
            young.ends_with(
                "; 187 of 200 sleeps planned on margins not yet established at the target \
             (still learning: a larger --warmup measures its steady state)"
            ),
            "{young}"
        );
    }

    #[test]
    fn crowd_block_text_and_markdown() {
        let rows = [
            row("keeptime", 1_900, 27_000, 610_000, 0.012, 41.0),
            row("clock-nanosleep-abs", 84_000, 163_000, 1_300_000, 1.0, 9.04),
            row("spin-pause", 40, 2_100_000, 12_000_000, 0.25, 199.6),
        ];
        assert_eq!(
            crowd_section(&rows, Some(2), false),
            "\
crowd: 16 threads each sleeping 1 ms in a loop at once on 2 CPUs, about 2000 sleeps per thread per method
  method                   p50      p99      max  early  late > 2 µs  CPU (process)  samples
  keeptime             1.90 µs  27.0 µs   610 µs      0        1.2 %           41 %    32000
  clock-nanosleep-abs  84.0 µs   163 µs  1.30 ms      0        100 %          9.0 %    32000
  spin-pause             40 ns  2.10 ms  12.0 ms      0         25 %          200 %    32000
keeptime ÷ clock-nanosleep-abs: p50 0.023×, p99 0.17×, max 0.47×, CPU 4.5×; ÷ spin-pause: p50 48×, p99 0.013×, max 0.051×, CPU 0.21×
  errors of every thread's sleeps merged; late = share of sleeps more than 2 µs after the deadline;
  CPU = the whole process's CPU time ÷ wall time, in % of one core
"
        );
        assert_eq!(crowd_ratios(&rows[1..]), None);
        let mut zero = rows.clone();
        zero[1].p50_ns = 0;
        assert!(crowd_ratios(&zero)
            .unwrap()
            .starts_with("keeptime ÷ clock-nanosleep-abs: p50 n/a, p99 0.17×"));
        let md = crowd_markdown(&rows[..1], None);
        assert!(md.starts_with(
            "### crowd: 16 threads each sleeping 1 ms in a loop at once, about 2000 sleeps per thread per method\n\n\
             | method | p50 | p99 | max | early | late > 2 µs | CPU (process) | samples |\n\
             |:---|---:|---:|---:|---:|---:|---:|---:|\n\
             | keeptime | 1.90 µs | 27.0 µs | 610 µs | 0 | 1.2 % | 41 % | 32000 |\n"
        ), "{md}");
    }
}
