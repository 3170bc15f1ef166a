//! keeptime against its peers, measured side by side in one process:
//! `std::thread::sleep`, a pure spin on the clock, the `spin_sleep` crate's
//! default `SpinSleeper`, and `keeptime::sleep`.
//!
//! ```text
//! cargo bench -p keeptime --bench peers            # ~40 s
//! KEEPTIME_BENCH_SCALE=0.25 cargo bench -p keeptime --bench peers   # quicker, noisier
//! ```
//!
//! Error of one wait = the method's first clock reading after the wait − its
//! deadline, as `spec/bench-result.md` defines it for every keeptime bench:
//! keeptime returns its own last reading, the pure spin exits on one, and
//! `std::thread::sleep` and `spin_sleep`, which return none, are read right
//! after they return. The extra time a caller's *next* instruction takes after
//! a long sleep (cold caches; a pure spin never leaves the caller's code) is
//! measured separately and printed under each table for keeptime.
//! CPU % = the waiting thread's CPU time ÷ wall time over its samples
//! (CLOCK_THREAD_CPUTIME_ID). Each method runs on its own long-lived thread
//! (so one method's timer slack or learned margins never leak into another's)
//! and the methods take turns in rounds, so slow drifts of the machine hit
//! all of them alike.

use keeptime::os;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Method {
    StdSleep,
    Spin,
    SpinSleep,
    Keeptime,
    KeeptimeMinSpin,
}

const METHODS: [Method; 5] = [
    Method::StdSleep,
    Method::Spin,
    Method::SpinSleep,
    Method::Keeptime,
    Method::KeeptimeMinSpin,
];

/// The `min_spin` of the last row: this VM's wake-up tail (`keeptime bench`,
/// p99 of clock-nanosleep-abs) is tens of µs.
const MIN_SPIN: Duration = Duration::from_micros(60);

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::StdSleep => "std::thread::sleep",
            Method::Spin => "pure spin",
            Method::SpinSleep => "spin_sleep (default)",
            Method::Keeptime => "keeptime::sleep",
            Method::KeeptimeMinSpin => "keeptime, min_spin 60 µs",
        }
    }
}

struct Cell {
    errors: Vec<i64>,
    /// keeptime only: the caller's next clock reading − keeptime's own last one.
    return_gaps: Vec<i64>,
    cpu_ns: u64,
    wall_ns: u64,
}

/// Spins until `deadline` and returns the reading that ended the spin.
fn spin_until(deadline: Instant) -> Instant {
    loop {
        let now = Instant::now();
        if now >= deadline {
            return now;
        }
        std::hint::spin_loop();
    }
}

fn signed_ns(woke: Instant, deadline: Instant) -> i64 {
    if woke >= deadline {
        (woke - deadline).as_nanos() as i64
    } else {
        -((deadline - woke).as_nanos() as i64)
    }
}

/// What a method's thread keeps between cells.
struct Waiters {
    spin_sleep: spin_sleep::SpinSleeper,
    min_spin: keeptime::Sleeper,
}

impl Waiters {
    fn new() -> Self {
        Waiters {
            spin_sleep: spin_sleep::SpinSleeper::default(),
            min_spin: keeptime::Sleeper::builder().min_spin(MIN_SPIN).build(),
        }
    }
}

/// Runs `n` waits of `d` with `method` on the calling thread.
fn run(method: Method, w: &mut Waiters, d: Duration, n: usize) -> Cell {
    let mut errors = vec![0i64; n];
    let mut return_gaps = Vec::with_capacity(if method == Method::Keeptime { n } else { 0 });
    let d_ns = d.as_nanos() as u64;
    let cpu0 = os::thread_cpu_ns();
    let wall0 = os::monotonic_ns();
    for e in errors.iter_mut() {
        *e = match method {
            Method::Keeptime => {
                let deadline = os::monotonic_ns() + d_ns;
                let woke = keeptime::sleep_until_monotonic_ns(deadline);
                return_gaps.push((os::monotonic_ns() - woke) as i64);
                woke as i64 - deadline as i64
            }
            Method::Spin => {
                let deadline = Instant::now() + d;
                signed_ns(spin_until(deadline), deadline)
            }
            Method::StdSleep => {
                let deadline = Instant::now() + d;
                thread::sleep(d);
                signed_ns(Instant::now(), deadline)
            }
            Method::SpinSleep => {
                let deadline = Instant::now() + d;
                w.spin_sleep.sleep(d);
                signed_ns(Instant::now(), deadline)
            }
            Method::KeeptimeMinSpin => {
                let deadline = os::monotonic_ns() + d_ns;
                let woke = w.min_spin.sleep_until_ns(deadline);
                woke as i64 - deadline as i64
            }
        };
    }
    Cell {
        errors,
        return_gaps,
        cpu_ns: os::thread_cpu_ns() - cpu0,
        wall_ns: os::monotonic_ns() - wall0,
    }
}

