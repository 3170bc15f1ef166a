//! `keeptime`: bench, clocks, sleep. A short pipeline: parse → options →
//! run → print → export; the parts live in the `keeptime_cli` library.

use anyhow::Result;
use clap::error::ErrorKind;
use clap::Parser;
use keeptime_cli::bench::crowd::{self, CrowdPlan};
use keeptime_cli::bench::methods::KeeptimeKnobs;
use keeptime_cli::bench::plan::{self, BenchConfig};
use keeptime_cli::bench::report::{
    self, BenchReport, Machine, MethodInfo, Parameters, Runtime, Tool,
};
use keeptime_cli::bench::runner::{self, SlackControl};
use keeptime_cli::bench::Method;
use keeptime_cli::cli::{BenchArgs, Cli, Command};
use keeptime_cli::duration::DurationError;
use keeptime_cli::export::{CsvExporter, ExportManager, JsonExporter, MarkdownExporter, Target};
use keeptime_cli::output;
use keeptime_cli::output::progress::{CrowdProgress, Progress};
use keeptime_cli::{clocks, sched, sleep, UsageError};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::SystemTime;

/// The default `--durations`: 10 ms, 1 ms, 100 µs, 10 µs.
const DEFAULT_DURATIONS_NS: [u64; 4] = [10_000_000, 1_000_000, 100_000, 10_000];

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    let result = match cli.command {
        Command::Bench(args) => bench(args),
        Command::Clocks(args) => clocks::run(args.json),
        Command::Sleep(args) => sleep::run(&args.durations, args.verbose),
        Command::Latency(args) => keeptime_cli::latency::run(args),
        Command::Report(args) => keeptime_cli::report::run(&args.files, &args.output),
        Command::Trace(args) => keeptime_cli::trace::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is::<UsageError>() => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A bad value is one line naming it and what is accepted; other usage
/// errors keep clap's hints. Help and version print as usual.
fn clap_error(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(if e.use_stderr() { 2 } else { 0 })
        }
        ErrorKind::ValueValidation | ErrorKind::InvalidValue => {
            let text = e.to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: invalid value"));
            ExitCode::from(2)
        }
        ErrorKind::UnknownArgument => {
            // `sleep -5ms` reaches clap as the flags -5, -m, -s; say what it is.
            let negative = std::env::args().skip(1).find(|a| {
                let mut c = a.chars();
                c.next() == Some('-') && c.next().is_some_and(|d| d.is_ascii_digit() || d == '.')
            });
            match negative {
                Some(arg) => eprintln!("error: {}", DurationError::Negative(arg)),
                None => {
                    let _ = e.print();
                }
            }
            ExitCode::from(2)
        }
        _ => {
            let _ = e.print();
            ExitCode::from(2)
        }
    }
}

fn list_methods() {
    let width = Method::ALL
        .iter()
        .map(|m| m.name().len())
        .max()
        .unwrap_or(0);
    for m in Method::ALL {
        println!("{:width$}  {}", m.name(), m.description());
    }
}

fn bench(args: BenchArgs) -> Result<()> {
    if args.list {
        list_methods();
        return Ok(());
    }
    // Before anything sets it: the thread's own slack is the default-slack methods' slack.
    let slack = SlackControl::capture();
    // One clock inspection gives the machine and the report's clock table.
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
        keeptime_cli::report::check_writable(page)?;
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
        tool: Tool {
            name: "keeptime".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
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
        let doc = keeptime_cli::report::Doc::from_report(&report, "this run")?;
        let html = keeptime_cli::report::page::render(std::slice::from_ref(&doc))?;
        keeptime_cli::report::write_atomic(page, html.as_bytes())?;
        eprintln!("report written to {}", page.display());
    }
    match crowd_error {
        Some(e) => Err(anyhow::Error::msg(e)),
        None => Ok(()),
    }
}
