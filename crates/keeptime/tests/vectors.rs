//! Runs the language-neutral vectors in `spec/vectors/` against the Rust core.
//!
//! The vectors are generated from the scenarios below; regenerate them with
//! `KEEPTIME_REGENERATE_VECTORS=1 cargo test -p keeptime --test vectors` and
//! review the diff: each changed number is a change of behaviour that Go,
//! Java and the other runtimes must follow.

use keeptime::estimate::{self, MarginEstimator, BUCKETS};
use keeptime::sim::SimPlatform;
use keeptime::{
    plan_efficient, plan_exact, MissedTicks, Mode, PlanStep, Schedule, Sleeper, Step, TailTarget,
};
use serde_json::{json, Value};
use std::path::PathBuf;

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec/vectors")
}

fn regenerate() -> bool {
    std::env::var_os("KEEPTIME_REGENERATE_VECTORS").is_some()
}

/// Writes `generated` (regeneration mode) or checks it equals the file.
fn check_or_write(name: &str, generated: Value) {
    let path = vectors_dir().join(name);
    if regenerate() {
        let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
        std::fs::write(&path, text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let stored: Value = serde_json::from_str(&text).unwrap();
    // Compare case by case for readable failures.
    let (g, s) = (&generated["cases"], &stored["cases"]);
    assert_eq!(
        g.as_array().unwrap().len(),
        s.as_array().unwrap().len(),
        "{name}: case count"
    );
    for (gc, sc) in g.as_array().unwrap().iter().zip(s.as_array().unwrap()) {
        assert_eq!(gc, sc, "{name}: case {} differs", sc["name"]);
    }
    assert_eq!(generated, stored, "{name}: header differs");
}

// ---------------------------------------------------------------- estimator

/// The shares (ppm) at which every check reports the margins.
const SHARES: [u64; 3] = [50_000, 10_000, 1_000];

enum EstOp {
    Begin,
    /// `begin_sleep` this many times.
    BeginSleeps(u64),
    Observe(u64, u64),
    /// `observe` for each overshoot, all with one wait length.
    ObserveEach(u64, Vec<u64>),
    ObserveCost(u64, u64),
    Check,
    /// remaining, budget ppm, min_spin
    PlanExact(u64, u64, u64),
    /// the same, exploring
    PlanExplore(u64, u64, u64),
    /// the same, after a split plan's first wait
    PlanAfterSplit(u64, u64, u64),
    PlanEfficient(u64),
}

fn state(e: &MarginEstimator) -> Value {
    json!({
        "margins_ns": SHARES.iter().map(|&p| (0..BUCKETS).map(|b| e.margin(b, p)).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "compensations_ns": (0..BUCKETS).map(|b| e.compensation(b)).collect::<Vec<_>>(),
        "costs_ns": (0..BUCKETS).map(|b| e.cost(b)).collect::<Vec<_>>(),
        "live": (0..BUCKETS).map(|b| e.live_samples(b)).collect::<Vec<_>>(),
    })
}

fn plan_json(p: Option<keeptime::OsWaitPlan>) -> Value {
    match p {
        Some(p) => {
            json!({ "wait_ns": p.wait_ns, "split": p.split, "rest_budget_ppm": p.rest_budget_ppm,
                    "proven": p.proven })
        }
        None => Value::Null,
    }
}

fn run_estimator_case(name: &str, ops: &[EstOp]) -> Value {
    let mut e = MarginEstimator::new();
    let steps = run_ops(&mut e, ops);
    json!({ "name": name, "steps": steps, "final": state(&e) })
}

/// Runs `ops` on `e`, returning the steps as the vectors write them.
fn run_ops(e: &mut MarginEstimator, ops: &[EstOp]) -> Vec<Value> {
    let mut steps = Vec::new();
    for op in ops {
        let step = match op {
            EstOp::Begin => {
                e.begin_sleep();
                json!({ "op": "begin_sleep" })
            }
            EstOp::BeginSleeps(n) => {
                for _ in 0..*n {
                    e.begin_sleep();
                }
                json!({ "op": "begin_sleeps", "count": n })
            }
            EstOp::Observe(wait, over) => {
                e.observe(*wait, *over);
                json!({ "op": "observe", "wait_ns": wait, "overshoot_ns": over })
            }
            EstOp::ObserveEach(wait, overs) => {
                for &o in overs {
                    e.observe(*wait, o);
                }
                json!({ "op": "observe_each", "wait_ns": wait, "overshoots_ns": overs })
            }
            EstOp::ObserveCost(wait, cpu) => {
                e.observe_cost(*wait, *cpu);
                json!({ "op": "observe_cost", "wait_ns": wait, "cpu_ns": cpu })
            }
            EstOp::Check => json!({ "op": "check", "expect": state(e) }),
            EstOp::PlanExact(rem, budget, ms)
            | EstOp::PlanExplore(rem, budget, ms)
            | EstOp::PlanAfterSplit(rem, budget, ms) => {
                let step = PlanStep {
                    first: !matches!(op, EstOp::PlanAfterSplit(..)),
                    explore: matches!(op, EstOp::PlanExplore(..)),
                    after_split: matches!(op, EstOp::PlanAfterSplit(..)),
                };
                json!({ "op": "plan_exact", "remaining_ns": rem, "budget_ppm": budget, "min_spin_ns": ms,
                        "first": step.first, "explore": step.explore, "after_split": step.after_split,
                        "expect": plan_json(plan_exact(e, *rem, *budget, *ms, step)) })
            }
            EstOp::PlanEfficient(rem) => {
                json!({ "op": "plan_efficient", "remaining_ns": rem, "expect_wait_ns": plan_efficient(e, *rem) })
            }
        };
        steps.push(step);
    }
    steps
}

fn replay_estimator_case(case: &Value) {
    replay_steps(MarginEstimator::new(), case);
}

/// Replays a case's `steps` on `e`, then checks its `final` state.
fn replay_steps(mut e: MarginEstimator, case: &Value) {
    let name = case["name"].as_str().unwrap();
    for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
        let u = |k: &str| step[k].as_u64().unwrap();
        match step["op"].as_str().unwrap() {
            "begin_sleep" => e.begin_sleep(),
            "begin_sleeps" => {
                for _ in 0..u("count") {
                    e.begin_sleep();
                }
            }
            "observe" => e.observe(u("wait_ns"), u("overshoot_ns")),
            "observe_each" => {
                for o in step["overshoots_ns"].as_array().unwrap() {
                    e.observe(u("wait_ns"), o.as_u64().unwrap());
                }
            }
            "observe_cost" => e.observe_cost(u("wait_ns"), u("cpu_ns")),
            "check" => assert_eq!(state(&e), step["expect"], "{name} step {i}"),
            "plan_exact" => assert_eq!(
                plan_json(plan_exact(
                    &e,
                    u("remaining_ns"),
                    u("budget_ppm"),
                    u("min_spin_ns"),
                    PlanStep {
                        first: step["first"].as_bool().unwrap(),
                        explore: step["explore"].as_bool().unwrap(),
                        after_split: step["after_split"].as_bool().unwrap(),
                    }
                )),
                step["expect"],
                "{name} step {i}"
            ),
            "plan_efficient" => assert_eq!(
                plan_efficient(&e, u("remaining_ns")),
                step["expect_wait_ns"].as_u64(),
                "{name} step {i}"
            ),
            other => panic!("unknown op {other}"),
        }
    }
    assert_eq!(state(&e), case["final"], "{name} final");
}

/// A deterministic spread of `n` overshoots: `base` plus a sawtooth of
/// `spread`, with every `every`-th sample replaced by `tail` (no PRNG, so any
/// runtime can read the list straight from the vectors).
fn spread(n: u64, base: u64, spread: u64, every: u64, tail: u64) -> Vec<u64> {
    (0..n)
        .map(|i| {
            if every > 0 && i % every == every - 1 {
                tail + (i * 7_919) % (tail / 4 + 1)
            } else {
                base + (i * 7_919) % (spread + 1)
            }
        })
        .collect()
}

fn plans_at(durations: &[u64], budgets: &[u64]) -> Vec<EstOp> {
    let mut v = Vec::new();
    for &d in durations {
        for &p in budgets {
            v.push(EstOp::PlanExact(d, p, 0));
        }
    }
    v
}

fn estimator_scenarios() -> Vec<Value> {
    use EstOp::*;
    let ms = 1_000_000u64;
    let us = 1_000u64;
    let typical = [250 * us, ms, 2_500 * us, 10 * ms];
    let mut cases = Vec::new();
    // 1. Nothing observed: default margin, no compensation.
    let mut ops = vec![Check];
    ops.extend([
        PlanExact(4_000, 10_000, 0),
        PlanExact(10_000, 10_000, 0),
        PlanExact(60_000, 10_000, 0),
        PlanExact(100_000, 10_000, 0),
        PlanExact(ms, 10_000, 0),
        PlanExact(10 * ms, 1_000, 0),
        PlanExact(ms, 10_000, 80_000),
        PlanEfficient(0),
        PlanEfficient(10_000),
        PlanEfficient(ms),
    ]);
    cases.push(run_estimator_case("bootstrap", &ops));
    // 2. A quiet host (no cpuidle driver): short waits wake ~3-6 µs late, long
    //    ones later with a tail; OS waits cost ~2.5 µs. Two waits win.
    let mut ops = vec![
        Begin,
        ObserveEach(60 * us, spread(200, 3_000, 3_000, 50, 15_000)),
        ObserveEach(190 * us, spread(200, 3_500, 3_000, 40, 20_000)),
        ObserveEach(900 * us, spread(200, 8_000, 10_000, 20, 40_000)),
        ObserveEach(9 * ms, spread(200, 15_000, 20_000, 20, 80_000)),
        ObserveCost(60 * us, 2_400),
        ObserveCost(900 * us, 2_800),
        ObserveCost(9 * ms, 3_300),
        Check,
    ];
    ops.extend(plans_at(&typical, &SHARES));
    ops.push(PlanExact(ms, 10_000, 60_000));
    ops.push(PlanEfficient(ms));
    cases.push(run_estimator_case("planner_quiet_host", &ops));
    // 3. A haltpoll host: every wake ~26 µs late, p99 ~60 µs; every OS wait
    //    costs ~20 µs of thread CPU. One wait wins; short sleeps spin.
    let mut ops = vec![
        Begin,
        ObserveEach(40 * us, spread(300, 24_000, 6_000, 60, 45_000)),
        ObserveEach(120 * us, spread(300, 25_000, 8_000, 50, 55_000)),
        ObserveEach(200 * us, spread(300, 25_000, 8_000, 50, 55_000)),
        ObserveEach(900 * us, spread(300, 26_000, 8_000, 40, 65_000)),
        ObserveEach(2_400 * us, spread(300, 45_000, 15_000, 30, 100_000)),
        ObserveEach(9 * ms, spread(300, 95_000, 30_000, 30, 150_000)),
        ObserveCost(40 * us, 21_000),
        ObserveCost(900 * us, 20_500),
        ObserveCost(9 * ms, 43_000),
        Check,
    ];
    ops.extend(plans_at(
        &[100 * us, 250 * us, ms, 2_500 * us, 10 * ms],
        &SHARES,
    ));
    cases.push(run_estimator_case("planner_haltpoll_host", &ops));
    // 4. One 2 ms outlier among 4 µs overshoots: at 1 % it is the margin until
    //    199 samples are in (floor(200 · 1 %) = 2: the 2nd largest); at 0.1 %
    //    until WINDOW more observations pushed it out.
    let w = estimate::WINDOW as u64;
    let ops = vec![
        Begin,
        ObserveEach(100_000, vec![4_000; 50]),
        ObserveEach(100_000, vec![2_000_000]),
        Check,
        ObserveEach(100_000, vec![4_000; 60]),
        Check,
        ObserveEach(100_000, vec![4_000; (w - 111) as usize]),
        Check,
        ObserveEach(100_000, vec![4_000]),
        Check,
    ];
    cases.push(run_estimator_case("one_outlier_fades", &ops));
    // 5. A lasting shift up (loaded machine), then back down.
    let ops = vec![
        Begin,
        ObserveEach(700_000, spread(300, 4_000, 2_000, 0, 0)),
        Check,
        ObserveEach(700_000, spread(4, 40_000, 5_000, 0, 0)),
        Check,
        ObserveEach(700_000, spread(400, 40_000, 5_000, 0, 0)),
        Check,
        PlanExact(ms, 10_000, 0),
        ObserveEach(700_000, spread(w, 5_000, 2_000, 0, 0)),
        Check,
        PlanExact(ms, 10_000, 0),
    ];
    cases.push(run_estimator_case("lasting_shift_up_then_down", &ops));
    // 6. A bucket unused for HORIZON sleeps is forgotten.
    let mut ops = vec![
        Begin,
        Observe(150_000, 300_000),
        Check,
        PlanExact(400_000, 10_000, 0),
    ];
    for _ in 0..estimate::HORIZON - 1 {
        ops.push(Begin);
    }
    ops.extend([
        Check,
        Begin,
        Check,
        PlanExact(400_000, 10_000, 0),
        Observe(20_000, 2_000),
        Check,
    ]);
    cases.push(run_estimator_case("horizon_expiry", &ops));
    // 7. Borrowing: some buckets known, others borrow (shorter first); costs too.
    cases.push(run_estimator_case(
        "borrowing",
        &[
            Begin,
            Observe(20_000, 8_000),
            ObserveCost(20_000, 3_000),
            Begin,
            Observe(2_000_000, 30_000),
            Begin,
            Observe(300_000, 12_000),
            ObserveCost(2_000_000, 9_000),
            Check,
            PlanExact(ms, 10_000, 0),
            PlanExact(5 * ms, 10_000, 0),
            PlanExact(50_000, 10_000, 0),
            PlanEfficient(5 * ms),
            PlanExact(ms, 10_000, 60_000),
            PlanExact(100_000, 10_000, 60_000),
            PlanExact(60_000, 10_000, 60_000),
            PlanExact(ms, 10_000, u64::MAX),
        ],
    ));
    // 8. Clamping and saturation.
    cases.push(run_estimator_case(
        "clamp_and_saturate",
        &[
            Begin,
            Observe(u64::MAX, u64::MAX),
            Begin,
            Observe(0, 5_000_000_000),
            ObserveCost(u64::MAX, u64::MAX),
            Check,
            PlanExact(u64::MAX, 10_000, 0),
            PlanExact(u64::MAX, 999_999, u64::MAX),
            PlanEfficient(u64::MAX),
            PlanExact(3_000_000_000, 1, 0),
        ],
    ));
    // 9. Only a cut-short wait fits: the 1 ms bucket's waits all woke 900 µs
    //    late, the 300 µs bucket (established) wakes 3 µs late. No complete plan
    //    meets 1 % at 1 ms: a 524 µs chunk, as it costs less than spinning;
    //    at 600 µs a two-wait plan fits; once a wait is known to cost more
    //    than the spin, a spin.
    cases.push(run_estimator_case(
        "chunk_fallback",
        &[
            Begin,
            ObserveEach(700_000, vec![900_000; 120]),
            ObserveEach(300_000, vec![3_000; 200]),
            ObserveCost(300_000, 4_000),
            Check,
            PlanExact(ms, 10_000, 0),
            PlanAfterSplit(ms, 10_000, 0),
            PlanExact(600_000, 10_000, 0),
            PlanAfterSplit(600_000, 10_000, 0),
            ObserveCost(300_000, 5_000_000),
            PlanExact(ms, 10_000, 0),
        ],
    ));
    // 10. Young buckets: the 50 µs bucket has 20 samples (too few to set one
    //     aside at 0.5 %), and the 190 µs bucket's 150 know their tail at
    //     1 % but not at 0.5 %: at 0.5 % (a split's short wait) the 50 µs
    //     bucket's margin is never below the 1 ms bucket's, and exploring
    //     takes the split with the youngest short bucket anyway; at 1 % the
    //     190 µs bucket stands between them and bounds it alone.
    cases.push(run_estimator_case(
        "young_buckets_and_exploration",
        &[
            Begin,
            ObserveEach(900 * us, spread(300, 20_000, 10_000, 20, 60_000)),
            ObserveEach(45 * us, vec![3_000; 20]),
            ObserveEach(190 * us, spread(150, 4_000, 2_000, 0, 0)),
            ObserveCost(900 * us, 3_000),
            ObserveCost(45 * us, 2_000),
            Check,
            PlanExact(ms, 10_000, 0),
            PlanExplore(ms, 10_000, 0),
            PlanExplore(300 * us, 10_000, 0),
            PlanExplore(60 * us, 10_000, 0),
        ],
    ));
    // 11. Pooling: the 100 µs bucket holds 60 samples of its own, too few to
    //     set one aside at 0.5 %, but its live neighbours (50 µs: 100, 200 µs:
    //     50) make 210 together: its margin at 0.5 % is the pool's quantile,
    //     not the 1 ms bucket's, and the two-wait plans through it are proven.
    //     The 400 µs bucket pools with the 200 µs one and the 1 ms waits'.
    cases.push(run_estimator_case(
        "pooled_neighbours",
        &[
            Begin,
            ObserveEach(900 * us, spread(300, 25_000, 10_000, 30, 70_000)),
            ObserveEach(45 * us, spread(100, 3_000, 2_000, 0, 0)),
            ObserveEach(100 * us, spread(60, 4_000, 2_000, 0, 0)),
            ObserveEach(190 * us, spread(50, 5_000, 3_000, 25, 9_000)),
            ObserveCost(900 * us, 3_000),
            ObserveCost(45 * us, 2_000),
            Check,
            PlanExact(ms, 10_000, 0),
            PlanExact(ms, 1_000, 0),
            PlanExplore(ms, 1_000, 0),
            PlanExact(250 * us, 10_000, 0),
            PlanAfterSplit(120 * us, 5_000, 0),
        ],
    ));
    // 12. Exploring is bounded in CPU: while the 10 ms bucket's two 400 µs
    //     outliers stand for the young short bucket's tail at 0.5 % (the
    //     150 waits of 2.4 ms know their tail at 1 %, not at 0.5 %, so they
    //     do not stand between them at that share), every
    //     two-wait plan at 2.5 ms costs more than 2.5 ms / 16 = 156 µs above
    //     the one-wait plan, and the exploring step takes the one-wait plan. Once 600 more 10 ms
    //     waits set them aside, the cautious margin is ~35 µs and the
    //     exploring step takes the (unproven) two-wait plan.
    cases.push(run_estimator_case(
        "exploration_cost_cap",
        &[
            Begin,
            ObserveEach(2_400 * us, spread(150, 20_000, 40_000, 0, 0)),
            ObserveEach(9 * ms, spread(100, 30_000, 5_000, 50, 400_000)),
            ObserveEach(100 * us, vec![3_000; 10]),
            ObserveCost(2_400 * us, 3_000),
            ObserveCost(100 * us, 3_000),
            Check,
            PlanExact(2_500 * us, 10_000, 0),
            PlanExplore(2_500 * us, 10_000, 0),
            ObserveEach(9 * ms, spread(600, 30_000, 5_000, 0, 0)),
            Check,
            PlanExact(2_500 * us, 10_000, 0),
            PlanExplore(2_500 * us, 10_000, 0),
        ],
    ));
    // 13. Exploring takes a split whose short wait follows: the 2.4 ms waits
    //     wake 60-80 µs late, so a 50 µs split leaves no room for a second
    //     wait after any of them (room 0 of 300) and is not explored, although
    //     its short bucket (45 µs waits, pooled) has as many samples as the
    //     100 µs split's; the 100 µs split (room 300 of 300) is.
    cases.push(run_estimator_case(
        "exploration_needs_room",
        &[
            Begin,
            ObserveEach(2_400 * us, spread(300, 60_000, 20_000, 0, 0)),
            ObserveEach(45 * us, vec![3_000; 20]),
            ObserveEach(100 * us, vec![3_000; 5]),
            ObserveCost(2_400 * us, 20_000),
            ObserveCost(45 * us, 20_000),
            Check,
            PlanExact(2_500 * us, 10_000, 0),
            PlanExplore(2_500 * us, 10_000, 0),
        ],
    ));
    // 14. A split's long wait in a young bucket is held to that bucket's
    //     margin: the 1.5 ms waits (40 samples, ~30 µs late) are too few at
    //     1 %, fewer than half the 99 it needs, so their margin is the 3 ms
    //     waits' (one of them 388 µs late: 393 µs, its bin's upper edge).
    //     Splits whose long wait would end less than that before the short
    //     one are not planned (their young view shows no late wake-up); the
    //     400 µs split, ending 403 µs before the deadline, is.
    cases.push(run_estimator_case(
        "split_long_wait_held_to_young_margin",
        &[
            Begin,
            ObserveEach(1_500 * us, spread(40, 25_000, 10_000, 0, 0)),
            ObserveEach(3 * ms, spread(50, 25_000, 10_000, 50, 380_000)),
            ObserveEach(45 * us, spread(300, 2_000, 1_000, 0, 0)),
            ObserveCost(1_500 * us, 20_000),
            ObserveCost(45 * us, 20_000),
            Check,
            PlanExact(2 * ms, 10_000, 0),
            PlanAfterSplit(403 * us, 5_000, 0),
        ],
    ));
    // 15. A young view half grown is bounded only by established longer
    //     buckets. The 1.5 ms waits (60 samples, 25-35 µs late) are too few
    //     for 1 % (99) but at least half of it ((60 + 1) · 2 % ≥ 1): the 3 ms
    //     waits (50 samples, one 388 µs late) are young at 1 % themselves,
    //     so they do not bound them, and bucket 7's margin at 1 % is its own
    //     largest sample's bin, 36 863. At 0.1 % the 1.5 ms waits are under
    //     half grown ((60 + 1) · 0.2 % < 1), so the 3 ms waits' 393 215
    //     bounds them as before. Then 120 waits of 6 ms (one 242 µs late)
    //     establish bucket 9 at 1 % ((120 + 1) · 1 % ≥ 1; its margin is its
    //     largest sample's bin, 245 759): it bounds bucket 7 at 1 %, and
    //     bucket 8's own 393 215 stays above it.
    cases.push(run_estimator_case(
        "young_view_half_grown",
        &[
            Begin,
            ObserveEach(1_500 * us, spread(60, 25_000, 10_000, 0, 0)),
            ObserveEach(3 * ms, spread(50, 25_000, 10_000, 50, 380_000)),
            Check,
            ObserveEach(6 * ms, spread(120, 25_000, 10_000, 120, 200_000)),
            Check,
        ],
    ));
    // 16. Median bins and the cost average (1/4 weight, truncating toward zero).
    cases.push(run_estimator_case(
        "median_and_cost",
        &[
            Begin,
            Observe(40_000, 9_000),
            Observe(40_000, 1_000),
            Observe(40_000, 5_000),
            Observe(40_000, 3_000),
            Observe(40_000, 7_000),
            ObserveCost(40_000, 20_000),
            ObserveCost(40_000, 10_000),
            ObserveCost(40_000, 17_497),
            Check,
            PlanEfficient(45_000),
            PlanEfficient(2_000),
        ],
    ));
    // 17. A young longer bucket is floored by the nearest shorter one that
    //     knows its tail: 300 waits of 20 µs (bucket 1; every 20th about
    //     400 µs late, a stall) and 300 of 1 ms (bucket 6; every 50th
    //     120-150 µs late) place the 5 % and 1 % shares on their own, not
    //     0.1 %. Then ten waits of 2.5 ms (bucket 8, at most 30 µs late): at
    //     5 % and 1 % bucket 8 answers at least bucket 6's quantile, not its
    //     own largest sample, nor bucket 1's stalls; at 0.1 % bucket 6 is
    //     too young to floor it. The plan for a 2.5 ms sleep at 1 % ends its
    //     wait that margin early.
    cases.push(run_estimator_case(
        "a_young_longer_bucket_is_floored_by_a_shorter_one",
        &[
            Begin,
            ObserveEach(20 * us, spread(300, 5_000, 2_000, 20, 400_000)),
            ObserveEach(ms, spread(300, 25_000, 10_000, 50, 120_000)),
            ObserveEach(2_500 * us, spread(10, 25_000, 5_000, 0, 0)),
            Check,
            PlanExact(2_500 * us, 10_000, 0),
        ],
    ));
    // 18. A young longer bucket bounds a young shorter one through its pool
    //     with the nearest shorter bucket that knows its tail: 300 waits of
    //     1 ms (bucket 6, every 50th 120-150 µs late) place the 5 % and 1 %
    //     shares; 40 waits of 2.5 ms (bucket 8) hold one stall of about
    //     1.7 ms, too young for 1 %; five waits of 1.5 ms (bucket 7) about
    //     25 µs late. At 1 % bucket 7 answers the pool of buckets 8 and 6
    //     (its third largest of 340, a 1 ms wait's tail), not the stall;
    //     bucket 8 itself still answers its own largest, the stall; and the
    //     buckets below 6 answer bucket 6's own tail (it stands between).
    cases.push(run_estimator_case(
        "a_young_longer_bucket_bounds_through_the_shorter_pool",
        &[
            Begin,
            ObserveEach(ms, spread(300, 25_000, 10_000, 50, 120_000)),
            ObserveEach(2_500 * us, spread(40, 25_000, 5_000, 40, 1_400_000)),
            ObserveEach(1_500 * us, spread(5, 25_000, 5_000, 0, 0)),
            Check,
            PlanExact(2_500 * us, 10_000, 0),
            PlanExact(1_600 * us, 10_000, 0),
        ],
    ));
    // 19. A young view is bounded only up to the nearest longer bucket that
    //     knows its tail: 120 waits of 6 ms (bucket 9, 25-35 µs late) place
    //     the 5 % and 1 % shares on their own; five waits of 12 ms (bucket
    //     10) hold one stall of about 1.2 ms; 20 waits of 1.5 ms (bucket 7,
    //     25-35 µs late) are young at 1 %. At 1 % bucket 7 answers bucket
    //     9's tail (or its own with headroom), not bucket 10's stall: bucket
    //     9 stands between them. At 0.1 % bucket 9 does not know its tail,
    //     so the stall bounds bucket 7 as before. A 1.6 ms sleep at 1 % then
    //     takes one wait that margin early.
    cases.push(run_estimator_case(
        "a_young_view_is_bounded_up_to_the_nearest_longer_known",
        &[
            Begin,
            ObserveEach(6 * ms, spread(120, 25_000, 10_000, 0, 0)),
            ObserveEach(12 * ms, spread(5, 25_000, 10_000, 5, 1_200_000)),
            ObserveEach(1_500 * us, spread(20, 25_000, 10_000, 0, 0)),
            Check,
            PlanExact(1_600 * us, 10_000, 0),
            PlanExact(10 * ms, 10_000, 0),
        ],
    ));
    cases
}

#[test]
fn estimator_vectors() {
    let generated = json!({
        "spec": "spec/estimator.md",
        "constants": { "BUCKETS": BUCKETS, "WINDOW": estimate::WINDOW, "BINS": estimate::BINS,
                       "HORIZON": estimate::HORIZON, "DEFAULT_MARGIN_NS": estimate::DEFAULT_MARGIN_NS,
                       "DEFAULT_COST_NS": estimate::DEFAULT_COST_NS, "COST_SAMPLE_EVERY": estimate::COST_SAMPLE_EVERY,
                       "MAX_SAMPLE_NS": estimate::MAX_SAMPLE_NS, "MIN_OS_WAIT_NS": keeptime::MIN_OS_WAIT_NS,
                       "SPLITS_NS": keeptime::SPLITS_NS, "EXPLORE_EVERY": keeptime::EXPLORE_EVERY,
                       "EXPLORE_YOUNG_SLEEPS": keeptime::EXPLORE_YOUNG_SLEEPS,
                       "EXPLORE_COST_DIV": keeptime::EXPLORE_COST_DIV,
                       "STALE_SHARE_PPM": estimate::STALE_SHARE_PPM, "STALE_MIN": estimate::STALE_MIN,
                       "STALE_DIV": estimate::STALE_DIV,
                       "YOUNG_HEADROOM_DIV": estimate::YOUNG_HEADROOM_DIV, "check_shares_ppm": SHARES },
        "cases": estimator_scenarios(),
    });
    check_or_write("estimator.json", generated);
    let stored: Value = serde_json::from_str(
        &std::fs::read_to_string(vectors_dir().join("estimator.json")).unwrap(),
    )
    .unwrap();
    for case in stored["cases"].as_array().unwrap() {
        replay_estimator_case(case);
    }
}

// ---------------------------------------------------------------- sleep

struct SleepSpec {
    at_ns: u64,
    deadline_ns: u64,
    overshoots: Vec<u64>,
    interrupts: Vec<u64>,
    spin_slots_free: bool,
}

fn s(at_ns: u64, deadline_ns: u64, overshoots: &[u64]) -> SleepSpec {
    SleepSpec {
        at_ns,
        deadline_ns,
        overshoots: overshoots.to_vec(),
        interrupts: vec![],
        spin_slots_free: true,
    }
}

fn sleep_case(name: &str, mode: Mode, default_overshoot: u64, sleeps: Vec<SleepSpec>) -> Value {
    sleep_case_full(name, mode, default_overshoot, 0, 2_000, 10_000, sleeps)
}

fn sleep_case_min_spin(
    name: &str,
    mode: Mode,
    default_overshoot: u64,
    min_spin_ns: u64,
    sleeps: Vec<SleepSpec>,
) -> Value {
    sleep_case_full(
        name,
        mode,
        default_overshoot,
        min_spin_ns,
        2_000,
        10_000,
        sleeps,
    )
}

fn stats_json(st: keeptime::SleeperStats) -> Value {
    json!({ "sleeps": st.sleeps, "late": st.late, "os_waits": st.os_waits, "spin_ns": st.spin_ns,
            "cpu_estimate_ns": st.cpu_estimate_ns, "unproven_sleeps": st.unproven_sleeps })
}

fn sleep_case_full(
    name: &str,
    mode: Mode,
    default_overshoot: u64,
    min_spin_ns: u64,
    wait_cost_ns: u64,
    tail_target_ppm: u32,
    sleeps: Vec<SleepSpec>,
) -> Value {
    let world = World {
        cpus: 1,
        other_sleepers: 0,
    };
    sleep_case_world(
        name,
        mode,
        default_overshoot,
        min_spin_ns,
        wait_cost_ns,
        tail_target_ppm,
        world,
        sleeps,
    )
}

/// The simulated process: its CPUs and the sleepers of other threads inside
/// a sleep (`spec/sleep.md`, Crowds). One CPU and nobody else: never a crowd.
#[derive(Clone, Copy)]
struct World {
    cpus: usize,
    other_sleepers: usize,
}

#[allow(clippy::too_many_arguments)]
fn sleep_case_world(
    name: &str,
    mode: Mode,
    default_overshoot: u64,
    min_spin_ns: u64,
    wait_cost_ns: u64,
    tail_target_ppm: u32,
    world: World,
    sleeps: Vec<SleepSpec>,
) -> Value {
    let sim = SimPlatform::new(0);
    sim.set_default_overshoot(default_overshoot);
    sim.set_wait_cost(wait_cost_ns);
    sim.set_cpus(world.cpus);
    sim.set_other_sleepers(world.other_sleepers);
    let mut sleeper = Sleeper::builder()
        .mode(mode)
        .min_spin(std::time::Duration::from_nanos(min_spin_ns))
        .tail_target(TailTarget::from_ppm(tail_target_ppm).unwrap())
        .build_with(sim.clone());
    let mut out = Vec::new();
    for sp in sleeps {
        sim.advance_to(sp.at_ns);
        sim.script_overshoots(sp.overshoots.iter().copied());
        sim.script_interrupts(sp.interrupts.iter().copied());
        sim.set_spin_slots_free(sp.spin_slots_free);
        sim.clear_waits();
        let returned = sleeper.sleep_until_ns(sp.deadline_ns);
        let waits: Vec<Value> = sim
            .waits()
            .iter()
            .map(|w| json!([w.issued_ns, w.target_ns, w.woke_ns, w.interrupted]))
            .collect();
        out.push(json!({ "at_ns": sp.at_ns, "deadline_ns": sp.deadline_ns, "overshoots_ns": sp.overshoots,
                         "interrupts_after_ns": sp.interrupts, "spin_slots_free": sp.spin_slots_free,
                         "expect": { "waits": waits, "returned_ns": returned, "stats": stats_json(sleeper.stats()) } }));
    }
    json!({ "name": name, "mode": mode.to_string(), "start_ns": 0, "spin_step_ns": 100, "yield_step_ns": 1_000,
            "default_overshoot_ns": default_overshoot, "min_spin_ns": min_spin_ns,
            "wait_cost_ns": wait_cost_ns, "tail_target_ppm": tail_target_ppm,
            "cpus": world.cpus, "other_sleepers": world.other_sleepers, "sleeps": out })
}

fn replay_sleep_case(case: &Value) {
    let name = case["name"].as_str().unwrap();
    let sim = SimPlatform::new(case["start_ns"].as_u64().unwrap());
    sim.set_spin_step(case["spin_step_ns"].as_u64().unwrap());
    sim.set_yield_step(case["yield_step_ns"].as_u64().unwrap());
    sim.set_default_overshoot(case["default_overshoot_ns"].as_u64().unwrap());
    sim.set_wait_cost(case["wait_cost_ns"].as_u64().unwrap());
    sim.set_cpus(case["cpus"].as_u64().unwrap_or(1) as usize);
    sim.set_other_sleepers(case["other_sleepers"].as_u64().unwrap_or(0) as usize);
    let mode: Mode = case["mode"].as_str().unwrap().parse().unwrap();
    let min_spin = std::time::Duration::from_nanos(case["min_spin_ns"].as_u64().unwrap_or(0));
    let target = TailTarget::from_ppm(case["tail_target_ppm"].as_u64().unwrap() as u32).unwrap();
    let mut sleeper = Sleeper::builder()
        .mode(mode)
        .min_spin(min_spin)
        .tail_target(target)
        .build_with(sim.clone());
    let nums = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    for (i, sp) in case["sleeps"].as_array().unwrap().iter().enumerate() {
        sim.advance_to(sp["at_ns"].as_u64().unwrap());
        sim.script_overshoots(nums(&sp["overshoots_ns"]));
        sim.script_interrupts(nums(&sp["interrupts_after_ns"]));
        sim.set_spin_slots_free(sp["spin_slots_free"].as_bool().unwrap());
        sim.clear_waits();
        let deadline = sp["deadline_ns"].as_u64().unwrap();
        let returned = sleeper.sleep_until_ns(deadline);
        assert_eq!(
            returned,
            sp["expect"]["returned_ns"].as_u64().unwrap(),
            "{name} sleep {i}: returned"
        );
        let waits: Vec<Value> = sim
            .waits()
            .iter()
            .map(|w| json!([w.issued_ns, w.target_ns, w.woke_ns, w.interrupted]))
            .collect();
        assert_eq!(
            Value::from(waits),
            sp["expect"]["waits"],
            "{name} sleep {i}: waits"
        );
        assert_eq!(
            stats_json(sleeper.stats()),
            sp["expect"]["stats"],
            "{name} sleep {i}: stats"
        );
        if mode != Mode::Efficient {
            assert!(returned >= deadline, "{name} sleep {i}: early");
        }
    }
}

fn sleep_scenarios() -> Vec<Value> {
    let ms = 1_000_000u64;
    let us = 1_000u64;
    let mut cases = Vec::new();
    // Learning 1 ms sleeps from scratch: the cascade long wait → short wait → spin.
    let mut v = Vec::new();
    let mut t = 0;
    let script: [&[u64]; 6] = [
        &[12_000, 3_000],
        &[15_000, 4_000],
        &[9_000, 2_500],
        &[40_000, 3_500],
        &[11_000, 6_000],
        &[14_000, 3_000],
    ];
    for o in script {
        v.push(s(t, t + ms, o));
        t += ms + 50 * us;
    }
    cases.push(sleep_case("exact_1ms_learning", Mode::Exact, 5_000, v));
    // 100 µs and 10 µs sleeps, and an OS wait that overshoots its margin (late, unavoidable).
    let mut v = Vec::new();
    let mut t = 0;
    for o in [
        &[4_000u64][..],
        &[5_000],
        &[3_000],
        &[30_000],
        &[4_000],
        &[2_000],
    ] {
        v.push(s(t, t + 100 * us, o));
        t += 200 * us;
    }
    for o in [&[2_000u64][..], &[1_500], &[9_000]] {
        v.push(s(t, t + 10 * us, o));
        t += 50 * us;
    }
    cases.push(sleep_case("exact_100us_and_10us", Mode::Exact, 3_000, v));
    // 10 ms sleeps, a past deadline, a deadline at the current instant.
    let v = vec![
        s(0, 10 * ms, &[60_000, 5_000, 3_000]),
        s(11 * ms, 21 * ms, &[20_000, 4_000]),
        s(30 * ms, 29 * ms, &[]),
        s(40 * ms, 40 * ms, &[]),
    ];
    cases.push(sleep_case(
        "exact_10ms_and_past_deadlines",
        Mode::Exact,
        4_000,
        v,
    ));
    // Signals: the OS wait is interrupted twice and resumes toward the same target.
    let mut sp = s(0, ms, &[10_000, 3_000]);
    sp.interrupts = vec![100 * us, 50 * us];
    let mut sp2 = s(2 * ms, 3 * ms, &[8_000, 3_000]);
    sp2.interrupts = vec![700 * us];
    cases.push(sleep_case(
        "exact_eintr_resumes",
        Mode::Exact,
        4_000,
        vec![sp, sp2],
    ));
    // All spin slots taken: the last phase follows (a yield per iteration),
    // never an OS wait straight to the deadline.
    let mut a = s(0, ms, &[10_000, 3_000, 4_000]);
    a.spin_slots_free = false;
    let mut b = s(2 * ms, 2 * ms + 100 * us, &[3_000, 2_000]);
    b.spin_slots_free = false;
    cases.push(sleep_case(
        "exact_no_spin_slot",
        Mode::Exact,
        4_000,
        vec![a, b],
    ));
    // A crowd: 64 sleepers on 2 CPUs, OS waits costing 5 µs. The margin is
    // capped at 2 · D / (2 · 64) − cost; a wake-up later than that is late;
    // without a slot the spin follows; the slot's spinner pauses only in the
    // last 5 µs. Then 16 sleepers (cap 57.5 µs above the learned margin).
    let mut v = Vec::new();
    let mut t = 0;
    for (i, o) in [3_000u64, 3_000, 14_000, 3_000, 2_000, 40_000, 3_000]
        .iter()
        .enumerate()
    {
        let mut sp = s(t, t + ms, &[*o]);
        sp.spin_slots_free = i != 3;
        v.push(sp);
        t += 2 * ms;
    }
    v.push(s(t, t + 250 * us, &[3_000]));
    v.push(s(t + ms, t + ms + 12 * us, &[]));
    cases.push(sleep_case_world(
        "exact_crowd_64_on_2_cpus",
        Mode::Exact,
        3_000,
        0,
        5_000,
        10_000,
        World {
            cpus: 2,
            other_sleepers: 63,
        },
        v,
    ));
    let mut v = Vec::new();
    let mut t = 0;
    for o in [3_000u64, 3_000, 3_000, 90_000, 3_000] {
        v.push(s(t, t + ms, &[o]));
        t += 2 * ms;
    }
    cases.push(sleep_case_world(
        "exact_crowd_16_on_2_cpus_min_spin",
        Mode::Exact,
        3_000,
        20_000,
        5_000,
        10_000,
        World {
            cpus: 2,
            other_sleepers: 15,
        },
        v,
    ));
    // A huge deadline (saturated duration) and a huge overshoot.
    cases.push(sleep_case(
        "exact_saturation",
        Mode::Exact,
        4_000,
        vec![s(5, u64::MAX, &[1, 1, 1])],
    ));
    // min_spin: the last OS wait ends at least 60 µs before the deadline.
    let mut v = Vec::new();
    let mut t = 0;
    for o in [
        &[12_000u64, 3_000][..],
        &[9_000, 4_000],
        &[3_000],
        &[5_000, 2_000],
    ] {
        v.push(s(t, t + ms, o));
        t += 2 * ms;
    }
    v.push(s(t, t + 100 * us, &[3_000]));
    v.push(s(t + ms, t + ms + 50 * us, &[]));
    cases.push(sleep_case_min_spin(
        "exact_min_spin_60us",
        Mode::Exact,
        4_000,
        60_000,
        v,
    ));
    // Efficient: compensated by the median, may end early.
    let mut v = Vec::new();
    let mut t = 0;
    for o in [55_000u64, 57_000, 54_000, 60_000, 56_000, 58_000, 53_000] {
        v.push(s(t, t + 100 * us, &[o]));
        t += 300 * us;
    }
    v.push(s(t, t + 20 * us, &[55_000]));
    cases.push(sleep_case(
        "efficient_compensates_median",
        Mode::Efficient,
        55_000,
        v,
    ));
    // Spin: pause hint for 50 µs, then yields.
    cases.push(sleep_case(
        "spin_pause_then_yield",
        Mode::Spin,
        0,
        vec![s(0, 30 * us, &[]), s(40 * us, 140 * us, &[])],
    ));
    // A quiet host: the long wait's tail is costly to spin, short waits are
    // cheap and tight, so the planner learns a two-wait plan.
    let mut v = Vec::new();
    let mut t = 0;
    for i in 0..120u64 {
        let o: &[u64] = if i % 10 == 9 { &[40_000] } else { &[] };
        v.push(s(t, t + ms, o));
        t += ms + 30 * us;
    }
    cases.push(sleep_case_full(
        "exact_quiet_host_two_waits",
        Mode::Exact,
        3_000,
        0,
        2_000,
        10_000,
        v,
    ));
    // A haltpoll-like host: every wake ~26 µs late, 2 % at 60 µs, each OS
    // wait costs 20 µs: one wait then a spin; the strict target spins longer.
    for (name, ppm) in [
        ("exact_haltpoll_host_balanced", 10_000u32),
        ("exact_haltpoll_host_strict", 1_000),
    ] {
        let mut v = Vec::new();
        let mut t = 0;
        for i in 0..120u64 {
            let o: &[u64] = if i % 50 == 49 { &[60_000] } else { &[] };
            v.push(s(t, t + ms, o));
            t += ms + 30 * us;
        }
        cases.push(sleep_case_full(
            name,
            Mode::Exact,
            26_000,
            0,
            20_000,
            ppm,
            v,
        ));
    }
    // Spin: pause near the deadline, yield only while it is far.
    cases.push(sleep_case(
        "spin_pauses_near_the_deadline",
        Mode::Spin,
        0,
        vec![s(0, 200 * us, &[])],
    ));
    cases
}

#[test]
fn sleep_vectors() {
    let generated = json!({ "spec": "spec/sleep.md", "cases": sleep_scenarios() });
    check_or_write("sleep.json", generated);
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(vectors_dir().join("sleep.json")).unwrap())
            .unwrap();
    for case in stored["cases"].as_array().unwrap() {
        replay_sleep_case(case);
    }
}

// ---------------------------------------------------------------- ticker

enum TOp {
    Tick(u64, u64),
    Reset(u64),
    SetPeriod(u64),
    Stats,
}

fn ticker_case(name: &str, start: u64, period: u64, policy: MissedTicks, ops: &[TOp]) -> Value {
    let mut sch = Schedule::new(start, period, policy).unwrap();
    let mut steps = Vec::new();
    for op in ops {
        steps.push(match *op {
            TOp::Tick(now, wake) => {
                let (wait, t) = match sch.poll(now) {
                    Step::Wait { deadline_ns } => (Some(deadline_ns), sch.woke(wake)),
                    Step::Now(t) => (None, t),
                };
                json!({ "tick_at": now, "wake_ns": wake,
                        "expect": { "wait_until_ns": wait, "index": t.index, "scheduled_ns": t.scheduled_ns,
                                    "lateness_ns": t.lateness_ns, "skipped": t.skipped } })
            }
            TOp::Reset(now) => {
                sch.reset(now);
                json!({ "reset_at": now })
            }
            TOp::SetPeriod(p) => json!({ "set_period": p, "expect_error": sch.set_period(p).is_err() }),
            TOp::Stats => {
                let st = sch.stats();
                json!({ "expect_stats": { "ticks": st.ticks, "missed": st.missed, "skipped": st.skipped,
                                          "worst_lateness_ns": st.worst_lateness_ns } })
            }
        });
    }
    json!({ "name": name, "start_ns": start, "period_ns": period, "policy": policy.to_string(), "steps": steps })
}

fn replay_ticker_case(case: &Value) {
    let name = case["name"].as_str().unwrap();
    let policy: MissedTicks = case["policy"].as_str().unwrap().parse().unwrap();
    let mut sch = Schedule::new(
        case["start_ns"].as_u64().unwrap(),
        case["period_ns"].as_u64().unwrap(),
        policy,
    )
    .unwrap();
    for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
        if let Some(now) = step["tick_at"].as_u64() {
            let x = &step["expect"];
            let t = match sch.poll(now) {
                Step::Wait { deadline_ns } => {
                    assert_eq!(
                        Some(deadline_ns),
                        x["wait_until_ns"].as_u64(),
                        "{name} step {i}: wait"
                    );
                    sch.woke(step["wake_ns"].as_u64().unwrap())
                }
                Step::Now(t) => {
                    assert!(
                        x["wait_until_ns"].is_null(),
                        "{name} step {i}: expected a wait"
                    );
                    t
                }
            };
            assert_eq!(
                t.index,
                x["index"].as_u64().unwrap(),
                "{name} step {i}: index"
            );
            assert_eq!(
                t.scheduled_ns,
                x["scheduled_ns"].as_u64().unwrap(),
                "{name} step {i}: scheduled"
            );
            assert_eq!(
                t.lateness_ns,
                x["lateness_ns"].as_u64().unwrap(),
                "{name} step {i}: lateness"
            );
            assert_eq!(
                t.skipped,
                x["skipped"].as_u64().unwrap(),
                "{name} step {i}: skipped"
            );
        } else if let Some(now) = step["reset_at"].as_u64() {
            sch.reset(now);
        } else if let Some(p) = step["set_period"].as_u64() {
            assert_eq!(
                sch.set_period(p).is_err(),
                step["expect_error"].as_bool().unwrap(),
                "{name} step {i}"
            );
        } else {
            let x = &step["expect_stats"];
            let st = sch.stats();
            assert_eq!(
                [st.ticks, st.missed, st.skipped, st.worst_lateness_ns],
                ["ticks", "missed", "skipped", "worst_lateness_ns"].map(|k| x[k].as_u64().unwrap()),
                "{name} step {i}: stats"
            );
        }
    }
}

