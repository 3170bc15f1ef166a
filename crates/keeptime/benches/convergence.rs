//! How fast a fresh sleeper's learning converges, and how a sleeper started
//! from a host profile does: CPU ÷ the oracle's least CPU and the late share
//! after 100, 300, 1 000 and 3 000 sleeps at 250 µs, 1 ms, 2.5 ms and 10 ms,
//! at the 1 % tail target.
//!
//! ```text
//! make bench-convergence
//! cargo bench -p keeptime --features trace --bench convergence -- [TRACES_DIR ...] [--no-live]
//! ```
//!
//! * **Replays** (deterministic, any machine): every `*.csv.gz` trace in the
//!   shared traces directory (the arguments, else `KEEPTIME_TRACES`, else
//!   `../shared/traces` beside the repository; skipped with a message when
//!   absent; a relative path is read from `crates/keeptime`, where cargo
//!   runs benches, and `make bench-convergence` passes an absolute one) and
//!   in `crates/keeptime/tests/data`. A fresh sleeper sleeps on
//!   a `TracePlatform` replaying the trace; the oracle is
//!   `keeptime::trace::Oracle` on the same trace (40 000 draws). Then **from
//!   a profile**: the trace is split in two, its first round (the first half
//!   of its rows when it has one round) makes a profile
//!   (`Profile::from_trace`), and a sleeper started from it replays the rest,
//!   held against the oracle of the rest, beside a fresh sleeper on the same
//!   rest. `KEEPTIME_PROFILE_KEEP=N` keeps only the last N wake-ups per
//!   bucket in that profile (`Profile::from_trace_keeping`).
//! * **From many starting points** (deterministic): each trace replayed
//!   again by a fresh sleeper from 24 evenly spaced starting points
//!   (`TracePlatform::starting_at`; `KEEPTIME_CONVERGENCE_STARTS=N` for N,
//!   0 skips them), the rows the means over the starts, with the spread of
//!   `cpu@300` and how many starts were more than 1.5 % late after 300
//!   sleeps; their targets (not the swing, which is one trajectory's) in a
//!   tally of their own. One replay is one trajectory: where one rare
//!   wake-up falls in a young model's life moves a row's `cpu@300` tenfold.
//! * **A sleeper that changes length** (deterministic): one fresh sleeper
//!   replays each trace at 250 µs, then 1 ms, 2.5 ms and 10 ms, 3 000
//!   sleeps each, as one keeptime sleeper meets them in `make bench-peers`;
//!   each length's row counts from the change to it, held to the same
//!   oracle as the fresh rows, its targets in a tally of their own; and
//!   the same from the 24 starting points below, the means over the
//!   starts.
//! * **The oracle's plan followed unchanged**, on the same replay and live
//!   after the methods: every sleep takes the oracle's OS waits, then spins.
//!   Its CPU ÷ the oracle's checks the replay (or the host) against the
//!   oracle's model; its swing is what block-to-block spin varies by with no
//!   plan or margin change, the floor under every sleeper's swing on those
//!   wake-ups.
//! * **Live** on this host (`--no-live` or `KEEPTIME_CONVERGENCE_LIVE=0`
//!   skips it): the host's wake-ups are recorded first (about 4 s), then a
//!   fresh keeptime sleeper, a keeptime sleeper started from a profile made
//!   from that first recording (`Profile::from_trace`), and spin_sleep's
//!   default sleeper each make 3 000 sleeps per duration (about 41 s each),
//!   and the wake-ups are recorded again after each method (about 3 s): the
//!   oracle is that of all four recordings, so a host whose tail drifts
//!   within the run is held to the whole run's tail. CPU is the thread's CPU
//!   clock; a sleep is late when the caller's first clock reading after the
//!   return is more than 5 µs past the deadline (keeptime's own count, OS
//!   wake-ups after the deadline, is printed beside it). Live figures depend on
//!   the machine's load.
//!
//! Columns: `cpu@N` = CPU per sleep over the sleeps since the previous
//! checkpoint (1–100, 101–300, 301–1 000, 1 001–3 000) ÷ the oracle's; `late@N`
//! = late share of sleeps 1..N; `waits` = OS waits per sleep over sleeps
//! 1 001–3 000; `swing` = the largest deviation of one 100-sleep block's spin
//! per sleep from their median over sleeps 1 001–3 000.
//!
//! Targets, printed met/MISSED (never asserted: timings are not tests):
//! `cpu@300` ≤ 1.5× and `cpu@3k` ≤ 1.2× the oracle; `late@300` ≤ 1.5 %;
//! swing ≤ 30 %; at the strict target (0.1 %) after 3 000 sleeps, late ≤
//! 0.15 % of the sleeps the sleeper did not count unproven
//! (`SleeperStats::unproven_sleeps`: for those it says it cannot promise the
//! target).

