//! The oracle of a wake-up trace recorded in this run ([`keeptime::trace`]):
//! the least CPU any "OS wait(s), then spin" plan needs on this machine,
//! as it is right now, for a given share of late sleeps.

use super::*;
use keeptime::trace::{self, Oracle, RecordOptions, Trace};

/// Draws per oracle evaluation (4000 leave a 0.1 % tail 4 late sleeps).
const DRAWS: usize = 40_000;

pub struct Recorded {
    trace: Trace,
}

/// Records a trace of this machine now (12 s × scale, at least 3 s) and
/// writes it to `target/bench-peers-trace.csv.gz` for `keeptime trace --oracle`.
pub fn record(scale: f64) -> Option<Recorded> {
    let opts = RecordOptions {
        total_ns: (12e9 * scale).max(3e9) as u64,
        ..RecordOptions::default()
    };
    let after_s = opts.after_lengths_ns.len() as f64
        * f64::from(opts.after_waits)
        * opts.after_long_ns as f64
        / 1e9;
    println!(
        "recording a wake-up trace of this machine for the oracle ({:.0} s, then {:.1} s of short waits right after long ones)...",
        opts.total_ns as f64 / 1e9,
        after_s
    );
    let trace = match trace::record(&opts, |_| {}) {
        Ok(t) => t,
        Err(e) => {
            println!("no oracle: recording the trace failed: {e}");
            return None;
        }
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/bench-peers-trace.csv.gz");
    match trace.write(&path) {
        Ok(()) => println!("trace written to {}", path.display()),
        Err(e) => println!("trace not written: {e}"),
    }
    Some(Recorded { trace })
}

impl Recorded {
    /// Prints the oracle's CPU next to keeptime's at each target, and the
    /// 1 % target's ratio against the 1.3× bound.
    pub fn print_against(&self, d: Duration, sums: &[Summary], methods: &[Method]) {
        let oracle = match Oracle::new(&self.trace, DRAWS, 1) {
            Ok(o) => o,
            Err(e) => {
                println!("- oracle: {e}");
                return;
            }
        };
        let outcomes = match oracle.outcomes(d.as_nanos() as u64) {
            Ok(o) => o,
            Err(e) => {
                println!("- oracle: {e}");
                return;
            }
        };
        for (m, s) in methods.iter().zip(sums) {
            let Method::Keeptime(t) = *m else { continue };
            let Ok(best) = outcomes.best(t.share()) else {
                continue;
            };
            let oracle_cpu = best.cpu_share * 100.0;
            let ratio = s.cpu / oracle_cpu.max(1e-9);
            let verdict = if t == TailTarget::BALANCED {
                format!(" (≤ 1.3×: {})", ok(ratio <= 1.3))
            } else {
                String::new()
            };
            println!(
                "- target {t}: keeptime CPU {:.2} % vs the oracle's {:.2} % on this run's trace = {ratio:.2}×{verdict}; oracle plan: {} (its late share {:.2} %)",
                s.cpu,
                oracle_cpu,
                best.plan,
                best.late_share * 100.0
            );
        }
    }
}
