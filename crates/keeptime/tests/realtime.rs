//! Real clock, real OS: these tests assert only what must always hold (never
//! early, every thread finishes, no drift). Accuracy and CPU are measured by
//! the benchmarks, never asserted here: the machines are shared and noisy.

use keeptime::{os, MissedTicks, Mode, Sleeper, Ticker};
use std::time::{Duration, Instant};

#[test]
fn free_functions_never_return_early() {
    for i in 0..300u64 {
        let d = Duration::from_nanos((i * 7_919) % 400_000);
        let start = Instant::now();
        let deadline = start + d;
        keeptime::sleep(d);
        assert!(Instant::now() >= deadline, "sleep({d:?}) returned early");
        let deadline = Instant::now() + d;
        keeptime::sleep_until(deadline);
        assert!(Instant::now() >= deadline, "sleep_until returned early");
    }
}

#[test]
fn monotonic_ns_deadlines_are_never_early_in_both_clocks() {
    let mut s = Sleeper::new();
    for i in 0..200u64 {
        let deadline = os::monotonic_ns() + 1_000 + (i * 3_331) % 250_000;
        let woke = s.sleep_until_ns(deadline);
        assert!(woke >= deadline);
        assert!(os::monotonic_ns() >= deadline);
    }
}

#[test]
fn spin_mode_never_returns_early() {
    let mut s = Sleeper::builder().mode(Mode::Spin).build();
    for i in 0..100u64 {
        let deadline = Instant::now() + Duration::from_nanos(500 + i * 900);
        s.sleep_until(deadline);
        assert!(Instant::now() >= deadline);
    }
}

#[test]
fn past_and_saturated_deadlines_return_without_panicking() {
    let past = Instant::now() - Duration::from_millis(5);
    keeptime::sleep_until(past);
    keeptime::sleep(Duration::ZERO);
    let mut s = Sleeper::new();
    assert!(s.sleep_until_ns(0) > 0);
}

/// More sleepers than cores: nobody starves, nobody returns early.
#[test]
fn sixteen_threads_sleeping_1ms_all_finish_never_early() {
    let threads: Vec<_> = (0..16)
        .map(|t| {
            std::thread::spawn(move || {
                let mut early = 0u32;
                for i in 0..100u64 {
                    let d = Duration::from_micros(1_000 + (t * 37 + i * 11) % 200);
                    let deadline = Instant::now() + d;
                    keeptime::sleep_until(deadline);
                    if Instant::now() < deadline {
                        early += 1;
                    }
                }
                early
            })
        })
        .collect();
    for h in threads {
        assert_eq!(h.join().expect("a sleeping thread panicked"), 0);
    }
}

#[test]
fn ticker_deadlines_never_drift() {
    let period = Duration::from_micros(500);
    let mut t = Ticker::with_missed(period, MissedTicks::Skip).unwrap();
    let first = t.tick();
    let mut last_index = first.index;
    let mut skipped = first.skipped;
    for _ in 0..200 {
        let tick = t.tick();
        skipped += tick.skipped;
        assert!(Instant::now() >= tick.scheduled);
        assert!(tick.index > last_index);
        // Deadlines are start + k·period exactly, however late each tick was.
        let k = u32::try_from(tick.index - first.index).unwrap();
        let expected = first.scheduled + period * k;
        let diff = if tick.scheduled > expected {
            tick.scheduled - expected
        } else {
            expected - tick.scheduled
        };
        assert!(diff <= Duration::from_nanos(1), "drifted by {diff:?}");
        last_index = tick.index;
    }
    let stats = t.stats();
    assert_eq!(stats.ticks, 201);
    // Every slot is either ticked or reported skipped: the last index accounts for all.
    assert_eq!(stats.skipped, skipped);
    assert_eq!(
        last_index - first.index + 1,
        stats.ticks + stats.skipped - first.skipped
    );
}

#[cfg(target_os = "linux")]
#[test]
fn timer_slack_is_set_for_waiting_threads_unless_opted_out() {
    std::thread::spawn(|| {
        let before = os::timer_slack_ns().unwrap();
        let mut s = Sleeper::builder().timer_slack(false).build();
        s.sleep(Duration::from_micros(10));
        assert_eq!(os::timer_slack_ns().unwrap(), before);
        // A sleep whose deadline is still ahead when the sleeper starts (the
        // first call also creates the thread's sleeper, which takes µs).
        keeptime::sleep(Duration::from_millis(1));
        assert_eq!(os::timer_slack_ns().unwrap(), 1);
    })
    .join()
    .unwrap();
    assert!(os::set_timer_slack_ns(0).is_err());
}
