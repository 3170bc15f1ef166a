//! Does a short OS wait wake later right after a long one? Pairs of plain
//! OS waits (1 ns timer slack), taking turns: a LONG wait then a SHORT one,
//! and a SHORT wait then a SHORT one; prints how late the second, measured
//! wait woke in each case.
//!
//! ```text
//! cargo run --release -p keeptime --example after_long_wait -- [LONG_US] [SHORT_US] [PAIRS]
//! cargo run --release -p keeptime --example after_long_wait -- 9700 230 800
//! ```
//!
//! `keeptime trace --oracle` prices a wait by its own length only: it
//! replays each OS wait of a plan from the recorded wake-ups of that length,
//! recorded after waits of other lengths than the plan's. Where the host's
//! wake-up depends on how long the CPU was idle before (the idle governor, a
//! stopped tick, caches gone cold), the short second wait of a two-wait plan
//! wakes later than the recording says, and the oracle's two-wait plans are
//! cheaper than any sleeper can be at their late share. The sleeper's own
//! model learns its short waits from the waits it takes, so it sees the
//! difference.

use keeptime::{Platform, System};
use std::process::ExitCode;

#[path = "common/args.rs"]
mod args;
use args::arg;

/// `[LONG_US] [SHORT_US] [PAIRS]`, defaults 9 700, 230 and 800.
fn parse(args: &[String]) -> Result<(u64, u64, u64), String> {
    Ok((
        arg(args, 0, "LONG_US", 9_700)?,
        arg(args, 1, "SHORT_US", 230)?,
        arg(args, 2, "PAIRS", 800)?,
    ))
}

fn summary(name: &str, mut late_ns: Vec<u64>) {
    late_ns.sort_unstable();
    let q = |p: f64| late_ns[((late_ns.len() - 1) as f64 * p) as usize] as f64 / 1e3;
    let over = |us: u64| {
        100.0 * late_ns.iter().filter(|&&x| x > us * 1_000).count() as f64 / late_ns.len() as f64
    };
    println!(
        "{name:>24}: p50 {:6.1} µs  p90 {:6.1}  p99 {:6.1}  max {:7.1}   later than 40 µs {:5.1} %, 60 µs {:5.1} %",
        q(0.5),
        q(0.9),
        q(0.99),
        q(1.0),
        over(40),
        over(60)
    );
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (long_us, short_us, pairs) = match parse(&args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("after_long_wait: {e}\nusage: after_long_wait [LONG_US] [SHORT_US] [PAIRS]");
            return ExitCode::from(2);
        }
    };
    let p = System::new(true);
    p.prepare_thread();
    let (long, short) = (long_us * 1_000, short_us * 1_000);
    let wait = |first: u64| {
        let t = p.now_ns();
        p.os_wait_until(t.saturating_add(first));
        let target = p.now_ns().saturating_add(short);
        p.os_wait_until(target);
        p.now_ns().saturating_sub(target)
    };
    let (mut after_long, mut after_short) = (Vec::new(), Vec::new());
    for _ in 0..pairs {
        after_long.push(wait(long));
        after_short.push(wait(short));
    }
    println!("a {short_us} µs OS wait (1 ns timer slack), {pairs} of each, taking turns; how late it woke:");
    summary(&format!("after a {long_us} µs wait"), after_long);
    summary(&format!("after a {short_us} µs wait"), after_short);
    ExitCode::SUCCESS
}