/// A long-lived thread per method, fed (duration, samples) jobs.
fn spawn_worker(method: Method) -> (mpsc::Sender<(Duration, usize)>, mpsc::Receiver<Cell>) {
    let (job_tx, job_rx) = mpsc::channel::<(Duration, usize)>();
    let (res_tx, res_rx) = mpsc::channel();
    thread::Builder::new()
        .name(method.name().into())
        .spawn(move || {
            let mut waiters = Waiters::new();
            for (d, n) in job_rx {
                if res_tx.send(run(method, &mut waiters, d, n)).is_err() {
                    break;
                }
            }
        })
        .unwrap();
    (job_tx, res_rx)
}

struct Summary {
    p50: i64,
    p99: i64,
    max: i64,
    early: usize,
    cpu: f64,
}

fn summarize(errors: &mut [i64], cpu_ns: u64, wall_ns: u64) -> Summary {
    errors.sort_unstable();
    let q = |p: f64| errors[((errors.len() - 1) as f64 * p).round() as usize];
    Summary {
        p50: q(0.50),
        p99: q(0.99),
        max: *errors.last().unwrap(),
        early: errors.iter().filter(|&&e| e < 0).count(),
        cpu: 100.0 * cpu_ns as f64 / wall_ns.max(1) as f64,
    }
}

fn fmt_ns(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    let s = if a < 1_000.0 {
        format!("{ns} ns")
    } else if a < 1_000_000.0 {
        format!("{:.2} µs", ns as f64 / 1e3)
    } else {
        format!("{:.2} ms", ns as f64 / 1e6)
    };
    s
}

fn fmt_d(d: Duration) -> String {
    fmt_ns(d.as_nanos() as i64).replace(".00", "")
}

fn crowd(method: Method, threads: usize, d: Duration, total: Duration) -> Summary {
    let cpu0 = os::process_cpu_ns();
    let wall0 = os::monotonic_ns();
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            thread::spawn(move || {
                let n = (total.as_nanos() / d.as_nanos()) as usize;
                run(method, &mut Waiters::new(), d, n).errors
            })
        })
        .collect();
    let mut all: Vec<i64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let cpu = os::process_cpu_ns() - cpu0;
    let wall = os::monotonic_ns() - wall0;
    summarize(&mut all, cpu, wall)
}