use keeptime::profile::{Fingerprint, Profile};
use keeptime::trace::{Oracle, OracleChoice, RecordOptions, Trace, TracePlatform, TraceRow};
use keeptime::{os, Platform, Sleeper, System, TailTarget, MIN_OS_WAIT_NS};
use std::path::{Path, PathBuf};

const CHECKPOINTS: [usize; 4] = [100, 300, 1_000, 3_000];
const DURATIONS_NS: [u64; 4] = [250_000, 1_000_000, 2_500_000, 10_000_000];
const ORACLE_DRAWS: usize = 40_000;
const LIVE_LATE_NS: u64 = 5_000;
const SWING_BLOCK: usize = 100;

/// One sleep's outcome: CPU (ns), spin (ns, when known), late.
#[derive(Clone, Copy, Default)]
struct Outcome {
    cpu_ns: u64,
    spin_ns: u64,
    late: bool,
    waits: u64,
    /// The sleeper counted the sleep unproven (`SleeperStats::unproven_sleeps`).
    unproven: bool,
}

struct Summary {
    cpu_ratio: [f64; 4],
    late_pct: [f64; 4],
    waits: f64,
    swing_pct: f64,
}

fn summarise(d: u64, oracle_share: f64, out: &[Outcome]) -> Summary {
    let mut cpu_ratio = [f64::NAN; 4];
    let mut late_pct = [f64::NAN; 4];
    let mut prev = 0;
    for (k, &n) in CHECKPOINTS.iter().enumerate() {
        let n = n.min(out.len());
        if n > prev {
            let cpu: u64 = out[prev..n].iter().map(|o| o.cpu_ns).sum();
            cpu_ratio[k] = cpu as f64 / (n - prev) as f64 / d as f64 / oracle_share;
        }
        let late = out[..n].iter().filter(|o| o.late).count();
        late_pct[k] = 100.0 * late as f64 / n.max(1) as f64;
        prev = n;
    }
    let tail = &out[CHECKPOINTS[2].min(out.len())..];
    let waits = tail.iter().map(|o| o.waits).sum::<u64>() as f64 / tail.len().max(1) as f64;
    let mut blocks: Vec<f64> = tail
        .chunks(SWING_BLOCK)
        .map(|c| c.iter().map(|o| o.spin_ns).sum::<u64>() as f64 / c.len() as f64)
        .collect();
    let swing_pct = if blocks.is_empty() {
        f64::NAN
    } else {
        let mut sorted = blocks.clone();
        sorted.sort_by(f64::total_cmp);
        let med = sorted[sorted.len() / 2];
        blocks.iter_mut().fold(0.0f64, |m, x| {
            if med > 0.0 {
                m.max(100.0 * (*x / med - 1.0).abs())
            } else if *x > 0.0 {
                f64::INFINITY
            } else {
                m
            }
        })
    };
    Summary {
        cpu_ratio,
        late_pct,
        waits,
        swing_pct,
    }
}

