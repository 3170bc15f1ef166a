//! Decision logic on a simulated clock: scripted OS overshoots, exact assertions.

use keeptime::estimate::{
    bin_hi, bin_of, bucket_of, COST_SAMPLE_EVERY, DEFAULT_MARGIN_NS, HORIZON,
};
use keeptime::sim::SimPlatform;
use keeptime::{
    explores, MissedTicks, Mode, Sleeper, SleeperStats, TailTarget, Ticker, EXPLORE_EVERY,
    EXPLORE_YOUNG_SLEEPS,
};
use std::time::Duration;

fn exact(sim: &SimPlatform) -> Sleeper<SimPlatform> {
    Sleeper::builder().mode(Mode::Exact).build_with(sim.clone())
}

/// A tiny deterministic generator (xorshift64*), so "random" scripts are reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn never_early_under_arbitrary_overshoots() {
    let sim = SimPlatform::new(1_000);
    let mut s = exact(&sim);
    let mut rng = Rng(0x5eed);
    for _ in 0..5_000 {
        // Overshoots mostly small, sometimes huge; sleeps from 0 to 20 ms.
        let o = match rng.below(100) {
            0 => rng.below(5_000_000),
            1..=9 => rng.below(200_000),
            _ => rng.below(20_000),
        };
        sim.set_default_overshoot(o);
        let d = rng.below(20_000_000);
        let deadline = sim.now() + d;
        let woke = s.sleep_until_ns(deadline);
        assert!(woke >= deadline, "returned {} ns early", deadline - woke);
        assert_eq!(woke, sim.now());
        assert!(!sim.is_spinning(), "spin slot leaked");
        sim.advance(rng.below(50_000));
    }
}

#[test]
fn a_warmed_up_sleeper_finishes_with_a_short_spin() {
    let sim = SimPlatform::new(0);
    sim.set_default_overshoot(4_000);
    sim.set_wait_cost(2_000);
    let mut s = exact(&sim);
    // Past the young sleeper's exploration (every sleep explores until then).
    for _ in 0..EXPLORE_YOUNG_SLEEPS {
        s.sleep(Duration::from_millis(1));
    }
    sim.clear_waits();
    let relaxes = sim.relaxes();
    let deadline = sim.now() + 1_000_000;
    let woke = s.sleep_until_ns(deadline);
    // A steady 4 µs overshoot lies in the bin [3584, 4095]: one OS wait ends
    // 4095 ns before the deadline (a second wait would only add its 2 µs
    // cost), then a spin of 95 ns = one 100 ns step.
    let waits = sim.waits();
    assert_eq!(waits.len(), 1);
    assert_eq!(deadline - waits[0].target_ns, 4_095);
    assert_eq!(sim.relaxes() - relaxes, 1);
    assert_eq!(woke, deadline + 5);
}

#[test]
fn cheap_short_waits_make_two_wait_plans() {
    // A quiet host: a 1 ms wait wakes up to 40 µs late, a ~50 µs one 3 µs
    // late, and a wait costs 2 µs. Waking early and taking a second short
    // wait is cheaper than spinning the long wait's tail.
    let sim = SimPlatform::new(0);
    sim.set_wait_cost(2_000);
    let mut s = exact(&sim);
    sim.set_default_overshoot(3_000);
    // Until the short waits' buckets have 199 samples together (enough to set
    // a margin at half the 1 % budget) their margin is the long bucket's;
    // each of a young sleeper's sleeps explores a two-wait plan and adds one.
    for i in 0..EXPLORE_YOUNG_SLEEPS {
        // The first (long) wait of every 10th sleep wakes 40 µs late.
        if i % 10 == 9 {
            sim.script_overshoots([40_000]);
        }
        s.sleep(Duration::from_millis(1));
    }
    assert!(s.estimator().established(bucket_of(200_000), 5_000));
    sim.clear_waits();
    let deadline = sim.now() + 1_000_000;
    let woke = s.sleep_until_ns(deadline);
    let w = sim.waits();
    assert_eq!(w.len(), 2, "{w:?}");
    // The short wait's margin at half the budget: the bin of 3 µs, [2816, 3071].
    assert_eq!(deadline - w[1].target_ns, 3_071);
    assert!(deadline - w[0].target_ns > 50_000);
    assert!(woke >= deadline && woke - deadline < 100);
}

