//! The HTML page: everything inline (CSS, SVG), no script, no network. This
//! module holds its skeleton (head, style, run headers, footer); the
//! sections come from the sibling modules.

use super::compare::compare;
use super::figures::duration_section;
pub use super::html::esc;
use super::html::{fact, opt};
use super::input::Doc;
use super::palette::Palette;
use super::tables::{clocks_section, crowd_section};
use crate::output::{format, verdict};
use anyhow::Result;
use std::fmt::Write as _;

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