fn ticker_scenarios() -> Vec<Value> {
    use TOp::*;
    let p = 1_000_000u64;
    vec![
        ticker_case(
            "skip_on_time",
            5_000,
            p,
            MissedTicks::Skip,
            &[
                Tick(5_100, 1_005_200),
                Tick(1_300_000, 2_005_150),
                Tick(2_900_000, 3_005_000),
                Stats,
            ],
        ),
        ticker_case(
            "skip_late_drops_slots",
            0,
            p,
            MissedTicks::Skip,
            &[
                Tick(10, 1_000_100),
                Tick(3_500_000, 0),
                Tick(3_600_000, 4_000_300),
                Tick(4_000_500, 5_000_200),
                Tick(5_000_200, 6_000_050),
                Stats,
            ],
        ),
        ticker_case(
            "burst_catches_up",
            0,
            p,
            MissedTicks::Burst,
            &[
                Tick(10, 1_000_100),
                Tick(3_500_000, 0),
                Tick(3_500_100, 0),
                Tick(3_500_200, 4_000_300),
                Tick(4_100_000, 5_000_100),
                Stats,
            ],
        ),
        ticker_case(
            "delay_shifts_schedule",
            0,
            p,
            MissedTicks::Delay,
            &[
                Tick(10, 1_000_100),
                Tick(3_500_000, 0),
                Tick(3_600_000, 4_500_200),
                Tick(4_600_000, 5_500_000),
                Stats,
            ],
        ),
        ticker_case(
            "reset_and_set_period",
            0,
            p,
            MissedTicks::Skip,
            &[
                Tick(0, 1_000_000),
                Reset(1_700_000),
                Tick(1_700_100, 2_700_050),
                SetPeriod(0),
                SetPeriod(250_000),
                Tick(2_800_000, 2_950_000),
                Tick(3_000_000, 3_200_000),
                SetPeriod(u64::MAX),
                Tick(3_300_000, u64::MAX),
                Stats,
            ],
        ),
        ticker_case(
            "exactly_due_is_not_missed",
            0,
            p,
            MissedTicks::Skip,
            &[
                Tick(1_000_000, 0),
                Tick(2_000_000, 0),
                Tick(2_000_001, 3_000_000),
                Stats,
            ],
        ),
        ticker_case(
            "huge_period_saturates",
            7,
            u64::MAX / 2,
            MissedTicks::Burst,
            &[
                Tick(8, u64::MAX / 2 + 7),
                Tick(u64::MAX / 2 + 8, u64::MAX),
                Stats,
            ],
        ),
    ]
}