#[test]
fn a_lone_outlier_does_not_move_a_learned_margin() {
    let sim = SimPlatform::new(0);
    sim.set_default_overshoot(3_000);
    let mut s = exact(&sim);
    for _ in 0..400 {
        s.sleep(Duration::from_micros(100));
    }
    let b = bucket_of(96_000);
    assert!(s.estimator().live_samples(b) >= 199);
    let normal = bin_hi(bin_of(3_000));
    assert_eq!(s.estimator().margin(b, 10_000), normal);
    // One 2 ms preemption in the OS wait: late, but the 1 % margin holds
    // (n >= 199, so the margin is the 2nd largest sample or below).
    sim.script_overshoots([2_000_000]);
    s.sleep(Duration::from_micros(100));
    assert_eq!(s.estimator().margin(b, 10_000), normal);
    assert_eq!(s.stats().late, 1);
    // At 0.1 % it is the margin until WINDOW more waits of that length pushed
    // it out.
    // (plus half of it: the view is too young for 0.1 %).
    assert_eq!(
        s.estimator().margin(b, 1_000),
        bin_hi(bin_of(2_000_000)) + bin_hi(bin_of(2_000_000)) / 2
    );
}

#[test]
fn a_margin_larger_than_the_wait_does_not_spin_forever() {
    // Heavy overshoot while waits are short: the first sleeps must learn,
    // then OS-wait again once the horizon passes, not spin indefinitely.
    let sim = SimPlatform::new(0);
    sim.set_default_overshoot(80_000);
    let mut s = exact(&sim);
    s.sleep(Duration::from_millis(1));
    sim.set_default_overshoot(2_000);
    let mut os_waits_seen = 0;
    for _ in 0..(2 * HORIZON) {
        sim.clear_waits();
        s.sleep(Duration::from_micros(60));
        os_waits_seen += sim.waits().len();
    }
    assert!(os_waits_seen > 0, "never dared an OS wait again");
    let b = bucket_of(50_000);
    assert_eq!(s.estimator().margin(b, 10_000), bin_hi(bin_of(2_000)));
}

#[test]
fn a_stricter_target_buys_its_tail_with_a_second_wait_or_a_longer_spin() {
    let run = |target: TailTarget| {
        let sim = SimPlatform::new(0);
        sim.set_wait_cost(20_000);
        let mut s = Sleeper::builder()
            .tail_target(target)
            .build_with(sim.clone());
        // 2 % of wakes are 60 µs late, the rest 26 µs.
        for i in 0..500u64 {
            sim.set_default_overshoot(if i % 50 == 49 { 60_000 } else { 26_000 });
            s.sleep(Duration::from_millis(1));
        }
        sim.set_default_overshoot(26_000);
        sim.clear_waits();
        let deadline = sim.now() + 1_000_000;
        s.sleep_until_ns(deadline);
        let w = sim.waits();
        w.iter().map(|w| deadline - w.target_ns).collect::<Vec<_>>()
    };
    let (wake, tail) = (bin_hi(bin_of(26_000)), bin_hi(bin_of(60_000)));
    // 5 %: one wait ending at the 26 µs bin (the 2 % of 60 µs wakes may be late).
    assert_eq!(run(TailTarget::RELAXED), [wake]);
    // 1 %: the 60 µs wakes must be covered: a two-wait plan, a long wait
    // ending 76.6 µs early (the 50 µs split plus the short wait's margin at
    // 0.5 %, the 26 µs bin), then the short wait ending at the 26 µs bin; a
    // long wait woken 60 µs late leaves no room for it, and spins the rest.
    // (Before a young view's headroom the young sleeper's exploring left the
    // short waits' bucket with a 60 µs wake, and the plan was one wait at
    // the 60 µs bin, then a second of the ~9 µs left.)
    assert_eq!(run(TailTarget::BALANCED), [50_000 + wake, wake]);
    // 0.1 %: 500 samples are too few for 0.1 %: one wait would end the
    // 60 µs bin plus half of it (a young view's headroom, 92 µs) early. A
    // split is cheaper: a long wait ending 111 µs early (the 50 µs split
    // plus the short wait's margin at 0.05 %, held to the long waits' 60 µs
    // bin), then the short wait ending at that bin. (Before the headroom:
    // one wait at the 60 µs bin.)
    assert_eq!(run(TailTarget::STRICT), [50_000 + tail, tail]);
}

#[test]
fn stats_count_sleeps_late_waits_spin_and_cpu() {
    let sim = SimPlatform::new(0);
    sim.set_wait_cost(1_000);
    let mut s = exact(&sim);
    // Bootstrap: one wait to 50 µs before, woke 10 µs late; a second OS wait
    // (margin: the top of 10 µs's bin [8192, 10239] plus half of it, a young
    // view's headroom: 15 358 ns), woke 10 µs late, then a spin of 5 358 ns
    // to the deadline (the spin is counted to the deadline, before the last
    // step).
    sim.script_overshoots([10_000, 10_000]);
    s.sleep_until_ns(500_000);
    let st = s.stats();
    assert_eq!(st.sleeps, 1);
    assert_eq!(st.late, 0);
    assert_eq!(st.os_waits, 2);
    assert_eq!(st.spin_ns, 5_358);
    assert_eq!(st.cpu_estimate_ns, 5_358 + 2 * 1_000);
    // An OS wait that wakes after the deadline makes a late sleep.
    sim.script_overshoots([500_000]);
    let d = sim.now() + 300_000;
    assert!(s.sleep_until_ns(d) > d);
    assert_eq!(s.stats().late, 1);
    // A past deadline is no sleep.
    s.sleep_until_ns(0);
    assert_eq!(s.stats().sleeps, 2);
    s.reset_stats();
    assert_eq!(s.stats(), SleeperStats::default());
}

