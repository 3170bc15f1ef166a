//! The per-duration result table, built once and rendered either for a
//! terminal (aligned, best figures in colour and starred) or as Markdown.

use super::format;
use crate::bench::CellResult;
use std::fmt::Write as _;

/// Column headers of the result table.
pub const HEADERS: [&str; 11] = [
    "method",
    "p50",
    "p90",
    "p99",
    "p99.9",
    "max",
    "mean ± σ",
    "early",
    "CPU",
    "samples",
    "return p50 / p90",
];

/// One table cell: its text and whether it is the best in its column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// What is printed.
    pub text: String,
    /// Best figure of its column (closest to zero error, or least CPU).
    pub best: bool,
}

/// The rows of one duration's table.
#[derive(Clone, Debug)]
pub struct Table {
    /// One row per method, each with [`HEADERS`]`.len()` cells.
    pub rows: Vec<Vec<Cell>>,
}

/// Marks the minimum of `key` over the `eligible` rows (all ties), when there
/// are two rows or more.
fn best_of(
    results: &[&CellResult],
    eligible: &[bool],
    key: impl Fn(&CellResult) -> f64,
) -> Vec<bool> {
    let keys: Vec<f64> = results.iter().map(|r| key(r)).collect();
    let min = keys
        .iter()
        .zip(eligible)
        .filter(|(_, &e)| e)
        .map(|(&k, _)| k)
        .fold(f64::INFINITY, f64::min);
    keys.iter()
        .zip(eligible)
        .map(|(&k, &e)| results.len() > 1 && e && k == min)
        .collect()
}

