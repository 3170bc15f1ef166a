//! The waiter's decisions, lead, capacity and admission on simulated clocks
//! and scripted executors, with exact assertions.

use super::*;
use crate::estimate::bucket_of;
use crate::estimate::DEFAULT_MARGIN_NS;
use crate::MarginEstimator;

const MS: u64 = 1_000_000;

#[test]
fn past_or_close_deadlines_finish_in_the_poll() {
    for state in [
        TimerState::Unarmed,
        TimerState::Armed,
        TimerState::Fired { lead_ns: 50_000 },
    ] {
        assert_eq!(
            next_step(MS, MS, state, 50_000, FINISH_SPIN_NS, false),
            Step::Done
        );
        assert_eq!(
            next_step(MS + 1, MS, state, 50_000, FINISH_SPIN_NS, false),
            Step::Done
        );
        assert_eq!(
            next_step(
                MS - FINISH_SPIN_NS,
                MS,
                state,
                50_000,
                FINISH_SPIN_NS,
                false
            ),
            Step::Spin
        );
        assert_eq!(
            next_step(MS - 1, MS, state, 50_000, FINISH_SPIN_NS, false),
            Step::Spin
        );
    }
}

#[test]
fn first_poll_arms_unless_the_lead_covers_the_rest() {
    let s = TimerState::Unarmed;
    assert_eq!(
        next_step(0, MS, s, 30_000, FINISH_SPIN_NS, false),
        Step::Arm { lead_ns: 30_000 }
    );
    assert_eq!(
        next_step(MS - 30_000, MS, s, 30_000, FINISH_SPIN_NS, false),
        Step::Yield
    );
    assert_eq!(
        next_step(MS - 30_001, MS, s, 30_000, FINISH_SPIN_NS, false),
        Step::Arm { lead_ns: 30_000 }
    );
    // The lead is capped.
    assert_eq!(
        next_step(0, 10 * MS, s, 5 * MS, FINISH_SPIN_NS, false),
        Step::Arm {
            lead_ns: MAX_LEAD_NS
        }
    );
}

#[test]
fn fired_timers_yield_within_their_lead_and_rearm_when_woken_far_too_early() {
    let fired = TimerState::Fired { lead_ns: 40_000 };
    assert_eq!(
        next_step(MS - 40_000, MS, fired, 10_000, FINISH_SPIN_NS, false),
        Step::Yield
    );
    assert_eq!(
        next_step(MS - 5_000, MS, fired, 10_000, FINISH_SPIN_NS, false),
        Step::Yield
    );
    assert_eq!(
        next_step(MS - 40_001, MS, fired, 10_000, FINISH_SPIN_NS, false),
        Step::Arm { lead_ns: 10_000 }
    );
    assert_eq!(
        next_step(0, MS, TimerState::Armed, 10_000, FINISH_SPIN_NS, false),
        Step::Wait
    );
    // An event loop with a 25 µs round trip spins the last 25 µs instead.
    assert_eq!(
        next_step(MS - 25_000, MS, fired, 10_000, 25_000, false),
        Step::Spin
    );
    assert_eq!(
        next_step(MS - 25_001, MS, fired, 10_000, 25_000, false),
        Step::Yield
    );
    let mut w = PreciseWait::new(MS);
    w.set_finish_spin_ns(u64::MAX);
    assert_eq!(w.finish_spin_ns, MAX_FINISH_SPIN_NS);
    w.set_finish_spin_ns(0);
    assert_eq!(w.finish_spin_ns, FINISH_SPIN_NS);
}

#[test]
fn the_lead_is_the_core_margin_of_the_observed_latencies() {
    let lat = WakeLatency::new();
    assert_eq!(lat.lead_ns(MS), DEFAULT_MARGIN_NS);
    assert_eq!(lat.arm(MS), DEFAULT_MARGIN_NS);
    // Eight wake-ups through the executor, 10..17 µs after the waker fired.
    for i in 0..8 {
        lat.observe(MS, 10_000 + i * 1_000);
    }
    // n = 8 is too few to set one aside at 1 %: the largest, 17 µs, in
    // its bin [16384, 18431], plus half of it (a young view's headroom).
    assert_eq!(lat.lead_ns(MS), 18_431 + 18_431 / 2);
    let mut e = MarginEstimator::new();
    for i in 0..8 {
        e.begin_sleep();
        e.observe(MS, 10_000 + i * 1_000);
    }
    assert_eq!(lat.lead_ns(MS), e.margin(bucket_of(MS), LEAD_SHARE_PPM));
    // A huge latency is capped.
    for _ in 0..32 {
        lat.observe(MS, 900_000);
    }
    assert_eq!(lat.lead_ns(MS), MAX_LEAD_NS);
}