#[test]
fn the_thread_cpu_clock_is_read_around_every_eighth_wait() {
    let sim = SimPlatform::new(0);
    sim.set_default_overshoot(3_000);
    sim.set_wait_cost(7_000);
    let mut s = exact(&sim);
    s.sleep(Duration::from_micros(200));
    let first = sim.waits()[0];
    let b0 = bucket_of(first.target_ns - first.issued_ns);
    assert_eq!(s.estimator().cost(b0), 7_000);
    sim.set_wait_cost(11_000);
    // Waits 2 to 8 are not sampled: every bucket still answers 7 µs.
    while s.stats().os_waits < COST_SAMPLE_EVERY {
        s.sleep(Duration::from_micros(200));
        if s.stats().os_waits <= COST_SAMPLE_EVERY {
            assert!((0..12).all(|b| s.estimator().cost(b) == 7_000));
        }
    }
    // The 9th is: its bucket averages in 11 µs, or starts from it.
    while s.stats().os_waits <= COST_SAMPLE_EVERY {
        s.sleep(Duration::from_micros(200));
    }
    let ninth = sim.waits()[COST_SAMPLE_EVERY as usize];
    let b9 = bucket_of(ninth.target_ns - ninth.issued_ns);
    let want = if b9 == b0 {
        7_000 + (11_000 - 7_000) / 4
    } else {
        11_000
    };
    assert_eq!(s.estimator().cost(b9), want);
}

#[test]
fn spin_mode_pauses_near_the_deadline() {
    let sim = SimPlatform::new(0);
    let mut s = Sleeper::builder().mode(Mode::Spin).build_with(sim.clone());
    let woke = s.sleep_until_ns(200_000);
    assert_eq!(woke, 200_000);
    // 50 µs of pause (500 steps), yields of 1 µs until 20 µs before the
    // deadline (130), then pause only (200 steps).
    assert_eq!((sim.relaxes(), sim.yields()), (700, 130));
}

#[test]
fn without_a_spin_slot_the_sleep_follows_with_a_yield_per_iteration() {
    let sim = SimPlatform::new(0);
    sim.set_default_overshoot(3_000);
    sim.set_spin_slots_free(false);
    let mut s = exact(&sim);
    let woke = s.sleep_until_ns(500_000);
    // Nothing learned yet: an OS wait ending DEFAULT_MARGIN_NS early, woken
    // 3 µs late; then one ending the learned margin (the upper edge of the
    // 3 µs sample's bin, 3 071 ns, plus half of it: one sample is a young
    // view, 4 606 ns) early; then, with no slot, two yields of 1 µs (the
    // simulated yield step) and no pause. No wait to the deadline.
    assert_eq!(DEFAULT_MARGIN_NS, 50_000);
    let m = bin_hi(bin_of(3_000)) * 3 / 2;
    assert_eq!(m, 4_606);
    let targets: Vec<u64> = sim.waits().iter().map(|w| w.target_ns).collect();
    assert_eq!(targets, [450_000, 500_000 - m]);
    assert_eq!(woke, 500_000 - m + 3_000 + 2_000);
    assert_eq!((sim.relaxes(), sim.yields()), (0, 2));
    assert_eq!((s.stats().late, s.stats().spin_ns), (0, 2_000));
}

#[test]
fn interrupt_check_can_stop_a_sleep_and_otherwise_it_resumes() {
    let sim = SimPlatform::new(0);
    let mut s = exact(&sim);
    sim.script_interrupts([10_000, 10_000]);
    let mut calls = 0;
    let r = s.sleep_until_ns_interruptible(1_000_000, &mut || {
        calls += 1;
        calls < 2
    });
    let err = r.unwrap_err();
    assert_eq!(calls, 2);
    assert_eq!(err.at_ns, 20_000);
    // Resumed sleeps keep their absolute target.
    sim.script_interrupts([5_000]);
    let woke = s.sleep_until_ns(2_000_000);
    assert!(woke >= 2_000_000);
    let w = sim.waits();
    let resumed = &w[w.len() - 2..];
    assert!(w.iter().any(|x| x.interrupted));
    assert!(resumed.iter().all(|x| x.target_ns < 2_000_000));
}

#[test]
fn long_spins_yield_and_poll_the_interrupt_check() {
    let sim = SimPlatform::new(0);
    sim.set_yield_step(1_000_000);
    let mut s = Sleeper::builder().mode(Mode::Spin).build_with(sim.clone());
    let mut polls = 0;
    let r = s.sleep_until_ns_interruptible(100_000_000, &mut || {
        polls += 1;
        polls < 3
    });
    assert!(r.is_err());
    assert_eq!(polls, 3);
    assert_eq!(sim.relaxes(), 500);
    assert!(sim.yields() > 0);
}