impl Table {
    /// The table of `results` (one duration's cells, in run order). The best
    /// error figures are the closest to zero among the methods that never
    /// returned early (among all when every method did): an early return
    /// breaks the contract a small error would otherwise advertise. The best
    /// CPU is the least.
    pub fn new(results: &[&CellResult]) -> Table {
        let all = vec![true; results.len()];
        let never_early: Vec<bool> = results.iter().map(|r| r.stats.early == 0).collect();
        let accurate = if never_early.iter().any(|&e| e) {
            &never_early
        } else {
            &all
        };
        let abs = |f: fn(&CellResult) -> i64| move |r: &CellResult| (f(r) as f64).abs();
        let best = [
            best_of(results, accurate, abs(|r| r.stats.p50_ns)),
            best_of(results, accurate, abs(|r| r.stats.p90_ns)),
            best_of(results, accurate, abs(|r| r.stats.p99_ns)),
            best_of(results, accurate, abs(|r| r.stats.p999_ns)),
            best_of(results, accurate, abs(|r| r.stats.max_ns)),
            best_of(results, accurate, |r| r.stats.mean_ns.abs()),
            best_of(results, &all, |r| r.stats.cpu_percent),
        ];
        let rows = results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let s = &r.stats;
                let cell = |text: String, best: bool| Cell { text, best };
                vec![
                    cell(r.method.clone(), false),
                    cell(format::ns(s.p50_ns), best[0][i]),
                    cell(format::ns(s.p90_ns), best[1][i]),
                    cell(format::ns(s.p99_ns), best[2][i]),
                    cell(format::ns(s.p999_ns), best[3][i]),
                    cell(format::ns(s.max_ns), best[4][i]),
                    cell(format::mean_sd(s.mean_ns, s.stddev_ns), best[5][i]),
                    cell(s.early.to_string(), false),
                    cell(format::percent(s.cpu_percent), best[6][i]),
                    cell(s.samples.to_string(), false),
                    cell(format::return_pair(r.ret), false),
                ]
            })
            .collect();
        Table { rows }
    }

    /// Aligned text: the method left-aligned, numbers right-aligned, best
    /// figures followed by `*` (and bold green when `color`).
    pub fn render_text(&self, color: bool) -> String {
        // (plain text for width, styled text to print) per cell.
        let header: Vec<(String, String)> = HEADERS
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let plain = if i == 0 {
                    h.to_string()
                } else {
                    format!("{h} ")
                };
                let styled = if color {
                    console::style(&plain).bold().to_string()
                } else {
                    plain.clone()
                };
                (plain, styled)
            })
            .collect();
        let body: Vec<Vec<(String, String)>> = self
            .rows
            .iter()
            .map(|row| {
                row.iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let plain = match (i, c.best) {
                            (0, _) => c.text.clone(),
                            (_, true) => format!("{}*", c.text),
                            (_, false) => format!("{} ", c.text),
                        };
                        let styled = if color && c.best {
                            console::style(&plain).green().bold().to_string()
                        } else {
                            plain.clone()
                        };
                        (plain, styled)
                    })
                    .collect()
            })
            .collect();
        let mut widths = vec![0usize; HEADERS.len()];
        for line in std::iter::once(&header).chain(&body) {
            for (w, (plain, _)) in widths.iter_mut().zip(line) {
                *w = (*w).max(plain.chars().count());
            }
        }
        let mut out = String::new();
        for line in std::iter::once(&header).chain(&body) {
            let mut text = String::new();
            for (i, (plain, styled)) in line.iter().enumerate() {
                let fill = " ".repeat(widths[i] - plain.chars().count());
                if i == 0 {
                    let _ = write!(text, "  {styled}{fill}");
                } else {
                    let _ = write!(text, "  {fill}{styled}");
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        }
        out
    }

    /// A Markdown table, best figures in bold.
    pub fn render_markdown(&self) -> String {
        let mut out = String::new();
        out.push_str("| ");
        out.push_str(&HEADERS.join(" | "));
        out.push_str(" |\n|:---|");
        out.push_str(&"---:|".repeat(HEADERS.len() - 1));
        out.push('\n');
        for row in &self.rows {
            out.push('|');
            for c in row {
                if c.best {
                    let _ = write!(out, " **{}** |", c.text);
                } else {
                    let _ = write!(out, " {} |", c.text);
                }
            }
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::stats::Stats;

    fn cell(method: &str, errors: &[i64], cpu_ns: u64) -> CellResult {
        let mut e = errors.to_vec();
        CellResult {
            method: method.into(),
            family: None,
            duration_ns: 1_000,
            warmup: 0,
            timer_slack_ns: None,
            stats: Stats::from_errors(&mut e, 1_000, cpu_ns).unwrap(),
            late_share: None,
            ret: None,
            sleeper: None,
        }
    }

    #[test]
    fn best_figures_are_marked_and_columns_align() {
        let mut a = cell("spin", &[10, 20, 30], 1_000);
        a.ret = Some(crate::bench::result::Return {
            p50_ns: 12,
            p90_ns: 1_500,
        });
        let b = cell("sleep-default-slack", &[50_000, 50_000, 60_000], 10);
        let early = cell("compensated", &[-1, 0, 1], 10);
        let t = Table::new(&[&a, &b, &early]);
        // p50: 20 ns beats 50 µs; CPU: 1 % beats 100 %.
        assert!(t.rows[0][1].best && !t.rows[1][1].best);
        assert!(t.rows[1][8].best && !t.rows[0][8].best);
        let text = t.render_text(false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        // The early method's tiny errors are not "best".
        assert!(t.rows[2].iter().take(7).all(|c| !c.best));
        assert!(lines[1].contains("20 ns*"), "{text}");
        // Right-aligned numeric columns end at the same place on every line.
        let end = |l: &str, needle: &str| l.find(needle).map(|i| i + needle.len());
        assert_eq!(end(lines[0], "p50"), end(lines[1], "20 ns"));
        // The return column: p50 / p90, or a dash without readings of its own.
        assert_eq!(t.rows[0][10].text, "12 ns / 1.50 µs");
        assert_eq!(t.rows[1][10].text, "—");
        assert!(lines[0].ends_with("return p50 / p90"), "{text}");
        assert!(lines[1].ends_with("12 ns / 1.50 µs"), "{text}");
        let md = t.render_markdown();
        assert!(md.contains("**20 ns**") && md.lines().count() == 5, "{md}");
        assert!(md.contains("| 100 % | 3 | 12 ns / 1.50 µs |"), "{md}");
    }
}