/// A whole sleep on a simulated executor: arm, fire at deadline − lead,
/// a scripted executor latency, then the finish; exact at every step.
#[test]
fn simulated_sleeps_learn_the_latency_and_finish_by_yield_or_spin() {
    let lat = WakeLatency::new();
    let deadline = 10 * MS;
    let mut finishes = Vec::new();
    for latency in [20_000u64; 101] {
        let now = 9 * MS; // each sleep starts 1 ms before its deadline
        let Step::Arm { lead_ns } = next_step(
            now,
            deadline,
            TimerState::Unarmed,
            lat.lead_ns(deadline - now),
            FINISH_SPIN_NS,
            false,
        ) else {
            panic!("a 1 ms sleep arms a timer");
        };
        let lead = lat.arm(deadline - now);
        assert_eq!(lead, lead_ns);
        let fired = deadline - lead;
        let resumed = fired + latency;
        lat.observe(deadline - now, resumed - fired);
        finishes.push((
            lead,
            next_step(
                resumed,
                deadline,
                TimerState::Fired { lead_ns: lead },
                lead,
                FINISH_SPIN_NS,
                false,
            ),
        ));
    }
    // First sleep: the default 50 µs lead, woken 30 µs early: yield.
    assert_eq!(finishes[0], (DEFAULT_MARGIN_NS, Step::Yield));
    // While fewer than 99 latencies are known (too few to set one aside at
    // 1 %), the lead is the top of 20 µs's bin [18432, 20479] plus half of
    // it, 30 718 ns: resumed 10.7 µs early, it yields.
    for f in &finishes[1..99] {
        assert_eq!(*f, (30_718, Step::Yield));
    }
    // From the 99th on, the bin's top: resumed 479 ns early, it spins.
    for f in &finishes[99..] {
        assert_eq!(*f, (20_479, Step::Spin));
    }
}

#[test]
fn behind_arms_coarse_instead_of_yielding_but_still_spins_the_last_microseconds() {
    let fired = TimerState::Fired { lead_ns: 40_000 };
    for state in [TimerState::Unarmed, fired] {
        assert_eq!(
            next_step(MS - 20_000, MS, state, 40_000, FINISH_SPIN_NS, true),
            Step::Arm { lead_ns: 0 }
        );
        assert_eq!(
            next_step(0, MS, state, 40_000, FINISH_SPIN_NS, true),
            Step::Arm { lead_ns: 0 }
        );
        assert_eq!(
            next_step(MS - FINISH_SPIN_NS, MS, state, 40_000, FINISH_SPIN_NS, true),
            Step::Spin
        );
        assert_eq!(
            next_step(MS, MS, state, 40_000, FINISH_SPIN_NS, true),
            Step::Done
        );
    }
    assert_eq!(
        next_step(0, MS, TimerState::Armed, 40_000, FINISH_SPIN_NS, true),
        Step::Wait
    );
    // A coarse timer fires at the deadline: its task is done on the first poll.
    assert_eq!(
        next_step(
            MS + 70_000,
            MS,
            TimerState::Fired { lead_ns: 0 },
            40_000,
            FINISH_SPIN_NS,
            false
        ),
        Step::Done
    );
}

