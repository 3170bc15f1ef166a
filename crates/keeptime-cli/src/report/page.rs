//! The HTML page: everything inline (CSS, SVG), no script, no network.

use super::chart::{self, CdfSeries, TradeoffPoint};
use super::input::Doc;
use crate::bench::methods::METHODS;
use crate::bench::{CellResult, Family};
use crate::output::{format, verdict};
use anyhow::Result;
use plotters::style::RGBColor;
use std::fmt::Write as _;

/// Colours of the reference methods (`keeptime bench --list`), in the order
/// of their table, so a method looks the same on every page; other methods
/// take the spare colours in order of appearance.
const FIXED: [RGBColor; 11] = [
    RGBColor(23, 190, 207),  // busy-loop
    RGBColor(31, 119, 180),  // spin-pause
    RGBColor(127, 127, 127), // yield-loop
    RGBColor(44, 160, 44),   // sleep-default-slack
    RGBColor(188, 189, 34),  // sleep-slack-1ns
    RGBColor(148, 103, 189), // clock-nanosleep-abs
    RGBColor(227, 119, 194), // compensated
    RGBColor(57, 59, 121),   // hybrid-1ms
    RGBColor(214, 39, 40),   // keeptime
    RGBColor(255, 127, 14),  // keeptime-efficient
    RGBColor(140, 86, 75),   // keeptime-spin
];
const _: () = assert!(FIXED.len() == METHODS.len());
const SPARE: [RGBColor; 8] = [
    RGBColor(0, 0, 0),
    RGBColor(140, 109, 49),
    RGBColor(82, 84, 163),
    RGBColor(99, 121, 57),
    RGBColor(173, 73, 74),
    RGBColor(123, 65, 115),
    RGBColor(49, 130, 189),
    RGBColor(230, 85, 13),
];
/// Colours of the runtimes in the side-by-side charts.
const RUNTIME: [RGBColor; 8] = [
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Method name → colour for one page.
struct Palette {
    names: Vec<(String, RGBColor)>,
}

impl Palette {
    fn new(docs: &[Doc]) -> Self {
        let mut names: Vec<(String, RGBColor)> = Vec::new();
        let mut spare = 0;
        for d in docs {
            for c in &d.results {
                if names.iter().any(|(n, _)| *n == c.method) {
                    continue;
                }
                let reference = METHODS.iter().position(|m| m.name == c.method);
                let color = match reference.and_then(|i| FIXED.get(i)) {
                    Some(col) => *col,
                    None => {
                        spare += 1;
                        SPARE[(spare - 1) % SPARE.len()]
                    }
                };
                names.push((c.method.clone(), color));
            }
        }
        Palette { names }
    }

    fn of(&self, method: &str) -> RGBColor {
        self.names
            .iter()
            .find(|(n, _)| n == method)
            .map_or(RGBColor(0, 0, 0), |(_, c)| *c)
    }
}

/// HTML-escapes text for element content and quoted attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const CSS: &str = r#"
:root{--fg:#1b1b1b;--muted:#5a5a5a;--line:#ddd;--bg:#fff;--accent:#d62728}
*{box-sizing:border-box}
body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:#f6f6f4}
main{max-width:1200px;margin:0 auto;padding:16px;overflow-wrap:anywhere}
h1{font-size:1.7rem;margin:.2em 0}
h2{font-size:1.35rem;margin:.2em 0 .4em;border-bottom:2px solid var(--line);padding-bottom:.2em}
h3{font-size:1.1rem;margin:1em 0 .3em}
section,details{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin:16px 0}
details>summary{cursor:pointer;font-weight:600;font-size:1.1rem}
.sub,.note{color:var(--muted)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:.5em 0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
ul.verdicts{padding-left:1.2em}
ul.verdicts li{margin:.25em 0}
figure.chart{margin:12px 0}
figure.chart svg{display:block;width:100%;height:auto;max-width:960px;margin:0 auto}
figcaption{color:var(--muted);font-size:.92rem;margin:.2em 0 .4em}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:6px 0;font-size:.9rem}
.legend span{overflow-wrap:anywhere}
.chip{display:inline-block;width:.9em;height:.9em;border-radius:2px;vertical-align:-.1em;margin-right:4px}
.chip.hollow{background:transparent!important;border:2px dashed}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:.9rem;font-variant-numeric:tabular-nums;min-width:100%}
th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
thead th{background:#f0f0ee}
td.bad{color:var(--accent);font-weight:600}
.warn{color:var(--accent)}
@media (max-width:700px){main{padding:6px}section,details{padding:8px}body{font-size:15px}dl.facts{grid-template-columns:1fr}dl.facts dt{margin-top:.3em}}
"#;

/// The whole page for `docs` (at least one).
pub fn render(docs: &[Doc]) -> Result<String> {
    let palette = Palette::new(docs);
    let mut h = String::new();
    let title = if docs.len() == 1 {
        format!("keeptime report: {}", docs[0].runtime_label())
    } else {
        format!("keeptime report: {} runtimes side by side", docs.len())
    };
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{CSS}</style></head><body><main>\n",
        esc(&title)
    );
    let files: Vec<String> = docs.iter().map(|d| esc(&d.file)).collect();
    let _ = write!(
        h,
        "<header><h1>{}</h1><p class=\"sub\">From {} · drawn by keeptime {} · \
         error = the caller's first clock reading after the call returns − deadline \
         (CLOCK_MONOTONIC), for every method; return = that reading − the method's own last \
         reading; CPU % = the waiting thread's CPU time ÷ wall time</p></header>",
        esc(&title),
        files.join(", "),
        env!("CARGO_PKG_VERSION")
    );
    for d in docs {
        run_header(&mut h, d);
    }
    if docs.len() == 1 {
        let d = &docs[0];
        for dur in d.durations() {
            duration_section(&mut h, d, dur, &palette, "h2")?;
        }
    } else {
        compare(&mut h, docs)?;
        for d in docs {
            let _ = write!(
                h,
                "<details class=\"per-file\"><summary>{}: every method ({})</summary>",
                esc(&d.runtime_label()),
                esc(&d.file)
            );
            for dur in d.durations() {
                duration_section(&mut h, d, dur, &palette, "h3")?;
            }
            h.push_str("</details>\n");
        }
    }
    for d in docs {
        crowd_section(&mut h, d, docs.len() > 1);
    }
    for d in docs {
        clocks_section(&mut h, d, docs.len() > 1);
    }
    h.push_str(
        "<footer class=\"note\"><p>Made with <code>keeptime report</code> \
         (or <code>keeptime bench --report</code>). Self-contained: no scripts, \
         no network. The format is spec/bench-result.md.</p></footer>\n</main></body></html>\n",
    );
    Ok(h)
}

fn opt<T: ToString>(v: &Option<T>, none: &str) -> String {
    v.as_ref().map_or_else(|| none.to_string(), T::to_string)
}

fn fact(h: &mut String, k: &str, v: &str) {
    let _ = write!(h, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
}

fn run_header(h: &mut String, d: &Doc) {
    let m = &d.machine;
    let p = &d.parameters;
    let _ = write!(
        h,
        "<section class=\"run\"><h2>{} <span class=\"sub\">({})</span></h2><dl class=\"facts\">",
        esc(&d.runtime_label()),
        esc(&d.file)
    );
    let cpu = format!(
        "{} · {} CPUs · {}",
        opt(&m.cpu_model, "unknown model"),
        opt(&m.cpus, "?"),
        m.arch
    );
    fact(h, "CPU", &cpu);
    fact(
        h,
        "kernel",
        &format!(
            "{} {}{}",
            m.os,
            opt(&m.kernel, "(release unknown)"),
            m.preemption
                .as_ref()
                .map_or(String::new(), |p| format!(" · {p}"))
        ),
    );
    fact(h, "clocksource", &opt(&m.clocksource, "unknown"));
    fact(
        h,
        "virtualisation",
        &opt(&m.virtualization, "none detected (bare metal or unknown)"),
    );
    fact(
        h,
        "timer slack",
        &m.timer_slack_ns
            .map_or("unknown".into(), |s| format::ns(s as i64)),
    );
    let cm = d.clocks.as_ref().and_then(|c| c.machine.as_ref());
    let idle = match cm {
        Some(cm) => {
            let mut s = opt(&cm.idle_driver, "none");
            if let Some(t) = cm.tick_hz {
                let _ = write!(s, " · tick {t} Hz");
            }
            if let Some(hr) = cm.high_resolution_timers {
                s.push_str(if hr {
                    " · high-resolution timers on"
                } else {
                    " · high-resolution timers OFF"
                });
            }
            s
        }
        None => "not recorded in this result".into(),
    };
    fact(h, "idle driver", &idle);
    fact(
        h,
        "run",
        &format!(
            "{} · {} {} · {}",
            d.created,
            d.tool.name,
            d.tool.version,
            d.runtime_label()
        ),
    );
    let mut how = format!(
        "schedule {} · CPU clock {} · samples {} · warm-up {}",
        p.schedule,
        opt(&p.cpu_clock, "thread"),
        opt(&p.samples, "chosen by the bench"),
        opt(&p.warmup, "chosen by the bench"),
    );
    if let Some(b) = p.budget_ns {
        let _ = write!(how, " · budget {}", format::duration(b));
    }
    if let Some(c) = p.pin_cpu {
        let _ = write!(how, " · pinned to CPU {c}");
    }
    if let Some(pr) = p.priority {
        let _ = write!(how, " · SCHED_FIFO {pr}");
    }
    fact(h, "settings", &how);
    let durs: Vec<String> = d.durations().into_iter().map(format::duration).collect();
    fact(
        h,
        "measured",
        &format!(
            "{} methods × {} durations ({})",
            p.methods.len(),
            durs.len(),
            durs.join(", ")
        ),
    );
    h.push_str("</dl>");
    let mut lines = Vec::new();
    for dur in d.durations() {
        if let Some(v) = verdict::verdict(&d.cells_at(dur)) {
            lines.push(format!(
                "<li><b>{}</b>: {}</li>",
                esc(&format::duration(dur)),
                esc(&v)
            ));
        }
    }
    if !lines.is_empty() {
        let _ = write!(
            h,
            "<h3>Verdict</h3><ul class=\"verdicts\">{}</ul>",
            lines.join("")
        );
    }
    h.push_str("</section>\n");
}

/// One drawn series: its name on the page and its colour.
struct Named {
    name: String,
    color: RGBColor,
    hollow: bool,
}

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

fn dist_table(h: &mut String, rows: &[(Named, &CellResult)]) {
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

fn cost_table(h: &mut String, rows: &[(Named, &CellResult)]) {
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

/// Draws both charts and their tables for `rows` (series name, cell).
fn charts(
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

fn duration_section(
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

/// A runtime's plain OS sleep among `cells`: its first method of the OS
/// sleep family, in run order (each runtime's bench runs its language's own
/// sleep first).
fn os_sleep<'a>(cells: &[&'a CellResult]) -> Option<&'a CellResult> {
    cells
        .iter()
        .copied()
        .find(|c| c.family == Some(Family::OsSleep))
}

/// `names` made unique: a name that repeats gets its file's name, and
/// what still repeats (the same file twice) its position.
fn unique(names: Vec<String>, docs: &[Doc]) -> Vec<String> {
    let base = |d: &Doc| {
        std::path::Path::new(&d.file)
            .file_name()
            .map_or_else(|| d.file.clone(), |n| n.to_string_lossy().into_owned())
    };
    let mut out: Vec<String> = names
        .iter()
        .zip(docs)
        .map(|(n, d)| {
            if names.iter().filter(|m| *m == n).count() > 1 {
                format!("{n} ({})", base(d))
            } else {
                n.clone()
            }
        })
        .collect();
    for i in 0..out.len() {
        if out[..i].contains(&out[i]) {
            out[i] = format!("{} #{}", out[i], i + 1);
        }
    }
    out
}

/// The runtimes-side-by-side part: durations per file, then the shared ones.
fn compare(h: &mut String, docs: &[Doc]) -> Result<()> {
    let labels = unique(docs.iter().map(Doc::runtime_label).collect(), docs);
    let short = unique(
        docs.iter().map(|d| d.runtime.language.clone()).collect(),
        docs,
    );
    let shared: Vec<u64> = docs[0]
        .durations()
        .into_iter()
        .filter(|x| docs.iter().all(|d| d.durations().contains(x)))
        .collect();
    h.push_str(
        "<section class=\"durations\"><h2>Runtimes side by side</h2>\
         <p>Each runtime's <b>keeptime</b> (solid) and its plain OS sleep (dashed, hollow) \
         at the durations every file has.</p>",
    );
    let all_same = docs.iter().all(|d| d.durations() == docs[0].durations());
    if !all_same {
        h.push_str(
            "<p class=\"warn\">The files measured different durations; only the shared ones \
             are drawn side by side.</p>",
        );
    }
    h.push_str(
        "<div class=\"scroll\"><table class=\"durations\"><thead><tr><th>file</th>\
         <th>runtime</th><th>durations</th></tr></thead><tbody>",
    );
    for (d, l) in docs.iter().zip(&labels) {
        let ds: Vec<String> = d.durations().into_iter().map(format::duration).collect();
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&d.file),
            esc(l),
            esc(&ds.join(", "))
        );
    }
    let sh: Vec<String> = shared.iter().copied().map(format::duration).collect();
    let _ = write!(
        h,
        "</tbody></table></div><p>Drawn side by side: <b class=\"shared\">{}</b></p></section>",
        if sh.is_empty() {
            "none (no duration is in every file)".to_string()
        } else {
            esc(&sh.join(", "))
        }
    );
    for dur in shared {
        let _ = write!(
            h,
            "<section class=\"duration compare\"><h2>{}: runtimes side by side</h2>",
            esc(&format::duration(dur))
        );
        let mut rows: Vec<(Named, &CellResult)> = Vec::new();
        let mut tags = Vec::new();
        for (i, (d, l)) in docs.iter().zip(&labels).enumerate() {
            let color = RUNTIME[i % RUNTIME.len()];
            let cells = d.cells_at(dur);
            if let Some(k) = cells.iter().copied().find(|c| c.method == "keeptime") {
                tags.push((rows.len(), format!("{} keeptime", short[i])));
                rows.push((
                    Named {
                        name: format!("{l}: keeptime"),
                        color,
                        hollow: false,
                    },
                    k,
                ));
            }
            if let Some(o) = os_sleep(&cells) {
                rows.push((
                    Named {
                        name: format!("{l}: {}", o.method),
                        color,
                        hollow: true,
                    },
                    o,
                ));
            }
        }
        if rows.is_empty() {
            h.push_str(
                "<p class=\"note\">No file has a keeptime or OS-sleep cell at this duration.</p>",
            );
        } else {
            charts(h, dur, &rows, &tags)?;
        }
        h.push_str("</section>\n");
    }
    Ok(())
}

/// The crowd rows of `d` (`keeptime bench --crowd N`) as one table.
fn crowd_section(h: &mut String, d: &Doc, name_it: bool) {
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

fn clocks_section(h: &mut String, d: &Doc, name_it: bool) {
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
