//! Precise sleeps in async code, measured side by side in one process:
//! `tokio::time::sleep` (the runtime's own timer) and `keeptime::tokio::sleep`,
//! alone and under load, with `block_in_place(keeptime::sleep)` (multi-thread
//! runtime only: tokio forbids it on a current-thread one) and the blocking
//! `keeptime::sleep` on a plain thread as references for the single sleeps.
//!
//! ```text
//! make bench-async                        # cargo bench -p keeptime --features tokio --bench async, ~60 s
//! KEEPTIME_BENCH_SCALE=0.25 make bench-async   # quicker, noisier
//! ```
//!
//! Error of one wait = the waiting task's own first clock reading after the
//! `.await` (or the blocking call) returns − its deadline, for every method
//! alike; a reading before the deadline counts as *early*. Percentiles are
//! nearest-rank (`keeptime::stats::nearest_rank`). CPU = *process* CPU time
//! ÷ wall time over the cell (the waiter thread and every runtime thread
//! count). Capacity = `keeptime::waiter::capacity()` after the cell: the
//! deadlines per second the waiter states it serves precisely; a load row's
//! rate is the deadlines per second it asks for. Precise = the waiter's
//! precise admissions during the cell ÷ its sleeps (`WaiterStats::precise`;
//! the rest were served coarse). Methods take turns so slow
//! drifts of the machine hit all alike.
//!
//! Load rows (multi-thread runtime, 2 workers):
//! * *burst*: 1,000 tasks, each sleeping until its own deadline, the
//!   deadlines 3 µs apart; two rounds of each method in the same process;
//! * *tick*: 10, 100 and 1,000 tasks, each ticking at 1 kHz (deadline
//!   `start + phase + k·1 ms`, phases spread over the period) for 2 s, in two
//!   rounds of 1 s per method (tokio, keeptime, keeptime, tokio);
//! * *crowd*: 1,000 tasks each sleeping 10 ms ten times, deadlines spread
//!   over one period (current-thread and multi-thread), in two rounds of
//!   five per method, taking turns as the ticks do.

use keeptime::os::process_cpu_ns;
use keeptime::stats::nearest_rank;
use std::time::{Duration, Instant};
use tokio::runtime::{Builder, Runtime};

mod common;
use common::{fmt_d, fmt_ns, ok};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Method {
    Blocking,
    TokioSleep,
    Keeptime,
    BlockInPlace,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Blocking => "keeptime::sleep (blocking, plain thread)",
            Method::TokioSleep => "tokio::time::sleep",
            Method::Keeptime => "keeptime::tokio::sleep",
            Method::BlockInPlace => "block_in_place(keeptime::sleep)",
        }
    }
}

/// Sleeps until `deadline` with `method` (an async one) and returns the
/// caller's error: its first reading after the `.await` − the deadline, ns.
async fn wait_until(method: Method, deadline: Instant) -> i64 {
    match method {
        Method::TokioSleep => tokio::time::sleep_until(deadline.into()).await,
        Method::Keeptime => keeptime::tokio::sleep_until(deadline).await,
        Method::BlockInPlace => {
            tokio::task::block_in_place(|| {
                keeptime::sleep(deadline.saturating_duration_since(Instant::now()))
            });
        }
        Method::Blocking => unreachable!("not an async method"),
    }
    signed_ns(Instant::now(), deadline)
}

fn signed_ns(t: Instant, deadline: Instant) -> i64 {
    if t >= deadline {
        (t - deadline).as_nanos() as i64
    } else {
        -((deadline - t).as_nanos() as i64)
    }
}

#[derive(Default)]
struct Cell {
    errors: Vec<i64>,
    cpu_ns: u64,
    wall_ns: u64,
    /// Precise deadlines the waiter admitted meanwhile.
    precise: u64,
}

impl Cell {
    fn add(&mut self, other: Cell) {
        self.errors.extend(other.errors);
        self.cpu_ns += other.cpu_ns;
        self.wall_ns += other.wall_ns;
        self.precise += other.precise;
    }
}

/// Runs `f`, timing its wall and process CPU.
fn measured(f: impl FnOnce() -> Vec<i64>) -> Cell {
    let precise0 = keeptime::waiter::stats().precise;
    let cpu0 = process_cpu_ns();
    let wall0 = Instant::now();
    let errors = f();
    Cell {
        errors,
        cpu_ns: process_cpu_ns() - cpu0,
        wall_ns: wall0.elapsed().as_nanos() as u64,
        precise: keeptime::waiter::stats().precise - precise0,
    }
}

