//! Precise sleeps in async code, measured side by side in one process:
//! `tokio::time::sleep`, `keeptime::tokio::sleep`, `block_in_place(keeptime::sleep)`
//! (multi-thread runtime only: tokio forbids it on a current-thread one),
//! and the blocking `keeptime::sleep` on a plain thread as the reference.
//!
//! ```text
//! make bench-async                        # cargo bench -p keeptime --features tokio --bench async, ~35 s
//! KEEPTIME_BENCH_SCALE=0.25 make bench-async   # quicker, noisier
//! ```
//!
//! Error of one wait = the method's first clock reading after the wait − its
//! deadline (spec/bench-result.md): keeptime's futures and the blocking sleep
//! return their own last reading; `tokio::time::sleep` and `block_in_place`
//! are read right after the `.await`. CPU % = *process* CPU time ÷ wall time
//! over the method's samples (the waiter thread and every runtime thread
//! count). Hold = the duration of one `poll` of the sleeping future (p99 and
//! max over all polls): how long one sleep kept an executor thread from other
//! tasks; the max includes any preemption of that thread by the OS. Methods
//! take turns in rounds so slow drifts of the machine hit all alike.

use keeptime::os::{monotonic_ns, process_cpu_ns};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
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

/// Wraps a future and records its longest single poll.
struct Timed<F> {
    inner: Pin<Box<F>>,
    hold: Hold,
}

/// Every poll's duration, ns.
type Hold = Arc<Mutex<Vec<u64>>>;

impl<F: Future> Future for Timed<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let t0 = monotonic_ns();
        let r = self.inner.as_mut().poll(cx);
        let held = monotonic_ns() - t0;
        self.hold.lock().unwrap().push(held);
        r
    }
}

fn timed<F: Future>(f: F, hold: &Hold) -> Timed<F> {
    Timed {
        inner: Box::pin(f),
        hold: Arc::clone(hold),
    }
}

#[derive(Default)]
struct Cell {
    errors: Vec<i64>,
    cpu_ns: u64,
    wall_ns: u64,
    holds: Option<Vec<u64>>,
}

impl Cell {
    fn add(&mut self, other: Cell) {
        self.errors.extend(other.errors);
        self.cpu_ns += other.cpu_ns;
        self.wall_ns += other.wall_ns;
        match (&mut self.holds, other.holds) {
            (Some(a), Some(b)) => a.extend(b),
            (a, b) => *a = a.take().or(b),
        }
    }
}

/// `n` sequential sleeps of `d` with `method` (in `rt` unless blocking).
fn run(method: Method, rt: Option<&Runtime>, d: Duration, n: usize) -> Cell {
    let d_ns = d.as_nanos() as u64;
    let cpu0 = process_cpu_ns();
    let wall0 = monotonic_ns();
    let mut errors = Vec::with_capacity(n);
    let hold = Hold::default();
    if method == Method::Blocking {
        for _ in 0..n {
            let deadline = monotonic_ns() + d_ns;
            let woke = keeptime::sleep_until_monotonic_ns(deadline);
            errors.push(woke as i64 - deadline as i64);
        }
    } else {
        let rt = rt.expect("async methods need a runtime");
        let h = Arc::clone(&hold);
        // Spawned, so the sleeps run on a worker thread as application tasks do.
        errors = rt
            .block_on(rt.spawn(async move {
                let mut errors = Vec::with_capacity(n);
                for _ in 0..n {
                    let deadline = monotonic_ns() + d_ns;
                    let woke = match method {
                        Method::TokioSleep => {
                            timed(tokio::time::sleep(d), &h).await;
                            monotonic_ns()
                        }
                        Method::Keeptime => {
                            timed(keeptime::tokio::sleep_until_monotonic_ns(deadline), &h).await
                        }
                        Method::BlockInPlace => {
                            timed(
                                async {
                                    tokio::task::block_in_place(|| {
                                        keeptime::sleep_until_monotonic_ns(deadline)
                                    })
                                },
                                &h,
                            )
                            .await
                        }
                        Method::Blocking => unreachable!(),
                    };
                    errors.push(woke as i64 - deadline as i64);
                }
                errors
            }))
            .unwrap();
    }
    Cell {
        errors,
        cpu_ns: process_cpu_ns() - cpu0,
        wall_ns: monotonic_ns() - wall0,
        holds: (method != Method::Blocking).then(|| std::mem::take(&mut *hold.lock().unwrap())),
    }
}

/// 1,000 tasks, each sleeping `d` `per_task` times, their deadlines spread
/// over one `d`; process CPU over the whole run.
fn crowd(method: Method, rt: &Runtime, d: Duration, per_task: usize) -> Cell {
    let d_ns = d.as_nanos() as u64;
    let hold = Hold::default();
    let cpu0 = process_cpu_ns();
    let wall0 = monotonic_ns();
    let errors = rt.block_on(async {
        let tasks: Vec<_> = (0..1_000u64)
            .map(|i| {
                let h = Arc::clone(&hold);
                rt.spawn(async move {
                    let offset = Duration::from_nanos(i * d_ns / 1_000);
                    let mut errors = Vec::with_capacity(per_task);
                    tokio::time::sleep(offset).await;
                    for _ in 0..per_task {
                        let deadline = monotonic_ns() + d_ns;
                        let woke = match method {
                            Method::TokioSleep => {
                                timed(tokio::time::sleep(d), &h).await;
                                monotonic_ns()
                            }
                            _ => {
                                timed(keeptime::tokio::sleep_until_monotonic_ns(deadline), &h).await
                            }
                        };
                        errors.push(woke as i64 - deadline as i64);
                    }
                    errors
                })
            })
            .collect();
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        all
    });
    let holds = std::mem::take(&mut *hold.lock().unwrap());
    Cell {
        errors,
        cpu_ns: process_cpu_ns() - cpu0,
        wall_ns: monotonic_ns() - wall0,
        holds: Some(holds),
    }
}

