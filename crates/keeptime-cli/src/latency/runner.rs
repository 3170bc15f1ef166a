//! The measuring loops, one per method, each on its own thread.
//!
//! Every loop reads the clock once (`start`), waits for `start + k·interval`
//! and records `woke − deadline` into storage allocated before the loop.
//! After an overrun the next deadline is the first one after the wake-up
//! ([`next_deadline`], cyclictest's rule), except for the keeptime methods,
//! whose `Ticker` (`MissedTicks::Skip`) delivers the latest passed slot at once.

use super::Method;
use keeptime::{os, MissedTicks, Mode, Sleeper, Ticker};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// What the live line reads while a thread runs. Aligned to its own cache
/// lines so that threads measuring side by side never share one.
#[derive(Debug)]
#[repr(align(128))]
pub struct Live {
    /// Largest latency since the live line last looked (ns).
    pub current_max: AtomicI64,
    /// Largest latency so far (ns).
    pub worst_max: AtomicI64,
    /// Samples so far.
    pub samples: AtomicU64,
}

impl Default for Live {
    fn default() -> Self {
        Live {
            current_max: AtomicI64::new(i64::MIN),
            worst_max: AtomicI64::new(i64::MIN),
            samples: AtomicU64::new(0),
        }
    }
}

impl Live {
    fn record(&self, e: i64) {
        self.current_max.fetch_max(e, Ordering::Relaxed);
        self.worst_max.fetch_max(e, Ordering::Relaxed);
        self.samples.fetch_add(1, Ordering::Relaxed);
    }
}

/// One thread's measurements.
#[derive(Clone, Debug, Default)]
pub struct ThreadRun {
    /// Latencies in sample order, ns.
    pub errors: Vec<i64>,
    /// Deadlines that passed with no wake-up for them.
    pub skipped: u64,
    /// Thread CPU time over the run, ns.
    pub cpu_ns: u64,
    /// From `start` to the last wake-up, ns.
    pub wall_ns: u64,
    /// The thread's timer slack at the end of the run.
    pub timer_slack_ns: Option<u64>,
}

/// cyclictest's rule after a wake-up at `now` for deadline `next`: the
/// following deadline is `next + interval`, advanced by whole intervals while
/// `now` is past it. Returns it and how many deadlines were skipped.
pub fn next_deadline(next: u64, interval: u64, now: u64) -> (u64, u64) {
    let mut following = next.saturating_add(interval);
    if now <= following {
        return (following, 0);
    }
    // Skip every deadline strictly before `now` (cyclictest: while now > next).
    let behind = now - following;
    let skip = behind.div_ceil(interval);
    following = following.saturating_add(skip.saturating_mul(interval));
    (following, skip)
}

/// Samples to preallocate for a run (growth past it only on a clock far off).
fn capacity(interval: u64, run_ns: u64) -> usize {
    let n = run_ns / interval + 16;
    n.min(8 << 20) as usize
}

/// Measures `method` on the calling thread for `run_ns` (or until `stop`).
pub fn measure(
    method: Method,
    interval: u64,
    run_ns: u64,
    live: &Live,
    stop: &AtomicBool,
) -> ThreadRun {
    let mut run = ThreadRun {
        errors: Vec::with_capacity(capacity(interval, run_ns)),
        ..ThreadRun::default()
    };
    let cpu0 = os::thread_cpu_ns();
    let (start, last) = match method {
        Method::ClockNanosleep | Method::Spin => deadline_loop(
            method == Method::Spin,
            interval,
            run_ns,
            live,
            stop,
            &mut run,
        ),
        Method::Keeptime | Method::KeeptimeEfficient => {
            let mode = if method == Method::Keeptime {
                Mode::Exact
            } else {
                Mode::Efficient
            };
            ticker_loop(mode, interval, run_ns, live, stop, &mut run)
        }
    };
    run.cpu_ns = os::thread_cpu_ns().saturating_sub(cpu0);
    run.wall_ns = last.saturating_sub(start);
    run.timer_slack_ns = os::timer_slack_ns().ok();
    run
}