#[test]
fn efficient_mode_may_end_early_but_learns_the_median() {
    let sim = SimPlatform::new(0);
    sim.set_default_overshoot(55_000);
    let mut s = Sleeper::builder()
        .mode(Mode::Efficient)
        .build_with(sim.clone());
    let first = s.sleep_until_ns(100_000);
    assert_eq!(first, 155_000, "nothing learned yet: a plain OS sleep");
    let start = sim.now();
    let woke = s.sleep_until_ns(start + 200_000);
    // The median's bin is [53248, 57343]; compensated by its middle (55295),
    // the sleep ends 295 ns early, by design.
    assert_eq!(
        woke,
        start + 200_000 - 295,
        "compensated by the learned median"
    );
    assert_eq!(sim.relaxes(), 0, "efficient mode never spins");
}

#[test]
fn fresh_sleepers_start_from_the_default_margin() {
    let sim = SimPlatform::new(0);
    let mut s = exact(&sim);
    s.sleep(Duration::from_micros(300));
    let w = sim.waits();
    assert_eq!(300_000 - w[0].target_ns, DEFAULT_MARGIN_NS);
}

#[test]
fn past_deadlines_and_saturated_durations_never_panic() {
    let sim = SimPlatform::new(10_000);
    let mut s = exact(&sim);
    assert_eq!(s.sleep_until_ns(0), 10_000);
    assert!(sim.waits().is_empty());
    s.sleep(Duration::MAX);
    assert_eq!(sim.now(), u64::MAX);
}

#[test]
fn ticker_on_a_simulated_clock_keeps_its_phase() {
    let sim = SimPlatform::new(0);
    sim.set_default_overshoot(2_000);
    let sleeper = Sleeper::builder().build_with(sim.clone());
    let mut t = Ticker::with_sleeper(Duration::from_millis(1), MissedTicks::Skip, sleeper).unwrap();
    for k in 1..=50u64 {
        let tick = t.tick_ns_interruptible(&mut || true).unwrap();
        assert_eq!(tick.index, k);
        assert_eq!(tick.scheduled_ns, k * 1_000_000);
        assert!(sim.now() >= tick.scheduled_ns);
        sim.advance(300_000); // the loop body
    }
    sim.advance(2_500_000); // an overrun to ~52.8 ms: slots 51 and 52 pass
    let tick = t.tick_ns_interruptible(&mut || true).unwrap();
    assert_eq!((tick.index, tick.skipped), (52, 1));
    assert_eq!(t.stats().missed, 2);
    assert!(t.set_period(Duration::ZERO).is_err());
}

// ---- Crowds: more sleepers inside a sleep than CPUs (spec/sleep.md, Crowds) ----

/// A world of `cpus` CPUs where `others` other sleepers are inside a sleep.
fn crowd_world(cpus: usize, others: usize) -> SimPlatform {
    let sim = SimPlatform::new(0);
    sim.set_cpus(cpus);
    sim.set_other_sleepers(others);
    sim.set_default_overshoot(3_000);
    sim
}

#[test]
fn crowd_spin_cap_is_the_sleepers_share_of_half_the_cpus_less_the_wait_cost() {
    use keeptime::{crowd_spin_cap, CROWD_SPIN_DIVISOR};
    assert_eq!(CROWD_SPIN_DIVISOR, 2);
    // 64 × 1 ms on 2 CPUs: 2 · 1 ms / (2 · 64) = 15.625 µs, less 5 µs.
    assert_eq!(crowd_spin_cap(2, 64, 1_000_000, 5_000), 10_625);
    // 16 × 1 ms: 62.5 µs less 5 µs; 16 × 250 µs: the same as 64 × 1 ms.
    assert_eq!(crowd_spin_cap(16 / 8, 16, 1_000_000, 5_000), 57_500);
    assert_eq!(crowd_spin_cap(2, 16, 250_000, 5_000), 10_625);
    // A wait dearer than the share: no spin at all (saturating at 0).
    assert_eq!(crowd_spin_cap(2, 64, 1_000_000, 20_000), 0);
    // Huge lengths and CPU counts are exact, then saturate; never a panic.
    assert_eq!(crowd_spin_cap(usize::MAX, 1, u64::MAX, 0), u64::MAX);
    assert_eq!(
        crowd_spin_cap(4, 0, 1_000, 0),
        2_000,
        "0 sleepers counts as 1"
    );
    // The bound the cap exists for: n sleepers of length D spin at most
    // C / CROWD_SPIN_DIVISOR CPUs in total, whatever the margins say.
    let mut rng = Rng(0xc0de);
    for _ in 0..10_000 {
        let c = 1 + rng.below(64) as usize;
        let n = c + 1 + rng.below(500) as usize;
        let d = 1 + rng.below(100_000_000);
        let cap = crowd_spin_cap(c, n, d, rng.below(50_000));
        assert!(
            u128::from(cap) * n as u128 * 2 <= u128::from(d) * c as u128,
            "c {c} n {n} d {d} cap {cap}"
        );
    }
}

