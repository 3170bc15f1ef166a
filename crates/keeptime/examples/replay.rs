//! Replays keeptime's planner on a recorded wake-up trace and prints, per
//! sleep length and tail target, what it spends and how often it is late,
//! next to the oracle's least CPU on the same trace: how the algorithm would
//! do on another machine, without that machine.
//!
//! ```text
//! cargo run --release -p keeptime --example replay -- crates/keeptime/tests/data/amd-epyc-kvm-haltpoll.csv.gz
//! cargo run --release -p keeptime --example replay -- TRACE [--sleeps N] [--durations 250us,1ms,2.5ms,10ms]
//! ```
//!
//! The replay (`keeptime::trace::TracePlatform`) takes each OS wait's
//! overshoot and thread CPU from the trace rows of the nearest recorded
//! length, in file order; spins cost their simulated time. Each (duration,
//! target) cell is a fresh sleeper: 1000 warm-up sleeps, then the measured
//! ones (20 s of sleeping by default). Late = the sleep ended after its
//! deadline because an OS wait woke the thread late.

use keeptime::trace::{Oracle, Trace, TracePlatform};
use keeptime::{Sleeper, TailTarget};
use std::process::ExitCode;

fn parse_ns(s: &str) -> Option<u64> {
    let s = s.trim();
    for (suffix, k) in [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ] {
        if let Some(v) = s.strip_suffix(suffix) {
            let x: f64 = v.parse().ok()?;
            return (x > 0.0 && x.is_finite()).then_some((x * k) as u64);
        }
    }
    None
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut sleeps_s = 20.0;
    let mut durations = vec![250_000, 1_000_000, 2_500_000, 10_000_000];
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sleeps" => match args.next().and_then(|v| v.parse::<f64>().ok()) {
                Some(v) if v > 0.0 => sleeps_s = v,
                _ => {
                    eprintln!("replay: --sleeps takes seconds of sleeping, e.g. 20");
                    return ExitCode::from(2);
                }
            },
            "--durations" => {
                let v: Option<Vec<u64>> = args
                    .next()
                    .map(|v| v.split(',').map(parse_ns).collect())
                    .unwrap_or(None);
                match v {
                    Some(v) if !v.is_empty() => durations = v,
                    _ => {
                        eprintln!("replay: --durations takes a list such as 250us,1ms,10ms");
                        return ExitCode::from(2);
                    }
                }
            }
            _ if path.is_none() => path = Some(a),
            other => {
                eprintln!("replay: unexpected argument {other:?}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(path) = path else {
        eprintln!("usage: replay TRACE.csv[.gz] [--sleeps SECONDS] [--durations LIST]");
        return ExitCode::from(2);
    };
    let trace = match Trace::load(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("replay: {e}");
            return ExitCode::from(2);
        }
    };
    let oracle = match Oracle::new(&trace, 40_000, 1) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("replay: {e}");
            return ExitCode::from(2);
        }
    };
    println!("replay of {path}: keeptime's planner vs the oracle (40000 draws) on the same trace");
    println!(
        "{:>8} {:>7} {:>9} {:>9} {:>7} {:>10} {:>10} {:>7}",
        "sleep", "target", "CPU %", "late %", "waits", "oracle %", "ratio", "o.late"
    );
    for &d in &durations {
        let outcomes = oracle.outcomes(d).ok();
        for t in [
            TailTarget::RELAXED,
            TailTarget::BALANCED,
            TailTarget::STRICT,
        ] {
            let tp = TracePlatform::new(trace.clone(), 1_000_000);
            tp.set_spin_step(50);
            let mut s = Sleeper::builder().tail_target(t).build_with(tp.clone());
            for _ in 0..1_000 {
                let deadline = tp.now() + d;
                s.sleep_until_ns(deadline);
            }
            s.reset_stats();
            let (cpu0, t0) = (tp.thread_cpu_ns(), tp.now());
            let n = ((sleeps_s * 1e9) as u64 / d).max(100);
            for _ in 0..n {
                let deadline = tp.now() + d;
                s.sleep_until_ns(deadline);
            }
            let cpu = 100.0 * (tp.thread_cpu_ns() - cpu0) as f64 / (tp.now() - t0) as f64;
            let st = s.stats();
            let best = outcomes.as_ref().and_then(|o| o.best(t.share()).ok());
            let (ocpu, olate) = best.map_or((f64::NAN, f64::NAN), |b| {
                (b.cpu_share * 100.0, b.late_share * 100.0)
            });
            println!(
                "{:>6}µs {:>7} {:>9.2} {:>9.2} {:>7.2} {:>10.2} {:>9.2}× {:>7.2}",
                d / 1_000,
                t.to_string(),
                cpu,
                st.late_share() * 100.0,
                st.os_waits as f64 / n as f64,
                ocpu,
                cpu / ocpu,
                olate
            );
        }
    }
    ExitCode::SUCCESS
}