#[test]
fn ticker_vectors() {
    let generated = json!({ "spec": "spec/ticker.md", "cases": ticker_scenarios() });
    check_or_write("ticker.json", generated);
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(vectors_dir().join("ticker.json")).unwrap())
            .unwrap();
    for case in stored["cases"].as_array().unwrap() {
        replay_ticker_case(case);
    }
}

// ---------------------------------------------------------------- profile

use keeptime::profile::{Fingerprint, Profile, FINGERPRINT_KEYS};

/// "This machine" for every profile case.
const MACHINE: [&str; 7] = [
    "AuthenticAMD",
    "AMD EPYC",
    "2",
    "KVM",
    "haltpoll",
    "tsc",
    "6.18.44-fc",
];

fn machine_of(values: &Value) -> Fingerprint {
    let v = |k: &str| Some(values[k].as_str().unwrap().to_string());
    Fingerprint::from_parts(
        v("cpu_vendor"),
        v("cpu_model"),
        values["cpus_online"].as_str().unwrap().parse().ok(),
        v("virtualization"),
        v("cpuidle_driver"),
        v("clocksource"),
        v("kernel_release"),
    )
}

/// A profile's text: header, the machine (`MACHINE` with `changes`
/// applied), sections `(bucket, wait, overshoots)`, costs `(wait, cpu)`,
/// `end`.
fn profile_text(
    changes: &[(&str, &str)],
    sections: &[(usize, u64, Vec<u64>)],
    costs: &[(u64, u64)],
) -> String {
    let mut t = String::from("keeptime-profile 1\n");
    for (k, v) in FINGERPRINT_KEYS.iter().zip(MACHINE) {
        let v = changes.iter().find(|c| c.0 == *k).map_or(v, |c| c.1);
        t.push_str(&format!("{k} {v}\n"));
    }
    for (b, w, overs) in sections {
        t.push_str(&format!("bucket {b} {}\n", overs.len()));
        for o in overs {
            t.push_str(&format!("{w} {o}\n"));
        }
    }
    for (w, c) in costs {
        t.push_str(&format!("cost {w} {c}\n"));
    }
    t.push_str("end\n");
    t
}