#[test]
fn a_crowd_sleep_caps_its_margin_and_pauses_only_at_the_end() {
    // 64 sleepers on 2 CPUs: nothing learned yet, so the margin would be
    // DEFAULT_MARGIN_NS (50 µs); the crowd cap (10.625 µs) wins.
    let sim = crowd_world(2, 63);
    let mut s = exact(&sim);
    let woke = s.sleep_until_ns(1_000_000);
    assert_eq!(sim.waits().len(), 1);
    assert_eq!(sim.waits()[0].target_ns, 1_000_000 - 10_625);
    // Woken at 992 375: yields (1 µs) while more than CROWD_PAUSE_NS (5 µs)
    // remain, then the pause hint (100 ns steps) to the deadline.
    assert_eq!(keeptime::CROWD_PAUSE_NS, 5_000);
    assert_eq!((sim.yields(), sim.relaxes()), (3, 47));
    assert_eq!(woke, 1_000_075);
    assert_eq!(sim.sleepers(), 0, "left the crowd count");
    // It learned the wait as always.
    assert_eq!(s.estimator().live_samples(bucket_of(989_375)), 1);
}

#[test]
fn the_same_sleep_without_a_crowd_plans_as_usual() {
    // Two sleepers on 2 CPUs are not a crowd: the usual plan, the whole
    // default margin, and the slot holder pauses for its planned spin.
    let sim = crowd_world(2, 1);
    let mut s = exact(&sim);
    let woke = s.sleep_until_ns(1_000_000);
    assert_eq!(sim.waits()[0].target_ns, 1_000_000 - DEFAULT_MARGIN_NS);
    assert_eq!(sim.yields(), 0);
    // Then the learned margin (3 071 ns plus half of it, a young view's
    // headroom: 4 606 ns), and 1 606 ns of pause: 17 steps of 100 ns.
    assert_eq!(sim.waits()[1].target_ns, 1_000_000 - 4_606);
    assert_eq!(woke, 1_000_094);
}

#[test]
fn in_a_crowd_a_learned_margin_below_the_cap_is_used_and_min_spin_is_kept() {
    let sim = crowd_world(2, 15); // 16 × 1 ms: cap 62.5 µs − cost
    let mut s = exact(&sim);
    sim.set_wait_cost(5_000);
    for k in 1..=300u64 {
        s.sleep_until_ns(k * 1_000_000);
    }
    // Every wake-up came 3 µs late: the 1 % margin is that bin's upper edge.
    let b = bucket_of(1_000_000);
    let m = s.estimator().margin(b, 10_000);
    assert_eq!(m, bin_hi(bin_of(3_000)));
    sim.clear_waits();
    s.sleep_until_ns(301_000_000);
    assert_eq!(sim.waits()[0].target_ns, 301_000_000 - m);
    // A min_spin above the cap is the caller's explicit request: kept.
    let mut s = Sleeper::builder()
        .min_spin(Duration::from_micros(100))
        .build_with(sim.clone());
    sim.clear_waits();
    let start = sim.now();
    s.sleep_until_ns(start + 1_000_000);
    assert_eq!(sim.waits()[0].target_ns, start + 1_000_000 - 100_000);
}

#[test]
fn a_crowd_follower_without_a_slot_yields_to_its_deadline() {
    let sim = crowd_world(2, 63);
    sim.set_spin_slots_free(false);
    let mut s = exact(&sim);
    let woke = s.sleep_until_ns(1_000_000);
    assert_eq!(sim.waits().len(), 1, "no OS wait to the deadline");
    assert_eq!(sim.relaxes(), 0, "no pause without a slot");
    assert_eq!(sim.yields(), 8); // 992 375 → 1 000 375 in 1 µs steps
    assert_eq!(woke, 1_000_375);
    assert_eq!(s.stats().late, 0);
}