/// `n` sequential sleeps of `d` with `method` (in `rt` unless blocking).
fn run(method: Method, rt: Option<&Runtime>, d: Duration, n: usize) -> Cell {
    measured(|| {
        if method == Method::Blocking {
            return (0..n)
                .map(|_| {
                    let deadline = Instant::now() + d;
                    keeptime::sleep(d);
                    signed_ns(Instant::now(), deadline)
                })
                .collect();
        }
        let rt = rt.expect("async methods need a runtime");
        // Spawned, so the sleeps run on a worker thread as application tasks do.
        rt.block_on(rt.spawn(async move {
            let mut errors = Vec::with_capacity(n);
            for _ in 0..n {
                errors.push(wait_until(method, Instant::now() + d).await);
            }
            errors
        }))
        .unwrap()
    })
}

/// Spawns one task per deadline list, each sleeping until its deadlines in
/// turn; the errors of all.
fn tasks(method: Method, rt: &Runtime, lists: Vec<Vec<Instant>>) -> Cell {
    measured(|| {
        rt.block_on(async {
            let handles: Vec<_> = lists
                .into_iter()
                .map(|deadlines| {
                    rt.spawn(async move {
                        let mut errors = Vec::with_capacity(deadlines.len());
                        for deadline in deadlines {
                            errors.push(wait_until(method, deadline).await);
                        }
                        errors
                    })
                })
                .collect();
            let mut all = Vec::new();
            for h in handles {
                all.extend(h.await.unwrap());
            }
            all
        })
    })
}

/// 1,000 tasks, one deadline each, `gap` apart, the first 5 ms from now.
fn burst(method: Method, rt: &Runtime, gap: Duration) -> Cell {
    let start = Instant::now() + Duration::from_millis(5);
    tasks(
        method,
        rt,
        (0..1_000u32).map(|i| vec![start + gap * i]).collect(),
    )
}

/// Two rounds of a load row, `round(method)` for each method in turn, the
/// second round in the opposite order (A B B A), so that a drift of the
/// machine within the row hits both alike; each method's rounds pooled.
fn interleaved(methods: [Method; 2], mut round: impl FnMut(Method) -> Cell) -> Vec<Summary> {
    let mut cells = [Cell::default(), Cell::default()];
    for order in [[0, 1], [1, 0]] {
        for i in order {
            cells[i].add(round(methods[i]));
        }
    }
    cells.into_iter().map(summarize).collect()
}

/// `n` tasks ticking every `period` for `length`, phases spread over one period.
fn tick(method: Method, rt: &Runtime, n: u32, period: Duration, length: Duration) -> Cell {
    let start = Instant::now() + Duration::from_millis(5);
    let ticks = (length.as_nanos() / period.as_nanos()) as u32;
    tasks(
        method,
        rt,
        (0..n)
            .map(|i| {
                let phase = period * i / n;
                (1..=ticks).map(|k| start + phase + period * k).collect()
            })
            .collect(),
    )
}

/// 1,000 tasks, each sleeping `d` `per_task` times, their deadlines spread
/// over one `d`.
fn crowd(method: Method, rt: &Runtime, d: Duration, per_task: usize) -> Cell {
    measured(|| {
        rt.block_on(async {
            let handles: Vec<_> = (0..1_000u32)
                .map(|i| {
                    rt.spawn(async move {
                        tokio::time::sleep(d * i / 1_000).await;
                        let mut errors = Vec::with_capacity(per_task);
                        for _ in 0..per_task {
                            errors.push(wait_until(method, Instant::now() + d).await);
                        }
                        errors
                    })
                })
                .collect();
            let mut all = Vec::new();
            for h in handles {
                all.extend(h.await.unwrap());
            }
            all
        })
    })
}

struct Summary {
    p50: i64,
    p99: i64,
    max: i64,
    early: usize,
    cpu: f64,
    capacity: u64,
    n: usize,
    /// Precise deadlines admitted per sleep (a re-armed timer counts twice).
    precise: f64,
}

