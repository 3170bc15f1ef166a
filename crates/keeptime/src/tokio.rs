//! Precise timers for async code: [`sleep`], [`sleep_until`] and [`interval`]
//! futures that are never early and finish within about a microsecond of
//! their deadline, without holding an executor thread for the wait.
//! Feature `tokio`.
//!
//! `tokio::time::sleep` rounds to its timer wheel's millisecond: a 100 µs
//! sleep takes about 1 ms. These futures are woken by keeptime's process-wide
//! precise waiter ([`waiter`](crate::waiter)) a *learned* executor wake-up
//! latency before their deadline, then finish in the task: a self-wake loop
//! (other tasks run in between) and a spin of at most
//! [`FINISH_SPIN_NS`](crate::waiter::FINISH_SPIN_NS) (4 µs) in the last poll.
//!
//! ```
//! use keeptime::MissedTicks;
//! use std::time::{Duration, Instant};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), keeptime::Error> {
//! keeptime::tokio::sleep(Duration::from_micros(250)).await;     // never early, µs-precise
//!
//! let deadline = Instant::now() + Duration::from_millis(1);
//! keeptime::tokio::sleep_until(deadline).await;
//! assert!(Instant::now() >= deadline);
//!
//! let mut iv = keeptime::tokio::interval(Duration::from_millis(1), MissedTicks::Skip)?;
//! for _ in 0..3 {
//!     let tick = iv.tick().await;             // slot 1, 2, 3 at start + k·1 ms
//!     let _ = (tick.index, tick.lateness, tick.skipped);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Contract and costs
//!
//! * **Never early**: a future completes only on a monotonic-clock reading
//!   at or past its deadline ([`Instant`]'s clock).
//! * **Holds an executor thread for a few µs per poll at most**: the waiting
//!   is done by the waiter thread; the task's last poll spins at most 4 µs;
//!   before that, a task woken early by up to the learned lead wakes itself
//!   and yields, so other tasks run between its polls. A poll may also wake
//!   up to [`RELAY_BATCH`](crate::waiter::RELAY_BATCH) (16) other sleeps'
//!   coarse timers that fired (the relay, below): a µs or two.
//! * **Cancellation**: dropping a future disarms its timer at once; the
//!   waiter re-plans and parks when nothing is armed. [`Interval::tick`] is
//!   cancel-safe: a dropped `tick()` consumes no slot.
//! * **CPU**: per sleep, the waiter's own margin spin (a few µs, as
//!   [`keeptime::sleep`](crate::sleep)) plus the task's cooperative finish
//!   (the learned lead, capped at 200 µs); one waiter thread for the process.
//! * **Under load**: the waiter serves up to its stated capacity
//!   ([`waiter::capacity`](crate::waiter::capacity), deadlines per second)
//!   precisely; past it, and while the executor is behind, sleeps are served
//!   *coarse*, and past twice it (counting concurrent sleeps only) all but a
//!   trickle are: woken after their deadline by a plain OS wait (at most one
//!   a millisecond for a stream of them, each sleep at most about 1 ms late)
//!   and finished in one poll, with no lead, yield or spin, so they degrade
//!   toward `tokio::time::sleep` (which is 1-2 ms late) in latency and cost.
//!   The waiter wakes the first few coarse timers of a batch itself and
//!   leaves the rest to the *relay*: each poll of these futures wakes up to
//!   16 of them, from the worker thread, where tokio takes a wake as a push
//!   to the worker's own run queue rather than through its shared queue
//!   from outside (at 1 000 tasks ticking at 1 kHz, a quarter to a third less
//!   process CPU). A relayed timer no poll wakes is woken by the waiter
//!   within [`RELAY_GRACE_NS`](crate::waiter::RELAY_GRACE_NS) (1.25 ms).
//!   A lone sleeper (no other precise sleep in progress) is always served
//!   precisely, whatever its rate. The learned lead only learns
//!   from wake-ups of an idle executor, so a load does not make the next
//!   sleeps late.
//! * **Executors**: the futures use only [`std::task::Waker`], so they work on
//!   any executor; the lead is learned per process, which suits one runtime
//!   per process (the usual case). Tested on tokio's current-thread and
//!   multi-thread runtimes.
//! * **tokio's cooperative budget**: under tokio, a poll that completes a
//!   future spends one unit of the task's budget, as `tokio::time::sleep`
//!   does, and a task whose budget is spent yields before its next
//!   completion: a loop of sleeps whose deadlines have already passed lets
//!   other tasks run every 128 completions instead of never. A sleep that
//!   waits yields anyway, so this costs precision only to a task that has
//!   spent its budget on other work since it last yielded.
//! * **Input**: durations past the clock's range saturate to an effectively
//!   unbounded wait; nothing panics. A zero period is an [`Error`].

