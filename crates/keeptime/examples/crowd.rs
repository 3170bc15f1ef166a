//! A crowd of sleepers, quickly: N threads each sleeping D in a loop, one
//! method at a time, with the process CPU over each method's run. The full
//! comparison (every crowd shape, interleaved, with the idle hint) is
//! `make bench-peers`; this is the quick look.
//!
//! ```text
//! cargo run --release -p keeptime --example crowd -- 64 1000 1.5 keeptime spin_sleep std
//! ```
//! Arguments: threads (16), sleep in µs (1000), seconds per method (2), methods
//! (keeptime, spin_sleep, std; default all three).
use keeptime::{os, Sleeper};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: f64| a.get(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let threads = arg(0, 16.0) as usize;
    let us = arg(1, 1000.0) as u64;
    let secs = arg(2, 2.0);
    if threads == 0 || us == 0 || secs <= 0.0 {
        eprintln!(
            "usage: crowd [THREADS>0] [SLEEP_US>0] [SECONDS>0] [keeptime|spin_sleep|std ...]"
        );
        std::process::exit(2);
    }
    let methods: Vec<String> = if a.len() > 3 {
        a[3..].to_vec()
    } else {
        vec!["keeptime".into(), "spin_sleep".into(), "std".into()]
    };
    let d = Duration::from_micros(us);
    let n = ((secs * 1e6 / us as f64) as usize).max(1);
    println!("{threads} threads × {us} µs, {n} sleeps each");
    for m in &methods {
        if !matches!(m.as_str(), "keeptime" | "spin_sleep" | "std") {
            eprintln!("unknown method {m:?} (expected keeptime, spin_sleep or std)");
            std::process::exit(2);
        }
        let start = Arc::new(Barrier::new(threads + 1));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let m = m.clone();
                let start = Arc::clone(&start);
                thread::spawn(move || {
                    let mut sleeper = Sleeper::new();
                    let spin_sleeper = spin_sleep::SpinSleeper::default();
                    let mut errors = Vec::with_capacity(n);
                    start.wait();
                    for _ in 0..n {
                        let deadline = os::monotonic_ns() + us * 1_000;
                        match m.as_str() {
                            "keeptime" => {
                                sleeper.sleep_until_ns(deadline);
                            }
                            "spin_sleep" => spin_sleeper.sleep(d),
                            _ => thread::sleep(d),
                        }
                        // The caller's first reading after the call returns.
                        let now = os::monotonic_ns();
                        errors.push(now as i64 - deadline as i64);
                    }
                    (errors, sleeper.stats())
                })
            })
            .collect();
        start.wait();
        let cpu0 = os::process_cpu_ns();
        let wall0 = os::monotonic_ns();
        let mut all = Vec::with_capacity(n * threads);
        let (mut waits, mut late, mut sleeps) = (0, 0, 0);
        for h in handles {
            let (e, st) = h.join().expect("a sleeper thread panicked");
            all.extend(e);
            waits += st.os_waits;
            late += st.late;
            sleeps += st.sleeps;
        }
        let cpu = (os::process_cpu_ns() - cpu0) as f64 / (os::monotonic_ns() - wall0) as f64;
        all.sort_unstable();
        let q = |per_mille: u64| {
            keeptime::stats::nearest_rank(&all, per_mille).unwrap_or(0) as f64 / 1000.0
        };
        let early = all.iter().filter(|&&x| x < 0).count();
        let late2 = all.iter().filter(|&&x| x > 2_000).count() as f64 / all.len() as f64;
        print!(
            "{m:10} p50 {:7.1} µs  p99 {:7.1} µs  max {:8.1} µs  early {early}  late>2µs {:5.1} %  process CPU {:5.1} %",
            q(500),
            q(990),
            q(1000),
            late2 * 100.0,
            cpu * 100.0
        );
        if m == "keeptime" {
            print!(
                "  ({:.2} OS waits/sleep, {:.1} % late by an OS wake-up)",
                waits as f64 / sleeps.max(1) as f64,
                late as f64 / sleeps.max(1) as f64 * 100.0
            );
        }
        println!();
    }
}
