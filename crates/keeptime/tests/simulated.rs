//! Decision logic on a simulated clock: scripted OS overshoots, exact assertions.

use keeptime::estimate::{bucket_of, DEFAULT_MARGIN_NS, HORIZON};
use keeptime::sim::SimPlatform;
use keeptime::{MissedTicks, Mode, Sleeper, Ticker, SPLIT_NS};
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
    let mut s = exact(&sim);
    for _ in 0..10 {
        s.sleep(Duration::from_millis(1));
    }
    sim.clear_waits();
    let relaxes = sim.relaxes();
    let deadline = sim.now() + 1_000_000;
    let woke = s.sleep_until_ns(deadline);
    // Long wait to deadline - (margin + SPLIT), short wait to deadline - margin,
    // then a spin of margin - overshoot. A steady 4 µs overshoot has no
    // spread: margin = 4000 + 2·0 + 1000, spin 1000 ns = 10 steps.
    let waits = sim.waits();
    assert_eq!(waits.len(), 2);
    assert_eq!(deadline - waits[0].target_ns, 5_000 + SPLIT_NS);
    assert_eq!(deadline - waits[1].target_ns, 5_000);
    assert_eq!(sim.relaxes() - relaxes, 10);
    assert_eq!(woke, deadline);
}

#[test]
fn outliers_stop_costing_spin_after_the_horizon() {
    let sim = SimPlatform::new(0);
    sim.set_default_overshoot(3_000);
    let mut s = exact(&sim);
    for _ in 0..40 {
        s.sleep(Duration::from_micros(100));
    }
    let b = bucket_of(96_000);
    let normal = 3_000 + 1_000;
    assert_eq!(s.estimator().margin(b), normal);
    // One 2 ms preemption in the final OS wait changes nothing.
    sim.script_overshoots([2_000_000]);
    s.sleep(Duration::from_micros(100));
    assert_eq!(s.estimator().margin(b), normal);
    // Four of them in a row (the machine got loaded) are followed.
    for _ in 0..3 {
        sim.script_overshoots([2_000_000]);
        s.sleep(Duration::from_micros(100));
    }
    assert!(s.estimator().margin(b) > 2_000_000);
    // While they are live their bucket is avoided (shorter OS waits are used),
    // so they expire by the horizon, not by new samples.
    for _ in 0..HORIZON {
        s.sleep(Duration::from_micros(100));
    }
    assert_eq!(s.estimator().margin(b), normal);
    // And the spin is short again: margin - overshoot = 1 µs = 10 steps.
    let relaxes = sim.relaxes();
    s.sleep(Duration::from_micros(100));
    assert_eq!(sim.relaxes() - relaxes, 10);
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
    assert_eq!(s.estimator().margin(b), 2_000 + 1_000);
}

#[test]
fn without_a_spin_slot_the_sleep_ends_with_an_os_wait() {
    let sim = SimPlatform::new(0);
    sim.set_default_overshoot(3_000);
    sim.set_spin_slots_free(false);
    let mut s = exact(&sim);
    let relaxes = sim.relaxes();
    let woke = s.sleep_until_ns(500_000);
    assert!(woke >= 500_000);
    assert_eq!(sim.relaxes(), relaxes, "spun without a slot");
    let last = *sim.waits().last().unwrap();
    assert_eq!(last.target_ns, 500_000);
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
    assert_eq!(woke, start + 200_000, "compensated by the learned median");
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

#[test]
fn finish_spins_under_a_slot_or_waits_to_the_deadline_and_learns_nothing() {
    let sim = SimPlatform::new(0);
    let mut s = exact(&sim);
    // A slot is free: a planned 80 µs spin, all with the pause hint, no OS wait.
    let woke = s
        .finish_until_ns_interruptible(80_000, &mut || true)
        .unwrap();
    assert_eq!(woke, 80_000);
    assert!(sim.waits().is_empty());
    assert_eq!((sim.relaxes(), sim.yields()), (800, 0));
    assert!(!sim.is_spinning(), "spin slot leaked");
    // No slot: one OS wait straight to the deadline, never early.
    sim.set_spin_slots_free(false);
    sim.set_default_overshoot(3_000);
    let woke = s
        .finish_until_ns_interruptible(100_000, &mut || true)
        .unwrap();
    assert_eq!(woke, 103_000);
    assert_eq!(sim.waits().len(), 1);
    assert_eq!(sim.waits()[0].target_ns, 100_000);
    assert_eq!(
        s.estimator().sleeps(),
        0,
        "the final phase alone learns nothing"
    );
    // A past deadline returns at once.
    assert_eq!(
        s.finish_until_ns_interruptible(0, &mut || true).unwrap(),
        103_000
    );
}
