//! The crowd rows: threads each sleeping in a loop, every method in the
//! same process, their errors pooled and the process CPU over the run.

use super::*;

/// `threads` threads, each sleeping `d` in a loop for about `total` with
/// `method`, started together; their errors and the process CPU over the run.
fn crowd(method: Method, threads: usize, d: Duration, total: Duration) -> Cell {
    let n = (total.as_nanos() / d.as_nanos()).max(1) as usize;
    let start = std::sync::Arc::new(std::sync::Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let start = std::sync::Arc::clone(&start);
            thread::spawn(move || {
                // A user's thread starts with the process's default timer
                // slack, not whatever the bench's main thread set since
                // (recording the oracle's trace sets 1 ns): keeptime sets
                // its own, std::thread::sleep and spin_sleep live with it.
                if let Some(&slack) = DEFAULT_SLACK.get() {
                    let _ = os::set_timer_slack_ns(slack);
                }
                let mut w = Waiters::new(method);
                start.wait();
                run(method, &mut w, d, n).errors
            })
        })
        .collect();
    start.wait();
    let cpu0 = os::process_cpu_ns();
    let wall0 = os::monotonic_ns();
    let errors: Vec<i64> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("a crowd thread panicked"))
        .collect();
    Cell {
        errors,
        return_gaps: Vec::new(),
        cpu_ns: os::process_cpu_ns() - cpu0,
        wall_ns: os::monotonic_ns() - wall0,
        stats: None,
        late_unproven: 0,
    }
}

/// The crowd rows: threads each sleeping `d` in a loop, every method
/// in the same process, in two interleaved rounds, samples pooled.
pub fn crowds(scale: f64) {
    let cpus = thread::available_parallelism().map_or(1, |n| n.get());
    let shapes = [
        (4, Duration::from_millis(1)),
        (16, Duration::from_millis(1)),
        (64, Duration::from_millis(1)),
        (16, Duration::from_micros(250)),
    ];
    let methods = [
        Method::StdSleep,
        Method::SpinSleep,
        Method::Keeptime(TailTarget::BALANCED),
        Method::KeeptimeIdleHint,
    ];
    let total = Duration::from_secs_f64(1.5 * scale.max(0.2));
    let rounds = 2;
    let status = keeptime::pmqos::query();
    println!(
        "\n## crowds: threads sleeping in a loop on {cpus} CPUs, {rounds} interleaved rounds of {:.1} s per method, process CPU in % of one core\n",
        total.as_secs_f64()
    );
    println!(
        "(cpuidle driver {}; PM QoS CPU latency in force {}; this process {} hold the idle hint)\n",
        status.driver.as_deref().unwrap_or("unknown"),
        status
            .in_force_us
            .map_or("unreadable".into(), |v| format!("{v} µs")),
        if status.may_request { "may" } else { "may not" }
    );
    println!("| threads × sleep | method | p50 error | p99 error | max error | early | late > 2 µs | process CPU |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for (threads, d) in shapes {
        let mut acc: Vec<(Vec<i64>, u64, u64)> =
            methods.iter().map(|_| (Vec::new(), 0, 0)).collect();
        for r in 0..rounds {
            for k in 0..methods.len() {
                // The second round runs the methods in reverse order.
                let i = if r % 2 == 0 { k } else { methods.len() - 1 - k };
                let c = crowd(methods[i], threads, d, total);
                acc[i].0.extend(c.errors);
                acc[i].1 += c.cpu_ns;
                acc[i].2 += c.wall_ns;
            }
        }
        let sums: Vec<Summary> = acc
            .iter_mut()
            .map(|(e, c, w)| summarize(e, *c, *w))
            .collect();
        for (m, s) in methods.iter().zip(&sums) {
            println!(
                "| {threads} × {} | {} | {} |",
                fmt_d(d),
                m.name(),
                summary_cells(s, 1)
            );
        }
        let (std_s, peer, kt) = (&sums[0], &sums[1], &sums[2]);
        println!(
            "| | targets | p50 ≤ spin_sleep, std: {} | p99 ≤ spin_sleep, std: {} | max ≤ 2 ms: {} | zero early: {} | | CPU ≤ spin_sleep: {} |",
            ok(kt.p50 <= peer.p50 && kt.p50 <= std_s.p50),
            ok(kt.p99 <= peer.p99 && kt.p99 <= std_s.p99),
            ok(kt.max <= 2_000_000),
            ok(sums[2].early + sums[3].early == 0),
            ok(kt.cpu <= peer.cpu)
        );
    }
}
