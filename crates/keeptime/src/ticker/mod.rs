//! Fixed-rate ticking on an absolute schedule: deadlines `start + k·period`,
//! never accumulated from "now", so a ticker does not drift however late the
//! loop body runs. Specified in `spec/ticker.md`.

use crate::idle_hint::{IdleHint, IdleHintStatus};
use crate::platform::{duration_ns, Platform, System};
use crate::sleep::{Handoff, Interrupted, Sleeper, SleeperBuilder};
use crate::Error;
use std::fmt;
use std::time::{Duration, Instant};

mod driver;
mod schedule;

pub use driver::{drive_tick, drive_tick_async, ScheduleCell, WaitEnd};
pub use schedule::{Schedule, Step};

/// What a [`Ticker`] does when `tick()` is called after the next deadline
/// already passed (the loop body overran).
///
/// The timeline of each policy on one overrun is drawn in the ticker spec
/// (`spec/ticker.md`, *Missed ticks at a glance*).
///
/// Precisely, with tick `k` due at `d_k` and `tick()` called at `now > d_k`:
/// * **Skip** delivers at once the latest slot `j` with `d_j <= now`, reports
///   `skipped = j - k` slots that were never delivered, and continues with
///   `d_{j+1}`: the phase of the schedule is kept and there is never more than
///   one late tick in a row. This is the default because a control or audio
///   loop that fell behind wants the *current* slot, not a burst of stale
///   ones, and must not drift.
/// * **Burst** delivers slot `k` at once and keeps every later deadline: the
///   ticker catches up by returning immediately until it is back on time.
///   Right when every slot must be processed (counting, sampling).
/// * **Delay** delivers slot `k` at once and restarts the schedule from now:
///   `d_{k+1} = now + period`. The rate is kept, the phase is not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum MissedTicks {
    /// Deliver missed slots immediately, one per call, until caught up.
    Burst,
    /// Deliver the late slot now and shift the schedule to start from now.
    Delay,
    /// Deliver the latest passed slot now, drop the ones before it (default).
    #[default]
    Skip,
}

impl fmt::Display for MissedTicks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MissedTicks::Burst => "burst",
            MissedTicks::Delay => "delay",
            MissedTicks::Skip => "skip",
        })
    }
}

impl std::str::FromStr for MissedTicks {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.to_ascii_lowercase().as_str() {
            "burst" => Ok(MissedTicks::Burst),
            "delay" => Ok(MissedTicks::Delay),
            "skip" => Ok(MissedTicks::Skip),
            _ => Err(Error::UnknownPolicy(s.to_owned())),
        }
    }
}

/// One tick of a [`Ticker`], in platform nanoseconds (see [`Tick`] for the
/// `Instant` form).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TickNs {
    /// Slot number `k` (the first tick is 1): scheduled at `start + k·period`
    /// (for [`MissedTicks::Delay`], counted from the latest restart).
    pub index: u64,
    /// The deadline of this slot.
    pub scheduled_ns: u64,
    /// How long after `scheduled_ns` the tick was delivered (0 if earlier,
    /// which only [`Mode::Efficient`](crate::Mode::Efficient) can do).
    pub lateness_ns: u64,
    /// Slots dropped just before this one ([`MissedTicks::Skip`] only).
    pub skipped: u64,
}

/// One tick of a [`Ticker`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tick {
    /// Slot number `k` (the first tick is 1): scheduled at `start + k·period`.
    pub index: u64,
    /// When this slot was due.
    pub scheduled: Instant,
    /// How long after `scheduled` the tick was delivered.
    pub lateness: Duration,
    /// Slots dropped just before this one ([`MissedTicks::Skip`] only).
    pub skipped: u64,
}