fn main() {
    // `cargo bench` passes --bench; nothing else to parse.
    let scale: f64 = std::env::var("KEEPTIME_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let cells: [(Duration, usize); 4] = [
        (Duration::from_micros(10), 10_000),
        (Duration::from_micros(100), 5_000),
        (Duration::from_millis(1), 2_000),
        (Duration::from_millis(10), 300),
    ];
    let rounds = 5;
    let workers: Vec<_> = METHODS.iter().map(|&m| (m, spawn_worker(m))).collect();
    println!("keeptime peers benchmark: same process, same run; {rounds} interleaved rounds per duration");
    println!(
        "machine: {} CPUs, kernel {}, clocksource {}",
        thread::available_parallelism().map_or(1, |n| n.get()),
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim(),
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default()
            .trim()
    );
    for (d, samples) in cells {
        let per_round = ((samples as f64 * scale) as usize / rounds).max(20);
        // Warm-up: let every method's state settle (keeptime learns its margins).
        for (_, (tx, rx)) in &workers {
            tx.send((d, 50)).unwrap();
            rx.recv().unwrap();
        }
        let mut acc: Vec<(Vec<i64>, u64, u64)> =
            METHODS.iter().map(|_| (Vec::new(), 0, 0)).collect();
        let mut gaps = Vec::new();
        for _ in 0..rounds {
            for (i, (_, (tx, rx))) in workers.iter().enumerate() {
                tx.send((d, per_round)).unwrap();
                let c = rx.recv().unwrap();
                acc[i].0.extend(c.errors);
                gaps.extend(c.return_gaps);
                acc[i].1 += c.cpu_ns;
                acc[i].2 += c.wall_ns;
            }
        }
        println!(
            "\n## {} ({} samples per method)\n",
            fmt_d(d),
            per_round * rounds
        );
        println!("| method | p50 error | p99 error | max error | early | CPU |");
        println!("|---|---:|---:|---:|---:|---:|");
        let sums: Vec<Summary> = acc
            .iter_mut()
            .map(|(e, c, w)| summarize(e, *c, *w))
            .collect();
        for (m, s) in METHODS.iter().zip(&sums) {
            print_row(*m, s);
        }
        let (spin, peer, kt) = (&sums[1], &sums[2], &sums[3]);
        println!(
            "\nkeeptime vs targets: p50 {} (≤ 200 ns: {}), p99 {} = {:.2}× the pure spin's (≤ 1.5×: {}), CPU {:.2} % = {:.2}× spin_sleep's{}, p99 {} spin_sleep's, early returns {}",
            fmt_ns(kt.p50),
            ok(kt.p50 <= 200),
            fmt_ns(kt.p99),
            kt.p99 as f64 / spin.p99.max(1) as f64,
            ok(kt.p99 as f64 <= 1.5 * spin.p99.max(1) as f64),
            kt.cpu,
            kt.cpu / peer.cpu.max(1e-9),
            if d >= Duration::from_millis(1) {
                format!(" (≤ 0.33×: {})", ok(kt.cpu <= peer.cpu / 3.0))
            } else {
                String::new()
            },
            if kt.p99 <= peer.p99 { "≤" } else { ">" },
            kt.early
        );
        let ms = &sums[4];
        println!(
            "keeptime with min_spin {}: p50 {}, p99 {} = {:.2}× the pure spin's (≤ 1.5×: {}), CPU {:.2} % = {:.2}× spin_sleep's, early returns {}",
            fmt_d(MIN_SPIN),
            fmt_ns(ms.p50),
            fmt_ns(ms.p99),
            ms.p99 as f64 / spin.p99.max(1) as f64,
            ok(ms.p99 as f64 <= 1.5 * spin.p99.max(1) as f64),
            ms.cpu,
            ms.cpu / peer.cpu.max(1e-9),
            ms.early
        );
        let g = summarize(&mut gaps, 0, 1);
        println!(
            "keeptime return path: the caller's next clock reading came {} (p50) / {} (p99) after keeptime's own last one",
            fmt_ns(g.p50),
            fmt_ns(g.p99)
        );
    }

    let threads = 16;
    let d = Duration::from_millis(1);
    let total = Duration::from_secs_f64(2.0 * scale.max(0.25));
    println!(
        "\n## crowd: {threads} threads sleeping {} in a loop for {:.1} s on {} CPUs\n",
        fmt_d(d),
        total.as_secs_f64(),
        thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "| method | p50 error | p99 error | max error | early | process CPU (% of one core) |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for m in [
        Method::StdSleep,
        Method::SpinSleep,
        Method::Keeptime,
        Method::KeeptimeMinSpin,
    ] {
        print_row(m, &crowd(m, threads, d, total));
    }
}

fn print_row(m: Method, s: &Summary) {
    println!(
        "| {} | {} | {} | {} | {} | {:.1} % |",
        m.name(),
        fmt_ns(s.p50),
        fmt_ns(s.p99),
        fmt_ns(s.max),
        s.early,
        s.cpu
    );
}

fn ok(b: bool) -> &'static str {
    if b {
        "met"
    } else {
        "MISSED"
    }
}
