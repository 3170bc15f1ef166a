//! The command line's top: the subcommands. Each command owns its options
//! and its `run` (`bench::args`, `clocks`, `sleep`, `latency::args`,
//! `report`, `trace`); the value parsers they share are in [`parse`](crate::parse).

use clap::{Parser, Subcommand};

/// Wait exactly as long as you asked, at the CPU cost of a sleep, and know
/// what this machine's clocks and timers really do.
#[derive(Debug, Parser)]
#[command(
    name = "keeptime",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare every way of waiting on this machine: accuracy and CPU cost.
    #[command(long_about = crate::bench::args::BENCH_ABOUT)]
    Bench(crate::bench::args::BenchArgs),
    /// Inspect the machine's clocks and timers: resolution, granularity,
    /// read cost, monotonicity, clocksource, timer slack, idle states.
    Clocks(crate::clocks::ClocksArgs),
    /// Sleep precisely (keeptime's exact mode); arguments add up, like GNU sleep.
    Sleep(crate::sleep::SleepArgs),
    /// Periodic wake-up latency, measured the way cyclictest does.
    #[command(long_about = crate::latency::args::LATENCY_ABOUT)]
    Latency(crate::latency::LatencyArgs),
    /// Draw bench result files (any runtime's --export-json) as one
    /// self-contained HTML page: distributions, CPU trade-off, tables.
    Report(crate::report::ReportArgs),
    /// Record how late this machine's OS waits wake (a trace file), or read
    /// one; print per-length overshoots and the oracle's cheapest plans.
    #[command(long_about = crate::trace::TRACE_ABOUT)]
    Trace(crate::trace::TraceArgs),
}

impl Command {
    /// Runs the command.
    ///
    /// # Errors
    /// A [`UsageError`](crate::UsageError) for what the user asked wrongly
    /// (exit 2), any other error for what failed.
    pub fn run(self) -> anyhow::Result<()> {
        match self {
            Command::Bench(args) => crate::bench::command::run(args),
            Command::Clocks(args) => crate::clocks::run(args.json),
            Command::Sleep(args) => crate::sleep::run(&args.durations, args.verbose),
            Command::Latency(args) => crate::latency::run(args),
            Command::Report(args) => crate::report::run(&args.files, &args.output),
            Command::Trace(args) => crate::trace::run(args),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }
}
