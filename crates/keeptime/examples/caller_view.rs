//! How late the *caller* gets control back: for each sleep length, a pure
//! pause spin, `keeptime::sleep_until` (the thread's own sleeper) and an owned
//! `Sleeper`, interleaved round by round in one process. Error = the caller's
//! first `CLOCK_MONOTONIC` reading after the call returns − the deadline; the
//! "return" column is that reading − the value keeptime returned (its own last
//! reading), i.e. what its return path costs.
//!
//! ```text
//! cargo run --release -p keeptime --example caller_view -- [SLEEPS_PER_CELL] [ROUNDS]
//! ```

use keeptime::os::monotonic_ns;
use keeptime::stats::nearest_rank;
use keeptime::Sleeper;
use std::hint::spin_loop;

const LENGTHS_NS: [u64; 4] = [250_000, 1_000_000, 2_500_000, 10_000_000];

#[derive(Default)]
struct Cell {
    errors: Vec<u64>,
    returns: Vec<u64>,
    early: usize,
    cpu_ns: u64,
    wall_ns: u64,
}

fn thread_cpu_ns() -> u64 {
    keeptime::os::thread_cpu_ns()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let per_cell: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let names = ["pure pause spin", "keeptime::sleep_until", "owned Sleeper"];
    let mut owned = Sleeper::new();
    let mut cells: Vec<Vec<Cell>> = LENGTHS_NS
        .iter()
        .map(|_| names.iter().map(|_| Cell::default()).collect())
        .collect();
    // Warm-up: each length a few dozen times, so the model is not empty.
    for &len in &LENGTHS_NS {
        for _ in 0..30 {
            keeptime::sleep_until_monotonic_ns(monotonic_ns() + len);
            owned.sleep_until_ns(monotonic_ns() + len);
        }
    }
    for _ in 0..rounds {
        for (li, &len) in LENGTHS_NS.iter().enumerate() {
            for (mi, cell) in cells[li].iter_mut().enumerate() {
                let cpu0 = thread_cpu_ns();
                let wall0 = monotonic_ns();
                for _ in 0..per_cell / rounds.max(1) {
                    let deadline = monotonic_ns() + len;
                    let inside = match mi {
                        0 => {
                            while monotonic_ns() < deadline {
                                spin_loop();
                            }
                            None
                        }
                        1 => Some(keeptime::sleep_until_monotonic_ns(deadline)),
                        _ => Some(owned.sleep_until_ns(deadline)),
                    };
                    let caller = monotonic_ns();
                    if caller < deadline {
                        cell.early += 1;
                    }
                    cell.errors.push(caller.saturating_sub(deadline));
                    if let Some(inside) = inside {
                        cell.returns.push(caller.saturating_sub(inside));
                    }
                }
                cell.cpu_ns += thread_cpu_ns() - cpu0;
                cell.wall_ns += monotonic_ns() - wall0;
            }
        }
    }
    println!(
        "{:>8}  {:<22} {:>7} {:>9} {:>9} {:>9} {:>8} {:>6} {:>9} {:>9} {:>6}",
        "sleep", "method", "n", "p50", "p90", "p99", ">2µs", "early", "ret p50", "ret p90", "CPU"
    );
    for (li, &len) in LENGTHS_NS.iter().enumerate() {
        for (mi, cell) in cells[li].iter_mut().enumerate() {
            cell.errors.sort_unstable();
            cell.returns.sort_unstable();
            let late = cell.errors.iter().filter(|&&e| e > 2_000).count();
            let ret = |p: u64| {
                nearest_rank(&cell.returns, p).map_or("—".to_string(), |v| format!("{v} ns"))
            };
            println!(
                "{:>6}µs  {:<22} {:>7} {:>6} ns {:>6} ns {:>6} ns {:>7.2}% {:>6} {:>9} {:>9} {:>5.1}%",
                len / 1000,
                names[mi],
                cell.errors.len(),
                nearest_rank(&cell.errors, 500).unwrap_or(0),
                nearest_rank(&cell.errors, 900).unwrap_or(0),
                nearest_rank(&cell.errors, 990).unwrap_or(0),
                100.0 * late as f64 / cell.errors.len().max(1) as f64,
                cell.early,
                ret(500),
                ret(900),
                100.0 * cell.cpu_ns as f64 / cell.wall_ns.max(1) as f64,
            );
        }
    }
}
