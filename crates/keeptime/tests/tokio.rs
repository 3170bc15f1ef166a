//! keeptime::tokio on real tokio runtimes. Real time: only invariants are
//! asserted (never early, everything finishes, nothing left armed, other
//! tasks make progress); the figures are `make bench-async`'s.
#![cfg(feature = "tokio")]

use keeptime::os::monotonic_ns;
use keeptime::{waiter, MissedTicks};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

/// The waiter is process-wide: tests that count its timers run one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

struct Noop;
impl Wake for Noop {
    fn wake(self: Arc<Self>) {}
}

fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
    let waker = Waker::from(Arc::new(Noop));
    Pin::new(f).poll(&mut Context::from_waker(&waker))
}

/// Waits (up to 10 s, polling) for the waiter to park; returns whether it did.
fn waiter_parks() -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if waiter::stats().idle {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

#[test]
fn sleeps_are_never_early() {
    let _g = serial();
    let rt = current_thread();
    rt.block_on(async {
        for i in 0..300u64 {
            let d = Duration::from_nanos(1_000 + (i * 7_919) % 2_000_000);
            let deadline = Instant::now() + d;
            let deadline_ns = monotonic_ns() + d.as_nanos() as u64;
            if i % 2 == 0 {
                keeptime::tokio::sleep(d).await;
                assert!(Instant::now() >= deadline, "sleep({d:?}) returned early");
            } else {
                let woke = keeptime::tokio::sleep_until_monotonic_ns(deadline_ns).await;
                assert!(
                    woke >= deadline_ns,
                    "returned {} ns early",
                    deadline_ns - woke
                );
                assert!(monotonic_ns() >= deadline_ns);
            }
        }
        let past = Instant::now() - Duration::from_millis(1);
        keeptime::tokio::sleep_until(past).await; // a past deadline completes at once
    });
    assert_eq!(waiter::stats().pending, 0);
}

fn thousand_sleeps(rt: &tokio::runtime::Runtime) {
    let start = monotonic_ns();
    let early = Arc::new(AtomicU64::new(0));
    rt.block_on(async {
        let tasks: Vec<_> = (0..1_000u64)
            .map(|i| {
                let early = Arc::clone(&early);
                // Deadlines spread over 1..21 ms, many of them close together.
                let deadline = start + 1_000_000 + (i * 20_011) % 20_000_000;
                tokio::spawn(async move {
                    let woke = keeptime::tokio::sleep_until_monotonic_ns(deadline).await;
                    if woke < deadline || monotonic_ns() < deadline {
                        early.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    assert_eq!(early.load(Ordering::Relaxed), 0, "sleeps ended early");
    assert_eq!(waiter::stats().pending, 0);
}

#[test]
fn a_thousand_concurrent_sleeps_on_current_thread() {
    let _g = serial();
    thousand_sleeps(&current_thread());
}

#[test]
fn a_thousand_concurrent_sleeps_on_multi_thread() {
    let _g = serial();
    thousand_sleeps(&multi_thread());
}

#[test]
fn dropped_sleeps_leave_nothing_armed() {
    let _g = serial();
    let before = waiter::stats();
    let mut sleeps: Vec<_> = (0..100)
        .map(|i| keeptime::tokio::sleep(Duration::from_secs(10 + i)))
        .collect();
    for s in &mut sleeps {
        assert!(poll_once(s).is_pending());
        assert!(s.is_armed());
    }
    assert_eq!(waiter::stats().pending, before.pending + 100);
    assert_eq!(waiter::stats().sleeps, before.sleeps + 100);
    drop(sleeps);
    let after = waiter::stats();
    assert_eq!(after.pending, before.pending);
    assert_eq!(after.sleeps, before.sleeps);
    assert_eq!(after.cancelled, before.cancelled + 100);
    assert!(waiter_parks(), "the waiter kept running with nothing armed");

    // Duration::MAX saturates; dropping it disarms it as well.
    let mut forever = keeptime::tokio::sleep(Duration::MAX);
    assert!(poll_once(&mut forever).is_pending());
    assert_eq!(waiter::stats().pending, 1);
    drop(forever);
    assert_eq!(waiter::stats().pending, 0);
}

#[test]
fn cancelled_tasks_and_lost_selects_leave_nothing_armed() {
    let _g = serial();
    for rt in [current_thread(), multi_thread()] {
        rt.block_on(async {
            // select!: the precise sleep loses and is dropped.
            tokio::select! {
                _ = keeptime::tokio::sleep(Duration::from_secs(30)) => panic!("cannot win"),
                _ = tokio::time::sleep(Duration::from_millis(2)) => {}
            }
            assert_eq!(waiter::stats().pending, 0);
            // An aborted task drops its sleep.
            let task = tokio::spawn(keeptime::tokio::sleep(Duration::from_secs(30)));
            while waiter::stats().pending == 0 {
                tokio::task::yield_now().await;
            }
            task.abort();
            assert!(task.await.unwrap_err().is_cancelled());
            assert_eq!(waiter::stats().pending, 0);
        });
    }
    assert!(waiter_parks());
}

#[test]
fn other_tasks_keep_running_while_100_timers_are_pending() {
    let _g = serial();
    for rt in [current_thread(), multi_thread()] {
        let counter = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicU64::new(0));
        rt.block_on(async {
            let c = Arc::clone(&counter);
            let d = Arc::clone(&done);
            let counting = tokio::spawn(async move {
                while d.load(Ordering::Relaxed) == 0 {
                    c.fetch_add(1, Ordering::Relaxed);
                    tokio::task::yield_now().await;
                }
            });
            let start = monotonic_ns();
            let sleeps: Vec<_> = (0..100u64)
                .map(|i| {
                    tokio::spawn(keeptime::tokio::sleep_until_monotonic_ns(
                        start + 5_000_000 + i * 50_000,
                    ))
                })
                .collect();
            for s in sleeps {
                let deadline_ok = s.await.unwrap();
                assert!(deadline_ok >= start + 5_000_000);
            }
            done.store(1, Ordering::Relaxed);
            counting.await.unwrap();
        });
        assert!(
            counter.load(Ordering::Relaxed) > 0,
            "the counting task starved"
        );
    }
}

#[test]
fn interval_ticks_in_order_never_early_and_skips_missed_slots() {
    let _g = serial();
    let rt = current_thread();
    rt.block_on(async {
        let period = Duration::from_millis(1);
        // Burst: every slot, in order, whatever the machine's hiccups.
        let mut iv = keeptime::tokio::interval(period, MissedTicks::Burst).unwrap();
        for k in 1..=20 {
            let tick = iv.tick().await;
            assert_eq!(tick.index, k);
            assert_eq!(tick.skipped, 0);
            assert!(Instant::now() >= tick.scheduled);
        }
        let mut iv = keeptime::tokio::interval(period, MissedTicks::Skip).unwrap();
        let first = iv.tick().await;
        // The body overruns by 3.5 periods: at least two slots are skipped.
        std::thread::sleep(period * 7 / 2);
        let late = iv.tick().await;
        assert!(late.skipped >= 2, "{late:?}");
        assert_eq!(late.index, first.index + 1 + late.skipped);
        let next = iv.tick().await;
        assert_eq!(next.index, late.index + 1 + next.skipped);
        assert!(Instant::now() >= next.scheduled);
        assert_eq!(iv.schedule().stats().ticks, 3);
    });
    assert!(matches!(
        keeptime::tokio::interval(Duration::ZERO, MissedTicks::Burst),
        Err(keeptime::Error::ZeroPeriod)
    ));
}

#[test]
fn a_dropped_tick_consumes_no_slot() {
    let _g = serial();
    let mut iv = keeptime::tokio::interval(Duration::from_secs(60), MissedTicks::Skip).unwrap();
    {
        let mut tick = Box::pin(iv.tick());
        let waker = Waker::from(Arc::new(Noop));
        assert!(tick
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        assert_eq!(waiter::stats().pending, 1);
    }
    assert_eq!(waiter::stats().pending, 0);
    assert_eq!(iv.schedule().next_index(), 1);
}

/// 1,000 tasks whose deadlines are 3 µs apart, two rounds on each runtime:
/// past the waiter's capacity most are served coarse; every task checks its
/// own clock after `.await`, all complete, nothing stays armed, and the
/// waiter's books balance.
#[test]
fn bursts_past_capacity_complete_never_early_and_balance_the_books() {
    let _g = serial();
    let relayed = waiter::stats().relayed;
    for rt in [multi_thread(), current_thread()] {
        for _round in 0..2 {
            let start = Instant::now() + Duration::from_millis(5);
            let early = Arc::new(AtomicU64::new(0));
            let done = Arc::new(AtomicU64::new(0));
            rt.block_on(async {
                let tasks: Vec<_> = (0..1_000u32)
                    .map(|i| {
                        let (early, done) = (Arc::clone(&early), Arc::clone(&done));
                        let deadline = start + Duration::from_micros(3) * i;
                        tokio::spawn(async move {
                            keeptime::tokio::sleep_until(deadline).await;
                            if Instant::now() < deadline {
                                early.fetch_add(1, Ordering::Relaxed);
                            }
                            done.fetch_add(1, Ordering::Relaxed);
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
            });
            assert_eq!(early.load(Ordering::Relaxed), 0, "sleeps ended early");
            assert_eq!(done.load(Ordering::Relaxed), 1_000);
            let s = waiter::stats();
            assert_eq!(s.pending, 0);
            assert_eq!(s.armed, s.fired + s.cancelled);
            assert_eq!(s.backlog, 0);
            assert_eq!(s.sleeps, 0, "every completed sleep left the count");
            assert!(s.coarse <= s.armed);
            assert!(waiter::capacity() >= 1);
            assert_eq!(s.capacity_per_s, waiter::capacity());
        }
    }
    // Past the capacity most of the burst is coarse, and a batch's coarse
    // timers past the first few go through the relay (how many is the
    // machine's: only that some did).
    assert!(waiter::stats().relayed > relayed, "nothing was relayed");
}

/// A relayed timer whose relaying tasks are gone is still woken: by the
/// waiter, within `RELAY_GRACE_NS` of its firing. Tasks are aborted as
/// their timers fire, so that some woken tasks never poll; the others all
/// complete, never early.
#[test]
fn relayed_timers_wake_even_when_the_relaying_tasks_are_aborted() {
    let _g = serial();
    let rt = multi_thread();
    let start = Instant::now() + Duration::from_millis(5);
    let early = Arc::new(AtomicU64::new(0));
    let relayed = waiter::stats().relayed;
    rt.block_on(async {
        let tasks: Vec<_> = (0..400u32)
            .map(|i| {
                let early = Arc::clone(&early);
                let deadline = start + Duration::from_micros(2) * i;
                tokio::spawn(async move {
                    keeptime::tokio::sleep_until(deadline).await;
                    if Instant::now() < deadline {
                        early.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        // Every third task is aborted around its deadline (or before its
        // first poll): its sleep is dropped, armed, fired or relayed.
        let mut kept = Vec::new();
        for (i, t) in tasks.into_iter().enumerate() {
            if i % 3 == 0 {
                t.abort();
            } else {
                kept.push(t);
            }
        }
        let all = async {
            for t in kept {
                t.await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(30), all)
            .await
            .expect("every kept sleep completes");
    });
    assert_eq!(early.load(Ordering::Relaxed), 0, "sleeps ended early");
    let s = waiter::stats();
    assert_eq!(s.pending, 0);
    assert_eq!(
        s.backlog, 0,
        "fired timers of aborted tasks left the backlog"
    );
    assert!(s.relayed >= relayed);
}

/// tokio's cooperative budget: a task that awaits sleeps whose deadlines have
/// passed (each completes on its first poll) yields to other tasks once its
/// budget is spent, as with `tokio::time::sleep`; without the budget it
/// would run all its sleeps before anything else. On a current-thread
/// runtime the order is the scheduler's, not the clock's: exact.
#[test]
fn ready_sleeps_spend_tokios_budget_and_let_other_tasks_run() {
    let rt = current_thread();
    rt.block_on(async {
        let other_ran = Arc::new(AtomicU64::new(0));
        let flag = other_ran.clone();
        let other = tokio::spawn(async move {
            flag.store(1, Ordering::SeqCst);
        });
        let past = monotonic_ns();
        let mut before_other = 0u64;
        for _ in 0..10_000 {
            let woke = keeptime::tokio::sleep_until_monotonic_ns(past).await;
            assert!(woke >= past);
            if other_ran.load(Ordering::SeqCst) == 0 {
                before_other += 1;
            }
        }
        other.await.unwrap();
        // tokio's budget is 128 units a poll of the task: the spawned task
        // ran after the first 128 completions, not after all 10 000.
        assert_eq!(before_other, 128);
    });
    // Outside any runtime there is no budget: every poll completes at once.
    let mut s = keeptime::tokio::sleep_until_monotonic_ns(monotonic_ns());
    for _ in 0..1_000 {
        assert!(matches!(poll_once(&mut s), Poll::Ready(_)));
        s = keeptime::tokio::sleep_until_monotonic_ns(monotonic_ns());
    }
}

/// Relayed timers that no task polls are woken by the waiter itself: 1 000
/// relaying waits in at most two slots (at least half of them coarse: a slot
/// admits at most 250 precise timers), each polled once with a counting
/// waker and never again. Every waker is called, once.
#[test]
fn relayed_timers_nobody_polls_are_woken_by_the_waiter() {
    let _g = serial();
    struct Count(Arc<AtomicU64>);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let latency = waiter::WakeLatency::new();
    let deadline = monotonic_ns() + 20_000_000;
    let relayed = waiter::stats().relayed;
    let counts: Vec<Arc<AtomicU64>> = (0..1_000).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let mut waits: Vec<_> = counts
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut w = waiter::PreciseWait::new(deadline + 1_000 * i as u64);
            w.set_relay(true);
            let waker = Waker::from(Arc::new(Count(Arc::clone(c))));
            assert!(matches!(
                w.poll(&latency, &waker),
                waiter::Progress::Pending(_)
            ));
            w
        })
        .collect();
    let until = Instant::now() + Duration::from_secs(10);
    while counts.iter().any(|c| c.load(Ordering::Relaxed) == 0) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        counts.iter().all(|c| c.load(Ordering::Relaxed) == 1),
        "every waker called once"
    );
    // Polled now, each is done, never early.
    let waker = Waker::from(Arc::new(Noop));
    for w in &mut waits {
        let d = w.deadline_ns();
        match w.poll(&latency, &waker) {
            waiter::Progress::Ready(t) => assert!(t >= d),
            waiter::Progress::Pending(_) => panic!("fired and past its deadline"),
        }
    }
    drop(waits);
    assert_eq!(waiter::stats().backlog, 0);
    assert!(waiter::stats().relayed > relayed, "nothing was relayed");
}
