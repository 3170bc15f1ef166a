//! The page's tables: a duration's error distribution and cost per method,
//! the crowd rows and the clocks.

use super::chart;
use super::html::{esc, opt};
use super::input::Doc;
use super::palette::Named;
use crate::bench::CellResult;
use crate::output::format;
use std::fmt::Write as _;

pub(super) fn dist_table(h: &mut String, rows: &[(Named, &CellResult)]) {
    h.push_str(
        "<div class=\"scroll\"><table class=\"dist\"><thead><tr><th>method</th><th>samples</th>\
         <th>min</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th>\
         <th>mean ± σ</th><th>early</th><th>return p50 / p90</th></tr></thead><tbody>",
    );
    for (n, c) in rows {
        let s = &c.stats;
        let _ = write!(
            h,
            "<tr><td><i class=\"chip{}\" style=\"background:{c2};border-color:{c2}\"></i>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td{}>{}</td><td>{}</td></tr>",
            if n.hollow { " hollow" } else { "" },
            esc(&n.name),
            s.samples,
            esc(&format::ns(s.min_ns)),
            esc(&format::ns(s.p50_ns)),
            esc(&format::ns(s.p90_ns)),
            esc(&format::ns(s.p99_ns)),
            esc(&format::ns(s.p999_ns)),
            esc(&format::ns(s.max_ns)),
            esc(&format::mean_sd(s.mean_ns, s.stddev_ns)),
            if s.early > 0 { " class=\"bad\"" } else { "" },
            s.early,
            esc(&format::return_pair(c.ret)),
            c2 = chart::hex(n.color),
        );
    }
    h.push_str("</tbody></table></div>\n");
}

pub(super) fn cost_table(h: &mut String, rows: &[(Named, &CellResult)]) {
    let xy: Vec<(f64, f64)> = rows
        .iter()
        .map(|(_, c)| {
            (
                c.stats.cpu_percent.max(chart::CPU_FLOOR),
                (c.stats.p99_ns as f64).max(chart::P99_FLOOR_NS),
            )
        })
        .collect();
    let front = chart::frontier(&xy);
    h.push_str(
        "<div class=\"scroll\"><table class=\"cost\"><thead><tr><th>method</th><th>p99</th>\
         <th>CPU %</th><th>CPU time</th><th>wall time</th><th>on the frontier</th></tr></thead><tbody>",
    );
    for (i, (n, c)) in rows.iter().enumerate() {
        let s = &c.stats;
        let _ = write!(
            h,
            "<tr><td><i class=\"chip{}\" style=\"background:{c2};border-color:{c2}\"></i>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if n.hollow { " hollow" } else { "" },
            esc(&n.name),
            esc(&format::ns(s.p99_ns)),
            esc(&format::percent(s.cpu_percent)),
            esc(&format::ns(s.cpu_ns.min(i64::MAX as u64) as i64)),
            esc(&format::ns(s.wall_ns.min(i64::MAX as u64) as i64)),
            if front.contains(&i) { "yes" } else { "" },
            c2 = chart::hex(n.color),
        );
    }
    h.push_str("</tbody></table></div>\n");
}

/// The crowd rows of `d` (`keeptime bench --crowd N`) as one table.
pub(super) fn crowd_section(h: &mut String, d: &Doc, name_it: bool) {
    let Some(rows) = d.crowd.as_deref().filter(|r| !r.is_empty()) else {
        return;
    };
    let _ = write!(
        h,
        "<section class=\"crowd\"><h2>Crowd{}</h2><p class=\"note\">{}. Errors of every \
         thread's sleeps merged; late = more than 2 µs after the deadline; CPU = the whole \
         process's CPU time ÷ wall time, in % of one core.</p><div class=\"scroll\">\
         <table class=\"crowd\"><thead><tr>",
        if name_it {
            format!(" ({})", esc(&d.runtime_label()))
        } else {
            String::new()
        },
        esc(crate::output::crowd_title(rows, d.machine.cpus).trim_start_matches("crowd: "))
    );
    for k in crate::output::CROWD_HEADERS {
        let _ = write!(h, "<th>{}</th>", esc(k));
    }
    h.push_str("</tr></thead><tbody>");
    for (r, cells) in rows.iter().zip(crate::output::crowd_rows(rows)) {
        h.push_str("<tr>");
        for (i, c) in cells.iter().enumerate() {
            // Column 4 is `early`: any is a broken promise for these methods.
            let bad = i == 4 && r.early > 0;
            let _ = write!(
                h,
                "<td{}>{}</td>",
                if bad { " class=\"bad\"" } else { "" },
                esc(c)
            );
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table></div></section>\n");
}

pub(super) fn clocks_section(h: &mut String, d: &Doc, name_it: bool) {
    let Some(c) = &d.clocks else { return };
    let _ = write!(
        h,
        "<section class=\"clocks\"><h2>Clocks{}</h2><div class=\"scroll\"><table class=\"clocks\">\
         <thead><tr><th>clock</th><th>clock_getres</th><th>granularity</th><th>repeats</th>\
         <th>read cost</th><th>went back</th></tr></thead><tbody>",
        if name_it {
            format!(" ({})", esc(&d.runtime_label()))
        } else {
            String::new()
        }
    );
    for r in &c.clocks {
        if !r.available {
            let _ = write!(
                h,
                "<tr><td>{}</td><td colspan=\"5\">unavailable: {}</td></tr>",
                esc(&r.name),
                esc(r.error.as_deref().unwrap_or("unknown reason"))
            );
            continue;
        }
        let ns = |v: Option<u64>| v.map_or("—".to_string(), |n| format::ns(n as i64));
        let _ = write!(
            h,
            "<tr><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td{}>{}</td></tr>",
            esc(r.description.as_deref().unwrap_or("")),
            esc(&r.name),
            esc(&ns(r.resolution_ns)),
            esc(&ns(r.granularity_ns)),
            r.repeat_fraction
                .map_or("—".into(), |f| format!("{:.1} %", f * 100.0)),
            r.read_cost_ns.map_or("—".into(), |c| format!("{c:.1} ns")),
            if r.monotonic_violations.unwrap_or(0) > 0 {
                " class=\"bad\""
            } else {
                ""
            },
            opt(&r.monotonic_violations, "—"),
        );
    }
    h.push_str("</tbody></table></div>");
    if !c.findings.is_empty() {
        h.push_str("<h3>Findings</h3><ul class=\"findings\">");
        for f in &c.findings {
            let _ = write!(
                h,
                "<li><b{}>{}</b>: {}</li>",
                if f.severity == "info" {
                    ""
                } else {
                    " class=\"warn\""
                },
                esc(&f.severity),
                esc(&f.message)
            );
        }
        h.push_str("</ul>");
    }
    h.push_str("</section>\n");
}