use crate::platform::{duration_ns, Platform, System};
use crate::waiter::{PreciseWait, Progress, Step, WakeLatency};
use crate::{Error, MissedTicks, Schedule, Tick, TickNs};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// The executor wake-up latency learned from every precise future in the
/// process.
static LATENCY: std::sync::OnceLock<WakeLatency> = std::sync::OnceLock::new();

/// The process's learned executor wake-up latency (for inspection: its
/// estimator's margins are the leads).
pub fn latency() -> &'static WakeLatency {
    LATENCY.get_or_init(WakeLatency::new)
}

/// Waits precisely for `duration`: never less. `Duration::MAX` saturates.
pub fn sleep(duration: Duration) -> Sleep {
    let deadline = crate::os::monotonic_ns().saturating_add(duration_ns(duration));
    Sleep::at_ns(deadline)
}

/// Waits precisely until `deadline`: never before it. A past deadline
/// completes on the first poll.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::at_ns(System::new(true).ns_from_instant(deadline))
}

/// Waits precisely until `deadline_ns` on the monotonic clock
/// ([`os::monotonic_ns`](crate::os::monotonic_ns)); the output is the first
/// clock reading at or after it.
pub fn sleep_until_monotonic_ns(deadline_ns: u64) -> SleepUntilNs {
    let mut wait = PreciseWait::new(deadline_ns);
    // A wake from a worker thread is a push to its own run queue.
    wait.set_relay(true);
    SleepUntilNs { wait }
}

/// The future of [`sleep`] and [`sleep_until`]. Dropping it disarms its timer.
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct Sleep {
    inner: SleepUntilNs,
}

impl Sleep {
    fn at_ns(deadline_ns: u64) -> Self {
        Sleep {
            inner: sleep_until_monotonic_ns(deadline_ns),
        }
    }

    /// The deadline.
    pub fn deadline(&self) -> Instant {
        System::new(true).instant_from_ns(self.inner.wait.deadline_ns())
    }

    /// Whether a timer is armed with the waiter for this sleep right now.
    pub fn is_armed(&self) -> bool {
        self.inner.wait.is_armed()
    }
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.inner).poll(cx).map(|_| ())
    }
}

/// The future of [`sleep_until_monotonic_ns`]. Dropping it disarms its timer.
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct SleepUntilNs {
    wait: PreciseWait,
}

impl Future for SleepUntilNs {
    type Output = u64;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        // tokio's cooperative budget, as its own timers take part in it: a
        // completion spends one unit; with the task's budget spent, yield
        // first (a loop of sleeps whose deadlines have passed would
        // otherwise never let other tasks run). Outside a tokio runtime
        // there is no budget and this always proceeds.
        let coop = std::task::ready!(::tokio::task::coop::poll_proceed(cx));
        match self.wait.poll(latency(), cx.waker()) {
            Progress::Ready(now) => {
                coop.made_progress();
                Poll::Ready(now)
            }
            Progress::Pending(Step::Yield) => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Progress::Pending(_) => Poll::Pending,
        }
    }
}

/// A fixed-rate schedule for async loops: slot `k` is due at
/// `start + k·period`, deadlines never computed from "now", and late slots
/// handled by a [`MissedTicks`] policy, exactly as the blocking
/// [`Ticker`](crate::Ticker) (`spec/ticker.md`).
#[derive(Debug)]
pub struct Interval {
    schedule: Schedule,
}

/// A fixed-rate [`Interval`] starting now; the first tick is one `period`
/// from now.
///
/// # Errors
/// [`Error::ZeroPeriod`] when `period` is zero (tokio's `interval` panics there).
pub fn interval(period: Duration, missed: MissedTicks) -> Result<Interval, Error> {
    let start = crate::os::monotonic_ns();
    Ok(Interval {
        schedule: Schedule::new(start, duration_ns(period), missed)?,
    })
}

impl Interval {
    /// Waits precisely for the next slot (or returns at once if its deadline
    /// passed, as the policy says) and returns its [`Tick`].
    ///
    /// Cancel-safe: dropping the future before it completes consumes no slot.
    pub async fn tick(&mut self) -> Tick {
        let now = crate::os::monotonic_ns();
        let (tick, _) =
            crate::drive_tick_async(&mut self.schedule, now, sleep_until_monotonic_ns).await;
        to_tick(tick)
    }

    /// The schedule: period, policy, next deadline, stats.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Restarts from now: the next slot is due one period from now.
    pub fn reset(&mut self) {
        self.schedule.reset(crate::os::monotonic_ns());
    }
}

fn to_tick(t: TickNs) -> Tick {
    Tick {
        index: t.index,
        scheduled: System::new(true).instant_from_ns(t.scheduled_ns),
        lateness: Duration::from_nanos(t.lateness_ns),
        skipped: t.skipped,
    }
}