#[test]
fn batches_fire_precise_timers_due_within_batch_ns_and_coarse_ones_when_due() {
    assert!(fires(MS, true, MS));
    assert!(fires(MS + BATCH_NS, true, MS));
    assert!(!fires(MS + BATCH_NS + 1, true, MS));
    assert!(fires(MS, false, MS));
    assert!(!fires(MS + 1, false, MS));
    assert!(fires(u64::MAX, true, u64::MAX - 1));
    assert_eq!(plan(None, None, None), None);
    assert_eq!(plan(Some(MS), None, None), Some(Plan::Precise(MS)));
    assert_eq!(
        plan(None, Some(MS), None),
        Some(Plan::Coarse(MS + COARSE_SLACK_NS))
    );
    assert_eq!(
        plan(None, Some(u64::MAX), None),
        Some(Plan::Coarse(u64::MAX))
    );
    // A coarse timer due (with its slack) just before a precise one
    // rides on its precise wait.
    assert_eq!(
        plan(Some(MS), Some(MS - MAX_LEAD_NS - COARSE_SLACK_NS), None),
        Some(Plan::Precise(MS))
    );
    assert_eq!(
        plan(Some(MS), Some(MS - MAX_LEAD_NS - COARSE_SLACK_NS - 1), None),
        Some(Plan::Coarse(MS - MAX_LEAD_NS - 1))
    );
    assert_eq!(plan(Some(MS), Some(MS), None), Some(Plan::Precise(MS)));
    assert_eq!(plan(Some(MS), Some(2 * MS), None), Some(Plan::Precise(MS)));
    // A stream of coarse timers: one coarse wake-up per COARSE_PERIOD_NS.
    assert_eq!(
        plan(None, Some(10 * MS), Some(10 * MS - 100_000)),
        Some(Plan::Coarse(11 * MS - 100_000))
    );
    assert_eq!(
        plan(None, Some(10 * MS), Some(9 * MS - COARSE_SLACK_NS)),
        Some(Plan::Coarse(10 * MS + COARSE_SLACK_NS))
    );
}

#[test]
fn only_the_first_wake_up_of_a_batch_fired_with_no_backlog_is_a_latency_sample() {
    assert!(learns_latency(true, 0));
    assert!(!learns_latency(false, 0));
    assert!(!learns_latency(true, 1));
}

#[test]
fn capacity_is_a_quarter_cpu_second_over_the_moving_cost() {
    let mut c = Capacity::new();
    assert_eq!(c.cost_ns(), DEFAULT_COST_NS);
    assert_eq!(c.per_second(), 25_000);
    assert_eq!((c.per_slot_at(0), c.per_slot_at(7)), (25, 25));
    c.observe(4_000); // the first sample replaces the default
    assert_eq!((c.cost_ns(), c.samples()), (4_000, 1));
    assert_eq!(c.per_second(), 62_500);
    // 62.5 a slot: 62 and 63 in turn.
    assert_eq!((c.per_slot_at(0), c.per_slot_at(1)), (62, 63));
    assert_eq!((0..100).map(|k| c.per_slot_at(k)).sum::<u64>(), 6_250);
    c.observe(6_000); // (15·4000 + 6000) / 16
    assert_eq!(c.cost_ns(), 4_125);
    assert_eq!(c.per_second(), 60_606);
    c.observe(u64::MAX); // a spike counts as twice the cost
    assert_eq!(c.cost_ns(), (4_125 * 15 + 8_250) / 16);
    c.observe(0); // and a dip as half
    assert_eq!(c.cost_ns(), (4_382 * 15 + 2_191) / 16);
    let cost = c.cost_ns();
    c.observe_late(); // a late precise deadline: twice the cost
    assert_eq!(c.cost_ns(), (cost * 15 + 2 * cost) / 16);
    // Costs under MIN_COST_NS count as MIN_COST_NS.
    let mut tiny = Capacity::new();
    tiny.observe(3);
    assert_eq!(tiny.cost_ns(), MIN_COST_NS);
    assert_eq!(tiny.per_second(), 250_000);
    for _ in 0..100 {
        tiny.observe(0);
    }
    assert_eq!(tiny.cost_ns(), MIN_COST_NS);
    let mut slow = Capacity::new();
    slow.observe(u64::MAX); // capped at MAX_COST_NS
    assert_eq!(slow.per_second(), 250);
    // A quarter timer a slot: one precise timer in every fourth slot.
    let slots: Vec<u64> = (0..8).map(|k| slow.per_slot_at(k)).collect();
    assert_eq!(slots, vec![0, 0, 0, 1, 0, 0, 0, 1]);
    assert_eq!(slow.per_slot_at(u64::MAX / SLOT_NS), 0);
}

