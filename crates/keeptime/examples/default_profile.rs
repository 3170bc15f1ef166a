//! What a default profile buys keeptime's own sleepers on this machine: the
//! free function's thread sleeper (`keeptime::sleep_until_monotonic_ns`) and
//! the async waiter's (`keeptime::tokio`), fresh against started from a
//! profile (`keeptime::set_default_profile`), in rounds that take turns in
//! one process. Each round sets the default first, so each default sleeper
//! starts again at its next sleep: a fresh round is a fresh start, as in a
//! new process.
//!
//! ```text
//! keeptime trace --profile host.profile      # ~12 s recording of this machine
//! cargo run --release -p keeptime --example default_profile -- host.profile [LENGTH_US] [SLEEPS] [ROUNDS]
//! cargo run --release -p keeptime --example default_profile -- host.profile 1000 300 6
//! ```
//!
//! Per round and method: process CPU ÷ wall over the round's sleeps, and the
//! error as the caller sees it (its first clock reading after the call or
//! the `.await`, minus the deadline): p50, p99, max, and the share more than
//! 2 µs late. A sleeper's first hundreds of sleeps are where a profile
//! matters (`docs/how-it-waits.md`, *Starting from a host profile*); the
//! price is the host's drift since the recording.

use keeptime::os::{monotonic_ns, process_cpu_ns};
use keeptime::profile::Profile;
use std::process::ExitCode;

#[path = "common/args.rs"]
mod args;
use args::arg;

/// One round's errors (ns) and process CPU ÷ wall.
struct Round {
    errors: Vec<i64>,
    cpu: f64,
}

impl Round {
    fn measure(sleep_all: impl FnOnce() -> Vec<i64>) -> Round {
        let (cpu0, wall0) = (process_cpu_ns(), monotonic_ns());
        let errors = sleep_all();
        let (cpu, wall) = (process_cpu_ns() - cpu0, monotonic_ns() - wall0);
        Round {
            errors,
            cpu: cpu as f64 / wall.max(1) as f64,
        }
    }

    fn line(mut self, round: usize, start: &str, method: &str) -> String {
        self.errors.sort_unstable();
        let e = &self.errors;
        let at = |q: usize| e[(e.len() - 1) * q / 100];
        let late = e.iter().filter(|&&x| x > 2_000).count() as f64 / e.len() as f64;
        format!(
            "| {round} | {start} | {method} | {:.2} % | {} | {} | {} | {:.1} % |",
            100.0 * self.cpu,
            fmt_ns(at(50)),
            fmt_ns(at(99)),
            fmt_ns(at(100)),
            100.0 * late
        )
    }
}

fn fmt_ns(ns: i64) -> String {
    match ns.abs() {
        0..=999 => format!("{ns} ns"),
        1_000..=999_999 => format!("{:.1} µs", ns as f64 / 1e3),
        _ => format!("{:.2} ms", ns as f64 / 1e6),
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .ok_or("usage: default_profile PROFILE [LENGTH_US] [SLEEPS] [ROUNDS]")?;
    let length_ns = arg(&args, 1, "LENGTH_US", 1_000)?.saturating_mul(1_000);
    let sleeps = arg(&args, 2, "SLEEPS", 300)? as usize;
    let rounds = arg(&args, 3, "ROUNDS", 6)? as usize;
    // Refused (with the field that differs) if made on another machine.
    let profile = Profile::load(path).map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a tokio runtime: {e}"))?;

    println!(
        "{sleeps} sleeps of {} µs per round and method; rounds take turns, fresh first",
        length_ns / 1_000
    );
    println!();
    println!("| round | start | method | process CPU | p50 | p99 | max | late > 2 µs |");
    println!("|---:|---|---|---:|---:|---:|---:|---:|");
    for round in 0..rounds {
        let from_profile = round % 2 == 1;
        keeptime::set_default_profile(from_profile.then_some(&profile));
        let start = if from_profile { "profile" } else { "fresh" };
        let r = Round::measure(|| {
            rt.block_on(async {
                let mut errors = Vec::with_capacity(sleeps);
                for _ in 0..sleeps {
                    let deadline = monotonic_ns() + length_ns;
                    keeptime::tokio::sleep_until_monotonic_ns(deadline).await;
                    errors.push(monotonic_ns() as i64 - deadline as i64);
                }
                errors
            })
        });
        println!("{}", r.line(round, start, "keeptime::tokio::sleep_until"));
        let r = Round::measure(|| {
            let mut errors = Vec::with_capacity(sleeps);
            for _ in 0..sleeps {
                let deadline = monotonic_ns() + length_ns;
                keeptime::sleep_until_monotonic_ns(deadline);
                errors.push(monotonic_ns() as i64 - deadline as i64);
            }
            errors
        });
        println!("{}", r.line(round, start, "keeptime::sleep_until"));
    }
    keeptime::set_default_profile(None);
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("default_profile: {e}");
            ExitCode::FAILURE
        }
    }
}