fn summarize(mut c: Cell) -> Summary {
    c.errors.sort_unstable();
    let e = &c.errors;
    let q = |per_mille| nearest_rank(e, per_mille).unwrap_or(0);
    Summary {
        p50: q(500),
        p99: q(990),
        max: e.last().copied().unwrap_or(0),
        early: e.iter().filter(|&&x| x < 0).count(),
        cpu: 100.0 * c.cpu_ns as f64 / c.wall_ns.max(1) as f64,
        capacity: keeptime::waiter::capacity(),
        n: e.len(),
        precise: c.precise as f64 / e.len().max(1) as f64,
    }
}

fn header(first: &str) {
    println!("| {first} | method | samples | p50 error | p99 error | max error | early | process CPU | precise | capacity /s |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
}

fn print_row(label: &str, m: Method, s: &Summary) {
    // Only keeptime's async sleeps go through the waiter's admission.
    let precise = if m == Method::Keeptime {
        format!("{:.1} %", 100.0 * s.precise.min(1.0))
    } else {
        "—".to_string()
    };
    println!(
        "| {} | {} | {} | {} | {} | {} | {} | {:.1} % | {} | {} |",
        label,
        m.name(),
        s.n,
        fmt_ns(s.p50),
        fmt_ns(s.p99),
        fmt_ns(s.max),
        s.early,
        s.cpu,
        precise,
        s.capacity,
    );
}

/// A load row's verdicts, keeptime (`k`) against the runtime's timer (`t`)
/// asked for `rate` deadlines per second.
struct Verdict {
    never_worse: bool,
    precise_within_capacity: Option<bool>,
    cpu_past_capacity: Option<bool>,
    no_early: bool,
}

fn verdict(rate: u64, t: &Summary, k: &Summary) -> Verdict {
    let within = rate <= k.capacity;
    Verdict {
        never_worse: k.p50 <= t.p50 && k.p99 <= t.p99,
        precise_within_capacity: within.then_some(k.p50 <= 5_000),
        cpu_past_capacity: (!within).then_some(k.cpu <= 2.0 * t.cpu),
        no_early: k.early == 0 && t.early == 0,
    }
}

fn print_verdict(label: &str, rate: u64, v: &Verdict) {
    let opt =
        |o: Option<bool>, what: &str| o.map_or(String::new(), |b| format!(", {what}: {}", ok(b)));
    println!(
        "{label} ({rate} deadlines/s): keeptime p50 and p99 ≤ tokio's: {}{}{}, zero early: {}",
        ok(v.never_worse),
        opt(v.precise_within_capacity, "within capacity p50 ≤ 5 µs"),
        opt(v.cpu_past_capacity, "past capacity CPU ≤ 2× tokio's"),
        ok(v.no_early),
    );
}

fn main() {
    let scale: f64 = std::env::var("KEEPTIME_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let current = Builder::new_current_thread().enable_all().build().unwrap();
    let multi = Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!("keeptime async benchmark: same process, same run, methods interleaved");
    println!(
        "machine: {} CPUs, kernel {}, clocksource {}; error = the task's first reading after `.await` − deadline; CPU = process CPU ÷ wall",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim(),
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default()
            .trim()
    );
    let mut all_met = true;

    // Single sleeps.
    type Row<'a> = (&'a str, Method, Option<&'a Runtime>);
    let rows: [Row; 6] = [
        ("plain thread", Method::Blocking, None),
        ("current-thread", Method::TokioSleep, Some(&current)),
        ("current-thread", Method::Keeptime, Some(&current)),
        ("multi-thread", Method::TokioSleep, Some(&multi)),
        ("multi-thread", Method::Keeptime, Some(&multi)),
        ("multi-thread", Method::BlockInPlace, Some(&multi)),
    ];
    let rounds = 4;
    for (d, samples) in [
        (Duration::from_micros(250), 1_000),
        (Duration::from_millis(1), 400),
        (Duration::from_micros(2_500), 200),
        (Duration::from_millis(10), 60),
    ] {
        let per_round = ((samples as f64 * scale) as usize / rounds).max(5);
        for (_, m, rt) in &rows {
            run(*m, *rt, d, 20); // warm-up: margins and leads learned
        }
        let mut cells: Vec<Cell> = rows.iter().map(|_| Cell::default()).collect();
        for _ in 0..rounds {
            for (cell, (_, m, rt)) in cells.iter_mut().zip(&rows) {
                cell.add(run(*m, *rt, d, per_round));
            }
        }
        let sums: Vec<Summary> = cells.into_iter().map(summarize).collect();
        println!("\n## single sleeps of {}\n", fmt_d(d));
        header("runtime");
        for ((rt, m, _), s) in rows.iter().zip(&sums) {
            print_row(rt, *m, s);
        }
        for (label, s) in [("current-thread", &sums[2]), ("multi-thread", &sums[4])] {
            let met = s.p50 <= 1_000 && s.early == 0;
            all_met &= met;
            println!(
                "\nkeeptime::tokio::sleep({}) on {label}: p50 {} ≤ 1 µs and zero early: {}",
                fmt_d(d),
                fmt_ns(s.p50),
                ok(met)
            );
        }
    }

    // Load rows, multi-thread runtime.
    let methods = [Method::TokioSleep, Method::Keeptime];
    let gap = Duration::from_micros(3);
    println!(
        "\n## burst: 1,000 tasks sleeping until deadlines {} apart, two rounds (multi-thread, 2 workers)\n",
        fmt_d(gap)
    );
    header("round");
    let rate = (1e9 / gap.as_nanos() as f64) as u64;
    let mut verdicts = Vec::new();
    for round in 1..=2 {
        let sums: Vec<Summary> = methods
            .iter()
            .map(|&m| summarize(burst(m, &multi, gap)))
            .collect();
        for (m, s) in methods.iter().zip(&sums) {
            print_row(&format!("{round}"), *m, s);
        }
        verdicts.push((
            format!("burst round {round}"),
            rate,
            verdict(rate, &sums[0], &sums[1]),
        ));
    }
    let period = Duration::from_millis(1);
    let length = Duration::from_secs_f64((2.0 * scale).max(0.25));
    println!(
        "\n## tick: tasks each ticking at 1 kHz for {:.2} s (multi-thread, 2 workers; two rounds of {:.2} s per method, taking turns)\n",
        length.as_secs_f64(),
        (length / 2).as_secs_f64()
    );
    header("tasks");
    for n in [10u32, 100, 1_000] {
        let sums = interleaved(methods, |m| tick(m, &multi, n, period, length / 2));
        for (m, s) in methods.iter().zip(&sums) {
            print_row(&format!("{n}"), *m, s);
        }
        let rate = u64::from(n) * 1_000;
        verdicts.push((
            format!("tick {n} tasks"),
            rate,
            verdict(rate, &sums[0], &sums[1]),
        ));
    }
    let d = Duration::from_millis(10);
    let per_round = ((5.0 * scale) as usize).max(2);
    let per_task = 2 * per_round;
    println!(
        "\n## crowd: 1,000 tasks, each sleeping {} {per_task} times (deadlines spread over one period; two rounds of {per_round} per method, taking turns)\n",
        fmt_d(d)
    );
    header("runtime");
    for (label, rt) in [("current-thread", &current), ("multi-thread", &multi)] {
        let sums = interleaved(methods, |m| crowd(m, rt, d, per_round));
        for (m, s) in methods.iter().zip(&sums) {
            print_row(label, *m, s);
        }
        let rate = 1_000 * 1_000_000_000 / d.as_nanos() as u64;
        verdicts.push((
            format!("crowd {label}"),
            rate,
            verdict(rate, &sums[0], &sums[1]),
        ));
    }
    println!();
    let stats = keeptime::waiter::stats();
    for (label, rate, v) in &verdicts {
        print_verdict(label, *rate, v);
        all_met &= v.never_worse
            && v.no_early
            && v.precise_within_capacity.unwrap_or(true)
            && v.cpu_past_capacity.unwrap_or(true);
    }
    let cap_met = stats.capacity_per_s >= 20_000;
    all_met &= cap_met;
    println!(
        "\nstated capacity keeptime::waiter::capacity() = {} deadlines/s (cost {} per precise deadline) ≥ 20,000/s: {}; timers armed {}, coarse decisions {}; backlog now {}",
        stats.capacity_per_s,
        fmt_ns(stats.cost_ns as i64),
        ok(cap_met),
        stats.armed,
        stats.coarse,
        stats.backlog
    );
    println!("all targets: {}", ok(all_met));
}