#[test]
fn admission_takes_per_slot_precise_deadlines_per_slot_in_arm_order() {
    let mut a = Admission::new();
    // 2,000 deadlines 2 µs apart from 10 ms: 500 per 1 ms slot.
    let admitted: Vec<bool> = (0..2_000u64)
        .map(|i| a.try_admit(10 * MS + i * 2_000, 5))
        .collect();
    assert_eq!(admitted.iter().filter(|&&x| x).count(), 4 * 5);
    assert!(admitted[..5].iter().all(|&x| x));
    assert!(!admitted[5]);
    assert!(admitted[500]);
    assert_eq!(a.admitted(10 * MS), 5);
    assert_eq!(a.slots(), 4);
    // A dropped precise timer frees its place.
    a.release(10 * MS + 2_000);
    assert_eq!(a.admitted(10 * MS), 4);
    assert!(a.try_admit(10 * MS + 999_999, 5));
    assert!(!a.try_admit(10 * MS + 999_999, 5));
    // Slots that ended are forgotten; a full refusal leaves no empty slot.
    a.forget_before(11 * MS);
    assert_eq!(a.slots(), 3);
    assert_eq!(a.admitted(10 * MS), 0);
    assert!(!a.try_admit(50 * MS, 0));
    assert_eq!(a.slots(), 3);
    a.release(50 * MS); // nothing admitted there: no effect
    assert_eq!(a.slots(), 3);
}

/// Two rounds of 2,000 deadlines 2 µs apart on a simulated executor that
/// polls one task per 3 µs (so it falls behind): the lead learned in the
/// first round's quiet start is not fed by the queue, and the second
/// round arms with the same lead as the first.
#[test]
fn a_load_round_does_not_teach_the_next_one_a_longer_lead() {
    let lat = WakeLatency::new();
    let mut admission = Admission::new();
    let mut cap = Capacity::new();
    // A quiet warm-up: eight lone wake-ups, 12 µs each.
    for _ in 0..8 {
        lat.arm(MS);
        if learns_latency(true, 0) {
            lat.observe(MS, 12_000);
        }
    }
    let quiet_lead = lat.lead_ns(MS);
    assert_eq!(quiet_lead, 12_287 + 12_287 / 2); // the top of 12 µs's bin, plus a young view's headroom
    let mut leads = Vec::new();
    for round in 0..2u64 {
        let start = (10 + round * 10) * MS;
        let mut precise = 0;
        let mut backlog = 0u64;
        let mut free_at = 0u64; // the executor's next free instant
        for i in 0..2_000u64 {
            let deadline = start + i * 2_000;
            let lead = lat.arm(MS);
            if i == 0 {
                leads.push(lead);
            }
            if !admission.try_admit(deadline, cap.per_slot_at(deadline / SLOT_NS)) {
                continue;
            }
            precise += 1;
            let fired = deadline - lead;
            // The executor serves the wake-up after the ones before it.
            let polled = (fired + 12_000).max(free_at);
            free_at = polled + 3_000;
            let first = precise == 1;
            if learns_latency(first, backlog) {
                lat.observe(MS, polled - fired);
            }
            backlog = u64::from(polled > fired + 12_000);
            cap.observe(3_000);
        }
        admission.forget_before(start + 10 * MS);
        // 4 slots of 1 ms; from the first measured cost (3 µs) on,
        // 83⅓ precise a slot: slots 10-13 admit ⌊14·250000/3000⌋ −
        // ⌊10·250000/3000⌋ = 333, slots 20-23 admit 2000 − 1666 = 334.
        assert_eq!(precise, [333, 334][round as usize]);
    }
    assert_eq!(leads, vec![quiet_lead, quiet_lead]);
    assert_eq!(lat.lead_ns(MS), quiet_lead);
}

