//! The cost of the calls `examples/c/bench.c` times through the C library,
//! made here directly on the Rust core, the same way (median of 7 rounds of
//! 2 M calls): the difference is what the C layer adds.
//!
//!     cargo run --release -p keeptime-c --example core_call

use std::hint::black_box;
use std::time::Instant;

fn ns_per_call(which: usize, calls: u32) -> f64 {
    let start = Instant::now();
    let mut sink = 0u64;
    for _ in 0..calls {
        sink = sink.wrapping_add(match which {
            0 => keeptime_core::sleep_until_monotonic_ns(black_box(0)),
            _ => keeptime_core::os::monotonic_ns(),
        });
    }
    black_box(sink);
    start.elapsed().as_nanos() as f64 / f64::from(calls)
}

fn main() {
    // Creates this thread's sleeper outside the timing, as the C bench does.
    keeptime_core::sleep_until_monotonic_ns(0);
    let mut rounds = [[0.0f64; 7]; 2];
    for round in 0..7 {
        for (which, r) in rounds.iter_mut().enumerate() {
            r[round] = ns_per_call(which, 2_000_000);
        }
    }
    for r in &mut rounds {
        r.sort_by(f64::total_cmp);
    }
    println!(
        "Rust core: keeptime::sleep_until_monotonic_ns(past) {:.1} ns/call, os::monotonic_ns() {:.1} ns/call",
        rounds[0][3], rounds[1][3]
    );
}