/// A case that loads `text` and runs `ops` on the loaded estimator.
fn profile_case(name: &str, text: String, ignore_machine: bool, ops: &[EstOp]) -> Value {
    let here = machine_of(&machine_json());
    let p = Profile::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    if !ignore_machine {
        p.check_machine(&here)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let mut e = p.estimator();
    let steps = run_ops(&mut e, ops);
    json!({ "name": name, "text": text, "ignore_machine": ignore_machine,
            "steps": steps, "final": state(&e) })
}

/// A case whose `text` is refused; the error as the vectors state it.
fn profile_error_case(name: &str, text: String, ignore_machine: bool) -> Value {
    let err = load_profile(&text, ignore_machine)
        .err()
        .unwrap_or_else(|| panic!("{name}: loads"));
    json!({ "name": name, "text": text, "ignore_machine": ignore_machine, "expect_error": err })
}

/// Parses and checks `text` as the vectors say (this machine is
/// `machine_json()`): the profile, or the error's code, line (and key).
fn load_profile(text: &str, ignore_machine: bool) -> Result<Profile, Value> {
    let here = machine_of(&machine_json());
    let as_json = |e: keeptime::profile::ProfileError| {
        let mut v = json!({ "code": e.code(), "line": e.line() });
        if let Some((key, _, _)) = e.mismatch() {
            v["key"] = json!(key);
        }
        v
    };
    let p = Profile::parse(text).map_err(as_json)?;
    if !ignore_machine {
        p.check_machine(&here).map_err(as_json)?;
    }
    Ok(p)
}

fn machine_json() -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in FINGERPRINT_KEYS.iter().zip(MACHINE) {
        m.insert((*k).to_string(), json!(v));
    }
    Value::Object(m)
}

