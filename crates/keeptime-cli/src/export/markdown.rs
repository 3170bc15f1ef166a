//! The terminal's tables and verdicts as Markdown, for READMEs and bug reports.

use super::Exporter;
use crate::bench::BenchReport;
use crate::output::{by_duration, format, table::Table, verdict::verdict};
use anyhow::Result;
use std::fmt::Write as _;

/// Writes one Markdown table per duration.
pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn serialize(&self, report: &BenchReport) -> Result<Vec<u8>> {
        let m = &report.machine;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Measured with {} {} ({} {}) on {} {}{}{}, {}.\n",
            report.tool.name,
            report.tool.version,
            report.runtime.name,
            report.runtime.version,
            m.os,
            m.kernel.as_deref().unwrap_or(""),
            m.virtualization
                .as_deref()
                .map_or(String::new(), |v| format!(", {v} guest")),
            m.clocksource
                .as_deref()
                .map_or(String::new(), |c| format!(", clocksource {c}")),
            report.created,
        );
        out.push_str(
            "Error = the caller's first clock reading after the call returns − deadline (negative = early); \
             return = that reading − the method's own last reading (p50 / p90; — for methods without one); \
             CPU = thread CPU time ÷ wall time; best figures in bold (errors: among methods never early).\n",
        );
        for (d, results) in by_duration(report) {
            let _ = writeln!(out, "\n### wait {}\n", format::duration(d));
            out.push_str(&Table::new(&results).render_markdown());
            if let Some(v) = verdict(&results) {
                let _ = writeln!(out, "\n{v}");
            }
        }
        if let Some(rows) = report.crowd.as_deref().filter(|r| !r.is_empty()) {
            out.push('\n');
            out.push_str(&crate::output::crowd_markdown(rows, m.cpus));
        }
        Ok(out.into_bytes())
    }
}