/// Counters of a [`Ticker`] since it was created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TickerStats {
    /// Ticks delivered.
    pub ticks: u64,
    /// Deadlines that had passed when `tick()` was called: late deliveries
    /// plus skipped slots.
    pub missed: u64,
    /// Slots dropped by [`MissedTicks::Skip`].
    pub skipped: u64,
    /// Largest lateness of any delivered tick, in nanoseconds.
    pub worst_lateness_ns: u64,
}

/// A fixed-rate loop on an absolute schedule.
///
/// Slot `k` (k = 1, 2, …) is due at `start + k·period`, where `start` is when
/// the ticker was created (or last [`reset`](Self::reset)). [`tick`](Self::tick)
/// sleeps precisely until the next slot with its own [`Sleeper`] and returns
/// what happened; when the loop body overran a deadline, the [`MissedTicks`]
/// policy decides (default [`MissedTicks::Skip`]). Deadlines are computed
/// from the start, never from "now", so the loop does not drift.
///
/// ```
/// use keeptime::{MissedTicks, Ticker};
/// use std::time::Duration;
///
/// let mut ticker = Ticker::with_missed(Duration::from_millis(1), MissedTicks::Skip)?;
/// let mut skipped = 0;
/// for tick in ticker.by_ref().take(3) {
///     // 1 kHz work here; tick.lateness says how late this slot was served.
///     skipped += tick.skipped; // slots passed over when the loop overran
///     assert!(tick.index >= 1 && tick.index <= 3 + skipped);
/// }
/// assert_eq!(ticker.stats().ticks, 3);
/// # Ok::<(), keeptime::Error>(())
/// ```
///
/// Cost per tick: one clock read plus one precise sleep (see [`Sleeper`]).
/// A period too large for the clock saturates to a deadline that never comes.
#[derive(Clone, Debug)]
pub struct Ticker<P: Platform = System> {
    sleeper: Sleeper<P>,
    schedule: Schedule,
}

impl Ticker {
    /// A ticker with the default policy ([`MissedTicks::Skip`]) and an
    /// [`Exact`](crate::Mode::Exact) sleeper, starting now. The sleeper
    /// starts from the default profile in force, if one is set
    /// ([`set_default_profile`](crate::set_default_profile)).
    ///
    /// # Errors
    /// [`Error::ZeroPeriod`] for a zero period.
    pub fn new(period: Duration) -> Result<Self, Error> {
        Self::with_missed(period, MissedTicks::default())
    }

    /// A ticker with the given missed-tick policy, starting now, its sleeper
    /// started from the default profile in force as in [`Ticker::new`].
    ///
    /// # Errors
    /// [`Error::ZeroPeriod`] for a zero period.
    pub fn with_missed(period: Duration, policy: MissedTicks) -> Result<Self, Error> {
        Self::with_sleeper(
            period,
            policy,
            SleeperBuilder::default().with_default_profile().build(),
        )
    }
}

impl<P: Platform> Ticker<P> {
    /// A ticker that waits with `sleeper` (its mode, platform and margins),
    /// starting at the sleeper's current clock reading.
    ///
    /// # Errors
    /// [`Error::ZeroPeriod`] for a zero period.
    pub fn with_sleeper(
        period: Duration,
        policy: MissedTicks,
        sleeper: Sleeper<P>,
    ) -> Result<Self, Error> {
        let start = sleeper.platform().now_ns();
        let schedule = Schedule::new(start, duration_ns(period), policy)?;
        Ok(Ticker { sleeper, schedule })
    }

    /// Waits for the next slot (or returns at once if it already passed) and
    /// describes it.
    #[inline]
    pub fn tick(&mut self) -> Tick {
        let (tick, handoff) = self
            .tick_to_handoff(&mut || true)
            .expect("an uninterruptible tick cannot be interrupted");
        let mut tick = self.to_tick(tick);
        if let Some(late) = handoff.finish_overrun(self.sleeper.platform()) {
            tick.lateness = Duration::from_nanos(late);
        }
        tick
    }

