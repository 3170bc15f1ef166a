//! `keeptime bench`'s run: parse → options → run → print → export.

use super::args::BenchArgs;
use super::crowd::{self, CrowdPlan};
use super::methods::{KeeptimeKnobs, METHODS};
use super::plan::{self, BenchConfig};
use super::report::{self, BenchReport, Machine, MethodInfo, Parameters, Runtime, Tool};
use super::runner::{self, SlackControl};
use super::Method;
use crate::export::{CsvExporter, ExportManager, JsonExporter, MarkdownExporter, Target};
use crate::output;
use crate::output::progress::{CrowdProgress, Progress};
use crate::{sched, UsageError};
use anyhow::Result;
use std::io::{IsTerminal, Write};
use std::time::SystemTime;

/// The default `--durations`: 10 ms, 1 ms, 100 µs, 10 µs.
const DEFAULT_DURATIONS_NS: [u64; 4] = [10_000_000, 1_000_000, 100_000, 10_000];

/// `--list`: one line per method, its name, family and what it does.
pub fn list_text() -> String {
    let width = METHODS.iter().map(|m| m.name.len()).max().unwrap_or(0);
    let fam = METHODS
        .iter()
        .map(|m| m.family.as_str().len())
        .max()
        .unwrap_or(0);
    METHODS
        .iter()
        .map(|m| {
            format!(
                "{:width$}  {:fam$}  {}\n",
                m.name,
                m.family.as_str(),
                m.description
            )
        })
        .collect()
}

/// Runs `keeptime bench`.
///
/// # Errors
/// A [`UsageError`] for bad options (before anything is measured), any
/// other error when an export or the crowd fails.
pub fn run(args: BenchArgs) -> Result<()> {
    if args.list {
        print!("{}", list_text());
        return Ok(());
    }
    // Before anything sets it: the thread's own slack is the default-slack methods' slack.
    let slack = SlackControl::capture();
    // One clock inspection gives the machine, the report's clock table and
    // its findings (the idle-latency one included).
    let clock_report = keeptime::clocks::inspect();
    let machine = Machine::from_info(&clock_report.machine, slack.default_ns);

    let mut exports = ExportManager::default();
    if let Some(f) = &args.export_json {
        exports.add(Box::new(JsonExporter), Target::parse(f));
    }
    if let Some(f) = &args.export_csv {
        exports.add(Box::new(CsvExporter), Target::parse(f));
    }
    if let Some(f) = &args.export_markdown {
        exports.add(Box::new(MarkdownExporter), Target::parse(f));
    }
    exports.check_targets()?;
    if let Some(page) = &args.report {
        crate::report::check_writable(page)?;
    }

    let crowd_plan = CrowdPlan::new(
        args.crowd.unwrap_or(0),
        &args.durations,
        args.samples,
        args.warmup,
    );
    if let Some(p) = &crowd_plan {
        p.check().map_err(UsageError)?;
        if let Some(priority) = args.priority {
            return Err(UsageError(format!(
                "--crowd {} with --priority {priority}: the crowd's threads would inherit SCHED_FIFO and its spinners could starve the machine; run the crowd without --priority",
                p.threads
            ))
            .into());
        }
    }

    if let Some(cpu) = args.pin {
        sched::pin_to_cpu(cpu).map_err(UsageError::from)?;
    }
    if let Some(priority) = args.priority {
        sched::set_fifo_priority(priority).map_err(UsageError::from)?;
    }

    let mut methods = args.methods.clone();
    if methods.is_empty() {
        methods = Method::ALL.to_vec();
    }
    methods.dedup();
    let mut durations_ns = args.durations.clone();
    if durations_ns.is_empty() {
        durations_ns = DEFAULT_DURATIONS_NS.to_vec();
    }
    let config = BenchConfig {
        methods: methods.clone(),
        durations_ns: durations_ns.clone(),
        samples: args.samples,
        warmup: args.warmup,
        budget_ns: args.budget,
    };
    let plan = plan::plan(&config);
    for w in &plan.warnings {
        eprintln!("warning: {w}");
    }

    let created = report::rfc3339(SystemTime::now());
    let mut progress = Progress::new(&plan.cells, args.quiet);
    let knobs = KeeptimeKnobs {
        target: args.tail_target.unwrap_or_default(),
        idle_hint: args.idle_hint,
    };
    let results = runner::run(&plan.cells, slack, knobs, &mut progress);
    progress.finish();
    // The crowd's threads inherit --pin (and the bench's slack is reset per thread).
    let crowd = crowd_plan.map(|p| {
        let mut progress = CrowdProgress::new(&p, args.quiet);
        let rows = crowd::run(&p, knobs, &mut progress);
        progress.finish();
        rows
    });
    // A crowd the OS would not start fails the run, after the tables are
    // printed and exported without it.
    let (crowd, crowd_error) = match crowd.transpose() {
        Ok(rows) => (rows, None),
        Err(e) => (None, Some(e)),
    };

    let report = BenchReport {
        format: report::FORMAT,
        version: report::VERSION,
        created,
        tool: Tool::this(),
        runtime: Runtime::this(),
        machine,
        parameters: Parameters {
            schedule: "sleep",
            cpu_clock: "thread",
            durations_ns,
            methods: methods.iter().map(|m| m.name().to_owned()).collect(),
            samples: args.samples,
            warmup: args.warmup,
            budget_ns: plan.budget_ns,
            pin_cpu: args.pin,
            priority: args.priority,
            idle_hint_us: args.idle_hint.map(|h| h.micros()),
        },
        methods: methods.into_iter().map(MethodInfo::from).collect(),
        results,
        clocks: Some(clock_report),
        crowd,
    };

    // The tables go to stdout, unless an export claimed it.
    if exports.uses_stdout() {
        let color = std::io::stderr().is_terminal() && console::colors_enabled_stderr();
        eprint!("{}", output::render(&report, color));
    } else {
        let color = std::io::stdout().is_terminal() && console::colors_enabled();
        let mut out = std::io::stdout().lock();
        out.write_all(output::render(&report, color).as_bytes())?;
        out.flush()?;
    }
    exports.write_all(&report)?;
    if let Some(page) = &args.report {
        let doc = crate::report::Doc::from_report(&report, "this run")?;
        let html = crate::report::page::render(std::slice::from_ref(&doc))?;
        crate::report::write_atomic(page, html.as_bytes())?;
        eprintln!("report written to {}", page.display());
    }
    match crowd_error {
        Some(e) => Err(anyhow::Error::msg(e)),
        None => Ok(()),
    }
}