fn profile_scenarios() -> Vec<Value> {
    use EstOp::*;
    let ms = 1_000_000u64;
    let us = 1_000u64;
    let typical = [250 * us, ms, 2_500 * us, 10 * ms];
    let mut cases = Vec::new();
    // A host whose cheapest plans are two-wait plans, each bucket a full
    // window; bucket 6's oldest sample is a 2 ms outlier (one rank at 1 %).
    let mut b6 = vec![2 * ms];
    b6.extend(spread(1_023, 20_000, 10_000, 25, 45_000));
    let host = [
        (2, 60 * us, spread(1_024, 3_000, 3_000, 50, 15_000)),
        (4, 190 * us, spread(1_024, 3_500, 3_000, 40, 20_000)),
        (6, 900 * us, b6),
        (10, 9 * ms, spread(1_024, 15_000, 20_000, 20, 80_000)),
    ];
    let host_costs = [(60 * us, 2_400), (900 * us, 2_800), (9 * ms, 3_300)];
    let text = profile_text(&[], &host, &host_costs);
    let mut ops = vec![Check];
    ops.extend(plans_at(&typical, &SHARES));
    // The first sleep uses bucket 6 only; the others age from seq 0.
    ops.extend([Begin, Observe(900 * us, 24_000), BeginSleeps(254), Check]);
    ops.extend(plans_at(&typical, &[10_000]));
    // Sleep 256: the loaded buckets no sleep observed are forgotten.
    ops.extend([Begin, Check]);
    ops.extend(plans_at(&typical, &[10_000]));
    // Sleep 257: bucket 6 too (its last observation was at sleep 1).
    ops.extend([Begin, Check, PlanExact(ms, 10_000, 0)]);
    cases.push(profile_case(
        "two_wait_host_then_ageing",
        text.clone(),
        false,
        &ops,
    ));
    // The same samples observed by a fresh estimator one by one: loading is
    // nothing but those observations.
    let mut ops = vec![];
    for (_, w, overs) in &host {
        ops.push(ObserveEach(*w, overs.clone()));
    }
    for (w, c) in host_costs {
        ops.push(ObserveCost(w, c));
    }
    ops.push(Check);
    cases.push(run_estimator_case("the_same_observed_fresh", &ops));
    // Young windows: a short bucket pooled with its neighbours, a 1 %
    // target the long bucket cannot place yet.
    let text_young = profile_text(
        &[],
        &[
            (3, 100 * us, spread(120, 4_000, 2_000, 0, 0)),
            (4, 200 * us, spread(90, 4_500, 2_000, 0, 0)),
            (7, 1_500 * us, spread(60, 25_000, 15_000, 30, 70_000)),
        ],
        &[(200 * us, 3_000)],
    );
    let mut ops = vec![Check];
    ops.extend(plans_at(&typical, &[10_000, 5_000]));
    cases.push(profile_case("young_windows", text_young, false, &ops));
    // A stale profile (spec/estimator.md, Loading, a stale bucket): each
    // bucket notes its own 1 % margin when loaded; once its own wake-ups land
    // above it at least 4 times and in more than 1 of 25, it keeps only its own.
    let text_stale = profile_text(
        &[],
        &[
            (4, 200 * us, spread(300, 4_000, 1_000, 0, 0)),
            (6, 900 * us, spread(300, 20_000, 5_000, 0, 0)),
        ],
        &[(200 * us, 3_000)],
    );
    let ops = vec![
        Check,
        Begin,
        // Bucket 6: 100 within its margin, then 4 above: 4 of 104, kept.
        ObserveEach(900 * us, vec![21_000; 100]),
        ObserveEach(900 * us, vec![90_000; 4]),
        Check,
        // Bucket 4: one within, three above: 3, kept; the fourth: dropped,
        // its 5 own wake-ups left.
        ObserveEach(200 * us, vec![4_000, 60_000, 60_000, 60_000]),
        Check,
        Observe(200 * us, 60_000),
        Check,
        PlanExact(ms, 10_000, 0),
        // Bucket 6's fifth above: 5 of 105 is more than 1 in 25: its own 105.
        Observe(900 * us, 90_000),
        Check,
        PlanExact(ms, 10_000, 0),
        PlanExact(2_500 * us, 10_000, 0),
    ];
    cases.push(profile_case(
        "a_stale_bucket_keeps_its_own",
        text_stale,
        false,
        &ops,
    ));
    // Nothing learned: the estimator of a fresh sleeper.
    let empty = profile_text(&[], &[], &[]);
    cases.push(profile_case(
        "machine_only",
        empty.clone(),
        false,
        &[Check, PlanExact(ms, 10_000, 0)],
    ));
    cases.push(profile_case(
        "costs_only",
        profile_text(
            &[],
            &[],
            &[
                (10 * us, 1_500),
                (300 * us, 4_000),
                (30 * ms, 2_000_000_000),
            ],
        ),
        false,
        &[Check],
    ));
    // \r\n line ends and no line break after `end`.
    let small = profile_text(
        &[],
        &[(6, 700 * us, vec![21_000, 26_000, 90_000])],
        &[(700 * us, 8_000)],
    );
    cases.push(profile_case(
        "crlf_and_no_final_line_break",
        small.replace('\n', "\r\n").trim_end().to_string(),
        false,
        &[Check, PlanExact(ms, 50_000, 0)],
    ));
    // Another machine.
    let other = profile_text(
        &[("clocksource", "hpet")],
        &[(6, 700 * us, vec![21_000])],
        &[],
    );
    cases.push(profile_error_case(
        "other_clocksource",
        other.clone(),
        false,
    ));
    cases.push(profile_case(
        "other_clocksource_ignored",
        other.clone(),
        true,
        &[Check],
    ));
    cases.push(profile_error_case(
        "first_difference_is_named",
        profile_text(
            &[
                ("kernel_release", "6.1.0"),
                ("cpus_online", "4"),
                ("cpu_model", "AMD EPYC 7R13"),
            ],
            &[],
            &[],
        ),
        false,
    ));
    cases.push(profile_error_case(
        "no_hypervisor_in_the_profile",
        profile_text(&[("virtualization", "-")], &[], &[]),
        false,
    ));
    cases.push(profile_error_case(
        "a_bad_number_before_the_machine_check",
        other.replace("700000 21000", "700000 21k"),
        false,
    ));
    // Bad and truncated files.
    let sample = profile_text(
        &[],
        &[(6, 700 * us, vec![21_000, 26_000])],
        &[(700 * us, 8_000)],
    );
    let end = sample.rfind("end").unwrap();
    let errors: Vec<(&str, String)> = vec![
        ("empty", String::new()),
        ("cut_inside_the_header", "keeptime-prof".into()),
        ("cut_before_the_version", "keeptime-profile ".into()),
        ("only_the_header", "keeptime-profile 1".into()),
        ("another_version_alone", "keeptime-profile 12".into()),
        (
            "a_trace_not_a_profile",
            "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,5000,3000,1000\n".into(),
        ),
        ("blank_first_line", format!("\n{sample}")),
        (
            "newer_version",
            sample.replace("keeptime-profile 1", "keeptime-profile 2"),
        ),
        (
            "version_missing",
            sample.replace("keeptime-profile 1", "keeptime-profile "),
        ),
        (
            "machine_key_wrong",
            sample.replace("cpus_online 2", "cpus 2"),
        ),
        (
            "machine_keys_out_of_order",
            sample.replace(
                "cpu_vendor AuthenticAMD\ncpu_model AMD EPYC",
                "cpu_model AMD EPYC\ncpu_vendor AuthenticAMD",
            ),
        ),
        (
            "machine_value_empty",
            sample.replace("clocksource tsc", "clocksource "),
        ),
        (
            "cut_after_the_machine_part",
            sample[..sample.find("bucket").unwrap()].to_string(),
        ),
        (
            "cut_inside_the_machine_part",
            sample[..sample.find("cpuidle").unwrap()].to_string(),
        ),
        (
            "cut_inside_a_section",
            sample[..sample.find("700000 26000").unwrap()].to_string(),
        ),
        (
            "cut_inside_a_sample",
            sample[..sample.find("700000 26000").unwrap() + 4].to_string(),
        ),
        ("cut_before_end", sample[..end].to_string()),
        ("cut_inside_end", sample[..end + 2].to_string()),
        (
            "letter_in_a_number",
            sample.replace("700000 26000", "700000 26O00"),
        ),
        (
            "negative_number",
            sample.replace("700000 26000", "700000 -26000"),
        ),
        (
            "signed_number",
            sample.replace("700000 26000", "700000 +26000"),
        ),
        ("fraction", sample.replace("700000 26000", "700000 26000.5")),
        (
            "number_too_large",
            sample.replace("700000 26000", "700000 9223372036854775808"),
        ),
        (
            "largest_number_then_bad",
            sample
                .replace("700000 26000", "700000 9223372036854775807")
                .replace("cost 700000 8000", "cost 700000 x"),
        ),
        (
            "two_spaces",
            sample.replace("700000 26000", "700000  26000"),
        ),
        (
            "trailing_space",
            sample.replace("700000 26000", "700000 26000 "),
        ),
        (
            "three_fields",
            sample.replace("700000 26000", "700000 26000 1"),
        ),
        (
            "blank_line_in_a_section",
            sample.replace("700000 26000\n", "\n700000 26000\n"),
        ),
        (
            "bucket_out_of_range",
            sample.replace("bucket 6 2", "bucket 12 2"),
        ),
        (
            "no_samples",
            sample.replace("bucket 6 2\n700000 21000\n700000 26000\n", "bucket 6 0\n"),
        ),
        (
            "more_samples_than_a_window",
            sample.replace("bucket 6 2", "bucket 6 1025"),
        ),
        (
            "fewer_samples_than_counted",
            sample.replace("bucket 6 2", "bucket 6 3"),
        ),
        (
            "more_samples_than_counted",
            sample.replace("bucket 6 2", "bucket 6 1"),
        ),
        (
            "wait_outside_its_bucket",
            sample.replace("700000 26000", "1100000 26000"),
        ),
        (
            "buckets_descending",
            sample.replace("cost", "bucket 5 1\n300000 9000\ncost"),
        ),
        (
            "bucket_repeated",
            sample.replace("cost", "bucket 6 1\n600000 9000\ncost"),
        ),
        (
            "section_after_a_cost",
            format!("{}bucket 7 1\n1100000 9000\nend\n", &sample[..end]),
        ),
        (
            "two_costs_for_one_bucket",
            format!("{}cost 600000 9000\nend\n", &sample[..end]),
        ),
        (
            "unknown_line",
            format!("{}costs 600000 9000\nend\n", &sample[..end]),
        ),
        ("text_after_end", format!("{sample}bucket 7 1\n")),
        ("blank_line_after_end", format!("{sample}\n")),
    ];
    for (name, text) in errors {
        cases.push(profile_error_case(name, text, false));
    }
    cases
}

