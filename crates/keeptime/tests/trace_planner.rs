//! The planner on recorded wake-up traces (`tests/data/`), replayed
//! deterministically by `keeptime::trace::TracePlatform`: exact assertions
//! on what it decides for each host, plus the invariants every replay keeps.
//!
//! The replay takes each OS wait's overshoot and thread CPU from the rows of
//! the nearest recorded length, in file order, so the same trace gives the
//! same decisions in every run. The pinned numbers are the decisions that
//! spec/estimator.md and spec/sleep.md define; a change of behaviour
//! shows up here as a changed number, like a changed vector.

use keeptime::sim::SimWait;
use keeptime::trace::{Trace, TracePlatform};
use keeptime::{Sleeper, SleeperStats, TailTarget};
use std::path::PathBuf;

fn load(name: &str) -> Trace {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    Trace::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// What replaying `n` sleeps of `d_ns` at `target` on `trace` came to.
struct Replay {
    stats: SleeperStats,
    /// The last sleep's OS waits as (length, ns before the deadline it ended).
    last_plan: Vec<(u64, u64)>,
    cpu_ns: u64,
    wall_ns: u64,
}

fn replay(trace: &str, d_ns: u64, target: TailTarget, warmup: usize, n: usize) -> Replay {
    let tp = TracePlatform::new(load(trace), 1_000_000);
    tp.set_spin_step(50);
    let mut s = Sleeper::builder()
        .tail_target(target)
        .build_with(tp.clone());
    for _ in 0..warmup {
        let deadline = tp.now() + d_ns;
        s.sleep_until_ns(deadline);
    }
    s.reset_stats();
    let (cpu0, t0) = (tp.thread_cpu_ns(), tp.now());
    let mut last = Vec::new();
    for _ in 0..n {
        let before = tp.waits().len();
        let deadline = tp.now() + d_ns;
        let woke = s.sleep_until_ns(deadline);
        assert!(woke >= deadline, "returned {} ns early", deadline - woke);
        let w: Vec<SimWait> = tp.waits()[before..].to_vec();
        last = w
            .iter()
            .map(|w| {
                (
                    w.target_ns - w.issued_ns,
                    deadline.saturating_sub(w.target_ns),
                )
            })
            .collect();
    }
    Replay {
        stats: s.stats(),
        last_plan: last,
        cpu_ns: tp.thread_cpu_ns() - cpu0,
        wall_ns: tp.now() - t0,
    }
}

/// The replay's CPU share: the simulated thread-CPU counter over the
/// simulated clock, both advanced only by the trace's rows and the spin
/// steps (`TracePlatform`). No real time is read, so the pinned values are
/// decisions, not timings: the same on any machine, under any load.
fn cpu_percent(r: &Replay) -> f64 {
    100.0 * r.cpu_ns as f64 / r.wall_ns as f64
}

/// Invariants of every replay: never early (checked per sleep), the late
/// share near the target, the sleeper's CPU estimate near the replayed CPU.
fn check_invariants(r: &Replay, target: TailTarget, n: usize) {
    assert_eq!(r.stats.sleeps, n as u64);
    assert!(r.stats.late <= r.stats.sleeps);
    let est = r.stats.cpu_estimate_ns as f64;
    let real = r.cpu_ns as f64;
    assert!(
        (est - real).abs() <= 0.05 * real,
        "CPU estimate {est} vs replayed {real}"
    );
    // At most 1.5 × the target late, plus one sleep (the bound).
    let allowed = 1.5 * target.share() * n as f64 + 1.0;
    assert!(
        r.stats.late as f64 <= allowed,
        "{} of {n} late at target {target}",
        r.stats.late
    );
}

#[test]
fn haltpoll_host_at_1ms() {
    // Every OS wait costs ~20 µs of CPU and wakes ~26 µs late. At 1 ms most
    // sleeps take one wait, then a spin (1.14 OS waits per sleep); the last
    // one a two-wait plan, its first wait ending 140 µs before the deadline
    // and its short one 90 µs (the short waits' view, half grown at 0.5 %, is
    // bounded only by established longer buckets): 7.40 % CPU and 0.7 %
    // late, where `keeptime trace --oracle` finds 6.41 % on this trace (two
    // waits). (Before a young view's headroom, spec/estimator.md, margin:
    // 6.98 % CPU, 24 late, 3 361 OS waits, the last plan 140 and 90 µs.
    // Before bounds stopped at a known tail, spec/estimator.md, margin:
    // 7.30 %, 21 late, 3 434 OS waits, the last plan 132 and 82 µs.)
    let n = 3_000;
    let r = replay(
        "amd-epyc-kvm-haltpoll.csv.gz",
        1_000_000,
        TailTarget::BALANCED,
        1_000,
        n,
    );
    check_invariants(&r, TailTarget::BALANCED, n);
    assert_eq!(r.last_plan, vec![(859_889, 140_111), (21_252, 90_111)]);
    assert_eq!(
        (r.stats.late, r.stats.os_waits),
        (22, 3_384),
        "late sleeps and OS waits over {n} sleeps"
    );
    assert_eq!(format!("{:.2}", cpu_percent(&r)), "7.40");
}

#[test]
fn haltpoll_host_targets_trade_cpu_for_tail() {
    let n = 2_000;
    let mut cpu = Vec::new();
    let mut late = Vec::new();
    for t in [
        TailTarget::RELAXED,
        TailTarget::BALANCED,
        TailTarget::STRICT,
    ] {
        let r = replay("amd-epyc-kvm-haltpoll.csv.gz", 250_000, t, 1_000, n);
        check_invariants(&r, t, n);
        cpu.push(format!("{:.2}", cpu_percent(&r)));
        late.push(r.stats.late);
    }
    // 250 µs: one wait at every target (a short second wait is not cheaper
    // when each costs 20 µs); stricter targets spin longer, and at 0.1 % every
    // 8th sleep explores a two-wait plan whose short buckets are young at
    // 0.05 %, planned with a young view's headroom (before it: 43.33 % and 3
    // late at 0.1 %). `keeptime trace --oracle` on this trace: 13.6 % at 5 %,
    // 19.5 % at 1 %, 33.5 % at 0.1 %.
    assert_eq!(cpu, ["13.33", "20.33", "46.42"]);
    assert_eq!(late, [44, 18, 1]);
}

#[test]
fn this_host_without_cpuidle_at_1ms_and_10ms() {
    // This project's AMD host without a cpuidle driver, recorded while other
    // builds ran: waits from 640 µs up have a 1 % tail of 0.2–1.6 ms. At 1 ms
    // the planner mixes two-wait plans (once its young sleeps have
    // established the short waits) with one wait of ~670-790 µs and a spin
    // (15.0 % CPU; `keeptime trace --oracle` finds 10.1 % with two waits);
    // at 10 ms it stays within the target with one wait ending 1.75 ms early,
    // then a spin (15.6 % CPU, where the oracle's plan is a first wait ending
    // 3.2 ms early and a second of ~3 ms: 1.64 %; keeptime's short waits are
    // at most 400 µs). (A young longer bucket answers at least what an
    // established shorter one does, spec/estimator.md, margin: before that
    // rule 17.9 % at 1 ms with 24 late, 14.0 % at 10 ms with 10 late. A young
    // longer bucket bounds shorter ones through its pool with a shorter one,
    // spec/estimator.md, bound: before that rule 14.80 % at 1 ms with 21
    // late and its last plan one wait of 672 µs, 14.78 % at 10 ms with 3.
    // A young view answers its quantile plus half of it, spec/estimator.md,
    // margin: before that rule 17.37 % at 1 ms with 24 late, 2 392 OS waits
    // and its last plan one wait of 607 µs, 14.62 % at 10 ms with 3 late.
    // Bounds stop at a known tail, spec/estimator.md, margin: before that
    // rule 12.79 % at 1 ms with 23 late, 2 100 OS waits and its last plan
    // one wait of 787 µs; this one trajectory got dearer, the mean over 24
    // starting points 1.79 → 1.91× the oracle after 3 000 sleeps.)
    let n = 2_000;
    let r = replay(
        "amd-epyc-kvm-nocpuidle.csv.gz",
        1_000_000,
        TailTarget::BALANCED,
        1_000,
        n,
    );
    check_invariants(&r, TailTarget::BALANCED, n);
    assert_eq!(r.last_plan, vec![(672_321, 327_679)]);
    assert_eq!((r.stats.late, r.stats.os_waits), (26, 2_493));
    assert_eq!(format!("{:.2}", cpu_percent(&r)), "14.99");
    let r = replay(
        "amd-epyc-kvm-nocpuidle.csv.gz",
        10_000_000,
        TailTarget::BALANCED,
        300,
        600,
    );
    check_invariants(&r, TailTarget::BALANCED, 600);
    assert_eq!(r.last_plan, vec![(8_246_065, 1_753_935)]);
    assert_eq!((r.stats.late, r.stats.os_waits), (0, 812));
    assert_eq!(format!("{:.2}", cpu_percent(&r)), "15.55");
}
