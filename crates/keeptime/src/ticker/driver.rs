//! The one ticker loop (`spec/ticker.md`, *The driver*): poll the schedule,
//! wait for the deadline it names with the caller's own wait (the hook),
//! record the slot, poll again if the schedule changed meanwhile. The
//! blocking [`Ticker`](super::Ticker), the Python binding's ticker and
//! `keeptime::tokio::Interval` all run it; only their waits differ.

use super::{Schedule, Step, TickNs};
use crate::sleep::Handoff;
use std::future::Future;
use std::sync::{Mutex, PoisonError};

/// Where a ticker keeps its [`Schedule`] while it waits: owned (a
/// single-threaded ticker) or behind a [`Mutex`] (a ticker whose stats,
/// period and reset other threads may use during the wait). The driver holds
/// it only for a poll or a record, never across the wait.
pub trait ScheduleCell {
    /// Runs `f` on the schedule.
    fn with_schedule<R>(&mut self, f: impl FnOnce(&mut Schedule) -> R) -> R;
}

impl ScheduleCell for Schedule {
    fn with_schedule<R>(&mut self, f: impl FnOnce(&mut Schedule) -> R) -> R {
        f(self)
    }
}

/// A poisoned lock is used as it is: a schedule has no invariant a panic in
/// another thread's `f` could have broken halfway (each step is one update).
impl ScheduleCell for &Mutex<Schedule> {
    fn with_schedule<R>(&mut self, f: impl FnOnce(&mut Schedule) -> R) -> R {
        f(&mut self.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// How a ticker's wait ended.
pub trait WaitEnd {
    /// The clock reading the slot is recorded with (platform nanoseconds).
    fn recorded_ns(&self) -> u64;
    /// The wait's last clock reading, a time that has passed: the schedule
    /// is polled again at it when it changed during the wait.
    fn last_reading_ns(&self) -> u64;
}

/// A sleep that hands its last stretch to the caller is recorded at the
/// hand-off ([`Handoff::recorded_ns`]); the caller finishes it afterwards.
impl WaitEnd for Handoff {
    fn recorded_ns(&self) -> u64 {
        Handoff::recorded_ns(self)
    }
    fn last_reading_ns(&self) -> u64 {
        self.now
    }
}

/// A wait that returns its own last clock reading (an async sleep).
impl WaitEnd for u64 {
    fn recorded_ns(&self) -> u64 {
        *self
    }
    fn last_reading_ns(&self) -> u64 {
        *self
    }
}

/// The next tick of `schedule`, waiting with `wait` (called with each
/// deadline the schedule names; `Err` ends the tick, consuming no slot).
///
/// Returns the tick and how the wait that produced it ended (`None` when the
/// slot was due already and delivered without a wait). The first poll is at
/// `now_ns`, a poll after a changed schedule at the wait's last reading.
///
/// ```
/// use keeptime::{drive_tick, Handoff, MissedTicks, Schedule};
///
/// // A simulated clock: every wait ends 3 ns after its deadline.
/// let mut schedule = Schedule::new(0, 1_000, MissedTicks::Skip)?;
/// let mut clock = 0;
/// let (tick, end) = drive_tick(&mut schedule, 0, |deadline| {
///     clock = deadline + 3;
///     Ok::<_, std::convert::Infallible>(Handoff::done(clock))
/// })
/// .unwrap();
/// assert_eq!((tick.index, tick.lateness_ns), (1, 3));
/// assert_eq!(end.map(|h| h.now), Some(1_003));
/// # Ok::<(), keeptime::Error>(())
/// ```
pub fn drive_tick<C, W, E>(
    schedule: &mut C,
    now_ns: u64,
    mut wait: impl FnMut(u64) -> Result<W, E>,
) -> Result<(TickNs, Option<W>), E>
where
    C: ScheduleCell + ?Sized,
    W: WaitEnd,
{
    let mut now_ns = now_ns;
    loop {
        let deadline = match schedule.with_schedule(|s| s.poll(now_ns)) {
            Step::Now(tick) => return Ok((tick, None)),
            Step::Wait { deadline_ns } => deadline_ns,
        };
        let end = wait(deadline)?;
        if let Some(tick) = schedule.with_schedule(|s| s.woke_for(deadline, end.recorded_ns())) {
            return Ok((tick, Some(end)));
        }
        now_ns = end.last_reading_ns();
    }
}

/// [`drive_tick`] for async code: `wait` returns a future of the wait's end.
/// Cancel-safe: dropping the returned future during a wait consumes no slot
/// (the slot is recorded only after a wait completes).
pub async fn drive_tick_async<C, W, F, Fut>(
    schedule: &mut C,
    now_ns: u64,
    mut wait: F,
) -> (TickNs, Option<W>)
where
    C: ScheduleCell + ?Sized,
    W: WaitEnd,
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = W>,
{
    let mut now_ns = now_ns;
    loop {
        let deadline = match schedule.with_schedule(|s| s.poll(now_ns)) {
            Step::Now(tick) => return (tick, None),
            Step::Wait { deadline_ns } => deadline_ns,
        };
        let end = wait(deadline).await;
        if let Some(tick) = schedule.with_schedule(|s| s.woke_for(deadline, end.recorded_ns())) {
            return (tick, Some(end));
        }
        now_ns = end.last_reading_ns();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MissedTicks;

    #[test]
    fn waits_for_the_deadline_and_records_the_hand_off() {
        let mut schedule = Schedule::new(1_000, 500, MissedTicks::Skip).unwrap();
        let mut asked = Vec::new();
        // The wait hands off 5 ns before the deadline with a spin left: the
        // slot is recorded at the deadline, not at the hand-off's reading.
        let (tick, end) = drive_tick(&mut schedule, 1_100, |d| {
            asked.push(d);
            Ok::<_, ()>(Handoff {
                now: d - 5,
                until: d,
            })
        })
        .unwrap();
        assert_eq!(asked, [1_500]);
        assert_eq!(
            (tick.index, tick.scheduled_ns, tick.lateness_ns),
            (1, 1_500, 0)
        );
        assert_eq!(end.unwrap().until, 1_500);
        assert_eq!(schedule.next_deadline_ns(), 2_000);
    }

    #[test]
    fn a_due_slot_is_delivered_without_calling_the_hook() {
        let mut schedule = Schedule::new(0, 100, MissedTicks::Skip).unwrap();
        let (tick, end) = drive_tick(&mut schedule, 350, |_| -> Result<u64, ()> {
            panic!("no wait for a slot that is due")
        })
        .unwrap();
        assert!(end.is_none());
        assert_eq!((tick.index, tick.skipped, tick.lateness_ns), (3, 2, 50));
    }

    #[test]
    fn a_failed_wait_consumes_no_slot() {
        let mut schedule = Schedule::new(0, 100, MissedTicks::Burst).unwrap();
        let r = drive_tick(&mut schedule, 10, |_| Err::<u64, _>("interrupted"));
        assert_eq!(r.unwrap_err(), "interrupted");
        assert_eq!(schedule.next_index(), 1);
        assert_eq!(schedule.stats().ticks, 0);
    }

    #[test]
    fn a_schedule_changed_during_the_wait_is_polled_again_at_the_last_reading() {
        let cell = Mutex::new(Schedule::new(0, 1_000, MissedTicks::Skip).unwrap());
        let mut asked = Vec::new();
        let (tick, _) = drive_tick(&mut &cell, 100, |d| {
            asked.push(d);
            if asked.len() == 1 {
                // Another thread resets the ticker at 600 while this one waits
                // for 1 000; the wait still ends at its deadline.
                cell.lock().unwrap().reset(600);
            }
            Ok::<_, ()>(d)
        })
        .unwrap();
        // Re-polled at 1 000 (the first wait's last reading): the slot is
        // due at 1 600, waited for, and delivered as slot 1.
        assert_eq!(asked, [1_000, 1_600]);
        assert_eq!((tick.index, tick.scheduled_ns), (1, 1_600));
        assert_eq!(cell.lock().unwrap().stats().ticks, 1);
    }

    #[test]
    fn a_change_that_makes_a_slot_due_delivers_it_at_the_last_reading() {
        let cell = Mutex::new(Schedule::new(0, 1_000, MissedTicks::Skip).unwrap());
        let (tick, end) = drive_tick(&mut &cell, 0, |d| {
            // A new period of 200 during the wait makes slot 1 due at 200;
            // the wait ended at 1 003.
            cell.lock().unwrap().set_period(200).unwrap();
            Ok::<_, ()>(d + 3)
        })
        .unwrap();
        assert!(end.is_none());
        assert_eq!((tick.index, tick.scheduled_ns, tick.skipped), (5, 1_000, 4));
        assert_eq!(tick.lateness_ns, 3);
    }

    #[test]
    fn the_async_driver_runs_the_same_loop() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut schedule = Schedule::new(0, 250, MissedTicks::Delay).unwrap();
        let (tick, end) = rt.block_on(drive_tick_async(
            &mut schedule,
            10,
            |d| async move { d + 7 },
        ));
        assert_eq!((tick.index, tick.lateness_ns, end), (1, 7, Some(257)));
        // Late by 400 at the next call: delay restarts the schedule there.
        let (tick, end) = rt.block_on(drive_tick_async(&mut schedule, 900, |d| async move { d }));
        assert_eq!((tick.index, tick.lateness_ns, end), (2, 400, None));
        assert_eq!(schedule.next_deadline_ns(), 1_150);
    }
}