    /// [`tick`](Self::tick) in platform nanoseconds, with an interrupt check
    /// as in [`Sleeper::sleep_until_ns_interruptible`]; an interrupted wait
    /// consumes no slot.
    #[inline]
    pub fn tick_ns_interruptible(
        &mut self,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<TickNs, Interrupted> {
        let (mut tick, handoff) = self.tick_to_handoff(keep_going)?;
        if let Some(late) = handoff.finish_overrun(self.sleeper.platform()) {
            tick.lateness_ns = late;
        }
        Ok(tick)
    }

    /// The next slot, recorded before the final spin (`spec/ticker.md`,
    /// *Hand-off*): a wait that ends in a spin is recorded at its deadline,
    /// and the caller finishes the spin with the returned [`Handoff`].
    fn tick_to_handoff(
        &mut self,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<(TickNs, Handoff), Interrupted> {
        let now = self.sleeper.platform().now_ns();
        let sleeper = &mut self.sleeper;
        let (tick, end) = drive_tick(&mut self.schedule, now, |deadline| {
            sleeper.sleep_until_ns_to_handoff(deadline, keep_going)
        })?;
        Ok((tick, end.unwrap_or(Handoff::done(now))))
    }

    fn to_tick(&self, t: TickNs) -> Tick {
        Tick {
            index: t.index,
            scheduled: self.sleeper.platform().instant_from_ns(t.scheduled_ns),
            lateness: Duration::from_nanos(t.lateness_ns),
            skipped: t.skipped,
        }
    }

    /// Counters since creation.
    pub fn stats(&self) -> TickerStats {
        self.schedule.stats()
    }

    /// The period.
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.schedule.period_ns())
    }

    /// The missed-tick policy.
    pub fn missed_ticks(&self) -> MissedTicks {
        self.schedule.policy()
    }

    /// When the next slot is due.
    pub fn next_deadline(&self) -> Instant {
        self.sleeper
            .platform()
            .instant_from_ns(self.schedule.next_deadline_ns())
    }

    /// The pure schedule (deadlines and counters in platform nanoseconds).
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The sleeper this ticker waits with.
    pub fn sleeper(&self) -> &Sleeper<P> {
        &self.sleeper
    }

    /// The sleeper this ticker waits with, to change its settings (mode,
    /// tail target, min spin) between ticks; what it learned is kept.
    pub fn sleeper_mut(&mut self) -> &mut Sleeper<P> {
        &mut self.sleeper
    }

    /// Whether the ticker's idle-latency hint is held: its sleeper's
    /// ([`Sleeper::idle_hint_status`]). A ticker made
    /// [`with_sleeper`](Self::with_sleeper) from a sleeper built with
    /// [`SleeperBuilder::idle_hint`] holds the request while it lives.
    pub fn idle_hint_status(&self) -> IdleHintStatus {
        self.sleeper.idle_hint_status()
    }

    /// Asks for another idle-latency hint, or gives it up (`None`); see
    /// [`Sleeper::set_idle_hint`] and the price in [`SleeperBuilder::idle_hint`].
    pub fn set_idle_hint(&mut self, hint: Option<IdleHint>) {
        self.sleeper.set_idle_hint(hint);
    }

    /// Restarts the schedule from now: the next slot is due one period from now.
    pub fn reset(&mut self) {
        let now = self.sleeper.platform().now_ns();
        self.schedule.reset(now);
    }

    /// Changes the period; the next slot is due one new period after the last
    /// delivered slot's deadline.
    ///
    /// # Errors
    /// [`Error::ZeroPeriod`] for a zero period (the ticker is unchanged).
    pub fn set_period(&mut self, period: Duration) -> Result<(), Error> {
        self.schedule.set_period(duration_ns(period))
    }
}

/// An endless iterator of ticks: `for tick in ticker { … }`.
impl<P: Platform> Iterator for Ticker<P> {
    type Item = Tick;
    fn next(&mut self) -> Option<Tick> {
        Some(self.tick())
    }
}
