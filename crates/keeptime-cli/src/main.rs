//! `keeptime`: bench, clocks, sleep, latency, report, trace. The binary
//! parses the command line and runs the command; everything else lives in
//! the `keeptime_cli` library.

use clap::error::ErrorKind;
use clap::Parser;
use keeptime_cli::cli::Cli;
use keeptime_cli::duration::DurationError;
use keeptime_cli::UsageError;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(e),
    };
    match cli.command.run() {
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