struct Summary {
    p50: i64,
    p99: i64,
    max: i64,
    early: usize,
    cpu: f64,
    hold: Option<(u64, u64)>,
    n: usize,
}

fn summarize(mut c: Cell) -> Summary {
    c.errors.sort_unstable();
    let e = &c.errors;
    let q = |p: f64| e[((e.len() - 1) as f64 * p).round() as usize];
    Summary {
        p50: q(0.50),
        p99: q(0.99),
        max: *e.last().unwrap(),
        early: e.iter().filter(|&&x| x < 0).count(),
        cpu: 100.0 * c.cpu_ns as f64 / c.wall_ns.max(1) as f64,
        hold: c.holds.map(|mut h| {
            h.sort_unstable();
            (
                h[((h.len() - 1) as f64 * 0.99).round() as usize],
                *h.last().unwrap(),
            )
        }),
        n: e.len(),
    }
}

fn print_row(runtime: &str, m: Method, s: &Summary) {
    println!(
        "| {} | {} | {} | {} | {} | {} | {:.1} % | {} |",
        runtime,
        m.name(),
        fmt_ns(s.p50),
        fmt_ns(s.p99),
        fmt_ns(s.max),
        s.early,
        s.cpu,
        s.hold.map_or("— (whole wait)".into(), |(p99, max)| format!(
            "{} / {}",
            fmt_ns(p99 as i64),
            fmt_ns(max as i64)
        )),
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
    type Row<'a> = (&'a str, Method, Option<&'a Runtime>);
    let rows: [Row; 6] = [
        ("plain thread", Method::Blocking, None),
        ("current-thread", Method::TokioSleep, Some(&current)),
        ("current-thread", Method::Keeptime, Some(&current)),
        ("multi-thread", Method::TokioSleep, Some(&multi)),
        ("multi-thread", Method::Keeptime, Some(&multi)),
        ("multi-thread", Method::BlockInPlace, Some(&multi)),
    ];
    println!("keeptime async benchmark: same process, same run; 5 interleaved rounds per duration");
    println!(
        "machine: {} CPUs, kernel {}, clocksource {}; CPU = process CPU ÷ wall; hold = one poll's duration (p99 and max over all polls)",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim(),
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default()
            .trim()
    );
    let rounds = 5;
    for (d, samples) in [
        (Duration::from_micros(100), 2_000),
        (Duration::from_millis(1), 600),
        (Duration::from_millis(10), 100),
    ] {
        let per_round = ((samples as f64 * scale) as usize / rounds).max(10);
        for (_, m, rt) in &rows {
            run(*m, *rt, d, 30); // warm-up: margins and leads learned
        }
        let mut cells: Vec<Cell> = rows.iter().map(|_| Cell::default()).collect();
        for _ in 0..rounds {
            for (cell, (_, m, rt)) in cells.iter_mut().zip(&rows) {
                cell.add(run(*m, *rt, d, per_round));
            }
        }
        let sums: Vec<Summary> = cells.into_iter().map(summarize).collect();
        println!("\n## {} ({} samples per method)\n", fmt_d(d), sums[0].n);
        println!("| runtime | method | p50 error | p99 error | max error | early | CPU | hold p99 / max |");
        println!("|---|---|---:|---:|---:|---:|---:|---:|");
        for ((rt, m, _), s) in rows.iter().zip(&sums) {
            print_row(rt, *m, s);
        }
        let reference = &sums[0];
        for (label, s) in [("current-thread", &sums[2]), ("multi-thread", &sums[4])] {
            println!(
                "\nkeeptime::tokio::sleep on {label} vs blocking keeptime::sleep: p50 {} vs {} (within 2 µs: {}), p99 {} = {:.2}× (≤ 2×: {}), early {} ({})",
                fmt_ns(s.p50),
                fmt_ns(reference.p50),
                ok(s.p50 - reference.p50 <= 2_000),
                fmt_ns(s.p99),
                s.p99 as f64 / reference.p99.max(1) as f64,
                ok(s.p99 <= 2 * reference.p99.max(1)),
                s.early,
                ok(s.early == 0)
            );
        }
    }

    let d = Duration::from_millis(10);
    let per_task = ((10.0 * scale) as usize).max(3);
    println!(
        "\n## crowd: 1,000 concurrent tasks, each sleeping {} {per_task} times (deadlines spread over one period)\n",
        fmt_d(d)
    );
    println!("| runtime | method | p50 error | p99 error | max error | early | process CPU | hold p99 / max |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for (label, rt) in [("current-thread", &current), ("multi-thread", &multi)] {
        for m in [Method::TokioSleep, Method::Keeptime] {
            print_row(label, m, &summarize(crowd(m, rt, d, per_task)));
        }
    }
}
