//! One row per cell with every statistic in ns, for spreadsheets. The
//! histogram is left to the JSON export.

use super::Exporter;
use crate::bench::BenchReport;
use anyhow::Result;
use std::fmt::Write as _;

/// Writes the cells as CSV.
pub struct CsvExporter;

/// The header row.
pub const COLUMNS: &str = "method,duration_ns,samples,warmup,min_ns,mean_ns,stddev_ns,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,early,cpu_percent,wall_ns,cpu_ns,timer_slack_ns,return_p50_ns,return_p90_ns,late_share";

/// Quotes a field if it needs it (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

impl Exporter for CsvExporter {
    fn serialize(&self, report: &BenchReport) -> Result<Vec<u8>> {
        let mut out = String::from(COLUMNS);
        out.push('\n');
        for r in &report.results {
            let s = &r.stats;
            let _ = writeln!(
                out,
                "{},{},{},{},{},{:.1},{:.1},{},{},{},{},{},{},{:.3},{},{},{},{},{},{}",
                field(&r.method),
                r.duration_ns,
                s.samples,
                r.warmup,
                s.min_ns,
                s.mean_ns,
                s.stddev_ns,
                s.p50_ns,
                s.p90_ns,
                s.p99_ns,
                s.p999_ns,
                s.max_ns,
                s.early,
                s.cpu_percent,
                s.wall_ns,
                s.cpu_ns,
                r.timer_slack_ns.map_or(String::new(), |v| v.to_string()),
                r.ret.map_or(String::new(), |v| v.p50_ns.to_string()),
                r.ret.map_or(String::new(), |v| v.p90_ns.to_string()),
                r.late_share.map_or(String::new(), |v| format!("{v:.6}")),
            );
        }
        Ok(out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(field("busy-loop"), "busy-loop");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