#[test]
fn several_sleepers_in_one_world_count_themselves_into_the_crowd() {
    // One CPU; each sleeper of the world is counted while it sleeps, and
    // leaves the count on every way out, an interrupted sleep included.
    let sim = crowd_world(1, 0);
    let mut a = exact(&sim);
    let mut b = exact(&sim);
    a.sleep_until_ns(1_000_000);
    assert_eq!(sim.waits()[0].target_ns, 1_000_000 - DEFAULT_MARGIN_NS);
    assert_eq!(sim.sleepers(), 0);
    // Another thread sleeping: b's sleep is a crowd's (2 > 1 CPU), capped at
    // 1 · 1 ms / (2 · 2) − 5 µs = 245 µs, above b's learned margin.
    sim.set_other_sleepers(1);
    sim.clear_waits();
    let t0 = sim.now();
    let woke = b.sleep_until_ns(t0 + 1_000_000);
    let targets: Vec<u64> = sim.waits().iter().map(|w| w.target_ns - t0).collect();
    // The cap does not bind: b's default margin, then its learned one (as
    // ever, a sleep re-plans after an OS wait that woke early enough).
    assert_eq!(targets, [1_000_000 - DEFAULT_MARGIN_NS, 1_000_000 - 4_606]);
    assert_eq!(
        woke - t0,
        1_000_000 - 1_606 + 1_700,
        "1 606 ns left: 17 pause steps"
    );
    assert_eq!(sim.yields(), 0);
    // Interrupted in its OS wait and told to stop: it still leaves the count.
    sim.script_interrupts([1_000]);
    let t1 = sim.now();
    assert!(a
        .sleep_until_ns_interruptible(t1 + 1_000_000, &mut || false)
        .is_err());
    assert_eq!(sim.sleepers(), 0);
    // Spin mode never enters the count (the caller asked for a core).
    let mut sp = Sleeper::builder().mode(Mode::Spin).build_with(sim.clone());
    let t2 = sim.now();
    sp.sleep_until_ns(t2 + 10_000);
    assert_eq!(sim.sleepers(), 0);
}

/// The first reading of a spin in `step` ns steps from `start` that is at or
/// past `t`.
fn first_step_at_or_past(start: u64, step: u64, t: u64) -> u64 {
    start + t.saturating_sub(start).div_ceil(step) * step
}

#[test]
fn a_spin_finished_sleep_hands_off_its_last_microseconds_with_the_bookkeeping_done() {
    let sim = SimPlatform::new(0);
    sim.set_wait_cost(1_000);
    let mut s = exact(&sim);
    sim.script_overshoots([10_000, 2_000]);
    let deadline = 1_000_000;
    let woke = s.sleep_until_ns(deadline);
    // The spin starts where the last OS wait woke, in 100 ns steps.
    let start = sim.waits().last().expect("an OS wait").woke_ns;
    assert!(
        start < deadline - keeptime::HANDOFF_NS,
        "the plan leaves a spin"
    );
    assert_eq!(woke, first_step_at_or_past(start, 100, deadline));
    // The slot went back (and the stats were final) at the first step within
    // HANDOFF_NS of the deadline: the last steps ran in the outermost call.
    let handoff = first_step_at_or_past(start, 100, deadline - keeptime::HANDOFF_NS);
    let (released, relaxes_then) = sim.spin_slot_released_at().expect("the sleep spun");
    assert_eq!(released, handoff);
    assert_eq!(sim.relaxes() - relaxes_then, (woke - handoff) / 100);
    assert!(!sim.is_spinning());
    assert_eq!(sim.sleepers(), 0);
    let st = s.stats();
    assert_eq!(st.spin_ns, deadline - start); // counted to the deadline
    assert_eq!(st.late, 0);
}

#[test]
fn a_sleep_that_wakes_within_the_hand_off_or_late_leaves_nothing_behind() {
    let sim = SimPlatform::new(0);
    let mut s = exact(&sim);
    // The first sleep knows nothing: one OS wait to 50 µs before the
    // deadline. Woke 47 µs late, 3 µs remain, less than HANDOFF_NS: the slot
    // goes back at once and the outermost call spins all 30 steps.
    sim.script_overshoots([47_000]);
    assert_eq!(s.sleep_until_ns(1_000_000), 1_000_000);
    assert_eq!(sim.waits().len(), 1);
    assert_eq!(sim.spin_slot_released_at(), Some((997_000, 0)));
    assert_eq!(sim.relaxes(), 30);
    assert_eq!(s.stats().spin_ns, 3_000);
    // An OS wait that wakes past the deadline: no spin, no slot, late.
    sim.clear_waits();
    sim.set_default_overshoot(900_000);
    let d = sim.now() + 1_000_000;
    let woke = s.sleep_until_ns(d);
    assert_eq!(woke, sim.waits()[0].woke_ns);
    assert!(woke > d);
    assert_eq!(sim.relaxes(), 30);
    assert_eq!(s.stats().late, 1);
    assert_eq!(sim.sleepers(), 0);
}

#[test]
fn a_tick_is_recorded_before_its_final_spin_and_reports_the_spins_end() {
    let sim = SimPlatform::new(0);
    sim.set_spin_step(70);
    let sleeper = Sleeper::builder().build_with(sim.clone());
    let mut t = Ticker::with_sleeper(Duration::from_millis(1), MissedTicks::Skip, sleeper)
        .expect("1 ms is a valid period");
    sim.script_overshoots([10_000]);
    let tick = t
        .tick_ns_interruptible(&mut || true)
        .expect("not interrupted");
    assert_eq!(tick.scheduled_ns, 1_000_000);
    let start = sim.waits().last().expect("an OS wait").woke_ns;
    let end = first_step_at_or_past(start, 70, 1_000_000);
    assert_eq!(sim.now(), end);
    // The tick reports where the final spin ended,
    assert_eq!(tick.lateness_ns, end - 1_000_000);
    // while the schedule recorded the slot at its deadline, before that spin.
    assert_eq!(t.stats().worst_lateness_ns, 0);
    assert_eq!(t.stats().ticks, 1);
}

