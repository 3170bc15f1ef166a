//! A duration's figures: the error CDF and the trade-off chart with their
//! legends, captions and tables, and the section that holds them.

use super::chart::{self, CdfSeries, TradeoffPoint};
use super::html::esc;
use super::input::Doc;
use super::palette::{Named, Palette};
use super::tables::{cost_table, dist_table};
use crate::bench::CellResult;
use crate::output::{format, verdict};
use anyhow::Result;
use std::fmt::Write as _;

fn legend(h: &mut String, series: &[Named]) {
    h.push_str("<div class=\"legend\">");
    for s in series {
        let c = chart::hex(s.color);
        let _ = write!(
            h,
            "<span><i class=\"chip{}\" style=\"background:{c};border-color:{c}\"></i>{}</span>",
            if s.hollow { " hollow" } else { "" },
            esc(&s.name)
        );
    }
    h.push_str("</div>");
}

fn figure(h: &mut String, kind: &str, caption: &str, series: &[Named], svg: &str) {
    let (x, y) = if kind == "cdf" {
        (chart::CDF_X, chart::CDF_Y)
    } else {
        (chart::TRADE_X, chart::TRADE_Y)
    };
    let json: Vec<String> = series
        .iter()
        .map(|s| {
            format!(
                "{{\"name\":{},\"color\":\"{}\"}}",
                serde_json::Value::String(s.name.clone()),
                chart::hex(s.color)
            )
        })
        .collect();
    let _ = write!(
        h,
        "<figure class=\"chart\" data-kind=\"{kind}\" data-x-label=\"{}\" data-y-label=\"{}\" \
         data-series=\"{}\"><figcaption>{}</figcaption>",
        esc(x),
        esc(y),
        esc(&format!("[{}]", json.join(","))),
        esc(caption)
    );
    legend(h, series);
    h.push_str(svg);
    h.push_str("</figure>\n");
}

fn cdf_caption(dur: u64) -> String {
    format!(
        "Error distribution at {}: for each method, the share of waits whose error is at most x. \
         Left of the black line (shaded) the wait returned early; the axis is logarithmic on both \
         sides of zero (symlog), so early returns are drawn on their own side, as far left as they \
         were early. Steeper and further left (but not past zero) is better.",
        format::duration(dur)
    )
}

fn tradeoff_caption(dur: u64) -> String {
    format!(
        "Accuracy against price at {}: p99 error against CPU %, both logarithmic; lower left is \
         better. The dashed staircase is the frontier: no method beats a point on it in both. \
         p99 below 1 ns and CPU below 0.001 % are drawn on the floor.",
        format::duration(dur)
    )
}

/// Draws both charts and their tables for `rows` (series name, cell).
pub(super) fn charts(
    h: &mut String,
    dur: u64,
    rows: &[(Named, &CellResult)],
    tags: &[(usize, String)],
) -> Result<()> {
    let series: Vec<CdfSeries<'_>> = rows
        .iter()
        .map(|(n, c)| CdfSeries {
            color: n.color,
            dashed: n.hollow,
            bold: !n.hollow && (n.name == "keeptime" || n.name.ends_with(": keeptime")),
            histogram: &c.stats.histogram,
        })
        .collect();
    let svg = chart::cdf(&series).map_err(|e| anyhow::anyhow!("drawing the CDF: {e}"))?;
    let named: Vec<Named> = rows
        .iter()
        .map(|(n, _)| Named {
            name: n.name.clone(),
            color: n.color,
            hollow: n.hollow,
        })
        .collect();
    figure(h, "cdf", &cdf_caption(dur), &named, &svg);
    dist_table(h, rows);
    let points: Vec<TradeoffPoint> = rows
        .iter()
        .enumerate()
        .map(|(i, (n, c))| TradeoffPoint {
            color: n.color,
            cpu_percent: c.stats.cpu_percent,
            p99_ns: c.stats.p99_ns,
            tag: tags.iter().find(|(j, _)| *j == i).map(|(_, t)| t.clone()),
            hollow: n.hollow,
        })
        .collect();
    let svg =
        chart::tradeoff(&points).map_err(|e| anyhow::anyhow!("drawing the trade-off: {e}"))?;
    figure(h, "tradeoff", &tradeoff_caption(dur), &named, &svg);
    cost_table(h, rows);
    Ok(())
}

pub(super) fn duration_section(
    h: &mut String,
    d: &Doc,
    dur: u64,
    palette: &Palette,
    heading: &str,
) -> Result<()> {
    let cells = d.cells_at(dur);
    let _ = write!(
        h,
        "<section class=\"duration\"><{heading}>{}</{heading}>",
        esc(&format::duration(dur))
    );
    if let Some(v) = verdict::verdict(&cells) {
        let _ = write!(h, "<p class=\"verdict\">{}</p>", esc(&v));
    }
    for line in cells.iter().filter_map(|c| crate::output::sleeper_line(c)) {
        let _ = write!(h, "<p class=\"verdict\">{}</p>", esc(&line));
    }
    let rows: Vec<(Named, &CellResult)> = cells
        .iter()
        .map(|c| {
            (
                Named {
                    name: c.method.clone(),
                    color: palette.of(&c.method),
                    hollow: false,
                },
                *c,
            )
        })
        .collect();
    let mut tags = Vec::new();
    if let Some(i) = rows.iter().position(|(_, c)| c.method == "keeptime") {
        tags.push((i, "keeptime".to_string()));
    }
    let cells: Vec<&CellResult> = rows.iter().map(|(_, c)| *c).collect();
    if let Some(spin) = verdict::pure_spin(&cells) {
        if let Some(i) = rows.iter().position(|(_, c)| std::ptr::eq(*c, spin)) {
            tags.push((i, format!("pure spin ({})", spin.method)));
        }
    }
    charts(h, dur, &rows, &tags)?;
    h.push_str("</section>\n");
    Ok(())
}