#[test]
fn finishing_deadlines_are_counted_while_they_live_and_share_the_threads() {
    let two = WakeLatency::with_threads(2);
    let a = two.begin_finish();
    assert_eq!(two.finishing(), 1);
    assert_eq!(a.share(60_000), 60_000);
    let b = two.begin_finish();
    assert_eq!(a.share(60_000), 60_000);
    let more: Vec<_> = (0..4).map(|_| two.begin_finish()).collect();
    assert_eq!(two.finishing(), 6);
    assert_eq!(b.share(60_000), 20_000);
    drop(more);
    drop(a);
    assert_eq!(two.finishing(), 1);
    assert_eq!(b.share(60_000), 60_000);
    drop(b);
    assert_eq!(two.finishing(), 0);

    let one_loop = WakeLatency::with_threads(1);
    let c: Vec<_> = (0..4).map(|_| one_loop.begin_finish()).collect();
    assert_eq!(c[0].share(60_000), 15_000);
    assert_eq!(two.finishing(), 0, "each executor counts its own");
    assert_eq!(WakeLatency::with_threads(0).threads(), 1);
}

/// The relay wakes from its end, at most `n` a call, each timer's last
/// waker once, and says it is empty only when it is.
#[test]
fn the_relay_wakes_at_most_n_from_its_end_each_once() {
    use super::queue::{Relay, Shared};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::task::{Wake, Waker};

    struct Count(usize, Arc<[AtomicU64; 40]>);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.1[self.0].fetch_add(1, Ordering::Relaxed);
        }
    }
    let woken = Arc::new(std::array::from_fn::<_, 40, _>(|_| AtomicU64::new(0)));
    let timers: Vec<Arc<Shared>> = (0..40)
        .map(|i| Shared::new(&Waker::from(Arc::new(Count(i, Arc::clone(&woken))))))
        .collect();
    let relay = Relay::default();
    assert!(!relay.is_pending());
    relay.wake(RELAY_BATCH); // empty: nothing
    relay.push(timers.clone());
    assert!(relay.is_pending());
    let count = |range: std::ops::Range<usize>| -> u64 {
        range.map(|i| woken[i].load(Ordering::Relaxed)).sum()
    };
    relay.wake(RELAY_BATCH);
    assert_eq!(count(0..40), RELAY_BATCH as u64);
    assert_eq!(
        count(40 - RELAY_BATCH..40),
        RELAY_BATCH as u64,
        "from the end"
    );
    assert!(relay.is_pending());
    relay.wake(usize::MAX);
    assert_eq!(count(0..40), 40);
    assert!(!relay.is_pending());
    // A timer's waker is taken when woken: waking the same timers again
    // through the relay wakes nothing twice.
    relay.push(timers);
    relay.wake(usize::MAX);
    assert_eq!(count(0..40), 40);
    assert!((0..40).all(|i| woken[i].load(Ordering::Relaxed) == 1));
}

/// A batch takes the whole prefix of a queue that `fires`, and nothing
/// after it, up to the last wake time the clock can hold.
#[test]
fn a_batch_splits_off_exactly_the_timers_that_fire() {
    use super::queue::{split_due, Shared};
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::task::{Wake, Waker};

    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    let waker = Waker::from(Arc::new(Noop));
    let queue = |wakes: &[u64]| -> BTreeMap<(u64, u64), Arc<Shared>> {
        wakes
            .iter()
            .enumerate()
            .map(|(id, &w)| ((w, id as u64), Shared::new(&waker)))
            .collect()
    };
    let keys =
        |m: &BTreeMap<(u64, u64), Arc<Shared>>| -> Vec<u64> { m.keys().map(|k| k.0).collect() };
    let now = 10_000_000;
    for precise in [true, false] {
        let last = if precise { now + BATCH_NS } else { now };
        let wakes = [0, now - 1, now, now + 1, last, last, last + 1, u64::MAX];
        let mut q = queue(&wakes);
        let due = split_due(&mut q, precise, now);
        assert!(keys(&due).iter().all(|&w| fires(w, precise, now)));
        assert!(keys(&q).iter().all(|&w| !fires(w, precise, now)));
        assert_eq!(due.len() + q.len(), wakes.len());
        assert_eq!(keys(&q).first(), Some(&(last + 1)));
    }
    // A reading at the end of the clock fires everything.
    let mut q = queue(&[1, u64::MAX - 1, u64::MAX]);
    assert_eq!(split_due(&mut q, true, u64::MAX - 1).len(), 3);
    assert!(q.is_empty());
}