#[test]
fn a_young_sleeper_explores_every_sleep_then_every_eighth() {
    for seq in 1..=EXPLORE_YOUNG_SLEEPS {
        assert!(explores(seq), "{seq}");
    }
    let later: Vec<u64> = (EXPLORE_YOUNG_SLEEPS + 1..=EXPLORE_YOUNG_SLEEPS + 3 * EXPLORE_EVERY)
        .filter(|&q| explores(q))
        .collect();
    assert_eq!(later, vec![264, 272, 280]);
}

#[test]
fn a_fresh_sleeper_takes_two_wait_plans_within_its_first_few_hundred_sleeps() {
    // Every OS wait wakes 3 µs late and costs 2 µs, except the long wait of
    // every 10th sleep, 40 µs late: one wait, then a 41 µs spin, meets 1 %;
    // a long wait and a short one ending 3 µs before the deadline is cheaper,
    // once the short wait's bucket can be trusted at 0.5 %.
    let sim = SimPlatform::new(0);
    sim.set_wait_cost(2_000);
    sim.set_default_overshoot(3_000);
    let mut s = exact(&sim);
    let mut short_margin = Vec::new();
    for i in 1..=400u64 {
        if i % 10 == 0 {
            sim.script_overshoots([40_000]);
        }
        sim.clear_waits();
        let deadline = sim.now() + 1_000_000;
        s.sleep_until_ns(deadline);
        let w = sim.waits();
        // The sleeps whose long wait woke 40 µs late plan their short wait
        // from a shorter bucket: left out.
        if i % 10 != 0 {
            short_margin.push((i, (w.len() == 2).then(|| deadline - w[1].target_ns)));
        }
    }
    // The young sleeper explores on every sleep; each short wait adds a
    // sample to its bucket, and a pool of neighbouring short buckets is
    // trusted at 0.5 % once it holds 199 samples together (the largest is
    // then the margin). After sleep 221, every sleep is a two-wait plan whose
    // short wait ends at the learned 3 µs margin's bin edge, 3 071 ns before
    // the deadline.
    let last_other = short_margin.iter().rfind(|(_, m)| *m != Some(3_071));
    assert_eq!(last_other.map(|(i, _)| *i), Some(221));
    assert!(s.estimator().established(bucket_of(200_000), 5_000));
}

#[test]
fn a_young_bucket_is_answered_by_its_pooled_neighbours() {
    use keeptime::MarginEstimator;
    let mut e = MarginEstimator::new();
    e.begin_sleep();
    for _ in 0..150 {
        e.observe(50_000, 3_000); // bucket 2, bin [2816, 3071]
    }
    for _ in 0..60 {
        e.observe(100_000, 5_000); // bucket 3, bin [4608, 5119]
    }
    // At 1 % bucket 3's own 60 samples cannot set one aside; with bucket 2's
    // 150 the pool of buckets 2-4 has 210, and its quantile is bucket 3's
    // samples' bin (at most 2 of 210 may lie above).
    assert!(!e.established(4, 10_000) || e.samples(4, 10_000) == 210);
    assert_eq!(e.samples(3, 10_000), 210);
    assert!(e.established(3, 10_000));
    assert_eq!(e.margin(3, 10_000), bin_hi(bin_of(5_000)));
    // At 0.1 % 210 samples are too few even pooled: not established, the
    // margin is their maximum plus half of it (a young view's headroom).
    assert!(!e.established(3, 1_000));
    assert_eq!(e.margin(3, 1_000), bin_hi(bin_of(5_000)) * 3 / 2);
    // Bucket 2 has enough of its own at 1 %: its own samples answer.
    assert_eq!(e.samples(2, 10_000), 150);
    assert_eq!(e.margin(2, 10_000), bin_hi(bin_of(3_000)));
    // A bucket with no live neighbour borrows from its source alone.
    assert_eq!(e.samples(8, 10_000), 60);
    assert!(!e.established(8, 10_000));
}