fn header() {
    println!(
        "{:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6}  targets",
        "sleep",
        "oracle%",
        "cpu@100",
        "cpu@300",
        "cpu@1k",
        "cpu@3k",
        "late@100",
        "late@300",
        "late@1k",
        "late@3k",
        "waits",
        "swing"
    );
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

fn row(label: &str, oracle_pct: f64, s: &Summary, spin_known: bool) -> [bool; 4] {
    let (line, checks) = row_text(label, oracle_pct, s, spin_known);
    println!("{line}");
    checks
}

fn row_text(label: &str, oracle_pct: f64, s: &Summary, spin_known: bool) -> (String, [bool; 4]) {
    let checks = [
        s.cpu_ratio[1] <= 1.5,
        s.cpu_ratio[3] <= 1.2,
        s.late_pct[1] <= 1.5,
        !spin_known || s.swing_pct <= 30.0,
    ];
    let swing = if spin_known {
        format!("{:.0}%", s.swing_pct)
    } else {
        "-".into()
    };
    let line = format!(
        "{label:>8} {oracle_pct:>8.2} {:>6.2}× {:>6.2}× {:>6.2}× {:>6.2}× {:>7.2}% {:>7.2}% {:>6.2}% {:>6.2}% {:>6.2} {swing:>6}  cpu300 {} cpu3k {} late300 {} swing {}",
        s.cpu_ratio[0],
        s.cpu_ratio[1],
        s.cpu_ratio[2],
        s.cpu_ratio[3],
        s.late_pct[0],
        s.late_pct[1],
        s.late_pct[2],
        s.late_pct[3],
        s.waits,
        verdict(checks[0]),
        verdict(checks[1]),
        verdict(checks[2]),
        if spin_known { verdict(checks[3]) } else { "-" },
    );
    (line, checks)
}

fn label(d: u64) -> String {
    if d >= 1_000_000 {
        format!("{}ms", d as f64 / 1e6)
    } else {
        format!("{}µs", d / 1_000)
    }
}

/// `CHECKPOINTS[3]` sleeps of `d` on a replay of `trace` by a fresh sleeper,
/// or one started from `profile`.
fn replay_run(
    trace: &Trace,
    d: u64,
    target: TailTarget,
    profile: Option<&Profile>,
) -> (Vec<Outcome>, Sleeper<TracePlatform>) {
    replay_run_from(trace, d, target, profile, 0, 1)
}

/// [`replay_run`] with the replay started `part / parts` of the way through
/// each recorded length's rows (`TracePlatform::starting_at`).
fn replay_run_from(
    trace: &Trace,
    d: u64,
    target: TailTarget,
    profile: Option<&Profile>,
    part: u64,
    parts: u64,
) -> (Vec<Outcome>, Sleeper<TracePlatform>) {
    let tp = TracePlatform::starting_at(trace.clone(), 1_000_000, part, parts);
    tp.set_spin_step(50);
    let mut b = Sleeper::builder().tail_target(target);
    if let Some(p) = profile {
        b = b.profile(p);
    }
    let mut s = b.build_with(tp.clone());
    let out = sleeps_on(&mut s, &tp, d);
    (out, s)
}

/// `CHECKPOINTS[3]` sleeps of `d` by `s` on its replay `tp`, whatever it
/// learned before.
fn sleeps_on(s: &mut Sleeper<TracePlatform>, tp: &TracePlatform, d: u64) -> Vec<Outcome> {
    let mut out = Vec::with_capacity(CHECKPOINTS[3]);
    for _ in 0..CHECKPOINTS[3] {
        let (cpu0, st0) = (tp.thread_cpu_ns(), s.stats());
        let deadline = tp.now() + d;
        s.sleep_until_ns(deadline);
        let st = s.stats();
        out.push(Outcome {
            cpu_ns: tp.thread_cpu_ns() - cpu0,
            spin_ns: st.spin_ns - st0.spin_ns,
            late: st.late > st0.late,
            waits: st.os_waits - st0.os_waits,
            unproven: st.unproven_sleeps > st0.unproven_sleeps,
        });
    }
    out
}

/// One sleeper at the 1 % target replaying `trace` at each length of
/// `shares` in turn (250 µs, then 1 ms, 2.5 ms and 10 ms, 3 000 sleeps
/// each, as one keeptime sleeper meets them in `make bench-peers`), each
/// length's row counted from its first sleep: how a sleeper that has
/// learned one length fares when its program changes to the next, beside a
/// fresh sleeper's rows above. Its targets go to a tally of their own.
fn changing_lengths(path: &Path, trace: &Trace, shares: &[(u64, f64)]) -> Tally {
    let mut tally = Tally::default();
    println!(
        "\n{}: one sleeper, the lengths in turn, 3 000 sleeps each (target 1 %; each row from the change to its length)",
        path.display()
    );
    header();
    let tp = TracePlatform::new(trace.clone(), 1_000_000);
    tp.set_spin_step(50);
    let mut s = Sleeper::builder()
        .tail_target(TailTarget::BALANCED)
        .build_with(tp.clone());
    for &(d, cpu_share) in shares {
        let out = sleeps_on(&mut s, &tp, d);
        let sm = summarise(d, cpu_share, &out);
        tally.add(row(&label(d), cpu_share * 100.0, &sm, true));
    }
    tally
}

/// `CHECKPOINTS[3]` sleeps of `d` that follow the oracle's `plan` unchanged
/// on `p`: its OS waits, then a spin to the deadline (the oracle's model,
/// `keeptime trace --oracle`). No plan changes, so its block-to-block swing
/// is the host's own: the floor for the swing of any sleeper on these waits.
/// Late: `late(deadline, first reading after the waits, reading at the end)`.
fn fixed_plan_run<P: Platform>(
    p: &P,
    d: u64,
    plan: OracleChoice,
    late: impl Fn(u64, u64, u64) -> bool,
) -> Vec<Outcome> {
    p.prepare_thread();
    let mut out = Vec::with_capacity(CHECKPOINTS[3]);
    for _ in 0..CHECKPOINTS[3] {
        let cpu0 = p.thread_cpu_ns().unwrap_or(0);
        let start = p.now_ns();
        let deadline = start + d;
        let mut waits = 0;
        let mut wait = |target: u64| {
            if target >= p.now_ns().saturating_add(MIN_OS_WAIT_NS) {
                p.os_wait_until(target);
                waits += 1;
            }
        };
        match plan {
            OracleChoice::OneWait { margin_ns } => wait(deadline.saturating_sub(margin_ns)),
            OracleChoice::TwoWaits {
                long_margin_ns,
                split_ns,
                short_margin_ns,
            } => {
                wait(deadline.saturating_sub(long_margin_ns + split_ns));
                wait(deadline.saturating_sub(short_margin_ns));
            }
            OracleChoice::Spin => {}
        }
        let woke = p.now_ns();
        let mut now = woke;
        while now < deadline {
            p.relax();
            now = p.now_ns();
        }
        out.push(Outcome {
            cpu_ns: p.thread_cpu_ns().unwrap_or(0) - cpu0,
            spin_ns: deadline.saturating_sub(woke),
            late: late(deadline, woke, now),
            waits,
            unproven: false,
        });
    }
    out
}

/// The row of the oracle's plan followed unchanged (`fixed_plan_run`): its
/// CPU ÷ the oracle's says how well the replay or the host matches the
/// oracle's model, its swing is the floor of every sleeper's.
fn fixed_plan_row(lbl: &str, d: u64, oracle_share: f64, out: &[Outcome]) {
    let s = summarise(d, oracle_share, out);
    println!(
        "{lbl:>8} the oracle's plan followed unchanged: CPU ÷ oracle {:.2}× @3k, late {:.2} % @3k, {:.2} waits per sleep, swing {:.0}% (the host's own: no plan change)",
        s.cpu_ratio[3],
        s.late_pct[3],
        s.waits,
        s.swing_pct
    );
}

/// Per length (ns), the oracle's least CPU share at the 1 % target.
type OracleShares = Vec<(u64, f64)>;

/// The replays of one trace; returns it and its oracle's CPU share at 1 %
/// per length, for the replays from many starting points.
fn replay(path: &Path, tally: &mut Tally) -> Option<(Trace, OracleShares)> {
    let trace = match Trace::load(path) {
        Ok(t) => t,
        Err(e) => {
            println!("{}: cannot load ({e}); skipped", path.display());
            return None;
        }
    };
    let oracle = match Oracle::new(&trace, ORACLE_DRAWS, 1) {
        Ok(o) => o,
        Err(e) => {
            println!("{}: no oracle ({e}); skipped", path.display());
            return None;
        }
    };
    println!("\nreplay of {} (target 1 %)", path.display());
    header();
    let mut shares = Vec::new();
    for d in DURATIONS_NS {
        let Ok(best) = oracle.outcomes(d).and_then(|o| o.best(0.01)) else {
            continue;
        };
        shares.push((d, best.cpu_share));
        let (out, _) = replay_run(&trace, d, TailTarget::BALANCED, None);
        let s = summarise(d, best.cpu_share, &out);
        tally.add(row(&label(d), best.cpu_share * 100.0, &s, true));
        println!("{:>8} the oracle's plan: {}", "", best.plan);
        let tp = TracePlatform::new(trace.clone(), 1_000_000);
        tp.set_spin_step(50);
        let fixed = fixed_plan_run(&tp, d, best.plan, |deadline, woke, _| woke > deadline);
        fixed_plan_row("", d, best.cpu_share, &fixed);
    }
    for d in DURATIONS_NS {
        let (out, _) = replay_run(&trace, d, TailTarget::STRICT, None);
        let late = out.iter().filter(|o| o.late).count();
        let pct = 100.0 * late as f64 / out.len() as f64;
        // The target governs the sleeps planned on established margins; for
        // the others the sleeper says it cannot promise it.
        let unproven = out.iter().filter(|o| o.unproven).count();
        let late_unproven = out.iter().filter(|o| o.unproven && o.late).count();
        let proven = out.len() - unproven;
        let proven_pct = 100.0 * (late - late_unproven) as f64 / proven.max(1) as f64;
        let ok = proven_pct <= 0.15;
        println!(
            "{:>8} strict 0.1 %: late {pct:.2} % after {} sleeps; {unproven} planned on too few samples for the target (unproven: the sleeper cannot promise it), {late_unproven} of the late ones; late {proven_pct:.2} % of the other {proven} (≤ 0.15 %: {})",
            label(d),
            out.len(),
            if ok { "met" } else { "MISSED" }
        );
        tally.add([ok, true, true, true]);
    }
    replay_from_profile(&trace, tally);
    Some((trace, shares))
}

/// The trace split in two: the rows that make the profile (its first
/// round, or the first half of its rows when it has one round) and the rest.
fn split(trace: &Trace) -> Option<(Trace, Trace, String)> {
    let rows = trace.rows();
    let first = rows.iter().map(|r| r.round).min()?;
    let (head, rest): (Vec<_>, Vec<_>) = if rows.iter().any(|r| r.round != first) {
        rows.iter().partition(|r| r.round == first)
    } else {
        let (a, b) = rows.split_at(rows.len() / 2);
        (a.to_vec(), b.to_vec())
    };
    let how = if rows.iter().any(|r| r.round != first) {
        format!("round {first}, {} waits", head.len())
    } else {
        format!("the first {} waits", head.len())
    };
    Some((
        Trace::from_rows(head).ok()?,
        Trace::from_rows(rest).ok()?,
        how,
    ))
}

/// A sleeper started from a profile of the trace's first part, and a fresh
/// one, replaying the rest, against the rest's oracle.
fn replay_from_profile(trace: &Trace, tally: &mut Tally) {
    let Some((head, rest, how)) = split(trace) else {
        println!("too few waits to split for a profile: skipped");
        return;
    };
    let Ok(oracle) = Oracle::new(&rest, ORACLE_DRAWS, 1) else {
        return;
    };
    let keep = std::env::var("KEEPTIME_PROFILE_KEEP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(keeptime::estimate::WINDOW);
    let profile = Profile::from_trace_keeping(&head, Fingerprint::this_machine(), keep);
    let kept: usize = profile.samples().iter().sum();
    for (name, p) in [("from a profile", Some(&profile)), ("fresh", None)] {
        println!(
            "\n  {name}: profile of {how} ({kept} wake-ups kept), replayed on the other {} waits against their oracle (target 1 %)",
            rest.rows().len()
        );
        header();
        for d in DURATIONS_NS {
            let Ok(best) = oracle.outcomes(d).and_then(|o| o.best(0.01)) else {
                continue;
            };
            let (out, _) = replay_run(&rest, d, TailTarget::BALANCED, p);
            let s = summarise(d, best.cpu_share, &out);
            tally.add(row(&label(d), best.cpu_share * 100.0, &s, true));
        }
    }
}

/// Starting points per trace of the many-starts replays
/// (`KEEPTIME_CONVERGENCE_STARTS`; 0 skips them).
const STARTS: u64 = 24;

/// A fresh sleeper at the 1 % target replaying `trace` from `starts` evenly
/// spaced starting points, per length: the mean of the starts' summaries
/// (their CPU ratios and late shares; the swing is one trajectory's and is
/// left out), the row printed with its targets, and how the starts spread.
/// `shares`: the oracle's CPU share at 1 % per length, as the trace's
/// replay found it.
fn many_starts(
    path: &Path,
    trace: &Trace,
    shares: &[(u64, f64)],
    starts: u64,
    changing: bool,
) -> (Vec<String>, Tally) {
    let mut lines = Vec::new();
    let mut tally = Tally::default();
    lines.push(if changing {
        format!(
            "\n{}: one sleeper, the lengths in turn, from {starts} starting points (target 1 %; means over the starts; each row from the change to its length)",
            path.display()
        )
    } else {
        format!(
            "\n{} from {starts} starting points (target 1 %; means over the starts)",
            path.display()
        )
    });
    // With `changing`, one sleeper per start makes every length in turn:
    // runs_by_length[i][k] is start k's summary at shares[i].
    let runs_by_length: Vec<Vec<Summary>> = if changing {
        let mut by: Vec<Vec<Summary>> = shares.iter().map(|_| Vec::new()).collect();
        for k in 0..starts {
            let tp = TracePlatform::starting_at(trace.clone(), 1_000_000, k, starts);
            tp.set_spin_step(50);
            let mut s = Sleeper::builder()
                .tail_target(TailTarget::BALANCED)
                .build_with(tp.clone());
            for (i, &(d, cpu_share)) in shares.iter().enumerate() {
                by[i].push(summarise(d, cpu_share, &sleeps_on(&mut s, &tp, d)));
            }
        }
        by
    } else {
        shares
            .iter()
            .map(|&(d, cpu_share)| {
                (0..starts)
                    .map(|k| {
                        let (out, _) =
                            replay_run_from(trace, d, TailTarget::BALANCED, None, k, starts);
                        summarise(d, cpu_share, &out)
                    })
                    .collect()
            })
            .collect()
    };
    for (&(d, cpu_share), runs) in shares.iter().zip(runs_by_length) {
        let n = runs.len() as f64;
        let mean = |f: &dyn Fn(&Summary) -> f64| runs.iter().map(f).sum::<f64>() / n;
        let s = Summary {
            cpu_ratio: std::array::from_fn(|k| mean(&|r| r.cpu_ratio[k])),
            late_pct: std::array::from_fn(|k| mean(&|r| r.late_pct[k])),
            waits: mean(&|r| r.waits),
            swing_pct: f64::NAN,
        };
        let (line, checks) = row_text(&label(d), cpu_share * 100.0, &s, false);
        lines.push(line);
        // The swing is one trajectory's: not judged here.
        for ok in &checks[..3] {
            if *ok {
                tally.met += 1;
            } else {
                tally.missed += 1;
            }
        }
        let cpu300 = runs.iter().map(|r| r.cpu_ratio[1]);
        let (lo, hi) = cpu300.fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
        let late = runs.iter().filter(|r| r.late_pct[1] > 1.5).count();
        lines.push(format!(
            "{:>8} cpu@300 {lo:.2}–{hi:.2}× over the starts; late@300 above 1.5 % in {late} of {starts}",
            ""
        ));
    }
    (lines, tally)
}

#[derive(Default)]
struct Tally {
    met: usize,
    missed: usize,
}

impl Tally {
    fn add(&mut self, checks: [bool; 4]) {
        for c in checks {
            if c {
                self.met += 1;
            } else {
                self.missed += 1;
            }
        }
    }
}

fn traces_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.to_string_lossy().ends_with(".csv.gz"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// One live recording of this host's wake-ups for the oracle: `rounds`
/// passes over the default lengths in about `total_ns` (longer when the
/// long lengths' fewest waits need it), seeded with `seed`.
fn record_segment(rounds: u32, total_ns: u64, seed: u64) -> Option<Trace> {
    let opts = RecordOptions {
        rounds,
        total_ns,
        seed,
        // The segments are merged row by row into one trace of blocks
        // (replays read blocks only); its oracle prices every wait as the
        // blocks do.
        after_waits: 0,
        ..RecordOptions::default()
    };
    match keeptime::trace::record(&opts, |_| {}) {
        Ok(t) => Some(t),
        Err(e) => {
            println!("live: recording failed ({e}); skipped");
            None
        }
    }
}

/// One method's live run: per length, its outcomes and keeptime's own count.
type LiveRun = Vec<(u64, Vec<Outcome>, Option<f64>)>;

fn live_run(method: &str, profile: &Profile) -> LiveRun {
    let is_kt = method.starts_with("keeptime");
    let mut runs = Vec::new();
    for d in DURATIONS_NS {
        let mut out = Vec::with_capacity(CHECKPOINTS[3]);
        let mut s = if method.contains("profile") {
            Sleeper::builder().profile(profile).build()
        } else {
            Sleeper::new()
        };
        let ss = spin_sleep::SpinSleeper::default();
        for _ in 0..CHECKPOINTS[3] {
            let st0 = s.stats();
            let cpu0 = os::thread_cpu_ns();
            let deadline = os::monotonic_ns() + d;
            if is_kt {
                s.sleep_until_ns(deadline);
            } else {
                let now = os::monotonic_ns();
                ss.sleep(std::time::Duration::from_nanos(
                    deadline.saturating_sub(now),
                ));
            }
            let seen = os::monotonic_ns();
            let st = s.stats();
            out.push(Outcome {
                cpu_ns: os::thread_cpu_ns() - cpu0,
                spin_ns: st.spin_ns - st0.spin_ns,
                late: seen > deadline + LIVE_LATE_NS,
                waits: st.os_waits - st0.os_waits,
                unproven: st.unproven_sleeps > st0.unproven_sleeps,
            });
        }
        runs.push((d, out, is_kt.then(|| s.stats().late_share())));
    }
    runs
}

/// Live on this host. The oracle is the same run's: its wake-ups are
/// recorded before the methods and again after each one, so a host whose
/// tail drifts within the run is held to the tail of the whole run, not of
/// its first seconds. The profile is made from the first recording only,
/// as a program would have it from an earlier run.
fn live(tally: &mut Tally) {
    const METHODS: [&str; 3] = [
        "keeptime (fresh sleeper)",
        "keeptime (from a profile of the first recording)",
        "spin_sleep (default)",
    ];
    println!("\nlive on this host: recording wake-ups for the oracle (about 4 s), then again after each method…");
    let Some(first) = record_segment(2, 4_000_000_000, 1) else {
        return;
    };
    // What `keeptime trace --profile` would write from that recording.
    let profile = Profile::from_trace(&first, Fingerprint::this_machine());
    let mut rows = first.rows().to_vec();
    let mut runs = Vec::new();
    for (k, method) in METHODS.iter().enumerate() {
        runs.push(live_run(method, &profile));
        let Some(seg) = record_segment(1, 2_000_000_000, 2 + k as u64) else {
            return;
        };
        let base = rows.iter().map(|r| r.round + 1).max().unwrap_or(0);
        rows.extend(seg.rows().iter().map(|r| TraceRow {
            round: base + r.round,
            ..*r
        }));
    }
    let Ok(trace) = Trace::from_rows(rows) else {
        return;
    };
    let Ok(oracle) = Oracle::new(&trace, ORACLE_DRAWS, 1) else {
        return;
    };
    println!(
        "the same run's oracle: {} wake-ups recorded in {} segments, before the methods and after each",
        trace.rows().len(),
        METHODS.len() + 1
    );
    for (method, run) in METHODS.iter().zip(&runs) {
        println!("\nlive, {method}, target 1 % (late: > 5 µs past the deadline, caller's reading)");
        header();
        for (d, out, own_late) in run {
            let Ok(best) = oracle.outcomes(*d).and_then(|o| o.best(0.01)) else {
                continue;
            };
            let sum = summarise(*d, best.cpu_share, out);
            tally.add(row(
                &label(*d),
                best.cpu_share * 100.0,
                &sum,
                own_late.is_some(),
            ));
            if let Some(share) = own_late {
                println!(
                    "{:>8} keeptime's own count: {:.2} % woke after the deadline",
                    "",
                    100.0 * share
                );
            }
        }
    }
    println!("\nlive, the oracle's plan for each length followed unchanged (its OS waits with a 1 ns timer slack, then a spin; late: > 5 µs past the deadline)");
    for d in DURATIONS_NS {
        let Ok(best) = oracle.outcomes(d).and_then(|o| o.best(0.01)) else {
            continue;
        };
        let fixed = fixed_plan_run(&System::new(true), d, best.plan, |deadline, _, end| {
            end > deadline + LIVE_LATE_NS
        });
        println!("{:>8} the oracle's plan: {}", label(d), best.plan);
        fixed_plan_row("", d, best.cpu_share, &fixed);
    }
}

fn main() {
    let mut dirs = Vec::new();
    let mut live_on = std::env::var("KEEPTIME_CONVERGENCE_LIVE").map_or(true, |v| v != "0");
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--bench" => {}
            "--no-live" => live_on = false,
            _ => dirs.push(PathBuf::from(a)),
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if dirs.is_empty() {
        dirs.push(
            std::env::var_os("KEEPTIME_TRACES")
                .map(PathBuf::from)
                .unwrap_or_else(|| root.join("../shared/traces")),
        );
    }
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"));
    let mut tally = Tally::default();
    // The same file in two directories (the shared traces hold copies of
    // some in tests/data) is replayed once.
    let mut seen: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    // Each trace replayed, with its oracle's CPU share at 1 % per length.
    let mut replayed: Vec<(PathBuf, Trace, OracleShares)> = Vec::new();
    for dir in dirs {
        let traces = traces_in(&dir);
        if traces.is_empty() {
            // cargo runs a bench from its package's directory: a relative
            // KEEPTIME_TRACES is read from there, not from where it was typed.
            let seen_as = if dir.is_relative() {
                std::env::current_dir()
                    .map(|cwd| format!(", read as {}", cwd.join(&dir).display()))
                    .unwrap_or_default()
            } else {
                String::new()
            };
            println!(
                "no traces in {}{seen_as} (absent or empty): skipped",
                dir.display()
            );
        }
        for t in traces {
            let bytes = std::fs::read(&t).unwrap_or_default();
            if let Some((first, _)) = seen.iter().find(|(_, b)| !b.is_empty() && *b == bytes) {
                println!(
                    "\n{}: the same file as {}, replayed above",
                    t.display(),
                    first.display()
                );
                continue;
            }
            seen.push((t.clone(), bytes));
            if let Some((trace, shares)) = replay(&t, &mut tally) {
                replayed.push((t, trace, shares));
            }
        }
    }
    let starts = std::env::var("KEEPTIME_CONVERGENCE_STARTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(STARTS);
    let mut starts_tally = Tally::default();
    let mut changing_starts_tally = Tally::default();
    if starts > 0 {
        // One thread per trace: a TracePlatform is not Send, each thread
        // builds its own.
        let results: Vec<(Vec<String>, Tally, bool)> = std::thread::scope(|sc| {
            let hs: Vec<_> = [false, true]
                .into_iter()
                .flat_map(|changing| {
                    replayed.iter().map(move |(p, trace, shares)| {
                        sc.spawn(move || {
                            let (lines, t) = many_starts(p, trace, shares, starts, changing);
                            (lines, t, changing)
                        })
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        for (lines, t, changing) in results {
            if let Some((first, rest)) = lines.split_first() {
                println!("{first}");
                header();
                for l in rest {
                    println!("{l}");
                }
            }
            let into = if changing {
                &mut changing_starts_tally
            } else {
                &mut starts_tally
            };
            into.met += t.met;
            into.missed += t.missed;
        }
    }
    let mut changing_tally = Tally::default();
    for (p, trace, shares) in &replayed {
        let t = changing_lengths(p, trace, shares);
        changing_tally.met += t.met;
        changing_tally.missed += t.missed;
    }
    if live_on {
        live(&mut tally);
    }
    println!(
        "\nconvergence targets: {} met, {} MISSED",
        tally.met, tally.missed
    );
    if starts > 0 {
        println!(
            "from {starts} starting points per trace (fresh sleeper, 1 %, means over the starts): {} met, {} MISSED",
            starts_tally.met, starts_tally.missed
        );
        println!(
            "from {starts} starting points per trace, one sleeper changing length (1 %, means over the starts): {} met, {} MISSED",
            changing_starts_tally.met, changing_starts_tally.missed
        );
    }
    if !replayed.is_empty() {
        println!(
            "one sleeper changing length (1 %, each length from its change): {} met, {} MISSED",
            changing_tally.met, changing_tally.missed
        );
    }
}
