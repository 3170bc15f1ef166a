//! The result of `keeptime latency`: the project's bench result document with
//! `"schedule": "periodic"` (spec/bench-result.md), and the text tables.

use super::stats::{summarize, Summary};
use super::{Config, InForce, Method, MethodRun};
use crate::bench::report::{Machine, MethodInfo, Runtime, Tool, FORMAT, VERSION};
use crate::bench::stats::Stats;
use serde::Serialize;
use std::fmt::Write;

/// The whole document.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyReport {
    /// `"keeptime-bench"`.
    pub format: &'static str,
    /// The format version written.
    pub version: u32,
    /// When the run started.
    pub created: String,
    /// This program.
    pub tool: Tool,
    /// The Rust compiler.
    pub runtime: Runtime,
    /// The machine.
    pub machine: Machine,
    /// How the run was set up, and what was in force.
    pub parameters: Parameters,
    /// What each method is.
    pub methods: Vec<MethodInfo>,
    /// Per method: one cell per thread, then the merged cell.
    pub results: Vec<Cell>,
}

/// `parameters` of a periodic run: the fields every bench result has
/// (`"schedule": "periodic"`, one duration: the interval), then the periodic
/// schedule's own (spec/bench-result.md).
#[derive(Clone, Debug, Serialize)]
pub struct Parameters {
    /// The fields of every bench result.
    #[serde(flatten)]
    pub common: crate::bench::report::Parameters,
    /// The period.
    pub interval_ns: u64,
    /// Run length asked for, per method.
    pub run_ns: u64,
    /// Threads per method.
    pub threads: u32,
    /// CPU by thread, if pinned.
    pub affinity: Option<Vec<Option<u32>>>,
    /// mlockall in force.
    pub mlock: bool,
    /// /dev/cpu_dma_latency value held.
    pub dma_latency_us: Option<u32>,
    /// Refused knobs.
    pub refused: Vec<String>,
    /// Ended early by Ctrl-C.
    pub interrupted: bool,
}

/// One cell: a method on one thread, or all its threads (`thread: null`).
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// Method name.
    pub method: String,
    /// The interval.
    pub duration_ns: u64,
    /// 0.
    pub warmup: u64,
    /// Timer slack in force.
    pub timer_slack_ns: Option<u64>,
    /// Thread index or `null`.
    pub thread: Option<usize>,
    /// Pinned CPU or `null`.
    pub cpu: Option<u32>,
    /// Wake-ups later than one interval.
    pub overruns: u64,
    /// Deadlines passed with no wake-up.
    pub skipped: u64,
    /// The statistics.
    #[serde(flatten)]
    pub stats: Stats,
}

/// Builds the document.
pub fn document(
    cfg: &Config,
    runs: &[MethodRun],
    in_force: &InForce,
    machine: Machine,
    created: String,
    interrupted: bool,
) -> LatencyReport {
    let mut results = Vec::new();
    for r in runs {
        for s in summarize(&r.threads, &r.cpus, cfg.interval_ns) {
            // A cell needs at least one sample (the format's `samples >= 1`).
            if let Some(stats) = s.stats {
                results.push(Cell {
                    method: r.method.name().into(),
                    duration_ns: cfg.interval_ns,
                    warmup: 0,
                    timer_slack_ns: s.timer_slack_ns,
                    thread: s.thread,
                    cpu: s.cpu,
                    overruns: s.overruns,
                    skipped: s.skipped,
                    stats,
                });
            }
        }
    }
    let methods: Vec<Method> = runs.iter().map(|r| r.method).collect();
    LatencyReport {
        format: FORMAT,
        version: VERSION,
        created,
        tool: Tool::this(),
        runtime: Runtime::this(),
        machine,
        parameters: Parameters {
            common: crate::bench::report::Parameters {
                schedule: "periodic",
                cpu_clock: "thread",
                durations_ns: vec![cfg.interval_ns],
                methods: cfg.methods.iter().map(|m| m.name().to_owned()).collect(),
                samples: None,
                warmup: None,
                budget_ns: None,
                pin_cpu: None,
                priority: in_force.priority,
                idle_hint_us: None,
            },
            interval_ns: cfg.interval_ns,
            run_ns: cfg.run_ns,
            threads: cfg.threads,
            affinity: in_force.affinity.clone(),
            mlock: in_force.mlock,
            dma_latency_us: in_force.dma_latency_us,
            refused: in_force.refused.clone(),
            interrupted,
        },
        methods: methods
            .into_iter()
            .map(|m| MethodInfo {
                name: m.name().into(),
                description: m.description().into(),
                family: m.family(),
                may_return_early: m.may_return_early(),
            })
            .collect(),
        results,
    }
}

fn us(ns: i64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

fn row(out: &mut String, s: &Summary) {
    let who = match s.thread {
        Some(i) => format!("T{i}"),
        None => "all".into(),
    };
    let cpu = s.cpu.map_or("-".into(), |c| c.to_string());
    match &s.stats {
        Some(st) => {
            let _ = writeln!(
                out,
                "  {who:>4} {cpu:>4} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>8} {:>6.1}",
                st.samples,
                us(st.min_ns),
                format!("{:.1}", st.mean_ns / 1000.0),
                us(st.p50_ns),
                us(st.p99_ns),
                us(st.p999_ns),
                us(st.max_ns),
                s.overruns,
                st.cpu_percent
            );
        }
        None => {
            let _ = writeln!(out, "  {who:>4} {cpu:>4} {:>9}  (no samples)", 0);
        }
    }
}

/// The text tables: one block per method, a row per thread and one for all
/// (its CPU % is the threads' CPU time in percent of one CPU).
pub fn render_text(
    cfg: &Config,
    runs: &[MethodRun],
    in_force: &InForce,
    interrupted: bool,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "keeptime latency: interval {}, {} thread{}, {} per method; {}, mlock {}, dma latency {}{}",
        crate::output::format::duration(cfg.interval_ns),
        cfg.threads,
        if cfg.threads == 1 { "" } else { "s" },
        crate::output::format::duration(cfg.run_ns),
        in_force
            .priority
            .map_or("SCHED_OTHER".to_owned(), |p| format!("SCHED_FIFO {p}")),
        if in_force.mlock { "on" } else { "off" },
        in_force
            .dma_latency_us
            .map_or("not held".to_owned(), |v| format!("{v} µs")),
        if interrupted { " (interrupted)" } else { "" }
    );
    for r in runs {
        let _ = writeln!(out);
        let _ = writeln!(out, "{} — {}", r.method, r.method.description());
        let _ = writeln!(
            out,
            "  {:>4} {:>4} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>8}",
            "",
            "cpu",
            "samples",
            "min µs",
            "avg µs",
            "p50 µs",
            "p99 µs",
            "p99.9 µs",
            "max µs",
            "overruns"
        );
        let sums = summarize(&r.threads, &r.cpus, cfg.interval_ns);
        let single = sums.len() == 2;
        for s in &sums {
            if single && s.thread.is_none() {
                continue; // one thread: its row is the overall row
            }
            row(&mut out, s);
        }
    }
    out
}