#[test]
fn sleeps_on_unestablished_margins_are_counted_unproven() {
    let sim = SimPlatform::new(0);
    sim.set_wait_cost(2_000);
    sim.set_default_overshoot(3_000);
    let mut strict = Sleeper::builder()
        .tail_target(TailTarget::STRICT)
        .build_with(sim.clone());
    // At 0.1 % a margin needs 1 000 samples.
    let mut k = 0;
    while !strict.estimator().established(bucket_of(990_000), 1_000) {
        strict.sleep(Duration::from_millis(1));
        k += 1;
    }
    // Every sleep planned before the long waits' bucket (above
    // POOL_MAX_BUCKET, so on its own samples) reached 999 is unproven
    // ((999 + 1) · 0.1 % = 1); none after it.
    assert_eq!(strict.stats().unproven_sleeps, k);
    assert_eq!(k, 999);
    // Later, only a sleep that explores a young short bucket's two-wait plan
    // (every 8th) rests on an unproven margin.
    for _ in 0..16 {
        strict.sleep(Duration::from_millis(1));
    }
    let explored = (k + 1..=k + 16).filter(|&q| explores(q)).count() as u64;
    assert_eq!(explored, 2);
    assert_eq!(strict.stats().unproven_sleeps, k + explored);
    assert_eq!(strict.stats().late, 0);
}

#[test]
fn a_binding_lead_plans_its_waits_that_much_earlier_and_hands_off_that_early() {
    let sim = SimPlatform::new(0);
    sim.set_wait_cost(1_000);
    let mut s = exact(&sim);
    let lead = 30_000;
    // Every OS wait is planned for the hand-off point, the lead before the
    // deadline, so a wake-up within its margin leaves the binding its whole
    // lead. A fresh sleeper's first wait ends its default margin (50 µs)
    // before that point and wakes 2 µs late; the second ends the margin that
    // one wake-up gives (its bin's top, 2 047 ns, plus half of it as a young
    // view's headroom: 3 070 ns) before it and wakes on time.
    sim.script_overshoots([2_000, 0]);
    let deadline = 1_000_000;
    let handoff = s
        .sleep_until_ns_to_handoff_with_lead(deadline, lead, &mut || true)
        .expect("not interrupted");
    let waits = sim.waits();
    let targets: Vec<u64> = waits.iter().map(|w| w.target_ns).collect();
    let handoff_point = deadline - lead;
    assert_eq!(
        targets,
        [
            handoff_point - keeptime::estimate::DEFAULT_MARGIN_NS,
            handoff_point - 3_070
        ]
    );
    let start = waits[1].woke_ns;
    assert_eq!(start, handoff_point - 3_070);
    // The spin handed off at its first step within the lead of the deadline,
    // with the slot given back and the spin counted to the deadline.
    let at = first_step_at_or_past(start, 100, deadline - lead);
    assert_eq!(
        handoff,
        keeptime::Handoff {
            now: at,
            until: deadline
        }
    );
    assert_eq!(sim.spin_slot_released_at().map(|(t, _)| t), Some(at));
    assert_eq!(s.stats().spin_ns, deadline - start);
    assert_eq!(s.stats().late, 0);
    assert_eq!(
        handoff.finish(&sim),
        first_step_at_or_past(start, 100, deadline)
    );
    // The lead was for that sleep only: the next hands off HANDOFF_NS early.
    let d2 = sim.now() + 1_000_000;
    sim.script_overshoots([2_000]);
    let h2 = s.sleep_to_handoff(d2);
    assert!(h2.until == d2 && d2 - h2.now <= keeptime::HANDOFF_NS);
}

/// A sleeper started from a profile plans its first sleep on the profile's
/// wake-ups (a margin of a few µs), where a fresh one has only the default
/// margin; both are never early.
#[test]
fn a_profile_sets_the_first_sleeps_margin() {
    use keeptime::profile::{Fingerprint, Profile};
    // What an earlier run learned: 1 ms sleeps' OS waits wake 3-4 µs late.
    let earlier = SimPlatform::new(1_000);
    earlier.set_default_overshoot(3_500);
    let mut first = exact(&earlier);
    for _ in 0..400 {
        let d = earlier.now() + 1_000_000;
        assert!(first.sleep_until_ns(d) >= d);
    }
    let profile = first.profile();
    let text = profile.to_text();
    let profile = Profile::parse(&text).unwrap();
    profile.check_machine(&Fingerprint::this_machine()).unwrap();

    let plan_of_first_sleep = |p: Option<&Profile>| {
        let sim = SimPlatform::new(5_000_000);
        sim.set_default_overshoot(3_500);
        let mut b = Sleeper::builder().mode(Mode::Exact);
        if let Some(p) = p {
            b = b.profile(p);
        }
        let mut s = b.build_with(sim.clone());
        let deadline = sim.now() + 1_000_000;
        assert!(s.sleep_until_ns(deadline) >= deadline);
        let w = sim.waits()[0];
        (deadline - w.target_ns, s.stats().os_waits)
    };
    let (fresh_margin, _) = plan_of_first_sleep(None);
    assert_eq!(fresh_margin, DEFAULT_MARGIN_NS);
    let (margin, waits) = plan_of_first_sleep(Some(&profile));
    let learned = first
        .estimator()
        .margin(bucket_of(1_000_000 - 4_000), 10_000);
    assert_eq!(learned, bin_hi(bin_of(3_500)));
    assert_eq!(margin, learned);
    assert_eq!(waits, 1);
}