#[test]
fn profile_vectors() {
    let generated = json!({
        "spec": "spec/estimator.md#profile",
        "constants": { "BUCKETS": BUCKETS, "WINDOW": estimate::WINDOW, "HORIZON": estimate::HORIZON,
                       "MAX_SAMPLE_NS": estimate::MAX_SAMPLE_NS, "check_shares_ppm": SHARES,
                       "version": keeptime::profile::PROFILE_VERSION },
        "machine": machine_json(),
        "cases": profile_scenarios(),
    });
    check_or_write("profile.json", generated);
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(vectors_dir().join("profile.json")).unwrap())
            .unwrap();
    let cases = stored["cases"].as_array().unwrap();
    let named = |n: &str| cases.iter().find(|c| c["name"] == n).unwrap();
    assert_eq!(
        named("two_wait_host_then_ageing")["steps"][0]["expect"],
        named("the_same_observed_fresh")["final"],
        "loading is the observations"
    );
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let Some(text) = case["text"].as_str() else {
            // An estimator case beside the profiles: the same answers from
            // the same observations made one by one.
            replay_estimator_case(case);
            continue;
        };
        let loaded = load_profile(text, case["ignore_machine"].as_bool().unwrap());
        match (&case["expect_error"], loaded) {
            (Value::Null, Ok(p)) => replay_steps(p.estimator(), case),
            (Value::Null, Err(e)) => panic!("{name}: refused with {e}"),
            (want, Err(e)) => assert_eq!(&e, want, "{name}"),
            (want, Ok(_)) => panic!("{name}: loaded, expected {want}"),
        }
    }
}