fn deadline_loop(
    spin: bool,
    interval: u64,
    run_ns: u64,
    live: &Live,
    stop: &AtomicBool,
    run: &mut ThreadRun,
) -> (u64, u64) {
    let start = os::monotonic_ns();
    let end = start.saturating_add(run_ns);
    let mut next = start.saturating_add(interval);
    let mut last = start;
    while next <= end && !stop.load(Ordering::Relaxed) {
        let now = if spin {
            loop {
                let t = os::monotonic_ns();
                if t >= next {
                    break t;
                }
                std::hint::spin_loop();
            }
        } else {
            // A signal (Ctrl-C) interrupts the wait: resume toward the same deadline.
            while let os::OsWake::Interrupted = os::wait_until_ns(next) {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
            }
            os::monotonic_ns()
        };
        let e = now as i64 - next as i64;
        run.errors.push(e);
        live.record(e);
        last = now;
        let (following, skipped) = next_deadline(next, interval, now);
        next = following;
        run.skipped += skipped;
    }
    (start, last)
}

fn ticker_loop(
    mode: Mode,
    interval: u64,
    run_ns: u64,
    live: &Live,
    stop: &AtomicBool,
    run: &mut ThreadRun,
) -> (u64, u64) {
    let sleeper = Sleeper::builder().mode(mode).build();
    let start = os::monotonic_ns();
    let end = start.saturating_add(run_ns);
    let mut ticker =
        match Ticker::with_sleeper(Duration::from_nanos(interval), MissedTicks::Skip, sleeper) {
            Ok(t) => t,
            // Unreachable: the interval was checked to be positive.
            Err(_) => return (start, start),
        };
    let start = ticker
        .schedule()
        .next_deadline_ns()
        .saturating_sub(interval);
    let mut last = start;
    let mut keep_going = || !stop.load(Ordering::Relaxed);
    while ticker.schedule().next_deadline_ns() <= end && keep_going() {
        let Ok(tick) = ticker.tick_ns_interruptible(&mut keep_going) else {
            break;
        };
        let now = os::monotonic_ns();
        let e = now as i64 - tick.scheduled_ns as i64;
        run.errors.push(e);
        live.record(e);
        run.skipped += tick.skipped;
        last = now;
    }
    (start, last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passed_deadlines_are_skipped_like_cyclictest() {
        // On time: the next one.
        assert_eq!(next_deadline(1_000, 1_000, 1_020), (2_000, 0));
        // Exactly at the next deadline: not past it, so it is waited for (returns at once).
        assert_eq!(next_deadline(1_000, 1_000, 2_000), (2_000, 0));
        // 1 ns past it: skipped.
        assert_eq!(next_deadline(1_000, 1_000, 2_001), (3_000, 1));
        // 2.93 intervals late (cyclictest's thread 1 above: 2 deadlines skipped).
        assert_eq!(next_deadline(1_000, 1_000, 3_930), (4_000, 2));
        assert_eq!(next_deadline(1_000, 1_000, 4_000), (4_000, 2));
        assert_eq!(next_deadline(u64::MAX - 5, 10, u64::MAX), (u64::MAX, 0));
    }

    #[test]
    fn a_short_run_samples_every_deadline_and_ends() {
        // Invariants only: it ends, samples are never early, one per deadline.
        let live = Live::default();
        let stop = AtomicBool::new(false);
        let run = measure(Method::ClockNanosleep, 1_000_000, 20_000_000, &live, &stop);
        // Every deadline up to the end is sampled or skipped (a late last wake-up
        // may also skip deadlines past the end).
        assert!(run.errors.len() <= 20 && run.errors.len() as u64 + run.skipped >= 20);
        assert!(run.errors.iter().all(|&e| e >= 0));
        assert_eq!(
            live.samples.load(Ordering::Relaxed),
            run.errors.len() as u64
        );
        let run = measure(Method::Keeptime, 1_000_000, 10_000_000, &live, &stop);
        assert!(run.errors.iter().all(|&e| e >= 0));
        assert!(!run.errors.is_empty());
    }

    #[test]
    fn stop_ends_at_once() {
        let live = Live::default();
        let stop = AtomicBool::new(true);
        for m in Method::ALL {
            let run = measure(m, 1_000_000, 3_600_000_000_000, &live, &stop);
            assert!(run.errors.is_empty());
        }
    }
}
